// SPDX-License-Identifier: MIT
/*
 * Unit tests for the vector, data-movement and CPU-assisted kernels
 * (npu_kern_vec.c, npu_kern_move.c, npu_kern_csu.c).  References are
 * computed independently, in double precision where it matters.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_kern.h"
#include "npu_test.h"

/* deterministic pseudo-random numbers */
static uint32_t rng_state;

static void rng_seed(uint32_t s)
{
	rng_state = s ? s : 1;
}

static uint32_t rng_next(void)
{
	/* xorshift32 */
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

/* uniform in [lo, hi) */
static float rng_uniform(float lo, float hi)
{
	return lo + (hi - lo) * (float)(rng_next() >> 8) * 0x1p-24f;
}

/* |got - want| <= atol + rtol |want|, NaN matching NaN, inf matching inf */
static bool close_to(float got, double want, double atol, double rtol)
{
	if (isnan(want))
		return isnan(got);
	if (isinf(want))
		return (double)got == want;
	return fabs((double)got - want) <= atol + rtol * fabs(want);
}

/* fmt needs at least one argument */
#define ASSERT_CLOSE(got, want, atol, rtol, fmt, ...)			\
	ck_assert_msg(close_to((got), (want), (atol), (rtol)),		\
		      "got %.9g want %.9g: " fmt, (double)(got),	\
		      (double)(want), __VA_ARGS__)

/*
 * Check records a mark point per ck_assert (a pipe write in fork mode),
 * far too slow for large loops: inside them count the failures with
 * EXPECT, keep the first message, and assert once.
 */
#define EXPECT_BEGIN() size_t nbad_ = 0; char first_[256] = ""
#define EXPECT(cond, ...)						\
	do {								\
		if (!(cond) && !nbad_++)				\
			snprintf(first_, sizeof(first_), __VA_ARGS__);	\
	} while (0)
#define EXPECT_END()							\
	ck_assert_msg(nbad_ == 0, "%zu failures, first: %s", nbad_, first_)
#define EXPECT_CLOSE(got, want, atol, rtol, fmt, ...)			\
	EXPECT(close_to((got), (want), (atol), (rtol)),			\
	       "got %.9g want %.9g: " fmt, (double)(got), (double)(want),	\
	       __VA_ARGS__)

/* ---- unary ---- */

static double ref_unary(unsigned fn, double x, double a, double b)
{
	switch (fn) {
	case NPU_FN_IDENTITY: return x;
	case NPU_FN_RELU: return x < 0 ? 0 : x;
	case NPU_FN_LEAKY_RELU: return x < 0 ? a * x : x;
	case NPU_FN_CLIP: return fmin(fmax(x, a), b);
	case NPU_FN_SIGMOID: return 1.0 / (1.0 + exp(-x));
	case NPU_FN_TANH: return tanh(x);
	case NPU_FN_EXP: return exp(x);
	case NPU_FN_LOG: return log(x);
	case NPU_FN_SQRT: return sqrt(x);
	case NPU_FN_RSQRT: return 1.0 / sqrt(x);
	case NPU_FN_RECIP: return 1.0 / x;
	case NPU_FN_ABS: return fabs(x);
	case NPU_FN_NEG: return -x;
	case NPU_FN_ERF: return erf(x);
	case NPU_FN_GELU: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
	case NPU_FN_HARDSIGMOID: return fmin(fmax(a * x + b, 0.0), 1.0);
	case NPU_FN_HARDSWISH: return x * fmin(fmax(x / 6.0 + 0.5, 0.0), 1.0);
	case NPU_FN_FLOOR: return floor(x);
	case NPU_FN_CEIL: return ceil(x);
	case NPU_FN_ROUND: return nearbyint(x);	/* default mode: half even */
	default: return NAN;
	}
}

/* inputs: a dense grid over [-12, 12] plus halves and special points */
#define NUNARY_IN 1000
static void unary_inputs(float *x)
{
	size_t i;

	for (i = 0; i < 800; i++)
		x[i] = -12.0f + 24.0f * (float)i / 800.0f;
	for (; i < 900; i++)
		x[i] = (float)((int)i - 950) * 0.5f;	/* ties for ROUND */
	for (; i < NUNARY_IN; i++)
		x[i] = rng_uniform(-0.01f, 0.01f);
	x[900] = 0.0f;
	x[901] = -0.0f;
	x[902] = 1e-30f;
	x[903] = 3.0f;
	x[904] = -3.0f;
	x[905] = 6.0f;
}

START_TEST(unary_every_fn_vs_libm)
{
	static float x[NUNARY_IN], y[NUNARY_IN];
	const float alpha = 0.2f, beta = 0.6f;

	EXPECT_BEGIN();

	rng_seed(1);
	unary_inputs(x);
	for (unsigned fn = NPU_FN_IDENTITY; fn < NPU_FN_UNARY_END; fn++) {
		/* CLIP needs lo < hi: reuse alpha/beta as [-2, 3] */
		float a = fn == NPU_FN_CLIP ? -2.0f : alpha;
		float b = fn == NPU_FN_CLIP ? 3.0f : beta;
		double atol = 0, rtol = 5e-7;	/* about 4 ulp */

		ck_assert(npu_fn_is_unary(fn));
		/*
		 * Absolute bounds where float evaluation of the formula
		 * cancels: 1 + erf(x) for negative x, and alpha x + beta or
		 * x / 6 + 1/2 near zero (scaled by |x| <= 12 for hardswish).
		 */
		if (fn == NPU_FN_ERF || fn == NPU_FN_GELU || fn == NPU_FN_TANH)
			atol = 2e-7;
		else if (fn == NPU_FN_HARDSIGMOID)
			atol = 1e-7;
		else if (fn == NPU_FN_HARDSWISH)
			atol = 1e-6;
		npu_kern_unary(y, x, NUNARY_IN, fn, a, b);
		for (size_t i = 0; i < NUNARY_IN; i++) {
			double want = ref_unary(fn, x[i], a, b);

			EXPECT_CLOSE(y[i], want, atol, rtol, "fn %u x=%a",
				     fn, (double)x[i]);
		}
	}
	EXPECT_END();
}
END_TEST

START_TEST(unary_rounding_exact)
{
	enum { N = 4096 };
	static float x[N], y[N];
	static const float special[] = {
		0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 0.49999997f, -0.49999997f,
		8388607.5f, -8388607.5f, 8388608.0f, 16777215.0f, 1e30f, -1e30f,
		0.0f, -0.0f, 0.7f, -0.7f, 0.3f, -0.3f, 1e-45f, -1e-45f,
	};
	const size_t ns = sizeof(special) / sizeof(special[0]);

	rng_seed(2);
	memcpy(x, special, sizeof(special));
	for (size_t i = ns; i < N; i++)
		x[i] = rng_uniform(-100.0f, 100.0f) * (i % 3 ? 1.0f : 1e5f);
	EXPECT_BEGIN();

	/* same value and same sign of zero as libm */
	npu_kern_unary(y, x, N, NPU_FN_FLOOR, 0, 0);
	for (size_t i = 0; i < N; i++)
		EXPECT(y[i] == floorf(x[i]) && !signbit(y[i]) == !signbit(x[i]),
		       "floor(%a) = %a", (double)x[i], (double)y[i]);
	npu_kern_unary(y, x, N, NPU_FN_CEIL, 0, 0);
	for (size_t i = 0; i < N; i++)
		EXPECT(y[i] == ceilf(x[i]) && !signbit(y[i]) == !signbit(x[i]),
		       "ceil(%a) = %a", (double)x[i], (double)y[i]);
	npu_kern_unary(y, x, N, NPU_FN_ROUND, 0, 0);
	for (size_t i = 0; i < N; i++)
		EXPECT(y[i] == rintf(x[i]) && !signbit(y[i]) == !signbit(x[i]),
		       "round(%a) = %a", (double)x[i], (double)y[i]);
	EXPECT_END();
}
END_TEST

START_TEST(unary_special_values)
{
	static const float x[] = { NAN, INFINITY, -INFINITY, 100.0f, -100.0f,
				   -104.5f, 89.0f, -0.0f };
	float y[8];

	/* NaN propagates through every function */
	for (unsigned fn = 0; fn < NPU_FN_UNARY_END; fn++) {
		npu_kern_unary(y, x, 1, fn, 0.5f, 1.0f);
		ck_assert_msg(isnan(y[0]), "fn %u lost NaN", fn);
	}
	npu_kern_unary(y, x, 8, NPU_FN_EXP, 0, 0);
	ck_assert(y[1] == INFINITY && y[2] == 0.0f && y[4] > 0.0f);
	ck_assert(y[3] == INFINITY && y[5] == 0.0f && y[6] == INFINITY);
	ck_assert(y[7] == 1.0f);
	npu_kern_unary(y, x, 8, NPU_FN_SIGMOID, 0, 0);
	ck_assert(y[1] == 1.0f && y[2] == 0.0f && y[3] == 1.0f);
	ck_assert(y[4] >= 0.0f && y[4] < 1e-40f && y[7] == 0.5f);
	npu_kern_unary(y, x, 8, NPU_FN_RELU, 0, 0);
	ck_assert(y[1] == INFINITY && y[2] == 0.0f && y[4] == 0.0f);
	npu_kern_unary(y, x, 8, NPU_FN_LOG, 0, 0);
	ck_assert(y[1] == INFINITY && isnan(y[2]) && y[7] == -INFINITY);
	npu_kern_unary(y, x, 8, NPU_FN_SQRT, 0, 0);
	ck_assert(y[1] == INFINITY && isnan(y[2]) && isnan(y[4]));
	ck_assert(y[7] == 0.0f && signbit(y[7]));
	npu_kern_unary(y, x, 8, NPU_FN_RSQRT, 0, 0);
	ck_assert(y[1] == 0.0f && y[7] == -INFINITY);
	npu_kern_unary(y, x, 8, NPU_FN_RECIP, 0, 0);
	ck_assert(y[7] == -INFINITY && y[1] == 0.0f);
	/* CLIP with lo > hi yields hi, as min(max(x, lo), hi) */
	npu_kern_unary(y, x + 3, 2, NPU_FN_CLIP, 5.0f, 1.0f);
	ck_assert(y[0] == 1.0f && y[1] == 1.0f);
	/* by the formula: inf * 1 and -inf * clip(-inf) = -inf * 0 = NaN */
	npu_kern_unary(y, x + 1, 2, NPU_FN_HARDSWISH, 0, 0);
	ck_assert(y[0] == INFINITY && isnan(y[1]));
}
END_TEST

/* ulp of a double reference value, as a float, floor at the subnormal step */
static double f32_ulp(double r)
{
	double u = r == 0 ? 0x1p-149 : ldexp(1.0, ilogb(r) - 23);

	return u < 0x1p-149 ? 0x1p-149 : u;
}

static double ref_sigmoid(double x)
{
	return 1.0 / (1.0 + exp(-x));
}

static double ref_gelu(double x)
{
	/* the erfc form: exact in double where 1 + erf would cancel */
	return 0.5 * x * erfc(-x / sqrt(2.0));
}

/*
 * exp, sigmoid, tanh, erf and GELU are own vectorized implementations, not
 * libm: bound their error in ulp over dense sweeps of the interesting range.
 */
START_TEST(unary_fast_math_accuracy)
{
	enum { N = 1 << 17 };
	static float x[N], y[N];
	static const struct {
		unsigned fn;
		double (*ref)(double);
		float lo, hi;
		double max_ulp;
	} cases[] = {
		{ NPU_FN_EXP, exp, -103.9f, 88.7f, 1.5 },
		{ NPU_FN_EXP, exp, -1e-3f, 1e-3f, 1.5 },
		{ NPU_FN_SIGMOID, ref_sigmoid, -100.0f, 30.0f, 3.0 },
		{ NPU_FN_TANH, tanh, -10.0f, 10.0f, 3.0 },
		{ NPU_FN_TANH, tanh, -1e-3f, 1e-3f, 3.0 },
		{ NPU_FN_ERF, erf, -5.0f, 5.0f, 3.0 },
		{ NPU_FN_ERF, erf, -1e-3f, 1e-3f, 3.0 },
		{ NPU_FN_GELU, ref_gelu, -18.0f, 12.0f, 8.0 },
		{ NPU_FN_GELU, ref_gelu, -1e-2f, 1e-2f, 3.0 },
	};
	EXPECT_BEGIN();

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		float lo = cases[c].lo, hi = cases[c].hi;

		for (size_t i = 0; i < N; i++)
			x[i] = lo + (hi - lo) * (float)i / (float)N;
		npu_kern_unary(y, x, N, cases[c].fn, 0, 0);
		for (size_t i = 0; i < N; i++) {
			double want = cases[c].ref(x[i]);
			double err = fabs((double)y[i] - want) / f32_ulp(want);

			EXPECT(err <= cases[c].max_ulp, "fn %u (%a) = %a, %g ulp",
			       cases[c].fn, (double)x[i], (double)y[i], err);
		}
	}
	EXPECT_END();
}
END_TEST

