// SPDX-License-Identifier: MIT
/*
 * The work counters (NPU_REG_PERF_LOAD_BYTES, _STORE_BYTES, _MACS_FLOAT,
 * _MACS_INT8; make bench's host floor) on small hand-made programs whose
 * operand bytes and multiply-accumulates are known: a GEMM of M x N x K
 * counts M * N * K MACs and reads its operands' bytes, a copy of B bytes
 * reads and writes B, a broadcast writes B per receiving TPB.
 */
#include <string.h>

#include "npu_kern.h"
#include "npu_tdev.h"
#include "npu_test.h"

#define HBSM_SIZE (64u << 10)	/* npu_tdev_small's */
#define DDR_VA 0x20000000ull

struct work {
	uint64_t load, store, macs_float, macs_int8;
};

static uint64_t rd64(struct npu_tdev *d, uint32_t off)
{
	uint64_t lo = npu_core_mmio_read(d->core, off);	/* latches the high half */

	return lo | (uint64_t)npu_core_mmio_read(d->core, off + 4) << 32;
}

static struct work work(struct npu_tdev *d)
{
	return (struct work){
		.load = rd64(d, NPU_REG_PERF_LOAD_BYTES),
		.store = rd64(d, NPU_REG_PERF_STORE_BYTES),
		.macs_float = rd64(d, NPU_REG_PERF_MACS_FLOAT),
		.macs_int8 = rd64(d, NPU_REG_PERF_MACS_INT8),
	};
}

#define ck_work(d, l, s, mf, mi)						\
	do {									\
		struct work w_ = work(d);					\
										\
		ck_assert_uint_eq(w_.load, (l));				\
		ck_assert_uint_eq(w_.store, (s));				\
		ck_assert_uint_eq(w_.macs_float, (mf));				\
		ck_assert_uint_eq(w_.macs_int8, (mi));				\
	} while (0)

static struct npu_tdev *dev(unsigned clusters, unsigned tpbs)
{
	struct npu_tdev *d = npu_tdev_small(clusters, tpbs, 0, 1);

	ck_assert_ptr_nonnull(d);
	return d;
}

static void run_ok(struct npu_tdev *d, struct npu_tprog *p,
		   const struct npu_tdev_submit *o)
{
	struct npu_hw_completion c;
	int st;

	memset(&c, 0, sizeof(c));
	st = npu_tdev_run(d, p, o, &c);
	ck_assert_msg(st == NPU_TASK_OK, "status %d insn %u detail %u", st,
		      c.insn_index, c.detail);
	npu_tprog_free(p);
}

/* bf16 A [K, M] x B [N, K] + fp32 bias [N] -> fp32 C [N, M] */
START_TEST(test_work_matmul_bf16)
{
	enum { M = 5, N = 7, K = 9 };
	struct npu_tdev *d = dev(1, 1);
	struct npu_tprog p;
	struct npu_hw_insn *in;

	npu_tprog_init(&p);
	in = npu_tprog_add(&p, NPU_UNIT_TCU, NPU_TCU_MATMUL, 1, 1);
	npu_twu_dense(&in->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, NPU_DT_BF16, 0x1000, 2,
		      (uint32_t[]){ K, M });
	npu_twu_dense(&in->opnd[NPU_OPND_SRC1], NPU_SPACE_HBSM, NPU_DT_BF16, 0x2000, 2,
		      (uint32_t[]){ N, K });
	npu_twu_dense(&in->opnd[NPU_OPND_SRC2], NPU_SPACE_HBSM, NPU_DT_FP32, 0x3000, 1,
		      (uint32_t[]){ N });
	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_FP32, 0x4000, 2,
		      (uint32_t[]){ N, M });
	run_ok(d, &p, NULL);
	ck_work(d, (M * K + K * N) * 2 + N * 4, M * N * 4, M * N * K, 0);
	npu_tdev_destroy(d);
}
END_TEST

