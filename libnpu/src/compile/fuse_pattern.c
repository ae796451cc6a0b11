// SPDX-License-Identifier: MIT
/*
 * Patterns that exports spell out node by node, recognised and replaced by
 * the one operator the NPU runs natively (issue 15, section 4):
 *
 * - layer norm from opsets before 17: ReduceMean, Sub, Pow(2) or Mul(d, d),
 *   ReduceMean, Add(eps), Sqrt, then Div (or Mul by its Reciprocal), then
 *   Mul(gamma) and Add(beta), each optional, over the last axis
 *   -> LayerNormalization (17): one CVU LAYERNORM per tile;
 * - RMS norm (LLaMA): the same without the mean: Pow(2) or Mul(x, x),
 *   ReduceMean, Add(eps), Sqrt, then Div, or Div(1, .) / Reciprocal and
 *   Mul, then Mul(gamma) -> RMSNormalization (23): LAYERNORM with
 *   NPU_CVU_F_RMS;
 * - GELU, erf form: x * 0.5 * (1 + Erf(x / sqrt 2)) (Div by 1.41421 or Mul
 *   by 0.70711; the halving anywhere in the product) -> Gelu (20);
 *   tanh form: 0.5 x (1 + Tanh(sqrt(2/pi) (x + 0.044715 x^3))), x^3 as
 *   Pow(x, 3) or Mul(x, Mul(x, x)) -> Gelu (20, approximate "tanh");
 * - SiLU / Swish: x * Sigmoid(x) -> Swish (24, alpha 1).
 *
 * The replacements are ONNX operators of later opsets, so a model that
 * already uses them compiles the same way.  Gelu and Swish are TCU
 * output-stage functions: after a MatMul or Gemm the fusion pass folds
 * them in (npu_fuse.c), which is how SwiGLU's gate becomes one MatMul
 * step (its Mul with the up projection stays one CVU binary).
 *
 * This runs before the rewrites and the fusion pass: the nodes it makes
 * then meet them like nodes of the model (the activation fusion needs the
 * MatMul's output to have one consumer, which only holds once x * Sigmoid(x)
 * is one node).  A pattern is replaced only when every intermediate tensor
 * has exactly the uses inside the pattern and is no graph output,
 * everything is float32, constants are initializers of the expected value
 * (eps a non-negative scalar, gamma and beta constants that vary along the
 * last axis only) and the reductions run over the last axis with
 * keepdims; anything else is left as it is and runs node by node.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_lower.h"
#include "compile/npu_rewrite_priv.h"
#include "npu_debug.h"

#define PAT_MAX 12	/* nodes in the largest pattern */

/* The nodes one match replaces, and the tensor it ends in. */
struct match {
	int nodes[PAT_MAX];
	int n;
	int y;		/* the pattern's output tensor */
};

static void take(struct match *m, int k)
{
	if (m->n < PAT_MAX)
		m->nodes[m->n++] = k;
}

static bool is_op(const npu_ir_node *n, const char *op)
{
	return !n->dead && (!n->domain[0] || !strcmp(n->domain, "ai.onnx")) &&
	       !strcmp(n->op, op);
}

/* The live node of type @op producing tensor @t, or -1. */
static int producer(const npu_ir_graph *g, int t, const char *op)
{
	int p;

	if (t < 0 || t >= g->n_tensors)
		return -1;
	p = g->tensors[t].producer;
	if (p < 0 || p >= g->n_nodes || !is_op(&g->nodes[p], op) ||
	    g->nodes[p].n_outputs < 1 || g->nodes[p].outputs[0] != t)
		return -1;
	for (int i = 1; i < g->nodes[p].n_outputs; i++)
		if (g->nodes[p].outputs[i] >= 0)
			return -1;	/* a second output someone may read */
	return p;
}

/* Tensor @t is an intermediate with exactly @uses reads and no outside view. */
static bool inner(const npu_ir_graph *g, int t, int uses)
{
	return t >= 0 && !npu_ir_is_graph_output(g, t) && npu_ir_count_uses(g, t) == uses;
}

