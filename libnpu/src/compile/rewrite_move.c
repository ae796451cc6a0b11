// SPDX-License-Identifier: MIT
/*
 * Data movement: Pad (edge, reflect, wrap), Gather with constant indices,
 * Expand, Tile, DepthToSpace and SpaceToDepth, from Slices, Concats,
 * Reshapes and Transposes (exact, any dtype).
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_rewrite_priv.h"

/* Source index of padded position @j (-pb <= j < n + pe) along an axis of @n. */
static int64_t pad_source(const char *mode, int64_t j, int64_t n)
{
	if (!strcmp(mode, "edge"))
		return npu_rw_clamp(j, n);
	if (!strcmp(mode, "wrap"))
		return ((j % n) + n) % n;
	return j < 0 ? -j : j >= n ? 2 * (n - 1) - j : j;	/* reflect */
}

npu_status npu_rewrite_pad(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0);
	int64_t pads[2 * NPU_MAX_RANK], axes[NPU_MAX_RANK], pb[NPU_MAX_RANK] = { 0 };
	int64_t pe[NPU_MAX_RANK] = { 0 }, dims[NPU_MAX_RANK];
	int np = 0, na = 0, r, cur, yid, last = -1, *parts = NULL;
	const char *mode;
	char name[128];
	npu_status st;

	*applied = false;
	if (!x || (st = npu_ir_attr_string(n, "mode", "constant", &mode)))
		return x ? st : NPU_OK;
	if (strcmp(mode, "edge") && strcmp(mode, "reflect") && strcmp(mode, "wrap"))
		return NPU_OK;
	r = x->rank;
	if (n->opset < 11) {
		const int64_t *pv;

		if ((st = npu_ir_attr_ints(n, "pads", &pv, &np)))
			return st;
		if (np != 2 * r)
			return NPU_OK;
		memcpy(pads, pv, (size_t)np * sizeof(*pads));
	} else if (!npu_ir_input(g, n, 1) ||
		   npu_ir_const_ints(npu_ir_input(g, n, 1), pads, 2 * NPU_MAX_RANK, &np)) {
		return NPU_OK;
	}
	if (npu_ir_input(g, n, 3)) {
		if (npu_ir_const_ints(npu_ir_input(g, n, 3), axes, NPU_MAX_RANK, &na))
			return NPU_OK;
	} else {
		na = r;
		for (int a = 0; a < r; a++)
			axes[a] = a;
	}
	if (np != 2 * na)
		return NPU_OK;
	for (int i = 0; i < na; i++) {
		int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];

		if (a < 0 || a >= r || pads[i] < 0 || pads[na + i] < 0)
			return NPU_OK;
		pb[a] = pads[i];
		pe[a] = pads[na + i];
	}
	memcpy(dims, x->dims, sizeof(dims));
	for (int a = 0; a < r; a++) {
		int64_t lim = !strcmp(mode, "reflect") ? dims[a] - 1 :
			      !strcmp(mode, "wrap") ? dims[a] : INT64_MAX;

		if ((pb[a] || pe[a]) && (dims[a] == 0 || pb[a] > lim || pe[a] > lim ||
					 pb[a] + pe[a] > 4096))
			return NPU_OK;
		if (pb[a] || pe[a])
			last = a;
	}
	if (last < 0)
		return NPU_OK;
	snprintf(name, sizeof(name), "%s", n->name);
	yid = n->outputs[0];
	cur = n->inputs[0];
	*applied = true;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	st = NPU_OK;
	for (int a = 0; a <= last && !st; a++) {
		int64_t len = dims[a], total = pb[a] + len + pe[a], one[NPU_MAX_RANK];
		int np_ = 0, nxt = -1, c;

		if (!pb[a] && !pe[a])
			continue;
		parts = malloc((size_t)(pb[a] + pe[a] + 1) * sizeof(*parts));
		if (!parts)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		/* Runs of positions copied as is become one part: the input. */
		for (int64_t j = -pb[a]; j < len + pe[a] && !st; j++) {
			if (j == 0) {
				parts[np_++] = cur;
				j = len - 1;
				continue;
			}
			st = npu_rw_slice_one(g, name, cur, a, pad_source(mode, j, len),
					      &parts[np_++]);
		}
		memcpy(one, g->tensors[cur].dims, sizeof(one));
		one[a] = total;
		if (!st)
			st = npu_rw_out(g, a == last ? yid : -1, g->tensors[cur].dtype, r, one,
					&nxt);
		if (!st)
			st = npu_rw_op(g, "Concat", 13, name, parts, np_, &nxt, 1, &c);
		if (!st)
			st = npu_ir_set_attr_int(&g->nodes[c], "axis", a);
		free(parts);
		parts = NULL;
		cur = nxt;
	}
	return st;
}

