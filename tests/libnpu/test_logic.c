// SPDX-License-Identifier: MIT
/*
 * Bools and integers computed at run time (issue 15, section 3) on the
 * emulator, against C references: comparisons and logic with numpy
 * broadcasting (float32, int32 and bool inputs, a constant bool among
 * them), Where with a run-time condition (exact for inf and NaN in the
 * branch not taken; int64 values), Cast among float32, float16, int32,
 * int8 and bool, ArgMax/ArgMin and CumSum, IsNaN/IsInf, Dropout's mask;
 * bool inputs and outputs at the model boundary and a bool input byte
 * other than 0 or 1 refused by name; the program version gate.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_ops.h"
#include "ir_build.h"
#include "model/npu_cmodel.h"
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

static npu_ir_node *node1(npu_ir_graph *g, const char *op, const int *in, int nin, int out)
{
	return irb_node(g, op, in, nin, &out, 1);
}

static int out_t(npu_ir_graph *g, const char *name, npu_dtype dt)
{
	return irb_tensor(g, name, dt, -1, NULL);
}

enum { A0 = 2, A1 = 3, A2 = 4, NA = A0 * A1 * A2, NCMP = 11 };

/*
 * a float [2,3,4] against b float [3,1]; ai int32 [2,3,4] against bi
 * int32 [4]; p bool [2,3,4] with the constant bool q [1,4].
 */
START_TEST(compare_logic_broadcast)
{
	static const char *ops[NCMP] = { "Equal", "Less", "Greater", "LessOrEqual",
					 "GreaterOrEqual", "Equal", "Less", "And", "Or", "Xor",
					 "Not" };
	static const uint8_t qv[A2] = { 1, 0, 1, 0 };
	npu_ir_graph *g = irb_graph(13);
	int a = irb_tensor(g, "a", NPU_DTYPE_FLOAT32, 3, D(A0, A1, A2));
	int b = irb_tensor(g, "b", NPU_DTYPE_FLOAT32, 2, D(A1, 1));
	int ai = irb_tensor(g, "ai", NPU_DTYPE_INT32, 3, D(A0, A1, A2));
	int bi = irb_tensor(g, "bi", NPU_DTYPE_INT32, 1, D(A2));
	int p = irb_tensor(g, "p", NPU_DTYPE_BOOL, 3, D(A0, A1, A2));
	int q = irb_const(g, "q", NPU_DTYPE_BOOL, 2, D(1, A2), qv);
	int out[NCMP];
	float av[NA], bv[A1];
	int32_t aiv[NA], biv[A2];
	uint8_t pv[NA], y[NCMP][NA];
	void *ys[NCMP];

	for (int k = 0; k < NCMP; k++) {
		char name[16];
		int in[2];

		snprintf(name, sizeof(name), "y%d", k);
		out[k] = out_t(g, name, NPU_DTYPE_BOOL);
		in[0] = k < 5 ? a : k < 7 ? ai : p;
		in[1] = k < 5 ? b : k < 7 ? bi : q;
		node1(g, ops[k], in, k == NCMP - 1 ? 1 : 2, out[k]);
		ys[k] = y[k];
	}
	irb_io(g, (int[]){ a, b, ai, bi, p }, 5, out, NCMP);
	for (int i = 0; i < NA; i++) {
		av[i] = (float)(i % 7) - 3.0f;
		aiv[i] = (i % 5) * 1000003 - 2000000;
		pv[i] = (uint8_t)(i % 3 == 0);
	}
	av[5] = NAN;
	av[6] = INFINITY;
	av[7] = -0.0f;
	bv[0] = 0.0f;
	bv[1] = -1.0f;
	bv[2] = NAN;
	for (int j = 0; j < A2; j++)
		biv[j] = j * 1000003 - 2000000;
	/* int32 compares as integers: neighbours fp32 would merge */
	aiv[0] = INT32_MAX - 1;
	biv[0] = INT32_MAX - 2;
	aiv[1] = 16777217;
	biv[1] = 16777216;
	memset(y, 0xee, sizeof(y));
	exec(build(g), (void *[]){ av, bv, aiv, biv, pv }, ys);
	for (int i = 0; i < NA; i++) {
		float x0 = av[i], x1 = bv[(i / A2) % A1];
		int32_t i0 = aiv[i], i1 = biv[i % A2];
		bool p0 = pv[i], q0 = qv[i % A2];
		const int want[NCMP] = { x0 == x1, x0 < x1, x0 > x1, x0 <= x1, x0 >= x1, i0 == i1,
					 i0 < i1, p0 && q0, p0 || q0, p0 != q0, !p0 };

		for (int k = 0; k < NCMP; k++)
			ck_assert_msg(y[k][i] == want[k], "%s (output %d) element %d: %u want %d",
				      ops[k], k, i, y[k][i], want[k]);
	}
	npu_ir_graph_free(g);
}
END_TEST

