// SPDX-License-Identifier: MIT
/*
 * Types the NPU does not have, computed in the nearest one it has.
 *
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
 *
 * The other types ONNX models carry and the NPU lacks (float64, uint64,
 * uint32, int16, uint16) are rarer and never shape arithmetic, so every
 * live tensor of them is computed in the device type npu_dtype_device()
 * names, constants included (converted once here, a value that does not
 * fit refused by name), and the compile says so once in the model's notes
 * (npu_model_info.notes), naming the tensors and nodes, as a user of such
 * a model would want to know that float64 became float32.
 */
#include <stdint.h>
#include <stdio.h>
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
	/* Not the trip count: the host reads an int64 one (often INT64_MAX) as it is. */
	{ "npu.LoopBegin", ALL_INPUTS & ~1u }, { "npu.LoopEnd", ALL_INPUTS & ~1u },
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

/*
 * Node @k is a Cast: a Cast to a type the NPU lacks casts to its device
 * type instead (to int64: int32), or copies when its input has that type.
 */
static npu_status narrow_cast(npu_ir_graph *g, int k)
{
	npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	int64_t to;
	npu_dtype dev;
	npu_status st;
	char *op;

	if ((st = npu_ir_attr_int(n, "to", 0, &to)))
		return st;
	if (to <= 0 || to > 64 || !npu_dtype_size((npu_dtype)to))
		return NPU_OK;
	dev = npu_dtype_device((npu_dtype)to);
	if (dev == (npu_dtype)to)
		return NPU_OK;
	if (!x || !y || x->dtype != y->dtype)
		return npu_ir_set_attr_int(n, "to", dev);
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

/* One of the types this pass computes in another (int64 aside: see above). */
static bool other_type(npu_dtype t)
{
	return t != NPU_DTYPE_INT64 && npu_dtype_device(t) != t;
}

/*
 * Constant @t of a type the NPU lacks (not int64), converted in place to
 * its device type: NPU_ERR_UNSUPPORTED naming it and the element when a
 * value does not fit (an integer outside int32, a finite float64 beyond
 * float32's range; infinities and NaN are kept).
 */
static npu_status convert_const(npu_ir_graph *g, int t)
{
	npu_ir_tensor *c = &g->tensors[t];
	npu_tensor_info info = { .name = c->name, .dtype = c->dtype, .bytes = c->bytes };
	npu_dtype dev = npu_dtype_device(c->dtype);
	size_t es = npu_dtype_size(c->dtype), n = es ? c->bytes / es : 0;
	void *v = malloc(n ? n * npu_dtype_size(dev) : 1);
	npu_status st;

	if (!v)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	st = npu_tensor_to_device(&info, c->data, v);
	if (st) {
		char msg[512];

		free(v);
		/* The boundary's message names an input: say constant instead. */
		snprintf(msg, sizeof(msg), "%s", npu_last_error());
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"%s constant '%s' cannot be computed as %s, the NPU's nearest type "
				"(%s)", npu_dtype_str(c->dtype), c->name, npu_dtype_str(dev),
				strstr(msg, ": ") ? strstr(msg, ": ") + 2 : msg);
	}
	c->dtype = dev;
	return npu_ir_set_const_owned(g, t, v, n * npu_dtype_size(dev));
}

/* The notes' line for type @from: the tensors and the nodes that read or write them. */
static npu_status note_type(const npu_ir_graph *g, const npu_dtype *orig, int norig,
			    npu_dtype from, char **notes)
{
	char tensors[1024] = "", nodes[1024] = "", *line, lbl[96];
	int nt = 0, nn = 0;
	size_t at, len;

	for (int t = 0; t < norig; t++)
		if (orig[t] == from)
			add_name(tensors, sizeof(tensors), &nt, g->tensors[t].name);
	if (!nt)
		return NPU_OK;
	for (int k = 0; k < g->n_nodes; k++) {
		const npu_ir_node *n = &g->nodes[k];
		bool hit = false;

		for (int i = 0; !n->dead && i < n->n_inputs && !hit; i++)
			hit = n->inputs[i] >= 0 && n->inputs[i] < norig &&
			      orig[n->inputs[i]] == from;
		for (int o = 0; !n->dead && o < n->n_outputs && !hit; o++)
			hit = n->outputs[o] >= 0 && n->outputs[o] < norig &&
			      orig[n->outputs[o]] == from;
		if (hit) {
			char name[128];

			snprintf(name, sizeof(name), "%s (%s)", npu_ir_node_label(n, lbl, sizeof(lbl)),
				 n->op);
			add_name(nodes, sizeof(nodes), &nn, name);
		}
	}
	len = (*notes ? strlen(*notes) : 0) + strlen(tensors) + strlen(nodes) + 256;
	line = realloc(*notes, len);
	if (!line)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	if (!*notes)
		line[0] = '\0';
	*notes = line;
	at = strlen(line);
	snprintf(line + at, len - at, "%s computed as %s (the NPU has no %s): %d tensor%s (%s)%s%s\n",
		 npu_dtype_str(from), npu_dtype_str(npu_dtype_device(from)), npu_dtype_str(from),
		 nt, nt == 1 ? "" : "s", tensors, nn ? "; nodes " : "", nodes);
	npu_debug(NPU_DEBUG_IR, "%.*s", (int)strlen(line + at) - 1, line + at);
	return NPU_OK;
}

