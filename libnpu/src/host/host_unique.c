// SPDX-License-Identifier: MIT
/*
 * Unique on the host (issue 17), as ONNX defines it: the distinct
 * elements of X (flattened, without axis) or distinct slices along axis,
 * ascending (sorted 1; slices compared element by element in row-major
 * order) or in order of first occurrence (sorted 0); indices (the first
 * occurrence of each), inverse_indices (which entry of Y each element or
 * slice of X is) and counts.  Y, indices and counts have as many entries
 * as X holds distinct values: known only at run time, within the bound
 * the compiler gave their buffers.
 */
#include <stdlib.h>
#include <string.h>

#include "host/npu_host.h"

const char *npu_host_unique_accepts(const npu_ir_graph *g, const npu_ir_node *n)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0);

	if (!x || !npu_host_dtype_ok(x->dtype))
		return "only float32, int64, int32, int8, uint8 and bool input is";
	return NULL;
}

/* X viewed as [outer, len, inner]: slice i is X[:, i, :]. */
struct uq {
	const struct npu_host_buf *x;
	int64_t outer, len, inner;
};

static int cmp_slices(const struct uq *u, int64_t a, int64_t b)
{
	for (int64_t o = 0; o < u->outer; o++)
		for (int64_t k = 0; k < u->inner; k++) {
			double va = npu_host_get(u->x, (size_t)((o * u->len + a) * u->inner + k));
			double vb = npu_host_get(u->x, (size_t)((o * u->len + b) * u->inner + k));

			if (va != vb)
				return va < vb ? -1 : 1;
		}
	return 0;
}

/* Stable merge sort of slice numbers @v (@n of them) by content, @tmp scratch. */
static void sort_slices(const struct uq *u, int64_t *v, int64_t *tmp, int64_t n)
{
	int64_t m = n / 2, i = 0, j = m, k = 0;

	if (n < 2)
		return;
	sort_slices(u, v, tmp, m);
	sort_slices(u, v + m, tmp, n - m);
	while (i < m && j < n)
		tmp[k++] = cmp_slices(u, v[j], v[i]) < 0 ? v[j++] : v[i++];
	while (i < m)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, (size_t)n * sizeof(*v));
}

/* Output @i of @h is there. */
static bool wanted(const struct npu_host_step *h, const struct npu_host_buf *out, uint32_t i)
{
	return i < h->noutputs && out[i].data;
}

npu_status npu_host_unique(const struct npu_host_step *h, const struct npu_host_buf *in,
			   struct npu_host_buf *out)
{
	const struct npu_host_buf *x = &in[0];
	bool flat = !npu_host_attr_find(h, "axis"), sorted = npu_host_attr_int(h, "sorted", 1) != 0;
	int64_t axis = npu_host_attr_int(h, "axis", 0), nu = 0, dims[NPU_MAX_RANK];
	struct uq u = { x, 1, (int64_t)x->numel, 1 };
	int64_t *ord, *tmp, *first, *count, *inv, *uid;
	size_t es = npu_dtype_size(x->dtype);
	npu_status st = NPU_OK;

	if (!flat) {
		if (axis < 0)
			axis += x->rank;
		if (axis < 0 || axis >= x->rank)
			return npu_fail(NPU_ERR_SHAPE, "axis %lld is outside the input's rank %d",
					(long long)npu_host_attr_int(h, "axis", 0), x->rank);
		u.len = x->dims[axis];
		u.outer = u.inner = 1;
		for (int d = 0; d < x->rank; d++) {
			if (d < axis)
				u.outer *= x->dims[d];
			else if (d > axis)
				u.inner *= x->dims[d];
		}
	}
	ord = calloc((size_t)(u.len ? u.len : 1) * 6, sizeof(*ord));
	if (!ord)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	tmp = ord + u.len;
	first = tmp + u.len;	/* per distinct entry: its first slice */
	count = first + u.len;
	inv = count + u.len;	/* per slice: its distinct entry */
	uid = inv + u.len;	/* per distinct entry in sorted order: its entry of Y */
	for (int64_t i = 0; i < u.len; i++)
		ord[i] = i;
	sort_slices(&u, ord, tmp, u.len);
	/* Groups of equal slices, ascending; stable, so each starts at its first. */
	for (int64_t i = 0; i < u.len; i++) {
		if (i == 0 || cmp_slices(&u, ord[i - 1], ord[i])) {
			first[nu] = ord[i];
			count[nu++] = 0;
		}
		count[nu - 1]++;
		inv[ord[i]] = nu - 1;
	}
	/* Unsorted: the groups in order of first occurrence. */
	for (int64_t g = 0; g < nu; g++)
		uid[g] = g;
	if (!sorted)
		for (int64_t g = 0; g < nu; g++) {
			int64_t r = 0;

			for (int64_t k = 0; k < nu; k++)
				r += first[k] < first[g];
			uid[g] = r;
		}
	if (wanted(h, out, 0)) {
		memcpy(dims, x->dims, sizeof(dims));
		if (flat)
			st = npu_host_shape(&out[0], 1, &nu);
		else {
			dims[axis] = nu;
			st = npu_host_shape(&out[0], x->rank, dims);
		}
		for (int64_t g = 0; !st && g < nu; g++)
			for (int64_t o = 0; o < u.outer; o++)
				memcpy((uint8_t *)out[0].data + (size_t)((o * nu + uid[g]) * u.inner) * es,
				       (const uint8_t *)x->data + (size_t)((o * u.len + first[g]) * u.inner) * es,
				       (size_t)u.inner * es);
	}
	for (uint32_t k = 1; k < 4 && !st; k++) {
		if (!wanted(h, out, k))
			continue;
		st = npu_host_shape(&out[k], 1, k == 2 ? &u.len : &nu);
		for (int64_t i = 0; !st && i < (k == 2 ? u.len : nu); i++)
			npu_host_set(&out[k], (size_t)(k == 2 ? i : uid[i]),
				     (double)(k == 1 ? first[i] : k == 2 ? uid[inv[i]] : count[i]));
	}
	free(ord);
	return st;
}
