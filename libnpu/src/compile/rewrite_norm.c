// SPDX-License-Identifier: MIT
/*
 * Normalizations and reductions: LayerNormalization's Mean and InvStdDev
 * outputs, InstanceNormalization, MeanVarianceNormalization, and
 * reductions over axes that are not adjacent.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_rewrite_priv.h"

npu_status npu_rewrite_layernorm_stats(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0);
	int mean = n->n_outputs > 1 ? n->outputs[1] : -1;
	int inv = n->n_outputs > 2 ? n->outputs[2] : -1, xi = n->inputs[0], r, kn;
	int64_t axis, axes[NPU_MAX_RANK], kd[NPU_MAX_RANK], xd[NPU_MAX_RANK];
	int d, sq, var, ve, sd, et;
	float eps, *ev;
	char name[128];
	npu_status st;

	*applied = false;
	if ((mean < 0 && inv < 0) || !x || x->dtype != NPU_DTYPE_FLOAT32 ||
	    (mean >= 0 && g->tensors[mean].dtype != NPU_DTYPE_FLOAT32) ||
	    (inv >= 0 && g->tensors[inv].dtype != NPU_DTYPE_FLOAT32))
		return NPU_OK;
	if ((st = npu_ir_attr_int(n, "axis", -1, &axis)) ||
	    (st = npu_ir_attr_float(n, "epsilon", 1e-5f, &eps)))
		return st;
	r = x->rank;
	memcpy(xd, x->dims, sizeof(xd));
	if (axis < 0)
		axis += r;
	if (axis < 0 || axis >= r)
		return NPU_OK;
	snprintf(name, sizeof(name), "%s", n->name);
	for (int a = 0; a < r; a++)
		kd[a] = a < axis ? x->dims[a] : 1;
	for (int a = (int)axis; a < r; a++)
		axes[a - axis] = a;
	*applied = true;
	if (mean >= 0)
		npu_rw_detach(g, k, mean);
	if (inv >= 0)
		npu_rw_detach(g, k, inv);
	if ((st = npu_rw_out(g, mean, NPU_DTYPE_FLOAT32, r, kd, &mean)) ||
	    (st = npu_rw_op(g, "ReduceMean", 13, name, &xi, 1, &mean, 1, &kn)) ||
	    (st = npu_ir_set_attr_ints(&g->nodes[kn], "axes", axes, r - (int)axis)) ||
	    (st = npu_ir_set_attr_int(&g->nodes[kn], "keepdims", 1)))
		return st;
	if (inv < 0)
		return NPU_OK;
	ev = malloc(sizeof(*ev));
	if (!ev)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	*ev = eps;
	/* 1 / sqrt(mean((x - mean)^2) + epsilon), as the normalization uses. */
	if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, 1, (int64_t[]){ 1 }, ev, &et)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, xd, &d)) ||
	    (st = npu_rw_op(g, "Sub", 14, name, (int[]){ xi, mean }, 2, &d, 1, NULL)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, xd, &sq)) ||
	    (st = npu_rw_op(g, "Mul", 14, name, (int[]){ d, d }, 2, &sq, 1, NULL)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, kd, &var)) ||
	    (st = npu_rw_op(g, "ReduceMean", 13, name, &sq, 1, &var, 1, &kn)) ||
	    (st = npu_ir_set_attr_ints(&g->nodes[kn], "axes", axes, r - (int)axis)) ||
	    (st = npu_ir_set_attr_int(&g->nodes[kn], "keepdims", 1)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, kd, &ve)) ||
	    (st = npu_rw_op(g, "Add", 14, name, (int[]){ var, et }, 2, &ve, 1, NULL)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, kd, &sd)) ||
	    (st = npu_rw_op(g, "Sqrt", 13, name, &ve, 1, &sd, 1, NULL)))
		return st;
	return npu_rw_op(g, "Reciprocal", 13, name, &sd, 1, &inv, 1, NULL);
}

/*
 * *@d = x - mean(x), *@sd = sqrt(mean(d^2) + @eps) over @axes (keepdims),
 * both float32.
 */
