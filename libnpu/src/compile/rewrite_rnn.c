// SPDX-License-Identifier: MIT
/*
 * LSTM, GRU and RNN with constant weights: the recurrence unrolled over
 * time into operators the NPU runs.
 *
 * The input projection of every time step and every direction is one
 * MatMul on the TCU, X [T * B, I] by the constant W^T of both directions
 * [I, D * G * H] plus the biases that do not depend on the state.  Each
 * time step of each direction then reads its rows and columns of that
 * product (one Slice), adds the state's MatMul by the constant R^T
 * [H, G * H] and applies the gates on the CVU (Sigmoid, Tanh, ...,
 * Mul, Add).  The state is an ordinary tensor between the nodes of one
 * compiled graph: it stays in the device's scratch memory (DDR, like every
 * tensor between steps today) from one time step to the next and never
 * goes back to the host within a run.  Unrolling into operators that
 * already have lowerings was chosen over a loop over time inside one
 * program with the state in HBSM: the compiler has no tensors resident in
 * HBSM across steps yet, and the unrolled form reuses the tested TCU and
 * CVU lowerings; its cost is programs that grow with T.
 *
 * Constant sequence_lens become constant masks: a batch row at or past
 * its length keeps its state (H = Hn * m + H * (1 - m)) and outputs 0
 * (Y = Hn * m); a step where every row is valid has no mask, one where
 * none is outputs constant zeros.  The reverse direction walks t from
 * T - 1 down, so a row starts at its own last valid step, as ONNX says.
 *
 * The ONNX gate equations (onnx/defs/rnn/defs.cc), per direction:
 *   LSTM (gates i o f c): i = f(Xi + H Ri + Pi C + Wbi + Rbi),
 *	f = f(Xf + H Rf + Pf C + Wbf + Rbf) (1 - i with input_forget),
 *	c = g(Xc + H Rc + Wbc + Rbc), C' = f C + i c,
 *	o = f(Xo + H Ro + Po C' + Wbo + Rbo), H' = o h(C')
 *   GRU (gates z r h): z = f(Xz + H Rz + Wbz + Rbz), r likewise,
 *	h = g(Xh + (r H) Rh + Rbh + Wbh), or with linear_before_reset
 *	h = g(Xh + r (H Rh + Rbh) + Wbh); H' = (1 - z) h + z H
 *   RNN: H' = f(Xi + H Ri + Wbi + Rbi)
 * clip bounds the input of f and g (not h), as onnxruntime does.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compile/npu_rewrite_priv.h"

/* Time steps the rewrite unrolls (every step adds about 15 nodes). */
#define RNN_MAX_STEPS 4096

enum rnn_act_kind {
	ACT_SIGMOID, ACT_TANH, ACT_RELU, ACT_HARDSIGMOID, ACT_AFFINE, ACT_LEAKYRELU,
	ACT_THRESHOLDEDRELU, ACT_SCALEDTANH, ACT_ELU, ACT_SOFTSIGN, ACT_SOFTPLUS,
};

/* ONNX's activations with the alpha and beta they take and their defaults. */
static const struct {
	const char *name;
	bool alpha, beta;
	float def_alpha, def_beta;
} rnn_acts[] = {
	[ACT_SIGMOID] = { "Sigmoid", false, false, 0.0f, 0.0f },
	[ACT_TANH] = { "Tanh", false, false, 0.0f, 0.0f },
	[ACT_RELU] = { "Relu", false, false, 0.0f, 0.0f },
	[ACT_HARDSIGMOID] = { "HardSigmoid", true, true, 0.2f, 0.5f },
	[ACT_AFFINE] = { "Affine", true, true, 1.0f, 0.0f },
	[ACT_LEAKYRELU] = { "LeakyRelu", true, false, 0.01f, 0.0f },
	[ACT_THRESHOLDEDRELU] = { "ThresholdedRelu", true, false, 1.0f, 0.0f },
	[ACT_SCALEDTANH] = { "ScaledTanh", true, true, 1.0f, 1.0f },
	[ACT_ELU] = { "Elu", true, false, 1.0f, 0.0f },
	[ACT_SOFTSIGN] = { "Softsign", false, false, 0.0f, 0.0f },
	[ACT_SOFTPLUS] = { "Softplus", false, false, 0.0f, 0.0f },
};

struct rnn_act {
	enum rnn_act_kind kind;
	float alpha, beta;
};