START_TEST(unary_inplace_and_invalid)
{
	float x[37], y[37];

	for (int i = 0; i < 37; i++)
		x[i] = (float)i - 18.0f;
	npu_kern_unary(x, x, 37, NPU_FN_ABS, 0, 0);	/* in place */
	for (int i = 0; i < 37; i++)
		ck_assert(x[i] == fabsf((float)i - 18.0f));
	npu_kern_unary(x, x, 37, NPU_FN_IDENTITY, 0, 0);
	ck_assert(x[0] == 18.0f);
	/* invalid codes write zeros (never crash) */
	for (int i = 0; i < 37; i++)
		y[i] = 7.0f;
	npu_kern_unary(y, x, 37, NPU_FN_UNARY_END, 0, 0);
	for (int i = 0; i < 37; i++)
		ck_assert(y[i] == 0.0f);
	npu_kern_unary(y, x, 37, NPU_FN_ADD, 0, 0);
	ck_assert(y[36] == 0.0f);
	ck_assert(!npu_fn_is_unary(NPU_FN_UNARY_END));
	ck_assert(!npu_fn_is_unary(NPU_FN_ADD));
	ck_assert(!npu_fn_is_unary(1000));
	ck_assert(npu_fn_is_unary(NPU_FN_ROUND));
}
END_TEST

/* Version 1.1 unary functions against double-precision libm. */
static double ref_unary2(unsigned fn, double x, double a, double b)
{
	switch (fn) {
	case NPU_FN_SIN: return sin(x);
	case NPU_FN_COS: return cos(x);
	case NPU_FN_TAN: return tan(x);
	case NPU_FN_ASIN: return asin(x);
	case NPU_FN_ACOS: return acos(x);
	case NPU_FN_ATAN: return atan(x);
	case NPU_FN_SINH: return sinh(x);
	case NPU_FN_COSH: return cosh(x);
	case NPU_FN_ASINH: return asinh(x);
	case NPU_FN_ACOSH: return acosh(x);
	case NPU_FN_ATANH: return atanh(x);
	case NPU_FN_SOFTPLUS: return log1p(exp(x));
	case NPU_FN_SOFTSIGN: return x / (1 + fabs(x));
	case NPU_FN_ELU: return x < 0 ? a * expm1(x) : x;
	case NPU_FN_SELU: return b * (x <= 0 ? a * expm1(x) : x);
	case NPU_FN_CELU: return fmax(0, x) + fmin(0, a * expm1(x / a));
	case NPU_FN_THRESHOLDED_RELU: return x > a ? x : 0;
	case NPU_FN_SHRINK: return x < -a ? x + b : x > a ? x - b : 0;
	case NPU_FN_SIGN: return x > 0 ? 1 : x < 0 ? -1 : 0;
	case NPU_FN_SILU: return x / (1 + exp(-x));
	case NPU_FN_GELU_TANH:
		return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
	default: return NAN;
	}
}

START_TEST(unary_v11_fns_vs_libm)
{
	static float x[NUNARY_IN], y[NUNARY_IN];
	const float a = 0.7f, b = 0.3f;

	EXPECT_BEGIN();
	rng_seed(3);
	unary_inputs(x);
	for (unsigned fn = NPU_FN_SIN; fn < NPU_FN_UNARY2_END; fn++) {
		ck_assert(npu_fn_is_unary(fn));
		npu_kern_unary(y, x, NUNARY_IN, fn, a, b);
		for (size_t i = 0; i < NUNARY_IN; i++) {
			double want = ref_unary2(fn, x[i], a, b);

			/* Outside a function's domain both sides are NaN. */
			if (isnan(want)) {
				EXPECT(isnan(y[i]), "fn %u x=%a: got %g, want NaN", fn,
				       (double)x[i], (double)y[i]);
				continue;
			}
			EXPECT_CLOSE(y[i], want, 1e-6, 2e-6, "fn %u x=%a", fn, (double)x[i]);
		}
	}
	/* The gaps around the ranges stay invalid (83..86 continue 64..82). */
	ck_assert(!npu_fn_is_unary(NPU_FN_SIN - 1));
	ck_assert(!npu_fn_is_unary(NPU_FN_UNARY3_END));
	EXPECT_END();
}
END_TEST

