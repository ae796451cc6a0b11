// SPDX-License-Identifier: MIT
/*
 * Convs whose stride exceeds the TCU's 64 (rewrite_conv_fold.c: samples
 * folded into channels) against a direct C convolution: 1-D speech hops
 * (stride 160 / kernel 400, stride 100 / kernel 256 with padding), a
 * depthwise one, a stride no kernel shares a factor with, 2-D ones along
 * one and both axes, and the refusal of a dilated one.  Also the Clip
 * with a bound computed at run time the same model (openWakeWord's
 * melspectrogram) needs.
 *
 * The TCU multiplies bf16 operands with fp32 sums, so the reference is
 * the same sum over bf16-rounded input and weights, in double: what is
 * left is the order of the fp32 sums (errors near 1e-6 of the terms'
 * magnitude), not the rounding, so a wrong fold (a tap or channel off by
 * one) cannot hide in the tolerance.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_ops.h"
#include "compile/npu_rewrite.h"
#include "ir_build.h"
#include "npu_test.h"

struct conv {
	int sp;				/* 1 or 2 spatial axes */
	int64_t n, c, m, group;
	int64_t in[2], k[2], s[2], d[2], p[4];	/* p: begins then ends */
};

static int64_t out_len(const struct conv *cv, int a)
{
	return (cv->in[a] + cv->p[a] + cv->p[cv->sp + a] - cv->d[a] * (cv->k[a] - 1) - 1) /
		       cv->s[a] + 1;
}

static void fill(float *v, int64_t n, unsigned seed)
{
	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
	}
}

static double bf16(float v)
{
	return npu_ir_bf16_to_f32(npu_ir_f32_to_bf16(v));
}

/* Output (b, o, oh, ow) by its definition over bf16 operands; *@mag = sum of |terms|. */
static double conv_ref(const struct conv *cv, const float *x, const float *w, int64_t b,
		       int64_t o, int64_t oh, int64_t ow, double *mag)
{
	int64_t H = cv->sp == 2 ? cv->in[0] : 1, W = cv->in[cv->sp - 1];
	int64_t KH = cv->sp == 2 ? cv->k[0] : 1, KW = cv->k[cv->sp - 1];
	int64_t sh = cv->sp == 2 ? cv->s[0] : 1, sw = cv->s[cv->sp - 1];
	int64_t dh = cv->sp == 2 ? cv->d[0] : 1, dw = cv->d[cv->sp - 1];
	int64_t pt = cv->sp == 2 ? cv->p[0] : 0, pl = cv->p[cv->sp - 1];
	int64_t cg = cv->c / cv->group, gi = o / (cv->m / cv->group);
	double sum = 0;

	*mag = 0;
	for (int64_t c = 0; c < cg; c++)
		for (int64_t i = 0; i < KH; i++)
			for (int64_t j = 0; j < KW; j++) {
				int64_t h = oh * sh - pt + i * dh, v = ow * sw - pl + j * dw;
				double t;

				if (h < 0 || h >= H || v < 0 || v >= W)
					continue;
				t = bf16(x[((b * cv->c + gi * cg + c) * H + h) * W + v]) *
				    bf16(w[((o * cg + c) * KH + i) * KW + j]);
				sum += t;
				*mag += fabs(t);
			}
	return sum;
}

