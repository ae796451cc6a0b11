/* SPDX-License-Identifier: MIT */
/* Device-core internals shared by npu_core.c, npu_queue.c, npu_log.c,
 * npu_mmu.c and the task engine (npu_task.h). */
#ifndef NPU_CORE_PRIV_H
#define NPU_CORE_PRIV_H

#include <pthread.h>
#include <stdatomic.h>

#include "npu_core.h"
#include "npu_exec.h"

/* Performance counters, in the layout order of the registers. */
struct npu_perf {
	uint64_t cycles;
	uint64_t cluster_busy[NPU_HW_MAX_CLUSTERS];
	uint64_t unit_busy[NPU_HW_MAX_CLUSTERS][NPU_PERF_UNITS];
	uint64_t hbsm_conflicts[NPU_HW_MAX_CLUSTERS];
	uint64_t dma_bytes[NPU_HW_NUM_DMA_ENGINES];
	uint64_t gsdu_bytes;
	uint64_t load_bytes, store_bytes;	/* struct npu_cost's */
	uint64_t macs_float, macs_int8;
	uint64_t link_bytes[NPU_HW_MAX_LINKS];
	uint64_t link_stalls[NPU_HW_MAX_LINKS];
};

/* struct npu_perf is an array of uint64_t counters in disguise. */
#define NPU_PERF_WORDS (sizeof(struct npu_perf) / sizeof(uint64_t))
/* Counters a task's completion adds one by one, at most (perf_sparse). */
#define NPU_PERF_SPARSE_MAX 64

struct npu_queue {
	uint64_t base;
	uint32_t size_log2;
	uint32_t head, tail;
	uint32_t ctrl;
	uint32_t state;
	uint32_t last_status;
	uint64_t done_seq;
	uint64_t tasks;
	uint64_t busy;
	bool task_out;			/* a task was fetched and not completed */
	struct npu_core_task *task;	/* that task */
	/*
	 * The last completed task's memory, its counters already zero, for
	 * the next fetch: a fresh one was a 2 KiB calloc per task (most of
	 * it the counters), 3.5% of a decode step's instructions.
	 */
	struct npu_core_task *spare;
};

struct npu_core {
	struct npu_core_config cfg;
	struct npu_core_host host;
	uint8_t node_of_cluster[NPU_HW_MAX_CLUSTERS];
	uint8_t ccb_node, ddr_node;

	/*
	 * Device memories.  Written by executing tasks without a lock: the
	 * driver gives concurrent tasks disjoint clusters and SRAM windows,
	 * and a racing program only corrupts its own data.
	 */
	uint8_t *hbsm;			/* clusters * tpbs * hbsm_size */
	uint8_t *sram;

	/*
	 * lock protects the register state below (queues, irq, fault, perf,
	 * mmu_ctrl) against concurrent MMIO and task completion; tasks read
	 * nothing from it while executing.
	 */
	pthread_mutex_t lock;
	struct npu_queue q[NPU_HW_NUM_QUEUES];
	uint32_t irq_status, irq_mask;
	uint32_t fault_status;
	uint64_t fault_addr;
	uint32_t mmu_ctrl;
	uint32_t perf_ctrl;
	uint32_t bad_access;
	uint32_t scratch;
	uint64_t latch_hi;		/* upper half latched by a _LO read */
	struct npu_perf perf;
	uint32_t generation;		/* bumped by reset: orphans old tasks */
	struct npu_pool *pool;		/* execution threads, shared by tasks */
	/*
	 * The task engine's state of each queue's last task, kept for its
	 * next (buffers and decoded programs, npu_task.c).  Taken and put
	 * back with an atomic exchange, outside the lock: a task orphaned by
	 * a reset may still run while the queue's next task starts.  A reset
	 * leaves them: they hold no device state.
	 */
	_Atomic(struct npu_task *) task_spare[NPU_HW_NUM_QUEUES];
	/* Tasks run from their program's record, and replays that diverged
	 * (npu_replay.c); for npu_core_debug_replays. */
	atomic_uint_fast64_t replays, replay_divergences;
};

/* A fetched task. */
struct npu_core_task {
	struct npu_core *core;
	unsigned queue;
	uint32_t generation;
	uint32_t ring_index;
	struct npu_hw_task desc;
	struct npu_hw_completion comp;
	bool desc_ok;			/* ring entry was readable */
	atomic_bool abort;
	uint64_t cycles;
	bool mmu_fault;
	bool mmu_fault_write;
	bool mmu_on;			/* NPU_MMU_CTRL_ENABLE at fetch */
	bool replayed;			/* ran from its program's record */
	/*
	 * perf_sparse: besides cycles, only @perf's words perf_words[0,
	 * nperf_words) can be nonzero (a replayed task's, from its record),
	 * so completion adds and clears those rather than all ~230.
	 */
	bool perf_sparse;
	uint8_t nperf_words;
	uint16_t perf_words[NPU_PERF_SPARSE_MAX];
	/* Last: a fetch clears what is before it (struct npu_queue.spare). */
	struct npu_perf perf;		/* this task's contribution */
};

/* npu_mmu.c: translate a device VA for a task; 0 or NPU_TASK_MMU_FAULT /
 * NPU_TASK_BUS_ERROR with the completion's fault fields filled. */