/* The single live node reading @t (an intermediate), or -1. */
static int sole_user(const npu_ir_graph *g, int t, const char *op)
{
	if (!inner(g, t, 1))
		return -1;
	for (int i = 0; i < g->n_nodes; i++) {
		const npu_ir_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		for (int k = 0; k < n->n_inputs; k++)
			if (n->inputs[k] == t)
				return is_op(n, op) ? i : -1;
	}
	return -1;
}

/* The input of binary node @k that is not @t: -1 if @t is not exactly one of them. */
static int other(const npu_ir_graph *g, int k, int t)
{
	const npu_ir_node *n = &g->nodes[k];

	if (n->n_inputs != 2 || n->inputs[0] == n->inputs[1])
		return -1;
	if (n->inputs[0] == t)
		return n->inputs[1];
	return n->inputs[1] == t ? n->inputs[0] : -1;
}

/* @t is a one-element constant (float or integer): its value. */
static bool scalar(const npu_ir_graph *g, int t, float *v)
{
	const npu_ir_tensor *c;
	int64_t iv;
	int cnt;

	if (t < 0)
		return false;
	c = &g->tensors[t];
	if (!npu_ir_is_const(c) || npu_ir_numel(c) != 1)
		return false;
	if (c->dtype == NPU_DTYPE_FLOAT32)
		return !npu_ir_const_floats(c, v, 1, &cnt) && cnt == 1;
	if ((c->dtype != NPU_DTYPE_INT64 && c->dtype != NPU_DTYPE_INT32) ||
	    npu_ir_const_ints(c, &iv, 1, &cnt) || cnt != 1)
		return false;
	*v = (float)iv;	/* a Pow's integer exponent */
	return true;
}

/* @t is a scalar constant within @rel (relative) of @want. */
static bool scalar_is(const npu_ir_graph *g, int t, double want, double rel)
{
	float v;

	return scalar(g, t, &v) && fabs(v - want) <= rel * fabs(want);
}

/* Binary node @k is @x op a constant scalar ~ @want: true, else false. */
static bool by_const(const npu_ir_graph *g, int k, int x, double want, double rel)
{
	return k >= 0 && scalar_is(g, other(g, k, x), want, rel);
}

static bool f32(const npu_ir_graph *g, int t)
{
	return t >= 0 && g->tensors[t].dtype == NPU_DTYPE_FLOAT32 &&
	       npu_ir_shape_known(&g->tensors[t]);
}

static bool same_shape(const npu_ir_graph *g, int a, int b)
{
	const npu_ir_tensor *x = &g->tensors[a], *y = &g->tensors[b];

	return x->rank == y->rank && !memcmp(x->dims, y->dims, (size_t)x->rank * sizeof(x->dims[0]));
}

/* ReduceMean node @k of @x over its last axis only, keepdims. */
static bool mean_last(const npu_ir_graph *g, int k, int x)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *xt = &g->tensors[x];
	const int64_t *axes = NULL;
	int64_t keep, a, av;
	int cnt = -1;

	if (n->inputs[0] != x || xt->rank < 1 || npu_ir_attr_int(n, "keepdims", 1, &keep) || !keep)
		return false;
	if (n->n_inputs > 1 && n->inputs[1] >= 0) {
		/* opset 18: the axes are an input */
		if (!npu_ir_is_const(&g->tensors[n->inputs[1]]) ||
		    g->tensors[n->inputs[1]].dtype != NPU_DTYPE_INT64 ||
		    npu_ir_const_ints(&g->tensors[n->inputs[1]], &av, 1, &cnt))
			return false;
		axes = &av;
	} else if (npu_ir_attr_ints(n, "axes", &axes, &cnt)) {
		return false;
	}
	if (cnt != 1 || !axes)
		return false;
	a = axes[0] < 0 ? axes[0] + xt->rank : axes[0];
	return a == xt->rank - 1;
}

/*
 * A constant gamma or beta @t for rows of @D along the last axis of a rank
 * @r tensor: a scalar, or D values with every other dim 1.  *@v gets D
 * floats (malloc'd).
 */
