// SPDX-License-Identifier: MIT
/*
 * Detection and ranking operators (issue 17) on the emulator, against C
 * references: TopK on the CSU (last axis over many tiles, a middle axis,
 * largest and smallest, ties and NaN), OneHot (negative and out-of-range
 * indices, an inner axis), Compress with a constant condition (an axis,
 * and flattened), NonZero of a constant (folded), Mod of integers (CVU
 * MOD/FMOD), MaxPool's Indices output; NonMaxSuppression,
 * Unique and NonZero of run-time data refused by name, pointing at the
 * CPU fallback.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_ops.h"
#include "ir_build.h"
#include "model/npu_cmodel.h"
#include "npu/npu_hw_isa.h"
#include "npu_test.h"

#define D(...) ((int64_t[]){ __VA_ARGS__ })

static struct npu_cmodel *build(npu_ir_graph *g)
{
	struct npu_cmodel *cm = NULL;

	ck_assert_msg(npu_ops_infer_shapes(g) == NPU_OK, "%s", npu_last_error());
	ck_assert_msg(irb_compile(g, "emu", &cm) == NPU_OK, "%s", npu_last_error());
	return cm;
}

static void exec(struct npu_cmodel *cm, void *const *x, void *const *y)
{
	npu_status st = irb_exec(cm, "emu", x, y);

	ck_assert_msg(st == NPU_OK, "%s", npu_last_error());
}

static int out_t(npu_ir_graph *g, const char *name, npu_dtype dt)
{
	return irb_tensor(g, name, dt, -1, NULL);
}

/* a ranks before b: larger (smaller) first, NaN after every number, lower index on ties. */
static bool ranks_before(float a, int ia, float b, int ib, bool largest)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b) ? ia < ib : !isnan(a);
	if (a != b)
		return largest ? a > b : a < b;
	return ia < ib;
}

/* Reference TopK of @n elements @stride apart: the first @k positions. */
static void ref_topk(const float *x, int n, int stride, int k, bool largest, int *pos)
{
	bool *used = calloc((size_t)n, 1);

	for (int j = 0; j < k; j++) {
		int best = -1;

		for (int i = 0; i < n; i++)
			if (!used[i] && (best < 0 || ranks_before(x[i * stride], i,
								   x[best * stride], best, largest)))
				best = i;
		used[best] = true;
		pos[j] = best;
	}
	free(used);
}

static void check_topk(const float *x, const float *v, const int64_t *ix, int outer, int n,
		       int inner, int k, bool largest)
{
	int pos[64];

	for (int o = 0; o < outer; o++)
		for (int in = 0; in < inner; in++) {
			const float *row = x + (size_t)o * n * inner + in;

			ref_topk(row, n, inner, k, largest, pos);
			for (int j = 0; j < k; j++) {
				size_t at = ((size_t)o * k + j) * inner + in;
				float want = row[pos[j] * inner];

				ck_assert_msg(ix[at] == pos[j], "row %d/%d rank %d: index %lld want %d",
					      o, in, j, (long long)ix[at], pos[j]);
				ck_assert_msg((isnan(want) && isnan(v[at])) || v[at] == want,
					      "row %d/%d rank %d: %g want %g", o, in, j, v[at], want);
			}
		}
}

/* [70, 37] along the last axis, k 7, largest: many tiles, ties, NaN, -inf. */
START_TEST(topk_last_axis)
{
	enum { R = 70, N = 37, K = 7 };
	npu_ir_graph *g = irb_graph(11);
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 2, D(R, N));
	int k = irb_const(g, "k", NPU_DTYPE_INT64, 1, D(1), (int64_t[]){ K });
	int v = out_t(g, "values", NPU_DTYPE_FLOAT32), ix = out_t(g, "indices", NPU_DTYPE_INT64);
	static float xv[R * N], yv[R * K];
	static int64_t yi[R * K];

	irb_node(g, "TopK", (int[]){ x, k }, 2, (int[]){ v, ix }, 2);
	irb_io(g, &x, 1, (int[]){ v, ix }, 2);
	for (int i = 0; i < R * N; i++)
		xv[i] = (float)((i * 7919) % 23) - 11.0f;	/* many ties */
	xv[3] = NAN;
	xv[N + 5] = INFINITY;
	xv[2 * N + 1] = -INFINITY;
	for (int i = 0; i < N; i++)
		xv[5 * N + i] = NAN;	/* a row of NaN only: positions in order */
	exec(build(g), (void *[]){ xv }, (void *[]){ yv, yi });
	check_topk(xv, yv, yi, R, N, 1, K, true);
	npu_ir_graph_free(g);
}
END_TEST

