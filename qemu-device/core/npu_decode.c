// SPDX-License-Identifier: MIT
/*
 * Before a task's first round: the descriptor's checks, loading the program
 * (or taking its decoded instructions from the queue's cache of programs),
 * and decoding and validating every instruction, each unit checking its own
 * (npu_unit_ops.validate).
 */
#include <stdlib.h>
#include <string.h>

#include "npu_task.h"

#define MAX_TASK_ITERATIONS (1ull << 32)

#define PROG_CACHE_ENTRIES 512
#define PROG_CACHE_BYTES (64ull << 20)	/* of decoded instructions, per queue */

/* ---- loading ---- */

int npu_task_check_desc(struct npu_task *task)
{
	const struct npu_hw_task *d = &task->ft->desc;
	const struct npu_core_config *cfg = &task->core->cfg;
	uint32_t seen = 0;

	if (d->magic != NPU_TASK_MAGIC || d->flags & ~NPU_TASK_F_KNOWN ||
	    d->pad0 || !npu_all_zero(d->reserved, sizeof(d->reserved)) ||
	    d->nclusters < 1 || d->nclusters > cfg->clusters ||
	    d->pt_base & (NPU_MMU_PAGE_SIZE - 1) ||
	    d->sram_base & (NPU_MMU_PAGE_SIZE - 1) ||
	    d->sram_base > cfg->sram_size ||
	    d->sram_size > cfg->sram_size - d->sram_base ||
	    d->timeout_cycles > NPU_TASK_MAX_TIMEOUT ||
	    d->prog_size < sizeof(struct npu_hw_prog))
		return NPU_TASK_BAD_DESCRIPTOR;
	for (unsigned i = d->nclusters; i < NPU_HW_MAX_CLUSTERS; i++)
		if (d->cluster_map[i])
			return NPU_TASK_BAD_DESCRIPTOR;
	for (unsigned i = 0; i < d->nclusters; i++) {
		unsigned p = d->cluster_map[i];

		if (p >= cfg->clusters || seen & (1u << p))
			return NPU_TASK_BAD_DESCRIPTOR;
		seen |= 1u << p;
		if (cfg->defect_mask & (1u << p)) {
			npu_task_fail(task, NPU_TASK_DEFECTIVE_CLUSTER, UINT32_MAX, p, i, 0);
			return NPU_TASK_DEFECTIVE_CLUSTER;
		}
	}
	return 0;
}

static int check_sync(const struct npu_task *task, const struct npu_hw_insn *in)
{
	for (unsigned i = 0; i < NPU_SYNC_WAITS; i++) {
		const struct npu_hw_sync_wait *w = &in->sync.wait[i];

		if (w->flags & ~NPU_WAIT_KNOWN || w->reserved)
			return NPU_IE_RESERVED;
		if (!w->flags) {
			if (w->counter || w->value || w->iter_step)
				return NPU_IE_RESERVED;
			continue;
		}
		if (w->counter >= NPU_HW_SU_COUNTERS)
			return NPU_IE_SYNC;
	}
	for (unsigned i = 0; i < NPU_SYNC_SIGNALS; i++) {
		const struct npu_hw_sync_signal *s = &in->sync.signal[i];

		if (s->flags & ~NPU_SIGNAL_KNOWN || s->reserved0 || s->reserved1)
			return NPU_IE_RESERVED;
		if (!(s->flags & NPU_SIGNAL_ENABLE)) {
			if (s->flags || s->counter || s->tpb_mask || s->cluster_mask)
				return NPU_IE_RESERVED;
			continue;
		}
		if (s->counter >= NPU_HW_SU_COUNTERS)
			return NPU_IE_SYNC;
		if (s->flags & NPU_SIGNAL_REMOTE) {
			if (s->flags & NPU_SIGNAL_CCB || !s->tpb_mask ||
			    !s->cluster_mask || s->tpb_mask >> task->tpbs ||
			    s->cluster_mask >> task->nclusters)
				return NPU_IE_SYNC;
		} else if (s->tpb_mask || s->cluster_mask) {
			return NPU_IE_SYNC;
		}
	}
	return 0;
}

