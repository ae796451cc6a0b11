// SPDX-License-Identifier: MIT
/*
 * Data-movement kernels (DTDU): transpose, HWC padding and fill, for any
 * element size.
 *
 * Elements are moved with memcpy of a compile-time size for the common
 * sizes (1, 2, 4, 8 bytes): that compiles to a single load/store, needs no
 * alignment (operands are byte addresses in device memory) and keeps the
 * code free of type-punning.  Other sizes take a generic variable-size
 * memcpy path.
 *
 * Output and input must not overlap unless stated otherwise.
 */
#include <string.h>

#include "npu_kern.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* An AVX2 block for 4-byte elements, picked at run time (as in
 * npu_kern_vec.c) when the baseline build does not have it. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__AVX2__)
#define MOVE_X86_DISPATCH 1
#include <immintrin.h>
#else
#define MOVE_X86_DISPATCH 0
#endif

/* ---- fill ---- */

/*
 * Fill by doubling: write one element, then copy the filled prefix onto
 * the rest, doubling each time.  That is O(log n) large memcpys for any
 * element size, and memset when every byte of the element is equal
 * (zeros, 0xff..., all int8 values).  A NULL value fills zeros; value may
 * point at y's first element.
 */
void npu_kern_fill(void *y, size_t esz, size_t n, const void *value)
{
	unsigned char *d = y;
	const unsigned char *v = value;
	size_t total = esz * n, done;
	bool uniform = true;

	if (total == 0)
		return;
	if (!v) {
		memset(d, 0, total);
		return;
	}
	for (size_t i = 1; i < esz; i++)
		if (v[i] != v[0]) {
			uniform = false;
			break;
		}
	if (uniform) {
		memset(d, v[0], total);
		return;
	}
	if (d != v)
		memmove(d, v, esz);
	for (done = esz; done < total; done *= 2) {
		size_t len = total - done < done ? total - done : done;

		memcpy(d + done, d, len);
	}
}

/* ---- transpose ---- */

/*
 * 32x32 tiles: for 4-byte elements a tile's source rows and destination
 * rows (4 KiB each side) stay in L1 while the tile is written, instead of
 * streaming one strided column through the cache per output row.
 */
#define TILE 32

#define DEFINE_TRANSPOSE(name, ESZ)					\
static void name(unsigned char *y, const unsigned char *x, size_t rows, \
		 size_t cols)						\
{									\
	for (size_t r0 = 0; r0 < rows; r0 += TILE) {			\
		size_t r1 = r0 + TILE < rows ? r0 + TILE : rows;	\
									\
		for (size_t c0 = 0; c0 < cols; c0 += TILE) {		\
			size_t c1 = c0 + TILE < cols ? c0 + TILE : cols; \
									\
			/* contiguous writes, reads strided within the tile */ \
			for (size_t c = c0; c < c1; c++) {		\
				unsigned char *yd = y + (c * rows) * (ESZ); \
				const unsigned char *xs = x + c * (ESZ); \
									\
				for (size_t r = r0; r < r1; r++)	\
					memcpy(yd + r * (ESZ),		\
					       xs + r * cols * (ESZ), (ESZ)); \
			}						\
		}							\
	}								\
}

DEFINE_TRANSPOSE(transpose_1, 1)
DEFINE_TRANSPOSE(transpose_2, 2)
DEFINE_TRANSPOSE(transpose_4, 4)
DEFINE_TRANSPOSE(transpose_8, 8)

static void transpose_any(unsigned char *y, const unsigned char *x,
			  size_t esz, size_t rows, size_t cols)
{
	for (size_t r0 = 0; r0 < rows; r0 += TILE) {
		size_t r1 = r0 + TILE < rows ? r0 + TILE : rows;

		for (size_t c0 = 0; c0 < cols; c0 += TILE) {
			size_t c1 = c0 + TILE < cols ? c0 + TILE : cols;

			for (size_t c = c0; c < c1; c++)
				for (size_t r = r0; r < r1; r++)
					memcpy(y + (c * rows + r) * esz,
					       x + (r * cols + c) * esz, esz);
		}
	}
}

