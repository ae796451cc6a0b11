// SPDX-License-Identifier: MIT
/*
 * Vector-unit kernels (CVU): elementwise functions, row reductions,
 * softmax, layer and RMS normalisation and 2-D pooling, all in fp32.
 *
 * Performance notes.  The library is built at -O3 without -march, i.e. for
 * the SSE2 baseline and with the default -fmath-errno -ftrapping-math.  To
 * keep the loops vectorizable under those flags:
 *  - conditionals are written as mask selects (select_f) rather than ?:
 *    with arithmetic in an arm: GCC sinks such arithmetic into a branch
 *    and then refuses to if-convert it because it "may trap";
 *  - reductions accumulate into NLANES independent partial sums, which
 *    GCC turns into SIMD adds without reassociation flags (and which are
 *    more accurate than one serial sum);
 *  - exp, tanh, erf, GELU and SiLU use own branch-free implementations (1-4
 *    ulp) that vectorize; libm's are scalar calls, 5-30 ns per element.
 *    These loops also get an AVX2 build selected at run time.
 * log and pow call libm per element.
 *
 * Aliasing: y may be the same buffer as x (in place) for the elementwise
 * functions, reduce, softmax and layernorm; partial overlap is not
 * supported.  pool2d needs distinct buffers.
 */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "npu_kern.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && \
	!defined(__AVX2__)
#define KERN_X86_DISPATCH 1
#else
#define KERN_X86_DISPATCH 0
#endif

#define ALWAYS_INLINE inline __attribute__((always_inline))

/* partial sums per reduction: two SSE or one AVX register of floats */
#define NLANES 8

/* c ? a : b without a branch (see the file comment) */
static ALWAYS_INLINE float select_f(bool c, float a, float b)
{
	uint32_t m = -(uint32_t)c;

	return npu_f32_from_bits((npu_f32_bits(a) & m) | (npu_f32_bits(b) & ~m));
}

/*
 * Round half to even for |x| < 2^23 via the FPU's default rounding of
 * |x| + 2^23 (float spacing 1 there); larger values, inf and NaN are
 * already integral and pass through.  The sign is restored last, so
 * -0.4 -> -0.0 like rintf.
 */
static ALWAYS_INLINE float round_even_abs(float a)
{
	float big = (a + 0x1p23f) - 0x1p23f;

	return select_f(a < 0x1p23f, big, a);
}

static ALWAYS_INLINE float round_even(float x)
{
	return copysignf(round_even_abs(fabsf(x)), x);
}

/* floor/ceil from round-to-even plus a correction; sign of x kept (-0.5
 * ceils to -0.0), NaN and inf pass through */
static ALWAYS_INLINE float floor_f(float x)
{
	float r = round_even(x);

	r -= select_f(r > x, 1.0f, 0.0f);
	return copysignf(r, x);
}

static ALWAYS_INLINE float ceil_f(float x)
{
	float r = round_even(x);

	r += select_f(r < x, 1.0f, 0.0f);
	return copysignf(r, x);
}

/*
 * exp(x) in about 1 ulp, branch-free.  x = n ln2 + r with |r| <= ln2/2
 * (Cody-Waite split of ln2 so n * LN2_HI is exact), e^r by its degree-7
 * Taylor polynomial (truncation error < 1e-8 relative), and 2^n applied
 * as two exact power-of-two factors so that results in the subnormal
 * range are rounded once, correctly.  Inputs are clamped to a range that
 * still overflows to inf / underflows to 0; NaN fails both clamps and
 * propagates through the polynomial.  The int conversion of n reads the
 * bits of the rounding sum instead of converting a float, so it is defined
 * for every input.
 */
static ALWAYS_INLINE float exp_fast(float x)
{
	const float round_magic = 0x1.8p23f;
	float t, nf, r, p, s1, s2;
	int32_t n, n1, n2;

	x = select_f(x < -104.0f, -104.0f, x);
	x = select_f(x > 88.8f, 88.8f, x);
	t = x * 1.44269504f + round_magic;	/* n = round(x / ln2) */
	n = (int32_t)(npu_f32_bits(t) - 0x4b400000u);
	nf = t - round_magic;
	r = x - nf * 0.693359375f;		/* LN2_HI: 9 significant bits */
	r = r - nf * -2.12194440e-4f;		/* LN2_LO */
	p = 1.0f / 5040.0f;
	p = p * r + 1.0f / 720.0f;
	p = p * r + 1.0f / 120.0f;
	p = p * r + 1.0f / 24.0f;
	p = p * r + 1.0f / 6.0f;
	p = p * r + 0.5f;
	p = p * r * r + r;	/* keep the two large terms exact to the end */
	p = p + 1.0f;
	n1 = n / 2;		/* n in [-150, 128]: both halves are normal */
	n2 = n - n1;
	s1 = npu_f32_from_bits((uint32_t)(n1 + 127) << 23);
	s2 = npu_f32_from_bits((uint32_t)(n2 + 127) << 23);
	return (p * s1) * s2;
}

/*
 * e^x - 1 for x in [0, 88], accurate also near 0 where e^x - 1 cancels:
 * with x = n ln2 + r, e^x - 1 = 2^n q + (2^n - 1) where q = e^r - 1 is
 * the polynomial without its leading 1, both terms exact-ish.
 */
