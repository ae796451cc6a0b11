// SPDX-License-Identifier: MIT
/*
 * A linear layer's bias Add folded into the TCU (compile/npu_fuse.c):
 * MatMul(x, W) then Add(y, b) with a constant row b becomes one MatMul
 * whose tiles add b in the accumulator, and the activation after it (Gelu,
 * Relu) then folds into the same output stage.  Checked on the graph (the
 * Add is gone, the MatMul has the bias and the activation), by step count,
 * and on the emulator against a C reference (bf16 operands, fp32 sums, the
 * bias, the activation).  And the refusals: a product also seen as a graph
 * output, a bias that varies along rows, a bias computed at run time.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_lower.h"
#include "compile/npu_ops.h"
#include "model/npu_cmodel.h"
#include "ir_build.h"
#include "npu_test.h"

#define HBSM_TILE (1u << 20)
#define BATCH 2
#define SEQ 5
#define K 24
#define N 12

enum act { NO_ACT, GELU, RELU };

enum bias_kind {
	ROW,		/* [N], as Add(y, b) */
	ROW_FIRST,	/* [N], as Add(b, y) */
	ROW_3D,		/* [1, 1, N] */
	SCALAR,		/* [1]: the same for every column */
	PER_ROW,	/* [SEQ, 1]: varies along the rows, refused */
	RUNTIME,	/* [N], a graph input: refused */
};

struct bcase {
	enum act act;
	enum bias_kind bias;
	bool mm_out;	/* the product also a graph output: refused */
	bool fused;	/* what the pass must do */
};

static float wv[K * N], bv[SEQ * N];

static void fill(float *v, int n, unsigned seed, float amp)
{
	for (int i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = ((float)((seed >> 9) % 2001) / 1000.0f - 1.0f) * amp;
	}
}

static float bf(float f)
{
	return npu_ir_bf16_to_f32(npu_ir_f32_to_bf16(f));
}

/*
 * x [BATCH, SEQ, K] -> MatMul W [K, N] -> Add bias -> [activation] -> y;
 * the product also an output when @c->mm_out.  *@bias_in is the run-time
 * bias's tensor (RUNTIME) or -1.
 */
static npu_ir_graph *build(const struct bcase *c, int *bias_in)
{
	npu_ir_graph *g = irb_graph(20);
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, (int64_t[]){ BATCH, SEQ, K });
	int w = irb_const(g, "w", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ K, N }, wv);
	int p = irb_tensor(g, "p", NPU_DTYPE_FLOAT32, -1, NULL);
	int s = irb_tensor(g, "s", NPU_DTYPE_FLOAT32, -1, NULL);
	int y = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);
	int b;

	*bias_in = -1;
	switch (c->bias) {
	case ROW_3D:
		b = irb_const(g, "b", NPU_DTYPE_FLOAT32, 3, (int64_t[]){ 1, 1, N }, bv);
		break;
	case SCALAR:
		b = irb_const(g, "b", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ 1 }, bv);
		break;
	case PER_ROW:
		b = irb_const(g, "b", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ SEQ, 1 }, bv);
		break;
	case RUNTIME:
		b = *bias_in = irb_tensor(g, "b", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ N });
		break;
	default:
		b = irb_const(g, "b", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ N }, bv);
		break;
	}
	irb_node(g, "MatMul", (int[]){ x, w }, 2, &p, 1);
	irb_node(g, "Add", c->bias == ROW_FIRST ? (int[]){ b, p } : (int[]){ p, b }, 2,
		 c->act == NO_ACT ? &y : &s, 1);
	if (c->act != NO_ACT)
		irb_node(g, c->act == GELU ? "Gelu" : "Relu", &s, 1, &y, 1);
	irb_io(g, *bias_in >= 0 ? (int[]){ x, b } : &x, *bias_in >= 0 ? 2 : 1,
	       c->mm_out ? (int[]){ y, p } : &y, c->mm_out ? 2 : 1);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	return g;
}

static int live(const npu_ir_graph *g, const char *op)
{
	int n = 0;

	for (int i = 0; i < g->n_nodes; i++)
		n += !g->nodes[i].dead && !strcmp(g->nodes[i].op, op);
	return n;
}

static float bias_at(enum bias_kind k, const float *brt, int s, int j)
{
	if (k == SCALAR)
		return bv[0];
	if (k == PER_ROW)
		return bv[s];
	return k == RUNTIME ? brt[j] : bv[j];
}

