// SPDX-License-Identifier: MIT
/*
 * The memory planner (compile/npu_mem.c): tensors alive at the same time
 * never share bytes, tensors alive at different times may, aliases stay at
 * their offsets inside their root, the peak is the end of the highest
 * range, and bad constraints are refused.  Then the compiler's use of it
 * (compile/npu_scratch.c): a chain of nodes needs two tensors' scratch, a
 * Concat's inputs live in its output, a batch gets one plan per element,
 * and the results stay right.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_compile.h"
#include "compile/npu_ops.h"
#include "compile/npu_mem.h"
#include "ir_build.h"
#include "model/npu_model_priv.h"
#include "npu_test.h"

#define ALIGN 64

static struct npu_mem_item item(uint64_t size, int64_t first, int64_t last)
{
	return (struct npu_mem_item){ .size = size, .first = first, .last = last, .alias = -1 };
}

static struct npu_mem_item alias(uint64_t size, int64_t first, int64_t last, int of,
				 uint64_t offset)
{
	return (struct npu_mem_item){ .size = size, .first = first, .last = last, .alias = of,
				      .offset = offset };
}

static bool overlap(uint64_t a, uint64_t asz, uint64_t b, uint64_t bsz)
{
	return asz && bsz && a < b + bsz && b < a + asz;
}

START_TEST(chain_reuses)
{
	/* A -> B -> C: A and C are never alive together. */
	struct npu_mem_item it[3] = { item(100, 0, 1), item(100, 1, 2), item(100, 2, 3) };
	uint64_t peak;

	ck_assert_int_eq(npu_mem_plan(it, 3, ALIGN, &peak), NPU_OK);
	ck_assert_uint_eq(it[0].at, 0);
	ck_assert_uint_eq(it[1].at, 128);
	ck_assert_uint_eq(it[2].at, 0);
	ck_assert_uint_eq(peak, 256);
}
END_TEST

START_TEST(disjoint_share_overlapping_do_not)
{
	struct npu_mem_item a[2] = { item(1000, 0, 0), item(1000, 1, 1) };
	struct npu_mem_item b[2] = { item(1000, 0, 1), item(1000, 1, 1) };
	uint64_t peak;

	ck_assert_int_eq(npu_mem_plan(a, 2, ALIGN, &peak), NPU_OK);
	ck_assert_uint_eq(a[0].at, a[1].at);
	ck_assert_uint_eq(peak, 1024);
	/* Sharing one step is overlapping. */
	ck_assert_int_eq(npu_mem_plan(b, 2, ALIGN, &peak), NPU_OK);
	ck_assert(!overlap(b[0].at, 1000, b[1].at, 1000));
	ck_assert_uint_eq(b[1].at % ALIGN, 0);
	ck_assert_uint_eq(peak, 2048);
}
END_TEST

START_TEST(freed_range_first_fit)
{
	/*
	 * A (64) and B (64) side by side, A dies, then C (64) takes A's range
	 * (the lowest that fits) and D (200) goes past B.  (Largest first
	 * gives the same peak: the first order is kept.)
	 */
	struct npu_mem_item it[4] = { item(64, 0, 1), item(64, 0, 3), item(64, 2, 3),
				      item(200, 2, 3) };
	uint64_t peak;

	ck_assert_int_eq(npu_mem_plan(it, 4, ALIGN, &peak), NPU_OK);
	ck_assert_uint_eq(it[0].at, 0);
	ck_assert_uint_eq(it[1].at, 64);
	/* Larger first on a tie: D (200) cannot fit in A's 64 bytes, C can. */
	ck_assert_uint_eq(it[3].at, 128);
	ck_assert_uint_eq(it[2].at, 0);
	ck_assert_uint_eq(peak, 384);
}
END_TEST

