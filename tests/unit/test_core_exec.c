// SPDX-License-Identifier: MIT
/*
 * The task engine: walker patterns, repeat levels, SU counters within and
 * across TPBs and clusters, barriers, deadlock detection, defective
 * clusters, instruction and descriptor validation, timeouts, queues,
 * timing determinism, DMA and SRAM windows.  Mostly DTDU COPY/FILL, SYNC
 * NOP/BARRIER and DMA COPY, the simplest units.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_tdev.h"
#include "npu_test.h"

#define RD(d, off) npu_core_mmio_read((d)->core, (off))
#define WR(d, off, v) npu_core_mmio_write((d)->core, (off), (v))

#define HBSM_SIZE (64u << 10)	/* npu_tdev_small's */
#define SRAM_SIZE (1u << 20)	/* npu_tdev_small's */
#define DDR_VA 0x20000000ull

/* ---- helpers ---- */

static struct npu_tdev *dev_threads(unsigned clusters, unsigned tpbs,
				    uint32_t defect, unsigned threads)
{
	struct npu_tdev *d = npu_tdev_small(clusters, tpbs, defect, threads);

	ck_assert_ptr_nonnull(d);
	return d;
}

static struct npu_tdev *small_dev(unsigned clusters, unsigned tpbs,
				  uint32_t defect)
{
	return dev_threads(clusters, tpbs, defect, 1);
}

static uint8_t *hb(struct npu_tdev *d, unsigned cluster, unsigned tpb)
{
	uint8_t *p = npu_tdev_hbsm(d, cluster, tpb);

	ck_assert_ptr_nonnull(p);
	return p;
}

static void pattern(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 8));
}

static bool all_bytes(const uint8_t *p, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

static void dense1(struct npu_hw_twu *t, unsigned space, uint64_t base,
		   uint32_t n)
{
	uint32_t dims[1] = { n };

	npu_twu_dense(t, space, NPU_DT_UINT8, base, 1, dims);
}

static void remote(struct npu_hw_twu *t, unsigned cm, unsigned tm)
{
	t->space = NPU_SPACE_HBSM_REMOTE;
	t->cluster_mask = (uint16_t)cm;
	t->tpb_mask = (uint8_t)tm;
}

static struct npu_hw_insn *add_copy(struct npu_tprog *p, unsigned cm,
				    unsigned tm, uint32_t src, uint32_t dst,
				    uint32_t n)
{
	struct npu_hw_insn *in = npu_tprog_add(p, NPU_UNIT_DTDU, NPU_DTDU_COPY,
					       cm, tm);

	dense1(&in->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, src, n);
	dense1(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, dst, n);
	return in;
}

static struct npu_hw_insn *add_fill(struct npu_tprog *p, unsigned cm,
				    unsigned tm, uint32_t dst, uint32_t n,
				    uint32_t value)
{
	struct npu_hw_insn *in = npu_tprog_add(p, NPU_UNIT_DTDU, NPU_DTDU_FILL,
					       cm, tm);

	dense1(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, dst, n);
	in->params.dtdu.value = value;
	return in;
}

static struct npu_hw_insn *add_nop(struct npu_tprog *p, unsigned cm,
				   unsigned tm)
{
	return npu_tprog_add(p, NPU_UNIT_SYNC, NPU_SYNC_NOP, cm, tm);
}

static struct npu_hw_insn *add_dma(struct npu_tprog *p, unsigned engine,
				   unsigned sspace, uint64_t src,
				   unsigned dspace, uint64_t dst, uint32_t n)
{
	struct npu_hw_insn *in = npu_tprog_add(p, NPU_UNIT_DMA, NPU_DMA_COPY, 0, 0);

	in->params.dma.engine = engine;
	dense1(&in->opnd[NPU_OPND_SRC0], sspace, src, n);
	dense1(&in->opnd[NPU_OPND_DST], dspace, dst, n);
	return in;
}

static void wait_on(struct npu_hw_insn *in, unsigned slot, unsigned counter,
		    uint32_t value, uint32_t step)
{
	in->sync.wait[slot].counter = (uint8_t)counter;
	in->sync.wait[slot].flags = NPU_WAIT_ENABLE;
	in->sync.wait[slot].value = value;
	in->sync.wait[slot].iter_step = step;
}

static void signal_to(struct npu_hw_insn *in, unsigned slot, unsigned counter,
		      unsigned flags, unsigned cm, unsigned tm)
{
	in->sync.signal[slot].counter = (uint8_t)counter;
	in->sync.signal[slot].flags = (uint8_t)(NPU_SIGNAL_ENABLE | flags);
	in->sync.signal[slot].cluster_mask = (uint16_t)cm;
	in->sync.signal[slot].tpb_mask = (uint8_t)tm;
}

static int run_opt(struct npu_tdev *d, const struct npu_tprog *p,
		   const struct npu_tdev_submit *o, struct npu_hw_completion *c)
{
	int st = npu_tdev_run(d, p, o, c);

	ck_assert_msg(st >= 0, "completion not written (seqno %llu)",
		      (unsigned long long)c->seqno);
	ck_assert_uint_lt(c->status, NPU_TASK_STATUS_COUNT);
	return st;
}

static int run(struct npu_tdev *d, const struct npu_tprog *p,
	       unsigned nclusters, struct npu_hw_completion *c)
{
	struct npu_tdev_submit o = { .nclusters = nclusters };

	return run_opt(d, p, &o, c);
}

#define ck_ok(d, p, ncl, c)							\
	do {									\
		int st_ = run((d), (p), (ncl), (c));				\
		ck_assert_msg(st_ == NPU_TASK_OK,				\
			      "status %d (%s) insn %u detail %u detail2 %u",	\
			      st_, npu_core_status_str((unsigned)st_),		\
			      (c)->insn_index, (c)->detail, (c)->detail2);	\
	} while (0)

/* Program + descriptor under a fresh context, not queued; returns the header. */
static struct npu_hw_prog *prep_desc(struct npu_tdev *d,
				     const struct npu_tprog *p,
				     unsigned nclusters,
				     struct npu_hw_task *desc)
{
	struct npu_tdev_submit opt = { .nclusters = nclusters };
	struct npu_hw_prog *hdr = npu_tdev_prepare(d, p, &opt, desc);

	/* logical cluster i is physical cluster i, fused or not */
	for (unsigned i = 0; i < nclusters; i++)
		desc->cluster_map[i] = (uint8_t)i;
	return hdr;
}

/* ---- walker patterns ---- */

START_TEST(test_copy_plain)
{
	struct npu_tdev *d = small_dev(2, 4, 0);
	struct npu_tprog p;
	struct npu_hw_completion c;
	uint8_t *h = hb(d, 0, 1);

	pattern(h + 0x200, 256, 1);
	npu_tprog_init(&p);
	add_copy(&p, 1, 0x2, 0x200, 0x1000, 256);
	ck_ok(d, &p, 1, &c);
	ck_assert_mem_eq(h + 0x1000, h + 0x200, 256);
	ck_assert_uint_eq(h[0x0fff], 0);
	ck_assert_uint_eq(h[0x1100], 0);
	/* Only TPB 1 was addressed. */
	ck_assert(all_bytes(hb(d, 0, 0) + 0x1000, 256, 0));
	ck_assert(all_bytes(hb(d, 0, 2) + 0x1000, 256, 0));
	ck_assert(all_bytes(hb(d, 1, 1) + 0x1000, 256, 0));
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_completion_fields)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	struct npu_tprog p;
	struct npu_hw_completion c;

	npu_tprog_init(&p);
	add_fill(&p, 1, 1, 0, 512, 3);
	memset(&c, 0xee, sizeof(c));
	ck_ok(d, &p, 1, &c);
	ck_assert_uint_eq(c.seqno, d->seqno);
	ck_assert_uint_eq(c.status, NPU_TASK_OK);
	ck_assert_uint_eq(c.insn_index, 0xffffffffu);
	ck_assert_uint_eq(c.fault_addr, 0);
	ck_assert_uint_eq(c.detail, 0);
	ck_assert_uint_eq(c.detail2, 0);
	ck_assert_uint_gt(c.cycles, 0);
	for (unsigned i = 0; i < 3; i++)
		ck_assert_uint_eq(c.reserved[i], 0);
	ck_assert_uint_eq(RD(d, NPU_REG_Q(0, NPU_Q_DONE_SEQ_LO)), (uint32_t)d->seqno);
	/* An empty program is a valid, instant task. */
	p.n = 0;
	ck_ok(d, &p, 1, &c);
	ck_assert_uint_eq(c.seqno, d->seqno);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_copy_strided)
{
	struct npu_tdev *d = small_dev(1, 1, 0);
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	uint8_t *h = hb(d, 0, 0);

	pattern(h + 0x400, 8 * 64, 9);
	npu_tprog_init(&p);
	/* gather: 8 rows of 16 bytes, row stride 64 -> dense 128 */
	in = add_copy(&p, 1, 1, 0x400, 0x2000, 16);
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 1, 0, 64, 7 * 64);
	npu_twu_level(&in->opnd[NPU_OPND_DST], 1, 0, 16, 7 * 16);
	/* scatter: 64 dense bytes to every other byte */
	in = add_copy(&p, 1, 1, 0x400, 0x3000, 64);
	npu_twu_level(&in->opnd[NPU_OPND_DST], 0, 0, 2, 63 * 2);
	ck_ok(d, &p, 1, &c);
	for (unsigned r = 0; r < 8; r++)
		ck_assert_mem_eq(h + 0x2000 + 16 * r, h + 0x400 + 64 * r, 16);
	ck_assert_uint_eq(h[0x2080], 0);
	for (unsigned i = 0; i < 64; i++) {
		ck_assert_uint_eq(h[0x3000 + 2 * i], h[0x400 + i]);
		ck_assert_uint_eq(h[0x3000 + 2 * i + 1], 0);
	}
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_copy_negative_step)
{
	struct npu_tdev *d = small_dev(1, 1, 0);
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	uint8_t *h = hb(d, 0, 0);

	pattern(h + 0x100, 256, 3);
	npu_tprog_init(&p);
	/* reversed source */
	in = add_copy(&p, 1, 1, 0x100, 0x1000, 256);
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 0, 255, -1, 0);
	/* reversed destination, rows walked backwards (4 rows of 8) */
	in = add_copy(&p, 1, 1, 0x100, 0x2000, 8);
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 1, 0, 8, 24);
	npu_twu_level(&in->opnd[NPU_OPND_DST], 0, 7, -1, 0);
	npu_twu_level(&in->opnd[NPU_OPND_DST], 1, 24, -8, 0);
	/* negative offsets from the base: [base - 16, base) */
	in = add_copy(&p, 1, 1, 0x110, 0x3000, 16);
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 0, -16, 1, -1);
	ck_ok(d, &p, 1, &c);
	for (unsigned i = 0; i < 256; i++)
		ck_assert_uint_eq(h[0x1000 + i], h[0x100 + 255 - i]);
	for (unsigned i = 0; i < 32; i++)
		ck_assert_uint_eq(h[0x2000 + i], h[0x100 + 31 - i]);
	ck_assert_mem_eq(h + 0x3000, h + 0x100, 16);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_copy_broadcast_level)
{
	struct npu_tdev *d = small_dev(1, 1, 0);
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	uint8_t *h = hb(d, 0, 0);

	pattern(h + 0x100, 16, 5);
	npu_tprog_init(&p);
	/* outer broadcast level: the 16-byte row 4 times */
	in = add_copy(&p, 1, 1, 0x100, 0x1000, 64);
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 0, 0, 1, 15);
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 1, 0, 0, 4);
	/* inner broadcast level: every one of 8 bytes 8 times */
	in = add_copy(&p, 1, 1, 0x100, 0x2000, 64);
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 0, 0, 0, 8);
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 1, 0, 1, 7);
	/* broadcast with a non-zero initial value: Value stays at initial */
	in = add_copy(&p, 1, 1, 0x100, 0x3000, 8);
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 0, 3, 0, 8);
	ck_ok(d, &p, 1, &c);
	for (unsigned i = 0; i < 64; i++) {
		ck_assert_uint_eq(h[0x1000 + i], h[0x100 + i % 16]);
		ck_assert_uint_eq(h[0x2000 + i], h[0x100 + i / 8]);
	}
	ck_assert(all_bytes(h + 0x3000, 8, h[0x103]));
	ck_assert_uint_eq(h[0x1040], 0);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_copy_double_buffer_levels)
{
	struct npu_tdev *d = small_dev(1, 1, 0);
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	uint8_t *h = hb(d, 0, 0);

	memset(h + 0x1000, 0xa0, 16);	/* buffer A */
	memset(h + 0x1100, 0xb0, 16);	/* buffer B */
	npu_tprog_init(&p);
	in = add_copy(&p, 1, 1, 0x1000, 0x2000, 16);
	in->repeat_levels = 2;
	/* src: [16] x {A, B} (double buffer) x 3 (broadcast) */
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 1, 0, 0x100, 0x100);
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 2, 0, 0, 3);
	/* dst: 6 consecutive rows */
	npu_twu_level(&in->opnd[NPU_OPND_DST], 1, 0, 16, 16);
	npu_twu_level(&in->opnd[NPU_OPND_DST], 2, 0, 32, 64);
	ck_ok(d, &p, 1, &c);
	for (unsigned r = 0; r < 6; r++)
		ck_assert_msg(all_bytes(h + 0x2000 + 16 * r, 16, r % 2 ? 0xb0 : 0xa0),
			      "row %u", r);
	ck_assert_uint_eq(h[0x2060], 0);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

