// SPDX-License-Identifier: MIT
/*
 * Shape rules of ONNX's tensor operators (onnx/defs/tensor): casts, the
 * reshaping and layout operators (Reshape, Transpose, Squeeze, Unsqueeze,
 * DepthToSpace ...), Concat, Split, Slice, Pad, Shape and Size, the
 * gathers and scatters, Expand, Where and Tile, Resize / Upsample and
 * GridSample.  Operands that fix an output's shape (Reshape's shape,
 * Slice's starts, Resize's scales ...) must be constants.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/shape_util.h"

/* ---- casts ---- */

npu_status npu_ir_shape_cast(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t to;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_ir_attr_int(n, "to", 0, &to);
	if (st)
		return st;
	if (!npu_dtype_size((npu_dtype)to))
		return npu_sh_err(n, NPU_ERR_UNSUPPORTED, "cast to ONNX data type %" PRId64
				  " is not supported (libnpu has float32, float64, float16, bfloat16, int8, uint8, int16, uint16, int32, uint32, int64, uint64, bool)",
				  to);
	return npu_sh_set_out(g, n, 0, (npu_dtype)to, x->rank, x->dims);
}

/* CastLike: x's shape, the dtype of the second input. */
npu_status npu_ir_shape_cast_like(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *like;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &like);
	return st ? st : npu_sh_set_out(g, n, 0, like->dtype, x->rank, x->dims);
}

/* ---- shape and layout ---- */

npu_status npu_ir_shape_reshape(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t shape[NPU_MAX_RANK * 2], allowzero = 0, known = 1;
	int r = 0, infer = -1;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st && !in(g, n, 1))
		st = npu_sh_err(n, NPU_ERR_FORMAT, "the shape input is missing");
	if (!st)
		st = npu_sh_const_ints(g, n, 1, shape, NPU_MAX_RANK * 2, &r);
	if (!st)
		st = npu_ir_attr_int(n, "allowzero", 0, &allowzero);
	if (st)
		return st;
	if (r > NPU_MAX_RANK)
		return npu_sh_err(n, NPU_ERR_UNSUPPORTED, "the target rank %d exceeds %d", r, NPU_MAX_RANK);
	for (int i = 0; i < r; i++) {
		if (shape[i] == 0 && !allowzero) {
			if (i >= x->rank)
				return npu_sh_err(n, NPU_ERR_SHAPE, "shape value 0 at %d copies a dimension '%s' does not have",
						  i, x->name);
			shape[i] = x->dims[i];
		}
		if (shape[i] == -1) {
			if (infer >= 0)
				return npu_sh_err(n, NPU_ERR_SHAPE, "more than one -1 in the target shape");
			infer = i;
			continue;
		}
		if (shape[i] < 0 || shape[i] > NPU_IR_DIM_MAX)
			return npu_sh_err(n, NPU_ERR_SHAPE, "invalid target dimension %" PRId64, shape[i]);
		if (shape[i] && known > NPU_IR_NUMEL_MAX / shape[i])
			return npu_sh_err(n, NPU_ERR_SHAPE, "target shape too large");
		known *= shape[i];
	}
	if (infer >= 0) {
		if (!known || npu_ir_numel(x) % known)
			return npu_sh_err(n, NPU_ERR_SHAPE, "cannot infer the -1 dimension: %" PRId64
					  " elements do not divide by %" PRId64, npu_ir_numel(x), known);
		shape[infer] = npu_ir_numel(x) / known;
		known *= shape[infer];
	}
	if (known != npu_ir_numel(x))
		return npu_sh_err(n, NPU_ERR_SHAPE, "cannot reshape %" PRId64 " elements into %" PRId64,
				  npu_ir_numel(x), known);
	return npu_sh_set_out(g, n, 0, x->dtype, r, shape);
}

npu_status npu_ir_transpose_perm(const npu_ir_node *n, int rank, int perm[NPU_MAX_RANK])
{
	const int64_t *p;
	int c;
	bool seen[NPU_MAX_RANK] = { false };
	npu_status st = npu_ir_attr_ints(n, "perm", &p, &c);

	if (st)
		return st;
	if (c < 0) {
		for (int i = 0; i < rank; i++)
			perm[i] = rank - 1 - i;
		return NPU_OK;
	}
	if (c != rank)
		return npu_sh_err(n, NPU_ERR_SHAPE, "perm has %d values for rank %d", c, rank);
	for (int i = 0; i < rank; i++) {
		if (p[i] < 0 || p[i] >= rank || seen[p[i]])
			return npu_sh_err(n, NPU_ERR_SHAPE, "perm is not a permutation of 0..%d", rank - 1);
		seen[p[i]] = true;
		perm[i] = (int)p[i];
	}
	return NPU_OK;
}