START_TEST(largest_first_when_lower)
{
	/*
	 * A (64) -> B (128) -> C (192).  In order of first steps C lands past
	 * B (A, 64 bytes, freed too little): 384.  Largest first, C at 0, B
	 * after it, A below B beside C: 320, the most bytes ever alive.
	 */
	struct npu_mem_item it[3] = { item(64, 0, 1), item(128, 1, 2), item(192, 2, 3) };
	uint64_t peak;

	ck_assert_int_eq(npu_mem_plan(it, 3, ALIGN, &peak), NPU_OK);
	ck_assert_uint_eq(peak, 320);
	ck_assert_uint_eq(it[2].at, 0);
	ck_assert_uint_eq(it[1].at, 192);
	ck_assert_uint_eq(it[0].at, 0);
}
END_TEST

START_TEST(concat_slices)
{
	/*
	 * Y = Concat(X0, X1, X2), the Xs in their slices of Y: they live as
	 * one group from X0's producer to Y's last reader; Z, alive while the
	 * Xs are, stays out of Y's range; W, alive after Y, may reuse it.
	 */
	struct npu_mem_item it[6] = {
		item(192, 3, 4),		/* Y */
		alias(64, 0, 3, 0, 0),		/* X0 */
		alias(64, 1, 3, 0, 64),		/* X1 */
		alias(64, 2, 3, 0, 128),	/* X2 */
		item(64, 1, 1),			/* Z */
		item(192, 5, 6),		/* W */
	};
	uint64_t peak;

	ck_assert_int_eq(npu_mem_plan(it, 6, ALIGN, &peak), NPU_OK);
	ck_assert_uint_eq(it[1].at, it[0].at);
	ck_assert_uint_eq(it[2].at, it[0].at + 64);
	ck_assert_uint_eq(it[3].at, it[0].at + 128);
	ck_assert(!overlap(it[4].at, 64, it[0].at, 192));
	ck_assert_uint_eq(it[5].at, it[0].at);
	ck_assert_uint_eq(peak, 256);
}
END_TEST

START_TEST(alias_of_alias)
{
	/* R, A in R at 64, B (a view of part of A) in A at 32. */
	struct npu_mem_item it[4] = { item(64, 0, 0), item(256, 1, 1), alias(128, 2, 2, 1, 64),
				      alias(64, 3, 3, 2, 32) };
	uint64_t peak;

	ck_assert_int_eq(npu_mem_plan(it, 4, ALIGN, &peak), NPU_OK);
	ck_assert_uint_eq(it[2].at, it[1].at + 64);
	ck_assert_uint_eq(it[3].at, it[1].at + 96);
	/* The group lives 1..3, the first item only at 0: they share. */
	ck_assert_uint_eq(it[1].at, 0);
	ck_assert_uint_eq(peak, 256);
}
END_TEST

START_TEST(unused_takes_nothing)
{
	struct npu_mem_item it[3] = { item(4096, 1, 0), item(100, 0, 0),
				      alias(50, 2, 2, 0, 10) };
	struct npu_mem_item none[1] = { item(4096, 1, 0) };
	uint64_t peak;

	/* A root alive only through its alias still gets its whole range. */
	ck_assert_int_eq(npu_mem_plan(it, 3, ALIGN, &peak), NPU_OK);
	ck_assert_uint_eq(it[2].at, it[0].at + 10);
	ck_assert_uint_eq(peak, 4096);
	ck_assert_int_eq(npu_mem_plan(none, 1, ALIGN, &peak), NPU_OK);
	ck_assert_uint_eq(peak, 0);
	ck_assert_int_eq(npu_mem_plan(NULL, 0, ALIGN, &peak), NPU_OK);
	ck_assert_uint_eq(peak, 0);
}
END_TEST

