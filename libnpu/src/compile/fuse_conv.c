// SPDX-License-Identifier: MIT
/*
 * Convolution fusion decisions, the last step of the fusion pass
 * (npu_fuse.c), taken once here so that the lowerings lower what they are
 * given:
 *
 * - A depthwise float Conv whose output only a pointwise float Conv reads
 *   runs in the pointwise Conv's tiles when the pair's tile fits the HBSM
 *   budget: the depthwise node gets NPU_ATTR_FUSED (nothing to lower on
 *   its own), the pointwise node NPU_ATTR_PAIR (lower_conv.c lowers both
 *   from it).
 * - When such a pair's residual can be rebuilt in the tile from the
 *   depthwise input (that input itself, or an unpadded MaxPool of it with
 *   window = stride, maybe zero-padded along the channels by a Concat),
 *   the pointwise node gets NPU_ATTR_RES_POOL = the pool window (1: none),
 *   and a MaxPool or Concat that only computes that residual gets
 *   NPU_ATTR_FUSED: nothing needs to compute it.
 *
 * These choices depend on the tile budget (HBSM bytes per tile), so the
 * pass runs on the final graph of the compile, after every other rewrite.
 */
#include <string.h>

#include "compile/conv_geom.h"
#include "compile/npu_lower.h"
#include "npu_debug.h"

struct fuse_conv {
	const npu_ir_graph *g;
	uint32_t hbsm;		/* HBSM bytes one tile may use */
};

/*
 * A depthwise float Conv whose output only a pointwise (1x1, stride 1,
 * unpadded, ungrouped) float Conv reads runs in that Conv's tiles: the
 * depthwise result stays in HBSM, in bf16 (what the pointwise Conv would
 * have converted it to anyway), and never goes through DDR.
 */
static bool is_float_conv(const npu_ir_graph *g, const npu_ir_node *n)
{
	const npu_ir_tensor *x = n->n_inputs > 0 ? npu_ir_input(g, n, 0) : NULL;

	return !n->dead && !strcmp(n->op, "Conv") && x && x->dtype == NPU_DTYPE_FLOAT32 &&
	       x->rank == 4 && n->n_outputs == 1 && n->outputs[0] >= 0;
}

/* The pointwise Conv that depthwise Conv @a feeds alone, or NULL. */
static const npu_ir_node *pointwise_after(const struct fuse_conv *fc, const npu_ir_node *a)
{
	const npu_ir_graph *g = fc->g;
	const npu_ir_node *b = NULL;
	struct npu_conv_geom ga, gb;
	int y;

	if (!is_float_conv(g, a) || a->n_inputs > 3)
		return NULL;
	y = a->outputs[0];
	if (npu_ir_is_graph_output(g, y) || npu_ir_count_uses(g, y) != 1)
		return NULL;
	for (int i = 0; i < g->n_nodes && !b; i++)
		if (!g->nodes[i].dead && g->nodes[i].n_inputs > 0 && g->nodes[i].inputs[0] == y)
			b = &g->nodes[i];
	if (!b || !is_float_conv(g, b) || npu_conv_geom_read(fc->g, a, false, &ga) ||
	    npu_conv_geom_read(fc->g, b, false, &gb))
		return NULL;
	if (ga.groups != ga.C || ga.OC != ga.C || gb.groups != 1 || gb.KH != 1 || gb.KW != 1 ||
	    gb.sh != 1 || gb.sw != 1 || gb.pt || gb.pl || gb.pb || gb.pr)
		return NULL;
	return b;
}

static bool pair_fits(const struct fuse_conv *fc, const npu_ir_node *a, const npu_ir_node *b)
{
	struct npu_conv_geom ga, gb;

	if (npu_conv_geom_read(fc->g, a, false, &ga) || npu_conv_geom_read(fc->g, b, false, &gb))
		return false;
	return npu_pair_tile_bytes(&ga, &gb, b->n_inputs > 3 && b->inputs[3] >= 0,
				   npu_conv_max_rows(&ga, 1), 1) <=
	       fc->hbsm;
}

/*
 * Where a pair's residual comes from, when it can be rebuilt from the
 * tile's X: @x itself (ks = 1) or a MaxPool of @x with a ks x ks window
 * and stride ks, unpadded; either one maybe zero-padded along the
 * channels by a Concat with constant zeros.
 */
struct res_src {
	int64_t c;		/* channels that come from @x */
	int64_t ks;		/* pool window and stride; 1: none */
};

/* Tensor @p is @x or an unpadded MaxPool of it with window = stride. */
static bool x_or_pool(const struct fuse_conv *fc, int p, int x, struct res_src *rs)
{
	const npu_ir_graph *g = fc->g;
	const npu_ir_node *n;
	struct npu_conv_geom gp;

	rs->ks = 1;
	if (p == x)
		return true;
	if (g->tensors[p].producer < 0)
		return false;
	n = &g->nodes[g->tensors[p].producer];
	if (n->dead || strcmp(n->op, "MaxPool") || n->inputs[0] != x ||
	    (n->n_outputs > 1 && n->outputs[1] >= 0) || npu_conv_geom_read(fc->g, n, true, &gp))
		return false;
	if (gp.KH != gp.KW || gp.sh != gp.KH || gp.sw != gp.KW || gp.dh != 1 || gp.dw != 1 ||
	    gp.pt || gp.pl || gp.pb || gp.pr || gp.OH * gp.sh != gp.H || gp.OW * gp.sw != gp.W ||
	    gp.KH < 2)
		return false;
	rs->ks = gp.KH;
	return true;
}

