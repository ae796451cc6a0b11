// SPDX-License-Identifier: MIT
/*
 * Program version 1.2 on the CVU: comparisons and logic (bool results
 * as 0/1 bytes), NOT and TRUNC, SELECT, SCAN and ARGMAX/ARGMIN through
 * the real engine (npu_tdev_run), against C references computed here.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npu_tdev.h"
#include "npu_test.h"

static struct npu_tdev *d;
static uint8_t *hb;

static void setup(void)
{
	d = npu_tdev_create(NULL, 64);
	ck_assert_ptr_nonnull(d);
	hb = npu_tdev_hbsm(d, 0, 0);
	ck_assert_ptr_nonnull(hb);
	srand(41);
}

static void teardown(void)
{
	npu_tdev_destroy(d);
	d = NULL;
}

static struct npu_hw_insn *one(struct npu_tprog *p, unsigned op)
{
	npu_tprog_init(p);
	return npu_tprog_add(p, NPU_UNIT_CVU, op, 1, 1);
}

static struct npu_hw_completion run(struct npu_tprog *p)
{
	struct npu_hw_completion c;

	memset(&c, 0, sizeof(c));
	npu_tdev_run(d, p, NULL, &c);
	npu_tprog_free(p);
	return c;
}

#define ck_ok(c) ck_assert_msg((c).status == NPU_TASK_OK, "status %u detail %u", \
			       (c).status, (c).detail)
#define ck_illegal(c, det) do {						\
		ck_assert_uint_eq((c).status, NPU_TASK_ILLEGAL_INSN);	\
		ck_assert_uint_eq((c).detail, (det));			\
	} while (0)

enum { N = 12 };

/* Values with ties, signed zeros, infinities and a NaN. */
static const float va[N] = { 1, 2, -3, 0.0f, -0.0f, INFINITY, NAN, 5, 7, -INFINITY, 2, 0.5f };
static const float vb[N] = { 1, 3, -4, -0.0f, 0.0f, INFINITY, 1, NAN, 6, 0, 0, 0.5f };

static int ref_binary(unsigned fn, float a, float b)
{
	switch (fn) {
	case NPU_FN_EQUAL: return a == b;
	case NPU_FN_LESS: return a < b;
	case NPU_FN_GREATER: return a > b;
	case NPU_FN_LESS_EQUAL: return a <= b;
	case NPU_FN_GREATER_EQUAL: return a >= b;
	case NPU_FN_AND: return a != 0 && b != 0;
	case NPU_FN_OR: return a != 0 || b != 0;
	case NPU_FN_XOR: return (a != 0) != (b != 0);
	}
	return -1;
}

/* Every comparison and logic function, fp32 in, a 0/1 byte out. */
START_TEST(test_compare_logic_to_u8)
{
	for (unsigned fn = NPU_FN_EQUAL; fn <= NPU_FN_XOR; fn++) {
		struct npu_tprog p;
		struct npu_hw_insn *in = one(&p, NPU_CVU_BINARY);
		struct npu_hw_completion c;

		memcpy(hb + 0x1000, va, sizeof(va));
		memcpy(hb + 0x2000, vb, sizeof(vb));
		memset(hb + 0x3000, 0xee, N);
		npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0x1000, 1, (uint32_t[]){ N });
		npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_FP32, 0x2000, 1, (uint32_t[]){ N });
		npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_UINT8, 0x3000, 1, (uint32_t[]){ N });
		in->params.cvu.fn = (uint8_t)fn;
		c = run(&p);
		ck_ok(c);
		for (int i = 0; i < N; i++)
			ck_assert_msg(hb[0x3000 + i] == ref_binary(fn, va[i], vb[i]),
				      "fn %u element %d: %g, %g gave %u", fn, i, va[i], vb[i],
				      hb[0x3000 + i]);
	}
}
END_TEST

