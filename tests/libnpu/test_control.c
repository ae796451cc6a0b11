// SPDX-License-Identifier: MIT
/*
 * ONNX If (issue 17, onnx/npu_onnx_if.c): x [4] -> If(cond) then
 * Relu(x) + t (t a branch initializer) else Neg(x) * 2 -> y, built as
 * ONNX bytes.  A constant condition compiles to the chosen branch alone
 * (the other's nodes gone: a branch with an operator libnpu cannot run
 * still compiles when it is not chosen); a run-time one runs both and
 * selects, per run; a nested If inside a branch reads the outer graph's x.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_compile.h"
#include "compile/npu_ops.h"
#include "model/npu_model_priv.h"
#include "npu_test.h"
#include "onnx/npu_onnx.h"
#include "onnx_build.h"

enum { N = 4 };

/* then: Relu(x) + t, with t an initializer of the branch. */
static onnxb *then_branch(void)
{
	onnxb *b = onnxb_new(8, 13);

	onnxb_init_f32(b, "t", 1, (int64_t[]){ N }, (float[]){ 1, 2, 3, 4 });
	onnxb_node(b, "Relu", NULL, "x", "r");
	onnxb_node(b, "Add", NULL, "r,t", "out");
	onnxb_output(b, "out", ONNXB_F32, 1, (int64_t[]){ N });
	return b;
}

/* else: Neg(x) * 2, or @bad: an operator libnpu does not know. */
static onnxb *else_branch(bool bad)
{
	onnxb *b = onnxb_new(8, 13);

	onnxb_init_f32(b, "two", 0, NULL, (float[]){ 2 });
	onnxb_node(b, bad ? "Frobnicate" : "Neg", NULL, "x", "r");
	onnxb_node(b, "Mul", NULL, "r,two", "out");
	onnxb_output(b, "out", ONNXB_F32, 1, (int64_t[]){ N });
	return b;
}

/*
 * The model: cond a constant (@cond 0 or 1) or a graph input (@cond < 0);
 * @nested: the then branch is itself an If on the same condition whose
 * both branches are then_branch (its x the outer graph's).
 */
static uint8_t *model(int cond, bool bad, bool nested, size_t *len)
{
	onnxb *m = onnxb_new(8, 13), *t = then_branch(), *e = else_branch(bad);
	onnxb *t2 = NULL, *tt = NULL, *te = NULL;
	Onnx__NodeProto *n;
	uint8_t *buf;

	onnxb_input(m, "x", ONNXB_F32, 1, (int64_t[]){ N });
	if (cond == 2) {
		/* Size(x) == 4: folds at shape inference, true. */
		onnxb_init(m, "four", ONNXB_I64, 0, NULL, (int64_t[]){ N }, 8);
		onnxb_node(m, "Size", NULL, "x", "sz");
		onnxb_node(m, "Equal", NULL, "sz,four", "c");
	} else if (cond < 0) {
		onnxb_input(m, "c", ONNXB_BOOL, 0, NULL);
	} else {
		uint8_t v = (uint8_t)cond;

		onnxb_init(m, "c", ONNXB_BOOL, 0, NULL, &v, 1);
	}
	n = onnxb_node(m, "If", "if_1", "c", "y");
	if (nested) {
		Onnx__NodeProto *in;

		t2 = onnxb_new(8, 13);
		tt = then_branch();
		te = then_branch();
		in = onnxb_node(t2, "If", "if_inner", "c", "out");
		onnxb_attr_g(t2, in, "then_branch", onnxb_model(tt)->graph);
		onnxb_attr_g(t2, in, "else_branch", onnxb_model(te)->graph);
		onnxb_output(t2, "out", ONNXB_F32, 1, (int64_t[]){ N });
		onnxb_attr_g(m, n, "then_branch", onnxb_model(t2)->graph);
	} else {
		onnxb_attr_g(m, n, "then_branch", onnxb_model(t)->graph);
	}
	onnxb_attr_g(m, n, "else_branch", onnxb_model(e)->graph);
	onnxb_output(m, "y", ONNXB_F32, 1, (int64_t[]){ N });
	buf = onnxb_pack(m, len);
	onnxb_free(m);
	onnxb_free(t);
	onnxb_free(e);
	onnxb_free(t2);
	onnxb_free(tt);
	onnxb_free(te);
	return buf;
}

static void ref(const float *x, bool cond, float *y)
{
	for (int i = 0; i < N; i++)
		y[i] = cond ? (x[i] > 0 ? x[i] : 0) + (float)(i + 1) : -x[i] * 2;
}

static uint32_t loop_limit;	/* the next compile()'s max_loop_iterations */

static npu_status compile(const uint8_t *buf, size_t len, struct npu_cmodel **cm,
			  npu_ir_graph **gout)
{
	struct npu_compile_target tgt = { .clusters = 14, .tpbs = 4, .hbsm_size = 2u << 20,
					  .batch = 1, .max_loop_iterations = loop_limit };
	npu_ir_graph *g;
	npu_status st = npu_onnx_parse(buf, len, &g);

	if (!st)
		st = npu_ops_infer_shapes(g);
	if (!st)
		st = npu_compile_ir(g, &tgt, cm);
	if (gout)
		*gout = g;
	else
		npu_ir_graph_free(g);
	return st;
}

/* Run @cm once on x (and cond @c when it is an input), checking against ref(). */
static void run(struct npu_cmodel *cm, int c, bool want)
{
	npu_model *m = calloc(1, sizeof(*m));
	float x[N] = { -1.5f, 0.5f, 2, -3 }, y[N], r[N];
	uint8_t cv = c > 0;
	npu_tensor in[2] = { { "x", NPU_DTYPE_FLOAT32, x, sizeof(x) },
			     { "c", NPU_DTYPE_BOOL, &cv, 1 } };
	npu_tensor out = { NULL, NPU_DTYPE_FLOAT32, y, sizeof(y) };
	npu_device *dev;
	npu_context *ctx;

	m->cm = cm;
	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_int_eq(npu_context_create(dev, m, 0, &ctx), NPU_OK);
	ck_assert_int_eq(npu_run(ctx, in, cm->ninputs, &out, 1), NPU_OK);
	ref(x, want, r);
	for (int i = 0; i < N; i++)
		ck_assert_float_eq_tol(y[i], r[i], 1e-2f * (1 + fabsf(r[i])));
	npu_context_destroy(ctx);
	npu_model_free(m);
	npu_device_close(dev);
}

