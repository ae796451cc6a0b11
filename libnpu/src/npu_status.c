// SPDX-License-Identifier: MIT
/*
 * Status strings and the per-thread detailed error message.
 */
#include <stdarg.h>
#include <stdio.h>

#include "npu_internal.h"

static const char *const status_names[NPU_STATUS_COUNT] = {
	[NPU_OK] = "ok",
	[NPU_ERR_INVALID_ARG] = "invalid argument",
	[NPU_ERR_NO_MEMORY] = "out of memory",
	[NPU_ERR_NO_DEVICE] = "no device",
	[NPU_ERR_DEVICE] = "device error",
	[NPU_ERR_VERSION] = "version not supported",
	[NPU_ERR_IO] = "input/output error",
	[NPU_ERR_FORMAT] = "bad model format",
	[NPU_ERR_UNSUPPORTED] = "not supported",
	[NPU_ERR_NOT_FOUND] = "not found",
	[NPU_ERR_TIMEOUT] = "timed out",
	[NPU_ERR_NETWORK] = "network error",
	[NPU_ERR_CHECKSUM] = "checksum mismatch",
	[NPU_ERR_BUSY] = "not enough free clusters",
	[NPU_ERR_JOB_FAILED] = "job failed on the NPU",
	[NPU_ERR_SHAPE] = "tensor shape or size mismatch",
	[NPU_ERR_INTERNAL] = "internal error",
	[NPU_ERR_CONTEXT_FULL] = "generation context full",
};

const char *npu_status_str(npu_status s)
{
	if ((unsigned)s >= NPU_STATUS_COUNT || !status_names[s])
		return "unknown status";
	return status_names[s];
}

static _Thread_local char last_error[1024];

const char *npu_last_error(void)
{
	return last_error;
}

npu_status npu_fail(npu_status s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return s;
}

void npu_clear_error(void)
{
	last_error[0] = '\0';
}

const char *npu_dtype_str(npu_dtype t)
{
	switch (t) {
	case NPU_DTYPE_FLOAT32: return "float32";
	case NPU_DTYPE_UINT8: return "uint8";
	case NPU_DTYPE_INT8: return "int8";
	case NPU_DTYPE_UINT16: return "uint16";
	case NPU_DTYPE_INT16: return "int16";
	case NPU_DTYPE_INT32: return "int32";
	case NPU_DTYPE_INT64: return "int64";
	case NPU_DTYPE_FLOAT64: return "float64";
	case NPU_DTYPE_UINT32: return "uint32";
	case NPU_DTYPE_UINT64: return "uint64";
	case NPU_DTYPE_BOOL: return "bool";
	case NPU_DTYPE_FLOAT16: return "float16";
	case NPU_DTYPE_BFLOAT16: return "bfloat16";
	}
	return "unknown";
}

size_t npu_dtype_size(npu_dtype t)
{
	switch (t) {
	case NPU_DTYPE_BOOL:
	case NPU_DTYPE_UINT8:
	case NPU_DTYPE_INT8: return 1;
	case NPU_DTYPE_FLOAT16:
	case NPU_DTYPE_BFLOAT16:
	case NPU_DTYPE_UINT16:
	case NPU_DTYPE_INT16: return 2;
	case NPU_DTYPE_FLOAT32:
	case NPU_DTYPE_UINT32:
	case NPU_DTYPE_INT32: return 4;
	case NPU_DTYPE_FLOAT64:
	case NPU_DTYPE_UINT64:
	case NPU_DTYPE_INT64: return 8;
	}
	return 0;
}
