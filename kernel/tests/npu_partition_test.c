// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * KUnit: the cluster partition allocator (uapi/npu/npu_hw_partition.h, used
 * by npu_ctx_reserve()) on the M100 mesh, over every defect mask of up to
 * two fused clusters, with hand-computed partitions and fragmentation.
 *
 * Copyright (c) 2026 The M100 NPU authors
 */

#include <kunit/test.h>
#include <linux/bitops.h>
#include <linux/prandom.h>

#include "npu/npu_hw.h"
#include "npu/npu_hw_partition.h"

#define MESH_X	NPU_M100_MESH_X
#define MESH_Y	NPU_M100_MESH_Y
#define NCL	NPU_M100_CLUSTERS
#define ALL	(BIT(NCL) - 1)

/*
 * The default placement (npu_hw_geom.h, tests/guest/run.sh): the CCB at
 * node 0, the DDR port at node 3, cluster c at node c + 1, or c + 2 from
 * cluster 2 on.  Position = x | y << 8, as NPU_REG_CLUSTER_POS reads.
 */
static void npu_test_m100_pos(u32 *pos)
{
	for (u32 c = 0; c < NCL; c++) {
		u32 node = c < 2 ? c + 1 : c + 2;

		pos[c] = node % MESH_X | (node / MESH_X) << 8;
	}
}

/* Positions of the set bits of @mask: the bounding rectangle. */
static void npu_test_bbox(const u32 *pos, u32 mask, u32 *w, u32 *h)
{
	u32 x0 = ~0u, y0 = ~0u, x1 = 0, y1 = 0;

	for (u32 c = 0; c < NCL; c++) {
		u32 x = pos[c] & 0xff, y = pos[c] >> 8;

		if (!(mask & BIT(c)))
			continue;
		x0 = min(x0, x);
		x1 = max(x1, x);
		y0 = min(y0, y);
		y1 = max(y1, y);
	}
	*w = x1 - x0 + 1;
	*h = y1 - y0 + 1;
}

/*
 * An independent search: the smallest area of a w x h window holding at
 * least @n of @free, and the least |w - h| among windows of that area.
 */
static void npu_test_best(const u32 *pos, u32 free, u32 n, u32 *area,
			  u32 *skew)
{
	*area = ~0u;
	*skew = ~0u;
	for (u32 h = 1; h <= MESH_Y; h++)
		for (u32 w = 1; w <= MESH_X; w++)
			for (u32 y = 0; y + h <= MESH_Y; y++)
				for (u32 x = 0; x + w <= MESH_X; x++) {
					u32 cnt = 0, d = w > h ? w - h : h - w;

					for (u32 c = 0; c < NCL; c++) {
						u32 px = pos[c] & 0xff;
						u32 py = pos[c] >> 8;

						cnt += (free & BIT(c)) &&
						       px >= x && px < x + w &&
						       py >= y && py < y + h;
					}
					if (cnt < n)
						continue;
					if (w * h < *area ||
					    (w * h == *area && d < *skew)) {
						*area = w * h;
						*skew = d;
					}
				}
}

/* Partitions worked out by hand on the mesh drawing of npu_hw_geom.h. */
struct npu_part_case {
	const char *name;
	u32 defects;
	u32 n;
	u32 mask;
	u8 map[NCL];
};

static const struct npu_part_case npu_part_cases[] = {
	/* The 1x1 window at (1,0) beats the 2x1 window found before it. */
	{ "healthy, 1", 0, 1, 0x0001, { 0 } },
	{ "healthy, 2: row 0", 0, 2, 0x0003, { 0, 1 } },
	/* Row 0 holds 2 clusters: the first 1x3 is row 1 (cost 3). */
	{ "healthy, 3: row 1", 0, 3, 0x001c, { 2, 3, 4 } },
	/* 2x2 at x 1..2, y 0..1 beats the 3x2 window found before it. */
	{ "healthy, 4: 2x2 beside the CCB", 0, 4, 0x001b, { 0, 1, 3, 4 } },
	{ "healthy, 14: whole mesh", 0, 14, 0x3fff,
	  { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13 } },
	/* Cluster 0 fused: row 1 (4x1) is found first, the 2x2 below wins. */
	{ "fused 0, 4: 2x2 at (0,1)", 0x0001, 4, 0x00cc, { 2, 3, 6, 7 } },
	{ "fused 0+1, 2: row 1", 0x0003, 2, 0x000c, { 2, 3 } },
	/* tests/guest/run.sh fused-2: 0 and 7. */
	{ "fused 0+7, 4: 2x2 at (2,1)", 0x0081, 4, 0x0330, { 4, 5, 8, 9 } },
	/* fused-corner: 10 and 13; 12 needs the whole mesh, row-major. */
	{ "fused 10+13, 12: whole mesh", 0x2400, 12, 0x1bff,
	  { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12 } },
	{ "fused 0+7, 13: more than healthy", 0x0081, 13, 0, { 0 } },
	{ "healthy, 15: more than present", 0, 15, 0, { 0 } },
	{ "healthy, 0", 0, 0, 0, { 0 } },
};

