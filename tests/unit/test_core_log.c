// SPDX-License-Identifier: MIT
/*
 * The core's log and reset hooks: what a host hears about refused
 * register accesses, stopped queues and failed tasks (the event, its
 * fields and a line that says why), and when the device was reset.
 */
#include <string.h>

#include "npu_tdev.h"
#include "npu_test.h"

#define RD(d, off) npu_core_mmio_read((d)->core, (off))
#define WR(d, off, v) npu_core_mmio_write((d)->core, (off), (v))

static struct npu_tdev *small_dev(void)
{
	struct npu_tdev *d = npu_tdev_small(2, 1, 0, 1);

	ck_assert_ptr_nonnull(d);
	return d;
}

static unsigned total_logs(const struct npu_tdev *d)
{
	unsigned n = 0;

	for (unsigned e = 0; e <= NPU_EV_HOST_ERROR; e++)
		n += d->log_count[e];
	return n;
}

#define ASSERT_MSG_HAS(d, text)						\
	ck_assert_msg(strstr((d)->log_msg, (text)) != NULL,		\
		      "log line '%s' lacks '%s'", (d)->log_msg, (text))

START_TEST(test_log_bad_register_accesses)
{
	struct npu_tdev *d = small_dev();
	uint32_t bad = RD(d, NPU_REG_BAD_ACCESS);

	/* Setting up the queues logged nothing. */
	ck_assert_uint_eq(total_logs(d), 0);

	WR(d, NPU_REG_ID, 0x1234);
	ck_assert_uint_eq(d->log_count[NPU_EV_BAD_ACCESS], 1);
	ck_assert_int_eq(d->log_last.event, NPU_EV_BAD_ACCESS);
	ck_assert_uint_eq(d->log_last.offset, NPU_REG_ID);
	ck_assert(d->log_last.write);
	ck_assert_uint_eq(d->log_last.value, 0x1234);
	ck_assert_uint_eq(d->log_last.size, 4);
	ASSERT_MSG_HAS(d, "4-byte write of 0x1234 at 0x0 refused");
	ASSERT_MSG_HAS(d, "no writable register");

	RD(d, 0x2);
	ck_assert_uint_eq(d->log_count[NPU_EV_BAD_ACCESS], 2);
	ck_assert(!d->log_last.write);
	ck_assert_uint_eq(d->log_last.offset, 0x2);
	ASSERT_MSG_HAS(d, "read at 0x2 refused: registers are 4-byte aligned");

	npu_core_mmio_bad_access(d->core, NPU_REG_SCRATCH, 2, true, 0xbeef);
	ck_assert_uint_eq(d->log_last.size, 2);
	ck_assert_uint_eq(d->log_last.value, 0xbeef);
	ASSERT_MSG_HAS(d, "2-byte write of 0xbeef");
	ASSERT_MSG_HAS(d, "aligned 4- or 8-byte accesses");

	/* The ring cannot move under an enabled queue. */
	WR(d, NPU_REG_Q(1, NPU_Q_BASE_LO), 0x8000);
	ck_assert_uint_eq(d->log_last.offset, NPU_REG_Q(1, NPU_Q_BASE_LO));
	ASSERT_MSG_HAS(d, "fixed while its queue is enabled");

	/* A reset register write without the magic resets nothing. */
	WR(d, NPU_REG_RESET, 1);
	ASSERT_MSG_HAS(d, "NPU_RESET_MAGIC");
	ck_assert_uint_eq(d->resets, 0);

	/* Every logged access is one counted in NPU_REG_BAD_ACCESS. */
	ck_assert_uint_eq(d->log_count[NPU_EV_BAD_ACCESS], 5);
	ck_assert_uint_eq(RD(d, NPU_REG_BAD_ACCESS) - bad, 5);
	/* Good accesses log nothing. */
	WR(d, NPU_REG_SCRATCH, 7);
	ck_assert_uint_eq(RD(d, NPU_REG_SCRATCH), 7);
	ck_assert_uint_eq(total_logs(d), 5);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_log_queue_errors)
{
	struct npu_tdev *d = small_dev();

	WR(d, NPU_REG_Q(2, NPU_Q_TAIL), 1000);
	npu_core_run_pending(d->core);
	ck_assert_uint_eq(NPU_Q_STATE(RD(d, NPU_REG_Q(2, NPU_Q_STATUS))),
			  NPU_Q_STATE_ERROR);
	ck_assert_uint_eq(d->log_count[NPU_EV_QUEUE_ERROR], 1);
	ck_assert_uint_eq(d->log_last.queue, 2);
	ASSERT_MSG_HAS(d, "queue 2 stopped: doorbell TAIL 1000 beyond its 16-entry ring");

	WR(d, NPU_REG_Q(3, NPU_Q_CTRL), 0);
	WR(d, NPU_REG_Q(3, NPU_Q_BASE_LO), 0x1080);
	WR(d, NPU_REG_Q(3, NPU_Q_CTRL), NPU_Q_CTRL_ENABLE);
	ck_assert_uint_eq(d->log_count[NPU_EV_QUEUE_ERROR], 2);
	ck_assert_uint_eq(d->log_last.queue, 3);
	ASSERT_MSG_HAS(d, "ring base not 4096-byte aligned (low bits 0x80)");

	WR(d, NPU_REG_Q(3, NPU_Q_BASE_LO), 0x1000);
	WR(d, NPU_REG_Q(3, NPU_Q_SIZE_LOG2), 13);
	WR(d, NPU_REG_Q(3, NPU_Q_CTRL), NPU_Q_CTRL_ENABLE);
	ck_assert_uint_eq(d->log_count[NPU_EV_QUEUE_ERROR], 3);
	ASSERT_MSG_HAS(d, "ring of 2^13 entries, outside 2^1..2^12");
	ck_assert_uint_eq(d->log_count[NPU_EV_BAD_ACCESS], 0);
	npu_tdev_destroy(d);
}
END_TEST

