// SPDX-License-Identifier: MIT
/*
 * Shape rules of operators that only the CPU fallback runs (issue 17,
 * host/npu_host.h): their outputs' shapes are static, fixed here at
 * compile time like any other node's.
 */
#include "ir/shape_util.h"

npu_status npu_ir_shape_det(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_rank(n, x, 2, NPU_MAX_RANK);
	if (st)
		return st;
	if (x->dims[x->rank - 1] != x->dims[x->rank - 2])
		return npu_sh_err(n, NPU_ERR_SHAPE, "the last two dims (%" PRId64 ", %" PRId64
				  ") are not a square matrix", x->dims[x->rank - 2],
				  x->dims[x->rank - 1]);
	return npu_sh_set_out(g, n, 0, x->dtype, x->rank - 2, x->dims);
}

npu_status npu_ir_shape_roialign(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *rois, *bi;
	int64_t oh, ow, dims[4];
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &rois);
	if (!st)
		st = npu_sh_need_in(g, n, 2, &bi);
	if (!st)
		st = npu_sh_need_rank(n, x, 4, 4);
	if (!st)
		st = npu_sh_need_rank(n, rois, 2, 2);
	if (!st)
		st = npu_ir_attr_int(n, "output_height", 1, &oh);
	if (!st)
		st = npu_ir_attr_int(n, "output_width", 1, &ow);
	if (st)
		return st;
	if (rois->dims[1] != 4 || bi->rank != 1 || bi->dims[0] != rois->dims[0])
		return npu_sh_err(n, NPU_ERR_SHAPE, "rois must be [R, 4] and batch_indices [R]");
	if (oh < 1 || ow < 1)
		return npu_sh_err(n, NPU_ERR_SHAPE, "output_height and output_width must be positive");
	dims[0] = rois->dims[0];
	dims[1] = x->dims[1];
	dims[2] = oh;
	dims[3] = ow;
	return npu_sh_set_out(g, n, 0, x->dtype, 4, dims);
}
