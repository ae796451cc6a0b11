// SPDX-License-Identifier: MIT
/*
 * Row-wise CVU operators: Softmax and LogSoftmax over one axis, and the
 * global poolings (a mean or max over H x W per channel).
 *
 * The tensor is seen as [outer, D, inner] around the reduced axis; a tile
 * is a range of outer rows, brought in densely, reduced over D with the
 * inner elements as a second level.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_lower.h"

static npu_status row_tiles(struct npu_cc *cc, const npu_ir_node *n, int64_t outer,
			    int64_t D, int64_t inner, unsigned opcode, unsigned fn,
			    bool reduce)
{
	uint64_t row = (uint64_t)(D * inner) * 4, out_row = reduce ? (uint64_t)inner * 4 : row;
	uint64_t per = (cc->hbsm / 2) / row, rows;
	struct npu_loc lx, ly;
	struct npu_tile *tiles;
	unsigned ntiles;
	npu_status st;

	if (!per)
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s over rows of %llu bytes", n->op,
				(unsigned long long)row);
	if (per > (1u << 24) / (uint64_t)(D * inner))
		per = (1u << 24) / (uint64_t)(D * inner);
	rows = ((uint64_t)outer + cc->workers - 1) / cc->workers;
	if (rows < per)
		per = rows ? rows : 1;
	if ((st = npu_cc_loc(cc, n->inputs[0], &lx)) || (st = npu_cc_loc(cc, n->outputs[0], &ly)))
		return st;
	ntiles = (unsigned)(((uint64_t)outer + per - 1) / per);
	tiles = calloc(ntiles, sizeof(*tiles));
	if (!tiles)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (unsigned i = 0; i < ntiles && !st; i++) {
		struct npu_tile *t = &tiles[i];
		uint64_t r0 = i * per, cnt = outer - r0 < per ? outer - r0 : per;
		uint32_t h_y = (uint32_t)((cnt * row + 63) & ~63ull);
		struct npu_hw_insn *op = &t->op[0];
		struct npu_hw_twu *x = &op->opnd[NPU_OPND_SRC0], *y = &op->opnd[NPU_OPND_DST];

		t->in[0].seg = lx.seg;
		npu_twu_flat(&t->in[0].walk, NPU_SPACE_DDR, NPU_DT_FP32, lx.off + r0 * row,
			     cnt * (uint64_t)(D * inner));
		t->nin = 1;
		op->unit = NPU_UNIT_CVU;
		op->opcode = (uint8_t)opcode;
		op->params.cvu.fn = (uint8_t)fn;
		op->params.cvu.reduce_levels = 1;
		/* x: [D (stride inner), inner, rows]; reduce over level 0. */
		x->space = NPU_SPACE_HBSM;
		x->dtype = NPU_DT_FP32;
		npu_twu_lvl(x, 0, D, inner * 4);
		npu_twu_lvl(x, 1, inner, 4);
		npu_twu_lvl(x, 2, (int64_t)cnt, D * inner * 4);
		y->space = NPU_SPACE_HBSM;
		y->dtype = NPU_DT_FP32;
		y->base = h_y;
		if (reduce) {
			npu_twu_lvl(y, 0, inner, 4);
			npu_twu_lvl(y, 1, (int64_t)cnt, inner * 4);
		} else {
			npu_twu_lvl(y, 0, D, inner * 4);
			npu_twu_lvl(y, 1, inner, 4);
			npu_twu_lvl(y, 2, (int64_t)cnt, D * inner * 4);
		}
		t->nop = 1;
		st = npu_tile_out(t, h_y, 1, (uint32_t)(cnt * out_row), 0, ly.seg,
				  ly.off + r0 * out_row, 0);
	}
	if (!st)
		st = npu_sched_emit(cc, tiles, ntiles);
	npu_tiles_free(tiles, ntiles);
	return st;
}

