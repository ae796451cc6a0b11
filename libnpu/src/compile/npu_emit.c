// SPDX-License-Identifier: MIT
/*
 * Code generation: one tile on one worker becomes instructions.  The
 * schedulers (npu_sched.c layer by layer, npu_pipe.c pipelined) decide
 * where and when each tile runs (worker, HBSM buffer, which counters to
 * wait for and signal); this file writes what they decided: the tile's
 * DMAs into HBSM (one DMA for the TPBs of a round that need the same
 * bytes), its unit instructions with their sync, and its GSDU write-back
 * chain.  It decides nothing itself.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_cc.h"
#include "compile/npu_tile.h"

#define CTR_DMA		NPU_CTR_DMA
#define CTR_OPS		NPU_CTR_OPS

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
			if (d[k].src_space == NPU_SPACE_HBSM)
				d[k].src += half;
			else
				d[k].src = shifted(how, t->out_src_seg[k], d[k].src);
			if (d[k].flags & (NPU_GSDU_F_INDEXED | NPU_GSDU_F_DST_INDEXED))
				d[k].index_addr += half;
			d[k].dst = shifted(how, t->out_seg[k], d[k].dst);
		}
		chain = npu_pb_chain(pb, d, t->out_src_seg, t->out_seg, t->nout);
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
