/* SPDX-License-Identifier: MIT */
/*
 * Internal interface between the task engine (npu_task.h), the walker
 * layer (npu_walk.c) and the functional units (npu_unit_*.c).
 *
 * A unit implements two callbacks per opcode:
 *  validate - called for every instruction before the task starts; checks
 *             dtypes, shapes and parameters and returns 0 or an
 *             enum npu_hw_insn_error.  It may fill di->priv.
 *  exec     - runs one iteration; reads operands through npu_opnd_*,
 *             writes results, and accounts its cost in it->cost.
 *             Returns an enum npu_hw_task_status (NPU_TASK_OK normally).
 */
#ifndef NPU_EXEC_H
#define NPU_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npu/npu_hw.h"

struct npu_task;
struct npu_tpb_state;
struct npu_mmu_tlb;

/* A decoded Tensor Walker: levels[0] innermost. */
struct npu_walk {
	uint64_t base;
	/* As the instruction gives them (32-bit), widened where used. */
	int32_t initial[NPU_TWU_MAX_LEVELS];
	int32_t step[NPU_TWU_MAX_LEVELS];	/* 0 for broadcast levels */
	uint32_t count[NPU_TWU_MAX_LEVELS];
	uint16_t cluster_mask;
	uint8_t tpb_mask;
	uint8_t space;		/* enum npu_hw_space */
	uint8_t dtype;
	uint8_t esz;		/* element size in bytes */
	uint8_t nlevels;
};

/*
 * One operand of one iteration: the semantic levels of a walker with the
 * repeat-level offset folded into base.  dims[0] is innermost; strides
 * are in bytes.
 */
struct npu_view {
	uint64_t base;		/* first element's address in its space */
	unsigned space, dtype, esz;
	unsigned ndims;
	uint32_t dims[NPU_TWU_MAX_LEVELS];
	int64_t strides[NPU_TWU_MAX_LEVELS];
	uint16_t cluster_mask;
	uint8_t tpb_mask;
};

/*
 * Largest semantic view of one operand in one iteration (elements): bounds
 * the scratch memory of an iteration and keeps every GEMM dimension well
 * inside the kernels' int parameters.  The engine rejects larger walkers
 * (NPU_IE_WALKER) before any unit validates.
 */
#define NPU_VIEW_MAX_ELEMS (1ull << 24)

/* A transfer between mesh nodes, for the NoC part of the cycle model. */
/*
 * Where a transfer goes: over the mesh from src_node to dst_node, or over
 * one of the CCB's own paths (seed 000), which do not touch the mesh: the
 * DDR port every DDR byte crosses (DMA and GSDU, read or write), and the
 * DMA engines' broadcast path into TPB HBSMs (the DRB), which carries one
 * copy of the data however many TPBs receive it.
 */
enum npu_xfer_path {
	NPU_PATH_MESH = 0,
	NPU_PATH_DDR_PORT,
	NPU_PATH_DRB,
	NPU_PATHS
};

struct npu_xfer {
	uint8_t path;			/* enum npu_xfer_path */
	uint8_t src_node, dst_node;	/* NPU_PATH_MESH only */
	uint64_t bytes;
};

#define NPU_COST_MAX_XFERS 32

/* What one iteration cost; the engine turns this into time. */
struct npu_cost {
	uint64_t cycles;		/* unit-local cycles, conflict stalls included */
	uint64_t conflicts;		/* HBSM bank conflicts (count, for perf) */
	uint64_t dma_bytes;		/* CCB DMA engine bytes */
	uint64_t gsdu_bytes;
	/*
	 * The work the iteration did, for the host floor of make bench
	 * (Documentation/benchmarks.md): bytes its operands read and wrote
	 * (every unit's, DMA and GSDU included; a broadcast store once per
	 * destination) and the TCU's multiply-accumulates by input kind.
	 * Counts only: the cycle model never reads them.
	 */
	uint64_t load_bytes, store_bytes;
	uint64_t macs_float, macs_int8;	/* bf16/fp16 inputs; int8/uint8 */
	unsigned nxfers;
	/* Last: the engine clears the fields above before each iteration,
	 * and only xfer[0, nxfers) is ever read. */
	struct npu_xfer xfer[NPU_COST_MAX_XFERS];
};

