// SPDX-License-Identifier: MIT
/*
 * Post-processing (npu_post.h): softmax, top-k, labels, quantization,
 * SSD anchors, detection decoding and non-maximum suppression.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npu_post.h"
#include "npu_test.h"

#define TOL 1e-6f

/* @call fails with NPU_ERR_INVALID_ARG and a message containing @what. */
#define ck_invalid(call, what)							\
	do {									\
		ck_assert_int_eq((call), NPU_ERR_INVALID_ARG);			\
		ck_assert_msg(strstr(npu_last_error(), (what)) != NULL,		\
			      "error \"%s\" does not mention \"%s\"",		\
			      npu_last_error(), (what));			\
	} while (0)

/* ---- softmax ---- */

START_TEST(softmax_matches_formula)
{
	const float x[2][4] = { { 1.0f, 2.0f, 3.0f, 4.0f }, { -1.5f, 0.0f, 0.25f, -3.0f } };
	float y[2][4];

	ck_assert_int_eq(npu_softmax(&x[0][0], &y[0][0], 2, 4), NPU_OK);
	for (int r = 0; r < 2; r++) {
		double sum = 0, total = 0;

		for (int i = 0; i < 4; i++)
			sum += exp(x[r][i]);
		for (int i = 0; i < 4; i++) {
			ck_assert_float_eq_tol(y[r][i], (float)(exp(x[r][i]) / sum), TOL);
			total += y[r][i];
		}
		ck_assert_double_eq_tol(total, 1.0, 1e-6);
	}
}
END_TEST

START_TEST(softmax_large_logits_in_place)
{
	/* exp(1000) overflows float; softmax(x + c) == softmax(x). */
	float big[3] = { 1000.0f, 1001.0f, 1002.0f }, ref[3] = { 0.0f, 1.0f, 2.0f };
	float neg[3] = { -1000.0f, -1001.0f, -1002.0f };
	float inf[3] = { -INFINITY, -INFINITY, -INFINITY };

	ck_assert_int_eq(npu_softmax(big, big, 1, 3), NPU_OK);	/* in place */
	ck_assert_int_eq(npu_softmax(ref, ref, 1, 3), NPU_OK);
	for (int i = 0; i < 3; i++) {
		ck_assert(isfinite(big[i]));
		ck_assert_float_eq_tol(big[i], ref[i], TOL);
	}
	ck_assert_float_eq_tol(ref[2], (float)(exp(2.0) / (1 + exp(1.0) + exp(2.0))), TOL);
	ck_assert_int_eq(npu_softmax(neg, neg, 1, 3), NPU_OK);
	ck_assert_float_eq_tol(neg[0], ref[2], TOL);
	/* All -inf: treated as equal logits. */
	ck_assert_int_eq(npu_softmax(inf, inf, 1, 3), NPU_OK);
	ck_assert_float_eq_tol(inf[1], 1.0f / 3.0f, TOL);
	/* Empty shapes are fine, even with NULL buffers. */
	ck_assert_int_eq(npu_softmax(NULL, NULL, 0, 5), NPU_OK);
	ck_assert_int_eq(npu_softmax(NULL, NULL, 3, 0), NPU_OK);
}
END_TEST

/* ---- top-k ---- */

START_TEST(top_k_order_ties_nan)
{
	const float s[7] = { 0.1f, 0.5f, 0.3f, 0.5f, 0.9f, NAN, 0.3f };
	const int64_t want[7] = { 4, 1, 3, 2, 6, 0, 5 };
	npu_top_k_entry e[7];
	int64_t n = -1;

	/* Ties (0.5 at 1 and 3, 0.3 at 2 and 6) go to the lower index. */
	ck_assert_int_eq(npu_top_k(s, 7, 4, NULL, e, &n), NPU_OK);
	ck_assert_int_eq(n, 4);
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(e[i].index, want[i]);
		ck_assert_float_eq(e[i].score, s[want[i]]);
		ck_assert_ptr_null(e[i].label);
	}
	/* k > n is clamped; NaN comes last. */
	ck_assert_int_eq(npu_top_k(s, 7, 100, NULL, e, &n), NPU_OK);
	ck_assert_int_eq(n, 7);
	for (int i = 0; i < 7; i++)
		ck_assert_int_eq(e[i].index, want[i]);
	ck_assert(isnan(e[6].score));
	ck_assert_int_eq(npu_top_k(s, 7, 0, NULL, NULL, &n), NPU_OK);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(npu_top_k(NULL, 0, 5, NULL, NULL, &n), NPU_OK);
	ck_assert_int_eq(n, 0);
}
END_TEST

