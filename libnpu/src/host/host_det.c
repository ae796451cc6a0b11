// SPDX-License-Identifier: MIT
/*
 * Det on the host: the determinant of each [M, M] matrix of X [*, M, M],
 * by LU decomposition with partial pivoting in double precision.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "host/npu_host.h"

const char *npu_host_det_accepts(const npu_ir_graph *g, const npu_ir_node *n)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0);

	if (!x || x->dtype != NPU_DTYPE_FLOAT32)
		return "only float32 input is";
	return NULL;
}

/* Determinant of the @m x @m matrix @a (overwritten). */
static double det(double *a, int64_t m)
{
	double d = 1;

	for (int64_t c = 0; c < m; c++) {
		int64_t p = c;

		for (int64_t r = c + 1; r < m; r++)
			if (fabs(a[r * m + c]) > fabs(a[p * m + c]))
				p = r;
		if (a[p * m + c] == 0)
			return 0;
		if (p != c) {
			for (int64_t k = 0; k < m; k++) {
				double t = a[c * m + k];

				a[c * m + k] = a[p * m + k];
				a[p * m + k] = t;
			}
			d = -d;
		}
		d *= a[c * m + c];
		for (int64_t r = c + 1; r < m; r++) {
			double f = a[r * m + c] / a[c * m + c];

			for (int64_t k = c; k < m; k++)
				a[r * m + k] -= f * a[c * m + k];
		}
	}
	return d;
}

npu_status npu_host_det(const struct npu_host_step *h, const struct npu_host_buf *in,
			struct npu_host_buf *out)
{
	int64_t m = in[0].rank >= 2 ? in[0].dims[in[0].rank - 1] : 0;
	size_t mm = (size_t)(m * m);
	double *a;

	(void)h;
	if (in[0].rank < 2 || in[0].dims[in[0].rank - 2] != m)
		return npu_fail(NPU_ERR_SHAPE, "the input is not a stack of square matrices");
	a = malloc((mm ? mm : 1) * sizeof(*a));
	if (!a)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (size_t b = 0; b < out[0].numel; b++) {
		for (size_t k = 0; k < mm; k++)
			a[k] = ((const float *)in[0].data)[b * mm + k];
		((float *)out[0].data)[b] = (float)det(a, m);
	}
	free(a);
	return NPU_OK;
}
