// SPDX-License-Identifier: MIT
/*
 * The graph rewrites before lowering (compile/npu_rewrite.c): each case
 * checks that the operator is gone from the rewritten graph, then compiles
 * and runs it on the emulator against a plain C reference written the
 * direct way (transposed convolution by scattering, interpolation by its
 * formula), not the way the rewrite computes it.  The last cases check the
 * contract around them: a rewrite reports whether it applied, the table
 * keeps its order, and the pass stops at a fixed point.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_ops.h"
#include "compile/npu_rewrite.h"
#include "compile/npu_rewrite_priv.h"
#include "ir_build.h"
#include "npu_test.h"

/* The rewrite cases have one graph input. */
static void io(npu_ir_graph *g, int in, const int *out, int nout)
{
	irb_io(g, &in, 1, out, nout);
}

static bool has_op(const npu_ir_graph *g, const char *op)
{
	for (int i = 0; i < g->n_nodes; i++)
		if (!g->nodes[i].dead && !strcmp(g->nodes[i].op, op))
			return true;
	return false;
}

/*
 * Infer shapes, check that the rewrite removes @gone, compile, run on the
 * emulator with input @x; outputs into @y (sizes from the model).
 */
static npu_status run(npu_ir_graph *g, const char *gone, void *x, void *const *y)
{
	struct npu_cmodel *cm;
	npu_status st;

	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_eq(npu_rewrite(g), NPU_OK);
	if (gone)
		ck_assert_msg(!has_op(g, gone), "%s is still in the graph", gone);
	st = irb_compile(g, "emu", &cm);
	if (st)
		return st;
	st = irb_exec(cm, "emu", (void *[]){ x }, y);
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

/* bf16 products with fp32 accumulation: a few parts in a thousand. */
static void close_to(const float *got, const float *want, int64_t n, float tol)
{
	for (int64_t i = 0; i < n; i++)
		ck_assert_msg(fabsf(got[i] - want[i]) <= tol * (1.0f + fabsf(want[i])),
			      "element %lld: got %g, want %g", (long long)i, got[i], want[i]);
}

/* ---- Resize ---- */

/* Linear, half_pixel, one axis: the ONNX formula with edge clamping. */
static float lerp_at(const float *row, int64_t in, int64_t j, double scale)
{
	double x = (j + 0.5) / scale - 0.5, f;
	int64_t i0, i1;

	if (x < 0)
		x = 0;
	f = floor(x);
	i0 = (int64_t)f;
	i1 = i0 + 1 < in ? i0 + 1 : in - 1;
	return (float)((1 - (x - f)) * row[i0] + (x - f) * row[i1]);
}

START_TEST(resize_linear_half_pixel)
{
	int64_t xd[4] = { 1, 2, 3, 4 }, sd[1] = { 4 };
	float sc[4] = { 1, 1, 2.0f, 1.5f }, x[24], y[2 * 6 * 6], want[2 * 6 * 6], tmp[2 * 3 * 6];
	npu_ir_graph *g = irb_graph(13);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, xd);
	int ts = irb_const(g, "scales", NPU_DTYPE_FLOAT32, 1, sd, sc);
	int ty = irb_tensor(g, "y", 0, -1, NULL);
	void *ys[1] = { y };

	npu_ir_set_attr_string(irb_node(g, "Resize", (int[]){ tx, -1, ts }, 3, &ty, 1), "mode",
			       "linear");
	io(g, tx, &ty, 1);
	fill(x, 24, 7);
	/* W first (4 -> 6), then H (3 -> 6). */
	for (int c = 0; c < 2; c++)
		for (int h = 0; h < 3; h++)
			for (int w = 0; w < 6; w++)
				tmp[(c * 3 + h) * 6 + w] = lerp_at(&x[(c * 3 + h) * 4], 4, w, 1.5);
	for (int c = 0; c < 2; c++)
		for (int w = 0; w < 6; w++) {
			float col[3];

			for (int h = 0; h < 3; h++)
				col[h] = tmp[(c * 3 + h) * 6 + w];
			for (int h = 0; h < 6; h++)
				want[(c * 6 + h) * 6 + w] = lerp_at(col, 3, h, 2.0);
		}
	ck_assert_int_eq(run(g, "Resize", x, ys), NPU_OK);
	close_to(y, want, 72, 1e-2f);
	npu_ir_graph_free(g);
}
END_TEST

/*
 * Nearest upsampling by whole factors (asymmetric + floor, and the default
 * half_pixel + round_prefer_floor at 2x) repeats elements: exact moves, no
 * MatMul, every float32 bit kept.
 */
START_TEST(resize_nearest_exact_copy)
{
	int64_t xd[4] = { 1, 1, 2, 3 }, sd[1] = { 4 };
	float sc[4] = { 1, 1, 3.0f, 2.0f }, x[6], y[36];
	npu_ir_graph *g = irb_graph(13);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, xd);
	int ts = irb_const(g, "scales", NPU_DTYPE_FLOAT32, 1, sd, sc);
	int ty = irb_tensor(g, "y", 0, -1, NULL);
	npu_ir_node *n = irb_node(g, "Resize", (int[]){ tx, -1, ts }, 3, &ty, 1);
	void *ys[1] = { y };

	npu_ir_set_attr_string(n, "coordinate_transformation_mode", "asymmetric");
	npu_ir_set_attr_string(n, "nearest_mode", "floor");
	io(g, tx, &ty, 1);
	fill(x, 6, 91);
	x[0] = 1.0f + 1.0f / 4096;	/* not a bf16 value */
	ck_assert_int_eq(run(g, "Resize", x, ys), NPU_OK);
	ck_assert(!has_op(g, "MatMul"));
	for (int h = 0; h < 6; h++)
		for (int w = 0; w < 6; w++)
			ck_assert_float_eq(y[h * 6 + w], x[(h / 3) * 3 + w / 2]);
	npu_ir_graph_free(g);

	/* Default modes at 2x: the same repeat. */
	{
		float s2[4] = { 1, 1, 2.0f, 2.0f }, z[24];

		g = irb_graph(13);
		tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, xd);
		ts = irb_const(g, "scales", NPU_DTYPE_FLOAT32, 1, sd, s2);
		ty = irb_tensor(g, "y", 0, -1, NULL);
		irb_node(g, "Resize", (int[]){ tx, -1, ts }, 3, &ty, 1);
		io(g, tx, &ty, 1);
		ys[0] = z;
		ck_assert_int_eq(run(g, "Resize", x, ys), NPU_OK);
		ck_assert(!has_op(g, "MatMul"));
		for (int h = 0; h < 4; h++)
			for (int w = 0; w < 6; w++)
				ck_assert_float_eq(z[h * 6 + w], x[(h / 2) * 3 + w / 2]);
		npu_ir_graph_free(g);
	}
}
END_TEST

/* ---- ConvTranspose ---- */

START_TEST(conv_transpose_strided_grouped)
{
	/* Cin 4 in 2 groups, 3 outputs per group; stride 2, dilation (1, 2),
	 * asymmetric pads, output_padding: every attribute the rewrite maps. */
	enum { CI = 4, H = 3, W = 3, G = 2, COG = 3, KH = 3, KW = 2, OH = 7, OW = 7 };
	int64_t xd[4] = { 1, CI, H, W }, wd[4] = { CI, COG, KH, KW }, bd[1] = { G * COG };
	int64_t ks[2] = { KH, KW }, st[2] = { 2, 2 }, dil[2] = { 1, 2 }, pads[4] = { 1, 0, 0, 1 };
	int64_t op[2] = { 1, 1 };
	float x[CI * H * W], w[CI * COG * KH * KW], b[G * COG], y[G * COG * OH * OW];
	float want[G * COG * OH * OW];
	npu_ir_graph *g = irb_graph(11);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, xd);
	int tw = irb_const(g, "w", NPU_DTYPE_FLOAT32, 4, wd, (fill(w, CI * COG * KH * KW, 3), w));
	int tb = irb_const(g, "b", NPU_DTYPE_FLOAT32, 1, bd, (fill(b, G * COG, 5), b));
	int ty = irb_tensor(g, "y", 0, -1, NULL);
	npu_ir_node *n = irb_node(g, "ConvTranspose", (int[]){ tx, tw, tb }, 3, &ty, 1);
	void *ys[1] = { y };

	npu_ir_set_attr_ints(n, "kernel_shape", ks, 2);
	npu_ir_set_attr_ints(n, "strides", st, 2);
	npu_ir_set_attr_ints(n, "dilations", dil, 2);
	npu_ir_set_attr_ints(n, "pads", pads, 4);
	npu_ir_set_attr_ints(n, "output_padding", op, 2);
	npu_ir_set_attr_int(n, "group", G);
	io(g, tx, &ty, 1);
	fill(x, CI * H * W, 11);
	/* Scatter every input through the kernel. */
	for (int o = 0; o < G * COG; o++)
		for (int i = 0; i < OH * OW; i++)
			want[o * OH * OW + i] = b[o];
	for (int ci = 0; ci < CI; ci++)
		for (int h = 0; h < H; h++)
			for (int v = 0; v < W; v++)
				for (int co = 0; co < COG; co++)
					for (int kh = 0; kh < KH; kh++)
						for (int kw = 0; kw < KW; kw++) {
							int oh = h * 2 + kh - 1, ow = v * 2 + kw * 2;
							int o = ci / (CI / G) * COG + co;

							if (oh < 0 || oh >= OH || ow < 0 || ow >= OW)
								continue;
							want[(o * OH + oh) * OW + ow] +=
								x[(ci * H + h) * W + v] *
								w[((ci * COG + co) * KH + kh) * KW + kw];
						}
	ck_assert_int_eq(run(g, "ConvTranspose", x, ys), NPU_OK);
	ck_assert_int_eq(g->tensors[ty].dims[2], OH);
	ck_assert_int_eq(g->tensors[ty].dims[3], OW);
	close_to(y, want, G * COG * OH * OW, 2e-2f);
	npu_ir_graph_free(g);
}
END_TEST

