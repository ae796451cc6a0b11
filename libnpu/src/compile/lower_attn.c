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
 *
 * When K and V of one head do not fit beside the query rows, the keys are
 * tiled (online softmax, as flash attention; npu_attn_key_block()).  Each
 * tile of a first work item takes one block of keys: S as above, then
 * per query row m = max(S) (CVU REDUCE), P = exp(S - m) as bf16 (CVU
 * BINARY with an EXP stage), l = sum(P) and O = P V (unnormalized); it
 * writes O, m and l to scratch.  A second work item combines the blocks
 * per row: M = max_b m_b, w_b = exp(m_b - M), Y = sum_b w_b O_b /
 * sum_b w_b l_b (seven CVU instructions).  A mask of -inf is clamped to
 * the lowest float first, so a block whose keys are all masked weighs 0
 * instead of giving NaN.  The probabilities are rounded to bf16 before
 * they are summed, so this path is close to the unfused one, not equal.
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

/* Tile input: an [r][c] fp32 block, element (i, j) at element @base + i * @rs + j * @cs. */
static void block_in(struct npu_tile_in *ti, const struct npu_loc *l, int64_t base, int64_t r,
		     int64_t rs, int64_t c, int64_t cs, uint32_t h)
{
	npu_tile_block_in(ti, l->seg, NPU_DT_FP32, l->off + (uint64_t)base * 4, r, rs * 4, c,
			  cs * 4, h);
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


struct attn {
	struct npu_lview q, k, v, m, o;
	struct npu_loc lq, lk, lv, lm, lo;
	int64_t R, Sq, D, Sk, Dv, batch;
	float scale;
	int mk;
};

static void batch_idx(const struct attn *a, int64_t bi, int64_t *idx)
{
	memset(idx, 0, NPU_MAX_RANK * sizeof(*idx));
	for (int d = (int)a->R - 3; d >= 0; d--) {
		idx[d] = bi % a->q.size[d];
		bi /= a->q.size[d];
	}
}

/* CVU @opcode @fn over HBSM operands (set by the caller), zeroed first. */
static struct npu_hw_insn *cvu(struct npu_hw_insn *op, unsigned opcode, unsigned fn)
{
	memset(op, 0, sizeof(*op));
	op->unit = NPU_UNIT_CVU;
	op->opcode = (uint8_t)opcode;
	op->params.cvu.fn = (uint8_t)fn;
	return op;
}

/* An HBSM fp32 operand of up to three levels (count, byte stride). */
static void hb3(struct npu_hw_twu *w, unsigned dt, uint32_t base, int64_t c0, int64_t s0,
		int64_t c1, int64_t s1, int64_t c2, int64_t s2)
{
	memset(w, 0, sizeof(*w));
	w->space = NPU_SPACE_HBSM;
	w->dtype = (uint8_t)dt;
	w->base = base;
	npu_twu_lvl(w, 0, c0, s0);
	if (c1)
		npu_twu_lvl(w, 1, c1, s1);
	if (c2)
		npu_twu_lvl(w, 2, c2, s2);
}

/* First work item of the key tiling: one tile per (batch, head, rows, key block). */
static npu_status key_blocks(struct npu_cc *cc, const struct attn *a, int64_t bk, int64_t nk,
			     uint64_t part)
{
	int64_t mq = (int64_t)npu_attn_rows(cc->hbsm, a->D, a->Dv, bk, a->mk), R = a->R, nq;
	uint64_t po = part, pm = po + (uint64_t)(a->batch * nk * a->Sq * a->Dv) * 4;
	uint64_t pl = pm + (uint64_t)(a->batch * nk * a->Sq) * 4;
	struct npu_tile *tiles;
	unsigned ntiles = 0;
	npu_status st = NPU_OK;

	if (mq > a->Sq)
		mq = a->Sq;
	nq = (a->Sq + mq - 1) / mq;
	tiles = calloc((size_t)(a->batch * nk * nq), sizeof(*tiles));
	if (!tiles)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	/* Tile i: batch element i / (nq nk), query rows (i / nk) % nq, key block i % nk. */
	for (int64_t i = 0; i < a->batch * nq * nk && !st; i++) {
		int64_t bi = i / (nq * nk), m0 = (i / nk) % nq * mq, kb = i % nk;
		int64_t rows = a->Sq - m0 < mq ? a->Sq - m0 : mq, mrows = a->mk == 2 ? rows : 1;
		int64_t k0 = kb * bk, cols = a->Sk - k0 < bk ? a->Sk - k0 : bk, idx[NPU_MAX_RANK];
		uint32_t aq = al64((uint64_t)(rows * a->D * 4)), ak = al64((uint64_t)(a->D * cols * 4));
		uint32_t av = al64((uint64_t)(cols * a->Dv * 4)), r32 = aq + ak + av;
		uint32_t h_m = al64(r32 + r32 / 2);
		uint32_t h_s = h_m + (a->mk ? al64((uint64_t)(mrows * cols * 4)) : 0);
		uint32_t h_p = h_s + al64((uint64_t)(rows * cols * 4));
		uint32_t h_o = h_p + al64((uint64_t)(rows * cols * 2));
		uint32_t h_mx = h_o + al64((uint64_t)(rows * a->Dv * 4));
		uint32_t h_l = h_mx + al64((uint64_t)rows * 4);
		uint64_t prow = (uint64_t)((bi * nk + kb) * a->Sq + m0);
		struct npu_tile *t = &tiles[ntiles++];
		struct npu_hw_insn *op = t->op;

		if ((uint64_t)h_l + (uint64_t)rows * 4 > cc->hbsm) {
			st = npu_fail(NPU_ERR_INTERNAL, "key-tiled attention tile over budget");
			break;
		}
		batch_idx(a, bi, idx);
		idx[R - 2] = m0;
		block_in(&t->in[0], &a->lq, npu_lview_at(&a->q, idx), rows, a->q.stride[R - 2], a->D,
			 a->q.stride[R - 1], 0);
		idx[R - 1] = k0;
		if (a->mk)
			block_in(&t->in[3], &a->lm, npu_lview_at(&a->m, idx), mrows,
				 a->m.stride[R - 2], cols, a->m.stride[R - 1], h_m);
		idx[R - 2] = 0;
		block_in(&t->in[1], &a->lk, npu_lview_at(&a->k, idx), a->D, a->k.stride[R - 2], cols,
			 a->k.stride[R - 1], aq);
		idx[R - 1] = 0;
		idx[R - 2] = k0;
		block_in(&t->in[2], &a->lv, npu_lview_at(&a->v, idx), cols, a->v.stride[R - 2], a->Dv,
			 a->v.stride[R - 1], aq + ak);
		t->nin = a->mk ? 4 : 3;
		cvu(op, NPU_CVU_UNARY, NPU_FN_IDENTITY);
		npu_twu_flat(&op->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, NPU_DT_FP32, 0, r32 / 4);
		npu_twu_flat(&op->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_BF16, r32, r32 / 4);
		op++;
		op->unit = NPU_UNIT_TCU;
		op->opcode = NPU_TCU_MATMUL;
		hb2(&op->opnd[NPU_OPND_SRC0], NPU_DT_BF16, r32, a->D, rows, a->D * 2);
		hb2(&op->opnd[NPU_OPND_SRC1], NPU_DT_BF16, r32 + aq / 2, cols, a->D, cols * 2);
		hb2(&op->opnd[NPU_OPND_DST], NPU_DT_FP32, h_s, cols, rows, cols * 4);
		if (a->scale != 1.0f) {
			op->params.tcu.flags = NPU_TCU_F_SCALE;
			op->params.tcu.out_scale = f32_bits(a->scale);
		}
		if (a->mk) {
			/* S + mask, -inf clamped to the lowest float. */
			cvu(++op, NPU_CVU_BINARY, NPU_FN_ADD);
			hb2(&op->opnd[NPU_OPND_SRC0], NPU_DT_FP32, h_s, cols, rows, cols * 4);
			hb2(&op->opnd[NPU_OPND_SRC1], NPU_DT_FP32, h_m, cols, rows,
			    a->mk == 2 ? cols * 4 : 0);
			hb2(&op->opnd[NPU_OPND_DST], NPU_DT_FP32, h_s, cols, rows, cols * 4);
			op->params.cvu.nstages = 1;
			op->params.cvu.stage[0].fn = NPU_FN_MAX;
			op->params.cvu.stage[0].imm = f32_bits(-3.4028234663852886e38f);
		}
		/* m = max over the block's keys. */
		cvu(++op, NPU_CVU_REDUCE, NPU_REDUCE_MAX);
		op->params.cvu.reduce_levels = 1;
		hb2(&op->opnd[NPU_OPND_SRC0], NPU_DT_FP32, h_s, cols, rows, cols * 4);
		hb3(&op->opnd[NPU_OPND_DST], NPU_DT_FP32, h_mx, rows, 4, 0, 0, 0, 0);
		/* P = exp(S - m), bf16. */
		cvu(++op, NPU_CVU_BINARY, NPU_FN_SUB);
		hb2(&op->opnd[NPU_OPND_SRC0], NPU_DT_FP32, h_s, cols, rows, cols * 4);
		hb2(&op->opnd[NPU_OPND_SRC1], NPU_DT_FP32, h_mx, cols, rows, 4);
		op->opnd[NPU_OPND_SRC1].level[0] = (struct npu_hw_twu_level){ 0, 0, (int32_t)cols };
		hb2(&op->opnd[NPU_OPND_DST], NPU_DT_BF16, h_p, cols, rows, cols * 2);
		op->params.cvu.nstages = 1;
		op->params.cvu.stage[0].fn = NPU_FN_EXP;
		/* l = sum of P. */
		cvu(++op, NPU_CVU_REDUCE, NPU_REDUCE_SUM);
		op->params.cvu.reduce_levels = 1;
		hb2(&op->opnd[NPU_OPND_SRC0], NPU_DT_BF16, h_p, cols, rows, cols * 2);
		hb3(&op->opnd[NPU_OPND_DST], NPU_DT_FP32, h_l, rows, 4, 0, 0, 0, 0);
		/* O = P V. */
		op++;
		memset(op, 0, sizeof(*op));
		op->unit = NPU_UNIT_TCU;
		op->opcode = NPU_TCU_MATMUL;
		hb2(&op->opnd[NPU_OPND_SRC0], NPU_DT_BF16, h_p, cols, rows, cols * 2);
		hb2(&op->opnd[NPU_OPND_SRC1], NPU_DT_BF16, r32 + (aq + ak) / 2, a->Dv, cols, a->Dv * 2);
		hb2(&op->opnd[NPU_OPND_DST], NPU_DT_FP32, h_o, a->Dv, rows, a->Dv * 4);
		t->nop = (unsigned)(op - t->op) + 1;
		st = npu_tile_out(t, h_o, 1, (uint32_t)(rows * a->Dv * 4), 0, cc->seg_scratch,
				  po + prow * (uint64_t)a->Dv * 4, 0);
		if (!st)
			st = npu_tile_out(t, h_mx, 1, (uint32_t)rows * 4, 0, cc->seg_scratch,
					  pm + prow * 4, 0);
		if (!st)
			st = npu_tile_out(t, h_l, 1, (uint32_t)rows * 4, 0, cc->seg_scratch,
					  pl + prow * 4, 0);
	}
	if (!st)
		st = npu_sched_emit(cc, tiles, ntiles);
	npu_tiles_free(tiles, ntiles);
	return st;
}

/* Second work item: the blocks of each query row combined, written to Y. */
static npu_status combine(struct npu_cc *cc, const struct attn *a, int64_t nk, uint64_t part)
{
	int64_t mq = (int64_t)npu_attn_combine_rows(cc->hbsm, nk, a->Dv), R = a->R, Dv = a->Dv;
	uint64_t po = part, pm = po + (uint64_t)(a->batch * nk * a->Sq * Dv) * 4;
	uint64_t pl = pm + (uint64_t)(a->batch * nk * a->Sq) * 4;
	int64_t per_b = (cc->workers + a->batch - 1) / a->batch, nq;
	struct npu_tile *tiles;
	unsigned ntiles = 0;
	npu_status st = NPU_OK;

	if (per_b > 1 && (a->Sq + per_b - 1) / per_b < mq)
		mq = (a->Sq + per_b - 1) / per_b;
	if (mq > a->Sq)
		mq = a->Sq;
	if (mq < 1)
		return npu_fail(NPU_ERR_INTERNAL, "the attention blocks' combination does not fit a tile");
	nq = (a->Sq + mq - 1) / mq;
	tiles = calloc((size_t)(a->batch * nq), sizeof(*tiles));
	if (!tiles)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t i = 0; i < a->batch * nq && !st; i++) {
		int64_t bi = i / nq, m0 = i % nq * mq;
		int64_t rows = a->Sq - m0 < mq ? a->Sq - m0 : mq, idx[NPU_MAX_RANK];
		uint32_t h_m = al64((uint64_t)(nk * rows * Dv * 4));
		uint32_t h_l = h_m + al64((uint64_t)(nk * rows * 4));
		uint32_t h_w = h_l + al64((uint64_t)(nk * rows * 4));
		uint32_t h_mx = h_w + al64((uint64_t)(nk * rows * 4));
		uint32_t h_sum = h_mx + al64((uint64_t)rows * 4);
		uint32_t h_y = h_sum + al64((uint64_t)rows * 4);
		uint64_t row0 = (uint64_t)(bi * nk * a->Sq + m0);
		struct npu_tile *t = &tiles[ntiles++];
		struct npu_hw_insn *op = t->op;
		int64_t brow = a->Sq * Dv * 4, bm = a->Sq * 4;

		if ((uint64_t)h_y + (uint64_t)(rows * Dv * 4) > cc->hbsm) {
			st = npu_fail(NPU_ERR_INTERNAL, "the attention blocks' combination is over budget");
			break;
		}
		/* O, m, l of every block for these rows, block-major. */
		t->in[0].seg = cc->seg_scratch;
		t->in[0].walk.space = NPU_SPACE_DDR;
		t->in[0].walk.dtype = NPU_DT_FP32;
		t->in[0].walk.base = po + row0 * (uint64_t)Dv * 4;
		npu_twu_lvl(&t->in[0].walk, 0, rows * Dv, 4);
		npu_twu_lvl(&t->in[0].walk, 1, nk, brow);
		for (int j = 1; j <= 2; j++) {
			t->in[j].seg = cc->seg_scratch;
			t->in[j].walk.space = NPU_SPACE_DDR;
			t->in[j].walk.dtype = NPU_DT_FP32;
			t->in[j].walk.base = (j == 1 ? pm : pl) + row0 * 4;
			npu_twu_lvl(&t->in[j].walk, 0, rows, 4);
			npu_twu_lvl(&t->in[j].walk, 1, nk, bm);
			t->in[j].hbsm = j == 1 ? h_m : h_l;
		}
		t->nin = 3;
		/* M = max_b m_b */
		cvu(op, NPU_CVU_REDUCE, NPU_REDUCE_MAX);
		op->params.cvu.reduce_levels = 1;
		hb3(&op->opnd[NPU_OPND_SRC0], NPU_DT_FP32, h_m, nk, rows * 4, rows, 4, 0, 0);
		hb3(&op->opnd[NPU_OPND_DST], NPU_DT_FP32, h_mx, rows, 4, 0, 0, 0, 0);
		/* w_b = exp(m_b - M) */
		cvu(++op, NPU_CVU_BINARY, NPU_FN_SUB);
		hb3(&op->opnd[NPU_OPND_SRC0], NPU_DT_FP32, h_m, rows, 4, nk, rows * 4, 0, 0);
		hb3(&op->opnd[NPU_OPND_SRC1], NPU_DT_FP32, h_mx, rows, 4, nk, 0, 0, 0);
		hb3(&op->opnd[NPU_OPND_DST], NPU_DT_FP32, h_w, rows, 4, nk, rows * 4, 0, 0);
		op->params.cvu.nstages = 1;
		op->params.cvu.stage[0].fn = NPU_FN_EXP;
		/* L = sum_b w_b l_b */
		cvu(++op, NPU_CVU_BINARY, NPU_FN_MUL);
		hb3(&op->opnd[NPU_OPND_SRC0], NPU_DT_FP32, h_l, rows * nk, 4, 0, 0, 0, 0);
		hb3(&op->opnd[NPU_OPND_SRC1], NPU_DT_FP32, h_w, rows * nk, 4, 0, 0, 0, 0);
		hb3(&op->opnd[NPU_OPND_DST], NPU_DT_FP32, h_l, rows * nk, 4, 0, 0, 0, 0);
		cvu(++op, NPU_CVU_REDUCE, NPU_REDUCE_SUM);
		op->params.cvu.reduce_levels = 1;
		hb3(&op->opnd[NPU_OPND_SRC0], NPU_DT_FP32, h_l, nk, rows * 4, rows, 4, 0, 0);
		hb3(&op->opnd[NPU_OPND_DST], NPU_DT_FP32, h_sum, rows, 4, 0, 0, 0, 0);
		/* Y = sum_b w_b O_b / L */
		cvu(++op, NPU_CVU_BINARY, NPU_FN_MUL);
		hb3(&op->opnd[NPU_OPND_SRC0], NPU_DT_FP32, 0, Dv, 4, rows, Dv * 4, nk, rows * Dv * 4);
		hb3(&op->opnd[NPU_OPND_SRC1], NPU_DT_FP32, h_w, Dv, 0, rows, 4, nk, rows * 4);
		hb3(&op->opnd[NPU_OPND_DST], NPU_DT_FP32, 0, Dv, 4, rows, Dv * 4, nk, rows * Dv * 4);
		cvu(++op, NPU_CVU_REDUCE, NPU_REDUCE_SUM);
		op->params.cvu.reduce_levels = 1;
		hb3(&op->opnd[NPU_OPND_SRC0], NPU_DT_FP32, 0, nk, rows * Dv * 4, Dv, 4, rows, Dv * 4);
		hb3(&op->opnd[NPU_OPND_DST], NPU_DT_FP32, h_y, Dv, 4, rows, Dv * 4, 0, 0);
		cvu(++op, NPU_CVU_BINARY, NPU_FN_DIV);
		hb3(&op->opnd[NPU_OPND_SRC0], NPU_DT_FP32, h_y, Dv, 4, rows, Dv * 4, 0, 0);
		hb3(&op->opnd[NPU_OPND_SRC1], NPU_DT_FP32, h_sum, Dv, 0, rows, 4, 0, 0);
		hb3(&op->opnd[NPU_OPND_DST], NPU_DT_FP32, h_y, Dv, 4, rows, Dv * 4, 0, 0);
		t->nop = (unsigned)(op - t->op) + 1;
		batch_idx(a, bi, idx);
		idx[R - 2] = m0;
		st = npu_tile_out(t, h_y, (uint32_t)rows, (uint32_t)(Dv * 4), (int32_t)(Dv * 4),
				  a->lo.seg, a->lo.off + (uint64_t)npu_lview_at(&a->o, idx) * 4,
				  (int32_t)(a->o.stride[R - 2] * 4));
	}
	if (!st)
		st = npu_sched_emit(cc, tiles, ntiles);
	npu_tiles_free(tiles, ntiles);
	return st;
}

