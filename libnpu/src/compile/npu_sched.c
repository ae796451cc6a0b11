// SPDX-License-Identifier: MIT
/*
 * Tiles to instructions.
 *
 * Tiles go round-robin to the partition's workers (logical cluster, TPB);
 * tile i runs on worker i % W in round i / W.  Counters:
 *
 *   TPB counter 0   DMA arrivals at this TPB for HBSM half 0 (the DMA
 *                   signals it remotely); counter 3 the same for half 1
 *                   (counters 4 and 5: buffers 2 and 3 when a pipeline
 *                   with two inputs in flight rotates four quarters)
 *   TPB counter 1   unit instructions finished on this TPB
 *   TPB counter 2   write-backs finished on any TPB of the step (broadcast)
 *   CCB counter 0   write-backs finished (every TPB signals the CCB)
 *
 * A tile's first unit instruction waits for all its DMAs, each later one
 * for the one before; its GSDU waits for the last.
 *
 * Double buffering: lowerings plan a tile in half the HBSM (cc->hbsm);
 * odd rounds use the other half.  So the DMAs of round r only wait until
 * every write-back of round r-2 (the same half) is done, and bring in the
 * next tiles while round r-1 computes.  For that count to mean "all of
 * round r-2", a round's write-backs wait (TPB counter 2) until every
 * write-back of the round before has finished: without it a fast TPB's
 * round r-1 could stand in for a slow TPB's round r-2, whose half the
 * DMA would then overwrite.
 *
 * Arrivals are counted per half: the DMA engines run in order but
 * independently, so a DMA of round r+1 (on one engine) may arrive before
 * one of round r (held up behind other work on the other engine); with
 * one counter, it would complete round r's count early.  Round r+2's DMAs
 * cannot overtake, as they wait for round r's write-backs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_cc.h"

#define CTR_DMA		NPU_CTR_DMA
#define CTR_OPS		NPU_CTR_OPS
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

static uint64_t shifted(const struct npu_emit_tile *how, uint32_t seg, uint64_t off)
{
	for (unsigned k = 0; k < 2; k++)
		if (how->shift_seg[k] != NPU_NO_SEG && seg == how->shift_seg[k])
			off += how->shift[k];
	return off;
}

static bool same_input(const struct npu_tile_in *a, const struct npu_tile_in *b)
{
	return a->seg == b->seg && a->hbsm == b->hbsm && a->dst_row == b->dst_row &&
	       a->dst_step == b->dst_step && a->dst_pitch == b->dst_pitch &&
	       !memcmp(&a->walk, &b->walk, sizeof(a->walk));
}

/*
 * Group identical inputs of the round's tiles.  A DMA's destination is a
 * cluster mask times a TPB mask, so a group is split by the TPB mask each
 * cluster needs: the clusters needing the same TPBs share one DMA, led by
 * the first of their tiles in round order (emitted before the others).
 */
npu_status npu_emit_round(struct npu_emit *e, const struct npu_tile *tiles, unsigned n,
			  const uint32_t *c, const uint32_t *tpb)
{
	unsigned need = n * NPU_TILE_MAX_IN;

	if (need > e->cap_share) {
		void *p = realloc(e->share, need * sizeof(*e->share));

		if (!p)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		e->share = p;
		e->cap_share = need;
	}
	memset(e->share, 0, need * sizeof(*e->share));
	for (unsigned i = 0; i < n; i++)
		for (unsigned k = 0; k < tiles[i].nin; k++) {
			const struct npu_tile_in *in = &tiles[i].in[k];
			uint8_t tm[NPU_HW_MAX_CLUSTERS] = { 0 };
			bool any = false;

			if (e->share[i * NPU_TILE_MAX_IN + k].role != NPU_SHARE_OWN)
				continue;
			tm[c[i]] = (uint8_t)(1u << tpb[i]);
			for (unsigned j = i + 1; j < n; j++)
				for (unsigned l = 0; l < tiles[j].nin; l++)
					if (e->share[j * NPU_TILE_MAX_IN + l].role ==
					    NPU_SHARE_OWN && same_input(in, &tiles[j].in[l])) {
						tm[c[j]] |= (uint8_t)(1u << tpb[j]);
						any = true;
					}
			if (!any)
				continue;
			/* One DMA per distinct TPB mask, led by its first tile. */
			for (unsigned j = i; j < n; j++)
				for (unsigned l = 0; l < tiles[j].nin; l++) {
					struct npu_emit_share *sh = &e->share[j * NPU_TILE_MAX_IN + l];
					uint16_t cm = 0;

					if (sh->role != NPU_SHARE_OWN ||
					    !same_input(in, &tiles[j].in[l]))
						continue;
					for (unsigned q = 0; q < NPU_HW_MAX_CLUSTERS; q++)
						if (tm[q] == tm[c[j]])
							cm |= (uint16_t)(1u << q);
					sh->role = NPU_SHARE_LEAD;
					sh->cluster_mask = cm;
					sh->tpb_mask = tm[c[j]];
					/* The rest of its class is shared. */
					for (unsigned m = j + 1; m < n; m++)
						for (unsigned o = 0; o < tiles[m].nin; o++) {
							struct npu_emit_share *so =
								&e->share[m * NPU_TILE_MAX_IN + o];

							if (so->role == NPU_SHARE_OWN &&
							    (cm >> c[m] & 1) &&
							    same_input(in, &tiles[m].in[o]))
								so->role = NPU_SHARE_SHARED;
						}
					if (sh->cluster_mask == (1u << c[j]) &&
					    sh->tpb_mask == (1u << tpb[j]))
						sh->role = NPU_SHARE_OWN;
				}
		}
	return NPU_OK;
}

