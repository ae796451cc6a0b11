// SPDX-License-Identifier: MIT
/*
 * 2-D convolution (TCU, bf16 with fp32 accumulation) and pooling (CVU),
 * NCHW in DDR.
 *
 * A tile is a block of output channels (whole groups for grouped
 * convolutions and for pooling) times a block of output rows.  Its input
 * is the matching channels and the rows those outputs need (a halo of
 * kernel rows); the padding a tile needs at its top and bottom is what
 * remains of the layer's padding there, so tiles compute exactly the
 * layer's values.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_cc.h"

uint16_t npu_cc_bf16(float f);

struct geom {
	int64_t N, C, H, W, OC, OH, OW, KH, KW;
	int64_t sh, sw, dh, dw, pt, pl, pb, pr, groups;
};

static npu_status read_geom(struct npu_cc *cc, const npu_ir_node *n, bool pool,
			    struct geom *g)
{
	const npu_ir_tensor *x = npu_ir_input(cc->g, n, 0), *y = npu_ir_output(cc->g, n, 0);
	const int64_t *ks, *s, *d, *p;
	int nk, ns, nd, np;
	npu_status st;

	if (x->rank != 4)
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s on rank %d (only 2-D, NCHW)", n->op, x->rank);
	if ((st = npu_ir_attr_ints(n, "kernel_shape", &ks, &nk)) ||
	    (st = npu_ir_attr_ints(n, "strides", &s, &ns)) ||
	    (st = npu_ir_attr_ints(n, "dilations", &d, &nd)) ||
	    (st = npu_ir_attr_ints(n, "pads", &p, &np)) ||
	    (st = npu_ir_attr_int(n, "group", 1, &g->groups)))
		return st;
	if (nk != 2 || ns != 2 || np != 4 || (nd != 2 && nd != -1))
		return npu_fail(NPU_ERR_INTERNAL, "%s without canonical geometry attributes", n->op);
	g->N = x->dims[0];
	g->C = x->dims[1];
	g->H = x->dims[2];
	g->W = x->dims[3];
	g->OC = y->dims[1];
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
	if (pool)
		g->groups = g->C;
	if (g->sh > 64 || g->sw > 64 || g->dh > 64 || g->dw > 64 || g->pt > 64 ||
	    g->pl > 64 || g->pb > 64 || g->pr > 64)
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s strides, dilations or pads above 64", n->op);
	if (g->groups < 1 || g->C % g->groups || g->OC % g->groups)
		return npu_fail(NPU_ERR_FORMAT, "%s: group %lld does not divide the channels",
				n->op, (long long)g->groups);
	return NPU_OK;
}

/* Input rows and tile pads for output rows [oh0, oh1). */
static void rows_needed(const struct geom *g, int64_t oh0, int64_t oh1, int64_t *ih0,
			int64_t *ih1, int64_t *pt, int64_t *pb)
{
	int64_t first = oh0 * g->sh - g->pt;
	int64_t last = (oh1 - 1) * g->sh - g->pt + g->dh * (g->KH - 1);

	*ih0 = first < 0 ? 0 : first;
	*ih1 = last > g->H - 1 ? g->H - 1 : last;
	*pt = *ih0 - first;
	*pb = last - *ih1;
}

static void x_levels(struct npu_hw_twu *w, unsigned dtype, unsigned esize, uint64_t base,
		     int64_t ch, int64_t rows, int64_t W)
{
	memset(w, 0, sizeof(*w));
	w->space = NPU_SPACE_HBSM;
	w->dtype = (uint8_t)dtype;
	w->base = base;
	npu_twu_lvl(w, 0, ch, rows * W * esize);	/* C */
	npu_twu_lvl(w, 1, W, esize);			/* W */
	npu_twu_lvl(w, 2, rows, W * esize);		/* H */
}

