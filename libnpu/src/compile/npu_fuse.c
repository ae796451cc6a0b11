// SPDX-License-Identifier: MIT
/*
 * Graph rewrites before lowering:
 *
 * - BatchNormalization after a Conv with constant weights is folded into
 *   the Conv's weights and bias (inference form: y = s (x - mean) /
 *   sqrt(var + eps) + b, per output channel).
 * - A bias Add after a float MatMul or Gemm with constant weights (the
 *   linear layers of transformer exports: MatMul(x, W) then Add(y, b),
 *   b a float32 constant of shape [N] or [1, .., 1, N]) becomes the TCU's
 *   bias: MatMul's third input, or Gemm's C (summed into a constant row C
 *   it already has, beta folded in).  The TCU adds it to the fp32
 *   accumulator before the output stage's scale, so with a fused scale s
 *   the lowering stores b / s (lower_matmul.c).  The activation after the
 *   Add then folds as below.
 * - An activation after a Conv or Gemm/MatMul (Relu, LeakyRelu, Clip,
 *   Sigmoid, Tanh, HardSwish, Gelu, Swish) becomes the TCU's output-stage
 *   function: the attribute "npu_act" (and "npu_act_alpha"/"_beta") on the
 *   producer, which then writes the activation's output directly.
 *
 * - A residual Add after a float Conv without an activation, and a Relu
 *   after that Add, become the Conv's epilogue: the Add's other operand
 *   becomes the Conv's fourth input (the residual, same shape as the
 *   output) and "npu_res_act" = NPU_FN_RELU marks the Relu.  The tile adds
 *   the residual in HBSM (CVU) before writing back, so the sum never
 *   makes a round trip through DDR (lower_conv.c).
 *
 * A rewrite happens only when the intermediate tensor has that one
 * consumer and is not a graph output, so no result anyone can see changes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_lower.h"
#include "compile/npu_ops.h"
#include "npu_debug.h"

/* NPU_DEBUG=fuse: "<what> <op> <label> into <op> <label>". */
static void say(const npu_ir_graph *g, const char *what, int from, int into)
{
	char a[96], b[96];

	if (!npu_debug_on(NPU_DEBUG_FUSE))
		return;
	npu_debug(NPU_DEBUG_FUSE, "%s %s %s into %s %s", what, g->nodes[from].op,
		  npu_ir_node_label(&g->nodes[from], a, sizeof(a)), g->nodes[into].op,
		  npu_ir_node_label(&g->nodes[into], b, sizeof(b)));
}

/* The single live consumer of tensor @t, or -1. */
static int sole_consumer(const npu_ir_graph *g, int t)
{
	int found = -1;

	if (npu_ir_is_graph_output(g, t) || npu_ir_count_uses(g, t) != 1)
		return -1;
	for (int i = 0; i < g->n_nodes; i++) {
		const npu_ir_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		for (int k = 0; k < n->n_inputs; k++)
			if (n->inputs[k] == t)
				found = i;
	}
	return found;
}

