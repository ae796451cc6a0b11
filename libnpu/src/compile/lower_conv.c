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

#include "compile/npu_lower.h"
#include "compile/conv_geom.h"

/* Input rows and tile pads for output rows [oh0, oh1). */
static void rows_needed(const struct npu_conv_geom *g, int64_t oh0, int64_t oh1, int64_t *ih0,
			int64_t *ih1, int64_t *pt, int64_t *pb)
{
	int64_t first = oh0 * g->sh - g->pt;
	int64_t last = (oh1 - 1) * g->sh - g->pt + g->dh * (g->KH - 1);

	*ih0 = first < 0 ? 0 : first;
	*ih1 = last > g->H - 1 ? g->H - 1 : last;
	*pt = *ih0 - first;
	*pb = last - *ih1;
}

/* [C][H][W] in HBSM, channel planes @pitch bytes apart. */
static void x_levels(struct npu_hw_twu *w, unsigned dtype, unsigned esize, uint64_t base,
		     int64_t ch, int64_t rows, int64_t W, uint32_t pitch)
{
	memset(w, 0, sizeof(*w));
	w->space = NPU_SPACE_HBSM;
	w->dtype = (uint8_t)dtype;
	w->base = base;
	npu_twu_lvl(w, 0, ch, pitch);			/* C */
	npu_twu_lvl(w, 1, W, esize);			/* W */
	npu_twu_lvl(w, 2, rows, W * esize);		/* H */
}

/*
 * What differs between the variants: element types in DDR and HBSM,
 * where the constants went, and the TCU's integer parameters.
 */
struct kind {
	bool pool, quant;
	unsigned pool_fn;
	int64_t count_pad;
	unsigned xdt, xb;	/* X in DDR (and in HBSM for pool/quant) */
	unsigned ydt, yb;	/* Y */
	unsigned wdt, wb;	/* weights in HBSM */
	unsigned bdt;		/* bias: FP32 or INT32 */
	uint64_t w_off, b_off, q_off;	/* CONST offsets */
	struct npu_hw_tcu_params tcu;	/* zero points, flags */
	int res;		/* fused residual tensor, -1: none */
	int64_t res_act;	/* its activation (enum npu_hw_fn), 0: none */
};

static float qparam_f(const npu_ir_tensor *t, int64_t i)
{
	return ((const float *)t->data)[npu_ir_numel(t) == 1 ? 0 : i];
}

static int64_t qparam_i(const npu_ir_tensor *t, int64_t i)
{
	int64_t k = npu_ir_numel(t) == 1 ? 0 : i;

	switch (t->dtype) {
	case NPU_DTYPE_INT8: return ((const int8_t *)t->data)[k];
	case NPU_DTYPE_UINT8: return ((const uint8_t *)t->data)[k];
	case NPU_DTYPE_INT32: return ((const int32_t *)t->data)[k];
	default: return 0;
	}
}

