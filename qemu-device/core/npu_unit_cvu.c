// SPDX-License-Identifier: MIT
/*
 * Cube Vector Unit: elementwise, reduction, softmax, layer norm and
 * pooling operations on the executing TPB's HBSM, all computed in fp32.
 *
 * One iteration: every source is loaded as fp32 (dequantised with
 * NPU_CVU_F_IN_QUANT when its dtype is an integer), the operation writes
 * a dense fp32 result, the configurable pipeline stages run over it in
 * order, and the result is converted (requantised with
 * NPU_CVU_F_OUT_QUANT for an integer destination) and stored.  Sources
 * are always scratch copies, so a destination overlapping a source is
 * well defined.
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "npu_exec.h"
#include "npu_kern.h"

#define CVU_MAX_REDUCE_LEVELS 4

#define BIT(o) (1u << (o))

/* Operand slots each opcode reads (SRC*) and writes (DST); RMS norm has no beta. */
static unsigned op_operands(unsigned op, unsigned flags)
{
	switch (op) {
	case NPU_CVU_BINARY:
		return BIT(NPU_OPND_SRC0) | BIT(NPU_OPND_SRC1) | BIT(NPU_OPND_DST);
	case NPU_CVU_LAYERNORM:
		if (flags & NPU_CVU_F_RMS)
			return BIT(NPU_OPND_SRC0) | BIT(NPU_OPND_SRC1) | BIT(NPU_OPND_DST);
		return BIT(NPU_OPND_SRC0) | BIT(NPU_OPND_SRC1) |
		       BIT(NPU_OPND_SRC2) | BIT(NPU_OPND_DST);
	case NPU_CVU_SELECT:
		return BIT(NPU_OPND_SRC0) | BIT(NPU_OPND_SRC1) |
		       BIT(NPU_OPND_SRC2) | BIT(NPU_OPND_DST);
	case NPU_CVU_DEQUANT:	/* SRC2, the zero points, is optional */
		return BIT(NPU_OPND_SRC0) | BIT(NPU_OPND_SRC1) | BIT(NPU_OPND_DST);
	default:
		return BIT(NPU_OPND_SRC0) | BIT(NPU_OPND_DST);
	}
}

static bool op_is_rowwise(unsigned op)
{
	return op == NPU_CVU_SOFTMAX || op == NPU_CVU_LOGSOFTMAX ||
	       op == NPU_CVU_LAYERNORM;
}

/* ---- validation ---- */

static bool is_argreduce(unsigned fn)
{
	return fn == NPU_REDUCE_ARGMAX || fn == NPU_REDUCE_ARGMIN;
}

/*
 * SELECT copies element bits: the two values and the destination share a
 * dtype and nothing converts them (no quantisation, no stages).
 */
static int check_select(const struct npu_dinsn *di, const struct npu_shape *sh)
{
	const struct npu_hw_cvu_params *p = &di->raw.params.cvu;
	unsigned dt = di->opnd[NPU_OPND_DST].dtype;

	if (p->fn || p->nstages || (p->flags & (NPU_CVU_F_IN_QUANT | NPU_CVU_F_OUT_QUANT)))
		return NPU_IE_PARAM;
	if (di->opnd[NPU_OPND_SRC1].dtype != dt || di->opnd[NPU_OPND_SRC2].dtype != dt)
		return NPU_IE_DTYPE;
	for (unsigned o = NPU_OPND_SRC1; o <= NPU_OPND_DST; o++)
		if (!npu_shape_equal(&sh[NPU_OPND_SRC0], &sh[o]))
			return NPU_IE_SHAPE;
	return 0;
}

/*
 * DEQUANT (1.3): 8-bit or packed 4-bit weights, a float scale and an
 * optional zero point per destination element (per block through
 * broadcast levels), a float destination.  No stages, no framing flags:
 * the op is the framing.
 */
static int check_dequant(const struct npu_dinsn *di, const struct npu_shape *sh)
{
	const struct npu_hw_cvu_params *p = &di->raw.params.cvu;
	unsigned q = di->opnd[NPU_OPND_SRC0].dtype, s = di->opnd[NPU_OPND_SRC1].dtype;
	unsigned d = di->opnd[NPU_OPND_DST].dtype;
	bool nib = p->flags & NPU_CVU_F_NIBBLES;
	struct npu_shape x = sh[NPU_OPND_SRC0];

	if (p->fn || p->nstages || (p->flags & ~NPU_CVU_F_NIBBLES) || p->out_zp ||
	    p->in_scale || p->out_scale || p->round)
		return NPU_IE_PARAM;
	if (di->used[NPU_OPND_SRC2] && p->in_zp)
		return NPU_IE_PARAM;
	if ((q != NPU_DT_INT8 && q != NPU_DT_UINT8) || (nib && q != NPU_DT_UINT8) ||
	    (s != NPU_DT_FP32 && s != NPU_DT_BF16) ||
	    (d != NPU_DT_FP32 && d != NPU_DT_BF16 && d != NPU_DT_FP16))
		return NPU_IE_DTYPE;
	if (nib) {	/* a byte's two elements are neighbours along level 0 */
		if (!x.nd || x.d[0] > UINT32_MAX / 2)
			return NPU_IE_SHAPE;
		x.d[0] *= 2;
		x.elems *= 2;
	}
	if (!npu_shape_equal(&x, &sh[NPU_OPND_DST]) ||
	    !npu_shape_equal(&sh[NPU_OPND_SRC1], &sh[NPU_OPND_DST]) ||
	    (di->used[NPU_OPND_SRC2] && !npu_shape_equal(&sh[NPU_OPND_SRC2], &sh[NPU_OPND_DST])))
		return NPU_IE_SHAPE;
	return 0;
}

