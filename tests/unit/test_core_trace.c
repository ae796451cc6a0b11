// SPDX-License-Identifier: MIT
/*
 * The task engine's tracer hook (npu_trace.h): the spans and link
 * bookings it hands over add up to the performance counters, never
 * overlap on a unit, end where the task ends, come in the same order
 * whatever the thread count, and change no cycle.  A DMA from DDR to
 * every TPB of two clusters, copies and fills there, a DMA to SRAM.
 */
#include <stdlib.h>
#include <string.h>

#include "npu_tdev.h"
#include "npu_test.h"

#define RD(d, off) npu_core_mmio_read((d)->core, (off))
#define DDR_VA 0x20000000ull
#define CLUSTERS 2
#define MAX_REC 4096

struct rec {
	struct npu_tracer ops;
	struct npu_trace_span span[MAX_REC];
	size_t nspans;
	uint64_t link_bytes[NPU_HW_MAX_LINKS];
	size_t nlinks;
};

static void on_span(struct npu_tracer *t, const struct npu_trace_span *s)
{
	struct rec *r = (struct rec *)t;

	ck_assert_uint_lt(r->nspans, MAX_REC);
	r->span[r->nspans++] = *s;
}

static void on_link(struct npu_tracer *t, unsigned link, uint64_t start, uint64_t len,
		    uint64_t bytes)
{
	struct rec *r = (struct rec *)t;

	(void)start;
	ck_assert_uint_gt(len, 0);
	ck_assert_uint_lt(link, NPU_HW_MAX_LINKS);
	r->link_bytes[link] += bytes;
	r->nlinks++;
}

static struct npu_tdev *dev(unsigned threads)
{
	struct npu_core_config cfg;
	struct npu_tdev *d;

	npu_core_config_default(&cfg);
	cfg.clusters = 4;
	cfg.tpbs_per_cluster = 2;
	cfg.mesh_x = 3;
	cfg.mesh_y = 2;
	cfg.hbsm_size = 64u << 10;
	cfg.sram_size = 1u << 20;
	cfg.threads = threads;
	d = npu_tdev_create(&cfg, 64);
	ck_assert_ptr_nonnull(d);
	return d;
}

static void dense(struct npu_hw_twu *t, unsigned space, uint64_t base, uint32_t n)
{
	uint32_t dims[1] = { n };

	npu_twu_dense(t, space, NPU_DT_UINT8, base, 1, dims);
}

static void build(struct npu_tprog *p)
{
	unsigned cm = (1u << CLUSTERS) - 1;
	struct npu_hw_insn *in;

	npu_tprog_init(p);
	in = npu_tprog_add(p, NPU_UNIT_DMA, NPU_DMA_COPY, 0, 0);
	dense(&in->opnd[NPU_OPND_SRC0], NPU_SPACE_DDR, DDR_VA, 8192);
	dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM_REMOTE, 0, 8192);
	in->opnd[NPU_OPND_DST].cluster_mask = (uint16_t)cm;
	in->opnd[NPU_OPND_DST].tpb_mask = 0x3;
	in->sync.signal[0] = (struct npu_hw_sync_signal){
		.counter = 0, .flags = NPU_SIGNAL_ENABLE | NPU_SIGNAL_REMOTE,
		.cluster_mask = (uint16_t)cm, .tpb_mask = 0x3,
	};
	in = npu_tprog_add(p, NPU_UNIT_DTDU, NPU_DTDU_COPY, cm, 0x3);
	dense(&in->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, 0, 8192);
	dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, 0x4000, 8192);
	in->sync.wait[0] = (struct npu_hw_sync_wait){
		.counter = 0, .flags = NPU_WAIT_ENABLE, .value = 1,
	};
	in = npu_tprog_add(p, NPU_UNIT_DTDU, NPU_DTDU_FILL, cm, 0x3);
	dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, 0x8000, 4096);
	in->params.dtdu.value = 7;
	/* Cluster 0, TPB 0 to cluster 1's TPB 0 over the mesh. */
	in = npu_tprog_add(p, NPU_UNIT_DTDU, NPU_DTDU_COPY, 0x1, 0x1);
	dense(&in->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, 0, 1024);
	dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM_REMOTE, 0xc000, 1024);
	in->opnd[NPU_OPND_DST].cluster_mask = 0x2;
	in->opnd[NPU_OPND_DST].tpb_mask = 0x1;
	in = npu_tprog_add(p, NPU_UNIT_DMA, NPU_DMA_COPY, 0, 0);
	in->params.dma.engine = 1;
	dense(&in->opnd[NPU_OPND_SRC0], NPU_SPACE_DDR, DDR_VA, 4096);
	dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_SRAM, 0, 4096);
}

