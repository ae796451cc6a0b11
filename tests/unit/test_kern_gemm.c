// SPDX-License-Identifier: MIT
/*
 * GEMM and convolution kernels against naive references.
 *
 * Integer results must match bit for bit (both sides wrap modulo 2^32).
 * Floating-point results are compared with a bound on the rounding error of
 * an fp32 sum, except where the inputs are chosen so that every partial sum
 * is exact, where they must match exactly.  Each check runs the library's
 * fast path (AVX-512 where the CPU has it) and, through the test hook
 * npu_kern_gemm_force_portable(), the portable path.  Output buffers are
 * filled with a sentinel and checked outside the written region too.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_kern.h"
#include "npu_test.h"
#include "npu_test_rng.h"


#define SENTINEL 0x5a5a5a5a

/* ---- deterministic random numbers ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	return npu_test_rnd(&rng_state);
}

/* uniform in [lo, hi] */
static int rnd_range(int lo, int hi)
{
	return npu_test_range(&rng_state, lo, hi);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	ck_assert_ptr_nonnull(p);
	return p;
}

static void fill_bytes(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

/* memcpy so that float arrays can be filled with the same bit pattern */
static void fill_sentinel(void *p, size_t n32)
{
	const uint32_t v = SENTINEL;

	for (size_t i = 0; i < n32; i++)
		memcpy((char *)p + i * 4, &v, 4);
}

static float bf16_val(uint16_t v)
{
	uint32_t u = (uint32_t)v << 16;
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* exact for the values the tests use (truncation otherwise) */
static uint16_t bf16_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return (uint16_t)(u >> 16);
}

/* random fp32 value with few mantissa bits, so that bf16 holds it exactly */
static float rnd_small_float(void)
{
	return (float)rnd_range(-128, 127) / 32.0f;
}

/* ---- int8 GEMM ---- */

static int32_t elem_i8(const void *p, long i, bool sgn)
{
	return sgn ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

static void ref_gemm_i8(int M, int N, int K, const void *A, long lda,
			bool as, int32_t azp, const void *B, long ldb, bool bs,
			int32_t bzp, int32_t *C, long ldc, bool acc)
{
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			/* uint64 so that wild zero points wrap instead of UB */
			uint64_t s = acc ? (uint64_t)(int64_t)C[i * ldc + j] : 0;

			for (int k = 0; k < K; k++)
				s += (uint64_t)((int64_t)elem_i8(A, i * lda + k, as) - azp) *
				     (uint64_t)((int64_t)elem_i8(B, k * ldb + j, bs) - bzp);
			C[i * ldc + j] = (int32_t)(uint32_t)s;
		}
}

struct i8_case {
	int M, N, K;
	int lda_pad, ldb_pad, ldc_pad;
	bool as, bs;
	int32_t azp, bzp;
	bool acc;
};

/*
 * Run one int8 GEMM through the library and the reference; return the
 * number of differing int32 words in the whole C buffer (including the
 * ldc padding, which must keep its sentinel).
 */
static long run_i8_case(const struct i8_case *t)
{
	const long lda = t->K + t->lda_pad, ldb = t->N + t->ldb_pad;
	const long ldc = t->N + t->ldc_pad;
	const size_t na = (size_t)t->M * lda, nb = (size_t)t->K * ldb;
	const size_t nc = (size_t)t->M * ldc;
	uint8_t *A = xmalloc(na), *B = xmalloc(nb);
	int32_t *C = xmalloc(nc * 4), *R = xmalloc(nc * 4);
	long bad = 0;

	fill_bytes(A, na);
	fill_bytes(B, nb);
	fill_sentinel(C, nc);
	if (t->acc)
		for (size_t i = 0; i < nc; i++)
			C[i] = (int32_t)rnd();
	memcpy(R, C, nc * 4);
	npu_kern_gemm_i8(t->M, t->N, t->K, A, lda, t->as, t->azp, B, ldb, t->bs,
			 t->bzp, C, ldc, t->acc);
	ref_gemm_i8(t->M, t->N, t->K, A, lda, t->as, t->azp, B, ldb, t->bs,
		    t->bzp, R, ldc, t->acc);
	for (size_t i = 0; i < nc; i++)
		bad += C[i] != R[i];
	free(A);
	free(B);
	free(C);
	free(R);
	return bad;
}

#define CHECK_I8(...)							\
	do {								\
		struct i8_case t_ = { __VA_ARGS__ };			\
		long bad_ = run_i8_case(&t_);				\
									\
		ck_assert_msg(bad_ == 0,				\
			      "gemm_i8 M=%d N=%d K=%d as=%d bs=%d azp=%d bzp=%d acc=%d: %ld wrong", \
			      t_.M, t_.N, t_.K, t_.as, t_.bs, t_.azp, t_.bzp, t_.acc, bad_); \
	} while (0)

static const int odd_sizes[] = { 1, 2, 3, 5, 11, 12, 13, 17, 31, 32, 33, 47, 64, 65 };
#define NODD ((int)(sizeof(odd_sizes) / sizeof(odd_sizes[0])))

START_TEST(test_gemm_i8_s8s8_shapes)
{
	for (int a = 0; a < NODD; a++)
		for (int b = 0; b < NODD; b += 3) {
			int M = odd_sizes[a], N = odd_sizes[b];
			int K = odd_sizes[(a + b) % NODD];

			CHECK_I8(.M = M, .N = N, .K = K, .as = true, .bs = true);
		}
}
END_TEST

START_TEST(test_gemm_i8_u8u8_zero_points)
{
	static const int32_t zps[][2] = { { 128, 128 }, { 3, 250 }, { 0, 77 }, { 255, 0 } };

	for (int z = 0; z < 4; z++)
		for (int s = 0; s < 6; s++)
			CHECK_I8(.M = rnd_range(1, 40), .N = rnd_range(1, 70),
				 .K = rnd_range(1, 90), .as = false, .bs = false,
				 .azp = zps[z][0], .bzp = zps[z][1]);
}
END_TEST

START_TEST(test_gemm_i8_mixed_signedness)
{
	for (int combo = 0; combo < 4; combo++)
		for (int s = 0; s < 6; s++) {
			bool as = combo & 1, bs = combo & 2;

			CHECK_I8(.M = rnd_range(1, 30), .N = rnd_range(1, 50),
				 .K = rnd_range(1, 70), .as = as, .bs = bs,
				 .azp = as ? rnd_range(-128, 127) : rnd_range(0, 255),
				 .bzp = bs ? rnd_range(-128, 127) : rnd_range(0, 255));
		}
}
END_TEST

START_TEST(test_gemm_i8_leading_dims)
{
	/* C padding columns must keep their sentinel: run_i8_case compares them */
	CHECK_I8(.M = 13, .N = 33, .K = 19, .lda_pad = 5, .ldb_pad = 7,
		 .ldc_pad = 3, .as = true, .bs = true, .azp = -3, .bzp = 9);
	CHECK_I8(.M = 7, .N = 16, .K = 64, .lda_pad = 64, .ldb_pad = 1,
		 .ldc_pad = 16, .as = false, .bs = true, .azp = 100);
	CHECK_I8(.M = 25, .N = 1, .K = 3, .lda_pad = 1, .ldb_pad = 31,
		 .ldc_pad = 1, .as = true, .bs = false, .bzp = 128);
	CHECK_I8(.M = 1, .N = 100, .K = 1, .lda_pad = 9, .ldb_pad = 100,
		 .ldc_pad = 28, .as = false, .bs = false);
}
END_TEST

START_TEST(test_gemm_i8_accumulate)
{
	for (int s = 0; s < 8; s++)
		CHECK_I8(.M = rnd_range(1, 30), .N = rnd_range(1, 40),
			 .K = rnd_range(1, 600), .ldc_pad = s, .as = s & 1,
			 .bs = s & 2, .azp = s, .bzp = -s, .acc = true);
}
END_TEST

START_TEST(test_gemm_i8_blocking)
{
	/* cross the MC (384), KC (1024 for int8) and NC (2048) block edges */
	CHECK_I8(.M = 400, .N = 45, .K = 1030, .as = true, .bs = true, .azp = 1, .bzp = 2);
	CHECK_I8(.M = 385, .N = 33, .K = 1025, .as = false, .bs = false,
		 .azp = 17, .bzp = 200, .acc = true);
	CHECK_I8(.M = 3, .N = 2080, .K = 9, .ldc_pad = 5, .as = true, .bs = false,
		 .azp = -7, .bzp = 30);
}
END_TEST

START_TEST(test_gemm_i8_extremes)
{
	/* saturating inputs: every product at its largest magnitude */
	static const uint8_t vals[] = { 0x80, 0x7f, 0xff, 0x00 };
	const int M = 14, N = 35, K = 777;

	for (int va = 0; va < 4; va++)
		for (int vb = 0; vb < 4; vb++)
			for (int sg = 0; sg < 4; sg++) {
				uint8_t *A = xmalloc((size_t)M * K), *B = xmalloc((size_t)K * N);
				int32_t *C = xmalloc((size_t)M * N * 4), *R = xmalloc((size_t)M * N * 4);

				memset(A, vals[va], (size_t)M * K);
				memset(B, vals[vb], (size_t)K * N);
				npu_kern_gemm_i8(M, N, K, A, K, sg & 1, 0, B, N, sg & 2, 0, C, N, false);
				ref_gemm_i8(M, N, K, A, K, sg & 1, 0, B, N, sg & 2, 0, R, N, false);
				ck_assert_mem_eq(C, R, (size_t)M * N * 4);
				free(A);
				free(B);
				free(C);
				free(R);
			}
	/* zero points far outside the type: the int32 result wraps */
	CHECK_I8(.M = 9, .N = 37, .K = 300, .as = true, .bs = false,
		 .azp = 2000000000, .bzp = -2000000000);
	CHECK_I8(.M = 30, .N = 20, .K = 100, .as = false, .bs = true,
		 .azp = INT32_MIN, .bzp = INT32_MAX, .acc = true);
}
END_TEST

START_TEST(test_gemm_i8_portable)
{
	npu_kern_gemm_force_portable(true);
	for (int s = 0; s < 12; s++)
		CHECK_I8(.M = rnd_range(1, 30), .N = rnd_range(1, 40),
			 .K = rnd_range(1, 100), .lda_pad = s % 3, .ldc_pad = s % 2,
			 .as = s & 1, .bs = s & 2, .azp = s * 5, .bzp = 3 - s,
			 .acc = s & 4);
	CHECK_I8(.M = 5, .N = 7, .K = 9, .as = true, .bs = true,
		 .azp = INT32_MAX, .bzp = INT32_MIN);
	npu_kern_gemm_force_portable(false);
}
END_TEST

START_TEST(test_gemm_degenerate)
{
	int32_t ci[6];
	float cf[6];
	uint8_t a8[4] = { 1, 2, 3, 4 };
	uint16_t a16[4] = { 0x3f80, 0x3f80, 0x3f80, 0x3f80 };
	float a32[4] = { 1, 1, 1, 1 };

	for (int portable = 0; portable < 2; portable++) {
		npu_kern_gemm_force_portable(portable);
		/* K == 0: C becomes zero ... */
		fill_sentinel(ci, 6);
		npu_kern_gemm_i8(2, 2, 0, a8, 1, true, 5, a8, 2, true, 5, ci, 3, false);
		ck_assert_int_eq(ci[0], 0);
		ck_assert_int_eq(ci[4], 0);
		ck_assert_int_eq(ci[2], SENTINEL);	/* ldc padding */
		fill_sentinel(cf, 6);
		npu_kern_gemm_f32(2, 2, 0, a32, 1, a32, 2, cf, 3, false);
		ck_assert(cf[0] == 0.0f && cf[4] == 0.0f);
		fill_sentinel(cf, 6);
		npu_kern_gemm_bf16(2, 2, 0, a16, 1, a16, 2, cf, 3, false);
		ck_assert(cf[1] == 0.0f && cf[3] == 0.0f);
		/* ... unless accumulating */
		fill_sentinel(ci, 6);
		npu_kern_gemm_i8(2, 2, 0, a8, 1, true, 5, a8, 2, true, 5, ci, 3, true);
		ck_assert_int_eq(ci[0], SENTINEL);
		/* M == 0 or N == 0: nothing written */
		npu_kern_gemm_i8(0, 2, 2, a8, 2, true, 0, a8, 2, true, 0, ci, 3, false);
		npu_kern_gemm_i8(2, 0, 2, a8, 2, true, 0, a8, 2, true, 0, ci, 3, false);
		npu_kern_gemm_bf16(0, 2, 2, a16, 2, a16, 2, cf, 2, false);
		npu_kern_gemm_f32(2, 0, 2, a32, 2, a32, 2, cf, 2, false);
		ck_assert_int_eq(ci[0], SENTINEL);
		ck_assert_int_eq(ci[5], SENTINEL);
		/* 1x1x1 */
		npu_kern_gemm_i8(1, 1, 1, a8 + 3, 1, false, 1, a8 + 2, 1, false, 0, ci, 1, false);
		ck_assert_int_eq(ci[0], 9);
		npu_kern_gemm_bf16(1, 1, 1, a16, 1, a16, 1, cf, 1, false);
		ck_assert(cf[0] == 1.0f);
		npu_kern_gemm_f32(1, 1, 1, a32, 1, a32, 1, cf, 1, true);
		ck_assert(cf[0] == 2.0f);
	}
	npu_kern_gemm_force_portable(false);
}
END_TEST

/* ---- floating-point GEMM ---- */

/*
 * ref[i] (double) and the bound of an fp32 dot product's rounding error:
 * (K + 2) ulp-ish of the sum of |a*b| (plus |C| when accumulating).
 */
static void ref_gemm_float(int M, int N, int K, const float *A, long lda,
			   const float *B, long ldb, const float *C0, double *R,
			   double *tol, long ldc, bool acc)
{
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double s = acc ? C0[i * ldc + j] : 0.0;
			double m = fabs(s);

			for (int k = 0; k < K; k++) {
				double p = (double)A[i * lda + k] * B[k * ldb + j];

				s += p;
				m += fabs(p);
			}
			R[i * ldc + j] = s;
			tol[i * ldc + j] = (K + 2) * 1.2e-7 * m + 1e-30;
		}
}

