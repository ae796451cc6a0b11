// SPDX-License-Identifier: MIT
/*
 * npu.ScatterRows on the emulator against a C reference: rows written at
 * constant positions (DMA, any device) and at run-time ones (ISA 1.3
 * DST_INDEXED descriptors), along any axis, duplicates ending with the
 * last; in place (the output in data's bytes: no copy step) when the
 * compiler sees it is safe or a rewrite asks for it (NPU_ATTR_IN_PLACE),
 * else after a copy; bad shapes and rows refused naming the node, and a
 * run-time row past the end ending the run before anything is written.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_lower.h"
#include "compile/npu_ops.h"
#include "ir_build.h"
#include "model/npu_cmodel.h"
#include "npu_test.h"

/* data [A, D, C] float32, rows along axis 1, S of them. */
enum { A = 3, D = 10, C = 4 };

static float *seq(int64_t n, float base)
{
	float *t = malloc((size_t)n * sizeof(float));

	for (int64_t i = 0; i < n; i++)
		t[i] = base + (float)i * 0.5f;
	return t;
}

/* The reference: out = x; out[a, rows[i], c] = u[a, i, c], in order. */
static void ref(const float *x, const int64_t *rows, int S, const float *u, float *out)
{
	memcpy(out, x, A * D * C * sizeof(float));
	for (int a = 0; a < A; a++)
		for (int i = 0; i < S; i++) {
			int64_t r = rows[i] < 0 ? rows[i] + D : rows[i];

			memcpy(out + (a * D + r) * C, u + (a * S + i) * C, C * sizeof(float));
		}
}

/*
 * A graph computing ScatterRows(data, rows, u) along axis 1 (given as -2)
 * and a Neg after it; @data_from: 0 data is the input x itself, 1 data =
 * Neg(x) (computed in the scratch, read only here).  @rows_const: the
 * rows are that constant (int64), else the int32 input "rows".  Output:
 * Neg(out), so the output is no graph output and may live in data.
 */
static npu_ir_graph *build(int S, int data_from, const int64_t *rows_const, bool in_place_attr)
{
	npu_ir_graph *g = irb_graph(13);
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, (int64_t[]){ A, D, C });
	int u = irb_tensor(g, "u", NPU_DTYPE_FLOAT32, 3, (int64_t[]){ A, S, C });
	int r, data = x, o = irb_tensor(g, "o", NPU_DTYPE_FLOAT32, -1, NULL);
	int y = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);
	npu_ir_node *n;

	if (rows_const)
		r = irb_const(g, "rows", NPU_DTYPE_INT64, 1, (int64_t[]){ S }, rows_const);
	else
		r = irb_tensor(g, "rows", NPU_DTYPE_INT32, 1, (int64_t[]){ S });
	if (data_from == 1) {
		data = irb_tensor(g, "data", NPU_DTYPE_FLOAT32, -1, NULL);
		irb_node(g, "Neg", &x, 1, &data, 1);
	}
	n = irb_node(g, NPU_OP_SCATTER_ROWS, (int[]){ data, r, u }, 3, &o, 1);
	ck_assert_int_eq(npu_ir_set_attr_int(n, "axis", -2), NPU_OK);
	if (in_place_attr)
		ck_assert_int_eq(npu_ir_set_attr_int(n, NPU_ATTR_IN_PLACE, 1), NPU_OK);
	irb_node(g, "Neg", &o, 1, &y, 1);
	if (rows_const)
		irb_io(g, (int[]){ x, u }, 2, &y, 1);
	else
		irb_io(g, (int[]){ x, u, r }, 3, &y, 1);
	return g;
}

/*
 * Compile @g, check it has @steps steps (-1: any) and needs ISA minor
 * @minor or less, run it with @in, output into @y; the first failure.
 */
static npu_status run(npu_ir_graph *g, int steps, unsigned minor, void *const *in, float *y)
{
	struct npu_cmodel *cm;
	const char *what;
	uint32_t step;
	npu_status st;

	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	st = irb_compile(g, "emu", &cm);
	if (st)
		return st;
	if (steps >= 0)
		ck_assert_int_eq(cm->nsteps, steps);
	ck_assert_uint_le(npu_cmodel_isa_minor(cm, &step, &what), minor);
	return irb_exec(cm, "emu", in, (void *[]){ y });
}

