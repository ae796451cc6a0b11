// SPDX-License-Identifier: MIT
/*
 * Shape rules of the detection and ranking operators (issue 17): TopK,
 * OneHot, Compress and NonZero.  Compress and NonZero have an output whose
 * size depends on the data: the rule gives a static shape when the inputs
 * that decide it are constants and otherwise refuses by name, saying why
 * and what to do (Unique and NonMaxSuppression, whose outputs are always
 * data-sized, are refused by the registry: compile/npu_ops.c).  NonZero's evaluator lives here too: it
 * needs this file's notion of "non-zero" and nothing else folds it.
 */
#include <string.h>

#include "ir/shape_util.h"

/* The host fallback (issue 17) is what runs data-sized outputs. */
#define NPU_SH_FALLBACK_HINT \
	"run it on the host with the CPU fallback (npu_compile_options.allow_cpu_fallback, npu-run --cpu-fallback)"

/* Element @i of constant @t is not zero (-0.0 is zero, NaN is not). */
static bool elem_nonzero(const npu_ir_tensor *t, int64_t i)
{
	size_t es = npu_dtype_size(t->dtype);
	const unsigned char *p = (const unsigned char *)t->data + (size_t)i * es;
	unsigned char acc = 0;

	for (size_t b = 0; b < es; b++)
		acc |= b == es - 1 && is_float(t->dtype) ? (unsigned char)(p[b] & 0x7f) : p[b];
	return acc != 0;
}

/*
 * TopK: Values like X with K along the axis, Indices int64.  K (input 1
 * from opset 10, attribute "k" before) must be a constant: it is the size
 * of the outputs.
 */
npu_status npu_ir_shape_topk(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t axis, k = -1, dims[NPU_MAX_RANK];
	int a = 0, cnt;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_ir_attr_int(n, "axis", -1, &axis);
	if (!st)
		st = npu_sh_need_rank(n, x, 1, NPU_MAX_RANK);
	if (!st)
		st = npu_sh_axis(n, axis, x->rank, &a);
	if (!st && n->opset < 10)
		st = npu_ir_attr_int(n, "k", -1, &k);
	else if (!st && !in(g, n, 1))
		st = npu_sh_err(n, NPU_ERR_FORMAT, "TopK needs its input K");
	else if (!st)
		st = npu_sh_const_ints(g, n, 1, &k, 1, &cnt);
	if (st)
		return st;
	if (k < 0 || k > x->dims[a])
		return npu_sh_err(n, NPU_ERR_SHAPE, "K = %lld is outside 0..%lld (the axis' size)",
				  (long long)k, (long long)x->dims[a]);
	memcpy(dims, x->dims, sizeof(dims));
	dims[a] = k;
	st = npu_sh_set_out(g, n, 0, x->dtype, x->rank, dims);
	if (!st)
		st = npu_sh_set_out(g, n, 1, NPU_DTYPE_INT64, x->rank, dims);
	return st;
}

/*
 * OneHot(indices, depth, values): rank + 1, depth (a constant) inserted at
 * axis, the dtype of values.
 */