KUNIT_ARRAY_PARAM_DESC(npu_part, npu_part_cases, name);

static void npu_partition_test_known(struct kunit *test)
{
	const struct npu_part_case *pc = test->param_value;
	u8 map[NPU_HW_MAX_CLUSTERS];
	u32 pos[NCL], mask;

	npu_test_m100_pos(pos);
	memset(map, 0xee, sizeof(map));
	mask = npu_hw_partition_pick(MESH_X, MESH_Y, NCL, pos,
				     ALL & ~pc->defects, pc->n, map);
	KUNIT_EXPECT_EQ(test, mask, pc->mask);
	if (mask)
		KUNIT_EXPECT_MEMEQ(test, map, pc->map, pc->n);
	/* Nothing written past the n entries. */
	for (u32 i = mask ? pc->n : 0; i < NPU_HW_MAX_CLUSTERS; i++)
		KUNIT_EXPECT_EQ(test, map[i], 0xee);
}

/* Check one pick against the properties every partition must have. */
static void npu_test_check_pick(struct kunit *test, const u32 *pos, u32 free,
				u32 n, u32 mask, const u8 *map)
{
	u32 seen = 0, w, h, area, skew;

	if (!n || n > hweight32(free)) {
		KUNIT_EXPECT_EQ_MSG(test, mask, 0, "free %#x n %u", free, n);
		return;
	}
	KUNIT_ASSERT_EQ_MSG(test, hweight32(mask), n, "free %#x", free);
	KUNIT_EXPECT_EQ_MSG(test, mask & ~free, 0, "free %#x n %u", free, n);
	for (u32 i = 0; i < n; i++) {
		KUNIT_ASSERT_LT(test, map[i], NCL);
		KUNIT_EXPECT_FALSE(test, seen & BIT(map[i]));
		seen |= BIT(map[i]);
		/* Logical numbering is row-major: positions increase. */
		if (i)
			KUNIT_EXPECT_GT_MSG(test, pos[map[i]], pos[map[i - 1]],
					    "free %#x n %u i %u", free, n, i);
	}
	KUNIT_EXPECT_EQ(test, seen, mask);
	/* Compact: the smallest window, then the squarest. */
	npu_test_bbox(pos, mask, &w, &h);
	npu_test_best(pos, free, n, &area, &skew);
	KUNIT_EXPECT_EQ_MSG(test, w * h, area, "free %#x n %u", free, n);
	KUNIT_EXPECT_EQ_MSG(test, w > h ? w - h : h - w, skew,
			    "free %#x n %u", free, n);
}

/* Every defect mask of up to two fused clusters, every size 0..15. */
static void npu_partition_test_all_defect_masks(struct kunit *test)
{
	u32 pos[NCL], masks = 0, picks = 0;

	npu_test_m100_pos(pos);
	for (u32 a = 0; a <= NCL; a++) {
		for (u32 b = a; b <= NCL; b++) {
			/* a == NCL: no defect; b == a or NCL: one. */
			u32 defects = (a < NCL ? BIT(a) : 0) |
				      (b < NCL ? BIT(b) : 0);

			if (b == a && a < NCL)
				continue;
			masks++;
			for (u32 n = 0; n <= NCL + 1; n++) {
				u8 map[NPU_HW_MAX_CLUSTERS];
				u32 free = ALL & ~defects, mask;

				mask = npu_hw_partition_pick(MESH_X, MESH_Y,
							     NCL, pos, free, n,
							     map);
				npu_test_check_pick(test, pos, free, n, mask,
						    map);
				picks += !!mask;
			}
		}
	}
	/* 1 healthy + 14 single + 91 double defect masks. */
	KUNIT_EXPECT_EQ(test, masks, 106);
	/* Sizes 1..14 with none, 1..13 with one, 1..12 with two fused. */
	KUNIT_EXPECT_EQ(test, picks, 14 + 14 * 13 + 91 * 12);
	kunit_info(test, "%u defect masks, %u partitions checked\n", masks,
		   picks);
}

