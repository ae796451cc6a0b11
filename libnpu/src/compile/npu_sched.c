// SPDX-License-Identifier: MIT
/*
 * The layer-by-layer schedule: work items (one node's tiles, or DMA) in
 * order, one program (step) each; npu_emit.c writes the instructions.
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
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_cc.h"
#include "compile/npu_lower.h"
#include "compile/npu_tile.h"
#include "npu_debug.h"

#define CCB_DONE	0

/* "Conv conv1": what work item @w runs, for profiles. */
static void work_label(const struct npu_cc *cc, const struct npu_work *w, char *buf,
		       size_t len)
{
	const npu_ir_node *n = w->node >= 0 ? &cc->g->nodes[w->node] : NULL;
	/* A fused attention block is named after its last MatMul. */
	const char *op = n && npu_ir_attr_find(n, NPU_ATTR_ATTN) ? "Attention" : n ? n->op : "";

	if (!n)
		snprintf(buf, len, "copy of a constant output");
	else if (n->name && *n->name)
		snprintf(buf, len, "%s %s", op, n->name);
	else
		snprintf(buf, len, "%s #%d", op, n->src_index);
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

/* NPU_DEBUG=tiles: what the lowering of the current node planned. */
static void say_tiles(const struct npu_cc *cc, const struct npu_tile *tiles, unsigned n)
{
	uint64_t in = 0, out = 0, in_max = 0, out_max = 0;
	unsigned ops[NPU_UNIT_COUNT] = { 0 }, nin_max = 0;
	char lbl[160];
	struct npu_work w = { .node = cc->cur_node };

	for (unsigned i = 0; i < n; i++) {
		uint64_t ti = 0, to = 0;

		for (unsigned k = 0; k < tiles[i].nin; k++)
			ti += npu_twu_count(&tiles[i].in[k].walk) *
			      npu_cc_hw_size(tiles[i].in[k].walk.dtype);
		for (unsigned k = 0; k < tiles[i].nout; k++)
			to += (uint64_t)tiles[i].out[k].rows * tiles[i].out[k].row_bytes;
		for (unsigned k = 0; k < tiles[i].nop; k++)
			if (tiles[i].op[k].unit < NPU_UNIT_COUNT)
				ops[tiles[i].op[k].unit]++;
		in += ti;
		out += to;
		in_max = ti > in_max ? ti : in_max;
		out_max = to > out_max ? to : out_max;
		nin_max = tiles[i].nin > nin_max ? tiles[i].nin : nin_max;
	}
	work_label(cc, &w, lbl, sizeof(lbl));
	npu_debug(NPU_DEBUG_TILES,
		  "%s: %u tiles over %u workers (HBSM budget %u B per tile): DMA in %" PRIu64
		  " B (largest tile %" PRIu64 " B, at most %u inputs), written back %" PRIu64
		  " B (largest %" PRIu64 " B); instructions TCU %u, CVU %u, DTDU %u, CSU %u",
		  lbl, n, cc->spread, cc->hbsm, in, in_max, nin_max, out, out_max,
		  ops[NPU_UNIT_TCU], ops[NPU_UNIT_CVU], ops[NPU_UNIT_DTDU], ops[NPU_UNIT_CSU]);
}

npu_status npu_sched_emit(struct npu_cc *cc, struct npu_tile *tiles, unsigned n)
{
	struct npu_work *w;

	if (!n)
		return NPU_OK;
	if (npu_debug_on(NPU_DEBUG_TILES))
		say_tiles(cc, tiles, n);
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
		tiles[i].out_src_seg = NULL;
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
	if (npu_debug_on(NPU_DEBUG_TILES)) {
		char lbl[160];

		work_label(cc, w, lbl, sizeof(lbl));
		npu_debug(NPU_DEBUG_TILES, "%s: %u DDR-to-DDR DMA instructions", lbl, w->dma.n);
	}
	return NPU_OK;
}

npu_status npu_sched_host(struct npu_cc *cc, struct npu_host_step *h)
{
	struct npu_work *w = new_work(cc);

	if (!w) {
		npu_host_step_free(h);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	w->host = h;
	return NPU_OK;
}

/* Host step @w (its tensors already on the scratch plan) as the model's next step. */
static npu_status host_step(struct npu_cc *cc, struct npu_work *w, const char *label)
{
	struct npu_cmodel *cm = cc->cm;
	struct npu_step *s = realloc(cm->steps, (cm->nsteps + 1) * sizeof(*s));
	const char *what = w->host->ctl ? w->host->node : label;
	char *lab = malloc(strlen(what) + sizeof(" (control)"));

	if (s)
		cm->steps = s;
	if (!s || !lab) {
		free(lab);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	if (w->host->ctl)
		/* "If if_1: else at step 7 (control)": the target is patched in npu_sched_finish(). */
		sprintf(lab, "%s (control)", w->host->node);
	else
		sprintf(lab, "%s (host)", label);
	cm->steps[cm->nsteps++] = (struct npu_step){ .seg = NPU_HOST_SEG, .label = lab,
						     .host = w->host };
	w->host = NULL;
	return NPU_OK;
}

npu_status npu_sched_finish(struct npu_cc *cc)
{
	npu_status st = NPU_OK;
	/* The first step of each work item (control steps' targets are work items). */
	uint32_t *first;

	if (cc->batch > 1)
		return npu_pipe_emit(cc);
	first = calloc(cc->nwork + 1, sizeof(*first));
	if (!first)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (unsigned i = 0; i < cc->nwork && !st; i++) {
		struct npu_work *w = &cc->work[i];
		char label[160];

		first[i] = cc->cm->nsteps;
		work_label(cc, w, label, sizeof(label));
		if (w->host)
			st = host_step(cc, w, label);
		else
			st = w->ntiles ? emit_step(cc, w->tiles, w->ntiles, label) :
					 npu_pb_finish(&w->dma, cc->cm, label);
	}
	first[cc->nwork] = cc->cm->nsteps;
	for (uint32_t i = 0; !st && i < cc->cm->nsteps; i++)
		if (npu_step_is_control(&cc->cm->steps[i])) {
			struct npu_host_step *h = cc->cm->steps[i].host;

			h->target = h->target <= cc->nwork ? first[h->target] : cc->cm->nsteps;
		}
	free(first);
	return st;
}

void npu_sched_free(struct npu_cc *cc)
{
	for (unsigned i = 0; i < cc->nwork; i++) {
		npu_tiles_free(cc->work[i].tiles, cc->work[i].ntiles);
		npu_pb_free(&cc->work[i].dma);
		npu_host_step_free(cc->work[i].host);
	}
	free(cc->work);
	cc->work = NULL;
	cc->nwork = cc->cap_work = 0;
}