static int check_operand_range(const struct npu_task *task, const struct npu_walk *w)
{
	uint64_t lo, hi, limit;

	npu_walk_bounds(w, &lo, &hi);
	switch (w->space) {
	case NPU_SPACE_HBSM:
	case NPU_SPACE_HBSM_REMOTE:
		limit = task->core->cfg.hbsm_size;
		break;
	case NPU_SPACE_SRAM:
		limit = task->sram_size;
		break;
	default:
		limit = 1ull << NPU_MMU_VA_BITS;
		break;
	}
	if (lo == UINT64_MAX || hi >= limit || limit - hi < w->esz)
		return NPU_IE_RANGE;
	if (w->space == NPU_SPACE_HBSM_REMOTE &&
	    (!w->cluster_mask || !w->tpb_mask ||
	     w->cluster_mask >> task->nclusters || w->tpb_mask >> task->tpbs))
		return NPU_IE_DEST;
	return 0;
}

/* Decode one instruction; returns a task status, filling the failure. */
static int decode_insn(struct npu_task *task, struct npu_dinsn *di)
{
	const struct npu_hw_insn *in = &di->raw;
	const struct npu_unit_ops *ops;
	bool tpb_unit = in->unit < NPU_TPB_UNITS;
	bool any_used = false;
	int err;

	ops = npu_unit_lookup(in->unit, in->opcode);
	if (in->unit >= NPU_UNIT_COUNT) {
		err = NPU_IE_UNIT;
		goto bad;
	}
	if (!ops) {
		err = NPU_IE_OPCODE;
		goto bad;
	}
	if (in->flags || in->reserved[0] || in->reserved[1]) {
		err = NPU_IE_RESERVED;
		goto bad;
	}
	if (tpb_unit) {
		if (!in->cluster_mask || !in->tpb_mask || in->tpb_mask >> task->tpbs) {
			err = NPU_IE_DEST;
			goto bad;
		}
		if (in->cluster_mask >> task->nclusters) {
			/* Names a cluster outside the partition. */
			unsigned lc = task->nclusters;

			while (!(in->cluster_mask & (1u << lc)))
				lc++;
			npu_task_fail(task, NPU_TASK_DEFECTIVE_CLUSTER, di->index, lc, 0, 0);
			return NPU_TASK_DEFECTIVE_CLUSTER;
		}
	} else if (in->cluster_mask || in->tpb_mask) {
		err = NPU_IE_DEST;
		goto bad;
	}
	if (in->repeat_levels > NPU_MAX_REPEAT_LEVELS) {
		err = NPU_IE_WALKER;
		goto bad;
	}
	err = check_sync(task, in);
	if (err)
		goto bad;
	di->nrep = in->repeat_levels;
	di->iters = 1;
	/* The first used operand sets the repeat counts; the others match. */
	for (unsigned o = 0; o < NPU_OPNDS; o++) {
		struct npu_walk *w = &di->opnd[o];

		if (!in->opnd[o].nlevels) {
			if (!npu_all_zero(&in->opnd[o], sizeof(in->opnd[o]))) {
				err = NPU_IE_RESERVED;
				goto bad;
			}
			continue;
		}
		err = npu_walk_decode(&in->opnd[o], w);
		if (err)
			goto bad;
		if (w->nlevels <= di->nrep) {
			err = NPU_IE_WALKER;
			goto bad;
		}
		if (!tpb_unit && w->space == NPU_SPACE_HBSM) {
			err = NPU_IE_SPACE;	/* the CCB has no local HBSM */
			goto bad;
		}
		err = check_operand_range(task, w);
		if (err)
			goto bad;
		if (npu_walk_elems(w, w->nlevels - di->nrep) > NPU_VIEW_MAX_ELEMS) {
			err = NPU_IE_WALKER;
			goto bad;
		}
		for (unsigned j = 0; j < di->nrep; j++) {
			uint32_t c = w->count[w->nlevels - di->nrep + j];

			if (!any_used) {
				di->rep_count[j] = c;
			} else if (di->rep_count[j] != c) {
				err = NPU_IE_SHAPE;
				goto bad;
			}
		}
		any_used = true;
		di->used[o] = true;
		di->work += npu_walk_elems(w, w->nlevels - di->nrep);
	}
	if (di->nrep) {
		if (!any_used) {
			err = NPU_IE_WALKER;	/* repeats need an operand to count them */
			goto bad;
		}
		for (unsigned j = 0; j < di->nrep; j++)
			di->iters *= di->rep_count[j];
		if (di->iters > MAX_TASK_ITERATIONS) {
			err = NPU_IE_WALKER;
			goto bad;
		}
	}
	err = ops->validate(task, di);
	if (err)
		goto bad;
	di->ops = ops;
	return 0;
bad:
	npu_task_fail(task, NPU_TASK_ILLEGAL_INSN, di->index, (uint32_t)err, 0, 0);
	return NPU_TASK_ILLEGAL_INSN;
}

