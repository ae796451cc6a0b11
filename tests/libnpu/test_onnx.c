// SPDX-License-Identifier: MIT
/*
 * The ONNX parser: models built with protobuf-c, every error it names,
 * truncated and random input, every model of Debian's ONNX test data, and
 * BlazeFace when it is in the model cache.
 */
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_ops.h"
#include "ir/npu_ir.h"
#include "npu_test.h"
#include "onnx/npu_onnx.h"
#include "onnx_build.h"
#include "test_cache.h"

#define D(...) ((const int64_t[]){ __VA_ARGS__ })
#define TESTDATA "/usr/share/libonnx-testdata/data/node"

static npu_status parse(onnxb *b, npu_ir_graph **g)
{
	size_t len;
	uint8_t *buf = onnxb_pack(b, &len);
	npu_status st = npu_onnx_parse(buf, len, g);

	free(buf);
	onnxb_free(b);
	return st;
}

/* Expect parsing to fail with @want; returns the message. */
static const char *parse_fail(onnxb *b, npu_status want)
{
	npu_ir_graph *g = (npu_ir_graph *)1;
	npu_status st = parse(b, &g);

	ck_assert_msg(st == want, "expected %s, got %s: %s", npu_status_str(want),
		      npu_status_str(st), npu_last_error());
	ck_assert_ptr_null(g);
	return npu_last_error();
}

static const char *bytes_fail(const void *buf, size_t len, npu_status want)
{
	npu_ir_graph *g = (npu_ir_graph *)1;
	npu_status st = npu_onnx_parse(buf, len, &g);

	ck_assert_msg(st == want, "expected %s, got %s: %s", npu_status_str(want),
		      npu_status_str(st), npu_last_error());
	ck_assert_ptr_null(g);
	return npu_last_error();
}

/* x[1,3,8,8] -> Conv(w, b) -> Relu -> y, opset 13. */
static onnxb *small_model(void)
{
	static float w[4 * 3 * 3 * 3];
	onnxb *b = onnxb_new(8, 13);
	Onnx__NodeProto *n;

	for (size_t i = 0; i < NPU_ARRAY_SIZE(w); i++)
		w[i] = (float)i / 10;
	onnxb_input(b, "x", ONNXB_F32, 4, D(1, 3, 8, 8));
	onnxb_init_f32(b, "w", 4, D(4, 3, 3, 3), w);
	onnxb_init_f32(b, "bias", 1, D(4), (float[]){ 1, 2, 3, 4 });
	n = onnxb_node(b, "Conv", "conv1", "x,w,bias", "c");
	onnxb_attr_ints(b, n, "pads", 4, D(1, 1, 1, 1));
	onnxb_attr_ints(b, n, "kernel_shape", 2, D(3, 3));
	onnxb_node(b, "Relu", "relu1", "c", "y");
	onnxb_output(b, "y", ONNXB_F32, 4, D(1, 4, 8, 8));
	return b;
}

/* Statuses a bad model may legitimately get. */
static void ck_clean_error(npu_status st)
{
	ck_assert_msg(st == NPU_ERR_FORMAT || st == NPU_ERR_VERSION ||
		      st == NPU_ERR_UNSUPPORTED || st == NPU_ERR_SHAPE,
		      "unexpected %s: %s", npu_status_str(st), npu_last_error());
	ck_assert_str_ne(npu_last_error(), "");
}

/* Parse, infer, check: never crashes, fails cleanly.  Returns the status. */
static npu_status full_run(const void *buf, size_t len)
{
	npu_ir_graph *g = NULL;
	npu_status st = npu_onnx_parse(buf, len, &g);
	FILE *devnull;

	if (!st)
		st = npu_ops_infer_shapes(g);
	if (!st)
		st = npu_ops_check_supported(g, NULL);
	if (g) {
		devnull = fopen("/dev/null", "w");
		npu_ir_dump(g, devnull);
		fclose(devnull);
	}
	npu_ir_graph_free(g);
	if (st)
		ck_clean_error(st);
	return st;
}

/* ---- models that parse ---- */

START_TEST(parse_small_model)
{
	npu_ir_graph *g;
	const npu_ir_tensor *w;
	const npu_ir_node *conv;
	const int64_t *pads;
	int np;

	ck_assert_int_eq(parse(small_model(), &g), NPU_OK);
	ck_assert_str_eq(g->producer, "npu-test");
	ck_assert_str_eq(g->name, "test");
	ck_assert_int_eq(g->ir_version, 8);
	ck_assert_int_eq(g->opset, 13);
	ck_assert_int_eq(g->n_inputs, 1);
	ck_assert_int_eq(g->n_outputs, 1);
	ck_assert_int_eq(g->n_nodes, 2);
	w = &g->tensors[npu_ir_find_tensor(g, "w")];
	ck_assert(npu_ir_is_const(w));
	ck_assert_uint_eq(w->bytes, 4 * 27 * 4);
	ck_assert(((const float *)w->data)[5] == 0.5f);
	conv = &g->nodes[0];
	ck_assert_str_eq(conv->op, "Conv");
	ck_assert_str_eq(conv->name, "conv1");
	ck_assert_str_eq(conv->domain, "");
	ck_assert_int_eq(conv->opset, 13);
	ck_assert_int_eq(conv->src_index, 0);
	ck_assert_int_eq(npu_ir_attr_ints(conv, "pads", &pads, &np), NPU_OK);
	ck_assert_int_eq(np, 4);
	ck_assert_int_eq(g->tensors[g->outputs[0]].producer, 1);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_eq(npu_ops_check_supported(g, NULL), NPU_OK);
	ck_assert_int_eq(g->tensors[npu_ir_find_tensor(g, "c")].dims[1], 4);
	npu_ir_graph_free(g);
}
END_TEST

