// SPDX-License-Identifier: MIT
/*
 * Every ONNX tensor type at the model's boundary (issue 17): float64
 * computed as float32, int16, uint16, uint32 and uint64 as int32
 * (compile/npu_narrow.c, model/io_convert.c).  The conversions against C
 * casts, values that do not fit refused by name (inputs at run time,
 * constants at compile time), models of each type against a C reference
 * computed the way the NPU computes, the compile's notes, and the .npum
 * keeping the boundary types.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_compile.h"
#include "compile/npu_ops.h"
#include "ir_build.h"
#include "model/npu_model_priv.h"
#include "npu_test.h"

START_TEST(dtype_names_sizes)
{
	static const struct {
		npu_dtype t;
		const char *name;
		size_t size;
		npu_dtype dev;
	} want[] = {
		{ NPU_DTYPE_FLOAT64, "float64", 8, NPU_DTYPE_FLOAT32 },
		{ NPU_DTYPE_INT16, "int16", 2, NPU_DTYPE_INT32 },
		{ NPU_DTYPE_UINT16, "uint16", 2, NPU_DTYPE_INT32 },
		{ NPU_DTYPE_UINT32, "uint32", 4, NPU_DTYPE_INT32 },
		{ NPU_DTYPE_UINT64, "uint64", 8, NPU_DTYPE_INT32 },
		{ NPU_DTYPE_INT64, "int64", 8, NPU_DTYPE_INT32 },
		{ NPU_DTYPE_FLOAT32, "float32", 4, NPU_DTYPE_FLOAT32 },
		{ NPU_DTYPE_BFLOAT16, "bfloat16", 2, NPU_DTYPE_BFLOAT16 },
		{ NPU_DTYPE_BOOL, "bool", 1, NPU_DTYPE_BOOL },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ck_assert_str_eq(npu_dtype_str(want[i].t), want[i].name);
		ck_assert_uint_eq(npu_dtype_size(want[i].t), want[i].size);
		ck_assert_int_eq(npu_dtype_device(want[i].t), want[i].dev);
	}
}
END_TEST

/* To the device and back, each type against C's own conversions. */
START_TEST(boundary_conversions)
{
	double d[6] = { 1.5, -2.25, INFINITY, -INFINITY, 1e-50, 0.1 }, dback[6];
	float f[6];
	int16_t s[4] = { -32768, -1, 0, 32767 }, sback[4];
	uint16_t us[3] = { 0, 40000, 65535 };
	uint32_t u[3] = { 0, 5, INT32_MAX }, uback[3];
	uint64_t ul[3] = { 0, 7, INT32_MAX }, ulback[3];
	int32_t w[4];
	npu_tensor_info t = { .name = "x" };

	t.dtype = NPU_DTYPE_FLOAT64;
	t.bytes = sizeof(d);
	ck_assert_int_eq(npu_tensor_to_device(&t, d, f), NPU_OK);
	for (int i = 0; i < 6; i++)
		ck_assert_msg(memcmp(&f[i], &(float){ (float)d[i] }, 4) == 0, "float64 %d", i);
	ck_assert_int_eq(npu_tensor_from_device(&t, f, dback), NPU_OK);
	for (int i = 0; i < 6; i++)
		ck_assert(dback[i] == (double)f[i]);
	d[1] = NAN;
	ck_assert_int_eq(npu_tensor_to_device(&t, d, f), NPU_OK);
	ck_assert(isnan(f[1]));
	d[4] = -1e300;	/* finite, beyond float32: refused, not made -inf */
	ck_assert_int_eq(npu_tensor_to_device(&t, d, f), NPU_ERR_INVALID_ARG);
	ck_assert_msg(strstr(npu_last_error(), "input 'x': element 4 is -1e+300, beyond float32"),
		      "%s", npu_last_error());

	t.dtype = NPU_DTYPE_INT16;
	t.bytes = sizeof(s);
	ck_assert_int_eq(npu_tensor_to_device(&t, s, w), NPU_OK);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(w[i], s[i]);
	/* int32 results wrap into int16 as int16 arithmetic does. */
	w[0] = -32769;
	w[1] = 70000;
	ck_assert_int_eq(npu_tensor_from_device(&t, w, sback), NPU_OK);
	ck_assert_int_eq(sback[0], 32767);
	ck_assert_int_eq(sback[1], (int16_t)(70000 - 65536));
	ck_assert_int_eq(sback[3], 32767);

	t.dtype = NPU_DTYPE_UINT16;
	t.bytes = sizeof(us);
	ck_assert_int_eq(npu_tensor_to_device(&t, us, w), NPU_OK);
	ck_assert(w[0] == 0 && w[1] == 40000 && w[2] == 65535);

	t.dtype = NPU_DTYPE_UINT32;
	t.bytes = sizeof(u);
	ck_assert_int_eq(npu_tensor_to_device(&t, u, w), NPU_OK);
	ck_assert(w[0] == 0 && w[1] == 5 && w[2] == INT32_MAX);
	w[0] = -2;	/* 3 - 5 in uint32 is 2^32 - 2 */
	ck_assert_int_eq(npu_tensor_from_device(&t, w, uback), NPU_OK);
	ck_assert_uint_eq(uback[0], 4294967294u);
	u[1] = 2147483648u;
	ck_assert_int_eq(npu_tensor_to_device(&t, u, w), NPU_ERR_INVALID_ARG);
	ck_assert_msg(strstr(npu_last_error(), "element 1 is 2147483648, outside int32 (the NPU "
			     "computes uint32 tensors as int32); give values in 0..2147483647"),
		      "%s", npu_last_error());

	t.dtype = NPU_DTYPE_UINT64;
	t.bytes = sizeof(ul);
	ck_assert_int_eq(npu_tensor_to_device(&t, ul, w), NPU_OK);
	ck_assert(w[0] == 0 && w[1] == 7 && w[2] == INT32_MAX);
	w[2] = -2;	/* uint64 wraps modulo 2^64 */
	ck_assert_int_eq(npu_tensor_from_device(&t, w, ulback), NPU_OK);
	ck_assert(ulback[1] == 7 && ulback[2] == UINT64_MAX - 1);
	ul[0] = (uint64_t)1 << 40;
	ck_assert_int_eq(npu_tensor_to_device(&t, ul, w), NPU_ERR_INVALID_ARG);
	ck_assert_msg(strstr(npu_last_error(), "element 0 is 1099511627776, outside int32"), "%s",
		      npu_last_error());

	/* Bools: checked, copied. */
	t.dtype = NPU_DTYPE_BOOL;
	t.bytes = 3;
	ck_assert_int_eq(npu_tensor_to_device(&t, (uint8_t[]){ 0, 1, 2 }, w),
			 NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_tensor_to_device(NULL, d, w), NPU_ERR_INVALID_ARG);
}
END_TEST

