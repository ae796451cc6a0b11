// SPDX-License-Identifier: MIT
/*
 * Scheduling in space and time: a batch of inputs pipelined through stages.
 *
 * The work items (one per lowered node, in graph order) are cut into S
 * contiguous stages of balanced cost.  Seed 002's cost model
 * (plan/npu_plan.c) gives each stage its number of clusters (all their TPBs) and places
 * them banded on the partition's mesh of logical clusters, so consecutive
 * stages sit side by side and their traffic stays local.  One program then
 * runs B inputs: stage s works on input b while stage s+1 works on input
 * b-1, each on its own TPBs.  Batch element b has its own copy of the I/O
 * and scratch memory (offset b * stride), so inputs never share a buffer.
 *
 * A stage may keep M inputs in flight (M = 1 or 2, the profile chooses):
 * it runs them as a group, each work item for every input of the group
 * before the next item, so while one input waits for its previous item's
 * write-backs, the other's loads and compute fill the gap.  Tiles are
 * then planned in a quarter of the HBSM and rounds rotate through four
 * buffers, so each input of the pair still double-buffers.
 *
 * Synchronization uses one CCB counter per stage, C_s, counting the
 * stage's completions (tile write-backs and DMA-only moves).  Write-backs
 * finish round by round in emission order (each round's wait for the one
 * before, through TPB counter NPU_CTR_WB), so C_s >= n means "the first n
 * completions emitted for the stage are done", and a wait names a count:
 *
 *   - a round's activation DMAs wait until the same input's previous item
 *     in the stage is done (E(k-1, b), the count once it was emitted) and
 *     its HBSM half is free (the last round in that half wrote back;
 *     halves alternate round by round across items and inputs);
 *   - its weight DMAs (constant segment) wait only for the half;
 *   - a stage's first item reads only earlier stages' outputs (each input
 *     has its own scratch): it waits for C_{s-1} >= E(last item of s-1, b),
 *     the previous stage finished input b; by induction so did every
 *     earlier one, so skip connections need no more.
 *
 * DMA-only items wait for everything emitted before them in the stage.
 * Within an item, rounds of tiles double-buffer the HBSM as in
 * npu_sched.c, over the stage's own TPBs.
 *
 * Emission order keeps the in-order DMA engines and TPB units free of
 * deadlock: wave t holds stage s's work on group t - s, each stage's items
 * in order.  Every wait then names completions of instructions emitted
 * earlier.  Within a wave the stages' items are merged by where they start
 * as a share of their stage's cost, so the shared in-order DMA queues hold
 * them roughly in the order they can run: a stage with many small items
 * then no longer holds up the next input of a stage with a few big ones.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_cc.h"
#include "compile/npu_lower.h"
#include "compile/npu_tile.h"
#include "compile/npu_view.h"
#include "plan/npu_plan.h"

#define MAX_STAGES	30	/* CCB counters, one per stage */

struct stage {
	unsigned w0, w1;	/* work items [w0, w1) */
	unsigned first, n;	/* its workers: wk[first .. first + n) */
	uint16_t clusters;	/* its logical clusters (all their TPBs) */
	double cost;
	double out_bytes;
	/*
	 * While emitting one program: the HBSM buffer the stage's next round
	 * uses (rounds rotate across work items and inputs), and per buffer
	 * C_s once the last round in it has written back (it is free then).
	 */
	unsigned half;
	uint32_t half_free[NPU_MAX_BUFS];
	unsigned next_worker;	/* where the next round's first tile goes */
	uint32_t emitted;	/* completions emitted so far (C_s once done) */
};

struct pipe {
	struct npu_cc *cc;
	struct stage st[MAX_STAGES];
	unsigned S;
	uint32_t *count;	/* per work item: its completions per input */
	double *cost;		/* per work item */
	uint32_t *wk;		/* worker ids (cluster * tpbs + tpb) by stage */
	unsigned group;		/* inputs in flight in a stage, interleaved */
	uint32_t *end_of;	/* per stage x input: C_s once its last item is done */
	unsigned B;		/* inputs of the program being emitted */
};