/* A constant condition: only the chosen branch is compiled, the other may be anything. */
START_TEST(if_constant_condition_folds)
{
	for (int c = 0; c <= 1; c++) {
		struct npu_cmodel *cm;
		size_t len;
		uint8_t *buf = model(c, c == 1, false, &len);

		ck_assert_int_eq(compile(buf, len, &cm, NULL), NPU_OK);
		ck_assert_uint_eq(cm->ninputs, 1);
		for (uint32_t i = 0; i < cm->nsteps; i++) {
			ck_assert_ptr_null(strstr(cm->steps[i].label, c ? "/else/" : "/then/"));
			ck_assert_ptr_null(strstr(cm->steps[i].label, "Where"));
		}
		run(cm, -1, c);
		free(buf);
	}
}
END_TEST

/* A condition that folds at shape inference (a comparison of sizes): the chosen branch only. */
START_TEST(if_shape_condition_folds)
{
	size_t len;
	uint8_t *buf = model(2, false, false, &len);
	struct npu_cmodel *cm;

	ck_assert_int_eq(compile(buf, len, &cm, NULL), NPU_OK);
	ck_assert_uint_eq(cm->ninputs, 1);
	for (uint32_t i = 0; i < cm->nsteps; i++) {
		ck_assert_ptr_null(strstr(cm->steps[i].label, "/else/"));
		ck_assert_ptr_null(strstr(cm->steps[i].label, "Where"));
	}
	run(cm, -1, true);
	free(buf);
}
END_TEST

/* A run-time condition: both branches run, a Where chooses, per run. */
START_TEST(if_runtime_condition_selects)
{
	size_t len;
	uint8_t *buf = model(-1, false, false, &len);
	struct npu_cmodel *cm;

	for (int c = 0; c <= 1; c++) {
		ck_assert_int_eq(compile(buf, len, &cm, NULL), NPU_OK);
		ck_assert_uint_eq(cm->ninputs, 2);
		run(cm, c, c);
	}
	free(buf);
	/* A run-time condition cannot skip a branch libnpu cannot run: refused by name. */
	buf = model(-1, true, false, &len);
	ck_assert_int_eq(compile(buf, len, &cm, NULL), NPU_ERR_UNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "Frobnicate"));
	free(buf);
}
END_TEST

/* A nested If: its branches read the outer graph's x; names never clash. */
START_TEST(if_nested_outer_scope)
{
	size_t len;
	uint8_t *buf = model(-1, false, true, &len);
	struct npu_cmodel *cm;
	npu_ir_graph *g;

	ck_assert_int_eq(compile(buf, len, &cm, &g), NPU_OK);
	ck_assert_int_ge(npu_ir_find_tensor(g, "if_1/then/if_inner/then/t"), 0);
	ck_assert_int_ge(npu_ir_find_tensor(g, "if_1/then/if_inner/else/t"), 0);
	npu_ir_graph_free(g);
	run(cm, 1, true);
	ck_assert_int_eq(compile(buf, len, &cm, NULL), NPU_OK);
	run(cm, 0, false);
	free(buf);
}
END_TEST

/*
 * Scan (opset 9+), unrolled at load: state s [2] += x[t] over x [T, 2]
 * read in reverse, each step's y = s * w (w an outer initializer read by
 * the body) stacked on axis 0; against a C loop.
 */
START_TEST(scan_unrolled)
{
	enum { T = 3, D = 2 };
	onnxb *m = onnxb_new(8, 13), *b = onnxb_new(8, 13);
	float x[T * D] = { 1, 2, 3, 4, 5, 6 }, s0[D] = { 0.5f, -1 }, w[D] = { 2, 3 };
	float fin[D], ys[T * D], s[D];
	struct npu_cmodel *cm;
	Onnx__NodeProto *n;
	npu_model *mod = calloc(1, sizeof(*mod));
	npu_tensor in[2] = { { "init", NPU_DTYPE_FLOAT32, s0, sizeof(s0) },
			     { "x", NPU_DTYPE_FLOAT32, x, sizeof(x) } };
	npu_tensor out[2] = { { "fin", NPU_DTYPE_FLOAT32, fin, sizeof(fin) },
			      { "ys", NPU_DTYPE_FLOAT32, ys, sizeof(ys) } };
	npu_device *dev;
	npu_context *ctx;
	uint8_t *buf;
	size_t len;

	onnxb_input(b, "s_in", ONNXB_F32, 1, (int64_t[]){ D });
	onnxb_input(b, "x_t", ONNXB_F32, 1, (int64_t[]){ D });
	onnxb_node(b, "Add", NULL, "s_in,x_t", "s_out");
	onnxb_node(b, "Mul", NULL, "s_out,w", "y");
	onnxb_output(b, "s_out", ONNXB_F32, 1, (int64_t[]){ D });
	onnxb_output(b, "y", ONNXB_F32, 1, (int64_t[]){ D });
	onnxb_input(m, "init", ONNXB_F32, 1, (int64_t[]){ D });
	onnxb_input(m, "x", ONNXB_F32, 2, (int64_t[]){ T, D });
	onnxb_init_f32(m, "w", 1, (int64_t[]){ D }, w);
	n = onnxb_node(m, "Scan", "scan_1", "init,x", "fin,ys");
	onnxb_attr_g(m, n, "body", onnxb_model(b)->graph);
	onnxb_attr_i(m, n, "num_scan_inputs", 1);
	onnxb_attr_ints(m, n, "scan_input_directions", 1, (int64_t[]){ 1 });
	onnxb_output(m, "fin", ONNXB_F32, 1, (int64_t[]){ D });
	onnxb_output(m, "ys", ONNXB_F32, 2, (int64_t[]){ T, D });
	buf = onnxb_pack(m, &len);
	onnxb_free(m);
	onnxb_free(b);
	ck_assert_int_eq(compile(buf, len, &cm, NULL), NPU_OK);
	free(buf);
	mod->cm = cm;
	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_int_eq(npu_context_create(dev, mod, 0, &ctx), NPU_OK);
	ck_assert_int_eq(npu_run(ctx, in, 2, out, 2), NPU_OK);
	memcpy(s, s0, sizeof(s));
	for (int t = 0; t < T; t++)
		for (int d = 0; d < D; d++) {
			s[d] += x[(T - 1 - t) * D + d];
			ck_assert_float_eq_tol(ys[t * D + d], s[d] * w[d], 1e-2f);
		}
	for (int d = 0; d < D; d++)
		ck_assert_float_eq_tol(fin[d], s[d], 1e-2f);
	npu_context_destroy(ctx);
	npu_model_free(mod);
	npu_device_close(dev);
}
END_TEST