struct f_case {
	int M, N, K;
	int lda_pad, ldb_pad, ldc_pad;
	bool acc;
	bool exact;	/* small-integer-ish inputs: every partial sum is exact */
	bool bf16;
};

/* returns the number of elements outside tolerance (or != sentinel) */
static long run_f_case(const struct f_case *t)
{
	const long lda = t->K + t->lda_pad, ldb = t->N + t->ldb_pad;
	const long ldc = t->N + t->ldc_pad;
	const size_t na = (size_t)t->M * lda, nb = (size_t)t->K * ldb;
	const size_t nc = (size_t)t->M * ldc;
	float *A = xmalloc(na * 4), *B = xmalloc(nb * 4);
	uint16_t *A16 = xmalloc(na * 2), *B16 = xmalloc(nb * 2);
	float *C = xmalloc(nc * 4), *C0 = xmalloc(nc * 4);
	double *R = xmalloc(nc * 8), *tol = xmalloc(nc * 8);
	long bad = 0;

	for (size_t i = 0; i < na; i++) {
		float v = t->exact ? rnd_small_float()
				   : (float)((double)(int32_t)rnd() / 2147483648.0);

		A16[i] = bf16_bits(v);
		A[i] = t->bf16 ? bf16_val(A16[i]) : v;
	}
	for (size_t i = 0; i < nb; i++) {
		float v = t->exact ? rnd_small_float()
				   : (float)((double)(int32_t)rnd() / 2147483648.0);

		B16[i] = bf16_bits(v);
		B[i] = t->bf16 ? bf16_val(B16[i]) : v;
	}
	fill_sentinel(C, nc);
	if (t->acc)
		for (size_t i = 0; i < nc; i++)
			C[i] = t->exact ? rnd_small_float() : (float)rnd_range(-1000, 1000) / 999.0f;
	memcpy(C0, C, nc * 4);
	if (t->bf16)
		npu_kern_gemm_bf16(t->M, t->N, t->K, A16, lda, B16, ldb, C, ldc, t->acc);
	else
		npu_kern_gemm_f32(t->M, t->N, t->K, A, lda, B, ldb, C, ldc, t->acc);
	ref_gemm_float(t->M, t->N, t->K, A, lda, B, ldb, C0, R, tol, ldc, t->acc);
	for (int i = 0; i < t->M; i++)
		for (long j = 0; j < ldc; j++) {
			size_t x = (size_t)i * ldc + j;

			if (j >= t->N)
				bad += memcmp(&C[x], &C0[x], 4) != 0;
			else if (t->exact)
				bad += (double)C[x] != R[x];
			else
				bad += !(fabs(C[x] - R[x]) <= tol[x]);
		}
	free(A);
	free(B);
	free(A16);
	free(B16);
	free(C);
	free(C0);
	free(R);
	free(tol);
	return bad;
}

