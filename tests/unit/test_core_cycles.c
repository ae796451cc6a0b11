// SPDX-License-Identifier: MIT
/*
 * Unit tests for npu_cycles.c: the HBSM bank-conflict count, which skips
 * over elements that stay on one line, against its element-by-element
 * definition (Documentation/hw/cycle-model.md, "HBSM bank conflicts") on
 * hand-checked and randomized access patterns.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "npu_exec.h"
#include "npu_test.h"

/*
 * The definition, one element at a time: a new line is an access; an
 * access to a bank already used in its window of @banks accesses
 * conflicts; the first 1024 accesses and 8192 elements are examined and
 * the count scaled to the whole view.
 */
static uint64_t conflicts_by_element(const struct npu_view *v, unsigned banks,
				     unsigned bank_bytes)
{
	uint32_t idx[NPU_TWU_MAX_LEVELS] = { 0 };
	uint64_t total = npu_view_elems(v), sampled = 0, conflicts = 0;
	uint64_t last_line = UINT64_MAX, accesses = 0, used = 0;
	unsigned in_window = 0;

	if (v->space != NPU_SPACE_HBSM || !banks || banks > 64 || !bank_bytes)
		return 0;
	for (; sampled < total && accesses < 1024 && sampled < 8192; sampled++) {
		int64_t addr = (int64_t)v->base;
		uint64_t line;

		for (unsigned l = 0; l < v->ndims; l++)
			addr += v->strides[l] * (int64_t)idx[l];
		line = (uint64_t)addr / bank_bytes;
		if (line != last_line) {
			unsigned bank = line % banks;

			last_line = line;
			accesses++;
			if (used & (1ull << bank))
				conflicts++;
			used |= 1ull << bank;
			if (++in_window == banks) {
				in_window = 0;
				used = 0;
			}
		}
		for (unsigned l = 0; l < v->ndims; l++) {
			if (++idx[l] < v->dims[l])
				break;
			idx[l] = 0;
		}
	}
	if (sampled < total && sampled)
		conflicts = conflicts * total / sampled;
	return conflicts;
}

static struct npu_view hbsm_view(uint64_t base, unsigned ndims,
				 const uint32_t *dims, const int64_t *strides)
{
	struct npu_view v;

	memset(&v, 0, sizeof(v));
	v.base = base;
	v.space = NPU_SPACE_HBSM;
	v.dtype = NPU_DT_BF16;
	v.esz = 2;
	v.ndims = ndims;
	for (unsigned l = 0; l < ndims; l++) {
		v.dims[l] = dims[l];
		v.strides[l] = strides[l];
	}
	return v;
}

/* xorshift64*: a fixed sequence, so a failure reproduces. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

START_TEST(conflicts_hand_checked)
{
	/* Dense: consecutive lines, one per bank in every window. */
	uint32_t d1[] = { 4096 };
	int64_t s1[] = { 2 };
	/* 1 KiB apart: every access lands in bank 0, 31 of 32 conflict. */
	uint32_t d2[] = { 64 };
	int64_t s2[] = { 1024 };
	/* cycle-model.md's example: rows 512 B apart touch banks {0,1,16,17}. */
	uint32_t d3[] = { 32, 64 };
	int64_t s3[] = { 2, 512 };
	struct npu_view v;

	v = hbsm_view(0, 1, d1, s1);
	ck_assert_uint_eq(npu_cycles_hbsm_conflicts(&v, 32, 32), 0);
	v = hbsm_view(0, 1, d2, s2);
	ck_assert_uint_eq(npu_cycles_hbsm_conflicts(&v, 32, 32), 62);
	v = hbsm_view(0, 2, d3, s3);
	ck_assert_uint_eq(npu_cycles_hbsm_conflicts(&v, 32, 32),
			  conflicts_by_element(&v, 32, 32));
	ck_assert_uint_eq(npu_cycles_hbsm_conflicts(&v, 32, 32), 112);
	/* Only the HBSM has banks. */
	v.space = NPU_SPACE_SRAM;
	ck_assert_uint_eq(npu_cycles_hbsm_conflicts(&v, 32, 32), 0);
}
END_TEST