/* Float Conv: weights to bf16, bias fp32. */
static npu_status prep_float(struct npu_cc *cc, const npu_ir_node *n,
			     const struct npu_conv_geom *g, struct kind *k)
{
	const npu_ir_tensor *wt = npu_ir_input(cc->g, n, 1), *bt = npu_ir_input(cc->g, n, 2);
	float *bias;
	uint16_t *w16;
	int64_t wn;
	npu_status st = NPU_OK;

	if (!npu_ir_is_const(wt) || (bt && !npu_ir_is_const(bt)) ||
	    wt->dtype != NPU_DTYPE_FLOAT32)
		return npu_fail(NPU_ERR_UNSUPPORTED, "Conv with computed weights or bias");
	wn = npu_ir_numel(wt);
	bias = calloc((size_t)g->OC, 4);
	w16 = malloc((size_t)wn * 2 + 2);
	if (!bias || !w16) {
		free(bias);
		free(w16);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	for (int64_t i = 0; i < wn; i++)
		w16[i] = npu_ir_f32_to_bf16(((const float *)wt->data)[i]);
	if (bt)
		memcpy(bias, bt->data, (size_t)g->OC * 4);
	k->w_off = npu_cc_const(cc, w16, (uint64_t)wn * 2, &st);
	if (!st)
		k->b_off = npu_cc_const(cc, bias, (uint64_t)g->OC * 4, &st);
	free(w16);
	free(bias);
	k->xdt = NPU_DT_FP32;
	k->xb = 4;
	k->ydt = NPU_DT_FP32;
	k->yb = 4;
	k->wdt = NPU_DT_BF16;
	k->wb = 2;
	k->bdt = NPU_DT_FP32;
	k->res = n->n_inputs > 3 ? n->inputs[3] : -1;
	if (!st && k->res >= 0)
		st = npu_ir_attr_int(n, "npu_res_act", 0, &k->res_act);
	return st ? st : npu_cc_act(n, &k->tcu);
}

/*
 * QLinearConv (int8/uint8 out, requantized by per-channel scales
 * x_scale * w_scale[oc] / y_scale) and ConvInteger (int32 out).
 */
static npu_status prep_quant(struct npu_cc *cc, const npu_ir_node *n,
			     const struct npu_conv_geom *g, struct kind *k)
{
	bool ql = !strcmp(n->op, "QLinearConv");
	const npu_ir_tensor *x = npu_ir_input(cc->g, n, 0);
	const npu_ir_tensor *w = npu_ir_input(cc->g, n, ql ? 3 : 1);
	const npu_ir_tensor *xs = ql ? npu_ir_input(cc->g, n, 1) : NULL;
	const npu_ir_tensor *xz = npu_ir_input(cc->g, n, ql ? 2 : 2);
	const npu_ir_tensor *ws = ql ? npu_ir_input(cc->g, n, 4) : NULL;
	const npu_ir_tensor *wz = npu_ir_input(cc->g, n, ql ? 5 : 3);
	const npu_ir_tensor *ys = ql ? npu_ir_input(cc->g, n, 6) : NULL;
	const npu_ir_tensor *yz = ql ? npu_ir_input(cc->g, n, 7) : NULL;
	const npu_ir_tensor *bt = ql ? npu_ir_input(cc->g, n, 8) : NULL;
	const npu_ir_tensor *y = npu_ir_output(cc->g, n, 0);
	int32_t *bias;
	float *qs = NULL;
	npu_status st = NPU_OK;

	if (!npu_ir_is_const(w) || (bt && !npu_ir_is_const(bt)) ||
	    (xz && !npu_ir_is_const(xz)) || (wz && !npu_ir_is_const(wz)) ||
	    (ql && (!npu_ir_is_const(xs) || !npu_ir_is_const(ws) || !npu_ir_is_const(ys) ||
		    (yz && !npu_ir_is_const(yz)))))
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s with computed weights or parameters", n->op);
	if (wz)
		for (int64_t o = 1; o < npu_ir_numel(wz); o++)
			if (qparam_i(wz, o) != qparam_i(wz, 0))
				return npu_fail(NPU_ERR_UNSUPPORTED,
						"%s with per-channel weight zero points", n->op);
	k->quant = true;
	k->xdt = npu_cc_hw_dtype(x->dtype);
	k->xb = 1;
	k->wdt = npu_cc_hw_dtype(w->dtype);
	k->wb = 1;
	k->ydt = npu_cc_hw_dtype(y->dtype);
	k->yb = (unsigned)npu_dtype_size(y->dtype);
	k->bdt = NPU_DT_INT32;
	if (k->xdt != NPU_DT_INT8 && k->xdt != NPU_DT_UINT8)
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s on %s", n->op, npu_dtype_str(x->dtype));
	if (k->wdt != NPU_DT_INT8 && k->wdt != NPU_DT_UINT8)
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s with %s weights", n->op,
				npu_dtype_str(w->dtype));
	k->tcu.a_zp = xz ? (int32_t)qparam_i(xz, 0) : 0;
	k->tcu.b_zp = wz ? (int32_t)qparam_i(wz, 0) : 0;
	bias = calloc((size_t)g->OC, 4);
	if (ql)
		qs = malloc((size_t)g->OC * 4);
	if (!bias || (ql && !qs)) {
		free(bias);
		free(qs);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	for (int64_t o = 0; o < g->OC; o++) {
		if (bt)
			bias[o] = ((const int32_t *)bt->data)[o];
		if (ql)
			qs[o] = qparam_f(xs, 0) * qparam_f(ws, o) / qparam_f(ys, 0);
	}
	k->w_off = npu_cc_const(cc, w->data, w->bytes, &st);
	if (!st)
		k->b_off = npu_cc_const(cc, bias, (uint64_t)g->OC * 4, &st);
	if (!st && ql) {
		k->q_off = npu_cc_const(cc, qs, (uint64_t)g->OC * 4, &st);
		k->tcu.flags = NPU_TCU_F_PER_CHANNEL;
		k->tcu.out_zp = yz ? (int32_t)qparam_i(yz, 0) : 0;
	}
	free(bias);
	free(qs);
	return st;
}

static uint64_t align64(uint64_t v)
{
	return (v + 63) & ~(uint64_t)63;
}

/*
 * [H][W][C] in HBSM (channels innermost): the units walk X channel first,
 * so this layout makes their walk dense.
 */
static void hwc_levels(struct npu_hw_twu *w, unsigned dtype, unsigned esize, uint64_t base,
		       int64_t ch, int64_t rows, int64_t W)
{
	memset(w, 0, sizeof(*w));
	w->space = NPU_SPACE_HBSM;
	w->dtype = (uint8_t)dtype;
	w->base = base;
	npu_twu_lvl(w, 0, ch, esize);			/* C */
	npu_twu_lvl(w, 1, W, ch * esize);		/* W */
	npu_twu_lvl(w, 2, rows, W * ch * esize);	/* H */
}

/* Planes of @n elements of @esize bytes, @ch of them, @pitch bytes apart. */
static void planes(struct npu_hw_twu *w, unsigned dtype, unsigned esize, uint64_t base,
		   int64_t ch, int64_t n, uint32_t pitch)
{
	memset(w, 0, sizeof(*w));
	w->space = NPU_SPACE_HBSM;
	w->dtype = (uint8_t)dtype;
	w->base = base;
	npu_twu_lvl(w, 0, n, esize);
	npu_twu_lvl(w, 1, ch, pitch);
}

/*
 * HBSM bytes of a tile of @ch input channels x @rows input rows and @oc
 * output channels x @orows output rows, laid out as the tile loop does.
 */
static uint64_t tile_bytes(const struct npu_conv_geom *g, const struct kind *k, bool conv_f, bool res,
			   int64_t ch, int64_t rows, int64_t oc, int64_t orows, uint32_t wpitch)
{
	uint64_t x = align64((uint64_t)(ch * rows * g->W) * k->xb) +
		     (conv_f ? align64((uint64_t)(ch * rows * g->W) * 2) : 0);

	return x + align64((uint64_t)oc * wpitch) + 2 * align64((uint64_t)oc * 4) +
	       align64((uint64_t)oc * npu_hbsm_pitch((uint64_t)(orows * g->OW) * k->yb)) +
	       (res ? align64((uint64_t)(oc * orows * g->OW) * 4) : 0);
}

/* Y = act(Y + R): Y's @oc planes @ypitch apart, R's dense, @n each. */
/*
 * The TCU's convolution window: @g's strides, dilations and horizontal
 * pads; the vertical pads @pt/@pb of this tile's rows; @groups per op.
 */
static void tcu_window(struct npu_hw_insn *op, const struct npu_conv_geom *g, int64_t pt, int64_t pb,
		       int64_t groups)
{
	op->params.tcu.stride_h = (uint16_t)g->sh;
	op->params.tcu.stride_w = (uint16_t)g->sw;
	op->params.tcu.dil_h = (uint16_t)g->dh;
	op->params.tcu.dil_w = (uint16_t)g->dw;
	op->params.tcu.pad_top = (uint16_t)pt;
	op->params.tcu.pad_bottom = (uint16_t)pb;
	op->params.tcu.pad_left = (uint16_t)g->pl;
	op->params.tcu.pad_right = (uint16_t)g->pr;
	op->params.tcu.groups = (uint16_t)groups;
}

static void residual_op(struct npu_hw_insn *op, const struct kind *k, uint32_t h_y,
			uint32_t ypitch, uint32_t h_r, int64_t oc, int64_t n)
{
	op->unit = NPU_UNIT_CVU;
	op->opcode = NPU_CVU_BINARY;
	op->params.cvu.fn = NPU_FN_ADD;
	if (k->res_act) {
		op->params.cvu.nstages = 1;
		op->params.cvu.stage[0].fn = (uint8_t)k->res_act;
	}
	planes(&op->opnd[NPU_OPND_SRC0], NPU_DT_FP32, 4, h_y, oc, n, ypitch);
	planes(&op->opnd[NPU_OPND_SRC1], NPU_DT_FP32, 4, h_r, oc, n, (uint32_t)(n * 4));
	planes(&op->opnd[NPU_OPND_DST], NPU_DT_FP32, 4, h_y, oc, n, ypitch);
}

/*
 * The fused residual of a float Conv tile: its block of R (the same
 * channels and rows as the tile's Y) comes in dense as the last input,
 * and Y = act(Y + R) in place (Y's planes @ypitch apart) before the
 * write-back.
 */
static void add_residual(struct npu_tile *t, const struct npu_conv_geom *g, const struct kind *k,
			 const struct npu_loc *lr, int64_t b, int64_t oc0, int64_t oc,
			 int64_t oh0, int64_t oh1, uint32_t h_y, uint32_t ypitch, uint32_t h_r)
{
	struct npu_tile_in *ti;
	int64_t n = (oh1 - oh0) * g->OW;
	struct npu_hw_insn *op = &t->op[t->nop++];

	if (!lr) {	/* already copied to h_r in HBSM (lower_pair) */
		residual_op(op, k, h_y, ypitch, h_r, oc, n);
		return;
	}
	ti = &t->in[t->nin++];
	ti->seg = lr->seg;
	memset(&ti->walk, 0, sizeof(ti->walk));
	ti->walk.space = NPU_SPACE_DDR;
	ti->walk.dtype = NPU_DT_FP32;
	ti->walk.base = lr->off + (uint64_t)(((b * g->OC + oc0) * g->OH + oh0) * g->OW) * 4;
	npu_twu_lvl(&ti->walk, 0, (oh1 - oh0) * g->OW, 4);
	npu_twu_lvl(&ti->walk, 1, oc, g->OH * g->OW * 4);
	ti->hbsm = h_r;
	residual_op(op, k, h_y, ypitch, h_r, oc, n);
}

static npu_status lower_2d(struct npu_cc *cc, const npu_ir_node *n, struct kind *k)
{
	struct npu_conv_geom g;
	int64_t Cg, OCg, gpt, ohb, nblk_oc, nrow;
	uint64_t wbytes_per_oc, budget = cc->hbsm;
	uint32_t wpitch;
	unsigned xcost;
	struct npu_loc lx, ly, lr = { NPU_NO_SEG, 0 };
	struct npu_tile *tiles = NULL;
	unsigned ntiles = 0, cap = 0;
	bool conv_f = !k->pool && !k->quant;
	npu_status st;

	if ((st = npu_conv_geom_read(cc->g, n, k->pool, &g)))
		return st;
	if (k->pool) {
		if (npu_ir_input(cc->g, n, 0)->dtype != NPU_DTYPE_FLOAT32)
			return npu_fail(NPU_ERR_UNSUPPORTED, "%s on %s", n->op,
					npu_dtype_str(npu_ir_input(cc->g, n, 0)->dtype));
		k->xdt = k->ydt = NPU_DT_FP32;
		k->xb = k->yb = 4;
		if (k->pool_fn == NPU_POOL_AVG &&
		    (st = npu_ir_attr_int(n, "count_include_pad", 0, &k->count_pad)))
			return st;
	} else if (k->quant) {
		if ((st = prep_quant(cc, n, &g, k)))
			return st;
	} else {
		if (npu_ir_input(cc->g, n, 0)->dtype != NPU_DTYPE_FLOAT32)
			return npu_fail(NPU_ERR_UNSUPPORTED, "%s on %s", n->op,
					npu_dtype_str(npu_ir_input(cc->g, n, 0)->dtype));
		if ((st = prep_float(cc, n, &g, k)))
			return st;
	}
	Cg = g.C / g.groups;
	OCg = g.OC / g.groups;
	/* HBSM bytes per input element: fp32 plus its bf16 copy for float conv. */
	xcost = conv_f ? 6 : k->xb;
	if ((st = npu_cc_loc(cc, n->inputs[0], &lx)) || (st = npu_cc_loc(cc, n->outputs[0], &ly)))
		return st;
	if (conv_f && k->res >= 0 && (st = npu_cc_loc(cc, k->res, &lr)))
		return st;

	/* Groups per tile (grouped and pooling), or output channels per tile. */
	wbytes_per_oc = k->pool ? 0 : (uint64_t)(Cg * g.KH * g.KW * k->wb);
	/* Weights go to HBSM transposed, output channel innermost: as dense. */
	wpitch = (uint32_t)wbytes_per_oc;
	if (g.groups > 1) {
		gpt = g.groups;
		while (gpt > 1 && ((uint64_t)(gpt * Cg * g.H * g.W * xcost) > budget / 2 ||
				   (uint64_t)gpt * OCg * wpitch > budget / 4))
			gpt = (gpt + 1) / 2;
		/*
		 * Spread over the workers by groups first: a group block needs
		 * no halo rows, so it reads each input row once.
		 */
		if (g.groups * g.N >= 2 && (g.groups + gpt - 1) / gpt * g.N < cc->spread) {
			int64_t want = cc->spread / g.N, per = (g.groups + want - 1) / want;

			if (per < gpt)
				gpt = per;
		}
		nblk_oc = (g.groups + gpt - 1) / gpt;
	} else {
		gpt = g.OC;	/* output channels per tile */
		while (gpt > 1 && (uint64_t)gpt * wpitch > budget / 4)
			gpt = (gpt + 1) / 2;
		nblk_oc = (g.OC + gpt - 1) / gpt;
	}
	/* Rows per tile: fit, then spread over the workers. */
	ohb = g.OH;
	for (;;) {
		int64_t ch = g.groups > 1 ? gpt * Cg : g.C;
		int64_t oc = g.groups > 1 ? gpt * OCg : gpt;
		uint64_t need;

		need = tile_bytes(&g, k, conv_f, lr.seg != NPU_NO_SEG, ch, npu_conv_max_rows(&g, ohb), oc,
				  ohb, wpitch);
		if (need <= budget)
			break;
		/*
		 * One output row's tile does not fit either: tiles are not cut
		 * along the input channels or the columns (yet), and a bigger
		 * one would run past its half of HBSM (the device stops such a
		 * program with an illegal instruction).  Refuse it here.
		 */
		if (ohb == 1)
			return npu_fail(NPU_ERR_UNSUPPORTED,
					"one output row needs %llu bytes of HBSM (%lld input "
					"channels x %lld rows x %lld columns and its weights), more "
					"than a tile's %llu; tiles are not split along the input "
					"channels yet: use fewer channels or a narrower input",
					(unsigned long long)need, (long long)ch,
					(long long)npu_conv_max_rows(&g, 1), (long long)g.W,
					(unsigned long long)budget);
		ohb = (ohb + 1) / 2;
	}
	nrow = (g.OH + ohb - 1) / ohb;
	if (nblk_oc * nrow * g.N < cc->spread && g.OH > 1) {
		int64_t want = (cc->spread + nblk_oc * g.N - 1) / (nblk_oc * g.N);

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
		uint32_t h_x32, h_x16, h_w, h_b, h_q, h_y, h_r, ypitch;
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
		/*
		 * The units walk X, the weights and Y channel by channel.  X
		 * and the weights arrive transposed, channels innermost, so
		 * those walks are dense; Y's channel planes are pitched across
		 * the HBSM banks, since the write-back needs them whole.
		 */
		ypitch = npu_hbsm_pitch((uint64_t)((oh1 - oh0) * g.OW) * k->yb);
		h_x32 = 0;
		h_x16 = (uint32_t)align64((uint64_t)(ch * rows * g.W) * k->xb);
		h_w = h_x16 + (uint32_t)(conv_f ? align64((uint64_t)(ch * rows * g.W) * 2) : 0);
		h_b = h_w + (uint32_t)align64((uint64_t)oc * wpitch);
		h_q = h_b + (uint32_t)align64((uint64_t)oc * 4);
		h_y = h_q + (uint32_t)align64((uint64_t)oc * 4);
		h_r = h_y + (uint32_t)align64((uint64_t)oc * ypitch);

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
		t->in[0].walk.dtype = (uint8_t)k->xdt;
		t->in[0].walk.base = lx.off + (uint64_t)(((b * g.C + c0) * g.H + ih0) * g.W) * k->xb;
		npu_twu_lvl(&t->in[0].walk, 0, rows * g.W, k->xb);
		npu_twu_lvl(&t->in[0].walk, 1, ch, g.H * g.W * k->xb);
		t->in[0].hbsm = h_x32;
		if (ch > 1) {
			t->in[0].dst_row = (uint32_t)(rows * g.W);
			t->in[0].dst_step = (uint32_t)(ch * k->xb);
			t->in[0].dst_pitch = k->xb;
		}
		t->nin = 1;
		if (!k->pool) {
			uint32_t h_src = conv_f ? h_x16 : h_x32;
			unsigned sdt = conv_f ? NPU_DT_BF16 : k->xdt, sb = conv_f ? 2 : k->xb;

			t->in[1].seg = cc->seg_const;
			npu_twu_flat(&t->in[1].walk, NPU_SPACE_DDR, k->wdt,
				     k->w_off + (uint64_t)oc0 * wbytes_per_oc,
				     (uint64_t)oc * (wbytes_per_oc / k->wb));
			t->in[1].hbsm = h_w;
			if (oc > 1) {
				t->in[1].dst_row = (uint32_t)(wbytes_per_oc / k->wb);
				t->in[1].dst_step = (uint32_t)(oc * k->wb);
				t->in[1].dst_pitch = k->wb;
			}
			t->in[2].seg = cc->seg_const;
			npu_twu_flat(&t->in[2].walk, NPU_SPACE_DDR, k->bdt,
				     k->b_off + (uint64_t)oc0 * 4, (uint64_t)oc);
			t->in[2].hbsm = h_b;
			t->nin = 3;
			if (k->tcu.flags & NPU_TCU_F_PER_CHANNEL) {
				t->in[3].seg = cc->seg_const;
				npu_twu_flat(&t->in[3].walk, NPU_SPACE_DDR, NPU_DT_FP32,
					     k->q_off + (uint64_t)oc0 * 4, (uint64_t)oc);
				t->in[3].hbsm = h_q;
				t->nin = 4;
			}

			if (conv_f) {
				op = &t->op[t->nop++];
				op->unit = NPU_UNIT_CVU;
				op->opcode = NPU_CVU_UNARY;
				npu_twu_flat(&op->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, NPU_DT_FP32,
					     h_x32, (uint64_t)(ch * rows * g.W));
				npu_twu_flat(&op->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_BF16,
					     h_x16, (uint64_t)(ch * rows * g.W));
			}

			op = &t->op[t->nop++];
			op->unit = NPU_UNIT_TCU;
			op->opcode = NPU_TCU_CONV2D;
			op->params.tcu = k->tcu;
			if (k->tcu.flags & NPU_TCU_F_PER_CHANNEL)
				op->params.tcu.qscale_addr = h_q;
			hwc_levels(&op->opnd[NPU_OPND_SRC0], sdt, sb, h_src, ch, rows, g.W);
			memset(&op->opnd[NPU_OPND_SRC1], 0, sizeof(op->opnd[0]));
			op->opnd[NPU_OPND_SRC1].space = NPU_SPACE_HBSM;
			op->opnd[NPU_OPND_SRC1].dtype = (uint8_t)k->wdt;
			op->opnd[NPU_OPND_SRC1].base = h_w;
			/* [C][KH][KW][OC]: see the weights' DMA. */
			npu_twu_lvl(&op->opnd[NPU_OPND_SRC1], 0, oc, k->wb);
			npu_twu_lvl(&op->opnd[NPU_OPND_SRC1], 1, Cg, g.KH * g.KW * oc * k->wb);
			npu_twu_lvl(&op->opnd[NPU_OPND_SRC1], 2, g.KW, oc * k->wb);
			npu_twu_lvl(&op->opnd[NPU_OPND_SRC1], 3, g.KH, g.KW * oc * k->wb);
			npu_twu_flat(&op->opnd[NPU_OPND_SRC2], NPU_SPACE_HBSM, k->bdt, h_b,
				     (uint64_t)oc);
			tcu_window(op, &g, pt, pb, tg);
		} else {
			op = &t->op[t->nop++];
			op->unit = NPU_UNIT_CVU;
			op->opcode = NPU_CVU_POOL;
			hwc_levels(&op->opnd[NPU_OPND_SRC0], NPU_DT_FP32, 4, h_x32, ch, rows, g.W);
			op->params.cvu.fn = (uint8_t)k->pool_fn;
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
			if (k->count_pad)
				op->params.cvu.flags = NPU_CVU_F_COUNT_PAD;
		}
		/* Y block: oc channels x (oh1 - oh0) rows, fp32 [oc][oh][ow]. */
		x_levels(&op->opnd[NPU_OPND_DST], k->ydt, k->yb, h_y, oc, oh1 - oh0, g.OW, ypitch);
		if (lr.seg != NPU_NO_SEG)
			add_residual(t, &g, k, &lr, b, oc0, oc, oh0, oh1, h_y, ypitch, h_r);
		if (!st)
			st = npu_tile_out(t, h_y, (uint32_t)oc,
					  (uint32_t)((oh1 - oh0) * g.OW * k->yb),
					  (int32_t)ypitch, ly.seg,
					  ly.off + (uint64_t)(((b * g.OC + oc0) * g.OH + oh0) *
							   g.OW) * k->yb,
					  (int32_t)(g.OH * g.OW * k->yb));
	}
	if (!st)
		st = npu_sched_emit(cc, tiles, ntiles);
	npu_tiles_free(tiles, ntiles);
	return st;
}

static void weights_in(struct npu_tile_in *ti, uint32_t seg, uint64_t off, int64_t oc,
		       int64_t per_oc, uint32_t hbsm)
{
	ti->seg = seg;
	npu_twu_flat(&ti->walk, NPU_SPACE_DDR, NPU_DT_BF16, off, (uint64_t)(oc * per_oc));
	ti->hbsm = hbsm;
	if (oc > 1) {
		/* Transposed, output channel innermost, as in lower_2d. */
		ti->dst_row = (uint32_t)per_oc;
		ti->dst_step = (uint32_t)(oc * 2);
		ti->dst_pitch = 2;
	}
}

static void weight_levels(struct npu_hw_twu *w, uint32_t base, int64_t oc, int64_t cg,
			  int64_t KH, int64_t KW)
{
	memset(w, 0, sizeof(*w));
	w->space = NPU_SPACE_HBSM;
	w->dtype = NPU_DT_BF16;
	w->base = base;
	npu_twu_lvl(w, 0, oc, 2);
	npu_twu_lvl(w, 1, cg, KH * KW * oc * 2);
	npu_twu_lvl(w, 2, KW, oc * 2);
	npu_twu_lvl(w, 3, KH, KW * oc * 2);
}

static npu_status lower_pair(struct npu_cc *cc, const npu_ir_node *a, const npu_ir_node *b)
{
	struct kind ka = { .res = -1 }, kb = { .res = -1 };
	struct npu_conv_geom ga, gb;
	struct npu_loc lx, ly, lr = { NPU_NO_SEG, 0 };
	struct npu_tile *tiles;
	int64_t C, OC, ohb, nrow;
	unsigned ntiles = 0;
	int64_t res_pool;	/* the residual's pool window when rebuilt from X, else 0 */
	bool res_is_x;
	npu_status st;

	if ((st = npu_conv_geom_read(cc->g, a, false, &ga)) ||
	    (st = npu_conv_geom_read(cc->g, b, false, &gb)) ||
	    (st = prep_float(cc, a, &ga, &ka)) || (st = prep_float(cc, b, &gb, &kb)))
		return st;
	C = ga.C;
	OC = gb.OC;
	if ((st = npu_cc_loc(cc, a->inputs[0], &lx)) || (st = npu_cc_loc(cc, b->outputs[0], &ly)))
		return st;
	/*
	 * A residual rebuilt from the tile's X: the DTDU copies those rows out
	 * (no bank-conflict cost) and fills any zero padding, instead of a
	 * second read from DDR; its Concat is then not lowered at all.
	 */
	if ((st = npu_ir_attr_int(b, NPU_ATTR_RES_POOL, 0, &res_pool)))
		return st;
	res_is_x = res_pool > 0;
	if (kb.res >= 0 && !res_is_x && (st = npu_cc_loc(cc, kb.res, &lr)))
		return st;
	ohb = ga.OH;
	for (;;) {
		if (npu_pair_tile_bytes(&ga, &gb, kb.res >= 0, npu_conv_max_rows(&ga, ohb), ohb) <= cc->hbsm ||
		    ohb == 1)
			break;
		ohb = (ohb + 1) / 2;
	}
	nrow = (ga.OH + ohb - 1) / ohb;
	if (nrow * ga.N < cc->spread && ga.OH > 1) {
		int64_t want = (cc->spread + ga.N - 1) / ga.N;

		if (want > ga.OH)
			want = ga.OH;
		if ((ga.OH + want - 1) / want < ohb)
			ohb = (ga.OH + want - 1) / want;
		nrow = (ga.OH + ohb - 1) / ohb;
	}
	tiles = calloc((size_t)(nrow * ga.N), sizeof(*tiles));
	if (!tiles)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t n = 0; n < ga.N && !st; n++)
	for (int64_t rb = 0; rb < nrow && !st; rb++) {
		int64_t oh0 = rb * ohb, oh1 = oh0 + ohb > ga.OH ? ga.OH : oh0 + ohb;
		int64_t ih0, ih1, pt, pb, rows, orows = oh1 - oh0;
		uint32_t h_wa, h_ba, h_wb, h_bb, h_x32, h_x16, h_m, h_y, h_r, ypitch;
		struct npu_tile *t = &tiles[ntiles++];
		struct npu_hw_insn *op;

		rows_needed(&ga, oh0, oh1, &ih0, &ih1, &pt, &pb);
		rows = ih1 - ih0 + 1;
		ypitch = npu_hbsm_pitch((uint64_t)(orows * ga.OW * 4));
		/* Constants first: the same place in every tile, shared DMAs. */
		h_wa = 0;
		h_ba = h_wa + (uint32_t)align64((uint64_t)(C * ga.KH * ga.KW * 2));
		h_wb = h_ba + (uint32_t)align64((uint64_t)C * 4);
		h_bb = h_wb + (uint32_t)align64((uint64_t)(OC * C * 2));
		h_x32 = h_bb + (uint32_t)align64((uint64_t)OC * 4);
		h_x16 = h_x32 + (uint32_t)align64((uint64_t)(C * rows * ga.W * 4));
		h_m = h_x16 + (uint32_t)align64((uint64_t)(C * rows * ga.W * 2));
		h_y = h_m + (uint32_t)align64((uint64_t)(C * orows * ga.OW * 2));
		h_r = h_y + (uint32_t)align64((uint64_t)OC * ypitch);

		t->in[0].seg = lx.seg;
		t->in[0].walk.space = NPU_SPACE_DDR;
		t->in[0].walk.dtype = NPU_DT_FP32;
		t->in[0].walk.base = lx.off + (uint64_t)(((n * C) * ga.H + ih0) * ga.W) * 4;
		npu_twu_lvl(&t->in[0].walk, 0, rows * ga.W, 4);
		npu_twu_lvl(&t->in[0].walk, 1, C, ga.H * ga.W * 4);
		t->in[0].hbsm = h_x32;
		t->in[0].dst_row = (uint32_t)(rows * ga.W);
		t->in[0].dst_step = (uint32_t)(C * 4);
		t->in[0].dst_pitch = 4;
		weights_in(&t->in[1], cc->seg_const, ka.w_off, C, ga.KH * ga.KW, h_wa);
		t->in[2].seg = cc->seg_const;
		npu_twu_flat(&t->in[2].walk, NPU_SPACE_DDR, NPU_DT_FP32, ka.b_off, (uint64_t)C);
		t->in[2].hbsm = h_ba;
		weights_in(&t->in[3], cc->seg_const, kb.w_off, OC, C, h_wb);
		t->in[4].seg = cc->seg_const;
		npu_twu_flat(&t->in[4].walk, NPU_SPACE_DDR, NPU_DT_FP32, kb.b_off, (uint64_t)OC);
		t->in[4].hbsm = h_bb;
		t->nin = 5;

		op = &t->op[t->nop++];
		op->unit = NPU_UNIT_CVU;
		op->opcode = NPU_CVU_UNARY;
		npu_twu_flat(&op->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, NPU_DT_FP32, h_x32,
			     (uint64_t)(C * rows * ga.W));
		npu_twu_flat(&op->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_BF16, h_x16,
			     (uint64_t)(C * rows * ga.W));

		/* Depthwise, into M: bf16, channels innermost. */
		op = &t->op[t->nop++];
		op->unit = NPU_UNIT_TCU;
		op->opcode = NPU_TCU_CONV2D;
		op->params.tcu = ka.tcu;
		hwc_levels(&op->opnd[NPU_OPND_SRC0], NPU_DT_BF16, 2, h_x16, C, rows, ga.W);
		weight_levels(&op->opnd[NPU_OPND_SRC1], h_wa, C, 1, ga.KH, ga.KW);
		npu_twu_flat(&op->opnd[NPU_OPND_SRC2], NPU_SPACE_HBSM, NPU_DT_FP32, h_ba,
			     (uint64_t)C);
		hwc_levels(&op->opnd[NPU_OPND_DST], NPU_DT_BF16, 2, h_m, C, orows, ga.OW);
		tcu_window(op, &ga, pt, pb, C);

		/* Pointwise, into Y. */
		op = &t->op[t->nop++];
		op->unit = NPU_UNIT_TCU;
		op->opcode = NPU_TCU_CONV2D;
		op->params.tcu = kb.tcu;
		hwc_levels(&op->opnd[NPU_OPND_SRC0], NPU_DT_BF16, 2, h_m, C, orows, ga.OW);
		weight_levels(&op->opnd[NPU_OPND_SRC1], h_wb, OC, C, 1, 1);
		npu_twu_flat(&op->opnd[NPU_OPND_SRC2], NPU_SPACE_HBSM, NPU_DT_FP32, h_bb,
			     (uint64_t)OC);
		x_levels(&op->opnd[NPU_OPND_DST], NPU_DT_FP32, 4, h_y, OC, orows, ga.OW, ypitch);
		op->params.tcu.stride_h = op->params.tcu.stride_w = 1;
		op->params.tcu.dil_h = op->params.tcu.dil_w = 1;
		op->params.tcu.groups = 1;
		if (res_is_x) {
			/* [H][W][C] rows of R: X's own, or pooled into x16's room. */
			uint32_t h_src = h_x32 + (uint32_t)((oh0 * res_pool - ih0) * ga.W * C * 4);

			if (res_pool > 1) {
				op = &t->op[t->nop++];
				op->unit = NPU_UNIT_CVU;
				op->opcode = NPU_CVU_POOL;
				hwc_levels(&op->opnd[NPU_OPND_SRC0], NPU_DT_FP32, 4, h_src, C,
					   orows * res_pool, ga.W);
				hwc_levels(&op->opnd[NPU_OPND_DST], NPU_DT_FP32, 4, h_x16, C, orows,
					   ga.OW);
				op->params.cvu.fn = NPU_POOL_MAX;
				op->params.cvu.kernel_h = op->params.cvu.kernel_w = (uint16_t)res_pool;
				op->params.cvu.stride_h = op->params.cvu.stride_w = (uint16_t)res_pool;
				op->params.cvu.dil_h = op->params.cvu.dil_w = 1;
				h_src = h_x16;
			}
			op = &t->op[t->nop++];
			op->unit = NPU_UNIT_DTDU;
			op->opcode = NPU_DTDU_COPY;
			memset(&op->opnd[NPU_OPND_SRC0], 0, sizeof(op->opnd[0]));
			op->opnd[NPU_OPND_SRC0].space = NPU_SPACE_HBSM;
			op->opnd[NPU_OPND_SRC0].dtype = NPU_DT_FP32;
			op->opnd[NPU_OPND_SRC0].base = h_src;
			npu_twu_lvl(&op->opnd[NPU_OPND_SRC0], 0, orows * ga.OW, C * 4);
			npu_twu_lvl(&op->opnd[NPU_OPND_SRC0], 1, C, 4);
			planes(&op->opnd[NPU_OPND_DST], NPU_DT_FP32, 4, h_r, C, orows * ga.OW,
			       (uint32_t)(orows * ga.OW * 4));
			if (OC > C) {
				op = &t->op[t->nop++];
				op->unit = NPU_UNIT_DTDU;
				op->opcode = NPU_DTDU_FILL;
				npu_twu_flat(&op->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_FP32,
					     h_r + (uint32_t)(C * orows * ga.OW * 4),
					     (uint64_t)((OC - C) * orows * ga.OW));
			}
			add_residual(t, &gb, &kb, NULL, n, 0, OC, oh0, oh1, h_y, ypitch, h_r);
		} else if (lr.seg != NPU_NO_SEG) {
			add_residual(t, &gb, &kb, &lr, n, 0, OC, oh0, oh1, h_y, ypitch, h_r);
		}
		st = npu_tile_out(t, h_y, (uint32_t)OC, (uint32_t)(orows * ga.OW * 4),
				  (int32_t)ypitch, ly.seg,
				  ly.off + (uint64_t)(((n * OC) * ga.OH + oh0) * ga.OW) * 4,
				  (int32_t)(ga.OH * ga.OW * 4));
	}
	if (!st)
		st = npu_sched_emit(cc, tiles, ntiles);
	npu_tiles_free(tiles, ntiles);
	return st;
}

