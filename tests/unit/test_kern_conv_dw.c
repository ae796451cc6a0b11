// SPDX-License-Identifier: MIT
/*
 * Depthwise convolution (one input channel per group), fp32 and bf16,
 * against the per-tap loop the kernel used before it was vectorised: the
 * results must be equal bit for bit, because BlazeFace's outputs and the
 * emulator's reproducibility depend on each output channel's sum being
 * formed in the same order (taps in (kh, kw) order, padded taps skipped,
 * each step rounding the product and then the sum in fp32).  Shapes are
 * random: channel counts on and off the kernel's 32- and 8-channel blocks,
 * strides, dilations, paddings (negative too), channel multipliers, and
 * accumulation into a non-zero Y.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npu_kern.h"
#include "npu_test.h"
#include "npu_test_rng.h"

static uint64_t dw_rng = 0x2545f4914f6cdd1dull;

static uint32_t dw_rnd(void)
{
	return npu_test_rnd(&dw_rng);
}

static int dw_range(int lo, int hi)
{
	return npu_test_range(&dw_rng, lo, hi);
}

/* In [-2, 2) with a full mantissa, so sums round at every step. */
static float dw_val(void)
{
	return (float)dw_rnd() / 1073741824.0f - 2.0f;
}

static void *dw_alloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	ck_assert_ptr_nonnull(p);
	return p;
}

/* The old kernel's order: per output pixel, per in-image tap, per channel. */
static void ref_dw(const struct npu_kern_conv *p, const float *x,
		   const float *w, float *y, bool accumulate)
{
	const int mult = p->OC / p->C;

	if (!accumulate)
		memset(y, 0, (size_t)p->OH * p->OW * p->OC * sizeof(*y));
	for (int oh = 0; oh < p->OH; oh++)
		for (int ow = 0; ow < p->OW; ow++)
			for (int kh = 0; kh < p->KH; kh++) {
				long ih = (long)oh * p->stride_h - p->pad_top +
					  (long)kh * p->dil_h;

				if (ih < 0 || ih >= p->H)
					continue;
				for (int kw = 0; kw < p->KW; kw++) {
					long iw = (long)ow * p->stride_w - p->pad_left +
						  (long)kw * p->dil_w;
					float *acc = y + ((long)oh * p->OW + ow) * p->OC;
					const float *xr = x + (ih * p->W + iw) * p->C;
					const float *wt = w + ((long)kh * p->KW + kw) * p->OC;

					if (iw < 0 || iw >= p->W)
						continue;
					for (int oc = 0; oc < p->OC; oc++) {
						float prod = xr[oc / mult] * wt[oc];

						acc[oc] = acc[oc] + prod;
					}
				}
			}
}

static struct npu_kern_conv dw_shape(void)
{
	static const int channels[] = { 1, 3, 7, 8, 9, 16, 17, 24, 28, 31, 32, 33, 42, 64, 72, 80, 96, 127 };
	struct npu_kern_conv p = { 0 };

	p.C = channels[dw_rnd() % (sizeof(channels) / sizeof(channels[0]))];
	p.OC = p.C * (dw_rnd() % 4 ? 1 : dw_range(2, 3));
	p.groups = p.C;
	p.H = dw_range(1, 12);
	p.W = dw_range(1, 12);
	p.KH = dw_range(1, 5);
	p.KW = dw_range(1, 5);
	p.stride_h = dw_range(1, 2);
	p.stride_w = dw_range(1, 2);
	p.dil_h = dw_range(1, 2);
	p.dil_w = dw_range(1, 2);
	p.pad_top = dw_range(-1, 2);
	p.pad_left = dw_range(-1, 2);
	p.OH = dw_range(1, 8);
	p.OW = dw_range(1, 8);
	return p;
}

/* Runs one random shape in fp32 or bf16; returns how many outputs differ. */
static long dw_case(bool bf16, bool accumulate)
{
	struct npu_kern_conv p = dw_shape();
	size_t nx = (size_t)p.H * p.W * p.C, nw = (size_t)p.KH * p.KW * p.OC;
	size_t ny = (size_t)p.OH * p.OW * p.OC;
	float *x = dw_alloc(nx * 4), *w = dw_alloc(nw * 4);
	float *y = dw_alloc(ny * 4), *ref = dw_alloc(ny * 4);
	uint16_t *x16 = dw_alloc(nx * 2), *w16 = dw_alloc(nw * 2);
	long bad = 0;

	for (size_t i = 0; i < nx; i++) {
		x16[i] = npu_f32_to_bf16(dw_val());
		x[i] = bf16 ? npu_bf16_to_f32(x16[i]) : dw_val();
	}
	for (size_t i = 0; i < nw; i++) {
		w16[i] = npu_f32_to_bf16(dw_val());
		w[i] = bf16 ? npu_bf16_to_f32(w16[i]) : dw_val();
	}
	for (size_t i = 0; i < ny; i++)
		y[i] = ref[i] = dw_val();
	ref_dw(&p, x, w, ref, accumulate);
	if (bf16)
		npu_kern_conv2d_bf16(&p, x16, w16, y, accumulate);
	else
		npu_kern_conv2d_f32(&p, x, w, y, accumulate);
	for (size_t i = 0; i < ny; i++)
		bad += memcmp(&y[i], &ref[i], sizeof(float)) != 0;
	free(x);
	free(w);
	free(y);
	free(ref);
	free(x16);
	free(w16);
	return bad;
}

START_TEST(test_conv_dw_bit_identical)
{
	for (int i = 0; i < 400; i++) {
		bool bf16 = i & 1, acc = i & 2;
		long bad = dw_case(bf16, acc);

		ck_assert_msg(bad == 0, "case %d (bf16 %d, accumulate %d): %ld outputs differ",
			      i, bf16, acc, bad);
	}
}
END_TEST

static Suite *kern_conv_dw_suite(void)
{
	Suite *s = suite_create("kern_conv_dw");
	TCase *t = tcase_create("depthwise");

	tcase_add_test(t, test_conv_dw_bit_identical);
	suite_add_tcase(s, t);
	return s;
}

NPU_TEST_SUITE(kern_conv_dw_suite)
