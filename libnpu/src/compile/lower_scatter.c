// SPDX-License-Identifier: MIT
/*
 * npu.ScatterRows: rows written at positions given by a row list, the
 * mirror image of the run-time Gather (lower_gather.c).  A generation
 * session's decode step writes its new K/V rows into the KV cache with
 * it (issue 16): out = data; out[.., rows[i], ..] = updates[.., i, ..]
 * along axis, the last of duplicate rows winning.
 *
 * Data is seen as [outer, D, inner] around the axis, updates as [outer,
 * S, inner]; row (o, i) of the updates goes to row o * D + rows[i] of the
 * output, inner elements long.
 *
 * In place.  A KV cache is megabytes and one new row is bytes, so when the
 * output can be data's bytes the node writes only the rows.  The output
 * lives in data's bytes when the node carries NPU_ATTR_IN_PLACE (whoever
 * set it promises nothing reads data afterwards: a generation rewrite on
 * the cache) or when that is safe by itself: data is computed at run time
 * in the scratch, this node is its only reader, and no other tensor
 * shares its bytes (an alias or a Concat slice).  Otherwise (and always for
 * constant data, whose bytes every run reads) data is first copied to the
 * output (DDR to DDR), then the rows are written.
 *
 * Constant rows are checked against [-D, D) at compile time (negative
 * ones count from the end, as ONNX's), duplicates resolved (the last
 * wins) and the rows written by DMA, one move per run of consecutive rows:
 * any device.  Computed rows (int32) need ISA 1.3: one tile brings the
 * whole row list into its HBSM and its write-back chain writes the rows
 * with NPU_GSDU_F_DST_INDEXED descriptors, limit D.  The chain runs in
 * order, so duplicates end with the last; a row outside [0, D) (a
 * negative one is 2^32 + row) ends the job before the descriptor writes
 * anything, so the cache is never written past its end.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_lower.h"

/* Outer blocks (descriptors) one tile's chain holds (the GSDU takes up to 4096). */
#define OUTER_PER_TILE	1024
/* Bytes one GSDU descriptor moves at most (isa.md). */
#define DESC_MAX_BYTES	(64ll << 20)

/* Whether the output can be data's bytes without anyone seeing it change. */
static bool in_place_safe(const struct npu_cc *cc, const npu_ir_node *n)
{
	const npu_ir_graph *g = cc->g;
	int xi = n->inputs[0], uses = 0;
	const npu_ir_tensor *x = &g->tensors[xi];
	const struct npu_loc *lx = &cc->loc[xi];
	uint64_t bytes = (uint64_t)npu_ir_numel(x) * npu_dtype_size(x->dtype);

	if (npu_ir_is_const(x) || x->producer < 0 || npu_ir_is_graph_output(g, xi) ||
	    cc->home[xi].slice_of >= 0 || (lx->seg != NPU_NO_SEG && lx->seg != cc->seg_scratch))
		return false;
	for (int i = 0; i < g->n_nodes; i++) {
		const npu_ir_node *m = &g->nodes[i];

		for (int k = 0; !m->dead && k < m->n_inputs; k++)
			uses += m->inputs[k] == xi;
	}
	if (uses != 1)
		return false;
	/* Another tensor in its bytes (a Reshape's input or output, a slice). */
	for (int t = 0; lx->seg != NPU_NO_SEG && t < cc->nloc; t++) {
		const npu_ir_tensor *o = &g->tensors[t];
		uint64_t ob = (uint64_t)npu_ir_numel(o) * npu_dtype_size(o->dtype);

		if (t != xi && cc->loc[t].seg == lx->seg && cc->loc[t].off < lx->off + bytes &&
		    lx->off < cc->loc[t].off + (ob ? ob : 1))
			return false;
		if (cc->home[t].slice_of == xi)
			return false;
	}
	return true;
}

/*
 * Home the output: data's bytes when in place (*@in_place), else its own,
 * data copied there first.
 */