START_TEST(top_k_matches_sort)
{
	enum { N = 1000 };
	static float s[N];
	npu_top_k_entry e[N];
	int64_t n;
	unsigned seed = 12345;

	/* Few distinct values: many ties. */
	for (int i = 0; i < N; i++) {
		seed = seed * 1103515245u + 12345u;
		s[i] = (float)((seed >> 16) % 50) / 7.0f - 3.0f;
	}
	for (int k = 1; k <= N; k += 37) {
		ck_assert_int_eq(npu_top_k(s, N, k, NULL, e, &n), NPU_OK);
		ck_assert_int_eq(n, k);
		for (int i = 1; i < k; i++) {
			ck_assert(e[i - 1].score >= e[i].score);
			if (e[i - 1].score == e[i].score)
				ck_assert_int_lt(e[i - 1].index, e[i].index);
		}
		/* Nothing left out beats the last one taken. */
		for (int j = 0; j < N; j++) {
			bool taken = false;

			for (int i = 0; i < k && !taken; i++)
				taken = e[i].index == j;
			if (!taken)
				ck_assert(s[j] < e[k - 1].score ||
					  (s[j] == e[k - 1].score && j > e[k - 1].index));
		}
	}
}
END_TEST

/* ---- labels ---- */

/* Write @text to a fresh temporary file; its path goes to @path. */
static void write_temp(char *path, size_t size, const char *text, size_t len)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(path, size, "%s/npu-labels-XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
}

START_TEST(labels_load_and_top_k)
{
	/* BOM, a CRLF line, an empty line, a last line without newline. */
	static const char text[] = "\xEF\xBB\xBF" "background\r\ncat\n\ndog";
	const float s[5] = { 0.1f, 0.7f, 0.0f, 0.2f, 0.9f };
	npu_top_k_entry e[3];
	npu_labels *l = NULL;
	char path[512];
	int64_t n;

	write_temp(path, sizeof(path), text, sizeof(text) - 1);
	ck_assert_int_eq(npu_labels_load(path, &l), NPU_OK);
	unlink(path);
	ck_assert_uint_eq(npu_labels_count(l), 4);
	ck_assert_str_eq(npu_labels_get(l, 0), "background");
	ck_assert_str_eq(npu_labels_get(l, 1), "cat");
	ck_assert_str_eq(npu_labels_get(l, 2), "");
	ck_assert_str_eq(npu_labels_get(l, 3), "dog");
	ck_assert_ptr_null(npu_labels_get(l, 4));
	ck_assert_ptr_null(npu_labels_get(NULL, 0));
	ck_assert_uint_eq(npu_labels_count(NULL), 0);

	/* Index 4 has no label. */
	ck_assert_int_eq(npu_top_k(s, 5, 3, l, e, &n), NPU_OK);
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(e[0].index, 4);
	ck_assert_ptr_null(e[0].label);
	ck_assert_int_eq(e[1].index, 1);
	ck_assert_str_eq(e[1].label, "cat");
	ck_assert_int_eq(e[2].index, 3);
	ck_assert_str_eq(e[2].label, "dog");
	npu_labels_free(l);
	npu_labels_free(NULL);

	/* A final newline adds no empty label; an empty file has none. */
	write_temp(path, sizeof(path), "a\nb\n", 4);
	ck_assert_int_eq(npu_labels_load(path, &l), NPU_OK);
	unlink(path);
	ck_assert_uint_eq(npu_labels_count(l), 2);
	ck_assert_str_eq(npu_labels_get(l, 1), "b");
	npu_labels_free(l);
	write_temp(path, sizeof(path), "", 0);
	ck_assert_int_eq(npu_labels_load(path, &l), NPU_OK);
	unlink(path);
	ck_assert_uint_eq(npu_labels_count(l), 0);
	npu_labels_free(l);
}
END_TEST

START_TEST(labels_missing_file)
{
	const char *path = "/nonexistent-npu-dir/imagenet_labels.txt";
	npu_labels *l = (npu_labels *)&l;	/* must be reset to NULL */

	ck_assert_int_eq(npu_labels_load(path, &l), NPU_ERR_IO);
	ck_assert_ptr_null(l);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), path));
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "No such file"));
	ck_invalid(npu_labels_load(NULL, &l), "path");
	ck_invalid(npu_labels_load(path, NULL), "out");
}
END_TEST

/* ---- quantization ---- */

START_TEST(quantize_rounding_saturation)
{
	/* uint8, scale 0.5, zero point 10: q = sat(rne(x / 0.5) + 10). */
	const float x[11] = { 0.0f, 0.25f, 0.75f, 1.25f, -0.25f, -0.75f,
			      1000.0f, -1000.0f, INFINITY, NAN, 0.5f };
	const uint8_t want_u[11] = { 10, 10, 12, 12, 10, 8, 255, 0, 255, 10, 11 };
	/* int8, scale 0.1, zero point -5: 12.7 / 0.1 = 127 + -5 = 122 ... */
	const float y[5] = { 12.7f, 13.3f, 20.0f, -12.3f, -13.0f };
	const int8_t want_i[5] = { 122, 127, 127, -128, -128 };
	uint8_t qu[11];
	int8_t qi[5];

	ck_assert_int_eq(npu_quantize(NPU_DTYPE_UINT8, x, qu, 11, 0.5f, 10), NPU_OK);
	for (int i = 0; i < 11; i++)
		ck_assert_msg(qu[i] == want_u[i], "x[%d] = %g: got %u, want %u", i,
			      (double)x[i], qu[i], want_u[i]);
	ck_assert_int_eq(npu_quantize(NPU_DTYPE_INT8, y, qi, 5, 0.1f, -5), NPU_OK);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(qi[i], want_i[i]);
	ck_assert_int_eq(npu_quantize(NPU_DTYPE_INT8, NULL, NULL, 0, 1.0f, 0), NPU_OK);
}
END_TEST