/* int8 GEMM accumulating into int32: the destination is read too. */
START_TEST(test_work_matmul_i8_accumulate)
{
	enum { M = 3, N = 64, K = 33 };
	struct npu_tdev *d = dev(1, 1);
	struct npu_tprog p;
	struct npu_hw_insn *in;

	npu_tprog_init(&p);
	in = npu_tprog_add(&p, NPU_UNIT_TCU, NPU_TCU_MATMUL, 1, 1);
	npu_twu_dense(&in->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, NPU_DT_INT8, 0x1000, 2,
		      (uint32_t[]){ K, M });
	npu_twu_dense(&in->opnd[NPU_OPND_SRC1], NPU_SPACE_HBSM, NPU_DT_INT8, 0x2000, 2,
		      (uint32_t[]){ N, K });
	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_INT32, 0x4000, 2,
		      (uint32_t[]){ N, M });
	in->params.tcu.flags = NPU_TCU_F_ACCUMULATE;
	run_ok(d, &p, NULL);
	ck_work(d, M * K + K * N + M * N * 4, M * N * 4, 0, M * N * K);
	npu_tdev_destroy(d);
}
END_TEST

/* A bf16 depthwise 3x3 convolution, pad 1: OH * OW * OC * KH * KW MACs. */
START_TEST(test_work_conv_depthwise)
{
	enum { H = 6, W = 5, C = 8, KH = 3, KW = 3 };
	struct npu_tdev *d = dev(1, 1);
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_tcu_params *t;

	npu_tprog_init(&p);
	in = npu_tprog_add(&p, NPU_UNIT_TCU, NPU_TCU_CONV2D, 1, 1);
	npu_twu_dense(&in->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, NPU_DT_BF16, 0x1000, 3,
		      (uint32_t[]){ C, W, H });
	npu_twu_dense(&in->opnd[NPU_OPND_SRC1], NPU_SPACE_HBSM, NPU_DT_BF16, 0x2000, 4,
		      (uint32_t[]){ C, 1, KW, KH });
	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_BF16, 0x3000, 3,
		      (uint32_t[]){ C, W, H });
	t = &in->params.tcu;
	t->stride_h = t->stride_w = 1;
	t->dil_h = t->dil_w = 1;
	t->pad_top = t->pad_left = t->pad_bottom = t->pad_right = 1;
	t->groups = C;
	run_ok(d, &p, NULL);
	ck_work(d, (H * W * C + C * KH * KW) * 2, H * W * C * 2, H * W * C * KH * KW, 0);
	npu_tdev_destroy(d);
}
END_TEST

/* DTDU: a strided copy reads and writes its elements, a fill only writes. */
START_TEST(test_work_dtdu_copy_fill)
{
	struct npu_tdev *d = dev(1, 1);
	struct npu_tprog p;
	struct npu_hw_insn *in;

	npu_tprog_init(&p);
	in = npu_tprog_add(&p, NPU_UNIT_DTDU, NPU_DTDU_COPY, 1, 1);
	/* 12 rows of 20 fp16 read 64 bytes apart, written densely */
	npu_twu_dense(&in->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, NPU_DT_FP16, 0x1000, 2,
		      (uint32_t[]){ 20, 12 });
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 1, 0, 64, 64 * 11);
	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_FP16, 0x4000, 2,
		      (uint32_t[]){ 20, 12 });
	in = npu_tprog_add(&p, NPU_UNIT_DTDU, NPU_DTDU_FILL, 1, 1);
	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_UINT8, 0x8000, 1,
		      (uint32_t[]){ 100 });
	run_ok(d, &p, NULL);
	ck_work(d, 20 * 12 * 2, 20 * 12 * 2 + 100, 0, 0);
	npu_tdev_destroy(d);
}
END_TEST

/*
 * DMA from DDR into TPBs 0 and 2 of clusters 0 and 1: one read of the
 * source, four writes (the DMA byte counter counts the transfer once).
 */
START_TEST(test_work_dma_broadcast)
{
	struct npu_tdev *d = dev(3, 4);
	struct npu_tdev_submit o = { .nclusters = 2 };
	struct npu_tprog p;
	struct npu_hw_insn *in;

	o.root = npu_tdev_ctx(d);
	ck_assert_ptr_nonnull(npu_tdev_buf(d, o.root, DDR_VA, 8192, false));
	npu_tprog_init(&p);
	in = npu_tprog_add(&p, NPU_UNIT_DMA, NPU_DMA_COPY, 0, 0);
	npu_twu_dense(&in->opnd[NPU_OPND_SRC0], NPU_SPACE_DDR, NPU_DT_UINT8, DDR_VA + 0xf00, 1,
		      (uint32_t[]){ 512 });
	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM_REMOTE, NPU_DT_UINT8, 0x400, 1,
		      (uint32_t[]){ 512 });
	in->opnd[NPU_OPND_DST].cluster_mask = 0x3;
	in->opnd[NPU_OPND_DST].tpb_mask = 0x5;
	run_ok(d, &p, &o);
	ck_assert_uint_eq(rd64(d, NPU_REG_PERF_DMA_BYTES(0)), 512);
	ck_work(d, 512, 4 * 512, 0, 0);
	npu_tdev_destroy(d);
}
END_TEST