/* Run the program on @d (@r NULL: untraced); its cycles. */
static uint64_t run(struct npu_tdev *d, const struct npu_tprog *p, struct rec *r)
{
	struct npu_tdev_submit o = { .nclusters = CLUSTERS };
	struct npu_hw_completion c;
	uint8_t *src;

	if (r) {
		memset(r, 0, sizeof(*r));
		r->ops.span = on_span;
		r->ops.link = on_link;
	}
	d->tracer = r ? &r->ops : NULL;
	o.root = npu_tdev_ctx(d);
	src = npu_tdev_buf(d, o.root, DDR_VA, 8192, false);
	for (unsigned i = 0; i < 8192; i++)
		src[i] = (uint8_t)(i * 13 + 1);
	ck_assert_int_eq(npu_tdev_run(d, p, &o, &c), NPU_TASK_OK);
	d->tracer = NULL;
	return c.cycles;
}

START_TEST(test_trace_adds_up_to_the_counters)
{
	struct npu_tdev *d = dev(1);
	struct rec *r = calloc(1, sizeof(*r));
	uint64_t busy[NPU_HW_MAX_CLUSTERS][NPU_PERF_UNITS] = { { 0 } };
	uint64_t dma[NPU_HW_NUM_DMA_ENGINES] = { 0 }, end = 0, cycles;
	struct npu_tprog p;

	ck_assert_ptr_nonnull(r);
	build(&p);
	cycles = run(d, &p, r);
	/* DMA x2, COPY and FILL on every TPB of both clusters, the remote COPY. */
	ck_assert_uint_eq(r->nspans, 2 + 2 * CLUSTERS * 2 + 1);
	ck_assert_uint_gt(r->nlinks, 0);
	for (size_t i = 0; i < r->nspans; i++) {
		const struct npu_trace_span *s = &r->span[i];

		ck_assert_uint_gt(s->dur, 0);
		if (s->start + s->dur > end)
			end = s->start + s->dur;
		if (s->unit == NPU_UNIT_DMA) {
			ck_assert_uint_eq(s->pcluster, NPU_TRACE_CCB);
			dma[s->tpb] += s->dma_bytes;
		} else {
			ck_assert_uint_lt(s->pcluster, CLUSTERS);
			busy[s->pcluster][s->unit] += s->dur;
		}
		/* In order per unit: the next span on it starts after this one. */
		for (size_t j = i + 1; j < r->nspans; j++)
			if (r->span[j].unit == s->unit && r->span[j].pcluster == s->pcluster &&
			    r->span[j].tpb == s->tpb)
				ck_assert_uint_ge(r->span[j].start, s->start + s->dur);
	}
	ck_assert_uint_eq(end, cycles);
	for (unsigned c = 0; c < 4; c++)
		for (unsigned u = 0; u < NPU_PERF_UNITS; u++)
			ck_assert_uint_eq(busy[c][u], RD(d, NPU_REG_PERF_UNIT_BUSY(c, u)));
	ck_assert_uint_gt(busy[0][NPU_UNIT_DTDU], 0);
	for (unsigned e = 0; e < NPU_HW_NUM_DMA_ENGINES; e++)
		ck_assert_uint_eq(dma[e], RD(d, NPU_REG_PERF_DMA_BYTES(e)));
	ck_assert_uint_eq(dma[1], 4096);
	for (unsigned l = 0; l < NPU_HW_MAX_LINKS; l++)
		ck_assert_uint_eq(r->link_bytes[l], RD(d, NPU_REG_PERF_LINK_BYTES(l)));
	npu_tprog_free(&p);
	free(r);
	npu_tdev_destroy(d);
}
END_TEST

/* Field by field: the struct's padding is not part of the record. */
static bool same_span(const struct npu_trace_span *x, const struct npu_trace_span *y)
{
	return x->start == y->start && x->dur == y->dur && x->iter == y->iter &&
	       x->dma_bytes == y->dma_bytes && x->gsdu_bytes == y->gsdu_bytes &&
	       x->conflicts == y->conflicts && x->insn == y->insn && x->unit == y->unit &&
	       x->opcode == y->opcode && x->pcluster == y->pcluster &&
	       x->lcluster == y->lcluster && x->tpb == y->tpb;
}

START_TEST(test_trace_changes_nothing)
{
	struct npu_tdev *d1 = dev(1), *d4 = dev(4);
	struct rec *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct npu_tprog p;
	uint64_t plain, traced, threaded;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	build(&p);
	plain = run(d1, &p, NULL);
	traced = run(d1, &p, a);
	threaded = run(d4, &p, b);
	ck_assert_uint_eq(plain, traced);
	ck_assert_uint_eq(plain, threaded);
	/* The accounting order, not the threads', decides the record. */
	ck_assert_uint_eq(a->nspans, b->nspans);
	for (size_t i = 0; i < a->nspans; i++)
		ck_assert(same_span(&a->span[i], &b->span[i]));
	ck_assert_mem_eq(a->link_bytes, b->link_bytes, sizeof(a->link_bytes));
	npu_tprog_free(&p);
	free(a);
	free(b);
	npu_tdev_destroy(d1);
	npu_tdev_destroy(d4);
}
END_TEST

static Suite *core_trace_suite(void)
{
	Suite *s = suite_create("core_trace");
	TCase *tc = tcase_create("trace");

	tcase_add_test(tc, test_trace_adds_up_to_the_counters);
	tcase_add_test(tc, test_trace_changes_nothing);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(core_trace_suite)
