// SPDX-License-Identifier: MIT
/*
 * 2-D convolution kernels (NHWC, batch 1; see npu_kern.h for the layout).
 *
 * Three strategies:
 *
 *  - 1x1, stride 1, no padding, OW == W, one group: the input already is
 *    the [pixels][C] GEMM operand, so the GEMM runs on it directly.
 *  - otherwise, when a group has more than one input channel: im2col into
 *    a [pixels][KH*KW*Cg] matrix (padding written as the zero point), then
 *    one GEMM per group.  The weights [KH][KW][Cg][OC] already are the
 *    [KH*KW*Cg][OC] B operand; a group's slice is a column range with
 *    ldb = OC, and its output a column range of Y with ldc = OC.  The pixels
 *    are processed in chunks so the im2col buffer stays around 1 MiB.
 *  - one input channel per group (depthwise, with any channel multiplier,
 *    or a single-channel input): a direct loop whose innermost loop runs
 *    over the output channels, where a GEMM would have N = 1.
 *
 * The int8 variant falls back to the direct loop (generalised to any group
 * size) when the input zero point is not representable in the input type,
 * because im2col could not write a padding byte equal to it.  A padded tap
 * contributes (zp - zp) * w = 0, so the direct loops simply skip it.
 */
#include <stdlib.h>
#include <string.h>

#include "npu_kern.h"

/* Bytes of im2col matrix processed at a time. */
#define IM2COL_BUDGET	(1u << 20)

struct conv_geom {
	int Cg, OCg;		/* channels per group (input, output) */
	long Kc;		/* KH*KW*Cg: GEMM depth */
	long P;			/* OH*OW: GEMM rows */
};

static bool conv_geom(const struct npu_kern_conv *p, struct conv_geom *g)
{
	if (p->groups <= 0 || p->C % p->groups || p->OC % p->groups)
		return false;
	g->Cg = p->C / p->groups;
	g->OCg = p->OC / p->groups;
	g->Kc = (long)p->KH * p->KW * g->Cg;
	g->P = (long)p->OH * p->OW;
	return p->OH > 0 && p->OW > 0 && p->OC > 0;
}

/*
 * Fill rows [q0, q0 + nq) of the im2col matrix of group @grp: each row is
 * KH*KW runs of Cg elements; padded taps get @padrow (Cg elements).  The
 * output pixel's row and column are split once per row and the input row
 * once per kh (a division per tap showed in profiles).
 */
static void im2col(uint8_t *dst, const uint8_t *X, size_t esz,
		   const struct npu_kern_conv *p, const struct conv_geom *g,
		   int grp, long q0, long nq, const uint8_t *padrow)
{
	const size_t run = (size_t)g->Cg * esz;
	const uint8_t *xg = X + (size_t)grp * g->Cg * esz;
	const bool contig = g->Cg == p->C && p->dil_w == 1;

	for (long q = q0; q < q0 + nq; q++) {
		const long oh = q / p->OW, ow = q % p->OW;
		const long ih0 = oh * p->stride_h - p->pad_top;
		const long iw0 = ow * p->stride_w - p->pad_left;

		/*
		 * With one group and no horizontal dilation, a kernel row whose
		 * taps all lie in the image is one contiguous run of X: one copy
		 * instead of KW small ones (the first BlazeFace layer has 3
		 * channels, so 6-byte copies).
		 */
		const bool cols_in = contig && iw0 >= 0 && iw0 + p->KW <= p->W;

		for (int kh = 0; kh < p->KH; kh++) {
			const long ih = ih0 + (long)kh * p->dil_h;
			const bool row_in = ih >= 0 && ih < p->H;

			if (row_in && cols_in) {
				memcpy(dst, xg + (size_t)((ih * p->W + iw0) * p->C) * esz,
				       run * p->KW);
				dst += run * p->KW;
				continue;
			}
			for (int kw = 0; kw < p->KW; kw++) {
				const long iw = iw0 + (long)kw * p->dil_w;

				if (!row_in || iw < 0 || iw >= p->W)
					memcpy(dst, padrow, run);
				else
					memcpy(dst, xg + (size_t)((ih * p->W + iw) * p->C) * esz,
					       run);
				dst += run;
			}
		}
	}
}

