// SPDX-License-Identifier: MIT
/*
 * The compiler, operator by operator: small graphs built with the IR API,
 * compiled, run on the emulator and compared with plain C references.
 * Matrix products run in bf16 with fp32 accumulation, so they are checked
 * against a tolerance; everything else is exact or nearly so.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_cc.h"
#include "compile/npu_tile.h"
#include "compile/npu_compile.h"
#include "compile/npu_ops.h"
#include "ir_build.h"
#include "model/npu_model_priv.h"
#include "npu/npu_hw.h"
#include "npu_test.h"

/* ---- graph building ---- */

static npu_ir_graph *graph(void)
{
	return irb_graph(17);
}

static int tensor(npu_ir_graph *g, const char *name, int rank, const int64_t *dims)
{
	return irb_tensor(g, name, NPU_DTYPE_FLOAT32, rank, dims);
}

static int cst(npu_ir_graph *g, const char *name, int rank, const int64_t *dims,
	       const float *v)
{
	return irb_const(g, name, NPU_DTYPE_FLOAT32, rank, dims, v);
}

static int icst(npu_ir_graph *g, const char *name, int n, const int64_t *v)
{
	return irb_const(g, name, NPU_DTYPE_INT64, 1, (int64_t[]){ n }, v);
}

/* Every compiler case's nodes have one output. */
static npu_ir_node *node(npu_ir_graph *g, const char *op, const int *in, int nin, int out)
{
	return irb_node(g, op, in, nin, &out, 1);
}

/* Compile @g for @spec's device, run it on @x (inputs in order), fill @y. */
static npu_status run_graph(npu_ir_graph *g, const char *spec, float *const *x,
			    float *const *y)
{
	struct npu_cmodel *cm;
	npu_status st = npu_ops_infer_shapes(g);

	if (!st)
		st = irb_compile(g, spec, &cm);
	if (st)
		return st;
	st = irb_exec(cm, spec, (void *const *)x, (void *const *)y);
	ck_assert_msg(st == NPU_OK, "run: %s", npu_last_error());
	return st;
}

static void fill(float *v, int64_t n, unsigned seed)
{
	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
	}
}

static void close_to(const float *got, const float *want, int64_t n, float rel, float abs_tol)
{
	for (int64_t i = 0; i < n; i++)
		ck_assert_msg(fabsf(got[i] - want[i]) <= abs_tol + rel * fabsf(want[i]),
			      "element %lld: got %g, want %g", (long long)i, got[i], want[i]);
}

/* ---- tests ---- */

START_TEST(add_broadcast_relu)
{
	int64_t xd[4] = { 2, 3, 4, 5 }, bd[4] = { 1, 3, 1, 1 };
	float x[120], b[3] = { 0.5f, -2.0f, 1.0f }, y[120], want[120];
	npu_ir_graph *g = graph();
	int tx = tensor(g, "x", 4, xd), tb = cst(g, "b", 4, bd, b);
	int ts = tensor(g, "s", -1, NULL), ty = tensor(g, "y", -1, NULL);
	float *xs[1] = { x }, *ys[1] = { y };

	node(g, "Add", (int[]){ tx, tb }, 2, ts);
	node(g, "Relu", (int[]){ ts }, 1, ty);
	irb_io(g, &tx, 1, &ty, 1);
	fill(x, 120, 1);
	for (int i = 0; i < 120; i++)
		want[i] = fmaxf(0.0f, x[i] + b[(i / 20) % 3]);
	ck_assert_int_eq(run_graph(g, "emu", xs, ys), NPU_OK);
	close_to(y, want, 120, 0, 0);
	npu_ir_graph_free(g);
}
END_TEST