/*
 * Reserved fields, flags, stages and quantisation framing: everything
 * that does not depend on the opcode's geometry.
 */
static int check_params(const struct npu_dinsn *di)
{
	const struct npu_hw_cvu_params *p = &di->raw.params.cvu;
	unsigned dst = di->opnd[NPU_OPND_DST].dtype;
	int32_t lo, hi;

	if (p->flags & ~NPU_CVU_F_KNOWN)
		return NPU_IE_RESERVED;
	if (!npu_all_zero(p->reserved0, sizeof(p->reserved0)) ||
	    !npu_all_zero(p->reserved, sizeof(p->reserved)))
		return NPU_IE_RESERVED;
	if (p->nstages > NPU_CVU_STAGES)
		return NPU_IE_PARAM;
	for (unsigned s = 0; s < NPU_CVU_STAGES; s++) {
		const struct npu_hw_cvu_stage *st = &p->stage[s];

		if (!npu_all_zero(st->reserved, sizeof(st->reserved)))
			return NPU_IE_RESERVED;
		if (s >= p->nstages) {
			/* a disabled stage is reserved space */
			if (st->fn || st->imm)
				return NPU_IE_RESERVED;
			continue;
		}
		if (!npu_fn_is_unary(st->fn) && !npu_fn_is_binary(st->fn))
			return NPU_IE_PARAM;
	}
	if (p->round > NPU_ROUND_HALF_AWAY)
		return NPU_IE_PARAM;
	if ((p->flags & NPU_CVU_F_IN_QUANT) &&
	    !isfinite(npu_f32_from_bits(p->in_scale)))
		return NPU_IE_PARAM;
	if (p->flags & NPU_CVU_F_OUT_QUANT) {
		float s = npu_f32_from_bits(p->out_scale);

		if (!isfinite(s) || s == 0.0f)
			return NPU_IE_PARAM;
		if (npu_dtype_int_range(dst, &lo, &hi) &&
		    (p->out_zp < lo || p->out_zp > hi))
			return NPU_IE_PARAM;
	}
	if ((p->flags & NPU_CVU_F_COUNT_PAD) &&
	    (di->raw.opcode != NPU_CVU_POOL || p->fn != NPU_POOL_AVG))
		return NPU_IE_PARAM;
	if ((p->flags & NPU_CVU_F_RMS) && di->raw.opcode != NPU_CVU_LAYERNORM)
		return NPU_IE_PARAM;
	if ((p->flags & NPU_CVU_F_NIBBLES) && di->raw.opcode != NPU_CVU_DEQUANT)
		return NPU_IE_PARAM;
	if ((p->flags & NPU_CVU_F_EXCLUSIVE) && di->raw.opcode != NPU_CVU_SCAN)
		return NPU_IE_PARAM;
	if ((p->flags & NPU_CVU_F_REVERSE) && di->raw.opcode != NPU_CVU_SCAN &&
	    !(di->raw.opcode == NPU_CVU_REDUCE && is_argreduce(p->fn)))
		return NPU_IE_PARAM;
	return 0;
}

/* Pooling geometry is reserved outside POOL. */
static bool pool_params_zero(const struct npu_hw_cvu_params *p)
{
	return !p->kernel_h && !p->kernel_w && !p->stride_h && !p->stride_w &&
	       !p->pad_top && !p->pad_left && !p->pad_bottom &&
	       !p->pad_right && !p->dil_h && !p->dil_w;
}

/*
 * One pooling axis: the output extent must match and every window must
 * contain at least one real input tap (else MAX has no value and AVG
 * divides by zero).  With pad < dilated kernel extent that holds for
 * dilation 1; larger dilations can step over a short input entirely, so
 * each window is checked (O(1) per window).
 */
