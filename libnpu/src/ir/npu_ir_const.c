// SPDX-License-Identifier: MIT
/*
 * Constant evaluation: computes nodes whose inputs are all constant, so the
 * shape-computing subgraphs of exported models (Shape -> Gather -> Concat
 * -> Reshape, ConstantOfShape, Range ...) fold away and leave static
 * shapes.  npu_ir_infer_shapes() runs the op's shape rule first, so every
 * evaluator finds its output dtype and shape already set and validated.
 *
 * The evaluators (npu_ir_eval_*, declared in npu_ir_rules.h) are attached
 * to operators by the registry (compile/npu_ops.c): copy (Identity,
 * Reshape, Flatten, Squeeze, Unsqueeze), Shape, Size, Cast, Gather,
 * Concat, Slice, Transpose, Expand, Tile, Where, Add, Sub, Mul, Div, Mod,
 * Min, Max, Neg, Sqrt, the comparisons (Equal, Less, Greater,
 * LessOrEqual, GreaterOrEqual) and logical functions (Not, And, Or, Xor),
 * which give bools, ConstantOfShape, Range.  Data movement works on any
 * dtype, arithmetic on all the IR's dtypes (integers wrap, as the NPU's
 * do; float16/bfloat16 are computed in float32 and rounded), with numpy
 * broadcasting.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/npu_ir.h"
#include "ir/npu_ir_rules.h"

/* ---- half precision ---- */

float npu_ir_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
	uint32_t u;
	float f;

	if (exp == 0) {
		f = ldexpf((float)man, -24);
		return sign ? -f : f;
	}
	if (exp == 31)
		u = sign | 0x7f800000u | (man << 13);
	else
		u = sign | ((exp + 112) << 23) | (man << 13);
	memcpy(&f, &u, 4);
	return f;
}

