// SPDX-License-Identifier: MIT
/* npu-run --detect (detect.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect.h"
#include "json.h"
#include "outputs.h"
#include "util.h"

#define BLAZEFACE_ANCHORS	896
#define BLAZEFACE_COORDS	16

int nr_detect_known(const char *name)
{
	return !strcmp(name, "blazeface");
}

/* The whole of output @i for element 0, as float32 (malloc'd). */
static int output_floats(const npu_model *model, npu_context *ctx, const char *dir, size_t i,
			 const npu_tensor_info *t, float **out)
{
	char name[256], path[4096];
	size_t bytes;
	void *buf;
	FILE *f;

	if (t->dtype != NPU_DTYPE_FLOAT32)
		return nr_fail(NR_EXIT_RUNTIME, "--detect: output '%s' is %s; a detector's outputs "
			       "are float32", t->name, npu_dtype_str(t->dtype));
	*out = malloc(t->bytes ? t->bytes : 1);
	if (!*out)	/* the caller frees *out on error too */
		return nr_fail(NR_EXIT_RUNTIME, "out of memory");
	if (ctx) {
		if (npu_context_output_buffer(ctx, i, &buf, &bytes) != NPU_OK || bytes != t->bytes)
			return nr_fail(NR_EXIT_RUNTIME, "--detect: %s", npu_last_error());
		memcpy(*out, buf, bytes);
		return 0;
	}
	(void)model;
	nr_sanitize_name(t->name, name, sizeof(name));
	snprintf(path, sizeof(path), "%s/%s.bin", dir, name);
	f = fopen(path, "rb");
	if (!f)
		return nr_fail(NR_EXIT_RUNTIME, "--detect-from: %s: %s; write it with --output-dir",
			       path, strerror(errno));
	bytes = fread(*out, 1, t->bytes, f);
	if (bytes != t->bytes || fgetc(f) != EOF) {
		fclose(f);
		return nr_fail(NR_EXIT_RUNTIME, "--detect-from: %s is not %zu bytes (float32 %s)",
			       path, t->bytes, t->name);
	}
	fclose(f);
	return 0;
}

int nr_detect_run(const npu_model *model, npu_context *ctx, const char *from_dir,
		  struct nr_detect *d)
{
	size_t nout = npu_model_output_count(model), ns = 0, nb = 0, cap, n = 0;
	float *scores = malloc(BLAZEFACE_ANCHORS * sizeof(float));
	float *boxes = malloc(BLAZEFACE_ANCHORS * BLAZEFACE_COORDS * sizeof(float));
	npu_anchor *anchors = malloc(BLAZEFACE_ANCHORS * sizeof(npu_anchor));
	npu_detection *raw = NULL;
	npu_anchor_options ao;
	npu_decode_options dopt;
	npu_nms_options nopt;
	npu_tensor_info in;
	int rc = 0;

