// SPDX-License-Identifier: MIT
/*
 * Tensor Compute Unit: MATMUL and CONV2D on the executing TPB's HBSM.
 *
 * One iteration computes a whole GEMM (or convolution) into a scratch
 * accumulator buffer (int32 for int8/uint8 inputs, fp32 for bf16/fp16),
 * then runs the FixPipe-style output stage over it (bias, accumulate,
 * scale, activation, requantisation) and stores the result through the
 * destination view.  Computing into scratch first means a destination
 * that overlaps a source never feeds back into the same iteration.
 *
 * Operand layouts (semantic dims, [0] innermost, i.e. row-major reversed):
 *   MATMUL  A [K, M]   B [N, K]   bias [N]   C [N, M]
 *   CONV2D  X [C, W, H]  Wt [OC, C/groups, KW, KH]  bias [OC]
 *           Y [OC, OW, OH]
 * which are exactly the dense row-major layouts the npu_kern_* kernels take.
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "npu_exec.h"
#include "npu_kern.h"


/* CONV2D geometry limits (strides, dilations, pads). */
#define TCU_CONV_MAX_STEP 64
#define TCU_CONV_MAX_PAD 64

/* Input kinds: which GEMM/conv kernel family runs. */
enum tcu_kind { TCU_INT8 = 1, TCU_BF16 = 2, TCU_FP16 = 3 };

/* di->priv layout, filled by validate. */
enum { TCU_PRIV_KIND = 0, TCU_PRIV_NCHAN = 1 };

static bool is_i8(unsigned dt)
{
	return dt == NPU_DT_INT8 || dt == NPU_DT_UINT8;
}

static bool in_range(unsigned dt, int32_t v)
{
	int32_t lo, hi;

	return npu_dtype_int_range(dt, &lo, &hi) && v >= lo && v <= hi;
}

/* ---- validation ---- */

/*
 * Everything both opcodes share: reserved fields, operand presence and
 * spaces, the dtype combination and the output-stage parameters.  The
 * number of output channels (N or OC) comes from the caller, which has
 * already checked the shapes.
 */
static int check_common(struct npu_task *task, struct npu_dinsn *di,
			uint32_t nchan)
{
	const struct npu_hw_tcu_params *p = &di->raw.params.tcu;
	unsigned a = di->opnd[NPU_OPND_SRC0].dtype;
	unsigned b = di->opnd[NPU_OPND_SRC1].dtype;
	unsigned c = di->opnd[NPU_OPND_DST].dtype;
	bool acc = p->flags & NPU_TCU_F_ACCUMULATE;
	bool scale = p->flags & NPU_TCU_F_SCALE;
	bool pc = p->flags & NPU_TCU_F_PER_CHANNEL;
	enum tcu_kind kind;

	/* dtype combination */
	if (is_i8(a) && is_i8(b))
		kind = TCU_INT8;
	else if (a == NPU_DT_BF16 && b == NPU_DT_BF16)
		kind = TCU_BF16;
	else if (a == NPU_DT_FP16 && b == NPU_DT_FP16)
		kind = TCU_FP16;
	else
		return NPU_IE_DTYPE;
	if (kind == TCU_INT8) {
		if (c != NPU_DT_INT8 && c != NPU_DT_UINT8 && c != NPU_DT_INT32)
			return NPU_IE_DTYPE;
		if (di->used[NPU_OPND_SRC2] &&
		    di->opnd[NPU_OPND_SRC2].dtype != NPU_DT_INT32)
			return NPU_IE_DTYPE;
	} else {
		if (c != NPU_DT_FP32 && c != NPU_DT_BF16 && c != NPU_DT_FP16)
			return NPU_IE_DTYPE;
		if (di->used[NPU_OPND_SRC2] &&
		    di->opnd[NPU_OPND_SRC2].dtype != NPU_DT_FP32)
			return NPU_IE_DTYPE;
	}
	/* Accumulating needs a destination that holds raw accumulators. */
	if (acc && c != NPU_DT_INT32 && c != NPU_DT_FP32)
		return NPU_IE_DTYPE;

	/* input zero points: only meaningful for integer inputs */
	if (kind == TCU_INT8) {
		if (!in_range(a, p->a_zp) || !in_range(b, p->b_zp))
			return NPU_IE_PARAM;
	} else if (p->a_zp || p->b_zp) {
		return NPU_IE_PARAM;
	}

	/* output stage */
	if (p->round > NPU_ROUND_HALF_AWAY)
		return NPU_IE_PARAM;
	if (!npu_fn_is_unary(p->act))
		return NPU_IE_PARAM;
	if (scale && pc)
		return NPU_IE_PARAM;
	/* Raw accumulators (ACCUMULATE, or an INT32 destination) bypass the
	 * output stage entirely, so asking for one is a contradiction. */
	if ((acc || c == NPU_DT_INT32) &&
	    (p->act != NPU_FN_IDENTITY || scale || pc))
		return NPU_IE_PARAM;
	if (scale && !isfinite(npu_f32_from_bits(p->out_scale)))
		return NPU_IE_PARAM;
	if (pc && (uint64_t)p->qscale_addr + (uint64_t)nchan * sizeof(float) >
			  npu_task_hbsm_size(task))
		return NPU_IE_PARAM;
	/* The output zero point exists only for int8/uint8 results. */
	if (c == NPU_DT_INT8 || c == NPU_DT_UINT8) {
		if (!in_range(c, p->out_zp))
			return NPU_IE_PARAM;
	} else if (p->out_zp) {
		return NPU_IE_PARAM;
	}

	di->priv[TCU_PRIV_KIND] = kind;
	di->priv[TCU_PRIV_NCHAN] = nchan;
	return 0;
}

