// SPDX-License-Identifier: MIT
/*
 * The task engine: load and validate a program (npu_decode.c), dispatch its
 * instructions to the unit queues of the partition's TPBs (and the CCB DMA
 * engines), then run them as a dataflow machine (npu_rounds.c).
 *
 * This file holds a task's state: the accessors the units and the walker
 * layer use, failure reporting, the state each queue keeps between its
 * tasks, and npu_task_run(), which takes a fetched task through it all.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npu_pool.h"
#include "npu_task.h"

/* ---- accessors used by units and the walker layer ---- */

uint8_t *npu_task_hbsm(struct npu_task *task, unsigned lcluster, unsigned tpb)
{
	if (lcluster >= task->nclusters || tpb >= task->tpbs)
		return NULL;
	return task->tpb[lcluster * task->tpbs + tpb].hbsm;
}

uint8_t *npu_task_sram(struct npu_task *task, uint32_t *size)
{
	*size = task->sram_size;
	return task->sram;
}

struct npu_core_task *npu_task_fetched(struct npu_task *task)
{
	return task->ft;
}

uint32_t npu_task_hbsm_size(const struct npu_task *task)
{
	return task->core->cfg.hbsm_size;
}

uint64_t npu_task_timeout(const struct npu_task *task)
{
	return task->timeout;
}

unsigned npu_task_nclusters(const struct npu_task *task)
{
	return task->nclusters;
}

unsigned npu_task_tpbs(const struct npu_task *task)
{
	return task->tpbs;
}

unsigned npu_task_cluster_node(const struct npu_task *task, unsigned lcluster)
{
	if (lcluster >= task->nclusters)
		return task->core->ccb_node;
	return task->core->node_of_cluster[task->ft->desc.cluster_map[lcluster]];
}

unsigned npu_task_ccb_node(const struct npu_task *task)
{
	return task->core->ccb_node;
}

unsigned npu_task_ddr_node(const struct npu_task *task)
{
	return task->core->ddr_node;
}

unsigned npu_iter_lcluster(const struct npu_iteration *it)
{
	return it->tpb ? it->tpb->lcluster : 0;
}

unsigned npu_iter_tpb_index(const struct npu_iteration *it)
{
	return it->tpb ? it->tpb->tpb : 0;
}

uint8_t *npu_iter_hbsm(const struct npu_iteration *it)
{
	return it->tpb ? it->tpb->hbsm : NULL;
}

void *npu_grow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 64;

	/* An empty array is allocated too: NULL only means out of memory. */
	if (p && need <= *cap)
		return p;
	while (c < need) {
		if (c > SIZE_MAX / 2 / size)
			return NULL;
		c *= 2;
	}
	p = realloc(p, c * size);
	if (p)
		*cap = c;
	return p;
}

/* ---- failure reporting ---- */

void npu_task_fail(struct npu_task *task, unsigned status, uint32_t insn,
		   uint32_t detail, uint32_t detail2, uint64_t addr)
{
	struct npu_hw_completion *c = &task->ft->comp;

	if (c->status != NPU_TASK_OK)
		return;		/* keep the first error */
	c->status = status;
	c->insn_index = insn;
	c->detail = detail;
	c->detail2 = detail2;
	c->fault_addr = addr;
}

static void task_free(struct npu_task *task)
{
	if (!task)
		return;
	if (task->uq)
		for (size_t k = 0; k < task->max_tpbs * NPU_TPB_UNITS; k++)
			free(task->uq[k].ent);
	for (unsigned e = 0; e < NPU_HW_NUM_DMA_ENGINES; e++)
		free(task->dma[e].ent);
	for (unsigned l = 0; l < NPU_HW_MAX_LINKS; l++)
		npu_link_cal_free(&task->link[l]);
	for (unsigned l = 0; l < NPU_PATHS; l++)
		npu_link_cal_free(&task->path[l]);
	if (task->insns_owned)
		free(task->insns);
	while (task->nprog)
		npu_task_prog_drop(task, task->nprog - 1);
	free(task->prog);
	free(task->tpb);
	free(task->uq);
	free(task->cand);
	free(task->used);
	free(task->bar);
	free(task->run);
	free(task->rrun);
	npu_replay_free(task->rec);
	free(task->tlbs);
	if (task->keep)
		for (unsigned w = 0; w < task->workers; w++)
			npu_scratch_cache_free(&task->keep[w]);
	free(task->keep);
	free(task);
}

