// SPDX-License-Identifier: MIT
/*
 * The memory planner (compile/npu_mem.c): tensors alive at the same time
 * never share bytes, tensors alive at different times may, aliases stay at
 * their offsets inside their root, the peak is the end of the highest
 * range, and bad constraints are refused.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_mem.h"
#include "npu_test.h"

#define ALIGN 64

static struct npu_mem_item item(uint64_t size, int64_t first, int64_t last)
{
	return (struct npu_mem_item){ .size = size, .first = first, .last = last, .alias = -1 };
}

static struct npu_mem_item alias(uint64_t size, int64_t first, int64_t last, int of,
				 uint64_t offset)
{
	return (struct npu_mem_item){ .size = size, .first = first, .last = last, .alias = of,
				      .offset = offset };
}

static bool overlap(uint64_t a, uint64_t asz, uint64_t b, uint64_t bsz)
{
	return asz && bsz && a < b + bsz && b < a + asz;
}

START_TEST(chain_reuses)
{
	/* A -> B -> C: A and C are never alive together. */
	struct npu_mem_item it[3] = { item(100, 0, 1), item(100, 1, 2), item(100, 2, 3) };
	uint64_t peak;

	ck_assert_int_eq(npu_mem_plan(it, 3, ALIGN, &peak), NPU_OK);
	ck_assert_uint_eq(it[0].at, 0);
	ck_assert_uint_eq(it[1].at, 128);
	ck_assert_uint_eq(it[2].at, 0);
	ck_assert_uint_eq(peak, 256);
}
END_TEST

START_TEST(disjoint_share_overlapping_do_not)
{
	struct npu_mem_item a[2] = { item(1000, 0, 0), item(1000, 1, 1) };
	struct npu_mem_item b[2] = { item(1000, 0, 1), item(1000, 1, 1) };
	uint64_t peak;

	ck_assert_int_eq(npu_mem_plan(a, 2, ALIGN, &peak), NPU_OK);
	ck_assert_uint_eq(a[0].at, a[1].at);
	ck_assert_uint_eq(peak, 1024);
	/* Sharing one step is overlapping. */
	ck_assert_int_eq(npu_mem_plan(b, 2, ALIGN, &peak), NPU_OK);
	ck_assert(!overlap(b[0].at, 1000, b[1].at, 1000));
	ck_assert_uint_eq(b[1].at % ALIGN, 0);
	ck_assert_uint_eq(peak, 2048);
}
END_TEST

START_TEST(freed_range_first_fit)
{
	/*
	 * A (64) and B (64) side by side, A dies, then C (64) takes A's range
	 * (the lowest that fits) and D (200) goes past B.  (Largest first
	 * gives the same peak: the first order is kept.)
	 */
	struct npu_mem_item it[4] = { item(64, 0, 1), item(64, 0, 3), item(64, 2, 3),
				      item(200, 2, 3) };
	uint64_t peak;

	ck_assert_int_eq(npu_mem_plan(it, 4, ALIGN, &peak), NPU_OK);
	ck_assert_uint_eq(it[0].at, 0);
	ck_assert_uint_eq(it[1].at, 64);
	/* Larger first on a tie: D (200) cannot fit in A's 64 bytes, C can. */
	ck_assert_uint_eq(it[3].at, 128);
	ck_assert_uint_eq(it[2].at, 0);
	ck_assert_uint_eq(peak, 384);
}
END_TEST

START_TEST(largest_first_when_lower)
{
	/*
	 * A (64) -> B (128) -> C (192).  In order of first steps C lands past
	 * B (A, 64 bytes, freed too little): 384.  Largest first, C at 0, B
	 * after it, A below B beside C: 320, the most bytes ever alive.
	 */
	struct npu_mem_item it[3] = { item(64, 0, 1), item(128, 1, 2), item(192, 2, 3) };
	uint64_t peak;

	ck_assert_int_eq(npu_mem_plan(it, 3, ALIGN, &peak), NPU_OK);
	ck_assert_uint_eq(peak, 320);
	ck_assert_uint_eq(it[2].at, 0);
	ck_assert_uint_eq(it[1].at, 192);
	ck_assert_uint_eq(it[0].at, 0);
}
END_TEST