START_TEST(unary_functions)
{
	static const char *const ops[] = { "Sigmoid", "Tanh", "Abs", "Neg", "LeakyRelu", "Clip" };
	int64_t d[2] = { 7, 9 };

	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		npu_ir_graph *g = graph();
		int tx = tensor(g, "x", 2, d), ty = tensor(g, "y", -1, NULL);
		float x[63], y[63], want[63];
		float *xs[1] = { x }, *ys[1] = { y };
		npu_ir_node *n = node(g, ops[k], &tx, 1, ty);

		if (!strcmp(ops[k], "Clip")) {
			g->opset = 6;
			n->opset = 6;
			npu_ir_set_attr_float(n, "min", -0.25f);
			npu_ir_set_attr_float(n, "max", 0.5f);
		}
		irb_io(g, &tx, 1, &ty, 1);
		fill(x, 63, (unsigned)k + 3);
		for (int i = 0; i < 63; i++) {
			float v = x[i];

			want[i] = k == 0 ? 1.0f / (1.0f + expf(-v)) : k == 1 ? tanhf(v) :
				  k == 2 ? fabsf(v) : k == 3 ? -v : k == 4 ? (v < 0 ? 0.01f * v : v) :
				  fminf(fmaxf(v, -0.25f), 0.5f);
		}
		ck_assert_int_eq(run_graph(g, "emu", xs, ys), NPU_OK);
		close_to(y, want, 63, 1e-5f, 1e-6f);
		npu_ir_graph_free(g);
	}
}
END_TEST

static void ref_gemm(const float *a, const float *b, const float *bias, float *y, int M,
		     int K, int N)
{
	for (int m = 0; m < M; m++)
		for (int n = 0; n < N; n++) {
			double acc = bias ? bias[n] : 0;

			for (int k = 0; k < K; k++)
				acc += (double)a[m * K + k] * b[k * N + n];
			y[m * N + n] = (float)acc;
		}
}

START_TEST(matmul_and_gemm)
{
	enum { M = 37, K = 64, N = 50 };
	int64_t ad[2] = { M, K }, bd[2] = { K, N }, cd[1] = { N };
	static float a[M * K], b[K * N], c[N], y[M * N], want[M * N];
	float *xs[1] = { a }, *ys[1] = { y };
	npu_ir_graph *g = graph();
	int ta = tensor(g, "a", 2, ad), tb = cst(g, "b", 2, bd, b), ty = tensor(g, "y", -1, NULL);

	fill(a, M * K, 5);
	fill(b, K * N, 6);
	fill(c, N, 7);
	/* b was captured by cst() before fill: rebuild it. */
	npu_ir_set_const(g, tb, b, sizeof(b));
	node(g, "MatMul", (int[]){ ta, tb }, 2, ty);
	irb_io(g, &ta, 1, &ty, 1);
	ref_gemm(a, b, NULL, want, M, K, N);
	ck_assert_int_eq(run_graph(g, "emu", xs, ys), NPU_OK);
	close_to(y, want, M * N, 2e-2f, 5e-2f);
	npu_ir_graph_free(g);

	g = graph();
	ta = tensor(g, "a", 2, ad);
	tb = cst(g, "b", 2, bd, b);
	{
		int tc = cst(g, "c", 1, cd, c);
		npu_ir_node *n;

		ty = tensor(g, "y", -1, NULL);
		n = node(g, "Gemm", (int[]){ ta, tb, tc }, 3, ty);
		npu_ir_set_attr_float(n, "alpha", 0.5f);
		npu_ir_set_attr_float(n, "beta", 2.0f);
	}
	irb_io(g, &ta, 1, &ty, 1);
	ref_gemm(a, b, NULL, want, M, K, N);
	for (int i = 0; i < M * N; i++)
		want[i] = 0.5f * want[i] + 2.0f * c[i % N];
	ck_assert_int_eq(run_graph(g, "emu", xs, ys), NPU_OK);
	close_to(y, want, M * N, 2e-2f, 5e-2f);
	npu_ir_graph_free(g);
}
END_TEST

static void ref_conv(const float *x, const float *w, const float *b, float *y, int C, int H,
		     int W, int OC, int K, int s, int p, int groups, int OH, int OW)
{
	int Cg = C / groups, OCg = OC / groups;

	for (int oc = 0; oc < OC; oc++)
		for (int oh = 0; oh < OH; oh++)
			for (int ow = 0; ow < OW; ow++) {
				double acc = b ? b[oc] : 0;
				int gi = oc / OCg;

				for (int ic = 0; ic < Cg; ic++)
					for (int kh = 0; kh < K; kh++)
						for (int kw = 0; kw < K; kw++) {
							int ih = oh * s + kh - p, iw = ow * s + kw - p;

							if (ih < 0 || ih >= H || iw < 0 || iw >= W)
								continue;
							acc += (double)x[((gi * Cg + ic) * H + ih) * W + iw] *
							       w[((oc * Cg + ic) * K + kh) * K + kw];
						}
				y[(oc * OH + oh) * OW + ow] = (float)acc;
			}
}

