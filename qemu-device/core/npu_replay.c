// SPDX-License-Identifier: MIT
/*
 * Replay: the next runs of a kept program skip the engine's scheduling
 * and cycle model while they cost what its last run cost.
 *
 * Which iterations run in which round depends only on the program: a
 * head is ready when its counters have counted enough signals, and the
 * signals an iteration sends are in its instruction; simulated time never
 * decides readiness.  The cycle model (npu_rounds.c: account) is then a
 * function of those rounds and of what each iteration cost.  So a run is
 * recorded (each round's iterations in run order, each one's cost, and
 * the task's resulting end time and counters), and the program's next
 * run executes the recorded rounds in the same order, with the same
 * threading, checking each iteration's cost against the record.  If every
 * cost matches, the record's cycles and counters are this run's, bit for
 * bit, without dispatching, scanning queues, applying signals or routing
 * transfers.
 *
 * Costs can depend on data (a GSDU chain the program wrote, a DMA that
 * faults), so a round may differ.  The rounds before it cost what the
 * record says and were already executed: the engine then runs the
 * normal rounds from the start, taking those rounds' costs from the
 * record and the differing round's from its replayed execution instead
 * of executing them again, and executes from the next round on.  Nothing
 * runs twice and the result is the normal run's.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "npu_task.h"

/* Iterations recorded per program (~80 bytes each): beyond, no record. */
#define REPLAY_MAX_STEPS (1u << 18)

void npu_replay_free(struct npu_replay *rp)
{
	if (!rp)
		return;
	free(rp->step);
	free(rp->round_end);
	free(rp->xfer);
	free(rp);
}

size_t npu_replay_bytes(const struct npu_replay *rp)
{
	if (!rp)
		return 0;
	return sizeof(*rp) + rp->cap_steps * sizeof(*rp->step) +
	       rp->cap_rounds * sizeof(*rp->round_end) +
	       rp->cap_xfers * sizeof(*rp->xfer);
}

static size_t nqueues(const struct npu_task *task)
{
	return (size_t)task->nclusters * task->tpbs * NPU_TPB_UNITS;
}

/* The queue a runnable came from, as a step records it. */
static uint32_t queue_of(const struct npu_task *task, const struct runnable *r)
{
	if (r->tpb)
		return (uint32_t)(r->uq - task->uq);
	return (uint32_t)(nqueues(task) + (size_t)(r->uq - task->dma));
}

void npu_replay_begin(struct npu_task *task)
{
	task->recording = false;
	if (!task->prog_cur)
		return;
	if (!task->rec) {
		task->rec = calloc(1, sizeof(*task->rec));
		if (!task->rec)
			return;
	}
	task->rec->nsteps = 0;
	task->rec->nrounds = 0;
	task->rec->nxfers = 0;
	task->rec->widest = 0;
	task->recording = true;
}

void npu_replay_round(struct npu_task *task, const struct runnable *set, size_t n)
{
	struct npu_replay *rec = task->rec;
	size_t nx = 0;
	void *p;

	if (!task->recording)
		return;
	for (size_t i = 0; i < n; i++)
		nx += set[i].cost.nxfers;
	/* Too long or out of memory: the run is simply not recorded. */
	if (rec->nsteps + n > REPLAY_MAX_STEPS)
		goto stop;
	p = npu_grow(rec->step, &rec->cap_steps, rec->nsteps + n, sizeof(*rec->step));
	if (!p)
		goto stop;
	rec->step = p;
	p = npu_grow(rec->round_end, &rec->cap_rounds, rec->nrounds + 1,
		     sizeof(*rec->round_end));
	if (!p)
		goto stop;
	rec->round_end = p;
	p = npu_grow(rec->xfer, &rec->cap_xfers, rec->nxfers + nx, sizeof(*rec->xfer));
	if (!p)
		goto stop;
	rec->xfer = p;
	for (size_t i = 0; i < n; i++) {
		const struct runnable *r = &set[i];
		const struct npu_cost *c = &r->cost;
		struct npu_replay_step *s = &rec->step[rec->nsteps++];

		s->q = queue_of(task, r);
		s->insn = (uint32_t)(r->di - task->insns);
		s->iter = r->iter;
		s->work = r->di->work;
		s->xfer = rec->nxfers;
		s->nxfers = c->nxfers;
		s->cycles = c->cycles;
		s->conflicts = c->conflicts;
		s->dma_bytes = c->dma_bytes;
		s->gsdu_bytes = c->gsdu_bytes;
		s->load_bytes = c->load_bytes;
		s->store_bytes = c->store_bytes;
		s->macs_float = c->macs_float;
		s->macs_int8 = c->macs_int8;
		if (c->nxfers)
			memcpy(&rec->xfer[rec->nxfers], c->xfer,
			       c->nxfers * sizeof(*c->xfer));
		rec->nxfers += c->nxfers;
	}
	rec->round_end[rec->nrounds++] = rec->nsteps;
	if (n > rec->widest)
		rec->widest = (uint32_t)n;
	return;
stop:
	task->recording = false;
}