/* Everything the rewrite reads from the node, copied before the graph grows. */
struct rnn {
	char name[128];
	int gates;		/* G: 4 LSTM, 3 GRU, 1 RNN */
	int nact;		/* activations per direction: 3, 2, 1 */
	bool lstm, gru;
	int64_t T, B, I, H, D;
	int64_t layout;
	bool reverse;		/* direction "reverse" (D == 1) */
	bool has_clip, lbr, input_forget;
	float clip;
	int x, h0, c0;		/* tensor ids, -1 when absent */
	int y, yh, yc;
	const float *w, *r, *b, *p;	/* constant data, NULL when absent */
	int64_t *lens;		/* [B], NULL when absent */
	struct rnn_act act[2][3];
};

/* The activations of @n (defaults, or the attributes); false if one is unknown. */
static npu_status read_acts(const npu_ir_node *n, struct rnn *s, bool *ok)
{
	static const enum rnn_act_kind defs[3][3] = {
		{ ACT_TANH }, { ACT_SIGMOID, ACT_TANH }, { ACT_SIGMOID, ACT_TANH, ACT_TANH },
	};
	const float *al = NULL, *be = NULL;
	int na, nal, nbe, ia = 0, ib = 0;
	const char *names;
	npu_status st;

	*ok = false;
	if ((st = npu_ir_attr_strings(n, "activations", &names, &na)) ||
	    (st = npu_ir_attr_floats(n, "activation_alpha", &al, &nal)) ||
	    (st = npu_ir_attr_floats(n, "activation_beta", &be, &nbe)))
		return st;
	/* A bidirectional node may list one direction's activations for both. */
	if (na >= 0 && na != s->nact * s->D && na != s->nact)
		return NPU_OK;
	for (int d = 0; d < s->D; d++) {
		for (int i = 0; i < s->nact; i++) {
			struct rnn_act *a = &s->act[d][i];
			size_t k;

			if (na < 0 || (d && na == s->nact)) {
				*a = na < 0 ? (struct rnn_act){ defs[s->nact - 1][i], 0, 0 } :
					      s->act[0][i];
				continue;
			}
			for (k = 0; k < sizeof(rnn_acts) / sizeof(rnn_acts[0]); k++)
				if (!strcasecmp(names, rnn_acts[k].name))
					break;
			if (k == sizeof(rnn_acts) / sizeof(rnn_acts[0]))
				return NPU_OK;
			a->kind = (enum rnn_act_kind)k;
			/* alpha and beta are consumed in order by the activations
			 * that take them (onnxruntime's reading). */
			a->alpha = rnn_acts[k].def_alpha;
			a->beta = rnn_acts[k].def_beta;
			if (rnn_acts[k].alpha && al && ia < nal)
				a->alpha = al[ia++];
			if (rnn_acts[k].beta && be && ib < nbe)
				a->beta = be[ib++];
			names += strlen(names) + 1;
		}
	}
	*ok = true;
	return NPU_OK;
}

/*
 * Read node @n into @s; *@ok false (and NPU_OK) when the rewrite does not
 * fit: the support check (npu_ops.c) then says why.
 */