enum { N = 6 };

/*
 * x float64 [2, 3] at run time: y = x * c + x (c a float64 constant),
 * computed in float32 on the CVU: the same as C in float32.
 */
START_TEST(float64_model)
{
	static const double c[N] = { 0.5, -3, 1e-3, 2.5e10, 1, -0.125 };
	double x[N] = { 1, 2, 3.25, -1e-5, 1e30, 7 }, y[N];
	npu_ir_graph *g = irb_graph(13);
	int xi = irb_tensor(g, "x", NPU_DTYPE_FLOAT64, 2, (int64_t[]){ 2, 3 });
	int ci = irb_const(g, "c", NPU_DTYPE_FLOAT64, 2, (int64_t[]){ 2, 3 }, c);
	int mi = irb_tensor(g, "m", NPU_DTYPE_FLOAT64, -1, NULL);
	int yi = irb_tensor(g, "y", NPU_DTYPE_FLOAT64, -1, NULL);
	struct npu_cmodel *cm;

	irb_node(g, "Mul", (int[]){ xi, ci }, 2, &mi, 1);
	irb_node(g, "Add", (int[]){ mi, xi }, 2, &yi, 1);
	irb_io(g, &xi, 1, &yi, 1);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_eq(irb_compile(g, "emu", &cm), NPU_OK);
	ck_assert_int_eq(cm->inputs[0].info.dtype, NPU_DTYPE_FLOAT64);
	ck_assert_uint_eq(cm->inputs[0].info.bytes, N * 8);
	ck_assert_uint_eq(npu_io_dev_bytes(&cm->inputs[0].info), N * 4);
	ck_assert_int_eq(cm->outputs[0].info.dtype, NPU_DTYPE_FLOAT64);
	ck_assert_ptr_nonnull(cm->notes);
	ck_assert_msg(strstr(cm->notes, "float64 computed as float32 (the NPU has no float64): "
			     "4 tensors (") && strstr(cm->notes, "(Mul)") &&
		      strstr(cm->notes, "(Add)"), "%s", cm->notes);
	ck_assert_int_eq(irb_exec(cm, "emu", (void *[]){ x }, (void *[]){ y }), NPU_OK);
	for (int i = 0; i < N; i++) {
		float xf = (float)x[i], want = xf * (float)c[i] + xf;

		ck_assert_msg(y[i] == (double)want, "y[%d] = %.9g, want %.9g", i, y[i],
			      (double)want);
	}
	npu_ir_graph_free(g);
}
END_TEST

