// SPDX-License-Identifier: MIT
/*
 * The bias the float GEMMs and convolutions add as they write their sums
 * (npu_kern_gemm_*_bias, npu_kern_conv.bias), against the separate pass
 * over the sums it replaced (value + bias[channel]): equal bit for bit,
 * NaN payloads included, on every path: the blocked GEMM over one and
 * several K blocks, the M = 1 product, the portable GEMM, accumulation
 * into C, and the convolution's pointwise, im2col, depthwise and
 * per-tap paths, K = 0 among them.  Inputs, C and the bias draw NaNs
 * with different payloads, infinities and zeros of both signs, so that
 * an addition with its operands swapped shows.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npu_kern.h"
#include "npu_test.h"
#include "npu_test_rng.h"

static uint64_t bias_rng = 0x9e3779b97f4a7c15ull;

static uint32_t bias_rnd(void)
{
	return npu_test_rnd(&bias_rng);
}

static int bias_range(int lo, int hi)
{
	return npu_test_range(&bias_rng, lo, hi);
}

/* Mostly ordinary values; one in eight a special one. */
static float bias_val(void)
{
	static const uint32_t special[] = {
		0x7fc00000, 0xffc10000, 0x7f810000, 0x7fc12345, 0x7f800000,
		0xff800000, 0x00000000, 0x80000000, 0x00010000,
	};
	uint32_t r = bias_rnd();
	float f;

	if (r % 8 == 0) {
		memcpy(&f, &special[(r >> 3) % (sizeof(special) / sizeof(special[0]))], 4);
		return f;
	}
	return (float)(int32_t)bias_rnd() / 1073741824.0f;
}

static void *bias_alloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	ck_assert_ptr_nonnull(p);
	return p;
}

/* The pass the fused bias replaced: the value first, then the bias. */
static void ref_bias(float *Y, size_t rows, size_t n, long ld, const float *bias)
{
	for (size_t r = 0; r < rows; r++)
		for (size_t c = 0; c < n; c++)
			Y[r * (size_t)ld + c] = Y[r * (size_t)ld + c] + bias[c];
}

static long bits_differ(const float *a, const float *b, size_t n)
{
	long bad = 0;

	for (size_t i = 0; i < n; i++)
		bad += memcmp(&a[i], &b[i], sizeof(float)) != 0;
	return bad;
}

/* One GEMM shape, bf16 or fp32 inputs; the number of outputs that differ. */
static long gemm_case(int M, int N, int K, bool bf16, bool acc)
{
	const long lda = K + 1, ldb = N + 2, ldc = N + 3;
	uint16_t *A16 = bias_alloc((size_t)M * lda * 2);
	uint16_t *B16 = bias_alloc((size_t)(K ? K : 1) * ldb * 2);
	float *A = bias_alloc((size_t)M * lda * 4);
	float *B = bias_alloc((size_t)(K ? K : 1) * ldb * 4);
	float *bias = bias_alloc((size_t)N * 4);
	float *want = bias_alloc((size_t)M * ldc * 4), *got = bias_alloc((size_t)M * ldc * 4);
	long bad;

	for (long i = 0; i < M * lda; i++) {
		A[i] = bias_val();
		A16[i] = npu_f32_to_bf16(A[i]);
	}
	for (long i = 0; i < (K ? K : 1) * ldb; i++) {
		B[i] = bias_val();
		B16[i] = npu_f32_to_bf16(B[i]);
	}
	for (int j = 0; j < N; j++)
		bias[j] = bias_val();
	for (long i = 0; i < M * ldc; i++)
		want[i] = got[i] = bias_val();
	if (bf16) {
		npu_kern_gemm_bf16(M, N, K, A16, lda, B16, ldb, want, ldc, acc);
		npu_kern_gemm_bf16_bias(M, N, K, A16, lda, B16, ldb, got, ldc, acc, bias);
	} else {
		npu_kern_gemm_f32(M, N, K, A, lda, B, ldb, want, ldc, acc);
		npu_kern_gemm_f32_bias(M, N, K, A, lda, B, ldb, got, ldc, acc, bias);
	}
	ref_bias(want, (size_t)M, (size_t)N, ldc, bias);
	bad = bits_differ(want, got, (size_t)M * ldc);
	free(A16);
	free(B16);
	free(A);
	free(B);
	free(bias);
	free(want);
	free(got);
	return bad;
}

static void gemm_shapes(bool portable)
{
	static const int ms[] = { 1, 2, 5, 13, 25 };
	static const int ns[] = { 1, 17, 32, 33, 100 };
	static const int ks[] = { 0, 1, 3, 511, 513, 1100 };

	npu_kern_gemm_force_portable(portable);
	for (unsigned a = 0; a < 5; a++)
		for (unsigned b = 0; b < 5; b++)
			for (unsigned c = 0; c < 6; c++)
				for (int v = 0; v < 4; v++) {
					long bad = gemm_case(ms[a], ns[b], ks[c], v & 1, v & 2);

					if (bad)
						npu_kern_gemm_force_portable(false);
					ck_assert_msg(bad == 0,
						      "%s GEMM %d x %d x %d (%s, accumulate %d): %ld outputs differ",
						      portable ? "portable" : "fast", ms[a], ns[b],
						      ks[c], v & 1 ? "bf16" : "fp32", (v & 2) != 0, bad);
				}
	npu_kern_gemm_force_portable(false);
}