static int pool_axis(uint32_t in, uint32_t out, unsigned k, unsigned stride,
		     unsigned dil, unsigned pad0, unsigned pad1)
{
	int64_t ext = (int64_t)dil * (k - 1) + 1;
	int64_t span = (int64_t)in + pad0 + pad1 - ext;

	if (k < 1 || stride < 1 || dil < 1)
		return NPU_IE_PARAM;
	if (pad0 >= ext || pad1 >= ext)
		return NPU_IE_PARAM;
	if (span < 0 || span / stride + 1 != out)
		return NPU_IE_SHAPE;
	if (dil == 1)
		return 0;
	for (uint32_t o = 0; o < out; o++) {
		int64_t start = (int64_t)o * stride - pad0;
		/* first tap at or after 0 */
		int64_t i = start >= 0 ? 0 : (-start + dil - 1) / dil;

		if (i >= k || start + i * dil >= in)
			return NPU_IE_PARAM;
	}
	return 0;
}

static int check_pool(const struct npu_hw_cvu_params *p,
		      const struct npu_shape *x, const struct npu_shape *y)
{
	int ret;

	if (p->fn > NPU_POOL_AVG)
		return NPU_IE_PARAM;
	/* x [C, W, H] -> y [C, OW, OH] */
	if (x->nd != 3 || y->nd != 3 || x->d[0] != y->d[0])
		return NPU_IE_SHAPE;
	ret = pool_axis(x->d[2], y->d[2], p->kernel_h, p->stride_h, p->dil_h,
			p->pad_top, p->pad_bottom);
	if (ret)
		return ret;
	return pool_axis(x->d[1], y->d[1], p->kernel_w, p->stride_w, p->dil_w,
			 p->pad_left, p->pad_right);
}

static int cvu_validate(struct npu_task *task, struct npu_dinsn *di)
{
	const struct npu_hw_cvu_params *p = &di->raw.params.cvu;
	unsigned op = di->raw.opcode, need = op_operands(op, p->flags);
	struct npu_shape sh[NPU_OPNDS];
	const struct npu_shape *x = &sh[NPU_OPND_SRC0], *y = &sh[NPU_OPND_DST];
	bool uses_imm0 = false, uses_imm1 = false, uses_rl = false;
	unsigned r = p->reduce_levels;
	int ret;

	(void)task;
	/* operands: required ones present, the others entirely zero */
	for (unsigned o = 0; o < NPU_OPNDS; o++) {
		bool want = need & BIT(o);

		if (want && !di->used[o])
			return NPU_IE_SHAPE;
		if (op == NPU_CVU_DEQUANT && o == NPU_OPND_SRC2)
			continue;
		if (!want && !npu_opnd_slot_clear(di, o))
			return NPU_IE_RESERVED;
	}
	for (unsigned o = 0; o < NPU_OPNDS; o++) {
		if (!di->used[o])
			continue;
		if (di->opnd[o].space != NPU_SPACE_HBSM)
			return NPU_IE_SPACE;
		if (!npu_hw_dtype_size(di->opnd[o].dtype))
			return NPU_IE_DTYPE;
	}
	for (unsigned o = 0; o < NPU_OPNDS; o++) {
		npu_opnd_shape(di, o, &sh[o]);
		if (sh[o].elems > NPU_VIEW_MAX_ELEMS)
			return NPU_IE_SHAPE;
	}
	if (op == NPU_CVU_DEQUANT) {
		ret = check_dequant(di, sh);
		if (ret)
			return ret;
		if (p->imm[0] || p->imm[1] || p->reduce_levels || !pool_params_zero(p) ||
		    !npu_all_zero(p->reserved0, sizeof(p->reserved0)) ||
		    !npu_all_zero(p->reserved, sizeof(p->reserved)) ||
		    !npu_all_zero(p->stage, sizeof(p->stage)))
			return NPU_IE_RESERVED;
		return 0;
	}
	ret = check_params(di);
	if (ret)
		return ret;
	if (op != NPU_CVU_POOL && !pool_params_zero(p))
		return NPU_IE_PARAM;

	switch (op) {
	case NPU_CVU_UNARY:
		if (!npu_fn_is_unary(p->fn))
			return NPU_IE_PARAM;
		uses_imm0 = uses_imm1 = true;
		if (!npu_shape_equal(x, y))
			return NPU_IE_SHAPE;
		break;
	case NPU_CVU_BINARY:
		if (!npu_fn_is_binary(p->fn))
			return NPU_IE_PARAM;
		if (!npu_shape_equal(x, y) || !npu_shape_equal(&sh[NPU_OPND_SRC1], y))
			return NPU_IE_SHAPE;
		break;
	case NPU_CVU_REDUCE:
		if (p->fn >= NPU_REDUCE_END)
			return NPU_IE_PARAM;
		/* an index is an integer: written as one, unconverted */
		if (is_argreduce(p->fn) &&
		    (di->opnd[NPU_OPND_DST].dtype != NPU_DT_INT32 || p->nstages || (p->flags & NPU_CVU_F_OUT_QUANT)))
			return NPU_IE_DTYPE;
		uses_rl = true;
		if (r < 1 || r > CVU_MAX_REDUCE_LEVELS || r > x->nd)
			return NPU_IE_PARAM;
		if (r == x->nd) {
			/* everything reduced: a single-element destination */
			if (y->nd != 1 || y->d[0] != 1)
				return NPU_IE_SHAPE;
		} else {
			if (y->nd != x->nd - r)
				return NPU_IE_SHAPE;
			for (unsigned l = 0; l < y->nd; l++)
				if (y->d[l] != x->d[l + r])
					return NPU_IE_SHAPE;
		}
		break;
	case NPU_CVU_SOFTMAX:
	case NPU_CVU_LOGSOFTMAX:
	case NPU_CVU_LAYERNORM:
		if (p->fn)
			return NPU_IE_PARAM;
		uses_rl = true;
		if (r < 1 || r > CVU_MAX_REDUCE_LEVELS || r > x->nd)
			return NPU_IE_PARAM;
		if (!npu_shape_equal(x, y))
			return NPU_IE_SHAPE;
		if (op == NPU_CVU_LAYERNORM) {
			float eps = npu_f32_from_bits(p->imm[0]);

			uses_imm0 = true;
			if (!isfinite(eps) || eps < 0.0f)
				return NPU_IE_PARAM;
			if (!npu_shape_equal(&sh[NPU_OPND_SRC1], x) ||
			    (!(p->flags & NPU_CVU_F_RMS) &&
			     !npu_shape_equal(&sh[NPU_OPND_SRC2], x)))
				return NPU_IE_SHAPE;
		}
		break;
	case NPU_CVU_POOL:
		ret = check_pool(p, x, y);
		if (ret)
			return ret;
		break;
	case NPU_CVU_SELECT:
		ret = check_select(di, sh);
		if (ret)
			return ret;
		break;
	case NPU_CVU_SCAN:
		if (p->fn)
			return NPU_IE_PARAM;
		uses_rl = true;
		if (r < 1 || r > x->nd)
			return NPU_IE_PARAM;
		if (!npu_shape_equal(x, y))
			return NPU_IE_SHAPE;
		break;
	default:
		return NPU_IE_OPCODE;
	}
	/* parameters the opcode does not read must be zero */
	if ((!uses_imm0 && p->imm[0]) || (!uses_imm1 && p->imm[1]) ||
	    (!uses_rl && p->reduce_levels))
		return NPU_IE_PARAM;
	return 0;
}

