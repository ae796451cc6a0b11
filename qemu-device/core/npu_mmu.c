// SPDX-License-Identifier: MIT
/*
 * Device MMU: three-level page-table walk (npu_hw_mmu.h) with a small
 * per-walker TLB.  A task only ever walks the tables named by its own
 * descriptor, which is what isolates contexts from each other.
 */
#include <stdatomic.h>
#include <string.h>

#include "npu_core_priv.h"

#define PERM_R 1
#define PERM_W 2

static unsigned tlb_slot(uint64_t vpn)
{
	return (unsigned)((vpn ^ vpn >> 6 ^ vpn >> 12) % NPU_MMU_TLB_ENTRIES);
}

/*
 * Page-table entries at physical @pa: read in place where the host maps
 * them (inside a memory bracket), which costs no callback per entry,
 * else through mem_read.  0, or -1 where there is no memory.
 */
static int pt_read(struct npu_core *core, uint64_t pa, void *buf, size_t len)
{
	const void *p = core->host.mem_map ?
			core->host.mem_map(core->host.opaque, pa, len, false) : NULL;

	if (p) {
		memcpy(buf, p, len);
		return 0;
	}
	return core->host.mem_read(core->host.opaque, pa, buf, len);
}

static int walk(struct npu_core_task *task, uint64_t va, uint64_t *page_pa,
		uint8_t *perm, uint32_t *detail, uint64_t *fault_pa)
{
	struct npu_core *core = task->core;
	uint64_t table = task->desc.pt_base, pte = 0;

	for (int level = NPU_MMU_LEVELS - 1; level >= 0; level--) {
		uint64_t ea = table + 8 * NPU_MMU_INDEX(va, level);

		if (pt_read(core, ea, &pte, sizeof(pte))) {
			/* The table itself is not in memory: a bus error at
			 * the entry's physical address, not a translation fault. */
			*detail = 0;
			*fault_pa = ea;
			return NPU_TASK_BUS_ERROR;
		}
		if (!(pte & NPU_PTE_VALID)) {
			*detail = NPU_FAULT_DETAIL_NOT_MAPPED;
			return NPU_TASK_MMU_FAULT;
		}
		if (pte & ~(level ? NPU_PTE_TABLE_KNOWN : NPU_PTE_LEAF_KNOWN)) {
			*detail = NPU_FAULT_DETAIL_BAD_PTE;
			return NPU_TASK_MMU_FAULT;
		}
		table = pte & NPU_PTE_ADDR_MASK;
	}
	*page_pa = table;
	*perm = (pte & NPU_PTE_READ ? PERM_R : 0) | (pte & NPU_PTE_WRITE ? PERM_W : 0);
	return 0;
}

int npu_mmu_translate(struct npu_core_task *task, struct npu_mmu_tlb *tlb,
		      uint64_t va, bool write, uint64_t *pa,
		      uint64_t *fault_addr, uint32_t *detail)
{
	uint64_t vpn = va >> NPU_MMU_PAGE_SHIFT, page_pa = 0;
	unsigned slot = tlb_slot(vpn);
	uint8_t perm = 0;
	int ret;

	*detail = write ? NPU_FAULT_DETAIL_WRITE : 0;
	if (!task->mmu_on) {
		*pa = va;	/* bring-up mode: DDR addresses are physical */
		return 0;
	}
	if (va >> NPU_MMU_VA_BITS) {
		*detail |= NPU_FAULT_DETAIL_NOT_MAPPED;
		ret = NPU_TASK_MMU_FAULT;
		goto fault;
	}
	if (tlb && tlb->valid[slot] && tlb->vpn[slot] == vpn) {
		page_pa = tlb->pa[slot];
		perm = tlb->perm[slot];
	} else {
		uint32_t why = 0;

		uint64_t fault_pa = 0;

		ret = walk(task, va, &page_pa, &perm, &why, &fault_pa);
		if (ret == NPU_TASK_BUS_ERROR) {
			*fault_addr = fault_pa;
			return ret;
		}
		if (ret) {
			*detail |= why;
			goto fault;
		}
		if (tlb) {
			tlb->valid[slot] = true;
			tlb->vpn[slot] = vpn;
			tlb->pa[slot] = page_pa;
			tlb->perm[slot] = perm;
		}
	}
	if (!(perm & (write ? PERM_W : PERM_R))) {
		*detail |= NPU_FAULT_DETAIL_PERM;
		ret = NPU_TASK_MMU_FAULT;
		goto fault;
	}
	*pa = page_pa | (va & (NPU_MMU_PAGE_SIZE - 1));
	return 0;
fault:
	*fault_addr = va;
	return ret;
}