static void conv_case(const char *spec, int C, int H, int OC, int K, int s, int p, int groups)
{
	int OH = (H + 2 * p - K) / s + 1, Cg = C / groups;
	int64_t xd[4] = { 1, C, H, H }, wd[4] = { OC, Cg, K, K }, bd[1] = { OC };
	float *x = malloc(sizeof(float) * (size_t)(C * H * H));
	float *w = malloc(sizeof(float) * (size_t)(OC * Cg * K * K));
	float *b = malloc(sizeof(float) * (size_t)OC);
	float *y = malloc(sizeof(float) * (size_t)(OC * OH * OH));
	float *want = malloc(sizeof(float) * (size_t)(OC * OH * OH));
	float *xs[1] = { x }, *ys[1] = { y };
	npu_ir_graph *g = graph();
	int tx, tw, tb, ty;
	npu_ir_node *n;

	fill(x, C * H * H, 11);
	fill(w, OC * Cg * K * K, 12);
	fill(b, OC, 13);
	tx = tensor(g, "x", 4, xd);
	tw = cst(g, "w", 4, wd, w);
	tb = cst(g, "b", 1, bd, b);
	ty = tensor(g, "y", -1, NULL);
	n = node(g, "Conv", (int[]){ tx, tw, tb }, 3, ty);
	npu_ir_set_attr_ints(n, "kernel_shape", (int64_t[]){ K, K }, 2);
	npu_ir_set_attr_ints(n, "strides", (int64_t[]){ s, s }, 2);
	npu_ir_set_attr_ints(n, "pads", (int64_t[]){ p, p, p, p }, 4);
	npu_ir_set_attr_int(n, "group", groups);
	irb_io(g, &tx, 1, &ty, 1);
	ref_conv(x, w, b, want, C, H, H, OC, K, s, p, groups, OH, OH);
	ck_assert_int_eq(run_graph(g, spec, xs, ys), NPU_OK);
	close_to(y, want, OC * OH * OH, 2e-2f, 6e-2f);
	npu_ir_graph_free(g);
	free(x);
	free(w);
	free(b);
	free(y);
	free(want);
}

START_TEST(conv_variants)
{
	conv_case("emu", 3, 16, 8, 3, 1, 1, 1);		/* plain 3x3 */
	conv_case("emu", 8, 17, 8, 3, 2, 1, 8);		/* depthwise, stride 2 */
	conv_case("emu", 16, 12, 24, 1, 1, 0, 1);	/* pointwise */
	conv_case("emu", 4, 40, 6, 5, 1, 2, 2);		/* grouped 5x5 */
}
END_TEST

/*
 * Conv -> Add(residual) -> Relu becomes one Conv with an epilogue
 * (npu_fuse.c), also when the residual's producer comes after the Conv in
 * node order; the result is still relu(conv(x) + relu(z)).
 */