/* A random stride: often small (several elements per line), sometimes
 * zero (broadcast), negative, or a multiple of the bank interleave. */
static int64_t random_stride(uint64_t *rng)
{
	int64_t s;

	switch (rng_next(rng) % 6) {
	case 0:
		return 0;
	case 1:
		s = (int64_t)(rng_next(rng) % 8 + 1);
		break;
	case 2:
		s = (int64_t)(rng_next(rng) % 64 + 1);
		break;
	case 3:
		s = 1024 * (int64_t)(rng_next(rng) % 4 + 1);
		break;
	default:
		s = (int64_t)(rng_next(rng) % 4096 + 1);
		break;
	}
	return rng_next(rng) % 4 ? s : -s;
}

START_TEST(conflicts_random_vs_by_element)
{
	static const unsigned geom[][2] = { { 32, 32 }, { 32, 32 }, { 16, 64 },
					    { 64, 1 }, { 7, 24 }, { 1, 32 } };
	uint64_t rng = 0x9e3779b97f4a7c15ull, nbad = 0;
	char first[256] = "";

	for (unsigned t = 0; t < 20000; t++) {
		uint32_t dims[NPU_TWU_MAX_LEVELS];
		int64_t strides[NPU_TWU_MAX_LEVELS];
		unsigned nd = (unsigned)(rng_next(&rng) % NPU_TWU_MAX_LEVELS) + 1;
		unsigned g = (unsigned)(rng_next(&rng) % 6);
		uint64_t base = 1ull << 30, want, got;
		struct npu_view v;

		for (unsigned l = 0; l < nd; l++) {
			/* Mostly short levels, some ones, some long rows. */
			switch (rng_next(&rng) % 4) {
			case 0:
				dims[l] = 1;
				break;
			case 1:
				dims[l] = (uint32_t)(rng_next(&rng) % 3000) + 1;
				break;
			default:
				dims[l] = (uint32_t)(rng_next(&rng) % 40) + 1;
				break;
			}
			strides[l] = random_stride(&rng);
		}
		base += rng_next(&rng) % 65536;
		v = hbsm_view(base, nd, dims, strides);
		want = conflicts_by_element(&v, geom[g][0], geom[g][1]);
		got = npu_cycles_hbsm_conflicts(&v, geom[g][0], geom[g][1]);
		if (want != got && !nbad++)
			snprintf(first, sizeof(first),
				 "case %u: %u levels, dims[0] %u stride %lld: %llu, want %llu",
				 t, nd, dims[0], (long long)strides[0],
				 (unsigned long long)got, (unsigned long long)want);
		/*
		 * The same geometry again, whole lines (or a few bytes) away:
		 * answered from the per-thread cache when equivalent, counted
		 * again when not.
		 */
		v.base += rng_next(&rng) % 2 ?
				  (uint64_t)geom[g][1] * (rng_next(&rng) % 4096) :
				  rng_next(&rng) % 8;
		want = conflicts_by_element(&v, geom[g][0], geom[g][1]);
		got = npu_cycles_hbsm_conflicts(&v, geom[g][0], geom[g][1]);
		if (want != got && !nbad++)
			snprintf(first, sizeof(first),
				 "case %u moved to %llu: %llu, want %llu", t,
				 (unsigned long long)v.base,
				 (unsigned long long)got, (unsigned long long)want);
	}
	ck_assert_msg(nbad == 0, "%llu mismatches, first: %s",
		      (unsigned long long)nbad, first);
}
END_TEST

static Suite *core_cycles_suite(void)
{
	Suite *s = suite_create("core_cycles");
	TCase *tc = tcase_create("hbsm_conflicts");

	tcase_add_test(tc, conflicts_hand_checked);
	tcase_add_test(tc, conflicts_random_vs_by_element);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(core_cycles_suite)