/* [3, 10, 4] along axis 1 (inner 4), k 3, smallest; and sorted = 1 said. */
START_TEST(topk_middle_axis_smallest)
{
	enum { O = 3, N = 10, I = 4, K = 3 };
	npu_ir_graph *g = irb_graph(11);
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, D(O, N, I));
	int k = irb_const(g, "k", NPU_DTYPE_INT64, 1, D(1), (int64_t[]){ K });
	int v = out_t(g, "values", NPU_DTYPE_FLOAT32), ix = out_t(g, "indices", NPU_DTYPE_INT64);
	float xv[O * N * I], yv[O * K * I];
	int64_t yi[O * K * I];
	npu_ir_node *n = irb_node(g, "TopK", (int[]){ x, k }, 2, (int[]){ v, ix }, 2);

	ck_assert_int_eq(npu_ir_set_attr_int(n, "axis", 1), NPU_OK);
	ck_assert_int_eq(npu_ir_set_attr_int(n, "largest", 0), NPU_OK);
	ck_assert_int_eq(npu_ir_set_attr_int(n, "sorted", 1), NPU_OK);
	irb_io(g, &x, 1, (int[]){ v, ix }, 2);
	for (int i = 0; i < O * N * I; i++)
		xv[i] = sinf((float)i * 1.7f) * 100.0f;
	xv[4] = xv[8];	/* a tie in column 0 of slice 0 */
	exec(build(g), (void *[]){ xv }, (void *[]){ yv, yi });
	check_topk(xv, yv, yi, O, N, I, K, false);
	npu_ir_graph_free(g);
}
END_TEST

/* K computed at run time: refused by name (the output shape depends on it). */
START_TEST(topk_runtime_k_refused)
{
	npu_ir_graph *g = irb_graph(11);
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 2, D(2, 8));
	int k = irb_tensor(g, "k", NPU_DTYPE_INT64, 1, D(1));
	int v = out_t(g, "values", NPU_DTYPE_FLOAT32), ix = out_t(g, "indices", NPU_DTYPE_INT64);

	irb_node(g, "TopK", (int[]){ x, k }, 2, (int[]){ v, ix }, 2);
	irb_io(g, (int[]){ x, k }, 2, (int[]){ v, ix }, 2);
	ck_assert_int_ne(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_msg(strstr(npu_last_error(), "TopK") && strstr(npu_last_error(), "'k'") &&
		      strstr(npu_last_error(), "must be a constant"), "%s", npu_last_error());
	npu_ir_graph_free(g);
}
END_TEST

/* OneHot of int64 [2, 3] (negative, out of range), depth 5, axis 1, float values. */
START_TEST(onehot_axis_negative)
{
	enum { A = 2, B = 3, DEP = 5 };
	npu_ir_graph *g = irb_graph(11);
	int ind = irb_tensor(g, "ind", NPU_DTYPE_INT64, 2, D(A, B));
	int dep = irb_const(g, "depth", NPU_DTYPE_INT64, 0, NULL, (int64_t[]){ DEP });
	int val = irb_const(g, "values", NPU_DTYPE_FLOAT32, 1, D(2), (float[]){ 0.5f, -2.0f });
	int y = out_t(g, "y", NPU_DTYPE_FLOAT32);
	int64_t iv[A * B] = { 0, 4, -1, -5, 5, -6 };
	float yv[A * DEP * B];
	npu_ir_node *n = irb_node(g, "OneHot", (int[]){ ind, dep, val }, 3, &y, 1);

	ck_assert_int_eq(npu_ir_set_attr_int(n, "axis", 1), NPU_OK);
	irb_io(g, &ind, 1, &y, 1);
	exec(build(g), (void *[]){ iv }, (void *[]){ yv });
	for (int a = 0; a < A; a++)
		for (int d = 0; d < DEP; d++)
			for (int b = 0; b < B; b++) {
				int64_t i = iv[a * B + b], norm = i < 0 ? i + DEP : i;
				float want = norm == d ? -2.0f : 0.5f;

				ck_assert_msg(yv[(a * DEP + d) * B + b] == want,
					      "y[%d][%d][%d] = %g want %g", a, d, b,
					      yv[(a * DEP + d) * B + b], want);
			}
	npu_ir_graph_free(g);
}
END_TEST

