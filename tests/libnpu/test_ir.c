// SPDX-License-Identifier: MIT
/*
 * The graph IR: tables, attributes, topological sort, dead nodes, dump;
 * shape inference for every supported operator; constant folding of
 * shape subgraphs.  Models are built with protobuf-c (onnx_build.h) and go
 * through the real parser.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_ops.h"
#include "ir/npu_ir.h"
#include "npu_test.h"
#include "onnx/npu_onnx.h"
#include "onnx_build.h"

#define D(...) ((const int64_t[]){ __VA_ARGS__ })

/* Pack, parse and infer: the graph, or NULL with *@st the failure. */
static npu_ir_graph *build(onnxb *b, npu_status *st)
{
	npu_ir_graph *g = NULL;
	size_t len;
	uint8_t *buf = onnxb_pack(b, &len);

	*st = npu_onnx_parse(buf, len, &g);
	if (!*st)
		*st = npu_ops_infer_shapes(g);
	free(buf);
	if (*st) {
		npu_ir_graph_free(g);
		g = NULL;
	}
	onnxb_free(b);
	return g;
}

static npu_ir_graph *build_ok(onnxb *b)
{
	npu_status st;
	npu_ir_graph *g = build(b, &st);

	ck_assert_msg(g, "expected success, got %s: %s", npu_status_str(st), npu_last_error());
	return g;
}

/* Expect failure @want; returns the message. */
static const char *build_fail(onnxb *b, npu_status want)
{
	npu_status st;
	npu_ir_graph *g = build(b, &st);

	ck_assert_ptr_null(g);
	ck_assert_msg(st == want, "expected %s, got %s: %s", npu_status_str(want),
		      npu_status_str(st), npu_last_error());
	return npu_last_error();
}

static const char *shape(const npu_ir_graph *g, const char *name)
{
	static char buf[4][160];
	static int k;
	int t = npu_ir_find_tensor(g, name);

	k = (k + 1) % 4;
	if (t < 0)
		return "none";
	return npu_ir_shape_str(&g->tensors[t], buf[k], sizeof(buf[k]));
}

static const npu_ir_node *node_of(const npu_ir_graph *g, const char *op)
{
	for (int i = 0; i < g->n_nodes; i++)
		if (!strcmp(g->nodes[i].op, op))
			return &g->nodes[i];
	return NULL;
}

static void ck_ints(const npu_ir_node *n, const char *attr, int count, const int64_t *want)
{
	const int64_t *v;
	int c;

	ck_assert_int_eq(npu_ir_attr_ints(n, attr, &v, &c), NPU_OK);
	ck_assert_int_eq(c, count);
	for (int i = 0; i < count; i++)
		ck_assert_int_eq(v[i], want[i]);
}

/* A model with float input x of @rank/@dims, output y undeclared. */
static onnxb *model_x(int opset, int rank, const int64_t *dims)
{
	onnxb *b = onnxb_new(8, opset);

	onnxb_input(b, "x", ONNXB_F32, rank, dims);
	onnxb_output(b, "y", 0, -1, NULL);
	return b;
}

/* ---- IR API ---- */

START_TEST(ir_tables_and_attrs)
{
	npu_ir_graph *g;
	int a, b2, c, anon, n;
	int64_t iv;
	float fv;
	const char *sv;
	const int64_t *ints;
	int cnt;

	ck_assert_int_eq(npu_ir_graph_create(&g), NPU_OK);
	g->opset = 13;
	ck_assert_int_eq(npu_ir_add_tensor(g, "a", NPU_DTYPE_FLOAT32, 2, D(2, 3), &a), NPU_OK);
	ck_assert_int_eq(npu_ir_add_tensor(g, "a", NPU_DTYPE_FLOAT32, 1, D(1), &b2),
			 NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_ir_add_tensor(g, "b", NPU_DTYPE_FLOAT32, -1, NULL, &b2), NPU_OK);
	ck_assert_int_eq(npu_ir_add_tensor(g, NULL, NPU_DTYPE_INT64, 1, D(2), &anon), NPU_OK);
	ck_assert_int_eq(npu_ir_find_tensor(g, "a"), a);
	ck_assert_int_eq(npu_ir_find_tensor(g, g->tensors[anon].name), anon);
	ck_assert_int_eq(npu_ir_find_tensor(g, "zz"), -1);
	ck_assert_int_eq(npu_ir_numel(&g->tensors[a]), 6);
	ck_assert_int_eq(npu_ir_numel(&g->tensors[b2]), -1);
	/* Many tensors: the name index grows. */
	for (int i = 0; i < 500; i++)
		ck_assert_int_eq(npu_ir_add_tensor(g, NULL, NPU_DTYPE_INT8, 0, NULL, NULL), NPU_OK);
	ck_assert_int_eq(npu_ir_find_tensor(g, "b"), b2);
	ck_assert_int_eq(npu_ir_set_const(g, anon, D(4, 5), 16), NPU_OK);
	{
		int64_t v[4];

		ck_assert_int_eq(npu_ir_const_ints(&g->tensors[anon], v, 4, &cnt), NPU_OK);
		ck_assert_int_eq(cnt, 2);
		ck_assert_int_eq(v[1], 5);
		ck_assert_int_eq(npu_ir_const_ints(&g->tensors[anon], v, 1, &cnt), NPU_ERR_SHAPE);
	}
	ck_assert_int_eq(npu_ir_add_tensor(g, "c", 0, -1, NULL, &c), NPU_OK);
	ck_assert_int_eq(npu_ir_add_node(g, "Relu", "r", (int[]){ a }, 1, (int[]){ c }, 1, &n),
			 NPU_OK);
	ck_assert_int_eq(g->tensors[c].producer, n);
	ck_assert_int_eq(npu_ir_add_node(g, "Relu", "r2", (int[]){ a }, 1, (int[]){ c }, 1, NULL),
			 NPU_ERR_INVALID_ARG);

	/* Attributes: defaults, setters, type checks. */
	ck_assert_int_eq(npu_ir_attr_int(&g->nodes[n], "group", 1, &iv), NPU_OK);
	ck_assert_int_eq(iv, 1);
	ck_assert_int_eq(npu_ir_set_attr_int(&g->nodes[n], "group", 4), NPU_OK);
	ck_assert_int_eq(npu_ir_set_attr_float(&g->nodes[n], "alpha", 0.5f), NPU_OK);
	ck_assert_int_eq(npu_ir_set_attr_string(&g->nodes[n], "mode", "edge"), NPU_OK);
	ck_assert_int_eq(npu_ir_set_attr_ints(&g->nodes[n], "pads", D(1, 2, 3, 4), 4), NPU_OK);
	ck_assert_int_eq(npu_ir_attr_int(&g->nodes[n], "group", 1, &iv), NPU_OK);
	ck_assert_int_eq(iv, 4);
	ck_assert_int_eq(npu_ir_attr_float(&g->nodes[n], "group", 0, &fv), NPU_OK);
	ck_assert(fv == 4.0f);	/* an INT where a FLOAT is asked */
	ck_assert_int_eq(npu_ir_attr_string(&g->nodes[n], "mode", "constant", &sv), NPU_OK);
	ck_assert_str_eq(sv, "edge");
	ck_assert_int_eq(npu_ir_attr_ints(&g->nodes[n], "pads", &ints, &cnt), NPU_OK);
	ck_assert_int_eq(cnt, 4);
	ck_assert_int_eq(ints[3], 4);
	ck_assert_int_eq(npu_ir_attr_ints(&g->nodes[n], "axes", &ints, &cnt), NPU_OK);
	ck_assert_int_eq(cnt, -1);
	ck_assert_ptr_null(ints);
	ck_assert_int_eq(npu_ir_attr_int(&g->nodes[n], "alpha", 0, &iv), NPU_ERR_FORMAT);
	ck_assert_str_eq(npu_last_error(),
			 "node 'r' (Relu): attribute 'alpha' is a float, expected an int");
	ck_assert_int_eq(npu_ir_set_attr_int(&g->nodes[n], "alpha", 7), NPU_OK);	/* replaces */
	ck_assert_int_eq(npu_ir_attr_int(&g->nodes[n], "alpha", 0, &iv), NPU_OK);
	ck_assert_int_eq(iv, 7);
	npu_ir_remove_attr(&g->nodes[n], "alpha");
	ck_assert_ptr_null(npu_ir_attr_find(&g->nodes[n], "alpha"));
	ck_assert_int_eq(g->nodes[n].n_attrs, 3);
	npu_ir_graph_free(g);
	npu_ir_graph_free(NULL);
}
END_TEST

