// SPDX-License-Identifier: MIT
/*
 * Scalar element types of the device core: bf16/f16 <-> f32 conversion,
 * rounding and saturation to the integer types, and whole-buffer
 * conversion loops.
 *
 * Everything here is written without float->int conversions of values that
 * may be out of range (undefined behaviour in C) and without relying on
 * libm rounding functions: the rounding helpers below use the classic
 * "add 2^23" trick, which needs only the default round-to-nearest-even
 * mode, and compile to branch-free code that GCC can vectorize at -O3
 * with plain SSE2.
 */
#include <math.h>
#include <string.h>

#include "npu_kern.h"

/* ---- bf16 ---- */

static inline uint16_t f32_to_bf16(float f)
{
	uint32_t u = npu_f32_bits(f);
	/*
	 * A NaN must not be rounded: its payload could carry into the
	 * exponent (-> inf) or vanish (-> inf).  Keep the top payload bits
	 * and force the quiet bit so the result is always a NaN.
	 */
	uint32_t nan = (u >> 16) | 0x0040u;
	/*
	 * Round to nearest even on the 16 dropped bits: adding 0x7fff rounds
	 * up anything above half, and the kept LSB breaks the exact tie.  A
	 * carry out of the mantissa correctly bumps the exponent, up to inf.
	 */
	uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
	/* Both computed, one selected: the buffer loops vectorize. */
	uint32_t m = -(uint32_t)((u & 0x7fffffffu) > 0x7f800000u);

	return (uint16_t)((nan & m) | (rounded & ~m));
}

uint16_t npu_f32_to_bf16(float f)
{
	return f32_to_bf16(f);
}

/* ---- IEEE binary16 ---- */

/*
 * The binary16 conversions compute every case and pick one with mask
 * selects instead of branching, so the whole-buffer loops vectorize.
 */
static inline uint32_t select_u32(bool c, uint32_t a, uint32_t b)
{
	uint32_t m = -(uint32_t)c;

	return (a & m) | (b & ~m);
}

static inline float f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t em = h & 0x7fffu;	/* exponent and mantissa */
	/* normal: rebias the exponent from 15 to 127 */
	uint32_t normal = (em << 13) + ((127u - 15u) << 23);
	/* inf/NaN: all-ones exponent, payload moved up (NaN stays NaN) */
	uint32_t infnan = 0x7f800000u | ((em & 0x3ffu) << 13);
	/* zero or subnormal: mantissa * 2^-24, exact in binary32 */
	uint32_t sub = npu_f32_bits((float)(int32_t)em * 0x1p-24f);
	uint32_t out = select_u32(em >= 0x7c00u, infnan,
				  select_u32(em >= 0x0400u, normal, sub));

	return npu_f32_from_bits(sign | out);
}

static inline uint16_t f32_to_f16(float f)
{
	uint32_t u = npu_f32_bits(f);
	uint32_t sign = (u >> 16) & 0x8000u;
	uint32_t a = u & 0x7fffffffu;
	/* NaN: quiet, keep the top payload bits */
	uint32_t nan = 0x7e00u | ((a >> 13) & 0x3ffu);
	/*
	 * Normal half (>= 2^-14): rebias, then round the 13 dropped bits to
	 * nearest even (0xfff rounds up above half, the kept LSB breaks the
	 * tie); a mantissa carry bumps the exponent.  Unsigned wrap-around
	 * for the other cases is harmless: they are not selected.
	 */
	uint32_t t = a - ((127u - 15u) << 23);
	uint32_t normal = (t + 0xfffu + ((t >> 13) & 1u)) >> 13;
	/*
	 * Subnormal half (< 2^-14): the result is |f| / 2^-24 rounded to
	 * nearest even, at most 1024 (the smallest normal, which is then the
	 * correct encoding).  The scaling by 2^24 is exact; adding 2^23 makes
	 * the FPU round to an integer, which lands in the low mantissa bits.
	 */
	uint32_t sub = npu_f32_bits(fabsf(f) * 0x1p24f + 0x1p23f) - 0x4b000000u;
	/*
	 * 65520 (0x477ff000) is the midpoint between the largest half (65504,
	 * odd mantissa) and 2^16, so ties-to-even sends it and everything
	 * above, including inf, to inf.
	 */
	uint32_t out = select_u32(a > 0x7f800000u, nan,
			select_u32(a >= 0x477ff000u, 0x7c00u,
			select_u32(a >= 0x38800000u, normal, sub)));

	return (uint16_t)(sign | out);
}

