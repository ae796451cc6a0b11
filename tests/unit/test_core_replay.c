// SPDX-License-Identifier: MIT
/*
 * Replay (npu_replay.c): a kept program's next runs execute its recorded
 * rounds and skip the cycle model while every iteration costs what the
 * record says.  Whatever happens, a run's results, cycles and counters
 * are those of the same run on a fresh device (no record): when the data
 * changes what an iteration costs, when an iteration fails, and when the
 * task is traced.
 */
#include <string.h>

#include "npu_tdev.h"
#include "npu_test.h"
#include "npu_trace.h"

#define RD(d, off) npu_core_mmio_read((d)->core, (off))
#define DDR_VA 0x20000000ull
#define CHAIN 0x8000u		/* the GSDU descriptor, in cluster 0 TPB 1 */
#define SRC 0x100u

/* What a run left: its completion, counters and output. */
struct outcome {
	struct npu_hw_completion c;
	uint64_t perf[64];
	uint8_t out[512];
};

/* Counter registers compared between runs (their change over one run). */
static const uint32_t perf_regs[] = {
	NPU_REG_PERF_CYCLES, NPU_REG_PERF_GSDU_BYTES, NPU_REG_PERF_LOAD_BYTES,
	NPU_REG_PERF_STORE_BYTES, NPU_REG_PERF_CLUSTER_BUSY(0),
	NPU_REG_PERF_CLUSTER_BUSY(1), NPU_REG_PERF_UNIT_BUSY(0, 0),
	NPU_REG_PERF_UNIT_BUSY(0, 1), NPU_REG_PERF_UNIT_BUSY(0, 2),
	NPU_REG_PERF_UNIT_BUSY(0, 3), NPU_REG_PERF_UNIT_BUSY(1, 0),
	NPU_REG_PERF_UNIT_BUSY(1, 1), NPU_REG_PERF_UNIT_BUSY(1, 2),
	NPU_REG_PERF_UNIT_BUSY(1, 3), NPU_REG_PERF_HBSM_CONFLICTS(0),
	NPU_REG_PERF_HBSM_CONFLICTS(1),
};
#define NPERF (sizeof(perf_regs) / sizeof(perf_regs[0]))

static uint64_t rd64(struct npu_tdev *d, uint32_t off)
{
	uint64_t lo = RD(d, off);

	return lo | (uint64_t)RD(d, off + 4) << 32;
}

/* A device with a context and an output buffer; @map: DDR mapped in place. */
struct bench {
	struct npu_tdev *d;
	struct npu_tdev_submit o;
	struct npu_hw_task desc;
	uint8_t *out;
	struct npu_tprog p;
};

static void add_signal(struct npu_hw_insn *in, unsigned counter, unsigned cm,
		       unsigned tm)
{
	in->sync.signal[0].flags = NPU_SIGNAL_ENABLE | NPU_SIGNAL_REMOTE;
	in->sync.signal[0].counter = counter;
	in->sync.signal[0].cluster_mask = cm;
	in->sync.signal[0].tpb_mask = tm;
}

static void add_wait(struct npu_hw_insn *in, unsigned counter)
{
	in->sync.wait[0].flags = NPU_WAIT_ENABLE;
	in->sync.wait[0].counter = counter;
	in->sync.wait[0].value = 1;
}

/*
 * Cluster 0 TPB 1 fills a source, its CSU runs a GSDU chain (in HBSM, so
 * data) copying rows of it to DDR, then cluster 1 fills 64 bytes: three
 * units on two clusters, linked by remote signals, over several rounds.
 */