void npu_kern_transpose(void *y, const void *x, size_t esz, size_t rows,
			size_t cols)
{
	if (esz == 0 || rows == 0 || cols == 0)
		return;
	/* a single row or column has the same layout either way */
	if (rows == 1 || cols == 1) {
		memmove(y, x, rows * cols * esz);
		return;
	}
	switch (esz) {
	case 1:
		transpose_1(y, x, rows, cols);
		break;
	case 2:
		transpose_2(y, x, rows, cols);
		break;
	case 4:
		transpose_4(y, x, rows, cols);
		break;
	case 8:
		transpose_8(y, x, rows, cols);
		break;
	default:
		transpose_any(y, x, esz, rows, cols);
		break;
	}
}

/* ---- pad ---- */

/*
 * Source index for output position i (relative to the first real element,
 * so negative in the leading pad) under EDGE or REFLECT, for an axis of
 * n >= 1 elements.  REFLECT mirrors without repeating the edge element
 * (numpy "reflect", ONNX reflect); pads wider than n - 1 keep reflecting
 * back and forth (period 2 (n - 1)), and n == 1 repeats the only element.
 */
static size_t pad_src_index(long i, size_t n, unsigned mode)
{
	long ln = (long)n;

	if (mode == NPU_PAD_EDGE)
		return i < 0 ? 0 : (i >= ln ? n - 1 : (size_t)i);
	if (n == 1)
		return 0;
	{
		long period = 2 * (ln - 1);

		i %= period;
		if (i < 0)
			i += period;
		return (size_t)(i < ln ? i : period - i);
	}
}

/*
 * y [H+pt+pb][W+pl+pr][C] from x [H][W][C].  CONSTANT fills the border
 * with *value (one element of esz bytes; NULL means zero).  EDGE and
 * REFLECT copy whole C-element pixels from the mapped source position.
 * An unknown mode, or EDGE/REFLECT with an empty input (nothing to
 * replicate), pads as CONSTANT.
 */
void npu_kern_pad_hwc(void *y, const void *x, size_t esz, size_t H, size_t W,
		      size_t C, size_t pt, size_t pl, size_t pb, size_t pr,
		      unsigned mode, const void *value)
{
	unsigned char *d = y;
	const unsigned char *s = x;
	size_t px = C * esz;			/* bytes per pixel */
	size_t OW = W + pl + pr, OH = H + pt + pb;
	size_t orow = OW * px, irow = W * px;
	bool constant = (mode != NPU_PAD_EDGE && mode != NPU_PAD_REFLECT) ||
			H == 0 || W == 0;

	if (px == 0 || OW == 0 || OH == 0)
		return;

	if (constant) {
		/* top and bottom bands are contiguous runs of the value */
		npu_kern_fill(d, esz, pt * OW * C, value);
		for (size_t h = 0; h < H; h++) {
			unsigned char *o = d + (pt + h) * orow;

			npu_kern_fill(o, esz, pl * C, value);
			memcpy(o + pl * px, s + h * irow, irow);
			npu_kern_fill(o + (pl + W) * px, esz, pr * C, value);
		}
		npu_kern_fill(d + (pt + H) * orow, esz, pb * OW * C, value);
		return;
	}

	for (size_t oh = 0; oh < OH; oh++) {
		size_t ih = pad_src_index((long)oh - (long)pt, H, mode);
		const unsigned char *src = s + ih * irow;
		unsigned char *o = d + oh * orow;

		for (size_t ow = 0; ow < pl; ow++) {
			size_t iw = pad_src_index((long)ow - (long)pl, W, mode);

			memcpy(o + ow * px, src + iw * px, px);
		}
		memcpy(o + pl * px, src, irow);
		for (size_t ow = pl + W; ow < OW; ow++) {
			size_t iw = pad_src_index((long)ow - (long)pl, W, mode);

			memcpy(o + ow * px, src + iw * px, px);
		}
	}
}

/* ---- strided transpose ---- */

