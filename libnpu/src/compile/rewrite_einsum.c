// SPDX-License-Identifier: MIT
/*
 * Einsum of one or two float32 operands as Transpose, Reshape, MatMul,
 * Mul and ReduceSum nodes.  Each label (npu_einsum.h) of the equation is,
 * after the first two steps, one of:
 *
 *   batch       in both operands and the output;
 *   contracted  in both operands, not in the output;
 *   kept        in one operand and the output;
 *
 * 1. a label repeated within one operand (a diagonal, "ii->i") is taken by
 *    a Mul with a constant 0/1 identity over its two axes and a ReduceSum
 *    of the second; a label of size 1 that the output does not have is
 *    dropped by a Reshape (its sum is the element);
 * 2. a label in one operand only and not in the output is summed away
 *    there (ReduceSum, keepdims 0);
 * 3. two operands: with contracted labels, A becomes [batch, M, K] and B
 *    [batch, K, N] (Transposes, then Reshapes merging M, K and N) and one
 *    MatMul multiplies them; without, A [batch, M, 1..] and B [batch,
 *    1.., N] are multiplied elementwise (exact, no bf16 products);
 * 4. a Reshape splits M and N again and a Transpose puts the labels in
 *    the output's order.
 *
 * The operand whose kept labels come first in the output is A, and batch
 * dims stay separate as long as the MatMul has rank <= 4, so attention's
 * contractions come out as exporters write them: "bhqd,bhkd->bhqk" is
 * Transpose(K, 0 1 3 2) and MatMul, "bhqk,bhkd->bhqd" a MatMul alone.
 * More than two batch labels are merged into one (operands broadcast
 * along them are Expanded first).  Steps that change nothing (an identity
 * permutation, a Reshape to the same dims) are left out, and those on a
 * constant operand (weights: "bsd,hd->bsh") are done at compile time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_ops.h"
#include "compile/npu_rewrite_priv.h"
#include "ir/npu_einsum.h"

/* An operand as the rewrite reshapes it: its tensor and each axis's label. */
struct opnd {
	int t;
	int rank;
	int lab[NPU_MAX_RANK];
	bool fold;	/* moves of a constant @t are done at compile time */
};

struct ein {
	npu_ir_graph *g;
	char name[128];
	struct npu_einsum e;
};

static const int64_t *dims_of(const struct ein *c, const struct opnd *o)
{
	return c->g->tensors[o->t].dims;
}

/*
 * The node just added (@op's, at @opset) made a constant from constant
 * @in: evaluate it now, as shape inference would have, and drop it, when
 * @o allows (a MatMul operand without batch: a constant with batch dims
 * would make the MatMul one node per batch element, rewrite_math.c).
 */
static npu_status fold_const(struct ein *c, const struct opnd *o, int in, const char *op,
			     int opset)
{
	const struct npu_op *d = npu_op_get(op, opset);
	int k = c->g->n_nodes - 1;
	npu_status st;

	if (!o->fold || !npu_ir_is_const(&c->g->tensors[in]) || !d || !d->ir.eval ||
	    !npu_ir_const_can_eval(c->g, &c->g->nodes[k], &d->ir))
		return NPU_OK;	/* computed, or too large to fold: a node at run time */
	st = npu_ir_const_eval(c->g, k, &d->ir);
	if (!st)
		c->g->nodes[k].dead = true;
	return st;
}

static int find_label(const struct opnd *o, int l)
{
	for (int a = 0; a < o->rank; a++)
		if (o->lab[a] == l)
			return a;
	return -1;
}

/* @o with its axes in the order of labels @order[@n] (each one of its labels). */
static npu_status transpose_to(struct ein *c, struct opnd *o, const int *order, int n)
{
	int64_t perm[NPU_MAX_RANK], dims[NPU_MAX_RANK];
	bool same = true;
	int t, k;
	npu_status st;

	for (int a = 0; a < n; a++) {
		perm[a] = find_label(o, order[a]);
		dims[a] = dims_of(c, o)[perm[a]];
		same &= perm[a] == a;
	}
	if (same)
		return NPU_OK;
	if ((st = npu_rw_tensor(c->g, NPU_DTYPE_FLOAT32, n, dims, &t)) ||
	    (st = npu_rw_op(c->g, "Transpose", 13, c->name, &o->t, 1, &t, 1, &k)) ||
	    (st = npu_ir_set_attr_ints(&c->g->nodes[k], "perm", perm, n)) ||
	    (st = fold_const(c, o, o->t, "Transpose", 13)))
		return st;
	o->t = t;
	memcpy(o->lab, order, (size_t)n * sizeof(*order));
	return NPU_OK;
}

