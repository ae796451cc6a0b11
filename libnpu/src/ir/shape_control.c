// SPDX-License-Identifier: MIT
/*
 * Shape rule and evaluator of npu.IfSelect, what an ONNX If becomes
 * (onnx/npu_onnx_if.c): with a constant condition the output is the
 * chosen branch's value, whatever the other's shape; with a run-time one
 * both branches' values must agree in shape and dtype (a Where selects).
 */
#include <string.h>

#include "ir/shape_util.h"

/* The condition's value when it is a constant: 1 true, 0 false, -1 not constant. */
static int cond_value(const npu_ir_tensor *c)
{
	if (!npu_ir_is_const(c) || !c->data)
		return -1;
	return ((const uint8_t *)c->data)[0] != 0;
}

npu_status npu_ir_shape_if_select(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *c, *a, *b;
	npu_status st = npu_sh_need_in(g, n, 0, &c);
	int v;

	if (!st)
		st = npu_sh_need_in(g, n, 1, &a);
	if (!st)
		st = npu_sh_need_in(g, n, 2, &b);
	if (st)
		return st;
	if (c->dtype != NPU_DTYPE_BOOL || npu_ir_numel(c) != 1)
		return npu_sh_err(n, NPU_ERR_SHAPE, "the If condition must be one bool, not %s of %" PRId64
				  " elements", dts(c->dtype), npu_ir_numel(c));
	v = cond_value(c);
	if (v >= 0)
		return npu_sh_set_like(g, n, 0, v ? a : b);
	if (a->dtype != b->dtype || a->rank != b->rank ||
	    memcmp(a->dims, b->dims, (size_t)a->rank * sizeof(a->dims[0])))
		return npu_sh_err(n, NPU_ERR_UNSUPPORTED,
				  "the If condition is computed at run time and its branches give '%s' and '%s' of different shapes or dtypes: libnpu runs both branches and selects, which needs one shape (give the inputs' shapes with --shape if the condition depends on them)",
				  a->name, b->name);
	return npu_sh_set_like(g, n, 0, a);
}

npu_status npu_ir_eval_if_select(npu_ir_graph *g, const npu_ir_node *n, void *out)
{
	const npu_ir_tensor *c = npu_ir_input(g, n, 0);
	const npu_ir_tensor *x = npu_ir_input(g, n, cond_value(c) > 0 ? 1 : 2);

	memcpy(out, x->data, (size_t)npu_ir_numel(x) * npu_dtype_size(x->dtype));
	return NPU_OK;
}
