// SPDX-License-Identifier: MIT
/* Tests: IR graph builders shared by the compiler and rewrite suites. */
#include <stdlib.h>
#include <string.h>

#include "ir_build.h"
#include "npu_test.h"

npu_ir_graph *irb_graph(int opset)
{
	npu_ir_graph *g;

	ck_assert_int_eq(npu_ir_graph_create(&g), NPU_OK);
	g->opset = opset;
	return g;
}

int irb_tensor(npu_ir_graph *g, const char *name, npu_dtype dt, int rank, const int64_t *dims)
{
	int id;

	ck_assert_int_eq(npu_ir_add_tensor(g, name, dt, rank, dims, &id), NPU_OK);
	return id;
}

int irb_const(npu_ir_graph *g, const char *name, npu_dtype dt, int rank, const int64_t *dims,
	      const void *v)
{
	int id = irb_tensor(g, name, dt, rank, dims);
	int64_t n = 1;

	for (int i = 0; i < rank; i++)
		n *= dims[i];
	ck_assert_int_eq(npu_ir_set_const(g, id, v, (size_t)n * npu_dtype_size(dt)), NPU_OK);
	return id;
}

npu_ir_node *irb_node(npu_ir_graph *g, const char *op, const int *in, int nin, const int *out,
		      int nout)
{
	int id;

	ck_assert_int_eq(npu_ir_add_node(g, op, op, in, nin, out, nout, &id), NPU_OK);
	return &g->nodes[id];
}

void irb_io(npu_ir_graph *g, const int *in, int nin, const int *out, int nout)
{
	g->inputs = malloc(sizeof(int) * (size_t)nin);
	g->outputs = malloc(sizeof(int) * (size_t)nout);
	memcpy(g->inputs, in, sizeof(int) * (size_t)nin);
	memcpy(g->outputs, out, sizeof(int) * (size_t)nout);
	g->n_inputs = nin;
	g->n_outputs = nout;
}