static npu_status read_node(const npu_ir_graph *g, const npu_ir_node *n, struct rnn *s,
			    bool *ok)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *w = npu_ir_input(g, n, 1);
	const npu_ir_tensor *r = npu_ir_input(g, n, 2), *b = npu_ir_input(g, n, 3);
	const npu_ir_tensor *sl = npu_ir_input(g, n, 4), *p = npu_ir_input(g, n, 7);
	int64_t lbr = 0, inf = 0;
	const char *dir;
	float clip = 0;
	npu_status st;
	int got;

	*ok = false;
	memset(s, 0, sizeof(*s));
	s->lstm = !strcmp(n->op, "LSTM");
	s->gru = !strcmp(n->op, "GRU");
	s->gates = s->lstm ? 4 : s->gru ? 3 : 1;
	s->nact = s->lstm ? 3 : s->gru ? 2 : 1;
	if (!x || !w || !r || x->dtype != NPU_DTYPE_FLOAT32 || !npu_ir_shape_known(x) ||
	    !npu_ir_shape_known(w) || x->rank != 3 || w->rank != 3)
		return NPU_OK;
	for (int i = 1; i < n->n_inputs; i++) {
		const npu_ir_tensor *t = npu_ir_input(g, n, i);

		if (t && i != 4 && t->dtype != NPU_DTYPE_FLOAT32)
			return NPU_OK;
	}
	if (!npu_ir_is_const(w) || !npu_ir_is_const(r) || (b && !npu_ir_is_const(b)) ||
	    (p && !npu_ir_is_const(p)) || (sl && !npu_ir_is_const(sl)))
		return NPU_OK;
	if ((st = npu_ir_attr_int(n, "layout", 0, &s->layout)) ||
	    (st = npu_ir_attr_string(n, "direction", "forward", &dir)) ||
	    (st = npu_ir_attr_int(n, "linear_before_reset", 0, &lbr)) ||
	    (st = npu_ir_attr_int(n, "input_forget", 0, &inf)) ||
	    (st = npu_ir_attr_float(n, "clip", 0, &clip)))
		return st;
	s->has_clip = npu_ir_attr_find(n, "clip") != NULL;
	s->clip = clip;
	s->lbr = lbr != 0;
	s->input_forget = inf != 0;
	s->reverse = !strcmp(dir, "reverse");
	s->D = w->dims[0];
	s->H = w->dims[1] / s->gates;
	s->I = w->dims[2];
	s->T = x->dims[s->layout ? 1 : 0];
	s->B = x->dims[s->layout ? 0 : 1];
	if (s->T < 1 || s->T > RNN_MAX_STEPS || s->B < 1 || s->H < 1 || x->dims[2] != s->I ||
	    npu_ir_numel(r) != s->D * s->gates * s->H * s->H ||
	    (b && npu_ir_numel(b) != s->D * 2 * s->gates * s->H) ||
	    (p && npu_ir_numel(p) != s->D * 3 * s->H) ||
	    (sl && npu_ir_numel(sl) != s->B) || w->dims[1] != s->gates * s->H ||
	    (n->n_inputs > 5 && npu_ir_input(g, n, 5) &&
	     npu_ir_numel(npu_ir_input(g, n, 5)) != s->D * s->B * s->H) ||
	    (s->lstm && n->n_inputs > 6 && npu_ir_input(g, n, 6) &&
	     npu_ir_numel(npu_ir_input(g, n, 6)) != s->D * s->B * s->H) || s->I * s->D * s->gates * s->H > NPU_RW_MATRIX_MAX)
		return NPU_OK;
	if ((st = read_acts(n, s, ok)) || !*ok)
		return st;
	*ok = false;
	if (sl) {
		s->lens = malloc((size_t)s->B * sizeof(*s->lens));
		if (!s->lens)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		if ((st = npu_ir_const_ints(sl, s->lens, (int)s->B, &got)))
			return st;
	}
	s->x = n->inputs[0];
	s->h0 = n->n_inputs > 5 ? n->inputs[5] : -1;
	s->c0 = s->lstm && n->n_inputs > 6 ? n->inputs[6] : -1;
	s->y = n->n_outputs > 0 ? n->outputs[0] : -1;
	s->yh = n->n_outputs > 1 ? n->outputs[1] : -1;
	s->yc = s->lstm && n->n_outputs > 2 ? n->outputs[2] : -1;
	s->w = w->data;
	s->r = r->data;
	s->b = b ? b->data : NULL;
	s->p = s->lstm && p ? p->data : NULL;
	snprintf(s->name, sizeof(s->name), "%s", n->name);
	*ok = true;
	return NPU_OK;
}

/* ---- node builders ---- */

static npu_status scalar(npu_ir_graph *g, float v, int *id)
{
	float *d = malloc(sizeof(*d));

	if (!d)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	*d = v;
	return npu_rw_const(g, NPU_DTYPE_FLOAT32, 0, NULL, d, id);
}

/* A float32 constant [@rows, @cols] from @v (copied). */
static npu_status matrix(npu_ir_graph *g, const float *v, int64_t rows, int64_t cols, int *id)
{
	float *d = malloc((size_t)(rows * cols) * sizeof(*d));
	int64_t dims[2] = { rows, cols };

	if (!d)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	memcpy(d, v, (size_t)(rows * cols) * sizeof(*d));
	return rows == 1 ? npu_rw_const(g, NPU_DTYPE_FLOAT32, 1, &dims[1], d, id) :
			   npu_rw_const(g, NPU_DTYPE_FLOAT32, 2, dims, d, id);
}

static npu_status unary(npu_ir_graph *g, const struct rnn *s, const char *op, int opset,
			int x, int *id)
{
	const npu_ir_tensor *t = &g->tensors[x];
	int64_t dims[NPU_MAX_RANK];
	int rank = t->rank;
	npu_status st;

	memcpy(dims, t->dims, sizeof(dims));
	if ((st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, rank, dims, id)))
		return st;
	return npu_rw_op(g, op, opset, s->name, &x, 1, id, 1, NULL);
}