static npu_status home_output(struct npu_cc *cc, const npu_ir_node *n, struct npu_loc *ly,
			      bool *in_place)
{
	int xi = n->inputs[0], yi = n->outputs[0];
	int64_t asked = 0;
	struct npu_loc lx;
	npu_status st;

	if ((st = npu_ir_attr_int(n, NPU_ATTR_IN_PLACE, 0, &asked)))
		return st;
	/* Never into a constant: the CONST segment is the model's, for every run. */
	*in_place = (asked && !npu_ir_is_const(&cc->g->tensors[xi])) || in_place_safe(cc, n);
	if ((st = npu_cc_loc(cc, xi, &lx)))
		return st;
	if (*in_place && !npu_cc_has_home(cc, yi))
		cc->loc[yi] = lx;	/* an alias: the plan keeps the block alive for both */
	if ((st = npu_cc_loc(cc, yi, ly)))
		return st;
	*in_place = ly->seg == lx.seg && ly->off == lx.off;
	return *in_place ? NPU_OK : npu_cc_copy(cc, xi, yi);
}

/* A row and where it is in the list, sorted by row and then position. */
struct placed {
	int64_t row, at;
};

static int by_row(const void *a, const void *b)
{
	const struct placed *p = a, *q = b;

	if (p->row != q->row)
		return p->row < q->row ? -1 : 1;
	return p->at < q->at ? -1 : p->at > q->at;
}

/* Constant rows: checked, wrapped, the last of duplicates kept; written by DMA. */
static npu_status const_rows(struct npu_cc *cc, const npu_ir_node *n, int64_t outer,
			     int64_t D, int64_t inner, const struct npu_loc *lu,
			     const struct npu_loc *ly)
{
	const npu_ir_tensor *r = npu_ir_input(cc->g, n, 1), *x = npu_ir_input(cc->g, n, 0);
	int64_t S = npu_ir_numel(r), esz = (int64_t)npu_dtype_size(x->dtype);
	unsigned hw = npu_cc_hw_dtype(x->dtype);
	int64_t *row = malloc((size_t)S * sizeof(*row) + 1);
	struct placed *srt = malloc((size_t)S * sizeof(*srt) + 1);
	bool *kept = calloc((size_t)S + 1, 1);
	struct npu_pb pb;
	npu_status st = NPU_OK;
	char lbl[96];

	if (!row || !srt || !kept) {
		free(row);
		free(srt);
		free(kept);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	npu_ir_node_label(n, lbl, sizeof(lbl));
	for (int64_t i = 0; i < S && !st; i++) {
		int64_t k = r->dtype == NPU_DTYPE_INT64 ? ((const int64_t *)r->data)[i] :
			    ((const int32_t *)r->data)[i];

		if (k < -D || k >= D)
			st = npu_fail(NPU_ERR_FORMAT,
				      "npu.ScatterRows (node %s): row %lld at position %lld is outside [-%lld, %lld), the rows of '%s' along its axis",
				      lbl, (long long)k, (long long)i, (long long)D, (long long)D,
				      x->name);
		row[i] = k < 0 ? k + D : k;
		srt[i] = (struct placed){ row[i], i };
	}
	/* The last position of each row wins: sorted, the last of each group. */
	qsort(srt, (size_t)S, sizeof(*srt), by_row);
	for (int64_t i = 0; i < S; i++)
		kept[srt[i].at] = i + 1 == S || srt[i + 1].row != srt[i].row;
	npu_pb_init(&pb);
	/* Runs of consecutive kept rows going to consecutive rows: one move each. */
	for (int64_t i = 0; i < S && !st;) {
		int64_t k = 1;

		if (!kept[i]) {
			i++;
			continue;
		}
		while (i + k < S && kept[i + k] && row[i + k] == row[i] + k)
			k++;
		st = npu_dma_blocks(&pb, (unsigned)esz, hw, k * inner, outer, lu->seg,
				    lu->off + (uint64_t)(i * inner * esz), S * inner, ly->seg,
				    ly->off + (uint64_t)(row[i] * inner * esz), D * inner);
		i += k;
	}
	free(row);
	free(srt);
	free(kept);
	if (!st && pb.n)
		return npu_sched_dma(cc, &pb);
	npu_pb_free(&pb);
	return st;
}

/* Computed rows (int32): DST_INDEXED descriptors, one tile per run of outer blocks. */
static npu_status runtime_rows(struct npu_cc *cc, const npu_ir_node *n, int64_t outer,
			       int64_t D, int64_t inner, const struct npu_loc *lu,
			       const struct npu_loc *ly)
{
	const npu_ir_tensor *x = npu_ir_input(cc->g, n, 0), *r = npu_ir_input(cc->g, n, 1);
	int64_t S = npu_ir_numel(r), esz = (int64_t)npu_dtype_size(x->dtype), rb = inner * esz;
	int64_t per, chunk = DESC_MAX_BYTES / rb;
	struct npu_tile *tiles;
	struct npu_loc lr;
	unsigned ntiles = 0, cap;
	npu_status st;
	char lbl[96];

	npu_ir_node_label(n, lbl, sizeof(lbl));
	if (r->dtype != NPU_DTYPE_INT32)
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"npu.ScatterRows (node %s): computed rows must be int32, '%s' is %s",
				lbl, r->name, npu_dtype_str(r->dtype));
	/* One tile holds the whole list, so its chain writes duplicates in order. */
	if ((uint64_t)S * 4 > cc->hbsm)
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"npu.ScatterRows (node %s): %lld computed rows do not fit one tile's %u HBSM bytes; write fewer rows per node",
				lbl, (long long)S, cc->hbsm);
	if ((st = npu_cc_loc(cc, n->inputs[1], &lr)))
		return st;
	per = (outer + cc->spread - 1) / cc->spread;
	chunk = chunk < S ? chunk : S;
	if (per > OUTER_PER_TILE / ((S + chunk - 1) / chunk))
		per = OUTER_PER_TILE / ((S + chunk - 1) / chunk);
	if (per < 1)
		per = 1;
	cap = (unsigned)((outer + per - 1) / per);
	tiles = calloc(cap, sizeof(*tiles));
	if (!tiles)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t o0 = 0; o0 < outer && !st; o0 += per) {
		int64_t o1 = o0 + per < outer ? o0 + per : outer;
		struct npu_tile *t = &tiles[ntiles++];

		t->in[0].seg = lr.seg;
		npu_twu_flat(&t->in[0].walk, NPU_SPACE_DDR, NPU_DT_INT32, lr.off, (uint64_t)S);
		t->in[0].hbsm = 0;
		t->nin = 1;
		for (int64_t o = o0; o < o1 && !st; o++)
			for (int64_t i0 = 0; i0 < S && !st; i0 += chunk)
				st = npu_tile_scatter(t, (uint32_t)(4 * i0),
						      (uint32_t)(S - i0 < chunk ? S - i0 : chunk),
						      (uint32_t)rb, lu->seg,
						      lu->off + (uint64_t)((o * S + i0) * rb), (int32_t)rb,
						      (uint32_t)D, ly->seg,
						      ly->off + (uint64_t)(o * D * rb), (int32_t)rb);
	}
	if (!st)
		st = npu_sched_emit(cc, tiles, ntiles);
	npu_tiles_free(tiles, ntiles);
	return st;
}