/*
 * A real double-buffered pipeline: DMA iteration r loads DDR chunk r into
 * buffer r % 2 of TPB 0; COPY iteration r moves buffer r % 2 to row r.
 * Per-iteration waits keep the producer at most two buffers ahead.
 */
START_TEST(test_double_buffer_pipeline)
{
	struct npu_tdev *d = small_dev(1, 1, 0);
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_tdev_submit o = { .nclusters = 1 };
	struct npu_hw_completion c;
	uint8_t *h = hb(d, 0, 0), *src;

	o.root = npu_tdev_ctx(d);
	src = npu_tdev_buf(d, o.root, DDR_VA, 4096, false);
	for (unsigned i = 0; i < 96; i++)
		src[i] = (uint8_t)(0x10 * (i / 16 + 1) + i % 16);
	npu_tprog_init(&p);
	/* the consumer frees buffer "-1" up front */
	in = add_nop(&p, 1, 1);
	signal_to(in, 0, 2, NPU_SIGNAL_CCB, 0, 0);

	in = add_dma(&p, 0, NPU_SPACE_DDR, DDR_VA, NPU_SPACE_HBSM_REMOTE, 0x1000, 16);
	remote(&in->opnd[NPU_OPND_DST], 1, 1);
	in->repeat_levels = 2;
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 1, 0, 16, 16);
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 2, 0, 32, 64);
	npu_twu_level(&in->opnd[NPU_OPND_DST], 1, 0, 0x100, 0x100);
	npu_twu_level(&in->opnd[NPU_OPND_DST], 2, 0, 0, 3);
	wait_on(in, 0, 2, 0, 1);	/* iteration r: consumer r-2 done */
	signal_to(in, 0, 1, NPU_SIGNAL_PER_ITER | NPU_SIGNAL_REMOTE, 1, 1);

	in = add_copy(&p, 1, 1, 0x1000, 0x2000, 16);
	in->repeat_levels = 2;
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 1, 0, 0x100, 0x100);
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 2, 0, 0, 3);
	npu_twu_level(&in->opnd[NPU_OPND_DST], 1, 0, 16, 16);
	npu_twu_level(&in->opnd[NPU_OPND_DST], 2, 0, 32, 64);
	wait_on(in, 0, 1, 1, 1);	/* iteration r: chunk r loaded */
	signal_to(in, 0, 2, NPU_SIGNAL_PER_ITER | NPU_SIGNAL_CCB, 0, 0);

	ck_assert_int_eq(run_opt(d, &p, &o, &c), NPU_TASK_OK);
	ck_assert_mem_eq(h + 0x2000, src, 96);
	/* the buffers hold the last two chunks */
	ck_assert_mem_eq(h + 0x1000, src + 64, 16);
	ck_assert_mem_eq(h + 0x1100, src + 80, 16);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

/* ---- repeat levels and SU counters ---- */

START_TEST(test_repeat_per_iteration_sync)
{
	struct npu_tdev *d = small_dev(1, 2, 0);
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	uint8_t *h0 = hb(d, 0, 0);

	npu_tprog_init(&p);
	/* TPB 0: copy X row r to Y row r once row r is written */
	in = add_copy(&p, 1, 1, 0x1000, 0x2000, 16);
	in->repeat_levels = 1;
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 1, 0, 16, 48);
	npu_twu_level(&in->opnd[NPU_OPND_DST], 1, 0, 16, 48);
	wait_on(in, 0, 0, 1, 1);
	signal_to(in, 0, 2, NPU_SIGNAL_REMOTE, 1, 0x2);	/* once, at the end */
	/* TPB 1: write X rows into TPB 0, one per iteration */
	in = add_fill(&p, 1, 0x2, 0x1000, 16, 0xaa);
	remote(&in->opnd[NPU_OPND_DST], 1, 1);
	in->repeat_levels = 1;
	npu_twu_level(&in->opnd[NPU_OPND_DST], 1, 0, 16, 48);
	signal_to(in, 0, 0, NPU_SIGNAL_PER_ITER | NPU_SIGNAL_REMOTE, 1, 1);
	/* TPB 1: overwrite X only after TPB 0 has copied it all */
	in = add_fill(&p, 1, 0x2, 0x1000, 64, 0xbb);
	remote(&in->opnd[NPU_OPND_DST], 1, 1);
	wait_on(in, 1, 2, 1, 0);
	ck_ok(d, &p, 1, &c);
	ck_assert(all_bytes(h0 + 0x2000, 64, 0xaa));
	ck_assert(all_bytes(h0 + 0x1000, 64, 0xbb));
	ck_assert(all_bytes(hb(d, 0, 1) + 0x1000, 64, 0));
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_repeat_copy_then_nop_signals)
{
	struct npu_tdev *d = small_dev(1, 2, 0);
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	uint8_t *h0 = hb(d, 0, 0), *h1 = hb(d, 0, 1);

	pattern(h0 + 0x100, 64, 11);
	npu_tprog_init(&p);
	/* TPB 1 (listed first): copy what TPB 0 sent once the NOP says so */
	in = add_copy(&p, 1, 0x2, 0x1000, 0x3000, 64);
	wait_on(in, 3, 4, 1, 0);
	/* TPB 0: 4 iterations, row r to TPB 1, signalling each */
	in = add_copy(&p, 1, 1, 0x100, 0x1000, 16);
	remote(&in->opnd[NPU_OPND_DST], 1, 0x2);
	in->repeat_levels = 1;
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 1, 0, 16, 48);
	npu_twu_level(&in->opnd[NPU_OPND_DST], 1, 0, 16, 48);
	signal_to(in, 1, 3, NPU_SIGNAL_PER_ITER, 0, 0);
	/* TPB 0 SYNC: after all four, tell TPB 1 */
	in = add_nop(&p, 1, 1);
	wait_on(in, 0, 3, 4, 0);
	signal_to(in, 0, 4, NPU_SIGNAL_REMOTE, 1, 0x2);
	ck_ok(d, &p, 1, &c);
	ck_assert_mem_eq(h1 + 0x1000, h0 + 0x100, 64);
	ck_assert_mem_eq(h1 + 0x3000, h0 + 0x100, 64);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_sync_within_tpb)
{
	struct npu_tdev *d = small_dev(1, 1, 0);
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_tdev_submit o = { .nclusters = 1 };
	struct npu_hw_completion c;
	uint8_t *h = hb(d, 0, 0), *src;

	o.root = npu_tdev_ctx(d);
	src = npu_tdev_buf(d, o.root, DDR_VA, 4096, false);
	pattern(src, 128, 21);
	npu_tprog_init(&p);
	/* the consumer comes first in program order and in every round */
	in = add_copy(&p, 1, 1, 0x800, 0x1800, 128);
	wait_on(in, 0, 3, 1, 0);
	in = add_dma(&p, 1, NPU_SPACE_DDR, DDR_VA, NPU_SPACE_HBSM_REMOTE, 0x800, 128);
	remote(&in->opnd[NPU_OPND_DST], 1, 1);
	signal_to(in, 1, 3, NPU_SIGNAL_REMOTE, 1, 1);
	/* a local chain on the same TPB: FILL signals, NOP relays, FILL waits */
	in = add_fill(&p, 1, 1, 0x4000, 32, 0x31);
	signal_to(in, 0, 10, 0, 0, 0);
	in = add_nop(&p, 1, 1);
	wait_on(in, 0, 10, 1, 0);
	signal_to(in, 0, 11, 0, 0, 0);
	in = add_copy(&p, 1, 1, 0x4000, 0x4100, 32);
	wait_on(in, 0, 11, 1, 0);
	ck_assert_int_eq(run_opt(d, &p, &o, &c), NPU_TASK_OK);
	ck_assert_mem_eq(h + 0x1800, src, 128);
	ck_assert(all_bytes(h + 0x4100, 32, 0x31));
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_sync_across_tpbs)
{
	struct npu_tdev *d = small_dev(1, 4, 0);
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	uint8_t *h0 = hb(d, 0, 0);

	npu_tprog_init(&p);
	in = add_copy(&p, 1, 1, 0x1000, 0x2000, 64);
	wait_on(in, 2, 4, 1, 0);
	/* TPB 3 fills TPB 0's X, then signals TPB 0 */
	in = add_fill(&p, 1, 0x8, 0x1000, 64, 0x5c);
	remote(&in->opnd[NPU_OPND_DST], 1, 1);
	signal_to(in, 0, 4, NPU_SIGNAL_REMOTE, 1, 1);
	ck_ok(d, &p, 1, &c);
	ck_assert(all_bytes(h0 + 0x2000, 64, 0x5c));
	ck_assert(all_bytes(hb(d, 0, 3) + 0x1000, 64, 0));
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_sync_across_clusters)
{
	/* cluster 1 fused; the partition maps logical 0 -> 3, 1 -> 0 */
	struct npu_tdev *d = small_dev(4, 4, 0x2);
	static const uint8_t map[2] = { 3, 0 };
	struct npu_tdev_submit o = { .nclusters = 2, .cluster_map = map };
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;

	npu_tprog_init(&p);
	/* logical 0, TPB 0 */
	in = add_copy(&p, 1, 1, 0x1000, 0x2000, 64);
	wait_on(in, 0, 5, 1, 0);
	/* logical 1, TPB 2 writes logical 0 TPB 0 and signals it */
	in = add_fill(&p, 0x2, 0x4, 0x1000, 64, 0x6d);
	remote(&in->opnd[NPU_OPND_DST], 1, 1);
	signal_to(in, 0, 5, NPU_SIGNAL_REMOTE, 1, 1);
	ck_assert_int_eq(run_opt(d, &p, &o, &c), NPU_TASK_OK);
	ck_assert(all_bytes(hb(d, 3, 0) + 0x2000, 64, 0x6d));
	ck_assert(all_bytes(hb(d, 3, 0) + 0x1000, 64, 0x6d));
	/* physical 0 (logical 1) and physical 2 (unused) untouched */
	ck_assert(all_bytes(hb(d, 0, 0) + 0x1000, 0x1040, 0));
	ck_assert(all_bytes(hb(d, 2, 0) + 0x1000, 0x1040, 0));
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_broadcast_insn_masks)
{
	struct npu_tdev *d = small_dev(3, 4, 0);
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;

	pattern(hb(d, 0, 0) + 0x100, 32, 40);
	npu_tprog_init(&p);
	/* one instruction, TPBs 1 and 3 of clusters 0 and 1 */
	add_fill(&p, 0x3, 0xa, 0x500, 64, 0x77);
	/* COPY with a broadcast destination: cluster 1, TPBs 0 and 1 */
	in = add_copy(&p, 1, 1, 0x100, 0x900, 32);
	remote(&in->opnd[NPU_OPND_DST], 0x2, 0x3);
	ck_ok(d, &p, 2, &c);
	for (unsigned cl = 0; cl < 3; cl++) {
		for (unsigned t = 0; t < 4; t++) {
			bool fill = cl < 2 && (t & 1);
			bool copy = cl == 1 && t < 2;

			ck_assert_msg(all_bytes(hb(d, cl, t) + 0x500, 64, fill ? 0x77 : 0),
				      "fill cluster %u tpb %u", cl, t);
			if (copy)
				ck_assert_mem_eq(hb(d, cl, t) + 0x900,
						 hb(d, 0, 0) + 0x100, 32);
			else
				ck_assert_msg(all_bytes(hb(d, cl, t) + 0x900, 32, 0),
					      "copy cluster %u tpb %u", cl, t);
		}
	}
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_barrier_across_tpbs)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;

	npu_tprog_init(&p);
	/* TPB 1 writes TPB 0's X; the barrier orders TPB 0's copy after it */
	in = add_fill(&p, 1, 0x2, 0x1000, 64, 0x42);
	remote(&in->opnd[NPU_OPND_DST], 1, 1);
	in = npu_tprog_add(&p, NPU_UNIT_SYNC, NPU_SYNC_BARRIER, 1, 0x3);
	in->params.sync.barrier_id = 5;
	add_copy(&p, 1, 1, 0x1000, 0x2000, 64);
	ck_ok(d, &p, 1, &c);
	ck_assert(all_bytes(hb(d, 0, 0) + 0x2000, 64, 0x42));

	/* the same across clusters: logical 1 feeds logical 0 */
	npu_tprog_free(&p);
	npu_tprog_init(&p);
	in = add_fill(&p, 0x2, 0x1, 0x3000, 64, 0x43);
	remote(&in->opnd[NPU_OPND_DST], 1, 1);
	in = npu_tprog_add(&p, NPU_UNIT_SYNC, NPU_SYNC_BARRIER, 0x3, 0x1);
	in->params.sync.barrier_id = 6;
	add_copy(&p, 1, 1, 0x3000, 0x4000, 64);
	ck_ok(d, &p, 2, &c);
	ck_assert(all_bytes(hb(d, 0, 0) + 0x4000, 64, 0x43));
	ck_assert(all_bytes(hb(d, 1, 0) + 0x3000, 64, 0));
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