START_TEST(reduce_v11_fns)
{
	float x[2 * 33], y[2];

	rng_seed(7);
	for (size_t i = 0; i < 66; i++)
		x[i] = rng_uniform(0.5f, 1.5f) * (i % 3 ? 1.0f : -1.0f);
	/* the 1.1 reductions; 1.2's index reductions are npu_kern_argreduce */
	for (unsigned fn = NPU_REDUCE_SUM_ABS; fn <= NPU_REDUCE_PROD; fn++) {
		npu_kern_reduce(y, x, 2, 33, fn);
		for (size_t o = 0; o < 2; o++) {
			const float *r = x + o * 33;
			double s = 0, sa = 0, sq = 0, se = 0, p = 1, want;

			for (size_t i = 0; i < 33; i++) {
				s += r[i];
				sa += fabs(r[i]);
				sq += (double)r[i] * r[i];
				se += exp(r[i]);
				p *= r[i];
			}
			want = fn == NPU_REDUCE_SUM_ABS ? sa : fn == NPU_REDUCE_SUM_SQUARE ? sq :
			       fn == NPU_REDUCE_L2 ? sqrt(sq) : fn == NPU_REDUCE_LOG_SUM ? log(s) :
			       fn == NPU_REDUCE_LOG_SUM_EXP ? log(se) : p;
			ASSERT_CLOSE(y[o], want, 1e-5, 1e-5, "fn %u row %zu", fn, o);
		}
	}
	/* Large values: log-sum-exp does not overflow. */
	x[0] = 1000.0f;
	x[1] = 1000.0f;
	npu_kern_reduce(y, x, 1, 2, NPU_REDUCE_LOG_SUM_EXP);
	ASSERT_CLOSE(y[0], 1000.0 + log(2.0), 0, 1e-6, "%s", "lse 1000");
}
END_TEST

/* ---- binary ---- */

static double ref_binary(unsigned fn, double a, double b)
{
	switch (fn) {
	case NPU_FN_ADD: return a + b;
	case NPU_FN_SUB: return a - b;
	case NPU_FN_MUL: return a * b;
	case NPU_FN_DIV: return a / b;
	case NPU_FN_MAX: return isnan(a) || isnan(b) ? NAN : fmax(a, b);
	case NPU_FN_MIN: return isnan(a) || isnan(b) ? NAN : fmin(a, b);
	case NPU_FN_PRELU: return a < 0 ? a * b : a;
	case NPU_FN_POW: return pow(a, b);
	case NPU_FN_EQUAL: return a == b;
	case NPU_FN_LESS: return a < b;
	case NPU_FN_GREATER: return a > b;
	case NPU_FN_LESS_EQUAL: return a <= b;
	case NPU_FN_GREATER_EQUAL: return a >= b;
	case NPU_FN_AND: return a != 0 && b != 0;
	case NPU_FN_OR: return a != 0 || b != 0;
	case NPU_FN_XOR: return (a != 0) != (b != 0);
	case NPU_FN_MOD: {
		double r = fmod(a, b);

		return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
	}
	case NPU_FN_FMOD: return fmod(a, b);
	default: return NAN;
	}
}

START_TEST(binary_every_fn_vs_reference)
{
	enum { N = 1001 };
	static float a[N], b[N], y[N];

	rng_seed(3);
	for (size_t i = 0; i < N; i++) {
		a[i] = rng_uniform(-20.0f, 20.0f);
		b[i] = rng_uniform(-5.0f, 5.0f);
	}
	a[0] = NAN;
	b[1] = NAN;
	a[2] = 0.0f;
	b[2] = 0.0f;
	EXPECT_BEGIN();
	for (unsigned fn = NPU_FN_ADD; fn < NPU_FN_BINARY_END; fn++) {
		ck_assert(npu_fn_is_binary(fn));
		npu_kern_binary(y, a, b, N, fn);
		for (size_t i = 0; i < N; i++) {
			double want = ref_binary(fn, a[i], b[i]);

			if (fn == NPU_FN_POW) {
				EXPECT_CLOSE(y[i], want, 1e-30, 4e-7,
					     "pow(%a, %a)", (double)a[i], (double)b[i]);
				continue;
			}
			/* + - * / of floats in double, rounded once, is the
			 * correctly rounded float result: exact match */
			EXPECT(isnan(want) ? isnan(y[i]) : y[i] == (float)want,
			       "fn %u (%a, %a) = %a want %a", fn, (double)a[i],
			       (double)b[i], (double)y[i], want);
		}
	}
	EXPECT_END();
}
END_TEST

START_TEST(binary_scalar_and_inplace)
{
	enum { N = 77 };
	float a[N], y[N];

	for (size_t i = 0; i < N; i++)
		a[i] = (float)i - 40.0f;
	npu_kern_binary_scalar(y, a, 2.0f, N, NPU_FN_MUL);
	for (size_t i = 0; i < N; i++)
		ck_assert(y[i] == 2.0f * a[i]);
	npu_kern_binary_scalar(y, a, 0.25f, N, NPU_FN_PRELU);
	for (size_t i = 0; i < N; i++)
		ck_assert(y[i] == (a[i] < 0 ? a[i] * 0.25f : a[i]));
	npu_kern_binary_scalar(y, a, -3.0f, N, NPU_FN_MAX);
	for (size_t i = 0; i < N; i++)
		ck_assert(y[i] == fmaxf(a[i], -3.0f));
	npu_kern_binary_scalar(y, a, NAN, 3, NPU_FN_MIN);
	ck_assert(isnan(y[0]) && isnan(y[2]));
	npu_kern_binary_scalar(y, a, 2.0f, N, NPU_FN_POW);
	for (size_t i = 0; i < N; i++)
		ck_assert(y[i] == a[i] * a[i]);
	/* in place: y == a, and y == b */
	memcpy(y, a, sizeof(a));
	npu_kern_binary(y, y, a, N, NPU_FN_SUB);
	for (size_t i = 0; i < N; i++)
		ck_assert(y[i] == 0.0f);
	memcpy(y, a, sizeof(a));
	npu_kern_binary(y, a, y, N, NPU_FN_ADD);
	for (size_t i = 0; i < N; i++)
		ck_assert(y[i] == 2.0f * a[i]);
	/* invalid codes: zeros */
	npu_kern_binary(y, a, a, N, NPU_FN_BINARY_END);
	for (size_t i = 0; i < N; i++)
		ck_assert(y[i] == 0.0f);
	memcpy(y, a, sizeof(a));
	npu_kern_binary_scalar(y, a, 1.0f, N, NPU_FN_RELU);
	ck_assert(y[0] == 0.0f && y[N - 1] == 0.0f);
	ck_assert(!npu_fn_is_binary(NPU_FN_BINARY_END));
	ck_assert(!npu_fn_is_binary(NPU_FN_RELU));
	ck_assert(!npu_fn_is_binary(31));
}
END_TEST

/* ---- reductions ---- */

START_TEST(reduce_all_fns)
{
	/* row lengths around the 8-lane blocks */
	static const size_t lens[] = { 1, 2, 7, 8, 9, 16, 17, 100, 1023 };

	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		size_t inner = lens[li], outer = 3;
		float *x = malloc(outer * inner * sizeof(*x));
		float y[3];

		rng_seed(40 + (uint32_t)li);
		for (size_t i = 0; i < outer * inner; i++)
			x[i] = (float)((int)(rng_next() % 2001) - 1000);
		for (unsigned fn = NPU_REDUCE_SUM; fn <= NPU_REDUCE_MIN; fn++) {
			npu_kern_reduce(y, x, outer, inner, fn);
			for (size_t o = 0; o < outer; o++) {
				const float *r = x + o * inner;
				double s = 0, mx = -INFINITY, mn = INFINITY, want;

				for (size_t i = 0; i < inner; i++) {
					s += r[i];
					mx = fmax(mx, r[i]);
					mn = fmin(mn, r[i]);
				}
				want = fn == NPU_REDUCE_SUM ? s :
				       fn == NPU_REDUCE_MEAN ? s / (double)inner :
				       fn == NPU_REDUCE_MAX ? mx : mn;
				/* integer data: sums are exact in float */
				ASSERT_CLOSE(y[o], want, 0, 1e-6,
					     "fn %u inner %zu", fn, inner);
			}
		}
		free(x);
	}
}
END_TEST