/* 3-D Conv (depth stride, padding and dilation) as one 2-D Conv. */
START_TEST(conv3d_depth_stacked)
{
	enum { C = 2, D = 5, H = 4, W = 4, CO = 3, KD = 3, KH = 2, KW = 2, OD = 3, OH = 4, OW = 3 };
	int64_t xd[5] = { 1, C, D, H, W }, wd[5] = { CO, C, KD, KH, KW };
	int64_t ks[3] = { KD, KH, KW }, st[3] = { 2, 1, 1 }, dil[3] = { 1, 1, 2 };
	int64_t pads[6] = { 1, 0, 1, 1, 1, 0 };
	float x[C * D * H * W], w[CO * C * KD * KH * KW], y[CO * OD * OH * OW];
	float want[CO * OD * OH * OW];
	npu_ir_graph *g = irb_graph(11);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 5, xd);
	int tw = irb_const(g, "w", NPU_DTYPE_FLOAT32, 5, wd, (fill(w, CO * C * KD * KH * KW, 61), w));
	int ty = irb_tensor(g, "y", 0, -1, NULL);
	npu_ir_node *n = irb_node(g, "Conv", (int[]){ tx, tw }, 2, &ty, 1);
	void *ys[1] = { y };

	npu_ir_set_attr_ints(n, "kernel_shape", ks, 3);
	npu_ir_set_attr_ints(n, "strides", st, 3);
	npu_ir_set_attr_ints(n, "dilations", dil, 3);
	npu_ir_set_attr_ints(n, "pads", pads, 6);
	io(g, tx, &ty, 1);
	fill(x, C * D * H * W, 62);
	for (int o = 0; o < CO; o++)
		for (int od = 0; od < OD; od++)
			for (int oh = 0; oh < OH; oh++)
				for (int ow = 0; ow < OW; ow++) {
					double acc = 0;

					for (int c = 0; c < C; c++)
						for (int a = 0; a < KD; a++)
							for (int b = 0; b < KH; b++)
								for (int e = 0; e < KW; e++) {
									int id = od * 2 + a - 1, ih = oh + b;
									int iw = ow + 2 * e - 1;

									if (id < 0 || id >= D || ih >= H ||
									    iw < 0 || iw >= W)
										continue;
									acc += (double)x[((c * D + id) * H + ih) *
											 W + iw] *
									       w[(((o * C + c) * KD + a) * KH + b) *
										 KW + e];
								}
					want[((o * OD + od) * OH + oh) * OW + ow] = (float)acc;
				}
	ck_assert_int_eq(run(g, NULL, x, ys), NPU_OK);
	ck_assert_int_eq(g->tensors[ty].dims[2], OD);
	ck_assert_int_eq(g->tensors[ty].dims[3], OH);
	ck_assert_int_eq(g->tensors[ty].dims[4], OW);
	for (int i = 0; i < g->n_nodes; i++)	/* only 2-D convolutions remain */
		if (!strcmp(g->nodes[i].op, "Conv"))
			ck_assert_int_eq(npu_ir_input(g, &g->nodes[i], 0)->rank, 4);
	close_to(y, want, CO * OD * OH * OW, 2e-2f);
	npu_ir_graph_free(g);
}
END_TEST

/* A computed weight cannot be flipped at compile time: refused by name. */
START_TEST(conv_transpose_computed_weight_refused)
{
	int64_t xd[4] = { 1, 2, 3, 3 }, wd[4] = { 2, 2, 3, 3 }, ks[2] = { 3, 3 };
	npu_ir_graph *g = irb_graph(11);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, xd);
	int tw = irb_tensor(g, "w", NPU_DTYPE_FLOAT32, 4, wd);
	int tn = irb_tensor(g, "wn", 0, -1, NULL), ty = irb_tensor(g, "y", 0, -1, NULL);
	float x[18] = { 0 }, y[2 * 5 * 5];
	void *ys[1] = { y };

	irb_node(g, "Neg", &tw, 1, &tn, 1);
	npu_ir_set_attr_ints(irb_node(g, "ConvTranspose", (int[]){ tx, tn }, 2, &ty, 1),
			     "kernel_shape", ks, 2);
	g->inputs = malloc(2 * sizeof(int));
	g->inputs[0] = tx;
	g->inputs[1] = tw;
	g->n_inputs = 2;
	g->outputs = malloc(sizeof(int));
	g->outputs[0] = ty;
	g->n_outputs = 1;
	ck_assert_int_eq(run(g, NULL, x, ys), NPU_ERR_UNSUPPORTED);
	ck_assert_msg(strstr(npu_last_error(), "'ConvTranspose'"), "%s", npu_last_error());
	npu_ir_graph_free(g);
}
END_TEST

/* ---- Pad ---- */

START_TEST(pad_reflect_edge_wrap_exact)
{
	static const char *const modes[] = { "reflect", "edge", "wrap" };
	int64_t xd[3] = { 2, 3, 4 }, pd[6] = { 0, 2, 1, 1, 1, 3 }, nd[1] = { 6 };
	enum { N0 = 3, N1 = 6, N2 = 8 };

	for (int k = 0; k < 3; k++) {
		float x[24], y[N0 * N1 * N2];
		npu_ir_graph *g = irb_graph(13);
		int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, xd);
		int tp = irb_const(g, "pads", NPU_DTYPE_INT64, 1, nd, pd);
		int ty = irb_tensor(g, "y", 0, -1, NULL);
		void *ys[1] = { y };

		npu_ir_set_attr_string(irb_node(g, "Pad", (int[]){ tx, tp }, 2, &ty, 1), "mode",
				       modes[k]);
		io(g, tx, &ty, 1);
		fill(x, 24, 13 + (unsigned)k);
		ck_assert_int_eq(run(g, "Pad", x, ys), NPU_OK);
		for (int a = 0; a < N0; a++)
			for (int b = 0; b < N1; b++)
				for (int c = 0; c < N2; c++) {
					int s[3] = { a, b - 2, c - 1 }, n[3] = { 2, 3, 4 };

					for (int d = 0; d < 3; d++) {
						int j = s[d];

						if (k == 0)
							j = j < 0 ? -j : j >= n[d] ? 2 * (n[d] - 1) - j : j;
						else if (k == 1)
							j = j < 0 ? 0 : j >= n[d] ? n[d] - 1 : j;
						else
							j = (j % n[d] + n[d]) % n[d];
						s[d] = j;
					}
					ck_assert_float_eq(y[(a * N1 + b) * N2 + c],
							   x[(s[0] * 3 + s[1]) * 4 + s[2]]);
				}
		npu_ir_graph_free(g);
	}
}
END_TEST

/* ---- MatMul, Gemm ---- */