/*
 * Prologue: reserved fields, required operands, spaces and size caps.
 * SRC0, SRC1 and DST are required; SRC2 (bias) is optional.  The shapes
 * of all four slots are returned (an unused slot has nd == 0).
 */
static int check_frame(const struct npu_dinsn *di, struct npu_shape sh[NPU_OPNDS])
{
	const struct npu_hw_tcu_params *p = &di->raw.params.tcu;

	if (p->flags & ~NPU_TCU_F_KNOWN)
		return NPU_IE_RESERVED;
	if (p->reserved0 || !npu_all_zero(p->reserved, sizeof(p->reserved)))
		return NPU_IE_RESERVED;
	for (unsigned o = 0; o < NPU_OPNDS; o++) {
		bool need = o != NPU_OPND_SRC2;

		if (!di->used[o]) {
			if (need)
				return NPU_IE_SHAPE;
			/* an unused slot with stray fields is malformed */
			if (!npu_opnd_slot_clear(di, o))
				return NPU_IE_RESERVED;
		}
	}
	for (unsigned o = 0; o < NPU_OPNDS; o++) {
		if (di->used[o] && di->opnd[o].space != NPU_SPACE_HBSM)
			return NPU_IE_SPACE;
	}
	for (unsigned o = 0; o < NPU_OPNDS; o++) {
		npu_opnd_shape(di, o, &sh[o]);
		if (sh[o].elems > NPU_VIEW_MAX_ELEMS)
			return NPU_IE_SHAPE;
	}
	return 0;
}