/*
 * The host access of @len bytes at @pa: one call, or page by page when it
 * fails, so that a bus error names the first page that is not backed.
 */
static int host_rw(struct npu_core *core, uint64_t pa, uint8_t *p, size_t len, bool write)
{
	return write ? core->host.mem_write(core->host.opaque, pa, p, len) :
		       core->host.mem_read(core->host.opaque, pa, p, len);
}

static int host_copy(struct npu_core *core, uint64_t pa, uint8_t *p, size_t len,
		     bool write, uint64_t *fault_addr)
{
	int ret = host_rw(core, pa, p, len, write);

	for (size_t off = 0; ret && off < len;) {
		size_t chunk = NPU_MMU_PAGE_SIZE - ((pa + off) & (NPU_MMU_PAGE_SIZE - 1));

		if (chunk > len - off)
			chunk = len - off;
		if (host_rw(core, pa + off, p + off, chunk, write)) {
			*fault_addr = pa + off;
			return NPU_TASK_BUS_ERROR;
		}
		off += chunk;
	}
	return 0;
}

/*
 * Copy through the MMU, one host access per run of pages that lie together
 * in DDR: a host whose every access is costly (QEMU behind an IOMMU, where
 * the main loop makes it) pays once per run, not once per page.
 */
static int copy(struct npu_core_task *task, struct npu_mmu_tlb *tlb, uint64_t va,
		void *buf, size_t len, bool write, uint64_t *fault_addr,
		uint32_t *detail)
{
	struct npu_core *core = task->core;
	uint8_t *p = buf;

	while (len) {
		size_t run = NPU_MMU_PAGE_SIZE - (va & (NPU_MMU_PAGE_SIZE - 1));
		uint64_t pa;
		int ret;

		if (run > len)
			run = len;
		ret = npu_mmu_translate(task, tlb, va, write, &pa, fault_addr, detail);
		if (ret)
			return ret;
		/* A page that does not translate ends the run; it faults below. */
		while (run < len) {
			size_t chunk = len - run < NPU_MMU_PAGE_SIZE ? len - run : NPU_MMU_PAGE_SIZE;
			uint64_t next_pa, fa;
			uint32_t det;

			if (npu_mmu_translate(task, tlb, va + run, write, &next_pa, &fa, &det) ||
			    next_pa != pa + run)
				break;
			run += chunk;
		}
		ret = host_copy(core, pa, p, run, write, fault_addr);
		if (ret)
			return ret;	/* mapped, but the physical page is not backed */
		va += run;
		p += run;
		len -= run;
	}
	return 0;
}

int npu_mmu_read(struct npu_core_task *task, struct npu_mmu_tlb *tlb,
		 uint64_t va, void *buf, size_t len, uint64_t *fault_addr,
		 uint32_t *detail)
{
	return copy(task, tlb, va, buf, len, false, fault_addr, detail);
}

int npu_mmu_write(struct npu_core_task *task, struct npu_mmu_tlb *tlb,
		  uint64_t va, const void *buf, size_t len,
		  uint64_t *fault_addr, uint32_t *detail)
{
	return copy(task, tlb, va, (void *)buf, len, true, fault_addr, detail);
}

/* Leaf entries read at once when a range is mapped (npu_mmu_map). */
#define MAP_PTES 64

static bool tlb_hit(const struct npu_mmu_tlb *tlb, uint64_t vpn, bool write,
		    uint64_t *page_pa)
{
	unsigned slot = tlb_slot(vpn);

	if (!tlb || !tlb->valid[slot] || tlb->vpn[slot] != vpn ||
	    !(tlb->perm[slot] & (write ? PERM_W : PERM_R)))
		return false;
	*page_pa = tlb->pa[slot];
	return true;
}

/*
 * Pages [vpn, last] at @write's permission, each at @pa0 + its offset
 * from @first: walk()'s checks, but the leaf entries of one table read
 * MAP_PTES at a time instead of a three-level walk per page.  The pages
 * found go into @tlb, as npu_mmu_translate's walks put them.
 */
