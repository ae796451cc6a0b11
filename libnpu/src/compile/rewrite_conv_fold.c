// SPDX-License-Identifier: MIT
/*
 * A Conv whose stride exceeds what the TCU strides (NPU_CONV_STRIDE_MAX,
 * 64: conv_geom.c) as a Conv of a smaller stride over a folded input:
 * @fold consecutive samples along the strided axis become channels
 * (sample j * fold + r of channel c is sample j of channel c * fold + r),
 * so the stride becomes stride / fold and the kernel ceil(kernel / fold)
 * taps.  Speech front ends need it: openWakeWord's melspectrogram (and any
 * STFT written as a Conv) hops 160 samples (10 ms at 16 kHz) with a
 * 400-sample frame: fold 80, stride 2, 5 taps.  The STFT operator
 * (rewrite_signal.c) folds its signal with the same npu_rw_fold_axis().
 *
 * The fold is gcd(stride, kernel) when that brings the stride to 64 or
 * less (no zero taps); otherwise the smallest divisor of the stride that
 * does, the kernel zero-extended to a multiple of it.  The padding of the
 * folded axis is a Pad before the fold (a pad of p samples is no whole
 * number of folded taps); the other axis keeps its pads.  A grouped or
 * depthwise Conv folds within each group: a group's channels stay
 * contiguous (channel c becomes c * fold .. c * fold + fold - 1).
 * One axis is folded per application; the driver tries the rewrite again
 * for a 2-D Conv with both strides too large.
 *
 * Refused, by node: a dilation above 1 along a folded axis (its taps are
 * not consecutive samples), and folded weights beyond NPU_RW_MATRIX_MAX.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/conv_geom.h"
#include "compile/npu_rewrite_priv.h"

npu_status npu_rw_fold_axis(npu_ir_graph *g, const char *name, int x, int axis, int64_t used,
			    int64_t fold, int *id)
{
	int64_t d[NPU_MAX_RANK], p[NPU_MAX_RANK], t[NPU_MAX_RANK];
	int r = g->tensors[x].rank, k, tt;
	npu_status st = NPU_OK;

	if (r + 1 > NPU_MAX_RANK || axis < 2 || axis >= r)
		return npu_fail(NPU_ERR_INTERNAL, "fold of axis %d of a rank-%d tensor", axis, r);
	if (used < g->tensors[x].dims[axis])
		st = npu_rw_slice(g, name, x, axis, 0, used, &x);
	if (st)
		return st;
	/* [N, C, .., used / fold, fold, ..] */
	for (int i = 0, j = 0; i < r; i++) {
		d[j++] = i == axis ? used / fold : g->tensors[x].dims[i];
		if (i == axis)
			d[j++] = fold;
	}
	if ((st = npu_rw_reshape(g, name, x, r + 1, d, -1, &x)))
		return st;
	/* the fold next to the channels: [N, C, fold, .., used / fold, ..] */
	p[0] = 0;
	p[1] = 1;
	p[2] = axis + 1;
	for (int i = 2, j = 3; i <= r; i++)
		if (i != axis + 1)
			p[j++] = i;
	for (int i = 0; i <= r; i++)
		t[i] = d[p[i]];
	if ((st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r + 1, t, &tt)) ||
	    (st = npu_rw_op(g, "Transpose", 13, name, &x, 1, &tt, 1, &k)) ||
	    (st = npu_ir_set_attr_ints(&g->nodes[k], "perm", p, r + 1)))
		return st;
	t[1] *= fold;
	memmove(&t[2], &t[3], (size_t)(r - 2) * sizeof(*t));
	return npu_rw_reshape(g, name, tt, r, t, -1, id);
}

static int64_t gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

int64_t npu_rw_stride_fold(int64_t stride, int64_t kernel)
{
	int64_t f = gcd64(stride, kernel);

	if (stride <= NPU_CONV_STRIDE_MAX)
		return 1;
	if (stride / f <= NPU_CONV_STRIDE_MAX)
		return f;
	for (f = (stride + NPU_CONV_STRIDE_MAX - 1) / NPU_CONV_STRIDE_MAX; stride % f; f++)
		;
	return f;
}

static npu_status fold_refuse(const npu_ir_node *n, const char *why)
{
	char lbl[96];

	return npu_fail(NPU_ERR_UNSUPPORTED, "Conv (node %s): %s",
			npu_ir_node_label(n, lbl, sizeof(lbl)), why);
}