#define CHECK_F(...)							\
	do {								\
		struct f_case t_ = { __VA_ARGS__ };			\
		long bad_ = run_f_case(&t_);				\
									\
		ck_assert_msg(bad_ == 0,				\
			      "gemm_%s M=%d N=%d K=%d acc=%d exact=%d: %ld wrong", \
			      t_.bf16 ? "bf16" : "f32", t_.M, t_.N, t_.K, \
			      t_.acc, t_.exact, bad_);			\
	} while (0)

START_TEST(test_gemm_bf16_exact)
{
	for (int a = 0; a < NODD; a += 2)
		for (int b = 1; b < NODD; b += 3)
			CHECK_F(.M = odd_sizes[a], .N = odd_sizes[b],
				.K = odd_sizes[(a * 3 + b) % NODD], .exact = true,
				.bf16 = true);
	/* two KC blocks (512 bf16 deep), odd K */
	CHECK_F(.M = 25, .N = 40, .K = 601, .exact = true, .bf16 = true, .acc = true);
}
END_TEST

START_TEST(test_gemm_bf16_random)
{
	for (int s = 0; s < 10; s++)
		CHECK_F(.M = rnd_range(1, 40), .N = rnd_range(1, 70),
			.K = rnd_range(1, 300), .lda_pad = s % 4, .ldb_pad = s % 3,
			.ldc_pad = s % 5, .acc = s & 1, .bf16 = true);
}
END_TEST