npu_status npu_lower_conv(struct npu_cc *cc, const npu_ir_node *n)
{
	struct kind k = { 0 };

	/* A depthwise Conv feeding a pointwise one (fuse_conv.c): lowered with
	 * it, at its place (after everything the pointwise one reads). */
	if (npu_ir_attr_find(n, NPU_ATTR_FUSED))
		return NPU_OK;
	if (npu_ir_attr_find(n, NPU_ATTR_PAIR)) {
		const npu_ir_tensor *x = npu_ir_input(cc->g, n, 0);

		if (!x || x->producer < 0)
			return npu_fail(NPU_ERR_INTERNAL, "a paired Conv without its depthwise half");
		return lower_pair(cc, &cc->g->nodes[x->producer], n);
	}
	k.quant = !strcmp(n->op, "QLinearConv") || !strcmp(n->op, "ConvInteger");
	k.res = -1;
	return lower_2d(cc, n, &k);
}

npu_status npu_lower_pool(struct npu_cc *cc, const npu_ir_node *n)
{
	if (npu_ir_attr_find(n, NPU_ATTR_FUSED))
		return NPU_OK;	/* its only reader pools it from its own input */
	if (!strcmp(n->op, "MaxPool")) {
		if (n->n_outputs > 1 && n->outputs[1] >= 0)
			return npu_fail(NPU_ERR_UNSUPPORTED, "MaxPool with an Indices output");
		return lower_2d(cc, n, &(struct kind){ .pool = true, .pool_fn = NPU_POOL_MAX });
	}
	return lower_2d(cc, n, &(struct kind){ .pool = true, .pool_fn = NPU_POOL_AVG });
}