npu_status npu_ir_shape_transpose(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int perm[NPU_MAX_RANK];
	int64_t dims[NPU_MAX_RANK];
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_ir_transpose_perm(n, x->rank, perm);
	if (st)
		return st;
	for (int d = 0; d < x->rank; d++)
		dims[d] = x->dims[perm[d]];
	return npu_sh_set_out(g, n, 0, x->dtype, x->rank, dims);
}

npu_status npu_ir_shape_squeeze(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t axes[NPU_MAX_RANK * 2], dims[NPU_MAX_RANK];
	bool drop[NPU_MAX_RANK] = { false };
	int na, r = 0;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_axes_list(g, n, "axes", 1, 13, axes, &na);
	if (st)
		return st;
	for (int i = 0; i < na; i++) {
		int a = 0;

		st = npu_sh_axis(n, axes[i], x->rank, &a);
		if (st)
			return st;
		if (x->dims[a] != 1)
			return npu_sh_err(n, NPU_ERR_SHAPE, "dimension %d is %" PRId64 ", not 1", a, x->dims[a]);
		drop[a] = true;
	}
	for (int d = 0; d < x->rank; d++)
		if (!(na < 0 ? x->dims[d] == 1 : drop[d]))
			dims[r++] = x->dims[d];
	return npu_sh_set_out(g, n, 0, x->dtype, r, dims);
}

npu_status npu_ir_shape_unsqueeze(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t axes[NPU_MAX_RANK * 2], dims[NPU_MAX_RANK];
	bool ins[NPU_MAX_RANK] = { false };
	int na, r, j = 0;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_axes_list(g, n, "axes", 1, 13, axes, &na);
	if (st)
		return st;
	if (na < 0)
		return npu_sh_err(n, NPU_ERR_FORMAT, "axes are missing");
	r = x->rank + na;
	if (r > NPU_MAX_RANK)
		return npu_sh_err(n, NPU_ERR_UNSUPPORTED, "output rank %d exceeds %d", r, NPU_MAX_RANK);
	for (int i = 0; i < na; i++) {
		int a = 0;

		st = npu_sh_axis(n, axes[i], r, &a);
		if (st)
			return st;
		if (ins[a])
			return npu_sh_err(n, NPU_ERR_SHAPE, "axis %d given twice", a);
		ins[a] = true;
	}
	for (int d = 0; d < r; d++)
		dims[d] = ins[d] ? 1 : x->dims[j++];
	return npu_sh_set_out(g, n, 0, x->dtype, r, dims);
}

/* DepthToSpace, SpaceToDepth: NCHW with a blocksize. */
npu_status npu_ir_shape_depth_space(npu_ir_graph *g, npu_ir_node *n)
{
	bool d2s = !strcmp(n->op, "DepthToSpace");
	npu_ir_tensor *x;
	int64_t b, dims[4];
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_ir_attr_int(n, "blocksize", 0, &b);
	if (st)
		return st;
	if (x->rank != 4 || b < 1 || b > 4096)
		return npu_sh_err(n, NPU_ERR_SHAPE, "needs a 4-D input and a blocksize >= 1");
	memcpy(dims, x->dims, sizeof(dims));
	if (d2s) {
		if (dims[1] % (b * b))
			return npu_sh_err(n, NPU_ERR_SHAPE, "%" PRId64 " channels are not a multiple of "
					  "blocksize^2", dims[1]);
		dims[1] /= b * b;
		dims[2] *= b;
		dims[3] *= b;
	} else {
		if (dims[2] % b || dims[3] % b)
			return npu_sh_err(n, NPU_ERR_SHAPE, "height and width must be multiples of the "
					  "blocksize");
		dims[1] *= b * b;
		dims[2] /= b;
		dims[3] /= b;
	}
	return npu_sh_set_out(g, n, 0, x->dtype, 4, dims);
}

npu_status npu_ir_shape_shape(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t start = 0, end, len;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (st)
		return st;
	end = x->rank;
	if (n->opset >= 15) {
		st = npu_ir_attr_int(n, "start", 0, &start);
		if (!st)
			st = npu_ir_attr_int(n, "end", x->rank, &end);
		if (st)
			return st;
	}
	if (start < 0)
		start += x->rank;
	if (end < 0)
		end += x->rank;
	start = start < 0 ? 0 : start > x->rank ? x->rank : start;
	end = end < 0 ? 0 : end > x->rank ? x->rank : end;
	len = end > start ? end - start : 0;
	/* The evaluator reads these back. */
	st = npu_ir_set_attr_int(n, "start", start);
	if (!st)
		st = npu_ir_set_attr_int(n, "end", end);
	return st ? st : npu_sh_set_out(g, n, 0, NPU_DTYPE_INT64, 1, &len);
}

