// SPDX-License-Identifier: MIT
/*
 * RoiAlign on the host: for each region of interest (x1, y1, x2, y2 in
 * rois, scaled by spatial_scale) of image batch_indices[r] of X [N, C, H,
 * W], an output_height x output_width grid of bins, each the average
 * (mode "avg") or maximum ("max") of sampling_ratio^2 bilinear samples
 * (0: ceil(bin size) per axis).  Coordinates follow
 * coordinate_transformation_mode: "half_pixel" (opset 16's default)
 * shifts by half a pixel, "output_half_pixel" (opset 10's only) does not
 * and makes every region at least 1 x 1.
 */
#include <math.h>
#include <string.h>

#include "host/npu_host.h"

const char *npu_host_roialign_accepts(const npu_ir_graph *g, const npu_ir_node *n)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *r = npu_ir_input(g, n, 1);
	const npu_ir_tensor *b = npu_ir_input(g, n, 2);

	if (!x || !r || !b || x->dtype != NPU_DTYPE_FLOAT32 || r->dtype != NPU_DTYPE_FLOAT32 ||
	    x->rank != 4)
		return "only float32 X [N, C, H, W] and rois with batch indices are";
	return NULL;
}

/* Bilinear sample of the @hgt x @wid plane @p at (@y, @x), weights as ONNX's reference. */
static void weights(double y, double x, int64_t hgt, int64_t wid, int64_t at[4], double w[4])
{
	int64_t yl, xl, yh, xh;
	double ly, lx;

	if (y < -1.0 || y > (double)hgt || x < -1.0 || x > (double)wid) {
		memset(at, 0, 4 * sizeof(*at));
		memset(w, 0, 4 * sizeof(*w));
		return;
	}
	y = y <= 0 ? 0 : y;
	x = x <= 0 ? 0 : x;
	yl = (int64_t)y;
	xl = (int64_t)x;
	if (yl >= hgt - 1) {
		yh = yl = hgt - 1;
		y = (double)yl;
	} else {
		yh = yl + 1;
	}
	if (xl >= wid - 1) {
		xh = xl = wid - 1;
		x = (double)xl;
	} else {
		xh = xl + 1;
	}
	ly = y - (double)yl;
	lx = x - (double)xl;
	at[0] = yl * wid + xl;
	at[1] = yl * wid + xh;
	at[2] = yh * wid + xl;
	at[3] = yh * wid + xh;
	w[0] = (1 - ly) * (1 - lx);
	w[1] = (1 - ly) * lx;
	w[2] = ly * (1 - lx);
	w[3] = ly * lx;
}

npu_status npu_host_roialign(const struct npu_host_step *h, const struct npu_host_buf *in,
			     struct npu_host_buf *out)
{
	const char *ctm = npu_host_attr_string(h, "coordinate_transformation_mode",
					       h->opset >= 16 ? "half_pixel" : "output_half_pixel");
	bool max_mode = !strcmp(npu_host_attr_string(h, "mode", "avg"), "max");
	bool half = !strcmp(ctm, "half_pixel");
	int64_t ph = out[0].dims[2], pw = out[0].dims[3], sr = npu_host_attr_int(h, "sampling_ratio", 0);
	double scale = npu_host_attr_float(h, "spatial_scale", 1.0f);
	int64_t N = in[0].dims[0], C = in[0].dims[1], H = in[0].dims[2], W = in[0].dims[3];
	const float *X = in[0].data, *rois = in[1].data;
	float *Y = out[0].data;
	double off = half ? 0.5 : 0;

	for (int64_t r = 0; r < out[0].dims[0]; r++) {
		int64_t b = (int64_t)npu_host_get(&in[2], (size_t)r);
		double x0 = rois[r * 4] * scale - off, y0 = rois[r * 4 + 1] * scale - off;
		double rw = rois[r * 4 + 2] * scale - off - x0, rh = rois[r * 4 + 3] * scale - off - y0;
		int64_t gh, gw;
		double bh, bw, count;

		if (b < 0 || b >= N)
			return npu_fail(NPU_ERR_INVALID_ARG, "region %lld has batch index %lld, outside 0..%lld",
					(long long)r, (long long)b, (long long)N - 1);
		if (!half) {
			rw = rw > 1 ? rw : 1;
			rh = rh > 1 ? rh : 1;
		}
		bh = rh / (double)ph;
		bw = rw / (double)pw;
		gh = sr > 0 ? sr : (int64_t)ceil(rh / (double)ph);
		gw = sr > 0 ? sr : (int64_t)ceil(rw / (double)pw);
		count = gh * gw > 1 ? (double)(gh * gw) : 1;
		for (int64_t c = 0; c < C; c++) {
			const float *p = X + (b * C + c) * H * W;

			for (int64_t i = 0; i < ph * pw; i++) {
				double acc = 0;
				bool first = true;

				for (int64_t iy = 0; iy < gh; iy++)
					for (int64_t ix = 0; ix < gw; ix++) {
						double y = y0 + (double)(i / pw) * bh + ((double)iy + 0.5) * bh / (double)gh;
						double x = x0 + (double)(i % pw) * bw + ((double)ix + 0.5) * bw / (double)gw;
						int64_t at[4];
						double w[4];

						weights(y, x, H, W, at, w);
						for (int k = 0; k < 4; k++) {
							double v = w[k] * p[at[k]];

							if (!max_mode)
								acc += v;
							else if (first || v > acc)
								acc = v;
							first = false;
						}
					}
				Y[((r * C + c) * ph + i / pw) * pw + i % pw] = (float)(max_mode ? acc : acc / count);
			}
		}
	}
	return NPU_OK;
}