/* ---- deadlocks ---- */

START_TEST(test_deadlock_unsignalled)
{
	struct npu_tdev *d = small_dev(1, 4, 0);
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;

	npu_tprog_init(&p);
	in = add_fill(&p, 1, 0x4, 0x100, 16, 0x99);
	signal_to(in, 0, 1, 0, 0, 0);
	in = add_nop(&p, 1, 0x4);
	wait_on(in, 0, 1, 1, 0);	/* met */
	wait_on(in, 2, 7, 3, 0);	/* nobody signals counter 7 */
	ck_assert_int_eq(run(d, &p, 1, &c), NPU_TASK_SYNC_DEADLOCK);
	ck_assert_uint_eq(c.insn_index, 1);
	ck_assert_uint_eq(c.detail, NPU_DEADLOCK_DETAIL(0, 2, 7));
	ck_assert_uint_eq(c.detail2, 3);
	ck_assert_uint_eq(c.seqno, d->seqno);
	/* the work before the deadlock was done */
	ck_assert(all_bytes(hb(d, 0, 2) + 0x100, 16, 0x99));
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_deadlock_iteration_value)
{
	struct npu_tdev *d = small_dev(2, 2, 0);
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;

	npu_tprog_init(&p);
	/* logical cluster 1, TPB 1: 2 signals, then a wait for 1 + 2r */
	in = add_fill(&p, 0x2, 0x2, 0x100, 16, 1);
	in->repeat_levels = 1;
	npu_twu_level(&in->opnd[NPU_OPND_DST], 1, 0, 16, 16);
	signal_to(in, 1, 6, NPU_SIGNAL_PER_ITER, 0, 0);
	in = add_copy(&p, 0x2, 0x2, 0x100, 0x200, 8);
	in->repeat_levels = 1;
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 1, 0, 8, 24);
	npu_twu_level(&in->opnd[NPU_OPND_DST], 1, 0, 8, 24);
	wait_on(in, 1, 6, 1, 2);
	ck_assert_int_eq(run(d, &p, 2, &c), NPU_TASK_SYNC_DEADLOCK);
	ck_assert_uint_eq(c.insn_index, 1);
	ck_assert_uint_eq(c.detail, NPU_DEADLOCK_DETAIL(1, 1, 6));
	ck_assert_uint_eq(c.detail2, 3);	/* iteration 1: 1 + 1 * 2 */
	/* iteration 0 ran */
	ck_assert(all_bytes(hb(d, 1, 1) + 0x200, 8, 1));
	ck_assert(all_bytes(hb(d, 1, 1) + 0x208, 8, 0));
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_deadlock_cyclic)
{
	struct npu_tdev *d = small_dev(1, 1, 0);
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;

	npu_tprog_init(&p);
	in = add_copy(&p, 1, 1, 0, 0x100, 16);
	wait_on(in, 0, 0, 1, 0);
	signal_to(in, 0, 1, 0, 0, 0);
	in = add_nop(&p, 1, 1);
	wait_on(in, 0, 1, 1, 0);
	signal_to(in, 0, 0, 0, 0, 0);
	ck_assert_int_eq(run(d, &p, 1, &c), NPU_TASK_SYNC_DEADLOCK);
	/* both wait; the first blocked unit in order (DTDU before SYNC) */
	ck_assert_uint_eq(c.insn_index, 0);
	ck_assert_uint_eq(c.detail, NPU_DEADLOCK_DETAIL(0, 0, 0));
	ck_assert_uint_eq(c.detail2, 1);
	npu_tprog_free(&p);

	/* waiting on a later instruction of the same unit never resolves */
	npu_tprog_init(&p);
	in = add_copy(&p, 1, 1, 0, 0x100, 16);
	wait_on(in, 0, 9, 1, 0);
	in = add_fill(&p, 1, 1, 0, 16, 2);
	signal_to(in, 0, 9, 0, 0, 0);
	ck_assert_int_eq(run(d, &p, 1, &c), NPU_TASK_SYNC_DEADLOCK);
	ck_assert_uint_eq(c.insn_index, 0);
	ck_assert_uint_eq(c.detail, NPU_DEADLOCK_DETAIL(0, 0, 9));
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_deadlock_dma_ccb)
{
	struct npu_tdev *d = small_dev(1, 1, 0);
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;

	npu_tprog_init(&p);
	in = add_dma(&p, 1, NPU_SPACE_SRAM, 0, NPU_SPACE_SRAM, 0x1000, 64);
	signal_to(in, 0, 9, NPU_SIGNAL_CCB, 0, 0);
	in = add_dma(&p, 1, NPU_SPACE_SRAM, 0, NPU_SPACE_SRAM, 0x2000, 64);
	wait_on(in, 1, 9, 2, 0);
	ck_assert_int_eq(run(d, &p, 1, &c), NPU_TASK_SYNC_DEADLOCK);
	ck_assert_uint_eq(c.insn_index, 1);
	ck_assert_uint_eq(c.detail, NPU_DEADLOCK_DETAIL(NPU_DEADLOCK_CCB, 1, 9));
	ck_assert_uint_eq(c.detail2, 2);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_deadlock_barrier)
{
	struct npu_tdev *d = small_dev(1, 2, 0);
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;

	npu_tprog_init(&p);
	/* TPB 1 never reaches the barrier TPB 0 waits at */
	in = add_copy(&p, 1, 0x2, 0, 0x100, 16);
	wait_on(in, 0, 3, 1, 0);
	in = npu_tprog_add(&p, NPU_UNIT_SYNC, NPU_SYNC_BARRIER, 1, 0x3);
	in->params.sync.barrier_id = 77;
	add_fill(&p, 1, 1, 0x200, 16, 1);
	ck_assert_int_eq(run(d, &p, 1, &c), NPU_TASK_SYNC_DEADLOCK);
	ck_assert_uint_le(c.insn_index, 1);
	if ((c.detail & 0xff) == NPU_DEADLOCK_BARRIER) {
		ck_assert_uint_eq(c.insn_index, 1);
		ck_assert_uint_eq(c.detail2, 77);
	} else {
		ck_assert_uint_eq(c.insn_index, 0);
		ck_assert_uint_eq(c.detail, NPU_DEADLOCK_DETAIL(0, 1, 3));
	}
	/* nothing after the barrier ran */
	ck_assert(all_bytes(hb(d, 0, 0) + 0x200, 16, 0));
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

/* ---- defective clusters ---- */

START_TEST(test_defective_cluster_map)
{
	struct npu_tdev *d = small_dev(4, 1, 0x4);
	static const uint8_t map[2] = { 0, 2 };
	struct npu_tdev_submit o = { .nclusters = 2, .cluster_map = map };
	struct npu_tprog p;
	struct npu_hw_completion c;

	npu_tprog_init(&p);
	add_fill(&p, 1, 1, 0, 16, 0x11);
	ck_assert_int_eq(run_opt(d, &p, &o, &c), NPU_TASK_DEFECTIVE_CLUSTER);
	ck_assert_uint_eq(c.detail, 2);
	ck_assert(all_bytes(hb(d, 0, 0), 16, 0));	/* nothing ran */
	/* the healthy clusters still work */
	ck_ok(d, &p, 2, &c);
	ck_assert(all_bytes(hb(d, 0, 0), 16, 0x11));
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_defective_logical_cluster)
{
	struct npu_tdev *d = small_dev(4, 1, 0);
	struct npu_tprog p;
	struct npu_hw_completion c;

	npu_tprog_init(&p);
	add_fill(&p, 1, 1, 0, 16, 0x11);
	add_fill(&p, 0xc, 1, 0, 16, 0x12);	/* logical 2 and 3 of a 2-cluster partition */
	ck_assert_int_eq(run(d, &p, 2, &c), NPU_TASK_DEFECTIVE_CLUSTER);
	ck_assert_uint_eq(c.insn_index, 1);
	ck_assert_uint_eq(c.detail, 2);
	ck_assert(all_bytes(hb(d, 0, 0), 16, 0));
	ck_assert(all_bytes(hb(d, 2, 0), 16, 0));
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

/* ---- illegal instructions ---- */

struct illegal_case {
	const char *what;
	void (*mutate)(struct npu_hw_insn *in);
	unsigned detail;
};

/*
 * Program: a FILL, then the template (DTDU COPY, or DMA COPY) mutated,
 * then a NOP.  Every case must end ILLEGAL_INSN at index 1 with the
 * expected detail, before anything ran (the FILL's bytes stay zero).
 */
static void run_illegal(const struct illegal_case *cases, size_t n, bool dma)
{
	struct npu_tdev *d = small_dev(2, 4, 0);

	for (size_t i = 0; i < n; i++) {
		struct npu_tprog p;
		struct npu_hw_insn *in;
		struct npu_hw_completion c;
		int st;

		npu_tprog_init(&p);
		add_fill(&p, 1, 1, 0, 64, 0x11);
		if (dma)
			in = add_dma(&p, 0, NPU_SPACE_DDR, DDR_VA, NPU_SPACE_SRAM, 0, 64);
		else
			in = add_copy(&p, 1, 1, 0x100, 0x200, 64);
		cases[i].mutate(in);
		add_nop(&p, 1, 1);
		st = run(d, &p, 1, &c);
		ck_assert_msg(st == NPU_TASK_ILLEGAL_INSN, "%s: status %d (%s)",
			      cases[i].what, st, npu_core_status_str((unsigned)st));
		ck_assert_msg(c.insn_index == 1, "%s: insn_index %u",
			      cases[i].what, c.insn_index);
		ck_assert_msg(c.detail == cases[i].detail, "%s: detail %u, want %u",
			      cases[i].what, c.detail, cases[i].detail);
		ck_assert_msg(all_bytes(hb(d, 0, 0), 64, 0), "%s: ran", cases[i].what);
		npu_tprog_free(&p);
	}
	npu_tdev_destroy(d);
}

#define SRC(in) (&(in)->opnd[NPU_OPND_SRC0])
#define DST(in) (&(in)->opnd[NPU_OPND_DST])

static void m_unit9(struct npu_hw_insn *in) { in->unit = 9; }
static void m_unit6(struct npu_hw_insn *in) { in->unit = NPU_UNIT_COUNT; }
static void m_unitff(struct npu_hw_insn *in) { in->unit = 0xff; }
static void m_op0(struct npu_hw_insn *in) { in->opcode = 0; }
static void m_op5(struct npu_hw_insn *in) { in->opcode = 5; }
static void m_opff(struct npu_hw_insn *in) { in->opcode = 0xff; }
static void m_flags(struct npu_hw_insn *in) { in->flags = 0x100; }
static void m_res0(struct npu_hw_insn *in) { in->reserved[0] = 1; }
static void m_res1(struct npu_hw_insn *in) { in->reserved[1] = 0x80000000u; }
static void m_tpb0(struct npu_hw_insn *in) { in->tpb_mask = 0; }
static void m_tpb_beyond(struct npu_hw_insn *in) { in->tpb_mask = 0x10; }
static void m_cluster0(struct npu_hw_insn *in) { in->cluster_mask = 0; }
static void m_params(struct npu_hw_insn *in) { in->params.dtdu.value = 1; }
static void m_params_res(struct npu_hw_insn *in) { in->params.dtdu.reserved[23] = 1; }

static const struct illegal_case illegal_basic[] = {
	{ "unit 9", m_unit9, NPU_IE_UNIT },
	{ "unit COUNT", m_unit6, NPU_IE_UNIT },
	{ "unit 255", m_unitff, NPU_IE_UNIT },
	{ "opcode 0", m_op0, NPU_IE_OPCODE },
	{ "opcode 5", m_op5, NPU_IE_OPCODE },
	{ "opcode 255", m_opff, NPU_IE_OPCODE },
	{ "insn flags", m_flags, NPU_IE_RESERVED },
	{ "insn reserved[0]", m_res0, NPU_IE_RESERVED },
	{ "insn reserved[1]", m_res1, NPU_IE_RESERVED },
	{ "tpb mask 0", m_tpb0, NPU_IE_DEST },
	{ "tpb mask beyond", m_tpb_beyond, NPU_IE_DEST },
	{ "cluster mask 0", m_cluster0, NPU_IE_DEST },
	{ "COPY value", m_params, NPU_IE_PARAM },
	{ "COPY params reserved", m_params_res, NPU_IE_RESERVED },
};

START_TEST(test_illegal_unit_opcode_reserved)
{
	run_illegal(illegal_basic, sizeof(illegal_basic) / sizeof(illegal_basic[0]), false);
}
END_TEST

static void w_not_integral(struct npu_hw_insn *in) { npu_twu_level(SRC(in), 0, 0, 3, 10); }
static void w_nlevels6(struct npu_hw_insn *in) { SRC(in)->nlevels = 6; }
static void w_bcast0(struct npu_hw_insn *in) { npu_twu_level(SRC(in), 0, 0, 0, 0); }
static void w_bcast_big(struct npu_hw_insn *in) { npu_twu_level(SRC(in), 0, 0, 0, NPU_TWU_MAX_COUNT + 1); }
static void w_backwards(struct npu_hw_insn *in) { npu_twu_level(SRC(in), 0, 0, 1, -1); }
static void w_wrong_sign(struct npu_hw_insn *in) { npu_twu_level(SRC(in), 0, 10, -1, 20); }
static void w_rep5(struct npu_hw_insn *in) { in->repeat_levels = NPU_MAX_REPEAT_LEVELS + 1; }
static void w_rep_all(struct npu_hw_insn *in) { in->repeat_levels = 1; }	/* 1-level walkers */
static void w_rep_mismatch(struct npu_hw_insn *in)
{
	in->repeat_levels = 1;
	npu_twu_level(SRC(in), 1, 0, 64, 64);	/* 2 iterations */
	npu_twu_level(DST(in), 1, 0, 64, 128);	/* 3 iterations */
}
static void w_stray_level(struct npu_hw_insn *in) { SRC(in)->level[3].final = 5; }
static void w_unused_stray(struct npu_hw_insn *in) { in->opnd[NPU_OPND_SRC1].base = 4; }
static void w_twu_flags(struct npu_hw_insn *in) { SRC(in)->flags = 1; }
static void w_twu_pad(struct npu_hw_insn *in) { DST(in)->pad = 1; }
static void w_twu_res(struct npu_hw_insn *in) { DST(in)->reserved = 1; }
static void w_twu_mask_local(struct npu_hw_insn *in) { SRC(in)->tpb_mask = 1; }
static void w_shape(struct npu_hw_insn *in) { npu_twu_level(DST(in), 0, 0, 1, 31); }
static void w_dtype0(struct npu_hw_insn *in) { SRC(in)->dtype = 0; }
static void w_dtype9(struct npu_hw_insn *in) { SRC(in)->dtype = 9; }
static void w_space0(struct npu_hw_insn *in) { SRC(in)->space = 0; }
static void w_space7(struct npu_hw_insn *in) { SRC(in)->space = 7; }
static void w_space_sram(struct npu_hw_insn *in) { SRC(in)->space = NPU_SPACE_SRAM; }
static void w_space_ddr_dst(struct npu_hw_insn *in) { DST(in)->space = NPU_SPACE_DDR; }
static void r_end(struct npu_hw_insn *in) { SRC(in)->base = HBSM_SIZE - 32; }
static void r_at_end(struct npu_hw_insn *in) { DST(in)->base = HBSM_SIZE; npu_twu_level(SRC(in), 0, 0, 1, 0); npu_twu_level(DST(in), 0, 0, 1, 0); }
static void r_huge(struct npu_hw_insn *in) { SRC(in)->base = 1ull << 41; }
static void r_negative(struct npu_hw_insn *in) { DST(in)->base = 0; npu_twu_level(DST(in), 0, -1, 1, 62); }
static void r_level_out(struct npu_hw_insn *in) { npu_twu_level(DST(in), 1, 0, HBSM_SIZE - 0x100, HBSM_SIZE - 0x100); npu_twu_level(SRC(in), 1, 0, 0, 2); }
static void r_remote_out(struct npu_hw_insn *in) { remote(DST(in), 0x2, 1); }	/* 1-cluster partition */
static void r_remote_nomask(struct npu_hw_insn *in) { remote(DST(in), 0, 1); }

static const struct illegal_case illegal_walker[] = {
	{ "count not integral", w_not_integral, NPU_IE_WALKER },
	{ "nlevels 6", w_nlevels6, NPU_IE_WALKER },
	{ "broadcast count 0", w_bcast0, NPU_IE_WALKER },
	{ "broadcast count too big", w_bcast_big, NPU_IE_WALKER },
	{ "final before initial", w_backwards, NPU_IE_WALKER },
	{ "step sign wrong", w_wrong_sign, NPU_IE_WALKER },
	{ "repeat levels 5", w_rep5, NPU_IE_WALKER },
	{ "repeat levels take every level", w_rep_all, NPU_IE_WALKER },
	{ "repeat counts disagree", w_rep_mismatch, NPU_IE_SHAPE },
	{ "stray level", w_stray_level, NPU_IE_RESERVED },
	{ "unused operand not zero", w_unused_stray, NPU_IE_RESERVED },
	{ "walker flags", w_twu_flags, NPU_IE_RESERVED },
	{ "walker pad", w_twu_pad, NPU_IE_RESERVED },
	{ "walker reserved", w_twu_res, NPU_IE_RESERVED },
	{ "masks on a local walker", w_twu_mask_local, NPU_IE_RESERVED },
	{ "element counts disagree", w_shape, NPU_IE_SHAPE },
	{ "dtype NONE", w_dtype0, NPU_IE_DTYPE },
	{ "dtype 9", w_dtype9, NPU_IE_DTYPE },
	{ "space NONE", w_space0, NPU_IE_SPACE },
	{ "space 7", w_space7, NPU_IE_SPACE },
	{ "DTDU source in SRAM", w_space_sram, NPU_IE_SPACE },
	{ "DTDU destination in DDR", w_space_ddr_dst, NPU_IE_SPACE },
	{ "past the HBSM end", r_end, NPU_IE_RANGE },
	{ "at the HBSM end", r_at_end, NPU_IE_RANGE },
	{ "huge base", r_huge, NPU_IE_RANGE },
	{ "below the HBSM", r_negative, NPU_IE_RANGE },
	{ "outer level leaves the HBSM", r_level_out, NPU_IE_RANGE },
	{ "remote cluster outside partition", r_remote_out, NPU_IE_DEST },
	{ "remote without masks", r_remote_nomask, NPU_IE_DEST },
};

START_TEST(test_illegal_walker)
{
	run_illegal(illegal_walker, sizeof(illegal_walker) / sizeof(illegal_walker[0]), false);
}
END_TEST

static void s_wait32(struct npu_hw_insn *in) { wait_on(in, 1, NPU_HW_SU_COUNTERS, 1, 0); }
static void s_wait_flags(struct npu_hw_insn *in) { wait_on(in, 0, 1, 1, 0); in->sync.wait[0].flags |= 2; }
static void s_wait_res(struct npu_hw_insn *in) { wait_on(in, 0, 1, 1, 0); in->sync.wait[0].reserved = 1; }
static void s_wait_off_counter(struct npu_hw_insn *in) { in->sync.wait[3].counter = 4; }
static void s_wait_off_value(struct npu_hw_insn *in) { in->sync.wait[2].value = 4; }
static void s_sig32(struct npu_hw_insn *in) { signal_to(in, 1, 40, 0, 0, 0); }
static void s_sig_flags(struct npu_hw_insn *in) { signal_to(in, 0, 1, 0x10, 0, 0); }
static void s_sig_res0(struct npu_hw_insn *in) { signal_to(in, 0, 1, 0, 0, 0); in->sync.signal[0].reserved0 = 1; }
static void s_sig_res1(struct npu_hw_insn *in) { signal_to(in, 0, 1, 0, 0, 0); in->sync.signal[0].reserved1 = 1; }
static void s_sig_remote_ccb(struct npu_hw_insn *in) { signal_to(in, 0, 1, NPU_SIGNAL_REMOTE | NPU_SIGNAL_CCB, 1, 1); }
static void s_sig_remote_notpb(struct npu_hw_insn *in) { signal_to(in, 0, 1, NPU_SIGNAL_REMOTE, 1, 0); }
static void s_sig_remote_out(struct npu_hw_insn *in) { signal_to(in, 0, 1, NPU_SIGNAL_REMOTE, 0x2, 1); }
static void s_sig_remote_tpb_out(struct npu_hw_insn *in) { signal_to(in, 0, 1, NPU_SIGNAL_REMOTE, 1, 0x10); }
static void s_sig_local_masks(struct npu_hw_insn *in) { signal_to(in, 0, 1, 0, 0, 1); }
static void s_sig_off_counter(struct npu_hw_insn *in) { in->sync.signal[1].counter = 3; }
static void s_sig_off_flags(struct npu_hw_insn *in) { in->sync.signal[1].flags = NPU_SIGNAL_PER_ITER; }

static const struct illegal_case illegal_sync[] = {
	{ "wait counter 32", s_wait32, NPU_IE_SYNC },
	{ "wait unknown flag", s_wait_flags, NPU_IE_RESERVED },
	{ "wait reserved", s_wait_res, NPU_IE_RESERVED },
	{ "disabled wait with counter", s_wait_off_counter, NPU_IE_RESERVED },
	{ "disabled wait with value", s_wait_off_value, NPU_IE_RESERVED },
	{ "signal counter 40", s_sig32, NPU_IE_SYNC },
	{ "signal unknown flag", s_sig_flags, NPU_IE_RESERVED },
	{ "signal reserved0", s_sig_res0, NPU_IE_RESERVED },
	{ "signal reserved1", s_sig_res1, NPU_IE_RESERVED },
	{ "signal remote and CCB", s_sig_remote_ccb, NPU_IE_SYNC },
	{ "remote signal without TPBs", s_sig_remote_notpb, NPU_IE_SYNC },
	{ "remote signal outside partition", s_sig_remote_out, NPU_IE_SYNC },
	{ "remote signal beyond TPBs", s_sig_remote_tpb_out, NPU_IE_SYNC },
	{ "local signal with masks", s_sig_local_masks, NPU_IE_SYNC },
	{ "disabled signal with counter", s_sig_off_counter, NPU_IE_RESERVED },
	{ "disabled signal with flags", s_sig_off_flags, NPU_IE_RESERVED },
};

START_TEST(test_illegal_sync_fields)
{
	run_illegal(illegal_sync, sizeof(illegal_sync) / sizeof(illegal_sync[0]), false);
}
END_TEST

static void d_cluster(struct npu_hw_insn *in) { in->cluster_mask = 1; }
static void d_tpb(struct npu_hw_insn *in) { in->tpb_mask = 1; }
static void d_engine(struct npu_hw_insn *in) { in->params.dma.engine = NPU_HW_NUM_DMA_ENGINES; }
static void d_params_res(struct npu_hw_insn *in) { in->params.dma.reserved[0] = 1; }
static void d_op(struct npu_hw_insn *in) { in->opcode = 2; }
static void d_src_hbsm(struct npu_hw_insn *in) { SRC(in)->space = NPU_SPACE_HBSM; SRC(in)->base = 0; }
static void d_dst_hbsm(struct npu_hw_insn *in) { DST(in)->space = NPU_SPACE_HBSM; }
static void d_src_remote(struct npu_hw_insn *in) { SRC(in)->base = 0; remote(SRC(in), 1, 1); }
static void d_sram_end(struct npu_hw_insn *in) { DST(in)->base = SRAM_SIZE - 16; }
static void d_va_bits(struct npu_hw_insn *in) { SRC(in)->base = 1ull << NPU_MMU_VA_BITS; }
static void d_va_cross(struct npu_hw_insn *in) { SRC(in)->base = (1ull << NPU_MMU_VA_BITS) - 32; }
static void d_dtype(struct npu_hw_insn *in) { DST(in)->dtype = NPU_DT_INT8; }
static void d_src1(struct npu_hw_insn *in) { dense1(&in->opnd[NPU_OPND_SRC1], NPU_SPACE_SRAM, 0, 64); }
static void d_no_src(struct npu_hw_insn *in) { memset(SRC(in), 0, sizeof(*SRC(in))); }
static void d_remote_nomask(struct npu_hw_insn *in) { remote(DST(in), 1, 0); }

static const struct illegal_case illegal_dma[] = {
	{ "DMA with cluster mask", d_cluster, NPU_IE_DEST },
	{ "DMA with tpb mask", d_tpb, NPU_IE_DEST },
	{ "DMA engine 2", d_engine, NPU_IE_PARAM },
	{ "DMA params reserved", d_params_res, NPU_IE_RESERVED },
	{ "DMA opcode 2", d_op, NPU_IE_OPCODE },
	{ "DMA source in local HBSM", d_src_hbsm, NPU_IE_SPACE },
	{ "DMA destination in local HBSM", d_dst_hbsm, NPU_IE_SPACE },
	{ "DMA source in remote HBSM", d_src_remote, NPU_IE_SPACE },
	{ "DMA past the SRAM window", d_sram_end, NPU_IE_RANGE },
	{ "DMA VA beyond 39 bits", d_va_bits, NPU_IE_RANGE },
	{ "DMA VA crossing 39 bits", d_va_cross, NPU_IE_RANGE },
	{ "DMA converting dtypes", d_dtype, NPU_IE_DTYPE },
	{ "DMA with SRC1", d_src1, NPU_IE_RESERVED },
	{ "DMA without source", d_no_src, NPU_IE_SHAPE },
	{ "DMA remote without TPBs", d_remote_nomask, NPU_IE_DEST },
};

START_TEST(test_illegal_dma)
{
	run_illegal(illegal_dma, sizeof(illegal_dma) / sizeof(illegal_dma[0]), true);
}
END_TEST

static void n_nop(struct npu_hw_insn *in)
{
	memset(in, 0, sizeof(*in));
	in->unit = NPU_UNIT_SYNC;
	in->opcode = NPU_SYNC_NOP;
	in->cluster_mask = 1;
	in->tpb_mask = 1;
}
static void n_nop_id(struct npu_hw_insn *in) { n_nop(in); in->params.sync.barrier_id = 3; }
static void n_nop_opnd(struct npu_hw_insn *in) { n_nop(in); dense1(DST(in), NPU_SPACE_HBSM, 0, 4); }
static void n_nop_repeat(struct npu_hw_insn *in) { n_nop(in); in->repeat_levels = 1; }
static void n_nop_res(struct npu_hw_insn *in) { n_nop(in); in->params.sync.reserved[26] = 1; }
static void n_bar_wait(struct npu_hw_insn *in) { n_nop(in); in->opcode = NPU_SYNC_BARRIER; wait_on(in, 0, 1, 0, 0); }
static void n_bar_signal(struct npu_hw_insn *in) { n_nop(in); in->opcode = NPU_SYNC_BARRIER; signal_to(in, 1, 1, 0, 0, 0); }
static void n_sync_op3(struct npu_hw_insn *in) { n_nop(in); in->opcode = 3; }

static const struct illegal_case illegal_sync_unit[] = {
	{ "NOP with barrier id", n_nop_id, NPU_IE_PARAM },
	{ "NOP with an operand", n_nop_opnd, NPU_IE_RESERVED },
	{ "NOP repeated without operands", n_nop_repeat, NPU_IE_WALKER },
	{ "SYNC params reserved", n_nop_res, NPU_IE_RESERVED },
	{ "BARRIER with a wait", n_bar_wait, NPU_IE_SYNC },
	{ "BARRIER with a signal", n_bar_signal, NPU_IE_SYNC },
	{ "SYNC opcode 3", n_sync_op3, NPU_IE_OPCODE },
};

START_TEST(test_illegal_sync_unit)
{
	run_illegal(illegal_sync_unit,
		    sizeof(illegal_sync_unit) / sizeof(illegal_sync_unit[0]), false);
}
END_TEST

START_TEST(test_illegal_reports_first_bad)
{
	struct npu_tdev *d = small_dev(1, 1, 0);
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;

	npu_tprog_init(&p);
	for (unsigned i = 0; i < 6; i++)
		add_fill(&p, 1, 1, 64 * i, 64, i + 1);
	p.insn[3].opcode = 0x42;
	p.insn[5].unit = 0x42;
	ck_assert_int_eq(run(d, &p, 1, &c), NPU_TASK_ILLEGAL_INSN);
	ck_assert_uint_eq(c.insn_index, 3);
	ck_assert_uint_eq(c.detail, NPU_IE_OPCODE);
	ck_assert(all_bytes(hb(d, 0, 0), 6 * 64, 0));
	/* an error only found while running keeps its instruction index */
	npu_tprog_free(&p);
	npu_tprog_init(&p);
	add_fill(&p, 1, 1, 0, 64, 1);
	in = add_dma(&p, 0, NPU_SPACE_DDR, 0x7000000000ull, NPU_SPACE_SRAM, 0, 64);
	(void)in;
	ck_assert_int_eq(run(d, &p, 1, &c), NPU_TASK_MMU_FAULT);
	ck_assert_uint_eq(c.insn_index, 1);
	ck_assert_uint_eq(c.fault_addr, 0x7000000000ull);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

/* ---- bad descriptors ---- */

struct desc_case {
	const char *what;
	void (*mutate)(struct npu_hw_task *t, struct npu_hw_prog *h);
};

static void t_magic(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->magic ^= 0x100; }
static void t_flags(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->flags |= 2; }
static void t_flags_top(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->flags |= 0x80000000u; }
static void t_pad0(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->pad0 = 1; }
static void t_reserved(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->reserved[5] = 1; }
static void t_ncl0(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->nclusters = 0; }
static void t_ncl_big(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->nclusters = 5; t->cluster_map[2] = 2; t->cluster_map[3] = 3; t->cluster_map[4] = 4; }
static void t_ncl17(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->nclusters = 17; }
static void t_map_dup(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->cluster_map[0] = 1; t->cluster_map[1] = 1; }
static void t_map_range(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->cluster_map[1] = 4; }
static void t_map_tail(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->cluster_map[9] = 3; }
static void t_pt_align(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->pt_base |= 0x800; }
static void t_sram_align(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->sram_base = 0x800; t->sram_size = 0x1000; }
static void t_sram_over(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->sram_base = SRAM_SIZE - 4096; t->sram_size = 8192; }
static void t_sram_past(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->sram_base = SRAM_SIZE + 4096; t->sram_size = 0; }
static void t_sram_size(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->sram_size = SRAM_SIZE + 4096; }
static void t_sram_wrap(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->sram_base = 0x1000; t->sram_size = 0xfffff000u; }
static void t_timeout(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->timeout_cycles = NPU_TASK_MAX_TIMEOUT + 1; }
static void t_prog_size(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->prog_size = sizeof(*h) - 1; }
static void h_magic(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)t; h->magic = NPU_TASK_MAGIC; }
static void h_major2(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)t; h->version_major = NPU_PROG_VERSION_MAJOR + 1; }
static void h_major0(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)t; h->version_major = 0; }
static void h_flags(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)t; h->flags = 1; }
static void h_reserved(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)t; h->reserved[10] = 1; }
static void h_off_small(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)t; h->insn_offset = 0; }
static void h_off_align(struct npu_hw_task *t, struct npu_hw_prog *h) { h->insn_offset = 96; t->prog_size += 32; }
static void h_off_past(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)t; h->insn_offset = 128; }
static void h_count(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)t; h->insn_count++; }
static void h_count_max(struct npu_hw_task *t, struct npu_hw_prog *h) { h->insn_count = NPU_PROG_MAX_INSNS + 1; t->prog_size = 0xffffffffu; }
static void h_size_short(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->prog_size -= 1; }