/* The output (negated back) against the reference of data (negated for data_from 1). */
static void check(const float *x, int data_from, const int64_t *rows, int S, const float *u,
		  const float *y)
{
	float want[A * D * C], xd[A * D * C];

	for (int i = 0; i < A * D * C; i++)
		xd[i] = data_from == 1 ? -x[i] : x[i];
	ref(xd, rows, S, u, want);
	for (int i = 0; i < A * D * C; i++)
		ck_assert_msg(-y[i] == want[i], "element %d: %g, expected %g", i, -y[i], want[i]);
}

static void case_const(int data_from, bool attr, int steps)
{
	enum { S = 6 };
	/* a run (4, 5), a duplicate (2 twice: the second wins), a negative (-1 = 9), 0 */
	int64_t rows[S] = { 4, 5, 2, -1, 2, 0 };
	float *x = seq(A * D * C, -7.0f), *u = seq(A * S * C, 100.0f), y[A * D * C];
	npu_ir_graph *g = build(S, data_from, rows, attr);

	ck_assert_int_eq(run(g, steps, 2, (void *[]){ x, u }, y), NPU_OK);
	check(x, data_from, rows, S, u, y);
	npu_ir_graph_free(g);
	free(x);
	free(u);
}

/* Data computed here and read by nothing else: in place, no copy (Neg, rows, Neg). */
START_TEST(const_rows_in_place)
{
	case_const(1, false, 3);
}
END_TEST

/* Data is a graph input: copied to the output first (copy, rows, Neg). */
START_TEST(const_rows_copied)
{
	case_const(0, false, 3);
}
END_TEST

/* The rewrite's promise: the input's own bytes take the rows (rows, Neg). */
START_TEST(const_rows_in_place_asked)
{
	case_const(0, true, 2);
}
END_TEST

static void case_runtime(int data_from, bool attr, int steps)
{
	enum { S = 5 };
	int64_t rows[S] = { 7, 0, 9, 7, 3 };	/* 7 twice: the second wins */
	int32_t r32[S];
	float *x = seq(A * D * C, -3.0f), *u = seq(A * S * C, 50.0f), y[A * D * C];
	npu_ir_graph *g = build(S, data_from, NULL, attr);

	for (int i = 0; i < S; i++)
		r32[i] = (int32_t)rows[i];
	ck_assert_int_eq(run(g, steps, 3, (void *[]){ x, u, r32 }, y), NPU_OK);
	check(x, data_from, rows, S, u, y);
	npu_ir_graph_free(g);
	free(x);
	free(u);
}

START_TEST(runtime_rows_in_place)
{
	case_runtime(1, false, 3);
}
END_TEST

START_TEST(runtime_rows_copied)
{
	case_runtime(0, false, 3);
}
END_TEST

START_TEST(runtime_rows_in_place_asked)
{
	case_runtime(0, true, 2);
}
END_TEST

/*
 * Data read again after the node (o + data): the output cannot be data's
 * bytes, so data is copied first (Neg, copy, rows, Add) and the Add sees
 * data unchanged.
 */
START_TEST(data_read_later_is_copied)
{
	enum { S = 2 };
	int32_t rows[S] = { 9, 4 };
	int64_t r64[S] = { 9, 4 };
	float *x = seq(A * D * C, -2.0f), *u = seq(A * S * C, 30.0f), y[A * D * C];
	float want[A * D * C], xd[A * D * C];
	npu_ir_graph *g = irb_graph(13);
	int xt = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, (int64_t[]){ A, D, C });
	int ut = irb_tensor(g, "u", NPU_DTYPE_FLOAT32, 3, (int64_t[]){ A, S, C });
	int rt = irb_tensor(g, "rows", NPU_DTYPE_INT32, 1, (int64_t[]){ S });
	int dt = irb_tensor(g, "data", NPU_DTYPE_FLOAT32, -1, NULL);
	int ot = irb_tensor(g, "o", NPU_DTYPE_FLOAT32, -1, NULL);
	int yt = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);
	npu_ir_node *n;

	irb_node(g, "Neg", &xt, 1, &dt, 1);
	n = irb_node(g, NPU_OP_SCATTER_ROWS, (int[]){ dt, rt, ut }, 3, &ot, 1);
	ck_assert_int_eq(npu_ir_set_attr_int(n, "axis", 1), NPU_OK);
	irb_node(g, "Add", (int[]){ ot, dt }, 2, &yt, 1);
	irb_io(g, (int[]){ xt, ut, rt }, 3, &yt, 1);
	ck_assert_int_eq(run(g, 4, 3, (void *[]){ x, u, rows }, y), NPU_OK);
	for (int i = 0; i < A * D * C; i++)
		xd[i] = -x[i];
	ref(xd, r64, S, u, want);
	for (int i = 0; i < A * D * C; i++)
		ck_assert_msg(y[i] == want[i] + xd[i], "element %d: %g, expected %g", i, y[i],
			      want[i] + xd[i]);
	npu_ir_graph_free(g);
	free(x);
	free(u);
}
END_TEST

