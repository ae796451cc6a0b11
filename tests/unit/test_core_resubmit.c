// SPDX-License-Identifier: MIT
/*
 * Resubmitting a program: a task runs the bytes in guest memory when it
 * starts, never what an earlier task at the same address ran.  Programs
 * rewritten in place, at the same address under another context, or run
 * on another partition size run (or fail) as if seen for the first time.
 * (Guards any reuse of decoded programs across tasks.)
 */
#include <string.h>

#include "npu_tdev.h"
#include "npu_test.h"

/* _i of every test: 1 runs it with DDR also mapped in place (the
 * programs compared where they lie, npu_tdev.map_ddr). */
static struct npu_tdev *dev(unsigned clusters, int map)
{
	struct npu_tdev *d = npu_tdev_small(clusters, 1, 0, 1);

	ck_assert_ptr_nonnull(d);
	d->map_ddr = map;
	return d;
}

static struct npu_hw_insn *add_fill(struct npu_tprog *p, unsigned cm,
				    uint32_t dst, uint32_t n, uint32_t value)
{
	struct npu_hw_insn *in = npu_tprog_add(p, NPU_UNIT_DTDU, NPU_DTDU_FILL, cm, 1);
	uint32_t dims[1] = { n };

	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_UINT8, dst, 1, dims);
	in->params.dtdu.value = value;
	return in;
}

