// SPDX-License-Identifier: MIT
/*
 * Cycle-model helpers: HBSM bank conflicts and NoC transfers.
 * Documentation/hw/cycle-model.md describes the model.
 */
#include <string.h>

#include "npu_exec.h"

/* Access-stream state of one count: the last line and the open window. */
struct conflict_walk {
	uint64_t last_line, accesses, conflicts, used;
	unsigned in_window, banks, bank_bytes;
};

/* One element's address: a new line is an access into the window. */
static void conflict_touch(struct conflict_walk *cw, uint64_t addr)
{
	uint64_t line = addr / cw->bank_bytes;
	unsigned bank;

	if (line == cw->last_line)
		return;
	bank = line % cw->banks;
	cw->last_line = line;
	cw->accesses++;
	if (cw->used & (1ull << bank))
		cw->conflicts++;
	cw->used |= 1ull << bank;
	if (++cw->in_window == cw->banks) {
		cw->in_window = 0;
		cw->used = 0;
	}
}

/*
 * How many of the elements after one at @addr, @stride apart, stay on
 * its line (@left at most): those are no new access, skipped in one go.
 */
static uint64_t same_line_after(uint64_t addr, int64_t stride,
				unsigned bank_bytes, uint64_t left)
{
	uint64_t off = addr % bank_bytes, n;

	if (stride == 0)
		return left;
	if (stride > 0)
		n = (bank_bytes - 1 - off) / (uint64_t)stride;
	else
		n = off / (uint64_t)-stride;
	return n < left ? n : left;
}

/*
 * A view's geometry as far as conflicts go: levels of one element are
 * dropped (they never move the address nor the order) and the base is
 * reduced modulo bank_bytes: moving a view by whole lines keeps which of
 * its elements share a line and renames every bank by the same rotation,
 * so the same accesses collide.
 */
struct conflict_key {
	uint32_t dims[NPU_TWU_MAX_LEVELS];
	int64_t strides[NPU_TWU_MAX_LEVELS];
	uint64_t base;
	uint32_t banks, bank_bytes;
	uint32_t ndims;
	uint32_t pad;
};

/*
 * The walk below costs up to 1024 accesses per operand and iteration,
 * the bulk of the emulator's time on real models, while a program
 * repeats the same few geometries: each thread remembers its last counts
 * (direct-mapped, full key compared, so a hit is exact).  BlazeFace
 * needs ~4096 slots: at 512 the walk still took 3.7% of a run, at 4096
 * 0.1% (~420 KiB per thread).
 */
#define CONFLICT_CACHE_SIZE 4096

struct conflict_entry {
	struct conflict_key key;
	uint64_t conflicts;
	bool valid;
};

static _Thread_local struct conflict_entry conflict_cache[CONFLICT_CACHE_SIZE];

static unsigned conflict_key_hash(const struct conflict_key *k)
{
	uint64_t h = k->base * 0x9e3779b97f4a7c15ull ^ k->ndims;

	for (unsigned l = 0; l < k->ndims; l++) {
		h = (h ^ k->dims[l]) * 0xff51afd7ed558ccdull;
		h = (h ^ (uint64_t)k->strides[l]) * 0xc4ceb9fe1a85ec53ull;
	}
	h ^= (uint64_t)k->banks << 32 | k->bank_bytes;
	h ^= h >> 29;
	return (unsigned)(h % CONFLICT_CACHE_SIZE);
}

/*
 * Count bank conflicts in an operand's 32-byte access stream: accesses
 * are taken in windows of 32 (one per bank if perfectly spread); each one
 * hitting a bank already used in its window conflicts.  Only the first
 * 1024 accesses (and at most 8192 elements: a broadcast operand re-reads
 * one line without making new accesses) are examined and the result
 * scaled, to keep this cheap.
 *
 * The walk is the element order (dims[0] fastest) but jumps over the
 * elements of an innermost row that stay on the line just accessed, so
 * its cost follows the accesses and rows, not the elements; the count is
 * the element-by-element one (tests/unit/test_core_cycles.c checks it
 * against that definition).  @k has at least one level.
 */
