// SPDX-License-Identifier: MIT
/*
 * int64 narrowing: the NPU has no int64 (its integer type is int32), while
 * ONNX exports keep integer data in int64 (token ids, attention masks,
 * position ids).  Every int64 tensor computed at run time becomes int32
 * on the device; the graph inputs and outputs keep int64 at the model's
 * boundary and libnpu converts them on the host (model/context.c).
 *
 * Constants are int64 mostly because ONNX wants shapes, axes and bounds
 * in int64: those are read at compile time and stay as they are.  Only a
 * constant that a node computes with at run time (an Add or Equal with a
 * run-time int64, a value of Where, the table of a Gather) gets an int32
 * copy, its values checked to fit.  Which inputs of an operator are such
 * data operands is the table below; a constant int64 at any other input
 * stays int64 and the lowering reads it at compile time or refuses it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_narrow.h"
#include "npu_debug.h"

#define ALL_INPUTS (~0u)

/* The inputs (bit i: input i) that carry an operator's data type T. */
static const struct {
	const char *op;
	unsigned inputs;
} data_inputs[] = {
	{ "Abs", ALL_INPUTS }, { "Add", ALL_INPUTS }, { "ArgMax", 1u << 0 },
	{ "ArgMin", 1u << 0 }, { "Clip", ALL_INPUTS },
	{ "Concat", ALL_INPUTS }, { "CumSum", 1u << 0 }, { "Div", ALL_INPUTS },
	{ "Equal", ALL_INPUTS }, { "Expand", 1u << 0 }, { "Flatten", 1u << 0 },
	{ "Gather", 1u << 0 }, { "GatherElements", 1u << 0 }, { "GatherND", 1u << 0 },
	{ "Greater", ALL_INPUTS }, { "GreaterOrEqual", ALL_INPUTS },
	{ "Identity", ALL_INPUTS }, { "Less", ALL_INPUTS }, { "LessOrEqual", ALL_INPUTS },
	{ "Max", ALL_INPUTS }, { "Mean", ALL_INPUTS }, { "Min", ALL_INPUTS },
	{ "Mod", ALL_INPUTS }, { "Mul", ALL_INPUTS }, { "Neg", ALL_INPUTS },
	{ "Pad", 1u << 0 | 1u << 2 }, { "ReduceMax", 1u << 0 }, { "ReduceMin", 1u << 0 },
	{ "ReduceSum", 1u << 0 }, { "Reshape", 1u << 0 },
	{ "ScatterElements", 1u << 0 | 1u << 2 }, { "ScatterND", 1u << 0 | 1u << 2 },
	{ "Sign", ALL_INPUTS }, { "Slice", 1u << 0 }, { "Squeeze", 1u << 0 },
	{ "Sub", ALL_INPUTS }, { "Sum", ALL_INPUTS }, { "Tile", 1u << 0 },
	{ "Transpose", 1u << 0 }, { "Unsqueeze", 1u << 0 }, { "Where", 1u << 1 | 1u << 2 },
	{ "npu.ScatterRows", 1u << 0 | 1u << 2 },
};

static unsigned data_mask(const npu_ir_node *n)
{
	if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx"))
		return 0;
	for (size_t i = 0; i < sizeof(data_inputs) / sizeof(data_inputs[0]); i++)
		if (!strcmp(n->op, data_inputs[i].op))
			return data_inputs[i].inputs;
	return 0;
}

