// SPDX-License-Identifier: MIT
/*
 * The CPU fallback's operator table and the call of one host step
 * (npu_host.h): device buffers in, the operator's C reference, device
 * buffers out.
 */
#include <stdio.h>
#include <string.h>

#include "host/npu_host.h"

/* Sorted by name, one entry per operator (an opset range when one needs it). */
/*
 * Sorted by name, one entry per operator (an opset range when one needs it).
 * .dynamic ones compute their outputs' shapes (issue 17): the operators
 * of run-time output size and what typically follows them.
 */
static const struct npu_host_op host_ops[] = {
	{ "Abs", 6, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "Add", 7, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "And", 7, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "ArgMax", 1, npu_host_reduce_accepts, npu_host_reduce, true },
	{ "ArgMin", 1, npu_host_reduce_accepts, npu_host_reduce, true },
	{ "Cast", 6, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "Ceil", 6, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "Compress", 9, npu_host_compress_accepts, npu_host_compress, true },
	{ "Concat", 4, npu_host_move_accepts, npu_host_move, true },
	{ "Det", 11, npu_host_det_accepts, npu_host_det, false },
	{ "Div", 7, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "Equal", 7, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "Exp", 6, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "Expand", 8, npu_host_move_accepts, npu_host_move, true },
	{ "Flatten", 1, npu_host_move_accepts, npu_host_move, true },
	{ "Floor", 6, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "Gather", 1, npu_host_move_accepts, npu_host_move, true },
	{ "GatherND", 11, npu_host_move_accepts, npu_host_move, true },
	{ "Greater", 7, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "GreaterOrEqual", 12, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "Identity", 1, npu_host_move_accepts, npu_host_move, true },
	{ "Less", 7, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "LessOrEqual", 12, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "Log", 6, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "Max", 8, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "Min", 8, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "Mod", 10, npu_host_mod_accepts, npu_host_mod, true },
	{ "Mul", 7, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "Neg", 6, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "NonMaxSuppression", 10, npu_host_nms_accepts, npu_host_nms, true },
	{ "NonZero", 9, npu_host_nonzero_accepts, npu_host_nonzero, true },
	{ "Not", 1, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "OneHot", 9, npu_host_onehot_accepts, npu_host_onehot, false },
	{ "Or", 7, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "Pow", 7, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "Reciprocal", 6, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "ReduceMax", 1, npu_host_reduce_accepts, npu_host_reduce, true },
	{ "ReduceMean", 1, npu_host_reduce_accepts, npu_host_reduce, true },
	{ "ReduceMin", 1, npu_host_reduce_accepts, npu_host_reduce, true },
	{ "ReduceProd", 1, npu_host_reduce_accepts, npu_host_reduce, true },
	{ "ReduceSum", 1, npu_host_reduce_accepts, npu_host_reduce, true },
	{ "Relu", 6, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "Reshape", 5, npu_host_move_accepts, npu_host_move, true },
	{ "RoiAlign", 10, npu_host_roialign_accepts, npu_host_roialign, false },
	{ "Round", 11, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "Shape", 1, npu_host_move_accepts, npu_host_move, true },
	{ "Sigmoid", 6, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "Size", 1, npu_host_move_accepts, npu_host_move, true },
	{ "Slice", 1, npu_host_move_accepts, npu_host_move, true },
	{ "Sqrt", 6, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "Squeeze", 1, npu_host_move_accepts, npu_host_move, true },
	{ "Sub", 7, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "Tanh", 6, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "TopK", 1, npu_host_topk_accepts, npu_host_topk, true },
	{ "Transpose", 1, npu_host_move_accepts, npu_host_move, true },
	{ "Unique", 11, npu_host_unique_accepts, npu_host_unique, true },
	{ "Unsqueeze", 1, npu_host_move_accepts, npu_host_move, true },
	{ "Where", 9, npu_host_eltwise_accepts, npu_host_eltwise, true },
	{ "Xor", 7, npu_host_eltwise_accepts, npu_host_eltwise, true },
};

const struct npu_host_op *npu_host_op_get(const char *name, int opset)
{
	for (size_t i = 0; i < sizeof(host_ops) / sizeof(host_ops[0]); i++)
		if (!strcmp(host_ops[i].name, name) && opset >= host_ops[i].since)
			return &host_ops[i];
	return NULL;
}

const struct npu_host_attr *npu_host_attr_find(const struct npu_host_step *h, const char *name)
{
	for (uint32_t i = 0; i < h->nattrs; i++)
		if (!strcmp(h->attrs[i].name, name))
			return &h->attrs[i];
	return NULL;
}

int64_t npu_host_attr_int(const struct npu_host_step *h, const char *name, int64_t def)
{
	const struct npu_host_attr *a = npu_host_attr_find(h, name);

	return a && a->type == NPU_IR_ATTR_INT ? a->i : def;
}

float npu_host_attr_float(const struct npu_host_step *h, const char *name, float def)
{
	const struct npu_host_attr *a = npu_host_attr_find(h, name);

	return a && a->type == NPU_IR_ATTR_FLOAT ? a->f : def;
}

const char *npu_host_attr_string(const struct npu_host_step *h, const char *name, const char *def)
{
	const struct npu_host_attr *a = npu_host_attr_find(h, name);

	return a && a->type == NPU_IR_ATTR_STRING && a->s ? a->s : def;
}

bool npu_host_dtype_ok(npu_dtype dt)
{
	return dt == NPU_DTYPE_FLOAT32 || dt == NPU_DTYPE_INT32 || dt == NPU_DTYPE_INT64 || dt == NPU_DTYPE_INT8 ||
	       dt == NPU_DTYPE_UINT8 || dt == NPU_DTYPE_BOOL;
}

