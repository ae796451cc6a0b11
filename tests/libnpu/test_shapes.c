// SPDX-License-Identifier: MIT
/*
 * Shape specialisation (npu_compile_options.input_shapes): a model
 * exported with symbolic dims compiles for the shapes given and runs like
 * the same model exported with those shapes; every wrong shape is refused
 * with a message that names the input and what to change.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npu.h"
#include "npu_test.h"
#include "onnx_build.h"

#define D(...) ((const int64_t[]){ __VA_ARGS__ })

/* The batch and image size the tests specialise to. */
#define TN 2
#define TH 8
#define TW 6
#define TX (TN * 3 * TH * TW)
#define TY (TN * 4 * TH * TW)

enum dims_kind {
	DIMS_STATIC,	/* x [2,3,8,6] */
	DIMS_NAMED,	/* x [N,3,H,W] */
	DIMS_UNNAMED,	/* x [?,3,8,6], dim 0 with neither value nor name */
	DIMS_NONE,	/* x with no declared shape */
};

/*
 * x -> Conv 3x3 (3 -> 4 channels, pads 1) -> Relu -> + b -> y, opset 13;
 * b is a second, static input [1,4,1,1].
 */
static uint8_t *model(enum dims_kind k, size_t *len)
{
	static float w[4 * 3 * 3 * 3];
	onnxb *b = onnxb_new(8, 13);
	Onnx__TensorShapeProto *sh;
	Onnx__NodeProto *n;
	uint8_t *buf;

	onnxb_fill(w, sizeof(w) / sizeof(w[0]), 7);
	if (k == DIMS_NONE)
		onnxb_input(b, "x", ONNXB_F32, -1, NULL);
	else if (k == DIMS_STATIC)
		onnxb_input(b, "x", ONNXB_F32, 4, D(TN, 3, TH, TW));
	else if (k == DIMS_UNNAMED)
		onnxb_input(b, "x", ONNXB_F32, 4, D(-1, 3, TH, TW));
	else
		onnxb_input(b, "x", ONNXB_F32, 4, D(-1, 3, -1, -1));
	onnxb_input(b, "b", ONNXB_F32, 4, D(1, 4, 1, 1));
	onnxb_init_f32(b, "w", 4, D(4, 3, 3, 3), w);
	n = onnxb_node(b, "Conv", "conv1", "x,w", "c");
	onnxb_attr_ints(b, n, "pads", 4, D(1, 1, 1, 1));
	onnxb_attr_ints(b, n, "kernel_shape", 2, D(3, 3));
	onnxb_node(b, "Relu", "relu1", "c", "r");
	onnxb_node(b, "Add", "add1", "r,b", "y");
	onnxb_output(b, "y", ONNXB_F32, 4, k == DIMS_STATIC ? D(TN, 4, TH, TW) : D(-1, 4, -1, -1));
	sh = onnxb_model(b)->graph->input[0]->type->tensor_type->shape;
	if (k == DIMS_NAMED) {
		sh->dim[2]->dim_param = (char *)"H";
		sh->dim[3]->dim_param = (char *)"W";
	} else if (k == DIMS_UNNAMED) {
		sh->dim[0]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE__NOT_SET;
	}
	buf = onnxb_pack(b, len);
	onnxb_free(b);
	return buf;
}

/* Compile @k with the @n shapes @s: the status (the model is freed). */
static npu_status compile(enum dims_kind k, const npu_input_shape *s, size_t n, unsigned batch)
{
	npu_compile_options o;
	npu_model *m = NULL;
	size_t len;
	uint8_t *buf = model(k, &len);
	npu_status st;

	npu_compile_options_init(&o);
	o.input_shapes = s;
	o.n_input_shapes = n;
	o.batch = batch;
	st = npu_model_load_memory(buf, len, NULL, &o, &m);
	free(buf);
	npu_model_free(m);
	return st;
}

/* Compile, expect @want, return the message. */
static const char *compile_fail(enum dims_kind k, const npu_input_shape *s, size_t n,
				npu_status want)
{
	npu_status st = compile(k, s, n, 0);

	ck_assert_msg(st == want, "expected %s, got %s: %s", npu_status_str(want),
		      npu_status_str(st), npu_last_error());
	return npu_last_error();
}

#define SHAPE_X(...) { .name = "x", .rank = 4, .dims = { __VA_ARGS__ } }