START_TEST(conv_residual_fused)
{
	enum { C = 6, H = 9, K = 3 };
	int64_t xd[4] = { 1, C, H, H }, wd[4] = { C, C, K, K }, bd[1] = { C };
	float x[C * H * H], z[C * H * H], w[C * C * K * K], b[C], y[C * H * H];
	float want[C * H * H];
	float *xs[2] = { x, z }, *ys[1] = { y };
	npu_ir_graph *g = graph();
	int tx = tensor(g, "x", 4, xd), tz = tensor(g, "z", 4, xd);
	int tw, tb, tc, tr, ts, ty, adds = 0, conv = -1;
	npu_ir_node *n;

	fill(x, C * H * H, 41);
	fill(z, C * H * H, 42);
	fill(w, C * C * K * K, 43);
	fill(b, C, 44);
	tw = cst(g, "w", 4, wd, w);
	tb = cst(g, "b", 1, bd, b);
	tc = tensor(g, "c", -1, NULL);
	tr = tensor(g, "r", -1, NULL);
	ts = tensor(g, "s", -1, NULL);
	ty = tensor(g, "y", -1, NULL);
	n = node(g, "Conv", (int[]){ tx, tw, tb }, 3, tc);
	npu_ir_set_attr_ints(n, "kernel_shape", (int64_t[]){ K, K }, 2);
	npu_ir_set_attr_ints(n, "strides", (int64_t[]){ 1, 1 }, 2);
	npu_ir_set_attr_ints(n, "pads", (int64_t[]){ 1, 1, 1, 1 }, 4);
	node(g, "Relu", &tz, 1, tr);		/* the residual, after the Conv */
	node(g, "Add", (int[]){ tc, tr }, 2, ts);
	node(g, "Relu", &ts, 1, ty);
	irb_io(g, (int[]){ tx, tz }, 2, &ty, 1);
	ref_conv(x, w, b, want, C, H, H, C, K, 1, 1, 1, H, H);
	for (int i = 0; i < C * H * H; i++)
		want[i] = fmaxf(want[i] + fmaxf(z[i], 0.0f), 0.0f);
	ck_assert_int_eq(run_graph(g, "emu", xs, ys), NPU_OK);
	close_to(y, want, C * H * H, 2e-2f, 6e-2f);
	for (int i = 0; i < g->n_nodes; i++) {
		if (g->nodes[i].dead)
			continue;
		adds += !strcmp(g->nodes[i].op, "Add");
		if (!strcmp(g->nodes[i].op, "Conv"))
			conv = i;
	}
	ck_assert_int_eq(adds, 0);
	ck_assert_int_ge(conv, 0);
	ck_assert_int_eq(g->nodes[conv].n_inputs, 4);
	ck_assert_int_eq(g->nodes[conv].outputs[0], ty);
	npu_ir_graph_free(g);
}
END_TEST

/*
 * Depthwise 3x3 -> pointwise 1x1 -> + residual -> Relu runs as one step,
 * the depthwise result kept in HBSM, the residual (the input itself, or
 * with @s = 2 its 2x2 MaxPool, maybe zero-padded by a Concat to @OC
 * channels) rebuilt from the tile's input, and gives the reference result.
 */
