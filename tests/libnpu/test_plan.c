// SPDX-License-Identifier: MIT
/*
 * The scheduler's cost model (libnpu/src/plan): seed 002's five-layer
 * example, hand-computed channel loads under XY routing, the M100's
 * irregular geometry, and rejected inputs.
 */
#include <math.h>
#include <string.h>

#include "npu_internal.h"
#include "npu_test.h"
#include "plan/npu_plan.h"

#define KB 1e3		/* seed 002's KB: SI, see npu_plan.h */
#define US 1e-6

/* Seed 002: conv1 (100, 32, 3000) ... fc (15, 1000, 4); W MFLOP, M and A KB. */
static const struct npu_plan_layer seed_chain[] = {
	{ "conv1", 100e6, 32 * KB, 3000 * KB },
	{ "conv2", 300e6, 600 * KB, 1800 * KB },
	{ "conv3", 300e6, 2400 * KB, 900 * KB },
	{ "conv4", 150e6, 4000 * KB, 300 * KB },
	{ "fc", 15e6, 1000 * KB, 4 * KB },
};
#define SEED_LAYERS 5u

/* The sim: 36 cores on 6 x 6, 1 TFLOP/s, B 64 KB, S 512 KB, 16 GB/s, 100 GB/s. */
static struct npu_plan_machine seed_machine(void)
{
	return (struct npu_plan_machine){
		.cores = 36, .mesh_w = 6, .mesh_h = 6, .cores_per_node = 1,
		.core_flops = 1e12, .buffer_bytes = 64 * KB, .sram_bytes = 512 * KB,
		.link_bw = 16e9, .offchip_bw = 100e9,
	};
}

/* A machine for hand examples: rates of 1 so times equal bytes and FLOP. */
static struct npu_plan_machine unit_machine(unsigned w, unsigned h, unsigned cores)
{
	return (struct npu_plan_machine){
		.cores = cores, .mesh_w = w, .mesh_h = h, .cores_per_node = 1,
		.core_flops = 1, .buffer_bytes = 0, .sram_bytes = 1e9,
		.link_bw = 1000, .offchip_bw = 1,
	};
}

static unsigned link_of(unsigned node, unsigned dir)
{
	return node * NPU_HW_LINK_DIRS + dir;
}

static void plan_seed(enum npu_plan_placement kind, uint64_t seed, struct npu_plan_eval *e)
{
	struct npu_plan_machine m = seed_machine();
	struct npu_plan_mapping map;
	unsigned counts[SEED_LAYERS];

	ck_assert_int_eq(npu_plan_choose_cores(seed_chain, SEED_LAYERS, &m, counts, NULL), NPU_OK);
	ck_assert_int_eq(npu_plan_place(counts, SEED_LAYERS, &m, kind, seed, &map), NPU_OK);
	ck_assert_int_eq(npu_plan_evaluate(seed_chain, SEED_LAYERS, &m, &map, e), NPU_OK);
}

/* ---- seed 002's example ---- */

START_TEST(seed_core_counts)
{
	static const unsigned want[SEED_LAYERS] = { 6, 9, 9, 9, 3 };
	struct npu_plan_machine m = seed_machine();
	unsigned counts[SEED_LAYERS];
	bool fits = false;

	ck_assert_int_eq(npu_plan_choose_cores(seed_chain, SEED_LAYERS, &m, counts, &fits),
			 NPU_OK);
	for (unsigned i = 0; i < SEED_LAYERS; i++)
		ck_assert_uint_eq(counts[i], want[i]);
	ck_assert(fits);
}
END_TEST

/*
 * Pipelined: T_comp = 300 MFLOP / (9 x 1 TFLOP/s) = 33.3 us.  T_net: the
 * hottest link carries 533.3 KB per input (two 166.7 KB conv1 slices and
 * a 200 KB conv2 slice), / 16 GB/s = 33.33 us, the seed's value to 0.01%.
 */
