/* SPDX-License-Identifier: MIT */
/*
 * A NoC link's busy time in the cycle model, as sorted disjoint intervals
 * [s, e) of simulated cycles.
 *
 * Units run in dataflow rounds, not in simulated-time order, so a transfer
 * booked later may start earlier than one booked before it: it takes the
 * first gap at or after its start time that fits, as a link arbitrating
 * by time would give it.  (A single "free at" time per link would make it
 * wait behind transfers that happen after it.)  At most NPU_LINK_CAL_MAX
 * intervals are kept; past that the two earliest merge (their gap counts
 * as busy), which bounds the work and only errs towards stalls.
 */
#ifndef NPU_NOC_CAL_H
#define NPU_NOC_CAL_H

#include <stdint.h>

#define NPU_LINK_CAL_MAX 2048

struct npu_link_cal {
	uint64_t *s, *e;
	uint32_t n, cap;
};

/* Book @len cycles at the earliest time >= @t that is free; returns it. */
uint64_t npu_link_cal_book(struct npu_link_cal *c, uint64_t t, uint64_t len);
/*
 * Book @len cycles of the free time from @t on, gap by gap, and return
 * when the last one ends: a path whose arbiter interleaves requests at a
 * fine grain (the DDR port), where a long transfer flows around short
 * ones booked ahead of it instead of waiting for a gap it fits whole.
 */
uint64_t npu_link_cal_fill(struct npu_link_cal *c, uint64_t t, uint64_t len);
void npu_link_cal_free(struct npu_link_cal *c);

/* Forget every booking, keeping the memory (a new task on the same link). */
static inline void npu_link_cal_clear(struct npu_link_cal *c)
{
	c->n = 0;
}

#endif /* NPU_NOC_CAL_H */
