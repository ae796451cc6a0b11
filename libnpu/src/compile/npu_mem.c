// SPDX-License-Identifier: MIT
/*
 * The memory planner (npu_mem.h): alias constraints make groups, then the
 * groups go first fit in order of their first step, each reusing what the
 * groups that died before it freed.
 */
#include <stdlib.h>

#include "compile/npu_mem.h"

struct group {
	size_t root;
	int64_t first, last;
	uint64_t size;
};

/* A placed group still alive; the live list is sorted by offset. */
struct live {
	uint64_t at, end;
	int64_t last;
};

static int by_first(const void *pa, const void *pb)
{
	const struct group *a = pa, *b = pb;

	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
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

/* The lowest aligned offset from which @size bytes meet none of @live. */
static uint64_t first_fit(const struct live *live, size_t nlive, uint64_t size,
			  uint64_t align)
{
	uint64_t at = 0;

	for (size_t k = 0; k < nlive; k++) {
		if (live[k].end <= at)
			continue;
		if (at + size <= live[k].at)
			break;
		at = (live[k].end + align - 1) & ~(align - 1);
	}
	return at;
}

npu_status npu_mem_plan(struct npu_mem_item *items, size_t n, uint64_t align,
			uint64_t *peak)
{
	size_t *root = calloc(n ? n : 1, sizeof(*root));
	uint64_t *off = calloc(n ? n : 1, sizeof(*off));
	struct group *grp = calloc(n ? n : 1, sizeof(*grp));
	struct live *live = calloc(n ? n : 1, sizeof(*live));
	size_t ngrp = 0, nlive = 0;
	uint64_t top = 0;
	npu_status st;

	*peak = 0;
	if (!root || !off || !grp || !live) {
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
	qsort(grp, ngrp, sizeof(*grp), by_first);
	for (size_t k = 0; k < ngrp; k++) {
		const struct group *g = &grp[k];
		size_t keep = 0, pos;
		uint64_t at;

		/* Groups dead before this one starts free their ranges for good. */
		for (size_t j = 0; j < nlive; j++)
			if (live[j].last >= g->first)
				live[keep++] = live[j];
		nlive = keep;
		at = first_fit(live, nlive, g->size, align);
		for (pos = nlive; pos > 0 && live[pos - 1].at > at; pos--)
			live[pos] = live[pos - 1];
		live[pos] = (struct live){ at, at + g->size, g->last };
		nlive++;
		items[g->root].at = at;
		if (at + g->size > top)
			top = at + g->size;
	}
	for (size_t i = 0; i < n; i++)
		items[i].at = items[root[i]].at + off[i];
	*peak = (top + align - 1) & ~(align - 1);
out:
	free(root);
	free(off);
	free(grp);
	free(live);
	return st;
}