static void pair_case(int OC, int s)
{
	enum { C = 8, H = 10 };
	const int O = H / s;
	int64_t xd[4] = { 1, C, H, H }, wd[4] = { C, 1, 3, 3 }, vd[4] = { OC, C, 1, 1 };
	int64_t bd[1] = { C }, cd[1] = { OC }, zd[4] = { 1, OC - C, O, O };
	float x[C * H * H], w[C * 9], b[C], *v = malloc(sizeof(float) * (size_t)(OC * C));
	float *c = malloc(sizeof(float) * (size_t)OC), *z = calloc((size_t)(OC * H * H), 4);
	float *y = malloc(sizeof(float) * (size_t)(OC * H * H)), mid[C * H * H];
	float *want = malloc(sizeof(float) * (size_t)(OC * H * H)), res[C * H * H];
	float *xs[1] = { x }, *ys[1] = { y };
	struct npu_compile_target tgt = { .clusters = 2, .tpbs = 4, .hbsm_size = 1 << 20 };
	struct npu_cmodel *cm;
	npu_ir_graph *g;
	int tx, tm, ts, tr, tp, tq, ty;
	npu_ir_node *n;

	fill(x, C * H * H, 61);
	fill(w, C * 9, 62);
	fill(b, C, 63);
	fill(v, OC * C, 64);
	fill(c, OC, 65);
	for (int pass = 0; pass < 2; pass++) {
		g = graph();
		tx = tensor(g, "x", 4, xd);
		tm = tensor(g, "m", -1, NULL);
		ts = tensor(g, "s", -1, NULL);
		tr = tensor(g, "r", -1, NULL);
		ty = tensor(g, "y", -1, NULL);
		n = node(g, "Conv", (int[]){ tx, cst(g, "w", 4, wd, w), cst(g, "b", 1, bd, b) }, 3,
			 tm);
		npu_ir_set_attr_ints(n, "kernel_shape", (int64_t[]){ 3, 3 }, 2);
		npu_ir_set_attr_ints(n, "strides", (int64_t[]){ s, s }, 2);
		npu_ir_set_attr_ints(n, "pads", s == 1 ? (int64_t[]){ 1, 1, 1, 1 } :
				     (int64_t[]){ 0, 0, 1, 1 }, 4);
		npu_ir_set_attr_int(n, "group", C);
		n = node(g, "Conv", (int[]){ tm, cst(g, "v", 4, vd, v), cst(g, "c", 1, cd, c) }, 3,
			 ts);
		npu_ir_set_attr_ints(n, "kernel_shape", (int64_t[]){ 1, 1 }, 2);
		npu_ir_set_attr_ints(n, "strides", (int64_t[]){ 1, 1 }, 2);
		npu_ir_set_attr_ints(n, "pads", (int64_t[]){ 0, 0, 0, 0 }, 4);
		tq = tp = tx;
		if (s > 1) {
			tq = tp = tensor(g, "q", -1, NULL);
			n = node(g, "MaxPool", &tx, 1, tq);
			npu_ir_set_attr_ints(n, "kernel_shape", (int64_t[]){ 2, 2 }, 2);
			npu_ir_set_attr_ints(n, "strides", (int64_t[]){ 2, 2 }, 2);
			npu_ir_set_attr_ints(n, "pads", (int64_t[]){ 0, 0, 0, 0 }, 4);
		}
		if (OC > C) {
			tp = tensor(g, "p", -1, NULL);
			n = node(g, "Concat", (int[]){ tq, cst(g, "z", 4, zd, z) }, 2, tp);
			npu_ir_set_attr_int(n, "axis", 1);
		}
		node(g, "Add", (int[]){ ts, tp }, 2, tr);
		node(g, "Relu", &tr, 1, ty);
		irb_io(g, &tx, 1, &ty, 1);
		if (pass == 0) {
			ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
			ck_assert_int_eq(npu_compile_ir(g, &tgt, &cm), NPU_OK);
			ck_assert_uint_eq(cm->nsteps, 1);
			npu_cmodel_free(cm);
		} else {
			ck_assert_int_eq(run_graph(g, "emu", xs, ys), NPU_OK);
		}
		npu_ir_graph_free(g);
	}
	if (s == 1) {
		ref_conv(x, w, b, mid, C, H, H, C, 3, 1, 1, C, H, H);
		memcpy(res, x, sizeof(x));
	} else {
		/* Pads 0 top/left, 1 bottom/right: pad the input by hand. */
		enum { P = H + 1 };
		float xp[C * P * P];

		for (int ch = 0; ch < C; ch++)
			for (int i = 0; i < P; i++)
				for (int j = 0; j < P; j++)
					xp[(ch * P + i) * P + j] = i < H && j < H ?
						x[(ch * H + i) * H + j] : 0.0f;
		ref_conv(xp, w, b, mid, C, P, P, C, 3, 2, 0, C, O, O);
		for (int ch = 0; ch < C; ch++)
			for (int i = 0; i < O; i++)
				for (int j = 0; j < O; j++) {
					const float *q = &x[(ch * H + 2 * i) * H + 2 * j];

					res[(ch * O + i) * O + j] = fmaxf(fmaxf(q[0], q[1]),
									  fmaxf(q[H], q[H + 1]));
				}
	}
	ref_conv(mid, v, c, want, C, O, O, OC, 1, 1, 0, 1, O, O);
	for (int i = 0; i < OC * O * O; i++)
		want[i] = fmaxf(want[i] + (i < C * O * O ? res[i] : 0.0f), 0.0f);
	close_to(y, want, OC * O * O, 3e-2f, 8e-2f);
	free(v);
	free(c);
	free(z);
	free(y);
	free(want);
}

START_TEST(depthwise_pointwise_pair)
{
	pair_case(8, 1);
	pair_case(12, 1);
	pair_case(8, 2);
	pair_case(12, 2);
}
END_TEST

/* Pitched planes: 32 consecutive ones start in 32 different HBSM banks. */
START_TEST(hbsm_pitch_spreads_banks)
{
	static const uint64_t rows[] = { 32, 48, 64, 192, 512, 1024, 4096, 1000 };

	ck_assert_uint_eq(npu_hbsm_pitch(18), 18);	/* shares blocks: dense */
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint32_t p = npu_hbsm_pitch(rows[i]);
		uint32_t used = 0;

		ck_assert_uint_ge(p, rows[i]);
		ck_assert_uint_lt(p, rows[i] + 64);
		for (unsigned k = 0; k < 32; k++)
			used |= 1u << ((k * p >> 5) & 31);
		ck_assert_uint_eq(used, 0xffffffffu);
	}
}
END_TEST