static bool row_const(const npu_ir_graph *g, int t, int r, int64_t D, float **v)
{
	const npu_ir_tensor *c;
	int64_t n;
	int cnt;

	*v = NULL;
	if (t < 0)
		return false;
	c = &g->tensors[t];
	n = npu_ir_numel(c);
	if (!npu_ir_is_const(c) || c->dtype != NPU_DTYPE_FLOAT32 || c->rank > r ||
	    (n != 1 && n != D) || D > (1 << 24))
		return false;
	for (int d = 0; d + 1 < c->rank; d++)
		if (c->dims[d] != 1)
			return false;
	*v = malloc((size_t)D * sizeof(float));
	if (!*v)
		return false;
	if (npu_ir_const_floats(c, *v, (int)D, &cnt) || cnt != n) {
		free(*v);
		*v = NULL;
		return false;
	}
	for (int64_t i = 1; n == 1 && i < D; i++)
		(*v)[i] = (*v)[0];
	return true;
}

/* NPU_DEBUG=fuse: "pattern <op> (<n> nodes) at <label>". */
static void say(const npu_ir_graph *g, const char *what, const struct match *m)
{
	char lbl[96];

	if (npu_debug_on(NPU_DEBUG_FUSE))
		npu_debug(NPU_DEBUG_FUSE, "pattern %s (%d nodes) at %s", what, m->n,
			  npu_ir_node_label(&g->nodes[m->nodes[0]], lbl, sizeof(lbl)));
}

/*
 * Replace match @m by node @op (@opset) reading @ins and writing m->y;
 * *@id gets the new node.
 */
static npu_status replace(npu_ir_graph *g, struct match *m, const char *what, const char *op,
			  int opset, const int *ins, int nin, int *id)
{
	char name[128];

	say(g, what, m);
	snprintf(name, sizeof(name), "%s", g->nodes[m->nodes[0]].name);
	for (int i = 0; i < m->n; i++) {
		int k = m->nodes[i];

		for (int o = 0; o < g->nodes[k].n_outputs; o++)
			if (g->nodes[k].outputs[o] == m->y)
				npu_rw_detach(g, k, m->y);
		g->nodes[k].dead = true;
	}
	return npu_rw_op(g, op, opset, name, ins, nin, &m->y, 1, id);
}

/* ---- layer norm and RMS norm ---- */

/*
 * Node @k normalises: Div(num, s), or Mul(num, r) with r = Reciprocal(s) or
 * Div(1, s); s = Sqrt(mean(num^2) [+ eps]) over the last axis.  *@num and
 * *@eps get what it normalises and the epsilon.
 */
static bool norm_core(const npu_ir_graph *g, int k, struct match *m, int *num, float *eps)
{
	const npu_ir_node *n = &g->nodes[k];
	int s = -1, sq, v, var, pw, sqk, sk, ak, vk;

	if (n->n_inputs != 2 || n->n_outputs != 1)
		return false;
	m->n = 0;
	take(m, k);
	if (!strcmp(n->op, "Div")) {
		*num = n->inputs[0];
		s = n->inputs[1];
	} else {
		for (int i = 0; i < 2 && s < 0; i++) {
			int r = n->inputs[i], rk;

			if ((rk = producer(g, r, "Reciprocal")) >= 0 && inner(g, r, 1)) {
				s = g->nodes[rk].inputs[0];
			} else if ((rk = producer(g, r, "Div")) >= 0 && inner(g, r, 1) &&
				   scalar_is(g, g->nodes[rk].inputs[0], 1.0, 1e-6)) {
				s = g->nodes[rk].inputs[1];
			} else {
				continue;
			}
			take(m, rk);
			*num = n->inputs[1 - i];
		}
		if (s < 0)
			return false;
	}
	if ((sk = producer(g, s, "Sqrt")) < 0 || !inner(g, s, 1))
		return false;
	take(m, sk);
	v = g->nodes[sk].inputs[0];
	*eps = 0.0f;
	var = v;
	if ((ak = producer(g, v, "Add")) >= 0) {
		const npu_ir_node *a = &g->nodes[ak];

		if (!inner(g, v, 1))
			return false;
		for (int i = 0; i < 2; i++)
			if (scalar(g, a->inputs[i], eps) && a->inputs[1 - i] != a->inputs[i]) {
				var = a->inputs[1 - i];
				break;
			}
		if (var == v || !(*eps >= 0.0f) || !isfinite(*eps))
			return false;
		take(m, ak);
	}
	if ((vk = producer(g, var, "ReduceMean")) < 0 || !inner(g, var, 1))
		return false;
	take(m, vk);
	sq = g->nodes[vk].inputs[0];
	if (!inner(g, sq, 1))
		return false;
	if ((pw = producer(g, sq, "Pow")) >= 0 && g->nodes[pw].inputs[0] == *num &&
	    g->nodes[pw].n_inputs == 2 && scalar_is(g, g->nodes[pw].inputs[1], 2.0, 0.0)) {
		sqk = pw;
	} else if ((sqk = producer(g, sq, "Mul")) < 0 || g->nodes[sqk].n_inputs != 2 ||
		   g->nodes[sqk].inputs[0] != *num || g->nodes[sqk].inputs[1] != *num) {
		return false;
	}
	take(m, sqk);
	return mean_last(g, vk, sq) && f32(g, *num) && same_shape(g, *num, n->outputs[0]) &&
	       same_shape(g, *num, sq);
}

