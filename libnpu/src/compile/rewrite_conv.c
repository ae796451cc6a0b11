// SPDX-License-Identifier: MIT
/*
 * ConvTranspose as zero insertion (0/1 matrices per spatial axis) and a
 * stride-1 Conv with flipped, channel-swapped weights; 3-D Conv as one 2-D
 * Conv over depth taps stacked in the channels; 3-D pooling as two 2-D
 * poolings.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_rewrite_priv.h"

npu_status npu_rewrite_conv_transpose(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *w = npu_ir_input(g, n, 1);
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	const int64_t *ks, *strides, *dil, *pads;
	int nk, ns, nd, np, r, sp, cur, yid, wt, c, bias = n->n_inputs > 2 ? n->inputs[2] : -1;
	int64_t group, cin, cout_g, cin_g, kvol = 1, wd[NPU_MAX_RANK], ones[3] = { 1, 1, 1 };
	int64_t zeros[6] = { 0 }, kk[3], dd[3];
	float *wf;
	char name[128];
	npu_status st;

	*applied = false;
	if (!x || !w || !y || x->dtype != NPU_DTYPE_FLOAT32 || w->dtype != NPU_DTYPE_FLOAT32 ||
	    !npu_ir_is_const(w) || x->rank < 3 || x->rank > 5)
		return NPU_OK;
	if ((st = npu_ir_attr_ints(n, "kernel_shape", &ks, &nk)) ||
	    (st = npu_ir_attr_ints(n, "strides", &strides, &ns)) ||
	    (st = npu_ir_attr_ints(n, "dilations", &dil, &nd)) ||
	    (st = npu_ir_attr_ints(n, "pads", &pads, &np)) ||
	    (st = npu_ir_attr_int(n, "group", 1, &group)))
		return st;
	r = x->rank;
	sp = r - 2;
	if (nk != sp || ns != sp || nd != sp || np != 2 * sp || group < 1 ||
	    x->dims[1] % group || w->rank != r || w->dims[0] != x->dims[1])
		return NPU_OK;
	for (int a = 0; a < sp; a++)
		if (w->dims[2 + a] != ks[a] || ks[a] < 1 || strides[a] < 1 || dil[a] < 1)
			return NPU_OK;
	cin = x->dims[1];
	cin_g = cin / group;
	cout_g = w->dims[1];
	for (int a = 0; a < sp; a++) {
		kk[a] = ks[a];
		dd[a] = dil[a];
		kvol *= ks[a];
	}
	/* Conv weights [group * cout_g][cin_g][k...], flipped in space. */
	wd[0] = group * cout_g;
	wd[1] = cin_g;
	for (int a = 0; a < sp; a++)
		wd[2 + a] = ks[a];
	wf = malloc((size_t)(wd[0] * cin_g * kvol) * sizeof(float) + 4);
	if (!wf)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	/* Output channel o of group gi reads input channel i there: W[gi*cin_g + i][o]. */
	for (int64_t gi = 0; gi < group; gi++) {
		const float *src = (const float *)w->data + gi * cin_g * cout_g * kvol;
		float *dst = wf + gi * cout_g * cin_g * kvol;

		for (int64_t o = 0; o < cout_g; o++)
			for (int64_t i = 0; i < cin_g; i++)
				for (int64_t s = 0; s < kvol; s++)
					dst[(o * cin_g + i) * kvol + (kvol - 1 - s)] =
						src[(i * cout_g + o) * kvol + s];
	}
	snprintf(name, sizeof(name), "%s", n->name);
	yid = n->outputs[0];
	cur = n->inputs[0];
	/* Zero insertion and padding, axis by axis, as 0/1 matrices. */
	{
		int64_t in[3], out[3], pb[3], st_[3];

		for (int a = 0; a < sp; a++) {
			in[a] = x->dims[2 + a];
			out[a] = y->dims[2 + a];
			pb[a] = pads[a];
			st_[a] = strides[a];
			/* A zero-insertion matrix beyond 64 MB: left to be refused. */
			if (in[a] * (out[a] + (kk[a] - 1) * dd[a]) > NPU_RW_MATRIX_MAX) {
				free(wf);
				return NPU_OK;
			}
		}
		*applied = true;
		if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, r, wd, wf, &wt)))
			return st;
		npu_rw_detach(g, k, yid);
		g->nodes[k].dead = true;
		for (int a = 0; a < sp && !st; a++) {
			int64_t span = (kk[a] - 1) * dd[a], len = out[a] + span, p0 = span - pb[a];
			float *m;

			if (st_[a] == 1 && p0 == 0 && len == in[a])
				continue;
			m = calloc((size_t)(in[a] * len) + 1, sizeof(float));
			if (!m)
				return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
			for (int64_t i = 0; i < in[a]; i++) {
				int64_t j = p0 + i * st_[a];

				if (j >= 0 && j < len)
					m[i * len + j] = 1.0f;
			}
			st = npu_rw_map_axis(g, name, cur, 2 + a, len, m, -1, &cur);
		}
	}
	if (st || (st = npu_rw_op(g, "Conv", 11, name, (int[]){ cur, wt, bias }, bias >= 0 ? 3 : 2,
			       &yid, 1, &c)))
		return st;
	if ((st = npu_ir_set_attr_ints(&g->nodes[c], "kernel_shape", kk, sp)) ||
	    (st = npu_ir_set_attr_ints(&g->nodes[c], "strides", ones, sp)) ||
	    (st = npu_ir_set_attr_ints(&g->nodes[c], "dilations", dd, sp)) ||
	    (st = npu_ir_set_attr_ints(&g->nodes[c], "pads", zeros, 2 * sp)) ||
	    (st = npu_ir_set_attr_int(&g->nodes[c], "group", group)))
		return st;
	return npu_ir_set_attr_string(&g->nodes[c], "auto_pad", "NOTSET");
}

