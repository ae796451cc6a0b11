/* SPDX-License-Identifier: MIT */
/*
 * Tests: small graphs built straight in the IR (no ONNX bytes), for the
 * compiler and rewrite suites, and the one way they compile and run them.
 * Every builder asserts its IR call succeeded, so a test reads as the
 * graph it builds.
 */
#ifndef NPU_TEST_IR_BUILD_H
#define NPU_TEST_IR_BUILD_H

#include "ir/npu_ir.h"

struct npu_cmodel;

/* An empty graph that imports the default domain at @opset. */
npu_ir_graph *irb_graph(int opset);
/* A tensor of @dt and shape @dims[@rank]; returns its id. */
int irb_tensor(npu_ir_graph *g, const char *name, npu_dtype dt, int rank, const int64_t *dims);
/* A constant tensor holding @v (as many elements as the shape has). */
int irb_const(npu_ir_graph *g, const char *name, npu_dtype dt, int rank, const int64_t *dims,
	      const void *v);
/* A node named after its operator. */
npu_ir_node *irb_node(npu_ir_graph *g, const char *op, const int *in, int nin, const int *out,
		      int nout);
/* The graph's inputs and outputs, in order. */
void irb_io(npu_ir_graph *g, const int *in, int nin, const int *out, int nout);

/*
 * Compile shape-inferred @g for the partition of device @spec ("emu", ...)
 * into *@cm; the compiler's status.
 */
npu_status irb_compile(npu_ir_graph *g, const char *spec, struct npu_cmodel **cm);
/*
 * Run @cm (taken and freed) once on device @spec: input i from @x[i],
 * output i into @y[i], as many as the model has, in their own dtypes;
 * the run's status (npu_last_error() says why it failed).
 */
npu_status irb_exec(struct npu_cmodel *cm, const char *spec, void *const *x, void *const *y);

#endif /* NPU_TEST_IR_BUILD_H */
