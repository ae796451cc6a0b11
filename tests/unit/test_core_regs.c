// SPDX-License-Identifier: MIT
/*
 * Device core BAR0 registers: identity and geometry, configuration
 * checking, scratch and bad accesses, interrupts, reset, 64-bit latches,
 * queue configuration errors, the task lifecycle as seen through the
 * registers, and the performance counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_tdev.h"
#include "npu_test.h"

#define RD(d, off) npu_core_mmio_read((d)->core, (off))
#define WR(d, off, v) npu_core_mmio_write((d)->core, (off), (v))

/* ---- helpers ---- */

static struct npu_tdev *small_dev(unsigned clusters, unsigned tpbs,
				  uint32_t defect)
{
	struct npu_tdev *d = npu_tdev_small(clusters, tpbs, defect, 1);

	ck_assert_ptr_nonnull(d);
	return d;
}

static uint64_t rd64(struct npu_tdev *d, uint32_t off_lo)
{
	uint64_t lo = RD(d, off_lo);

	return lo | (uint64_t)RD(d, off_lo + 4) << 32;
}

/* A FILL of n bytes at dst on (cluster mask, tpb mask). */
static struct npu_hw_insn *add_fill(struct npu_tprog *p, unsigned cm,
				    unsigned tm, uint32_t dst, uint32_t n,
				    uint32_t value)
{
	struct npu_hw_insn *in = npu_tprog_add(p, NPU_UNIT_DTDU, NPU_DTDU_FILL,
					       cm, tm);
	uint32_t dims[1] = { n };

	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_UINT8,
		      dst, 1, dims);
	in->params.dtdu.value = value;
	return in;
}

/*
 * Write a program to DDR under a fresh context and build its descriptor
 * (like npu_tdev_run, without queueing it), with no completion interrupt
 * requested and logical cluster i mapped to physical cluster i.
 */
static void prep_desc(struct npu_tdev *d, const struct npu_tprog *p,
		      unsigned nclusters, struct npu_hw_task *desc)
{
	struct npu_tdev_submit opt = { .nclusters = nclusters };

	npu_tdev_prepare(d, p, &opt, desc);
	desc->flags = 0;
	for (unsigned i = 0; i < nclusters; i++)
		desc->cluster_map[i] = (uint8_t)i;
}

static bool all_zero_bytes(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* One small OK task through npu_tdev_run on queue q. */
static void run_fill(struct npu_tdev *d, unsigned q, struct npu_hw_completion *c)
{
	struct npu_tprog p;
	struct npu_tdev_submit o = { .queue = q };

	npu_tprog_init(&p);
	add_fill(&p, 1, 1, 0x100, 256, 0x5a);
	ck_assert_int_eq(npu_tdev_run(d, &p, &o, c), NPU_TASK_OK);
	npu_tprog_free(&p);
}

/* ---- identity and geometry ---- */

START_TEST(test_identity_default)
{
	struct npu_tdev *d = npu_tdev_create(NULL, 16);
	uint32_t v;

	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(RD(d, NPU_REG_ID), NPU_ID_MAGIC);
	v = RD(d, NPU_REG_VERSION);
	ck_assert_uint_eq(NPU_VERSION_MAJOR(v), NPU_HW_VERSION_MAJOR);
	ck_assert_uint_eq(NPU_VERSION_MINOR(v), NPU_HW_VERSION_MINOR);
	ck_assert_uint_eq(RD(d, NPU_REG_ISA_VERSION),
			  (NPU_PROG_VERSION_MAJOR << 16) | NPU_PROG_VERSION_MINOR);
	v = RD(d, NPU_REG_CAPS);
	ck_assert_uint_eq(v & (NPU_CAP_INT8 | NPU_CAP_BF16 | NPU_CAP_FP16 |
			       NPU_CAP_MMU | NPU_CAP_PERF),
			  NPU_CAP_INT8 | NPU_CAP_BF16 | NPU_CAP_FP16 |
			  NPU_CAP_MMU | NPU_CAP_PERF);
	ck_assert_uint_eq(v & NPU_CAP_TIMING, 0);	/* default: timing off */
	v = RD(d, NPU_REG_GEOM);
	ck_assert_uint_eq(NPU_GEOM_CLUSTERS(v), NPU_M100_CLUSTERS);
	ck_assert_uint_eq(NPU_GEOM_TPBS(v), NPU_M100_TPBS_PER_CLUSTER);
	ck_assert_uint_eq(NPU_GEOM_QUEUES(v), NPU_HW_NUM_QUEUES);
	ck_assert_uint_eq(NPU_GEOM_DMA_ENGINES(v), NPU_HW_NUM_DMA_ENGINES);
	v = RD(d, NPU_REG_MESH);
	ck_assert_uint_eq(NPU_MESH_X(v), NPU_M100_MESH_X);
	ck_assert_uint_eq(NPU_MESH_Y(v), NPU_M100_MESH_Y);
	ck_assert_uint_eq(NPU_MESH_CCB_NODE(v), NPU_M100_CCB_NODE);
	ck_assert_uint_eq(NPU_MESH_DDR_NODE(v), NPU_M100_DDR_NODE);
	ck_assert_uint_eq(RD(d, NPU_REG_HBSM_SIZE), NPU_M100_HBSM_SIZE);
	ck_assert_uint_eq(RD(d, NPU_REG_SRAM_SIZE), NPU_M100_SRAM_SIZE);
	ck_assert_uint_eq(RD(d, NPU_REG_CLOCK_MHZ), NPU_M100_CLOCK_MHZ);
	ck_assert_uint_eq(RD(d, NPU_REG_FUSE_MASK), 0);
	ck_assert_uint_eq(RD(d, NPU_REG_TCU_GEOM),
			  NPU_M100_TCU_ROWS | NPU_M100_TCU_COLS << 8 |
			  NPU_M100_TCU_DOT << 16);
	ck_assert_uint_eq(RD(d, NPU_REG_SU_COUNTERS), NPU_HW_SU_COUNTERS);
	ck_assert_uint_eq(RD(d, NPU_REG_HBSM_GEOM),
			  NPU_M100_HBSM_BANKS | NPU_M100_HBSM_BANK_BYTES << 8 |
			  NPU_M100_HBSM_PORTS << 16);
	/* 4 banks, 4 KiB = 2^12 interleave */
	ck_assert_uint_eq(RD(d, NPU_REG_SRAM_GEOM), NPU_M100_SRAM_BANKS | 12 << 8);
	ck_assert_uint_eq(RD(d, NPU_REG_LINK_BW), NPU_M100_LINK_BYTES_PER_CYCLE);
	ck_assert_uint_eq(RD(d, NPU_REG_DDR_BW), NPU_M100_DDR_BYTES_PER_CYCLE);
	v = RD(d, NPU_REG_STATUS);
	ck_assert(v & NPU_STATUS_READY);
	for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++)
		ck_assert_uint_eq(v & NPU_STATUS_QUEUE_BUSY(q), 0);
	ck_assert_uint_eq(RD(d, NPU_REG_MMU_CTRL), NPU_MMU_CTRL_ENABLE);
	ck_assert_uint_eq(RD(d, NPU_REG_PERF_CTRL), NPU_PERF_CTRL_ENABLE);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_cluster_pos_default)
{
	struct npu_tdev *d = npu_tdev_create(NULL, 16);
	uint32_t seen = 0;

	ck_assert_ptr_nonnull(d);
	/* Row-major fill of a 4x4 mesh skipping node 0 (CCB) and 3 (DDR). */
	ck_assert_uint_eq(RD(d, NPU_REG_CLUSTER_POS(0)), 1 | 0 << 8);
	ck_assert_uint_eq(RD(d, NPU_REG_CLUSTER_POS(1)), 2 | 0 << 8);
	ck_assert_uint_eq(RD(d, NPU_REG_CLUSTER_POS(2)), 0 | 1 << 8);
	ck_assert_uint_eq(RD(d, NPU_REG_CLUSTER_POS(13)), 3 | 3 << 8);
	for (unsigned c = 0; c < NPU_M100_CLUSTERS; c++) {
		uint32_t v = RD(d, NPU_REG_CLUSTER_POS(c));
		unsigned x = v & 0xff, y = (v >> 8) & 0xff;
		unsigned node = y * NPU_M100_MESH_X + x;

		ck_assert_uint_lt(x, NPU_M100_MESH_X);
		ck_assert_uint_lt(y, NPU_M100_MESH_Y);
		ck_assert_uint_ne(node, NPU_M100_CCB_NODE);
		ck_assert_uint_ne(node, NPU_M100_DDR_NODE);
		ck_assert_uint_eq(seen & (1u << node), 0);	/* distinct */
		seen |= 1u << node;
	}
	/* Clusters that do not exist have no position. */
	ck_assert_uint_eq(RD(d, NPU_REG_CLUSTER_POS(14)), 0);
	ck_assert_uint_eq(RD(d, NPU_REG_CLUSTER_POS(15)), 0);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_identity_custom)
{
	struct npu_core_config cfg;
	struct npu_tdev *d;
	uint32_t v;

	npu_core_config_default(&cfg);
	cfg.clusters = 6;
	cfg.tpbs_per_cluster = 2;
	cfg.mesh_x = 4;
	cfg.mesh_y = 2;
	cfg.defect_mask = 0x12;
	cfg.clock_mhz = 750;
	cfg.hbsm_size = 128u << 10;
	cfg.sram_size = 2u << 20;
	cfg.timing = true;
	d = npu_tdev_create(&cfg, 16);
	ck_assert_ptr_nonnull(d);
	v = RD(d, NPU_REG_GEOM);
	ck_assert_uint_eq(NPU_GEOM_CLUSTERS(v), 6);
	ck_assert_uint_eq(NPU_GEOM_TPBS(v), 2);
	ck_assert_uint_eq(NPU_GEOM_QUEUES(v), NPU_HW_NUM_QUEUES);
	ck_assert_uint_eq(NPU_GEOM_DMA_ENGINES(v), NPU_HW_NUM_DMA_ENGINES);
	v = RD(d, NPU_REG_MESH);
	ck_assert_uint_eq(NPU_MESH_X(v), 4);
	ck_assert_uint_eq(NPU_MESH_Y(v), 2);
	ck_assert_uint_eq(NPU_MESH_CCB_NODE(v), 0);
	ck_assert_uint_eq(NPU_MESH_DDR_NODE(v), 3);
	ck_assert_uint_eq(RD(d, NPU_REG_FUSE_MASK), 0x12);
	ck_assert_uint_eq(RD(d, NPU_REG_CLOCK_MHZ), 750);
	ck_assert_uint_eq(RD(d, NPU_REG_HBSM_SIZE), 128u << 10);
	ck_assert_uint_eq(RD(d, NPU_REG_SRAM_SIZE), 2u << 20);
	ck_assert(RD(d, NPU_REG_CAPS) & NPU_CAP_TIMING);
	/* nodes 1, 2, 4, 5, 6, 7 */
	ck_assert_uint_eq(RD(d, NPU_REG_CLUSTER_POS(0)), 1);
	ck_assert_uint_eq(RD(d, NPU_REG_CLUSTER_POS(1)), 2);
	ck_assert_uint_eq(RD(d, NPU_REG_CLUSTER_POS(2)), 0 | 1 << 8);
	ck_assert_uint_eq(RD(d, NPU_REG_CLUSTER_POS(5)), 3 | 1 << 8);
	ck_assert_uint_eq(RD(d, NPU_REG_CLUSTER_POS(6)), 0);
	/* The debug backdoor agrees with the geometry. */
	ck_assert_ptr_nonnull(npu_core_debug_hbsm(d->core, 5, 1, NULL));
	ck_assert_ptr_null(npu_core_debug_hbsm(d->core, 6, 0, NULL));
	ck_assert_ptr_null(npu_core_debug_hbsm(d->core, 0, 2, NULL));
	npu_tdev_destroy(d);
}
END_TEST