START_TEST(reduce_nan_empty_invalid)
{
	float x[20], y[2];

	for (int i = 0; i < 20; i++)
		x[i] = (float)i;
	x[13] = NAN;		/* row 1, inside the vector body */
	npu_kern_reduce(y, x, 2, 10, NPU_REDUCE_MAX);
	ck_assert(y[0] == 9.0f && isnan(y[1]));
	npu_kern_reduce(y, x, 2, 10, NPU_REDUCE_MIN);
	ck_assert(y[0] == 0.0f && isnan(y[1]));
	x[13] = 13.0f;
	x[0] = NAN;		/* first element */
	npu_kern_reduce(y, x, 1, 20, NPU_REDUCE_MAX);
	ck_assert(isnan(y[0]));
	x[0] = 0.0f;
	x[19] = NAN;		/* tail element */
	npu_kern_reduce(y, x, 1, 20, NPU_REDUCE_MIN);
	ck_assert(isnan(y[0]));
	/* empty rows: identities */
	npu_kern_reduce(y, x, 2, 0, NPU_REDUCE_SUM);
	ck_assert(y[0] == 0.0f && y[1] == 0.0f);
	npu_kern_reduce(y, x, 1, 0, NPU_REDUCE_MAX);
	ck_assert(y[0] == -INFINITY);
	npu_kern_reduce(y, x, 1, 0, NPU_REDUCE_MIN);
	ck_assert(y[0] == INFINITY);
	npu_kern_reduce(y, x, 1, 0, NPU_REDUCE_MEAN);
	ck_assert(y[0] == 0.0f);
	/* invalid fn: zeros */
	y[0] = 5.0f;
	npu_kern_reduce(y, x, 1, 10, 17);
	ck_assert(y[0] == 0.0f);
	/* in place: y aliases the start of x */
	for (int i = 0; i < 20; i++)
		x[i] = 1.0f;
	npu_kern_reduce(x, x, 2, 10, NPU_REDUCE_SUM);
	ck_assert(x[0] == 10.0f && x[1] == 10.0f);
}
END_TEST

/* ---- softmax ---- */

static void ref_softmax(double *out, const float *x, size_t n, bool log_)
{
	double m = -INFINITY, s = 0;

	for (size_t i = 0; i < n; i++)
		m = fmax(m, x[i]);
	for (size_t i = 0; i < n; i++)
		s += exp((double)x[i] - m);
	for (size_t i = 0; i < n; i++)
		out[i] = log_ ? ((double)x[i] - m) - log(s) :
				exp((double)x[i] - m) / s;
}

START_TEST(softmax_rows_sum_to_one)
{
	static const size_t lens[] = { 1, 3, 8, 9, 255, 256, 257, 1000 };

	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		size_t n = lens[li], outer = 4;
		float *x = malloc(outer * n * sizeof(*x));
		float *y = malloc(outer * n * sizeof(*y));
		double *ref = malloc(n * sizeof(*ref));

		rng_seed(50 + (uint32_t)li);
		for (size_t i = 0; i < outer * n; i++)
			x[i] = rng_uniform(-10.0f, 10.0f);
		npu_kern_softmax(y, x, outer, n, false);
		for (size_t o = 0; o < outer; o++) {
			double s = 0;

			EXPECT_BEGIN();

			ref_softmax(ref, x + o * n, n, false);
			for (size_t i = 0; i < n; i++) {
				EXPECT_CLOSE(y[o * n + i], ref[i], 1e-12, 1e-5,
					     "n %zu", n);
				s += y[o * n + i];
			}
			EXPECT_END();
			ck_assert_msg(fabs(s - 1.0) < 1e-5, "sum %.9g", s);
		}
		/* in place gives the same */
		npu_kern_softmax(x, x, outer, n, false);
		ck_assert_mem_eq(x, y, outer * n * sizeof(*x));
		free(x);
		free(y);
		free(ref);
	}
}
END_TEST

START_TEST(softmax_large_inputs_stable)
{
	float x[4], y[4];

	/* naive exp would overflow to inf/inf = NaN */
	x[0] = 1000.0f;
	x[1] = 1001.0f;
	x[2] = 1002.0f;
	npu_kern_softmax(y, x, 1, 3, false);
	ASSERT_CLOSE(y[0], 0.09003057317, 0, 1e-6, "%d", 0);
	ASSERT_CLOSE(y[1], 0.24472847105, 0, 1e-6, "%d", 1);
	ASSERT_CLOSE(y[2], 0.66524095577, 0, 1e-6, "%d", 2);
	x[0] = 1e30f;
	x[1] = 1e30f;
	npu_kern_softmax(y, x, 1, 2, false);
	ck_assert(y[0] == 0.5f && y[1] == 0.5f);
	x[0] = -1e30f;
	x[1] = 0.0f;
	x[2] = -INFINITY;
	npu_kern_softmax(y, x, 1, 3, false);
	ck_assert(y[0] == 0.0f && y[1] == 1.0f && y[2] == 0.0f);
	/* a NaN poisons its row only */
	x[0] = 1.0f;
	x[1] = NAN;
	x[2] = 2.0f;
	x[3] = 2.0f;
	npu_kern_softmax(y, x, 2, 2, false);
	ck_assert(isnan(y[0]) && isnan(y[1]));
	ck_assert(y[2] == 0.5f && y[3] == 0.5f);
	npu_kern_softmax(y, x, 0, 2, false);	/* no rows: no-op */
	npu_kern_softmax(y, x, 2, 0, false);
}
END_TEST

START_TEST(log_softmax)
{
	static const size_t lens[] = { 1, 5, 16, 300 };

	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		size_t n = lens[li];
		float *x = malloc(2 * n * sizeof(*x));
		float *y = malloc(2 * n * sizeof(*y));
		double *ref = malloc(n * sizeof(*ref));

		rng_seed(60 + (uint32_t)li);
		for (size_t i = 0; i < 2 * n; i++)
			x[i] = rng_uniform(-30.0f, 30.0f);
		npu_kern_softmax(y, x, 2, n, true);
		for (size_t o = 0; o < 2; o++) {
			double s = 0;

			EXPECT_BEGIN();

			ref_softmax(ref, x + o * n, n, true);
			for (size_t i = 0; i < n; i++) {
				EXPECT_CLOSE(y[o * n + i], ref[i], 2e-6, 1e-6,
					     "n %zu", n);
				s += exp((double)y[o * n + i]);
			}
			EXPECT_END();
			ck_assert(fabs(s - 1.0) < 1e-5);
		}
		/* in place must not clobber x before it is read */
		npu_kern_softmax(x, x, 2, n, true);
		ck_assert_mem_eq(x, y, 2 * n * sizeof(*x));
		free(x);
		free(y);
		free(ref);
	}
	{
		/* large spread: exact differences, no -inf */
		float x[2] = { 1000.0f, 0.0f }, y[2];

		npu_kern_softmax(y, x, 1, 2, true);
		ck_assert(y[0] == 0.0f && y[1] == -1000.0f);
	}
}
END_TEST

/* ---- layernorm ---- */

/*
 * The exp-heavy loops (and softmax) are one body built for the baseline,
 * AVX2 and AVX-512, picked per call by the CPU: the three must give the
 * same bits, NaN payloads included, or a model's results would depend on
 * the machine.  Inputs: every special value, the functions' branch points,
 * random bit patterns over the whole range and random values in
 * [-20, 20], at lengths that leave every vector tail.
 */
static float any_float(unsigned i)
{
	static const uint32_t special[] = {
		0x7fc00000, 0xffc00001, 0x7f800001, 0x7fa00000, 0x7f800000,
		0xff800000, 0x00000000, 0x80000000, 0x00000001, 0x807fffff,
		0x00800000, 0x7f7fffff, 0xff7fffff, 0x42b17218, 0xc2cff1b5,
		0xc2d00000, 0x42b20000, 0x3f000000, 0xbf000000, 0x41800000,
		0xc1800000, 0x3f800000, 0xbf800000,
	};
	const unsigned nspecial = sizeof(special) / sizeof(special[0]);
	uint32_t u;
	float f;

	if (i < nspecial)
		u = special[i];
	else if (i % 2)
		u = rng_next();
	else
		return rng_uniform(-20.0f, 20.0f);
	memcpy(&f, &u, sizeof(f));
	return f;
}

