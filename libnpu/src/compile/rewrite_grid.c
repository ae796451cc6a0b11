// SPDX-License-Identifier: MIT
/*
 * GridSample (2-D, opset 16+) with a constant grid: for each batch element
 * the output is a fixed linear map of the input plane, one MatMul by a
 * compile-time [H*W][Ho*Wo] matrix on [C, H*W] (nearest, bilinear,
 * bicubic; zeros, border and reflection padding; align_corners), following
 * the ONNX reference's coordinate rules.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_rewrite_priv.h"

struct grid_how {
	int mode;		/* 0 nearest, 1 linear, 2 cubic */
	int pad;		/* 0 zeros, 1 border, 2 reflection */
	bool corners;
};

/* Reflect @x into [@lo, @hi] (the reference's _gs_reflect). */
static double reflect(double x, double lo, double hi)
{
	double rng = hi - lo, dx, r;
	int64_t k;

	if (rng <= 0)
		return lo;
	if (x < lo) {
		dx = lo - x;
		k = (int64_t)(dx / rng);
		r = dx - (double)k * rng;
		return k % 2 == 0 ? lo + r : hi - r;
	}
	if (x > hi) {
		dx = x - hi;
		k = (int64_t)(dx / rng);
		r = dx - (double)k * rng;
		return k % 2 == 0 ? hi - r : lo + r;
	}
	return x;
}

/* Pixel (r, c) of an H x W plane after padding: its index, or -1 (zero). */
static int64_t pixel(const struct grid_how *h, int64_t r, int64_t c, int64_t H, int64_t W)
{
	double lo_x = h->corners ? 0 : -0.5, hi_x = h->corners ? (double)W - 1 : W - 0.5;
	double lo_y = h->corners ? 0 : -0.5, hi_y = h->corners ? (double)H - 1 : H - 0.5;

	if (h->pad == 0)
		return r >= 0 && r < H && c >= 0 && c < W ? r * W + c : -1;
	if (h->pad == 2) {
		r = (int64_t)reflect((double)r, lo_y, hi_y);
		c = (int64_t)reflect((double)c, lo_x, hi_x);
	}
	r = npu_rw_clamp(r, H);
	c = npu_rw_clamp(c, W);
	return r * W + c;
}

static void cubic(double t, double w[4])
{
	const double a = -0.75;
	double p = t + 1, q = 1 - t, s = 2 - t;

	w[0] = ((a * p - 5 * a) * p + 8 * a) * p - 4 * a;
	w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
	w[2] = ((a + 2) * q - (a + 3)) * q * q + 1;
	w[3] = ((a * s - 5 * a) * s + 8 * a) * s - 4 * a;
}

/* Column @p of the map: output position (gx, gy) in [-1, 1]. */
static void grid_column(const struct grid_how *h, double gx, double gy, int64_t H, int64_t W,
			float *m, int64_t cols, int64_t p)
{
	double x = h->corners ? (gx + 1) / 2 * (double)(W - 1) : ((gx + 1) * (double)W - 1) / 2;
	double y = h->corners ? (gy + 1) / 2 * (double)(H - 1) : ((gy + 1) * (double)H - 1) / 2;
	double x0, y0, wx[4], wy[4];
	int taps;

	if (h->mode == 0) {
		x = nearbyint(x);	/* half to even, as numpy's rint */
		y = nearbyint(y);
	}
	if (h->pad == 1) {
		x = x < 0 ? 0 : x > (double)(W - 1) ? (double)(W - 1) : x;
		y = y < 0 ? 0 : y > (double)(H - 1) ? (double)(H - 1) : y;
	} else if (h->pad == 2) {
		x = reflect(x, h->corners ? 0 : -0.5, h->corners ? (double)W - 1 : W - 0.5);
		y = reflect(y, h->corners ? 0 : -0.5, h->corners ? (double)H - 1 : H - 0.5);
	}
	if (h->mode == 0) {
		int64_t i = pixel(h, (int64_t)y, (int64_t)x, H, W);

		if (i >= 0)
			m[i * cols + p] += 1.0f;
		return;
	}
	x0 = floor(x);
	y0 = floor(y);
	if (h->mode == 1) {
		taps = 2;
		wx[0] = 1 - (x - x0);
		wx[1] = x - x0;
		wy[0] = 1 - (y - y0);
		wy[1] = y - y0;
	} else {
		taps = 4;
		cubic(x - x0, wx);
		cubic(y - y0, wy);
		x0 -= 1;
		y0 -= 1;
	}
	for (int a = 0; a < taps; a++)
		for (int b = 0; b < taps; b++) {
			int64_t i = pixel(h, (int64_t)y0 + a, (int64_t)x0 + b, H, W);

			if (i >= 0)
				m[i * cols + p] += (float)(wy[a] * wx[b]);
		}
}

