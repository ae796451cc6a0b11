// SPDX-License-Identifier: MIT
/*
 * Building blocks of the graph rewrites: new tensors, constants and nodes
 * on a shape-inferred graph, and the moves several rewrites share.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_rewrite_priv.h"

npu_status npu_rw_tensor(npu_ir_graph *g, npu_dtype dt, int rank, const int64_t *dims,
			 int *id)
{
	return npu_ir_add_tensor(g, NULL, dt, rank, dims, id);
}

/* A constant tensor taking @data (malloc'd; freed on failure). */
npu_status npu_rw_const(npu_ir_graph *g, npu_dtype dt, int rank, const int64_t *dims,
			void *data, int *id)
{
	npu_status st = npu_rw_tensor(g, dt, rank, dims, id);
	int64_t n = 1;

	if (st) {
		free(data);
		return st;
	}
	for (int i = 0; i < rank; i++)
		n *= dims[i];
	return npu_ir_set_const_owned(g, *id, data, (size_t)n * npu_dtype_size(dt));
}

npu_status npu_rw_ints(npu_ir_graph *g, const int64_t *v, int n, int *id)
{
	int64_t *d = malloc((size_t)(n ? n : 1) * sizeof(*d)), dim = n;

	if (!d)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	if (n)	/* @v may be NULL for none (a Reshape to a scalar) */
		memcpy(d, v, (size_t)n * sizeof(*d));
	return npu_rw_const(g, NPU_DTYPE_INT64, 1, &dim, d, id);
}

/* Append node @op at @opset; *@id gets its id (may be NULL). */
npu_status npu_rw_op(npu_ir_graph *g, const char *op, int opset, const char *name,
		     const int *ins, int nin, const int *outs, int nout, int *id)
{
	int k;
	npu_status st = npu_ir_add_node(g, op, name, ins, nin, outs, nout, &k);

	if (st)
		return st;
	g->nodes[k].opset = opset;
	if (id)
		*id = k;
	return NPU_OK;
}

/* @y, or a new tensor of that dtype and shape when @y < 0. */
npu_status npu_rw_out(npu_ir_graph *g, int y, npu_dtype dt, int rank,
		      const int64_t *dims, int *id)
{
	if (y >= 0) {
		*id = y;
		return NPU_OK;
	}
	return npu_rw_tensor(g, dt, rank, dims, id);
}

bool npu_rw_bshape(const npu_ir_tensor *a, const npu_ir_tensor *b, int64_t *dims, int *rank)
{
	*rank = a->rank > b->rank ? a->rank : b->rank;
	for (int d = 0; d < *rank; d++) {
		int ia = d - (*rank - a->rank), ib = d - (*rank - b->rank);
		int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;

		if (da != db && da != 1 && db != 1)
			return false;
		dims[d] = da == 1 ? db : da;
	}
	return true;
}

npu_status npu_rw_binary(npu_ir_graph *g, const char *op, int opset, const char *name, int a,
			 int b, int y, int *id)
{
	int64_t dims[NPU_MAX_RANK];
	int r;
	npu_status st;

	if (!npu_rw_bshape(&g->tensors[a], &g->tensors[b], dims, &r))
		return npu_fail(NPU_ERR_SHAPE, "%s operands do not broadcast", op);
	st = npu_rw_out(g, y, g->tensors[a].dtype, r, dims, id);
	return st ? st : npu_rw_op(g, op, opset, name, (int[]){ a, b }, 2, id, 1, NULL);
}

/* Node @k no longer produces tensor @t: the rewrite will. */
void npu_rw_detach(npu_ir_graph *g, int k, int t)
{
	for (int i = 0; i < g->nodes[k].n_outputs; i++)
		if (g->nodes[k].outputs[i] == t)
			g->nodes[k].outputs[i] = -1;
	g->tensors[t].producer = -1;
}

npu_status npu_rw_reshape(npu_ir_graph *g, const char *name, int x, int rank,
			  const int64_t *dims, int y, int *id)
{
	int sh;
	npu_status st = npu_rw_ints(g, dims, rank, &sh);

	if (!st)
		st = npu_rw_out(g, y, g->tensors[x].dtype, rank, dims, id);
	if (!st)
		st = npu_rw_op(g, "Reshape", 14, name, (int[]){ x, sh }, 2, id, 1, NULL);
	return st;
}