/*
 * A layer norm or RMS norm ending at Div/Mul node @k, with its gamma
 * (and, for layer norm, beta) when they follow.
 */
static npu_status fuse_norm(npu_ir_graph *g, int k, bool *done)
{
	struct match m;
	int num, x, r, c, mu, sub = -1, gid, bid = -1, ins[3], id;
	int64_t D, dim;
	float eps, *gv = NULL, *bv = NULL;
	bool ln = false;
	npu_status st;

	*done = false;
	if (!norm_core(g, k, &m, &num, &eps))
		return NPU_OK;
	/*
	 * num = Sub(x, ReduceMean(x)) read by the square (the last node
	 * norm_core took: Pow once, Mul twice) and the division only: layer
	 * norm.  Anything else normalises num itself: RMS norm.
	 */
	x = num;
	if ((sub = producer(g, num, "Sub")) >= 0 &&
	    inner(g, num, 2 + (g->nodes[m.nodes[m.n - 1]].inputs[1] == num))) {
		mu = g->nodes[sub].inputs[1];
		c = producer(g, mu, "ReduceMean");
		if (c >= 0 && inner(g, mu, 1) && mean_last(g, c, g->nodes[sub].inputs[0]) &&
		    same_shape(g, g->nodes[sub].inputs[0], num)) {
			x = g->nodes[sub].inputs[0];
			take(&m, sub);
			take(&m, c);
			ln = true;
		}
	}
	r = g->tensors[x].rank;
	D = g->tensors[x].dims[r - 1];
	if (npu_ir_numel(&g->tensors[x]) <= 0)
		return NPU_OK;	/* an empty tensor: its nodes do nothing anyway */
	m.y = g->nodes[k].outputs[0];
	/* Mul(gamma), then for layer norm Add(beta), when they follow */
	if ((c = sole_user(g, m.y, "Mul")) >= 0 && row_const(g, other(g, c, m.y), r, D, &gv) &&
	    same_shape(g, g->nodes[c].outputs[0], x)) {
		take(&m, c);
		m.y = g->nodes[c].outputs[0];
		if (ln && (c = sole_user(g, m.y, "Add")) >= 0 &&
		    row_const(g, other(g, c, m.y), r, D, &bv) &&
		    same_shape(g, g->nodes[c].outputs[0], x)) {
			take(&m, c);
			m.y = g->nodes[c].outputs[0];
		}
	}
	if (m.n >= PAT_MAX || !f32(g, m.y)) {
		free(gv);
		free(bv);
		return NPU_OK;
	}
	if (!gv) {
		gv = malloc((size_t)D * sizeof(float));
		if (!gv)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		for (int64_t i = 0; i < D; i++)
			gv[i] = 1.0f;
	}
	*done = true;
	dim = D;
	if (bv && (st = npu_rw_const(g, NPU_DTYPE_FLOAT32, 1, &dim, bv, &bid))) {
		free(gv);
		return st;
	}
	if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, 1, &dim, gv, &gid)))
		return st;
	ins[0] = x;
	ins[1] = gid;
	ins[2] = bid;
	if ((st = replace(g, &m, ln ? "LayerNormalization" : "RMSNormalization",
			  ln ? "LayerNormalization" : "RMSNormalization", ln ? 17 : 23, ins,
			  bid >= 0 ? 3 : 2, &id)) ||
	    (st = npu_ir_set_attr_int(&g->nodes[id], "axis", -1)))
		return st;
	return npu_ir_set_attr_float(&g->nodes[id], "epsilon", eps);
}

