// SPDX-License-Identifier: MIT
/*
 * Cluster-CPU assisted kernels (CSU): top-k selection and greedy
 * non-maximum suppression.  These are branchy, data-dependent algorithms
 * that the hardware runs on its scalar CPU, so the emulation is plain
 * scalar code tuned for complexity rather than SIMD.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npu_kern.h"

/* ---- top-k ---- */

/*
 * Strict total order "a ranks before b" on (value, index).  NaN ranks
 * after every number in both directions (it is never a better choice);
 * equal values, and NaNs among themselves, rank by lower index.  -0.0 and
 * +0.0 compare equal.
 */
static inline bool topk_before(float av, int32_t ai, float bv, int32_t bi,
			       bool largest)
{
	bool an = isnan(av), bn = isnan(bv);

	if (an || bn)
		return an == bn ? ai < bi : bn;
	if (av != bv)
		return largest ? av > bv : av < bv;
	return ai < bi;
}

/*
 * The k outputs double as a binary heap whose root is the worst element
 * kept so far: O(n log k) time and no allocation.  sift_down restores
 * the heap below position i within the first len entries.
 */
static void heap_sift_down(float *v, int32_t *ix, size_t len, size_t i,
			   bool largest)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, w = i;

		/* w = the worst of i and its children */
		if (l < len && topk_before(v[w], ix[w], v[l], ix[l], largest))
			w = l;
		if (r < len && topk_before(v[w], ix[w], v[r], ix[r], largest))
			w = r;
		if (w == i)
			return;
		{
			float tv = v[i];
			int32_t ti = ix[i];

			v[i] = v[w];
			ix[i] = ix[w];
			v[w] = tv;
			ix[w] = ti;
		}
		i = w;
	}
}

static void heap_sift_up(float *v, int32_t *ix, size_t i, bool largest)
{
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		float tv;
		int32_t ti;

		/* the parent must rank after (be worse than) the child */
		if (!topk_before(v[parent], ix[parent], v[i], ix[i], largest))
			return;
		tv = v[i];
		ti = ix[i];
		v[i] = v[parent];
		ix[i] = ix[parent];
		v[parent] = tv;
		ix[parent] = ti;
		i = parent;
	}
}

/*
 * Each row's k results are sorted best first.  With k > n the entries
 * after the n real ones get index -1 and value 0.  Indices are int32: n is
 * expected below 2^31.
 */
void npu_kern_topk(float *vals, int32_t *idx, const float *x, size_t rows,
		   size_t n, size_t k, bool largest)
{
	size_t keep = k < n ? k : n;

	if (k == 0)
		return;
	for (size_t r = 0; r < rows; r++) {
		const float *xr = x + r * n;
		float *v = vals + r * k;
		int32_t *ix = idx + r * k;
		size_t len = 0;

		for (size_t i = 0; i < n; i++) {
			int32_t ii = (int32_t)i;

			if (len < keep) {
				v[len] = xr[i];
				ix[len] = ii;
				heap_sift_up(v, ix, len, largest);
				len++;
			} else if (topk_before(xr[i], ii, v[0], ix[0], largest)) {
				/* better than the worst kept: replace the root */
				v[0] = xr[i];
				ix[0] = ii;
				heap_sift_down(v, ix, len, 0, largest);
			}
		}
		/*
		 * Heap sort: moving the worst (root) to the end repeatedly
		 * leaves the entries best first.
		 */
		for (size_t end = len; end > 1; end--) {
			float tv = v[0];
			int32_t ti = ix[0];

			v[0] = v[end - 1];
			ix[0] = ix[end - 1];
			v[end - 1] = tv;
			ix[end - 1] = ti;
			heap_sift_down(v, ix, end - 1, 0, largest);
		}
		for (size_t i = keep; i < k; i++) {
			v[i] = 0.0f;
			ix[i] = -1;
		}
	}
}

/* ---- NMS ---- */

/* a box as min/max corners and its area */
struct nms_box {
	float y0, x0, y1, x1, area;
};

static struct nms_box nms_load(const float *b, unsigned box_format)
{
	struct nms_box r;
	float ya, xa, yb, xb;

	if (box_format == 1) {
		/* [cx, cy, w, h] */
		float hw = b[2] * 0.5f, hh = b[3] * 0.5f;

		xa = b[0] - hw;
		xb = b[0] + hw;
		ya = b[1] - hh;
		yb = b[1] + hh;
	} else {
		/* [y1, x1, y2, x2]; the corners may come in either order */
		ya = b[0];
		xa = b[1];
		yb = b[2];
		xb = b[3];
	}
	r.y0 = fminf(ya, yb);
	r.y1 = fmaxf(ya, yb);
	r.x0 = fminf(xa, xb);
	r.x1 = fmaxf(xa, xb);
	r.area = (r.y1 - r.y0) * (r.x1 - r.x0);
	return r;
}