static const struct desc_case bad_descs[] = {
	{ "task magic", t_magic },
	{ "task flags", t_flags },
	{ "task flags bit 31", t_flags_top },
	{ "pad0", t_pad0 },
	{ "task reserved", t_reserved },
	{ "nclusters 0", t_ncl0 },
	{ "nclusters > clusters", t_ncl_big },
	{ "nclusters 17", t_ncl17 },
	{ "duplicate cluster_map", t_map_dup },
	{ "cluster_map beyond clusters", t_map_range },
	{ "cluster_map entry past nclusters", t_map_tail },
	{ "pt_base unaligned", t_pt_align },
	{ "sram_base unaligned", t_sram_align },
	{ "SRAM window past the end", t_sram_over },
	{ "SRAM window base past the end", t_sram_past },
	{ "SRAM window too big", t_sram_size },
	{ "SRAM window wrapping", t_sram_wrap },
	{ "timeout above max", t_timeout },
	{ "prog_size below a header", t_prog_size },
	{ "program magic", h_magic },
	{ "program major 2", h_major2 },
	{ "program major 0", h_major0 },
	{ "program flags", h_flags },
	{ "program reserved", h_reserved },
	{ "insn_offset inside the header", h_off_small },
	{ "insn_offset not 64-aligned", h_off_align },
	{ "instructions past prog_size (offset)", h_off_past },
	{ "insn_count past prog_size", h_count },
	{ "insn_count above max", h_count_max },
	{ "prog_size one byte short", h_size_short },
};

