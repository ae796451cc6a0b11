/* SPDX-License-Identifier: MIT */
/*
 * libnpu post-processing: what an application does with a model's output
 * tensors once a job has finished.  All of it runs on the host CPU and
 * needs no device.
 *
 * - softmax over the last axis;
 * - top-k of a score vector, optionally with class labels read from a
 *   text file (npu_labels);
 * - quantize / dequantize between float32 and uint8/int8;
 * - SSD-style detectors (MediaPipe BlazeFace and the like): anchor
 *   generation, decoding of raw box regressors and score logits into
 *   npu_detection boxes, and non-maximum suppression (weighted, as
 *   MediaPipe's BlazeFace graph uses it, or plain hard NMS).
 *
 * Sizes
 * - Tensor element counts (softmax, top-k, quantization) are int64_t like
 *   npu_tensor_info.dims; a negative count is NPU_ERR_INVALID_ARG.
 * - Counts of structs (anchors, detections, labels) are size_t.  Calls
 *   that produce a list take a caller array and its capacity @cap, fill
 *   up to @cap entries and set *@count to how many there are in all, as
 *   npu_device_list() does: pass cap 0 (array may then be NULL) to ask
 *   for the count.
 * - A data pointer may be NULL only when its element count is 0.
 *
 * Every function returning npu_status sets npu_last_error() on failure.
 * None of them keeps a pointer to caller memory after it returns.
 *
 * This header includes npu.h and is included by it; either may come first.
 */
#ifndef NPU_POST_H
#define NPU_POST_H

#include "npu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Softmax ---- */

/*
 * Softmax over the last axis of a float32 tensor seen as @rows rows of
 * @cols values: out[r][i] = exp(x[r][i] - m) / sum_j exp(x[r][j] - m),
 * m the row's maximum, so large logits cannot overflow.  A row holding a
 * NaN becomes all NaN; a row whose maximum is +inf shares 1 between its
 * +inf entries; a row of only -inf becomes uniform.
 *
 * @out may be @in (in place); otherwise the two must not overlap.
 * Errors: NPU_ERR_INVALID_ARG for a NULL pointer with a non-empty tensor,
 * a negative @rows or @cols, or rows * cols overflowing.
 */
NPU_API npu_status npu_softmax(const float *in, float *out, int64_t rows, int64_t cols);

/* ---- Labels ---- */

/* Class labels, one per line of a text file; index i is line i (from 0). */
typedef struct npu_labels npu_labels;

/*
 * Load labels from the text file @path: one label per line, taken
 * verbatim except for the line ending ("\n" or "\r\n") and a UTF-8 byte
 * order mark at the start of the file.  Empty lines are kept as empty
 * labels so that line numbers stay class indices; a final newline does
 * not add an empty label.  An empty file gives an empty set.
 *
 * On success *@out owns a handle to free with npu_labels_free().
 * Errors: NPU_ERR_INVALID_ARG (NULL @path or @out), NPU_ERR_IO (the file
 * cannot be opened or read; the message names @path), NPU_ERR_NO_MEMORY.
 */
NPU_API npu_status npu_labels_load(const char *path, npu_labels **out);
/* Free a label set; NULL is allowed. */
NPU_API void npu_labels_free(npu_labels *labels);
/* Number of labels; 0 for NULL. */
NPU_API size_t npu_labels_count(const npu_labels *labels);
/* Label @index, NUL-terminated, owned by @labels; NULL when @labels is
 * NULL or @index >= npu_labels_count(). */
NPU_API const char *npu_labels_get(const npu_labels *labels, size_t index);

/* ---- Top-k ---- */

typedef struct npu_top_k_entry {
	int64_t index;		/* position in the score vector */
	float score;		/* scores[index] */
	const char *label;	/* npu_labels_get(labels, index); NULL if none */
} npu_top_k_entry;

