// SPDX-License-Identifier: MIT
/*
 * The fusion pass's convolution decisions (compile/fuse_conv.c): which
 * depthwise Conv runs inside its pointwise reader's tiles, when a residual
 * is rebuilt in the tile, and that nothing is paired when the pair's tile
 * does not fit the budget or the depthwise result is needed elsewhere.
 */
#include <math.h>
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

/*
 * A BatchNormalization folded into its Conv and another one split into
 * Mul + Add in the same graph, with no residual: the folded node, dead but
 * still reading the Conv output it replaced, must not reach the final
 * ordering (PaddleOCR's text detector stopped at "reads tensor ..., which
 * no node ... defines").  x -> Conv 1x1 -> BN -> a; x -> BN -> b; y = a * b.
 */
START_TEST(folded_and_split_batchnorm)
{
	static const float sc[4] = { 1.5f, 0.5f, -1.0f, 2.0f }, bb[4] = { 0.1f, -0.2f, 0.3f, 0.0f };
	static const float mu[4] = { 0.2f, 0.0f, -0.1f, 0.4f }, var[4] = { 1.0f, 0.25f, 4.0f, 0.5f };
	static float x[4 * 256], y[4 * 256], w[16];
	npu_ir_graph *g = irb_graph(13);
	int xi = act(g, "x", 4), c = act(g, "c", 4), a = act(g, "a", 4), b = act(g, "b", 4);
	int yi = act(g, "y", 4), p[4];
	const int64_t d4[1] = { 4 };
	struct npu_cmodel *cm;

	for (int i = 0; i < 16; i++)
		w[i] = (float)((i * 5) % 7) * 0.25f - 0.75f;
	for (int i = 0; i < 4 * 256; i++)
		x[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
	p[0] = irb_const(g, "sc", NPU_DTYPE_FLOAT32, 1, d4, sc);
	p[1] = irb_const(g, "bb", NPU_DTYPE_FLOAT32, 1, d4, bb);
	p[2] = irb_const(g, "mu", NPU_DTYPE_FLOAT32, 1, d4, mu);
	p[3] = irb_const(g, "var", NPU_DTYPE_FLOAT32, 1, d4, var);
	irb_node(g, "Conv", (int[]){ xi, irb_const(g, "w", NPU_DTYPE_FLOAT32, 4,
						  (int64_t[]){ 4, 4, 1, 1 }, w) }, 2, &c, 1);
	irb_node(g, "BatchNormalization", (int[]){ c, p[0], p[1], p[2], p[3] }, 5, &a, 1);
	irb_node(g, "BatchNormalization", (int[]){ xi, p[0], p[1], p[2], p[3] }, 5, &b, 1);
	irb_node(g, "Mul", (int[]){ a, b }, 2, &yi, 1);
	irb_io(g, &xi, 1, &yi, 1);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_msg(irb_compile(g, "emu", &cm) == NPU_OK, "compile: %s", npu_last_error());
	ck_assert_msg(irb_exec(cm, "emu", (void *[]){ x }, (void *[]){ y }) == NPU_OK, "run: %s",
		      npu_last_error());
	for (int ch = 0; ch < 4; ch++) {
		float k = sc[ch] / sqrtf(var[ch] + 1e-5f);

		for (int i = 0; i < 256; i++) {
			float cv = 0, want;

			for (int ic = 0; ic < 4; ic++)
				cv += w[ch * 4 + ic] * x[ic * 256 + i];
			want = ((cv - mu[ch]) * k + bb[ch]) * ((x[ch * 256 + i] - mu[ch]) * k + bb[ch]);
			ck_assert_msg(fabsf(y[ch * 256 + i] - want) <= 0.05f + 0.02f * fabsf(want),
				      "channel %d element %d: %g, expected %g", ch, i,
				      y[ch * 256 + i], want);
		}
	}
	npu_ir_graph_free(g);
}
END_TEST

static Suite *fuse_suite(void)
{
	Suite *s = suite_create("npu_fuse");
	TCase *tc = tcase_create("conv");

	/* folded_and_split_batchnorm compiles and runs a model: room for a
	 * loaded machine under ASan. */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, pair_marked);
	tcase_add_test(tc, residual_rebuilt_from_input);
	tcase_add_test(tc, no_pair_when_tile_does_not_fit);
	tcase_add_test(tc, no_pair_when_depthwise_result_is_seen);
	tcase_add_test(tc, folded_and_split_batchnorm);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(fuse_suite)
