// SPDX-License-Identifier: MIT
/*
 * The graph IR: tables, attributes, topological sort, dead-node removal,
 * text dump.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ir/npu_ir.h"

static char *dup_str(const char *s)
{
	size_t n = strlen(s ? s : "");
	char *d = malloc(n + 1);

	if (d)
		memcpy(d, s ? s : "", n + 1);
	return d;
}

static npu_status no_memory(void)
{
	return npu_fail(NPU_ERR_NO_MEMORY, "out of memory while building the graph IR");
}

/* Grow *@arr (of @size-byte elements, *@cap of them) to hold @need. */
static int grow(void **arr, int *cap, int need, size_t size)
{
	int ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 8;
	while (ncap < need) {
		if (ncap > INT32_MAX / 2)
			return -1;
		ncap *= 2;
	}
	p = realloc(*arr, (size_t)ncap * size);
	if (!p)
		return -1;
	*arr = p;
	*cap = ncap;
	return 0;
}

/* ---- name index ---- */

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 16777619u;
	}
	return h;
}

/* Slot holding @name, or the empty slot where it would go. */
static int hash_slot(const npu_ir_graph *g, const char *name)
{
	uint32_t mask = (uint32_t)g->hash_cap - 1;
	uint32_t i = hash_str(name) & mask;

	while (g->hash[i] >= 0 && strcmp(g->tensors[g->hash[i]].name, name) != 0)
		i = (i + 1) & mask;
	return (int)i;
}

static int hash_rebuild(npu_ir_graph *g, int cap)
{
	int *h = malloc((size_t)cap * sizeof(*h));

	if (!h)
		return -1;
	free(g->hash);
	g->hash = h;
	g->hash_cap = cap;
	for (int i = 0; i < cap; i++)
		h[i] = -1;
	for (int t = 0; t < g->n_tensors; t++)
		h[hash_slot(g, g->tensors[t].name)] = t;
	return 0;
}

/* ---- graph ---- */

npu_status npu_ir_graph_create(npu_ir_graph **out)
{
	npu_ir_graph *g = calloc(1, sizeof(*g));

	*out = NULL;
	if (!g)
		return no_memory();
	g->name = dup_str("");
	g->producer = dup_str("");
	g->need_const = -1;
	if (!g->name || !g->producer || hash_rebuild(g, 64)) {
		npu_ir_graph_free(g);
		return no_memory();
	}
	*out = g;
	return NPU_OK;
}

static void free_tensor(npu_ir_tensor *t)
{
	free(t->name);
	if (!t->data_mapped)
		free(t->data);
	free(t->quant.scale);
	free(t->quant.zero_point);
}

static void free_attr(npu_ir_attr *a)
{
	free(a->name);
	free(a->s);
	free(a->ints);
	free(a->floats);
	if (a->t) {
		free_tensor(a->t);
		free(a->t);
	}
}

static void free_node(npu_ir_node *n)
{
	free(n->op);
	free(n->domain);
	free(n->name);
	free(n->inputs);
	free(n->outputs);
	for (int i = 0; i < n->n_attrs; i++)
		free_attr(&n->attrs[i]);
	free(n->attrs);
}

void npu_ir_graph_free(npu_ir_graph *g)
{
	if (!g)
		return;
	for (int i = 0; i < g->n_tensors; i++)
		free_tensor(&g->tensors[i]);
	for (int i = 0; i < g->n_nodes; i++)
		free_node(&g->nodes[i]);
	free(g->tensors);
	free(g->nodes);
	free(g->inputs);
	free(g->outputs);
	for (int i = 0; i < g->n_dim_names; i++)
		free(g->dim_names[i].name);
	free(g->dim_names);
	for (int i = 0; i < g->n_mappings; i++)
		munmap(g->mappings[i].addr, g->mappings[i].len);
	free(g->mappings);
	free(g->hash);
	free(g->name);
	free(g->producer);
	free(g);
}

npu_status npu_ir_graph_own_mapping(npu_ir_graph *g, void *addr, size_t len)
{
	struct npu_ir_mapping *p;

	p = realloc(g->mappings, (size_t)(g->n_mappings + 1) * sizeof(*p));
	if (!p) {
		munmap(addr, len);
		return no_memory();
	}
	g->mappings = p;
	g->mappings[g->n_mappings++] = (struct npu_ir_mapping){ .addr = addr, .len = len };
	return NPU_OK;
}

/* ---- tensors ---- */

int npu_ir_find_tensor(const npu_ir_graph *g, const char *name)
{
	if (!name)
		return -1;
	return g->hash[hash_slot(g, name)];
}

