// SPDX-License-Identifier: MIT
/*
 * Rewrites of detection and ranking operators (issue 17) into operators
 * the NPU runs:
 *
 *   Compress with a constant condition: the kept slices are a row gather
 *   (Slices and a Concat, exact for any dtype).
 *   OneHot with a constant depth and values: Equal of the indices with
 *   the constant 0..depth-1 (and with -depth..-1 for negative indices),
 *   Or, then Where(on, off): exact.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_rewrite_priv.h"

npu_status npu_rewrite_compress(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *c = npu_ir_input(g, n, 1);
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	int64_t axis = 0, outer = 1, D, inner = 1, cnt = 0, kept, *idx, yd[NPU_MAX_RANK];
	int yid = n->outputs[0], xi = n->inputs[0], yr, a;
	bool flat = !npu_ir_attr_find(n, "axis");
	size_t es = x ? npu_dtype_size(x->dtype) : 0;
	char name[128];
	npu_status st;

	*applied = false;
	if (!x || !c || !y || !npu_ir_is_const(c) || c->rank != 1 || !es)
		return NPU_OK;
	if (!flat && (st = npu_ir_attr_int(n, "axis", 0, &axis)))
		return st;
	a = (int)(axis < 0 ? axis + x->rank : axis);
	if (flat) {
		D = npu_ir_numel(x);
	} else {
		if (a < 0 || a >= x->rank)
			return NPU_OK;
		for (int d = 0; d < x->rank; d++) {
			if (d < a)
				outer *= x->dims[d];
			else if (d > a)
				inner *= x->dims[d];
		}
		D = x->dims[a];
	}
	kept = outer > 0 && inner > 0 ? npu_ir_numel(y) / (outer * inner) : 0;
	/* Nothing kept (an empty output) or an empty input: nothing to gather. */
	if (!kept || !outer || !inner || outer * kept > 4096)
		return NPU_OK;
	idx = malloc((size_t)(outer * kept) * sizeof(*idx));
	if (!idx)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < D && i < c->dims[0]; i++) {
			size_t cs = npu_dtype_size(c->dtype);
			const unsigned char *p = (const unsigned char *)c->data + (size_t)i * cs;
			bool on = false;

			for (size_t b = 0; b < cs; b++)
				on |= p[b] != 0;
			if (on && cnt < outer * kept)
				idx[cnt++] = o * D + i;
		}
	if (cnt != outer * kept) {
		free(idx);
		return npu_fail(NPU_ERR_INTERNAL, "Compress: %lld slices kept, the shape says %lld",
				(long long)cnt, (long long)(outer * kept));
	}
	yr = y->rank;
	memcpy(yd, y->dims, sizeof(yd));
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	st = npu_rw_gather_rows(g, name, xi, outer * D, inner, idx, (int)cnt, yr, yd, yid);
	free(idx);
	return st;
}

/* Element @i of a @dt constant buffer @p set to @v. */
static bool put_value(void *p, npu_dtype dt, int64_t i, double v)
{
	switch (dt) {
	case NPU_DTYPE_FLOAT32: ((float *)p)[i] = (float)v; return true;
	case NPU_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)v; return true;
	case NPU_DTYPE_INT64: ((int64_t *)p)[i] = (int64_t)v; return true;
	case NPU_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)v; return true;
	case NPU_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; return true;
	default: return false;
	}
}

/* A scalar-like constant [1] * @rank of @dt holding @v, or a ramp along @axis. */
static npu_status const_ramp(npu_ir_graph *g, npu_dtype dt, int rank, int axis, int64_t len,
			     int64_t start, int *id)
{
	int64_t dims[NPU_MAX_RANK];
	void *d = calloc((size_t)len, npu_dtype_size(dt));

	if (!d)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int i = 0; i < rank; i++)
		dims[i] = i == axis ? len : 1;
	for (int64_t j = 0; j < len; j++)
		put_value(d, dt, j, (double)(start + j));
	return npu_rw_const(g, dt, rank, dims, d, id);
}

npu_status npu_rewrite_onehot(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *ind = npu_ir_input(g, n, 0), *val = npu_ir_input(g, n, 2);
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	int64_t axis, depth, ud[NPU_MAX_RANK], yd[NPU_MAX_RANK];
	int yid = n->outputs[0], ii = n->inputs[0], r, a, u, r0, r1, e0, e1, c, on, off;
	npu_dtype it, yt;
	float v[2];
	int64_t one = 1;
	char name[128];
	int cnt;
	void *von, *voff;
	npu_status st;

	*applied = false;
	if (!ind || !val || !y || !npu_ir_is_const(val) || npu_ir_numel(val) != 2)
		return NPU_OK;
	if (val->dtype == NPU_DTYPE_FLOAT32 || val->dtype == NPU_DTYPE_FLOAT16 ||
	    val->dtype == NPU_DTYPE_BFLOAT16) {
		if (npu_ir_const_floats(val, v, 2, &cnt))
			return NPU_OK;
	} else {
		int64_t iv[2];

		/* Integer values read exactly (beyond 2^24 they would not be). */
		if (npu_ir_const_ints(val, iv, 2, &cnt))
			return NPU_OK;
		v[0] = (float)iv[0];
		v[1] = (float)iv[1];
		if ((int64_t)v[0] != iv[0] || (int64_t)v[1] != iv[1])
			return NPU_OK;
	}
	it = ind->dtype;
	yt = y->dtype;
	if ((it != NPU_DTYPE_FLOAT32 && it != NPU_DTYPE_INT32 && it != NPU_DTYPE_INT64 &&
	     it != NPU_DTYPE_INT8 && it != NPU_DTYPE_UINT8) ||
	    !put_value(&(int64_t){ 0 }, yt, 0, 0))
		return NPU_OK;
	if ((st = npu_ir_attr_int(n, "axis", -1, &axis)))
		return st;
	r = y->rank;
	a = (int)(axis < 0 ? axis + r : axis);
	if (a < 0 || a >= r)
		return NPU_OK;
	depth = y->dims[a];
	memcpy(yd, y->dims, sizeof(yd));
	for (int d = 0, j = 0; d < r; d++)
		ud[d] = d == a ? 1 : ind->dims[j++];
	von = calloc(1, 8);
	voff = calloc(1, 8);
	if (!von || !voff) {
		free(von);
		free(voff);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	put_value(voff, yt, 0, v[0]);
	put_value(von, yt, 0, v[1]);
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	st = npu_rw_const(g, yt, 1, &one, von, &on);
	if (st) {
		free(voff);
		return st;
	}
	if ((st = npu_rw_const(g, yt, 1, &one, voff, &off)) ||
	    (st = npu_rw_reshape(g, name, ii, r, ud, -1, &u)) ||
	    (st = const_ramp(g, it, r, a, depth, 0, &r0)) ||
	    (st = const_ramp(g, it, r, a, depth, -depth, &r1)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_BOOL, r, yd, &e0)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_BOOL, r, yd, &e1)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_BOOL, r, yd, &c)) ||
	    (st = npu_rw_op(g, "Equal", 13, name, (int[]){ u, r0 }, 2, &e0, 1, NULL)) ||
	    (st = npu_rw_op(g, "Equal", 13, name, (int[]){ u, r1 }, 2, &e1, 1, NULL)) ||
	    (st = npu_rw_op(g, "Or", 7, name, (int[]){ e0, e1 }, 2, &c, 1, NULL)))
		return st;
	return npu_rw_op(g, "Where", 16, name, (int[]){ c, on, off }, 3, &yid, 1, NULL);
}
