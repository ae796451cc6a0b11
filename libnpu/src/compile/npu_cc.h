/* SPDX-License-Identifier: MIT */
/*
 * The compiler's working state (struct npu_cc): where tensors live, the
 * work the lowerings produced, and the entry points of placement and the
 * schedulers.  Tiles and code generation: npu_tile.h; what a lowering
 * gets and the fusion pass decides: npu_lower.h.
 *
 * Every IR tensor gets a home in DDR: constants in the CONST segment,
 * graph inputs and outputs in the IO segment, everything else in SCRATCH,
 * where tensors alive at different times share bytes (npu_scratch.c).
 * A node is lowered to tiles (npu_sched.c): each tile brings its inputs
 * into one TPB's HBSM by DMA, runs one or more unit instructions there and
 * writes its results back to DDR through a GSDU chain.  Lowerings hand
 * their tiles (or DDR-to-DDR DMA) to the scheduler as one work item each;
 * once every node is lowered the scheduler emits them: one program (a
 * step) per work item, run in order on the context's queue, or with a
 * batch one program whose stages are pipelined across the partition
 * (npu_pipe.c).
 */
#ifndef NPU_CC_H
#define NPU_CC_H

#include "ir/npu_ir.h"
#include "model/npu_cmodel.h"
#include "compile/npu_pb.h"

#define NPU_NO_SEG UINT32_MAX

struct npu_loc {
	uint32_t seg;		/* NPU_NO_SEG: not placed yet */
	uint64_t off;
};

/*
 * Where a tensor's bytes live while the nodes are lowered, and when it is
 * used (npu_scratch.c).  Scratch homes are first handed out as ranges of
 * their own (blocks); once every node is lowered the memory plan moves
 * the blocks so that tensors alive at different times share bytes.
 */
struct npu_home {
	int slice_of;		/* a Concat input living in its output: that tensor, or -1 */
	uint64_t slice_off;	/* ... at this byte offset */
	int first, last;	/* nodes (index + 1, 0 before the first) that asked for it */
};

/* A range of the scratch handed out while lowering. */
struct npu_block {
	uint64_t off, size;	/* before the plan moves it */
	int owner;		/* the tensor it was made for; -1: lives the whole run */
};

struct npu_tile;

/* One node's lowered work, kept until every node is lowered. */
struct npu_work {
	int node;		/* IR node, -1 for copies the compiler added */
	struct npu_tile *tiles;	/* TPB work ... */
	unsigned ntiles;
	struct npu_pb dma;	/* ... or DDR-to-DDR DMA without sync ... */
	struct npu_host_step *host;	/* ... or a host step (CPU fallback, lower_host.c) */
};

/*
 * One element of the lowering order with control flow (npu_control.c):
 * node @node (>= 0), or (-1) a control step of kind @ctl for the If whose
 * Where is node @w, reading bool tensor @cond (-1: none) and going to
 * element @target.
 */
struct npu_cc_seq {
	int node;
	uint32_t ctl;		/* enum npu_ctl_kind */
	int cond;
	int w;
	unsigned target;
};

struct npu_cc {
	npu_ir_graph *g;
	struct npu_cmodel *cm;
	uint32_t nclusters, tpbs, workers;
	/*
	 * How many workers one node's tiles should be spread over: all of
	 * them layer by layer; with pipelined stages about a stage's share,
	 * since more, smaller tiles then only re-read halos and weights.
	 */
	uint32_t spread;
	uint32_t hbsm;		/* HBSM bytes one tile may use (half of it) */
	uint32_t seg_const, seg_scratch, seg_io;
	struct npu_loc *loc;	/* per tensor */
	/* Tensors of run-time size by run-time shape slot (npu_cc_dyn()). */
	int *dyn_ids;
	uint32_t ndyn;
	struct npu_home *home;	/* per tensor */
	int nloc;		/* entries of loc and home */
	struct npu_block *blocks;	/* scratch ranges in offset order */
	unsigned nblocks, cap_blocks;
	bool blocks_oom;
	uint8_t *cdata;		/* CONST segment contents so far */
	uint64_t clen, ccap;
	/*
	 * MatMul's constant B operands already placed as bf16
	 * (lower_matmul.c): the time steps of an unrolled recurrence
	 * (rewrite_rnn.c) share one R^T instead of a copy per step.
	 */
	struct npu_cc_bconst {
		const void *src;	/* the IR tensor's data */
		int64_t K, N;
		int64_t tile;		/* columns per block (lower_matmul.c) */
		bool trans;
		uint64_t off;
	} *bconst;
	unsigned nbconst;
	uint64_t scratch_len, io_len;	/* scratch_len: the blocks, before the plan */
	unsigned batch;		/* inputs per run; > 1: pipelined stages */
	uint64_t scratch_stride, io_stride;	/* per batch element (the planned scratch) */
	unsigned stages;		/* pipelined stages wanted, 0: as many as fit */
	unsigned inflight;	/* inputs in flight per stage (0: one) */
	unsigned nbufs;		/* HBSM buffers tiles rotate through (2 or 4) */
	const double *step_cycles;	/* per work item, layer by layer; or NULL */
	unsigned nstep_cycles;
	int cur_node;		/* the node being lowered */
	struct npu_work *work;
	unsigned nwork, cap_work;
	/* The lowering order with control steps (run-time If); NULL: node order. */
	struct npu_cc_seq *seq;
	unsigned nseq;
	/* A Loop that never stops fails after this many iterations (0: the default). */
	uint32_t max_loop_iterations;
};

