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
 *   MaxPool's Indices output: per kernel tap a strided Slice, ArgMax over
 *   the taps, constant offsets gathered and a constant base added.
 */
#include <math.h>
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

/* A new tensor @x[.., lo::step] along axes 2 and 3 (a strided Slice). */
static npu_status slice_hw(npu_ir_graph *g, const char *name, int x, const int64_t *lo,
			   const int64_t *hi, const int64_t *step, const int64_t *yd, int *id)
{
	int s, e, a, st_, out;
	npu_status st;

	if ((st = npu_rw_ints(g, lo, 2, &s)) || (st = npu_rw_ints(g, hi, 2, &e)) ||
	    (st = npu_rw_ints(g, (int64_t[]){ 2, 3 }, 2, &a)) ||
	    (st = npu_rw_ints(g, step, 2, &st_)) ||
	    (st = npu_rw_tensor(g, g->tensors[x].dtype, 4, yd, &out)))
		return st;
	*id = out;
	return npu_rw_op(g, "Slice", 13, name, (int[]){ x, s, e, a, st_ }, 5, &out, 1, NULL);
}

/*
 * MaxPool's Indices output (2-D, float32): the input padded with -inf, one
 * strided Slice per kernel tap (the [N, C, Ho, Wo] values that tap sees), the
 * taps side by side, ArgMax over them (the first on ties, as ONNX's scan
 * order), a Gather of each tap's constant offset and an Add of each
 * window's constant base: the flat index into x, row-major (storage_order
 * 0) or column-major over H, W (1).  The node keeps computing Y.
 */