START_TEST(bad_constraints)
{
	struct npu_mem_item ok[1] = { item(64, 0, 0) };
	struct npu_mem_item past[2] = { item(128, 0, 0), alias(64, 0, 0, 0, 65) };
	struct npu_mem_item cycle[2] = { alias(64, 0, 0, 1, 0), alias(64, 0, 0, 0, 0) };
	struct npu_mem_item self[1] = { alias(64, 0, 0, 0, 0) };
	struct npu_mem_item none[1] = { alias(64, 0, 0, 5, 0) };
	uint64_t peak;

	ck_assert_int_eq(npu_mem_plan(ok, 1, 0, &peak), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_mem_plan(ok, 1, 48, &peak), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_mem_plan(past, 2, ALIGN, &peak), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "past its root"));
	ck_assert_int_eq(npu_mem_plan(cycle, 2, ALIGN, &peak), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "cycle"));
	ck_assert_int_eq(npu_mem_plan(self, 1, ALIGN, &peak), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_mem_plan(none, 1, ALIGN, &peak), NPU_ERR_INVALID_ARG);
	/* Another alignment works the same. */
	ck_assert_int_eq(npu_mem_plan(ok, 1, 4096, &peak), NPU_OK);
	ck_assert_uint_eq(peak, 4096);
}
END_TEST

static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

#define N 300
#define STEPS 60

/*
 * Random tensors and aliases: every pair of groups alive at a common step
 * is apart, aliases sit at their offsets, ranges are aligned, and the peak
 * is the highest end, at least the most bytes alive at any step and at
 * most every group side by side.
 */
START_TEST(random_plans)
{
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct npu_mem_item it[N];
		size_t root[N];
		uint64_t off[N], peak, top = 0, sum = 0, most = 0;
		int64_t gf[N], gl[N];
		uint64_t s = seed;

		for (int i = 0; i < N; i++) {
			int64_t a = rnd(&s) % STEPS, b = a + rnd(&s) % 8;

			it[i] = item(1 + rnd(&s) % 5000, a, b);
			if (rnd(&s) % 10 == 0)
				it[i].first = it[i].last + 1;	/* unused */
			if (i > 0 && rnd(&s) % 3 == 0) {
				int r = (int)(rnd(&s) % (unsigned)i);

				it[i].alias = r;
				it[i].size = 1 + rnd(&s) % it[r].size;
				it[i].offset = rnd(&s) % (it[r].size - it[i].size + 1);
			}
		}
		ck_assert_int_eq(npu_mem_plan(it, N, ALIGN, &peak), NPU_OK);
		for (int i = 0; i < N; i++) {
			size_t r = (size_t)i;

			off[i] = 0;
			while (it[r].alias >= 0) {
				off[i] += it[r].offset;
				r = (size_t)it[r].alias;
			}
			root[i] = r;
			gf[i] = INT64_MAX;
			gl[i] = INT64_MIN;
		}
		for (int i = 0; i < N; i++) {
			if (it[i].first > it[i].last)
				continue;
			if (it[i].first < gf[root[i]])
				gf[root[i]] = it[i].first;
			if (it[i].last > gl[root[i]])
				gl[root[i]] = it[i].last;
		}
		for (int i = 0; i < N; i++) {
			ck_assert_uint_eq(it[i].at, it[root[i]].at + off[i]);
			if (root[i] != (size_t)i || gf[i] > gl[i])
				continue;
			ck_assert_uint_eq(it[i].at % ALIGN, 0);
			if (it[i].at + it[i].size > top)
				top = it[i].at + it[i].size;
			sum += (it[i].size + ALIGN - 1) / ALIGN * ALIGN;
			for (int j = 0; j < i; j++)
				if (root[j] == (size_t)j && gf[j] <= gl[j] && gf[i] <= gl[j] &&
				    gf[j] <= gl[i])
					ck_assert_msg(!overlap(it[i].at, it[i].size, it[j].at,
							       it[j].size),
						      "seed %llu: groups %d and %d overlap",
						      (unsigned long long)seed, i, j);
		}
		for (int64_t t = 0; t < STEPS + 8; t++) {
			uint64_t live = 0;

			for (int i = 0; i < N; i++)
				if (root[i] == (size_t)i && gf[i] <= t && t <= gl[i])
					live += it[i].size;
			if (live > most)
				most = live;
		}
		ck_assert_uint_eq(peak, (top + ALIGN - 1) / ALIGN * ALIGN);
		ck_assert_uint_ge(peak, most);
		ck_assert_uint_le(peak, sum);
	}
}
END_TEST

