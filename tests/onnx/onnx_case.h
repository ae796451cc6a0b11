/* SPDX-License-Identifier: MIT */
/*
 * One ONNX conformance case (Debian's libonnx-testdata layout: DIR/model.onnx,
 * DIR/test_data_set_0/{input,output}_N.pb): compile it for the NPU, run it
 * on the emulator backend with the shipped inputs and compare with the
 * shipped outputs at a tolerance fit for each dtype.  Every input is first
 * given at run time; if the compiler refuses that, inputs after the first
 * are frozen to their test values (scales, zero points, shapes, weights
 * given as graph inputs, which a real model holds as initializers) and the
 * case is tried again; if that is refused because an input "must be a
 * constant" (a size the output shape follows: Range, ConstantOfShape, the
 * window functions), once more with every input frozen.
 */
#ifndef NPU_ONNX_CASE_H
#define NPU_ONNX_CASE_H

#include <stdbool.h>
#include <stddef.h>

#define NPU_ONNX_TESTDATA "/usr/share/libonnx-testdata/data/node"

enum npu_onnx_case_result {
	NPU_CASE_FAILED = -1,	/* wrong output, or a run error */
	NPU_CASE_SKIPPED = 0,	/* refused at compile time (@why says why) */
	NPU_CASE_PASSED = 1,
};

/* Which inputs the result was reached with. */
enum npu_onnx_case_inputs {
	NPU_CASE_RUNTIME,		/* every input given at run time */
	NPU_CASE_FROZEN_AFTER_FIRST,	/* inputs after the first frozen */
	NPU_CASE_FROZEN_ALL,		/* every input frozen */
};

/*
 * Run the case in @dir; @why gets the reason when it did not pass.
 * @frozen (may be NULL) says which try the result is that of.
 */
enum npu_onnx_case_result npu_onnx_case_run(const char *dir, enum npu_onnx_case_inputs *frozen,
					    char *why, size_t whylen);
/*
 * The same with the CPU fallback on when @fallback (issue 17):
 * *@host_steps (may be NULL) gets the host steps of the compiled model.
 */
enum npu_onnx_case_result npu_onnx_case_run_fallback(const char *dir, bool fallback,
						     enum npu_onnx_case_inputs *frozen,
						     unsigned *host_steps, char *why, size_t whylen);

#endif /* NPU_ONNX_CASE_H */
