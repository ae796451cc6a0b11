/* SPDX-License-Identifier: MIT */
/*
 * The task engine's state of one task, shared by its files: npu_task.c (the
 * state, its accessors, failure reporting, what a queue keeps between its
 * tasks, and npu_task_run()), npu_decode.c (descriptor checks, program
 * loading, instruction decoding and validation), npu_rounds.c (dispatch to
 * the unit queues and the dataflow rounds) and npu_noc_route.c (routing
 * transfers over the link calendars of npu_noc_cal.c).
 */
#ifndef NPU_TASK_H
#define NPU_TASK_H

#include "npu_core_priv.h"
#include "npu_noc_cal.h"

#define CTIME_RING 64			/* signal times remembered per counter */
#define BARRIER_FLAG 0x80000000u	/* unit-queue entry is a barrier marker */

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
 * read for values reached (reached_at), so it needs no clearing: a task
 * clears a TPB state's fields before ctr and the counters the last task
 * touched (task_reset), which saves clearing ~16 KiB per TPB per task.
 */
struct counters {
	uint32_t touched;		/* bit c: val[c] may be nonzero */
	uint64_t val[NPU_HW_SU_COUNTERS];
	uint64_t time[NPU_HW_SU_COUNTERS][CTIME_RING];
};

struct npu_tpb_state {
	unsigned lcluster, tpb, pcluster;
	uint8_t *hbsm;
	struct unit_q *unit;		/* NPU_TPB_UNITS, in task->uq */
	uint64_t first_start, last_end;
	bool started;			/* ran at least one iteration */
	/* Units (bits) whose blocked head waits on each counter: task->cand. */
	uint8_t waiters[NPU_HW_SU_COUNTERS];
	/* Last: only its touched counters are cleared, time[] never. */
	struct counters ctr;
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
	/* Replayed: its iteration in the record (NULL otherwise). */
	const struct npu_replay_step *rec;
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
 * and only its changed instructions are decoded again; unless the host
 * vouches, through a version of its bytes (npu_core_host.mem_version),
 * that they have not changed since they were last read.
 */
struct prog_entry {
	uint64_t va, pt_base;
	struct npu_hw_prog hdr;
	struct npu_hw_task key;		/* the descriptor fields decode reads */
	struct npu_dinsn *insns;
	uint64_t used;			/* task->prog_tick of its last task */
	/* Where its instructions lay when last read, and the host's version
	 * of those bytes then (0: none given, so they are read each time). */
	uint64_t insns_pa, version;
	/* Its last successful run's rounds and costs (npu_replay.c), or NULL;
	 * dropped as soon as any of its instructions is decoded again. */
	struct npu_replay *replay;
};

/*
 * A recorded run of a program (npu_replay.c): the iterations of each of
 * its rounds in run order, what each cost, and what the cycle model made
 * of them.  Which iterations run in which round depends only on the
 * program (counters count signals; time never decides readiness), and the
 * cycle model only on the rounds and the costs: a run whose every cost
 * equals the record's has the record's cycles and counters.
 */
struct npu_replay_step {
	uint32_t q;			/* uq index; nq + engine for a DMA engine */
	uint32_t insn;
	uint64_t iter;
	uint64_t work;			/* its instruction's (threading) */
	uint32_t xfer;			/* its transfers: xfer[xfer, xfer + nxfers) */
	uint32_t nxfers;
	uint64_t cycles, conflicts, dma_bytes, gsdu_bytes;
	uint64_t load_bytes, store_bytes, macs_float, macs_int8;
};

struct npu_replay {
	struct npu_replay_step *step;
	uint32_t nsteps;
	size_t cap_steps;
	uint32_t *round_end;		/* step index past each round's last */
	uint32_t nrounds;
	size_t cap_rounds;
	uint32_t widest;		/* steps in its largest round */
	struct npu_xfer *xfer;
	uint32_t nxfers;
	size_t cap_xfers;
	uint64_t end_time, iterations;
	/*
	 * The task's counters (struct npu_perf, cluster busy time included)
	 * as its nonzero words: a task touches a few of its ~230, and the
	 * replay writes only those into the fetched task's zeroed copy.
	 */
	uint32_t nperf;
	uint16_t perf_word[NPU_PERF_WORDS];
	uint64_t perf_val[NPU_PERF_WORDS];
};

struct npu_task {
	struct npu_core_task *ft;
	struct npu_core *core;
	struct npu_dinsn *insns;
	uint32_t ninsns;
	bool insns_owned;		/* else they belong to a prog_entry */
	struct prog_entry *prog;	/* the queue's decoded programs */
	unsigned nprog;
	/* The entry the last task ran: a model's steps are kept in the
	 * order they run, so the next is usually the entry after it. */
	unsigned prog_last;
	uint64_t prog_bytes, prog_tick;
	unsigned nclusters, tpbs;
	struct npu_tpb_state *tpb;	/* nclusters * tpbs */
	/*
	 * The partition the TPB states' placement (logical and physical
	 * cluster, HBSM, unit queues) was set for, nclusters 0 for none: a
	 * queue's tasks mostly run on one, and setting 56 states per task
	 * showed in a decode step's 72 tasks.
	 */
	uint8_t placed_nclusters;
	uint8_t placed_map[NPU_HW_MAX_CLUSTERS];
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
	/*
	 * The uq indices given work by this task's dispatch (in dispatch
	 * order): the only queues the rounds change, hence the only ones
	 * the next task must reset.  Most tasks use a few of the units.
	 */
	uint32_t *used;
	size_t nused;
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
	struct runnable *exec_set;	/* the round being executed: run or rrun */
	/*
	 * Replay (npu_replay.c).  prog_cur: the kept program this task runs
	 * (NULL: a program not kept).  rec: this run's recording, kept into
	 * prog_cur when the task succeeds.  rrun: the replayed round.
	 * catchup: after a replay diverged at round catchup_round, the normal
	 * rounds take the costs of the rounds before from it, and those of
	 * round catchup_round from rrun, instead of executing them again.
	 */
	struct prog_entry *prog_cur;
	struct npu_replay *rec;
	bool recording;
	struct runnable *rrun;
	size_t rrun_cap;
	const struct npu_replay *catchup;
	uint32_t catchup_round;
	struct npu_mmu_tlb *tlbs;	/* one per pool worker */
	struct npu_scratch_cache *keep;	/* one per pool worker */
	struct npu_tracer *tracer;	/* NULL: not traced (npu_trace.h) */
	size_t max_tpbs;		/* tpb, uq and cand are sized for these */
	unsigned workers;		/* tlbs and keep: one per pool worker */
};

/*
 * npu_task.c: the array @p of *@cap elements of @size bytes (NULL: none
 * yet), grown by doubling to hold @need; NULL, @p left as it was, only
 * when out of memory.
 */
void *npu_grow(void *p, size_t *cap, size_t need, size_t size);

/* npu_task.c: record the task's failure (the first one is kept). */
void npu_task_fail(struct npu_task *task, unsigned status, uint32_t insn,
		   uint32_t detail, uint32_t detail2, uint64_t addr);

/* npu_decode.c: 0 or a task status, the failure recorded. */
int npu_task_check_desc(struct npu_task *task);
int npu_task_load_program(struct npu_task *task);
/* Forget the queue's decoded program @i. */
void npu_task_prog_drop(struct npu_task *task, unsigned i);

/* npu_rounds.c: fill the unit queues (-1 when out of memory), then run
 * the rounds to the end (0 or a task status, the failure recorded). */
int npu_task_dispatch(struct npu_task *task);
int npu_task_run_rounds(struct npu_task *task);
/* Execute set[0, n) as one round (on the pool when worth it); @bracketed:
 * this thread is inside a memory bracket already. */
void npu_task_exec_round(struct npu_task *task, struct runnable *set, size_t n,
			 uint64_t work, bool bracketed);

/* npu_replay.c. */
void npu_replay_free(struct npu_replay *rp);
/* The memory @rp holds (the program cache's budget counts it). */
size_t npu_replay_bytes(const struct npu_replay *rp);
/* Run the task from its program's record: 1 when it did (end time and
 * counters set, or the task failed), 0 when the task must run the rounds
 * (catching up from task->catchup if the replay diverged). */
int npu_replay_try(struct npu_task *task);
/* Start recording the rounds (when the program is kept). */
void npu_replay_begin(struct npu_task *task);
/* Record round set[0, n), executed or taken from the catch-up. */
void npu_replay_round(struct npu_task *task, const struct runnable *set, size_t n);
/* Round @round of the catch-up: set[0, n)'s costs and outcomes from the
 * record or the replayed round; -1 if the rounds differ (an engine bug). */
int npu_replay_fill(struct npu_task *task, uint32_t round, struct runnable *set,
		    size_t n);
/* The task succeeded: its recording becomes its program's record. */
void npu_replay_keep(struct npu_task *task);

/* npu_noc_route.c: mesh hops between two nodes, and the time a transfer
 * started at @start takes (its links booked). */
unsigned npu_noc_hops(const struct npu_task *task, unsigned a, unsigned b);
uint64_t npu_noc_route(struct npu_task *task, const struct npu_xfer *x,
		       uint64_t start);

/* The host's memory bracket (npu_core_host.mem_begin/mem_end). */
static inline void npu_task_mem_begin(struct npu_task *task)
{
	const struct npu_core_host *host = &task->core->host;

	if (host->mem_begin)
		host->mem_begin(host->opaque);
	npu_mmu_bracket_enter();
}

static inline void npu_task_mem_end(struct npu_task *task)
{
	const struct npu_core_host *host = &task->core->host;

	npu_mmu_bracket_leave();
	if (host->mem_end)
		host->mem_end(host->opaque);
}

#endif /* NPU_TASK_H */