START_TEST(test_gemm_bf16_portable)
{
	npu_kern_gemm_force_portable(true);
	for (int s = 0; s < 8; s++)
		CHECK_F(.M = rnd_range(1, 30), .N = rnd_range(1, 50),
			.K = rnd_range(1, 100), .lda_pad = s % 2, .ldc_pad = s % 3,
			.acc = s & 1, .exact = s & 2, .bf16 = true);
	npu_kern_gemm_force_portable(false);
}
END_TEST

/*
 * A bf16 of any kind: a special value one time in eight (NaNs quiet and
 * signalling, infinities, denormals, zeros of both signs, the extremes),
 * else a normal number of either sign between 2^-12 and 2^12.
 */
static uint16_t rnd_bf16_any(void)
{
	static const uint16_t special[] = {
		0x7fc0, 0xffc1, 0x7f81, 0x7f80, 0xff80, 0x0001, 0x807f,
		0x0000, 0x8000, 0x7f7f, 0xff7f, 0x0080,
	};
	uint32_t r = rnd();

	if (r % 8 == 0)
		return special[(r >> 3) % (sizeof(special) / sizeof(special[0]))];
	return (uint16_t)(((r >> 3) & 0x8000) | (uint32_t)(127 + rnd_range(-12, 12)) << 7 |
			  (r >> 20 & 0x7f));
}

/*
 * M = 1 has its own path (B read in place, no packing), which must give
 * what a row of a larger GEMM gives, bit for bit: a row of the blocked
 * path depends on that row alone.  Row 0 of an M = 2 GEMM is the
 * reference, on odd N, K across KC blocks (512 deep) and odd, ldb > N,
 * accumulating or not, with special values among the inputs.
 */
START_TEST(test_gemm_bf16_row_vector)
{
	static const int ns[] = { 1, 15, 16, 17, 31, 33, 100, 129, 257, 2100 };
	static const int ks[] = { 1, 2, 3, 511, 512, 513, 1025, 1100 };
	long bad = 0;

	for (unsigned a = 0; a < sizeof(ns) / sizeof(ns[0]); a++)
		for (unsigned b = 0; b < sizeof(ks) / sizeof(ks[0]); b++)
			for (int v = 0; v < 4; v++) {
				const int N = ns[a], K = ks[b];
				const bool acc = v & 1;
				const long lda = K + (v >> 1), ldb = N + 3 * (v >> 1);
				const long ldc = N + 2;
				uint16_t *A = xmalloc((size_t)2 * lda * 2);
				uint16_t *B = xmalloc((size_t)K * ldb * 2);
				float *C1 = xmalloc((size_t)ldc * 4);
				float *C2 = xmalloc((size_t)2 * ldc * 4);

				for (long i = 0; i < 2 * lda; i++)
					A[i] = rnd_bf16_any();
				for (long i = 0; i < K * ldb; i++)
					B[i] = rnd_bf16_any();
				fill_sentinel(C1, (size_t)ldc);
				if (acc)
					for (long j = 0; j < N; j++)
						C1[j] = (float)rnd_range(-1000, 1000) / 7.0f;
				memcpy(C2, C1, (size_t)ldc * 4);
				memcpy(C2 + ldc, C1, (size_t)ldc * 4);
				npu_kern_gemm_bf16(1, N, K, A, lda, B, ldb, C1, ldc, acc);
				npu_kern_gemm_bf16(2, N, K, A, lda, B, ldb, C2, ldc, acc);
				if (memcmp(C1, C2, (size_t)ldc * 4)) {
					bad++;
					fprintf(stderr, "gemm_bf16 M=1 N=%d K=%d acc=%d ldb=%ld: differs from a row of M=2\n",
						N, K, acc, ldb);
				}
				free(A);
				free(B);
				free(C1);
				free(C2);
			}
	ck_assert_int_eq(bad, 0);
}
END_TEST

/*
 * The fast path computes a tile of C with the smallest micro-kernel that
 * covers it (4, 8 or 12 rows; 16 or 32 columns).  An element of C must
 * not depend on which one ran: the top-left m x n corner of a 13 x 40
 * product (two tiles each way, every kernel shape) is computed again on
 * its own, as an m x n product reading the same A and B, for every m in
 * 2..13 and n in 1..40, with NaNs of different payloads, infinities and
 * denormals among the inputs (so a changed order of the sums shows), and
 * must match bit for bit; columns past n must keep their sentinel.
 * (m = 1 has its own path, checked against M = 2 above.)
 */