static int64_t dim(const npu_ir_graph *g, int t, int d)
{
	const npu_ir_tensor *x;

	if (t < 0 || t >= g->n_tensors)
		return 1;
	x = &g->tensors[t];
	if (d < 0)
		d += x->rank;
	return d >= 0 && d < x->rank ? x->dims[d] : 1;
}

double npu_node_flops(const npu_ir_graph *g, int node)
{
	const npu_ir_node *n;
	double out = 0;
	int w = -1, a = -1;

	if (node < 0 || node >= g->n_nodes)
		return 0;
	n = &g->nodes[node];
	for (int i = 0; i < n->n_outputs; i++)
		if (n->outputs[i] >= 0)
			out += (double)npu_ir_numel(&g->tensors[n->outputs[i]]);
	if (npu_ir_attr_find(n, NPU_ATTR_ATTN)) {
		/* Fused attention: Q K^T and P V, out = every Y element. */
		struct npu_lview q, k;
		double rows = 1;

		if (npu_attn_view(n, "npu_attn_q", n->inputs[0], &q) ||
		    npu_attn_view(n, "npu_attn_k", n->inputs[1], &k))
			return out;
		for (int d = 0; d < q.rank - 1; d++)
			rows *= (double)q.size[d];
		/* rows x Sk x (D + Dv) multiply-adds; Dv = out / rows */
		return 2 * (double)k.size[k.rank - 1] * (rows * (double)q.size[q.rank - 1] + out);
	}
	if (!strcmp(n->op, "Conv") || !strcmp(n->op, "ConvInteger"))
		w = n->n_inputs > 1 ? n->inputs[1] : -1;
	else if (!strcmp(n->op, "QLinearConv"))
		w = n->n_inputs > 3 ? n->inputs[3] : -1;
	else if (!strcmp(n->op, "MatMul") || !strcmp(n->op, "MatMulInteger") ||
		 !strcmp(n->op, "QLinearMatMul") || !strcmp(n->op, "Gemm"))
		a = n->inputs[0];
	if (w >= 0) {
		double cout = (double)dim(g, w, 0);

		return 2 * out * (double)npu_ir_numel(&g->tensors[w]) / (cout > 0 ? cout : 1);
	}
	if (a >= 0) {
		int64_t trans = 0;

		if (!strcmp(n->op, "Gemm"))
			npu_ir_attr_int(n, "transA", 0, &trans);
		return 2 * out * (double)dim(g, a, trans ? 0 : -1);
	}
	return out;
}

/* Completions of work item @w per input, and the bytes it writes. */
static uint32_t completions(const struct npu_work *w, double *bytes)
{
	uint32_t c = 0;

	*bytes = 0;
	if (!w->ntiles) {
		for (uint32_t i = 0; i < w->dma.n; i++) {
			const struct npu_hw_twu *d = &w->dma.insns[i].opnd[NPU_OPND_DST];

			*bytes += (double)npu_twu_count(d) * npu_cc_hw_size(d->dtype);
		}
		return w->dma.n;
	}
	for (unsigned i = 0; i < w->ntiles; i++) {
		const struct npu_tile *t = &w->tiles[i];

		for (uint32_t k = 0; k < t->nout; k++)
			*bytes += (double)t->out[k].rows * t->out[k].row_bytes;
		c += t->nout ? 1 : 0;
	}
	return c;
}

/* Can the items be cut into at most @S runs of cost <= @cap? */
static unsigned cut(const double *cost, unsigned n, double cap, unsigned *ends)
{
	unsigned runs = 0;
	double sum = 0;

	for (unsigned i = 0; i < n; i++) {
		if (i && sum + cost[i] > cap) {
			if (ends)
				ends[runs] = i;
			runs++;
			sum = 0;
		}
		sum += cost[i];
	}
	if (ends)
		ends[runs] = n;
	return runs + 1;
}

