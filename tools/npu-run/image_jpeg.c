// SPDX-License-Identifier: MIT
/*
 * npu-run: JPEG through libjpeg (libjpeg-turbo).  libjpeg reports errors
 * by calling error_exit, which must not return: ours longjmps back to
 * the one setjmp below, where everything taken so far is freed.  The
 * pixel buffer is the only thing assigned after the setjmp, so it is
 * volatile (C11 7.13.2.1).  Warnings (a truncated file, corrupt data:
 * libjpeg would fill the rest with grey and carry on) are errors here: a
 * half-decoded picture must not silently become a model's input.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "image.h"
#include "util.h"

struct jerr {
	struct jpeg_error_mgr mgr;	/* first: libjpeg sees only this */
	jmp_buf back;
	char msg[JMSG_LENGTH_MAX];
};

static void on_error(j_common_ptr c)
{
	struct jerr *e = (struct jerr *)c->err;

	c->err->format_message(c, e->msg);
	longjmp(e->back, 1);
}

/* Level -1 is a warning (corrupt or truncated data); others are traces. */
static void on_message(j_common_ptr c, int level)
{
	if (level < 0)
		on_error(c);
}

int nr_image_read_jpeg(const char *what, const char *file, struct nr_image *img)
{
	struct jpeg_decompress_struct ci;
	struct jerr err;
	unsigned char *volatile rgb = NULL;
	FILE *f = fopen(file, "rb");
	int rc;

	memset(img, 0, sizeof(*img));
	if (!f)
		return nr_fail(NR_EXIT_RUNTIME, "%s: cannot open %s: %s", what, file,
			       strerror(errno));
	ci.err = jpeg_std_error(&err.mgr);
	err.mgr.error_exit = on_error;
	err.mgr.emit_message = on_message;
	if (setjmp(err.back)) {
		jpeg_destroy_decompress(&ci);
		fclose(f);
		free(rgb);
		return nr_fail(NR_EXIT_RUNTIME, "%s: %s is a damaged or truncated JPEG file (%s)",
			       what, file, err.msg);
	}
	jpeg_create_decompress(&ci);
	jpeg_stdio_src(&ci, f);
	jpeg_read_header(&ci, TRUE);
	rc = nr_image_check_size(what, file, ci.image_width, ci.image_height);
	if (rc) {
		jpeg_destroy_decompress(&ci);
		fclose(f);
		return rc;
	}
	/* Grey is expanded to RGB; CMYK has no conversion and fails here, by name. */
	img->grey = ci.jpeg_color_space == JCS_GRAYSCALE;
	ci.out_color_space = JCS_RGB;
	jpeg_start_decompress(&ci);
	rgb = malloc((size_t)ci.output_width * ci.output_height * 3);
	if (!rgb) {
		jpeg_destroy_decompress(&ci);
		fclose(f);
		return nr_fail(NR_EXIT_RUNTIME, "%s: out of memory for the %ux%u pixels of %s",
			       what, ci.output_width, ci.output_height, file);
	}
	while (ci.output_scanline < ci.output_height) {
		JSAMPROW row = rgb + (size_t)ci.output_scanline * ci.output_width * 3;

		jpeg_read_scanlines(&ci, &row, 1);
	}
	jpeg_finish_decompress(&ci);
	img->w = ci.output_width;
	img->h = ci.output_height;
	img->rgb = rgb;
	img->kind = "JPEG";
	jpeg_destroy_decompress(&ci);
	fclose(f);
	return 0;
}
