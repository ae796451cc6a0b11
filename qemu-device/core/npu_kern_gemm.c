// SPDX-License-Identifier: MIT
/*
 * GEMM kernels of the device core: int8/uint8 -> int32, bf16 -> fp32 and
 * fp32 -> fp32, row-major with arbitrary leading dimensions.
 *
 * Two implementations of each:
 *
 *  - a portable one (plain C, written so the compiler can vectorise the
 *    innermost loop at whatever ISA the library is built for);
 *  - an AVX-512 one, compiled with function-level target attributes (the
 *    library itself is not built with -march=native) and selected at run
 *    time with __builtin_cpu_supports.
 *
 * The AVX-512 path is a classic Goto/BLIS blocked GEMM.  Every data type is
 * packed into the same "4-byte group" layout so one driver and one A packer
 * serve all three:
 *
 *   group   = 4 consecutive K elements for int8 (one vpdpbusd lane),
 *             2 for bf16 (one vdpbf16ps lane), 1 for fp32 (one FMA lane);
 *   A panel = MR rows:   [group][MR rows][4 bytes]      (48 bytes a group)
 *   B panel = NR columns: [group][NR columns][4 bytes]   (128 bytes a group)
 *
 * so the micro-kernel broadcasts one dword of A per row and multiplies it
 * with two 64-byte vectors of B, keeping an MR x NR = 12 x 32 tile of
 * 32-bit accumulators (24 zmm) in registers.  Edges are handled by packing
 * zeros (K, M) and by masked stores (N), so any size works.
 *
 * int8 details: vpdpbusd multiplies unsigned bytes (A side) by signed bytes
 * (B side).  A signed A is flipped to unsigned (a + 128, an XOR with 0x80)
 * and an unsigned B to signed (b - 128).  Writing au = a + sa and
 * bs = b - tb (sa, tb in {0, 128}), the requested product is
 *
 *   sum_k (a - za)(b - zb) = sum_k (au - alpha)(bs - beta)
 *                          = sum au*bs - alpha*colsum(bs) - beta*rowsum(au)
 *                            + K*alpha*beta
 *
 * with alpha = sa + za and beta = zb - tb.  The row and column sums come
 * for free while packing; the correction is added in the micro-kernel's
 * epilogue.  All of it is done modulo 2^32 (unsigned arithmetic), which is
 * exactly what an int32 accumulator would hold, so the result is bit-exact
 * with a naive reference for any zero points.
 *
 * Floating point: the fast and portable paths sum in different orders, so
 * they agree to fp32 rounding, not bit for bit.  vdpbf16ps also treats
 * denormal inputs as zero and flushes denormal results (bf16 products are
 * otherwise exact in fp32).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "npu_kern.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define GEMM_HAVE_X86 1
/*
 * GCC 12 at -O2 (QEMU's build) reports -Wmaybe-uninitialized inside
 * avx512fintrin.h: the unmasked 512-bit shuffles pass a deliberately
 * undefined vector as their merge operand.  Nothing here is uninitialised.
 */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#endif

/*
 * Test hook (declared in npu_kern.h): when on, every GEMM (and so
 * every convolution) takes the portable path, so the unit tests can check
 * both implementations on a machine that has AVX-512.
 */

static atomic_bool force_portable;

void npu_kern_gemm_force_portable(bool on)
{
	atomic_store(&force_portable, on);
}

/* ------------------------------------------------------------------------
 * Portable implementations.
 *
 * Loop order i-k-j: the innermost loop walks a row of B and a row of C with
 * unit stride, which compilers vectorise at any baseline ISA.
 * ------------------------------------------------------------------------ */

static void gemm_i8_portable(int M, int N, int K, const void *A, long lda,
			     bool a_signed, int32_t a_zp, const void *B,
			     long ldb, bool b_signed, int32_t b_zp, int32_t *C,
			     long ldc, bool accumulate)
{
	/* Unsigned arithmetic: wraps like an int32 accumulator, without UB. */
	const uint32_t za = (uint32_t)a_zp, zb = (uint32_t)b_zp;

	for (int i = 0; i < M; i++) {
		uint32_t *c = (uint32_t *)(C + (long)i * ldc);

		if (!accumulate)
			memset(c, 0, (size_t)N * sizeof(*c));
		for (int k = 0; k < K; k++) {
			long ai = (long)i * lda + k;
			uint32_t av = a_signed ? (uint32_t)((const int8_t *)A)[ai]
					       : (uint32_t)((const uint8_t *)A)[ai];

			av -= za;
			if (b_signed) {
				const int8_t *b = (const int8_t *)B + (long)k * ldb;

				for (int j = 0; j < N; j++)
					c[j] += av * ((uint32_t)b[j] - zb);
			} else {
				const uint8_t *b = (const uint8_t *)B + (long)k * ldb;

				for (int j = 0; j < N; j++)
					c[j] += av * ((uint32_t)b[j] - zb);
			}
		}
	}
}

static void gemm_bf16_portable(int M, int N, int K, const uint16_t *A,
			       long lda, const uint16_t *B, long ldb, float *C,
			       long ldc, bool accumulate)
{
	for (int i = 0; i < M; i++) {
		float *c = C + (long)i * ldc;

		if (!accumulate)
			for (int j = 0; j < N; j++)
				c[j] = 0.0f;
		for (int k = 0; k < K; k++) {
			const float a = npu_bf16_to_f32(A[(long)i * lda + k]);
			const uint16_t *b = B + (long)k * ldb;

			for (int j = 0; j < N; j++)
				c[j] += a * npu_bf16_to_f32(b[j]);
		}
	}
}

static void gemm_f32_portable(int M, int N, int K, const float *A, long lda,
			      const float *B, long ldb, float *C, long ldc,
			      bool accumulate)
{
	for (int i = 0; i < M; i++) {
		float *c = C + (long)i * ldc;

		if (!accumulate)
			for (int j = 0; j < N; j++)
				c[j] = 0.0f;
		for (int k = 0; k < K; k++) {
			const float a = A[(long)i * lda + k];
			const float *b = B + (long)k * ldb;

			for (int j = 0; j < N; j++)
				c[j] += a * b[j];
		}
	}
}