START_TEST(concat_slices)
{
	/*
	 * Y = Concat(X0, X1, X2), the Xs in their slices of Y: they live as
	 * one group from X0's producer to Y's last reader; Z, alive while the
	 * Xs are, stays out of Y's range; W, alive after Y, may reuse it.
	 */
	struct npu_mem_item it[6] = {
		item(192, 3, 4),		/* Y */
		alias(64, 0, 3, 0, 0),		/* X0 */
		alias(64, 1, 3, 0, 64),		/* X1 */
		alias(64, 2, 3, 0, 128),	/* X2 */
		item(64, 1, 1),			/* Z */
		item(192, 5, 6),		/* W */
	};
	uint64_t peak;

	ck_assert_int_eq(npu_mem_plan(it, 6, ALIGN, &peak), NPU_OK);
	ck_assert_uint_eq(it[1].at, it[0].at);
	ck_assert_uint_eq(it[2].at, it[0].at + 64);
	ck_assert_uint_eq(it[3].at, it[0].at + 128);
	ck_assert(!overlap(it[4].at, 64, it[0].at, 192));
	ck_assert_uint_eq(it[5].at, it[0].at);
	ck_assert_uint_eq(peak, 256);
}
END_TEST

START_TEST(alias_of_alias)
{
	/* R, A in R at 64, B (a view of part of A) in A at 32. */
	struct npu_mem_item it[4] = { item(64, 0, 0), item(256, 1, 1), alias(128, 2, 2, 1, 64),
				      alias(64, 3, 3, 2, 32) };
	uint64_t peak;

	ck_assert_int_eq(npu_mem_plan(it, 4, ALIGN, &peak), NPU_OK);
	ck_assert_uint_eq(it[2].at, it[1].at + 64);
	ck_assert_uint_eq(it[3].at, it[1].at + 96);
	/* The group lives 1..3, the first item only at 0: they share. */
	ck_assert_uint_eq(it[1].at, 0);
	ck_assert_uint_eq(peak, 256);
}
END_TEST

START_TEST(unused_takes_nothing)
{
	struct npu_mem_item it[3] = { item(4096, 1, 0), item(100, 0, 0),
				      alias(50, 2, 2, 0, 10) };
	struct npu_mem_item none[1] = { item(4096, 1, 0) };
	uint64_t peak;

	/* A root alive only through its alias still gets its whole range. */
	ck_assert_int_eq(npu_mem_plan(it, 3, ALIGN, &peak), NPU_OK);
	ck_assert_uint_eq(it[2].at, it[0].at + 10);
	ck_assert_uint_eq(peak, 4096);
	ck_assert_int_eq(npu_mem_plan(none, 1, ALIGN, &peak), NPU_OK);
	ck_assert_uint_eq(peak, 0);
	ck_assert_int_eq(npu_mem_plan(NULL, 0, ALIGN, &peak), NPU_OK);
	ck_assert_uint_eq(peak, 0);
}
END_TEST

START_TEST(bad_constraints)
{
	struct npu_mem_item ok[1] = { item(64, 0, 0) };
	struct npu_mem_item past[2] = { item(128, 0, 0), alias(64, 0, 0, 0, 65) };
	struct npu_mem_item cycle[2] = { alias(64, 0, 0, 1, 0), alias(64, 0, 0, 0, 0) };
	struct npu_mem_item self[1] = { alias(64, 0, 0, 0, 0) };
	struct npu_mem_item none[1] = { alias(64, 0, 0, 5, 0) };
	uint64_t peak;

	ck_assert_int_eq(npu_mem_plan(ok, 1, 0, &peak), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_mem_plan(ok, 1, 48, &peak), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_mem_plan(past, 2, ALIGN, &peak), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "past its root"));
	ck_assert_int_eq(npu_mem_plan(cycle, 2, ALIGN, &peak), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "cycle"));
	ck_assert_int_eq(npu_mem_plan(self, 1, ALIGN, &peak), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_mem_plan(none, 1, ALIGN, &peak), NPU_ERR_INVALID_ARG);
	/* Another alignment works the same. */
	ck_assert_int_eq(npu_mem_plan(ok, 1, 4096, &peak), NPU_OK);
	ck_assert_uint_eq(peak, 4096);
}
END_TEST