/* Comparisons of float16 and uint8 tensors (read exactly as fp32). */
START_TEST(compare_narrow_types)
{
	npu_ir_graph *g = irb_graph(13);
	int h = irb_tensor(g, "h", NPU_DTYPE_FLOAT16, 1, D(4));
	int hc = irb_const(g, "hc", NPU_DTYPE_FLOAT16, 0, NULL, (uint16_t[]){ 0x3c00 });
	int u = irb_tensor(g, "u", NPU_DTYPE_UINT8, 1, D(4));
	int uc = irb_const(g, "uc", NPU_DTYPE_UINT8, 0, NULL, (uint8_t[]){ 200 });
	int y0 = out_t(g, "y0", NPU_DTYPE_BOOL), y1 = out_t(g, "y1", NPU_DTYPE_BOOL);
	uint16_t hv[4] = { 0x3c00, 0x3c01, 0xbc00, 0x7e00 };	/* 1, 1+ulp, -1, NaN */
	uint8_t uv[4] = { 199, 200, 201, 255 }, r0[4], r1[4];

	node1(g, "Equal", (int[]){ h, hc }, 2, y0);
	node1(g, "GreaterOrEqual", (int[]){ u, uc }, 2, y1);
	irb_io(g, (int[]){ h, u }, 2, (int[]){ y0, y1 }, 2);
	exec(build(g), (void *[]){ hv, uv }, (void *[]){ r0, r1 });
	ck_assert(r0[0] == 1 && r0[1] == 0 && r0[2] == 0 && r0[3] == 0);
	ck_assert(r1[0] == 0 && r1[1] == 1 && r1[2] == 1 && r1[3] == 1);
	npu_ir_graph_free(g);
}
END_TEST

/*
 * Where(c [2,1,4] bool input, x [2,3,4] float with inf and NaN, y [4]):
 * bits of the chosen branch; and Where over int64 values (int32 on the
 * device) with a constant int64 fill.
 */
START_TEST(where_runtime_condition)
{
	npu_ir_graph *g = irb_graph(13);
	int c = irb_tensor(g, "c", NPU_DTYPE_BOOL, 3, D(2, 1, 4));
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, D(2, 3, 4));
	int y = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, 1, D(4));
	int xi = irb_tensor(g, "xi", NPU_DTYPE_INT64, 3, D(2, 3, 4));
	int fill = irb_const(g, "fill", NPU_DTYPE_INT64, 0, NULL, (int64_t[]){ -2000000001 });
	int z = out_t(g, "z", NPU_DTYPE_FLOAT32), zi = out_t(g, "zi", NPU_DTYPE_INT64);
	uint8_t cv[8] = { 1, 0, 0, 1, 0, 1, 1, 0 };
	float xv[24], yv[4] = { NAN, -INFINITY, 0.5f, -0.0f }, zv[24];
	int64_t xiv[24], ziv[24];

	node1(g, "Where", (int[]){ c, x, y }, 3, z);
	node1(g, "Where", (int[]){ c, fill, xi }, 3, zi);
	irb_io(g, (int[]){ c, x, y, xi }, 4, (int[]){ z, zi }, 2);
	for (int i = 0; i < 24; i++) {
		xv[i] = (float)i - 11.5f;
		xiv[i] = 2000000000 - i;
	}
	xv[0] = INFINITY;
	xv[3] = NAN;
	exec(build(g), (void *[]){ cv, xv, yv, xiv }, (void *[]){ zv, ziv });
	for (int i = 0; i < 24; i++) {
		bool take = cv[(i / 12) * 4 + i % 4];
		float want = take ? xv[i] : yv[i % 4];

		ck_assert_msg(!memcmp(&zv[i], &want, 4), "z[%d] = %g want %g", i, zv[i], want);
		ck_assert_msg(ziv[i] == (take ? -2000000001 : xiv[i]), "zi[%d] = %lld", i,
			      (long long)ziv[i]);
	}
	npu_ir_graph_free(g);
}
END_TEST

