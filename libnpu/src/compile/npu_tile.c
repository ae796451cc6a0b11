// SPDX-License-Identifier: MIT
/*
 * Building tiles: walker descriptors for DDR and HBSM operands, the HBSM
 * row pitch that spreads rows over the banks, and a tile's write-back
 * list.  What a tile is: npu_cc.h.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_cc.h"
#include "compile/npu_tile.h"

void npu_twu_flat(struct npu_hw_twu *w, unsigned space, unsigned dtype,
		  uint64_t base, uint64_t n)
{
	memset(w, 0, sizeof(*w));
	w->base = base;
	w->space = (uint8_t)space;
	w->dtype = (uint8_t)dtype;
	npu_twu_lvl(w, 0, (int64_t)n, (int64_t)npu_cc_hw_size(dtype));
}

uint32_t npu_hbsm_pitch(uint64_t bytes)
{
	uint64_t blocks = (bytes + 31) / 32;

	if (bytes < 32)
		return (uint32_t)bytes;
	return (uint32_t)((blocks | 1) * 32);
}

uint64_t npu_twu_count(const struct npu_hw_twu *w)
{
	uint64_t cnt = 1;

	for (unsigned l = 0; l < w->nlevels; l++) {
		const struct npu_hw_twu_level *lv = &w->level[l];

		cnt *= lv->step ? (uint64_t)((lv->final - lv->initial) / lv->step + 1) :
		       (uint64_t)lv->final;
	}
	return cnt;
}

void npu_twu_lvl(struct npu_hw_twu *w, unsigned l, int64_t count, int64_t stride)
{
	if (stride) {
		w->level[l].initial = 0;
		w->level[l].step = (int32_t)stride;
		w->level[l].final = (int32_t)(stride * (count - 1));
	} else {
		/* A broadcast level: step 0, final = count. */
		w->level[l].initial = 0;
		w->level[l].step = 0;
		w->level[l].final = (int32_t)count;
	}
	if (l + 1 > w->nlevels)
		w->nlevels = (uint8_t)(l + 1);
}

void npu_tile_block_in(struct npu_tile_in *ti, uint32_t seg, unsigned dtype, uint64_t base,
		       int64_t r, int64_t rs, int64_t c, int64_t cs, uint32_t h)
{
	unsigned sz = npu_cc_hw_size(dtype);

	memset(ti, 0, sizeof(*ti));
	ti->seg = seg;
	ti->hbsm = h;
	ti->walk.space = NPU_SPACE_DDR;
	ti->walk.dtype = (uint8_t)dtype;
	ti->walk.base = base;
	if (r == 1 || c == 1 || llabs(cs) <= llabs(rs)) {
		npu_twu_lvl(&ti->walk, 0, c, cs);
		npu_twu_lvl(&ti->walk, 1, r, rs);
	} else {
		npu_twu_lvl(&ti->walk, 0, r, rs);
		npu_twu_lvl(&ti->walk, 1, c, cs);
		ti->dst_row = (uint32_t)r;
		ti->dst_step = (uint32_t)(c * sz);
		ti->dst_pitch = sz;
	}
}

/* Room for one more write-back descriptor: a zeroed one, NULL when out of memory. */
static struct npu_hw_gsdu_desc *new_out(struct npu_tile *t, uint32_t seg, uint32_t src_seg)
{
	struct npu_hw_gsdu_desc *d;

	if (t->nout == t->cap_out) {
		uint32_t cap = t->cap_out ? 2 * t->cap_out : 8;
		void *a = realloc(t->out, cap * sizeof(*t->out));
		void *b = a ? realloc(t->out_seg, cap * sizeof(*t->out_seg)) : NULL;
		void *c = b ? realloc(t->out_src_seg, cap * sizeof(*t->out_src_seg)) : NULL;

		if (a)
			t->out = a;
		if (b)
			t->out_seg = b;
		if (!a || !b || !c)
			return NULL;
		t->out_src_seg = c;
		t->cap_out = cap;
	}
	d = &t->out[t->nout];
	memset(d, 0, sizeof(*d));
	t->out_seg[t->nout] = seg;
	t->out_src_seg[t->nout++] = src_seg;
	return d;
}

npu_status npu_tile_out(struct npu_tile *t, uint32_t hbsm, uint32_t rows,
			uint32_t row_bytes, int32_t src_stride, uint32_t seg,
			uint64_t off, int32_t dst_stride)
{
	struct npu_hw_gsdu_desc *d = new_out(t, seg, NPU_NO_SEG);

	if (!d)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	d->src_space = NPU_SPACE_HBSM;
	d->dst_space = NPU_SPACE_DDR;
	d->src = hbsm;
	d->dst = off;
	d->rows = rows;
	d->row_bytes = row_bytes;
	d->src_stride = src_stride;
	d->dst_stride = dst_stride;
	return NPU_OK;
}

npu_status npu_tile_gather(struct npu_tile *t, uint32_t idx_hbsm, uint32_t rows,
			   uint32_t row_bytes, uint32_t src_seg, uint64_t src_off,
			   int32_t src_stride, uint32_t limit, uint32_t seg, uint64_t off)
{
	struct npu_hw_gsdu_desc *d = new_out(t, seg, src_seg);

	if (!d)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	d->flags = NPU_GSDU_F_INDEXED;
	d->src_space = NPU_SPACE_DDR;
	d->dst_space = NPU_SPACE_DDR;
	d->src = src_off;
	d->dst = off;
	d->rows = rows;
	d->row_bytes = row_bytes;
	d->src_stride = src_stride;
	d->dst_stride = (int32_t)row_bytes;
	d->index_addr = idx_hbsm;
	d->index_limit = limit;
	return NPU_OK;
}

npu_status npu_tile_scatter(struct npu_tile *t, uint32_t idx_hbsm, uint32_t rows,
			    uint32_t row_bytes, uint32_t src_seg, uint64_t src_off,
			    int32_t src_stride, uint32_t limit, uint32_t seg, uint64_t off,
			    int32_t dst_stride)
{
	struct npu_hw_gsdu_desc *d = new_out(t, seg, src_seg);

	if (!d)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	d->flags = NPU_GSDU_F_DST_INDEXED;
	d->src_space = NPU_SPACE_DDR;
	d->dst_space = NPU_SPACE_DDR;
	d->src = src_off;
	d->dst = off;
	d->rows = rows;
	d->row_bytes = row_bytes;
	d->src_stride = src_stride;
	d->dst_stride = dst_stride;
	d->index_addr = idx_hbsm;
	d->index_limit = limit;
	return NPU_OK;
}

void npu_tiles_free(struct npu_tile *tiles, unsigned n)
{
	for (unsigned i = 0; tiles && i < n; i++) {
		free(tiles[i].out);
		free(tiles[i].out_seg);
		free(tiles[i].out_src_seg);
	}
	free(tiles);
}

uint64_t npu_tile_weight_cols(uint64_t n, uint64_t cols, uint64_t mtiles, uint64_t rows,
			      uint32_t workers, unsigned per_worker)
{
	/* Rows below which a TCU block reads weights faster than it computes
	 * on them (cycle-model.md: 8-row array, WGT_BW a quarter of DDR). */
	const uint64_t stream_rows = 24;
	uint64_t split, want;

	if (!mtiles || mtiles >= workers)
		return cols;
	split = (workers + mtiles - 1) / mtiles;
	if (rows <= stream_rows)
		split *= per_worker;
	want = (n + split - 1) / split;
	want = (want + 15) & ~15ull;
	return want < cols ? want : cols;
}