/* K == 0: the sum is empty, so C becomes 0 (or stays as it is). */
static void clear_c(int M, int N, void *C, long ldc, size_t esz,
		    bool accumulate)
{
	if (accumulate)
		return;
	for (int i = 0; i < M; i++)
		memset((char *)C + (size_t)i * (size_t)ldc * esz, 0,
		       (size_t)N * esz);
}

/*
 * What the portable paths do after the sum, and what the fast ones do as
 * they write the sum's last part (npu_kern.h).
 */
void npu_kern_add_bias(int M, int N, float *C, long ldc, const float *bias)
{
	if (!bias)
		return;
	for (int i = 0; i < M; i++) {
		float *c = C + (long)i * ldc;

		for (int j = 0; j < N; j++)
			c[j] = c[j] + bias[j];
	}
}

#ifdef GEMM_HAVE_X86
/* ------------------------------------------------------------------------
 * AVX-512 implementation.
 * ------------------------------------------------------------------------ */

#define TGT_BASE   __attribute__((target("avx512f,avx512bw,avx512vl")))
#define TGT_VNNI   __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#define TGT_BF16   __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
#define ALWAYS_INLINE __attribute__((always_inline))

enum {
	ISA_AVX512 = 1,		/* avx512f + bw + vl: fp32 path */
	ISA_VNNI = 2,		/* + avx512_vnni: int8 path */
	ISA_BF16 = 4,		/* + avx512_bf16: bf16 path */
};

static int cpu_isa(void)
{
	static atomic_int cached = -1;
	int v = atomic_load_explicit(&cached, memory_order_relaxed);

	if (v < 0) {
		__builtin_cpu_init();
		v = 0;
		if (__builtin_cpu_supports("avx512f") &&
		    __builtin_cpu_supports("avx512bw") &&
		    __builtin_cpu_supports("avx512vl")) {
			v |= ISA_AVX512;
			if (__builtin_cpu_supports("avx512vnni"))
				v |= ISA_VNNI;
			if (__builtin_cpu_supports("avx512bf16"))
				v |= ISA_BF16;
		}
		atomic_store_explicit(&cached, v, memory_order_relaxed);
	}
	return v;
}

/*
 * Blocking (tuned on Zen 5, 48 KiB L1D / 1 MiB L2 per core; each can be
 * overridden with -D when tuning):
 *  - MR x NR = 12 x 32: 24 zmm accumulators + 2 B vectors + 1 broadcast;
 *  - a KC block is KGB = 256 groups deep (1024 int8, 512 bf16 or 256 fp32
 *    elements), so one B micro-panel is 32 KiB and stays in L1 while the
 *    micro-kernel walks the A panels of an MC block; a K of up to 1024
 *    int8 needs a single pass over C;
 *  - an MC block of A (MC x KC, 384 KiB) stays in L2;
 *  - NC bounds the packed B block (KGB * 4 * NC bytes = 2 MiB, in L3).
 */
#define MR	12
#define NR	32
#ifndef KGB
#define KGB	256
#endif
#ifndef MC
#define MC	384
#endif
#ifndef NC
#define NC	2048
#endif

#define A_GROUP_BYTES	(MR * 4)
#define B_GROUP_BYTES	(NR * 4)

enum gemm_kind { KIND_I8, KIND_BF16, KIND_F32 };

struct gemm_job {
	enum gemm_kind kind;
	int M, N, K;
	size_t esz;		/* bytes of one A/B element */
	const uint8_t *A;
	long lda;		/* elements */
	const uint8_t *B;
	long ldb;		/* elements */
	void *C;
	long ldc;		/* elements */
	bool accumulate;
	const float *bias;	/* float kinds: [N] added after the sum, or NULL */
	/* int8 only */
	bool a_flip, b_flip;	/* XOR 0x80 while packing */
	uint32_t alpha, beta;	/* see the top of the file */
};

static inline uint32_t ld32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline __mmask16 TGT_BASE mask16(long n)
{
	return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
}

/* rows x 16 dwords of A; a lane of the result is 4 rows of one group */
struct a_quad {
	__m512i o[4];
};

/*
 * Load 64 bytes (byte mask @m) of 4 rows @ld bytes apart into v; rows >=
 * @rows read as zero.  With @flip, bytes are XORed with 0x80 (uint8 <->
 * int8 offset).  Shared by the A and B packers.
 */
static inline void TGT_BASE load_rows4(__m512i v[4], const uint8_t *p,
				       long ld, long rows, __mmask64 m,
				       bool flip)
{
	const __m512i x80 = _mm512_set1_epi8((char)0x80);

	for (int r = 0; r < 4; r++) {
		if (r >= rows) {
			v[r] = _mm512_setzero_si512();
			continue;
		}
		/* masked only at the tail: full loads are cheaper */
		v[r] = m == ~(__mmask64)0 ? _mm512_loadu_si512(p + r * ld)
					  : _mm512_maskz_loadu_epi8(m, p + r * ld);
		if (flip)
			v[r] = _mm512_maskz_mov_epi8(m, _mm512_xor_si512(v[r], x80));
	}
}

/*
 * Load 64 bytes (16 groups) of 4 rows, rows >= @rows reading as zero, and
 * transpose each 128-bit lane as a 4x4 dword matrix: lane L of o[j] then
 * holds dword 4L+j (one group) of the 4 rows, in row order.
 */
static inline struct a_quad TGT_BASE load_a_quad(const uint8_t *A, long lda,
						   int rows, __mmask64 m,
						   bool flip)
{
	__m512i v[4], t0, t1, t2, t3;
	struct a_quad q;

	load_rows4(v, A, lda, rows, m, flip);
	t0 = _mm512_unpacklo_epi32(v[0], v[1]);
	t1 = _mm512_unpacklo_epi32(v[2], v[3]);
	t2 = _mm512_unpackhi_epi32(v[0], v[1]);
	t3 = _mm512_unpackhi_epi32(v[2], v[3]);
	q.o[0] = _mm512_unpacklo_epi64(t0, t1);
	q.o[1] = _mm512_unpackhi_epi64(t0, t1);
	q.o[2] = _mm512_unpacklo_epi64(t2, t3);
	q.o[3] = _mm512_unpackhi_epi64(t2, t3);
	return q;
}