/* Build Conv @cv over x [n, c, in..] with random weights, rewrite, compile, run. */
static npu_status conv_build(const struct conv *cv, npu_ir_graph **gp, float **xp, float **wp,
			     int64_t *ylen)
{
	npu_ir_graph *g = irb_graph(13);
	int64_t xd[4] = { cv->n, cv->c }, wd[4] = { cv->m, cv->c / cv->group };
	int64_t xn = cv->n * cv->c, wn = cv->m * wd[1], yn = cv->n * cv->m;
	int tx, tw, ty;
	npu_ir_node *node;
	float *x, *w;

	for (int a = 0; a < cv->sp; a++) {
		xd[2 + a] = cv->in[a];
		wd[2 + a] = cv->k[a];
		xn *= cv->in[a];
		wn *= cv->k[a];
		yn *= out_len(cv, a);
	}
	x = malloc((size_t)xn * sizeof(*x));
	w = malloc((size_t)wn * sizeof(*w));
	ck_assert_ptr_nonnull(x);
	ck_assert_ptr_nonnull(w);
	fill(x, xn, 7);
	fill(w, wn, 11);
	tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 2 + cv->sp, xd);
	tw = irb_const(g, "w", NPU_DTYPE_FLOAT32, 2 + cv->sp, wd, w);
	ty = irb_tensor(g, "y", 0, -1, NULL);
	node = irb_node(g, "Conv", (int[]){ tx, tw }, 2, &ty, 1);
	npu_ir_set_attr_ints(node, "kernel_shape", cv->k, cv->sp);
	npu_ir_set_attr_ints(node, "strides", cv->s, cv->sp);
	npu_ir_set_attr_ints(node, "dilations", cv->d, cv->sp);
	npu_ir_set_attr_ints(node, "pads", cv->p, 2 * cv->sp);
	npu_ir_set_attr_int(node, "group", cv->group);
	irb_io(g, &tx, 1, &ty, 1);
	*gp = g;
	*xp = x;
	*wp = w;
	*ylen = yn;
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	return npu_rewrite(g);
}

/* The largest stride of a live Conv in @g. */
static int64_t max_conv_stride(const npu_ir_graph *g)
{
	int64_t best = 0;

	for (int i = 0; i < g->n_nodes; i++) {
		const int64_t *s;
		int ns;

		if (g->nodes[i].dead || strcmp(g->nodes[i].op, "Conv") ||
		    npu_ir_attr_ints(&g->nodes[i], "strides", &s, &ns))
			continue;
		for (int a = 0; a < ns; a++)
			best = s[a] > best ? s[a] : best;
	}
	return best;
}

static void check_conv(const struct conv *cv, const char *what)
{
	npu_ir_graph *g;
	struct npu_cmodel *cm;
	float *x, *w, *y;
	int64_t yn, oh = cv->sp == 2 ? out_len(cv, 0) : 1, ow = out_len(cv, cv->sp - 1);
	double worst = 0;

	ck_assert_int_eq(conv_build(cv, &g, &x, &w, &yn), NPU_OK);
	ck_assert_msg(max_conv_stride(g) <= 64, "%s: a Conv still strides %lld", what,
		      (long long)max_conv_stride(g));
	y = malloc((size_t)yn * sizeof(*y));
	ck_assert_ptr_nonnull(y);
	ck_assert_msg(irb_compile(g, "emu", &cm) == NPU_OK, "%s: %s", what, npu_last_error());
	ck_assert_msg(irb_exec(cm, "emu", (void *[]){ x }, (void *[]){ y }) == NPU_OK, "%s: %s",
		      what, npu_last_error());
	for (int64_t b = 0; b < cv->n; b++)
		for (int64_t o = 0; o < cv->m; o++)
			for (int64_t i = 0; i < oh; i++)
				for (int64_t j = 0; j < ow; j++) {
					double mag, want = conv_ref(cv, x, w, b, o, i, j, &mag);
					double got = y[((b * cv->m + o) * oh + i) * ow + j];
					double e = fabs(got - want) / (mag + 1e-30);

					ck_assert_msg(e < 1e-5,
						      "%s: y[%lld][%lld][%lld][%lld] = %g, want %g (terms %g)",
						      what, (long long)b, (long long)o, (long long)i,
						      (long long)j, got, want, mag);
					worst = fmax(worst, e);
				}
	fprintf(stderr, "%s: %lld outputs, max error %.1e of the terms' magnitude\n", what,
		(long long)yn, worst);
	npu_ir_graph_free(g);
	free(x);
	free(w);
	free(y);
}

