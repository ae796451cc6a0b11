/* SPDX-License-Identifier: MIT */
/* npu-run: writing outputs to --output-dir. */
#ifndef NPU_RUN_OUTPUTS_H
#define NPU_RUN_OUTPUTS_H

#include <stddef.h>

#include "args.h"
#include "npu.h"

/*
 * The file name part for tensor @name: characters outside [A-Za-z0-9._-]
 * become '_' (so "logits:0" is "logits_0"), an empty name is "_", and
 * "." and ".." become "_" and "__" so no name can leave the directory.
 * Truncated to fit @cap bytes with the terminating NUL.
 */
void nr_sanitize_name(const char *name, char *out, size_t cap);

/*
 * Can every output of @model be written in @format?  For npy, each dtype
 * needs a NumPy descr (bfloat16 has none).  Returns 0 or the exit status
 * with the message printed (naming the output, suggesting raw).
 */
int nr_outputs_check(const npu_model *model, enum nr_output_format format);

/*
 * Write every output of the last run as DIR/<name>.bin, raw little-endian
 * in its dtype (int64 outputs, int32 on the NPU, widened back to int64),
 * or with NR_OUTPUT_NPY as DIR/<name>.npy: NumPy format 1.0, C order, the
 * output's shape as the model reports it and the same data bytes after the
 * header.  With a batch, element b > 0 goes to DIR/<name>.<b>.bin (.npy).
 * Creates DIR (and its parents) if missing.  When two names sanitize to
 * the same file, the later output gets "_<index>" appended.  On success
 * *@paths (if not NULL) holds, per output of element 0, the file written
 * (free with nr_output_paths_free()).  Returns 0 or the exit status with
 * the message printed.
 */
int nr_outputs_write(npu_context *ctx, const npu_model *model, unsigned batch, const char *dir,
		     enum nr_output_format format, char ***paths);
void nr_output_paths_free(char **paths, size_t n);

#endif /* NPU_RUN_OUTPUTS_H */