/* ---- configuration checking ---- */

struct bad_cfg {
	const char *what;
	void (*mutate)(struct npu_core_config *c);
};

static void m_all_fused(struct npu_core_config *c) { c->clusters = 4; c->mesh_y = 2; c->defect_mask = 0xf; }
static void m_mask_beyond(struct npu_core_config *c) { c->clusters = 4; c->mesh_y = 2; c->defect_mask = 0x10; }
static void m_mesh_small(struct npu_core_config *c) { c->mesh_y = 3; }	/* 12 < 14 + 2 */
static void m_mesh_big(struct npu_core_config *c) { c->mesh_x = 5; }	/* 20 > 16 */
static void m_mesh_x1(struct npu_core_config *c) { c->clusters = 1; c->mesh_x = 1; c->mesh_y = 4; }
static void m_tpbs0(struct npu_core_config *c) { c->tpbs_per_cluster = 0; }
static void m_tpbs5(struct npu_core_config *c) { c->tpbs_per_cluster = 5; }
static void m_clusters0(struct npu_core_config *c) { c->clusters = 0; }
static void m_clusters17(struct npu_core_config *c) { c->clusters = 17; }
static void m_hbsm_npot(struct npu_core_config *c) { c->hbsm_size = 3u << 16; }
static void m_hbsm_small(struct npu_core_config *c) { c->hbsm_size = 32u << 10; }
static void m_hbsm_big(struct npu_core_config *c) { c->hbsm_size = 4u << 20; }
static void m_sram_small(struct npu_core_config *c) { c->sram_size = 512u << 10; }
static void m_sram_odd(struct npu_core_config *c) { c->sram_size = (1u << 20) + 4096; }
static void m_clock0(struct npu_core_config *c) { c->clock_mhz = 0; }

static const struct bad_cfg bad_cfgs[] = {
	{ "all clusters fused", m_all_fused },
	{ "defect mask beyond clusters", m_mask_beyond },
	{ "mesh too small", m_mesh_small },
	{ "mesh too big", m_mesh_big },
	{ "mesh x 1", m_mesh_x1 },
	{ "tpbs 0", m_tpbs0 },
	{ "tpbs 5", m_tpbs5 },
	{ "clusters 0", m_clusters0 },
	{ "clusters 17", m_clusters17 },
	{ "hbsm not a power of two", m_hbsm_npot },
	{ "hbsm too small", m_hbsm_small },
	{ "hbsm too big", m_hbsm_big },
	{ "sram too small", m_sram_small },
	{ "sram not whole stripes", m_sram_odd },
	{ "clock 0", m_clock0 },
};

START_TEST(test_config_check_rejects)
{
	for (size_t i = 0; i < sizeof(bad_cfgs) / sizeof(bad_cfgs[0]); i++) {
		struct npu_core_config cfg;
		char err[200] = "";

		npu_core_config_default(&cfg);
		bad_cfgs[i].mutate(&cfg);
		ck_assert_msg(npu_core_config_check(&cfg, err, sizeof(err)) == -1,
			      "accepted: %s", bad_cfgs[i].what);
		ck_assert_msg(strlen(err) > 0, "no message for: %s", bad_cfgs[i].what);
		/* NULL error buffer is allowed */
		ck_assert_int_eq(npu_core_config_check(&cfg, NULL, 0), -1);
	}
}
END_TEST

START_TEST(test_config_check_messages)
{
	struct npu_core_config cfg;
	char err[200] = "";

	npu_core_config_default(&cfg);
	ck_assert_int_eq(npu_core_config_check(&cfg, err, sizeof(err)), 0);
	/* Largest legal defect mask: all but one cluster fused. */
	cfg.defect_mask = (1u << NPU_M100_CLUSTERS) - 2;
	ck_assert_int_eq(npu_core_config_check(&cfg, err, sizeof(err)), 0);

	npu_core_config_default(&cfg);
	cfg.tpbs_per_cluster = 5;
	ck_assert_int_eq(npu_core_config_check(&cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "tpb"));
	npu_core_config_default(&cfg);
	cfg.hbsm_size = 3u << 16;
	ck_assert_int_eq(npu_core_config_check(&cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "hbsm"));
	npu_core_config_default(&cfg);
	cfg.defect_mask = (1u << NPU_M100_CLUSTERS) - 1;
	ck_assert_int_eq(npu_core_config_check(&cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "defect"));
	npu_core_config_default(&cfg);
	cfg.mesh_y = 3;
	ck_assert_int_eq(npu_core_config_check(&cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "mesh"));
	/* A truncated error buffer is still NUL-terminated. */
	memset(err, 'x', sizeof(err));
	ck_assert_int_eq(npu_core_config_check(&cfg, err, 8), -1);
	ck_assert_uint_eq(strlen(err), 7);
}
END_TEST

START_TEST(test_create_rejects_bad_config)
{
	struct npu_core_host host = { 0 };
	struct npu_core_config cfg;
	char err[200] = "";

	npu_core_config_default(&cfg);
	cfg.tpbs_per_cluster = 0;
	ck_assert_ptr_null(npu_core_create(&cfg, &host, err, sizeof(err)));
	ck_assert_uint_gt(strlen(err), 0);
	/* A valid config without memory callbacks is refused too. */
	npu_core_config_default(&cfg);
	err[0] = 0;
	ck_assert_ptr_null(npu_core_create(&cfg, &host, err, sizeof(err)));
	ck_assert_uint_gt(strlen(err), 0);
}
END_TEST

/* ---- scratch and bad accesses ---- */