/* Compile @k with @s and run it on fixed inputs into @y. */
static void run(enum dims_kind k, const npu_input_shape *s, size_t n, float *y)
{
	static float x[TX], bias[4] = { 0.5f, -0.25f, 0, 1 };
	npu_compile_options o;
	npu_device *dev = NULL;
	npu_context *ctx = NULL;
	npu_model *m = NULL;
	npu_tensor_info ti;
	size_t len;
	uint8_t *buf = model(k, &len);
	npu_tensor in[2] = {
		{ .name = "x", .dtype = NPU_DTYPE_FLOAT32, .data = x, .bytes = sizeof(x) },
		{ .name = "b", .dtype = NPU_DTYPE_FLOAT32, .data = bias, .bytes = sizeof(bias) },
	};
	npu_tensor out = { .name = "y", .dtype = NPU_DTYPE_FLOAT32, .data = y,
			   .bytes = TY * sizeof(float) };

	onnxb_fill(x, TX, 3);
	npu_compile_options_init(&o);
	o.input_shapes = s;
	o.n_input_shapes = n;
	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_msg(npu_model_load_memory(buf, len, dev, &o, &m) == NPU_OK, "%s",
		      npu_last_error());
	free(buf);
	ck_assert_int_eq(npu_model_input_info(m, 0, &ti), NPU_OK);
	ck_assert_int_eq(ti.rank, 4);
	ck_assert_int_eq(ti.dims[0], TN);
	ck_assert_int_eq(ti.dims[2], TH);
	ck_assert_int_eq(ti.dims[3], TW);
	ck_assert_int_eq(npu_model_output_info(m, 0, &ti), NPU_OK);
	ck_assert_int_eq(ti.bytes, TY * sizeof(float));
	ck_assert_int_eq(npu_context_create(dev, m, 0, &ctx), NPU_OK);
	ck_assert_msg(npu_run(ctx, in, 2, &out, 1) == NPU_OK, "%s", npu_last_error());
	npu_context_destroy(ctx);
	npu_model_free(m);
	npu_device_close(dev);
}

START_TEST(symbolic_runs_as_static)
{
	static float ys[TY], yd[TY];
	const npu_input_shape s[] = {
		SHAPE_X(TN, 3, TH, TW),
		{ .name = "b", .rank = 4, .dims = { 1, 4, 1, 1 } },	/* static: a no-op */
	};

	run(DIMS_STATIC, NULL, 0, ys);
	run(DIMS_NAMED, s, 1, yd);
	ck_assert_mem_eq(ys, yd, sizeof(ys));
	memset(yd, 0, sizeof(yd));
	run(DIMS_NAMED, s, 2, yd);
	ck_assert_mem_eq(ys, yd, sizeof(ys));
	/* An unnamed dim and an input with no declared shape alike. */
	memset(yd, 0, sizeof(yd));
	run(DIMS_UNNAMED, s, 1, yd);
	ck_assert_mem_eq(ys, yd, sizeof(ys));
	memset(yd, 0, sizeof(yd));
	run(DIMS_NONE, s, 1, yd);
	ck_assert_mem_eq(ys, yd, sizeof(ys));
	/* Shapes matching a static model change nothing. */
	memset(yd, 0, sizeof(yd));
	run(DIMS_STATIC, s, 2, yd);
	ck_assert_mem_eq(ys, yd, sizeof(ys));
}
END_TEST

START_TEST(pipelined_batch)
{
	const npu_input_shape s[] = { SHAPE_X(TN, 3, TH, TW) };

	/* The pipeline profile compiles the model too: with the shapes. */
	ck_assert_msg(compile(DIMS_NAMED, s, 1, 2) == NPU_OK, "%s", npu_last_error());
}
END_TEST

START_TEST(missing_shape)
{
	const npu_input_shape b = { .name = "b", .rank = 4, .dims = { 1, 4, 1, 1 } };

	ck_assert_str_eq(compile_fail(DIMS_NAMED, NULL, 0, NPU_ERR_SHAPE),
			 "graph input 'x' has the symbolic dimension 'N' (axis 0 of float32[N,3,H,W]):"
			 " give its size with --shape x=<N>x3x<H>x<W> or --input x=FILE.npy (npu-run) or"
			 " npu_compile_options.input_shapes");
	ck_assert_str_eq(compile_fail(DIMS_NAMED, &b, 1, NPU_ERR_SHAPE),
			 "graph input 'x' has the symbolic dimension 'N' (axis 0 of float32[N,3,H,W]):"
			 " give its size with --shape x=<N>x3x<H>x<W> or --input x=FILE.npy (npu-run) or"
			 " npu_compile_options.input_shapes");
	ck_assert_str_eq(compile_fail(DIMS_UNNAMED, NULL, 0, NPU_ERR_SHAPE),
			 "graph input 'x' has an unknown dimension (axis 0 of float32[?,3,8,6]):"
			 " give its size with --shape x=<dim0>x3x8x6 or --input x=FILE (raw or .npy)"
			 " (npu-run) or"
			 " npu_compile_options.input_shapes");
	ck_assert_str_eq(compile_fail(DIMS_NONE, NULL, 0, NPU_ERR_SHAPE),
			 "graph input 'x' has no declared shape (float32[?]): give it with"
			 " --shape x=DIMS or --input x=FILE.npy (npu-run) or npu_compile_options.input_shapes");
}
END_TEST

