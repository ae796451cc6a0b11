// SPDX-License-Identifier: MIT
/*
 * Shape rules of ONNX's math operators (onnx/defs/math): elementwise
 * unary and binary functions with numpy broadcasting, the variadic ones
 * (Max, Min, Sum, Mean), PRelu, Clip, Softmax / LogSoftmax / Hardmax, the
 * matrix products (Gemm, MatMul and their integer and QLinear forms),
 * Einsum and the losses.
 */
#include <string.h>

#include "ir/npu_einsum.h"
#include "ir/shape_util.h"

/* ---- elementwise ---- */

npu_status npu_ir_shape_unary(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	return st ? st : npu_sh_set_like(g, n, 0, x);
}

npu_status npu_ir_shape_unary_float(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_float(n, x);
	return st ? st : npu_sh_set_like(g, n, 0, x);
}

npu_status npu_ir_shape_binary(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *a, *b;
	int64_t dims[NPU_MAX_RANK];
	int r = 0;
	npu_status st = npu_sh_need_in(g, n, 0, &a);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &b);
	if (!st && strcmp(n->op, "Pow") != 0)
		st = npu_sh_same_dtype(n, a, b);
	if (!st)
		st = npu_sh_broadcast(n, a, b, dims, &r);
	return st ? st : npu_sh_set_out(g, n, 0, a->dtype, r, dims);
}

/* Max, Min: any number of inputs, broadcast together. */
npu_status npu_ir_shape_variadic(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *a, acc;
	npu_status st = npu_sh_need_in(g, n, 0, &a);

	if (st)
		return st;
	acc = *a;
	for (int i = 1; i < n->n_inputs && !st; i++) {
		npu_ir_tensor *b;

		st = npu_sh_need_in(g, n, i, &b);
		if (!st)
			st = npu_sh_same_dtype(n, &acc, b);
		if (!st) {
			int64_t dims[NPU_MAX_RANK] = { 0 };
			int r = 0;

			st = npu_sh_broadcast(n, &acc, b, dims, &r);
			if (!st) {
				memcpy(acc.dims, dims, sizeof(dims));
				acc.rank = r;
			}
		}
	}
	return st ? st : npu_sh_set_out(g, n, 0, a->dtype, acc.rank, acc.dims);
}

npu_status npu_ir_shape_prelu(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *slope;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &slope);
	if (!st)
		st = npu_sh_same_dtype(n, x, slope);
	if (!st)
		st = npu_sh_broadcast_to(n, slope, x);
	return st ? st : npu_sh_set_like(g, n, 0, x);
}

npu_status npu_ir_shape_clip(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	for (int i = 1; !st && i < n->n_inputs && i < 3; i++) {
		const npu_ir_tensor *b = in(g, n, i);

		if (b && npu_ir_numel(b) != 1)
			st = npu_sh_err(n, NPU_ERR_SHAPE, "bound '%s' must be a scalar", b->name);
		else if (b)
			st = npu_sh_same_dtype(n, x, b);
	}
	return st ? st : npu_sh_set_like(g, n, 0, x);
}

npu_status npu_ir_shape_softmax(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t axis;
	int a = 0;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_float(n, x);
	if (!st)
		st = npu_ir_attr_int(n, "axis", n->opset < 13 ? 1 : -1, &axis);
	if (!st && x->rank == 0)
		st = npu_sh_err(n, NPU_ERR_SHAPE, "input '%s' is a scalar", x->name);
	if (!st)
		st = npu_sh_axis(n, axis, x->rank, &a);
	return st ? st : npu_sh_set_like(g, n, 0, x);
}

/* ---- matrix products ---- */