static npu_status bin(npu_ir_graph *g, const struct rnn *s, const char *op, int a, int b,
		      int *id)
{
	return npu_rw_binary(g, op, 14, s->name, a, b, -1, id);
}

/* x op c for a scalar constant c. */
static npu_status bin_scalar(npu_ir_graph *g, const struct rnn *s, const char *op, int x,
			     float c, int *id)
{
	int k;
	npu_status st = scalar(g, c, &k);

	return st ? st : bin(g, s, op, x, k, id);
}

/* Rows [@r0, @r0 + @nr) and columns [@c0, @c0 + @nc) of the 2-D @x: one Slice. */
static npu_status slice2(npu_ir_graph *g, const struct rnn *s, int x, int64_t r0, int64_t nr,
			 int64_t c0, int64_t nc, int *id)
{
	int64_t lo[2] = { r0, c0 }, hi[2] = { r0 + nr, c0 + nc }, ax[2] = { 0, 1 };
	int64_t dims[2] = { nr, nc };
	int a, b, c;
	npu_status st;

	if ((st = npu_rw_ints(g, lo, 2, &a)) || (st = npu_rw_ints(g, hi, 2, &b)) ||
	    (st = npu_rw_ints(g, ax, 2, &c)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, 2, dims, id)))
		return st;
	return npu_rw_op(g, "Slice", 13, s->name, (int[]){ x, a, b, c }, 4, id, 1, NULL);
}

static npu_status matmul(npu_ir_graph *g, const struct rnn *s, int a, int b, int *id)
{
	int64_t dims[2] = { g->tensors[a].dims[0], g->tensors[b].dims[1] };
	npu_status st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, 2, dims, id);

	return st ? st : npu_rw_op(g, "MatMul", 13, s->name, (int[]){ a, b }, 2, id, 1, NULL);
}

static npu_status transpose(npu_ir_graph *g, const struct rnn *s, int x, const int64_t *perm,
			    int y, int *id)
{
	const npu_ir_tensor *t = &g->tensors[x];
	int64_t dims[NPU_MAX_RANK];
	int rank = t->rank, k;
	npu_status st;

	for (int i = 0; i < rank; i++)
		dims[i] = t->dims[perm[i]];
	if ((st = npu_rw_out(g, y, NPU_DTYPE_FLOAT32, rank, dims, id)) ||
	    (st = npu_rw_op(g, "Transpose", 13, s->name, &x, 1, id, 1, &k)))
		return st;
	return npu_ir_set_attr_ints(&g->nodes[k], "perm", perm, rank);
}

/* Clip to [-clip, clip] when the node has a clip. */
static npu_status clip(npu_ir_graph *g, const struct rnn *s, int x, int *id)
{
	int lo, hi;
	int64_t dims[NPU_MAX_RANK];
	npu_status st;

	if (!s->has_clip) {
		*id = x;
		return NPU_OK;
	}
	memcpy(dims, g->tensors[x].dims, sizeof(dims));
	if ((st = scalar(g, -s->clip, &lo)) || (st = scalar(g, s->clip, &hi)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, 2, dims, id)))
		return st;
	return npu_rw_op(g, "Clip", 13, s->name, (int[]){ x, lo, hi }, 3, id, 1, NULL);
}