START_TEST(ir_topo_sort_and_dead)
{
	npu_ir_graph *g;
	int x, t1, t2, t3, unused, w, y;
	char *text;
	size_t tlen;
	FILE *f;

	ck_assert_int_eq(npu_ir_graph_create(&g), NPU_OK);
	npu_ir_add_tensor(g, "x", NPU_DTYPE_FLOAT32, 1, D(4), &x);
	npu_ir_add_tensor(g, "t1", 0, -1, NULL, &t1);
	npu_ir_add_tensor(g, "t2", 0, -1, NULL, &t2);
	npu_ir_add_tensor(g, "t3", 0, -1, NULL, &t3);
	npu_ir_add_tensor(g, "unused", 0, -1, NULL, &unused);
	npu_ir_add_tensor(g, "w", NPU_DTYPE_FLOAT32, 1, D(4), &w);
	npu_ir_add_tensor(g, "y", 0, -1, NULL, &y);
	npu_ir_set_const(g, w, (float[]){ 1, 2, 3, 4 }, 16);
	g->inputs = malloc(sizeof(int));
	g->inputs[g->n_inputs++] = x;
	g->outputs = malloc(sizeof(int));
	g->outputs[g->n_outputs++] = y;
	/* Added consumers first: y = t3 + t2, t3 = relu(t1), t2 = t1 * w, t1 = neg(x). */
	npu_ir_add_node(g, "Add", "add", (int[]){ t3, t2 }, 2, (int[]){ y }, 1, NULL);
	npu_ir_add_node(g, "Relu", "relu", (int[]){ t1 }, 1, (int[]){ t3 }, 1, NULL);
	npu_ir_add_node(g, "Exp", "dead", (int[]){ w }, 1, (int[]){ unused }, 1, NULL);
	npu_ir_add_node(g, "Mul", "mul", (int[]){ t1, w }, 2, (int[]){ t2 }, 1, NULL);
	npu_ir_add_node(g, "Neg", "neg", (int[]){ x }, 1, (int[]){ t1 }, 1, NULL);
	ck_assert_int_eq(npu_ir_topo_sort(g), NPU_OK);
	ck_assert_str_eq(g->nodes[0].op, "Exp");	/* ready first, stays first */
	ck_assert_str_eq(g->nodes[1].op, "Neg");
	ck_assert_str_eq(g->nodes[4].op, "Add");
	for (int i = 0; i < g->n_nodes; i++)
		for (int j = 0; j < g->nodes[i].n_outputs; j++)
			ck_assert_int_eq(g->tensors[g->nodes[i].outputs[j]].producer, i);
	ck_assert_int_eq(npu_ir_count_uses(g, t1), 2);
	ck_assert(npu_ir_is_graph_output(g, y));

	ck_assert_int_eq(npu_ir_remove_dead(g), NPU_OK);
	ck_assert_int_eq(g->n_nodes, 4);
	ck_assert_ptr_nonnull(g->tensors[w].data);	/* Mul still reads it */
	g->nodes[2].dead = true;	/* mul: a pass folded it away */
	g->nodes[3].inputs[1] = t3;	/* add now reads t3 twice */
	ck_assert_int_eq(npu_ir_remove_dead(g), NPU_OK);
	ck_assert_int_eq(g->n_nodes, 3);
	ck_assert_ptr_null(g->tensors[w].data);	/* nothing reads w: freed */

	f = open_memstream(&text, &tlen);
	npu_ir_dump(g, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "input  %0 \"x\" float32[4]"));
	ck_assert_ptr_nonnull(strstr(text, "node 2: Add \"add\" (%3, %3) -> (%6 ?[?])"));
	free(text);

	/* A cycle: t1 = neg(t3). */
	g->nodes[0].inputs[0] = t3;
	ck_assert_int_eq(npu_ir_topo_sort(g), NPU_ERR_FORMAT);
	ck_assert_str_eq(npu_last_error(), "the graph has a cycle through node 'neg' (Neg)");
	npu_ir_graph_free(g);
}
END_TEST

START_TEST(ir_half_precision)
{
	ck_assert_uint_eq(npu_ir_f32_to_f16(1.0f), 0x3c00);
	ck_assert_uint_eq(npu_ir_f32_to_f16(-2.0f), 0xc000);
	ck_assert_uint_eq(npu_ir_f32_to_f16(65504.0f), 0x7bff);
	ck_assert_uint_eq(npu_ir_f32_to_f16(65520.0f), 0x7c00);	/* rounds to inf */
	ck_assert_uint_eq(npu_ir_f32_to_f16(5.9604645e-8f), 0x0001);	/* smallest subnormal */
	ck_assert_uint_eq(npu_ir_f32_to_f16(1.0f + 1.0f / 2048), 0x3c00);	/* tie to even */
	ck_assert(isnan(npu_ir_f16_to_f32(npu_ir_f32_to_f16(NAN))));
	ck_assert(npu_ir_f16_to_f32(0x3555) == 0.333251953125f);
	ck_assert(npu_ir_f16_to_f32(0x0001) == 5.9604645e-8f);
	ck_assert_uint_eq(npu_ir_f32_to_bf16(1.0f), 0x3f80);
	ck_assert_uint_eq(npu_ir_f32_to_bf16(1.00390625f), 0x3f80);	/* tie to even */
	ck_assert(npu_ir_bf16_to_f32(0x4049) == 3.140625f);
	ck_assert(isnan(npu_ir_bf16_to_f32(npu_ir_f32_to_bf16(NAN))));
}
END_TEST

/* ---- convolution and pooling ---- */