/* Gather with constant indices: one Slice per run of consecutive indices. */
npu_status npu_rw_gather_rows(npu_ir_graph *g, const char *name, int x, int64_t rows,
			      int64_t inner, const int64_t *idx, int cnt, int yr,
			      const int64_t *yd, int yid)
{
	int64_t d2[2] = { rows, inner }, cd[2] = { cnt, inner };
	int np = 0, *parts, cat;
	npu_status st = NPU_OK;

	if (rows > 0 && (st = npu_rw_reshape(g, name, x, 2, d2, -1, &x)))
		return st;
	parts = malloc((size_t)cnt * sizeof(*parts));
	if (!parts)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int i = 0; i < cnt && !st;) {
		int j = i + 1;

		while (j < cnt && idx[j] == idx[j - 1] + 1)
			j++;
		st = npu_rw_slice(g, name, x, 0, idx[i], idx[j - 1] + 1, &parts[np++]);
		i = j;
	}
	cat = parts[0];
	if (!st && np > 1)
		st = npu_rw_concat(g, name, parts, np, 0, 2, cd, -1, &cat);
	free(parts);
	return st ? st : npu_rw_reshape(g, name, cat, yr, yd, yid, &cat);
}

/*
 * Gather with constant indices along @axis: [outer, D, inner] ->
 * [outer * D, inner] rows o * D + idx.
 */
npu_status npu_rewrite_gather(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *ind = npu_ir_input(g, n, 1);
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	int64_t axis, idx[1024], yd[NPU_MAX_RANK], outer = 1, inner = 1, D, *rows;
	int cnt, yid = n->outputs[0], xi = n->inputs[0], r, yr;
	char name[128];
	npu_status st;

	*applied = false;
	if (!x || !ind || !y || !npu_ir_is_const(ind) ||
	    npu_ir_const_ints(ind, idx, 1024, &cnt) || cnt < 1)
		return NPU_OK;
	if ((st = npu_ir_attr_int(n, "axis", 0, &axis)))
		return st;
	r = x->rank;
	if (axis < 0)
		axis += r;
	if (axis < 0 || axis >= r)
		return NPU_OK;
	D = x->dims[axis];
	for (int d = 0; d < r; d++)
		if (d < axis)
			outer *= x->dims[d];
		else if (d > axis)
			inner *= x->dims[d];
	for (int i = 0; i < cnt; i++) {
		if (idx[i] < 0)
			idx[i] += D;
		if (idx[i] < 0 || idx[i] >= D)
			return NPU_OK;	/* out of range: the lowering refuses it */
	}
	if (outer * cnt > 65536)
		return NPU_OK;
	rows = malloc((size_t)(outer * cnt) * sizeof(*rows));
	if (!rows)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t o = 0; o < outer; o++)
		for (int i = 0; i < cnt; i++)
			rows[o * cnt + i] = o * D + idx[i];
	memcpy(yd, y->dims, sizeof(yd));
	yr = y->rank;
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	st = npu_rw_gather_rows(g, name, xi, outer * D, inner, rows, (int)(outer * cnt), yr, yd,
				yid);
	free(rows);
	return st;
}

/*
 * GatherElements with constant indices: output element e reads data
 * element flat(e with its axis coordinate replaced by idx[e]); GatherND
 * with constant indices: each index tuple (after batch_dims) picks a
 * block of the data.  Both are row gathers of the flattened data.
 */