float npu_f16_to_f32(uint16_t v)
{
	return f16_to_f32(v);
}

uint16_t npu_f32_to_f16(float f)
{
	return f32_to_f16(f);
}

/* ---- dtype properties ---- */

size_t npu_hw_dtype_size(unsigned dtype)
{
	switch (dtype) {
	case NPU_DT_INT8:
	case NPU_DT_UINT8:
		return 1;
	case NPU_DT_BF16:
	case NPU_DT_FP16:
		return 2;
	case NPU_DT_INT32:
	case NPU_DT_FP32:
		return 4;
	default:
		return 0;
	}
}

bool npu_dtype_is_int(unsigned dtype)
{
	return dtype == NPU_DT_INT8 || dtype == NPU_DT_UINT8 ||
	       dtype == NPU_DT_INT32;
}

/* ---- rounding ---- */

/*
 * c ? a : b as bit masks.  GCC sinks a computation used in only one arm of
 * a ?: into a branch and, with -ftrapping-math (the default), then refuses
 * to if-convert it, which stops vectorization; a mask blend has no branch.
 */
static inline float select_f(bool c, float a, float b)
{
	uint32_t m = -(uint32_t)c;

	return npu_f32_from_bits((npu_f32_bits(a) & m) | (npu_f32_bits(b) & ~m));
}

/*
 * Round half to even, keeping the sign (so -0.4 -> -0.0).  For |x| < 2^23,
 * |x| + 2^23 lies in [2^23, 2^24) where the float spacing is 1, so the FPU's
 * default rounding does the work; larger values are already integers and
 * inf/NaN fail the comparison and pass through.
 */
static inline float round_half_even(float x)
{
	float a = fabsf(x);
	float big = (a + 0x1p23f) - 0x1p23f;	/* always computed: no branch */

	return copysignf(select_f(a < 0x1p23f, big, a), x);
}

/*
 * Round half away from zero.  Adding 0.5 and truncating is wrong for
 * 0.49999997 (the sum rounds up to 1), so truncate first and compare the
 * exact fractional part instead.
 */
static inline float round_half_away(float x)
{
	float a = fabsf(x);
	float big = (a + 0x1p23f) - 0x1p23f;
	float t = select_f(a < 0x1p23f, big, a);

	t -= select_f(t > a, 1.0f, 0.0f);		/* trunc(a) */
	t += select_f(a - t >= 0.5f, 1.0f, 0.0f);	/* a - t is exact */
	return copysignf(t, x);
}

/* any mode other than NPU_ROUND_HALF_AWAY rounds half to even */
static inline float round_mode(float x, unsigned mode)
{
	return mode == NPU_ROUND_HALF_AWAY ? round_half_away(x) :
					     round_half_even(x);
}

int32_t npu_round_sat(float v, unsigned round_mode_, int32_t lo, int32_t hi)
{
	float r;

	if (lo > hi)		/* degenerate range: the formula gives hi */
		return hi;
	if (isnan(v))
		return 0 < lo ? lo : (0 > hi ? hi : 0);
	r = round_mode(v, round_mode_);
	/*
	 * Compare in double: every int32 bound and every float are exact
	 * there, so the range checks are exact and the final conversion is
	 * of an in-range integral value.
	 */
	if ((double)r >= (double)hi)
		return hi;
	if ((double)r <= (double)lo)
		return lo;
	return (int32_t)r;
}

/* ---- buffer conversion ---- */