npu_status npu_narrow_types(npu_ir_graph *g, npu_dtype **boundary, int *nboundary,
			    char **notes)
{
	int nt = g->n_tensors, nrun = 0, ncopy = 0, *copy = NULL;
	char runs[1024] = "", copies[1024] = "";
	bool *narrow, *live = NULL, any = false;
	npu_dtype *orig = NULL;
	npu_status st = NPU_OK;

	*boundary = NULL;
	*nboundary = 0;
	*notes = NULL;
	narrow = calloc((size_t)nt, sizeof(*narrow));
	live = calloc((size_t)nt, sizeof(*live));
	orig = calloc((size_t)nt, sizeof(*orig));
	if (!narrow || !live || !orig) {
		st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	/* The tensors a live node or the graph's boundary has (folded ones lost their data). */
	for (int k = 0; k < g->n_nodes; k++) {
		const npu_ir_node *n = &g->nodes[k];

		for (int i = 0; !n->dead && i < n->n_inputs; i++)
			if (n->inputs[i] >= 0)
				live[n->inputs[i]] = true;
		for (int o = 0; !n->dead && o < n->n_outputs; o++)
			if (n->outputs[o] >= 0)
				live[n->outputs[o]] = true;
	}
	for (int i = 0; i < g->n_inputs; i++)
		live[g->inputs[i]] = true;
	for (int i = 0; i < g->n_outputs; i++)
		live[g->outputs[i]] = true;
	for (int t = 0; t < nt; t++) {
		npu_dtype dt = g->tensors[t].dtype;

		narrow[t] = live[t] && npu_dtype_device(dt) != dt &&
			    !npu_ir_is_const(&g->tensors[t]);
		/* Other types' constants too; int64 ones stay (shapes, axes). */
		if (live[t] && other_type(dt) && npu_ir_is_const(&g->tensors[t]))
			orig[t] = dt;
		any = any || narrow[t] || orig[t];
	}
	for (int i = 0; i < g->n_outputs && !any; i++)
		any = g->tensors[g->outputs[i]].dtype == NPU_DTYPE_INT64;
	if (!any)
		goto out;
	*boundary = calloc((size_t)nt, sizeof(**boundary));
	copy = malloc((size_t)nt * sizeof(*copy));
	if (!*boundary || !copy) {
		st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	*nboundary = nt;
	for (int t = 0; t < nt; t++)
		copy[t] = -1;
	for (int i = 0; i < g->n_inputs; i++) {
		npu_dtype dt = g->tensors[g->inputs[i]].dtype;

		if (npu_dtype_device(dt) != dt)
			(*boundary)[g->inputs[i]] = dt;
	}
	for (int i = 0; i < g->n_outputs; i++) {
		npu_dtype dt = g->tensors[g->outputs[i]].dtype;

		if (npu_dtype_device(dt) != dt)
			(*boundary)[g->outputs[i]] = dt;
	}
	for (int t = 0; !st && t < nt; t++) {
		npu_dtype dt = g->tensors[t].dtype;

		if (narrow[t]) {
			if (other_type(dt))
				orig[t] = dt;
			else
				add_name(runs, sizeof(runs), &nrun, g->tensors[t].name);
			g->tensors[t].dtype = npu_dtype_device(dt);
		} else if (orig[t]) {
			st = convert_const(g, t);
		}
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
	{
		static const npu_dtype order[] = {
			NPU_DTYPE_FLOAT64, NPU_DTYPE_UINT64, NPU_DTYPE_UINT32,
			NPU_DTYPE_INT16, NPU_DTYPE_UINT16,
		};

		for (size_t i = 0; !st && i < sizeof(order) / sizeof(order[0]); i++)
			st = note_type(g, orig, nt, order[i], notes);
	}
out:
	free(narrow);
	free(live);
	free(orig);
	free(copy);
	if (st) {
		free(*boundary);
		*boundary = NULL;
		*nboundary = 0;
		free(*notes);
		*notes = NULL;
	}
	return st;
}