npu_status npu_rewrite_grid_sample(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *gr = npu_ir_input(g, n, 1);
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	struct grid_how h = { 1, 0, false };
	int64_t N, C, H, W, Ho, Wo, corners = 0, d3[3], yd[4];
	int yid = n->outputs[0], xi = n->inputs[0], *parts, cat;
	const char *mode, *pad;
	char name[128];
	float *grid;
	npu_status st;

	*applied = false;
	if (!x || !gr || !y || x->rank != 4 || x->dtype != NPU_DTYPE_FLOAT32 ||
	    gr->dtype != NPU_DTYPE_FLOAT32 || !npu_ir_is_const(gr) || gr->rank != 4)
		return NPU_OK;
	if ((st = npu_ir_attr_string(n, "mode", n->opset < 20 ? "bilinear" : "linear", &mode)) ||
	    (st = npu_ir_attr_string(n, "padding_mode", "zeros", &pad)) ||
	    (st = npu_ir_attr_int(n, "align_corners", 0, &corners)))
		return st;
	h.mode = !strcmp(mode, "nearest") ? 0 :
		 !strcmp(mode, "bilinear") || !strcmp(mode, "linear") ? 1 :
		 !strcmp(mode, "bicubic") || !strcmp(mode, "cubic") ? 2 : -1;
	h.pad = !strcmp(pad, "zeros") ? 0 : !strcmp(pad, "border") ? 1 :
		!strcmp(pad, "reflection") ? 2 : -1;
	h.corners = corners != 0;
	N = x->dims[0];
	C = x->dims[1];
	H = x->dims[2];
	W = x->dims[3];
	Ho = gr->dims[1];
	Wo = gr->dims[2];
	if (h.mode < 0 || h.pad < 0 || gr->dims[0] != N || gr->dims[3] != 2 || N > 256 ||
	    H * W * Ho * Wo > NPU_RW_MATRIX_MAX)
		return NPU_OK;
	grid = malloc((size_t)(N * Ho * Wo * 2) * sizeof(float));
	parts = malloc((size_t)N * sizeof(*parts));
	if (!grid || !parts) {
		free(grid);
		free(parts);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	memcpy(grid, gr->data, (size_t)(N * Ho * Wo * 2) * sizeof(float));
	memcpy(yd, y->dims, sizeof(yd));
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	/* [N, C, H, W] -> [N, C, H*W]; per element a MatMul; Concat; Reshape. */
	d3[0] = N;
	d3[1] = C;
	d3[2] = H * W;
	st = npu_rw_reshape(g, name, xi, 3, d3, -1, &xi);
	for (int64_t b = 0; b < N && !st; b++) {
		float *m = calloc((size_t)(H * W * Ho * Wo) + 1, sizeof(float));
		int xb;

		if (!m) {
			st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
			break;
		}
		for (int64_t p = 0; p < Ho * Wo; p++) {
			const float *gp = &grid[(b * Ho * Wo + p) * 2];

			grid_column(&h, gp[0], gp[1], H, W, m, Ho * Wo, p);
		}
		st = N > 1 ? npu_rw_slice(g, name, xi, 0, b, b + 1, &xb) : NPU_OK;
		if (N == 1)
			xb = xi;
		if (!st)
			st = npu_rw_map_axis(g, name, xb, 2, Ho * Wo, m, -1, &parts[b]);
		else
			free(m);
	}
	d3[2] = Ho * Wo;
	cat = parts[0];
	if (!st && N > 1)
		st = npu_rw_concat(g, name, parts, (int)N, 0, 3, d3, -1, &cat);
	if (!st)
		st = npu_rw_reshape(g, name, cat, 4, yd, yid, &cat);
	free(grid);
	free(parts);
	return st;
}
