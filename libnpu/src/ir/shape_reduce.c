// SPDX-License-Identifier: MIT
/*
 * Shape rule of ONNX's reductions (onnx/defs/reduction): ReduceSum,
 * ReduceMean, ReduceMax ... with axes as an attribute in old opsets and as
 * an input from opset 13 (ReduceSum) or 18 (the others) on.
 */
#include <string.h>

#include "ir/shape_util.h"

npu_status npu_ir_shape_reduce(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t axes[NPU_MAX_RANK * 2], keep, noop = 0, dims[NPU_MAX_RANK];
	bool red[NPU_MAX_RANK] = { false };
	int na, r = 0, since = !strcmp(n->op, "ReduceSum") ? 13 : 18;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_axes_list(g, n, "axes", 1, since, axes, &na);
	if (!st)
		st = npu_ir_attr_int(n, "keepdims", 1, &keep);
	if (!st && n->opset >= since)
		st = npu_ir_attr_int(n, "noop_with_empty_axes", 0, &noop);
	if (st)
		return st;
	if (na <= 0 && noop)
		return npu_sh_set_like(g, n, 0, x);
	for (int i = 0; i < na; i++) {
		int a = 0;

		st = npu_sh_axis(n, axes[i], x->rank, &a);
		if (st)
			return st;
		red[a] = true;
	}
	for (int d = 0; d < x->rank; d++) {
		if (na > 0 && !red[d])
			dims[r++] = x->dims[d];
		else if (keep)
			dims[r++] = 1;
	}
	return npu_sh_set_out(g, n, 0, x->dtype, r, dims);
}

/* ArgMax, ArgMin: int64 indices, the axis removed or kept as 1. */
npu_status npu_ir_shape_argreduce(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t axis, keep, dims[NPU_MAX_RANK];
	int a = 0, r = 0;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_ir_attr_int(n, "axis", 0, &axis);
	if (!st)
		st = npu_ir_attr_int(n, "keepdims", 1, &keep);
	if (!st)
		st = npu_sh_axis(n, axis, x->rank, &a);
	if (st)
		return st;
	for (int d = 0; d < x->rank; d++) {
		if (d != a)
			dims[r++] = x->dims[d];
		else if (keep)
			dims[r++] = 1;
	}
	return npu_sh_set_out(g, n, 0, NPU_DTYPE_INT64, r, dims);
}
