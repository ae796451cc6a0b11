// SPDX-License-Identifier: MIT
/*
 * Cycle-model helpers: HBSM bank conflicts and NoC transfers.
 * Documentation/hw/cycle-model.md describes the model.
 */
#include "npu_exec.h"

/*
 * Count bank conflicts in an operand's 32-byte access stream: accesses
 * are taken in windows of 32 (one per bank if perfectly spread); each one
 * hitting a bank already used in its window conflicts.  Only the first
 * 1024 accesses (and at most 8192 elements: a broadcast operand re-reads
 * one line without making new accesses) are examined and the result
 * scaled, to keep this cheap.
 */
uint64_t npu_cycles_hbsm_conflicts(const struct npu_view *v, unsigned banks,
				   unsigned bank_bytes)
{
	uint32_t idx[NPU_TWU_MAX_LEVELS] = { 0 };
	uint64_t total = npu_view_elems(v), sampled = 0, conflicts = 0;
	uint64_t last_line = UINT64_MAX, accesses = 0;
	uint64_t used = 0;
	unsigned in_window = 0;

	if (v->space != NPU_SPACE_HBSM || !banks || banks > 64 || !bank_bytes)
		return 0;
	for (; sampled < total && accesses < 1024 && sampled < 8192; sampled++) {
		int64_t addr = (int64_t)v->base;
		uint64_t line;

		for (unsigned l = 0; l < v->ndims; l++)
			addr += v->strides[l] * (int64_t)idx[l];
		line = (uint64_t)addr / bank_bytes;
		if (line != last_line) {
			unsigned bank = line % banks;

			last_line = line;
			accesses++;
			if (used & (1ull << bank))
				conflicts++;
			used |= 1ull << bank;
			if (++in_window == banks) {
				in_window = 0;
				used = 0;
			}
		}
		for (unsigned l = 0; l < v->ndims; l++) {
			if (++idx[l] < v->dims[l])
				break;
			idx[l] = 0;
		}
	}
	if (sampled < total && sampled)
		conflicts = conflicts * total / sampled;
	return conflicts;
}

void npu_cost_xfer(struct npu_cost *cost, unsigned src_node,
		   unsigned dst_node, uint64_t bytes)
{
	if (src_node == dst_node || !bytes)
		return;
	for (unsigned i = 0; i < cost->nxfers; i++) {
		if (cost->xfer[i].src_node == src_node &&
		    cost->xfer[i].dst_node == dst_node) {
			cost->xfer[i].bytes += bytes;
			return;
		}
	}
	if (cost->nxfers == NPU_COST_MAX_XFERS) {
		/* Fold overflow into the last slot's bytes: same order of load. */
		cost->xfer[NPU_COST_MAX_XFERS - 1].bytes += bytes;
		return;
	}
	cost->xfer[cost->nxfers].src_node = (uint8_t)src_node;
	cost->xfer[cost->nxfers].dst_node = (uint8_t)dst_node;
	cost->xfer[cost->nxfers].bytes = bytes;
	cost->nxfers++;
}