enum { NC = 8 };

/* Cast at run time: float to int32/int8/bool/float16, int32 and bool back. */
START_TEST(cast_runtime)
{
	static const npu_dtype to[7] = { NPU_DTYPE_INT32, NPU_DTYPE_INT8, NPU_DTYPE_BOOL,
					 NPU_DTYPE_FLOAT16, NPU_DTYPE_FLOAT32, NPU_DTYPE_BOOL,
					 NPU_DTYPE_INT32 };
	npu_ir_graph *g = irb_graph(13);
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 1, D(NC));
	int xi = irb_tensor(g, "xi", NPU_DTYPE_INT32, 1, D(NC));
	int xb = irb_tensor(g, "xb", NPU_DTYPE_BOOL, 1, D(NC));
	int src[7] = { x, x, x, x, xi, xi, xb }, out[7];
	float xv[NC] = { -2.75f, 2.75f, -0.5f, 0.0f, 100.9f, -128.2f, 1e-30f, 3.0f }, fi[NC];
	int32_t xiv[NC] = { 0, 1, -1, 16777217, -16777219, 2147483647, 7, -7 }, i32[NC], b32[NC];
	uint8_t xbv[NC] = { 1, 0, 0, 1, 1, 0, 1, 0 }, fb[NC], ib[NC];
	int8_t i8[NC];
	uint16_t h[NC];

	for (int k = 0; k < 7; k++) {
		char name[16];
		npu_ir_node *n;

		snprintf(name, sizeof(name), "c%d", k);
		out[k] = out_t(g, name, to[k]);
		n = node1(g, "Cast", &src[k], 1, out[k]);
		ck_assert_int_eq(npu_ir_set_attr_int(n, "to", to[k]), NPU_OK);
	}
	irb_io(g, (int[]){ x, xi, xb }, 3, out, 7);
	exec(build(g), (void *[]){ xv, xiv, xbv },
	     (void *[]){ i32, i8, fb, h, fi, ib, b32 });
	for (int i = 0; i < NC; i++) {
		ck_assert_msg(i32[i] == (int32_t)xv[i], "int32 %d: %d", i, i32[i]);
		ck_assert_msg(i8[i] == (int8_t)xv[i], "int8 %d: %d", i, i8[i]);
		ck_assert_msg(fb[i] == (xv[i] != 0), "bool %d: %u", i, fb[i]);
		ck_assert_msg(fi[i] == (float)xiv[i], "float of int32 %d: %g", i, fi[i]);
		ck_assert_msg(ib[i] == (xiv[i] != 0), "bool of int32 %d: %u", i, ib[i]);
		ck_assert_msg(b32[i] == xbv[i], "int32 of bool %d: %d", i, b32[i]);
	}
	ck_assert_uint_eq(h[0], 0xc180);	/* -2.75 in float16 */
	ck_assert_uint_eq(h[3], 0);
	npu_ir_graph_free(g);

	/* int32 to int8 wraps in ONNX: refused by name. */
	g = irb_graph(13);
	xi = irb_tensor(g, "xi", NPU_DTYPE_INT32, 1, D(NC));
	out[0] = out_t(g, "y", NPU_DTYPE_INT8);
	ck_assert_int_eq(npu_ir_set_attr_int(node1(g, "Cast", &xi, 1, out[0]), "to",
					     NPU_DTYPE_INT8), NPU_OK);
	irb_io(g, &xi, 1, out, 1);
	{
		struct npu_cmodel *cm = NULL;

		ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
		ck_assert_int_eq(irb_compile(g, "emu", &cm), NPU_ERR_UNSUPPORTED);
		ck_assert_msg(strstr(npu_last_error(),
				     "(Cast): Cast from int32 to int8 at run time: ONNX wraps"),
			      "%s", npu_last_error());
	}
	npu_ir_graph_free(g);
}
END_TEST

