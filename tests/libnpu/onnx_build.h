/* SPDX-License-Identifier: MIT */
/*
 * Tests: build small ONNX models with protobuf-c itself and serialize them,
 * so the parser is tested on bytes that a real protobuf encoder wrote.
 *
 *   onnxb *b = onnxb_new(8, 13);
 *   onnxb_input(b, "x", ONNXB_F32, 4, (int64_t[]){ 1, 3, 8, 8 });
 *   onnxb_init_f32(b, "w", 4, (int64_t[]){ 4, 3, 3, 3 }, NULL);
 *   Onnx__NodeProto *n = onnxb_node(b, "Conv", "conv1", "x,w", "y");
 *   onnxb_attr_ints(b, n, "pads", 4, (int64_t[]){ 1, 1, 1, 1 });
 *   onnxb_output(b, "y", 0, -1, NULL);
 *   bytes = onnxb_pack(b, &len);
 *
 * Everything is owned by the builder and freed by onnxb_free(); strings
 * passed in are copied.
 */
#ifndef ONNX_BUILD_H
#define ONNX_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "onnx/onnx.pb-c.h"

#define ONNXB_F32 1
#define ONNXB_U8 2
#define ONNXB_I8 3
#define ONNXB_I32 6
#define ONNXB_I64 7
#define ONNXB_BOOL 9
#define ONNXB_F16 10
#define ONNXB_F64 11

typedef struct onnxb onnxb;

/* opset <= 0: no default-domain import. */
onnxb *onnxb_new(int64_t ir_version, int64_t opset);
void onnxb_free(onnxb *b);
void onnxb_opset(onnxb *b, const char *domain, int64_t version);
Onnx__ModelProto *onnxb_model(onnxb *b);

/* Declared tensors; dims[i] < 0 is a symbolic dim "N"; rank < 0: no shape;
 * elem 0: no type. */
void onnxb_input(onnxb *b, const char *name, int elem, int rank, const int64_t *dims);
void onnxb_output(onnxb *b, const char *name, int elem, int rank, const int64_t *dims);
void onnxb_value_info(onnxb *b, const char *name, int elem, int rank, const int64_t *dims);

/* A tensor with raw_data (@raw NULL: zeros). */
Onnx__TensorProto *onnxb_tensor(onnxb *b, const char *name, int elem, int rank,
				const int64_t *dims, const void *raw, size_t bytes);
/* Initializers. */
Onnx__TensorProto *onnxb_init(onnxb *b, const char *name, int elem, int rank,
			      const int64_t *dims, const void *raw, size_t bytes);
Onnx__TensorProto *onnxb_init_f32(onnxb *b, const char *name, int rank, const int64_t *dims,
				  const float *vals);
Onnx__TensorProto *onnxb_init_i64(onnxb *b, const char *name, int n, const int64_t *vals);

/* @inputs, @outputs: comma-separated names ("x,,b": input 1 omitted);
 * @name NULL: unnamed. */
Onnx__NodeProto *onnxb_node(onnxb *b, const char *op, const char *name, const char *inputs,
			    const char *outputs);
void onnxb_attr_i(onnxb *b, Onnx__NodeProto *n, const char *name, int64_t v);
void onnxb_attr_f(onnxb *b, Onnx__NodeProto *n, const char *name, float v);
void onnxb_attr_s(onnxb *b, Onnx__NodeProto *n, const char *name, const char *v);
void onnxb_attr_ints(onnxb *b, Onnx__NodeProto *n, const char *name, int count, const int64_t *v);
void onnxb_attr_floats(onnxb *b, Onnx__NodeProto *n, const char *name, int count, const float *v);
void onnxb_attr_t(onnxb *b, Onnx__NodeProto *n, const char *name, Onnx__TensorProto *t);
/* A graph attribute (If branches): @g stays owned by the builder that made it. */
void onnxb_attr_g(onnxb *b, Onnx__NodeProto *n, const char *name, Onnx__GraphProto *g);

/* Uniform pseudo-random values in [-1, 1) from @seed (an LCG). */
void onnxb_fill(float *v, size_t n, unsigned seed);

/*
 * A small CNN (malloc'd ONNX bytes): x [1,4,12,12] -> conv3x3 -> relu ->
 * conv1x1 -> add (skip) -> maxpool -> transpose -> flatten -> matmul ->
 * softmax; outputs "prob" [1,10] and "s" (the add, [1,8,12,12]).
 */
#define ONNXB_SMALL_CNN_C	4
#define ONNXB_SMALL_CNN_H	12
#define ONNXB_SMALL_CNN_IN	(ONNXB_SMALL_CNN_C * ONNXB_SMALL_CNN_H * ONNXB_SMALL_CNN_H)
#define ONNXB_SMALL_CNN_CLASSES	10
uint8_t *onnxb_small_cnn(size_t *len);

/* Serialize (malloc'd; free() it). */
uint8_t *onnxb_pack(onnxb *b, size_t *len);

/* Read a whole file (malloc'd), NULL if it cannot be read. */
void *npu_test_slurp(const char *path, size_t *len);

#endif /* ONNX_BUILD_H */