/*
 * The engine state for a task on @ft's queue: the one its last task left
 * (buffers sized for the whole device, decoded programs) or a new one.
 */
static struct npu_task *task_take(struct npu_core_task *ft)
{
	struct npu_core *core = ft->core;
	struct npu_task *task = atomic_exchange(&core->task_spare[ft->queue], NULL);
	size_t tpbs;

	if (task)
		return task;
	task = calloc(1, sizeof(*task));
	if (!task)
		return NULL;
	task->core = core;
	task->max_tpbs = tpbs = (size_t)core->cfg.clusters * core->cfg.tpbs_per_cluster;
	task->workers = npu_pool_size(core->pool) + 1;
	/* Zeroed: a state's counters are then clear, and touched says so. */
	task->tpb = calloc(tpbs, sizeof(*task->tpb));
	task->uq = calloc(tpbs * NPU_TPB_UNITS, sizeof(*task->uq));
	task->cand = calloc((tpbs * NPU_TPB_UNITS + 63) / 64, sizeof(*task->cand));
	task->used = calloc(tpbs * NPU_TPB_UNITS, sizeof(*task->used));
	task->tlbs = calloc(task->workers, sizeof(*task->tlbs));
	task->keep = calloc(task->workers, sizeof(*task->keep));
	if (!task->tpb || !task->uq || !task->cand || !task->used || !task->tlbs ||
	    !task->keep) {
		task_free(task);
		return NULL;
	}
	return task;
}

/* Hand the engine state back to the queue for its next task. */
static void task_put(struct npu_task *task, struct npu_core_task *ft)
{
	if (task->insns_owned)
		free(task->insns);
	task->insns = NULL;
	task->insns_owned = false;
	task->ft = NULL;
	task->tracer = NULL;
	task->prog_cur = NULL;
	task->catchup = NULL;
	task_free(atomic_exchange(&task->core->task_spare[ft->queue], task));
}

static void queue_reset(struct unit_q *q)
{
	uint32_t *ent = q->ent, cap = q->cap;

	*q = (struct unit_q){ .ent = ent, .cap = cap };
}

/*
 * What every task reads zeroed, as a fresh calloc would give it; the
 * rounds' state is reset apart (rounds_reset), only when they run.
 */
static void task_reset(struct npu_task *task, struct npu_core_task *ft)
{
	const struct npu_hw_task *d = &ft->desc;

	task->ft = ft;
	task->nclusters = d->nclusters;
	task->tpbs = task->core->cfg.tpbs_per_cluster;
	task->timeout = d->timeout_cycles ? d->timeout_cycles : NPU_TASK_DEFAULT_TIMEOUT;
	task->insns = NULL;
	task->ninsns = 0;
	task->insns_owned = false;
	task->nbar = 0;
	task->end_time = 0;
	task->iterations = 0;
	task->tracer = NULL;
	/* Translations are the task's own: its page tables may have changed. */
	memset(task->tlbs, 0, task->workers * sizeof(*task->tlbs));
}

/*
 * The state of the rounds and the cycle model zeroed but the counters'
 * time rings (only read for values reached, which the task writes first)
 * and the buffers' capacities.  A replayed task leaves all of it as the
 * last task that ran the rounds left it.
 */