/*
 * a int16 [6] - b (an int16 constant) -> d int16, u uint32 [6] + k (a
 * uint32 constant) -> v uint32, w uint16 [6] cast to float -> f: int32
 * on the device, wrapping at the boundary as the types' arithmetic does.
 */
START_TEST(small_int_models)
{
	static const int16_t b[N] = { 1, -1, 300, 0, -32768, 7 };
	static const uint32_t k[N] = { 1, 2, 3, 1000000000, 0, 2000000000 };
	int16_t a[N] = { -32768, 32767, 5, -4, 0, 100 }, d[N];
	uint32_t u[N] = { 0, 1, 2, 1000000000, 5, 147483647 }, v[N];
	uint16_t wv[N] = { 0, 1, 255, 40000, 65535, 12 };
	float f[N];
	npu_ir_graph *g = irb_graph(13);
	int ai = irb_tensor(g, "a", NPU_DTYPE_INT16, 1, (int64_t[]){ N });
	int ui = irb_tensor(g, "u", NPU_DTYPE_UINT32, 1, (int64_t[]){ N });
	int wi = irb_tensor(g, "w", NPU_DTYPE_UINT16, 1, (int64_t[]){ N });
	int bi = irb_const(g, "b", NPU_DTYPE_INT16, 1, (int64_t[]){ N }, b);
	int ki = irb_const(g, "k", NPU_DTYPE_UINT32, 1, (int64_t[]){ N }, k);
	int out[3] = {
		irb_tensor(g, "d", NPU_DTYPE_INT16, -1, NULL),
		irb_tensor(g, "v", NPU_DTYPE_UINT32, -1, NULL),
		irb_tensor(g, "f", NPU_DTYPE_FLOAT32, -1, NULL),
	};
	struct npu_cmodel *cm;
	npu_ir_node *n;

	irb_node(g, "Sub", (int[]){ ai, bi }, 2, &out[0], 1);
	irb_node(g, "Add", (int[]){ ui, ki }, 2, &out[1], 1);
	n = irb_node(g, "Cast", &wi, 1, &out[2], 1);
	ck_assert_int_eq(npu_ir_set_attr_int(n, "to", NPU_DTYPE_FLOAT32), NPU_OK);
	irb_io(g, (int[]){ ai, ui, wi }, 3, out, 3);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_eq(irb_compile(g, "emu", &cm), NPU_OK);
	ck_assert_msg(cm->notes && strstr(cm->notes, "uint32 computed as int32") &&
		      strstr(cm->notes, "int16 computed as int32") &&
		      strstr(cm->notes, "uint16 computed as int32"), "%s", cm->notes);
	ck_assert_int_eq(irb_exec(cm, "emu", (void *[]){ a, u, wv }, (void *[]){ d, v, f }),
			 NPU_OK);
	for (int i = 0; i < N; i++) {
		ck_assert_msg(d[i] == (int16_t)(uint16_t)(a[i] - b[i]), "d[%d] = %d", i, d[i]);
		ck_assert_msg(v[i] == u[i] + k[i], "v[%d] = %u", i, v[i]);
		ck_assert_msg(f[i] == (float)wv[i], "f[%d] = %g", i, f[i]);
	}
	npu_ir_graph_free(g);
}
END_TEST

