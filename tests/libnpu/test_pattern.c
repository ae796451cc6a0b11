// SPDX-License-Identifier: MIT
/*
 * Patterns exports spell out node by node (compile/fuse_pattern.c): layer
 * norm of opsets before 17, LLaMA's RMS norm, GELU in its erf and tanh
 * forms, SiLU and SwiGLU.  Each case builds the decomposed graph the way
 * torch.onnx exports it (and the other association orders), checks that
 * the pattern became the one node (and, after a MatMul, the TCU output
 * stage), then compiles and runs the same graph on the emulator against a
 * C reference written from the formula in double precision.  The refusal
 * cases check that what the pattern cannot take (an intermediate someone
 * else reads, a reduction over another axis, a computed epsilon, gamma
 * varying along another axis) is left node by node.
 */
#include <math.h>
#include <string.h>

#include "compile/npu_lower.h"
#include "compile/npu_ops.h"
#include "ir_build.h"
#include "npu_test.h"

#define HBSM_TILE (1u << 20)

/* ---- building ---- */

static int t_(npu_ir_graph *g)
{
	return irb_tensor(g, NULL, 0, -1, NULL);
}

static int scalar(npu_ir_graph *g, float v)
{
	return irb_const(g, NULL, NPU_DTYPE_FLOAT32, 0, NULL, &v);
}

/* @op(@a, @b) into a new tensor. */
static int bin(npu_ir_graph *g, const char *op, int a, int b)
{
	int y = t_(g);

	irb_node(g, op, (int[]){ a, b }, 2, &y, 1);
	return y;
}

static int un(npu_ir_graph *g, const char *op, int a)
{
	int y = t_(g);

	irb_node(g, op, &a, 1, &y, 1);
	return y;
}

/* ReduceMean over @axis with keepdims (axes an attribute before opset 18). */
static int mean(npu_ir_graph *g, int x, int64_t axis)
{
	int y = t_(g);
	npu_ir_node *n;

	if (g->opset >= 18) {
		int ax = irb_const(g, NULL, NPU_DTYPE_INT64, 1, (int64_t[]){ 1 }, &axis);

		irb_node(g, "ReduceMean", (int[]){ x, ax }, 2, &y, 1);
		return y;
	}
	n = irb_node(g, "ReduceMean", &x, 1, &y, 1);
	ck_assert_int_eq(npu_ir_set_attr_ints(n, "axes", &axis, 1), NPU_OK);
	return y;
}

static int count(const npu_ir_graph *g, const char *op)
{
	int c = 0;

	for (int i = 0; i < g->n_nodes; i++)
		c += !g->nodes[i].dead && !strcmp(g->nodes[i].op, op);
	return c;
}

static int live(const npu_ir_graph *g)
{
	int c = 0;

	for (int i = 0; i < g->n_nodes; i++)
		c += !g->nodes[i].dead;
	return c;
}

/* The one live node of type @op. */
static const npu_ir_node *only(const npu_ir_graph *g, const char *op)
{
	const npu_ir_node *n = NULL;

	for (int i = 0; i < g->n_nodes; i++)
		if (!g->nodes[i].dead && !strcmp(g->nodes[i].op, op)) {
			ck_assert_msg(!n, "two %s nodes", op);
			n = &g->nodes[i];
		}
	ck_assert_msg(n != NULL, "no %s node", op);
	return n;
}

static void fill(float *v, int64_t n, unsigned seed, float scale)
{
	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = ((float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f) * scale;
	}
}

/* Shapes, then the pattern pass. */
static void patterns(npu_ir_graph *g)
{
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_eq(npu_fuse_patterns(g), NPU_OK);
}

/* Compile shape-inferred @g (taken) and run it on input @x into @y. */
static void run(npu_ir_graph *g, float *x, float *y)
{
	struct npu_cmodel *cm;
	npu_status st;

	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	st = irb_compile(g, "emu", &cm);
	ck_assert_msg(st == NPU_OK, "compile: %s", npu_last_error());
	st = irb_exec(cm, "emu", (void *[]){ x }, (void *[]){ y });
	ck_assert_msg(st == NPU_OK, "run: %s", npu_last_error());
	npu_ir_graph_free(g);
}

static void close_to(const float *got, const double *want, int64_t n, double tol)
{
	for (int64_t i = 0; i < n; i++)
		ck_assert_msg(fabs(got[i] - want[i]) <= tol * (1.0 + fabs(want[i])),
			      "element %lld: got %.9g, want %.9g", (long long)i, (double)got[i],
			      want[i]);
}

/* ---- layer norm and RMS norm ---- */

