// SPDX-License-Identifier: MIT
/*
 * Compress on the host (issue 17): the slices of X along axis (or its
 * flattened elements without one) whose entry of condition is true; a
 * condition shorter than the axis leaves the rest out.  How many are kept
 * is known only at run time.
 */
#include <string.h>

#include "host/npu_host.h"

const char *npu_host_compress_accepts(const npu_ir_graph *g, const npu_ir_node *n)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *c = npu_ir_input(g, n, 1);

	if (!x || !c || !npu_dtype_size(x->dtype) || !npu_host_dtype_ok(c->dtype))
		return "only a bool or numeric condition is";
	return NULL;
}

npu_status npu_host_compress(const struct npu_host_step *h, const struct npu_host_buf *in,
			     struct npu_host_buf *out)
{
	const struct npu_host_buf *x = &in[0], *c = &in[1];
	bool flat = !npu_host_attr_find(h, "axis");
	int64_t axis = npu_host_attr_int(h, "axis", 0), len, outer = 1, inner = 1, kept = 0;
	int64_t dims[NPU_MAX_RANK];
	size_t es = npu_dtype_size(x->dtype);
	uint8_t *o = out[0].data;
	npu_status st;

	if (axis < 0)
		axis += x->rank;
	if (!flat && (axis < 0 || axis >= x->rank))
		return npu_fail(NPU_ERR_SHAPE, "axis %lld is outside the input's rank %d",
				(long long)npu_host_attr_int(h, "axis", 0), x->rank);
	len = flat ? (int64_t)x->numel : x->dims[axis];
	for (int d = 0; !flat && d < x->rank; d++) {
		if (d < axis)
			outer *= x->dims[d];
		else if (d > axis)
			inner *= x->dims[d];
	}
	for (int64_t i = 0; i < len && i < (int64_t)c->numel; i++)
		kept += npu_host_get(c, (size_t)i) != 0;
	if (flat) {
		st = npu_host_shape(&out[0], 1, &kept);
	} else {
		memcpy(dims, x->dims, sizeof(dims));
		dims[axis] = kept;
		st = npu_host_shape(&out[0], x->rank, dims);
	}
	if (st)
		return st;
	for (int64_t b = 0; b < outer; b++)
		for (int64_t i = 0; i < len && i < (int64_t)c->numel; i++) {
			if (npu_host_get(c, (size_t)i) == 0)
				continue;
			memcpy(o, (const uint8_t *)x->data + (size_t)((b * len + i) * inner) * es,
			       (size_t)inner * es);
			o += (size_t)inner * es;
		}
	return NPU_OK;
}