/* Run-time rows need ISA 1.3; constant ones do not. */
START_TEST(runtime_rows_need_isa_1_3)
{
	npu_ir_graph *g = build(2, 1, NULL, false);
	struct npu_cmodel *cm;
	const char *what;
	uint32_t step;

	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_eq(irb_compile(g, "emu", &cm), NPU_OK);
	ck_assert_uint_eq(npu_cmodel_isa_minor(cm, &step, &what), 3);
	ck_assert_msg(strstr(what, "run-time positions"), "%s", what);
	ck_assert_int_eq(npu_cmodel_check_isa(cm, (1u << 16) | 2), NPU_ERR_VERSION);
	ck_assert_msg(strstr(npu_last_error(), "needs NPU program version 1.3"), "%s",
		      npu_last_error());
	ck_assert_int_eq(npu_cmodel_check_isa(cm, (1u << 16) | 3), NPU_OK);
	npu_cmodel_free(cm);
	npu_ir_graph_free(g);
}
END_TEST

/* A run-time row past the end ends the run naming it; negative ones too. */
START_TEST(runtime_row_out_of_range)
{
	enum { S = 3 };
	int32_t rows[S] = { 1, D, 2 };
	float *x = seq(A * D * C, 0.0f), *u = seq(A * S * C, 9.0f), y[A * D * C];
	npu_ir_graph *g = build(S, 1, NULL, false);

	ck_assert_int_eq(run(g, -1, 3, (void *[]){ x, u, rows }, y), NPU_ERR_JOB_FAILED);
	ck_assert_msg(strstr(npu_last_error(), "index 10 out of range [0, 10) at position 1"),
		      "%s", npu_last_error());
	ck_assert_msg(strstr(npu_last_error(), "npu.ScatterRows"), "%s", npu_last_error());
	npu_ir_graph_free(g);
	g = build(S, 1, NULL, false);
	rows[1] = -1;
	ck_assert_int_eq(run(g, -1, 3, (void *[]){ x, u, rows }, y), NPU_ERR_JOB_FAILED);
	ck_assert_msg(strstr(npu_last_error(), "index -1 out of range [0, 10)") &&
		      strstr(npu_last_error(), "negative indices"), "%s", npu_last_error());
	npu_ir_graph_free(g);
	free(x);
	free(u);
}
END_TEST

/* A constant row past the end: refused when compiling, naming the node and the row. */
START_TEST(const_row_out_of_range)
{
	int64_t rows[2] = { 3, -11 };
	npu_ir_graph *g = build(2, 1, rows, false);
	struct npu_cmodel *cm = NULL;

	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_eq(irb_compile(g, "emu", &cm), NPU_ERR_FORMAT);
	ck_assert_msg(strstr(npu_last_error(), "row -11 at position 1 is outside [-10, 10)") &&
		      strstr(npu_last_error(), "npu.ScatterRows"), "%s", npu_last_error());
	npu_ir_graph_free(g);
}
END_TEST

/* The shape rule: updates of the wrong shape or dtype, rows not a list. */
START_TEST(shape_errors)
{
	struct {
		npu_dtype udt, rdt;
		int64_t u1, rrank;
		const char *msg;
	} c[] = {
		{ NPU_DTYPE_FLOAT32, NPU_DTYPE_INT32, 3, 1, "updates 'u' dim 1 is 3, expected 2" },
		{ NPU_DTYPE_INT32, NPU_DTYPE_INT32, 2, 1, "updates 'u' are int32, data 'x' is float32" },
		{ NPU_DTYPE_FLOAT32, NPU_DTYPE_FLOAT32, 2, 1, "rows 'r' must be a list of int32" },
		{ NPU_DTYPE_FLOAT32, NPU_DTYPE_INT32, 2, 2, "rows 'r' must be a list of int32" },
	};

	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		npu_ir_graph *g = irb_graph(13);
		int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, (int64_t[]){ A, D, C });
		int u = irb_tensor(g, "u", c[k].udt, 3, (int64_t[]){ A, c[k].u1, C });
		int r = irb_tensor(g, "r", c[k].rdt, (int)c[k].rrank, (int64_t[]){ 2, 1 });
		int o = irb_tensor(g, "o", NPU_DTYPE_FLOAT32, -1, NULL);
		npu_ir_node *n = irb_node(g, NPU_OP_SCATTER_ROWS, (int[]){ x, r, u }, 3, &o, 1);

		ck_assert_int_eq(npu_ir_set_attr_int(n, "axis", 1), NPU_OK);
		irb_io(g, (int[]){ x, u, r }, 3, &o, 1);
		ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_ERR_SHAPE);
		ck_assert_msg(strstr(npu_last_error(), c[k].msg) &&
			      strstr(npu_last_error(), "npu.ScatterRows"), "case %zu: %s", k,
			      npu_last_error());
		npu_ir_graph_free(g);
	}
}
END_TEST