/* The key-tiled form: partial results in scratch, then their combination. */
static npu_status key_tiled(struct npu_cc *cc, const npu_ir_node *n, int64_t bk)
{
	struct attn a = { .lm = { NPU_NO_SEG, 0 }, .batch = 1 };
	bool has_m = n->n_inputs > 3 && n->inputs[3] >= 0;
	int64_t nk;
	uint64_t part;
	npu_status st;

	if ((st = npu_attn_view(n, "npu_attn_q", n->inputs[0], &a.q)) ||
	    (st = npu_attn_view(n, "npu_attn_k", n->inputs[1], &a.k)) ||
	    (st = npu_attn_view(n, "npu_attn_v", n->inputs[2], &a.v)) ||
	    (st = npu_attn_view(n, "npu_attn_o", n->outputs[0], &a.o)) ||
	    (has_m && (st = npu_attn_view(n, "npu_attn_m", n->inputs[3], &a.m))) ||
	    (st = npu_ir_attr_float(n, "npu_attn_scale", 1.0f, &a.scale)))
		return st;
	a.R = a.q.rank;
	a.Sq = a.q.size[a.R - 2];
	a.D = a.q.size[a.R - 1];
	a.Sk = a.k.size[a.R - 1];
	a.Dv = a.v.size[a.R - 1];
	a.mk = has_m ? (a.m.stride[a.R - 2] ? 2 : 1) : 0;
	for (int d = 0; d < a.R - 2; d++)
		a.batch *= a.q.size[d];
	nk = (a.Sk + bk - 1) / bk;
	if ((st = npu_cc_loc(cc, n->inputs[0], &a.lq)) || (st = npu_cc_loc(cc, n->inputs[1], &a.lk)) ||
	    (st = npu_cc_loc(cc, n->inputs[2], &a.lv)) ||
	    (has_m && (st = npu_cc_loc(cc, n->inputs[3], &a.lm))) ||
	    (st = npu_cc_loc(cc, n->outputs[0], &a.lo)))
		return st;
	/* Per (batch, block, query row): O [Dv], then every m, then every l. */
	part = npu_cc_scratch(cc, (uint64_t)(a.batch * nk * a.Sq * (a.Dv + 2)) * 4);
	st = key_blocks(cc, &a, bk, nk, part);
	return st ? st : combine(cc, &a, nk, part);
}