/* The descriptor fields decoding and validation depend on (the rest of
 * what they read is the core's configuration). */
static void decode_key(const struct npu_hw_task *d, struct npu_hw_task *k)
{
	memset(k, 0, sizeof(*k));
	k->nclusters = d->nclusters;
	memcpy(k->cluster_map, d->cluster_map, sizeof(k->cluster_map));
	k->sram_base = d->sram_base;
	k->sram_size = d->sram_size;
	k->timeout_cycles = d->timeout_cycles;
}

static size_t prog_bytes(const struct prog_entry *e)
{
	return (size_t)e->hdr.insn_count * sizeof(struct npu_dinsn) +
	       npu_replay_bytes(e->replay);
}

void npu_task_prog_drop(struct npu_task *task, unsigned i)
{
	task->prog_bytes -= prog_bytes(&task->prog[i]);
	free(task->prog[i].insns);
	npu_replay_free(task->prog[i].replay);
	task->prog[i] = task->prog[--task->nprog];
}

static struct prog_entry *prog_find(struct npu_task *task, const struct npu_hw_prog *hdr)
{
	const struct npu_hw_task *d = &task->ft->desc;
	struct npu_hw_task key;

	decode_key(d, &key);
	/* From the entry after the last one run, round the table. */
	for (unsigned n = 0, i = task->prog_last + 1; n < task->nprog; n++, i++) {
		struct prog_entry *e;

		if (i >= task->nprog)
			i = 0;
		e = &task->prog[i];
		if (e->va == d->prog_va && e->pt_base == d->pt_base &&
		    !memcmp(&e->hdr, hdr, sizeof(*hdr)) &&
		    !memcmp(&e->key, &key, sizeof(key))) {
			task->prog_last = i;
			return e;
		}
	}
	return NULL;
}

/* Keep the task's freshly decoded program for the next tasks, if it fits. */
static void prog_keep(struct npu_task *task, const struct npu_hw_prog *hdr,
		      uint64_t insns_pa, uint64_t version)
{
	const struct npu_hw_task *d = &task->ft->desc;
	size_t bytes = (size_t)hdr->insn_count * sizeof(struct npu_dinsn);
	struct prog_entry *e = NULL;

	if (bytes > PROG_CACHE_BYTES)
		return;
	if (!task->prog) {
		task->prog = calloc(PROG_CACHE_ENTRIES, sizeof(*task->prog));
		if (!task->prog)
			return;
	}
	/* Least recently used out first. */
	while (task->nprog == PROG_CACHE_ENTRIES ||
	       task->prog_bytes + bytes > PROG_CACHE_BYTES) {
		unsigned lru = 0;

		for (unsigned i = 1; i < task->nprog; i++)
			if (task->prog[i].used < task->prog[lru].used)
				lru = i;
		npu_task_prog_drop(task, lru);
	}
	e = &task->prog[task->nprog++];
	e->va = d->prog_va;
	e->pt_base = d->pt_base;
	e->hdr = *hdr;
	decode_key(d, &e->key);
	e->insns = task->insns;
	e->used = task->prog_tick;
	e->insns_pa = insns_pa;
	e->version = version;
	e->replay = NULL;
	task->prog_bytes += bytes;
	task->insns_owned = false;
	task->prog_cur = e;
}