/*
 * ONNX ScatterND writing rows of axis 0 (indices [S, 1]) with indices at
 * run time, or on int32 data (which the constant rewrite does not take):
 * npu.ScatterRows, the same values as the reference.
 */
START_TEST(scatter_nd_rows)
{
	enum { S = 3 };
	int64_t rows[S] = { 8, 1, -2 };	/* -2: row 8 again, the last wins */
	int32_t r32[S] = { 8, 1, 2 }, xi32[D * C], ui32[S * C], yi32[D * C];
	float *x = seq(D * C, 1.0f), *u = seq(S * C, -20.0f), y[D * C], want[D * C];
	npu_ir_graph *g;
	int xt, it, ut, yt;

	for (int pass = 0; pass < 2; pass++) {
		bool runtime = pass == 0;

		g = irb_graph(13);
		xt = irb_tensor(g, "x", runtime ? NPU_DTYPE_FLOAT32 : NPU_DTYPE_INT32, 2,
				(int64_t[]){ D, C });
		ut = irb_tensor(g, "u", runtime ? NPU_DTYPE_FLOAT32 : NPU_DTYPE_INT32, 2,
				(int64_t[]){ S, C });
		it = runtime ? irb_tensor(g, "i", NPU_DTYPE_INT32, 2, (int64_t[]){ S, 1 }) :
		     irb_const(g, "i", NPU_DTYPE_INT64, 2, (int64_t[]){ S, 1 }, rows);
		yt = irb_tensor(g, "y", runtime ? NPU_DTYPE_FLOAT32 : NPU_DTYPE_INT32, -1, NULL);
		irb_node(g, "ScatterND", (int[]){ xt, it, ut }, 3, &yt, 1);
		if (runtime) {
			irb_io(g, (int[]){ xt, it, ut }, 3, &yt, 1);
			ck_assert_int_eq(run(g, -1, 3, (void *[]){ x, r32, u }, y), NPU_OK);
			memcpy(want, x, sizeof(want));
			for (int i = 0; i < S; i++)
				memcpy(want + r32[i] * C, u + i * C, C * sizeof(float));
			ck_assert(memcmp(y, want, sizeof(want)) == 0);
		} else {
			for (int i = 0; i < D * C; i++)
				xi32[i] = 1000 + i;
			for (int i = 0; i < S * C; i++)
				ui32[i] = -i - 1;
			irb_io(g, (int[]){ xt, ut }, 2, &yt, 1);
			ck_assert_int_eq(run(g, -1, 2, (void *[]){ xi32, ui32 }, (float *)yi32),
					 NPU_OK);
			for (int i = 0; i < D * C; i++) {
				int r = i / C, w = r == 1 ? 1 : r == 8 ? 2 : -1;
				int32_t e = w < 0 ? xi32[i] : ui32[w * C + i % C];

				ck_assert_msg(yi32[i] == e, "element %d: %d, expected %d", i, yi32[i], e);
			}
		}
		npu_ir_graph_free(g);
	}
	free(x);
	free(u);
}
END_TEST

static Suite *scatter_suite(void)
{
	Suite *s = suite_create("npu_scatter");
	TCase *tc = tcase_create("scatter_rows");

	tcase_add_test(tc, const_rows_in_place);
	tcase_add_test(tc, const_rows_copied);
	tcase_add_test(tc, const_rows_in_place_asked);
	tcase_add_test(tc, runtime_rows_in_place);
	tcase_add_test(tc, runtime_rows_copied);
	tcase_add_test(tc, runtime_rows_in_place_asked);
	tcase_add_test(tc, data_read_later_is_copied);
	tcase_add_test(tc, runtime_rows_need_isa_1_3);
	tcase_add_test(tc, runtime_row_out_of_range);
	tcase_add_test(tc, const_row_out_of_range);
	tcase_add_test(tc, shape_errors);
	tcase_add_test(tc, scatter_nd_rows);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(scatter_suite)
