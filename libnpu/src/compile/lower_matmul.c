// SPDX-License-Identifier: MIT
/*
 * MatMul and Gemm on the TCU, in bf16 with fp32 accumulation.
 *
 * Constant weights become bf16 at compile time, in blocks of the tiles'
 * width: block j holds columns [j * nb, (j + 1) * nb) as a [K][nb] matrix,
 * so that a tile's B is one dense run of DDR rather than K rows a whole
 * matrix row apart (a decode step's tiles are 16-64 columns of matrices
 * thousands wide: each row of them a DRAM page of its own).  The DMA
 * moves the same bytes into the same HBSM layout, and its cost counts
 * bytes, so the cycle model does not change.  Each tile is an (M rows) x
 * (N columns) block: its rows of A come in as fp32 and the
 * CVU converts them to bf16; the TCU multiplies, adds the bias and writes
 * fp32 rows that a GSDU puts back in place.  The bias is Gemm's C, or a
 * MatMul's third input: the constant row of an Add the fusion pass folded.
 *
 * A B computed at run time (attention's K^T and V) comes in the same way as
 * A: its [K][cols] block as fp32 (read transposed for Gemm's transB), which
 * the CVU converts to bf16 beside it.  Batch dims broadcast as ONNX (numpy)
 * says: each output matrix reads the A and B matrices its index maps to.
 * An operand the fusion pass gave a walker view (NPU_ATTR_MM_A, _B) is
 * read through it: the Transposes and Reshapes that made it cost no step.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_lower.h"
#include "compile/npu_view.h"

static uint32_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

/*
 * Constant B (float32, [K][N] or [N][K] when @trans) as bf16, in blocks of
 * @tile columns (the last one narrower): block j, columns [j * tile, ...)
 * as [K][width], at element j * tile * K.  @tile >= N is plain [K][N].
 */
static npu_status const_b(struct npu_cc *cc, const npu_ir_tensor *b, int64_t K,
			  int64_t N, bool trans, int64_t tile, uint64_t batch_off,
			  uint64_t *off)
{
	const float *src = (const float *)b->data + batch_off;
	uint16_t *dst;
	struct npu_cc_bconst *bc;
	npu_status st = NPU_OK;

	/* The same whole B of an earlier MatMul: its placed copy. */
	for (unsigned i = 0; i < cc->nbconst; i++) {
		bc = &cc->bconst[i];
		if (bc->src == src && bc->K == K && bc->N == N && bc->trans == trans &&
		    bc->tile == tile && !batch_off) {
			*off = bc->off;
			return NPU_OK;
		}
	}
	dst = malloc((size_t)(K * N) * 2 + 2);
	if (!dst)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t j0 = 0; j0 < N; j0 += tile) {
		const int64_t w = N - j0 < tile ? N - j0 : tile;
		uint16_t *blk = dst + j0 * K;

		for (int64_t k = 0; k < K; k++)
			for (int64_t n = 0; n < w; n++)
				blk[k * w + n] = npu_ir_f32_to_bf16(trans ? src[(j0 + n) * K + k] :
								    src[k * N + j0 + n]);
	}
	*off = npu_cc_const(cc, dst, (uint64_t)(K * N) * 2, &st);
	free(dst);
	if (st || batch_off)
		return st;
	bc = realloc(cc->bconst, (cc->nbconst + 1) * sizeof(*bc));
	if (!bc)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	cc->bconst = bc;
	cc->bconst[cc->nbconst++] = (struct npu_cc_bconst){ src, K, N, tile, trans, *off };
	return st;
}

/*
 * Element offset of matrix @bi of output @y in operand @t ([..., R, C]):
 * @t's batch dims are aligned to @y's from the right, a dim of 1 (or a
 * missing one) is broadcast.
 */
static uint64_t batch_off(const npu_ir_tensor *t, const npu_ir_tensor *y, int64_t bi)
{
	int tb = t->rank - 2, yb = y->rank - 2;
	uint64_t off = 0, stride = (uint64_t)(t->dims[t->rank - 2] * t->dims[t->rank - 1]);

	for (int d = yb - 1; d >= 0; d--) {
		int64_t idx = bi % y->dims[d];
		int td = d - (yb - tb);

		bi /= y->dims[d];
		if (td < 0)
			continue;
		if (t->dims[td] != 1)
			off += (uint64_t)idx * stride;
		stride *= (uint64_t)t->dims[td];
	}
	return off;
}

