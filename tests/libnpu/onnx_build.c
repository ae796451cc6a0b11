// SPDX-License-Identifier: MIT
/* Tests: the ONNX model builder (onnx_build.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_build.h"

#define MAXN 64

struct onnxb {
	Onnx__ModelProto model;
	Onnx__GraphProto graph;
	Onnx__OperatorSetIdProto *opsets[8];
	Onnx__NodeProto *nodes[MAXN];
	Onnx__TensorProto *inits[MAXN];
	Onnx__ValueInfoProto *ins[MAXN], *outs[MAXN], *vis[MAXN];
	void **allocs;
	size_t nallocs, cap;
};

static void *b_alloc(onnxb *b, size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p)
		abort();
	if (b->nallocs == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 64;
		b->allocs = realloc(b->allocs, b->cap * sizeof(void *));
		if (!b->allocs)
			abort();
	}
	b->allocs[b->nallocs++] = p;
	return p;
}

static char *b_str(onnxb *b, const char *s)
{
	char *d = b_alloc(b, strlen(s) + 1);

	strcpy(d, s);
	return d;
}

onnxb *onnxb_new(int64_t ir_version, int64_t opset)
{
	onnxb *b = calloc(1, sizeof(*b));

	if (!b)
		abort();
	onnx__model_proto__init(&b->model);
	onnx__graph_proto__init(&b->graph);
	b->model.has_ir_version = 1;
	b->model.ir_version = ir_version;
	b->model.producer_name = b_str(b, "npu-test");
	b->model.graph = &b->graph;
	b->model.opset_import = b->opsets;
	b->graph.name = b_str(b, "test");
	b->graph.node = b->nodes;
	b->graph.initializer = b->inits;
	b->graph.input = b->ins;
	b->graph.output = b->outs;
	b->graph.value_info = b->vis;
	if (opset > 0)
		onnxb_opset(b, "", opset);
	return b;
}

void onnxb_free(onnxb *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nallocs; i++)
		free(b->allocs[i]);
	free(b->allocs);
	free(b);
}

Onnx__ModelProto *onnxb_model(onnxb *b)
{
	return &b->model;
}

void onnxb_opset(onnxb *b, const char *domain, int64_t version)
{
	Onnx__OperatorSetIdProto *o = b_alloc(b, sizeof(*o));

	onnx__operator_set_id_proto__init(o);
	o->domain = b_str(b, domain);
	o->has_version = 1;
	o->version = version;
	b->opsets[b->model.n_opset_import++] = o;
}

static Onnx__ValueInfoProto *value(onnxb *b, const char *name, int elem, int rank,
				   const int64_t *dims)
{
	Onnx__ValueInfoProto *v = b_alloc(b, sizeof(*v));
	Onnx__TypeProto *tp = b_alloc(b, sizeof(*tp));
	Onnx__TypeProto__Tensor *tt = b_alloc(b, sizeof(*tt));

	onnx__value_info_proto__init(v);
	onnx__type_proto__init(tp);
	onnx__type_proto__tensor__init(tt);
	v->name = b_str(b, name);
	v->type = tp;
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	if (elem) {
		tt->has_elem_type = 1;
		tt->elem_type = elem;
	}
	if (rank >= 0) {
		Onnx__TensorShapeProto *sh = b_alloc(b, sizeof(*sh));

		onnx__tensor_shape_proto__init(sh);
		sh->n_dim = (size_t)rank;
		sh->dim = b_alloc(b, (size_t)rank * sizeof(*sh->dim));
		for (int i = 0; i < rank; i++) {
			Onnx__TensorShapeProto__Dimension *d = b_alloc(b, sizeof(*d));

			onnx__tensor_shape_proto__dimension__init(d);
			if (dims[i] >= 0) {
				d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
				d->dim_value = dims[i];
			} else {
				d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
				d->dim_param = b_str(b, "N");
			}
			sh->dim[i] = d;
		}
		tt->shape = sh;
	}
	return v;
}

void onnxb_input(onnxb *b, const char *name, int elem, int rank, const int64_t *dims)
{
	b->ins[b->graph.n_input++] = value(b, name, elem, rank, dims);
}

void onnxb_output(onnxb *b, const char *name, int elem, int rank, const int64_t *dims)
{
	b->outs[b->graph.n_output++] = value(b, name, elem, rank, dims);
}

void onnxb_value_info(onnxb *b, const char *name, int elem, int rank, const int64_t *dims)
{
	b->vis[b->graph.n_value_info++] = value(b, name, elem, rank, dims);
}

static size_t elem_size(int elem)
{
	switch (elem) {
	case ONNXB_U8:
	case ONNXB_I8:
	case ONNXB_BOOL:
		return 1;
	case ONNXB_F16:
		return 2;
	case ONNXB_I64:
	case ONNXB_F64:
		return 8;
	default:
		return 4;
	}
}

Onnx__TensorProto *onnxb_tensor(onnxb *b, const char *name, int elem, int rank,
				const int64_t *dims, const void *raw, size_t bytes)
{
	Onnx__TensorProto *t = b_alloc(b, sizeof(*t));
	size_t numel = 1;

	onnx__tensor_proto__init(t);
	t->name = b_str(b, name);
	t->has_data_type = 1;
	t->data_type = elem;
	t->n_dims = (size_t)rank;
	t->dims = b_alloc(b, (size_t)rank * sizeof(int64_t));
	for (int i = 0; i < rank; i++) {
		t->dims[i] = dims[i];
		numel *= (size_t)dims[i];
	}
	if (!raw)
		bytes = numel * elem_size(elem);
	t->has_raw_data = 1;
	t->raw_data.len = bytes;
	t->raw_data.data = b_alloc(b, bytes);
	if (raw && bytes)
		memcpy(t->raw_data.data, raw, bytes);
	return t;
}

Onnx__TensorProto *onnxb_init(onnxb *b, const char *name, int elem, int rank,
			      const int64_t *dims, const void *raw, size_t bytes)
{
	Onnx__TensorProto *t = onnxb_tensor(b, name, elem, rank, dims, raw, bytes);

	b->inits[b->graph.n_initializer++] = t;
	return t;
}

Onnx__TensorProto *onnxb_init_f32(onnxb *b, const char *name, int rank, const int64_t *dims,
				  const float *vals)
{
	size_t numel = 1;

	for (int i = 0; i < rank; i++)
		numel *= (size_t)dims[i];
	return onnxb_init(b, name, ONNXB_F32, rank, dims, vals, vals ? numel * 4 : 0);
}

Onnx__TensorProto *onnxb_init_i64(onnxb *b, const char *name, int n, const int64_t *vals)
{
	int64_t dims[1] = { n };

	return onnxb_init(b, name, ONNXB_I64, 1, dims, vals, (size_t)n * 8);
}

static size_t split(onnxb *b, const char *list, char ***out)
{
	size_t n = 1, k = 0;
	const char *p;
	char **arr;

	if (!list || !list[0]) {
		*out = NULL;
		return 0;
	}
	for (p = list; *p; p++)
		n += *p == ',';
	arr = b_alloc(b, n * sizeof(char *));
	for (p = list;; p++) {
		const char *q = strchr(p, ',');
		size_t len = q ? (size_t)(q - p) : strlen(p);
		char *s = b_alloc(b, len + 1);

		memcpy(s, p, len);
		arr[k++] = s;
		if (!q)
			break;
		p = q;
	}
	*out = arr;
	return n;
}

Onnx__NodeProto *onnxb_node(onnxb *b, const char *op, const char *name, const char *inputs,
			    const char *outputs)
{
	Onnx__NodeProto *n = b_alloc(b, sizeof(*n));

	onnx__node_proto__init(n);
	n->op_type = b_str(b, op);
	if (name)
		n->name = b_str(b, name);
	n->n_input = split(b, inputs, &n->input);
	n->n_output = split(b, outputs, &n->output);
	n->attribute = b_alloc(b, 32 * sizeof(*n->attribute));
	b->nodes[b->graph.n_node++] = n;
	return n;
}

static Onnx__AttributeProto *attr(onnxb *b, Onnx__NodeProto *n, const char *name,
				  Onnx__AttributeProto__AttributeType type)
{
	Onnx__AttributeProto *a = b_alloc(b, sizeof(*a));

	onnx__attribute_proto__init(a);
	a->name = b_str(b, name);
	a->has_type = 1;
	a->type = type;
	n->attribute[n->n_attribute++] = a;
	return a;
}

void onnxb_attr_i(onnxb *b, Onnx__NodeProto *n, const char *name, int64_t v)
{
	Onnx__AttributeProto *a = attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);

	a->has_i = 1;
	a->i = v;
}

void onnxb_attr_f(onnxb *b, Onnx__NodeProto *n, const char *name, float v)
{
	Onnx__AttributeProto *a = attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);

	a->has_f = 1;
	a->f = v;
}

void onnxb_attr_s(onnxb *b, Onnx__NodeProto *n, const char *name, const char *v)
{
	Onnx__AttributeProto *a = attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);

	a->has_s = 1;
	a->s.len = strlen(v);
	a->s.data = (uint8_t *)b_str(b, v);
}

void onnxb_attr_ints(onnxb *b, Onnx__NodeProto *n, const char *name, int count, const int64_t *v)
{
	Onnx__AttributeProto *a = attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);

	a->n_ints = (size_t)count;
	a->ints = b_alloc(b, (size_t)count * sizeof(int64_t));
	if (count)
		memcpy(a->ints, v, (size_t)count * sizeof(int64_t));
}

void onnxb_attr_floats(onnxb *b, Onnx__NodeProto *n, const char *name, int count, const float *v)
{
	Onnx__AttributeProto *a = attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);

	a->n_floats = (size_t)count;
	a->floats = b_alloc(b, (size_t)count * sizeof(float));
	if (count)
		memcpy(a->floats, v, (size_t)count * sizeof(float));
}

void onnxb_attr_t(onnxb *b, Onnx__NodeProto *n, const char *name, Onnx__TensorProto *t)
{
	Onnx__AttributeProto *a = attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);

	a->t = t;
}

void onnxb_attr_g(onnxb *b, Onnx__NodeProto *n, const char *name, Onnx__GraphProto *g)
{
	Onnx__AttributeProto *a = attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);

	a->g = g;
}

uint8_t *onnxb_pack(onnxb *b, size_t *len)
{
	size_t n = onnx__model_proto__get_packed_size(&b->model);
	uint8_t *buf = malloc(n ? n : 1);

	if (!buf)
		abort();
	*len = onnx__model_proto__pack(&b->model, buf);
	return buf;
}

void *npu_test_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	long n;
	void *buf;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return NULL;
	}
	buf = malloc(n ? (size_t)n : 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* ---- a small test model ---- */