/* openWakeWord's STFT Conv: 400-sample frames every 160 (fold 80: stride 2, 5 taps). */
START_TEST(fold_stride160_kernel400)
{
	struct conv cv = { .sp = 1, .n = 1, .c = 1, .m = 8, .group = 1, .in = { 2000 },
			   .k = { 400 }, .s = { 160 }, .d = { 1 } };

	check_conv(&cv, "1-D stride 160 kernel 400");
}
END_TEST

/* Stride 100, kernel 256 (fold 4: stride 25, 64 taps), pads 30 and 50, two channels, batch 2. */
START_TEST(fold_stride100_kernel256_padded)
{
	struct conv cv = { .sp = 1, .n = 2, .c = 2, .m = 4, .group = 1, .in = { 1000 },
			   .k = { 256 }, .s = { 100 }, .d = { 1 }, .p = { 30, 50 } };

	check_conv(&cv, "1-D stride 100 kernel 256 pads 30/50");
}
END_TEST

/* Depthwise-by-two (group 4, 8 outputs): each group folds within itself. */
START_TEST(fold_grouped)
{
	struct conv cv = { .sp = 1, .n = 1, .c = 4, .m = 8, .group = 4, .in = { 1300 },
			   .k = { 400 }, .s = { 160 }, .d = { 1 }, .p = { 7, 0 } };

	check_conv(&cv, "1-D grouped stride 160 kernel 400");
}
END_TEST

/* Stride 67 (prime), kernel 5: fold 67, the kernel zero-extended to one folded tap. */
START_TEST(fold_prime_stride)
{
	struct conv cv = { .sp = 1, .n = 1, .c = 3, .m = 2, .group = 1, .in = { 700 },
			   .k = { 5 }, .s = { 67 }, .d = { 1 }, .p = { 2, 2 } };

	check_conv(&cv, "1-D stride 67 kernel 5");
}
END_TEST

/* 2-D: stride (2, 96), kernel (3, 128), padded both ways: W folds by 32. */
START_TEST(fold_2d_one_axis)
{
	struct conv cv = { .sp = 2, .n = 1, .c = 2, .m = 3, .group = 1, .in = { 6, 700 },
			   .k = { 3, 128 }, .s = { 2, 96 }, .d = { 2, 1 },
			   .p = { 1, 10, 1, 20 } };

	check_conv(&cv, "2-D stride 2x96 kernel 3x128 dilation 2x1");
}
END_TEST

/* 2-D, both strides above 64: H folds by 72, then W by 70. */
START_TEST(fold_2d_both_axes)
{
	struct conv cv = { .sp = 2, .n = 1, .c = 1, .m = 2, .group = 1, .in = { 300, 290 },
			   .k = { 144, 140 }, .s = { 72, 70 }, .d = { 1, 1 },
			   .p = { 0, 3, 0, 0 } };

	check_conv(&cv, "2-D stride 72x70 kernel 144x140");
}
END_TEST

/* A dilation with a stride above 64 along one axis: refused by name, with what to do. */
START_TEST(fold_dilated_refused)
{
	struct conv cv = { .sp = 1, .n = 1, .c = 1, .m = 2, .group = 1, .in = { 1000 },
			   .k = { 4 }, .s = { 100 }, .d = { 2 } };
	npu_ir_graph *g;
	float *x, *w;
	int64_t yn;

	ck_assert_int_eq(conv_build(&cv, &g, &x, &w, &yn), NPU_ERR_UNSUPPORTED);
	ck_assert_msg(strstr(npu_last_error(), "Conv (node") &&
			      strstr(npu_last_error(), "dilation"),
		      "%s", npu_last_error());
	npu_ir_graph_free(g);
	free(x);
	free(w);
}
END_TEST