enum { R = 6, D = 32 };	/* x [2, 3, 32]: six rows */
static const int64_t xdims[3] = { 2, 3, D };

/* Variants of the decomposed norms. */
#define SQ_MUL		1u	/* Mul(d, d) instead of Pow(d, 2) */
#define RECIP		2u	/* Mul(d, Reciprocal(s)) instead of Div(d, s) */
#define ONE_DIV		4u	/* Mul(d, Div(1, s)) (LLaMA) */
#define NO_AFFINE	8u	/* no gamma / beta */
#define GAMMA_3D	16u	/* gamma as [1, 1, D], beta a scalar */
#define OPSET18		32u	/* ReduceMean's axes as an input */
#define RESIDUAL	64u	/* the output is x + norm(x) (x read outside the pattern) */

static float gam[D], bet[D];

/* x -> [x - mean(x)] -> normalised (layer norm when @ln, else RMS norm) -> y. */
static npu_ir_graph *norm_graph(bool ln, unsigned v, float eps)
{
	npu_ir_graph *g = irb_graph(v & OPSET18 ? 18 : 14);
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, xdims), d = x, sq, s, nrm, y;
	int64_t gd[3] = { 1, 1, D };

	fill(gam, D, 5, 1.0f);
	fill(bet, D, 6, 0.5f);
	for (int i = 0; i < D; i++)
		gam[i] += 1.5f;
	if (ln)
		d = bin(g, "Sub", x, mean(g, x, -1));
	sq = v & SQ_MUL ? bin(g, "Mul", d, d) : bin(g, "Pow", d, scalar(g, 2.0f));
	s = un(g, "Sqrt", bin(g, "Add", mean(g, sq, 2), scalar(g, eps)));
	if (v & RECIP)
		nrm = bin(g, "Mul", d, un(g, "Reciprocal", s));
	else if (v & ONE_DIV)
		nrm = bin(g, "Mul", d, bin(g, "Div", scalar(g, 1.0f), s));
	else
		nrm = bin(g, "Div", d, s);
	y = nrm;
	if (!(v & NO_AFFINE)) {
		int tg = irb_const(g, "gamma", NPU_DTYPE_FLOAT32, v & GAMMA_3D ? 3 : 1,
				   v & GAMMA_3D ? gd : gd + 2, gam);

		y = bin(g, "Mul", tg, nrm);	/* torch writes weight * x */
		if (ln) {
			int tb = v & GAMMA_3D ? scalar(g, bet[0]) :
				 irb_const(g, "beta", NPU_DTYPE_FLOAT32, 1, gd + 2, bet);

			y = bin(g, "Add", y, tb);
		}
	}
	if (v & RESIDUAL)
		y = bin(g, "Add", x, y);
	irb_io(g, &x, 1, &y, 1);
	return g;
}

static void norm_ref(bool ln, unsigned v, float eps, const float *x, double *want)
{
	for (int r = 0; r < R; r++) {
		const float *xr = x + r * D;
		double mu = 0, ms = 0;

		if (ln) {
			for (int i = 0; i < D; i++)
				mu += xr[i];
			mu /= D;
		}
		for (int i = 0; i < D; i++)
			ms += (xr[i] - mu) * (xr[i] - mu);
		ms /= D;
		for (int i = 0; i < D; i++) {
			double y = (xr[i] - mu) / sqrt(ms + eps);

			if (!(v & NO_AFFINE))
				y = y * gam[i] + (ln ? (v & GAMMA_3D ? bet[0] : bet[i]) : 0.0);
			want[r * D + i] = y + (v & RESIDUAL ? xr[i] : 0.0);
		}
	}
}

static const unsigned ln_variants[] = {
	0, SQ_MUL, RECIP, NO_AFFINE, GAMMA_3D, OPSET18, SQ_MUL | RECIP | GAMMA_3D | RESIDUAL,
};
static const unsigned rms_variants[] = {
	ONE_DIV, 0, SQ_MUL | RECIP, NO_AFFINE, GAMMA_3D | RESIDUAL, OPSET18 | ONE_DIV,
};