START_TEST(quantize_round_trip)
{
	uint8_t u[256], u2[256];
	int8_t s[256], s2[256];
	float f[256];

	for (int i = 0; i < 256; i++) {
		u[i] = (uint8_t)i;
		s[i] = (int8_t)(i - 128);
	}
	ck_assert_int_eq(npu_dequantize(NPU_DTYPE_UINT8, u, f, 256, 0.5f, 10), NPU_OK);
	ck_assert_float_eq(f[0], -5.0f);
	ck_assert_float_eq(f[10], 0.0f);
	ck_assert_float_eq(f[255], 122.5f);
	ck_assert_int_eq(npu_quantize(NPU_DTYPE_UINT8, f, u2, 256, 0.5f, 10), NPU_OK);
	ck_assert_mem_eq(u, u2, 256);

	ck_assert_int_eq(npu_dequantize(NPU_DTYPE_INT8, s, f, 256, 0.0078125f, -3), NPU_OK);
	ck_assert_float_eq(f[0], -125.0f * 0.0078125f);	/* q = -128 */
	ck_assert_float_eq(f[255], 130.0f * 0.0078125f);	/* q = 127 */
	ck_assert_int_eq(npu_quantize(NPU_DTYPE_INT8, f, s2, 256, 0.0078125f, -3), NPU_OK);
	ck_assert_mem_eq(s, s2, 256);

	/* An awkward scale still round-trips every code. */
	ck_assert_int_eq(npu_dequantize(NPU_DTYPE_INT8, s, f, 256, 0.0371f, 17), NPU_OK);
	ck_assert_int_eq(npu_quantize(NPU_DTYPE_INT8, f, s2, 256, 0.0371f, 17), NPU_OK);
	ck_assert_mem_eq(s, s2, 256);
}
END_TEST

/* ---- anchors ---- */

START_TEST(anchors_blazeface_front)
{
	npu_anchor_options o;
	npu_anchor *a = calloc(1000, sizeof(*a));
	size_t n = 0;

	npu_anchor_options_blazeface_front(&o);
	ck_assert_int_eq(npu_anchors_generate(&o, NULL, 0, &n), NPU_OK);
	ck_assert_uint_eq(n, 896);	/* 16*16*2 + 8*8*6 */
	ck_assert_int_eq(npu_anchors_generate(&o, a, 1000, &n), NPU_OK);
	ck_assert_uint_eq(n, 896);

	/* Stride 8: a 16x16 map, 2 anchors per cell, centers (c + 0.5) / 16. */
	ck_assert_float_eq_tol(a[0].x_center, 0.03125f, TOL);
	ck_assert_float_eq_tol(a[0].y_center, 0.03125f, TOL);
	ck_assert_float_eq_tol(a[1].x_center, 0.03125f, TOL);
	ck_assert_float_eq_tol(a[2].x_center, 0.09375f, TOL);	/* 1.5 / 16 */
	ck_assert_float_eq_tol(a[2].y_center, 0.03125f, TOL);
	ck_assert_float_eq_tol(a[32].x_center, 0.03125f, TOL);	/* next row */
	ck_assert_float_eq_tol(a[32].y_center, 0.09375f, TOL);
	ck_assert_float_eq_tol(a[511].x_center, 0.96875f, TOL);	/* 15.5 / 16 */
	ck_assert_float_eq_tol(a[511].y_center, 0.96875f, TOL);
	/* Strides 16 x3: one 8x8 map, 6 anchors per cell, (c + 0.5) / 8. */
	for (int i = 512; i < 518; i++) {
		ck_assert_float_eq_tol(a[i].x_center, 0.0625f, TOL);
		ck_assert_float_eq_tol(a[i].y_center, 0.0625f, TOL);
	}
	ck_assert_float_eq_tol(a[518].x_center, 0.1875f, TOL);
	ck_assert_float_eq_tol(a[895].x_center, 0.9375f, TOL);
	ck_assert_float_eq_tol(a[895].y_center, 0.9375f, TOL);
	for (int i = 0; i < 896; i++) {
		ck_assert_float_eq(a[i].w, 1.0f);
		ck_assert_float_eq(a[i].h, 1.0f);
	}

	/* A smaller cap fills only that many, still counts all. */
	memset(a, 0, 1000 * sizeof(*a));
	ck_assert_int_eq(npu_anchors_generate(&o, a, 3, &n), NPU_OK);
	ck_assert_uint_eq(n, 896);
	ck_assert_float_eq_tol(a[2].x_center, 0.09375f, TOL);
	ck_assert_float_eq(a[3].w, 0.0f);
	free(a);
}
END_TEST

