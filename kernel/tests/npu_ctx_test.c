// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * KUnit: the driver's partition allocator (npu_ctx_reserve() and
 * npu_ctx_release_partition() in kernel/npu_ctx.c): clusters, the CCB
 * SRAM window in proportion to them, the queue, the device-wide context
 * table; on a fake M100 (no registers: the fields probe would read) with
 * every defect mask of up to two fused clusters.
 *
 * Copyright (c) 2026 The M100 NPU authors
 */

#include <kunit/device.h>
#include <kunit/test.h>
#include <linux/bitops.h>
#include <linux/slab.h>

#include "npu/npu_hw.h"
#include "../npu_ctx.h"
#include "../npu_device.h"

#define NCL	NPU_M100_CLUSTERS
#define SRAM	NPU_M100_SRAM_SIZE

/* A device as npu_probe() leaves it, with @defects fused. */
static struct npu_device *npu_test_dev(struct kunit *test, u32 defects)
{
	struct npu_device *ndev = kzalloc(sizeof(*ndev), GFP_KERNEL);
	struct drm_npu_device_info *info;

	KUNIT_ASSERT_NOT_NULL(test, ndev);
	ndev->drm.dev = test->priv;
	info = &ndev->info;
	info->clusters = NCL;
	info->mesh_x = NPU_M100_MESH_X;
	info->mesh_y = NPU_M100_MESH_Y;
	for (u32 c = 0; c < NCL; c++) {
		u32 node = c < 2 ? c + 1 : c + 2;

		info->cluster_pos[c] = node % info->mesh_x |
				       (node / info->mesh_x) << 8;
	}
	info->defect_mask = defects;
	info->healthy_mask = (BIT(NCL) - 1) & ~defects;
	info->healthy_clusters = hweight32(info->healthy_mask);
	info->sram_size = SRAM;
	mutex_init(&ndev->ctx_lock);
	xa_init_flags(&ndev->contexts, XA_FLAGS_ALLOC1);
	ndev->free_clusters = info->healthy_mask;
	drm_mm_init(&ndev->sram_mm, 0, SRAM);
	for (u32 q = 0; q < NPU_HW_NUM_QUEUES; q++)
		ndev->queues[q].index = q;
	return ndev;
}

/* Tear down: everything must have been returned. */
static void npu_test_dev_free(struct kunit *test, struct npu_device *ndev)
{
	KUNIT_EXPECT_EQ(test, ndev->free_clusters, ndev->info.healthy_mask);
	KUNIT_EXPECT_TRUE(test, drm_mm_clean(&ndev->sram_mm));
	KUNIT_EXPECT_TRUE(test, xa_empty(&ndev->contexts));
	for (u32 q = 0; q < NPU_HW_NUM_QUEUES; q++)
		KUNIT_EXPECT_EQ(test, ndev->queues[q].contexts, 0);
	if (drm_mm_clean(&ndev->sram_mm))
		drm_mm_takedown(&ndev->sram_mm);
	xa_destroy(&ndev->contexts);
	mutex_destroy(&ndev->ctx_lock);
	kfree(ndev);
}

static struct npu_ctx *npu_test_ctx(struct kunit *test,
				    struct npu_device *ndev)
{
	struct npu_ctx *ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ctx);
	ctx->ndev = ndev;
	return ctx;
}

/* The SRAM share of a partition of @n clusters out of @healthy. */
static u64 npu_test_sram(u32 n, u32 healthy)
{
	return round_down((u64)SRAM * n / healthy, NPU_M100_SRAM_INTERLEAVE);
}

static int npu_ctx_test_init(struct kunit *test)
{
	struct device *dev = kunit_device_register(test, "npu-kunit-ctx");

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dev);
	test->priv = dev;
	return 0;
}