/*
 * A round's identical tile inputs share DMAs: one per set of clusters
 * needing the same TPBs (destinations are cluster x TPB masks).
 */
START_TEST(round_shares_inputs)
{
	struct npu_tile t[6];
	const uint32_t c[6] = { 0, 0, 1, 1, 2, 3 }, tpb[6] = { 0, 1, 0, 1, 0, 2 };
	struct npu_emit e = { 0 };

	memset(t, 0, sizeof(t));
	for (int i = 0; i < 6; i++) {
		t[i].nin = 2;
		npu_twu_flat(&t[i].in[0].walk, NPU_SPACE_DDR, NPU_DT_BF16, 4096, 64);
		npu_twu_flat(&t[i].in[1].walk, NPU_SPACE_DDR, NPU_DT_FP32, 64 * i, 16);
		t[i].in[1].hbsm = 512;
	}
	t[5].in[0].hbsm = 128;		/* elsewhere: not the same input */
	ck_assert_int_eq(npu_emit_round(&e, t, 6, c, tpb), NPU_OK);
	ck_assert_int_eq(e.share[0].role, NPU_SHARE_LEAD);
	ck_assert_uint_eq(e.share[0].cluster_mask, 0x3);
	ck_assert_uint_eq(e.share[0].tpb_mask, 0x3);
	for (int i = 1; i < 4; i++)
		ck_assert_int_eq(e.share[i * NPU_TILE_MAX_IN].role, NPU_SHARE_SHARED);
	ck_assert_int_eq(e.share[4 * NPU_TILE_MAX_IN].role, NPU_SHARE_OWN);
	ck_assert_int_eq(e.share[5 * NPU_TILE_MAX_IN].role, NPU_SHARE_OWN);
	for (int i = 0; i < 6; i++)	/* different bytes: each its own */
		ck_assert_int_eq(e.share[i * NPU_TILE_MAX_IN + 1].role, NPU_SHARE_OWN);
	free(e.share);
}
END_TEST

/* Same conv on every placement of two fused clusters gives the same bytes. */
START_TEST(conv_defect_masks_identical)
{
	conv_case("emu:defect-mask=0x3", 3, 16, 8, 3, 1, 1, 1);
	conv_case("emu:defect-mask=0x2010", 3, 16, 8, 3, 1, 1, 1);
	conv_case("emu:defect-mask=0x0180", 8, 17, 8, 3, 2, 1, 8);
}
END_TEST

START_TEST(pools_and_softmax)
{
	int64_t xd[4] = { 1, 5, 9, 9 };
	float x[405], y[405], want[405];
	float *xs[1] = { x }, *ys[1] = { y };
	npu_ir_graph *g = graph();
	int tx = tensor(g, "x", 4, xd), ty = tensor(g, "y", -1, NULL);
	npu_ir_node *n = node(g, "MaxPool", &tx, 1, ty);

	npu_ir_set_attr_ints(n, "kernel_shape", (int64_t[]){ 3, 3 }, 2);
	npu_ir_set_attr_ints(n, "strides", (int64_t[]){ 2, 2 }, 2);
	npu_ir_set_attr_ints(n, "pads", (int64_t[]){ 1, 1, 1, 1 }, 4);
	irb_io(g, &tx, 1, &ty, 1);
	fill(x, 405, 21);
	for (int c = 0; c < 5; c++)
		for (int oh = 0; oh < 5; oh++)
			for (int ow = 0; ow < 5; ow++) {
				float m = -INFINITY;

				for (int kh = 0; kh < 3; kh++)
					for (int kw = 0; kw < 3; kw++) {
						int ih = oh * 2 + kh - 1, iw = ow * 2 + kw - 1;

						if (ih >= 0 && ih < 9 && iw >= 0 && iw < 9)
							m = fmaxf(m, x[(c * 9 + ih) * 9 + iw]);
					}
				want[(c * 5 + oh) * 5 + ow] = m;
			}
	ck_assert_int_eq(run_graph(g, "emu", xs, ys), NPU_OK);
	close_to(y, want, 125, 0, 0);
	npu_ir_graph_free(g);

	g = graph();
	tx = tensor(g, "x", 4, xd);
	ty = tensor(g, "y", -1, NULL);
	node(g, "Softmax", &tx, 1, ty);
	irb_io(g, &tx, 1, &ty, 1);
	for (int r = 0; r < 45; r++) {
		double s = 0, mx = -1e30;

		for (int i = 0; i < 9; i++)
			mx = fmax(mx, x[r * 9 + i]);
		for (int i = 0; i < 9; i++)
			s += exp(x[r * 9 + i] - mx);
		for (int i = 0; i < 9; i++)
			want[r * 9 + i] = (float)(exp(x[r * 9 + i] - mx) / s);
	}
	ck_assert_int_eq(run_graph(g, "emu", xs, ys), NPU_OK);
	close_to(y, want, 405, 1e-5f, 1e-6f);
	npu_ir_graph_free(g);
}
END_TEST

