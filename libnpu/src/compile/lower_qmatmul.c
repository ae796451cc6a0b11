// SPDX-License-Identifier: MIT
/*
 * MatMuls whose constant weights stay quantised in DDR (issue 16, decode
 * is DDR-bound): com.microsoft MatMulNBits (4 or 8-bit blocks along K, a
 * scale and optional zero point per block) and the weight-only int8 of
 * NPU_PRECISION_W8 (a symmetric int8 row per output channel, one scale).
 *
 * The weights are kept as [N][K] rows of packed codes, the layout
 * MatMulNBits ships.  Each tile DMAs its rows of codes, scales and zero
 * points into HBSM as they are (DDR reads the packed size), a CVU DEQUANT
 * (ISA 1.3) widens them to bf16 written transposed as the TCU's [K][cols]
 * B operand, and the TCU multiplies the bf16 rows of A with fp32
 * accumulation as for a float MatMul (lower_matmul.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_lower.h"
#include "compile/npu_ops.h"

/* A quantised constant weight, its bytes already in the CONST segment. */
struct qweight {
	int64_t N, K, block;	/* block: elements per scale along K (divides K) */
	unsigned bits;		/* 4: two codes a byte, low nibble first; 8 */
	unsigned qdt;		/* NPU_DT_UINT8, or NPU_DT_INT8 (w8) */
	uint64_t q_off;		/* [N][K * bits / 8] codes */
	uint64_t s_off;		/* fp32 [N][K / block] scales */
	uint64_t z_off;		/* [N][K / block] zero points of dtype zdt ... */
	unsigned zdt;		/* ... or NPU_DT_NONE: in_zp for every block */
	int32_t in_zp;
	bool bias;		/* fp32 [N] at bias_off */
	uint64_t bias_off;
	float alpha;		/* the product's scale (a fused Mul) */
};

static uint64_t align64(uint64_t v)
{
	return (v + 63) & ~63ull;
}

/* Bytes of one column (output channel) of a tile in HBSM, about. */
static uint64_t col_bytes(const struct qweight *w)
{
	uint64_t kb = (uint64_t)(w->K / w->block);

	return (uint64_t)w->K * w->bits / 8 + kb * (4 + (w->zdt ? npu_cc_hw_size(w->zdt) : 0)) +
	       (uint64_t)w->K * 2 + 4;
}

/*
 * A tile's HBSM layout for @rows x @cols: A as fp32 and bf16, the codes,
 * scales, zero points and bias as DMA'd, the widened B ([K][pitch] bf16)
 * and the fp32 result; @end is the bytes it takes.
 */
struct qlayout {
	uint32_t a32, a16, q, s, z, bias, b, c, pitch;
	uint64_t end;
};

static struct qlayout layout(const struct qweight *w, uint64_t rows, uint64_t cols)
{
	uint64_t kb = (uint64_t)(w->K / w->block), K = (uint64_t)w->K;
	unsigned zsz = w->zdt ? npu_cc_hw_size(w->zdt) : 0;
	struct qlayout l = { .pitch = npu_hbsm_pitch(cols * 2) };
	uint64_t o = align64(rows * K * 4);

	l.a16 = (uint32_t)o;
	o += align64(rows * K * 2);
	l.q = (uint32_t)o;
	o += align64(cols * K * w->bits / 8);
	l.s = (uint32_t)o;
	o += align64(cols * kb * 4);
	l.z = (uint32_t)o;
	o += align64(cols * kb * zsz);
	l.bias = (uint32_t)o;
	o += align64(cols * 4);
	l.b = (uint32_t)o;
	o += align64(K * l.pitch);
	l.c = (uint32_t)o;
	l.end = o + rows * cols * 4;
	return l;
}

/*
 * The tiles of Y[M][N] = A[M][K] x W^T (+ bias): A is @la (fp32 rows,
 * every batch dimension folded into M), Y is @ly.
 */