/* n elements of any kind (rnd_bf16_any, fp32 with random low bits) */
static void fill_any(uint8_t *p, long n, bool bf16)
{
	for (long i = 0; i < n; i++) {
		uint16_t h = rnd_bf16_any();
		uint32_t u = (uint32_t)h << 16 | (rnd() & 0xffff);

		if (bf16)
			memcpy(p + 2 * i, &h, 2);
		else
			memcpy(p + 4 * i, &u, 4);
	}
}

static void gemm_float(bool bf16, int M, int N, int K, const uint8_t *A,
		       long lda, const uint8_t *B, long ldb, float *C, long ldc,
		       bool acc)
{
	if (bf16)
		npu_kern_gemm_bf16(M, N, K, (const uint16_t *)A, lda,
				   (const uint16_t *)B, ldb, C, ldc, acc);
	else
		npu_kern_gemm_f32(M, N, K, (const float *)A, lda,
				  (const float *)B, ldb, C, ldc, acc);
}

static void sub_tile_case(bool bf16, int K, bool acc, long *bad)
{
	enum { MM = 13, NN = 40 };
	const long lda = K + 1, ldb = NN + 3, ldc = NN + 2;
	const size_t esz = bf16 ? 2 : 4;
	uint8_t *A = xmalloc((size_t)MM * lda * esz);
	uint8_t *B = xmalloc((size_t)K * ldb * esz);
	float *C0 = xmalloc((size_t)MM * ldc * 4), *full = xmalloc((size_t)MM * ldc * 4);
	float *C = xmalloc((size_t)MM * ldc * 4);

	fill_any(A, MM * lda, bf16);
	fill_any(B, K * ldb, bf16);
	for (long i = 0; i < MM * ldc; i++)
		C0[i] = acc ? (float)rnd_range(-1000, 1000) / 7.0f : 0.0f;
	memcpy(full, C0, (size_t)MM * ldc * 4);
	gemm_float(bf16, MM, NN, K, A, lda, B, ldb, full, ldc, acc);
	for (int m = 2; m <= MM; m++)
		for (int n = 1; n <= NN; n++) {
			long wrong = 0;

			memcpy(C, C0, (size_t)MM * ldc * 4);
			for (int i = 0; i < m; i++)
				fill_sentinel(C + i * ldc + n, (size_t)(ldc - n));
			gemm_float(bf16, m, n, K, A, lda, B, ldb, C, ldc, acc);
			for (int i = 0; i < m; i++) {
				uint32_t sent = SENTINEL, u;

				wrong += memcmp(C + i * ldc, full + i * ldc, (size_t)n * 4) != 0;
				for (long j = n; j < ldc; j++) {
					memcpy(&u, C + i * ldc + j, 4);
					wrong += u != sent;
				}
			}
			if (wrong) {
				(*bad)++;
				fprintf(stderr, "gemm_%s %d x %d (K=%d acc=%d): %ld rows differ from the 13 x 40 product's corner\n",
					bf16 ? "bf16" : "f32", m, n, K, acc, wrong);
			}
		}
	free(A);
	free(B);
	free(C0);
	free(full);
	free(C);
}

START_TEST(test_gemm_float_tile_shapes)
{
	static const int ks[] = { 1, 2, 7, 64, 257, 600 };
	long bad = 0;

	for (int bf16 = 0; bf16 < 2; bf16++)
		for (unsigned k = 0; k < sizeof(ks) / sizeof(ks[0]); k++)
			sub_tile_case(bf16, ks[k], k & 1, &bad);
	ck_assert_int_eq(bad, 0);
}
END_TEST

START_TEST(test_gemm_f32_shapes)
{
	for (int a = 0; a < NODD; a += 2)
		for (int b = 0; b < NODD; b += 3)
			CHECK_F(.M = odd_sizes[b], .N = odd_sizes[a],
				.K = odd_sizes[(a + 2 * b) % NODD], .exact = (a + b) & 1,
				.ldb_pad = b % 2);
	/* crosses the fp32 KC block (256) and MC (384) */
	CHECK_F(.M = 390, .N = 50, .K = 260, .lda_pad = 3, .ldc_pad = 1);
}
END_TEST

START_TEST(test_gemm_f32_accumulate_portable)
{
	for (int portable = 0; portable < 2; portable++) {
		npu_kern_gemm_force_portable(portable);
		for (int s = 0; s < 6; s++)
			CHECK_F(.M = rnd_range(1, 30), .N = rnd_range(1, 50),
				.K = rnd_range(1, 200), .lda_pad = s, .ldb_pad = 1,
				.ldc_pad = s % 2, .acc = true, .exact = s & 1);
	}
	npu_kern_gemm_force_portable(false);
}
END_TEST

/* ---- convolution ---- */

enum { T_I8, T_BF16, T_F32 };

struct conv_case {
	struct npu_kern_conv p;
	int type;
	bool xs, ws;		/* int8: signedness */
	int32_t xzp, wzp;	/* int8: zero points */
	bool acc;
};

/* fill OH/OW from the pads: pad_bottom = pb, pad_right = pr */
static struct npu_kern_conv conv_shape(int H, int W, int C, int KH, int KW,
				       int OC, int sh, int sw, int dh, int dw,
				       int pt, int pl, int pb, int pr, int groups)
{
	struct npu_kern_conv p = {
		.H = H, .W = W, .C = C, .KH = KH, .KW = KW, .OC = OC,
		.stride_h = sh, .stride_w = sw, .dil_h = dh, .dil_w = dw,
		.pad_top = pt, .pad_left = pl, .groups = groups,
	};

	p.OH = (H + pt + pb - dh * (KH - 1) - 1) / sh + 1;
	p.OW = (W + pl + pr - dw * (KW - 1) - 1) / sw + 1;
	return p;
}