	if (!scores || !boxes || !anchors) {
		rc = nr_fail(NR_EXIT_RUNTIME, "out of memory");
		goto out;
	}
	if (npu_model_input_info(model, 0, &in) == NPU_OK && in.rank == 4) {
		/* NHWC [1, H, W, 3] or NCHW [1, 3, H, W] */
		int c_last = in.dims[3] == 3;

		d->input_h = (unsigned)in.dims[c_last ? 1 : 2];
		d->input_w = (unsigned)in.dims[c_last ? 2 : 3];
	}
	/* Score outputs end in 1, box outputs in 16; anchors in output order. */
	for (size_t i = 0; i < nout && !rc; i++) {
		npu_tensor_info t;
		int64_t last, rows;
		float *v = NULL;

		npu_model_output_info(model, i, &t);
		last = t.rank ? t.dims[t.rank - 1] : 1;
		rows = last ? (int64_t)(t.bytes / 4) / last : 0;
		if (last != 1 && last != BLAZEFACE_COORDS)
			continue;
		if ((last == 1 ? ns : nb) + (size_t)rows > BLAZEFACE_ANCHORS) {
			rc = nr_fail(NR_EXIT_RUNTIME, "--detect blazeface: the outputs hold more than "
				     "%d anchors; is this MediaPipe's BlazeFace front model?",
				     BLAZEFACE_ANCHORS);
			break;
		}
		rc = output_floats(model, ctx, from_dir, i, &t, &v);
		if (!rc) {
			if (last == 1) {
				memcpy(scores + ns, v, (size_t)rows * 4);
				ns += (size_t)rows;
			} else {
				memcpy(boxes + nb * BLAZEFACE_COORDS, v, (size_t)rows * 64);
				nb += (size_t)rows;
			}
		}
		free(v);
	}
	if (!rc && (ns != BLAZEFACE_ANCHORS || nb != BLAZEFACE_ANCHORS))
		rc = nr_fail(NR_EXIT_RUNTIME, "--detect blazeface: the outputs hold %zu scores and "
			     "%zu boxes; MediaPipe's BlazeFace front model has %d of each",
			     ns, nb, BLAZEFACE_ANCHORS);
	if (rc)
		goto out;
	npu_anchor_options_blazeface_front(&ao);
	npu_decode_options_blazeface_front(&dopt);
	dopt.min_score_thresh = d->threshold;
	npu_nms_options_init(&nopt);
	cap = BLAZEFACE_ANCHORS;
	raw = malloc(cap * sizeof(*raw));
	d->det = malloc(cap * sizeof(*d->det));
	if (!raw || !d->det) {
		rc = nr_fail(NR_EXIT_RUNTIME, "out of memory");
		goto out;
	}
	if (npu_anchors_generate(&ao, anchors, BLAZEFACE_ANCHORS, &n) != NPU_OK ||
	    n != BLAZEFACE_ANCHORS ||
	    npu_detections_decode(&dopt, boxes, scores, anchors, n, raw, cap, &n) != NPU_OK ||
	    npu_nms(&nopt, raw, n, d->det, cap, &d->n) != NPU_OK)
		rc = nr_fail(NR_EXIT_RUNTIME, "--detect: %s", npu_last_error());
out:
	free(scores);
	free(boxes);
	free(anchors);
	free(raw);
	return rc;
}

void nr_detect_free(struct nr_detect *d)
{
	free(d->det);
	d->det = NULL;
	d->n = 0;
}

void nr_detect_print_text(const struct nr_detect *d)
{
	unsigned w = d->image ? d->image_w : d->input_w, h = d->image ? d->image_h : d->input_h;

	if (d->image)
		printf("%-12s%zu face%s (score >= %.2f, weighted NMS), pixels of the %ux%u "
		       "picture:\n", "detect", d->n, d->n == 1 ? "" : "s", d->threshold, w, h);
	else
		printf("%-12s%zu face%s (score >= %.2f, weighted NMS), pixels of the %ux%u "
		       "input:\n", "detect", d->n, d->n == 1 ? "" : "s", d->threshold, w, h);
	for (size_t i = 0; i < d->n; i++) {
		const npu_detection *x = &d->det[i];

		printf("  face %2zu  score %.4f  x %.1f-%.1f  y %.1f-%.1f\n", i + 1, x->score,
		       x->xmin * w, x->xmax * w, x->ymin * h, x->ymax * h);
	}
}

/* One line, compact: the --detect-only output scripts read. */
static void json_detections(struct json_writer *j, const struct nr_detect *d)
{
	json_begin_object(j, "detect");
	json_string(j, "detector", "blazeface");
	json_double(j, "threshold", d->threshold, 6);
	json_u64(j, "input_width", d->input_w);
	json_u64(j, "input_height", d->input_h);
	json_begin_array(j, "detections");
	for (size_t i = 0; i < d->n; i++) {
		const npu_detection *x = &d->det[i];

		json_begin_object(j, NULL);
		json_double(j, "score", x->score, 9);
		json_double(j, "xmin", x->xmin, 9);
		json_double(j, "ymin", x->ymin, 9);
		json_double(j, "xmax", x->xmax, 9);
		json_double(j, "ymax", x->ymax, 9);
		json_begin_array(j, "keypoints");
		for (int k = 0; k < x->num_keypoints; k++) {
			json_begin_array(j, NULL);
			json_double(j, NULL, x->keypoints[k].x, 9);
			json_double(j, NULL, x->keypoints[k].y, 9);
			json_end_array(j);
		}
		json_end_array(j);
		json_end_object(j);
	}
	json_end_array(j);
	json_end_object(j);
}

void nr_detect_print_only(const struct nr_detect *d, const char *model, int json)
{
	struct json_writer j;

	if (!json) {
		printf("%-12s%s\n", "model", model);
		nr_detect_print_text(d);
		return;
	}
	json_init(&j, stdout, JSON_COMPACT);
	json_begin_object(&j, NULL);
	json_string(&j, "model", model);
	json_detections(&j, d);
	if (d->draw)
		json_string(&j, "draw", d->draw);	/* the user's --draw path */
	json_end_object(&j);
}