void npu_kern_to_f32(float *dst, const void *src, unsigned dtype, size_t n)
{
	size_t i;

	switch (dtype) {
	case NPU_DT_INT8: {
		const int8_t *s = src;

		for (i = 0; i < n; i++)
			dst[i] = (float)s[i];
		break;
	}
	case NPU_DT_UINT8: {
		const uint8_t *s = src;

		for (i = 0; i < n; i++)
			dst[i] = (float)s[i];
		break;
	}
	case NPU_DT_INT32: {
		/* memcpy per element: src need not be 4-byte aligned */
		const unsigned char *s = src;

		for (i = 0; i < n; i++) {
			int32_t v;

			memcpy(&v, s + 4 * i, 4);
			dst[i] = (float)v;
		}
		break;
	}
	case NPU_DT_BF16: {
		const unsigned char *s = src;

		for (i = 0; i < n; i++) {
			uint16_t v;

			memcpy(&v, s + 2 * i, 2);
			dst[i] = npu_bf16_to_f32(v);
		}
		break;
	}
	case NPU_DT_FP16: {
		const unsigned char *s = src;

		for (i = 0; i < n; i++) {
			uint16_t v;

			memcpy(&v, s + 2 * i, 2);
			dst[i] = f16_to_f32(v);
		}
		break;
	}
	case NPU_DT_FP32:
		if ((const void *)dst != src)
			memmove(dst, src, n * sizeof(float));
		break;
	default:
		/* NONE or unknown: callers validate; give defined zeros */
		memset(dst, 0, n * sizeof(float));
		break;
	}
}

/*
 * Integer stores: NaN -> 0, round, clamp in float, then convert.  The clamp
 * bounds are exactly representable and make the conversion in range.  Every
 * step is a mask select (no branch) and the rounding mode is a compile-time
 * constant per instantiation, so the loops vectorize with plain SSE2.
 */
static inline int32_t select_i32(bool c, int32_t a, int32_t b)
{
	uint32_t m = -(uint32_t)c;

	return (int32_t)(((uint32_t)a & m) | ((uint32_t)b & ~m));
}

#define DEFINE_STORE_I8(name, type, lo, hi, round)			\
static void name(type *d, const float *s, size_t n)			\
{									\
	for (size_t i = 0; i < n; i++) {				\
		float v = select_f(s[i] != s[i], 0.0f, s[i]);		\
									\
		v = round(v);						\
		v = select_f(v < (lo), (lo), v);			\
		v = select_f(v > (hi), (hi), v);			\
		d[i] = (type)(int32_t)v;				\
	}								\
}

DEFINE_STORE_I8(store_i8_even, int8_t, -128.0f, 127.0f, round_half_even)
DEFINE_STORE_I8(store_i8_away, int8_t, -128.0f, 127.0f, round_half_away)
DEFINE_STORE_I8(store_u8_even, uint8_t, 0.0f, 255.0f, round_half_even)
DEFINE_STORE_I8(store_u8_away, uint8_t, 0.0f, 255.0f, round_half_away)

/*
 * -2^31 is a float; the largest float below 2^31 is 2147483520.  Clamp
 * into [-2^31, 2147483520] for a defined conversion, then patch values
 * >= 2^31 to INT32_MAX.  memcpy: dst need not be 4-byte aligned.
 */
#define DEFINE_STORE_I32(name, round)					\
static void name(unsigned char *d, const float *s, size_t n)		\
{									\
	for (size_t i = 0; i < n; i++) {				\
		float v = round(select_f(s[i] != s[i], 0.0f, s[i]));	\
		float c = select_f(v < -0x1p31f, -0x1p31f, v);		\
		int32_t r;						\
									\
		c = select_f(c > 2147483520.0f, 2147483520.0f, c);	\
		r = select_i32(v >= 0x1p31f, INT32_MAX, (int32_t)c);	\
		memcpy(d + 4 * i, &r, 4);				\
	}								\
}