/*
 * Scan whose body passes one carried value through as another's next
 * value (a' = a + x_t, b' = a, y_t = b * w): unrolling reads the copy's
 * input names while it replaces the carried ones (an early version of
 * the unroller read a name it had just freed: ASan).
 */
START_TEST(scan_unrolled_state_passed_through)
{
	enum { T = 3, D = 2 };
	onnxb *m = onnxb_new(8, 13), *b = onnxb_new(8, 13);
	float x[T * D] = { 1, 2, 3, 4, 5, 6 }, a0[D] = { 0.5f, -1 }, b0[D] = { 7, 8 };
	float w[D] = { 2, 3 }, fa[D], fb[D], ys[T * D], ra[D], rb[D];
	struct npu_cmodel *cm;
	Onnx__NodeProto *n;
	npu_model *mod = calloc(1, sizeof(*mod));
	npu_tensor in[3] = { { "a0", NPU_DTYPE_FLOAT32, a0, sizeof(a0) },
			     { "b0", NPU_DTYPE_FLOAT32, b0, sizeof(b0) },
			     { "x", NPU_DTYPE_FLOAT32, x, sizeof(x) } };
	npu_tensor out[3] = { { "fa", NPU_DTYPE_FLOAT32, fa, sizeof(fa) },
			      { "fb", NPU_DTYPE_FLOAT32, fb, sizeof(fb) },
			      { "ys", NPU_DTYPE_FLOAT32, ys, sizeof(ys) } };
	npu_device *dev;
	npu_context *ctx;
	uint8_t *buf;
	size_t len;

	onnxb_input(b, "a_in", ONNXB_F32, 1, (int64_t[]){ D });
	onnxb_input(b, "b_in", ONNXB_F32, 1, (int64_t[]){ D });
	onnxb_input(b, "x_t", ONNXB_F32, 1, (int64_t[]){ D });
	onnxb_node(b, "Add", NULL, "a_in,x_t", "a_out");
	onnxb_node(b, "Mul", NULL, "b_in,w", "y");
	onnxb_output(b, "a_out", ONNXB_F32, 1, (int64_t[]){ D });
	onnxb_output(b, "a_in", ONNXB_F32, 1, (int64_t[]){ D });
	onnxb_output(b, "y", ONNXB_F32, 1, (int64_t[]){ D });
	onnxb_input(m, "a0", ONNXB_F32, 1, (int64_t[]){ D });
	onnxb_input(m, "b0", ONNXB_F32, 1, (int64_t[]){ D });
	onnxb_input(m, "x", ONNXB_F32, 2, (int64_t[]){ T, D });
	onnxb_init_f32(m, "w", 1, (int64_t[]){ D }, w);
	n = onnxb_node(m, "Scan", "scan_1", "a0,b0,x", "fa,fb,ys");
	onnxb_attr_g(m, n, "body", onnxb_model(b)->graph);
	onnxb_attr_i(m, n, "num_scan_inputs", 1);
	onnxb_output(m, "fa", ONNXB_F32, 1, (int64_t[]){ D });
	onnxb_output(m, "fb", ONNXB_F32, 1, (int64_t[]){ D });
	onnxb_output(m, "ys", ONNXB_F32, 2, (int64_t[]){ T, D });
	buf = onnxb_pack(m, &len);
	onnxb_free(m);
	onnxb_free(b);
	ck_assert_msg(compile(buf, len, &cm, NULL) == NPU_OK, "%s", npu_last_error());
	free(buf);
	mod->cm = cm;
	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_int_eq(npu_context_create(dev, mod, 0, &ctx), NPU_OK);
	ck_assert_int_eq(npu_run(ctx, in, 3, out, 3), NPU_OK);
	memcpy(ra, a0, sizeof(ra));
	memcpy(rb, b0, sizeof(rb));
	for (int t = 0; t < T; t++)
		for (int d = 0; d < D; d++) {
			float a = ra[d];

			ck_assert_float_eq_tol(ys[t * D + d], rb[d] * w[d], 1e-2f);
			ra[d] = a + x[t * D + d];
			rb[d] = a;
		}
	for (int d = 0; d < D; d++) {
		ck_assert_float_eq_tol(fa[d], ra[d], 1e-2f);
		ck_assert_float_eq_tol(fb[d], rb[d], 1e-2f);
	}
	npu_context_destroy(ctx);
	npu_model_free(mod);
	npu_device_close(dev);
}
END_TEST

