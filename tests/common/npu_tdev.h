/* SPDX-License-Identifier: MIT */
/*
 * A device-core test bench: a device core over a flat "DDR" buffer, a
 * page-table builder, a program builder and a synchronous submit path
 * through a real ring.  Used by the unit tests and the demo tool.
 */
#ifndef NPU_TDEV_H
#define NPU_TDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

#include "npu_core.h"
#include "npu_kern.h"

struct npu_tdev {
	struct npu_core *core;
	uint8_t *ddr;
	uint64_t ddr_size;
	uint64_t next_pa;		/* bump allocator, 4 KiB pages */
	uint32_t irq_pending;		/* last level reported by the core */
	unsigned irq_calls;
	uint64_t seqno;
	uint64_t ring_pa[NPU_HW_NUM_QUEUES];
	uint64_t fence_pa;
	unsigned ring_log2;
	/* The core's mem_begin/mem_end brackets (any thread): how many, how
	 * many DDR accesses fell inside one, and any misuse (a begin inside
	 * a bracket or an end outside one on the same thread). */
	atomic_uint mem_begins, mem_ends, mem_bracketed, mem_misnested;
	/* Given to the core for every task while set (npu_trace.h). */
	struct npu_tracer *tracer;
	/* While set, the core may read and write DDR in place (the host's
	 * mem_map, inside its brackets) rather than through mem_read and
	 * mem_write: tests run both ways and expect the same outcome. */
	bool map_ddr;
	atomic_uint mem_maps;		/* ranges the core got mapped */
	/* With map_ddr: reads are mapped as a copy of their range that is
	 * poisoned and freed as the bracket ends, as a host whose mappings
	 * last one bracket (QEMU's) would let go of them; writes are not
	 * mapped.  A pointer kept past its bracket reads poison (under
	 * ASan, freed memory). */
	bool bounce_reads;
	/* While nonzero (with map_ddr), what the host's mem_version says of
	 * any DDR range: a test that writes DDR and wants the core to see
	 * it changes this, as a host tracking writes would. */
	uint64_t ddr_version;
	/* The core's log hook: reports of each enum npu_core_event, and the
	 * last report (its msg and comp point at log_msg and log_comp). */
	unsigned log_count[NPU_EV_HOST_ERROR + 1];
	struct npu_core_log log_last;
	char log_msg[256];
	struct npu_hw_completion log_comp;
	/* The core's reset hook: how many times it was called. */
	unsigned resets;
};

/* ddr_mb: size of the fake DDR; cfg NULL = M100 defaults. */
struct npu_tdev *npu_tdev_create(const struct npu_core_config *cfg,
				 unsigned ddr_mb);
void npu_tdev_destroy(struct npu_tdev *d);
/*
 * The unit tests' small device: @clusters x @tpbs with the clusters in
 * @defect fused, on the fewest 4-wide mesh rows that hold them with the
 * CCB and the DDR port, 64 KiB HBSM per TPB, 1 MiB SRAM, @threads
 * execution threads and 64 MiB of DDR.  NULL (with a message) on failure.
 */
struct npu_tdev *npu_tdev_small(unsigned clusters, unsigned tpbs,
				uint32_t defect, unsigned threads);

uint64_t npu_tdev_alloc(struct npu_tdev *d, size_t bytes);	/* PA, zeroed */
void *npu_tdev_ptr(struct npu_tdev *d, uint64_t pa);

/* Page tables: a context root, and mappings of [va, va+len) -> pa. */
uint64_t npu_tdev_ctx(struct npu_tdev *d);
void npu_tdev_map(struct npu_tdev *d, uint64_t root, uint64_t va, uint64_t pa,
		  size_t len, bool read, bool write);
/* Allocate len bytes, map them at va in root; returns the host pointer. */
void *npu_tdev_buf(struct npu_tdev *d, uint64_t root, uint64_t va, size_t len,
		   bool write);

/* Program builder. */
struct npu_tprog {
	struct npu_hw_insn *insn;
	unsigned n, cap;
};
void npu_tprog_init(struct npu_tprog *p);
void npu_tprog_free(struct npu_tprog *p);
/* Append a zeroed instruction for (unit, opcode, masks). */
struct npu_hw_insn *npu_tprog_add(struct npu_tprog *p, unsigned unit,
				  unsigned opcode, unsigned cluster_mask,
				  unsigned tpb_mask);
/*
 * A dense walker: dims[0] innermost, ndims levels, row-major packed from
 * base.  Levels get initial 0, step = stride, final = (dim-1)*stride.
 */
void npu_twu_dense(struct npu_hw_twu *t, unsigned space, unsigned dtype,
		   uint64_t base, unsigned ndims, const uint32_t *dims);
/* Set one level explicitly. */
void npu_twu_level(struct npu_hw_twu *t, unsigned level, int32_t initial,
		   int32_t step, int32_t final);

/* Options of one submission. */
struct npu_tdev_submit {
	unsigned queue;
	uint64_t root;			/* page-table root (0: a fresh context) */
	unsigned nclusters;		/* 0: 1 */
	const uint8_t *cluster_map;	/* NULL: healthy clusters in order */
	uint64_t timeout_cycles;
	uint32_t sram_base, sram_size;	/* 0/0: the whole SRAM */
	uint64_t prog_va;		/* 0: 0x10000000 */
};

/*
 * Write the program to DDR under opt->root (a fresh context if 0), map it
 * and fill desc for it, without queueing; returns the header in DDR.
 */
struct npu_hw_prog *npu_tdev_prepare(struct npu_tdev *d,
				     const struct npu_tprog *p,
				     const struct npu_tdev_submit *opt,
				     struct npu_hw_task *desc);
/* npu_tdev_prepare, then queue and run it; fills comp. */
int npu_tdev_run(struct npu_tdev *d, const struct npu_tprog *p,
		 const struct npu_tdev_submit *opt,
		 struct npu_hw_completion *comp);
/*
 * Put a ready descriptor in the queue's ring, with the queue's fence slot
 * (cleared), and ring the doorbell; nothing runs yet.  Returns the fence.
 */
struct npu_hw_completion *npu_tdev_queue(struct npu_tdev *d, unsigned queue,
					 struct npu_hw_task *desc);
/* Raw variant: queue a ready descriptor and run it (bad-descriptor tests). */
int npu_tdev_run_desc(struct npu_tdev *d, unsigned queue,
		      struct npu_hw_task *desc, struct npu_hw_completion *comp);

/* HBSM of logical-equals-physical cluster c, TPB t. */
uint8_t *npu_tdev_hbsm(struct npu_tdev *d, unsigned cluster, unsigned tpb);

#endif /* NPU_TDEV_H */