npu_status npu_lower_scatter_rows(struct npu_cc *cc, const npu_ir_node *n)
{
	const npu_ir_tensor *x = npu_ir_input(cc->g, n, 0), *r = npu_ir_input(cc->g, n, 1);
	const npu_ir_tensor *u = npu_ir_input(cc->g, n, 2), *y = npu_ir_output(cc->g, n, 0);
	int64_t axis, outer = 1, inner = 1, D, esz;
	struct npu_loc lu, ly;
	bool in_place;
	npu_status st;
	char lbl[96];

	if (!x || !r || !u || !y)
		return npu_fail(NPU_ERR_FORMAT, "npu.ScatterRows needs data, rows and updates");
	npu_ir_node_label(n, lbl, sizeof(lbl));
	esz = (int64_t)npu_dtype_size(x->dtype);
	if (!npu_cc_hw_dtype(x->dtype) || !esz)
		return npu_fail(NPU_ERR_UNSUPPORTED, "npu.ScatterRows (node %s) of %s data", lbl,
				npu_dtype_str(x->dtype));
	if ((st = npu_ir_attr_int(n, "axis", 0, &axis)))
		return st;
	if (axis < 0)
		axis += x->rank;
	npu_ir_axis_sizes(x, (int)axis, &outer, &inner);
	D = x->dims[axis];
	if (D > UINT32_MAX || inner * esz > INT32_MAX / 2 || outer * D * inner * esz > (1ll << 40))
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"npu.ScatterRows (node %s) into %lld rows of %lld elements", lbl,
				(long long)D, (long long)inner);
	if ((st = home_output(cc, n, &ly, &in_place)) || (st = npu_cc_loc(cc, n->inputs[2], &lu)))
		return st;
	if (!npu_ir_numel(r) || !outer || !inner)
		return NPU_OK;		/* no rows: the output is data */
	if (npu_ir_is_const(r))
		return const_rows(cc, n, outer, D, inner, &lu, &ly);
	return runtime_rows(cc, n, outer, D, inner, &lu, &ly);
}