/*
 * The part of a recorded iteration's cost that its unit's cost function
 * computed alone, from the instruction and the iteration index only
 * (TCU, CVU, DTDU: cycles from the operands' shapes, the HBSM bank
 * conflicts of their access patterns, MACs).  A replay (npu_replay.c)
 * hands it to the iteration it replays, whose cost function then adds it
 * instead of building every operand's view and its conflicts again: the
 * same numbers, as nothing else adds to these four for those units.
 * Bytes and transfers are still counted as they happen, and the replay
 * compares the whole cost with the record as before.
 */
struct npu_cost_known {
	uint64_t cycles, conflicts, macs_float, macs_int8;
};

/*
 * The bits of a cluster or TPB mask below @n (the task's clusters, a
 * cluster's TPBs), for loops that take them lowest first with ctz: a
 * loop over all 14 x 4 TPBs testing each bit cost ~140 instructions for
 * a transfer to one TPB, the usual destination of a decode step's DMAs.
 */
static inline uint32_t npu_mask_below(uint32_t mask, unsigned n)
{
	return n >= 32 ? mask : mask & ((1u << n) - 1);
}

/* Count @bytes read / written by an operand of the iteration (no cost: no count). */
static inline void npu_cost_load(struct npu_cost *cost, uint64_t bytes)
{
	if (cost)
		cost->load_bytes += bytes;
}

static inline void npu_cost_store(struct npu_cost *cost, uint64_t bytes)
{
	if (cost)
		cost->store_bytes += bytes;
}

/* A decoded instruction. */
struct npu_dinsn {
	struct npu_hw_insn raw;
	uint32_t index;			/* position in the program */
	unsigned nrep;			/* repeat levels */
	uint32_t rep_count[NPU_MAX_REPEAT_LEVELS];	/* [0] innermost */
	uint64_t iters;			/* product of rep_count */
	struct npu_walk opnd[NPU_OPNDS];
	bool used[NPU_OPNDS];
	uint64_t work;			/* elements touched per iteration (threading) */
	uint64_t priv[8];		/* unit scratch filled by validate */
	const struct npu_unit_ops *ops;	/* its unit's, found when decoded */
};

/*
 * Scratch blocks one thread of a task keeps from one iteration to the
 * next (an iteration's loads and results are the same sizes every time),
 * instead of a malloc and free each.  Blocks above NPU_SCRATCH_KEEP_MAX
 * bytes are not kept.
 */
#define NPU_SCRATCH_KEEP 8
#define NPU_SCRATCH_KEEP_MAX (4u << 20)

struct npu_scratch_cache {
	void *p[NPU_SCRATCH_KEEP];
	size_t size[NPU_SCRATCH_KEEP];
};

/* Execution context of one iteration. */
struct npu_iteration {
	struct npu_task *task;
	struct npu_tpb_state *tpb;	/* NULL for CCB (DMA) instructions */
	const struct npu_dinsn *di;
	uint64_t iter;
	struct npu_cost *cost;
	/* Replayed: its cost function's recorded part (NULL otherwise). */
	const struct npu_cost_known *known;
	struct npu_mmu_tlb *tlb;	/* engine-owned translation cache */
	/* failure details for the completion record */
	uint64_t fault_addr;
	uint32_t detail, detail2;
	/* scratch allocations released after the iteration */
	void *scratch[32];
	size_t scratch_size[32];
	unsigned nscratch;
	struct npu_scratch_cache *keep;	/* NULL: malloc and free each */
};

/*
 * For a cost function that alone adds the four counts of struct
 * npu_cost_known: add the recorded ones, if the iteration is replayed.
 * False: not replayed, compute them.
 */
static inline bool npu_cost_take_known(struct npu_iteration *it)
{
	const struct npu_cost_known *k = it->known;

	if (!k)
		return false;
	if (it->cost) {
		it->cost->cycles += k->cycles;
		it->cost->conflicts += k->conflicts;
		it->cost->macs_float += k->macs_float;
		it->cost->macs_int8 += k->macs_int8;
	}
	return true;
}

