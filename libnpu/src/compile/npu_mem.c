// SPDX-License-Identifier: MIT
/*
 * The memory planner (npu_mem.h): alias constraints make groups, then the
 * groups go first fit, each at the lowest offset no group alive with it
 * holds: once in order of their first step (a group reuses what the groups
 * dead before it freed) and once largest first (the big ones packed
 * first, the small ones into the gaps between them), and the plan with the
 * lower peak is kept.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_mem.h"

struct group {
	size_t root;
	int64_t first, last;
	uint64_t size;
};

/* A placed group; the placed list is sorted by offset. */
struct placed {
	uint64_t at, end;
	int64_t first, last;
};

/* In order of the first step, larger first on a tie. */
static int by_first(const void *pa, const void *pb)
{
	const struct group *a = pa, *b = pb;

	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return a->root < b->root ? -1 : a->root > b->root;
}

/* Largest first, earlier first on a tie. */
static int by_size(const void *pa, const void *pb)
{
	const struct group *a = pa, *b = pb;

	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	return a->root < b->root ? -1 : a->root > b->root;
}

/* Each item's root and its offset there; NPU_ERR_INVALID_ARG as documented. */
static npu_status find_roots(const struct npu_mem_item *items, size_t n, size_t *root,
			     uint64_t *off)
{
	for (size_t i = 0; i < n; i++) {
		size_t r = i, hops = 0;
		uint64_t o = 0;

		while (items[r].alias >= 0) {
			if ((size_t)items[r].alias >= n)
				return npu_fail(NPU_ERR_INVALID_ARG,
						"memory plan: item %zu aliases item %d of %zu", r,
						items[r].alias, n);
			if (++hops > n)
				return npu_fail(NPU_ERR_INVALID_ARG,
						"memory plan: item %zu is in an alias cycle", i);
			o += items[r].offset;
			r = (size_t)items[r].alias;
		}
		if (o > items[r].size || items[i].size > items[r].size - o)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"memory plan: item %zu (%llu bytes at %llu) reaches past its root (%llu bytes)",
					i, (unsigned long long)items[i].size, (unsigned long long)o,
					(unsigned long long)items[r].size);
		root[i] = r;
		off[i] = o;
	}
	return NPU_OK;
}

/*
 * Place @grp[0..@n) in that order, each first fit: at the lowest aligned
 * offset where no group placed before it and alive at a common step lies.
 * @at[k]: where group k goes; returns the highest end.
 */
static uint64_t place_in_order(const struct group *grp, size_t n, uint64_t align, uint64_t *at,
			       struct placed *done)
{
	uint64_t top = 0;
	size_t ndone = 0;

	for (size_t k = 0; k < n; k++) {
		const struct group *g = &grp[k];
		uint64_t a = 0;
		size_t pos;

		for (size_t j = 0; j < ndone; j++) {
			const struct placed *p = &done[j];

			if (p->last < g->first || p->first > g->last || p->end <= a)
				continue;
			if (a + g->size <= p->at)
				break;	/* the rest start later still */
			a = (p->end + align - 1) & ~(align - 1);
		}
		for (pos = ndone; pos > 0 && done[pos - 1].at > a; pos--)
			done[pos] = done[pos - 1];
		done[pos] = (struct placed){ a, a + g->size, g->first, g->last };
		ndone++;
		at[k] = a;
		if (a + g->size > top)
			top = a + g->size;
	}
	return top;
}

npu_status npu_mem_plan(struct npu_mem_item *items, size_t n, uint64_t align,
			uint64_t *peak)
{
	size_t m = n ? n : 1;
	size_t *root = calloc(m, sizeof(*root));
	uint64_t *off = calloc(m, sizeof(*off));
	struct group *grp = calloc(m, sizeof(*grp)), *alt = calloc(m, sizeof(*alt));
	struct placed *done = calloc(m, sizeof(*done));
	uint64_t *at = calloc(m, sizeof(*at)), *alt_at = calloc(m, sizeof(*alt_at));
	uint64_t top, alt_top;
	size_t ngrp = 0;
	npu_status st;

	*peak = 0;
	if (!root || !off || !grp || !alt || !done || !at || !alt_at) {
		st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	if (!align || (align & (align - 1))) {
		st = npu_fail(NPU_ERR_INVALID_ARG, "memory plan: alignment %llu",
			      (unsigned long long)align);
		goto out;
	}
	if ((st = find_roots(items, n, root, off)))
		goto out;
	/* A group's lifetime: the union of its members' (grp[] by root first). */
	for (size_t i = 0; i < n; i++) {
		grp[i] = (struct group){ i, INT64_MAX, INT64_MIN, items[i].size };
		items[i].at = 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct group *g = &grp[root[i]];

		if (items[i].first > items[i].last)
			continue;
		if (items[i].first < g->first)
			g->first = items[i].first;
		if (items[i].last > g->last)
			g->last = items[i].last;
	}
	for (size_t i = 0; i < n; i++)
		if (root[i] == i && grp[i].first <= grp[i].last)
			grp[ngrp++] = grp[i];
	/* Both orders; the lower peak wins, the order of first steps on a tie. */
	memcpy(alt, grp, ngrp * sizeof(*grp));
	qsort(grp, ngrp, sizeof(*grp), by_first);
	qsort(alt, ngrp, sizeof(*alt), by_size);
	top = place_in_order(grp, ngrp, align, at, done);
	alt_top = place_in_order(alt, ngrp, align, alt_at, done);
	if (alt_top < top) {
		top = alt_top;
		memcpy(grp, alt, ngrp * sizeof(*grp));
		memcpy(at, alt_at, ngrp * sizeof(*at));
	}
	for (size_t k = 0; k < ngrp; k++)
		items[grp[k].root].at = at[k];
	for (size_t i = 0; i < n; i++)
		items[i].at = items[root[i]].at + off[i];
	*peak = (top + align - 1) & ~(align - 1);
out:
	free(root);
	free(off);
	free(grp);
	free(alt);
	free(done);
	free(at);
	free(alt_at);
	return st;
}
