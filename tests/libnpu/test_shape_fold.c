// SPDX-License-Identifier: MIT
/*
 * Shape arithmetic folds once the shapes are given (issue 15, section 1):
 * a model with a symbolic input x [N, S] whose shape subgraph uses one
 * operator family (Shape, Size, Range, ConstantOfShape, Equal/Where,
 * Expand, Slice, Concat, Gather, Cast on shape tensors) is parsed with
 * npu_compile_options-style input shapes, and after shape inference none
 * of those nodes is left; then it compiles and runs on the emulator and
 * gives the output the shapes imply, against a C reference.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_compile.h"
#include "ir_build.h"
#include "npu_test.h"
#include "onnx_build.h"

#define D(...) ((const int64_t[]){ __VA_ARGS__ })

/* The shape the tests give x [N, S]. */
#define TN 2
#define TS 6

/* A new model, opset 13, with input x [N, S] (symbolic). */
static onnxb *model_x(void)
{
	onnxb *b = onnxb_new(8, 13);

	onnxb_input(b, "x", ONNXB_F32, 2, D(-1, -1));
	return b;
}

static Onnx__TensorProto *f32_tensor(onnxb *b, float v)
{
	return onnxb_tensor(b, "value", ONNXB_F32, 1, D(1), &v, sizeof(v));
}

/*
 * Parse @b's model with x = [TN, TS]; check that no node of the operators
 * in @gone (comma-separated) is left after shape inference, that output y
 * has dims @yd[@yr]; compile, run on x = 0, 1, 2, ... and compare y with
 * @want (NULL: y equals x element by element).
 */
static void check(onnxb *b, const char *gone, int yr, const int64_t *yd, const float *want)
{
	npu_input_shape s = { .name = "x", .rank = 2, .dims = { TN, TS } };
	struct npu_compile_target tgt = { 0 };
	struct npu_cmodel *cm;
	npu_ir_graph *g = NULL;
	float x[TN * TS], y[TN * TS];
	size_t len;
	uint8_t *buf;
	npu_status st;
	int yt;
	char ops[128];

	onnxb_output(b, "y", ONNXB_F32, -1, NULL);
	buf = onnxb_pack(b, &len);
	onnxb_free(b);
	tgt.input_shapes = &s;
	tgt.n_input_shapes = 1;
	st = npu_compile_parse(buf, len, &tgt, &g);
	free(buf);
	ck_assert_msg(st == NPU_OK, "parse: %s", npu_last_error());
	snprintf(ops, sizeof(ops), "%s", gone);
	for (char *op = strtok(ops, ","); op; op = strtok(NULL, ","))
		for (int i = 0; i < g->n_nodes; i++)
			ck_assert_msg(g->nodes[i].dead || strcmp(g->nodes[i].op, op),
				      "%s node '%s' is left after the shapes were given", op,
				      g->nodes[i].name);
	yt = npu_ir_find_tensor(g, "y");
	ck_assert_int_ge(yt, 0);
	ck_assert_int_eq(g->tensors[yt].rank, yr);
	for (int d = 0; d < yr; d++)
		ck_assert_int_eq(g->tensors[yt].dims[d], yd[d]);
	st = irb_compile(g, "emu", &cm);
	ck_assert_msg(st == NPU_OK, "compile: %s", npu_last_error());
	for (int i = 0; i < TN * TS; i++)
		x[i] = (float)i;
	st = irb_exec(cm, "emu", (void *[]){ x }, (void *[]){ y });
	ck_assert_msg(st == NPU_OK, "run: %s", npu_last_error());
	for (int i = 0; i < TN * TS; i++)
		ck_assert_msg(fabsf(y[i] - (want ? want[i] : x[i])) <= 1e-6f,
			      "element %d: %g, expected %g", i, y[i], want ? want[i] : x[i]);
	npu_ir_graph_free(g);
}

/* torch's view(x.size(0), -1): Shape, Gather, Unsqueeze, Concat. */
START_TEST(fold_shape_gather_concat)
{
	onnxb *b = model_x();

	onnxb_init_i64(b, "zero", 1, D(0));
	onnxb_init_i64(b, "minus1", 1, D(-1));
	onnxb_init(b, "i0", ONNXB_I64, 0, NULL, D(0), sizeof(int64_t));
	onnxb_node(b, "Shape", "shape", "x", "s");
	onnxb_node(b, "Gather", "gather", "s,i0", "n");
	onnxb_node(b, "Unsqueeze", "unsq", "n,zero", "nu");
	onnxb_attr_i(b, onnxb_node(b, "Concat", "concat", "nu,minus1", "shp"), "axis", 0);
	onnxb_node(b, "Reshape", "reshape", "x,shp", "y");
	check(b, "Shape,Gather,Unsqueeze,Concat", 2, D(TN, TS), NULL);
}
END_TEST

