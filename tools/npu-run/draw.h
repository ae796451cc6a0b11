/* SPDX-License-Identifier: MIT */
/*
 * npu-run --draw FILE.png: the detections on the picture they were found
 * in, for a person to look at: each box (green), its keypoints (red) and
 * its score (on a green label above the box).
 */
#ifndef NPU_RUN_DRAW_H
#define NPU_RUN_DRAW_H

#include "args.h"
#include "detect.h"
#include "inputs.h"

/*
 * Draw @d on input @in: the picture it was read from at its own size, or
 * a picture of its tensor; write it to o->draw.  0, or the exit status
 * with the message printed.
 */
int nr_draw(const struct nr_options *o, const struct nr_input *in, const struct nr_detect *d);

#endif /* NPU_RUN_DRAW_H */
