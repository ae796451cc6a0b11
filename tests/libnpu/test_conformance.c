// SPDX-License-Identifier: MIT
/*
 * A first slice of the ONNX conformance cases (Debian's libonnx-testdata):
 * compile each model, run it on the emulator with the shipped inputs and
 * compare with the shipped outputs.  Inputs after the first are frozen to
 * their test values (scales, zero points, weights given as graph inputs),
 * as the conformance runner does.  Skipped when the test data is absent.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile/npu_compile.h"
#include "model/npu_model_priv.h"
#include "onnx/npu_onnx.h"
#include "npu_test.h"

#define DATA "/usr/share/libonnx-testdata/data/node/"

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	void *p;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc((size_t)n + 1);
	*len = fread(p, 1, (size_t)n, f);
	fclose(f);
	return p;
}

static npu_ir_tensor *load_pb(const char *dir, const char *kind, int i)
{
	char path[512];
	npu_ir_tensor *t = NULL;
	size_t len;
	void *buf;

	snprintf(path, sizeof(path), "%s/test_data_set_0/%s_%d.pb", dir, kind, i);
	buf = slurp(path, &len);
	if (!buf)
		return NULL;
	if (npu_onnx_parse_tensor(buf, len, &t))
		t = NULL;
	free(buf);
	return t;
}

static double tol_ok(npu_dtype dt, const void *got, const void *want, size_t n, char *msg)
{
	for (size_t i = 0; i < n; i++) {
		double a, b, tol;

		switch (dt) {
		case NPU_DTYPE_FLOAT32:
			a = ((const float *)got)[i];
			b = ((const float *)want)[i];
			tol = 2e-2 + 2e-2 * fabs(b);
			break;
		case NPU_DTYPE_INT8:
			a = ((const int8_t *)got)[i];
			b = ((const int8_t *)want)[i];
			tol = 1;	/* requantization ties may round apart */
			break;
		case NPU_DTYPE_UINT8:
			a = ((const uint8_t *)got)[i];
			b = ((const uint8_t *)want)[i];
			tol = 1;
			break;
		case NPU_DTYPE_FLOAT16:	/* bit patterns, one unit in the last place */
			a = ((const uint16_t *)got)[i];
			b = ((const uint16_t *)want)[i];
			tol = 1;
			break;
		case NPU_DTYPE_INT64:
			a = (double)((const int64_t *)got)[i];
			b = (double)((const int64_t *)want)[i];
			tol = 0;
			break;
		case NPU_DTYPE_INT32:
			a = ((const int32_t *)got)[i];
			b = ((const int32_t *)want)[i];
			tol = 0;
			break;
		default:
			sprintf(msg, "dtype %d", (int)dt);
			return 0;
		}
		if (isnan(a) && isnan(b))
			continue;
		if (!(fabs(a - b) <= tol)) {
			sprintf(msg, "element %zu: got %g, want %g", i, a, b);
			return 0;
		}
	}
	return 1;
}

