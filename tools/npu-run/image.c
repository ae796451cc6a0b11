// SPDX-License-Identifier: MIT
/* npu-run: recognising and reading pictures (image.h); the codecs are image_png.c, image_jpeg.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "util.h"

enum nr_image_kind nr_image_sniff(const char *file)
{
	static const unsigned char png[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	unsigned char m[8];
	size_t n;
	FILE *f = fopen(file, "rb");

	if (!f)
		return NR_IMAGE_NONE;
	n = fread(m, 1, sizeof(m), f);
	fclose(f);
	if (n == sizeof(m) && !memcmp(m, png, sizeof(png)))
		return NR_IMAGE_PNG;
	/* SOI then any marker: JFIF, Exif and bare JPEG streams alike. */
	if (n >= 3 && m[0] == 0xff && m[1] == 0xd8 && m[2] == 0xff)
		return NR_IMAGE_JPEG;
	return NR_IMAGE_NONE;
}

int nr_image_check_size(const char *what, const char *file, unsigned long w, unsigned long h)
{
	if (!w || !h)
		return nr_fail(NR_EXIT_RUNTIME, "%s: %s is %lux%lu pixels: an empty picture", what,
			       file, w, h);
	if (w > NR_IMAGE_MAX_SIDE || h > NR_IMAGE_MAX_SIDE ||
	    (unsigned long long)w * h > NR_IMAGE_MAX_PIXELS)
		return nr_fail(NR_EXIT_RUNTIME, "%s: %s is %lux%lu pixels, more than npu-run reads "
			       "(%u a side, %u megapixels); scale it down first", what, file, w, h,
			       NR_IMAGE_MAX_SIDE, NR_IMAGE_MAX_PIXELS >> 20);
	return 0;
}

int nr_image_read(const char *what, const char *file, struct nr_image *img)
{
	memset(img, 0, sizeof(*img));
	switch (nr_image_sniff(file)) {
	case NR_IMAGE_PNG:
		return nr_image_read_png(what, file, img);
	case NR_IMAGE_JPEG:
		return nr_image_read_jpeg(what, file, img);
	default:
		return nr_fail(NR_EXIT_RUNTIME, "%s: %s is neither a PNG nor a JPEG picture", what,
			       file);
	}
}

void nr_image_free(struct nr_image *img)
{
	free(img->rgb);
	memset(img, 0, sizeof(*img));
}