START_TEST(vec_isa_builds_agree)
{
	static const unsigned fns[] = {
		NPU_FN_SIGMOID, NPU_FN_TANH, NPU_FN_EXP, NPU_FN_ERF,
		NPU_FN_GELU, NPU_FN_SILU, NPU_FN_GELU_TANH,
	};
	static const int isas[] = { NPU_KERN_ISA_AVX2, NPU_KERN_ISA_AVX512 };
	enum { N = 2053, ROW = 67 };
	float *x = malloc(N * sizeof(*x)), *ref = malloc(N * sizeof(*ref));
	float *y = malloc(N * sizeof(*y));
	long bad = 0;
	int ran = 0;

	ck_assert(x && ref && y);
	rng_seed(2026);
	for (unsigned i = 0; i < N; i++)
		x[i] = any_float(i);
	for (unsigned f = 0; f <= sizeof(fns) / sizeof(fns[0]) + 1; f++) {
		const bool unary = f < sizeof(fns) / sizeof(fns[0]);
		const bool log = f > sizeof(fns) / sizeof(fns[0]);

		/* lengths 1..N: every tail of every vector width */
		for (size_t n = 1; n <= N; n += unary ? 37 : ROW * 5) {
			ck_assert(npu_kern_vec_force_isa(NPU_KERN_ISA_BASE));
			if (unary)
				npu_kern_unary(ref, x, n, fns[f], 0.0f, 0.0f);
			else
				npu_kern_softmax(ref, x, n / ROW + 1, n % ROW + 1, log);
			for (unsigned k = 0; k < sizeof(isas) / sizeof(isas[0]); k++) {
				if (!npu_kern_vec_force_isa(isas[k]))
					continue;
				ran++;
				if (unary)
					npu_kern_unary(y, x, n, fns[f], 0.0f, 0.0f);
				else
					npu_kern_softmax(y, x, n / ROW + 1, n % ROW + 1, log);
				if (memcmp(y, ref, (unary ? n : (n / ROW + 1) * (n % ROW + 1)) *
						   sizeof(*y))) {
					bad++;
					fprintf(stderr, "%s %u n=%zu: the %s build differs from the baseline\n",
						unary ? "fn" : log ? "log_softmax" : "softmax",
						unary ? fns[f] : 0, n, isas[k] == NPU_KERN_ISA_AVX2 ? "AVX2" : "AVX-512");
				}
			}
		}
	}
	npu_kern_vec_force_isa(NPU_KERN_ISA_AUTO);
	free(x);
	free(ref);
	free(y);
	ck_assert_int_eq(bad, 0);
	if (!ran)
		fprintf(stderr, "vec_isa_builds_agree: this CPU has neither AVX2 nor AVX-512; only the baseline ran\n");
}
END_TEST

START_TEST(layernorm_mean_var)
{
	enum { OUTER = 5, INNER = 301 };
	static float x[OUTER * INNER], y[OUTER * INNER];
	static float g[OUTER * INNER], bt[OUTER * INNER];

	rng_seed(7);
	for (size_t i = 0; i < OUTER * INNER; i++) {
		/* row 2 carries a large offset: two-pass variance needed */
		x[i] = rng_uniform(-3.0f, 5.0f) + (i / INNER == 2 ? 1e4f : 0.0f);
		g[i] = 1.0f;
		bt[i] = 0.0f;
	}
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 0)
			npu_kern_layernorm(y, x, g, bt, OUTER, INNER, 1e-5f);
		else
			npu_kern_layernorm(y, x, NULL, NULL, OUTER, INNER, 1e-5f);
		for (size_t o = 0; o < OUTER; o++) {
			double m = 0, v = 0;

			for (size_t i = 0; i < INNER; i++)
				m += y[o * INNER + i];
			m /= INNER;
			for (size_t i = 0; i < INNER; i++)
				v += (y[o * INNER + i] - m) * (y[o * INNER + i] - m);
			v /= INNER;	/* population variance */
			ck_assert_msg(fabs(m) < 2e-4, "row %zu mean %g", o, m);
			ck_assert_msg(fabs(v - 1.0) < 2e-3, "row %zu var %g", o, v);
		}
	}
}
END_TEST

START_TEST(layernorm_gamma_beta_reference)
{
	enum { OUTER = 3, INNER = 19 };
	float x[OUTER * INNER], y[OUTER * INNER];
	float g[OUTER * INNER], bt[OUTER * INNER];
	const float eps = 0.01f;

	rng_seed(8);
	for (size_t i = 0; i < OUTER * INNER; i++) {
		x[i] = rng_uniform(-2.0f, 2.0f);
		g[i] = rng_uniform(0.5f, 2.0f);
		bt[i] = rng_uniform(-1.0f, 1.0f);
	}
	/* constant row: variance 0, output is beta */
	for (size_t i = 0; i < INNER; i++)
		x[INNER + i] = 3.0f;
	npu_kern_layernorm(y, x, g, bt, OUTER, INNER, eps);
	for (size_t o = 0; o < OUTER; o++) {
		double m = 0, v = 0;

		for (size_t i = 0; i < INNER; i++)
			m += x[o * INNER + i];
		m /= INNER;
		for (size_t i = 0; i < INNER; i++)
			v += (x[o * INNER + i] - m) * (x[o * INNER + i] - m);
		v /= INNER;
		for (size_t i = 0; i < INNER; i++) {
			size_t k = o * INNER + i;
			double want = (x[k] - m) / sqrt(v + eps) * g[k] + bt[k];

			ASSERT_CLOSE(y[k], want, 1e-5, 1e-5, "o %zu i %zu", o, i);
		}
	}
	for (size_t i = 0; i < INNER; i++)
		ck_assert(y[INNER + i] == bt[INNER + i]);
	/* in place */
	npu_kern_layernorm(x, x, g, bt, OUTER, INNER, eps);
	ck_assert_mem_eq(x, y, sizeof(x));
}
END_TEST

/* RMS norm (NPU_CVU_F_RMS) against double precision, in place too. */
START_TEST(rmsnorm_reference)
{
	enum { OUTER = 4, INNER = 37 };
	float x[OUTER * INNER], y[OUTER * INNER], g[OUTER * INNER];
	const float eps = 1e-5f;

	rng_seed(9);
	for (size_t i = 0; i < OUTER * INNER; i++) {
		x[i] = rng_uniform(-2.0f, 2.0f) + (i / INNER == 1 ? 100.0f : 0.0f);
		g[i] = rng_uniform(0.5f, 2.0f);
	}
	for (size_t i = 0; i < INNER; i++)
		x[2 * INNER + i] = 0.0f;	/* a zero row: eps keeps it finite */
	npu_kern_rmsnorm(y, x, g, OUTER, INNER, eps);
	for (size_t o = 0; o < OUTER; o++) {
		double ms = 0;

		for (size_t i = 0; i < INNER; i++)
			ms += (double)x[o * INNER + i] * x[o * INNER + i];
		ms /= INNER;
		for (size_t i = 0; i < INNER; i++) {
			size_t k = o * INNER + i;

			ASSERT_CLOSE(y[k], x[k] / sqrt(ms + eps) * g[k], 2e-6, 1e-6,
				     "o %zu i %zu", o, i);
		}
	}
	npu_kern_rmsnorm(x, x, g, OUTER, INNER, eps);
	ck_assert_mem_eq(x, y, sizeof(x));
}
END_TEST

/* ---- pooling ---- */

/*
 * Reference: materialise the padded input (pad cells flagged), then take
 * plain windows over padded coordinates.
 */
static void ref_pool(float *y, const float *x, const struct npu_kern_pool *p)
{
	int Hp = p->pad_top + p->H + 64, Wp = p->pad_left + p->W + 64;
	float *xp = calloc((size_t)Hp * Wp * p->C, sizeof(*xp));
	bool *valid = calloc((size_t)Hp * Wp, sizeof(*valid));

	for (int h = 0; h < p->H; h++)
		for (int w = 0; w < p->W; w++) {
			size_t pi = (size_t)(h + p->pad_top) * Wp + w + p->pad_left;

			valid[pi] = true;
			memcpy(xp + pi * p->C, x + ((size_t)h * p->W + w) * p->C,
			       p->C * sizeof(*x));
		}
	for (int oh = 0; oh < p->OH; oh++)
		for (int ow = 0; ow < p->OW; ow++)
			for (int c = 0; c < p->C; c++) {
				double acc = p->fn == NPU_POOL_MAX ? -INFINITY : 0;
				int cnt = 0;

				for (int kh = 0; kh < p->KH; kh++)
					for (int kw = 0; kw < p->KW; kw++) {
						int hh = oh * p->stride_h + kh * p->dil_h;
						int ww = ow * p->stride_w + kw * p->dil_w;
						size_t pi = (size_t)hh * Wp + ww;

						if (!valid[pi])
							continue;
						cnt++;
						if (p->fn == NPU_POOL_MAX)
							acc = fmax(acc, xp[pi * p->C + c]);
						else
							acc += xp[pi * p->C + c];
					}
				if (p->fn == NPU_POOL_AVG) {
					int div = p->count_pad ? p->KH * p->KW : cnt;

					acc = div ? acc / div : 0;
				}
				y[((size_t)oh * p->OW + ow) * p->C + c] = (float)acc;
			}
	free(xp);
	free(valid);
}