npu_status npu_rewrite_gather_elements(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	bool nd = !strcmp(n->op, "GatherND");
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *ind = npu_ir_input(g, n, 1);
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	int64_t axis = 0, bd = 0, xd[NPU_MAX_RANK], id[NPU_MAX_RANK], yd[NPU_MAX_RANK];
	int64_t *idx, *rows, cnt, nrows, inner = 1, xn;
	int yid = n->outputs[0], xi = n->inputs[0], r, ir, yr, got;
	char name[128];
	npu_status st;

	*applied = false;
	if (!x || !ind || !y || !npu_ir_is_const(ind) || (cnt = npu_ir_numel(ind)) < 1 ||
	    cnt > 65536)
		return NPU_OK;
	if ((st = npu_ir_attr_int(n, nd ? "batch_dims" : "axis", 0, nd ? &bd : &axis)))
		return st;
	r = x->rank;
	ir = ind->rank;
	xn = npu_ir_numel(x);
	memcpy(xd, x->dims, sizeof(xd));
	memcpy(id, ind->dims, sizeof(id));
	memcpy(yd, y->dims, sizeof(yd));
	yr = y->rank;
	idx = malloc((size_t)cnt * sizeof(*idx));
	rows = malloc((size_t)cnt * sizeof(*rows));
	if (!idx || !rows) {
		free(idx);
		free(rows);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	st = NPU_OK;
	if (npu_ir_const_ints(ind, idx, (int)cnt, &got))
		goto leave;
	if (!nd) {
		if (axis < 0)
			axis += r;
		if (axis < 0 || axis >= r || ir != r)
			goto leave;
		nrows = cnt;
		for (int64_t e = 0; e < cnt; e++) {
			int64_t rem = e, off = 0, stride = 1, v = idx[e];

			if (v < 0)
				v += xd[axis];
			if (v < 0 || v >= xd[axis])
				goto leave;
			for (int d = r - 1; d >= 0; d--) {
				int64_t c = rem % id[d];

				rem /= id[d];
				off += (d == axis ? v : c) * stride;
				stride *= xd[d];
			}
			rows[e] = off;
		}
	} else {
		int64_t m = id[ir - 1], batch = 1, tuples;

		if (bd < 0 || bd >= ir || bd + m > r || m < 1)
			goto leave;
		for (int d = 0; d < bd; d++)
			batch *= xd[d];
		for (int d = (int)(bd + m); d < r; d++)
			inner *= xd[d];
		tuples = cnt / m;
		nrows = tuples;
		if (tuples < batch || tuples % batch)
			goto leave;	/* indices' batch dims must be the data's */
		for (int64_t t = 0; t < tuples; t++) {
			/* Tuples are in batch order: tuples / batch per batch element. */
			int64_t b = t / (tuples / batch), off = b;

			for (int j = 0; j < m; j++) {
				int64_t dim = xd[bd + j], v = idx[t * m + j];

				if (v < 0)
					v += dim;
				if (v < 0 || v >= dim)
					goto leave;
				off = off * dim + v;
			}
			rows[t] = off;
		}
	}
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	st = npu_rw_gather_rows(g, name, xi, xn / inner, inner, rows, (int)nrows, yr, yd, yid);
leave:
	free(idx);
	free(rows);
	return st;
}

/*
 * Expand and Tile: per axis that grows, a Concat of copies (Expand first
 * gives x the output's rank with leading 1s).
 */
npu_status npu_rewrite_repeat(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	bool tile = !strcmp(n->op, "Tile");
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	int64_t xd[NPU_MAX_RANK], yd[NPU_MAX_RANK], cd[NPU_MAX_RANK];
	int yid = n->outputs[0], cur = n->inputs[0], r, last = -1, *parts;
	char name[128];
	npu_status st = NPU_OK;

	*applied = false;
	if (!x || !y || x->rank > y->rank || (tile && x->rank != y->rank))
		return NPU_OK;
	r = y->rank;
	memcpy(yd, y->dims, sizeof(yd));
	for (int d = 0; d < r; d++) {
		int xs = d - (r - x->rank);

		xd[d] = xs >= 0 ? x->dims[xs] : 1;
		if (xd[d] != yd[d]) {
			if (!xd[d] || yd[d] % xd[d] || yd[d] / xd[d] > 1024)
				return NPU_OK;
			last = d;
		}
	}
	snprintf(name, sizeof(name), "%s", n->name);
	if (last < 0)
		return NPU_OK;	/* nothing grows: left to be refused by name */
	parts = malloc(1024 * sizeof(*parts));
	if (!parts)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	*applied = true;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	if (x->rank != r)
		st = npu_rw_reshape(g, name, cur, r, xd, -1, &cur);
	memcpy(cd, xd, sizeof(cd));
	for (int d = 0; d <= last && !st; d++) {
		int64_t times = yd[d] / xd[d];

		if (times == 1)
			continue;
		for (int64_t i = 0; i < times; i++)
			parts[i] = cur;
		cd[d] = yd[d];
		st = npu_rw_concat(g, name, parts, (int)times, d, r, cd, d == last ? yid : -1,
				   &cur);
	}
	free(parts);
	return st;
}

/* DepthToSpace (DCR, CRD) and SpaceToDepth: Reshape, 6-D Transpose, Reshape. */
npu_status npu_rewrite_depth_space(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	bool d2s = !strcmp(n->op, "DepthToSpace");
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	int64_t b, N, C, H, W, s6[6], t6[6], perm[6], yd[4];
	int yid = n->outputs[0], cur = n->inputs[0], t, kn;
	const char *mode;
	char name[128];
	npu_status st;

	*applied = false;
	if (!x || !y || x->rank != 4)
		return NPU_OK;
	if ((st = npu_ir_attr_int(n, "blocksize", 1, &b)) ||
	    (st = npu_ir_attr_string(n, "mode", "DCR", &mode)))
		return st;
	N = x->dims[0];
	C = x->dims[1];
	H = x->dims[2];
	W = x->dims[3];
	memcpy(yd, y->dims, sizeof(yd));
	if (d2s && !strcmp(mode, "CRD")) {
		memcpy(s6, (int64_t[]){ N, C / (b * b), b, b, H, W }, sizeof(s6));
		memcpy(perm, (int64_t[]){ 0, 1, 4, 2, 5, 3 }, sizeof(perm));
	} else if (d2s) {
		memcpy(s6, (int64_t[]){ N, b, b, C / (b * b), H, W }, sizeof(s6));
		memcpy(perm, (int64_t[]){ 0, 3, 4, 1, 5, 2 }, sizeof(perm));
	} else {
		memcpy(s6, (int64_t[]){ N, C, H / b, b, W / b, b }, sizeof(s6));
		memcpy(perm, (int64_t[]){ 0, 3, 5, 1, 2, 4 }, sizeof(perm));
	}
	for (int i = 0; i < 6; i++)
		t6[i] = s6[perm[i]];
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	if ((st = npu_rw_reshape(g, name, cur, 6, s6, -1, &cur)) ||
	    (st = npu_rw_tensor(g, g->tensors[cur].dtype, 6, t6, &t)) ||
	    (st = npu_rw_op(g, "Transpose", 13, name, &cur, 1, &t, 1, &kn)) ||
	    (st = npu_ir_set_attr_ints(&g->nodes[kn], "perm", perm, 6)))
		return st;
	return npu_rw_reshape(g, name, t, 4, yd, yid, &cur);
}

/* EyeLike depends on its input's shape only: its output is a constant. */
npu_status npu_rewrite_eye_like(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	int yid = n->outputs[0];
	int64_t kk, rows, cols;
	size_t es;
	uint8_t *d;
	npu_status st;

	*applied = false;
	if (!y || y->rank != 2 || !(es = npu_dtype_size(y->dtype)))
		return NPU_OK;
	if ((st = npu_ir_attr_int(n, "k", 0, &kk)))
		return st;
	rows = y->dims[0];
	cols = y->dims[1];
	d = calloc((size_t)(rows * cols) + 1, es);
	if (!d)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t i = 0; i < rows; i++) {
		int64_t j = i + kk;
		uint8_t *p = d + (size_t)(i * cols + j) * es;

		if (j < 0 || j >= cols)
			continue;
		switch (y->dtype) {
		case NPU_DTYPE_FLOAT32: memcpy(p, &(float){ 1.0f }, 4); break;
		case NPU_DTYPE_FLOAT16: memcpy(p, &(uint16_t){ 0x3c00 }, 2); break;
		case NPU_DTYPE_BFLOAT16: memcpy(p, &(uint16_t){ 0x3f80 }, 2); break;
		case NPU_DTYPE_INT32: memcpy(p, &(int32_t){ 1 }, 4); break;
		case NPU_DTYPE_INT64: memcpy(p, &(int64_t){ 1 }, 8); break;
		case NPU_DTYPE_INT8:
		case NPU_DTYPE_UINT8: *p = 1; break;
		default:
			free(d);
			return NPU_OK;
		}
	}
	*applied = true;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	return npu_ir_set_const_owned(g, yid, d, (size_t)(rows * cols) * es);
}