npu_status npu_narrow_const(npu_ir_graph *g, int t, const char *what, int *copy)
{
	const npu_ir_tensor *c = &g->tensors[t];
	int64_t n = npu_ir_numel(c), dims[NPU_MAX_RANK];
	char *name;
	int32_t *v;
	npu_status st;

	for (int64_t i = 0; i < n; i++) {
		int64_t x = ((const int64_t *)c->data)[i];

		if (x < INT32_MIN || x > INT32_MAX)
			return npu_fail(NPU_ERR_UNSUPPORTED,
					"int64 constant '%s' (%s) holds %lld at element %lld: "
					"outside int32, the NPU's integer type", c->name, what,
					(long long)x, (long long)i);
	}
	v = malloc((size_t)(n ? n : 1) * sizeof(*v));
	name = malloc(strlen(c->name) + 8);
	if (!v || !name) {
		free(v);
		free(name);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	for (int64_t i = 0; i < n; i++)
		v[i] = (int32_t)((const int64_t *)c->data)[i];
	memcpy(dims, c->dims, sizeof(dims));
	strcpy(name, c->name);
	strcat(name, ".int32");
	st = npu_ir_add_tensor(g, npu_ir_find_tensor(g, name) < 0 ? name : NULL,
			       NPU_DTYPE_INT32, c->rank, dims, copy);
	free(name);
	if (st) {
		free(v);
		return st;
	}
	return npu_ir_set_const_owned(g, *copy, v, (size_t)n * sizeof(*v));
}

/* Node @k computes int32 now: Cast to int64 casts to int32, or copies. */
static npu_status narrow_cast(npu_ir_graph *g, int k)
{
	npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	int64_t to;
	npu_status st;
	char *op;

	if ((st = npu_ir_attr_int(n, "to", 0, &to)))
		return st;
	if (to != NPU_DTYPE_INT64)
		return NPU_OK;
	if (!x || !y || x->dtype != y->dtype)
		return npu_ir_set_attr_int(n, "to", NPU_DTYPE_INT32);
	op = strdup("Identity");
	if (!op)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	free(n->op);
	n->op = op;
	npu_ir_remove_attr(n, "to");
	return NPU_OK;
}

/* A comma-separated list of up to 16 names, for the one debug line. */
static void add_name(char *buf, size_t len, int *count, const char *name)
{
	size_t at = strlen(buf);

	if ((*count)++ < 16)
		snprintf(buf + at, len - at, "%s%s", at ? ", " : "", name);
	else if (*count == 17)
		snprintf(buf + at, len - at, ", ...");
}

npu_status npu_narrow_int64(npu_ir_graph *g, bool **wide, int *nwide)
{
	int nt = g->n_tensors, nrun = 0, ncopy = 0, *copy = NULL;
	char runs[1024] = "", copies[1024] = "";
	bool *narrow, any = false;
	npu_status st = NPU_OK;

	*wide = NULL;
	*nwide = 0;
	narrow = calloc((size_t)nt, sizeof(*narrow));
	if (!narrow)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	/* The tensors a live node or the graph's boundary has (folded ones lost their data). */
	for (int k = 0; k < g->n_nodes; k++) {
		const npu_ir_node *n = &g->nodes[k];

		for (int i = 0; !n->dead && i < n->n_inputs; i++)
			if (n->inputs[i] >= 0)
				narrow[n->inputs[i]] = true;
		for (int o = 0; !n->dead && o < n->n_outputs; o++)
			if (n->outputs[o] >= 0)
				narrow[n->outputs[o]] = true;
	}
	for (int i = 0; i < g->n_inputs; i++)
		narrow[g->inputs[i]] = true;
	for (int i = 0; i < g->n_outputs; i++)
		narrow[g->outputs[i]] = true;
	for (int t = 0; t < nt; t++) {
		narrow[t] = narrow[t] && g->tensors[t].dtype == NPU_DTYPE_INT64 &&
			    !npu_ir_is_const(&g->tensors[t]);
		any = any || narrow[t];
	}
	for (int i = 0; i < g->n_outputs && !any; i++)
		any = g->tensors[g->outputs[i]].dtype == NPU_DTYPE_INT64;
	if (!any) {
		free(narrow);
		return NPU_OK;
	}
	*wide = calloc((size_t)nt, sizeof(**wide));
	copy = malloc((size_t)nt * sizeof(*copy));
	if (!*wide || !copy) {
		st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	*nwide = nt;
	for (int t = 0; t < nt; t++)
		copy[t] = -1;
	for (int i = 0; i < g->n_inputs; i++)
		(*wide)[g->inputs[i]] = g->tensors[g->inputs[i]].dtype == NPU_DTYPE_INT64;
	for (int i = 0; i < g->n_outputs; i++)
		(*wide)[g->outputs[i]] = g->tensors[g->outputs[i]].dtype == NPU_DTYPE_INT64;
	for (int t = 0; t < nt; t++)
		if (narrow[t]) {
			g->tensors[t].dtype = NPU_DTYPE_INT32;
			add_name(runs, sizeof(runs), &nrun, g->tensors[t].name);
		}
	for (int k = 0; !st && k < g->n_nodes; k++) {
		npu_ir_node *n = &g->nodes[k];
		unsigned mask = data_mask(n);
		bool rt = false;

		if (n->dead)
			continue;
		for (int o = 0; o < n->n_outputs && !rt; o++)
			rt = n->outputs[o] >= 0 && n->outputs[o] < nt && narrow[n->outputs[o]];
		for (int i = 0; i < n->n_inputs && i < 32 && !rt; i++)
			rt = (mask >> i & 1) && n->inputs[i] >= 0 && narrow[n->inputs[i]];
		for (int i = 0; rt && !st && i < n->n_inputs && i < 32; i++) {
			int t = n->inputs[i];
			char what[160], lbl[96];

			if (!(mask >> i & 1) || t < 0 || t >= nt ||
			    g->tensors[t].dtype != NPU_DTYPE_INT64 || !npu_ir_is_const(&g->tensors[t]))
				continue;
			if (copy[t] < 0) {
				snprintf(what, sizeof(what), "input %d of node %s (%s)", i,
					 npu_ir_node_label(n, lbl, sizeof(lbl)), n->op);
				st = npu_narrow_const(g, t, what, &copy[t]);
				if (st)
					break;
				n = &g->nodes[k];
				add_name(copies, sizeof(copies), &ncopy, g->tensors[t].name);
			}
			n->inputs[i] = copy[t];
		}
		if (!st && !strcmp(n->op, "Cast") && (!n->domain || !*n->domain))
			st = narrow_cast(g, k);
	}
	if (!st) {
		npu_debug(NPU_DEBUG_IR, "int64 narrowing: %d run-time tensor(s) computed as int32%s%s",
			  nrun, nrun ? ": " : "", runs);
		if (ncopy)
			npu_debug(NPU_DEBUG_IR, "int64 narrowing: int32 copies of %d constant(s): %s",
				  ncopy, copies);
	}
out:
	free(narrow);
	free(copy);
	if (st) {
		free(*wide);
		*wide = NULL;
		*nwide = 0;
	}
	return st;
}
