// SPDX-License-Identifier: MIT
/*
 * Graph rewrites before fusion and lowering: operators the NPU has no
 * lowering for become operators it has, on a shape-inferred graph.
 *
 * - Resize (nearest, linear, cubic; every coordinate transformation) and
 *   ConvTranspose's zero insertion are linear maps along one axis at a
 *   time with weights known at compile time: each axis becomes a MatMul by
 *   a constant [in][out] matrix (with Transposes around it when the axis
 *   is not the last).  ConvTranspose then is an ordinary stride-1 Conv
 *   with spatially flipped, channel-swapped weights over the zero-inserted
 *   and padded input.
 * - LayerNormalization's optional Mean and InvStdDev outputs: ReduceMean,
 *   Sub, Mul, Add, Sqrt and Reciprocal beside the fused normalization.
 * - Pad in 'edge' and 'reflect' modes: a Concat of one-element Slices.
 * - Batched MatMul / QLinearMatMul with a constant B: one 2-D MatMul per
 *   batch element, concatenated; Gemm with a full matrix C: Gemm + Add.
 *
 * A node this pass cannot rewrite is left alone, so the lowering refuses
 * it by name as before.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_cc.h"
#include "compile/npu_rewrite.h"

/* ---- building blocks ---- */

static npu_status new_tensor(npu_ir_graph *g, npu_dtype dt, int rank, const int64_t *dims,
			     int *id)
{
	return npu_ir_add_tensor(g, NULL, dt, rank, dims, id);
}

/* A constant tensor taking @data (malloc'd; freed on failure). */
static npu_status new_const(npu_ir_graph *g, npu_dtype dt, int rank, const int64_t *dims,
			    void *data, int *id)
{
	npu_status st = new_tensor(g, dt, rank, dims, id);
	int64_t n = 1;

	if (st) {
		free(data);
		return st;
	}
	for (int i = 0; i < rank; i++)
		n *= dims[i];
	return npu_ir_set_const_owned(g, *id, data, (size_t)n * npu_dtype_size(dt));
}

static npu_status ints_const(npu_ir_graph *g, const int64_t *v, int n, int *id)
{
	int64_t *d = malloc((size_t)(n ? n : 1) * sizeof(*d)), dim = n;

	if (!d)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	memcpy(d, v, (size_t)n * sizeof(*d));
	return new_const(g, NPU_DTYPE_INT64, 1, &dim, d, id);
}

/* Append node @op at @opset; *@id gets its id (may be NULL). */
static npu_status add_op(npu_ir_graph *g, const char *op, int opset, const char *name,
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
static npu_status out_tensor(npu_ir_graph *g, int y, npu_dtype dt, int rank,
			     const int64_t *dims, int *id)
{
	if (y >= 0) {
		*id = y;
		return NPU_OK;
	}
	return new_tensor(g, dt, rank, dims, id);
}

/* Node @k no longer produces tensor @t: the rewrite will. */
static void detach_output(npu_ir_graph *g, int k, int t)
{
	for (int i = 0; i < g->nodes[k].n_outputs; i++)
		if (g->nodes[k].outputs[i] == t)
			g->nodes[k].outputs[i] = -1;
	g->tensors[t].producer = -1;
}

/*
 * *@res = @x (float32) mapped along @axis by the matrix @m [in][out]
 * (malloc'd, taken): a MatMul on the last axis, Transposes around it for
 * the others.  Writes @y when >= 0, else a new tensor.
 */
static npu_status map_axis(npu_ir_graph *g, const char *name, int x, int axis, int64_t out,
			   float *m, int y, int *res)
{
	int r = g->tensors[x].rank, last = r - 1, mt, t1 = x, t2, k;
	int64_t dims[NPU_MAX_RANK], mdims[2], perm[NPU_MAX_RANK];
	npu_status st;

	memcpy(dims, g->tensors[x].dims, sizeof(dims));
	mdims[0] = dims[axis];
	mdims[1] = out;
	if ((st = new_const(g, NPU_DTYPE_FLOAT32, 2, mdims, m, &mt)))
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
		if ((st = new_tensor(g, NPU_DTYPE_FLOAT32, r, td, &t1)) ||
		    (st = add_op(g, "Transpose", 13, name, &x, 1, &t1, 1, &k)) ||
		    (st = npu_ir_set_attr_ints(&g->nodes[k], "perm", perm, r)))
			return st;
		memcpy(dims, td, sizeof(dims));
	}
	dims[last] = out;
	st = axis == last ? out_tensor(g, y, NPU_DTYPE_FLOAT32, r, dims, &t2) :
	     new_tensor(g, NPU_DTYPE_FLOAT32, r, dims, &t2);
	if (!st)
		st = add_op(g, "MatMul", 13, name, (int[]){ t1, mt }, 2, &t2, 1, NULL);
	if (st || axis == last) {
		*res = t2;
		return st;
	}
	{
		int64_t yd[NPU_MAX_RANK];

		memcpy(yd, dims, sizeof(yd));
		yd[axis] = dims[last];
		yd[last] = dims[axis];
		if ((st = out_tensor(g, y, NPU_DTYPE_FLOAT32, r, yd, res)) ||
		    (st = add_op(g, "Transpose", 13, name, &t2, 1, res, 1, &k)))
			return st;
		return npu_ir_set_attr_ints(&g->nodes[k], "perm", perm, r);
	}
}

static npu_status reshape_to(npu_ir_graph *g, const char *name, int x, int rank,
			     const int64_t *dims, int y, int *id);

/* ---- Resize ---- */

struct resize_how {
	const char *mode, *ctm, *nearest;
	float cubic_a, extrap;
	int64_t exclude;
};

/*
 * Source coordinate of output index @i; false when outside (crop and
 * resize).  As in the ONNX reference, the resized length is in * scale
 * before rounding, which matters for align_corners when downsampling.
 */
static bool resize_coord(const struct resize_how *h, int64_t i, int64_t in, double scale,
			 double roi_lo, double roi_hi, double *x)
{
	const char *c = h->ctm;
	double len = (double)in * scale;

	if (!strcmp(c, "half_pixel"))
		*x = (i + 0.5) / scale - 0.5;
	else if (!strcmp(c, "pytorch_half_pixel"))
		*x = len > 1 ? (i + 0.5) / scale - 0.5 : 0.0;
	else if (!strcmp(c, "align_corners"))
		*x = len != 1 ? (double)i * (double)(in - 1) / (len - 1) : 0.0;
	else if (!strcmp(c, "asymmetric"))
		*x = i / scale;
	else if (!strcmp(c, "tf_half_pixel_for_nn"))
		*x = (i + 0.5) / scale;
	else {	/* tf_crop_and_resize */
		*x = len > 1 ? roi_lo * (in - 1) + i * (roi_hi - roi_lo) * (in - 1) / (len - 1) :
		     0.5 * (roi_lo + roi_hi) * (in - 1);
		return *x >= 0 && *x <= (double)(in - 1);
	}
	return true;
}