/*
 * The min(@k, @n) best entries of @scores[@n], best first.  Higher scores
 * rank first; equal scores rank by lower index; NaN ranks below every
 * number (NaNs among themselves by index).  @k is clamped to @n.
 *
 * @labels is optional: when given, each entry's label points into it (so
 * stays valid as long as @labels) or is NULL if the set has fewer labels
 * than the index needs.  @out must hold min(@k, @n) entries; *@count is
 * set to that number.  Runs in O(n log k) time without allocating.
 *
 * Errors: NPU_ERR_INVALID_ARG for a NULL @count, a NULL @scores or @out
 * while they must hold entries, or a negative @n or @k.
 */
NPU_API npu_status npu_top_k(const float *scores, int64_t n, int64_t k,
			     const npu_labels *labels, npu_top_k_entry *out,
			     int64_t *count);

/* ---- Quantization ---- */

/*
 * real = scale * (q - zero_point) (the convention of npu_tensor_info and
 * of ONNX DequantizeLinear) for @n elements of @in, whose type @dtype is
 * NPU_DTYPE_UINT8 or NPU_DTYPE_INT8, into the float32 array @out.
 *
 * @in and @out must not overlap.  Errors: NPU_ERR_INVALID_ARG for another
 * @dtype, a @scale that is not finite and > 0, a @zero_point outside
 * @dtype's range, a negative @n or a NULL buffer with @n > 0.
 */
NPU_API npu_status npu_dequantize(npu_dtype dtype, const void *in, float *out, int64_t n,
				  float scale, int32_t zero_point);

/*
 * q = saturate(round(real / scale) + zero_point) (ONNX QuantizeLinear):
 * the division is done in float32, round() goes half to even whatever
 * the floating-point rounding mode, saturate() clamps to the range of
 * @dtype (0..255 for NPU_DTYPE_UINT8, -128..127 for NPU_DTYPE_INT8),
 * so +/-inf saturate; NaN maps to @zero_point (the code of 0.0).
 *
 * @in and @out must not overlap.  Errors: as npu_dequantize().
 */
NPU_API npu_status npu_quantize(npu_dtype dtype, const float *in, void *out, int64_t n,
				float scale, int32_t zero_point);

/* ---- SSD anchors ---- */

#define NPU_ANCHOR_MAX_LAYERS 16
#define NPU_ANCHOR_MAX_ASPECT_RATIOS 8

/* One anchor (prior box), normalized to the model input: 0..1. */
typedef struct npu_anchor {
	float x_center, y_center;
	float w, h;
} npu_anchor;

/*
 * Anchor generation parameters; they mirror the options of MediaPipe's
 * SsdAnchorsCalculator, so a graph's values can be copied over.
 */
typedef struct npu_anchor_options {
	size_t struct_size;		/* sizeof(npu_anchor_options) */
	int num_layers;			/* feature maps, <= NPU_ANCHOR_MAX_LAYERS */
	float min_scale, max_scale;	/* anchor scale of the first/last layer */
	int input_width, input_height;	/* model input, pixels */
	float anchor_offset_x;		/* cell center offset, default 0.5 */
	float anchor_offset_y;
	/* Stride of each layer (num_layers entries).  Consecutive layers of
	 * equal stride share one feature map and interleave their anchors. */
	int strides[NPU_ANCHOR_MAX_LAYERS];
	/* Explicit feature-map sizes per layer; when num_feature_maps is 0
	 * (default) they are ceil(input / stride). */
	int num_feature_maps;		/* 0 or num_layers */
	int feature_map_width[NPU_ANCHOR_MAX_LAYERS];
	int feature_map_height[NPU_ANCHOR_MAX_LAYERS];
	int num_aspect_ratios;		/* >= 0, <= NPU_ANCHOR_MAX_ASPECT_RATIOS */
	float aspect_ratios[NPU_ANCHOR_MAX_ASPECT_RATIOS];	/* w / h */
	/* Non-zero: layer 0 uses three fixed anchors (scale 0.1 ratio 1,
	 * then ratios 2 and 0.5 at the layer's scale). */
	int reduce_boxes_in_lowest_layer;
	/* > 0: one more anchor per layer with this aspect ratio and the
	 * geometric mean of this layer's and the next layer's scale. */
	float interpolated_scale_aspect_ratio;	/* default 1.0 */
	/* Non-zero: every anchor has w = h = 1 (the model regresses sizes
	 * directly, as BlazeFace does). */
	int fixed_anchor_size;
} npu_anchor_options;

