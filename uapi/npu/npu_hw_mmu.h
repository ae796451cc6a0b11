/* SPDX-License-Identifier: MIT */
/*
 * M100 device MMU: per-context three-level page tables in DDR.
 *
 * Device virtual addresses are 39 bits.  Each table is one 4 KiB page of
 * 512 little-endian 64-bit entries, indexed by VA bits [38:30] (level 2,
 * the root named by npu_hw_task.pt_base), [29:21] (level 1) and [20:12]
 * (level 0).  Level-2 and level-1 entries point to the next table; level-0
 * entries map one 4 KiB page.  There are no large pages.
 */
#ifndef NPU_HW_MMU_H
#define NPU_HW_MMU_H

#include "npu_hw_common.h"

#define NPU_MMU_PAGE_SHIFT		12
#define NPU_MMU_PAGE_SIZE		(1ull << NPU_MMU_PAGE_SHIFT)
#define NPU_MMU_VA_BITS			39
#define NPU_MMU_LEVELS			3
#define NPU_MMU_ENTRIES			512
#define NPU_MMU_LEVEL_SHIFT(l)		(NPU_MMU_PAGE_SHIFT + 9 * (l))
#define NPU_MMU_INDEX(va, l)		(((va) >> NPU_MMU_LEVEL_SHIFT(l)) & 0x1ff)

/* Page-table entry bits. */
#define NPU_PTE_VALID			(1ull << 0)
#define NPU_PTE_READ			(1ull << 1)	/* leaf only */
#define NPU_PTE_WRITE			(1ull << 2)	/* leaf only */
#define NPU_PTE_ADDR_MASK		0x000ffffffffff000ull	/* bits 51:12 */
/* Any other bit set in a valid entry is a fault (NPU_FAULT_DETAIL_BAD_PTE). */
#define NPU_PTE_TABLE_KNOWN		(NPU_PTE_VALID | NPU_PTE_ADDR_MASK)
#define NPU_PTE_LEAF_KNOWN		(NPU_PTE_VALID | NPU_PTE_READ | NPU_PTE_WRITE | \
					 NPU_PTE_ADDR_MASK)

#endif /* NPU_HW_MMU_H */
