// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * KUnit: the device page tables (kernel/npu_mmu.c).  The tables are
 * DMA-coherent memory of a KUnit fake device standing in for the PCI
 * function; the mapped "pages" are made-up bus addresses in hand-built
 * scatterlists, never touched.  The fake DRM device is marked unplugged so
 * that npu_vm_unmap() skips its MMIO TLB invalidation (drm_dev_enter()
 * fails), as it does after a hot unplug.
 *
 * Copyright (c) 2026 The M100 NPU authors
 */

#include <kunit/device.h>
#include <kunit/test.h>
#include <linux/dma-mapping.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>

#include "../npu_device.h"
#include "../npu_mmu.h"

#define PG	NPU_MMU_PAGE_SIZE

struct npu_mmu_test {
	struct npu_device *ndev;
	struct npu_vm *vm;
};

static int npu_mmu_test_init(struct kunit *test)
{
	struct npu_mmu_test *t;
	struct device *dev;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->ndev = kunit_kzalloc(test, sizeof(*t->ndev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->ndev);
	dev = kunit_device_register(test, "npu-kunit-mmu");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dev);
	KUNIT_ASSERT_EQ(test, dma_set_mask_and_coherent(dev, DMA_BIT_MASK(64)),
			0);
	t->ndev->drm.dev = dev;
	t->ndev->drm.unplugged = true;
	ida_init(&t->ndev->asids);
	t->vm = npu_vm_create(t->ndev);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, t->vm);
	test->priv = t;
	return 0;
}

static void npu_mmu_test_exit(struct kunit *test)
{
	struct npu_mmu_test *t = test->priv;

	if (!t)
		return;
	npu_vm_destroy(t->vm);
	KUNIT_EXPECT_TRUE(test, ida_is_empty(&t->ndev->asids));
	ida_destroy(&t->ndev->asids);
}

/*
 * The leaf entry for @va as the device would find it: through the entries
 * of the upper levels, each of which must point at the CPU's child table.
 * Returns 0 when a level has no table.
 */
static u64 npu_test_pte(struct kunit *test, struct npu_vm *vm, u64 va)
{
	struct npu_pt *pt = &vm->root;

	for (int level = NPU_MMU_LEVELS - 1; level > 0; level--) {
		unsigned int idx = NPU_MMU_INDEX(va, level);
		struct npu_pt *next = pt->child[idx];
		u64 e = READ_ONCE(pt->cpu[idx]);

		if (!next) {
			KUNIT_EXPECT_EQ(test, e, 0);
			return 0;
		}
		KUNIT_EXPECT_EQ(test, e, next->dma | NPU_PTE_VALID);
		KUNIT_EXPECT_EQ(test, e & ~NPU_PTE_TABLE_KNOWN, 0);
		pt = next;
	}
	return READ_ONCE(pt->cpu[NPU_MMU_INDEX(va, 0)]);
}

static void npu_test_sg_free(void *sgt)
{
	sg_free_table(sgt);
}

/* A scatterlist of @n DMA segments: bus address and length of each. */
static struct sg_table *npu_test_sgt(struct kunit *test, const u64 *addr,
				     const u32 *len, unsigned int n)
{
	struct sg_table *sgt = kunit_kzalloc(test, sizeof(*sgt), GFP_KERNEL);
	struct scatterlist *sg;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, sgt);
	KUNIT_ASSERT_EQ(test, sg_alloc_table(sgt, n, GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, npu_test_sg_free,
							sgt), 0);
	for_each_sgtable_sg(sgt, sg, i) {
		sg->length = len[i];
		sg_dma_address(sg) = addr[i];
		sg_dma_len(sg) = len[i];
	}
	sgt->nents = n;
	return sgt;
}

static struct sg_table *npu_test_sgt1(struct kunit *test, u64 addr, u32 len)
{
	return npu_test_sgt(test, &addr, &len, 1);
}

/* Map @len bytes at bus address @addr, one segment. */
static int npu_test_map1(struct kunit *test, struct npu_vm *vm, u64 va,
			 u64 addr, u32 len, bool writable)
{
	return npu_vm_map(vm, va, npu_test_sgt1(test, addr, len), len,
			  writable);
}

#define RW	(NPU_PTE_VALID | NPU_PTE_READ | NPU_PTE_WRITE)
#define RO	(NPU_PTE_VALID | NPU_PTE_READ)

static void npu_mmu_test_map_one(struct kunit *test)
{
	struct npu_vm *vm = ((struct npu_mmu_test *)test->priv)->vm;
	u64 va = NPU_VA_START;

	KUNIT_ASSERT_EQ(test, npu_test_map1(test, vm, va, 0x12345000, PG, true),
			0);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va), 0x12345000 | RW);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va) & ~NPU_PTE_LEAF_KNOWN,
			0);
	/* The neighbours stay unmapped. */
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va - PG), 0);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va + PG), 0);
	/* One directory path: one root entry. */
	for (unsigned int i = 0; i < NPU_MMU_ENTRIES; i++)
		KUNIT_EXPECT_EQ(test, !!vm->root.cpu[i],
				i == NPU_MMU_INDEX(va, 2));
}

