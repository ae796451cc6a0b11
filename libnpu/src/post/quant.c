// SPDX-License-Identifier: MIT
/*
 * Affine quantization between float32 and uint8/int8 (npu_post.h).
 *
 * The mapping is the one of npu_tensor_info and of ONNX's QuantizeLinear
 * / DequantizeLinear operators: real = scale * (q - zero_point), and in
 * the other direction q = saturate(round_half_even(real / scale) +
 * zero_point).
 */
#include <math.h>

#include "npu_internal.h"
#include "npu_post.h"

static npu_status check_args(const char *fn, npu_dtype dtype, const void *in, const void *out,
			     int64_t n, float scale, int32_t zero_point,
			     int32_t *qmin, int32_t *qmax)
{
	if (dtype == NPU_DTYPE_UINT8) {
		*qmin = 0;
		*qmax = 255;
	} else if (dtype == NPU_DTYPE_INT8) {
		*qmin = -128;
		*qmax = 127;
	} else {
		return npu_fail(NPU_ERR_INVALID_ARG,
				"%s: dtype %s is not a quantized type (uint8 or int8)",
				fn, npu_dtype_str(dtype));
	}
	if (!(scale > 0.0f) || isinf(scale))
		return npu_fail(NPU_ERR_INVALID_ARG,
				"%s: scale %g must be finite and greater than 0", fn, (double)scale);
	if (zero_point < *qmin || zero_point > *qmax)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"%s: zero point %d is outside the %s range %d..%d", fn,
				(int)zero_point, npu_dtype_str(dtype), (int)*qmin, (int)*qmax);
	if (n < 0)
		return npu_fail(NPU_ERR_INVALID_ARG, "%s: negative element count %lld", fn,
				(long long)n);
	if (n > 0 && (!in || !out))
		return npu_fail(NPU_ERR_INVALID_ARG, "%s: %s is NULL", fn, !in ? "in" : "out");
	return NPU_OK;
}

npu_status npu_dequantize(npu_dtype dtype, const void *in, float *out, int64_t n,
			  float scale, int32_t zero_point)
{
	int32_t qmin = 0, qmax = 0;
	npu_status st = check_args("npu_dequantize", dtype, in, out, n, scale, zero_point,
				   &qmin, &qmax);

	if (st != NPU_OK)
		return st;
	if (dtype == NPU_DTYPE_UINT8) {
		const uint8_t *q = in;

		for (int64_t i = 0; i < n; i++)
			out[i] = scale * (float)((int32_t)q[i] - zero_point);
	} else {
		const int8_t *q = in;

		for (int64_t i = 0; i < n; i++)
			out[i] = scale * (float)((int32_t)q[i] - zero_point);
	}
	return NPU_OK;
}

/*
 * Round to nearest, ties to even, independent of fegetround().  @v is
 * finite.  floor() is exact and so is v - floor(v) (for |v| >= 2^23 the
 * float is already an integer and the fraction is 0).
 */
static float round_half_even(float v)
{
	float f = floorf(v), frac = v - f;

	if (frac > 0.5f)
		return f + 1.0f;
	if (frac < 0.5f)
		return f;
	return fmodf(f, 2.0f) == 0.0f ? f : f + 1.0f;
}

/* One value to its code in [qmin, qmax]; see the header for NaN/inf. */
static int32_t quantize_one(float x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax)
{
	float v = x / scale;	/* float32 division, as ONNX specifies */
	float q;

	if (isnan(v))
		return zero_point;
	/* Clamp before any conversion to int: large v would overflow. */
	if (v >= (float)(qmax - zero_point) + 1.0f)
		return qmax;
	if (v <= (float)(qmin - zero_point) - 1.0f)
		return qmin;
	q = round_half_even(v) + (float)zero_point;
	if (q > (float)qmax)
		return qmax;
	if (q < (float)qmin)
		return qmin;
	return (int32_t)q;
}

npu_status npu_quantize(npu_dtype dtype, const float *in, void *out, int64_t n,
			float scale, int32_t zero_point)
{
	int32_t qmin = 0, qmax = 0;
	npu_status st = check_args("npu_quantize", dtype, in, out, n, scale, zero_point,
				   &qmin, &qmax);

	if (st != NPU_OK)
		return st;
	if (dtype == NPU_DTYPE_UINT8) {
		uint8_t *q = out;

		for (int64_t i = 0; i < n; i++)
			q[i] = (uint8_t)quantize_one(in[i], scale, zero_point, qmin, qmax);
	} else {
		int8_t *q = out;

		for (int64_t i = 0; i < n; i++)
			q[i] = (int8_t)quantize_one(in[i], scale, zero_point, qmin, qmax);
	}
	return NPU_OK;
}
