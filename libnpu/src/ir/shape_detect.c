// SPDX-License-Identifier: MIT
/*
 * Shape rules of the detection and ranking operators (issue 17): TopK,
 * OneHot, Compress, NonZero, NonMaxSuppression and Unique.  The last four
 * have an output whose size depends on the data: the rule gives a static
 * shape when the inputs that decide it are constants (Compress, NonZero)
 * and otherwise the bound of the output, its run-time dims marked
 * (npu_ir_tensor.dyn): the CPU fallback computes it and writes the actual
 * shape at run time (issue 17), and without the fallback the compiler
 * refuses it by name (compile/npu_cc.c).  NonZero's evaluator lives here
 * too: it needs this file's notion of "non-zero" and nothing else folds it.
 */
#include <string.h>

#include "ir/shape_util.h"

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
 * of the outputs; on a tensor of run-time size (the host runs the node) a
 * run-time K is bounded by the axis' bound.
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
	else if (!st && !in(g, n, 1)->data && g->shaping_dyn)
		k = x->dims[a];	/* K at run time after a run-time size: at most the axis (issue 17) */
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
	if (c->rank != 1)
		return npu_sh_err(n, NPU_ERR_SHAPE, "condition must be 1-D");
	len = flat ? npu_ir_numel(x) : x->dims[a];
	if (!c->data) {
		/* Run-time condition: at most every slice is kept (the host runs it). */
		if (flat)
			return npu_sh_set_dyn_out(g, n, 0, x->dtype, 1, &len, 1);
		memcpy(dims, x->dims, sizeof(dims));
		dims[a] = len;
		return npu_sh_set_dyn_out(g, n, 0, x->dtype, x->rank, dims, (uint8_t)(1u << a));
	}
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
		/* Run-time input: at most every element is non-zero (the host runs it). */
		dims[0] = x->rank ? x->rank : 1;
		dims[1] = npu_ir_numel(x);
		return npu_sh_set_dyn_out(g, n, 0, NPU_DTYPE_INT64, 2, dims, 2);
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

/*
 * NonMaxSuppression(boxes [B, N, 4], scores [B, C, N], max_output_boxes_per_class,
 * iou_threshold, score_threshold): selected_indices [S, 3] int64, S known
 * at run time, at most B * C * min(max_output_boxes_per_class, N) (N when
 * the maximum is computed at run time).
 */
npu_status npu_ir_shape_nms(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *b, *sc, *mx = in(g, n, 2);
	int64_t per = -1, dims[2];
	int cnt;
	npu_status st = npu_sh_need_in(g, n, 0, &b);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &sc);
	if (!st)
		st = npu_sh_need_rank(n, b, 3, 3);
	if (!st)
		st = npu_sh_need_rank(n, sc, 3, 3);
	if (st)
		return st;
	if (b->dims[2] != 4 || sc->dims[0] != b->dims[0] || sc->dims[2] != b->dims[1])
		return npu_sh_err(n, NPU_ERR_SHAPE,
				  "boxes must be [batches, boxes, 4] and scores [batches, classes, boxes]");
	if (!mx)
		per = 0;
	else if (mx->data && !npu_ir_const_ints(mx, &per, 1, &cnt) && cnt == 1 && per < 0)
		per = 0;
	if (per < 0 || per > b->dims[1])
		per = b->dims[1];
	dims[0] = b->dims[0] * sc->dims[1] * per;
	dims[1] = 3;
	return npu_sh_set_dyn_out(g, n, 0, NPU_DTYPE_INT64, 2, dims, 1);
}

/*
 * Unique(X; sorted, axis): Y, indices, inverse_indices, counts.  Y has at
 * most as many entries (slices along axis) as X, indices and counts as
 * many as Y; inverse_indices has one per entry of X, a static size.
 */
npu_status npu_ir_shape_unique(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t axis = 0, len, dims[NPU_MAX_RANK];
	int a = 0;
	bool flat = !npu_ir_attr_find(n, "axis");
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st && !flat)
		st = npu_ir_attr_int(n, "axis", 0, &axis);
	if (!st && !flat)
		st = npu_sh_need_rank(n, x, 1, NPU_MAX_RANK);
	if (!st && !flat)
		st = npu_sh_axis(n, axis, x->rank, &a);
	if (st)
		return st;
	len = flat ? npu_ir_numel(x) : x->dims[a];
	if (flat) {
		st = npu_sh_set_dyn_out(g, n, 0, x->dtype, 1, &len, 1);
	} else {
		memcpy(dims, x->dims, sizeof(dims));
		st = npu_sh_set_dyn_out(g, n, 0, x->dtype, x->rank, dims, (uint8_t)(1u << a));
	}
	if (!st)
		st = npu_sh_set_dyn_out(g, n, 1, NPU_DTYPE_INT64, 1, &len, 1);
	if (!st)
		st = npu_sh_set_out(g, n, 2, NPU_DTYPE_INT64, 1, &len);
	if (!st)
		st = npu_sh_set_dyn_out(g, n, 3, NPU_DTYPE_INT64, 1, &len, 1);
	return st;
}
