// SPDX-License-Identifier: MIT
/*
 * LSTM, GRU and RNN (compile/rewrite_rnn.c): each configuration is
 * compiled with X and the initial states given at run time (W, R, B, P
 * and sequence_lens constant, as exported models hold them) and run on
 * the emulator, against a direct C reference of the ONNX equations: per
 * batch row and direction a loop over that row's own time steps, in
 * double.  The MatMuls multiply in bf16 with fp32 sums; with weights in
 * [-0.5, 0.5] the error stays under 1e-2 over 7 steps (about 1e-3 measured).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_compile.h"
#include "compile/npu_ops.h"
#include "ir_build.h"
#include "npu_test.h"

struct rcase {
	const char *op;			/* "LSTM", "GRU", "RNN" */
	int64_t T, B, I, H;
	const char *dir;		/* NULL: forward */
	int layout;
	bool bias, peep, init, lens;
	float clip;			/* 0: none */
	int lbr, input_forget;
	bool only_h;			/* Y_h alone requested */
	const char *acts[6];		/* NULL: the defaults */
	float alpha[6], beta[6];
	int nalpha, nbeta;
};

static float *randf(int64_t n, unsigned seed, float scale)
{
	float *v = malloc((size_t)(n ? n : 1) * sizeof(float));

	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = scale * ((float)((seed >> 9) % 2001) / 1000.0f - 1.0f);
	}
	return v;
}

struct ract {
	const char *name;
	double a, b;
};

static double apply(const struct ract *f, double x)
{
	const char *n = f->name;

	if (!strcmp(n, "Sigmoid"))
		return 1 / (1 + exp(-x));
	if (!strcmp(n, "Tanh"))
		return tanh(x);
	if (!strcmp(n, "Relu"))
		return x > 0 ? x : 0;
	if (!strcmp(n, "HardSigmoid"))
		return fmax(0, fmin(1, f->a * x + f->b));
	if (!strcmp(n, "Affine"))
		return f->a * x + f->b;
	if (!strcmp(n, "LeakyRelu"))
		return x < 0 ? f->a * x : x;
	if (!strcmp(n, "ThresholdedRelu"))
		return x > f->a ? x : 0;
	if (!strcmp(n, "ScaledTanh"))
		return f->a * tanh(f->b * x);
	if (!strcmp(n, "Elu"))
		return x < 0 ? f->a * (exp(x) - 1) : x;
	if (!strcmp(n, "Softsign"))
		return x / (1 + fabs(x));
	if (!strcmp(n, "Softplus"))
		return log(1 + exp(x));
	ck_abort_msg("activation %s", n);
	return 0;
}

/* The activations of @c per direction, with alpha/beta consumed in order. */
static void ref_acts(const struct rcase *c, int nact, int D, struct ract f[2][3])
{
	static const char *const defs[3][3] = {
		{ "Tanh" }, { "Sigmoid", "Tanh" }, { "Sigmoid", "Tanh", "Tanh" },
	};
	static const struct { const char *n; int na, nb; double da, db; } takes[] = {
		{ "HardSigmoid", 1, 1, 0.2, 0.5 }, { "Affine", 1, 1, 1, 0 },
		{ "LeakyRelu", 1, 0, 0.01, 0 }, { "ThresholdedRelu", 1, 0, 1, 0 },
		{ "ScaledTanh", 1, 1, 1, 1 }, { "Elu", 1, 0, 1, 0 },
	};
	int ia = 0, ib = 0;

	for (int d = 0; d < D; d++)
		for (int i = 0; i < nact; i++) {
			struct ract *a = &f[d][i];

			a->name = c->acts[0] ? c->acts[d * nact + i] : defs[nact - 1][i];
			a->a = a->b = 0;
			for (size_t k = 0; k < sizeof(takes) / sizeof(takes[0]); k++) {
				if (strcmp(takes[k].n, a->name))
					continue;
				a->a = takes[k].na && ia < c->nalpha ? c->alpha[ia++] : takes[k].da;
				a->b = takes[k].nb && ib < c->nbeta ? c->beta[ib++] : takes[k].db;
			}
		}
}

static double clipv(const struct rcase *c, double x)
{
	return c->clip > 0 ? fmax(-c->clip, fmin(c->clip, x)) : x;
}