/* @o reshaped to @dims[@n] with labels @lab (-1: merged axes). */
static npu_status reshape_to(struct ein *c, struct opnd *o, int n, const int64_t *dims,
			     const int *lab)
{
	const npu_ir_tensor *x = &c->g->tensors[o->t];
	npu_status st;

	if (x->rank != n || memcmp(x->dims, dims, (size_t)n * sizeof(*dims))) {
		int in = o->t;

		if ((st = npu_rw_reshape(c->g, c->name, in, n, dims, -1, &o->t)) ||
		    (st = fold_const(c, o, in, "Reshape", 14)))
			return st;
	}
	o->rank = n;
	memcpy(o->lab, lab, (size_t)n * sizeof(*lab));
	return NPU_OK;
}

/* Sum @o over its axes @axes[@n] (ascending), dropping them. */
static npu_status reduce_axes(struct ein *c, struct opnd *o, const int64_t *axes, int n)
{
	int64_t dims[NPU_MAX_RANK];
	int lab[NPU_MAX_RANK], r = 0, t, k;
	npu_status st;

	for (int a = 0, j = 0; a < o->rank; a++) {
		if (j < n && axes[j] == a) {
			j++;
			continue;
		}
		dims[r] = dims_of(c, o)[a];
		lab[r++] = o->lab[a];
	}
	if ((st = npu_rw_tensor(c->g, NPU_DTYPE_FLOAT32, r, dims, &t)) ||
	    (st = npu_rw_op(c->g, "ReduceSum", 13, c->name, &o->t, 1, &t, 1, &k)) ||
	    (st = npu_ir_set_attr_ints(&c->g->nodes[k], "axes", axes, n)) ||
	    (st = npu_ir_set_attr_int(&c->g->nodes[k], "keepdims", 0)))
		return st;
	o->t = t;
	o->rank = r;
	memcpy(o->lab, lab, (size_t)r * sizeof(*lab));
	return NPU_OK;
}

/* The diagonal of @o over its axes @p < @q (one label): x * I, summed over @q. */
static npu_status diagonal(struct ein *c, struct opnd *o, int p, int q)
{
	int64_t md[NPU_MAX_RANK], n = dims_of(c, o)[p], ax = q;
	float *eye;
	int m, t;
	npu_status st;

	if (n > 4096)
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"node '%s' (Einsum): a diagonal of %lld elements: at most 4096 are supported",
				c->name, (long long)n);
	eye = calloc((size_t)(n * n), sizeof(*eye));
	if (!eye)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t i = 0; i < n; i++)
		eye[i * n + i] = 1.0f;
	for (int a = 0; a < o->rank; a++)
		md[a] = a == p || a == q ? n : 1;
	if ((st = npu_rw_const(c->g, NPU_DTYPE_FLOAT32, o->rank, md, eye, &m)) ||
	    (st = npu_rw_binary(c->g, "Mul", 14, c->name, o->t, m, -1, &t)))
		return st;
	o->t = t;
	return reduce_axes(c, o, &ax, 1);
}

/*
 * Steps 1 and 2 on operand @i (@other: the other operand, or NULL):
 * diagonals, size-1 labels the output lacks, then labels only @o has.
 */