/*
 * ReverseSequence with constant lengths: element (t, b) of the time and
 * batch axes reads (len[b] - 1 - t, b) for t < len[b]; a row gather over
 * [T*B (in their order), rest].
 */
npu_status npu_rewrite_reverse_sequence(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *l = npu_ir_input(g, n, 1);
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	int64_t ta = 0, ba = 1, T, B, inner = 1, len[4096], xd[NPU_MAX_RANK], *rows;
	int yid = n->outputs[0], xi = n->inputs[0], cnt;
	char name[128];
	npu_status st;

	*applied = false;
	if (!x || !l || !y || !npu_ir_is_const(l) || x->rank < 2 ||
	    npu_ir_const_ints(l, len, 4096, &cnt))
		return NPU_OK;
	if ((st = npu_ir_attr_int(n, "time_axis", 0, &ta)) ||
	    (st = npu_ir_attr_int(n, "batch_axis", 1, &ba)))
		return st;
	if (!((ta == 0 && ba == 1) || (ta == 1 && ba == 0)))
		return NPU_OK;
	T = x->dims[ta];
	B = x->dims[ba];
	for (int d = 2; d < x->rank; d++)
		inner *= x->dims[d];
	if (cnt != B || T * B > 65536)
		return NPU_OK;
	for (int64_t b = 0; b < B; b++)
		if (len[b] < 0 || len[b] > T)
			return NPU_OK;
	rows = malloc((size_t)(T * B) * sizeof(*rows));
	if (!rows)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t t = 0; t < T; t++)
		for (int64_t b = 0; b < B; b++) {
			int64_t src = t < len[b] ? len[b] - 1 - t : t;

			if (ta == 0)
				rows[t * B + b] = src * B + b;
			else
				rows[b * T + t] = b * T + src;
		}
	memcpy(xd, y->dims, sizeof(xd));
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	st = npu_rw_gather_rows(g, name, xi, T * B, inner, rows, (int)(T * B), y->rank, xd, yid);
	free(rows);
	return st;
}