START_TEST(seed_pipelined)
{
	static struct npu_plan_eval e;

	plan_seed(NPU_PLAN_BANDED, 0, &e);
	ck_assert_double_eq_tol(e.t_comp / US, 33.333, 0.1);
	ck_assert_double_eq_tol(e.t_net / US, 33.333, 0.1);	/* achieved: 33.333 */
	ck_assert_double_eq_tol(e.hot_bytes, 533333.33, 1);
	ck_assert(e.t_mem == 0);
	ck_assert_double_eq_tol(e.throughput, 30000, 1);
	ck_assert_uint_eq(e.binds, NPU_PLAN_BOUND_COMPUTE | NPU_PLAN_BOUND_NETWORK);
	/* conv1's 500 KB slices each leave on one link: 500 KB / 16 GB/s. */
	ck_assert_double_eq_tol(e.layer[0].t_net / US, 31.25, 1e-6);
	ck_assert(e.layer[SEED_LAYERS - 1].t_net == 0);
	ck_assert_double_eq_tol(e.layer[1].t_comp / US, 33.333, 0.1);
}
END_TEST

/*
 * Scattered puts the same counts on random nodes: more byte-hops for every
 * seed tried.  The seed's own draw (T_net 45.8 us, +72% byte-hops) is one
 * random placement; --seed 477 of ours happens to reproduce both, which
 * also pins the PRNG so plans repeat across builds.
 */
START_TEST(seed_scattered)
{
	static struct npu_plan_eval banded, e;

	plan_seed(NPU_PLAN_BANDED, 0, &banded);
	for (uint64_t seed = 1; seed <= 50; seed++) {
		plan_seed(NPU_PLAN_SCATTERED, seed, &e);
		ck_assert_msg(e.byte_hops > banded.byte_hops, "seed %u: %g <= %g",
			      (unsigned)seed, e.byte_hops, banded.byte_hops);
		ck_assert_double_eq_tol(e.t_comp, banded.t_comp, 1e-15);
	}
	plan_seed(NPU_PLAN_SCATTERED, 477, &e);
	ck_assert_double_eq_tol(e.t_net / US, 45.833, 0.01);
	ck_assert_double_eq_tol(e.byte_hops / banded.byte_hops, 1.72, 0.01);
	ck_assert_uint_eq(e.binds, NPU_PLAN_BOUND_NETWORK);
}
END_TEST

/*
 * Seed 002's exercise: shrink SRAM to 256 KB with the Pipelined counts.
 * S - B = 192 KB per core.  conv4: 4000/9 = 444.4 KB per core, over by
 * 252.4 KB on each of 9 cores = 2272 KB, / 100 GB/s = 22.72 us; conv3 9 x
 * (266.7 - 192) = 672 KB; fc 3 x (333.3 - 192) = 424 KB; conv1, conv2 fit.
 * T_mem = 3368 KB / 100 GB/s = 33.68 us, which now binds.
 */
START_TEST(seed_small_sram)
{
	static const unsigned preset[SEED_LAYERS] = { 6, 9, 9, 9, 3 };
	struct npu_plan_machine m = seed_machine();
	static struct npu_plan_mapping map;
	static struct npu_plan_eval e;
	unsigned counts[SEED_LAYERS], sum = 0;
	bool fits = true;

	m.sram_bytes = 256 * KB;
	ck_assert_int_eq(npu_plan_place(preset, SEED_LAYERS, &m, NPU_PLAN_BANDED, 0, &map), NPU_OK);
	ck_assert_int_eq(npu_plan_evaluate(seed_chain, SEED_LAYERS, &m, &map, &e), NPU_OK);
	ck_assert(e.layer[0].t_mem == 0 && e.layer[1].t_mem == 0);
	ck_assert_double_eq_tol(e.layer[2].t_mem / US, 6.72, 1e-6);
	ck_assert_double_eq_tol(e.layer[3].t_mem / US, 22.72, 1e-6);
	ck_assert_double_eq_tol(e.layer[4].t_mem / US, 4.24, 1e-6);
	ck_assert_double_eq_tol(e.t_mem / US, 33.68, 1e-6);
	ck_assert_uint_eq(e.binds, NPU_PLAN_BOUND_MEMORY);

	/*
	 * Minimums 1 + 4 + 13 + 21 + 6 = 45 > 36: all cores, it says so, and
	 * the plan stays near the preset (a spill-only greedy left conv1 one
	 * core and T_net = 187.5 us).
	 */
	ck_assert_int_eq(npu_plan_choose_cores(seed_chain, SEED_LAYERS, &m, counts, &fits),
			 NPU_OK);
	ck_assert(!fits);
	for (unsigned i = 0; i < SEED_LAYERS; i++)
		sum += counts[i];
	ck_assert_uint_eq(sum, 36);
	ck_assert_int_eq(npu_plan_place(counts, SEED_LAYERS, &m, NPU_PLAN_BANDED, 0, &map), NPU_OK);
	ck_assert_int_eq(npu_plan_evaluate(seed_chain, SEED_LAYERS, &m, &map, &e), NPU_OK);
	ck_assert_double_lt(e.t_total / US, 1.1 * 33.68);
}
END_TEST

