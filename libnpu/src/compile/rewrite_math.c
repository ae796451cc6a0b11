// SPDX-License-Identifier: MIT
/*
 * Arithmetic: batched MatMul/QLinearMatMul with a constant B, Gemm with a
 * matrix C, variadic Sum/Mean/Max/Min, Hardmax, Pow by integer exponents,
 * Mod, CastLike, and float16 operands computed in float32.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_rewrite_priv.h"

npu_status npu_rewrite_batched_matmul(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	bool ql = !strcmp(n->op, "QLinearMatMul");
	int bi = ql ? 3 : 1, nin = n->n_inputs, ins[8], yid = n->outputs[0], a3, cat, c;
	const npu_ir_tensor *a = npu_ir_input(g, n, 0), *b = npu_ir_input(g, n, bi);
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	int64_t nb = 1, bnb = 1, M, K, N, d3[3], kn[2], yd[NPU_MAX_RANK];
	size_t es, mat;
	char name[128];
	int *parts;
	npu_status st = NPU_OK;

	*applied = false;
	if (!a || !b || !y || !npu_ir_is_const(b) || b->rank < 3 || a->rank < 2 || nin > 8)
		return NPU_OK;
	for (int d = 0; d < b->rank - 2; d++)
		bnb *= b->dims[d];
	M = a->dims[a->rank - 2];
	K = a->dims[a->rank - 1];
	N = b->dims[b->rank - 1];
	es = npu_dtype_size(b->dtype);
	mat = (size_t)(K * N) * es;
	kn[0] = K;
	kn[1] = N;
	memcpy(ins, n->inputs, (size_t)nin * sizeof(*ins));
	snprintf(name, sizeof(name), "%s", n->name);
	memcpy(yd, y->dims, sizeof(yd));
	if (bnb == 1) {
		/* One matrix for every batch element: make B 2-D. */
		void *bd = malloc(mat + 1);

		if (!bd)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		memcpy(bd, b->data, mat);
		if (y->rank != a->rank)
			return free(bd), NPU_OK;	/* B's 1s widen the output */
		*applied = true;
		if ((st = npu_rw_const(g, b->dtype, 2, kn, bd, &ins[bi])))
			return st;
		g->nodes[k].inputs[bi] = ins[bi];
		return NPU_OK;
	}
	if (a->rank != b->rank)
		return NPU_OK;
	for (int d = 0; d < a->rank - 2; d++) {
		if (a->dims[d] != b->dims[d])
			return NPU_OK;	/* broadcast batches: not yet */
		nb *= a->dims[d];
	}
	if (nb > 256)
		return NPU_OK;
	parts = malloc((size_t)nb * sizeof(*parts));
	if (!parts)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	*applied = true;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	d3[0] = nb;
	d3[1] = M;
	d3[2] = K;
	a3 = ins[0];
	if (g->tensors[a3].rank != 3) {
		int sh;

		if ((st = npu_rw_ints(g, d3, 3, &sh)) ||
		    (st = npu_rw_tensor(g, g->tensors[ins[0]].dtype, 3, d3, &a3)) ||
		    (st = npu_rw_op(g, "Reshape", 14, name, (int[]){ ins[0], sh }, 2, &a3, 1,
				    NULL)))
			goto out;
	}
	for (int64_t i = 0; i < nb && !st; i++) {
		void *bd = malloc(mat + 1);
		int64_t od[3] = { 1, M, N };

		if (!bd) {
			st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
			break;
		}
		memcpy(bd, (const char *)g->tensors[ins[bi]].data + (size_t)i * mat, mat);
		if ((st = npu_rw_slice_one(g, name, a3, 0, i, &ins[0])) ||
		    (st = npu_rw_const(g, g->tensors[ins[bi]].dtype, 2, kn, bd, &ins[bi])) ||
		    (st = npu_rw_tensor(g, g->tensors[yid].dtype, 3, od, &parts[i])))
			break;
		st = npu_rw_op(g, ql ? "QLinearMatMul" : "MatMul", 13, name, ins, nin, &parts[i], 1,
			    NULL);
		ins[bi] = g->nodes[k].inputs[bi];
	}
	d3[2] = N;
	if (!st)
		st = npu_rw_out(g, g->tensors[yid].rank == 3 ? yid : -1, g->tensors[yid].dtype, 3,
				d3, &cat);
	if (!st)
		st = npu_rw_op(g, "Concat", 13, name, parts, (int)nb, &cat, 1, &c);
	if (!st)
		st = npu_ir_set_attr_int(&g->nodes[c], "axis", 0);
	if (!st && cat != yid) {
		int sh;

		if (!(st = npu_rw_ints(g, yd, g->tensors[yid].rank, &sh)))
			st = npu_rw_op(g, "Reshape", 14, name, (int[]){ cat, sh }, 2, &yid, 1,
				       NULL);
	}
