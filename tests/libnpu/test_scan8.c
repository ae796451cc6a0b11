// SPDX-License-Identifier: MIT
/*
 * Scan of opset 8 (a batch axis, sequence_lens), unrolled at load as one
 * opset-9 Scan per batch element (onnx/npu_onnx_if.c, unroll_scan8):
 * state s [2] += x[b, t] over x [B, T, 2] read in reverse, each step's
 * y = s * w (w an outer initializer) stacked on the scan axis, against a C
 * loop per batch element; sequence_lens shorter than the scan refused.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_compile.h"
#include "compile/npu_ops.h"
#include "model/npu_model_priv.h"
#include "npu_test.h"
#include "onnx/npu_onnx.h"
#include "onnx_build.h"

enum { B = 2, T = 3, D = 2 };

/* The model; @lens: a sequence_lens initializer of that length for every element (0: none). */
static uint8_t *scan8_model(int32_t lens, size_t *len)
{
	onnxb *m = onnxb_new(8, 8), *b = onnxb_new(8, 8);
	Onnx__NodeProto *n;
	uint8_t *buf;

	onnxb_input(b, "s_in", ONNXB_F32, 1, (int64_t[]){ D });
	onnxb_input(b, "x_t", ONNXB_F32, 1, (int64_t[]){ D });
	onnxb_node(b, "Add", NULL, "s_in,x_t", "s_out");
	onnxb_node(b, "Mul", NULL, "s_out,w", "y");
	onnxb_output(b, "s_out", ONNXB_F32, 1, (int64_t[]){ D });
	onnxb_output(b, "y", ONNXB_F32, 1, (int64_t[]){ D });
	onnxb_input(m, "init", ONNXB_F32, 2, (int64_t[]){ B, D });
	onnxb_input(m, "x", ONNXB_F32, 3, (int64_t[]){ B, T, D });
	onnxb_init_f32(m, "w", 1, (int64_t[]){ D }, (float[]){ 2, 3 });
	if (lens)
		onnxb_init(m, "lens", ONNXB_I32, 1, (int64_t[]){ B }, (int32_t[]){ lens, lens },
			   B * sizeof(int32_t));
	n = onnxb_node(m, "Scan", "scan8", lens ? "lens,init,x" : ",init,x", "fin,ys");
	onnxb_attr_g(m, n, "body", onnxb_model(b)->graph);
	onnxb_attr_i(m, n, "num_scan_inputs", 1);
	onnxb_attr_ints(m, n, "directions", 1, (int64_t[]){ 1 });
	onnxb_output(m, "fin", ONNXB_F32, 2, (int64_t[]){ B, D });
	onnxb_output(m, "ys", ONNXB_F32, 3, (int64_t[]){ B, T, D });
	buf = onnxb_pack(m, len);
	onnxb_free(m);
	onnxb_free(b);
	return buf;
}

static npu_status compile(const uint8_t *buf, size_t len, struct npu_cmodel **cm)
{
	struct npu_compile_target tgt = { .clusters = 14, .tpbs = 4, .hbsm_size = 2u << 20,
					  .batch = 1 };
	npu_ir_graph *g;
	npu_status st = npu_onnx_parse(buf, len, &g);

	if (!st)
		st = npu_ops_infer_shapes(g);
	if (!st)
		st = npu_compile_ir(g, &tgt, cm);
	npu_ir_graph_free(g);
	return st;
}

START_TEST(scan8_batch_unrolled)
{
	float x[B * T * D] = { 1, 2, 3, 4, 5, 6, -1, 0.5f, 2, -2, 0.25f, 1 };
	float s0[B * D] = { 0.5f, -1, 2, 1 }, w[D] = { 2, 3 }, fin[B * D], ys[B * T * D];
	npu_tensor in[2] = { { "init", NPU_DTYPE_FLOAT32, s0, sizeof(s0) },
			     { "x", NPU_DTYPE_FLOAT32, x, sizeof(x) } };
	npu_tensor out[2] = { { "fin", NPU_DTYPE_FLOAT32, fin, sizeof(fin) },
			      { "ys", NPU_DTYPE_FLOAT32, ys, sizeof(ys) } };
	npu_model *mod = calloc(1, sizeof(*mod));
	struct npu_cmodel *cm;
	npu_device *dev;
	npu_context *ctx;
	size_t len;
	uint8_t *buf = scan8_model(0, &len);

	ck_assert_msg(compile(buf, len, &cm) == NPU_OK, "%s", npu_last_error());
	free(buf);
	mod->cm = cm;
	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_int_eq(npu_context_create(dev, mod, 0, &ctx), NPU_OK);
	ck_assert_int_eq(npu_run(ctx, in, 2, out, 2), NPU_OK);
	for (int b = 0; b < B; b++) {
		float s[D];

		memcpy(s, &s0[b * D], sizeof(s));
		for (int t = 0; t < T; t++)
			for (int d = 0; d < D; d++) {
				s[d] += x[(b * T + T - 1 - t) * D + d];
				ck_assert_float_eq_tol(ys[(b * T + t) * D + d], s[d] * w[d], 1e-2f);
			}
		for (int d = 0; d < D; d++)
			ck_assert_float_eq_tol(fin[b * D + d], s[d], 1e-2f);
	}
	npu_context_destroy(ctx);
	npu_model_free(mod);
	npu_device_close(dev);
}
END_TEST

/* sequence_lens of the full length unrolls; a shorter one leaves the Scan, refused by name. */
START_TEST(scan8_sequence_lens)
{
	struct npu_cmodel *cm = NULL;
	size_t len;
	uint8_t *buf = scan8_model(T, &len);

	ck_assert_int_eq(compile(buf, len, &cm), NPU_OK);
	npu_cmodel_free(cm);
	free(buf);
	cm = NULL;
	buf = scan8_model(T - 1, &len);
	ck_assert_int_eq(compile(buf, len, &cm), NPU_ERR_UNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "operator 'Scan'"));
	free(buf);
}
END_TEST

static Suite *scan8_suite(void)
{
	Suite *s = suite_create("npu_scan8");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, scan8_batch_unrolled);
	tcase_add_test(tc, scan8_sequence_lens);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(scan8_suite)