START_TEST(moves)
{
	int64_t xd[3] = { 2, 3, 4 }, cd[3] = { 2, 2, 4 };
	float x[24], c[16], y[40], want[40];
	float *xs[1] = { x }, *ys[1] = { y };
	npu_ir_graph *g = graph();
	int tx = tensor(g, "x", 3, xd), tc, tt, tcat, ty;
	npu_ir_node *n;

	fill(x, 24, 31);
	fill(c, 16, 32);
	tc = cst(g, "c", 3, cd, c);
	tcat = tensor(g, "cat", -1, NULL);
	tt = tensor(g, "t", -1, NULL);
	ty = tensor(g, "y", -1, NULL);
	n = node(g, "Concat", (int[]){ tx, tc }, 2, tcat);		/* [2,5,4] */
	npu_ir_set_attr_int(n, "axis", 1);
	n = node(g, "Transpose", &tcat, 1, tt);				/* [4,2,5] */
	npu_ir_set_attr_ints(n, "perm", (int64_t[]){ 2, 0, 1 }, 3);
	node(g, "Reshape", (int[]){ tt, icst(g, "shape", 2, (int64_t[]){ 8, 5 }) }, 2, ty);
	irb_io(g, &tx, 1, &ty, 1);
	for (int a = 0; a < 2; a++)
		for (int b = 0; b < 5; b++)
			for (int k = 0; k < 4; k++) {
				float v = b < 3 ? x[(a * 3 + b) * 4 + k] : c[(a * 2 + b - 3) * 4 + k];

				want[(k * 2 + a) * 5 + b] = v;
			}
	ck_assert_int_eq(run_graph(g, "emu", xs, ys), NPU_OK);
	close_to(y, want, 40, 0, 0);
	npu_ir_graph_free(g);
}
END_TEST

/*
 * Concat in place (npu_cc_concat_slices): computed inputs live inside
 * the output, also through a nested Concat and when another node reads
 * the same input; constants are still copied.
 */
START_TEST(concat_in_place)
{
	int64_t xd[4] = { 1, 2, 3, 4 }, cd[4] = { 1, 1, 3, 4 };
	float x[24], c[12], y[84], y2[24], want[84];
	float *xs[1] = { x }, *ys[2] = { y, y2 };
	npu_ir_graph *g = graph();
	int tx = tensor(g, "x", 4, xd), tc, ta, tb, ts, tcat, ty, ty2;
	npu_ir_node *n;

	fill(x, 24, 51);
	fill(c, 12, 52);
	tc = cst(g, "c", 4, cd, c);
	ta = tensor(g, "a", -1, NULL);
	ts = tensor(g, "s", -1, NULL);
	tb = tensor(g, "b", -1, NULL);
	tcat = tensor(g, "cat", -1, NULL);
	ty = tensor(g, "y", -1, NULL);
	ty2 = tensor(g, "y2", -1, NULL);
	node(g, "Relu", &tx, 1, ta);
	node(g, "Sigmoid", &tx, 1, ts);
	n = node(g, "Concat", (int[]){ ta, tc }, 2, tb);		/* [1,3,3,4] */
	npu_ir_set_attr_int(n, "axis", 1);
	n = node(g, "Concat", (int[]){ tb, ts, ta }, 3, tcat);	/* [1,7,3,4] */
	npu_ir_set_attr_int(n, "axis", -3);
	node(g, "Relu", &tcat, 1, ty);
	node(g, "Add", (int[]){ ta, tx }, 2, ty2);
	irb_io(g, &tx, 1, (int[]){ ty, ty2 }, 2);
	for (int i = 0; i < 24; i++) {
		float a = fmaxf(x[i], 0.0f);

		want[i] = a;
		want[36 + i] = 1.0f / (1.0f + expf(-x[i]));
		want[60 + i] = a;
	}
	for (int i = 0; i < 12; i++)
		want[24 + i] = fmaxf(c[i], 0.0f);
	ck_assert_int_eq(run_graph(g, "emu", xs, ys), NPU_OK);
	close_to(y, want, 84, 1e-6f, 1e-6f);
	for (int i = 0; i < 24; i++)
		ck_assert_float_eq(y2[i], fmaxf(x[i], 0.0f) + x[i]);
	npu_ir_graph_free(g);
}
END_TEST

