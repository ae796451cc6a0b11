// SPDX-License-Identifier: MIT
/*
 * Gather with indices computed at run time (token and position
 * embeddings): the GSDU reads the table's rows by index, DDR to DDR.
 *
 * The data is seen as [outer, D, inner] around the gathered axis and the
 * output as [outer, count, inner]; row (o, i) of the output is row
 * o * D + index[i] of the data, inner elements long.  A tile brings a run
 * of indices (int32) into its HBSM and its write-back chain holds, per
 * outer block, one indexed descriptor whose limit is D: an index outside
 * [0, D) ends the job before anything is read with it
 * (NPU_TASK_INDEX_FAULT), so the table is never read past its end.  ONNX
 * also allows negative indices counting from the end; computed ones meet
 * the same limit (as 2^32 + index) and are refused at run time.
 *
 * Constant indices usually never get here: a rewrite turns them into
 * Slices and a Concat (rewrite_move.c).  Those it leaves (too many) are
 * checked and wrapped here at compile time and gathered the same way.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_lower.h"

/* Descriptors one tile's chain holds (the GSDU takes up to 4096). */
#define OUTER_PER_TILE	1024

/* Constant indices: checked against [-D, D), wrapped, as int32 in CONST. */
static npu_status const_indices(struct npu_cc *cc, const npu_ir_tensor *ind, int64_t D,
				struct npu_loc *out)
{
	int64_t cnt = npu_ir_numel(ind);
	int32_t *v = malloc((size_t)cnt * 4 + 4);
	npu_status st = NPU_OK;

	if (!v)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t i = 0; i < cnt; i++) {
		int64_t k = ind->dtype == NPU_DTYPE_INT64 ? ((const int64_t *)ind->data)[i] :
			    ((const int32_t *)ind->data)[i];

		if (k < -D || k >= D) {
			free(v);
			return npu_fail(NPU_ERR_FORMAT, "Gather index %lld out of range [-%lld, %lld)",
					(long long)k, (long long)D, (long long)D);
		}
		v[i] = (int32_t)(k < 0 ? k + D : k);
	}
	out->seg = cc->seg_const;
	out->off = npu_cc_const(cc, v, (uint64_t)cnt * 4, &st);
	free(v);
	return st;
}

npu_status npu_lower_gather(struct npu_cc *cc, const npu_ir_node *n)
{
	const npu_ir_tensor *x = npu_ir_input(cc->g, n, 0), *ind = npu_ir_input(cc->g, n, 1);
	const npu_ir_tensor *y = npu_ir_output(cc->g, n, 0);
	int64_t axis, outer = 1, inner = 1, D, cnt, chunk, esz;
	struct npu_loc lx, li, ly;
	struct npu_tile *tiles;
	unsigned ntiles = 0, cap;
	npu_status st;

	if (!x || !ind || !y)
		return npu_fail(NPU_ERR_FORMAT, "Gather needs data and indices");
	if (!npu_ir_is_const(ind) && ind->dtype != NPU_DTYPE_INT32)
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"Gather with computed %s indices (int32 or constant ones are supported)",
				npu_dtype_str(ind->dtype));
	esz = (int64_t)npu_dtype_size(x->dtype);
	if (!npu_cc_hw_dtype(x->dtype) || !esz)
		return npu_fail(NPU_ERR_UNSUPPORTED, "Gather of %s data", npu_dtype_str(x->dtype));
	if ((st = npu_ir_attr_int(n, "axis", 0, &axis)))
		return st;
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis >= x->rank)
		return npu_fail(NPU_ERR_FORMAT, "Gather axis out of range");
	npu_ir_axis_sizes(x, (int)axis, &outer, &inner);
	D = x->dims[axis];
	cnt = npu_ir_numel(ind);
	if (!cnt || !outer || !inner)
		return NPU_OK;		/* nothing to move */
	if (D > UINT32_MAX || inner * esz > INT32_MAX / 2 || D * inner * esz > INT32_MAX)
		return npu_fail(NPU_ERR_UNSUPPORTED, "Gather from a table of %lld x %lld elements",
				(long long)D, (long long)inner);
	if (npu_ir_is_const(ind))
		st = const_indices(cc, ind, D, &li);
	else
		st = npu_cc_loc(cc, n->inputs[1], &li);
	if (st || (st = npu_cc_loc(cc, n->inputs[0], &lx)) ||
	    (st = npu_cc_loc(cc, n->outputs[0], &ly)))
		return st;
	/*
	 * Indices per tile: spread over the workers, within the tile's HBSM
	 * budget (4 bytes each) and a descriptor's 64 MiB of rows.
	 */
	chunk = (cnt + cc->spread - 1) / cc->spread;
	if (chunk < 64)
		chunk = cnt < 64 ? cnt : 64;
	if (chunk > (int64_t)(cc->hbsm / 4))
		chunk = cc->hbsm / 4;
	if (chunk * inner * esz > (64ll << 20))
		chunk = (64ll << 20) / (inner * esz) > 0 ? (64ll << 20) / (inner * esz) : 1;
	cap = (unsigned)(((cnt + chunk - 1) / chunk) * ((outer + OUTER_PER_TILE - 1) / OUTER_PER_TILE));
	tiles = calloc(cap, sizeof(*tiles));
	if (!tiles)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t o0 = 0; o0 < outer && !st; o0 += OUTER_PER_TILE) {
		int64_t o1 = o0 + OUTER_PER_TILE < outer ? o0 + OUTER_PER_TILE : outer;

		for (int64_t i0 = 0; i0 < cnt && !st; i0 += chunk) {
			int64_t rows = cnt - i0 < chunk ? cnt - i0 : chunk;
			struct npu_tile *t = &tiles[ntiles++];

			t->in[0].seg = li.seg;
			npu_twu_flat(&t->in[0].walk, NPU_SPACE_DDR, NPU_DT_INT32, li.off + (uint64_t)i0 * 4,
				     (uint64_t)rows);
			t->in[0].hbsm = 0;
			t->nin = 1;
			for (int64_t o = o0; o < o1 && !st; o++)
				st = npu_tile_gather(t, 0, (uint32_t)rows, (uint32_t)(inner * esz), lx.seg,
						     lx.off + (uint64_t)(o * D * inner * esz),
						     (int32_t)(inner * esz), (uint32_t)D, ly.seg,
						     ly.off + (uint64_t)((o * cnt + i0) * inner * esz));
		}
	}
	if (!st)
		st = npu_sched_emit(cc, tiles, ntiles);
	npu_tiles_free(tiles, ntiles);
	return st;
}