static bool range_contiguous(struct npu_core_task *task, struct npu_mmu_tlb *tlb,
			     uint64_t first, uint64_t vpn, uint64_t last,
			     bool write, uint64_t *pa0)
{
	struct npu_core *core = task->core;
	uint64_t ptes[MAP_PTES];

	while (vpn <= last) {
		uint64_t va = vpn << NPU_MMU_PAGE_SHIFT, table = task->desc.pt_base;
		unsigned idx = (unsigned)NPU_MMU_INDEX(va, 0);
		uint64_t n = NPU_MMU_ENTRIES - idx;

		for (int level = NPU_MMU_LEVELS - 1; level >= 1; level--) {
			uint64_t pte;

			if (pt_read(core, table + 8 * NPU_MMU_INDEX(va, level),
				    &pte, sizeof(pte)) ||
			    !(pte & NPU_PTE_VALID) || (pte & ~NPU_PTE_TABLE_KNOWN))
				return false;
			table = pte & NPU_PTE_ADDR_MASK;
		}
		if (n > last - vpn + 1)
			n = last - vpn + 1;
		if (n > MAP_PTES)
			n = MAP_PTES;
		if (pt_read(core, table + 8 * idx, ptes, n * sizeof(ptes[0])))
			return false;
		for (uint64_t i = 0; i < n; i++, vpn++) {
			uint64_t pte = ptes[i], page = pte & NPU_PTE_ADDR_MASK;

			if (!(pte & NPU_PTE_VALID) || (pte & ~NPU_PTE_LEAF_KNOWN) ||
			    !(pte & (write ? NPU_PTE_WRITE : NPU_PTE_READ)))
				return false;
			if (tlb) {
				/* As a walk would: the next view finds it. */
				unsigned slot = tlb_slot(vpn);

				tlb->valid[slot] = true;
				tlb->vpn[slot] = vpn;
				tlb->pa[slot] = page;
				tlb->perm[slot] = (pte & NPU_PTE_READ ? PERM_R : 0) |
						  (pte & NPU_PTE_WRITE ? PERM_W : 0);
			}
			if (vpn == first)
				*pa0 = page;
			else if (page != *pa0 + ((vpn - first) << NPU_MMU_PAGE_SHIFT))
				return false;
		}
	}
	return true;
}

/* The known range holding page @vpn at @write's permission, or NULL. */
static struct npu_mmu_range *range_find(struct npu_mmu_tlb *tlb, uint64_t vpn,
					bool write)
{
	const uint8_t need = write ? PERM_W : PERM_R;

	for (unsigned i = 0; tlb && i < NPU_MMU_TLB_RANGES; i++) {
		struct npu_mmu_range *r = &tlb->range[i];

		if ((r->perm & need) && vpn >= r->first && vpn <= r->last)
			return r;
	}
	return NULL;
}

/*
 * Pages [first, last] are contiguous from @pa0 at @write's permission:
 * grow @r (which held @first) to @last, or take the oldest entry.
 * Ranges of one page are left to the TLB.
 */
static void range_note(struct npu_mmu_tlb *tlb, struct npu_mmu_range *r,
		       uint64_t first, uint64_t last, uint64_t pa0, bool write)
{
	if (!tlb || first == last)
		return;
	if (r) {
		if (last > r->last)
			r->last = last;
		return;
	}
	r = &tlb->range[tlb->range_next];
	tlb->range_next = (tlb->range_next + 1) % NPU_MMU_TLB_RANGES;
	r->first = first;
	r->last = last;
	r->pa = pa0;
	r->perm = write ? PERM_W : PERM_R;
}

static atomic_uint_fast64_t bracket_ids;
/* The id of the bracket this thread is in, 0 outside one. */
static _Thread_local uint64_t bracket_cur;

void npu_mmu_bracket_enter(void)
{
	bracket_cur = atomic_fetch_add(&bracket_ids, 1) + 1;
}

void npu_mmu_bracket_leave(void)
{
	bracket_cur = 0;
}