START_TEST(layernorm)
{
	int64_t xd[3] = { 2, 3, 10 }, gd[1] = { 10 };
	float x[60], ga[10], be[10], y[60], want[60];
	float *xs[1] = { x }, *ys[1] = { y };
	npu_ir_graph *g = graph();
	int tx, ty;
	npu_ir_node *n;

	fill(x, 60, 41);
	fill(ga, 10, 42);
	fill(be, 10, 43);
	tx = tensor(g, "x", 3, xd);
	ty = tensor(g, "y", -1, NULL);
	n = node(g, "LayerNormalization", (int[]){ tx, cst(g, "g", 1, gd, ga), cst(g, "b", 1, gd, be) },
		 3, ty);
	npu_ir_set_attr_float(n, "epsilon", 1e-3f);
	irb_io(g, &tx, 1, &ty, 1);
	for (int r = 0; r < 6; r++) {
		double m = 0, v = 0;

		for (int i = 0; i < 10; i++)
			m += x[r * 10 + i] / 10.0;
		for (int i = 0; i < 10; i++)
			v += (x[r * 10 + i] - m) * (x[r * 10 + i] - m) / 10.0;
		for (int i = 0; i < 10; i++)
			want[r * 10 + i] = (float)((x[r * 10 + i] - m) / sqrt(v + 1e-3) * ga[i] + be[i]);
	}
	ck_assert_int_eq(run_graph(g, "emu", xs, ys), NPU_OK);
	close_to(y, want, 60, 1e-4f, 1e-5f);
	npu_ir_graph_free(g);
}
END_TEST

START_TEST(unsupported_op_named)
{
	int64_t d[1] = { 4 };
	npu_ir_graph *g = graph();
	int tx = tensor(g, "x", 1, d), ty = tensor(g, "y", -1, NULL);
	float x[4], y[4];
	float *xs[1] = { x }, *ys[1] = { y };

	node(g, "Unique", &tx, 1, ty);
	irb_io(g, &tx, 1, &ty, 1);
	ck_assert_int_eq(run_graph(g, "emu", xs, ys), NPU_ERR_UNSUPPORTED);
	ck_assert_msg(strstr(npu_last_error(), "'Unique'") && strstr(npu_last_error(), "opset 17"),
		      "%s", npu_last_error());
	npu_ir_graph_free(g);
}
END_TEST

static Suite *compile_suite(void)
{
	Suite *s = suite_create("npu_compile");
	TCase *tc = tcase_create("ops");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, add_broadcast_relu);
	tcase_add_test(tc, unary_functions);
	tcase_add_test(tc, matmul_and_gemm);
	tcase_add_test(tc, conv_variants);
	tcase_add_test(tc, conv_residual_fused);
	tcase_add_test(tc, hbsm_pitch_spreads_banks);
	tcase_add_test(tc, depthwise_pointwise_pair);
	tcase_add_test(tc, round_shares_inputs);
	tcase_add_test(tc, conv_defect_masks_identical);
	tcase_add_test(tc, pools_and_softmax);
	tcase_add_test(tc, moves);
	tcase_add_test(tc, concat_in_place);
	tcase_add_test(tc, layernorm);
	tcase_add_test(tc, unsupported_op_named);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(compile_suite)