/* ---- hand-computed channel loads ---- */

/*
 * 2 x 2 mesh, node = y * 2 + x:      0 (0,0)  1 (1,0)
 *                                     2 (0,1)  3 (1,1)
 * L0: 1 core on node 1, A = 1200 B.  L1: 2 cores on nodes 0, 2, A = 600 B.
 * L2: 1 core on node 3.
 *
 * L0 -> L1: producer [0,1) gives consumer 0 [0,1/2) 600 B, 1 -> 0: 1.W;
 *   consumer 1 [1/2,1) on node 2 600 B, X first 1 -> 0 (1.W), then Y
 *   0 -> 2 (0.S).  (YX routing would use 1.S and 3.W instead.)
 * L1 -> L2: node 0's 300 B to node 3: 0 -> 1 (0.E), 1 -> 3 (1.S);
 *   node 2's 300 B: 2 -> 3 (2.E).
 * gamma: 1.W = 1200, 0.S = 600, 0.E = 300, 1.S = 300, 2.E = 300, rest 0.
 * Byte-hops 2700; hottest 1.W, 1200 B / 1000 B/s = 1.2 s.
 */
START_TEST(loads_2x2)
{
	static const struct npu_plan_layer chain[] = {
		{ "l0", 10, 0, 1200 }, { "l1", 10, 0, 600 }, { "l2", 10, 0, 5 },
	};
	struct npu_plan_machine m = unit_machine(2, 2, 4);
	struct npu_plan_mapping map = { .n_layers = 3, .cores = { 1, 2, 1 },
					.node = { 1, 0, 2, 3 } };
	double gamma[4 * NPU_HW_LINK_DIRS], sum = 0;
	static struct npu_plan_eval e;

	ck_assert_int_eq(npu_plan_link_loads(chain, 3, &m, &map, gamma, 16), NPU_OK);
	for (unsigned c = 0; c < 16; c++) {
		double want = 0;

		if (c == link_of(1, NPU_LINK_WEST))
			want = 1200;
		else if (c == link_of(0, NPU_LINK_SOUTH))
			want = 600;
		else if (c == link_of(0, NPU_LINK_EAST) || c == link_of(1, NPU_LINK_SOUTH) ||
			 c == link_of(2, NPU_LINK_EAST))
			want = 300;
		ck_assert_msg(gamma[c] == want, "link %u: %g, want %g", c, gamma[c], want);
		sum += gamma[c];
	}
	ck_assert_double_eq(sum, 2700);

	ck_assert_int_eq(npu_plan_evaluate(chain, 3, &m, &map, &e), NPU_OK);
	ck_assert_double_eq(e.byte_hops, 2700);
	ck_assert_double_eq(e.hot_bytes, 1200);
	ck_assert_uint_eq(e.hot_link, link_of(1, NPU_LINK_WEST));
	ck_assert_double_eq_tol(e.t_net, 1.2, 1e-12);
	ck_assert_double_eq_tol(e.layer[0].t_net, 1.2, 1e-12);	/* L0's flows alone */
	ck_assert_double_eq_tol(e.layer[1].t_net, 0.3, 1e-12);
	ck_assert(e.layer[2].t_net == 0);
	ck_assert_double_eq_tol(e.t_comp, 10, 1e-12);		/* 10 FLOP on 1 core at 1 FLOP/s */
	ck_assert_uint_eq(e.binds, NPU_PLAN_BOUND_COMPUTE);
}
END_TEST