/*
 * Pack up to MR rows of a K slice of @kbytes bytes into the group layout:
 * dst[g][r] = dword g of row r; rows from @rows to the next multiple of 4
 * are zeros, and later ones are not written (the micro-kernel for @rows
 * reads whole 4-row blocks only).  Rows are read 64 bytes (16 groups) at
 * a time, 4 rows at a time, and transposed by load_a_quad().  With @flip,
 * bytes are XORed with 0x80 (int8 -> uint8).
 * With @rowsum, the byte sums of each row (after the flip) are stored there.
 */
static void TGT_BASE pack_a(const uint8_t *A, long lda_bytes, int rows,
			    long kbytes, long kg, bool flip, int32_t *rowsum,
			    uint8_t *dst)
{
	const __m512i ones8 = _mm512_set1_epi8(1), ones16 = _mm512_set1_epi16(1);
	__m512i sum[MR / 4];

	for (int rb = 0; rb < MR / 4; rb++)
		sum[rb] = _mm512_setzero_si512();
	for (long kb = 0; kb < kbytes; kb += 64) {
		const long left = kbytes - kb;
		const __mmask64 m = left >= 64 ? ~(__mmask64)0
					       : (((__mmask64)1 << left) - 1);
		const long g0 = kb / 4;
		const long ng = kg - g0 < 16 ? kg - g0 : 16;

		/* 4-row blocks of padding only: no micro-kernel reads them */
		for (int rb = 0; rb * 4 < rows; rb++) {
			const uint8_t *src = A + rb * 4 * lda_bytes + kb;
			const struct a_quad q = load_a_quad(src, lda_bytes, rows - rb * 4,
							    m, flip);
			uint8_t *d = dst + (g0 * MR + rb * 4) * 4;

			/* group 4L+j is lane L of o[j] (immediate lane numbers) */
			__m128i o[16];

			for (int j = 0; j < 4; j++) {
				o[j] = _mm512_castsi512_si128(q.o[j]);
				o[4 + j] = _mm512_extracti32x4_epi32(q.o[j], 1);
				o[8 + j] = _mm512_extracti32x4_epi32(q.o[j], 2);
				o[12 + j] = _mm512_extracti32x4_epi32(q.o[j], 3);
			}
			for (long g = 0; g < ng; g++)
				_mm_storeu_si128((__m128i *)(d + g * A_GROUP_BYTES), o[g]);
			if (rowsum) {
				/*
				 * Padding is zero, so summing all 16 groups is
				 * fine: u8 pairs -> i16 (max 510) -> i32.
				 */
				for (int j = 0; j < 4; j++) {
					__m512i s = _mm512_maddubs_epi16(q.o[j], ones8);

					sum[rb] = _mm512_add_epi32(sum[rb],
								   _mm512_madd_epi16(s, ones16));
				}
			}
		}
	}
	if (rowsum) {
		int32_t tmp[MR];

		/* lane L of sum[rb] holds rows rb*4..rb*4+3 of groups 4L.. */
		for (int rb = 0; rb < MR / 4; rb++) {
			__m256i h = _mm256_add_epi32(_mm512_castsi512_si256(sum[rb]),
						     _mm512_extracti64x4_epi64(sum[rb], 1));
			__m128i x = _mm_add_epi32(_mm256_castsi256_si128(h),
						  _mm256_extracti128_si256(h, 1));

			_mm_storeu_si128((__m128i *)(tmp + rb * 4), x);
		}
		memcpy(rowsum, tmp, (size_t)rows * sizeof(*rowsum));
	}
}

/*
 * 4x4 transpose of 128-bit lanes: lane j of result L = lane L of q[j].
 */
static inline void TGT_BASE lane_transpose(__m512i q[4])
{
	const __m512i s0 = _mm512_shuffle_i64x2(q[0], q[1], 0x44);
	const __m512i s1 = _mm512_shuffle_i64x2(q[0], q[1], 0xee);
	const __m512i s2 = _mm512_shuffle_i64x2(q[2], q[3], 0x44);
	const __m512i s3 = _mm512_shuffle_i64x2(q[2], q[3], 0xee);

	q[0] = _mm512_shuffle_i64x2(s0, s2, 0x88);
	q[1] = _mm512_shuffle_i64x2(s0, s2, 0xdd);
	q[2] = _mm512_shuffle_i64x2(s1, s3, 0x88);
	q[3] = _mm512_shuffle_i64x2(s1, s3, 0xdd);
}

/*
 * int8 B: up to 64 columns (two NR panels, the second at @dst + @pstride)
 * of a K slice of @kc rows.  dst[g][n] holds B[4g..4g+3][n].  Each group
 * reads 64 bytes of 4 rows, interleaves bytes then words (which works
 * within 128-bit lanes: lane L of q[j] gets columns 16L+4j..16L+4j+3) and
 * transposes the lanes so that q[L] holds columns 16L..16L+15 in order.
 * With @flip, bytes are XORed with 0x80 (uint8 -> int8).  The signed column
 * sums are added to @colsum[0..min(cols rounded up to NR, 64)).
 */
static void TGT_VNNI pack_b_i8(const int8_t *B, long ldb, long kc, int cols,
			       bool flip, int32_t *colsum, uint8_t *dst,
			       long pstride)
{
	const __m512i ones = _mm512_set1_epi8(1);
	const long kg = (kc + 3) / 4;
	const __mmask64 m = cols >= 64 ? ~(__mmask64)0
				       : (((__mmask64)1 << cols) - 1);
	const int nout = cols > NR ? 4 : 2;	/* 16-column vectors */
	__m512i cs[4];

	for (int i = 0; i < 4; i++)
		cs[i] = _mm512_setzero_si512();
	for (long g = 0; g < kg; g++) {
		__m512i v[4], a, b, c, d, q[4];

		load_rows4(v, (const uint8_t *)B + 4 * g * ldb, ldb, kc - 4 * g,
			   m, flip);
		a = _mm512_unpacklo_epi8(v[0], v[1]);
		b = _mm512_unpackhi_epi8(v[0], v[1]);
		c = _mm512_unpacklo_epi8(v[2], v[3]);
		d = _mm512_unpackhi_epi8(v[2], v[3]);
		q[0] = _mm512_unpacklo_epi16(a, c);
		q[1] = _mm512_unpackhi_epi16(a, c);
		q[2] = _mm512_unpacklo_epi16(b, d);
		q[3] = _mm512_unpackhi_epi16(b, d);
		lane_transpose(q);
		for (int i = 0; i < nout; i++) {
			uint8_t *o = dst + (i >> 1) * pstride + g * B_GROUP_BYTES + (i & 1) * 64;

			_mm512_storeu_si512(o, q[i]);
			/* ones (u8) . q (s8): the 4-element sum of each column */
			cs[i] = _mm512_dpbusd_epi32(cs[i], ones, q[i]);
		}
	}
	for (int i = 0; i < nout; i++) {
		int32_t *p = colsum + 16 * i;

		_mm512_storeu_si512(p, _mm512_add_epi32(_mm512_loadu_si512(p), cs[i]));
	}
}