static int64_t clampi(int64_t v, int64_t n)
{
	return v < 0 ? 0 : v >= n ? n - 1 : v;
}

static int64_t nearest_index(const char *mode, double x)
{
	double f = floor(x), r = x - f;

	if (!strcmp(mode, "floor"))
		return (int64_t)f;
	if (!strcmp(mode, "ceil"))
		return (int64_t)ceil(x);
	if (!strcmp(mode, "round_prefer_ceil"))
		return (int64_t)(r >= 0.5 ? f + 1 : f);
	return (int64_t)(r > 0.5 ? f + 1 : f);	/* round_prefer_floor */
}

static void cubic_coeffs(double r, double a, double w[4])
{
	double p = r + 1, q = 1 - r, s = 2 - r;

	w[0] = ((a * p - 5 * a) * p + 8 * a) * p - 4 * a;
	w[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
	w[2] = ((a + 2) * q - (a + 3)) * q * q + 1;
	w[3] = ((a * s - 5 * a) * s + 8 * a) * s - 4 * a;
}

/*
 * The [in][out] interpolation matrix of one axis (column j: the weights of
 * output j), valid[j] false where crop-and-resize extrapolates.
 */
static npu_status resize_matrix(const struct resize_how *h, int64_t in, int64_t out, double scale,
			     double roi_lo, double roi_hi, float *m, bool *valid)
{
	memset(m, 0, (size_t)(in * out) * sizeof(*m));
	for (int64_t j = 0; j < out; j++) {
		double x, f, r, w[4];
		int64_t i0;

		valid[j] = resize_coord(h, j, in, scale, roi_lo, roi_hi, &x);
		if (!valid[j])
			continue;
		if (!strcmp(h->mode, "nearest")) {
			m[clampi(nearest_index(h->nearest, x), in) * out + j] = 1.0f;
			continue;
		}
		f = floor(x);
		r = x - f;
		i0 = (int64_t)f;
		if (!strcmp(h->mode, "linear")) {
			if (x < 0) {	/* clamped to the edge */
				i0 = 0;
				r = 0;
			}
			m[clampi(i0, in) * out + j] += (float)(1 - r);
			m[clampi(i0 + 1, in) * out + j] += (float)r;
			continue;
		}
		if (strcmp(h->mode, "cubic"))
			return npu_fail(NPU_ERR_UNSUPPORTED, "Resize mode '%s'", h->mode);
		cubic_coeffs(r, h->cubic_a, w);
		if (h->exclude) {
			double sum = 0;

			for (int t = 0; t < 4; t++)
				if (i0 - 1 + t < 0 || i0 - 1 + t >= in)
					w[t] = 0;
			for (int t = 0; t < 4; t++)
				sum += w[t];
			for (int t = 0; t < 4; t++)
				w[t] = sum != 0 ? w[t] / sum : 0;
		}
		for (int t = 0; t < 4; t++)
			m[clampi(i0 - 1 + t, in) * out + j] += (float)w[t];
	}
	return NPU_OK;
}

/* Constant float input @i of @n into @v (count in *@cnt; 0 if absent or empty). */
static npu_status opt_floats(const npu_ir_graph *g, const npu_ir_node *n, int i, float *v,
			     int cap, int *cnt)
{
	const npu_ir_tensor *t = npu_ir_input(g, n, i);

	*cnt = 0;
	if (!t || npu_ir_numel(t) == 0)
		return NPU_OK;
	return npu_ir_const_floats(t, v, cap, cnt);
}

static npu_status rewrite_resize(npu_ir_graph *g, int k)
{
	const npu_ir_node *n = &g->nodes[k];
	bool resize = !strcmp(n->op, "Resize"), old = !resize || n->opset < 11;
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	struct resize_how h = { "nearest", "half_pixel", "round_prefer_floor", -0.75f, 0, 0 };
	float scales[NPU_MAX_RANK], roi[2 * NPU_MAX_RANK];
	int ns = 0, nroi = 0, r, cur, yid, naxes = 0, last_axis = -1;
	int64_t in[NPU_MAX_RANK], outd[NPU_MAX_RANK], antialias = 0;
	bool *valid[NPU_MAX_RANK] = { NULL }, extrap = false;
	float *mats[NPU_MAX_RANK] = { NULL };
	char name[128];
	npu_status st = NPU_OK;

	if (!x || !y || x->dtype != NPU_DTYPE_FLOAT32 || x->rank < 2 ||
	    npu_ir_attr_find(n, "axes") || npu_ir_attr_find(n, "keep_aspect_ratio_policy"))
		return NPU_OK;
	r = x->rank;
	yid = n->outputs[0];
	cur = n->inputs[0];
	snprintf(name, sizeof(name), "%s", n->name);
	memcpy(in, x->dims, sizeof(in));
	memcpy(outd, y->dims, sizeof(outd));
	if ((st = npu_ir_attr_string(n, "mode", "nearest", &h.mode)) ||
	    (st = npu_ir_attr_int(n, "antialias", 0, &antialias)))
		return st;
	if (antialias)
		return NPU_OK;
	if (old) {
		const float *sv;

		h.ctm = "asymmetric";
		h.nearest = "floor";
		if (!resize && n->opset < 9) {
			if ((st = npu_ir_attr_floats(n, "scales", &sv, &ns)))
				return st;
			if (ns > NPU_MAX_RANK)
				return NPU_OK;
			for (int i = 0; i < ns; i++)
				scales[i] = sv[i];
		} else if ((st = opt_floats(g, n, 1, scales, NPU_MAX_RANK, &ns))) {
			return st;
		}
		if (!strcmp(h.mode, "bilinear"))
			h.mode = "linear";
	} else if ((st = npu_ir_attr_string(n, "coordinate_transformation_mode", "half_pixel",
					      &h.ctm)) ||
		   (st = npu_ir_attr_string(n, "nearest_mode", "round_prefer_floor",
					    &h.nearest)) ||
		   (st = npu_ir_attr_float(n, "cubic_coeff_a", -0.75f, &h.cubic_a)) ||
		   (st = npu_ir_attr_float(n, "extrapolation_value", 0.0f, &h.extrap)) ||
		   (st = npu_ir_attr_int(n, "exclude_outside", 0, &h.exclude)) ||
		   (st = opt_floats(g, n, 1, roi, 2 * NPU_MAX_RANK, &nroi)) ||
		   (st = opt_floats(g, n, 2, scales, NPU_MAX_RANK, &ns))) {
		return st;
	}
	if (ns && ns != r)
		return NPU_OK;
	if (!strcmp(h.ctm, "tf_crop_and_resize") && nroi != 2 * r)
		return NPU_OK;
	for (int a = 0; a < r; a++) {
		double scale = ns ? scales[a] : (double)outd[a] / (double)in[a];
		bool crop = !strcmp(h.ctm, "tf_crop_and_resize");

		if (in[a] == outd[a] && scale == 1.0 && !crop)
			continue;
		if (in[a] == outd[a] && crop && roi[a] == 0 && roi[r + a] == 1)
			continue;
		mats[a] = malloc((size_t)(in[a] * outd[a]) * sizeof(float) + 4);
		valid[a] = malloc((size_t)outd[a] * sizeof(bool) + 1);
		if (!mats[a] || !valid[a]) {
			st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
			goto out;
		}
		st = resize_matrix(&h, in[a], outd[a], scale, crop ? roi[a] : 0,
				       crop ? roi[r + a] : 1, mats[a], valid[a]);
		if (st) {
			st = NPU_OK;	/* an unknown mode: leave it to be refused */
			goto out;
		}
		for (int64_t j = 0; j < outd[a]; j++)
			extrap |= !valid[a][j] && h.extrap != 0.0f;
		naxes++;
		last_axis = a;
	}
	if (!naxes)
		goto out;	/* an identity: the lowering refuses it by name */
	detach_output(g, k, yid);
	g->nodes[k].dead = true;
	for (int a = 0; a < r && !st; a++) {
		if (!mats[a])
			continue;
		st = map_axis(g, name, cur, a, outd[a], mats[a],
			      a == last_axis && !extrap ? yid : -1, &cur);
		mats[a] = NULL;
		if (!st && a != last_axis)
			in[a] = outd[a];
	}
	if (!st && extrap) {
		/* Extrapolated outputs got 0 from the matrices: add the value. */
		int64_t ed[NPU_MAX_RANK], total = 1;
		float *e;
		int et;

		for (int a = 0; a < r; a++) {
			ed[a] = valid[a] ? outd[a] : 1;
			total *= ed[a];
		}
		e = malloc((size_t)total * sizeof(float));
		if (!e) {
			st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
			goto out;
		}
		for (int64_t i = 0; i < total; i++) {
			int64_t rem = i;
			bool ok = true;

			for (int a = r - 1; a >= 0; a--) {
				if (valid[a])
					ok &= valid[a][rem % ed[a]];
				rem /= ed[a];
			}
			e[i] = ok ? 0.0f : h.extrap;
		}
		st = new_const(g, NPU_DTYPE_FLOAT32, r, ed, e, &et);
		if (!st)
			st = add_op(g, "Add", 14, name, (int[]){ cur, et }, 2, &yid, 1, NULL);
	}
out:
	for (int a = 0; a < r; a++) {
		free(mats[a]);
		free(valid[a]);
	}
	return st;
}

/* ---- ConvTranspose ---- */

static npu_status rewrite_conv_transpose(npu_ir_graph *g, int k)
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
	    x->dims[1] % group)
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
	for (int64_t gi = 0; gi < group; gi++)
		for (int64_t o = 0; o < cout_g; o++)
			for (int64_t i = 0; i < cin_g; i++)
				for (int64_t s = 0; s < kvol; s++)
					wf[((gi * cout_g + o) * cin_g + i) * kvol + (kvol - 1 - s)] =
						((const float *)w->data)
						[((gi * cin_g + i) * cout_g + o) * kvol + s];
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
		}
		if ((st = new_const(g, NPU_DTYPE_FLOAT32, r, wd, wf, &wt)))
			return st;
		detach_output(g, k, yid);
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
			st = map_axis(g, name, cur, 2 + a, len, m, -1, &cur);
		}
	}
	if (st || (st = add_op(g, "Conv", 11, name, (int[]){ cur, wt, bias }, bias >= 0 ? 3 : 2,
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

/* ---- 3-D Conv as one 2-D Conv over depth-stacked channels ---- */

/*
 * Output depth o reads input depths o*sd + t*dd for the kd taps t: slice
 * those planes for every t (stride sd), stack the taps in the channels
 * ([N, kd*C, D', H, W]), move D' next to N and fold it in
 * ([N*D', kd*C, H, W]): one 2-D Conv with weights [Cout][t*C + c] does all
 * output depths at once.  Depth padding is a constant Pad first.
 */
static npu_status rewrite_conv3d(npu_ir_graph *g, int k)
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
	if (kd > 64 || wd[1] != cin)
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
	if ((st = new_const(g, NPU_DTYPE_FLOAT32, 4, t4, wf, &wt)))
		goto out;
	snprintf(name, sizeof(name), "%s", n->name);
	{
		int64_t pb[3] = { p[0], p[1], p[2] }, pe[3] = { p[3], p[4], p[5] };
		int64_t sh[2] = { s[1], s[2] }, dl[2] = { nd == 3 ? d[1] : 1, nd == 3 ? d[2] : 1 };
		int64_t k2[2] = { ks[1], ks[2] }, p2[4] = { pb[1], pb[2], pe[1], pe[2] };

		detach_output(g, k, yid);
		g->nodes[k].dead = true;
		if (pb[0] || pe[0]) {
			int64_t pads[10] = { 0, 0, pb[0], 0, 0, 0, 0, pe[0], 0, 0 };
			int pt;

			memcpy(t5, xd, sizeof(t5));
			t5[2] += pb[0] + pe[0];
			if ((st = ints_const(g, pads, 10, &pt)) ||
			    (st = new_tensor(g, NPU_DTYPE_FLOAT32, 5, t5, &c)) ||
			    (st = add_op(g, "Pad", 13, name, (int[]){ cur, pt }, 2, &c, 1, NULL)))
				goto out;
			cur = c;
		}
		/* Tap t: depths t*dd, t*dd + sd, ... (yd[2] of them). */
		memcpy(t5, xd, sizeof(t5));
		t5[2] = yd[2];
		for (int64_t t = 0; t < kd; t++) {
			int64_t lo = t * dd, hi = t * dd + (yd[2] - 1) * sd + 1, ax = 2;
			int a, b, e, f;

			if ((st = ints_const(g, &lo, 1, &a)) || (st = ints_const(g, &hi, 1, &b)) ||
			    (st = ints_const(g, &ax, 1, &e)) || (st = ints_const(g, &sd, 1, &f)) ||
			    (st = new_tensor(g, NPU_DTYPE_FLOAT32, 5, t5, &taps[t])) ||
			    (st = add_op(g, "Slice", 13, name, (int[]){ cur, a, b, e, f }, 5,
					 &taps[t], 1, NULL)))
				goto out;
		}
		cur = taps[0];
		t5[1] = kd * cin;
		if (kd > 1 && ((st = new_tensor(g, NPU_DTYPE_FLOAT32, 5, t5, &cur)) ||
			       (st = add_op(g, "Concat", 13, name, taps, (int)kd, &cur, 1, &kn)) ||
			       (st = npu_ir_set_attr_int(&g->nodes[kn], "axis", 1))))
			goto out;
		/* [N, kd*C, D', H, W] -> [N, D', kd*C, H, W] -> [N*D', kd*C, H, W] */
		{
			int64_t tp[5] = { t5[0], t5[2], t5[1], t5[3], t5[4] };
			int tt;

			if ((st = new_tensor(g, NPU_DTYPE_FLOAT32, 5, tp, &tt)) ||
			    (st = add_op(g, "Transpose", 13, name, &cur, 1, &tt, 1, &kn)) ||
			    (st = npu_ir_set_attr_ints(&g->nodes[kn], "perm", perm, 5)))
				goto out;
			t4[0] = tp[0] * tp[1];
			t4[1] = tp[2];
			t4[2] = tp[3];
			t4[3] = tp[4];
			if ((st = reshape_to(g, name, tt, 4, t4, -1, &cur)))
				goto out;
		}
		t4[1] = cout;
		t4[2] = yd[3];
		t4[3] = yd[4];
		if ((st = new_tensor(g, NPU_DTYPE_FLOAT32, 4, t4, &c)) ||
		    (st = add_op(g, "Conv", 11, name, (int[]){ cur, wt, bias }, bias >= 0 ? 3 : 2,
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
		if ((st = reshape_to(g, name, c, 5, t5, -1, &cur)) ||
		    (st = add_op(g, "Transpose", 13, name, &cur, 1, &yid, 1, &kn)))
			goto out;
		st = npu_ir_set_attr_ints(&g->nodes[kn], "perm", perm, 5);
	}
out:
	free(taps);
	return st;
}

/* ---- LayerNormalization's Mean and InvStdDev ---- */

static npu_status rewrite_layernorm_stats(npu_ir_graph *g, int k)
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
	if (mean >= 0)
		detach_output(g, k, mean);
	if (inv >= 0)
		detach_output(g, k, inv);
	if ((st = out_tensor(g, mean, NPU_DTYPE_FLOAT32, r, kd, &mean)) ||
	    (st = add_op(g, "ReduceMean", 13, name, &xi, 1, &mean, 1, &kn)) ||
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
	if ((st = new_const(g, NPU_DTYPE_FLOAT32, 1, (int64_t[]){ 1 }, ev, &et)) ||
	    (st = new_tensor(g, NPU_DTYPE_FLOAT32, r, xd, &d)) ||
	    (st = add_op(g, "Sub", 14, name, (int[]){ xi, mean }, 2, &d, 1, NULL)) ||
	    (st = new_tensor(g, NPU_DTYPE_FLOAT32, r, xd, &sq)) ||
	    (st = add_op(g, "Mul", 14, name, (int[]){ d, d }, 2, &sq, 1, NULL)) ||
	    (st = new_tensor(g, NPU_DTYPE_FLOAT32, r, kd, &var)) ||
	    (st = add_op(g, "ReduceMean", 13, name, &sq, 1, &var, 1, &kn)) ||
	    (st = npu_ir_set_attr_ints(&g->nodes[kn], "axes", axes, r - (int)axis)) ||
	    (st = npu_ir_set_attr_int(&g->nodes[kn], "keepdims", 1)) ||
	    (st = new_tensor(g, NPU_DTYPE_FLOAT32, r, kd, &ve)) ||
	    (st = add_op(g, "Add", 14, name, (int[]){ var, et }, 2, &ve, 1, NULL)) ||
	    (st = new_tensor(g, NPU_DTYPE_FLOAT32, r, kd, &sd)) ||
	    (st = add_op(g, "Sqrt", 13, name, &ve, 1, &sd, 1, NULL)))
		return st;
	return add_op(g, "Reciprocal", 13, name, &sd, 1, &inv, 1, NULL);
}

/* ---- Pad: edge, reflect, wrap ---- */

/* *@id = elements [@i, @i + 1) of @x along @axis (any dtype). */
static npu_status slice_one(npu_ir_graph *g, const char *name, int x, int axis, int64_t i,
			    int *id)
{
	int64_t dims[NPU_MAX_RANK], lo = i, hi = i + 1, ax = axis;
	int s, e, a;
	npu_status st;

	memcpy(dims, g->tensors[x].dims, sizeof(dims));
	dims[axis] = 1;
	if ((st = ints_const(g, &lo, 1, &s)) || (st = ints_const(g, &hi, 1, &e)) ||
	    (st = ints_const(g, &ax, 1, &a)) ||
	    (st = new_tensor(g, g->tensors[x].dtype, g->tensors[x].rank, dims, id)))
		return st;
	return add_op(g, "Slice", 13, name, (int[]){ x, s, e, a }, 4, id, 1, NULL);
}

/* Source index of padded position @j (-pb <= j < n + pe) along an axis of @n. */
static int64_t pad_source(const char *mode, int64_t j, int64_t n)
{
	if (!strcmp(mode, "edge"))
		return clampi(j, n);
	if (!strcmp(mode, "wrap"))
		return ((j % n) + n) % n;
	return j < 0 ? -j : j >= n ? 2 * (n - 1) - j : j;	/* reflect */
}

static npu_status rewrite_pad(npu_ir_graph *g, int k)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0);
	int64_t pads[2 * NPU_MAX_RANK], axes[NPU_MAX_RANK], pb[NPU_MAX_RANK] = { 0 };
	int64_t pe[NPU_MAX_RANK] = { 0 }, dims[NPU_MAX_RANK];
	int np = 0, na = 0, r, cur, yid, last = -1, *parts = NULL;
	const char *mode;
	char name[128];
	npu_status st;

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
	detach_output(g, k, yid);
	g->nodes[k].dead = true;
	st = NPU_OK;
	for (int a = 0; a <= last && !st; a++) {
		int64_t len = dims[a], total = pb[a] + len + pe[a], one[NPU_MAX_RANK];
		int np_ = 0, nxt, c;

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
			st = slice_one(g, name, cur, a, pad_source(mode, j, len), &parts[np_++]);
		}
		memcpy(one, g->tensors[cur].dims, sizeof(one));
		one[a] = total;
		if (!st)
			st = out_tensor(g, a == last ? yid : -1, g->tensors[cur].dtype, r, one, &nxt);
		if (!st)
			st = add_op(g, "Concat", 13, name, parts, np_, &nxt, 1, &c);
		if (!st)
			st = npu_ir_set_attr_int(&g->nodes[c], "axis", a);
		free(parts);
		parts = NULL;
		cur = nxt;
	}
	return st;
}

/* ---- MatMul with batched constant B, Gemm with a matrix C ---- */

static npu_status rewrite_batched_matmul(npu_ir_graph *g, int k)
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
		if ((st = new_const(g, b->dtype, 2, kn, bd, &ins[bi])))
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
	detach_output(g, k, yid);
	g->nodes[k].dead = true;
	d3[0] = nb;
	d3[1] = M;
	d3[2] = K;
	a3 = ins[0];
	if (g->tensors[a3].rank != 3) {
		int sh;

		if ((st = ints_const(g, d3, 3, &sh)) ||
		    (st = new_tensor(g, g->tensors[ins[0]].dtype, 3, d3, &a3)) ||
		    (st = add_op(g, "Reshape", 14, name, (int[]){ ins[0], sh }, 2, &a3, 1, NULL)))
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
		if ((st = slice_one(g, name, a3, 0, i, &ins[0])) ||
		    (st = new_const(g, g->tensors[ins[bi]].dtype, 2, kn, bd, &ins[bi])) ||
		    (st = new_tensor(g, g->tensors[yid].dtype, 3, od, &parts[i])))
			break;
		st = add_op(g, ql ? "QLinearMatMul" : "MatMul", 13, name, ins, nin, &parts[i], 1,
			    NULL);
		ins[bi] = g->nodes[k].inputs[bi];
	}
	d3[2] = N;
	if (!st)
		st = out_tensor(g, g->tensors[yid].rank == 3 ? yid : -1, g->tensors[yid].dtype, 3,
				d3, &cat);
	if (!st)
		st = add_op(g, "Concat", 13, name, parts, (int)nb, &cat, 1, &c);
	if (!st)
		st = npu_ir_set_attr_int(&g->nodes[c], "axis", 0);
	if (!st && cat != yid) {
		int sh;

		if (!(st = ints_const(g, yd, g->tensors[yid].rank, &sh)))
			st = add_op(g, "Reshape", 14, name, (int[]){ cat, sh }, 2, &yid, 1, NULL);
	}
out:
	free(parts);
	return st;
}

/* Gemm with C of [M, N] or [M, 1]: the Gemm without C, then Add beta * C. */
static npu_status rewrite_gemm_matrix_c(npu_ir_graph *g, int k)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *c = npu_ir_input(g, n, 2), *y = npu_ir_output(g, n, 0);
	int yid = n->outputs[0], cid, t;
	int64_t N, cn, yd[2], cd[NPU_MAX_RANK], cr;
	float beta, *cv;
	char name[128];
	npu_status st;

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
	if ((st = new_const(g, NPU_DTYPE_FLOAT32, (int)cr, cd, cv, &cid)) ||
	    (st = new_tensor(g, NPU_DTYPE_FLOAT32, 2, yd, &t)))
		return st;
	detach_output(g, k, yid);
	g->nodes[k].outputs[0] = t;
	g->tensors[t].producer = k;
	g->nodes[k].inputs[2] = -1;
	return add_op(g, "Add", 14, name, (int[]){ t, cid }, 2, &yid, 1, NULL);
}

