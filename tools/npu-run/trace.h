/* SPDX-License-Identifier: MIT */
/* npu-run --trace FILE: the last run's simulated timeline as Chrome trace JSON. */
#ifndef NPU_RUN_TRACE_H
#define NPU_RUN_TRACE_H

#include "npu.h"

/*
 * Before anything is compiled: @path can be written, and @dev shows its
 * timeline (the emulator); 0 or an exit status after a message.
 */
int nr_trace_check(const char *path, npu_device *dev);
/* Record the runs of @ctx from now on; 0 or an exit status. */
int nr_trace_start(npu_context *ctx);
/* Write the last completed run of @ctx to @path; 0 or an exit status. */
int nr_trace_write(npu_context *ctx, const char *path);

#endif /* NPU_RUN_TRACE_H */
