// SPDX-License-Identifier: MIT
/*
 * SSD anchor (prior box) generation (npu_post.h).
 *
 * This follows the algorithm of MediaPipe's SsdAnchorsCalculator
 * (mediapipe/calculators/tflite/ssd_anchors_calculator.cc), which is what
 * the BlazeFace, palm and SSD graphs use to build the anchors their
 * models were trained with.  Restated:
 *
 * - Layer i of L = num_layers has the scale
 *       s(i) = min_scale + (max_scale - min_scale) * i / (L - 1)
 *   (the mean of min and max when L == 1).
 * - Consecutive layers with the same stride share one feature map; the
 *   group's per-cell anchor list is the concatenation, layer by layer,
 *   of:
 *     * normally, one anchor per aspect ratio a at scale s(i), then, if
 *       interpolated_scale_aspect_ratio r > 0, one anchor of ratio r at
 *       scale sqrt(s(i) * s(i + 1)), with s(L) taken as 1;
 *     * for layer 0 with reduce_boxes_in_lowest_layer: (0.1, ratio 1),
 *       (s(0), ratio 2), (s(0), ratio 0.5).
 *   An anchor of scale s and ratio a is w = s * sqrt(a), h = s / sqrt(a)
 *   (a is width over height).
 * - The group's feature map is ceil(input / stride) cells in each
 *   direction, unless explicit feature-map sizes are given (those of the
 *   group's first layer are used).  Cell (x, y) of a W x H map has the
 *   center ((x + anchor_offset_x) / W, (y + anchor_offset_y) / H).
 * - Anchors are emitted group by group, row by row, column by column,
 *   and in the cell's list order; with fixed_anchor_size every w and h
 *   is 1.
 *
 * BlazeFace front: 4 layers, strides 8, 16, 16, 16, ratio 1 plus the
 * interpolated one: a 16x16 map with 2 anchors per cell, then 8x8 with
 * 3 * 2 = 6: 512 + 384 = 896 anchors.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "npu_internal.h"
#include "npu_post.h"

/*
 * The smallest struct_size accepted.  When fields are added to
 * npu_anchor_options, freeze this at the old size and give the new
 * fields their defaults for callers passing less.
 */
#define ANCHOR_OPTIONS_MIN_SIZE sizeof(npu_anchor_options)

/* Most anchors one cell can get: per layer, every ratio plus one. */
#define MAX_CELL_ANCHORS (NPU_ANCHOR_MAX_LAYERS * (NPU_ANCHOR_MAX_ASPECT_RATIOS + 3))

void npu_anchor_options_init(npu_anchor_options *opts)
{
	if (!opts)
		return;
	*opts = (npu_anchor_options){
		.struct_size = sizeof(*opts),
		.anchor_offset_x = 0.5f,
		.anchor_offset_y = 0.5f,
		.interpolated_scale_aspect_ratio = 1.0f,
	};
}

void npu_anchor_options_blazeface_front(npu_anchor_options *opts)
{
	if (!opts)
		return;
	npu_anchor_options_init(opts);
	/* Values of MediaPipe's face_detection_short_range graph. */
	opts->num_layers = 4;
	opts->min_scale = 0.1484375f;
	opts->max_scale = 0.75f;
	opts->input_width = 128;
	opts->input_height = 128;
	opts->strides[0] = 8;
	opts->strides[1] = 16;
	opts->strides[2] = 16;
	opts->strides[3] = 16;
	opts->num_aspect_ratios = 1;
	opts->aspect_ratios[0] = 1.0f;
	opts->fixed_anchor_size = 1;
}

static float layer_scale(const npu_anchor_options *o, int layer)
{
	if (o->num_layers == 1)
		return (o->min_scale + o->max_scale) * 0.5f;
	return o->min_scale + (o->max_scale - o->min_scale) * (float)layer /
	       (float)(o->num_layers - 1);
}

static bool finite_nonneg(float v)
{
	return isfinite(v) && v >= 0.0f;
}