npu_status npu_lower_softmax(struct npu_cc *cc, const npu_ir_node *n)
{
	const npu_ir_tensor *x = npu_ir_input(cc->g, n, 0);
	int64_t axis, outer = 1, D = 1, inner = 1;
	bool logsm = !strcmp(n->op, "LogSoftmax");
	npu_status st;

	if (x->dtype != NPU_DTYPE_FLOAT32)
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s on %s", n->op, npu_dtype_str(x->dtype));
	if ((st = npu_ir_attr_int(n, "axis", n->opset < 13 ? 1 : -1, &axis)))
		return st;
	if (axis < 0)
		axis += x->rank;
	if (x->rank && (axis < 0 || axis >= x->rank))
		return npu_fail(NPU_ERR_FORMAT, "%s axis out of range", n->op);
	for (int d = 0; d < x->rank; d++) {
		if (d < axis)
			outer *= x->dims[d];
		else if (n->opset < 13 || d == axis)
			D *= x->dims[d];	/* before opset 13: flattened from axis on */
		else
			inner *= x->dims[d];
	}
	if (!outer || !D || !inner)
		return NPU_OK;
	return row_tiles(cc, n, outer, D, inner, logsm ? NPU_CVU_LOGSOFTMAX : NPU_CVU_SOFTMAX,
			 0, false);
}

npu_status npu_lower_global_pool(struct npu_cc *cc, const npu_ir_node *n)
{
	const npu_ir_tensor *x = npu_ir_input(cc->g, n, 0);
	int64_t hw = 1;

	if (x->dtype != NPU_DTYPE_FLOAT32 || x->rank < 3)
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s on %s rank %d", n->op,
				npu_dtype_str(x->dtype), x->rank);
	for (int d = 2; d < x->rank; d++)
		hw *= x->dims[d];
	/* [N*C rows] x [HW]: reduce the HW of each row. */
	return row_tiles(cc, n, x->dims[0] * x->dims[1], hw, 1, NPU_CVU_REDUCE,
			 strcmp(n->op, "GlobalMaxPool") ? NPU_REDUCE_MEAN : NPU_REDUCE_MAX, true);
}

/*
 * LayerNormalization over the axes from @axis on: [rows, D] with gamma and
 * beta [D] re-read for every row (a broadcast level).  RMSNormalization
 * is the same CVU LAYERNORM with NPU_CVU_F_RMS and no beta operand.
 */