START_TEST(test_scratch_rw)
{
	struct npu_tdev *d = small_dev(2, 2, 0);

	ck_assert_uint_eq(RD(d, NPU_REG_SCRATCH), 0);
	WR(d, NPU_REG_SCRATCH, 0xdeadbeef);
	ck_assert_uint_eq(RD(d, NPU_REG_SCRATCH), 0xdeadbeef);
	WR(d, NPU_REG_SCRATCH, 0x01234567);
	ck_assert_uint_eq(RD(d, NPU_REG_SCRATCH), 0x01234567);
	WR(d, NPU_REG_SCRATCH, 0);
	ck_assert_uint_eq(RD(d, NPU_REG_SCRATCH), 0);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_bad_access_reads)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	uint32_t base;

	WR(d, NPU_REG_SCRATCH, 0xffffffff);
	base = RD(d, NPU_REG_BAD_ACCESS);
	/* misaligned: even next to a valid register */
	ck_assert_uint_eq(RD(d, NPU_REG_SCRATCH + 1), 0);
	ck_assert_uint_eq(RD(d, NPU_REG_SCRATCH + 2), 0);
	ck_assert_uint_eq(RD(d, NPU_REG_BAD_ACCESS), base + 2);
	/* out of the BAR */
	ck_assert_uint_eq(RD(d, NPU_BAR0_SIZE), 0);
	ck_assert_uint_eq(RD(d, 0xfffffffc), 0);
	ck_assert_uint_eq(RD(d, NPU_REG_BAD_ACCESS), base + 4);
	/* undefined offsets inside the BAR */
	ck_assert_uint_eq(RD(d, 0x0f00), 0);
	ck_assert_uint_eq(RD(d, NPU_REG_Q(0, 0x1c)), 0);	/* hole in a queue block */
	ck_assert_uint_eq(RD(d, NPU_REG_PERF_CTRL + 4), 0);	/* hole in perf */
	ck_assert_uint_eq(RD(d, 0x8000), 0);
	ck_assert_uint_eq(RD(d, NPU_REG_BAD_ACCESS), base + 8);
	/* good reads do not count */
	(void)RD(d, NPU_REG_ID);
	(void)RD(d, NPU_REG_PERF_CYCLES);
	ck_assert_uint_eq(RD(d, NPU_REG_BAD_ACCESS), base + 8);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_bad_access_writes)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	uint32_t base = RD(d, NPU_REG_BAD_ACCESS);
	uint32_t head = RD(d, NPU_REG_Q(0, NPU_Q_HEAD));

	/* read-only registers keep their value */
	WR(d, NPU_REG_ID, 0x12345678);
	WR(d, NPU_REG_GEOM, 0);
	WR(d, NPU_REG_Q(0, NPU_Q_HEAD), 5);
	ck_assert_uint_eq(RD(d, NPU_REG_ID), NPU_ID_MAGIC);
	ck_assert_uint_eq(NPU_GEOM_CLUSTERS(RD(d, NPU_REG_GEOM)), 2);
	ck_assert_uint_eq(RD(d, NPU_REG_Q(0, NPU_Q_HEAD)), head);
	ck_assert_uint_eq(RD(d, NPU_REG_BAD_ACCESS), base + 3);
	/* misaligned, out of range and undefined writes are dropped */
	WR(d, NPU_REG_SCRATCH + 2, 0xffff);
	WR(d, NPU_BAR0_SIZE + 0x10c, 0xffff);
	WR(d, 0x0f00, 1);
	ck_assert_uint_eq(RD(d, NPU_REG_SCRATCH), 0);
	ck_assert_uint_eq(RD(d, NPU_REG_BAD_ACCESS), base + 6);
	npu_tdev_destroy(d);
}
END_TEST

/* ---- interrupts ---- */

START_TEST(test_irq_mask_status_w1c)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	struct npu_tprog p;
	struct npu_hw_task desc;
	struct npu_hw_completion *fence;

	/* Only the defined interrupt bits are writable in the mask. */
	WR(d, NPU_REG_IRQ_MASK, 0xffffffff);
	ck_assert_uint_eq(RD(d, NPU_REG_IRQ_MASK),
			  NPU_IRQ_QUEUE_ALL | NPU_IRQ_ERROR | NPU_IRQ_MMU_FAULT);
	WR(d, NPU_REG_IRQ_MASK, 0);
	ck_assert_uint_eq(RD(d, NPU_REG_IRQ_MASK), 0);

	npu_tprog_init(&p);
	add_fill(&p, 1, 1, 0, 64, 1);
	prep_desc(d, &p, 1, &desc);
	desc.flags = NPU_TASK_F_IRQ;
	fence = npu_tdev_queue(d, 1, &desc);
	npu_core_run_pending(d->core);
	ck_assert_uint_eq(fence->seqno, desc.seqno);
	ck_assert_uint_eq(fence->status, NPU_TASK_OK);
	/* Raised but masked: raw has it, status and the line do not. */
	ck_assert_uint_eq(RD(d, NPU_REG_IRQ_RAW), NPU_IRQ_QUEUE(1));
	ck_assert_uint_eq(RD(d, NPU_REG_IRQ_STATUS), 0);
	ck_assert_uint_eq(d->irq_pending, 0);
	/* Unmasking asserts the line. */
	WR(d, NPU_REG_IRQ_MASK, NPU_IRQ_QUEUE(1));
	ck_assert_uint_eq(RD(d, NPU_REG_IRQ_STATUS), NPU_IRQ_QUEUE(1));
	ck_assert_uint_eq(d->irq_pending, NPU_IRQ_QUEUE(1));
	/* Writing 1 to other bits clears nothing. */
	WR(d, NPU_REG_IRQ_STATUS, NPU_IRQ_QUEUE(0) | NPU_IRQ_ERROR);
	ck_assert_uint_eq(RD(d, NPU_REG_IRQ_RAW), NPU_IRQ_QUEUE(1));
	ck_assert_uint_eq(d->irq_pending, NPU_IRQ_QUEUE(1));
	/* Writing 1 to the bit clears it and deasserts the line. */
	WR(d, NPU_REG_IRQ_STATUS, NPU_IRQ_QUEUE(1));
	ck_assert_uint_eq(RD(d, NPU_REG_IRQ_RAW), 0);
	ck_assert_uint_eq(RD(d, NPU_REG_IRQ_STATUS), 0);
	ck_assert_uint_eq(d->irq_pending, 0);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_irq_flag_and_error)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	struct npu_tprog p;
	struct npu_hw_task desc;
	struct npu_hw_completion *fence;

	WR(d, NPU_REG_IRQ_STATUS, 0xffffffff);
	npu_tprog_init(&p);
	add_fill(&p, 1, 1, 0, 64, 1);
	/* Without NPU_TASK_F_IRQ a good task raises nothing. */
	prep_desc(d, &p, 1, &desc);
	fence = npu_tdev_queue(d, 2, &desc);
	npu_core_run_pending(d->core);
	ck_assert_uint_eq(fence->status, NPU_TASK_OK);
	ck_assert_uint_eq(RD(d, NPU_REG_IRQ_RAW), 0);
	/* A failing task interrupts anyway, with the error bit. */
	p.insn[0].unit = 0x7f;
	prep_desc(d, &p, 1, &desc);
	fence = npu_tdev_queue(d, 2, &desc);
	npu_core_run_pending(d->core);
	ck_assert_uint_eq(fence->status, NPU_TASK_ILLEGAL_INSN);
	ck_assert_uint_eq(RD(d, NPU_REG_IRQ_RAW), NPU_IRQ_QUEUE(2) | NPU_IRQ_ERROR);
	ck_assert_uint_eq(d->irq_pending, NPU_IRQ_QUEUE(2) | NPU_IRQ_ERROR);
	ck_assert_uint_eq(NPU_Q_LAST_STATUS(RD(d, NPU_REG_Q(2, NPU_Q_STATUS))),
			  NPU_TASK_ILLEGAL_INSN);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

/* ---- reset ---- */