#if defined(__SSE2__)
/* One 8 x 8 block of 2-byte elements, rows @xs and @ys bytes apart. */
static void block8_u16(unsigned char *y, size_t ys, const unsigned char *x,
		       size_t xs)
{
	__m128i r[8], t[8], u[8];

	for (unsigned i = 0; i < 8; i++)
		r[i] = _mm_loadu_si128((const __m128i *)(const void *)(x + i * xs));
	for (unsigned i = 0; i < 4; i++) {
		t[2 * i] = _mm_unpacklo_epi16(r[2 * i], r[2 * i + 1]);
		t[2 * i + 1] = _mm_unpackhi_epi16(r[2 * i], r[2 * i + 1]);
	}
	/* u[0..3]: columns 0-1, 2-3, 4-5, 6-7 of rows 0-3; u[4..7]: rows 4-7 */
	for (unsigned h = 0; h < 2; h++) {
		u[4 * h] = _mm_unpacklo_epi32(t[4 * h], t[4 * h + 2]);
		u[4 * h + 1] = _mm_unpackhi_epi32(t[4 * h], t[4 * h + 2]);
		u[4 * h + 2] = _mm_unpacklo_epi32(t[4 * h + 1], t[4 * h + 3]);
		u[4 * h + 3] = _mm_unpackhi_epi32(t[4 * h + 1], t[4 * h + 3]);
	}
	for (unsigned i = 0; i < 4; i++) {
		_mm_storeu_si128((__m128i *)(void *)(y + 2 * i * ys),
				 _mm_unpacklo_epi64(u[i], u[4 + i]));
		_mm_storeu_si128((__m128i *)(void *)(y + (2 * i + 1) * ys),
				 _mm_unpackhi_epi64(u[i], u[4 + i]));
	}
}

/* One 4 x 4 block of 4-byte elements. */
static void block4_u32(unsigned char *y, size_t ys, const unsigned char *x,
		       size_t xs)
{
	__m128i r[4], t[4];

	for (unsigned i = 0; i < 4; i++)
		r[i] = _mm_loadu_si128((const __m128i *)(const void *)(x + i * xs));
	t[0] = _mm_unpacklo_epi32(r[0], r[1]);
	t[1] = _mm_unpackhi_epi32(r[0], r[1]);
	t[2] = _mm_unpacklo_epi32(r[2], r[3]);
	t[3] = _mm_unpackhi_epi32(r[2], r[3]);
	_mm_storeu_si128((__m128i *)(void *)y, _mm_unpacklo_epi64(t[0], t[2]));
	_mm_storeu_si128((__m128i *)(void *)(y + ys), _mm_unpackhi_epi64(t[0], t[2]));
	_mm_storeu_si128((__m128i *)(void *)(y + 2 * ys), _mm_unpacklo_epi64(t[1], t[3]));
	_mm_storeu_si128((__m128i *)(void *)(y + 3 * ys), _mm_unpackhi_epi64(t[1], t[3]));
}
#endif

#if MOVE_X86_DISPATCH
static bool cpu_has_avx2(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
}

/*
 * One 8 x 8 block of 4-byte elements: twice block4_u32's width, a third
 * of its instructions per element.  Float shuffles only move bits (no
 * arithmetic, so NaN payloads pass unchanged).
 */
__attribute__((target("avx2")))
static void block8_u32_avx2(unsigned char *y, size_t ys,
			    const unsigned char *x, size_t xs)
{
	__m256 r[8], t[8], u[8];

	for (unsigned i = 0; i < 8; i++)
		r[i] = _mm256_loadu_ps((const float *)(const void *)(x + i * xs));
	for (unsigned i = 0; i < 4; i++) {
		t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
		t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
	}
	/* u[0..3]: columns 0, 1, 2, 3 (and 4..7 in the high lanes) of rows
	 * 0-3; u[4..7]: the same of rows 4-7 */
	for (unsigned h = 0; h < 2; h++) {
		u[4 * h] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0x44);
		u[4 * h + 1] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0xee);
		u[4 * h + 2] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0x44);
		u[4 * h + 3] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0xee);
	}
	for (unsigned i = 0; i < 4; i++) {
		_mm256_storeu_ps((float *)(void *)(y + i * ys),
				 _mm256_permute2f128_ps(u[i], u[4 + i], 0x20));
		_mm256_storeu_ps((float *)(void *)(y + (4 + i) * ys),
				 _mm256_permute2f128_ps(u[i], u[4 + i], 0x31));
	}
}
#endif

