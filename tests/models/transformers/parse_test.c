// SPDX-License-Identifier: MIT
/*
 * The committed transformer test models through libnpu's ONNX front end
 * (make check-models): each file parses, with the opset its name says and
 * the inputs and outputs gen.py exported (names, element types, ranks,
 * symbolic batch and sequence dims; the decoders with past also their
 * position_ids and KV cache inputs and outputs).  Compilation is not asserted: the
 * compiler does not take transformers yet (issue 15), so what
 * npu_model_load_file() says is printed as a "#" line, information only.
 *
 * Usage: parse_test MODEL.onnx...   (names as NAME_opN.onnx)
 * Prints "N passed, N failed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu.h"
#include "onnx/npu_onnx.h"

/* What gen.py exports: "name:dtype:dims", -1 for a symbolic dim. */
struct io {
	const char *name;
	npu_dtype dtype;
	int rank;
	int64_t dims[4];
};

#define MAX_IN 7
#define MAX_OUT 5
struct expect {
	const char *model;
	struct io in[MAX_IN], out[MAX_OUT];
};

#define S64(n) { n, NPU_DTYPE_INT64, 2, { -1, -1 } }
/* A KV cache tensor of a decoder with past: [batch, heads, symbolic, 16]. */
#define KV(n, heads) { n, NPU_DTYPE_FLOAT32, 4, { -1, heads, -1, 16 } }
#define PAST_IO(heads)                                                              \
	{ S64("input_ids"), S64("attention_mask"), S64("position_ids"),                 \
	  KV("past_key_values.0.key", heads), KV("past_key_values.0.value", heads),     \
	  KV("past_key_values.1.key", heads), KV("past_key_values.1.value", heads) },   \
	{ { "logits", NPU_DTYPE_FLOAT32, 3, { -1, -1, 256 } },                          \
	  KV("present.0.key", heads), KV("present.0.value", heads),                     \
	  KV("present.1.key", heads), KV("present.1.value", heads) }
static const struct expect expects[] = {
	{ "bert_tiny",
	  { S64("input_ids"), S64("attention_mask"), S64("token_type_ids") },
	  { { "last_hidden_state", NPU_DTYPE_FLOAT32, 3, { -1, -1, 64 } },
	    { "pooler_output", NPU_DTYPE_FLOAT32, 2, { -1, 64 } } } },
	{ "gpt2_tiny", { S64("input_ids") },
	  { { "logits", NPU_DTYPE_FLOAT32, 3, { -1, -1, 256 } } } },
	{ "llama_tiny", { S64("input_ids") },
	  { { "logits", NPU_DTYPE_FLOAT32, 3, { -1, -1, 256 } } } },
	{ "vit_tiny",
	  { { "pixel_values", NPU_DTYPE_FLOAT32, 4, { -1, 3, 32, 32 } } },
	  { { "logits", NPU_DTYPE_FLOAT32, 2, { -1, 10 } } } },
	/* Decoders with past (issue 16): GPT-2 4 KV heads, LLaMA 2. */
	{ "gpt2_past", PAST_IO(4) },
	{ "llama_past", PAST_IO(2) },
};

static int passed, failed;

static void check(int ok, const char *what, const char *detail)
{
	if (ok) {
		passed++;
		printf("ok - %s\n", what);
	} else {
		failed++;
		printf("not ok - %s: %s\n", what, detail);
	}
}

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	void *p = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET)) {
		p = malloc((size_t)n + 1);
		if (p)
			*len = fread(p, 1, (size_t)n, f);
	}
	fclose(f);
	return p;
}

/* "" when graph tensor @id is @want, else what differs, in @msg. */
static const char *io_diff(const npu_ir_graph *g, int id, const struct io *want, char *msg,
			   size_t size)
{
	const npu_ir_tensor *t = &g->tensors[id];

	msg[0] = 0;
	if (strcmp(t->name, want->name))
		snprintf(msg, size, "named %s, not %s", t->name, want->name);
	else if (t->dtype != want->dtype)
		snprintf(msg, size, "%s is %s, not %s", t->name, npu_dtype_str(t->dtype),
			 npu_dtype_str(want->dtype));
	else if (t->rank != want->rank)
		snprintf(msg, size, "%s has rank %d, not %d", t->name, t->rank, want->rank);
	for (int d = 0; !msg[0] && d < want->rank; d++)
		if (t->dims[d] != want->dims[d])
			snprintf(msg, size, "%s dim %d is %lld, not %lld", t->name, d,
				 (long long)t->dims[d], (long long)want->dims[d]);
	return msg;
}

static void test_model(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	const struct expect *e = NULL;
	char what[256], msg[512];
	npu_ir_graph *g = NULL;
	npu_model *model = NULL;
	npu_status st;
	size_t len = 0;
	void *buf;
	int opset = 0, nin = 0, nout = 0;

	for (size_t i = 0; i < sizeof(expects) / sizeof(expects[0]); i++) {
		size_t n = strlen(expects[i].model);

		if (!strncmp(base, expects[i].model, n) && sscanf(base + n, "_op%d.onnx", &opset) == 1)
			e = &expects[i];
	}
	snprintf(what, sizeof(what), "%s: parse", base);
	if (!e) {
		check(0, what, "not a model gen.py makes");
		return;
	}
	buf = slurp(path, &len);
	if (!buf) {
		check(0, what, "cannot read the file");
		return;
	}
	st = npu_onnx_parse(buf, len, &g);
	free(buf);
	if (st) {
		snprintf(msg, sizeof(msg), "%s: %s", npu_status_str(st), npu_last_error());
		check(0, what, msg);
		return;
	}
	while (nin < MAX_IN && e->in[nin].name)
		nin++;
	while (nout < MAX_OUT && e->out[nout].name)
		nout++;
	snprintf(msg, sizeof(msg), "opset %d, %d inputs, %d outputs (want %d, %d, %d)", g->opset,
		 g->n_inputs, g->n_outputs, opset, nin, nout);
	check(g->opset == opset && g->n_inputs == nin && g->n_outputs == nout, what, msg);
	if (g->n_inputs == nin && g->n_outputs == nout) {
		int bad = 0;

		for (int i = 0; !bad && i < nin; i++)
			bad = io_diff(g, g->inputs[i], &e->in[i], msg, sizeof(msg))[0];
		for (int i = 0; !bad && i < nout; i++)
			bad = io_diff(g, g->outputs[i], &e->out[i], msg, sizeof(msg))[0];
		snprintf(what, sizeof(what), "%s: inputs and outputs as exported", base);
		check(!bad, what, msg);
	}
	printf("# %s: %d nodes, %d tensors\n", base, g->n_nodes, g->n_tensors);
	npu_ir_graph_free(g);

	/* Information only: what the compiler says today. */
	st = npu_model_load_file(path, NULL, NULL, &model);
	if (st)
		printf("# %s: compile: %s: %s\n", base, npu_status_str(st), npu_last_error());
	else
		printf("# %s: compile: ok\n", base);
	npu_model_free(model);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s MODEL.onnx...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++)
		test_model(argv[i]);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