/* A constant the device computes with must fit: refused by name at compile time. */
START_TEST(constants_that_do_not_fit)
{
	static const uint64_t k[2] = { 3, 5000000000ull };
	static const double c[2] = { 1, 1e300 };
	static const struct {
		npu_dtype t;
		const void *data;
		const char *msg;
	} cases[] = {
		{ NPU_DTYPE_UINT64, k, "uint64 constant 'k' cannot be computed as int32, the NPU's "
				       "nearest type (element 1 is 5000000000, outside int32" },
		{ NPU_DTYPE_FLOAT64, c, "float64 constant 'k' cannot be computed as float32, the "
					"NPU's nearest type (element 1 is 1e+300, beyond float32" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		npu_ir_graph *g = irb_graph(13);
		int x = irb_tensor(g, "x", cases[i].t, 1, (int64_t[]){ 2 });
		int ki = irb_const(g, "k", cases[i].t, 1, (int64_t[]){ 2 }, cases[i].data);
		int y = irb_tensor(g, "y", cases[i].t, -1, NULL);
		struct npu_cmodel *cm = NULL;

		irb_node(g, "Add", (int[]){ x, ki }, 2, &y, 1);
		irb_io(g, &x, 1, &y, 1);
		ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
		ck_assert_int_eq(irb_compile(g, "emu", &cm), NPU_ERR_UNSUPPORTED);
		ck_assert_msg(strstr(npu_last_error(), cases[i].msg), "%s", npu_last_error());
		ck_assert_ptr_null(cm);
		npu_ir_graph_free(g);
	}
}
END_TEST

/* The .npum keeps the boundary types; the device slots are derived. */
START_TEST(npum_keeps_types)
{
	npu_ir_graph *g = irb_graph(13);
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT64, 1, (int64_t[]){ N });
	int u = irb_tensor(g, "u", NPU_DTYPE_UINT16, 1, (int64_t[]){ N });
	int y = irb_tensor(g, "y", NPU_DTYPE_FLOAT64, -1, NULL);
	int v = irb_tensor(g, "v", NPU_DTYPE_UINT16, -1, NULL);
	struct npu_cmodel *cm, *back;
	uint8_t *buf;
	size_t len;

	irb_node(g, "Neg", &x, 1, &y, 1);
	irb_node(g, "Identity", &u, 1, &v, 1);
	irb_io(g, (int[]){ x, u }, 2, (int[]){ y, v }, 2);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_eq(irb_compile(g, "emu", &cm), NPU_OK);
	ck_assert_int_eq(npu_cmodel_write(cm, &buf, &len), NPU_OK);
	ck_assert_int_eq(npu_cmodel_read(buf, len, &back), NPU_OK);
	ck_assert_int_eq(back->inputs[0].info.dtype, NPU_DTYPE_FLOAT64);
	ck_assert_uint_eq(back->inputs[0].info.bytes, N * 8);
	ck_assert_uint_eq(npu_io_dev_bytes(&back->inputs[0].info), N * 4);
	ck_assert_int_eq(back->outputs[1].info.dtype, NPU_DTYPE_UINT16);
	ck_assert_uint_eq(back->outputs[1].info.bytes, N * 2);
	ck_assert_uint_eq(npu_io_dev_bytes(&back->outputs[1].info), N * 4);
	ck_assert_ptr_null(back->notes);
	free(buf);
	npu_cmodel_free(back);
	npu_cmodel_free(cm);
	npu_ir_graph_free(g);
}
END_TEST

/*
 * Mod of int32 by constant divisors (the CVU's MOD and FMOD, ISA 1.4):
 * every dividend against every divisor (a [A, 1] by a constant [1, Y]),
 * ONNX's floor remainder and C's (fmod), against C in int64.
 */
START_TEST(mod_int_by_constants)
{
	static const int32_t av[] = {
		INT32_MIN, INT32_MIN + 1, -16777217, -1000001, -7, -1, 0, 1, 6, 7,
		16777217, 123456789, INT32_MAX - 1, INT32_MAX,
	};
	static const int32_t yv[] = { 1, -1, 2, 3, -7, 10, 255, -4096, 65537, 4194304, -4194304 };
	enum { A = sizeof(av) / 4, Y = sizeof(yv) / 4 };
	int32_t out[A * Y];

	for (int fmod = 0; fmod < 2; fmod++) {
		npu_ir_graph *g = irb_graph(13);
		int a = irb_tensor(g, "a", NPU_DTYPE_INT32, 2, (int64_t[]){ A, 1 });
		int y = irb_const(g, "y", NPU_DTYPE_INT32, 2, (int64_t[]){ 1, Y }, yv);
		int r = irb_tensor(g, "r", NPU_DTYPE_INT32, -1, NULL);
		struct npu_cmodel *cm;
		npu_ir_node *n;

		n = irb_node(g, "Mod", (int[]){ a, y }, 2, &r, 1);
		ck_assert_int_eq(npu_ir_set_attr_int(n, "fmod", fmod), NPU_OK);
		irb_io(g, &a, 1, &r, 1);
		ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
		ck_assert_int_eq(irb_compile(g, "emu", &cm), NPU_OK);
		ck_assert_int_eq(irb_exec(cm, "emu", (void *[]){ (void *)av }, (void *[]){ out }),
				 NPU_OK);
		for (int i = 0; i < A; i++)
			for (int j = 0; j < Y; j++) {
				int64_t want = (int64_t)av[i] % yv[j];

				if (!fmod && want && (want < 0) != (yv[j] < 0))
					want += yv[j];
				ck_assert_msg(out[i * Y + j] == want, "fmod %d: %d mod %d = %d, want %lld",
					      fmod, av[i], yv[j], out[i * Y + j], (long long)want);
			}
		npu_ir_graph_free(g);
	}
}
END_TEST

