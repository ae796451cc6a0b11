// SPDX-License-Identifier: MIT
/*
 * classify: run an image classifier once and print its K best classes.
 *
 *   classify MODEL.onnx INPUT.raw LABELS.txt [K]
 *
 * INPUT.raw is the model's first input as raw bytes of its type (float32
 * for most classifiers: numpy's a.astype('float32').tofile()).  This is all
 * an application needs: open a device, load a model, run it, read an
 * output, rank it with the post-processing helpers, free everything.
 *
 *   cc classify.c $(pkg-config --cflags --libs npu) -o classify
 */
#include <npu.h>
#include <stdio.h>
#include <stdlib.h>

/* Every libnpu call returns a status; npu_last_error() says what to do. */
static int check(npu_status s, const char *what)
{
	if (s != NPU_OK)
		fprintf(stderr, "classify: %s: %s: %s\n", what, npu_status_str(s), npu_last_error());
	return s != NPU_OK;
}

/* The whole of @path in a new buffer whose size must be @want bytes. */
static void *read_input(const char *path, size_t want)
{
	FILE *f = fopen(path, "rb");
	char *buf = malloc(want + 1);
	size_t got = f && buf ? fread(buf, 1, want + 1, f) : 0;

	if (f)
		fclose(f);
	if (got == want)
		return buf;
	fprintf(stderr, "classify: %s: %s; the model's input takes %zu bytes\n", path,
		!f ? "cannot open it" : "wrong size", want);
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	npu_device *dev = NULL;
	npu_model *model = NULL;
	npu_context *ctx = NULL;
	npu_labels *labels = NULL;
	npu_tensor_info in_info, out_info;
	npu_tensor in;
	npu_top_k_entry best[10];
	int64_t k = argc > 4 ? atoi(argv[4]) : 3, n = 0;
	void *input = NULL, *scores;
	size_t bytes;
	int failed = 1;

	if (argc < 4 || k < 1 || k > 10) {
		fprintf(stderr, "usage: classify MODEL.onnx INPUT.raw LABELS.txt [K, 1 to 10]\n");
		return 2;
	}
	if (check(npu_device_open(NULL, &dev), "open a device") ||
	    check(npu_model_load_file(argv[1], dev, NULL, &model), argv[1]) ||
	    check(npu_model_input_info(model, 0, &in_info), "input 0") ||
	    check(npu_model_output_info(model, 0, &out_info), "output 0") ||
	    check(npu_labels_load(argv[3], &labels), argv[3]))
		goto out;
	if (out_info.dtype != NPU_DTYPE_FLOAT32) {
		fprintf(stderr, "classify: output '%s' is %s, not float32 scores\n", out_info.name,
			npu_dtype_str(out_info.dtype));
		goto out;
	}
	input = read_input(argv[2], in_info.bytes);
	if (!input)
		goto out;
	in = (npu_tensor){ in_info.name, in_info.dtype, input, in_info.bytes };

	/* One run; the outputs stay in the context's buffers, read in place. */
	if (check(npu_context_create(dev, model, 0, &ctx), "create a context") ||
	    check(npu_run(ctx, &in, 1, NULL, 0), "run") ||
	    check(npu_context_output_buffer(ctx, 0, &scores, &bytes), "output 0") ||
	    check(npu_top_k(scores, (int64_t)(out_info.bytes / sizeof(float)), k, labels, best,
			    &n), "top-k"))
		goto out;
	for (int64_t i = 0; i < n; i++)
		printf("%lld. class %lld %.6f %s\n", (long long)i + 1, (long long)best[i].index,
		       best[i].score, best[i].label ? best[i].label : "");
	failed = 0;
out:
	/* Each free accepts NULL: one exit path frees what was made. */
	free(input);
	npu_context_destroy(ctx);
	npu_model_free(model);
	npu_device_close(dev);
	npu_labels_free(labels);
	return failed;
}
