// SPDX-License-Identifier: MIT
/*
 * TopK on the host (issue 17): the K largest (or smallest) elements along
 * axis of the actual input, with their indices; equal values keep the
 * lower index first, as ONNX says.  K is input 1 read at run time (opset
 * 10 on) or the attribute k: after an operator of run-time output size
 * (the best detections of those NMS kept) it is often min(k, count),
 * computed at run time, and the compiler bounds it by the axis' bound.
 */
#include <stdlib.h>

#include "host/npu_host.h"

const char *npu_host_topk_accepts(const npu_ir_graph *g, const npu_ir_node *n)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0);

	if (!x || !npu_host_dtype_ok(x->dtype))
		return "only float32, int64, int32, int8, uint8 and bool input is";
	return NULL;
}

/* Stable merge sort of positions @v (@n) by value of @line (stride @st) of @x. */
static void sort_line(const struct npu_host_buf *x, size_t base, size_t st, bool largest,
		      int64_t *v, int64_t *tmp, int64_t n)
{
	int64_t m = n / 2, i = 0, j = m, k = 0;

	if (n < 2)
		return;
	sort_line(x, base, st, largest, v, tmp, m);
	sort_line(x, base, st, largest, v + m, tmp, n - m);
	while (i < m && j < n) {
		double a = npu_host_get(x, base + (size_t)v[i] * st);
		double b = npu_host_get(x, base + (size_t)v[j] * st);

		tmp[k++] = (largest ? b > a : b < a) ? v[j++] : v[i++];
	}
	while (i < m)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	for (int64_t q = 0; q < n; q++)
		v[q] = tmp[q];
}

npu_status npu_host_topk(const struct npu_host_step *h, const struct npu_host_buf *in,
			 struct npu_host_buf *out)
{
	const struct npu_host_buf *x = &in[0];
	int64_t axis = npu_host_attr_int(h, "axis", -1), k, len, outer = 1, inner = 1;
	int64_t d[NPU_MAX_RANK], *ord;
	bool largest = npu_host_attr_int(h, "largest", 1) != 0;
	npu_status st;

	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis >= x->rank)
		return npu_fail(NPU_ERR_SHAPE, "axis %lld is outside rank %d",
				(long long)npu_host_attr_int(h, "axis", -1), x->rank);
	k = h->ninputs > 1 && in[1].data ? npu_host_get_int(&in[1], 0) : npu_host_attr_int(h, "k", -1);
	len = x->dims[axis];
	if (k < 0 || k > len)
		return npu_fail(NPU_ERR_SHAPE, "K = %lld at run time is outside 0..%lld (the axis' size)",
				(long long)k, (long long)len);
	for (int q = 0; q < x->rank; q++) {
		d[q] = q == axis ? k : x->dims[q];
		if (q < axis)
			outer *= x->dims[q];
		else if (q > axis)
			inner *= x->dims[q];
	}
	if ((st = npu_host_shape(&out[0], x->rank, d)))
		return st;
	if (h->noutputs > 1 && out[1].data && (st = npu_host_shape(&out[1], x->rank, d)))
		return st;
	ord = malloc((size_t)(len ? len : 1) * 2 * sizeof(*ord));
	if (!ord)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			size_t base = (size_t)(o * len * inner + i);

			for (int64_t q = 0; q < len; q++)
				ord[q] = q;
			sort_line(x, base, (size_t)inner, largest, ord, ord + len, len);
			for (int64_t q = 0; q < k; q++) {
				size_t at = (size_t)((o * k + q) * inner + i);

				npu_host_set(&out[0], at, npu_host_get(x, base + (size_t)(ord[q] * inner)));
				if (h->noutputs > 1 && out[1].data)
					npu_host_set(&out[1], at, (double)ord[q]);
			}
		}
	free(ord);
	return NPU_OK;
}
