// SPDX-License-Identifier: MIT
/* Token sampling (gen/sample.c) against fixed logits and direct references. */
#include <math.h>
#include <string.h>

#include "gen/npu_sample.h"
#include "npu_test.h"

#define V 10

/* Distinct logits, the highest at 7, a tie for second at 2 and 5. */
static const float logits[V] = { 0.1f, -1.0f, 2.0f, 0.5f, -3.0f, 2.0f, 1.0f, 3.0f, 0.0f, -0.5f };

static int64_t draw(const struct npu_sample_params *p, struct npu_rng *r, const float *x, size_t n)
{
	uint32_t order[64];
	double prob[64];

	ck_assert_uint_le(n, 64);
	return npu_sample_logits(p, r, x, n, order, prob);
}

START_TEST(argmax_lowest_on_tie)
{
	const float tie[4] = { 1.0f, 4.0f, 4.0f, 2.0f };
	const float nan_first[3] = { NAN, -5.0f, -7.0f };

	ck_assert_int_eq(npu_argmax_f32(logits, V), 7);
	ck_assert_int_eq(npu_argmax_f32(tie, 4), 1);
	ck_assert_int_eq(npu_argmax_f32(nan_first, 3), 1);
	ck_assert_int_eq(npu_argmax_f32(logits, 0), 0);
}
END_TEST

START_TEST(degenerate_cuts_are_greedy)
{
	struct npu_sample_params topk1 = { .temperature = 1.0f, .top_k = 1 };
	struct npu_sample_params smallp = { .temperature = 1.0f, .top_p = 1e-6f };
	struct npu_sample_params cold = { .temperature = 1e-6f };
	struct npu_sample_params zero = { .temperature = 0 };
	const float tie[4] = { 1.0f, 4.0f, 4.0f, 2.0f };
	struct npu_rng r;

	npu_rng_seed(&r, 1);
	for (int i = 0; i < 100; i++) {
		ck_assert_int_eq(draw(&topk1, &r, logits, V), 7);
		ck_assert_int_eq(draw(&smallp, &r, logits, V), 7);
		ck_assert_int_eq(draw(&cold, &r, logits, V), 7);
		ck_assert_int_eq(draw(&zero, &r, logits, V), 7);
		/* A tie at the top: the lower id, as ArgMax. */
		ck_assert_int_eq(draw(&topk1, &r, tie, 4), 1);
		ck_assert_int_eq(draw(&smallp, &r, tie, 4), 1);
	}
}
END_TEST

START_TEST(seed_reproduces)
{
	struct npu_sample_params p = { .temperature = 1.5f, .top_k = 6, .top_p = 0.95f };
	struct npu_rng a, b, c;
	int64_t ida[200], differ = 0;

	npu_rng_seed(&a, 42);
	npu_rng_seed(&b, 42);
	npu_rng_seed(&c, 43);
	for (int i = 0; i < 200; i++) {
		ida[i] = draw(&p, &a, logits, V);
		ck_assert_int_eq(draw(&p, &b, logits, V), ida[i]);
		differ += draw(&p, &c, logits, V) != ida[i];
	}
	ck_assert_int_gt(differ, 20);
	/* The generator's own stream is fixed: the same numbers everywhere. */
	npu_rng_seed(&a, 0);
	ck_assert_uint_eq(npu_rng_next(&a), 0x99ec5f36cb75f2b4ull);
}
END_TEST

/* softmax(@x / @t) restricted to ids for which @in[i]; into @q. */
static void ref_softmax(const float *x, const int *in, double t, double *q)
{
	double m = -INFINITY, s = 0;

	for (int i = 0; i < V; i++)
		if (in[i] && x[i] > m)
			m = x[i];
	for (int i = 0; i < V; i++) {
		q[i] = in[i] ? exp((x[i] - m) / t) : 0;
		s += q[i];
	}
	for (int i = 0; i < V; i++)
		q[i] /= s;
}

/* 40000 draws: every id's frequency within 0.01 of @q. */
static void check_frequencies(const struct npu_sample_params *p, const double *q)
{
	enum { N = 40000 };
	unsigned count[V] = { 0 };
	struct npu_rng r;

	npu_rng_seed(&r, 7);
	for (int i = 0; i < N; i++)
		count[draw(p, &r, logits, V)]++;
	for (int i = 0; i < V; i++) {
		double f = (double)count[i] / N;

		if (fabs(f - q[i]) > 0.01)
			ck_abort_msg("id %d drawn %.4f of the time, softmax says %.4f", i, f, q[i]);
		if (q[i] == 0)
			ck_assert_uint_eq(count[i], 0);
	}
}

START_TEST(draws_follow_softmax)
{
	int all[V] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
	/* Top-4 by logit: 7 (3.0), 2 and 5 (2.0), 6 (1.0). */
	int top4[V] = { 0, 0, 1, 0, 0, 1, 1, 1, 0, 0 };
	/* Top-2: the tie at 2.0 is cut, the lower id (2) kept. */
	int top2[V] = { 0, 0, 1, 0, 0, 0, 0, 1, 0, 0 };
	struct npu_sample_params p = { .temperature = 1.0f };
	double q[V];

	ref_softmax(logits, all, 1.0, q);
	check_frequencies(&p, q);
	p.temperature = 2.0f;
	ref_softmax(logits, all, 2.0, q);
	check_frequencies(&p, q);
	p.temperature = 0.7f;
	p.top_k = 4;
	ref_softmax(logits, top4, 0.7, q);
	check_frequencies(&p, q);
	p.top_k = 2;
	ref_softmax(logits, top2, 0.7, q);
	check_frequencies(&p, q);
}
END_TEST

START_TEST(top_p_keeps_the_nucleus)
{
	int all[V] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
	int nucleus[V] = { 0 };
	struct npu_sample_params p = { .temperature = 1.0f, .top_p = 0.8f };
	const int by_rank[V] = { 7, 2, 5, 6, 3, 0, 8, 9, 1, 4 };
	double q[V], cum = 0;

	/* Reference: the fewest ids, highest first, whose mass reaches 0.8. */
	ref_softmax(logits, all, 1.0, q);
	for (int k = 0; k < V && cum < 0.8; k++) {
		cum += q[by_rank[k]];
		nucleus[by_rank[k]] = 1;
	}
	ref_softmax(logits, nucleus, 1.0, q);
	check_frequencies(&p, q);
}
END_TEST

static Suite *sample_suite(void)
{
	Suite *s = suite_create("sample");
	TCase *tc = tcase_create("sample");

	tcase_add_test(tc, argmax_lowest_on_tie);
	tcase_add_test(tc, degenerate_cuts_are_greedy);
	tcase_add_test(tc, seed_reproduces);
	tcase_add_test(tc, draws_follow_softmax);
	tcase_add_test(tc, top_p_keeps_the_nucleus);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(sample_suite)