/* A GSDU chain of one descriptor: the descriptor is read, then its rows. */
START_TEST(test_work_gsdu)
{
	struct npu_tdev *d = dev(1, 2);
	struct npu_tdev_submit o = { .nclusters = 1 };
	struct npu_hw_gsdu_desc g = { 0 };
	struct npu_tprog p;
	struct npu_hw_insn *in;

	o.root = npu_tdev_ctx(d);
	ck_assert_ptr_nonnull(npu_tdev_buf(d, o.root, DDR_VA, 4096, true));
	g.src_space = NPU_SPACE_HBSM;
	g.dst_space = NPU_SPACE_DDR;
	g.row_bytes = 32;
	g.src = 0x100;
	g.dst = DDR_VA + 0x40;
	g.rows = 4;
	g.src_stride = 64;
	g.dst_stride = 32;
	memcpy(npu_tdev_hbsm(d, 0, 1) + 0x8000, &g, sizeof(g));
	npu_tprog_init(&p);
	in = npu_tprog_add(&p, NPU_UNIT_CSU, NPU_CSU_GSDU, 1, 0x2);
	in->params.csu.chain_space = NPU_SPACE_HBSM;
	in->params.csu.chain_addr = 0x8000;
	run_ok(d, &p, &o);
	ck_assert_uint_eq(rd64(d, NPU_REG_PERF_GSDU_BYTES), 4 * 32);
	ck_work(d, sizeof(g) + 4 * 32, 4 * 32, 0, 0);
	npu_tdev_destroy(d);
}
END_TEST

/*
 * The counters follow NPU_REG_PERF_CTRL like the others: cleared by
 * CLEAR, not counted while ENABLE is off; and counting them leaves the
 * task's simulated cycles alone (the same program, the same cycles).
 */
START_TEST(test_work_perf_ctrl)
{
	struct npu_tdev *d = dev(1, 1);
	struct npu_hw_completion c;
	struct npu_tprog p;
	uint64_t cycles;
	struct npu_hw_insn *in;

	for (int i = 0; i < 3; i++) {
		npu_tprog_init(&p);
		in = npu_tprog_add(&p, NPU_UNIT_DTDU, NPU_DTDU_COPY, 1, 1);
		npu_twu_dense(&in->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, NPU_DT_UINT8, 0x1000, 1,
			      (uint32_t[]){ 256 });
		npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_UINT8, 0x2000, 1,
			      (uint32_t[]){ 256 });
		if (i == 2)
			npu_core_mmio_write(d->core, NPU_REG_PERF_CTRL, 0);
		ck_assert_int_eq(npu_tdev_run(d, &p, NULL, &c), NPU_TASK_OK);
		npu_tprog_free(&p);
		if (i == 0) {
			cycles = c.cycles;
			ck_work(d, 256, 256, 0, 0);
			npu_core_mmio_write(d->core, NPU_REG_PERF_CTRL,
					    NPU_PERF_CTRL_ENABLE | NPU_PERF_CTRL_CLEAR);
			ck_work(d, 0, 0, 0, 0);
		} else {
			ck_assert_uint_eq(c.cycles, cycles);
			ck_work(d, 256, 256, 0, 0);
		}
	}
	npu_tdev_destroy(d);
}
END_TEST

static Suite *core_work_suite(void)
{
	Suite *s = suite_create("core_work");
	TCase *t = tcase_create("counters");

	tcase_add_test(t, test_work_matmul_bf16);
	tcase_add_test(t, test_work_matmul_i8_accumulate);
	tcase_add_test(t, test_work_conv_depthwise);
	tcase_add_test(t, test_work_dtdu_copy_fill);
	tcase_add_test(t, test_work_dma_broadcast);
	tcase_add_test(t, test_work_gsdu);
	tcase_add_test(t, test_work_perf_ctrl);
	suite_add_tcase(s, t);
	return s;
}

NPU_TEST_SUITE(core_work_suite)