START_TEST(test_bad_descriptors)
{
	struct npu_tdev *d = small_dev(4, 1, 0);

	for (size_t i = 0; i < sizeof(bad_descs) / sizeof(bad_descs[0]); i++) {
		struct npu_tprog p;
		struct npu_hw_task desc;
		struct npu_hw_completion c;
		struct npu_hw_prog *h;
		int st;

		npu_tprog_init(&p);
		add_fill(&p, 1, 1, 0, 64, 0x21);
		add_fill(&p, 2, 1, 0, 64, 0x22);
		h = prep_desc(d, &p, 2, &desc);
		bad_descs[i].mutate(&desc, h);
		st = npu_tdev_run_desc(d, (unsigned)i % NPU_HW_NUM_QUEUES, &desc, &c);
		ck_assert_msg(st == NPU_TASK_BAD_DESCRIPTOR, "%s: status %d",
			      bad_descs[i].what, st);
		ck_assert_uint_eq(c.seqno, desc.seqno);
		ck_assert_msg(all_bytes(hb(d, 0, 0), 64, 0), "%s: ran", bad_descs[i].what);
		npu_tprog_free(&p);
	}
	npu_tdev_destroy(d);
}
END_TEST

static void ok_minor(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)t; h->version_minor = 0x7777; }
static void ok_bigger(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->prog_size += 1000; }
static void ok_offset(struct npu_hw_task *t, struct npu_hw_prog *h)
{
	uint8_t *b = (uint8_t *)h;

	memmove(b + 128, b + 64, (size_t)h->insn_count * NPU_INSN_SIZE);
	h->insn_offset = 128;
	t->prog_size += 64;
}
static void ok_window(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->sram_base = SRAM_SIZE - 4096; t->sram_size = 4096; }
static void ok_no_irq(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->flags = 0; t->timeout_cycles = NPU_TASK_MAX_TIMEOUT; }
static void ok_empty_window(struct npu_hw_task *t, struct npu_hw_prog *h) { (void)h; t->sram_base = SRAM_SIZE; t->sram_size = 0; }

