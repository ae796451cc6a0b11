// SPDX-License-Identifier: MIT
/*
 * The dataflow rounds: dispatch a task's instructions to the unit queues of
 * its TPBs and the CCB DMA engines, then run them.
 *
 * Execution proceeds in rounds.  In each round every unit whose head
 * instruction's next iteration has its waits met runs that iteration;
 * signals are applied after the round, in a fixed order, so results and
 * the cycle model are deterministic whatever the thread count.  A round in
 * which nothing can run while work remains is a deadlock: the task ends
 * with the first blocked counter instead of hanging.
 */
#include <stdlib.h>
#include <string.h>

#include "npu_pool.h"
#include "npu_task.h"

#define PARALLEL_ROUND_WORK (256u << 10)	/* elements: below, run inline */

/* ---- dispatch ---- */

/* Append @v to @q, a queue of @task->uq (or, @task NULL, a DMA queue). */
static int uq_push(struct npu_task *task, struct unit_q *q, uint32_t v)
{
	if (q->n == q->cap) {
		uint32_t cap = q->cap ? q->cap * 2 : 16;
		uint32_t *e = realloc(q->ent, cap * sizeof(*e));

		if (!e)
			return -1;
		q->ent = e;
		q->cap = cap;
	}
	if (!q->n && task)
		task->used[task->nused++] = (uint32_t)(q - task->uq);
	q->ent[q->n++] = v;
	return 0;
}