START_TEST(test_reset_clears_state)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	struct npu_hw_completion c;

	run_fill(d, 0, &c);
	WR(d, NPU_REG_SCRATCH, 0x55);
	WR(d, NPU_REG_MMU_CTRL, 0);
	WR(d, NPU_REG_IRQ_MASK, NPU_IRQ_QUEUE_ALL);
	/* leave an interrupt pending */
	{
		struct npu_tprog p;
		struct npu_hw_task desc;

		npu_tprog_init(&p);
		add_fill(&p, 1, 1, 0, 64, 1);
		prep_desc(d, &p, 1, &desc);
		desc.flags = NPU_TASK_F_IRQ;
		npu_tdev_queue(d, 3, &desc);
		npu_tprog_free(&p);
	}
	WR(d, NPU_REG_MMU_CTRL, NPU_MMU_CTRL_ENABLE);
	npu_core_run_pending(d->core);
	ck_assert_uint_ne(RD(d, NPU_REG_IRQ_RAW), 0);
	ck_assert_uint_ne(d->irq_pending, 0);
	ck_assert_uint_eq(rd64(d, NPU_REG_Q(0, NPU_Q_TASKS_LO)), 1);
	ck_assert_uint_gt(rd64(d, NPU_REG_PERF_CYCLES), 0);
	WR(d, NPU_REG_MMU_CTRL, 0);

	WR(d, NPU_REG_RESET, NPU_RESET_MAGIC);
	ck_assert_uint_eq(RD(d, NPU_REG_ID), NPU_ID_MAGIC);
	ck_assert_uint_eq(RD(d, NPU_REG_SCRATCH), 0);
	ck_assert_uint_eq(RD(d, NPU_REG_IRQ_RAW), 0);
	ck_assert_uint_eq(RD(d, NPU_REG_IRQ_MASK), 0);
	ck_assert_uint_eq(d->irq_pending, 0);
	ck_assert_uint_eq(RD(d, NPU_REG_MMU_CTRL), NPU_MMU_CTRL_ENABLE);
	ck_assert_uint_eq(RD(d, NPU_REG_PERF_CTRL), NPU_PERF_CTRL_ENABLE);
	ck_assert_uint_eq(RD(d, NPU_REG_FAULT_STATUS), 0);
	ck_assert_uint_eq(rd64(d, NPU_REG_PERF_CYCLES), 0);
	ck_assert_uint_eq(rd64(d, NPU_REG_PERF_UNIT_BUSY(0, NPU_PERF_UNIT_DTDU)), 0);
	for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
		ck_assert_uint_eq(RD(d, NPU_REG_Q(q, NPU_Q_CTRL)), 0);
		ck_assert_uint_eq(NPU_Q_STATE(RD(d, NPU_REG_Q(q, NPU_Q_STATUS))),
				  NPU_Q_STATE_DISABLED);
		ck_assert_uint_eq(RD(d, NPU_REG_Q(q, NPU_Q_HEAD)), 0);
		ck_assert_uint_eq(RD(d, NPU_REG_Q(q, NPU_Q_TAIL)), 0);
		ck_assert_uint_eq(rd64(d, NPU_REG_Q(q, NPU_Q_TASKS_LO)), 0);
		ck_assert_uint_eq(rd64(d, NPU_REG_Q(q, NPU_Q_DONE_SEQ_LO)), 0);
		ck_assert_uint_eq(rd64(d, NPU_REG_Q(q, NPU_Q_BUSY_LO)), 0);
	}
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_reset_api_and_reenable)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	struct npu_hw_completion c;

	run_fill(d, 1, &c);
	npu_core_reset(d->core);
	ck_assert_uint_eq(RD(d, NPU_REG_Q(1, NPU_Q_CTRL)), 0);
	ck_assert_uint_eq(rd64(d, NPU_REG_Q(1, NPU_Q_TASKS_LO)), 0);
	/* The driver reprograms the queue and carries on. */
	WR(d, NPU_REG_Q(1, NPU_Q_BASE_LO), (uint32_t)d->ring_pa[1]);
	WR(d, NPU_REG_Q(1, NPU_Q_BASE_HI), (uint32_t)(d->ring_pa[1] >> 32));
	WR(d, NPU_REG_Q(1, NPU_Q_SIZE_LOG2), d->ring_log2);
	WR(d, NPU_REG_Q(1, NPU_Q_CTRL), NPU_Q_CTRL_ENABLE);
	ck_assert_uint_eq(NPU_Q_STATE(RD(d, NPU_REG_Q(1, NPU_Q_STATUS))),
			  NPU_Q_STATE_IDLE);
	run_fill(d, 1, &c);
	ck_assert_uint_eq(c.status, NPU_TASK_OK);
	ck_assert_uint_eq(rd64(d, NPU_REG_Q(1, NPU_Q_TASKS_LO)), 1);
	npu_tdev_destroy(d);
}
END_TEST

/* Reset keeps HBSM and SRAM; power loss (D3hot) clears them and resets. */
START_TEST(test_power_loss_clears_memories)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	struct npu_hw_completion c;
	size_t hsize, ssize;
	uint8_t *h = npu_core_debug_hbsm(d->core, 0, 0, &hsize);
	uint8_t *h1 = npu_core_debug_hbsm(d->core, 1, 1, NULL);
	uint8_t *sram = npu_core_debug_sram(d->core, &ssize);

	run_fill(d, 1, &c);
	ck_assert_uint_eq(h[0x100], 0x5a);
	ck_assert_uint_eq(h[0x100 + 255], 0x5a);
	h1[hsize - 1] = 0x77;	/* last byte of the last TPB */
	sram[0] = 0x11;
	sram[ssize / 2 + 3] = 0x22;
	sram[ssize - 1] = 0x33;
	WR(d, NPU_REG_SCRATCH, 0x1234);
	npu_core_reset(d->core);
	ck_assert_uint_eq(h[0x100], 0x5a);
	ck_assert_uint_eq(sram[ssize - 1], 0x33);

	npu_core_power_loss(d->core);
	ck_assert(all_zero_bytes(h, hsize));
	ck_assert(all_zero_bytes(h1, hsize));
	ck_assert(all_zero_bytes(sram, ssize));
	ck_assert_uint_eq(RD(d, NPU_REG_SCRATCH), 0);
	ck_assert_uint_eq(RD(d, NPU_REG_Q(1, NPU_Q_CTRL)), 0);
	ck_assert_uint_eq(rd64(d, NPU_REG_Q(1, NPU_Q_TASKS_LO)), 0);
	ck_assert(RD(d, NPU_REG_STATUS) & NPU_STATUS_READY);
	/* The memories work again after power-up. */
	h[5] = 9;
	ck_assert_uint_eq(h[5], 9);
	WR(d, NPU_REG_Q(1, NPU_Q_BASE_LO), (uint32_t)d->ring_pa[1]);
	WR(d, NPU_REG_Q(1, NPU_Q_BASE_HI), (uint32_t)(d->ring_pa[1] >> 32));
	WR(d, NPU_REG_Q(1, NPU_Q_SIZE_LOG2), d->ring_log2);
	WR(d, NPU_REG_Q(1, NPU_Q_CTRL), NPU_Q_CTRL_ENABLE);
	run_fill(d, 1, &c);
	ck_assert_uint_eq(c.status, NPU_TASK_OK);
	ck_assert_uint_eq(h[0x100], 0x5a);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_reset_wrong_value_ignored)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	struct npu_hw_completion c;

	run_fill(d, 0, &c);
	WR(d, NPU_REG_SCRATCH, 0xabcd);
	WR(d, NPU_REG_RESET, NPU_RESET_MAGIC ^ 1);
	WR(d, NPU_REG_RESET, 0);
	WR(d, NPU_REG_RESET + 1, NPU_RESET_MAGIC);	/* misaligned */
	ck_assert_uint_eq(RD(d, NPU_REG_RESET), 0);
	ck_assert_uint_eq(RD(d, NPU_REG_SCRATCH), 0xabcd);
	ck_assert_uint_eq(RD(d, NPU_REG_Q(0, NPU_Q_CTRL)), NPU_Q_CTRL_ENABLE);
	ck_assert_uint_eq(rd64(d, NPU_REG_Q(0, NPU_Q_TASKS_LO)), 1);
	ck_assert_uint_gt(rd64(d, NPU_REG_PERF_CYCLES), 0);
	run_fill(d, 0, &c);
	ck_assert_uint_eq(rd64(d, NPU_REG_Q(0, NPU_Q_TASKS_LO)), 2);
	npu_tdev_destroy(d);
}
END_TEST

/* ---- 64-bit latches ---- */

START_TEST(test_latch_64bit)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	struct npu_tprog p;
	struct npu_hw_task desc;
	struct npu_hw_completion c;
	uint32_t lo, hi;

	npu_tprog_init(&p);
	add_fill(&p, 1, 1, 0, 64, 1);
	prep_desc(d, &p, 1, &desc);
	desc.seqno = 0x0000000100000005ull;
	ck_assert_int_eq(npu_tdev_run_desc(d, 0, &desc, &c), NPU_TASK_OK);
	lo = RD(d, NPU_REG_Q(0, NPU_Q_DONE_SEQ_LO));
	hi = RD(d, NPU_REG_Q(0, NPU_Q_DONE_SEQ_HI));
	ck_assert_uint_eq(lo, 5);
	ck_assert_uint_eq(hi, 1);

	/* _LO latches: the value changing before the _HI read is not seen. */
	lo = RD(d, NPU_REG_Q(0, NPU_Q_DONE_SEQ_LO));
	prep_desc(d, &p, 1, &desc);
	desc.seqno = 0x0000000200000007ull;
	ck_assert_int_eq(npu_tdev_run_desc(d, 0, &desc, &c), NPU_TASK_OK);
	hi = RD(d, NPU_REG_Q(0, NPU_Q_DONE_SEQ_HI));
	ck_assert_uint_eq(lo, 5);
	ck_assert_uint_eq(hi, 1);
	/* A fresh _LO read picks up the new value. */
	ck_assert_uint_eq(RD(d, NPU_REG_Q(0, NPU_Q_DONE_SEQ_LO)), 7);
	ck_assert_uint_eq(RD(d, NPU_REG_Q(0, NPU_Q_DONE_SEQ_HI)), 2);
	ck_assert_uint_eq(rd64(d, NPU_REG_Q(0, NPU_Q_TASKS_LO)), 2);
	/* The completion record has the full 64-bit seqno. */
	ck_assert_uint_eq(c.seqno, 0x0000000200000007ull);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