static npu_status prepare(struct ein *c, struct opnd *o, const struct opnd *other, bool sum)
{
	const struct npu_einsum *e = &c->e;
	int64_t axes[NPU_MAX_RANK];
	npu_status st;
	int n = 0;

	if (!sum) {
		for (int q = 1; q < o->rank; q++)
			for (int p = 0; p < q; p++)
				if (o->lab[p] == o->lab[q]) {
					if ((st = diagonal(c, o, p, q)))
						return st;
					q = 0;	/* the axes moved: look again */
					break;
				}
		{
			int64_t dims[NPU_MAX_RANK];
			int lab[NPU_MAX_RANK], r = 0;

			for (int a = 0; a < o->rank; a++) {
				if (dims_of(c, o)[a] == 1 && !npu_einsum_has(e, -1, o->lab[a]))
					continue;
				dims[r] = dims_of(c, o)[a];
				lab[r++] = o->lab[a];
			}
			return reshape_to(c, o, r, dims, lab);
		}
	}
	for (int a = 0; a < o->rank; a++)
		if (!npu_einsum_has(e, -1, o->lab[a]) && (!other || find_label(other, o->lab[a]) < 0))
			axes[n++] = a;
	return n ? reduce_axes(c, o, axes, n) : NPU_OK;
}

/* The labels of @o in @order that satisfy @in_other == (label in @other). */
static int pick(const int *order, int n, const struct opnd *o, const struct opnd *other,
		bool in_other, int *out)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		if (find_label(o, order[i]) >= 0 && (find_label(other, order[i]) >= 0) == in_other)
			out[k++] = order[i];
	return k;
}

/* The sizes of labels @lab[@n] in @o (1 where it has none). */
static int64_t sizes(const struct ein *c, const struct opnd *o, const int *lab, int n,
		     int64_t *dims)
{
	int64_t p = 1;

	for (int i = 0; i < n; i++) {
		int a = find_label(o, lab[i]);

		dims[i] = a >= 0 ? dims_of(c, o)[a] : 1;
		p *= dims[i];
	}
	return p;
}

/* @o Expanded along its first @nb axes to @bd (when it is smaller there). */
static npu_status expand_batch(struct ein *c, struct opnd *o, int nb, const int64_t *bd)
{
	int64_t dims[NPU_MAX_RANK];
	int sh, t;
	npu_status st;

	memcpy(dims, dims_of(c, o), sizeof(dims));
	if (!memcmp(dims, bd, (size_t)nb * sizeof(*bd)))
		return NPU_OK;
	memcpy(dims, bd, (size_t)nb * sizeof(*bd));
	if ((st = npu_rw_ints(c->g, dims, o->rank, &sh)) ||
	    (st = npu_rw_tensor(c->g, NPU_DTYPE_FLOAT32, o->rank, dims, &t)) ||
	    (st = npu_rw_op(c->g, "Expand", 13, c->name, (int[]){ o->t, sh }, 2, &t, 1, NULL)) ||
	    (st = fold_const(c, o, o->t, "Expand", 13)))
		return st;
	o->t = t;
	return NPU_OK;
}