/* True when Y = X * Wt is one plain GEMM on X as it is. */
static bool conv_is_pointwise(const struct npu_kern_conv *p)
{
	return p->groups == 1 && p->KH == 1 && p->KW == 1 &&
	       p->stride_h == 1 && p->stride_w == 1 &&
	       p->pad_top == 0 && p->pad_left == 0 &&
	       p->OW == p->W && p->OH <= p->H;
}

enum conv_type { CT_I8, CT_BF16, CT_F32 };

struct gemm_call {
	enum conv_type type;
	bool a_signed, b_signed;
	int32_t a_zp, b_zp;
	bool accumulate;
	const float *bias;	/* float types: [OC], or NULL */
};

/* @n0: the first of the N output channels (the group's bias). */
static void run_gemm(const struct gemm_call *c, int M, int N, int K,
		     const void *A, long lda, const void *B, long ldb, void *C,
		     long ldc, long n0)
{
	const float *bias = c->bias ? c->bias + n0 : NULL;

	switch (c->type) {
	case CT_I8:
		npu_kern_gemm_i8(M, N, K, A, lda, c->a_signed, c->a_zp, B, ldb,
				 c->b_signed, c->b_zp, C, ldc, c->accumulate);
		break;
	case CT_BF16:
		npu_kern_gemm_bf16_bias(M, N, K, A, lda, B, ldb, C, ldc,
					c->accumulate, bias);
		break;
	case CT_F32:
		npu_kern_gemm_f32_bias(M, N, K, A, lda, B, ldb, C, ldc,
				       c->accumulate, bias);
		break;
	}
}

/*
 * GEMM-based convolution.  @pad is one element (esz bytes) of padding.
 * Returns false if the im2col buffer could not be allocated.
 */
static bool conv_gemm(const struct npu_kern_conv *p, const struct conv_geom *g,
		      const struct gemm_call *c, size_t esz, const void *X,
		      const void *Wt, void *Y, const void *pad)
{
	const size_t ysz = 4;	/* int32 or fp32 accumulators */
	size_t rowbytes, chunk;
	uint8_t *buf, *padrow;

	if (conv_is_pointwise(p)) {
		run_gemm(c, (int)g->P, p->OC, p->C, X, p->C, Wt, p->OC, Y, p->OC, 0);
		return true;
	}
	rowbytes = (size_t)g->Kc * esz;
	chunk = IM2COL_BUDGET / (rowbytes ? rowbytes : 1);
	/*
	 * Enough rows to amortise the GEMM's packing of the weights, and a
	 * multiple of 12 (the GEMM's row tile) so only the last chunk has a
	 * partial tile; at most every pixel.
	 */
	if (chunk < 192)
		chunk = 192;
	chunk -= chunk % 12;
	if (chunk > (size_t)g->P)
		chunk = (size_t)g->P;
	buf = malloc(chunk * rowbytes + 1);
	padrow = malloc((size_t)g->Cg * esz + 1);
	if (!buf || !padrow) {
		free(buf);
		free(padrow);
		return false;
	}
	for (int i = 0; i < g->Cg; i++)
		memcpy(padrow + (size_t)i * esz, pad, esz);

	for (long q0 = 0; q0 < g->P; q0 += (long)chunk) {
		long nq = g->P - q0 < (long)chunk ? g->P - q0 : (long)chunk;

		for (int grp = 0; grp < p->groups; grp++) {
			im2col(buf, X, esz, p, g, grp, q0, nq, padrow);
			run_gemm(c, (int)nq, g->OCg, (int)g->Kc, buf, g->Kc,
				 (const uint8_t *)Wt + (size_t)grp * g->OCg * esz,
				 p->OC,
				 (uint8_t *)Y + ((size_t)q0 * p->OC +
						 (size_t)grp * g->OCg) * ysz,
				 p->OC, (long)grp * g->OCg);
		}
	}
	free(buf);
	free(padrow);
	return true;
}

/* ---- direct loops ---- */

/*
 * The innermost loops of the direct convolution, compiled for several ISAs
 * (the library is built for the baseline x86-64, which lacks a 32-bit
 * vector multiply) and picked at load time through an ifunc.
 */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)
#define CONV_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CONV_CLONES
#endif

/* acc[i] += x[i] * w[i], modulo 2^32 */
CONV_CLONES
static void mac_u32(uint32_t *restrict acc, const uint32_t *restrict x,
		    const uint32_t *restrict w, long n)
{
	for (long i = 0; i < n; i++)
		acc[i] += x[i] * w[i];
}