/*
 * Host-side control flow (npu_control.c): x [S, S] -> If(c) then four
 * MatMul + Relu layers (w a constant) else Neg(x).  Only the chosen branch
 * runs: the last run's steps name no node of the other, and the cheap
 * branch costs a fraction of the cycles.
 */
enum { S = 64, LAYERS = 4 };

static uint8_t *costly_model(size_t *len)
{
	onnxb *m = onnxb_new(8, 13), *t = onnxb_new(8, 13), *e = onnxb_new(8, 13);
	float *w = malloc(S * S * sizeof(*w));
	Onnx__NodeProto *n;
	uint8_t *buf;

	for (int i = 0; i < S * S; i++)
		w[i] = (float)((i * 7) % 13 - 6) / 64.0f;
	onnxb_init_f32(m, "w", 2, (int64_t[]){ S, S }, w);
	for (int l = 0; l < LAYERS; l++) {
		char in[32], mm[32], out[32], ins[80], nm[48];

		snprintf(in, sizeof(in), l ? "h%d" : "x", l);
		snprintf(mm, sizeof(mm), "mm%d", l);
		snprintf(out, sizeof(out), l == LAYERS - 1 ? "out" : "h%d", l + 1);
		snprintf(ins, sizeof(ins), "%s,w", in);
		snprintf(nm, sizeof(nm), "if_1/then/%s", mm);
		onnxb_node(t, "MatMul", nm, ins, mm);
		onnxb_node(t, "Relu", NULL, mm, out);
	}
	onnxb_output(t, "out", ONNXB_F32, 2, (int64_t[]){ S, S });
	onnxb_node(e, "Neg", "if_1/else/neg", "x", "out");
	onnxb_output(e, "out", ONNXB_F32, 2, (int64_t[]){ S, S });
	onnxb_input(m, "x", ONNXB_F32, 2, (int64_t[]){ S, S });
	onnxb_input(m, "c", ONNXB_BOOL, 0, NULL);
	n = onnxb_node(m, "If", "if_1", "c", "y");
	onnxb_attr_g(m, n, "then_branch", onnxb_model(t)->graph);
	onnxb_attr_g(m, n, "else_branch", onnxb_model(e)->graph);
	onnxb_output(m, "y", ONNXB_F32, 2, (int64_t[]){ S, S });
	buf = onnxb_pack(m, len);
	onnxb_free(m);
	onnxb_free(t);
	onnxb_free(e);
	free(w);
	return buf;
}

static void costly_ref(const float *x, bool c, float *y)
{
	float *h = malloc(S * S * sizeof(*h)), *o = malloc(S * S * sizeof(*o));

	if (!c) {
		for (int i = 0; i < S * S; i++)
			y[i] = -x[i];
		free(h);
		free(o);
		return;
	}
	memcpy(h, x, S * S * sizeof(*h));
	for (int l = 0; l < LAYERS; l++) {
		for (int i = 0; i < S; i++)
			for (int j = 0; j < S; j++) {
				float a = 0;

				for (int k = 0; k < S; k++)
					a += h[i * S + k] * (float)((k * S + j) * 7 % 13 - 6) / 64.0f;
				o[i * S + j] = a > 0 ? a : 0;
			}
		memcpy(h, o, S * S * sizeof(*h));
	}
	memcpy(y, h, S * S * sizeof(*h));
	free(h);
	free(o);
}

/* Run @ctx on x and c, check y, return the device cycles; *@nsteps the steps run. */
static uint64_t run_costly(npu_context *ctx, const float *x, bool c, size_t *nsteps,
			   bool *saw_then, bool *saw_else)
{
	float *y = malloc(S * S * sizeof(*y)), *r = malloc(S * S * sizeof(*r));
	uint8_t cv = c;
	npu_tensor in[2] = { { "x", NPU_DTYPE_FLOAT32, (void *)x, S * S * sizeof(float) },
			     { "c", NPU_DTYPE_BOOL, &cv, 1 } };
	npu_tensor out = { "y", NPU_DTYPE_FLOAT32, y, S * S * sizeof(float) };
	npu_step_stats st[64];
	npu_run_stats rs;

	ck_assert_int_eq(npu_run(ctx, in, 2, &out, 1), NPU_OK);
	costly_ref(x, c, r);
	for (int i = 0; i < S * S; i++)
		ck_assert_float_eq_tol(y[i], r[i], 2e-2f * (1 + fabsf(r[i])));
	ck_assert_int_eq(npu_context_last_run_steps(ctx, st, 64, nsteps), NPU_OK);
	*saw_then = *saw_else = false;
	for (size_t i = 0; i < *nsteps && i < 64; i++) {
		*saw_then |= strstr(st[i].label, "if_1/then/") != NULL;
		*saw_else |= strstr(st[i].label, "if_1/else/") != NULL;
	}
	ck_assert_int_eq(npu_context_last_run(ctx, &rs), NPU_OK);
	free(y);
	free(r);
	return rs.device_cycles;
}

START_TEST(if_runtime_runs_one_branch)
{
	size_t len, nthen, nelse;
	uint8_t *buf = costly_model(&len);
	struct npu_cmodel *cm;
	npu_model *m = calloc(1, sizeof(*m));
	float *x = malloc(S * S * sizeof(*x));
	uint64_t cthen, celse;
	unsigned ctl = 0;
	bool st, se;
	npu_device *dev;
	npu_context *ctx;

	onnxb_fill(x, S * S, 3);
	ck_assert_msg(compile(buf, len, &cm, NULL) == NPU_OK, "%s", npu_last_error());
	for (uint32_t i = 0; i < cm->nsteps; i++)
		ctl += npu_step_is_control(&cm->steps[i]);
	ck_assert_uint_eq(ctl, 2);	/* IF_NOT before then, JUMP after it */
	ck_assert_uint_eq(npu_cmodel_host_steps(cm), 0);
	m->cm = cm;
	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_int_eq(npu_context_create(dev, m, 0, &ctx), NPU_OK);
	/* Twice each way: a branch not taken leaves nothing behind. */
	for (int rep = 0; rep < 2; rep++) {
		cthen = run_costly(ctx, x, true, &nthen, &st, &se);
		ck_assert(st && !se);
		celse = run_costly(ctx, x, false, &nelse, &st, &se);
		ck_assert(!st && se);
	}
	if (getenv("NPU_TEST_SAY"))
		printf("costly If: then %llu cycles in %zu steps, else %llu cycles in %zu steps, %u steps compiled\n", (unsigned long long)cthen, nthen, (unsigned long long)celse, nelse, cm->nsteps);
	ck_assert_uint_lt(nelse, nthen);
	ck_assert_uint_lt(nthen, cm->nsteps);
	/* The cheap branch: the Neg and the Where, well under half the cycles. */
	ck_assert_uint_lt(celse * 2, cthen);
	npu_context_destroy(ctx);
	npu_model_free(m);
	npu_device_close(dev);
	free(x);
	free(buf);
}
END_TEST

