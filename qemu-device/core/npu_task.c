// SPDX-License-Identifier: MIT
/*
 * The task engine: load and validate a program, dispatch its instructions
 * to the unit queues of the partition's TPBs (and the CCB DMA engines),
 * then run them as a dataflow machine.
 *
 * Execution proceeds in rounds.  In each round every unit whose head
 * instruction's next iteration has its waits met runs that iteration;
 * signals are applied after the round, in a fixed order, so results and
 * the cycle model are deterministic whatever the thread count.  A round in
 * which nothing can run while work remains is a deadlock: the task ends
 * with the first blocked counter instead of hanging.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "npu_core_priv.h"
#include "npu_noc_cal.h"
#include "npu_pool.h"

#define CTIME_RING 64			/* signal times remembered per counter */
#define BARRIER_FLAG 0x80000000u	/* unit-queue entry is a barrier marker */
#define MAX_TASK_ITERATIONS (1ull << 32)
#define PARALLEL_ROUND_WORK (256u << 10)	/* elements: below, run inline */

struct unit_q {
	uint32_t *ent;			/* instruction indices or barrier markers */
	uint32_t n, cap, pos;
	uint64_t iter;			/* next iteration of the head instruction */
	uint64_t free_at;		/* simulated time the unit is free */
	uint64_t busy;
	bool arrived;			/* at the head barrier */
	/* The wait that last blocked head (pos, iter): see head_ready. */
	bool blk_valid;
	uint32_t blk_pos, blk_counter;
	uint64_t blk_iter, blk_need;
};

/*
 * time[c][v % CTIME_RING] is written when counter c reaches v and only
 * read for values reached (reached_at), so it needs no clearing: a task's
 * TPB states start zeroed up to ctr.time (task_reset), which saves
 * clearing ~16 KiB per TPB of every task.
 */
struct counters {
	uint64_t val[NPU_HW_SU_COUNTERS];
	uint64_t time[NPU_HW_SU_COUNTERS][CTIME_RING];
};

struct npu_tpb_state {
	unsigned lcluster, tpb, pcluster;
	uint8_t *hbsm;
	struct unit_q *unit;		/* NPU_TPB_UNITS, in task->uq */
	uint64_t first_start, last_end;
	bool started;			/* ran at least one iteration */
	bool active;
	/* Units (bits) whose blocked head waits on each counter: task->cand. */
	uint8_t waiters[NPU_HW_SU_COUNTERS];
	struct counters ctr;		/* last: time[] is left uncleared */
};

struct barrier {
	uint32_t insn;
	uint32_t expected, arrived;
	bool released;
};

struct runnable {
	struct npu_tpb_state *tpb;	/* NULL: CCB DMA engine */
	struct unit_q *uq;
	unsigned unit;
	struct npu_dinsn *di;
	uint64_t iter;
	struct npu_cost cost;
	int status;
	uint64_t fault_addr;
	uint32_t detail, detail2;
};

/*
 * A decoded program kept for the queue's next tasks.  Most programs run
 * many times unchanged (a model's steps, each inference): decoding and
 * validating ~10^4 instructions of 512 bytes per inference cost more than
 * running them.  Every task still reads its whole program and compares
 * it with the entry, so a program changed in memory by anyone is seen,
 * and only its changed instructions are decoded again.
 */
struct prog_entry {
	uint64_t va, pt_base;
	struct npu_hw_prog hdr;
	struct npu_hw_task key;		/* the descriptor fields decode reads */
	struct npu_dinsn *insns;
	uint64_t used;			/* task->prog_tick of its last task */
};

#define PROG_CACHE_ENTRIES 512
#define PROG_CACHE_BYTES (64ull << 20)	/* of decoded instructions, per queue */

struct npu_task {
	struct npu_core_task *ft;
	struct npu_core *core;
	struct npu_dinsn *insns;
	uint32_t ninsns;
	bool insns_owned;		/* else they belong to a prog_entry */
	struct prog_entry *prog;	/* the queue's decoded programs */
	unsigned nprog;
	uint64_t prog_bytes, prog_tick;
	unsigned nclusters, tpbs;
	struct npu_tpb_state *tpb;	/* nclusters * tpbs */
	/*
	 * Their unit queues, NPU_TPB_UNITS per TPB, side by side: every
	 * round scans them all, and inside the TPB states (~17 KiB apart)
	 * each one cost a cache miss.
	 */
	struct unit_q *uq;
	/*
	 * The round's candidates: bit k for uq[k] when its head may have
	 * become runnable.  A queue whose head is blocked leaves the set and
	 * waits in its TPB's waiters[] on the counter that blocked it; a
	 * signal to that counter puts it back (wake).  A round scans only
	 * the set, in uq order, as a scan of every queue would find them:
	 * most queues wait most of the time.
	 */
	uint64_t *cand;
	uint32_t undrained;		/* TPB unit queues with work left */
	struct unit_q dma[NPU_HW_NUM_DMA_ENGINES];
	struct counters ccb;
	struct barrier *bar;
	uint32_t nbar;
	uint8_t *sram;
	uint32_t sram_size;
	struct npu_link_cal link[NPU_HW_MAX_LINKS];
	/* The CCB's DDR port and broadcast path (enum npu_xfer_path). */
	struct npu_link_cal path[NPU_PATHS];
	uint64_t timeout;
	uint64_t end_time;
	uint64_t iterations;
	struct runnable *run;
	size_t run_cap;
	struct npu_mmu_tlb *tlbs;	/* one per pool worker */
	struct npu_scratch_cache *keep;	/* one per pool worker */
	struct npu_tracer *tracer;	/* NULL: not traced (npu_trace.h) */
	size_t max_tpbs;		/* tpb, uq and cand are sized for these */
	unsigned workers;		/* tlbs and keep: one per pool worker */
};

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

/* ---- failure reporting ---- */