static npu_status fold_bn(npu_ir_graph *g, int ci, int bi)
{
	npu_ir_node *conv = &g->nodes[ci], *bn = &g->nodes[bi];
	const npu_ir_tensor *w = npu_ir_input(g, conv, 1), *b = npu_ir_input(g, conv, 2);
	const npu_ir_tensor *sc = npu_ir_input(g, bn, 1), *bb = npu_ir_input(g, bn, 2);
	const npu_ir_tensor *mean = npu_ir_input(g, bn, 3), *var = npu_ir_input(g, bn, 4);
	int64_t OC = w->dims[0], per = npu_ir_numel(w) / OC;
	float eps, *nw, *nb;
	int tw, tb, out = bn->outputs[0];
	npu_status st;

	if (!sc || !bb || !mean || !var || !npu_ir_is_const(sc) || !npu_ir_is_const(bb) ||
	    !npu_ir_is_const(mean) || !npu_ir_is_const(var) || sc->dtype != NPU_DTYPE_FLOAT32 ||
	    npu_ir_numel(sc) != OC || npu_ir_numel(bb) != OC || npu_ir_numel(mean) != OC ||
	    npu_ir_numel(var) != OC || (bn->n_outputs > 1 && bn->outputs[1] >= 0))
		return NPU_OK;	/* not the inference form: lowered on its own */
	if ((st = npu_ir_attr_float(bn, "epsilon", 1e-5f, &eps)))
		return st;
	nw = malloc((size_t)npu_ir_numel(w) * 4);
	nb = malloc((size_t)OC * 4);
	if (!nw || !nb) {
		free(nw);
		free(nb);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	for (int64_t o = 0; o < OC; o++) {
		float k = ((const float *)sc->data)[o] / sqrtf(((const float *)var->data)[o] + eps);
		float b0 = b ? ((const float *)b->data)[o] : 0.0f;

		for (int64_t i = 0; i < per; i++)
			nw[o * per + i] = ((const float *)w->data)[o * per + i] * k;
		nb[o] = (b0 - ((const float *)mean->data)[o]) * k + ((const float *)bb->data)[o];
	}
	st = npu_ir_add_tensor(g, NULL, NPU_DTYPE_FLOAT32, w->rank, w->dims, &tw);
	if (!st)
		st = npu_ir_set_const_owned(g, tw, nw, (size_t)npu_ir_numel(&g->tensors[tw]) * 4);
	else
		free(nw);
	if (!st)
		st = npu_ir_add_tensor(g, NULL, NPU_DTYPE_FLOAT32, 1, &OC, &tb);
	if (!st)
		st = npu_ir_set_const_owned(g, tb, nb, (size_t)OC * 4);
	else
		free(nb);
	if (st)
		return st;
	conv = &g->nodes[ci];	/* tables may have moved */
	bn = &g->nodes[bi];
	if (conv->n_inputs < 3) {
		int *in = realloc(conv->inputs, 3 * sizeof(int));

		if (!in)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		conv->inputs = in;
		conv->n_inputs = 3;
	}
	conv->inputs[1] = tw;
	conv->inputs[2] = tb;
	conv->outputs[0] = out;
	g->tensors[out].producer = ci;
	bn->dead = true;
	say(g, "folded", bi, ci);
	return NPU_OK;
}

static npu_status fuse_act(npu_ir_graph *g, int pi, int ai)
{
	npu_ir_node *p = &g->nodes[pi], *a = &g->nodes[ai];
	const struct npu_op *d = npu_op_get(a->op, a->opset);
	float alpha = 0.0f, beta = 0.0f;
	int64_t fn;
	npu_status st = NPU_OK;

	if (!d || !(d->flags & NPU_OP_TCU_ACT) || (d->support && d->support(g, a)))
		return NPU_OK;	/* not an activation, or one lowering refuses */
	/* The function is the registry's; its parameters are the node's. */
	fn = npu_op_cvu_fn(d, a);
	if (fn == NPU_FN_LEAKY_RELU) {
		st = npu_ir_attr_float(a, "alpha", 0.01f, &alpha);
	} else if (fn == NPU_FN_CLIP && a->opset < 11) {
		st = npu_ir_attr_float(a, "min", -INFINITY, &alpha);
		if (!st)
			st = npu_ir_attr_float(a, "max", INFINITY, &beta);
	} else if (fn == NPU_FN_CLIP) {
		const npu_ir_tensor *lo = npu_ir_input(g, a, 1), *hi = npu_ir_input(g, a, 2);
		int cnt;

		if ((lo && !npu_ir_is_const(lo)) || (hi && !npu_ir_is_const(hi)))
			return NPU_OK;
		alpha = -INFINITY;
		beta = INFINITY;
		if (lo && (npu_ir_const_floats(lo, &alpha, 1, &cnt) || cnt != 1))
			return NPU_OK;
		if (hi && (npu_ir_const_floats(hi, &beta, 1, &cnt) || cnt != 1))
			return NPU_OK;
	}
	if (st)
		return st;
	if ((st = npu_ir_set_attr_int(p, "npu_act", fn)) ||
	    (st = npu_ir_set_attr_float(&g->nodes[pi], "npu_act_alpha", alpha)) ||
	    (st = npu_ir_set_attr_float(&g->nodes[pi], "npu_act_beta", beta)))
		return st;
	p = &g->nodes[pi];
	a = &g->nodes[ai];
	p->outputs[0] = a->outputs[0];
	g->tensors[a->outputs[0]].producer = pi;
	a->dead = true;
	say(g, "activation", ai, pi);
	return NPU_OK;
}

static bool same_shape(const npu_ir_tensor *a, const npu_ir_tensor *b)
{
	if (a->rank != b->rank)
		return false;
	for (int d = 0; d < a->rank; d++)
		if (a->dims[d] != b->dims[d])
			return false;
	return true;
}

/*
 * The constant row of bias Add @ai on MatMul/Gemm output @y: the Add's
 * other operand, if it is a float32 constant that varies along the last
 * axis only (N values or one) and the Add's output has @y's shape (the
 * bias broadcasts into the product, not the product into the bias); -1
 * otherwise.
 */
static int bias_row(const npu_ir_graph *g, const npu_ir_node *add, int y)
{
	const npu_ir_tensor *ty = &g->tensors[y], *b;
	int bi;

	if (strcmp(add->op, "Add") || add->n_inputs != 2 || add->n_outputs != 1 ||
	    add->outputs[0] < 0 || add->inputs[0] == add->inputs[1] || ty->rank < 1)
		return -1;
	bi = add->inputs[0] == y ? add->inputs[1] : add->inputs[0];
	if (bi < 0)
		return -1;
	b = &g->tensors[bi];
	if (!npu_ir_is_const(b) || b->dtype != NPU_DTYPE_FLOAT32 || b->rank > ty->rank ||
	    !same_shape(&g->tensors[add->outputs[0]], ty) ||
	    g->tensors[add->outputs[0]].dtype != NPU_DTYPE_FLOAT32)
		return -1;
	for (int d = 0; d + 1 < b->rank; d++)
		if (b->dims[d] != 1)
			return -1;
	if (b->rank > 0 && b->dims[b->rank - 1] != 1 &&
	    b->dims[b->rank - 1] != ty->dims[ty->rank - 1])
		return -1;
	return bi;
}

/*
 * Float MatMul or Gemm @mi with constant B -> Add @ai of a constant row:
 * the row becomes the TCU bias (a new [N] constant, beta * C + b for a
 * Gemm with a constant row C, beta then 1) and the Add goes.  Left alone:
 * int8 products (other ops), run-time B (attention's products), a C that
 * is not a constant row, a zero scale (the lowering divides the bias by
 * it), a node that already has an activation.
 */
static npu_status fuse_bias(npu_ir_graph *g, int mi, int ai)
{
	npu_ir_node *m = &g->nodes[mi];
	bool gemm = !strcmp(m->op, "Gemm");
	int y = m->outputs[0], bi = bias_row(g, &g->nodes[ai], y), tb, out;
	const npu_ir_tensor *a, *w, *c = NULL, *b;
	float alpha = 1.0f, beta = 1.0f, *row;
	int64_t N;
	npu_status st;

	if (bi < 0 || m->n_inputs < 2 || npu_ir_attr_find(m, "npu_act") ||
	    npu_ir_attr_find(m, NPU_ATTR_ATTN) || g->tensors[y].dtype != NPU_DTYPE_FLOAT32)
		return NPU_OK;
	a = npu_ir_input(g, m, 0);
	w = npu_ir_input(g, m, 1);
	if (!a || !w || a->dtype != NPU_DTYPE_FLOAT32 || w->dtype != NPU_DTYPE_FLOAT32 ||
	    !npu_ir_is_const(w))
		return NPU_OK;
	if (gemm) {
		/* A bad attribute: left to the lowering, which names it. */
		if (m->n_inputs > 3 || npu_ir_attr_float(m, "alpha", 1.0f, &alpha) ||
		    npu_ir_attr_float(m, "beta", 1.0f, &beta))
			return NPU_OK;
		c = m->n_inputs > 2 ? npu_ir_input(g, m, 2) : NULL;
	} else if (m->n_inputs != 2 ||
		   npu_ir_attr_float(m, NPU_ATTR_SCALE, 1.0f, &alpha)) {
		return NPU_OK;
	}
	N = g->tensors[y].dims[g->tensors[y].rank - 1];
	if (alpha == 0.0f || !isfinite(alpha) || N < 1 ||
	    (c && (!npu_ir_is_const(c) || c->dtype != NPU_DTYPE_FLOAT32 ||
		   (npu_ir_numel(c) != N && npu_ir_numel(c) != 1))))
		return NPU_OK;
	b = &g->tensors[bi];
	row = malloc((size_t)N * 4);
	if (!row)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t j = 0; j < N; j++) {
		float cj = c ? ((const float *)c->data)[npu_ir_numel(c) == 1 ? 0 : j] : 0.0f;

		row[j] = ((const float *)b->data)[npu_ir_numel(b) == 1 ? 0 : j];
		if (c)
			row[j] += beta * cj;
		/* The lowering stores row / alpha: it must stay a number. */
		if (!isfinite(row[j] / alpha)) {
			free(row);
			return NPU_OK;
		}
	}
	st = npu_ir_add_tensor(g, NULL, NPU_DTYPE_FLOAT32, 1, &N, &tb);
	if (!st)
		st = npu_ir_set_const_owned(g, tb, row, (size_t)N * 4);
	else
		free(row);
	if (st)
		return st;
	m = &g->nodes[mi];	/* tables may have moved */
	if (m->n_inputs < 3) {
		int *in = realloc(m->inputs, 3 * sizeof(int));

		if (!in)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		m->inputs = in;
		m->n_inputs = 3;
	}
	m->inputs[2] = tb;
	if (gemm && beta != 1.0f && (st = npu_ir_set_attr_float(m, "beta", 1.0f)))
		return st;
	out = g->nodes[ai].outputs[0];
	g->nodes[mi].outputs[0] = out;
	g->tensors[out].producer = mi;
	g->nodes[ai].dead = true;
	say(g, "bias", ai, mi);
	return NPU_OK;
}

