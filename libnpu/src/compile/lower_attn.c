// SPDX-License-Identifier: MIT
/*
 * Fused attention (the block fuse_attn.c found): one tile per (batch,
 * head, block of query rows), all in one TPB's HBSM.
 *
 *   DMA in   Q rows [rows][D], K as [D][Sk] (K^T), V [Sk][Dv], the mask
 *            rows [1 or rows][Sk], all fp32, each through its walker view
 *            (npu_view.h): the Transposes, Reshapes, Split and GQA repeat
 *            the exporter put around them cost no step of their own.  A
 *            view whose inner axis is not the contiguous one is read in
 *            memory order and transposed by the DMA's destination walk.
 *   CVU      Q, K, V to bf16 in one pass (they lie back to back).
 *   TCU      S = Q K^T in fp32, the scale in its output stage.
 *   CVU      S += mask (a broadcast row, or a row per query).
 *   CVU      P = softmax(S) over the keys in fp32, written as bf16.
 *   TCU      Y = P V in fp32.
 *   GSDU     Y rows to their place in the output's view (the heads merged
 *            by the layout nodes after the block).
 *
 * The scores never leave HBSM.  Numerically this is the unfused path
 * (bf16 products, fp32 accumulation and softmax), bit for bit.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_lower.h"
#include "compile/npu_view.h"

static uint32_t al64(uint64_t x)
{
	return (uint32_t)((x + 63) & ~63ull);
}

static uint32_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

/*
 * Tile input: an [r][c] fp32 block, element (i, j) at element @base + i * @rs
 * + j * @cs of the tensor at @l, into HBSM @h as dense rows of @c.  The DMA
 * walks the memory's order; when that is column by column its destination
 * walk transposes.
 */
static void block_in(struct npu_tile_in *ti, const struct npu_loc *l, int64_t base, int64_t r,
		     int64_t rs, int64_t c, int64_t cs, uint32_t h)
{
	memset(ti, 0, sizeof(*ti));
	ti->seg = l->seg;
	ti->hbsm = h;
	ti->walk.space = NPU_SPACE_DDR;
	ti->walk.dtype = NPU_DT_FP32;
	ti->walk.base = l->off + (uint64_t)base * 4;
	if (r == 1 || c == 1 || llabs(cs) <= llabs(rs)) {
		npu_twu_lvl(&ti->walk, 0, c, cs * 4);
		npu_twu_lvl(&ti->walk, 1, r, rs * 4);
	} else {
		npu_twu_lvl(&ti->walk, 0, r, rs * 4);
		npu_twu_lvl(&ti->walk, 1, c, cs * 4);
		ti->dst_row = (uint32_t)r;
		ti->dst_step = (uint32_t)(c * 4);
		ti->dst_pitch = 4;
	}
}

/* An HBSM operand of @rows rows of @cols elements of @dt, @pitch bytes apart. */
static void hb2(struct npu_hw_twu *w, unsigned dt, uint32_t base, int64_t cols, int64_t rows,
		int64_t pitch)
{
	unsigned sz = npu_cc_hw_size(dt);

	memset(w, 0, sizeof(*w));
	w->space = NPU_SPACE_HBSM;
	w->dtype = (uint8_t)dt;
	w->base = base;
	npu_twu_lvl(w, 0, cols, sz);
	npu_twu_lvl(w, 1, rows, pitch);
}