npu_status npu_ir_add_tensor(npu_ir_graph *g, const char *name, npu_dtype dtype,
			     int rank, const int64_t *dims, int *id)
{
	char anon[32];
	npu_ir_tensor *t;
	int64_t d[NPU_MAX_RANK];

	if (rank > NPU_MAX_RANK || rank < -1)
		return npu_fail(NPU_ERR_INVALID_ARG, "tensor rank %d out of range", rank);
	if (!name) {
		do
			snprintf(anon, sizeof(anon), "_npu_%d", g->next_anon++);
		while (npu_ir_find_tensor(g, anon) >= 0);
		name = anon;
	} else if (npu_ir_find_tensor(g, name) >= 0) {
		return npu_fail(NPU_ERR_INVALID_ARG, "tensor '%s' already exists", name);
	}
	/* @dims may point into g->tensors, which growing moves: copy first. */
	for (int i = 0; i < NPU_MAX_RANK; i++)
		d[i] = (dims && i < rank) ? dims[i] : -1;
	if (g->n_tensors >= INT32_MAX / 4 ||
	    grow((void **)&g->tensors, &g->cap_tensors, g->n_tensors + 1, sizeof(*t)))
		return no_memory();
	if ((g->n_tensors + 1) * 2 > g->hash_cap && hash_rebuild(g, g->hash_cap * 2))
		return no_memory();
	t = &g->tensors[g->n_tensors];
	memset(t, 0, sizeof(*t));
	t->name = dup_str(name);
	if (!t->name)
		return no_memory();
	t->dtype = dtype;
	t->rank = rank;
	memcpy(t->dims, d, sizeof(d));
	t->producer = -1;
	g->hash[hash_slot(g, t->name)] = g->n_tensors;
	if (id)
		*id = g->n_tensors;
	g->n_tensors++;
	return NPU_OK;
}

npu_status npu_ir_set_const_owned(npu_ir_graph *g, int t, void *data, size_t bytes)
{
	npu_ir_tensor *x = &g->tensors[t];

	if (!data) {
		data = malloc(1);
		if (!data)
			return no_memory();
	}
	if (!x->data_mapped)
		free(x->data);
	x->data = data;
	x->data_mapped = false;
	x->bytes = bytes;
	x->producer = -1;
	return NPU_OK;
}

npu_status npu_ir_set_const(npu_ir_graph *g, int t, const void *data, size_t bytes)
{
	void *d = malloc(bytes ? bytes : 1);

	if (!d)
		return no_memory();
	if (bytes)
		memcpy(d, data, bytes);
	return npu_ir_set_const_owned(g, t, d, bytes);
}

npu_status npu_ir_set_quant(npu_ir_tensor *t, int count, int axis,
			    const float *scale, const int32_t *zero_point)
{
	float *s = NULL;
	int32_t *z = NULL;

	if (count > 0) {
		s = malloc((size_t)count * sizeof(*s));
		z = malloc((size_t)count * sizeof(*z));
		if (!s || !z) {
			free(s);
			free(z);
			return no_memory();
		}
		for (int i = 0; i < count; i++) {
			s[i] = scale[i];
			z[i] = zero_point ? zero_point[i] : 0;
		}
	}
	free(t->quant.scale);
	free(t->quant.zero_point);
	t->quant.count = count > 0 ? count : 0;
	t->quant.axis = count > 1 ? axis : 0;
	t->quant.scale = s;
	t->quant.zero_point = z;
	return NPU_OK;
}

npu_status npu_ir_freeze_input(npu_ir_graph *g, int t, const void *data, size_t bytes)
{
	npu_ir_tensor *x;
	int64_t numel;
	npu_status st;
	int k = -1;

	for (int i = 0; i < g->n_inputs; i++)
		if (g->inputs[i] == t)
			k = i;
	if (k < 0)
		return npu_fail(NPU_ERR_INVALID_ARG, "tensor %d is not a graph input", t);
	x = &g->tensors[t];
	numel = npu_ir_numel(x);
	if (numel < 0 || !x->dtype || (size_t)numel * npu_dtype_size(x->dtype) != bytes)
		return npu_fail(NPU_ERR_SHAPE, "graph input '%s' is %s: %zu bytes do not fit",
				x->name, npu_ir_shape_str(x, (char[160]){ 0 }, 160), bytes);
	st = npu_ir_set_const(g, t, data, bytes);
	if (st)
		return st;
	memmove(&g->inputs[k], &g->inputs[k + 1], (size_t)(g->n_inputs - k - 1) * sizeof(int));
	g->n_inputs--;
	return NPU_OK;
}

void npu_ir_tensor_free(npu_ir_tensor *t)
{
	if (!t)
		return;
	free_tensor(t);
	free(t);
}

npu_status npu_ir_set_input_shape(npu_ir_graph *g, int input, int rank, const int64_t *dims)
{
	npu_ir_tensor *t;

	if (input < 0 || input >= g->n_inputs || rank < 0 || rank > NPU_MAX_RANK)
		return npu_fail(NPU_ERR_INVALID_ARG, "no graph input %d of rank %d", input, rank);
	t = &g->tensors[g->inputs[input]];
	if (t->rank >= 0 && t->rank != rank)
		return npu_fail(NPU_ERR_SHAPE, "graph input '%s' has rank %d, not %d",
				t->name, t->rank, rank);
	for (int i = 0; i < rank; i++) {
		if (dims[i] < 0 || dims[i] > NPU_IR_DIM_MAX ||
		    (t->rank >= 0 && t->dims[i] >= 0 && t->dims[i] != dims[i]))
			return npu_fail(NPU_ERR_SHAPE,
					"graph input '%s': dim %d cannot be %" PRId64,
					t->name, i, dims[i]);
	}
	t->rank = rank;
	for (int i = 0; i < rank; i++)
		t->dims[i] = dims[i];
	return NPU_OK;
}

npu_status npu_ir_set_dim_name(npu_ir_graph *g, int t, int axis, const char *name)
{
	struct npu_ir_dim_name *d;
	char *s;

	if (t < 0 || t >= g->n_tensors || axis < 0 || axis >= NPU_MAX_RANK || !name)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_ir_set_dim_name: no dim %d of tensor %d",
				axis, t);
	s = dup_str(name);
	d = realloc(g->dim_names, (size_t)(g->n_dim_names + 1) * sizeof(*d));
	if (!s || !d) {
		free(s);
		if (d)
			g->dim_names = d;
		return no_memory();
	}
	g->dim_names = d;
	d[g->n_dim_names++] = (struct npu_ir_dim_name){ .tensor = t, .axis = axis, .name = s };
	return NPU_OK;
}