/*
 * bf16 B: up to NR columns.  dst[g][n] holds B[2g][n], B[2g+1][n]: word
 * interleaves of two rows (lane L of lo/hi: columns 8L..8L+3 / 8L+4..8L+7)
 * put back in column order with one cross-lane permute each.
 */
static void TGT_BASE pack_b_bf16(const uint16_t *B, long ldb, long kc,
				 int cols, uint8_t *dst)
{
	const long kg = (kc + 1) / 2;
	const __mmask32 m = cols >= 32 ? ~(__mmask32)0 : ((__mmask32)1 << cols) - 1;
	const __m512i idx0 = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
	const __m512i idx1 = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);

	for (long g = 0; g < kg; g++) {
		__m512i r0, r1 = _mm512_setzero_si512(), lo, hi;
		uint8_t *o = dst + g * B_GROUP_BYTES;

		r0 = _mm512_maskz_loadu_epi16(m, B + 2 * g * ldb);
		if (2 * g + 1 < kc)
			r1 = _mm512_maskz_loadu_epi16(m, B + (2 * g + 1) * ldb);
		lo = _mm512_unpacklo_epi16(r0, r1);
		hi = _mm512_unpackhi_epi16(r0, r1);
		_mm512_storeu_si512(o, _mm512_permutex2var_epi64(lo, idx0, hi));
		/* columns 16..31: only a two-vector micro-kernel reads them */
		if (cols > 16)
			_mm512_storeu_si512(o + 64, _mm512_permutex2var_epi64(lo, idx1, hi));
	}
}

/* fp32 B panel: dst[k] = B[k][0..NR), zero padded. */
static void TGT_BASE pack_b_f32(const float *B, long ldb, long kc, int cols,
				uint8_t *dst)
{
	const __mmask16 m0 = cols > 0 ? mask16(cols) : 0;
	const __mmask16 m1 = cols > 16 ? mask16(cols - 16) : 0;

	for (long k = 0; k < kc; k++) {
		float *o = (float *)(dst + k * B_GROUP_BYTES);

		_mm512_storeu_ps(o, _mm512_maskz_loadu_ps(m0, B + k * ldb));
		if (cols > 16)
			_mm512_storeu_ps(o + 16, _mm512_maskz_loadu_ps(m1, B + k * ldb + 16));
	}
}

/*
 * Micro-kernels: C[0..mr)[0..nr) (+)= Ap (kg groups x MR) * Bp (kg x NR).
 * The 24 accumulators are named variables (not an array) so that even the
 * -O1 sanitizer build keeps them in registers.
 */
#define ACC_DECL(T, z)							\
	T c0a = z, c0b = z, c1a = z, c1b = z, c2a = z, c2b = z,		\
	  c3a = z, c3b = z, c4a = z, c4b = z, c5a = z, c5b = z,		\
	  c6a = z, c6b = z, c7a = z, c7b = z, c8a = z, c8b = z,		\
	  c9a = z, c9b = z, c10a = z, c10b = z, c11a = z, c11b = z

#define ROWS_APPLY(X)							\
	X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

/*
 * The C tile is only touched after the K loop; asking for its lines now
 * hides the miss (for a write-only tile too: the lines must be owned).
 */
static inline void prefetch_c(const void *C, long ldc, int mr)
{
	for (int i = 0; i < mr; i++) {
		const char *p = (const char *)C + (size_t)i * (size_t)ldc * 4;

		__builtin_prefetch(p, 1, 3);
		__builtin_prefetch(p + 64, 1, 3);
	}
}

static inline void TGT_BASE store_i32(int32_t *c, __m512i v0, __m512i v1,
				      __mmask16 m0, __mmask16 m1, bool load_c,
				      const int32_t *rowc, __m512i cc0,
				      __m512i cc1)
{
	if (rowc) {
		__m512i r = _mm512_set1_epi32(*rowc);

		v0 = _mm512_add_epi32(v0, _mm512_add_epi32(cc0, r));
		v1 = _mm512_add_epi32(v1, _mm512_add_epi32(cc1, r));
	}
	if (load_c) {
		v0 = _mm512_add_epi32(v0, _mm512_maskz_loadu_epi32(m0, c));
		v1 = _mm512_add_epi32(v1, _mm512_maskz_loadu_epi32(m1, c + 16));
	}
	_mm512_mask_storeu_epi32(c, m0, v0);
	_mm512_mask_storeu_epi32(c + 16, m1, v1);
}

static inline void ALWAYS_INLINE TGT_VNNI
kern_i8_body(long kg, const uint8_t *Ap, const uint8_t *Bp, void *Cv,
	     long ldc, int mr, int nr, bool load_c, const int32_t *rowc,
	     const int32_t *colc, const float *bias, const int R, const int V)
{
	const __m512i z = _mm512_setzero_si512();
	int32_t *C = Cv;
	ACC_DECL(__m512i, z);

	(void)bias;	/* int32 sums: the output stage adds their bias */
	prefetch_c(Cv, ldc, mr);
	for (long g = 0; g < kg; g++) {
		const __m512i b0 = _mm512_loadu_si512(Bp);
		const __m512i b1 = V > 1 ? _mm512_loadu_si512(Bp + 64) : z;
		__m512i a;

#define STEP_I8(i)							\
		if ((i) < R) {						\
			a = _mm512_set1_epi32((int)ld32(Ap + 4 * (i)));	\
			c##i##a = _mm512_dpbusd_epi32(c##i##a, a, b0);	\
			if (V > 1)					\
				c##i##b = _mm512_dpbusd_epi32(c##i##b, a, b1); \
		}
		ROWS_APPLY(STEP_I8)
#undef STEP_I8
		Ap += A_GROUP_BYTES;
		Bp += B_GROUP_BYTES;
	}

	{
		const __mmask16 m0 = mask16(nr);
		const __mmask16 m1 = nr > 16 ? mask16(nr - 16) : 0;
		const __m512i cc0 = colc ? _mm512_loadu_si512(colc) : z;
		const __m512i cc1 = colc ? _mm512_loadu_si512(colc + 16) : z;

#define OUT_I8(i)							\
		if ((i) < R && (i) < mr)				\
			store_i32(C + (i) * ldc, c##i##a, c##i##b, m0, m1, load_c, \
				  rowc ? rowc + (i) : NULL, cc0, cc1);
		ROWS_APPLY(OUT_I8)
#undef OUT_I8
	}
}