/* x.reshape(x.numel()): Size. */
START_TEST(fold_size)
{
	onnxb *b = model_x();

	onnxb_init_i64(b, "zero", 1, D(0));
	onnxb_node(b, "Size", "size", "x", "n");
	onnxb_node(b, "Unsqueeze", "unsq", "n,zero", "shp");
	onnxb_node(b, "Reshape", "reshape", "x,shp", "y");
	check(b, "Size,Unsqueeze", 1, D(TN * TS), NULL);
}
END_TEST

/* Positions: x + arange(x.size(1)).float(): Range and Cast. */
START_TEST(fold_range_cast)
{
	onnxb *b = model_x();
	float want[TN * TS];
	Onnx__NodeProto *n;

	onnxb_init(b, "i1", ONNXB_I64, 0, NULL, D(1), sizeof(int64_t));
	onnxb_init(b, "start", ONNXB_I64, 0, NULL, D(0), sizeof(int64_t));
	onnxb_init(b, "delta", ONNXB_I64, 0, NULL, D(1), sizeof(int64_t));
	onnxb_node(b, "Shape", "shape", "x", "s");
	onnxb_node(b, "Gather", "gather", "s,i1", "len");
	onnxb_node(b, "Range", "range", "start,len,delta", "pos");
	n = onnxb_node(b, "Cast", "cast", "pos", "posf");
	onnxb_attr_i(b, n, "to", ONNXB_F32);
	onnxb_node(b, "Add", "add", "x,posf", "y");
	for (int i = 0; i < TN * TS; i++)
		want[i] = (float)i + (float)(i % TS);
	check(b, "Shape,Gather,Range,Cast", 2, D(TN, TS), want);
}
END_TEST

/* x + ones(x.shape): ConstantOfShape. */
START_TEST(fold_constant_of_shape)
{
	onnxb *b = model_x();
	float want[TN * TS];
	Onnx__NodeProto *n;

	onnxb_node(b, "Shape", "shape", "x", "s");
	n = onnxb_node(b, "ConstantOfShape", "cos", "s", "ones");
	onnxb_attr_t(b, n, "value", f32_tensor(b, 1.5f));
	onnxb_node(b, "Add", "add", "x,ones", "y");
	for (int i = 0; i < TN * TS; i++)
		want[i] = (float)i + 1.5f;
	check(b, "Shape,ConstantOfShape", 2, D(TN, TS), want);
}
END_TEST

/*
 * torch's expand(x.shape) of a constant row: Where(Equal(shape, -1), 1,
 * shape) and Expand.
 */
START_TEST(fold_equal_where_expand)
{
	onnxb *b = model_x();
	float row[TS], want[TN * TS];

	for (int j = 0; j < TS; j++)
		row[j] = 0.25f * (float)j;
	onnxb_init_f32(b, "row", 2, D(1, TS), row);
	onnxb_init_i64(b, "minus1", 2, D(-1, -1));
	onnxb_init_i64(b, "ones", 2, D(1, 1));
	onnxb_node(b, "Shape", "shape", "x", "s");
	onnxb_node(b, "Equal", "equal", "s,minus1", "e");
	onnxb_node(b, "Where", "where", "e,ones,s", "w");
	onnxb_node(b, "Expand", "expand", "row,w", "r");
	onnxb_node(b, "Add", "add", "x,r", "y");
	for (int i = 0; i < TN * TS; i++)
		want[i] = (float)i + row[i % TS];
	check(b, "Shape,Equal,Where,Expand", 2, D(TN, TS), want);
}
END_TEST

/* x.view(x.shape[1:] + (-1,)): Slice of a shape. */
START_TEST(fold_slice)
{
	onnxb *b = model_x();

	onnxb_init_i64(b, "one", 1, D(1));
	onnxb_init_i64(b, "two", 1, D(2));
	onnxb_init_i64(b, "zero", 1, D(0));
	onnxb_init_i64(b, "minus1", 1, D(-1));
	onnxb_node(b, "Shape", "shape", "x", "s");
	onnxb_node(b, "Slice", "slice", "s,one,two,zero", "tail");
	onnxb_attr_i(b, onnxb_node(b, "Concat", "concat", "tail,minus1", "shp"), "axis", 0);
	onnxb_node(b, "Reshape", "reshape", "x,shp", "y");
	check(b, "Shape,Slice,Concat", 2, D(TS, TN), NULL);
}
END_TEST