/* acc[i] += xv * w[i] */
CONV_CLONES
static void axpy_u32(uint32_t *restrict acc, uint32_t xv,
		     const uint32_t *restrict w, long n)
{
	for (long i = 0; i < n; i++)
		acc[i] += xv * w[i];
}

/* y[i] = x[i] widened from bf16 (exact): the direct loops' whole input. */
CONV_CLONES
static void widen_bf16(float *restrict y, const uint16_t *restrict x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		y[i] = npu_bf16_to_f32(x[i]);
}

CONV_CLONES
static void mac_f32(float *restrict acc, const float *restrict x,
		    const float *restrict w, long n)
{
	for (long i = 0; i < n; i++)
		acc[i] += x[i] * w[i];
}

CONV_CLONES
static void axpy_f32(float *restrict acc, float xv, const float *restrict w,
		     long n)
{
	for (long i = 0; i < n; i++)
		acc[i] += xv * w[i];
}

/* Taps the depthwise fast path takes per pixel (larger kernels: per tap). */
#define NPU_DW_MAX_TAPS	49

/* The in-image taps of one output pixel: offsets into X and W, in order. */
struct dw_taps {
	int n;
	long xoff[NPU_DW_MAX_TAPS];
	long woff[NPU_DW_MAX_TAPS];
};

/*
 * Depthwise (one input and one output channel per group, so OC == C): for
 * every output pixel, Y[q][c] += X[tap][c] * W[tap][c] over its in-image
 * taps in (kh, kw) order, each channel's sum in exactly that order as the
 * per-tap loop did (bit-identical).  All loops sit in one function compiled
 * per ISA; blocks of 32 and 8 channels are summed in registers across the
 * taps instead of through Y once per tap (a call per tap showed in
 * profiles).
 */
/*
 * Eight floats, operated on element by element (GCC vector extension; the
 * build does not contract a * b + c into an FMA, so each lane rounds the
 * product and then the sum exactly like the scalar code).
 */
typedef float dw_v8 __attribute__((vector_size(32)));
/* The same, at any float's address (X, W and Y rows are 4-byte aligned). */
typedef float dw_v8u __attribute__((vector_size(32), aligned(4), may_alias));

/* Macros, not functions: a vector argument's ABI differs between ISAs. */
#define dw_load(p)		(*(const dw_v8u *)(p))
#define dw_store(p, v)		(*(dw_v8u *)(p) = (v))

/*
 * @bias (or NULL) is added after the taps: the sum, then the bias, as the
 * separate pass it replaces did.  @fresh: the sums start from +0.0, not
 * from @acc (which need not have been cleared first).
 */
CONV_CLONES
static void dw_pixel_f32(const struct dw_taps *tp, const float *restrict x,
			 const float *restrict w, float *restrict acc, long C,
			 const float *restrict bias, bool fresh)
{
	const dw_v8 zero = { 0 };
	long c = 0;

	for (; c + 32 <= C; c += 32) {
		dw_v8 a0 = fresh ? zero : (dw_v8)dw_load(acc + c);
		dw_v8 a1 = fresh ? zero : (dw_v8)dw_load(acc + c + 8);
		dw_v8 a2 = fresh ? zero : (dw_v8)dw_load(acc + c + 16);
		dw_v8 a3 = fresh ? zero : (dw_v8)dw_load(acc + c + 24);

		for (int k = 0; k < tp->n; k++) {
			const float *xr = x + tp->xoff[k] + c;
			const float *wt = w + tp->woff[k] + c;

			a0 += dw_load(xr) * dw_load(wt);
			a1 += dw_load(xr + 8) * dw_load(wt + 8);
			a2 += dw_load(xr + 16) * dw_load(wt + 16);
			a3 += dw_load(xr + 24) * dw_load(wt + 24);
		}
		if (bias) {
			a0 += dw_load(bias + c);
			a1 += dw_load(bias + c + 8);
			a2 += dw_load(bias + c + 16);
			a3 += dw_load(bias + c + 24);
		}
		dw_store(acc + c, a0);
		dw_store(acc + c + 8, a1);
		dw_store(acc + c + 16, a2);
		dw_store(acc + c + 24, a3);
	}
	for (; c + 8 <= C; c += 8) {
		dw_v8 a = fresh ? zero : (dw_v8)dw_load(acc + c);

		for (int k = 0; k < tp->n; k++)
			a += dw_load(x + tp->xoff[k] + c) * dw_load(w + tp->woff[k] + c);
		if (bias)
			a += dw_load(bias + c);
		dw_store(acc + c, a);
	}
	for (; c < C; c++) {
		float a = fresh ? 0.0f : acc[c];

		for (int k = 0; k < tp->n; k++)
			a += x[tp->xoff[k] + c] * w[tp->woff[k] + c];
		if (bias)
			a += bias[c];
		acc[c] = a;
	}
}