START_TEST(matmul_batched_const_b)
{
	int64_t ad[3] = { 3, 2, 5 }, bd[3] = { 3, 5, 4 };
	float a[30], b[60], y[24], want[24];
	npu_ir_graph *g = irb_graph(13);
	int ta = irb_tensor(g, "a", NPU_DTYPE_FLOAT32, 3, ad);
	int tb = irb_const(g, "b", NPU_DTYPE_FLOAT32, 3, bd, (fill(b, 60, 21), b));
	int ty = irb_tensor(g, "y", 0, -1, NULL);
	void *ys[1] = { y };

	irb_node(g, "MatMul", (int[]){ ta, tb }, 2, &ty, 1);
	io(g, ta, &ty, 1);
	fill(a, 30, 22);
	for (int i = 0; i < 3; i++)
		for (int m = 0; m < 2; m++)
			for (int n = 0; n < 4; n++) {
				double acc = 0;

				for (int k = 0; k < 5; k++)
					acc += (double)a[(i * 2 + m) * 5 + k] * b[(i * 5 + k) * 4 + n];
				want[(i * 2 + m) * 4 + n] = (float)acc;
			}
	ck_assert_int_eq(run(g, NULL, a, ys), NPU_OK);
	close_to(y, want, 24, 2e-2f);
	npu_ir_graph_free(g);
}
END_TEST

START_TEST(gemm_matrix_c)
{
	int64_t ad[2] = { 3, 4 }, bd[2] = { 4, 2 }, cd[2] = { 3, 2 };
	float a[12], b[8], c[6], y[6], want[6];
	npu_ir_graph *g = irb_graph(13);
	int ta = irb_tensor(g, "a", NPU_DTYPE_FLOAT32, 2, ad);
	int tb = irb_const(g, "b", NPU_DTYPE_FLOAT32, 2, bd, (fill(b, 8, 31), b));
	int tc = irb_const(g, "c", NPU_DTYPE_FLOAT32, 2, cd, (fill(c, 6, 32), c));
	int ty = irb_tensor(g, "y", 0, -1, NULL);
	npu_ir_node *n = irb_node(g, "Gemm", (int[]){ ta, tb, tc }, 3, &ty, 1);
	void *ys[1] = { y };

	npu_ir_set_attr_float(n, "alpha", 0.5f);
	npu_ir_set_attr_float(n, "beta", 3.0f);
	io(g, ta, &ty, 1);
	fill(a, 12, 33);
	for (int m = 0; m < 3; m++)
		for (int j = 0; j < 2; j++) {
			double acc = 0;

			for (int k = 0; k < 4; k++)
				acc += (double)a[m * 4 + k] * b[k * 2 + j];
			want[m * 2 + j] = (float)(0.5 * acc + 3.0 * c[m * 2 + j]);
		}
	ck_assert_int_eq(run(g, NULL, a, ys), NPU_OK);
	close_to(y, want, 6, 2e-2f);
	npu_ir_graph_free(g);
}
END_TEST

/* ---- LayerNormalization's statistics ---- */

START_TEST(layernorm_mean_invstddev)
{
	int64_t xd[2] = { 3, 8 }, gd[1] = { 8 };
	float x[24], ga[8], y[24], mean[3], inv[3];
	npu_ir_graph *g = irb_graph(17);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 2, xd);
	int tg = irb_const(g, "gamma", NPU_DTYPE_FLOAT32, 1, gd, (fill(ga, 8, 41), ga));
	int out[3] = { irb_tensor(g, "y", 0, -1, NULL), irb_tensor(g, "mean", 0, -1, NULL),
		       irb_tensor(g, "inv", 0, -1, NULL) };
	void *ys[3] = { y, mean, inv };

	npu_ir_set_attr_float(irb_node(g, "LayerNormalization", (int[]){ tx, tg }, 2, out, 3),
			      "epsilon", 1e-3f);
	io(g, tx, out, 3);
	fill(x, 24, 42);
	ck_assert_int_eq(run(g, NULL, x, ys), NPU_OK);
	for (int r = 0; r < 3; r++) {
		double m = 0, v = 0;

		for (int i = 0; i < 8; i++)
			m += x[r * 8 + i] / 8.0;
		for (int i = 0; i < 8; i++)
			v += (x[r * 8 + i] - m) * (x[r * 8 + i] - m) / 8.0;
		ck_assert_double_eq_tol(mean[r], m, 1e-5);
		ck_assert_double_eq_tol(inv[r], 1.0 / sqrt(v + 1e-3), 1e-4 / sqrt(v + 1e-3));
		for (int i = 0; i < 8; i++)
			ck_assert_double_eq_tol(y[r * 8 + i], (x[r * 8 + i] - m) / sqrt(v + 1e-3) *
						ga[i], 1e-4);
	}
	npu_ir_graph_free(g);
}
END_TEST

/* ---- 8-bit arithmetic wraps like integers ---- */

START_TEST(uint8_arith_wraps)
{
	static const char *const ops[] = { "Add", "Sub", "Mul", "Div" };
	int64_t d[1] = { 8 };
	uint8_t a[8] = { 200, 255, 0, 17, 128, 3, 99, 250 };
	uint8_t b[8] = { 100, 1, 1, 15, 128, 200, 3, 7 };

	for (int k = 0; k < 4; k++) {
		uint8_t y[8];
		npu_ir_graph *g = irb_graph(14);
		int ta = irb_tensor(g, "a", NPU_DTYPE_UINT8, 1, d);
		int tb = irb_const(g, "b", NPU_DTYPE_UINT8, 1, d, b);
		int ty = irb_tensor(g, "y", 0, -1, NULL);
		void *ys[1] = { y };

		irb_node(g, ops[k], (int[]){ ta, tb }, 2, &ty, 1);
		io(g, ta, &ty, 1);
		ck_assert_int_eq(run(g, NULL, a, ys), NPU_OK);
		for (int i = 0; i < 8; i++) {
			uint8_t want = k == 0 ? (uint8_t)(a[i] + b[i]) :
				       k == 1 ? (uint8_t)(a[i] - b[i]) :
				       k == 2 ? (uint8_t)(a[i] * b[i]) : (uint8_t)(a[i] / b[i]);

			ck_assert_msg(y[i] == want, "%s element %d: got %u, want %u", ops[k], i,
				      y[i], want);
		}
		npu_ir_graph_free(g);
	}
}
END_TEST

/* ---- 3-D pooling, reductions over split axes ---- */

START_TEST(pool3d_and_split_reduce)
{
	int64_t xd[5] = { 1, 2, 4, 4, 4 }, ks[3] = { 2, 3, 2 }, st[3] = { 2, 1, 2 };
	float x[128], y[2 * 2 * 2 * 2], want[16], r[2 * 4];
	npu_ir_graph *g = irb_graph(13);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 5, xd);
	int ty = irb_tensor(g, "y", 0, -1, NULL);
	npu_ir_node *n = irb_node(g, "MaxPool", &tx, 1, &ty, 1);
	void *ys[1] = { y };
	int64_t axes[2] = { 0, 2 }, rd[3] = { 2, 3, 4 };

	npu_ir_set_attr_ints(n, "kernel_shape", ks, 3);
	npu_ir_set_attr_ints(n, "strides", st, 3);
	io(g, tx, &ty, 1);
	fill(x, 128, 51);
	for (int c = 0; c < 2; c++)
		for (int od = 0; od < 2; od++)
			for (int oh = 0; oh < 2; oh++)
				for (int ow = 0; ow < 2; ow++) {
					float m = -INFINITY;

					for (int a = 0; a < 2; a++)
						for (int b = 0; b < 3; b++)
							for (int e = 0; e < 2; e++)
								m = fmaxf(m, x[(((c * 4 + od * 2 + a) * 4 +
										 oh + b) * 4) + ow * 2 + e]);
					want[((c * 2 + od) * 2 + oh) * 2 + ow] = m;
				}
	ck_assert_int_eq(run(g, NULL, x, ys), NPU_OK);
	ck_assert_int_eq(g->tensors[ty].rank, 5);
	for (int i = 0; i < g->n_nodes; i++)	/* two 2-D pools now */
		if (!strcmp(g->nodes[i].op, "MaxPool"))
			ck_assert_int_eq(npu_ir_input(g, &g->nodes[i], 0)->rank, 4);
	for (int i = 0; i < 16; i++)
		ck_assert_float_eq(y[i], want[i]);
	npu_ir_graph_free(g);

	/* ReduceMean over axes 0 and 2 of [2, 3, 4], keepdims 0: [3]. */
	g = irb_graph(13);
	tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, rd);
	ty = irb_tensor(g, "y", 0, -1, NULL);
	n = irb_node(g, "ReduceMean", &tx, 1, &ty, 1);
	npu_ir_set_attr_ints(n, "axes", axes, 2);
	npu_ir_set_attr_int(n, "keepdims", 0);
	io(g, tx, &ty, 1);
	ys[0] = r;
	ck_assert_int_eq(run(g, NULL, x, ys), NPU_OK);
	ck_assert_int_eq(g->tensors[ty].rank, 1);
	for (int j = 0; j < 3; j++) {
		double m = 0;

		for (int a = 0; a < 2; a++)
			for (int c = 0; c < 4; c++)
				m += x[(a * 3 + j) * 4 + c] / 8.0;
		ck_assert_double_eq_tol(r[j], m, 1e-5);
	}
	npu_ir_graph_free(g);
}
END_TEST