static double act_ref(enum act a, double v)
{
	if (a == GELU)
		return 0.5 * v * (1 + erf(v / sqrt(2)));
	return a == RELU ? (v > 0 ? v : 0) : v;
}

static void check(const struct bcase *c)
{
	float x[BATCH * SEQ * K], brt[N], y[BATCH * SEQ * N], p[BATCH * SEQ * N];
	npu_ir_graph *g;
	struct npu_cmodel *cm;
	npu_status st;
	int bin;

	fill(wv, K * N, 7, 0.4f);
	fill(bv, SEQ * N, 8, 2.0f);
	fill(brt, N, 9, 2.0f);
	fill(x, BATCH * SEQ * K, 10, 1.0f);

	/* The graph after fusion. */
	g = build(c, &bin);
	ck_assert_int_eq(npu_fuse(g, HBSM_TILE), NPU_OK);
	ck_assert_int_eq(live(g, "Add"), c->fused ? 0 : 1);
	for (int i = 0; i < g->n_nodes; i++) {
		const npu_ir_node *n = &g->nodes[i];

		if (n->dead || strcmp(n->op, "MatMul"))
			continue;
		ck_assert_int_eq(n->n_inputs, c->fused ? 3 : 2);
		/* The activation follows the bias into the output stage. */
		ck_assert(!c->fused || (c->act != NO_ACT) == !!npu_ir_attr_find(n, "npu_act"));
	}
	if (c->fused)
		ck_assert_int_eq(live(g, "Gelu") + live(g, "Relu"), 0);
	npu_ir_graph_free(g);

	/* Compiled and run: one step when everything folded. */
	g = build(c, &bin);
	st = irb_compile(g, "emu", &cm);
	ck_assert_msg(st == NPU_OK, "compile: %s", npu_last_error());
	if (c->fused)
		ck_assert_uint_eq(cm->nsteps, 1);
	else
		ck_assert_uint_ge(cm->nsteps, 2);
	st = irb_exec(cm, "emu", bin >= 0 ? (void *[]){ x, brt } : (void *[]){ x },
		      c->mm_out ? (void *[]){ y, p } : (void *[]){ y });
	ck_assert_msg(st == NPU_OK, "run: %s", npu_last_error());
	npu_ir_graph_free(g);

	for (int bi = 0; bi < BATCH; bi++)
		for (int s = 0; s < SEQ; s++)
			for (int j = 0; j < N; j++) {
				const float *xr = x + (bi * SEQ + s) * K;
				int o = (bi * SEQ + s) * N + j;
				float acc = 0.0f;
				double want;

				for (int k = 0; k < K; k++)
					acc += bf(xr[k]) * bf(wv[k * N + j]);
				want = act_ref(c->act, (double)acc + bias_at(c->bias, brt, s, j));
				ck_assert_msg(fabs(y[o] - want) <= 1e-4 * K,
					      "y[%d]: %g, expected %g", o, y[o], want);
				if (c->mm_out)
					ck_assert_msg(fabsf(p[o] - acc) <= 1e-4f * K,
						      "p[%d]: %g, expected %g", o, p[o], acc);
			}
}

static const struct bcase cases[] = {
	{ NO_ACT, ROW, false, true },
	{ GELU, ROW, false, true },
	{ RELU, ROW_FIRST, false, true },
	{ GELU, ROW_FIRST, false, true },
	{ NO_ACT, ROW_3D, false, true },
	{ RELU, SCALAR, false, true },
	{ GELU, ROW, true, false },
	{ NO_ACT, PER_ROW, false, false },
	{ GELU, RUNTIME, false, false },
};

START_TEST(matmul_bias)
{
	check(&cases[_i]);
}
END_TEST

/*
 * Gemm y = alpha A B + beta C, then + b: C becomes beta C + b, beta 1;
 * the lowering divides the bias by alpha, which the TCU's scale restores.
 * @with_c: Gemm has a C row of its own.
 */
