// SPDX-License-Identifier: MIT
/*
 * Unit tests for npu_kern_dtype.c: bf16/f16 conversion (edge values and
 * sweeps against independent double-precision references), integer
 * rounding and saturation, and the whole-buffer conversion loops.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_kern.h"
#include "npu_test.h"

/*
 * Check records a mark point per ck_assert (a pipe write in fork mode),
 * far too slow for millions of checks: inside big loops count the
 * failures with EXPECT, keep the first message, and assert once.
 */
#define EXPECT_BEGIN() size_t nbad_ = 0; char first_[256] = ""
#define EXPECT(cond, ...)						\
	do {								\
		if (!(cond) && !nbad_++)				\
			snprintf(first_, sizeof(first_), __VA_ARGS__);	\
	} while (0)
#define EXPECT_END()							\
	ck_assert_msg(nbad_ == 0, "%zu failures, first: %s", nbad_, first_)

static uint32_t fbits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static float ffrom(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* ---- independent references ---- */

/*
 * bf16 reference: the two bf16 neighbours of f are its truncation and the
 * next code up; pick the nearer in double, ties to the even code.
 */
static uint16_t ref_bf16(float f)
{
	uint32_t u = fbits(f);
	uint16_t lo = (uint16_t)(u >> 16), hi = (uint16_t)(lo + 1);
	double dl, dh, fv = f;
	double vl = npu_bf16_to_f32(lo), vh;

	if ((u & 0xffffu) == 0)
		return lo;
	/* the code above the largest finite is inf: measure as 2^128 */
	vh = (hi & 0x7fffu) == 0x7f80u ? copysign(0x1p128, fv) :
					 (double)npu_bf16_to_f32(hi);
	dl = fabs(fv - vl);
	dh = fabs(vh - fv);
	if (dl < dh)
		return lo;
	if (dh < dl)
		return hi;
	return (lo & 1u) ? hi : lo;
}

/* f16 decode straight from the definition */
static double ref_f16_value(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double s = (h & 0x8000) ? -1.0 : 1.0;

	if (e == 0)
		return s * ldexp(m, -24);
	if (e == 31)
		return m ? NAN : s * INFINITY;
	return s * ldexp(1024 + m, e - 25);
}

/* f16 encode of a finite float through exact double scaling + nearbyint */
static uint16_t ref_f16(float f)
{
	uint16_t sign = signbit(f) ? 0x8000 : 0;
	double a = fabs((double)f), q;
	int ex;

	if (a >= 65520.0)
		return sign | 0x7c00;
	if (a < 0x1p-14)
		return sign | (uint16_t)nearbyint(a * 0x1p24);
	frexp(a, &ex);		/* a = m 2^ex, m in [0.5, 1): exponent ex - 1 */
	q = nearbyint(ldexp(a, 10 - (ex - 1)));	/* in [1024, 2048] */
	return sign | (uint16_t)(((ex - 1 + 15) << 10) + ((int)q - 1024));
}

/* ---- bf16 ---- */

START_TEST(bf16_exact_values)
{
	ck_assert_uint_eq(npu_f32_to_bf16(1.0f), 0x3f80);
	ck_assert_uint_eq(npu_f32_to_bf16(-2.0f), 0xc000);
	ck_assert_uint_eq(npu_f32_to_bf16(0.0f), 0x0000);
	ck_assert_uint_eq(npu_f32_to_bf16(-0.0f), 0x8000);
	ck_assert(npu_bf16_to_f32(0x3f80) == 1.0f);
	ck_assert(npu_bf16_to_f32(0x4049) == 3.140625f);
	ck_assert(npu_bf16_to_f32(0xff80) == -INFINITY);
	/* every non-NaN bf16 survives a round trip exactly */
	{
		EXPECT_BEGIN();

		for (uint32_t h = 0; h < 0x10000; h++) {
			float f = npu_bf16_to_f32((uint16_t)h);

			if (isnan(f))
				continue;
			EXPECT(npu_f32_to_bf16(f) == h, "round trip %04x", h);
		}
		EXPECT_END();
	}
}
END_TEST

START_TEST(bf16_round_ties)
{
	/* exact half-way: to even (LSB 0 stays, LSB 1 rounds up) */
	ck_assert_uint_eq(npu_f32_to_bf16(ffrom(0x3f808000)), 0x3f80);
	ck_assert_uint_eq(npu_f32_to_bf16(ffrom(0x3f818000)), 0x3f82);
	ck_assert_uint_eq(npu_f32_to_bf16(ffrom(0xbf818000)), 0xbf82);
	/* just above / below half */
	ck_assert_uint_eq(npu_f32_to_bf16(ffrom(0x3f808001)), 0x3f81);
	ck_assert_uint_eq(npu_f32_to_bf16(ffrom(0x3f807fff)), 0x3f80);
	/* mantissa carry into the exponent */
	ck_assert_uint_eq(npu_f32_to_bf16(ffrom(0x3fffffff)), 0x4000);
	/* largest finite float rounds to inf; just below the tie stays */
	ck_assert_uint_eq(npu_f32_to_bf16(ffrom(0x7f7fffff)), 0x7f80);
	ck_assert_uint_eq(npu_f32_to_bf16(ffrom(0x7f7f7fff)), 0x7f7f);
	ck_assert_uint_eq(npu_f32_to_bf16(ffrom(0xff7fffff)), 0xff80);
}
END_TEST

START_TEST(bf16_special_and_subnormal)
{
	uint16_t q;

	ck_assert_uint_eq(npu_f32_to_bf16(INFINITY), 0x7f80);
	ck_assert_uint_eq(npu_f32_to_bf16(-INFINITY), 0xff80);
	/* signalling NaN whose payload is only in the dropped bits: a
	 * naive rounding would give inf; must stay a (quiet) NaN */
	q = npu_f32_to_bf16(ffrom(0x7f800001));
	ck_assert(isnan(npu_bf16_to_f32(q)));
	ck_assert_uint_eq(q & 0x0040, 0x0040);
	q = npu_f32_to_bf16(ffrom(0xffffffff));
	ck_assert(isnan(npu_bf16_to_f32(q)));
	ck_assert_uint_eq(q & 0x8000, 0x8000);
	ck_assert(isnan(npu_bf16_to_f32(npu_f32_to_bf16(NAN))));
	/* subnormals: smallest f32 subnormal is below half a bf16 ulp */
	ck_assert_uint_eq(npu_f32_to_bf16(ffrom(0x00000001)), 0x0000);
	ck_assert_uint_eq(npu_f32_to_bf16(ffrom(0x80000001)), 0x8000);
	ck_assert_uint_eq(npu_f32_to_bf16(ffrom(0x00018000)), 0x0002);
	ck_assert_uint_eq(npu_f32_to_bf16(ffrom(0x00008000)), 0x0000);
	ck_assert_uint_eq(npu_f32_to_bf16(ffrom(0x00008001)), 0x0001);
	/* bf16 subnormal decodes exactly: 1 * 2^-133 */
	ck_assert(npu_bf16_to_f32(0x0001) == 0x1p-133f);
	/* rounding the largest subnormal up gives the smallest normal */
	ck_assert_uint_eq(npu_f32_to_bf16(ffrom(0x007fffff)), 0x0080);
}
END_TEST

START_TEST(bf16_sweep_vs_reference)
{
	EXPECT_BEGIN();

	/* ~17M patterns spread over the whole space (odd stride) */
	for (uint64_t k = 0; k < (1ull << 32); k += 251) {
		float f = ffrom((uint32_t)k);

		if (isnan(f))
			continue;
		EXPECT(npu_f32_to_bf16(f) == ref_bf16(f),
		       "bf16(%a): got %04x want %04x", (double)f,
		       npu_f32_to_bf16(f), ref_bf16(f));
	}
	EXPECT_END();
}
END_TEST

/* ---- f16 ---- */

START_TEST(f16_decode_exhaustive)
{
	EXPECT_BEGIN();

	for (uint32_t h = 0; h < 0x10000; h++) {
		double want = ref_f16_value((uint16_t)h);
		float got = npu_f16_to_f32((uint16_t)h);

		if (isnan(want)) {
			EXPECT(isnan(got), "f16 %04x not NaN", h);
			continue;
		}
		EXPECT((double)got == want && !signbit(got) == !signbit(want),
		       "f16 %04x: got %a want %a", h, (double)got, want);
		/* and back: every f16 value is exactly representable */
		EXPECT(npu_f32_to_f16(got) == h, "round trip %04x", h);
	}
	EXPECT_END();
}
END_TEST

START_TEST(f16_edges)
{
	uint16_t q;

	ck_assert_uint_eq(npu_f32_to_f16(1.0f), 0x3c00);
	ck_assert_uint_eq(npu_f32_to_f16(-0.0f), 0x8000);
	ck_assert_uint_eq(npu_f32_to_f16(65504.0f), 0x7bff);
	ck_assert_uint_eq(npu_f32_to_f16(65519.996f), 0x7bff);
	ck_assert_uint_eq(npu_f32_to_f16(65520.0f), 0x7c00);	/* tie -> inf */
	ck_assert_uint_eq(npu_f32_to_f16(-1e10f), 0xfc00);
	ck_assert_uint_eq(npu_f32_to_f16(INFINITY), 0x7c00);
	ck_assert_uint_eq(npu_f32_to_f16(-INFINITY), 0xfc00);
	q = npu_f32_to_f16(NAN);
	ck_assert(isnan(npu_f16_to_f32(q)));
	q = npu_f32_to_f16(ffrom(0x7f800001));	/* payload below f16 bits */
	ck_assert(isnan(npu_f16_to_f32(q)));
	ck_assert_uint_eq(q & 0x0200, 0x0200);	/* quiet */
	/* ties to even in the normal range */
	ck_assert_uint_eq(npu_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
	ck_assert_uint_eq(npu_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);
	ck_assert_uint_eq(npu_f32_to_f16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
	/* subnormals */
	ck_assert_uint_eq(npu_f32_to_f16(0x1p-24f), 0x0001);
	ck_assert_uint_eq(npu_f32_to_f16(0x1p-25f), 0x0000);	/* tie -> 0 */
	ck_assert_uint_eq(npu_f32_to_f16(-0x1p-25f), 0x8000);
	ck_assert_uint_eq(npu_f32_to_f16(0x1.000002p-25f), 0x0001);
	ck_assert_uint_eq(npu_f32_to_f16(1.5f * 0x1p-24f), 0x0002);	/* tie */
	ck_assert_uint_eq(npu_f32_to_f16(2.5f * 0x1p-24f), 0x0002);	/* tie */
	ck_assert_uint_eq(npu_f32_to_f16(1023.5f * 0x1p-24f), 0x0400);
	ck_assert_uint_eq(npu_f32_to_f16(0x1p-14f), 0x0400);
	ck_assert_uint_eq(npu_f32_to_f16(1e-30f), 0x0000);
	ck_assert_uint_eq(npu_f32_to_f16(ffrom(0x00000001)), 0x0000);
	ck_assert(npu_f16_to_f32(0x0001) == 0x1p-24f);
	ck_assert(npu_f16_to_f32(0x83ff) == -1023.0f * 0x1p-24f);
}
END_TEST

START_TEST(f16_sweep_vs_reference)
{
	EXPECT_BEGIN();

	for (uint64_t k = 0; k < (1ull << 32); k += 241) {
		float f = ffrom((uint32_t)k);

		if (isnan(f) || isinf(f))
			continue;
		EXPECT(npu_f32_to_f16(f) == ref_f16(f),
		       "f16(%a): got %04x want %04x", (double)f,
		       npu_f32_to_f16(f), ref_f16(f));
	}
	/* dense around the subnormal/normal boundary and the top */
	for (uint32_t u = 0x33000000; u < 0x39000000; u += 7) {
		float f = ffrom(u), g = ffrom(u | 0x80000000u);

		EXPECT(npu_f32_to_f16(f) == ref_f16(f), "f16(%a)", (double)f);
		EXPECT(npu_f32_to_f16(g) == ref_f16(g), "f16(%a)", (double)g);
	}
	for (uint32_t u = 0x477f0000; u < 0x47810000; u++)
		EXPECT(npu_f32_to_f16(ffrom(u)) == ref_f16(ffrom(u)), "f16 %08x", u);
	EXPECT_END();
}
END_TEST

/* ---- dtype properties ---- */

START_TEST(dtype_props)
{
	ck_assert_uint_eq(npu_hw_dtype_size(NPU_DT_NONE), 0);
	ck_assert_uint_eq(npu_hw_dtype_size(NPU_DT_INT8), 1);
	ck_assert_uint_eq(npu_hw_dtype_size(NPU_DT_UINT8), 1);
	ck_assert_uint_eq(npu_hw_dtype_size(NPU_DT_INT32), 4);
	ck_assert_uint_eq(npu_hw_dtype_size(NPU_DT_BF16), 2);
	ck_assert_uint_eq(npu_hw_dtype_size(NPU_DT_FP16), 2);
	ck_assert_uint_eq(npu_hw_dtype_size(NPU_DT_FP32), 4);
	ck_assert_uint_eq(npu_hw_dtype_size(NPU_DT_COUNT), 0);
	ck_assert_uint_eq(npu_hw_dtype_size(255), 0);
	ck_assert(npu_dtype_is_int(NPU_DT_INT8));
	ck_assert(npu_dtype_is_int(NPU_DT_UINT8));
	ck_assert(npu_dtype_is_int(NPU_DT_INT32));
	ck_assert(!npu_dtype_is_int(NPU_DT_NONE));
	ck_assert(!npu_dtype_is_int(NPU_DT_BF16));
	ck_assert(!npu_dtype_is_int(NPU_DT_FP16));
	ck_assert(!npu_dtype_is_int(NPU_DT_FP32));
	ck_assert(!npu_dtype_is_int(99));
	ck_assert(npu_f32_from_bits(0x3fc00000) == 1.5f);
	ck_assert(npu_f32_from_bits(0xff800000) == -INFINITY);
	ck_assert(isnan(npu_f32_from_bits(0x7fc00000)));
}
END_TEST

/* ---- rounding and saturation ---- */

START_TEST(round_sat_modes)
{
	const unsigned E = NPU_ROUND_HALF_EVEN, A = NPU_ROUND_HALF_AWAY;
	const int32_t lo = INT32_MIN, hi = INT32_MAX;

	ck_assert_int_eq(npu_round_sat(0.5f, E, lo, hi), 0);
	ck_assert_int_eq(npu_round_sat(1.5f, E, lo, hi), 2);
	ck_assert_int_eq(npu_round_sat(2.5f, E, lo, hi), 2);
	ck_assert_int_eq(npu_round_sat(-0.5f, E, lo, hi), 0);
	ck_assert_int_eq(npu_round_sat(-1.5f, E, lo, hi), -2);
	ck_assert_int_eq(npu_round_sat(-2.5f, E, lo, hi), -2);
	ck_assert_int_eq(npu_round_sat(2.5000002f, E, lo, hi), 3);
	ck_assert_int_eq(npu_round_sat(0.49999997f, E, lo, hi), 0);

	ck_assert_int_eq(npu_round_sat(0.5f, A, lo, hi), 1);
	ck_assert_int_eq(npu_round_sat(2.5f, A, lo, hi), 3);
	ck_assert_int_eq(npu_round_sat(-0.5f, A, lo, hi), -1);
	ck_assert_int_eq(npu_round_sat(-2.5f, A, lo, hi), -3);
	ck_assert_int_eq(npu_round_sat(2.4999998f, A, lo, hi), 2);
	/* 0.49999997 + 0.5 rounds to 1.0 in float: must still give 0 */
	ck_assert_int_eq(npu_round_sat(0.49999997f, A, lo, hi), 0);
	ck_assert_int_eq(npu_round_sat(-0.49999997f, A, lo, hi), 0);
	/* just below 2^23: the last values with a fraction */
	ck_assert_int_eq(npu_round_sat(8388607.5f, E, lo, hi), 8388608);
	ck_assert_int_eq(npu_round_sat(8388606.5f, E, lo, hi), 8388606);
	ck_assert_int_eq(npu_round_sat(8388606.5f, A, lo, hi), 8388607);
	ck_assert_int_eq(npu_round_sat(16777215.0f, A, lo, hi), 16777215);
}
END_TEST

START_TEST(round_sat_saturation)
{
	const unsigned E = NPU_ROUND_HALF_EVEN, A = NPU_ROUND_HALF_AWAY;

	ck_assert_int_eq(npu_round_sat(300.0f, E, -128, 127), 127);
	ck_assert_int_eq(npu_round_sat(127.4f, E, -128, 127), 127);
	ck_assert_int_eq(npu_round_sat(127.5f, E, -128, 127), 127);
	ck_assert_int_eq(npu_round_sat(-128.5f, A, -128, 127), -128);
	ck_assert_int_eq(npu_round_sat(-1e30f, E, -128, 127), -128);
	ck_assert_int_eq(npu_round_sat(INFINITY, E, 0, 255), 255);
	ck_assert_int_eq(npu_round_sat(-INFINITY, E, 0, 255), 0);
	ck_assert_int_eq(npu_round_sat(-3.0f, E, 0, 255), 0);
	/* NaN -> 0, itself clamped when 0 is out of range */
	ck_assert_int_eq(npu_round_sat(NAN, E, -128, 127), 0);
	ck_assert_int_eq(npu_round_sat(-NAN, A, -128, 127), 0);
	ck_assert_int_eq(npu_round_sat(NAN, E, 5, 10), 5);
	ck_assert_int_eq(npu_round_sat(NAN, E, -10, -5), -5);
	/* INT32 extremes, all without a UB conversion (UBSan watches) */
	ck_assert_int_eq(npu_round_sat(2147483648.0f, E, INT32_MIN, INT32_MAX),
			 INT32_MAX);
	ck_assert_int_eq(npu_round_sat(-2147483648.0f, E, INT32_MIN, INT32_MAX),
			 INT32_MIN);
	ck_assert_int_eq(npu_round_sat(2147483520.0f, A, INT32_MIN, INT32_MAX),
			 2147483520);
	ck_assert_int_eq(npu_round_sat(-2147483904.0f, E, INT32_MIN, INT32_MAX),
			 INT32_MIN);
	ck_assert_int_eq(npu_round_sat(1e20f, A, INT32_MIN, INT32_MAX),
			 INT32_MAX);
	ck_assert_int_eq(npu_round_sat(INFINITY, E, INT32_MIN, INT32_MAX),
			 INT32_MAX);
	ck_assert_int_eq(npu_round_sat(-INFINITY, A, INT32_MIN, INT32_MAX),
			 INT32_MIN);
	ck_assert_int_eq(npu_round_sat(1000.0f, E, -5, 2000000000), 1000);
}
END_TEST

/* ---- buffer conversions ---- */

static const float conv_in[] = {
	0.0f, -0.0f, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 126.5f, 127.5f,
	-128.5f, -129.0f, 254.5f, 255.5f, 1e9f, -1e9f, INFINITY, -INFINITY,
	NAN, 0.49999997f, 3.7f, -3.7f,
};
#define NCONV (sizeof(conv_in) / sizeof(conv_in[0]))

START_TEST(from_f32_int8_uint8)
{
	static const int8_t want_i8_even[NCONV] = {
		0, 0, 0, 2, 2, 0, -2, -2, 126, 127, -128, -128, 127, 127,
		127, -128, 127, -128, 0, 0, 4, -4,
	};
	static const int8_t want_i8_away[NCONV] = {
		0, 0, 1, 2, 3, -1, -2, -3, 127, 127, -128, -128, 127, 127,
		127, -128, 127, -128, 0, 0, 4, -4,
	};
	static const uint8_t want_u8_even[NCONV] = {
		0, 0, 0, 2, 2, 0, 0, 0, 126, 128, 0, 0, 254, 255,
		255, 0, 255, 0, 0, 0, 4, 0,
	};
	static const uint8_t want_u8_away[NCONV] = {
		0, 0, 1, 2, 3, 0, 0, 0, 127, 128, 0, 0, 255, 255,
		255, 0, 255, 0, 0, 0, 4, 0,
	};
	int8_t i8[NCONV];
	uint8_t u8[NCONV];

	npu_kern_from_f32(i8, NPU_DT_INT8, conv_in, NCONV, NPU_ROUND_HALF_EVEN);
	ck_assert_mem_eq(i8, want_i8_even, NCONV);
	npu_kern_from_f32(i8, NPU_DT_INT8, conv_in, NCONV, NPU_ROUND_HALF_AWAY);
	ck_assert_mem_eq(i8, want_i8_away, NCONV);
	npu_kern_from_f32(u8, NPU_DT_UINT8, conv_in, NCONV, NPU_ROUND_HALF_EVEN);
	ck_assert_mem_eq(u8, want_u8_even, NCONV);
	npu_kern_from_f32(u8, NPU_DT_UINT8, conv_in, NCONV, NPU_ROUND_HALF_AWAY);
	ck_assert_mem_eq(u8, want_u8_away, NCONV);
}
END_TEST

START_TEST(from_f32_int32_extremes)
{
	static const float in[] = {
		2147483648.0f, -2147483648.0f, 2147483520.0f, -2147483904.0f,
		INFINITY, -INFINITY, NAN, 1e30f, -1e30f, 16777217.0f, -7.5f,
		8388607.5f,
	};
	static const int32_t even[] = {
		INT32_MAX, INT32_MIN, 2147483520, INT32_MIN, INT32_MAX,
		INT32_MIN, 0, INT32_MAX, INT32_MIN, 16777216, -8, 8388608,
	};
	static const int32_t away[] = {
		INT32_MAX, INT32_MIN, 2147483520, INT32_MIN, INT32_MAX,
		INT32_MIN, 0, INT32_MAX, INT32_MIN, 16777216, -8, 8388608,
	};
	const size_t n = sizeof(in) / sizeof(in[0]);
	/* destination deliberately misaligned by one byte */
	unsigned char buf[sizeof(even) + 1];

	npu_kern_from_f32(buf + 1, NPU_DT_INT32, in, n, NPU_ROUND_HALF_EVEN);
	ck_assert_mem_eq(buf + 1, even, sizeof(even));
	npu_kern_from_f32(buf + 1, NPU_DT_INT32, in, n, NPU_ROUND_HALF_AWAY);
	ck_assert_mem_eq(buf + 1, away, sizeof(away));
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(npu_round_sat(in[i], NPU_ROUND_HALF_EVEN,
					       INT32_MIN, INT32_MAX), even[i]);
}
END_TEST

START_TEST(from_f32_matches_round_sat)
{
	enum { N = 4099 };	/* odd: exercises the vector loop tails */
	float *in = malloc(N * sizeof(*in));
	int8_t *i8 = malloc(N);
	uint8_t *u8 = malloc(N);
	int32_t *i32 = malloc(N * sizeof(*i32));
	unsigned seed = 12345;

	for (size_t i = 0; i < N; i++) {
		seed = seed * 1103515245u + 12345u;
		/* halves and quarters around the int8 range, plus noise */
		in[i] = (float)((int)(seed >> 16) % 1200 - 600) / 4.0f;
		if (i % 7 == 0)
			in[i] = ffrom(seed);	/* any pattern, NaN included */
	}
	for (unsigned mode = 0; mode < 2; mode++) {
		npu_kern_from_f32(i8, NPU_DT_INT8, in, N, mode);
		npu_kern_from_f32(u8, NPU_DT_UINT8, in, N, mode);
		npu_kern_from_f32(i32, NPU_DT_INT32, in, N, mode);
		EXPECT_BEGIN();

		for (size_t i = 0; i < N; i++) {
			EXPECT(i8[i] == npu_round_sat(in[i], mode, -128, 127),
			       "i8 %a mode %u", (double)in[i], mode);
			EXPECT(u8[i] == npu_round_sat(in[i], mode, 0, 255),
			       "u8 %a mode %u", (double)in[i], mode);
			EXPECT(i32[i] == npu_round_sat(in[i], mode, INT32_MIN,
						       INT32_MAX),
			       "i32 %a mode %u", (double)in[i], mode);
		}
		EXPECT_END();
	}
	free(in);
	free(i8);
	free(u8);
	free(i32);
}
END_TEST

START_TEST(to_f32_all_dtypes)
{
	static const int8_t s8[] = { -128, -1, 0, 1, 127 };
	static const uint8_t u8[] = { 0, 1, 128, 255, 7 };
	static const int32_t s32[] = { INT32_MIN, -1, 0, 16777217, INT32_MAX };
	static const uint16_t bf[] = { 0x3f80, 0xc000, 0x7f80, 0x0001, 0x8000 };
	static const uint16_t hf[] = { 0x3c00, 0xc000, 0x7c00, 0x0001, 0x7bff };
	static const float f32[] = { 1.0f, -2.5f, 3e38f, -0.0f, 1e-40f };
	unsigned char buf[32];
	float out[5];

	npu_kern_to_f32(out, s8, NPU_DT_INT8, 5);
	ck_assert(out[0] == -128.0f && out[1] == -1.0f && out[4] == 127.0f);
	npu_kern_to_f32(out, u8, NPU_DT_UINT8, 5);
	ck_assert(out[2] == 128.0f && out[3] == 255.0f && out[4] == 7.0f);
	memcpy(buf + 1, s32, sizeof(s32));	/* unaligned source */
	npu_kern_to_f32(out, buf + 1, NPU_DT_INT32, 5);
	ck_assert(out[0] == -2147483648.0f && out[1] == -1.0f);
	ck_assert(out[3] == 16777216.0f && out[4] == 2147483648.0f);
	memcpy(buf + 1, bf, sizeof(bf));
	npu_kern_to_f32(out, buf + 1, NPU_DT_BF16, 5);
	ck_assert(out[0] == 1.0f && out[1] == -2.0f && out[2] == INFINITY);
	ck_assert(out[3] == 0x1p-133f && out[4] == 0.0f && signbit(out[4]));
	memcpy(buf + 1, hf, sizeof(hf));
	npu_kern_to_f32(out, buf + 1, NPU_DT_FP16, 5);
	ck_assert(out[0] == 1.0f && out[1] == -2.0f && out[2] == INFINITY);
	ck_assert(out[3] == 0x1p-24f && out[4] == 65504.0f);
	npu_kern_to_f32(out, f32, NPU_DT_FP32, 5);
	ck_assert_mem_eq(out, f32, sizeof(f32));
	/* unknown dtype: defined zeros */
	npu_kern_to_f32(out, f32, NPU_DT_NONE, 5);
	for (int i = 0; i < 5; i++)
		ck_assert(out[i] == 0.0f);
}
END_TEST

START_TEST(float_buffers_match_scalar)
{
	enum { N = 1031 };
	float in[N], back[N];
	uint16_t h[N], b[N];
	unsigned seed = 99;

	for (size_t i = 0; i < N; i++) {
		seed = seed * 1664525u + 1013904223u;
		in[i] = ffrom(seed);
	}
	in[0] = NAN;
	in[1] = 65520.0f;
	in[2] = 0x1p-25f;
	npu_kern_from_f32(h, NPU_DT_FP16, in, N, NPU_ROUND_HALF_EVEN);
	npu_kern_from_f32(b, NPU_DT_BF16, in, N, NPU_ROUND_HALF_AWAY);
	EXPECT_BEGIN();

	for (size_t i = 0; i < N; i++) {
		EXPECT(h[i] == npu_f32_to_f16(in[i]), "f16 %a", (double)in[i]);
		EXPECT(b[i] == npu_f32_to_bf16(in[i]), "bf16 %a", (double)in[i]);
	}
	npu_kern_to_f32(back, h, NPU_DT_FP16, N);
	for (size_t i = 0; i < N; i++)
		EXPECT(fbits(back[i]) == fbits(npu_f16_to_f32(h[i])), "h %zu", i);
	npu_kern_to_f32(back, b, NPU_DT_BF16, N);
	for (size_t i = 0; i < N; i++)
		EXPECT(fbits(back[i]) == fbits(npu_bf16_to_f32(b[i])), "b %zu", i);
	EXPECT_END();
	/* FP32 "conversion" is a copy, in place included */
	npu_kern_from_f32(back, NPU_DT_FP32, in, N, 0);
	ck_assert_mem_eq(back, in, sizeof(in));
	npu_kern_from_f32(back, NPU_DT_FP32, back, N, 0);
	ck_assert_mem_eq(back, in, sizeof(in));
}
END_TEST

/*
 * The bf16 buffer loop against the scalar conversion, for every length up
 * to three 16-element vectors and every start modulo 16: edge patterns in
 * every lane (NaN payloads that would round into the exponent, ties, the
 * carry into inf, subnormals, signed zeros), and no byte written past n.
 */
START_TEST(bf16_buffer_lengths_and_edges)
{
	static const uint32_t edge[] = {
		0x7f800001, 0xff80ffff, 0x7fffffff, 0x7fc00000, 0x7f800000,
		0xff800000, 0x3f808000, 0x3f818000, 0xbf818000, 0x7f7fffff,
		0x7f7f8000, 0x00000001, 0x807fffff, 0x00008000, 0x00000000,
		0x80000000, 0x3f807fff, 0x3f808001, 0x4049ffff, 0xc0000000,
	};
	enum { NE = sizeof(edge) / sizeof(edge[0]), MAXN = 48 };
	float in[16 + MAXN];
	uint16_t out[16 + MAXN + 4];

	EXPECT_BEGIN();
	for (size_t i = 0; i < 16 + MAXN; i++)
		in[i] = ffrom(edge[(i * 7) % NE]);
	for (size_t start = 0; start < 16; start++) {
		for (size_t n = 0; n <= MAXN; n++) {
			memset(out, 0xa5, sizeof(out));
			npu_kern_from_f32(out + start, NPU_DT_BF16, in + start, n, 0);
			for (size_t i = 0; i < n; i++)
				EXPECT(out[start + i] == npu_f32_to_bf16(in[start + i]),
				       "start %zu n %zu lane %zu: %04x for %08x", start, n, i,
				       out[start + i], fbits(in[start + i]));
			for (size_t i = start + n; i < 16 + MAXN + 4; i++)
				EXPECT(out[i] == 0xa5a5, "start %zu n %zu: wrote element %zu",
				       start, n, i);
			for (size_t i = 0; i < start; i++)
				EXPECT(out[i] == 0xa5a5, "start %zu n %zu: wrote element %zu",
				       start, n, i);
		}
	}
	EXPECT_END();
}
END_TEST

static Suite *kern_dtype_suite(void)
{
	Suite *s = suite_create("kern_dtype");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, bf16_exact_values);
	tcase_add_test(tc, bf16_round_ties);
	tcase_add_test(tc, bf16_special_and_subnormal);
	tcase_add_test(tc, bf16_sweep_vs_reference);
	tcase_add_test(tc, f16_decode_exhaustive);
	tcase_add_test(tc, f16_edges);
	tcase_add_test(tc, f16_sweep_vs_reference);
	tcase_add_test(tc, dtype_props);
	tcase_add_test(tc, round_sat_modes);
	tcase_add_test(tc, round_sat_saturation);
	tcase_add_test(tc, from_f32_int8_uint8);
	tcase_add_test(tc, from_f32_int32_extremes);
	tcase_add_test(tc, from_f32_matches_round_sat);
	tcase_add_test(tc, to_f32_all_dtypes);
	tcase_add_test(tc, float_buffers_match_scalar);
	tcase_add_test(tc, bf16_buffer_lengths_and_edges);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(kern_dtype_suite)