/* ---- variadic operators, InstanceNormalization ---- */

START_TEST(mean_of_three_broadcast_and_instnorm)
{
	int64_t ad[3] = { 2, 3, 4 }, bd[2] = { 3, 1 }, cd[1] = { 4 };
	float a[24], b[3] = { 1, -2, 0.5f }, c[4] = { 0.25f, 4, -1, 3 }, y[24];
	float sc[2] = { 2.0f, -0.5f }, bi[2] = { 0.1f, 1.0f }, z[24];
	npu_ir_graph *g = irb_graph(13);
	int ta = irb_tensor(g, "a", NPU_DTYPE_FLOAT32, 3, ad);
	int tb = irb_const(g, "b", NPU_DTYPE_FLOAT32, 2, bd, b);
	int tc = irb_const(g, "c", NPU_DTYPE_FLOAT32, 1, cd, c);
	int ty = irb_tensor(g, "y", 0, -1, NULL);
	void *ys[1] = { y };
	int64_t sd[1] = { 2 };

	irb_node(g, "Mean", (int[]){ ta, tb, tc }, 3, &ty, 1);
	io(g, ta, &ty, 1);
	fill(a, 24, 71);
	ck_assert_int_eq(run(g, "Mean", a, ys), NPU_OK);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 3; j++)
			for (int k = 0; k < 4; k++)
				ck_assert_float_eq_tol(y[(i * 3 + j) * 4 + k],
						       (a[(i * 3 + j) * 4 + k] + b[j] + c[k]) / 3.0f,
						       1e-6f);
	npu_ir_graph_free(g);

	/* InstanceNormalization of [1, 2, 3, 4]: per channel over H, W. */
	g = irb_graph(13);
	{
		int64_t xd[4] = { 1, 2, 3, 4 };
		int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, xd);
		int ts = irb_const(g, "scale", NPU_DTYPE_FLOAT32, 1, sd, sc);
		int tbi = irb_const(g, "bias", NPU_DTYPE_FLOAT32, 1, sd, bi);

		ty = irb_tensor(g, "y", 0, -1, NULL);
		irb_node(g, "InstanceNormalization", (int[]){ tx, ts, tbi }, 3, &ty, 1);
		io(g, tx, &ty, 1);
	}
	ys[0] = z;
	ck_assert_int_eq(run(g, "InstanceNormalization", a, ys), NPU_OK);
	for (int ch = 0; ch < 2; ch++) {
		double m = 0, v = 0;

		for (int i = 0; i < 12; i++)
			m += a[ch * 12 + i] / 12.0;
		for (int i = 0; i < 12; i++)
			v += (a[ch * 12 + i] - m) * (a[ch * 12 + i] - m) / 12.0;
		for (int i = 0; i < 12; i++)
			ck_assert_double_eq_tol(z[ch * 12 + i], sc[ch] * (a[ch * 12 + i] - m) /
						sqrt(v + 1e-5) + bi[ch], 1e-4);
	}
	npu_ir_graph_free(g);
}
END_TEST

/* ---- Gather (runs of indices), DepthToSpace: exact moves ---- */

START_TEST(gather_runs_and_depth_to_space_exact)
{
	int64_t xd[2] = { 3, 7 }, id[2] = { 2, 3 }, idx[6] = { 1, 2, 3, -1, 0, 6 };
	float x[21], y[3 * 6];
	npu_ir_graph *g = irb_graph(13);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 2, xd);
	int ti = irb_const(g, "idx", NPU_DTYPE_INT64, 2, id, idx);
	int ty = irb_tensor(g, "y", 0, -1, NULL);
	void *ys[1] = { y };

	npu_ir_set_attr_int(irb_node(g, "Gather", (int[]){ tx, ti }, 2, &ty, 1), "axis", 1);
	io(g, tx, &ty, 1);
	fill(x, 21, 81);
	ck_assert_int_eq(run(g, "Gather", x, ys), NPU_OK);
	ck_assert_int_eq(g->tensors[ty].rank, 3);
	for (int r = 0; r < 3; r++)
		for (int j = 0; j < 6; j++)
			ck_assert_float_eq(y[r * 6 + j], x[r * 7 + (idx[j] < 0 ? idx[j] + 7 : idx[j])]);
	npu_ir_graph_free(g);

	/* DepthToSpace DCR, blocksize 2: [1, 8, 2, 3] -> [1, 2, 4, 6]. */
	{
		int64_t dd[4] = { 1, 8, 2, 3 };
		float a[48], z[48];

		g = irb_graph(13);
		tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, dd);
		ty = irb_tensor(g, "y", 0, -1, NULL);
		npu_ir_set_attr_int(irb_node(g, "DepthToSpace", &tx, 1, &ty, 1), "blocksize", 2);
		io(g, tx, &ty, 1);
		fill(a, 48, 82);
		ys[0] = z;
		ck_assert_int_eq(run(g, "DepthToSpace", a, ys), NPU_OK);
		for (int c = 0; c < 2; c++)
			for (int h = 0; h < 4; h++)
				for (int w = 0; w < 6; w++) {
					int bh = h % 2, bw = w % 2;
					int src = ((bh * 2 + bw) * 2 + c) * 6 + (h / 2) * 3 + w / 2;

					ck_assert_float_eq(z[(c * 4 + h) * 6 + w], a[src]);
				}
		npu_ir_graph_free(g);
	}
}
END_TEST

/* ---- Hardmax: the first maximum wins ties ---- */

START_TEST(hardmax_first_of_ties)
{
	int64_t xd[2] = { 2, 5 }, fd[3] = { 2, 2, 3 };
	float x[10] = { 1, 3, 3, 0, 3, -2, -1, -1, -5, -1 }, y[10];
	float f[12] = { 0, 1, 2, 9, 4, 9, 9, 8, 7, 9, 1, 0 }, z[12];
	float want[10] = { 0, 1, 0, 0, 0, 0, 1, 0, 0, 0 };
	float fwant[12] = { 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0 };
	npu_ir_graph *g = irb_graph(13);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 2, xd);
	int ty = irb_tensor(g, "y", 0, -1, NULL);
	void *ys[1] = { y };

	irb_node(g, "Hardmax", &tx, 1, &ty, 1);
	io(g, tx, &ty, 1);
	ck_assert_int_eq(run(g, "Hardmax", x, ys), NPU_OK);
	for (int i = 0; i < 10; i++)
		ck_assert_float_eq(y[i], want[i]);
	npu_ir_graph_free(g);

	/* Opset 11, axis 1 of [2, 2, 3]: over the 6 values of each batch. */
	g = irb_graph(11);
	tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, fd);
	ty = irb_tensor(g, "y", 0, -1, NULL);
	irb_node(g, "Hardmax", &tx, 1, &ty, 1);
	io(g, tx, &ty, 1);
	ys[0] = z;
	ck_assert_int_eq(run(g, "Hardmax", f, ys), NPU_OK);
	ck_assert_int_eq(g->tensors[ty].rank, 3);
	for (int i = 0; i < 12; i++)
		ck_assert_float_eq(z[i], fwant[i]);
	npu_ir_graph_free(g);
}
END_TEST

/* ---- Mod: integer mod takes the divisor's sign, fmod the dividend's ---- */