static npu_status qmatmul_tiles(struct npu_cc *cc, const npu_ir_node *n, const struct qweight *w,
				int64_t M, struct npu_loc la, struct npu_loc ly)
{
	const int64_t K = w->K, N = w->N, kb = K / w->block;
	const unsigned zsz = w->zdt ? npu_cc_hw_size(w->zdt) : 0;
	const uint64_t qrow = (uint64_t)K * w->bits / 8;
	uint64_t nb, mb;
	struct npu_tile *tiles = NULL;
	unsigned ntiles = 0;
	npu_status st = NPU_OK;

	if (layout(w, 1, 1).end > cc->hbsm)
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s with K = %lld: a row does not fit a tile",
				n->op, (long long)K);
	/* Weight columns in half the tile, A rows in the rest. */
	nb = cc->hbsm / 2 / col_bytes(w);
	if (nb > (uint64_t)N)
		nb = (uint64_t)N;
	while (nb > 1 && layout(w, 1, nb).end > cc->hbsm / 2)
		nb -= nb / 16 ? nb / 16 : 1;
	if (!nb)
		nb = 1;
	/* Few rows (decode): spread the columns over the workers instead. */
	if ((uint64_t)M < cc->workers)
		nb = npu_tile_weight_cols((uint64_t)N, nb, 1, (uint64_t)M, cc->workers, 16);
	mb = (cc->hbsm - layout(w, 0, nb).end) / ((uint64_t)K * 6 + nb * 4);
	if (mb > (uint64_t)M)
		mb = (uint64_t)M;
	while (mb && layout(w, mb, nb).end > cc->hbsm)
		mb--;
	if (!mb)
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s with K = %lld: a row does not fit a tile",
				n->op, (long long)K);
	if (mb > 1 && (uint64_t)M / cc->workers >= 1) {
		uint64_t spread = ((uint64_t)M + cc->workers - 1) / cc->workers;

		if (spread < mb)
			mb = spread;
	}
	tiles = calloc((size_t)(((uint64_t)M + mb - 1) / mb * (((uint64_t)N + nb - 1) / nb)),
		       sizeof(*tiles));
	if (!tiles)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (uint64_t m0 = 0; m0 < (uint64_t)M && !st; m0 += mb) {
		for (uint64_t n0 = 0; n0 < (uint64_t)N && !st; n0 += nb) {
			uint64_t rows = M - m0 < mb ? M - m0 : mb, cols = N - n0 < nb ? N - n0 : nb;
			struct qlayout l = layout(w, rows, cols);
			uint32_t pitch = l.pitch, h_a32 = 0, h_a16 = l.a16, h_q = l.q, h_s = l.s;
			uint32_t h_z = l.z, h_bias = l.bias, h_b = l.b, h_c = l.c;
			struct npu_tile *t = &tiles[ntiles++];
			struct npu_hw_insn *op;
			struct npu_hw_twu *o;

			/* A rows (fp32), codes, scales, zero points, bias: as they lie. */
			t->in[0].seg = la.seg;
			npu_twu_flat(&t->in[0].walk, NPU_SPACE_DDR, NPU_DT_FP32,
				     la.off + m0 * K * 4, rows * K);
			t->in[0].hbsm = h_a32;
			t->in[1].seg = cc->seg_const;
			npu_twu_flat(&t->in[1].walk, NPU_SPACE_DDR, w->qdt, w->q_off + n0 * qrow,
				     cols * qrow);
			t->in[1].hbsm = h_q;
			t->in[2].seg = cc->seg_const;
			npu_twu_flat(&t->in[2].walk, NPU_SPACE_DDR, NPU_DT_FP32,
				     w->s_off + n0 * kb * 4, cols * kb);
			t->in[2].hbsm = h_s;
			t->nin = 3;
			if (w->zdt) {
				t->in[3].seg = cc->seg_const;
				npu_twu_flat(&t->in[3].walk, NPU_SPACE_DDR, w->zdt,
					     w->z_off + n0 * kb * zsz, cols * kb);
				t->in[3].hbsm = h_z;
				t->nin = 4;
			}
			if (w->bias) {
				t->in[t->nin].seg = cc->seg_const;
				npu_twu_flat(&t->in[t->nin].walk, NPU_SPACE_DDR, NPU_DT_FP32,
					     w->bias_off + n0 * 4, cols);
				t->in[t->nin++].hbsm = h_bias;
			}
			/* A to bf16. */
			op = &t->op[0];
			op->unit = NPU_UNIT_CVU;
			op->opcode = NPU_CVU_UNARY;
			op->params.cvu.fn = NPU_FN_IDENTITY;
			npu_twu_flat(&op->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, NPU_DT_FP32, h_a32,
				     rows * K);
			npu_twu_flat(&op->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_BF16, h_a16,
				     rows * K);
			/*
			 * The weights widened: levels (code in block, block, column),
			 * a scale and zero point per block by a broadcast level, the
			 * bf16 written down the columns of [K][pitch].
			 */
			op++;
			op->unit = NPU_UNIT_CVU;
			op->opcode = NPU_CVU_DEQUANT;
			op->params.cvu.flags = w->bits == 4 ? NPU_CVU_F_NIBBLES : 0;
			op->params.cvu.in_zp = w->zdt ? 0 : w->in_zp;
			o = &op->opnd[NPU_OPND_SRC0];
			o->space = NPU_SPACE_HBSM;
			o->dtype = (uint8_t)w->qdt;
			o->base = h_q;
			npu_twu_lvl(o, 0, w->block * w->bits / 8, 1);
			npu_twu_lvl(o, 1, kb, w->block * w->bits / 8);
			npu_twu_lvl(o, 2, (int64_t)cols, (int64_t)qrow);
			o = &op->opnd[NPU_OPND_SRC1];
			o->space = NPU_SPACE_HBSM;
			o->dtype = NPU_DT_FP32;
			o->base = h_s;
			npu_twu_lvl(o, 0, w->block, 0);
			npu_twu_lvl(o, 1, kb, 4);
			npu_twu_lvl(o, 2, (int64_t)cols, kb * 4);
			if (w->zdt) {
				o = &op->opnd[NPU_OPND_SRC2];
				o->space = NPU_SPACE_HBSM;
				o->dtype = (uint8_t)w->zdt;
				o->base = h_z;
				npu_twu_lvl(o, 0, w->block, 0);
				npu_twu_lvl(o, 1, kb, zsz);
				npu_twu_lvl(o, 2, (int64_t)cols, kb * zsz);
			}
			o = &op->opnd[NPU_OPND_DST];
			o->space = NPU_SPACE_HBSM;
			o->dtype = NPU_DT_BF16;
			o->base = h_b;
			npu_twu_lvl(o, 0, w->block, pitch);
			npu_twu_lvl(o, 1, kb, w->block * (int64_t)pitch);
			npu_twu_lvl(o, 2, (int64_t)cols, 2);
			/* The product, fp32 accumulation, bias and scale in the output stage. */
			op++;
			op->unit = NPU_UNIT_TCU;
			op->opcode = NPU_TCU_MATMUL;
			o = &op->opnd[NPU_OPND_SRC0];
			o->space = NPU_SPACE_HBSM;
			o->dtype = NPU_DT_BF16;
			o->base = h_a16;
			npu_twu_lvl(o, 0, K, 2);
			npu_twu_lvl(o, 1, (int64_t)rows, K * 2);
			o = &op->opnd[NPU_OPND_SRC1];
			o->space = NPU_SPACE_HBSM;
			o->dtype = NPU_DT_BF16;
			o->base = h_b;
			npu_twu_lvl(o, 0, (int64_t)cols, 2);
			npu_twu_lvl(o, 1, K, pitch);
			if (w->bias)
				npu_twu_flat(&op->opnd[NPU_OPND_SRC2], NPU_SPACE_HBSM, NPU_DT_FP32,
					     h_bias, cols);
			o = &op->opnd[NPU_OPND_DST];
			o->space = NPU_SPACE_HBSM;
			o->dtype = NPU_DT_FP32;
			o->base = h_c;
			npu_twu_lvl(o, 0, (int64_t)cols, 4);
			npu_twu_lvl(o, 1, (int64_t)rows, (int64_t)cols * 4);
			if (w->alpha != 1.0f) {
				op->params.tcu.flags = NPU_TCU_F_SCALE;
				memcpy(&op->params.tcu.out_scale, &w->alpha, 4);
			}
			if ((st = npu_cc_act(n, &op->params.tcu)))
				break;
			t->nop = 3;
			st = npu_tile_out(t, h_c, (uint32_t)rows, (uint32_t)(cols * 4),
					  (int32_t)(cols * 4), ly.seg, ly.off + (m0 * N + n0) * 4,
					  (int32_t)(N * 4));
		}
	}
	if (!st)
		st = npu_sched_emit(cc, tiles, ntiles);
	npu_tiles_free(tiles, ntiles);
	return st;
}