static void run_case(const char *name)
{
	char dir[256], path[300], msg[256] = "";
	struct npu_compile_target tgt = { .clusters = 14, .tpbs = 4, .hbsm_size = 2u << 20, .batch = 1 };
	npu_ir_tensor *ins[8] = { NULL }, *outs[8] = { NULL };
	struct npu_cmodel *cm = NULL;
	npu_tensor tin[8], tout[8];
	npu_ir_graph *g = NULL;
	npu_device *dev;
	npu_context *ctx;
	npu_model model;
	size_t len;
	void *buf;
	int nin = 0, nout = 0;
	npu_status st;

	snprintf(dir, sizeof(dir), DATA "%s", name);
	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	buf = slurp(path, &len);
	if (!buf) {
		printf("SKIP %s: no test data\n", name);
		return;
	}
	while (nin < 8 && (ins[nin] = load_pb(dir, "input", nin)))
		nin++;
	while (nout < 8 && (outs[nout] = load_pb(dir, "output", nout)))
		nout++;
	ck_assert_int_eq(npu_onnx_parse(buf, len, &g), NPU_OK);
	free(buf);
	ck_assert_int_eq(g->n_inputs, nin);
	/* Freeze every input but the first to its test value. */
	for (int i = g->n_inputs - 1; i >= 1; i--)
		ck_assert_int_eq(npu_ir_freeze_input(g, g->inputs[i], ins[i]->data, ins[i]->bytes),
				 NPU_OK);
	st = npu_ir_infer_shapes(g);
	if (!st)
		st = npu_compile_ir(g, &tgt, &cm);
	ck_assert_msg(st == NPU_OK, "%s: %s", name, npu_last_error());
	model.cm = cm;
	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_int_eq(npu_context_create(dev, &model, 0, &ctx), NPU_OK);
	tin[0] = (npu_tensor){ NULL, ins[0]->dtype, ins[0]->data, ins[0]->bytes };
	for (int i = 0; i < nout; i++) {
		tout[i] = (npu_tensor){ NULL, outs[i]->dtype, malloc(outs[i]->bytes + 1),
					outs[i]->bytes };
	}
	st = npu_run(ctx, tin, 1, tout, (size_t)nout);
	ck_assert_msg(st == NPU_OK, "%s: run: %s", name, npu_last_error());
	for (int i = 0; i < nout; i++) {
		ck_assert_msg(tol_ok(outs[i]->dtype, tout[i].data, outs[i]->data,
				     outs[i]->bytes / npu_dtype_size(outs[i]->dtype), msg),
			      "%s output %d: %s", name, i, msg);
		free(tout[i].data);
	}
	printf("ok %s\n", name);
	npu_context_destroy(ctx);
	npu_device_close(dev);
	npu_cmodel_free(cm);
	npu_ir_graph_free(g);
	for (int i = 0; i < 8; i++) {
		npu_ir_tensor_free(ins[i]);
		npu_ir_tensor_free(outs[i]);
	}
}

/*
 * Every case: compile, run, compare.  Returns 1 passed, 0 refused at
 * compile time (unsupported), -1 wrong or failed to run (with @why).
 */
static int try_case(const char *name, char *why, size_t whylen)
{
	char dir[320], path[400], msg[256] = "";
	struct npu_compile_target tgt = { .clusters = 14, .tpbs = 4, .hbsm_size = 2u << 20, .batch = 1 };
	npu_ir_tensor *ins[16] = { NULL }, *outs[16] = { NULL };
	struct npu_cmodel *cm = NULL;
	npu_tensor tin[1], tout[16];
	npu_ir_graph *g = NULL;
	npu_device *dev = NULL;
	npu_context *ctx = NULL;
	npu_model model;
	int nin = 0, nout = 0, res = 0;
	size_t len;
	void *buf;
	npu_status st;

	snprintf(dir, sizeof(dir), DATA "%s", name);
	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	buf = slurp(path, &len);
	if (!buf)
		return 0;
	while (nin < 16 && (ins[nin] = load_pb(dir, "input", nin)))
		nin++;
	while (nout < 16 && (outs[nout] = load_pb(dir, "output", nout)))
		nout++;
	st = npu_onnx_parse(buf, len, &g);
	free(buf);
	if (!st && g->n_inputs != nin)
		st = NPU_ERR_UNSUPPORTED;
	for (int i = nin - 1; !st && i >= 1; i--)
		st = npu_ir_freeze_input(g, g->inputs[i], ins[i]->data, ins[i]->bytes);
	if (!st)
		st = npu_ir_infer_shapes(g);
	if (!st)
		st = npu_compile_ir(g, &tgt, &cm);
	if (!st) {
		model.cm = cm;
		res = 1;
		st = npu_device_open("emu", &dev);
		if (!st)
			st = npu_context_create(dev, &model, 0, &ctx);
		if (nin)
			tin[0] = (npu_tensor){ NULL, ins[0]->dtype, ins[0]->data, ins[0]->bytes };
		for (int i = 0; i < nout; i++)
			tout[i] = (npu_tensor){ NULL, outs[i]->dtype, malloc(outs[i]->bytes + 1),
						outs[i]->bytes };
		if (!st)
			st = npu_run(ctx, tin, nin ? 1 : 0, tout, (size_t)nout);
		if (st) {
			snprintf(why, whylen, "%s", npu_last_error());
			res = -1;
		}
		for (int i = 0; i < nout; i++) {
			size_t es = npu_dtype_size(outs[i]->dtype);

			if (res == 1 && !tol_ok(outs[i]->dtype, tout[i].data, outs[i]->data,
				    outs[i]->bytes / (es ? es : 1), msg)) {
				snprintf(why, whylen, "output %d: %s", i, msg);
				res = -1;
			}
			free(tout[i].data);
		}
		npu_context_destroy(ctx);
		npu_device_close(dev);
	}
	npu_cmodel_free(cm);
	npu_ir_graph_free(g);
	for (int i = 0; i < 16; i++) {
		npu_ir_tensor_free(ins[i]);
		npu_ir_tensor_free(outs[i]);
	}
	return res;
}

