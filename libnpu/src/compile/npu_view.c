// SPDX-License-Identifier: MIT
/*
 * Strided views through layout nodes (what a view is: npu_view.h).
 *
 * A Reshape of a view matches old and new dims in row-major order: equal
 * sizes carry over, a larger old dim splits into an outer new dim and the
 * rest, a smaller one merges with the next old dim.  Merging needs the two
 * to be one stride pattern: contiguous (outer stride = inner stride times
 * inner size), an outer dim repeated by an inner stride-0 dim (which
 * becomes a div: GQA's K/V repeat by Expand), or an inner dim repeated
 * whole by an outer stride-0 dim (a mod: the repeat by Tile).  Anything else is no view, and the
 * layout node stays a step of its own.
 */
#include <string.h>

#include "compile/npu_view.h"

struct vdim {
	int64_t size, stride, div, mod;
};

void npu_lview_dense(const npu_ir_graph *g, int t, struct npu_lview *v)
{
	const npu_ir_tensor *x = &g->tensors[t];
	int64_t s = 1;

	memset(v, 0, sizeof(*v));
	v->t = t;
	v->rank = x->rank;
	for (int d = x->rank - 1; d >= 0; d--) {
		v->size[d] = x->dims[d];
		v->stride[d] = s;
		v->div[d] = 1;
		s *= x->dims[d];
	}
}

bool npu_lview_transpose(struct npu_lview *v, const int64_t *perm)
{
	struct npu_lview in = *v;
	bool seen[NPU_MAX_RANK] = { false };

	for (int d = 0; d < v->rank; d++) {
		int64_t p = perm[d];

		if (p < 0 || p >= v->rank || seen[p])
			return false;
		seen[p] = true;
		v->size[d] = in.size[p];
		v->stride[d] = in.stride[p];
		v->div[d] = in.div[p];
		v->mod[d] = in.mod[p];
	}
	return true;
}

/* Outer @a and inner @b as one dim, if one stride pattern walks both. */
static bool merge(const struct vdim *a, const struct vdim *b, struct vdim *m)
{
	int64_t n = a->size * b->size;

	if (!a->stride && !b->stride) {
		*m = (struct vdim){ n, 0, 1, 0 };
		return true;
	}
	if (a->mod || b->mod)
		return false;
	if (a->div == 1 && b->div == 1 && a->stride == b->stride * b->size) {
		*m = (struct vdim){ n, b->stride, 1, 0 };
		return true;
	}
	if (b->div == 1 && !b->stride) {	/* each of a repeated b times */
		*m = (struct vdim){ n, a->stride, a->div * b->size, 0 };
		return true;
	}
	if (a->div == 1 && !a->stride && b->div == 1) {	/* all of b, a times over */
		*m = (struct vdim){ n, b->stride, 1, b->size };
		return true;
	}
	return false;
}

/* @o split into an outer dim of @n and the rest (*@o afterwards). */
static bool split(struct vdim *o, int64_t n, struct vdim *outer)
{
	int64_t rest = o->size / n;

	if (o->mod) {		/* ((i % mod) * stride, div 1) */
		if (rest % o->mod == 0) {
			*outer = (struct vdim){ n, 0, 1, 0 };
			*o = (struct vdim){ rest, o->stride, 1, rest == o->mod ? 0 : o->mod };
			return true;
		}
		if (o->mod % rest == 0) {
			*outer = (struct vdim){ n, o->stride * rest, 1, o->mod / rest };
			*o = (struct vdim){ rest, o->stride, 1, 0 };
			return true;
		}
		return false;
	}
	if (o->div == 1 || rest % o->div == 0) {
		*outer = (struct vdim){ n, o->stride * (rest / o->div), 1, 0 };
		/* rest == div: the inner index never reaches the next element */
		*o = rest == o->div && rest > 1 ? (struct vdim){ rest, 0, 1, 0 } :
		     (struct vdim){ rest, o->stride, o->div, 0 };
		return true;
	}
	if (o->div % rest == 0) {
		*outer = (struct vdim){ n, o->stride, o->div / rest, 0 };
		*o = (struct vdim){ rest, 0, 1, 0 };
		return true;
	}
	return false;
}

