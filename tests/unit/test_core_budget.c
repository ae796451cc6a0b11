// SPDX-License-Identifier: MIT
/* The cycle budget bounds work inside a single iteration, not just between rounds. */
#include <string.h>

#include "npu_tdev.h"
#include "npu_test.h"

START_TEST(test_gsdu_self_linked_chain_times_out)
{
	struct npu_tdev *d = npu_tdev_create(NULL, 64);
	struct npu_tdev_submit opt = { .timeout_cycles = 10000 };
	struct npu_hw_completion c;
	struct npu_hw_gsdu_desc g = { 0 };
	struct npu_hw_insn *in;
	struct npu_tprog p;

	ck_assert_ptr_nonnull(d);
	/* A descriptor in HBSM that links to itself, 64 KiB per pass. */
	g.src_space = NPU_SPACE_HBSM;
	g.dst_space = NPU_SPACE_HBSM;
	g.row_bytes = 65536;
	g.rows = 1;
	g.src = 0x10000;
	g.dst = 0x20000;
	g.next = 0x1000;
	memcpy(npu_tdev_hbsm(d, 0, 0) + 0x1000, &g, sizeof(g));
	npu_tprog_init(&p);
	in = npu_tprog_add(&p, NPU_UNIT_CSU, NPU_CSU_GSDU, 1, 1);
	in->params.csu.chain_space = NPU_SPACE_HBSM;
	in->params.csu.chain_addr = 0x1000;
	/* Without the in-iteration check this runs 4096 passes, then fails
	 * with a chain error instead of the timeout. */
	ck_assert_int_eq(npu_tdev_run(d, &p, &opt, &c), NPU_TASK_TIMEOUT);
	ck_assert_uint_eq(c.insn_index, 0);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

static Suite *budget_suite(void)
{
	Suite *s = suite_create("core_budget");
	TCase *tc = tcase_create("budget");

	tcase_add_test(tc, test_gsdu_self_linked_chain_times_out);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(budget_suite)