static void gemm_case(bool with_c)
{
	npu_ir_graph *g = irb_graph(13);
	float x[SEQ * K], out[SEQ * N];
	struct npu_cmodel *cm;
	npu_ir_node *n;
	npu_status st;
	int a, w, cc, b, p, y;

	/* Before the constants copy them. */
	fill(wv, K * N, 17, 0.4f);
	fill(bv, SEQ * N, 18, 2.0f);
	fill(x, SEQ * K, 19, 1.0f);
	a = irb_tensor(g, "a", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ SEQ, K });
	w = irb_const(g, "w", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ N, K }, wv);
	cc = irb_const(g, "c", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ N }, bv + N);
	b = irb_const(g, "b", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ 1, N }, bv);
	p = irb_tensor(g, "p", NPU_DTYPE_FLOAT32, -1, NULL);
	y = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);
	n = irb_node(g, "Gemm", (int[]){ a, w, cc }, with_c ? 3 : 2, &p, 1);
	ck_assert_int_eq(npu_ir_set_attr_int(n, "transB", 1), NPU_OK);
	ck_assert_int_eq(npu_ir_set_attr_float(n, "alpha", 0.5f), NPU_OK);
	ck_assert_int_eq(npu_ir_set_attr_float(n, "beta", 3.0f), NPU_OK);
	irb_node(g, "Add", (int[]){ b, p }, 2, &y, 1);
	irb_io(g, &a, 1, &y, 1);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	st = irb_compile(g, "emu", &cm);
	ck_assert_msg(st == NPU_OK, "compile: %s", npu_last_error());
	ck_assert_uint_eq(cm->nsteps, 1);
	st = irb_exec(cm, "emu", (void *[]){ x }, (void *[]){ out });
	ck_assert_msg(st == NPU_OK, "run: %s", npu_last_error());
	npu_ir_graph_free(g);
	for (int s = 0; s < SEQ; s++)
		for (int j = 0; j < N; j++) {
			float acc = 0.0f;
			double want;

			for (int k = 0; k < K; k++)
				acc += bf(x[s * K + k]) * bf(wv[j * K + k]);
			want = 0.5 * acc + (with_c ? 3.0 * bv[N + j] : 0.0) + bv[j];
			ck_assert_msg(fabs(out[s * N + j] - want) <= 1e-4 * K,
				      "y[%d][%d]: %g, expected %g", s, j, out[s * N + j], want);
		}
}

START_TEST(gemm_bias)
{
	gemm_case(false);
	gemm_case(true);
}
END_TEST

/* MatMul -> Mul 0.125 (the fused scale) -> Add b: s acc + b in one step. */
START_TEST(scaled_matmul_bias)
{
	npu_ir_graph *g = irb_graph(13);
	float k8 = 0.125f, x[SEQ * K], out[SEQ * N];
	struct npu_cmodel *cm;
	npu_status st;
	int a, w, sc, b, p, q, y;

	fill(wv, K * N, 27, 0.4f);
	fill(bv, N, 28, 2.0f);
	fill(x, SEQ * K, 29, 1.0f);
	a = irb_tensor(g, "a", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ SEQ, K });
	w = irb_const(g, "w", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ K, N }, wv);
	sc = irb_const(g, "k", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ 1 }, &k8);
	b = irb_const(g, "b", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ N }, bv);
	p = irb_tensor(g, "p", NPU_DTYPE_FLOAT32, -1, NULL);
	q = irb_tensor(g, "q", NPU_DTYPE_FLOAT32, -1, NULL);
	y = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);
	irb_node(g, "MatMul", (int[]){ a, w }, 2, &p, 1);
	irb_node(g, "Mul", (int[]){ p, sc }, 2, &q, 1);
	irb_node(g, "Add", (int[]){ q, b }, 2, &y, 1);
	irb_io(g, &a, 1, &y, 1);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	st = irb_compile(g, "emu", &cm);
	ck_assert_msg(st == NPU_OK, "compile: %s", npu_last_error());
	ck_assert_uint_eq(cm->nsteps, 1);
	st = irb_exec(cm, "emu", (void *[]){ x }, (void *[]){ out });
	ck_assert_msg(st == NPU_OK, "run: %s", npu_last_error());
	npu_ir_graph_free(g);
	for (int s = 0; s < SEQ; s++)
		for (int j = 0; j < N; j++) {
			float acc = 0.0f;
			double want;

			for (int k = 0; k < K; k++)
				acc += bf(x[s * K + k]) * bf(wv[k * N + j]);
			want = 0.125 * acc + bv[j];
			ck_assert_msg(fabs(out[s * N + j] - want) <= 1e-4 * K,
				      "y[%d][%d]: %g, expected %g", s, j, out[s * N + j], want);
		}
}
END_TEST

static Suite *fuse_bias_suite(void)
{
	Suite *s = suite_create("fuse_bias");
	TCase *tc = tcase_create("bias");

	tcase_add_loop_test(tc, matmul_bias, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, gemm_bias);
	tcase_add_test(tc, scaled_matmul_bias);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(fuse_bias_suite)