/* MediaPipe's defaults: struct_size set, num_layers 0 (to be filled in),
 * offsets 0.5, interpolated_scale_aspect_ratio 1.0, everything else 0.
 * NULL is ignored. */
NPU_API void npu_anchor_options_init(npu_anchor_options *opts);
/* The MediaPipe BlazeFace front (short range) model: 128x128 input,
 * 4 layers, strides 8, 16, 16, 16, scales 0.1484375..0.75, aspect ratio
 * 1.0 plus the interpolated one, fixed anchor size: 16*16*2 + 8*8*6 = 896
 * anchors.  NULL is ignored. */
NPU_API void npu_anchor_options_blazeface_front(npu_anchor_options *opts);

/*
 * Generate the anchors @opts describe, in the order the model's outputs
 * use: layer group by layer group, then row, column and anchor within
 * the cell.  Fills up to @cap anchors and sets *@count to the total.
 *
 * Errors: NPU_ERR_INVALID_ARG for NULL @opts or @count, NULL @anchors
 * with @cap > 0, a struct_size smaller than this library's
 * npu_anchor_options, or an out-of-range option (num_layers not in
 * 1..NPU_ANCHOR_MAX_LAYERS, a stride, input or feature map size <= 0,
 * a negative or non-finite scale or aspect ratio, ...).
 */
NPU_API npu_status npu_anchors_generate(const npu_anchor_options *opts, npu_anchor *anchors,
					size_t cap, size_t *count);

/* ---- Detections ---- */

#define NPU_DETECTION_MAX_KEYPOINTS 8

typedef struct npu_keypoint {
	float x, y;			/* normalized */
} npu_keypoint;

/*
 * One detected object.  Coordinates are normalized to the model input
 * (0,0 top left, 1,1 bottom right); they are not clipped, so a box may
 * reach slightly past an edge.  Multiply by the image size for pixels.
 */
typedef struct npu_detection {
	float xmin, ymin, xmax, ymax;
	float score;			/* 0..1 after the sigmoid */
	int class_id;			/* best class; 0 for single-class models */
	int num_keypoints;		/* BlazeFace: 6 */
	/* BlazeFace order: right eye, left eye, nose tip, mouth center,
	 * right ear tragion, left ear tragion (as seen by the subject). */
	npu_keypoint keypoints[NPU_DETECTION_MAX_KEYPOINTS];
} npu_detection;

/*
 * How to decode raw regressors and scores; mirrors MediaPipe's
 * TensorsToDetectionsCalculator options.
 */
typedef struct npu_decode_options {
	size_t struct_size;		/* sizeof(npu_decode_options) */
	int num_classes;		/* score columns per anchor, >= 1 */
	int num_coords;			/* regressor values per anchor (BlazeFace 16) */
	int box_coord_offset;		/* where the 4 box values start (0) */
	int keypoint_coord_offset;	/* where the keypoints start (4) */
	int num_keypoints;		/* 0..NPU_DETECTION_MAX_KEYPOINTS (6) */
	int num_values_per_keypoint;	/* >= 2; the first two are used (2) */
	/* Box regressors are in input pixels relative to the anchor:
	 * divide by these to normalize (BlazeFace: 128 each). */
	float x_scale, y_scale, w_scale, h_scale;
	/* Non-zero: box values are x, y, w, h and keypoints x, y (BlazeFace);
	 * zero: y, x, h, w and y, x (TensorFlow object detection). */
	int reverse_output_order;
	/* Non-zero: sizes are exp(v / scale) * anchor size, else linear. */
	int apply_exponential_on_box_size;
	int sigmoid_score;		/* non-zero: scores are logits */
	/* > 0: logits are clamped to +/- this before the sigmoid (100). */
	float score_clipping_thresh;
	/* Detections scoring below this are dropped (BlazeFace 0.5). */
	float min_score_thresh;
} npu_decode_options;