static const struct desc_case good_descs[] = {
	{ "program minor version", ok_minor },
	{ "prog_size larger than needed", ok_bigger },
	{ "insn_offset 128", ok_offset },
	{ "last SRAM page as window", ok_window },
	{ "no IRQ flag, max timeout", ok_no_irq },
	{ "empty SRAM window at the end", ok_empty_window },
};

START_TEST(test_good_descriptor_variants)
{
	struct npu_tdev *d = small_dev(4, 1, 0);

	for (size_t i = 0; i < sizeof(good_descs) / sizeof(good_descs[0]); i++) {
		struct npu_tprog p;
		struct npu_hw_task desc;
		struct npu_hw_completion c;
		struct npu_hw_prog *h;
		int st;

		memset(hb(d, 1, 0), 0, 64);
		npu_tprog_init(&p);
		add_fill(&p, 1, 1, 0, 64, 0x21);
		add_fill(&p, 2, 1, 0, 64, 0x22 + (unsigned)i);
		h = prep_desc(d, &p, 2, &desc);
		good_descs[i].mutate(&desc, h);
		st = npu_tdev_run_desc(d, 0, &desc, &c);
		ck_assert_msg(st == NPU_TASK_OK, "%s: status %d", good_descs[i].what, st);
		ck_assert_msg(all_bytes(hb(d, 1, 0), 64, (uint8_t)(0x22 + i)),
			      "%s: did not run", good_descs[i].what);
		npu_tprog_free(&p);
	}
	npu_tdev_destroy(d);
}
END_TEST

/* ---- timeouts ---- */

START_TEST(test_timeout_long_program)
{
	struct npu_tdev *d = small_dev(1, 1, 0);
	struct npu_tdev_submit o = { .nclusters = 1, .timeout_cycles = 2000 };
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;

	npu_tprog_init(&p);
	/* 2^24 iterations: hours of emulation without the budget */
	in = add_fill(&p, 1, 1, 0, 1, 1);
	in->repeat_levels = 1;
	npu_twu_level(&in->opnd[NPU_OPND_DST], 1, 0, 0, NPU_TWU_MAX_COUNT);
	ck_assert_int_eq(run_opt(d, &p, &o, &c), NPU_TASK_TIMEOUT);
	ck_assert_uint_gt(c.cycles, 2000);
	ck_assert_uint_lt(c.cycles, 4000);
	ck_assert_uint_eq(c.seqno, d->seqno);
	npu_tprog_free(&p);

	/* many instructions */
	npu_tprog_init(&p);
	for (unsigned i = 0; i < 200; i++)
		add_fill(&p, 1, 1, 0, 4096, i);
	o.timeout_cycles = 1000;
	ck_assert_int_eq(run_opt(d, &p, &o, &c), NPU_TASK_TIMEOUT);
	/* the budget was respected: far fewer than 200 fills ran */
	ck_assert_uint_lt(hb(d, 0, 0)[0], 100);
	/* 0 means the default budget, plenty for this */
	o.timeout_cycles = 0;
	ck_assert_int_eq(run_opt(d, &p, &o, &c), NPU_TASK_OK);
	ck_assert_uint_eq(hb(d, 0, 0)[0], 199);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_timeout_exact_budget)
{
	struct npu_tdev *d = small_dev(1, 1, 0);
	struct npu_tdev_submit o = { .nclusters = 1 };
	struct npu_tprog p;
	struct npu_hw_completion c;
	uint64_t need;

	npu_tprog_init(&p);
	for (unsigned i = 0; i < 5; i++)
		add_fill(&p, 1, 1, 0, 1024, i);
	ck_assert_int_eq(run_opt(d, &p, &o, &c), NPU_TASK_OK);
	need = c.cycles;
	ck_assert_uint_gt(need, 5);
	o.timeout_cycles = need;
	ck_assert_int_eq(run_opt(d, &p, &o, &c), NPU_TASK_OK);
	ck_assert_uint_eq(c.cycles, need);
	o.timeout_cycles = need - 1;
	ck_assert_int_eq(run_opt(d, &p, &o, &c), NPU_TASK_TIMEOUT);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

/* ---- queues ---- */

START_TEST(test_queue_moves_on_after_error)
{
	struct npu_tdev *d = small_dev(1, 1, 0);
	struct npu_tprog good, bad, dead;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	uint32_t st;

	npu_tprog_init(&good);
	npu_tprog_init(&bad);
	npu_tprog_init(&dead);
	add_fill(&good, 1, 1, 0, 64, 0x10);
	add_fill(&bad, 1, 1, 0, 64, 0x20)->reserved[0] = 1;
	in = add_nop(&dead, 1, 1);
	wait_on(in, 0, 0, 1, 0);
	for (unsigned round = 0; round < 3; round++) {
		ck_assert_int_eq(run(d, &bad, 1, &c), NPU_TASK_ILLEGAL_INSN);
		ck_assert_int_eq(run(d, &dead, 1, &c), NPU_TASK_SYNC_DEADLOCK);
		hb(d, 0, 0)[0] = 0;
		ck_assert_int_eq(run(d, &good, 1, &c), NPU_TASK_OK);
		ck_assert_uint_eq(hb(d, 0, 0)[0], 0x10);
	}
	ck_assert_uint_eq(RD(d, NPU_REG_Q(0, NPU_Q_TASKS_LO)), 9);
	ck_assert_uint_eq(RD(d, NPU_REG_Q(0, NPU_Q_DONE_SEQ_LO)), (uint32_t)d->seqno);
	ck_assert_uint_eq(RD(d, NPU_REG_Q(0, NPU_Q_HEAD)), RD(d, NPU_REG_Q(0, NPU_Q_TAIL)));
	st = RD(d, NPU_REG_Q(0, NPU_Q_STATUS));
	ck_assert_uint_eq(NPU_Q_STATE(st), NPU_Q_STATE_IDLE);
	ck_assert_uint_eq(NPU_Q_LAST_STATUS(st), NPU_TASK_OK);
	/* ring wrap-around: more tasks than ring entries */
	for (unsigned i = 0; i < (2u << d->ring_log2); i++)
		ck_assert_int_eq(run(d, &good, 1, &c), NPU_TASK_OK);
	npu_tprog_free(&good);
	npu_tprog_free(&bad);
	npu_tprog_free(&dead);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_four_queues)
{
	struct npu_tdev *d = small_dev(4, 4, 0);
	struct npu_hw_task desc[NPU_HW_NUM_QUEUES];
	struct npu_hw_completion *fence[NPU_HW_NUM_QUEUES];
	struct npu_tprog p[NPU_HW_NUM_QUEUES];

	for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
		npu_tprog_init(&p[q]);
		/* each queue's task fills a TPB of its own cluster */
		add_fill(&p[q], 1, 1u << q, 0x100, 64, 0x30 + q);
		prep_desc(d, &p[q], 1, &desc[q]);
		desc[q].cluster_map[0] = (uint8_t)q;
		fence[q] = npu_tdev_queue(d, q, &desc[q]);
	}
	npu_core_run_pending(d->core);
	for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
		ck_assert_uint_eq(fence[q]->seqno, desc[q].seqno);
		ck_assert_uint_eq(fence[q]->status, NPU_TASK_OK);
		ck_assert_uint_eq(RD(d, NPU_REG_Q(q, NPU_Q_TASKS_LO)), 1);
		ck_assert_uint_eq(RD(d, NPU_REG_Q(q, NPU_Q_DONE_SEQ_LO)),
				  (uint32_t)desc[q].seqno);
		for (unsigned cl = 0; cl < 4; cl++)
			ck_assert(all_bytes(hb(d, cl, q) + 0x100, 64,
					    cl == q ? 0x30 + q : 0));
		npu_tprog_free(&p[q]);
	}
	ck_assert_uint_eq(RD(d, NPU_REG_IRQ_RAW) & NPU_IRQ_QUEUE_ALL, NPU_IRQ_QUEUE_ALL);
	npu_tdev_destroy(d);
}
END_TEST

/* ---- determinism ---- */

/*
 * Four clusters of four TPBs: the round of local copies touches 16 x 2 x
 * 16 Ki elements, twice what the task engine needs to hand a round to its
 * thread pool (PARALLEL_ROUND_WORK in npu_rounds.c) when it has one.
 */
#define MIXED_CLUSTERS 4
#define MIXED_CMASK ((1u << MIXED_CLUSTERS) - 1)

static void build_mixed(struct npu_tprog *p)
{
	struct npu_hw_insn *in;

	npu_tprog_init(p);
	/* DDR -> every TPB of both clusters, then each TPB copies locally */
	in = add_dma(p, 0, NPU_SPACE_DDR, DDR_VA, NPU_SPACE_HBSM_REMOTE, 0, 16384);
	remote(&in->opnd[NPU_OPND_DST], MIXED_CMASK, 0xf);
	signal_to(in, 0, 0, NPU_SIGNAL_REMOTE, MIXED_CMASK, 0xf);
	in = add_copy(p, MIXED_CMASK, 0xf, 0, 0x4000, 16384);
	wait_on(in, 0, 0, 1, 0);
	signal_to(in, 0, 1, NPU_SIGNAL_CCB, 0, 0);
	in = add_fill(p, MIXED_CMASK, 0xf, 0x8000, 8192, 0x3c);
	in = add_dma(p, 1, NPU_SPACE_DDR, DDR_VA, NPU_SPACE_SRAM, 0, 4096);
	wait_on(in, 0, 1, 4 * MIXED_CLUSTERS, 0);
	in = add_copy(p, 0x3, 0x5, 0x100, 0xc000, 64);
	in->repeat_levels = 1;
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 1, 0, 64, 64 * 15);
	npu_twu_level(&in->opnd[NPU_OPND_DST], 1, 0, 64, 64 * 15);
}

static uint64_t run_mixed(struct npu_tdev *d, struct npu_tprog *p)
{
	struct npu_tdev_submit o = { .nclusters = MIXED_CLUSTERS };
	struct npu_hw_completion c;
	uint8_t *src;

	o.root = npu_tdev_ctx(d);
	src = npu_tdev_buf(d, o.root, DDR_VA, 16384, false);
	pattern(src, 16384, 77);
	ck_assert_int_eq(run_opt(d, p, &o, &c), NPU_TASK_OK);
	for (unsigned cl = 0; cl < MIXED_CLUSTERS; cl++)
		for (unsigned t = 0; t < 4; t++)
			ck_assert_mem_eq(hb(d, cl, t) + 0x4000, src, 16384);
	ck_assert_mem_eq(npu_core_debug_sram(d->core, NULL), src, 4096);
	ck_assert_uint_gt(c.cycles, 0);
	return c.cycles;
}

START_TEST(test_timing_determinism)
{
	struct npu_tdev *d1 = dev_threads(MIXED_CLUSTERS, 4, 0, 1);
	struct npu_tdev *d4 = dev_threads(MIXED_CLUSTERS, 4, 0, 4);
	struct npu_tprog p;
	uint64_t a, b, e;

	build_mixed(&p);
	a = run_mixed(d1, &p);
	b = run_mixed(d1, &p);
	e = run_mixed(d4, &p);
	ck_assert_uint_eq(a, b);
	ck_assert_uint_eq(a, e);
	ck_assert_mem_eq(hb(d1, 1, 3), hb(d4, 1, 3), HBSM_SIZE);
	ck_assert_uint_eq(RD(d1, NPU_REG_PERF_CYCLES), 2 * a);
	ck_assert_uint_eq(RD(d4, NPU_REG_PERF_CYCLES), a);
	npu_tprog_free(&p);
	npu_tdev_destroy(d1);
	npu_tdev_destroy(d4);
}
END_TEST