static npu_status centre_and_spread(npu_ir_graph *g, const char *name, int x,
				    const int64_t *axes, int na, float eps, int *d, int *sd)
{
	int r = g->tensors[x].rank, mean, sq, var, ve, et, kn;
	int64_t xd[NPU_MAX_RANK], kd[NPU_MAX_RANK], one = 1;
	float *ev = malloc(sizeof(*ev));
	npu_status st;

	if (!ev)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	*ev = eps;
	memcpy(xd, g->tensors[x].dims, sizeof(xd));
	memcpy(kd, xd, sizeof(kd));
	for (int i = 0; i < na; i++)
		kd[axes[i]] = 1;
	if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, 1, &one, ev, &et)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, kd, &mean)) ||
	    (st = npu_rw_op(g, "ReduceMean", 13, name, &x, 1, &mean, 1, &kn)) ||
	    (st = npu_ir_set_attr_ints(&g->nodes[kn], "axes", axes, na)) ||
	    (st = npu_ir_set_attr_int(&g->nodes[kn], "keepdims", 1)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, xd, d)) ||
	    (st = npu_rw_op(g, "Sub", 14, name, (int[]){ x, mean }, 2, d, 1, NULL)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, xd, &sq)) ||
	    (st = npu_rw_op(g, "Mul", 14, name, (int[]){ *d, *d }, 2, &sq, 1, NULL)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, kd, &var)) ||
	    (st = npu_rw_op(g, "ReduceMean", 13, name, &sq, 1, &var, 1, &kn)) ||
	    (st = npu_ir_set_attr_ints(&g->nodes[kn], "axes", axes, na)) ||
	    (st = npu_ir_set_attr_int(&g->nodes[kn], "keepdims", 1)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, kd, &ve)) ||
	    (st = npu_rw_op(g, "Add", 14, name, (int[]){ var, et }, 2, &ve, 1, NULL)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, kd, sd)))
		return st;
	return npu_rw_op(g, "Sqrt", 13, name, &ve, 1, sd, 1, NULL);
}

npu_status npu_rewrite_instnorm(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *sc = npu_ir_input(g, n, 1);
	const npu_ir_tensor *b = npu_ir_input(g, n, 2);
	int yid = n->outputs[0], xi = n->inputs[0], r, d, sd, q, s2, tsc, tb;
	int64_t axes[NPU_MAX_RANK], xd[NPU_MAX_RANK], cd[NPU_MAX_RANK];
	float eps, *sv, *bv;
	char name[128];
	npu_status st;

	*applied = false;
	if (!x || !sc || !b || x->dtype != NPU_DTYPE_FLOAT32 || sc->dtype != NPU_DTYPE_FLOAT32 ||
	    b->dtype != NPU_DTYPE_FLOAT32 || !npu_ir_is_const(sc) || !npu_ir_is_const(b) ||
	    x->rank < 3)
		return NPU_OK;
	if ((st = npu_ir_attr_float(n, "epsilon", 1e-5f, &eps)))
		return st;
	r = x->rank;
	memcpy(xd, x->dims, sizeof(xd));
	for (int a = 2; a < r; a++)
		axes[a - 2] = a;
	/* scale and B as [C, 1, ...] to broadcast over the spatial axes. */
	cd[0] = xd[1];
	for (int a = 1; a < r - 1; a++)
		cd[a] = 1;
	sv = malloc((size_t)xd[1] * sizeof(float));
	bv = malloc((size_t)xd[1] * sizeof(float));
	if (!sv || !bv) {
		free(sv);
		free(bv);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	memcpy(sv, sc->data, (size_t)xd[1] * sizeof(float));
	memcpy(bv, b->data, (size_t)xd[1] * sizeof(float));
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, r - 1, cd, sv, &tsc)))
		return free(bv), st;
	if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, r - 1, cd, bv, &tb)))
		return st;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	if ((st = centre_and_spread(g, name, xi, axes, r - 2, eps, &d, &sd)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, xd, &q)) ||
	    (st = npu_rw_op(g, "Div", 14, name, (int[]){ d, sd }, 2, &q, 1, NULL)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, xd, &s2)) ||
	    (st = npu_rw_op(g, "Mul", 14, name, (int[]){ q, tsc }, 2, &s2, 1, NULL)))
		return st;
	return npu_rw_op(g, "Add", 14, name, (int[]){ s2, tb }, 2, &yid, 1, NULL);
}