/*
 * The reference.  x [T][B][I] (already in layout 0), w [D][G*H][I],
 * r [D][G*H][H], b [D][2*G*H] or NULL, p [D][3H] or NULL, h0/c0 [D][B][H]
 * or NULL, lens [B] or NULL; y [T][D][B][H], yh, yc [D][B][H].
 */
static void reference(const struct rcase *c, int G, int D, const float *x, const float *w,
		      const float *r, const float *b, const float *p, const float *h0,
		      const float *c0, const int32_t *lens, double *y, double *yh, double *yc)
{
	int64_t T = c->T, B = c->B, I = c->I, H = c->H, GH = G * H;
	int nact = G == 4 ? 3 : G == 3 ? 2 : 1;
	bool lstm = G == 4, gru = G == 3;
	struct ract f[2][3];
	double *hs = calloc((size_t)H, sizeof(double)), *cs = calloc((size_t)H, sizeof(double));
	double *g = calloc((size_t)GH, sizeof(double)), *rh = calloc((size_t)H, sizeof(double));
	double *hn = calloc((size_t)H, sizeof(double));

	ref_acts(c, nact, D, f);
	memset(y, 0, (size_t)(T * D * B * H) * sizeof(double));
	for (int d = 0; d < D; d++) {
		bool rev = d == 1 || (c->dir && !strcmp(c->dir, "reverse"));
		const float *W = w + d * GH * I, *R = r + d * GH * H;
		const float *Wb = b ? b + d * 2 * GH : NULL, *Rb = b ? Wb + GH : NULL;

		for (int64_t bb = 0; bb < B; bb++) {
			int64_t len = lens ? lens[bb] : T;

			for (int64_t j = 0; j < H; j++) {
				hs[j] = h0 ? h0[(d * B + bb) * H + j] : 0;
				cs[j] = c0 ? c0[(d * B + bb) * H + j] : 0;
			}
			for (int64_t k = 0; k < len; k++) {
				int64_t t = rev ? len - 1 - k : k;
				const float *xt = x + (t * B + bb) * I;

				/* g = X W^T + Wb (+ H R^T + Rb, except GRU's h gate) */
				for (int64_t j = 0; j < GH; j++) {
					double s = Wb ? Wb[j] : 0;

					for (int64_t i = 0; i < I; i++)
						s += (double)xt[i] * W[j * I + i];
					if (!gru || j < 2 * H) {
						s += Rb ? Rb[j] : 0;
						for (int64_t i = 0; i < H; i++)
							s += hs[i] * R[j * H + i];
					}
					g[j] = s;
				}
				if (lstm) {
					const float *P = p ? p + d * 3 * H : NULL;

					for (int64_t j = 0; j < H; j++) {
						double gi = g[j] + (P ? P[j] * cs[j] : 0);
						double gf = g[2 * H + j] + (P ? P[2 * H + j] * cs[j] : 0);
						double it = apply(&f[d][0], clipv(c, gi));
						double ft = c->input_forget ? 1 - it :
							    apply(&f[d][0], clipv(c, gf));
						double ct = apply(&f[d][1], clipv(c, g[3 * H + j]));
						double Cn = ft * cs[j] + it * ct;
						double go = g[H + j] + (P ? P[H + j] * Cn : 0);
						double ot = apply(&f[d][0], clipv(c, go));

						cs[j] = Cn;
						hn[j] = ot * apply(&f[d][2], Cn);
					}
				} else if (gru) {
					for (int64_t j = 0; j < H; j++) {
						double rt = apply(&f[d][0], clipv(c, g[H + j]));

						rh[j] = rt;
					}
					for (int64_t j = 0; j < H; j++) {
						double s = 0, z = apply(&f[d][0], clipv(c, g[j]));
						double rbh = Rb ? Rb[2 * H + j] : 0, h;

						if (c->lbr) {
							for (int64_t i = 0; i < H; i++)
								s += hs[i] * R[(2 * H + j) * H + i];
							s = rh[j] * (s + rbh);
						} else {
							for (int64_t i = 0; i < H; i++)
								s += rh[i] * hs[i] * R[(2 * H + j) * H + i];
							s += rbh;
						}
						h = apply(&f[d][1], clipv(c, g[2 * H + j] + s));
						hn[j] = (1 - z) * h + z * hs[j];
					}
				} else {
					for (int64_t j = 0; j < H; j++)
						hn[j] = apply(&f[d][0], clipv(c, g[j]));
				}
				for (int64_t j = 0; j < H; j++) {
					hs[j] = hn[j];
					y[((t * D + d) * B + bb) * H + j] = hn[j];
				}
			}
			for (int64_t j = 0; j < H; j++) {
				yh[(d * B + bb) * H + j] = hs[j];
				yc[(d * B + bb) * H + j] = cs[j];
			}
		}
	}
	free(hs);
	free(cs);
	free(g);
	free(rh);
	free(hn);
}