static int validate_matmul(struct npu_task *task, struct npu_dinsn *di)
{
	const struct npu_hw_tcu_params *p = &di->raw.params.tcu;
	struct npu_shape sh[NPU_OPNDS];
	const struct npu_shape *A = &sh[NPU_OPND_SRC0], *B = &sh[NPU_OPND_SRC1];
	const struct npu_shape *Z = &sh[NPU_OPND_SRC2], *C = &sh[NPU_OPND_DST];
	int ret;

	ret = check_frame(di, sh);
	if (ret)
		return ret;
	/* A [K, M], B [N, K], C [N, M], bias [N] */
	if (A->nd != 2 || B->nd != 2 || C->nd != 2)
		return NPU_IE_SHAPE;
	if (B->d[1] != A->d[0] || C->d[0] != B->d[0] || C->d[1] != A->d[1])
		return NPU_IE_SHAPE;
	if (di->used[NPU_OPND_SRC2] && (Z->nd != 1 || Z->d[0] != B->d[0]))
		return NPU_IE_SHAPE;
	/* convolution geometry has no meaning for a GEMM */
	if (p->stride_h || p->stride_w || p->dil_h || p->dil_w ||
	    p->pad_top || p->pad_left || p->pad_bottom || p->pad_right ||
	    p->groups)
		return NPU_IE_PARAM;
	return check_common(task, di, B->d[0]);
}

/* Output extent of one spatial axis, or -1 if no window fits. */
static int64_t conv_out(uint32_t in, unsigned pad0, unsigned pad1,
			unsigned dil, uint32_t k, unsigned stride)
{
	int64_t span = (int64_t)in + pad0 + pad1 - (int64_t)dil * (k - 1) - 1;

	return span < 0 ? -1 : span / stride + 1;
}

static int validate_conv2d(struct npu_task *task, struct npu_dinsn *di)
{
	const struct npu_hw_tcu_params *p = &di->raw.params.tcu;
	struct npu_shape sh[NPU_OPNDS];
	const struct npu_shape *X = &sh[NPU_OPND_SRC0], *Wt = &sh[NPU_OPND_SRC1];
	const struct npu_shape *Z = &sh[NPU_OPND_SRC2], *Y = &sh[NPU_OPND_DST];
	uint32_t C, OC;
	int ret;

	ret = check_frame(di, sh);
	if (ret)
		return ret;
	/* X [C, W, H], Wt [OC, C/g, KW, KH], Y [OC, OW, OH], bias [OC] */
	if (X->nd != 3 || Wt->nd != 4 || Y->nd != 3)
		return NPU_IE_SHAPE;
	C = X->d[0];
	OC = Y->d[0];
	if (p->stride_h < 1 || p->stride_h > TCU_CONV_MAX_STEP ||
	    p->stride_w < 1 || p->stride_w > TCU_CONV_MAX_STEP ||
	    p->dil_h < 1 || p->dil_h > TCU_CONV_MAX_STEP ||
	    p->dil_w < 1 || p->dil_w > TCU_CONV_MAX_STEP ||
	    p->pad_top > TCU_CONV_MAX_PAD || p->pad_bottom > TCU_CONV_MAX_PAD ||
	    p->pad_left > TCU_CONV_MAX_PAD || p->pad_right > TCU_CONV_MAX_PAD)
		return NPU_IE_PARAM;
	if (p->groups < 1 || C % p->groups || OC % p->groups)
		return NPU_IE_PARAM;
	if (Wt->d[0] != OC || Wt->d[1] != C / p->groups)
		return NPU_IE_SHAPE;
	if (conv_out(X->d[2], p->pad_top, p->pad_bottom, p->dil_h, Wt->d[3],
		     p->stride_h) != Y->d[2] ||
	    conv_out(X->d[1], p->pad_left, p->pad_right, p->dil_w, Wt->d[2],
		     p->stride_w) != Y->d[1])
		return NPU_IE_SHAPE;
	if (di->used[NPU_OPND_SRC2] && (Z->nd != 1 || Z->d[0] != OC))
		return NPU_IE_SHAPE;
	return check_common(task, di, OC);
}

/* ---- execution helpers ---- */

static int status_or_internal(int st)
{
	return st ? st : NPU_TASK_INTERNAL;
}

/*
 * npu_view_load, but never returning a pointer the kernels cannot
 * dereference as their element type: a dense view at an odd HBSM address
 * comes back as an unaligned pointer into the HBSM, which is copied.
 */
