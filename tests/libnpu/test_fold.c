// SPDX-License-Identifier: MIT
/*
 * Constant folding of the shape and mask arithmetic transformer exports
 * compute (ir/npu_ir_const.c): every evaluator against hand-computed
 * values with numpy broadcasting, bools through the IR and the ONNX
 * loader, a torch-style Reshape subgraph and a causal mask that fold
 * completely and then compile and run, and the refusals of what does
 * not fold (a bool graph input, a run-time Equal).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_compile.h"
#include "compile/npu_ops.h"
#include "ir/npu_ir.h"
#include "ir_build.h"
#include "model/npu_model_priv.h"
#include "npu_test.h"
#include "onnx/npu_onnx.h"
#include "onnx_build.h"

#define D(...) ((const int64_t[]){ __VA_ARGS__ })
#define F(...) ((const float[]){ __VA_ARGS__ })
#define B(...) ((const uint8_t[]){ __VA_ARGS__ })

/* The registry's rules, without npu_ops_infer_shapes()'s refusal of
 * bool graph outputs: the IR itself folds bools. */
static npu_status rules(const npu_ir_node *n, const struct npu_ir_op **out)
{
	const struct npu_op *d;
	npu_status st = npu_op_find(n, &d);

	*out = st ? NULL : &d->ir;
	return st;
}

/* Node @op on @in with a fresh output named @y (shape unknown). */
static npu_ir_node *op(npu_ir_graph *g, const char *name, const int *in, int nin, const char *y)
{
	int t = irb_tensor(g, y, 0, -1, NULL);

	return irb_node(g, name, in, nin, &t, 1);
}

/* Make @names the graph outputs, infer and fold: every node must fold. */
static void fold_all(npu_ir_graph *g, const char *const *names, int n)
{
	int out[16];
	npu_status st;

	for (int i = 0; i < n; i++)
		out[i] = npu_ir_find_tensor(g, names[i]);
	irb_io(g, out, 0, out, n);	/* no inputs */
	st = npu_ir_infer_shapes(g, rules);
	ck_assert_msg(st == NPU_OK, "%s", npu_last_error());
	ck_assert_int_eq(g->n_nodes, 0);
}

static const npu_ir_tensor *T(const npu_ir_graph *g, const char *name)
{
	int id = npu_ir_find_tensor(g, name);

	ck_assert_int_ge(id, 0);
	ck_assert_ptr_nonnull(g->tensors[id].data);
	return &g->tensors[id];
}

static void expect_shape(const npu_ir_graph *g, const char *name, const char *want)
{
	char buf[160];

	ck_assert_str_eq(npu_ir_shape_str(T(g, name), buf, sizeof(buf)), want);
}

static void expect_bools(const npu_ir_graph *g, const char *name, const uint8_t *v, int n)
{
	const npu_ir_tensor *t = T(g, name);

	ck_assert_int_eq(t->dtype, NPU_DTYPE_BOOL);
	ck_assert_uint_eq(t->bytes, (size_t)n);
	for (int i = 0; i < n; i++)
		ck_assert_msg(((const uint8_t *)t->data)[i] == v[i], "%s[%d] = %u, want %u", name, i,
			      ((const uint8_t *)t->data)[i], v[i]);
}

static void expect_i64(const npu_ir_graph *g, const char *name, const int64_t *v, int n)
{
	const npu_ir_tensor *t = T(g, name);

	ck_assert_int_eq(t->dtype, NPU_DTYPE_INT64);
	ck_assert_uint_eq(t->bytes, (size_t)n * 8);
	for (int i = 0; i < n; i++)
		ck_assert_msg(((const int64_t *)t->data)[i] == v[i], "%s[%d] = %lld, want %lld", name,
			      i, (long long)((const int64_t *)t->data)[i], (long long)v[i]);
}