enum { R0 = 2, R1 = 5, R2 = 3 };

/*
 * x [2,5,3]: ArgMax over axis 1 (no keepdims), ArgMin over the last axis
 * (select_last_index, keepdims), CumSum over axis 1 (exclusive, reverse)
 * and an int64 CumSum over axis 0 beyond 2^24.
 */
START_TEST(argmax_cumsum)
{
	npu_ir_graph *g = irb_graph(14);
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, D(R0, R1, R2));
	int xi = irb_tensor(g, "xi", NPU_DTYPE_INT64, 3, D(R0, R1, R2));
	int ax1 = irb_const(g, "ax1", NPU_DTYPE_INT64, 0, NULL, (int64_t[]){ 1 });
	int ax0 = irb_const(g, "ax0", NPU_DTYPE_INT32, 0, NULL, (int32_t[]){ 0 });
	int amax = out_t(g, "amax", NPU_DTYPE_INT64), amin = out_t(g, "amin", NPU_DTYPE_INT64);
	int cs = out_t(g, "cs", NPU_DTYPE_FLOAT32), csi = out_t(g, "csi", NPU_DTYPE_INT64);
	enum { N = R0 * R1 * R2 };
	float xv[N], csv[N];
	int64_t xiv[N], amaxv[R0 * R2], aminv[R0 * R1], csiv[N];
	npu_ir_node *n;

	n = node1(g, "ArgMax", &x, 1, amax);
	ck_assert_int_eq(npu_ir_set_attr_int(n, "axis", 1), NPU_OK);
	ck_assert_int_eq(npu_ir_set_attr_int(n, "keepdims", 0), NPU_OK);
	n = node1(g, "ArgMin", &x, 1, amin);
	ck_assert_int_eq(npu_ir_set_attr_int(n, "axis", -1), NPU_OK);
	ck_assert_int_eq(npu_ir_set_attr_int(n, "select_last_index", 1), NPU_OK);
	n = node1(g, "CumSum", (int[]){ x, ax1 }, 2, cs);
	ck_assert_int_eq(npu_ir_set_attr_int(n, "exclusive", 1), NPU_OK);
	ck_assert_int_eq(npu_ir_set_attr_int(n, "reverse", 1), NPU_OK);
	node1(g, "CumSum", (int[]){ xi, ax0 }, 2, csi);
	irb_io(g, (int[]){ x, xi }, 2, (int[]){ amax, amin, cs, csi }, 4);
	for (int i = 0; i < N; i++) {
		xv[i] = (float)((i * 7) % 5) - 2.0f;	/* ties in every row */
		xiv[i] = 30000001 + i;
	}
	exec(build(g), (void *[]){ xv, xiv }, (void *[]){ amaxv, aminv, csv, csiv });
	for (int a = 0; a < R0; a++) {
		for (int c = 0; c < R2; c++) {
			int best = 0;

			for (int b = 1; b < R1; b++)
				if (xv[(a * R1 + b) * R2 + c] > xv[(a * R1 + best) * R2 + c])
					best = b;
			ck_assert_msg(amaxv[a * R2 + c] == best, "argmax [%d,%d] = %lld want %d", a,
				      c, (long long)amaxv[a * R2 + c], best);
		}
		for (int b = 0; b < R1; b++) {
			const float *row = &xv[(a * R1 + b) * R2];
			int best = 0;

			for (int c = 1; c < R2; c++)
				if (row[c] <= row[best])
					best = c;
			ck_assert_msg(aminv[a * R1 + b] == best, "argmin [%d,%d] = %lld want %d", a,
				      b, (long long)aminv[a * R1 + b], best);
		}
	}
	for (int a = 0; a < R0; a++)
		for (int b = 0; b < R1; b++)
			for (int c = 0; c < R2; c++) {
				float s = 0;
				int at = (a * R1 + b) * R2 + c;

				for (int k = R1 - 1; k > b; k--)
					s += xv[(a * R1 + k) * R2 + c];
				ck_assert_msg(csv[at] == s, "cumsum %d: %g want %g", at, csv[at], s);
				ck_assert_msg(csiv[at] == (a ? xiv[at] + xiv[at - R1 * R2] : xiv[at]),
					      "int cumsum %d: %lld", at, (long long)csiv[at]);
			}
	npu_ir_graph_free(g);
}
END_TEST