npu_status npu_ir_shape_size(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	return st ? st : npu_sh_set_out(g, n, 0, NPU_DTYPE_INT64, 0, NULL);
}

/* ---- joining, splitting, slicing, padding, repeating ---- */

npu_status npu_ir_shape_concat(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x0 = NULL;
	int64_t axis, dims[NPU_MAX_RANK];
	int a = 0;
	npu_status st = npu_ir_attr_int(n, "axis", INT64_MIN, &axis);

	if (st)
		return st;
	if (axis == INT64_MIN)
		return npu_sh_err(n, NPU_ERR_FORMAT, "attribute 'axis' is missing");
	for (int i = 0; i < n->n_inputs; i++) {
		npu_ir_tensor *x = in(g, n, i);

		if (!x)
			continue;
		if (!x0) {
			x0 = x;
			st = npu_sh_axis(n, axis, x->rank, &a);
			if (st)
				return st;
			memcpy(dims, x->dims, sizeof(dims));
			continue;
		}
		st = npu_sh_same_dtype(n, x0, x);
		if (st)
			return st;
		if (x->rank != x0->rank)
			return npu_sh_err(n, NPU_ERR_SHAPE, "inputs '%s' and '%s' differ in rank",
					  x0->name, x->name);
		for (int d = 0; d < x->rank; d++) {
			if (d == a)
				dims[d] += x->dims[d];
			else if (x->dims[d] != x0->dims[d])
				return npu_sh_err(n, NPU_ERR_SHAPE, "inputs '%s' and '%s' differ in dimension %d",
						  x0->name, x->name, d);
		}
	}
	if (!x0)
		return npu_sh_err(n, NPU_ERR_FORMAT, "no inputs");
	return npu_sh_set_out(g, n, 0, x0->dtype, x0->rank, dims);
}

npu_status npu_ir_shape_split(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t axis, num = 0, *big = NULL, sum = 0, dims[NPU_MAX_RANK];
	const int64_t *sa;
	int a = 0, ns = -1, nout = n->n_outputs;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_ir_attr_int(n, "axis", 0, &axis);
	if (!st)
		st = npu_sh_axis(n, axis, x->rank, &a);
	if (st)
		return st;
	if (n->opset >= 13) {
		if (in(g, n, 1)) {
			const npu_ir_tensor *s = in(g, n, 1);

			if (npu_ir_numel(s) != nout)
				return npu_sh_err(n, NPU_ERR_SHAPE, "split has %" PRId64 " values for %d outputs",
						  npu_ir_numel(s), nout);
			big = malloc((size_t)(nout ? nout : 1) * sizeof(*big));
			if (!big)
				return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
			st = npu_sh_const_ints(g, n, 1, big, nout, &ns);
		}
		if (!st && n->opset >= 18)
			st = npu_ir_attr_int(n, "num_outputs", 0, &num);
	} else {
		st = npu_ir_attr_ints(n, "split", &sa, &ns);
		if (!st && ns >= 0) {
			if (ns != nout)
				st = npu_sh_err(n, NPU_ERR_SHAPE, "split has %d values for %d outputs", ns, nout);
			big = malloc((size_t)(nout ? nout : 1) * sizeof(*big));
			if (!big && !st)
				st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
			for (int i = 0; !st && i < ns; i++)
				big[i] = sa[i];
		}
	}
	if (!st && ns < 0) {
		int64_t dim = x->dims[a], chunk;

		if (num && num != nout)
			st = npu_sh_err(n, NPU_ERR_SHAPE, "num_outputs %" PRId64 " but %d outputs", num, nout);
		else if (nout < 1)
			st = npu_sh_err(n, NPU_ERR_FORMAT, "no outputs");
		else if (!num && dim % nout)
			st = npu_sh_err(n, NPU_ERR_SHAPE, "dimension %" PRId64 " does not split evenly into %d",
					dim, nout);
		if (!st) {
			chunk = (dim + nout - 1) / nout;
			big = malloc((size_t)nout * sizeof(*big));
			if (!big)
				st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
			for (int i = 0; !st && i < nout; i++) {
				big[i] = dim - sum < chunk ? dim - sum : chunk;
				sum += big[i];
			}
			sum = 0;
		}
	}
	for (int i = 0; !st && i < nout; i++) {
		if (big[i] < 0 || big[i] > NPU_IR_DIM_MAX)
			st = npu_sh_err(n, NPU_ERR_SHAPE, "split size %" PRId64 " out of range", big[i]);
		sum += big[i];
	}
	if (!st && sum != x->dims[a])
		st = npu_sh_err(n, NPU_ERR_SHAPE, "split sizes add up to %" PRId64 ", not %" PRId64,
				sum, x->dims[a]);
	for (int i = 0; !st && i < nout; i++) {
		memcpy(dims, x->dims, sizeof(dims));
		dims[a] = big[i];
		st = npu_sh_set_out(g, n, i, x->dtype, x->rank, dims);
	}
	free(big);
	return st;
}