/* The bias row (fp32 [N], scaled by @mul) into the constants. */
static npu_status const_bias(struct npu_cc *cc, const npu_ir_tensor *c, int64_t N, float mul,
			     struct qweight *w)
{
	int64_t cn = npu_ir_numel(c);
	float *b = malloc((size_t)N * 4);
	npu_status st = NPU_OK;

	if (!b)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t j = 0; j < N; j++)
		b[j] = ((const float *)c->data)[cn == 1 ? 0 : j] * mul;
	w->bias_off = npu_cc_const(cc, b, (uint64_t)N * 4, &st);
	w->bias = true;
	free(b);
	return st;
}

/* What MatMulNBits takes (npu_ops.c support check): NULL or why not. */
const char *npu_matmul_nbits_refusal(const npu_ir_graph *g, const npu_ir_node *n)
{
	const npu_ir_tensor *a = npu_ir_input(g, n, 0), *b = npu_ir_input(g, n, 1);
	const npu_ir_tensor *s = npu_ir_input(g, n, 2), *z = npu_ir_input(g, n, 3);
	const npu_ir_tensor *bias = npu_ir_input(g, n, 5);
	int64_t K = 0, N = 0, bits = 4, bs = 0;

	if (npu_ir_attr_int(n, "K", 0, &K) || npu_ir_attr_int(n, "N", 0, &N) ||
	    npu_ir_attr_int(n, "bits", 4, &bits) || npu_ir_attr_int(n, "block_size", 0, &bs))
		return "attributes K, N, bits and block_size must be integers: otherwise it is not";
	if (bits != 4 && bits != 8)
		return "only bits 4 and 8 are";
	if (bs < 16 || (bs & (bs - 1)))
		return "only a block_size that is a power of two >= 16 is";
	if (K <= 0 || N <= 0 || K % bs)
		return "only K a positive multiple of block_size is";
	if (npu_ir_input(g, n, 4))
		return "g_idx (act-order) is not";
	if (!a || !b || !s || a->dtype != NPU_DTYPE_FLOAT32 || s->dtype != NPU_DTYPE_FLOAT32)
		return "only float32 A and scales are";
	if (!npu_ir_is_const(b) || !npu_ir_is_const(s) || (z && !npu_ir_is_const(z)) ||
	    (bias && !npu_ir_is_const(bias)))
		return "only constant B, scales, zero points and bias are";
	if (b->dtype != NPU_DTYPE_UINT8 || npu_ir_numel(b) != N * K * bits / 8)
		return "only a uint8 B of N x K x bits / 8 bytes is";
	if (npu_ir_numel(s) != N * (K / bs))
		return "only N x K / block_size scales are";
	if (z && !((z->dtype == NPU_DTYPE_UINT8 &&
		    npu_ir_numel(z) == N * ((K / bs * bits + 7) / 8)) ||
		   (z->dtype == NPU_DTYPE_FLOAT32 && npu_ir_numel(z) == N * (K / bs))))
		return "only uint8 packed or float32 zero points (one per block) are";
	if (bias && (bias->dtype != NPU_DTYPE_FLOAT32 || npu_ir_numel(bias) != N))
		return "only a float32 bias of N elements is";
	return NULL;
}

