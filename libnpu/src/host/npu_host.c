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
static const struct npu_host_op host_ops[] = {
	{ "Det", 11, npu_host_det_accepts, npu_host_det },
	{ "Mod", 10, npu_host_mod_accepts, npu_host_mod },
	{ "OneHot", 9, npu_host_onehot_accepts, npu_host_onehot },
	{ "RoiAlign", 10, npu_host_roialign_accepts, npu_host_roialign },
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

static void to_buf(const struct npu_host_tensor *t, void *data, struct npu_host_buf *b)
{
	memset(b, 0, sizeof(*b));
	if (t->seg == NPU_HOST_SEG)
		return;
	b->dtype = (npu_dtype)t->dtype;
	b->rank = t->rank;
	memcpy(b->dims, t->dims, sizeof(b->dims));
	b->numel = 1;
	for (int d = 0; d < t->rank; d++)
		b->numel *= (size_t)t->dims[d];
	b->data = data;
}

npu_status npu_host_run(const struct npu_host_step *h, void *const *in, void *const *out)
{
	struct npu_host_buf bin[64], bout[64];
	const struct npu_host_op *op = npu_host_op_get(h->op, h->opset);
	npu_status st;

	if (!op)
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"host step %s: this libnpu has no host implementation of operator '%s' at opset %d: recompile the model with this libnpu",
				h->node, h->op, h->opset);
	for (uint32_t i = 0; i < h->ninputs; i++)
		to_buf(&h->tensors[i], in[i], &bin[i]);
	for (uint32_t i = 0; i < h->noutputs; i++)
		to_buf(&h->tensors[h->ninputs + i], out[i], &bout[i]);
	st = op->run(h, bin, bout);
	if (st) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", npu_last_error());
		return npu_fail(st, "host step %s (%s): %s", h->node, h->op, msg);
	}
	return NPU_OK;
}