/* Elements [r0, rows) x [c0, cols) one at a time, ESZ bytes each. */
#define TRANSPOSE_REST(y, ys, x, xs, ESZ, r0, rows, c0, cols)		\
	for (size_t c = (c0); c < (cols); c++)				\
		for (size_t r = (r0); r < (rows); r++)			\
			memcpy((y) + c * (ys) + r * (ESZ),		\
			       (x) + r * (xs) + c * (ESZ), (ESZ))

/*
 * The same, with the element size a constant for the common sizes so each
 * copy is one load and store rather than a call to memcpy (narrow tensors,
 * e.g. 3 channels, transpose only here).
 */
static void transpose_rest(unsigned char *y, size_t ys, const unsigned char *x,
			   size_t xs, size_t esz, size_t r0, size_t rows,
			   size_t c0, size_t cols)
{
	if (esz == 2)
		TRANSPOSE_REST(y, ys, x, xs, 2, r0, rows, c0, cols);
	else if (esz == 4)
		TRANSPOSE_REST(y, ys, x, xs, 4, r0, rows, c0, cols);
	else
		TRANSPOSE_REST(y, ys, x, xs, esz, r0, rows, c0, cols);
}

void npu_kern_transpose_strided(void *y, size_t y_stride, const void *x,
				size_t x_stride, size_t esz, size_t rows,
				size_t cols)
{
	unsigned char *yb = y;
	const unsigned char *xb = x;
	size_t b = 0, r8 = 0, c8 = 0;

#if defined(__SSE2__)
	bool wide = false;

	if (esz == 2)
		b = 8;
	else if (esz == 4)
		b = 4;
#if MOVE_X86_DISPATCH
	if (esz == 4 && rows >= 8 && cols >= 8 && cpu_has_avx2()) {
		b = 8;
		wide = true;
	}
#endif
	r8 = b ? rows / b * b : 0;
	c8 = b ? cols / b * b : 0;
	for (size_t r = 0; r < r8; r += b) {
		for (size_t c = 0; c < c8; c += b) {
			unsigned char *yd = yb + c * y_stride + r * esz;
			const unsigned char *xs = xb + r * x_stride + c * esz;

#if MOVE_X86_DISPATCH
			if (wide) {
				block8_u32_avx2(yd, y_stride, xs, x_stride);
				continue;
			}
#endif
			if (esz == 2)
				block8_u16(yd, y_stride, xs, x_stride);
			else
				block4_u32(yd, y_stride, xs, x_stride);
		}
	}
	if (wide) {
		/*
		 * The 8 x 8 blocks' edges in 4 x 4 blocks where four fit
		 * (BlazeFace's 28-, 36- and 44-channel tensors left four rows
		 * to the element loop), then the element loop for the rest.
		 */
		const size_t r4 = rows / 4 * 4, c4 = cols / 4 * 4;

		for (size_t r = 0; r < r4; r += 4) {
			for (size_t c = r < r8 ? c8 : 0; c < c4; c += 4)
				block4_u32(yb + c * y_stride + r * esz, y_stride,
					   xb + r * x_stride + c * esz, x_stride);
		}
		transpose_rest(yb, y_stride, xb, x_stride, esz, 0, r4, c4, cols);
		transpose_rest(yb, y_stride, xb, x_stride, esz, r4, rows, 0, cols);
		return;
	}
#endif
	(void)b;
	/* the right strip of the blocked rows, then all remaining rows */
	transpose_rest(yb, y_stride, xb, x_stride, esz, 0, r8, c8, cols);
	transpose_rest(yb, y_stride, xb, x_stride, esz, r8, rows, 0, cols);
}