npu_status npu_lower_matmul_nbits(struct npu_cc *cc, const npu_ir_node *n)
{
	const npu_ir_tensor *a = npu_ir_input(cc->g, n, 0), *b = npu_ir_input(cc->g, n, 1);
	const npu_ir_tensor *s = npu_ir_input(cc->g, n, 2), *z = npu_ir_input(cc->g, n, 3);
	const npu_ir_tensor *bias = npu_ir_input(cc->g, n, 5);
	struct qweight w = { .qdt = NPU_DT_UINT8, .alpha = 1.0f };
	int64_t bits = 4, kb;
	struct npu_loc la, ly;
	const char *why = npu_matmul_nbits_refusal(cc->g, n);
	npu_status st = NPU_OK;

	if (why)
		return npu_op_refuse(cc->g, n);
	npu_ir_attr_int(n, "K", 0, &w.K);
	npu_ir_attr_int(n, "N", 0, &w.N);
	npu_ir_attr_int(n, "bits", 4, &bits);
	npu_ir_attr_int(n, "block_size", 0, &w.block);
	w.bits = (unsigned)bits;
	kb = w.K / w.block;
	/* The codes as MatMulNBits packs them: [N][k_blocks][blob] is [N][K * bits / 8]. */
	w.q_off = npu_cc_const(cc, b->data, b->bytes, &st);
	if (!st)
		w.s_off = npu_cc_const(cc, s->data, (uint64_t)w.N * kb * 4, &st);
	if (!st && z && z->dtype == NPU_DTYPE_FLOAT32) {
		w.zdt = NPU_DT_FP32;
		w.z_off = npu_cc_const(cc, z->data, (uint64_t)w.N * kb * 4, &st);
	} else if (!st && z) {
		/* Packed 4-bit zero points unpacked to a byte per block: 1/block of the codes. */
		uint64_t zrow = (uint64_t)(kb * bits + 7) / 8;
		uint8_t *u = malloc((size_t)(w.N * kb));

		if (!u)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		for (int64_t r = 0; r < w.N; r++)
			for (int64_t j = 0; j < kb; j++) {
				uint8_t v = ((const uint8_t *)z->data)[r * zrow + (bits == 4 ? j / 2 : j)];

				u[r * kb + j] = bits == 4 ? (uint8_t)((v >> (j % 2 ? 4 : 0)) & 0xf) : v;
			}
		w.zdt = NPU_DT_UINT8;
		w.z_off = npu_cc_const(cc, u, (uint64_t)(w.N * kb), &st);
		free(u);
	} else {
		w.in_zp = 1 << (bits - 1);	/* the operator's default zero point */
	}
	if (!st && bias)
		st = const_bias(cc, bias, w.N, 1.0f, &w);
	if (st || (st = npu_cc_loc(cc, n->inputs[0], &la)) ||
	    (st = npu_cc_loc(cc, n->outputs[0], &ly)))
		return st;
	return qmatmul_tiles(cc, n, &w, npu_ir_numel(a) / w.K, la, ly);
}

