/* SPDX-License-Identifier: MIT */
/*
 * npu-run --detect: detector post-processing with libnpu's anchors,
 * decoding and weighted NMS.  Only "blazeface" (MediaPipe's front model:
 * 896 anchors; score outputs [.., A, 1] and box outputs [.., A, 16], in any
 * split, concatenated in output order) is known.
 */
#ifndef NPU_RUN_DETECT_H
#define NPU_RUN_DETECT_H

#include <stddef.h>

#include "npu.h"

struct nr_detect {
	float threshold;	/* minimum score */
	npu_detection *det;	/* after NMS, best first */
	size_t n;
	unsigned input_w, input_h;	/* for pixel coordinates */
	/* The input was a picture: pixel coordinates of it instead (text only). */
	const char *image;		/* its file, NULL: none */
	unsigned image_w, image_h;
	const char *draw;		/* --draw FILE, for --detect-from's JSON */
};

/* Is @name a detector npu-run knows?  (The option's value.) */
int nr_detect_known(const char *name);

/*
 * Decode batch element 0's outputs: from the context's output buffers, or
 * (@ctx NULL) from DIR/<output name>.bin as --output-dir writes them.
 */
int nr_detect_run(const npu_model *model, npu_context *ctx, const char *from_dir,
		  struct nr_detect *d);
void nr_detect_free(struct nr_detect *d);

/* The detections alone (--detect-from): text, or one JSON object. */
void nr_detect_print_only(const struct nr_detect *d, const char *model, int json);
/* "face  0.987  x 12.3-40.1  y 20.0-51.2 (pixels of the 128x128 input)" lines. */
void nr_detect_print_text(const struct nr_detect *d);

#endif /* NPU_RUN_DETECT_H */