/* [A][B'][C] -> [B'][A][C] (layout 0 <-> 1 of states); @n = C. */
static void swap01(const float *s, float *d, int64_t A, int64_t Bd, int64_t n)
{
	for (int64_t a = 0; a < A; a++)
		for (int64_t b = 0; b < Bd; b++)
			memcpy(d + (b * A + a) * n, s + (a * Bd + b) * n, (size_t)n * sizeof(float));
}

static int count_op(const npu_ir_graph *g, const char *op)
{
	int c = 0;

	for (int i = 0; i < g->n_nodes; i++)
		c += !g->nodes[i].dead && !strcmp(g->nodes[i].op, op);
	return c;
}

static void check(const struct rcase *c)
{
	int G = !strcmp(c->op, "LSTM") ? 4 : !strcmp(c->op, "GRU") ? 3 : 1;
	int D = c->dir && !strcmp(c->dir, "bidirectional") ? 2 : 1;
	int64_t T = c->T, B = c->B, I = c->I, H = c->H, GH = G * H;
	bool lstm = G == 4;
	float *x = randf(T * B * I, 3, 1.0f), *w = randf(D * GH * I, 5, 0.5f);
	float *r = randf(D * GH * H, 7, 0.5f), *b = randf(D * 2 * GH, 11, 0.5f);
	float *p = randf(D * 3 * H, 13, 0.5f), *h0 = randf(D * B * H, 17, 0.8f);
	float *c0 = randf(D * B * H, 19, 0.8f);
	float *xin = malloc((size_t)(T * B * I) * sizeof(float));
	float *h0in = malloc((size_t)(D * B * H) * sizeof(float));
	float *c0in = malloc((size_t)(D * B * H) * sizeof(float));
	int32_t lens[8];
	double *ry = calloc((size_t)(T * D * B * H), sizeof(double));
	double *ryh = calloc((size_t)(D * B * H), sizeof(double));
	double *ryc = calloc((size_t)(D * B * H), sizeof(double));
	float *y = calloc((size_t)(T * D * B * H), sizeof(float));
	float *yh = calloc((size_t)(D * B * H), sizeof(float));
	float *yc = calloc((size_t)(D * B * H), sizeof(float));
	npu_ir_graph *g = irb_graph(14);
	int64_t xd[3] = { T, B, I }, wd[3] = { D, GH, I }, rd[3] = { D, GH, H };
	int64_t bd[2] = { D, 2 * GH }, pd[2] = { D, 3 * H }, sd[3] = { D, B, H }, ld[1] = { B };
	int64_t yd[4] = { T, D, B, H };
	int ins[8] = { -1, -1, -1, -1, -1, -1, -1, -1 }, outs[3], gin[3], nin = 1, nout;
	void *xs[3], *ys[3];
	struct npu_cmodel *cm;
	npu_ir_node *n;
	npu_status st;
	double err = 0;

	ck_assert(B <= 8);
	for (int64_t i = 0; i < B; i++)
		lens[i] = (int32_t)(c->lens ? (T - (i * 2) % T) : T);
	reference(c, G, D, x, w, r, c->bias ? b : NULL, c->peep ? p : NULL, c->init ? h0 : NULL,
		  c->init ? c0 : NULL, c->lens ? lens : NULL, ry, ryh, ryc);
	if (c->layout) {
		swap01(x, xin, T, B, I);
		swap01(h0, h0in, D, B, H);
		swap01(c0, c0in, D, B, H);
		xd[0] = B, xd[1] = T;
		sd[0] = B, sd[1] = D;
		yd[0] = B, yd[1] = T, yd[2] = D;
	} else {
		memcpy(xin, x, (size_t)(T * B * I) * sizeof(float));
		memcpy(h0in, h0, (size_t)(D * B * H) * sizeof(float));
		memcpy(c0in, c0, (size_t)(D * B * H) * sizeof(float));
	}
	ins[0] = gin[0] = irb_tensor(g, "X", NPU_DTYPE_FLOAT32, 3, xd);
	xs[0] = xin;
	ins[1] = irb_const(g, "W", NPU_DTYPE_FLOAT32, 3, wd, w);
	ins[2] = irb_const(g, "R", NPU_DTYPE_FLOAT32, 3, rd, r);
	if (c->bias)
		ins[3] = irb_const(g, "B", NPU_DTYPE_FLOAT32, 2, bd, b);
	if (c->lens)
		ins[4] = irb_const(g, "sequence_lens", NPU_DTYPE_INT32, 1, ld, lens);
	if (c->init) {
		ins[5] = gin[nin] = irb_tensor(g, "initial_h", NPU_DTYPE_FLOAT32, 3, sd);
		xs[nin++] = h0in;
		if (lstm) {
			ins[6] = gin[nin] = irb_tensor(g, "initial_c", NPU_DTYPE_FLOAT32, 3, sd);
			xs[nin++] = c0in;
		}
	}
	if (c->peep)
		ins[7] = irb_const(g, "P", NPU_DTYPE_FLOAT32, 2, pd, p);
	outs[0] = irb_tensor(g, "Y", NPU_DTYPE_FLOAT32, 4, yd);
	outs[1] = irb_tensor(g, "Y_h", NPU_DTYPE_FLOAT32, 3, sd);
	outs[2] = irb_tensor(g, "Y_c", NPU_DTYPE_FLOAT32, 3, sd);
	nout = lstm ? 3 : 2;
	if (c->only_h) {
		/* Y and Y_c omitted: the graph's one output is Y_h. */
		n = irb_node(g, c->op, ins, lstm ? 8 : 6, (int[]){ -1, outs[1] }, 2);
		nout = 1;
	} else {
		n = irb_node(g, c->op, ins, lstm ? 8 : 6, outs, nout);
	}
	ck_assert_int_eq(npu_ir_set_attr_int(n, "hidden_size", H), NPU_OK);
	ck_assert_int_eq(npu_ir_set_attr_int(n, "layout", c->layout), NPU_OK);
	if (c->dir)
		ck_assert_int_eq(npu_ir_set_attr_string(n, "direction", c->dir), NPU_OK);
	if (c->clip > 0)
		ck_assert_int_eq(npu_ir_set_attr_float(n, "clip", c->clip), NPU_OK);
	if (c->lbr)
		ck_assert_int_eq(npu_ir_set_attr_int(n, "linear_before_reset", 1), NPU_OK);
	if (c->input_forget)
		ck_assert_int_eq(npu_ir_set_attr_int(n, "input_forget", 1), NPU_OK);
	if (c->acts[0]) {
		int na = (G == 4 ? 3 : G == 3 ? 2 : 1) * D;

		ck_assert_int_eq(npu_ir_set_attr_strings(n, "activations", c->acts, na), NPU_OK);
	}
	if (c->nalpha)
		ck_assert_int_eq(npu_ir_set_attr_floats(n, "activation_alpha", c->alpha,
							c->nalpha), NPU_OK);
	if (c->nbeta)
		ck_assert_int_eq(npu_ir_set_attr_floats(n, "activation_beta", c->beta,
							c->nbeta), NPU_OK);
	irb_io(g, gin, nin, c->only_h ? &outs[1] : outs, nout);
	st = npu_ops_infer_shapes(g);
	ck_assert_msg(st == NPU_OK, "%s: shapes: %s", c->op, npu_last_error());
	st = irb_compile(g, "emu", &cm);
	ck_assert_msg(st == NPU_OK, "%s: compile: %s", c->op, npu_last_error());
	ck_assert_int_eq(count_op(g, c->op), 0);
	ys[0] = y, ys[1] = yh, ys[2] = yc;
	if (c->only_h) {
		ys[0] = yh;
		lstm = false;	/* no Y_c to compare */
		memset(ry, 0, (size_t)(T * D * B * H) * sizeof(double));
	}
	st = irb_exec(cm, "emu", xs, ys);
	ck_assert_msg(st == NPU_OK, "%s: run: %s", c->op, npu_last_error());
	for (int64_t t = 0; t < T; t++)
		for (int d = 0; d < D; d++)
			for (int64_t bb = 0; bb < B; bb++)
				for (int64_t j = 0; j < H; j++) {
					int64_t ri = ((t * D + d) * B + bb) * H + j;
					int64_t gi = c->layout ? ((bb * T + t) * D + d) * H + j : ri;

					err = fmax(err, fabs(y[gi] - ry[ri]));
					/* rows past their length output exactly 0 */
					if (c->lens && t >= lens[bb])
						ck_assert_msg(y[gi] == 0.0f, "%s: Y past the length", c->op);
				}
	for (int d = 0; d < D; d++)
		for (int64_t bb = 0; bb < B; bb++)
			for (int64_t j = 0; j < H; j++) {
				int64_t ri = (d * B + bb) * H + j;
				int64_t gi = c->layout ? (bb * D + d) * H + j : ri;

				err = fmax(err, fabs(yh[gi] - ryh[ri]));
				if (lstm)
					err = fmax(err, fabs(yc[gi] - ryc[ri]));
			}
	ck_assert_msg(err < 1e-2, "%s %s layout %d: max error %g", c->op,
		      c->dir ? c->dir : "forward", c->layout, err);
	npu_ir_graph_free(g);
	free(x), free(w), free(r), free(b), free(p), free(h0), free(c0);
	free(xin), free(h0in), free(c0in), free(ry), free(ryh), free(ryc);
	free(y), free(yh), free(yc);
}