/* ---- execution ---- */

static int status_or_internal(int st)
{
	return st ? st : NPU_TASK_INTERNAL;
}

/* Source operand o as fp32, dequantised if asked and integer. */
static const float *load_src(struct npu_iteration *it, unsigned o, size_t *n,
			     int *st)
{
	const struct npu_hw_cvu_params *p = &it->di->raw.params.cvu;
	struct npu_view v;
	float *f;

	npu_opnd_view(it, o, &v);
	*n = (size_t)npu_view_elems(&v);
	if (v.dtype == NPU_DT_FP32) {
		/*
		 * Already fp32: read it where it lies (on-chip and dense) or
		 * from the loaded copy, without a converting copy.  Only read:
		 * the result goes to its own buffer and is stored after.
		 */
		const void *raw = npu_view_load(it, &v, st);

		if (raw && !((uintptr_t)raw % _Alignof(float)))
			return raw;
		if (!raw) {
			*st = status_or_internal(*st);
			return NULL;
		}
	}
	f = npu_view_load_f32(it, &v, st);
	if (!f) {
		*st = status_or_internal(*st);
		return NULL;
	}
	if ((p->flags & NPU_CVU_F_IN_QUANT) && npu_dtype_is_int(v.dtype)) {
		float zp = (float)p->in_zp;
		float s = npu_f32_from_bits(p->in_scale);

		/* the fp32 copy is our own scratch: convert in place */
		for (size_t i = 0; i < *n; i++)
			f[i] = (f[i] - zp) * s;
	}
	return f;
}

/* Product of dims [from, to) of a view. */
static size_t dims_prod(const struct npu_view *v, unsigned from, unsigned to)
{
	size_t n = 1;

	for (unsigned l = from; l < to && l < v->ndims; l++)
		n *= v->dims[l];
	return n;
}

/*
 * Cycle model: the CVU streams max(input, output) bytes per pass at
 * NPU_M100_CVU_BYTES_PER_CYCLE; softmax and layer norm take three passes
 * (statistics, normalisation, write; RMS norm too, with no beta to read),
 * anything else one, and a non-empty
 * stage pipeline one more.  Plus HBSM latency and bank-conflict stalls.
 */