npu_status npu_rewrite_maxpool_indices(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	const npu_ir_tensor *iy = npu_ir_output(g, n, 1);
	const int64_t *ks, *s, *d = NULL, *p;
	int nk, ns, nd = -1, np, xi = n->inputs[0], iid = n->n_outputs > 1 ? n->outputs[1] : -1;
	int64_t order = 0, N, C, H, W, Ho, Wo, K, M, ph, pw, need_h, need_w, dh = 1, dw = 1;
	int64_t pads[8] = { 0 }, sd[4], hd[2];
	int xp, cat, am, off, base, sum, *taps;
	int32_t *offv, *basev;
	float ninf = -INFINITY;
	char name[128];
	npu_status st;

	*applied = false;
	if (!x || !y || !iy || x->rank != 4 || x->dtype != NPU_DTYPE_FLOAT32 ||
	    iy->dtype != NPU_DTYPE_INT32)
		return NPU_OK;
	if ((st = npu_ir_attr_ints(n, "kernel_shape", &ks, &nk)) ||
	    (st = npu_ir_attr_ints(n, "strides", &s, &ns)) ||
	    (st = npu_ir_attr_ints(n, "pads", &p, &np)) ||
	    (st = npu_ir_attr_int(n, "storage_order", 0, &order)))
		return st;
	if (npu_ir_attr_find(n, "dilations") && (st = npu_ir_attr_ints(n, "dilations", &d, &nd)))
		return st;
	if (nk != 2 || ns != 2 || np != 4 || (nd != -1 && nd != 2))
		return NPU_OK;
	if (nd == 2) {
		dh = d[0];
		dw = d[1];
	}
	N = x->dims[0];
	C = x->dims[1];
	H = x->dims[2];
	W = x->dims[3];
	Ho = y->dims[2];
	Wo = y->dims[3];
	K = ks[0] * ks[1];
	M = N * C * Ho * Wo;
	if (K > 256 || M > (1 << 20) || N * C * H * W > INT32_MAX)
		return NPU_OK;
	/* Padded extent every window reads (ceil_mode windows may run past pads). */
	need_h = (Ho - 1) * s[0] + (ks[0] - 1) * dh + 1;
	need_w = (Wo - 1) * s[1] + (ks[1] - 1) * dw + 1;
	ph = need_h - p[0] - H;
	pw = need_w - p[1] - W;
	pads[2] = p[0];
	pads[3] = p[1];
	pads[6] = ph > 0 ? ph : 0;
	pads[7] = pw > 0 ? pw : 0;
	taps = malloc((size_t)K * sizeof(*taps));
	offv = malloc((size_t)K * sizeof(*offv));
	basev = malloc((size_t)M * sizeof(*basev));
	if (!taps || !offv || !basev) {
		free(taps);
		free(offv);
		free(basev);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	for (int64_t i = 0; i < ks[0]; i++)
		for (int64_t j = 0; j < ks[1]; j++)
			offv[i * ks[1] + j] = (int32_t)(order ? i * dh + j * dw * H : i * dh * W + j * dw);
	for (int64_t c = 0, m = 0; c < N * C; c++)
		for (int64_t oh = 0; oh < Ho; oh++)
			for (int64_t ow = 0; ow < Wo; ow++, m++) {
				int64_t h0 = oh * s[0] - p[0], w0 = ow * s[1] - p[1];

				basev[m] = (int32_t)(c * H * W + (order ? h0 + w0 * H : h0 * W + w0));
			}
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	npu_rw_detach(g, k, iid);
	xp = xi;
	st = NPU_OK;
	if (p[0] || p[1] || ph > 0 || pw > 0) {
		int pv, cv;
		float *f = malloc(sizeof(float));
		int64_t pd[4] = { N, C, H + p[0] + pads[6], W + p[1] + pads[7] }, one = 1;

		if (!f)
			st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		else
			memcpy(f, &ninf, sizeof(ninf));
		/* npu_rw_const takes f, also when it fails */
		if (!st && !(st = npu_rw_const(g, NPU_DTYPE_FLOAT32, 1, &one, f, &cv)) &&
		    !(st = npu_rw_ints(g, pads, 8, &pv)) &&
		    !(st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, 4, pd, &xp)))
			st = npu_rw_op(g, "Pad", 13, name, (int[]){ xi, pv, cv }, 3, &xp, 1, NULL);
	}
	sd[0] = N;
	sd[1] = C;
	sd[2] = Ho;
	sd[3] = Wo;
	hd[0] = M;
	hd[1] = 1;
	for (int64_t i = 0; i < ks[0] && !st; i++)
		for (int64_t j = 0; j < ks[1] && !st; j++) {
			int64_t lo[2] = { i * dh, j * dw }, step[2] = { s[0], s[1] }, hi[2];
			int t;

			hi[0] = lo[0] + (Ho - 1) * s[0] + 1;
			hi[1] = lo[1] + (Wo - 1) * s[1] + 1;
			if (!(st = slice_hw(g, name, xp, lo, hi, step, sd, &t)))
				st = npu_rw_reshape(g, name, t, 2, hd, -1, &taps[i * ks[1] + j]);
		}
	hd[1] = K;
	if (!st)
		st = K > 1 ? npu_rw_concat(g, name, taps, (int)K, 1, 2, hd, -1, &cat) :
			     (cat = taps[0], NPU_OK);
	if (!st && !(st = npu_rw_tensor(g, NPU_DTYPE_INT32, 1, &M, &am))) {
		npu_ir_node *a;

		st = npu_rw_op(g, "ArgMax", 13, name, &cat, 1, &am, 1, NULL);
		a = &g->nodes[g->n_nodes - 1];
		if (!st)
			st = npu_ir_set_attr_int(a, "axis", 1);
		if (!st)
			st = npu_ir_set_attr_int(a, "keepdims", 0);
	}
	if (!st)
		st = npu_rw_const(g, NPU_DTYPE_INT32, 1, &K, offv, &off);
	else
		free(offv);
	offv = NULL;
	if (!st)
		st = npu_rw_const(g, NPU_DTYPE_INT32, 1, &M, basev, &base);
	else
		free(basev);
	basev = NULL;
	if (!st && !(st = npu_rw_tensor(g, NPU_DTYPE_INT32, 1, &M, &sum)))
		st = npu_rw_op(g, "Gather", 13, name, (int[]){ off, am }, 2, &sum, 1, NULL);
	if (!st) {
		int idx;

		if (!(st = npu_rw_tensor(g, NPU_DTYPE_INT32, 1, &M, &idx)) &&
		    !(st = npu_rw_op(g, "Add", 14, name, (int[]){ sum, base }, 2, &idx, 1, NULL)))
			st = npu_rw_reshape(g, name, idx, 4, sd, iid, &idx);
	}
	free(taps);
	return st;
}