/* Two partitions on a healthy M100, worked out by hand. */
static void npu_ctx_test_known(struct kunit *test)
{
	struct npu_device *ndev = npu_test_dev(test, 0);
	struct npu_ctx *a = npu_test_ctx(test, ndev);
	struct npu_ctx *b = npu_test_ctx(test, ndev);
	static const u8 map_a[] = { 0, 1, 3, 4 }, map_b[] = { 6, 7, 10, 11 };

	KUNIT_ASSERT_EQ(test, npu_ctx_reserve(a, 4), 0);
	KUNIT_EXPECT_EQ(test, a->nclusters, 4);
	KUNIT_EXPECT_EQ(test, a->cluster_mask, 0x001b);
	KUNIT_EXPECT_MEMEQ(test, a->cluster_map, map_a, 4);
	/* 32 MiB * 4 / 14, in 4 KiB banks. */
	KUNIT_EXPECT_EQ(test, a->sram.start, 0);
	KUNIT_EXPECT_EQ(test, a->sram.size, 9584640);
	KUNIT_EXPECT_EQ(test, a->queue->index, 0);
	KUNIT_EXPECT_PTR_EQ(test, xa_load(&ndev->contexts, a->gid), a);
	KUNIT_EXPECT_EQ(test, ndev->free_clusters, 0x3fe4);

	KUNIT_ASSERT_EQ(test, npu_ctx_reserve(b, 4), 0);
	KUNIT_EXPECT_EQ(test, b->cluster_mask, 0x0cc0);
	KUNIT_EXPECT_MEMEQ(test, b->cluster_map, map_b, 4);
	KUNIT_EXPECT_EQ(test, b->sram.start, 9584640);
	KUNIT_EXPECT_EQ(test, b->queue->index, 1);
	KUNIT_EXPECT_NE(test, b->gid, a->gid);

	npu_ctx_release_partition(a);
	npu_ctx_release_partition(b);
	KUNIT_EXPECT_TRUE(test, a->released);
	npu_test_dev_free(test, ndev);
}

/*
 * Every defect mask of up to two fused clusters: single-cluster contexts
 * fill exactly the healthy clusters, with disjoint SRAM windows and the
 * queues balanced; then one context takes the whole device.
 */
static void npu_ctx_test_every_defect_mask(struct kunit *test)
{
	const u32 nbanks = SRAM / NPU_M100_SRAM_INTERLEAVE;
	struct npu_ctx *ctx = kunit_kcalloc(test, NCL + 1, sizeof(*ctx),
					    GFP_KERNEL);
	unsigned long *banks = kunit_kcalloc(test, BITS_TO_LONGS(nbanks),
					     sizeof(long), GFP_KERNEL);
	u32 masks = 0;

	KUNIT_ASSERT_NOT_NULL(test, ctx);
	KUNIT_ASSERT_NOT_NULL(test, banks);
	for (u32 a = 0; a <= NCL; a++) {
		for (u32 b = a + 1; b <= NCL + 1; b++) {
			u32 defects = (a < NCL ? BIT(a) : 0) |
				      (b < NCL ? BIT(b) : 0);
			u32 h, got = 0, used = 0, qmin = ~0u, qmax = 0;
			struct npu_device *ndev;
			struct npu_ctx *all;

			/* a < b <= NCL + 1: none (a = NCL), one, two fused. */
			if (b == NCL + 1 && a < NCL)
				continue;
			masks++;
			ndev = npu_test_dev(test, defects);
			h = ndev->info.healthy_clusters;
			memset(ctx, 0, (NCL + 1) * sizeof(*ctx));
			bitmap_zero(banks, nbanks);
			for (u32 i = 0; i <= h; i++) {
				struct npu_ctx *c = &ctx[i];
				u32 first, nb;

				c->ndev = ndev;
				if (npu_ctx_reserve(c, 1))
					break;
				got++;
				KUNIT_EXPECT_EQ(test, hweight32(c->cluster_mask), 1);
				KUNIT_EXPECT_EQ(test, c->cluster_mask & (defects | used), 0);
				KUNIT_EXPECT_EQ(test, BIT(c->cluster_map[0]),
						c->cluster_mask);
				used |= c->cluster_mask;
				KUNIT_EXPECT_EQ(test, c->sram.size,
						npu_test_sram(1, h));
				KUNIT_EXPECT_EQ(test, c->sram.start %
						NPU_M100_SRAM_INTERLEAVE, 0);
				KUNIT_ASSERT_LE(test, c->sram.start + c->sram.size,
						SRAM);
				/* No bank of the window is in another one. */
				first = c->sram.start / NPU_M100_SRAM_INTERLEAVE;
				nb = c->sram.size / NPU_M100_SRAM_INTERLEAVE;
				KUNIT_EXPECT_EQ(test, find_next_bit(banks, first + nb,
								    first),
						first + nb);
				bitmap_set(banks, first, nb);
			}
			KUNIT_EXPECT_EQ_MSG(test, got, h, "defects %#x", defects);
			KUNIT_EXPECT_EQ(test, ndev->free_clusters, 0);
			for (u32 q = 0; q < NPU_HW_NUM_QUEUES; q++) {
				qmin = min(qmin, ndev->queues[q].contexts);
				qmax = max(qmax, ndev->queues[q].contexts);
			}
			KUNIT_EXPECT_LE(test, qmax - qmin, 1);
			for (u32 i = 0; i < got; i++)
				npu_ctx_release_partition(&ctx[i]);
			KUNIT_EXPECT_EQ(test, ndev->free_clusters,
					ndev->info.healthy_mask);

			all = &ctx[NCL];
			memset(all, 0, sizeof(*all));
			all->ndev = ndev;
			KUNIT_EXPECT_EQ(test, npu_ctx_reserve(all, h), 0);
			KUNIT_EXPECT_EQ(test, all->cluster_mask,
					ndev->info.healthy_mask);
			KUNIT_EXPECT_EQ(test, all->sram.size, SRAM);
			npu_ctx_release_partition(all);
			npu_test_dev_free(test, ndev);
		}
	}
	KUNIT_EXPECT_EQ(test, masks, 106);
}