/* int32 operands compare as integers (exact beyond 2^24), an int32 result. */
START_TEST(test_compare_int32)
{
	int32_t a[N], b[N], y[N];
	struct npu_tprog p;
	struct npu_hw_insn *in = one(&p, NPU_CVU_BINARY);
	struct npu_hw_completion c;

	for (int i = 0; i < N; i++) {
		a[i] = rand() % 2000001 - 1000000;
		if (i < 4)
			a[i] = i % 2 ? INT32_MAX - i : 16777217 + i;	/* neighbours merge in fp32 */
		b[i] = i % 3 ? a[i] + (i % 2 ? -1 : 1) : a[i];
	}
	memcpy(hb + 0x1000, a, sizeof(a));
	memcpy(hb + 0x2000, b, sizeof(b));
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_INT32, 0x1000, 1, (uint32_t[]){ N });
	npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_INT32, 0x2000, 1, (uint32_t[]){ N });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_INT32, 0x3000, 1, (uint32_t[]){ N });
	in->params.cvu.fn = NPU_FN_LESS_EQUAL;
	c = run(&p);
	ck_ok(c);
	memcpy(y, hb + 0x3000, sizeof(y));
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(y[i], a[i] <= b[i]);
}
END_TEST

/* ADD, SUB, MUL of INT32 into INT32: int32 arithmetic, wrapping. */
START_TEST(test_int32_arith)
{
	const int32_t a[6] = { 16777217, INT32_MAX, -7, 123456789, INT32_MIN, 46341 };
	const int32_t b[6] = { 1, 1, 3, -987654321, -1, 46341 };
	static const unsigned fns[3] = { NPU_FN_ADD, NPU_FN_SUB, NPU_FN_MUL };

	for (int k = 0; k < 3; k++) {
		struct npu_tprog p;
		struct npu_hw_insn *in = one(&p, NPU_CVU_BINARY);
		struct npu_hw_completion c;
		int32_t y[6];

		memcpy(hb + 0x1000, a, sizeof(a));
		memcpy(hb + 0x2000, b, sizeof(b));
		npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_INT32, 0x1000, 1, (uint32_t[]){ 6 });
		npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_INT32, 0x2000, 1, (uint32_t[]){ 6 });
		npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_INT32, 0x3000, 1, (uint32_t[]){ 6 });
		in->params.cvu.fn = (uint8_t)fns[k];
		c = run(&p);
		ck_ok(c);
		memcpy(y, hb + 0x3000, sizeof(y));
		for (int i = 0; i < 6; i++) {
			uint32_t u = (uint32_t)a[i], v = (uint32_t)b[i];
			int32_t want = (int32_t)(k == 0 ? u + v : k == 1 ? u - v : u * v);

			ck_assert_msg(y[i] == want, "fn %u element %d: %d want %d", fns[k], i, y[i],
				      want);
		}
	}
}
END_TEST

/*
 * MOD and FMOD of INT32 into INT32 (version 1.4): exact remainders with
 * the divisor's sign (Python's %) or the dividend's (C's %), beyond 2^24
 * too; 0 for a zero divisor and for INT32_MIN by -1.  In fp32 (an FP32
 * destination) the same functions of the values as floats.
 */