/* Partitions of a partly used mesh: what is in use is never handed out. */
static void npu_partition_test_fragmentation(struct kunit *test)
{
	u32 pos[NCL], free = ALL, a, b, c, d;
	u8 map[NPU_HW_MAX_CLUSTERS];

	npu_test_m100_pos(pos);
	a = npu_hw_partition_pick(MESH_X, MESH_Y, NCL, pos, free, 4, map);
	KUNIT_ASSERT_EQ(test, a, 0x001b);
	free &= ~a;
	/* Rows 2-3 at x 0..1 now: 2x2 again, beside the first. */
	b = npu_hw_partition_pick(MESH_X, MESH_Y, NCL, pos, free, 4, map);
	KUNIT_ASSERT_EQ(test, hweight32(b), 4);
	KUNIT_EXPECT_EQ(test, a & b, 0);
	free &= ~b;
	c = npu_hw_partition_pick(MESH_X, MESH_Y, NCL, pos, free, 4, map);
	KUNIT_ASSERT_EQ(test, hweight32(c), 4);
	KUNIT_EXPECT_EQ(test, (a | b) & c, 0);
	free &= ~c;
	/* Two clusters left: four do not fit, two do. */
	KUNIT_EXPECT_EQ(test, hweight32(free), 2);
	KUNIT_EXPECT_EQ(test, npu_hw_partition_pick(MESH_X, MESH_Y, NCL, pos,
						    free, 4, map), 0);
	KUNIT_EXPECT_EQ(test, npu_hw_partition_pick(MESH_X, MESH_Y, NCL, pos,
						    free, 3, map), 0);
	/* The middle partition returns: a request of its size gets it back. */
	free |= b;
	d = npu_hw_partition_pick(MESH_X, MESH_Y, NCL, pos, free, 4, map);
	KUNIT_EXPECT_EQ(test, d, b);
	/* Six free in two holes: a partition of six spans both. */
	d = npu_hw_partition_pick(MESH_X, MESH_Y, NCL, pos, free, 6, map);
	KUNIT_EXPECT_EQ(test, d, free);
}

/*
 * Random allocation and release (fixed seed): a request succeeds exactly
 * when enough clusters are free, however fragmented, and never overlaps
 * a live partition.
 */
static void npu_partition_test_churn(struct kunit *test)
{
	struct rnd_state rnd;
	u32 live[NCL] = { 0 }, nlive = 0, used = 0, pos[NCL];
	u32 defects = BIT(3) | BIT(11), ok = 0, refused = 0;
	u32 healthy = ALL & ~defects;

	npu_test_m100_pos(pos);
	prandom_seed_state(&rnd, 18);
	for (u32 step = 0; step < 2000; step++) {
		u32 r = prandom_u32_state(&rnd);

		if (nlive && (r & 1)) {
			u32 i = (r >> 1) % nlive;

			KUNIT_EXPECT_EQ(test, used & live[i], live[i]);
			used &= ~live[i];
			live[i] = live[--nlive];
		} else {
			u32 n = (r >> 1) % 6 + 1, free = healthy & ~used;
			u8 map[NPU_HW_MAX_CLUSTERS];
			u32 mask;

			mask = npu_hw_partition_pick(MESH_X, MESH_Y, NCL, pos,
						     free, n, map);
			npu_test_check_pick(test, pos, free, n, mask, map);
			if (!mask) {
				refused++;
				continue;
			}
			KUNIT_ASSERT_LT(test, nlive, NCL);
			KUNIT_EXPECT_EQ(test, mask & used, 0);
			used |= mask;
			live[nlive++] = mask;
			ok++;
		}
	}
	/* Both outcomes were exercised. */
	KUNIT_EXPECT_GT(test, ok, 100);
	KUNIT_EXPECT_GT(test, refused, 10);
	kunit_info(test, "%u partitions handed out, %u refused\n", ok, refused);
}

/* A smaller instance (QEMU properties): a 3x2 mesh with four clusters. */
static void npu_partition_test_small_mesh(struct kunit *test)
{
	/* CCB (0,0), DDR (2,0); clusters at (1,0), (0,1), (1,1), (2,1). */
	static const u32 pos[] = { 0x001, 0x100, 0x101, 0x102 };
	u8 map[NPU_HW_MAX_CLUSTERS];

	/* The 1x2 column at x 1 is found before the 2x1 row at y 1. */
	KUNIT_EXPECT_EQ(test, npu_hw_partition_pick(3, 2, 4, pos, 0xf, 2, map),
			0x5);
	KUNIT_EXPECT_EQ(test, map[0], 0);
	KUNIT_EXPECT_EQ(test, map[1], 2);
	/* Cluster 2 fused: only the whole mesh holds three. */
	KUNIT_EXPECT_EQ(test, npu_hw_partition_pick(3, 2, 4, pos, 0xb, 3, map),
			0xb);
	KUNIT_EXPECT_EQ(test, map[0], 0);
	KUNIT_EXPECT_EQ(test, map[1], 1);
	KUNIT_EXPECT_EQ(test, map[2], 3);
	KUNIT_EXPECT_EQ(test, npu_hw_partition_pick(3, 2, 4, pos, 0xb, 4, map),
			0);
}

static struct kunit_case npu_partition_cases[] = {
	KUNIT_CASE_PARAM(npu_partition_test_known, npu_part_gen_params),
	KUNIT_CASE_SLOW(npu_partition_test_all_defect_masks),
	KUNIT_CASE(npu_partition_test_fragmentation),
	KUNIT_CASE_SLOW(npu_partition_test_churn),
	KUNIT_CASE(npu_partition_test_small_mesh),
	{}
};

static struct kunit_suite npu_partition_suite = {
	.name = "npu_partition",
	.test_cases = npu_partition_cases,
};

kunit_test_suite(npu_partition_suite);
