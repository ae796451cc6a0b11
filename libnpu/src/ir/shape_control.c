// SPDX-License-Identifier: MIT
/*
 * Shape rule and evaluator of npu.IfSelect, what an ONNX If becomes
 * (onnx/npu_onnx_if.c): with a constant condition the output is the
 * chosen branch's value, whatever the other's shape; with a run-time one
 * both branches' values must agree in shape and dtype (a Where selects).
 */
#include <string.h>

#include "ir/shape_util.h"
#include "onnx/npu_onnx_if.h"

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

npu_status npu_ir_shape_loop_begin(npu_ir_graph *g, npu_ir_node *n)
{
	const npu_ir_tensor *m = in(g, n, 0), *c = in(g, n, 1);
	npu_status st;

	if (m && (!is_int(m->dtype) || npu_ir_numel(m) != 1))
		return npu_sh_err(n, NPU_ERR_SHAPE, "the Loop's trip count M must be one int64");
	if (c && (c->dtype != NPU_DTYPE_BOOL || npu_ir_numel(c) != 1))
		return npu_sh_err(n, NPU_ERR_SHAPE, "the Loop's condition must be one bool");
	st = npu_sh_set_out(g, n, 0, NPU_DTYPE_INT64, 0, NULL);
	if (!st)
		st = npu_sh_set_out(g, n, 1, NPU_DTYPE_BOOL, 0, NULL);
	for (int k = 2; !st && k < n->n_inputs; k++) {
		npu_ir_tensor *v;

		if ((st = npu_sh_need_in(g, n, k, &v)))
			break;
		st = npu_sh_set_like(g, n, k, v);
	}
	return st;
}

npu_status npu_ir_shape_loop_end(npu_ir_graph *g, npu_ir_node *n)
{
	const npu_ir_attr *an = npu_ir_attr_find(n, NPU_LOOP_N), *ak = npu_ir_attr_find(n, NPU_LOOP_K);
	const npu_ir_attr *al = npu_ir_attr_find(n, NPU_LOOP_SCAN_LEN);
	const npu_ir_tensor *m = in(g, n, 0);
	int N = an ? (int)an->i : -1, K = ak ? (int)ak->i : -1;
	npu_status st = NPU_OK;

	if (N < 0 || K < 0 || n->n_inputs < 4 + 2 * N + K || n->n_outputs > N + K)
		return npu_sh_err(n, NPU_ERR_FORMAT, "malformed loop end");
	for (int k = 0; !st && k < N; k++) {
		npu_ir_tensor *v, *vo;

		if ((st = npu_sh_need_in(g, n, 3 + k, &v)) ||
		    (st = npu_sh_need_in(g, n, 4 + N + k, &vo)))
			break;
		if (v->dtype != vo->dtype || v->rank != vo->rank ||
		    memcmp(v->dims, vo->dims, (size_t)v->rank * sizeof(v->dims[0])))
			return npu_sh_err(n, NPU_ERR_UNSUPPORTED,
					  "loop-carried value %d ('%s') changes from %s of %d dims to '%s', %s of %d dims: libnpu keeps loop-carried values in device memory of one size (give the inputs' shapes with --shape if they decide it)",
					  k, v->name, dts(v->dtype), v->rank, vo->name, dts(vo->dtype),
					  vo->rank);
		if (k < n->n_outputs)
			st = npu_sh_set_like(g, n, k, v);
	}
	for (int k = 0; !st && k < K && N + k < n->n_outputs; k++) {
		npu_ir_tensor *y;
		int64_t dims[NPU_MAX_RANK], len = al && k < al->n ? al->ints[k] : -1;

		if (n->outputs[N + k] < 0)
			continue;
		if ((st = npu_sh_need_in(g, n, 4 + 2 * N + k, &y)))
			break;
		if (y->rank + 1 > NPU_MAX_RANK)
			return npu_sh_err(n, NPU_ERR_UNSUPPORTED, "scan output %d has too many dims", k);
		/* A constant trip count is the length (the loop must run that many times). */
		if (m && npu_ir_is_const(m) && m->data)
			len = m->dtype == NPU_DTYPE_INT32 ? *(const int32_t *)m->data :
							    *(const int64_t *)m->data;
		if (len < 0)
			return npu_sh_err(n, NPU_ERR_UNSUPPORTED,
					  "scan output %d ('%s') has as many rows as the Loop runs iterations, which only the run knows (its trip count is computed at run time): libnpu needs a fixed size; declare the output's first dimension in the model, or make the trip count a constant",
					  k, g->tensors[n->outputs[N + k]].name);
		dims[0] = len;
		memcpy(dims + 1, y->dims, (size_t)y->rank * sizeof(dims[0]));
		st = npu_sh_set_out(g, n, N + k, y->dtype, y->rank + 1, dims);
	}
	return st;
}
