/* SPDX-License-Identifier: MIT */
/*
 * Internal helpers shared by every libnpu source file.
 */
#ifndef NPU_INTERNAL_H
#define NPU_INTERNAL_H

#include "npu.h"

/*
 * Record a detailed message for npu_last_error() and return @s, so failure
 * paths read: return npu_fail(NPU_ERR_IO, "cannot open %s: %s", ...).
 */
npu_status npu_fail(npu_status s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void npu_clear_error(void);

#define NPU_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif /* NPU_INTERNAL_H */
