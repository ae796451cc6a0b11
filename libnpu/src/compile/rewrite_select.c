// SPDX-License-Identifier: MIT
/*
 * Where with a condition known at compile time: attention masks (a causal
 * table sliced to the sequence, a padding pattern) that select between the
 * scores and a constant fill.  The condition becomes a float 0/1 mask m:
 *
 *   Where(c, x, y)  ->  x * m + y'          y constant: y' = (c ? 0 : y)
 *                   ->  y * (1 - m) + x'    x constant: x' = (c ? x : 0)
 *                   ->  x * m + y * (1 - m) both computed
 *
 * exact where the selected operand is finite and the other is finite too
 * (x * 0 is 0 for finite x; a constant fill of -inf or the most negative
 * float, as exports use, is added, not multiplied).  A condition computed
 * at run time is a bool the NPU does not compute yet: refused by name.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_rewrite_priv.h"

/* numpy broadcast of @a and @b into @out (rank *@r); false if they do not. */
static bool bshape(const npu_ir_tensor *a, const npu_ir_tensor *b, int64_t *out, int *r)
{
	*r = a->rank > b->rank ? a->rank : b->rank;
	for (int d = 0; d < *r; d++) {
		int ia = d - (*r - a->rank), ib = d - (*r - b->rank);
		int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;

		if (da != db && da != 1 && db != 1)
			return false;
		out[d] = da == 1 ? db : da;
	}
	return true;
}

/* Element of @t (broadcast into shape @dims, rank @r) at flat index @i of that shape. */
static int64_t bindex(const npu_ir_tensor *t, const int64_t *dims, int r, int64_t i)
{
	int64_t off = 0, stride = 1;

	for (int d = r - 1; d >= 0; d--) {
		int64_t idx = i % dims[d];
		int td = d - (r - t->rank);

		i /= dims[d];
		if (td < 0)
			continue;
		if (t->dims[td] != 1)
			off += idx * stride;
		stride *= t->dims[td];
	}
	return off;
}

/*
 * A float constant of the broadcast of @c and @v (v may be NULL: 1): where
 * c is @keep_when, v's element (or 1), else 0.
 */
static npu_status masked(npu_ir_graph *g, const npu_ir_tensor *c, const npu_ir_tensor *v,
			 bool keep_when, int *id)
{
	int64_t dims[NPU_MAX_RANK], n = 1;
	int r;
	float *m;

	if (v ? !bshape(c, v, dims, &r) : !bshape(c, c, dims, &r))
		return npu_fail(NPU_ERR_SHAPE, "Where operands do not broadcast");
	for (int d = 0; d < r; d++)
		n *= dims[d];
	if (n > NPU_RW_MATRIX_MAX)
		return npu_fail(NPU_ERR_UNSUPPORTED, "Where with a mask of %lld elements",
				(long long)n);
	m = malloc((size_t)n * sizeof(float) + 4);
	if (!m)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t i = 0; i < n; i++) {
		bool on = ((const uint8_t *)c->data)[bindex(c, dims, r, i)] != 0;

		m[i] = on != keep_when ? 0.0f :
		       v ? ((const float *)v->data)[bindex(v, dims, r, i)] : 1.0f;
	}
	return npu_rw_const(g, NPU_DTYPE_FLOAT32, r, dims, m, id);
}

/* *@out = @a op @b, a new tensor of their broadcast shape (into @y when >= 0). */
static npu_status binary(npu_ir_graph *g, const char *op, const char *name, int a, int b, int y,
			 int *out)
{
	int64_t dims[NPU_MAX_RANK];
	int r;

	if (!bshape(&g->tensors[a], &g->tensors[b], dims, &r))
		return npu_fail(NPU_ERR_SHAPE, "Where operands do not broadcast");
	if (y >= 0) {
		*out = y;
	} else {
		npu_status st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, dims, out);

		if (st)
			return st;
	}
	return npu_rw_op(g, op, 14, name, (int[]){ a, b }, 2, out, 1, NULL);
}

npu_status npu_rewrite_where(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *c = npu_ir_input(g, n, 0), *x = npu_ir_input(g, n, 1);
	const npu_ir_tensor *y = npu_ir_input(g, n, 2), *z = npu_ir_output(g, n, 0);
	int ci, xi, yi, zi, m, t, u, w;
	char name[128];
	npu_status st;

	*applied = false;
	if (!c || !x || !y || !z || !npu_ir_is_const(c) || c->dtype != NPU_DTYPE_BOOL ||
	    x->dtype != NPU_DTYPE_FLOAT32 || y->dtype != NPU_DTYPE_FLOAT32 ||
	    (npu_ir_is_const(x) && npu_ir_is_const(y)))
		return NPU_OK;
	ci = n->inputs[0];
	xi = n->inputs[1];
	yi = n->inputs[2];
	zi = n->outputs[0];
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	npu_rw_detach(g, k, zi);
	g->nodes[k].dead = true;
	if (npu_ir_is_const(y)) {
		/* x * m + (c ? 0 : y) */
		st = masked(g, &g->tensors[ci], NULL, true, &m);
		if (!st)
			st = masked(g, &g->tensors[ci], &g->tensors[yi], false, &u);
		if (!st)
			st = binary(g, "Mul", name, xi, m, -1, &t);
		return st ? st : binary(g, "Add", name, t, u, zi, &w);
	}
	if (npu_ir_is_const(x)) {
		/* y * (1 - m) + (c ? x : 0) */
		st = masked(g, &g->tensors[ci], NULL, false, &m);
		if (!st)
			st = masked(g, &g->tensors[ci], &g->tensors[xi], true, &u);
		if (!st)
			st = binary(g, "Mul", name, yi, m, -1, &t);
		return st ? st : binary(g, "Add", name, t, u, zi, &w);
	}
	/* x * m + y * (1 - m) */
	st = masked(g, &g->tensors[ci], NULL, true, &m);
	if (!st)
		st = masked(g, &g->tensors[ci], NULL, false, &u);
	if (!st)
		st = binary(g, "Mul", name, xi, m, -1, &t);
	if (!st)
		st = binary(g, "Mul", name, yi, u, -1, &w);
	return st ? st : binary(g, "Add", name, t, w, zi, &m);
}
