// SPDX-License-Identifier: MIT
/*
 * Host steps and the CPU fallback (issue 17): a Det between two NPU
 * programs (Relu before, Add after) run with allow_cpu_fallback against a
 * C reference, its step reported as a host step; the refusal without the
 * option naming operator, node, opset and option; the .npum round trip
 * (version 2 with a host step, 1 without); Mod on integers (Python's sign
 * rule, broadcast) and with fmod against C.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_compile.h"
#include "compile/npu_ops.h"
#include "host/npu_host.h"
#include "ir_build.h"
#include "model/npu_model_priv.h"
#include "npu_test.h"

enum { NB = 2, M = 3 };

static npu_status compile(npu_ir_graph *g, bool fallback, struct npu_cmodel **cm)
{
	struct npu_compile_target tgt = { .clusters = 14, .tpbs = 4, .hbsm_size = 2u << 20,
					  .batch = 1, .allow_cpu_fallback = fallback };

	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	return npu_compile_ir(g, &tgt, cm);
}

/* x [NB, M, M] -> Relu -> Det (host) -> d [NB] -> Add(d, d) -> y [NB]. */
static npu_ir_graph *det_model(void)
{
	npu_ir_graph *g = irb_graph(13);
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, (int64_t[]){ NB, M, M });
	int r = irb_tensor(g, "r", NPU_DTYPE_FLOAT32, -1, NULL);
	int d = irb_tensor(g, "d", NPU_DTYPE_FLOAT32, -1, NULL);
	int y = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);
	npu_ir_node *n;

	irb_node(g, "Relu", &x, 1, &r, 1);
	n = irb_node(g, "Det", &r, 1, &d, 1);
	free(n->name);
	n->name = strdup("det_1");
	irb_node(g, "Add", (int[]){ d, d }, 2, &y, 1);
	irb_io(g, &x, 1, &y, 1);
	return g;
}

static void det_input(float *x)
{
	for (int i = 0; i < NB * M * M; i++)
		x[i] = (float)(((i * 7) % 11) - 3) * 0.5f;
}

/* 2 det(relu(x)) per matrix, by cofactors. */
static void det_ref(const float *x, float *y)
{
	for (int b = 0; b < NB; b++) {
		double a[9];

		for (int k = 0; k < 9; k++)
			a[k] = x[b * 9 + k] > 0 ? x[b * 9 + k] : 0;
		y[b] = (float)(2 * (a[0] * (a[4] * a[8] - a[5] * a[7]) -
				    a[1] * (a[3] * a[8] - a[5] * a[6]) +
				    a[2] * (a[3] * a[7] - a[4] * a[6])));
	}
}

/* Run @cm on the emulator, checking y against the reference and the step list. */
static void run_det(struct npu_cmodel *cm)
{
	npu_model *m = calloc(1, sizeof(*m));
	float x[NB * M * M], y[NB], want[NB];
	npu_tensor in = { NULL, NPU_DTYPE_FLOAT32, x, sizeof(x) };
	npu_tensor out = { NULL, NPU_DTYPE_FLOAT32, y, sizeof(y) };
	npu_step_info si = { .struct_size = sizeof(si) };
	npu_model_info mi = { .struct_size = sizeof(mi) };
	npu_device *dev;
	npu_context *ctx;
	unsigned host = 0;

	ck_assert_ptr_nonnull(m);
	m->cm = cm;
	det_input(x);
	det_ref(x, want);
	ck_assert_int_eq(npu_model_get_info(m, &mi), NPU_OK);
	ck_assert_uint_eq(mi.host_steps, 1);
	ck_assert_ptr_nonnull(strstr(mi.host_nodes, "Det 'det_1'"));
	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_int_eq(npu_context_create(dev, m, 0, &ctx), NPU_OK);
	ck_assert_int_eq(npu_run(ctx, &in, 1, &out, 1), NPU_OK);
	for (int b = 0; b < NB; b++)
		ck_assert_float_eq_tol(y[b], want[b], 1e-4f * (1 + fabsf(want[b])));
	for (size_t i = 0; i < cm->nsteps; i++) {
		ck_assert_int_eq(npu_context_last_run_step(ctx, i, &si), NPU_OK);
		if (si.on_host) {
			host++;
			ck_assert_str_eq(si.op, "Det");
			ck_assert_uint_eq(si.device_cycles, 0);
			ck_assert(si.host_us >= 0);
			ck_assert_ptr_nonnull(strstr(si.label, "(host)"));
			/* The NPU programs are on both sides of it. */
			ck_assert_uint_gt(i, 0);
			ck_assert_uint_lt(i + 1, cm->nsteps);
		} else {
			ck_assert_uint_gt(si.device_cycles, 0);
			ck_assert_ptr_null(si.op);
		}
	}
	ck_assert_uint_eq(host, 1);
	ck_assert_int_eq(npu_context_last_run_step(ctx, cm->nsteps, &si), NPU_ERR_NOT_FOUND);
	npu_context_destroy(ctx);
	npu_model_free(m);
	npu_device_close(dev);
}