START_TEST(shape_conv)
{
	onnxb *b;
	npu_ir_graph *g;
	Onnx__NodeProto *n;

	/* pads 1, stride 2: (9 + 2 - 3) / 2 + 1 = 5; bias. */
	b = model_x(13, 4, D(1, 4, 9, 9));
	onnxb_init_f32(b, "w", 4, D(8, 4, 3, 3), NULL);
	onnxb_init_f32(b, "bias", 1, D(8), NULL);
	n = onnxb_node(b, "Conv", "c", "x,w,bias", "y");
	onnxb_attr_ints(b, n, "pads", 4, D(1, 1, 1, 1));
	onnxb_attr_ints(b, n, "strides", 2, D(2, 2));
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[1,8,5,5]");
	ck_ints(node_of(g, "Conv"), "kernel_shape", 2, D(3, 3));
	ck_ints(node_of(g, "Conv"), "dilations", 2, D(1, 1));
	npu_ir_graph_free(g);

	/* Groups and dilations: kernel extent 5. */
	b = model_x(13, 4, D(1, 4, 9, 9));
	onnxb_init_f32(b, "w", 4, D(8, 2, 3, 3), NULL);
	n = onnxb_node(b, "Conv", "c", "x,w", "y");
	onnxb_attr_i(b, n, "group", 2);
	onnxb_attr_ints(b, n, "dilations", 2, D(2, 2));
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[1,8,5,5]");
	npu_ir_graph_free(g);

	/* Depthwise, 1-D and 3-D. */
	b = model_x(13, 4, D(2, 4, 9, 7));
	onnxb_init_f32(b, "w", 4, D(4, 1, 3, 3), NULL);
	onnxb_attr_i(b, onnxb_node(b, "Conv", "c", "x,w", "y"), "group", 4);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[2,4,7,5]");
	npu_ir_graph_free(g);
	b = model_x(11, 3, D(1, 2, 10));
	onnxb_init_f32(b, "w", 3, D(3, 2, 4), NULL);
	onnxb_attr_ints(b, onnxb_node(b, "Conv", "c", "x,w", "y"), "strides", 1, D(3));
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[1,3,3]");
	npu_ir_graph_free(g);
	b = model_x(13, 5, D(1, 1, 4, 5, 6));
	onnxb_init_f32(b, "w", 5, D(2, 1, 2, 2, 2), NULL);
	onnxb_node(b, "Conv", "c", "x,w", "y");
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[1,2,3,4,5]");
	npu_ir_graph_free(g);

	/* auto_pad: SAME_UPPER puts the odd pad at the end, SAME_LOWER at the start. */
	b = model_x(13, 4, D(1, 1, 9, 9));
	onnxb_init_f32(b, "w", 4, D(1, 1, 4, 4), NULL);
	n = onnxb_node(b, "Conv", "c", "x,w", "y");
	onnxb_attr_s(b, n, "auto_pad", "SAME_UPPER");
	onnxb_attr_ints(b, n, "strides", 2, D(2, 2));
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[1,1,5,5]");
	ck_ints(node_of(g, "Conv"), "pads", 4, D(1, 1, 2, 2));
	{
		const char *ap;

		ck_assert_int_eq(npu_ir_attr_string(node_of(g, "Conv"), "auto_pad", "", &ap), NPU_OK);
		ck_assert_str_eq(ap, "NOTSET");
	}
	npu_ir_graph_free(g);
	b = model_x(13, 4, D(1, 1, 9, 9));
	onnxb_init_f32(b, "w", 4, D(1, 1, 4, 4), NULL);
	n = onnxb_node(b, "Conv", "c", "x,w", "y");
	onnxb_attr_s(b, n, "auto_pad", "SAME_LOWER");
	onnxb_attr_ints(b, n, "strides", 2, D(2, 2));
	g = build_ok(b);
	ck_ints(node_of(g, "Conv"), "pads", 4, D(2, 2, 1, 1));
	npu_ir_graph_free(g);
	b = model_x(13, 4, D(1, 1, 9, 9));
	onnxb_init_f32(b, "w", 4, D(1, 1, 3, 3), NULL);
	n = onnxb_node(b, "Conv", "c", "x,w", "y");
	onnxb_attr_s(b, n, "auto_pad", "VALID");
	onnxb_attr_ints(b, n, "strides", 2, D(2, 2));
	onnxb_attr_ints(b, n, "pads", 4, D(5, 5, 5, 5));	/* ignored under VALID */
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[1,1,4,4]");
	ck_ints(node_of(g, "Conv"), "pads", 4, D(0, 0, 0, 0));
	npu_ir_graph_free(g);

	/* Errors. */
	b = model_x(13, 4, D(1, 4, 9, 9));
	onnxb_init_f32(b, "w", 4, D(8, 3, 3, 3), NULL);
	onnxb_node(b, "Conv", "c", "x,w", "y");
	ck_assert_str_eq(build_fail(b, NPU_ERR_SHAPE),
			 "node 'c' (Conv): input channels 4, weights [8, 3, ...] and group 1 do not fit");
	b = model_x(13, 4, D(1, 4, 2, 2));
	onnxb_init_f32(b, "w", 4, D(8, 4, 3, 3), NULL);
	onnxb_node(b, "Conv", "c", "x,w", "y");
	build_fail(b, NPU_ERR_SHAPE);
	b = model_x(13, 4, D(1, 4, 9, 9));
	onnxb_init_f32(b, "w", 4, D(8, 4, 3, 3), NULL);
	onnxb_attr_ints(b, onnxb_node(b, "Conv", "c", "x,w", "y"), "strides", 2, D(0, 1));
	ck_assert_str_eq(build_fail(b, NPU_ERR_FORMAT),
			 "node 'c' (Conv): attribute 'strides' has value 0 out of range");
	b = model_x(13, 4, D(1, 4, 9, 9));
	onnxb_init_f32(b, "w", 4, D(8, 4, 3, 3), NULL);
	onnxb_node(b, "Conv", "c", "x,w", "y,extra");
	onnxb_output(b, "extra", 0, -1, NULL);
	ck_assert_str_eq(build_fail(b, NPU_ERR_FORMAT),
			 "node 'c' (Conv): output 1 ('extra') is not one that Conv has");
}
END_TEST

START_TEST(shape_conv_transpose)
{
	onnxb *b;
	npu_ir_graph *g;
	Onnx__NodeProto *n;

	b = model_x(13, 4, D(1, 2, 3, 3));
	onnxb_init_f32(b, "w", 4, D(2, 3, 3, 3), NULL);
	onnxb_attr_ints(b, onnxb_node(b, "ConvTranspose", "t", "x,w", "y"), "strides", 2, D(2, 2));
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[1,3,7,7]");
	npu_ir_graph_free(g);

	b = model_x(13, 4, D(1, 2, 3, 3));
	onnxb_init_f32(b, "w", 4, D(2, 3, 3, 3), NULL);
	n = onnxb_node(b, "ConvTranspose", "t", "x,w", "y");
	onnxb_attr_ints(b, n, "strides", 2, D(2, 2));
	onnxb_attr_ints(b, n, "output_padding", 2, D(1, 0));
	onnxb_attr_ints(b, n, "pads", 4, D(1, 0, 0, 0));
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[1,3,7,7]");
	npu_ir_graph_free(g);

	/* output_shape bigger than the natural 9x7: grows at the end. */
	b = model_x(13, 4, D(1, 1, 3, 3));
	onnxb_init_f32(b, "w", 4, D(1, 2, 3, 3), NULL);
	n = onnxb_node(b, "ConvTranspose", "t", "x,w", "y");
	onnxb_attr_ints(b, n, "strides", 2, D(3, 2));
	onnxb_attr_ints(b, n, "output_shape", 2, D(10, 8));
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[1,2,10,8]");
	ck_ints(node_of(g, "ConvTranspose"), "pads", 4, D(0, 0, 0, 0));
	ck_ints(node_of(g, "ConvTranspose"), "output_padding", 2, D(1, 1));
	ck_assert_ptr_null(npu_ir_attr_find(node_of(g, "ConvTranspose"), "output_shape"));
	npu_ir_graph_free(g);

	/* SAME_UPPER: output = input * stride, the odd pad at the end. */
	b = model_x(13, 4, D(1, 1, 3, 3));
	onnxb_init_f32(b, "w", 4, D(1, 2, 3, 3), NULL);
	n = onnxb_node(b, "ConvTranspose", "t", "x,w", "y");
	onnxb_attr_ints(b, n, "strides", 2, D(2, 2));
	onnxb_attr_s(b, n, "auto_pad", "SAME_UPPER");
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[1,2,6,6]");
	ck_ints(node_of(g, "ConvTranspose"), "pads", 4, D(0, 0, 1, 1));
	npu_ir_graph_free(g);

	/* Groups: output channels = w[1] * group. */
	b = model_x(13, 4, D(1, 4, 3, 3));
	onnxb_init_f32(b, "w", 4, D(4, 3, 2, 2), NULL);
	onnxb_attr_i(b, onnxb_node(b, "ConvTranspose", "t", "x,w", "y"), "group", 2);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[1,6,4,4]");
	npu_ir_graph_free(g);
}
END_TEST