npu_status npu_lower_layernorm(struct npu_cc *cc, const npu_ir_node *n)
{
	const npu_ir_tensor *x = npu_ir_input(cc->g, n, 0), *ga = npu_ir_input(cc->g, n, 1);
	bool rms = !strcmp(n->op, "RMSNormalization");
	const npu_ir_tensor *be = rms ? NULL : npu_ir_input(cc->g, n, 2);
	int64_t axis, rows = 1, D = 1;
	uint64_t g_off, b_off = 0, per, ntiles;
	struct npu_loc lx, ly;
	struct npu_tile *tiles;
	float eps, *zeros = NULL;
	npu_status st = NPU_OK;

	if (x->dtype != NPU_DTYPE_FLOAT32 || !ga || !npu_ir_is_const(ga) ||
	    (be && !npu_ir_is_const(be)))
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s with computed scale or bias", n->op);
	for (int k = 1; k < n->n_outputs; k++)
		if (n->outputs[k] >= 0)
			return npu_fail(NPU_ERR_UNSUPPORTED, "%s's Mean/InvStdDev outputs", n->op);
	if ((st = npu_ir_attr_int(n, "axis", -1, &axis)) ||
	    (st = npu_ir_attr_float(n, "epsilon", 1e-5f, &eps)))
		return st;
	if (axis < 0)
		axis += x->rank;
	for (int d = 0; d < x->rank; d++) {
		if (d < axis)
			rows *= x->dims[d];
		else
			D *= x->dims[d];
	}
	if (npu_ir_numel(ga) != D || (be && npu_ir_numel(be) != D))
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s with broadcast scale or bias", n->op);
	g_off = npu_cc_const(cc, ga->data, (uint64_t)D * 4, &st);
	if (!st && !be && !rms) {
		zeros = calloc((size_t)D, 4);
		if (!zeros)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	if (!st && !rms)
		b_off = npu_cc_const(cc, be ? be->data : zeros, (uint64_t)D * 4, &st);
	free(zeros);
	if (st || (st = npu_cc_loc(cc, n->inputs[0], &lx)) ||
	    (st = npu_cc_loc(cc, n->outputs[0], &ly)))
		return st;
	if ((uint64_t)D * 16 > cc->hbsm)
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s over %lld elements", n->op,
				(long long)D);
	per = (cc->hbsm - (uint64_t)D * 8 - 256) / ((uint64_t)D * 8);
	if (per > (1u << 24) / (uint64_t)D)
		per = (1u << 24) / (uint64_t)D;
	if (((uint64_t)rows + cc->workers - 1) / cc->workers < per)
		per = ((uint64_t)rows + cc->workers - 1) / cc->workers;
	if (!per)
		per = 1;
	ntiles = ((uint64_t)rows + per - 1) / per;
	tiles = calloc(ntiles, sizeof(*tiles));
	if (!tiles)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (uint64_t i = 0; i < ntiles && !st; i++) {
		struct npu_tile *t = &tiles[i];
		uint64_t r0 = i * per, cnt = rows - r0 < per ? rows - r0 : per;
		uint32_t h_g = (uint32_t)((cnt * D * 4 + 63) & ~63ull);
		uint32_t h_b = h_g + (uint32_t)((D * 4 + 63) & ~63);
		uint32_t h_y = h_b + (uint32_t)((D * 4 + 63) & ~63);
		struct npu_hw_insn *op = &t->op[0];

		t->in[0].seg = lx.seg;
		npu_twu_flat(&t->in[0].walk, NPU_SPACE_DDR, NPU_DT_FP32, lx.off + r0 * D * 4,
			     cnt * (uint64_t)D);
		t->in[1].seg = cc->seg_const;
		npu_twu_flat(&t->in[1].walk, NPU_SPACE_DDR, NPU_DT_FP32, g_off, (uint64_t)D);
		t->in[1].hbsm = h_g;
		if (!rms) {
			t->in[2].seg = cc->seg_const;
			npu_twu_flat(&t->in[2].walk, NPU_SPACE_DDR, NPU_DT_FP32, b_off,
				     (uint64_t)D);
			t->in[2].hbsm = h_b;
		}
		t->nin = rms ? 2 : 3;
		op->unit = NPU_UNIT_CVU;
		op->opcode = NPU_CVU_LAYERNORM;
		op->params.cvu.flags = rms ? NPU_CVU_F_RMS : 0;
		op->params.cvu.reduce_levels = 1;
		memcpy(&op->params.cvu.imm[0], &eps, 4);
		for (int k = 0; k < 4; k++) {
			static const unsigned slot[4] = { NPU_OPND_SRC0, NPU_OPND_SRC1,
							  NPU_OPND_SRC2, NPU_OPND_DST };
			static const int bcast[4] = { 0, 1, 1, 0 };
			uint32_t base[4] = { 0, h_g, h_b, h_y };
			struct npu_hw_twu *w = &op->opnd[slot[k]];

			if (rms && slot[k] == NPU_OPND_SRC2)
				continue;	/* no beta */
			w->space = NPU_SPACE_HBSM;
			w->dtype = NPU_DT_FP32;
			w->base = base[k];
			npu_twu_lvl(w, 0, D, 4);
			npu_twu_lvl(w, 1, (int64_t)cnt, bcast[k] ? 0 : D * 4);
		}
		t->nop = 1;
		st = npu_tile_out(t, h_y, 1, (uint32_t)(cnt * D * 4), 0, ly.seg, ly.off + r0 * D * 4, 0);
	}
	if (!st)
		st = npu_sched_emit(cc, tiles, (unsigned)ntiles);
	npu_tiles_free(tiles, (unsigned)ntiles);
	return st;
}