static void expect_f32(const npu_ir_graph *g, const char *name, const float *v, int n)
{
	const npu_ir_tensor *t = T(g, name);

	ck_assert_int_eq(t->dtype, NPU_DTYPE_FLOAT32);
	ck_assert_uint_eq(t->bytes, (size_t)n * 4);
	for (int i = 0; i < n; i++) {
		float f = ((const float *)t->data)[i];

		ck_assert_msg(f == v[i] || (isnan(f) && isnan(v[i])), "%s[%d] = %g, want %g", name, i,
			      f, v[i]);
	}
}

/* ---- evaluators ---- */

START_TEST(fold_compare)
{
	static const char *const names[] = { "eq", "lt", "gt", "le", "ge", "feq", "flt", "fgt", "beq" };
	npu_ir_graph *g = irb_graph(13);
	int a = irb_const(g, "a", NPU_DTYPE_INT64, 2, D(2, 3), D(1, 2, 3, 4, 5, 6));
	int b = irb_const(g, "b", NPU_DTYPE_INT64, 1, D(3), D(2, 2, 5));
	int fa = irb_const(g, "fa", NPU_DTYPE_FLOAT32, 2, D(2, 1), F(1.5f, NAN));
	int fb = irb_const(g, "fb", NPU_DTYPE_FLOAT32, 1, D(3), F(1.5f, 2, -1));
	int ba = irb_const(g, "ba", NPU_DTYPE_BOOL, 1, D(2), B(1, 0));
	int bb = irb_const(g, "bb", NPU_DTYPE_BOOL, 0, NULL, B(1));

	op(g, "Equal", (int[]){ a, b }, 2, "eq");
	op(g, "Less", (int[]){ a, b }, 2, "lt");
	op(g, "Greater", (int[]){ a, b }, 2, "gt");
	op(g, "LessOrEqual", (int[]){ a, b }, 2, "le");
	op(g, "GreaterOrEqual", (int[]){ a, b }, 2, "ge");
	op(g, "Equal", (int[]){ fa, fb }, 2, "feq");
	op(g, "Less", (int[]){ fa, fb }, 2, "flt");
	op(g, "Greater", (int[]){ fa, fb }, 2, "fgt");
	op(g, "Equal", (int[]){ ba, bb }, 2, "beq");
	fold_all(g, names, 9);
	/* [[1,2,3],[4,5,6]] against [2,2,5] on every row */
	expect_shape(g, "eq", "bool[2,3]");
	expect_bools(g, "eq", B(0, 1, 0, 0, 0, 0), 6);
	expect_bools(g, "lt", B(1, 0, 1, 0, 0, 0), 6);
	expect_bools(g, "gt", B(0, 0, 0, 1, 1, 1), 6);
	expect_bools(g, "le", B(1, 1, 1, 0, 0, 0), 6);
	expect_bools(g, "ge", B(0, 1, 0, 1, 1, 1), 6);
	/* [[1.5],[NaN]] against [1.5, 2, -1]: NaN compares false */
	expect_bools(g, "feq", B(1, 0, 0, 0, 0, 0), 6);
	expect_bools(g, "flt", B(0, 1, 0, 0, 0, 0), 6);
	expect_bools(g, "fgt", B(0, 0, 1, 0, 0, 0), 6);
	expect_bools(g, "beq", B(1, 0), 2);
	npu_ir_graph_free(g);
}
END_TEST