static void cvu_cost(struct npu_iteration *it)
{
	const struct npu_dinsn *di = it->di;
	const struct npu_hw_cvu_params *p = &di->raw.params.cvu;
	uint64_t in = 0, out = 0, conf = 0, passes;

	if (npu_cost_take_known(it))
		return;
	for (unsigned o = 0; o < NPU_OPNDS; o++) {
		struct npu_view v;
		uint64_t bytes;

		if (!di->used[o])
			continue;
		npu_opnd_view(it, o, &v);
		bytes = npu_view_elems(&v) * v.esz;
		if (o == NPU_OPND_DST)
			out = bytes;
		else
			in += bytes;
		conf += npu_cycles_hbsm_conflicts(&v, NPU_M100_HBSM_BANKS,
						  NPU_M100_HBSM_BANK_BYTES);
	}
	passes = op_is_rowwise(di->raw.opcode) ? 3 : 1;
	if (p->nstages)
		passes++;
	if (out > in)
		in = out;
	if (it->cost) {
		it->cost->cycles += passes * ((in + NPU_M100_CVU_BYTES_PER_CYCLE - 1) /
					       NPU_M100_CVU_BYTES_PER_CYCLE) +
				     NPU_M100_HBSM_LATENCY + conf;
		it->cost->conflicts += conf;
	}
}

/*
 * Bytes of a view's distinct elements: a broadcast level (stride 0) reads
 * its element once, as a DEQUANT reads one scale per block.
 */
static uint64_t view_distinct_bytes(const struct npu_view *v)
{
	uint64_t n = v->esz;

	for (unsigned l = 0; l < v->ndims; l++)
		if (v->strides[l])
			n *= v->dims[l];
	return n;
}

/*
 * DEQUANT's cost: one pass streaming the larger of what it reads (the
 * packed weights, one scale and zero point per block) and what it writes
 * (the widened weights), plus latency and bank-conflict stalls.
 */
static void dequant_cost(struct npu_iteration *it)
{
	const struct npu_dinsn *di = it->di;
	uint64_t in = 0, out = 0, conf = 0;

	if (npu_cost_take_known(it))
		return;
	for (unsigned o = 0; o < NPU_OPNDS; o++) {
		struct npu_view v;

		if (!di->used[o])
			continue;
		npu_opnd_view(it, o, &v);
		if (o == NPU_OPND_DST)
			out = npu_view_elems(&v) * v.esz;
		else
			in += view_distinct_bytes(&v);
		conf += npu_cycles_hbsm_conflicts(&v, NPU_M100_HBSM_BANKS,
						  NPU_M100_HBSM_BANK_BYTES);
	}
	if (out > in)
		in = out;
	if (it->cost) {
		it->cost->cycles += (in + NPU_M100_CVU_BYTES_PER_CYCLE - 1) /
				     NPU_M100_CVU_BYTES_PER_CYCLE + NPU_M100_HBSM_LATENCY + conf;
		it->cost->conflicts += conf;
	}
}

/* DEQUANT: (q - zp) * scale in fp32, stored in the destination's dtype. */
static int dequant_exec(struct npu_iteration *it)
{
	const struct npu_dinsn *di = it->di;
	const struct npu_hw_cvu_params *p = &di->raw.params.cvu;
	bool nib = p->flags & NPU_CVU_F_NIBBLES;
	struct npu_view qv, sv, zv, dv;
	const uint8_t *q;
	const float *s, *z = NULL;
	size_t n;
	float *y;
	int st = 0;

	dequant_cost(it);
	npu_opnd_view(it, NPU_OPND_SRC0, &qv);
	npu_opnd_view(it, NPU_OPND_SRC1, &sv);
	npu_opnd_view(it, NPU_OPND_DST, &dv);
	n = (size_t)npu_view_elems(&dv);
	q = npu_view_load(it, &qv, &st);
	s = q ? npu_view_load_f32(it, &sv, &st) : NULL;
	if (!s)
		return status_or_internal(st);
	if (di->used[NPU_OPND_SRC2]) {
		npu_opnd_view(it, NPU_OPND_SRC2, &zv);
		z = npu_view_load_f32(it, &zv, &st);
		if (!z)
			return status_or_internal(st);
	}
	y = npu_iter_alloc(it, n * sizeof(float));
	if (!y)
		return NPU_TASK_INTERNAL;
	for (size_t i = 0; i < n; i++) {
		int32_t v;

		if (nib)
			v = (q[i / 2] >> (i % 2 ? 4 : 0)) & 0xf;
		else if (qv.dtype == NPU_DT_INT8)
			v = (int8_t)q[i];
		else
			v = q[i];
		y[i] = ((float)v - (z ? z[i] : (float)p->in_zp)) * s[i];
	}
	return npu_view_store_f32(it, &dv, y, NPU_ROUND_HALF_EVEN);
}