const char *npu_ir_dim_name(const npu_ir_graph *g, int t, int axis)
{
	for (int i = 0; i < g->n_dim_names; i++)
		if (g->dim_names[i].tensor == t && g->dim_names[i].axis == axis)
			return g->dim_names[i].name;
	return NULL;
}

const char *npu_ir_named_shape_str(const npu_ir_graph *g, int t, char *buf, size_t len)
{
	const npu_ir_tensor *x = &g->tensors[t];
	size_t o;

	if (!len)
		return buf;
	o = (size_t)snprintf(buf, len, "%s[", x->dtype ? npu_dtype_str(x->dtype) : "?");
	if (x->rank < 0 && o < len)
		o += (size_t)snprintf(buf + o, len - o, "?");
	for (int i = 0; i < x->rank && o < len; i++) {
		const char *name = npu_ir_dim_name(g, t, i);

		if (x->dims[i] >= 0)
			o += (size_t)snprintf(buf + o, len - o, "%s%" PRId64, i ? "," : "", x->dims[i]);
		else
			o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? "," : "", name ? name : "?");
	}
	if (o < len)
		snprintf(buf + o, len - o, "]");
	return buf;
}

bool npu_ir_shape_known(const npu_ir_tensor *t)
{
	if (t->rank < 0)
		return false;
	for (int i = 0; i < t->rank; i++)
		if (t->dims[i] < 0)
			return false;
	return true;
}

bool npu_ir_node_dyn(const npu_ir_graph *g, const npu_ir_node *n)
{
	for (int i = 0; i < n->n_inputs; i++)
		if (n->inputs[i] >= 0 && g->tensors[n->inputs[i]].dyn)
			return true;
	for (int i = 0; i < n->n_outputs; i++)
		if (n->outputs[i] >= 0 && g->tensors[n->outputs[i]].dyn)
			return true;
	return false;
}

void npu_ir_axis_sizes(const npu_ir_tensor *t, int64_t axis, int64_t *outer, int64_t *inner)
{
	*outer = 1;
	*inner = 1;
	for (int d = 0; d < axis; d++)
		*outer *= t->dims[d];
	for (int d = (int)axis + 1; d < t->rank; d++)
		*inner *= t->dims[d];
}

int64_t npu_ir_numel(const npu_ir_tensor *t)
{
	int64_t n = 1;

	if (t->rank < 0)
		return -1;
	for (int i = 0; i < t->rank; i++) {
		if (t->dims[i] < 0)
			return -1;
		if (t->dims[i] && n > NPU_IR_NUMEL_MAX / t->dims[i])
			return -1;
		n *= t->dims[i];
	}
	return n;
}

const char *npu_ir_shape_str(const npu_ir_tensor *t, char *buf, size_t len)
{
	size_t o;

	if (!len)
		return buf;
	o = (size_t)snprintf(buf, len, "%s[", t->dtype ? npu_dtype_str(t->dtype) : "?");
	if (t->rank < 0 && o < len)
		o += (size_t)snprintf(buf + o, len - o, "?");
	for (int i = 0; i < t->rank && o < len; i++) {
		if (t->dims[i] < 0)
			o += (size_t)snprintf(buf + o, len - o, "%s?", i ? "," : "");
		else
			o += (size_t)snprintf(buf + o, len - o, "%s%" PRId64, i ? "," : "",
					      t->dims[i]);
	}
	if (o < len)
		snprintf(buf + o, len - o, "]");
	return buf;
}

npu_status npu_ir_const_ints(const npu_ir_tensor *t, int64_t *vals, int cap, int *count)
{
	int64_t n = npu_ir_numel(t);

	if (!t->data || (t->dtype != NPU_DTYPE_INT64 && t->dtype != NPU_DTYPE_INT32))
		return npu_fail(NPU_ERR_SHAPE, "tensor '%s' is not a constant int32/int64 tensor",
				t->name);
	if (n < 0 || n > cap)
		return npu_fail(NPU_ERR_SHAPE, "constant '%s' has %" PRId64
				" elements, at most %d expected", t->name, n, cap);
	for (int64_t i = 0; i < n; i++) {
		if (t->dtype == NPU_DTYPE_INT64) {
			memcpy(&vals[i], (const char *)t->data + 8 * i, 8);
		} else {
			int32_t v;

			memcpy(&v, (const char *)t->data + 4 * i, 4);
			vals[i] = v;
		}
	}
	*count = (int)n;
	return NPU_OK;
}

npu_status npu_ir_const_floats(const npu_ir_tensor *t, float *vals, int cap, int *count)
{
	int64_t n = npu_ir_numel(t);

	if (!t->data || (t->dtype != NPU_DTYPE_FLOAT32 && t->dtype != NPU_DTYPE_FLOAT16 &&
			 t->dtype != NPU_DTYPE_BFLOAT16))
		return npu_fail(NPU_ERR_SHAPE, "tensor '%s' is not a constant float tensor",
				t->name);
	if (n < 0 || n > cap)
		return npu_fail(NPU_ERR_SHAPE, "constant '%s' has %" PRId64
				" elements, at most %d expected", t->name, n, cap);
	for (int64_t i = 0; i < n; i++) {
		uint16_t h;

		if (t->dtype == NPU_DTYPE_FLOAT32) {
			memcpy(&vals[i], (const char *)t->data + 4 * i, 4);
			continue;
		}
		memcpy(&h, (const char *)t->data + 2 * i, 2);
		vals[i] = t->dtype == NPU_DTYPE_FLOAT16 ? npu_ir_f16_to_f32(h)
							: npu_ir_bf16_to_f32(h);
	}
	*count = (int)n;
	return NPU_OK;
}