static int pool_out(int in, int pad0, int pad1, int k, int s, int d)
{
	return (in + pad0 + pad1 - d * (k - 1) - 1) / s + 1;
}

START_TEST(pool_vs_reference)
{
	/* H W C KH KW sh sw dh dw pt pl pb pr */
	static const int cfg[][13] = {
		{ 5, 5, 1, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0 },
		{ 7, 6, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
		{ 8, 9, 17, 3, 2, 1, 2, 2, 1, 2, 0, 2, 1 },
		{ 11, 10, 8, 3, 3, 3, 2, 2, 3, 1, 2, 0, 3 },
		{ 4, 4, 5, 4, 4, 1, 1, 1, 1, 3, 3, 3, 3 },
		{ 1, 13, 2, 1, 5, 1, 3, 1, 2, 0, 4, 0, 4 },
	};

	for (size_t t = 0; t < sizeof(cfg) / sizeof(cfg[0]); t++)
		for (unsigned fn = NPU_POOL_MAX; fn <= NPU_POOL_AVG; fn++)
			for (int cp = 0; cp < 2; cp++) {
				const int *c = cfg[t];
				struct npu_kern_pool p = {
					.H = c[0], .W = c[1], .C = c[2],
					.KH = c[3], .KW = c[4],
					.stride_h = c[5], .stride_w = c[6],
					.dil_h = c[7], .dil_w = c[8],
					.pad_top = c[9], .pad_left = c[10],
					.fn = fn, .count_pad = cp,
				};
				size_t nx, ny;
				float *x, *y, *ref;

				p.OH = pool_out(p.H, c[9], c[11], p.KH, p.stride_h, p.dil_h);
				p.OW = pool_out(p.W, c[10], c[12], p.KW, p.stride_w, p.dil_w);
				nx = (size_t)p.H * p.W * p.C;
				ny = (size_t)p.OH * p.OW * p.C;
				x = malloc(nx * sizeof(*x));
				y = malloc(ny * sizeof(*y));
				ref = malloc(ny * sizeof(*ref));
				rng_seed(70 + (uint32_t)t);
				for (size_t i = 0; i < nx; i++)
					x[i] = rng_uniform(-5.0f, 5.0f);
				EXPECT_BEGIN();

				npu_kern_pool2d(y, x, &p);
				ref_pool(ref, x, &p);
				for (size_t i = 0; i < ny; i++)
					EXPECT_CLOSE(y[i], ref[i], 1e-6, 1e-6,
						     "cfg %zu fn %u cp %d i %zu",
						     t, fn, cp, i);
				EXPECT_END();
				free(x);
				free(y);
				free(ref);
			}
}
END_TEST

START_TEST(pool_hand_values)
{
	/* 3x3 input 1..9, 2x2 window, stride 1, pad 1 all round -> 4x4 */
	float x[9], y[16];
	struct npu_kern_pool p = {
		.H = 3, .W = 3, .C = 1, .OH = 4, .OW = 4, .KH = 2, .KW = 2,
		.stride_h = 1, .stride_w = 1, .dil_h = 1, .dil_w = 1,
		.pad_top = 1, .pad_left = 1, .fn = NPU_POOL_AVG,
	};

	for (int i = 0; i < 9; i++)
		x[i] = (float)(i + 1);
	npu_kern_pool2d(y, x, &p);
	ck_assert(y[0] == 1.0f);		/* corner: one valid tap */
	ck_assert(y[1] == 1.5f);		/* (1 + 2) / 2 */
	ck_assert(y[5] == 3.0f);		/* (1 + 2 + 4 + 5) / 4 */
	ck_assert(y[15] == 9.0f);
	p.count_pad = true;
	npu_kern_pool2d(y, x, &p);
	ck_assert(y[0] == 0.25f);		/* 1 / 4 */
	ck_assert(y[1] == 0.75f);
	ck_assert(y[5] == 3.0f);
	p.fn = NPU_POOL_MAX;
	for (int i = 0; i < 9; i++)
		x[i] = -(float)(i + 1);		/* all negative: pads skipped */
	npu_kern_pool2d(y, x, &p);
	ck_assert(y[0] == -1.0f && y[15] == -9.0f && y[5] == -1.0f);
	x[4] = NAN;				/* MAX propagates NaN */
	npu_kern_pool2d(y, x, &p);
	ck_assert(isnan(y[5]) && isnan(y[10]) && y[0] == -1.0f);
	/* windows entirely in padding: MAX -inf, AVG 0 */
	p.pad_top = 3;
	p.OH = 1;
	p.OW = 1;
	npu_kern_pool2d(y, x, &p);
	ck_assert(y[0] == -INFINITY);
	p.fn = NPU_POOL_AVG;
	npu_kern_pool2d(y, x, &p);
	ck_assert(y[0] == 0.0f);
	/* invalid geometry: zeros, no crash */
	p.stride_h = 0;
	y[0] = 5.0f;
	npu_kern_pool2d(y, x, &p);
	ck_assert(y[0] == 0.0f);
}
END_TEST

/* ---- data movement ---- */

START_TEST(transpose_odd_sizes)
{
	static const size_t shapes[][2] = {
		{ 1, 1 }, { 1, 37 }, { 37, 1 }, { 2, 3 }, { 33, 65 },
		{ 64, 32 }, { 31, 97 }, { 100, 130 },
	};
	static const size_t eszs[] = { 1, 2, 3, 4, 8, 12 };
	EXPECT_BEGIN();

	for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); si++)
		for (size_t ei = 0; ei < sizeof(eszs) / sizeof(eszs[0]); ei++) {
			size_t R = shapes[si][0], C = shapes[si][1], e = eszs[ei];
			/* +1: misaligned buffers on purpose */
			unsigned char *xb = malloc(R * C * e + 1);
			unsigned char *yb = malloc(R * C * e + 1);
			unsigned char *x = xb + 1, *y = yb + 1;

			for (size_t i = 0; i < R * C * e; i++)
				x[i] = (unsigned char)(i * 131 + i / 7);
			npu_kern_transpose(y, x, e, R, C);
			for (size_t r = 0; r < R; r++)
				for (size_t c = 0; c < C; c++)
					EXPECT(!memcmp(y + (c * R + r) * e,
						       x + (r * C + c) * e, e),
					       "%zux%zu esz %zu at %zu,%zu",
					       R, C, e, r, c);
			free(xb);
			free(yb);
		}
	EXPECT_END();
}
END_TEST

static long ref_reflect(long i, long n)
{
	/* pads below n: mirror once without repeating the edge */
	if (i < 0)
		return -i;
	if (i >= n)
		return 2 * (n - 1) - i;
	return i;
}

START_TEST(pad_constant_edge_reflect)
{
	enum { H = 4, W = 5, C = 3, PT = 2, PL = 3, PB = 1, PR = 2 };
	enum { OH = H + PT + PB, OW = W + PL + PR };
	uint16_t x[H * W * C], y[OH * OW * C];
	const uint16_t val = 0xbeef;

	for (int i = 0; i < H * W * C; i++)
		x[i] = (uint16_t)(i + 1);
	for (unsigned mode = NPU_PAD_CONSTANT; mode <= NPU_PAD_REFLECT; mode++) {
		npu_kern_pad_hwc(y, x, 2, H, W, C, PT, PL, PB, PR, mode, &val);
		for (long oh = 0; oh < OH; oh++)
			for (long ow = 0; ow < OW; ow++)
				for (long c = 0; c < C; c++) {
					long ih = oh - PT, iw = ow - PL;
					bool in = ih >= 0 && ih < H && iw >= 0 && iw < W;
					uint16_t want;

					if (mode == NPU_PAD_CONSTANT) {
						want = in ? x[(ih * W + iw) * C + c] : val;
					} else if (mode == NPU_PAD_EDGE) {
						ih = ih < 0 ? 0 : ih >= H ? H - 1 : ih;
						iw = iw < 0 ? 0 : iw >= W ? W - 1 : iw;
						want = x[(ih * W + iw) * C + c];
					} else {
						ih = ref_reflect(ih, H);
						iw = ref_reflect(iw, W);
						want = x[(ih * W + iw) * C + c];
					}
					ck_assert_msg(y[(oh * OW + ow) * C + c] == want,
						      "mode %u at %ld,%ld,%ld", mode,
						      oh, ow, c);
				}
	}
}
END_TEST

