/* SPDX-License-Identifier: MIT */
/*
 * npu-run: pictures.  PNG (libpng) and JPEG (libjpeg) files decoded to
 * 8-bit RGB, recognised by their first bytes whatever their names; PNG
 * written for --draw.  Every failure is one message naming the file.
 */
#ifndef NPU_RUN_IMAGE_H
#define NPU_RUN_IMAGE_H

#include <stddef.h>

/*
 * Larger pictures are refused before any pixel memory is taken: a damaged
 * or hostile header cannot make npu-run allocate gigabytes.  16384 a side
 * and 64 megapixels (192 MB of RGB) are far above what a model's input
 * is resized from.
 */
#define NR_IMAGE_MAX_SIDE	16384u
#define NR_IMAGE_MAX_PIXELS	(64u << 20)

enum nr_image_kind {
	NR_IMAGE_NONE,		/* not a picture: raw or .npy data */
	NR_IMAGE_PNG,
	NR_IMAGE_JPEG,
};

/* An 8-bit RGB picture, rows top to bottom, 3 bytes a pixel. */
struct nr_image {
	unsigned w, h;
	int grey;		/* the file holds no colour (grey, or grey + alpha) */
	const char *kind;	/* "PNG" or "JPEG", for messages */
	unsigned char *rgb;	/* w * h * 3, malloc'd */
};

/* What @file holds, from its magic bytes (NONE also for a file that cannot be read). */
enum nr_image_kind nr_image_sniff(const char *file);

/*
 * Decode @file (PNG or JPEG) into @img as RGB: grey replicated, palette
 * expanded, 16 bits reduced to 8, alpha composited onto black.  0, or the
 * exit status with "@what: ..." printed; @img is empty on failure.
 */
int nr_image_read(const char *what, const char *file, struct nr_image *img);
int nr_image_read_png(const char *what, const char *file, struct nr_image *img);
int nr_image_read_jpeg(const char *what, const char *file, struct nr_image *img);

/* Write @img as an 8-bit RGB PNG; 0 or the exit status with the message printed. */
int nr_image_write_png(const char *what, const char *file, const struct nr_image *img);

/* 0 if a @w x @h picture is within the limits above, else the message and status. */
int nr_image_check_size(const char *what, const char *file, unsigned long w, unsigned long h);

void nr_image_free(struct nr_image *img);

#endif /* NPU_RUN_IMAGE_H */