/*
 * MatMul @mi -> Mul or Div @si by a constant float scalar (attention's
 * 1/sqrt(d) on Q K^T): the scale into the TCU output stage ("npu_scale",
 * applied before any fused activation), so the scores are written once.
 */
static npu_status fuse_scale(npu_ir_graph *g, int mi, int si)
{
	npu_ir_node *m = &g->nodes[mi], *s = &g->nodes[si];
	bool div = !strcmp(s->op, "Div");
	const npu_ir_tensor *k;
	float v;
	int cnt, y = m->outputs[0];

	if ((!div && strcmp(s->op, "Mul")) || s->n_inputs != 2 || s->n_outputs != 1 ||
	    s->outputs[0] < 0 || g->tensors[y].dtype != NPU_DTYPE_FLOAT32 ||
	    (div && s->inputs[0] != y) || s->inputs[0] == s->inputs[1])
		return NPU_OK;
	k = &g->tensors[s->inputs[0] == y ? s->inputs[1] : s->inputs[0]];
	if (!npu_ir_is_const(k) || k->dtype != NPU_DTYPE_FLOAT32 || npu_ir_numel(k) != 1 ||
	    npu_ir_const_floats(k, &v, 1, &cnt) || cnt != 1 || (div && v == 0.0f) ||
	    !isfinite(v) || g->tensors[s->outputs[0]].rank != g->tensors[y].rank)
		return NPU_OK;
	if (div)
		v = 1.0f / v;
	{
		npu_status st = npu_ir_set_attr_float(m, NPU_ATTR_SCALE, v);

		if (st)
			return st;
	}
	m = &g->nodes[mi];
	s = &g->nodes[si];
	m->outputs[0] = s->outputs[0];
	g->tensors[s->outputs[0]].producer = mi;
	s->dead = true;
	say(g, "scale", si, mi);
	return NPU_OK;
}