#define C ONNXB_SMALL_CNN_C
#define H ONNXB_SMALL_CNN_H
#define OC 8
#define NCLS ONNXB_SMALL_CNN_CLASSES
#define D(...) ((const int64_t[]){ __VA_ARGS__ })

void onnxb_fill(float *v, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
	}
}

/*
 * conv3x3 -> relu -> conv1x1 -> add (skip from the relu) -> maxpool ->
 * transpose (a DMA-only node) -> flatten -> matmul -> softmax; outputs the
 * probabilities and the add, so a batch element has two outputs.
 */
uint8_t *onnxb_small_cnn(size_t *len)
{
	static float w1[OC * C * 9], b1[OC], w2[OC * OC], fc[OC * 6 * 6 * NCLS];
	onnxb *b = onnxb_new(8, 13);
	Onnx__NodeProto *n;
	uint8_t *buf;

	onnxb_fill(w1, sizeof(w1) / 4, 11);
	onnxb_fill(b1, OC, 12);
	onnxb_fill(w2, sizeof(w2) / 4, 13);
	onnxb_fill(fc, sizeof(fc) / 4, 14);
	onnxb_input(b, "x", ONNXB_F32, 4, D(1, C, H, H));
	onnxb_init_f32(b, "w1", 4, D(OC, C, 3, 3), w1);
	onnxb_init_f32(b, "b1", 1, D(OC), b1);
	onnxb_init_f32(b, "w2", 4, D(OC, OC, 1, 1), w2);
	onnxb_init_f32(b, "fc", 2, D(OC * 6 * 6, NCLS), fc);
	n = onnxb_node(b, "Conv", "conv1", "x,w1,b1", "c1");
	onnxb_attr_ints(b, n, "pads", 4, D(1, 1, 1, 1));
	onnxb_node(b, "Relu", "relu1", "c1", "r1");
	onnxb_node(b, "Conv", "conv2", "r1,w2", "c2");
	onnxb_node(b, "Add", "skip", "c2,r1", "s");
	n = onnxb_node(b, "MaxPool", "pool", "s", "p");
	onnxb_attr_ints(b, n, "kernel_shape", 2, D(2, 2));
	onnxb_attr_ints(b, n, "strides", 2, D(2, 2));
	n = onnxb_node(b, "Transpose", "tr", "p", "t");
	onnxb_attr_ints(b, n, "perm", 4, D(0, 1, 3, 2));
	onnxb_node(b, "Flatten", "flat", "t", "f");
	onnxb_node(b, "MatMul", "fc", "f,fc", "logits");
	onnxb_node(b, "Softmax", "softmax", "logits", "prob");
	onnxb_output(b, "prob", ONNXB_F32, 2, D(1, NCLS));
	onnxb_output(b, "s", ONNXB_F32, 4, D(1, OC, H, H));
	buf = onnxb_pack(b, len);
	onnxb_free(b);
	return buf;
}
