// SPDX-License-Identifier: MIT
/*
 * What the shape rules of every operator family (shape_*.c) share: errors
 * that name the node, input, dtype and rank checks, setting an output's
 * dtype and shape against what the model declares, constant operands that
 * fix a shape (shape, axes, pads ... as inputs or attributes), numpy
 * broadcasting and quantization parameters.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir/shape_util.h"

npu_status npu_sh_err(const npu_ir_node *n, npu_status s, const char *fmt, ...)
{
	char msg[512], lbl[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return npu_fail(s, "node %s (%s): %s", npu_ir_node_label(n, lbl, sizeof(lbl)), n->op, msg);
}

npu_status npu_sh_need_in(const npu_ir_graph *g, const npu_ir_node *n, int i,
			  npu_ir_tensor **out)
{
	*out = in(g, n, i);
	if (!*out)
		return npu_sh_err(n, NPU_ERR_FORMAT, "input %d is missing", i);
	return NPU_OK;
}

npu_status npu_sh_need_float(const npu_ir_node *n, const npu_ir_tensor *t)
{
	if (!is_float(t->dtype))
		return npu_sh_err(n, NPU_ERR_SHAPE, "input '%s' is %s, expected a float type",
				  t->name, dts(t->dtype));
	return NPU_OK;
}

npu_status npu_sh_same_dtype(const npu_ir_node *n, const npu_ir_tensor *a,
			     const npu_ir_tensor *b)
{
	if (a->dtype != b->dtype)
		return npu_sh_err(n, NPU_ERR_SHAPE, "inputs '%s' (%s) and '%s' (%s) differ in dtype",
				  a->name, dts(a->dtype), b->name, dts(b->dtype));
	return NPU_OK;
}

npu_status npu_sh_need_rank(const npu_ir_node *n, const npu_ir_tensor *t, int lo, int hi)
{
	if (t->rank < lo || t->rank > hi) {
		if (lo == hi)
			return npu_sh_err(n, NPU_ERR_SHAPE, "input '%s' has rank %d, expected %d",
					  t->name, t->rank, lo);
		return npu_sh_err(n, NPU_ERR_SHAPE, "input '%s' has rank %d, expected %d..%d",
				  t->name, t->rank, lo, hi);
	}
	return NPU_OK;
}

/* Normalize @axis against @rank (accepting -rank..rank-1). */
npu_status npu_sh_axis(const npu_ir_node *n, int64_t axis, int rank, int *out)
{
	if (axis < -rank || axis >= rank)
		return npu_sh_err(n, NPU_ERR_SHAPE, "axis %" PRId64 " is out of range for rank %d",
				  axis, rank);
	*out = (int)(axis < 0 ? axis + rank : axis);
	return NPU_OK;
}

/*
 * Set output @i's dtype and shape, checking them against any the model
 * declared.  Dims must be within NPU_IR_DIM_MAX.
 */
