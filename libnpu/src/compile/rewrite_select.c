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
 * float, as exports use, is added, not multiplied).  A condition that is
 * all true (or all false) selecting an operand of the output's shape is
 * no node at all: its readers read that operand.  Any other Where (a
 * condition computed at run time, values that are not float32) is a CVU
 * SELECT (npu_lower_where, lower_eltwise.c).
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_ops.h"
#include "compile/npu_rewrite_priv.h"

/*
 * A float constant of the broadcast of @c and @v (NULL: the scalar 1) that
 * holds v's element where c is @keep_when and 0 elsewhere: a Where of
 * constants, folded at once by the IR's own evaluator.
 */
static npu_status masked(npu_ir_graph *g, const char *name, int c, int v, bool keep_when,
			 int *id)
{
	const struct npu_op *where = npu_op_get("Where", 16);
	int64_t dims[NPU_MAX_RANK], n = 1;
	int r, k0, k1, node;
	float *zero = malloc(sizeof(float)), *one = malloc(sizeof(float));
	npu_status st;

	if (!zero || !one) {
		free(zero);
		free(one);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	*zero = 0.0f;
	*one = 1.0f;
	if (!npu_rw_bshape(&g->tensors[c], &g->tensors[v >= 0 ? v : c], dims, &r)) {
		free(zero);
		free(one);
		return npu_fail(NPU_ERR_SHAPE, "Where operands do not broadcast");
	}
	for (int d = 0; d < r; d++)
		n *= dims[d];
	if (n > NPU_RW_MATRIX_MAX) {
		free(zero);
		free(one);
		return npu_fail(NPU_ERR_UNSUPPORTED, "Where with a mask of %lld elements",
				(long long)n);
	}
	st = npu_rw_const(g, NPU_DTYPE_FLOAT32, 0, NULL, zero, &k0);
	if (st)
		free(one);
	if (!st)
		st = npu_rw_const(g, NPU_DTYPE_FLOAT32, 0, NULL, one, &k1);
	if (!st)
		st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, dims, id);
	if (!st) {
		int val = v >= 0 ? v : k1;

		st = npu_rw_op(g, "Where", 16, name,
			       keep_when ? (int[]){ c, val, k0 } : (int[]){ c, k0, val }, 3, id, 1,
			       &node);
	}
	if (!st)
		st = npu_ir_const_eval(g, node, &where->ir);
	if (!st)
		g->nodes[node].dead = true;
	return st;
}

/* Constant condition @c is all true (*@v true) or all false; false if mixed. */
static bool uniform(const npu_ir_tensor *c, bool *v)
{
	const uint8_t *b = c->data;
	int64_t n = npu_ir_numel(c);

	if (n < 1)
		return false;
	*v = b[0] != 0;
	for (int64_t i = 1; i < n; i++)
		if ((b[i] != 0) != *v)
			return false;
	return true;
}

/*
 * A condition that selects one operand whole, of the output's shape: its
 * readers read that operand instead (a decode step's causal table, sliced
 * at the last row, keeps every score: the attention then fuses).
 */
static bool select_whole(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *c = npu_ir_input(g, n, 0), *z = npu_ir_output(g, n, 0);
	int zi = n->outputs[0], si;
	const npu_ir_tensor *s;
	bool v;

	if (!uniform(c, &v) || npu_ir_is_graph_output(g, zi))
		return false;
	si = n->inputs[v ? 1 : 2];
	s = &g->tensors[si];
	if (s->dtype != z->dtype || s->rank != z->rank ||
	    memcmp(s->dims, z->dims, (size_t)z->rank * sizeof(z->dims[0])))
		return false;
	*applied = true;
	g->nodes[k].dead = true;
	for (int i = 0; i < g->n_nodes; i++)
		for (int j = 0; !g->nodes[i].dead && j < g->nodes[i].n_inputs; j++)
			if (g->nodes[i].inputs[j] == zi)
				g->nodes[i].inputs[j] = si;
	return true;
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
	if (select_whole(g, k, applied))
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
		st = masked(g, name, ci, -1, true, &m);
		if (!st)
			st = masked(g, name, ci, yi, false, &u);
		if (!st)
			st = npu_rw_binary(g, "Mul", 14, name, xi, m, -1, &t);
		return st ? st : npu_rw_binary(g, "Add", 14, name, t, u, zi, &w);
	}
	if (npu_ir_is_const(x)) {
		/* y * (1 - m) + (c ? x : 0) */
		st = masked(g, name, ci, -1, false, &m);
		if (!st)
			st = masked(g, name, ci, xi, true, &u);
		if (!st)
			st = npu_rw_binary(g, "Mul", 14, name, yi, m, -1, &t);
		return st ? st : npu_rw_binary(g, "Add", 14, name, t, u, zi, &w);
	}
	/* x * m + y * (1 - m) */
	st = masked(g, name, ci, -1, true, &m);
	if (!st)
		st = masked(g, name, ci, -1, false, &u);
	if (!st)
		st = npu_rw_binary(g, "Mul", 14, name, xi, m, -1, &t);
	if (!st)
		st = npu_rw_binary(g, "Mul", 14, name, yi, u, -1, &w);
	return st ? st : npu_rw_binary(g, "Add", 14, name, t, w, zi, &m);
}
