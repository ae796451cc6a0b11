/* SPDX-License-Identifier: MIT */
/*
 * The compiler's working state, shared by the lowering passes.
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
	struct npu_pb dma;	/* ... or DDR-to-DDR DMA without sync */
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
	struct npu_home *home;	/* per tensor */
	int nloc;		/* entries of loc and home */
	struct npu_block *blocks;	/* scratch ranges in offset order */
	unsigned nblocks, cap_blocks;
	bool blocks_oom;
	uint8_t *cdata;		/* CONST segment contents so far */
	uint64_t clen, ccap;
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
};

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
 * Once every node is lowered: plan the scratch from the tensors'
 * lifetimes, move every scratch address of the work onto the plan and set
 * cc->scratch_stride (the peak of one batch element).
 */
npu_status npu_scratch_plan(struct npu_cc *cc);

/* ---- tiles (npu_sched.c) ---- */

#define NPU_TILE_MAX_IN		6
#define NPU_TILE_MAX_OPS	7

/*
 * DMA of a DDR walk into an HBSM buffer of the tile's TPB: dense, or
 * (dst_pitch > 0) as rows of dst_row elements, dst_step bytes apart (0:
 * the element size), whose starts are dst_pitch bytes apart.  A row pitch
 * spreads rows over the HBSM banks; a step with a pitch of one element
 * transposes, so the units then walk the buffer densely (no bank
 * conflicts, cycle-model.md).
 */
struct npu_tile_in {
	uint32_t seg;
	struct npu_hw_twu walk;	/* space DDR; base = offset in seg */
	uint32_t hbsm;		/* destination offset */
	uint32_t dst_row, dst_step, dst_pitch;
};

struct npu_tile {
	struct npu_tile_in in[NPU_TILE_MAX_IN];
	unsigned nin;
	/* Unit instructions on HBSM; masks and sync are filled in. */
	struct npu_hw_insn op[NPU_TILE_MAX_OPS];
	unsigned nop;
	/* GSDU descriptors HBSM -> DDR (dst = offset in dst_seg[i]). */
	struct npu_hw_gsdu_desc *out;
	uint32_t *out_seg;
	uint32_t nout, cap_out;
};

/* Add a write-back of @rows x @row_bytes from HBSM to (seg, off). */
npu_status npu_tile_out(struct npu_tile *t, uint32_t hbsm, uint32_t rows,
			uint32_t row_bytes, int32_t src_stride, uint32_t seg,
			uint64_t off, int32_t dst_stride);
void npu_tiles_free(struct npu_tile *tiles, unsigned n);
/*
 * Hand the tiles of one node to the scheduler as a work item.  The
 * scheduler takes each tile's write-back list (the caller still frees
 * @tiles, whose out lists are then empty).
 */
npu_status npu_sched_emit(struct npu_cc *cc, struct npu_tile *tiles, unsigned n);
/* Hand DDR-to-DDR DMA instructions over as a work item (takes @pb). */
npu_status npu_sched_dma(struct npu_cc *cc, struct npu_pb *pb);
/* Emit every work item as programs: steps, or one pipelined program. */
npu_status npu_sched_finish(struct npu_cc *cc);
void npu_sched_free(struct npu_cc *cc);

/* TPB counters of the tile schedule (npu_sched.c). */
#define NPU_CTR_DMA	0	/* DMA arrivals at this TPB, HBSM half 0 */
#define NPU_CTR_OPS	1	/* unit instructions finished on this TPB */
#define NPU_CTR_WB	2	/* write-backs finished by the TPBs it works with */
#define NPU_CTR_DMA_ODD	3	/* DMA arrivals at this TPB, HBSM half 1 */
/* More HBSM buffers (pipelined, inputs in flight): buffer b >= 2 on 2 + b. */
#define NPU_CTR_DMA_MORE	4
#define NPU_MAX_BUFS	8	/* HBSM buffers a schedule may rotate through */

/*
 * How a tile input of the current round is brought in (npu_emit_round):
 * by its own DMA, by a DMA that also delivers it to other TPBs of the
 * round that need the same bytes at the same place (the leader, with the
 * masks), or by such a DMA of an earlier tile (shared).
 */
struct npu_emit_share {
	uint8_t role;		/* NPU_SHARE_* */
	uint8_t tpb_mask;
	uint16_t cluster_mask;
};
enum { NPU_SHARE_OWN, NPU_SHARE_LEAD, NPU_SHARE_SHARED };

/* Tile emission shared by both schedulers (npu_sched.c). */
struct npu_emit {
	struct npu_pb *pb;
	uint32_t *dma;		/* per worker x HBSM buffer: arrivals so far */
	uint32_t *ops;		/* per worker: TPB counter value so far */
	uint32_t engine;	/* next DMA engine */
	struct npu_emit_share *share;	/* the round's tiles x NPU_TILE_MAX_IN */
	unsigned cap_share;
};
/*
 * Before a round of @n tiles, tile i on (@c[i], @tpb[i]): find the inputs
 * several of its tiles share, to bring each in once per group of TPBs
 * (a DMA names many destination TPBs: DDR is read and link-crossed once).
 */
npu_status npu_emit_round(struct npu_emit *e, const struct npu_tile *tiles, unsigned n,
			  const uint32_t *c, const uint32_t *tpb);
