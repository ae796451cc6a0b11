// SPDX-License-Identifier: MIT
/*
 * MatMul and Gemm with both operands computed at run time (attention's
 * Q K^T and scores x V): batch dims equal and broadcast as numpy does,
 * Gemm's transB, and the 8-bit MatMulInteger; and a constant B wider than
 * a tile.  On the emulator against a C reference of the same arithmetic
 * (operands rounded to bf16, sums in float, 8-bit exactly).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_ops.h"
#include "ir_build.h"
#include "npu_test.h"

/* Compile @g for the emulator and run it once: inputs @x, output 0 into @y. */
static void run(npu_ir_graph *g, void *const *x, void *y)
{
	struct npu_cmodel *cm;
	npu_status st;

	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	st = irb_compile(g, "emu", &cm);
	ck_assert_msg(st == NPU_OK, "compile: %s", npu_last_error());
	st = irb_exec(cm, "emu", x, (void *[]){ y });
	ck_assert_msg(st == NPU_OK, "run: %s", npu_last_error());
}

static float *randf(int64_t n, unsigned seed)
{
	float *v = malloc((size_t)n * sizeof(float));

	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
	}
	return v;
}

static float bf(float f)
{
	return npu_ir_bf16_to_f32(npu_ir_f32_to_bf16(f));
}

/* Index of batch element @bi of @yd (rank @yr - 2 batch dims) in an operand of @td. */
static int64_t bcast(const int64_t *td, int tr, const int64_t *yd, int yr, int64_t bi)
{
	int64_t off = 0, stride = 1;

	for (int d = yr - 3; d >= 0; d--) {
		int64_t idx = bi % yd[d];
		int t = d - (yr - tr);

		bi /= yd[d];
		if (t < 0)
			continue;
		if (td[t] != 1)
			off += idx * stride;
		stride *= td[t];
	}
	return off;
}

/*
 * Y = A x B on run-time operands of the given shapes (rank >= 2 each), in
 * the graph and by hand; compared element by element.
 */
static void check_matmul(int ar, const int64_t *ad, int br, const int64_t *bd)
{
	npu_ir_graph *g = irb_graph(13);
	int64_t yd[NPU_MAX_RANK], an = 1, bn = 1, yn = 1, batch = 1;
	int yr = (ar > br ? ar : br), M = (int)ad[ar - 2], K = (int)ad[ar - 1], N = (int)bd[br - 1];
	int a, b, y;
	float *av, *bv, *yv, *ref;

	for (int d = 0; d < yr - 2; d++) {
		int ia = d - (yr - ar), ib = d - (yr - br);
		int64_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bd[ib] : 1;

		yd[d] = da > db ? da : db;
		batch *= yd[d];
	}
	yd[yr - 2] = M;
	yd[yr - 1] = N;
	for (int d = 0; d < ar; d++)
		an *= ad[d];
	for (int d = 0; d < br; d++)
		bn *= bd[d];
	yn = batch * M * N;
	a = irb_tensor(g, "a", NPU_DTYPE_FLOAT32, ar, ad);
	b = irb_tensor(g, "b", NPU_DTYPE_FLOAT32, br, bd);
	y = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);
	irb_node(g, "MatMul", (int[]){ a, b }, 2, &y, 1);
	irb_io(g, (int[]){ a, b }, 2, &y, 1);
	av = randf(an, 1);
	bv = randf(bn, 2);
	yv = calloc((size_t)yn, sizeof(float));
	ref = calloc((size_t)yn, sizeof(float));
	run(g, (void *[]){ av, bv }, yv);
	for (int64_t bi = 0; bi < batch; bi++) {
		const float *am = av + bcast(ad, ar, yd, yr, bi) * M * K;
		const float *bm = bv + bcast(bd, br, yd, yr, bi) * K * N;

		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				float s = 0.0f;

				for (int k = 0; k < K; k++)
					s += bf(am[i * K + k]) * bf(bm[k * N + j]);
				ref[(bi * M + i) * N + j] = s;
			}
	}
	for (int64_t i = 0; i < yn; i++)
		ck_assert_msg(fabsf(yv[i] - ref[i]) <= 1e-4f * K,
			      "element %lld: %g, expected %g", (long long)i, yv[i], ref[i]);
	free(av);
	free(bv);
	free(yv);
	free(ref);
	npu_ir_graph_free(g);
}

START_TEST(runtime_b_2d)
{
	check_matmul(2, (int64_t[]){ 33, 64 }, 2, (int64_t[]){ 64, 40 });
}
END_TEST

/* Q K^T of 2 x 4 heads, sequence 16, head 8; scores x V. */
START_TEST(runtime_b_attention_shapes)
{
	check_matmul(4, (int64_t[]){ 2, 4, 16, 8 }, 4, (int64_t[]){ 2, 4, 8, 16 });
	check_matmul(4, (int64_t[]){ 2, 4, 16, 16 }, 4, (int64_t[]){ 2, 4, 16, 8 });
}
END_TEST