START_TEST(lstm_forms)
{
	check(&(struct rcase){ .op = "LSTM", .T = 5, .B = 2, .I = 3, .H = 4 });
	check(&(struct rcase){ .op = "LSTM", .T = 6, .B = 3, .I = 5, .H = 4,
			       .dir = "bidirectional", .bias = true, .init = true });
	check(&(struct rcase){ .op = "LSTM", .T = 7, .B = 3, .I = 4, .H = 5, .dir = "reverse",
			       .bias = true, .peep = true,
			       .init = true, .lens = true });
	check(&(struct rcase){ .op = "LSTM", .T = 6, .B = 3, .I = 4, .H = 4,
			       .dir = "bidirectional", .layout = 1, .bias = true,
			       .peep = true, .init = true, .lens = true });
	check(&(struct rcase){ .op = "LSTM", .T = 5, .B = 2, .I = 3, .H = 4, .bias = true,
			       .clip = 0.3f,
			       .input_forget = 1 });
}
END_TEST

START_TEST(gru_forms)
{
	check(&(struct rcase){ .op = "GRU", .T = 5, .B = 2, .I = 3, .H = 4 });
	check(&(struct rcase){ .op = "GRU", .T = 6, .B = 3, .I = 5, .H = 4, .dir = "bidirectional",
			       .bias = true, .init = true,
			       .lens = true });
	check(&(struct rcase){ .op = "GRU", .T = 6, .B = 3, .I = 5, .H = 4, .dir = "bidirectional",
			       .bias = true, .init = true,
			       .lens = true, .lbr = 1 });
	check(&(struct rcase){ .op = "GRU", .T = 7, .B = 2, .I = 4, .H = 3, .dir = "reverse",
			       .layout = 1, .bias = true, .init = true,
			       .lbr = 1, .clip = 0.5f });
}
END_TEST

