// SPDX-License-Identifier: MIT
/*
 * The model boundary's types against the device's.  The NPU computes with
 * float32, float16, bfloat16, int32, int8, uint8 and bool; a model input
 * or output of another ONNX type keeps that type for the caller and its
 * device slot holds the nearest device type (npu_io_dev_dtype()):
 *
 *   float64                          as float32
 *   int64, uint64, uint32            as int32, values checked to fit
 *   int16, uint16                    as int32, exact
 *
 * Inputs are checked, never silently changed: a value the slot cannot
 * hold is NPU_ERR_INVALID_ARG naming the input and the element, as
 * onnxruntime would have computed it exactly.  Outputs are converted back
 * the way the ONNX type's arithmetic wraps: the device's int32 Add, Sub
 * and Mul wrap modulo 2^32, and casting the int32 result to uint32,
 * int16 or uint16 (or sign-extending it to int64 / uint64) gives the
 * result of the same operation in that type whenever it fits int32.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model/npu_model_priv.h"

NPU_API npu_dtype npu_dtype_device(npu_dtype t)
{
	npu_tensor_info info = { .dtype = t };

	return npu_io_dev_dtype(&info);
}

/* A bool input holds bytes 0 and 1 only (see context.c). */
static npu_status check_bool(const npu_tensor_info *t, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] > 1)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"input '%s': element %zu is %u; a bool tensor holds bytes 0 (false) and 1 (true) only",
					t->name, i, b[i]);
	return NPU_OK;
}

static npu_status int_range(const npu_tensor_info *t, size_t i, const char *v)
{
	bool u = t->dtype == NPU_DTYPE_UINT32 || t->dtype == NPU_DTYPE_UINT64;

	return npu_fail(NPU_ERR_INVALID_ARG,
			"input '%s': element %zu is %s, outside int32 (the NPU computes %s tensors "
			"as int32); give values in %s..2147483647", t->name, i, v,
			npu_dtype_str(t->dtype), u ? "0" : "-2147483648");
}

/* To the device, into @dst, or only the checks when @dst is NULL. */
static npu_status to_device(const npu_tensor_info *t, const void *src, void *dst)
{
	size_t es = npu_dtype_size(t->dtype), n = es ? t->bytes / es : 0;
	const uint8_t *s = src;
	uint8_t *d = dst;
	char buf[32];

	if (!es)
		return npu_fail(NPU_ERR_INVALID_ARG, "input '%s': unknown dtype %d",
				t->name ? t->name : "?", (int)t->dtype);
	if (npu_io_dev_dtype(t) == t->dtype) {
		if (t->dtype == NPU_DTYPE_BOOL) {
			npu_status st = check_bool(t, s, n);

			if (st)
				return st;
		}
		if (dst && dst != src)
			memmove(dst, src, t->bytes);
		return NPU_OK;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t v = 0;
		uint64_t u;
		double f;
		float g;
		int16_t h;
		uint16_t uh;
		uint32_t uw;

		switch (t->dtype) {
		case NPU_DTYPE_FLOAT64:
			memcpy(&f, s + 8 * i, 8);
			if (f > FLT_MAX || f < -FLT_MAX) {
				if (!isinf(f))
					return npu_fail(NPU_ERR_INVALID_ARG,
							"input '%s': element %zu is %g, beyond float32's "
							"largest value 3.4e38 (the NPU computes float64 "
							"tensors as float32)", t->name, i, f);
				g = f > 0 ? INFINITY : -INFINITY;
			} else {
				g = (float)f;
			}
			if (d)
				memcpy(d + 4 * i, &g, 4);
			continue;
		case NPU_DTYPE_INT64:
			memcpy(&v, s + 8 * i, 8);
			if (v < INT32_MIN || v > INT32_MAX) {
				snprintf(buf, sizeof(buf), "%lld", (long long)v);
				return int_range(t, i, buf);
			}
			break;
		case NPU_DTYPE_UINT64:
			memcpy(&u, s + 8 * i, 8);
			if (u > INT32_MAX) {
				snprintf(buf, sizeof(buf), "%llu", (unsigned long long)u);
				return int_range(t, i, buf);
			}
			v = (int64_t)u;
			break;
		case NPU_DTYPE_UINT32:
			memcpy(&uw, s + 4 * i, 4);
			if (uw > INT32_MAX) {
				snprintf(buf, sizeof(buf), "%u", uw);
				return int_range(t, i, buf);
			}
			v = uw;
			break;
		case NPU_DTYPE_INT16:
			memcpy(&h, s + 2 * i, 2);
			v = h;
			break;
		case NPU_DTYPE_UINT16:
			memcpy(&uh, s + 2 * i, 2);
			v = uh;
			break;
		default:
			return npu_fail(NPU_ERR_INTERNAL, "input '%s': no conversion for %s",
					t->name, npu_dtype_str(t->dtype));
		}
		if (d)
			memcpy(d + 4 * i, &(int32_t){ (int32_t)v }, 4);
	}
	return NPU_OK;
}

npu_status npu_io_check_input(const npu_tensor_info *t, const void *src)
{
	return to_device(t, src, NULL);
}

NPU_API npu_status npu_tensor_to_device(const npu_tensor_info *t, const void *src, void *dst)
{
	if (!t || (t->bytes && (!src || !dst)))
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_tensor_to_device: NULL argument");
	return to_device(t, src, dst);
}

NPU_API npu_status npu_tensor_from_device(const npu_tensor_info *t, const void *src, void *dst)
{
	size_t es = npu_dtype_size(t->dtype), n = es ? t->bytes / es : 0;
	const uint8_t *s = src;
	uint8_t *d = dst;

	if (!t || (t->bytes && (!src || !dst)))
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_tensor_from_device: NULL argument");
	if (!es)
		return npu_fail(NPU_ERR_INVALID_ARG, "output '%s': unknown dtype %d",
				t->name ? t->name : "?", (int)t->dtype);
	if (npu_io_dev_dtype(t) == t->dtype) {
		if (dst != src)
			memmove(dst, src, t->bytes);
		return NPU_OK;
	}
	for (size_t k = n; k-- > 0;) {
		int32_t w;
		float g;

		if (t->dtype == NPU_DTYPE_FLOAT64) {
			memcpy(&g, s + 4 * k, 4);
			memcpy(d + 8 * k, &(double){ g }, 8);
			continue;
		}
		memcpy(&w, s + 4 * k, 4);
		switch (t->dtype) {
		case NPU_DTYPE_INT64:
		case NPU_DTYPE_UINT64:
			/* Sign-extended: uint64 wraps modulo 2^64 as its arithmetic does. */
			memcpy(d + 8 * k, &(int64_t){ w }, 8);
			break;
		case NPU_DTYPE_UINT32:
			memcpy(d + 4 * k, &(uint32_t){ (uint32_t)w }, 4);
			break;
		case NPU_DTYPE_INT16:
		case NPU_DTYPE_UINT16:
			memcpy(d + 2 * k, &(uint16_t){ (uint16_t)(uint32_t)w }, 2);
			break;
		default:
			return npu_fail(NPU_ERR_INTERNAL, "output '%s': no conversion for %s",
					t->name, npu_dtype_str(t->dtype));
		}
	}
	return NPU_OK;
}