/*
 * a + b with a as the first source: when both are NaN the result is a's
 * (quieted).  The compiler may swap the operands of _mm512_add_ps, and
 * did so differently from one build of a kernel to the next.
 */
static inline __m512 TGT_BASE add_first(__m512 a, __m512 b)
{
	__m512 r;

	__asm__("vaddps %2, %1, %0" : "=v"(r) : "v"(a), "v"(b));
	return r;
}

/*
 * C first, then the sum (as the portable paths' c += a * b), then the
 * bias (when @bias; the output stage's order: the value first): every
 * path gives the same bits, NaN payloads included.
 */
static inline void TGT_BASE store_f32(float *c, __m512 v0, __m512 v1,
				      __mmask16 m0, __mmask16 m1, bool load_c,
				      const float *bias)
{
	if (load_c) {
		v0 = add_first(_mm512_maskz_loadu_ps(m0, c), v0);
		v1 = add_first(_mm512_maskz_loadu_ps(m1, c + 16), v1);
	}
	if (bias) {
		v0 = add_first(v0, _mm512_maskz_loadu_ps(m0, bias));
		v1 = add_first(v1, _mm512_maskz_loadu_ps(m1, bias + 16));
	}
	_mm512_mask_storeu_ps(c, m0, v0);
	_mm512_mask_storeu_ps(c + 16, m1, v1);
}

#define OUT_F32(i)							\
	if ((i) < R && (i) < mr)					\
		store_f32(C + (i) * ldc, c##i##a, c##i##b, m0, m1, load_c, bias);

static inline void ALWAYS_INLINE TGT_BF16
kern_bf16_body(long kg, const uint8_t *Ap, const uint8_t *Bp, void *Cv,
	       long ldc, int mr, int nr, bool load_c, const int32_t *rowc,
	       const int32_t *colc, const float *bias, const int R, const int V)
{
	const __m512 z = _mm512_setzero_ps();
	float *C = Cv;
	ACC_DECL(__m512, z);

	(void)rowc;
	(void)colc;
	prefetch_c(Cv, ldc, mr);
	for (long g = 0; g < kg; g++) {
		const __m512bh b0 = (__m512bh)_mm512_loadu_si512(Bp);
		const __m512bh b1 = V > 1 ? (__m512bh)_mm512_loadu_si512(Bp + 64) :
					    (__m512bh)_mm512_setzero_si512();
		__m512bh a;

#define STEP_BF16(i)							\
		if ((i) < R) {						\
			a = (__m512bh)_mm512_set1_epi32((int)ld32(Ap + 4 * (i))); \
			c##i##a = _mm512_dpbf16_ps(c##i##a, a, b0);	\
			if (V > 1)					\
				c##i##b = _mm512_dpbf16_ps(c##i##b, a, b1); \
		}
		ROWS_APPLY(STEP_BF16)
#undef STEP_BF16
		Ap += A_GROUP_BYTES;
		Bp += B_GROUP_BYTES;
	}

	{
		const __mmask16 m0 = mask16(nr);
		const __mmask16 m1 = nr > 16 ? mask16(nr - 16) : 0;

		ROWS_APPLY(OUT_F32)
	}
}

/*
 * c + a * b as vfmadd231ps c, a, b: when more than one is NaN the result
 * is the first of c, a, b (quieted).  GCC picks the 132/213/231 form, and
 * folds a broadcast into the last source, by register pressure, which
 * differs from one micro-kernel variant to the next.
 */
static inline __m512 TGT_BASE fma_acc(__m512 c, __m512 a, __m512 b)
{
	__asm__("vfmadd231ps %2, %1, %0" : "+v"(c) : "v"(a), "v"(b));
	return c;
}

static inline void ALWAYS_INLINE TGT_BASE
kern_f32_body(long kg, const uint8_t *Ap, const uint8_t *Bp, void *Cv,
	      long ldc, int mr, int nr, bool load_c, const int32_t *rowc,
	      const int32_t *colc, const float *bias, const int R, const int V)
{
	const __m512 z = _mm512_setzero_ps();
	float *C = Cv;
	ACC_DECL(__m512, z);

	(void)rowc;
	(void)colc;
	prefetch_c(Cv, ldc, mr);
	for (long g = 0; g < kg; g++) {
		const __m512 b0 = _mm512_loadu_ps(Bp);
		const __m512 b1 = V > 1 ? _mm512_loadu_ps(Bp + 64) : z;
		__m512 a;
		float f;

#define STEP_F32(i)							\
		if ((i) < R) {						\
			memcpy(&f, Ap + 4 * (i), sizeof(f));		\
			a = _mm512_set1_ps(f);				\
			c##i##a = fma_acc(c##i##a, a, b0);		\
			if (V > 1)					\
				c##i##b = fma_acc(c##i##b, a, b1);	\
		}
		ROWS_APPLY(STEP_F32)
#undef STEP_F32
		Ap += A_GROUP_BYTES;
		Bp += B_GROUP_BYTES;
	}

	{
		const __mmask16 m0 = mask16(nr);
		const __mmask16 m1 = nr > 16 ? mask16(nr - 16) : 0;

		ROWS_APPLY(OUT_F32)
	}
}
#undef OUT_F32

typedef void kern_fn(long kg, const uint8_t *Ap, const uint8_t *Bp, void *C,
		     long ldc, int mr, int nr, bool load_c,
		     const int32_t *rowc, const int32_t *colc,
		     const float *bias);

/*
 * One micro-kernel per kind and tile shape: R = 4, 8 or 12 rows, V = 1 or
 * 2 vectors of 16 columns.  A tile of mr x nr takes the smallest that
 * covers it (tiles of 3 x 16 are most of a small transformer's products
 * once the compiler has spread them over 56 TPBs), so rows and columns
 * that would only be masked off are not computed.  Each column of C sees
 * the same vdpbusd/vdpbf16ps/FMA sequence in every variant: the results
 * do not depend on which one ran.
 */
#define KERN_VARIANT(kind, tgt, R, V)					\
static void tgt kind##_##R##x##V(long kg, const uint8_t *Ap,		\
				 const uint8_t *Bp, void *C, long ldc,	\
				 int mr, int nr, bool load_c,		\
				 const int32_t *rowc, const int32_t *colc, \
				 const float *bias)			\
{									\
	kind##_body(kg, Ap, Bp, C, ldc, mr, nr, load_c, rowc, colc, bias, \
		    R, V);						\
}

