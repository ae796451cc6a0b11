// SPDX-License-Identifier: MIT
/*
 * Shape specialisation: give the graph inputs the shapes the caller chose
 * (npu_compile_options.input_shapes, npu-run --shape) before shape
 * inference, so that models exported with symbolic dims ("batch",
 * "sequence") compile for concrete shapes.  A shape may only fill in what
 * the model leaves open: it keeps the declared rank and static dims.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "compile/npu_compile.h"
#include "compile/npu_ops.h"
#include "ir/npu_ir.h"
#include "npu_internal.h"
#include "onnx/npu_onnx.h"

/* "1x3x224x224" ("scalar" for rank 0) into @buf. */
static const char *dims_str(const npu_input_shape *s, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	if (s->rank == 0)
		snprintf(buf, len, "scalar");
	for (int i = 0; i < s->rank && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%" PRId64, i ? "x" : "", s->dims[i]);
	return buf;
}

/* The graph input named @name: its index in g->inputs, or -1. */
static int find_input(const npu_ir_graph *g, const char *name)
{
	for (int i = 0; i < g->n_inputs; i++)
		if (!strcmp(g->tensors[g->inputs[i]].name, name))
			return i;
	return -1;
}

/* "'x' float32[N,3,H,W], 'mask' int64[N,S]" into @buf. */
static const char *inputs_str(const npu_ir_graph *g, char *buf, size_t len)
{
	size_t o = 0;
	char sh[160];

	buf[0] = '\0';
	if (!g->n_inputs)
		snprintf(buf, len, "none");
	for (int i = 0; i < g->n_inputs && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s'%s' %s", i ? ", " : "",
				      g->tensors[g->inputs[i]].name,
				      npu_ir_named_shape_str(g, g->inputs[i], sh, sizeof(sh)));
	return buf;
}

/* Check @s against graph input @k (which it names); set the dims. */
static npu_status apply_one(npu_ir_graph *g, int k, const npu_input_shape *s)
{
	int id = g->inputs[k];
	npu_ir_tensor *t = &g->tensors[id];
	char want[160], got[160];

	dims_str(s, got, sizeof(got));
	npu_ir_named_shape_str(g, id, want, sizeof(want));
	if (t->rank >= 0 && t->rank != s->rank)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"the shape given for input '%s' (%s) has rank %d, but the model declares %s: give %d dims",
				s->name, got, s->rank, want, t->rank);
	for (int i = 0; i < s->rank; i++) {
		if (t->rank >= 0 && t->dims[i] >= 0 && t->dims[i] != s->dims[i])
			return npu_fail(NPU_ERR_INVALID_ARG,
					"the shape given for input '%s' (%s) makes axis %d %" PRId64
					", but the model declares %s, where it is %" PRId64,
					s->name, got, i, s->dims[i], want, t->dims[i]);
	}
	t->rank = s->rank;
	for (int i = 0; i < s->rank; i++)
		t->dims[i] = s->dims[i];
	return NPU_OK;
}

npu_status npu_apply_input_shapes(npu_ir_graph *g, const npu_input_shape *shapes, size_t n)
{
	char buf[512];

	if (n && !shapes)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"npu_compile_options.input_shapes is NULL but n_input_shapes is %zu", n);
	/* Check every shape before changing any input. */
	for (size_t i = 0; i < n; i++) {
		const npu_input_shape *s = &shapes[i];
		int64_t numel = 1;

		if (!s->name)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"input shape #%zu has no name: name the graph input it is for (%s)",
					i, inputs_str(g, buf, sizeof(buf)));
		if (find_input(g, s->name) < 0)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"a shape is given for '%s', which is not an input of the model; its inputs are %s",
					s->name, inputs_str(g, buf, sizeof(buf)));
		for (size_t j = 0; j < i; j++)
			if (!strcmp(shapes[j].name, s->name))
				return npu_fail(NPU_ERR_INVALID_ARG,
						"the shape of input '%s' is given twice: give it once",
						s->name);
		if (s->rank < 0 || s->rank > NPU_MAX_RANK)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"the shape given for input '%s' has rank %d: libnpu supports ranks 0 to %d",
					s->name, s->rank, NPU_MAX_RANK);
		for (int d = 0; d < s->rank; d++) {
			if (s->dims[d] <= 0 || s->dims[d] > NPU_IR_DIM_MAX)
				return npu_fail(NPU_ERR_INVALID_ARG,
						"the shape given for input '%s' makes axis %d %" PRId64
						": sizes must be 1 to %" PRId64,
						s->name, d, s->dims[d], NPU_IR_DIM_MAX);
			numel *= s->dims[d];
			if (numel > NPU_IR_DIM_MAX)
				return npu_fail(NPU_ERR_INVALID_ARG,
						"the shape given for input '%s' (%s) has more than %" PRId64
						" elements: give a smaller shape",
						s->name, dims_str(s, buf, sizeof(buf)), NPU_IR_DIM_MAX);
		}
	}
	for (size_t i = 0; i < n; i++) {
		npu_status st = apply_one(g, find_input(g, shapes[i].name), &shapes[i]);

		if (st)
			return st;
	}
	return NPU_OK;
}

npu_status npu_compile_load(const void *data, size_t size, const struct npu_compile_target *tgt,
			    npu_ir_graph **out)
{
	npu_status st = npu_onnx_parse_dir(data, size, tgt->model_dir, out);

	if (!st)
		st = npu_apply_input_shapes(*out, tgt->input_shapes, tgt->n_input_shapes);
	if (!st)
		st = npu_apply_input_values(*out, tgt->input_values, tgt->n_input_values);
	return st;
}

npu_status npu_compile_parse(const void *data, size_t size, const struct npu_compile_target *tgt,
			     npu_ir_graph **out)
{
	npu_status st = npu_compile_load(data, size, tgt, out);

	if (!st)
		st = npu_ops_infer_shapes(*out);
	return st;
}