/* ---- queue configuration ---- */

static uint32_t enable_ring(struct npu_tdev *d, unsigned q, uint64_t base,
			    uint32_t log2)
{
	WR(d, NPU_REG_Q(q, NPU_Q_CTRL), 0);
	ck_assert_uint_eq(NPU_Q_STATE(RD(d, NPU_REG_Q(q, NPU_Q_STATUS))),
			  NPU_Q_STATE_DISABLED);
	WR(d, NPU_REG_Q(q, NPU_Q_BASE_LO), (uint32_t)base);
	WR(d, NPU_REG_Q(q, NPU_Q_BASE_HI), (uint32_t)(base >> 32));
	WR(d, NPU_REG_Q(q, NPU_Q_SIZE_LOG2), log2);
	WR(d, NPU_REG_Q(q, NPU_Q_CTRL), NPU_Q_CTRL_ENABLE);
	return RD(d, NPU_REG_Q(q, NPU_Q_STATUS));
}

START_TEST(test_queue_bad_ring)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	uint64_t ring = npu_tdev_alloc(d, 128u << 12);
	uint32_t st;

	WR(d, NPU_REG_IRQ_STATUS, 0xffffffff);
	st = enable_ring(d, 1, ring + 0x80, 4);		/* unaligned base */
	ck_assert_uint_eq(NPU_Q_STATE(st), NPU_Q_STATE_ERROR);
	ck_assert_uint_eq(NPU_Q_LAST_STATUS(st), NPU_TASK_BAD_DESCRIPTOR);
	ck_assert_uint_eq(RD(d, NPU_REG_Q(1, NPU_Q_CTRL)), 0);
	ck_assert(RD(d, NPU_REG_IRQ_RAW) & NPU_IRQ_ERROR);
	ck_assert(d->irq_pending & NPU_IRQ_ERROR);
	WR(d, NPU_REG_IRQ_STATUS, 0xffffffff);

	st = enable_ring(d, 1, ring, 0);		/* too small */
	ck_assert_uint_eq(NPU_Q_STATE(st), NPU_Q_STATE_ERROR);
	ck_assert(RD(d, NPU_REG_IRQ_RAW) & NPU_IRQ_ERROR);
	st = enable_ring(d, 1, ring, NPU_RING_MAX_LOG2 + 1);	/* too big */
	ck_assert_uint_eq(NPU_Q_STATE(st), NPU_Q_STATE_ERROR);
	st = enable_ring(d, 1, ring + 0x1000ull * 0x100000, 4);	/* high bits, aligned */
	ck_assert_uint_eq(NPU_Q_STATE(st), NPU_Q_STATE_IDLE);
	/* the limits themselves are fine */
	st = enable_ring(d, 1, ring, NPU_RING_MIN_LOG2);
	ck_assert_uint_eq(NPU_Q_STATE(st), NPU_Q_STATE_IDLE);
	st = enable_ring(d, 1, ring, NPU_RING_MAX_LOG2);
	ck_assert_uint_eq(NPU_Q_STATE(st), NPU_Q_STATE_IDLE);
	ck_assert_uint_eq(RD(d, NPU_REG_Q(1, NPU_Q_CTRL)), NPU_Q_CTRL_ENABLE);
	ck_assert_uint_eq(RD(d, NPU_REG_Q(1, NPU_Q_SIZE_LOG2)), NPU_RING_MAX_LOG2);
	ck_assert_uint_eq(RD(d, NPU_REG_Q(1, NPU_Q_BASE_LO)), (uint32_t)ring);

	/* Other queues are unaffected by one queue's misconfiguration. */
	st = enable_ring(d, 2, ring + 8, 4);
	ck_assert_uint_eq(NPU_Q_STATE(st), NPU_Q_STATE_ERROR);
	{
		struct npu_hw_completion c;

		run_fill(d, 0, &c);
		ck_assert_uint_eq(c.status, NPU_TASK_OK);
	}
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_queue_doorbell_beyond_ring)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	struct npu_hw_completion c;
	uint32_t st;

	WR(d, NPU_REG_IRQ_STATUS, 0xffffffff);
	WR(d, NPU_REG_Q(0, NPU_Q_TAIL), 1u << d->ring_log2);
	npu_core_run_pending(d->core);
	st = RD(d, NPU_REG_Q(0, NPU_Q_STATUS));
	ck_assert_uint_eq(NPU_Q_STATE(st), NPU_Q_STATE_ERROR);
	ck_assert_uint_eq(NPU_Q_LAST_STATUS(st), NPU_TASK_BAD_DESCRIPTOR);
	ck_assert(RD(d, NPU_REG_IRQ_RAW) & NPU_IRQ_ERROR);
	ck_assert_uint_eq(rd64(d, NPU_REG_Q(0, NPU_Q_TASKS_LO)), 0);
	ck_assert_uint_eq(RD(d, NPU_REG_Q(0, NPU_Q_HEAD)), 0);
	/* The other queues still run. */
	run_fill(d, 3, &c);
	ck_assert_uint_eq(c.status, NPU_TASK_OK);
	ck_assert_uint_eq(NPU_Q_STATE(RD(d, NPU_REG_Q(0, NPU_Q_STATUS))),
			  NPU_Q_STATE_ERROR);
	/* Re-enabling the queue recovers it. */
	st = enable_ring(d, 0, d->ring_pa[0], d->ring_log2);
	ck_assert_uint_eq(NPU_Q_STATE(st), NPU_Q_STATE_IDLE);
	run_fill(d, 0, &c);
	ck_assert_uint_eq(c.status, NPU_TASK_OK);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_queue_reconfigure_while_enabled)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	struct npu_tprog p;
	struct npu_hw_task desc;
	struct npu_hw_completion *fence;
	uint32_t st, log2;

	npu_tprog_init(&p);
	add_fill(&p, 1, 1, 0, 64, 1);
	prep_desc(d, &p, 1, &desc);
	/* the ring size changes under an enabled queue */
	WR(d, NPU_REG_Q(1, NPU_Q_SIZE_LOG2), 40);
	fence = npu_tdev_queue(d, 1, &desc);
	/*
	 * The ring is validated when ENABLE is set, so it must not change
	 * under an enabled queue: either the write is ignored or the queue
	 * stops in NPU_Q_STATE_ERROR.  (Regression: the value once reached
	 * "1u << q->size_log2" in npu_queue.c unchecked, undefined
	 * behaviour caught by UBSan.)
	 */
	npu_core_run_pending(d->core);
	st = RD(d, NPU_REG_Q(1, NPU_Q_STATUS));
	log2 = RD(d, NPU_REG_Q(1, NPU_Q_SIZE_LOG2));
	if (NPU_Q_STATE(st) == NPU_Q_STATE_ERROR) {
		ck_assert_uint_eq(NPU_Q_LAST_STATUS(st), NPU_TASK_BAD_DESCRIPTOR);
	} else {
		/* the write was ignored: the task ran on the old ring */
		ck_assert_uint_eq(log2, d->ring_log2);
		ck_assert_uint_eq(fence->seqno, desc.seqno);
		ck_assert_uint_eq(fence->status, NPU_TASK_OK);
	}
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_queue_disabled_does_not_run)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	struct npu_tprog p;
	struct npu_hw_task desc;
	struct npu_hw_completion *fence;

	npu_tprog_init(&p);
	add_fill(&p, 1, 1, 0, 64, 1);
	prep_desc(d, &p, 1, &desc);
	WR(d, NPU_REG_Q(2, NPU_Q_CTRL), 0);
	fence = npu_tdev_queue(d, 2, &desc);
	npu_core_run_pending(d->core);
	ck_assert_uint_eq(fence->seqno, 0);
	ck_assert_uint_eq(rd64(d, NPU_REG_Q(2, NPU_Q_TASKS_LO)), 0);
	ck_assert_ptr_null(npu_core_task_fetch(d->core, 2));
	ck_assert_ptr_null(npu_core_task_fetch(d->core, NPU_HW_NUM_QUEUES));
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_queue_ring_unbacked)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	struct npu_hw_completion c;
	uint32_t st;

	WR(d, NPU_REG_IRQ_STATUS, 0xffffffff);
	/* a ring the host cannot read: the entry ends BUS_ERROR */
	st = enable_ring(d, 2, 1ull << 40, 2);
	ck_assert_uint_eq(NPU_Q_STATE(st), NPU_Q_STATE_IDLE);
	WR(d, NPU_REG_Q(2, NPU_Q_TAIL), 1);
	npu_core_run_pending(d->core);
	st = RD(d, NPU_REG_Q(2, NPU_Q_STATUS));
	ck_assert_uint_eq(NPU_Q_LAST_STATUS(st), NPU_TASK_BUS_ERROR);
	ck_assert_uint_eq(NPU_Q_STATE(st), NPU_Q_STATE_IDLE);
	ck_assert_uint_eq(RD(d, NPU_REG_Q(2, NPU_Q_HEAD)), 1);
	ck_assert_uint_eq(rd64(d, NPU_REG_Q(2, NPU_Q_TASKS_LO)), 1);
	ck_assert_uint_eq(RD(d, NPU_REG_IRQ_RAW), NPU_IRQ_QUEUE(2) | NPU_IRQ_ERROR);
	/* the rest of the device is fine */
	run_fill(d, 0, &c);
	ck_assert_uint_eq(c.status, NPU_TASK_OK);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_fence_addresses)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	struct npu_tprog p;
	struct npu_hw_task desc;
	struct npu_hw_completion *fence;
	uint8_t *h = npu_tdev_hbsm(d, 0, 0);
	uint32_t tail;

	npu_tprog_init(&p);
	add_fill(&p, 1, 1, 0, 64, 0x44);
	/* no fence: runs, counted, DONE_SEQ updated */
	prep_desc(d, &p, 1, &desc);
	desc.seqno = 0x77;
	tail = RD(d, NPU_REG_Q(0, NPU_Q_TAIL));
	memcpy(npu_tdev_ptr(d, d->ring_pa[0] + tail * sizeof(desc)), &desc, sizeof(desc));
	WR(d, NPU_REG_Q(0, NPU_Q_TAIL), tail + 1);
	npu_core_run_pending(d->core);
	ck_assert_uint_eq(h[0], 0x44);
	ck_assert_uint_eq(RD(d, NPU_REG_Q(0, NPU_Q_DONE_SEQ_LO)), 0x77);
	ck_assert_uint_eq(NPU_Q_LAST_STATUS(RD(d, NPU_REG_Q(0, NPU_Q_STATUS))), NPU_TASK_OK);

	/* a misaligned fence is not written and turns the task into BUS_ERROR */
	prep_desc(d, &p, 1, &desc);
	fence = npu_tdev_queue(d, 0, &desc);
	(void)fence;
	{
		uint32_t t = RD(d, NPU_REG_Q(0, NPU_Q_TAIL));
		struct npu_hw_task *ring = npu_tdev_ptr(d, d->ring_pa[0]);

		ring[(t - 1) & ((1u << d->ring_log2) - 1)].fence_addr = d->fence_pa + 0x104;
	}
	memset(npu_tdev_ptr(d, d->fence_pa + 0x100), 0, 128);
	npu_core_run_pending(d->core);
	ck_assert(all_zero_bytes(npu_tdev_ptr(d, d->fence_pa + 0x100), 128));
	ck_assert_uint_eq(NPU_Q_LAST_STATUS(RD(d, NPU_REG_Q(0, NPU_Q_STATUS))),
			  NPU_TASK_BUS_ERROR);
	ck_assert(RD(d, NPU_REG_IRQ_RAW) & NPU_IRQ_ERROR);

	/* a fence outside memory: BUS_ERROR as well */
	prep_desc(d, &p, 1, &desc);
	npu_tdev_queue(d, 0, &desc);
	{
		uint32_t t = RD(d, NPU_REG_Q(0, NPU_Q_TAIL));
		struct npu_hw_task *ring = npu_tdev_ptr(d, d->ring_pa[0]);

		ring[(t - 1) & ((1u << d->ring_log2) - 1)].fence_addr = 1ull << 40;
	}
	npu_core_run_pending(d->core);
	ck_assert_uint_eq(NPU_Q_LAST_STATUS(RD(d, NPU_REG_Q(0, NPU_Q_STATUS))),
			  NPU_TASK_BUS_ERROR);
	ck_assert_uint_eq(rd64(d, NPU_REG_Q(0, NPU_Q_TASKS_LO)), 3);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