/* ---- nodes ---- */

npu_status npu_ir_add_node(npu_ir_graph *g, const char *op, const char *name,
			   const int *inputs, int n_inputs,
			   const int *outputs, int n_outputs, int *id)
{
	npu_ir_node *n;

	for (int i = 0; i < n_inputs; i++)
		if (inputs[i] < -1 || inputs[i] >= g->n_tensors)
			return npu_fail(NPU_ERR_INVALID_ARG, "node input %d: no tensor %d",
					i, inputs[i]);
	for (int i = 0; i < n_outputs; i++) {
		if (outputs[i] < -1 || outputs[i] >= g->n_tensors)
			return npu_fail(NPU_ERR_INVALID_ARG, "node output %d: no tensor %d",
					i, outputs[i]);
		if (outputs[i] >= 0 && g->tensors[outputs[i]].producer >= 0)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"tensor '%s' already has a producer",
					g->tensors[outputs[i]].name);
	}
	if (g->n_nodes >= INT32_MAX / 4 ||
	    grow((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof(*n)))
		return no_memory();
	n = &g->nodes[g->n_nodes];
	memset(n, 0, sizeof(*n));
	n->op = dup_str(op);
	n->domain = dup_str("");
	n->name = dup_str(name);
	n->inputs = malloc((size_t)(n_inputs ? n_inputs : 1) * sizeof(int));
	n->outputs = malloc((size_t)(n_outputs ? n_outputs : 1) * sizeof(int));
	if (!n->op || !n->domain || !n->name || !n->inputs || !n->outputs) {
		free_node(n);
		return no_memory();
	}
	n->opset = g->opset;
	n->src_index = -1;
	n->n_inputs = n_inputs;
	n->n_outputs = n_outputs;
	if (n_inputs)
		memcpy(n->inputs, inputs, (size_t)n_inputs * sizeof(int));
	if (n_outputs)
		memcpy(n->outputs, outputs, (size_t)n_outputs * sizeof(int));
	for (int i = 0; i < n_outputs; i++)
		if (outputs[i] >= 0)
			g->tensors[outputs[i]].producer = g->n_nodes;
	if (id)
		*id = g->n_nodes;
	g->n_nodes++;
	return NPU_OK;
}

npu_ir_tensor *npu_ir_input(const npu_ir_graph *g, const npu_ir_node *n, int i)
{
	if (i < 0 || i >= n->n_inputs || n->inputs[i] < 0)
		return NULL;
	return &g->tensors[n->inputs[i]];
}

npu_ir_tensor *npu_ir_output(const npu_ir_graph *g, const npu_ir_node *n, int i)
{
	if (i < 0 || i >= n->n_outputs || n->outputs[i] < 0)
		return NULL;
	return &g->tensors[n->outputs[i]];
}

const char *npu_ir_node_label(const npu_ir_node *n, char *buf, size_t len)
{
	if (n->name && n->name[0])
		snprintf(buf, len, "'%s'", n->name);
	else if (n->src_index >= 0)
		snprintf(buf, len, "#%d", n->src_index);
	else
		snprintf(buf, len, "(unnamed)");
	return buf;
}

int npu_ir_count_uses(const npu_ir_graph *g, int t)
{
	int uses = 0;

	for (int i = 0; i < g->n_nodes; i++) {
		const npu_ir_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		for (int j = 0; j < n->n_inputs; j++)
			uses += n->inputs[j] == t;
	}
	return uses;
}

bool npu_ir_is_graph_output(const npu_ir_graph *g, int t)
{
	for (int i = 0; i < g->n_outputs; i++)
		if (g->outputs[i] == t)
			return true;
	return false;
}

/* ---- attributes ---- */

static const char *const attr_type_names[] = {
	[NPU_IR_ATTR_INT] = "an int", [NPU_IR_ATTR_FLOAT] = "a float",
	[NPU_IR_ATTR_STRING] = "a string", [NPU_IR_ATTR_INTS] = "a list of ints",
	[NPU_IR_ATTR_FLOATS] = "a list of floats", [NPU_IR_ATTR_TENSOR] = "a tensor",
	[NPU_IR_ATTR_STRINGS] = "a list of strings",
	[NPU_IR_ATTR_OTHER] = "of a type libnpu does not read",
};

npu_ir_attr *npu_ir_attr_find(const npu_ir_node *n, const char *name)
{
	for (int i = 0; i < n->n_attrs; i++)
		if (strcmp(n->attrs[i].name, name) == 0)
			return &n->attrs[i];
	return NULL;
}

static npu_status wrong_type(const npu_ir_node *n, const npu_ir_attr *a, npu_ir_attr_type want)
{
	char lbl[96];

	return npu_fail(NPU_ERR_FORMAT, "node %s (%s): attribute '%s' is %s, expected %s",
			npu_ir_node_label(n, lbl, sizeof(lbl)), n->op, a->name,
			attr_type_names[a->type], attr_type_names[want]);
}

