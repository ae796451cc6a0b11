/* SPDX-License-Identifier: MIT */
/*
 * npu-run: a picture as a model input (--input NAME=photo.png|.jpg) and
 * back (--draw from a tensor).  The input's shape says where the channels
 * are: rank 4 [1, C, H, W] / [1, H, W, C] or rank 3 without the 1; C is 3
 * (RGB) or 1 (grey).
 */
#ifndef NPU_RUN_IMAGE_INPUT_H
#define NPU_RUN_IMAGE_INPUT_H

#include "args.h"
#include "image.h"
#include "npu.h"

/* Where a picture's pixels go in an input tensor. */
struct nr_image_geom {
	unsigned c, h, w;	/* channels (1 or 3), height, width */
	int nchw;		/* planes; else interleaved (nhwc) */
};

/*
 * The geometry of input @t: from --image-layout, else inferred from
 * whichever of dim 1 and dim 3 (of rank 4) is 3 or 1 while the other is
 * not.  0, or the exit status with "@what: ..." printed.
 */
int nr_image_geometry(const struct nr_options *o, const char *what, const npu_tensor_info *t,
		      struct nr_image_geom *g);

/*
 * Decode picture @file of --input @arg into input @t's tensor @data:
 * resized, its channels as the input has them, normalised for float32
 * ((pixel/255 - mean) / std; BlazeFace's 0.5 and 0.5 by default with
 * --detect blazeface), pixels for uint8.  @img keeps the picture (its
 * own size) for --draw.  0, or the exit status with the message printed.
 */
int nr_image_input(const struct nr_options *o, const char *arg, const char *file,
		   const npu_tensor_info *t, void *data, struct nr_image *img);

/*
 * A picture of input @t's tensor @data (batch element 0), for --draw when
 * the input was no picture: float values stretched from their min..max to
 * 0..255, uint8 as they are.
 */
int nr_image_from_tensor(const struct nr_options *o, const npu_tensor_info *t,
			 const void *data, struct nr_image *img);

/*
 * How input @t is filled from a picture, for the summary: "to [-1, 1]
 * (mean 0.5, std 0.5)", "pixels 0..255" ...
 */
void nr_image_norm_str(const struct nr_options *o, const npu_tensor_info *t, char *buf,
		       size_t cap);

/* @img resized to @w x @h, as floats 0..255, RGB interleaved (malloc'd; NULL: no memory). */
float *nr_image_resize(const struct nr_image *img, unsigned w, unsigned h);

/* "area", "bilinear", "area and bilinear" or "not resized", for the summary. */
const char *nr_image_resize_method(unsigned from_w, unsigned from_h, unsigned w, unsigned h);

#endif /* NPU_RUN_IMAGE_INPUT_H */