START_TEST(test_int32_mod)
{
	enum { M = 10 };
	const int32_t a[M] = { 7, -7, 7, -7, 2147483647, -2147483647 - 1, 16777219, 5, 0, -9 };
	const int32_t b[M] = { 3, 3, -3, -3, 16777216, -1, 2, 0, 4, -9 };
	/* Python: a % b; C: a % b. */
	const int32_t want_mod[M] = { 1, 2, -2, -1, 16777215, 0, 1, 0, 0, 0 };
	const int32_t want_fmod[M] = { 1, -1, 1, -1, 16777215, 0, 1, 0, 0, 0 };

	for (int k = 0; k < 2; k++) {
		struct npu_tprog p;
		struct npu_hw_insn *in = one(&p, NPU_CVU_BINARY);
		struct npu_hw_completion c;
		int32_t y[M];

		memcpy(hb + 0x1000, a, sizeof(a));
		memcpy(hb + 0x2000, b, sizeof(b));
		npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_INT32, 0x1000, 1, (uint32_t[]){ M });
		npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_INT32, 0x2000, 1, (uint32_t[]){ M });
		npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_INT32, 0x3000, 1, (uint32_t[]){ M });
		in->params.cvu.fn = k ? NPU_FN_FMOD : NPU_FN_MOD;
		c = run(&p);
		ck_ok(c);
		memcpy(y, hb + 0x3000, sizeof(y));
		for (int i = 0; i < M; i++)
			ck_assert_msg(y[i] == (k ? want_fmod : want_mod)[i],
				      "%s element %d: %d %% %d gave %d", k ? "FMOD" : "MOD", i, a[i],
				      b[i], y[i]);
	}
	{
		const float fa[4] = { 7.5f, -7.5f, 7.5f, -7.5f }, fb[4] = { 2.0f, 2.0f, -2.0f, -2.0f };
		const float want[4] = { 1.5f, 0.5f, -0.5f, -1.5f };
		struct npu_tprog p;
		struct npu_hw_insn *in = one(&p, NPU_CVU_BINARY);
		struct npu_hw_completion c;
		float y[4];

		memcpy(hb + 0x1000, fa, sizeof(fa));
		memcpy(hb + 0x2000, fb, sizeof(fb));
		npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0x1000, 1, (uint32_t[]){ 4 });
		npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_FP32, 0x2000, 1, (uint32_t[]){ 4 });
		npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x3000, 1, (uint32_t[]){ 4 });
		in->params.cvu.fn = NPU_FN_MOD;
		c = run(&p);
		ck_ok(c);
		memcpy(y, hb + 0x3000, sizeof(y));
		for (int i = 0; i < 4; i++)
			ck_assert_msg(y[i] == want[i], "fp32 MOD element %d: %g", i, y[i]);
	}
}
END_TEST

/* NOT as the function and as a pipeline stage (NOT NOT x = x != 0), TRUNC. */
START_TEST(test_not_trunc)
{
	float y[N];
	struct npu_tprog p;
	struct npu_hw_insn *in = one(&p, NPU_CVU_UNARY);
	struct npu_hw_completion c;

	memcpy(hb + 0x1000, va, sizeof(va));
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0x1000, 1, (uint32_t[]){ N });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x3000, 1, (uint32_t[]){ N });
	in->params.cvu.fn = NPU_FN_NOT;
	c = run(&p);
	ck_ok(c);
	memcpy(y, hb + 0x3000, sizeof(y));
	for (int i = 0; i < N; i++)
		ck_assert_msg(y[i] == (va[i] == 0 ? 1.0f : 0.0f), "not %d: %g", i, y[i]);

	in = one(&p, NPU_CVU_UNARY);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0x1000, 1, (uint32_t[]){ N });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_UINT8, 0x3000, 1, (uint32_t[]){ N });
	in->params.cvu.fn = NPU_FN_NOT;
	in->params.cvu.nstages = 1;
	in->params.cvu.stage[0].fn = NPU_FN_NOT;
	c = run(&p);
	ck_ok(c);
	for (int i = 0; i < N; i++)
		ck_assert_msg(hb[0x3000 + i] == (va[i] != 0), "bool %d: %u", i, hb[0x3000 + i]);

	{
		const float t[6] = { 2.7f, -2.7f, 0.5f, -0.5f, 16777215.0f, -1e30f };
		int32_t q[6];

		in = one(&p, NPU_CVU_UNARY);
		memcpy(hb + 0x1000, t, sizeof(t));
		npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0x1000, 1, (uint32_t[]){ 6 });
		npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_INT32, 0x3000, 1, (uint32_t[]){ 6 });
		in->params.cvu.fn = NPU_FN_TRUNC;
		c = run(&p);
		ck_ok(c);
		memcpy(q, hb + 0x3000, sizeof(q));
		ck_assert_int_eq(q[0], 2);
		ck_assert_int_eq(q[1], -2);
		ck_assert_int_eq(q[2], 0);
		ck_assert_int_eq(q[3], 0);
		ck_assert_int_eq(q[4], 16777215);
		ck_assert_int_eq(q[5], INT32_MIN);	/* saturates */
	}
}
END_TEST