npu_status npu_rewrite_conv_fold(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *w = npu_ir_input(g, n, 1);
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	const int64_t *ks, *s, *d, *p;
	int nk, ns, nd, np, r, sp, a = -1, ax, cur, wt, pt, pd;
	int64_t kk[2], ss[2], dd[2], pp[4], xd[NPU_MAX_RANK], wd[NPU_MAX_RANK];
	int64_t fold, kf, outl, used, end, inner = 1, outer, m, cg, pre;
	int64_t pads[2 * NPU_MAX_RANK] = { 0 };
	const float *src;
	float *wf;
	char name[128];
	npu_status st;

	*applied = false;
	if (!x || !w || !y || x->dtype != NPU_DTYPE_FLOAT32 || w->dtype != NPU_DTYPE_FLOAT32 ||
	    !npu_ir_is_const(w) || (x->rank != 3 && x->rank != 4) || w->rank != x->rank)
		return NPU_OK;
	if ((st = npu_ir_attr_ints(n, "kernel_shape", &ks, &nk)) ||
	    (st = npu_ir_attr_ints(n, "strides", &s, &ns)) ||
	    (st = npu_ir_attr_ints(n, "dilations", &d, &nd)) ||
	    (st = npu_ir_attr_ints(n, "pads", &p, &np)))
		return st;
	r = x->rank;
	sp = r - 2;
	if (nk != sp || ns != sp || np != 2 * sp || (nd != sp && nd != -1))
		return NPU_OK;
	for (int i = 0; i < sp; i++) {
		kk[i] = ks[i];
		ss[i] = s[i];
		dd[i] = nd == sp ? d[i] : 1;
		pp[i] = p[i];
		pp[sp + i] = p[sp + i];
		if (a < 0 && ss[i] > NPU_CONV_STRIDE_MAX)
			a = i;
	}
	if (a < 0)
		return NPU_OK;
	if (dd[a] != 1)
		return fold_refuse(n, "a stride above 64 (the TCU's limit) with a dilation above 1 along the same axis: the fold needs consecutive taps; use dilation 1 or a stride of at most 64");
	ax = 2 + a;
	fold = npu_rw_stride_fold(ss[a], kk[a]);
	kf = (kk[a] + fold - 1) / fold;
	memcpy(xd, x->dims, sizeof(xd));
	memcpy(wd, w->dims, sizeof(wd));
	if (wd[ax] != kk[a])
		return NPU_OK;
	outl = y->dims[ax];
	/* Samples of the padded input the folded Conv reads. */
	used = ((outl - 1) * (ss[a] / fold) + kf) * fold;
	end = used - pp[a] - xd[ax];	/* end padding needed; < 0: a Slice */
	m = wd[0];
	cg = wd[1];
	for (int i = ax + 1; i < r; i++)
		inner *= wd[i];
	pre = ax == 2 ? 1 : wd[2];	/* a 2-D W folded: the H taps before it */
	outer = m * cg;
	if (outer * fold * pre * kf * inner > NPU_RW_MATRIX_MAX)
		return fold_refuse(n, "the folded weights are too large (more than 16M values); a stride of at most 64 needs no fold");
	/* W'[o][c * fold + f][.. j ..] = W[o][c][.. j * fold + f ..], 0 past the kernel */
	wf = calloc((size_t)(outer * fold * pre * kf * inner) + 1, sizeof(*wf));
	if (!wf)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	src = w->data;
	for (int64_t oc = 0; oc < outer; oc++) {
		for (int64_t h = 0; h < pre; h++)
			for (int64_t t = 0; t < kk[a]; t++)
				for (int64_t i = 0; i < inner; i++) {
					int64_t f = t % fold, j = t / fold;
					int64_t to = (((oc * fold + f) * pre + h) * kf + j) * inner + i;

					wf[to] = src[((oc * pre + h) * kk[a] + t) * inner + i];
				}
	}
	wd[1] = cg * fold;
	wd[ax] = kf;
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, r, wd, wf, &wt)))
		return st;
	cur = g->nodes[k].inputs[0];
	if (pp[a] || end > 0) {
		int64_t td[NPU_MAX_RANK];

		memcpy(td, xd, sizeof(td));
		pads[ax] = pp[a];
		pads[r + ax] = end > 0 ? end : 0;
		td[ax] += pads[ax] + pads[r + ax];
		if ((st = npu_rw_ints(g, pads, 2 * r, &pt)) ||
		    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, td, &pd)) ||
		    (st = npu_rw_op(g, "Pad", 13, name, (int[]){ cur, pt }, 2, &pd, 1, NULL)))
			return st;
		cur = pd;
	}
	if ((st = npu_rw_fold_axis(g, name, cur, ax, used, fold, &cur)))
		return st;
	/* The node, edited in place: stride and kernel of the folded axis, no pads there. */
	g->nodes[k].inputs[0] = cur;
	g->nodes[k].inputs[1] = wt;
	kk[a] = kf;
	ss[a] /= fold;
	pp[a] = 0;
	pp[sp + a] = 0;
	if ((st = npu_ir_set_attr_ints(&g->nodes[k], "kernel_shape", kk, sp)) ||
	    (st = npu_ir_set_attr_ints(&g->nodes[k], "strides", ss, sp)) ||
	    (st = npu_ir_set_attr_ints(&g->nodes[k], "pads", pp, 2 * sp)))
		return st;
	if ((st = npu_ir_set_attr_ints(&g->nodes[k], "dilations", dd, sp)))
		return st;
	return npu_ir_set_attr_string(&g->nodes[k], "auto_pad", "NOTSET");
}
