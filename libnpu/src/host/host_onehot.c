// SPDX-License-Identifier: MIT
/*
 * OneHot on the host: output[..., k, ...] (k on axis) = values[1] where
 * indices[...] == k (a negative index counts from depth), else values[0];
 * an index outside [-depth, depth) gives a row of values[0].  depth is a
 * constant (the shape rule read it: it fixes the output's shape).
 */
#include "host/npu_host.h"

const char *npu_host_onehot_accepts(const npu_ir_graph *g, const npu_ir_node *n)
{
	const npu_ir_tensor *i = npu_ir_input(g, n, 0), *v = npu_ir_input(g, n, 2);

	if (!i || !v || !npu_host_dtype_ok(i->dtype) || !npu_host_dtype_ok(v->dtype))
		return "only float32, int64, int32, int8 and uint8 indices and values are";
	return NULL;
}

npu_status npu_host_onehot(const struct npu_host_step *h, const struct npu_host_buf *in,
			   struct npu_host_buf *out)
{
	int r = out[0].rank;
	int64_t axis = npu_host_attr_int(h, "axis", -1), depth, outer = 1, inner = 1;
	double off = npu_host_get(&in[2], 0), on = npu_host_get(&in[2], 1);

	if (axis < 0)
		axis += r;
	if (axis < 0 || axis >= r)
		return npu_fail(NPU_ERR_SHAPE, "axis %lld is outside the output's rank %d",
				(long long)npu_host_attr_int(h, "axis", -1), r);
	depth = out[0].dims[axis];
	for (int d = 0; d < axis; d++)
		outer *= out[0].dims[d];
	for (int d = (int)axis + 1; d < r; d++)
		inner *= out[0].dims[d];
	for (int64_t o = 0; o < outer; o++)
		for (int64_t k = 0; k < depth; k++)
			for (int64_t i = 0; i < inner; i++) {
				int64_t at = (int64_t)npu_host_get(&in[0], (size_t)(o * inner + i));

				if (at < 0)
					at += depth;
				npu_host_set(&out[0], (size_t)((o * depth + k) * inner + i),
					     at == k ? on : off);
			}
	return NPU_OK;
}