npu_status npu_ir_slice_plan(npu_ir_graph *g, const npu_ir_node *n,
			     int64_t start[NPU_MAX_RANK], int64_t step[NPU_MAX_RANK],
			     int64_t len[NPU_MAX_RANK])
{
	const npu_ir_tensor *x = in(g, n, 0);
	int64_t s[NPU_MAX_RANK * 2], e[NPU_MAX_RANK * 2], ax[NPU_MAX_RANK * 2], st_[NPU_MAX_RANK * 2];
	int ns, ne, na = -1, nst = -1;
	bool seen[NPU_MAX_RANK] = { false };
	npu_status st;

	if (!x)
		return npu_sh_err(n, NPU_ERR_FORMAT, "input 0 is missing");
	if (n->opset < 10) {
		st = npu_sh_axes_list(g, n, "starts", 0, INT32_MAX, s, &ns);
		if (!st)
			st = npu_sh_axes_list(g, n, "ends", 0, INT32_MAX, e, &ne);
		if (!st)
			st = npu_sh_axes_list(g, n, "axes", 0, INT32_MAX, ax, &na);
	} else {
		st = in(g, n, 1) && in(g, n, 2) ? NPU_OK :
		     npu_sh_err(n, NPU_ERR_FORMAT, "inputs starts and ends are required");
		if (!st)
			st = npu_sh_axes_list(g, n, NULL, 1, 0, s, &ns);
		if (!st)
			st = npu_sh_axes_list(g, n, NULL, 2, 0, e, &ne);
		if (!st)
			st = npu_sh_axes_list(g, n, NULL, 3, 0, ax, &na);
		if (!st)
			st = npu_sh_axes_list(g, n, NULL, 4, 0, st_, &nst);
	}
	if (st)
		return st;
	if (ns < 0 || ne != ns || (na >= 0 && na != ns) || (nst >= 0 && nst != ns) ||
	    ns > x->rank)
		return npu_sh_err(n, NPU_ERR_SHAPE, "starts, ends, axes and steps must have the same length, at most the rank %d",
				  x->rank);
	for (int d = 0; d < x->rank; d++) {
		start[d] = 0;
		step[d] = 1;
		len[d] = x->dims[d];
	}
	for (int k = 0; k < ns; k++) {
		int a = 0;
		int64_t D, b, en, sp = nst >= 0 ? st_[k] : 1;

		st = npu_sh_axis(n, na >= 0 ? ax[k] : k, x->rank, &a);
		if (st)
			return st;
		if (seen[a])
			return npu_sh_err(n, NPU_ERR_SHAPE, "axis %d is sliced twice", a);
		seen[a] = true;
		if (sp == 0)
			return npu_sh_err(n, NPU_ERR_SHAPE, "step 0");
		sp = sp > NPU_IR_NUMEL_MAX ? NPU_IR_NUMEL_MAX : sp < -NPU_IR_NUMEL_MAX ? -NPU_IR_NUMEL_MAX : sp;
		D = x->dims[a];
		b = s[k] < 0 ? s[k] + D : s[k];
		en = e[k] < 0 ? e[k] + D : e[k];
		if (sp > 0) {
			b = b < 0 ? 0 : b > D ? D : b;
			en = en < 0 ? 0 : en > D ? D : en;
			len[a] = en > b ? (en - b + sp - 1) / sp : 0;
		} else {
			b = b < 0 ? 0 : b > D - 1 ? D - 1 : b;
			en = en < -1 ? -1 : en > D - 1 ? D - 1 : en;
			len[a] = b > en ? (b - en - sp - 1) / -sp : 0;
		}
		start[a] = len[a] ? b : 0;
		step[a] = sp;
	}
	return NPU_OK;
}