START_TEST(mod_int8_and_fmod)
{
	int64_t d[1] = { 6 };
	int8_t a[6] = { -7, 7, -7, 7, 100, -128 }, b[6] = { 3, -3, -3, 3, 7, 5 }, y[6];
	float fa[6] = { -7.5f, 7.5f, -7.5f, 7.5f, 5.0f, -0.25f }, fb[6] = { 2, -2, -2, 2, 2.5f, 1 };
	float fy[6];
	npu_ir_graph *g = irb_graph(13);
	int ta = irb_tensor(g, "a", NPU_DTYPE_INT8, 1, d);
	int tb = irb_const(g, "b", NPU_DTYPE_INT8, 1, d, b);
	int ty = irb_tensor(g, "y", 0, -1, NULL);
	void *ys[1] = { y };

	irb_node(g, "Mod", (int[]){ ta, tb }, 2, &ty, 1);
	io(g, ta, &ty, 1);
	ck_assert_int_eq(run(g, "Mod", a, ys), NPU_OK);
	for (int i = 0; i < 6; i++) {
		int r = a[i] % b[i];

		if (r && (r < 0) != (b[i] < 0))
			r += b[i];
		ck_assert_msg(y[i] == r, "element %d: %d mod %d: got %d, want %d", i, a[i], b[i],
			      y[i], r);
	}
	npu_ir_graph_free(g);

	g = irb_graph(13);
	ta = irb_tensor(g, "a", NPU_DTYPE_FLOAT32, 1, d);
	tb = irb_const(g, "b", NPU_DTYPE_FLOAT32, 1, d, fb);
	ty = irb_tensor(g, "y", 0, -1, NULL);
	npu_ir_set_attr_int(irb_node(g, "Mod", (int[]){ ta, tb }, 2, &ty, 1), "fmod", 1);
	io(g, ta, &ty, 1);
	ys[0] = fy;
	ck_assert_int_eq(run(g, "Mod", fa, ys), NPU_OK);
	for (int i = 0; i < 6; i++)
		ck_assert_float_eq_tol(fy[i], fmodf(fa[i], fb[i]), 1e-6f);
	npu_ir_graph_free(g);
}
END_TEST

/* ---- applied: whether a rewrite changed the graph ---- */

/* The first live node running @op. */
static int node_of(const npu_ir_graph *g, const char *op)
{
	for (int i = 0; i < g->n_nodes; i++)
		if (!g->nodes[i].dead && !strcmp(g->nodes[i].op, op))
			return i;
	ck_abort_msg("no %s in the graph", op);
	return -1;
}

/* @fn on the node running @op of shape-inferred @g must leave it all as it was. */
static void not_applied(npu_ir_graph *g, const char *op, npu_rewrite_fn fn)
{
	int k = node_of(g, op), nn = g->n_nodes, nt = g->n_tensors;
	int ins[8], outs[8], nin = g->nodes[k].n_inputs, nout = g->nodes[k].n_outputs;
	bool applied = true;

	ck_assert_int_le(nin, 8);
	ck_assert_int_le(nout, 8);
	memcpy(ins, g->nodes[k].inputs, (size_t)nin * sizeof(int));
	memcpy(outs, g->nodes[k].outputs, (size_t)nout * sizeof(int));
	ck_assert_int_eq(fn(g, k, &applied), NPU_OK);
	ck_assert_msg(!applied, "%s: reported applied", op);
	ck_assert_int_eq(g->n_nodes, nn);
	ck_assert_int_eq(g->n_tensors, nt);
	ck_assert(!g->nodes[k].dead);
	ck_assert_int_eq(g->nodes[k].n_inputs, nin);
	ck_assert_int_eq(g->nodes[k].n_outputs, nout);
	ck_assert(!memcmp(g->nodes[k].inputs, ins, (size_t)nin * sizeof(int)));
	ck_assert(!memcmp(g->nodes[k].outputs, outs, (size_t)nout * sizeof(int)));
}

START_TEST(rewrite_reports_not_applied)
{
	int64_t xd[4] = { 1, 2, 3, 4 }, sd[1] = { 4 }, pd1[1] = { 8 }, d1[1] = { 4 };
	float ones[4] = { 1, 1, 1, 1 }, ga[4] = { 1, 1, 1, 1 };
	int64_t pads[8] = { 0, 0, 1, 1, 0, 0, 1, 1 };
	npu_ir_graph *g;
	int c;

	/* Pad in constant mode: the lowering's, not the rewrite's. */
	g = irb_graph(13);
	{
		int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, xd);
		int tp = irb_const(g, "pads", NPU_DTYPE_INT64, 1, pd1, pads);
		int ty = irb_tensor(g, "y", 0, -1, NULL);

		irb_node(g, "Pad", (int[]){ tx, tp }, 2, &ty, 1);
		io(g, tx, &ty, 1);
	}
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	not_applied(g, "Pad", npu_rewrite_pad);
	npu_ir_graph_free(g);

	/* float32 Add: not 8-bit; nor float16 for Max. */
	g = irb_graph(14);
	{
		int ta = irb_tensor(g, "a", NPU_DTYPE_FLOAT32, 4, xd);
		int ty = irb_tensor(g, "y", 0, -1, NULL);

		irb_node(g, "Add", (int[]){ ta, ta }, 2, &ty, 1);
		io(g, ta, &ty, 1);
	}
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	not_applied(g, "Add", npu_rewrite_8bit);
	not_applied(g, "Add", npu_rewrite_f16);
	npu_ir_graph_free(g);

	/* Resize by scales of 1: an identity, which the rewrite leaves alone
	 * (after reading every attribute and input). */
	g = irb_graph(13);
	{
		int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, xd);
		int ts = irb_const(g, "scales", NPU_DTYPE_FLOAT32, 1, sd, ones);
		int ty = irb_tensor(g, "y", 0, -1, NULL);

		irb_node(g, "Resize", (int[]){ tx, -1, ts }, 3, &ty, 1);
		io(g, tx, &ty, 1);
	}
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	not_applied(g, "Resize", npu_rewrite_resize);
	npu_ir_graph_free(g);

	/* LayerNormalization without its Mean and InvStdDev outputs. */
	g = irb_graph(17);
	c = irb_const(g, "gamma", NPU_DTYPE_FLOAT32, 1, d1, ga);
	{
		int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, xd);
		int ty = irb_tensor(g, "y", 0, -1, NULL);

		irb_node(g, "LayerNormalization", (int[]){ tx, c }, 2, &ty, 1);
		io(g, tx, &ty, 1);
	}
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	not_applied(g, "LayerNormalization", npu_rewrite_layernorm_stats);
	npu_ir_graph_free(g);
}
END_TEST