/* ---- the task lifecycle through the registers ---- */

START_TEST(test_task_lifecycle_status)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	struct npu_tprog p;
	struct npu_hw_task desc;
	struct npu_hw_completion *fence;
	struct npu_core_task *task;

	npu_tprog_init(&p);
	add_fill(&p, 1, 1, 0, 64, 1);
	prep_desc(d, &p, 1, &desc);
	fence = npu_tdev_queue(d, 1, &desc);
	task = npu_core_task_fetch(d->core, 1);
	ck_assert_ptr_nonnull(task);
	/* one task out per queue */
	ck_assert_ptr_null(npu_core_task_fetch(d->core, 1));
	ck_assert_uint_eq(NPU_Q_STATE(RD(d, NPU_REG_Q(1, NPU_Q_STATUS))),
			  NPU_Q_STATE_RUNNING);
	ck_assert(RD(d, NPU_REG_STATUS) & NPU_STATUS_QUEUE_BUSY(1));
	npu_core_task_execute(task);
	ck_assert_uint_eq(npu_core_task_status(task), NPU_TASK_OK);
	ck_assert_uint_gt(npu_core_task_cycles(task), 0);
	/* HEAD moves only at completion, after the fence. */
	ck_assert_uint_eq(RD(d, NPU_REG_Q(1, NPU_Q_HEAD)), 0);
	ck_assert_uint_eq(fence->seqno, 0);
	npu_core_task_complete(task);
	ck_assert_uint_eq(fence->seqno, desc.seqno);
	ck_assert_uint_eq(RD(d, NPU_REG_Q(1, NPU_Q_HEAD)), 1);
	ck_assert_uint_eq(NPU_Q_STATE(RD(d, NPU_REG_Q(1, NPU_Q_STATUS))),
			  NPU_Q_STATE_IDLE);
	ck_assert_uint_eq(RD(d, NPU_REG_STATUS) & NPU_STATUS_QUEUE_BUSY(1), 0);
	ck_assert_uint_eq(rd64(d, NPU_REG_Q(1, NPU_Q_BUSY_LO)), fence->cycles);

	/* disabling with a task out: it completes, later entries wait */
	prep_desc(d, &p, 1, &desc);
	fence = npu_tdev_queue(d, 1, &desc);
	{
		struct npu_hw_task desc2;
		struct npu_hw_completion *f2;

		task = npu_core_task_fetch(d->core, 1);
		ck_assert_ptr_nonnull(task);
		prep_desc(d, &p, 1, &desc2);
		f2 = npu_tdev_queue(d, 2, &desc2);	/* another queue: unaffected */
		WR(d, NPU_REG_Q(1, NPU_Q_CTRL), 0);
		ck_assert_uint_eq(NPU_Q_STATE(RD(d, NPU_REG_Q(1, NPU_Q_STATUS))),
				  NPU_Q_STATE_RUNNING);
		npu_core_task_execute(task);
		npu_core_task_complete(task);
		ck_assert_uint_eq(fence->seqno, desc.seqno);
		ck_assert_uint_eq(NPU_Q_STATE(RD(d, NPU_REG_Q(1, NPU_Q_STATUS))),
				  NPU_Q_STATE_DISABLED);
		ck_assert_ptr_null(npu_core_task_fetch(d->core, 1));
		npu_core_run_pending(d->core);
		ck_assert_uint_eq(f2->seqno, desc2.seqno);
	}
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_task_abort_and_orphan)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	struct npu_tprog p;
	struct npu_hw_task desc;
	struct npu_hw_completion *fence;
	struct npu_core_task *task;

	npu_tprog_init(&p);
	add_fill(&p, 1, 1, 0, 64, 1);

	/* ABORT while the task is out: it ends NPU_TASK_ABORTED. */
	prep_desc(d, &p, 1, &desc);
	fence = npu_tdev_queue(d, 0, &desc);
	task = npu_core_task_fetch(d->core, 0);
	ck_assert_ptr_nonnull(task);
	WR(d, NPU_REG_Q(0, NPU_Q_CTRL), NPU_Q_CTRL_ENABLE | NPU_Q_CTRL_ABORT);
	npu_core_task_execute(task);
	npu_core_task_complete(task);
	ck_assert_uint_eq(fence->seqno, desc.seqno);
	ck_assert_uint_eq(fence->status, NPU_TASK_ABORTED);
	ck_assert_uint_eq(RD(d, NPU_REG_Q(0, NPU_Q_CTRL)), NPU_Q_CTRL_ENABLE);
	/* The queue carries on. */
	prep_desc(d, &p, 1, &desc);
	fence = npu_tdev_queue(d, 0, &desc);
	npu_core_run_pending(d->core);
	ck_assert_uint_eq(fence->status, NPU_TASK_OK);
	ck_assert_uint_eq(fence->seqno, desc.seqno);

	/* Reset while a task is out: it completes silently. */
	prep_desc(d, &p, 1, &desc);
	fence = npu_tdev_queue(d, 0, &desc);
	task = npu_core_task_fetch(d->core, 0);
	ck_assert_ptr_nonnull(task);
	WR(d, NPU_REG_RESET, NPU_RESET_MAGIC);
	npu_core_task_execute(task);
	npu_core_task_complete(task);
	ck_assert_uint_eq(fence->seqno, 0);
	ck_assert_uint_eq(rd64(d, NPU_REG_Q(0, NPU_Q_TASKS_LO)), 0);
	ck_assert_uint_eq(RD(d, NPU_REG_IRQ_RAW), 0);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

