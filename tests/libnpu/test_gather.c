// SPDX-License-Identifier: MIT
/*
 * Gather with indices computed at run time (embeddings) on the emulator:
 * the rows are the table's, byte for byte, along any axis; an index
 * outside the table ends the run with a message naming it and the node,
 * and nothing outside the table is read; constant indices beyond what the
 * rewrite takes are checked at compile time and gathered the same way.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_ops.h"
#include "ir_build.h"
#include "npu_test.h"

/* Compile @g; run once with inputs @x, output 0 into @y; the first failure. */
static npu_status run(npu_ir_graph *g, void *const *x, void *y)
{
	struct npu_cmodel *cm;
	npu_status st;

	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	st = irb_compile(g, "emu", &cm);
	return st ? st : irb_exec(cm, "emu", x, (void *[]){ y });
}

enum { V = 50, E = 16, B = 2, S = 7 };

/* Token embeddings: table [V, E] constant, ids int32 [B, S] at run time. */
static npu_ir_graph *embedding(const float *table)
{
	npu_ir_graph *g = irb_graph(13);
	int t = irb_const(g, "wte", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ V, E }, table);
	int ids = irb_tensor(g, "ids", NPU_DTYPE_INT32, 2, (int64_t[]){ B, S });
	int y = irb_tensor(g, "emb", NPU_DTYPE_FLOAT32, -1, NULL);
	irb_node(g, "Gather", (int[]){ t, ids }, 2, &y, 1);	/* named "Gather" */
	irb_io(g, &ids, 1, &y, 1);
	return g;
}

static float *table_of(int64_t n)
{
	float *t = malloc((size_t)n * sizeof(float));

	for (int64_t i = 0; i < n; i++)
		t[i] = (float)i * 0.25f - 3.0f;
	return t;
}

START_TEST(embedding_rows_exact)
{
	float *table = table_of(V * E), y[B * S * E];
	int32_t ids[B * S] = { 0, 49, 3, 3, 17, 8, 1, 22, 40, 0, 5, 48, 31, 2 };
	npu_ir_graph *g = embedding(table);

	ck_assert_int_eq(run(g, (void *[]){ ids }, y), NPU_OK);
	for (int i = 0; i < B * S; i++)
		ck_assert_msg(memcmp(y + i * E, table + ids[i] * E, E * sizeof(float)) == 0,
			      "row %d (id %d)", i, ids[i]);
	npu_ir_graph_free(g);
	free(table);
}
END_TEST

START_TEST(embedding_index_out_of_range)
{
	float *table = table_of(V * E), y[B * S * E];
	int32_t ids[B * S] = { 0, 1, 2, 50, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13 };
	npu_ir_graph *g = embedding(table);

	ck_assert_int_eq(run(g, (void *[]){ ids }, y), NPU_ERR_JOB_FAILED);
	ck_assert_msg(strstr(npu_last_error(), "index 50 out of range [0, 50) at position 3"),
		      "%s", npu_last_error());
	ck_assert_msg(strstr(npu_last_error(), "(Gather Gather)"), "%s", npu_last_error());
	npu_ir_graph_free(g);
	g = embedding(table);
	ids[3] = -1;
	ck_assert_int_eq(run(g, (void *[]){ ids }, y), NPU_ERR_JOB_FAILED);
	ck_assert_msg(strstr(npu_last_error(), "index -1 out of range [0, 50)") &&
		      strstr(npu_last_error(), "negative indices"), "%s", npu_last_error());
	npu_ir_graph_free(g);
	free(table);
}
END_TEST

/* Axis 1 of run-time data [3, 10, 4]: each outer block gathers its own rows. */
START_TEST(gather_inner_axis)
{
	float *x = table_of(3 * 10 * 4), y[3 * 5 * 4];
	int32_t ids[5] = { 9, 0, 4, 4, 7 };
	npu_ir_graph *g = irb_graph(13);
	int xi = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, (int64_t[]){ 3, 10, 4 });
	int ii = irb_tensor(g, "i", NPU_DTYPE_INT32, 1, (int64_t[]){ 5 });
	int yi = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);
	npu_ir_node *n = irb_node(g, "Gather", (int[]){ xi, ii }, 2, &yi, 1);

	ck_assert_int_eq(npu_ir_set_attr_int(n, "axis", 1), NPU_OK);
	irb_io(g, (int[]){ xi, ii }, 2, &yi, 1);
	ck_assert_int_eq(run(g, (void *[]){ x, ids }, y), NPU_OK);
	for (int o = 0; o < 3; o++)
		for (int i = 0; i < 5; i++)
			ck_assert_msg(memcmp(y + (o * 5 + i) * 4, x + (o * 10 + ids[i]) * 4,
					     4 * sizeof(float)) == 0, "(%d, %d)", o, i);
	npu_ir_graph_free(g);
	free(x);
}
END_TEST

/* More constant indices than the Slice rewrite takes: wrapped, checked, gathered. */
START_TEST(many_constant_indices)
{
	enum { N = 1500 };
	float *x = table_of(V * E), *y = malloc(N * E * sizeof(float));
	int64_t *ids = malloc(N * sizeof(int64_t));
	npu_ir_graph *g = irb_graph(13);
	int xi = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ V, E });
	int ii, yi;

	for (int i = 0; i < N; i++)
		ids[i] = (i * 7) % (2 * V) - V;	/* -50 .. 49 */
	ii = irb_const(g, "i", NPU_DTYPE_INT64, 1, (int64_t[]){ N }, ids);
	yi = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);
	irb_node(g, "Gather", (int[]){ xi, ii }, 2, &yi, 1);
	irb_io(g, &xi, 1, &yi, 1);
	ck_assert_int_eq(run(g, (void *[]){ x }, y), NPU_OK);
	for (int i = 0; i < N; i++) {
		int64_t k = ids[i] < 0 ? ids[i] + V : ids[i];

		ck_assert_msg(memcmp(y + i * E, x + k * E, E * sizeof(float)) == 0, "row %d", i);
	}
	npu_ir_graph_free(g);
	/* One constant index past the table: refused when compiling. */
	g = irb_graph(13);
	xi = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ V, E });
	ids[700] = V;
	ii = irb_const(g, "i", NPU_DTYPE_INT64, 1, (int64_t[]){ N }, ids);
	yi = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);
	irb_node(g, "Gather", (int[]){ xi, ii }, 2, &yi, 1);
	irb_io(g, &xi, 1, &yi, 1);
	ck_assert_int_eq(run(g, (void *[]){ x }, y), NPU_ERR_FORMAT);
	ck_assert_msg(strstr(npu_last_error(), "Gather index 50 out of range [-50, 50)"), "%s",
		      npu_last_error());
	npu_ir_graph_free(g);
	free(ids);
	free(x);
	free(y);
}
END_TEST

static Suite *gather_suite(void)
{
	Suite *s = suite_create("npu_gather");
	TCase *tc = tcase_create("runtime_indices");

	tcase_add_test(tc, embedding_rows_exact);
	tcase_add_test(tc, embedding_index_out_of_range);
	tcase_add_test(tc, gather_inner_axis);
	tcase_add_test(tc, many_constant_indices);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(gather_suite)