bool npu_lview_reshape(struct npu_lview *v, int rank, const int64_t *dims)
{
	struct vdim old[NPU_MAX_RANK], out[NPU_MAX_RANK];
	int no = 0, i = 0;

	if (rank < 0 || rank > NPU_MAX_RANK)
		return false;
	for (int d = 0; d < v->rank; d++) {
		if (v->size[d] <= 0)
			return false;
		if (v->size[d] != 1)
			old[no++] = (struct vdim){ v->size[d], v->stride[d], v->div[d], v->mod[d] };
	}
	for (int j = 0; j < rank; j++) {
		int64_t n = dims[j];

		if (n <= 0)
			return false;
		if (n == 1) {
			out[j] = (struct vdim){ 1, 0, 1, 0 };
			continue;
		}
		for (;;) {
			if (i >= no)
				return false;
			if (old[i].size == n) {
				out[j] = old[i++];
				break;
			}
			if (old[i].size > n && old[i].size % n == 0) {
				if (!split(&old[i], n, &out[j]))
					return false;
				break;
			}
			/* Smaller, or no whole split: merge with the next dim. */
			if (i + 1 >= no || !merge(&old[i], &old[i + 1], &old[i]))
				return false;
			memmove(&old[i + 1], &old[i + 2], (size_t)(no - i - 2) * sizeof(old[0]));
			no--;
		}
	}
	if (i != no)
		return false;
	v->rank = rank;
	for (int j = 0; j < rank; j++) {
		v->size[j] = out[j].size;
		v->stride[j] = out[j].stride;
		v->div[j] = out[j].div;
		v->mod[j] = out[j].mod;
	}
	return true;
}

int64_t npu_lview_at(const struct npu_lview *v, const int64_t *idx)
{
	int64_t o = v->off;

	for (int d = 0; d < v->rank; d++)
		o += (v->mod[d] ? idx[d] / v->div[d] % v->mod[d] : idx[d] / v->div[d]) *
		     v->stride[d];
	return o;
}

bool npu_lview_injective(const struct npu_lview *v)
{
	for (int d = 0; d < v->rank; d++)
		if (v->size[d] > 1 && (!v->stride[d] || v->div[d] != 1 ||
				       (v->mod[d] && v->mod[d] < v->size[d])))
			return false;
	return true;
}

static bool is_reshape_like(const char *op)
{
	return !strcmp(op, "Reshape") || !strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze") ||
	       !strcmp(op, "Flatten") || !strcmp(op, "Identity");
}

/* Apply node @n (producing @t from its first input, seen as *@v) to *@v. */
static bool apply(const npu_ir_graph *g, const npu_ir_node *n, int t, struct npu_lview *v)
{
	const npu_ir_tensor *y = &g->tensors[t];

	if (is_reshape_like(n->op))
		return npu_lview_reshape(v, y->rank, y->dims);
	if (!strcmp(n->op, "Transpose")) {
		const int64_t *p;
		int64_t rev[NPU_MAX_RANK];
		int np = 0;

		if (npu_ir_attr_ints(n, "perm", &p, &np) || !p) {
			for (int d = 0; d < v->rank; d++)
				rev[d] = v->rank - 1 - d;
			p = rev;
			np = v->rank;
		}
		return np == v->rank && npu_lview_transpose(v, p);
	}
	if (!strcmp(n->op, "Expand")) {
		int64_t d1[NPU_MAX_RANK] = { 0 };
		int lead = y->rank - v->rank;

		if (lead < 0 || y->rank > NPU_MAX_RANK)
			return false;
		for (int d = 0; d < y->rank; d++)
			d1[d] = d < lead ? 1 : v->size[d - lead];
		if (!npu_lview_reshape(v, y->rank, d1))
			return false;
		for (int d = 0; d < y->rank; d++)
			if (v->size[d] != y->dims[d]) {
				if (v->size[d] != 1)
					return false;
				v->size[d] = y->dims[d];
				v->stride[d] = 0;
				v->div[d] = 1;
				v->mod[d] = 0;
			}
		return true;
	}
	if (!strcmp(n->op, "Concat")) {
		/* Copies of one tensor along an axis it has one element of. */
		int64_t axis;

		if (npu_ir_attr_int(n, "axis", 0, &axis))
			return false;
		if (axis < 0)
			axis += v->rank;
		if (axis < 0 || axis >= v->rank || v->rank >= NPU_MAX_RANK)
			return false;
		for (int k = 1; k < n->n_inputs; k++)
			if (n->inputs[k] != n->inputs[0])
				return false;
		if (v->size[axis] != 1) {
			/* Tile: a new axis of copies before it, merged into it. */
			int64_t d1[NPU_MAX_RANK];

			for (int d = 0, e = 0; d <= v->rank; d++)
				d1[d] = d == axis ? 1 : v->size[e++];
			if (!npu_lview_reshape(v, v->rank + 1, d1))
				return false;
		}
		v->size[axis] = n->n_inputs;
		v->stride[axis] = 0;
		v->div[axis] = 1;
		v->mod[axis] = 0;
		return v->rank == y->rank || npu_lview_reshape(v, y->rank, y->dims);
	}
	if (!strcmp(n->op, "Split")) {
		int64_t axis, start = 0;
		int k;

		if (npu_ir_attr_int(n, "axis", 0, &axis))
			return false;
		if (axis < 0)
			axis += v->rank;
		if (axis < 0 || axis >= v->rank || v->div[axis] != 1 || v->mod[axis] ||
		    y->rank != v->rank)
			return false;
		for (k = 0; k < n->n_outputs && n->outputs[k] != t; k++)
			if (n->outputs[k] >= 0)
				start += g->tensors[n->outputs[k]].dims[axis];
			else
				return false;
		if (k == n->n_outputs)
			return false;
		v->off += start * v->stride[axis];
		v->size[axis] = y->dims[axis];
		return true;
	}
	return false;
}