START_TEST(parse_constants_and_typed_data)
{
	static float fd[4] = { 1.5f, -2, 3, 4 };
	static int32_t i8d[3] = { -1, 2, -128 };
	static int32_t f16d[2] = { 0x3c00, 0xc000 };
	static int64_t i64d[2] = { 7, -9 };
	onnxb *b = onnxb_new(3, 9);
	Onnx__TensorProto *t;
	Onnx__NodeProto *n;
	npu_ir_graph *g;
	const npu_ir_tensor *x;

	/* IR 3 style: initializers are also listed as graph inputs. */
	onnxb_input(b, "x", ONNXB_F32, 1, D(4));
	onnxb_input(b, "f", ONNXB_F32, 1, D(4));
	t = onnxb_init_f32(b, "f", 1, D(4), NULL);
	t->has_raw_data = 0;
	t->n_float_data = 4;
	t->float_data = fd;
	t = onnxb_init(b, "q", ONNXB_I8, 1, D(3), NULL, 0);
	t->has_raw_data = 0;
	t->n_int32_data = 3;
	t->int32_data = i8d;
	t = onnxb_init(b, "h", ONNXB_F16, 1, D(2), NULL, 0);
	t->has_raw_data = 0;
	t->n_int32_data = 2;
	t->int32_data = f16d;
	t = onnxb_init(b, "l", ONNXB_I64, 1, D(2), NULL, 0);
	t->has_raw_data = 0;
	t->n_int64_data = 2;
	t->int64_data = i64d;
	n = onnxb_node(b, "Constant", NULL, "", "k");
	onnxb_attr_ints(b, n, "value_ints", 3, D(4, 5, 6));
	n = onnxb_node(b, "Constant", NULL, "", "kf");
	onnxb_attr_f(b, n, "value_float", 0.25f);
	n = onnxb_node(b, "Constant", NULL, "", "kt");
	onnxb_attr_t(b, n, "value", onnxb_tensor(b, "kt", ONNXB_I32, 2, D(1, 2), (int32_t[]){ 3, 4 }, 8));
	onnxb_node(b, "Add", "add", "x,f", "y");
	onnxb_output(b, "y", ONNXB_F32, 1, D(4));
	onnxb_output(b, "k", 0, -1, NULL);
	onnxb_output(b, "kf", 0, -1, NULL);
	onnxb_output(b, "kt", 0, -1, NULL);
	onnxb_output(b, "q", 0, -1, NULL);
	onnxb_output(b, "h", 0, -1, NULL);
	onnxb_output(b, "l", 0, -1, NULL);
	ck_assert_int_eq(parse(b, &g), NPU_OK);
	ck_assert_int_eq(g->n_inputs, 1);	/* f is a constant */
	ck_assert_int_eq(g->n_nodes, 1);	/* Constant nodes are gone */
	x = &g->tensors[npu_ir_find_tensor(g, "f")];
	ck_assert(((const float *)x->data)[1] == -2.0f);
	x = &g->tensors[npu_ir_find_tensor(g, "q")];
	ck_assert_int_eq(((const int8_t *)x->data)[2], -128);
	x = &g->tensors[npu_ir_find_tensor(g, "h")];
	ck_assert(npu_ir_f16_to_f32(((const uint16_t *)x->data)[1]) == -2.0f);
	x = &g->tensors[npu_ir_find_tensor(g, "l")];
	ck_assert_int_eq(((const int64_t *)x->data)[1], -9);
	x = &g->tensors[npu_ir_find_tensor(g, "k")];
	ck_assert_int_eq(x->dtype, NPU_DTYPE_INT64);
	ck_assert_int_eq(x->dims[0], 3);
	ck_assert_int_eq(((const int64_t *)x->data)[2], 6);
	x = &g->tensors[npu_ir_find_tensor(g, "kf")];
	ck_assert_int_eq(x->rank, 0);
	ck_assert(*(const float *)x->data == 0.25f);
	x = &g->tensors[npu_ir_find_tensor(g, "kt")];
	ck_assert_int_eq(x->dtype, NPU_DTYPE_INT32);
	ck_assert_int_eq(((const int32_t *)x->data)[1], 4);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	npu_ir_graph_free(g);
}
END_TEST

