// SPDX-License-Identifier: MIT
/*
 * Inputs fixed to a value at compile time (npu_compile_options.
 * input_values, compile/npu_input_values.c): x float32[4] and sr int64 (a
 * scalar) -> If(sr == 16000) then x * 2 else x + 1 -> y, built as ONNX
 * bytes.  Fixed each way, the model runs the chosen branch (against a C
 * reference) and takes x alone (sr given at run time as well: NPU_ERR_INVALID_ARG);
 * an else branch that cannot take x's shape (Reshape to [3, -1]) compiles
 * when sr is fixed to 16000 and fails otherwise; every wrong value is
 * refused naming the input.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "npu.h"
#include "npu_test.h"
#include "onnx_build.h"

enum { N = 4 };

/* then: x * 2. */
static onnxb *twice(void)
{
	onnxb *b = onnxb_new(8, 13);

	onnxb_init_f32(b, "two", 0, NULL, (float[]){ 2 });
	onnxb_node(b, "Mul", NULL, "x,two", "out");
	onnxb_output(b, "out", ONNXB_F32, 1, (int64_t[]){ N });
	return b;
}

/* else: x + 1, or @bad: Reshape(x, [3, -1]) + 1, which 4 elements cannot take. */
static onnxb *plus_one(bool bad)
{
	onnxb *b = onnxb_new(8, 13);

	onnxb_init_f32(b, "one", 0, NULL, (float[]){ 1 });
	if (bad) {
		onnxb_init_i64(b, "shape", 2, (int64_t[]){ 3, -1 });
		onnxb_node(b, "Reshape", NULL, "x,shape", "r");
		onnxb_node(b, "Add", NULL, "r,one", "out");
	} else {
		onnxb_node(b, "Add", NULL, "x,one", "out");
	}
	onnxb_output(b, "out", ONNXB_F32, -1, NULL);
	return b;
}

static uint8_t *model(bool bad, size_t *len)
{
	onnxb *m = onnxb_new(8, 13), *t = twice(), *e = plus_one(bad);
	Onnx__NodeProto *n;
	uint8_t *buf;

	onnxb_input(m, "x", ONNXB_F32, 1, (int64_t[]){ N });
	onnxb_input(m, "sr", ONNXB_I64, 0, NULL);
	onnxb_init(m, "rate", ONNXB_I64, 0, NULL, (int64_t[]){ 16000 }, 8);
	onnxb_node(m, "Equal", NULL, "sr,rate", "c");
	n = onnxb_node(m, "If", "if_sr", "c", "y");
	onnxb_attr_g(m, n, "then_branch", onnxb_model(t)->graph);
	onnxb_attr_g(m, n, "else_branch", onnxb_model(e)->graph);
	onnxb_output(m, "y", ONNXB_F32, -1, NULL);
	buf = onnxb_pack(m, len);
	onnxb_free(m);
	onnxb_free(t);
	onnxb_free(e);
	return buf;
}

/* Load @bad's model with the values @v[@n]: the status, the model in *@out (may be NULL). */
static npu_status load(bool bad, const npu_tensor *v, size_t n, npu_device *dev, npu_model **out)
{
	npu_compile_options o;
	npu_model *m = NULL;
	size_t len;
	uint8_t *buf = model(bad, &len);
	npu_status st;

	npu_compile_options_init(&o);
	o.input_values = v;
	o.n_input_values = n;
	st = npu_model_load_memory(buf, len, dev, &o, &m);
	free(buf);
	if (out)
		*out = m;
	else
		npu_model_free(m);
	return st;
}

#define SR(val) { .name = "sr", .dtype = NPU_DTYPE_INT64, .data = (int64_t[]){ val }, .bytes = 8 }