/*
 * Conv @ci -> Add @ai [-> Relu]: the Add (and the Relu) into the Conv.
 * Only a same-shape fp32 residual: the epilogue has no broadcasting.
 * *fused says whether it happened (the residual's producer may then come
 * after the Conv in node order).
 */
static npu_status fuse_residual(npu_ir_graph *g, int ci, int ai, bool *fused)
{
	npu_ir_node *conv = &g->nodes[ci], *add = &g->nodes[ai];
	int y = conv->outputs[0], r, out, relu;
	int *in;

	*fused = false;
	if (add->n_inputs != 2 || add->n_outputs != 1 || add->outputs[0] < 0 ||
	    conv->n_inputs < 2 || conv->n_inputs > 3 || add->inputs[0] == add->inputs[1])
		return NPU_OK;
	r = add->inputs[0] == y ? add->inputs[1] : add->inputs[0];
	out = add->outputs[0];
	if (r < 0 || g->tensors[y].dtype != NPU_DTYPE_FLOAT32 ||
	    g->tensors[r].dtype != NPU_DTYPE_FLOAT32 || g->tensors[out].dtype != NPU_DTYPE_FLOAT32 ||
	    !same_shape(&g->tensors[r], &g->tensors[y]) ||
	    !same_shape(&g->tensors[out], &g->tensors[y]))
		return NPU_OK;
	in = realloc(conv->inputs, 4 * sizeof(int));
	if (!in)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	conv->inputs = in;
	if (conv->n_inputs < 3)
		in[2] = -1;
	in[3] = r;
	conv->n_inputs = 4;
	conv->outputs[0] = out;
	g->tensors[out].producer = ci;
	add->dead = true;
	*fused = true;
	say(g, "residual", ai, ci);
	relu = sole_consumer(g, out);
	if (relu >= 0 && !strcmp(g->nodes[relu].op, "Relu") && g->nodes[relu].n_outputs == 1) {
		npu_status st = npu_ir_set_attr_int(&g->nodes[ci], "npu_res_act", NPU_FN_RELU);

		if (st)
			return st;
		out = g->nodes[relu].outputs[0];
		g->nodes[ci].outputs[0] = out;
		g->tensors[out].producer = ci;
		g->nodes[relu].dead = true;
		say(g, "residual activation", relu, ci);
	}
	return NPU_OK;
}