/* ---- the compiler's scratch ---- */

#define H 128
#define W 256
#define PLANE ((int64_t)H * W)
#define PLANE_BYTES ((uint64_t)PLANE * 4)

/* x [1, 1, H, W] float32 and the ops' outputs, chained. */
static npu_ir_graph *chain(const char *const *ops, int n)
{
	npu_ir_graph *g = irb_graph(17);
	int64_t d[4] = { 1, 1, H, W };
	int t = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, d), x = t;

	for (int i = 0; i < n; i++) {
		int y = irb_tensor(g, i + 1 < n ? NULL : "y", NPU_DTYPE_FLOAT32, -1, NULL);

		irb_node(g, ops[i], &t, 1, &y, 1);
		t = y;
	}
	irb_io(g, &x, 1, &t, 1);
	return g;
}

/* Compile @g for the emulator, @batch inputs per run; its scratch bytes. */
static npu_model *compile(npu_ir_graph *g, unsigned batch, uint64_t *scratch)
{
	struct npu_compile_target tgt = { .clusters = 14, .tpbs = 4, .batch = batch };
	npu_model_info info = { .struct_size = sizeof(info) };
	npu_device_info dev;
	npu_device *d;
	npu_model *m = calloc(1, sizeof(*m));

	ck_assert_int_eq(npu_device_open("emu", &d), NPU_OK);
	npu_device_get_info(d, &dev);
	npu_device_close(d);
	tgt.hbsm_size = dev.hbsm_size;
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_msg(npu_compile_ir(g, &tgt, &m->cm) == NPU_OK, "%s", npu_last_error());
	ck_assert_int_eq(npu_model_get_info(m, &info), NPU_OK);
	ck_assert_uint_eq(info.batch, batch ? batch : 1);
	ck_assert_uint_eq(info.scratch_bytes % ALIGN, 0);
	*scratch = info.scratch_bytes;
	return m;
}

/* Run @m on @n inputs (batch elements) of @in bytes, outputs of @out. */
static void run(const npu_model *m, float *const *x, float *const *y, unsigned n, size_t in,
		size_t out)
{
	npu_tensor t_in[4], t_out[4];
	npu_device *d;
	npu_context *ctx;

	for (unsigned i = 0; i < n; i++) {
		t_in[i] = (npu_tensor){ NULL, NPU_DTYPE_FLOAT32, x[i], in };
		t_out[i] = (npu_tensor){ NULL, NPU_DTYPE_FLOAT32, y[i], out };
	}
	ck_assert_int_eq(npu_device_open("emu", &d), NPU_OK);
	ck_assert_int_eq(npu_context_create(d, m, 0, &ctx), NPU_OK);
	ck_assert_msg(npu_run(ctx, t_in, n, t_out, n) == NPU_OK, "%s", npu_last_error());
	npu_context_destroy(ctx);
	npu_device_close(d);
}

static float *plane(unsigned seed)
{
	float *v = malloc(PLANE_BYTES);

	ck_assert_ptr_nonnull(v);
	for (int64_t i = 0; i < PLANE; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
	}
	return v;
}

START_TEST(chain_needs_two_tensors)
{
	/* y = |-|-x||: three intermediates, never more than two alive. */
	static const char *const ops[] = { "Neg", "Abs", "Neg", "Abs" };
	npu_ir_graph *g = chain(ops, 4);
	float *x = plane(1), *y = plane(2);
	uint64_t scratch;
	npu_model *m = compile(g, 1, &scratch);

	ck_assert_uint_eq(scratch, 2 * PLANE_BYTES);
	run(m, &x, &y, 1, PLANE_BYTES, PLANE_BYTES);
	for (int64_t i = 0; i < PLANE; i++)
		ck_assert_float_eq(y[i], fabsf(x[i]));
	npu_model_free(m);
	npu_ir_graph_free(g);
	free(x);
	free(y);
}
END_TEST

