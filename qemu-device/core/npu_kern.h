/* SPDX-License-Identifier: MIT */
/*
 * Whole-tensor compute kernels of the device core.
 *
 * These are the fast paths behind each instruction: they work on dense,
 * row-major buffers that the walker layer has already bounds-checked (or
 * points at directly when the walker pattern is dense).  They never fail
 * and never allocate on the hot path beyond per-call packing buffers.
 * Every function is thread-safe and reentrant.
 */
#ifndef NPU_KERN_H
#define NPU_KERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "npu/npu_hw_isa.h"

/* ---- Scalar types (npu_kern_dtype.c) ---- */

/* Bit pattern of a binary32, and back; inline for the kernels' hot loops. */
static inline uint32_t npu_f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static inline float npu_f32_from_bits(uint32_t bits)
{
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

/* bf16 is the upper half of a binary32: exact, NaN payloads kept. */
static inline float npu_bf16_to_f32(uint16_t v)
{
	return npu_f32_from_bits((uint32_t)v << 16);
}

uint16_t npu_f32_to_bf16(float f);	/* round to nearest even, NaN kept */
float npu_f16_to_f32(uint16_t v);
uint16_t npu_f32_to_f16(float f);	/* round to nearest even, inf on overflow */
size_t npu_hw_dtype_size(unsigned dtype);	/* 0 for NONE or unknown */
bool npu_dtype_is_int(unsigned dtype);	/* INT8, UINT8, INT32 */
/* Round with enum npu_hw_round, then saturate to [lo, hi]. */
int32_t npu_round_sat(float v, unsigned round_mode, int32_t lo, int32_t hi);

/* Convert n elements of dtype to f32 (plain numeric value, no zero point). */
void npu_kern_to_f32(float *dst, const void *src, unsigned dtype, size_t n);
/* Convert n f32 values to dtype; integers round (round_mode) and saturate. */
void npu_kern_from_f32(void *dst, unsigned dtype, const float *src, size_t n,
		       unsigned round_mode);

/* ---- GEMM (npu_kern_gemm*.c): row-major, strides in elements ---- */

/*
 * C[m][n] (+)= sum_k (A[m][k] - a_zp) * (B[k][n] - b_zp), int32.
 * a_signed/b_signed select int8 or uint8 for each input.
 */
void npu_kern_gemm_i8(int M, int N, int K,
		      const void *A, long lda, bool a_signed, int32_t a_zp,
		      const void *B, long ldb, bool b_signed, int32_t b_zp,
		      int32_t *C, long ldc, bool accumulate);
/* C[m][n] (+)= sum_k A[m][k] * B[k][n]; bf16 inputs, fp32 accumulation. */
void npu_kern_gemm_bf16(int M, int N, int K,
			const uint16_t *A, long lda, const uint16_t *B, long ldb,
			float *C, long ldc, bool accumulate);
/* Tests: force the portable (non-SIMD) GEMM paths on or off. */
void npu_kern_gemm_force_portable(bool on);
/* The same with fp32 inputs (used for fp16 operands after widening). */
void npu_kern_gemm_f32(int M, int N, int K,
		       const float *A, long lda, const float *B, long ldb,
		       float *C, long ldc, bool accumulate);
/* C[m][n] = C[m][n] + bias[n] for M rows of N (@bias NULL: nothing). */
void npu_kern_add_bias(int M, int N, float *C, long ldc, const float *bias);
/*
 * The same as the two above, then npu_kern_add_bias: each value bit for
 * bit what that separate pass would give; the fast paths add the bias as
 * they write the sum's last part, not in another pass.
 */
void npu_kern_gemm_bf16_bias(int M, int N, int K,
			     const uint16_t *A, long lda, const uint16_t *B,
			     long ldb, float *C, long ldc, bool accumulate,
			     const float *bias);
void npu_kern_gemm_f32_bias(int M, int N, int K,
			    const float *A, long lda, const float *B, long ldb,
			    float *C, long ldc, bool accumulate,
			    const float *bias);

/*
 * 2-D convolution, NHWC with N = 1: X [H][W][C], Wt [KH][KW][C/groups][OC],
 * Y [OH][OW][OC] where OH = (H + pt + pb - dh*(KH-1) - 1) / sh + 1 (same for
 * W).  Output channel oc belongs to group oc / (OC / groups).  Padding reads
 * as the input zero point (integer) or 0.0.  Y receives raw accumulators
 * (int32 for the i8 variant, fp32 otherwise), added to Y when accumulate.
 */
struct npu_kern_conv {
	int H, W, C, KH, KW, OC, OH, OW;
	int stride_h, stride_w, dil_h, dil_w;
	int pad_top, pad_left;
	int groups;
	/*
	 * Float kernels: [OC] added to every output pixel after its sum, as
	 * a separate pass would (NULL: none).  The int8 kernel ignores it.
	 */
	const float *bias;
};
void npu_kern_conv2d_i8(const struct npu_kern_conv *p,
			const void *X, bool x_signed, int32_t x_zp,
			const void *Wt, bool w_signed, int32_t w_zp,
			int32_t *Y, bool accumulate);
void npu_kern_conv2d_bf16(const struct npu_kern_conv *p, const uint16_t *X,
			  const uint16_t *Wt, float *Y, bool accumulate);
void npu_kern_conv2d_f32(const struct npu_kern_conv *p, const float *X,
			 const float *Wt, float *Y, bool accumulate);

/* ---- Vector math (npu_kern_vec.c), fp32 ---- */
/*
 * Tests: run the vector unit's exp-heavy loops (npu_kern_vec.c) built for
 * at most @isa (NPU_KERN_ISA_*; NPU_KERN_ISA_AUTO: the best the CPU has).
 * Returns false when this CPU cannot run @isa (the loops then take the
 * best it has below it).
 */
enum {
	NPU_KERN_ISA_AUTO = -1,
	NPU_KERN_ISA_BASE = 0,
	NPU_KERN_ISA_AVX2 = 1,
	NPU_KERN_ISA_AVX512 = 2,
};
bool npu_kern_vec_force_isa(int isa);

/* y[i] = fn(x[i]); fn is a unary enum npu_hw_fn, alpha/beta its parameters. */
void npu_kern_unary(float *y, const float *x, size_t n, unsigned fn,
		    float alpha, float beta);
/* y[i] = fn(a[i], b[i]); fn is a binary enum npu_hw_fn. */
void npu_kern_binary(float *y, const float *a, const float *b, size_t n,
		     unsigned fn);
/* y[i] = fn(a[i], b) */
void npu_kern_binary_scalar(float *y, const float *a, float b, size_t n,
			    unsigned fn);
/*
 * The int32 remainder of @a by @b: with the divisor's sign (MOD), or the
 * dividend's with @fmod (C's %); 0 for @b = 0 (and INT32_MIN by -1).
 */
int32_t npu_kern_mod_i32(int32_t a, int32_t b, bool fmod);
/* true if fn is a valid unary (or binary) function code */
bool npu_fn_is_unary(unsigned fn);
bool npu_fn_is_binary(unsigned fn);

/* x is [outer][inner]; y[o] = reduce over inner (enum npu_hw_reduce_fn). */
void npu_kern_reduce(float *y, const float *x, size_t outer, size_t inner,
		     unsigned fn);
/* row-wise softmax (or log-softmax) over inner; numerically stable. */
void npu_kern_softmax(float *y, const float *x, size_t outer, size_t inner,
		      bool log);
/*
 * y[o] = index of the largest (smallest) element of row o, first on ties
 * (last with @last); a NaN beats every number and the first NaN wins.
 */
void npu_kern_argreduce(float *y, const float *x, size_t outer, size_t inner,
			bool want_max, bool last);
/* The same over int32 rows, compared as integers. */
void npu_kern_argreduce_i32(float *y, const int32_t *x, size_t outer, size_t inner,
			    bool want_max, bool last);
/*
 * x is [outer][n][inner]: y is the running sum along n for every (outer,
 * inner) lane; @exclusive leaves out the element itself, @reverse sums
 * from the end.  y must not overlap x.  The _i32 variant adds int32
 * exactly (wrapping modulo 2^32).
 */
void npu_kern_scan(float *y, const float *x, size_t outer, size_t n,
		   size_t inner, bool exclusive, bool reverse);
void npu_kern_scan_i32(int32_t *y, const int32_t *x, size_t outer, size_t n,
		       size_t inner, bool exclusive, bool reverse);
/* y = (x - mean) / sqrt(var + eps) * gamma + beta, rows of length inner;
 * gamma/beta are [outer][inner] like x. */
void npu_kern_layernorm(float *y, const float *x, const float *gamma,
			const float *beta, size_t outer, size_t inner, float eps);
/* y = x / sqrt(mean(x^2) + eps) * gamma (NULL: 1), rows of length inner. */
void npu_kern_rmsnorm(float *y, const float *x, const float *gamma, size_t outer,
		      size_t inner, float eps);

struct npu_kern_pool {
	int H, W, C, OH, OW, KH, KW;
	int stride_h, stride_w, dil_h, dil_w;
	int pad_top, pad_left;
	unsigned fn;		/* enum npu_hw_pool_fn */
	bool count_pad;		/* AVG: divide by KH*KW even at the borders */
};
/* x [H][W][C] -> y [OH][OW][C]; padded taps are skipped (MAX, AVG w/o count_pad). */
void npu_kern_pool2d(float *y, const float *x, const struct npu_kern_pool *p);

/* ---- Data movement (npu_kern_move.c), any element size ---- */
/* y [cols][rows] = transpose of x [rows][cols] */
void npu_kern_transpose(void *y, const void *x, size_t esz, size_t rows,
			size_t cols);
/*
 * y[c * y_stride + r * esz] = x[r * x_stride + c * esz] for r < rows,
 * c < cols (strides in bytes): a transpose between padded row layouts.
 * y and x must not overlap, and the elements written must be distinct.
 */
void npu_kern_transpose_strided(void *y, size_t y_stride, const void *x,
				size_t x_stride, size_t esz, size_t rows,
				size_t cols);
/* y [H+pt+pb][W+pl+pr][C] from x [H][W][C]; value is one element (CONSTANT). */
void npu_kern_pad_hwc(void *y, const void *x, size_t esz, size_t H, size_t W,
		      size_t C, size_t pt, size_t pl, size_t pb, size_t pr,
		      unsigned mode, const void *value);
/* fill n elements of esz bytes with value */
void npu_kern_fill(void *y, size_t esz, size_t n, const void *value);

/* ---- CPU-assisted (npu_kern_csu.c) ---- */
/* x [rows][n] -> vals/idx [rows][k], sorted best first; ties: lower index first. */
void npu_kern_topk(float *vals, int32_t *idx, const float *x, size_t rows,
		   size_t n, size_t k, bool largest);
/*
 * Greedy NMS: boxes [n][4] (box_format 0: y1,x1,y2,x2; 1: cx,cy,w,h),
 * scores [n].  Keeps boxes with score > score_thr in descending score
 * order, dropping any whose IoU with a kept box exceeds iou_thr.  Writes
 * up to max_out indices to sel and returns how many.
 */
size_t npu_kern_nms(int32_t *sel, const float *boxes, const float *scores,
		    size_t n, size_t max_out, float iou_thr, float score_thr,
		    unsigned box_format);

#endif /* NPU_KERN_H */