/* Compress along axis 1 of [3, 4, 2], and flattened with a short condition. */
START_TEST(compress_constant_condition)
{
	npu_ir_graph *g = irb_graph(11);
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, D(3, 4, 2));
	int c1 = irb_const(g, "c1", NPU_DTYPE_BOOL, 1, D(4), (uint8_t[]){ 1, 0, 1, 1 });
	int c2 = irb_const(g, "c2", NPU_DTYPE_BOOL, 1, D(7), (uint8_t[]){ 0, 1, 1, 0, 0, 1, 1 });
	int y1 = out_t(g, "y1", NPU_DTYPE_FLOAT32), y2 = out_t(g, "y2", NPU_DTYPE_FLOAT32);
	static const int keep1[3] = { 0, 2, 3 }, keep2[4] = { 1, 2, 5, 6 };
	float xv[24], r1[18], r2[4];
	npu_ir_node *n = irb_node(g, "Compress", (int[]){ x, c1 }, 2, &y1, 1);

	ck_assert_int_eq(npu_ir_set_attr_int(n, "axis", -2), NPU_OK);
	irb_node(g, "Compress", (int[]){ x, c2 }, 2, &y2, 1);
	irb_io(g, &x, 1, (int[]){ y1, y2 }, 2);
	for (int i = 0; i < 24; i++)
		xv[i] = (float)i * 1.5f - 7.0f;
	exec(build(g), (void *[]){ xv }, (void *[]){ r1, r2 });
	for (int a = 0; a < 3; a++)
		for (int j = 0; j < 3; j++)
			for (int b = 0; b < 2; b++)
				ck_assert(r1[(a * 3 + j) * 2 + b] == xv[(a * 4 + keep1[j]) * 2 + b]);
	for (int j = 0; j < 4; j++)
		ck_assert(r2[j] == xv[keep2[j]]);
	npu_ir_graph_free(g);
}
END_TEST

/* NonZero of a constant folds: coordinates row-major, -0.0 is zero. */
START_TEST(nonzero_constant_folds)
{
	npu_ir_graph *g = irb_graph(13);
	int c = irb_const(g, "c", NPU_DTYPE_FLOAT32, 2, D(2, 3),
			  (float[]){ 1.0f, 0.0f, -0.0f, 0.0f, NAN, -3.0f });
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 1, D(1));
	int y = out_t(g, "y", NPU_DTYPE_INT64), z = out_t(g, "z", NPU_DTYPE_FLOAT32);
	int64_t yv[6], want[6] = { 0, 1, 1, 0, 1, 2 };
	float xv = 1.0f, zv;

	irb_node(g, "NonZero", &c, 1, &y, 1);
	irb_node(g, "Identity", &x, 1, &z, 1);
	irb_io(g, &x, 1, (int[]){ y, z }, 2);
	exec(build(g), (void *[]){ &xv }, (void *[]){ yv, &zv });
	for (int i = 0; i < 6; i++)
		ck_assert_msg(yv[i] == want[i], "element %d: %lld want %lld", i,
			      (long long)yv[i], (long long)want[i]);
	npu_ir_graph_free(g);
}
END_TEST

/*
 * Mod of int64 (int32 on the device) with broadcasting: Python's sign
 * and, with fmod = 1, C's; exact beyond 2^24 (ISA 1.4's CVU MOD/FMOD).
 */
