/* SPDX-License-Identifier: MIT */
/*
 * Tiles: the unit of work a lowering hands the scheduler.  A tile brings
 * its inputs into one TPB's HBSM by DMA, runs up to NPU_TILE_MAX_OPS unit
 * instructions there and writes its results back to DDR through a GSDU
 * chain.  Building them (npu_tile.c): walkers, HBSM pitches, write-backs.
 * Writing them as instructions for a worker the scheduler chose
 * (npu_emit.c): the counters, the shared DMAs, the emission.
 */
#ifndef NPU_TILE_H
#define NPU_TILE_H

#include "compile/npu_pb.h"
#include "ir/npu_ir.h"

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
	/*
	 * GSDU descriptors HBSM -> DDR (dst = offset in out_seg[i]); or, for
	 * an indexed gather or scatter (npu_tile_gather, npu_tile_scatter),
	 * DDR -> DDR with the source in segment out_src_seg[i] (NPU_NO_SEG:
	 * the source is this tile's HBSM).
	 */
	struct npu_hw_gsdu_desc *out;
	uint32_t *out_seg, *out_src_seg;
	uint32_t nout, cap_out;
};

/* Add a write-back of @rows x @row_bytes from HBSM to (seg, off). */
npu_status npu_tile_out(struct npu_tile *t, uint32_t hbsm, uint32_t rows,
			uint32_t row_bytes, int32_t src_stride, uint32_t seg,
			uint64_t off, int32_t dst_stride);
/*
 * Add an indexed gather from DDR to DDR: @rows rows of @row_bytes, row i
 * read from (@src_seg, @src_off + index[i] * @src_stride) where index[i]
 * is the __u32 at @idx_hbsm + 4i in the tile's HBSM, written at (@seg,
 * @off + i * @row_bytes).  An index >= @limit ends the job
 * (NPU_TASK_INDEX_FAULT) before anything is read with it.
 */
npu_status npu_tile_gather(struct npu_tile *t, uint32_t idx_hbsm, uint32_t rows,
			   uint32_t row_bytes, uint32_t src_seg, uint64_t src_off,
			   int32_t src_stride, uint32_t limit, uint32_t seg, uint64_t off);
/*
 * Add an indexed scatter from DDR to DDR (ISA 1.3, NPU_GSDU_F_DST_INDEXED):
 * @rows rows of @row_bytes, row i read from (@src_seg, @src_off + i *
 * @src_stride) and written at (@seg, @off + index[i] * @dst_stride) where
 * index[i] is the __u32 at @idx_hbsm + 4i in the tile's HBSM.  Every index
 * is checked against @limit before any row is written: one >= it ends the
 * job (NPU_TASK_INDEX_FAULT) with nothing of the descriptor written.
 */
npu_status npu_tile_scatter(struct npu_tile *t, uint32_t idx_hbsm, uint32_t rows,
			    uint32_t row_bytes, uint32_t src_seg, uint64_t src_off,
			    int32_t src_stride, uint32_t limit, uint32_t seg, uint64_t off,
			    int32_t dst_stride);
void npu_tiles_free(struct npu_tile *tiles, unsigned n);

/*
 * The widest column block of an [M][K] x [K][@n] product with constant
 * weights, given @mtiles row blocks of at most @rows rows each and @cols
 * the widest block the HBSM takes: a multiple of 16.  Fewer row blocks
 * than @workers: the columns are spread so every worker gets a block.
 * Few rows per block (decode's one, a short prefill), the product streams
 * its weights and the blocks are cut finer still, @per_worker blocks per
 * worker: the DMAs keep the DDR port busy while earlier blocks compute,
 * and the last block's compute, which nothing overlaps, is a few percent
 * of the whole.  @per_worker is about the cycles a TPB spends on a weight
 * byte per cycle the DDR port spends on it: 4 for bf16 (the TCU reads 64
 * B per cycle, the port 256), 16 for weights widened on the chip first
 * (int8 or 4-bit: the CVU writes 2 bytes per stored byte or nibble, then
 * the TCU reads them).
 */
uint64_t npu_tile_weight_cols(uint64_t n, uint64_t cols, uint64_t mtiles, uint64_t rows,
			      uint32_t workers, unsigned per_worker);

/*
 * Tile input @ti: an [@r][@c] block of @dtype elements, element (i, j) at
 * byte @base + i * @rs + j * @cs of segment @seg, into HBSM @h as dense
 * rows of @c.  The DMA walks the memory's order; when that is column by
 * column, its destination walk transposes (which costs the DMA nothing).
 */
void npu_tile_block_in(struct npu_tile_in *ti, uint32_t seg, unsigned dtype, uint64_t base,
		       int64_t r, int64_t rs, int64_t c, int64_t cs, uint32_t h);

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

/* ---- code generation (npu_emit.c) ---- */

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

#endif /* NPU_TILE_H */
