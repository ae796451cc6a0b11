// SPDX-License-Identifier: MIT
/*
 * Float classification as comparisons the CVU runs (exact: IEEE compares):
 *
 *   IsNaN(x)  ->  Not(Equal(x, x))        a NaN is the one value unequal to itself
 *   IsInf(x)  ->  Or(Equal(x, +inf), Equal(x, -inf)), or one of them as
 *                 detect_positive / detect_negative say; neither: Equal(x,
 *                 NaN), false everywhere.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_rewrite_priv.h"

/* *@id = Equal(@x, the float32 scalar @v), a new bool tensor shaped as @x. */
static npu_status equal_scalar(npu_ir_graph *g, const char *name, int x, float v, int *id)
{
	const npu_ir_tensor *t = &g->tensors[x];
	int64_t dims[NPU_MAX_RANK];
	int rank = t->rank, c;
	float *val = malloc(sizeof(*val));
	npu_status st;

	if (!val)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	*val = v;
	for (int d = 0; d < rank; d++)
		dims[d] = t->dims[d];
	st = npu_rw_const(g, NPU_DTYPE_FLOAT32, 0, NULL, val, &c);
	if (!st)
		st = npu_rw_tensor(g, NPU_DTYPE_BOOL, rank, dims, id);
	return st ? st : npu_rw_op(g, "Equal", 13, name, (int[]){ x, c }, 2, id, 1, NULL);
}

/* The float32 input and the output of classification node @k, or false. */
static bool class_node(const npu_ir_graph *g, int k, int *x, int *y, char *name, size_t len)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *xt = npu_ir_input(g, n, 0);

	if (!xt || xt->dtype != NPU_DTYPE_FLOAT32 || n->n_outputs < 1 || n->outputs[0] < 0)
		return false;
	*x = n->inputs[0];
	*y = n->outputs[0];
	snprintf(name, len, "%s", n->name);
	return true;
}

npu_status npu_rewrite_isnan(npu_ir_graph *g, int k, bool *applied)
{
	char name[128];
	int x, y, e;
	npu_status st;

	*applied = false;
	if (!class_node(g, k, &x, &y, name, sizeof(name)))
		return NPU_OK;
	*applied = true;
	npu_rw_detach(g, k, y);
	g->nodes[k].dead = true;
	st = npu_rw_tensor(g, NPU_DTYPE_BOOL, g->tensors[x].rank, g->tensors[x].dims, &e);
	if (!st)
		st = npu_rw_op(g, "Equal", 13, name, (int[]){ x, x }, 2, &e, 1, NULL);
	return st ? st : npu_rw_op(g, "Not", 1, name, &e, 1, &y, 1, NULL);
}

npu_status npu_rewrite_isinf(npu_ir_graph *g, int k, bool *applied)
{
	int64_t pos, neg;
	char name[128];
	int x, y, a, b;
	npu_status st;

	*applied = false;
	if ((st = npu_ir_attr_int(&g->nodes[k], "detect_positive", 1, &pos)) ||
	    (st = npu_ir_attr_int(&g->nodes[k], "detect_negative", 1, &neg)))
		return st;
	if (!class_node(g, k, &x, &y, name, sizeof(name)))
		return NPU_OK;
	*applied = true;
	npu_rw_detach(g, k, y);
	g->nodes[k].dead = true;
	if (pos && neg) {
		st = equal_scalar(g, name, x, INFINITY, &a);
		if (!st)
			st = equal_scalar(g, name, x, -INFINITY, &b);
		return st ? st : npu_rw_op(g, "Or", 7, name, (int[]){ a, b }, 2, &y, 1, NULL);
	}
	st = equal_scalar(g, name, x, pos ? INFINITY : neg ? -INFINITY : NAN, &a);
	return st ? st : npu_rw_op(g, "Identity", 1, name, &a, 1, &y, 1, NULL);
}

/* The mask output of Dropout @k: all true, a constant the node no longer makes. */
npu_status npu_rewrite_dropout_mask(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	int m = n->n_outputs > 1 ? n->outputs[1] : -1;
	const npu_ir_tensor *t = m >= 0 ? &g->tensors[m] : NULL;
	size_t es = t ? npu_dtype_size(t->dtype) : 0, cnt;
	uint8_t one[4] = { 1, 0, 0, 0 };
	uint8_t *data;
	float f1 = 1.0f;

	*applied = false;
	if (!t || !es || !npu_ir_shape_known(t))
		return NPU_OK;
	if (t->dtype == NPU_DTYPE_FLOAT32)
		memcpy(one, &f1, 4);
	else if (t->dtype == NPU_DTYPE_FLOAT16)
		memcpy(one, &(uint16_t){ 0x3c00 }, 2);
	else if (t->dtype == NPU_DTYPE_BFLOAT16)
		memcpy(one, &(uint16_t){ 0x3f80 }, 2);
	else if (es > 4)
		return NPU_OK;
	cnt = (size_t)npu_ir_numel(t);
	data = malloc(cnt * es + 1);
	if (!data)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (size_t i = 0; i < cnt; i++)
		memcpy(data + i * es, one, es);
	*applied = true;
	npu_rw_detach(g, k, m);
	return npu_ir_set_const_owned(g, m, data, cnt * es);
}

npu_status npu_rewrite_minmax_int(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *a = npu_ir_input(g, n, 0), *b = npu_ir_input(g, n, 1);
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	bool max = !strcmp(n->op, "Max");
	int64_t dims[NPU_MAX_RANK];
	int ai, bi, yi, c, rank;
	char name[128];
	npu_status st;

	*applied = false;
	if (n->n_inputs != 2 || !a || !b || !y || a->dtype != NPU_DTYPE_INT32 ||
	    b->dtype != NPU_DTYPE_INT32 || !npu_rw_bshape(a, b, dims, &rank))
		return NPU_OK;
	ai = n->inputs[0];
	bi = n->inputs[1];
	yi = n->outputs[0];
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	npu_rw_detach(g, k, yi);
	g->nodes[k].dead = true;
	st = npu_rw_tensor(g, NPU_DTYPE_BOOL, rank, dims, &c);
	if (!st)
		st = npu_rw_op(g, max ? "GreaterOrEqual" : "LessOrEqual", 12, name,
			       (int[]){ ai, bi }, 2, &c, 1, NULL);
	return st ? st : npu_rw_op(g, "Where", 16, name, (int[]){ c, ai, bi }, 3, &yi, 1, NULL);
}