static bool res_source(const struct fuse_conv *fc, int r, int x, struct res_src *rs)
{
	const npu_ir_graph *g = fc->g;
	const npu_ir_tensor *tr = &g->tensors[r], *tx = &g->tensors[x];
	const npu_ir_node *n;
	int64_t axis;

	rs->c = tx->rank == 4 ? tx->dims[1] : 0;
	if (tx->rank != 4 || tr->rank != 4 || tr->dims[0] != 1)
		return false;
	if (x_or_pool(fc, r, x, rs))
		return true;
	if (tr->producer < 0)
		return false;
	n = &g->nodes[tr->producer];
	if (n->dead || strcmp(n->op, "Concat") || n->n_inputs < 2 || n->inputs[0] < 0 ||
	    npu_ir_attr_int(n, "axis", 0, &axis) || (axis != 1 && axis != -3) ||
	    !x_or_pool(fc, n->inputs[0], x, rs))
		return false;
	for (int i = 1; i < n->n_inputs; i++) {
		const npu_ir_tensor *z = n->inputs[i] >= 0 ? &g->tensors[n->inputs[i]] : NULL;

		if (!z || !npu_ir_is_const(z))
			return false;
		for (size_t k = 0; k < z->bytes; k++)
			if (((const uint8_t *)z->data)[k])
				return false;
	}
	return true;
}

/*
 * The pair's residual can be rebuilt from the tile's X: every tile's X
 * rows hold the rows its residual rows come from (the depthwise stride is
 * the pool's, and its window reaches at least as far past each output
 * row), and the residual has the output's size.
 */
static bool residual_from_x(const struct fuse_conv *fc, const npu_ir_node *a, const npu_ir_node *b,
			    struct res_src *rs)
{
	struct npu_conv_geom ga, gb;

	if (b->n_inputs < 4 || b->inputs[3] < 0 || npu_conv_geom_read(fc->g, a, false, &ga) ||
	    npu_conv_geom_read(fc->g, b, false, &gb) || !res_source(fc, b->inputs[3], a->inputs[0], rs))
		return false;
	return ga.sh == rs->ks && ga.sw == rs->ks && ga.OH * rs->ks == ga.H &&
	       ga.OW * rs->ks == ga.W && ga.dh * (ga.KH - 1) - ga.pt >= rs->ks - 1 &&
	       ga.N == 1 && rs->c == ga.C && gb.OC >= ga.C;
}

static bool rebuilds(const struct fuse_conv *fc, int t)
{
	const npu_ir_graph *g = fc->g;
	const npu_ir_node *b = NULL, *a;
	struct res_src rs;
	int use = -1;

	if (npu_ir_is_graph_output(g, t) || npu_ir_count_uses(g, t) != 1)
		return false;
	for (int i = 0; i < g->n_nodes && use < 0; i++)
		for (int k = 0; k < g->nodes[i].n_inputs && !g->nodes[i].dead; k++)
			if (g->nodes[i].inputs[k] == t)
				use = i;
	if (use < 0)
		return false;
	b = &g->nodes[use];
	/* A MaxPool feeding the zero-padding Concat of such a residual. */
	if (!strcmp(b->op, "Concat"))
		return b->inputs[0] == t && rebuilds(fc, b->outputs[0]);
	if (strcmp(b->op, "Conv") || b->n_inputs < 4 || b->inputs[3] != t || b->inputs[0] < 0 ||
	    g->tensors[b->inputs[0]].producer < 0)
		return false;
	a = &g->nodes[g->tensors[b->inputs[0]].producer];
	return a->inputs[0] != t && pointwise_after(fc, a) == b && pair_fits(fc, a, b) &&
	       residual_from_x(fc, a, b, &rs);
}

static npu_status mark(npu_ir_graph *g, int node, const char *attr, int64_t v)
{
	if (npu_debug_on(NPU_DEBUG_FUSE)) {
		char lbl[96];

		npu_debug(NPU_DEBUG_FUSE, "%s %s: %s = %lld", g->nodes[node].op,
			  npu_ir_node_label(&g->nodes[node], lbl, sizeof(lbl)), attr, (long long)v);
	}
	return npu_ir_set_attr_int(&g->nodes[node], attr, v);
}

npu_status npu_fuse_conv(npu_ir_graph *g, uint32_t hbsm)
{
	const struct fuse_conv fc = { g, hbsm };
	npu_status st = NPU_OK;

	/*
	 * Every decision reads the graph as it is before any mark: the marks
	 * are attributes the tests below never look at, so the order of the
	 * loop does not matter.
	 */
	for (int i = 0; i < g->n_nodes && !st; i++) {
		const npu_ir_node *a = &g->nodes[i], *b;
		struct res_src rs;

		if (a->dead)
			continue;
		b = pointwise_after(&fc, a);
		if (!b || !pair_fits(&fc, a, b))
			continue;
		st = mark(g, i, NPU_ATTR_FUSED, 1);
		if (!st)
			st = mark(g, (int)(b - g->nodes), NPU_ATTR_PAIR, 1);
		if (!st && residual_from_x(&fc, &g->nodes[i], b, &rs))
			st = mark(g, (int)(b - g->nodes), NPU_ATTR_RES_POOL, rs.ks);
	}
	for (int i = 0; i < g->n_nodes && !st; i++) {
		const npu_ir_node *n = &g->nodes[i];

		if (n->dead || (strcmp(n->op, "MaxPool") && strcmp(n->op, "Concat")) ||
		    n->n_outputs < 1 || n->outputs[0] < 0)
			continue;
		if (rebuilds(&fc, n->outputs[0]))
			st = mark(g, i, NPU_ATTR_FUSED, 1);
	}
	return st;
}