npu_status npu_lower_attention(struct npu_cc *cc, const npu_ir_node *n)
{
	bool has_m = n->n_inputs > 3 && n->inputs[3] >= 0;
	struct npu_lview q, k, v, m, o;
	struct npu_loc lq, lk, lv, lm = { NPU_NO_SEG, 0 }, lo;
	int64_t R, Sq, D, Sk, Dv, batch = 1, mq, per_bh, bk;
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
	bk = npu_attn_key_block(cc->hbsm, D, Dv, Sk, Sq, mk);
	if (bk < 1)
		return npu_fail(NPU_ERR_INTERNAL, "fused attention does not fit a tile");
	if (bk < Sk)
		return key_tiled(cc, n, bk);
	mq = (int64_t)npu_attn_rows(cc->hbsm, D, Dv, Sk, mk);
	/*
	 * Spread the query rows of few heads over the workers, but every tile
	 * loads its head's K and V: below 32 rows a tile, four tiles a head
	 * did best (BERT at 16 to 512 queries, 4 heads on 56 workers).
	 */
	per_bh = (cc->workers + batch - 1) / batch;
	if (per_bh > 4 && Sq < per_bh * 32)
		per_bh = (Sq + 31) / 32 > 4 ? (Sq + 31) / 32 : 4;
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
