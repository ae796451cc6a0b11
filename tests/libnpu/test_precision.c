// SPDX-License-Identifier: MIT
/*
 * Three bf16 products for a Conv (compile/rewrite_precision.c): a log
 * spectrum computed as Silero VAD's front end does (an STFT as a strided
 * Conv with a Hann-windowed cos/sin basis, the magnitude, log(1 + 2^20 |X|))
 * against a double-precision C reference.  With one bf16 product the quiet
 * bins' magnitudes are mostly rounding noise and the log is off by units;
 * the rewrite must bring it within a few hundredths.  NPU_PRECISION_BF16X3
 * does the same to any Conv (a grouped one here); a Conv no Log reads keeps
 * one product at the default precision.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_ops.h"
#include "compile/npu_rewrite.h"
#include "model/npu_cmodel.h"
#include "ir_build.h"
#include "npu_test.h"

enum { WIN = 64, HOP = 16, LEN = 256, FRAMES = (LEN - WIN) / HOP + 1, BINS = WIN / 2 + 1 };

static bool has_op(const npu_ir_graph *g, const char *op)
{
	for (int i = 0; i < g->n_nodes; i++)
		if (!g->nodes[i].dead && !strcmp(g->nodes[i].op, op))
			return true;
	return false;
}

static void lcg_fill(float *v, int n, unsigned seed, float scale)
{
	for (int i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = scale * ((float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f);
	}
}

/* A loud tone between bins, a quiet one and a faint noise floor. */
static void signal(float *x)
{
	lcg_fill(x, LEN, 7, 1e-3f);
	for (int i = 0; i < LEN; i++)
		x[i] += 0.9f * (float)sin(2 * M_PI * 5.3 * i / WIN) +
			0.01f * (float)sin(2 * M_PI * 20.0 * i / WIN);
}

/* The basis [2 BINS][1][WIN]: Hann-windowed cos rows, then -sin rows. */
static void basis(float *w)
{
	for (int k = 0; k < BINS; k++)
		for (int n = 0; n < WIN; n++) {
			double hann = 0.5 - 0.5 * cos(2 * M_PI * n / WIN);
			double a = 2 * M_PI * k * n / WIN;

			w[k * WIN + n] = (float)(hann * cos(a));
			w[(BINS + k) * WIN + n] = (float)(-hann * sin(a));
		}
}

static int ints(npu_ir_graph *g, const char *name, int64_t v)
{
	const int64_t one = 1;

	return irb_const(g, name, NPU_DTYPE_INT64, 1, &one, &v);
}

/*
 * y = log(1 + 2^20 sqrt(re^2 + im^2)), [1, BINS, FRAMES], from x [1, 1, LEN];
 * the magnitude's Mul by itself as torch exports x ** 2 (Pow).
 */
static npu_ir_graph *log_spectrum(int *conv_out)
{
	static float w[2 * BINS * WIN];
	const int64_t xd[3] = { 1, 1, LEN }, wd[3] = { 2 * BINS, 1, WIN }, sd[1] = { 1 };
	const int64_t ks = WIN, st = HOP, pads[2] = { 0, 0 };
	const float two = 2.0f, big = 1048576.0f, one = 1.0f;
	npu_ir_graph *g = irb_graph(13);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, xd), tw, t[9];
	int s0 = ints(g, "s0", 0), s1 = ints(g, "s1", BINS), s2 = ints(g, "s2", 2 * BINS);
	int ax = ints(g, "ax", 1);
	int c2 = irb_const(g, "two", NPU_DTYPE_FLOAT32, 0, sd, &two);
	int cb = irb_const(g, "big", NPU_DTYPE_FLOAT32, 0, sd, &big);
	int c1 = irb_const(g, "one", NPU_DTYPE_FLOAT32, 0, sd, &one);
	npu_ir_node *n;

	basis(w);
	tw = irb_const(g, "basis", NPU_DTYPE_FLOAT32, 3, wd, w);
	for (int i = 0; i < 9; i++)
		t[i] = irb_tensor(g, NULL, 0, -1, NULL);
	n = irb_node(g, "Conv", (int[]){ tx, tw }, 2, &t[0], 1);
	npu_ir_set_attr_ints(n, "kernel_shape", &ks, 1);
	npu_ir_set_attr_ints(n, "strides", &st, 1);
	npu_ir_set_attr_ints(n, "pads", pads, 2);
	irb_node(g, "Slice", (int[]){ t[0], s0, s1, ax }, 4, &t[1], 1);
	irb_node(g, "Slice", (int[]){ t[0], s1, s2, ax }, 4, &t[2], 1);
	irb_node(g, "Pow", (int[]){ t[1], c2 }, 2, &t[3], 1);
	irb_node(g, "Pow", (int[]){ t[2], c2 }, 2, &t[4], 1);
	irb_node(g, "Add", (int[]){ t[3], t[4] }, 2, &t[5], 1);
	irb_node(g, "Sqrt", &t[5], 1, &t[6], 1);
	irb_node(g, "Mul", (int[]){ t[6], cb }, 2, &t[7], 1);
	irb_node(g, "Add", (int[]){ t[7], c1 }, 2, &t[8], 1);
	{
		int ty = irb_tensor(g, "y", 0, -1, NULL);

		irb_node(g, "Log", &t[8], 1, &ty, 1);
		irb_io(g, &tx, 1, &ty, 1);
	}
	*conv_out = t[0];
	return g;
}