npu_status npu_ir_shape_slice(npu_ir_graph *g, npu_ir_node *n)
{
	int64_t start[NPU_MAX_RANK], step[NPU_MAX_RANK], len[NPU_MAX_RANK];
	npu_status st = npu_ir_slice_plan(g, n, start, step, len);
	const npu_ir_tensor *x = in(g, n, 0);

	return st ? st : npu_sh_set_out(g, n, 0, x->dtype, x->rank, len);
}

npu_status npu_ir_shape_pad(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t pads[NPU_MAX_RANK * 2], axes[NPU_MAX_RANK * 2], dims[NPU_MAX_RANK];
	const char *mode;
	int np = -1, na = -1, axis[NPU_MAX_RANK];
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_ir_attr_string(n, "mode", "constant", &mode);
	if (st)
		return st;
	if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge") &&
	    strcmp(mode, "wrap"))
		return npu_sh_err(n, NPU_ERR_FORMAT, "mode '%s' is not constant, reflect, edge or wrap", mode);
	if (n->opset < 11) {
		st = npu_sh_axes_list(g, n, "pads", 1, INT32_MAX, pads, &np);
	} else {
		if (!in(g, n, 1))
			return npu_sh_err(n, NPU_ERR_FORMAT, "the pads input is missing");
		st = npu_sh_const_ints(g, n, 1, pads, NPU_MAX_RANK * 2, &np);
		if (!st && in(g, n, 2) && npu_ir_numel(in(g, n, 2)) != 1)
			st = npu_sh_err(n, NPU_ERR_SHAPE, "constant_value must be a scalar");
		if (!st && n->opset >= 18)
			st = npu_sh_axes_list(g, n, NULL, 3, 0, axes, &na);
	}
	if (st)
		return st;
	if (na < 0) {
		na = x->rank;
		for (int i = 0; i < na; i++)
			axes[i] = i;
	}
	if (np != 2 * na)
		return npu_sh_err(n, NPU_ERR_SHAPE, "pads has %d values, expected %d", np, 2 * na);
	for (int i = 0; i < na; i++) {
		st = npu_sh_axis(n, axes[i], x->rank, &axis[i]);
		if (st)
			return st;
	}
	memcpy(dims, x->dims, sizeof(dims));
	for (int i = 0; i < na; i++) {
		int64_t pb = pads[i], pe = pads[na + i];

		if (pb < -NPU_IR_DIM_MAX || pb > NPU_IR_DIM_MAX ||
		    pe < -NPU_IR_DIM_MAX || pe > NPU_IR_DIM_MAX)
			return npu_sh_err(n, NPU_ERR_SHAPE, "pad out of range");
		dims[axis[i]] += pb + pe;
		if (dims[axis[i]] < 0)
			return npu_sh_err(n, NPU_ERR_SHAPE, "negative pads remove more than dimension %d has",
					  axis[i]);
	}
	return npu_sh_set_out(g, n, 0, x->dtype, x->rank, dims);
}

/* Expand: x broadcast with the constant shape input. */
npu_status npu_ir_shape_expand(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, want = { 0 };
	int64_t dims[NPU_MAX_RANK * 2], out[NPU_MAX_RANK];
	int r = 0, ro = 0;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st && !in(g, n, 1))
		st = npu_sh_err(n, NPU_ERR_FORMAT, "the shape input is missing");
	if (!st)
		st = npu_sh_const_ints(g, n, 1, dims, NPU_MAX_RANK * 2, &r);
	if (st)
		return st;
	if (r > NPU_MAX_RANK)
		return npu_sh_err(n, NPU_ERR_UNSUPPORTED, "output rank %d exceeds %d", r, NPU_MAX_RANK);
	want.rank = r;
	want.name = (char *)"shape";
	for (int d = 0; d < r; d++) {
		if (dims[d] < 0 || dims[d] > NPU_IR_DIM_MAX)
			return npu_sh_err(n, NPU_ERR_SHAPE, "shape value %" PRId64 " is invalid", dims[d]);
		want.dims[d] = dims[d];
	}
	st = npu_sh_broadcast(n, x, &want, out, &ro);
	return st ? st : npu_sh_set_out(g, n, 0, x->dtype, ro, out);
}