static void norm_case(bool ln, unsigned v)
{
	const char *op = ln ? "LayerNormalization" : "RMSNormalization";
	npu_ir_graph *g = norm_graph(ln, v, 1e-5f);
	const npu_ir_node *n;
	float x[R * D], y[R * D], eps;
	double want[R * D];

	patterns(g);
	n = only(g, op);
	ck_assert_int_eq(live(g), 1 + !!(v & RESIDUAL));
	ck_assert_int_eq(npu_ir_attr_float(n, "epsilon", 0, &eps), NPU_OK);
	ck_assert(eps == 1e-5f);
	ck_assert_int_eq(n->n_inputs, ln && !(v & NO_AFFINE) ? 3 : 2);
	npu_ir_graph_free(g);

	fill(x, R * D, 11 + v, 2.0f);
	for (int i = 0; i < D; i++)
		x[D + i] += 40.0f;	/* a row far from 0: the mean matters */
	norm_ref(ln, v, 1e-5f, x, want);
	run(norm_graph(ln, v, 1e-5f), x, y);
	close_to(y, want, R * D, 2e-5);
}

START_TEST(layernorm_decomposed)
{
	norm_case(true, ln_variants[_i]);
}
END_TEST

START_TEST(rmsnorm_decomposed)
{
	norm_case(false, rms_variants[_i]);
}
END_TEST

/* Left node by node: what the layer norm pattern must not take. */
START_TEST(layernorm_refused)
{
	npu_ir_graph *g;
	int x, d, y, e;

	/*
	 * The centred x is also a graph output: no layer norm; what remains
	 * normalises that output by its own root mean square, an RMS norm.
	 */
	g = irb_graph(14);
	x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, xdims);
	d = bin(g, "Sub", x, mean(g, x, -1));
	y = bin(g, "Div", d, un(g, "Sqrt", bin(g, "Add", mean(g, bin(g, "Pow", d, scalar(g, 2)),
								 -1), scalar(g, 1e-5f))));
	irb_io(g, &x, 1, (int[]){ y, d }, 2);
	patterns(g);
	ck_assert_int_eq(count(g, "LayerNormalization"), 0);
	ck_assert_int_eq(count(g, "RMSNormalization"), 1);
	ck_assert_int_eq(count(g, "ReduceMean"), 1);
	ck_assert_int_eq(count(g, "Sub"), 1);
	npu_ir_graph_free(g);

	/* the statistics over axis 1, not the last */
	g = irb_graph(14);
	x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, xdims);
	d = bin(g, "Sub", x, mean(g, x, 1));
	y = bin(g, "Div", d, un(g, "Sqrt", bin(g, "Add", mean(g, bin(g, "Pow", d, scalar(g, 2)),
								 1), scalar(g, 1e-5f))));
	irb_io(g, &x, 1, &y, 1);
	patterns(g);
	ck_assert_int_eq(live(g), 7);
	npu_ir_graph_free(g);

	/* epsilon computed at run time */
	g = irb_graph(14);
	x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, xdims);
	e = irb_tensor(g, "eps", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ 1 });
	d = bin(g, "Sub", x, mean(g, x, -1));
	y = bin(g, "Div", d, un(g, "Sqrt", bin(g, "Add", mean(g, bin(g, "Pow", d, scalar(g, 2)),
								 -1), e)));
	irb_io(g, (int[]){ x, e }, 2, &y, 1);
	patterns(g);
	ck_assert_int_eq(live(g), 7);
	npu_ir_graph_free(g);

	/* gamma varies along axis 1: the norm fuses, the Mul stays */
	g = irb_graph(14);
	x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, xdims);
	d = bin(g, "Sub", x, mean(g, x, -1));
	y = bin(g, "Div", d, un(g, "Sqrt", bin(g, "Add", mean(g, bin(g, "Pow", d, scalar(g, 2)),
								 -1), scalar(g, 1e-5f))));
	fill(gam, 3, 3, 1.0f);
	y = bin(g, "Mul", y, irb_const(g, "g3", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ 3, 1 }, gam));
	irb_io(g, &x, 1, &y, 1);
	patterns(g);
	ck_assert_int_eq(count(g, "LayerNormalization"), 1);
	ck_assert_int_eq(count(g, "Mul"), 1);
	ck_assert_int_eq(live(g), 2);
	npu_ir_graph_free(g);
}
END_TEST

/* ---- GELU, SiLU, SwiGLU ---- */

enum { M = 4, K = 8, N = 16 };

/* The activations, as exports write them. */
enum act { GELU_BERT, GELU_HALF_FIRST, GELU_HALF_LAST, GELU_TANH_GPT2, GELU_TANH_CUBE, SILU,
	   NACTS };