/*
 * 3 x 1 mesh with up to 3 cores per node: nodes 0 - 1 - 2 in a row.
 * L0: 2 cores, both on node 0, A = 600 B.  L1: 3 cores on nodes 1, 1, 2,
 * A = 300 B.  L2: 1 core on node 1.
 *
 * L0 -> L1 in sixths: producer 0 [0,3/6), 1 [3/6,1); consumers [0,2/6),
 * [2/6,4/6), [4/6,1).  p0 -> c0 200, p0 -> c1 100, p1 -> c1 100,
 * p1 -> c2 200.  Node 0 -> 1 carries 400 on 0.E; node 0 -> 2 carries 200
 * on 0.E and 1.E: 0.E = 600, 1.E = 200.
 * L1 -> L2: 100 B each; the two on node 1 stay inside the node (no link),
 * node 2's goes 2 -> 1: 2.W = 100.
 * Byte-hops 400 + 2 x 200 + 100 = 900; hottest 0.E = 600.
 */
START_TEST(loads_3x1)
{
	static const struct npu_plan_layer chain[] = {
		{ "l0", 1, 0, 600 }, { "l1", 1, 0, 300 }, { "l2", 1, 0, 0 },
	};
	struct npu_plan_machine m = unit_machine(3, 1, 6);
	struct npu_plan_mapping map = { .n_layers = 3, .cores = { 2, 3, 1 },
					.node = { 0, 0, 1, 1, 2, 1 } };
	double gamma[3 * NPU_HW_LINK_DIRS];
	static struct npu_plan_eval e;

	m.cores_per_node = 3;
	ck_assert_msg(npu_plan_link_loads(chain, 3, &m, &map, gamma, 12) == NPU_OK, "%s",
		      npu_last_error());
	ck_assert_double_eq_tol(gamma[link_of(0, NPU_LINK_EAST)], 600, 1e-9);
	ck_assert_double_eq_tol(gamma[link_of(1, NPU_LINK_EAST)], 200, 1e-9);
	ck_assert_double_eq_tol(gamma[link_of(2, NPU_LINK_WEST)], 100, 1e-9);
	ck_assert(gamma[link_of(1, NPU_LINK_WEST)] == 0);
	ck_assert_int_eq(npu_plan_evaluate(chain, 3, &m, &map, &e), NPU_OK);
	ck_assert_double_eq_tol(e.byte_hops, 900, 1e-9);
	ck_assert_double_eq_tol(e.hot_bytes, 600, 1e-9);
	ck_assert_uint_eq(e.hot_link, link_of(0, NPU_LINK_EAST));
}
END_TEST

START_TEST(link_ends_and_names)
{
	struct npu_plan_machine m = unit_machine(3, 2, 1);
	unsigned from, to;

	ck_assert(npu_plan_link_ends(&m, link_of(1, NPU_LINK_SOUTH), &from, &to));
	ck_assert_uint_eq(from, 1);
	ck_assert_uint_eq(to, 4);
	ck_assert(npu_plan_link_ends(&m, link_of(4, NPU_LINK_NORTH), &from, &to));
	ck_assert_uint_eq(to, 1);
	ck_assert(!npu_plan_link_ends(&m, link_of(2, NPU_LINK_EAST), &from, &to));
	ck_assert(!npu_plan_link_ends(&m, link_of(3, NPU_LINK_WEST), &from, &to));
	ck_assert_str_eq(npu_plan_dir_name(NPU_LINK_WEST), "west");
	ck_assert_str_eq(npu_plan_dir_name(7), "?");
}
END_TEST

/* ---- the M100's geometry ---- */

/*
 * 4 x 4 mesh: the CCB on node 0, the DDR port on node 3, 14 clusters on
 * the rest; clusters on nodes 5 and 10 fused off.  12 clusters x 4 TPBs.
 */