/* ---- 8-bit operators computed in float ---- */

static bool is_8bit(npu_dtype t)
{
	return t == NPU_DTYPE_INT8 || t == NPU_DTYPE_UINT8;
}

/* *@id = @x as float32: a converted constant, or a Cast. */
static npu_status to_float(npu_ir_graph *g, const char *name, int x, int *id)
{
	const npu_ir_tensor *t = &g->tensors[x];
	int64_t cnt = npu_ir_numel(t), dims[NPU_MAX_RANK];
	int r = t->rank, k;
	npu_status st;

	memcpy(dims, t->dims, sizeof(dims));
	if (npu_ir_is_const(t)) {
		float *f = malloc((size_t)(cnt ? cnt : 1) * sizeof(float));

		if (!f)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		for (int64_t i = 0; i < cnt; i++)
			f[i] = t->dtype == NPU_DTYPE_INT8 ? ((const int8_t *)t->data)[i] :
			       ((const uint8_t *)t->data)[i];
		return new_const(g, NPU_DTYPE_FLOAT32, r, dims, f, id);
	}
	if ((st = new_tensor(g, NPU_DTYPE_FLOAT32, r, dims, id)) ||
	    (st = add_op(g, "Cast", 13, name, &x, 1, id, 1, &k)))
		return st;
	return npu_ir_set_attr_int(&g->nodes[k], "to", 1);	/* FLOAT */
}

