// SPDX-License-Identifier: MIT
/*
 * QuantizeLinear and DequantizeLinear (per tensor) on the CVU: its read
 * stage dequantizes integer sources ((q - in_zp) * in_scale) and its write
 * stage quantizes (round(v / out_scale) + out_zp, half to even,
 * saturating), exactly ONNX's definitions.  Tiles are element ranges.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_lower.h"

static int64_t zp_value(const npu_ir_tensor *z)
{
	switch (z->dtype) {
	case NPU_DTYPE_INT8: return *(const int8_t *)z->data;
	case NPU_DTYPE_UINT8: return *(const uint8_t *)z->data;
	case NPU_DTYPE_INT32: return *(const int32_t *)z->data;
	default: return 0;
	}
}

static bool is_float(unsigned hw_dtype)
{
	return hw_dtype == NPU_DT_FP32 || hw_dtype == NPU_DT_FP16 || hw_dtype == NPU_DT_BF16;
}

/*
 * Cast at run time is one CVU UNARY pass (the CVU reads any dtype as fp32
 * and converts what it writes):
 * - to a float type: a plain conversion (an int32 rounds to the nearest
 *   float, as a cast does);
 * - to bool: NOT, then NOT as a pipeline stage: x != 0 (NaN is true);
 * - float to an integer: TRUNC (ONNX truncates toward zero), then the
 *   store saturates (out of range is undefined in ONNX);
 * - bool to anything and 8-bit to int32: exact conversions.
 * Narrowing or sign-changing integer casts (int32 to int8, uint8 to int8)
 * wrap in ONNX and would saturate here: refused by name.
 */
static npu_status cast_params(const npu_ir_node *n, const npu_ir_tensor *x,
			      const npu_ir_tensor *y, struct npu_hw_cvu_params *p)
{
	unsigned xdt = npu_cc_hw_dtype(x->dtype), ydt = npu_cc_hw_dtype(y->dtype);

	(void)n;
	if (y->dtype == NPU_DTYPE_BOOL) {
		p->fn = NPU_FN_NOT;
		p->nstages = 1;
		p->stage[0].fn = NPU_FN_NOT;
	} else if (is_float(ydt) || x->dtype == NPU_DTYPE_BOOL) {
		p->fn = NPU_FN_IDENTITY;
	} else if (is_float(xdt)) {
		p->fn = NPU_FN_TRUNC;
	} else if (ydt == NPU_DT_INT32) {
		p->fn = NPU_FN_IDENTITY;	/* int8, uint8: widening */
	} else {
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"Cast from %s to %s at run time: ONNX wraps the values that do not fit, the NPU would saturate them",
				npu_dtype_str(x->dtype), npu_dtype_str(y->dtype));
	}
	return NPU_OK;
}

npu_status npu_lower_quant(struct npu_cc *cc, const npu_ir_node *n)
{
	bool q = !strcmp(n->op, "QuantizeLinear"), cast = !strcmp(n->op, "Cast");
	const npu_ir_tensor *x = npu_ir_input(cc->g, n, 0), *y = npu_ir_output(cc->g, n, 0);
	const npu_ir_tensor *sc = npu_ir_input(cc->g, n, 1), *zp = npu_ir_input(cc->g, n, 2);
	unsigned xdt = npu_cc_hw_dtype(x->dtype), ydt = npu_cc_hw_dtype(y->dtype);
	unsigned xb = npu_cc_hw_size(xdt), yb = npu_cc_hw_size(ydt);
	struct npu_hw_cvu_params p;
	struct npu_loc lx, ly;
	struct npu_tile *tiles;
	uint64_t total = (uint64_t)npu_ir_numel(y), per, ntiles;
	float scale;
	int cnt;
	npu_status st;

	if (!xdt || !ydt)
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s from %s to %s", n->op,
				npu_dtype_str(x->dtype), npu_dtype_str(y->dtype));
	memset(&p, 0, sizeof(p));
	p.fn = NPU_FN_IDENTITY;
	if (cast) {
		if (x->dtype == y->dtype && !is_float(ydt))
			return npu_lower_alias(cc, n);	/* same bits */
		if ((st = cast_params(n, x, y, &p)))
			return st;
		sc = zp = NULL;
	} else if (!npu_ir_is_const(sc) || (zp && !npu_ir_is_const(zp)) ||
		   npu_ir_numel(sc) != 1) {
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s with per-axis or computed parameters",
				n->op);
	} else if ((st = npu_ir_const_floats(sc, &scale, 1, &cnt))) {
		return st;
	}
	if (cast) {
		/* plain conversion */
	} else if (q) {
		p.flags = NPU_CVU_F_OUT_QUANT;
		memcpy(&p.out_scale, &scale, 4);
		p.out_zp = zp ? (int32_t)zp_value(zp) : 0;
	} else {
		p.flags = NPU_CVU_F_IN_QUANT;
		memcpy(&p.in_scale, &scale, 4);
		p.in_zp = zp ? (int32_t)zp_value(zp) : 0;
	}
	if (!total)
		return NPU_OK;
	if ((st = npu_cc_loc(cc, n->inputs[0], &lx)) || (st = npu_cc_loc(cc, n->outputs[0], &ly)))
		return st;
	per = cc->hbsm / (xb + yb) / 64 * 64;
	if ((total + cc->workers - 1) / cc->workers < per)
		per = (total + cc->workers - 1) / cc->workers;
	if (per > (1u << 24))
		per = 1u << 24;
	ntiles = (total + per - 1) / per;
	tiles = calloc(ntiles, sizeof(*tiles));
	if (!tiles)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	st = NPU_OK;
	for (uint64_t i = 0; i < ntiles && !st; i++) {
		struct npu_tile *t = &tiles[i];
		uint64_t e0 = i * per, cntn = total - e0 < per ? total - e0 : per;
		uint32_t h_y = (uint32_t)((cntn * xb + 63) & ~63ull);
		struct npu_hw_insn *op = &t->op[0];

		t->in[0].seg = lx.seg;
		npu_twu_flat(&t->in[0].walk, NPU_SPACE_DDR, xdt, lx.off + e0 * xb, cntn);
		t->nin = 1;
		op->unit = NPU_UNIT_CVU;
		op->opcode = NPU_CVU_UNARY;
		op->params.cvu = p;
		npu_twu_flat(&op->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, xdt, 0, cntn);
		npu_twu_flat(&op->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, ydt, h_y, cntn);
		t->nop = 1;
		st = npu_tile_out(t, h_y, 1, (uint32_t)(cntn * yb), 0, ly.seg, ly.off + e0 * yb, 0);
	}
	if (!st)
		st = npu_sched_emit(cc, tiles, (unsigned)ntiles);
	npu_tiles_free(tiles, (unsigned)ntiles);
	return st;
}
