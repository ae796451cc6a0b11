// SPDX-License-Identifier: MIT
/*
 * The compiler's scratch memory: tensors alive at different times share it.
 *
 * While the nodes are lowered every scratch tensor gets a range of its own
 * (a block, handed out in order like a bump allocator), or lives inside
 * another tensor's: a Concat input in its slice of the output
 * (npu_cc_concat_slices), a Reshape-like output in its input's bytes
 * (npu_lower_alias).  npu_cc_loc notes, per tensor, the first and the
 * last node whose lowering asked for it: its lifetime over the work order
 * (nodes are lowered, and their work runs, in graph order).  Once every
 * node is lowered, each block becomes a group of the memory plan
 * (npu_mem.c) with the tensors in it as aliases at their offsets; the
 * plan places the groups first fit and every scratch address of the work
 * moves with its block.  That move also checks the lifetimes: each
 * address a work item reads or writes must lie inside one block alive at
 * the item's node, or the compilation fails (a lowering that used a
 * tensor without asking npu_cc_loc for it in that node).
 *
 * Why sharing is safe.  Two blocks share bytes only when their lifetimes
 * are disjoint, so every work item touching the earlier one belongs to an
 * earlier node than every item touching the later one, and comes earlier
 * in the work (items are made node by node; checked here).  It suffices that
 * the program finishes every DDR access of an item before any DDR write
 * of a later item of the same input (the accesses of a work item that has
 * effects: a tile's input DMAs come before its write-back, which waits for
 * them; a tile that writes nothing has no effect).
 *
 *  - Layer by layer (batch 1) every work item is its own step, and a
 *    queue runs its steps one after another, each to completion
 *    (Documentation/hw/queues.md): done.
 *  - Pipelined (npu_pipe.c), per batch element b (each has its own copy of
 *    the scratch, at b * scratch_stride, so elements never share).  Let
 *    done(k) be "every completion of item k for b has happened"; every
 *    effective access of item k comes before done(k).  Completions of a
 *    stage finish in emission order (C_s >= n: the first n are done).
 *    (a) Items j < k of one stage: item k's tile write-backs wait for
 *        TPB counter 2 (= C_s) >= the count emitted before item k, and its
 *        DMA-only moves for C_s >= that count, which includes item j.
 *    (b) Item j of an earlier stage, k the first item of stage s: every
 *        tile of k that writes has an input, and its non-constant input
 *        DMAs (all of them when it has only constant ones) wait for
 *        C_(s-1) >= the end of input b in stage s-1, as DMA-only moves do,
 *        so each completion of k follows done(every item of stage s-1);
 *        later items of stage s follow k's completions by (a), and by
 *        induction over the stages stage s-1's follow all earlier ones'.
 *    The early weight loads (const_seg, const_wait) read only the
 *    constant segment, which nothing writes.  (b) needs two facts of the
 *    work, checked here: every tile with a write-back has an input, and
 *    every work item has a completion (else a stage could end without one
 *    that waited).
 *
 * When a check fails (work out of node order; in a pipeline, a tile that
 * writes without an input or an item without a completion), every block
 * lives for the whole run: no sharing, the size the blocks had before.
 *
 * Scratch that no tensor owns (npu_cc_scratch) also lives the whole run.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>

#include "compile/npu_cc.h"
#include "compile/npu_tile.h"
#include "compile/npu_mem.h"
#include "npu_debug.h"

#define ALIGN 64

uint64_t npu_scratch_block(struct npu_cc *cc, uint64_t bytes, int owner)
{
	uint64_t off = (cc->scratch_len + ALIGN - 1) & ~(uint64_t)(ALIGN - 1);

	if (cc->nblocks == cc->cap_blocks) {
		unsigned cap = cc->cap_blocks ? 2 * cc->cap_blocks : 64;
		struct npu_block *b = realloc(cc->blocks, cap * sizeof(*b));

		if (!b) {
			cc->blocks_oom = true;
			return 0;
		}
		cc->blocks = b;
		cc->cap_blocks = cap;
	}
	cc->blocks[cc->nblocks++] = (struct npu_block){ off, bytes ? bytes : 1, owner };
	cc->scratch_len = off + (bytes ? bytes : 1);
	return off;
}

uint64_t npu_cc_scratch(struct npu_cc *cc, uint64_t bytes)
{
	return npu_scratch_block(cc, bytes, -1);
}

void npu_scratch_touch(struct npu_cc *cc, int t)
{
	struct npu_home *h = &cc->home[t];
	int now = cc->cur_node + 1;

	if (now < h->first)
		h->first = now;
	if (now > h->last)
		h->last = now;
}

void npu_scratch_keep(struct npu_cc *cc, int from)
{
	for (int t = 0; t < cc->nloc; t++)
		if (cc->home[t].first <= from && cc->home[t].last > from + 1)
			npu_scratch_touch(cc, t);
}

/* The plan, as the work's addresses see it. */
struct plan {
	struct npu_cc *cc;
	const struct npu_mem_item *items;	/* [0, nblocks): the blocks */
	int64_t *first, *last;			/* per block: its group's lifetime */
};

