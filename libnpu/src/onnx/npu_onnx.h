/* SPDX-License-Identifier: MIT */
/*
 * ONNX model parsing into libnpu's graph IR (ir/npu_ir.h).
 */
#ifndef NPU_ONNX_H
#define NPU_ONNX_H

#include <stddef.h>

#include "ir/npu_ir.h"

/* What the parser accepts. */
#define NPU_ONNX_IR_VERSION_MIN 3
#define NPU_ONNX_IR_VERSION_MAX 10
#define NPU_ONNX_OPSET_MIN 1
#define NPU_ONNX_OPSET_MAX 21
/* Protobuf messages nested deeper than this are rejected before decoding. */
#define NPU_ONNX_MAX_DEPTH 64

/*
 * Parse the serialized ONNX ModelProto in @buf (@len bytes; not kept) into
 * a new graph, *@out, topologically sorted.  Initializers and Constant
 * nodes become constant tensors; graph inputs that are initializers are
 * constants, not inputs.  Shapes are only those the model declares: run
 * npu_ops_infer_shapes() (compile/npu_ops.h) next.
 *
 * Errors (with npu_last_error() saying what and where):
 * - NPU_ERR_FORMAT: not a protobuf, truncated ("... at byte N"), not a
 *   ModelProto, no graph, a node reading an undefined tensor, a tensor
 *   defined twice, a tensor whose data does not match its shape, a cycle;
 *   external data here (no folder to find it in: npu_onnx_parse_dir()).
 * - NPU_ERR_VERSION: IR version outside 3..10 or default-domain opset
 *   outside 1..21 (the message states the range); each operator
 *   still has its own first supported version (npu_ir_shape.c).
 * - NPU_ERR_UNSUPPORTED: valid ONNX that libnpu does not handle: sparse
 *   initializers, data types other than float32, float16,
 *   bfloat16, int8, uint8, int32 and int64 (named), non-tensor inputs,
 *   rank above NPU_MAX_RANK.
 * - NPU_ERR_INVALID_ARG, NPU_ERR_NO_MEMORY.
 */
npu_status npu_onnx_parse(const void *buf, size_t len, npu_ir_graph **out);

/*
 * npu_onnx_parse() of a model file in folder @model_dir (NULL: from
 * memory), which may store tensors as ONNX external data: side files
 * named relative to @model_dir, each mapped once (read-only); constants
 * point into the mappings (npu_ir_tensor.data_mapped), which the graph
 * owns and npu_ir_graph_free() unmaps.  Refused with NPU_ERR_FORMAT,
 * naming the tensor and the location: external data without a folder, a
 * location that is absolute, has a '..' component or resolves (through
 * symlinks) outside the folder, a missing or non-regular file, offset or
 * length not a decimal number, a length that is not what the tensor's
 * dtype and dims need, data past the end of the file, a key other than
 * location, offset, length, checksum (ignored) and prepacked* (ignored).
 */
npu_status npu_onnx_parse_dir(const void *buf, size_t len, const char *model_dir,
			      npu_ir_graph **out);

/*
 * Parse a serialized TensorProto (the input_N.pb / output_N.pb files of
 * the ONNX test data) into a standalone constant, *@out; free it with
 * npu_ir_tensor_free().  Errors as npu_onnx_parse().
 */
npu_status npu_onnx_parse_tensor(const void *buf, size_t len, npu_ir_tensor **out);

/* ONNX's name for TensorProto.DataType @code ("DOUBLE"), or NULL. */
const char *npu_onnx_dtype_name(int code);

#endif /* NPU_ONNX_H */