START_TEST(rewrite_reports_applied)
{
	int64_t xd[4] = { 1, 1, 2, 3 }, d8[1] = { 8 }, pd1[1] = { 8 }, sd[1] = { 4 }, ed[1] = { 1 };
	int64_t pads[8] = { 0, 0, 1, 1, 0, 0, 1, 1 }, e2[1] = { 2 };
	float sc[4] = { 1, 1, 2, 2 };
	bool applied = false;
	npu_ir_graph *g;
	int k, nn, nt;

	/* In place: 8-bit Add becomes float32 Add between Casts and a
	 * QuantizeLinear; the node stays, and the rewrite then no longer fits. */
	g = irb_graph(14);
	{
		int ta = irb_tensor(g, "a", NPU_DTYPE_INT8, 1, d8);
		int ty = irb_tensor(g, "y", 0, -1, NULL);

		irb_node(g, "Add", (int[]){ ta, ta }, 2, &ty, 1);
		io(g, ta, &ty, 1);
	}
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	k = node_of(g, "Add");
	nn = g->n_nodes;
	ck_assert_int_eq(npu_rewrite_8bit(g, k, &applied), NPU_OK);
	ck_assert(applied);
	ck_assert(!g->nodes[k].dead);
	ck_assert_int_gt(g->n_nodes, nn);
	ck_assert_int_eq(npu_ir_output(g, &g->nodes[k], 0)->dtype, NPU_DTYPE_FLOAT32);
	not_applied(g, "Add", npu_rewrite_8bit);
	npu_ir_graph_free(g);

	/* In place without a new node: Pow's int64 exponent becomes float32. */
	g = irb_graph(13);
	{
		int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, xd);
		int te = irb_const(g, "e", NPU_DTYPE_INT64, 1, ed, e2);
		int ty = irb_tensor(g, "y", 0, -1, NULL);

		irb_node(g, "Pow", (int[]){ tx, te }, 2, &ty, 1);
		io(g, tx, &ty, 1);
	}
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	k = node_of(g, "Pow");
	nn = g->n_nodes;
	nt = g->n_tensors;
	applied = false;
	ck_assert_int_eq(npu_rewrite_pow_int(g, k, &applied), NPU_OK);
	ck_assert(applied);
	ck_assert_int_eq(g->n_nodes, nn);
	ck_assert_int_eq(g->n_tensors, nt + 1);
	ck_assert_int_eq(npu_ir_input(g, &g->nodes[k], 1)->dtype, NPU_DTYPE_FLOAT32);
	not_applied(g, "Pow", npu_rewrite_pow_int);
	npu_ir_graph_free(g);

	/* In place, returning NPU_OK half way: LayerNormalization keeps Y and
	 * hands its Mean output to a new ReduceMean. */
	g = irb_graph(17);
	{
		int64_t gd[1] = { 3 };
		float ga[3] = { 1, 2, 3 };
		int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, xd);
		int tg = irb_const(g, "gamma", NPU_DTYPE_FLOAT32, 1, gd, ga);
		int out[2] = { irb_tensor(g, "y", 0, -1, NULL), irb_tensor(g, "mean", 0, -1, NULL) };

		irb_node(g, "LayerNormalization", (int[]){ tx, tg }, 2, out, 2);
		io(g, tx, out, 2);
	}
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	k = node_of(g, "LayerNormalization");
	applied = false;
	ck_assert_int_eq(npu_rewrite_layernorm_stats(g, k, &applied), NPU_OK);
	ck_assert(applied);
	ck_assert(!g->nodes[k].dead);
	ck_assert_int_eq(g->nodes[k].outputs[1], -1);
	not_applied(g, "LayerNormalization", npu_rewrite_layernorm_stats);
	npu_ir_graph_free(g);

	/* Replacing: Pad in edge mode, Resize by 2: the node dies. */
	g = irb_graph(13);
	{
		int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, xd);
		int tp = irb_const(g, "pads", NPU_DTYPE_INT64, 1, pd1, pads);
		int ty = irb_tensor(g, "y", 0, -1, NULL);

		npu_ir_set_attr_string(irb_node(g, "Pad", (int[]){ tx, tp }, 2, &ty, 1), "mode",
				       "edge");
		io(g, tx, &ty, 1);
	}
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	k = node_of(g, "Pad");
	applied = false;
	ck_assert_int_eq(npu_rewrite_pad(g, k, &applied), NPU_OK);
	ck_assert(applied);
	ck_assert(g->nodes[k].dead);
	npu_ir_graph_free(g);

	g = irb_graph(13);
	{
		int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, xd);
		int ts = irb_const(g, "scales", NPU_DTYPE_FLOAT32, 1, sd, sc);
		int ty = irb_tensor(g, "y", 0, -1, NULL);

		irb_node(g, "Resize", (int[]){ tx, -1, ts }, 3, &ty, 1);
		io(g, tx, &ty, 1);
	}
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	k = node_of(g, "Resize");
	applied = false;
	ck_assert_int_eq(npu_rewrite_resize(g, k, &applied), NPU_OK);
	ck_assert(applied);
	ck_assert(g->nodes[k].dead);
	npu_ir_graph_free(g);
}
END_TEST

/* ---- the table and the driver ---- */

/* The registry's (first) entry for operator @op, NULL if it has none. */
static const struct npu_op *named(const char *op)
{
	size_t n;
	const struct npu_op *t = npu_ops_table(&n);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, op))
			return &t[i];
	return NULL;
}

START_TEST(rewrite_table_order)
{
	/* Every operator with rewrites is found (the rows are sorted) ... */
	static const char *const ops[] = {
		"Add", "AveragePool", "BatchNormalization", "BitShift", "Cast", "CastLike",
		"Clip", "Compress", "Conv", "ConvTranspose", "DepthToSpace", "DequantizeLinear", "Div",
		"Dropout", "DynamicQuantizeLinear", "Expand", "EyeLike", "Gather",
		"GatherElements", "GatherND", "Gemm", "GridSample", "Hardmax",
		"InstanceNormalization", "IsInf", "IsNaN", "LRN",
		"LayerNormalization", "MatMul", "Max", "MaxPool", "Mean",
		"MeanVarianceNormalization", "Min", "Mod", "Mul", "NegativeLogLikelihoodLoss", "OneHot",
		"Pad", "Pow", "QLinearMatMul", "QuantizeLinear", "ReduceMax", "ReduceMean",
		"ReduceMin", "ReduceProd", "ReduceSum", "Resize", "ReverseSequence", "Scatter",
		"ScatterElements", "ScatterND", "SoftmaxCrossEntropyLoss", "SpaceToDepth", "Sub",
		"Sum", "Tile", "Trilu", "Upsample", "Where",
	};
	/* ... and where an operator has several, they keep their order. */
	static const struct {
		const char *op;
		npu_rewrite_fn fns[NPU_REWRITE_FNS_MAX];
	} multi[] = {
		{ "Max", { npu_rewrite_variadic, npu_rewrite_8bit, npu_rewrite_f16,
			  npu_rewrite_minmax_int } },
		{ "Min", { npu_rewrite_variadic, npu_rewrite_8bit, npu_rewrite_f16,
			  npu_rewrite_minmax_int } },
		{ "MaxPool", { npu_rewrite_pool3d, npu_rewrite_8bit, npu_rewrite_maxpool_indices } },
		{ "Mod", { npu_rewrite_8bit, npu_rewrite_f16, npu_rewrite_mod } },
		{ "QuantizeLinear", { npu_rewrite_quant_axis, npu_rewrite_quant_computed } },
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		const struct npu_op *d = named(ops[i]);

		ck_assert_msg(d && d->rewrites[0], "%s: no rewrites", ops[i]);
	}
	for (size_t i = 0; i < sizeof(multi) / sizeof(multi[0]); i++) {
		const struct npu_op *d = named(multi[i].op);

		ck_assert(d);
		for (int j = 0; j < NPU_REWRITE_FNS_MAX; j++)
			ck_assert_msg(d->rewrites[j] == multi[i].fns[j], "%s: rewrite %d",
				      multi[i].op, j);
	}
	ck_assert_ptr_null(named("Relu")->rewrites[0]);
	ck_assert_ptr_null(named("add"));
}
END_TEST

/* Hook: which rewrites fired, in order. */
struct fired {
	int n;
	char what[32][40];
};

static void record(void *arg, const char *op, int fn, const npu_ir_node *n)
{
	struct fired *f = arg;

	ck_assert_ptr_nonnull(n);
	if (f->n < 32)
		snprintf(f->what[f->n], sizeof(f->what[0]), "%s#%d", op, fn);
	f->n++;
}

static char *dump(const npu_ir_graph *g)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	npu_ir_dump(g, f);
	fclose(f);
	return buf;
}

/*
 * In place, then again: 8-bit Mod goes float32 (rewrite 0), the list is
 * tried again on the edited node and npu_rewrite_mod (2) replaces it;
 * 8-bit 3-D MaxPool goes float32 (1), then 2-D (0).
 */
START_TEST(rewrite_in_place_then_again)
{
	int64_t d[1] = { 4 }, xd[5] = { 1, 1, 2, 2, 2 }, ks[3] = { 2, 2, 2 };
	int8_t b[4] = { 3, -3, 5, 7 };
	struct fired f = { 0 };
	npu_ir_graph *g = irb_graph(13);
	int ta = irb_tensor(g, "a", NPU_DTYPE_INT8, 1, d);
	int tb = irb_const(g, "b", NPU_DTYPE_INT8, 1, d, b);
	int ty = irb_tensor(g, "y", 0, -1, NULL);

	irb_node(g, "Mod", (int[]){ ta, tb }, 2, &ty, 1);
	io(g, ta, &ty, 1);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_eq(npu_rewrite_hooked(g, record, &f), NPU_OK);
	ck_assert_int_eq(f.n, 2);
	ck_assert_str_eq(f.what[0], "Mod#0");
	ck_assert_str_eq(f.what[1], "Mod#2");
	ck_assert(!has_op(g, "Mod"));
	npu_ir_graph_free(g);

	g = irb_graph(13);
	ta = irb_tensor(g, "x", NPU_DTYPE_INT8, 5, xd);
	ty = irb_tensor(g, "y", 0, -1, NULL);
	npu_ir_set_attr_ints(irb_node(g, "MaxPool", &ta, 1, &ty, 1), "kernel_shape", ks, 3);
	io(g, ta, &ty, 1);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	f.n = 0;
	ck_assert_int_eq(npu_rewrite_hooked(g, record, &f), NPU_OK);
	ck_assert_int_eq(f.n, 2);
	ck_assert_str_eq(f.what[0], "MaxPool#1");
	ck_assert_str_eq(f.what[1], "MaxPool#0");
	for (int i = 0; i < g->n_nodes; i++)
		if (!strcmp(g->nodes[i].op, "MaxPool"))
			ck_assert_int_eq(npu_ir_input(g, &g->nodes[i], 0)->rank, 4);
	npu_ir_graph_free(g);
}
END_TEST

