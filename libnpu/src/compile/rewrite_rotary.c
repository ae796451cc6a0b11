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
 *
 * What is left, Concat(x[.., h:2h], x[.., :h]), swaps the halves of x: a
 * rewrite of Concat makes it one DMA, x seen as [.., 2, h] and sliced
 * backwards (step -1) along the 2, a walker with a negative stride,
 * between two Reshapes that share memory.  So the rotate-half costs one
 * data move instead of two Slices, a Neg and a Concat.
 */
#include <stdio.h>
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

/* Slice node @sl of @x takes [@lo, @lo + @h) along @axis and all of every other axis. */
static bool half_of(npu_ir_graph *g, const npu_ir_node *sl, int x, int axis, int64_t lo,
		    int64_t h)
{
	int64_t start[NPU_MAX_RANK], step[NPU_MAX_RANK], len[NPU_MAX_RANK];
	const npu_ir_tensor *xt = &g->tensors[x];

	if (sl->inputs[0] != x || npu_ir_slice_plan(g, sl, start, step, len))
		return false;
	for (int d = 0; d < xt->rank; d++) {
		int64_t s0 = d == axis ? lo : 0, n = d == axis ? h : xt->dims[d];

		if (step[d] != 1 || start[d] != s0 || len[d] != n)
			return false;
	}
	return true;
}

npu_status npu_rewrite_swap_halves(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_node *s0, *s1;
	int64_t axis, h, dims[NPU_MAX_RANK], yd[NPU_MAX_RANK];
	int64_t one = 1, back = -3, neg = -1, ax;
	int x, r, yr, y = n->outputs[0], t5, t6, c[4];
	char name[128];
	npu_status st;

	if (n->n_inputs != 2 || n->inputs[0] < 0 || n->inputs[1] < 0 || y < 0 ||
	    npu_ir_attr_int(n, "axis", 0, &axis))
		return NPU_OK;
	s0 = live_op(g, g->tensors[n->inputs[0]].producer, "Slice");
	s1 = live_op(g, g->tensors[n->inputs[1]].producer, "Slice");
	if (!s0 || !s1 || s0->opset < 10 || s1->opset < 10)
		return NPU_OK;
	x = s0->inputs[0];
	r = g->tensors[x].rank;
	if (axis < 0)
		axis += r;
	if (axis < 0 || axis >= r || r + 1 > NPU_MAX_RANK)
		return NPU_OK;
	h = g->tensors[x].dims[axis] / 2;
	if (h < 1 || g->tensors[x].dims[axis] != 2 * h ||
	    !half_of(g, s0, x, (int)axis, h, h) || !half_of(g, s1, x, (int)axis, 0, h))
		return NPU_OK;
	/* x [.., 2h, ..] as [.., 2, h, ..], reversed along the 2 */
	for (int d = 0, j = 0; d < r; d++) {
		if (d == axis) {
			dims[j++] = 2;
			dims[j++] = h;
		} else {
			dims[j++] = g->tensors[x].dims[d];
		}
	}
	yr = g->tensors[y].rank;
	memcpy(yd, g->tensors[y].dims, sizeof(yd));
	snprintf(name, sizeof(name), "%s", n->name);
	ax = axis;
	*applied = true;
	npu_rw_detach(g, k, y);
	g->nodes[k].dead = true;
	if ((st = npu_rw_reshape(g, name, x, r + 1, dims, -1, &t5)) ||
	    (st = npu_rw_ints(g, &one, 1, &c[0])) || (st = npu_rw_ints(g, &back, 1, &c[1])) ||
	    (st = npu_rw_ints(g, &ax, 1, &c[2])) || (st = npu_rw_ints(g, &neg, 1, &c[3])) ||
	    (st = npu_rw_tensor(g, g->tensors[x].dtype, r + 1, dims, &t6)) ||
	    (st = npu_rw_op(g, "Slice", 13, name, (int[]){ t5, c[0], c[1], c[2], c[3] }, 5,
			    &t6, 1, NULL)))
		return st;
	return npu_rw_reshape(g, name, t6, yr, yd, y, &t5);
}
