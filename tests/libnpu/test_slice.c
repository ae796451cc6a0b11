// SPDX-License-Identifier: MIT
/*
 * Slice before opset 10 (starts, ends and axes as attributes, no steps),
 * as paddle2onnx writes it (PaddleOCR's PP-OCRv4 recogniser): compiled
 * and run on the emulator against a C reference, with a negative start,
 * an end past the dim (clamped) and axes given out of order.
 */
#include <stdlib.h>

#include "compile/npu_compile.h"
#include "ir_build.h"
#include "npu_test.h"
#include "onnx_build.h"

#define D(...) ((const int64_t[]){ __VA_ARGS__ })

/* x [3, 4, 10] -> Slice(starts, ends, axes) -> y; y against x[s0:e0, :, s2:e2]. */
START_TEST(slice_attributes_opset9)
{
	onnxb *b = onnxb_new(8, 9);
	struct npu_compile_target tgt = { 0 };
	struct npu_cmodel *cm;
	npu_ir_graph *g = NULL;
	Onnx__NodeProto *n;
	float x[3 * 4 * 10], y[2 * 4 * 7];
	uint8_t *buf;
	size_t len;
	npu_status st;
	int k = 0;

	onnxb_input(b, "x", ONNXB_F32, 3, D(3, 4, 10));
	n = onnxb_node(b, "Slice", "slice", "x", "y");
	/* axis 2 from -7 (3) to past the end (10), axis 0 from 1 to 3 */
	onnxb_attr_ints(b, n, "starts", 2, D(-7, 1));
	onnxb_attr_ints(b, n, "ends", 2, D(1000, 3));
	onnxb_attr_ints(b, n, "axes", 2, D(2, 0));
	onnxb_output(b, "y", ONNXB_F32, -1, NULL);
	buf = onnxb_pack(b, &len);
	onnxb_free(b);
	st = npu_compile_parse(buf, len, &tgt, &g);
	free(buf);
	ck_assert_msg(st == NPU_OK, "parse: %s", npu_last_error());
	ck_assert_int_eq(g->tensors[npu_ir_find_tensor(g, "y")].dims[0], 2);
	ck_assert_int_eq(g->tensors[npu_ir_find_tensor(g, "y")].dims[2], 7);
	st = irb_compile(g, "emu", &cm);
	ck_assert_msg(st == NPU_OK, "compile: %s", npu_last_error());
	for (int i = 0; i < 3 * 4 * 10; i++)
		x[i] = (float)i;
	st = irb_exec(cm, "emu", (void *[]){ x }, (void *[]){ y });
	ck_assert_msg(st == NPU_OK, "run: %s", npu_last_error());
	for (int a = 1; a < 3; a++)
		for (int c = 0; c < 4; c++)
			for (int w = 3; w < 10; w++, k++)
				ck_assert_msg(y[k] == x[(a * 4 + c) * 10 + w], "y[%d] = %g, expected %g",
					      k, y[k], x[(a * 4 + c) * 10 + w]);
	npu_ir_graph_free(g);
}
END_TEST

static Suite *slice_suite(void)
{
	Suite *s = suite_create("npu_slice");
	TCase *tc = tcase_create("slice");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, slice_attributes_opset9);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(slice_suite)