/* @va's @len bytes inside one of @tlb's read maps of this bracket: their host pointer. */
static const uint8_t *read_map_hit(const struct npu_mmu_tlb *tlb, uint64_t va,
				   size_t len, uint64_t *pa)
{
	for (unsigned i = 0; i < NPU_MMU_READ_MAPS; i++) {
		const struct npu_mmu_read_map *m = &tlb->read_map[i];

		if (m->bracket && m->bracket == bracket_cur && va >= m->va &&
		    va - m->va <= m->len && len <= m->len - (va - m->va)) {
			*pa = m->pa + (va - m->va);
			return m->host + (va - m->va);
		}
	}
	return NULL;
}

/*
 * For a read of pages [first, last], translated contiguous from @pa0: ask
 * the host for the whole pages and keep them among @tlb's read maps (in
 * place of the oldest), so that the next reads of the same pages in this
 * bracket skip the translation and the host.  NULL when the host does
 * not give the whole pages (the caller then asks for the bytes alone).
 */
static const uint8_t *read_map_fill(struct npu_core *core, struct npu_mmu_tlb *tlb,
				    uint64_t first, uint64_t last, uint64_t pa0)
{
	uint64_t len = (last - first + 1) << NPU_MMU_PAGE_SHIFT;
	struct npu_mmu_read_map *m;
	const uint8_t *host;

	if (!bracket_cur)
		return NULL;
	host = core->host.mem_map(core->host.opaque, pa0, len, false);
	if (!host)
		return NULL;
	m = &tlb->read_map[tlb->read_map_next];
	tlb->read_map_next = (tlb->read_map_next + 1) % NPU_MMU_READ_MAPS;
	m->bracket = bracket_cur;
	m->va = first << NPU_MMU_PAGE_SHIFT;
	m->len = len;
	m->pa = pa0;
	m->host = host;
	return host;
}

void *npu_mmu_map_pa(struct npu_core_task *task, struct npu_mmu_tlb *tlb,
		     uint64_t va, size_t len, bool write, uint64_t *pa)
{
	struct npu_core *core = task->core;
	uint64_t first, last, vpn, pa0 = 0, page;
	struct npu_mmu_range *r;
	const uint8_t *host;

	if (!core->host.mem_map || !len)
		return NULL;
	if (!task->mmu_on) {
		*pa = va;
		return core->host.mem_map(core->host.opaque, va, len, write);
	}
	if (va >> NPU_MMU_VA_BITS || len - 1 > (1ull << NPU_MMU_VA_BITS) - 1 - va)
		return NULL;
	/* Kept for reads only: the caller never writes through it. */
	if (!write && tlb && (host = read_map_hit(tlb, va, len, pa)))
		return (void *)host;
	first = va >> NPU_MMU_PAGE_SHIFT;
	last = (va + len - 1) >> NPU_MMU_PAGE_SHIFT;
	/*
	 * The pages a known range holds, then those the TLB holds, then the
	 * rest from the tables.  Pages found in a range were translated in
	 * this task as a walk would translate them (mmu.md: a task may or may
	 * not see table changes made while it runs).
	 */
	r = range_find(tlb, first, write);
	if (r) {
		pa0 = r->pa + ((first - r->first) << NPU_MMU_PAGE_SHIFT);
		vpn = (last < r->last ? last : r->last) + 1;
	} else {
		vpn = first;
	}
	for (; vpn <= last && tlb_hit(tlb, vpn, write, &page); vpn++) {
		if (vpn == first)
			pa0 = page;
		else if (page != pa0 + ((vpn - first) << NPU_MMU_PAGE_SHIFT))
			return NULL;
	}
	if (vpn <= last && !range_contiguous(task, tlb, first, vpn, last, write, &pa0))
		return NULL;
	range_note(tlb, r, first, last, pa0, write);
	*pa = pa0 | (va & (NPU_MMU_PAGE_SIZE - 1));
	if (!write && tlb && (host = read_map_fill(core, tlb, first, last, pa0)))
		return (void *)(host + (va & (NPU_MMU_PAGE_SIZE - 1)));
	return core->host.mem_map(core->host.opaque, *pa, len, write);
}

void *npu_mmu_map(struct npu_core_task *task, struct npu_mmu_tlb *tlb,
		  uint64_t va, size_t len, bool write)
{
	uint64_t pa;

	return npu_mmu_map_pa(task, tlb, va, len, write, &pa);
}