/* (x - mean) / (sqrt(variance) + 1e-9) over axes (default 0, 2, 3), as ONNX's function. */
npu_status npu_rewrite_mvn(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0);
	int yid = n->outputs[0], xi = n->inputs[0], r, na, d, sd, sde, et;
	int64_t axes[NPU_MAX_RANK], kd[NPU_MAX_RANK], one = 1;
	const int64_t *av;
	bool seen[NPU_MAX_RANK] = { false };
	char name[128];
	float *ev;
	npu_status st;

	*applied = false;
	if (!x || x->dtype != NPU_DTYPE_FLOAT32)
		return NPU_OK;
	if ((st = npu_ir_attr_ints(n, "axes", &av, &na)))
		return st;
	r = x->rank;
	if (na < 0) {
		static const int64_t def[3] = { 0, 2, 3 };

		if (r != 4)
			return NPU_OK;
		av = def;
		na = 3;
	}
	if (na > r)
		return NPU_OK;
	for (int i = 0; i < na; i++) {
		axes[i] = av[i] < 0 ? av[i] + r : av[i];
		if (axes[i] < 0 || axes[i] >= r || seen[axes[i]])
			return NPU_OK;
		seen[axes[i]] = true;
	}
	ev = malloc(sizeof(*ev));
	if (!ev)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	*ev = 1e-9f;
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, 1, &one, ev, &et)) ||
	    (st = centre_and_spread(g, name, xi, axes, na, 0.0f, &d, &sd)))
		return st;
	memcpy(kd, g->tensors[sd].dims, sizeof(kd));
	if ((st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, kd, &sde)) ||
	    (st = npu_rw_op(g, "Add", 14, name, (int[]){ sd, et }, 2, &sde, 1, NULL)))
		return st;
	return npu_rw_op(g, "Div", 14, name, (int[]){ d, sde }, 2, &yid, 1, NULL);
}

/* One reduction per run of adjacent axes (keepdims), then the output shape. */
npu_status npu_rewrite_reduce_runs(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	int64_t axes[NPU_MAX_RANK], dims[NPU_MAX_RANK], yd[NPU_MAX_RANK], keep = 1;
	bool on[NPU_MAX_RANK] = { false };
	int na = 0, r, yr, cur, yid = n->outputs[0], runs = 0;
	char name[128], op[24];
	npu_status st;

	*applied = false;
	if (!x || !y || (strcmp(n->op, "ReduceMean") && strcmp(n->op, "ReduceSum") &&
			 strcmp(n->op, "ReduceMax") && strcmp(n->op, "ReduceMin") &&
			 strcmp(n->op, "ReduceProd")))
		return NPU_OK;
	if (npu_ir_input(g, n, 1)) {
		if (npu_ir_const_ints(npu_ir_input(g, n, 1), axes, NPU_MAX_RANK, &na))
			return NPU_OK;
	} else {
		const int64_t *av;

		if ((st = npu_ir_attr_ints(n, "axes", &av, &na)))
			return st;
		if (na > NPU_MAX_RANK)
			return NPU_OK;
		for (int i = 0; i < na; i++)
			axes[i] = av[i];
	}
	if ((st = npu_ir_attr_int(n, "keepdims", 1, &keep)))
		return st;
	r = x->rank;
	for (int i = 0; i < na; i++) {
		int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];

		if (a < 0 || a >= r)
			return NPU_OK;
		on[a] = true;
	}
	for (int a = 0; a < r; a++)
		runs += on[a] && (a == 0 || !on[a - 1]);
	if (runs < 2)
		return NPU_OK;
	memcpy(dims, x->dims, sizeof(dims));
	memcpy(yd, y->dims, sizeof(yd));
	yr = y->rank;
	cur = n->inputs[0];
	snprintf(name, sizeof(name), "%s", n->name);
	snprintf(op, sizeof(op), "%s", n->op);
	*applied = true;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	for (int a = 0; a < r; a++) {
		int64_t run[NPU_MAX_RANK];
		int nr = 0, nxt, kn;

		if (!on[a] || (a > 0 && on[a - 1]))
			continue;
		for (int b = a; b < r && on[b]; b++) {
			run[nr++] = b;
			dims[b] = 1;
		}
		runs--;
		if ((st = npu_rw_out(g, !runs && keep ? yid : -1, NPU_DTYPE_FLOAT32, r, dims,
				     &nxt)) ||
		    (st = npu_rw_op(g, op, 13, name, &cur, 1, &nxt, 1, &kn)) ||
		    (st = npu_ir_set_attr_ints(&g->nodes[kn], "axes", run, nr)) ||
		    (st = npu_ir_set_attr_int(&g->nodes[kn], "keepdims", 1)))
			return st;
		cur = nxt;
	}
	if (keep)
		return NPU_OK;
	return npu_rw_reshape(g, name, cur, yr, yd, yid, &cur);
}