static void log_spectrum_ref(const float *x, double *want)
{
	static float w[2 * BINS * WIN];

	basis(w);
	for (int f = 0; f < FRAMES; f++)
		for (int k = 0; k < BINS; k++) {
			double re = 0, im = 0;

			for (int n = 0; n < WIN; n++) {
				re += (double)w[k * WIN + n] * x[f * HOP + n];
				im += (double)w[(BINS + k) * WIN + n] * x[f * HOP + n];
			}
			want[k * FRAMES + f] = log(1 + 1048576.0 * sqrt(re * re + im * im));
		}
}

static double max_err(const npu_ir_graph *g, void *x, const double *want, float *y, int n)
{
	struct npu_cmodel *cm;
	npu_status st = irb_compile((npu_ir_graph *)g, "emu", &cm);
	double e = 0;

	ck_assert_msg(st == NPU_OK, "compile: %s", npu_last_error());
	st = irb_exec(cm, "emu", (void *[]){ x }, (void *[]){ y });
	ck_assert_msg(st == NPU_OK, "run: %s", npu_last_error());
	for (int i = 0; i < n; i++)
		e = fmax(e, fabs(y[i] - want[i]));
	return e;
}

/* Silero's front end: the Conv that a Log reads through |X| is split. */
START_TEST(stft_log_spectrum_bf16x3)
{
	float x[LEN], y[BINS * FRAMES];
	double want[BINS * FRAMES], lo = 1e9, hi = -1e9, e;
	int conv;
	npu_ir_graph *g = log_spectrum(&conv);

	signal(x);
	log_spectrum_ref(x, want);
	for (int i = 0; i < BINS * FRAMES; i++) {
		lo = fmin(lo, want[i]);
		hi = fmax(hi, want[i]);
	}
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_eq(npu_rewrite(g), NPU_OK);
	/* The split: x - bf16(x) by two Casts, the Conv over three blocks. */
	ck_assert(has_op(g, "Cast") && has_op(g, "Sub") && has_op(g, "Concat"));
	e = max_err(g, x, want, y, BINS * FRAMES);
	/* One bf16 product: off by about 2 (20% of the range) in quiet bins. */
	ck_assert_msg(e <= 0.02 * (hi - lo), "log spectrum off by %g (range %g .. %g)", e, lo, hi);
	npu_ir_graph_free(g);
}
END_TEST

/* Without a Log after it, the same Conv keeps one bf16 product. */
START_TEST(conv_without_log_untouched)
{
	static float w[2 * BINS * WIN];
	const int64_t xd[3] = { 1, 1, LEN }, wd[3] = { 2 * BINS, 1, WIN }, ks = WIN, st = HOP;
	npu_ir_graph *g = irb_graph(13);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, xd), tw;
	int ty = irb_tensor(g, "y", 0, -1, NULL), tr = irb_tensor(g, "r", 0, -1, NULL);
	npu_ir_node *n;

	basis(w);
	tw = irb_const(g, "basis", NPU_DTYPE_FLOAT32, 3, wd, w);
	n = irb_node(g, "Conv", (int[]){ tx, tw }, 2, &tr, 1);
	npu_ir_set_attr_ints(n, "kernel_shape", &ks, 1);
	npu_ir_set_attr_ints(n, "strides", &st, 1);
	irb_node(g, "Sqrt", &tr, 1, &ty, 1);
	irb_io(g, &tx, 1, &ty, 1);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_eq(npu_rewrite(g), NPU_OK);
	ck_assert(!has_op(g, "Cast") && !has_op(g, "Concat"));
	npu_ir_graph_free(g);
}
END_TEST

enum { GC = 4, GG = 2, GM = 6, GH = 5, GW = 5, GK = 3 };

/* Output (@m, @i, @j) of the grouped Conv below, in double. */
static double conv_at(const float *x, const float *w, float b, int m, int i, int j)
{
	double s = b;
	int g0 = m / (GM / GG) * (GC / GG);

	for (int c = 0; c < GC / GG; c++)
		for (int p = 0; p < GK; p++)
			for (int q = 0; q < GK; q++)
				s += (double)w[((m * (GC / GG) + c) * GK + p) * GK + q] *
				     x[((g0 + c) * GH + i + p) * GW + j + q];
	return s;
}

/*
 * NPU_PRECISION_BF16X3 (npu_rewrite_want_bf16x3): a grouped Conv with a
 * bias, x near 1 + small: one bf16 product loses the small part, three keep
 * it (the result within 1e-4 of double, bf16 alone is off by about 1e-2).
 */