/*
 * NPU_PRECISION_W8: a float MatMul or Gemm with a constant 2-D B ([K][N],
 * or [N][K] with @trans) as symmetric int8 rows per output channel,
 * scale max|w| / 127, widened on the chip.  Y = alpha (A W + beta C).
 */
npu_status npu_lower_matmul_w8(struct npu_cc *cc, const npu_ir_node *n, const npu_ir_tensor *b,
			       const npu_ir_tensor *c, int64_t M, int64_t K, int64_t N, bool trans,
			       float alpha, float beta)
{
	const float *src = b->data;
	struct qweight w = { .N = N, .K = K, .block = K, .bits = 8, .qdt = NPU_DT_INT8,
			     .alpha = alpha };
	int8_t *q = malloc((size_t)(N * K));
	float *sc = malloc((size_t)N * 4);
	struct npu_loc la, ly;
	npu_status st = NPU_OK;

	if (!q || !sc) {
		free(q);
		free(sc);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	for (int64_t j = 0; j < N; j++) {
		float mx = 0.0f;

		for (int64_t k = 0; k < K; k++)
			mx = fmaxf(mx, fabsf(trans ? src[j * K + k] : src[k * N + j]));
		sc[j] = mx > 0.0f ? mx / 127.0f : 1.0f;
		for (int64_t k = 0; k < K; k++) {
			float v = nearbyintf((trans ? src[j * K + k] : src[k * N + j]) / sc[j]);

			q[j * K + k] = (int8_t)(v > 127.0f ? 127 : v < -127.0f ? -127 : v);
		}
	}
	w.q_off = npu_cc_const(cc, q, (uint64_t)(N * K), &st);
	if (!st)
		w.s_off = npu_cc_const(cc, sc, (uint64_t)N * 4, &st);
	free(q);
	free(sc);
	/* The TCU scales acc + bias by alpha: pre-divide the bias. */
	if (!st && c)
		st = const_bias(cc, c, N, beta / (alpha != 0.0f ? alpha : 1.0f), &w);
	if (st || (st = npu_cc_loc(cc, n->inputs[0], &la)) ||
	    (st = npu_cc_loc(cc, n->outputs[0], &ly)))
		return st;
	return qmatmul_tiles(cc, n, &w, M, la, ly);
}
