// SPDX-License-Identifier: MIT
/*
 * The C side of the Python tests (test_npu.py): one model run through
 * libnpu's C API on an input file, and the post-processing helpers on its
 * outputs, printed with hex floats (%a) so Python can compare bit for bit.
 *
 *   python-c-ref MODEL INPUT.raw OUTDIR [--labels FILE] [--blazeface]
 *
 * Writes OUTDIR/<output index>.bin (raw, the output's dtype) and prints:
 *   cycles N                      simulated cycles of the run
 *   topk INDEX SCORE LABEL        top 5 of output 0 (float32 models)
 *   softmax V...                  softmax of output 0 over its last axis
 *   quant B...                    output 0 quantized to uint8, scale 1/64, zero point 128
 *   dequant V...                  those bytes dequantized back
 *   det XMIN YMIN XMAX YMAX SCORE CLASS X Y ...   BlazeFace faces (--blazeface)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu.h"

static int fail(const char *what, npu_status s)
{
	fprintf(stderr, "python-c-ref: %s: %s (%s)\n", what, npu_last_error(), npu_status_str(s));
	return 1;
}

static int read_file(const char *path, void *buf, size_t bytes)
{
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(buf, 1, bytes, f) : 0;

	if (f)
		fclose(f);
	if (n != bytes) {
		fprintf(stderr, "python-c-ref: %s: not %zu bytes\n", path, bytes);
		return 1;
	}
	return 0;
}

static int write_file(const char *path, const void *buf, size_t bytes)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(buf, 1, bytes, f) == bytes;

	if (f && fclose(f))
		ok = 0;
	if (!ok)
		fprintf(stderr, "python-c-ref: cannot write %s\n", path);
	return !ok;
}

static void print_floats(const char *tag, const float *v, size_t n)
{
	printf("%s", tag);
	for (size_t i = 0; i < n; i++)
		printf(" %a", (double)v[i]);
	printf("\n");
}

/* Top-k, softmax and quantization of float32 output 0 (@n values, @cols per row). */
static int post_float(const float *v, size_t n, size_t cols, const char *labels_path)
{
	npu_labels *labels = NULL;
	npu_top_k_entry top[5];
	int64_t count = 0;
	float *sm = malloc(n * sizeof(float)), *back = malloc(n * sizeof(float));
	uint8_t *q = malloc(n);
	npu_status s;
	int rc = 1;

	if (!sm || !back || !q)
		goto out;
	if (labels_path && (s = npu_labels_load(labels_path, &labels)) != NPU_OK) {
		rc = fail("npu_labels_load", s);
		goto out;
	}
	if ((s = npu_top_k(v, (int64_t)n, 5, labels, top, &count)) != NPU_OK) {
		rc = fail("npu_top_k", s);
		goto out;
	}
	for (int64_t i = 0; i < count; i++)
		printf("topk %lld %a %s\n", (long long)top[i].index, (double)top[i].score,
		       top[i].label ? top[i].label : "-");
	if ((s = npu_softmax(v, sm, (int64_t)(n / cols), (int64_t)cols)) != NPU_OK) {
		rc = fail("npu_softmax", s);
		goto out;
	}
	print_floats("softmax", sm, n);
	if ((s = npu_quantize(NPU_DTYPE_UINT8, v, q, (int64_t)n, 1.0f / 64, 128)) != NPU_OK ||
	    (s = npu_dequantize(NPU_DTYPE_UINT8, q, back, (int64_t)n, 1.0f / 64, 128)) != NPU_OK) {
		rc = fail("npu_quantize", s);
		goto out;
	}
	printf("quant");
	for (size_t i = 0; i < n; i++)
		printf(" %u", q[i]);
	printf("\n");
	print_floats("dequant", back, n);
	rc = 0;
out:
	npu_labels_free(labels);
	free(sm);
	free(back);
	free(q);
	return rc;
}