START_TEST(parse_tensor_file)
{
	onnxb *b = onnxb_new(8, 13);
	Onnx__TensorProto *t = onnxb_tensor(b, "out", ONNXB_I32, 2, D(2, 2), (int32_t[]){ 1, 2, 3, 4 }, 16);
	size_t len = onnx__tensor_proto__get_packed_size(t);
	uint8_t *buf = malloc(len);
	npu_ir_tensor *x;

	onnx__tensor_proto__pack(t, buf);
	ck_assert_int_eq(npu_onnx_parse_tensor(buf, len, &x), NPU_OK);
	ck_assert_str_eq(x->name, "out");
	ck_assert_int_eq(x->dtype, NPU_DTYPE_INT32);
	ck_assert_int_eq(((const int32_t *)x->data)[3], 4);
	npu_ir_tensor_free(x);
	ck_assert_int_eq(npu_onnx_parse_tensor(buf, len - 1, &x), NPU_ERR_FORMAT);
	ck_assert_ptr_null(x);
	free(buf);
	onnxb_free(b);
}
END_TEST

/* ---- errors ---- */

START_TEST(err_not_onnx)
{
	static const uint8_t zip[] = { 'P', 'K', 3, 4, 20, 0, 0, 0 };
	static const uint8_t unknown_only[] = { 0x50, 0x01 };
	static const uint8_t wrong_wire[] = { 0x0a, 0x00 };
	static const char text[] = "ir_version: 8\ngraph { node { op_type: \"Relu\" } }\n";
	npu_ir_graph *g;

	ck_assert_int_eq(npu_onnx_parse(NULL, 0, NULL), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_onnx_parse(NULL, 4, &g), NPU_ERR_INVALID_ARG);
	ck_assert_str_eq(bytes_fail("", 0, NPU_ERR_FORMAT), "not an ONNX model: the data is empty");
	ck_assert_str_eq(bytes_fail(zip, sizeof(zip), NPU_ERR_FORMAT),
			 "not an ONNX model: field number 0 is not valid at byte 2");
	ck_assert_str_eq(bytes_fail(unknown_only, sizeof(unknown_only), NPU_ERR_FORMAT),
			 "not an ONNX model: the data decodes as protobuf but has neither an ir_version nor a graph");
	ck_assert_str_eq(bytes_fail(wrong_wire, sizeof(wrong_wire), NPU_ERR_FORMAT),
			 "not an ONNX model: field 'ir_version' of onnx.ModelProto has wire type length-delimited at byte 0");
	ck_assert_str_ne(bytes_fail(text, sizeof(text) - 1, NPU_ERR_FORMAT), "");
}
END_TEST

START_TEST(err_truncated_every_prefix)
{
	size_t len, at_byte = 0;
	onnxb *b = small_model();
	uint8_t *buf = onnxb_pack(b, &len);

	onnxb_free(b);
	for (size_t n = 0; n <= len; n++) {
		uint8_t *copy = malloc(n ? n : 1);	/* exact size: ASan sees overreads */
		npu_status st;

		memcpy(copy, buf, n);
		st = full_run(copy, n);
		if (n == len)
			ck_assert_int_eq(st, NPU_OK);
		if (st && strstr(npu_last_error(), " at byte "))
			at_byte++;
		free(copy);
	}
	/* Most cuts land inside a field and are reported with their position. */
	ck_assert_uint_gt(at_byte, len / 2);
	ck_assert_ptr_nonnull(strstr(bytes_fail(buf, len - 1, NPU_ERR_FORMAT),
				     "not an ONNX model: field 'opset_import' needs 4 bytes but 3 remain at byte "));
	ck_assert_str_eq(bytes_fail((const uint8_t[]){ 0x08, 0x08, 0x02, 0x00 }, 4, NPU_ERR_FORMAT),
			 "not an ONNX model: field number 0 is not valid at byte 2");
	free(buf);
}
END_TEST

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

START_TEST(err_random_and_mutated)
{
	size_t len;
	onnxb *b = small_model();
	uint8_t *model = onnxb_pack(b, &len);

	onnxb_free(b);

	for (int i = 0; i < 3000; i++) {
		size_t n = rnd() % 300;
		uint8_t *buf = malloc(n ? n : 1);

		for (size_t k = 0; k < n; k++)
			buf[k] = (uint8_t)rnd();
		full_run(buf, n);
		free(buf);
	}
	/* Mutations of a valid model reach deeper than random bytes. */
	for (int i = 0; i < 3000; i++) {
		uint8_t *buf = malloc(len);
		int flips = 1 + (int)(rnd() % 4);

		memcpy(buf, model, len);
		for (int k = 0; k < flips; k++)
			buf[rnd() % len] = (uint8_t)rnd();
		full_run(buf, len);
		ck_assert_ptr_null(strstr(npu_last_error(), "protobuf-c could not decode"));
		free(buf);
	}
	free(model);
}
END_TEST