START_TEST(pad_wide_reflect_and_edge_cases)
{
	/* 1-D row [0 1 2] with pads 5/6: reflection keeps bouncing */
	static const uint8_t want[] = { 1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1, 0 };
	uint8_t x[3] = { 0, 1, 2 }, y[16];
	uint32_t one = 7, y32[9];
	float fv = -1.5f, fy[4 * 4];

	npu_kern_pad_hwc(y, x, 1, 1, 3, 1, 0, 5, 0, 6, NPU_PAD_REFLECT, NULL);
	ck_assert_mem_eq(y, want, sizeof(want));
	/* single element: reflect repeats it */
	npu_kern_pad_hwc(y32, &one, 4, 1, 1, 1, 1, 1, 1, 1, NPU_PAD_REFLECT, NULL);
	for (int i = 0; i < 9; i++)
		ck_assert_uint_eq(y32[i], 7);
	/* constant with NULL value pads zeros; unknown mode is constant */
	npu_kern_pad_hwc(y32, &one, 4, 1, 1, 1, 1, 1, 1, 1, 99, NULL);
	for (int i = 0; i < 9; i++)
		ck_assert_uint_eq(y32[i], i == 4 ? 7 : 0);
	/* empty input with EDGE: all padding, constant value */
	npu_kern_pad_hwc(fy, NULL, 4, 0, 2, 1, 2, 1, 2, 1, NPU_PAD_EDGE, &fv);
	for (int i = 0; i < 16; i++)
		ck_assert(fy[i] == -1.5f);
	/* zero pads: plain copy */
	npu_kern_pad_hwc(y, x, 1, 1, 3, 1, 0, 0, 0, 0, NPU_PAD_EDGE, NULL);
	ck_assert_mem_eq(y, x, 3);
}
END_TEST

START_TEST(fill_sizes)
{
	static const size_t eszs[] = { 1, 2, 3, 4, 8, 12 };
	static const unsigned char pat[12] = { 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc,
					       0xde, 0xf0, 0x11, 0x22, 0x33, 0x44 };
	static const unsigned char ones[4] = { 0xff, 0xff, 0xff, 0xff };
	static unsigned char buf[1000 * 12 + 2];

	for (size_t ei = 0; ei < sizeof(eszs) / sizeof(eszs[0]); ei++)
		for (size_t n = 0; n < 1000; n = n * 3 + 1) {
			size_t e = eszs[ei];

			memset(buf, 0xa5, sizeof(buf));
			npu_kern_fill(buf + 1, e, n, pat);
			for (size_t i = 0; i < n; i++)
				ck_assert(!memcmp(buf + 1 + i * e, pat, e));
			ck_assert_uint_eq(buf[0], 0xa5);	/* no overrun */
			ck_assert_uint_eq(buf[1 + n * e], 0xa5);
		}
	npu_kern_fill(buf, 4, 100, ones);
	for (size_t i = 0; i < 400; i++)
		ck_assert_uint_eq(buf[i], 0xff);
	npu_kern_fill(buf, 4, 100, NULL);
	for (size_t i = 0; i < 400; i++)
		ck_assert_uint_eq(buf[i], 0);
	npu_kern_fill(buf, 0, 100, pat);		/* no-op */
	/* the value may be y's own first element */
	memcpy(buf, pat, 3);
	npu_kern_fill(buf, 3, 50, buf);
	for (size_t i = 0; i < 50; i++)
		ck_assert(!memcmp(buf + 3 * i, pat, 3));
}
END_TEST

/* ---- top-k ---- */

START_TEST(topk_basic_ties_smallest)
{
	static const float x[] = { 3, 1, 4, 1, 5, 9, 2, 6 };
	static const float t[] = { 1, 2, 2, 2, 0, 5, 1, 1, 3, 1 };
	float v[8];
	int32_t ix[8];

	npu_kern_topk(v, ix, x, 1, 8, 3, true);
	ck_assert(v[0] == 9 && v[1] == 6 && v[2] == 5);
	ck_assert(ix[0] == 5 && ix[1] == 7 && ix[2] == 4);
	npu_kern_topk(v, ix, x, 1, 8, 3, false);
	ck_assert(v[0] == 1 && v[1] == 1 && v[2] == 2);
	ck_assert(ix[0] == 1 && ix[1] == 3 && ix[2] == 6);
	/* ties: lower index first, two rows of 5 */
	npu_kern_topk(v, ix, t, 2, 5, 2, true);
	ck_assert(v[0] == 2 && v[1] == 2 && ix[0] == 1 && ix[1] == 2);
	ck_assert(v[2] == 5 && v[3] == 3 && ix[2] == 0 && ix[3] == 3);
	npu_kern_topk(v, ix, t, 2, 5, 3, false);
	ck_assert(ix[0] == 4 && ix[1] == 0 && ix[2] == 1);
	ck_assert(ix[3] == 1 && ix[4] == 2 && ix[5] == 4);
	/* k == n: a full stable sort */
	npu_kern_topk(v, ix, x, 1, 8, 8, true);
	{
		static const int32_t want[] = { 5, 7, 4, 2, 0, 6, 1, 3 };

		ck_assert_mem_eq(ix, want, sizeof(want));
		for (int i = 0; i < 8; i++)
			ck_assert(v[i] == x[want[i]]);
	}
}
END_TEST

START_TEST(topk_nan_and_k_beyond_n)
{
	static const float x[] = { NAN, 1, NAN, 3, -INFINITY };
	float v[7];
	int32_t ix[7];

	/* NaN ranks last in both directions, among NaNs by index */
	npu_kern_topk(v, ix, x, 1, 5, 5, true);
	ck_assert(ix[0] == 3 && ix[1] == 1 && ix[2] == 4 && ix[3] == 0 && ix[4] == 2);
	ck_assert(isnan(v[3]) && isnan(v[4]) && v[2] == -INFINITY);
	npu_kern_topk(v, ix, x, 1, 5, 2, false);
	ck_assert(ix[0] == 4 && ix[1] == 1);
	npu_kern_topk(v, ix, x, 1, 5, 3, true);
	ck_assert(ix[0] == 3 && ix[1] == 1 && ix[2] == 4);
	/* k > n: the extra slots get index -1 and value 0 */
	npu_kern_topk(v, ix, x + 3, 1, 2, 4, true);
	ck_assert(ix[0] == 0 && ix[1] == 1 && ix[2] == -1 && ix[3] == -1);
	ck_assert(v[0] == 3 && v[1] == -INFINITY && v[2] == 0.0f && v[3] == 0.0f);
	/* k == 0 writes nothing */
	ix[0] = 42;
	npu_kern_topk(v, ix, x, 1, 5, 0, true);
	ck_assert(ix[0] == 42);
}
END_TEST

static const float *sort_keys;
static bool sort_largest;

/* reference order: better value first, then lower index (stable) */
static int topk_ref_cmp(const void *pa, const void *pb)
{
	int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
	float va = sort_keys[a], vb = sort_keys[b];

	if (va != vb)
		return (sort_largest ? va > vb : va < vb) ? -1 : 1;
	return a < b ? -1 : 1;
}

START_TEST(topk_random_vs_sort)
{
	enum { ROWS = 6, N = 500 };
	static float x[ROWS * N], v[ROWS * N];
	static int32_t ix[ROWS * N], ord[N];
	static const size_t ks[] = { 1, 2, 10, 63, 499, 500 };
	EXPECT_BEGIN();

	rng_seed(9);
	for (size_t i = 0; i < ROWS * N; i++)
		x[i] = (float)(rng_next() % 50);	/* many ties */
	for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++)
		for (int largest = 0; largest < 2; largest++) {
			size_t k = ks[ki];

			npu_kern_topk(v, ix, x, ROWS, N, k, largest);
			for (size_t r = 0; r < ROWS; r++) {
				for (int32_t i = 0; i < N; i++)
					ord[i] = i;
				sort_keys = x + r * N;
				sort_largest = largest;
				qsort(ord, N, sizeof(ord[0]), topk_ref_cmp);
				for (size_t i = 0; i < k; i++)
					EXPECT(ix[r * k + i] == ord[i] &&
					       v[r * k + i] == x[r * N + ord[i]],
					       "k %zu largest %d row %zu pos %zu",
					       k, largest, r, i);
			}
		}
	EXPECT_END();
}
END_TEST

/* ---- NMS ---- */