/* ---- DMA and SRAM windows ---- */

START_TEST(test_dma_broadcast_to_tpbs)
{
	struct npu_tdev *d = small_dev(3, 4, 0);
	struct npu_tdev_submit o = { .nclusters = 2 };
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	uint8_t *src;

	o.root = npu_tdev_ctx(d);
	src = npu_tdev_buf(d, o.root, DDR_VA, 8192, false);
	pattern(src, 8192, 5);
	npu_tprog_init(&p);
	/* 512 bytes crossing a page: DDR_VA + 0xf00 */
	in = add_dma(&p, 0, NPU_SPACE_DDR, DDR_VA + 0xf00, NPU_SPACE_HBSM_REMOTE, 0x400, 512);
	remote(&in->opnd[NPU_OPND_DST], 0x3, 0x5);
	ck_assert_int_eq(run_opt(d, &p, &o, &c), NPU_TASK_OK);
	for (unsigned cl = 0; cl < 3; cl++) {
		for (unsigned t = 0; t < 4; t++) {
			if (cl < 2 && (t == 0 || t == 2))
				ck_assert_mem_eq(hb(d, cl, t) + 0x400, src + 0xf00, 512);
			else
				ck_assert(all_bytes(hb(d, cl, t) + 0x400, 512, 0));
		}
	}
	ck_assert_uint_eq(RD(d, NPU_REG_PERF_DMA_BYTES(0)), 512);
	/* The DMA's DDR reads ran inside the host's mem_begin/mem_end
	 * bracket of their iteration, balanced and never nested. */
	ck_assert_uint_gt(d->mem_begins, 0);
	ck_assert_uint_eq(d->mem_begins, d->mem_ends);
	ck_assert_uint_gt(d->mem_bracketed, 0);
	ck_assert_uint_eq(d->mem_misnested, 0);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

/*
 * A broadcast DMA writes each TPB's copy the way the first TPB's was
 * written, or copies the first TPB's block when the destination is one:
 * every masked TPB must end up with the same tile, and a destination with
 * gaps must keep each TPB's own bytes in them.  Four shapes: rows of a
 * strided DDR tile into a dense tile, the tile transposed into a dense
 * one, rows into rows with gaps, and one dense run.
 */
START_TEST(test_dma_broadcast_shapes)
{
	enum { R = 24, C = 40, PITCH = 256 };	/* a 24 x 40 tile of a 256-wide matrix */
	struct npu_tdev *d = small_dev(3, 4, 0);
	unsigned maps;
	struct npu_tdev_submit o = { .nclusters = 3 };
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	uint8_t *src;

	/* In place (the copy of view to view) and through mem_read. */
	d->map_ddr = _i;
	o.root = npu_tdev_ctx(d);
	src = npu_tdev_buf(d, o.root, DDR_VA, R * PITCH, false);
	pattern(src, R * PITCH, 11);
	for (unsigned cl = 0; cl < 3; cl++)
		for (unsigned t = 0; t < 4; t++)
			pattern(hb(d, cl, t), HBSM_SIZE, 100 + cl * 4 + t);
	npu_tprog_init(&p);
	/* rows: dense R x C at 0x1000 */
	in = add_dma(&p, 0, NPU_SPACE_DDR, DDR_VA + 8, NPU_SPACE_HBSM_REMOTE, 0x1000, C);
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 1, 0, PITCH, (R - 1) * PITCH);
	npu_twu_level(&in->opnd[NPU_OPND_DST], 1, 0, C, (R - 1) * C);
	remote(&in->opnd[NPU_OPND_DST], 0x7, 0xf);
	/* transposed: element (r, c) to c * R + r at 0x3000 */
	in = add_dma(&p, 1, NPU_SPACE_DDR, DDR_VA + 8, NPU_SPACE_HBSM_REMOTE, 0x3000, C);
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 1, 0, PITCH, (R - 1) * PITCH);
	npu_twu_level(&in->opnd[NPU_OPND_DST], 0, 0, R, (C - 1) * R);
	npu_twu_level(&in->opnd[NPU_OPND_DST], 1, 0, 1, R - 1);
	remote(&in->opnd[NPU_OPND_DST], 0x5, 0xb);
	/* rows with 24-byte gaps at 0x5000 (row pitch 64) */
	in = add_dma(&p, 0, NPU_SPACE_DDR, DDR_VA + 8, NPU_SPACE_HBSM_REMOTE, 0x5000, C);
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 1, 0, PITCH, (R - 1) * PITCH);
	npu_twu_level(&in->opnd[NPU_OPND_DST], 1, 0, 64, (R - 1) * 64);
	remote(&in->opnd[NPU_OPND_DST], 0x3, 0x6);
	/* one dense run (a row of one) at 0x7000 */
	in = add_dma(&p, 1, NPU_SPACE_DDR, DDR_VA + 8 + PITCH, NPU_SPACE_HBSM_REMOTE, 0x7000, 100);
	remote(&in->opnd[NPU_OPND_DST], 0x6, 0x9);
	maps = d->mem_maps;
	ck_assert_int_eq(run_opt(d, &p, &o, &c), NPU_TASK_OK);
	ck_assert(_i ? d->mem_maps > maps : d->mem_maps == maps);
	for (unsigned cl = 0; cl < 3; cl++) {
		for (unsigned t = 0; t < 4; t++) {
			uint8_t *h = hb(d, cl, t), before[HBSM_SIZE];
			bool tr = (0x5 >> cl & 1) && (0xb >> t & 1);
			bool gaps = (0x3 >> cl & 1) && (0x6 >> t & 1);

			pattern(before, HBSM_SIZE, 100 + cl * 4 + t);
			for (unsigned r = 0; r < R; r++) {
				for (unsigned x = 0; x < C; x++) {
					uint8_t v = src[8 + r * PITCH + x];

					ck_assert_uint_eq(h[0x1000 + r * C + x], v);
					ck_assert_uint_eq(h[0x3000 + x * R + r], tr ? v : before[0x3000 + x * R + r]);
					ck_assert_uint_eq(h[0x5000 + r * 64 + x],
							  gaps ? v : before[0x5000 + r * 64 + x]);
				}
				/* each TPB's own bytes between the rows */
				ck_assert_mem_eq(h + 0x5000 + r * 64 + C, before + 0x5000 + r * 64 + C,
						 64 - C);
			}
			if ((0x6 >> cl & 1) && (0x9 >> t & 1))
				ck_assert_mem_eq(h + 0x7000, src + 8 + PITCH, 100);
			else
				ck_assert_mem_eq(h + 0x7000, before + 0x7000, 100);
			ck_assert_mem_eq(h + 0x7000 + 100, before + 0x7000 + 100, 64);
			ck_assert_mem_eq(h + 0x1000 + R * C, before + 0x1000 + R * C, 64);
			ck_assert_mem_eq(h + 0x3000 + R * C, before + 0x3000 + R * C, 64);
		}
	}
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

/*
 * DMAs of one run or one element (a decode step's usual ones) take a
 * copy per destination: to remote TPBs, SRAM and DDR, in place and
 * through mem_read/mem_write, with the bytes counted as a load and a
 * store per destination, and a DDR destination that is not mapped still
 * faulting on its address.
 */