static ALWAYS_INLINE float expm1_pos(float x)
{
	const float round_magic = 0x1.8p23f;
	float t, nf, r, q, s;
	int32_t n;

	t = x * 1.44269504f + round_magic;
	n = (int32_t)(npu_f32_bits(t) - 0x4b400000u);
	nf = t - round_magic;
	r = x - nf * 0.693359375f;
	r = r - nf * -2.12194440e-4f;
	q = 1.0f / 5040.0f;
	q = q * r + 1.0f / 720.0f;
	q = q * r + 1.0f / 120.0f;
	q = q * r + 1.0f / 24.0f;
	q = q * r + 1.0f / 6.0f;
	q = q * r + 0.5f;
	q = q * r * r + r;
	s = npu_f32_from_bits((uint32_t)(n + 127) << 23);	/* n in [0, 127] */
	return s * q + (s - 1.0f);
}

/*
 * tanh(|x|) = u / (u + 2) with u = e^(2|x|) - 1; expm1 keeps small
 * arguments accurate (tanh(x) ~ x) and clamping 2|x| to 88 gives exactly
 * 1 for large |x| instead of inf / inf.  About 3 ulp.
 */
static ALWAYS_INLINE float tanh_fast(float x)
{
	float a2 = 2.0f * fabsf(x);
	float u = expm1_pos(select_f(a2 > 88.0f, 88.0f, a2));

	return copysignf(u / (u + 2.0f), x);
}

/*
 * erf and erfc without libm, branch-free (all pieces are computed and one
 * is selected), about 2-4 ulp:
 *  - |x| < 1/2: erf(x) = x P(x^2), the Maclaurin series to x^17
 *    (truncation ~1e-11);
 *  - 1/2 <= t < 4: erfc(t) = e^(-t^2) G(t), G a degree-13 Chebyshev fit
 *    of erfc(t) e^(t^2) in s = (t - 2.25) / 1.75 (relative error 1e-9);
 *    the split at 1/2 keeps 1 - erf and 1 - erfc free of cancellation;
 *  - 4 <= t <= 10.5: erfc(t) = e^(-t^2) H(1/t) / t, H a degree-5 fit in
 *    1/t (< 1e-8); beyond 10.5 erfc underflows to 0.
 * e^(-t^2) is computed from a 12-bit head vh of its argument, whose square
 * is exact, and the small remainder: rounding t^2 itself would cost up to
 * 1e-6 relative at t ~ 4.  GELU passes x with the factor 1/2 instead of
 * x / sqrt 2 (whose rounding would cost as much again).
 */
static ALWAYS_INLINE float erf_small(float a)
{
	float z = a * a;
	float p = 1.646211444e-06f;

	p = p * z + -1.492565025e-05f;
	p = p * z + 1.205533263e-04f;
	p = p * z + -8.548327023e-04f;
	p = p * z + 5.223977845e-03f;
	p = p * z + -2.686617151e-02f;
	p = p * z + 1.128379181e-01f;
	p = p * z + -3.761263788e-01f;
	p = p * z + 1.128379226e+00f;
	return a * p;
}

/* e^(-k v^2) for v >= 0 and k = 1 or 1/2 (exact scalings) */
static ALWAYS_INLINE float exp_neg_sq(float v, float k)
{
	float vh = npu_f32_from_bits(npu_f32_bits(v) & 0xfffff000u);
	float vl = v - vh;

	return exp_fast(-(k * (vh * vh))) * exp_fast(-(k * (vl * (v + vh))));
}

/* erfc(t) for t in [0.5, 10.5], given e = e^(-t^2) */
static ALWAYS_INLINE float erfc_big(float t, float e)
{
	float s = (t - 2.25f) / 1.75f;
	float u = 1.0f / t;
	float s2 = (u - 0.172619048f) / 0.0773809524f;
	float g = -1.105516130e-04f, h = -1.230023372e-06f;

	g = g * s + 2.467101440e-04f;
	g = g * s + -1.782766485e-04f;
	g = g * s + 4.018732870e-04f;
	g = g * s + -1.332131098e-03f;
	g = g * s + 2.720759483e-03f;
	g = g * s + -5.130387377e-03f;
	g = g * s + 9.960595518e-03f;
	g = g * s + -1.877919585e-02f;
	g = g * s + 3.395081684e-02f;
	g = g * s + -5.896350369e-02f;
	g = g * s + 9.797687083e-02f;
	g = g * s + -1.548513919e-01f;
	g = g * s + 2.310872674e-01f;
	h = h * s2 + 4.161975994e-06f;
	h = h * s2 + 9.640217468e-05f;
	h = h * s2 + -1.306981198e-03f;
	h = h * s2 + -6.928730756e-03f;
	h = h * s2 + 5.561342239e-01f;
	return e * select_f(t < 4.0f, g, h * u);
}

/* |t| clamped into erfc_big's domain; NaN passes through */
static ALWAYS_INLINE float erf_big_arg(float a)
{
	a = select_f(a > 10.5f, 10.5f, a);
	return select_f(a < 0.5f, 0.5f, a);
}

static ALWAYS_INLINE float erf_fast(float x)
{
	float a = fabsf(x);
	float ab = erf_big_arg(a);
	float big = 1.0f - erfc_big(ab, exp_neg_sq(ab, 1.0f));

	return copysignf(select_f(a < 0.5f, erf_small(a), big), x);
}

/*
 * 0.5 x (1 + erf(x / sqrt 2)) == 0.5 x erfc(-x / sqrt 2): the erfc form
 * keeps full relative precision for negative x, where 1 + erf cancels.
 * e^(-t^2) = e^(-x^2 / 2) comes from x itself (clamped: 16^2 / 2 = 128
 * already underflows), so only the slowly varying G/H see the rounded t.
 */