/* A DMA copy of n bytes from src to dst (device VAs). */
static void add_copy(struct npu_tprog *p, uint64_t src, uint64_t dst,
		     uint32_t n)
{
	struct npu_hw_insn *in = npu_tprog_add(p, NPU_UNIT_DMA, NPU_DMA_COPY, 0, 0);
	uint32_t dims[1] = { n };

	npu_twu_dense(&in->opnd[NPU_OPND_SRC0], NPU_SPACE_DDR, NPU_DT_UINT8,
		      src, 1, dims);
	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_DDR, NPU_DT_UINT8,
		      dst, 1, dims);
}

START_TEST(test_log_task_errors)
{
	struct npu_tdev *d = small_dev();
	struct npu_tdev_submit o = { .queue = 1 };
	struct npu_hw_completion c;
	struct npu_hw_task desc;
	struct npu_tprog p;
	uint64_t root = npu_tdev_ctx(d);

	npu_tdev_buf(d, root, 0x200000, 4096, false);
	npu_tdev_buf(d, root, 0x300000, 4096, true);
	o.root = root;

	/* A good task logs nothing. */
	npu_tprog_init(&p);
	add_copy(&p, 0x200000, 0x300000, 256);
	ck_assert_int_eq(npu_tdev_run(d, &p, &o, &c), NPU_TASK_OK);
	ck_assert_uint_eq(total_logs(d), 0);

	/* A read of an unmapped address: an MMU fault, address named. */
	p.insn[0].opnd[NPU_OPND_SRC0].base = 0x500000;
	ck_assert_int_eq(npu_tdev_run(d, &p, &o, &c), NPU_TASK_MMU_FAULT);
	ck_assert_uint_eq(d->log_count[NPU_EV_TASK_ERROR], 1);
	ck_assert_uint_eq(d->log_last.queue, 1);
	ck_assert_uint_eq(d->log_last.seqno, d->seqno);
	ck_assert_ptr_nonnull(d->log_last.comp);
	ck_assert_uint_eq(d->log_comp.status, NPU_TASK_MMU_FAULT);
	ck_assert_uint_eq(d->log_comp.fault_addr, 0x500000);
	ASSERT_MSG_HAS(d, "queue 1, task");
	ASSERT_MSG_HAS(d, "MMU fault: read of device address 0x500000");
	ASSERT_MSG_HAS(d, "not mapped (instruction 0)");

	/* A write through a read-only mapping. */
	p.insn[0].opnd[NPU_OPND_SRC0].base = 0x300000;
	p.insn[0].opnd[NPU_OPND_DST].base = 0x200000;
	ck_assert_int_eq(npu_tdev_run(d, &p, &o, &c), NPU_TASK_MMU_FAULT);
	ASSERT_MSG_HAS(d, "write of device address 0x200000");
	ASSERT_MSG_HAS(d, "the mapping does not allow it");

	/* An instruction for a unit that does not exist. */
	p.insn[0].unit = 9;
	ck_assert_int_eq(npu_tdev_run(d, &p, &o, &c), NPU_TASK_ILLEGAL_INSN);
	ck_assert_uint_eq(d->log_comp.detail, NPU_IE_UNIT);
	ASSERT_MSG_HAS(d, "illegal instruction: instruction 0: unknown unit");
	npu_tprog_free(&p);

	/* A descriptor with a wrong magic: its fields are in the line. */
	npu_tprog_init(&p);
	add_copy(&p, 0x200000, 0x300000, 256);
	npu_tdev_prepare(d, &p, &o, &desc);
	desc.magic = 0x12345678;
	ck_assert_int_eq(npu_tdev_run_desc(d, 0, &desc, &c),
			 NPU_TASK_BAD_DESCRIPTOR);
	ck_assert_uint_eq(d->log_last.queue, 0);
	ck_assert_uint_eq(d->log_last.seqno, desc.seqno);
	ASSERT_MSG_HAS(d, "bad task descriptor: magic 0x12345678");
	ck_assert_uint_eq(d->log_count[NPU_EV_TASK_ERROR], 4);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_log_fence_unwritable)
{
	struct npu_tdev *d = small_dev();
	struct npu_tdev_submit o = { 0 };
	struct npu_hw_task desc;
	struct npu_tprog p;
	uint64_t tail = 0;
	uint64_t ring;

	npu_tprog_init(&p);
	npu_tprog_add(&p, NPU_UNIT_SYNC, NPU_SYNC_NOP, 1, 1);
	npu_tdev_prepare(d, &p, &o, &desc);
	npu_tprog_free(&p);
	/* Queue it by hand, with a fence beyond the host's memory. */
	desc.seqno = 77;
	desc.fence_addr = 1ull << 40;
	ring = d->ring_pa[0];
	memcpy(npu_tdev_ptr(d, ring), &desc, sizeof(desc));
	WR(d, NPU_REG_Q(0, NPU_Q_TAIL), (uint32_t)(tail + 1));
	npu_core_run_pending(d->core);
	ck_assert_uint_eq(NPU_Q_LAST_STATUS(RD(d, NPU_REG_Q(0, NPU_Q_STATUS))),
			  NPU_TASK_BUS_ERROR);
	ck_assert_uint_eq(d->log_count[NPU_EV_TASK_ERROR], 1);
	ck_assert_uint_eq(d->log_last.seqno, 77);
	ASSERT_MSG_HAS(d, "bus error: the completion record at 0x10000000000 cannot be written");
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_reset_hook)
{
	struct npu_tdev *d = small_dev();

	/* Creating the core is not a reset the host hears of. */
	ck_assert_uint_eq(d->resets, 0);
	WR(d, NPU_REG_RESET, NPU_RESET_MAGIC);
	ck_assert_uint_eq(d->resets, 1);
	/* The core reset itself before telling the host. */
	ck_assert_uint_eq(RD(d, NPU_REG_Q(0, NPU_Q_CTRL)), 0);
	npu_core_reset(d->core);
	ck_assert_uint_eq(d->resets, 2);
	npu_core_power_loss(d->core);
	ck_assert_uint_eq(d->resets, 3);
	ck_assert_uint_eq(total_logs(d), 0);
	npu_tdev_destroy(d);
}
END_TEST

