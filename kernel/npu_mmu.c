// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Device page tables: three levels of 512 entries (Documentation/hw/mmu.md),
 * one tree per context.  Table pages are DMA-coherent memory of the DRM
 * device's parent (the PCI function; a KUnit fake device in
 * kernel/tests/npu_mmu_test.c); directory levels keep CPU pointers to their
 * children.
 *
 * Copyright (c) 2026 The M100 NPU authors
 */

#include <linux/dma-mapping.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>

#include "npu_device.h"
#include "npu_mmu.h"

static int npu_pt_alloc(struct npu_device *ndev, struct npu_pt *pt, int level)
{
	pt->cpu = dma_alloc_coherent(ndev->drm.dev, NPU_MMU_PAGE_SIZE,
				     &pt->dma, GFP_KERNEL);
	if (!pt->cpu)
		return -ENOMEM;
	if (level > 0) {
		pt->child = kcalloc(NPU_MMU_ENTRIES, sizeof(*pt->child),
				    GFP_KERNEL);
		if (!pt->child) {
			dma_free_coherent(ndev->drm.dev, NPU_MMU_PAGE_SIZE,
					  pt->cpu, pt->dma);
			pt->cpu = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

static void npu_pt_free(struct npu_device *ndev, struct npu_pt *pt, int level)
{
	if (!pt->cpu)
		return;
	if (level > 0) {
		for (unsigned int i = 0; i < NPU_MMU_ENTRIES; i++) {
			if (!pt->child[i])
				continue;
			npu_pt_free(ndev, pt->child[i], level - 1);
			kfree(pt->child[i]);
		}
		kfree(pt->child);
	}
	dma_free_coherent(ndev->drm.dev, NPU_MMU_PAGE_SIZE, pt->cpu,
			  pt->dma);
	pt->cpu = NULL;
}

struct npu_vm *npu_vm_create(struct npu_device *ndev)
{
	struct npu_vm *vm = kzalloc(sizeof(*vm), GFP_KERNEL);
	int asid;

	if (!vm)
		return ERR_PTR(-ENOMEM);
	vm->ndev = ndev;
	asid = ida_alloc_range(&ndev->asids, 1, 0xffff, GFP_KERNEL);
	if (asid < 0) {
		kfree(vm);
		return ERR_PTR(asid);
	}
	vm->asid = asid;
	if (npu_pt_alloc(ndev, &vm->root, NPU_MMU_LEVELS - 1)) {
		ida_free(&ndev->asids, asid);
		kfree(vm);
		return ERR_PTR(-ENOMEM);
	}
	return vm;
}

void npu_vm_destroy(struct npu_vm *vm)
{
	if (!vm)
		return;
	npu_pt_free(vm->ndev, &vm->root, NPU_MMU_LEVELS - 1);
	ida_free(&vm->ndev->asids, vm->asid);
	kfree(vm);
}

/* The leaf table for @va, allocating directory levels when @alloc. */
static struct npu_pt *npu_vm_leaf(struct npu_vm *vm, u64 va, bool alloc)
{
	struct npu_pt *pt = &vm->root;

	for (int level = NPU_MMU_LEVELS - 1; level > 0; level--) {
		unsigned int idx = NPU_MMU_INDEX(va, level);
		struct npu_pt *next = pt->child[idx];

		if (!next) {
			if (!alloc)
				return NULL;
			next = kzalloc(sizeof(*next), GFP_KERNEL);
			if (!next)
				return NULL;
			if (npu_pt_alloc(vm->ndev, next, level - 1)) {
				kfree(next);
				return NULL;
			}
			pt->child[idx] = next;
			WRITE_ONCE(pt->cpu[idx], next->dma | NPU_PTE_VALID);
		}
		pt = next;
	}
	return pt;
}

int npu_vm_map(struct npu_vm *vm, u64 va, struct sg_table *sgt, u64 size,
	       bool writable)
{
	u64 flags = NPU_PTE_VALID | NPU_PTE_READ |
		    (writable ? NPU_PTE_WRITE : 0);
	u64 start = va, end = va + size;
	struct scatterlist *sg;
	unsigned int i;

	if (!IS_ALIGNED(va, NPU_MMU_PAGE_SIZE) ||
	    !IS_ALIGNED(size, NPU_MMU_PAGE_SIZE) ||
	    va >= NPU_VA_END || size > NPU_VA_END - va)
		return -EINVAL;
	for_each_sgtable_dma_sg(sgt, sg, i) {
		dma_addr_t addr = sg_dma_address(sg);
		unsigned int len = sg_dma_len(sg);

		for (unsigned int off = 0; off < len && va < end;
		     off += NPU_MMU_PAGE_SIZE, va += NPU_MMU_PAGE_SIZE) {
			struct npu_pt *leaf = npu_vm_leaf(vm, va, true);

			if (!leaf) {
				npu_vm_unmap(vm, start, va - start);
				return -ENOMEM;
			}
			WRITE_ONCE(leaf->cpu[NPU_MMU_INDEX(va, 0)],
				   ((addr + off) & NPU_PTE_ADDR_MASK) | flags);
		}
	}
	if (va != end) {
		/* @sgt is shorter than @size: map nothing. */
		npu_vm_unmap(vm, start, va - start);
		return -EINVAL;
	}
	return 0;
}

void npu_vm_unmap(struct npu_vm *vm, u64 va, u64 size)
{
	int idx;

	for (u64 end = va + size; va < end; va += NPU_MMU_PAGE_SIZE) {
		struct npu_pt *leaf = npu_vm_leaf(vm, va, false);

		if (leaf)
			WRITE_ONCE(leaf->cpu[NPU_MMU_INDEX(va, 0)], 0);
	}
	/*
	 * Completed jobs may have left translations cached; a suspended
	 * device lost them with its power.
	 */
	if (drm_dev_enter(&vm->ndev->drm, &idx)) {
		if (npu_pm_get_if_active(vm->ndev)) {
			npu_wr(vm->ndev, NPU_REG_MMU_INVALIDATE, vm->asid);
			npu_pm_put(vm->ndev);
		}
		drm_dev_exit(idx);
	}
}