START_TEST(fold_logical_where)
{
	static const char *const names[] = { "and", "or", "xor", "not", "w", "wi" };
	npu_ir_graph *g = irb_graph(13);
	int a = irb_const(g, "a", NPU_DTYPE_BOOL, 2, D(2, 1), B(1, 0));
	int b = irb_const(g, "b", NPU_DTYPE_BOOL, 1, D(2), B(1, 0));
	int x = irb_const(g, "x", NPU_DTYPE_FLOAT32, 1, D(3), F(1, 2, 3));
	int y = irb_const(g, "y", NPU_DTYPE_FLOAT32, 0, NULL, F(9));
	int xi = irb_const(g, "xi", NPU_DTYPE_INT64, 2, D(1, 2), D(10, 20));
	int yi = irb_const(g, "yi", NPU_DTYPE_INT64, 2, D(2, 1), D(-1, -2));

	op(g, "And", (int[]){ a, b }, 2, "and");
	op(g, "Or", (int[]){ a, b }, 2, "or");
	op(g, "Xor", (int[]){ a, b }, 2, "xor");
	op(g, "Not", &a, 1, "not");
	op(g, "Where", (int[]){ a, x, y }, 3, "w");
	op(g, "Where", (int[]){ b, xi, yi }, 3, "wi");
	fold_all(g, names, 6);
	/* a [[1],[0]] with b [1,0] */
	expect_shape(g, "and", "bool[2,2]");
	expect_bools(g, "and", B(1, 0, 0, 0), 4);
	expect_bools(g, "or", B(1, 1, 1, 0), 4);
	expect_bools(g, "xor", B(0, 1, 1, 0), 4);
	expect_bools(g, "not", B(0, 1), 2);
	expect_shape(g, "w", "float32[2,3]");
	expect_f32(g, "w", F(1, 2, 3, 9, 9, 9), 6);
	/* b [1,0] picks column 0 of xi [[10,20]], column 1 of yi [[-1],[-2]] */
	expect_shape(g, "wi", "int64[2,2]");
	expect_i64(g, "wi", D(10, -1, 10, -2), 4);
	npu_ir_graph_free(g);
}
END_TEST

START_TEST(fold_min_max_mod)
{
	static const char *const names[] = { "mn", "mx", "mx3", "fmx", "md", "fmd", "ffmd" };
	npu_ir_graph *g = irb_graph(13);
	int a = irb_const(g, "a", NPU_DTYPE_INT64, 1, D(2), D(3, -7));
	int z = irb_const(g, "z", NPU_DTYPE_INT64, 0, NULL, D(0));
	int c = irb_const(g, "c", NPU_DTYPE_INT64, 2, D(2, 1), D(-1, 5));
	int f1 = irb_const(g, "f1", NPU_DTYPE_FLOAT32, 1, D(2), F(1, 5));
	int f2 = irb_const(g, "f2", NPU_DTYPE_FLOAT32, 1, D(2), F(4, NAN));
	int p = irb_const(g, "p", NPU_DTYPE_INT64, 1, D(4), D(7, -7, 7, -7));
	int q = irb_const(g, "q", NPU_DTYPE_INT64, 1, D(4), D(3, 3, -3, -3));
	int fp = irb_const(g, "fp", NPU_DTYPE_FLOAT32, 1, D(2), F(5.5f, -5.5f));
	int fq = irb_const(g, "fq", NPU_DTYPE_FLOAT32, 0, NULL, F(2));

	op(g, "Min", (int[]){ a, z }, 2, "mn");
	op(g, "Max", (int[]){ a, z }, 2, "mx");
	op(g, "Max", (int[]){ a, z, c }, 3, "mx3");
	op(g, "Max", (int[]){ f1, f2 }, 2, "fmx");
	op(g, "Mod", (int[]){ p, q }, 2, "md");
	ck_assert_int_eq(npu_ir_set_attr_int(op(g, "Mod", (int[]){ p, q }, 2, "fmd"), "fmod", 1),
			 NPU_OK);
	ck_assert_int_eq(npu_ir_set_attr_int(op(g, "Mod", (int[]){ fp, fq }, 2, "ffmd"), "fmod", 1),
			 NPU_OK);
	fold_all(g, names, 7);
	expect_i64(g, "mn", D(0, -7), 2);
	expect_i64(g, "mx", D(3, 0), 2);
	/* [3,-7], 0 and [[-1],[5]] broadcast to [2,2] */
	expect_shape(g, "mx3", "int64[2,2]");
	expect_i64(g, "mx3", D(3, 0, 5, 5), 4);
	expect_f32(g, "fmx", F(4, NAN), 2);
	/* fmod 0 takes the divisor's sign, fmod 1 the dividend's */
	expect_i64(g, "md", D(1, 2, -2, -1), 4);
	expect_i64(g, "fmd", D(1, -1, 1, -1), 4);
	expect_f32(g, "ffmd", F(1.5f, -1.5f), 2);
	npu_ir_graph_free(g);
}
END_TEST

