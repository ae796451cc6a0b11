// SPDX-License-Identifier: MIT
/* NoC link calendars: time-ordered arbitration whatever the booking order. */
#include "npu_noc_cal.h"
#include "npu_test.h"

START_TEST(test_cal_backfills_earlier_gaps)
{
	struct npu_link_cal c = { 0 };

	/* Booked first but late: [1000, 1100). */
	ck_assert_uint_eq(npu_link_cal_book(&c, 1000, 100), 1000);
	/* Booked second but early: fits before it, no stall. */
	ck_assert_uint_eq(npu_link_cal_book(&c, 0, 100), 0);
	/* Fits exactly into [100, 1000) up to the late one... */
	ck_assert_uint_eq(npu_link_cal_book(&c, 100, 900), 100);
	ck_assert_uint_eq(c.n, 1);	/* [0, 1100) merged */
	/* ...so the next one waits until the link is free. */
	ck_assert_uint_eq(npu_link_cal_book(&c, 50, 10), 1100);
	npu_link_cal_free(&c);
}
END_TEST

START_TEST(test_cal_waits_for_a_gap_that_fits)
{
	struct npu_link_cal c = { 0 };

	ck_assert_uint_eq(npu_link_cal_book(&c, 0, 10), 0);
	ck_assert_uint_eq(npu_link_cal_book(&c, 20, 10), 20);
	/* The gap [10, 20) is too short for 15 cycles. */
	ck_assert_uint_eq(npu_link_cal_book(&c, 5, 15), 30);
	/* But takes 10. */
	ck_assert_uint_eq(npu_link_cal_book(&c, 5, 10), 10);
	ck_assert_uint_eq(c.n, 1);
	npu_link_cal_free(&c);
}
END_TEST

START_TEST(test_cal_fill_flows_around_short_bookings)
{
	struct npu_link_cal c = { 0 };

	/* Two short requests booked ahead: [10, 11) and [500, 501). */
	ck_assert_uint_eq(npu_link_cal_book(&c, 10, 1), 10);
	ck_assert_uint_eq(npu_link_cal_book(&c, 500, 1), 500);
	/* 1000 cycles from 0 take every free cycle: done at 1002, not 1501. */
	ck_assert_uint_eq(npu_link_cal_fill(&c, 0, 1000), 1002);
	ck_assert_uint_eq(c.n, 1);	/* [0, 1002) */
	/* Busy at its start: it begins when the path is free. */
	ck_assert_uint_eq(npu_link_cal_fill(&c, 3, 8), 1010);
	/* Nothing in the way: the same as a booking. */
	ck_assert_uint_eq(npu_link_cal_fill(&c, 5000, 7), 5007);
	ck_assert_uint_eq(npu_link_cal_fill(&c, 0, 0), 0);
	npu_link_cal_free(&c);
}
END_TEST

START_TEST(test_cal_is_bounded)
{
	struct npu_link_cal c = { 0 };
	uint64_t t;

	/* Sparse bookings far apart: never more than the cap, still sorted. */
	for (uint64_t i = 0; i < 3 * NPU_LINK_CAL_MAX; i++) {
		t = npu_link_cal_book(&c, i * 100, 10);
		ck_assert_uint_ge(t, i * 100);
		ck_assert_uint_le(c.n, NPU_LINK_CAL_MAX);
	}
	for (uint32_t i = 1; i < c.n; i++)
		ck_assert_uint_lt(c.e[i - 1], c.s[i]);
	/* Merged early intervals only ever delay, never overlap. */
	t = npu_link_cal_book(&c, 0, 10);
	ck_assert_uint_ge(t, 10);
	npu_link_cal_free(&c);
}
END_TEST

static Suite *noc_suite(void)
{
	Suite *s = suite_create("core_noc");
	TCase *tc = tcase_create("calendar");

	tcase_add_test(tc, test_cal_backfills_earlier_gaps);
	tcase_add_test(tc, test_cal_waits_for_a_gap_that_fits);
	tcase_add_test(tc, test_cal_fill_flows_around_short_bookings);
	tcase_add_test(tc, test_cal_is_bounded);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(noc_suite)