static ALWAYS_INLINE float gelu_fast(float x)
{
	float t = x * -0.707106781f;
	float a = fabsf(t);
	float ax = fabsf(x);
	float e = exp_neg_sq(select_f(ax > 16.0f, 16.0f, ax), 0.5f);
	/* erfc(|t|): 1 - erf does not cancel for |t| < 1/2 (erf < 0.53) */
	float ec = select_f(a < 0.5f, 1.0f - erf_small(a),
			    erfc_big(erf_big_arg(a), e));

	return 0.5f * x * select_f(t < 0.0f, 2.0f - ec, ec);
}

/* ---- runtime ISA selection for the exp-heavy loops ---- */

#if KERN_X86_DISPATCH
/* npu_kern_vec_force_isa's choice, or -1: the best the CPU has */
static atomic_int forced_isa = -1;

static bool isa_allowed(int isa)
{
	int f = atomic_load_explicit(&forced_isa, memory_order_relaxed);

	return f < 0 || f >= isa;
}

/*
 * Whether to run the AVX2 / AVX-512 build: the CPU has it and no forced
 * choice rules it out.  Cheap: a load and a bit test after libgcc's
 * constructor ran.
 */
static bool use_avx2(void)
{
	__builtin_cpu_init();
	return isa_allowed(NPU_KERN_ISA_AVX2) && __builtin_cpu_supports("avx2");
}

static bool use_avx512(void)
{
	__builtin_cpu_init();
	return isa_allowed(NPU_KERN_ISA_AVX512) && __builtin_cpu_supports("avx512f");
}

bool npu_kern_vec_force_isa(int isa)
{
	atomic_store_explicit(&forced_isa, isa, memory_order_relaxed);
	switch (isa) {
	case NPU_KERN_ISA_AVX512:
		return use_avx512();
	case NPU_KERN_ISA_AVX2:
		return use_avx2();
	default:
		return true;
	}
}

/*
 * name##_avx512, name##_avx2 and name##_base are the same always_inline
 * body compiled for three ISAs; name() picks one per call.  They give the
 * same bits: every element goes through the same IEEE operations (ISO C
 * mode: no contraction into FMAs), and reductions keep their NLANES
 * partial sums, whatever the vector width.
 */