/* Where: a bool condition, X and Y of one dtype, broadcast together. */
npu_status npu_ir_shape_where(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *c, *a, *b, acc;
	int64_t dims[NPU_MAX_RANK];
	int r = 0;
	npu_status st = npu_sh_need_in(g, n, 0, &c);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &a);
	if (!st)
		st = npu_sh_need_in(g, n, 2, &b);
	if (!st && c->dtype != NPU_DTYPE_BOOL)
		st = npu_sh_err(n, NPU_ERR_SHAPE, "condition '%s' is %s, expected bool", c->name,
				dts(c->dtype));
	if (!st)
		st = npu_sh_same_dtype(n, a, b);
	if (!st)
		st = npu_sh_broadcast(n, c, a, dims, &r);
	if (st)
		return st;
	acc = *c;
	acc.rank = r;
	memcpy(acc.dims, dims, sizeof(dims));
	st = npu_sh_broadcast(n, &acc, b, dims, &r);
	return st ? st : npu_sh_set_out(g, n, 0, a->dtype, r, dims);
}

/* Tile: each dimension times its constant repeat count. */
npu_status npu_ir_shape_tile(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t reps[NPU_MAX_RANK * 2], dims[NPU_MAX_RANK];
	int r = 0;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st && !in(g, n, 1))
		st = npu_sh_err(n, NPU_ERR_FORMAT, "the repeats input is missing");
	if (!st)
		st = npu_sh_const_ints(g, n, 1, reps, NPU_MAX_RANK * 2, &r);
	if (st)
		return st;
	if (r != x->rank)
		return npu_sh_err(n, NPU_ERR_SHAPE, "repeats has %d values for a tensor of rank %d", r,
				  x->rank);
	for (int d = 0; d < r; d++) {
		if (reps[d] < 0 || (reps[d] && x->dims[d] > NPU_IR_DIM_MAX / reps[d]))
			return npu_sh_err(n, NPU_ERR_SHAPE, "repeat %" PRId64 " is invalid", reps[d]);
		dims[d] = x->dims[d] * reps[d];
	}
	return npu_sh_set_out(g, n, 0, x->dtype, r, dims);
}

/* ---- gathers and scatters ---- */

npu_status npu_ir_shape_gather(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *ind;
	int64_t axis, dims[NPU_MAX_RANK];
	int a = 0, r = 0;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &ind);
	if (!st)
		st = npu_ir_attr_int(n, "axis", 0, &axis);
	if (!st)
		st = npu_sh_axis(n, axis, x->rank, &a);
	if (st)
		return st;
	if (!is_int(ind->dtype))
		return npu_sh_err(n, NPU_ERR_SHAPE, "indices '%s' must be int32 or int64", ind->name);
	if (x->rank - 1 + ind->rank > NPU_MAX_RANK)
		return npu_sh_err(n, NPU_ERR_UNSUPPORTED, "output rank exceeds %d", NPU_MAX_RANK);
	for (int d = 0; d < a; d++)
		dims[r++] = x->dims[d];
	for (int d = 0; d < ind->rank; d++)
		dims[r++] = ind->dims[d];
	for (int d = a + 1; d < x->rank; d++)
		dims[r++] = x->dims[d];
	return npu_sh_set_out(g, n, 0, x->dtype, r, dims);
}

/* GatherElements: the indices' shape. */
npu_status npu_ir_shape_gather_elements(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *ind;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &ind);
	if (st)
		return st;
	if (!is_int(ind->dtype) || ind->rank != x->rank)
		return npu_sh_err(n, NPU_ERR_SHAPE, "indices must be integers of the data's rank");
	return npu_sh_set_out(g, n, 0, x->dtype, ind->rank, ind->dims);
}

/* GatherND: indices.shape[:-1] + data.shape[batch_dims + m:]. */
npu_status npu_ir_shape_gather_nd(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *ind;
	int64_t bd = 0, m, dims[NPU_MAX_RANK];
	int r = 0;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &ind);
	if (!st)
		st = npu_ir_attr_int(n, "batch_dims", 0, &bd);
	if (st)
		return st;
	if (!is_int(ind->dtype) || ind->rank < 1)
		return npu_sh_err(n, NPU_ERR_SHAPE, "indices must be integers of rank 1 or more");
	m = ind->dims[ind->rank - 1];
	if (bd < 0 || bd >= ind->rank || bd + m > x->rank ||
	    ind->rank - 1 + x->rank - bd - m > NPU_MAX_RANK)
		return npu_sh_err(n, NPU_ERR_SHAPE, "batch_dims and the index length do not fit the data");
	for (int d = 0; d < ind->rank - 1; d++)
		dims[r++] = ind->dims[d];
	for (int64_t d = bd + m; d < x->rank; d++)
		dims[r++] = x->dims[d];
	return npu_sh_set_out(g, n, 0, x->dtype, r, dims);
}