static npu_status check_options(const npu_anchor_options *o)
{
	const char *fn = "npu_anchors_generate";

	if (o->struct_size < ANCHOR_OPTIONS_MIN_SIZE)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"%s: options struct_size %zu is less than %zu: initialise them with npu_anchor_options_init()",
				fn, o->struct_size, ANCHOR_OPTIONS_MIN_SIZE);
	if (o->num_layers < 1 || o->num_layers > NPU_ANCHOR_MAX_LAYERS)
		return npu_fail(NPU_ERR_INVALID_ARG, "%s: num_layers %d is not in 1..%d", fn,
				o->num_layers, NPU_ANCHOR_MAX_LAYERS);
	if (!finite_nonneg(o->min_scale) || !finite_nonneg(o->max_scale))
		return npu_fail(NPU_ERR_INVALID_ARG,
				"%s: min_scale %g and max_scale %g must be finite and >= 0", fn,
				(double)o->min_scale, (double)o->max_scale);
	if (o->input_width <= 0 || o->input_height <= 0)
		return npu_fail(NPU_ERR_INVALID_ARG, "%s: input size %dx%d is not positive", fn,
				o->input_width, o->input_height);
	if (!isfinite(o->anchor_offset_x) || !isfinite(o->anchor_offset_y))
		return npu_fail(NPU_ERR_INVALID_ARG, "%s: anchor offsets must be finite", fn);
	for (int i = 0; i < o->num_layers; i++)
		if (o->strides[i] <= 0)
			return npu_fail(NPU_ERR_INVALID_ARG, "%s: strides[%d] = %d is not positive",
					fn, i, o->strides[i]);
	if (o->num_feature_maps != 0 && o->num_feature_maps != o->num_layers)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"%s: num_feature_maps %d must be 0 or num_layers (%d)", fn,
				o->num_feature_maps, o->num_layers);
	for (int i = 0; i < o->num_feature_maps; i++)
		if (o->feature_map_width[i] <= 0 || o->feature_map_height[i] <= 0)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"%s: feature map %d size %dx%d is not positive", fn, i,
					o->feature_map_width[i], o->feature_map_height[i]);
	if (o->num_aspect_ratios < 0 || o->num_aspect_ratios > NPU_ANCHOR_MAX_ASPECT_RATIOS)
		return npu_fail(NPU_ERR_INVALID_ARG, "%s: num_aspect_ratios %d is not in 0..%d", fn,
				o->num_aspect_ratios, NPU_ANCHOR_MAX_ASPECT_RATIOS);
	for (int i = 0; i < o->num_aspect_ratios; i++)
		if (!(isfinite(o->aspect_ratios[i]) && o->aspect_ratios[i] > 0.0f))
			return npu_fail(NPU_ERR_INVALID_ARG,
					"%s: aspect_ratios[%d] = %g must be finite and > 0", fn, i,
					(double)o->aspect_ratios[i]);
	if (!finite_nonneg(o->interpolated_scale_aspect_ratio))
		return npu_fail(NPU_ERR_INVALID_ARG,
				"%s: interpolated_scale_aspect_ratio %g must be finite and >= 0", fn,
				(double)o->interpolated_scale_aspect_ratio);
	return NPU_OK;
}

npu_status npu_anchors_generate(const npu_anchor_options *opts, npu_anchor *anchors,
				size_t cap, size_t *count)
{
	size_t total = 0;
	npu_status st;

	if (!count)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_anchors_generate: count is NULL");
	*count = 0;
	if (!opts)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_anchors_generate: opts is NULL");
	if (!anchors && cap > 0)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"npu_anchors_generate: anchors is NULL with cap %zu", cap);
	st = check_options(opts);
	if (st != NPU_OK)
		return st;

	for (int layer = 0; layer < opts->num_layers;) {
		float cell_w[MAX_CELL_ANCHORS], cell_h[MAX_CELL_ANCHORS];
		int per_cell = 0, next, map_w, map_h;
		uint64_t group;

		/* Collect the cell's anchors over the layers of this stride. */
		for (next = layer; next < opts->num_layers &&
		     opts->strides[next] == opts->strides[layer]; next++) {
			float scale = layer_scale(opts, next);
			float ratios[NPU_ANCHOR_MAX_ASPECT_RATIOS + 3], scales[NPU_ANCHOR_MAX_ASPECT_RATIOS + 3];
			int m = 0;

			if (next == 0 && opts->reduce_boxes_in_lowest_layer) {
				ratios[m] = 1.0f, scales[m++] = 0.1f;
				ratios[m] = 2.0f, scales[m++] = scale;
				ratios[m] = 0.5f, scales[m++] = scale;
			} else {
				for (int a = 0; a < opts->num_aspect_ratios; a++)
					ratios[m] = opts->aspect_ratios[a], scales[m++] = scale;
				if (opts->interpolated_scale_aspect_ratio > 0.0f) {
					float scale_next = next == opts->num_layers - 1 ?
							   1.0f : layer_scale(opts, next + 1);

					ratios[m] = opts->interpolated_scale_aspect_ratio;
					scales[m++] = sqrtf(scale * scale_next);
				}
			}
			for (int i = 0; i < m; i++) {
				float r = sqrtf(ratios[i]);

				cell_w[per_cell] = scales[i] * r;
				cell_h[per_cell++] = scales[i] / r;
			}
		}

		if (opts->num_feature_maps) {
			map_w = opts->feature_map_width[layer];
			map_h = opts->feature_map_height[layer];
		} else {
			/* ceil(input / stride) in integers. */
			map_w = (opts->input_width + opts->strides[layer] - 1) / opts->strides[layer];
			map_h = (opts->input_height + opts->strides[layer] - 1) / opts->strides[layer];
		}

		/* Only the first cap anchors are written; the rest are counted. */
		group = (uint64_t)map_w * (uint64_t)map_h * (uint64_t)per_cell;
		if (group > (uint64_t)(SIZE_MAX / sizeof(npu_anchor)) - total)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"npu_anchors_generate: the options give too many anchors");
		for (uint64_t i = 0; i < group && total + i < cap; i++) {
			npu_anchor *an = &anchors[total + i];
			int a = (int)(i % (uint64_t)per_cell);
			uint64_t cell = i / (uint64_t)per_cell;
			int x = (int)(cell % (uint64_t)map_w), y = (int)(cell / (uint64_t)map_w);

			an->x_center = ((float)x + opts->anchor_offset_x) / (float)map_w;
			an->y_center = ((float)y + opts->anchor_offset_y) / (float)map_h;
			an->w = opts->fixed_anchor_size ? 1.0f : cell_w[a];
			an->h = opts->fixed_anchor_size ? 1.0f : cell_h[a];
		}
		total += (size_t)group;
		layer = next;
	}
	*count = total;
	return NPU_OK;
}