/*
 * *@id = @x (float32 holding integers) wrapped into @dt's range modulo 256,
 * as integer arithmetic overflows: x - 256 floor((x - lowest) / 256).
 * Exact in float32 for |x| < 2^24.
 */
static npu_status wrap_256(npu_ir_graph *g, const char *name, int x, npu_dtype dt, int *id)
{
	int64_t dims[NPU_MAX_RANK], one = 1;
	int r = g->tensors[x].rank, c[3], t[4];
	float *v[3];
	npu_status st = NPU_OK;

	memcpy(dims, g->tensors[x].dims, sizeof(dims));
	for (int i = 0; i < 3; i++) {
		v[i] = malloc(sizeof(float));
		if (!v[i]) {
			while (i--)
				free(v[i]);
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		}
	}
	*v[0] = dt == NPU_DTYPE_INT8 ? 128.0f : 0.0f;
	*v[1] = 1.0f / 256.0f;
	*v[2] = 256.0f;
	for (int i = 0; i < 3; i++)
		if (st)
			free(v[i]);
		else
			st = new_const(g, NPU_DTYPE_FLOAT32, 1, &one, v[i], &c[i]);
	for (int i = 0; i < 4 && !st; i++)
		st = new_tensor(g, NPU_DTYPE_FLOAT32, r, dims, &t[i]);
	if (st || (st = add_op(g, "Add", 14, name, (int[]){ x, c[0] }, 2, &t[0], 1, NULL)) ||
	    (st = add_op(g, "Mul", 14, name, (int[]){ t[0], c[1] }, 2, &t[1], 1, NULL)) ||
	    (st = add_op(g, "Floor", 13, name, &t[1], 1, &t[2], 1, NULL)) ||
	    (st = add_op(g, "Mul", 14, name, (int[]){ t[2], c[2] }, 2, &t[3], 1, NULL)) ||
	    (st = new_tensor(g, NPU_DTYPE_FLOAT32, r, dims, id)))
		return st;
	return add_op(g, "Sub", 14, name, (int[]){ x, t[3] }, 2, id, 1, NULL);
}