/* naive reference; padding reads as the zero point (0 for floats) */
static double ref_conv_at(const struct conv_case *t, const void *X,
			  const void *Wt, int oh, int ow, int oc, double *mag)
{
	const struct npu_kern_conv *p = &t->p;
	const int Cg = p->C / p->groups, OCg = p->OC / p->groups;
	const int grp = oc / OCg;
	double s = 0.0;
	int64_t si = 0;

	*mag = 0.0;
	for (int kh = 0; kh < p->KH; kh++)
		for (int kw = 0; kw < p->KW; kw++)
			for (int c = 0; c < Cg; c++) {
				int ih = oh * p->stride_h - p->pad_top + kh * p->dil_h;
				int iw = ow * p->stride_w - p->pad_left + kw * p->dil_w;
				bool in = ih >= 0 && ih < p->H && iw >= 0 && iw < p->W;
				long xi = ((long)ih * p->W + iw) * p->C + grp * Cg + c;
				long wi = (((long)kh * p->KW + kw) * Cg + c) * p->OC + oc;

				if (t->type == T_I8) {
					int64_t x = in ? elem_i8(X, xi, t->xs) : t->xzp;

					si += (x - t->xzp) * ((int64_t)elem_i8(Wt, wi, t->ws) - t->wzp);
				} else {
					double x = 0.0, w;

					if (t->type == T_BF16) {
						x = in ? bf16_val(((const uint16_t *)X)[xi]) : 0.0;
						w = bf16_val(((const uint16_t *)Wt)[wi]);
					} else {
						x = in ? ((const float *)X)[xi] : 0.0;
						w = ((const float *)Wt)[wi];
					}
					s += x * w;
					*mag += fabs(x * w);
				}
			}
	return t->type == T_I8 ? (double)(int32_t)(uint32_t)(uint64_t)si : s;
}

/* returns the number of wrong outputs */
static long run_conv_case(const struct conv_case *t)
{
	const struct npu_kern_conv *p = &t->p;
	const size_t esz = t->type == T_I8 ? 1 : t->type == T_BF16 ? 2 : 4;
	const size_t nx = (size_t)p->H * p->W * p->C;
	const size_t nw = (size_t)p->KH * p->KW * (p->C / p->groups) * p->OC;
	const size_t ny = (size_t)p->OH * p->OW * p->OC;
	uint8_t *X = xmalloc(nx * esz), *Wt = xmalloc(nw * esz);
	uint32_t *Y = xmalloc(ny * 4), *Y0 = xmalloc(ny * 4);
	long bad = 0;

	if (t->type == T_I8) {
		fill_bytes(X, nx);
		fill_bytes(Wt, nw);
	} else {
		for (size_t i = 0; i < nx + nw; i++) {
			float v = (float)((double)(int32_t)rnd() / 2147483648.0);
			uint8_t *d = i < nx ? X + i * esz : Wt + (i - nx) * esz;

			if (t->type == T_BF16) {
				uint16_t b = bf16_bits(v);

				memcpy(d, &b, 2);
			} else {
				memcpy(d, &v, 4);
			}
		}
	}
	for (size_t i = 0; i < ny; i++) {
		float f = (float)rnd_range(-100, 100) / 8.0f;

		if (t->type == T_I8)
			Y[i] = t->acc ? rnd() : SENTINEL;
		else
			memcpy(&Y[i], &f, 4);
		if (!t->acc && t->type != T_I8)
			Y[i] = SENTINEL;
	}
	memcpy(Y0, Y, ny * 4);

	switch (t->type) {
	case T_I8:
		npu_kern_conv2d_i8(p, X, t->xs, t->xzp, Wt, t->ws, t->wzp,
				   (int32_t *)Y, t->acc);
		break;
	case T_BF16:
		npu_kern_conv2d_bf16(p, (uint16_t *)X, (uint16_t *)Wt, (float *)Y, t->acc);
		break;
	default:
		npu_kern_conv2d_f32(p, (float *)X, (float *)Wt, (float *)Y, t->acc);
		break;
	}

	for (int oh = 0; oh < p->OH; oh++)
		for (int ow = 0; ow < p->OW; ow++)
			for (int oc = 0; oc < p->OC; oc++) {
				size_t i = ((size_t)oh * p->OW + ow) * p->OC + oc;
				double mag, r = ref_conv_at(t, X, Wt, oh, ow, oc, &mag);

				if (t->type == T_I8) {
					uint32_t want = (uint32_t)(int32_t)r;

					if (t->acc)
						want += Y0[i];
					bad += Y[i] != want;
				} else {
					float got, c0 = 0.0f;

					memcpy(&got, &Y[i], 4);
					if (t->acc) {
						memcpy(&c0, &Y0[i], 4);
						mag += fabs(c0);
					}
					bad += !(fabs(got - (r + c0)) <=
						 (p->KH * p->KW * p->C + 2) * 1.2e-7 * mag + 1e-30);
				}
			}
	free(X);
	free(Wt);
	free(Y);
	free(Y0);
	return bad;
}

#define CHECK_CONV(shape, ...)						\
	do {								\
		struct conv_case t_ = { .p = shape, __VA_ARGS__ };	\
		long bad_ = run_conv_case(&t_);				\
									\
		ck_assert_msg(bad_ == 0,				\
			      "conv type=%d %dx%dx%d k%dx%d oc%d s%d,%d d%d,%d p%d,%d g%d -> %dx%d: %ld wrong", \
			      t_.type, t_.p.H, t_.p.W, t_.p.C, t_.p.KH, t_.p.KW, \
			      t_.p.OC, t_.p.stride_h, t_.p.stride_w, t_.p.dil_h, \
			      t_.p.dil_w, t_.p.pad_top, t_.p.pad_left, t_.p.groups, \
			      t_.p.OH, t_.p.OW, bad_);			\
	} while (0)

