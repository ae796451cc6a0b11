/* SPDX-License-Identifier: MIT */
/* npu-run: --fix NAME=VALUES, graph inputs fixed to a value at compile time. */
#ifndef NPU_RUN_FIX_H
#define NPU_RUN_FIX_H

#include "args.h"

/*
 * Turn every --fix argument into o->fix_values (npu_compile_options.
 * input_values): VALUES is numbers joined by ',' in the declared input's
 * dtype, as many as its shape (the model's, or --shape's) holds, or a
 * raw or .npy FILE.  Says on stderr which inputs were fixed.  Returns 0,
 * or the exit status with the message printed (NR_EXIT_USAGE: a name that
 * is no input, a wrong count or a value that does not fit the dtype).
 */
int nr_fix_prepare(struct nr_options *o);

#endif /* NPU_RUN_FIX_H */