START_TEST(shape_pool)
{
	onnxb *b;
	npu_ir_graph *g;
	Onnx__NodeProto *n;

	b = model_x(13, 4, D(1, 1, 4, 4));
	n = onnxb_node(b, "MaxPool", "p", "x", "y");
	onnxb_attr_ints(b, n, "kernel_shape", 2, D(3, 3));
	onnxb_attr_ints(b, n, "strides", 2, D(2, 2));
	onnxb_attr_i(b, n, "ceil_mode", 1);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[1,1,2,2]");
	npu_ir_graph_free(g);

	b = model_x(13, 4, D(1, 1, 4, 4));
	n = onnxb_node(b, "MaxPool", "p", "x", "y");
	onnxb_attr_ints(b, n, "kernel_shape", 2, D(3, 3));
	onnxb_attr_ints(b, n, "strides", 2, D(2, 2));
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[1,1,1,1]");
	npu_ir_graph_free(g);

	/* ceil_mode: a last window that would start in the end padding is dropped. */
	b = model_x(13, 4, D(1, 1, 5, 5));
	n = onnxb_node(b, "AveragePool", "p", "x", "y");
	onnxb_attr_ints(b, n, "kernel_shape", 2, D(2, 2));
	onnxb_attr_ints(b, n, "strides", 2, D(2, 2));
	onnxb_attr_ints(b, n, "pads", 4, D(1, 1, 1, 1));
	onnxb_attr_i(b, n, "ceil_mode", 1);
	onnxb_attr_i(b, n, "count_include_pad", 1);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[1,1,3,3]");
	npu_ir_graph_free(g);

	/* Dilations and SAME_UPPER; the Indices output of MaxPool. */
	b = model_x(12, 4, D(1, 2, 7, 7));
	n = onnxb_node(b, "MaxPool", "p", "x", "y,idx");
	onnxb_attr_ints(b, n, "kernel_shape", 2, D(2, 2));
	onnxb_attr_ints(b, n, "dilations", 2, D(2, 2));
	onnxb_attr_s(b, n, "auto_pad", "SAME_UPPER");
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[1,2,7,7]");
	ck_assert_str_eq(shape(g, "idx"), "int64[1,2,7,7]");
	ck_ints(node_of(g, "MaxPool"), "pads", 4, D(1, 1, 1, 1));
	ck_assert_int_eq(npu_ops_check_supported(g, NULL), NPU_ERR_UNSUPPORTED);
	ck_assert_str_eq(npu_last_error(),
			 "operator 'MaxPool' (node 'p', opset 12) is not supported by the NPU compiler: its Indices output (other than of a 2-D float32 pool) is not supported");
	npu_ir_graph_free(g);

	b = model_x(13, 4, D(2, 3, 5, 6));
	onnxb_node(b, "GlobalAveragePool", "p", "x", "y");
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[2,3,1,1]");
	npu_ir_graph_free(g);
	b = model_x(13, 3, D(2, 3, 5));
	onnxb_node(b, "GlobalMaxPool", "p", "x", "y");
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[2,3,1]");
	npu_ir_graph_free(g);

	b = model_x(13, 4, D(1, 1, 4, 4));
	onnxb_node(b, "MaxPool", "p", "x", "y");
	ck_assert_str_eq(build_fail(b, NPU_ERR_FORMAT),
			 "node 'p' (MaxPool): attribute 'kernel_shape' is missing");
}
END_TEST

/* ---- matrix and elementwise ---- */

START_TEST(shape_matrix)
{
	onnxb *b;
	npu_ir_graph *g;
	Onnx__NodeProto *n;

	b = onnxb_new(8, 13);
	onnxb_input(b, "a", ONNXB_F32, 2, D(3, 5));
	onnxb_init_f32(b, "bm", 2, D(4, 3), NULL);
	onnxb_init_f32(b, "c", 1, D(4), NULL);
	n = onnxb_node(b, "Gemm", "g", "a,bm,c", "y");
	onnxb_attr_i(b, n, "transA", 1);
	onnxb_attr_i(b, n, "transB", 1);
	onnxb_output(b, "y", ONNXB_F32, 2, D(5, 4));
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[5,4]");
	npu_ir_graph_free(g);

	b = onnxb_new(8, 13);
	onnxb_input(b, "a", ONNXB_F32, 2, D(3, 5));
	onnxb_init_f32(b, "bm", 2, D(5, 4), NULL);
	onnxb_init_f32(b, "c", 1, D(3), NULL);
	onnxb_node(b, "Gemm", "g", "a,bm,c", "y");
	onnxb_output(b, "y", 0, -1, NULL);
	ck_assert_str_eq(build_fail(b, NPU_ERR_SHAPE),
			 "node 'g' (Gemm): shapes float32[3,4] ('y') and float32[3] ('c') do not broadcast");

	b = onnxb_new(8, 13);
	onnxb_input(b, "a", ONNXB_F32, 4, D(2, 1, 3, 4));
	onnxb_input(b, "m", ONNXB_F32, 3, D(5, 4, 6));
	onnxb_input(b, "v", ONNXB_F32, 1, D(4));
	onnxb_node(b, "MatMul", "m1", "a,m", "y");
	onnxb_node(b, "MatMul", "m2", "v,m", "y2");
	onnxb_node(b, "MatMul", "m3", "a,v", "y3");
	onnxb_output(b, "y", 0, -1, NULL);
	onnxb_output(b, "y2", 0, -1, NULL);
	onnxb_output(b, "y3", 0, -1, NULL);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[2,5,3,6]");
	ck_assert_str_eq(shape(g, "y2"), "float32[5,6]");
	ck_assert_str_eq(shape(g, "y3"), "float32[2,1,3]");
	npu_ir_graph_free(g);

	b = onnxb_new(8, 13);
	onnxb_input(b, "a", ONNXB_F32, 2, D(3, 5));
	onnxb_input(b, "m", ONNXB_F32, 2, D(4, 6));
	onnxb_node(b, "MatMul", "mm", "a,m", "y");
	onnxb_output(b, "y", 0, -1, NULL);
	ck_assert_str_eq(build_fail(b, NPU_ERR_SHAPE),
			 "node 'mm' (MatMul): inner dimensions differ: 5 ('a') and 4 ('m')");
}
END_TEST

START_TEST(shape_elementwise)
{
	onnxb *b;
	npu_ir_graph *g;
	Onnx__NodeProto *n;
	static const char *const unary[] = {
		"Relu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Erf", "Sqrt", "Exp",
		"Log", "Neg", "Abs", "Identity", "LeakyRelu", "Dropout", "Softmax", "LogSoftmax",
	};

	b = onnxb_new(8, 14);
	onnxb_input(b, "a", ONNXB_F32, 3, D(2, 3, 4));
	onnxb_input(b, "c", ONNXB_F32, 2, D(3, 1));
	onnxb_node(b, "Add", "add", "a,c", "s");
	onnxb_node(b, "Sub", "sub", "s,c", "t");
	onnxb_node(b, "Mul", "mul", "c,t", "u");
	onnxb_node(b, "Div", "div", "u,a", "v");
	onnxb_node(b, "Pow", "pow", "v,c", "w");
	onnxb_node(b, "PRelu", "prelu", "w,c", "y");
	onnxb_output(b, "y", 0, -1, NULL);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[2,3,4]");
	ck_assert_int_eq(npu_ops_check_supported(g, NULL), NPU_OK);
	npu_ir_graph_free(g);

	b = onnxb_new(8, 13);
	onnxb_input(b, "a", ONNXB_F32, 2, D(2, 3));
	onnxb_input(b, "c", ONNXB_F32, 1, D(4));
	onnxb_node(b, "Add", "add", "a,c", "y");
	onnxb_output(b, "y", 0, -1, NULL);
	ck_assert_str_eq(build_fail(b, NPU_ERR_SHAPE),
			 "node 'add' (Add): shapes float32[2,3] ('a') and float32[4] ('c') do not broadcast");
	b = onnxb_new(8, 13);
	onnxb_input(b, "a", ONNXB_F32, 1, D(4));
	onnxb_input(b, "c", ONNXB_I64, 1, D(4));
	onnxb_node(b, "Add", "add", "a,c", "y");
	onnxb_output(b, "y", 0, -1, NULL);
	ck_assert_str_eq(build_fail(b, NPU_ERR_SHAPE),
			 "node 'add' (Add): inputs 'a' (float32) and 'c' (int64) differ in dtype");

	for (size_t i = 0; i < NPU_ARRAY_SIZE(unary); i++) {
		b = model_x(14, 3, D(2, 3, 4));
		onnxb_node(b, unary[i], "u", "x", "y");
		g = build_ok(b);
		ck_assert_str_eq(shape(g, "y"), "float32[2,3,4]");
		ck_assert_int_eq(npu_ops_check_supported(g, NULL), NPU_OK);
		npu_ir_graph_free(g);
	}
	/* Clip: bounds as attributes (opset < 11) and as inputs. */
	b = model_x(7, 2, D(2, 3));
	n = onnxb_node(b, "Clip", "c", "x", "y");
	onnxb_attr_f(b, n, "min", 0);
	onnxb_attr_f(b, n, "max", 6);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[2,3]");
	npu_ir_graph_free(g);
	b = model_x(13, 2, D(2, 3));
	onnxb_init_f32(b, "lo", 0, NULL, (float[]){ 0 });
	onnxb_node(b, "Clip", "c", "x,lo,", "y");
	g = build_ok(b);
	ck_assert_int_eq(g->nodes[0].n_inputs, 3);
	ck_assert_int_eq(g->nodes[0].inputs[2], -1);
	npu_ir_graph_free(g);
	/* Gelu exists from opset 20 on. */
	b = model_x(20, 1, D(5));
	onnxb_attr_s(b, onnxb_node(b, "Gelu", "ge", "x", "y"), "approximate", "tanh");
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[5]");
	npu_ir_graph_free(g);
	b = model_x(17, 1, D(5));
	onnxb_node(b, "Gelu", "ge", "x", "y");
	ck_assert_str_eq(build_fail(b, NPU_ERR_UNSUPPORTED),
			 "operator 'Gelu' (node 'ge', opset 17) is not supported by the NPU compiler: it needs opset 20 or later");
	/* Softmax axis checked, before and after opset 13. */
	b = model_x(11, 3, D(2, 3, 4));
	onnxb_attr_i(b, onnxb_node(b, "Softmax", "sm", "x", "y"), "axis", 3);
	ck_assert_str_eq(build_fail(b, NPU_ERR_SHAPE),
			 "node 'sm' (Softmax): axis 3 is out of range for rank 3");
	/* Cast. */
	b = model_x(13, 1, D(3));
	onnxb_attr_i(b, onnxb_node(b, "Cast", "c", "x", "y"), "to", ONNXB_I64);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "int64[3]");
	npu_ir_graph_free(g);
	b = model_x(13, 1, D(3));
	onnxb_attr_i(b, onnxb_node(b, "Cast", "c", "x", "y"), "to", ONNXB_F64);
	ck_assert_ptr_nonnull(strstr(build_fail(b, NPU_ERR_UNSUPPORTED), "cast to ONNX data type 11"));
}
END_TEST