npu_status npu_lower_attention(struct npu_cc *cc, const npu_ir_node *n)
{
	bool has_m = n->n_inputs > 3 && n->inputs[3] >= 0;
	struct npu_lview q, k, v, m, o;
	struct npu_loc lq, lk, lv, lm = { NPU_NO_SEG, 0 }, lo;
	int64_t R, Sq, D, Sk, Dv, batch = 1, mq, per_bh;
	struct npu_tile *tiles = NULL;
	unsigned ntiles = 0, cap;
	float scale;
	int mk = 0;
	npu_status st;

	if ((st = npu_attn_view(n, "npu_attn_q", n->inputs[0], &q)) ||
	    (st = npu_attn_view(n, "npu_attn_k", n->inputs[1], &k)) ||
	    (st = npu_attn_view(n, "npu_attn_v", n->inputs[2], &v)) ||
	    (st = npu_attn_view(n, "npu_attn_o", n->outputs[0], &o)) ||
	    (has_m && (st = npu_attn_view(n, "npu_attn_m", n->inputs[3], &m))) ||
	    (st = npu_ir_attr_float(n, "npu_attn_scale", 1.0f, &scale)))
		return st;
	R = q.rank;
	Sq = q.size[R - 2];
	D = q.size[R - 1];
	Sk = k.size[R - 1];
	Dv = v.size[R - 1];
	if (has_m)
		mk = m.stride[R - 2] ? 2 : 1;
	for (int d = 0; d < R - 2; d++)
		batch *= q.size[d];
	mq = (int64_t)npu_attn_rows(cc->hbsm, D, Dv, Sk, mk);
	if (mq < 1)
		return npu_fail(NPU_ERR_INTERNAL, "fused attention does not fit a tile");
	/* Spread the query rows of few heads over the workers. */
	per_bh = (cc->workers + batch - 1) / batch;
	if (per_bh > 1 && (Sq + per_bh - 1) / per_bh < mq)
		mq = (Sq + per_bh - 1) / per_bh;
	if (mq > Sq)
		mq = Sq;
	if ((st = npu_cc_loc(cc, n->inputs[0], &lq)) || (st = npu_cc_loc(cc, n->inputs[1], &lk)) ||
	    (st = npu_cc_loc(cc, n->inputs[2], &lv)) ||
	    (has_m && (st = npu_cc_loc(cc, n->inputs[3], &lm))) ||
	    (st = npu_cc_loc(cc, n->outputs[0], &lo)))
		return st;
	cap = (unsigned)(batch * ((Sq + mq - 1) / mq));
	tiles = calloc(cap, sizeof(*tiles));
	if (!tiles)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t bi = 0; bi < batch && !st; bi++) {
		int64_t idx[NPU_MAX_RANK] = { 0 }, rest = bi;

		for (int d = (int)R - 3; d >= 0; d--) {
			idx[d] = rest % q.size[d];
			rest /= q.size[d];
		}
		for (int64_t m0 = 0; m0 < Sq && !st; m0 += mq) {
			int64_t rows = Sq - m0 < mq ? Sq - m0 : mq, mrows = mk == 2 ? rows : 1;
			uint32_t aq = al64((uint64_t)(rows * D * 4)), ak = al64((uint64_t)(D * Sk * 4));
			uint32_t av = al64((uint64_t)(Sk * Dv * 4)), r32 = aq + ak + av;
			uint32_t h_m = al64(r32 + r32 / 2);
			uint32_t h_s = h_m + (mk ? al64((uint64_t)(mrows * Sk * 4)) : 0);
			uint32_t h_p = h_s + al64((uint64_t)(rows * Sk * 4));
			uint32_t h_o = h_p + al64((uint64_t)(rows * Sk * 2));
			struct npu_tile *t = &tiles[ntiles++];
			struct npu_hw_insn *op = t->op;

			if ((uint64_t)h_o + (uint64_t)(rows * Dv * 4) > cc->hbsm) {
				st = npu_fail(NPU_ERR_INTERNAL, "fused attention tile over budget");
				break;
			}
			idx[R - 2] = m0;
			idx[R - 1] = 0;
			block_in(&t->in[0], &lq, npu_lview_at(&q, idx), rows,
				 q.stride[R - 2], D, q.stride[R - 1], 0);
			if (has_m)
				block_in(&t->in[3], &lm, npu_lview_at(&m, idx),
					 mrows, m.stride[R - 2], Sk, m.stride[R - 1], h_m);
			idx[R - 2] = 0;
			block_in(&t->in[1], &lk, npu_lview_at(&k, idx), D,
				 k.stride[R - 2], Sk, k.stride[R - 1], aq);
			block_in(&t->in[2], &lv, npu_lview_at(&v, idx), Sk,
				 v.stride[R - 2], Dv, v.stride[R - 1], aq + ak);
			t->nin = has_m ? 4 : 3;
			/* Q, K, V to bf16: the bf16 copies lie at r32 in the same order. */
			op->unit = NPU_UNIT_CVU;
			op->opcode = NPU_CVU_UNARY;
			op->params.cvu.fn = NPU_FN_IDENTITY;
			npu_twu_flat(&op->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, NPU_DT_FP32, 0, r32 / 4);
			npu_twu_flat(&op->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_BF16, r32, r32 / 4);
			/* S = Q K^T, scaled. */
			op++;
			op->unit = NPU_UNIT_TCU;
			op->opcode = NPU_TCU_MATMUL;
			hb2(&op->opnd[NPU_OPND_SRC0], NPU_DT_BF16, r32, D, rows, D * 2);
			hb2(&op->opnd[NPU_OPND_SRC1], NPU_DT_BF16, r32 + aq / 2, Sk, D, Sk * 2);
			hb2(&op->opnd[NPU_OPND_DST], NPU_DT_FP32, h_s, Sk, rows, Sk * 4);
			if (scale != 1.0f) {
				op->params.tcu.flags = NPU_TCU_F_SCALE;
				op->params.tcu.out_scale = f32_bits(scale);
			}
			if (has_m) {
				op++;
				op->unit = NPU_UNIT_CVU;
				op->opcode = NPU_CVU_BINARY;
				op->params.cvu.fn = NPU_FN_ADD;
				hb2(&op->opnd[NPU_OPND_SRC0], NPU_DT_FP32, h_s, Sk, rows, Sk * 4);
				hb2(&op->opnd[NPU_OPND_SRC1], NPU_DT_FP32, h_m, Sk, rows,
				    mk == 2 ? Sk * 4 : 0);
				hb2(&op->opnd[NPU_OPND_DST], NPU_DT_FP32, h_s, Sk, rows, Sk * 4);
			}
			op++;
			op->unit = NPU_UNIT_CVU;
			op->opcode = NPU_CVU_SOFTMAX;
			op->params.cvu.reduce_levels = 1;
			hb2(&op->opnd[NPU_OPND_SRC0], NPU_DT_FP32, h_s, Sk, rows, Sk * 4);
			hb2(&op->opnd[NPU_OPND_DST], NPU_DT_BF16, h_p, Sk, rows, Sk * 2);
			/* Y = P V. */
			op++;
			op->unit = NPU_UNIT_TCU;
			op->opcode = NPU_TCU_MATMUL;
			hb2(&op->opnd[NPU_OPND_SRC0], NPU_DT_BF16, h_p, Sk, rows, Sk * 2);
			hb2(&op->opnd[NPU_OPND_SRC1], NPU_DT_BF16, r32 + (aq + ak) / 2, Dv, Sk, Dv * 2);
			hb2(&op->opnd[NPU_OPND_DST], NPU_DT_FP32, h_o, Dv, rows, Dv * 4);
			t->nop = (unsigned)(op - t->op) + 1;
			idx[R - 2] = m0;
			st = npu_tile_out(t, h_o, (uint32_t)rows, (uint32_t)(Dv * 4), (int32_t)(Dv * 4),
					  lo.seg, lo.off + (uint64_t)npu_lview_at(&o, idx) * 4,
					  (int32_t)(o.stride[R - 2] * 4));
		}
	}
	if (!st)
		st = npu_sched_emit(cc, tiles, ntiles);
	npu_tiles_free(tiles, ntiles);
	return st;
}