static const void *load_aligned(struct npu_iteration *it,
				const struct npu_view *v, int *st)
{
	size_t bytes = (size_t)npu_view_elems(v) * v->esz;
	const void *p = npu_view_load(it, v, st);
	void *q;

	if (!p) {
		*st = status_or_internal(*st);
		return NULL;
	}
	if ((uintptr_t)p % v->esz == 0)
		return p;
	q = npu_iter_alloc(it, bytes);
	if (!q) {
		*st = NPU_TASK_INTERNAL;
		return NULL;
	}
	memcpy(q, p, bytes);
	return q;
}

static float *load_f32(struct npu_iteration *it, const struct npu_view *v,
		       int *st)
{
	float *f = npu_view_load_f32(it, v, st);

	if (!f)
		*st = status_or_internal(*st);
	return f;
}

/*
 * An operand as a row-major matrix of dims[1] rows by dims[0] elements.
 * Rows that are contiguous but padded apart (a tile of a wider matrix)
 * are read in place with ld = row stride, which npu_view_dense() would
 * refuse; anything else is packed densely by the walker layer.
 */
static const void *load_matrix(struct npu_iteration *it,
			       const struct npu_view *v, long *ld, int *st)
{
	uint8_t *hbsm = npu_iter_hbsm(it);
	int64_t esz = v->esz, row = (int64_t)v->dims[0] * esz;
	int64_t s1 = v->dims[1] == 1 ? row : v->strides[1];

	if (hbsm && v->ndims == 2 &&
	    (v->strides[0] == esz || v->dims[0] == 1) &&
	    s1 >= row && s1 % esz == 0 &&
	    (uintptr_t)(hbsm + v->base) % (uintptr_t)esz == 0) {
		*ld = (long)(s1 / esz);
		npu_cost_load(it->cost, npu_view_elems(v) * v->esz);
		return hbsm + v->base;
	}
	*ld = (long)v->dims[0];
	return load_aligned(it, v, st);
}

/* Wrapping int32 addition (an int32 accumulator wraps; C's int does UB). */
static int32_t add_wrap(int32_t a, int32_t b)
{
	return (int32_t)((uint32_t)a + (uint32_t)b);
}

/*
 * A float TCU's bias (SRC2, fp32 [N]) for the GEMM or convolution to add
 * as it writes its sums, rather than in a pass of its own over them: NULL
 * with *@st 0 when the instruction has none or accumulates in int32 (the
 * output stage adds that one).  Loaded after the inputs, so a fault is
 * reported for the same operand as before.
 */
static const float *float_bias(struct npu_iteration *it, int *st)
{
	const struct npu_dinsn *di = it->di;
	struct npu_view zv;

	*st = 0;
	if (!di->used[NPU_OPND_SRC2] || di->priv[TCU_PRIV_KIND] == TCU_INT8)
		return NULL;
	npu_opnd_view(it, NPU_OPND_SRC2, &zv);
	return load_aligned(it, &zv, st);
}

/*
 * The output stage on n = rows * nchan raw accumulators (channel = index
 * % nchan), then the store.  @acc is int32 (integer inputs) or fp32; a
 * float one already holds its bias (float_bias).
 */