double npu_host_get(const struct npu_host_buf *b, size_t i)
{
	switch (b->dtype) {
	case NPU_DTYPE_FLOAT32: return ((const float *)b->data)[i];
	case NPU_DTYPE_INT32: return ((const int32_t *)b->data)[i];
	case NPU_DTYPE_INT64: return (double)((const int64_t *)b->data)[i];
	case NPU_DTYPE_INT8: return ((const int8_t *)b->data)[i];
	default: return ((const uint8_t *)b->data)[i];
	}
}

int64_t npu_host_get_int(const struct npu_host_buf *b, size_t i)
{
	double v;

	switch (b->dtype) {
	case NPU_DTYPE_INT64: return ((const int64_t *)b->data)[i];
	case NPU_DTYPE_INT32: return ((const int32_t *)b->data)[i];
	default:
		v = npu_host_get(b, i);
		if (!(v > -9.2e18))
			return v != v ? 0 : INT64_MIN;
		return v < 9.2e18 ? (int64_t)v : INT64_MAX;
	}
}

void npu_host_set(struct npu_host_buf *b, size_t i, double v)
{
	switch (b->dtype) {
	case NPU_DTYPE_FLOAT32: ((float *)b->data)[i] = (float)v; break;
	case NPU_DTYPE_INT32: ((int32_t *)b->data)[i] = (int32_t)v; break;
	case NPU_DTYPE_INT64: ((int64_t *)b->data)[i] = (int64_t)v; break;
	case NPU_DTYPE_INT8: ((int8_t *)b->data)[i] = (int8_t)v; break;
	case NPU_DTYPE_BOOL: ((uint8_t *)b->data)[i] = v != 0; break;
	default: ((uint8_t *)b->data)[i] = (uint8_t)v; break;
	}
}

size_t npu_host_bcast(const struct npu_host_buf *in, const struct npu_host_buf *out, size_t i)
{
	size_t at = 0, stride = 1;

	for (int d = out->rank - 1, k = in->rank - 1; d >= 0; d--, k--) {
		size_t c = (size_t)(i % (size_t)out->dims[d]);

		i /= (size_t)out->dims[d];
		if (k < 0)
			continue;
		if (in->dims[k] != 1)
			at += c * stride;
		stride *= (size_t)in->dims[k];
	}
	return at;
}

static size_t numel_of(int rank, const int64_t *dims)
{
	size_t n = 1;

	for (int d = 0; d < rank; d++)
		n *= (size_t)dims[d];
	return n;
}

npu_status npu_host_shape(struct npu_host_buf *b, int rank, const int64_t *dims)
{
	size_t n = numel_of(rank, dims);

	if (rank < 0 || rank > NPU_MAX_RANK || n > b->cap)
		return npu_fail(NPU_ERR_INTERNAL,
				"an output of %zu elements does not fit its buffer of %zu (the compiler's bound)",
				n, b->cap);
	b->rank = rank;
	memcpy(b->dims, dims, (size_t)rank * sizeof(*dims));
	b->numel = n;
	return NPU_OK;
}

/* Tensor @t at @data; a run-time size (t->dyn) read from @shapes when @actual. */
static npu_status to_buf(const struct npu_host_tensor *t, void *data, struct npu_host_buf *b,
			 const struct npu_dyn_shape *shapes, bool actual)
{
	memset(b, 0, sizeof(*b));
	if (t->seg == NPU_HOST_SEG)
		return NPU_OK;
	b->dtype = (npu_dtype)t->dtype;
	b->rank = t->rank;
	memcpy(b->dims, t->dims, sizeof(b->dims));
	b->numel = b->cap = numel_of(t->rank, t->dims);
	b->data = data;
	if (!t->dyn || !actual)
		return NPU_OK;
	if (shapes[t->dyn - 1].rank < 0)
		return npu_fail(NPU_ERR_INTERNAL, "an input's run-time shape was not computed");
	return npu_host_shape(b, shapes[t->dyn - 1].rank, shapes[t->dyn - 1].dims);
}

npu_status npu_host_run(const struct npu_host_step *h, void *const *in, void *const *out,
			struct npu_dyn_shape *shapes)
{
	struct npu_host_buf bin[64], bout[64];
	const struct npu_host_op *op = npu_host_op_get(h->op, h->opset);
	npu_status st = NPU_OK;

	if (!op)
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"host step %s: this libnpu has no host implementation of operator '%s' at opset %d: recompile the model with this libnpu",
				h->node, h->op, h->opset);
	for (uint32_t i = 0; i < h->ninputs && !st; i++)
		st = to_buf(&h->tensors[i], in[i], &bin[i], shapes, true);
	for (uint32_t i = 0; i < h->noutputs && !st; i++)
		st = to_buf(&h->tensors[h->ninputs + i], out[i], &bout[i], shapes, false);
	if (!st && !op->dynamic)
		for (uint32_t i = 0; i < h->ninputs + h->noutputs && !st; i++)
			if (h->tensors[i].dyn)
				st = npu_fail(NPU_ERR_UNSUPPORTED,
					      "this libnpu's %s takes static shapes only: recompile the model with this libnpu",
					      h->op);
	if (!st)
		st = op->run(h, bin, bout);
	for (uint32_t i = 0; i < h->noutputs && !st; i++) {
		const struct npu_host_tensor *t = &h->tensors[h->ninputs + i];

		if (!t->dyn || t->seg == NPU_HOST_SEG)
			continue;
		shapes[t->dyn - 1].rank = bout[i].rank;
		memcpy(shapes[t->dyn - 1].dims, bout[i].dims, sizeof(bout[i].dims));
	}
	if (st) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", npu_last_error());
		return npu_fail(st, "host step %s (%s): %s", h->node, h->op, msg);
	}
	return NPU_OK;
}