npu_status npu_emit_tile(struct npu_emit *e, const struct npu_tile *t,
			 const struct npu_emit_tile *how)
{
	struct npu_pb *pb = e->pb;
	uint32_t w = how->w, c = how->c, tpb = how->tpb, half = how->half;
	uint32_t *arrived = &e->dma[NPU_MAX_BUFS * w + how->buf];
	unsigned ctr_dma = how->buf == 0 ? CTR_DMA : how->buf == 1 ? NPU_CTR_DMA_ODD :
			   NPU_CTR_DMA_MORE + how->buf - 2;
	struct npu_hw_insn *in;
	bool early = false;	/* constant inputs wait only for their half */

	for (unsigned k = 0; k < t->nin && how->const_seg != NPU_NO_SEG; k++)
		if (t->in[k].seg != how->const_seg)
			early = true;
	for (unsigned k = 0; k < t->nin; k++) {
		const struct npu_tile_in *ti = &t->in[k];
		bool weights = early && ti->seg == how->const_seg;
		const struct npu_emit_share *sh = e->share ?
			&e->share[how->slot * NPU_TILE_MAX_IN + k] : NULL;
		uint16_t cm = (uint16_t)(1u << c);
		uint8_t tm = (uint8_t)(1u << tpb);
		unsigned slot = 0;

		if (sh && sh->role == NPU_SHARE_SHARED) {
			/* An earlier tile's DMA brings it here too. */
			(*arrived)++;
			continue;
		}
		if (sh && sh->role == NPU_SHARE_LEAD) {
			cm = sh->cluster_mask;
			tm = sh->tpb_mask;
		}
		in = npu_pb_add(pb, NPU_UNIT_DMA, NPU_DMA_COPY, 0, 0);
		if (!in)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		in->params.dma.engine = e->engine;
		e->engine ^= 1;
		in->opnd[NPU_OPND_SRC0] = ti->walk;
		/* As many elements as the walk, dense or in pitched rows. */
		npu_twu_flat(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM_REMOTE,
			     ti->walk.dtype, ti->hbsm + half, npu_twu_count(&ti->walk));
		if (ti->dst_pitch) {
			struct npu_hw_twu *d = &in->opnd[NPU_OPND_DST];

			npu_twu_lvl(d, 0, ti->dst_row, ti->dst_step ? ti->dst_step :
				    npu_cc_hw_size(ti->walk.dtype));
			npu_twu_lvl(d, 1, (int64_t)(npu_twu_count(&ti->walk) / ti->dst_row),
				    ti->dst_pitch);
		}
		in->opnd[NPU_OPND_DST].cluster_mask = cm;
		in->opnd[NPU_OPND_DST].tpb_mask = tm;
		if (weights) {
			if (how->const_wait)
				wait_on(in, slot++, how->wait_ctr, how->const_wait);
		} else {
			if (how->wait_val)
				wait_on(in, slot++, how->wait_ctr, how->wait_val);
			if (how->wait2_val)
				wait_on(in, slot++, how->wait2_ctr, how->wait2_val);
		}
		in->sync.signal[0].counter = (uint8_t)ctr_dma;
		in->sync.signal[0].flags = NPU_SIGNAL_ENABLE | NPU_SIGNAL_REMOTE;
		in->sync.signal[0].cluster_mask = cm;
		in->sync.signal[0].tpb_mask = tm;
		npu_pb_ddr(pb, npu_pb_index(pb, in), NPU_OPND_SRC0, ti->seg,
			   shifted(how, ti->seg, ti->walk.base));
		(*arrived)++;
	}
	for (unsigned k = 0; k < t->nop; k++) {
		in = npu_pb_add(pb, t->op[k].unit, t->op[k].opcode, 1u << c, 1u << tpb);
		if (!in)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		memcpy(in->opnd, t->op[k].opnd, sizeof(in->opnd));
		for (unsigned o = 0; o < NPU_OPNDS; o++)
			if (in->opnd[o].space == NPU_SPACE_HBSM)
				in->opnd[o].base += half;
		in->params = t->op[k].params;
		if (in->unit == NPU_UNIT_TCU &&
		    in->params.tcu.flags & NPU_TCU_F_PER_CHANNEL)
			in->params.tcu.qscale_addr += half;
		in->repeat_levels = t->op[k].repeat_levels;
		wait_on(in, 0, ctr_dma, *arrived);
		if (e->ops[w])
			wait_on(in, 1, CTR_OPS, e->ops[w]);
		in->sync.signal[0].counter = CTR_OPS;
		in->sync.signal[0].flags = NPU_SIGNAL_ENABLE;
		e->ops[w]++;
	}
	if (t->nout) {
		struct npu_hw_gsdu_desc *d = malloc(t->nout * sizeof(*d));
		uint64_t chain;

		if (!d)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		memcpy(d, t->out, t->nout * sizeof(*d));
		for (uint32_t k = 0; k < t->nout; k++) {
			d[k].src += half;
			d[k].dst = shifted(how, t->out_seg[k], d[k].dst);
		}
		chain = npu_pb_chain(pb, d, t->out_seg, t->out_seg, t->nout);
		free(d);
		in = npu_pb_add(pb, NPU_UNIT_CSU, NPU_CSU_GSDU, 1u << c, 1u << tpb);
		if (!in)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		wait_on(in, 0, CTR_OPS, e->ops[w]);
		wait_on(in, 1, ctr_dma, *arrived);
		if (how->wb_wait)
			wait_on(in, 2, NPU_CTR_WB, how->wb_wait);
		in->sync.signal[0].counter = (uint8_t)how->done_ctr;
		in->sync.signal[0].flags = NPU_SIGNAL_ENABLE | NPU_SIGNAL_CCB;
		in->sync.signal[1].counter = NPU_CTR_WB;
		in->sync.signal[1].flags = NPU_SIGNAL_ENABLE | NPU_SIGNAL_REMOTE;
		in->sync.signal[1].cluster_mask = how->wb_clusters;
		in->sync.signal[1].tpb_mask = how->wb_tpbs;
		npu_pb_gsdu(pb, npu_pb_index(pb, in), chain);
	}
	return pb->oom ? npu_fail(NPU_ERR_NO_MEMORY, "out of memory") : NPU_OK;
}