npu_status npu_ir_attr_int(const npu_ir_node *n, const char *name, int64_t def, int64_t *out)
{
	const npu_ir_attr *a = npu_ir_attr_find(n, name);

	*out = def;
	if (!a)
		return NPU_OK;
	if (a->type != NPU_IR_ATTR_INT)
		return wrong_type(n, a, NPU_IR_ATTR_INT);
	*out = a->i;
	return NPU_OK;
}

npu_status npu_ir_attr_float(const npu_ir_node *n, const char *name, float def, float *out)
{
	const npu_ir_attr *a = npu_ir_attr_find(n, name);

	*out = def;
	if (!a)
		return NPU_OK;
	if (a->type == NPU_IR_ATTR_INT)
		*out = (float)a->i;
	else if (a->type == NPU_IR_ATTR_FLOAT)
		*out = a->f;
	else
		return wrong_type(n, a, NPU_IR_ATTR_FLOAT);
	return NPU_OK;
}

npu_status npu_ir_attr_string(const npu_ir_node *n, const char *name, const char *def,
			      const char **out)
{
	const npu_ir_attr *a = npu_ir_attr_find(n, name);

	*out = def;
	if (!a)
		return NPU_OK;
	if (a->type != NPU_IR_ATTR_STRING)
		return wrong_type(n, a, NPU_IR_ATTR_STRING);
	*out = a->s;
	return NPU_OK;
}

npu_status npu_ir_attr_ints(const npu_ir_node *n, const char *name, const int64_t **vals,
			    int *count)
{
	const npu_ir_attr *a = npu_ir_attr_find(n, name);

	*vals = NULL;
	*count = -1;
	if (!a)
		return NPU_OK;
	if (a->type != NPU_IR_ATTR_INTS)
		return wrong_type(n, a, NPU_IR_ATTR_INTS);
	*vals = a->ints;
	*count = a->n;
	return NPU_OK;
}

npu_status npu_ir_attr_floats(const npu_ir_node *n, const char *name, const float **vals,
			      int *count)
{
	const npu_ir_attr *a = npu_ir_attr_find(n, name);

	*vals = NULL;
	*count = -1;
	if (!a)
		return NPU_OK;
	if (a->type != NPU_IR_ATTR_FLOATS)
		return wrong_type(n, a, NPU_IR_ATTR_FLOATS);
	*vals = a->floats;
	*count = a->n;
	return NPU_OK;
}

npu_status npu_ir_attr_strings(const npu_ir_node *n, const char *name, const char **buf,
			       int *count)
{
	const npu_ir_attr *a = npu_ir_attr_find(n, name);

	*buf = NULL;
	*count = -1;
	if (!a)
		return NPU_OK;
	if (a->type != NPU_IR_ATTR_STRINGS)
		return wrong_type(n, a, NPU_IR_ATTR_STRINGS);
	*buf = a->s;
	*count = a->n;
	return NPU_OK;
}

npu_status npu_ir_attr_tensor(const npu_ir_node *n, const char *name,
			      const npu_ir_tensor **out)
{
	const npu_ir_attr *a = npu_ir_attr_find(n, name);

	*out = NULL;
	if (!a)
		return NPU_OK;
	if (a->type != NPU_IR_ATTR_TENSOR)
		return wrong_type(n, a, NPU_IR_ATTR_TENSOR);
	*out = a->t;
	return NPU_OK;
}

/* A fresh attribute slot named @name (replacing any of that name). */
static npu_ir_attr *attr_slot(npu_ir_node *n, const char *name)
{
	npu_ir_attr *a = npu_ir_attr_find(n, name), *arr;
	char *nm;

	if (a) {
		nm = a->name;
		a->name = NULL;
		free_attr(a);
		memset(a, 0, sizeof(*a));
		a->name = nm;
		return a;
	}
	nm = dup_str(name);
	arr = nm ? realloc(n->attrs, (size_t)(n->n_attrs + 1) * sizeof(*arr)) : NULL;
	if (!arr) {
		free(nm);
		return NULL;
	}
	n->attrs = arr;
	a = &arr[n->n_attrs++];
	memset(a, 0, sizeof(*a));
	a->name = nm;
	return a;
}

npu_status npu_ir_set_attr_int(npu_ir_node *n, const char *name, int64_t v)
{
	npu_ir_attr *a = attr_slot(n, name);

	if (!a)
		return no_memory();
	a->type = NPU_IR_ATTR_INT;
	a->i = v;
	return NPU_OK;
}

npu_status npu_ir_set_attr_float(npu_ir_node *n, const char *name, float v)
{
	npu_ir_attr *a = attr_slot(n, name);

	if (!a)
		return no_memory();
	a->type = NPU_IR_ATTR_FLOAT;
	a->f = v;
	return NPU_OK;
}

npu_status npu_ir_set_attr_string(npu_ir_node *n, const char *name, const char *s)
{
	npu_ir_attr *a = attr_slot(n, name);

	if (!a)
		return no_memory();
	a->type = NPU_IR_ATTR_STRING;
	a->s = dup_str(s);
	return a->s ? NPU_OK : no_memory();
}

npu_status npu_ir_set_attr_ints(npu_ir_node *n, const char *name, const int64_t *v, int count)
{
	npu_ir_attr *a = attr_slot(n, name);

	if (!a)
		return no_memory();
	a->type = NPU_IR_ATTR_INTS;
	a->ints = malloc((size_t)(count > 0 ? count : 1) * sizeof(*v));
	if (!a->ints)
		return no_memory();
	if (count > 0)
		memcpy(a->ints, v, (size_t)count * sizeof(*v));
	a->n = count > 0 ? count : 0;
	return NPU_OK;
}