void npu_lview_trace(const npu_ir_graph *g, int t, struct npu_lview *v, int *chain, int *n,
		    int max)
{
	int p = g->tensors[t].producer, n0 = *n;
	const npu_ir_node *nd;
	struct npu_lview in;

	npu_lview_dense(g, t, v);
	if (p < 0 || g->nodes[p].dead || *n >= max)
		return;
	nd = &g->nodes[p];
	if (nd->n_inputs < 1 || nd->inputs[0] < 0 || npu_ir_is_const(&g->tensors[nd->inputs[0]]) ||
	    g->tensors[nd->inputs[0]].dtype != g->tensors[t].dtype)
		return;
	if (!is_reshape_like(nd->op) && strcmp(nd->op, "Transpose") && strcmp(nd->op, "Expand") &&
	    strcmp(nd->op, "Concat") && strcmp(nd->op, "Split"))
		return;
	npu_lview_trace(g, nd->inputs[0], &in, chain, n, max);
	if (*n < max && apply(g, nd, t, &in) && in.rank == g->tensors[t].rank) {
		*v = in;
		chain[(*n)++] = p;
	} else {
		*n = n0;
	}
}

/* The single live consumer of @t (not a graph output), or -1. */
static int sole_user(const npu_ir_graph *g, int t)
{
	int found = -1;

	if (npu_ir_is_graph_output(g, t) || npu_ir_count_uses(g, t) != 1)
		return -1;
	for (int i = 0; i < g->n_nodes && found < 0; i++) {
		const npu_ir_node *nd = &g->nodes[i];

		for (int k = 0; !nd->dead && k < nd->n_inputs; k++)
			if (nd->inputs[k] == t)
				found = i;
	}
	return found;
}

/* The view of the first input of the @k nodes @fw[] inside the last one's output. */
static bool back_view(const npu_ir_graph *g, const int *fw, int k, struct npu_lview *v)
{
	npu_lview_dense(g, g->nodes[fw[k - 1]].outputs[0], v);
	for (int j = k - 1; j >= 0; j--) {
		const npu_ir_node *nd = &g->nodes[fw[j]];
		const npu_ir_tensor *x = &g->tensors[nd->inputs[0]];

		if (!strcmp(nd->op, "Transpose")) {
			const int64_t *p;
			int64_t inv[NPU_MAX_RANK];
			int np;

			if (npu_ir_attr_ints(nd, "perm", &p, &np) || !p) {
				for (int d = 0; d < v->rank; d++)
					inv[d] = v->rank - 1 - d;
			} else {
				if (np != v->rank)
					return false;
				for (int d = 0; d < np; d++) {
					if (p[d] < 0 || p[d] >= np)
						return false;
					inv[p[d]] = d;
				}
			}
			if (!npu_lview_transpose(v, inv))
				return false;
		} else if (!npu_lview_reshape(v, x->rank, x->dims)) {
			return false;
		}
	}
	return true;
}

void npu_lview_trace_out(const npu_ir_graph *g, int t, struct npu_lview *v, int *y, int *chain,
			int *n, int max)
{
	int fw[NPU_MAX_RANK], k = 0, cur = t;

	while (k < NPU_MAX_RANK && *n + k < max) {
		int c = sole_user(g, cur);
		const npu_ir_node *nd = c >= 0 ? &g->nodes[c] : NULL;

		if (!nd || nd->inputs[0] != cur || nd->n_outputs != 1 || nd->outputs[0] < 0 ||
		    (!is_reshape_like(nd->op) && strcmp(nd->op, "Transpose")))
			break;
		fw[k++] = c;
		cur = nd->outputs[0];
	}
	for (; k > 0; k--) {
		if (back_view(g, fw, k, v) && npu_lview_injective(v) && v->rank &&
		    v->stride[v->rank - 1] == 1) {
			*y = g->nodes[fw[k - 1]].outputs[0];
			for (int j = 0; j < k; j++)
				chain[(*n)++] = fw[j];
			return;
		}
	}
	*y = t;
	npu_lview_dense(g, t, v);
}