out:
	free(parts);
	return st;
}

/* Gemm with C of [M, N] or [M, 1]: the Gemm without C, then Add beta * C. */
npu_status npu_rewrite_gemm_matrix_c(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *c = npu_ir_input(g, n, 2), *y = npu_ir_output(g, n, 0);
	int yid = n->outputs[0], cid, t;
	int64_t N, cn, yd[2], cd[NPU_MAX_RANK], cr;
	float beta, *cv;
	char name[128];
	npu_status st;

	*applied = false;
	if (!c || !y || y->rank != 2 || c->dtype != NPU_DTYPE_FLOAT32 || !npu_ir_is_const(c))
		return NPU_OK;
	N = y->dims[1];
	cn = npu_ir_numel(c);
	if (cn == N || cn == 1)
		return NPU_OK;	/* a row: the TCU's bias */
	if ((st = npu_ir_attr_float(n, "beta", 1.0f, &beta)))
		return st;
	cv = malloc((size_t)cn * sizeof(float));
	if (!cv)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t i = 0; i < cn; i++)
		cv[i] = beta * ((const float *)c->data)[i];
	memcpy(yd, y->dims, sizeof(yd));
	memcpy(cd, c->dims, sizeof(cd));
	cr = c->rank;
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, (int)cr, cd, cv, &cid)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, 2, yd, &t)))
		return st;
	npu_rw_detach(g, k, yid);
	g->nodes[k].outputs[0] = t;
	g->tensors[t].producer = k;
	g->nodes[k].inputs[2] = -1;
	return npu_rw_op(g, "Add", 14, name, (int[]){ t, cid }, 2, &yid, 1, NULL);
}

/* A chain of binary operators (numpy broadcasting), Mean scaled by 1/n. */
npu_status npu_rewrite_variadic(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	bool mean = !strcmp(n->op, "Mean"), sum = mean || !strcmp(n->op, "Sum");
	int nin = n->n_inputs, yid = n->outputs[0], acc, *ins;
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	char name[128], bin[8];
	npu_status st = NPU_OK;

	*applied = false;
	if (!y || nin < 1 || (!sum && nin <= 2) || (mean && y->dtype != NPU_DTYPE_FLOAT32))
		return NPU_OK;
	ins = malloc((size_t)nin * sizeof(*ins));
	if (!ins)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	memcpy(ins, n->inputs, (size_t)nin * sizeof(*ins));
	for (int i = 0; i < nin; i++)
		if (ins[i] < 0) {
			free(ins);
			return NPU_OK;
		}
	snprintf(name, sizeof(name), "%s", n->name);
	snprintf(bin, sizeof(bin), "%s", sum ? "Add" : n->op);
	*applied = true;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	acc = ins[0];
	if (nin == 1 && !(st = npu_rw_op(g, "Identity", 13, name, &acc, 1, &yid, 1, NULL))) {
		free(ins);
		return NPU_OK;
	}
	for (int i = 1; i < nin && !st; i++) {
		int nxt;

		st = npu_rw_binary(g, bin, 13, name, acc, ins[i], i == nin - 1 && !mean ? yid : -1,
				   &nxt);
		acc = nxt;
	}
	free(ins);
	if (!st && mean) {
		float *inv = malloc(sizeof(*inv));
		int64_t one = 1;
		int c;

		if (!inv)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		*inv = 1.0f / (float)nin;
		if (!(st = npu_rw_const(g, NPU_DTYPE_FLOAT32, 1, &one, inv, &c)))
			st = npu_rw_op(g, "Mul", 14, name, (int[]){ acc, c }, 2, &yid, 1, NULL);
	}
	return st;
}

/*
 * Hardmax: 1 at the first maximum along the axis.  ind = 1 - sign(max - x)
 * marks every maximum; a MatMul by the strictly upper triangular ones
 * counts the maxima before each position (exact: small integers), and
 * 1 - sign(count) keeps the first.  Before opset 13 the axes from @axis on
 * are flattened into one.
 */
