/* SPDX-License-Identifier: MIT */
/* npu-run: input shapes from the --input files. */
#ifndef NPU_RUN_SHAPES_H
#define NPU_RUN_SHAPES_H

#include "args.h"

/*
 * For every --input whose model input has open dims and no --shape: add
 * the shape its file gives (an .npy header: every dim; a raw file's size:
 * the one open dim) to o->shapes, and say so on stderr (not with --json).  Returns 0, or
 * the exit status with the message printed (a file that fixes no shape).
 * A model that does not parse, a compiled one or a URL is left to the
 * load.
 */
int nr_shapes_from_inputs(struct nr_options *o);

/* Where the shape of input @name came from: "--shape", "the file's size
 * (axis N)", "the .npy header"; NULL: the model's own. */
const char *nr_shape_from(const struct nr_options *o, const char *name);

#endif /* NPU_RUN_SHAPES_H */