/* Activation @a of @x (clipped first when the node has a clip, and @clipped). */
static npu_status act(npu_ir_graph *g, const struct rnn *s, const struct rnn_act *a, int x,
		      bool clipped, int *id)
{
	static const char *const plain[] = {
		[ACT_SIGMOID] = "Sigmoid", [ACT_TANH] = "Tanh", [ACT_RELU] = "Relu",
		[ACT_SOFTSIGN] = "Softsign", [ACT_SOFTPLUS] = "Softplus",
	};
	npu_status st;
	int t, k;

	if (clipped && (st = clip(g, s, x, &x)))
		return st;
	switch (a->kind) {
	case ACT_SIGMOID:
	case ACT_TANH:
	case ACT_RELU:
	case ACT_SOFTSIGN:
	case ACT_SOFTPLUS:
		return unary(g, s, plain[a->kind], 13, x, id);
	case ACT_AFFINE:
		if ((st = bin_scalar(g, s, "Mul", x, a->alpha, &t)))
			return st;
		return bin_scalar(g, s, "Add", t, a->beta, id);
	case ACT_SCALEDTANH:
		if ((st = bin_scalar(g, s, "Mul", x, a->beta, &t)) ||
		    (st = unary(g, s, "Tanh", 13, t, &t)))
			return st;
		return bin_scalar(g, s, "Mul", t, a->alpha, id);
	case ACT_HARDSIGMOID:
	case ACT_LEAKYRELU:
	case ACT_THRESHOLDEDRELU:
	case ACT_ELU:
		if ((st = unary(g, s, rnn_acts[a->kind].name,
				a->kind == ACT_THRESHOLDEDRELU ? 10 : 6, x, id)))
			return st;
		k = g->tensors[*id].producer;
		if ((st = npu_ir_set_attr_float(&g->nodes[k], "alpha", a->alpha)))
			return st;
		return a->kind == ACT_HARDSIGMOID ?
		       npu_ir_set_attr_float(&g->nodes[k], "beta", a->beta) : NPU_OK;
	}
	return npu_fail(NPU_ERR_INTERNAL, "unknown activation");
}

/* ---- the recurrence ---- */

/* Per direction: the constants and the state. */
struct rnn_dir {
	int rt;		/* R^T [H, G * H]; GRU without linear_before_reset: [H, 2H] */
	int rt_h;	/* GRU without linear_before_reset: Rh^T [H, H] */
	int rb_h;	/* GRU with linear_before_reset: Rbh [H], -1 without B */
	int pi, po, pf;	/* LSTM peepholes [H], -1 without P */
	int h, c;	/* the state [B, H] */
	const struct rnn_act *act;
};

/* State input @t (h0 or c0, [D, B, H] or [B, D, H]) for direction @d as [B, H]. */
static npu_status initial_state(npu_ir_graph *g, const struct rnn *s, int t, int d, int *id)
{
	int64_t dims[2] = { s->B, s->H };
	float *z;
	int sl;
	npu_status st;

	if (t < 0) {
		z = calloc((size_t)(s->B * s->H), sizeof(*z));
		if (!z)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		return npu_rw_const(g, NPU_DTYPE_FLOAT32, 2, dims, z, id);
	}
	if ((st = npu_rw_slice(g, s->name, t, s->layout ? 1 : 0, d, d + 1, &sl)))
		return st;
	return npu_rw_reshape(g, s->name, sl, 2, dims, -1, id);
}

/* The constants of direction @d. */
static npu_status dir_consts(npu_ir_graph *g, const struct rnn *s, int d, struct rnn_dir *dr)
{
	int64_t G = s->gates, H = s->H, cols = s->gru && !s->lbr ? 2 * H : G * H;
	const float *r = s->r + d * G * H * H;
	float *rt = malloc((size_t)(H * G * H) * sizeof(*rt));
	npu_status st;

	if (!rt)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	dr->rt_h = dr->rb_h = dr->pi = dr->po = dr->pf = -1;
	dr->act = s->act[d];
	/* R [G * H, H] transposed into [H, cols] (and the GRU's h gate apart). */
	for (int64_t j = 0; j < cols; j++)
		for (int64_t i = 0; i < H; i++)
			rt[i * cols + j] = r[j * H + i];
	st = matrix(g, rt, H, cols, &dr->rt);
	if (!st && cols < G * H) {
		for (int64_t j = 0; j < H; j++)
			for (int64_t i = 0; i < H; i++)
				rt[i * H + j] = r[(2 * H + j) * H + i];
		st = matrix(g, rt, H, H, &dr->rt_h);
	}
	free(rt);
	if (!st && s->gru && s->lbr && s->b)
		st = matrix(g, s->b + d * 2 * G * H + G * H + 2 * H, 1, H, &dr->rb_h);
	if (!st && s->p) {
		const float *p = s->p + d * 3 * H;

		if (!(st = matrix(g, p, 1, H, &dr->pi)) && !(st = matrix(g, p + H, 1, H, &dr->po)))
			st = matrix(g, p + 2 * H, 1, H, &dr->pf);
	}
	return st;
}