/* Step 3: A x B over their shared labels, into *@res with labels batch, M, N. */
static npu_status contract(struct ein *c, struct opnd *A, struct opnd *B, struct opnd *res)
{
	const struct npu_einsum *e = &c->e;
	int bl[NPU_MAX_RANK], ml[NPU_MAX_RANK], nl[NPU_MAX_RANK], kl[NPU_MAX_RANK];
	int order[NPU_MAX_RANK], lab[NPU_MAX_RANK];
	int64_t ad[NPU_MAX_RANK], bd[NPU_MAX_RANK], yd[NPU_MAX_RANK], md[NPU_MAX_RANK];
	int64_t nd[NPU_MAX_RANK], kd[NPU_MAX_RANK], xb[NPU_MAX_RANK];
	int nb = pick(e->out, e->out_rank, A, B, true, bl);
	int nm = pick(e->out, e->out_rank, A, B, false, ml);
	int nn = pick(e->out, e->out_rank, B, A, false, nl);
	int64_t Mp, Np, Kp, od[NPU_MAX_RANK], pa = 1, pb = 1;
	bool matmul;
	int nk, r, rb = nb, t;
	npu_status st;

	/* The contracted labels: shared ones the output does not have, in A's order. */
	nk = 0;
	for (int a = 0; a < A->rank; a++)
		if (find_label(B, A->lab[a]) >= 0 && !npu_einsum_has(e, -1, A->lab[a]))
			kl[nk++] = A->lab[a];
	matmul = nk > 0;
	sizes(c, A, bl, nb, ad);
	sizes(c, B, bl, nb, bd);
	for (int i = 0; i < nb; i++) {
		xb[i] = ad[i] == 1 ? bd[i] : ad[i];
		pa *= ad[i];
		pb *= bd[i];
	}
	A->fold = pa == 1;
	B->fold = pb == 1;
	/* A: [batch, M, K]; B: [batch, K, N] (without K: [batch, N]). */
	memcpy(order, bl, (size_t)nb * sizeof(int));
	memcpy(order + nb, ml, (size_t)nm * sizeof(int));
	memcpy(order + nb + nm, kl, (size_t)nk * sizeof(int));
	if ((st = transpose_to(c, A, order, nb + nm + nk)))
		return st;
	memcpy(order + nb, kl, (size_t)nk * sizeof(int));
	memcpy(order + nb + nk, nl, (size_t)nn * sizeof(int));
	if ((st = transpose_to(c, B, order, nb + nk + nn)))
		return st;
	Mp = sizes(c, A, ml, nm, md);
	Np = sizes(c, B, nl, nn, nd);
	Kp = sizes(c, A, kl, nk, kd);
	for (int i = 0; i < NPU_MAX_RANK; i++)
		lab[i] = -1;
	if (!matmul) {
		/* Elementwise: A [batch, M, 1..], B [batch, 1.., N]. */
		int64_t d2[NPU_MAX_RANK];

		memcpy(d2, ad, (size_t)nb * sizeof(*ad));
		memcpy(d2 + nb, md, (size_t)nm * sizeof(*md));
		for (int i = 0; i < nn; i++)
			d2[nb + nm + i] = 1;
		r = nb + nm + nn;
		if ((st = reshape_to(c, A, r, d2, lab)))
			return st;
		memcpy(d2, bd, (size_t)nb * sizeof(*bd));
		for (int i = 0; i < nm; i++)
			d2[nb + i] = 1;
		memcpy(d2 + nb + nm, nd, (size_t)nn * sizeof(*nd));
		if ((st = reshape_to(c, B, r, d2, lab)))
			return st;
		if ((st = npu_rw_binary(c->g, "Mul", 14, c->name, A->t, B->t, -1, &t)))
			return st;
	} else {
		int64_t d2[NPU_MAX_RANK];

		memcpy(od, xb, (size_t)nb * sizeof(*xb));
		if (nb > 2) {
			/*
			 * The MatMul takes rank <= 4: one batch axis of them
			 * all; an operand of batch 1 broadcasts, one broadcast
			 * along some batch axes only is Expanded first.
			 */
			int64_t bp = 1;

			if ((pa != 1 && (st = expand_batch(c, A, nb, xb))) ||
			    (pb != 1 && (st = expand_batch(c, B, nb, xb))))
				return st;
			for (int i = 0; i < nb; i++)
				bp *= xb[i];
			ad[0] = pa == 1 ? 1 : bp;
			bd[0] = pb == 1 ? 1 : bp;
			od[0] = bp;
			rb = 1;
		}
		memcpy(d2, ad, (size_t)rb * sizeof(*ad));
		d2[rb] = Mp;
		d2[rb + 1] = Kp;
		if ((st = reshape_to(c, A, rb + 2, d2, lab)))
			return st;
		memcpy(d2, bd, (size_t)rb * sizeof(*bd));
		d2[rb] = Kp;
		d2[rb + 1] = Np;
		if ((st = reshape_to(c, B, rb + 2, d2, lab)))
			return st;
		od[rb] = Mp;
		od[rb + 1] = Np;
		if ((st = npu_rw_tensor(c->g, NPU_DTYPE_FLOAT32, rb + 2, od, &t)) ||
		    (st = npu_rw_op(c->g, "MatMul", 13, c->name, (int[]){ A->t, B->t }, 2, &t, 1,
				    NULL)))
			return st;
	}
	/* Split M and N again: [batch, M.., N..]. */
	res->t = t;
	res->rank = c->g->tensors[t].rank;
	res->fold = false;
	memcpy(yd, xb, (size_t)nb * sizeof(*xb));
	memcpy(yd + nb, md, (size_t)nm * sizeof(*md));
	memcpy(yd + nb + nm, nd, (size_t)nn * sizeof(*nd));
	memcpy(lab, bl, (size_t)nb * sizeof(int));
	memcpy(lab + nb, ml, (size_t)nm * sizeof(int));
	memcpy(lab + nb + nm, nl, (size_t)nn * sizeof(int));
	return reshape_to(c, res, nb + nm + nn, yd, lab);
}