/*
 * Clip, MaxPool, Max, Min, Add, Sub, Mul and (uint8) Div on 8-bit tensors: the same node
 * in float32 between a Cast and a QuantizeLinear of scale 1 (exact: every
 * value is an integer in range by then; the arithmetic ones wrap modulo 256
 * first, Div floors).
 */
static npu_status rewrite_8bit(npu_ir_graph *g, int k)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	bool arith = strcmp(n->op, "Clip") && strcmp(n->op, "MaxPool") && strcmp(n->op, "Max") &&
		     strcmp(n->op, "Min");
	bool div = !strcmp(n->op, "Div");
	int yid = n->outputs[0], nin = n->n_inputs, t, sc, zp, cur;
	int64_t dims[NPU_MAX_RANK], one = 1;
	npu_dtype dt;
	char name[128];
	float *scale;
	uint8_t *z;
	npu_status st = NPU_OK;

	if (!x || !y || !is_8bit(x->dtype) || y->dtype != x->dtype ||
	    (n->n_outputs > 1 && n->outputs[1] >= 0) || (div && x->dtype != NPU_DTYPE_UINT8))
		return NPU_OK;
	dt = y->dtype;
	memcpy(dims, y->dims, sizeof(dims));
	snprintf(name, sizeof(name), "%s", n->name);
	for (int i = 0; i < nin && !st; i++) {
		int in = g->nodes[k].inputs[i], f;

		if (in < 0 || !is_8bit(g->tensors[in].dtype))
			continue;
		if (!(st = to_float(g, name, in, &f)))
			g->nodes[k].inputs[i] = f;
	}
	if (st || (st = new_tensor(g, NPU_DTYPE_FLOAT32, y->rank, dims, &t)))
		return st;
	detach_output(g, k, yid);
	g->nodes[k].outputs[0] = t;
	g->tensors[t].producer = k;
	cur = t;
	if (div) {
		if ((st = new_tensor(g, NPU_DTYPE_FLOAT32, g->tensors[t].rank, dims, &cur)) ||
		    (st = add_op(g, "Floor", 13, name, &t, 1, &cur, 1, NULL)))
			return st;
	} else if (arith && (st = wrap_256(g, name, t, dt, &cur))) {
		return st;
	}
	scale = malloc(sizeof(*scale));
	z = calloc(1, 1);
	if (!scale || !z) {
		free(scale);
		free(z);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	*scale = 1.0f;
	if ((st = new_const(g, NPU_DTYPE_FLOAT32, 1, &one, scale, &sc)))
		return free(z), st;
	if ((st = new_const(g, dt, 1, &one, z, &zp)))
		return st;
	return add_op(g, "QuantizeLinear", 13, name, (int[]){ cur, sc, zp }, 3, &yid, 1, NULL);
}