struct npu_unit_ops {
	int (*validate)(struct npu_task *task, struct npu_dinsn *di);
	int (*exec)(struct npu_iteration *it);
};

/* Per-unit dispatch: returns NULL for an unknown (unit, opcode). */
const struct npu_unit_ops *npu_unit_lookup(unsigned unit, unsigned opcode);
const struct npu_unit_ops *npu_unit_tcu(unsigned opcode);
const struct npu_unit_ops *npu_unit_cvu(unsigned opcode);
const struct npu_unit_ops *npu_unit_dtdu(unsigned opcode);
const struct npu_unit_ops *npu_unit_csu(unsigned opcode);
const struct npu_unit_ops *npu_unit_sync(unsigned opcode);
const struct npu_unit_ops *npu_unit_dma(unsigned opcode);

/* ---- Walkers (npu_walk.c) ---- */

/* Decode and check a walker; 0 or an enum npu_hw_insn_error. */
int npu_walk_decode(const struct npu_hw_twu *twu, struct npu_walk *w);
/* Lowest and highest element start address the walker can produce. */
void npu_walk_bounds(const struct npu_walk *w, uint64_t *lo, uint64_t *hi);
/* Number of elements over levels [0, nlevels). */
uint64_t npu_walk_elems(const struct npu_walk *w, unsigned nlevels);

/* Semantic view of operand o of the context's current iteration. */
void npu_opnd_view(const struct npu_iteration *it, unsigned o,
		   struct npu_view *v);
/* Element count of a view. */
uint64_t npu_view_elems(const struct npu_view *v);
/* True if the view is densely packed row-major (dims[0] innermost). */
bool npu_view_dense(const struct npu_view *v);
/* Lowest and one-past-highest byte a view touches (HBSM/SRAM addresses,
 * which validation bounded well inside int64): for overlap checks. */
void npu_view_span(const struct npu_view *v, int64_t *lo, int64_t *hi);

/*
 * Read a view into a dense buffer of its own dtype (allocated in the
 * context scratch, or pointing straight into local HBSM/SRAM, or into
 * DDR the host maps (npu_ddr_map), when the view is dense).  Returns
 * NULL and sets *status on MMU fault/OOM.
 */
const void *npu_view_load(struct npu_iteration *it, const struct npu_view *v,
			  int *status);
/* The same, converted to fp32 (always a scratch copy). */
float *npu_view_load_f32(struct npu_iteration *it, const struct npu_view *v,
			 int *status);
/* Write a dense buffer of the view's dtype through the view (every
 * destination of a remote broadcast). Returns a task status. */
int npu_view_store(struct npu_iteration *it, const struct npu_view *v,
		   const void *data);
/*
 * Copy view @s into view @d (the same number of elements of the same
 * size) without the dense buffer npu_view_load and npu_view_store would
 * pass the data through, where that changes nothing: @s in DDR or SRAM
 * and @d in another space, both two levels once flattened, of the same
 * counts, @s's rows contiguous, @d's rows contiguous or its columns
 * (then with no element repeated); DDR mapped by the host.  false when
 * not so (nothing done: load and store instead); true when done, with
 * *status what the store would have returned.
 */
bool npu_view_copy(struct npu_iteration *it, const struct npu_view *s,
		   const struct npu_view *d, int *status);
/* Convert dense fp32 values to the view's dtype (round_mode for ints)
 * and store them. */
int npu_view_store_f32(struct npu_iteration *it, const struct npu_view *v,
		       const float *data, unsigned round_mode);
/* Scratch memory owned by the context, freed after the iteration. */
void *npu_iter_alloc(struct npu_iteration *it, size_t bytes);
/* End of the iteration: its scratch goes back to it->keep or is freed. */
void npu_iter_release(struct npu_iteration *it);
/* Free the blocks a cache kept. */
void npu_scratch_cache_free(struct npu_scratch_cache *keep);

/* Shorthand: operand o of the current iteration, loaded. */
const void *npu_opnd_load(struct npu_iteration *it, unsigned o, int *status);
float *npu_opnd_load_f32(struct npu_iteration *it, unsigned o, int *status);

