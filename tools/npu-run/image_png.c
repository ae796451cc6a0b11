// SPDX-License-Identifier: MIT
/*
 * npu-run: PNG through libpng's simplified API (png_image_*).  It does the
 * conversions npu-run needs (palette, grey, alpha, 16 bits to 8-bit RGB)
 * and keeps libpng's setjmp/longjmp inside libpng: a damaged file makes a
 * call return 0 with the reason in image.message and libpng's state
 * already freed, so no caller frame is ever jumped over and nothing of
 * ours can leak.
 */
#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "util.h"

int nr_image_read_png(const char *what, const char *file, struct nr_image *img)
{
	png_image pi;
	/* Transparent pixels show what is behind them: black (documented). */
	png_color black = { 0, 0, 0 };
	FILE *f = fopen(file, "rb");
	int rc;

	memset(img, 0, sizeof(*img));
	img->kind = "PNG";
	if (!f)
		return nr_fail(NR_EXIT_RUNTIME, "%s: cannot open %s: %s", what, file,
			       strerror(errno));
	memset(&pi, 0, sizeof(pi));
	pi.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_stdio(&pi, f)) {
		fclose(f);
		return nr_fail(NR_EXIT_RUNTIME, "%s: %s is a damaged PNG file (%s)", what, file,
			       pi.message);
	}
	rc = nr_image_check_size(what, file, pi.width, pi.height);
	if (rc) {
		png_image_free(&pi);
		fclose(f);
		return rc;
	}
	img->grey = !(pi.format & PNG_FORMAT_FLAG_COLOR);
	/* 16-bit samples are sRGB-coded like 8-bit ones, not linear light:
	 * without the flag libpng would apply a gamma curve reducing them. */
	pi.flags |= PNG_IMAGE_FLAG_16BIT_sRGB;
	pi.format = PNG_FORMAT_RGB;
	img->rgb = malloc(PNG_IMAGE_SIZE(pi));
	if (!img->rgb) {
		png_image_free(&pi);
		fclose(f);
		return nr_fail(NR_EXIT_RUNTIME, "%s: out of memory for the %ux%u pixels of %s",
			       what, pi.width, pi.height, file);
	}
	if (!png_image_finish_read(&pi, &black, img->rgb, 0, NULL)) {
		fclose(f);
		nr_image_free(img);
		return nr_fail(NR_EXIT_RUNTIME, "%s: %s is a damaged or truncated PNG file (%s)",
			       what, file, pi.message);
	}
	fclose(f);
	img->w = pi.width;
	img->h = pi.height;
	img->kind = "PNG";
	return 0;
}

int nr_image_write_png(const char *what, const char *file, const struct nr_image *img)
{
	png_image pi;
	FILE *f = fopen(file, "wb");
	int ok;

	if (!f)
		return nr_fail(NR_EXIT_RUNTIME, "%s: cannot create %s: %s", what, file,
			       strerror(errno));
	memset(&pi, 0, sizeof(pi));
	pi.version = PNG_IMAGE_VERSION;
	pi.width = img->w;
	pi.height = img->h;
	pi.format = PNG_FORMAT_RGB;
	ok = png_image_write_to_stdio(&pi, f, 0, img->rgb, 0, NULL);
	if (fclose(f) || !ok) {
		remove(file);
		return nr_fail(NR_EXIT_RUNTIME, "%s: writing %s failed (%s)", what, file,
			       ok ? strerror(errno) : pi.message);
	}
	return 0;
}