/* The nonzero words of @perf into @rec. */
static void perf_keep(struct npu_replay *rec, const struct npu_perf *perf)
{
	const uint64_t *w = (const uint64_t *)perf;

	rec->nperf = 0;
	for (uint32_t i = 0; i < NPU_PERF_WORDS; i++) {
		if (!w[i])
			continue;
		rec->perf_word[rec->nperf] = (uint16_t)i;
		rec->perf_val[rec->nperf++] = w[i];
	}
}

/* @rp's counters into @perf, zero as a fetched task's is (calloc). */
static void perf_put(const struct npu_replay *rp, struct npu_perf *perf)
{
	uint64_t *w = (uint64_t *)perf;

	for (uint32_t i = 0; i < rp->nperf; i++)
		w[rp->perf_word[i]] = rp->perf_val[i];
}

void npu_replay_keep(struct npu_task *task)
{
	struct npu_replay *rec = task->rec;
	struct prog_entry *e = task->prog_cur;

	if (!task->recording || !e)
		return;
	task->recording = false;
	rec->end_time = task->end_time;
	rec->iterations = task->iterations;
	perf_keep(rec, &task->ft->perf);
	/* The record it replaces lends its buffers to the next recording. */
	task->prog_bytes += npu_replay_bytes(rec);
	task->prog_bytes -= npu_replay_bytes(e->replay);
	task->rec = e->replay;
	e->replay = rec;
}

/* A step holds every count of struct npu_cost: the eight before nxfers. */
_Static_assert(offsetof(struct npu_cost, nxfers) == 8 * sizeof(uint64_t),
	       "struct npu_cost changed: record, compare and restore its counts here");

static bool xfer_equal(const struct npu_xfer *a, const struct npu_xfer *b)
{
	return a->path == b->path && a->src_node == b->src_node &&
	       a->dst_node == b->dst_node && a->bytes == b->bytes;
}

static bool cost_matches(const struct npu_replay *rp,
			 const struct npu_replay_step *s, const struct npu_cost *c)
{
	if (c->cycles != s->cycles || c->conflicts != s->conflicts ||
	    c->dma_bytes != s->dma_bytes || c->gsdu_bytes != s->gsdu_bytes ||
	    c->load_bytes != s->load_bytes || c->store_bytes != s->store_bytes ||
	    c->macs_float != s->macs_float || c->macs_int8 != s->macs_int8 ||
	    c->nxfers != s->nxfers)
		return false;
	for (unsigned x = 0; x < c->nxfers; x++)
		if (!xfer_equal(&c->xfer[x], &rp->xfer[s->xfer + x]))
			return false;
	return true;
}

static void cost_from(const struct npu_replay *rp,
		      const struct npu_replay_step *s, struct npu_cost *c)
{
	c->cycles = s->cycles;
	c->conflicts = s->conflicts;
	c->dma_bytes = s->dma_bytes;
	c->gsdu_bytes = s->gsdu_bytes;
	c->load_bytes = s->load_bytes;
	c->store_bytes = s->store_bytes;
	c->macs_float = s->macs_float;
	c->macs_int8 = s->macs_int8;
	c->nxfers = s->nxfers;
	if (s->nxfers)
		memcpy(c->xfer, &rp->xfer[s->xfer], s->nxfers * sizeof(*c->xfer));
}

/*
 * Most instructions run once per task: each is a cold ~1 KiB read.  An
 * iteration reads the instruction's first line (unit, opcode, masks), its
 * parameters and the decoded part after the raw copy, not the raw
 * operands and sync fields between them (those are the engine's, which a
 * replay skips).
 */
static void prefetch_insn(const struct npu_dinsn *di)
{
	const char *p = (const char *)di;

	__builtin_prefetch(p);
#pragma GCC unroll 16
	for (size_t off = offsetof(struct npu_dinsn, raw.params) & ~(size_t)63;
	     off < sizeof(*di); off += 64)
		__builtin_prefetch(p + off);
}

static void step_runnable(struct npu_task *task, const struct npu_replay_step *s,
			  struct runnable *r)
{
	size_t nq = nqueues(task);