START_TEST(err_deep_nesting)
{
	/* graph > node > attribute > graph > ...: 3 levels per round. */
	uint8_t *buf = malloc(4096), *tmp = malloc(4096);
	size_t len = 0;
	static const uint8_t tags[3] = { 0x32, 0x2a, 0x0a };	/* attr.g, node.attribute, graph.node */

	for (int level = 0; level < 90; level++) {
		uint8_t tag = tags[level % 3];

		tmp[0] = tag;
		tmp[1] = (uint8_t)(len < 128 ? len : (len & 0x7f) | 0x80);
		if (len < 128) {
			memcpy(tmp + 2, buf, len);
			len += 2;
		} else {
			tmp[2] = (uint8_t)(len >> 7);
			memcpy(tmp + 3, buf, len);
			len += 3;
		}
		memcpy(buf, tmp, len);
	}
	tmp[0] = 0x08;	/* ir_version 8 */
	tmp[1] = 0x08;
	tmp[2] = 0x3a;	/* graph */
	tmp[3] = (uint8_t)((len & 0x7f) | 0x80);
	tmp[4] = (uint8_t)(len >> 7);
	memcpy(tmp + 5, buf, len);
	ck_assert_ptr_nonnull(strstr(bytes_fail(tmp, len + 5, NPU_ERR_FORMAT),
				     "not an ONNX model: messages nest more than 64 deep at byte "));
	free(buf);
	free(tmp);
}
END_TEST

START_TEST(err_versions)
{
	onnxb *b;

	b = small_model();
	onnxb_model(b)->ir_version = 2;
	ck_assert_str_eq(parse_fail(b, NPU_ERR_VERSION),
			 "ONNX IR version 2 is not supported (libnpu reads IR versions 3..10)");
	b = small_model();
	onnxb_model(b)->ir_version = 11;
	ck_assert_str_eq(parse_fail(b, NPU_ERR_VERSION),
			 "ONNX IR version 11 is not supported (libnpu reads IR versions 3..10)");
	b = small_model();
	onnxb_model(b)->opset_import[0]->version = 22;
	ck_assert_str_eq(parse_fail(b, NPU_ERR_VERSION),
			 "the model uses ONNX opset 22, which is not supported (libnpu supports opset 1..21)");
	b = small_model();
	onnxb_model(b)->has_ir_version = 0;
	ck_assert_str_eq(parse_fail(b, NPU_ERR_FORMAT), "the ONNX model has no ir_version");
	b = small_model();
	onnxb_model(b)->graph = NULL;
	ck_assert_str_eq(parse_fail(b, NPU_ERR_FORMAT), "the ONNX model has no graph");
	b = small_model();
	onnxb_opset(b, "ai.onnx", 12);
	ck_assert_str_eq(parse_fail(b, NPU_ERR_FORMAT), "the model imports domain 'ai.onnx' twice");
}
END_TEST

START_TEST(err_graph_structure)
{
	onnxb *b;

	b = small_model();
	onnxb_node(b, "Add", "add1", "y,nope", "z");
	ck_assert_str_eq(parse_fail(b, NPU_ERR_FORMAT),
			 "node 'add1' (Add) reads tensor 'nope' (input 1), which no node, initializer or graph input defines");
	b = small_model();
	onnxb_node(b, "Relu", NULL, "x", "c");
	ck_assert_str_eq(parse_fail(b, NPU_ERR_FORMAT),
			 "tensor 'c' is defined twice: by node 'conv1' (Conv) and by node #2 (Relu)");
	b = small_model();
	onnxb_node(b, "Relu", "r", "x", "w");
	ck_assert_str_eq(parse_fail(b, NPU_ERR_FORMAT),
			 "tensor 'w' is defined twice: by an initializer and by node 'r' (Relu)");
	b = small_model();
	onnxb_node(b, "Relu", "r", "x", "x");
	ck_assert_str_eq(parse_fail(b, NPU_ERR_FORMAT),
			 "tensor 'x' is defined twice: by a graph input and by node 'r' (Relu)");
	b = small_model();
	onnxb_init_f32(b, "w", 1, D(1), NULL);
	ck_assert_str_eq(parse_fail(b, NPU_ERR_FORMAT), "initializer 'w' is defined twice");
	b = small_model();
	onnxb_output(b, "z", 0, -1, NULL);
	ck_assert_str_eq(parse_fail(b, NPU_ERR_FORMAT),
			 "graph output 'z' is not produced by any node, initializer or graph input");
	b = small_model();
	onnxb_output(b, "y", 0, -1, NULL);
	ck_assert_str_eq(parse_fail(b, NPU_ERR_FORMAT), "graph output 'y' is listed twice");
	b = small_model();
	onnxb_opset(b, "com.example", 2);
	onnxb_model(b)->graph->node[1]->domain = (char *)"com.other";
	ck_assert_str_eq(parse_fail(b, NPU_ERR_FORMAT),
			 "node 'relu1' (Relu) uses domain 'com.other', which the model does not import");
	/* A cycle: a reads b's output and b reads a's. */
	b = onnxb_new(8, 13);
	onnxb_input(b, "x", ONNXB_F32, 1, D(2));
	onnxb_node(b, "Add", "a", "x,t2", "t1");
	onnxb_node(b, "Relu", "b", "t1", "t2");
	onnxb_output(b, "t2", 0, -1, NULL);
	ck_assert_str_eq(parse_fail(b, NPU_ERR_FORMAT), "the graph has a cycle through node 'a' (Add)");
	b = small_model();
	onnxb_node(b, "Constant", "k", "", "kk");
	ck_assert_str_eq(parse_fail(b, NPU_ERR_FORMAT),
			 "node 'k' (Constant) must have exactly one value attribute");
}
END_TEST

