// SPDX-License-Identifier: MIT
/*
 * ONNX If, flattened at load (issue 17): each If node of the default
 * domain whose branches hold only plain nodes (no Loop, Scan or other
 * graph attribute once their own Ifs are flattened) becomes its two
 * branches inlined into the enclosing graph, followed by one npu.IfSelect
 * per output choosing between the branches' values by the condition
 * (compile/rewrite_control.c: with a condition that folds at compile
 * time, such as a comparison of shapes after --shape, it becomes the
 * chosen branch and the other is dropped; else both run and a Where
 * selects, which needs both branches' outputs to have one shape and
 * dtype).  A condition the file gives as a constant (an initializer or a
 * Constant node) inlines the chosen branch alone, followed by Identity
 * nodes: the other branch is never parsed, so it may hold anything.
 *
 * Names: a tensor a branch defines (node outputs, initializers) is
 * renamed "<if>/then/<name>" or "<if>/else/<name>" (<if> the node's name,
 * or "If#<index>"), so branch names never clash with each other or the
 * outer graph; a name the branch reads without defining it is the outer
 * scope's, as ONNX says, and keeps its name.  Nested Ifs are flattened
 * first, so an inner branch's outer names resolve in the outer branch.
 *
 * This works on the protobuf-c structures before the IR is built: nodes
 * and initializers move from the branch graphs to the enclosing one (the
 * branches keep none, so freeing the message frees each once).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/npu_onnx_if.h"

static bool default_domain(const char *d)
{
	return !d || !d[0] || !strcmp(d, "ai.onnx");
}

static Onnx__GraphProto *branch(const Onnx__NodeProto *np, const char *name)
{
	for (size_t i = 0; i < np->n_attribute; i++)
		if (np->attribute[i]->name && !strcmp(np->attribute[i]->name, name))
			return np->attribute[i]->g;
	return NULL;
}

/* Whether a node of @gp still carries a graph (Loop, Scan, an If left whole). */
static bool has_subgraph(const Onnx__GraphProto *gp)
{
	for (size_t i = 0; i < gp->n_node; i++)
		for (size_t k = 0; k < gp->node[i]->n_attribute; k++)
			if (gp->node[i]->attribute[k]->g || gp->node[i]->attribute[k]->n_graphs)
				return true;
	return false;
}

static bool defines(const Onnx__GraphProto *b, const char *name)
{
	if (!name || !name[0])
		return false;
	for (size_t i = 0; i < b->n_initializer; i++)
		if (b->initializer[i]->name && !strcmp(b->initializer[i]->name, name))
			return true;
	for (size_t i = 0; i < b->n_node; i++)
		for (size_t k = 0; k < b->node[i]->n_output; k++)
			if (!strcmp(b->node[i]->output[k], name))
				return true;
	return false;
}

/* *@s renamed @prefix + *@s when branch @b defines it. */
static npu_status rename_local(const Onnx__GraphProto *b, const char *prefix, char **s)
{
	char *n;

	if (!defines(b, *s))
		return NPU_OK;
	n = malloc(strlen(prefix) + strlen(*s) + 1);
	if (!n)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	sprintf(n, "%s%s", prefix, *s);
	free(*s);
	*s = n;
	return NPU_OK;
}

struct nodes {
	Onnx__NodeProto **v;
	size_t n, cap;
};

static npu_status push(struct nodes *o, Onnx__NodeProto *np)
{
	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 16;
		Onnx__NodeProto **v = realloc(o->v, cap * sizeof(*v));

		if (!v)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		o->v = v;
		o->cap = cap;
	}
	o->v[o->n++] = np;
	return NPU_OK;
}

/*
 * Move branch @b's nodes (renamed) to @o and its initializers to @gp; its
 * outputs' new names into @outs (@nout of them, borrowed from the nodes).
 */
static npu_status move_branch(Onnx__GraphProto *gp, Onnx__GraphProto *b, const char *prefix,
			      struct nodes *o, const char **outs, size_t nout)
{
	Onnx__TensorProto **init;
	npu_status st = NPU_OK;

	if (b->n_output != nout)
		return npu_fail(NPU_ERR_FORMAT, "%s: the branch has %zu outputs, the If %zu",
				prefix, b->n_output, nout);
	for (size_t k = 0; k < nout; k++) {
		if (!b->output[k]->name || !b->output[k]->name[0])
			return npu_fail(NPU_ERR_FORMAT, "%s: branch output %zu has no name",
					prefix, k);
		st = rename_local(b, prefix, &b->output[k]->name);
		if (st)
			return st;
		outs[k] = b->output[k]->name;
	}
	/* Inputs first: renaming outputs changes what the branch defines. */
	for (size_t i = 0; !st && i < b->n_node; i++)
		for (size_t k = 0; !st && k < b->node[i]->n_input; k++)
			st = rename_local(b, prefix, &b->node[i]->input[k]);
	for (size_t i = 0; !st && i < b->n_initializer; i++) {
		char *n = malloc(strlen(prefix) + strlen(b->initializer[i]->name ?
							  b->initializer[i]->name : "") + 1);

		if (!n)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		sprintf(n, "%s%s", prefix, b->initializer[i]->name ? b->initializer[i]->name : "");
		free(b->initializer[i]->name);
		b->initializer[i]->name = n;
	}
	if (st)
		return st;
	/* Node outputs last: every reader above already saw the old names. */
	for (size_t i = 0; i < b->n_node; i++)
		for (size_t k = 0; k < b->node[i]->n_output; k++) {
			char *n = malloc(strlen(prefix) + strlen(b->node[i]->output[k]) + 1);

			if (!n)
				return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
			sprintf(n, "%s%s", prefix, b->node[i]->output[k]);
			free(b->node[i]->output[k]);
			b->node[i]->output[k] = n;
		}
	for (size_t i = 0; i < b->n_node; i++)
		if ((st = push(o, b->node[i])))
			return st;
	b->n_node = 0;
	init = realloc(gp->initializer, (gp->n_initializer + b->n_initializer + 1) * sizeof(*init));
	if (!init)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	gp->initializer = init;
	for (size_t i = 0; i < b->n_initializer; i++)
		gp->initializer[gp->n_initializer++] = b->initializer[i];
	b->n_initializer = 0;
	return NPU_OK;
}