/* The block holding virtual scratch offset @a (the last one starting at or before it). */
static int block_at(const struct npu_cc *cc, uint64_t a)
{
	int lo = 0, hi = (int)cc->nblocks - 1, b = -1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (cc->blocks[mid].off <= a) {
			b = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return b;
}

static const char *block_name(const struct npu_cc *cc, int b)
{
	int t = cc->blocks[b].owner;
	const char *name = t >= 0 ? cc->g->tensors[t].name : NULL;

	return t < 0 ? "(unowned)" : name && *name ? name : "(unnamed)";
}

/*
 * Move the scratch address *@addr of work item @w, whose access covers
 * [*addr + lo, *addr + hi) (empty when hi <= lo), onto the plan, checking
 * that it stays in one block alive at the item's node.
 */
static npu_status move(const struct plan *p, const struct npu_work *w, uint64_t *addr,
		       int64_t lo, int64_t hi)
{
	const struct npu_cc *cc = p->cc;
	int64_t now = w->node + 1;
	uint64_t a = *addr + (uint64_t)lo, e = *addr + (uint64_t)hi;
	int b = block_at(cc, hi > lo ? a : *addr);
	const struct npu_block *bl = b >= 0 ? &cc->blocks[b] : NULL;

	if (!bl || (hi > lo && (a < bl->off || e > bl->off + bl->size || e < a)))
		return npu_fail(NPU_ERR_INTERNAL,
				"memory plan: work of node %d reaches scratch [%llu, %llu) outside one tensor's bytes",
				w->node, (unsigned long long)a, (unsigned long long)e);
	if (hi > lo && (now < p->first[b] || now > p->last[b]))
		return npu_fail(NPU_ERR_INTERNAL,
				"memory plan: work of node %d uses tensor %s outside its lifetime (nodes %lld..%lld)",
				w->node, block_name(cc, b), (long long)p->first[b] - 1,
				(long long)p->last[b] - 1);
	*addr = *addr - bl->off + p->items[b].at;
	return NPU_OK;
}

/* The bytes walker @wk reaches from its base: [*lo, *hi), empty if none. */
static void walk_span(const struct npu_hw_twu *wk, int64_t *lo, int64_t *hi)
{
	int64_t a = 0, b = 0, es = npu_cc_hw_size(wk->dtype);

	*lo = *hi = 0;
	if (!npu_twu_count(wk))
		return;
	for (unsigned l = 0; l < wk->nlevels && l < NPU_TWU_MAX_LEVELS; l++) {
		const struct npu_hw_twu_level *v = &wk->level[l];
		int64_t x = v->initial, y = v->step ? v->final : v->initial;

		a += x < y ? x : y;
		b += x < y ? y : x;
	}
	*lo = a;
	*hi = b + (es ? es : 1);
}

static npu_status move_tiles(const struct plan *p, struct npu_work *w)
{
	uint32_t seg = p->cc->seg_scratch;
	npu_status st = NPU_OK;

	for (unsigned i = 0; i < w->ntiles && !st; i++) {
		struct npu_tile *t = &w->tiles[i];
		uint64_t a;

		for (unsigned k = 0; k < t->nin && !st; k++) {
			int64_t lo, hi;

			if (t->in[k].seg != seg)
				continue;
			walk_span(&t->in[k].walk, &lo, &hi);
			a = t->in[k].walk.base;
			st = move(p, w, &a, lo, hi);
			t->in[k].walk.base = a;
		}
		for (uint32_t k = 0; k < t->nout && !st; k++) {
			struct npu_hw_gsdu_desc *d = &t->out[k];
			/* An indexed side reaches any row below the limit. */
			bool src_ix = d->flags & NPU_GSDU_F_INDEXED;
			bool dst_ix = d->flags & NPU_GSDU_F_DST_INDEXED;
			int64_t drows = dst_ix ? (d->index_limit ? d->index_limit : 1) : d->rows;
			int64_t reach = drows ? (drows - 1) * d->dst_stride : 0;
			int64_t lo = 0, hi = 0;

			/* A DDR source: an indexed gather's table, or a scatter's rows. */
			if (d->src_space == NPU_SPACE_DDR && t->out_src_seg[k] == seg) {
				int64_t srows = src_ix ? (d->index_limit ? d->index_limit : 1) :
						(d->rows ? d->rows : 1);
				int64_t span = (srows - 1) * d->src_stride;

				a = d->src;
				st = move(p, w, &a, span < 0 ? span : 0,
					  (span > 0 ? span : 0) + d->row_bytes);
				d->src = a;
				if (st)
					break;
			}
			if (t->out_seg[k] != seg)
				continue;
			if (d->rows && d->row_bytes) {
				lo = reach < 0 ? reach : 0;
				hi = (reach > 0 ? reach : 0) + d->row_bytes;
			}
			a = d->dst;
			st = move(p, w, &a, lo, hi);
			d->dst = a;
		}
	}
	return st;
}

/* DDR-to-DDR DMA: its scratch operands are relocations of operand bases. */
static npu_status move_dma(const struct plan *p, struct npu_work *w)
{
	const uint64_t isz = sizeof(struct npu_hw_insn), osz = sizeof(struct npu_hw_twu);
	const uint64_t opnd = offsetof(struct npu_hw_insn, opnd);
	npu_status st = NPU_OK;

	for (uint32_t i = 0; i < w->dma.nrelocs && !st; i++) {
		struct npu_pb_reloc *r = &w->dma.relocs[i];
		uint64_t idx = r->field / isz, rem = r->field % isz, slot;
		int64_t lo, hi;

		if (r->target != p->cc->seg_scratch)
			continue;
		slot = rem >= opnd ? (rem - opnd) / osz : NPU_OPNDS;
		if (r->in_chain || idx >= w->dma.n || slot >= NPU_OPNDS ||
		    rem != opnd + slot * osz + offsetof(struct npu_hw_twu, base))
			return npu_fail(NPU_ERR_INTERNAL,
					"memory plan: work of node %d refers to scratch other than by an operand",
					w->node);
		walk_span(&w->dma.insns[idx].opnd[slot], &lo, &hi);
		st = move(p, w, &r->addend, lo, hi);
	}
	return st;
}

/* A host step's scratch tensors (lower_host.c): each whole, at the step's node. */
static npu_status move_host(const struct plan *p, struct npu_work *w)
{
	const struct npu_host_step *h = w->host;
	npu_status st = NPU_OK;

	for (uint32_t k = 0; k < h->ninputs + h->noutputs && !st; k++) {
		struct npu_host_tensor *t = &h->tensors[k];
		int64_t bytes = (int64_t)npu_dtype_size((npu_dtype)t->dtype);

		if (t->seg != p->cc->seg_scratch)
			continue;
		for (int d = 0; d < t->rank; d++)
			bytes *= t->dims[d];
		st = move(p, w, &t->offset, 0, bytes);
	}
	return st;
}

/* The work runs in node order: lifetimes over nodes are over the work order. */
static bool node_order(const struct npu_cc *cc)
{
	for (unsigned i = 1; i < cc->nwork; i++)
		if (cc->work[i].node < cc->work[i - 1].node)
			return false;
	return true;
}

/*
 * Facts (b) of the safety argument needs of a pipelined schedule: every
 * tile that writes back has an input, every work item a completion.
 */
static bool pipe_ordered(const struct npu_cc *cc)
{
	for (unsigned i = 0; i < cc->nwork; i++) {
		const struct npu_work *w = &cc->work[i];
		unsigned done = 0;

		if (!w->ntiles)
			continue;	/* DMA: never empty (npu_sched_dma) */
		for (unsigned k = 0; k < w->ntiles; k++) {
			if (!w->tiles[k].nout)
				continue;
			if (!w->tiles[k].nin)
				return false;
			done++;
		}
		if (!done)
			return false;
	}
	return true;
}

/* NPU_DEBUG=mem: every block's place and lifetime, then the totals. */
static void say_plan(const struct npu_cc *cc, const struct plan *p, bool share, uint64_t peak)
{
	for (unsigned b = 0; b < cc->nblocks; b++) {
		const struct npu_mem_item *it = &p->items[b];

		if (p->first[b] > p->last[b])
			npu_debug(NPU_DEBUG_MEM, "%-40s %10" PRIu64 " B: never used", block_name(cc, b),
				  cc->blocks[b].size);
		else
			npu_debug(NPU_DEBUG_MEM, "%-40s %10" PRIu64 " B at %10" PRIu64
				  ", alive nodes %" PRId64 "..%" PRId64, block_name(cc, b),
				  cc->blocks[b].size, it->at, p->first[b] - 1, p->last[b] - 1);
	}
	npu_debug(NPU_DEBUG_MEM,
		  "scratch: %u blocks, %" PRIu64 " B one after another, %" PRIu64
		  " B planned per input (%s), x %u inputs", cc->nblocks, cc->scratch_len, peak,
		  share ? "shared between lifetimes" : "no sharing: the schedule does not order them",
		  cc->batch);
}

npu_status npu_scratch_plan(struct npu_cc *cc)
{
	unsigned nb = cc->nblocks;
	/* Times run from 0 (before the first node) to the last node + 1. */
	int64_t end = cc->g->n_nodes;
	bool share = node_order(cc) && (cc->batch <= 1 || pipe_ordered(cc));
	struct npu_mem_item *items;
	struct plan p = { .cc = cc };
	size_t n = nb;
	uint64_t peak = 0;
	npu_status st = NPU_OK;

	if (cc->blocks_oom)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	items = calloc((size_t)nb + (size_t)cc->nloc + 1, sizeof(*items));
	p.first = calloc((size_t)nb + 1, sizeof(*p.first));
	p.last = calloc((size_t)nb + 1, sizeof(*p.last));
	if (!items || !p.first || !p.last) {
		st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	/* The blocks: groups of their own, alive by their tensors only ... */
	for (unsigned b = 0; b < nb; b++) {
		bool whole = cc->blocks[b].owner < 0 || !share;

		items[b] = (struct npu_mem_item){ .size = cc->blocks[b].size, .alias = -1,
						  .first = whole ? 0 : 1, .last = whole ? end : 0 };
		p.first[b] = whole ? 0 : INT64_MAX;
		p.last[b] = whole ? end : INT64_MIN;
	}
	/* ... and every scratch tensor in one, at its offset there. */
	for (int t = 0; t < cc->nloc; t++) {
		const npu_ir_tensor *x = &cc->g->tensors[t];
		const struct npu_home *h = &cc->home[t];
		int b;

		if (cc->loc[t].seg != cc->seg_scratch)
			continue;
		b = block_at(cc, cc->loc[t].off);
		if (b < 0) {
			st = npu_fail(NPU_ERR_INTERNAL, "memory plan: tensor %d outside the scratch", t);
			goto out;
		}
		items[n++] = (struct npu_mem_item){
			.size = (uint64_t)npu_ir_numel(x) * npu_dtype_size(x->dtype),
			.first = h->first, .last = h->last, .alias = b,
			.offset = cc->loc[t].off - cc->blocks[b].off,
		};
		if (h->first <= h->last && h->first < p.first[b])
			p.first[b] = h->first;
		if (h->first <= h->last && h->last > p.last[b])
			p.last[b] = h->last;
	}
	if ((st = npu_mem_plan(items, n, ALIGN, &peak)))
		goto out;
	p.items = items;
	if (npu_debug_on(NPU_DEBUG_MEM))
		say_plan(cc, &p, share, peak);
	for (unsigned i = 0; i < cc->nwork && !st; i++)
		st = cc->work[i].host ? move_host(&p, &cc->work[i]) :
		     cc->work[i].ntiles ? move_tiles(&p, &cc->work[i]) : move_dma(&p, &cc->work[i]);
	/* Each batch element has its own copy: this is one element's. */
	cc->scratch_stride = peak ? peak : ALIGN;
out:
	free(items);
	free(p.first);
	free(p.last);
	return st;
}