START_TEST(err_tensors)
{
	onnxb *b;
	Onnx__TensorProto *t;
	Onnx__StringStringEntryProto loc = ONNX__STRING_STRING_ENTRY_PROTO__INIT;
	Onnx__StringStringEntryProto *locs[1] = { &loc };
	Onnx__SparseTensorProto sp = ONNX__SPARSE_TENSOR_PROTO__INIT;
	Onnx__SparseTensorProto *sps[1] = { &sp };
	static float three[3] = { 1, 2, 3 };
	Onnx__TypeProto__Sequence seq = ONNX__TYPE_PROTO__SEQUENCE__INIT;
	Onnx__TypeProto elem = ONNX__TYPE_PROTO__INIT;

	b = small_model();
	t = onnxb_model(b)->graph->initializer[0];
	t->has_raw_data = 0;
	t->has_data_location = 1;
	t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	loc.key = (char *)"location";
	loc.value = (char *)"weights.bin";
	t->n_external_data = 1;
	t->external_data = locs;
	ck_assert_str_eq(parse_fail(b, NPU_ERR_FORMAT),
			 "initializer 'w' stores its data in an external file 'weights.bin'; load the model with npu_model_load_file so libnpu can find it");
	b = small_model();
	sp.values = onnxb_tensor(b, "sp", ONNXB_F32, 1, D(2), NULL, 0);
	onnxb_model(b)->graph->n_sparse_initializer = 1;
	onnxb_model(b)->graph->sparse_initializer = sps;
	ck_assert_str_eq(parse_fail(b, NPU_ERR_UNSUPPORTED),
			 "sparse initializer 'sp' is not supported; store it as a dense initializer");
	b = small_model();
	onnxb_input(b, "d", 8, 1, D(2));	/* STRING */
	ck_assert_str_eq(parse_fail(b, NPU_ERR_UNSUPPORTED),
			 "graph input 'd' has data type STRING, which libnpu does not support (it supports FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64 and BOOL)");
	b = small_model();
	onnxb_model(b)->graph->initializer[1]->data_type = 99;
	ck_assert_str_eq(parse_fail(b, NPU_ERR_FORMAT),
			 "initializer 'bias' has data type 99, which is not an ONNX data type");
	b = small_model();
	onnxb_model(b)->graph->initializer[1]->raw_data.len = 8;
	ck_assert_str_eq(parse_fail(b, NPU_ERR_FORMAT),
			 "initializer 'bias' has 8 bytes of raw_data; its shape and type need 16");
	b = small_model();
	t = onnxb_model(b)->graph->initializer[1];
	t->has_raw_data = 0;
	t->n_float_data = 3;
	t->float_data = three;
	ck_assert_str_eq(parse_fail(b, NPU_ERR_FORMAT),
			 "initializer 'bias' has 3 values in float_data; its shape needs 4");
	b = small_model();
	onnxb_model(b)->graph->initializer[1]->has_raw_data = 0;
	ck_assert_str_eq(parse_fail(b, NPU_ERR_FORMAT), "initializer 'bias' has no data");
	b = small_model();
	onnxb_model(b)->graph->initializer[1]->dims[0] = -4;
	ck_assert_str_eq(parse_fail(b, NPU_ERR_FORMAT), "initializer 'bias' has dimension 0 = -4");
	b = small_model();
	{
		Onnx__TypeProto *tp = onnxb_model(b)->graph->input[0]->type;

		seq.elem_type = &elem;
		elem.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
		elem.tensor_type = tp->tensor_type;
		tp->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
		tp->sequence_type = &seq;
	}
	ck_assert_str_eq(parse_fail(b, NPU_ERR_UNSUPPORTED),
			 "graph input 'x' is a sequence; libnpu supports dense tensors only");
}
END_TEST