static int output_stage(struct npu_iteration *it, void *acc, size_t n,
			size_t nchan)
{
	const struct npu_dinsn *di = it->di;
	const struct npu_hw_tcu_params *p = &di->raw.params.tcu;
	bool int_acc = di->priv[TCU_PRIV_KIND] == TCU_INT8;
	struct npu_view cv;
	float *v, *w;
	int st = 0;

	if (n && !nchan)
		return NPU_TASK_INTERNAL;	/* walker counts are >= 1 */
	npu_opnd_view(it, NPU_OPND_DST, &cv);
	if (di->used[NPU_OPND_SRC2] && int_acc) {
		int32_t *a = acc;
		const int32_t *bias;
		struct npu_view zv;

		npu_opnd_view(it, NPU_OPND_SRC2, &zv);
		bias = load_aligned(it, &zv, &st);
		if (!bias)
			return st;
		/* Row by row (channel = index % nchan): the inner loop vectorizes. */
		for (size_t r = 0; r < n; r += nchan) {
			size_t m = n - r < nchan ? n - r : nchan;

			for (size_t c = 0; c < m; c++)
				a[r + c] = add_wrap(a[r + c], bias[c]);
		}
	}

	if (p->flags & NPU_TCU_F_ACCUMULATE) {
		/* dst (INT32 or FP32) += raw accumulator */
		const void *old = load_aligned(it, &cv, &st);

		if (!old)
			return st;
		if (int_acc) {
			int32_t *a = acc;
			const int32_t *d = old;

			for (size_t i = 0; i < n; i++)
				a[i] = add_wrap(d[i], a[i]);
		} else {
			float *a = acc;
			const float *d = old;

			for (size_t i = 0; i < n; i++)
				a[i] = d[i] + a[i];
		}
		return npu_view_store(it, &cv, acc);
	}
	if (cv.dtype == NPU_DT_INT32 ||
	    (cv.dtype == NPU_DT_FP32 && p->act == NPU_FN_IDENTITY &&
	     !(p->flags & (NPU_TCU_F_SCALE | NPU_TCU_F_PER_CHANNEL))))
		return npu_view_store(it, &cv, acc);

	/* v = acc * scale, in fp32 */
	if (int_acc) {
		const int32_t *a = acc;

		v = npu_iter_alloc(it, n * sizeof(float));
		if (!v)
			return NPU_TASK_INTERNAL;
		for (size_t i = 0; i < n; i++)
			v[i] = (float)a[i];
	} else {
		v = acc;
	}
	if (p->flags & NPU_TCU_F_SCALE) {
		float s = npu_f32_from_bits(p->out_scale);

		for (size_t i = 0; i < n; i++)
			v[i] *= s;
	} else if (p->flags & NPU_TCU_F_PER_CHANNEL) {
		const uint8_t *hbsm = npu_iter_hbsm(it);
		float *sc = npu_iter_alloc(it, nchan * sizeof(float));

		if (!hbsm || !sc)
			return NPU_TASK_INTERNAL;
		/* bounds checked by validate; memcpy: any alignment */
		memcpy(sc, hbsm + p->qscale_addr, nchan * sizeof(float));
		npu_cost_load(it->cost, nchan * sizeof(float));
		for (size_t r = 0; r < n; r += nchan) {
			size_t m = n - r < nchan ? n - r : nchan;

			for (size_t c = 0; c < m; c++)
				v[r + c] *= sc[c];
		}
	}
	if (p->act != NPU_FN_IDENTITY) {
		/* separate output buffer: the kernel makes no aliasing promise */
		w = npu_iter_alloc(it, n * sizeof(float));
		if (!w)
			return NPU_TASK_INTERNAL;
		npu_kern_unary(w, v, n, p->act, npu_f32_from_bits(p->act_alpha),
			       npu_f32_from_bits(p->act_beta));
		v = w;
	}

	if (cv.dtype == NPU_DT_INT8 || cv.dtype == NPU_DT_UINT8) {
		uint8_t *q = npu_iter_alloc(it, n);
		int32_t lo, hi;

		if (!q)
			return NPU_TASK_INTERNAL;
		npu_dtype_int_range(cv.dtype, &lo, &hi);
		for (size_t i = 0; i < n; i++) {
			int32_t r = npu_requant(v[i], p->round, p->out_zp, lo, hi);

			/* two's complement byte for int8, plain for uint8 */
			q[i] = (uint8_t)(r & 0xff);
		}
		return npu_view_store(it, &cv, q);
	}
	return npu_view_store_f32(it, &cv, v, p->round);
}

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