/*
 * A graph for several rewrites (a replacing one whose output another
 * rewrites, a variadic split whose parts go float32, an in-place one
 * adding only a constant): once rewritten, a second pass changes nothing.
 */
START_TEST(rewrite_fixed_point)
{
	int64_t xd[4] = { 1, 1, 2, 3 }, pd1[1] = { 8 }, sd[1] = { 4 }, ed[1] = { 1 };
	int64_t pads[8] = { 0, 0, 1, 1, 0, 0, 1, 1 }, e2[1] = { 2 };
	float sc[4] = { 1, 1, 2, 2 };
	struct fired f = { 0 };
	npu_ir_graph *g = irb_graph(13);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, xd);
	int tp = irb_const(g, "pads", NPU_DTYPE_INT64, 1, pd1, pads);
	int ts = irb_const(g, "scales", NPU_DTYPE_FLOAT32, 1, sd, sc);
	int te = irb_const(g, "e", NPU_DTYPE_INT64, 1, ed, e2);
	int t[5], nn, nt;
	char *before, *after;

	for (int i = 0; i < 5; i++)
		t[i] = irb_tensor(g, (const char *[]){ "p", "r", "m", "q", "y" }[i], 0, -1, NULL);
	npu_ir_set_attr_string(irb_node(g, "Pad", (int[]){ tx, tp }, 2, &t[0], 1), "mode",
			       "reflect");
	irb_node(g, "Resize", (int[]){ t[0], -1, ts }, 3, &t[1], 1);
	irb_node(g, "Max", (int[]){ t[1], t[1], t[1] }, 3, &t[2], 1);
	irb_node(g, "Pow", (int[]){ t[2], te }, 2, &t[3], 1);
	irb_node(g, "Sum", (int[]){ t[3], t[2], t[1] }, 3, &t[4], 1);
	io(g, tx, &t[4], 1);
	ck_assert_msg(npu_ops_infer_shapes(g) == NPU_OK, "%s", npu_last_error());
	ck_assert_int_eq(npu_rewrite_hooked(g, record, &f), NPU_OK);
	ck_assert_int_eq(f.n, 5);	/* Pad, Resize, Max, Pow, Sum */
	ck_assert(!has_op(g, "Pad") && !has_op(g, "Resize") && !has_op(g, "Sum"));
	nn = g->n_nodes;
	nt = g->n_tensors;
	before = dump(g);

	f.n = 0;
	ck_assert_int_eq(npu_rewrite_hooked(g, record, &f), NPU_OK);
	ck_assert_int_eq(f.n, 0);
	ck_assert_int_eq(g->n_nodes, nn);
	ck_assert_int_eq(g->n_tensors, nt);
	after = dump(g);
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	npu_ir_graph_free(g);
}
END_TEST

/* 8-bit 3-D MaxPool, which the pass now takes in two steps: exact maxima. */
/*
 * Rotary embeddings as torch exports them: x * cos + Concat(Neg(x[.., d/2:]),
 * x[.., :d/2]) * sin.  With constant tables the Neg goes into sin (its first
 * half negated) and the rotate-half is a Concat of two Slices; with the
 * sin table broadcast along d (nothing to negate per half) or computed at
 * run time, the Neg stays.  Either way the result is the direct formula's.
 * The swapped halves become one Slice with step -1.
 */
static void rotary_case(int sin_kind, bool sin_first)
{
	enum { H = 2, S = 4, D = 8, N = H * S * D };
	const int64_t xd[4] = { 1, H, S, D }, td[2] = { S, D }, t1[2] = { S, 1 }, one = 1;
	const int64_t lo0 = 0, half = D / 2, end = D, ax = -1;
	float x[N], cs[S * D], sn[S * D], y[N];
	npu_ir_graph *g = irb_graph(17);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, xd), tsn, tin[2];
	int tc = irb_const(g, "cos", NPU_DTYPE_FLOAT32, 2, td, (fill(cs, S * D, 71), cs));
	int s0 = irb_const(g, "s0", NPU_DTYPE_INT64, 1, &one, &lo0);
	int s1 = irb_const(g, "s1", NPU_DTYPE_INT64, 1, &one, &half);
	int s2 = irb_const(g, "s2", NPU_DTYPE_INT64, 1, &one, &end);
	int sa = irb_const(g, "sa", NPU_DTYPE_INT64, 1, &one, &ax);
	int hi = irb_tensor(g, "hi", 0, -1, NULL), lo = irb_tensor(g, "lo", 0, -1, NULL);
	int ng = irb_tensor(g, "neg", 0, -1, NULL), rot = irb_tensor(g, "rot", 0, -1, NULL);
	int a = irb_tensor(g, "a", 0, -1, NULL), b = irb_tensor(g, "b", 0, -1, NULL);
	int ty = irb_tensor(g, "y", 0, -1, NULL);
	struct npu_cmodel *cm;
	npu_status st;

	fill(x, N, 72);
	fill(sn, S * D, 73);
	if (sin_kind == 0)
		tsn = irb_const(g, "sin", NPU_DTYPE_FLOAT32, 2, td, sn);
	else if (sin_kind == 1)
		tsn = irb_const(g, "sin", NPU_DTYPE_FLOAT32, 2, t1, sn);
	else
		tsn = irb_tensor(g, "sin", NPU_DTYPE_FLOAT32, 2, td);
	irb_node(g, "Slice", (int[]){ tx, s1, s2, sa }, 4, &hi, 1);
	irb_node(g, "Neg", &hi, 1, &ng, 1);
	irb_node(g, "Slice", (int[]){ tx, s0, s1, sa }, 4, &lo, 1);
	npu_ir_set_attr_int(irb_node(g, "Concat", (int[]){ ng, lo }, 2, &rot, 1), "axis", -1);
	irb_node(g, "Mul", (int[]){ tx, tc }, 2, &a, 1);
	irb_node(g, "Mul", sin_first ? (int[]){ tsn, rot } : (int[]){ rot, tsn }, 2, &b, 1);
	irb_node(g, "Add", (int[]){ a, b }, 2, &ty, 1);
	tin[0] = tx;
	tin[1] = tsn;
	irb_io(g, tin, sin_kind == 2 ? 2 : 1, &ty, 1);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_eq(npu_rewrite(g), NPU_OK);
	ck_assert_msg(has_op(g, "Neg") == (sin_kind != 0), "sin kind %d: Neg %s", sin_kind,
		      sin_kind ? "folded" : "left");
	/* Folded, the rotate-half is one reversed Slice between Reshapes. */
	ck_assert_int_eq(has_op(g, "Concat"), sin_kind != 0);
	st = irb_compile(g, "emu", &cm);
	ck_assert_msg(st == NPU_OK, "compile: %s", npu_last_error());
	st = irb_exec(cm, "emu", (void *[]){ x, sn }, (void *[]){ y });
	ck_assert_msg(st == NPU_OK, "run: %s", npu_last_error());
	for (int i = 0; i < N; i++) {
		int j = i % D, s = i / D % S;
		float r = j < D / 2 ? -x[i + D / 2] : x[i - D / 2];
		float sv = sin_kind == 1 ? sn[s] : sn[s * D + j];
		float want = x[i] * cs[s * D + j] + r * sv;

		ck_assert_msg(fabsf(y[i] - want) <= 1e-5f, "sin kind %d, element %d: %g, expected %g",
			      sin_kind, i, y[i], want);
	}
	npu_ir_graph_free(g);
}

