// SPDX-License-Identifier: MIT
/*
 * Elementwise operators on the host (issue 17), with numpy broadcasting
 * on the inputs' actual shapes: Cast, the unary math a detector's
 * post-processing uses (Abs, Neg, Floor, Ceil, Round, Sqrt, Exp, Log,
 * Sigmoid, Relu, Tanh, Reciprocal, Not), the binary arithmetic,
 * comparison and logic operators (Add, Sub, Mul, Div, Pow, Min, Max,
 * Equal, Greater, Less, GreaterOrEqual, LessOrEqual, And, Or, Xor) and
 * Where.  They run what follows an operator of run-time output size, in
 * double precision, stored as the device holds the output (float32, int32
 * for int64, ...); integer Div truncates as C does.
 */
#include <math.h>
#include <string.h>

#include "host/npu_host.h"

const char *npu_host_eltwise_accepts(const npu_ir_graph *g, const npu_ir_node *n)
{
	for (int i = 0; i < n->n_inputs; i++) {
		const npu_ir_tensor *t = npu_ir_input(g, n, i);

		if (t && !npu_host_dtype_ok(t->dtype))
			return "only float32, int64, int32, int8, uint8 and bool tensors are";
	}
	for (int i = 0; i < n->n_outputs; i++) {
		const npu_ir_tensor *t = npu_ir_output(g, n, i);

		if (t && !npu_host_dtype_ok(t->dtype))
			return "only float32, int64, int32, int8, uint8 and bool tensors are";
	}
	return NULL;
}

static bool is_int(npu_dtype t)
{
	return t != NPU_DTYPE_FLOAT32;
}

static double unary(const char *op, double x, npu_dtype t)
{
	if (!strcmp(op, "Abs")) return fabs(x);
	if (!strcmp(op, "Neg")) return -x;
	if (!strcmp(op, "Floor")) return floor(x);
	if (!strcmp(op, "Ceil")) return ceil(x);
	if (!strcmp(op, "Round")) return nearbyint(x);
	if (!strcmp(op, "Sqrt")) return sqrt(x);
	if (!strcmp(op, "Exp")) return exp(x);
	if (!strcmp(op, "Log")) return log(x);
	if (!strcmp(op, "Sigmoid")) return 1 / (1 + exp(-x));
	if (!strcmp(op, "Relu")) return x > 0 ? x : 0;
	if (!strcmp(op, "Tanh")) return tanh(x);
	if (!strcmp(op, "Reciprocal")) return 1 / x;
	if (!strcmp(op, "Not")) return x == 0;
	(void)t;
	return x;	/* Cast: npu_host_set() converts */
}

static double binary(const char *op, double a, double b, bool ints)
{
	switch (op[0]) {
	case 'A':
		if (!strcmp(op, "Add")) return a + b;
		return a != 0 && b != 0;	/* And */
	case 'S': return a - b;
	case 'M':
		if (!strcmp(op, "Mul")) return a * b;
		if (!strcmp(op, "Min")) return a < b || a != a ? a : b;
		return a > b || a != a ? a : b;	/* Max */
	case 'D':
		if (ints)
			return b == 0 ? 0 : trunc(a / b);
		return a / b;
	case 'P': return pow(a, b);
	case 'E': return a == b;
	case 'O': return a != 0 || b != 0;
	case 'X': return (a != 0) != (b != 0);
	case 'G': return op[7] ? a >= b : a > b;
	default: return op[4] ? a <= b : a < b;	/* Less, LessOrEqual */
	}
}

npu_status npu_host_bcast_shape(const struct npu_host_step *h, const struct npu_host_buf *in,
			      struct npu_host_buf *out)
{
	int64_t d[NPU_MAX_RANK];
	int r = 0;

	for (uint32_t i = 0; i < h->ninputs; i++)
		r = in[i].rank > r ? in[i].rank : r;
	for (int k = 0; k < r; k++) {
		d[k] = 1;
		for (uint32_t i = 0; i < h->ninputs; i++) {
			int j = k - (r - in[i].rank);
			int64_t v = j >= 0 ? in[i].dims[j] : 1;

			if (v != 1 && d[k] != 1 && v != d[k])
				return npu_fail(NPU_ERR_SHAPE,
						"input %u's dim %lld does not broadcast with %lld at run time",
						i, (long long)v, (long long)d[k]);
			if (v != 1)
				d[k] = v;
		}
	}
	return npu_host_shape(&out[0], r, d);
}

npu_status npu_host_eltwise(const struct npu_host_step *h, const struct npu_host_buf *in,
			    struct npu_host_buf *out)
{
	const char *op = h->op;
	bool ints = is_int(in[0].dtype);
	npu_status st = npu_host_bcast_shape(h, in, out);

	if (st)
		return st;
	for (size_t i = 0; i < out[0].numel; i++) {
		double v = npu_host_get(&in[0], npu_host_bcast(&in[0], &out[0], i));

		if (!strcmp(op, "Where"))
			v = v != 0 ? npu_host_get(&in[1], npu_host_bcast(&in[1], &out[0], i)) :
				npu_host_get(&in[2], npu_host_bcast(&in[2], &out[0], i));
		else if (h->ninputs == 1)
			v = unary(op, v, in[0].dtype);
		else
			for (uint32_t k = 1; k < h->ninputs; k++)
				v = binary(op, v, npu_host_get(&in[k], npu_host_bcast(&in[k], &out[0], i)),
					   ints);
		if (ints && is_int(out[0].dtype) && out[0].dtype != NPU_DTYPE_BOOL &&
		    strcmp(op, "Cast"))
			v = trunc(v);
		npu_host_set(&out[0], i, v);
	}
	return NPU_OK;
}
