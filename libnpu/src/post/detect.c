// SPDX-License-Identifier: MIT
/*
 * Decoding an SSD-style detector's raw outputs into boxes (npu_post.h).
 *
 * The arithmetic follows MediaPipe's TensorsToDetectionsCalculator
 * (mediapipe/calculators/tensor/tensors_to_detections_calculator.cc),
 * restated here for anchor a (x_center, y_center, w, h) and regressor
 * row r (num_coords floats):
 *
 *   box values at box_coord_offset: (x, y, w, h) when
 *   reverse_output_order is set (BlazeFace), else (y, x, h, w);
 *
 *   x_center = x / x_scale * a.w + a.x_center
 *   y_center = y / y_scale * a.h + a.y_center
 *   w        = w / w_scale * a.w       (exp(w / w_scale) * a.w when
 *   h        = h / h_scale * a.h        apply_exponential_on_box_size)
 *   box      = center -/+ size / 2
 *
 *   keypoint k at keypoint_coord_offset + k * num_values_per_keypoint:
 *   (x, y) or (y, x) as above, then
 *   kx = x / x_scale * a.w + a.x_center,  ky = y / y_scale * a.h + a.y_center
 *
 * So the regressors are pixel offsets in the model input (128x128 for
 * BlazeFace: the scales are 128), relative to the anchor's center and,
 * unless the anchors have fixed size 1, in units of the anchor's size.
 *
 * Scores: with sigmoid_score each logit is first clamped to
 * [-score_clipping_thresh, score_clipping_thresh] when that is > 0, then
 * mapped through 1 / (1 + exp(-v)).  The detection's score and class are
 * the best over the num_classes columns (the first one on ties).  A
 * detection is kept when score >= min_score_thresh and, as MediaPipe
 * does, when its decoded width and height are not negative.
 */
#include <math.h>
#include <stdbool.h>

#include "npu_internal.h"
#include "npu_post.h"

/* See ANCHOR_OPTIONS_MIN_SIZE in anchors.c. */
#define DECODE_OPTIONS_MIN_SIZE sizeof(npu_decode_options)

void npu_decode_options_init(npu_decode_options *opts)
{
	if (!opts)
		return;
	*opts = (npu_decode_options){
		.struct_size = sizeof(*opts),
		.num_classes = 1,
		.num_coords = 4,
		.num_values_per_keypoint = 2,
		.x_scale = 1.0f,
		.y_scale = 1.0f,
		.w_scale = 1.0f,
		.h_scale = 1.0f,
	};
}

void npu_decode_options_blazeface_front(npu_decode_options *opts)
{
	if (!opts)
		return;
	npu_decode_options_init(opts);
	/* Values of MediaPipe's face_detection_short_range graph. */
	opts->num_classes = 1;
	opts->num_coords = 16;
	opts->box_coord_offset = 0;
	opts->keypoint_coord_offset = 4;
	opts->num_keypoints = 6;
	opts->num_values_per_keypoint = 2;
	opts->x_scale = 128.0f;
	opts->y_scale = 128.0f;
	opts->w_scale = 128.0f;
	opts->h_scale = 128.0f;
	opts->reverse_output_order = 1;
	opts->sigmoid_score = 1;
	opts->score_clipping_thresh = 100.0f;
	opts->min_score_thresh = 0.5f;
}

static bool good_scale(float s)
{
	return isfinite(s) && s != 0.0f;
}

static npu_status check_options(const npu_decode_options *o)
{
	const char *fn = "npu_detections_decode";

	if (o->struct_size < DECODE_OPTIONS_MIN_SIZE)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"%s: options struct_size %zu is less than %zu: initialise them with npu_decode_options_init()",
				fn, o->struct_size, DECODE_OPTIONS_MIN_SIZE);
	if (o->num_classes < 1)
		return npu_fail(NPU_ERR_INVALID_ARG, "%s: num_classes %d is not positive", fn,
				o->num_classes);
	if (o->num_coords < 4)
		return npu_fail(NPU_ERR_INVALID_ARG, "%s: num_coords %d is less than 4", fn,
				o->num_coords);
	if (o->box_coord_offset < 0 || o->box_coord_offset > o->num_coords - 4)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"%s: box_coord_offset %d leaves no room for 4 values in num_coords %d",
				fn, o->box_coord_offset, o->num_coords);
	if (o->num_keypoints < 0 || o->num_keypoints > NPU_DETECTION_MAX_KEYPOINTS)
		return npu_fail(NPU_ERR_INVALID_ARG, "%s: num_keypoints %d is not in 0..%d", fn,
				o->num_keypoints, NPU_DETECTION_MAX_KEYPOINTS);
	if (o->num_keypoints > 0) {
		int64_t last;

		if (o->num_values_per_keypoint < 2)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"%s: num_values_per_keypoint %d is less than 2", fn,
					o->num_values_per_keypoint);
		last = (int64_t)o->keypoint_coord_offset +
		       (int64_t)(o->num_keypoints - 1) * o->num_values_per_keypoint + 2;
		if (o->keypoint_coord_offset < 0 || last > o->num_coords)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"%s: %d keypoints of %d values at offset %d do not fit in num_coords %d",
					fn, o->num_keypoints, o->num_values_per_keypoint,
					o->keypoint_coord_offset, o->num_coords);
	}
	if (!good_scale(o->x_scale) || !good_scale(o->y_scale) ||
	    !good_scale(o->w_scale) || !good_scale(o->h_scale))
		return npu_fail(NPU_ERR_INVALID_ARG,
				"%s: x/y/w/h scales (%g %g %g %g) must be finite and non-zero", fn,
				(double)o->x_scale, (double)o->y_scale, (double)o->w_scale,
				(double)o->h_scale);
	if (isnan(o->score_clipping_thresh) || isnan(o->min_score_thresh))
		return npu_fail(NPU_ERR_INVALID_ARG, "%s: a score threshold is NaN", fn);
	return NPU_OK;
}

