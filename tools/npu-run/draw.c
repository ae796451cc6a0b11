// SPDX-License-Identifier: MIT
/* npu-run --draw (draw.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "font.h"
#include "image_input.h"
#include "util.h"

static const unsigned char box_rgb[3] = { 0, 255, 0 };
static const unsigned char point_rgb[3] = { 255, 0, 0 };
static const unsigned char text_rgb[3] = { 0, 0, 0 };

/* A filled rectangle [x0, x1) x [y0, y1), clipped to the picture. */
static void fill(struct nr_image *img, long x0, long y0, long x1, long y1,
		 const unsigned char rgb[3])
{
	x0 = x0 < 0 ? 0 : x0;
	y0 = y0 < 0 ? 0 : y0;
	x1 = x1 > (long)img->w ? (long)img->w : x1;
	y1 = y1 > (long)img->h ? (long)img->h : y1;
	for (long y = y0; y < y1; y++)
		for (long x = x0; x < x1; x++)
			memcpy(img->rgb + ((size_t)y * img->w + (size_t)x) * 3, rgb, 3);
}

/* @s at (@x, @y), each font pixel @scale x @scale. */
static void text(struct nr_image *img, long x, long y, const char *s, long scale)
{
	for (; *s; s++, x += (NR_FONT_W + 1) * scale) {
		const unsigned char *g = nr_font_glyph(*s);

		for (int r = 0; g && r < NR_FONT_H; r++)
			for (int c = 0; c < NR_FONT_W; c++)
				if (g[r] >> (NR_FONT_W - 1 - c) & 1)
					fill(img, x + c * scale, y + r * scale,
					     x + (c + 1) * scale, y + (r + 1) * scale, text_rgb);
	}
}

/*
 * Normalised coordinate @v in pixels of a side of @n.  Decoded outputs
 * (--detect-from's files above all) may hold anything: clamped far
 * outside the picture first, so the pixel arithmetic cannot overflow.
 */
static long px(float v, unsigned n)
{
	double d = v;

	if (!(d > -4.0))	/* NaN too */
		d = -4.0;
	if (d > 4.0)
		d = 4.0;
	return lrint(d * n);
}

static void detection(struct nr_image *img, const npu_detection *x, long line, long scale)
{
	long x0 = px(x->xmin, img->w), x1 = px(x->xmax, img->w);
	long y0 = px(x->ymin, img->h), y1 = px(x->ymax, img->h);
	long tw, th, ty;
	char score[16];

	/* The outline: four bands of @line pixels inside the box. */
	fill(img, x0, y0, x1, y0 + line, box_rgb);
	fill(img, x0, y1 - line, x1, y1, box_rgb);
	fill(img, x0, y0, x0 + line, y1, box_rgb);
	fill(img, x1 - line, y0, x1, y1, box_rgb);
	for (int k = 0; k < x->num_keypoints; k++) {
		long kx = px(x->keypoints[k].x, img->w), ky = px(x->keypoints[k].y, img->h);

		fill(img, kx - line, ky - line, kx + line + 1, ky + line + 1, point_rgb);
	}
	/* The score on a label above the box, or inside it at the picture's top. */
	snprintf(score, sizeof(score), "%.2f", x->score);
	tw = ((NR_FONT_W + 1) * (long)strlen(score) + 1) * scale;
	th = (NR_FONT_H + 2) * scale;
	ty = y0 - th >= 0 ? y0 - th : y0 + line;
	fill(img, x0, ty, x0 + tw, ty + th, box_rgb);
	text(img, x0 + scale, ty + scale, score, scale);
}

int nr_draw(const struct nr_options *o, const struct nr_input *in, const struct nr_detect *d)
{
	struct nr_image pic;
	const struct nr_image *base = &in->image;
	long side, line, scale;
	int rc;

	/* A copy: the input's picture stays as it was read. */
	if (!base->rgb) {
		rc = nr_image_from_tensor(o, &in->info, in->data, &pic);
		if (rc)
			return rc;
	} else {
		pic = *base;
		pic.rgb = malloc((size_t)base->w * base->h * 3);
		if (!pic.rgb)
			return nr_fail(NR_EXIT_RUNTIME, "--draw: out of memory");
		memcpy(pic.rgb, base->rgb, (size_t)base->w * base->h * 3);
	}
	/* Lines and text grow with the picture: 1 and 1 at 128 pixels, 2 and 3 at 512. */
	side = pic.w < pic.h ? (long)pic.w : (long)pic.h;
	line = side / 256 > 1 ? side / 256 : 1;
	scale = side / 160 > 1 ? side / 160 : 1;
	/* Best last: on top where boxes overlap. */
	for (size_t i = d->n; i-- > 0;)
		detection(&pic, &d->det[i], line, scale);
	rc = nr_image_write_png("--draw", o->draw, &pic);
	nr_image_free(&pic);
	return rc;
}