/* ---- GELU and SiLU ---- */

/*
 * @a = 1 + f(x) (an Add of 1 to the Erf or Tanh output) times x times 0.5,
 * in any association: Mul(Mul(x, a), 0.5), Mul(Mul(x, 0.5), a) or
 * Mul(x, Mul(a, 0.5)).  Adds the nodes to @m and sets m->y.
 */
static bool half_x_times(const npu_ir_graph *g, int a, int x, struct match *m)
{
	int u = sole_user(g, a, "Mul"), o, h, w;

	if (u < 0 || (o = other(g, u, a)) < 0)
		return false;
	take(m, u);
	if (o == x) {				/* (x a) 0.5 */
		w = sole_user(g, g->nodes[u].outputs[0], "Mul");
		if (!by_const(g, w, g->nodes[u].outputs[0], 0.5, 1e-6))
			return false;
		take(m, w);
		m->y = g->nodes[w].outputs[0];
		return true;
	}
	if ((h = producer(g, o, "Mul")) >= 0 && inner(g, o, 1) && by_const(g, h, x, 0.5, 1e-6)) {
		take(m, h);			/* (0.5 x) a */
		m->y = g->nodes[u].outputs[0];
		return true;
	}
	if (scalar_is(g, o, 0.5, 1e-6)) {	/* x (0.5 a) */
		w = sole_user(g, g->nodes[u].outputs[0], "Mul");
		if (w < 0 || other(g, w, g->nodes[u].outputs[0]) != x)
			return false;
		take(m, w);
		m->y = g->nodes[w].outputs[0];
		return true;
	}
	return false;
}

/* 1 + the output of node @k: the Add node's output, or -1. */
static int plus_one(const npu_ir_graph *g, int k, struct match *m)
{
	int t = g->nodes[k].outputs[0], a = sole_user(g, t, "Add");

	if (!by_const(g, a, t, 1.0, 1e-6))
		return -1;
	take(m, a);
	return g->nodes[a].outputs[0];
}

/* x + 0.044715 x^3 as exports write it: Add(x, Mul(Pow(x, 3) | x x x, c)). */
static bool cubic(const npu_ir_graph *g, int t, int *x, struct match *m)
{
	int ak = producer(g, t, "Add"), mk, c3, pk, q;

	if (ak < 0 || !inner(g, t, 1))
		return false;
	for (int i = 0; i < 2; i++) {
		int cand = g->nodes[ak].inputs[i], mt = g->nodes[ak].inputs[1 - i];

		if ((mk = producer(g, mt, "Mul")) < 0 || !inner(g, mt, 1))
			continue;
		for (int j = 0; j < 2; j++) {
			c3 = g->nodes[mk].inputs[j];
			if (!scalar_is(g, g->nodes[mk].inputs[1 - j], 0.044715, 1e-4) ||
			    !inner(g, c3, 1))
				continue;
			if ((pk = producer(g, c3, "Pow")) >= 0 && g->nodes[pk].inputs[0] == cand &&
			    scalar_is(g, g->nodes[pk].inputs[1], 3.0, 0.0)) {
				take(m, ak);
				take(m, mk);
				take(m, pk);
				*x = cand;
				return true;
			}
			/* x (x x) or (x x) x */
			if ((pk = producer(g, c3, "Mul")) >= 0 && (q = other(g, pk, cand)) >= 0) {
				int sk = producer(g, q, "Mul");

				if (sk >= 0 && inner(g, q, 1) && g->nodes[sk].inputs[0] == cand &&
				    g->nodes[sk].inputs[1] == cand) {
					take(m, ak);
					take(m, mk);
					take(m, pk);
					take(m, sk);
					*x = cand;
					return true;
				}
			}
		}
	}
	return false;
}