static int activation(npu_ir_graph *g, enum act a, int x)
{
	int t, h;

	switch (a) {
	case GELU_BERT:		/* (x (erf(x / sqrt 2) + 1)) 0.5 */
		t = bin(g, "Add", un(g, "Erf", bin(g, "Div", x, scalar(g, 1.41421354f))),
			scalar(g, 1.0f));
		return bin(g, "Mul", bin(g, "Mul", x, t), scalar(g, 0.5f));
	case GELU_HALF_FIRST:	/* (0.5 x) (1 + erf(x 0.7071)) */
		h = bin(g, "Mul", scalar(g, 0.5f), x);
		t = bin(g, "Add", scalar(g, 1.0f),
			un(g, "Erf", bin(g, "Mul", x, scalar(g, 0.707106769f))));
		return bin(g, "Mul", h, t);
	case GELU_HALF_LAST:	/* x ((1 + erf(x / sqrt 2)) 0.5) */
		t = bin(g, "Add", un(g, "Erf", bin(g, "Div", x, scalar(g, 1.41421354f))),
			scalar(g, 1.0f));
		return bin(g, "Mul", x, bin(g, "Mul", t, scalar(g, 0.5f)));
	case GELU_TANH_GPT2:	/* GPT-2: (0.5 x)(1 + tanh(0.79788 (x + 0.044715 x^3))) */
	case GELU_TANH_CUBE:	/* the same with x (x x) and the constants first */
		h = bin(g, "Mul", x, scalar(g, 0.5f));
		if (a == GELU_TANH_GPT2) {
			t = bin(g, "Mul", bin(g, "Pow", x, scalar(g, 3.0f)), scalar(g, 0.044715f));
			t = bin(g, "Mul", bin(g, "Add", x, t), scalar(g, 0.797884583f));
		} else {
			t = bin(g, "Mul", x, bin(g, "Mul", x, x));
			t = bin(g, "Mul", scalar(g, 0.044715f), t);
			t = bin(g, "Mul", scalar(g, 0.797884583f), bin(g, "Add", t, x));
		}
		t = bin(g, "Add", un(g, "Tanh", t), scalar(g, 1.0f));
		return bin(g, "Mul", h, t);
	case SILU:
	default:
		return bin(g, "Mul", x, un(g, "Sigmoid", x));
	}
}

static double act_ref(enum act a, double x)
{
	if (a == SILU)
		return x / (1 + exp(-x));
	if (a == GELU_TANH_GPT2 || a == GELU_TANH_CUBE)
		return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
	return 0.5 * x * (1 + erf(x / sqrt(2)));
}

static unsigned act_fn(enum act a)
{
	return a == SILU ? NPU_FN_SILU : a >= GELU_TANH_GPT2 ? NPU_FN_GELU_TANH : NPU_FN_GELU;
}

/* x [M, N] -> activation -> y: one Gelu or Swish node, on the CVU. */
static npu_ir_graph *act_graph(enum act a)
{
	npu_ir_graph *g = irb_graph(14);
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ M, N });
	int y = activation(g, a, x);

	irb_io(g, &x, 1, &y, 1);
	return g;
}

START_TEST(activation_alone)
{
	enum act a = (enum act)_i;
	npu_ir_graph *g = act_graph(a);
	const npu_ir_node *n;
	const struct npu_op *d;
	float x[M * N], y[M * N];
	double want[M * N];

	patterns(g);
	ck_assert_int_eq(live(g), 1);
	n = only(g, a == SILU ? "Swish" : "Gelu");
	d = npu_op_get(n->op, n->opset);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(npu_op_cvu_fn(d, n), act_fn(a));
	npu_ir_graph_free(g);

	fill(x, M * N, 21, 5.0f);
	for (int i = 0; i < M * N; i++)
		want[i] = act_ref(a, x[i]);
	run(act_graph(a), x, y);
	close_to(y, want, M * N, 1e-5);
}
END_TEST

static float w1[K * N], w3[K * N];

/* x [M, K] -> MatMul W1 -> activation [* (x W3): SwiGLU] -> y. */
static npu_ir_graph *mm_graph(enum act a, bool glu)
{
	npu_ir_graph *g = irb_graph(14);
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ M, K });
	int tw1 = irb_const(g, "w1", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ K, N }, w1);
	int y = activation(g, a, bin(g, "MatMul", x, tw1));

	if (glu) {
		int tw3 = irb_const(g, "w3", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ K, N }, w3);

		y = bin(g, "Mul", y, bin(g, "MatMul", x, tw3));
	}
	irb_io(g, &x, 1, &y, 1);
	return g;
}

