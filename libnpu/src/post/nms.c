// SPDX-License-Identifier: MIT
/*
 * Non-maximum suppression (npu_post.h).
 *
 * Both algorithms follow MediaPipe's NonMaxSuppressionCalculator
 * (mediapipe/calculators/util/non_max_suppression_calculator.cc) with
 * overlap_type INTERSECTION_OVER_UNION:
 *
 *   IoU(A, B) = area(A n B) / (area(A) + area(B) - area(A n B)),
 *   0 when the boxes do not intersect or the union has no area.
 *
 * Detections are first ordered by decreasing score (MediaPipe leaves
 * the order of equal scores to std::sort; here the lower index wins).
 *
 * WEIGHTED (the BlazeFace graphs' choice): repeatedly take the best
 * remaining detection D; every remaining detection whose IoU with D is
 * greater than the threshold joins D's cluster (D itself always does)
 * and leaves the pool.  The output is D with its box corners and
 * keypoints replaced by the cluster's score-weighted means,
 *   xmin = sum(score_i * xmin_i) / sum(score_i)   (same for the others),
 * and D's own score and class.  MediaPipe stops as soon as a round
 * removes nothing from the pool, which only happens when D has no area
 * (IoU with itself 0); putting D in its cluster unconditionally keeps
 * the later detections instead of dropping them.
 *
 * HARD: visit the detections in order, keep one unless its IoU with an
 * already kept detection is greater than the threshold.
 *
 * Both stop at the first detection scoring below min_score_thresh (when
 * that is > 0) and after max_detections outputs (when >= 0).
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "npu_internal.h"
#include "npu_post.h"

/* See ANCHOR_OPTIONS_MIN_SIZE in anchors.c. */
#define NMS_OPTIONS_MIN_SIZE sizeof(npu_nms_options)

void npu_nms_options_init(npu_nms_options *opts)
{
	if (!opts)
		return;
	*opts = (npu_nms_options){
		.struct_size = sizeof(*opts),
		.algorithm = NPU_NMS_WEIGHTED,
		.iou_threshold = 0.3f,
		.min_score_thresh = 0.0f,
		.max_detections = -1,
	};
}

static float box_area(const npu_detection *d)
{
	float w = d->xmax - d->xmin, h = d->ymax - d->ymin;

	return w > 0.0f && h > 0.0f ? w * h : 0.0f;
}

static float iou(const npu_detection *a, const npu_detection *b)
{
	float ix = fminf(a->xmax, b->xmax) - fmaxf(a->xmin, b->xmin);
	float iy = fminf(a->ymax, b->ymax) - fmaxf(a->ymin, b->ymin);
	float inter, uni;

	if (!(ix > 0.0f && iy > 0.0f))
		return 0.0f;
	inter = ix * iy;
	uni = box_area(a) + box_area(b) - inter;
	return uni > 0.0f ? inter / uni : 0.0f;
}

struct ranked {
	float score;
	size_t index;
};

/* Decreasing score, NaN last, then increasing index: a total order. */
static int cmp_ranked(const void *pa, const void *pb)
{
	const struct ranked *a = pa, *b = pb;
	bool na = isnan(a->score), nb = isnan(b->score);

	if (na != nb)
		return na ? 1 : -1;
	if (!na && a->score != b->score)
		return a->score > b->score ? -1 : 1;
	return (a->index > b->index) - (a->index < b->index);
}

static bool below_min(const npu_nms_options *o, float score)
{
	return o->min_score_thresh > 0.0f && !(score >= o->min_score_thresh);
}

/* Weighted NMS over @order[@n]; writes to @res, returns the count. */
static size_t nms_weighted(const npu_nms_options *o, const npu_detection *in,
			   struct ranked *order, size_t n, npu_detection *res)
{
	size_t nout = 0;