/* ---- 3-D pooling as two 2-D poolings ---- */

static npu_status pool_node(npu_ir_graph *g, const char *op, int opset, const char *name,
			    int x, int y, const int64_t *ks, const int64_t *st_,
			    const int64_t *dil, const int64_t *pads, int64_t count_pad)
{
	int k;
	npu_status st = add_op(g, op, opset, name, &x, 1, &y, 1, &k);

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

static npu_status reshape_to(npu_ir_graph *g, const char *name, int x, int rank,
			     const int64_t *dims, int y, int *id)
{
	int sh;
	npu_status st = ints_const(g, dims, rank, &sh);

	if (!st)
		st = out_tensor(g, y, g->tensors[x].dtype, rank, dims, id);
	if (!st)
		st = add_op(g, "Reshape", 14, name, (int[]){ x, sh }, 2, id, 1, NULL);
	return st;
}

/*
 * A box window factorizes: max (or mean, with either padding count) over
 * D x H x W = over D of the result over H x W.  [N, C*D, H, W] pooled in
 * H and W, then [N, C, D, H'*W'] pooled in D.
 */
static npu_status rewrite_pool3d(npu_ir_graph *g, int k)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	const int64_t *ks, *s, *d, *p;
	int nk, ns, nd, np, yid = n->outputs[0], opset = n->opset, t0, t1, t2, t3;
	int64_t cp = 0, xd[5], yd[5], a[4], b[4];
	char name[128], op[16];
	npu_status st;

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
	detach_output(g, k, yid);
	g->nodes[k].dead = true;
	a[0] = xd[0];
	a[1] = xd[1] * xd[2];
	a[2] = xd[3];
	a[3] = xd[4];
	if ((st = reshape_to(g, name, n->inputs[0], 4, a, -1, &t0)))
		return st;
	a[2] = yd[3];
	a[3] = yd[4];
	if ((st = new_tensor(g, NPU_DTYPE_FLOAT32, 4, a, &t1)) ||
	    (st = pool_node(g, op, opset, name, t0, t1, (int64_t[]){ ks[1], ks[2] },
			    (int64_t[]){ s[1], s[2] },
			    (int64_t[]){ nd == 3 ? d[1] : 1, nd == 3 ? d[2] : 1 },
			    (int64_t[]){ p[1], p[2], p[4], p[5] }, cp)))
		return st;
	b[0] = xd[0];
	b[1] = xd[1];
	b[2] = xd[2];
	b[3] = yd[3] * yd[4];
	if ((st = reshape_to(g, name, t1, 4, b, -1, &t2)))
		return st;
	b[2] = yd[2];
	if ((st = new_tensor(g, NPU_DTYPE_FLOAT32, 4, b, &t3)) ||
	    (st = pool_node(g, op, opset, name, t2, t3, (int64_t[]){ ks[0], 1 },
			    (int64_t[]){ s[0], 1 }, (int64_t[]){ nd == 3 ? d[0] : 1, 1 },
			    (int64_t[]){ p[0], 0, p[3], 0 }, cp)))
		return st;
	return reshape_to(g, name, t3, 5, yd, yid, &t0);
}

/* ---- reductions over axes that are not adjacent ---- */

/* One reduction per run of adjacent axes (keepdims), then the output shape. */
static npu_status rewrite_reduce_runs(npu_ir_graph *g, int k)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	int64_t axes[NPU_MAX_RANK], dims[NPU_MAX_RANK], yd[NPU_MAX_RANK], keep = 1;
	bool on[NPU_MAX_RANK] = { false };
	int na = 0, r, yr, cur, yid = n->outputs[0], runs = 0;
	char name[128], op[24];
	npu_status st;

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
	detach_output(g, k, yid);
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
		if ((st = out_tensor(g, !runs && keep ? yid : -1, NPU_DTYPE_FLOAT32, r, dims,
				     &nxt)) ||
		    (st = add_op(g, op, 13, name, &cur, 1, &nxt, 1, &kn)) ||
		    (st = npu_ir_set_attr_ints(&g->nodes[kn], "axes", run, nr)) ||
		    (st = npu_ir_set_attr_int(&g->nodes[kn], "keepdims", 1)))
			return st;
		cur = nxt;
	}
	if (keep)
		return NPU_OK;
	return reshape_to(g, name, cur, yr, yd, yid, &cur);
}

/* ---- variadic Sum, Mean, Max, Min ---- */

/* A chain of binary operators (numpy broadcasting), Mean scaled by 1/n. */
static npu_status rewrite_variadic(npu_ir_graph *g, int k)
{
	const npu_ir_node *n = &g->nodes[k];
	bool mean = !strcmp(n->op, "Mean"), sum = mean || !strcmp(n->op, "Sum");
	int nin = n->n_inputs, yid = n->outputs[0], acc, *ins;
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	char name[128], bin[8];
	npu_status st = NPU_OK;

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
	detach_output(g, k, yid);
	g->nodes[k].dead = true;
	acc = ins[0];
	if (nin == 1 && !(st = add_op(g, "Identity", 13, name, &acc, 1, &yid, 1, NULL))) {
		free(ins);
		return NPU_OK;
	}
	for (int i = 1; i < nin && !st; i++) {
		const npu_ir_tensor *a = &g->tensors[acc], *b = &g->tensors[ins[i]];
		int r = a->rank > b->rank ? a->rank : b->rank, nxt;
		int64_t dims[NPU_MAX_RANK];

		for (int d = 0; d < r; d++) {
			int da = d - (r - a->rank), db = d - (r - b->rank);
			int64_t x = da >= 0 ? a->dims[da] : 1, z = db >= 0 ? b->dims[db] : 1;

			dims[d] = x == 1 ? z : x;
		}
		st = out_tensor(g, i == nin - 1 && !mean ? yid : -1, y->dtype, r, dims, &nxt);
		if (!st)
			st = add_op(g, bin, 13, name, (int[]){ acc, ins[i] }, 2, &nxt, 1, NULL);
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
		if (!(st = new_const(g, NPU_DTYPE_FLOAT32, 1, &one, inv, &c)))
			st = add_op(g, "Mul", 14, name, (int[]){ acc, c }, 2, &yid, 1, NULL);
	}
	return st;
}