/* Contiguous stages minimizing the largest stage cost (bisection). */
static void make_stages(struct pipe *p, unsigned S)
{
	struct npu_cc *cc = p->cc;
	unsigned ends[MAX_STAGES + 1];
	double lo = 0, hi = 0;

	for (unsigned i = 0; i < cc->nwork; i++) {
		hi += p->cost[i];
		if (p->cost[i] > lo)
			lo = p->cost[i];
	}
	for (int it = 0; it < 100 && hi - lo > 1e-9 * hi; it++) {
		double mid = (lo + hi) / 2;

		if (cut(p->cost, cc->nwork, mid, NULL) <= S)
			hi = mid;
		else
			lo = mid;
	}
	p->S = cut(p->cost, cc->nwork, hi, ends);
	for (unsigned s = 0; s < p->S; s++) {
		struct stage *st = &p->st[s];

		st->w0 = s ? ends[s - 1] : 0;
		st->w1 = ends[s];
	}
}

/*
 * Seed 002: clusters per stage and their banded placement on the mesh.
 * A stage gets whole clusters, so the TPBs that share its counters are a
 * cluster mask times every TPB (write-backs signal them all at once).
 */
static npu_status place(struct pipe *p)
{
	struct npu_cc *cc = p->cc;
	struct npu_plan_layer *layers = calloc(p->S, sizeof(*layers));
	struct npu_plan_mapping *map = calloc(1, sizeof(*map));
	unsigned *usable = calloc(cc->nclusters, sizeof(*usable));
	unsigned counts[MAX_STAGES];
	struct npu_plan_machine m = { 0 };
	npu_status st;

	if (!layers || !map || !usable) {
		st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	/* Logical clusters on a near-square virtual mesh, row-major. */
	m.mesh_w = 1;
	while (m.mesh_w * m.mesh_w < cc->nclusters)
		m.mesh_w++;
	m.mesh_h = (cc->nclusters + m.mesh_w - 1) / m.mesh_w;
	for (unsigned c = 0; c < cc->nclusters; c++)
		usable[c] = c;
	m.usable = usable;
	m.n_usable = cc->nclusters;
	m.cores = cc->nclusters;
	m.cores_per_node = 1;
	m.core_flops = cc->tpbs * 2.0 * NPU_M100_TCU_ROWS * NPU_M100_TCU_COLS * NPU_M100_TCU_DOT *
		       NPU_M100_CLOCK_MHZ * 1e6;
	m.buffer_bytes = cc->tpbs * 64.0 * 1024;
	m.sram_bytes = cc->tpbs * (double)cc->nbufs * cc->hbsm;
	m.link_bw = (double)NPU_M100_LINK_BYTES_PER_CYCLE * NPU_M100_CLOCK_MHZ * 1e6;
	m.offchip_bw = (double)NPU_M100_DDR_BYTES_PER_CYCLE * NPU_M100_CLOCK_MHZ * 1e6;
	for (unsigned s = 0; s < p->S; s++) {
		snprintf(layers[s].name, sizeof(layers[s].name), "stage%u", s);
		layers[s].flops = p->st[s].cost;
		/* Weights stream from DDR with each tile: none stay resident. */
		layers[s].weight_bytes = 0;
		layers[s].act_bytes = p->st[s].out_bytes;
	}
	st = npu_plan_choose_cores(layers, p->S, &m, counts, NULL);
	if (!st)
		st = npu_plan_place(counts, p->S, &m, NPU_PLAN_BANDED, 0, map);
	if (st) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", npu_last_error());
		st = npu_fail(NPU_ERR_INTERNAL, "pipelined schedule: %s", msg);
		goto out;
	}
	for (unsigned s = 0, k = 0, w = 0; s < p->S; s++) {
		p->st[s].first = w;
		p->st[s].n = counts[s] * cc->tpbs;
		for (unsigned j = 0; j < counts[s]; j++, k++) {
			unsigned c = map->node[k];

			p->st[s].clusters |= (uint16_t)(1u << c);
			for (unsigned t = 0; t < cc->tpbs; t++)
				p->wk[w++] = c * cc->tpbs + t;
		}
	}
out:
	free(layers);
	free(map);
	free(usable);
	return st;
}