/* Nested run-time Ifs on two conditions: If(c1) then (If(c2) then A else B) else C. */
static uint8_t *nested2_model(size_t *len)
{
	onnxb *m = onnxb_new(8, 13), *t = onnxb_new(8, 13), *e = onnxb_new(8, 13);
	onnxb *tt = then_branch(), *te = else_branch(false);
	Onnx__NodeProto *n, *in;
	uint8_t *buf;

	in = onnxb_node(t, "If", "if_inner", "c2", "out");
	onnxb_attr_g(t, in, "then_branch", onnxb_model(tt)->graph);
	onnxb_attr_g(t, in, "else_branch", onnxb_model(te)->graph);
	onnxb_output(t, "out", ONNXB_F32, 1, (int64_t[]){ N });
	onnxb_init_f32(e, "three", 0, NULL, (float[]){ 3 });
	onnxb_node(e, "Mul", NULL, "x,three", "out");
	onnxb_output(e, "out", ONNXB_F32, 1, (int64_t[]){ N });
	onnxb_input(m, "x", ONNXB_F32, 1, (int64_t[]){ N });
	onnxb_input(m, "c1", ONNXB_BOOL, 0, NULL);
	onnxb_input(m, "c2", ONNXB_BOOL, 0, NULL);
	n = onnxb_node(m, "If", "if_1", "c1", "y");
	onnxb_attr_g(m, n, "then_branch", onnxb_model(t)->graph);
	onnxb_attr_g(m, n, "else_branch", onnxb_model(e)->graph);
	onnxb_output(m, "y", ONNXB_F32, 1, (int64_t[]){ N });
	buf = onnxb_pack(m, len);
	onnxb_free(m);
	onnxb_free(t);
	onnxb_free(e);
	onnxb_free(tt);
	onnxb_free(te);
	return buf;
}

/* Run @cm (or its .npum round trip) for every (c1, c2) against a C reference. */
static void run_nested2(struct npu_cmodel *cm)
{
	npu_model *m = calloc(1, sizeof(*m));
	npu_device *dev;
	npu_context *ctx;

	m->cm = cm;
	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_int_eq(npu_context_create(dev, m, 0, &ctx), NPU_OK);
	for (int k = 0; k < 4; k++) {
		float x[N] = { -1.5f, 0.5f, 2, -3 }, y[N], r[N];
		uint8_t c1 = k & 1, c2 = k >> 1;
		npu_tensor in[3] = { { "x", NPU_DTYPE_FLOAT32, x, sizeof(x) },
				     { "c1", NPU_DTYPE_BOOL, &c1, 1 },
				     { "c2", NPU_DTYPE_BOOL, &c2, 1 } };
		npu_tensor out = { NULL, NPU_DTYPE_FLOAT32, y, sizeof(y) };

		ck_assert_int_eq(npu_run(ctx, in, 3, &out, 1), NPU_OK);
		if (c1)
			ref(x, c2, r);
		for (int i = 0; i < N; i++) {
			if (!c1)
				r[i] = x[i] * 3;
			ck_assert_float_eq_tol(y[i], r[i], 1e-2f * (1 + fabsf(r[i])));
		}
	}
	npu_context_destroy(ctx);
	npu_model_free(m);
	npu_device_close(dev);
}

START_TEST(if_runtime_nested_two_conditions)
{
	size_t len, flen;
	uint8_t *buf = nested2_model(&len), *file;
	struct npu_cmodel *cm, *back;
	unsigned ctl = 0;

	ck_assert_int_eq(compile(buf, len, &cm, NULL), NPU_OK);
	for (uint32_t i = 0; i < cm->nsteps; i++)
		ctl += npu_step_is_control(&cm->steps[i]);
	ck_assert_uint_eq(ctl, 4);
	/* The file: version 3, and the same runs after a round trip. */
	ck_assert_int_eq(npu_cmodel_write(cm, &file, &flen), NPU_OK);
	ck_assert_uint_eq(file[4], 3);
	ck_assert_int_eq(npu_cmodel_read(file, flen, &back), NPU_OK);
	free(file);
	run_nested2(cm);
	run_nested2(back);
	free(buf);
}
END_TEST

/* CRC-32 (IEEE, reflected) of @n bytes, as the .npum header holds it. */
static uint32_t file_crc32(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
	}
	return c ^ 0xffffffffu;
}