/* "Conv conv1": what work item @w runs, for profiles. */
static void work_label(const struct npu_cc *cc, const struct npu_work *w, char *buf,
		       size_t len)
{
	const npu_ir_node *n = w->node >= 0 ? &cc->g->nodes[w->node] : NULL;

	if (!n)
		snprintf(buf, len, "copy of a constant output");
	else if (n->name && *n->name)
		snprintf(buf, len, "%s %s", n->op, n->name);
	else
		snprintf(buf, len, "%s #%d", n->op, n->src_index);
}

/* One node's tiles as one program over every worker of the partition. */
static npu_status emit_step(struct npu_cc *cc, const struct npu_tile *tiles, unsigned n,
			    const char *label)
{
	uint32_t W = cc->workers;
	uint32_t done[2] = { 0, 0 };	/* write-backs through rounds r-2, r-1 */
	struct npu_emit e = { 0 };
	struct npu_pb pb;
	npu_status st = NPU_OK;

	e.dma = calloc(NPU_MAX_BUFS * W, sizeof(*e.dma));
	e.ops = calloc(W, sizeof(*e.ops));
	if (!e.dma || !e.ops) {
		free(e.dma);
		free(e.ops);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	npu_pb_init(&pb);
	e.pb = &pb;
	for (unsigned r0 = 0; r0 < n && !st; r0 += W) {
		unsigned r1 = r0 + W < n ? r0 + W : n;
		struct npu_emit_tile how = {
			.half = (r0 / W) & 1 ? cc->hbsm : 0,
			.buf = (r0 / W) & 1,
			.wait_ctr = CCB_DONE, .wait_val = done[0],
			.done_ctr = CCB_DONE,
			.wb_clusters = (uint16_t)((1u << cc->nclusters) - 1),
			.wb_tpbs = (uint8_t)((1u << cc->tpbs) - 1),
			.wb_wait = done[1],
			.shift_seg = { NPU_NO_SEG, NPU_NO_SEG },
			.const_seg = NPU_NO_SEG,
		};

		uint32_t cs[NPU_HW_MAX_CLUSTERS * NPU_HW_MAX_TPBS_PER_CLUSTER];
		uint32_t ts[NPU_HW_MAX_CLUSTERS * NPU_HW_MAX_TPBS_PER_CLUSTER];

		for (unsigned i = r0; i < r1; i++) {
			cs[i - r0] = i % W / cc->tpbs;
			ts[i - r0] = i % W % cc->tpbs;
		}
		st = npu_emit_round(&e, &tiles[r0], r1 - r0, cs, ts);
		for (unsigned i = r0; i < r1 && !st; i++) {
			how.w = i % W;
			how.c = how.w / cc->tpbs;
			how.tpb = how.w % cc->tpbs;
			how.slot = i - r0;
			st = npu_emit_tile(&e, &tiles[i], &how);
		}
		done[0] = done[1];
		for (unsigned i = r0; i < r1; i++)
			done[1] += tiles[i].nout ? 1 : 0;
	}
	if (!st)
		st = npu_pb_finish(&pb, cc->cm, label);
	npu_pb_free(&pb);
	free(e.dma);
	free(e.ops);
	free(e.share);
	return st;
}

static struct npu_work *new_work(struct npu_cc *cc)
{
	struct npu_work *w;

	if (cc->nwork == cc->cap_work) {
		unsigned cap = cc->cap_work ? 2 * cc->cap_work : 64;

		w = realloc(cc->work, cap * sizeof(*w));
		if (!w)
			return NULL;
		cc->work = w;
		cc->cap_work = cap;
	}
	w = &cc->work[cc->nwork++];
	memset(w, 0, sizeof(*w));
	w->node = cc->cur_node;
	return w;
}

npu_status npu_sched_emit(struct npu_cc *cc, struct npu_tile *tiles, unsigned n)
{
	struct npu_work *w;

	if (!n)
		return NPU_OK;
	w = new_work(cc);
	if (!w || !(w->tiles = malloc(n * sizeof(*tiles)))) {
		if (w)
			cc->nwork--;
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	memcpy(w->tiles, tiles, n * sizeof(*tiles));
	w->ntiles = n;
	for (unsigned i = 0; i < n; i++) {
		tiles[i].out = NULL;
		tiles[i].out_seg = NULL;
		tiles[i].nout = tiles[i].cap_out = 0;
	}
	return NPU_OK;
}

npu_status npu_sched_dma(struct npu_cc *cc, struct npu_pb *pb)
{
	struct npu_work *w;

	if (pb->oom) {
		npu_pb_free(pb);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	if (!pb->n) {
		npu_pb_free(pb);
		return NPU_OK;
	}
	w = new_work(cc);
	if (!w) {
		npu_pb_free(pb);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	w->dma = *pb;
	memset(pb, 0, sizeof(*pb));
	return NPU_OK;
}

npu_status npu_sched_finish(struct npu_cc *cc)
{
	npu_status st = NPU_OK;

	if (cc->batch > 1)
		return npu_pipe_emit(cc);
	for (unsigned i = 0; i < cc->nwork && !st; i++) {
		struct npu_work *w = &cc->work[i];
		char label[160];

		work_label(cc, w, label, sizeof(label));
		st = w->ntiles ? emit_step(cc, w->tiles, w->ntiles, label) :
				 npu_pb_finish(&w->dma, cc->cm, label);
	}
	return st;
}

void npu_sched_free(struct npu_cc *cc)
{
	for (unsigned i = 0; i < cc->nwork; i++) {
		npu_tiles_free(cc->work[i].tiles, cc->work[i].ntiles);
		npu_pb_free(&cc->work[i].dma);
	}
	free(cc->work);
	cc->work = NULL;
	cc->nwork = cc->cap_work = 0;
}