START_TEST(host_det_between_programs)
{
	npu_ir_graph *g = det_model();
	struct npu_cmodel *cm;

	ck_assert_int_eq(compile(g, true, &cm), NPU_OK);
	ck_assert_uint_eq(npu_cmodel_host_steps(cm), 1);
	run_det(cm);
	npu_ir_graph_free(g);
}
END_TEST

START_TEST(host_refused_without_option)
{
	npu_ir_graph *g = det_model();
	struct npu_cmodel *cm = NULL;
	const char *e;

	ck_assert_int_eq(compile(g, false, &cm), NPU_ERR_UNSUPPORTED);
	ck_assert_ptr_null(cm);
	e = npu_last_error();
	ck_assert_ptr_nonnull(strstr(e, "operator 'Det'"));
	ck_assert_ptr_nonnull(strstr(e, "node 'det_1'"));
	ck_assert_ptr_nonnull(strstr(e, "opset 13"));
	ck_assert_ptr_nonnull(strstr(e, "allow_cpu_fallback (npu-run --cpu-fallback)"));
	npu_ir_graph_free(g);
}
END_TEST

static unsigned file_version(const uint8_t *buf)
{
	return buf[4] | buf[5] << 8;
}

START_TEST(host_npum_round_trip)
{
	npu_ir_graph *g = det_model();
	struct npu_cmodel *cm, *back;
	const struct npu_host_step *h = NULL;
	uint8_t *buf;
	size_t len;

	ck_assert_int_eq(compile(g, true, &cm), NPU_OK);
	ck_assert_int_eq(npu_cmodel_write(cm, &buf, &len), NPU_OK);
	ck_assert_uint_eq(file_version(buf), 2);
	ck_assert_int_eq(npu_cmodel_read(buf, len, &back), NPU_OK);
	ck_assert_uint_eq(back->nsteps, cm->nsteps);
	for (uint32_t i = 0; i < back->nsteps; i++)
		if (npu_step_on_host(&back->steps[i]))
			h = back->steps[i].host;
	ck_assert_ptr_nonnull(h);
	ck_assert_str_eq(h->op, "Det");
	ck_assert_int_eq(h->opset, 13);
	ck_assert_uint_eq(h->ninputs, 1);
	ck_assert_uint_eq(h->noutputs, 1);
	ck_assert_int_eq(h->tensors[0].rank, 3);
	ck_assert_int_eq(h->tensors[1].rank, 1);
	ck_assert_int_eq(h->tensors[1].dims[0], NB);
	npu_cmodel_free(cm);
	/* A newer file refused by its version, clearly. */
	buf[4] = 4;
	ck_assert_int_eq(npu_cmodel_read(buf, len, &cm), NPU_ERR_VERSION);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "versions 1 to 3"));
	free(buf);
	run_det(back);
	npu_ir_graph_free(g);

	/* No host step: still version 1, readable by libnpu before issue 17. */
	g = irb_graph(13);
	{
		int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ 4 });
		int y = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);

		irb_node(g, "Relu", &x, 1, &y, 1);
		irb_io(g, &x, 1, &y, 1);
	}
	ck_assert_int_eq(compile(g, true, &cm), NPU_OK);
	ck_assert_uint_eq(npu_cmodel_host_steps(cm), 0);
	ck_assert_ptr_null(cm->fallback_ops);
	ck_assert_int_eq(npu_cmodel_write(cm, &buf, &len), NPU_OK);
	ck_assert_uint_eq(file_version(buf), 1);
	free(buf);
	npu_cmodel_free(cm);
	npu_ir_graph_free(g);
}
END_TEST