START_TEST(runtime_b_broadcast)
{
	check_matmul(4, (int64_t[]){ 2, 1, 5, 8 }, 3, (int64_t[]){ 3, 8, 6 });
	check_matmul(2, (int64_t[]){ 5, 8 }, 3, (int64_t[]){ 3, 8, 6 });
	check_matmul(3, (int64_t[]){ 3, 5, 8 }, 2, (int64_t[]){ 8, 6 });
}
END_TEST

/* Gemm(A, B^T) with B computed: K^T as exported by transB. */
START_TEST(runtime_b_gemm_trans)
{
	npu_ir_graph *g = irb_graph(13);
	int M = 12, K = 24, N = 20;
	int a = irb_tensor(g, "a", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ M, K });
	int b = irb_tensor(g, "b", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ N, K });
	int y = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);
	float *av = randf(M * K, 3), *bv = randf(N * K, 4), *yv = calloc((size_t)(M * N), 4);
	npu_ir_node *n = irb_node(g, "Gemm", (int[]){ a, b }, 2, &y, 1);

	ck_assert_int_eq(npu_ir_set_attr_int(n, "transB", 1), NPU_OK);
	ck_assert_int_eq(npu_ir_set_attr_float(n, "alpha", 0.5f), NPU_OK);
	irb_io(g, (int[]){ a, b }, 2, &y, 1);
	run(g, (void *[]){ av, bv }, yv);
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			float s = 0.0f;

			for (int k = 0; k < K; k++)
				s += bf(av[i * K + k]) * bf(bv[j * K + k]);
			ck_assert_msg(fabsf(yv[i * N + j] - 0.5f * s) <= 1e-4f * K,
				      "(%d, %d): %g, expected %g", i, j, yv[i * N + j], 0.5f * s);
		}
	free(av);
	free(bv);
	free(yv);
	npu_ir_graph_free(g);
}
END_TEST

/* Q K^T / sqrt(d): the Div goes into the TCU's output stage. */
START_TEST(scale_folded_into_product)
{
	npu_ir_graph *g = irb_graph(13);
	int M = 16, K = 8, N = 16;
	float d = sqrtf(8.0f);
	int a = irb_tensor(g, "q", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ M, K });
	int b = irb_tensor(g, "kt", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ K, N });
	int s = irb_const(g, "d", NPU_DTYPE_FLOAT32, 0, NULL, &d);
	int p = irb_tensor(g, "p", NPU_DTYPE_FLOAT32, -1, NULL);
	int y = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);
	float *av = randf(M * K, 5), *bv = randf(K * N, 6), *yv = calloc((size_t)(M * N), 4);
	bool div_left = false;

	irb_node(g, "MatMul", (int[]){ a, b }, 2, &p, 1);
	irb_node(g, "Div", (int[]){ p, s }, 2, &y, 1);
	irb_io(g, (int[]){ a, b }, 2, &y, 1);
	run(g, (void *[]){ av, bv }, yv);
	for (int i = 0; i < g->n_nodes; i++)
		div_left |= !g->nodes[i].dead && !strcmp(g->nodes[i].op, "Div");
	ck_assert_msg(!div_left, "the Div was not folded into the MatMul");
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			float acc = 0.0f;

			for (int k = 0; k < K; k++)
				acc += bf(av[i * K + k]) * bf(bv[k * N + j]);
			ck_assert_msg(fabsf(yv[i * N + j] - acc / d) <= 1e-5f * K,
				      "(%d, %d): %g, expected %g", i, j, yv[i * N + j], acc / d);
		}
	free(av);
	free(bv);
	free(yv);
	npu_ir_graph_free(g);
}
END_TEST

/* MatMulInteger with B computed: exact int32 sums. */
START_TEST(runtime_b_integer)
{
	npu_ir_graph *g = irb_graph(13);
	int M = 7, K = 32, N = 9;
	int a = irb_tensor(g, "a", NPU_DTYPE_INT8, 2, (int64_t[]){ M, K });
	int b = irb_tensor(g, "b", NPU_DTYPE_INT8, 2, (int64_t[]){ K, N });
	int y = irb_tensor(g, "y", NPU_DTYPE_INT32, -1, NULL);
	int8_t av[7 * 32], bv[32 * 9];
	int32_t yv[7 * 9];

	for (int i = 0; i < M * K; i++)
		av[i] = (int8_t)((i * 37) % 255 - 127);
	for (int i = 0; i < K * N; i++)
		bv[i] = (int8_t)((i * 53) % 255 - 127);
	irb_node(g, "MatMulInteger", (int[]){ a, b }, 2, &y, 1);
	irb_io(g, (int[]){ a, b }, 2, &y, 1);
	run(g, (void *[]){ av, bv }, yv);
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			int32_t s = 0;

			for (int k = 0; k < K; k++)
				s += av[i * K + k] * bv[k * N + j];
			ck_assert_int_eq(yv[i * N + j], s);
		}
	npu_ir_graph_free(g);
}
END_TEST