/* SELECT copies bits: inf and NaN in the other branch do not leak. */
START_TEST(test_select)
{
	enum { R = 3 };
	uint8_t cond[R * N];
	float y[R * N];
	int32_t ia[N], ib[N], iy[N];
	struct npu_tprog p;
	struct npu_hw_insn *in = one(&p, NPU_CVU_SELECT);
	struct npu_hw_completion c;

	for (int i = 0; i < R * N; i++)
		cond[i] = (uint8_t)(rand() % 2);
	memcpy(hb + 0x1000, cond, sizeof(cond));
	memcpy(hb + 0x2000, va, sizeof(va));
	memcpy(hb + 0x3000, vb, sizeof(vb));
	/* the values broadcast over R rows, as the eltwise lowering does */
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_UINT8, 0x1000, 2, (uint32_t[]){ N, R });
	npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_FP32, 0x2000, 2, (uint32_t[]){ N, 1 });
	npu_twu_level(&in->opnd[1], 1, 0, 0, R);
	npu_twu_dense(&in->opnd[2], NPU_SPACE_HBSM, NPU_DT_FP32, 0x3000, 2, (uint32_t[]){ N, 1 });
	npu_twu_level(&in->opnd[2], 1, 0, 0, R);
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x4000, 2, (uint32_t[]){ N, R });
	c = run(&p);
	ck_ok(c);
	memcpy(y, hb + 0x4000, sizeof(y));
	for (int i = 0; i < R * N; i++) {
		float e = cond[i] ? va[i % N] : vb[i % N];

		ck_assert_msg(!memcmp(&y[i], &e, 4), "select %d: %g want %g", i, y[i], e);
	}

	/* int32 beyond 2^24 stays exact */
	for (int i = 0; i < N; i++) {
		ia[i] = 2000000000 - i;
		ib[i] = -2000000001 + i;
	}
	memcpy(hb + 0x2000, ia, sizeof(ia));
	memcpy(hb + 0x3000, ib, sizeof(ib));
	in = one(&p, NPU_CVU_SELECT);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_UINT8, 0x1000, 1, (uint32_t[]){ N });
	npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_INT32, 0x2000, 1, (uint32_t[]){ N });
	npu_twu_dense(&in->opnd[2], NPU_SPACE_HBSM, NPU_DT_INT32, 0x3000, 1, (uint32_t[]){ N });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_INT32, 0x4000, 1, (uint32_t[]){ N });
	c = run(&p);
	ck_ok(c);
	memcpy(iy, hb + 0x4000, sizeof(iy));
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(iy[i], cond[i] ? ia[i] : ib[i]);
}
END_TEST