/*
 * Mod of a [2, 3] by a [3] (broadcast) straight through the host
 * implementation (the compiler may lower some Mods to the NPU itself):
 * int32 (int64 narrowed alike) with fmod 0 and 1, float32 with fmod 1.
 */
static void mod_case(npu_dtype dt, int64_t fmod_attr)
{
	static const double a[6] = { 7, -7, 7, -7, 5, 0 }, b[3] = { 3, 3, -3 };
	struct npu_host_attr attr = { .name = (char *)"fmod", .type = NPU_IR_ATTR_INT,
				      .i = fmod_attr };
	struct npu_host_tensor t[3] = {
		{ .seg = 0, .dtype = dt, .rank = 2, .dims = { 2, 3 } },
		{ .seg = 0, .dtype = dt, .rank = 1, .dims = { 3 } },
		{ .seg = 0, .dtype = dt, .rank = 2, .dims = { 2, 3 } },
	};
	struct npu_host_step h = { .op = (char *)"Mod", .opset = 13, .node = (char *)"'m'",
				   .ninputs = 2, .noutputs = 1, .tensors = t, .nattrs = 1,
				   .attrs = &attr };
	int32_t ai[6], bi[3], yi[6];
	float af[6], bf[3], yf[6];
	bool fp = dt == NPU_DTYPE_FLOAT32;

	for (int i = 0; i < 6; i++) {
		ai[i] = (int32_t)a[i];
		af[i] = (float)a[i] + (fp ? 0.5f : 0);
	}
	for (int i = 0; i < 3; i++) {
		bi[i] = (int32_t)b[i];
		bf[i] = (float)b[i];
	}
	ck_assert_int_eq(npu_host_run(&h, fp ? (void *[]){ af, bf } : (void *[]){ ai, bi },
				      fp ? (void *[]){ yf } : (void *[]){ yi }, NULL), NPU_OK);
	for (int i = 0; i < 6; i++) {
		if (fp) {
			ck_assert_float_eq(yf[i], fmodf(af[i], bf[i % 3]));
		} else {
			int32_t r = ai[i] % bi[i % 3];

			/* fmod 0: the divisor's sign, as Python's %. */
			if (!fmod_attr && r && (r < 0) != (bi[i % 3] < 0))
				r += bi[i % 3];
			ck_assert_int_eq(yi[i], r);
		}
	}
	if (!fp && !fmod_attr)
		ck_assert_int_eq(yi[1], 2);	/* -7 mod 3 */
}