/*
 * The in-image taps of the output pixel whose first tap is input pixel
 * (ih0, iw0), offsets from input pixel (0, 0).
 */
static void dw_taps_at(const struct npu_kern_conv *p, long ih0, long iw0,
		       struct dw_taps *tp)
{
	const long C = p->C;

	tp->n = 0;
	for (int kh = 0; kh < p->KH; kh++) {
		const long ih = ih0 + (long)kh * p->dil_h;

		if (ih < 0 || ih >= p->H)
			continue;
		for (int kw = 0; kw < p->KW; kw++) {
			const long iw = iw0 + (long)kw * p->dil_w;

			if (iw < 0 || iw >= p->W)
				continue;
			tp->xoff[tp->n] = (ih * p->W + iw) * C;
			tp->woff[tp->n] = ((long)kh * p->KW + kw) * C;
			tp->n++;
		}
	}
}

/*
 * Pixels whose taps all lie in the image share one tap list (that of the
 * pixel whose first tap is (0, 0), applied from their own first tap); the
 * others, near a padded edge, get their own.
 */
static void dw_f32(const struct npu_kern_conv *p, const float *x,
		   const float *w, float *Y, bool fresh)
{
	const long C = p->C;
	const long span_h = (long)(p->KH - 1) * p->dil_h;
	const long span_w = (long)(p->KW - 1) * p->dil_w;
	struct dw_taps inner, edge;

	dw_taps_at(p, 0, 0, &inner);
	for (long oh = 0, q = 0; oh < p->OH; oh++) {
		const long ih0 = oh * p->stride_h - p->pad_top;
		const bool rows_in = ih0 >= 0 && ih0 + span_h < p->H;

		for (long ow = 0; ow < p->OW; ow++, q++) {
			const long iw0 = ow * p->stride_w - p->pad_left;

			if (rows_in && iw0 >= 0 && iw0 + span_w < p->W &&
			    inner.n == p->KH * p->KW) {
				dw_pixel_f32(&inner, x + (ih0 * p->W + iw0) * C, w,
					     Y + q * C, C, p->bias, fresh);
				continue;
			}
			dw_taps_at(p, ih0, iw0, &edge);
			dw_pixel_f32(&edge, x, w, Y + q * C, C, p->bias, fresh);
		}
	}
}

/* dst[i] = src[i] - zp for int8 or uint8 src (one loop each: vectorisable) */
static void widen_i8(uint32_t *dst, const void *src, bool sgn, uint32_t zp,
		     size_t n)
{
	if (sgn) {
		const int8_t *s = src;

		for (size_t i = 0; i < n; i++)
			dst[i] = (uint32_t)s[i] - zp;
	} else {
		const uint8_t *s = src;

		for (size_t i = 0; i < n; i++)
			dst[i] = (uint32_t)s[i] - zp;
	}
}

/*
 * Run the statement block (the variadic argument, so that commas in it are
 * harmless) for every output pixel q and every tap t = kh*KW + kw whose
 * input pixel is inside the image, xoff being that pixel's element offset
 * in X; "continue" in the block moves to the next tap.  Padded taps are
 * skipped: they contribute (zp - zp) * w = 0, or 0.0 * w.
 */
#define FOR_EACH_TAP(p, q, xoff, t, ...)					\
	for (long oh_ = 0, q = 0; oh_ < (p)->OH; oh_++)			\
		for (long ow_ = 0; ow_ < (p)->OW; ow_++, q++)		\
			for (int kh_ = 0; kh_ < (p)->KH; kh_++) {	\
				const long ih_ = oh_ * (p)->stride_h -	\
					(p)->pad_top + (long)kh_ * (p)->dil_h; \
									\
				if (ih_ < 0 || ih_ >= (p)->H)		\
					continue;			\
				for (int kw_ = 0; kw_ < (p)->KW; kw_++) { \
					const long iw_ = ow_ * (p)->stride_w - \
						(p)->pad_left + (long)kw_ * (p)->dil_w; \
					const long xoff = (ih_ * (p)->W + iw_) * (p)->C; \
					const long t = (long)kh_ * (p)->KW + kw_; \
									\
					if (iw_ < 0 || iw_ >= (p)->W)	\
						continue;		\
					__VA_ARGS__			\
				}					\
			}