/*
 * @o (labels: the output's, in any order) into the node's output @y: a
 * Transpose to the output's order; the last node made writes @y itself.
 */
static npu_status finish(struct ein *c, struct opnd *o, int y, int first_node)
{
	npu_ir_graph *g = c->g;
	const npu_ir_tensor *yt = &g->tensors[y];
	int p;

	if (o->rank != c->e.out_rank)
		return npu_fail(NPU_ERR_INTERNAL, "node '%s' (Einsum): %d axes left, not %d",
				c->name, o->rank, c->e.out_rank);
	{
		npu_status st = transpose_to(c, o, c->e.out, o->rank);

		if (st)
			return st;
	}
	p = g->tensors[o->t].producer;
	if (p >= first_node && !g->nodes[p].dead && g->tensors[o->t].rank == yt->rank &&
	    !memcmp(g->tensors[o->t].dims, yt->dims, (size_t)yt->rank * sizeof(*yt->dims))) {
		/* Retarget the last node made: no copy, no Reshape between. */
		for (int j = 0; j < g->nodes[p].n_outputs; j++)
			if (g->nodes[p].outputs[j] == o->t)
				g->nodes[p].outputs[j] = y;
		g->tensors[o->t].producer = -1;
		g->tensors[y].producer = p;
		return NPU_OK;
	}
	/* Nothing computed (a plain copy), or only the rank differs (a scalar). */
	return npu_rw_reshape(g, c->name, o->t, yt->rank, yt->dims, y, &p);
}

npu_status npu_rewrite_einsum(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	struct ein *c;
	struct opnd o[2], res;
	const char *eq;
	char why[256];
	int ranks[2] = { 0, 0 }, y, first, nin = n->n_inputs;
	const int64_t *dims[2] = { NULL, NULL };
	npu_status st;

	if (nin < 1 || nin > 2 || !(y = n->outputs[0], y >= 0) ||
	    npu_ir_attr_string(n, "equation", NULL, &eq) || !eq)
		return NPU_OK;
	for (int i = 0; i < nin; i++) {
		const npu_ir_tensor *x = npu_ir_input(g, n, i);

		if (!x || x->dtype != NPU_DTYPE_FLOAT32)
			return NPU_OK;
		o[i].t = n->inputs[i];
		o[i].rank = ranks[i] = x->rank;
		o[i].fold = false;
		dims[i] = x->dims;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	c->g = g;
	snprintf(c->name, sizeof(c->name), "%s", n->name);
	if (npu_einsum_parse(eq, nin, ranks, &c->e, why, sizeof(why)) ||
	    npu_einsum_sizes(&c->e, dims, why, sizeof(why))) {
		free(c);
		return NPU_OK;	/* the shape rule said so already */
	}
	for (int i = 0; i < nin; i++)
		memcpy(o[i].lab, c->e.lab[i], sizeof(o[i].lab));
	*applied = true;
	npu_rw_detach(g, k, y);
	g->nodes[k].dead = true;
	first = g->n_nodes;
	st = NPU_OK;
	for (int i = 0; i < nin && !st; i++)
		st = prepare(c, &o[i], NULL, false);
	for (int i = 0; i < nin && !st; i++)
		st = prepare(c, &o[i], nin == 2 ? &o[1 - i] : NULL, true);
	if (!st && nin == 2) {
		/* A: the operand whose kept labels come first in the output. */
		int a = 0;

		for (int i = 0; i < c->e.out_rank; i++) {
			int l = c->e.out[i], in0 = find_label(&o[0], l) >= 0;

			if (in0 != (find_label(&o[1], l) >= 0)) {
				a = in0 ? 0 : 1;
				break;
			}
		}
		st = contract(c, &o[a], &o[1 - a], &res);
	} else {
		res = o[0];
	}
	if (!st)
		st = finish(c, &res, y, first);
	free(c);
	return st;
}