START_TEST(fold_expand_tile_cast_sqrt)
{
	static const char *const names[] = { "ex", "t1", "t2", "fb", "bf", "bi", "sq", "cs" };
	npu_ir_graph *g = irb_graph(13);
	int x = irb_const(g, "x", NPU_DTYPE_INT64, 2, D(3, 1), D(1, 2, 3));
	int shp = irb_const(g, "shp", NPU_DTYPE_INT64, 1, D(3), D(2, 1, 2));
	int v = irb_const(g, "v", NPU_DTYPE_FLOAT32, 1, D(2), F(1, 2));
	int r1 = irb_const(g, "r1", NPU_DTYPE_INT64, 1, D(1), D(3));
	int m = irb_const(g, "m", NPU_DTYPE_BOOL, 2, D(1, 2), B(1, 0));
	int r2 = irb_const(g, "r2", NPU_DTYPE_INT64, 1, D(2), D(2, 2));
	int f = irb_const(g, "f", NPU_DTYPE_FLOAT32, 1, D(4), F(0, 0.5f, -2, NAN));
	int s = irb_const(g, "s", NPU_DTYPE_FLOAT32, 1, D(2), F(4, 2));
	int hd = irb_const(g, "hd", NPU_DTYPE_INT64, 0, NULL, D(64));

	op(g, "Expand", (int[]){ x, shp }, 2, "ex");
	op(g, "Tile", (int[]){ v, r1 }, 2, "t1");
	op(g, "Tile", (int[]){ m, r2 }, 2, "t2");
	ck_assert_int_eq(npu_ir_set_attr_int(op(g, "Cast", &f, 1, "fb"), "to", NPU_DTYPE_BOOL),
			 NPU_OK);
	ck_assert_int_eq(npu_ir_set_attr_int(op(g, "Cast", &m, 1, "bf"), "to", NPU_DTYPE_FLOAT32),
			 NPU_OK);
	ck_assert_int_eq(npu_ir_set_attr_int(op(g, "Cast", &m, 1, "bi"), "to", NPU_DTYPE_INT64),
			 NPU_OK);
	op(g, "Sqrt", &s, 1, "sq");
	/* An attention scale: Sqrt(Cast(head_dim, float)). */
	{
		npu_ir_node *n = op(g, "Cast", &hd, 1, "hdf");
		int t;

		ck_assert_int_eq(npu_ir_set_attr_int(n, "to", NPU_DTYPE_FLOAT32), NPU_OK);
		t = npu_ir_find_tensor(g, "hdf");
		op(g, "Sqrt", &t, 1, "cs");
	}
	fold_all(g, names, 8);
	expect_shape(g, "ex", "int64[2,3,2]");
	expect_i64(g, "ex", D(1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3), 12);
	expect_f32(g, "t1", F(1, 2, 1, 2, 1, 2), 6);
	expect_shape(g, "t2", "bool[2,4]");
	expect_bools(g, "t2", B(1, 0, 1, 0, 1, 0, 1, 0), 8);
	/* any non-zero float, NaN too, is true */
	expect_bools(g, "fb", B(0, 1, 1, 1), 4);
	expect_f32(g, "bf", F(1, 0), 2);
	expect_i64(g, "bi", D(1, 0), 2);
	expect_f32(g, "sq", F(2, sqrtf(2)), 2);
	expect_f32(g, "cs", F(8), 1);
	npu_ir_graph_free(g);
}
END_TEST

/* ---- whole subgraphs through the loader and the compiler ---- */

/* Infer with the registry, then compile for 14 clusters. */
static npu_status compile(npu_ir_graph *g, struct npu_cmodel **cm)
{
	struct npu_compile_target tgt = { .clusters = 14, .tpbs = 4, .hbsm_size = 2u << 20,
					  .batch = 1 };
	npu_status st = npu_ops_infer_shapes(g);

	*cm = NULL;
	return st ? st : npu_compile_ir(g, &tgt, cm);
}