/* ---- performance counters ---- */

START_TEST(test_perf_unit_and_cluster_busy)
{
	/* cluster 1 fused: the partition's logical 0/1 are physical 0/2 */
	struct npu_tdev *d = small_dev(4, 2, 0x2);
	struct npu_tprog p;
	struct npu_tdev_submit o = { .nclusters = 2 };
	struct npu_hw_completion c;

	WR(d, NPU_REG_PERF_CTRL, NPU_PERF_CTRL_ENABLE | NPU_PERF_CTRL_CLEAR);
	npu_tprog_init(&p);
	add_fill(&p, 0x3, 0x3, 0, 4096, 7);
	ck_assert_int_eq(npu_tdev_run(d, &p, &o, &c), NPU_TASK_OK);
	ck_assert_uint_gt(c.cycles, 0);
	ck_assert_uint_eq(rd64(d, NPU_REG_PERF_CYCLES), c.cycles);
	ck_assert_uint_eq(rd64(d, NPU_REG_Q(0, NPU_Q_BUSY_LO)), c.cycles);
	ck_assert_uint_gt(rd64(d, NPU_REG_PERF_UNIT_BUSY(0, NPU_PERF_UNIT_DTDU)), 0);
	ck_assert_uint_gt(rd64(d, NPU_REG_PERF_UNIT_BUSY(2, NPU_PERF_UNIT_DTDU)), 0);
	ck_assert_uint_gt(rd64(d, NPU_REG_PERF_CLUSTER_BUSY(0)), 0);
	ck_assert_uint_gt(rd64(d, NPU_REG_PERF_CLUSTER_BUSY(2)), 0);
	/* units that did nothing, the fused and the unused cluster: zero */
	ck_assert_uint_eq(rd64(d, NPU_REG_PERF_UNIT_BUSY(0, NPU_PERF_UNIT_TCU)), 0);
	ck_assert_uint_eq(rd64(d, NPU_REG_PERF_UNIT_BUSY(0, NPU_PERF_UNIT_CVU)), 0);
	ck_assert_uint_eq(rd64(d, NPU_REG_PERF_UNIT_BUSY(0, NPU_PERF_UNIT_CSU)), 0);
	for (unsigned u = 0; u < NPU_PERF_UNITS; u++) {
		ck_assert_uint_eq(rd64(d, NPU_REG_PERF_UNIT_BUSY(1, u)), 0);
		ck_assert_uint_eq(rd64(d, NPU_REG_PERF_UNIT_BUSY(3, u)), 0);
	}
	ck_assert_uint_eq(rd64(d, NPU_REG_PERF_CLUSTER_BUSY(1)), 0);
	ck_assert_uint_eq(rd64(d, NPU_REG_PERF_CLUSTER_BUSY(3)), 0);
	ck_assert_uint_eq(rd64(d, NPU_REG_PERF_DMA_BYTES(0)), 0);
	ck_assert_uint_eq(rd64(d, NPU_REG_PERF_DMA_BYTES(1)), 0);
	/* Both TPBs of a cluster ran: a unit counter sums the TPBs, while
	 * the cluster is busy for the span of its TPBs' overlapping work. */
	ck_assert_uint_ge(rd64(d, NPU_REG_PERF_UNIT_BUSY(0, NPU_PERF_UNIT_DTDU)),
			  rd64(d, NPU_REG_PERF_CLUSTER_BUSY(0)));
	/* A second identical task doubles the counters. */
	{
		uint64_t u0 = rd64(d, NPU_REG_PERF_UNIT_BUSY(0, NPU_PERF_UNIT_DTDU));
		uint64_t cy = rd64(d, NPU_REG_PERF_CYCLES);

		ck_assert_int_eq(npu_tdev_run(d, &p, &o, &c), NPU_TASK_OK);
		ck_assert_uint_eq(rd64(d, NPU_REG_PERF_UNIT_BUSY(0, NPU_PERF_UNIT_DTDU)),
				  2 * u0);
		ck_assert_uint_eq(rd64(d, NPU_REG_PERF_CYCLES), 2 * cy);
	}
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_perf_cluster_busy_single_unit)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	struct npu_hw_completion c;
	uint64_t unit, cl;

	/* One instruction on one TPB: the cluster is busy exactly while
	 * that unit is, which is the whole task. */
	run_fill(d, 0, &c);
	unit = rd64(d, NPU_REG_PERF_UNIT_BUSY(0, NPU_PERF_UNIT_DTDU));
	cl = rd64(d, NPU_REG_PERF_CLUSTER_BUSY(0));
	ck_assert_uint_gt(unit, 1);
	ck_assert_uint_eq(unit, c.cycles);
	/*
	 * Regression: a TPB whose work started at cycle 0 was once recorded
	 * as starting at 1 (0 meant "unset"), one cycle short.
	 */
	ck_assert_uint_eq(cl, unit);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_perf_hbsm_conflicts)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_tdev_submit o = { .nclusters = 2 };
	struct npu_hw_completion c;
	uint32_t dims[1] = { 256 };

	npu_tprog_init(&p);
	/* dense: 8 lines in 8 different banks, no conflict */
	in = npu_tprog_add(&p, NPU_UNIT_DTDU, NPU_DTDU_COPY, 1, 1);
	npu_twu_dense(&in->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, NPU_DT_UINT8, 0, 1, dims);
	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_UINT8, 0x1000, 1, dims);
	ck_assert_int_eq(npu_tdev_run(d, &p, &o, &c), NPU_TASK_OK);
	ck_assert_uint_eq(rd64(d, NPU_REG_PERF_HBSM_CONFLICTS(0)), 0);
	/* logical cluster 1: one byte per 1 KiB, every access in bank 0 */
	npu_tprog_free(&p);
	npu_tprog_init(&p);
	dims[0] = 32;
	in = npu_tprog_add(&p, NPU_UNIT_DTDU, NPU_DTDU_COPY, 2, 1);
	npu_twu_dense(&in->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, NPU_DT_UINT8, 0, 1, dims);
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 0, 0, 1024, 31 * 1024);
	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_UINT8, 0x100, 1, dims);
	ck_assert_int_eq(npu_tdev_run(d, &p, &o, &c), NPU_TASK_OK);
	ck_assert_uint_gt(rd64(d, NPU_REG_PERF_HBSM_CONFLICTS(1)), 0);
	ck_assert_uint_eq(rd64(d, NPU_REG_PERF_HBSM_CONFLICTS(0)), 0);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_perf_dma_and_links)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_tdev_submit o = { 0 };
	struct npu_hw_completion c;
	uint32_t dims[1] = { 256 };
	uint8_t *src;

	o.root = npu_tdev_ctx(d);
	src = npu_tdev_buf(d, o.root, 0x20000000, 4096, false);
	for (unsigned i = 0; i < 256; i++)
		src[i] = (uint8_t)(i * 3);
	npu_tprog_init(&p);
	in = npu_tprog_add(&p, NPU_UNIT_DMA, NPU_DMA_COPY, 0, 0);
	in->params.dma.engine = 1;
	npu_twu_dense(&in->opnd[NPU_OPND_SRC0], NPU_SPACE_DDR, NPU_DT_UINT8,
		      0x20000000, 1, dims);
	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_SRAM, NPU_DT_UINT8,
		      0x100, 1, dims);
	ck_assert_int_eq(npu_tdev_run(d, &p, &o, &c), NPU_TASK_OK);
	ck_assert_uint_eq(rd64(d, NPU_REG_PERF_DMA_BYTES(1)), 256);
	ck_assert_uint_eq(rd64(d, NPU_REG_PERF_DMA_BYTES(0)), 0);
	/* DDR reaches the CCB through its DDR port, not over the mesh. */
	for (unsigned l = 0; l < NPU_HW_MAX_LINKS; l++)
		ck_assert_uint_eq(rd64(d, NPU_REG_PERF_LINK_BYTES(l)), 0);
	/* No TPB ran anything. */
	for (unsigned cl = 0; cl < 2; cl++)
		for (unsigned u = 0; u < NPU_PERF_UNITS; u++)
			ck_assert_uint_eq(rd64(d, NPU_REG_PERF_UNIT_BUSY(cl, u)), 0);
	ck_assert_mem_eq(npu_core_debug_sram(d->core, NULL) + 0x100, src, 256);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