/* x [O][L][I] as walker levels {I, L, O}: scan along L (reduce_levels 2). */
START_TEST(test_scan)
{
	enum { I = 3, L = 5, O = 2 };
	float x[O * L * I], y[O * L * I];
	int32_t q[O * L * I], qy[O * L * I];

	for (int i = 0; i < O * L * I; i++) {
		x[i] = (float)(rand() % 19 - 9) / 4;
		q[i] = 300000000 + rand() % 1000;
	}
	for (unsigned f = 0; f < 4; f++) {
		bool excl = f & 1, rev = f & 2;
		struct npu_tprog p;
		struct npu_hw_insn *in = one(&p, NPU_CVU_SCAN);
		struct npu_hw_completion c;

		memcpy(hb + 0x1000, x, sizeof(x));
		npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0x1000, 3,
			      (uint32_t[]){ I, L, O });
		npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x2000, 3,
			      (uint32_t[]){ I, L, O });
		in->params.cvu.reduce_levels = 2;
		in->params.cvu.flags = (excl ? NPU_CVU_F_EXCLUSIVE : 0) |
				       (rev ? NPU_CVU_F_REVERSE : 0);
		c = run(&p);
		ck_ok(c);
		memcpy(y, hb + 0x2000, sizeof(y));

		memcpy(hb + 0x1000, q, sizeof(q));
		in = one(&p, NPU_CVU_SCAN);
		npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_INT32, 0x1000, 3,
			      (uint32_t[]){ I, L, O });
		npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_INT32, 0x2000, 3,
			      (uint32_t[]){ I, L, O });
		in->params.cvu.reduce_levels = 2;
		in->params.cvu.flags = (excl ? NPU_CVU_F_EXCLUSIVE : 0) |
				       (rev ? NPU_CVU_F_REVERSE : 0);
		c = run(&p);
		ck_ok(c);
		memcpy(qy, hb + 0x2000, sizeof(qy));

		for (int o = 0; o < O; o++)
			for (int i = 0; i < I; i++)
				for (int l = 0; l < L; l++) {
					double s = 0;
					int64_t t = 0;
					int at = (o * L + l) * I + i;

					for (int k = 0; k < L; k++) {
						bool in_sum = rev ? (excl ? k > l : k >= l) :
								    (excl ? k < l : k <= l);

						if (in_sum) {
							s += x[(o * L + k) * I + i];
							t += q[(o * L + k) * I + i];
						}
					}
					ck_assert_msg(y[at] == (float)s, "scan %u at %d: %g want %g",
						      f, at, y[at], s);
					/* wraps as int32 adds do */
					ck_assert_int_eq(qy[at], (int32_t)(uint32_t)(uint64_t)t);
				}
	}
}
END_TEST

/* Rows of 6 with ties and a NaN; first or last index; int32 results. */
START_TEST(test_argmax_argmin)
{
	enum { R = 4, W = 6 };
	const float x[R * W] = {
		1, 5, 5, -2, 0, 5,
		-1, -7, 3, -7, 2, -7,
		0, NAN, 9, NAN, -9, 1,
		4, 4, 4, 4, 4, 4,
	};
	static const int32_t want[4][R] = {
		{ 1, 2, 1, 0 },		/* ARGMAX, first */
		{ 5, 2, 1, 5 },		/* ARGMAX, last: the first NaN still wins */
		{ 3, 1, 1, 0 },		/* ARGMIN, first */
		{ 3, 5, 1, 5 },		/* ARGMIN, last */
	};

	for (int k = 0; k < 4; k++) {
		struct npu_tprog p;
		struct npu_hw_insn *in = one(&p, NPU_CVU_REDUCE);
		struct npu_hw_completion c;
		int32_t y[R];

		memcpy(hb + 0x1000, x, sizeof(x));
		npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0x1000, 2,
			      (uint32_t[]){ W, R });
		npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_INT32, 0x2000, 1,
			      (uint32_t[]){ R });
		in->params.cvu.fn = k < 2 ? NPU_REDUCE_ARGMAX : NPU_REDUCE_ARGMIN;
		in->params.cvu.reduce_levels = 1;
		in->params.cvu.flags = k & 1 ? NPU_CVU_F_REVERSE : 0;
		c = run(&p);
		ck_ok(c);
		memcpy(y, hb + 0x2000, sizeof(y));
		for (int r = 0; r < R; r++)
			ck_assert_msg(y[r] == want[k][r], "case %d row %d: %d want %d", k, r, y[r],
				      want[k][r]);
	}
}
END_TEST

/* Cycles of one CVU instruction over dense operands of @n elements. */
static uint64_t cycles_of(unsigned op, unsigned fn, unsigned flags, unsigned n, unsigned dst_dt,
			  bool select)
{
	struct npu_tprog p;
	struct npu_hw_insn *in = one(&p, op);
	struct npu_hw_completion c;

	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, select ? NPU_DT_UINT8 : NPU_DT_FP32, 0x0, 1,
		      (uint32_t[]){ n });
	if (select || op == NPU_CVU_BINARY)
		npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_FP32, 0x4000, 1,
			      (uint32_t[]){ n });
	if (select)
		npu_twu_dense(&in->opnd[2], NPU_SPACE_HBSM, NPU_DT_FP32, 0x8000, 1,
			      (uint32_t[]){ n });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, dst_dt, 0xc000, 1,
		      (uint32_t[]){ op == NPU_CVU_REDUCE ? 1 : n });
	in->params.cvu.fn = (uint8_t)fn;
	in->params.cvu.flags = (uint8_t)flags;
	if (op == NPU_CVU_REDUCE || op == NPU_CVU_SCAN)
		in->params.cvu.reduce_levels = 1;
	c = run(&p);
	ck_ok(c);
	return c.cycles;
}