static bool all_bytes(const uint8_t *p, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* Run a prepared descriptor again as a new submission. */
static int rerun(struct npu_tdev *d, struct npu_hw_task *desc,
		 struct npu_hw_completion *c)
{
	desc->seqno = ++d->seqno;
	return npu_tdev_run_desc(d, 0, desc, c);
}

/* The i-th instruction of a program prepared in DDR. */
static struct npu_hw_insn *insn_at(struct npu_hw_prog *hdr, unsigned i)
{
	return (struct npu_hw_insn *)((uint8_t *)hdr + hdr->insn_offset) + i;
}

START_TEST(test_rewritten_in_place_runs_new_program)
{
	struct npu_tdev *d = dev(2, _i);
	struct npu_tdev_submit o = { .nclusters = 1 };
	struct npu_hw_completion c;
	struct npu_hw_task desc;
	struct npu_hw_prog *hdr;
	struct npu_tprog p;

	npu_tprog_init(&p);
	add_fill(&p, 1, 0, 64, 0x11);
	add_fill(&p, 1, 64, 64, 0x12);
	hdr = npu_tdev_prepare(d, &p, &o, &desc);
	ck_assert_int_eq(rerun(d, &desc, &c), NPU_TASK_OK);
	ck_assert(all_bytes(npu_tdev_hbsm(d, 0, 0), 64, 0x11));
	ck_assert(all_bytes(npu_tdev_hbsm(d, 0, 0) + 64, 64, 0x12));

	/* The same bytes again. */
	memset(npu_tdev_hbsm(d, 0, 0), 0, 128);
	ck_assert_int_eq(rerun(d, &desc, &c), NPU_TASK_OK);
	ck_assert(all_bytes(npu_tdev_hbsm(d, 0, 0), 64, 0x11));
	ck_assert(all_bytes(npu_tdev_hbsm(d, 0, 0) + 64, 64, 0x12));

	/* One byte of the last instruction changed in guest memory. */
	insn_at(hdr, 1)->params.dtdu.value = 0x34;
	ck_assert_int_eq(rerun(d, &desc, &c), NPU_TASK_OK);
	ck_assert(all_bytes(npu_tdev_hbsm(d, 0, 0), 64, 0x11));
	ck_assert(all_bytes(npu_tdev_hbsm(d, 0, 0) + 64, 64, 0x34));

	/* The first instruction's operand moved: the other one is reused
	 * byte for byte, but both must come out right. */
	insn_at(hdr, 0)->opnd[NPU_OPND_DST].base = 256;
	ck_assert_int_eq(rerun(d, &desc, &c), NPU_TASK_OK);
	ck_assert(all_bytes(npu_tdev_hbsm(d, 0, 0) + 256, 64, 0x11));

	/* Rewritten into an illegal instruction: refused, index named. */
	insn_at(hdr, 1)->reserved[0] = 1;
	ck_assert_int_eq(rerun(d, &desc, &c), NPU_TASK_ILLEGAL_INSN);
	ck_assert_uint_eq(c.insn_index, 1);
	/* ... and legal again: runs (a failed decode was not kept). */
	insn_at(hdr, 1)->reserved[0] = 0;
	insn_at(hdr, 1)->params.dtdu.value = 0x56;
	ck_assert_int_eq(rerun(d, &desc, &c), NPU_TASK_OK);
	ck_assert(all_bytes(npu_tdev_hbsm(d, 0, 0) + 64, 64, 0x56));
	/* Mapped, the programs were compared in place. */
	ck_assert(_i ? atomic_load(&d->mem_maps) > 0 : atomic_load(&d->mem_maps) == 0);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

/* Same address, another context: other bytes behind it. */
START_TEST(test_same_va_other_context)
{
	struct npu_tdev *d = dev(1, _i);
	struct npu_hw_completion c;
	struct npu_tprog p, q;

	npu_tprog_init(&p);
	npu_tprog_init(&q);
	add_fill(&p, 1, 0, 32, 0x21);
	add_fill(&q, 1, 0, 32, 0x22);
	for (unsigned r = 0; r < 3; r++) {
		/* npu_tdev_run maps the program at the same VA each time. */
		ck_assert_int_eq(npu_tdev_run(d, &p, NULL, &c), NPU_TASK_OK);
		ck_assert(all_bytes(npu_tdev_hbsm(d, 0, 0), 32, 0x21));
		ck_assert_int_eq(npu_tdev_run(d, &q, NULL, &c), NPU_TASK_OK);
		ck_assert(all_bytes(npu_tdev_hbsm(d, 0, 0), 32, 0x22));
	}
	npu_tprog_free(&p);
	npu_tprog_free(&q);
	npu_tdev_destroy(d);
}
END_TEST

/* Same bytes, smaller partition: checked again for it. */
START_TEST(test_same_bytes_other_partition)
{
	struct npu_tdev *d = dev(2, _i);
	struct npu_tdev_submit o = { .nclusters = 2 };
	struct npu_hw_completion c;
	struct npu_hw_task desc;
	struct npu_tprog p;

	npu_tprog_init(&p);
	add_fill(&p, 3, 0, 32, 0x31);	/* logical clusters 0 and 1 */
	npu_tdev_prepare(d, &p, &o, &desc);
	ck_assert_int_eq(rerun(d, &desc, &c), NPU_TASK_OK);
	ck_assert(all_bytes(npu_tdev_hbsm(d, 1, 0), 32, 0x31));
	desc.nclusters = 1;
	desc.cluster_map[1] = 0;
	ck_assert_int_eq(rerun(d, &desc, &c), NPU_TASK_DEFECTIVE_CLUSTER);
	ck_assert_uint_eq(c.insn_index, 0);
	ck_assert_uint_eq(c.detail, 1);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

/*
 * More programs than a queue keeps decoded (512), each run again after
 * all the others: whichever were dropped, every run is its own program.
 */
START_TEST(test_more_programs_than_kept)
{
	enum { PROGS = 520 };
	struct npu_tdev *d = dev(1, _i);
	struct npu_tdev_submit o = { .nclusters = 1 };
	static struct npu_hw_task desc[PROGS];
	struct npu_hw_completion c;

	o.root = npu_tdev_ctx(d);
	for (unsigned i = 0; i < PROGS; i++) {
		struct npu_tprog p;

		npu_tprog_init(&p);
		add_fill(&p, 1, (i % 64) * 16, 16, i & 0xff);
		o.prog_va = 0x10000000ull + (uint64_t)i * 0x1000;
		npu_tdev_prepare(d, &p, &o, &desc[i]);
		npu_tprog_free(&p);
	}
	for (unsigned pass = 0; pass < 3; pass++) {
		for (unsigned i = 0; i < PROGS; i++) {
			memset(npu_tdev_hbsm(d, 0, 0) + (i % 64) * 16, 0xee, 16);
			ck_assert_int_eq(rerun(d, &desc[i], &c), NPU_TASK_OK);
			ck_assert(all_bytes(npu_tdev_hbsm(d, 0, 0) + (i % 64) * 16, 16,
					    i & 0xff));
		}
	}
	npu_tdev_destroy(d);
}
END_TEST

/*
 * A task starts with every counter at zero, also in a TPB that a task
 * before it only signalled (no work of its own there): a wait on it must
 * block, not see the earlier task's signal.
 */
START_TEST(test_counters_start_at_zero_after_remote_signal)
{
	struct npu_tdev *d = dev(2, _i);
	struct npu_tdev_submit o = { .nclusters = 2 };
	struct npu_hw_completion c;
	struct npu_hw_insn *in;
	struct npu_tprog p, q;

	npu_tprog_init(&p);
	in = add_fill(&p, 1, 0, 16, 0x41);
	in->sync.signal[0].flags = NPU_SIGNAL_ENABLE | NPU_SIGNAL_REMOTE;
	in->sync.signal[0].counter = 5;
	in->sync.signal[0].cluster_mask = 2;	/* cluster 1 has no work */
	in->sync.signal[0].tpb_mask = 1;
	ck_assert_int_eq(npu_tdev_run(d, &p, &o, &c), NPU_TASK_OK);

	npu_tprog_init(&q);
	in = add_fill(&q, 2, 0, 16, 0x42);
	in->sync.wait[0].flags = NPU_WAIT_ENABLE;
	in->sync.wait[0].counter = 5;
	in->sync.wait[0].value = 1;
	ck_assert_int_eq(npu_tdev_run(d, &q, &o, &c), NPU_TASK_SYNC_DEADLOCK);
	/* The same wait, signalled inside the task, is met. */
	in = add_fill(&q, 1, 0, 16, 0x43);
	in->sync.signal[0] = p.insn[0].sync.signal[0];
	ck_assert_int_eq(npu_tdev_run(d, &q, &o, &c), NPU_TASK_OK);
	npu_tprog_free(&p);
	npu_tprog_free(&q);
	npu_tdev_destroy(d);
}
END_TEST

/*
 * A host that vouches for its bytes (npu_core_host.mem_version): while
 * the version holds, the kept program runs without being read again
 * (shown by a write the host did not report); a new version, or the
 * same one for other bytes at the program's address, is read again.
 */
START_TEST(test_host_version_skips_reading)
{
	struct npu_tdev *d = dev(1, 1);
	struct npu_tdev_submit o = { .nclusters = 1 };
	struct npu_hw_completion c;
	struct npu_hw_task desc, desc2;
	struct npu_hw_prog *hdr;
	struct npu_tprog p, q;

	d->ddr_version = 7;
	o.root = npu_tdev_ctx(d);
	npu_tprog_init(&p);
	add_fill(&p, 1, 0, 32, 0x51);
	hdr = npu_tdev_prepare(d, &p, &o, &desc);
	ck_assert_int_eq(rerun(d, &desc, &c), NPU_TASK_OK);
	ck_assert(all_bytes(npu_tdev_hbsm(d, 0, 0), 32, 0x51));

	/* Written behind the host's back: the promise says unchanged. */
	insn_at(hdr, 0)->params.dtdu.value = 0x52;
	memset(npu_tdev_hbsm(d, 0, 0), 0, 32);
	ck_assert_int_eq(rerun(d, &desc, &c), NPU_TASK_OK);
	ck_assert(all_bytes(npu_tdev_hbsm(d, 0, 0), 32, 0x51));

	/* Reported: read and decoded again. */
	d->ddr_version = 8;
	ck_assert_int_eq(rerun(d, &desc, &c), NPU_TASK_OK);
	ck_assert(all_bytes(npu_tdev_hbsm(d, 0, 0), 32, 0x52));

	/* No version (0): read every time, as without the hook. */
	d->ddr_version = 0;
	insn_at(hdr, 0)->params.dtdu.value = 0x53;
	ck_assert_int_eq(rerun(d, &desc, &c), NPU_TASK_OK);
	ck_assert(all_bytes(npu_tdev_hbsm(d, 0, 0), 32, 0x53));
	insn_at(hdr, 0)->params.dtdu.value = 0x54;
	ck_assert_int_eq(rerun(d, &desc, &c), NPU_TASK_OK);
	ck_assert(all_bytes(npu_tdev_hbsm(d, 0, 0), 32, 0x54));

	/* Same address, same version, other physical pages (remapped): the
	 * version speaks for the bytes where they lay, so read again. */
	d->ddr_version = 9;
	ck_assert_int_eq(rerun(d, &desc, &c), NPU_TASK_OK);
	npu_tprog_init(&q);
	add_fill(&q, 1, 0, 32, 0x55);
	npu_tdev_prepare(d, &q, &o, &desc2);
	ck_assert_uint_eq(desc2.prog_va, desc.prog_va);
	ck_assert_uint_eq(desc2.pt_base, desc.pt_base);
	ck_assert_int_eq(rerun(d, &desc, &c), NPU_TASK_OK);
	ck_assert(all_bytes(npu_tdev_hbsm(d, 0, 0), 32, 0x55));
	npu_tprog_free(&p);
	npu_tprog_free(&q);
	npu_tdev_destroy(d);
}
END_TEST

static Suite *core_resubmit_suite(void)
{
	Suite *s = suite_create("core_resubmit");
	TCase *t = tcase_create("resubmit");

	tcase_add_loop_test(t, test_rewritten_in_place_runs_new_program, 0, 2);
	tcase_add_loop_test(t, test_same_va_other_context, 0, 2);
	tcase_add_loop_test(t, test_same_bytes_other_partition, 0, 2);
	tcase_add_loop_test(t, test_more_programs_than_kept, 0, 2);
	tcase_add_loop_test(t, test_counters_start_at_zero_after_remote_signal, 0, 2);
	tcase_add_test(t, test_host_version_skips_reading);
	suite_add_tcase(s, t);
	return s;
}

NPU_TEST_SUITE(core_resubmit_suite)