/* Concat(x[:, 3:6], x[:, 0:3]) on a middle axis: one reversed Slice, exact. */
START_TEST(swap_halves_one_slice)
{
	const int64_t xd[3] = { 2, 6, 4 }, one = 1, lo0 = 0, h = 3, end = 6, ax = 1;
	float x[48], y[48];
	npu_ir_graph *g = irb_graph(13);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, xd);
	int s0 = irb_const(g, "s0", NPU_DTYPE_INT64, 1, &one, &lo0);
	int s1 = irb_const(g, "s1", NPU_DTYPE_INT64, 1, &one, &h);
	int s2 = irb_const(g, "s2", NPU_DTYPE_INT64, 1, &one, &end);
	int sa = irb_const(g, "sa", NPU_DTYPE_INT64, 1, &one, &ax);
	int hi = irb_tensor(g, "hi", 0, -1, NULL), lo = irb_tensor(g, "lo", 0, -1, NULL);
	int ty = irb_tensor(g, "y", 0, -1, NULL);

	fill(x, 48, 74);
	irb_node(g, "Slice", (int[]){ tx, s1, s2, sa }, 4, &hi, 1);
	irb_node(g, "Slice", (int[]){ tx, s0, s1, sa }, 4, &lo, 1);
	npu_ir_set_attr_int(irb_node(g, "Concat", (int[]){ hi, lo }, 2, &ty, 1), "axis", 1);
	io(g, tx, &ty, 1);
	ck_assert_int_eq(run(g, "Concat", x, (void *[]){ y }), NPU_OK);
	for (int i = 0; i < 48; i++) {
		int j = i / 4 % 6;

		ck_assert_msg(y[i] == x[i + (j < 3 ? 12 : -12)], "element %d: %g", i, y[i]);
	}
	npu_ir_graph_free(g);
}
END_TEST

START_TEST(rotary_neg_folded_into_sin)
{
	rotary_case(0, false);
	rotary_case(0, true);
	rotary_case(1, false);
	rotary_case(2, false);
}
END_TEST

/*
 * Where with a constant condition (a causal mask): the scores where it
 * holds, the constant fill (or the other operand) elsewhere, exactly.
 */
START_TEST(where_constant_condition)
{
	enum { S = 6 };
	uint8_t causal[S * S];
	float x[2 * S * S], y[2 * S * S], lowest = -3.4028235e38f, other[S];

	for (int i = 0; i < S; i++)
		for (int j = 0; j < S; j++)
			causal[i * S + j] = j <= i;
	fill(x, 2 * S * S, 9);
	fill(other, S, 10);
	for (int pass = 0; pass < 2; pass++) {
		npu_ir_graph *g = irb_graph(14);
		int xi = irb_tensor(g, "scores", NPU_DTYPE_FLOAT32, 3, (int64_t[]){ 2, S, S });
		int ci = irb_const(g, "causal", NPU_DTYPE_BOOL, 2, (int64_t[]){ S, S }, causal);
		int fi = pass ? irb_const(g, "other", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ S }, other) :
			 irb_const(g, "fill", NPU_DTYPE_FLOAT32, 0, NULL, &lowest);
		int yi = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);

		/* pass 1: the constant is the selected operand, the scores the other */
		irb_node(g, "Where", pass ? (int[]){ ci, fi, xi } : (int[]){ ci, xi, fi }, 3, &yi, 1);
		io(g, xi, &yi, 1);
		ck_assert_int_eq(run(g, "Where", x, (void *[]){ y }), NPU_OK);
		for (int b = 0; b < 2; b++)
			for (int i = 0; i < S; i++)
				for (int j = 0; j < S; j++) {
					int e = (b * S + i) * S + j;
					float want = pass ? (j <= i ? other[j] : x[e]) :
						     (j <= i ? x[e] : lowest);

					ck_assert_msg(y[e] == want, "pass %d (%d, %d, %d): %g, expected %g",
						      pass, b, i, j, y[e], want);
				}
		npu_ir_graph_free(g);
	}
}
END_TEST

/*
 * A constant condition that is all true (all false) selects one operand
 * whole: no Where, Mul or Add left; the readers read the operand (a decode
 * step's causal row).  Of another shape (a broadcast) it stays a Where.
 */
START_TEST(where_uniform_condition)
{
	enum { S = 5 };
	uint8_t all[S];
	float x[2 * S], y[2 * S], lowest = -3.4028235e38f;

	fill(x, 2 * S, 11);
	for (int pass = 0; pass < 3; pass++) {
		npu_ir_graph *g = irb_graph(14);
		int xi = irb_tensor(g, "scores", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ 2, S });
		int ci, fi = irb_const(g, "fill", NPU_DTYPE_FLOAT32, 0, NULL, &lowest);
		int wi = irb_tensor(g, "w", NPU_DTYPE_FLOAT32, -1, NULL);
		int yi = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);

		/* pass 0: all true; 1: all false, fill the first operand; 2: one false */
		memset(all, pass != 1, sizeof(all));
		all[S - 1] = pass != 2 ? all[0] : 0;
		ci = irb_const(g, "c", NPU_DTYPE_BOOL, 1, (int64_t[]){ S }, all);
		irb_node(g, "Where", pass == 1 ? (int[]){ ci, fi, xi } : (int[]){ ci, xi, fi }, 3,
			 &wi, 1);
		irb_node(g, "Add", (int[]){ wi, xi }, 2, &yi, 1);
		io(g, xi, &yi, 1);
		ck_assert_int_eq(run(g, pass < 2 ? "Where" : NULL, x, (void *[]){ y }), NPU_OK);
		ck_assert_int_eq(has_op(g, "Mul"), pass == 2);
		for (int e = 0; e < 2 * S; e++) {
			float want = pass < 2 || e % S != S - 1 ? 2 * x[e] : lowest + x[e];

			ck_assert_msg(y[e] == want, "pass %d element %d: %g, expected %g", pass, e,
				      y[e], want);
		}
		npu_ir_graph_free(g);
	}
}
END_TEST

START_TEST(maxpool3d_int8)
{
	int64_t xd[5] = { 1, 2, 4, 4, 4 }, ks[3] = { 2, 2, 2 }, st[3] = { 2, 2, 2 };
	int8_t x[128], y[16];
	npu_ir_graph *g = irb_graph(13);
	int tx = irb_tensor(g, "x", NPU_DTYPE_INT8, 5, xd);
	int ty = irb_tensor(g, "y", 0, -1, NULL);
	npu_ir_node *n = irb_node(g, "MaxPool", &tx, 1, &ty, 1);
	void *ys[1] = { y };

	npu_ir_set_attr_ints(n, "kernel_shape", ks, 3);
	npu_ir_set_attr_ints(n, "strides", st, 3);
	io(g, tx, &ty, 1);
	for (int i = 0; i < 128; i++)
		x[i] = (int8_t)((i * 37 + 11) % 256 - 128);
	ck_assert_int_eq(run(g, NULL, x, ys), NPU_OK);
	for (int c = 0; c < 2; c++)
		for (int o = 0; o < 8; o++) {
			int od = o / 4, oh = o / 2 % 2, ow = o % 2, m = -128;

			for (int a = 0; a < 8; a++) {
				int v = x[((c * 4 + od * 2 + a / 4) * 4 + oh * 2 + a / 2 % 2) * 4 +
					  ow * 2 + a % 2];

				m = v > m ? v : m;
			}
			ck_assert_int_eq(y[c * 8 + o], m);
		}
	npu_ir_graph_free(g);
}
END_TEST

static Suite *rewrite_suite(void)
{
	Suite *s = suite_create("npu_rewrite");
	TCase *tc = tcase_create("rewrite");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, resize_linear_half_pixel);
	tcase_add_test(tc, resize_nearest_exact_copy);
	tcase_add_test(tc, conv_transpose_strided_grouped);
	tcase_add_test(tc, conv3d_depth_stacked);
	tcase_add_test(tc, conv_transpose_computed_weight_refused);
	tcase_add_test(tc, pad_reflect_edge_wrap_exact);
	tcase_add_test(tc, matmul_batched_const_b);
	tcase_add_test(tc, gemm_matrix_c);
	tcase_add_test(tc, layernorm_mean_invstddev);
	tcase_add_test(tc, uint8_arith_wraps);
	tcase_add_test(tc, pool3d_and_split_reduce);
	tcase_add_test(tc, mean_of_three_broadcast_and_instnorm);
	tcase_add_test(tc, gather_runs_and_depth_to_space_exact);
	tcase_add_test(tc, hardmax_first_of_ties);
	tcase_add_test(tc, mod_int8_and_fmod);
	tcase_add_test(tc, rewrite_reports_not_applied);
	tcase_add_test(tc, rewrite_reports_applied);
	tcase_add_test(tc, rewrite_table_order);
	tcase_add_test(tc, rewrite_in_place_then_again);
	tcase_add_test(tc, rewrite_fixed_point);
	tcase_add_test(tc, maxpool3d_int8);
	tcase_add_test(tc, where_constant_condition);
	tcase_add_test(tc, where_uniform_condition);
	tcase_add_test(tc, rotary_neg_folded_into_sin);
	tcase_add_test(tc, swap_halves_one_slice);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(rewrite_suite)