#define KERN_VARIANTS(kind, tgt)					\
	KERN_VARIANT(kind, tgt, 4, 1) KERN_VARIANT(kind, tgt, 4, 2)	\
	KERN_VARIANT(kind, tgt, 8, 1) KERN_VARIANT(kind, tgt, 8, 2)	\
	KERN_VARIANT(kind, tgt, 12, 1) KERN_VARIANT(kind, tgt, 12, 2)	\
	static kern_fn *const kind##_shapes[3][2] = {			\
		{ kind##_4x1, kind##_4x2 },				\
		{ kind##_8x1, kind##_8x2 },				\
		{ kind##_12x1, kind##_12x2 },				\
	};

KERN_VARIANTS(kern_i8, TGT_VNNI)
KERN_VARIANTS(kern_bf16, TGT_BF16)
KERN_VARIANTS(kern_f32, TGT_BASE)

/* The variant for an @rows x @cols tile: rows in 4-row blocks (as packed). */
static kern_fn *kern_for(kern_fn *const shapes[3][2], int rows, int cols)
{
	return shapes[(rows - 1) / 4][cols > 16];
}

static inline long lmin(long a, long b)
{
	return a < b ? a : b;
}

/*
 * The packing buffers and sums of gemm_blocked, kept per thread from one
 * call to the next: an emulated model calls it ~10^4 times per inference
 * with the same few sizes, and a fresh aligned_alloc each time (with the
 * page faults and heap consolidation of freeing it) cost more than the
 * arithmetic of small GEMMs.  Freed when the thread exits.
 */
enum { SCR_BP, SCR_AP, SCR_COLSUM, SCR_COLC, SCR_ROWSUM, SCR_ROWC, SCR_N };

struct gemm_scratch {
	void *p[SCR_N];
	size_t size[SCR_N];
};

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static bool scratch_key_ok;

static void scratch_free(void *v)
{
	struct gemm_scratch *s = v;

	for (unsigned i = 0; i < SCR_N; i++)
		free(s->p[i]);
	free(s);
}

static void scratch_key_init(void)
{
	scratch_key_ok = pthread_key_create(&scratch_key, scratch_free) == 0;
}

/* This thread's buffer @slot, at least @bytes, 64-byte aligned; NULL if
 * memory runs out. */
static void *scratch(unsigned slot, size_t bytes)
{
	struct gemm_scratch *s;
	size_t size = (bytes + 63) & ~(size_t)63;	/* aligned_alloc's rule */

	pthread_once(&scratch_once, scratch_key_init);
	if (!scratch_key_ok)
		return NULL;
	s = pthread_getspecific(scratch_key);
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s || pthread_setspecific(scratch_key, s)) {
			free(s);
			return NULL;
		}
	}
	if (s->size[slot] < size) {
		void *p = aligned_alloc(64, size ? size : 64);

		if (!p)
			return NULL;
		free(s->p[slot]);
		s->p[slot] = p;
		s->size[slot] = size;
	}
	return s->p[slot];
}

/*
 * The blocked driver: jc (NC columns) -> pc (KC deep: pack B) -> ic (MC
 * rows: pack A) -> jr (NR) -> ir (MR) micro-kernel.  Returns false (having
 * touched nothing) if the packing buffers cannot be allocated.
 */