/* A bool output of a bool input; a byte other than 0 or 1 refused by name. */
START_TEST(bool_boundary)
{
	uint8_t in[6] = { 0, 1, 1, 0, 2, 1 }, out[6];
	npu_ir_graph *g;
	int p, y;

	for (int round = 0; round < 2; round++) {
		npu_status st;

		g = irb_graph(13);
		p = irb_tensor(g, "mask", NPU_DTYPE_BOOL, 2, D(2, 3));
		y = out_t(g, "y", NPU_DTYPE_BOOL);
		node1(g, "Not", &p, 1, y);
		irb_io(g, &p, 1, &y, 1);
		in[4] = round ? 2 : 1;
		st = irb_exec(build(g), "emu", (void *[]){ in }, (void *[]){ out });
		if (round) {
			ck_assert_int_eq(st, NPU_ERR_INVALID_ARG);
			ck_assert_str_eq(npu_last_error(),
					 "input 'mask': element 4 is 2; a bool tensor holds bytes 0 (false) and 1 (true) only");
		} else {
			ck_assert_msg(st == NPU_OK, "%s", npu_last_error());
			for (int i = 0; i < 6; i++)
				ck_assert_uint_eq(out[i], !in[i]);
		}
		npu_ir_graph_free(g);
	}
}
END_TEST

/* IsNaN and IsInf (every detect_* combination) rewritten into comparisons. */
START_TEST(isnan_isinf)
{
	npu_ir_graph *g = irb_graph(13);
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 2, D(2, 3));
	int out[5];
	float xv[6] = { NAN, INFINITY, -INFINITY, 0.0f, -3.5f, 3.4e38f };
	uint8_t y[5][6];

	out[0] = out_t(g, "nan", NPU_DTYPE_BOOL);
	node1(g, "IsNaN", &x, 1, out[0]);
	for (int k = 1; k < 5; k++) {
		char name[16];
		npu_ir_node *n;

		snprintf(name, sizeof(name), "inf%d", k);
		out[k] = out_t(g, name, NPU_DTYPE_BOOL);
		n = node1(g, "IsInf", &x, 1, out[k]);
		if (k > 1) {
			ck_assert_int_eq(npu_ir_set_attr_int(n, "detect_positive", k & 1), NPU_OK);
			ck_assert_int_eq(npu_ir_set_attr_int(n, "detect_negative", k == 2), NPU_OK);
		}
	}
	irb_io(g, &x, 1, out, 5);
	exec(build(g), (void *[]){ xv }, (void *[]){ y[0], y[1], y[2], y[3], y[4] });
	for (int i = 0; i < 6; i++) {
		ck_assert_uint_eq(y[0][i], isnan(xv[i]) != 0);
		ck_assert_uint_eq(y[1][i], isinf(xv[i]) != 0);
		ck_assert_uint_eq(y[2][i], isinf(xv[i]) && xv[i] < 0);	/* negative only */
		ck_assert_uint_eq(y[3][i], isinf(xv[i]) && xv[i] > 0);	/* positive only */
		ck_assert_uint_eq(y[4][i], 0);				/* neither */
	}
	npu_ir_graph_free(g);
}
END_TEST