/* *@id = elements [@i, @i + 1) of @x along @axis (any dtype). */
npu_status npu_rw_slice_one(npu_ir_graph *g, const char *name, int x, int axis, int64_t i,
			    int *id)
{
	int64_t dims[NPU_MAX_RANK], lo = i, hi = i + 1, ax = axis;
	int s, e, a;
	npu_status st;

	memcpy(dims, g->tensors[x].dims, sizeof(dims));
	dims[axis] = 1;
	if ((st = npu_rw_ints(g, &lo, 1, &s)) || (st = npu_rw_ints(g, &hi, 1, &e)) ||
	    (st = npu_rw_ints(g, &ax, 1, &a)) ||
	    (st = npu_rw_tensor(g, g->tensors[x].dtype, g->tensors[x].rank, dims, id)))
		return st;
	return npu_rw_op(g, "Slice", 13, name, (int[]){ x, s, e, a }, 4, id, 1, NULL);
}

/* *@id = elements [@lo, @hi) of @x along @axis. */
npu_status npu_rw_slice(npu_ir_graph *g, const char *name, int x, int axis, int64_t lo,
			int64_t hi, int *id)
{
	int64_t dims[NPU_MAX_RANK], ax = axis;
	int s, e, a;
	npu_status st;

	memcpy(dims, g->tensors[x].dims, sizeof(dims));
	dims[axis] = hi - lo;
	if ((st = npu_rw_ints(g, &lo, 1, &s)) || (st = npu_rw_ints(g, &hi, 1, &e)) ||
	    (st = npu_rw_ints(g, &ax, 1, &a)) ||
	    (st = npu_rw_tensor(g, g->tensors[x].dtype, g->tensors[x].rank, dims, id)))
		return st;
	return npu_rw_op(g, "Slice", 13, name, (int[]){ x, s, e, a }, 4, id, 1, NULL);
}

/* Concat @n parts along @axis into @y (or a new tensor) of @dims. */
npu_status npu_rw_concat(npu_ir_graph *g, const char *name, const int *parts, int n, int axis,
			 int rank, const int64_t *dims, int y, int *id)
{
	int k;
	npu_status st = npu_rw_out(g, y, g->tensors[parts[0]].dtype, rank, dims, id);

	if (!st)
		st = npu_rw_op(g, "Concat", 13, name, parts, n, id, 1, &k);
	if (!st)
		st = npu_ir_set_attr_int(&g->nodes[k], "axis", axis);
	return st;
}

int64_t npu_rw_clamp(int64_t v, int64_t n)
{
	return v < 0 ? 0 : v >= n ? n - 1 : v;
}

/*
 * *@res = @x (float32) mapped along @axis by the matrix @m [in][out]
 * (malloc'd, taken): a MatMul on the last axis, Transposes around it for
 * the others.  Writes @y when >= 0, else a new tensor.
 */
npu_status npu_rw_map_axis(npu_ir_graph *g, const char *name, int x, int axis, int64_t out,
			   float *m, int y, int *res)
{
	int r = g->tensors[x].rank, last = r - 1, mt, t1 = x, t2, k;
	int64_t dims[NPU_MAX_RANK], mdims[2], perm[NPU_MAX_RANK];
	npu_status st;

	memcpy(dims, g->tensors[x].dims, sizeof(dims));
	mdims[0] = dims[axis];
	mdims[1] = out;
	if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, 2, mdims, m, &mt)))
		return st;
	for (int i = 0; i < r; i++)
		perm[i] = i;
	perm[axis] = last;
	perm[last] = axis;
	if (axis != last) {
		int64_t td[NPU_MAX_RANK];

		memcpy(td, dims, sizeof(td));
		td[axis] = dims[last];
		td[last] = dims[axis];
		if ((st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, td, &t1)) ||
		    (st = npu_rw_op(g, "Transpose", 13, name, &x, 1, &t1, 1, &k)) ||
		    (st = npu_ir_set_attr_ints(&g->nodes[k], "perm", perm, r)))
			return st;
		memcpy(dims, td, sizeof(dims));
	}
	dims[last] = out;
	st = axis == last ? npu_rw_out(g, y, NPU_DTYPE_FLOAT32, r, dims, &t2) :
	     npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, dims, &t2);
	if (!st)
		st = npu_rw_op(g, "MatMul", 13, name, (int[]){ t1, mt }, 2, &t2, 1, NULL);
	if (st || axis == last) {
		*res = t2;
		return st;
	}
	{
		int64_t yd[NPU_MAX_RANK];

		memcpy(yd, dims, sizeof(yd));
		yd[axis] = dims[last];
		yd[last] = dims[axis];
		if ((st = npu_rw_out(g, y, NPU_DTYPE_FLOAT32, r, yd, res)) ||
		    (st = npu_rw_op(g, "Transpose", 13, name, &t2, 1, res, 1, &k)))
			return st;
		return npu_ir_set_attr_ints(&g->nodes[k], "perm", perm, r);
	}
}
