// SPDX-License-Identifier: MIT
/*
 * npu-run: resizing a picture to a model input's size (image_input.h).
 * Separable: each output pixel is a weighted sum of source pixels, first
 * along rows, then along columns, in float so nothing is rounded before
 * normalisation.  On an axis shrunk 2x or more the weights are the area
 * each source pixel covers (a box filter: every source pixel counts, so
 * a 512-pixel photo shrunk to 128 averages 4x4 blocks exactly); otherwise
 * bilinear between the two nearest pixel centres (half-pixel centres, as
 * OpenCV's INTER_LINEAR and PIL), edges clamped.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "image_input.h"

/* The source pixels and weights of each output pixel along one axis. */
struct axis {
	unsigned k;		/* taps per output pixel */
	unsigned *first;	/* first source pixel of output i */
	float *w;		/* out x k weights */
};

static void axis_free(struct axis *a)
{
	free(a->first);
	free(a->w);
}

static int axis_init(struct axis *a, unsigned in, unsigned out)
{
	double s = (double)in / out;
	int area = s >= 2.0;

	a->k = area ? (unsigned)ceil(s) + 1 : 2;
	a->first = calloc(out, sizeof(*a->first));
	a->w = calloc((size_t)out * a->k, sizeof(*a->w));
	if (!a->first || !a->w) {
		axis_free(a);
		return -1;
	}
	for (unsigned i = 0; i < out; i++) {
		float *w = a->w + (size_t)i * a->k;

		if (area) {
			double lo = i * s, hi = (i + 1) * s;
			unsigned p0 = (unsigned)floor(lo);

			a->first[i] = p0;
			for (unsigned j = 0; j < a->k && p0 + j < in; j++) {
				double l = lo > p0 + j ? lo : p0 + j;
				double h = hi < p0 + j + 1.0 ? hi : p0 + j + 1.0;

				w[j] = h > l ? (float)((h - l) / s) : 0.0f;
			}
		} else {
			double c = (i + 0.5) * s - 0.5;
			unsigned p0;

			if (c < 0)
				c = 0;
			p0 = (unsigned)floor(c);
			if (p0 >= in - 1) {
				p0 = in - 1;
				c = p0;
			}
			a->first[i] = p0;
			w[0] = (float)(1.0 - (c - p0));
			w[1] = (float)(c - p0);
		}
	}
	return 0;
}

/* Along rows, from the bytes: the picture itself is never copied as floats. */
static void taps_u8(const struct axis *a, unsigned i, unsigned in, const unsigned char *src,
		    float out[3])
{
	const float *w = a->w + (size_t)i * a->k;

	out[0] = out[1] = out[2] = 0;
	for (unsigned j = 0; j < a->k && a->first[i] + j < in; j++) {
		const unsigned char *p = src + (a->first[i] + j) * 3;

		if (w[j] == 0.0f)
			continue;
		out[0] += w[j] * p[0];
		out[1] += w[j] * p[1];
		out[2] += w[j] * p[2];
	}
}

/* Sum of the taps of output @i along @a at @src (stride @step floats, 3 channels). */
static void taps(const struct axis *a, unsigned i, unsigned in, const float *src, size_t step,
		 float out[3])
{
	const float *w = a->w + (size_t)i * a->k;

	out[0] = out[1] = out[2] = 0;
	for (unsigned j = 0; j < a->k && a->first[i] + j < in; j++) {
		const float *p = src + (a->first[i] + j) * step;

		if (w[j] == 0.0f)
			continue;
		out[0] += w[j] * p[0];
		out[1] += w[j] * p[1];
		out[2] += w[j] * p[2];
	}
}

float *nr_image_resize(const struct nr_image *img, unsigned w, unsigned h)
{
	struct axis ax = { 0 }, ay = { 0 };
	float *mid = malloc((size_t)img->h * w * 3 * sizeof(float));
	float *out = malloc((size_t)h * w * 3 * sizeof(float));

	if (!mid || !out || axis_init(&ax, img->w, w) || axis_init(&ay, img->h, h)) {
		free(out);
		out = NULL;
		goto done;
	}
	/* Along rows: h_in x w_out, then along columns: h_out x w_out. */
	for (unsigned y = 0; y < img->h; y++)
		for (unsigned x = 0; x < w; x++)
			taps_u8(&ax, x, img->w, img->rgb + (size_t)y * img->w * 3,
				mid + ((size_t)y * w + x) * 3);
	for (unsigned y = 0; y < h; y++)
		for (unsigned x = 0; x < w; x++)
			taps(&ay, y, img->h, mid + (size_t)x * 3, (size_t)w * 3,
			     out + ((size_t)y * w + x) * 3);
done:
	axis_free(&ax);
	axis_free(&ay);
	free(mid);
	return out;
}

const char *nr_image_resize_method(unsigned from_w, unsigned from_h, unsigned w, unsigned h)
{
	int ax = from_w >= 2ull * w, ay = from_h >= 2ull * h;

	if (from_w == w && from_h == h)
		return "not resized";
	if (ax && ay)
		return "area";
	if (ax || ay)
		return "area and bilinear";
	return "bilinear";
}