/*
 * Output depth o reads input depths o*sd + t*dd for the kd taps t: slice
 * those planes for every t (stride sd), stack the taps in the channels
 * ([N, kd*C, D', H, W]), move D' next to N and fold it in
 * ([N*D', kd*C, H, W]): one 2-D Conv with weights [Cout][t*C + c] does all
 * output depths at once.  Depth padding is a constant Pad first.
 */
npu_status npu_rewrite_conv3d(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *w = npu_ir_input(g, n, 1);
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	const int64_t *ks, *s, *d, *p;
	int nk, ns, nd, np, yid = n->outputs[0], cur = n->inputs[0], wt, c, kn;
	int bias = n->n_inputs > 2 ? n->inputs[2] : -1, *taps;
	int64_t group, xd[5], yd[5], wd[5], kd, sd, dd, cin, cout, t4[4], t5[5];
	int64_t perm[5] = { 0, 2, 1, 3, 4 };
	float *wf;
	char name[128];
	npu_status st = NPU_OK;

	*applied = false;
	if (!x || !w || !y || x->rank != 5 || x->dtype != NPU_DTYPE_FLOAT32 ||
	    w->dtype != NPU_DTYPE_FLOAT32 || !npu_ir_is_const(w))
		return NPU_OK;
	if ((st = npu_ir_attr_ints(n, "kernel_shape", &ks, &nk)) ||
	    (st = npu_ir_attr_ints(n, "strides", &s, &ns)) ||
	    (st = npu_ir_attr_ints(n, "dilations", &d, &nd)) ||
	    (st = npu_ir_attr_ints(n, "pads", &p, &np)) ||
	    (st = npu_ir_attr_int(n, "group", 1, &group)))
		return st;
	if (nk != 3 || ns != 3 || np != 6 || (nd != 3 && nd != -1) || group != 1)
		return NPU_OK;
	memcpy(xd, x->dims, sizeof(xd));
	memcpy(yd, y->dims, sizeof(yd));
	memcpy(wd, w->dims, sizeof(wd));
	kd = ks[0];
	sd = s[0];
	dd = nd == 3 ? d[0] : 1;
	cin = xd[1];
	cout = wd[0];
	if (kd > 64 || kd < 1 || sd < 1 || dd < 1 || wd[1] != cin || wd[2] != kd ||
	    wd[3] != ks[1] || wd[4] != ks[2] || w->rank != 5)
		return NPU_OK;
	wf = malloc((size_t)(cout * kd * cin * wd[3] * wd[4]) * sizeof(float) + 4);
	taps = malloc((size_t)kd * sizeof(*taps));
	if (!wf || !taps) {
		free(wf);
		free(taps);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	for (int64_t o = 0; o < cout; o++)
		for (int64_t ci = 0; ci < cin; ci++)
			for (int64_t t = 0; t < kd; t++)
				memcpy(&wf[((o * kd + t) * cin + ci) * wd[3] * wd[4]],
				       &((const float *)w->data)[((o * cin + ci) * kd + t) *
								 wd[3] * wd[4]],
				       (size_t)(wd[3] * wd[4]) * sizeof(float));
	t4[0] = cout;
	t4[1] = kd * cin;
	t4[2] = wd[3];
	t4[3] = wd[4];
	*applied = true;
	if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, 4, t4, wf, &wt)))
		goto out;
	snprintf(name, sizeof(name), "%s", n->name);
	{
		int64_t pb[3] = { p[0], p[1], p[2] }, pe[3] = { p[3], p[4], p[5] };
		int64_t sh[2] = { s[1], s[2] }, dl[2] = { nd == 3 ? d[1] : 1, nd == 3 ? d[2] : 1 };
		int64_t k2[2] = { ks[1], ks[2] }, p2[4] = { pb[1], pb[2], pe[1], pe[2] };

		npu_rw_detach(g, k, yid);
		g->nodes[k].dead = true;
		if (pb[0] || pe[0]) {
			int64_t pads[10] = { 0, 0, pb[0], 0, 0, 0, 0, pe[0], 0, 0 };
			int pt;

			memcpy(t5, xd, sizeof(t5));
			t5[2] += pb[0] + pe[0];
			if ((st = npu_rw_ints(g, pads, 10, &pt)) ||
			    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, 5, t5, &c)) ||
			    (st = npu_rw_op(g, "Pad", 13, name, (int[]){ cur, pt }, 2, &c, 1,
					    NULL)))
				goto out;
			cur = c;
		}
		/* Tap t: depths t*dd, t*dd + sd, ... (yd[2] of them). */
		memcpy(t5, xd, sizeof(t5));
		t5[2] = yd[2];
		for (int64_t t = 0; t < kd; t++) {
			int64_t lo = t * dd, hi = t * dd + (yd[2] - 1) * sd + 1, ax = 2;
			int a, b, e, f;

			if ((st = npu_rw_ints(g, &lo, 1, &a)) ||
			    (st = npu_rw_ints(g, &hi, 1, &b)) ||
			    (st = npu_rw_ints(g, &ax, 1, &e)) ||
			    (st = npu_rw_ints(g, &sd, 1, &f)) ||
			    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, 5, t5, &taps[t])) ||
			    (st = npu_rw_op(g, "Slice", 13, name, (int[]){ cur, a, b, e, f }, 5,
					 &taps[t], 1, NULL)))
				goto out;
		}
		cur = taps[0];
		t5[1] = kd * cin;
		if (kd > 1 && ((st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, 5, t5, &cur)) ||
			       (st = npu_rw_op(g, "Concat", 13, name, taps, (int)kd, &cur, 1,
					       &kn)) ||
			       (st = npu_ir_set_attr_int(&g->nodes[kn], "axis", 1))))
			goto out;
		/* [N, kd*C, D', H, W] -> [N, D', kd*C, H, W] -> [N*D', kd*C, H, W] */
		{
			int64_t tp[5] = { t5[0], t5[2], t5[1], t5[3], t5[4] };
			int tt;

			if ((st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, 5, tp, &tt)) ||
			    (st = npu_rw_op(g, "Transpose", 13, name, &cur, 1, &tt, 1, &kn)) ||
			    (st = npu_ir_set_attr_ints(&g->nodes[kn], "perm", perm, 5)))
				goto out;
			t4[0] = tp[0] * tp[1];
			t4[1] = tp[2];
			t4[2] = tp[3];
			t4[3] = tp[4];
			if ((st = npu_rw_reshape(g, name, tt, 4, t4, -1, &cur)))
				goto out;
		}
		t4[1] = cout;
		t4[2] = yd[3];
		t4[3] = yd[4];
		if ((st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, 4, t4, &c)) ||
		    (st = npu_rw_op(g, "Conv", 11, name, (int[]){ cur, wt, bias },
				    bias >= 0 ? 3 : 2,
				 &c, 1, &kn)) ||
		    (st = npu_ir_set_attr_ints(&g->nodes[kn], "kernel_shape", k2, 2)) ||
		    (st = npu_ir_set_attr_ints(&g->nodes[kn], "strides", sh, 2)) ||
		    (st = npu_ir_set_attr_ints(&g->nodes[kn], "dilations", dl, 2)) ||
		    (st = npu_ir_set_attr_ints(&g->nodes[kn], "pads", p2, 4)) ||
		    (st = npu_ir_set_attr_int(&g->nodes[kn], "group", 1)) ||
		    (st = npu_ir_set_attr_string(&g->nodes[kn], "auto_pad", "NOTSET")))
			goto out;
		/* [N*D', Cout, H', W'] -> [N, D', Cout, H', W'] -> y */
		t5[0] = yd[0];
		t5[1] = yd[2];
		t5[2] = cout;
		t5[3] = yd[3];
		t5[4] = yd[4];
		if ((st = npu_rw_reshape(g, name, c, 5, t5, -1, &cur)) ||
		    (st = npu_rw_op(g, "Transpose", 13, name, &cur, 1, &yid, 1, &kn)))
			goto out;
		st = npu_ir_set_attr_ints(&g->nodes[kn], "perm", perm, 5);
	}