/*
 * The cycle model: one streaming pass over max(source bytes, destination
 * bytes), as every single-pass CVU operation: SCAN costs what a UNARY
 * costs, ARGMAX what MAX costs, SELECT's three sources (1 + 4 + 4 bytes an
 * element) 16 cycles more than an ADD's two at 64 bytes a cycle.
 */
START_TEST(test_cycles)
{
	enum { E = 1024 };

	ck_assert_uint_eq(cycles_of(NPU_CVU_SCAN, 0, NPU_CVU_F_REVERSE, E, NPU_DT_FP32, false),
			  cycles_of(NPU_CVU_UNARY, NPU_FN_RELU, 0, E, NPU_DT_FP32, false));
	ck_assert_uint_eq(cycles_of(NPU_CVU_REDUCE, NPU_REDUCE_ARGMAX, 0, E, NPU_DT_INT32, false),
			  cycles_of(NPU_CVU_REDUCE, NPU_REDUCE_MAX, 0, E, NPU_DT_FP32, false));
	ck_assert_uint_eq(cycles_of(NPU_CVU_BINARY, NPU_FN_LESS, 0, E, NPU_DT_FP32, false),
			  cycles_of(NPU_CVU_BINARY, NPU_FN_ADD, 0, E, NPU_DT_FP32, false));
	ck_assert_uint_eq(cycles_of(NPU_CVU_SELECT, 0, 0, E, NPU_DT_FP32, true),
			  cycles_of(NPU_CVU_BINARY, NPU_FN_ADD, 0, E, NPU_DT_FP32, false) +
			  (E * 9 + 63) / 64 - E * 8 / 64);
}
END_TEST

/* ARGMAX/ARGMIN of int32 rows compare the integers (fp32 would tie them). */
START_TEST(test_argmax_int32)
{
	const int32_t x[2 * 4] = {
		16777216, 16777217, 16777217, 5,		/* max: first 1, last 2 */
		INT32_MIN + 1, INT32_MIN, 7, INT32_MIN,		/* min: first 1, last 3 */
	};
	static const int32_t want[4][2] = { { 1, 2 }, { 2, 2 }, { 3, 1 }, { 3, 3 } };

	for (int k = 0; k < 4; k++) {
		struct npu_tprog p;
		struct npu_hw_insn *in = one(&p, NPU_CVU_REDUCE);
		struct npu_hw_completion c;
		int32_t y[2];

		memcpy(hb + 0x1000, x, sizeof(x));
		npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_INT32, 0x1000, 2,
			      (uint32_t[]){ 4, 2 });
		npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_INT32, 0x2000, 1,
			      (uint32_t[]){ 2 });
		in->params.cvu.fn = k < 2 ? NPU_REDUCE_ARGMAX : NPU_REDUCE_ARGMIN;
		in->params.cvu.reduce_levels = 1;
		in->params.cvu.flags = k & 1 ? NPU_CVU_F_REVERSE : 0;
		c = run(&p);
		ck_ok(c);
		memcpy(y, hb + 0x2000, sizeof(y));
		ck_assert_msg(y[0] == want[k][0] && y[1] == want[k][1], "case %d: %d %d", k, y[0],
			      y[1]);
	}
}
END_TEST