START_TEST(nms_overlap_threshold_max_out)
{
	/* y1 x1 y2 x2; A and B overlap with IoU 81/119 = 0.68 */
	static const float boxes[] = {
		0, 0, 10, 10,		/* A */
		1, 1, 11, 11,		/* B */
		20, 20, 30, 30,		/* C */
		0, 0, 10, 10,		/* D: duplicate of A, lower score */
	};
	static const float scores[] = { 0.9f, 0.8f, 0.7f, 0.6f };
	int32_t sel[4];
	size_t n;

	n = npu_kern_nms(sel, boxes, scores, 4, 4, 0.5f, 0.0f, 0);
	ck_assert_uint_eq(n, 2);
	ck_assert(sel[0] == 0 && sel[1] == 2);
	n = npu_kern_nms(sel, boxes, scores, 4, 4, 0.7f, 0.0f, 0);
	ck_assert_uint_eq(n, 3);
	ck_assert(sel[0] == 0 && sel[1] == 1 && sel[2] == 2);
	/* iou_thr 1: identical boxes (IoU exactly 1) still kept */
	n = npu_kern_nms(sel, boxes, scores, 4, 4, 1.0f, 0.0f, 0);
	ck_assert_uint_eq(n, 4);
	/* score threshold is strict: 0.7 itself is dropped */
	n = npu_kern_nms(sel, boxes, scores, 4, 4, 0.7f, 0.7f, 0);
	ck_assert_uint_eq(n, 2);
	ck_assert(sel[0] == 0 && sel[1] == 1);
	n = npu_kern_nms(sel, boxes, scores, 4, 1, 0.7f, 0.0f, 0);
	ck_assert_uint_eq(n, 1);
	ck_assert(sel[0] == 0);
	ck_assert_uint_eq(npu_kern_nms(sel, boxes, scores, 4, 0, 0.5f, 0, 0), 0);
	ck_assert_uint_eq(npu_kern_nms(sel, boxes, scores, 4, 4, 0.5f, 0, 7), 0);
}
END_TEST

START_TEST(nms_formats_and_degenerate)
{
	/* the same A, B, C in centre format [cx, cy, w, h] */
	static const float centre[] = {
		5, 5, 10, 10,
		6, 6, 10, 10,
		25, 25, 10, 10,
	};
	/* corners swapped in every possible way */
	static const float swapped[] = {
		10, 10, 0, 0,
		11, 1, 1, 11,
		20, 30, 30, 20,
	};
	static const float s3[] = { 0.9f, 0.8f, 0.7f };
	/* zero-area boxes: IoU 0 with anything, never suppress */
	static const float degen[] = {
		5, 5, 5, 5,
		5, 5, 5, 5,
		0, 0, 10, 10,
		0, 0, 0, 10,
	};
	static const float s4[] = { 0.5f, 0.9f, 0.7f, 0.8f };
	/* score order wins over index, ties by index */
	static const float far[] = {
		0, 0, 1, 1, 10, 10, 11, 11, 20, 20, 21, 21, 30, 30, 31, 31,
	};
	static const float s_far[] = { 0.1f, 0.5f, 0.5f, 0.9f };
	int32_t sel[4];
	size_t n;

	n = npu_kern_nms(sel, centre, s3, 3, 3, 0.5f, 0.0f, 1);
	ck_assert_uint_eq(n, 2);
	ck_assert(sel[0] == 0 && sel[1] == 2);
	n = npu_kern_nms(sel, swapped, s3, 3, 3, 0.5f, 0.0f, 0);
	ck_assert_uint_eq(n, 2);
	ck_assert(sel[0] == 0 && sel[1] == 2);
	n = npu_kern_nms(sel, degen, s4, 4, 4, 0.0f, -1.0f, 0);
	ck_assert_uint_eq(n, 4);
	ck_assert(sel[0] == 1 && sel[1] == 3 && sel[2] == 2 && sel[3] == 0);
	n = npu_kern_nms(sel, far, s_far, 4, 4, 0.5f, 0.0f, 0);
	ck_assert_uint_eq(n, 4);
	ck_assert(sel[0] == 3 && sel[1] == 1 && sel[2] == 2 && sel[3] == 0);
}
END_TEST

/* straightforward greedy NMS in double precision */
static size_t ref_nms(int32_t *sel, const float *b, const float *s, size_t n,
		      size_t max_out, double thr, float sthr)
{
	int32_t *ord = malloc(n * sizeof(*ord));
	size_t nc = 0, ns = 0;

	for (size_t i = 0; i < n; i++)
		if (s[i] > sthr)
			ord[nc++] = (int32_t)i;
	/* insertion sort: descending score, stable on index */
	for (size_t i = 1; i < nc; i++) {
		int32_t k = ord[i];
		size_t j = i;

		while (j > 0 && s[ord[j - 1]] < s[k]) {
			ord[j] = ord[j - 1];
			j--;
		}
		ord[j] = k;
	}
	for (size_t c = 0; c < nc && ns < max_out; c++) {
		const float *p = b + 4 * ord[c];
		bool keep = true;

		for (size_t j = 0; j < ns && keep; j++) {
			const float *q = b + 4 * sel[j];
			double ih = fmin(p[2], q[2]) - fmax(p[0], q[0]);
			double iw = fmin(p[3], q[3]) - fmax(p[1], q[1]);
			double inter = ih > 0 && iw > 0 ? ih * iw : 0;
			double uni = (p[2] - p[0]) * (p[3] - p[1]) +
				     (q[2] - q[0]) * (q[3] - q[1]) - inter;

			if (uni > 0 && inter / uni > thr)
				keep = false;
		}
		if (keep)
			sel[ns++] = ord[c];
	}
	free(ord);
	return ns;
}

START_TEST(nms_random_vs_reference)
{
	enum { N = 700 };
	static float boxes[N * 4], scores[N];
	static int32_t sel[N], want[N];
	static const size_t sizes[] = { 10, 64, 65, 300, 700 };

	rng_seed(11);
	for (size_t i = 0; i < N; i++) {
		float y = rng_uniform(0, 100), x = rng_uniform(0, 100);

		boxes[4 * i + 0] = y;
		boxes[4 * i + 1] = x;
		boxes[4 * i + 2] = y + rng_uniform(1, 20);
		boxes[4 * i + 3] = x + rng_uniform(1, 20);
		/* coarse scores: plenty of ties */
		scores[i] = (float)(rng_next() % 100) / 100.0f;
	}
	/* sizes on both sides of the small-input (no allocation) path */
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		size_t n = sizes[si];
		size_t got = npu_kern_nms(sel, boxes, scores, n, n, 0.3f, 0.2f, 0);
		size_t nwant = ref_nms(want, boxes, scores, n, n, 0.3f, 0.2f);

		ck_assert_uint_eq(got, nwant);
		ck_assert_mem_eq(sel, want, got * sizeof(*sel));
		got = npu_kern_nms(sel, boxes, scores, n, 5, 0.3f, 0.2f, 0);
		ck_assert_uint_eq(got, nwant < 5 ? nwant : 5);
		ck_assert_mem_eq(sel, want, got * sizeof(*sel));
	}
}
END_TEST

static Suite *kern_vec_suite(void)
{
	Suite *s = suite_create("kern_vec");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, unary_every_fn_vs_libm);
	tcase_add_test(tc, unary_rounding_exact);
	tcase_add_test(tc, unary_special_values);
	tcase_add_test(tc, unary_fast_math_accuracy);
	tcase_add_test(tc, unary_inplace_and_invalid);
	tcase_add_test(tc, unary_v11_fns_vs_libm);
	tcase_add_test(tc, reduce_v11_fns);
	tcase_add_test(tc, binary_every_fn_vs_reference);
	tcase_add_test(tc, binary_scalar_and_inplace);
	tcase_add_test(tc, reduce_all_fns);
	tcase_add_test(tc, reduce_nan_empty_invalid);
	tcase_add_test(tc, softmax_rows_sum_to_one);
	tcase_add_test(tc, softmax_large_inputs_stable);
	tcase_add_test(tc, log_softmax);
	tcase_add_test(tc, vec_isa_builds_agree);
	tcase_add_test(tc, layernorm_mean_var);
	tcase_add_test(tc, layernorm_gamma_beta_reference);
	tcase_add_test(tc, rmsnorm_reference);
	tcase_add_test(tc, pool_vs_reference);
	tcase_add_test(tc, pool_hand_values);
	tcase_add_test(tc, transpose_odd_sizes);
	tcase_add_test(tc, pad_constant_edge_reflect);
	tcase_add_test(tc, pad_wide_reflect_and_edge_cases);
	tcase_add_test(tc, fill_sizes);
	tcase_add_test(tc, topk_basic_ties_smallest);
	tcase_add_test(tc, topk_nan_and_k_beyond_n);
	tcase_add_test(tc, topk_random_vs_sort);
	tcase_add_test(tc, nms_overlap_threshold_max_out);
	tcase_add_test(tc, nms_formats_and_degenerate);
	tcase_add_test(tc, nms_random_vs_reference);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(kern_vec_suite)