out:
	free(taps);
	return st;
}

static npu_status pool_node(npu_ir_graph *g, const char *op, int opset, const char *name,
			    int x, int y, const int64_t *ks, const int64_t *st_,
			    const int64_t *dil, const int64_t *pads, int64_t count_pad)
{
	int k;
	npu_status st = npu_rw_op(g, op, opset, name, &x, 1, &y, 1, &k);

	if (st || (st = npu_ir_set_attr_ints(&g->nodes[k], "kernel_shape", ks, 2)) ||
	    (st = npu_ir_set_attr_ints(&g->nodes[k], "strides", st_, 2)) ||
	    (st = npu_ir_set_attr_ints(&g->nodes[k], "dilations", dil, 2)) ||
	    (st = npu_ir_set_attr_ints(&g->nodes[k], "pads", pads, 4)) ||
	    (st = npu_ir_set_attr_string(&g->nodes[k], "auto_pad", "NOTSET")))
		return st;
	if (!strcmp(op, "AveragePool"))
		st = npu_ir_set_attr_int(&g->nodes[k], "count_include_pad", count_pad);
	return st;
}

/*
 * A box window factorizes: max (or mean, with either padding count) over
 * D x H x W = over D of the result over H x W.  [N, C*D, H, W] pooled in
 * H and W, then [N, C, D, H'*W'] pooled in D.
 */