static npu_ir_graph *parse(onnxb *b)
{
	npu_ir_graph *g = NULL;
	size_t len;
	uint8_t *buf = onnxb_pack(b, &len);

	ck_assert_int_eq(npu_onnx_parse(buf, len, &g), NPU_OK);
	free(buf);
	onnxb_free(b);
	return g;
}

/* Run compiled @cm (taken) on the emulator: one float input, one float output. */
static void run(struct npu_cmodel *cm, const float *x, float *y)
{
	npu_status st = irb_exec(cm, "emu", (void *[]){ (void *)x }, (void *[]){ y });

	ck_assert_msg(st == NPU_OK, "%s", npu_last_error());
}

START_TEST(fold_torch_reshape)
{
	onnxb *b = onnxb_new(8, 13);
	struct npu_cmodel *cm;
	npu_ir_graph *g;
	float x[2 * 3 * 4], y[2 * 12];

	/* x.view(x.size(0), -1) as torch.onnx exports it, plus a Where on
	 * Equal(Shape, 0) (the reshape-with-zeros guard HF exports). */
	onnxb_input(b, "x", ONNXB_F32, 3, D(2, 3, 4));
	onnxb_init(b, "zero", ONNXB_I64, 0, NULL, D(0), 8);
	onnxb_init_i64(b, "ax0", 1, D(0));
	onnxb_init_i64(b, "minus1", 1, D(-1));
	onnxb_init_i64(b, "ones", 2, D(1, 1));
	onnxb_node(b, "Shape", NULL, "x", "shp");
	onnxb_node(b, "Gather", NULL, "shp,zero", "d0");
	onnxb_node(b, "Unsqueeze", NULL, "d0,ax0", "d0v");
	onnxb_attr_i(b, onnxb_node(b, "Concat", NULL, "d0v,minus1", "want"), "axis", 0);
	onnxb_node(b, "Equal", NULL, "want,zero", "iszero");
	onnxb_node(b, "Where", NULL, "iszero,ones,want", "newshape");
	onnxb_node(b, "Reshape", "view", "x,newshape", "y");
	onnxb_output(b, "y", ONNXB_F32, 2, D(2, 12));
	g = parse(b);
	ck_assert_msg(compile(g, &cm) == NPU_OK, "%s", npu_last_error());
	ck_assert_int_eq(g->n_nodes, 1);
	ck_assert_str_eq(g->nodes[0].op, "Reshape");
	for (int i = 0; i < 24; i++)
		x[i] = (float)i;
	run(cm, x, y);
	for (int i = 0; i < 24; i++)
		ck_assert(y[i] == (float)i);
	npu_ir_graph_free(g);
}
END_TEST

/*
 * scores + mask, mask[i][j] = j > i ? -inf : 0 on the fixed sequence
 * length @S of the scores: Shape -> Gather(2) -> Range -> Unsqueeze (rows,
 * columns) -> Greater -> Where(-inf, 0).
 */
static npu_ir_graph *causal_mask(int64_t S)
{
	onnxb *b = onnxb_new(8, 13);
	float minus_inf = -INFINITY, zero = 0;

	onnxb_input(b, "scores", ONNXB_F32, 4, D(1, 1, S, S));
	onnxb_init(b, "two", ONNXB_I64, 0, NULL, D(2), 8);
	onnxb_init(b, "start", ONNXB_I64, 0, NULL, D(0), 8);
	onnxb_init(b, "step", ONNXB_I64, 0, NULL, D(1), 8);
	onnxb_init_i64(b, "ax0", 1, D(0));
	onnxb_init_i64(b, "ax1", 1, D(1));
	onnxb_init(b, "ninf", ONNXB_F32, 0, NULL, &minus_inf, 4);
	onnxb_init(b, "fzero", ONNXB_F32, 0, NULL, &zero, 4);
	onnxb_node(b, "Shape", NULL, "scores", "shp");
	onnxb_node(b, "Gather", NULL, "shp,two", "seq");
	onnxb_node(b, "Range", NULL, "start,seq,step", "pos");
	onnxb_node(b, "Unsqueeze", NULL, "pos,ax1", "rows");	/* [S,1] */
	onnxb_node(b, "Unsqueeze", NULL, "pos,ax0", "cols");	/* [1,S] */
	onnxb_node(b, "Greater", NULL, "cols,rows", "future");	/* [S,S] */
	onnxb_node(b, "Where", "mask", "future,ninf,fzero", "mask");
	onnxb_node(b, "Add", "mask_add", "scores,mask", "y");
	onnxb_output(b, "y", ONNXB_F32, 4, D(1, 1, S, S));
	return parse(b);
}