/*
 * ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceL1, ReduceL2,
 * ReduceSumSquare, ReduceLogSum, ReduceLogSumExp, ReduceProd over one
 * contiguous range of axes (any keepdims): [outer, D, inner] with D the
 * reduced axes.
 */
npu_status npu_lower_reduce(struct npu_cc *cc, const npu_ir_node *n)
{
	const npu_ir_tensor *x = npu_ir_input(cc->g, n, 0);
	int64_t axes[NPU_MAX_RANK], outer = 1, D = 1, inner = 1, noop = 0;
	bool red[NPU_MAX_RANK] = { false };
	int na = -1, first = -1, last = -1;
	unsigned fn;
	npu_status st;

	if (x->dtype != NPU_DTYPE_FLOAT32)
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s on %s", n->op, npu_dtype_str(x->dtype));
	{
		static const struct { const char *op; unsigned fn; } fns[] = {
			{ "ReduceMean", NPU_REDUCE_MEAN }, { "ReduceSum", NPU_REDUCE_SUM },
			{ "ReduceMax", NPU_REDUCE_MAX }, { "ReduceMin", NPU_REDUCE_MIN },
			{ "ReduceL1", NPU_REDUCE_SUM_ABS },
			{ "ReduceSumSquare", NPU_REDUCE_SUM_SQUARE },
			{ "ReduceL2", NPU_REDUCE_L2 }, { "ReduceLogSum", NPU_REDUCE_LOG_SUM },
			{ "ReduceLogSumExp", NPU_REDUCE_LOG_SUM_EXP },
			{ "ReduceProd", NPU_REDUCE_PROD },
		};

		fn = NPU_REDUCE_END;
		for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
			if (!strcmp(n->op, fns[i].op))
				fn = fns[i].fn;
		if (fn == NPU_REDUCE_END)
			return npu_fail(NPU_ERR_INTERNAL, "no reduction for %s", n->op);
	}
	/* Axes: an attribute, or (ReduceSum 13+, all 18+) a constant input. */
	if (npu_ir_input(cc->g, n, 1)) {
		if ((st = npu_ir_const_ints(npu_ir_input(cc->g, n, 1), axes, NPU_MAX_RANK, &na)))
			return st;
	} else {
		const int64_t *a;

		if ((st = npu_ir_attr_ints(n, "axes", &a, &na)))
			return st;
		if (na > NPU_MAX_RANK)
			return npu_fail(NPU_ERR_FORMAT, "%s with %d axes", n->op, na);
		for (int i = 0; i < na; i++)
			axes[i] = a[i];
	}
	if ((st = npu_ir_attr_int(n, "noop_with_empty_axes", 0, &noop)))
		return st;
	if (na <= 0 && noop)
		return npu_lower_alias(cc, n);
	for (int i = 0; i < x->rank; i++)
		red[i] = na <= 0;
	for (int i = 0; i < na; i++) {
		int64_t a = axes[i] < 0 ? axes[i] + x->rank : axes[i];

		if (a < 0 || a >= x->rank)
			return npu_fail(NPU_ERR_FORMAT, "%s axis %lld out of range", n->op,
					(long long)axes[i]);
		red[a] = true;
	}
	for (int d = 0; d < x->rank; d++)
		if (red[d]) {
			if (first < 0)
				first = d;
			last = d;
		}
	for (int d = first; d >= 0 && d <= last; d++)
		if (!red[d])
			return npu_fail(NPU_ERR_UNSUPPORTED, "%s over axes that are not adjacent",
					n->op);
	for (int d = 0; d < x->rank; d++) {
		if (first < 0 || d < first)
			outer *= x->dims[d];
		else if (d <= last)
			D *= x->dims[d];
		else
			inner *= x->dims[d];
	}
	if (!outer || !D || !inner)
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s of an empty tensor", n->op);
	return row_tiles(cc, n, outer, D, inner, NPU_CVU_REDUCE, fn, true);
}