/* ---- InstanceNormalization, MeanVarianceNormalization ---- */

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
	if ((st = new_const(g, NPU_DTYPE_FLOAT32, 1, &one, ev, &et)) ||
	    (st = new_tensor(g, NPU_DTYPE_FLOAT32, r, kd, &mean)) ||
	    (st = add_op(g, "ReduceMean", 13, name, &x, 1, &mean, 1, &kn)) ||
	    (st = npu_ir_set_attr_ints(&g->nodes[kn], "axes", axes, na)) ||
	    (st = npu_ir_set_attr_int(&g->nodes[kn], "keepdims", 1)) ||
	    (st = new_tensor(g, NPU_DTYPE_FLOAT32, r, xd, d)) ||
	    (st = add_op(g, "Sub", 14, name, (int[]){ x, mean }, 2, d, 1, NULL)) ||
	    (st = new_tensor(g, NPU_DTYPE_FLOAT32, r, xd, &sq)) ||
	    (st = add_op(g, "Mul", 14, name, (int[]){ *d, *d }, 2, &sq, 1, NULL)) ||
	    (st = new_tensor(g, NPU_DTYPE_FLOAT32, r, kd, &var)) ||
	    (st = add_op(g, "ReduceMean", 13, name, &sq, 1, &var, 1, &kn)) ||
	    (st = npu_ir_set_attr_ints(&g->nodes[kn], "axes", axes, na)) ||
	    (st = npu_ir_set_attr_int(&g->nodes[kn], "keepdims", 1)) ||
	    (st = new_tensor(g, NPU_DTYPE_FLOAT32, r, kd, &ve)) ||
	    (st = add_op(g, "Add", 14, name, (int[]){ var, et }, 2, &ve, 1, NULL)) ||
	    (st = new_tensor(g, NPU_DTYPE_FLOAT32, r, kd, sd)))
		return st;
	return add_op(g, "Sqrt", 13, name, &ve, 1, sd, 1, NULL);
}

static npu_status rewrite_instnorm(npu_ir_graph *g, int k)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *sc = npu_ir_input(g, n, 1);
	const npu_ir_tensor *b = npu_ir_input(g, n, 2);
	int yid = n->outputs[0], xi = n->inputs[0], r, d, sd, q, s2, tsc, tb;
	int64_t axes[NPU_MAX_RANK], xd[NPU_MAX_RANK], cd[NPU_MAX_RANK];
	float eps, *sv, *bv;
	char name[128];
	npu_status st;

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
	if ((st = new_const(g, NPU_DTYPE_FLOAT32, r - 1, cd, sv, &tsc)))
		return free(bv), st;
	if ((st = new_const(g, NPU_DTYPE_FLOAT32, r - 1, cd, bv, &tb)))
		return st;
	detach_output(g, k, yid);
	g->nodes[k].dead = true;
	if ((st = centre_and_spread(g, name, xi, axes, r - 2, eps, &d, &sd)) ||
	    (st = new_tensor(g, NPU_DTYPE_FLOAT32, r, xd, &q)) ||
	    (st = add_op(g, "Div", 14, name, (int[]){ d, sd }, 2, &q, 1, NULL)) ||
	    (st = new_tensor(g, NPU_DTYPE_FLOAT32, r, xd, &s2)) ||
	    (st = add_op(g, "Mul", 14, name, (int[]){ q, tsc }, 2, &s2, 1, NULL)))
		return st;
	return add_op(g, "Add", 14, name, (int[]){ s2, tb }, 2, &yid, 1, NULL);
}

/* (x - mean) / (sqrt(variance) + 1e-9) over axes (default 0, 2, 3), as ONNX's function. */
static npu_status rewrite_mvn(npu_ir_graph *g, int k)
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
	detach_output(g, k, yid);
	g->nodes[k].dead = true;
	if ((st = new_const(g, NPU_DTYPE_FLOAT32, 1, &one, ev, &et)) ||
	    (st = centre_and_spread(g, name, xi, axes, na, 0.0f, &d, &sd)))
		return st;
	memcpy(kd, g->tensors[sd].dims, sizeof(kd));
	if ((st = new_tensor(g, NPU_DTYPE_FLOAT32, r, kd, &sde)) ||
	    (st = add_op(g, "Add", 14, name, (int[]){ sd, et }, 2, &sde, 1, NULL)))
		return st;
	return add_op(g, "Div", 14, name, (int[]){ d, sde }, 2, &yid, 1, NULL);
}

/* ---- Gather, Expand, Tile, DepthToSpace, SpaceToDepth: data movement ---- */

/* *@id = elements [@lo, @hi) of @x along @axis. */
static npu_status slice_range(npu_ir_graph *g, const char *name, int x, int axis, int64_t lo,
			      int64_t hi, int *id)
{
	int64_t dims[NPU_MAX_RANK], ax = axis;
	int s, e, a;
	npu_status st;

	memcpy(dims, g->tensors[x].dims, sizeof(dims));
	dims[axis] = hi - lo;
	if ((st = ints_const(g, &lo, 1, &s)) || (st = ints_const(g, &hi, 1, &e)) ||
	    (st = ints_const(g, &ax, 1, &a)) ||
	    (st = new_tensor(g, g->tensors[x].dtype, g->tensors[x].rank, dims, id)))
		return st;
	return add_op(g, "Slice", 13, name, (int[]){ x, s, e, a }, 4, id, 1, NULL);
}

/* Concat @n parts along @axis into @y (or a new tensor) of @dims. */
static npu_status concat(npu_ir_graph *g, const char *name, const int *parts, int n, int axis,
			 int rank, const int64_t *dims, int y, int *id)
{
	int k;
	npu_status st = out_tensor(g, y, g->tensors[parts[0]].dtype, rank, dims, id);

	if (!st)
		st = add_op(g, "Concat", 13, name, parts, n, id, 1, &k);
	if (!st)
		st = npu_ir_set_attr_int(&g->nodes[k], "axis", axis);
	return st;
}