START_TEST(test_conv_i8_basic)
{
	/* 3x3 "same" convolution, both signednesses, zero points */
	CHECK_CONV(conv_shape(9, 11, 8, 3, 3, 16, 1, 1, 1, 1, 1, 1, 1, 1, 1),
		   .type = T_I8, .xs = true, .ws = true);
	CHECK_CONV(conv_shape(7, 6, 5, 3, 3, 35, 1, 1, 1, 1, 1, 1, 1, 1, 1),
		   .type = T_I8, .xs = false, .ws = true, .xzp = 128, .wzp = 3);
	CHECK_CONV(conv_shape(5, 5, 3, 5, 5, 4, 1, 1, 1, 1, 2, 2, 2, 2, 1),
		   .type = T_I8, .xs = true, .ws = false, .xzp = -5, .wzp = 130);
	/* single input channel (direct loop) and valid (no padding) */
	CHECK_CONV(conv_shape(8, 9, 1, 3, 2, 20, 1, 1, 1, 1, 0, 0, 0, 0, 1),
		   .type = T_I8, .xs = false, .ws = false, .xzp = 7, .wzp = 9);
}
END_TEST

START_TEST(test_conv_i8_stride_dilation_pads)
{
	/* strides, dilations, asymmetric pads (bottom/right from OH/OW) */
	CHECK_CONV(conv_shape(13, 10, 6, 3, 3, 9, 2, 2, 1, 1, 1, 0, 2, 1, 1),
		   .type = T_I8, .xs = true, .ws = true, .xzp = 4, .wzp = -2);
	CHECK_CONV(conv_shape(12, 12, 4, 3, 3, 8, 1, 1, 2, 3, 2, 3, 0, 1, 1),
		   .type = T_I8, .xs = false, .ws = true, .xzp = 200);
	CHECK_CONV(conv_shape(11, 7, 3, 2, 4, 5, 3, 2, 2, 1, 0, 3, 3, 0, 1),
		   .type = T_I8, .xs = true, .ws = false, .wzp = 128, .acc = true);
	/* pads larger than the kernel: rows that are all padding */
	CHECK_CONV(conv_shape(4, 4, 2, 2, 2, 3, 1, 1, 1, 1, 3, 3, 3, 3, 1),
		   .type = T_I8, .xs = true, .ws = true, .xzp = 9, .wzp = 1);
	/* negative implied bottom/right pad (cropping) */
	CHECK_CONV(conv_shape(10, 10, 3, 3, 3, 4, 2, 2, 1, 1, 1, 1, -1, -2, 1),
		   .type = T_I8, .xs = true, .ws = true);
}
END_TEST

START_TEST(test_conv_i8_groups)
{
	CHECK_CONV(conv_shape(8, 7, 12, 3, 3, 18, 1, 1, 1, 1, 1, 1, 1, 1, 3),
		   .type = T_I8, .xs = true, .ws = true, .xzp = 2, .wzp = 1);
	CHECK_CONV(conv_shape(9, 9, 8, 3, 2, 4, 2, 1, 1, 2, 0, 1, 1, 0, 2),
		   .type = T_I8, .xs = false, .ws = false, .xzp = 100, .wzp = 128,
		   .acc = true);
	CHECK_CONV(conv_shape(6, 5, 16, 1, 1, 32, 1, 1, 1, 1, 0, 0, 0, 0, 4),
		   .type = T_I8, .xs = true, .ws = false, .wzp = 7);
}
END_TEST

START_TEST(test_conv_i8_depthwise)
{
	/* channel multiplier 1 and 3 */
	CHECK_CONV(conv_shape(10, 9, 17, 3, 3, 17, 1, 1, 1, 1, 1, 1, 1, 1, 17),
		   .type = T_I8, .xs = true, .ws = true, .xzp = -3, .wzp = 5);
	CHECK_CONV(conv_shape(8, 8, 5, 3, 3, 15, 2, 2, 2, 2, 2, 1, 1, 2, 5),
		   .type = T_I8, .xs = false, .ws = true, .xzp = 128, .acc = true);
}
END_TEST

START_TEST(test_conv_i8_zp_out_of_range)
{
	/* x_zp that no input byte can hold: direct loop, padding still = zp */
	CHECK_CONV(conv_shape(6, 7, 4, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1, 1, 1),
		   .type = T_I8, .xs = false, .ws = true, .xzp = 300, .wzp = 2);
	CHECK_CONV(conv_shape(6, 5, 6, 3, 2, 4, 2, 1, 1, 2, 1, 2, 0, 1, 2),
		   .type = T_I8, .xs = true, .ws = false, .xzp = -1000, .wzp = 90,
		   .acc = true);
}
END_TEST

START_TEST(test_conv_i8_pointwise)
{
	/* 1x1 stride 1: GEMM straight on the input, also with OH < H */
	CHECK_CONV(conv_shape(7, 9, 24, 1, 1, 40, 1, 1, 1, 1, 0, 0, 0, 0, 1),
		   .type = T_I8, .xs = true, .ws = true, .xzp = 1, .wzp = -1,
		   .acc = true);
	CHECK_CONV(conv_shape(7, 9, 5, 1, 1, 3, 1, 1, 1, 1, 0, 0, -2, 0, 1),
		   .type = T_I8, .xs = false, .ws = false, .xzp = 10, .wzp = 20);
	/* 1x1 stride 2 goes through im2col */
	CHECK_CONV(conv_shape(8, 8, 6, 1, 1, 7, 2, 2, 1, 1, 0, 0, 0, 0, 1),
		   .type = T_I8, .xs = true, .ws = true);
}
END_TEST