static void npu_mmu_test_permissions(struct kunit *test)
{
	struct npu_vm *vm = ((struct npu_mmu_test *)test->priv)->vm;
	u64 va = SZ_16M;

	KUNIT_ASSERT_EQ(test, npu_test_map1(test, vm, va, 0x40000000, 2 * PG, false), 0);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va), 0x40000000 | RO);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va + PG),
			0x40001000 | RO);
	/* Mapped again writable (entries are rewritten whole). */
	KUNIT_ASSERT_EQ(test, npu_test_map1(test, vm, va, 0x50000000, 2 * PG, true), 0);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va), 0x50000000 | RW);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va + PG),
			0x50001000 | RW);
}

/* Bad addresses change nothing: no entry, no table. */
static void npu_test_expect_empty(struct kunit *test, struct npu_vm *vm)
{
	for (unsigned int i = 0; i < NPU_MMU_ENTRIES; i++) {
		KUNIT_EXPECT_EQ(test, vm->root.cpu[i], 0);
		KUNIT_EXPECT_NULL(test, vm->root.child[i]);
	}
}

static void npu_mmu_test_unaligned(struct kunit *test)
{
	struct npu_vm *vm = ((struct npu_mmu_test *)test->priv)->vm;
	struct sg_table *sgt = npu_test_sgt1(test, 0x1000000, PG);

	KUNIT_EXPECT_EQ(test, npu_vm_map(vm, SZ_1M + 1, sgt, PG, true),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, npu_vm_map(vm, SZ_1M + PG / 2, sgt, PG, true),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, npu_vm_map(vm, SZ_1M + PG - 1, sgt, PG, true),
			-EINVAL);
	/* A size that ends inside a page. */
	sgt = npu_test_sgt1(test, 0x1000000, 2 * PG);
	KUNIT_EXPECT_EQ(test, npu_vm_map(vm, SZ_1M, sgt, PG + 1, true),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, npu_vm_map(vm, SZ_1M, sgt, 2 * PG - 1, true),
			-EINVAL);
	npu_test_expect_empty(test, vm);
}

/* Device addresses are 39 bits: the last page maps, nothing beyond. */
static void npu_mmu_test_va_limit(struct kunit *test)
{
	struct npu_vm *vm = ((struct npu_mmu_test *)test->priv)->vm;
	struct sg_table *one = npu_test_sgt1(test, 0x7000000, PG);
	struct sg_table *two = npu_test_sgt1(test, 0x7000000, 2 * PG);
	u64 last = BIT_ULL(39) - PG;

	KUNIT_EXPECT_EQ(test, npu_vm_map(vm, BIT_ULL(39), one, PG, true),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, npu_vm_map(vm, last, two, 2 * PG, true),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, npu_vm_map(vm, BIT_ULL(40), one, PG, true),
			-EINVAL);
	/* va + size wraps around 2^64. */
	KUNIT_EXPECT_EQ(test, npu_vm_map(vm, 0ull - PG, two, 2 * PG, true),
			-EINVAL);
	npu_test_expect_empty(test, vm);

	KUNIT_ASSERT_EQ(test, npu_vm_map(vm, last, one, PG, true), 0);
	KUNIT_EXPECT_EQ(test, NPU_MMU_INDEX(last, 2), 511);
	KUNIT_EXPECT_EQ(test, NPU_MMU_INDEX(last, 1), 511);
	KUNIT_EXPECT_EQ(test, NPU_MMU_INDEX(last, 0), 511);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, last), 0x7000000 | RW);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, last - PG), 0);
	/* Bit 39 is not an index bit: 2^39 would alias page 0. */
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, 0), 0);
}

/* A mapping across a leaf table (2 MiB) and a level-1 table (1 GiB). */
static void npu_mmu_test_table_edges(struct kunit *test)
{
	struct npu_vm *vm = ((struct npu_mmu_test *)test->priv)->vm;
	u64 va2m = SZ_4M - 2 * PG, va1g = SZ_1G - PG;

	KUNIT_ASSERT_EQ(test, npu_test_map1(test, vm, va2m, 0x200000, 4 * PG, true), 0);
	for (u64 i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va2m + i * PG),
				(0x200000 + i * PG) | RW);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va2m - PG), 0);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va2m + 4 * PG), 0);
	/* Two leaf tables under one level-1 table. */
	KUNIT_EXPECT_NE(test, NPU_MMU_INDEX(va2m, 1),
			NPU_MMU_INDEX(va2m + 2 * PG, 1));
	KUNIT_EXPECT_EQ(test, NPU_MMU_INDEX(va2m, 0), 510);
	KUNIT_EXPECT_EQ(test, NPU_MMU_INDEX(va2m + 2 * PG, 0), 0);

	KUNIT_ASSERT_EQ(test, npu_test_map1(test, vm, va1g, 0x900000, 2 * PG, false), 0);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va1g), 0x900000 | RO);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va1g + PG),
			0x901000 | RO);
	KUNIT_EXPECT_NE(test, NPU_MMU_INDEX(va1g, 2),
			NPU_MMU_INDEX(va1g + PG, 2));
	KUNIT_EXPECT_NOT_NULL(test, vm->root.child[0]);
	KUNIT_EXPECT_NOT_NULL(test, vm->root.child[1]);
	/* The first mapping is intact. */
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va2m), 0x200000 | RW);
}