/* BlazeFace: score outputs end in 1, box outputs in 16, in output order. */
static int post_blazeface(const npu_model *model, void **outs)
{
	enum { ANCHORS = 896, COORDS = 16 };
	static float scores[ANCHORS], boxes[ANCHORS * COORDS];
	static npu_anchor anchors[ANCHORS];
	static npu_detection raw[ANCHORS], det[ANCHORS];
	size_t ns = 0, nb = 0, n = 0, nd = 0;
	npu_anchor_options ao;
	npu_decode_options dopt;
	npu_nms_options nopt;
	npu_status s;

	for (size_t i = 0; i < npu_model_output_count(model); i++) {
		npu_tensor_info t;
		size_t vals;

		npu_model_output_info(model, i, &t);
		vals = t.bytes / 4;
		if (t.dims[t.rank - 1] == 1 && ns + vals <= ANCHORS) {
			memcpy(scores + ns, outs[i], t.bytes);
			ns += vals;
		} else if (t.dims[t.rank - 1] == COORDS && nb + vals <= ANCHORS * COORDS) {
			memcpy(boxes + nb, outs[i], t.bytes);
			nb += vals;
		}
	}
	if (ns != ANCHORS || nb != ANCHORS * COORDS) {
		fprintf(stderr, "python-c-ref: not BlazeFace's outputs\n");
		return 1;
	}
	npu_anchor_options_blazeface_front(&ao);
	npu_decode_options_blazeface_front(&dopt);
	npu_nms_options_init(&nopt);
	if ((s = npu_anchors_generate(&ao, anchors, ANCHORS, &n)) != NPU_OK ||
	    (s = npu_detections_decode(&dopt, boxes, scores, anchors, n, raw, ANCHORS, &n)) ||
	    (s = npu_nms(&nopt, raw, n, det, ANCHORS, &nd)))
		return fail("blazeface", s);
	printf("anchors");
	for (size_t i = 0; i < ANCHORS; i++)
		printf(" %a %a %a %a", (double)anchors[i].x_center, (double)anchors[i].y_center,
		       (double)anchors[i].w, (double)anchors[i].h);
	printf("\nraw %zu\n", n);
	for (size_t i = 0; i < nd; i++) {
		const npu_detection *d = &det[i];

		printf("det %a %a %a %a %a %d", (double)d->xmin, (double)d->ymin, (double)d->xmax,
		       (double)d->ymax, (double)d->score, d->class_id);
		for (int k = 0; k < d->num_keypoints; k++)
			printf(" %a %a", (double)d->keypoints[k].x, (double)d->keypoints[k].y);
		printf("\n");
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *labels = NULL;
	int blazeface = 0, rc = 1;
	npu_device *dev = NULL;
	npu_model *model = NULL;
	npu_context *ctx = NULL;
	npu_tensor in = { 0 }, out[16];
	void *outs[16] = { 0 };
	npu_tensor_info ii, oi;
	npu_run_stats st;
	size_t nout;
	npu_status s;

	for (int i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "--labels") && i + 1 < argc)
			labels = argv[++i];
		else if (!strcmp(argv[i], "--blazeface"))
			blazeface = 1;
		else
			argc = 0;
	}
	if (argc < 4) {
		fprintf(stderr, "usage: python-c-ref MODEL INPUT.raw OUTDIR [--labels FILE] "
			"[--blazeface]\n");
		return 2;
	}
	if ((s = npu_device_open(NULL, &dev)) != NPU_OK)
		return fail("npu_device_open", s);
	if ((s = npu_model_load_file(argv[1], dev, NULL, &model)) != NPU_OK) {
		rc = fail("npu_model_load_file", s);
		goto out;
	}
	nout = npu_model_output_count(model);
	if (npu_model_input_count(model) != 1 || nout > 16 ||
	    npu_model_input_info(model, 0, &ii) != NPU_OK) {
		fprintf(stderr, "python-c-ref: one input and at most 16 outputs\n");
		goto out;
	}
	in.dtype = ii.dtype;
	in.bytes = ii.bytes;
	in.data = malloc(ii.bytes);
	if (!in.data || read_file(argv[2], in.data, ii.bytes))
		goto out;
	for (size_t i = 0; i < nout; i++) {
		npu_model_output_info(model, i, &oi);
		out[i] = (npu_tensor){ .dtype = oi.dtype, .bytes = oi.bytes };
		out[i].data = outs[i] = malloc(oi.bytes ? oi.bytes : 1);
		if (!outs[i])
			goto out;
	}
	if ((s = npu_context_create(dev, model, 0, &ctx)) != NPU_OK ||
	    (s = npu_run(ctx, &in, 1, out, nout)) != NPU_OK ||
	    (s = npu_context_last_run(ctx, &st)) != NPU_OK) {
		rc = fail("npu_run", s);
		goto out;
	}
	printf("cycles %llu\n", (unsigned long long)st.device_cycles);
	for (size_t i = 0; i < nout; i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%zu.bin", argv[3], i);
		if (write_file(path, outs[i], out[i].bytes))
			goto out;
	}
	npu_model_output_info(model, 0, &oi);
	if (oi.dtype == NPU_DTYPE_FLOAT32 &&
	    post_float(outs[0], oi.bytes / 4, (size_t)oi.dims[oi.rank - 1], labels))
		goto out;
	rc = blazeface ? post_blazeface(model, outs) : 0;
out:
	for (size_t i = 0; i < 16; i++)
		free(outs[i]);
	free(in.data);
	npu_context_destroy(ctx);
	npu_model_free(model);
	npu_device_close(dev);
	return rc;
}