npu_status npu_rewrite_pool3d(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	const int64_t *ks, *s, *d, *p;
	int nk, ns, nd, np, yid = n->outputs[0], opset = n->opset, t0, t1, t2, t3;
	int64_t cp = 0, xd[5], yd[5], a[4], b[4];
	char name[128], op[16];
	npu_status st;

	*applied = false;
	if (!x || !y || x->rank != 5 || x->dtype != NPU_DTYPE_FLOAT32 ||
	    (n->n_outputs > 1 && n->outputs[1] >= 0))
		return NPU_OK;
	if ((st = npu_ir_attr_ints(n, "kernel_shape", &ks, &nk)) ||
	    (st = npu_ir_attr_ints(n, "strides", &s, &ns)) ||
	    (st = npu_ir_attr_ints(n, "dilations", &d, &nd)) ||
	    (st = npu_ir_attr_ints(n, "pads", &p, &np)) ||
	    (st = npu_ir_attr_int(n, "count_include_pad", 0, &cp)))
		return st;
	if (nk != 3 || ns != 3 || np != 6 || (nd != 3 && nd != -1))
		return NPU_OK;
	memcpy(xd, x->dims, sizeof(xd));
	memcpy(yd, y->dims, sizeof(yd));
	snprintf(name, sizeof(name), "%s", n->name);
	snprintf(op, sizeof(op), "%s", n->op);
	*applied = true;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	a[0] = xd[0];
	a[1] = xd[1] * xd[2];
	a[2] = xd[3];
	a[3] = xd[4];
	if ((st = npu_rw_reshape(g, name, n->inputs[0], 4, a, -1, &t0)))
		return st;
	a[2] = yd[3];
	a[3] = yd[4];
	if ((st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, 4, a, &t1)) ||
	    (st = pool_node(g, op, opset, name, t0, t1, (int64_t[]){ ks[1], ks[2] },
			    (int64_t[]){ s[1], s[2] },
			    (int64_t[]){ nd == 3 ? d[1] : 1, nd == 3 ? d[2] : 1 },
			    (int64_t[]){ p[1], p[2], p[4], p[5] }, cp)))
		return st;
	b[0] = xd[0];
	b[1] = xd[1];
	b[2] = xd[2];
	b[3] = yd[3] * yd[4];
	if ((st = npu_rw_reshape(g, name, t1, 4, b, -1, &t2)))
		return st;
	b[2] = yd[2];
	if ((st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, 4, b, &t3)) ||
	    (st = pool_node(g, op, opset, name, t2, t3, (int64_t[]){ ks[0], 1 },
			    (int64_t[]){ s[0], 1 }, (int64_t[]){ nd == 3 ? d[0] : 1, 1 },
			    (int64_t[]){ p[0], 0, p[3], 0 }, cp)))
		return st;
	return npu_rw_reshape(g, name, t3, 5, yd, yid, &t0);
}