static int64_t zp_of(const npu_ir_tensor *z, int64_t i)
{
	int64_t k;

	if (!z)
		return 0;
	k = npu_ir_numel(z) == 1 ? 0 : i;
	return z->dtype == NPU_DTYPE_INT8 ? ((const int8_t *)z->data)[k] :
	       ((const uint8_t *)z->data)[k];
}

/*
 * QLinearMatMul (requantized per output column) and MatMulInteger (int32):
 * A stays 8-bit, B is copied as is, the TCU applies the zero points.
 */
static npu_status prep_quant(struct npu_cc *cc, const npu_ir_node *n, int64_t N,
			     uint64_t *boff, uint64_t *qoff, struct npu_hw_tcu_params *tcu)
{
	bool ql = !strcmp(n->op, "QLinearMatMul");
	const npu_ir_tensor *b = npu_ir_input(cc->g, n, ql ? 3 : 1);
	const npu_ir_tensor *az = npu_ir_input(cc->g, n, ql ? 2 : 2);
	const npu_ir_tensor *bz = npu_ir_input(cc->g, n, ql ? 5 : 3);
	const npu_ir_tensor *as = ql ? npu_ir_input(cc->g, n, 1) : NULL;
	const npu_ir_tensor *bs = ql ? npu_ir_input(cc->g, n, 4) : NULL;
	const npu_ir_tensor *ys = ql ? npu_ir_input(cc->g, n, 6) : NULL;
	const npu_ir_tensor *yz = ql ? npu_ir_input(cc->g, n, 7) : NULL;
	npu_status st = NPU_OK;

	if ((az && !npu_ir_is_const(az)) || (bz && !npu_ir_is_const(bz)) ||
	    (ql && (!npu_ir_is_const(as) || !npu_ir_is_const(bs) || !npu_ir_is_const(ys) ||
		    (yz && !npu_ir_is_const(yz)))) || (az && npu_ir_numel(az) != 1))
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s with computed or per-row parameters", n->op);
	for (int64_t j = 1; bz && j < npu_ir_numel(bz); j++)
		if (zp_of(bz, j) != zp_of(bz, 0))
			return npu_fail(NPU_ERR_UNSUPPORTED, "%s with per-column B zero points", n->op);
	tcu->a_zp = (int32_t)zp_of(az, 0);
	tcu->b_zp = (int32_t)zp_of(bz, 0);
	if (npu_ir_is_const(b))
		*boff = npu_cc_const(cc, b->data, b->bytes, &st);
	if (!st && ql) {
		float *q = malloc((size_t)N * 4);

		if (!q)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		for (int64_t j = 0; j < N; j++)
			q[j] = ((const float *)as->data)[0] *
			       ((const float *)bs->data)[npu_ir_numel(bs) == 1 ? 0 : j] /
			       ((const float *)ys->data)[0];
		*qoff = npu_cc_const(cc, q, (uint64_t)N * 4, &st);
		free(q);
		tcu->flags = NPU_TCU_F_PER_CHANNEL;
		tcu->out_zp = (int32_t)zp_of(yz, 0);
	}
	return st;
}