/* Erf node @k: x * 0.5 * (1 + Erf(x / sqrt 2)) -> Gelu. */
static npu_status fuse_gelu_erf(npu_ir_graph *g, int k, bool *done)
{
	struct match m = { .n = 0 };
	int t = g->nodes[k].inputs[0], sk, x = -1, a, id;

	*done = false;
	if ((sk = producer(g, t, "Div")) >= 0 && inner(g, t, 1) &&
	    scalar_is(g, g->nodes[sk].inputs[1], M_SQRT2, 1e-4)) {
		x = g->nodes[sk].inputs[0];
	} else if ((sk = producer(g, t, "Mul")) >= 0 && inner(g, t, 1)) {
		for (int i = 0; i < 2 && x < 0; i++)
			if (scalar_is(g, g->nodes[sk].inputs[1 - i], M_SQRT1_2, 1e-4))
				x = g->nodes[sk].inputs[i];
	}
	if (x < 0 || !f32(g, x))
		return NPU_OK;
	take(&m, sk);
	take(&m, k);
	if ((a = plus_one(g, k, &m)) < 0 || !half_x_times(g, a, x, &m) || !f32(g, m.y) ||
	    !same_shape(g, x, m.y))
		return NPU_OK;
	*done = true;
	return replace(g, &m, "Gelu", "Gelu", 20, &x, 1, &id);
}

/* Tanh node @k: 0.5 x (1 + Tanh(sqrt(2/pi) (x + 0.044715 x^3))) -> Gelu tanh. */
static npu_status fuse_gelu_tanh(npu_ir_graph *g, int k, bool *done)
{
	struct match m = { .n = 0 };
	int t = g->nodes[k].inputs[0], sk = producer(g, t, "Mul"), x = -1, a, id;
	npu_status st;

	*done = false;
	if (sk < 0 || !inner(g, t, 1))
		return NPU_OK;
	take(&m, sk);
	take(&m, k);
	for (int i = 0; i < 2 && x < 0; i++)
		if (!scalar_is(g, g->nodes[sk].inputs[1 - i], 0.7978845608, 1e-4) ||
		    !cubic(g, g->nodes[sk].inputs[i], &x, &m))
			x = -1;
	if (x < 0 || !f32(g, x) || (a = plus_one(g, k, &m)) < 0 || !half_x_times(g, a, x, &m) ||
	    !f32(g, m.y) || !same_shape(g, x, m.y))
		return NPU_OK;
	*done = true;
	if ((st = replace(g, &m, "Gelu (tanh)", "Gelu", 20, &x, 1, &id)))
		return st;
	return npu_ir_set_attr_string(&g->nodes[id], "approximate", "tanh");
}

/* Sigmoid node @k: x * Sigmoid(x) -> Swish (alpha 1). */
static npu_status fuse_silu(npu_ir_graph *g, int k, bool *done)
{
	struct match m = { .n = 0 };
	int x = g->nodes[k].inputs[0], s = g->nodes[k].outputs[0], u = sole_user(g, s, "Mul"), id;

	*done = false;
	if (u < 0 || other(g, u, s) != x || !f32(g, x) || !same_shape(g, x, g->nodes[u].outputs[0]))
		return NPU_OK;
	take(&m, k);
	take(&m, u);
	m.y = g->nodes[u].outputs[0];
	*done = true;
	return replace(g, &m, "Swish", "Swish", 24, &x, 1, &id);
}

npu_status npu_fuse_patterns(npu_ir_graph *g)
{
	int n0 = g->n_nodes, found = 0;
	npu_status st = NPU_OK;

	for (int k = 0; k < n0 && !st; k++) {
		const npu_ir_node *n = &g->nodes[k];
		bool done = false;

		if (n->dead || n->n_inputs < 1 || n->n_outputs < 1 || n->outputs[0] < 0 ||
		    npu_ir_node_dyn(g, n))
			continue;
		if (is_op(n, "Div") || is_op(n, "Mul"))
			st = fuse_norm(g, k, &done);
		else if (is_op(n, "Erf"))
			st = fuse_gelu_erf(g, k, &done);
		else if (is_op(n, "Tanh"))
			st = fuse_gelu_tanh(g, k, &done);
		else if (is_op(n, "Sigmoid"))
			st = fuse_silu(g, k, &done);
		found += done;
	}
	if (st || !found)
		return st;
	if ((st = npu_ir_remove_dead(g)))
		return st;
	return npu_ir_topo_sort(g);
}