/* Scatter, ScatterElements, ScatterND: the data's shape. */
npu_status npu_ir_shape_scatter(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *ind, *u;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &ind);
	if (!st)
		st = npu_sh_need_in(g, n, 2, &u);
	if (!st && !is_int(ind->dtype))
		st = npu_sh_err(n, NPU_ERR_SHAPE, "indices must be int32 or int64");
	if (!st)
		st = npu_sh_same_dtype(n, x, u);
	return st ? st : npu_sh_set_like(g, n, 0, x);
}

/*
 * npu.ScatterRows (an operator of libnpu's own, compile/lower_scatter.c):
 * data (rank >= 1), rows [S] (int32; int64 before narrowing), updates of
 * data's shape with dim axis = S; the output is data's shape and dtype,
 * data with row rows[i] along axis replaced by updates' row i.
 */
npu_status npu_ir_shape_scatter_rows(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *rows, *u;
	int64_t axis;
	int a = 0;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &rows);
	if (!st)
		st = npu_sh_need_in(g, n, 2, &u);
	if (!st)
		st = npu_sh_need_rank(n, x, 1, NPU_MAX_RANK);
	if (!st)
		st = npu_ir_attr_int(n, "axis", 0, &axis);
	if (!st)
		st = npu_sh_axis(n, axis, x->rank, &a);
	if (st)
		return st;
	if (!is_int(rows->dtype) || rows->rank != 1)
		return npu_sh_err(n, NPU_ERR_SHAPE,
				  "rows '%s' must be a list of int32 row numbers, not %s of rank %d",
				  rows->name, dts(rows->dtype), rows->rank);
	if (u->dtype != x->dtype)
		return npu_sh_err(n, NPU_ERR_SHAPE, "updates '%s' are %s, data '%s' is %s: they must match",
				  u->name, dts(u->dtype), x->name, dts(x->dtype));
	if (u->rank != x->rank)
		return npu_sh_err(n, NPU_ERR_SHAPE, "updates '%s' have rank %d, data '%s' %d: they must match",
				  u->name, u->rank, x->name, x->rank);
	for (int d = 0; d < x->rank; d++) {
		int64_t want = d == a ? rows->dims[0] : x->dims[d];

		if (u->dims[d] != want)
			return npu_sh_err(n, NPU_ERR_SHAPE,
					  "updates '%s' dim %d is %" PRId64 ", expected %" PRId64
					  " (%s along axis %d)", u->name, d, u->dims[d], want,
					  d == a ? "one row per entry of rows" : "data's", a);
	}
	return npu_sh_set_like(g, n, 0, x);
}

/* ---- resampling ---- */

static npu_status resize_dims(npu_ir_graph *g, npu_ir_node *n, const npu_ir_tensor *x,
			      const float *scales, int nsc, const int64_t *sizes, int nsz,
			      const int64_t *axes_in, int na)
{
	int64_t axes[NPU_MAX_RANK * 2], dims[NPU_MAX_RANK];
	const char *policy = "stretch";
	npu_status st;

	if (na < 0) {
		na = x->rank;
		for (int i = 0; i < na; i++)
			axes[i] = i;
	} else {
		memcpy(axes, axes_in, (size_t)na * sizeof(int64_t));
	}
	memcpy(dims, x->dims, sizeof(dims));
	if ((nsc > 0) == (nsz > 0))
		return npu_sh_err(n, NPU_ERR_SHAPE, "exactly one of scales and sizes must be given");
	if ((nsc > 0 ? nsc : nsz) != na)
		return npu_sh_err(n, NPU_ERR_SHAPE, "%s has %d values, expected %d",
				  nsc > 0 ? "scales" : "sizes", nsc > 0 ? nsc : nsz, na);
	if (n->opset >= 18) {
		st = npu_ir_attr_string(n, "keep_aspect_ratio_policy", "stretch", &policy);
		if (st)
			return st;
	}
	if (nsz > 0 && strcmp(policy, "stretch")) {
		bool larger = !strcmp(policy, "not_smaller");
		double scale = larger ? 0 : INFINITY;

		if (!larger && strcmp(policy, "not_larger"))
			return npu_sh_err(n, NPU_ERR_FORMAT, "keep_aspect_ratio_policy '%s'", policy);
		for (int i = 0; i < na; i++) {
			int a = 0;
			double s;

			st = npu_sh_axis(n, axes[i], x->rank, &a);
			if (st)
				return st;
			if (!x->dims[a])
				return npu_sh_err(n, NPU_ERR_SHAPE, "cannot keep the aspect ratio of an empty dimension");
			s = (double)sizes[i] / (double)x->dims[a];
			scale = larger ? (s > scale ? s : scale) : (s < scale ? s : scale);
		}
		for (int i = 0; i < na; i++) {
			int a = (int)(axes[i] < 0 ? axes[i] + x->rank : axes[i]);
			double v = floor(scale * (double)x->dims[a] + 0.5);

			if (!(v >= 0 && v <= (double)NPU_IR_DIM_MAX))
				return npu_sh_err(n, NPU_ERR_SHAPE, "output size out of range");
			dims[a] = (int64_t)v;
		}
		return npu_sh_set_out(g, n, 0, x->dtype, x->rank, dims);
	}
	for (int i = 0; i < na; i++) {
		int a = 0;

		st = npu_sh_axis(n, axes[i], x->rank, &a);
		if (st)
			return st;
		if (nsz > 0) {
			dims[a] = sizes[i];
		} else {
			/* As onnxruntime: the product in float, truncated. */
			float v = (float)x->dims[a] * scales[i];

			if (!(scales[i] > 0) || !(v >= 0 && v <= (float)NPU_IR_DIM_MAX))
				return npu_sh_err(n, NPU_ERR_SHAPE, "scale %g out of range", (double)scales[i]);
			dims[a] = (int64_t)floorf(v);
		}
	}
	return npu_sh_set_out(g, n, 0, x->dtype, x->rank, dims);
}