/*
 * Emit tile @t on worker (@c, @tpb) = index @w in HBSM half @half.  DMAs
 * wait for CCB counter @wait_ctr >= @wait_val when @wait_val > 0 (and
 * @wait2_ctr >= @wait2_val likewise); the write-back signals CCB counter
 * @done_ctr.  @shift_seg/@shift: DDR offsets in that segment move by it
 * (both twice: scratch, I/O); NPU_NO_SEG for none.
 */
struct npu_emit_tile {
	uint32_t w, c, tpb, half;
	uint32_t buf;		/* which HBSM buffer (half: its byte offset) */
	uint32_t slot;		/* the tile's index in its round (npu_emit_round) */
	unsigned wait_ctr, wait2_ctr, done_ctr;
	uint32_t wait_val, wait2_val;
	/*
	 * The write-back also counts on TPB counter NPU_CTR_WB of every TPB in
	 * wb_clusters x wb_tpbs (the TPBs sharing the CCB counter), and waits
	 * until that count is >= wb_wait: write-backs then finish round by
	 * round, which makes the CCB counts that DMAs wait for exact.
	 */
	uint16_t wb_clusters;
	uint8_t wb_tpbs;
	uint32_t wb_wait;
	uint32_t shift_seg[2];
	uint64_t shift[2];
	/*
	 * Inputs in segment @const_seg (weights: nothing writes them) wait
	 * only for wait_ctr >= @const_wait (their HBSM half is free), not for
	 * the data the others wait for, when the tile also has other inputs:
	 * they load while the previous work item still computes.
	 * NPU_NO_SEG: every input waits alike.
	 */
	uint32_t const_seg;
	uint32_t const_wait;
};
npu_status npu_emit_tile(struct npu_emit *e, const struct npu_tile *t,
			 const struct npu_emit_tile *how);

/* The pipelined schedule of every work item for cc->batch inputs. */
npu_status npu_pipe_emit(struct npu_cc *cc);
/* Estimated FLOPs of IR node @node (for stage balancing). */
double npu_node_flops(const npu_ir_graph *g, int node);

/* A dense walker of @n elements of @dtype at @base. */
void npu_twu_flat(struct npu_hw_twu *w, unsigned space, unsigned dtype,
		  uint64_t base, uint64_t n);
/* Walker level @l: @count elements @stride bytes apart. */
void npu_twu_lvl(struct npu_hw_twu *w, unsigned l, int64_t count, int64_t stride);

/*
 * The HBSM pitch for rows of @bytes that a unit walks across (row to row
 * at each step): an odd number of 32-byte bank blocks, so 32 consecutive
 * rows start in 32 different banks (cycle-model.md, bank conflicts).
 * Rows shorter than a block share blocks anyway and stay dense.
 */
uint32_t npu_hbsm_pitch(uint64_t bytes);

/* Elements a walker produces (all levels). */
uint64_t npu_twu_count(const struct npu_hw_twu *w);

/* IR dtype -> hardware dtype (0 if the NPU has none); its size. */
unsigned npu_cc_hw_dtype(npu_dtype t);
unsigned npu_cc_hw_size(unsigned hw_dtype);

/* ---- lowering (lower_*.c) ---- */

/* A node's lowering, as the operator registry gives it (npu_op_lowering(), npu_ops.h). */
typedef npu_status (*npu_lower_fn)(struct npu_cc *cc, const npu_ir_node *n);

npu_status npu_lower_eltwise(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_alias(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_matmul(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_conv(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_pool(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_softmax(struct npu_cc *cc, const npu_ir_node *n);

/*
 * The fusion pass (npu_fuse.c, fuse_conv.c), after the rewrites: folds and
 * fuses nodes, and decides which nodes run inside another's tiles, for
 * tiles of at most @hbsm bytes.  Its choices are node attributes; the
 * lowerings follow them and decide nothing themselves.
 */
npu_status npu_fuse(npu_ir_graph *g, uint32_t hbsm);
/* The convolution pairing and elision decisions (fuse_conv.c). */
npu_status npu_fuse_conv(npu_ir_graph *g, uint32_t hbsm);
/* The fused activation of @n (from npu_fuse) into TCU output-stage params. */
npu_status npu_cc_act(const npu_ir_node *n, struct npu_hw_tcu_params *p);

/* Lowered inside the tiles of the node that reads its output: skip it. */
#define NPU_ATTR_FUSED		"npu_fused"
/* A pointwise Conv that also runs its depthwise producer (marked FUSED). */
#define NPU_ATTR_PAIR		"npu_pair"
/*
 * On a pair: its residual is rebuilt in the tile from the depthwise input,
 * pooled with this window and stride (1: the input itself).
 */
#define NPU_ATTR_RES_POOL	"npu_res_pool"

/*
 * Before lowering: which Concat inputs live in their slice of the output
 * (cc->home[].slice_of), so their producers write them in place
 * (lower_move.c).
 */
npu_status npu_cc_concat_slices(struct npu_cc *cc);

/* Copy tensor @src's bytes to tensor @dst's home by DMA (a step). */
npu_status npu_cc_copy(struct npu_cc *cc, int src, int dst);

#endif /* NPU_CC_H */