/* Opset 15's Shape(x, start=1): the same without a Slice. */
START_TEST(fold_shape_start)
{
	onnxb *b = onnxb_new(8, 15);
	Onnx__NodeProto *n;

	onnxb_input(b, "x", ONNXB_F32, 2, D(-1, -1));
	onnxb_init_i64(b, "minus1", 1, D(-1));
	n = onnxb_node(b, "Shape", "shape", "x", "tail");
	onnxb_attr_i(b, n, "start", 1);
	onnxb_attr_i(b, n, "end", 2);
	onnxb_attr_i(b, onnxb_node(b, "Concat", "concat", "tail,minus1", "shp"), "axis", 0);
	onnxb_node(b, "Reshape", "reshape", "x,shp", "y");
	check(b, "Shape,Concat", 2, D(TS, TN), NULL);
}
END_TEST

/* A shape through float and back: Cast, Div, Cast. */
START_TEST(fold_cast_of_shape)
{
	onnxb *b = model_x();
	const float div[2] = { (float)TN, 1.0f / (float)TN };
	Onnx__NodeProto *n;

	onnxb_init_f32(b, "div", 1, D(2), div);
	onnxb_node(b, "Shape", "shape", "x", "s");
	n = onnxb_node(b, "Cast", "tofloat", "s", "sf");
	onnxb_attr_i(b, n, "to", ONNXB_F32);
	onnxb_node(b, "Div", "div", "sf,div", "q");
	n = onnxb_node(b, "Cast", "toint", "q", "shp");
	onnxb_attr_i(b, n, "to", ONNXB_I64);
	onnxb_node(b, "Reshape", "reshape", "x,shp", "y");
	check(b, "Shape,Cast,Div", 2, D(1, TN * TS), NULL);
}
END_TEST

/*
 * tf2onnx's pads (M-LSD): a constant Split into scalars, put back together
 * in another order by a Concat.  Here the pieces make a Reshape's shape.
 */
START_TEST(fold_split_reorder)
{
	onnxb *b = model_x();

	onnxb_init_i64(b, "parts", 3, D(TS, 99, TN));
	onnxb_init_i64(b, "sizes", 3, D(1, 1, 1));
	onnxb_node(b, "Split", "split", "parts,sizes", "a,unused,c");
	onnxb_attr_i(b, onnxb_node(b, "Concat", "concat", "a,c", "shp"), "axis", 0);
	onnxb_node(b, "Reshape", "reshape", "x,shp", "y");
	check(b, "Split,Concat", 2, D(TS, TN), NULL);
}
END_TEST

/* A constant float Split along axis 1 into unequal parts, swapped back. */
START_TEST(fold_split_axis1)
{
	onnxb *b = model_x();
	float w[TN * TS], want[TN * TS];

	for (int i = 0; i < TN * TS; i++)
		w[i] = 0.5f * (float)(i * 7 % 11);
	onnxb_init_f32(b, "w", 2, D(TN, TS), w);
	onnxb_init_i64(b, "sizes", 2, D(2, TS - 2));
	onnxb_attr_i(b, onnxb_node(b, "Split", "split", "w,sizes", "w0,w1"), "axis", 1);
	onnxb_attr_i(b, onnxb_node(b, "Concat", "concat", "w1,w0", "r"), "axis", 1);
	onnxb_node(b, "Add", "add", "x,r", "y");
	/* r is w with its columns rotated left by 2. */
	for (int n = 0; n < TN; n++)
		for (int j = 0; j < TS; j++)
			want[n * TS + j] = (float)(n * TS + j) + w[n * TS + (j + 2) % TS];
	check(b, "Split,Concat", 2, D(TN, TS), want);
}
END_TEST

static Suite *shape_fold_suite(void)
{
	Suite *s = suite_create("npu_shape_fold");
	TCase *tc = tcase_create("shape_fold");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, fold_shape_gather_concat);
	tcase_add_test(tc, fold_size);
	tcase_add_test(tc, fold_range_cast);
	tcase_add_test(tc, fold_constant_of_shape);
	tcase_add_test(tc, fold_equal_where_expand);
	tcase_add_test(tc, fold_slice);
	tcase_add_test(tc, fold_shape_start);
	tcase_add_test(tc, fold_cast_of_shape);
	tcase_add_test(tc, fold_split_reorder);
	tcase_add_test(tc, fold_split_axis1);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(shape_fold_suite)