/*
 * @n bytes DDR -> SRAM on each engine in @engines (a mask), or with @hbsm
 * DDR -> HBSM of both clusters (a broadcast) on engine 0: the task's cycles.
 */
static uint64_t dma_task_cycles(unsigned engines, bool hbsm, uint32_t n)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	struct npu_tprog p;
	struct npu_tdev_submit o = { 0 };
	struct npu_hw_completion c;
	uint32_t dims[1] = { n };

	o.root = npu_tdev_ctx(d);
	o.nclusters = 2;
	npu_tdev_buf(d, o.root, 0x20000000, 2 * n, false);
	npu_tprog_init(&p);
	for (unsigned e = 0; e < NPU_HW_NUM_DMA_ENGINES; e++) {
		struct npu_hw_insn *in;

		if (!(engines & (1u << e)))
			continue;
		in = npu_tprog_add(&p, NPU_UNIT_DMA, NPU_DMA_COPY, 0, 0);
		in->params.dma.engine = e;
		npu_twu_dense(&in->opnd[NPU_OPND_SRC0], NPU_SPACE_DDR, NPU_DT_UINT8,
			      0x20000000 + e * n, 1, dims);
		if (hbsm) {
			npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM_REMOTE,
				      NPU_DT_UINT8, 0, 1, dims);
			in->opnd[NPU_OPND_DST].cluster_mask = 3;
			in->opnd[NPU_OPND_DST].tpb_mask = 3;
		} else {
			npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_SRAM, NPU_DT_UINT8,
				      e * n, 1, dims);
		}
	}
	ck_assert_msg(npu_tdev_run(d, &p, &o, &c) == NPU_TASK_OK, "status %u detail %u",
		      c.status, c.detail);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
	return c.cycles;
}

/*
 * The CCB's DDR port carries every DDR byte at NPU_M100_DDR_BYTES_PER_CYCLE
 * however many engines stream; the broadcast path writes every cluster's
 * HBSM for the price of one.
 */
START_TEST(test_perf_ddr_port_and_broadcast)
{
	uint32_t n = 32 * 1024;
	uint64_t one = dma_task_cycles(1, false, n), two = dma_task_cycles(3, false, n);
	uint64_t bc = dma_task_cycles(1, true, n);

	ck_assert_uint_ge(one, n / NPU_M100_DDR_BYTES_PER_CYCLE);
	ck_assert_uint_lt(one, n / NPU_M100_DDR_BYTES_PER_CYCLE + 64);
	/* Two engines share the port: twice the bytes, twice the time. */
	ck_assert_uint_ge(two, 2 * n / NPU_M100_DDR_BYTES_PER_CYCLE);
	ck_assert_uint_lt(two, 2 * n / NPU_M100_DDR_BYTES_PER_CYCLE + 64);
	/* Both clusters' HBSMs at the DDR rate, not at a mesh link's. */
	ck_assert_uint_lt(bc, n / NPU_M100_DDR_BYTES_PER_CYCLE + 64);
}
END_TEST

START_TEST(test_perf_ctrl_clear_disable)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	struct npu_hw_completion c;

	run_fill(d, 0, &c);
	ck_assert_uint_gt(rd64(d, NPU_REG_PERF_CYCLES), 0);
	WR(d, NPU_REG_PERF_CTRL, NPU_PERF_CTRL_ENABLE | NPU_PERF_CTRL_CLEAR);
	ck_assert_uint_eq(rd64(d, NPU_REG_PERF_CYCLES), 0);
	ck_assert_uint_eq(rd64(d, NPU_REG_PERF_UNIT_BUSY(0, NPU_PERF_UNIT_DTDU)), 0);
	ck_assert_uint_eq(rd64(d, NPU_REG_PERF_CLUSTER_BUSY(0)), 0);
	/* CLEAR is self-clearing */
	ck_assert_uint_eq(RD(d, NPU_REG_PERF_CTRL), NPU_PERF_CTRL_ENABLE);
	/* Disabled: tasks do not count. */
	WR(d, NPU_REG_PERF_CTRL, 0);
	ck_assert_uint_eq(RD(d, NPU_REG_PERF_CTRL), 0);
	run_fill(d, 0, &c);
	ck_assert_uint_eq(rd64(d, NPU_REG_PERF_CYCLES), 0);
	ck_assert_uint_eq(rd64(d, NPU_REG_PERF_UNIT_BUSY(0, NPU_PERF_UNIT_DTDU)), 0);
	/* The per-queue counters are not performance counters. */
	ck_assert_uint_eq(rd64(d, NPU_REG_Q(0, NPU_Q_TASKS_LO)), 2);
	WR(d, NPU_REG_PERF_CTRL, NPU_PERF_CTRL_ENABLE);
	run_fill(d, 0, &c);
	ck_assert_uint_eq(rd64(d, NPU_REG_PERF_CYCLES), c.cycles);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_mmu_ctrl_rw)
{
	struct npu_tdev *d = small_dev(2, 2, 0);

	WR(d, NPU_REG_MMU_CTRL, 0xfffffffe);
	ck_assert_uint_eq(RD(d, NPU_REG_MMU_CTRL), 0);
	WR(d, NPU_REG_MMU_CTRL, 0xffffffff);
	ck_assert_uint_eq(RD(d, NPU_REG_MMU_CTRL), NPU_MMU_CTRL_ENABLE);
	/* invalidation is write-only and harmless */
	WR(d, NPU_REG_MMU_INVALIDATE, NPU_MMU_INV_ALL);
	WR(d, NPU_REG_MMU_INVALIDATE, 1);
	ck_assert_uint_eq(RD(d, NPU_REG_ID), NPU_ID_MAGIC);
	ck_assert_str_eq(npu_core_status_str(NPU_TASK_OK), "ok");
	ck_assert_str_eq(npu_core_status_str(NPU_TASK_STATUS_COUNT), "unknown status");
	for (unsigned s = 0; s < NPU_TASK_STATUS_COUNT; s++)
		ck_assert_ptr_nonnull(npu_core_status_str(s));
	npu_tdev_destroy(d);
}
END_TEST

static Suite *core_regs_suite(void)
{
	Suite *s = suite_create("core_regs");
	TCase *id = tcase_create("identity");
	TCase *rw = tcase_create("access");
	TCase *q = tcase_create("queues");
	TCase *perf = tcase_create("perf");

	tcase_add_test(id, test_identity_default);
	tcase_add_test(id, test_cluster_pos_default);
	tcase_add_test(id, test_identity_custom);
	tcase_add_test(id, test_config_check_rejects);
	tcase_add_test(id, test_config_check_messages);
	tcase_add_test(id, test_create_rejects_bad_config);
	tcase_add_test(rw, test_scratch_rw);
	tcase_add_test(rw, test_bad_access_reads);
	tcase_add_test(rw, test_bad_access_writes);
	tcase_add_test(rw, test_irq_mask_status_w1c);
	tcase_add_test(rw, test_irq_flag_and_error);
	tcase_add_test(rw, test_reset_clears_state);
	tcase_add_test(rw, test_reset_api_and_reenable);
	tcase_add_test(rw, test_reset_wrong_value_ignored);
	tcase_add_test(rw, test_power_loss_clears_memories);
	tcase_add_test(rw, test_latch_64bit);
	tcase_add_test(rw, test_mmu_ctrl_rw);
	tcase_add_test(q, test_queue_bad_ring);
	tcase_add_test(q, test_queue_doorbell_beyond_ring);
	tcase_add_test(q, test_queue_reconfigure_while_enabled);
	tcase_add_test(q, test_queue_disabled_does_not_run);
	tcase_add_test(q, test_queue_ring_unbacked);
	tcase_add_test(q, test_fence_addresses);
	tcase_add_test(q, test_task_lifecycle_status);
	tcase_add_test(q, test_task_abort_and_orphan);
	tcase_add_test(perf, test_perf_unit_and_cluster_busy);
	tcase_add_test(perf, test_perf_cluster_busy_single_unit);
	tcase_add_test(perf, test_perf_hbsm_conflicts);
	tcase_add_test(perf, test_perf_dma_and_links);
	tcase_add_test(perf, test_perf_ddr_port_and_broadcast);
	tcase_add_test(perf, test_perf_ctrl_clear_disable);
	suite_add_tcase(s, id);
	suite_add_tcase(s, rw);
	suite_add_tcase(s, q);
	suite_add_tcase(s, perf);
	return s;
}

NPU_TEST_SUITE(core_regs_suite)
