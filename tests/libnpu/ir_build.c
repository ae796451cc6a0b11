// SPDX-License-Identifier: MIT
/* Tests: IR graph builders shared by the compiler suites, and running them. */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_compile.h"
#include "ir_build.h"
#include "model/npu_model_priv.h"
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

npu_status irb_compile(npu_ir_graph *g, const char *spec, struct npu_cmodel **cm)
{
	struct npu_compile_target tgt = { 0 };
	npu_device_info info;
	npu_device *dev;

	ck_assert_int_eq(npu_device_open(spec, &dev), NPU_OK);
	npu_device_get_info(dev, &info);
	npu_device_close(dev);
	tgt.clusters = info.healthy_clusters;
	tgt.tpbs = info.tpbs_per_cluster;
	tgt.hbsm_size = info.hbsm_size;
	return npu_compile_ir(g, &tgt, cm);
}

npu_status irb_exec(struct npu_cmodel *cm, const char *spec, void *const *x, void *const *y)
{
	npu_tensor in[16], out[16];
	npu_model *m = calloc(1, sizeof(*m));
	npu_device *dev;
	npu_context *ctx;
	npu_status st;

	ck_assert_ptr_nonnull(m);
	ck_assert_uint_le(cm->ninputs, 16);
	ck_assert_uint_le(cm->noutputs, 16);
	m->cm = cm;
	for (uint32_t i = 0; i < cm->ninputs; i++)
		in[i] = (npu_tensor){ NULL, cm->inputs[i].info.dtype, x[i],
				      cm->inputs[i].info.bytes };
	for (uint32_t i = 0; i < cm->noutputs; i++)
		out[i] = (npu_tensor){ NULL, cm->outputs[i].info.dtype, y[i],
				       cm->outputs[i].info.bytes };
	ck_assert_int_eq(npu_device_open(spec, &dev), NPU_OK);
	ck_assert_int_eq(npu_context_create(dev, m, 0, &ctx), NPU_OK);
	st = npu_run(ctx, in, cm->ninputs, out, cm->noutputs);
	npu_context_destroy(ctx);
	npu_model_free(m);
	npu_device_close(dev);
	return st;
}