npu_status npu_rewrite_hardmax(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0);
	int yid = n->outputs[0], cur = n->inputs[0], r, r2, ax, t[6], one, kn;
	int64_t axis, xd[NPU_MAX_RANK], d2[NPU_MAX_RANK], kd[NPU_MAX_RANK], len, o = 1;
	bool flat = n->opset < 13;
	char name[128];
	float *m, *ov;
	npu_status st;

	*applied = false;
	if (!x || x->dtype != NPU_DTYPE_FLOAT32 || x->rank < 1)
		return NPU_OK;
	if ((st = npu_ir_attr_int(n, "axis", flat ? 1 : -1, &axis)))
		return st;
	r = x->rank;
	if (axis < 0)
		axis += r;
	if (axis < 0 || axis >= r)
		return NPU_OK;
	memcpy(xd, x->dims, sizeof(xd));
	if (flat) {
		int64_t outer = 1, inner = 1;

		for (int d = 0; d < r; d++)
			*(d < axis ? &outer : &inner) *= xd[d];
		d2[0] = outer;
		d2[1] = inner;
		r2 = 2;
		ax = 1;
	} else {
		memcpy(d2, xd, sizeof(d2));
		r2 = r;
		ax = (int)axis;
	}
	len = d2[ax];
	if (len * len > NPU_RW_MATRIX_MAX || r2 < 2)
		return NPU_OK;
	m = calloc((size_t)(len * len), sizeof(float));
	ov = malloc(sizeof(*ov));
	if (!m || !ov) {
		free(m);
		free(ov);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	for (int64_t i = 0; i < len; i++)
		for (int64_t j = i + 1; j < len; j++)
			m[i * len + j] = 1.0f;
	*ov = 1.0f;
	snprintf(name, sizeof(name), "%s", n->name);
	memcpy(kd, d2, sizeof(kd));
	kd[ax] = 1;
	*applied = true;
	if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, 1, &o, ov, &one))) {
		free(m);
		return st;
	}
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	if (flat && (st = npu_rw_reshape(g, name, cur, 2, d2, -1, &cur)))
		return free(m), st;
	for (int i = 0; i < 6 && !st; i++)
		st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r2, i ? d2 : kd, &t[i]);
	if (st || (st = npu_rw_op(g, "ReduceMax", 13, name, &cur, 1, &t[0], 1, &kn)) ||
	    (st = npu_ir_set_attr_ints(&g->nodes[kn], "axes", (int64_t[]){ ax }, 1)) ||
	    (st = npu_ir_set_attr_int(&g->nodes[kn], "keepdims", 1)) ||
	    (st = npu_rw_op(g, "Sub", 14, name, (int[]){ t[0], cur }, 2, &t[1], 1, NULL)) ||
	    (st = npu_rw_op(g, "Sign", 13, name, &t[1], 1, &t[2], 1, NULL)) ||
	    (st = npu_rw_op(g, "Sub", 14, name, (int[]){ one, t[2] }, 2, &t[3], 1, NULL))) {
		free(m);
		return st;
	}
	if ((st = npu_rw_map_axis(g, name, t[3], ax, len, m, -1, &t[4])) ||
	    (st = npu_rw_op(g, "Sign", 13, name, &t[4], 1, &t[5], 1, NULL)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r2, d2, &t[0])) ||
	    (st = npu_rw_op(g, "Sub", 14, name, (int[]){ one, t[5] }, 2, &t[0], 1, NULL)))
		return st;
	if (!flat)
		return npu_rw_op(g, "Mul", 14, name, (int[]){ t[3], t[0] }, 2, &yid, 1, NULL);
	if ((st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, 2, d2, &t[1])) ||
	    (st = npu_rw_op(g, "Mul", 14, name, (int[]){ t[3], t[0] }, 2, &t[1], 1, NULL)))
		return st;
	return npu_rw_reshape(g, name, t[1], r, xd, yid, &cur);
}

/* Pow of float32 by a constant integer exponent: the exponent as float32. */
npu_status npu_rewrite_pow_int(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *e = npu_ir_input(g, n, 1);
	int64_t cnt, dims[NPU_MAX_RANK], v[1024];
	int c, ne;
	float *f;
	npu_status st;

	*applied = false;
	if (!x || !e || x->dtype != NPU_DTYPE_FLOAT32 || !npu_ir_is_const(e) ||
	    (e->dtype != NPU_DTYPE_INT32 && e->dtype != NPU_DTYPE_INT64) ||
	    npu_ir_const_ints(e, v, 1024, &ne))
		return NPU_OK;
	cnt = ne;
	memcpy(dims, e->dims, sizeof(dims));
	f = malloc((size_t)(cnt ? cnt : 1) * sizeof(*f));
	if (!f)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t i = 0; i < cnt; i++) {
		if (v[i] > (1 << 24) || v[i] < -(1 << 24)) {
			free(f);
			return NPU_OK;	/* not exact in float32 */
		}
		f[i] = (float)v[i];
	}
	*applied = true;
	if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, e->rank, dims, f, &c)))
		return st;
	g->nodes[k].inputs[1] = c;
	return NPU_OK;
}

/*
 * Max, Min on float16: the same node in float32 between Casts (exact: both
 * conversions are, for values that came from float16).
 */
