// SPDX-License-Identifier: MIT
/* npu-run: a picture as a model input, and an input as a picture (image_input.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image_input.h"
#include "util.h"

static int is_channels(int64_t d)
{
	return d == 1 || d == 3;
}

int nr_image_geometry(const struct nr_options *o, const char *what, const npu_tensor_info *t,
		      struct nr_image_geom *g)
{
	char shape[160];
	const int64_t *d;
	int nchw;

	nr_shape_str(t->dims, t->rank, shape, sizeof(shape));
	if (t->rank != 4 && t->rank != 3)
		return nr_fail(NR_EXIT_RUNTIME, "%s: input '%s' is %s %s; a picture fills a rank-4 "
			       "[1, C, H, W] or [1, H, W, C] input (or rank 3 without the 1); give "
			       "raw or .npy data", what, t->name, npu_dtype_str(t->dtype), shape);
	if (t->rank == 4 && t->dims[0] != 1)
		return nr_fail(NR_EXIT_RUNTIME, "%s: input '%s' is %s, %lld pictures in one tensor; "
			       "a picture fills one (compile with --batch N for several runs at "
			       "once, or give raw or .npy data)", what, t->name, shape,
			       (long long)t->dims[0]);
	d = t->dims + (t->rank == 4);
	if (o->image_layout == NR_LAYOUT_NCHW) {
		nchw = 1;
	} else if (o->image_layout == NR_LAYOUT_NHWC) {
		nchw = 0;
	} else if (is_channels(d[0]) != is_channels(d[2])) {
		nchw = is_channels(d[0]);
	} else {
		return nr_fail(NR_EXIT_USAGE, "%s: input '%s' is %s: which dim holds the channels "
			       "cannot be told from the shape; give --image-layout nchw or nhwc",
			       what, t->name, shape);
	}
	g->c = (unsigned)(nchw ? d[0] : d[2]);
	g->h = (unsigned)(nchw ? d[1] : d[0]);
	g->w = (unsigned)(nchw ? d[2] : d[1]);
	g->nchw = nchw;
	if (!is_channels(nchw ? d[0] : d[2]) || d[0] < 1 || d[1] < 1 || d[2] < 1 ||
	    d[0] > NR_IMAGE_MAX_SIDE || d[1] > NR_IMAGE_MAX_SIDE || d[2] > NR_IMAGE_MAX_SIDE)
		return nr_fail(NR_EXIT_RUNTIME, "%s: input '%s' is %s: %lld channels in layout %s; "
			       "a picture gives 3 (RGB) or 1 (grey)%s", what, t->name, shape,
			       (long long)(nchw ? d[0] : d[2]), nchw ? "nchw" : "nhwc",
			       o->image_layout ? "" : " (or give --image-layout)");
	return 0;
}

/* --image-mean / --image-std for @c channels: given, BlazeFace's or the default. */
static int channel_values(const struct nr_options *o, const char *what, const char *input,
			  unsigned c, int std, float *v)
{
	const float *given = std ? o->image_std : o->image_mean;
	unsigned n = std ? o->n_image_std : o->n_image_mean;
	int blazeface = o->detect && !strcmp(o->detect, "blazeface");

	if (n > 1 && n != c)
		return nr_fail(NR_EXIT_USAGE, "%s: --image-%s has %u values, but input '%s' has %u "
			       "channel%s; give one value, or %u", what, std ? "std" : "mean", n,
			       input, c, c == 1 ? "" : "s", c);
	for (unsigned i = 0; i < c; i++)
		v[i] = n ? given[n == 1 ? 0 : i] : blazeface ? 0.5f : std ? 1.0f : 0.0f;
	return 0;
}