/* Max and Min of int64 (int32 on the device) beyond 2^24, broadcast. */
START_TEST(minmax_int)
{
	npu_ir_graph *g = irb_graph(13);
	int a = irb_tensor(g, "a", NPU_DTYPE_INT64, 2, D(2, 3));
	int b = irb_tensor(g, "b", NPU_DTYPE_INT64, 1, D(3));
	int mx = out_t(g, "mx", NPU_DTYPE_INT64), mn = out_t(g, "mn", NPU_DTYPE_INT64);
	int64_t av[6] = { 2147483647, -5, 16777217, 0, -2147483648LL, 16777216 };
	int64_t bv[3] = { 2147483646, -4, 16777216 }, xv[6], nv[6];

	node1(g, "Max", (int[]){ a, b }, 2, mx);
	node1(g, "Min", (int[]){ a, b }, 2, mn);
	irb_io(g, (int[]){ a, b }, 2, (int[]){ mx, mn }, 2);
	exec(build(g), (void *[]){ av, bv }, (void *[]){ xv, nv });
	for (int i = 0; i < 6; i++) {
		int64_t p = av[i], q = bv[i % 3];

		ck_assert_msg(xv[i] == (p > q ? p : q), "max %d: %lld", i, (long long)xv[i]);
		ck_assert_msg(nv[i] == (p < q ? p : q), "min %d: %lld", i, (long long)nv[i]);
	}
	npu_ir_graph_free(g);
}
END_TEST

/*
 * Position ids as RoBERTa exports them: m = Cast(Not(Equal(ids, pad))),
 * pos = CumSum(m, 1) * m + pad, all int64 (int32 on the device, exact).
 */
START_TEST(position_ids)
{
	enum { PB = 2, PS = 6 };
	npu_ir_graph *g = irb_graph(14);
	int ids = irb_tensor(g, "ids", NPU_DTYPE_INT64, 2, D(PB, PS));
	int pad = irb_const(g, "pad", NPU_DTYPE_INT64, 0, NULL, (int64_t[]){ 1 });
	int ax = irb_const(g, "ax", NPU_DTYPE_INT64, 0, NULL, (int64_t[]){ 1 });
	int ne = out_t(g, "ne", NPU_DTYPE_BOOL), eq = out_t(g, "eq", NPU_DTYPE_BOOL);
	int m = out_t(g, "m", NPU_DTYPE_INT64), cs = out_t(g, "cs", NPU_DTYPE_INT64);
	int pm = out_t(g, "pm", NPU_DTYPE_INT64), pos = out_t(g, "pos", NPU_DTYPE_INT64);
	int64_t idv[PB * PS] = { 0, 31414, 232, 2, 1, 1, 0, 100000000, 2, 1, 1, 1 }, pv[PB * PS];

	node1(g, "Equal", (int[]){ ids, pad }, 2, eq);
	node1(g, "Not", &eq, 1, ne);
	ck_assert_int_eq(npu_ir_set_attr_int(node1(g, "Cast", &ne, 1, m), "to", NPU_DTYPE_INT64),
			 NPU_OK);
	node1(g, "CumSum", (int[]){ m, ax }, 2, cs);
	node1(g, "Mul", (int[]){ cs, m }, 2, pm);
	node1(g, "Add", (int[]){ pm, pad }, 2, pos);
	irb_io(g, &ids, 1, &pos, 1);
	exec(build(g), (void *[]){ idv }, (void *[]){ pv });
	for (int b = 0; b < PB; b++) {
		int64_t run = 0;

		for (int s = 0; s < PS; s++) {
			int64_t mk = idv[b * PS + s] != 1;

			run += mk;
			ck_assert_msg(pv[b * PS + s] == run * mk + 1, "pos [%d,%d] = %lld", b, s,
				      (long long)pv[b * PS + s]);
		}
	}
	npu_ir_graph_free(g);
}
END_TEST

/* Dropout's mask at inference: all true, a constant output; y is x. */
START_TEST(dropout_mask)
{
	npu_ir_graph *g = irb_graph(13);
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 2, D(2, 3));
	int outs[2] = { out_t(g, "y", NPU_DTYPE_FLOAT32), out_t(g, "mask", NPU_DTYPE_BOOL) };
	float xv[6] = { 1, -2, 3, NAN, 5, -6 }, yv[6];
	uint8_t mv[6] = { 0 };

	irb_node(g, "Dropout", &x, 1, outs, 2);
	irb_io(g, &x, 1, outs, 2);
	exec(build(g), (void *[]){ xv }, (void *[]){ yv, mv });
	for (int i = 0; i < 6; i++) {
		ck_assert(!memcmp(&yv[i], &xv[i], 4));
		ck_assert_uint_eq(mv[i], 1);
	}
	npu_ir_graph_free(g);
}
END_TEST