/* A raw score column to 0..1 (or kept as is without sigmoid_score). */
static float decode_score(const npu_decode_options *o, float v)
{
	if (!o->sigmoid_score)
		return v;
	if (o->score_clipping_thresh > 0.0f) {
		if (v < -o->score_clipping_thresh)
			v = -o->score_clipping_thresh;
		else if (v > o->score_clipping_thresh)
			v = o->score_clipping_thresh;
	}
	return 1.0f / (1.0f + expf(-v));
}

static void decode_box(const npu_decode_options *o, const float *r, const npu_anchor *a,
		       npu_detection *d)
{
	const float *b = r + o->box_coord_offset;
	float x, y, w, h, xc, yc;

	if (o->reverse_output_order) {
		x = b[0], y = b[1], w = b[2], h = b[3];
	} else {
		y = b[0], x = b[1], h = b[2], w = b[3];
	}
	xc = x / o->x_scale * a->w + a->x_center;
	yc = y / o->y_scale * a->h + a->y_center;
	if (o->apply_exponential_on_box_size) {
		w = expf(w / o->w_scale) * a->w;
		h = expf(h / o->h_scale) * a->h;
	} else {
		w = w / o->w_scale * a->w;
		h = h / o->h_scale * a->h;
	}
	d->xmin = xc - w * 0.5f;
	d->ymin = yc - h * 0.5f;
	d->xmax = xc + w * 0.5f;
	d->ymax = yc + h * 0.5f;

	d->num_keypoints = o->num_keypoints;
	for (int k = 0; k < NPU_DETECTION_MAX_KEYPOINTS; k++) {
		const float *p;

		if (k >= o->num_keypoints) {
			d->keypoints[k].x = 0.0f;
			d->keypoints[k].y = 0.0f;
			continue;
		}
		p = r + o->keypoint_coord_offset + k * o->num_values_per_keypoint;
		if (o->reverse_output_order)
			x = p[0], y = p[1];
		else
			y = p[0], x = p[1];
		d->keypoints[k].x = x / o->x_scale * a->w + a->x_center;
		d->keypoints[k].y = y / o->y_scale * a->h + a->y_center;
	}
}

npu_status npu_detections_decode(const npu_decode_options *opts,
				 const float *raw_boxes, const float *raw_scores,
				 const npu_anchor *anchors, size_t num_anchors,
				 npu_detection *out, size_t cap, size_t *count)
{
	const char *fn = "npu_detections_decode";
	size_t found = 0;
	npu_status st;

	if (!count)
		return npu_fail(NPU_ERR_INVALID_ARG, "%s: count is NULL", fn);
	*count = 0;
	if (!opts)
		return npu_fail(NPU_ERR_INVALID_ARG, "%s: opts is NULL", fn);
	st = check_options(opts);
	if (st != NPU_OK)
		return st;
	if (num_anchors > 0 && (!raw_boxes || !raw_scores || !anchors))
		return npu_fail(NPU_ERR_INVALID_ARG, "%s: %s is NULL with %zu anchors", fn,
				!raw_boxes ? "raw_boxes" : !raw_scores ? "raw_scores" : "anchors",
				num_anchors);
	if (!out && cap > 0)
		return npu_fail(NPU_ERR_INVALID_ARG, "%s: out is NULL with cap %zu", fn, cap);

	for (size_t i = 0; i < num_anchors; i++) {
		const float *s = raw_scores + i * (size_t)opts->num_classes;
		npu_detection d;
		float best = decode_score(opts, s[0]);
		int best_class = 0;

		for (int c = 1; c < opts->num_classes; c++) {
			float v = decode_score(opts, s[c]);

			if (v > best || (isnan(best) && !isnan(v))) {
				best = v;
				best_class = c;
			}
		}
		/* Written so that a NaN score is dropped too. */
		if (!(best >= opts->min_score_thresh))
			continue;
		decode_box(opts, raw_boxes + i * (size_t)opts->num_coords, &anchors[i], &d);
		if (d.xmax - d.xmin < 0.0f || d.ymax - d.ymin < 0.0f)
			continue;
		d.score = best;
		d.class_id = best_class;
		if (found < cap)
			out[found] = d;
		found++;
	}
	*count = found;
	return NPU_OK;
}