/* BitShift of uint32 by constant amounts, both directions, against C. */
START_TEST(bitshift_uint32_by_constants)
{
	static const uint32_t xv[] = { 0, 1, 5, 255, 65535, 16777219, 1073754169, INT32_MAX };
	static const uint32_t right[] = { 0, 1, 3, 8, 22 }, left[] = { 0, 1, 3, 8, 31 };
	enum { X = sizeof(xv) / 4, S = sizeof(right) / 4 };
	uint32_t out[X * S];

	for (int l = 0; l < 2; l++) {
		const uint32_t *sv = l ? left : right;
		npu_ir_graph *g = irb_graph(13);
		int x = irb_tensor(g, "x", NPU_DTYPE_UINT32, 2, (int64_t[]){ X, 1 });
		int s = irb_const(g, "s", NPU_DTYPE_UINT32, 2, (int64_t[]){ 1, S }, sv);
		int y = irb_tensor(g, "y", NPU_DTYPE_UINT32, -1, NULL);
		struct npu_cmodel *cm;
		npu_ir_node *n;

		n = irb_node(g, "BitShift", (int[]){ x, s }, 2, &y, 1);
		ck_assert_int_eq(npu_ir_set_attr_string(n, "direction", l ? "LEFT" : "RIGHT"),
				 NPU_OK);
		irb_io(g, &x, 1, &y, 1);
		ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
		ck_assert_int_eq(irb_compile(g, "emu", &cm), NPU_OK);
		ck_assert_int_eq(irb_exec(cm, "emu", (void *[]){ (void *)xv }, (void *[]){ out }),
				 NPU_OK);
		for (int i = 0; i < X; i++)
			for (int j = 0; j < S; j++) {
				uint32_t want = l ? xv[i] << sv[j] : xv[i] >> sv[j];

				ck_assert_msg(out[i * S + j] == want, "%u %s %u = %u, want %u", xv[i],
					      l ? "<<" : ">>", sv[j], out[i * S + j], want);
			}
		npu_ir_graph_free(g);
	}
}
END_TEST

/* A right shift beyond the rewrite's 2^22 divisor bound: refused by name. */
START_TEST(intdiv_refused)
{
	static const uint32_t sv[2] = { 3, 23 };
	npu_ir_graph *g = irb_graph(13);
	int x = irb_tensor(g, "x", NPU_DTYPE_UINT32, 1, (int64_t[]){ 2 });
	int s = irb_const(g, "s", NPU_DTYPE_UINT32, 1, (int64_t[]){ 2 }, sv);
	int y = irb_tensor(g, "y", NPU_DTYPE_UINT32, -1, NULL);
	struct npu_cmodel *cm = NULL;
	npu_ir_node *n;

	n = irb_node(g, "BitShift", (int[]){ x, s }, 2, &y, 1);
	ck_assert_int_eq(npu_ir_set_attr_string(n, "direction", "RIGHT"), NPU_OK);
	irb_io(g, &x, 1, &y, 1);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_ne(irb_compile(g, "emu", &cm), NPU_OK);
	ck_assert_msg(strstr(npu_last_error(), "BitShift"), "%s", npu_last_error());
	ck_assert_ptr_null(cm);
	npu_ir_graph_free(g);
}
END_TEST

static Suite *dtypes_suite(void)
{
	Suite *s = suite_create("npu_dtypes");
	TCase *tc = tcase_create("boundary");

	tcase_add_test(tc, dtype_names_sizes);
	tcase_add_test(tc, boundary_conversions);
	tcase_add_test(tc, float64_model);
	tcase_add_test(tc, small_int_models);
	tcase_add_test(tc, constants_that_do_not_fit);
	tcase_add_test(tc, npum_keeps_types);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	tc = tcase_create("intdiv");
	tcase_add_test(tc, mod_int_by_constants);
	tcase_add_test(tc, bitshift_uint32_by_constants);
	tcase_add_test(tc, intdiv_refused);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(dtypes_suite)