START_TEST(test_validation)
{
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;

	/* SELECT: values of another dtype than the destination */
	in = one(&p, NPU_CVU_SELECT);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_UINT8, 0, 1, (uint32_t[]){ 8 });
	npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_FP32, 0x100, 1, (uint32_t[]){ 8 });
	npu_twu_dense(&in->opnd[2], NPU_SPACE_HBSM, NPU_DT_INT32, 0x200, 1, (uint32_t[]){ 8 });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x300, 1, (uint32_t[]){ 8 });
	c = run(&p);
	ck_illegal(c, NPU_IE_DTYPE);

	/* SELECT with a stage */
	in = one(&p, NPU_CVU_SELECT);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_UINT8, 0, 1, (uint32_t[]){ 8 });
	npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_FP32, 0x100, 1, (uint32_t[]){ 8 });
	npu_twu_dense(&in->opnd[2], NPU_SPACE_HBSM, NPU_DT_FP32, 0x200, 1, (uint32_t[]){ 8 });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x300, 1, (uint32_t[]){ 8 });
	in->params.cvu.nstages = 1;
	in->params.cvu.stage[0].fn = NPU_FN_RELU;
	c = run(&p);
	ck_illegal(c, NPU_IE_PARAM);

	/* ARGMAX into fp32 */
	in = one(&p, NPU_CVU_REDUCE);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0, 2, (uint32_t[]){ 8, 2 });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x100, 1, (uint32_t[]){ 2 });
	in->params.cvu.fn = NPU_REDUCE_ARGMAX;
	in->params.cvu.reduce_levels = 1;
	c = run(&p);
	ck_illegal(c, NPU_IE_DTYPE);

	/* REVERSE on a plain reduction, EXCLUSIVE outside SCAN */
	in = one(&p, NPU_CVU_REDUCE);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0, 2, (uint32_t[]){ 8, 2 });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x100, 1, (uint32_t[]){ 2 });
	in->params.cvu.fn = NPU_REDUCE_MAX;
	in->params.cvu.reduce_levels = 1;
	in->params.cvu.flags = NPU_CVU_F_REVERSE;
	c = run(&p);
	ck_illegal(c, NPU_IE_PARAM);

	in = one(&p, NPU_CVU_UNARY);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0, 1, (uint32_t[]){ 8 });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x100, 1, (uint32_t[]){ 8 });
	in->params.cvu.flags = NPU_CVU_F_EXCLUSIVE;
	c = run(&p);
	ck_illegal(c, NPU_IE_PARAM);

	/* SCAN: its axis beyond the operand's levels, shapes that differ */
	in = one(&p, NPU_CVU_SCAN);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0, 2, (uint32_t[]){ 4, 2 });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x100, 2, (uint32_t[]){ 4, 2 });
	in->params.cvu.reduce_levels = 3;
	c = run(&p);
	ck_illegal(c, NPU_IE_PARAM);

	in = one(&p, NPU_CVU_SCAN);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0, 2, (uint32_t[]){ 4, 2 });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x100, 1, (uint32_t[]){ 8 });
	in->params.cvu.reduce_levels = 1;
	c = run(&p);
	ck_illegal(c, NPU_IE_SHAPE);

	/* the codes between the ranges are still unknown */
	in = one(&p, NPU_CVU_UNARY);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0, 1, (uint32_t[]){ 8 });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x100, 1, (uint32_t[]){ 8 });
	in->params.cvu.fn = NPU_FN_UNARY3_END;
	c = run(&p);
	ck_illegal(c, NPU_IE_PARAM);
}
END_TEST

static Suite *unit_cvu_logic_suite(void)
{
	Suite *s = suite_create("unit_cvu_logic");
	TCase *tc = tcase_create("cvu_logic");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_compare_logic_to_u8);
	tcase_add_test(tc, test_compare_int32);
	tcase_add_test(tc, test_int32_arith);
	tcase_add_test(tc, test_int32_mod);
	tcase_add_test(tc, test_not_trunc);
	tcase_add_test(tc, test_select);
	tcase_add_test(tc, test_scan);
	tcase_add_test(tc, test_argmax_argmin);
	tcase_add_test(tc, test_argmax_int32);
	tcase_add_test(tc, test_cycles);
	tcase_add_test(tc, test_validation);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(unit_cvu_logic_suite)