/* Neutral defaults: struct_size set, num_classes 1, num_coords 4,
 * scales 1, sigmoid off, no thresholds.  NULL is ignored. */
NPU_API void npu_decode_options_init(npu_decode_options *opts);
/* MediaPipe's BlazeFace front settings: 1 class, 16 coords, keypoints at
 * 4, 6 keypoints of 2 values, scales 128, x-first order, linear sizes,
 * sigmoid scores clipped at 100, min_score_thresh 0.5.  NULL is ignored. */
NPU_API void npu_decode_options_blazeface_front(npu_decode_options *opts);

/*
 * Decode a detector's raw outputs.  @raw_boxes is [@num_anchors,
 * num_coords] float32, @raw_scores [@num_anchors, num_classes] float32,
 * row i belonging to @anchors[i] (from npu_anchors_generate()).  Each
 * anchor whose best class score reaches min_score_thresh, and whose box
 * does not come out with a negative width or height, gives one
 * detection, in anchor order.  Fills up to @cap detections and sets
 * *@count to how many passed.
 *
 * Errors: NPU_ERR_INVALID_ARG for NULL @opts or @count, NULL arrays with
 * @num_anchors (or @cap) > 0, a small struct_size, or options out of
 * range (offsets past num_coords, zero or non-finite scales, too many
 * keypoints, ...).
 */
NPU_API npu_status npu_detections_decode(const npu_decode_options *opts,
					 const float *raw_boxes, const float *raw_scores,
					 const npu_anchor *anchors, size_t num_anchors,
					 npu_detection *out, size_t cap, size_t *count);

/* ---- Non-maximum suppression ---- */

typedef enum npu_nms_algorithm {
	/* MediaPipe's WEIGHTED: the best remaining detection and every
	 * remaining one overlapping it by more than the threshold form a
	 * cluster; the output is the best one with its box and keypoints
	 * replaced by the score-weighted mean over the cluster.  Used by
	 * the BlazeFace graphs. */
	NPU_NMS_WEIGHTED = 0,
	/* Classic greedy NMS: keep a detection unless it overlaps an
	 * already kept one by more than the threshold. */
	NPU_NMS_HARD = 1,
} npu_nms_algorithm;

typedef struct npu_nms_options {
	size_t struct_size;		/* sizeof(npu_nms_options) */
	npu_nms_algorithm algorithm;	/* default NPU_NMS_WEIGHTED */
	/* Two detections overlap when their intersection over union is
	 * strictly greater than this (MediaPipe's comparison): 0..1,
	 * default 0.3 (BlazeFace). */
	float iou_threshold;
	/* > 0: stop at the first (best remaining) detection scoring below
	 * this; default 0 (none). */
	float min_score_thresh;
	/* Output at most this many detections; < 0 (default): no limit. */
	int max_detections;
} npu_nms_options;

/* BlazeFace's NMS settings: weighted, IoU threshold 0.3, no score
 * threshold, no limit.  NULL is ignored. */
NPU_API void npu_nms_options_init(npu_nms_options *opts);

/*
 * Non-maximum suppression over @in[@n], regardless of class_id.  The
 * detections are visited by decreasing score (equal scores: lower index
 * first), so the output is sorted by score.  Overlap is the intersection
 * over union of the boxes (0 when either box has no area).  Weighted NMS
 * keeps each cluster's best score and class; a cluster whose scores sum
 * to <= 0 keeps its best detection unchanged.
 *
 * Fills up to @cap detections into @out and sets *@count to how many
 * there are; @out may be @in (in place), else they must not overlap.
 * Errors: NPU_ERR_INVALID_ARG for NULL @opts or @count, NULL arrays with
 * @n (or @cap) > 0, a small struct_size, an unknown algorithm or an
 * iou_threshold outside 0..1 (or NaN); NPU_ERR_NO_MEMORY.
 */
NPU_API npu_status npu_nms(const npu_nms_options *opts, const npu_detection *in, size_t n,
			   npu_detection *out, size_t cap, size_t *count);

#ifdef __cplusplus
}
#endif

#endif /* NPU_POST_H */
