// SPDX-License-Identifier: MIT
/*
 * Static shape and dtype inference, folding constant subgraphs as it goes.
 *
 * npu_ir_infer_shapes() walks the nodes in topological order and asks the
 * caller's lookup for each node's rules (the compiler's operator registry,
 * compile/npu_ops.c, which points at the shape rules of shape_*.c and the
 * evaluators of npu_ir_const.c): the shape rule sets the outputs' dtype and
 * shape (checking them against what the model declares), then a node whose
 * rules have an evaluator and whose inputs are constant is computed and
 * dropped.  The IR itself knows no operator list.
 */
#include "ir/shape_util.h"

/* Folding budget: constants larger than this stay nodes. */
#define FOLD_MAX_BYTES	((size_t)16 << 20)
#define FOLD_TOTAL_BYTES ((size_t)128 << 20)

/*
 * A graph input whose shape is not fully known: the NPU needs static
 * shapes, so the caller has to give its size.  Name the first unknown
 * dim (by its dim_param where the model names it) and how to give it.
 */
static npu_status unknown_input_dim(const npu_ir_graph *g, int id)
{
	const npu_ir_tensor *t = &g->tensors[id];
	char sh[256], eg[256], dim[96];
	const char *name;
	size_t o = 0;
	int axis = 0, open = 0;

	npu_ir_named_shape_str(g, id, sh, sizeof(sh));
	if (t->rank < 0)
		return npu_fail(NPU_ERR_SHAPE,
				"graph input '%s' has no declared shape (%s): give it with --shape %s=DIMS"
				" or --input %s=FILE.npy (npu-run) or npu_compile_options.input_shapes",
				t->name, sh, t->name, t->name);
	while (axis < t->rank && t->dims[axis] >= 0)
		axis++;
	/* An example to fill in: static dims as they are, the others by name. */
	eg[0] = '\0';
	for (int i = 0; i < t->rank && o < sizeof(eg); i++) {
		const char *dn = npu_ir_dim_name(g, id, i);
		const char *sep = i ? "x" : "";

		if (t->dims[i] >= 0)
			o += (size_t)snprintf(eg + o, sizeof(eg) - o, "%s%" PRId64, sep, t->dims[i]);
		else if (dn)
			o += (size_t)snprintf(eg + o, sizeof(eg) - o, "%s<%s>", sep, dn);
		else
			o += (size_t)snprintf(eg + o, sizeof(eg) - o, "%s<dim%d>", sep, i);
	}
	name = npu_ir_dim_name(g, id, axis);
	if (name)
		snprintf(dim, sizeof(dim), "the symbolic dimension '%s'", name);
	else
		snprintf(dim, sizeof(dim), "an unknown dimension");
	for (int i = 0; i < t->rank; i++)
		open += t->dims[i] < 0;
	/* npu-run takes one open dim from a raw file's size, all from an .npy. */
	return npu_fail(NPU_ERR_SHAPE,
			"graph input '%s' has %s (axis %d of %s): give its size with --shape %s=%s"
			" or --input %s=%s (npu-run) or npu_compile_options.input_shapes",
			t->name, dim, axis, sh, t->name, eg, t->name,
			open == 1 ? "FILE (raw or .npy)" : "FILE.npy");
}

npu_status npu_ir_infer_shapes(npu_ir_graph *g, npu_ir_op_find find)
{
	size_t folded = 0;
	npu_status st;

	g->need_const = -1;
	st = npu_ir_topo_sort(g);
	if (!st)	/* what no output needs is neither inferred nor checked */
		st = npu_ir_remove_dead(g);
	if (st)
		return st;
	for (int i = 0; i < g->n_inputs; i++) {
		const npu_ir_tensor *t = &g->tensors[g->inputs[i]];

		if (!t->dtype)
			return npu_fail(NPU_ERR_SHAPE, "graph input '%s' has no dtype", t->name);
		if (!npu_ir_shape_known(t))
			return unknown_input_dim(g, g->inputs[i]);
	}
	for (int i = 0; i < g->n_nodes; i++) {
		npu_ir_node *n = &g->nodes[i];
		const struct npu_ir_op *op;
		npu_ir_tensor *y;

		if (n->dead)
			continue;
		if ((st = find(n, &op)))
			return st;
		for (int j = 0; j < n->n_inputs; j++) {
			const npu_ir_tensor *t = in(g, n, j);

			if (t && (!t->dtype || !npu_ir_shape_known(t)))
				return npu_sh_err(n, NPU_ERR_SHAPE, "input '%s' has no known shape",
						  t->name);
		}
		g->shaping_dyn = npu_ir_node_dyn(g, n);
		st = op->shape(g, n);
		if (!st && g->shaping_dyn)
			npu_ir_dyn_outputs(g, n);
		g->shaping_dyn = false;
		if (st)
			return st;
		for (int j = 0; j < n->n_outputs; j++) {
			const npu_ir_tensor *t = npu_ir_output(g, n, j);

			if (t && (!t->dtype || !npu_ir_shape_known(t)))
				return npu_sh_err(n, NPU_ERR_FORMAT, "output %d ('%s') is not one that %s has",
						  j, t->name, n->op);
		}
		y = npu_ir_output(g, n, 0);
		/* Shape and Size of a run-time-sized tensor are run-time values. */
		if (y && !npu_ir_node_dyn(g, n) && npu_ir_const_can_eval(g, n, op)) {
			size_t bytes = npu_ir_const_eval_bytes(g, n, op);

			if (bytes > FOLD_MAX_BYTES || folded + bytes > FOLD_TOTAL_BYTES)
				continue;
			st = npu_ir_const_eval(g, i, op);
			if (st)
				return st;
			folded += bytes;
			n = &g->nodes[i];
			n->dead = true;
		}
	}
	for (int i = 0; i < g->n_outputs; i++) {
		const npu_ir_tensor *t = &g->tensors[g->outputs[i]];

		if (!t->dtype || !npu_ir_shape_known(t))
			return npu_fail(NPU_ERR_SHAPE, "graph output '%s' has no known shape", t->name);
	}
	return npu_ir_remove_dead(g);
}