npu_status npu_ir_shape_gemm(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *a, *b, *c = in(g, n, 2);
	int64_t ta, tb, dims[2], k;
	npu_status st = npu_sh_need_in(g, n, 0, &a);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &b);
	if (!st)
		st = npu_sh_same_dtype(n, a, b);
	if (!st)
		st = npu_sh_need_rank(n, a, 2, 2);
	if (!st)
		st = npu_sh_need_rank(n, b, 2, 2);
	if (!st)
		st = npu_ir_attr_int(n, "transA", 0, &ta);
	if (!st)
		st = npu_ir_attr_int(n, "transB", 0, &tb);
	if (st)
		return st;
	dims[0] = a->dims[ta ? 1 : 0];
	k = a->dims[ta ? 0 : 1];
	dims[1] = b->dims[tb ? 0 : 1];
	if (b->dims[tb ? 1 : 0] != k)
		return npu_sh_err(n, NPU_ERR_SHAPE, "inner dimensions differ: %" PRId64 " and %" PRId64,
				  k, b->dims[tb ? 1 : 0]);
	st = npu_sh_set_out(g, n, 0, a->dtype, 2, dims);
	if (!st && c) {
		st = npu_sh_same_dtype(n, a, c);
		if (!st)
			st = npu_sh_broadcast_to(n, c, npu_ir_output(g, n, 0));
	}
	return st;
}

static npu_status matmul_common(npu_ir_graph *g, npu_ir_node *n, const npu_ir_tensor *a,
				const npu_ir_tensor *b, npu_dtype out_dtype)
{
	npu_ir_tensor ba, bb;
	int64_t dims[NPU_MAX_RANK], ka, kb;
	int r = 0, ra = a->rank, rb = b->rank;
	npu_status st;

	if (ra < 1 || rb < 1)
		return npu_sh_err(n, NPU_ERR_SHAPE, "inputs must have rank 1 or more");
	ka = a->dims[ra - 1];
	kb = rb == 1 ? b->dims[0] : b->dims[rb - 2];
	if (ka != kb)
		return npu_sh_err(n, NPU_ERR_SHAPE, "inner dimensions differ: %" PRId64 " ('%s') and %" PRId64 " ('%s')",
				  ka, a->name, kb, b->name);
	/* Broadcast the batch dims. */
	memset(&ba, 0, sizeof(ba));
	memset(&bb, 0, sizeof(bb));
	ba.name = a->name;
	bb.name = b->name;
	ba.rank = ra > 2 ? ra - 2 : 0;
	bb.rank = rb > 2 ? rb - 2 : 0;
	memcpy(ba.dims, a->dims, (size_t)ba.rank * sizeof(int64_t));
	memcpy(bb.dims, b->dims, (size_t)bb.rank * sizeof(int64_t));
	st = npu_sh_broadcast(n, &ba, &bb, dims, &r);
	if (st)
		return st;
	if (ra > 1)
		dims[r++] = a->dims[ra - 2];
	if (rb > 1)
		dims[r++] = b->dims[rb - 1];
	if (r > NPU_MAX_RANK)
		return npu_sh_err(n, NPU_ERR_UNSUPPORTED, "rank too large");
	return npu_sh_set_out(g, n, 0, out_dtype, r, dims);
}

npu_status npu_ir_shape_matmul(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *a, *b;
	npu_status st = npu_sh_need_in(g, n, 0, &a);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &b);
	if (!st)
		st = npu_sh_same_dtype(n, a, b);
	return st ? st : matmul_common(g, n, a, b, a->dtype);
}

npu_status npu_ir_shape_matmul_integer(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *a, *b;
	npu_status st = npu_sh_need_in(g, n, 0, &a);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &b);
	if (!st && (!is_q8(a->dtype) || !is_q8(b->dtype)))
		st = npu_sh_err(n, NPU_ERR_SHAPE, "inputs must be int8 or uint8");
	return st ? st : matmul_common(g, n, a, b, NPU_DTYPE_INT32);
}

/*
 * com.microsoft MatMulNBits: A [..., K] times the dequantised B^T ([K][N])
 * is [..., N] of A's dtype; what the NPU takes of B, the scales and the
 * zero points is its support check (npu_matmul_nbits_refusal).
 */
npu_status npu_ir_shape_matmul_nbits(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *a;
	int64_t K = 0, N = 0, dims[NPU_MAX_RANK];
	npu_status st = npu_sh_need_in(g, n, 0, &a);

	if (!st && ((st = npu_ir_attr_int(n, "K", 0, &K)) || (st = npu_ir_attr_int(n, "N", 0, &N))))
		return st;
	if (!st)
		st = npu_sh_need_float(n, a);
	if (!st && (a->rank < 1 || a->dims[a->rank - 1] != K || N <= 0))
		st = npu_sh_err(n, NPU_ERR_SHAPE,
				"A's last dimension must be the attribute K (%lld), N (%lld) positive",
				(long long)K, (long long)N);
	if (st)
		return st;
	memcpy(dims, a->dims, sizeof(dims[0]) * (size_t)a->rank);
	dims[a->rank - 1] = N;
	return npu_sh_set_out(g, n, 0, a->dtype, a->rank, dims);
}