uint16_t npu_ir_f32_to_f16(float f)
{
	uint32_t x, sign, exp, man, h, rem;
	int e;

	memcpy(&x, &f, 4);
	sign = (x >> 16) & 0x8000;
	exp = (x >> 23) & 0xff;
	man = x & 0x7fffff;
	if (exp == 0xff)
		return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
	e = (int)exp - 127 + 15;
	if (e >= 0x1f)
		return (uint16_t)(sign | 0x7c00);
	if (e <= 0) {
		int shift = 14 - e;
		uint32_t mid;

		if (e < -10)
			return (uint16_t)sign;
		man |= 0x800000;
		h = man >> shift;
		rem = man & ((1u << shift) - 1);
		mid = 1u << (shift - 1);
		if (rem > mid || (rem == mid && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
	h = sign | ((uint32_t)e << 10) | (man >> 13);
	rem = man & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
		h++;
	return (uint16_t)h;
}

float npu_ir_bf16_to_f32(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

uint16_t npu_ir_f32_to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	if ((u & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

/* ---- element access ---- */

static bool dt_float(npu_dtype t)
{
	return t == NPU_DTYPE_FLOAT32 || t == NPU_DTYPE_FLOAT16 || t == NPU_DTYPE_BFLOAT16 ||
	       t == NPU_DTYPE_FLOAT64;
}

static double ld_f(const void *p, npu_dtype t, int64_t i)
{
	const char *c = (const char *)p;
	uint16_t h;
	double d;
	float f;

	switch (t) {
	case NPU_DTYPE_FLOAT32:
		memcpy(&f, c + 4 * i, 4);
		return f;
	case NPU_DTYPE_FLOAT64:
		memcpy(&d, c + 8 * i, 8);
		return d;
	case NPU_DTYPE_FLOAT16:
		memcpy(&h, c + 2 * i, 2);
		return npu_ir_f16_to_f32(h);
	case NPU_DTYPE_BFLOAT16:
		memcpy(&h, c + 2 * i, 2);
		return npu_ir_bf16_to_f32(h);
	default:
		break;
	}
	return 0;
}

static int64_t ld_i(const void *p, npu_dtype t, int64_t i)
{
	const char *c = (const char *)p;
	int64_t v64;
	int32_t v32;
	uint32_t u32;
	int16_t v16;
	uint16_t u16;

	switch (t) {
	case NPU_DTYPE_INT64:
	case NPU_DTYPE_UINT64:	/* above INT64_MAX: wraps, as shapes never are */
		memcpy(&v64, c + 8 * i, 8);
		return v64;
	case NPU_DTYPE_INT32:
		memcpy(&v32, c + 4 * i, 4);
		return v32;
	case NPU_DTYPE_UINT32:
		memcpy(&u32, c + 4 * i, 4);
		return u32;
	case NPU_DTYPE_INT16:
		memcpy(&v16, c + 2 * i, 2);
		return v16;
	case NPU_DTYPE_UINT16:
		memcpy(&u16, c + 2 * i, 2);
		return u16;
	case NPU_DTYPE_INT8:
		return (int8_t)c[i];
	case NPU_DTYPE_UINT8:
		return (uint8_t)c[i];
	case NPU_DTYPE_BOOL:
		return c[i] != 0;
	default:
		break;
	}
	return 0;
}

static void st_i(void *p, npu_dtype t, int64_t i, int64_t v)
{
	char *c = (char *)p;
	int32_t v32 = (int32_t)(uint32_t)(uint64_t)v;
	uint16_t h, v16 = (uint16_t)(uint64_t)v;
	double d;
	float f;

	switch (t) {
	case NPU_DTYPE_INT64:
	case NPU_DTYPE_UINT64:
		memcpy(c + 8 * i, &v, 8);
		break;
	case NPU_DTYPE_INT32:
	case NPU_DTYPE_UINT32:
		memcpy(c + 4 * i, &v32, 4);
		break;
	case NPU_DTYPE_INT16:
	case NPU_DTYPE_UINT16:
		memcpy(c + 2 * i, &v16, 2);
		break;
	case NPU_DTYPE_FLOAT64:
		d = (double)v;
		memcpy(c + 8 * i, &d, 8);
		break;
	case NPU_DTYPE_INT8:
	case NPU_DTYPE_UINT8:
		c[i] = (char)(uint8_t)(uint64_t)v;
		break;
	case NPU_DTYPE_BOOL:
		c[i] = v != 0;
		break;
	case NPU_DTYPE_FLOAT32:
		f = (float)v;
		memcpy(c + 4 * i, &f, 4);
		break;
	case NPU_DTYPE_FLOAT16:
		h = npu_ir_f32_to_f16((float)v);
		memcpy(c + 2 * i, &h, 2);
		break;
	case NPU_DTYPE_BFLOAT16:
		h = npu_ir_f32_to_bf16((float)v);
		memcpy(c + 2 * i, &h, 2);
		break;
	}
}

/* Float to integer: truncate toward zero, saturate, NaN to 0. */
static int64_t f_to_i(double v)
{
	if (isnan(v))
		return 0;
	if (v >= 9.2233720368547758e18)
		return INT64_MAX;
	if (v <= -9.2233720368547758e18)
		return INT64_MIN;
	return (int64_t)v;
}

static void st_f(void *p, npu_dtype t, int64_t i, double v)
{
	char *c = (char *)p;
	uint16_t h;
	float f;

	switch (t) {
	case NPU_DTYPE_FLOAT32:
		f = (float)v;
		memcpy(c + 4 * i, &f, 4);
		break;
	case NPU_DTYPE_FLOAT64:
		memcpy(c + 8 * i, &v, 8);
		break;
	case NPU_DTYPE_FLOAT16:
		h = npu_ir_f32_to_f16((float)v);
		memcpy(c + 2 * i, &h, 2);
		break;
	case NPU_DTYPE_BFLOAT16:
		h = npu_ir_f32_to_bf16((float)v);
		memcpy(c + 2 * i, &h, 2);
		break;
	case NPU_DTYPE_BOOL:	/* any non-zero, NaN too, is true */
		c[i] = v != 0;
		break;
	default:
		st_i(p, t, i, f_to_i(v));
		break;
	}
}

/* Row-major strides in elements. */
static void strides_of(const npu_ir_tensor *t, int64_t *st)
{
	int64_t s = 1;

	for (int d = t->rank - 1; d >= 0; d--) {
		st[d] = s;
		s *= t->dims[d];
	}
}

/*
 * out[k] = in[base + sum_d idx_d * istride[d]] for every output index
 * (idx_0 .. idx_{rank-1}) in row-major order; @es bytes per element.
 */
static void copy_strided(char *out, const char *in, size_t es, int rank, const int64_t *od,
			 int64_t base, const int64_t *istride)
{
	int64_t idx[NPU_MAX_RANK] = { 0 }, off = base, total = 1;

	for (int d = 0; d < rank; d++)
		total *= od[d];
	for (int64_t k = 0; k < total; k++) {
		memcpy(out + (size_t)k * es, in + (size_t)off * es, es);
		for (int d = rank - 1; d >= 0; d--) {
			if (++idx[d] < od[d]) {
				off += istride[d];
				break;
			}
			off -= istride[d] * (od[d] - 1);
			idx[d] = 0;
		}
	}
}

/* ---- evaluators ---- */

static npu_status eval_fail(const npu_ir_node *n, const char *why)
{
	char lbl[96];

	return npu_fail(NPU_ERR_SHAPE, "node %s (%s): %s",
			npu_ir_node_label(n, lbl, sizeof(lbl)), n->op, why);
}

/* Output 0's bytes (its shape is known when an evaluator runs). */
static size_t out_bytes(const npu_ir_tensor *y)
{
	return (size_t)npu_ir_numel(y) * npu_dtype_size(y->dtype);
}

size_t npu_ir_const_eval_bytes(const npu_ir_graph *g, const npu_ir_node *n,
			       const struct npu_ir_op *op)
{
	size_t bytes = 0;

	if (!(op->eval_flags & NPU_IR_EVAL_OUTPUTS))
		return out_bytes(npu_ir_output(g, n, 0));
	for (int i = 0; i < n->n_outputs; i++)
		bytes += out_bytes(npu_ir_output(g, n, i));
	return bytes;
}

npu_status npu_ir_eval_copy(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	size_t bytes = out_bytes(y);

	if (x->bytes != bytes)
		return eval_fail(n, "input and output sizes differ");
	if (bytes)
		memcpy(out, x->data, bytes);
	return NPU_OK;
}

npu_status npu_ir_eval_shape(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	int64_t start, end;
	npu_status st;

	st = npu_ir_attr_int(n, "start", 0, &start);
	if (!st)
		st = npu_ir_attr_int(n, "end", x->rank, &end);
	if (st)
		return st;
	if (start < 0)
		start += x->rank;
	start = start < 0 ? 0 : start > x->rank ? x->rank : start;
	for (int64_t i = 0; i < y->dims[0]; i++)
		st_i(out, NPU_DTYPE_INT64, i, x->dims[start + i]);
	(void)end;
	return NPU_OK;
}

npu_status npu_ir_eval_size(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);

	st_i(out, y->dtype, 0, npu_ir_numel(x));
	return NPU_OK;
}

npu_status npu_ir_eval_cast(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	int64_t total = npu_ir_numel(y);

	for (int64_t i = 0; i < total; i++) {
		if (dt_float(x->dtype))
			st_f(out, y->dtype, i, ld_f(x->data, x->dtype, i));
		else
			st_i(out, y->dtype, i, ld_i(x->data, x->dtype, i));
	}
	return NPU_OK;
}

npu_status npu_ir_eval_gather(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *ind = npu_ir_input(g, n, 1);
	size_t es = npu_dtype_size(x->dtype);
	int64_t axis, outer = 1, inner = 1, m = npu_ir_numel(ind), k = 0;
	npu_status st = npu_ir_attr_int(n, "axis", 0, &axis);

	if (st)
		return st;
	if (axis < 0)
		axis += x->rank;
	npu_ir_axis_sizes(x, axis, &outer, &inner);
	for (int64_t o = 0; o < outer; o++) {
		for (int64_t j = 0; j < m; j++, k++) {
			int64_t idx = ld_i(ind->data, ind->dtype, j);

			if (idx < 0)
				idx += x->dims[axis];
			if (idx < 0 || idx >= x->dims[axis])
				return eval_fail(n, "index out of range");
			memcpy((char *)out + (size_t)(k * inner) * es,
			       (const char *)x->data + (size_t)((o * x->dims[axis] + idx) * inner) * es,
			       (size_t)inner * es);
		}
	}
	return NPU_OK;
}

npu_status npu_ir_eval_concat(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	size_t es = npu_dtype_size(y->dtype), off = 0;
	int64_t axis, outer = 1, inner = 1;
	npu_status st = npu_ir_attr_int(n, "axis", 0, &axis);

	if (st)
		return st;
	if (axis < 0)
		axis += y->rank;
	npu_ir_axis_sizes(y, axis, &outer, &inner);
	for (int64_t o = 0; o < outer; o++) {
		for (int i = 0; i < n->n_inputs; i++) {
			const npu_ir_tensor *x = npu_ir_input(g, n, i);
			size_t chunk;

			if (!x)
				continue;
			chunk = (size_t)(x->dims[axis] * inner) * es;
			memcpy((char *)out + off, (const char *)x->data + (size_t)o * chunk, chunk);
			off += chunk;
		}
	}
	return NPU_OK;
}

npu_status npu_ir_eval_slice(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0);
	int64_t start[NPU_MAX_RANK], step[NPU_MAX_RANK], len[NPU_MAX_RANK];
	int64_t xs[NPU_MAX_RANK], is[NPU_MAX_RANK], base = 0;
	npu_status st = npu_ir_slice_plan(g, n, start, step, len);

	if (st)
		return st;
	strides_of(x, xs);
	for (int d = 0; d < x->rank; d++) {
		base += start[d] * xs[d];
		is[d] = step[d] * xs[d];
	}
	copy_strided(out, x->data, npu_dtype_size(x->dtype), x->rank, len, base, is);
	return NPU_OK;
}

/* Split: each output's slab of every outer block, outputs one after another. */
npu_status npu_ir_eval_split(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0);
	size_t es = npu_dtype_size(x->dtype), off = 0;
	int64_t axis, outer = 1, inner = 1, at = 0;
	npu_status st = npu_ir_attr_int(n, "axis", 0, &axis);

	if (st)
		return st;
	if (axis < 0)
		axis += x->rank;
	npu_ir_axis_sizes(x, axis, &outer, &inner);
	for (int i = 0; i < n->n_outputs; i++) {
		int64_t d = npu_ir_output(g, n, i)->dims[axis];
		size_t chunk = (size_t)(d * inner) * es;

		for (int64_t o = 0; o < outer; o++, off += chunk)
			memcpy((char *)out + off,
			       (const char *)x->data + (size_t)((o * x->dims[axis] + at) * inner) * es,
			       chunk);
		at += d;
	}
	return NPU_OK;
}

npu_status npu_ir_eval_transpose(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	int perm[NPU_MAX_RANK];
	int64_t xs[NPU_MAX_RANK], is[NPU_MAX_RANK];
	npu_status st = npu_ir_transpose_perm(n, x->rank, perm);

	if (st)
		return st;
	strides_of(x, xs);
	for (int d = 0; d < x->rank; d++)
		is[d] = xs[perm[d]];
	copy_strided(out, x->data, npu_dtype_size(x->dtype), y->rank, y->dims, 0, is);
	return NPU_OK;
}

/* ---- broadcasting ---- */

/*
 * Strides of @x in elements aligned to @y's rank (numpy broadcasting):
 * 0 along the dimensions @x broadcasts or lacks.
 */
static void bcast_strides(const npu_ir_tensor *x, const npu_ir_tensor *y, int64_t *bs)
{
	int64_t ts[NPU_MAX_RANK];
	int r = y->rank;

	strides_of(x, ts);
	for (int d = 0; d < r; d++)
		bs[d] = 0;
	for (int d = 0; d < x->rank; d++)
		bs[r - x->rank + d] = x->dims[d] == 1 ? 0 : ts[d];
}

/*
 * Step the row-major output index @idx over @y's dims, moving the @n
 * input offsets @off by their strides @bs.
 */
static void bcast_step(const npu_ir_tensor *y, int64_t *idx, int n,
		       int64_t (*bs)[NPU_MAX_RANK], int64_t *off)
{
	for (int d = y->rank - 1; d >= 0; d--) {
		if (++idx[d] < y->dims[d]) {
			for (int i = 0; i < n; i++)
				off[i] += bs[i][d];
			return;
		}
		for (int i = 0; i < n; i++)
			off[i] -= bs[i][d] * (y->dims[d] - 1);
		idx[d] = 0;
	}
}

/* ---- elementwise functions of two operands ---- */

enum bin_op {
	BIN_ADD, BIN_SUB, BIN_MUL, BIN_DIV, BIN_MOD, BIN_FMOD, BIN_MIN, BIN_MAX,
	/* bool results */
	BIN_EQ, BIN_LT, BIN_GT, BIN_LE, BIN_GE, BIN_AND, BIN_OR, BIN_XOR,
};

static int64_t arith_i(enum bin_op op, int64_t a, int64_t b, bool *bad)
{
	uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
	int64_t r;

	switch (op) {
	case BIN_ADD: return (int64_t)(ua + ub);
	case BIN_SUB: return (int64_t)(ua - ub);
	case BIN_MUL: return (int64_t)(ua * ub);
	case BIN_MIN: return a < b ? a : b;
	case BIN_MAX: return a > b ? a : b;
	default: break;
	}
	if (b == 0) {
		*bad = true;
		return 0;
	}
	if (op == BIN_DIV)
		return a == INT64_MIN && b == -1 ? INT64_MIN : a / b;
	if (b == -1)
		return 0;
	r = a % b;
	/* Mod with fmod 0 takes the divisor's sign, as Python's %. */
	if (op == BIN_MOD && r && (r < 0) != (b < 0))
		r += b;
	return r;
}

static double arith_f(enum bin_op op, float a, float b)
{
	float r;

	switch (op) {
	case BIN_ADD: return a + b;
	case BIN_SUB: return a - b;
	case BIN_MUL: return a * b;
	case BIN_DIV: return a / b;
	case BIN_MIN:
	case BIN_MAX:
		if (isnan(a) || isnan(b))
			return NAN;
		return (op == BIN_MIN) == (a < b) ? a : b;
	default: break;
	}
	r = fmodf(a, b);
	if (op == BIN_MOD && r != 0 && (r < 0) != (b < 0))
		r += b;
	return r;
}

/* Comparisons and logical functions: 0 or 1. */
static int64_t test_i(enum bin_op op, int64_t a, int64_t b)
{
	switch (op) {
	case BIN_EQ: return a == b;
	case BIN_LT: return a < b;
	case BIN_GT: return a > b;
	case BIN_LE: return a <= b;
	case BIN_GE: return a >= b;
	case BIN_AND: return a && b;
	case BIN_OR: return a || b;
	default: return !a != !b;	/* BIN_XOR */
	}
}

static int64_t test_f(enum bin_op op, double a, double b)
{
	switch (op) {
	case BIN_EQ: return a == b;
	case BIN_LT: return a < b;
	case BIN_GT: return a > b;
	case BIN_LE: return a <= b;
	default: return a >= b;		/* BIN_GE */
	}
}

/*
 * Inputs @first.. of @n combined left to right with @op, numpy
 * broadcasting, into @out (output 0).  Bool outputs compare (or combine
 * bools); others compute in the output dtype's domain.
 */
static npu_status eval_nary(npu_ir_graph *g, const npu_ir_node *n, enum bin_op op, void *out)
{
	const npu_ir_tensor *y = npu_ir_output(g, n, 0), *x[2] = { NULL, NULL };
	int64_t (*bs)[NPU_MAX_RANK], *off, idx[NPU_MAX_RANK] = { 0 }, total = npu_ir_numel(y);
	int m = 0;
	bool yb = y->dtype == NPU_DTYPE_BOOL, fl, bad = false;

	bs = calloc((size_t)n->n_inputs + 1, sizeof(*bs));
	off = calloc((size_t)n->n_inputs + 1, sizeof(*off));
	if (!bs || !off) {
		free(bs);
		free(off);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory folding constants");
	}
	for (int i = 0; i < n->n_inputs; i++) {
		const npu_ir_tensor *t = npu_ir_input(g, n, i);

		if (!t)
			continue;
		if (m < 2)
			x[m] = t;
		bcast_strides(t, y, bs[m++]);
	}
	fl = dt_float(x[0]->dtype);
	for (int64_t k = 0; k < total; k++, bcast_step(y, idx, m, bs, off)) {
		int j = 0;

		if (yb) {
			/* Comparisons and logical functions have two inputs. */
			if (fl)
				st_i(out, y->dtype, k, test_f(op, ld_f(x[0]->data, x[0]->dtype, off[0]),
							      ld_f(x[1]->data, x[1]->dtype, off[1])));
			else
				st_i(out, y->dtype, k, test_i(op, ld_i(x[0]->data, x[0]->dtype, off[0]),
							      ld_i(x[1]->data, x[1]->dtype, off[1])));
			continue;
		}
		if (fl) {
			double v = 0;

			for (int i = 0; i < n->n_inputs; i++) {
				const npu_ir_tensor *t = npu_ir_input(g, n, i);
				float f;

				if (!t)
					continue;
				f = (float)ld_f(t->data, t->dtype, off[j]);
				v = j++ ? arith_f(op, (float)v, f) : f;
			}
			st_f(out, y->dtype, k, v);
		} else {
			int64_t v = 0;

			for (int i = 0; i < n->n_inputs; i++) {
				const npu_ir_tensor *t = npu_ir_input(g, n, i);
				int64_t e;

				if (!t)
					continue;
				e = ld_i(t->data, t->dtype, off[j]);
				v = j++ ? arith_i(op, v, e, &bad) : e;
			}
			st_i(out, y->dtype, k, v);
		}
	}
	free(bs);
	free(off);
	if (bad)
		return eval_fail(n, "integer division by zero in a constant expression");
	return NPU_OK;
}

npu_status npu_ir_eval_add(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	return eval_nary(g, n, BIN_ADD, out);
}

npu_status npu_ir_eval_sub(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	return eval_nary(g, n, BIN_SUB, out);
}

npu_status npu_ir_eval_mul(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	return eval_nary(g, n, BIN_MUL, out);
}

npu_status npu_ir_eval_div(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	return eval_nary(g, n, BIN_DIV, out);
}

npu_status npu_ir_eval_mod(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	int64_t fmod;
	npu_status st = npu_ir_attr_int(n, "fmod", 0, &fmod);

	return st ? st : eval_nary(g, n, fmod ? BIN_FMOD : BIN_MOD, out);
}

npu_status npu_ir_eval_min(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	return eval_nary(g, n, BIN_MIN, out);
}

npu_status npu_ir_eval_max(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	return eval_nary(g, n, BIN_MAX, out);
}

npu_status npu_ir_eval_equal(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	return eval_nary(g, n, BIN_EQ, out);
}

npu_status npu_ir_eval_less(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	return eval_nary(g, n, BIN_LT, out);
}

npu_status npu_ir_eval_greater(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	return eval_nary(g, n, BIN_GT, out);
}

npu_status npu_ir_eval_less_equal(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	return eval_nary(g, n, BIN_LE, out);
}

npu_status npu_ir_eval_greater_equal(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	return eval_nary(g, n, BIN_GE, out);
}

npu_status npu_ir_eval_and(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	return eval_nary(g, n, BIN_AND, out);
}

npu_status npu_ir_eval_or(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	return eval_nary(g, n, BIN_OR, out);
}

npu_status npu_ir_eval_xor(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	return eval_nary(g, n, BIN_XOR, out);
}

npu_status npu_ir_eval_not(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	int64_t total = npu_ir_numel(y);

	for (int64_t i = 0; i < total; i++)
		st_i(out, y->dtype, i, !ld_i(x->data, x->dtype, i));
	return NPU_OK;
}

npu_status npu_ir_eval_sqrt(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	int64_t total = npu_ir_numel(y);

	for (int64_t i = 0; i < total; i++)
		st_f(out, y->dtype, i, sqrtf((float)ld_f(x->data, x->dtype, i)));
	return NPU_OK;
}

/* Where: X where the condition holds, else Y, the three broadcast together. */
npu_status npu_ir_eval_where(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	const npu_ir_tensor *c = npu_ir_input(g, n, 0), *a = npu_ir_input(g, n, 1);
	const npu_ir_tensor *b = npu_ir_input(g, n, 2), *y = npu_ir_output(g, n, 0);
	int64_t bs[3][NPU_MAX_RANK], off[3] = { 0 }, idx[NPU_MAX_RANK] = { 0 };
	int64_t total = npu_ir_numel(y);
	size_t es = npu_dtype_size(y->dtype);

	bcast_strides(c, y, bs[0]);
	bcast_strides(a, y, bs[1]);
	bcast_strides(b, y, bs[2]);
	for (int64_t k = 0; k < total; k++, bcast_step(y, idx, 3, bs, off)) {
		bool take_a = ld_i(c->data, c->dtype, off[0]) != 0;

		memcpy((char *)out + (size_t)k * es,
		       (const char *)(take_a ? a : b)->data + (size_t)off[take_a ? 1 : 2] * es, es);
	}
	return NPU_OK;
}

/* Expand: input 0 broadcast to the output's shape. */
npu_status npu_ir_eval_expand(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	int64_t bs[1][NPU_MAX_RANK], off[1] = { 0 }, idx[NPU_MAX_RANK] = { 0 };
	int64_t total = npu_ir_numel(y);
	size_t es = npu_dtype_size(y->dtype);

	bcast_strides(x, y, bs[0]);
	for (int64_t k = 0; k < total; k++, bcast_step(y, idx, 1, bs, off))
		memcpy((char *)out + (size_t)k * es, (const char *)x->data + (size_t)off[0] * es, es);
	return NPU_OK;
}

/* Tile: output index i reads input index i modulo the input's dims. */
npu_status npu_ir_eval_tile(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	int64_t xs[NPU_MAX_RANK], idx[NPU_MAX_RANK] = { 0 }, total = npu_ir_numel(y);
	size_t es = npu_dtype_size(y->dtype);

	strides_of(x, xs);
	for (int64_t k = 0; k < total; k++) {
		int64_t off = 0;

		for (int d = 0; d < y->rank; d++)
			off += (idx[d] % x->dims[d]) * xs[d];
		memcpy((char *)out + (size_t)k * es, (const char *)x->data + (size_t)off * es, es);
		for (int d = y->rank - 1; d >= 0; d--) {
			if (++idx[d] < y->dims[d])
				break;
			idx[d] = 0;
		}
	}
	return NPU_OK;
}

npu_status npu_ir_eval_neg(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	int64_t total = npu_ir_numel(y);

	for (int64_t i = 0; i < total; i++) {
		if (dt_float(y->dtype))
			st_f(out, y->dtype, i, -ld_f(x->data, x->dtype, i));
		else
			st_i(out, y->dtype, i, (int64_t)(0 - (uint64_t)ld_i(x->data, x->dtype, i)));
	}
	return NPU_OK;
}

npu_status npu_ir_eval_constant_of_shape(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	const npu_ir_tensor *v, *y = npu_ir_output(g, n, 0);
	size_t es = npu_dtype_size(y->dtype);
	int64_t total = npu_ir_numel(y);
	npu_status st = npu_ir_attr_tensor(n, "value", &v);

	if (st)
		return st;
	if (!v || !v->data)
		return NPU_OK;	/* zeros: the buffer is calloc'd */
	for (int64_t i = 0; i < total; i++)
		memcpy((char *)out + (size_t)i * es, v->data, es);
	return NPU_OK;
}

npu_status npu_ir_eval_range(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	const npu_ir_tensor *s = npu_ir_input(g, n, 0), *d = npu_ir_input(g, n, 2);
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	int64_t total = npu_ir_numel(y);

	for (int64_t i = 0; i < total; i++) {
		if (dt_float(y->dtype))
			st_f(out, y->dtype, i, (float)(ld_f(s->data, s->dtype, 0) +
						       (double)i * ld_f(d->data, d->dtype, 0)));
		else
			st_i(out, y->dtype, i, (int64_t)((uint64_t)ld_i(s->data, s->dtype, 0) +
							 (uint64_t)i * (uint64_t)ld_i(d->data, d->dtype, 0)));
	}
	return NPU_OK;
}

/*
 * The windows of opset 17: w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N)
 * for n < size, N = size when periodic (the default), size - 1 when not.
 * Hann is (0.5, 0.5, 0), Hamming (25/46, 21/46, 0), Blackman (0.42, 0.5,
 * 0.08), as ONNX defines them; computed in double, stored in the output's
 * dtype.
 */
npu_status npu_ir_eval_window(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	int64_t size = npu_ir_numel(y), periodic = 1;
	double a0 = 0.5, a1 = 0.5, a2 = 0.0, den;
	npu_status st = npu_ir_attr_int(n, "periodic", 1, &periodic);

	if (st)
		return st;
	if (!strcmp(n->op, "HammingWindow")) {
		a0 = 25.0 / 46.0;
		a1 = 1.0 - a0;
	} else if (!strcmp(n->op, "BlackmanWindow")) {
		a0 = 0.42;
		a2 = 0.08;
	}
	den = (double)(periodic ? size : size - 1);
	for (int64_t i = 0; i < size; i++) {
		double x = den > 0 ? 2.0 * M_PI * (double)i / den : 0.0;

		st_f(out, y->dtype, i, a0 - a1 * cos(x) + a2 * cos(2.0 * x));
	}
	return NPU_OK;
}

/*
 * MelWeightMatrix: num_mel_bins triangles over the onesided spectrum
 * [dft_length / 2 + 1], their edges num_mel_bins + 2 points evenly spaced
 * on the mel scale mel(f) = 2595 log10(1 + f / 700) from lower_edge_hertz,
 * in steps of (mel(upper) - mel(lower)) / (num_mel_bins + 2) as ONNX's
 * reference spaces them, mapped to the spectrum bin
 * floor((dft_length + 1) f / sample_rate); each triangle rises from 0 at
 * its left edge to 1 at its centre and falls to 0 at its right edge.
 */
npu_status npu_ir_eval_mel_weight(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	const npu_ir_tensor *ti[5];
	int64_t mel = y->dims[1], bins = y->dims[0], dft, rate, *edge;
	double lo, hi, step;

	for (int i = 0; i < 5; i++)
		ti[i] = npu_ir_input(g, n, i);
	dft = ld_i(ti[1]->data, ti[1]->dtype, 0);
	rate = ld_i(ti[2]->data, ti[2]->dtype, 0);
	if (rate <= 0)
		return eval_fail(n, "sample_rate must be positive");
	lo = 2595.0 * log10(1.0 + ld_f(ti[3]->data, ti[3]->dtype, 0) / 700.0);
	hi = 2595.0 * log10(1.0 + ld_f(ti[4]->data, ti[4]->dtype, 0) / 700.0);
	step = (hi - lo) / (double)(mel + 2);
	edge = malloc((size_t)(mel + 2) * sizeof(*edge));
	if (!edge)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory folding constants");
	for (int64_t i = 0; i < mel + 2; i++) {
		double f = 700.0 * (pow(10.0, ((double)i * step + lo) / 2595.0) - 1.0);

		edge[i] = (int64_t)floor((double)(dft + 1) * f / (double)rate);
	}
	for (int64_t i = 0; i < bins * mel; i++)
		st_f(out, y->dtype, i, 0.0);
	for (int64_t m = 0; m < mel; m++) {
		int64_t l = edge[m], c = edge[m + 1], r = edge[m + 2];

		if (l < 0 || r >= bins || l > c || c > r) {
			free(edge);
			return eval_fail(n, "a mel band's edges fall outside the spectrum: check lower_edge_hertz, upper_edge_hertz and sample_rate");
		}
		if (c == l)
			st_f(out, y->dtype, c * mel + m, 1.0);
		for (int64_t j = l; c > l && j <= c; j++)
			st_f(out, y->dtype, j * mel + m, (double)(j - l) / (double)(c - l));
		for (int64_t j = c; j < r; j++)
			st_f(out, y->dtype, j * mel + m, (double)(r - j) / (double)(r - c));
	}
	free(edge);
	return NPU_OK;
}

/* ---- folding a node ---- */

bool npu_ir_const_can_eval(const npu_ir_graph *g, const npu_ir_node *n,
			   const struct npu_ir_op *op)
{
	const npu_ir_tensor *y = npu_ir_output(g, n, 0), *x = npu_ir_input(g, n, 0);

	/* Only the default domain spelled "": nodes that name "ai.onnx"
	 * explicitly are never folded (as before the registry). */
	if (n->domain[0] || !op || !op->eval)
		return false;
	if (!y || !npu_ir_shape_known(y) || !y->dtype || !x)
		return false;
	for (int i = 1; i < n->n_outputs; i++) {
		const npu_ir_tensor *t = npu_ir_output(g, n, i);

		if (!(op->eval_flags & NPU_IR_EVAL_OUTPUTS) ? t != NULL :
		    !t || !t->dtype || !npu_ir_shape_known(t))
			return false;
	}
	if (op->eval_flags & NPU_IR_EVAL_SHAPES)
		return npu_ir_shape_known(x);
	for (int i = 0; i < n->n_inputs; i++) {
		const npu_ir_tensor *t = npu_ir_input(g, n, i);

		if (t && !t->data)
			return false;
	}
	return true;
}

npu_status npu_ir_const_eval(npu_ir_graph *g, int node, const struct npu_ir_op *op)
{
	npu_ir_node *n = &g->nodes[node];
	size_t bytes;
	char *out;
	npu_status st;

	if (!npu_ir_const_can_eval(g, n, op))
		return eval_fail(n, "cannot be evaluated: its inputs are not all constant");
	bytes = npu_ir_const_eval_bytes(g, n, op);
	out = calloc(bytes ? bytes : 1, 1);
	if (!out)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory folding constants");
	st = op->eval(g, n, out);
	if (st) {
		free(out);
		return st;
	}
	if (!(op->eval_flags & NPU_IR_EVAL_OUTPUTS))
		return npu_ir_set_const_owned(g, n->outputs[0], out, bytes);
	/* Every output gets its own copy of its part. */
	bytes = 0;
	for (int i = 0; !st && i < n->n_outputs; i++) {
		size_t b = out_bytes(npu_ir_output(g, n, i));

		st = npu_ir_set_const(g, n->outputs[i], out + bytes, b);
		bytes += b;
	}
	free(out);
	return st;
}