START_TEST(test_gemm_bias_fast)
{
	gemm_shapes(false);
}
END_TEST

START_TEST(test_gemm_bias_portable)
{
	gemm_shapes(true);
}
END_TEST

/*
 * A random convolution: pointwise, depthwise (with and without a channel
 * multiplier), grouped or plain, with strides, dilations and pads, and
 * now and then no input channels at all.
 */
static struct npu_kern_conv conv_shape(void)
{
	struct npu_kern_conv p = { 0 };
	int kind = bias_range(0, 4), cg = bias_range(1, 5);

	p.groups = kind == 1 || kind == 2 ? bias_range(1, 40) : bias_range(1, 3);
	p.C = kind == 1 || kind == 2 ? p.groups : p.groups * cg;
	p.OC = p.groups * (kind == 2 ? bias_range(2, 3) : bias_range(1, 20));
	if (kind == 4 && bias_range(0, 3) == 0)
		p.C = 0;
	p.H = bias_range(1, 9);
	p.W = bias_range(1, 9);
	p.KH = kind == 0 ? 1 : bias_range(1, 3);
	p.KW = kind == 0 ? 1 : bias_range(1, 3);
	p.stride_h = kind == 0 ? 1 : bias_range(1, 2);
	p.stride_w = kind == 0 ? 1 : bias_range(1, 2);
	p.dil_h = kind == 0 ? 1 : bias_range(1, 2);
	p.dil_w = kind == 0 ? 1 : bias_range(1, 2);
	p.pad_top = kind == 0 ? 0 : bias_range(0, 1);
	p.pad_left = kind == 0 ? 0 : bias_range(0, 1);
	p.OH = kind == 0 ? p.H : bias_range(1, 6);
	p.OW = kind == 0 ? p.W : bias_range(1, 6);
	return p;
}

static long conv_case(bool bf16, bool acc)
{
	struct npu_kern_conv p = conv_shape();
	const int cg = p.groups ? p.C / p.groups : 0;
	const size_t nx = (size_t)p.H * p.W * p.C;
	const size_t nw = (size_t)p.KH * p.KW * (size_t)cg * p.OC;
	const size_t ny = (size_t)p.OH * p.OW * p.OC;
	float *x = bias_alloc(nx * 4), *w = bias_alloc(nw * 4);
	uint16_t *x16 = bias_alloc(nx * 2), *w16 = bias_alloc(nw * 2);
	float *bias = bias_alloc((size_t)p.OC * 4);
	float *want = bias_alloc(ny * 4), *got = bias_alloc(ny * 4);
	long bad;

	for (size_t i = 0; i < nx; i++) {
		x[i] = bias_val();
		x16[i] = npu_f32_to_bf16(x[i]);
	}
	for (size_t i = 0; i < nw; i++) {
		w[i] = bias_val();
		w16[i] = npu_f32_to_bf16(w[i]);
	}
	for (int c = 0; c < p.OC; c++)
		bias[c] = bias_val();
	for (size_t i = 0; i < ny; i++)
		want[i] = got[i] = bias_val();
	if (bf16)
		npu_kern_conv2d_bf16(&p, x16, w16, want, acc);
	else
		npu_kern_conv2d_f32(&p, x, w, want, acc);
	ref_bias(want, (size_t)p.OH * p.OW, (size_t)p.OC, p.OC, bias);
	p.bias = bias;
	if (bf16)
		npu_kern_conv2d_bf16(&p, x16, w16, got, acc);
	else
		npu_kern_conv2d_f32(&p, x, w, got, acc);
	bad = bits_differ(want, got, ny);
	free(x);
	free(w);
	free(x16);
	free(w16);
	free(bias);
	free(want);
	free(got);
	return bad;
}

START_TEST(test_conv_bias)
{
	for (int i = 0; i < 600; i++) {
		bool bf16 = i & 1, acc = i & 2;
		long bad = conv_case(bf16, acc);

		ck_assert_msg(bad == 0, "case %d (%s, accumulate %d): %ld outputs differ",
			      i, bf16 ? "bf16" : "fp32", acc, bad);
	}
}
END_TEST

static Suite *kern_bias_suite(void)
{
	Suite *s = suite_create("kern_bias");
	TCase *t = tcase_create("fused_bias");

	tcase_add_test(t, test_gemm_bias_fast);
	tcase_add_test(t, test_gemm_bias_portable);
	tcase_add_test(t, test_conv_bias);
	tcase_set_timeout(t, 120);
	suite_add_tcase(s, t);
	return s;
}

NPU_TEST_SUITE(kern_bias_suite)
