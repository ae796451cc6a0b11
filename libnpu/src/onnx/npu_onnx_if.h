/* SPDX-License-Identifier: MIT */
/* ONNX If flattened into its branches and npu.IfSelect nodes (npu_onnx_if.c). */
#ifndef NPU_ONNX_IF_H
#define NPU_ONNX_IF_H

#include "npu_internal.h"
#include "onnx/onnx.pb-c.h"

/*
 * libnpu's own operator (default domain, any opset; the registry's
 * "npu.IfSelect"): inputs cond (bool, one element), a, b; output a when
 * cond is true, else b.  A constant cond makes it its chosen input (the
 * other branch dropped); a run-time one a Where, a and b then of one
 * shape and dtype.
 */
#define NPU_OP_IF_SELECT	"npu.IfSelect"
/*
 * A Loop (issue 17) becomes npu.LoopBegin(M, cond, v_initial...) ->
 * (iter_num, cond, v...), its body's nodes, and npu.LoopEnd(M, iter_num,
 * cond, v..., cond_out, v_out..., scan_out...) -> (v_final...,
 * scan_outputs...) with attributes NPU_LOOP_N (N) and NPU_LOOP_K (K) and,
 * per scan output, NPU_LOOP_SCAN_LEN (its length as the graph declares
 * it, -1 unknown).  compile/npu_control.c makes them control steps.
 */
#define NPU_OP_LOOP_BEGIN	"npu.LoopBegin"
#define NPU_OP_LOOP_END		"npu.LoopEnd"
#define NPU_LOOP_N		"npu_loop_n"
#define NPU_LOOP_K		"npu_loop_k"
#define NPU_LOOP_SCAN_LEN	"npu_scan_len"

/*
 * Inline every If of @gp (depth @depth, 0 for the model's graph; @opset the
 * default domain's) whose branches can be, and unroll every Scan (opset 9
 * and later) whose length the graph declares: see npu_onnx_if.c.  A node
 * that cannot be stays as it is (and is refused later by name).
 */
npu_status npu_onnx_flatten_if(Onnx__GraphProto *gp, int opset, int depth);

#endif /* NPU_ONNX_IF_H */