/* The reader refuses a control step going backwards or past the end, and an unknown kind. */
START_TEST(if_control_file_checked)
{
	size_t len, flen;
	uint8_t *buf = model(-1, false, false, &len), *file;
	struct npu_cmodel *cm, *back;
	uint32_t ctl = UINT32_MAX;

	ck_assert_int_eq(compile(buf, len, &cm, NULL), NPU_OK);
	for (uint32_t i = 0; i < cm->nsteps && ctl == UINT32_MAX; i++)
		if (npu_step_is_control(&cm->steps[i]))
			ctl = i;
	ck_assert_uint_ne(ctl, UINT32_MAX);
	for (int bad = 0; bad < 4; bad++) {
		struct npu_host_step *h = cm->steps[ctl].host;
		uint32_t target = h->target, kind = h->ctl;

		if (bad == 0)
			h->target = ctl;		/* itself: would loop */
		else if (bad == 1)
			h->target = 0;			/* backwards */
		else if (bad == 2)
			h->target = cm->nsteps + 1;	/* past the end */
		else
			h->ctl = 7;			/* unknown kind */
		ck_assert_int_eq(npu_cmodel_validate(cm), NPU_ERR_FORMAT);
		ck_assert_ptr_nonnull(strstr(npu_last_error(), "control step"));
		h->target = target;
		h->ctl = kind;
	}
	/* Through the file: a target patched backwards in the CTL record is refused on read. */
	ck_assert_int_eq(npu_cmodel_write(cm, &file, &flen), NPU_OK);
	ck_assert_int_eq(npu_cmodel_read(file, flen, &back), NPU_OK);
	npu_cmodel_free(back);
	for (size_t off = 32; off + 24 <= flen;) {
		uint32_t tag, rlen;

		memcpy(&tag, file + off, 4);
		memcpy(&rlen, file + off + 4, 4);
		if (tag == 11) {
			uint32_t zero = 0, crc;

			memcpy(file + off + 16, &zero, 4);	/* target 0 */
			crc = file_crc32(file + 32, flen - 32);
			memcpy(file + 24, &crc, 4);
			ck_assert_int_eq(npu_cmodel_read(file, flen, &back), NPU_ERR_FORMAT);
			ck_assert_ptr_nonnull(strstr(npu_last_error(), "control step"));
			break;
		}
		off += 8 + rlen;
	}
	free(file);
	npu_cmodel_free(cm);
	free(buf);
}
END_TEST

/*
 * Loop (issue 17) as host-side control flow: the body is a step range
 * the host repeats.  Carried s, acc [4]:
 *   s' = s + w          (w = 2 x: an outer tensor computed at run time)
 *   acc' = acc / 2 + s'
 *   cond' = sum(s') < lim   (lim an outer graph input)
 * With @scan: M a constant 3, no condition, and a scan output
 * ys = s' * iter_num ([3, 4]); else M and cond are graph inputs.
 */
enum { LN = 4 };

static uint8_t *loop_model(bool scan, bool keep_cond, size_t *len)
{
	onnxb *m = onnxb_new(8, 13), *b = onnxb_new(8, 13);
	Onnx__NodeProto *n;
	uint8_t *buf;

	onnxb_input(b, "i", ONNXB_I64, 0, NULL);
	onnxb_input(b, "c_in", ONNXB_BOOL, 0, NULL);
	onnxb_input(b, "s", ONNXB_F32, 1, (int64_t[]){ LN });
	onnxb_input(b, "acc", ONNXB_F32, 1, (int64_t[]){ LN });
	onnxb_init_f32(b, "half", 0, NULL, (float[]){ 0.5f });
	onnxb_node(b, "Add", "body_add", "s,w", "s2");
	onnxb_node(b, "Mul", NULL, "acc,half", "a1");
	onnxb_node(b, "Add", NULL, "a1,s2", "acc2");
	n = onnxb_node(b, "ReduceSum", NULL, "s2", "sm");
	onnxb_attr_i(b, n, "keepdims", 0);
	/* @keep_cond: the condition passes through (the Loop unrolls), sm unused. */
	onnxb_node(b, keep_cond ? "Identity" : "Less", NULL, keep_cond ? "c_in" : "sm,lim", "c_out");
	onnxb_output(b, "c_out", ONNXB_BOOL, 0, NULL);
	onnxb_output(b, "s2", ONNXB_F32, 1, (int64_t[]){ LN });
	onnxb_output(b, "acc2", ONNXB_F32, 1, (int64_t[]){ LN });
	if (scan) {
		n = onnxb_node(b, "Cast", NULL, "i", "fi");
		onnxb_attr_i(b, n, "to", ONNXB_F32);
		onnxb_node(b, "Mul", NULL, "s2,fi", "y");
		onnxb_output(b, "y", ONNXB_F32, 1, (int64_t[]){ LN });
	}
	onnxb_input(m, "x", ONNXB_F32, 1, (int64_t[]){ LN });
	onnxb_input(m, "s0", ONNXB_F32, 1, (int64_t[]){ LN });
	onnxb_input(m, "acc0", ONNXB_F32, 1, (int64_t[]){ LN });
	onnxb_input(m, "lim", ONNXB_F32, 0, NULL);
	onnxb_init_f32(m, "two", 0, NULL, (float[]){ 2 });
	onnxb_node(m, "Mul", NULL, "x,two", "w");
	if (scan) {
		onnxb_init(m, "M", ONNXB_I64, 0, NULL, (int64_t[]){ 3 }, 8);
		n = onnxb_node(m, "Loop", "loop_1", "M,,s0,acc0", "s_fin,acc_fin,ys");
	} else {
		onnxb_input(m, "M", ONNXB_I64, 0, NULL);
		onnxb_input(m, "c", ONNXB_BOOL, 0, NULL);
		n = onnxb_node(m, "Loop", "loop_1", "M,c,s0,acc0", "s_fin,acc_fin");
	}
	onnxb_attr_g(m, n, "body", onnxb_model(b)->graph);
	onnxb_output(m, "s_fin", ONNXB_F32, 1, (int64_t[]){ LN });
	onnxb_output(m, "acc_fin", ONNXB_F32, 1, (int64_t[]){ LN });
	if (scan)
		onnxb_output(m, "ys", ONNXB_F32, 2, (int64_t[]){ 3, LN });
	buf = onnxb_pack(m, len);
	onnxb_free(m);
	onnxb_free(b);
	return buf;
}