START_TEST(mod_int)
{
	enum { R = 3, C = 4 };
	npu_ir_graph *g = irb_graph(13);
	int a = irb_tensor(g, "a", NPU_DTYPE_INT64, 2, D(R, C));
	int b = irb_tensor(g, "b", NPU_DTYPE_INT64, 1, D(C));
	int y0 = out_t(g, "y0", NPU_DTYPE_INT64), y1 = out_t(g, "y1", NPU_DTYPE_INT64);
	int64_t av[R * C] = { 7, -7, 7, -7, 100000007, -100000007, 16777217, 0,
			      2147483647, -2147483647, 5, -5 };
	int64_t bv[C] = { 3, -3, 16777216, 9 }, r0[R * C], r1[R * C];
	struct npu_cmodel *cm;
	const char *what;
	uint32_t step;
	npu_ir_node *n;

	irb_node(g, "Mod", (int[]){ a, b }, 2, &y0, 1);
	n = irb_node(g, "Mod", (int[]){ a, b }, 2, &y1, 1);
	ck_assert_int_eq(npu_ir_set_attr_int(n, "fmod", 1), NPU_OK);
	irb_io(g, (int[]){ a, b }, 2, (int[]){ y0, y1 }, 2);
	cm = build(g);
	/* ISA 1.4's functions: a 1.3 device refuses the model by name. */
	ck_assert_uint_eq(npu_cmodel_isa_minor(cm, &step, &what), 4);
	ck_assert_str_eq(what, "a CVU function");
	ck_assert_int_eq(npu_cmodel_check_isa(cm, NPU_PROG_VERSION_MAJOR << 16 | 3),
			 NPU_ERR_VERSION);
	exec(cm, (void *[]){ av, bv }, (void *[]){ r0, r1 });
	for (int i = 0; i < R * C; i++) {
		int64_t x = av[i], d = bv[i % C], f = x % d, m = f && ((f < 0) != (d < 0)) ? f + d : f;

		ck_assert_msg(r0[i] == m, "Mod element %d: %lld %% %lld gave %lld want %lld", i,
			      (long long)x, (long long)d, (long long)r0[i], (long long)m);
		ck_assert_msg(r1[i] == f, "fmod element %d: %lld %% %lld gave %lld want %lld", i,
			      (long long)x, (long long)d, (long long)r1[i], (long long)f);
	}
	npu_ir_graph_free(g);
}
END_TEST

/*
 * MaxPool's Indices output, against ONNX's reference loop over each
 * window: kernel 3x2, strides 2x3, asymmetric pads; and kernel 2x2 with
 * dilations 2x2; many ties (the first in scan order wins); row-major and
 * (storage_order 1) column-major flat indices.
 */