/*
 * Cycle model of one iteration: @groups independent GEMMs of M x N x K on
 * the 8 x 64 MAC array (4-element int8 dot products per MAC per cycle, 2
 * for 16-bit floats), each bounded below by streaming its activations and
 * weights from the HBSM; plus the HBSM latency and the bank conflicts of
 * every operand's access pattern (stall cycles).
 */
static void tcu_cost(struct npu_iteration *it, uint64_t M, uint64_t N,
		     uint64_t K, uint64_t groups, unsigned esz)
{
	const struct npu_dinsn *di = it->di;
	uint64_t dot = di->priv[TCU_PRIV_KIND] == TCU_INT8 ?
			       NPU_M100_TCU_DOT : NPU_M100_TCU_DOT / 2;
	uint64_t t, conf = 0;

	if (npu_cost_take_known(it))
		return;
	t = div_up(M, NPU_M100_TCU_ROWS) * div_up(N, NPU_M100_TCU_COLS) *
	    div_up(K, dot);
	if (div_up(M * K * esz, NPU_M100_TCU_ACT_BW) > t)
		t = div_up(M * K * esz, NPU_M100_TCU_ACT_BW);
	if (div_up(K * N * esz, NPU_M100_TCU_WGT_BW) > t)
		t = div_up(K * N * esz, NPU_M100_TCU_WGT_BW);
	t *= groups;
	for (unsigned o = 0; o < NPU_OPNDS; o++) {
		struct npu_view v;

		if (!di->used[o])
			continue;
		npu_opnd_view(it, o, &v);
		conf += npu_cycles_hbsm_conflicts(&v, NPU_M100_HBSM_BANKS,
						  NPU_M100_HBSM_BANK_BYTES);
	}
	if (it->cost) {
		it->cost->cycles += t + NPU_M100_HBSM_LATENCY + conf;
		it->cost->conflicts += conf;
		if (di->priv[TCU_PRIV_KIND] == TCU_INT8)
			it->cost->macs_int8 += M * N * K * groups;
		else
			it->cost->macs_float += M * N * K * groups;
	}
}

/* ---- execution ---- */

static int exec_matmul(struct npu_iteration *it)
{
	const struct npu_dinsn *di = it->di;
	const struct npu_hw_tcu_params *p = &di->raw.params.tcu;
	struct npu_view av, bv;
	unsigned kind = (unsigned)di->priv[TCU_PRIV_KIND];
	int M, N, K, st = 0;
	void *acc;

	npu_opnd_view(it, NPU_OPND_SRC0, &av);
	npu_opnd_view(it, NPU_OPND_SRC1, &bv);
	K = (int)av.dims[0];
	M = (int)av.dims[1];
	N = (int)bv.dims[0];
	tcu_cost(it, (uint64_t)M, (uint64_t)N, (uint64_t)K, 1, av.esz);

	/* int32 and fp32 accumulators are both 4 bytes */
	acc = npu_iter_alloc(it, (size_t)av.dims[1] * bv.dims[0] * 4);
	if (!acc)
		return NPU_TASK_INTERNAL;
	if (kind == TCU_FP16) {
		/* no fp16 GEMM: widen both (exactly) and use the fp32 one */
		const float *A = load_f32(it, &av, &st), *B, *bias;

		if (!A)
			return st;
		B = load_f32(it, &bv, &st);
		if (!B)
			return st;
		bias = float_bias(it, &st);
		if (st)
			return st;
		npu_kern_gemm_f32_bias(M, N, K, A, K, B, N, acc, N, false, bias);
	} else {
		long lda, ldb;
		const void *A = load_matrix(it, &av, &lda, &st), *B;
		const float *bias;

		if (!A)
			return st;
		B = load_matrix(it, &bv, &ldb, &st);
		if (!B)
			return st;
		bias = float_bias(it, &st);
		if (st)
			return st;
		if (kind == TCU_INT8)
			npu_kern_gemm_i8(M, N, K, A, lda,
					 av.dtype == NPU_DT_INT8, p->a_zp, B,
					 ldb, bv.dtype == NPU_DT_INT8, p->b_zp,
					 acc, N, false);
		else
			npu_kern_gemm_bf16_bias(M, N, K, A, lda, B, ldb, acc, N,
						false, bias);
	}
	return output_stage(it, acc, (size_t)av.dims[1] * bv.dims[0],
			    bv.dims[0]);
}