static bool gemm_blocked(const struct gemm_job *j)
{
	const long kc_max = (long)(KGB * 4 / j->esz);	/* elements a KC block */
	const long kcb = lmin(j->K, kc_max);
	const long kg_max = (kcb * (long)j->esz + 3) / 4;
	const long ncb = (lmin(j->N, NC) + NR - 1) / NR * NR;
	const long mcb = (lmin(j->M, MC) + MR - 1) / MR * MR;
	const size_t ldc_b = (size_t)j->ldc * 4;	/* int32 or fp32 */
	const bool i8 = j->kind == KIND_I8;
	uint8_t *bp = scratch(SCR_BP, (size_t)ncb * (size_t)kg_max * 4);
	uint8_t *ap = scratch(SCR_AP, (size_t)mcb * (size_t)kg_max * 4);
	int32_t *colsum = NULL, *colc = NULL, *rowsum = NULL, *rowc = NULL;
	kern_fn *const (*shapes)[2] = i8 ? kern_i8_shapes :
				      j->kind == KIND_BF16 ? kern_bf16_shapes :
							     kern_f32_shapes;
	bool ok = bp && ap;

	if (ok && i8) {
		colsum = scratch(SCR_COLSUM, (size_t)ncb * sizeof(*colsum));
		colc = scratch(SCR_COLC, (size_t)ncb * sizeof(*colc));
		rowsum = scratch(SCR_ROWSUM, (size_t)j->M * sizeof(*rowsum));
		rowc = scratch(SCR_ROWC, (size_t)j->M * sizeof(*rowc));
		ok = colsum && colc && rowsum && rowc;
	}
	if (!ok)
		goto out;

	for (long jc = 0; jc < j->N; jc += NC) {
		const long nc = lmin(NC, j->N - jc);

		if (i8)
			memset(colsum, 0, (size_t)ncb * sizeof(*colsum));
		for (long pc = 0; pc < j->K; pc += kc_max) {
			const long kc = lmin(kc_max, j->K - pc);
			const long kg = (kc * (long)j->esz + 3) / 4;
			const bool first = pc == 0;
			const bool last = pc + kc >= j->K;
			const bool load_c = !first || j->accumulate;

			for (long jr = 0; jr < nc; jr += i8 ? 2 * NR : NR) {
				const int cols = (int)lmin(i8 ? 2 * NR : NR, nc - jr);
				uint8_t *dst = bp + jr / NR * kg_max * B_GROUP_BYTES;
				const long off = pc * j->ldb + jc + jr;

				if (i8)
					pack_b_i8((const int8_t *)j->B + off, j->ldb, kc,
						  cols, j->b_flip, colsum + jr, dst,
						  kg_max * B_GROUP_BYTES);
				else if (j->kind == KIND_BF16)
					pack_b_bf16((const uint16_t *)j->B + off, j->ldb,
						    kc, cols, dst);
				else
					pack_b_f32((const float *)j->B + off, j->ldb, kc,
						   cols, dst);
			}
			if (i8 && last)
				for (long n = 0; n < nc; n++)
					colc[n] = (int32_t)(0u - j->alpha * (uint32_t)colsum[n]);

			for (long ic = 0; ic < j->M; ic += MC) {
				const long mc = lmin(MC, j->M - ic);

				for (long ir = 0; ir < mc; ir += MR) {
					const int rows = (int)lmin(MR, mc - ir);
					int32_t rs[MR] = { 0 };
					const uint8_t *src = j->A +
						((ic + ir) * j->lda + pc) * (long)j->esz;

					/* the row sums only matter when beta != 0 */
					pack_a(src, j->lda * (long)j->esz, rows,
					       kc * (long)j->esz, kg, j->a_flip,
					       i8 && j->beta ? rs : NULL,
					       ap + ir / MR * kg_max * A_GROUP_BYTES);
					if (!i8)
						continue;
					for (int r = 0; r < rows; r++) {
						int32_t *s = &rowsum[ic + ir + r];

						*s = (int32_t)((first ? 0u : (uint32_t)*s) +
							       (uint32_t)rs[r]);
						if (last)
							rowc[ic + ir + r] = (int32_t)(
								(uint32_t)j->K * j->alpha * j->beta -
								j->beta * (uint32_t)*s);
					}
				}
				for (long jr = 0; jr < nc; jr += NR) {
					const int cols = (int)lmin(NR, nc - jr);
					const uint8_t *bpan = bp + jr / NR * kg_max * B_GROUP_BYTES;

					for (long ir = 0; ir < mc; ir += MR) {
						const int rows = (int)lmin(MR, mc - ir);
						char *c = (char *)j->C +
							(size_t)(ic + ir) * ldc_b +
							(size_t)(jc + jr) * 4;
						kern_fn *kern = kern_for(shapes, rows, cols);

						kern(kg, ap + ir / MR * kg_max * A_GROUP_BYTES,
						     bpan, c, j->ldc, rows, cols, load_c,
						     i8 && last ? rowc + ic + ir : NULL,
						     i8 && last ? colc + jr : NULL,
						     last && j->bias ? j->bias + jc + jr : NULL);
					}
				}
			}
		}
	}
out:
	return ok;
}

/*
 * bf16 with M = 1 (a decode step's matrix-vector products): B read where
 * it lies, two rows at a time, with no packing.  Each column sees exactly
 * gemm_blocked's vdpbf16ps sequence, so C is bit for bit the same: per KC
 * block of KGB groups an accumulator from zero, the groups in increasing
 * k (pair g = rows 2g and 2g+1 of the block; an odd block's last pair
 * completed by zeros on both sides, as the packers do), then the block's
 * sum added to C (store_f32: C first, the sum second) or stored.
 *
 * The two rows are interleaved as pack_b_bf16 interleaves them, minus
 * its permute: lane L of the word unpacks holds columns 8L..8L+3 (lo) and
 * 8L+4..8L+7 (hi) of the 32 a vector covers.  Every lane gets the same
 * broadcast A pair, so the accumulators stay in that order and are put
 * in column order once per block, with pack_b_bf16's permutes.
 */
#define GEMV_VECS	4	/* 32-column vectors a pass over B covers */

static void TGT_BF16 gemv_bf16(int N, int K, const uint16_t *A,
			       const uint16_t *B, long ldb, float *C,
			       bool accumulate, const float *bias)
{
	const long kc_max = KGB * 2;	/* bf16 elements of a KC block */
	const __m512i idx0 = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
	const __m512i idx1 = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);

	for (long j0 = 0; j0 < N; j0 += 32 * GEMV_VECS) {
		const int nv = (int)lmin(GEMV_VECS, (N - j0 + 31) / 32);
		__mmask32 m[GEMV_VECS];

		for (int v = 0; v < GEMV_VECS; v++) {
			const long cols = lmin(32, N - j0 - 32 * v);

			m[v] = cols <= 0 ? 0 : cols >= 32 ? ~(__mmask32)0 :
			       ((__mmask32)1 << cols) - 1;
		}
		for (long pc = 0; pc < K; pc += kc_max) {
			const long kc = lmin(kc_max, K - pc);
			const bool load_c = pc > 0 || accumulate;
			__m512 lo[GEMV_VECS], hi[GEMV_VECS];
			const uint16_t *b = B + pc * ldb + j0;
			long k;

			for (int v = 0; v < GEMV_VECS; v++)
				lo[v] = hi[v] = _mm512_setzero_ps();
			for (k = 0; k + 1 < kc; k += 2, b += 2 * ldb) {
				const __m512bh a = (__m512bh)_mm512_set1_epi32(
					(int)ld32(A + pc + k));

				for (int v = 0; v < nv; v++) {
					const __m512i r0 = _mm512_maskz_loadu_epi16(m[v], b + 32 * v);
					const __m512i r1 = _mm512_maskz_loadu_epi16(m[v], b + ldb + 32 * v);

					lo[v] = _mm512_dpbf16_ps(lo[v], a,
						(__m512bh)_mm512_unpacklo_epi16(r0, r1));
					hi[v] = _mm512_dpbf16_ps(hi[v], a,
						(__m512bh)_mm512_unpackhi_epi16(r0, r1));
				}
			}
			if (k < kc) {
				/* odd: the last row with a zero row, A with a zero */
				const __m512bh a = (__m512bh)_mm512_set1_epi32(
					(int)(uint32_t)A[pc + k]);
				const __m512i z = _mm512_setzero_si512();

				for (int v = 0; v < nv; v++) {
					const __m512i r0 = _mm512_maskz_loadu_epi16(m[v], b + 32 * v);

					lo[v] = _mm512_dpbf16_ps(lo[v], a,
						(__m512bh)_mm512_unpacklo_epi16(r0, z));
					hi[v] = _mm512_dpbf16_ps(hi[v], a,
						(__m512bh)_mm512_unpackhi_epi16(r0, z));
				}
			}
			for (int v = 0; v < nv; v++) {
				const __m512i l = _mm512_castps_si512(lo[v]);
				const __m512i h = _mm512_castps_si512(hi[v]);
				float *c = C + j0 + 32 * v;

				store_f32(c, _mm512_castsi512_ps(_mm512_permutex2var_epi64(l, idx0, h)),
					  _mm512_castsi512_ps(_mm512_permutex2var_epi64(l, idx1, h)),
					  (__mmask16)m[v], (__mmask16)(m[v] >> 16), load_c,
					  bias && pc + kc >= K ? bias + j0 + 32 * v : NULL);
			}
		}
	}
}
#endif /* GEMM_HAVE_X86 */