/* All cases: none may be wrong; at least a floor must pass. */
START_TEST(conformance_sweep)
{
	DIR *d = opendir(DATA);
	struct dirent *e;
	int passed = 0, refused = 0, wrong = 0;

	if (!d) {
		printf("SKIP conformance_sweep: no test data\n");
		return;
	}
	while ((e = readdir(d))) {
		char why[512] = "";
		int r;

		if (e->d_name[0] == '.')
			continue;
		r = try_case(e->d_name, why, sizeof(why));
		if (r > 0)
			passed++;
		else if (!r)
			refused++;
		else {
			wrong++;
			printf("WRONG %s: %s\n", e->d_name, why);
		}
	}
	closedir(d);
	npu_clear_error();
	printf("conformance sweep: %d passed, %d wrong, %d refused\n", passed, wrong, refused);
	ck_assert_int_eq(wrong, 0);
	ck_assert_int_ge(passed, 280);
}
END_TEST

static const char *const cases[] = {
	"test_qlinearconv", "test_qlinearmatmul_2D", "test_matmulinteger", "test_basic_convinteger", "test_convinteger_with_padding",
	"test_convinteger_without_padding", "test_quantizelinear", "test_dequantizelinear",
	"test_conv_with_strides_padding", "test_basic_conv_with_padding",
	"test_maxpool_2d_pads", "test_averagepool_2d_pads", "test_relu", "test_softmax_axis_1",
	"test_gemm_default_single_elem_vector_bias", "test_transpose_all_permutations_0",
	"test_batchnorm_example", "test_batchnorm_epsilon", "test_add_bcast",
	"test_concat_3d_axis_1", "test_flatten_axis2", "test_constant_pad",
	"test_conv_with_autopad_same", "test_maxpool_2d_strides",
	"test_reduce_mean_keepdims_random", "test_reduce_mean_do_not_keepdims_random",
	"test_reduce_sum_negative_axes_keepdims_random", "test_reduce_sum_empty_axes_input_noop_random",
	"test_reduce_max_default_axes_keepdims_random", "test_reduce_max_do_not_keepdims_random",
	"test_split_equal_parts_2d", "test_split_variable_parts_1d", "test_slice",
	"test_slice_neg_steps", "test_transpose_default",
};

START_TEST(conformance_case)
{
	run_case(cases[_i]);
}
END_TEST

static Suite *conformance_suite(void)
{
	Suite *s = suite_create("npu_conformance");
	TCase *tc = tcase_create("onnx");

	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, conformance_case, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, conformance_sweep);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(conformance_suite)