/* The result in the destination's dtype, then the store. */
static int store_result(struct npu_iteration *it, const float *y, size_t n)
{
	const struct npu_hw_cvu_params *p = &it->di->raw.params.cvu;
	struct npu_view dv;
	int32_t lo, hi;
	float s;

	npu_opnd_view(it, NPU_OPND_DST, &dv);
	if (!(p->flags & NPU_CVU_F_OUT_QUANT) || !npu_dtype_int_range(dv.dtype, &lo, &hi))
		return npu_view_store_f32(it, &dv, y, p->round);

	s = npu_f32_from_bits(p->out_scale);
	if (dv.dtype == NPU_DT_INT32) {
		int32_t *q = npu_iter_alloc(it, n * sizeof(*q));

		if (!q)
			return NPU_TASK_INTERNAL;
		for (size_t i = 0; i < n; i++)
			q[i] = npu_requant(y[i] / s, p->round, p->out_zp, lo, hi);
		return npu_view_store(it, &dv, q);
	} else {
		uint8_t *q = npu_iter_alloc(it, n);

		if (!q)
			return NPU_TASK_INTERNAL;
		for (size_t i = 0; i < n; i++) {
			int32_t r = npu_requant(y[i] / s, p->round, p->out_zp, lo,
					    hi);

			/* two's complement byte for int8, plain for uint8 */
			q[i] = (uint8_t)(r & 0xff);
		}
		return npu_view_store(it, &dv, q);
	}
}

/* SELECT: element bits of src1 or src2, as src0 (any dtype) is non-zero. */
static int select_exec(struct npu_iteration *it)
{
	struct npu_view cv, av, bv, dv;
	const float *c;
	const uint8_t *a, *b;
	uint8_t *y;
	size_t n;
	int st = 0;

	npu_opnd_view(it, NPU_OPND_SRC0, &cv);
	npu_opnd_view(it, NPU_OPND_SRC1, &av);
	npu_opnd_view(it, NPU_OPND_SRC2, &bv);
	npu_opnd_view(it, NPU_OPND_DST, &dv);
	n = (size_t)npu_view_elems(&dv);
	c = npu_view_load_f32(it, &cv, &st);
	a = c ? npu_view_load(it, &av, &st) : NULL;
	b = a ? npu_view_load(it, &bv, &st) : NULL;
	y = b ? npu_iter_alloc(it, n * dv.esz) : NULL;
	if (!y)
		return status_or_internal(st);
	for (size_t i = 0; i < n; i++)
		memcpy(y + i * dv.esz, (c[i] != 0.0f ? a : b) + i * dv.esz, dv.esz);
	return npu_view_store(it, &dv, y);
}

/*
 * ADD, SUB and MUL of INT32 into INT32, nothing converted and no stages:
 * int32 arithmetic, wrapping modulo 2^32 (version 1.2), where fp32 would
 * round beyond 2^24.  MOD and FMOD likewise (version 1.4): exact
 * remainders, 0 for a zero divisor.
 */
static bool is_int_arith(const struct npu_dinsn *di)
{
	const struct npu_hw_cvu_params *p = &di->raw.params.cvu;

	return di->raw.opcode == NPU_CVU_BINARY &&
	       (p->fn == NPU_FN_ADD || p->fn == NPU_FN_SUB || p->fn == NPU_FN_MUL ||
		p->fn == NPU_FN_MOD || p->fn == NPU_FN_FMOD) &&
	       !p->nstages && !(p->flags & (NPU_CVU_F_IN_QUANT | NPU_CVU_F_OUT_QUANT)) &&
	       di->opnd[NPU_OPND_SRC0].dtype == NPU_DT_INT32 &&
	       di->opnd[NPU_OPND_SRC1].dtype == NPU_DT_INT32 &&
	       di->opnd[NPU_OPND_DST].dtype == NPU_DT_INT32;
}

static int int_arith_exec(struct npu_iteration *it)
{
	unsigned fn = it->di->raw.params.cvu.fn;
	struct npu_view av, bv, dv;
	const int32_t *a, *b;
	int32_t *y;
	size_t n;
	int st = 0;

	npu_opnd_view(it, NPU_OPND_SRC0, &av);
	npu_opnd_view(it, NPU_OPND_SRC1, &bv);
	npu_opnd_view(it, NPU_OPND_DST, &dv);
	n = (size_t)npu_view_elems(&dv);
	a = npu_view_load(it, &av, &st);
	b = a ? npu_view_load(it, &bv, &st) : NULL;
	y = b ? npu_iter_alloc(it, n * sizeof(*y)) : NULL;
	if (!y)
		return status_or_internal(st);
	for (size_t i = 0; i < n; i++) {
		uint32_t u = (uint32_t)a[i], v = (uint32_t)b[i];

		if (fn == NPU_FN_MOD || fn == NPU_FN_FMOD)
			y[i] = npu_kern_mod_i32(a[i], b[i], fn == NPU_FN_FMOD);
		else
			y[i] = (int32_t)(fn == NPU_FN_ADD ? u + v : fn == NPU_FN_SUB ? u - v : u * v);
	}
	return npu_view_store(it, &dv, y);
}