/*
 * Intersection over union; 0 when the union is empty (two zero-area
 * boxes), so degenerate boxes never suppress anything.
 */
static float nms_iou(const struct nms_box *a, const struct nms_box *b)
{
	float ih = fminf(a->y1, b->y1) - fmaxf(a->y0, b->y0);
	float iw = fminf(a->x1, b->x1) - fmaxf(a->x0, b->x0);
	float inter, uni;

	if (!(ih > 0.0f) || !(iw > 0.0f))
		return 0.0f;
	inter = ih * iw;
	uni = a->area + b->area - inter;
	return uni > 0.0f ? inter / uni : 0.0f;
}

/* candidate order: higher score first, then lower index (a total order) */
static inline bool nms_before(const float *scores, size_t a, size_t b)
{
	return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
}

static int nms_cmp(const void *pa, const void *pb, void *arg)
{
	const float *scores = arg;
	size_t a = (size_t)*(const int32_t *)pa;
	size_t b = (size_t)*(const int32_t *)pb;

	if (nms_before(scores, a, b))
		return -1;
	return nms_before(scores, b, a) ? 1 : 0;
}

/* true if box i overlaps a kept box by more than iou_thr */
static bool nms_suppressed(const struct nms_box *bi, const int32_t *sel,
			   size_t nsel, const float *boxes, unsigned box_format,
			   const struct nms_box *kept, float iou_thr)
{
	for (size_t j = 0; j < nsel; j++) {
		struct nms_box kb = kept ? kept[j] :
				    nms_load(boxes + 4 * (size_t)sel[j], box_format);

		if (nms_iou(bi, &kb) > iou_thr)
			return true;
	}
	return false;
}

/*
 * Small inputs, or no memory: walk the candidates in order without any
 * buffer by repeatedly scanning for the best candidate that ranks after
 * the previous one.  O(n) per visited candidate.
 */
static size_t nms_noalloc(int32_t *sel, const float *boxes,
			  const float *scores, size_t n, size_t max_out,
			  float iou_thr, float score_thr, unsigned box_format)
{
	size_t nsel = 0, prev = n;	/* n: no previous candidate yet */

	while (nsel < max_out) {
		size_t best = n;
		struct nms_box b;

		for (size_t i = 0; i < n; i++) {
			if (!(scores[i] > score_thr))
				continue;
			if (prev != n && !nms_before(scores, prev, i))
				continue;	/* already visited */
			if (best == n || nms_before(scores, i, best))
				best = i;
		}
		if (best == n)
			break;
		prev = best;
		b = nms_load(boxes + 4 * best, box_format);
		if (!nms_suppressed(&b, sel, nsel, boxes, box_format, NULL,
				    iou_thr))
			sel[nsel++] = (int32_t)best;
	}
	return nsel;
}

#define NMS_SMALL 64

/*
 * Scores that are NaN or not above score_thr never qualify.  Suppression
 * is "IoU > iou_thr", so iou_thr >= 1 keeps overlapping boxes and a NaN
 * iou_thr suppresses nothing.  An unknown box_format selects nothing.
 * Indices are int32: n is expected below 2^31.
 */
size_t npu_kern_nms(int32_t *sel, const float *boxes, const float *scores,
		    size_t n, size_t max_out, float iou_thr, float score_thr,
		    unsigned box_format)
{
	int32_t *order;
	struct nms_box *kept;
	size_t ncand = 0, nsel = 0;

	if (max_out == 0 || n == 0 || box_format > 1)
		return 0;
	if (n <= NMS_SMALL)
		return nms_noalloc(sel, boxes, scores, n, max_out, iou_thr,
				   score_thr, box_format);

	order = malloc(n * sizeof(*order));
	kept = malloc((max_out < n ? max_out : n) * sizeof(*kept));
	if (!order || !kept) {
		free(order);
		free(kept);
		return nms_noalloc(sel, boxes, scores, n, max_out, iou_thr,
				   score_thr, box_format);
	}
	for (size_t i = 0; i < n; i++)
		if (scores[i] > score_thr)
			order[ncand++] = (int32_t)i;
	qsort_r(order, ncand, sizeof(*order), nms_cmp, (void *)scores);

	for (size_t c = 0; c < ncand && nsel < max_out; c++) {
		size_t i = (size_t)order[c];
		struct nms_box b = nms_load(boxes + 4 * i, box_format);

		if (nms_suppressed(&b, sel, nsel, boxes, box_format, kept,
				   iou_thr))
			continue;
		kept[nsel] = b;
		sel[nsel++] = (int32_t)i;
	}
	free(order);
	free(kept);
	return nsel;
}