static const unsigned m100_nodes[] = { 1, 2, 4, 6, 7, 8, 9, 11, 12, 13, 14, 15 };

static struct npu_plan_machine m100_machine(void)
{
	struct npu_plan_machine m = seed_machine();

	m.mesh_w = 4;
	m.mesh_h = 4;
	m.cores_per_node = 4;
	m.cores = 48;
	m.usable = m100_nodes;
	m.n_usable = NPU_ARRAY_SIZE(m100_nodes);
	return m;
}

static void assert_on_usable(const struct npu_plan_mapping *map, unsigned total)
{
	unsigned per[16] = { 0 };

	for (unsigned c = 0; c < total; c++) {
		unsigned id = map->node[c];

		ck_assert_msg(id != 0 && id != 3 && id != 5 && id != 10 && id < 16,
			      "core %u on node %u", c, id);
		ck_assert_uint_le(++per[id], 4);
	}
}

START_TEST(m100_unusable_never_assigned)
{
	struct npu_plan_machine m = m100_machine();
	static struct npu_plan_mapping map;
	static struct npu_plan_eval e;
	unsigned counts[SEED_LAYERS], total = 0;

	ck_assert_int_eq(npu_plan_choose_cores(seed_chain, SEED_LAYERS, &m, counts, NULL), NPU_OK);
	for (unsigned i = 0; i < SEED_LAYERS; i++)
		total += counts[i];
	ck_assert_uint_eq(total, 48);
	ck_assert_int_eq(npu_plan_place(counts, SEED_LAYERS, &m, NPU_PLAN_BANDED, 0, &map), NPU_OK);
	assert_on_usable(&map, total);
	ck_assert_int_eq(npu_plan_evaluate(seed_chain, SEED_LAYERS, &m, &map, &e), NPU_OK);
	for (uint64_t seed = 0; seed < 200; seed++) {
		ck_assert_int_eq(npu_plan_place(counts, SEED_LAYERS, &m, NPU_PLAN_SCATTERED, seed,
						&map), NPU_OK);
		assert_on_usable(&map, total);
	}
	/* A hand mapping on the fused cluster's node is refused. */
	map.node[0] = 5;
	ck_assert_int_eq(npu_plan_evaluate(seed_chain, SEED_LAYERS, &m, &map, &e),
			 NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "node 5"));
}
END_TEST

/* Same inputs, same plan: nothing depends on time, addresses or libc. */
START_TEST(deterministic)
{
	struct npu_plan_machine m = m100_machine();
	static struct npu_plan_mapping a, b;
	static const unsigned counts[SEED_LAYERS] = { 8, 12, 12, 12, 4 };

	for (int kind = NPU_PLAN_BANDED; kind <= NPU_PLAN_SCATTERED; kind++) {
		ck_assert_int_eq(npu_plan_place(counts, SEED_LAYERS, &m, kind, 42, &a), NPU_OK);
		ck_assert_int_eq(npu_plan_place(counts, SEED_LAYERS, &m, kind, 42, &b), NPU_OK);
		ck_assert_mem_eq(&a, &b, sizeof(a));
	}
	ck_assert_int_eq(npu_plan_place(counts, SEED_LAYERS, &m, NPU_PLAN_SCATTERED, 43, &b),
			 NPU_OK);
	ck_assert(memcmp(a.node, b.node, 48 * sizeof(a.node[0])) != 0);
}
END_TEST

/* ---- rejected inputs ---- */

static void expect_error(npu_status s, const char *words)
{
	ck_assert_int_eq(s, NPU_ERR_INVALID_ARG);
	ck_assert_msg(strstr(npu_last_error(), words), "error '%s' lacks '%s'",
		      npu_last_error(), words);
}

