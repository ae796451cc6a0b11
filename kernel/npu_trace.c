// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The one place the npu tracepoints are instantiated.
 *
 * Copyright (c) 2026 The M100 NPU authors
 */

#define CREATE_TRACE_POINTS
#include "npu_trace.h"