static const float loop_x[LN] = { 0.5f, -1, 2, 0.25f }, loop_s0[LN] = { 1, 2, 3, 4 },
		   loop_a0[LN] = { -1, 0, 1, 2 };

/* The C reference: iterations run into *@iters, ys rows (if @ys) per iteration. */
static void loop_ref(int64_t M, bool c, float lim, float *s, float *acc, float *ys, int *iters)
{
	int64_t i = 0;

	memcpy(s, loop_s0, sizeof(loop_s0));
	memcpy(acc, loop_a0, sizeof(loop_a0));
	while (i < M && c) {
		float sum = 0;

		for (int k = 0; k < LN; k++) {
			s[k] += 2 * loop_x[k];
			acc[k] = acc[k] * 0.5f + s[k];
			sum += s[k];
			if (ys)
				ys[i * LN + k] = s[k] * (float)i;
		}
		c = sum < lim;
		i++;
	}
	*iters = (int)i;
}

/* One run of the run-time Loop; its status, outputs checked against loop_ref() when OK. */
static npu_status run_loop(npu_context *ctx, int64_t M, bool c, float lim, int *iters)
{
	float s[LN], acc[LN], rs[LN], racc[LN];
	uint8_t cv = c;
	npu_tensor in[6] = { { "x", NPU_DTYPE_FLOAT32, (void *)loop_x, sizeof(loop_x) },
			     { "s0", NPU_DTYPE_FLOAT32, (void *)loop_s0, sizeof(loop_s0) },
			     { "acc0", NPU_DTYPE_FLOAT32, (void *)loop_a0, sizeof(loop_a0) },
			     { "lim", NPU_DTYPE_FLOAT32, &lim, sizeof(lim) },
			     { "M", NPU_DTYPE_INT64, &M, sizeof(M) },
			     { "c", NPU_DTYPE_BOOL, &cv, 1 } };
	npu_tensor out[2] = { { "s_fin", NPU_DTYPE_FLOAT32, s, sizeof(s) },
			      { "acc_fin", NPU_DTYPE_FLOAT32, acc, sizeof(acc) } };
	npu_status st = npu_run(ctx, in, 6, out, 2);

	if (st)
		return st;
	loop_ref(M, c, lim, rs, racc, NULL, iters);
	for (int k = 0; k < LN; k++) {
		ck_assert_float_eq_tol(s[k], rs[k], 1e-2f * (1 + fabsf(rs[k])));
		ck_assert_float_eq_tol(acc[k], racc[k], 1e-2f * (1 + fabsf(racc[k])));
	}
	return NPU_OK;
}

/* Body steps of the last run: those labelled with the body's first Add. */
static size_t body_runs(npu_context *ctx)
{
	npu_step_stats st[512];
	size_t n = 0, count;

	ck_assert_int_eq(npu_context_last_run_steps(ctx, st, 512, &count), NPU_OK);
	for (size_t i = 0; i < count && i < 512; i++)
		n += strstr(st[i].label, "body_add") != NULL;
	return n;
}

START_TEST(loop_runtime_trip_count_and_condition)
{
	size_t len, flen;
	uint8_t *buf = loop_model(false, false, &len), *file;
	struct npu_cmodel *cm, *back;
	npu_model *m = calloc(1, sizeof(*m));
	npu_device *dev;
	npu_context *ctx;
	int iters;

	loop_limit = 10;
	ck_assert_msg(compile(buf, len, &cm, NULL) == NPU_OK, "%s", npu_last_error());
	loop_limit = 0;
	ck_assert_int_eq(npu_cmodel_write(cm, &file, &flen), NPU_OK);
	ck_assert_uint_eq(file[4], 3);
	ck_assert_int_eq(npu_cmodel_read(file, flen, &back), NPU_OK);
	free(file);
	npu_cmodel_free(cm);
	m->cm = back;
	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_int_eq(npu_context_create(dev, m, 0, &ctx), NPU_OK);
	/* The trip count decides. */
	ck_assert_int_eq(run_loop(ctx, 5, true, 1e9f, &iters), NPU_OK);
	ck_assert_int_eq(iters, 5);
	ck_assert_uint_eq(body_runs(ctx), 5);
	ck_assert_int_eq(run_loop(ctx, 2, true, 1e9f, &iters), NPU_OK);
	ck_assert_uint_eq(body_runs(ctx), 2);
	/* The condition computed in the body stops it early: sum(s) grows by 3.5 a round. */
	ck_assert_int_eq(run_loop(ctx, 8, true, 15.0f, &iters), NPU_OK);
	ck_assert_int_eq(iters, 2);
	ck_assert_uint_eq(body_runs(ctx), 2);
	/* No iteration at all: the outputs are the initial values. */
	ck_assert_int_eq(run_loop(ctx, 0, true, 1e9f, &iters), NPU_OK);
	ck_assert_uint_eq(body_runs(ctx), 0);
	ck_assert_int_eq(run_loop(ctx, 4, false, 1e9f, &iters), NPU_OK);
	ck_assert_int_eq(iters, 0);
	/* A loop that would run on stops at the compiled limit (10 here), clearly. */
	ck_assert_int_eq(run_loop(ctx, 50, true, 1e9f, &iters), NPU_ERR_UNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "limit of 10"));
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "loop_1"));
	/* ... and the context runs again after that. */
	ck_assert_int_eq(run_loop(ctx, 3, true, 1e9f, &iters), NPU_OK);
	npu_context_destroy(ctx);
	npu_model_free(m);
	npu_device_close(dev);
	free(buf);
}
END_TEST