/* Segments of different sizes map page by page, in order. */
static void npu_mmu_test_segments(struct kunit *test)
{
	static const u64 addr[] = { 0x100000, 0x800000, 0x300000 };
	static const u32 len[] = { 2 * PG, PG, 3 * PG };
	static const u64 want[] = { 0x100000, 0x101000, 0x800000,
				    0x300000, 0x301000, 0x302000 };
	struct npu_vm *vm = ((struct npu_mmu_test *)test->priv)->vm;
	struct sg_table *sgt = npu_test_sgt(test, addr, len, 3);
	u64 va = SZ_2M - 3 * PG;

	KUNIT_ASSERT_EQ(test, npu_vm_map(vm, va, sgt, 6 * PG, true), 0);
	for (unsigned int i = 0; i < ARRAY_SIZE(want); i++)
		KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va + i * PG),
				want[i] | RW);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va + 6 * PG), 0);

	/* A size below the scatterlist's maps that much only. */
	KUNIT_ASSERT_EQ(test, npu_vm_map(vm, SZ_1G, sgt, 2 * PG, false), 0);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, SZ_1G + PG),
			0x101000 | RO);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, SZ_1G + 2 * PG), 0);
}

/* A scatterlist shorter than the size fails and leaves nothing mapped. */
static void npu_mmu_test_short_sgt(struct kunit *test)
{
	struct npu_vm *vm = ((struct npu_mmu_test *)test->priv)->vm;
	u64 va = SZ_8M;

	KUNIT_EXPECT_EQ(test, npu_vm_map(vm, va, npu_test_sgt1(test, 0x600000, PG),
					 3 * PG, true), -EINVAL);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va), 0);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va + PG), 0);
}

static void npu_mmu_test_unmap(struct kunit *test)
{
	struct npu_vm *vm = ((struct npu_mmu_test *)test->priv)->vm;
	u64 va = SZ_32M;

	KUNIT_ASSERT_EQ(test, npu_test_map1(test, vm, va, 0xa00000, 3 * PG, true), 0);
	npu_vm_unmap(vm, va + PG, PG);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va), 0xa00000 | RW);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va + PG), 0);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va + 2 * PG),
			0xa02000 | RW);
	npu_vm_unmap(vm, va, 3 * PG);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va), 0);
	KUNIT_EXPECT_EQ(test, npu_test_pte(test, vm, va + 2 * PG), 0);
}

/* Unmapping what was never mapped allocates no table. */
static void npu_mmu_test_unmap_unmapped(struct kunit *test)
{
	struct npu_vm *vm = ((struct npu_mmu_test *)test->priv)->vm;

	npu_vm_unmap(vm, BIT_ULL(35), 3 * PG);
	npu_vm_unmap(vm, BIT_ULL(39) - PG, PG);
	npu_test_expect_empty(test, vm);
}

/* Every address space has its own nonzero id, released on destroy. */
static void npu_mmu_test_asid(struct kunit *test)
{
	struct npu_mmu_test *t = test->priv;
	struct npu_vm *b, *c;
	u16 asid_b;

	KUNIT_EXPECT_NE(test, t->vm->asid, 0);
	b = npu_vm_create(t->ndev);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, b);
	KUNIT_EXPECT_NE(test, b->asid, 0);
	KUNIT_EXPECT_NE(test, b->asid, t->vm->asid);
	KUNIT_EXPECT_NE(test, b->root.dma, t->vm->root.dma);
	asid_b = b->asid;
	npu_vm_destroy(b);
	c = npu_vm_create(t->ndev);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	KUNIT_EXPECT_EQ(test, c->asid, asid_b);
	npu_vm_destroy(c);
	npu_vm_destroy(NULL);
}

static struct kunit_case npu_mmu_cases[] = {
	KUNIT_CASE(npu_mmu_test_map_one),
	KUNIT_CASE(npu_mmu_test_permissions),
	KUNIT_CASE(npu_mmu_test_unaligned),
	KUNIT_CASE(npu_mmu_test_va_limit),
	KUNIT_CASE(npu_mmu_test_table_edges),
	KUNIT_CASE(npu_mmu_test_segments),
	KUNIT_CASE(npu_mmu_test_short_sgt),
	KUNIT_CASE(npu_mmu_test_unmap),
	KUNIT_CASE(npu_mmu_test_unmap_unmapped),
	KUNIT_CASE(npu_mmu_test_asid),
	{}
};

static struct kunit_suite npu_mmu_suite = {
	.name = "npu_mmu",
	.init = npu_mmu_test_init,
	.exit = npu_mmu_test_exit,
	.test_cases = npu_mmu_cases,
};

kunit_test_suite(npu_mmu_suite);