DEFINE_STORE_I32(store_i32_even, round_half_even)
DEFINE_STORE_I32(store_i32_away, round_half_away)

/*
 * Every CVU and convolution result with a bf16 destination passes here:
 * baseline SSE2 has no 32 -> 16-bit narrowing and spends most of the loop
 * shuffling, so the loop is also compiled for AVX2 (one ifunc pick at
 * load time); AVX-512 CPUs take store_bf16_avx512 below.  The same
 * integer operations: the same bits.
 */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)
#define BF16_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define BF16_CLONES
#endif

BF16_CLONES
static void store_bf16_loop(unsigned char *d, const float *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint16_t v = f32_to_bf16(s[i]);

		memcpy(d + 2 * i, &v, 2);
	}
}

#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)
#include <immintrin.h>

/*
 * f32_to_bf16 on 16 elements at a time.  GCC, compiling the loop above
 * for AVX-512, kept 8 (256-bit vectors, narrowed by pack and permute),
 * 6-9% of BlazeFace; this one narrows with VPMOVDW and selects the
 * NaNs with a mask register.  The same integer operations: the same bits
 * (VCVTNEPS2BF16 would be shorter still but flushes subnormal inputs).
 */
__attribute__((target("avx512f")))
static void store_bf16_avx512(unsigned char *d, const float *s, size_t n)
{
	const __m512i one = _mm512_set1_epi32(1);
	const __m512i half = _mm512_set1_epi32(0x7fff);
	const __m512i quiet = _mm512_set1_epi32(0x40);
	const __m512i magnitude = _mm512_set1_epi32(0x7fffffff);
	const __m512i inf = _mm512_set1_epi32(0x7f800000);

	for (size_t i = 0; i < n; i += 16) {
		/* The last vector's lanes past n neither read nor written. */
		const __mmask16 k = n - i >= 16 ? 0xffff : (__mmask16)((1u << (n - i)) - 1);
		__m512i u, top, r;
		__mmask16 nan;

		u = _mm512_maskz_loadu_epi32(k, s + i);
		top = _mm512_srli_epi32(u, 16);
		r = _mm512_add_epi32(_mm512_add_epi32(u, half), _mm512_and_si512(top, one));
		r = _mm512_srli_epi32(r, 16);
		nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, magnitude), inf);
		r = _mm512_mask_or_epi32(r, nan, top, quiet);
		_mm512_mask_cvtepi32_storeu_epi16(d + 2 * i, k, r);
	}
}

static void store_bf16(unsigned char *d, const float *s, size_t n)
{
	/* A load and a test of the CPU model libgcc filled in at start-up. */
	if (__builtin_cpu_supports("avx512f"))
		store_bf16_avx512(d, s, n);
	else
		store_bf16_loop(d, s, n);
}
#else
#define store_bf16 store_bf16_loop
#endif

void npu_kern_from_f32(void *dst, unsigned dtype, const float *src, size_t n,
		       unsigned round_mode_)
{
	unsigned char *d = dst;
	bool away = round_mode_ == NPU_ROUND_HALF_AWAY;
	size_t i;

	/* the mode test is hoisted: one loop per (dtype, mode) */
	switch (dtype) {
	case NPU_DT_INT8:
		(away ? store_i8_away : store_i8_even)(dst, src, n);
		break;
	case NPU_DT_UINT8:
		(away ? store_u8_away : store_u8_even)(dst, src, n);
		break;
	case NPU_DT_INT32:
		(away ? store_i32_away : store_i32_even)(dst, src, n);
		break;
	case NPU_DT_BF16:
		store_bf16(d, src, n);
		break;
	case NPU_DT_FP16:
		for (i = 0; i < n; i++) {
			uint16_t v = f32_to_f16(src[i]);

			memcpy(d + 2 * i, &v, 2);
		}
		break;
	case NPU_DT_FP32:
		if (dst != (const void *)src)
			memmove(dst, src, n * sizeof(float));
		break;
	default:
		/* NONE or unknown: the element size is unknown, write nothing */
		break;
	}
}