/* A stride of 64 or less is left as it is (no fold, no new node). */
START_TEST(fold_not_needed)
{
	struct conv cv = { .sp = 1, .n = 1, .c = 1, .m = 2, .group = 1, .in = { 1000 },
			   .k = { 128 }, .s = { 64 }, .d = { 1 } };
	npu_ir_graph *g;
	float *x, *w;
	int64_t yn;
	int live = 0;

	ck_assert_int_eq(conv_build(&cv, &g, &x, &w, &yn), NPU_OK);
	for (int i = 0; i < g->n_nodes; i++)
		live += !g->nodes[i].dead;
	ck_assert_int_eq(live, 1);
	ck_assert_int_eq(max_conv_stride(g), 64);
	npu_ir_graph_free(g);
	free(x);
	free(w);
}
END_TEST

/*
 * openWakeWord's floor: Clip(x, ReduceMax(x) - 80, inf), a bound computed
 * at run time (rewrite_clip.c: Max(x, lo) before the Clip), and Clip with
 * both bounds graph inputs; against the definition.
 */
START_TEST(clip_runtime_bounds)
{
	enum { N = 200 };
	float x[N], lo = -0.25f, hi = 0.5f, y[N], y2[N], peak = -INFINITY, eighty = 1.5f;
	int64_t d[2] = { 4, N / 4 };
	npu_ir_graph *g = irb_graph(13);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 2, d);
	int tl = irb_tensor(g, "lo", NPU_DTYPE_FLOAT32, 0, NULL);
	int th = irb_tensor(g, "hi", NPU_DTYPE_FLOAT32, 0, NULL);
	int te = irb_const(g, "e", NPU_DTYPE_FLOAT32, 0, NULL, &eighty);
	int tm = irb_tensor(g, "m", 0, -1, NULL), tf = irb_tensor(g, "f", 0, -1, NULL);
	int ty = irb_tensor(g, "y", 0, -1, NULL), ty2 = irb_tensor(g, "y2", 0, -1, NULL);
	struct npu_cmodel *cm;
	npu_ir_node *n;

	fill(x, N, 3);
	n = irb_node(g, "ReduceMax", &tx, 1, &tm, 1);
	npu_ir_set_attr_int(n, "keepdims", 0);
	irb_node(g, "Sub", (int[]){ tm, te }, 2, &tf, 1);
	irb_node(g, "Clip", (int[]){ tx, tf }, 2, &ty, 1);
	irb_node(g, "Clip", (int[]){ tx, tl, th }, 3, &ty2, 1);
	irb_io(g, (int[]){ tx, tl, th }, 3, (int[]){ ty, ty2 }, 2);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_eq(npu_rewrite(g), NPU_OK);
	ck_assert_msg(irb_compile(g, "emu", &cm) == NPU_OK, "%s", npu_last_error());
	ck_assert_msg(irb_exec(cm, "emu", (void *[]){ x, &lo, &hi }, (void *[]){ y, y2 }) == NPU_OK,
		      "%s", npu_last_error());
	for (int i = 0; i < N; i++)
		peak = fmaxf(peak, x[i]);
	for (int i = 0; i < N; i++) {
		float want = fmaxf(x[i], peak - eighty), want2 = fminf(fmaxf(x[i], lo), hi);

		ck_assert_msg(fabsf(y[i] - want) <= 1e-2f * fabsf(want) + 1e-6f,
			      "floor [%d]: %g, want %g", i, y[i], want);
		ck_assert_msg(fabsf(y2[i] - want2) <= 1e-2f * fabsf(want2) + 1e-6f,
			      "clip [%d]: %g, want %g", i, y2[i], want2);
	}
	npu_ir_graph_free(g);
}
END_TEST

static Suite *convfold_suite(void)
{
	Suite *s = suite_create("npu_convfold");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, fold_stride160_kernel400);
	tcase_add_test(tc, fold_stride100_kernel256_padded);
	tcase_add_test(tc, fold_grouped);
	tcase_add_test(tc, fold_prime_stride);
	tcase_add_test(tc, fold_2d_one_axis);
	tcase_add_test(tc, fold_2d_both_axes);
	tcase_add_test(tc, fold_dilated_refused);
	tcase_add_test(tc, fold_not_needed);
	tcase_add_test(tc, clip_runtime_bounds);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(convfold_suite)