/* The projection X W^T + biases for every step and direction: [T * B, D * G * H]. */
static npu_status projection(npu_ir_graph *g, const struct rnn *s, int *id)
{
	int64_t G = s->gates, H = s->H, GH = G * H, N = s->D * GH, I = s->I;
	int64_t xd[2] = { s->T * s->B, I };
	float *wt = malloc((size_t)(I * N) * sizeof(*wt)), *bias = NULL;
	int x = s->x, w, bt;
	npu_status st;

	if (!wt)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t d = 0; d < s->D; d++)
		for (int64_t j = 0; j < GH; j++)
			for (int64_t i = 0; i < I; i++)
				wt[i * N + d * GH + j] = s->w[(d * GH + j) * I + i];
	st = matrix(g, wt, I, N, &w);
	free(wt);
	if (!st && s->layout)
		st = transpose(g, s, x, (const int64_t[]){ 1, 0, 2 }, -1, &x);
	if (!st)
		st = npu_rw_reshape(g, s->name, x, 2, xd, -1, &x);
	if (!st)
		st = matmul(g, s, x, w, id);
	if (st || !s->b)
		return st;
	/* Wb + Rb, except the GRU's Rbh with linear_before_reset (inside r's product). */
	bias = malloc((size_t)N * sizeof(*bias));
	if (!bias)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t d = 0; d < s->D; d++)
		for (int64_t j = 0; j < GH; j++) {
			const float *b = s->b + d * 2 * GH;

			bias[d * GH + j] = b[j] + (s->gru && s->lbr && j >= 2 * H ? 0 : b[GH + j]);
		}
	st = npu_rw_const(g, NPU_DTYPE_FLOAT32, 1, &N, bias, &bt);
	return st ? st : bin(g, s, "Add", *id, bt, id);
}

/* One time step @t of direction @d: the new state into @dr, its output into *@y. */
static npu_status step(npu_ir_graph *g, const struct rnn *s, int xw, int64_t t, int d,
		       struct rnn_dir *dr, int *y)
{
	int64_t H = s->H, GH = s->gates * H, B = s->B, valid = 0;
	int xg, hr, gs, hn, cn = -1, a, b, c, e;
	npu_status st;