/* A [1, @w] constant of zeros of @dt. */
static npu_status zero_row(npu_ir_graph *g, npu_dtype dt, int64_t w, int *id)
{
	int64_t d[2] = { 1, w };
	void *z = calloc((size_t)w + 1, npu_dtype_size(dt));

	if (!z)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	return npu_rw_const(g, dt, 2, d, z, id);
}

/*
 * Trilu: the matrices seen as rows [R, N]; row i of its matrix keeps
 * columns j >= i + k (upper) or j <= i + k (lower): per row a Slice of the
 * kept columns beside a constant run of zeros, then one Concat (exact
 * moves, any dtype).
 */
npu_status npu_rewrite_trilu(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *kt = npu_ir_input(g, n, 1);
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	int64_t upper = 1, kk = 0, M, N, R, xd[NPU_MAX_RANK], d2[2];
	int yid = n->outputs[0], xi = n->inputs[0], r, got, x2, *rows, cat;
	npu_dtype dt;
	char name[128];
	npu_status st;

	*applied = false;
	if (!x || !y || x->rank < 2 || (kt && (!npu_ir_is_const(kt) ||
					      npu_ir_const_ints(kt, &kk, 1, &got))))
		return NPU_OK;
	if ((st = npu_ir_attr_int(n, "upper", 1, &upper)))
		return st;
	r = x->rank;
	dt = x->dtype;
	M = x->dims[r - 2];
	N = x->dims[r - 1];
	R = npu_ir_numel(x) / N;
	if (R < 1 || R > 1024 || !npu_dtype_size(dt))
		return NPU_OK;
	memcpy(xd, x->dims, sizeof(xd));
	rows = malloc((size_t)R * sizeof(*rows));
	if (!rows)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	d2[0] = R;
	d2[1] = N;
	st = npu_rw_reshape(g, name, xi, 2, d2, -1, &x2);
	for (int64_t p = 0; p < R && !st; p++) {
		int64_t i = p % M, lo, hi, w2[2] = { 1, 0 };
		int row, part[2], z;

		/* Kept columns [lo, hi). */
		lo = upper ? i + kk : 0;
		hi = upper ? N : i + kk + 1;
		lo = lo < 0 ? 0 : lo > N ? N : lo;
		hi = hi < 0 ? 0 : hi > N ? N : hi;
		if (hi <= lo) {
			st = zero_row(g, dt, N, &rows[p]);
			continue;
		}
		if ((st = npu_rw_slice(g, name, x2, 0, p, p + 1, &row)))
			break;
		if (lo == 0 && hi == N) {
			rows[p] = row;
			continue;
		}
		if ((st = npu_rw_slice(g, name, row, 1, lo, hi, &part[upper ? 1 : 0])) ||
		    (st = zero_row(g, dt, N - (hi - lo), &z)))
			break;
		part[upper ? 0 : 1] = z;
		w2[1] = N;
		st = npu_rw_concat(g, name, part, 2, 1, 2, w2, -1, &rows[p]);
	}
	cat = rows[0];
	if (!st && R > 1)
		st = npu_rw_concat(g, name, rows, (int)R, 0, 2, d2, -1, &cat);
	free(rows);
	return st ? st : npu_rw_reshape(g, name, cat, r, xd, yid, &cat);
}