	if (s->q < nq) {
		r->tpb = &task->tpb[s->q / NPU_TPB_UNITS];
		r->uq = &task->uq[s->q];
		r->unit = s->q % NPU_TPB_UNITS;
	} else {
		r->tpb = NULL;
		r->uq = &task->dma[s->q - nq];
		r->unit = NPU_UNIT_DMA;
	}
	r->di = &task->insns[s->insn];
	r->iter = s->iter;
	r->rec = s;
	r->status = NPU_TASK_OK;
	r->fault_addr = 0;
	r->detail = 0;
	r->detail2 = 0;
}

/* npu_replay_try's rounds, inside its memory bracket. */
static int replay_rounds(struct npu_task *task, const struct npu_replay *rp)
{
	uint32_t first = 0;

	for (uint32_t round = 0; round < rp->nrounds; round++) {
		uint32_t end = rp->round_end[round];
		size_t n = end - first;
		uint64_t work = 0;

		if (atomic_load(&task->ft->abort)) {
			npu_task_fail(task, NPU_TASK_ABORTED, UINT32_MAX, 0, 0, 0);
			return 1;
		}
		/*
		 * Loading all of the round's instructions at once, rather
		 * than each as its iteration starts, made BERT 15% faster;
		 * the record's copy of their work keeps this loop from
		 * waiting for them.
		 */
		for (size_t i = 0; i < n; i++) {
			const struct npu_replay_step *s = &rp->step[first + i];

			step_runnable(task, s, &task->rrun[i]);
			prefetch_insn(task->rrun[i].di);
			work += s->work;
		}
		npu_task_exec_round(task, task->rrun, n, work, true);
		for (size_t i = 0; i < n; i++) {
			const struct runnable *r = &task->rrun[i];

			if (r->status != NPU_TASK_OK ||
			    !cost_matches(rp, &rp->step[first + i], &r->cost)) {
				task->catchup = rp;
				task->catchup_round = round;
				atomic_fetch_add(&task->core->replay_divergences, 1);
				return 0;
			}
		}
		first = end;
	}
	perf_put(rp, &task->ft->perf);
	if (rp->nperf <= NPU_PERF_SPARSE_MAX) {
		struct npu_core_task *ft = task->ft;

		memcpy(ft->perf_words, rp->perf_word, rp->nperf * sizeof(rp->perf_word[0]));
		ft->nperf_words = (uint8_t)rp->nperf;
		ft->perf_sparse = true;
	}
	task->ft->replayed = true;
	task->end_time = rp->end_time;
	task->iterations = rp->iterations;
	return 1;
}

int npu_replay_try(struct npu_task *task)
{
	const struct npu_replay *rp = task->prog_cur ? task->prog_cur->replay : NULL;
	struct runnable *rrun;
	int ret;

	task->catchup = NULL;
	/*
	 * A traced task needs every iteration placed in time.  The record
	 * is of these very instructions on this partition (it goes when any
	 * is decoded again, and the partition is part of the program's key),
	 * so its steps name queues and instructions of this task.
	 */
	if (!rp || task->tracer || rp->end_time > task->timeout)
		return 0;
	rrun = npu_grow(task->rrun, &task->rrun_cap, rp->widest, sizeof(*rrun));
	if (!rrun)
		return 0;
	task->rrun = rrun;
	atomic_fetch_add(&task->core->replays, 1);
	/* One memory bracket for the whole replay on this thread, rather
	 * than one per round: most rounds of small programs are one
	 * iteration, and a bracket is a lock (and in QEMU, mappings). */
	npu_task_mem_begin(task);
	ret = replay_rounds(task, rp);
	npu_task_mem_end(task);
	return ret;
}

int npu_replay_fill(struct npu_task *task, uint32_t round, struct runnable *set,
		    size_t n)
{
	const struct npu_replay *rp = task->catchup;
	uint32_t first = round ? rp->round_end[round - 1] : 0;

	if (round >= rp->nrounds || rp->round_end[round] - first != n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct npu_replay_step *s = &rp->step[first + i];
		struct runnable *r = &set[i];

		if (queue_of(task, r) != s->q || r->di != &task->insns[s->insn] ||
		    r->iter != s->iter)
			return -1;
		if (round < task->catchup_round) {
			cost_from(rp, s, &r->cost);
		} else {
			const struct runnable *done = &task->rrun[i];

			memcpy(&r->cost, &done->cost, offsetof(struct npu_cost, xfer) +
			       done->cost.nxfers * sizeof(done->cost.xfer[0]));
			r->status = done->status;
			r->fault_addr = done->fault_addr;
			r->detail = done->detail;
			r->detail2 = done->detail2;
		}
	}
	return 0;
}
