/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Copyright (c) 2026 The M100 NPU authors */

#ifndef NPU_MMU_H
#define NPU_MMU_H

#include <linux/scatterlist.h>
#include <linux/types.h>

struct npu_device;

/**
 * struct npu_pt - one 4 KiB page-table page the device walks
 * @cpu: its entries.
 * @dma: its bus address.
 * @child: for directory levels: the tables its entries point to.
 */
struct npu_pt {
	u64 *cpu;
	dma_addr_t dma;
	struct npu_pt **child;
};

/**
 * struct npu_vm - a device address space (one per context)
 * @ndev: the device.
 * @root: top-level table; its bus address goes in npu_hw_task.pt_base.
 * @asid: address-space id (npu_hw_task.asid, MMU invalidation).
 *
 * Callers serialise map/unmap (npu_file.lock); the device reads the
 * tables concurrently, so entries are written whole.
 */
struct npu_vm {
	struct npu_device *ndev;
	struct npu_pt root;
	u16 asid;
};

struct npu_vm *npu_vm_create(struct npu_device *ndev);
void npu_vm_destroy(struct npu_vm *vm);
int npu_vm_map(struct npu_vm *vm, u64 va, struct sg_table *sgt, u64 size,
	       bool writable);
void npu_vm_unmap(struct npu_vm *vm, u64 va, u64 size);

#endif /* NPU_MMU_H */