START_TEST(old_struct_size_ignores_shapes)
{
	const npu_input_shape s[] = { SHAPE_X(TN, 3, TH, TW) };
	npu_compile_options o;
	npu_model *m = NULL;
	size_t len;
	uint8_t *buf = model(DIMS_NAMED, &len);

	/* A caller built before input_shapes existed: those fields are not read. */
	npu_compile_options_init(&o);
	o.input_shapes = s;
	o.n_input_shapes = 1;
	o.struct_size = offsetof(npu_compile_options, input_shapes);
	ck_assert_int_eq(npu_model_load_memory(buf, len, NULL, &o, &m), NPU_ERR_SHAPE);
	o.struct_size = sizeof(o);
	ck_assert_msg(npu_model_load_memory(buf, len, NULL, &o, &m) == NPU_OK, "%s",
		      npu_last_error());
	npu_model_free(m);
	free(buf);
}
END_TEST

START_TEST(contradictions)
{
	const npu_input_shape rank3[] = { { .name = "x", .rank = 3, .dims = { TN, 3, TH } } };
	const npu_input_shape chan[] = { SHAPE_X(TN, 4, TH, TW) };
	const npu_input_shape bad_b[] = {
		SHAPE_X(TN, 3, TH, TW),
		{ .name = "b", .rank = 4, .dims = { 1, 4, 2, 1 } },
	};
	const npu_input_shape wrong_static[] = { SHAPE_X(TN, 3, TH, TW + 1) };

	ck_assert_str_eq(compile_fail(DIMS_NAMED, rank3, 1, NPU_ERR_INVALID_ARG),
			 "the shape given for input 'x' (2x3x8) has rank 3, but the model declares"
			 " float32[N,3,H,W]: give 4 dims");
	ck_assert_str_eq(compile_fail(DIMS_NAMED, chan, 1, NPU_ERR_INVALID_ARG),
			 "the shape given for input 'x' (2x4x8x6) makes axis 1 4, but the model"
			 " declares float32[N,3,H,W], where it is 3");
	ck_assert_str_eq(compile_fail(DIMS_NAMED, bad_b, 2, NPU_ERR_INVALID_ARG),
			 "the shape given for input 'b' (1x4x2x1) makes axis 2 2, but the model"
			 " declares float32[1,4,1,1], where it is 1");
	ck_assert_str_eq(compile_fail(DIMS_STATIC, wrong_static, 1, NPU_ERR_INVALID_ARG),
			 "the shape given for input 'x' (2x3x8x7) makes axis 3 7, but the model"
			 " declares float32[2,3,8,6], where it is 6");
}
END_TEST

START_TEST(bad_shapes)
{
	const npu_input_shape unknown[] = { { .name = "z", .rank = 1, .dims = { 1 } } };
	const npu_input_shape twice[] = { SHAPE_X(TN, 3, TH, TW), SHAPE_X(TN, 3, TH, TW) };
	const npu_input_shape zero[] = { SHAPE_X(TN, 3, 0, TW) };
	const npu_input_shape negative[] = { SHAPE_X(-1, 3, TH, TW) };
	const npu_input_shape huge_dim[] = { SHAPE_X(TN, 3, TH, ((int64_t)1 << 31) + 1) };
	const npu_input_shape huge[] = { SHAPE_X(65536, 3, 65536, 65536) };
	const npu_input_shape noname[] = { { .name = NULL, .rank = 4, .dims = { 1, 3, 8, 6 } } };
	const npu_input_shape rank9[] = { { .name = "x", .rank = 9 } };

	ck_assert_str_eq(compile_fail(DIMS_NAMED, unknown, 1, NPU_ERR_INVALID_ARG),
			 "a shape is given for 'z', which is not an input of the model; its inputs are"
			 " 'x' float32[N,3,H,W], 'b' float32[1,4,1,1]");
	ck_assert_str_eq(compile_fail(DIMS_NAMED, twice, 2, NPU_ERR_INVALID_ARG),
			 "the shape of input 'x' is given twice: give it once");
	ck_assert_str_eq(compile_fail(DIMS_NAMED, zero, 1, NPU_ERR_INVALID_ARG),
			 "the shape given for input 'x' makes axis 2 0: sizes must be 1 to 2147483648");
	ck_assert_str_eq(compile_fail(DIMS_NAMED, negative, 1, NPU_ERR_INVALID_ARG),
			 "the shape given for input 'x' makes axis 0 -1: sizes must be 1 to 2147483648");
	ck_assert_str_eq(compile_fail(DIMS_NAMED, huge_dim, 1, NPU_ERR_INVALID_ARG),
			 "the shape given for input 'x' makes axis 3 2147483649: sizes must be 1 to"
			 " 2147483648");
	ck_assert_str_eq(compile_fail(DIMS_NAMED, huge, 1, NPU_ERR_INVALID_ARG),
			 "the shape given for input 'x' (65536x3x65536x65536) has more than 2147483648"
			 " elements: give a smaller shape");
	ck_assert_str_eq(compile_fail(DIMS_NAMED, noname, 1, NPU_ERR_INVALID_ARG),
			 "input shape #0 has no name: name the graph input it is for ('x'"
			 " float32[N,3,H,W], 'b' float32[1,4,1,1])");
	ck_assert_str_eq(compile_fail(DIMS_NAMED, rank9, 1, NPU_ERR_INVALID_ARG),
			 "the shape given for input 'x' has rank 9: libnpu supports ranks 0 to 8");
	ck_assert_str_eq(compile_fail(DIMS_NAMED, NULL, 1, NPU_ERR_INVALID_ARG),
			 "npu_compile_options.input_shapes is NULL but n_input_shapes is 1");
}
END_TEST