/* SCAN of int32 into int32, nothing converted: added exactly. */
static int scan_i32_exec(struct npu_iteration *it, size_t outer, size_t len, size_t inner)
{
	const struct npu_hw_cvu_params *p = &it->di->raw.params.cvu;
	struct npu_view xv, dv;
	const int32_t *x;
	int32_t *y;
	int st = 0;

	npu_opnd_view(it, NPU_OPND_SRC0, &xv);
	npu_opnd_view(it, NPU_OPND_DST, &dv);
	x = npu_view_load(it, &xv, &st);
	y = x ? npu_iter_alloc(it, outer * len * inner * sizeof(*y)) : NULL;
	if (!y)
		return status_or_internal(st);
	npu_kern_scan_i32(y, x, outer, len, inner, p->flags & NPU_CVU_F_EXCLUSIVE,
			  p->flags & NPU_CVU_F_REVERSE);
	return npu_view_store(it, &dv, y);
}

/*
 * A comparison of two INT32 sources (not dequantised) compares the
 * integers themselves: exact over all of int32, where fp32 would merge
 * neighbours beyond 2^24.  Returns false (and leaves @y) otherwise.
 */
static bool int_compare(struct npu_iteration *it, float *y, size_t n, int *st)
{
	const struct npu_dinsn *di = it->di;
	unsigned fn = di->raw.params.cvu.fn;
	struct npu_view av, bv;
	const int32_t *a, *b;

	if (fn < NPU_FN_EQUAL || fn > NPU_FN_GREATER_EQUAL ||
	    (di->raw.params.cvu.flags & NPU_CVU_F_IN_QUANT) ||
	    di->opnd[NPU_OPND_SRC0].dtype != NPU_DT_INT32 ||
	    di->opnd[NPU_OPND_SRC1].dtype != NPU_DT_INT32)
		return false;
	npu_opnd_view(it, NPU_OPND_SRC0, &av);
	npu_opnd_view(it, NPU_OPND_SRC1, &bv);
	a = npu_view_load(it, &av, st);
	b = a ? npu_view_load(it, &bv, st) : NULL;
	if (!b) {
		*st = status_or_internal(*st);
		return true;
	}
	for (size_t i = 0; i < n; i++) {
		bool r;

		switch (fn) {
		case NPU_FN_EQUAL: r = a[i] == b[i]; break;
		case NPU_FN_LESS: r = a[i] < b[i]; break;
		case NPU_FN_GREATER: r = a[i] > b[i]; break;
		case NPU_FN_LESS_EQUAL: r = a[i] <= b[i]; break;
		default: r = a[i] >= b[i]; break;
		}
		y[i] = r ? 1.0f : 0.0f;
	}
	return true;
}