START_TEST(test_dma_runs)
{
	struct npu_tdev *d = small_dev(2, 4, 0);
	struct npu_tdev_submit o = { .nclusters = 2, .sram_base = 0x10000,
				     .sram_size = 0x4000 };
	uint8_t *src, *dst, *sram = npu_core_debug_sram(d->core, NULL) + 0x10000;
	struct npu_hw_completion c;
	struct npu_hw_insn *in;
	struct npu_tprog p;

	d->map_ddr = _i;
	o.root = npu_tdev_ctx(d);
	src = npu_tdev_buf(d, o.root, DDR_VA, 4096, false);
	dst = npu_tdev_buf(d, o.root, DDR_VA + 0x100000, 4096, true);
	pattern(src, 4096, 23);
	npu_tprog_init(&p);
	/* one element to two TPBs of cluster 1 */
	in = add_dma(&p, 1, NPU_SPACE_DDR, DDR_VA + 3, NPU_SPACE_HBSM_REMOTE, 0x100, 1);
	remote(&in->opnd[NPU_OPND_DST], 0x2, 0x9);
	/* engine 0, in order: five elements to SRAM, back to DDR, one more */
	add_dma(&p, 0, NPU_SPACE_DDR, DDR_VA + 17, NPU_SPACE_SRAM, 0x40, 5);
	add_dma(&p, 0, NPU_SPACE_SRAM, 0x40, NPU_SPACE_DDR, DDR_VA + 0x100000 + 7, 5);
	add_dma(&p, 0, NPU_SPACE_SRAM, 0x44, NPU_SPACE_DDR, DDR_VA + 0x100000 + 100, 1);
	ck_assert_int_eq(run_opt(d, &p, &o, &c), NPU_TASK_OK);
	for (unsigned cl = 0; cl < 2; cl++)
		for (unsigned t = 0; t < 4; t++)
			ck_assert_uint_eq(hb(d, cl, t)[0x100],
					  cl == 1 && (t == 0 || t == 3) ? src[3] : 0);
	ck_assert_mem_eq(sram + 0x40, src + 17, 5);
	ck_assert(all_bytes(dst, 7, 0));
	ck_assert_mem_eq(dst + 7, src + 17, 5);
	ck_assert(all_bytes(dst + 12, 88, 0));
	ck_assert_uint_eq(dst[100], src[21]);
	ck_assert(all_bytes(dst + 101, 64, 0));
	/* read once, written once per destination */
	ck_assert_uint_eq(RD(d, NPU_REG_PERF_LOAD_BYTES), 1 + 5 + 5 + 1);
	ck_assert_uint_eq(RD(d, NPU_REG_PERF_STORE_BYTES), 2 + 5 + 5 + 1);
	ck_assert_uint_eq(RD(d, NPU_REG_PERF_DMA_BYTES(0)), 11);
	ck_assert_uint_eq(RD(d, NPU_REG_PERF_DMA_BYTES(1)), 1);
	npu_tprog_free(&p);
	/* an element to DDR nothing maps */
	npu_tprog_init(&p);
	add_dma(&p, 0, NPU_SPACE_SRAM, 0x40, NPU_SPACE_DDR, 0x7000000010ull, 1);
	ck_assert_int_eq(run_opt(d, &p, &o, &c), NPU_TASK_MMU_FAULT);
	ck_assert_uint_eq(c.fault_addr, 0x7000000010ull);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_dma_sram_roundtrip)
{
	struct npu_tdev *d = small_dev(1, 1, 0);
	struct npu_tdev_submit o = { .nclusters = 1, .sram_base = 0x10000,
				     .sram_size = 0x4000 };
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	uint8_t *src, *dst, *sram = npu_core_debug_sram(d->core, NULL);

	o.root = npu_tdev_ctx(d);
	src = npu_tdev_buf(d, o.root, DDR_VA, 4096, false);
	dst = npu_tdev_buf(d, o.root, DDR_VA + 0x100000, 4096, true);
	pattern(src, 4096, 99);
	npu_tprog_init(&p);
	/* engine 0: DDR -> SRAM (strided gather of 16 rows of 64 bytes) */
	in = add_dma(&p, 0, NPU_SPACE_DDR, DDR_VA, NPU_SPACE_SRAM, 0x800, 64);
	npu_twu_level(&in->opnd[NPU_OPND_SRC0], 1, 0, 256, 256 * 15);
	npu_twu_level(&in->opnd[NPU_OPND_DST], 1, 0, 64, 64 * 15);
	signal_to(in, 0, 4, NPU_SIGNAL_CCB, 0, 0);
	/* engine 1: SRAM -> DDR, once engine 0 is done */
	in = add_dma(&p, 1, NPU_SPACE_SRAM, 0x800, NPU_SPACE_DDR, DDR_VA + 0x100000, 1024);
	wait_on(in, 0, 4, 1, 0);
	/* engine 1: SRAM -> SRAM, overlapping (memmove semantics) */
	in = add_dma(&p, 1, NPU_SPACE_SRAM, 0x800, NPU_SPACE_SRAM, 0x810, 256);
	ck_assert_int_eq(run_opt(d, &p, &o, &c), NPU_TASK_OK);
	for (unsigned r = 0; r < 16; r++)
		ck_assert_mem_eq(dst + 64 * r, src + 256 * r, 64);
	ck_assert(all_bytes(dst + 1024, 16, 0));
	/* the window starts at sram_base */
	ck_assert_mem_eq(sram + 0x10000 + 0x800, src, 16);
	ck_assert_mem_eq(sram + 0x10000 + 0x810, dst, 256);
	ck_assert(all_bytes(sram + 0x800, 0x1000, 0));
	ck_assert_uint_eq(RD(d, NPU_REG_PERF_DMA_BYTES(0)), 1024);
	ck_assert_uint_eq(RD(d, NPU_REG_PERF_DMA_BYTES(1)), 1024 + 256);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_sram_window_isolation)
{
	struct npu_tdev *d = small_dev(1, 1, 0);
	struct npu_tdev_submit o = { .nclusters = 1, .sram_base = 0x10000,
				     .sram_size = 0x1000 };
	struct npu_tprog p;
	struct npu_hw_completion c;
	uint8_t *src, *out, *sram = npu_core_debug_sram(d->core, NULL);

	o.root = npu_tdev_ctx(d);
	src = npu_tdev_buf(d, o.root, DDR_VA, 8192, false);
	out = npu_tdev_buf(d, o.root, DDR_VA + 0x10000, 4096, true);
	pattern(src, 8192, 17);
	/* beyond the window: refused before running */
	npu_tprog_init(&p);
	add_dma(&p, 0, NPU_SPACE_DDR, DDR_VA, NPU_SPACE_SRAM, 0x800, 0x1000);
	ck_assert_int_eq(run_opt(d, &p, &o, &c), NPU_TASK_ILLEGAL_INSN);
	ck_assert_uint_eq(c.insn_index, 0);
	ck_assert_uint_eq(c.detail, NPU_IE_RANGE);
	ck_assert(all_bytes(sram + 0x10000, 0x2000, 0));
	npu_tprog_free(&p);
	/* inside the window */
	npu_tprog_init(&p);
	add_dma(&p, 0, NPU_SPACE_DDR, DDR_VA, NPU_SPACE_SRAM, 0x800, 0x800);
	ck_assert_int_eq(run_opt(d, &p, &o, &c), NPU_TASK_OK);
	ck_assert_mem_eq(sram + 0x10800, src, 0x800);
	ck_assert(all_bytes(sram + 0x800, 0x800, 0));
	ck_assert(all_bytes(sram + 0x11000, 0x800, 0));
	npu_tprog_free(&p);
	/* another window cannot see it: the same offsets read its own SRAM */
	npu_tprog_init(&p);
	add_dma(&p, 0, NPU_SPACE_SRAM, 0x800, NPU_SPACE_DDR, DDR_VA + 0x10000, 0x800);
	o.sram_base = 0x20000;
	ck_assert_int_eq(run_opt(d, &p, &o, &c), NPU_TASK_OK);
	ck_assert(all_bytes(out, 0x800, 0));
	/* and the first window reads back what it wrote */
	o.sram_base = 0x10000;
	ck_assert_int_eq(run_opt(d, &p, &o, &c), NPU_TASK_OK);
	ck_assert_mem_eq(out, src, 0x800);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_gsdu_hbsm_to_ddr)
{
	struct npu_tdev *d = small_dev(1, 2, 0);
	struct npu_tdev_submit o = { .nclusters = 1 };
	struct npu_hw_gsdu_desc g = { 0 };
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	uint8_t *h = hb(d, 0, 1), *out;

	/* _i 1: DDR written in place (npu_tdev.map_ddr), the same outcome */
	d->map_ddr = _i;

	o.root = npu_tdev_ctx(d);
	out = npu_tdev_buf(d, o.root, DDR_VA, 4096, true);
	pattern(h + 0x100, 256, 61);
	g.src_space = NPU_SPACE_HBSM;
	g.dst_space = NPU_SPACE_DDR;
	g.row_bytes = 32;
	g.src = 0x100;
	g.dst = DDR_VA + 0x40;
	g.rows = 4;
	g.src_stride = 64;
	g.dst_stride = 32;
	memcpy(h + 0x8000, &g, sizeof(g));
	npu_tprog_init(&p);
	in = npu_tprog_add(&p, NPU_UNIT_CSU, NPU_CSU_GSDU, 1, 0x2);
	in->params.csu.chain_space = NPU_SPACE_HBSM;
	in->params.csu.chain_addr = 0x8000;
	ck_assert_int_eq(run_opt(d, &p, &o, &c), NPU_TASK_OK);
	for (unsigned r = 0; r < 4; r++)
		ck_assert_mem_eq(out + 0x40 + 32 * r, h + 0x100 + 64 * r, 32);
	ck_assert(all_bytes(out, 0x40, 0));
	ck_assert(all_bytes(out + 0xc0, 64, 0));
	ck_assert_uint_eq(RD(d, NPU_REG_PERF_GSDU_BYTES), 128);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

/* An on-chip source running off the HBSM mid-chain: the rows before it
 * reached DDR, the fault names the first byte of the bad row. */
START_TEST(test_gsdu_hbsm_to_ddr_range_fault)
{
	struct npu_tdev *d = small_dev(1, 2, 0);
	struct npu_tdev_submit o = { .nclusters = 1 };
	struct npu_hw_gsdu_desc g = { 0 };
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	size_t size = 0;
	uint8_t *h = npu_core_debug_hbsm(d->core, 0, 1, &size), *out;

	/* _i 1: DDR written in place (npu_tdev.map_ddr), the same outcome */
	d->map_ddr = _i;

	ck_assert_ptr_nonnull(h);
	o.root = npu_tdev_ctx(d);
	out = npu_tdev_buf(d, o.root, DDR_VA, 4096, true);
	pattern(h + size - 48, 48, 17);
	g.src_space = NPU_SPACE_HBSM;
	g.dst_space = NPU_SPACE_DDR;
	g.row_bytes = 32;
	g.src = size - 48;
	g.dst = DDR_VA;
	g.rows = 2;
	g.src_stride = 32;
	g.dst_stride = 64;
	memcpy(h + 0x8000, &g, sizeof(g));
	npu_tprog_init(&p);
	in = npu_tprog_add(&p, NPU_UNIT_CSU, NPU_CSU_GSDU, 1, 0x2);
	in->params.csu.chain_space = NPU_SPACE_HBSM;
	in->params.csu.chain_addr = 0x8000;
	ck_assert_int_eq(run_opt(d, &p, &o, &c), NPU_TASK_ILLEGAL_INSN);
	ck_assert_uint_eq(c.detail, NPU_IE_RANGE);
	ck_assert_uint_eq(c.fault_addr, size - 16);
	ck_assert_mem_eq(out, h + size - 48, 32);
	ck_assert(all_bytes(out + 32, 4096 - 32, 0));
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_copy_dtype_convert_and_fill_widths)
{
	struct npu_tdev *d = small_dev(1, 1, 0);
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	uint8_t *h = hb(d, 0, 0);
	int8_t src[8] = { -128, -3, -1, 0, 1, 2, 100, 127 };
	float f[8];
	uint32_t u[4];
	uint16_t s[4];
	uint32_t dims[1] = { 8 };

	memcpy(h, src, 8);
	npu_tprog_init(&p);
	in = npu_tprog_add(&p, NPU_UNIT_DTDU, NPU_DTDU_COPY, 1, 1);
	npu_twu_dense(&in->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, NPU_DT_INT8, 0, 1, dims);
	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_FP32, 0x100, 1, dims);
	dims[0] = 4;
	in = npu_tprog_add(&p, NPU_UNIT_DTDU, NPU_DTDU_FILL, 1, 1);
	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_FP32, 0x200, 1, dims);
	in->params.dtdu.value = npu_f32_bits(1.5f);
	in = npu_tprog_add(&p, NPU_UNIT_DTDU, NPU_DTDU_FILL, 1, 1);
	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_BF16, 0x300, 1, dims);
	in->params.dtdu.value = 0xabcd3fc0u;	/* low 16 bits used */
	ck_ok(d, &p, 1, &c);
	memcpy(f, h + 0x100, sizeof(f));
	for (unsigned i = 0; i < 8; i++)
		ck_assert_float_eq(f[i], (float)src[i]);
	memcpy(u, h + 0x200, sizeof(u));
	for (unsigned i = 0; i < 4; i++)
		ck_assert_uint_eq(u[i], npu_f32_bits(1.5f));
	memcpy(s, h + 0x300, sizeof(s));
	for (unsigned i = 0; i < 4; i++)
		ck_assert_uint_eq(s[i], 0x3fc0);
	ck_assert_uint_eq(h[0x308], 0);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

static Suite *core_exec_suite(void)
{
	Suite *s = suite_create("core_exec");
	TCase *w = tcase_create("walkers");
	TCase *sy = tcase_create("sync");
	TCase *v = tcase_create("validation");
	TCase *q = tcase_create("queues");
	TCase *m = tcase_create("memories");

	tcase_add_test(w, test_copy_plain);
	tcase_add_test(w, test_completion_fields);
	tcase_add_test(w, test_copy_strided);
	tcase_add_test(w, test_copy_negative_step);
	tcase_add_test(w, test_copy_broadcast_level);
	tcase_add_test(w, test_copy_double_buffer_levels);
	tcase_add_test(w, test_copy_dtype_convert_and_fill_widths);
	tcase_add_test(sy, test_double_buffer_pipeline);
	tcase_add_test(sy, test_repeat_per_iteration_sync);
	tcase_add_test(sy, test_repeat_copy_then_nop_signals);
	tcase_add_test(sy, test_sync_within_tpb);
	tcase_add_test(sy, test_sync_across_tpbs);
	tcase_add_test(sy, test_sync_across_clusters);
	tcase_add_test(sy, test_broadcast_insn_masks);
	tcase_add_test(sy, test_barrier_across_tpbs);
	tcase_add_test(sy, test_deadlock_unsignalled);
	tcase_add_test(sy, test_deadlock_iteration_value);
	tcase_add_test(sy, test_deadlock_cyclic);
	tcase_add_test(sy, test_deadlock_dma_ccb);
	tcase_add_test(sy, test_deadlock_barrier);
	tcase_add_test(v, test_defective_cluster_map);
	tcase_add_test(v, test_defective_logical_cluster);
	tcase_add_test(v, test_illegal_unit_opcode_reserved);
	tcase_add_test(v, test_illegal_walker);
	tcase_add_test(v, test_illegal_sync_fields);
	tcase_add_test(v, test_illegal_dma);
	tcase_add_test(v, test_illegal_sync_unit);
	tcase_add_test(v, test_illegal_reports_first_bad);
	tcase_add_test(v, test_bad_descriptors);
	tcase_add_test(v, test_good_descriptor_variants);
	tcase_add_test(q, test_timeout_long_program);
	tcase_add_test(q, test_timeout_exact_budget);
	tcase_add_test(q, test_queue_moves_on_after_error);
	tcase_add_test(q, test_four_queues);
	tcase_add_test(q, test_timing_determinism);
	tcase_add_test(m, test_dma_broadcast_to_tpbs);
	tcase_add_loop_test(m, test_dma_broadcast_shapes, 0, 2);
	tcase_add_loop_test(m, test_dma_runs, 0, 2);
	tcase_add_test(m, test_dma_sram_roundtrip);
	tcase_add_test(m, test_sram_window_isolation);
	tcase_add_loop_test(m, test_gsdu_hbsm_to_ddr, 0, 2);
	tcase_add_loop_test(m, test_gsdu_hbsm_to_ddr_range_fault, 0, 2);
	suite_add_tcase(s, w);
	suite_add_tcase(s, sy);
	suite_add_tcase(s, v);
	suite_add_tcase(s, q);
	suite_add_tcase(s, m);
	return s;
}

NPU_TEST_SUITE(core_exec_suite)