/* Write model @k to a temporary file; its path into @path. */
static void model_file(enum dims_kind k, char *path, size_t cap)
{
	size_t len;
	uint8_t *buf = model(k, &len);
	FILE *f;

	snprintf(path, cap, "/tmp/npu-test-shapes-%d-%d.onnx", (int)getpid(), (int)k);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	free(buf);
}

/* npu_model_declared_inputs: open dims -1 and no bytes, static ones as declared. */
START_TEST(declared_inputs)
{
	char path[128], npum[160];
	npu_tensor_info *t = NULL;
	npu_model *m = NULL;
	size_t n = 0;

	model_file(DIMS_NAMED, path, sizeof(path));
	ck_assert_int_eq(npu_model_declared_inputs(path, &t, &n), NPU_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(t[0].name, "x");
	ck_assert_int_eq(t[0].dtype, NPU_DTYPE_FLOAT32);
	ck_assert_int_eq(t[0].rank, 4);
	ck_assert(t[0].dims[0] == -1 && t[0].dims[1] == 3 && t[0].dims[2] == -1 &&
		  t[0].dims[3] == -1);
	ck_assert_uint_eq(t[0].bytes, 0);
	ck_assert_str_eq(t[1].name, "b");
	ck_assert(t[1].rank == 4 && t[1].dims[1] == 4 && t[1].bytes == 16);
	npu_declared_inputs_free(t, n);
	remove(path);
	/* No declared shape: rank -1. */
	model_file(DIMS_NONE, path, sizeof(path));
	ck_assert_int_eq(npu_model_declared_inputs(path, &t, &n), NPU_OK);
	ck_assert(n == 2 && t[0].rank == -1 && t[0].bytes == 0);
	npu_declared_inputs_free(t, n);
	remove(path);
	/* A compiled model has no declared shapes to look at. */
	model_file(DIMS_STATIC, path, sizeof(path));
	ck_assert_int_eq(npu_model_load_file(path, NULL, NULL, &m), NPU_OK);
	snprintf(npum, sizeof(npum), "%s.npum", path);
	ck_assert_int_eq(npu_model_save(m, npum), NPU_OK);
	npu_model_free(m);
	ck_assert_int_eq(npu_model_declared_inputs(npum, &t, &n), NPU_ERR_FORMAT);
	ck_assert_ptr_null(t);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "is a compiled model"));
	ck_assert_int_eq(npu_model_declared_inputs("/nonexistent.onnx", &t, &n), NPU_ERR_IO);
	ck_assert_int_eq(npu_model_declared_inputs(NULL, &t, &n), NPU_ERR_INVALID_ARG);
	remove(npum);
	remove(path);
}
END_TEST

static Suite *shapes_suite(void)
{
	Suite *s = suite_create("npu_shapes");
	TCase *tc = tcase_create("input_shapes");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, symbolic_runs_as_static);
	tcase_add_test(tc, pipelined_batch);
	tcase_add_test(tc, missing_shape);
	tcase_add_test(tc, old_struct_size_ignores_shapes);
	tcase_add_test(tc, contradictions);
	tcase_add_test(tc, bad_shapes);
	tcase_add_test(tc, declared_inputs);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(shapes_suite)
