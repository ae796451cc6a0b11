// SPDX-License-Identifier: MIT
/*
 * Scatter, ScatterElements and ScatterND with constant indices and
 * updates on run-time data: every output element either keeps the data or
 * combines it with values known at compile time, so the whole operator is
 * one elementwise node with constants of the data's shape:
 *   none: x * keep + values (keep 0 where written, values 0 elsewhere);
 *   add:  x + sums;  mul: x * products;
 *   max/min: Max/Min(x, extremes) (-inf/+inf elsewhere).
 * Duplicate indices without a reduction: the last update wins, as in the
 * ONNX reference.
 *
 * Where that does not apply (indices or updates computed at run time,
 * data that is not float32), a ScatterND without reduction whose indices
 * end in a dim of 1 writes whole rows of axis 0: npu.ScatterRows axis 0
 * (lower_scatter.c) of the indices and updates flattened to S rows.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_rewrite_priv.h"

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

/* Combine update @u into element @e of the constants. */
static void scatter_one(int red, float *a, float *b, int64_t e, float u)
{
	switch (red) {
	case RED_NONE: a[e] = 0.0f; b[e] = u; break;
	case RED_ADD: b[e] += u; break;
	case RED_MUL: b[e] *= u; break;
	case RED_MAX: b[e] = fmaxf(b[e], u); break;
	default: b[e] = fminf(b[e], u); break;
	}
}

npu_status npu_rewrite_scatter(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	bool nd = !strcmp(n->op, "ScatterND");
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *ind = npu_ir_input(g, n, 1);
	const npu_ir_tensor *u = npu_ir_input(g, n, 2), *y = npu_ir_output(g, n, 0);
	int64_t axis = 0, xd[NPU_MAX_RANK], id[NPU_MAX_RANK], numel, cnt, *idx = NULL;
	int yid = n->outputs[0], xi = n->inputs[0], r, ir, got, red, ca, cb, t;
	const char *rs = "none";
	float *a = NULL, *b = NULL;
	const float *uv;
	char name[128];
	npu_status st;

	*applied = false;
	if (!x || !ind || !u || !y || x->dtype != NPU_DTYPE_FLOAT32 ||
	    u->dtype != NPU_DTYPE_FLOAT32 || !npu_ir_is_const(ind) || !npu_ir_is_const(u))
		return NPU_OK;
	if ((!nd && (st = npu_ir_attr_int(n, "axis", 0, &axis))) ||
	    (npu_ir_attr_find(n, "reduction") && (st = npu_ir_attr_string(n, "reduction", "none",
									  &rs))))
		return st;
	red = !strcmp(rs, "none") ? RED_NONE : !strcmp(rs, "add") ? RED_ADD :
	      !strcmp(rs, "mul") ? RED_MUL : !strcmp(rs, "max") ? RED_MAX :
	      !strcmp(rs, "min") ? RED_MIN : -1;
	r = x->rank;
	ir = ind->rank;
	numel = npu_ir_numel(x);
	cnt = npu_ir_numel(ind);
	if (red < 0 || numel < 1 || numel > NPU_RW_MATRIX_MAX || cnt < 1 || cnt > 65536)
		return NPU_OK;
	memcpy(xd, x->dims, sizeof(xd));
	memcpy(id, ind->dims, sizeof(id));
	uv = u->data;
	idx = malloc((size_t)cnt * sizeof(*idx));
	a = malloc((size_t)numel * sizeof(*a));
	b = malloc((size_t)numel * sizeof(*b));
	st = !idx || !a || !b ? npu_fail(NPU_ERR_NO_MEMORY, "out of memory") : NPU_OK;
	if (st || npu_ir_const_ints(ind, idx, (int)cnt, &got))
		goto out;
	for (int64_t e = 0; e < numel; e++) {
		a[e] = 1.0f;
		b[e] = red == RED_MUL ? 1.0f : red == RED_MAX ? -INFINITY :
		       red == RED_MIN ? INFINITY : 0.0f;
	}
	if (!nd) {
		if (axis < 0)
			axis += r;
		if (axis < 0 || axis >= r || ir != r || npu_ir_numel(u) != cnt)
			goto out;
		for (int64_t e = 0; e < cnt; e++) {
			int64_t rem = e, off = 0, stride = 1, v = idx[e];

			if (v < 0)
				v += xd[axis];
			if (v < 0 || v >= xd[axis])
				goto out;
			for (int d = r - 1; d >= 0; d--) {
				int64_t c = rem % id[d];

				rem /= id[d];
				if (d != axis && c >= xd[d])
					goto out;
				off += (d == axis ? v : c) * stride;
				stride *= xd[d];
			}
			scatter_one(red, a, b, off, uv[e]);
		}
	} else {
		int64_t m = id[ir - 1], inner = 1, tuples;

		if (m < 1 || m > r)
			goto out;
		for (int d = (int)m; d < r; d++)
			inner *= xd[d];
		tuples = cnt / m;
		if (npu_ir_numel(u) != tuples * inner)
			goto out;
		for (int64_t t0 = 0; t0 < tuples; t0++) {
			int64_t off = 0;

			for (int j = 0; j < m; j++) {
				int64_t v = idx[t0 * m + j];

				if (v < 0)
					v += xd[j];
				if (v < 0 || v >= xd[j])
					goto out;
				off = off * xd[j] + v;
			}
			for (int64_t i = 0; i < inner; i++)
				scatter_one(red, a, b, off * inner + i, uv[t0 * inner + i]);
		}
	}
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, r, xd, b, &cb))) {
		b = NULL;
		goto out;
	}
	b = NULL;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	if (red == RED_NONE) {
		if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, r, xd, a, &ca))) {
			a = NULL;
			goto out;
		}
		a = NULL;
		if ((st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, xd, &t)) ||
		    (st = npu_rw_op(g, "Mul", 14, name, (int[]){ xi, ca }, 2, &t, 1, NULL)))
			goto out;
		st = npu_rw_op(g, "Add", 14, name, (int[]){ t, cb }, 2, &yid, 1, NULL);
	} else {
		static const char *const ops[] = { "", "Add", "Mul", "Max", "Min" };

		st = npu_rw_op(g, ops[red], red == RED_MAX || red == RED_MIN ? 13 : 14, name,
			       (int[]){ xi, cb }, 2, &yid, 1, NULL);
	}
