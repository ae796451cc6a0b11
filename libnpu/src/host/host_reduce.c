// SPDX-License-Identifier: MIT
/*
 * Reductions on the host (issue 17): ReduceMax, ReduceMin, ReduceSum,
 * ReduceMean, ReduceProd, ArgMax and ArgMin over the actual shape of their
 * input, for what follows an operator of run-time output size (the best
 * class of each selected box, the number of detections).  Axes come from
 * the attribute or, at the opsets that moved them there, input 1 read at
 * run time; keepdims, noop_with_empty_axes and select_last_index as ONNX
 * defines them.  Sums in double; an empty Max/Min gives -inf/+inf.
 */
#include <math.h>
#include <string.h>

#include "host/npu_host.h"

const char *npu_host_reduce_accepts(const npu_ir_graph *g, const npu_ir_node *n)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);

	if (!x || !y || !npu_host_dtype_ok(x->dtype) || !npu_host_dtype_ok(y->dtype))
		return "only float32, int64, int32, int8, uint8 and bool tensors are";
	return NULL;
}

/* The reduced axes of @h over rank @r into @red; false for a bad axis. */
static npu_status axes_of(const struct npu_host_step *h, const struct npu_host_buf *in, int r,
			  bool *red)
{
	const struct npu_host_attr *a = npu_host_attr_find(h, "axes");
	bool arg = !strncmp(h->op, "Arg", 3);
	int64_t ax[NPU_MAX_RANK];
	int n = 0;

	memset(red, 0, NPU_MAX_RANK * sizeof(*red));
	if (arg) {
		ax[n++] = npu_host_attr_int(h, "axis", 0);
	} else if (a && a->type == NPU_IR_ATTR_INTS) {
		for (uint32_t k = 0; k < a->n && n < NPU_MAX_RANK; k++)
			ax[n++] = a->ints[k];
	} else if (h->ninputs > 1 && in[1].data) {
		for (size_t k = 0; k < in[1].numel && n < NPU_MAX_RANK; k++)
			ax[n++] = npu_host_get_int(&in[1], k);
	}
	if (!n) {
		if (npu_host_attr_int(h, "noop_with_empty_axes", 0))
			return NPU_OK;
		for (int d = 0; d < r; d++)
			red[d] = true;
		return NPU_OK;
	}
	for (int k = 0; k < n; k++) {
		int64_t d = ax[k] < 0 ? ax[k] + r : ax[k];

		if (d < 0 || d >= r)
			return npu_fail(NPU_ERR_SHAPE, "axis %lld is outside rank %d", (long long)ax[k], r);
		red[d] = true;
	}
	return NPU_OK;
}

npu_status npu_host_reduce(const struct npu_host_step *h, const struct npu_host_buf *in,
			   struct npu_host_buf *out)
{
	const struct npu_host_buf *x = &in[0];
	const char *op = h->op;
	bool arg = !strncmp(op, "Arg", 3), keep = npu_host_attr_int(h, "keepdims", 1) != 0;
	bool last = npu_host_attr_int(h, "select_last_index", 0) != 0;
	bool red[NPU_MAX_RANK];
	int64_t d[NPU_MAX_RANK], os[NPU_MAX_RANK];
	size_t cnt = 1, stride = 1;
	int r = 0;
	npu_status st = axes_of(h, in, x->rank, red);

	if (st)
		return st;
	for (int k = 0; k < x->rank; k++) {
		if (red[k])
			cnt *= (size_t)x->dims[k];
		if (!red[k] || keep)
			d[r++] = red[k] ? 1 : x->dims[k];
	}
	if ((st = npu_host_shape(&out[0], r, d)))
		return st;
	/* Row-major strides of the output, reduced dims taking none. */
	for (int k = x->rank - 1; k >= 0; k--) {
		os[k] = red[k] ? 0 : (int64_t)stride;
		if (!red[k])
			stride *= (size_t)x->dims[k];
	}
	for (size_t o = 0; o < out[0].numel; o++) {
		double acc = !strcmp(op, "ReduceProd") ? 1 : !strcmp(op, "ReduceMax") ? -INFINITY :
			     !strcmp(op, "ReduceMin") ? INFINITY : 0;
		int64_t best = -1, at = 0;
		double bv = 0;

		for (size_t i = 0; i < x->numel; i++) {
			size_t rest = i, oi = 0;
			int64_t pos = 0;
			double v;

			/* The output element input element i reduces into, and its place along an Arg axis. */
			for (int k = x->rank - 1; k >= 0; k--) {
				int64_t c = (int64_t)(rest % (size_t)x->dims[k]);

				rest /= (size_t)x->dims[k];
				oi += (size_t)(c * os[k]);
				if (red[k])
					pos = c;
			}
			if (oi != o)
				continue;
			v = npu_host_get(x, i);
			if (arg) {
				bool better = best < 0 || (op[3] == 'M' && op[4] == 'a' ? v > bv : v < bv) ||
					      (last && v == bv);

				if (better) {
					best = pos;
					bv = v;
				}
				continue;
			}
			if (!strcmp(op, "ReduceMax"))
				acc = v > acc ? v : acc;
			else if (!strcmp(op, "ReduceMin"))
				acc = v < acc ? v : acc;
			else if (!strcmp(op, "ReduceProd"))
				acc *= v;
			else
				acc += v;
			at++;
		}
		if (arg)
			acc = (double)(best < 0 ? 0 : best);
		else if (!strcmp(op, "ReduceMean"))
			acc = at ? acc / (double)at : NAN;
		npu_host_set(&out[0], o, acc);
	}
	(void)cnt;
	return NPU_OK;
}