/*
 * LRN: x / (bias + alpha / size * sum of x^2 over a window of channels)^beta.
 * The window sum is a MatMul along the channels by a constant band matrix
 * (bf16 products: a few parts in a thousand).
 */
npu_status npu_rewrite_lrn(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0);
	int yid = n->outputs[0], xi = n->inputs[0], r, t[5], c[3];
	int64_t size, C, xd[NPU_MAX_RANK], one = 1, lo, hi;
	float alpha, beta, bias, v[3];
	char name[128];
	float *m;
	npu_status st;

	*applied = false;
	if (!x || x->dtype != NPU_DTYPE_FLOAT32 || x->rank < 3)
		return NPU_OK;
	if ((st = npu_ir_attr_int(n, "size", 0, &size)) ||
	    (st = npu_ir_attr_float(n, "alpha", 1e-4f, &alpha)) ||
	    (st = npu_ir_attr_float(n, "beta", 0.75f, &beta)) ||
	    (st = npu_ir_attr_float(n, "bias", 1.0f, &bias)))
		return st;
	r = x->rank;
	memcpy(xd, x->dims, sizeof(xd));
	C = xd[1];
	if (size < 1 || C * C > NPU_RW_MATRIX_MAX)
		return NPU_OK;
	lo = (size - 1) / 2;
	hi = size - 1 - lo;
	m = calloc((size_t)(C * C), sizeof(float));
	if (!m)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	/* Output channel j sums input channels j - lo .. j + hi. */
	for (int64_t j = 0; j < C; j++)
		for (int64_t i = j - lo; i <= j + hi; i++)
			if (i >= 0 && i < C)
				m[i * C + j] = 1.0f;
	v[0] = alpha / (float)size;
	v[1] = bias;
	v[2] = beta;
	snprintf(name, sizeof(name), "%s", n->name);
	st = NPU_OK;
	*applied = true;
	for (int i = 0; i < 3 && !st; i++) {
		float *p = malloc(sizeof(*p));

		if (!p)
			st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		else
			*p = v[i];
		if (!st)
			st = npu_rw_const(g, NPU_DTYPE_FLOAT32, 1, &one, p, &c[i]);
	}
	for (int i = 0; i < 5 && !st; i++)
		st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, xd, &t[i]);
	if (st) {
		free(m);
		return st;
	}
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	if ((st = npu_rw_op(g, "Mul", 14, name, (int[]){ xi, xi }, 2, &t[0], 1, NULL))) {
		free(m);
		return st;
	}
	if ((st = npu_rw_map_axis(g, name, t[0], 1, C, m, -1, &t[1])) ||
	    (st = npu_rw_op(g, "Mul", 14, name, (int[]){ t[1], c[0] }, 2, &t[2], 1, NULL)) ||
	    (st = npu_rw_op(g, "Add", 14, name, (int[]){ t[2], c[1] }, 2, &t[3], 1, NULL)) ||
	    (st = npu_rw_op(g, "Pow", 15, name, (int[]){ t[3], c[2] }, 2, &t[4], 1, NULL)))
		return st;
	return npu_rw_op(g, "Div", 14, name, (int[]){ xi, t[4] }, 2, &yid, 1, NULL);
}

/* @v (@c values) as a float32 constant of shape [c, 1, ...] (rank @r - 1). */
static npu_status per_channel(npu_ir_graph *g, const float *v, int64_t c, int r, float mul,
			      int *id)
{
	int64_t cd[NPU_MAX_RANK];
	float *p = malloc((size_t)c * sizeof(*p) + 4);

	if (!p)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t i = 0; i < c; i++)
		p[i] = v[i] * mul;
	cd[0] = c;
	for (int a = 1; a < r - 1; a++)
		cd[a] = 1;
	return npu_rw_const(g, NPU_DTYPE_FLOAT32, r - 1, cd, p, id);
}