out:
	free(idx);
	free(a);
	free(b);
	return st;
}

/*
 * ScatterND, reduction none, indices [..., 1]: npu.ScatterRows along axis
 * 0 with rows = the indices as [S] and updates as [S, data dims 1..].
 * Run-time indices are int32 here (int64 ones were narrowed); a negative
 * one ends the run (NPU_TASK_INDEX_FAULT), constant ones count from the end.
 */
npu_status npu_rewrite_scatter_nd_rows(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *ind = npu_ir_input(g, n, 1);
	const npu_ir_tensor *u = npu_ir_input(g, n, 2);
	int yid = n->outputs[0], xi = n->inputs[0], ii = n->inputs[1], ui = n->inputs[2];
	int64_t S, inner = 1, ud[NPU_MAX_RANK];
	const char *rs = "none";
	int r, rows, upd, node;
	char name[128];
	npu_status st;

	*applied = false;
	if (!x || !ind || !u || yid < 0 || x->rank < 1 || ind->rank < 1 ||
	    ind->dims[ind->rank - 1] != 1 || (ind->dtype != NPU_DTYPE_INT32 &&
					      ind->dtype != NPU_DTYPE_INT64))
		return NPU_OK;
	if (npu_ir_attr_find(n, "reduction") &&
	    (st = npu_ir_attr_string(n, "reduction", "none", &rs)))
		return st;
	if (strcmp(rs, "none"))
		return NPU_OK;
	/* Computed int64 indices never reach here (narrowed to int32). */
	if (!npu_ir_is_const(ind) && ind->dtype != NPU_DTYPE_INT32)
		return NPU_OK;
	r = x->rank;
	S = npu_ir_numel(ind);
	for (int d = 1; d < r; d++)
		inner *= x->dims[d];
	if (S > (1 << 24) || npu_ir_numel(u) != S * inner || u->dtype != x->dtype)
		return NPU_OK;	/* refused as a ScatterND, by name */
	ud[0] = S;
	memcpy(ud + 1, x->dims + 1, (size_t)(r - 1) * sizeof(int64_t));
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	if (npu_ir_is_const(ind)) {
		int64_t *v = malloc((size_t)S * sizeof(*v) + 1);
		int got;

		if (!v)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		if ((st = npu_ir_const_ints(&g->tensors[ii], v, (int)S, &got))) {
			free(v);
			return st;
		}
		st = npu_rw_const(g, NPU_DTYPE_INT64, 1, &S, v, &rows);
	} else {
		st = npu_rw_reshape(g, name, ii, 1, &S, -1, &rows);
	}
	if (st || (st = npu_rw_reshape(g, name, ui, r, ud, -1, &upd)) ||
	    (st = npu_rw_op(g, "npu.ScatterRows", 1, name, (int[]){ xi, rows, upd }, 3, &yid, 1,
			    &node)))
		return st;
	return npu_ir_set_attr_int(&g->nodes[node], "axis", 0);
}