START_TEST(fold_causal_mask)
{
	struct npu_cmodel *cm;
	npu_ir_graph *g = causal_mask(4);
	float x[16], y[16];

	ck_assert_msg(compile(g, &cm) == NPU_OK, "%s", npu_last_error());
	ck_assert_int_eq(g->n_nodes, 1);
	ck_assert_str_eq(g->nodes[0].op, "Add");
	for (int i = 0; i < 16; i++)
		x[i] = (float)i;
	run(cm, x, y);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) {
			float v = y[i * 4 + j];

			if (j > i)
				ck_assert_msg(isinf(v) && v < 0, "y[%d][%d] = %g", i, j, v);
			else
				ck_assert_msg(v == (float)(i * 4 + j), "y[%d][%d] = %g", i, j, v);
		}
	npu_ir_graph_free(g);

	/* A float mask over the 16 MiB folding budget stays a Where: a
	 * SELECT at run time on its constant bool condition. */
	g = causal_mask(2100);
	ck_assert_msg(compile(g, &cm) == NPU_OK, "%s", npu_last_error());
	ck_assert_int_eq(g->n_nodes, 2);
	ck_assert_str_eq(g->nodes[0].op, "Where");
	npu_cmodel_free(cm);
	npu_ir_graph_free(g);
}
END_TEST

