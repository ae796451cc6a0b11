/* SPDX-License-Identifier: MIT */
/* npu-run: error reporting and small helpers shared by its files. */
#ifndef NPU_RUN_UTIL_H
#define NPU_RUN_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "npu.h"

/* Exit status: 0 success, 1 a runtime error (device, model, files, run),
 * 2 a usage error (bad flags or values). */
#define NR_EXIT_RUNTIME	1
#define NR_EXIT_USAGE	2

/*
 * Print "npu-run: MESSAGE" as one line on stderr and return @status, so
 * callers can write `return nr_fail(NR_EXIT_USAGE, ...)`.  Control
 * characters in the message (a libnpu message or a file name could hold a
 * newline) become spaces: every error is exactly one line.
 */
int nr_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Monotonic host time in seconds. */
double nr_now(void);

/* "[1, 3, 32, 32]" into @buf (truncated to @cap); returns @buf. */
char *nr_shape_str(const int64_t *dims, int rank, char *buf, size_t cap);

/* Number of elements of a shape; 0 for a dimension <= 0. */
uint64_t nr_shape_elems(const int64_t *dims, int rank);

#endif /* NPU_RUN_UTIL_H */