	if (s->lens)
		for (int64_t i = 0; i < B; i++)
			valid += t < s->lens[i];
	else
		valid = B;
	if (!valid) {
		/* Every row is past its length: the state stays, the output is 0. */
		float *z = calloc((size_t)(B * H), sizeof(*z));
		int64_t dims[2] = { B, H };

		if (!z)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		return npu_rw_const(g, NPU_DTYPE_FLOAT32, 2, dims, z, y);
	}
	if (s->lstm) {
		int gi, go, gf, gc, i, f, o;

		if ((st = slice2(g, s, xw, t * B, B, d * GH, GH, &xg)) ||
		    (st = matmul(g, s, dr->h, dr->rt, &hr)) || (st = bin(g, s, "Add", xg, hr, &gs)))
			return st;
		if (dr->pi < 0 && !s->input_forget) {
			/* i, o, f are adjacent and take f as they are: one
			 * activation over [B, 3H] (one CVU step, not three). */
			if ((st = slice2(g, s, gs, 0, B, 0, 3 * H, &a)) ||
			    (st = act(g, s, &dr->act[0], a, true, &a)) ||
			    (st = slice2(g, s, a, 0, B, 0, H, &i)) ||
			    (st = slice2(g, s, a, 0, B, H, H, &o)) ||
			    (st = slice2(g, s, a, 0, B, 2 * H, H, &f)) ||
			    (st = slice2(g, s, gs, 0, B, 3 * H, H, &gc)) ||
			    (st = act(g, s, &dr->act[1], gc, true, &c)) ||
			    (st = bin(g, s, "Mul", f, dr->c, &a)) || (st = bin(g, s, "Mul", i, c, &b)) ||
			    (st = bin(g, s, "Add", a, b, &cn)) ||
			    (st = act(g, s, &dr->act[2], cn, false, &e)) ||
			    (st = bin(g, s, "Mul", o, e, &hn)))
				return st;
			goto state;
		}
		if ((st = slice2(g, s, gs, 0, B, 0, H, &gi)) ||
		    (st = slice2(g, s, gs, 0, B, H, H, &go)) ||
		    (st = slice2(g, s, gs, 0, B, 2 * H, H, &gf)) ||
		    (st = slice2(g, s, gs, 0, B, 3 * H, H, &gc)))
			return st;
		if (dr->pi >= 0 &&
		    ((st = bin(g, s, "Mul", dr->c, dr->pi, &a)) || (st = bin(g, s, "Add", gi, a, &gi)) ||
		     (st = bin(g, s, "Mul", dr->c, dr->pf, &a)) || (st = bin(g, s, "Add", gf, a, &gf))))
			return st;
		if ((st = act(g, s, &dr->act[0], gi, true, &i)))
			return st;
		if (s->input_forget) {
			if ((st = scalar(g, 1.0f, &a)) || (st = bin(g, s, "Sub", a, i, &f)))
				return st;
		} else if ((st = act(g, s, &dr->act[0], gf, true, &f))) {
			return st;
		}
		if ((st = act(g, s, &dr->act[1], gc, true, &c)) ||
		    (st = bin(g, s, "Mul", f, dr->c, &a)) || (st = bin(g, s, "Mul", i, c, &b)) ||
		    (st = bin(g, s, "Add", a, b, &cn)))
			return st;
		if (dr->po >= 0 &&
		    ((st = bin(g, s, "Mul", cn, dr->po, &a)) || (st = bin(g, s, "Add", go, a, &go))))
			return st;
		if ((st = act(g, s, &dr->act[0], go, true, &o)) ||
		    (st = act(g, s, &dr->act[2], cn, false, &e)) || (st = bin(g, s, "Mul", o, e, &hn)))
			return st;
	} else if (s->gru) {
		int xzr, xh, gzr, z, r, hh;

		if ((st = slice2(g, s, xw, t * B, B, d * GH, 2 * H, &xzr)) ||
		    (st = slice2(g, s, xw, t * B, B, d * GH + 2 * H, H, &xh)) ||
		    (st = matmul(g, s, dr->h, dr->rt, &hr)))
			return st;
		if (s->lbr) {
			/* hr is [B, 3H]: the h gate's part gets Rbh, then r times it. */
			if ((st = slice2(g, s, hr, 0, B, 2 * H, H, &hh)) ||
			    (st = slice2(g, s, hr, 0, B, 0, 2 * H, &hr)))
				return st;
			if (dr->rb_h >= 0 && (st = bin(g, s, "Add", hh, dr->rb_h, &hh)))
				return st;
		}
		/* z and r are adjacent: one activation over [B, 2H]. */
		if ((st = bin(g, s, "Add", xzr, hr, &gzr)) ||
		    (st = act(g, s, &dr->act[0], gzr, true, &gzr)) ||
		    (st = slice2(g, s, gzr, 0, B, 0, H, &z)) ||
		    (st = slice2(g, s, gzr, 0, B, H, H, &r)))
			return st;
		if (s->lbr)
			st = bin(g, s, "Mul", r, hh, &a);
		else if (!(st = bin(g, s, "Mul", r, dr->h, &a)))
			st = matmul(g, s, a, dr->rt_h, &a);
		/* H' = (1 - z) h + z H = h + z (H - h) */
		if (st || (st = bin(g, s, "Add", xh, a, &a)) ||
		    (st = act(g, s, &dr->act[1], a, true, &c)) ||
		    (st = bin(g, s, "Sub", dr->h, c, &a)) || (st = bin(g, s, "Mul", z, a, &a)) ||
		    (st = bin(g, s, "Add", c, a, &hn)))
			return st;
	} else {
		if ((st = slice2(g, s, xw, t * B, B, d * GH, GH, &xg)) ||
		    (st = matmul(g, s, dr->h, dr->rt, &hr)) || (st = bin(g, s, "Add", xg, hr, &gs)) ||
		    (st = act(g, s, &dr->act[0], gs, true, &hn)))
			return st;
	}
state:
	if (valid == B) {
		dr->h = *y = hn;
		if (cn >= 0)
			dr->c = cn;
		return NPU_OK;
	}
	/* Rows past their length keep the state and output 0: masks [B, 1]. */
	{
		float *m = malloc((size_t)B * sizeof(*m)), *nm = malloc((size_t)B * sizeof(*nm));
		int64_t md[2] = { B, 1 };
		int mk, nmk;

		if (!m || !nm) {
			free(m);
			free(nm);
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		}
		for (int64_t i = 0; i < B; i++) {
			m[i] = t < s->lens[i] ? 1.0f : 0.0f;
			nm[i] = 1.0f - m[i];
		}
		if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, 2, md, m, &mk))) {
			free(nm);
			return st;
		}
		if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, 2, md, nm, &nmk)) ||
		    (st = bin(g, s, "Mul", hn, mk, y)) || (st = bin(g, s, "Mul", dr->h, nmk, &a)) ||
		    (st = bin(g, s, "Add", *y, a, &dr->h)))
			return st;
		if (cn >= 0 &&
		    ((st = bin(g, s, "Mul", cn, mk, &b)) || (st = bin(g, s, "Mul", dr->c, nmk, &a)) ||
		     (st = bin(g, s, "Add", b, a, &dr->c))))
			return st;
	}
	return NPU_OK;
}