	while (n > 0 && (o->max_detections < 0 || nout < (size_t)o->max_detections)) {
		const npu_detection *top = &in[order[0].index];
		npu_detection w = *top;
		double sx0 = 0, sy0 = 0, sx1 = 0, sy1 = 0, total = 0;
		double kx[NPU_DETECTION_MAX_KEYPOINTS] = { 0 }, ky[NPU_DETECTION_MAX_KEYPOINTS] = { 0 };
		int nkp = top->num_keypoints;
		size_t kept = 0;

		if (below_min(o, top->score))
			break;
		if (nkp < 0)
			nkp = 0;
		if (nkp > NPU_DETECTION_MAX_KEYPOINTS)
			nkp = NPU_DETECTION_MAX_KEYPOINTS;
		for (size_t i = 0; i < n; i++) {
			const npu_detection *d = &in[order[i].index];
			double s = d->score;

			if (i > 0 && !(iou(top, d) > o->iou_threshold)) {
				order[kept++] = order[i];	/* kept < i: safe */
				continue;
			}
			total += s;
			sx0 += s * d->xmin;
			sy0 += s * d->ymin;
			sx1 += s * d->xmax;
			sy1 += s * d->ymax;
			for (int k = 0; k < nkp; k++) {
				kx[k] += s * d->keypoints[k].x;
				ky[k] += s * d->keypoints[k].y;
			}
		}
		if (total > 0.0) {
			w.xmin = (float)(sx0 / total);
			w.ymin = (float)(sy0 / total);
			w.xmax = (float)(sx1 / total);
			w.ymax = (float)(sy1 / total);
			for (int k = 0; k < nkp; k++) {
				w.keypoints[k].x = (float)(kx[k] / total);
				w.keypoints[k].y = (float)(ky[k] / total);
			}
		}
		res[nout++] = w;
		n = kept;
	}
	return nout;
}

/* Hard NMS over @order[@n]; writes to @res, returns the count. */
static size_t nms_hard(const npu_nms_options *o, const npu_detection *in,
		       const struct ranked *order, size_t n, npu_detection *res)
{
	size_t nout = 0;

	for (size_t i = 0; i < n; i++) {
		const npu_detection *d = &in[order[i].index];
		bool suppressed = false;

		if (o->max_detections >= 0 && nout >= (size_t)o->max_detections)
			break;
		if (below_min(o, d->score))
			break;
		for (size_t j = 0; j < nout && !suppressed; j++)
			suppressed = iou(&res[j], d) > o->iou_threshold;
		if (!suppressed)
			res[nout++] = *d;
	}
	return nout;
}

npu_status npu_nms(const npu_nms_options *opts, const npu_detection *in, size_t n,
		   npu_detection *out, size_t cap, size_t *count)
{
	const char *fn = "npu_nms";
	struct ranked *order;
	npu_detection *res;
	size_t nout;

	if (!count)
		return npu_fail(NPU_ERR_INVALID_ARG, "%s: count is NULL", fn);
	*count = 0;
	if (!opts)
		return npu_fail(NPU_ERR_INVALID_ARG, "%s: opts is NULL", fn);
	if (opts->struct_size < NMS_OPTIONS_MIN_SIZE)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"%s: options struct_size %zu is less than %zu: initialise them with npu_nms_options_init()",
				fn, opts->struct_size, NMS_OPTIONS_MIN_SIZE);
	if (opts->algorithm != NPU_NMS_WEIGHTED && opts->algorithm != NPU_NMS_HARD)
		return npu_fail(NPU_ERR_INVALID_ARG, "%s: unknown algorithm %d", fn,
				(int)opts->algorithm);
	if (!(opts->iou_threshold >= 0.0f && opts->iou_threshold <= 1.0f))
		return npu_fail(NPU_ERR_INVALID_ARG, "%s: iou_threshold %g is not in 0..1", fn,
				(double)opts->iou_threshold);
	if (isnan(opts->min_score_thresh))
		return npu_fail(NPU_ERR_INVALID_ARG, "%s: min_score_thresh is NaN", fn);
	if (!in && n > 0)
		return npu_fail(NPU_ERR_INVALID_ARG, "%s: in is NULL with %zu detections", fn, n);
	if (!out && cap > 0)
		return npu_fail(NPU_ERR_INVALID_ARG, "%s: out is NULL with cap %zu", fn, cap);
	if (n == 0)
		return NPU_OK;

	/* Results go to a scratch array first, so out may alias in. */
	order = calloc(n, sizeof(*order));
	res = calloc(n, sizeof(*res));
	if (!order || !res) {
		free(order);
		free(res);
		return npu_fail(NPU_ERR_NO_MEMORY, "%s: out of memory for %zu detections", fn, n);
	}
	for (size_t i = 0; i < n; i++) {
		order[i].score = in[i].score;
		order[i].index = i;
	}
	qsort(order, n, sizeof(*order), cmp_ranked);
	if (opts->algorithm == NPU_NMS_WEIGHTED)
		nout = nms_weighted(opts, in, order, n, res);
	else
		nout = nms_hard(opts, in, order, n, res);
	if (cap > 0 && nout > 0)
		memcpy(out, res, (nout < cap ? nout : cap) * sizeof(*res));
	*count = nout;
	free(order);
	free(res);
	return NPU_OK;
}
