// SPDX-License-Identifier: MIT
/*
 * Tiles to instructions.
 *
 * Tiles go round-robin to the partition's workers (logical cluster, TPB);
 * tile i runs on worker i % W in round i / W.  Counters:
 *
 *   TPB counter 0   DMA arrivals at this TPB (the DMA signals it remotely)
 *   TPB counter 1   unit instructions finished on this TPB
 *   CCB counter 0   GSDU write-backs finished (every TPB signals the CCB)
 *
 * A tile's first unit instruction waits for all its DMAs, each later one
 * for the one before; its GSDU waits for the last.
 *
 * Double buffering: lowerings plan a tile in half the HBSM (cc->hbsm);
 * odd rounds use the other half.  So the DMAs of round r only wait until
 * every write-back of round r-2 (the same half) is done, and bring in the
 * next tiles while round r-1 computes.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_cc.h"

#define CTR_DMA		0
#define CTR_OPS		1
#define CCB_DONE	0

void npu_twu_flat(struct npu_hw_twu *w, unsigned space, unsigned dtype,
		  uint64_t base, uint64_t n)
{
	memset(w, 0, sizeof(*w));
	w->base = base;
	w->space = (uint8_t)space;
	w->dtype = (uint8_t)dtype;
	npu_twu_lvl(w, 0, (int64_t)n, (int64_t)npu_cc_hw_size(dtype));
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

npu_status npu_tile_out(struct npu_tile *t, uint32_t hbsm, uint32_t rows,
			uint32_t row_bytes, int32_t src_stride, uint32_t seg,
			uint64_t off, int32_t dst_stride)
{
	struct npu_hw_gsdu_desc *d;

	if (t->nout == t->cap_out) {
		uint32_t cap = t->cap_out ? 2 * t->cap_out : 8;
		void *a = realloc(t->out, cap * sizeof(*t->out));
		void *b = a ? realloc(t->out_seg, cap * sizeof(*t->out_seg)) : NULL;

		if (a)
			t->out = a;
		if (!a || !b)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		t->out_seg = b;
		t->cap_out = cap;
	}
	d = &t->out[t->nout];
	memset(d, 0, sizeof(*d));
	d->src_space = NPU_SPACE_HBSM;
	d->dst_space = NPU_SPACE_DDR;
	d->src = hbsm;
	d->dst = off;
	d->rows = rows;
	d->row_bytes = row_bytes;
	d->src_stride = src_stride;
	d->dst_stride = dst_stride;
	t->out_seg[t->nout++] = seg;
	return NPU_OK;
}

void npu_tiles_free(struct npu_tile *tiles, unsigned n)
{
	for (unsigned i = 0; tiles && i < n; i++) {
		free(tiles[i].out);
		free(tiles[i].out_seg);
	}
	free(tiles);
}

static void wait_on(struct npu_hw_insn *in, unsigned slot, unsigned ctr, uint32_t value)
{
	in->sync.wait[slot].counter = (uint8_t)ctr;
	in->sync.wait[slot].flags = NPU_WAIT_ENABLE;
	in->sync.wait[slot].value = value;
}

npu_status npu_sched_emit(struct npu_cc *cc, struct npu_tile *tiles, unsigned n)
{
	uint32_t W = cc->workers;
	uint32_t *dma = calloc(W, sizeof(*dma)), *ops = calloc(W, sizeof(*ops));
	uint32_t done[2] = { 0, 0 }, engine = 0;	/* write-backs through rounds r-2, r-1 */
	struct npu_pb pb;
	npu_status st = NPU_OK;

	if (!dma || !ops) {
		free(dma);
		free(ops);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	npu_pb_init(&pb);
	for (unsigned r0 = 0; r0 < n && !st; r0 += W) {
		unsigned r1 = r0 + W < n ? r0 + W : n;
		uint32_t half = (r0 / W) & 1 ? cc->hbsm : 0;

		for (unsigned i = r0; i < r1 && !st; i++) {
			const struct npu_tile *t = &tiles[i];
			uint32_t w = i % W, c = w / cc->tpbs, tpb = w % cc->tpbs;
			struct npu_hw_insn *in;

			for (unsigned k = 0; k < t->nin; k++) {
				const struct npu_tile_in *ti = &t->in[k];

				in = npu_pb_add(&pb, NPU_UNIT_DMA, NPU_DMA_COPY, 0, 0);
				if (!in)
					break;
				in->params.dma.engine = engine;
				engine ^= 1;
				in->opnd[NPU_OPND_SRC0] = ti->walk;
				/* Dense in HBSM: as many elements as the walk. */
				npu_twu_flat(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM_REMOTE,
					     ti->walk.dtype, ti->hbsm + half, npu_twu_count(&ti->walk));
				in->opnd[NPU_OPND_DST].cluster_mask = (uint16_t)(1u << c);
				in->opnd[NPU_OPND_DST].tpb_mask = (uint8_t)(1u << tpb);
				if (done[0])
					wait_on(in, 0, CCB_DONE, done[0]);
				in->sync.signal[0].counter = CTR_DMA;
				in->sync.signal[0].flags = NPU_SIGNAL_ENABLE | NPU_SIGNAL_REMOTE;
				in->sync.signal[0].cluster_mask = (uint16_t)(1u << c);
				in->sync.signal[0].tpb_mask = (uint8_t)(1u << tpb);
				npu_pb_ddr(&pb, npu_pb_index(&pb, in), NPU_OPND_SRC0, ti->seg,
					   ti->walk.base);
				dma[w]++;
			}
			for (unsigned k = 0; k < t->nop; k++) {
				in = npu_pb_add(&pb, t->op[k].unit, t->op[k].opcode, 1u << c, 1u << tpb);
				if (!in)
					break;
				memcpy(in->opnd, t->op[k].opnd, sizeof(in->opnd));
				for (unsigned o = 0; o < NPU_OPNDS; o++)
					if (in->opnd[o].space == NPU_SPACE_HBSM)
						in->opnd[o].base += half;
				if (in->unit == NPU_UNIT_TCU &&
				    in->params.tcu.flags & NPU_TCU_F_PER_CHANNEL)
					in->params.tcu.qscale_addr += half;
				in->params = t->op[k].params;
				in->repeat_levels = t->op[k].repeat_levels;
				wait_on(in, 0, CTR_DMA, dma[w]);
				if (ops[w])
					wait_on(in, 1, CTR_OPS, ops[w]);
				in->sync.signal[0].counter = CTR_OPS;
				in->sync.signal[0].flags = NPU_SIGNAL_ENABLE;
				ops[w]++;
			}
			if (t->nout) {
				uint64_t chain;

				for (uint32_t d = 0; d < t->nout; d++)
					t->out[d].src += half;
				chain = npu_pb_chain(&pb, t->out, t->out_seg, t->out_seg, t->nout);

				in = npu_pb_add(&pb, NPU_UNIT_CSU, NPU_CSU_GSDU, 1u << c, 1u << tpb);
				if (!in)
					break;
				wait_on(in, 0, CTR_OPS, ops[w]);
				wait_on(in, 1, CTR_DMA, dma[w]);
				in->sync.signal[0].counter = CCB_DONE;
				in->sync.signal[0].flags = NPU_SIGNAL_ENABLE | NPU_SIGNAL_CCB;
				npu_pb_gsdu(&pb, npu_pb_index(&pb, in), chain);
			}
		}
		done[0] = done[1];
		for (unsigned i = r0; i < r1; i++)
			done[1] += tiles[i].nout ? 1 : 0;
	}
	if (!st)
		st = npu_pb_finish(&pb, cc->cm);
	npu_pb_free(&pb);
	free(dma);
	free(ops);
	return st;
}