npu_status npu_rewrite_f16(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	int yid = n->outputs[0], nin = n->n_inputs, t, kn;
	int64_t dims[NPU_MAX_RANK];
	char name[128];
	npu_status st = NPU_OK;

	*applied = false;
	if (!y || y->dtype != NPU_DTYPE_FLOAT16)
		return NPU_OK;
	for (int i = 0; i < nin; i++)
		if (n->inputs[i] < 0 || g->tensors[n->inputs[i]].dtype != NPU_DTYPE_FLOAT16)
			return NPU_OK;
	memcpy(dims, y->dims, sizeof(dims));
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	for (int i = 0; i < nin && !st; i++) {
		int in = g->nodes[k].inputs[i], f;
		const npu_ir_tensor *ti = &g->tensors[in];
		int64_t d[NPU_MAX_RANK];

		memcpy(d, ti->dims, sizeof(d));
		if ((st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, ti->rank, d, &f)) ||
		    (st = npu_rw_op(g, "Cast", 13, name, &in, 1, &f, 1, &kn)) ||
		    (st = npu_ir_set_attr_int(&g->nodes[kn], "to", 1)))
			return st;
		g->nodes[k].inputs[i] = f;
	}
	if ((st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, g->tensors[yid].rank, dims, &t)))
		return st;
	npu_rw_detach(g, k, yid);
	g->nodes[k].outputs[0] = t;
	g->tensors[t].producer = k;
	if ((st = npu_rw_op(g, "Cast", 13, name, &t, 1, &yid, 1, &kn)))
		return st;
	return npu_ir_set_attr_int(&g->nodes[kn], "to", 10);	/* FLOAT16 */
}

/*
 * Mod on float32 (after the 8-bit or float16 rewrites, on those too):
 * x - y * floor(x / y) (integer mod, the sign of the divisor) or, with
 * fmod, x - y * trunc(x / y), trunc(q) = sign(q) floor(|q|).  Exact for
 * integers below 2^24; within rounding for floats.
 */
npu_status npu_rewrite_mod(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	int yid = n->outputs[0], a = n->inputs[0], b = n->n_inputs > 1 ? n->inputs[1] : -1, t[6];
	int64_t fmod_, dims[NPU_MAX_RANK];
	char name[128];
	npu_status st;

	*applied = false;
	if (!y || b < 0 || y->dtype != NPU_DTYPE_FLOAT32 ||
	    g->tensors[a].dtype != NPU_DTYPE_FLOAT32 || g->tensors[b].dtype != NPU_DTYPE_FLOAT32)
		return NPU_OK;
	if ((st = npu_ir_attr_int(n, "fmod", 0, &fmod_)))
		return st;
	memcpy(dims, y->dims, sizeof(dims));
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	for (int i = 0; i < 6 && !st; i++)
		st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, g->tensors[yid].rank, dims, &t[i]);
	if (st)
		return st;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	if ((st = npu_rw_op(g, "Div", 14, name, (int[]){ a, b }, 2, &t[0], 1, NULL)))
		return st;
	if (fmod_) {
		if ((st = npu_rw_op(g, "Abs", 13, name, &t[0], 1, &t[1], 1, NULL)) ||
		    (st = npu_rw_op(g, "Floor", 13, name, &t[1], 1, &t[2], 1, NULL)) ||
		    (st = npu_rw_op(g, "Sign", 13, name, &t[0], 1, &t[3], 1, NULL)) ||
		    (st = npu_rw_op(g, "Mul", 14, name, (int[]){ t[3], t[2] }, 2, &t[4], 1, NULL)))
			return st;
	} else if ((st = npu_rw_op(g, "Floor", 13, name, &t[0], 1, &t[4], 1, NULL))) {
		return st;
	}
	if ((st = npu_rw_op(g, "Mul", 14, name, (int[]){ b, t[4] }, 2, &t[5], 1, NULL)))
		return st;
	return npu_rw_op(g, "Sub", 14, name, (int[]){ a, t[5] }, 2, &yid, 1, NULL);
}

/* CastLike: a Cast to the second input's dtype. */
npu_status npu_rewrite_cast_like(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *like = npu_ir_input(g, n, 1);
	int yid = n->outputs[0], xi = n->inputs[0], kn;
	char name[128];
	npu_dtype to;
	npu_status st;

	*applied = false;
	if (!like || yid < 0)
		return NPU_OK;
	to = like->dtype;
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	if ((st = npu_rw_op(g, "Cast", 13, name, &xi, 1, &yid, 1, &kn)))
		return st;
	return npu_ir_set_attr_int(&g->nodes[kn], "to", (int64_t)to);	/* ONNX's codes */
}
