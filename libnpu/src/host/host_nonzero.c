// SPDX-License-Identifier: MIT
/*
 * NonZero on the host (issue 17): the coordinates of X's non-zero
 * elements, row-major, as [rank, count] (a scalar as rank 1); count is
 * known only at run time, so the output's shape is set here within the
 * bound [rank, numel] the compiler gave its buffer.
 */
#include "host/npu_host.h"

const char *npu_host_nonzero_accepts(const npu_ir_graph *g, const npu_ir_node *n)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0);

	if (!x || !npu_host_dtype_ok(x->dtype))
		return "only float32, int64, int32, int8, uint8 and bool input is";
	return NULL;
}

npu_status npu_host_nonzero(const struct npu_host_step *h, const struct npu_host_buf *in,
			    struct npu_host_buf *out)
{
	const struct npu_host_buf *x = &in[0];
	int64_t dims[2], cnt = 0, j = 0;
	npu_status st;

	(void)h;
	for (size_t i = 0; i < x->numel; i++)
		cnt += npu_host_get(x, i) != 0;
	dims[0] = x->rank ? x->rank : 1;
	dims[1] = cnt;
	if ((st = npu_host_shape(&out[0], 2, dims)))
		return st;
	for (size_t i = 0; i < x->numel; i++) {
		size_t rest = i;

		if (npu_host_get(x, i) == 0)
			continue;
		for (int d = x->rank - 1; d >= 0; d--) {
			npu_host_set(&out[0], (size_t)(d * cnt + j), (double)(rest % (size_t)x->dims[d]));
			rest /= (size_t)x->dims[d];
		}
		if (!x->rank)
			npu_host_set(&out[0], (size_t)j, 0);
		j++;
	}
	return NPU_OK;
}