START_TEST(shape_normalization)
{
	onnxb *b;
	npu_ir_graph *g;

	b = model_x(17, 3, D(2, 3, 8));
	onnxb_init_f32(b, "s", 1, D(8), NULL);
	onnxb_init_f32(b, "bb", 1, D(8), NULL);
	onnxb_node(b, "LayerNormalization", "ln", "x,s,bb", "y,mean,inv");
	onnxb_output(b, "mean", 0, -1, NULL);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[2,3,8]");
	ck_assert_str_eq(shape(g, "mean"), "float32[2,3,1]");
	ck_assert_str_eq(shape(g, "inv"), "float32[2,3,1]");
	npu_ir_graph_free(g);

	b = model_x(15, 4, D(2, 3, 4, 4));
	for (int i = 0; i < 4; i++) {
		char nm[16];

		snprintf(nm, sizeof(nm), "p%d", i);
		onnxb_init_f32(b, nm, 1, D(3), NULL);
	}
	onnxb_node(b, "BatchNormalization", "bn", "x,p0,p1,p2,p3", "y");
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[2,3,4,4]");
	npu_ir_graph_free(g);

	b = model_x(15, 4, D(2, 3, 4, 4));
	for (int i = 0; i < 4; i++) {
		char nm[16];

		snprintf(nm, sizeof(nm), "p%d", i);
		onnxb_init_f32(b, nm, 1, D(i == 2 ? 4 : 3), NULL);
	}
	onnxb_node(b, "BatchNormalization", "bn", "x,p0,p1,p2,p3", "y");
	ck_assert_str_eq(build_fail(b, NPU_ERR_SHAPE),
			 "node 'bn' (BatchNormalization): parameter 'p2' must have shape [3]");
}
END_TEST

/* ---- shape and layout ---- */

START_TEST(shape_reshape_family)
{
	onnxb *b;
	npu_ir_graph *g;
	Onnx__NodeProto *n;

	b = model_x(14, 3, D(2, 3, 4));
	onnxb_init_i64(b, "s1", 2, D(0, -1));
	onnxb_init_i64(b, "s2", 3, D(4, 0, -1));
	onnxb_init_i64(b, "s3", 2, D(0, 24));
	onnxb_node(b, "Reshape", "r1", "x,s1", "y");
	onnxb_node(b, "Reshape", "r2", "x,s2", "y2");
	onnxb_node(b, "Flatten", "f0", "x", "f");
	onnxb_attr_i(b, onnxb_node(b, "Flatten", "f1", "x", "fa"), "axis", -1);
	onnxb_attr_i(b, onnxb_node(b, "Flatten", "f2", "x", "fb"), "axis", 0);
	onnxb_node(b, "Transpose", "t0", "x", "t");
	onnxb_attr_ints(b, onnxb_node(b, "Transpose", "t1", "x", "ta"), "perm", 3, D(0, 2, 1));
	onnxb_output(b, "y2", 0, -1, NULL);
	onnxb_output(b, "f", 0, -1, NULL);
	onnxb_output(b, "fa", 0, -1, NULL);
	onnxb_output(b, "fb", 0, -1, NULL);
	onnxb_output(b, "t", 0, -1, NULL);
	onnxb_output(b, "ta", 0, -1, NULL);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[2,12]");
	ck_assert_str_eq(shape(g, "y2"), "float32[4,3,2]");
	ck_assert_str_eq(shape(g, "f"), "float32[2,12]");
	ck_assert_str_eq(shape(g, "fa"), "float32[6,4]");
	ck_assert_str_eq(shape(g, "fb"), "float32[1,24]");
	ck_assert_str_eq(shape(g, "t"), "float32[4,3,2]");
	ck_assert_str_eq(shape(g, "ta"), "float32[2,4,3]");
	npu_ir_graph_free(g);

	/* allowzero: 0 is a real zero, so 24 elements cannot fit. */
	b = model_x(14, 3, D(2, 3, 4));
	onnxb_init_i64(b, "s", 2, D(0, 24));
	onnxb_attr_i(b, onnxb_node(b, "Reshape", "r", "x,s", "y"), "allowzero", 1);
	ck_assert_str_eq(build_fail(b, NPU_ERR_SHAPE),
			 "node 'r' (Reshape): cannot reshape 24 elements into 0");
	b = model_x(14, 3, D(2, 3, 4));
	onnxb_init_i64(b, "s", 2, D(5, -1));
	onnxb_node(b, "Reshape", "r", "x,s", "y");
	build_fail(b, NPU_ERR_SHAPE);
	/* A shape computed at run time: named, and recorded for the caller. */
	b = model_x(14, 3, D(2, 3, 4));
	onnxb_input(b, "s", ONNXB_I64, 1, D(2));
	onnxb_node(b, "Reshape", "r", "x,s", "y");
	ck_assert_str_eq(build_fail(b, NPU_ERR_SHAPE),
			 "node 'r' (Reshape): input 's' must be a constant (it is computed at run time, so the output shape would not be static)");

	/* Concat. */
	b = onnxb_new(8, 13);
	onnxb_input(b, "a", ONNXB_F32, 2, D(2, 3));
	onnxb_input(b, "c", ONNXB_F32, 2, D(2, 5));
	onnxb_attr_i(b, onnxb_node(b, "Concat", "cc", "a,c,a", "y"), "axis", -1);
	onnxb_output(b, "y", 0, -1, NULL);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[2,11]");
	npu_ir_graph_free(g);
	b = onnxb_new(8, 13);
	onnxb_input(b, "a", ONNXB_F32, 2, D(2, 3));
	onnxb_input(b, "c", ONNXB_F32, 2, D(3, 3));
	onnxb_attr_i(b, onnxb_node(b, "Concat", "cc", "a,c", "y"), "axis", 1);
	onnxb_output(b, "y", 0, -1, NULL);
	ck_assert_str_eq(build_fail(b, NPU_ERR_SHAPE),
			 "node 'cc' (Concat): inputs 'a' and 'c' differ in dimension 0");

	/* Split: input (13+), attribute (< 13), num_outputs (18+), even. */
	b = model_x(13, 2, D(3, 6));
	onnxb_init_i64(b, "sp", 2, D(2, 4));
	onnxb_attr_i(b, onnxb_node(b, "Split", "s", "x,sp", "y,y2"), "axis", 1);
	onnxb_output(b, "y2", 0, -1, NULL);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[3,2]");
	ck_assert_str_eq(shape(g, "y2"), "float32[3,4]");
	npu_ir_graph_free(g);
	b = model_x(11, 2, D(3, 6));
	n = onnxb_node(b, "Split", "s", "x", "y,y2,y3");
	onnxb_attr_ints(b, n, "split", 3, D(1, 1, 1));
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y3"), "float32[1,6]");
	npu_ir_graph_free(g);
	b = model_x(18, 1, D(7));
	onnxb_attr_i(b, onnxb_node(b, "Split", "s", "x", "y,y2,y3"), "num_outputs", 3);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[3]");
	ck_assert_str_eq(shape(g, "y3"), "float32[1]");
	npu_ir_graph_free(g);
	b = model_x(13, 1, D(6));
	onnxb_node(b, "Split", "s", "x", "y,y2");
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y2"), "float32[3]");
	npu_ir_graph_free(g);
	b = model_x(13, 1, D(7));
	onnxb_node(b, "Split", "s", "x", "y,y2");
	ck_assert_str_eq(build_fail(b, NPU_ERR_SHAPE),
			 "node 's' (Split): dimension 7 does not split evenly into 2");
}
END_TEST