START_TEST(rnn_forms)
{
	check(&(struct rcase){ .op = "RNN", .T = 5, .B = 2, .I = 3, .H = 4 });
	check(&(struct rcase){ .op = "LSTM", .T = 5, .B = 2, .I = 3, .H = 4, .dir = "bidirectional",
			       .lens = true, .only_h = true });
	check(&(struct rcase){ .op = "RNN", .T = 7, .B = 3, .I = 4, .H = 5, .dir = "bidirectional",
			       .layout = 1, .bias = true, .init = true,
			       .lens = true });
}
END_TEST

/* Every alternative activation, with alpha and beta consumed in order. */
START_TEST(activations)
{
	check(&(struct rcase){ .op = "LSTM", .T = 4, .B = 2, .I = 3, .H = 4, .bias = true,
			       .acts = { "HardSigmoid", "ScaledTanh", "Softsign" },
			       .alpha = { 0.3f, 0.9f }, .beta = { 0.4f, 1.2f },
			       .nalpha = 2, .nbeta = 2 });
	check(&(struct rcase){ .op = "GRU", .T = 4, .B = 2, .I = 3, .H = 4, .dir = "bidirectional",
			       .bias = true,
			       .acts = { "Sigmoid", "Elu", "HardSigmoid", "LeakyRelu" },
			       .alpha = { 0.7f, 0.25f, 0.05f }, .beta = { 0.45f }, .nalpha = 3,
			       .nbeta = 1 });
	check(&(struct rcase){ .op = "RNN", .T = 4, .B = 2, .I = 3, .H = 4, .dir = "bidirectional",
			       .bias = true,
			       .acts = { "Relu", "Softplus" } });
	check(&(struct rcase){ .op = "RNN", .T = 4, .B = 2, .I = 3, .H = 4, .dir = "bidirectional",
			       .bias = true,
			       .acts = { "Affine", "ThresholdedRelu" },
			       .alpha = { 0.5f, 0.1f }, .beta = { 0.2f }, .nalpha = 2,
			       .nbeta = 1 });
}
END_TEST