START_TEST(err_unsupported_operator)
{
	onnxb *b;
	npu_ir_graph *g;
	int bad;
	static const char msg[] =
		"operator 'StringNormalizer' (node 'sn_1', opset 13) is not supported by the NPU compiler";

	b = onnxb_new(8, 13);
	onnxb_input(b, "boxes", ONNXB_F32, 3, D(1, 10, 4));
	onnxb_node(b, "Relu", "r", "boxes", "b2");
	onnxb_node(b, "StringNormalizer", "sn_1", "b2", "sel");
	onnxb_output(b, "sel", ONNXB_F32, 3, D(1, 10, 4));
	ck_assert_int_eq(parse(b, &g), NPU_OK);
	ck_assert_int_eq(npu_ops_check_supported(g, &bad), NPU_ERR_UNSUPPORTED);
	ck_assert_str_eq(npu_last_error(), msg);
	ck_assert_int_eq(bad, 1);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_ERR_UNSUPPORTED);
	ck_assert_str_eq(npu_last_error(), msg);
	npu_ir_graph_free(g);
	/* NonMaxSuppression is known since issue 17: the CPU fallback runs it. */
	ck_assert(npu_ops_known("NonMaxSuppression", 13));
	ck_assert(npu_ops_known("Conv", 13));
	ck_assert(!npu_ops_known("LayerNormalization", 13));

	b = small_model();
	onnxb_node(b, "Foo", NULL, "y", "z");
	onnxb_model(b)->graph->node[2]->domain = (char *)"com.example";
	onnxb_opset(b, "com.example", 2);
	onnxb_node(b, "Unique", NULL, "y", "u");
	ck_assert_int_eq(parse(b, &g), NPU_OK);
	ck_assert_int_eq(npu_ops_check_supported(g, &bad), NPU_ERR_UNSUPPORTED);
	ck_assert_str_eq(npu_last_error(),
			 "operator 'com.example.Foo' (node #2, opset 2) is not supported by the NPU compiler");
	npu_ir_graph_free(g);
	/* Gather on data computed at run time: constant indices become Slices
	 * (compile/npu_rewrite.c), computed ones are refused. */
	b = small_model();
	onnxb_init_i64(b, "idx", 1, D(0));
	onnxb_node(b, "Gather", "g", "y,idx", "z");
	onnxb_output(b, "z", 0, -1, NULL);
	ck_assert_int_eq(parse(b, &g), NPU_OK);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_eq(npu_ops_check_supported(g, NULL), NPU_OK);
	npu_ir_graph_free(g);
	b = small_model();
	onnxb_input(b, "idx", ONNXB_I64, 1, D(1));
	onnxb_node(b, "Gather", "g", "y,idx", "z");
	onnxb_output(b, "z", 0, -1, NULL);
	ck_assert_int_eq(parse(b, &g), NPU_OK);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_eq(npu_ops_check_supported(g, NULL), NPU_ERR_UNSUPPORTED);
	ck_assert_str_eq(npu_last_error(),
			 "operator 'Gather' (node 'g', opset 13) is not supported by the NPU compiler: only with constant or int32 indices is supported");
	npu_ir_graph_free(g);
}
END_TEST

START_TEST(err_shapes)
{
	onnxb *b;
	npu_ir_graph *g;

	b = small_model();
	onnxb_model(b)->graph->output[0]->type->tensor_type->shape->dim[3]->dim_value = 9;
	ck_assert_int_eq(parse(b, &g), NPU_OK);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_ERR_SHAPE);
	ck_assert_str_eq(npu_last_error(),
			 "node 'relu1' (Relu): output 'y' is float32[1,4,8,8] but the model declares float32[1,4,8,9]");
	npu_ir_graph_free(g);

	/* A dynamic batch: an error until the caller fixes it. */
	b = small_model();
	onnxb_model(b)->graph->input[0]->type->tensor_type->shape->dim[0]->value_case =
		ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
	onnxb_model(b)->graph->input[0]->type->tensor_type->shape->dim[0]->dim_param = (char *)"N";
	onnxb_model(b)->graph->output[0]->type->tensor_type->shape->dim[0]->value_case =
		ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
	onnxb_model(b)->graph->output[0]->type->tensor_type->shape->dim[0]->dim_param = (char *)"N";
	ck_assert_int_eq(parse(b, &g), NPU_OK);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_ERR_SHAPE);
	ck_assert_str_eq(npu_last_error(),
			 "graph input 'x' has the symbolic dimension 'N' (axis 0 of float32[N,3,8,8]): give its size"
			 " with --shape x=<N>x3x8x8 or --input x=FILE (raw or .npy) (npu-run) or"
			 " npu_compile_options.input_shapes");
	ck_assert_int_eq(npu_ir_set_input_shape(g, 0, 4, D(2, 3, 8, 8)), NPU_OK);
	ck_assert_int_eq(npu_ir_set_input_shape(g, 0, 4, D(2, 3, 8, 9)), NPU_ERR_SHAPE);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_eq(g->tensors[g->outputs[0]].dims[0], 2);
	npu_ir_graph_free(g);
}
END_TEST

/* ---- Debian's ONNX test data ---- */

struct opcount {
	char op[64];
	int n;
};