START_TEST(anchors_sizes)
{
	npu_anchor_options o;
	npu_anchor a[896];
	size_t n;
	/* Layer scales s(i) = 0.1484375 + (0.75 - 0.1484375) * i / 3. */
	const float s0 = 0.1484375f, s1 = 0.1484375f + 0.6015625f / 3.0f;

	npu_anchor_options_blazeface_front(&o);
	o.fixed_anchor_size = 0;
	ck_assert_int_eq(npu_anchors_generate(&o, a, 896, &n), NPU_OK);
	/* Ratio 1 at s(0), then the interpolated sqrt(s(0) * s(1)). */
	ck_assert_float_eq_tol(a[0].w, s0, TOL);
	ck_assert_float_eq_tol(a[0].h, s0, TOL);
	ck_assert_float_eq_tol(a[1].w, sqrtf(s0 * s1), TOL);
	/* Last anchor of a stride-16 cell: layer 3, sqrt(0.75 * 1). */
	ck_assert_float_eq_tol(a[517].w, sqrtf(0.75f), TOL);
	ck_assert_float_eq_tol(a[512].w, s1, TOL);

	/* Aspect ratio 2 without interpolation: w = s*sqrt2, h = s/sqrt2;
	 * one layer: s = (min + max) / 2; 100 / 16 -> ceil 7 cells. */
	npu_anchor_options_init(&o);
	o.num_layers = 1;
	o.min_scale = 0.2f;
	o.max_scale = 0.4f;
	o.input_width = 100;
	o.input_height = 60;
	o.strides[0] = 16;
	o.num_aspect_ratios = 1;
	o.aspect_ratios[0] = 2.0f;
	o.interpolated_scale_aspect_ratio = 0.0f;
	ck_assert_int_eq(npu_anchors_generate(&o, a, 896, &n), NPU_OK);
	ck_assert_uint_eq(n, 7 * 4);
	ck_assert_float_eq_tol(a[0].w, 0.3f * sqrtf(2.0f), TOL);
	ck_assert_float_eq_tol(a[0].h, 0.3f / sqrtf(2.0f), TOL);
	ck_assert_float_eq_tol(a[0].x_center, 0.5f / 7.0f, TOL);
	ck_assert_float_eq_tol(a[0].y_center, 0.5f / 4.0f, TOL);

	/* reduce_boxes_in_lowest_layer: (0.1, 1), (s, 2), (s, 0.5). */
	o.reduce_boxes_in_lowest_layer = 1;
	ck_assert_int_eq(npu_anchors_generate(&o, a, 896, &n), NPU_OK);
	ck_assert_uint_eq(n, 7 * 4 * 3);
	ck_assert_float_eq_tol(a[0].w, 0.1f, TOL);
	ck_assert_float_eq_tol(a[2].w, 0.3f / sqrtf(2.0f), TOL);
	ck_assert_float_eq_tol(a[2].h, 0.3f * sqrtf(2.0f), TOL);

	/* Explicit feature maps override ceil(input / stride). */
	o.reduce_boxes_in_lowest_layer = 0;
	o.num_feature_maps = 1;
	o.feature_map_width[0] = 3;
	o.feature_map_height[0] = 2;
	ck_assert_int_eq(npu_anchors_generate(&o, a, 896, &n), NPU_OK);
	ck_assert_uint_eq(n, 6);
	ck_assert_float_eq_tol(a[5].x_center, 2.5f / 3.0f, TOL);
	ck_assert_float_eq_tol(a[5].y_center, 0.75f, TOL);
}
END_TEST

/* ---- decoding ---- */