/*
 * A thread's translations within one task, direct-mapped on a fold of the
 * page number: strided walks whose planes lie a power-of-two number of
 * pages apart (channels of a tensor) would all land in one slot of a
 * plain vpn % size index and walk the tables on every element.
 */
#define NPU_MMU_TLB_ENTRIES 64
/*
 * Besides, the last few page ranges npu_mmu_map found physically
 * contiguous: the tiles of one large matrix span the same megabytes of
 * pages, far more than the TLB holds, and each would otherwise read all
 * their entries again.
 */
#define NPU_MMU_TLB_RANGES 4

struct npu_mmu_range {
	uint64_t first, last;	/* page numbers, inclusive */
	uint64_t pa;		/* physical address of page @first */
	uint8_t perm;		/* held by every page of the range */
};

/*
 * And the host pointers of the last few page spans npu_mmu_map gave for
 * reading, for the rest of the memory bracket they were mapped in: most
 * DMAs of a decode step read a few dozen bytes each, the next slice of
 * the same page as an earlier DMA of the round (of one of an operation's
 * two or three inputs), and a translation plus the host's mem_map cost
 * ~230 instructions each time.  Reads only: a host records what the core
 * writes through each mem_map call (QEMU marks those pages dirty as the
 * bracket ends).
 */
#define NPU_MMU_READ_MAPS 4

struct npu_mmu_read_map {
	uint64_t bracket;	/* the bracket it was mapped in; 0: empty */
	uint64_t va, len;	/* whole pages */
	uint64_t pa;
	const uint8_t *host;
};

struct npu_mmu_tlb {
	uint64_t vpn[NPU_MMU_TLB_ENTRIES];
	uint64_t pa[NPU_MMU_TLB_ENTRIES];
	uint8_t perm[NPU_MMU_TLB_ENTRIES];
	bool valid[NPU_MMU_TLB_ENTRIES];
	struct npu_mmu_range range[NPU_MMU_TLB_RANGES];	/* perm 0: empty */
	unsigned range_next;	/* the entry a new range replaces */
	struct npu_mmu_read_map read_map[NPU_MMU_READ_MAPS];
	unsigned read_map_next;	/* the entry a new span replaces */
};

/*
 * This thread enters and leaves a memory bracket (npu_task_mem_begin/_end):
 * each gets an id unique across threads and brackets, which the read maps
 * are tagged with, as a host pointer is valid only until its bracket ends
 * (npu_core_host.mem_map).
 */
void npu_mmu_bracket_enter(void);
void npu_mmu_bracket_leave(void);
int npu_mmu_translate(struct npu_core_task *task, struct npu_mmu_tlb *tlb,
		      uint64_t va, bool write, uint64_t *pa,
		      uint64_t *fault_addr, uint32_t *detail);
/* Copy between DDR (virtual) and a host buffer; handles page crossings. */
int npu_mmu_read(struct npu_core_task *task, struct npu_mmu_tlb *tlb,
		 uint64_t va, void *buf, size_t len, uint64_t *fault_addr,
		 uint32_t *detail);
int npu_mmu_write(struct npu_core_task *task, struct npu_mmu_tlb *tlb,
		  uint64_t va, const void *buf, size_t len,
		  uint64_t *fault_addr, uint32_t *detail);

/*
 * A host pointer to the @len (>= 1) bytes at device VA @va, valid until
 * the end of the current mem_begin/mem_end bracket: every page of the
 * range translated for reading (or writing, @write) and the pages
 * physically contiguous, so that the host's mem_map gives one range.
 * NULL when anything stands in the way (no mem_map hook, a page that
 * would fault, a discontiguity, a range the host does not map); nothing
 * is recorded then, and the caller copies through npu_mmu_read/write,
 * which report the exact fault.  Translations may fill @tlb.
 */
void *npu_mmu_map(struct npu_core_task *task, struct npu_mmu_tlb *tlb,
		  uint64_t va, size_t len, bool write);
/* npu_mmu_map, also giving the physical address of @va in *@pa. */
void *npu_mmu_map_pa(struct npu_core_task *task, struct npu_mmu_tlb *tlb,
		     uint64_t va, size_t len, bool write, uint64_t *pa);

/* npu_task.c: run a fetched, readable task descriptor to completion. */
void npu_task_run(struct npu_core_task *task);
/* Free the engine states the queues keep between tasks (core teardown). */
void npu_task_free_spares(struct npu_core *core);
/* Memories of a running task (npu_task.c), used by the walker layer. */
uint8_t *npu_task_hbsm(struct npu_task *task, unsigned lcluster, unsigned tpb);
uint8_t *npu_task_sram(struct npu_task *task, uint32_t *size);
struct npu_core_task *npu_task_fetched(struct npu_task *task);

/* npu_core.c */
uint8_t *npu_core_hbsm_of(struct npu_core *core, unsigned pcluster,
			  unsigned tpb);
void npu_core_update_irq_locked(struct npu_core *core);

/* npu_log.c: hand the host's log hook @rec with its message from @fmt
 * (nothing when the host has no hook); core->lock held. */
void npu_core_log_locked(struct npu_core *core, struct npu_core_log *rec,
			 const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Log the failure of @task, whose completion record is final (nothing if
 * it ended NPU_TASK_OK); @fence_failed: the record could not be written. */
void npu_core_log_task_locked(struct npu_core_task *task, bool fence_failed);

#endif /* NPU_CORE_PRIV_H */