/* Gather with constant indices: one Slice per run of consecutive indices. */
static npu_status rewrite_gather(npu_ir_graph *g, int k)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *ind = npu_ir_input(g, n, 1);
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	int64_t axis, idx[1024], xd[NPU_MAX_RANK], yd[NPU_MAX_RANK], cd[NPU_MAX_RANK];
	int cnt, yid = n->outputs[0], xi = n->inputs[0], r, yr, np = 0, *parts, cat;
	char name[128];
	npu_status st;

	if (!x || !ind || !y || !npu_ir_is_const(ind) || npu_ir_is_const(x) ||
	    npu_ir_const_ints(ind, idx, 1024, &cnt) || cnt < 1)
		return NPU_OK;
	if ((st = npu_ir_attr_int(n, "axis", 0, &axis)))
		return st;
	r = x->rank;
	if (axis < 0)
		axis += r;
	if (axis < 0 || axis >= r)
		return NPU_OK;
	for (int i = 0; i < cnt; i++) {
		if (idx[i] < 0)
			idx[i] += x->dims[axis];
		if (idx[i] < 0 || idx[i] >= x->dims[axis])
			return NPU_OK;	/* out of range: the lowering refuses it */
	}
	memcpy(xd, x->dims, sizeof(xd));
	memcpy(yd, y->dims, sizeof(yd));
	yr = y->rank;
	parts = malloc((size_t)cnt * sizeof(*parts));
	if (!parts)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	snprintf(name, sizeof(name), "%s", n->name);
	detach_output(g, k, yid);
	g->nodes[k].dead = true;
	st = NPU_OK;
	for (int i = 0; i < cnt && !st;) {
		int j = i + 1;

		while (j < cnt && idx[j] == idx[j - 1] + 1)
			j++;
		st = slice_range(g, name, xi, (int)axis, idx[i], idx[j - 1] + 1, &parts[np++]);
		i = j;
	}
	memcpy(cd, xd, sizeof(cd));
	cd[axis] = cnt;
	cat = parts[0];
	if (!st && np > 1)
		st = concat(g, name, parts, np, (int)axis, r, cd, -1, &cat);
	free(parts);
	if (!st)
		st = reshape_to(g, name, cat, yr, yd, yid, &cat);
	return st;
}

/*
 * Expand and Tile: per axis that grows, a Concat of copies (Expand first
 * gives x the output's rank with leading 1s).
 */
static npu_status rewrite_repeat(npu_ir_graph *g, int k)
{
	const npu_ir_node *n = &g->nodes[k];
	bool tile = !strcmp(n->op, "Tile");
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	int64_t xd[NPU_MAX_RANK], yd[NPU_MAX_RANK], cd[NPU_MAX_RANK];
	int yid = n->outputs[0], cur = n->inputs[0], r, last = -1, *parts;
	char name[128];
	npu_status st = NPU_OK;

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
	detach_output(g, k, yid);
	g->nodes[k].dead = true;
	if (x->rank != r)
		st = reshape_to(g, name, cur, r, xd, -1, &cur);
	memcpy(cd, xd, sizeof(cd));
	for (int d = 0; d <= last && !st; d++) {
		int64_t times = yd[d] / xd[d];

		if (times == 1)
			continue;
		for (int64_t i = 0; i < times; i++)
			parts[i] = cur;
		cd[d] = yd[d];
		st = concat(g, name, parts, (int)times, d, r, cd, d == last ? yid : -1, &cur);
	}
	free(parts);
	return st;
}

/* DepthToSpace (DCR, CRD) and SpaceToDepth: Reshape, 6-D Transpose, Reshape. */
static npu_status rewrite_depth_space(npu_ir_graph *g, int k)
{
	const npu_ir_node *n = &g->nodes[k];
	bool d2s = !strcmp(n->op, "DepthToSpace");
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	int64_t b, N, C, H, W, s6[6], t6[6], perm[6], yd[4];
	int yid = n->outputs[0], cur = n->inputs[0], t, kn;
	const char *mode;
	char name[128];
	npu_status st;

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
	detach_output(g, k, yid);
	g->nodes[k].dead = true;
	if ((st = reshape_to(g, name, cur, 6, s6, -1, &cur)) ||
	    (st = new_tensor(g, g->tensors[cur].dtype, 6, t6, &t)) ||
	    (st = add_op(g, "Transpose", 13, name, &cur, 1, &t, 1, &kn)) ||
	    (st = npu_ir_set_attr_ints(&g->nodes[kn], "perm", perm, 6)))
		return st;
	return reshape_to(g, name, t, 4, yd, yid, &cur);
}

/* ---- the pass ---- */

npu_status npu_rewrite(npu_ir_graph *g)
{
	bool changed = false;
	npu_status st = NPU_OK;

	/* New nodes are visited too: a 3-D ConvTranspose becomes a 3-D Conv,
	 * which becomes a 2-D one.  Every rewrite emits only nodes that no
	 * rewrite changes again, or that a later rewrite takes further. */
	for (int k = 0; k < g->n_nodes && !st; k++) {
		const char *op = g->nodes[k].op;
		int before = g->n_nodes;

		if (g->nodes[k].dead || (g->nodes[k].domain[0] &&
					 strcmp(g->nodes[k].domain, "ai.onnx")))
			continue;
		if (!strcmp(op, "Resize") || !strcmp(op, "Upsample"))
			st = rewrite_resize(g, k);
		else if (!strcmp(op, "ConvTranspose"))
			st = rewrite_conv_transpose(g, k);
		else if (!strcmp(op, "Conv"))
			st = rewrite_conv3d(g, k);
		else if (!strcmp(op, "Sum") || !strcmp(op, "Mean") || !strcmp(op, "Max") ||
			 !strcmp(op, "Min"))
			st = rewrite_variadic(g, k);
		else if (!strcmp(op, "InstanceNormalization"))
			st = rewrite_instnorm(g, k);
		else if (!strcmp(op, "MeanVarianceNormalization"))
			st = rewrite_mvn(g, k);
		else if (!strcmp(op, "Gather"))
			st = rewrite_gather(g, k);
		else if (!strcmp(op, "Expand") || !strcmp(op, "Tile"))
			st = rewrite_repeat(g, k);
		else if (!strcmp(op, "DepthToSpace") || !strcmp(op, "SpaceToDepth"))
			st = rewrite_depth_space(g, k);
		else if (!strcmp(op, "LayerNormalization"))
			st = rewrite_layernorm_stats(g, k);
		else if (!strcmp(op, "Pad"))
			st = rewrite_pad(g, k);
		else if (!strcmp(op, "MatMul") || !strcmp(op, "QLinearMatMul"))
			st = rewrite_batched_matmul(g, k);
		else if (!strcmp(op, "Gemm"))
			st = rewrite_gemm_matrix_c(g, k);
		else if (!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool"))
			st = rewrite_pool3d(g, k);
		else if (!strncmp(op, "Reduce", 6))
			st = rewrite_reduce_runs(g, k);
		if (!st && g->n_nodes == before && !g->nodes[k].dead &&
		    (!strcmp(op, "Clip") || !strcmp(op, "MaxPool") || !strcmp(op, "Add") ||
		     !strcmp(op, "Sub") || !strcmp(op, "Mul") || !strcmp(op, "Div") ||
		     !strcmp(op, "Max") || !strcmp(op, "Min")))
			st = rewrite_8bit(g, k);
		changed |= g->n_nodes != before;
	}
	if (st || !changed)
		return st;
	if ((st = npu_ir_remove_dead(g)))
		return st;
	return npu_ir_topo_sort(g);
}