npu_status npu_ir_shape_qlinear_matmul(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *a, *b, *yzp = in(g, n, 7);
	npu_status st = npu_sh_need_in(g, n, 0, &a);

	if (!st)
		st = npu_sh_need_in(g, n, 3, &b);
	if (!st && (!is_q8(a->dtype) || !is_q8(b->dtype)))
		st = npu_sh_err(n, NPU_ERR_SHAPE, "inputs must be int8 or uint8");
	if (!st)
		st = matmul_common(g, n, a, b, yzp ? yzp->dtype : a->dtype);
	if (!st)
		st = npu_sh_note_quant(a, in(g, n, 1), in(g, n, 2), a->rank - 1);
	if (!st)
		st = npu_sh_note_quant(b, in(g, n, 4), in(g, n, 5), b->rank - 1);
	if (!st)
		st = npu_sh_note_quant(npu_ir_output(g, n, 0), in(g, n, 6), yzp, -1);
	return st;
}

/* Einsum: the output's axes are the equation's output labels, sized by the operands. */
npu_status npu_ir_shape_einsum(npu_ir_graph *g, npu_ir_node *n)
{
	struct npu_einsum e;
	const int64_t *dims[2] = { NULL, NULL };
	int64_t yd[NPU_MAX_RANK];
	int ranks[2] = { 0, 0 };
	const char *eq;
	char why[256];
	npu_ir_tensor *x[2] = { NULL, NULL };
	npu_status st = npu_ir_attr_string(n, "equation", NULL, &eq);

	if (st)
		return st;
	if (!eq)
		return npu_sh_err(n, NPU_ERR_FORMAT, "the equation attribute is missing");
	if (n->n_inputs < 1 || n->n_inputs > 2)
		return npu_sh_err(n, NPU_ERR_UNSUPPORTED,
				  "%d operands: only Einsum of one or two operands is supported",
				  n->n_inputs);
	for (int i = 0; i < n->n_inputs; i++) {
		if ((st = npu_sh_need_in(g, n, i, &x[i])))
			return st;
		if (i && (st = npu_sh_same_dtype(n, x[0], x[i])))
			return st;
		ranks[i] = x[i]->rank;
		dims[i] = x[i]->dims;
	}
	if (npu_einsum_parse(eq, n->n_inputs, ranks, &e, why, sizeof(why)) ||
	    npu_einsum_sizes(&e, dims, why, sizeof(why)))
		return npu_sh_err(n, NPU_ERR_SHAPE, "equation '%s': %s", eq, why);
	for (int a = 0; a < e.out_rank; a++)
		yd[a] = e.size[e.out[a]];
	return npu_sh_set_out(g, n, 0, x[0]->dtype, e.out_rank, yd);
}

/* ---- losses ---- */

/* NegativeLogLikelihoodLoss: the target's shape, or a scalar when reduced. */
npu_status npu_ir_shape_nll_loss(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *t;
	const char *red;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_float(n, x);
	if (!st)
		st = npu_sh_need_in(g, n, 1, &t);
	if (!st)
		st = npu_ir_attr_string(n, "reduction", "mean", &red);
	if (st)
		return st;
	if (x->rank < 2 || t->rank != x->rank - 1 || !is_int(t->dtype))
		return npu_sh_err(n, NPU_ERR_SHAPE, "input must be [N, C, ...] and target [N, ...]");
	/* SoftmaxCrossEntropyLoss's optional log_prob output: like the scores. */
	if ((st = npu_sh_set_out(g, n, 1, x->dtype, x->rank, x->dims)))
		return st;
	if (!strcmp(red, "none"))
		return npu_sh_set_out(g, n, 0, x->dtype, t->rank, t->dims);
	if (strcmp(red, "sum") && strcmp(red, "mean"))
		return npu_sh_err(n, NPU_ERR_FORMAT, "reduction '%s' is not none, sum or mean", red);
	return npu_sh_set_out(g, n, 0, x->dtype, 0, NULL);
}