START_TEST(loop_constant_trip_count_scan_output)
{
	size_t len;
	uint8_t *buf = loop_model(true, false, &len);
	struct npu_cmodel *cm;
	npu_model *m = calloc(1, sizeof(*m));
	float lim = 1e9f, s[LN], acc[LN], ys[3 * LN], rs[LN], racc[LN], rys[3 * LN];
	npu_tensor in[4] = { { "x", NPU_DTYPE_FLOAT32, (void *)loop_x, sizeof(loop_x) },
			     { "s0", NPU_DTYPE_FLOAT32, (void *)loop_s0, sizeof(loop_s0) },
			     { "acc0", NPU_DTYPE_FLOAT32, (void *)loop_a0, sizeof(loop_a0) },
			     { "lim", NPU_DTYPE_FLOAT32, &lim, sizeof(lim) } };
	npu_tensor out[3] = { { "s_fin", NPU_DTYPE_FLOAT32, s, sizeof(s) },
			      { "acc_fin", NPU_DTYPE_FLOAT32, acc, sizeof(acc) },
			      { "ys", NPU_DTYPE_FLOAT32, ys, sizeof(ys) } };
	npu_device *dev;
	npu_context *ctx;
	int iters;

	ck_assert_msg(compile(buf, len, &cm, NULL) == NPU_OK, "%s", npu_last_error());
	m->cm = cm;
	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_int_eq(npu_context_create(dev, m, 0, &ctx), NPU_OK);
	for (int rep = 0; rep < 2; rep++) {
		lim = 1e9f;
		ck_assert_int_eq(npu_run(ctx, in, 4, out, 3), NPU_OK);
		loop_ref(3, true, lim, rs, racc, rys, &iters);
		for (int k = 0; k < LN; k++) {
			ck_assert_float_eq_tol(s[k], rs[k], 1e-2f * (1 + fabsf(rs[k])));
			ck_assert_float_eq_tol(acc[k], racc[k], 1e-2f * (1 + fabsf(racc[k])));
		}
		for (int k = 0; k < 3 * LN; k++)
			ck_assert_float_eq_tol(ys[k], rys[k], 1e-2f * (1 + fabsf(rys[k])));
		/* Stopping early leaves the scan output short: an error naming the Loop. */
		lim = 10.0f;
		ck_assert_int_eq(npu_run(ctx, in, 4, out, 3), NPU_ERR_UNSUPPORTED);
		ck_assert_ptr_nonnull(strstr(npu_last_error(), "ran 1 iterations"));
	}
	npu_context_destroy(ctx);
	npu_model_free(m);
	npu_device_close(dev);
	free(buf);
}
END_TEST

/*
 * A constant trip count and a condition the body passes through: the Loop
 * unrolls at load (no control step, each copy's steps in one straight
 * run), same values and scan output as the C loop.
 */
START_TEST(loop_constant_unrolled)
{
	size_t len;
	uint8_t *buf = loop_model(true, true, &len);
	struct npu_cmodel *cm;
	npu_model *m = calloc(1, sizeof(*m));
	float lim = 0, s[LN], acc[LN], ys[3 * LN], rs[LN], racc[LN], rys[3 * LN];
	npu_tensor in[4] = { { "x", NPU_DTYPE_FLOAT32, (void *)loop_x, sizeof(loop_x) },
			     { "s0", NPU_DTYPE_FLOAT32, (void *)loop_s0, sizeof(loop_s0) },
			     { "acc0", NPU_DTYPE_FLOAT32, (void *)loop_a0, sizeof(loop_a0) },
			     { "lim", NPU_DTYPE_FLOAT32, &lim, sizeof(lim) } };
	npu_tensor out[3] = { { "s_fin", NPU_DTYPE_FLOAT32, s, sizeof(s) },
			      { "acc_fin", NPU_DTYPE_FLOAT32, acc, sizeof(acc) },
			      { "ys", NPU_DTYPE_FLOAT32, ys, sizeof(ys) } };
	npu_device *dev;
	npu_context *ctx;
	npu_ir_graph *g;
	int iters;

	ck_assert_msg(compile(buf, len, &cm, &g) == NPU_OK, "%s", npu_last_error());
	ck_assert_int_ge(npu_ir_find_tensor(g, "loop_1/2/s2"), 0);
	npu_ir_graph_free(g);
	for (uint32_t i = 0; i < cm->nsteps; i++)
		ck_assert(!npu_step_on_host(&cm->steps[i]));
	m->cm = cm;
	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_int_eq(npu_context_create(dev, m, 0, &ctx), NPU_OK);
	ck_assert_int_eq(npu_run(ctx, in, 4, out, 3), NPU_OK);
	/* lim is unused: the condition stays true, 3 iterations. */
	loop_ref(3, true, 1e9f, rs, racc, rys, &iters);
	for (int k = 0; k < LN; k++) {
		ck_assert_float_eq_tol(s[k], rs[k], 1e-2f * (1 + fabsf(rs[k])));
		ck_assert_float_eq_tol(acc[k], racc[k], 1e-2f * (1 + fabsf(racc[k])));
	}
	for (int k = 0; k < 3 * LN; k++)
		ck_assert_float_eq_tol(ys[k], rys[k], 1e-2f * (1 + fabsf(rys[k])));
	npu_context_destroy(ctx);
	npu_model_free(m);
	npu_device_close(dev);
	free(buf);
}
END_TEST

static Suite *control_suite(void)
{
	Suite *s = suite_create("control");
	TCase *tc = tcase_create("if");

	tcase_add_test(tc, if_constant_condition_folds);
	tcase_add_test(tc, if_shape_condition_folds);
	tcase_add_test(tc, if_runtime_condition_selects);
	tcase_add_test(tc, if_nested_outer_scope);
	tcase_add_test(tc, scan_unrolled);
	tcase_add_test(tc, scan_unrolled_state_passed_through);
	tcase_add_test(tc, if_runtime_runs_one_branch);
	tcase_add_test(tc, if_runtime_nested_two_conditions);
	tcase_add_test(tc, if_control_file_checked);
	tcase_add_test(tc, loop_runtime_trip_count_and_condition);
	tcase_add_test(tc, loop_constant_trip_count_scan_output);
	tcase_add_test(tc, loop_constant_unrolled);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(control_suite)