/*
 * A constant B wider than a tile: the compiler lays it out in blocks of the
 * tiles' width (lower_matmul.c's const_b).  One weight [K][N] used by a
 * decode-shaped MatMul (M = 1: narrow tiles spread over the TPBs) and by
 * a prefill-shaped one (M = 40: other tiles), and a Gemm with transB on a
 * constant [N][K]: every column of every block against the reference, so
 * a block in the wrong place, the wrong width for the last one or a
 * placed copy reused at another width shows.
 */
START_TEST(const_b_blocks)
{
	enum { K = 64, N = 1000, M2 = 40 };
	npu_ir_graph *g = irb_graph(13);
	float *w = randf(K * N, 5), *wt = randf(N * K, 6);
	float *a1 = randf(K, 7), *a2 = randf(M2 * K, 8), *a3 = randf(K, 9);
	float *y1 = calloc(N, 4), *y2 = calloc((size_t)M2 * N, 4), *y3 = calloc(N, 4);
	int in1 = irb_tensor(g, "a1", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ 1, K });
	int in2 = irb_tensor(g, "a2", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ M2, K });
	int in3 = irb_tensor(g, "a3", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ 1, K });
	int cw = irb_const(g, "w", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ K, N }, w);
	int cwt = irb_const(g, "wt", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ N, K }, wt);
	int o1 = irb_tensor(g, "y1", NPU_DTYPE_FLOAT32, -1, NULL);
	int o2 = irb_tensor(g, "y2", NPU_DTYPE_FLOAT32, -1, NULL);
	int o3 = irb_tensor(g, "y3", NPU_DTYPE_FLOAT32, -1, NULL);
	struct npu_cmodel *cm;
	npu_ir_node *gemm;
	npu_status st;

	irb_node(g, "MatMul", (int[]){ in1, cw }, 2, &o1, 1);
	irb_node(g, "MatMul", (int[]){ in2, cw }, 2, &o2, 1);
	gemm = irb_node(g, "Gemm", (int[]){ in3, cwt }, 2, &o3, 1);
	ck_assert_int_eq(npu_ir_set_attr_int(gemm, "transB", 1), NPU_OK);
	irb_io(g, (int[]){ in1, in2, in3 }, 3, (int[]){ o1, o2, o3 }, 3);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	st = irb_compile(g, "emu", &cm);
	ck_assert_msg(st == NPU_OK, "compile: %s", npu_last_error());
	st = irb_exec(cm, "emu", (void *[]){ a1, a2, a3 }, (void *[]){ y1, y2, y3 });
	ck_assert_msg(st == NPU_OK, "run: %s", npu_last_error());
	for (int i = 0; i < M2; i++)
		for (int j = 0; j < N; j++) {
			float s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;

			for (int k = 0; k < K; k++) {
				s2 += bf(a2[i * K + k]) * bf(w[k * N + j]);
				if (!i) {
					s1 += bf(a1[k]) * bf(w[k * N + j]);
					s3 += bf(a3[k]) * bf(wt[j * K + k]);
				}
			}
			ck_assert_msg(fabsf(y2[i * N + j] - s2) <= 1e-4f * K,
				      "M = %d, (%d, %d): %g, expected %g", M2, i, j, y2[i * N + j], s2);
			if (i)
				continue;
			ck_assert_msg(fabsf(y1[j] - s1) <= 1e-4f * K,
				      "M = 1, column %d: %g, expected %g", j, y1[j], s1);
			ck_assert_msg(fabsf(y3[j] - s3) <= 1e-4f * K,
				      "Gemm transB, column %d: %g, expected %g", j, y3[j], s3);
		}
	free(w);
	free(wt);
	free(a1);
	free(a2);
	free(a3);
	free(y1);
	free(y2);
	free(y3);
	npu_ir_graph_free(g);
}
END_TEST

static Suite *matmul_suite(void)
{
	Suite *s = suite_create("npu_matmul");
	TCase *tc = tcase_create("runtime_b");

	tcase_add_test(tc, runtime_b_2d);
	tcase_add_test(tc, runtime_b_attention_shapes);
	tcase_add_test(tc, runtime_b_broadcast);
	tcase_add_test(tc, runtime_b_gemm_trans);
	tcase_add_test(tc, runtime_b_integer);
	tcase_add_test(tc, scale_folded_into_product);
	tcase_add_test(tc, const_b_blocks);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(matmul_suite)