START_TEST(shape_slice_pad_squeeze)
{
	onnxb *b;
	npu_ir_graph *g;
	Onnx__NodeProto *n;

	/* Slice, opset 9 attributes: the end is clamped. */
	b = model_x(9, 2, D(3, 10));
	n = onnxb_node(b, "Slice", "s", "x", "y");
	onnxb_attr_ints(b, n, "starts", 1, D(1));
	onnxb_attr_ints(b, n, "ends", 1, D(1000));
	onnxb_attr_ints(b, n, "axes", 1, D(1));
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[3,9]");
	npu_ir_graph_free(g);
	/* Opset 13 inputs: negative indices, steps, reversal. */
	b = model_x(13, 2, D(3, 10));
	onnxb_init_i64(b, "st", 1, D(-3));
	onnxb_init_i64(b, "en", 1, D(-1));
	onnxb_init_i64(b, "ax", 1, D(-1));
	onnxb_init_i64(b, "rs", 2, D(-1, -1));
	onnxb_init_i64(b, "re", 2, D(INT64_MIN, INT64_MIN));
	onnxb_init_i64(b, "rstep", 2, D(-1, -3));
	onnxb_init_i64(b, "z", 1, D(0));
	onnxb_init_i64(b, "big", 1, D(INT64_MAX));
	onnxb_init_i64(b, "three", 1, D(3));
	onnxb_node(b, "Slice", "s1", "x,st,en,ax", "y");
	onnxb_node(b, "Slice", "s2", "x,rs,re,,rstep", "y2");
	onnxb_node(b, "Slice", "s3", "x,z,big,ax,three", "y3");
	onnxb_output(b, "y2", 0, -1, NULL);
	onnxb_output(b, "y3", 0, -1, NULL);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[3,2]");
	ck_assert_str_eq(shape(g, "y2"), "float32[3,4]");
	ck_assert_str_eq(shape(g, "y3"), "float32[3,4]");
	npu_ir_graph_free(g);

	/* Pad: input (11+) with negative pads, attribute (< 11). */
	b = model_x(13, 2, D(3, 4));
	onnxb_init_i64(b, "p", 4, D(0, 1, 0, 2));
	onnxb_init_i64(b, "q", 4, D(0, -1, 0, -1));
	onnxb_node(b, "Pad", "p1", "x,p", "y");
	onnxb_attr_s(b, onnxb_node(b, "Pad", "p2", "x,q", "y2"), "mode", "edge");
	onnxb_output(b, "y2", 0, -1, NULL);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[3,7]");
	ck_assert_str_eq(shape(g, "y2"), "float32[3,2]");
	npu_ir_graph_free(g);
	b = model_x(10, 2, D(3, 4));
	n = onnxb_node(b, "Pad", "p1", "x", "y");
	onnxb_attr_ints(b, n, "pads", 4, D(1, 1, 1, 1));
	onnxb_attr_s(b, n, "mode", "reflect");
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[5,6]");
	npu_ir_graph_free(g);

	/* Squeeze / Unsqueeze: attribute before 13, input after. */
	b = model_x(11, 3, D(1, 3, 1));
	onnxb_attr_ints(b, onnxb_node(b, "Squeeze", "s", "x", "y"), "axes", 1, D(0));
	onnxb_attr_ints(b, onnxb_node(b, "Unsqueeze", "u", "x", "y2"), "axes", 2, D(0, 4));
	onnxb_output(b, "y2", 0, -1, NULL);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[3,1]");
	ck_assert_str_eq(shape(g, "y2"), "float32[1,1,3,1,1]");
	npu_ir_graph_free(g);
	b = model_x(13, 3, D(1, 3, 1));
	onnxb_init_i64(b, "ax", 1, D(-1));
	onnxb_node(b, "Squeeze", "s", "x", "y");
	onnxb_node(b, "Squeeze", "s2", "x,ax", "y2");
	onnxb_node(b, "Unsqueeze", "u", "x,ax", "y3");
	onnxb_output(b, "y2", 0, -1, NULL);
	onnxb_output(b, "y3", 0, -1, NULL);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[3]");
	ck_assert_str_eq(shape(g, "y2"), "float32[1,3]");
	ck_assert_str_eq(shape(g, "y3"), "float32[1,3,1,1]");
	npu_ir_graph_free(g);
	b = model_x(11, 3, D(1, 3, 1));
	onnxb_attr_ints(b, onnxb_node(b, "Squeeze", "s", "x", "y"), "axes", 1, D(1));
	ck_assert_str_eq(build_fail(b, NPU_ERR_SHAPE),
			 "node 's' (Squeeze): dimension 1 is 3, not 1");
}
END_TEST