/* ------------------------------------------------------------------------
 * Entry points.
 * ------------------------------------------------------------------------ */

#ifdef GEMM_HAVE_X86
static bool use_fast(int want)
{
	if (atomic_load_explicit(&force_portable, memory_order_relaxed))
		return false;
	return (cpu_isa() & want) == want;
}
#endif

void npu_kern_gemm_i8(int M, int N, int K,
		      const void *A, long lda, bool a_signed, int32_t a_zp,
		      const void *B, long ldb, bool b_signed, int32_t b_zp,
		      int32_t *C, long ldc, bool accumulate)
{
	if (M <= 0 || N <= 0)
		return;
	if (K <= 0) {
		clear_c(M, N, C, ldc, sizeof(*C), accumulate);
		return;
	}
#ifdef GEMM_HAVE_X86
	if (use_fast(ISA_AVX512 | ISA_VNNI)) {
		const uint32_t sa = a_signed ? 128u : 0u;
		const uint32_t tb = b_signed ? 0u : 128u;
		struct gemm_job j = {
			.kind = KIND_I8, .M = M, .N = N, .K = K, .esz = 1,
			.A = A, .lda = lda, .B = B, .ldb = ldb,
			.C = C, .ldc = ldc, .accumulate = accumulate,
			.a_flip = a_signed, .b_flip = !b_signed,
			.alpha = sa + (uint32_t)a_zp,
			.beta = (uint32_t)b_zp - tb,
		};

		if (gemm_blocked(&j))
			return;
	}
#endif
	gemm_i8_portable(M, N, K, A, lda, a_signed, a_zp, B, ldb, b_signed,
			 b_zp, C, ldc, accumulate);
}

void npu_kern_gemm_bf16(int M, int N, int K,
			const uint16_t *A, long lda, const uint16_t *B, long ldb,
			float *C, long ldc, bool accumulate)
{
	npu_kern_gemm_bf16_bias(M, N, K, A, lda, B, ldb, C, ldc, accumulate, NULL);
}

void npu_kern_gemm_bf16_bias(int M, int N, int K,
			     const uint16_t *A, long lda, const uint16_t *B,
			     long ldb, float *C, long ldc, bool accumulate,
			     const float *bias)
{
	if (M <= 0 || N <= 0)
		return;
	if (K <= 0) {
		clear_c(M, N, C, ldc, sizeof(*C), accumulate);
		npu_kern_add_bias(M, N, C, ldc, bias);
		return;
	}
#ifdef GEMM_HAVE_X86
	if (use_fast(ISA_AVX512 | ISA_BF16) && M == 1) {
		gemv_bf16(N, K, A, B, ldb, C, accumulate, bias);
		return;
	}
	if (use_fast(ISA_AVX512 | ISA_BF16)) {
		struct gemm_job j = {
			.kind = KIND_BF16, .M = M, .N = N, .K = K, .esz = 2,
			.A = (const uint8_t *)A, .lda = lda,
			.B = (const uint8_t *)B, .ldb = ldb,
			.C = C, .ldc = ldc, .accumulate = accumulate,
			.bias = bias,
		};

		if (gemm_blocked(&j))
			return;
	}
#endif
	gemm_bf16_portable(M, N, K, A, lda, B, ldb, C, ldc, accumulate);
	npu_kern_add_bias(M, N, C, ldc, bias);
}

void npu_kern_gemm_f32(int M, int N, int K,
		       const float *A, long lda, const float *B, long ldb,
		       float *C, long ldc, bool accumulate)
{
	npu_kern_gemm_f32_bias(M, N, K, A, lda, B, ldb, C, ldc, accumulate, NULL);
}

void npu_kern_gemm_f32_bias(int M, int N, int K,
			    const float *A, long lda, const float *B, long ldb,
			    float *C, long ldc, bool accumulate,
			    const float *bias)
{
	if (M <= 0 || N <= 0)
		return;
	if (K <= 0) {
		clear_c(M, N, C, ldc, sizeof(*C), accumulate);
		npu_kern_add_bias(M, N, C, ldc, bias);
		return;
	}
#ifdef GEMM_HAVE_X86
	if (use_fast(ISA_AVX512)) {
		struct gemm_job j = {
			.kind = KIND_F32, .M = M, .N = N, .K = K, .esz = 4,
			.A = (const uint8_t *)A, .lda = lda,
			.B = (const uint8_t *)B, .ldb = ldb,
			.C = C, .ldc = ldc, .accumulate = accumulate,
			.bias = bias,
		};

		if (gemm_blocked(&j))
			return;
	}
#endif
	gemm_f32_portable(M, N, K, A, lda, B, ldb, C, ldc, accumulate);
	npu_kern_add_bias(M, N, C, ldc, bias);
}