/*
 * int8, any grouping.  Input and weights are widened once to (v - zp) as
 * uint32, so the sums wrap exactly like the GEMM path; then each tap is a
 * multiply-accumulate over the output channels.  If the buffers cannot be
 * allocated there is nothing sensible left to do and Y is left alone.
 */
static void conv_direct_i8(const struct npu_kern_conv *p,
			   const struct conv_geom *g, const void *X,
			   bool x_signed, int32_t x_zp, const void *Wt,
			   bool w_signed, int32_t w_zp, int32_t *Y,
			   bool accumulate)
{
	const size_t nx = (size_t)p->H * p->W * p->C;
	const size_t nw = (size_t)p->KH * p->KW * g->Cg * p->OC;
	uint32_t *w = malloc(nw * sizeof(*w) + 1);
	uint32_t *x = malloc(nx * sizeof(*x) + 1);
	uint32_t *xe = malloc((size_t)p->OC * sizeof(*xe) + 1);
	uint32_t *y = (uint32_t *)Y;

	if (!w || !x || !xe)
		goto out;
	widen_i8(w, Wt, w_signed, (uint32_t)w_zp, nw);
	widen_i8(x, X, x_signed, (uint32_t)x_zp, nx);
	if (!accumulate)
		memset(y, 0, (size_t)g->P * p->OC * sizeof(*y));

	FOR_EACH_TAP(p, q, xoff, t, {
		uint32_t *acc = y + q * p->OC;
		const uint32_t *xr = x + xoff;
		const uint32_t *wt = w + t * g->Cg * p->OC;

		if (g->Cg == 1) {
			/* depthwise: output channel oc reads input oc / OCg */
			if (g->OCg != 1) {
				for (int oc = 0; oc < p->OC; oc++)
					xe[oc] = xr[oc / g->OCg];
				xr = xe;
			}
			mac_u32(acc, xr, wt, p->OC);
			continue;
		}
		for (int grp = 0; grp < p->groups; grp++)
			for (int c = 0; c < g->Cg; c++)
				axpy_u32(acc + (long)grp * g->OCg,
					 xr[grp * g->Cg + c],
					 wt + (long)c * p->OC + (long)grp * g->OCg,
					 g->OCg);
	})
out:
	free(w);
	free(x);
	free(xe);
}

/* Y[q][oc] = Y[q][oc] + bias[oc] for every output pixel q, if a bias. */
static void conv_add_bias(const struct npu_kern_conv *p, float *Y)
{
	npu_kern_add_bias(p->OH * p->OW, p->OC, Y, p->OC, p->bias);
}

/*
 * Floating point, any grouping (used for one input channel per group, and
 * if the im2col buffer cannot be allocated).  @X16/@W16 are bf16 when
 * non-NULL, otherwise @X32/@W32 are fp32; bf16 is widened to fp32 (exact).
 */