static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

#define N 300
#define STEPS 60

/*
 * Random tensors and aliases: every pair of groups alive at a common step
 * is apart, aliases sit at their offsets, ranges are aligned, and the peak
 * is the highest end, at least the most bytes alive at any step and at
 * most every group side by side.
 */
START_TEST(random_plans)
{
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct npu_mem_item it[N];
		size_t root[N];
		uint64_t off[N], peak, top = 0, sum = 0, most = 0;
		int64_t gf[N], gl[N];
		uint64_t s = seed;

		for (int i = 0; i < N; i++) {
			int64_t a = rnd(&s) % STEPS, b = a + rnd(&s) % 8;

			it[i] = item(1 + rnd(&s) % 5000, a, b);
			if (rnd(&s) % 10 == 0)
				it[i].first = it[i].last + 1;	/* unused */
			if (i > 0 && rnd(&s) % 3 == 0) {
				int r = (int)(rnd(&s) % (unsigned)i);

				it[i].alias = r;
				it[i].size = 1 + rnd(&s) % it[r].size;
				it[i].offset = rnd(&s) % (it[r].size - it[i].size + 1);
			}
		}
		ck_assert_int_eq(npu_mem_plan(it, N, ALIGN, &peak), NPU_OK);
		for (int i = 0; i < N; i++) {
			size_t r = (size_t)i;

			off[i] = 0;
			while (it[r].alias >= 0) {
				off[i] += it[r].offset;
				r = (size_t)it[r].alias;
			}
			root[i] = r;
			gf[i] = INT64_MAX;
			gl[i] = INT64_MIN;
		}
		for (int i = 0; i < N; i++) {
			if (it[i].first > it[i].last)
				continue;
			if (it[i].first < gf[root[i]])
				gf[root[i]] = it[i].first;
			if (it[i].last > gl[root[i]])
				gl[root[i]] = it[i].last;
		}
		for (int i = 0; i < N; i++) {
			ck_assert_uint_eq(it[i].at, it[root[i]].at + off[i]);
			if (root[i] != (size_t)i || gf[i] > gl[i])
				continue;
			ck_assert_uint_eq(it[i].at % ALIGN, 0);
			if (it[i].at + it[i].size > top)
				top = it[i].at + it[i].size;
			sum += (it[i].size + ALIGN - 1) / ALIGN * ALIGN;
			for (int j = 0; j < i; j++)
				if (root[j] == (size_t)j && gf[j] <= gl[j] && gf[i] <= gl[j] &&
				    gf[j] <= gl[i])
					ck_assert_msg(!overlap(it[i].at, it[i].size, it[j].at,
							       it[j].size),
						      "seed %llu: groups %d and %d overlap",
						      (unsigned long long)seed, i, j);
		}
		for (int64_t t = 0; t < STEPS + 8; t++) {
			uint64_t live = 0;

			for (int i = 0; i < N; i++)
				if (root[i] == (size_t)i && gf[i] <= t && t <= gl[i])
					live += it[i].size;
			if (live > most)
				most = live;
		}
		ck_assert_uint_eq(peak, (top + ALIGN - 1) / ALIGN * ALIGN);
		ck_assert_uint_ge(peak, most);
		ck_assert_uint_le(peak, sum);
	}
}
END_TEST

static Suite *mem_suite(void)
{
	Suite *s = suite_create("npu_mem");
	TCase *place = tcase_create("placement");
	TCase *alias_tc = tcase_create("aliases");
	TCase *bad = tcase_create("errors");

	tcase_add_test(place, chain_reuses);
	tcase_add_test(place, disjoint_share_overlapping_do_not);
	tcase_add_test(place, freed_range_first_fit);
	tcase_add_test(place, largest_first_when_lower);
	tcase_add_test(place, random_plans);
	tcase_add_test(alias_tc, concat_slices);
	tcase_add_test(alias_tc, alias_of_alias);
	tcase_add_test(alias_tc, unused_takes_nothing);
	tcase_add_test(bad, bad_constraints);
	suite_add_tcase(s, place);
	suite_add_tcase(s, alias_tc);
	suite_add_tcase(s, bad);
	return s;
}
NPU_TEST_SUITE(mem_suite)