static void fail(struct npu_task *task, unsigned status, uint32_t insn,
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

/* ---- loading ---- */

static int check_desc(struct npu_task *task)
{
	const struct npu_hw_task *d = &task->ft->desc;
	const struct npu_core_config *cfg = &task->core->cfg;
	uint32_t seen = 0;

	if (d->magic != NPU_TASK_MAGIC || d->flags & ~NPU_TASK_F_KNOWN ||
	    d->pad0 || !npu_all_zero(d->reserved, sizeof(d->reserved)) ||
	    d->nclusters < 1 || d->nclusters > cfg->clusters ||
	    d->pt_base & (NPU_MMU_PAGE_SIZE - 1) ||
	    d->sram_base & (NPU_MMU_PAGE_SIZE - 1) ||
	    d->sram_base > cfg->sram_size ||
	    d->sram_size > cfg->sram_size - d->sram_base ||
	    d->timeout_cycles > NPU_TASK_MAX_TIMEOUT ||
	    d->prog_size < sizeof(struct npu_hw_prog))
		return NPU_TASK_BAD_DESCRIPTOR;
	for (unsigned i = d->nclusters; i < NPU_HW_MAX_CLUSTERS; i++)
		if (d->cluster_map[i])
			return NPU_TASK_BAD_DESCRIPTOR;
	for (unsigned i = 0; i < d->nclusters; i++) {
		unsigned p = d->cluster_map[i];

		if (p >= cfg->clusters || seen & (1u << p))
			return NPU_TASK_BAD_DESCRIPTOR;
		seen |= 1u << p;
		if (cfg->defect_mask & (1u << p)) {
			fail(task, NPU_TASK_DEFECTIVE_CLUSTER, UINT32_MAX, p, i, 0);
			return NPU_TASK_DEFECTIVE_CLUSTER;
		}
	}
	return 0;
}

static int check_sync(const struct npu_task *task, const struct npu_hw_insn *in)
{
	for (unsigned i = 0; i < NPU_SYNC_WAITS; i++) {
		const struct npu_hw_sync_wait *w = &in->sync.wait[i];

		if (w->flags & ~NPU_WAIT_KNOWN || w->reserved)
			return NPU_IE_RESERVED;
		if (!w->flags) {
			if (w->counter || w->value || w->iter_step)
				return NPU_IE_RESERVED;
			continue;
		}
		if (w->counter >= NPU_HW_SU_COUNTERS)
			return NPU_IE_SYNC;
	}
	for (unsigned i = 0; i < NPU_SYNC_SIGNALS; i++) {
		const struct npu_hw_sync_signal *s = &in->sync.signal[i];

		if (s->flags & ~NPU_SIGNAL_KNOWN || s->reserved0 || s->reserved1)
			return NPU_IE_RESERVED;
		if (!(s->flags & NPU_SIGNAL_ENABLE)) {
			if (s->flags || s->counter || s->tpb_mask || s->cluster_mask)
				return NPU_IE_RESERVED;
			continue;
		}
		if (s->counter >= NPU_HW_SU_COUNTERS)
			return NPU_IE_SYNC;
		if (s->flags & NPU_SIGNAL_REMOTE) {
			if (s->flags & NPU_SIGNAL_CCB || !s->tpb_mask ||
			    !s->cluster_mask || s->tpb_mask >> task->tpbs ||
			    s->cluster_mask >> task->nclusters)
				return NPU_IE_SYNC;
		} else if (s->tpb_mask || s->cluster_mask) {
			return NPU_IE_SYNC;
		}
	}
	return 0;
}

static int check_operand_range(const struct npu_task *task, const struct npu_walk *w)
{
	uint64_t lo, hi, limit;

	npu_walk_bounds(w, &lo, &hi);
	switch (w->space) {
	case NPU_SPACE_HBSM:
	case NPU_SPACE_HBSM_REMOTE:
		limit = task->core->cfg.hbsm_size;
		break;
	case NPU_SPACE_SRAM:
		limit = task->sram_size;
		break;
	default:
		limit = 1ull << NPU_MMU_VA_BITS;
		break;
	}
	if (lo == UINT64_MAX || hi >= limit || limit - hi < w->esz)
		return NPU_IE_RANGE;
	if (w->space == NPU_SPACE_HBSM_REMOTE &&
	    (!w->cluster_mask || !w->tpb_mask ||
	     w->cluster_mask >> task->nclusters || w->tpb_mask >> task->tpbs))
		return NPU_IE_DEST;
	return 0;
}

/* Decode one instruction; returns a task status, filling the failure. */
static int decode_insn(struct npu_task *task, struct npu_dinsn *di)
{
	const struct npu_hw_insn *in = &di->raw;
	const struct npu_unit_ops *ops;
	bool tpb_unit = in->unit < NPU_TPB_UNITS;
	bool any_used = false;
	int err;

	ops = npu_unit_lookup(in->unit, in->opcode);
	if (in->unit >= NPU_UNIT_COUNT) {
		err = NPU_IE_UNIT;
		goto bad;
	}
	if (!ops) {
		err = NPU_IE_OPCODE;
		goto bad;
	}
	if (in->flags || in->reserved[0] || in->reserved[1]) {
		err = NPU_IE_RESERVED;
		goto bad;
	}
	if (tpb_unit) {
		if (!in->cluster_mask || !in->tpb_mask || in->tpb_mask >> task->tpbs) {
			err = NPU_IE_DEST;
			goto bad;
		}
		if (in->cluster_mask >> task->nclusters) {
			/* Names a cluster outside the partition. */
			unsigned lc = task->nclusters;

			while (!(in->cluster_mask & (1u << lc)))
				lc++;
			fail(task, NPU_TASK_DEFECTIVE_CLUSTER, di->index, lc, 0, 0);
			return NPU_TASK_DEFECTIVE_CLUSTER;
		}
	} else if (in->cluster_mask || in->tpb_mask) {
		err = NPU_IE_DEST;
		goto bad;
	}
	if (in->repeat_levels > NPU_MAX_REPEAT_LEVELS) {
		err = NPU_IE_WALKER;
		goto bad;
	}
	err = check_sync(task, in);
	if (err)
		goto bad;
	di->nrep = in->repeat_levels;
	di->iters = 1;
	/* The first used operand sets the repeat counts; the others match. */
	for (unsigned o = 0; o < NPU_OPNDS; o++) {
		struct npu_walk *w = &di->opnd[o];

		if (!in->opnd[o].nlevels) {
			if (!npu_all_zero(&in->opnd[o], sizeof(in->opnd[o]))) {
				err = NPU_IE_RESERVED;
				goto bad;
			}
			continue;
		}
		err = npu_walk_decode(&in->opnd[o], w);
		if (err)
			goto bad;
		if (w->nlevels <= di->nrep) {
			err = NPU_IE_WALKER;
			goto bad;
		}
		if (!tpb_unit && w->space == NPU_SPACE_HBSM) {
			err = NPU_IE_SPACE;	/* the CCB has no local HBSM */
			goto bad;
		}
		err = check_operand_range(task, w);
		if (err)
			goto bad;
		if (npu_walk_elems(w, w->nlevels - di->nrep) > NPU_VIEW_MAX_ELEMS) {
			err = NPU_IE_WALKER;
			goto bad;
		}
		for (unsigned j = 0; j < di->nrep; j++) {
			uint32_t c = w->count[w->nlevels - di->nrep + j];

			if (!any_used) {
				di->rep_count[j] = c;
			} else if (di->rep_count[j] != c) {
				err = NPU_IE_SHAPE;
				goto bad;
			}
		}
		any_used = true;
		di->used[o] = true;
		di->work += npu_walk_elems(w, w->nlevels - di->nrep);
	}
	if (di->nrep) {
		if (!any_used) {
			err = NPU_IE_WALKER;	/* repeats need an operand to count them */
			goto bad;
		}
		for (unsigned j = 0; j < di->nrep; j++)
			di->iters *= di->rep_count[j];
		if (di->iters > MAX_TASK_ITERATIONS) {
			err = NPU_IE_WALKER;
			goto bad;
		}
	}
	err = ops->validate(task, di);
	if (err)
		goto bad;
	return 0;
bad:
	fail(task, NPU_TASK_ILLEGAL_INSN, di->index, (uint32_t)err, 0, 0);
	return NPU_TASK_ILLEGAL_INSN;
}

/* The descriptor fields decoding and validation depend on (the rest of
 * what they read is the core's configuration). */
static void decode_key(const struct npu_hw_task *d, struct npu_hw_task *k)
{
	memset(k, 0, sizeof(*k));
	k->nclusters = d->nclusters;
	memcpy(k->cluster_map, d->cluster_map, sizeof(k->cluster_map));
	k->sram_base = d->sram_base;
	k->sram_size = d->sram_size;
	k->timeout_cycles = d->timeout_cycles;
}

static size_t prog_bytes(const struct prog_entry *e)
{
	return (size_t)e->hdr.insn_count * sizeof(struct npu_dinsn);
}

static void prog_drop(struct npu_task *task, unsigned i)
{
	task->prog_bytes -= prog_bytes(&task->prog[i]);
	free(task->prog[i].insns);
	task->prog[i] = task->prog[--task->nprog];
}

static struct prog_entry *prog_find(struct npu_task *task, const struct npu_hw_prog *hdr)
{
	const struct npu_hw_task *d = &task->ft->desc;
	struct npu_hw_task key;

	decode_key(d, &key);
	for (unsigned i = 0; i < task->nprog; i++) {
		struct prog_entry *e = &task->prog[i];

		if (e->va == d->prog_va && e->pt_base == d->pt_base &&
		    !memcmp(&e->hdr, hdr, sizeof(*hdr)) &&
		    !memcmp(&e->key, &key, sizeof(key)))
			return e;
	}
	return NULL;
}

/* Keep the task's freshly decoded program for the next tasks, if it fits. */
static void prog_keep(struct npu_task *task, const struct npu_hw_prog *hdr)
{
	const struct npu_hw_task *d = &task->ft->desc;
	size_t bytes = (size_t)hdr->insn_count * sizeof(struct npu_dinsn);
	struct prog_entry *e = NULL;

	if (bytes > PROG_CACHE_BYTES)
		return;
	if (!task->prog) {
		task->prog = calloc(PROG_CACHE_ENTRIES, sizeof(*task->prog));
		if (!task->prog)
			return;
	}
	/* Least recently used out first. */
	while (task->nprog == PROG_CACHE_ENTRIES ||
	       task->prog_bytes + bytes > PROG_CACHE_BYTES) {
		unsigned lru = 0;

		for (unsigned i = 1; i < task->nprog; i++)
			if (task->prog[i].used < task->prog[lru].used)
				lru = i;
		prog_drop(task, lru);
	}
	e = &task->prog[task->nprog++];
	e->va = d->prog_va;
	e->pt_base = d->pt_base;
	e->hdr = *hdr;
	decode_key(d, &e->key);
	e->insns = task->insns;
	e->used = task->prog_tick;
	task->prog_bytes += bytes;
	task->insns_owned = false;
}

static int load_program(struct npu_task *task)
{
	const struct npu_hw_task *d = &task->ft->desc;
	struct npu_hw_prog hdr;
	struct npu_mmu_tlb tlb = { 0 };
	struct prog_entry *e = NULL;
	uint64_t fa = 0;
	uint32_t detail = 0;
	int ret;

	ret = npu_mmu_read(task->ft, &tlb, d->prog_va, &hdr, sizeof(hdr), &fa, &detail);
	if (ret)
		goto mem_fail;
	if (hdr.magic != NPU_PROG_MAGIC ||
	    hdr.version_major != NPU_PROG_VERSION_MAJOR || hdr.flags ||
	    !npu_all_zero(hdr.reserved, sizeof(hdr.reserved)) ||
	    hdr.insn_count > NPU_PROG_MAX_INSNS ||
	    hdr.insn_offset % 64 || hdr.insn_offset < sizeof(hdr) ||
	    (uint64_t)hdr.insn_offset + (uint64_t)hdr.insn_count * NPU_INSN_SIZE >
	    d->prog_size) {
		fail(task, NPU_TASK_BAD_DESCRIPTOR, UINT32_MAX, 0, 0, d->prog_va);
		return NPU_TASK_BAD_DESCRIPTOR;
	}
	task->ninsns = hdr.insn_count;
	task->prog_tick++;
	e = prog_find(task, &hdr);
	if (e) {
		e->used = task->prog_tick;
		task->insns = e->insns;
		task->insns_owned = false;
	} else {
		task->insns = calloc(hdr.insn_count ? hdr.insn_count : 1,
				    sizeof(*task->insns));
		if (!task->insns) {
			fail(task, NPU_TASK_INTERNAL, UINT32_MAX, 0, 0, 0);
			return NPU_TASK_INTERNAL;
		}
		task->insns_owned = true;
	}
	/*
	 * Every instruction read (in address order, so a fault names the
	 * same first bad page as one read of the whole array would), all
	 * before any is decoded.  Against a kept program, an instruction
	 * that differs is marked (index UINT32_MAX) to be decoded again.
	 */
	for (uint32_t i = 0; i < hdr.insn_count; i++) {
		struct npu_dinsn *di = &task->insns[i];
		struct npu_hw_insn raw;

		ret = npu_mmu_read(task->ft, &tlb, d->prog_va + hdr.insn_offset +
				   (uint64_t)i * NPU_INSN_SIZE, &raw,
				   NPU_INSN_SIZE, &fa, &detail);
		if (ret)
			goto mem_fail;
		if (e && !memcmp(&raw, &di->raw, sizeof(raw)))
			continue;
		memset(di, 0, sizeof(*di));
		di->raw = raw;
		di->index = UINT32_MAX;
	}
	for (uint32_t i = 0; i < hdr.insn_count; i++) {
		if (task->insns[i].index != UINT32_MAX)
			continue;
		task->insns[i].index = i;
		ret = decode_insn(task, &task->insns[i]);
		if (ret)
			goto decode_fail;
	}
	if (!e)
		prog_keep(task, &hdr);
	return 0;
mem_fail:
	if (ret == NPU_TASK_MMU_FAULT) {
		task->ft->mmu_fault = true;
		task->ft->mmu_fault_write = false;
	}
	fail(task, ret, UINT32_MAX, detail, 0, fa);
decode_fail:
	/* A kept program partly overwritten is no longer a decoded one. */
	if (e)
		prog_drop(task, (unsigned)(e - task->prog));
	else
		free(task->insns);
	task->insns = NULL;
	task->insns_owned = false;
	task->ninsns = 0;
	return ret;
}

/* ---- dispatch ---- */

static int uq_push(struct unit_q *q, uint32_t v)
{
	if (q->n == q->cap) {
		uint32_t cap = q->cap ? q->cap * 2 : 16;
		uint32_t *e = realloc(q->ent, cap * sizeof(*e));

		if (!e)
			return -1;
		q->ent = e;
		q->cap = cap;
	}
	q->ent[q->n++] = v;
	return 0;
}

static int dispatch(struct npu_task *task)
{
	for (uint32_t i = 0; i < task->ninsns; i++) {
		const struct npu_hw_insn *in = &task->insns[i].raw;
		bool barrier = in->unit == NPU_UNIT_SYNC &&
			       in->opcode == NPU_SYNC_BARRIER;
		uint32_t participants = 0;

		if (in->unit == NPU_UNIT_DMA) {
			if (uq_push(&task->dma[in->params.dma.engine], i))
				return -1;
			continue;
		}
		for (unsigned c = 0; c < task->nclusters; c++) {
			if (!(in->cluster_mask & (1u << c)))
				continue;
			for (unsigned t = 0; t < task->tpbs; t++) {
				struct npu_tpb_state *tp = &task->tpb[c * task->tpbs + t];

				if (!(in->tpb_mask & (1u << t)))
					continue;
				tp->active = true;
				if (!barrier) {
					if (uq_push(&tp->unit[in->unit], i))
						return -1;
					continue;
				}
				for (unsigned u = 0; u < NPU_TPB_UNITS; u++)
					if (uq_push(&tp->unit[u], BARRIER_FLAG | task->nbar))
						return -1;
				participants += NPU_TPB_UNITS;
			}
		}
		if (barrier) {
			struct barrier *b = realloc(task->bar, (task->nbar + 1) * sizeof(*b));

			if (!b)
				return -1;
			task->bar = b;
			b[task->nbar].insn = i;
			b[task->nbar].expected = participants;
			b[task->nbar].arrived = 0;
			b[task->nbar].released = false;
			task->nbar++;
		}
	}
	return 0;
}

/* ---- sync ---- */

static struct counters *wait_counters(struct npu_task *task, struct npu_tpb_state *tp)
{
	return tp ? &tp->ctr : &task->ccb;
}

static uint64_t wait_value(const struct npu_hw_sync_wait *w, uint64_t iter)
{
	return (uint64_t)w->value + iter * (uint64_t)w->iter_step;
}

static bool waits_met(const struct counters *ctr, const struct npu_dinsn *di,
		      uint64_t iter, unsigned *blocked)
{
	for (unsigned i = 0; i < NPU_SYNC_WAITS; i++) {
		const struct npu_hw_sync_wait *w = &di->raw.sync.wait[i];

		if (!(w->flags & NPU_WAIT_ENABLE))
			continue;
		if (ctr->val[w->counter] < wait_value(w, iter)) {
			if (blocked)
				*blocked = i;
			return false;
		}
	}
	return true;
}

/*
 * Whether the head instruction of @q (not a barrier) may run, *di set
 * when it was looked at.  Counters only grow, so while the wait that last
 * blocked this head is unmet it stays blocked: the round scan then
 * neither reads the instruction nor its other waits again.
 */
static bool still_blocked(const struct counters *ctr, const struct unit_q *q)
{
	return q->blk_valid && q->blk_pos == q->pos && q->blk_iter == q->iter &&
	       ctr->val[q->blk_counter] < q->blk_need;
}

static bool head_ready(struct npu_task *task, const struct counters *ctr,
		       struct unit_q *q, struct npu_dinsn **di)
{
	const struct npu_hw_sync_wait *w;
	unsigned blocked = 0;

	if (still_blocked(ctr, q))
		return false;
	*di = &task->insns[q->ent[q->pos]];
	if (waits_met(ctr, *di, q->iter, &blocked)) {
		q->blk_valid = false;
		return true;
	}
	w = &(*di)->raw.sync.wait[blocked];
	q->blk_valid = true;
	q->blk_pos = q->pos;
	q->blk_iter = q->iter;
	q->blk_counter = w->counter;
	q->blk_need = wait_value(w, q->iter);
	return false;
}

/* Simulated time at which a counter reached value v. */
static uint64_t reached_at(const struct counters *ctr, unsigned c, uint64_t v)
{
	if (v == 0 || ctr->val[c] - v >= CTIME_RING)
		return 0;
	return ctr->time[c][v % CTIME_RING];
}

/* Make @tp's units that wait on counter @c candidates again. */
static void wake(struct npu_task *task, struct npu_tpb_state *tp, unsigned c)
{
	size_t base = (size_t)(tp - task->tpb) * NPU_TPB_UNITS;
	unsigned w = tp->waiters[c];

	tp->waiters[c] = 0;
	for (; w; w &= w - 1) {
		size_t k = base + (unsigned)__builtin_ctz(w);

		task->cand[k / 64] |= 1ull << (k % 64);
	}
}

static void bump(struct counters *ctr, unsigned c, uint64_t when)
{
	uint64_t v = ++ctr->val[c];
	uint64_t prev = v == 1 ? 0 : ctr->time[c][(v - 1) % CTIME_RING];

	/* "reached v" is monotonic: never earlier than "reached v-1". */
	ctr->time[c][v % CTIME_RING] = when > prev || v == 1 ? when : prev;
}

static unsigned hops(const struct npu_task *task, unsigned a, unsigned b)
{
	unsigned mx = task->core->cfg.mesh_x;
	int dx = (int)(a % mx) - (int)(b % mx), dy = (int)(a / mx) - (int)(b / mx);

	return (unsigned)(abs(dx) + abs(dy));
}

static void apply_signals(struct npu_task *task, struct runnable *r, uint64_t end)
{
	const struct npu_dinsn *di = r->di;
	bool last = r->iter + 1 == di->iters;
	unsigned here = r->tpb ? npu_task_cluster_node(task, r->tpb->lcluster) :
				 task->core->ccb_node;

	for (unsigned i = 0; i < NPU_SYNC_SIGNALS; i++) {
		const struct npu_hw_sync_signal *s = &di->raw.sync.signal[i];

		if (!(s->flags & NPU_SIGNAL_ENABLE))
			continue;
		if (!(s->flags & NPU_SIGNAL_PER_ITER) && !last)
			continue;
		if (s->flags & NPU_SIGNAL_CCB) {
			bump(&task->ccb, s->counter,
			     end + NPU_M100_HOP_LATENCY * hops(task, here, task->core->ccb_node));
		} else if (s->flags & NPU_SIGNAL_REMOTE) {
			for (unsigned c = 0; c < task->nclusters; c++) {
				unsigned lat;

				if (!(s->cluster_mask & (1u << c)))
					continue;
				lat = NPU_M100_HOP_LATENCY *
				      hops(task, here, npu_task_cluster_node(task, c));
				for (unsigned t = 0; t < task->tpbs; t++) {
					struct npu_tpb_state *to = &task->tpb[c * task->tpbs + t];

					if (!(s->tpb_mask & (1u << t)))
						continue;
					bump(&to->ctr, s->counter, end + lat);
					wake(task, to, s->counter);
				}
			}
		} else {
			bump(wait_counters(task, r->tpb), s->counter, end);
			if (r->tpb)
				wake(task, r->tpb, s->counter);
		}
	}
}

/* ---- NoC ---- */

/*
 * A transfer over one of the CCB's own paths: DDR_BYTES_PER_CYCLE wide,
 * one hop of latency, taking the cycles the path has free from @start on
 * (its arbiter interleaves requests: a long DMA flows around the short
 * GSDU requests booked ahead of it, cycle-model.md).
 */
static uint64_t route_path(struct npu_task *task, const struct npu_xfer *x,
			   uint64_t start)
{
	uint64_t ser = (x->bytes + NPU_M100_DDR_BYTES_PER_CYCLE - 1) /
		       NPU_M100_DDR_BYTES_PER_CYCLE;
	uint64_t done = npu_link_cal_fill(&task->path[x->path], start, ser);

	return done - start + NPU_M100_HOP_LATENCY;
}

/* XY routing: add bytes to each link on the path; returns transfer time. */
static uint64_t route(struct npu_task *task, const struct npu_xfer *x,
		      uint64_t start)
{
	struct npu_perf *perf = &task->ft->perf;
	unsigned mx = task->core->cfg.mesh_x;
	unsigned x0 = x->src_node % mx, y0 = x->src_node / mx;
	unsigned x1 = x->dst_node % mx, y1 = x->dst_node / mx;
	uint64_t ser = (x->bytes + NPU_M100_LINK_BYTES_PER_CYCLE - 1) /
		       NPU_M100_LINK_BYTES_PER_CYCLE;
	uint64_t t = start, nh = 0;

	if (x->path != NPU_PATH_MESH)
		return route_path(task, x, start);
	while (x0 != x1 || y0 != y1) {
		unsigned dir, node = y0 * mx + x0, link;

		if (x0 != x1)
			dir = x1 > x0 ? NPU_LINK_EAST : NPU_LINK_WEST;
		else
			dir = y1 > y0 ? NPU_LINK_SOUTH : NPU_LINK_NORTH;
		link = node * NPU_HW_LINK_DIRS + dir;
		if (link < NPU_HW_MAX_LINKS) {
			uint64_t at = npu_link_cal_book(&task->link[link], t, ser);

			perf->link_bytes[link] += x->bytes;
			perf->link_stalls[link] += at - t;
			if (task->tracer)
				task->tracer->link(task->tracer, link, at, ser, x->bytes);
			t = at;
		}
		t += NPU_M100_HOP_LATENCY;
		nh++;
		switch (dir) {
		case NPU_LINK_EAST: x0++; break;
		case NPU_LINK_WEST: x0--; break;
		case NPU_LINK_SOUTH: y0++; break;
		default: y0--; break;
		}
	}
	return nh ? t - start + ser : 0;
}

/* ---- execution ---- */

/* One iteration of run[i]; DDR accesses bracketed by the caller. */
static void exec_iteration(struct npu_task *task, unsigned i)
{
	struct runnable *r = &task->run[i];
	const struct npu_unit_ops *ops = npu_unit_lookup(r->di->raw.unit,
							 r->di->raw.opcode);
	unsigned worker = npu_pool_worker_index();
	struct npu_iteration it = {
		.task = task, .tpb = r->tpb, .di = r->di, .iter = r->iter,
		.cost = &r->cost,
		.tlb = &task->tlbs[worker],
		.keep = &task->keep[worker],
	};

	/* All but the transfer list, whose first nxfers entries are set. */
	memset(&r->cost, 0, offsetof(struct npu_cost, xfer));
	r->status = ops->exec(&it);
	r->fault_addr = it.fault_addr;
	r->detail = it.detail;
	r->detail2 = it.detail2;
	npu_iter_release(&it);
}

static void mem_begin(struct npu_task *task)
{
	const struct npu_core_host *host = &task->core->host;

	if (host->mem_begin)
		host->mem_begin(host->opaque);
}

static void mem_end(struct npu_task *task)
{
	const struct npu_core_host *host = &task->core->host;

	if (host->mem_end)
		host->mem_end(host->opaque);
}

/* Pool callback: one iteration on a worker, bracketed on its own. */
static void exec_one(void *arg, unsigned i)
{
	struct npu_task *task = arg;

	mem_begin(task);
	exec_iteration(task, i);
	mem_end(task);
}

static int add_run(struct npu_task *task, size_t *n, struct npu_tpb_state *tp,
		   struct unit_q *uq, unsigned unit, struct npu_dinsn *di)
{
	struct runnable *r;

	if (*n == task->run_cap) {
		size_t cap = task->run_cap ? task->run_cap * 2 : 64;

		r = realloc(task->run, cap * sizeof(*r));
		if (!r)
			return -1;
		task->run = r;
		task->run_cap = cap;
	}
	/* Field by field: a compound literal would also clear the ~1 KiB
	 * cost record, which exec_iteration clears as far as it is used. */
	r = &task->run[(*n)++];
	r->tpb = tp;
	r->uq = uq;
	r->unit = unit;
	r->di = di;
	r->iter = uq->iter;
	r->status = NPU_TASK_OK;
	r->fault_addr = 0;
	r->detail = 0;
	r->detail2 = 0;
	return 0;
}

/* Hand the iteration @account just placed in time to the task's tracer. */
static void trace_span(struct npu_task *task, const struct runnable *r,
		       uint64_t start, uint64_t dur)
{
	const struct npu_dinsn *di = r->di;
	struct npu_trace_span s = {
		.start = start, .dur = dur, .iter = r->iter,
		.dma_bytes = r->tpb ? 0 : r->cost.dma_bytes,
		.gsdu_bytes = r->cost.gsdu_bytes,
		.insn = di->index,
		.conflicts = r->cost.conflicts,
		.unit = (uint8_t)r->unit,
		.opcode = (uint8_t)di->raw.opcode,
		.pcluster = r->tpb ? (uint8_t)r->tpb->pcluster : NPU_TRACE_CCB,
		.lcluster = r->tpb ? (uint8_t)r->tpb->lcluster : NPU_TRACE_CCB,
		.tpb = r->tpb ? (uint8_t)r->tpb->tpb : (uint8_t)di->raw.params.dma.engine,
	};

	task->tracer->span(task->tracer, &s);
}

/*
 * Start loading the queue's next instruction: most run a single iteration
 * once per task, so each is a cold ~1 KiB read, and it is due a round or
 * more later.
 */
static void prefetch_insn(const struct npu_dinsn *di)
{
	const char *p = (const char *)di;

	for (size_t off = 0; off < sizeof(*di); off += 64)
		__builtin_prefetch(p + off);
}

static void account(struct npu_task *task, struct runnable *r)
{
	struct npu_perf *perf = &task->ft->perf;
	const struct npu_dinsn *di = r->di;
	struct counters *ctr = wait_counters(task, r->tpb);
	uint64_t start = r->uq->free_at, end, dur;

	for (unsigned i = 0; i < NPU_SYNC_WAITS; i++) {
		const struct npu_hw_sync_wait *w = &di->raw.sync.wait[i];
		uint64_t t;

		if (!(w->flags & NPU_WAIT_ENABLE))
			continue;
		t = reached_at(ctr, w->counter, wait_value(w, r->iter));
		if (t > start)
			start = t;
	}
	/* Units fold conflict stalls into cycles; conflicts is the count. */
	dur = r->cost.cycles;
	for (unsigned x = 0; x < r->cost.nxfers; x++) {
		uint64_t t = route(task, &r->cost.xfer[x], start);

		if (t > dur)
			dur = t;
	}
	if (!dur)
		dur = 1;
	end = start + dur;
	r->uq->free_at = end;
	r->uq->busy += dur;
	if (end > task->end_time)
		task->end_time = end;
	if (r->tpb) {
		unsigned pc = r->tpb->pcluster;

		if (!r->tpb->started || start < r->tpb->first_start)
			r->tpb->first_start = start;
		r->tpb->started = true;
		if (end > r->tpb->last_end)
			r->tpb->last_end = end;
		if (r->unit < NPU_PERF_UNITS)
			perf->unit_busy[pc][r->unit] += dur;
		perf->hbsm_conflicts[pc] += r->cost.conflicts;
	} else {
		perf->dma_bytes[di->raw.params.dma.engine] += r->cost.dma_bytes;
	}
	perf->gsdu_bytes += r->cost.gsdu_bytes;
	perf->load_bytes += r->cost.load_bytes;
	perf->store_bytes += r->cost.store_bytes;
	perf->macs_float += r->cost.macs_float;
	perf->macs_int8 += r->cost.macs_int8;
	if (task->tracer)
		trace_span(task, r, start, dur);
	apply_signals(task, r, end);
	if (++r->uq->iter == di->iters) {
		r->uq->iter = 0;
		r->uq->pos++;
		if (r->tpb && r->uq->pos == r->uq->n)
			task->undrained--;
		else if (r->uq->pos < r->uq->n && !(r->uq->ent[r->uq->pos] & BARRIER_FLAG))
			prefetch_insn(&task->insns[r->uq->ent[r->uq->pos]]);
	}
}

static void report_deadlock(struct npu_task *task)
{
	for (unsigned i = 0; i < task->nclusters * task->tpbs; i++) {
		struct npu_tpb_state *tp = &task->tpb[i];

		for (unsigned u = 0; u < NPU_TPB_UNITS; u++) {
			struct unit_q *q = &tp->unit[u];
			struct npu_dinsn *di;
			unsigned w = 0;

			if (q->pos == q->n)
				continue;
			if (q->ent[q->pos] & BARRIER_FLAG) {
				struct barrier *b = &task->bar[q->ent[q->pos] & ~BARRIER_FLAG];

				fail(task, NPU_TASK_SYNC_DEADLOCK, b->insn,
				     NPU_DEADLOCK_DETAIL(tp->lcluster, tp->tpb,
							 NPU_DEADLOCK_BARRIER),
				     task->insns[b->insn].raw.params.sync.barrier_id, 0);
				return;
			}
			di = &task->insns[q->ent[q->pos]];
			waits_met(&tp->ctr, di, q->iter, &w);
			fail(task, NPU_TASK_SYNC_DEADLOCK, di->index,
			     NPU_DEADLOCK_DETAIL(tp->lcluster, tp->tpb,
						 di->raw.sync.wait[w].counter),
			     (uint32_t)wait_value(&di->raw.sync.wait[w], q->iter), 0);
			return;
		}
	}
	for (unsigned e = 0; e < NPU_HW_NUM_DMA_ENGINES; e++) {
		struct unit_q *q = &task->dma[e];
		struct npu_dinsn *di;
		unsigned w = 0;

		if (q->pos == q->n)
			continue;
		di = &task->insns[q->ent[q->pos]];
		waits_met(&task->ccb, di, q->iter, &w);
		fail(task, NPU_TASK_SYNC_DEADLOCK, di->index,
		     NPU_DEADLOCK_DETAIL(NPU_DEADLOCK_CCB, e,
					 di->raw.sync.wait[w].counter),
		     (uint32_t)wait_value(&di->raw.sync.wait[w], q->iter), 0);
		return;
	}
}

/* Barrier markers at queue heads: arrive, and release complete barriers. */
static bool step_barriers(struct npu_task *task)
{
	bool progress = false;

	for (unsigned i = 0; i < task->nclusters * task->tpbs; i++) {
		for (unsigned u = 0; u < NPU_TPB_UNITS; u++) {
			struct unit_q *q = &task->tpb[i].unit[u];

			if (q->pos < q->n && q->ent[q->pos] & BARRIER_FLAG && !q->arrived) {
				q->arrived = true;
				task->bar[q->ent[q->pos] & ~BARRIER_FLAG].arrived++;
				progress = true;
			}
		}
	}
	for (uint32_t b = 0; b < task->nbar; b++) {
		struct barrier *bar = &task->bar[b];
		uint64_t t = 0;

		if (bar->released || bar->arrived < bar->expected)
			continue;
		/* Everyone is here: release at the latest arrival time. */
		for (int pass = 0; pass < 2; pass++) {
			for (unsigned i = 0; i < task->nclusters * task->tpbs; i++) {
				for (unsigned u = 0; u < NPU_TPB_UNITS; u++) {
					struct unit_q *q = &task->tpb[i].unit[u];

					if (q->pos >= q->n || q->ent[q->pos] != (BARRIER_FLAG | b))
						continue;
					if (pass == 0) {
						if (q->free_at > t)
							t = q->free_at;
					} else {
						q->free_at = t + 1;
						q->arrived = false;
						q->pos++;
						if (q->pos == q->n)
							task->undrained--;
					}
				}
			}
		}
		bar->released = true;
		progress = true;
	}
	return progress;
}

static int run_rounds(struct npu_task *task)
{
	struct npu_pool *pool = task->core->pool;
	size_t nq = (size_t)task->nclusters * task->tpbs * NPU_TPB_UNITS;
	size_t nwords = (nq + 63) / 64;

	/* Every TPB unit queue with work starts as a candidate (task->cand). */
	memset(task->cand, 0, nwords * sizeof(*task->cand));
	task->undrained = 0;
	for (size_t k = 0; k < nq; k++) {
		if (!task->uq[k].n)
			continue;
		task->cand[k / 64] |= 1ull << (k % 64);
		task->undrained++;
	}

	for (;;) {
		size_t n = 0;
		bool progress, pending;
		uint64_t work = 0;

		if (atomic_load(&task->ft->abort)) {
			fail(task, NPU_TASK_ABORTED, UINT32_MAX, 0, 0, 0);
			return NPU_TASK_ABORTED;
		}
		/* Most programs have no barrier: skip the per-round scan. */
		progress = task->nbar && step_barriers(task);
		pending = task->undrained != 0;
		for (size_t wd = 0; wd < nwords; wd++) {
			for (uint64_t bits = task->cand[wd]; bits; bits &= bits - 1) {
				unsigned b = (unsigned)__builtin_ctzll(bits);
				size_t k = wd * 64 + b;
				struct npu_tpb_state *tp = &task->tpb[k / NPU_TPB_UNITS];
				unsigned u = k % NPU_TPB_UNITS;
				struct unit_q *q = &task->uq[k];
				struct npu_dinsn *di = NULL;

				if (q->pos == q->n) {
					task->cand[wd] &= ~(1ull << b);
					continue;
				}
				/* A barrier marker moves on in step_barriers. */
				if (q->ent[q->pos] & BARRIER_FLAG)
					continue;
				if (!head_ready(task, &tp->ctr, q, &di)) {
					/* Out of the set until its counter moves. */
					tp->waiters[q->blk_counter] |= 1u << u;
					task->cand[wd] &= ~(1ull << b);
					continue;
				}
				if (add_run(task, &n, tp, q, u, di))
					goto oom;
				work += di->work;
			}
		}
		for (unsigned e = 0; e < NPU_HW_NUM_DMA_ENGINES; e++) {
			struct unit_q *q = &task->dma[e];
			struct npu_dinsn *di = NULL;

			if (q->pos == q->n)
				continue;
			pending = true;
			if (!head_ready(task, &task->ccb, q, &di))
				continue;
			if (add_run(task, &n, NULL, q, NPU_UNIT_DMA, di))
				goto oom;
			work += di->work;
		}
		if (!pending)
			return 0;
		if (!n) {
			if (progress)
				continue;
			report_deadlock(task);
			return NPU_TASK_SYNC_DEADLOCK;
		}
		/*
		 * Small rounds run inline: a thread hand-off costs more.  On
		 * BlazeFace with threads=2, handing off rounds from 64 Ki
		 * elements made it slower than threads=1 (best 6.4 vs 5.9 ms);
		 * from 256 Ki elements it is no slower.
		 */
		if (n > 1 && work >= PARALLEL_ROUND_WORK) {
			npu_pool_run(pool, (unsigned)n, exec_one, task);
		} else {
			/* One bracket for the round's iterations on this thread. */
			mem_begin(task);
			for (size_t i = 0; i < n; i++)
				exec_iteration(task, (unsigned)i);
			mem_end(task);
		}
		for (size_t i = 0; i < n; i++) {
			struct runnable *r = &task->run[i];

			if (r->status != NPU_TASK_OK) {
				fail(task, (unsigned)r->status, r->di->index, r->detail,
				     r->detail2, r->fault_addr);
				return r->status;
			}
			account(task, r);
		}
		task->iterations += n;
		if (task->end_time > task->timeout) {
			fail(task, NPU_TASK_TIMEOUT, UINT32_MAX, 0, 0, 0);
			return NPU_TASK_TIMEOUT;
		}
	}
oom:
	fail(task, NPU_TASK_INTERNAL, UINT32_MAX, 0, 0, 0);
	return NPU_TASK_INTERNAL;
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
		prog_drop(task, task->nprog - 1);
	free(task->prog);
	free(task->tpb);
	free(task->uq);
	free(task->cand);
	free(task->bar);
	free(task->run);
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
	task->tpb = malloc(tpbs * sizeof(*task->tpb));
	task->uq = calloc(tpbs * NPU_TPB_UNITS, sizeof(*task->uq));
	task->cand = calloc((tpbs * NPU_TPB_UNITS + 63) / 64, sizeof(*task->cand));
	task->tlbs = calloc(task->workers, sizeof(*task->tlbs));
	task->keep = calloc(task->workers, sizeof(*task->keep));
	if (!task->tpb || !task->uq || !task->cand || !task->tlbs || !task->keep) {
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
	task_free(atomic_exchange(&task->core->task_spare[ft->queue], task));
}

static void queue_reset(struct unit_q *q)
{
	uint32_t *ent = q->ent, cap = q->cap;

	*q = (struct unit_q){ .ent = ent, .cap = cap };
}

/*
 * Everything a task reads zeroed, as a fresh calloc would give it, but
 * the counters' time rings (only read for values reached, which the task
 * writes first) and the buffers' capacities.
 */
static void task_reset(struct npu_task *task, struct npu_core_task *ft)
{
	const struct npu_hw_task *d = &ft->desc;
	size_t ntpb = (size_t)d->nclusters * task->core->cfg.tpbs_per_cluster;

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
	memset(task->ccb.val, 0, sizeof(task->ccb.val));
	for (size_t i = 0; i < ntpb; i++)
		memset(&task->tpb[i], 0, offsetof(struct npu_tpb_state, ctr.time));
	for (size_t k = 0; k < ntpb * NPU_TPB_UNITS; k++)
		queue_reset(&task->uq[k]);
	for (unsigned e = 0; e < NPU_HW_NUM_DMA_ENGINES; e++)
		queue_reset(&task->dma[e]);
	for (unsigned l = 0; l < NPU_HW_MAX_LINKS; l++)
		npu_link_cal_clear(&task->link[l]);
	for (unsigned l = 0; l < NPU_PATHS; l++)
		npu_link_cal_clear(&task->path[l]);
	/* Translations are the task's own: its page tables may have changed. */
	memset(task->tlbs, 0, task->workers * sizeof(*task->tlbs));
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
	ret = check_desc(task);
	if (ret) {
		fail(task, (unsigned)ret, UINT32_MAX, 0, 0, 0);
		goto out;
	}
	task_reset(task, ft);
	task->sram = core->sram + d->sram_base;
	task->sram_size = d->sram_size;
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
	/* One memory bracket for the program's many reads. */
	mem_begin(task);
	ret = load_program(task);
	mem_end(task);
	if (ret)
		goto out;
	if (dispatch(task)) {
		fail(task, NPU_TASK_INTERNAL, UINT32_MAX, 0, 0, 0);
		goto out;
	}
	if (core->host.tracer)
		task->tracer = core->host.tracer(core->host.opaque, ft->queue, d->seqno);
	run_rounds(task);
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
out:
	ft->cycles = task->end_time;
	task_put(task, ft);
}