#define DISPATCH_DEFINE(name, params, args)				\
	static __attribute__((target("avx512f"))) void name##_avx512 params \
	{ name##_body args; }						\
	static __attribute__((target("avx2"))) void name##_avx2 params \
	{ name##_body args; }						\
	static void name##_base params { name##_body args; }		\
	static void name params						\
	{								\
		if (use_avx512())					\
			name##_avx512 args;				\
		else if (use_avx2())				\
			name##_avx2 args;				\
		else							\
			name##_base args;				\
	}
#else
#define DISPATCH_DEFINE(name, params, args)				\
	static void name params { name##_body args; }

bool npu_kern_vec_force_isa(int isa)
{
	return isa <= NPU_KERN_ISA_BASE;
}
#endif

/* ---- elementwise ---- */

static ALWAYS_INLINE void exp_loop_body(float *y, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		y[i] = exp_fast(x[i]);
}
DISPATCH_DEFINE(exp_loop, (float *y, const float *x, size_t n), (y, x, n))

/*
 * With e = e^-|x| in (0, 1]: sigmoid(x) = 1 / (1 + e) for x >= 0 and
 * e / (1 + e) for x < 0.  e never overflows, so very negative x still get
 * their tiny (subnormal) values instead of 1 / (1 + inf) = 0.
 */
static ALWAYS_INLINE void sigmoid_loop_body(float *y, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		float e = exp_fast(-fabsf(x[i]));
		float r = 1.0f / (1.0f + e);

		y[i] = select_f(x[i] < 0.0f, e * r, r);
	}
}
DISPATCH_DEFINE(sigmoid_loop, (float *y, const float *x, size_t n), (y, x, n))

/*
 * SiLU: x sigmoid(x), the sigmoid as above.  The tanh form of GELU is
 * x sigmoid(2u) with u = sqrt(2/pi) (x + 0.044715 x^3), since
 * (1 + tanh(u)) / 2 = sigmoid(2u): no 1 + tanh cancellation for
 * negative x, so the result keeps its relative precision there too.
 */
static ALWAYS_INLINE float x_sigmoid(float x, float t)
{
	float e = exp_fast(-fabsf(t));
	float r = 1.0f / (1.0f + e);

	return x * select_f(t < 0.0f, e * r, r);
}

static ALWAYS_INLINE void silu_loop_body(float *y, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		y[i] = x_sigmoid(x[i], x[i]);
}
DISPATCH_DEFINE(silu_loop, (float *y, const float *x, size_t n), (y, x, n))

static ALWAYS_INLINE void gelu_tanh_loop_body(float *y, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		float v = x[i];

		/* 2 sqrt(2/pi) = 1.5957691216 */
		y[i] = x_sigmoid(v, 1.5957691216f * (v + 0.044715f * v * v * v));
	}
}
DISPATCH_DEFINE(gelu_tanh_loop, (float *y, const float *x, size_t n), (y, x, n))

static ALWAYS_INLINE void tanh_loop_body(float *y, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		y[i] = tanh_fast(x[i]);
}
DISPATCH_DEFINE(tanh_loop, (float *y, const float *x, size_t n), (y, x, n))

static ALWAYS_INLINE void erf_loop_body(float *y, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		y[i] = erf_fast(x[i]);
}
DISPATCH_DEFINE(erf_loop, (float *y, const float *x, size_t n), (y, x, n))

static ALWAYS_INLINE void gelu_loop_body(float *y, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		y[i] = gelu_fast(x[i]);
}
DISPATCH_DEFINE(gelu_loop, (float *y, const float *x, size_t n), (y, x, n))

/*
 * sqrtf in a loop is not vectorized with -fmath-errno (it keeps a scalar
 * errno path for negative inputs); SQRTPS is IEEE correctly rounded like
 * sqrtf and gives NaN for negatives, so use it directly where available.
 */
static void sqrt_loop(float *y, const float *x, size_t n, bool recip)
{
	size_t i = 0;

#if defined(__SSE2__)
	const __m128 one = _mm_set1_ps(1.0f);

	for (; i + 4 <= n; i += 4) {
		__m128 v = _mm_sqrt_ps(_mm_loadu_ps(x + i));

		if (recip)
			v = _mm_div_ps(one, v);
		_mm_storeu_ps(y + i, v);
	}
#endif
	for (; i < n; i++)
		y[i] = recip ? 1.0f / sqrtf(x[i]) : sqrtf(x[i]);
}

#define UNARY_LOOP(expr)						\
	do {								\
		for (size_t i_ = 0; i_ < n; i_++) {			\
			float v = x[i_];				\
			y[i_] = (expr);					\
		}							\
	} while (0)

bool npu_fn_is_unary(unsigned fn)
{
	return fn < NPU_FN_UNARY_END || (fn >= NPU_FN_SIN && fn < NPU_FN_UNARY2_END) ||
	       (fn >= NPU_FN_NOT && fn < NPU_FN_UNARY3_END);
}

bool npu_fn_is_binary(unsigned fn)
{
	return fn >= NPU_FN_ADD && fn < NPU_FN_BINARY_END;
}

/*
 * NaN inputs give NaN for every function (RELU, CLIP and the hard
 * functions included: their comparisons fail and pass x through).
 * An invalid fn writes zeros.
 */
void npu_kern_unary(float *y, const float *x, size_t n, unsigned fn,
		    float alpha, float beta)
{
	switch (fn) {
	case NPU_FN_IDENTITY:
		if (y != x)
			memmove(y, x, n * sizeof(*y));
		break;
	case NPU_FN_RELU:
		UNARY_LOOP(select_f(v < 0.0f, 0.0f, v));
		break;
	case NPU_FN_LEAKY_RELU:
		UNARY_LOOP(select_f(v < 0.0f, alpha * v, v));
		break;
	case NPU_FN_CLIP:
		/* max then min: with lo > hi the result is hi, as the formula */
		UNARY_LOOP(select_f(select_f(v < alpha, alpha, v) > beta, beta,
				    select_f(v < alpha, alpha, v)));
		break;
	case NPU_FN_SIGMOID:
		sigmoid_loop(y, x, n);
		break;
	case NPU_FN_TANH:
		tanh_loop(y, x, n);
		break;
	case NPU_FN_EXP:
		exp_loop(y, x, n);
		break;
	case NPU_FN_LOG:
		UNARY_LOOP(logf(v));
		break;
	case NPU_FN_SQRT:
		sqrt_loop(y, x, n, false);
		break;
	case NPU_FN_RSQRT:
		sqrt_loop(y, x, n, true);
		break;
	case NPU_FN_RECIP:
		UNARY_LOOP(1.0f / v);
		break;
	case NPU_FN_ABS:
		UNARY_LOOP(fabsf(v));
		break;
	case NPU_FN_NEG:
		UNARY_LOOP(-v);
		break;
	case NPU_FN_ERF:
		erf_loop(y, x, n);
		break;
	case NPU_FN_GELU:
		gelu_loop(y, x, n);
		break;
	case NPU_FN_HARDSIGMOID: {
		/* clip(alpha x + beta, 0, 1) */
		for (size_t i = 0; i < n; i++) {
			float t = alpha * x[i] + beta;

			t = select_f(t < 0.0f, 0.0f, t);
			y[i] = select_f(t > 1.0f, 1.0f, t);
		}
		break;
	}
	case NPU_FN_HARDSWISH: {
		/* x * clip(x / 6 + 1/2, 0, 1) */
		for (size_t i = 0; i < n; i++) {
			float t = x[i] / 6.0f + 0.5f;

			t = select_f(t < 0.0f, 0.0f, t);
			t = select_f(t > 1.0f, 1.0f, t);
			y[i] = x[i] * t;
		}
		break;
	}
	case NPU_FN_FLOOR:
		UNARY_LOOP(floor_f(v));
		break;
	case NPU_FN_CEIL:
		UNARY_LOOP(ceil_f(v));
		break;
	case NPU_FN_ROUND:
		UNARY_LOOP(round_even(v));
		break;
	case NPU_FN_SIN:
		UNARY_LOOP(sinf(v));
		break;
	case NPU_FN_COS:
		UNARY_LOOP(cosf(v));
		break;
	case NPU_FN_TAN:
		UNARY_LOOP(tanf(v));
		break;
	case NPU_FN_ASIN:
		UNARY_LOOP(asinf(v));
		break;
	case NPU_FN_ACOS:
		UNARY_LOOP(acosf(v));
		break;
	case NPU_FN_ATAN:
		UNARY_LOOP(atanf(v));
		break;
	case NPU_FN_SINH:
		UNARY_LOOP(sinhf(v));
		break;
	case NPU_FN_COSH:
		UNARY_LOOP(coshf(v));
		break;
	case NPU_FN_ASINH:
		UNARY_LOOP(asinhf(v));
		break;
	case NPU_FN_ACOSH:
		UNARY_LOOP(acoshf(v));
		break;
	case NPU_FN_ATANH:
		UNARY_LOOP(atanhf(v));
		break;
	case NPU_FN_SOFTPLUS:
		/* Stable for large x: x + ln(1 + e^-x). */
		UNARY_LOOP(v > 0.0f ? v + log1pf(expf(-v)) : log1pf(expf(v)));
		break;
	case NPU_FN_SOFTSIGN:
		UNARY_LOOP(v / (1.0f + fabsf(v)));
		break;
	case NPU_FN_ELU:
		UNARY_LOOP(v < 0.0f ? alpha * expm1f(v) : v);
		break;
	case NPU_FN_SELU:
		UNARY_LOOP(beta * (v <= 0.0f ? alpha * expm1f(v) : v));
		break;
	case NPU_FN_CELU:
		UNARY_LOOP(fmaxf(0.0f, v) + fminf(0.0f, alpha * expm1f(v / alpha)));
		break;
	case NPU_FN_THRESHOLDED_RELU:
		UNARY_LOOP(v > alpha ? v : (v != v ? v : 0.0f));
		break;
	case NPU_FN_SHRINK:
		UNARY_LOOP(v < -alpha ? v + beta : v > alpha ? v - beta : (v != v ? v : 0.0f));
		break;
	case NPU_FN_SIGN:
		UNARY_LOOP(v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : v);
		break;
	case NPU_FN_SILU:
		silu_loop(y, x, n);
		break;
	case NPU_FN_GELU_TANH:
		gelu_tanh_loop(y, x, n);
		break;
	case NPU_FN_NOT:
		UNARY_LOOP(select_f(v == 0.0f, 1.0f, 0.0f));
		break;
	case NPU_FN_TRUNC:
		UNARY_LOOP(truncf(v));
		break;
	default:
		memset(y, 0, n * sizeof(*y));
		break;
	}
}

/*
 * One binary function on (a, b).  MAX and MIN propagate a NaN from either
 * side (the comparison fails and the NaN operand is chosen).
 */
static ALWAYS_INLINE float max_nan(float a, float b)
{
	return select_f((a > b) | (a != a), a, b);
}

static ALWAYS_INLINE float min_nan(float a, float b)
{
	return select_f((a < b) | (a != a), a, b);
}

/* MOD in fp32: fmod, moved into the divisor's sign (as Python's %). */
static ALWAYS_INLINE float mod_floor(float a, float b)
{
	float r = fmodf(a, b);

	return r != 0.0f && ((r < 0.0f) != (b < 0.0f)) ? r + b : r;
}

/* BINARY_LOOP(bexpr) runs bexpr for every i with av = a[i], bv = B(i) */
#define BINARY_LOOPS(B)							\
	do {								\
		switch (fn) {						\
		case NPU_FN_ADD:					\
			BLOOP(av + bv, B);				\
			break;						\
		case NPU_FN_SUB:					\
			BLOOP(av - bv, B);				\
			break;						\
		case NPU_FN_MUL:					\
			BLOOP(av * bv, B);				\
			break;						\
		case NPU_FN_DIV:					\
			BLOOP(av / bv, B);				\
			break;						\
		case NPU_FN_MAX:					\
			BLOOP(max_nan(av, bv), B);			\
			break;						\
		case NPU_FN_MIN:					\
			BLOOP(min_nan(av, bv), B);			\
			break;						\
		case NPU_FN_PRELU:					\
			BLOOP(select_f(av < 0.0f, av * bv, av), B);	\
			break;						\
		case NPU_FN_POW:					\
			BLOOP(powf(av, bv), B);				\
			break;						\
		case NPU_FN_EQUAL:					\
			BLOOP(select_f(av == bv, 1.0f, 0.0f), B);	\
			break;						\
		case NPU_FN_LESS:					\
			BLOOP(select_f(av < bv, 1.0f, 0.0f), B);	\
			break;						\
		case NPU_FN_GREATER:					\
			BLOOP(select_f(av > bv, 1.0f, 0.0f), B);	\
			break;						\
		case NPU_FN_LESS_EQUAL:					\
			BLOOP(select_f(av <= bv, 1.0f, 0.0f), B);	\
			break;						\
		case NPU_FN_GREATER_EQUAL:				\
			BLOOP(select_f(av >= bv, 1.0f, 0.0f), B);	\
			break;						\
		case NPU_FN_AND:					\
			BLOOP(select_f((av != 0.0f) & (bv != 0.0f), 1.0f, 0.0f), B); \
			break;						\
		case NPU_FN_OR:						\
			BLOOP(select_f((av != 0.0f) | (bv != 0.0f), 1.0f, 0.0f), B); \
			break;						\
		case NPU_FN_XOR:					\
			BLOOP(select_f((av != 0.0f) != (bv != 0.0f), 1.0f, 0.0f), B); \
			break;						\
		case NPU_FN_MOD:					\
			BLOOP(mod_floor(av, bv), B);			\
			break;						\
		case NPU_FN_FMOD:					\
			BLOOP(fmodf(av, bv), B);			\
			break;						\
		default:						\
			memset(y, 0, n * sizeof(*y));			\
			break;						\
		}							\
	} while (0)

#define BLOOP(expr, B)							\
	do {								\
		for (size_t i = 0; i < n; i++) {			\
			float av = a[i], bv = B;			\
			y[i] = (expr);					\
		}							\
	} while (0)

/* An invalid fn writes zeros. */
void npu_kern_binary(float *y, const float *a, const float *b, size_t n,
		     unsigned fn)
{
	BINARY_LOOPS(b[i]);
}

void npu_kern_binary_scalar(float *y, const float *a, float b, size_t n,
			    unsigned fn)
{
	BINARY_LOOPS(b);
}

#undef BLOOP
#undef BINARY_LOOPS

/* ---- row reductions ---- */

static ALWAYS_INLINE float lanes_total(const float *acc)
{
	/* pairwise, in a fixed order: deterministic across ISAs */
	return ((acc[0] + acc[1]) + (acc[2] + acc[3])) +
	       ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

static ALWAYS_INLINE float row_sum(const float *x, size_t n)
{
	float acc[NLANES] = { 0 };
	size_t i = 0;

	for (; i + NLANES <= n; i += NLANES)
		for (size_t j = 0; j < NLANES; j++)
			acc[j] += x[i + j];
	for (size_t j = 0; i < n; i++, j++)
		acc[j] += x[i];
	return lanes_total(acc);
}

/*
 * max (or min) of a non-empty row; a NaN anywhere gives NaN.  GCC does not
 * vectorize a NaN-propagating max reduction by itself, so the SSE2 path
 * uses MAXPS/MINPS (NaN-oblivious) and tracks NaNs separately with an
 * unordered compare.
 */
static ALWAYS_INLINE float row_extreme(const float *x, size_t n, bool want_max)
{
	size_t i = 0;
	float r = x[0];
	bool nan = false;

#if defined(__SSE2__)
	if (n >= 8) {
		__m128 a0 = _mm_set1_ps(x[0]), a1 = a0;
		__m128 bad = _mm_setzero_ps();
		float part[4];

		for (; i + 8 <= n; i += 8) {
			__m128 v0 = _mm_loadu_ps(x + i);
			__m128 v1 = _mm_loadu_ps(x + i + 4);

			bad = _mm_or_ps(bad, _mm_or_ps(_mm_cmpunord_ps(v0, v0),
						       _mm_cmpunord_ps(v1, v1)));
			a0 = want_max ? _mm_max_ps(a0, v0) : _mm_min_ps(a0, v0);
			a1 = want_max ? _mm_max_ps(a1, v1) : _mm_min_ps(a1, v1);
		}
		a0 = want_max ? _mm_max_ps(a0, a1) : _mm_min_ps(a0, a1);
		_mm_storeu_ps(part, a0);
		for (int j = 0; j < 4; j++)
			r = want_max ? max_nan(part[j], r) : min_nan(part[j], r);
		nan = _mm_movemask_ps(bad) != 0;
	}
#endif
	for (; i < n; i++)
		r = want_max ? max_nan(x[i], r) : min_nan(x[i], r);
	return nan ? NAN : r;
}

/*
 * Empty rows (inner == 0) give the identity of the reduction: SUM and
 * MEAN 0, MAX -inf, MIN +inf, PROD 1 (LOG_SUM and LOG_SUM_EXP: -inf).  MAX and MIN propagate NaN.  An invalid fn
 * writes zeros.
 */
void npu_kern_reduce(float *y, const float *x, size_t outer, size_t inner,
		     unsigned fn)
{
	for (size_t o = 0; o < outer; o++) {
		const float *row = x + o * inner;
		float r;

		switch (fn) {
		case NPU_REDUCE_SUM:
			r = row_sum(row, inner);
			break;
		case NPU_REDUCE_MEAN:
			r = inner ? row_sum(row, inner) / (float)inner : 0.0f;
			break;
		case NPU_REDUCE_MAX:
			r = inner ? row_extreme(row, inner, true) : -INFINITY;
			break;
		case NPU_REDUCE_MIN:
			r = inner ? row_extreme(row, inner, false) : INFINITY;
			break;
		case NPU_REDUCE_SUM_ABS:
			r = 0.0f;
			for (size_t i = 0; i < inner; i++)
				r += fabsf(row[i]);
			break;
		case NPU_REDUCE_SUM_SQUARE:
		case NPU_REDUCE_L2:
			r = 0.0f;
			for (size_t i = 0; i < inner; i++)
				r += row[i] * row[i];
			if (fn == NPU_REDUCE_L2)
				r = sqrtf(r);
			break;
		case NPU_REDUCE_LOG_SUM:
			r = logf(row_sum(row, inner));
			break;
		case NPU_REDUCE_LOG_SUM_EXP: {
			/* max + ln(sum e^(x - max)): no overflow for large x */
			float m = inner ? row_extreme(row, inner, true) : -INFINITY, s = 0.0f;

			if (isinf(m)) {
				r = m;
				break;
			}
			for (size_t i = 0; i < inner; i++)
				s += expf(row[i] - m);
			r = m + logf(s);
			break;
		}
		case NPU_REDUCE_PROD:
			r = 1.0f;
			for (size_t i = 0; i < inner; i++)
				r *= row[i];
			break;
		default:
			r = 0.0f;
			break;
		}
		/* y[o] may alias row o's first element: written after reading */
		y[o] = r;
	}
}

/* a beats the best b so far: larger (smaller), or the first NaN. */
static ALWAYS_INLINE bool arg_better(float a, float b, bool want_max, bool last)
{
	if (b != b)
		return false;
	if (a != a)
		return true;
	if (last)
		return want_max ? a >= b : a <= b;
	return want_max ? a > b : a < b;
}

void npu_kern_argreduce(float *y, const float *x, size_t outer, size_t inner,
			bool want_max, bool last)
{
	for (size_t o = 0; o < outer; o++) {
		const float *row = x + o * inner;
		size_t best = 0;

		for (size_t i = 1; i < inner; i++)
			if (arg_better(row[i], row[best], want_max, last))
				best = i;
		y[o] = (float)best;
	}
}

void npu_kern_argreduce_i32(float *y, const int32_t *x, size_t outer, size_t inner,
			    bool want_max, bool last)
{
	for (size_t o = 0; o < outer; o++) {
		const int32_t *row = x + o * inner;
		size_t best = 0;

		for (size_t i = 1; i < inner; i++) {
			bool better = want_max ? (last ? row[i] >= row[best] : row[i] > row[best]) :
						 (last ? row[i] <= row[best] : row[i] < row[best]);

			if (better)
				best = i;
		}
		y[o] = (float)best;
	}
}

void npu_kern_scan(float *y, const float *x, size_t outer, size_t n,
		   size_t inner, bool exclusive, bool reverse)
{
	for (size_t o = 0; o < outer; o++) {
		for (size_t j = 0; j < inner; j++) {
			const float *xr = x + o * n * inner + j;
			float *yr = y + o * n * inner + j;
			float acc = 0.0f;

			for (size_t k = 0; k < n; k++) {
				size_t i = (reverse ? n - 1 - k : k) * inner;
				float v = xr[i];

				if (exclusive) {
					yr[i] = acc;
					acc += v;
				} else {
					acc += v;
					yr[i] = acc;
				}
			}
		}
	}
}

int32_t npu_kern_mod_i32(int32_t a, int32_t b, bool fmod)
{
	int32_t r;

	if (b == 0 || b == -1)	/* -1: INT32_MIN % -1 overflows in C */
		return 0;
	r = a % b;
	if (!fmod && r != 0 && ((r < 0) != (b < 0)))
		r += b;
	return r;
}

void npu_kern_scan_i32(int32_t *y, const int32_t *x, size_t outer, size_t n,
		       size_t inner, bool exclusive, bool reverse)
{
	for (size_t o = 0; o < outer; o++) {
		for (size_t j = 0; j < inner; j++) {
			const int32_t *xr = x + o * n * inner + j;
			int32_t *yr = y + o * n * inner + j;
			uint32_t acc = 0;	/* wraps modulo 2^32, as int32 adds do */

			for (size_t k = 0; k < n; k++) {
				size_t i = (reverse ? n - 1 - k : k) * inner;
				uint32_t v = (uint32_t)xr[i];

				if (exclusive) {
					yr[i] = (int32_t)acc;
					acc += v;
				} else {
					acc += v;
					yr[i] = (int32_t)acc;
				}
			}
		}
	}
}

/* ---- softmax ---- */

/* chunk for the log-softmax exponentials, which must not overwrite x */
#define SOFTMAX_CHUNK 256

static ALWAYS_INLINE void exp_shift(float *restrict e, const float *x,
				    size_t n, float m)
{
	for (size_t i = 0; i < n; i++)
		e[i] = exp_fast(x[i] - m);
}

/*
 * e^(x - max) keeps every exponential in (0, 1] so nothing overflows and
 * the sum is >= 1.  Consequences for special inputs: a NaN in the row
 * makes the whole row NaN, as does +inf (inf - inf) or a row of only
 * -inf.
 */
static ALWAYS_INLINE void softmax_rows_body(float *y, const float *x,
					    size_t outer, size_t inner,
					    bool log)
{
	float tmp[SOFTMAX_CHUNK];

	for (size_t o = 0; o < outer; o++) {
		const float *xr = x + o * inner;
		float *yr = y + o * inner;
		float m = row_extreme(xr, inner, true);
		float acc[NLANES] = { 0 };
		float sum;

		/* sum the exponentials chunk by chunk, NLANES partial sums */
		for (size_t c = 0; c < inner; c += SOFTMAX_CHUNK) {
			size_t len = inner - c < SOFTMAX_CHUNK ?
				     inner - c : SOFTMAX_CHUNK;
			/* softmax stores e in y (in place is fine: same index) */
			float *e = log ? tmp : yr + c;
			size_t i = 0;

			exp_shift(e, xr + c, len, m);
			for (; i + NLANES <= len; i += NLANES)
				for (size_t j = 0; j < NLANES; j++)
					acc[j] += e[i + j];
			for (size_t j = 0; i < len; i++, j++)
				acc[j] += e[i];
		}
		sum = lanes_total(acc);
		if (log) {
			float ls = logf(sum);

			for (size_t i = 0; i < inner; i++)
				yr[i] = (xr[i] - m) - ls;
		} else {
			for (size_t i = 0; i < inner; i++)
				yr[i] = yr[i] / sum;
		}
	}
}
DISPATCH_DEFINE(softmax_rows,
		(float *y, const float *x, size_t outer, size_t inner, bool log),
		(y, x, outer, inner, log))

void npu_kern_softmax(float *y, const float *x, size_t outer, size_t inner,
		      bool log)
{
	if (inner == 0)
		return;
	softmax_rows(y, x, outer, inner, log);
}

/* ---- layernorm ---- */

/*
 * Centre the row on its first element before summing: d = x - x0 is exact
 * for values of similar magnitude, so a row with a large common offset
 * (1e4 + noise) keeps its full precision.  The mean is kept as x0 plus a
 * small correction ms and the centred values are (x - x0) - ms, which is
 * far more accurate than x - mean with mean rounded to a float near 1e4.
 * The variance is a second pass over the centred values (not E[x^2] -
 * E[x]^2, which cancels catastrophically) and is the population variance.
 */
static ALWAYS_INLINE float centred_sum(const float *x, size_t n, float x0)
{
	float acc[NLANES] = { 0 };
	size_t i = 0;

	for (; i + NLANES <= n; i += NLANES)
		for (size_t j = 0; j < NLANES; j++)
			acc[j] += x[i + j] - x0;
	for (size_t j = 0; i < n; i++, j++)
		acc[j] += x[i] - x0;
	return lanes_total(acc);
}

/* NULL gamma / beta mean 1 and 0. */
void npu_kern_layernorm(float *y, const float *x, const float *gamma,
			const float *beta, size_t outer, size_t inner, float eps)
{
	if (inner == 0)
		return;
	for (size_t o = 0; o < outer; o++) {
		const float *xr = x + o * inner;
		const float *g = gamma ? gamma + o * inner : NULL;
		const float *bt = beta ? beta + o * inner : NULL;
		float *yr = y + o * inner;
		float x0 = xr[0];
		float ms = centred_sum(xr, inner, x0) / (float)inner;
		float acc[NLANES] = { 0 };
		float var, rstd;
		size_t i = 0;

		for (; i + NLANES <= inner; i += NLANES)
			for (size_t j = 0; j < NLANES; j++) {
				float d = (xr[i + j] - x0) - ms;

				acc[j] += d * d;
			}
		for (size_t j = 0; i < inner; i++, j++) {
			float d = (xr[i] - x0) - ms;

			acc[j] += d * d;
		}
		var = lanes_total(acc) / (float)inner;
		rstd = 1.0f / sqrtf(var + eps);

		/* in place is fine: element i is read before it is written */
		if (g && bt) {
			for (i = 0; i < inner; i++)
				yr[i] = ((xr[i] - x0) - ms) * rstd * g[i] + bt[i];
		} else {
			for (i = 0; i < inner; i++)
				yr[i] = ((xr[i] - x0) - ms) * rstd *
					(g ? g[i] : 1.0f) + (bt ? bt[i] : 0.0f);
		}
	}
}

/*
 * RMS norm: y = x / sqrt(mean(x^2) + eps) * gamma (NULL: 1).  The sum of
 * squares runs in NLANES partial sums like the variance above.
 */
void npu_kern_rmsnorm(float *y, const float *x, const float *gamma, size_t outer,
		      size_t inner, float eps)
{
	if (inner == 0)
		return;
	for (size_t o = 0; o < outer; o++) {
		const float *xr = x + o * inner;
		const float *g = gamma ? gamma + o * inner : NULL;
		float *yr = y + o * inner;
		float acc[NLANES] = { 0 };
		float rms_inv;
		size_t i = 0;

		for (; i + NLANES <= inner; i += NLANES)
			for (size_t j = 0; j < NLANES; j++)
				acc[j] += xr[i + j] * xr[i + j];
		for (size_t j = 0; i < inner; i++, j++)
			acc[j] += xr[i] * xr[i];
		rms_inv = 1.0f / sqrtf(lanes_total(acc) / (float)inner + eps);
		/* in place is fine: element i is read before it is written */
		for (i = 0; i < inner; i++)
			yr[i] = xr[i] * rms_inv * (g ? g[i] : 1.0f);
	}
}

/* ---- pooling ---- */

static void pool_max_acc(float *restrict yo, const float *restrict xi,
			 size_t C)
{
	for (size_t c = 0; c < C; c++)
		yo[c] = max_nan(xi[c], yo[c]);
}

static void pool_sum_acc(float *restrict yo, const float *restrict xi,
			 size_t C)
{
	for (size_t c = 0; c < C; c++)
		yo[c] += xi[c];
}

/*
 * Taps outside [0, H) x [0, W) are skipped.  MAX propagates NaN; a window
 * with no valid tap gives -inf (the max over nothing, as ONNX's -inf
 * padding would).  AVG divides by the number of valid taps, or with
 * count_pad by KH*KW: the struct has no bottom/right pads, and every
 * floor-mode window lies inside the padded input, so this is ONNX's
 * count_include_pad (ceil-mode windows overhanging the padded extent are
 * not representable here).  An AVG window with no valid tap and no
 * count_pad gives 0.  Invalid geometry (non-positive sizes, strides or
 * dilations) writes zeros to whatever output extent is positive.
 */
void npu_kern_pool2d(float *y, const float *x, const struct npu_kern_pool *p)
{
	size_t C, OW;
	bool is_max = p->fn == NPU_POOL_MAX;

	if (p->OH <= 0 || p->OW <= 0 || p->C <= 0)
		return;
	C = (size_t)p->C;
	OW = (size_t)p->OW;
	if (p->H <= 0 || p->W <= 0 || p->KH <= 0 || p->KW <= 0 ||
	    p->stride_h <= 0 || p->stride_w <= 0 || p->dil_h <= 0 ||
	    p->dil_w <= 0 || (p->fn != NPU_POOL_MAX && p->fn != NPU_POOL_AVG)) {
		memset(y, 0, (size_t)p->OH * OW * C * sizeof(*y));
		return;
	}

	for (long oh = 0; oh < p->OH; oh++) {
		long ih0 = oh * p->stride_h - p->pad_top;

		for (long ow = 0; ow < p->OW; ow++) {
			long iw0 = ow * p->stride_w - p->pad_left;
			float *yo = y + ((size_t)oh * OW + (size_t)ow) * C;
			float init = is_max ? -INFINITY : 0.0f;
			long taps = 0;

			for (size_t c = 0; c < C; c++)
				yo[c] = init;
			for (long kh = 0; kh < p->KH; kh++) {
				long ih = ih0 + kh * p->dil_h;

				if (ih < 0 || ih >= p->H)
					continue;
				for (long kw = 0; kw < p->KW; kw++) {
					long iw = iw0 + kw * p->dil_w;
					const float *xi;

					if (iw < 0 || iw >= p->W)
						continue;
					xi = x + ((size_t)ih * (size_t)p->W +
						  (size_t)iw) * C;
					if (is_max)
						pool_max_acc(yo, xi, C);
					else
						pool_sum_acc(yo, xi, C);
					taps++;
				}
			}
			if (!is_max) {
				long div = p->count_pad ? (long)p->KH * p->KW : taps;

				if (div > 0) {
					float d = (float)div;

					for (size_t c = 0; c < C; c++)
						yo[c] /= d;
				}
			}
		}
	}
}