static void count_op(struct opcount *oc, int *noc, const char *op)
{
	for (int i = 0; i < *noc; i++) {
		if (!strcmp(oc[i].op, op)) {
			oc[i].n++;
			return;
		}
	}
	if (*noc < 256) {
		snprintf(oc[*noc].op, sizeof(oc[*noc].op), "%s", op);
		oc[(*noc)++].n = 1;
	}
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_count(const void *a, const void *b)
{
	const struct opcount *x = a, *y = b;

	return x->n != y->n ? y->n - x->n : strcmp(x->op, y->op);
}

static npu_ir_tensor *load_pb(const char *dir, const char *kind, int k)
{
	char path[2048];
	size_t len;
	void *buf;
	npu_ir_tensor *t = NULL;

	snprintf(path, sizeof(path), "%s/test_data_set_0/%s_%d.pb", dir, kind, k);
	buf = npu_test_slurp(path, &len);
	if (buf && npu_onnx_parse_tensor(buf, len, &t))
		t = NULL;
	free(buf);
	return t;
}

/*
 * One test case: parse, infer; operands that fix shapes and arrive as
 * graph inputs (Reshape's shape, Resize's scales ...) are frozen to the
 * case's input data, as a conformance runner would.  Output shapes (and
 * folded constant outputs) are compared with the reference outputs.
 */
static npu_status run_case(const char *dir, const char **stage, int *mismatch)
{
	char path[2048];
	size_t len;
	void *buf;
	int frozen[16], nf = 0;
	npu_ir_graph *g = NULL;
	npu_status st = NPU_OK;

	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	buf = npu_test_slurp(path, &len);
	ck_assert_ptr_nonnull(buf);
	for (int attempt = 0; attempt < 8; attempt++) {
		int inputs[64], ni;

		*stage = "parse";
		st = npu_onnx_parse(buf, len, &g);
		if (st)
			break;
		ni = g->n_inputs < 64 ? g->n_inputs : 64;
		for (int i = 0; i < ni; i++)
			inputs[i] = g->inputs[i];
		for (int k = 0; k < nf && !st; k++) {
			npu_ir_tensor *t = load_pb(dir, "input", frozen[k]), *x;

			ck_assert_ptr_nonnull(t);
			x = &g->tensors[inputs[frozen[k]]];
			x->rank = t->rank;
			memcpy(x->dims, t->dims, sizeof(x->dims));
			st = npu_ir_freeze_input(g, inputs[frozen[k]], t->data, t->bytes);
			npu_ir_tensor_free(t);
		}
		*stage = "infer";
		if (!st)
			st = npu_ops_infer_shapes(g);
		if (st && g->need_const >= 0 && nf < 16) {
			int pos = -1;

			for (int i = 0; i < ni; i++)
				if (inputs[i] == g->need_const)
					pos = i;
			if (pos >= 0) {
				frozen[nf++] = pos;
				npu_ir_graph_free(g);
				g = NULL;
				continue;
			}
		}
		if (!st) {
			*stage = "support";
			st = npu_ops_check_supported(g, NULL);
		}
		break;
	}
	if (g && (!st || !strcmp(*stage, "support"))) {
		for (int k = 0; k < g->n_outputs; k++) {
			npu_ir_tensor *ref = load_pb(dir, "output", k);
			const npu_ir_tensor *x = &g->tensors[g->outputs[k]];
			bool same;
			/*
			 * The window functions' references (ONNX's test
			 * generator) take pi as 3.1415: up to 7.4e-5 from the
			 * true window libnpu folds (1.5e-7 from the 3.1415 one).
			 */
			float tol = strstr(dir, "window") ? 1e-4f : 1e-5f;

			if (!ref)
				continue;
			/* ONNX's test data holds bfloat16 references as uint16. */
			if (x->dtype == NPU_DTYPE_BFLOAT16 && ref->dtype == NPU_DTYPE_UINT16)
				ref->dtype = NPU_DTYPE_BFLOAT16;
			same = ref->rank == x->rank && ref->dtype == x->dtype;
			/* A dim of run-time size (issue 17) holds the bound. */
			for (int d = 0; same && d < x->rank; d++)
				same = ref->dims[d] == x->dims[d] ||
				       (((x->dyn >> d) & 1) && ref->dims[d] <= x->dims[d]);
			if (same && x->data)
				same = x->bytes == ref->bytes &&
				       (x->dtype == NPU_DTYPE_FLOAT32 || !memcmp(x->data, ref->data, x->bytes));
			for (size_t q = 0; same && x->data && x->dtype == NPU_DTYPE_FLOAT32 &&
			     q < x->bytes / 4; q++) {
				float u = ((const float *)x->data)[q], v = ((const float *)ref->data)[q];

				same = u - v < tol && v - u < tol;
			}
			if (!same) {
				char a[160], b2[160];

				fprintf(stderr, "onnx testdata: %s output %d: libnpu %s, reference %s%s\n",
					dir, k, npu_ir_shape_str(x, a, sizeof(a)),
					npu_ir_shape_str(ref, b2, sizeof(b2)), x->data ? " (values)" : "");
				(*mismatch)++;
			}
			npu_ir_tensor_free(ref);
		}
	}
	npu_ir_graph_free(g);
	free(buf);
	return st;
}

START_TEST(onnx_testdata_all)
{
	DIR *d = opendir(TESTDATA);
	struct dirent *e;
	char **names = NULL;
	int n = 0, cap = 0, parsed = 0, inferred = 0, ok = 0, mismatch = 0, noc = 0;
	struct opcount *oc = calloc(256, sizeof(*oc));
	char line[4096];
	size_t o;

	if (!d)
		free(oc);
	/* A package of `make deps`; make check-unit requires it. */
	ck_assert_msg(d, "%s is missing: install Debian's libonnx-testdata (`make deps`, as root)",
		      TESTDATA);
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "test_", 5))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			names = realloc(names, (size_t)cap * sizeof(*names));
		}
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof(*names), cmp_name);
	for (int i = 0; i < n; i++) {
		char dir[1024], op[64];
		const char *stage;
		npu_status st;

		snprintf(dir, sizeof(dir), "%s/%s", TESTDATA, names[i]);
		st = run_case(dir, &stage, &mismatch);
		if (st)
			ck_clean_error(st);
		parsed += !st || strcmp(stage, "parse");
		inferred += !st || !strcmp(stage, "support");
		ok += !st;
		if (st && sscanf(npu_last_error(), "operator '%63[^']'", op) == 1)
			count_op(oc, &noc, op);
		else if (st && strcmp(stage, "parse"))
			fprintf(stderr, "onnx testdata: %s: %s\n", names[i], npu_last_error());
		free(names[i]);
	}
	free(names);
	qsort(oc, (size_t)noc, sizeof(*oc), cmp_count);
	o = (size_t)snprintf(line, sizeof(line), "onnx testdata: unsupported operators:");
	for (int i = 0; i < noc && o < sizeof(line); i++)
		o += (size_t)snprintf(line + o, sizeof(line) - o, " %s (%d)", oc[i].op, oc[i].n);
	fprintf(stderr, "%s\n", line);
	fprintf(stderr, "onnx testdata: %d models: %d parse, %d shape-infer, %d also pass the NPU operator check; %d output shape mismatches\n",
		n, parsed, inferred, ok, mismatch);
	free(oc);
	ck_assert_int_eq(mismatch, 0);
	ck_assert_int_ge(n, 900);
	/* Floors from the first run (932 models: 754, 330, 315): regressions fail. */
	ck_assert_int_ge(parsed, 750);
	ck_assert_int_ge(inferred, 325);
	ck_assert_int_ge(ok, 310);
}
END_TEST

