// SPDX-License-Identifier: MIT
/*
 * Shape rules of ONNX's logical operators (onnx/defs/logical): the
 * comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual) and the
 * boolean functions (Not, And, Or, Xor).  All give bool tensors, which
 * the NPU does not compute yet: exported models use them on shapes and
 * masks that fold to constants once the input shapes are fixed.
 */
#include <string.h>

#include "ir/shape_util.h"

static npu_status need_bool(const npu_ir_node *n, const npu_ir_tensor *t)
{
	if (t->dtype != NPU_DTYPE_BOOL)
		return npu_sh_err(n, NPU_ERR_SHAPE, "input '%s' is %s, expected bool", t->name,
				  dts(t->dtype));
	return NPU_OK;
}

/* Two inputs of one dtype, broadcast together; a bool output. */
static npu_status bool_binary(npu_ir_graph *g, npu_ir_node *n, bool want_bool)
{
	npu_ir_tensor *a, *b;
	int64_t dims[NPU_MAX_RANK];
	int r = 0;
	npu_status st = npu_sh_need_in(g, n, 0, &a);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &b);
	if (!st)
		st = npu_sh_same_dtype(n, a, b);
	if (!st && want_bool)
		st = need_bool(n, a);
	if (!st)
		st = npu_sh_broadcast(n, a, b, dims, &r);
	return st ? st : npu_sh_set_out(g, n, 0, NPU_DTYPE_BOOL, r, dims);
}

/* Equal, Less, Greater, LessOrEqual, GreaterOrEqual. */
npu_status npu_ir_shape_compare(npu_ir_graph *g, npu_ir_node *n)
{
	const npu_ir_tensor *a = in(g, n, 0);

	/* Only Equal compares bools (from opset 11). */
	if (a && a->dtype == NPU_DTYPE_BOOL && strcmp(n->op, "Equal"))
		return npu_sh_err(n, NPU_ERR_SHAPE, "input '%s' is bool, expected a number",
				  a->name);
	return bool_binary(g, n, false);
}

/* And, Or, Xor. */
npu_status npu_ir_shape_logical(npu_ir_graph *g, npu_ir_node *n)
{
	return bool_binary(g, n, true);
}

npu_status npu_ir_shape_not(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = need_bool(n, x);
	return st ? st : npu_sh_set_like(g, n, 0, x);
}

/* IsNaN, IsInf: a bool of the input's shape. */
npu_status npu_ir_shape_is_class(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	return st ? st : npu_sh_set_out(g, n, 0, NPU_DTYPE_BOOL, x->rank, x->dims);
}