/* ---- Cycle-model helpers (npu_cycles.c) ---- */
/* Bank conflicts of a view's 32-byte accesses (seed 000 HBSM). */
uint64_t npu_cycles_hbsm_conflicts(const struct npu_view *v, unsigned banks,
				   unsigned bank_bytes);
/* Mesh node of a logical cluster / of the CCB and the DDR port. */
unsigned npu_task_cluster_node(const struct npu_task *task, unsigned lcluster);
unsigned npu_task_ccb_node(const struct npu_task *task);
unsigned npu_task_ddr_node(const struct npu_task *task);
/* Record a NoC transfer in the iteration cost. */
void npu_cost_xfer(struct npu_cost *cost, unsigned src_node,
		   unsigned dst_node, uint64_t bytes);
/* Record @bytes over the CCB path @path (not NPU_PATH_MESH). */
void npu_cost_path(struct npu_cost *cost, enum npu_xfer_path path, uint64_t bytes);
/* Logical cluster / TPB index of the executing TPB. */
unsigned npu_iter_lcluster(const struct npu_iteration *it);
unsigned npu_iter_tpb_index(const struct npu_iteration *it);
/* Local HBSM of the executing TPB, and the task's geometry. */
uint8_t *npu_iter_hbsm(const struct npu_iteration *it);
uint32_t npu_task_hbsm_size(const struct npu_task *task);
unsigned npu_task_nclusters(const struct npu_task *task);
/* The task's simulated-cycle budget. */
uint64_t npu_task_timeout(const struct npu_task *task);
unsigned npu_task_tpbs(const struct npu_task *task);

/*
 * Host pointer to @len bytes at @addr of an on-chip space, bounds-checked
 * as npu_space_read does (NULL with *status and the fault set when out of
 * range); NULL with *status 0 for DDR, which has none.
 */
const uint8_t *npu_space_at(struct npu_iteration *it, unsigned space,
			    unsigned lcluster, unsigned tpb, uint64_t addr,
			    size_t len, int *status);
/*
 * Host pointer to @len bytes at device VA @va in DDR, read (and, if
 * @write, written) in place until the iteration ends; NULL when the host
 * gives none or a page would fault, with nothing recorded: the caller
 * then goes through npu_space_read/write or a view, which report faults.
 */
uint8_t *npu_ddr_map(struct npu_iteration *it, uint64_t va, size_t len,
		     bool write);
/* Raw byte access to any space (GSDU chains): 0 or a task status. */
int npu_space_read(struct npu_iteration *it, unsigned space,
		   unsigned lcluster, unsigned tpb, uint64_t addr,
		   void *buf, size_t len);
int npu_space_write(struct npu_iteration *it, unsigned space,
		    unsigned lcluster, unsigned tpb, uint64_t addr,
		    const void *buf, size_t len);

/* ---- Shared unit helpers (npu_unit_util.c) ---- */

/* Semantic (non-repeat) shape of an operand; all zero for an unused slot. */
struct npu_shape {
	unsigned nd;
	uint32_t d[NPU_TWU_MAX_LEVELS];
	uint64_t elems;		/* saturates at UINT64_MAX */
};

/* True if all n bytes at p are zero. */
bool npu_all_zero(const void *p, size_t n);
/* True if operand slot o is unused and its raw walker entirely zero. */
bool npu_opnd_slot_clear(const struct npu_dinsn *di, unsigned o);
/* Fill s with the semantic shape of operand o (zeroed if o is unused). */
void npu_opnd_shape(const struct npu_dinsn *di, unsigned o,
		    struct npu_shape *s);
/* True if a and b have the same rank and dims. */
bool npu_shape_equal(const struct npu_shape *a, const struct npu_shape *b);
/* Value range of an integer dtype; false (and 0, 0) for float types. */
bool npu_dtype_int_range(unsigned dt, int32_t *lo, int32_t *hi);
/* sat(round(v) + zp) into [lo, hi], exact even where round(v) leaves int32. */
int32_t npu_requant(float v, unsigned round, int32_t zp, int32_t lo,
		    int32_t hi);

#endif /* NPU_EXEC_H */