/*
 * BatchNormalization in training mode: normalized with the batch's mean
 * and (biased) variance over every axis but the channels; running mean and
 * variance = input * momentum + batch * (1 - momentum).
 */
npu_status npu_rewrite_batchnorm_training(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0);
	int out[3] = { -1, -1, -1 }, xi = n->inputs[0], r, d, sd, q, s2, tsc, tb, kn;
	int64_t training = 0, axes[NPU_MAX_RANK], xd[NPU_MAX_RANK], C, one = 1;
	const float *pv[4];
	float eps, mom;
	char name[128];
	npu_status st;

	*applied = false;
	if ((st = npu_ir_attr_int(n, "training_mode", 0, &training)) || !training || !x ||
	    x->dtype != NPU_DTYPE_FLOAT32 || x->rank < 2)
		return st;
	for (int i = 1; i < 5; i++) {
		const npu_ir_tensor *p = npu_ir_input(g, n, i);

		if (!p || !npu_ir_is_const(p) || p->dtype != NPU_DTYPE_FLOAT32)
			return NPU_OK;
		pv[i - 1] = p->data;
	}
	if ((st = npu_ir_attr_float(n, "epsilon", 1e-5f, &eps)) ||
	    (st = npu_ir_attr_float(n, "momentum", 0.9f, &mom)))
		return st;
	for (int i = 0; i < n->n_outputs && i < 3; i++)
		out[i] = n->outputs[i];
	r = x->rank;
	C = x->dims[1];
	memcpy(xd, x->dims, sizeof(xd));
	axes[0] = 0;
	for (int a = 2; a < r; a++)
		axes[a - 1] = a;
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	if ((st = per_channel(g, pv[0], C, r, 1.0f, &tsc)) ||
	    (st = per_channel(g, pv[1], C, r, 1.0f, &tb)))
		return st;
	for (int i = 0; i < 3; i++)
		if (out[i] >= 0)
			npu_rw_detach(g, k, out[i]);
	g->nodes[k].dead = true;
	if ((st = centre_and_spread(g, name, xi, axes, r - 1, eps, &d, &sd)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, xd, &q)) ||
	    (st = npu_rw_op(g, "Div", 14, name, (int[]){ d, sd }, 2, &q, 1, NULL)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, xd, &s2)) ||
	    (st = npu_rw_op(g, "Mul", 14, name, (int[]){ q, tsc }, 2, &s2, 1, NULL)) ||
	    (out[0] >= 0 &&
	     (st = npu_rw_op(g, "Add", 14, name, (int[]){ s2, tb }, 2, &out[0], 1, NULL))))
		return st;
	/* Running statistics: [C] vectors, the batch's from keepdims-0 means. */
	for (int i = 1; i < 3; i++) {
		int src = xi, st1, m, scaled, cst, c1;
		float *f;

		if (out[i] < 0)
			continue;
		if (i == 2) {	/* the variance: the mean of d * d */
			if ((st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, xd, &src)) ||
			    (st = npu_rw_op(g, "Mul", 14, name, (int[]){ d, d }, 2, &src, 1, NULL)))
				return st;
		}
		if ((st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, 1, &C, &m)) ||
		    (st = npu_rw_op(g, "ReduceMean", 13, name, &src, 1, &m, 1, &kn)) ||
		    (st = npu_ir_set_attr_ints(&g->nodes[kn], "axes", axes, r - 1)) ||
		    (st = npu_ir_set_attr_int(&g->nodes[kn], "keepdims", 0)))
			return st;
		f = malloc(sizeof(*f));
		if (!f)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		*f = 1.0f - mom;
		if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, 1, &one, f, &c1)) ||
		    (st = per_channel(g, pv[i + 1], C, 2, mom, &cst)) ||
		    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, 1, &C, &scaled)) ||
		    (st = npu_rw_op(g, "Mul", 14, name, (int[]){ m, c1 }, 2, &scaled, 1, NULL)))
			return st;
		st1 = npu_rw_op(g, "Add", 14, name, (int[]){ scaled, cst }, 2, &out[i], 1, NULL);
		if (st1)
			return st1;
	}
	return NPU_OK;
}