int npu_task_load_program(struct npu_task *task)
{
	const struct npu_hw_task *d = &task->ft->desc;
	struct npu_hw_prog hdr;
	struct npu_mmu_tlb tlb = { 0 };
	struct prog_entry *e = NULL;
	const struct npu_core_host *host = &task->core->host;
	const void *mapped;
	size_t insns_bytes;
	uint64_t fa = 0, insns_pa = 0, version = 0;
	uint32_t detail = 0;
	bool changed = false;
	int ret;

	ret = npu_mmu_read(task->ft, &tlb, d->prog_va, &hdr, sizeof(hdr), &fa, &detail);
	if (ret)
		goto mem_fail;
	if (hdr.magic != NPU_PROG_MAGIC ||
	    hdr.version_major != NPU_PROG_VERSION_MAJOR || hdr.flags ||
	    !npu_all_zero(hdr.reserved, sizeof(hdr.reserved)) ||
	    hdr.insn_count > NPU_PROG_MAX_INSNS ||
	    hdr.insn_offset % 64 || hdr.insn_offset < sizeof(hdr) ||
	    (uint64_t)hdr.insn_offset + (uint64_t)hdr.insn_count * NPU_INSN_SIZE >
	    d->prog_size) {
		npu_task_fail(task, NPU_TASK_BAD_DESCRIPTOR, UINT32_MAX, 0, 0, d->prog_va);
		return NPU_TASK_BAD_DESCRIPTOR;
	}
	task->ninsns = hdr.insn_count;
	task->prog_tick++;
	task->prog_cur = NULL;
	e = prog_find(task, &hdr);
	if (e) {
		e->used = task->prog_tick;
		task->insns = e->insns;
		task->insns_owned = false;
	} else {
		task->insns = calloc(hdr.insn_count ? hdr.insn_count : 1,
				     sizeof(*task->insns));
		if (!task->insns) {
			npu_task_fail(task, NPU_TASK_INTERNAL, UINT32_MAX, 0, 0, 0);
			return NPU_TASK_INTERNAL;
		}
		task->insns_owned = true;
	}
	/*
	 * Every instruction read (in address order, so a fault names the
	 * same first bad page as one read of the whole array would), all
	 * before any is decoded.  Against a kept program, an instruction
	 * that differs is marked (index UINT32_MAX) to be decoded again.
	 * Where the host maps the whole array, it is compared in place
	 * (every page of it translated, so no read could fault).
	 */
	insns_bytes = (size_t)hdr.insn_count * NPU_INSN_SIZE;
	mapped = hdr.insn_count ?
		 npu_mmu_map_pa(task->ft, &tlb, d->prog_va + hdr.insn_offset,
				insns_bytes, false, &insns_pa) : NULL;
	/*
	 * The version is taken before the bytes are read: a write racing
	 * with the read changes it, so the next task reads them again.
	 */
	if (mapped && host->mem_version)
		version = host->mem_version(host->opaque, insns_pa, insns_bytes);
	if (e && version && e->version == version && e->insns_pa == insns_pa) {
		task->prog_cur = e;
		return 0;	/* the very bytes it was decoded from */
	}
	for (uint32_t i = 0; i < hdr.insn_count; i++) {
		struct npu_dinsn *di = &task->insns[i];
		struct npu_hw_insn raw;
		const struct npu_hw_insn *in = &raw;

		if (mapped) {
			in = (const struct npu_hw_insn *)mapped + i;
		} else {
			ret = npu_mmu_read(task->ft, &tlb, d->prog_va + hdr.insn_offset +
					   (uint64_t)i * NPU_INSN_SIZE, &raw,
					   NPU_INSN_SIZE, &fa, &detail);
			if (ret)
				goto mem_fail;
		}
		if (e && !memcmp(in, &di->raw, sizeof(*in)))
			continue;
		changed = true;
		memset(di, 0, sizeof(*di));
		memcpy(&di->raw, in, sizeof(di->raw));
		di->index = UINT32_MAX;
	}
	for (uint32_t i = 0; i < hdr.insn_count; i++) {
		if (task->insns[i].index != UINT32_MAX)
			continue;
		task->insns[i].index = i;
		ret = decode_insn(task, &task->insns[i]);
		if (ret)
			goto decode_fail;
	}
	if (e) {
		e->insns_pa = insns_pa;
		e->version = version;
		task->prog_cur = e;
		/* Its record is of other instructions. */
		if (changed && e->replay) {
			task->prog_bytes -= npu_replay_bytes(e->replay);
			npu_replay_free(e->replay);
			e->replay = NULL;
		}
	} else {
		prog_keep(task, &hdr, insns_pa, version);
	}
	return 0;
mem_fail:
	if (ret == NPU_TASK_MMU_FAULT) {
		task->ft->mmu_fault = true;
		task->ft->mmu_fault_write = false;
	}
	npu_task_fail(task, ret, UINT32_MAX, detail, 0, fa);
decode_fail:
	/* A kept program partly overwritten is no longer a decoded one. */
	if (e)
		npu_task_prog_drop(task, (unsigned)(e - task->prog));
	else
		free(task->insns);
	task->insns = NULL;
	task->insns_owned = false;
	task->ninsns = 0;
	return ret;
}