START_TEST(shape_reduce_resize)
{
	onnxb *b;
	npu_ir_graph *g;
	Onnx__NodeProto *n;

	b = model_x(13, 3, D(2, 3, 4));
	onnxb_init_i64(b, "ax", 1, D(-1));
	onnxb_init(b, "none", ONNXB_I64, 1, D(0), NULL, 0);
	n = onnxb_node(b, "ReduceMean", "m", "x", "y");
	onnxb_attr_ints(b, n, "axes", 1, D(1));
	onnxb_attr_i(b, n, "keepdims", 0);
	onnxb_node(b, "ReduceSum", "s", "x,ax", "y2");
	onnxb_node(b, "ReduceMax", "mx", "x", "y3");
	onnxb_attr_i(b, onnxb_node(b, "ReduceSum", "s0", "x,none", "y4"), "noop_with_empty_axes", 1);
	onnxb_output(b, "y2", 0, -1, NULL);
	onnxb_output(b, "y3", 0, -1, NULL);
	onnxb_output(b, "y4", 0, -1, NULL);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[2,4]");
	ck_assert_str_eq(shape(g, "y2"), "float32[2,3,1]");
	ck_assert_str_eq(shape(g, "y3"), "float32[1,1,1]");
	ck_assert_str_eq(shape(g, "y4"), "float32[2,3,4]");
	npu_ir_graph_free(g);
	b = model_x(18, 3, D(2, 3, 4));
	onnxb_init_i64(b, "ax", 2, D(0, 2));
	onnxb_attr_i(b, onnxb_node(b, "ReduceMax", "mx", "x,ax", "y"), "keepdims", 0);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[3]");
	npu_ir_graph_free(g);

	/* Resize: scales, sizes, empty roi/scales, opset 10, opset 18 axes and policy. */
	b = model_x(13, 4, D(1, 3, 4, 4));
	onnxb_init_f32(b, "sc", 1, D(4), (float[]){ 1, 1, 2, 2.5f });
	onnxb_init_i64(b, "sz", 4, D(1, 3, 5, 7));
	onnxb_init(b, "empty", ONNXB_F32, 1, D(0), NULL, 0);
	onnxb_attr_s(b, onnxb_node(b, "Resize", "r1", "x,,sc", "y"), "mode", "linear");
	onnxb_node(b, "Resize", "r2", "x,empty,empty,sz", "y2");
	onnxb_output(b, "y2", 0, -1, NULL);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[1,3,8,10]");
	ck_assert_str_eq(shape(g, "y2"), "float32[1,3,5,7]");
	ck_assert_int_eq(npu_ops_check_supported(g, NULL), NPU_OK);
	npu_ir_graph_free(g);
	b = model_x(10, 4, D(1, 3, 4, 4));
	onnxb_init_f32(b, "sc", 1, D(4), (float[]){ 1, 1, 1.5f, 0.5f });
	onnxb_node(b, "Resize", "r", "x,sc", "y");
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[1,3,6,2]");
	npu_ir_graph_free(g);
	b = model_x(18, 4, D(1, 3, 4, 8));
	onnxb_init_i64(b, "sz", 2, D(6, 6));
	n = onnxb_node(b, "Resize", "r", "x,,,sz", "y");
	onnxb_attr_ints(b, n, "axes", 2, D(2, 3));
	onnxb_attr_s(b, n, "keep_aspect_ratio_policy", "not_larger");
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[1,3,3,6]");
	npu_ir_graph_free(g);
	b = model_x(13, 4, D(1, 3, 4, 4));
	onnxb_init_f32(b, "sc", 1, D(4), (float[]){ 1, 1, 2, 2 });
	onnxb_attr_s(b, onnxb_node(b, "Resize", "r", "x,,sc", "y"), "mode", "cubic");
	g = build_ok(b);
	ck_assert_int_eq(npu_ops_check_supported(g, NULL), NPU_OK);
	npu_ir_graph_free(g);
	b = model_x(18, 4, D(1, 3, 4, 4));
	onnxb_init_f32(b, "sc", 1, D(4), (float[]){ 1, 1, 0.5f, 0.5f });
	n = onnxb_node(b, "Resize", "r", "x,,sc", "y");
	onnxb_attr_s(b, n, "mode", "linear");
	onnxb_attr_i(b, n, "antialias", 1);
	g = build_ok(b);
	ck_assert_int_eq(npu_ops_check_supported(g, NULL), NPU_ERR_UNSUPPORTED);
	ck_assert_str_eq(npu_last_error(),
			 "operator 'Resize' (node 'r', opset 18) is not supported by the NPU compiler: antialias is not supported");
	npu_ir_graph_free(g);
	/* Upsample: scales input (9), attribute (7). */
	b = model_x(9, 4, D(1, 3, 4, 4));
	onnxb_init_f32(b, "sc", 1, D(4), (float[]){ 1, 1, 2, 3 });
	onnxb_node(b, "Upsample", "u", "x,sc", "y");
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[1,3,8,12]");
	npu_ir_graph_free(g);
	b = model_x(7, 4, D(1, 3, 4, 4));
	onnxb_attr_floats(b, onnxb_node(b, "Upsample", "u", "x", "y"), "scales", 4,
			  (float[]){ 1, 1, 2, 2 });
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "float32[1,3,8,8]");
	npu_ir_graph_free(g);
}
END_TEST

/* ---- quantized ---- */

START_TEST(shape_quantized)
{
	onnxb *b;
	npu_ir_graph *g;
	const npu_ir_tensor *t;
	int8_t wq[4 * 2 * 3 * 3] = { 0 };

	/* Per-tensor quantize, per-channel dequantize of int8 weights. */
	b = model_x(13, 2, D(2, 3));
	onnxb_init_f32(b, "ys", 0, NULL, (float[]){ 0.5f });
	onnxb_init(b, "yz", ONNXB_U8, 0, NULL, (uint8_t[]){ 10 }, 1);
	onnxb_init(b, "w", ONNXB_I8, 2, D(4, 2), (int8_t[]){ 1, 2, 3, 4, 5, 6, 7, 8 }, 8);
	onnxb_init_f32(b, "ws", 1, D(4), (float[]){ 0.1f, 0.2f, 0.3f, 0.4f });
	onnxb_node(b, "QuantizeLinear", "q", "x,ys,yz", "y");
	onnxb_attr_i(b, onnxb_node(b, "DequantizeLinear", "dq", "w,ws", "wf"), "axis", 0);
	onnxb_output(b, "wf", 0, -1, NULL);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "uint8[2,3]");
	t = &g->tensors[npu_ir_find_tensor(g, "y")];
	ck_assert_int_eq(t->quant.count, 1);
	ck_assert(t->quant.scale[0] == 0.5f);
	ck_assert_int_eq(t->quant.zero_point[0], 10);
	ck_assert_str_eq(shape(g, "wf"), "float32[4,2]");
	t = &g->tensors[npu_ir_find_tensor(g, "w")];
	ck_assert_int_eq(t->quant.count, 4);
	ck_assert_int_eq(t->quant.axis, 0);
	ck_assert(t->quant.scale[3] == 0.4f);
	ck_assert_int_eq(npu_ops_check_supported(g, NULL), NPU_OK);
	npu_ir_graph_free(g);

	b = model_x(13, 2, D(2, 3));
	onnxb_init_f32(b, "ys", 1, D(2), (float[]){ 0.5f, 1 });
	onnxb_node(b, "QuantizeLinear", "q", "x,ys", "y");
	ck_assert_str_eq(build_fail(b, NPU_ERR_SHAPE),
			 "node 'q' (QuantizeLinear): per-axis scale 'ys' must have 3 values");

	/* QLinearConv, QLinearMatMul, MatMulInteger, ConvInteger. */
	b = onnxb_new(8, 13);
	onnxb_input(b, "x", ONNXB_U8, 4, D(1, 2, 5, 5));
	onnxb_input(b, "a", ONNXB_U8, 2, D(2, 3));
	onnxb_init_f32(b, "s", 0, NULL, (float[]){ 0.25f });
	onnxb_init(b, "zu", ONNXB_U8, 0, NULL, (uint8_t[]){ 128 }, 1);
	onnxb_init(b, "zi", ONNXB_I8, 0, NULL, (int8_t[]){ 0 }, 1);
	onnxb_init(b, "w", ONNXB_I8, 4, D(4, 2, 3, 3), wq, sizeof(wq));
	onnxb_init(b, "bm", ONNXB_U8, 2, D(3, 4), NULL, 0);
	onnxb_init(b, "wi", ONNXB_U8, 4, D(1, 2, 2, 2), NULL, 0);
	onnxb_node(b, "QLinearConv", "qc", "x,s,zu,w,s,zi,s,zu", "y");
	onnxb_node(b, "QLinearMatMul", "qm", "a,s,zu,bm,s,zu,s,zu", "y2");
	onnxb_node(b, "MatMulInteger", "mi", "a,bm,zu,zu", "y3");
	onnxb_node(b, "ConvInteger", "ci", "x,wi", "y4");
	onnxb_output(b, "y", 0, -1, NULL);
	onnxb_output(b, "y2", 0, -1, NULL);
	onnxb_output(b, "y3", 0, -1, NULL);
	onnxb_output(b, "y4", 0, -1, NULL);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "uint8[1,4,3,3]");
	ck_assert_str_eq(shape(g, "y2"), "uint8[2,4]");
	ck_assert_str_eq(shape(g, "y3"), "int32[2,4]");
	ck_assert_str_eq(shape(g, "y4"), "int32[1,1,4,4]");
	t = &g->tensors[npu_ir_find_tensor(g, "x")];
	ck_assert_int_eq(t->quant.count, 1);
	ck_assert_int_eq(t->quant.zero_point[0], 128);
	ck_assert_int_eq(npu_ops_check_supported(g, NULL), NPU_OK);
	npu_ir_graph_free(g);
}
END_TEST