static int cvu_exec(struct npu_iteration *it)
{
	const struct npu_dinsn *di = it->di;
	const struct npu_hw_cvu_params *p = &di->raw.params.cvu;
	unsigned op = di->raw.opcode;
	const float *src[NPU_OPND_SRC2 + 1] = { NULL };
	size_t nsrc[NPU_OPND_SRC2 + 1] = { 0 };
	struct npu_view xv, dv;
	const float *cur;
	float *y;
	size_t n, inner, outer;
	int st = 0;

	if (op == NPU_CVU_DEQUANT)
		return dequant_exec(it);
	cvu_cost(it);
	if (op == NPU_CVU_SELECT)
		return select_exec(it);
	if (is_int_arith(di))
		return int_arith_exec(it);
	npu_opnd_view(it, NPU_OPND_SRC0, &xv);
	npu_opnd_view(it, NPU_OPND_DST, &dv);
	if (op == NPU_CVU_SCAN && xv.dtype == NPU_DT_INT32 && dv.dtype == NPU_DT_INT32 &&
	    !p->nstages && !(p->flags & (NPU_CVU_F_IN_QUANT | NPU_CVU_F_OUT_QUANT)))
		return scan_i32_exec(it, dims_prod(&xv, p->reduce_levels, xv.ndims),
				     xv.dims[p->reduce_levels - 1],
				     dims_prod(&xv, 0, p->reduce_levels - 1));
	for (unsigned o = NPU_OPND_SRC0; o <= NPU_OPND_SRC2; o++) {
		if (!di->used[o])
			continue;
		src[o] = load_src(it, o, &nsrc[o], &st);
		if (!src[o])
			return st;
	}
	n = (size_t)npu_view_elems(&dv);
	y = npu_iter_alloc(it, n * sizeof(float));
	if (!y)
		return NPU_TASK_INTERNAL;
	/* rows for the row-wise ops: the inner reduce_levels dims are a row */
	inner = dims_prod(&xv, 0, p->reduce_levels);
	outer = dims_prod(&xv, p->reduce_levels, xv.ndims);

	cur = y;
	switch (op) {
	case NPU_CVU_UNARY:
		/*
		 * The identity's result is its source as loaded: stored (or
		 * staged) from there, without copying it first.  No stage
		 * writes its input, and a store reads all of an overlapping
		 * source before it writes.
		 */
		if (p->fn == NPU_FN_IDENTITY) {
			cur = src[0];
			break;
		}
		npu_kern_unary(y, src[0], n, p->fn, npu_f32_from_bits(p->imm[0]),
			       npu_f32_from_bits(p->imm[1]));
		break;
	case NPU_CVU_BINARY:
		if (int_compare(it, y, n, &st)) {
			if (st)
				return st;
			break;
		}
		npu_kern_binary(y, src[0], src[1], n, p->fn);
		break;
	case NPU_CVU_REDUCE:
		if (is_argreduce(p->fn) && xv.dtype == NPU_DT_INT32 &&
		    !(p->flags & NPU_CVU_F_IN_QUANT)) {
			/* int32 rows compare as integers: exact beyond 2^24 */
			const int32_t *xi = npu_view_load(it, &xv, &st);

			if (!xi)
				return status_or_internal(st);
			npu_kern_argreduce_i32(y, xi, outer, inner, p->fn == NPU_REDUCE_ARGMAX,
					       p->flags & NPU_CVU_F_REVERSE);
		} else if (is_argreduce(p->fn))
			npu_kern_argreduce(y, src[0], outer, inner, p->fn == NPU_REDUCE_ARGMAX,
					   p->flags & NPU_CVU_F_REVERSE);
		else
			npu_kern_reduce(y, src[0], outer, inner, p->fn);
		break;
	case NPU_CVU_SCAN:
		npu_kern_scan(y, src[0], outer, xv.dims[p->reduce_levels - 1],
			      dims_prod(&xv, 0, p->reduce_levels - 1),
			      p->flags & NPU_CVU_F_EXCLUSIVE, p->flags & NPU_CVU_F_REVERSE);
		break;
	case NPU_CVU_SOFTMAX:
	case NPU_CVU_LOGSOFTMAX:
		npu_kern_softmax(y, src[0], outer, inner,
				 op == NPU_CVU_LOGSOFTMAX);
		break;
	case NPU_CVU_LAYERNORM:
		if (p->flags & NPU_CVU_F_RMS)
			npu_kern_rmsnorm(y, src[0], src[1], outer, inner,
					 npu_f32_from_bits(p->imm[0]));
		else
			npu_kern_layernorm(y, src[0], src[1], src[2], outer, inner,
					   npu_f32_from_bits(p->imm[0]));
		break;
	case NPU_CVU_POOL: {
		struct npu_kern_pool kp = {
			.C = (int)xv.dims[0], .W = (int)xv.dims[1],
			.H = (int)xv.dims[2],
			.OW = (int)dv.dims[1], .OH = (int)dv.dims[2],
			.KH = p->kernel_h, .KW = p->kernel_w,
			.stride_h = p->stride_h, .stride_w = p->stride_w,
			.dil_h = p->dil_h, .dil_w = p->dil_w,
			.pad_top = p->pad_top, .pad_left = p->pad_left,
			.fn = p->fn,
			.count_pad = p->flags & NPU_CVU_F_COUNT_PAD,
		};

		npu_kern_pool2d(y, src[0], &kp);
		break;
	}
	default:
		/* validate accepted only the opcodes above */
		it->detail = NPU_IE_OPCODE;
		return NPU_TASK_ILLEGAL_INSN;
	}

	/* pipeline stages, ping-ponging between two buffers */
	if (p->nstages) {
		float *bufs[2] = { y, npu_iter_alloc(it, n * sizeof(float)) };

		if (!bufs[1])
			return NPU_TASK_INTERNAL;
		for (unsigned s = 0; s < p->nstages && s < NPU_CVU_STAGES; s++) {
			const struct npu_hw_cvu_stage *stg = &p->stage[s];
			float *next = bufs[(s + 1) & 1];
			float imm = npu_f32_from_bits(stg->imm);

			if (npu_fn_is_binary(stg->fn))
				npu_kern_binary_scalar(next, cur, imm, n, stg->fn);
			else
				npu_kern_unary(next, cur, n, stg->fn, imm, 0.0f);
			cur = next;
		}
	}
	return store_result(it, cur, n);
}

static const struct npu_unit_ops cvu_ops = {
	.validate = cvu_validate,
	.exec = cvu_exec,
};

const struct npu_unit_ops *npu_unit_cvu(unsigned opcode)
{
	switch (opcode) {
	case NPU_CVU_UNARY:
	case NPU_CVU_BINARY:
	case NPU_CVU_REDUCE:
	case NPU_CVU_SOFTMAX:
	case NPU_CVU_LOGSOFTMAX:
	case NPU_CVU_LAYERNORM:
	case NPU_CVU_POOL:
	case NPU_CVU_SELECT:
	case NPU_CVU_SCAN:
	case NPU_CVU_DEQUANT:
		return &cvu_ops;
	default:
		return NULL;
	}
}
