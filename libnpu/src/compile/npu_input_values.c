// SPDX-License-Identifier: MIT
/*
 * Inputs fixed to a value at compile time (npu_compile_options.input_values,
 * npu-run --fix): a graph input a deployment never changes (Silero VAD's
 * sample rate, a window size, a flag) becomes a constant before shape
 * inference, so that constant folding and the If rules remove what the
 * value selects away, and it is no input of the compiled model.  Runs after
 * npu_apply_input_shapes(): an input with open dims takes its shape from
 * input_shapes first, and its value must then fill that shape.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "compile/npu_compile.h"
#include "compile/npu_ops.h"
#include "ir/npu_ir.h"
#include "ir/npu_ir_rules.h"
#include "npu_internal.h"
#include "onnx/npu_onnx_if.h"

/* The most one node folded ahead of shape inference may make: conditions are small. */
#define DECIDE_FOLD_MAX_BYTES	4096

/* The graph input named @name: its tensor id, or -1. */
static int input_tensor(const npu_ir_graph *g, const char *name)
{
	for (int i = 0; i < g->n_inputs; i++)
		if (!strcmp(g->tensors[g->inputs[i]].name, name))
			return g->inputs[i];
	return -1;
}

/* "'x', 'sr'" into @buf. */
static const char *names_str(const npu_ir_graph *g, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	if (!g->n_inputs)
		snprintf(buf, len, "none");
	for (int i = 0; i < g->n_inputs && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s'%s'", i ? ", " : "",
				      g->tensors[g->inputs[i]].name);
	return buf;
}

/* Check value @v against the graph input it names (tensor @id). */
static npu_status check_one(const npu_ir_graph *g, int id, const npu_tensor *v)
{
	const npu_ir_tensor *t = &g->tensors[id];
	char want[160];
	int64_t numel = npu_ir_numel(t);

	npu_ir_named_shape_str(g, id, want, sizeof(want));
	if (v->dtype != t->dtype)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"the value given for input '%s' is %s, but the model declares %s: give %s data",
				v->name, npu_dtype_str(v->dtype), want, npu_dtype_str(t->dtype));
	if (numel < 0)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"input '%s' is %s, whose size is open: give its shape too (npu_compile_options.input_shapes, npu-run --shape) to fix its value",
				v->name, want);
	if (!v->data || v->bytes != (size_t)numel * npu_dtype_size(t->dtype))
		return npu_fail(NPU_ERR_INVALID_ARG,
				"the value given for input '%s' is %zu bytes, but the model declares %s: give %" PRId64
				" values (%zu bytes)",
				v->name, v->data ? v->bytes : 0, want, numel,
				(size_t)numel * npu_dtype_size(t->dtype));
	return NPU_OK;
}

/* Are all of node @n's inputs constants with data (omitted ones aside)? */
static bool const_inputs(const npu_ir_graph *g, const npu_ir_node *n)
{
	for (int j = 0; j < n->n_inputs; j++) {
		const npu_ir_tensor *t = npu_ir_input(g, n, j);

		if (t && (!npu_ir_is_const(t) || !t->data))
			return false;
	}
	return n->n_inputs > 0;
}

/*
 * What the fixed values decide, before shape inference: fold the small
 * nodes all of whose inputs are constants (the comparison of a fixed
 * sample rate with 16000), and make each npu.IfSelect whose condition
 * folded read the chosen branch twice, so that the branch it does not
 * choose reaches no output and shape inference (which first drops what no
 * output needs) never sees it: that branch need not take the shapes the
 * fixed values give (Silero VAD v5's 8 kHz branch does not take 16 kHz
 * frames).  A node that does not fold here is left to shape inference,
 * which reports what is wrong with it.
 */
static npu_status decide_branches(npu_ir_graph *g)
{
	npu_status st = npu_ir_topo_sort(g);

	for (int i = 0; !st && i < g->n_nodes; i++) {
		npu_ir_node *n = &g->nodes[i];
		const struct npu_op *d = npu_op_of(n);
		const npu_ir_tensor *c;

		if (n->dead || !d)
			continue;
		if (!strcmp(n->op, NPU_OP_IF_SELECT) && n->n_inputs == 3 &&
		    (c = npu_ir_input(g, n, 0)) && npu_ir_is_const(c) && c->data &&
		    c->dtype == NPU_DTYPE_BOOL && npu_ir_numel(c) == 1) {
			if (((const uint8_t *)c->data)[0])
				n->inputs[2] = n->inputs[1];
			else
				n->inputs[1] = n->inputs[2];
		}
		if (!d->ir.eval || !const_inputs(g, n) || npu_ir_node_dyn(g, n))
			continue;
		if (d->ir.shape(g, n) || !npu_ir_const_can_eval(g, n, &d->ir) ||
		    npu_ir_const_eval_bytes(g, n, &d->ir) > DECIDE_FOLD_MAX_BYTES)
			continue;	/* left to shape inference */
		st = npu_ir_const_eval(g, i, &d->ir);
		g->nodes[i].dead = !st;
		if (st == NPU_ERR_NO_MEMORY)
			return st;
		st = NPU_OK;
	}
	return st;
}

npu_status npu_apply_input_values(npu_ir_graph *g, const npu_tensor *values, size_t n)
{
	char buf[512];

	if (n && !values)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"npu_compile_options.input_values is NULL but n_input_values is %zu", n);
	/* Check every value before freezing any input. */
	for (size_t i = 0; i < n; i++) {
		const npu_tensor *v = &values[i];
		npu_status st;
		int id;

		if (!v->name)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"input value #%zu has no name: name the graph input it fixes (%s)",
					i, names_str(g, buf, sizeof(buf)));
		for (size_t j = 0; j < i; j++)
			if (!strcmp(values[j].name, v->name))
				return npu_fail(NPU_ERR_INVALID_ARG,
						"the value of input '%s' is given twice: give it once",
						v->name);
		id = input_tensor(g, v->name);
		if (id < 0)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"a value is given for '%s', which is not an input of the model; its inputs are %s",
					v->name, names_str(g, buf, sizeof(buf)));
		st = check_one(g, id, v);
		if (st)
			return st;
	}
	for (size_t i = 0; i < n; i++) {
		npu_status st = npu_ir_freeze_input(g, input_tensor(g, values[i].name),
						    values[i].data, values[i].bytes);

		if (st)
			return st;
	}
	return n ? decide_branches(g) : NPU_OK;
}