npu_status npu_ir_set_attr_floats(npu_ir_node *n, const char *name, const float *v, int count)
{
	npu_ir_attr *a = attr_slot(n, name);

	if (!a)
		return no_memory();
	a->type = NPU_IR_ATTR_FLOATS;
	a->floats = malloc((size_t)(count > 0 ? count : 1) * sizeof(*v));
	if (!a->floats)
		return no_memory();
	if (count > 0)
		memcpy(a->floats, v, (size_t)count * sizeof(*v));
	a->n = count > 0 ? count : 0;
	return NPU_OK;
}

npu_status npu_ir_set_attr_strings(npu_ir_node *n, const char *name, const char *const *v,
				   int count)
{
	npu_ir_attr *a = attr_slot(n, name);
	size_t len = 1;
	char *p;

	if (!a)
		return no_memory();
	for (int i = 0; i < count; i++)
		len += strlen(v[i]) + 1;
	a->type = NPU_IR_ATTR_STRINGS;
	a->s = p = malloc(len);
	if (!a->s)
		return no_memory();
	for (int i = 0; i < count; i++) {
		size_t l = strlen(v[i]) + 1;

		memcpy(p, v[i], l);
		p += l;
	}
	*p = '\0';
	a->n = count > 0 ? count : 0;
	return NPU_OK;
}

void npu_ir_remove_attr(npu_ir_node *n, const char *name)
{
	npu_ir_attr *a = npu_ir_attr_find(n, name);

	if (!a)
		return;
	free_attr(a);
	*a = n->attrs[--n->n_attrs];
}

/* ---- topological sort ---- */

static npu_status relink(npu_ir_graph *g)
{
	char lbl[96], lbl2[96];

	for (int t = 0; t < g->n_tensors; t++)
		g->tensors[t].producer = -1;
	for (int i = 0; i < g->n_nodes; i++) {
		const npu_ir_node *n = &g->nodes[i];

		for (int j = 0; j < n->n_outputs && !n->dead; j++) {
			npu_ir_tensor *t;

			if (n->outputs[j] < 0)
				continue;
			t = &g->tensors[n->outputs[j]];
			if (t->producer >= 0)
				return npu_fail(NPU_ERR_FORMAT,
						"tensor '%s' is an output of both node %s (%s) and node %s (%s)",
						t->name,
						npu_ir_node_label(&g->nodes[t->producer], lbl, sizeof(lbl)),
						g->nodes[t->producer].op,
						npu_ir_node_label(n, lbl2, sizeof(lbl2)), n->op);
			if (t->data)
				return npu_fail(NPU_ERR_FORMAT,
						"node %s (%s) writes tensor '%s', which is a constant",
						npu_ir_node_label(n, lbl, sizeof(lbl)), n->op, t->name);
			t->producer = i;
		}
	}
	return NPU_OK;
}

/* Min-heap of node indices: Kahn's algorithm taking the earliest ready node
 * keeps the file order wherever the dependencies allow it. */
