// SPDX-License-Identifier: MIT
/*
 * int8 on request, under ASan/UBSan: calibration on sample files (.npy and
 * raw), the rewrite of each Conv into Quantize -> QLinearConv -> Dequantize,
 * and results that stay close to bf16.  Bad calibration input is a clear
 * error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npu.h"
#include "npu_test.h"
#include "onnx_build.h"

#define NIN ONNXB_SMALL_CNN_IN

static void write_raw(const char *path, const float *x, size_t n)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(x, 4, n, f), n);
	fclose(f);
}

/* A version 1.0 .npy of float32 [1, 4, 12, 12]. */
static void write_npy(const char *path, const float *x)
{
	char hdr[118];
	FILE *f = fopen(path, "wb");
	int n = snprintf(hdr, sizeof(hdr),
			 "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4, 12, 12), }");

	ck_assert_ptr_nonnull(f);
	memset(hdr + n, ' ', sizeof(hdr) - (size_t)n - 1);
	hdr[sizeof(hdr) - 1] = '\n';
	fwrite("\x93NUMPY\x01\x00", 1, 8, f);
	fputc((int)sizeof(hdr) & 0xff, f);
	fputc(0, f);
	fwrite(hdr, 1, sizeof(hdr), f);
	fwrite(x, 4, NIN, f);
	fclose(f);
}

static npu_status load(npu_device *dev, const char *calib, npu_model **m)
{
	npu_compile_options co;
	uint8_t *buf;
	size_t len;
	npu_status st;

	npu_compile_options_init(&co);
	if (calib) {
		co.precision = NPU_PRECISION_INT8;
		co.calibration_dir = calib;
	}
	buf = onnxb_small_cnn(&len);
	st = npu_model_load_memory(buf, len, dev, &co, m);
	free(buf);
	return st;
}

static void run(npu_device *dev, npu_model *m, const float *x, float *s, size_t sbytes)
{
	npu_tensor in = { "x", NPU_DTYPE_FLOAT32, (void *)x, NIN * 4 };
	npu_tensor out = { "s", NPU_DTYPE_FLOAT32, s, sbytes };
	npu_context *ctx;

	ck_assert_msg(!npu_context_create(dev, m, 0, &ctx), "%s", npu_last_error());
	ck_assert_msg(!npu_run(ctx, &in, 1, &out, 1), "%s", npu_last_error());
	npu_context_destroy(ctx);
}

START_TEST(int8_calibrated_close_to_bf16)
{
	char dir[] = "/tmp/npu-int8-XXXXXX", path[128];
	static float x[NIN], s8[8 * 144], s16[8 * 144];
	npu_device *dev;
	npu_model *q, *f;
	double dot = 0, na = 0, nb = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (unsigned k = 0; k < 3; k++) {
		onnxb_fill(x, NIN, 40 + k);
		snprintf(path, sizeof(path), "%s/sample%u.%s", dir, k, k ? "raw" : "npy");
		if (k)
			write_raw(path, x, NIN);
		else
			write_npy(path, x);
	}
	ck_assert(!npu_device_open("emu", &dev));
	ck_assert_msg(!load(dev, dir, &q), "%s", npu_last_error());
	ck_assert_msg(!load(dev, NULL, &f), "%s", npu_last_error());
	onnxb_fill(x, NIN, 41);
	run(dev, q, x, s8, sizeof(s8));
	run(dev, f, x, s16, sizeof(s16));
	for (size_t i = 0; i < sizeof(s8) / 4; i++) {
		dot += (double)s8[i] * s16[i];
		na += (double)s8[i] * s8[i];
		nb += (double)s16[i] * s16[i];
	}
	ck_assert_msg(dot / sqrt(na * nb) >= 0.99, "int8 vs bf16 cosine %f", dot / sqrt(na * nb));
	/* The quantized model really is another program. */
	ck_assert_int_ne(memcmp(s8, s16, sizeof(s8)), 0);
	npu_model_free(q);
	npu_model_free(f);

	/* A sample of the wrong size is named. */
	snprintf(path, sizeof(path), "%s/short.raw", dir);
	write_raw(path, x, 10);
	ck_assert_int_ne(load(dev, dir, &q), NPU_OK);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "short.raw"));
	unlink(path);
	for (unsigned k = 0; k < 3; k++) {
		snprintf(path, sizeof(path), "%s/sample%u.%s", dir, k, k ? "raw" : "npy");
		unlink(path);
	}
	/* No samples at all. */
	ck_assert_int_ne(load(dev, dir, &q), NPU_OK);
	rmdir(dir);
	ck_assert_int_ne(load(dev, "/nonexistent/calibration", &q), NPU_OK);
	npu_device_close(dev);
}
END_TEST

static Suite *int8_suite(void)
{
	Suite *s = suite_create("npu_int8");
	TCase *tc = tcase_create("int8");

	tcase_add_test(tc, int8_calibrated_close_to_bf16);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(int8_suite)