npu_status npu_sh_set_out(npu_ir_graph *g, const npu_ir_node *n, int i, npu_dtype dtype,
			  int rank, const int64_t *dims)
{
	npu_ir_tensor *t = npu_ir_output(g, n, i);
	npu_ir_tensor want;
	char a[160], b[160];
	int64_t numel = 1;

	if (!t)
		return NPU_OK;
	if (rank < 0 || rank > NPU_MAX_RANK)
		return npu_sh_err(n, NPU_ERR_UNSUPPORTED, "output '%s' would have rank %d (max %d)",
				  t->name, rank, NPU_MAX_RANK);
	for (int d = 0; d < rank; d++) {
		if (dims[d] < 0 || dims[d] > NPU_IR_DIM_MAX ||
		    (dims[d] && numel > NPU_IR_NUMEL_MAX / dims[d]))
			return npu_sh_err(n, NPU_ERR_SHAPE, "output '%s' would have dimension %d = %" PRId64
					  " (negative or too large)", t->name, d, dims[d]);
		numel *= dims[d];
	}
	memset(&want, 0, sizeof(want));
	want.dtype = dtype;
	want.rank = rank;
	if (rank)
		memcpy(want.dims, dims, (size_t)rank * sizeof(int64_t));
	if ((t->dtype && t->dtype != dtype) || (t->rank >= 0 && t->rank != rank))
		goto mismatch;
	for (int d = 0; t->rank >= 0 && d < rank && !g->shaping_dyn; d++)
		if (t->dims[d] >= 0 && t->dims[d] != dims[d])
			goto mismatch;
	t->dtype = dtype;
	t->rank = rank;
	for (int d = 0; d < NPU_MAX_RANK; d++)
		t->dims[d] = d < rank ? dims[d] : -1;
	return NPU_OK;
mismatch:
	return npu_sh_err(n, NPU_ERR_SHAPE, "output '%s' is %s but the model declares %s", t->name,
			  npu_ir_shape_str(&want, a, sizeof(a)), npu_ir_shape_str(t, b, sizeof(b)));
}

npu_status npu_sh_set_dyn_out(npu_ir_graph *g, const npu_ir_node *n, int i, npu_dtype dtype,
			      int rank, const int64_t *dims, uint16_t dyn)
{
	bool was = g->shaping_dyn;
	npu_status st;

	g->shaping_dyn = true;
	st = npu_sh_set_out(g, n, i, dtype, rank, dims);
	g->shaping_dyn = was;
	if (!st && npu_ir_output(g, n, i))
		npu_ir_output(g, n, i)->dyn = dyn;
	return st;
}

npu_status npu_sh_set_like(npu_ir_graph *g, const npu_ir_node *n, int i, const npu_ir_tensor *x)
{
	return npu_sh_set_out(g, n, i, x->dtype, x->rank, x->dims);
}

/* A constant int list from input @i: error unless constant. */
npu_status npu_sh_const_ints(npu_ir_graph *g, const npu_ir_node *n, int i,
			     int64_t *vals, int cap, int *count)
{
	const npu_ir_tensor *t = in(g, n, i);

	if (!t->data) {
		g->need_const = n->inputs[i];
		return npu_sh_err(n, NPU_ERR_SHAPE, "input '%s' must be a constant (it is computed at run time, so the output shape would not be static)",
				  t->name);
	}
	if (npu_ir_const_ints(t, vals, cap, count))
		return npu_sh_err(n, NPU_ERR_SHAPE, "input '%s' must be a constant int64 list of at most %d values",
				  t->name, cap);
	return NPU_OK;
}

npu_status npu_sh_const_floats(npu_ir_graph *g, const npu_ir_node *n, int i,
			       float *vals, int cap, int *count)
{
	const npu_ir_tensor *t = in(g, n, i);

	if (!t->data) {
		g->need_const = n->inputs[i];
		return npu_sh_err(n, NPU_ERR_SHAPE, "input '%s' must be a constant (it is computed at run time, so the output shape would not be static)",
				  t->name);
	}
	if (npu_ir_const_floats(t, vals, cap, count))
		return npu_sh_err(n, NPU_ERR_SHAPE, "input '%s' must be a constant float list of at most %d values",
				  t->name, cap);
	return NPU_OK;
}

/*
 * An "axes"-like list, from attribute @attr when opset < @input_since,
 * else from input @input (if present).  *@count = -1 when absent.
 */
npu_status npu_sh_axes_list(npu_ir_graph *g, const npu_ir_node *n, const char *attr,
			    int input, int input_since, int64_t *vals, int *count)
{
	const int64_t *a;
	npu_status st;

	*count = -1;
	if (n->opset >= input_since) {
		if (!in(g, n, input))
			return NPU_OK;
		return npu_sh_const_ints(g, n, input, vals, NPU_MAX_RANK * 2, count);
	}
	st = npu_ir_attr_ints(n, attr, &a, count);
	if (st)
		return st;
	if (*count > NPU_MAX_RANK * 2)
		return npu_sh_err(n, NPU_ERR_SHAPE, "attribute '%s' has %d values", attr, *count);
	for (int i = 0; i < *count; i++)
		vals[i] = a[i];
	return NPU_OK;
}

