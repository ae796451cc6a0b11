/* SPDX-License-Identifier: MIT */
/*
 * A memory planner: where buffers of known lifetimes go in one region.
 *
 * It knows nothing of the NPU: items are sizes, lifetimes (intervals of
 * steps on whatever clock the caller's work is ordered by) and alias
 * constraints; the result is an offset per item and the region's peak.
 * The compiler plans its DDR scratch with it (npu_scratch.c); CCB SRAM
 * windows could be planned the same way, with their own alignment and
 * the peak checked against the window.
 *
 * Two items overlap in time when their intervals share a step; such items
 * never share a byte.  An alias lives inside another item at a fixed
 * offset (a Concat's input in its slice of the output, a Reshape's output
 * in its input's bytes): an item with all its aliases, transitively, is
 * one group, placed as its root's range and alive from the first step of
 * any member to the last step of any member.
 */
#ifndef NPU_MEM_H
#define NPU_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "npu_internal.h"

struct npu_mem_item {
	uint64_t size;		/* bytes */
	int64_t first, last;	/* alive over steps [first, last]; first > last: never */
	int alias;		/* -1: a range of its own; else the item it lives in */
	uint64_t offset;	/* an alias: where in that item it starts */
	uint64_t at;		/* result: where it starts in the region */
};

/*
 * Place @n items.  Each group goes first fit: at the lowest @align-aligned
 * offset where no group placed before it and alive at a common step lies.
 * The groups are placed twice, in order of their first step (larger first
 * on a tie: a group reuses the ranges of groups dead before it starts) and
 * largest first (earlier first on a tie), and the plan with the lower peak
 * is kept (the first on a tie).  A group no member is alive in takes no
 * room (at 0).  *@peak: the region's size, a multiple of @align, 0 without
 * groups.  NPU_ERR_INVALID_ARG for an align that is not a power of two, an
 * alias of an item that does not exist, an alias cycle or an alias
 * reaching past its root's end.
 */
npu_status npu_mem_plan(struct npu_mem_item *items, size_t n, uint64_t align,
			uint64_t *peak);

#endif /* NPU_MEM_H */