static void conv_direct_float(const struct npu_kern_conv *p,
			      const struct conv_geom *g, const uint16_t *X16,
			      const float *X32, const uint16_t *W16,
			      const float *W32, float *Y, bool accumulate)
{
	const size_t nx = (size_t)p->H * p->W * p->C;
	const size_t nw = (size_t)p->KH * p->KW * g->Cg * p->OC;
	float *wbuf = NULL, *xbuf = NULL;
	float *xe = malloc((size_t)p->OC * sizeof(*xe) + 1);
	const float *w = W32, *x = X32;

	if (!xe)
		goto out;
	if (W16) {
		wbuf = malloc(nw * sizeof(*wbuf) + 1);
		xbuf = malloc(nx * sizeof(*xbuf) + 1);
		if (!wbuf || !xbuf)
			goto out;
		widen_bf16(wbuf, W16, nw);
		widen_bf16(xbuf, X16, nx);
		w = wbuf;
		x = xbuf;
	}
	/* The depthwise loops write every output, from +0.0 or from Y. */
	if (g->Cg == 1 && g->OCg == 1 && p->KH * p->KW <= NPU_DW_MAX_TAPS) {
		dw_f32(p, x, w, Y, !accumulate);
		goto out;
	}
	if (!accumulate)
		for (size_t i = 0; i < (size_t)g->P * p->OC; i++)
			Y[i] = 0.0f;

	FOR_EACH_TAP(p, q, xoff, t, {
		float *acc = Y + q * p->OC;
		const float *xr = x + xoff;
		const float *wt = w + t * g->Cg * p->OC;

		if (g->Cg == 1) {
			if (g->OCg != 1) {
				for (int oc = 0; oc < p->OC; oc++)
					xe[oc] = xr[oc / g->OCg];
				xr = xe;
			}
			mac_f32(acc, xr, wt, p->OC);
			continue;
		}
		for (int grp = 0; grp < p->groups; grp++)
			for (int c = 0; c < g->Cg; c++)
				axpy_f32(acc + (long)grp * g->OCg,
					 xr[grp * g->Cg + c],
					 wt + (long)c * p->OC + (long)grp * g->OCg,
					 g->OCg);
	})
	conv_add_bias(p, Y);
out:
	free(wbuf);
	free(xbuf);
	free(xe);
}

/* ---- entry points ---- */

static void conv_clear(const struct npu_kern_conv *p, void *Y, bool accumulate)
{
	if (!accumulate && p->OH > 0 && p->OW > 0 && p->OC > 0)
		memset(Y, 0, (size_t)p->OH * p->OW * p->OC * 4);
}

void npu_kern_conv2d_i8(const struct npu_kern_conv *p,
			const void *X, bool x_signed, int32_t x_zp,
			const void *Wt, bool w_signed, int32_t w_zp,
			int32_t *Y, bool accumulate)
{
	const struct gemm_call c = {
		.type = CT_I8, .a_signed = x_signed, .b_signed = w_signed,
		.a_zp = x_zp, .b_zp = w_zp, .accumulate = accumulate,
	};
	struct conv_geom g;
	bool zp_fits;
	uint8_t pad;

	if (!conv_geom(p, &g))
		return;
	if (g.Kc == 0) {
		conv_clear(p, Y, accumulate);
		return;
	}
	zp_fits = x_signed ? x_zp >= -128 && x_zp <= 127 : x_zp >= 0 && x_zp <= 255;
	pad = (uint8_t)x_zp;	/* the byte whose value is x_zp */
	if (g.Cg > 1 && zp_fits && conv_gemm(p, &g, &c, 1, X, Wt, Y, &pad))
		return;
	conv_direct_i8(p, &g, X, x_signed, x_zp, Wt, w_signed, w_zp, Y,
		       accumulate);
}

void npu_kern_conv2d_bf16(const struct npu_kern_conv *p, const uint16_t *X,
			  const uint16_t *Wt, float *Y, bool accumulate)
{
	const struct gemm_call c = {
		.type = CT_BF16, .accumulate = accumulate, .bias = p->bias,
	};
	const uint16_t zero = 0;	/* +0.0 */
	struct conv_geom g;

	if (!conv_geom(p, &g))
		return;
	if (g.Kc == 0) {
		conv_clear(p, Y, accumulate);
		conv_add_bias(p, Y);
		return;
	}
	if (g.Cg > 1 && conv_gemm(p, &g, &c, 2, X, Wt, Y, &zero))
		return;
	conv_direct_float(p, &g, X, NULL, Wt, NULL, Y, accumulate);
}

void npu_kern_conv2d_f32(const struct npu_kern_conv *p, const float *X,
			 const float *Wt, float *Y, bool accumulate)
{
	const struct gemm_call c = {
		.type = CT_F32, .accumulate = accumulate, .bias = p->bias,
	};
	const float zero = 0.0f;
	struct conv_geom g;

	if (!conv_geom(p, &g))
		return;
	if (g.Kc == 0) {
		conv_clear(p, Y, accumulate);
		conv_add_bias(p, Y);
		return;
	}
	if (g.Cg > 1 && conv_gemm(p, &g, &c, 4, X, Wt, Y, &zero))
		return;
	conv_direct_float(p, &g, NULL, X, NULL, Wt, Y, accumulate);
}
