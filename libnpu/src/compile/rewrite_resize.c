// SPDX-License-Identifier: MIT
/*
 * Resize and Upsample (nearest, linear, cubic; every coordinate
 * transformation, crop and resize with its extrapolation value) as one
 * MatMul per resized axis by a constant [in][out] interpolation matrix.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_rewrite_priv.h"

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
			m[npu_rw_clamp(nearest_index(h->nearest, x), in) * out + j] = 1.0f;
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
			m[npu_rw_clamp(i0, in) * out + j] += (float)(1 - r);
			m[npu_rw_clamp(i0 + 1, in) * out + j] += (float)r;
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
			m[npu_rw_clamp(i0 - 1 + t, in) * out + j] += (float)w[t];
	}
	return NPU_OK;
}

/*
 * s when the nearest-neighbour map of an axis repeats every input s times
 * (output j reads input j / s): the common integer upsampling, which is
 * then exact data movement; else 0.
 */
static int64_t nearest_repeat(const struct resize_how *h, const float *m, int64_t in,
			      int64_t out, const bool *valid)
{
	int64_t s = in ? out / in : 0;

	if (strcmp(h->mode, "nearest") || s < 2 || out != in * s || s > 1024)
		return 0;
	for (int64_t j = 0; j < out; j++)
		if (!valid[j] || m[(j / s) * out + j] != 1.0f)
			return 0;
	return s;
}

/* *@res = @x with every element along @axis repeated @s times: a Concat of copies. */
static npu_status repeat_axis(npu_ir_graph *g, const char *name, int x, int axis, int64_t s,
			      int y, int *res)
{
	int r = g->tensors[x].rank, x1, cat, *parts;
	int64_t d[NPU_MAX_RANK], d1[NPU_MAX_RANK];
	npu_status st;

	memcpy(d, g->tensors[x].dims, sizeof(d));
	for (int i = 0, j = 0; i <= r; i++)
		d1[i] = i == axis + 1 ? 1 : d[j++];
	if ((st = npu_rw_reshape(g, name, x, r + 1, d1, -1, &x1)))
		return st;
	parts = malloc((size_t)s * sizeof(*parts));
	if (!parts)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t i = 0; i < s; i++)
		parts[i] = x1;
	d1[axis + 1] = s;
	st = npu_rw_concat(g, name, parts, (int)s, axis + 1, r + 1, d1, -1, &cat);
	free(parts);
	d[axis] *= s;
	return st ? st : npu_rw_reshape(g, name, cat, r, d, y, res);
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

npu_status npu_rewrite_resize(npu_ir_graph *g, int k, bool *applied)
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
	int64_t repeat[NPU_MAX_RANK] = { 0 };
	char name[128];
	npu_status st = NPU_OK;

	*applied = false;
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
		if (in[a] * outd[a] > NPU_RW_MATRIX_MAX)
			goto out;	/* left to be refused by name */
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
		repeat[a] = nearest_repeat(&h, mats[a], in[a], outd[a], valid[a]);
		naxes++;
		last_axis = a;
	}
	if (!naxes)
		goto out;	/* an identity: the lowering refuses it by name */
	*applied = true;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	for (int a = 0; a < r && !st; a++) {
		if (!mats[a])
			continue;
		if (repeat[a]) {
			st = repeat_axis(g, name, cur, a, repeat[a],
					 a == last_axis && !extrap ? yid : -1, &cur);
			free(mats[a]);
		} else {
			st = npu_rw_map_axis(g, name, cur, a, outd[a], mats[a],
					     a == last_axis && !extrap ? yid : -1, &cur);
		}
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
		st = npu_rw_const(g, NPU_DTYPE_FLOAT32, r, ed, e, &et);
		if (!st)
			st = npu_rw_op(g, "Add", 14, name, (int[]){ cur, et }, 2, &yid, 1, NULL);
	}
out:
	for (int a = 0; a < r; a++) {
		free(mats[a]);
		free(valid[a]);
	}
	return st;
}