START_TEST(maxpool_indices)
{
	enum { N = 2, C = 3, H = 7, W = 8, MAXO = N * C * H * W };
	static const int cfg[2][10] = {
		/* KH KW SH SW DH DW PT PL PB PR */
		{ 3, 2, 2, 3, 1, 1, 1, 0, 1, 1 },
		{ 2, 2, 1, 1, 2, 2, 0, 0, 0, 0 },
	};
	static float xv[MAXO], yv[MAXO];
	static int64_t iv[MAXO];

	for (int i = 0; i < MAXO; i++)
		xv[i] = (float)((i * 37) % 11) - 5.0f;	/* ties in most windows */
	for (int t = 0; t < 4; t++) {
		const int *q = cfg[t / 2], order = t % 2;
		int KH = q[0], KW = q[1], SH = q[2], SW = q[3], DH = q[4], DW = q[5];
		int PT = q[6], PL = q[7], PB = q[8], PR = q[9];
		int HO = (H + PT + PB - ((KH - 1) * DH + 1)) / SH + 1;
		int WO = (W + PL + PR - ((KW - 1) * DW + 1)) / SW + 1;
		npu_ir_graph *g = irb_graph(12);
		int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, D(N, C, H, W));
		int y = out_t(g, "y", NPU_DTYPE_FLOAT32), ix = out_t(g, "ix", NPU_DTYPE_INT64);
		npu_ir_node *n = irb_node(g, "MaxPool", &x, 1, (int[]){ y, ix }, 2);

		ck_assert_int_eq(npu_ir_set_attr_ints(n, "kernel_shape", D(KH, KW), 2), NPU_OK);
		ck_assert_int_eq(npu_ir_set_attr_ints(n, "strides", D(SH, SW), 2), NPU_OK);
		ck_assert_int_eq(npu_ir_set_attr_ints(n, "dilations", D(DH, DW), 2), NPU_OK);
		ck_assert_int_eq(npu_ir_set_attr_ints(n, "pads", D(PT, PL, PB, PR), 4), NPU_OK);
		ck_assert_int_eq(npu_ir_set_attr_int(n, "storage_order", order), NPU_OK);
		irb_io(g, &x, 1, (int[]){ y, ix }, 2);
		exec(build(g), (void *[]){ xv }, (void *[]){ yv, iv });
		for (int c = 0; c < N * C; c++)
			for (int oh = 0; oh < HO; oh++)
				for (int ow = 0; ow < WO; ow++) {
					int at = (c * HO + oh) * WO + ow, bh = -1, bw = -1;
					float best = 0;
					int64_t want;

					for (int i = 0; i < KH; i++)
						for (int j = 0; j < KW; j++) {
							int h = oh * SH - PT + i * DH, w = ow * SW - PL + j * DW;
							float v;

							if (h < 0 || h >= H || w < 0 || w >= W)
								continue;
							v = xv[(c * H + h) * W + w];
							if (bh < 0 || v > best) {
								best = v;
								bh = h;
								bw = w;
							}
						}
					want = (int64_t)c * H * W + (order ? bh + bw * H : bh * W + bw);
					ck_assert_msg(iv[at] == want && yv[at] == best,
						      "case %d window %d: index %lld value %g, want %lld %g",
						      t, at, (long long)iv[at], yv[at], (long long)want, best);
				}
		npu_ir_graph_free(g);
	}
}
END_TEST

/* Data-sized outputs computed at run time: refused, naming the CPU fallback. */
START_TEST(data_sized_outputs_refused)
{
	static const char *ops[3] = { "NonMaxSuppression", "Unique", "NonZero" };

	for (int i = 0; i < 3; i++) {
		npu_ir_graph *g = irb_graph(13);
		int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, D(1, 6, 4));
		int s = irb_tensor(g, "s", NPU_DTYPE_FLOAT32, 3, D(1, 1, 6));
		int y = out_t(g, "y", i == 1 ? NPU_DTYPE_FLOAT32 : NPU_DTYPE_INT64);
		struct npu_cmodel *cm = NULL;
		npu_status st;

		irb_node(g, ops[i], (int[]){ x, s }, i ? 1 : 2, &y, 1);
		irb_io(g, (int[]){ x, s }, 2, &y, 1);
		st = npu_ops_infer_shapes(g);
		if (!st)
			st = irb_compile(g, "emu", &cm);
		ck_assert_int_ne(st, NPU_OK);
		ck_assert_msg(strstr(npu_last_error(), ops[i]) &&
			      strstr(npu_last_error(), "known only at run time") &&
			      strstr(npu_last_error(), "--cpu-fallback"),
			      "%s: %s", ops[i], npu_last_error());
		npu_cmodel_free(cm);
		npu_ir_graph_free(g);
	}
}
END_TEST

static Suite *detect_suite(void)
{
	Suite *s = suite_create("detect");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, topk_last_axis);
	tcase_add_test(tc, topk_middle_axis_smallest);
	tcase_add_test(tc, topk_runtime_k_refused);
	tcase_add_test(tc, onehot_axis_negative);
	tcase_add_test(tc, compress_constant_condition);
	tcase_add_test(tc, nonzero_constant_folds);
	tcase_add_test(tc, data_sized_outputs_refused);
	tcase_add_test(tc, mod_int);
	tcase_add_test(tc, maxpool_indices);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(detect_suite)