static void bench_init(struct bench *b, int map)
{
	uint32_t dims[1] = { 256 };
	struct npu_hw_insn *in;

	memset(b, 0, sizeof(*b));
	b->d = npu_tdev_small(2, 2, 0, 1);
	ck_assert_ptr_nonnull(b->d);
	b->d->map_ddr = map;
	b->o.nclusters = 2;
	b->o.root = npu_tdev_ctx(b->d);
	b->out = npu_tdev_buf(b->d, b->o.root, DDR_VA, 4096, true);
	npu_tprog_init(&b->p);
	in = npu_tprog_add(&b->p, NPU_UNIT_DTDU, NPU_DTDU_FILL, 1, 0x2);
	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_UINT8, SRC, 1, dims);
	in->params.dtdu.value = 0x5a;
	add_signal(in, 1, 1, 0x2);
	in = npu_tprog_add(&b->p, NPU_UNIT_CSU, NPU_CSU_GSDU, 1, 0x2);
	in->params.csu.chain_space = NPU_SPACE_HBSM;
	in->params.csu.chain_addr = CHAIN;
	add_wait(in, 1);
	add_signal(in, 2, 2, 0x1);
	dims[0] = 64;
	in = npu_tprog_add(&b->p, NPU_UNIT_DTDU, NPU_DTDU_FILL, 2, 0x1);
	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_UINT8, 0, 1, dims);
	in->params.dtdu.value = 0x77;
	add_wait(in, 2);
	npu_tdev_prepare(b->d, &b->p, &b->o, &b->desc);
}

static void bench_fini(struct bench *b)
{
	npu_tprog_free(&b->p);
	npu_tdev_destroy(b->d);
}

/* The chain copies @rows rows of 32 bytes from @src. */
static void set_chain(struct bench *b, uint32_t rows, uint32_t src)
{
	struct npu_hw_gsdu_desc g = { 0 };

	g.src_space = NPU_SPACE_HBSM;
	g.dst_space = NPU_SPACE_DDR;
	g.row_bytes = 32;
	g.src = src;
	g.dst = DDR_VA;
	g.rows = rows;
	g.src_stride = 32;
	g.dst_stride = 32;
	memcpy(npu_tdev_hbsm(b->d, 0, 1) + CHAIN, &g, sizeof(g));
}

static void run(struct bench *b, uint32_t rows, uint32_t src, struct outcome *r)
{
	uint64_t before[NPERF];

	set_chain(b, rows, src);
	memset(b->out, 0, sizeof(r->out));
	for (unsigned i = 0; i < NPERF; i++)
		before[i] = rd64(b->d, perf_regs[i]);
	b->desc.seqno = ++b->d->seqno;
	ck_assert_int_ge(npu_tdev_run_desc(b->d, 0, &b->desc, &r->c), 0);
	memset(r->perf, 0, sizeof(r->perf));
	for (unsigned i = 0; i < NPERF; i++)
		r->perf[i] = rd64(b->d, perf_regs[i]) - before[i];
	memcpy(r->out, b->out, sizeof(r->out));
}

/* The same run on a device that never ran the program. */
static void fresh_run(int map, uint32_t rows, uint32_t src, struct outcome *r)
{
	struct bench f;

	bench_init(&f, map);
	run(&f, rows, src, r);
	bench_fini(&f);
}

static void ck_same(const struct outcome *a, const struct outcome *b)
{
	ck_assert_uint_eq(a->c.status, b->c.status);
	ck_assert_uint_eq(a->c.cycles, b->c.cycles);
	ck_assert_uint_eq(a->c.insn_index, b->c.insn_index);
	ck_assert_uint_eq(a->c.detail, b->c.detail);
	ck_assert_uint_eq(a->c.fault_addr, b->c.fault_addr);
	for (unsigned i = 0; i < NPERF; i++)
		ck_assert_msg(a->perf[i] == b->perf[i], "counter 0x%x: %llu vs %llu",
			      perf_regs[i], (unsigned long long)a->perf[i],
			      (unsigned long long)b->perf[i]);
	ck_assert_mem_eq(a->out, b->out, sizeof(a->out));
}

static void ck_replays(struct bench *b, uint64_t replays, uint64_t divergences)
{
	uint64_t r, dv;

	npu_core_debug_replays(b->d->core, &r, &dv);
	ck_assert_uint_eq(r, replays);
	ck_assert_uint_eq(dv, divergences);
}

/* Unchanged data: replayed, as the full run on a fresh device. */
START_TEST(test_replay_matches_full_run)
{
	struct outcome ref, got;
	struct bench b;

	fresh_run(_i, 4, SRC, &ref);
	ck_assert_uint_eq(ref.c.status, NPU_TASK_OK);
	ck_assert_uint_gt(ref.perf[1], 0);
	bench_init(&b, _i);
	for (unsigned n = 0; n < 3; n++) {
		run(&b, 4, SRC, &got);
		ck_same(&got, &ref);
		ck_replays(&b, n, 0);
	}
	bench_fini(&b);
}
END_TEST