START_TEST(bad_machine)
{
	struct npu_plan_machine m = seed_machine();
	unsigned counts[SEED_LAYERS];
	unsigned dup[] = { 1, 2, 1 }, outside[] = { 40 };

	m.cores = 0;
	expect_error(npu_plan_choose_cores(seed_chain, SEED_LAYERS, &m, counts, NULL), "0 cores");
	m = seed_machine();
	m.cores = 4;
	expect_error(npu_plan_choose_cores(seed_chain, SEED_LAYERS, &m, counts, NULL),
		     "5 layers but only 4 cores");
	m = seed_machine();
	m.mesh_w = 5;
	m.mesh_h = 5;
	expect_error(npu_plan_check(seed_chain, SEED_LAYERS, &m), "room for 25 cores");
	m = m100_machine();
	m.cores = 49;
	expect_error(npu_plan_check(seed_chain, SEED_LAYERS, &m), "room for 48 cores");
	m = seed_machine();
	m.mesh_w = 0;
	expect_error(npu_plan_check(seed_chain, SEED_LAYERS, &m), "mesh 0x6");
	m = seed_machine();
	m.buffer_bytes = m.sram_bytes;
	expect_error(npu_plan_check(seed_chain, SEED_LAYERS, &m), "smaller than SRAM");
	m = seed_machine();
	m.link_bw = 0;
	expect_error(npu_plan_check(seed_chain, SEED_LAYERS, &m), "link bandwidth");
	m = seed_machine();
	m.usable = dup;
	m.n_usable = 3;
	expect_error(npu_plan_check(seed_chain, SEED_LAYERS, &m), "listed twice");
	m.usable = outside;
	m.n_usable = 1;
	expect_error(npu_plan_check(seed_chain, SEED_LAYERS, &m), "outside the 6x6 mesh");
}
END_TEST

START_TEST(bad_chain_and_mapping)
{
	struct npu_plan_machine m = seed_machine();
	struct npu_plan_layer bad[2] = { { "a", 1, 1, 1 }, { "b", NAN, 1, 1 } };
	static struct npu_plan_mapping map;
	static struct npu_plan_eval e;
	static const unsigned zero[2] = { 1, 0 }, many[2] = { 30, 7 }, ok[2] = { 1, 1 };
	double gamma[4];

	expect_error(npu_plan_check(seed_chain, 0, &m), "no layers");
	expect_error(npu_plan_check(bad, 2, &m), "layer 1 (b)");
	bad[1].flops = -1;
	expect_error(npu_plan_check(bad, 2, &m), "not negative");
	bad[1].flops = 1;
	expect_error(npu_plan_place(zero, 2, &m, NPU_PLAN_BANDED, 0, &map), "0 cores");
	expect_error(npu_plan_place(many, 2, &m, NPU_PLAN_BANDED, 0, &map), "more than");
	ck_assert_int_eq(npu_plan_place(ok, 2, &m, NPU_PLAN_BANDED, 0, &map), NPU_OK);
	expect_error(npu_plan_evaluate(seed_chain, SEED_LAYERS, &m, &map, &e), "mapping has 2");
	expect_error(npu_plan_link_loads(bad, 2, &m, &map, gamma, 4), "link loads");
	map.node[1] = map.node[0];	/* two cores on a one-core node */
	expect_error(npu_plan_evaluate(bad, 2, &m, &map, &e), "more than 1 cores");
}
END_TEST

static Suite *plan_suite(void)
{
	Suite *s = suite_create("npu_plan");
	TCase *seed = tcase_create("seed002");
	TCase *loads = tcase_create("loads");
	TCase *geom = tcase_create("geometry");
	TCase *bad = tcase_create("errors");

	tcase_add_test(seed, seed_core_counts);
	tcase_add_test(seed, seed_pipelined);
	tcase_add_test(seed, seed_scattered);
	tcase_add_test(seed, seed_small_sram);
	tcase_add_test(loads, loads_2x2);
	tcase_add_test(loads, loads_3x1);
	tcase_add_test(loads, link_ends_and_names);
	tcase_add_test(geom, m100_unusable_never_assigned);
	tcase_add_test(geom, deterministic);
	tcase_add_test(bad, bad_machine);
	tcase_add_test(bad, bad_chain_and_mapping);
	suite_add_tcase(s, seed);
	suite_add_tcase(s, loads);
	suite_add_tcase(s, geom);
	suite_add_tcase(s, bad);
	return s;
}
NPU_TEST_SUITE(plan_suite)