static int exec_conv2d(struct npu_iteration *it)
{
	const struct npu_dinsn *di = it->di;
	const struct npu_hw_tcu_params *p = &di->raw.params.tcu;
	struct npu_view xv, wv, yv;
	unsigned kind = (unsigned)di->priv[TCU_PRIV_KIND];
	struct npu_kern_conv kp;
	size_t n;
	void *acc;
	int st = 0;

	npu_opnd_view(it, NPU_OPND_SRC0, &xv);
	npu_opnd_view(it, NPU_OPND_SRC1, &wv);
	npu_opnd_view(it, NPU_OPND_DST, &yv);
	memset(&kp, 0, sizeof(kp));
	kp.C = (int)xv.dims[0];
	kp.W = (int)xv.dims[1];
	kp.H = (int)xv.dims[2];
	kp.KW = (int)wv.dims[2];
	kp.KH = (int)wv.dims[3];
	kp.OC = (int)yv.dims[0];
	kp.OW = (int)yv.dims[1];
	kp.OH = (int)yv.dims[2];
	kp.stride_h = p->stride_h;
	kp.stride_w = p->stride_w;
	kp.dil_h = p->dil_h;
	kp.dil_w = p->dil_w;
	kp.pad_top = p->pad_top;
	kp.pad_left = p->pad_left;
	kp.groups = p->groups;

	/* one GEMM per group: M = OH*OW, K = KH*KW*C/g, N = OC/g */
	tcu_cost(it, (uint64_t)kp.OH * (uint64_t)kp.OW,
		 (uint64_t)kp.OC / (uint64_t)kp.groups,
		 (uint64_t)kp.KH * (uint64_t)kp.KW * (uint64_t)kp.C /
			 (uint64_t)kp.groups,
		 (uint64_t)kp.groups, xv.esz);

	n = (size_t)yv.dims[2] * yv.dims[1] * yv.dims[0];
	acc = npu_iter_alloc(it, n * 4);
	if (!acc)
		return NPU_TASK_INTERNAL;
	if (kind == TCU_FP16) {
		const float *X = load_f32(it, &xv, &st), *Wt;

		if (!X)
			return st;
		Wt = load_f32(it, &wv, &st);
		if (!Wt)
			return st;
		kp.bias = float_bias(it, &st);
		if (st)
			return st;
		npu_kern_conv2d_f32(&kp, X, Wt, acc, false);
	} else {
		const void *X = load_aligned(it, &xv, &st), *Wt;

		if (!X)
			return st;
		Wt = load_aligned(it, &wv, &st);
		if (!Wt)
			return st;
		kp.bias = float_bias(it, &st);
		if (st)
			return st;
		if (kind == TCU_INT8)
			npu_kern_conv2d_i8(&kp, X, xv.dtype == NPU_DT_INT8,
					   p->a_zp, Wt, wv.dtype == NPU_DT_INT8,
					   p->b_zp, acc, false);
		else
			npu_kern_conv2d_bf16(&kp, X, Wt, acc, false);
	}
	return output_stage(it, acc, n, yv.dims[0]);
}

static const struct npu_unit_ops tcu_matmul_ops = {
	.validate = validate_matmul,
	.exec = exec_matmul,
};

static const struct npu_unit_ops tcu_conv2d_ops = {
	.validate = validate_conv2d,
	.exec = exec_conv2d,
};

const struct npu_unit_ops *npu_unit_tcu(unsigned opcode)
{
	switch (opcode) {
	case NPU_TCU_MATMUL: return &tcu_matmul_ops;
	case NPU_TCU_CONV2D: return &tcu_conv2d_ops;
	default: return NULL;
	}
}