static void wait_ccb(struct npu_hw_insn *in, unsigned slot, unsigned ctr, uint32_t v)
{
	in->sync.wait[slot].counter = (uint8_t)ctr;
	in->sync.wait[slot].flags = NPU_WAIT_ENABLE;
	in->sync.wait[slot].value = v;
}

/*
 * Work item @k (global index) of stage @s for batch element @elem, the
 * @b-th element of this program (counters start at zero in each program).
 */
static npu_status emit_item(struct pipe *p, struct npu_emit *e, unsigned s, unsigned k,
			    unsigned b, unsigned elem)
{
	struct npu_cc *cc = p->cc;
	struct stage *st = &p->st[s];
	const struct npu_work *w = &cc->work[k];
	uint32_t base = st->emitted;
	uint32_t prev = 0, done[2] = { 0, 0 };
	/*
	 * The data: the same input's previous item in this stage; the
	 * stage's first item reads only earlier stages' outputs (each input
	 * has its own scratch), which the wait for the previous stage covers.
	 */
	uint32_t data = k == st->w0 ? 0 : p->end_of[s * p->B + b];
	uint32_t shift_seg[2] = { cc->seg_scratch, cc->seg_io };
	uint64_t shift[2] = { elem * cc->scratch_stride, elem * cc->io_stride };
	npu_status rc = NPU_OK;

	if (k == st->w0 && s > 0)
		prev = p->end_of[(s - 1) * p->B + b];
	if (!w->ntiles) {
		for (uint32_t i = 0; i < w->dma.n; i++) {
			struct npu_hw_insn *in = npu_pb_copy(e->pb, &w->dma, i, shift_seg, shift);
			unsigned slot = 0;

			if (!in)
				return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
			if (base)
				wait_ccb(in, slot++, s, base);
			if (prev)
				wait_ccb(in, slot++, s - 1, prev);
			in->sync.signal[0].counter = (uint8_t)s;
			in->sync.signal[0].flags = NPU_SIGNAL_ENABLE | NPU_SIGNAL_CCB;
			/* Keep the stage's NPU_CTR_WB equal to C_s. */
			in->sync.signal[1].counter = NPU_CTR_WB;
			in->sync.signal[1].flags = NPU_SIGNAL_ENABLE | NPU_SIGNAL_REMOTE;
			in->sync.signal[1].cluster_mask = st->clusters;
			in->sync.signal[1].tpb_mask = (uint8_t)((1u << cc->tpbs) - 1);
		}
		st->emitted += p->count[k];
		p->end_of[s * p->B + b] = st->emitted;
		return NPU_OK;
	}
	for (unsigned r0 = 0; r0 < w->ntiles && !rc; r0 += st->n) {
		unsigned r1 = r0 + st->n < w->ntiles ? r0 + st->n : w->ntiles;
		unsigned h = st->half;
		uint32_t free_at = st->half_free[h];
		struct npu_emit_tile how = {
			.half = h * cc->hbsm,
			.buf = h,
			.wait_ctr = s,
			.wait_val = data > free_at ? data : free_at,
			.wait2_ctr = s ? s - 1 : 0, .wait2_val = prev,
			.const_seg = cc->seg_const, .const_wait = free_at,
			.done_ctr = s,
			.wb_clusters = st->clusters,
			.wb_tpbs = (uint8_t)((1u << cc->tpbs) - 1),
			.wb_wait = base + done[1],
			.shift_seg = { shift_seg[0], shift_seg[1] },
			.shift = { shift[0], shift[1] },
		};

		uint32_t cs[NPU_HW_MAX_CLUSTERS * NPU_HW_MAX_TPBS_PER_CLUSTER];
		uint32_t ts[NPU_HW_MAX_CLUSTERS * NPU_HW_MAX_TPBS_PER_CLUSTER];

		for (unsigned i = r0; i < r1; i++) {
			unsigned wk = p->wk[st->first + (i - r0 + st->next_worker) % st->n];

			cs[i - r0] = wk / cc->tpbs;
			ts[i - r0] = wk % cc->tpbs;
		}
		rc = npu_emit_round(e, &w->tiles[r0], r1 - r0, cs, ts);
		for (unsigned i = r0; i < r1 && !rc; i++) {
			how.w = p->wk[st->first + (i - r0 + st->next_worker) % st->n];
			how.c = how.w / cc->tpbs;
			how.tpb = how.w % cc->tpbs;
			how.slot = i - r0;
			rc = npu_emit_tile(e, &w->tiles[i], &how);
		}
		done[0] = done[1];
		for (unsigned i = r0; i < r1; i++)
			done[1] += w->tiles[i].nout ? 1 : 0;
		st->half_free[h] = base + done[1];
		st->half = (h + 1) % cc->nbufs;
		/* A short round leaves workers free: the next round starts there. */
		st->next_worker = (st->next_worker + r1 - r0) % st->n;
	}
	st->emitted += p->count[k];
	p->end_of[s * p->B + b] = st->emitted;
	return rc;
}