START_TEST(host_mod)
{
	struct npu_host_tensor t[3] = {
		{ .dtype = NPU_DTYPE_FLOAT32, .rank = 1, .dims = { 1 } },
		{ .dtype = NPU_DTYPE_FLOAT32, .rank = 1, .dims = { 1 } },
		{ .dtype = NPU_DTYPE_FLOAT32, .rank = 1, .dims = { 1 } },
	};
	struct npu_host_step h = { .op = (char *)"Mod", .opset = 13, .node = (char *)"'m'",
				   .ninputs = 2, .noutputs = 1, .tensors = t };
	float x = 1, y = 2, z;

	mod_case(NPU_DTYPE_INT32, 0);
	mod_case(NPU_DTYPE_INT32, 1);
	mod_case(NPU_DTYPE_FLOAT32, 1);
	/* Float without fmod = 1 is invalid ONNX: an error naming the node. */
	ck_assert_int_eq(npu_host_run(&h, (void *[]){ &x, &y }, (void *[]){ &z }, NULL),
			 NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "host step 'm' (Mod): float operands need fmod = 1"));
	/* An operator this libnpu has no host code for (a newer file). */
	h.op = (char *)"Frobnicate";
	ck_assert_int_eq(npu_host_run(&h, (void *[]){ &x, &y }, (void *[]){ &z }, NULL),
			 NPU_ERR_UNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "'Frobnicate'"));
}
END_TEST

/*
 * OneHot through the host implementation (the NPU runs OneHot itself since
 * the detection work; the host code serves a node its rewrite leaves):
 * float indices [2, 3], depth 4 on axis 1, values { -1, 5 }, negative and
 * out-of-range indices included, against a C loop.
 */
START_TEST(host_onehot)
{
	struct npu_host_attr attr = { .name = (char *)"axis", .type = NPU_IR_ATTR_INT, .i = 1 };
	struct npu_host_tensor t[4] = {
		{ .dtype = NPU_DTYPE_FLOAT32, .rank = 2, .dims = { 2, 3 } },
		{ .dtype = NPU_DTYPE_INT64, .rank = 0 },
		{ .dtype = NPU_DTYPE_FLOAT32, .rank = 1, .dims = { 2 } },
		{ .dtype = NPU_DTYPE_FLOAT32, .rank = 3, .dims = { 2, 4, 3 } },
	};
	struct npu_host_step h = { .op = (char *)"OneHot", .opset = 11, .node = (char *)"'oh'",
				   .ninputs = 3, .noutputs = 1, .tensors = t, .nattrs = 1,
				   .attrs = &attr };
	float xv[6] = { 0, 3, -2, 7, 1, 1 }, vals[2] = { -1, 5 }, yv[24];
	int64_t depth = 4;

	ck_assert_int_eq(npu_host_run(&h, (void *[]){ xv, &depth, vals }, (void *[]){ yv }, NULL), NPU_OK);
	for (int b = 0; b < 2; b++)
		for (int k = 0; k < 4; k++)
			for (int i = 0; i < 3; i++) {
				int at = (int)xv[b * 3 + i];

				at = at < 0 ? at + 4 : at;
				ck_assert_float_eq(yv[(b * 4 + k) * 3 + i], at == k ? 5.0f : -1.0f);
			}
}
END_TEST

/* Batched (pipelined) compilation has no host steps: refused by name. */
START_TEST(host_refused_in_a_batch)
{
	npu_ir_graph *g = det_model();
	struct npu_compile_target tgt = { .clusters = 14, .tpbs = 4, .hbsm_size = 2u << 20,
					  .batch = 2, .stages = 1, .allow_cpu_fallback = true };
	struct npu_cmodel *cm = NULL;

	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_eq(npu_compile_ir(g, &tgt, &cm), NPU_ERR_UNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "batch 1"));
	npu_ir_graph_free(g);
}
END_TEST

static Suite *host_suite(void)
{
	Suite *s = suite_create("host");
	TCase *tc = tcase_create("fallback");

	tcase_add_test(tc, host_det_between_programs);
	tcase_add_test(tc, host_refused_without_option);
	tcase_add_test(tc, host_npum_round_trip);
	tcase_add_test(tc, host_mod);
	tcase_add_test(tc, host_onehot);
	tcase_add_test(tc, host_refused_in_a_batch);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(host_suite)
