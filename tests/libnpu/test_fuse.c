// SPDX-License-Identifier: MIT
/*
 * The fusion pass's convolution decisions (compile/fuse_conv.c): which
 * depthwise Conv runs inside its pointwise reader's tiles, when a residual
 * is rebuilt in the tile, and that nothing is paired when the pair's tile
 * does not fit the budget or the depthwise result is needed elsewhere.
 */
#include <string.h>

#include "compile/npu_lower.h"
#include "compile/npu_ops.h"
#include "ir_build.h"
#include "npu_test.h"

#define HBSM_TILE (1u << 20)	/* half of a 2 MiB HBSM: today's tile budget */

/* A float tensor [1, c, 16, 16]. */
static int act(npu_ir_graph *g, const char *name, int64_t c)
{
	return irb_tensor(g, name, NPU_DTYPE_FLOAT32, 4, (int64_t[]){ 1, c, 16, 16 });
}

static int weights(npu_ir_graph *g, const char *name, int64_t oc, int64_t ic, int64_t k)
{
	static float w[64 * 64 * 9];

	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		w[i] = (float)(i % 7) * 0.125f - 0.375f;
	return irb_const(g, name, NPU_DTYPE_FLOAT32, 4, (int64_t[]){ oc, ic, k, k }, w);
}

/*
 * x [1,8,16,16] -> depthwise 3x3 (pad 1) -> pointwise 1x1 to @oc channels
 * [-> + x, when @residual] -> y; also a graph output of the depthwise
 * result when @dw_out.
 */
static npu_ir_graph *dw_pw(int64_t oc, bool residual, bool dw_out, int *dw, int *pw)
{
	npu_ir_graph *g = irb_graph(13);
	int x = act(g, "x", 8), m = act(g, "m", 8), p = act(g, "p", oc), y = act(g, "y", oc);
	npu_ir_node *n;

	n = irb_node(g, "Conv", (int[]){ x, weights(g, "wd", 8, 1, 3) }, 2, &m, 1);
	ck_assert_int_eq(npu_ir_set_attr_int(n, "group", 8), NPU_OK);
	ck_assert_int_eq(npu_ir_set_attr_ints(n, "pads", (int64_t[]){ 1, 1, 1, 1 }, 4), NPU_OK);
	irb_node(g, "Conv", (int[]){ m, weights(g, "wp", oc, 8, 1) }, 2, residual ? &p : &y, 1);
	if (residual)
		irb_node(g, "Add", (int[]){ p, x }, 2, &y, 1);
	irb_io(g, &x, 1, dw_out ? (int[]){ y, m } : &y, dw_out ? 2 : 1);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	*dw = *pw = -1;
	for (int i = 0; i < g->n_nodes; i++) {
		if (strcmp(g->nodes[i].op, "Conv"))
			continue;
		if (g->nodes[i].inputs[0] == x)
			*dw = i;
		else
			*pw = i;
	}
	ck_assert(*dw >= 0 && *pw >= 0);
	return g;
}

static int64_t attr(const npu_ir_graph *g, int node, const char *name)
{
	int64_t v = -1;

	if (!npu_ir_attr_find(&g->nodes[node], name))
		return 0;
	ck_assert_int_eq(npu_ir_attr_int(&g->nodes[node], name, -1, &v), NPU_OK);
	return v;
}

START_TEST(pair_marked)
{
	int dw, pw;
	npu_ir_graph *g = dw_pw(16, false, false, &dw, &pw);

	ck_assert_int_eq(npu_fuse(g, HBSM_TILE), NPU_OK);
	ck_assert_int_eq(attr(g, dw, NPU_ATTR_FUSED), 1);
	ck_assert_int_eq(attr(g, pw, NPU_ATTR_PAIR), 1);
	ck_assert_int_eq(attr(g, pw, NPU_ATTR_RES_POOL), 0);	/* no residual */
	ck_assert_int_eq(attr(g, pw, NPU_ATTR_FUSED), 0);
	npu_ir_graph_free(g);
}
END_TEST

START_TEST(residual_rebuilt_from_input)
{
	int dw, pw;
	npu_ir_graph *g = dw_pw(8, true, false, &dw, &pw);

	ck_assert_int_eq(npu_fuse(g, HBSM_TILE), NPU_OK);
	/* The Add became the pointwise Conv's residual; its source is x. */
	for (int i = 0; i < g->n_nodes; i++)
		ck_assert(g->nodes[i].dead || strcmp(g->nodes[i].op, "Add"));
	for (int i = 0; i < g->n_nodes; i++)
		if (!g->nodes[i].dead && npu_ir_attr_find(&g->nodes[i], NPU_ATTR_PAIR))
			pw = i;
	ck_assert_int_eq(attr(g, pw, NPU_ATTR_RES_POOL), 1);
	npu_ir_graph_free(g);
}
END_TEST

START_TEST(no_pair_when_tile_does_not_fit)
{
	int dw, pw;
	npu_ir_graph *g = dw_pw(16, false, false, &dw, &pw);

	/* One row of the pair needs more than 4 KiB of HBSM. */
	ck_assert_int_eq(npu_fuse(g, 4096), NPU_OK);
	ck_assert_int_eq(attr(g, dw, NPU_ATTR_FUSED), 0);
	ck_assert_int_eq(attr(g, pw, NPU_ATTR_PAIR), 0);
	npu_ir_graph_free(g);
}
END_TEST

START_TEST(no_pair_when_depthwise_result_is_seen)
{
	int dw, pw;
	npu_ir_graph *g = dw_pw(16, false, true, &dw, &pw);

	ck_assert_int_eq(npu_fuse(g, HBSM_TILE), NPU_OK);
	ck_assert_int_eq(attr(g, dw, NPU_ATTR_FUSED), 0);
	ck_assert_int_eq(attr(g, pw, NPU_ATTR_PAIR), 0);
	npu_ir_graph_free(g);
}
END_TEST

static Suite *fuse_suite(void)
{
	Suite *s = suite_create("npu_fuse");
	TCase *tc = tcase_create("conv");

	tcase_add_test(tc, pair_marked);
	tcase_add_test(tc, residual_rebuilt_from_input);
	tcase_add_test(tc, no_pair_when_tile_does_not_fit);
	tcase_add_test(tc, no_pair_when_depthwise_result_is_seen);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(fuse_suite)