npu_status npu_ir_shape_onehot(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *ind, *dep, *val;
	int64_t axis, depth = 0, dims[NPU_MAX_RANK];
	float fdepth;
	int a = 0, cnt, r;
	npu_status st = npu_sh_need_in(g, n, 0, &ind);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &dep);
	if (!st)
		st = npu_sh_need_in(g, n, 2, &val);
	if (!st)
		st = npu_ir_attr_int(n, "axis", -1, &axis);
	if (!st)
		st = npu_sh_need_rank(n, ind, 0, NPU_MAX_RANK - 1);
	if (!st)
		st = npu_sh_axis(n, axis, ind->rank + 1, &a);
	if (!st && npu_ir_numel(dep) != 1)
		st = npu_sh_err(n, NPU_ERR_SHAPE, "depth must hold one value");
	if (!st && npu_ir_numel(val) != 2)
		st = npu_sh_err(n, NPU_ERR_SHAPE, "values must hold two: [off_value, on_value]");
	if (!st && is_float(dep->dtype)) {
		st = npu_sh_const_floats(g, n, 1, &fdepth, 1, &cnt);
		depth = (int64_t)fdepth;
	} else if (!st) {
		st = npu_sh_const_ints(g, n, 1, &depth, 1, &cnt);
	}
	if (st)
		return st;
	if (depth < 1 || depth > NPU_IR_DIM_MAX)
		return npu_sh_err(n, NPU_ERR_SHAPE, "depth %lld is not a positive size",
				  (long long)depth);
	r = 0;
	for (int d = 0; d <= ind->rank; d++)
		dims[d] = d == a ? depth : ind->dims[r++];
	return npu_sh_set_out(g, n, 0, val->dtype, ind->rank + 1, dims);
}

/*
 * Compress(input, condition): the slices along axis (or the flattened
 * elements) where condition is true.  The output's size is the count of
 * true, so condition must be a constant.
 */
npu_status npu_ir_shape_compress(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *c;
	int64_t axis = 0, len, kept = 0, dims[NPU_MAX_RANK];
	int a = 0;
	bool flat = !npu_ir_attr_find(n, "axis");
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &c);
	if (!st && !flat)
		st = npu_ir_attr_int(n, "axis", 0, &axis);
	if (!st && !flat)
		st = npu_sh_axis(n, axis, x->rank, &a);
	if (st)
		return st;
	if (!c->data) {
		g->need_const = n->inputs[1];
		return npu_sh_err(n, NPU_ERR_SHAPE,
				  "condition '%s' must be a constant: the output has as many slices as it holds true, so its size would be known only at run time; %s",
				  c->name, NPU_SH_FALLBACK_HINT);
	}
	if (c->rank != 1)
		return npu_sh_err(n, NPU_ERR_SHAPE, "condition must be 1-D");
	len = flat ? npu_ir_numel(x) : x->dims[a];
	for (int64_t i = 0; i < c->dims[0] && i < len; i++)
		kept += elem_nonzero(c, i);
	if (flat)
		return npu_sh_set_out(g, n, 0, x->dtype, 1, &kept);
	memcpy(dims, x->dims, sizeof(dims));
	dims[a] = kept;
	return npu_sh_set_out(g, n, 0, x->dtype, x->rank, dims);
}

/* NonZero: [rank, count of non-zero elements], int64; only of a constant. */
npu_status npu_ir_shape_nonzero(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t dims[2], total, kept = 0;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (st)
		return st;
	if (!x->data) {
		g->need_const = n->inputs[0];
		return npu_sh_err(n, NPU_ERR_SHAPE,
				  "input '%s' is computed at run time: NonZero's output [rank, count] has as many columns as the data holds non-zero elements, known only at run time (a padded form would not be what ONNX returns); %s",
				  x->name, NPU_SH_FALLBACK_HINT);
	}
	total = npu_ir_numel(x);
	for (int64_t i = 0; i < total; i++)
		kept += elem_nonzero(x, i);
	dims[0] = x->rank ? x->rank : 1;
	dims[1] = kept;
	return npu_sh_set_out(g, n, 0, NPU_DTYPE_INT64, 2, dims);
}

/* NonZero of a constant: the coordinates of each non-zero element, row-major. */
npu_status npu_ir_eval_nonzero(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	int64_t total = npu_ir_numel(x), cnt = y->dims[1], j = 0;
	int64_t *o = out;

	for (int64_t i = 0; i < total && j < cnt; i++) {
		int64_t rest = i;

		if (!elem_nonzero(x, i))
			continue;
		for (int d = x->rank - 1; d >= 0; d--) {
			o[d * cnt + j] = rest % x->dims[d];
			rest /= x->dims[d];
		}
		if (!x->rank)
			o[j] = 0;
		j++;
	}
	return NPU_OK;
}