START_TEST(grouped_conv_bf16x3_near_fp32)
{
	enum { C = GC, G = GG, M = GM, H = GH, W = GW, K = GK, OH = 3, OW = 3 };
	const int64_t xd[4] = { 1, C, H, W }, wd[4] = { M, C / G, K, K }, bd[1] = { M };
	const int64_t ks[2] = { K, K };
	float x[C * H * W], w[M * (C / G) * K * K], b[M], y[M * OH * OW];
	double want[M * OH * OW], e = 0;
	npu_ir_graph *g = irb_graph(13);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, xd), tw, tb;
	int ty = irb_tensor(g, "y", 0, -1, NULL);
	struct npu_cmodel *cm;
	npu_ir_node *n;

	lcg_fill(x, C * H * W, 3, 0.01f);
	for (int i = 0; i < C * H * W; i++)
		x[i] += 1.0f;
	lcg_fill(w, M * (C / G) * K * K, 5, 1.0f);
	lcg_fill(b, M, 9, 1.0f);
	tw = irb_const(g, "w", NPU_DTYPE_FLOAT32, 4, wd, w);
	tb = irb_const(g, "b", NPU_DTYPE_FLOAT32, 1, bd, b);
	n = irb_node(g, "Conv", (int[]){ tx, tw, tb }, 3, &ty, 1);
	npu_ir_set_attr_ints(n, "kernel_shape", ks, 2);
	npu_ir_set_attr_int(n, "group", G);
	irb_io(g, &tx, 1, &ty, 1);
	for (int o = 0; o < M * OH * OW; o++)
		want[o] = conv_at(x, w, b[o / (OH * OW)], o / (OH * OW), o / OW % OH, o % OW);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_eq(npu_rewrite_want_bf16x3(g), NPU_OK);
	ck_assert_int_eq(npu_rewrite(g), NPU_OK);
	ck_assert(has_op(g, "Cast") && has_op(g, "Concat"));
	ck_assert_int_eq(irb_compile(g, "emu", &cm), NPU_OK);
	ck_assert_msg(irb_exec(cm, "emu", (void *[]){ x }, (void *[]){ y }) == NPU_OK, "run: %s",
		      npu_last_error());
	for (int i = 0; i < M * OH * OW; i++)
		e = fmax(e, fabs(y[i] - want[i]));
	ck_assert_msg(e <= 1e-4, "grouped Conv off by %g", e);
	npu_ir_graph_free(g);
}
END_TEST

/*
 * M-LSD's dilated 3x3 Conv (64 channels, dilation 5, 80 columns): at bf16x3
 * its input has 192 channels, and one output row's 11 input rows no longer
 * fit a tile's half of HBSM.  The lowering refuses it by name at compile
 * time (it used to emit a DMA past HBSM: 'illegal instruction' at run
 * time); the same Conv at one product compiles.
 */
START_TEST(wide_dilated_conv_refused_at_bf16x3)
{
	static float w[64 * 64 * 9];
	const int64_t xd[4] = { 1, 64, 80, 80 }, wd[4] = { 64, 64, 3, 3 }, ks[2] = { 3, 3 };
	const int64_t dil[2] = { 5, 5 }, pads[4] = { 5, 5, 5, 5 };
	struct npu_cmodel *cm;

	for (int x3 = 0; x3 < 2; x3++) {
		npu_ir_graph *g = irb_graph(13);
		int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, xd), tw;
		int ty = irb_tensor(g, "y", 0, -1, NULL);
		npu_ir_node *n;
		npu_status st;

		lcg_fill(w, 64 * 64 * 9, 11, 0.1f);
		tw = irb_const(g, "w", NPU_DTYPE_FLOAT32, 4, wd, w);
		n = irb_node(g, "Conv", (int[]){ tx, tw }, 2, &ty, 1);
		npu_ir_set_attr_ints(n, "kernel_shape", ks, 2);
		npu_ir_set_attr_ints(n, "dilations", dil, 2);
		npu_ir_set_attr_ints(n, "pads", pads, 4);
		irb_io(g, &tx, 1, &ty, 1);
		ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
		if (x3)
			ck_assert_int_eq(npu_rewrite_want_bf16x3(g), NPU_OK);
		st = irb_compile(g, "emu", &cm);
		if (!x3) {
			ck_assert_msg(st == NPU_OK, "one product: %s", npu_last_error());
			npu_cmodel_free(cm);
		} else {
			ck_assert_int_eq(st, NPU_ERR_UNSUPPORTED);
			ck_assert_msg(strstr(npu_last_error(), "(Conv): one output row needs") &&
				      strstr(npu_last_error(), "192 input channels x 11 rows x 80"),
				      "%s", npu_last_error());
		}
		npu_ir_graph_free(g);
	}
}
END_TEST

static Suite *precision_suite(void)
{
	Suite *s = suite_create("precision");
	TCase *tc = tcase_create("bf16x3");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, stft_log_spectrum_bf16x3);
	tcase_add_test(tc, conv_without_log_untouched);
	tcase_add_test(tc, grouped_conv_bf16x3_near_fp32);
	tcase_add_test(tc, wide_dilated_conv_refused_at_bf16x3);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(precision_suite)