START_TEST(batch_plans_each_element)
{
	/* Pipelined: the same two tensors' scratch for each of two inputs. */
	static const char *const ops[] = { "Neg", "Abs", "Neg", "Abs", "Neg", "Abs" };
	npu_ir_graph *g = chain(ops, 6);
	float *x[2] = { plane(3), plane(4) }, *y[2] = { plane(5), plane(6) };
	uint64_t scratch;
	npu_model *m = compile(g, 2, &scratch);

	ck_assert_uint_eq(scratch, 2 * 2 * PLANE_BYTES);
	run(m, x, y, 2, PLANE_BYTES, PLANE_BYTES);
	for (int b = 0; b < 2; b++)
		for (int64_t i = 0; i < PLANE; i++)
			ck_assert_float_eq(y[b][i], fabsf(x[b][i]));
	npu_model_free(m);
	npu_ir_graph_free(g);
	for (int b = 0; b < 2; b++) {
		free(x[b]);
		free(y[b]);
	}
}
END_TEST

START_TEST(concat_inputs_in_place)
{
	/*
	 * y = -Concat(-x, |x|) on the rows: a and b are written in their
	 * slices of c (no copy), so the scratch is c alone, a and b living as
	 * long as it (not a + b + c).
	 */
	npu_ir_graph *g = irb_graph(17);
	int64_t d[4] = { 1, 1, H, W };
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, d);
	int a = irb_tensor(g, "a", NPU_DTYPE_FLOAT32, -1, NULL);
	int b = irb_tensor(g, "b", NPU_DTYPE_FLOAT32, -1, NULL);
	int c = irb_tensor(g, "c", NPU_DTYPE_FLOAT32, -1, NULL);
	int y = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);
	float *xs = plane(7), *ys = malloc(2 * PLANE_BYTES);
	uint64_t scratch;
	npu_model *m;

	ck_assert_ptr_nonnull(ys);
	irb_node(g, "Neg", &x, 1, &a, 1);
	irb_node(g, "Abs", &x, 1, &b, 1);
	npu_ir_set_attr_int(irb_node(g, "Concat", (int[]){ a, b }, 2, &c, 1), "axis", 2);
	irb_node(g, "Neg", &c, 1, &y, 1);
	irb_io(g, &x, 1, &y, 1);
	m = compile(g, 1, &scratch);
	ck_assert_uint_eq(scratch, 2 * PLANE_BYTES);
	run(m, &xs, &ys, 1, PLANE_BYTES, 2 * PLANE_BYTES);
	for (int64_t i = 0; i < PLANE; i++) {
		ck_assert_float_eq(ys[i], xs[i]);
		ck_assert_float_eq(ys[PLANE + i], -fabsf(xs[i]));
	}
	npu_model_free(m);
	npu_ir_graph_free(g);
	free(xs);
	free(ys);
}
END_TEST

static Suite *mem_suite(void)
{
	Suite *s = suite_create("npu_mem");
	TCase *place = tcase_create("placement");
	TCase *alias_tc = tcase_create("aliases");
	TCase *bad = tcase_create("errors");
	TCase *cc = tcase_create("compiler");

	tcase_add_test(place, chain_reuses);
	tcase_add_test(place, disjoint_share_overlapping_do_not);
	tcase_add_test(place, freed_range_first_fit);
	tcase_add_test(place, largest_first_when_lower);
	tcase_add_test(place, random_plans);
	tcase_add_test(alias_tc, concat_slices);
	tcase_add_test(alias_tc, alias_of_alias);
	tcase_add_test(alias_tc, unused_takes_nothing);
	tcase_add_test(bad, bad_constraints);
	suite_add_tcase(s, place);
	suite_add_tcase(s, alias_tc);
	tcase_add_test(cc, chain_needs_two_tensors);
	tcase_add_test(cc, batch_plans_each_element);
	tcase_add_test(cc, concat_inputs_in_place);
	tcase_set_timeout(cc, 60);
	suite_add_tcase(s, bad);
	suite_add_tcase(s, cc);
	return s;
}
NPU_TEST_SUITE(mem_suite)