/* ---- BlazeFace ---- */

static char blazeface_path[1024];

static int find_blazeface(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	const char *base = path + ftw->base;

	(void)sb;
	if (type == FTW_F && !strcmp(base, "face_detection_front_128x128_barracuda.onnx")) {
		snprintf(blazeface_path, sizeof(blazeface_path), "%s", path);
		return 1;
	}
	return 0;
}

START_TEST(onnx_blazeface)
{
	char dir[900];
	size_t len;
	void *buf;
	npu_ir_graph *g;
	static const char *const want[4] = {
		"float32[1,512,1]", "float32[1,384,1]", "float32[1,512,16]", "float32[1,384,16]",
	};

	/* make check-unit fetches it first: missing is a failure, not a skip. */
	npu_test_models_dir(dir, sizeof(dir));
	blazeface_path[0] = '\0';
	nftw(dir, find_blazeface, 16, FTW_PHYS);
	ck_assert_msg(blazeface_path[0],
		      "BlazeFace (face_detection_front_128x128_barracuda.onnx) is not in %s: "
		      "run `make models`, or `make check-unit`, which fetches it first", dir);
	buf = npu_test_slurp(blazeface_path, &len);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(npu_onnx_parse(buf, len, &g), NPU_OK);
	free(buf);
	ck_assert_str_eq(g->producer, "tf2onnx");
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_eq(npu_ops_check_supported(g, NULL), NPU_OK);
	ck_assert_int_eq(g->n_outputs, 4);
	for (int i = 0; i < 4; i++) {
		char sh[160];

		ck_assert_str_eq(npu_ir_shape_str(&g->tensors[g->outputs[i]], sh, sizeof(sh)), want[i]);
	}
	for (int i = 0; i < g->n_nodes; i++) {
		ck_assert_str_ne(g->nodes[i].op, "ConstantOfShape");	/* folded */
		for (int j = 0; j < g->nodes[i].n_outputs; j++)
			ck_assert(npu_ir_shape_known(npu_ir_output(g, &g->nodes[i], j)));
	}
	fprintf(stderr, "blazeface: %d nodes, all shapes static, every operator supported\n",
		g->n_nodes);
	npu_ir_graph_free(g);
}
END_TEST

static Suite *onnx_suite(void)
{
	Suite *s = suite_create("npu_onnx");
	TCase *tc = tcase_create("parse");
	TCase *data = tcase_create("testdata");

	tcase_add_test(tc, parse_small_model);
	tcase_add_test(tc, parse_constants_and_typed_data);
	tcase_add_test(tc, parse_tensor_file);
	tcase_add_test(tc, err_not_onnx);
	tcase_add_test(tc, err_truncated_every_prefix);
	tcase_add_test(tc, err_random_and_mutated);
	tcase_add_test(tc, err_deep_nesting);
	tcase_add_test(tc, err_versions);
	tcase_add_test(tc, err_graph_structure);
	tcase_add_test(tc, err_tensors);
	tcase_add_test(tc, err_unsupported_operator);
	tcase_add_test(tc, err_shapes);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	tcase_add_test(data, onnx_testdata_all);
	tcase_add_test(data, onnx_blazeface);
	tcase_set_timeout(data, 300);
	suite_add_tcase(s, data);
	return s;
}
NPU_TEST_SUITE(onnx_suite)
