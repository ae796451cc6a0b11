// SPDX-License-Identifier: MIT
/*
 * Convolution and pooling geometry, shared by the fusion pass and the
 * lowering (conv_geom.h).
 */
#include "compile/conv_geom.h"
#include "compile/npu_lower.h"

npu_status npu_conv_geom_read(const npu_ir_graph *graph, const npu_ir_node *n, bool pool,
			      struct npu_conv_geom *g)
{
	const npu_ir_tensor *x = npu_ir_input(graph, n, 0), *y = npu_ir_output(graph, n, 0);
	const int64_t *ks, *s, *d, *p;
	int nk, ns, nd, np;
	npu_status st;

	if (x->rank != 4 && x->rank != 3)
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s on rank %d (1-D or 2-D, NCHW)", n->op,
				x->rank);
	if ((st = npu_ir_attr_ints(n, "kernel_shape", &ks, &nk)) ||
	    (st = npu_ir_attr_ints(n, "strides", &s, &ns)) ||
	    (st = npu_ir_attr_ints(n, "dilations", &d, &nd)) ||
	    (st = npu_ir_attr_ints(n, "pads", &p, &np)) ||
	    (st = npu_ir_attr_int(n, "group", 1, &g->groups)))
		return st;
	g->N = x->dims[0];
	g->C = x->dims[1];
	g->OC = y->dims[1];
	if (x->rank == 3) {
		/* 1-D: a 2-D problem of height 1. */
		if (nk != 1 || ns != 1 || np != 2 || (nd != 1 && nd != -1))
			return npu_fail(NPU_ERR_INTERNAL, "%s without canonical geometry attributes",
					n->op);
		g->H = g->OH = g->KH = g->sh = g->dh = 1;
		g->pt = g->pb = 0;
		g->W = x->dims[2];
		g->OW = y->dims[2];
		g->KW = ks[0];
		g->sw = s[0];
		g->dw = nd == 1 ? d[0] : 1;
		g->pl = p[0];
		g->pr = p[1];
	} else {
		if (nk != 2 || ns != 2 || np != 4 || (nd != 2 && nd != -1))
			return npu_fail(NPU_ERR_INTERNAL, "%s without canonical geometry attributes",
					n->op);
		g->H = x->dims[2];
		g->W = x->dims[3];
		g->OH = y->dims[2];
		g->OW = y->dims[3];
		g->KH = ks[0];
		g->KW = ks[1];
		g->sh = s[0];
		g->sw = s[1];
		g->dh = nd == 2 ? d[0] : 1;
		g->dw = nd == 2 ? d[1] : 1;
		g->pt = p[0];
		g->pl = p[1];
		g->pb = p[2];
		g->pr = p[3];
	}
	if (pool)
		g->groups = g->C;
	/* ceil_mode: the last window may reach past the stated end padding. */
	{
		int64_t need_h = (g->OH - 1) * g->sh - g->pt + g->dh * (g->KH - 1) - (g->H - 1);
		int64_t need_w = (g->OW - 1) * g->sw - g->pl + g->dw * (g->KW - 1) - (g->W - 1);

		if (need_h > g->pb)
			g->pb = need_h;
		if (need_w > g->pr)
			g->pr = need_w;
	}
	if (g->sh > 64 || g->sw > 64 || g->dh > 64 || g->dw > 64 || g->pt > 64 ||
	    g->pl > 64 || g->pb > 64 || g->pr > 64)
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s strides, dilations or pads above 64", n->op);
	if (g->groups < 1 || g->C % g->groups || g->OC % g->groups)
		return npu_fail(NPU_ERR_FORMAT, "%s: group %lld does not divide the channels",
				n->op, (long long)g->groups);
	return NPU_OK;
}

int64_t npu_conv_max_rows(const struct npu_conv_geom *g, int64_t ohb)
{
	int64_t rows = (ohb - 1) * g->sh + g->dh * (g->KH - 1) + 1;

	return rows < g->H ? rows : g->H;
}

uint64_t npu_pair_tile_bytes(const struct npu_conv_geom *ga, const struct npu_conv_geom *gb,
			     bool res, int64_t rows, int64_t orows)
{
	int64_t C = ga->C, OC = gb->OC;

	return npu_align64((uint64_t)(C * ga->KH * ga->KW * 2)) +
	       2 * npu_align64((uint64_t)C * 4) +
	       npu_align64((uint64_t)(OC * C * 2)) + npu_align64((uint64_t)OC * 4) +
	       npu_align64((uint64_t)(C * rows * ga->W * 4)) +
	       npu_align64((uint64_t)(C * rows * ga->W * 2)) +
	       npu_align64((uint64_t)(C * orows * ga->OW * 2)) +
	       npu_align64((uint64_t)OC * npu_hbsm_pitch((uint64_t)(orows * ga->OW * 4))) +
	       (res ? npu_align64((uint64_t)(OC * orows * ga->OW * 4)) : 0);
}