START_TEST(decode_blazeface_rows)
{
	npu_decode_options o;
	const npu_anchor anchors[4] = {
		{ 0.5f, 0.25f, 1.0f, 1.0f },
		{ 0.75f, 0.75f, 0.5f, 0.25f },
		{ 0.5f, 0.5f, 1.0f, 1.0f },
		{ 0.5f, 0.5f, 1.0f, 1.0f },
	};
	float boxes[4][16] = {
		/* x, y, w, h, then keypoints x, y (in 128-pixel units). */
		{ 12.8f, -6.4f, 32.0f, 64.0f, 6.4f, 12.8f, -12.8f, 0.0f },
		{ 0.0f, 0.0f, 128.0f, 128.0f, 64.0f, 64.0f },
		{ 0.0f, 0.0f, 10.0f, 10.0f },
		{ 0.0f, 0.0f, -10.0f, 10.0f },	/* negative width */
	};
	const float scores[4] = { 2.0f, 1000.0f, -1.0f, 5.0f };
	npu_detection d[4];
	size_t n = 0;

	npu_decode_options_blazeface_front(&o);
	ck_assert_int_eq(npu_detections_decode(&o, &boxes[0][0], scores, anchors, 4, d, 4, &n),
			 NPU_OK);
	/* Row 2 scores sigmoid(-1) = 0.269 < 0.5; row 3 has width < 0. */
	ck_assert_uint_eq(n, 2);

	/*
	 * Row 0, anchor (0.5, 0.25) size 1:
	 *   center x = 12.8 / 128 + 0.5 = 0.6, y = -6.4 / 128 + 0.25 = 0.2
	 *   size w = 32 / 128 = 0.25, h = 64 / 128 = 0.5
	 *   box (0.6 - 0.125, 0.2 - 0.25, 0.6 + 0.125, 0.2 + 0.25)
	 *     = (0.475, -0.05, 0.725, 0.45)   (not clipped)
	 *   keypoint 0 = (6.4 / 128 + 0.5, 12.8 / 128 + 0.25) = (0.55, 0.35)
	 *   keypoint 1 = (-12.8 / 128 + 0.5, 0.25) = (0.4, 0.25)
	 *   keypoints 2..5 = the anchor center (0.5, 0.25)
	 *   score = 1 / (1 + e^-2) = 0.8807971
	 */
	ck_assert_float_eq_tol(d[0].xmin, 0.475f, TOL);
	ck_assert_float_eq_tol(d[0].ymin, -0.05f, TOL);
	ck_assert_float_eq_tol(d[0].xmax, 0.725f, TOL);
	ck_assert_float_eq_tol(d[0].ymax, 0.45f, TOL);
	ck_assert_float_eq_tol(d[0].score, 0.8807971f, TOL);
	ck_assert_int_eq(d[0].class_id, 0);
	ck_assert_int_eq(d[0].num_keypoints, 6);
	ck_assert_float_eq_tol(d[0].keypoints[0].x, 0.55f, TOL);
	ck_assert_float_eq_tol(d[0].keypoints[0].y, 0.35f, TOL);
	ck_assert_float_eq_tol(d[0].keypoints[1].x, 0.4f, TOL);
	ck_assert_float_eq_tol(d[0].keypoints[1].y, 0.25f, TOL);
	ck_assert_float_eq_tol(d[0].keypoints[5].x, 0.5f, TOL);
	ck_assert_float_eq_tol(d[0].keypoints[5].y, 0.25f, TOL);

	/*
	 * Row 1, anchor (0.75, 0.75) size 0.5 x 0.25, logit 1000 clipped to
	 * 100: score 1.  Size (128 / 128 * 0.5, 128 / 128 * 0.25) = (0.5,
	 * 0.25) around (0.75, 0.75): box (0.5, 0.625, 1.0, 0.875);
	 * keypoint 0 = (64 / 128 * 0.5 + 0.75, 64 / 128 * 0.25 + 0.75)
	 *            = (1.0, 0.875).
	 */
	ck_assert_float_eq_tol(d[1].xmin, 0.5f, TOL);
	ck_assert_float_eq_tol(d[1].ymin, 0.625f, TOL);
	ck_assert_float_eq_tol(d[1].xmax, 1.0f, TOL);
	ck_assert_float_eq_tol(d[1].ymax, 0.875f, TOL);
	ck_assert_float_eq(d[1].score, 1.0f);
	ck_assert_float_eq_tol(d[1].keypoints[0].x, 1.0f, TOL);
	ck_assert_float_eq_tol(d[1].keypoints[0].y, 0.875f, TOL);

	/* y-first order (TF object detection): row 0 read as y, x, h, w:
	 * center (-6.4 / 128 + 0.5, 12.8 / 128 + 0.25) = (0.45, 0.35),
	 * size (64 / 128, 32 / 128) = (0.5, 0.25). */
	o.reverse_output_order = 0;
	o.min_score_thresh = 0.6f;
	ck_assert_int_eq(npu_detections_decode(&o, &boxes[0][0], scores, anchors, 1, d, 4, &n),
			 NPU_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_float_eq_tol(d[0].xmin, 0.2f, TOL);
	ck_assert_float_eq_tol(d[0].xmax, 0.7f, TOL);
	ck_assert_float_eq_tol(d[0].ymin, 0.225f, TOL);
	ck_assert_float_eq_tol(d[0].ymax, 0.475f, TOL);
	ck_assert_float_eq_tol(d[0].keypoints[0].x, 0.6f, TOL);
	ck_assert_float_eq_tol(d[0].keypoints[0].y, 0.3f, TOL);
}
END_TEST

START_TEST(decode_preset_pipeline)
{
	/* All-zero regressors on the 896 BlazeFace anchors: each box is a
	 * point at its anchor center; one logit high enough to pass. */
	npu_anchor_options ao;
	npu_decode_options o;
	npu_anchor *a = calloc(896, sizeof(*a));
	float *boxes = calloc(896 * 16, sizeof(float));
	float *scores = calloc(896, sizeof(float));
	npu_detection d[2];
	size_t n;

	for (int i = 0; i < 896; i++)
		scores[i] = -10.0f;
	scores[600] = 3.0f;
	npu_anchor_options_blazeface_front(&ao);
	ck_assert_int_eq(npu_anchors_generate(&ao, a, 896, &n), NPU_OK);
	npu_decode_options_blazeface_front(&o);
	ck_assert_int_eq(npu_detections_decode(&o, boxes, scores, a, 896, d, 2, &n), NPU_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_float_eq(d[0].xmin, a[600].x_center);
	ck_assert_float_eq(d[0].ymax, a[600].y_center);
	free(a);
	free(boxes);
	free(scores);
}
END_TEST

/* ---- NMS ---- */

static npu_detection det(float x0, float y0, float x1, float y1, float score)
{
	npu_detection d = { .xmin = x0, .ymin = y0, .xmax = x1, .ymax = y1, .score = score };

	/* One keypoint at the box center. */
	d.num_keypoints = 1;
	d.keypoints[0].x = (x0 + x1) / 2;
	d.keypoints[0].y = (y0 + y1) / 2;
	return d;
}

/*
 * A (0.1, 0.1, 0.5, 0.5) 0.9, B (0.2, 0.1, 0.6, 0.5) 0.6,
 * C (0.1, 0.2, 0.5, 0.6) 0.3, D (0.7, 0.7, 0.9, 0.9) 0.8, given as
 * B, D, A, C.  IoU(A, B) = IoU(A, C) = 0.12 / (0.16 + 0.16 - 0.12) = 0.6;
 * IoU(B, C) = 0.09 / 0.23 = 0.39; D touches nothing.
 */
static void four_boxes(npu_detection in[4])
{
	in[0] = det(0.2f, 0.1f, 0.6f, 0.5f, 0.6f);	/* B */
	in[1] = det(0.7f, 0.7f, 0.9f, 0.9f, 0.8f);	/* D */
	in[2] = det(0.1f, 0.1f, 0.5f, 0.5f, 0.9f);	/* A */
	in[3] = det(0.1f, 0.2f, 0.5f, 0.6f, 0.3f);	/* C */
}

START_TEST(nms_weighted_by_hand)
{
	npu_nms_options o;
	npu_detection in[4], out[4];
	size_t n = 0;

	four_boxes(in);
	npu_nms_options_init(&o);	/* weighted, IoU > 0.3 */
	ck_assert_int_eq(npu_nms(&o, in, 4, out, 4, &n), NPU_OK);
	ck_assert_uint_eq(n, 2);

	/*
	 * Cluster {A, B, C}, total score 1.8:
	 *   xmin = (0.9*0.1 + 0.6*0.2 + 0.3*0.1) / 1.8 = 0.24 / 1.8 = 0.133333
	 *   ymin = (0.9*0.1 + 0.6*0.1 + 0.3*0.2) / 1.8 = 0.21 / 1.8 = 0.116667
	 *   xmax = (0.9*0.5 + 0.6*0.6 + 0.3*0.5) / 1.8 = 0.96 / 1.8 = 0.533333
	 *   ymax = (0.9*0.5 + 0.6*0.5 + 0.3*0.6) / 1.8 = 0.93 / 1.8 = 0.516667
	 *   keypoint: centers (0.3,0.3) (0.4,0.3) (0.3,0.4):
	 *     x = (0.27 + 0.24 + 0.09) / 1.8 = 0.333333
	 *     y = (0.27 + 0.18 + 0.12) / 1.8 = 0.316667
	 *   score: A's 0.9.  Then D alone, unchanged, score 0.8.
	 */
	ck_assert_float_eq_tol(out[0].xmin, 0.24f / 1.8f, TOL);
	ck_assert_float_eq_tol(out[0].ymin, 0.21f / 1.8f, TOL);
	ck_assert_float_eq_tol(out[0].xmax, 0.96f / 1.8f, TOL);
	ck_assert_float_eq_tol(out[0].ymax, 0.93f / 1.8f, TOL);
	ck_assert_float_eq_tol(out[0].keypoints[0].x, 0.6f / 1.8f, TOL);
	ck_assert_float_eq_tol(out[0].keypoints[0].y, 0.57f / 1.8f, TOL);
	ck_assert_float_eq(out[0].score, 0.9f);
	ck_assert_float_eq(out[1].xmin, 0.7f);
	ck_assert_float_eq(out[1].ymin, 0.7f);
	ck_assert_float_eq(out[1].xmax, 0.9f);
	ck_assert_float_eq(out[1].ymax, 0.9f);
	ck_assert_float_eq(out[1].score, 0.8f);

	/* In place, with a cap of 1: the count is still 2. */
	ck_assert_int_eq(npu_nms(&o, in, 4, in, 1, &n), NPU_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_float_eq_tol(in[0].xmin, 0.24f / 1.8f, TOL);
	ck_assert_float_eq(in[1].score, 0.8f);	/* untouched: D */

	/* max_detections and min_score_thresh stop early. */
	four_boxes(in);
	o.max_detections = 1;
	ck_assert_int_eq(npu_nms(&o, in, 4, out, 4, &n), NPU_OK);
	ck_assert_uint_eq(n, 1);
	o.max_detections = -1;
	o.min_score_thresh = 0.85f;
	ck_assert_int_eq(npu_nms(&o, in, 4, out, 4, &n), NPU_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_float_eq_tol(out[0].xmin, 0.24f / 1.8f, TOL);

	/* A high threshold: every box is its own cluster, sorted by score. */
	o.min_score_thresh = 0.0f;
	o.iou_threshold = 0.7f;
	ck_assert_int_eq(npu_nms(&o, in, 4, out, 4, &n), NPU_OK);
	ck_assert_uint_eq(n, 4);
	ck_assert_float_eq(out[0].score, 0.9f);
	ck_assert_float_eq_tol(out[0].xmin, 0.1f, TOL);
	ck_assert_float_eq(out[3].score, 0.3f);
	ck_assert_int_eq(npu_nms(&o, NULL, 0, NULL, 0, &n), NPU_OK);
	ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(nms_hard_by_hand)
{
	npu_nms_options o;
	npu_detection in[4], out[4];
	size_t n = 0;

	four_boxes(in);
	npu_nms_options_init(&o);
	o.algorithm = NPU_NMS_HARD;
	/* IoU 0.6 > 0.3: B and C go; A kept as is, then D. */
	ck_assert_int_eq(npu_nms(&o, in, 4, out, 4, &n), NPU_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_float_eq(out[0].xmin, 0.1f);
	ck_assert_float_eq(out[0].ymax, 0.5f);
	ck_assert_float_eq(out[0].score, 0.9f);
	ck_assert_float_eq(out[0].keypoints[0].x, 0.3f);
	ck_assert_float_eq(out[1].score, 0.8f);

	/* 0.6 < 0.65 keeps B; C overlaps A by 0.6 and B by 0.39: kept. */
	o.iou_threshold = 0.65f;
	ck_assert_int_eq(npu_nms(&o, in, 4, out, 4, &n), NPU_OK);
	ck_assert_uint_eq(n, 4);
	ck_assert_float_eq(out[2].score, 0.6f);
	o.iou_threshold = 0.5f;
	ck_assert_int_eq(npu_nms(&o, in, 4, out, 4, &n), NPU_OK);
	ck_assert_uint_eq(n, 2);

	/* Overlap must exceed the threshold: IoU exactly 0.5 survives 0.5. */
	in[0] = det(0.0f, 0.0f, 1.0f, 1.0f, 0.9f);
	in[1] = det(0.0f, 0.0f, 1.0f, 0.5f, 0.8f);
	ck_assert_int_eq(npu_nms(&o, in, 2, out, 4, &n), NPU_OK);
	ck_assert_uint_eq(n, 2);
	o.iou_threshold = 0.49f;
	ck_assert_int_eq(npu_nms(&o, in, 2, out, 4, &n), NPU_OK);
	ck_assert_uint_eq(n, 1);

	/* Equal scores: the lower index is visited first and wins. */
	in[0] = det(0.0f, 0.0f, 0.5f, 0.5f, 0.7f);
	in[1] = det(0.0f, 0.0f, 0.5f, 0.6f, 0.7f);
	ck_assert_int_eq(npu_nms(&o, in, 2, out, 4, &n), NPU_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_float_eq(out[0].ymax, 0.5f);
}
END_TEST

/* ---- invalid arguments ---- */

START_TEST(invalid_arguments)
{
	float f[4] = { 0 };
	uint8_t q[4] = { 0 };
	npu_top_k_entry e[4];
	int64_t n64;
	size_t n;
	npu_anchor_options ao;
	npu_decode_options dopt;
	npu_nms_options no;
	npu_anchor a[4];
	npu_detection d[4];

	ck_invalid(npu_softmax(NULL, f, 1, 4), "in is NULL");
	ck_invalid(npu_softmax(f, NULL, 1, 4), "out is NULL");
	ck_invalid(npu_softmax(f, f, -1, 4), "negative");
	ck_invalid(npu_softmax(f, f, 1, -4), "negative");
	ck_invalid(npu_softmax(f, f, INT64_MAX, 2), "too large");

	ck_invalid(npu_top_k(f, 4, 2, NULL, e, NULL), "count");
	ck_invalid(npu_top_k(NULL, 4, 2, NULL, e, &n64), "scores");
	ck_invalid(npu_top_k(f, 4, 2, NULL, NULL, &n64), "out");
	ck_invalid(npu_top_k(f, -1, 2, NULL, e, &n64), "negative n");
	ck_invalid(npu_top_k(f, 4, -2, NULL, e, &n64), "negative k");

	ck_invalid(npu_quantize(NPU_DTYPE_UINT8, NULL, q, 4, 1.0f, 0), "in is NULL");
	ck_invalid(npu_dequantize(NPU_DTYPE_UINT8, q, NULL, 4, 1.0f, 0), "out is NULL");
	ck_invalid(npu_quantize(NPU_DTYPE_UINT8, f, q, -1, 1.0f, 0), "negative");
	ck_invalid(npu_quantize(NPU_DTYPE_FLOAT32, f, q, 4, 1.0f, 0), "float32");
	ck_invalid(npu_dequantize(NPU_DTYPE_INT8, q, f, 4, 0.0f, 0), "scale");
	ck_invalid(npu_dequantize(NPU_DTYPE_INT8, q, f, 4, NAN, 0), "scale");
	ck_invalid(npu_quantize(NPU_DTYPE_INT8, f, q, 4, -1.0f, 0), "scale");
	ck_invalid(npu_quantize(NPU_DTYPE_UINT8, f, q, 4, 1.0f, 256), "zero point 256");
	ck_invalid(npu_quantize(NPU_DTYPE_INT8, f, q, 4, 1.0f, -129), "zero point -129");

	npu_anchor_options_blazeface_front(&ao);
	ck_invalid(npu_anchors_generate(NULL, a, 4, &n), "opts");
	ck_invalid(npu_anchors_generate(&ao, a, 4, NULL), "count");
	ck_invalid(npu_anchors_generate(&ao, NULL, 4, &n), "anchors is NULL");
	ao.num_layers = -1;
	ck_invalid(npu_anchors_generate(&ao, a, 4, &n), "num_layers -1");
	npu_anchor_options_blazeface_front(&ao);
	ao.strides[2] = 0;
	ck_invalid(npu_anchors_generate(&ao, a, 4, &n), "strides[2]");
	npu_anchor_options_blazeface_front(&ao);
	ao.input_width = -128;
	ck_invalid(npu_anchors_generate(&ao, a, 4, &n), "input size");
	npu_anchor_options_blazeface_front(&ao);
	ao.num_aspect_ratios = -1;
	ck_invalid(npu_anchors_generate(&ao, a, 4, &n), "num_aspect_ratios");
	npu_anchor_options_blazeface_front(&ao);
	ao.struct_size = 0;
	ck_invalid(npu_anchors_generate(&ao, a, 4, &n), "npu_anchor_options_init");

	npu_decode_options_blazeface_front(&dopt);
	ck_invalid(npu_detections_decode(NULL, f, f, a, 1, d, 4, &n), "opts");
	ck_invalid(npu_detections_decode(&dopt, f, f, a, 1, d, 4, NULL), "count");
	ck_invalid(npu_detections_decode(&dopt, NULL, f, a, 1, d, 4, &n), "raw_boxes");
	ck_invalid(npu_detections_decode(&dopt, f, NULL, a, 1, d, 4, &n), "raw_scores");
	ck_invalid(npu_detections_decode(&dopt, f, f, NULL, 1, d, 4, &n), "anchors");
	ck_invalid(npu_detections_decode(&dopt, f, f, a, 1, NULL, 4, &n), "out is NULL");
	dopt.num_keypoints = 7;	/* 4 + 7 * 2 > 16 */
	ck_invalid(npu_detections_decode(&dopt, f, f, a, 1, d, 4, &n), "do not fit");
	npu_decode_options_blazeface_front(&dopt);
	dopt.num_coords = -16;
	ck_invalid(npu_detections_decode(&dopt, f, f, a, 1, d, 4, &n), "num_coords");
	npu_decode_options_blazeface_front(&dopt);
	dopt.x_scale = 0.0f;
	ck_invalid(npu_detections_decode(&dopt, f, f, a, 1, d, 4, &n), "scales");

	npu_nms_options_init(&no);
	ck_invalid(npu_nms(NULL, d, 1, d, 1, &n), "opts");
	ck_invalid(npu_nms(&no, d, 1, d, 1, NULL), "count");
	ck_invalid(npu_nms(&no, NULL, 1, d, 1, &n), "in is NULL");
	ck_invalid(npu_nms(&no, d, 1, NULL, 1, &n), "out is NULL");
	no.iou_threshold = -0.1f;
	ck_invalid(npu_nms(&no, d, 1, d, 1, &n), "iou_threshold");
	npu_nms_options_init(&no);
	no.algorithm = (npu_nms_algorithm)7;
	ck_invalid(npu_nms(&no, d, 1, d, 1, &n), "algorithm 7");

	/* Option initialisers ignore NULL. */
	npu_anchor_options_init(NULL);
	npu_anchor_options_blazeface_front(NULL);
	npu_decode_options_init(NULL);
	npu_decode_options_blazeface_front(NULL);
	npu_nms_options_init(NULL);
}
END_TEST

static Suite *post_suite(void)
{
	Suite *s = suite_create("npu_post");
	TCase *tc = tcase_create("post");

	tcase_add_test(tc, softmax_matches_formula);
	tcase_add_test(tc, softmax_large_logits_in_place);
	tcase_add_test(tc, top_k_order_ties_nan);
	tcase_add_test(tc, top_k_matches_sort);
	tcase_add_test(tc, labels_load_and_top_k);
	tcase_add_test(tc, labels_missing_file);
	tcase_add_test(tc, quantize_rounding_saturation);
	tcase_add_test(tc, quantize_round_trip);
	tcase_add_test(tc, anchors_blazeface_front);
	tcase_add_test(tc, anchors_sizes);
	tcase_add_test(tc, decode_blazeface_rows);
	tcase_add_test(tc, decode_preset_pipeline);
	tcase_add_test(tc, nms_weighted_by_hand);
	tcase_add_test(tc, nms_hard_by_hand);
	tcase_add_test(tc, invalid_arguments);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(post_suite)