npu_status npu_ir_shape_resize(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	float scales[NPU_MAX_RANK * 2];
	int64_t sizes[NPU_MAX_RANK * 2], axes[NPU_MAX_RANK * 2];
	const int64_t *av;
	int nsc = 0, nsz = 0, na = -1, si = n->opset < 11 ? 1 : 2;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (st)
		return st;
	if (in(g, n, si) && npu_ir_numel(in(g, n, si)) > 0)
		st = npu_sh_const_floats(g, n, si, scales, NPU_MAX_RANK * 2, &nsc);
	if (!st && n->opset >= 11 && in(g, n, 3) && npu_ir_numel(in(g, n, 3)) > 0)
		st = npu_sh_const_ints(g, n, 3, sizes, NPU_MAX_RANK * 2, &nsz);
	if (!st && n->opset >= 18)
		st = npu_ir_attr_ints(n, "axes", &av, &na);
	if (st)
		return st;
	if (na > NPU_MAX_RANK * 2)
		return npu_sh_err(n, NPU_ERR_SHAPE, "too many axes");
	for (int i = 0; i < na; i++)
		axes[i] = av[i];
	return resize_dims(g, n, x, scales, nsc, sizes, nsz, axes, na);
}

npu_status npu_ir_shape_upsample(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	float scales[NPU_MAX_RANK * 2];
	const float *sv;
	int nsc = 0;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (st)
		return st;
	if (n->opset >= 9) {
		if (!in(g, n, 1))
			return npu_sh_err(n, NPU_ERR_FORMAT, "the scales input is missing");
		st = npu_sh_const_floats(g, n, 1, scales, NPU_MAX_RANK * 2, &nsc);
	} else {
		st = npu_ir_attr_floats(n, "scales", &sv, &nsc);
		if (!st && (nsc < 0 || nsc > NPU_MAX_RANK * 2))
			st = npu_sh_err(n, NPU_ERR_FORMAT, "attribute 'scales' is missing or too long");
		for (int i = 0; !st && i < nsc; i++)
			scales[i] = sv[i];
	}
	return st ? st : resize_dims(g, n, x, scales, nsc, NULL, 0, NULL, -1);
}

/* GridSample (2-D): [N, C, H, W] sampled at grid [N, Ho, Wo, 2]. */
npu_status npu_ir_shape_grid_sample(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *grid;
	int64_t dims[4];
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_float(n, x);
	if (!st)
		st = npu_sh_need_in(g, n, 1, &grid);
	if (st)
		return st;
	if (x->rank != 4 || grid->rank != 4 || grid->dims[0] != x->dims[0] || grid->dims[3] != 2)
		return npu_sh_err(n, NPU_ERR_UNSUPPORTED, "only 2-D sampling ([N, C, H, W] with a "
				  "[N, Ho, Wo, 2] grid) is supported");
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	dims[2] = grid->dims[1];
	dims[3] = grid->dims[2];
	return npu_sh_set_out(g, n, 0, x->dtype, 4, dims);
}