/*
 * The programs say which program version they need: a run-time Where 1.2,
 * a Sin 1.1, an Add 1.0; a device of an older minor is refused by name.
 */
START_TEST(isa_version_gate)
{
	static const char *ops[3] = { "Where", "Sin", "Add" };
	static const unsigned want[3] = { 2, 1, 0 };

	for (int k = 0; k < 3; k++) {
		npu_ir_graph *g = irb_graph(13);
		int c = irb_tensor(g, "c", NPU_DTYPE_BOOL, 1, D(4));
		int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 1, D(4));
		int y = out_t(g, "y", NPU_DTYPE_FLOAT32);
		struct npu_cmodel *cm;
		const char *what;
		uint32_t step;

		if (k == 0)
			node1(g, "Where", (int[]){ c, x, x }, 3, y);
		else
			node1(g, ops[k], (int[]){ x, x }, k == 1 ? 1 : 2, y);
		irb_io(g, k ? &x : (int[]){ c, x }, k ? 1 : 2, &y, 1);
		cm = build(g);
		ck_assert_uint_eq(npu_cmodel_isa_minor(cm, &step, &what), want[k]);
		ck_assert_int_eq(npu_cmodel_check_isa(cm, NPU_PROG_VERSION_MAJOR << 16 | want[k]),
				 NPU_OK);
		ck_assert_int_eq(npu_cmodel_check_isa(cm, 0), NPU_OK);	/* unknown */
		if (want[k]) {
			ck_assert_int_eq(npu_cmodel_check_isa(cm, NPU_PROG_VERSION_MAJOR << 16 |
								  (want[k] - 1)),
					 NPU_ERR_VERSION);
			if (k == 0)
				ck_assert_str_eq(npu_last_error(),
						 "the model needs NPU program version 1.2 (step 1 (Where Where) uses CVU SELECT), the device runs 1.1: run it on a newer device, or update the device");
		}
		npu_cmodel_free(cm);
		npu_ir_graph_free(g);
	}
}
END_TEST

/* normact's 1.2 features count too: SiLU (a CVU function) and RMS norm (a flag). */
START_TEST(isa_version_gate_norm_act)
{
	for (int k = 0; k < 2; k++) {
		npu_ir_graph *g = irb_graph(24);
		int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 2, D(2, 8));
		int y = out_t(g, "y", NPU_DTYPE_FLOAT32);
		struct npu_cmodel *cm;
		const char *what;
		uint32_t step;

		if (k == 0) {
			node1(g, "Swish", &x, 1, y);
		} else {
			float gv[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
			int gamma = irb_const(g, "gamma", NPU_DTYPE_FLOAT32, 1, D(8), gv);

			node1(g, "RMSNormalization", (int[]){ x, gamma }, 2, y);
		}
		irb_io(g, &x, 1, &y, 1);
		cm = build(g);
		ck_assert_uint_eq(npu_cmodel_isa_minor(cm, &step, &what), 2);
		ck_assert_str_eq(what, k == 0 ? "a CVU function" : "CVU RMS norm");
		ck_assert_int_eq(npu_cmodel_check_isa(cm, NPU_PROG_VERSION_MAJOR << 16 | 1),
				 NPU_ERR_VERSION);
		npu_cmodel_free(cm);
		npu_ir_graph_free(g);
	}
}
END_TEST

static Suite *logic_suite(void)
{
	Suite *s = suite_create("logic");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, compare_logic_broadcast);
	tcase_add_test(tc, isa_version_gate_norm_act);
	tcase_add_test(tc, compare_narrow_types);
	tcase_add_test(tc, where_runtime_condition);
	tcase_add_test(tc, cast_runtime);
	tcase_add_test(tc, argmax_cumsum);
	tcase_add_test(tc, bool_boundary);
	tcase_add_test(tc, isa_version_gate);
	tcase_add_test(tc, isnan_isinf);
	tcase_add_test(tc, dropout_mask);
	tcase_add_test(tc, minmax_int);
	tcase_add_test(tc, position_ids);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(logic_suite)