static float bf16(float v)
{
	uint32_t u;

	memcpy(&u, &v, 4);
	u = (u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000u;
	memcpy(&v, &u, 4);
	return v;
}

/* x W in bf16 products with fp32 sums, as the TCU computes them. */
static double dot(const float *x, const float *w, int m, int n)
{
	double s = 0;

	for (int k = 0; k < K; k++)
		s += (double)bf16(x[m * K + k]) * bf16(w[k * N + n]);
	return s;
}

static void mm_case(enum act a, bool glu)
{
	npu_ir_graph *g = mm_graph(a, glu);
	float x[M * K], y[M * N];
	double want[M * N];
	int64_t fn = -1;
	int mm = -1;

	fill(w1, K * N, 31, 0.5f);
	fill(w3, K * N, 32, 0.5f);
	/* the activation folds into the gate MatMul's output stage */
	patterns(g);
	ck_assert_int_eq(npu_fuse(g, HBSM_TILE), NPU_OK);
	ck_assert_int_eq(live(g), glu ? 3 : 1);
	for (int i = 0; i < g->n_nodes; i++)
		if (!g->nodes[i].dead && npu_ir_attr_find(&g->nodes[i], "npu_act"))
			mm = i;
	ck_assert_int_ge(mm, 0);
	ck_assert_str_eq(g->nodes[mm].op, "MatMul");
	ck_assert_int_eq(npu_ir_attr_int(&g->nodes[mm], "npu_act", -1, &fn), NPU_OK);
	ck_assert_int_eq(fn, act_fn(a));
	if (glu)
		ck_assert_int_eq(count(g, "Mul"), 1);
	npu_ir_graph_free(g);

	fill(x, M * K, 33, 2.0f);
	for (int m = 0; m < M; m++)
		for (int n = 0; n < N; n++) {
			double h = act_ref(a, dot(x, w1, m, n));

			want[m * N + n] = glu ? h * dot(x, w3, m, n) : h;
		}
	run(mm_graph(a, glu), x, y);
	close_to(y, want, M * N, 1e-4);
}

START_TEST(activation_after_matmul)
{
	mm_case((enum act)_i, false);
}
END_TEST

START_TEST(swiglu)
{
	mm_case(SILU, true);
}
END_TEST

/* Left alone: x * Sigmoid(x) whose sigmoid is a graph output too. */
START_TEST(silu_refused_when_sigmoid_is_seen)
{
	npu_ir_graph *g = irb_graph(14);
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ M, N });
	int s = un(g, "Sigmoid", x), y = bin(g, "Mul", x, s);

	irb_io(g, &x, 1, (int[]){ y, s }, 2);
	patterns(g);
	ck_assert_int_eq(count(g, "Swish"), 0);
	ck_assert_int_eq(live(g), 2);
	npu_ir_graph_free(g);
}
END_TEST

/*
 * Gelu and Swish as models write them: an unknown approximation, a Swish
 * alpha other than 1 are refused by name.
 */
START_TEST(gelu_swish_attributes_refused)
{
	static const struct {
		const char *op, *attr, *why;
		int opset;
	} cases[] = {
		{ "Gelu", "approximate", "approximate", 20 },
		{ "Swish", "alpha", "alpha 1", 24 },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		npu_ir_graph *g = irb_graph(cases[c].opset);
		int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ M, N }), y = t_(g);
		npu_ir_node *n = irb_node(g, cases[c].op, &x, 1, &y, 1);
		struct npu_cmodel *cm = NULL;

		if (c == 0)
			npu_ir_set_attr_string(n, "approximate", "fast");
		else
			npu_ir_set_attr_float(n, "alpha", 1.702f);
		irb_io(g, &x, 1, &y, 1);
		ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
		ck_assert_int_eq(irb_compile(g, "emu", &cm), NPU_ERR_UNSUPPORTED);
		ck_assert_msg(strstr(npu_last_error(), cases[c].op) &&
			      strstr(npu_last_error(), cases[c].why), "%s", npu_last_error());
		npu_ir_graph_free(g);
	}
}
END_TEST

static Suite *pattern_suite(void)
{
	Suite *s = suite_create("npu_pattern");
	TCase *tc = tcase_create("pattern");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, layernorm_decomposed, 0,
			    (int)(sizeof(ln_variants) / sizeof(ln_variants[0])));
	tcase_add_loop_test(tc, rmsnorm_decomposed, 0,
			    (int)(sizeof(rms_variants) / sizeof(rms_variants[0])));
	tcase_add_test(tc, layernorm_refused);
	tcase_add_loop_test(tc, activation_alone, 0, NACTS);
	tcase_add_loop_test(tc, activation_after_matmul, 0, NACTS);
	tcase_add_test(tc, swiglu);
	tcase_add_test(tc, silu_refused_when_sigmoid_is_seen);
	tcase_add_test(tc, gelu_swish_attributes_refused);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(pattern_suite)
