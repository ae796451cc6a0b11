/* SPDX-License-Identifier: MIT */
/* npu-run: writing outputs to --output-dir. */
#ifndef NPU_RUN_OUTPUTS_H
#define NPU_RUN_OUTPUTS_H

#include <stddef.h>

#include "npu.h"

/*
 * The file name part for tensor @name: characters outside [A-Za-z0-9._-]
 * become '_' (so "logits:0" is "logits_0"), an empty name is "_", and
 * "." and ".." become "_" and "__" so no name can leave the directory.
 * Truncated to fit @cap bytes with the terminating NUL.
 */
void nr_sanitize_name(const char *name, char *out, size_t cap);

/*
 * Write every output of the last run as DIR/<name>.bin, raw little-endian
 * in its dtype; with a batch, element b > 0 goes to DIR/<name>.<b>.bin.
 * Creates DIR (and its parents) if missing.  When two names sanitize to
 * the same file, the later output gets "_<index>" appended.  On success
 * *@paths (if not NULL) holds, per output of element 0, the file written
 * (free with nr_output_paths_free()).  Returns 0 or the exit status with
 * the message printed.
 */
int nr_outputs_write(npu_context *ctx, const npu_model *model, unsigned batch, const char *dir,
		     char ***paths);
void nr_output_paths_free(char **paths, size_t n);

#endif /* NPU_RUN_OUTPUTS_H */