/* Output @out ([D, B, H], layout 1 [B, D, H]) from the final states @st_[d]. */
static npu_status final_state(npu_ir_graph *g, const struct rnn *s, const int *parts, int out)
{
	int64_t cd[2] = { s->D * s->B, s->H }, od[3] = { s->D, s->B, s->H };
	int cat, rs;
	npu_status st;

	if (out < 0)
		return NPU_OK;
	if (s->D == 1)
		cat = parts[0];
	else if ((st = npu_rw_concat(g, s->name, parts, (int)s->D, 0, 2, cd, -1, &cat)))
		return st;
	if (!s->layout)
		return npu_rw_reshape(g, s->name, cat, 3, od, out, &rs);
	if ((st = npu_rw_reshape(g, s->name, cat, 3, od, -1, &rs)))
		return st;
	return transpose(g, s, rs, (const int64_t[]){ 1, 0, 2 }, out, &rs);
}

static npu_status unroll(npu_ir_graph *g, struct rnn *s)
{
	struct rnn_dir dr[2];
	int64_t T = s->T, D = s->D;
	int *ys = NULL, xw, hs[2], cs[2];
	npu_status st;

	if ((st = projection(g, s, &xw)))
		return st;
	for (int d = 0; d < D; d++)
		if ((st = dir_consts(g, s, d, &dr[d])) ||
		    (st = initial_state(g, s, s->h0, d, &dr[d].h)) ||
		    (s->lstm && (st = initial_state(g, s, s->c0, d, &dr[d].c))))
			return st;
	ys = malloc((size_t)(T * D) * sizeof(*ys));
	if (!ys)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	/* Step k of the forward direction is t = k, of the reverse one T - 1 - k. */
	for (int64_t k = 0; k < T && !st; k++)
		for (int d = 0; d < D && !st; d++) {
			int64_t t = d == 1 || s->reverse ? T - 1 - k : k;

			st = step(g, s, xw, t, d, &dr[d], &ys[t * D + d]);
		}
	if (!st && s->y >= 0) {
		int64_t cd[2] = { T * D * s->B, s->H }, yd[4] = { T, D, s->B, s->H };
		int cat, rs;

		if (T * D == 1)
			cat = ys[0];
		else
			st = npu_rw_concat(g, s->name, ys, (int)(T * D), 0, 2, cd, -1, &cat);
		if (!st && !s->layout)
			st = npu_rw_reshape(g, s->name, cat, 4, yd, s->y, &rs);
		else if (!st && !(st = npu_rw_reshape(g, s->name, cat, 4, yd, -1, &rs)))
			st = transpose(g, s, rs, (const int64_t[]){ 2, 0, 1, 3 }, s->y, &rs);
	}
	free(ys);
	for (int d = 0; d < D; d++) {
		hs[d] = dr[d].h;
		cs[d] = s->lstm ? dr[d].c : -1;
	}
	if (!st)
		st = final_state(g, s, hs, s->yh);
	if (!st && s->lstm)
		st = final_state(g, s, cs, s->yc);
	return st;
}

npu_status npu_rewrite_rnn(npu_ir_graph *g, int k, bool *applied)
{
	struct rnn s;
	bool ok;
	npu_status st;

	*applied = false;
	if ((st = read_node(g, &g->nodes[k], &s, &ok)) || !ok)
		goto out;
	*applied = true;
	for (int i = 0; i < g->nodes[k].n_outputs; i++)
		if (g->nodes[k].outputs[i] >= 0)
			npu_rw_detach(g, k, g->nodes[k].outputs[i]);
	g->nodes[k].dead = true;
	st = unroll(g, &s);
out:
	free(s.lens);
	return st;
}

/* Why npu_rewrite_rnn leaves @n alone (for the refusal), NULL when it fits. */
const char *npu_rnn_unsupported(const npu_ir_graph *g, const npu_ir_node *n)
{
	struct rnn s;
	bool ok = false;
	npu_status st = read_node(g, n, &s, &ok);

	free(s.lens);
	if (!st && ok)
		return NULL;
	/* The refusal's buffer holds about 110 characters: Documentation/libnpu.md
	 * lists the activations. */
	return "only on float32 with constant W, R, B, P, sequence_lens and ONNX's activations is";
}