void nr_image_norm_str(const struct nr_options *o, const npu_tensor_info *t, char *buf,
		       size_t cap)
{
	struct nr_image_geom g;
	float mean[3], std[3];
	size_t n = 0;

	buf[0] = '\0';
	if (t->dtype == NPU_DTYPE_UINT8) {
		snprintf(buf, cap, "pixels 0..255");
		return;
	}
	/* Checked when the picture was read: these cannot fail here. */
	if (nr_image_geometry(o, "", t, &g) || channel_values(o, "", t->name, g.c, 0, mean) ||
	    channel_values(o, "", t->name, g.c, 1, std))
		return;
	/* One channel, or all alike: the range; else the values per channel. */
	if (g.c == 1 || (mean[0] == mean[1] && mean[1] == mean[2] && std[0] == std[1] &&
			 std[1] == std[2])) {
		/* + 0.0f: "0", not "-0", for a mean of 0. */
		snprintf(buf, cap, "to [%g, %g]", -mean[0] / std[0] + 0.0f, (1 - mean[0]) / std[0]);
		return;
	}
	n += (size_t)snprintf(buf + n, cap - n, "mean");
	for (unsigned c = 0; c < g.c && n < cap; c++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%g", c ? "," : " ", mean[c]);
	for (unsigned c = 0; c < g.c && n < cap; c++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%g", c ? "," : ", std ", std[c]);
}

int nr_image_input(const struct nr_options *o, const char *arg, const char *file,
		   const npu_tensor_info *t, void *data, struct nr_image *img)
{
	char what[1100];
	struct nr_image_geom g;
	float mean[3], std[3], *px;
	size_t plane;
	int rc;

	snprintf(what, sizeof(what), "--input %s", arg);
	rc = nr_image_geometry(o, what, t, &g);
	if (rc)
		return rc;
	if (t->dtype != NPU_DTYPE_FLOAT32 && t->dtype != NPU_DTYPE_UINT8)
		return nr_fail(NR_EXIT_RUNTIME, "%s: input '%s' is %s; a picture fills float32 or "
			       "uint8 inputs; give raw or .npy data", what, t->name,
			       npu_dtype_str(t->dtype));
	if (t->dtype == NPU_DTYPE_UINT8 && (o->n_image_mean || o->n_image_std))
		return nr_fail(NR_EXIT_USAGE, "%s: input '%s' is uint8 and takes the pixels 0..255 "
			       "as they are; --image-mean and --image-std apply to float32 inputs",
			       what, t->name);
	if (channel_values(o, what, t->name, g.c, 0, mean) ||
	    channel_values(o, what, t->name, g.c, 1, std))
		return NR_EXIT_USAGE;
	rc = nr_image_read(what, file, img);
	if (rc)
		return rc;
	px = nr_image_resize(img, g.w, g.h);
	if (!px)
		return nr_fail(NR_EXIT_RUNTIME, "%s: out of memory resizing %s", what, file);
	plane = (size_t)g.h * g.w;
	for (size_t i = 0; i < plane; i++) {
		const float *p = px + i * 3;
		/* One channel: the grey value, or the luma of colour (ITU-R BT.601). */
		float grey = img->grey ? p[0] : 0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2];

		for (unsigned c = 0; c < g.c; c++) {
			float v = g.c == 1 ? grey : p[c];
			size_t at = g.nchw ? c * plane + i : i * g.c + c;

			if (t->dtype == NPU_DTYPE_UINT8)
				((uint8_t *)data)[at] = (uint8_t)lrintf(v < 0 ? 0 : v > 255 ? 255 : v);
			else
				((float *)data)[at] = (float)((v / 255.0 - mean[c]) / std[c]);
		}
	}
	free(px);
	return 0;
}

int nr_image_from_tensor(const struct nr_options *o, const npu_tensor_info *t,
			 const void *data, struct nr_image *img)
{
	struct nr_image_geom g;
	float lo = INFINITY, hi = -INFINITY;
	size_t plane;
	int rc;

	memset(img, 0, sizeof(*img));
	rc = nr_image_geometry(o, "--draw", t, &g);
	if (rc)
		return rc;
	if (t->dtype != NPU_DTYPE_FLOAT32 && t->dtype != NPU_DTYPE_UINT8)
		return nr_fail(NR_EXIT_RUNTIME, "--draw: input '%s' is %s; drawing on a tensor "
			       "needs float32 or uint8 (or give the input as a PNG or JPEG picture)",
			       t->name, npu_dtype_str(t->dtype));
	plane = (size_t)g.h * g.w;
	if (t->dtype == NPU_DTYPE_FLOAT32)
		for (size_t i = 0; i < plane * g.c; i++) {
			float v = ((const float *)data)[i];

			if (isfinite(v)) {
				lo = v < lo ? v : lo;
				hi = v > hi ? v : hi;
			}
		}
	img->rgb = malloc(plane * 3);
	if (!img->rgb)
		return nr_fail(NR_EXIT_RUNTIME, "--draw: out of memory");
	img->w = g.w;
	img->h = g.h;
	img->grey = g.c == 1;
	img->kind = "tensor";
	for (size_t i = 0; i < plane; i++)
		for (unsigned c = 0; c < 3; c++) {
			size_t at = g.nchw ? (g.c == 1 ? 0 : c) * plane + i : i * g.c + (g.c == 1 ? 0 : c);
			double v;

			if (t->dtype == NPU_DTYPE_UINT8) {
				img->rgb[i * 3 + c] = ((const uint8_t *)data)[at];
				continue;
			}
			v = ((const float *)data)[at];
			v = hi > lo && isfinite(v) ? (v - lo) / (hi - lo) * 255.0 : 0.0;
			img->rgb[i * 3 + c] = (unsigned char)lrint(v < 0 ? 0 : v > 255 ? 255 : v);
		}
	return 0;
}