/* ---- host-side control flow (npu_control.c, issue 17) ---- */

/*
 * After fusion, layer by layer: lay out each run-time If (a Where marked
 * NPU_ATTR_IF_WHERE) as two step ranges, reordering the nodes, into
 * cc->seq (left NULL when there is none).
 */
npu_status npu_control_layout(struct npu_cc *cc);
/* The control step of element @e as a work item of the current node. */
npu_status npu_control_step(struct npu_cc *cc, const struct npu_cc_seq *e);
/* Control work items' targets from elements to work items (@seq_work: per element). */
void npu_control_targets(struct npu_cc *cc, const unsigned *seq_work);

/* ---- placement (npu_cc.c) ---- */

/* Place a constant blob in CONST; returns its offset or sets *st. */
uint64_t npu_cc_const(struct npu_cc *cc, const void *data, uint64_t bytes,
		      npu_status *st);
/*
 * Reserve @bytes of scratch (64-aligned) that no tensor owns: the plan
 * keeps it for the whole run.
 */
uint64_t npu_cc_scratch(struct npu_cc *cc, uint64_t bytes);
/*
 * The DDR home of tensor @t, placing scratch tensors on first use.  A
 * lowering asks for every tensor its work reads or writes while it is
 * lowered (the memory plan's lifetimes come from these calls; the plan
 * checks every scratch address of the work against them).
 */
npu_status npu_cc_loc(struct npu_cc *cc, int t, struct npu_loc *out);
/*
 * Tensor @t's run-time shape (issue 17): *@dyn 0 for a static tensor,
 * else its slot + 1 (npu_host_tensor.dyn, npu_io.dyn), given on first use.
 */
npu_status npu_cc_dyn(struct npu_cc *cc, int t, uint32_t *dyn);
/* Tensor @t has a home of its own (I/O, constant, a Concat slice) or will. */
bool npu_cc_has_home(const struct npu_cc *cc, int t);
/* Grow the per-tensor arrays to the graph's tensors (after adding some). */
npu_status npu_cc_grow(struct npu_cc *cc);

/* ---- the scratch memory plan (npu_scratch.c) ---- */

/*
 * A new scratch block of @bytes for tensor @owner (-1: none); its offset.
 * Out of memory sets cc->blocks_oom (npu_cc_loc and the plan fail then).
 */
uint64_t npu_scratch_block(struct npu_cc *cc, uint64_t bytes, int owner);
/* Tensor @t is used by the node being lowered. */
void npu_scratch_touch(struct npu_cc *cc, int t);
/*
 * Every tensor asked for before node @from and again after it lives until
 * the node being lowered (a Loop's end: what its body reads from before
 * the loop is read again by the next iteration).
 */
void npu_scratch_keep(struct npu_cc *cc, int from);
/*
 * Once every node is lowered: plan the scratch from the tensors'
 * lifetimes, move every scratch address of the work onto the plan and set
 * cc->scratch_stride (the peak of one batch element).
 */
npu_status npu_scratch_plan(struct npu_cc *cc);

/* ---- the schedulers (npu_sched.c, npu_pipe.c) ---- */

/*
 * Hand the tiles (npu_tile.h) of one node to the scheduler as a work
 * item.  The scheduler takes each tile's write-back list (the caller
 * still frees @tiles, whose out lists are then empty).
 */
npu_status npu_sched_emit(struct npu_cc *cc, struct npu_tile *tiles, unsigned n);
/* Hand DDR-to-DDR DMA instructions over as a work item (takes @pb). */
npu_status npu_sched_dma(struct npu_cc *cc, struct npu_pb *pb);
/* A host step for the current node (the CPU fallback); takes @h, freeing it on failure. */
npu_status npu_sched_host(struct npu_cc *cc, struct npu_host_step *h);
/* Emit every work item as programs: steps, or one pipelined program. */
npu_status npu_sched_finish(struct npu_cc *cc);
void npu_sched_free(struct npu_cc *cc);

/* The pipelined schedule of every work item for cc->batch inputs. */
npu_status npu_pipe_emit(struct npu_cc *cc);
/* Estimated FLOPs of IR node @node (for stage balancing). */
double npu_node_flops(const npu_ir_graph *g, int node);

/* IR dtype -> hardware dtype (0 if the NPU has none); its size. */
unsigned npu_cc_hw_dtype(npu_dtype t);
unsigned npu_cc_hw_size(unsigned hw_dtype);

/* Copy tensor @src's bytes to tensor @dst's home by DMA (a step). */
npu_status npu_cc_copy(struct npu_cc *cc, int src, int dst);
/*
 * DMA instructions into @pb (lower_move.c) moving @blocks blocks of
 * @elems elements of @esize bytes (@hw: their hardware dtype, 0: bytes):
 * block k from (@sseg, @soff + k * @sstride) to (@dseg, @doff + k *
 * @dstride), strides in elements.  Nothing when either count is 0.
 */
npu_status npu_dma_blocks(struct npu_pb *pb, unsigned esize, unsigned hw, int64_t elems,
			  int64_t blocks, uint32_t sseg, uint64_t soff, int64_t sstride,
			  uint32_t dseg, uint64_t doff, int64_t dstride);

#endif /* NPU_CC_H */
