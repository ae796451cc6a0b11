// SPDX-License-Identifier: MIT
/*
 * Graph rewrites before fusion and lowering: operators the NPU has no
 * lowering for become operators it has, on a shape-inferred graph.
 *
 * - Resize (nearest, linear, cubic; every coordinate transformation) and
 *   ConvTranspose's zero insertion are linear maps along one axis at a
 *   time with weights known at compile time: each axis becomes a MatMul by
 *   a constant [in][out] matrix (with Transposes around it when the axis
 *   is not the last).  ConvTranspose then is an ordinary stride-1 Conv
 *   with spatially flipped, channel-swapped weights over the zero-inserted
 *   and padded input.
 * - LayerNormalization's optional Mean and InvStdDev outputs: ReduceMean,
 *   Sub, Mul, Add, Sqrt and Reciprocal beside the fused normalization.
 * - Pad in 'edge' and 'reflect' modes: a Concat of one-element Slices.
 * - Batched MatMul / QLinearMatMul with a constant B: one 2-D MatMul per
 *   batch element, concatenated; Gemm with a full matrix C: Gemm + Add.
 *
 * A node this pass cannot rewrite is left alone, so the lowering refuses
 * it by name as before.  The rewrites live in rewrite_*.c by concern, their
 * building blocks in rewrite_util.c; each reports whether it applied, and
 * the pass applies them until none does (a fixed point).
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_ops.h"
#include "compile/npu_rewrite.h"
#include "compile/npu_rewrite_priv.h"
#include "npu_internal.h"

/*
 * Bounds that only a rewrite breaking its contract reaches (reporting
 * applied without progress, or re-creating what it rewrote).  As things
 * are, a node takes at most two rewrites in a row (8-bit Mod, then Mod),
 * everything is rewritten in the first sweep and the second finds nothing;
 * the total allows for a node that becomes thousands (a Sum of that many
 * 8-bit inputs: one 8-bit rewrite per Add).
 */
#define NODE_STEPS_MAX (4 * NPU_REWRITE_FNS_MAX)	/* in a row, on one node */
#define SWEEPS_MAX 8
#define STEPS_PER_NODE 64	/* in the whole pass, per node it started with, */
#define STEPS_MIN 65536		/* plus these */

/* Input 0 or output 0 has no elements: the lowerings deal with those. */
static bool empty_io(const npu_ir_graph *g, const npu_ir_node *n)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);

	return (x && npu_ir_numel(x) == 0) || (y && npu_ir_numel(y) == 0);
}

struct pass {
	npu_ir_graph *g;
	npu_rewrite_hook hook;
	void *arg;
	int64_t steps, steps_max;	/* rewrites applied, and the bound */
	bool killed;			/* some rewrite marked its node dead */
};

/* Rewrite @fn of @op on node @k broke its contract (npu_rewrite_priv.h). */
static npu_status stuck(const npu_ir_graph *g, int k, const char *op, int fn, const char *why)
{
	char lbl[96];

	return npu_fail(NPU_ERR_INTERNAL, "graph rewrite %d of %s on node %s: %s", fn, op,
			npu_ir_node_label(&g->nodes[k], lbl, sizeof(lbl)), why);
}

/*
 * @r's rewrites on node @k until none applies: after one applies, the list
 * is tried again from its start on what it left (a rewrite that edits the
 * node in place keeps it, e.g. 8-bit Mod becomes a float32 Mod, which
 * npu_rewrite_mod then takes).
 */
static npu_status rewrite_node(struct pass *p, int k, const struct npu_op *r)
{
	npu_ir_graph *g = p->g;

	for (int step = 0, i = 0; !g->nodes[k].dead; step++) {
		bool applied = false;

		if (step == NODE_STEPS_MAX)
			return stuck(g, k, r->name, i, "it keeps reporting applied");
		for (i = 0; i < NPU_REWRITE_FNS_MAX && r->rewrites[i]; i++) {
			int nn = g->n_nodes, nt = g->n_tensors;
			npu_status st = r->rewrites[i](g, k, &applied);

			if (st)
				return st;
			if (applied)
				break;
			if (g->n_nodes != nn || g->n_tensors != nt || g->nodes[k].dead)
				return stuck(g, k, r->name, i,
					     "it changed the graph but reported not applied");
		}
		if (!applied)
			return NPU_OK;
		p->killed |= g->nodes[k].dead;
		if (p->hook)
			p->hook(p->arg, r->name, i, &g->nodes[k]);
		if (++p->steps > p->steps_max)
			return stuck(g, k, r->name, i,
				     "too many rewrites in one pass (one re-creates its node?)");
	}
	return NPU_OK;
}

npu_status npu_rewrite_hooked(npu_ir_graph *g, npu_rewrite_hook hook, void *arg)
{
	struct pass p = { g, hook, arg, 0, 0, false };
	int n0 = g->n_nodes;
	npu_status st = NPU_OK;

	p.steps_max = STEPS_PER_NODE * (int64_t)n0 + STEPS_MIN;
	/* Sweeps until one applies nothing.  New nodes are visited in the
	 * sweep that made them: a 3-D ConvTranspose becomes a 3-D Conv,
	 * which becomes a 2-D one. */
	for (int sweep = 0;; sweep++) {
		int64_t before = p.steps;

		if (sweep == SWEEPS_MAX)
			return npu_fail(NPU_ERR_INTERNAL,
					"graph rewrites still apply after %d sweeps over the graph",
					SWEEPS_MAX);
		for (int k = 0; k < g->n_nodes && !st; k++) {
			const npu_ir_node *n = &g->nodes[k];
			const struct npu_op *r;

			/* Every domain the registry knows (the training optimisers'
			 * are rewrites); nodes on tensors of run-time size run on
			 * the host as they are. */
			if (n->dead || npu_ir_node_dyn(g, n) || empty_io(g, n) || !(r = npu_op_of(n)) ||
			    !r->rewrites[0])
				continue;
			st = rewrite_node(&p, k, r);
		}
		if (st)
			return st;
		if (p.steps == before)
			break;
	}
	/* Appended nodes need sorting, dead ones removing; an edit that only
	 * added constants (a Pow's exponent, a 2-D MatMul B) needs neither. */
	if (g->n_nodes == n0 && !p.killed)
		return NPU_OK;
	if ((st = npu_ir_remove_dead(g)))
		return st;
	return npu_ir_topo_sort(g);
}

npu_status npu_rewrite(npu_ir_graph *g)
{
	return npu_rewrite_hooked(g, NULL, NULL);
}