static void heap_push(int *h, int *n, int v)
{
	int i = (*n)++;

	while (i > 0 && h[(i - 1) / 2] > v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static int heap_pop(int *h, int *n)
{
	int top = h[0], v = h[--(*n)], i = 0;

	for (;;) {
		int c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] < h[c])
			c++;
		if (h[c] >= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
	return top;
}

npu_status npu_ir_topo_sort(npu_ir_graph *g)
{
	int nn = g->n_nodes, nedges = 0, nheap = 0, nord = 0;
	int *deps = NULL, *start = NULL, *edges = NULL, *heap = NULL, *order = NULL;
	npu_ir_node *sorted = NULL;
	npu_status st;
	char lbl[96];
	bool *is_input = NULL;

	st = relink(g);
	if (st)
		return st;
	if (nn <= 0)
		return NPU_OK;
	for (int i = 0; i < nn; i++)
		nedges += g->nodes[i].n_inputs;
	deps = calloc((size_t)nn, sizeof(int));
	start = calloc((size_t)nn + 1, sizeof(int));
	edges = malloc((size_t)(nedges ? nedges : 1) * sizeof(int));
	heap = malloc((size_t)nn * sizeof(int));
	order = malloc((size_t)nn * sizeof(int));
	sorted = malloc((size_t)nn * sizeof(*sorted));
	is_input = calloc((size_t)g->n_tensors + 1, sizeof(bool));
	if (!deps || !start || !edges || !heap || !order || !sorted || !is_input) {
		st = no_memory();
		goto out;
	}
	for (int i = 0; i < g->n_inputs; i++)
		is_input[g->inputs[i]] = true;
	/* Edges producer -> consumer in CSR form, counted then filled. */
	for (int i = 0; i < nn; i++) {
		const npu_ir_node *n = &g->nodes[i];

		for (int j = 0; j < n->n_inputs; j++) {
			const npu_ir_tensor *t;

			if (n->inputs[j] < 0)
				continue;
			t = &g->tensors[n->inputs[j]];
			if (t->producer < 0) {
				if (!t->data && !is_input[n->inputs[j]]) {
					st = npu_fail(NPU_ERR_FORMAT,
						      "node %s (%s) reads tensor '%s', which no node, initializer or graph input defines",
						      npu_ir_node_label(n, lbl, sizeof(lbl)),
						      n->op, t->name);
					goto out;
				}
				continue;
			}
			start[t->producer + 1]++;
			deps[i]++;
		}
	}
	for (int i = 0; i < nn; i++)
		start[i + 1] += start[i];
	{
		int *fill = heap;	/* scratch: next free slot per producer */

		memcpy(fill, start, (size_t)nn * sizeof(int));
		for (int i = 0; i < nn; i++) {
			const npu_ir_node *n = &g->nodes[i];

			for (int j = 0; j < n->n_inputs; j++) {
				int p = n->inputs[j] < 0 ? -1 : g->tensors[n->inputs[j]].producer;

				if (p >= 0)
					edges[fill[p]++] = i;
			}
		}
	}
	for (int i = 0; i < nn; i++)
		if (!deps[i])
			heap_push(heap, &nheap, i);
	while (nheap) {
		int v = heap_pop(heap, &nheap);

		order[nord++] = v;
		for (int e = start[v]; e < start[v + 1]; e++)
			if (--deps[edges[e]] == 0)
				heap_push(heap, &nheap, edges[e]);
	}
	if (nord < nn) {
		for (int i = 0; i < nn; i++) {
			if (deps[i]) {
				st = npu_fail(NPU_ERR_FORMAT,
					      "the graph has a cycle through node %s (%s)",
					      npu_ir_node_label(&g->nodes[i], lbl, sizeof(lbl)),
					      g->nodes[i].op);
				goto out;
			}
		}
	}
	for (int i = 0; i < nn; i++)
		sorted[i] = g->nodes[order[i]];
	memcpy(g->nodes, sorted, (size_t)nn * sizeof(*sorted));
	st = relink(g);
out:
	free(deps);
	free(start);
	free(edges);
	free(heap);
	free(order);
	free(sorted);
	free(is_input);
	return st;
}

/* ---- dead nodes ---- */

npu_status npu_ir_remove_dead(npu_ir_graph *g)
{
	bool *needed = calloc((size_t)g->n_tensors + 1, sizeof(bool));
	bool *live = calloc((size_t)g->n_nodes + 1, sizeof(bool));
	bool changed = true;
	int kept = 0;

	if (!needed || !live) {
		free(needed);
		free(live);
		return no_memory();
	}
	for (int i = 0; i < g->n_outputs; i++)
		needed[g->outputs[i]] = true;
	/* One backward sweep suffices on a sorted graph; repeat otherwise. */
	while (changed) {
		changed = false;
		for (int i = g->n_nodes - 1; i >= 0; i--) {
			const npu_ir_node *n = &g->nodes[i];
			bool use = false;

			if (live[i] || n->dead)
				continue;
			for (int j = 0; j < n->n_outputs; j++)
				use |= n->outputs[j] >= 0 && needed[n->outputs[j]];
			if (!use)
				continue;
			live[i] = changed = true;
			for (int j = 0; j < n->n_inputs; j++)
				if (n->inputs[j] >= 0)
					needed[n->inputs[j]] = true;
		}
	}
	for (int i = 0; i < g->n_nodes; i++) {
		if (live[i])
			g->nodes[kept++] = g->nodes[i];
		else
			free_node(&g->nodes[i]);
	}
	g->n_nodes = kept;
	for (int t = 0; t < g->n_tensors; t++) {
		npu_ir_tensor *x = &g->tensors[t];

		if (x->data && !needed[t]) {
			if (!x->data_mapped)
				free(x->data);
			x->data = NULL;
			x->data_mapped = false;
			x->bytes = 0;
		}
	}
	free(needed);
	free(live);
	return relink(g);
}

/* ---- dump ---- */

static void dump_values(const npu_ir_tensor *t, FILE *f)
{
	size_t es = npu_dtype_size(t->dtype);
	size_t n = es ? t->bytes / es : 0;
	const char *p = t->data;

	fprintf(f, " = {");
	for (size_t i = 0; i < n && i < 6; i++) {
		const char *sep = i ? ", " : "";

		switch (t->dtype) {
		case NPU_DTYPE_FLOAT32: {
			float v;

			memcpy(&v, p + 4 * i, 4);
			fprintf(f, "%s%g", sep, v);
			break;
		}
		case NPU_DTYPE_FLOAT16:
		case NPU_DTYPE_BFLOAT16: {
			uint16_t h;

			memcpy(&h, p + 2 * i, 2);
			fprintf(f, "%s%g", sep, t->dtype == NPU_DTYPE_FLOAT16 ?
				npu_ir_f16_to_f32(h) : npu_ir_bf16_to_f32(h));
			break;
		}
		case NPU_DTYPE_INT64: {
			int64_t v;

			memcpy(&v, p + 8 * i, 8);
			fprintf(f, "%s%" PRId64, sep, v);
			break;
		}
		case NPU_DTYPE_INT32: {
			int32_t v;

			memcpy(&v, p + 4 * i, 4);
			fprintf(f, "%s%" PRId32, sep, v);
			break;
		}
		case NPU_DTYPE_FLOAT64: {
			double v;

			memcpy(&v, p + 8 * i, 8);
			fprintf(f, "%s%g", sep, v);
			break;
		}
		case NPU_DTYPE_UINT64: {
			uint64_t v;

			memcpy(&v, p + 8 * i, 8);
			fprintf(f, "%s%" PRIu64, sep, v);
			break;
		}
		case NPU_DTYPE_UINT32: {
			uint32_t v;

			memcpy(&v, p + 4 * i, 4);
			fprintf(f, "%s%" PRIu32, sep, v);
			break;
		}
		case NPU_DTYPE_INT16: {
			int16_t v;

			memcpy(&v, p + 2 * i, 2);
			fprintf(f, "%s%d", sep, v);
			break;
		}
		case NPU_DTYPE_UINT16: {
			uint16_t v;

			memcpy(&v, p + 2 * i, 2);
			fprintf(f, "%s%u", sep, v);
			break;
		}
		case NPU_DTYPE_INT8:
			fprintf(f, "%s%d", sep, (int8_t)p[i]);
			break;
		case NPU_DTYPE_UINT8:
			fprintf(f, "%s%u", sep, (uint8_t)p[i]);
			break;
		case NPU_DTYPE_BOOL:
			fprintf(f, "%s%s", sep, p[i] ? "true" : "false");
			break;
		}
	}
	fprintf(f, "%s}", n > 6 ? ", ..." : "");
}

static void dump_tensor(const npu_ir_graph *g, const char *what, int id, FILE *f)
{
	const npu_ir_tensor *t = &g->tensors[id];
	char sh[160];

	fprintf(f, "  %-6s %%%d \"%s\" %s", what, id, t->name,
		npu_ir_shape_str(t, sh, sizeof(sh)));
	if (t->quant.count == 1)
		fprintf(f, " quant(scale %g, zero %" PRId32 ")", t->quant.scale[0],
			t->quant.zero_point[0]);
	else if (t->quant.count > 1)
		fprintf(f, " quant(axis %d, %d channels)", t->quant.axis, t->quant.count);
	if (t->data)
		dump_values(t, f);
	fputc('\n', f);
}

static void dump_attr(const npu_ir_attr *a, FILE *f)
{
	fprintf(f, " %s=", a->name);
	switch (a->type) {
	case NPU_IR_ATTR_INT:
		fprintf(f, "%" PRId64, a->i);
		break;
	case NPU_IR_ATTR_FLOAT:
		fprintf(f, "%g", a->f);
		break;
	case NPU_IR_ATTR_STRING:
		fprintf(f, "\"%s\"", a->s);
		break;
	case NPU_IR_ATTR_INTS:
		fputc('[', f);
		for (int i = 0; i < a->n; i++)
			fprintf(f, "%s%" PRId64, i ? "," : "", a->ints[i]);
		fputc(']', f);
		break;
	case NPU_IR_ATTR_FLOATS:
		fputc('[', f);
		for (int i = 0; i < a->n; i++)
			fprintf(f, "%s%g", i ? "," : "", a->floats[i]);
		fputc(']', f);
		break;
	case NPU_IR_ATTR_TENSOR: {
		char sh[160];

		fprintf(f, "tensor %s", npu_ir_shape_str(a->t, sh, sizeof(sh)));
		if (a->t->data)
			dump_values(a->t, f);
		break;
	}
	case NPU_IR_ATTR_STRINGS: {
		const char *p = a->s;

		fputc('[', f);
		for (int i = 0; i < a->n; i++, p += strlen(p) + 1)
			fprintf(f, "%s\"%s\"", i ? "," : "", p);
		fputc(']', f);
		break;
	}
	case NPU_IR_ATTR_OTHER:
		fputs("<unread>", f);
		break;
	}
}

void npu_ir_dump(const npu_ir_graph *g, FILE *f)
{
	bool *used = calloc((size_t)g->n_tensors + 1, sizeof(bool));

	fprintf(f, "graph \"%s\": producer \"%s\", ir_version %" PRId64
		", opset %d, %d tensors, %d nodes\n", g->name, g->producer,
		g->ir_version, g->opset, g->n_tensors, g->n_nodes);
	for (int i = 0; i < g->n_inputs; i++)
		dump_tensor(g, "input", g->inputs[i], f);
	for (int i = 0; i < g->n_outputs; i++)
		dump_tensor(g, "output", g->outputs[i], f);
	for (int i = 0; used && i < g->n_nodes; i++)
		for (int j = 0; j < g->nodes[i].n_inputs; j++)
			if (g->nodes[i].inputs[j] >= 0)
				used[g->nodes[i].inputs[j]] = true;
	for (int t = 0; t < g->n_tensors; t++)
		if (g->tensors[t].data && (!used || used[t]))
			dump_tensor(g, "const", t, f);
	for (int i = 0; i < g->n_nodes; i++) {
		const npu_ir_node *n = &g->nodes[i];

		fprintf(f, "  node %d: %s%s%s", i, n->domain[0] ? n->domain : "",
			n->domain[0] ? "." : "", n->op);
		if (n->name[0])
			fprintf(f, " \"%s\"", n->name);
		fprintf(f, " (");
		for (int j = 0; j < n->n_inputs; j++) {
			if (n->inputs[j] < 0)
				fprintf(f, "%s-", j ? ", " : "");
			else
				fprintf(f, "%s%%%d", j ? ", " : "", n->inputs[j]);
		}
		fprintf(f, ") -> (");
		for (int j = 0; j < n->n_outputs; j++) {
			char sh[160];

			if (n->outputs[j] < 0)
				fprintf(f, "%s-", j ? ", " : "");
			else
				fprintf(f, "%s%%%d %s", j ? ", " : "", n->outputs[j],
					npu_ir_shape_str(&g->tensors[n->outputs[j]], sh, sizeof(sh)));
		}
		fputc(')', f);
		for (int j = 0; j < n->n_attrs; j++)
			dump_attr(&n->attrs[j], f);
		fprintf(f, "%s\n", n->dead ? " [dead]" : "");
	}
	free(used);
}