START_TEST(bool_loader_and_refusals)
{
	static int32_t m_vals[3] = { 2, 0, 0 };
	struct npu_cmodel *cm;
	npu_ir_graph *g;
	onnxb *b;
	Onnx__TensorProto *t;
	float x[3] = { 1, 2, 3 }, y[3];

	/*
	 * Bool initializers in int32_data and in raw_data (any non-zero is
	 * true) fold through Not, And and Cast into a float constant.
	 */
	b = onnxb_new(8, 13);
	onnxb_input(b, "x", ONNXB_F32, 1, D(3));
	t = onnxb_init(b, "m", ONNXB_BOOL, 1, D(3), NULL, 0);
	t->has_raw_data = 0;
	t->n_int32_data = 3;
	t->int32_data = m_vals;
	onnxb_init(b, "k", ONNXB_BOOL, 1, D(3), B(0, 5, 1), 3);
	onnxb_node(b, "Not", NULL, "m", "nm");			/* 0, 1, 1 */
	onnxb_node(b, "And", NULL, "nm,k", "keep");		/* 0, 1, 1 */
	onnxb_attr_i(b, onnxb_node(b, "Cast", NULL, "keep", "keepf"), "to", ONNXB_F32);
	onnxb_node(b, "Mul", "apply", "x,keepf", "y");
	onnxb_output(b, "y", ONNXB_F32, 1, D(3));
	g = parse(b);
	ck_assert_uint_eq(((const uint8_t *)T(g, "k")->data)[1], 1);
	ck_assert_msg(compile(g, &cm) == NPU_OK, "%s", npu_last_error());
	ck_assert_int_eq(g->n_nodes, 1);
	expect_f32(g, "keepf", F(0, 1, 1), 3);
	run(cm, x, y);
	ck_assert(y[0] == 0 && y[1] == 2 && y[2] == 3);
	npu_ir_graph_free(g);

	/* A bool computed at run time is a 0/1 byte on the device. */
	b = onnxb_new(8, 13);
	onnxb_input(b, "x", ONNXB_F32, 1, D(3));
	onnxb_attr_i(b, onnxb_node(b, "Cast", "tobool", "x", "xb"), "to", ONNXB_BOOL);
	onnxb_attr_i(b, onnxb_node(b, "Cast", "back", "xb", "y"), "to", ONNXB_F32);
	onnxb_output(b, "y", ONNXB_F32, 1, D(3));
	g = parse(b);
	ck_assert_msg(compile(g, &cm) == NPU_OK, "%s", npu_last_error());
	x[0] = 0;
	x[1] = -0.25f;
	x[2] = NAN;
	run(cm, x, y);
	ck_assert(y[0] == 0 && y[1] == 1 && y[2] == 1);
	npu_ir_graph_free(g);

	/* A run-time Equal runs on the CVU, its bool feeds a run-time Where. */
	b = onnxb_new(8, 13);
	onnxb_input(b, "x", ONNXB_F32, 1, D(3));
	onnxb_init(b, "z", ONNXB_F32, 0, NULL, &(float){ 0 }, 4);
	onnxb_init(b, "seven", ONNXB_F32, 0, NULL, &(float){ 7 }, 4);
	onnxb_node(b, "Equal", "is_pad", "x,z", "pad");
	onnxb_node(b, "Where", NULL, "pad,seven,x", "y");
	onnxb_output(b, "y", ONNXB_F32, 1, D(3));
	g = parse(b);
	ck_assert_int_eq(npu_ir_infer_shapes(g, rules), NPU_OK);
	ck_assert_int_eq(npu_ops_check_supported(g, NULL), NPU_OK);
	npu_ir_graph_free(g);
	b = onnxb_new(8, 13);
	onnxb_input(b, "x", ONNXB_F32, 1, D(3));
	onnxb_init(b, "z", ONNXB_F32, 0, NULL, &(float){ 0 }, 4);
	onnxb_init(b, "seven", ONNXB_F32, 0, NULL, &(float){ 7 }, 4);
	onnxb_node(b, "Equal", "is_pad", "x,z", "pad");
	onnxb_node(b, "Where", NULL, "pad,seven,x", "y");
	onnxb_output(b, "y", ONNXB_F32, 1, D(3));
	g = parse(b);
	ck_assert_msg(compile(g, &cm) == NPU_OK, "%s", npu_last_error());
	x[0] = 0;
	x[1] = INFINITY;
	x[2] = -0.0f;
	run(cm, x, y);
	ck_assert(y[0] == 7 && isinf(y[1]) && y[2] == 7);
	npu_ir_graph_free(g);

	/* A bool where no lowering takes one: refused naming the operator (and
	 * the option: the CPU fallback's ReduceMax takes bools, issue 17). */
	b = onnxb_new(8, 13);
	onnxb_input(b, "x", ONNXB_F32, 1, D(3));
	onnxb_attr_i(b, onnxb_node(b, "Cast", "tobool", "x", "xb"), "to", ONNXB_BOOL);
	onnxb_attr_i(b, onnxb_node(b, "ReduceMax", "rm", "xb", "y"), "keepdims", 1);
	onnxb_output(b, "y", ONNXB_BOOL, 1, D(1));
	g = parse(b);
	ck_assert_int_eq(compile(g, &cm), NPU_ERR_UNSUPPORTED);
	ck_assert_str_eq(npu_last_error(), "node 'rm' (ReduceMax): ReduceMax on bool; compile with "
			 "allow_cpu_fallback (npu-run --cpu-fallback) to run it on the CPU");
	npu_ir_graph_free(g);
}
END_TEST

static Suite *fold_suite(void)
{
	Suite *s = suite_create("fold");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, fold_compare);
	tcase_add_test(tc, fold_logical_where);
	tcase_add_test(tc, fold_min_max_mod);
	tcase_add_test(tc, fold_expand_tile_cast_sqrt);
	tcase_add_test(tc, fold_torch_reshape);
	tcase_add_test(tc, fold_causal_mask);
	tcase_add_test(tc, bool_loader_and_refusals);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(fold_suite)