START_TEST(test_conv_bf16)
{
	CHECK_CONV(conv_shape(9, 8, 6, 3, 3, 10, 1, 1, 1, 1, 1, 1, 1, 1, 1), .type = T_BF16);
	CHECK_CONV(conv_shape(11, 9, 4, 3, 2, 6, 2, 1, 1, 2, 0, 2, 1, 0, 2),
		   .type = T_BF16, .acc = true);
	CHECK_CONV(conv_shape(7, 7, 9, 3, 3, 9, 1, 2, 2, 1, 2, 1, 1, 2, 9), .type = T_BF16);
	CHECK_CONV(conv_shape(5, 6, 3, 3, 3, 12, 1, 1, 1, 1, 1, 1, 1, 1, 3),
		   .type = T_BF16, .acc = true);
	CHECK_CONV(conv_shape(6, 6, 8, 1, 1, 5, 1, 1, 1, 1, 0, 0, 0, 0, 1), .type = T_BF16);
}
END_TEST

START_TEST(test_conv_f32)
{
	CHECK_CONV(conv_shape(9, 10, 7, 3, 3, 11, 1, 1, 1, 1, 1, 1, 1, 1, 1), .type = T_F32);
	CHECK_CONV(conv_shape(12, 9, 4, 3, 3, 8, 2, 3, 1, 2, 1, 0, 2, 2, 2),
		   .type = T_F32, .acc = true);
	CHECK_CONV(conv_shape(8, 8, 6, 5, 5, 6, 1, 1, 1, 1, 2, 2, 2, 2, 6), .type = T_F32);
	CHECK_CONV(conv_shape(8, 7, 4, 3, 3, 8, 1, 1, 1, 1, 1, 1, 1, 1, 4),
		   .type = T_F32, .acc = true);
	CHECK_CONV(conv_shape(5, 5, 16, 1, 1, 33, 1, 1, 1, 1, 0, 0, 0, 0, 1), .type = T_F32);
}
END_TEST

START_TEST(test_conv_portable)
{
	npu_kern_gemm_force_portable(true);
	CHECK_CONV(conv_shape(7, 8, 6, 3, 3, 10, 1, 2, 1, 1, 1, 1, 0, 1, 2),
		   .type = T_I8, .xs = true, .ws = false, .xzp = 3, .wzp = 128);
	CHECK_CONV(conv_shape(7, 8, 6, 3, 3, 10, 2, 1, 1, 1, 1, 1, 1, 1, 1), .type = T_BF16);
	CHECK_CONV(conv_shape(7, 8, 6, 3, 3, 9, 1, 1, 2, 1, 2, 0, 1, 1, 3),
		   .type = T_F32, .acc = true);
	npu_kern_gemm_force_portable(false);
}
END_TEST

START_TEST(test_conv_empty_kernel_depth)
{
	/* C == 0: an empty sum, so Y is zero (or left alone when accumulating) */
	struct npu_kern_conv p = conv_shape(3, 3, 0, 1, 1, 2, 1, 1, 1, 1, 0, 0, 0, 0, 1);
	int32_t y[18];
	float yf[18];

	fill_sentinel(y, 18);
	npu_kern_conv2d_i8(&p, y, true, 0, y, true, 0, y, true);
	ck_assert_int_eq(y[17], SENTINEL);
	npu_kern_conv2d_i8(&p, y, true, 0, y, true, 0, y, false);
	ck_assert_int_eq(y[0], 0);
	ck_assert_int_eq(y[17], 0);
	fill_sentinel(yf, 18);
	npu_kern_conv2d_f32(&p, yf, yf, yf, false);
	ck_assert(yf[5] == 0.0f);
}
END_TEST

static Suite *kern_gemm_suite(void)
{
	Suite *s = suite_create("kern_gemm");
	TCase *g = tcase_create("gemm"), *c = tcase_create("conv");

	tcase_set_timeout(g, 60);
	tcase_set_timeout(c, 60);
	tcase_add_test(g, test_gemm_i8_s8s8_shapes);
	tcase_add_test(g, test_gemm_i8_u8u8_zero_points);
	tcase_add_test(g, test_gemm_i8_mixed_signedness);
	tcase_add_test(g, test_gemm_i8_leading_dims);
	tcase_add_test(g, test_gemm_i8_accumulate);
	tcase_add_test(g, test_gemm_i8_blocking);
	tcase_add_test(g, test_gemm_i8_extremes);
	tcase_add_test(g, test_gemm_i8_portable);
	tcase_add_test(g, test_gemm_degenerate);
	tcase_add_test(g, test_gemm_bf16_exact);
	tcase_add_test(g, test_gemm_bf16_random);
	tcase_add_test(g, test_gemm_bf16_portable);
	tcase_add_test(g, test_gemm_bf16_row_vector);
	tcase_add_test(g, test_gemm_float_tile_shapes);
	tcase_add_test(g, test_gemm_f32_shapes);
	tcase_add_test(g, test_gemm_f32_accumulate_portable);
	tcase_add_test(c, test_conv_i8_basic);
	tcase_add_test(c, test_conv_i8_stride_dilation_pads);
	tcase_add_test(c, test_conv_i8_groups);
	tcase_add_test(c, test_conv_i8_depthwise);
	tcase_add_test(c, test_conv_i8_zp_out_of_range);
	tcase_add_test(c, test_conv_i8_pointwise);
	tcase_add_test(c, test_conv_bf16);
	tcase_add_test(c, test_conv_f32);
	tcase_add_test(c, test_conv_portable);
	tcase_add_test(c, test_conv_empty_kernel_depth);
	suite_add_tcase(s, g);
	suite_add_tcase(s, c);
	return s;
}

NPU_TEST_SUITE(kern_gemm_suite)