/*
 * A BatchNormalization left on its own (not after a Conv) in inference
 * form becomes x * k + c with k = scale / sqrt(var + eps) and
 * c = B - mean * k, per channel (axis 1): two broadcast elementwise nodes.
 */
static npu_status split_bn(npu_ir_graph *g, int bi)
{
	npu_ir_node *bn = &g->nodes[bi];
	const npu_ir_tensor *x = npu_ir_input(g, bn, 0), *sc = npu_ir_input(g, bn, 1);
	const npu_ir_tensor *bb = npu_ir_input(g, bn, 2), *mean = npu_ir_input(g, bn, 3);
	const npu_ir_tensor *var = npu_ir_input(g, bn, 4);
	int64_t C, dims[NPU_MAX_RANK];
	int xi, yi, tk, tc, tm, id, r;
	float eps, *k, *c;
	npu_status st;

	if (!sc || !bb || !mean || !var || !npu_ir_is_const(sc) || !npu_ir_is_const(bb) ||
	    !npu_ir_is_const(mean) || !npu_ir_is_const(var) || x->rank < 2 ||
	    x->dtype != NPU_DTYPE_FLOAT32 || sc->dtype != NPU_DTYPE_FLOAT32 ||
	    (bn->n_outputs > 1 && bn->outputs[1] >= 0))
		return NPU_OK;
	C = x->dims[1];
	if (npu_ir_numel(sc) != C || npu_ir_numel(bb) != C || npu_ir_numel(mean) != C ||
	    npu_ir_numel(var) != C)
		return NPU_OK;
	if ((st = npu_ir_attr_float(bn, "epsilon", 1e-5f, &eps)))
		return st;
	k = malloc((size_t)C * 4);
	c = malloc((size_t)C * 4);
	if (!k || !c) {
		free(k);
		free(c);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	for (int64_t i = 0; i < C; i++) {
		k[i] = ((const float *)sc->data)[i] / sqrtf(((const float *)var->data)[i] + eps);
		c[i] = ((const float *)bb->data)[i] - ((const float *)mean->data)[i] * k[i];
	}
	/* [C, 1, 1 ...]: broadcast over the spatial axes. */
	r = x->rank - 1;
	dims[0] = C;
	for (int d = 1; d < r; d++)
		dims[d] = 1;
	xi = bn->inputs[0];
	yi = bn->outputs[0];
	st = npu_ir_add_tensor(g, NULL, NPU_DTYPE_FLOAT32, r, dims, &tk);
	if (!st)
		st = npu_ir_set_const_owned(g, tk, k, (size_t)C * 4);
	else
		free(k);
	if (!st)
		st = npu_ir_add_tensor(g, NULL, NPU_DTYPE_FLOAT32, r, dims, &tc);
	if (!st)
		st = npu_ir_set_const_owned(g, tc, c, (size_t)C * 4);
	else
		free(c);
	if (!st) {
		int64_t xd[NPU_MAX_RANK];
		int xr = g->tensors[xi].rank;

		/* Copied: adding a tensor may move the table. */
		memcpy(xd, g->tensors[xi].dims, sizeof(xd));
		st = npu_ir_add_tensor(g, NULL, NPU_DTYPE_FLOAT32, xr, xd, &tm);
	}
	if (st)
		return st;
	g->nodes[bi].dead = true;
	g->tensors[yi].producer = -1;
	if (npu_debug_on(NPU_DEBUG_FUSE)) {
		char lbl[96];

		npu_debug(NPU_DEBUG_FUSE, "split BatchNormalization %s into Mul + Add",
			  npu_ir_node_label(&g->nodes[bi], lbl, sizeof(lbl)));
	}
	if ((st = npu_ir_add_node(g, "Mul", "", (int[]){ xi, tk }, 2, &tm, 1, &id)))
		return st;
	return npu_ir_add_node(g, "Add", "", (int[]){ tm, tc }, 2, &yi, 1, &id);
}

npu_status npu_fuse(npu_ir_graph *g, uint32_t hbsm)
{
	npu_status st = NPU_OK;
	int n0 = g->n_nodes;
	bool reorder = false;

	for (int i = 0; i < g->n_nodes && !st; i++) {
		npu_ir_node *n = &g->nodes[i];
		bool conv = !strcmp(n->op, "Conv"), mm = !strcmp(n->op, "Gemm") ||
			    !strcmp(n->op, "MatMul");
		int c;

		if (n->dead || (!conv && !mm) || n->n_outputs < 1 || n->outputs[0] < 0 ||
		    npu_ir_node_dyn(g, n))
			continue;
		c = sole_consumer(g, n->outputs[0]);
		if (!strcmp(n->op, "MatMul") && c >= 0) {
			st = fuse_scale(g, i, c);
			if (st)
				break;
			n = &g->nodes[i];
			c = sole_consumer(g, n->outputs[0]);
		}
		/* Before the activations: the one after the bias then folds too. */
		if (mm && c >= 0 && !strcmp(g->nodes[c].op, "Add")) {
			st = fuse_bias(g, i, c);
			if (st)
				break;
			n = &g->nodes[i];
			c = sole_consumer(g, n->outputs[0]);
		}
		if (conv && c >= 0 && !strcmp(g->nodes[c].op, "BatchNormalization")) {
			const npu_ir_tensor *w = npu_ir_input(g, n, 1), *b = npu_ir_input(g, n, 2);

			if (w && npu_ir_is_const(w) && w->dtype == NPU_DTYPE_FLOAT32 &&
			    (!b || npu_ir_is_const(b))) {
				st = fold_bn(g, i, c);
				if (st)
					break;
				n = &g->nodes[i];
				c = sole_consumer(g, n->outputs[0]);
			}
		}
		if (c >= 0 && !npu_ir_attr_find(&g->nodes[i], "npu_act"))
			st = fuse_act(g, i, c);
		if (!st && conv && c >= 0 && !npu_ir_attr_find(&g->nodes[i], "npu_act") &&
		    !strcmp(g->nodes[c].op, "Add")) {
			bool fused;

			st = fuse_residual(g, i, c, &fused);
			reorder |= fused;
		}
	}
	/* After the scales: Q K^T's is part of the block. */
	if (!st)
		st = npu_fuse_attention(g, hbsm);
	for (int i = 0; i < n0 && !st; i++)
		if (!g->nodes[i].dead && !strcmp(g->nodes[i].op, "BatchNormalization"))
			st = split_bn(g, i);
	/* New nodes went to the end (split BatchNormalization, an attention
	 * block's padding mask): put them back in order.  A residual may be
	 * produced after its Conv.  Either way drop the fused nodes first
	 * (sorting reads every node) and order again. */
	if (!st && (g->n_nodes != n0 || reorder)) {
		st = npu_ir_remove_dead(g);
		if (!st)
			st = npu_ir_topo_sort(g);
	}
	/* Last, on the final node order: what runs inside whose tiles. */
	if (!st)
		st = npu_fuse_conv(g, hbsm);
	return st;
}