/* ---- constant folding ---- */

START_TEST(fold_shape_subgraph)
{
	onnxb *b;
	npu_ir_graph *g;
	const npu_ir_node *r;
	const npu_ir_tensor *s;
	int64_t v[4];
	int n;

	/* PyTorch's flatten: Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])). */
	b = model_x(13, 4, D(2, 3, 4, 5));
	onnxb_init(b, "zero", ONNXB_I64, 0, NULL, D(0), 8);
	onnxb_init_i64(b, "ax0", 1, D(0));
	onnxb_init_i64(b, "minus1", 1, D(-1));
	onnxb_node(b, "Shape", NULL, "x", "shp");
	onnxb_node(b, "Gather", NULL, "shp,zero", "d0");
	onnxb_node(b, "Unsqueeze", NULL, "d0,ax0", "d0v");
	onnxb_attr_i(b, onnxb_node(b, "Concat", NULL, "d0v,minus1", "newshape"), "axis", 0);
	onnxb_node(b, "Reshape", "flatten", "x,newshape", "y");
	g = build_ok(b);
	ck_assert_int_eq(g->n_nodes, 1);
	r = &g->nodes[0];
	ck_assert_str_eq(r->op, "Reshape");
	s = npu_ir_input(g, r, 1);
	ck_assert_int_eq(npu_ir_const_ints(s, v, 4, &n), NPU_OK);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(v[0], 2);
	ck_assert_int_eq(v[1], -1);
	ck_assert_str_eq(shape(g, "y"), "float32[2,60]");
	ck_assert_int_eq(npu_ops_check_supported(g, NULL), NPU_OK);
	npu_ir_graph_free(g);

	/* BlazeFace's channel padding: Concat(x, ConstantOfShape([1,5,4,4])). */
	b = model_x(12, 4, D(1, 3, 4, 4));
	onnxb_init_i64(b, "padshape", 4, D(1, 5, 4, 4));
	onnxb_node(b, "ConstantOfShape", NULL, "padshape", "zeros");
	onnxb_attr_i(b, onnxb_node(b, "Concat", "pad", "x,zeros", "y"), "axis", 1);
	g = build_ok(b);
	ck_assert_int_eq(g->n_nodes, 1);
	s = npu_ir_input(g, &g->nodes[0], 1);
	ck_assert_ptr_nonnull(s->data);
	ck_assert_uint_eq(s->bytes, 80 * 4);
	ck_assert_str_eq(shape(g, "y"), "float32[1,8,4,4]");
	npu_ir_graph_free(g);

	/* Cast, Mul, Div, Sub, Range, Slice, Squeeze on constants; a
	 * ConstantOfShape with an int64 value. */
	b = model_x(13, 2, D(6, 8));
	onnxb_init_i64(b, "two", 1, D(2));
	onnxb_init_i64(b, "st", 1, D(1));
	onnxb_init_i64(b, "en", 1, D(2));
	{
		Onnx__TensorProto *vt = onnxb_tensor(b, "v", ONNXB_I64, 1, D(1), D(7), 8);

		onnxb_node(b, "Shape", NULL, "x", "shp");		/* [6, 8] */
		onnxb_node(b, "Div", NULL, "shp,two", "half");		/* [3, 4] */
		onnxb_node(b, "Mul", NULL, "half,two", "back");		/* [6, 8] */
		onnxb_node(b, "Sub", NULL, "back,half", "diff");	/* [3, 4] */
		onnxb_node(b, "Slice", NULL, "diff,st,en", "d1");	/* [4] */
		onnxb_attr_i(b, onnxb_node(b, "Cast", NULL, "d1", "d1f"), "to", ONNXB_F32);
		onnxb_attr_t(b, onnxb_node(b, "ConstantOfShape", NULL, "diff", "sevens"), "value", vt);
	}
	onnxb_output(b, "d1f", 0, -1, NULL);
	onnxb_output(b, "sevens", 0, -1, NULL);
	onnxb_node(b, "Identity", NULL, "x", "y");
	g = build_ok(b);
	ck_assert_int_eq(g->n_nodes, 1);
	s = &g->tensors[npu_ir_find_tensor(g, "d1f")];
	ck_assert_str_eq(shape(g, "d1f"), "float32[1]");
	ck_assert(*(const float *)s->data == 4.0f);
	s = &g->tensors[npu_ir_find_tensor(g, "sevens")];
	ck_assert_str_eq(shape(g, "sevens"), "int64[3,4]");
	ck_assert_int_eq(((const int64_t *)s->data)[11], 7);
	npu_ir_graph_free(g);

	/* Range, and integer division by zero in a constant expression. */
	b = onnxb_new(8, 13);
	onnxb_init(b, "a", ONNXB_I64, 0, NULL, D(0), 8);
	onnxb_init(b, "l", ONNXB_I64, 0, NULL, D(5), 8);
	onnxb_init(b, "d", ONNXB_I64, 0, NULL, D(2), 8);
	onnxb_node(b, "Range", NULL, "a,l,d", "y");
	onnxb_output(b, "y", 0, -1, NULL);
	g = build_ok(b);
	ck_assert_str_eq(shape(g, "y"), "int64[3]");
	ck_assert_int_eq(((const int64_t *)g->tensors[npu_ir_find_tensor(g, "y")].data)[2], 4);
	npu_ir_graph_free(g);
	b = onnxb_new(8, 13);
	onnxb_init_i64(b, "a", 1, D(5));
	onnxb_init_i64(b, "z", 1, D(0));
	onnxb_node(b, "Div", "div0", "a,z", "y");
	onnxb_output(b, "y", 0, -1, NULL);
	ck_assert_str_eq(build_fail(b, NPU_ERR_SHAPE),
			 "node 'div0' (Div): integer division by zero in a constant expression");
}
END_TEST

START_TEST(fold_freeze_input)
{
	onnxb *b = model_x(14, 3, D(2, 3, 4));
	npu_ir_graph *g = NULL;
	size_t len;
	uint8_t *buf;
	int s;

	onnxb_input(b, "s", ONNXB_I64, 1, D(2));
	onnxb_node(b, "Reshape", "r", "x,s", "y");
	buf = onnxb_pack(b, &len);
	onnxb_free(b);
	ck_assert_int_eq(npu_onnx_parse(buf, len, &g), NPU_OK);
	free(buf);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_ERR_SHAPE);
	s = npu_ir_find_tensor(g, "s");
	ck_assert_int_eq(g->need_const, s);
	ck_assert_int_eq(npu_ir_freeze_input(g, s, D(6, 4), 8), NPU_ERR_SHAPE);
	ck_assert_int_eq(npu_ir_freeze_input(g, s, D(6, 4), 16), NPU_OK);
	ck_assert_int_eq(g->n_inputs, 1);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_eq(g->need_const, -1);
	ck_assert_str_eq(shape(g, "y"), "float32[6,4]");
	npu_ir_graph_free(g);
}
END_TEST

static Suite *ir_suite(void)
{
	Suite *s = suite_create("npu_ir");
	TCase *tc = tcase_create("ir");

	tcase_add_test(tc, ir_tables_and_attrs);
	tcase_add_test(tc, ir_topo_sort_and_dead);
	tcase_add_test(tc, ir_half_precision);
	tcase_add_test(tc, shape_conv);
	tcase_add_test(tc, shape_conv_transpose);
	tcase_add_test(tc, shape_pool);
	tcase_add_test(tc, shape_matrix);
	tcase_add_test(tc, shape_elementwise);
	tcase_add_test(tc, shape_normalization);
	tcase_add_test(tc, shape_reshape_family);
	tcase_add_test(tc, shape_slice_pad_squeeze);
	tcase_add_test(tc, shape_reduce_resize);
	tcase_add_test(tc, shape_quantized);
	tcase_add_test(tc, fold_shape_subgraph);
	tcase_add_test(tc, fold_freeze_input);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(ir_suite)
