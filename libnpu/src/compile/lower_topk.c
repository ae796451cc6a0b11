// SPDX-License-Identifier: MIT
/*
 * TopK on the CSU (issue 17): the cluster CPU's TOPK service routine
 * (NPU_CSU_TOPK, Documentation/hw/isa.md) keeps the k largest or smallest
 * elements of each row, best first, ties to the lower index, NaN after
 * every number -- ONNX's order for sorted = 1 (and an allowed one for
 * sorted = 0).  It writes the values and their int32 positions: the int64
 * Indices output is int32 on the device (npu_narrow.c).
 *
 * The tensor is seen as [outer, D, inner] around the axis.  With inner =
 * 1 a tile takes several outer rows, the CSU's levels [D, rows]; otherwise
 * a tile is one outer slice [D (stride inner), inner], whose [k, inner]
 * results are already in ONNX's order.
 */
#include <stdlib.h>

#include "compile/npu_lower.h"

static uint32_t align64(uint64_t b)
{
	return (uint32_t)((b + 63) & ~63ull);
}

npu_status npu_lower_topk(struct npu_cc *cc, const npu_ir_node *n)
{
	const npu_ir_tensor *x = npu_ir_input(cc->g, n, 0), *v = npu_ir_output(cc->g, n, 0);
	const npu_ir_tensor *ix = npu_ir_output(cc->g, n, 1);
	int64_t axis, largest, outer = 1, D = 1, inner = 1, k;
	uint64_t es, per, slice, ntiles;
	unsigned dt;
	struct npu_loc lx, lv = { 0 }, li = { 0 };
	struct npu_tile *tiles;
	npu_status st;

	if (!v)
		return npu_fail(NPU_ERR_INTERNAL, "TopK without its Values output");
	dt = npu_cc_hw_dtype(x->dtype);
	if (x->dtype != NPU_DTYPE_FLOAT32 && x->dtype != NPU_DTYPE_FLOAT16 &&
	    x->dtype != NPU_DTYPE_BFLOAT16)
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"TopK on %s: the CSU ranks float32, float16 and bfloat16",
				npu_dtype_str(x->dtype));
	if (ix && ix->dtype != NPU_DTYPE_INT32)
		return npu_fail(NPU_ERR_INTERNAL, "TopK: its Indices are %s, not int32 (narrowed)",
				npu_dtype_str(ix->dtype));
	if ((st = npu_ir_attr_int(n, "axis", -1, &axis)) ||
	    (st = npu_ir_attr_int(n, "largest", 1, &largest)))
		return st;
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis >= x->rank)
		return npu_fail(NPU_ERR_FORMAT, "TopK axis out of range");
	for (int d = 0; d < x->rank; d++) {
		if (d < axis)
			outer *= x->dims[d];
		else if (d == axis)
			D = x->dims[d];
		else
			inner *= x->dims[d];
	}
	k = v->dims[axis];
	if (!k || !outer || !inner)
		return NPU_OK;	/* empty outputs */
	es = npu_dtype_size(x->dtype);
	/* One outer slice: x, values, indices. */
	slice = align64((uint64_t)D * inner * es) + align64((uint64_t)k * inner * es) +
		align64((uint64_t)k * inner * 4);
	if (slice > cc->hbsm || (uint64_t)D * inner > (1u << 24))
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"TopK over %lld x %lld elements: one slice does not fit a TPB's HBSM",
				(long long)D, (long long)inner);
	per = 1;
	if (inner == 1) {
		per = cc->hbsm / ((uint64_t)D * es + (uint64_t)k * (es + 4) + 192);
		if (per > (1u << 24) / (uint64_t)D)
			per = (1u << 24) / (uint64_t)D;
		if (((uint64_t)outer + cc->workers - 1) / cc->workers < per)
			per = ((uint64_t)outer + cc->workers - 1) / cc->workers;
		if (!per)
			per = 1;
	}
	if ((st = npu_cc_loc(cc, n->inputs[0], &lx)) ||
	    (st = npu_cc_loc(cc, n->outputs[0], &lv)) ||
	    (ix && (st = npu_cc_loc(cc, n->outputs[1], &li))))
		return st;
	ntiles = ((uint64_t)outer + per - 1) / per;
	tiles = calloc(ntiles, sizeof(*tiles));
	if (!tiles)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (uint64_t i = 0; i < ntiles && !st; i++) {
		struct npu_tile *t = &tiles[i];
		uint64_t r0 = i * per, cnt = outer - r0 < per ? outer - r0 : per;
		/* Semantic levels: [D, rows] with rows the outer rows or inner. */
		uint64_t rows = inner == 1 ? cnt : (uint64_t)inner;
		int64_t xs0 = inner == 1 ? (int64_t)es : inner * (int64_t)es;
		int64_t xs1 = inner == 1 ? D * (int64_t)es : (int64_t)es;
		int64_t ys0 = inner == 1 ? (int64_t)es : inner * (int64_t)es;
		int64_t ys1 = inner == 1 ? k * (int64_t)es : (int64_t)es;
		uint64_t vbytes = cnt * (uint64_t)k * inner * es, ibytes = cnt * (uint64_t)k * inner * 4;
		uint32_t h_v = align64(cnt * (uint64_t)D * inner * es), h_i = h_v + align64(vbytes);
		struct npu_hw_insn *op = &t->op[0];
		struct npu_hw_twu *w;

		t->in[0].seg = lx.seg;
		npu_twu_flat(&t->in[0].walk, NPU_SPACE_DDR, dt, lx.off + r0 * D * inner * es,
			     cnt * (uint64_t)D * inner);
		t->nin = 1;
		op->unit = NPU_UNIT_CSU;
		op->opcode = NPU_CSU_TOPK;
		op->params.csu.largest = largest ? 1 : 0;
		op->params.csu.k = (uint32_t)k;
		w = &op->opnd[NPU_OPND_SRC0];
		w->space = NPU_SPACE_HBSM;
		w->dtype = (uint8_t)dt;
		npu_twu_lvl(w, 0, D, xs0);
		npu_twu_lvl(w, 1, (int64_t)rows, xs1);
		w = &op->opnd[NPU_OPND_DST];
		w->space = NPU_SPACE_HBSM;
		w->dtype = (uint8_t)dt;
		w->base = h_v;
		npu_twu_lvl(w, 0, k, ys0);
		npu_twu_lvl(w, 1, (int64_t)rows, ys1);
		w = &op->opnd[NPU_OPND_SRC2];
		w->space = NPU_SPACE_HBSM;
		w->dtype = NPU_DT_INT32;
		w->base = h_i;
		npu_twu_lvl(w, 0, k, ys0 / (int64_t)es * 4);
		npu_twu_lvl(w, 1, (int64_t)rows, ys1 / (int64_t)es * 4);
		t->nop = 1;
		st = npu_tile_out(t, h_v, 1, (uint32_t)vbytes, 0, lv.seg,
				  lv.off + r0 * (uint64_t)k * inner * es, 0);
		if (!st && ix)
			st = npu_tile_out(t, h_i, 1, (uint32_t)ibytes, 0, li.seg,
					  li.off + r0 * (uint64_t)k * inner * 4, 0);
	}
	if (!st)
		st = npu_sched_emit(cc, tiles, (unsigned)ntiles);
	npu_tiles_free(tiles, (unsigned)ntiles);
	return st;
}
