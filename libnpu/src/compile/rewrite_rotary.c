// SPDX-License-Identifier: MIT
/*
 * Rotary position embeddings as torch exports them:
 *
 *   rotate_half(x) = Concat(Neg(x[..., d/2:]), x[..., :d/2], axis -1)
 *   y = x * cos + rotate_half(x) * sin        (cos, sin: constant tables)
 *
 * The Mul by sin is elementwise and sin is a constant, so the Neg moves
 * into the table: Concat(Neg(a), b) * S = Concat(a, b) * S', where S' is
 * S negated over a's range along the Concat axis.  The rotate-half is then
 * one data move (two Slices into one Concat, built in place) and the CVU
 * step of the Neg is gone.  More generally any Concat part that is a Neg
 * (used only there) folds this way.
 *
 * Applies to Mul(Concat(...), S) in either operand order when S is a
 * float32 constant that spans the whole Concat axis (not broadcast along
 * it), the Concat's result is used by this Mul only, and each folded Neg's
 * by the Concat only; otherwise the graph is left alone.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_rewrite_priv.h"

/* Node @p when it is a live @op, else NULL. */
static const npu_ir_node *live_op(const npu_ir_graph *g, int p, const char *op)
{
	return p >= 0 && !g->nodes[p].dead && !strcmp(g->nodes[p].op, op) ? &g->nodes[p] : NULL;
}

/* Tensor @t feeds exactly one node input and is no graph output. */
static bool used_once(const npu_ir_graph *g, int t)
{
	return npu_ir_count_uses(g, t) == 1 && !npu_ir_is_graph_output(g, t);
}

/* The Neg producing Concat part @t, folded: its node, else -1. */
static int folded_neg(const npu_ir_graph *g, int t)
{
	int p = t >= 0 ? g->tensors[t].producer : -1;
	const npu_ir_node *neg = live_op(g, p, "Neg");

	if (!neg || neg->n_inputs < 1 || neg->inputs[0] < 0 || !used_once(g, t) ||
	    g->tensors[t].dtype != NPU_DTYPE_FLOAT32)
		return -1;
	return p;
}

npu_status npu_rewrite_rotate_half(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);

	if (n->n_inputs != 2 || !y || y->dtype != NPU_DTYPE_FLOAT32)
		return NPU_OK;
	for (int side = 0; side < 2; side++) {
		int c = n->inputs[side], s = n->inputs[1 - side], yid = n->outputs[0];
		int cp = c >= 0 ? g->tensors[c].producer : -1, sc, mul, negs = 0;
		const npu_ir_node *cat = live_op(g, cp, "Concat");
		const npu_ir_tensor *ct, *st_;
		int64_t axis, inner = 1, lo = 0, total;
		int R, ax, sa;
		float *sv;
		npu_status st;

		if (!cat || s < 0 || !npu_ir_is_const(&g->tensors[s]) ||
		    g->tensors[s].dtype != NPU_DTYPE_FLOAT32 || !used_once(g, c) ||
		    npu_ir_attr_int(cat, "axis", 0, &axis))
			continue;
		for (int i = 0; i < cat->n_inputs; i++)
			negs += folded_neg(g, cat->inputs[i]) >= 0;
		if (!negs)
			continue;
		ct = &g->tensors[c];
		st_ = &g->tensors[s];
		if (axis < 0)
			axis += ct->rank;
		R = y->rank;
		ax = (int)axis + R - ct->rank;	/* the axis in the Mul's output */
		sa = ax - (R - st_->rank);	/* and in S */
		if (axis < 0 || axis >= ct->rank || sa < 0 || st_->dims[sa] != ct->dims[axis])
			continue;	/* S broadcast along the axis: nothing to negate */
		for (int d = sa + 1; d < st_->rank; d++)
			inner *= st_->dims[d];
		total = npu_ir_numel(st_);
		sv = malloc((size_t)(total ? total : 1) * sizeof(*sv));
		if (!sv)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		memcpy(sv, st_->data, (size_t)total * sizeof(*sv));
		/* S' = S negated over each folded Neg's range of the axis. */
		for (int i = 0; i < cat->n_inputs; i++) {
			int64_t w = g->tensors[cat->inputs[i]].dims[axis];

			if (folded_neg(g, cat->inputs[i]) >= 0)
				for (int64_t e = 0; e < total; e++) {
					int64_t j = e / inner % st_->dims[sa];

					if (j >= lo && j < lo + w)
						sv[e] = -sv[e];
				}
			lo += w;
		}
		*applied = true;
		if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, g->tensors[s].rank, g->tensors[s].dims,
				       sv, &sc)))
			return st;
		for (int i = 0; i < g->nodes[cp].n_inputs; i++) {
			int neg = folded_neg(g, g->nodes[cp].inputs[i]);

			if (neg < 0)
				continue;
			g->nodes[cp].inputs[i] = g->nodes[neg].inputs[0];
			g->nodes[neg].dead = true;
		}
		/* A new Mul: the pass then drops the dead Negs and sorts. */
		npu_rw_detach(g, k, yid);
		g->nodes[k].dead = true;
		return npu_rw_op(g, "Mul", 14, g->nodes[k].name, (int[]){ c, sc }, 2, &yid, 1, &mul);
	}
	return NPU_OK;
}