static uint64_t count_conflicts(const struct conflict_key *k)
{
	struct conflict_walk cw = { .last_line = UINT64_MAX, .banks = k->banks,
				    .bank_bytes = k->bank_bytes };
	uint32_t idx[NPU_TWU_MAX_LEVELS] = { 0 };
	const uint32_t *dims = k->dims;
	const int64_t *strides = k->strides;
	unsigned bank_bytes = k->bank_bytes, nd = k->ndims;
	uint64_t total = 1, sampled = 0;

	for (unsigned l = 0; l < nd; l++)
		total *= dims[l];
	while (sampled < total && cw.accesses < 1024 && sampled < 8192) {
		int64_t addr = (int64_t)k->base;
		uint64_t i = 0;

		for (unsigned l = 1; l < nd; l++)
			addr += strides[l] * (int64_t)idx[l];
		/* One innermost row, from its first element. */
		while (i < dims[0] && cw.accesses < 1024 && sampled < 8192) {
			uint64_t a = (uint64_t)(addr + strides[0] * (int64_t)i);
			uint64_t skip;

			conflict_touch(&cw, a);
			sampled++;
			i++;
			if (cw.accesses >= 1024)
				break;
			skip = same_line_after(a, strides[0], bank_bytes,
					       dims[0] - i);
			if (skip > 8192 - sampled)
				skip = 8192 - sampled;
			sampled += skip;
			i += skip;
		}
		if (i < dims[0])
			break;
		for (unsigned l = 1; l < nd; l++) {
			if (++idx[l] < dims[l])
				break;
			idx[l] = 0;
		}
	}
	if (sampled < total && sampled)
		cw.conflicts = cw.conflicts * total / sampled;
	return cw.conflicts;
}

uint64_t npu_cycles_hbsm_conflicts(const struct npu_view *v, unsigned banks,
				   unsigned bank_bytes)
{
	struct conflict_key k;
	struct conflict_entry *e;
	bool cacheable;

	if (v->space != NPU_SPACE_HBSM || !banks || banks > 64 || !bank_bytes)
		return 0;
	memset(&k, 0, sizeof(k));
	for (unsigned l = 0; l < v->ndims; l++) {
		if (v->dims[l] == 1)
			continue;
		k.dims[k.ndims] = v->dims[l];
		k.strides[k.ndims++] = v->strides[l];
	}
	if (!k.ndims) {
		k.dims[0] = 1;
		k.ndims = 1;
	}
	k.banks = banks;
	k.bank_bytes = bank_bytes;
	/*
	 * Addresses wrap modulo 2^64: the reduced base is only equivalent
	 * when lines and banks divide 2^64 evenly, i.e. are powers of two.
	 */
	cacheable = !(banks & (banks - 1)) && !(bank_bytes & (bank_bytes - 1));
	k.base = cacheable ? v->base % bank_bytes : v->base;
	if (!cacheable)
		return count_conflicts(&k);
	e = &conflict_cache[conflict_key_hash(&k)];
	if (!e->valid || memcmp(&e->key, &k, sizeof(k))) {
		e->key = k;
		e->conflicts = count_conflicts(&k);
		e->valid = true;
	}
	return e->conflicts;
}

/* Add @x to the cost, merged with an entry of the same path and nodes. */
static void cost_add(struct npu_cost *cost, const struct npu_xfer *x)
{
	for (unsigned i = 0; i < cost->nxfers; i++) {
		struct npu_xfer *e = &cost->xfer[i];

		if (e->path == x->path && e->src_node == x->src_node &&
		    e->dst_node == x->dst_node) {
			e->bytes += x->bytes;
			return;
		}
	}
	if (cost->nxfers == NPU_COST_MAX_XFERS) {
		/* Fold overflow into the last slot's bytes: same order of load. */
		cost->xfer[NPU_COST_MAX_XFERS - 1].bytes += x->bytes;
		return;
	}
	cost->xfer[cost->nxfers++] = *x;
}

void npu_cost_xfer(struct npu_cost *cost, unsigned src_node,
		   unsigned dst_node, uint64_t bytes)
{
	struct npu_xfer x = { .path = NPU_PATH_MESH, .src_node = (uint8_t)src_node,
			      .dst_node = (uint8_t)dst_node, .bytes = bytes };

	if (src_node == dst_node || !bytes)
		return;
	cost_add(cost, &x);
}

void npu_cost_path(struct npu_cost *cost, enum npu_xfer_path path, uint64_t bytes)
{
	struct npu_xfer x = { .path = (uint8_t)path, .bytes = bytes };

	if (bytes && path != NPU_PATH_MESH)
		cost_add(cost, &x);
}