/*
 * The SRAM windows fragment: with the first and third of four partitions
 * gone, eight clusters are free but no SRAM hole holds eight clusters'
 * share.  The refusal changes nothing; a smaller partition still fits.
 */
static void npu_ctx_test_sram_fragmentation(struct kunit *test)
{
	struct npu_device *ndev = npu_test_dev(test, 0);
	static const u32 sizes[] = { 4, 4, 4, 2 };
	struct npu_ctx *ctx[4], *big, *small;
	u32 free, queued[NPU_HW_NUM_QUEUES];

	for (u32 i = 0; i < 4; i++) {
		ctx[i] = npu_test_ctx(test, ndev);
		KUNIT_ASSERT_EQ(test, npu_ctx_reserve(ctx[i], sizes[i]), 0);
	}
	KUNIT_EXPECT_EQ(test, ndev->free_clusters, 0);
	npu_ctx_release_partition(ctx[0]);
	npu_ctx_release_partition(ctx[2]);
	free = ndev->free_clusters;
	KUNIT_EXPECT_EQ(test, hweight32(free), 8);
	for (u32 q = 0; q < NPU_HW_NUM_QUEUES; q++)
		queued[q] = ndev->queues[q].contexts;

	big = npu_test_ctx(test, ndev);
	KUNIT_EXPECT_EQ(test, npu_ctx_reserve(big, 8), -ENOSPC);
	KUNIT_EXPECT_EQ(test, ndev->free_clusters, free);
	for (u32 q = 0; q < NPU_HW_NUM_QUEUES; q++)
		KUNIT_EXPECT_EQ(test, ndev->queues[q].contexts, queued[q]);
	KUNIT_EXPECT_FALSE(test, drm_mm_node_allocated(&big->sram));

	small = npu_test_ctx(test, ndev);
	KUNIT_ASSERT_EQ(test, npu_ctx_reserve(small, 4), 0);
	KUNIT_EXPECT_EQ(test, small->sram.size, npu_test_sram(4, NCL));
	KUNIT_EXPECT_EQ(test, small->cluster_mask & ~free, 0);

	npu_ctx_release_partition(small);
	npu_ctx_release_partition(ctx[1]);
	npu_ctx_release_partition(ctx[3]);
	npu_test_dev_free(test, ndev);
}

/* Releasing twice returns the clusters once: a later owner keeps them. */
static void npu_ctx_test_release_once(struct kunit *test)
{
	struct npu_device *ndev = npu_test_dev(test, BIT(5));
	struct npu_ctx *a = npu_test_ctx(test, ndev);
	struct npu_ctx *b = npu_test_ctx(test, ndev);

	KUNIT_ASSERT_EQ(test, npu_ctx_reserve(a, 6), 0);
	npu_ctx_release_partition(a);
	KUNIT_ASSERT_EQ(test, npu_ctx_reserve(b, 6), 0);
	KUNIT_EXPECT_EQ(test, b->cluster_mask, a->cluster_mask);
	npu_ctx_release_partition(a);
	KUNIT_EXPECT_EQ(test, ndev->free_clusters & b->cluster_mask, 0);
	KUNIT_EXPECT_TRUE(test, drm_mm_node_allocated(&b->sram));
	KUNIT_EXPECT_PTR_EQ(test, xa_load(&ndev->contexts, b->gid), b);
	npu_ctx_release_partition(b);
	npu_test_dev_free(test, ndev);
}

static struct kunit_case npu_ctx_cases[] = {
	KUNIT_CASE(npu_ctx_test_known),
	KUNIT_CASE_SLOW(npu_ctx_test_every_defect_mask),
	KUNIT_CASE(npu_ctx_test_sram_fragmentation),
	KUNIT_CASE(npu_ctx_test_release_once),
	{}
};

static struct kunit_suite npu_ctx_suite = {
	.name = "npu_ctx_partition",
	.init = npu_ctx_test_init,
	.test_cases = npu_ctx_cases,
};

kunit_test_suite(npu_ctx_suite);