npu_status npu_lower_matmul(struct npu_cc *cc, const npu_ir_node *n)
{
	bool gemm = !strcmp(n->op, "Gemm");
	bool quant = !strcmp(n->op, "QLinearMatMul") || !strcmp(n->op, "MatMulInteger");
	const npu_ir_tensor *a = npu_ir_input(cc->g, n, 0);
	const npu_ir_tensor *b = npu_ir_input(cc->g, n, quant && n->n_inputs > 3 &&
					      !strcmp(n->op, "QLinearMatMul") ? 3 : 1);
	/* Gemm's C, or a MatMul's bias row the fusion pass gave it (npu_fuse.c). */
	const npu_ir_tensor *c = gemm || !strcmp(n->op, "MatMul") ?
				 npu_ir_input(cc->g, n, 2) : NULL;
	const npu_ir_tensor *y = npu_ir_output(cc->g, n, 0);
	int64_t ta = 0, tb = 0, M, K, N, batch = 1;
	float alpha = 1.0f, beta = 1.0f;
	struct npu_loc la, ly;
	uint64_t boff = 0, bias_off = 0, q_off = 0, nb, mb, budget = cc->hbsm / 2;
	struct npu_hw_tcu_params tcu = { 0 };
	unsigned adt = NPU_DT_FP32, ab = 4, bdt = NPU_DT_BF16, bb = 2, ydt = NPU_DT_FP32, yb = 4;
	struct npu_tile *tiles = NULL;
	unsigned ntiles = 0, cap = 0;
	float *bias = NULL;
	bool b_rt = !npu_ir_is_const(b);	/* B computed at run time */
	struct npu_loc lb = { NPU_NO_SEG, 0 };
	/* Operands read through walker views (NPU_ATTR_MM_A, _B; fuse_attn.c). */
	struct npu_lview va, vb;
	bool av = npu_ir_attr_find(n, NPU_ATTR_MM_A) != NULL;
	bool bv = npu_ir_attr_find(n, NPU_ATTR_MM_B) != NULL;
	npu_status st;

	if (npu_ir_attr_find(n, NPU_ATTR_ATTN))
		return npu_lower_attention(cc, n);
	if (quant) {
		adt = npu_cc_hw_dtype(a->dtype);
		bdt = npu_cc_hw_dtype(b->dtype);
		ydt = npu_cc_hw_dtype(y->dtype);
		ab = bb = 1;
		yb = npu_cc_hw_size(ydt);
		if ((adt != NPU_DT_INT8 && adt != NPU_DT_UINT8) ||
		    (bdt != NPU_DT_INT8 && bdt != NPU_DT_UINT8) || !ydt)
			return npu_fail(NPU_ERR_UNSUPPORTED, "%s on %s x %s", n->op,
					npu_dtype_str(a->dtype), npu_dtype_str(b->dtype));
	} else if (a->dtype != NPU_DTYPE_FLOAT32 || b->dtype != NPU_DTYPE_FLOAT32) {
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s on %s x %s", n->op,
				npu_dtype_str(a->dtype), npu_dtype_str(b->dtype));
	}
	if (gemm) {
		if ((st = npu_ir_attr_int(n, "transA", 0, &ta)) ||
		    (st = npu_ir_attr_int(n, "transB", 0, &tb)) ||
		    (st = npu_ir_attr_float(n, "alpha", 1.0f, &alpha)) ||
		    (st = npu_ir_attr_float(n, "beta", 1.0f, &beta)))
			return st;
		M = ta ? a->dims[1] : a->dims[0];
		K = ta ? a->dims[0] : a->dims[1];
		N = tb ? b->dims[0] : b->dims[1];
	} else {
		if ((st = npu_ir_attr_float(n, NPU_ATTR_SCALE, 1.0f, &alpha)) ||
		    (av && (st = npu_attn_view(n, NPU_ATTR_MM_A, n->inputs[0], &va))) ||
		    (bv && (st = npu_attn_view(n, NPU_ATTR_MM_B, n->inputs[1], &vb))))
			return st;
		/* A constant B of rank 3+ was made 2-D by a rewrite, or is refused. */
		if ((!av && a->rank < 2) || (!bv && b->rank < 2) || (!b_rt && b->rank != 2))
			return npu_fail(NPU_ERR_UNSUPPORTED, "%s of rank %d x %d", n->op, a->rank,
					b->rank);
		M = av ? va.size[va.rank - 2] : a->dims[a->rank - 2];
		K = av ? va.size[va.rank - 1] : a->dims[a->rank - 1];
		N = bv ? vb.size[vb.rank - 1] : b->dims[b->rank - 1];
		for (int d = 0; d < y->rank - 2; d++)
			batch *= y->dims[d];
	}
	if (K * 2 * 8 > (int64_t)budget)
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s with K = %lld", n->op, (long long)K);
	/*
	 * Weight-only int8 (lower_qmatmul.c): a constant B whose A is read as
	 * it lies; the others stay bf16.
	 */
	if (cc->cm->precision == NPU_PRECISION_W8 && !quant && !b_rt && !av && !ta &&
	    (!c || (npu_ir_is_const(c) && (npu_ir_numel(c) == N || npu_ir_numel(c) == 1))))
		return npu_lower_matmul_w8(cc, n, b, c, M * batch, K, N, tb != 0, alpha, beta);
	if (c) {
		int64_t cn = npu_ir_numel(c);

		if (!npu_ir_is_const(c) || !(cn == N || cn == 1))
			return npu_fail(NPU_ERR_UNSUPPORTED, "%s with a %s that is not a constant row",
					n->op, gemm ? "C" : "bias");
		bias = malloc((size_t)N * 4);
		if (!bias)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		for (int64_t j = 0; j < N; j++)
			/* The TCU scales acc + bias by alpha: pre-divide the bias. */
			bias[j] = beta * ((const float *)c->data)[cn == 1 ? 0 : j] /
				  (alpha != 0.0f ? alpha : 1.0f);
		bias_off = npu_cc_const(cc, bias, (uint64_t)N * 4, &st);
		free(bias);
		if (st)
			return st;
	}
	st = NPU_OK;
	if (quant)
		st = prep_quant(cc, n, N, &boff, &q_off, &tcu);
	if (!st && b_rt)
		st = npu_cc_loc(cc, n->inputs[quant && !strcmp(n->op, "QLinearMatMul") ? 3 : 1], &lb);
	if (st || (st = npu_cc_loc(cc, n->inputs[0], &la)) ||
	    (st = npu_cc_loc(cc, n->outputs[0], &ly)))
		return st;

	/*
	 * Block sizes: B's columns in half the HBSM, rows in the rest.  A float
	 * B computed at run time needs its fp32 block beside the bf16 one.
	 */
	if (b_rt && !quant)	/* bf16 + fp32 per element, bias and scale per column */
		nb = (budget - 256) / ((uint64_t)K * 6 + 8);
	else
		nb = budget / ((uint64_t)K * bb);
	nb = nb > (uint64_t)N ? (uint64_t)N : nb;
	mb = budget / ((uint64_t)K * (quant ? 1 : 6) + nb * 4);
	mb = mb > (uint64_t)M ? (uint64_t)M : mb;
	if (mb > 1 && (uint64_t)M * batch / cc->workers >= 1) {
		uint64_t spread = ((uint64_t)M + cc->workers - 1) / cc->workers;

		if (spread < mb)
			mb = spread;
	}
	/* Few row blocks (decode, a short prefill): spread B's columns. */
	if (!b_rt)
		nb = npu_tile_weight_cols((uint64_t)N, nb, (uint64_t)batch * ((M + mb - 1) / mb),
					  mb, cc->workers, 4);
	/* Placed now that the tiles' width is known: blocks of nb columns. */
	if (!quant && !b_rt && (st = const_b(cc, b, K, N, tb != 0, (int64_t)nb, 0, &boff)))
		return st;
	for (int64_t bi = 0; bi < batch && !st; bi++) {
		for (uint64_t m0 = 0; m0 < (uint64_t)M && !st; m0 += mb) {
			for (uint64_t n0 = 0; n0 < (uint64_t)N && !st; n0 += nb) {
				uint64_t rows = M - m0 < mb ? M - m0 : mb, cols = N - n0 < nb ? N - n0 : nb;
				uint32_t h_a32 = 0, h_a16 = (uint32_t)((rows * K * ab + 63) & ~63ull);
				uint32_t h_b = h_a16 + (uint32_t)(quant ? 0 : (rows * K * 2 + 63) & ~63ull);
				uint32_t h_bias = h_b + (uint32_t)((K * cols * bb + 63) & ~63ull);
				uint32_t h_q = h_bias + (uint32_t)((cols * 4 + 63) & ~63ull);
				uint32_t h_c = h_q + (uint32_t)(cols * 4);
				uint32_t h_b32;		/* run-time float B, before conversion */
				uint64_t a_off = av ? 0 : batch_off(a, y, bi);
				uint64_t b_off = b_rt && !bv ? batch_off(b, y, bi) : 0;
				int64_t idx[NPU_MAX_RANK] = { 0 }, rest = bi;
				struct npu_tile *t;
				struct npu_hw_insn *op;

				h_c = (h_c + 63) & ~63u;
				h_b32 = (uint32_t)((h_c + rows * cols * 4 + 63) & ~63ull);
				if (ntiles == cap) {
					struct npu_tile *g = realloc(tiles, (cap ? 2 * cap : 16) * sizeof(*g));

					if (!g) {
						st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
						break;
					}
					tiles = g;
					cap = cap ? 2 * cap : 16;
				}
				t = &tiles[ntiles++];
				memset(t, 0, sizeof(*t));
				/* A rows (fp32): [K] x rows, transposed source if transA. */
				t->in[0].seg = la.seg;
				t->in[0].walk.space = NPU_SPACE_DDR;
				t->in[0].walk.dtype = (uint8_t)adt;
				if (ta) {
					t->in[0].walk.base = la.off + m0 * ab;
					npu_twu_lvl(&t->in[0].walk, 0, K, M * ab);
					npu_twu_lvl(&t->in[0].walk, 1, (int64_t)rows, ab);
				} else {
					t->in[0].walk.base = la.off + (a_off + m0 * K) * ab;
					npu_twu_lvl(&t->in[0].walk, 0, (int64_t)(rows * K), ab);
				}
				t->in[0].hbsm = h_a32;
				/*
				 * B columns n0.. (bf16 [K][cols]): quantised, rows of
				 * [K][N]; else its block of const_b, dense.
				 */
				t->in[1].seg = cc->seg_const;
				t->in[1].walk.space = NPU_SPACE_DDR;
				t->in[1].walk.dtype = (uint8_t)bdt;
				t->in[1].walk.base = boff + n0 * (quant ? 1 : (uint64_t)K) * bb;
				npu_twu_lvl(&t->in[1].walk, 0, (int64_t)cols, bb);
				npu_twu_lvl(&t->in[1].walk, 1, K, (quant ? N : (int64_t)cols) * bb);
				t->in[1].hbsm = h_b;
				if (b_rt) {
					/* [K][cols] of B as it lies ([N][K] with transB):
					 * 8-bit as is, float32 to convert. */
					unsigned eb = quant ? bb : 4;

					t->in[1].seg = lb.seg;
					t->in[1].walk.dtype = (uint8_t)(quant ? bdt : NPU_DT_FP32);
					t->in[1].walk.base = lb.off + (b_off + (tb ? n0 * K : n0)) * eb;
					npu_twu_lvl(&t->in[1].walk, 0, (int64_t)cols, tb ? K * eb : eb);
					npu_twu_lvl(&t->in[1].walk, 1, K, tb ? eb : N * eb);
					t->in[1].hbsm = quant ? h_b : h_b32;
				}
				for (int d = y->rank - 3; (av || bv) && d >= 0; d--) {
					idx[d] = rest % y->dims[d];
					rest /= y->dims[d];
				}
				if (av) {	/* [rows][K] through the view */
					idx[y->rank - 2] = (int64_t)m0;
					idx[y->rank - 1] = 0;
					npu_tile_block_in(&t->in[0], la.seg, NPU_DT_FP32,
							  la.off + (uint64_t)npu_lview_at(&va, idx) * 4,
							  (int64_t)rows, va.stride[y->rank - 2] * 4, K,
							  va.stride[y->rank - 1] * 4, h_a32);
				}
				if (bv) {	/* [K][cols] through the view */
					idx[y->rank - 2] = 0;
					idx[y->rank - 1] = (int64_t)n0;
					npu_tile_block_in(&t->in[1], lb.seg, NPU_DT_FP32,
							  lb.off + (uint64_t)npu_lview_at(&vb, idx) * 4,
							  K, vb.stride[y->rank - 2] * 4, (int64_t)cols,
							  vb.stride[y->rank - 1] * 4, h_b32);
				}
				t->nin = 2;
				if (c) {
					t->in[2].seg = cc->seg_const;
					npu_twu_flat(&t->in[2].walk, NPU_SPACE_DDR, NPU_DT_FP32,
						     bias_off + n0 * 4, cols);
					t->in[2].hbsm = h_bias;
					t->nin = 3;
				}
				if (tcu.flags & NPU_TCU_F_PER_CHANNEL) {
					t->in[t->nin].seg = cc->seg_const;
					npu_twu_flat(&t->in[t->nin].walk, NPU_SPACE_DDR, NPU_DT_FP32,
						     q_off + n0 * 4, cols);
					t->in[t->nin++].hbsm = h_q;
				}
				op = &t->op[0];
				op->unit = NPU_UNIT_CVU;
				op->opcode = NPU_CVU_UNARY;
				op->params.cvu.fn = NPU_FN_IDENTITY;
				npu_twu_flat(&op->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, NPU_DT_FP32,
					     h_a32, rows * K);
				npu_twu_flat(&op->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_BF16,
					     h_a16, rows * K);
				if (quant) {
					memset(op, 0, sizeof(*op));	/* no conversion */
				} else if (b_rt) {
					op++;
					op->unit = NPU_UNIT_CVU;
					op->opcode = NPU_CVU_UNARY;
					op->params.cvu.fn = NPU_FN_IDENTITY;
					npu_twu_flat(&op->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM,
						     NPU_DT_FP32, h_b32, (uint64_t)K * cols);
					npu_twu_flat(&op->opnd[NPU_OPND_DST], NPU_SPACE_HBSM,
						     NPU_DT_BF16, h_b, (uint64_t)K * cols);
					op++;
				} else {
					op++;
				}
				op->unit = NPU_UNIT_TCU;
				op->opcode = NPU_TCU_MATMUL;
				op->params.tcu = tcu;
				if (tcu.flags & NPU_TCU_F_PER_CHANNEL)
					op->params.tcu.qscale_addr = h_q;
				op->opnd[NPU_OPND_SRC0].space = NPU_SPACE_HBSM;
				op->opnd[NPU_OPND_SRC0].dtype = (uint8_t)(quant ? adt : NPU_DT_BF16);
				op->opnd[NPU_OPND_SRC0].base = quant ? h_a32 : h_a16;
				npu_twu_lvl(&op->opnd[NPU_OPND_SRC0], 0, K, quant ? ab : 2);
				npu_twu_lvl(&op->opnd[NPU_OPND_SRC0], 1, (int64_t)rows, K * (quant ? ab : 2));
				op->opnd[NPU_OPND_SRC1].space = NPU_SPACE_HBSM;
				op->opnd[NPU_OPND_SRC1].dtype = (uint8_t)bdt;
				op->opnd[NPU_OPND_SRC1].base = h_b;
				npu_twu_lvl(&op->opnd[NPU_OPND_SRC1], 0, (int64_t)cols, bb);
				npu_twu_lvl(&op->opnd[NPU_OPND_SRC1], 1, K, (int64_t)cols * bb);
				if (c)
					npu_twu_flat(&op->opnd[NPU_OPND_SRC2], NPU_SPACE_HBSM,
						     NPU_DT_FP32, h_bias, cols);
				op->opnd[NPU_OPND_DST].space = NPU_SPACE_HBSM;
				op->opnd[NPU_OPND_DST].dtype = (uint8_t)ydt;
				op->opnd[NPU_OPND_DST].base = h_c;
				npu_twu_lvl(&op->opnd[NPU_OPND_DST], 0, (int64_t)cols, yb);
				npu_twu_lvl(&op->opnd[NPU_OPND_DST], 1, (int64_t)rows, (int64_t)cols * yb);
				if (alpha != 1.0f) {
					op->params.tcu.flags = NPU_TCU_F_SCALE;
					op->params.tcu.out_scale = f32_bits(alpha);
				}
				if ((st = npu_cc_act(n, &op->params.tcu)))
					break;
				t->nop = quant ? 1 : b_rt ? 3 : 2;
				st = npu_tile_out(t, h_c, (uint32_t)rows, (uint32_t)(cols * yb),
						  (int32_t)(cols * yb), ly.seg,
						  ly.off + ((uint64_t)bi * M * N + m0 * N + n0) * yb,
						  (int32_t)(N * yb));
			}
		}
	}
	if (!st)
		st = npu_sched_emit(cc, tiles, ntiles);
	npu_tiles_free(tiles, ntiles);
	return st;
}