START_TEST(fixed_each_way)
{
	static const int64_t rates[] = { 16000, 8000 };
	float x[N] = { -1.5f, 0, 2.25f, 7 }, y[N], want[N];
	npu_device *dev = NULL;

	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	for (int r = 0; r < 2; r++) {
		npu_tensor v = { .name = "sr", .dtype = NPU_DTYPE_INT64,
				 .data = (void *)&rates[r], .bytes = 8 };
		npu_tensor in = { .name = "x", .dtype = NPU_DTYPE_FLOAT32, .data = x,
				  .bytes = sizeof(x) };
		npu_tensor out = { .name = "y", .dtype = NPU_DTYPE_FLOAT32, .data = y,
				   .bytes = sizeof(y) };
		npu_context *ctx = NULL;
		npu_model *m = NULL;
		npu_tensor_info ti;

		ck_assert_msg(load(false, &v, 1, dev, &m) == NPU_OK, "%s", npu_last_error());
		/* sr is no input any more: x alone. */
		ck_assert_uint_eq(npu_model_input_count(m), 1);
		ck_assert_int_eq(npu_model_input_info(m, 0, &ti), NPU_OK);
		ck_assert_str_eq(ti.name, "x");
		ck_assert_int_eq(npu_context_create(dev, m, 0, &ctx), NPU_OK);
		/* Given at run time as well: the model takes one input. */
		ck_assert_int_eq(npu_run(ctx, (npu_tensor[]){ in, v }, 2, &out, 1),
				 NPU_ERR_INVALID_ARG);
		ck_assert_str_eq(npu_last_error(), "2 inputs given, the model has 1");
		ck_assert_msg(npu_run(ctx, &in, 1, &out, 1) == NPU_OK, "%s", npu_last_error());
		for (int i = 0; i < N; i++)
			want[i] = rates[r] == 16000 ? x[i] * 2 : x[i] + 1;
		for (int i = 0; i < N; i++)
			ck_assert_msg(y[i] == want[i], "sr %lld: y[%d] %g, want %g",
				      (long long)rates[r], i, y[i], want[i]);
		npu_context_destroy(ctx);
		npu_model_free(m);
	}
	npu_device_close(dev);
}
END_TEST

/* The branch sr does not choose is never shape-checked. */
START_TEST(unchosen_branch_dropped)
{
	const npu_tensor v16 = SR(16000), v8 = SR(8000);

	ck_assert_msg(load(true, &v16, 1, NULL, NULL) == NPU_OK, "%s", npu_last_error());
	ck_assert_int_eq(load(true, &v8, 1, NULL, NULL), NPU_ERR_SHAPE);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "Reshape"));
	/* Not fixed: both branches run and must agree, which they cannot. */
	ck_assert_int_ne(load(true, NULL, 0, NULL, NULL), NPU_OK);
}
END_TEST

/* Load the good model with @v[@n], expect NPU_ERR_INVALID_ARG; the message. */
static const char *refused(const npu_tensor *v, size_t n)
{
	npu_status st = load(false, v, n, NULL, NULL);

	ck_assert_msg(st == NPU_ERR_INVALID_ARG, "got %s: %s", npu_status_str(st),
		      npu_last_error());
	return npu_last_error();
}

START_TEST(bad_values)
{
	const npu_tensor two[] = { SR(16000), SR(8000) };
	const npu_tensor nobody = { .name = "rate", .dtype = NPU_DTYPE_INT64,
				    .data = (int64_t[]){ 1 }, .bytes = 8 };
	const npu_tensor f32 = { .name = "sr", .dtype = NPU_DTYPE_FLOAT32,
				 .data = (float[]){ 16000 }, .bytes = 4 };
	const npu_tensor big = { .name = "sr", .dtype = NPU_DTYPE_INT64,
				 .data = (int64_t[]){ 1, 2 }, .bytes = 16 };
	const npu_tensor nodata = { .name = "sr", .dtype = NPU_DTYPE_INT64, .bytes = 8 };
	const npu_tensor noname = { .dtype = NPU_DTYPE_INT64, .data = (int64_t[]){ 1 },
				    .bytes = 8 };

	ck_assert_str_eq(refused(&nobody, 1),
			 "a value is given for 'rate', which is not an input of the model; its inputs are 'x', 'sr'");
	ck_assert_str_eq(refused(two, 2), "the value of input 'sr' is given twice: give it once");
	ck_assert_str_eq(refused(&f32, 1),
			 "the value given for input 'sr' is float32, but the model declares int64[]: give int64 data");
	ck_assert_str_eq(refused(&big, 1),
			 "the value given for input 'sr' is 16 bytes, but the model declares int64[]: give 1 values (8 bytes)");
	ck_assert_str_eq(refused(&nodata, 1),
			 "the value given for input 'sr' is 0 bytes, but the model declares int64[]: give 1 values (8 bytes)");
	ck_assert_ptr_nonnull(strstr(refused(&noname, 1), "input value #0 has no name"));
	ck_assert_ptr_nonnull(strstr(refused(NULL, 1), "input_values is NULL"));
}
END_TEST

static Suite *fixinput_suite(void)
{
	Suite *s = suite_create("npu_fixinput");
	TCase *tc = tcase_create("input_values");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, fixed_each_way);
	tcase_add_test(tc, unchosen_branch_dropped);
	tcase_add_test(tc, bad_values);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(fixinput_suite)