static int no_mem(void *opaque, uint64_t pa, void *buf, size_t len)
{
	(void)opaque, (void)pa, (void)buf, (void)len;
	return -1;
}

static int no_mem_w(void *opaque, uint64_t pa, const void *buf, size_t len)
{
	(void)opaque, (void)pa, (void)buf, (void)len;
	return -1;
}

/* Both hooks are optional: a host without them still gets the counts. */
START_TEST(test_hooks_optional)
{
	struct npu_core_host host = { .mem_read = no_mem, .mem_write = no_mem_w };
	struct npu_core_config cfg;
	struct npu_core *core;

	npu_core_config_default(&cfg);
	cfg.threads = 1;
	core = npu_core_create(&cfg, &host, NULL, 0);
	ck_assert_ptr_nonnull(core);
	npu_core_mmio_write(core, NPU_REG_ID, 1);
	npu_core_mmio_bad_access(core, 0, 1, false, 0);
	npu_core_mmio_write(core, NPU_REG_RESET, NPU_RESET_MAGIC);
	ck_assert_uint_eq(npu_core_mmio_read(core, NPU_REG_BAD_ACCESS), 0);
	npu_core_mmio_write(core, NPU_REG_Q(0, NPU_Q_TAIL), 5);
	npu_core_mmio_write(core, NPU_REG_ID, 1);
	ck_assert_uint_eq(npu_core_mmio_read(core, NPU_REG_BAD_ACCESS), 1);
	npu_core_destroy(core);
}
END_TEST

START_TEST(test_insn_error_names)
{
	ck_assert_str_eq(npu_core_insn_error_str(NPU_IE_UNIT), "unknown unit");
	ck_assert_str_eq(npu_core_insn_error_str(NPU_IE_RANGE),
			 "a walker leaves its address space");
	for (unsigned e = NPU_IE_UNIT; e <= NPU_IE_CHAIN; e++)
		ck_assert_str_ne(npu_core_insn_error_str(e), "unknown instruction error");
	ck_assert_str_eq(npu_core_insn_error_str(0), "unknown instruction error");
	ck_assert_str_eq(npu_core_insn_error_str(99), "unknown instruction error");
}
END_TEST

static Suite *core_log_suite(void)
{
	Suite *s = suite_create("core_log");
	TCase *tc = tcase_create("log");

	tcase_add_test(tc, test_log_bad_register_accesses);
	tcase_add_test(tc, test_log_queue_errors);
	tcase_add_test(tc, test_log_task_errors);
	tcase_add_test(tc, test_log_fence_unwritable);
	tcase_add_test(tc, test_reset_hook);
	tcase_add_test(tc, test_hooks_optional);
	tcase_add_test(tc, test_insn_error_names);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(core_log_suite)