/* Weights computed at run time, an unknown activation: refused by name. */
START_TEST(refusals)
{
	for (int k = 0; k < 2; k++) {
		npu_ir_graph *g = irb_graph(14);
		int64_t xd[3] = { 2, 1, 3 }, wd[3] = { 1, 4, 3 }, rd[3] = { 1, 4, 4 };
		float wv[12] = { 0 }, rv[16] = { 0 };
		int ins[3], outs[2];
		struct npu_cmodel *cm;
		npu_ir_node *n;

		ins[0] = irb_tensor(g, "X", NPU_DTYPE_FLOAT32, 3, xd);
		ins[1] = k ? irb_const(g, "W", NPU_DTYPE_FLOAT32, 3, wd, wv) :
			 irb_tensor(g, "W", NPU_DTYPE_FLOAT32, 3, wd);
		ins[2] = irb_const(g, "R", NPU_DTYPE_FLOAT32, 3, rd, rv);
		outs[0] = irb_tensor(g, "Y", NPU_DTYPE_FLOAT32, -1, NULL);
		outs[1] = irb_tensor(g, "Y_h", NPU_DTYPE_FLOAT32, -1, NULL);
		n = irb_node(g, "RNN", ins, 3, outs, 2);
		if (k)
			ck_assert_int_eq(npu_ir_set_attr_strings(n, "activations",
								 (const char *[]){ "Gelu" }, 1),
					 NPU_OK);
		irb_io(g, ins, k ? 1 : 2, outs, 2);
		ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
		ck_assert_int_eq(irb_compile(g, "emu", &cm), NPU_ERR_UNSUPPORTED);
		ck_assert_msg(strstr(npu_last_error(), "'RNN'") &&
			      strstr(npu_last_error(), "constant W"), "%s", npu_last_error());
		npu_ir_graph_free(g);
	}
}
END_TEST

/* A malformed node: the shape rule names the input and the shape it needs. */
START_TEST(bad_shapes)
{
	npu_ir_graph *g = irb_graph(14);
	int64_t xd[3] = { 2, 1, 3 }, wd[3] = { 1, 12, 3 }, rd[3] = { 1, 12, 3 };
	float wv[36] = { 0 }, rv[36] = { 0 };
	int ins[3], outs[2];

	ins[0] = irb_tensor(g, "X", NPU_DTYPE_FLOAT32, 3, xd);
	ins[1] = irb_const(g, "W", NPU_DTYPE_FLOAT32, 3, wd, wv);
	ins[2] = irb_const(g, "R", NPU_DTYPE_FLOAT32, 3, rd, rv);
	outs[0] = irb_tensor(g, "Y", NPU_DTYPE_FLOAT32, -1, NULL);
	outs[1] = irb_tensor(g, "Y_h", NPU_DTYPE_FLOAT32, -1, NULL);
	irb_node(g, "GRU", ins, 3, outs, 2);
	irb_io(g, ins, 1, outs, 2);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_ERR_SHAPE);
	ck_assert_msg(strstr(npu_last_error(), "R is float32[1,12,3], it must be [D, G * H, H]"),
		      "%s", npu_last_error());
	npu_ir_graph_free(g);
}
END_TEST

static Suite *rnn_suite(void)
{
	Suite *s = suite_create("rnn");
	TCase *tc = tcase_create("rnn");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, lstm_forms);
	tcase_add_test(tc, gru_forms);
	tcase_add_test(tc, rnn_forms);
	tcase_add_test(tc, activations);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, bad_shapes);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(rnn_suite)
