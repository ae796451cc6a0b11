// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the ONNX loader: parse, infer shapes (with constant
 * folding), check operator support and dump whatever parses; also parse
 * the input as a lone TensorProto.  Crashes, leaks, undefined behaviour
 * and broken contracts (an error without a message, an output handle left
 * set on failure, an "internal" status) abort.
 *
 * Build and run: make check-fuzz (tests/fuzz/fuzz.mk).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "compile/npu_ops.h"
#include "ir/npu_ir.h"
#include "onnx/npu_onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(npu_status st)
{
	if (!npu_last_error()[0] || st == NPU_ERR_INTERNAL || st == NPU_ERR_INVALID_ARG) {
		fprintf(stderr, "broken error contract: %s: '%s'\n", npu_status_str(st),
			npu_last_error());
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	npu_ir_graph *g = (npu_ir_graph *)&g;
	npu_ir_tensor *t = (npu_ir_tensor *)&t;
	npu_status st;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	npu_clear_error();
	st = npu_onnx_parse(data, size, &g);
	if (st) {
		if (g)
			abort();
		check_error(st);
	} else {
		st = npu_ops_infer_shapes(g);
		if (st)
			check_error(st);
		else if ((st = npu_ops_check_supported(g, NULL)))
			check_error(st);
		if (devnull)
			npu_ir_dump(g, devnull);
		npu_ir_graph_free(g);
	}
	npu_clear_error();
	st = npu_onnx_parse_tensor(data, size, &t);
	if (st) {
		if (t)
			abort();
		check_error(st);
	}
	npu_ir_tensor_free(t);
	return 0;
}