/* A node @op(@in[0..@nin)) -> @out, appended to @o; *@made (may be NULL) gets it. */
static npu_status add_node_p(struct nodes *o, const char *op, const char *name,
			     const char *const *in, size_t nin, const char *out,
			     Onnx__NodeProto **made)
{
	Onnx__NodeProto *np = malloc(sizeof(*np));
	npu_status st;
	bool oom = false;

	if (!np)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	onnx__node_proto__init(np);
	np->n_input = nin;
	np->input = calloc(nin, sizeof(char *));
	np->n_output = 1;
	np->output = calloc(1, sizeof(char *));
	np->op_type = strdup(op);
	np->name = strdup(name);
	np->domain = strdup("");
	for (size_t i = 0; np->input && i < nin; i++)
		oom |= !(np->input[i] = strdup(in[i]));
	if (np->output)
		np->output[0] = strdup(out);
	st = push(o, np);
	if (st || oom || !np->input || !np->output || !np->op_type || !np->name || !np->domain ||
	    !np->output[0]) {
		if (!st)
			o->n--;
		onnx__node_proto__free_unpacked(np, NULL);
		return st ? st : npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	if (made)
		*made = np;
	return NPU_OK;
}

static npu_status add_node(struct nodes *o, const char *op, const char *name,
			   const char *const *in, size_t nin, const char *out)
{
	return add_node_p(o, op, name, in, nin, out, NULL);
}

/* One npu.IfSelect: @out = @cond ? @a : @b. */
static npu_status select_node(struct nodes *o, const char *name, const char *cond, const char *a,
			      const char *b, const char *out)
{
	return add_node(o, NPU_OP_IF_SELECT, name, (const char *[]){ cond, a, b }, 3, out);
}

/* @out = Identity(@x): the output of an If whose condition is a constant. */
static npu_status identity_node(struct nodes *o, const char *name, const char *x, const char *out)
{
	return add_node(o, "Identity", name, &x, 1, out);
}

/* The value of bool tensor proto @t of one element: 0, 1, or -1 if it is not that. */
static int bool_value(const Onnx__TensorProto *t)
{
	size_t n = 1;

	for (size_t d = 0; d < t->n_dims; d++)
		n *= (size_t)t->dims[d];
	if (t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__BOOL || n != 1 || t->data_location)
		return -1;
	if (t->has_raw_data && t->raw_data.len == 1)
		return t->raw_data.data[0] != 0;
	if (t->n_int32_data == 1)
		return t->int32_data[0] != 0;
	return -1;
}

/* Initializer @name of @gp; NULL if there is none. */
static const Onnx__TensorProto *find_init(const Onnx__GraphProto *gp, const char *name)
{
	for (size_t i = 0; i < gp->n_initializer; i++)
		if (gp->initializer[i]->name && !strcmp(gp->initializer[i]->name, name))
			return gp->initializer[i];
	return NULL;
}

/*
 * The first Constant node making @name among @v[0..@n): true, its value
 * in *@t (NULL when it has no value attribute); false (*@t untouched) if
 * there is none.
 */
static bool constant_node(Onnx__NodeProto *const *v, size_t n, const char *name,
			  const Onnx__TensorProto **t)
{
	for (size_t i = 0; i < n; i++) {
		const Onnx__NodeProto *np = v[i];

		if (!np->op_type || strcmp(np->op_type, "Constant") || np->n_output != 1 ||
		    strcmp(np->output[0], name))
			continue;
		*t = NULL;
		for (size_t k = 0; k < np->n_attribute; k++)
			if (np->attribute[k]->t && np->attribute[k]->name &&
			    !strcmp(np->attribute[k]->name, "value")) {
				*t = np->attribute[k]->t;
				break;
			}
		return true;
	}
	return false;
}

/*
 * The If condition @name when the file gives it as a constant (an
 * initializer, or a Constant node already in @o): 0, 1; -1 otherwise (it
 * may still fold at shape inference: npu.IfSelect then chooses).
 */
static int const_cond(const Onnx__GraphProto *gp, const struct nodes *o, const char *name)
{
	const Onnx__TensorProto *t = find_init(gp, name);

	if (t || constant_node(o->v, o->n, name, &t))
		return t ? bool_value(t) : -1;
	return -1;
}

/*
 * @st; when that is NPU_OK, node @np has been flattened into the node list
 * (*@done true) and is freed.
 */
static npu_status replaced(Onnx__NodeProto *np, npu_status st, bool *done)
{
	if (!st) {
		*done = true;
		onnx__node_proto__free_unpacked(np, NULL);
	}
	return st;
}

/* @np's name, or "@kind#@idx" when it has none: the stem of the names its flattening makes. */
static void node_base(const Onnx__NodeProto *np, const char *kind, size_t idx, char *base,
		      size_t size)
{
	if (np->name && np->name[0])
		snprintf(base, size, "%s", np->name);
	else
		snprintf(base, size, "%s#%zu", kind, idx);
}

/* If node @np (index @i) inlined into @o; false in *@done when it stays whole. */
static npu_status inline_if(Onnx__GraphProto *gp, Onnx__NodeProto *np, size_t i, struct nodes *o,
			    int opset, int depth, bool *done)
{
	Onnx__GraphProto *br[2] = { branch(np, "then_branch"), branch(np, "else_branch") };
	static const char *const side[2] = { "then", "else" };
	const char **outs[2] = { NULL, NULL };
	char base[256], prefix[300], sel[300];
	npu_status st = NPU_OK;
	int cv;

	*done = false;
	if (!br[0] || !br[1] || np->n_input != 1 || !np->input[0][0])
		return NPU_OK;	/* refused later, as an If */
	for (int b = 0; b < 2; b++)
		if ((st = npu_onnx_flatten_if(br[b], opset, depth + 1)))
			return st;
	if (has_subgraph(br[0]) || has_subgraph(br[1]))
		return NPU_OK;
	node_base(np, "If", i, base, sizeof(base));
	outs[0] = calloc(np->n_output + 1, sizeof(char *));
	outs[1] = calloc(np->n_output + 1, sizeof(char *));
	if (!outs[0] || !outs[1])
		st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	/* A condition the file gives as a constant: only its branch, the other never parsed. */
	cv = const_cond(gp, o, np->input[0]);
	for (int b = 0; !st && b < 2; b++) {
		if (cv >= 0 && b != (cv ? 0 : 1))
			continue;
		snprintf(prefix, sizeof(prefix), "%s/%s/", base, side[b]);
		st = move_branch(gp, br[b], prefix, o, outs[b], np->n_output);
	}
	for (size_t k = 0; !st && k < np->n_output; k++) {
		snprintf(sel, sizeof(sel), "%s/select%zu", base, k);
		if (!np->output[k][0])
			continue;
		if (cv >= 0)
			st = identity_node(o, sel, outs[cv ? 0 : 1][k], np->output[k]);
		else
			st = select_node(o, sel, np->input[0], outs[0][k], outs[1][k], np->output[k]);
	}
	free(outs[0]);
	free(outs[1]);
	return replaced(np, st, done);
}

/* ---- Scan, unrolled ---- */

/* An independent copy of @np (its attributes' graphs too), through protobuf. */
static Onnx__NodeProto *copy_node(const Onnx__NodeProto *np)
{
	size_t n = onnx__node_proto__get_packed_size(np);
	uint8_t *buf = malloc(n ? n : 1);
	Onnx__NodeProto *c;

	if (!buf)
		return NULL;
	onnx__node_proto__pack(np, buf);
	c = onnx__node_proto__unpack(NULL, n, buf);
	free(buf);
	return c;
}

static Onnx__TensorProto *copy_tensor(const Onnx__TensorProto *t)
{
	size_t n = onnx__tensor_proto__get_packed_size(t);
	uint8_t *buf = malloc(n ? n : 1);
	Onnx__TensorProto *c;

	if (!buf)
		return NULL;
	onnx__tensor_proto__pack(t, buf);
	c = onnx__tensor_proto__unpack(NULL, n, buf);
	free(buf);
	return c;
}

static npu_status add_init(Onnx__GraphProto *gp, Onnx__TensorProto *t)
{
	Onnx__TensorProto **v = realloc(gp->initializer, (gp->n_initializer + 1) * sizeof(*v));

	if (!v) {
		onnx__tensor_proto__free_unpacked(t, NULL);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	gp->initializer = v;
	gp->initializer[gp->n_initializer++] = t;
	return NPU_OK;
}

/* A new tensor proto @name of data type @dtype, no data yet; NULL when out of memory. */
static Onnx__TensorProto *new_tensor(const char *name, int32_t dtype)
{
	Onnx__TensorProto *t = malloc(sizeof(*t));

	if (!t)
		return NULL;
	onnx__tensor_proto__init(t);
	t->has_data_type = 1;
	t->data_type = dtype;
	t->name = strdup(name);
	if (!t->name) {
		onnx__tensor_proto__free_unpacked(t, NULL);
		return NULL;
	}
	return t;
}

/* An int64 initializer @name of @n values (rank 0 when @n is 0: one value). */
static npu_status add_i64(Onnx__GraphProto *gp, const char *name, const int64_t *v, size_t n)
{
	Onnx__TensorProto *t = new_tensor(name, ONNX__TENSOR_PROTO__DATA_TYPE__INT64);

	if (!t)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	t->n_int64_data = n ? n : 1;
	t->int64_data = malloc(t->n_int64_data * sizeof(int64_t));
	if (n) {
		t->n_dims = 1;
		t->dims = malloc(sizeof(int64_t));
		if (t->dims)
			t->dims[0] = (int64_t)n;
	}
	if (!t->int64_data || (n && !t->dims)) {
		onnx__tensor_proto__free_unpacked(t, NULL);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	memcpy(t->int64_data, v, t->n_int64_data * sizeof(int64_t));
	return add_init(gp, t);
}

/* An INT or INTS attribute on @np (@n 0: INT @v[0]). */
static npu_status set_ints(Onnx__NodeProto *np, const char *name, const int64_t *v, size_t n)
{
	Onnx__AttributeProto *a = malloc(sizeof(*a)), **arr;

	if (!a)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	onnx__attribute_proto__init(a);
	a->name = strdup(name);
	a->has_type = 1;
	if (n) {
		a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
		a->n_ints = n;
		a->ints = malloc(n * sizeof(int64_t));
		if (a->ints)
			memcpy(a->ints, v, n * sizeof(int64_t));
	} else {
		a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
		a->has_i = 1;
		a->i = v[0];
	}
	arr = realloc(np->attribute, (np->n_attribute + 1) * sizeof(*arr));
	if (!a->name || (n && !a->ints) || !arr) {
		onnx__attribute_proto__free_unpacked(a, NULL);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	np->attribute = arr;
	np->attribute[np->n_attribute++] = a;
	return NPU_OK;
}

static int64_t attr_int(const Onnx__NodeProto *np, const char *name, int64_t def)
{
	for (size_t i = 0; i < np->n_attribute; i++)
		if (np->attribute[i]->name && !strcmp(np->attribute[i]->name, name))
			return np->attribute[i]->i;
	return def;
}

/* Element @k of INTS attribute @name, @def when absent. */
static int64_t attr_ints_at(const Onnx__NodeProto *np, const char *name, size_t k, int64_t def)
{
	for (size_t i = 0; i < np->n_attribute; i++)
		if (np->attribute[i]->name && !strcmp(np->attribute[i]->name, name))
			return k < np->attribute[i]->n_ints ? np->attribute[i]->ints[k] : def;
	return def;
}

/* Dim @axis of tensor @name as the graph declares it (an input, value_info, initializer); -1 unknown. */
static int64_t declared_dim(const Onnx__GraphProto *gp, const char *name, int64_t axis)
{
	const Onnx__ValueInfoProto *const *lists[2] = { (const Onnx__ValueInfoProto *const *)gp->input,
							(const Onnx__ValueInfoProto *const *)gp->value_info };
	size_t counts[2] = { gp->n_input, gp->n_value_info };

	for (size_t i = 0; i < gp->n_initializer; i++)
		if (gp->initializer[i]->name && !strcmp(gp->initializer[i]->name, name))
			return axis >= 0 && (size_t)axis < gp->initializer[i]->n_dims ?
			       gp->initializer[i]->dims[axis] : -1;
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < counts[l]; i++) {
			const Onnx__ValueInfoProto *v = lists[l][i];
			const Onnx__TensorShapeProto *sh;

			if (!v->name || strcmp(v->name, name) || !v->type || !v->type->tensor_type ||
			    !(sh = v->type->tensor_type->shape) || axis < 0 || (size_t)axis >= sh->n_dim)
				continue;
			return sh->dim[axis]->value_case ==
			       ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ?
			       sh->dim[axis]->dim_value : -1;
		}
	return -1;
}

#define MAX_UNROLL	256
#define MAX_UNROLL_NODES	65536u

/*
 * @s renamed for one iteration: a body input to @to[k] (the value it
 * takes), a name the body defines to @prefix + name, an outer one kept.
 */
static npu_status rename_iter(const Onnx__GraphProto *b, char *const *to, const char *prefix,
			      char **s)
{
	for (size_t k = 0; k < b->n_input; k++)
		if (b->input[k]->name && !strcmp(*s, b->input[k]->name)) {
			char *n = strdup(to[k]);

			if (!n)
				return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
			free(*s);
			*s = n;
			return NPU_OK;
		}
	return rename_local(b, prefix, s);
}

/*
 * One copy of body @b appended: its nodes to @o, its initializers to @gp,
 * every name renamed by rename_iter (@to: what the body's inputs take,
 * @prefix: the stem of the names the body defines).  @b is left as it was.
 */
static npu_status copy_body(Onnx__GraphProto *gp, const Onnx__GraphProto *b, char *const *to,
			    const char *prefix, struct nodes *o)
{
	npu_status st = NPU_OK;

	for (size_t n = 0; !st && n < b->n_node; n++) {
		Onnx__NodeProto *c = copy_node(b->node[n]);

		if (!c)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		for (size_t k = 0; !st && k < c->n_input; k++)
			st = rename_iter(b, to, prefix, &c->input[k]);
		for (size_t k = 0; !st && k < c->n_output; k++)
			st = rename_local(b, prefix, &c->output[k]);
		if (!st)
			st = push(o, c);
		if (st)
			onnx__node_proto__free_unpacked(c, NULL);
	}
	for (size_t n = 0; !st && n < b->n_initializer; n++) {
		Onnx__TensorProto *c = copy_tensor(b->initializer[n]);

		if (!c)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		st = rename_local(b, prefix, &c->name);
		if (st)
			onnx__tensor_proto__free_unpacked(c, NULL);
		else
			st = add_init(gp, c);	/* frees @c when it fails */
	}
	return st;
}

/* Body @b's output @k as the copy renamed by @to and @prefix calls it: a new string in *@out. */
static npu_status body_output(const Onnx__GraphProto *b, size_t k, char *const *to,
			      const char *prefix, char **out)
{
	npu_status st;

	*out = strdup(b->output[k]->name ? b->output[k]->name : "");
	if (!*out)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	st = rename_iter(b, to, prefix, out);
	if (st) {
		free(*out);
		*out = NULL;
	}
	return st;
}

/*
 * What an unrolled Scan or Loop threads through its @t copies of the body:
 * @n carried values (one copy's outputs are the next copy's inputs) and
 * @k scan outputs, one slice from each copy.
 */
struct carry {
	int64_t n, k, t;
	char **state;	/* the carried values' names after the copies so far */
	char ***ys;	/* ys[j][t]: scan output j's slice from copy t */
};

/* @c for @n carried values starting as @init[0..@n), @k scan outputs of @t slices. */
static npu_status carry_init(struct carry *c, char *const *init, int64_t n, int64_t k, int64_t t)
{
	*c = (struct carry){ .n = n, .k = k, .t = t };
	c->state = calloc((size_t)n + 1, sizeof(*c->state));
	c->ys = calloc((size_t)k + 1, sizeof(*c->ys));
	if (!c->state || !c->ys)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t j = 0; j < k; j++)
		if (!(c->ys[j] = calloc((size_t)t, sizeof(char *))))
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t i = 0; i < n; i++)
		if (!(c->state[i] = strdup(init[i])))
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	return NPU_OK;
}

/* Everything @c holds (also after carry_init failed part way). */
static void carry_free(struct carry *c)
{
	for (int64_t i = 0; c->state && i < c->n; i++)
		free(c->state[i]);
	for (int64_t j = 0; c->ys && j < c->k; j++) {
		for (int64_t t = 0; c->ys[j] && t < c->t; t++)
			free(c->ys[j][t]);
		free(c->ys[j]);
	}
	free(c->state);
	free(c->ys);
}

/*
 * Copy @t's results into @c: body @b's outputs @first.. renamed for the
 * copy (@to, @prefix), the carried values' next names, then the scan
 * slices.  The carried names are replaced only once all are read: @to
 * points at them, and an output may be a body input passed through.
 */
static npu_status carry_take(struct carry *c, const Onnx__GraphProto *b, size_t first,
			     char *const *to, const char *prefix, int64_t t)
{
	char **next = calloc((size_t)c->n + 1, sizeof(*next));
	npu_status st = next ? NPU_OK : npu_fail(NPU_ERR_NO_MEMORY, "out of memory");

	for (int64_t i = 0; !st && i < c->n + c->k; i++)
		st = body_output(b, first + (size_t)i, to, prefix,
				 i < c->n ? &next[i] : &c->ys[i - c->n][t]);
	for (int64_t i = 0; next && i < c->n; i++) {
		if (st) {
			free(next[i]);
			continue;
		}
		free(c->state[i]);
		c->state[i] = next[i];
	}
	free(next);
	return st;
}

/*
 * Scan or Loop node @np's outputs from @c: each carried value's last name
 * through an Identity, each scan output its slices Unsqueezed and
 * Concatenated along its scan_output_axes (reversed as its
 * scan_output_directions say).  A Loop has neither attribute: axis 0, in
 * order, as ONNX's Loop stacks its scan outputs.
 */
static npu_status carry_finish(const struct carry *c, Onnx__GraphProto *gp, struct nodes *o,
			       const Onnx__NodeProto *np, const char *base, int opset)
{
	int64_t N = c->n, T = c->t;
	char nm[400];
	npu_status st = NPU_OK;

	for (int64_t i = 0; !st && i < N; i++)
		if (np->output[i][0]) {
			snprintf(nm, sizeof(nm), "%s/state%lld", base, (long long)i);
			st = add_node(o, "Identity", nm, (const char *const *)&c->state[i], 1,
				      np->output[i]);
		}
	for (int64_t k = 0; !st && k < c->k; k++) {
		int64_t ax = attr_ints_at(np, "scan_output_axes", (size_t)k, 0);
		bool rev = attr_ints_at(np, "scan_output_directions", (size_t)k, 0) != 0;
		const char **parts;
		char axn[420];
		Onnx__NodeProto *cat = NULL;

		if (!np->output[N + k][0])
			continue;
		parts = calloc((size_t)T, sizeof(*parts));
		if (!parts)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		snprintf(axn, sizeof(axn), "%s/axes%lld", base, (long long)k);
		if (opset >= 13)
			st = add_i64(gp, axn, &ax, 1);
		for (int64_t t = 0; !st && t < T; t++) {
			Onnx__NodeProto *u = NULL;

			snprintf(nm, sizeof(nm), "%s/%lld/out%lld", base, (long long)t, (long long)k);
			st = add_node_p(o, "Unsqueeze", nm, (const char *[]){ c->ys[k][t], axn },
					opset >= 13 ? 2 : 1, nm, &u);
			if (!st && opset < 13)
				st = set_ints(u, "axes", &ax, 1);
			parts[rev ? T - 1 - t : t] = u ? u->output[0] : NULL;
		}
		snprintf(nm, sizeof(nm), "%s/concat%lld", base, (long long)k);
		if (!st)
			st = add_node_p(o, "Concat", nm, parts, (size_t)T, np->output[N + k], &cat);
		if (!st)
			st = set_ints(cat, "axis", &ax, 0);
		free(parts);
	}
	return st;
}

/*
 * Scan (opset 9+) node @np unrolled: its scan inputs' length T known from
 * the graph's declarations (at most MAX_UNROLL), the body copied T times,
 * state chained from one copy to the next, the scan inputs' slices
 * Gathers, the scan outputs Unsqueezes and a Concat.  *@done false: left
 * whole (refused later as Scan).
 */
static npu_status unroll_scan(Onnx__GraphProto *gp, Onnx__NodeProto *np, size_t idx,
			      struct nodes *o, int opset, int depth, bool *done)
{
	Onnx__GraphProto *b = branch(np, "body");
	int64_t M = attr_int(np, "num_scan_inputs", -1), N, K, T = -1;
	char base[200], nm[400];
	char **to = NULL;
	struct carry c = { 0 };
	npu_status st = NPU_OK;

	*done = false;
	if (!b || M < 1 || (int64_t)np->n_input < M || (st = npu_onnx_flatten_if(b, opset, depth + 1)))
		return st;
	N = (int64_t)np->n_input - M;
	K = (int64_t)b->n_output - N;
	if (has_subgraph(b) || (int64_t)b->n_input != N + M || K < 0 ||
	    (int64_t)np->n_output != N + K)
		return NPU_OK;
	for (int64_t j = 0; j < M; j++) {
		int64_t ax = attr_ints_at(np, "scan_input_axes", (size_t)j, 0);
		int64_t t = ax < 0 ? -1 : declared_dim(gp, np->input[N + j], ax);

		if (t < 1 || (T >= 0 && t != T))
			return NPU_OK;
		T = t;
	}
	for (int64_t k = 0; k < K; k++)
		if (attr_ints_at(np, "scan_output_axes", (size_t)k, 0) < 0)
			return NPU_OK;
	/* Bounded work: a long scan over a large (maybe itself unrolled) body stays whole. */
	if (T > MAX_UNROLL || (uint64_t)T * (b->n_node + b->n_initializer + 1) > MAX_UNROLL_NODES)
		return NPU_OK;
	node_base(np, "Scan", idx, base, sizeof(base));
	to = calloc((size_t)(N + M) + 1, sizeof(*to));
	if (!to)
		st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	if (!st)
		st = carry_init(&c, np->input, N, K, T);
	for (int64_t t = 0; !st && t < T; t++) {
		char prefix[300];

		snprintf(prefix, sizeof(prefix), "%s/%lld/", base, (long long)t);
		for (int64_t i = 0; i < N; i++)
			to[i] = c.state[i];
		for (int64_t j = 0; !st && j < M; j++) {
			int64_t ax = attr_ints_at(np, "scan_input_axes", (size_t)j, 0);
			int64_t at = attr_ints_at(np, "scan_input_directions", (size_t)j, 0) ?
				     T - 1 - t : t;
			char idxn[420];
			Onnx__NodeProto *g = NULL;

			snprintf(nm, sizeof(nm), "%sin%lld", prefix, (long long)j);
			snprintf(idxn, sizeof(idxn), "%sidx%lld", prefix, (long long)j);
			st = add_i64(gp, idxn, &at, 0);
			if (!st)
				st = add_node_p(o, "Gather", nm, (const char *[]){ np->input[N + j], idxn },
						2, nm, &g);
			if (!st)
				st = set_ints(g, "axis", &ax, 0);
			if (!st && !(to[N + j] = strdup(nm)))
				st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		}
		if (!st)
			st = copy_body(gp, b, to, prefix, o);
		/* The body's outputs this iteration: the next state, the scan slices. */
		if (!st)
			st = carry_take(&c, b, 0, to, prefix, t);
		for (int64_t j = 0; j < M; j++) {
			free(to[N + j]);
			to[N + j] = NULL;
		}
	}
	if (!st)
		st = carry_finish(&c, gp, o, np, base, opset);
	carry_free(&c);
	free(to);
	return replaced(np, st, done);
}

/*
 * Scan of opset 8: a batch axis 0 before the scan axis, and an optional
 * sequence_lens first input.  Unrolled as one opset-9 Scan per batch
 * element (unroll_scan above): the states and scan inputs of element b
 * are Gathers at b along axis 0, declared in the graph's value_info with
 * the batch dim dropped so the element's scan length is known, and the
 * results are Unsqueezed back at axis 0 and Concatenated over the batch.
 * sequence_lens must be absent or a constant of the full length in every
 * element (a shorter sequence would leave its tail's outputs to zero and
 * its state early: not unrolled, refused as Scan).  *@done false: left
 * whole.
 */
#define SCAN8_MAX_BATCH	64

/* @src's declaration (graph input or value_info) copied as @name without dim 0. */
static npu_status declare_element(Onnx__GraphProto *gp, const char *src, const char *name,
				  bool *ok)
{
	Onnx__ValueInfoProto *v = NULL, *c, **arr;
	Onnx__TensorShapeProto *sh;
	uint8_t *buf;
	size_t n;

	*ok = false;
	for (size_t i = 0; !v && i < gp->n_input; i++)
		if (gp->input[i]->name && !strcmp(gp->input[i]->name, src))
			v = gp->input[i];
	for (size_t i = 0; !v && i < gp->n_value_info; i++)
		if (gp->value_info[i]->name && !strcmp(gp->value_info[i]->name, src))
			v = gp->value_info[i];
	if (!v || !v->type || !v->type->tensor_type || !(sh = v->type->tensor_type->shape) ||
	    sh->n_dim < 1)
		return NPU_OK;
	n = onnx__value_info_proto__get_packed_size(v);
	buf = malloc(n ? n : 1);
	if (!buf)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	onnx__value_info_proto__pack(v, buf);
	c = onnx__value_info_proto__unpack(NULL, n, buf);
	free(buf);
	arr = c ? realloc(gp->value_info, (gp->n_value_info + 1) * sizeof(*arr)) : NULL;
	if (!c || !arr) {
		if (c)
			onnx__value_info_proto__free_unpacked(c, NULL);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	gp->value_info = arr;
	free(c->name);
	c->name = strdup(name);
	sh = c->type->tensor_type->shape;
	protobuf_c_message_free_unpacked(&sh->dim[0]->base, NULL);
	memmove(&sh->dim[0], &sh->dim[1], (sh->n_dim - 1) * sizeof(*sh->dim));
	sh->n_dim--;
	gp->value_info[gp->n_value_info++] = c;
	if (!c->name)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	*ok = true;
	return NPU_OK;
}

/* Whether sequence_lens @name is absent, or a constant of @t in every element. */
static bool full_lengths(const Onnx__GraphProto *gp, const char *name, int64_t t)
{
	const Onnx__TensorProto *c = NULL;

	if (!name[0])
		return true;
	for (size_t i = 0; i < gp->n_initializer; i++)
		if (gp->initializer[i]->name && !strcmp(gp->initializer[i]->name, name))
			c = gp->initializer[i];
	if (!c)
		return false;
	for (size_t i = 0; i < c->n_int32_data; i++)
		if (c->int32_data[i] != t)
			return false;
	for (size_t i = 0; i + 4 <= c->raw_data.len; i += 4) {
		int32_t v;

		memcpy(&v, c->raw_data.data + i, 4);
		if (v != t)
			return false;
	}
	return c->n_int32_data || c->raw_data.len;
}

static npu_status unroll_scan8(Onnx__GraphProto *gp, Onnx__NodeProto *np, size_t idx,
			       struct nodes *o, int opset, int depth, bool *done)
{
	Onnx__GraphProto *b = branch(np, "body");
	int64_t M = attr_int(np, "num_scan_inputs", -1), N, K, B, T, zero = 0;
	char base[200], nm[600];
	npu_status st = NPU_OK;

	*done = false;
	if (!b || M < 1 || (int64_t)np->n_input < M + 1)
		return NPU_OK;
	N = (int64_t)np->n_input - 1 - M;
	K = (int64_t)b->n_output - N;
	B = declared_dim(gp, np->input[1 + N], 0);
	T = declared_dim(gp, np->input[1 + N], 1);
	if ((int64_t)b->n_input != N + M || K < 0 || (int64_t)np->n_output != N + K || B < 1 ||
	    B > SCAN8_MAX_BATCH || T < 1 || !full_lengths(gp, np->input[0], T))
		return NPU_OK;
	for (int64_t i = 0; i < N + M; i++)
		if (declared_dim(gp, np->input[1 + i], 0) != B)
			return NPU_OK;
	node_base(np, "Scan", idx, base, sizeof(base));
	snprintf(nm, sizeof(nm), "%s/axis0", base);
	if (opset >= 13)
		st = add_i64(gp, nm, &zero, 1);
	for (int64_t e = 0; !st && e < B; e++) {
		Onnx__NodeProto *c = copy_node(np);
		char en[420], ix[420];
		bool ok = true, one = false;

		if (!c)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		snprintf(ix, sizeof(ix), "%s/b%lld", base, (long long)e);
		st = add_i64(gp, ix, &e, 0);
		/* Element e's inputs: Gathers at e along the batch axis. */
		for (int64_t i = 0; !st && ok && i < N + M; i++) {
			Onnx__NodeProto *g = NULL;

			snprintf(en, sizeof(en), "%s/b%lld/in%lld", base, (long long)e, (long long)i);
			st = add_node_p(o, "Gather", en, (const char *[]){ np->input[1 + i], ix }, 2,
					en, &g);
			if (!st)
				st = set_ints(g, "axis", &zero, 0);
			if (!st && i >= N)
				st = declare_element(gp, np->input[1 + i], en, &ok);
			free(c->input[i]);
			c->input[i] = strdup(en);
		}
		for (int64_t i = 0; !st && i < N + K; i++) {
			snprintf(en, sizeof(en), "%s/b%lld/out%lld", base, (long long)e, (long long)i);
			free(c->output[i]);
			c->output[i] = strdup(en);
		}
		/* Named per element: the unrolled copies' names must not collide. */
		free(c->name);
		c->name = strdup(ix);
		if (!c->name)
			st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		/* The opset-9 form: no sequence_lens, directions by their new name. */
		free(c->input[N + M]);
		c->n_input = (size_t)(N + M);
		c->n_output = (size_t)(N + K);
		for (size_t a = 0; a < c->n_attribute; a++)
			if (c->attribute[a]->name && !strcmp(c->attribute[a]->name, "directions")) {
				free(c->attribute[a]->name);
				c->attribute[a]->name = strdup("scan_input_directions");
			}
		if (!st && ok)
			st = unroll_scan(gp, c, idx, o, 9, depth, &one);
		if (!one)
			onnx__node_proto__free_unpacked(c, NULL);
		if (!st && (!ok || !one))
			return NPU_OK;	/* the Gathers above are dead; the Scan stays whole */
	}
	/* Every result back at axis 0 of its element, Concatenated over the batch. */
	for (int64_t i = 0; !st && i < N + K; i++) {
		const char **parts;
		Onnx__NodeProto *c = NULL;

		if (!np->output[i][0])
			continue;
		parts = calloc((size_t)B, sizeof(*parts));
		if (!parts)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		for (int64_t e = 0; !st && e < B; e++) {
			Onnx__NodeProto *u = NULL;
			char src[420], ax[420];

			snprintf(src, sizeof(src), "%s/b%lld/out%lld", base, (long long)e, (long long)i);
			snprintf(nm, sizeof(nm), "%s/b%lld/batch%lld", base, (long long)e, (long long)i);
			snprintf(ax, sizeof(ax), "%s/axis0", base);
			st = add_node_p(o, "Unsqueeze", nm, (const char *[]){ src, ax },
					opset >= 13 ? 2 : 1, nm, &u);
			if (!st && opset < 13)
				st = set_ints(u, "axes", &zero, 1);
			parts[e] = u ? u->output[0] : NULL;
		}
		snprintf(nm, sizeof(nm), "%s/batch%lld", base, (long long)i);
		if (!st)
			st = add_node_p(o, "Concat", nm, parts, (size_t)B, np->output[i], &c);
		if (!st)
			st = set_ints(c, "axis", &zero, 0);
		free(parts);
	}
	return replaced(np, st, done);
}

/* ---- Loop, unrolled ---- */

/* The int64 value of one-element tensor proto @t into *@v; false if it is not that. */
static bool i64_value(const Onnx__TensorProto *t, int64_t *v)
{
	size_t n = 1;

	for (size_t d = 0; d < t->n_dims; d++)
		n *= (size_t)t->dims[d];
	if (t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT64 || n != 1 || t->data_location)
		return false;
	if (t->has_raw_data && t->raw_data.len == 8) {
		uint64_t u = 0;

		for (int i = 7; i >= 0; i--)
			u = u << 8 | t->raw_data.data[i];
		*v = (int64_t)u;
		return true;
	}
	if (t->n_int64_data == 1) {
		*v = t->int64_data[0];
		return true;
	}
	return false;
}

/* Tensor @name of @gp as an initializer or a Constant node of @o (or @gp's nodes); NULL if neither. */
static const Onnx__TensorProto *const_proto(const Onnx__GraphProto *gp, const struct nodes *o,
					    const char *name)
{
	const Onnx__TensorProto *t = find_init(gp, name);

	if (!t && !constant_node(o->v, o->n, name, &t))
		constant_node(gp->node, gp->n_node, name, &t);
	return t;
}

/*
 * Body @b leaves the condition as it came (its cond output is its cond
 * input, an Identity of it, or a constant true).
 */
static bool keeps_cond(const Onnx__GraphProto *b)
{
	const char *in = b->input[1]->name, *out = b->output[0]->name;
	const Onnx__TensorProto *t;

	if (!in || !out)
		return false;
	if (!strcmp(in, out))
		return true;
	for (size_t i = 0; i < b->n_node; i++) {
		const Onnx__NodeProto *np = b->node[i];

		if (np->n_output == 1 && !strcmp(np->output[0], out))
			return np->op_type && !strcmp(np->op_type, "Identity") && np->n_input == 1 &&
			       !strcmp(np->input[0], in);
	}
	t = const_proto(b, &(struct nodes){ 0 }, out);
	return t && bool_value(t) == 1;
}

/* A bool initializer @name holding true. */
static npu_status add_true(Onnx__GraphProto *gp, const char *name)
{
	Onnx__TensorProto *t = new_tensor(name, ONNX__TENSOR_PROTO__DATA_TYPE__BOOL);

	if (!t)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	t->n_int32_data = 1;
	t->int32_data = malloc(sizeof(int32_t));
	if (!t->int32_data) {
		onnx__tensor_proto__free_unpacked(t, NULL);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	t->int32_data[0] = 1;
	return add_init(gp, t);
}

/*
 * Loop node @np (index @idx) unrolled when its trip count is a constant
 * from 1 to MAX_UNROLL (the body no larger than unroll_scan allows), its
 * condition absent or a constant true and its body leaves the condition
 * as it came: the body copied M times under "<loop>/<t>/", iter_num a
 * constant t, cond a constant true, the carried values chained from copy
 * to copy, the final ones through Identity, each scan output the copies'
 * slices Unsqueezed and concatenated on axis 0.  No host step: the copies
 * run as plain steps.  *@done false: not such a Loop.
 */
static npu_status unroll_loop(Onnx__GraphProto *gp, Onnx__NodeProto *np, size_t idx,
			      struct nodes *o, int opset, bool *done)
{
	Onnx__GraphProto *b = branch(np, "body");
	const Onnx__TensorProto *mt = np->n_input >= 2 && np->input[0][0] ?
				      const_proto(gp, o, np->input[0]) : NULL;
	const Onnx__TensorProto *ct = np->n_input >= 2 && np->input[1][0] ?
				      const_proto(gp, o, np->input[1]) : NULL;
	int64_t M, N, K;
	char base[200], truen[420];
	char **to = NULL;
	struct carry c = { 0 };
	npu_status st = NPU_OK;

	*done = false;
	if (!b || !mt || !i64_value(mt, &M) || M < 1 || M > MAX_UNROLL ||
	    (np->input[1][0] && (!ct || bool_value(ct) != 1)))
		return NPU_OK;
	N = (int64_t)np->n_input - 2;
	K = (int64_t)b->n_output - 1 - N;
	if (has_subgraph(b) || (int64_t)b->n_input != N + 2 || K < 0 ||
	    (int64_t)np->n_output != N + K || !keeps_cond(b) ||
	    (uint64_t)M * (b->n_node + b->n_initializer + 1) > MAX_UNROLL_NODES)
		return NPU_OK;
	node_base(np, "Loop", idx, base, sizeof(base));
	snprintf(truen, sizeof(truen), "%s/true", base);
	to = calloc((size_t)(N + 2) + 1, sizeof(*to));
	if (!to)
		st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	if (!st)
		st = carry_init(&c, np->input + 2, N, K, M);
	if (!st)
		st = add_true(gp, truen);
	for (int64_t t = 0; !st && t < M; t++) {
		char prefix[300], itn[420];

		snprintf(prefix, sizeof(prefix), "%s/%lld/", base, (long long)t);
		snprintf(itn, sizeof(itn), "%siter", prefix);
		st = add_i64(gp, itn, &t, 0);
		to[0] = itn;
		to[1] = truen;
		for (int64_t i = 0; i < N; i++)
			to[2 + i] = c.state[i];
		if (!st)
			st = copy_body(gp, b, to, prefix, o);
		/* This iteration's carried values and scan slices (the condition stays true). */
		if (!st)
			st = carry_take(&c, b, 1, to, prefix, t);
	}
	if (!st)
		st = carry_finish(&c, gp, o, np, base, opset);
	carry_free(&c);
	free(to);
	return replaced(np, st, done);
}

/* ---- Loop, as host-side control flow ---- */

/*
 * Loop node @np (index @idx): its body's nodes and initializers copied into
 * @o and @gp under "<loop>/body/", between an npu.LoopBegin and an
 * npu.LoopEnd (npu_onnx_if.h) that compile/npu_control.c makes control
 * steps: the body runs as a step range the host repeats.  The body's
 * inputs become LoopBegin's outputs; a name the body reads without
 * defining it is the outer scope's, as ONNX says.  *@done false: left
 * whole (refused later as Loop).
 */
static npu_status inline_loop(Onnx__GraphProto *gp, Onnx__NodeProto *np, size_t idx,
			      struct nodes *o, int opset, int depth, bool *done)
{
	Onnx__GraphProto *b = branch(np, "body");
	char base[200], prefix[240], nm[400];
	char **to = NULL;
	const char **bin = NULL, **ein = NULL;
	int64_t N, K, *lens = NULL;
	Onnx__NodeProto *e = NULL;
	npu_status st = NPU_OK;

	*done = false;
	if (!b || np->n_input < 2 || (st = npu_onnx_flatten_if(b, opset, depth + 1)))
		return st;
	/* A constant trip count that nothing stops early: copies of the body. */
	if ((st = unroll_loop(gp, np, idx, o, opset, done)) || *done)
		return st;
	N = (int64_t)np->n_input - 2;
	K = (int64_t)b->n_output - 1 - N;
	if (has_subgraph(b) || (int64_t)b->n_input != N + 2 || K < 0 ||
	    (int64_t)np->n_output != N + K)
		return NPU_OK;
	node_base(np, "Loop", idx, base, sizeof(base));
	snprintf(prefix, sizeof(prefix), "%s/body/", base);
	to = calloc((size_t)(N + 2) + 1, sizeof(*to));
	bin = calloc((size_t)(N + 2) + 1, sizeof(*bin));
	ein = calloc((size_t)(4 + 2 * N + K), sizeof(*ein));
	lens = calloc((size_t)K + 1, sizeof(*lens));
	if (!to || !bin || !ein || !lens)
		st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	/* The body's inputs: LoopBegin's outputs, renamed into the loop's scope. */
	for (int64_t k = 0; !st && k < N + 2; k++) {
		const char *in = b->input[k]->name ? b->input[k]->name : "";

		to[k] = malloc(strlen(prefix) + strlen(in) + 1);
		if (!to[k])
			st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		else
			sprintf(to[k], "%s%s", prefix, in);
	}
	if (!st) {
		Onnx__NodeProto *bn = NULL;

		for (int64_t k = 0; k < N + 2; k++)
			bin[k] = np->input[k];
		snprintf(nm, sizeof(nm), "%s/begin", base);
		st = add_node_p(o, NPU_OP_LOOP_BEGIN, nm, bin, (size_t)(N + 2), to[0], &bn);
		/* add_node_p makes one output: the rest are the carried values. */
		if (!st) {
			char **outs = realloc(bn->output, (size_t)(N + 2) * sizeof(char *));

			if (!outs)
				return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
			bn->output = outs;
			for (int64_t k = 1; k < N + 2; k++) {
				outs[k] = strdup(to[k]);
				if (!outs[k])
					return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
				bn->n_output++;
			}
		}
	}
	if (!st)
		st = copy_body(gp, b, to, prefix, o);
	/* LoopEnd(M, iter_num, cond, v..., cond_out, v_out..., scan_out...). */
	for (int64_t k = 0; !st && k < 1 + N + K; k++) {
		char *out = NULL;

		st = body_output(b, (size_t)k, to, prefix, &out);
		/* Kept by the copy below; freed with this list. */
		ein[3 + N + k] = out;
	}
	if (!st) {
		ein[0] = np->input[0];
		for (int64_t k = 0; k < N + 2; k++)
			ein[1 + k] = to[k];
		snprintf(nm, sizeof(nm), "%s/end", base);
		st = add_node_p(o, NPU_OP_LOOP_END, nm, ein, (size_t)(4 + 2 * N + K),
				np->n_output ? np->output[0] : "", &e);
	}
	if (!st) {
		char **outs = realloc(e->output, (size_t)(N + K + 1) * sizeof(char *));

		if (!outs)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		e->output = outs;
		e->n_output = np->n_output;
		for (size_t k = 1; k < np->n_output; k++)
			if (!(outs[k] = strdup(np->output[k])))
				return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		/*
		 * A scan output's length: the trip count when constant (shape
		 * inference), else the graph's declaration of the Loop output.
		 */
		for (int64_t k = 0; k < K; k++)
			lens[k] = declared_dim(gp, np->output[N + k], 0);
		st = set_ints(e, NPU_LOOP_N, &N, 0);
		if (!st)
			st = set_ints(e, NPU_LOOP_K, &K, 0);
		if (!st && K)
			st = set_ints(e, NPU_LOOP_SCAN_LEN, lens, (size_t)K);
	}
	for (int64_t k = 0; to && k < N + 2; k++)
		free(to[k]);
	for (int64_t k = 0; ein && k < 1 + N + K; k++)
		free((char *)ein[3 + N + k]);
	free(to);
	free(bin);
	free(ein);
	free(lens);
	return replaced(np, st, done);
}

npu_status npu_onnx_flatten_if(Onnx__GraphProto *gp, int opset, int depth)
{
	struct nodes o = { 0 };
	npu_status st = NPU_OK;

	if (depth > 32)
		return npu_fail(NPU_ERR_UNSUPPORTED, "If nodes nested more than 32 deep");
	for (size_t i = 0; !st && i < gp->n_node; i++) {
		Onnx__NodeProto *np = gp->node[i];
		bool done = false;

		if (np->op_type && !strcmp(np->op_type, "If") && default_domain(np->domain))
			st = inline_if(gp, np, i, &o, opset, depth, &done);
		else if (np->op_type && !strcmp(np->op_type, "Scan") && default_domain(np->domain) &&
			 opset >= 9)
			st = unroll_scan(gp, np, i, &o, opset, depth, &done);
		else if (np->op_type && !strcmp(np->op_type, "Scan") && default_domain(np->domain) &&
			 opset == 8)
			st = unroll_scan8(gp, np, i, &o, opset, depth, &done);
		else if (np->op_type && !strcmp(np->op_type, "Loop") && default_domain(np->domain) &&
			 opset >= 11)
			st = inline_loop(gp, np, i, &o, opset, depth, &done);
		if (!st && !done)
			st = push(&o, np);
	}
	if (st) {
		/* Nodes already moved belong to o now; the rest to gp. */
		for (size_t i = 0; i < o.n; i++) {
			bool in_gp = false;

			for (size_t k = 0; k < gp->n_node && !in_gp; k++)
				in_gp = gp->node[k] == o.v[i];
			if (!in_gp)
				onnx__node_proto__free_unpacked(o.v[i], NULL);
		}
		free(o.v);
		return st;
	}
	free(gp->node);
	gp->node = o.v;
	gp->n_node = o.n;
	return NPU_OK;
}