/* Numpy broadcast of @a and @b into @dims/@rank. */
npu_status npu_sh_broadcast(const npu_ir_node *n, const npu_ir_tensor *a, const npu_ir_tensor *b,
			    int64_t *dims, int *rank)
{
	int r = a->rank > b->rank ? a->rank : b->rank;

	for (int d = 0; d < r; d++) {
		int ia = d - (r - a->rank), ib = d - (r - b->rank);
		int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;

		if (da == db || db == 1)
			dims[d] = da;
		else if (da == 1)
			dims[d] = db;
		else {
			char x[160], y[160];

			return npu_sh_err(n, NPU_ERR_SHAPE, "shapes %s ('%s') and %s ('%s') do not broadcast",
					  npu_ir_shape_str(a, x, sizeof(x)), a->name,
					  npu_ir_shape_str(b, y, sizeof(y)), b->name);
		}
	}
	*rank = r;
	return NPU_OK;
}

/* @b broadcasts to @a's shape (unidirectional). */
npu_status npu_sh_broadcast_to(const npu_ir_node *n, const npu_ir_tensor *b, const npu_ir_tensor *a)
{
	int64_t dims[NPU_MAX_RANK];
	int r = 0;
	npu_status st = npu_sh_broadcast(n, a, b, dims, &r);

	if (st)
		return st;
	if (r != a->rank || memcmp(dims, a->dims, (size_t)r * sizeof(int64_t)))
		return npu_sh_err(n, NPU_ERR_SHAPE, "input '%s' does not broadcast to the shape of '%s'",
				  b->name, a->name);
	return NPU_OK;
}

/* Read a quantization scale/zero point pair into @t's quant when constant. */
npu_status npu_sh_note_quant(npu_ir_tensor *t, const npu_ir_tensor *scale,
			     const npu_ir_tensor *zp, int64_t axis)
{
	int64_t count;
	float *s;
	int32_t *z;
	npu_status st;

	if (!t || !scale || !scale->data || t->quant.count || (zp && !zp->data))
		return NPU_OK;
	count = npu_ir_numel(scale);
	if (axis < 0)
		axis += t->rank;
	if (count < 1 || count > (1 << 20) || (zp && npu_ir_numel(zp) != count) ||
	    !is_float(scale->dtype) ||
	    (count > 1 && (axis < 0 || axis >= t->rank || t->dims[axis] != count)))
		return NPU_OK;
	s = malloc((size_t)count * sizeof(*s));
	z = calloc((size_t)count, sizeof(*z));
	if (!s || !z) {
		free(s);
		free(z);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	for (int64_t i = 0; i < count; i++) {
		const char *p = zp ? (const char *)zp->data : NULL;
		uint16_t h;

		if (scale->dtype == NPU_DTYPE_FLOAT32) {
			memcpy(&s[i], (const char *)scale->data + 4 * i, 4);
		} else {
			memcpy(&h, (const char *)scale->data + 2 * i, 2);
			s[i] = scale->dtype == NPU_DTYPE_FLOAT16 ? npu_ir_f16_to_f32(h)
								 : npu_ir_bf16_to_f32(h);
		}
		if (!p)
			continue;
		if (zp->dtype == NPU_DTYPE_INT8)
			z[i] = (int8_t)p[i];
		else if (zp->dtype == NPU_DTYPE_UINT8)
			z[i] = (uint8_t)p[i];
		else if (zp->dtype == NPU_DTYPE_INT32)
			memcpy(&z[i], p + 4 * i, 4);
	}
	st = npu_ir_set_quant(t, (int)count, (int)axis, s, z);
	free(s);
	free(z);
	return st;
}