static void rounds_reset(struct npu_task *task)
{
	size_t ntpb = (size_t)task->nclusters * task->tpbs;

	memset(task->ccb.val, 0, sizeof(task->ccb.val));
	task->ccb.touched = 0;
	for (size_t i = 0; i < ntpb; i++) {
		struct npu_tpb_state *tp = &task->tpb[i];
		uint32_t t = tp->ctr.touched;

		tp->first_start = 0;
		tp->last_end = 0;
		tp->started = false;
		memset(tp->waiters, 0, sizeof(tp->waiters));
		for (; t; t &= t - 1)
			tp->ctr.val[__builtin_ctz(t)] = 0;
		tp->ctr.touched = 0;
	}
	/* The others were left as reset: only a dispatched queue changes. */
	for (size_t i = 0; i < task->nused; i++)
		queue_reset(&task->uq[task->used[i]]);
	task->nused = 0;
	for (unsigned e = 0; e < NPU_HW_NUM_DMA_ENGINES; e++)
		queue_reset(&task->dma[e]);
	for (unsigned l = 0; l < NPU_HW_MAX_LINKS; l++)
		npu_link_cal_clear(&task->link[l]);
	for (unsigned l = 0; l < NPU_PATHS; l++)
		npu_link_cal_clear(&task->path[l]);
}

void npu_task_free_spares(struct npu_core *core)
{
	for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++)
		task_free(atomic_exchange(&core->task_spare[q], NULL));
}

void npu_task_run(struct npu_core_task *ft)
{
	struct npu_core *core = ft->core;
	const struct npu_hw_task *d = &ft->desc;
	struct npu_task *task;
	int ret;

	ft->comp.status = NPU_TASK_OK;
	ft->comp.insn_index = UINT32_MAX;
	task = task_take(ft);
	if (!task) {
		ft->comp.status = NPU_TASK_INTERNAL;
		return;
	}
	task->ft = ft;
	task->end_time = 0;
	ret = npu_task_check_desc(task);
	if (ret) {
		npu_task_fail(task, (unsigned)ret, UINT32_MAX, 0, 0, 0);
		goto out;
	}
	task_reset(task, ft);
	task->sram = core->sram + d->sram_base;
	task->sram_size = d->sram_size;
	if (task->placed_nclusters != d->nclusters ||
	    memcmp(task->placed_map, d->cluster_map, d->nclusters)) {
		for (unsigned c = 0; c < task->nclusters; c++) {
			for (unsigned t = 0; t < task->tpbs; t++) {
				struct npu_tpb_state *tp = &task->tpb[c * task->tpbs + t];

				tp->lcluster = c;
				tp->tpb = t;
				tp->unit = &task->uq[(c * task->tpbs + t) * NPU_TPB_UNITS];
				tp->pcluster = d->cluster_map[c];
				tp->hbsm = npu_core_hbsm_of(core, tp->pcluster, t);
			}
		}
		task->placed_nclusters = d->nclusters;
		memcpy(task->placed_map, d->cluster_map, d->nclusters);
	}
	/* One memory bracket for the program's many reads. */
	npu_task_mem_begin(task);
	ret = npu_task_load_program(task);
	npu_task_mem_end(task);
	if (ret)
		goto out;
	if (core->host.tracer)
		task->tracer = core->host.tracer(core->host.opaque, ft->queue, d->seqno);
	if (npu_replay_try(task))
		goto out;
	rounds_reset(task);
	if (npu_task_dispatch(task)) {
		npu_task_fail(task, NPU_TASK_INTERNAL, UINT32_MAX, 0, 0, 0);
		goto out;
	}
	npu_replay_begin(task);
	ret = npu_task_run_rounds(task);
	/* A cluster is busy from its first TPB's start to its last TPB's end. */
	for (unsigned c = 0; c < task->nclusters; c++) {
		uint64_t first = UINT64_MAX, last = 0;

		for (unsigned t = 0; t < task->tpbs; t++) {
			struct npu_tpb_state *tp = &task->tpb[c * task->tpbs + t];

			if (!tp->started)
				continue;
			if (tp->first_start < first)
				first = tp->first_start;
			if (tp->last_end > last)
				last = tp->last_end;
		}
		if (last > first)
			ft->perf.cluster_busy[d->cluster_map[c]] += last - first;
	}
	if (!ret)
		npu_replay_keep(task);
out:
	ft->cycles = task->end_time;
	task_put(task, ft);
}