/*
 * The chain's data changes what the GSDU costs: the replay diverges and
 * the run catches up through the cycle model, with the fresh run's
 * cycles; its record replaces the old one, so the same data then
 * replays, and the old data diverges again.
 */
START_TEST(test_replay_diverges_when_costs_change)
{
	struct outcome four, six, got;
	struct bench b;

	fresh_run(_i, 4, SRC, &four);
	fresh_run(_i, 6, SRC, &six);
	ck_assert_uint_ne(four.c.cycles, six.c.cycles);
	bench_init(&b, _i);
	run(&b, 4, SRC, &got);
	run(&b, 4, SRC, &got);
	ck_replays(&b, 1, 0);
	run(&b, 6, SRC, &got);
	ck_same(&got, &six);
	ck_replays(&b, 2, 1);
	run(&b, 6, SRC, &got);
	ck_same(&got, &six);
	ck_replays(&b, 3, 1);
	run(&b, 4, SRC, &got);
	ck_same(&got, &four);
	ck_replays(&b, 4, 2);
	bench_fini(&b);
}
END_TEST

/* An iteration that fails in a replay fails as in a full run; then the
 * program runs (and replays) again. */
START_TEST(test_replay_failure_as_full_run)
{
	uint32_t off_end = (64u << 10) - 48;	/* the second row runs off HBSM */
	struct outcome ok, bad, got;
	struct bench b;

	fresh_run(_i, 4, SRC, &ok);
	fresh_run(_i, 2, off_end, &bad);
	ck_assert_uint_eq(bad.c.status, NPU_TASK_ILLEGAL_INSN);
	bench_init(&b, _i);
	run(&b, 4, SRC, &got);
	run(&b, 2, off_end, &got);
	ck_same(&got, &bad);
	ck_replays(&b, 1, 1);
	run(&b, 4, SRC, &got);
	ck_same(&got, &ok);
	ck_replays(&b, 2, 1);
	bench_fini(&b);
}
END_TEST

struct span_count {
	struct npu_tracer ops;
	unsigned spans;
};

static void on_span(struct npu_tracer *t, const struct npu_trace_span *s)
{
	(void)s;
	((struct span_count *)t)->spans++;
}

static void on_link(struct npu_tracer *t, unsigned link, uint64_t start,
		    uint64_t len, uint64_t bytes)
{
	(void)t;
	(void)link;
	(void)start;
	(void)len;
	(void)bytes;
}

/* A traced task gets every span: it is never replayed. */
START_TEST(test_traced_task_not_replayed)
{
	struct span_count t = { .ops = { .span = on_span, .link = on_link } };
	struct outcome ref, got;
	struct bench b;

	fresh_run(0, 4, SRC, &ref);
	bench_init(&b, 0);
	run(&b, 4, SRC, &got);
	b.d->tracer = &t.ops;
	run(&b, 4, SRC, &got);
	ck_assert_uint_eq(t.spans, 3);
	run(&b, 4, SRC, &got);
	ck_assert_uint_eq(t.spans, 6);
	ck_same(&got, &ref);
	ck_replays(&b, 0, 0);
	b.d->tracer = NULL;
	run(&b, 4, SRC, &got);
	ck_same(&got, &ref);
	ck_replays(&b, 1, 0);
	bench_fini(&b);
}
END_TEST

static Suite *core_replay_suite(void)
{
	Suite *s = suite_create("core_replay");
	TCase *t = tcase_create("replay");

	/* _i 1: DDR mapped in place (npu_tdev.map_ddr). */
	tcase_add_loop_test(t, test_replay_matches_full_run, 0, 2);
	tcase_add_loop_test(t, test_replay_diverges_when_costs_change, 0, 2);
	tcase_add_loop_test(t, test_replay_failure_as_full_run, 0, 2);
	tcase_add_test(t, test_traced_task_not_replayed);
	suite_add_tcase(s, t);
	return s;
}

NPU_TEST_SUITE(core_replay_suite)