int npu_task_dispatch(struct npu_task *task)
{
	for (uint32_t i = 0; i < task->ninsns; i++) {
		const struct npu_hw_insn *in = &task->insns[i].raw;
		bool barrier = in->unit == NPU_UNIT_SYNC &&
			       in->opcode == NPU_SYNC_BARRIER;
		uint32_t participants = 0;

		if (in->unit == NPU_UNIT_DMA) {
			if (uq_push(NULL, &task->dma[in->params.dma.engine], i))
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
				if (!barrier) {
					if (uq_push(task, &tp->unit[in->unit], i))
						return -1;
					continue;
				}
				for (unsigned u = 0; u < NPU_TPB_UNITS; u++)
					if (uq_push(task, &tp->unit[u], BARRIER_FLAG | task->nbar))
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

	ctr->touched |= 1u << c;

	/* "reached v" is monotonic: never earlier than "reached v-1". */
	ctr->time[c][v % CTIME_RING] = when > prev || v == 1 ? when : prev;
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
			     end + NPU_M100_HOP_LATENCY * npu_noc_hops(task, here, task->core->ccb_node));
		} else if (s->flags & NPU_SIGNAL_REMOTE) {
			for (unsigned c = 0; c < task->nclusters; c++) {
				unsigned lat;

				if (!(s->cluster_mask & (1u << c)))
					continue;
				lat = NPU_M100_HOP_LATENCY *
				      npu_noc_hops(task, here, npu_task_cluster_node(task, c));
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

/* ---- execution ---- */

/* One iteration of @r; DDR accesses bracketed by the caller. */
static void exec_iteration(struct npu_task *task, struct runnable *r)
{
	const struct npu_unit_ops *ops = r->di->ops;
	unsigned worker = npu_pool_worker_index();
	struct npu_cost_known known;
	struct npu_iteration it;

	/* Field by field: an initializer would also clear the 512-byte
	 * scratch table, of which only the first nscratch entries are read. */
	it.task = task;
	it.tpb = r->tpb;
	it.di = r->di;
	it.iter = r->iter;
	it.cost = &r->cost;
	it.known = NULL;
	if (r->rec) {
		known.cycles = r->rec->cycles;
		known.conflicts = r->rec->conflicts;
		known.macs_float = r->rec->macs_float;
		known.macs_int8 = r->rec->macs_int8;
		it.known = &known;
	}
	it.tlb = &task->tlbs[worker];
	it.fault_addr = 0;
	it.detail = 0;
	it.detail2 = 0;
	it.nscratch = 0;
	it.keep = &task->keep[worker];

	/* All but the transfer list, whose first nxfers entries are set. */
	memset(&r->cost, 0, offsetof(struct npu_cost, xfer));
	r->status = ops->exec(&it);
	r->fault_addr = it.fault_addr;
	r->detail = it.detail;
	r->detail2 = it.detail2;
	npu_iter_release(&it);
}

/* Pool callback: one iteration of the round on a worker, bracketed on its own. */
static void exec_one(void *arg, unsigned i)
{
	struct npu_task *task = arg;

	npu_task_mem_begin(task);
	exec_iteration(task, &task->exec_set[i]);
	npu_task_mem_end(task);
}

void npu_task_exec_round(struct npu_task *task, struct runnable *set, size_t n,
			 uint64_t work, bool bracketed)
{
	/*
	 * Small rounds run inline: a thread hand-off costs more.  On
	 * BlazeFace with threads=2, handing off rounds from 64 Ki elements
	 * made it slower than threads=1 (best 6.4 vs 5.9 ms); from 256 Ki
	 * elements it is no slower.
	 */
	if (n > 1 && work >= PARALLEL_ROUND_WORK) {
		task->exec_set = set;
		npu_pool_run(task->core->pool, (unsigned)n, exec_one, task);
		return;
	}
	/* One bracket for the round's iterations on this thread. */
	if (!bracketed)
		npu_task_mem_begin(task);
	for (size_t i = 0; i < n; i++)
		exec_iteration(task, &set[i]);
	if (!bracketed)
		npu_task_mem_end(task);
}

static int add_run(struct npu_task *task, size_t *n, struct npu_tpb_state *tp,
		   struct unit_q *uq, unsigned unit, struct npu_dinsn *di)
{
	struct runnable *r;

	r = npu_grow(task->run, &task->run_cap, *n + 1, sizeof(*r));
	if (!r)
		return -1;
	task->run = r;
	/* Field by field: a compound literal would also clear the ~1 KiB
	 * cost record, which exec_iteration clears as far as it is used. */
	r = &task->run[(*n)++];
	r->tpb = tp;
	r->uq = uq;
	r->unit = unit;
	r->di = di;
	r->iter = uq->iter;
	r->rec = NULL;
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
		uint64_t t = npu_noc_route(task, &r->cost.xfer[x], start);

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

				npu_task_fail(task, NPU_TASK_SYNC_DEADLOCK, b->insn,
				     NPU_DEADLOCK_DETAIL(tp->lcluster, tp->tpb,
							 NPU_DEADLOCK_BARRIER),
				     task->insns[b->insn].raw.params.sync.barrier_id, 0);
				return;
			}
			di = &task->insns[q->ent[q->pos]];
			waits_met(&tp->ctr, di, q->iter, &w);
			npu_task_fail(task, NPU_TASK_SYNC_DEADLOCK, di->index,
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
		npu_task_fail(task, NPU_TASK_SYNC_DEADLOCK, di->index,
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

int npu_task_run_rounds(struct npu_task *task)
{
	uint32_t round = 0;
	size_t nq = (size_t)task->nclusters * task->tpbs * NPU_TPB_UNITS;
	size_t nwords = (nq + 63) / 64;

	/* Every TPB unit queue with work starts as a candidate (task->cand). */
	memset(task->cand, 0, nwords * sizeof(*task->cand));
	for (size_t i = 0; i < task->nused; i++) {
		size_t k = task->used[i];

		task->cand[k / 64] |= 1ull << (k % 64);
	}
	task->undrained = (uint32_t)task->nused;

	for (;;) {
		size_t n = 0;
		bool progress, pending;
		uint64_t work = 0;

		if (atomic_load(&task->ft->abort)) {
			npu_task_fail(task, NPU_TASK_ABORTED, UINT32_MAX, 0, 0, 0);
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
					goto internal;
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
				goto internal;
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
		/* After a diverged replay, its rounds are not executed again. */
		if (task->catchup && round <= task->catchup_round) {
			if (npu_replay_fill(task, round, task->run, n))
				goto internal;
			if (round == task->catchup_round)
				task->catchup = NULL;
		} else {
			npu_task_exec_round(task, task->run, n, work, false);
		}
		npu_replay_round(task, task->run, n);
		round++;
		for (size_t i = 0; i < n; i++) {
			struct runnable *r = &task->run[i];

			if (r->status != NPU_TASK_OK) {
				npu_task_fail(task, (unsigned)r->status, r->di->index, r->detail,
				     r->detail2, r->fault_addr);
				return r->status;
			}
			account(task, r);
		}
		task->iterations += n;
		if (task->end_time > task->timeout) {
			npu_task_fail(task, NPU_TASK_TIMEOUT, UINT32_MAX, 0, 0, 0);
			return NPU_TASK_TIMEOUT;
		}
	}
internal:
	npu_task_fail(task, NPU_TASK_INTERNAL, UINT32_MAX, 0, 0, 0);
	return NPU_TASK_INTERNAL;
}