/* Where item @k of stage @s would start, as a share of the stage (emit()). */
static double merge_key(const struct pipe *p, unsigned s, unsigned k, double done,
			unsigned inputs)
{
	return (done - 0.75 * p->cost[k]) / (inputs * p->st[s].cost);
}

/*
 * One program for batch elements @b0 .. @b0 + @B - 1.  *too_long: it would
 * pass NPU_PROG_MAX_INSNS (nothing is emitted then).
 */
static npu_status emit(struct pipe *p, unsigned b0, unsigned B, bool *too_long)
{
	struct npu_cc *cc = p->cc;
	struct npu_emit e = { 0 };
	struct npu_pb pb;
	npu_status st = NPU_OK;
	unsigned groups;

	e.dma = calloc(NPU_MAX_BUFS * cc->workers, sizeof(*e.dma));
	e.ops = calloc(cc->workers, sizeof(*e.ops));
	if (!e.dma || !e.ops) {
		free(e.dma);
		free(e.ops);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	npu_pb_init(&pb);
	e.pb = &pb;
	p->B = B;
	memset(p->end_of, 0, (size_t)p->S * B * sizeof(*p->end_of));
	for (unsigned s = 0; s < p->S; s++) {
		p->st[s].half = 0;
		memset(p->st[s].half_free, 0, sizeof(p->st[s].half_free));
		p->st[s].emitted = 0;
		p->st[s].next_worker = 0;
	}
	groups = (B + p->group - 1) / p->group;
	for (unsigned t = 0; t + 1 < groups + p->S && !st; t++) {
		unsigned next[MAX_STAGES], in[MAX_STAGES], g0[MAX_STAGES], gn[MAX_STAGES];
		double done[MAX_STAGES];

		for (unsigned s = 0; s < p->S; s++) {
			next[s] = t < s || t - s >= groups ? p->st[s].w1 : p->st[s].w0;
			g0[s] = (t - s) * p->group;
			gn[s] = t < s || B - g0[s] < p->group ? B - g0[s] : p->group;
			in[s] = 0;
			done[s] = 0;
		}
		for (;;) {
			unsigned s, best = p->S;

			/*
			 * The item that starts earliest, as a share of its
			 * stage, brought forward by 3/4 of its own cost: long
			 * items' loads then enter the in-order DMA queues
			 * sooner. Tuned on BlazeFace (fractions 0 to 3 tried):
			 * batch 8 71,024 -> 69,387 cycles per input.
			 */
			for (s = 0; s < p->S; s++)
				if (next[s] < p->st[s].w1 &&
				    (best == p->S || merge_key(p, s, next[s], done[s], gn[s]) <
						     merge_key(p, best, next[best], done[best],
							       gn[best])))
					best = s;
			if (best == p->S || st)
				break;
			s = best;
			st = emit_item(p, &e, s, next[s], g0[s] + in[s], b0 + g0[s] + in[s]);
			done[s] += p->cost[next[s]];
			/* Each item for every input of the group, then the next. */
			if (++in[s] == gn[s]) {
				in[s] = 0;
				next[s]++;
			}
			if (!st && pb.n > NPU_PROG_MAX_INSNS) {
				*too_long = true;
				st = npu_fail(NPU_ERR_UNSUPPORTED,
					      "one input needs more than %d instructions in a pipelined program: compile without a batch",
					      NPU_PROG_MAX_INSNS);
			}
		}
	}
	if (!st) {
		char label[96];

		snprintf(label, sizeof(label), "pipeline of %u stages, batch elements %u-%u",
			 p->S, b0, b0 + B - 1);
		st = npu_pb_finish(&pb, cc->cm, label);
	}
	npu_pb_free(&pb);
	free(e.dma);
	free(e.ops);
	free(e.share);
	return st;
}

npu_status npu_pipe_emit(struct npu_cc *cc)
{
	struct pipe p = { .cc = cc };
	unsigned S = cc->batch;
	npu_status st = NPU_OK;

	if (!cc->nwork)
		return NPU_OK;
	p.count = calloc(cc->nwork, sizeof(*p.count));
	p.cost = calloc(cc->nwork, sizeof(*p.cost));
	p.wk = calloc(cc->workers, sizeof(*p.wk));	/* every stage's TPBs */
	p.end_of = calloc((size_t)MAX_STAGES * cc->batch, sizeof(*p.end_of));
	p.group = cc->inflight ? cc->inflight : 1;
	if (!p.count || !p.cost || !p.wk || !p.end_of) {
		st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	/*
	 * Cost: the simulated cycles each item took layer by layer on the
	 * whole partition, as cluster-FLOPs (cycles x clusters x a cluster's
	 * peak), when the profile matches the items; else FLOPs from the
	 * node's shapes, a node split over several items sharing its cost.
	 */
	for (unsigned i = 0; i < cc->nwork; i++) {
		bool profiled = cc->step_cycles && cc->nstep_cycles == cc->nwork;
		unsigned same = 0;
		double bytes;

		for (unsigned j = 0; j < cc->nwork && !profiled; j++)
			same += cc->work[j].node == cc->work[i].node;
		p.count[i] = completions(&cc->work[i], &bytes);
		if (profiled)
			p.cost[i] = cc->step_cycles[i] * cc->nclusters * cc->tpbs * 2.0 *
				    NPU_M100_TCU_ROWS * NPU_M100_TCU_COLS * NPU_M100_TCU_DOT;
		else
			p.cost[i] = cc->work[i].node >= 0 ?
				npu_node_flops(cc->g, cc->work[i].node) / same : bytes;
		if (p.cost[i] < 1)
			p.cost[i] = 1;
	}
	/* At most as many stages as inputs in flight, counters and clusters. */
	if (S > MAX_STAGES)
		S = MAX_STAGES;
	if (S > cc->nclusters)
		S = cc->nclusters;
	if (S > cc->nwork)
		S = cc->nwork;
	if (cc->stages && cc->stages < S)
		S = cc->stages;
	make_stages(&p, S);
	for (unsigned s = 0; s < p.S; s++) {
		struct stage *sg = &p.st[s];

		for (unsigned k = sg->w0; k < sg->w1; k++) {
			double bytes;

			sg->cost += p.cost[k];
			completions(&cc->work[k], &bytes);
			if (k + 1 == sg->w1)
				sg->out_bytes = bytes;
		}
	}
	st = place(&p);
	/*
	 * Programs are limited in length: a batch too long for one runs as
	 * several programs (steps) of as many elements as fit.
	 */
	for (unsigned b0 = 0, chunk = cc->batch; !st && b0 < cc->batch;) {
		unsigned nb = cc->batch - b0 < chunk ? cc->batch - b0 : chunk;
		bool too_long = false;

		st = emit(&p, b0, nb, &too_long);
		if (st && too_long && nb > 1) {
			chunk = nb / 2;
			st = NPU_OK;
			continue;
		}
		b0 += nb;
	}
out:
	free(p.count);
	free(p.cost);
	free(p.wk);
	free(p.end_of);
	return st;
}