static npu_status lower_2d(struct npu_cc *cc, const npu_ir_node *n, bool pool,
			   unsigned pool_fn)
{
	struct geom g;
	int64_t Cg, OCg, gpt, ohb, nblk_oc, nrow;
	uint64_t wbytes_per_oc, w_off = 0, b_off = 0, budget = cc->hbsm;
	const npu_ir_tensor *wt = pool ? NULL : npu_ir_input(cc->g, n, 1);
	const npu_ir_tensor *bt = pool ? NULL : npu_ir_input(cc->g, n, 2);
	struct npu_loc lx, ly;
	struct npu_tile *tiles = NULL;
	unsigned ntiles = 0, cap = 0;
	int64_t count_pad = 0;
	npu_status st;

	if ((st = read_geom(cc, n, pool, &g)))
		return st;
	if (npu_ir_input(cc->g, n, 0)->dtype != NPU_DTYPE_FLOAT32)
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s on %s", n->op,
				npu_dtype_str(npu_ir_input(cc->g, n, 0)->dtype));
	if (pool && pool_fn == NPU_POOL_AVG &&
	    (st = npu_ir_attr_int(n, "count_include_pad", 0, &count_pad)))
		return st;
	Cg = g.C / g.groups;
	OCg = g.OC / g.groups;
	if (!pool) {
		float *bias = calloc((size_t)g.OC, 4);
		uint16_t *w16;
		int64_t wn;

		if (!npu_ir_is_const(wt) || (bt && !npu_ir_is_const(bt)) ||
		    wt->dtype != NPU_DTYPE_FLOAT32) {
			free(bias);
			return npu_fail(NPU_ERR_UNSUPPORTED, "Conv with computed weights or bias");
		}
		wn = npu_ir_numel(wt);
		w16 = malloc((size_t)wn * 2 + 2);
		if (!bias || !w16) {
			free(bias);
			free(w16);
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		}
		for (int64_t i = 0; i < wn; i++)
			w16[i] = npu_cc_bf16(((const float *)wt->data)[i]);
		if (bt)
			memcpy(bias, bt->data, (size_t)g.OC * 4);
		w_off = npu_cc_const(cc, w16, (uint64_t)wn * 2, &st);
		if (!st)
			b_off = npu_cc_const(cc, bias, (uint64_t)g.OC * 4, &st);
		free(w16);
		free(bias);
		if (st)
			return st;
	}
	if ((st = npu_cc_loc(cc, n->inputs[0], &lx)) || (st = npu_cc_loc(cc, n->outputs[0], &ly)))
		return st;

	/* Groups per tile (grouped and pooling), or output channels per tile. */
	wbytes_per_oc = pool ? 0 : (uint64_t)(Cg * g.KH * g.KW * 2);
	if (g.groups > 1) {
		gpt = g.groups;
		while (gpt > 1 && ((uint64_t)(gpt * Cg * g.H * g.W * 6) > budget / 2 ||
				   (uint64_t)gpt * OCg * wbytes_per_oc > budget / 4))
			gpt = (gpt + 1) / 2;
		nblk_oc = (g.groups + gpt - 1) / gpt;
	} else {
		gpt = g.OC;	/* output channels per tile */
		while (gpt > 1 && (uint64_t)gpt * wbytes_per_oc > budget / 4)
			gpt = (gpt + 1) / 2;
		nblk_oc = (g.OC + gpt - 1) / gpt;
	}
	/* Rows per tile: fit, then spread over the workers. */
	ohb = g.OH;
	for (;;) {
		int64_t ih0, ih1, pt, pb, ch = g.groups > 1 ? gpt * Cg : g.C;
		int64_t oc = g.groups > 1 ? gpt * OCg : gpt;
		uint64_t need;

		rows_needed(&g, 0, ohb, &ih0, &ih1, &pt, &pb);
		need = (uint64_t)(ch * (ih1 - ih0 + 1) * g.W) * (pool ? 4 : 6) +
		       (uint64_t)oc * wbytes_per_oc + (uint64_t)oc * 4 +
		       (uint64_t)(oc * ohb * g.OW * 4) + 4 * 64;
		if (need <= budget || ohb == 1)
			break;
		ohb = (ohb + 1) / 2;
	}
	nrow = (g.OH + ohb - 1) / ohb;
	if (nblk_oc * nrow * g.N < cc->workers && g.OH > 1) {
		int64_t want = (cc->workers + nblk_oc * g.N - 1) / (nblk_oc * g.N);

		if (want > g.OH)
			want = g.OH;
		if ((g.OH + want - 1) / want < ohb)
			ohb = (g.OH + want - 1) / want;
		nrow = (g.OH + ohb - 1) / ohb;
	}

	for (int64_t b = 0; b < g.N && !st; b++)
	for (int64_t ob = 0; ob < nblk_oc && !st; ob++)
	for (int64_t rb = 0; rb < nrow && !st; rb++) {
		int64_t c0, ch, oc0, oc, tg, oh0 = rb * ohb, oh1 = oh0 + ohb > g.OH ? g.OH : oh0 + ohb;
		int64_t ih0, ih1, pt, pb, rows;
		uint32_t h_x32, h_x16, h_w, h_b, h_y;
		struct npu_tile *t;
		struct npu_hw_insn *op;

		if (g.groups > 1) {
			int64_t g0 = ob * gpt, g1 = g0 + gpt > g.groups ? g.groups : g0 + gpt;

			tg = g1 - g0;
			c0 = g0 * Cg;
			ch = tg * Cg;
			oc0 = g0 * OCg;
			oc = tg * OCg;
		} else {
			tg = 1;
			c0 = 0;
			ch = g.C;
			oc0 = ob * gpt;
			oc = oc0 + gpt > g.OC ? g.OC - oc0 : gpt;
		}
		rows_needed(&g, oh0, oh1, &ih0, &ih1, &pt, &pb);
		rows = ih1 - ih0 + 1;
		h_x32 = 0;
		h_x16 = (uint32_t)((ch * rows * g.W * 4 + 63) & ~63);
		h_w = h_x16 + (uint32_t)(pool ? 0 : (ch * rows * g.W * 2 + 63) & ~63);
		h_b = h_w + (uint32_t)((oc * (int64_t)wbytes_per_oc + 63) & ~63);
		h_y = h_b + (uint32_t)((oc * 4 + 63) & ~63);

		if (ntiles == cap) {
			struct npu_tile *gr = realloc(tiles, (cap ? 2 * cap : 16) * sizeof(*gr));

			if (!gr) {
				st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
				break;
			}
			tiles = gr;
			cap = cap ? 2 * cap : 16;
		}
		t = &tiles[ntiles++];
		memset(t, 0, sizeof(*t));
		/* X rows ih0..ih1 of channels c0..c0+ch, fp32, dense [c][h][w]. */
		t->in[0].seg = lx.seg;
		t->in[0].walk.space = NPU_SPACE_DDR;
		t->in[0].walk.dtype = NPU_DT_FP32;
		t->in[0].walk.base = lx.off + (uint64_t)(((b * g.C + c0) * g.H + ih0) * g.W) * 4;
		npu_twu_lvl(&t->in[0].walk, 0, rows * g.W, 4);
		npu_twu_lvl(&t->in[0].walk, 1, ch, g.H * g.W * 4);
		t->in[0].hbsm = h_x32;
		t->nin = 1;
		if (!pool) {
			t->in[1].seg = cc->seg_const;
			npu_twu_flat(&t->in[1].walk, NPU_SPACE_DDR, NPU_DT_BF16,
				     w_off + (uint64_t)oc0 * wbytes_per_oc, (uint64_t)oc * (wbytes_per_oc / 2));
			t->in[1].hbsm = h_w;
			t->in[2].seg = cc->seg_const;
			npu_twu_flat(&t->in[2].walk, NPU_SPACE_DDR, NPU_DT_FP32,
				     b_off + (uint64_t)oc0 * 4, (uint64_t)oc);
			t->in[2].hbsm = h_b;
			t->nin = 3;

			op = &t->op[t->nop++];
			op->unit = NPU_UNIT_CVU;
			op->opcode = NPU_CVU_UNARY;
			npu_twu_flat(&op->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, NPU_DT_FP32, h_x32,
				     (uint64_t)(ch * rows * g.W));
			npu_twu_flat(&op->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_BF16, h_x16,
				     (uint64_t)(ch * rows * g.W));

			op = &t->op[t->nop++];
			op->unit = NPU_UNIT_TCU;
			op->opcode = NPU_TCU_CONV2D;
			x_levels(&op->opnd[NPU_OPND_SRC0], NPU_DT_BF16, 2, h_x16, ch, rows, g.W);
			memset(&op->opnd[NPU_OPND_SRC1], 0, sizeof(op->opnd[0]));
			op->opnd[NPU_OPND_SRC1].space = NPU_SPACE_HBSM;
			op->opnd[NPU_OPND_SRC1].dtype = NPU_DT_BF16;
			op->opnd[NPU_OPND_SRC1].base = h_w;
			npu_twu_lvl(&op->opnd[NPU_OPND_SRC1], 0, oc, Cg * g.KH * g.KW * 2);
			npu_twu_lvl(&op->opnd[NPU_OPND_SRC1], 1, Cg, g.KH * g.KW * 2);
			npu_twu_lvl(&op->opnd[NPU_OPND_SRC1], 2, g.KW, 2);
			npu_twu_lvl(&op->opnd[NPU_OPND_SRC1], 3, g.KH, g.KW * 2);
			npu_twu_flat(&op->opnd[NPU_OPND_SRC2], NPU_SPACE_HBSM, NPU_DT_FP32, h_b,
				     (uint64_t)oc);
			op->params.tcu.stride_h = (uint16_t)g.sh;
			op->params.tcu.stride_w = (uint16_t)g.sw;
			op->params.tcu.dil_h = (uint16_t)g.dh;
			op->params.tcu.dil_w = (uint16_t)g.dw;
			op->params.tcu.pad_top = (uint16_t)pt;
			op->params.tcu.pad_bottom = (uint16_t)pb;
			op->params.tcu.pad_left = (uint16_t)g.pl;
			op->params.tcu.pad_right = (uint16_t)g.pr;
			op->params.tcu.groups = (uint16_t)tg;
			st = npu_cc_act(n, &op->params.tcu);
		} else {
			op = &t->op[t->nop++];
			op->unit = NPU_UNIT_CVU;
			op->opcode = NPU_CVU_POOL;
			x_levels(&op->opnd[NPU_OPND_SRC0], NPU_DT_FP32, 4, h_x32, ch, rows, g.W);
			op->params.cvu.fn = (uint8_t)pool_fn;
			op->params.cvu.kernel_h = (uint16_t)g.KH;
			op->params.cvu.kernel_w = (uint16_t)g.KW;
			op->params.cvu.stride_h = (uint16_t)g.sh;
			op->params.cvu.stride_w = (uint16_t)g.sw;
			op->params.cvu.dil_h = (uint16_t)g.dh;
			op->params.cvu.dil_w = (uint16_t)g.dw;
			op->params.cvu.pad_top = (uint16_t)pt;
			op->params.cvu.pad_bottom = (uint16_t)pb;
			op->params.cvu.pad_left = (uint16_t)g.pl;
			op->params.cvu.pad_right = (uint16_t)g.pr;
			if (count_pad)
				op->params.cvu.flags = NPU_CVU_F_COUNT_PAD;
		}
		/* Y block: oc channels x (oh1 - oh0) rows, fp32 [oc][oh][ow]. */
		x_levels(&op->opnd[NPU_OPND_DST], NPU_DT_FP32, 4, h_y, oc, oh1 - oh0, g.OW);
		if (!st)
			st = npu_tile_out(t, h_y, (uint32_t)oc, (uint32_t)((oh1 - oh0) * g.OW * 4),
					  (int32_t)((oh1 - oh0) * g.OW * 4), ly.seg,
					  ly.off + (uint64_t)(((b * g.OC + oc0) * g.OH + oh0) *
							   g.OW) * 4,
					  (int32_t)(g.OH * g.OW * 4));
	}
	if (!st)
		st = npu_sched_emit(cc, tiles, ntiles);
	npu_tiles_free(tiles, ntiles);
	return st;
}

npu_status npu_lower_conv(struct npu_cc *cc, const npu_ir_node *n)
{
	return lower_2d(cc, n, false, 0);
}

npu_status npu_lower_pool(struct npu_cc *cc, const npu_ir_node *n)
{
	if (!strcmp(n->op, "MaxPool")) {
		if (n->n_outputs > 1 && n->outputs[1] >= 0)
			return npu_fail(NPU_ERR_UNSUPPORTED, "MaxPool with an Indices output");
		return lower_2d(cc, n, true, NPU_POOL_MAX);
	}
	return lower_2d(cc, n, true, NPU_POOL_AVG);
}
