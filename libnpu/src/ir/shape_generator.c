// SPDX-License-Identifier: MIT
/*
 * Shape rules of ONNX's generators (onnx/defs/generator): ConstantOfShape,
 * Range and EyeLike, whose outputs depend on constant operands or only on
 * shapes; and the signal generators of opset 17 (HannWindow,
 * HammingWindow, BlackmanWindow, MelWeightMatrix), whose sizes are
 * constant operands.
 */
#include <math.h>

#include "ir/shape_util.h"

npu_status npu_ir_shape_constant_of_shape(npu_ir_graph *g, npu_ir_node *n)
{
	const npu_ir_tensor *v;
	int64_t dims[NPU_MAX_RANK * 2];
	int r = 0;
	npu_status st;

	if (!in(g, n, 0))
		return npu_sh_err(n, NPU_ERR_FORMAT, "input 0 is missing");
	st = npu_sh_const_ints(g, n, 0, dims, NPU_MAX_RANK * 2, &r);
	if (!st)
		st = npu_ir_attr_tensor(n, "value", &v);
	if (st)
		return st;
	if (in(g, n, 0)->rank != 1)
		return npu_sh_err(n, NPU_ERR_SHAPE, "the shape input must be 1-D");
	if (v && npu_ir_numel(v) != 1)
		return npu_sh_err(n, NPU_ERR_FORMAT, "attribute 'value' must hold one element");
	if (r > NPU_MAX_RANK)
		return npu_sh_err(n, NPU_ERR_UNSUPPORTED, "output rank %d exceeds %d", r, NPU_MAX_RANK);
	return npu_sh_set_out(g, n, 0, v ? v->dtype : NPU_DTYPE_FLOAT32, r, dims);
}

npu_status npu_ir_shape_range(npu_ir_graph *g, npu_ir_node *n)
{
	float fv[3];
	int64_t iv[3], len;
	npu_ir_tensor *x;
	double count;
	int c;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	for (int i = 0; !st && i < 3; i++) {
		npu_ir_tensor *t;

		st = npu_sh_need_in(g, n, i, &t);
		if (!st)
			st = npu_sh_same_dtype(n, x, t);
		if (!st && npu_ir_numel(t) != 1)
			st = npu_sh_err(n, NPU_ERR_SHAPE, "input '%s' must be a scalar", t->name);
		if (!st && is_float(t->dtype))
			st = npu_sh_const_floats(g, n, i, &fv[i], 1, &c);
		else if (!st)
			st = npu_sh_const_ints(g, n, i, &iv[i], 1, &c);
	}
	if (st)
		return st;
	if (is_float(x->dtype))
		count = ceil(((double)fv[1] - fv[0]) / fv[2]);
	else if (iv[2] == 0)
		count = NAN;
	else
		count = ceil(((double)iv[1] - (double)iv[0]) / (double)iv[2]);
	if (isnan(count) || count > (double)NPU_IR_DIM_MAX)
		return npu_sh_err(n, NPU_ERR_SHAPE, "the range has too many or undefined elements");
	len = count > 0 ? (int64_t)count : 0;
	return npu_sh_set_out(g, n, 0, x->dtype, 1, &len);
}

/* EyeLike: x's 2-D shape; dtype from the attribute, else x's. */
npu_status npu_ir_shape_eye_like(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t dt = 0;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_ir_attr_int(n, "dtype", 0, &dt);
	if (st)
		return st;
	if (x->rank != 2)
		return npu_sh_err(n, NPU_ERR_SHAPE, "the input must be 2-D");
	if (dt && !npu_dtype_size((npu_dtype)dt))
		return npu_sh_err(n, NPU_ERR_UNSUPPORTED, "dtype %" PRId64 " is not supported", dt);
	return npu_sh_set_out(g, n, 0, dt ? (npu_dtype)dt : x->dtype, 2, x->dims);
}

/* output_datatype: a numeric dtype libnpu knows, float32 by default. */
static npu_status signal_dtype(const npu_ir_node *n, npu_dtype *dt)
{
	int64_t v = NPU_DTYPE_FLOAT32;
	npu_status st = npu_ir_attr_int(n, "output_datatype", NPU_DTYPE_FLOAT32, &v);

	if (st)
		return st;
	if (v <= 0 || v > 255 || !npu_dtype_size((npu_dtype)v) || v == NPU_DTYPE_BOOL)
		return npu_sh_err(n, NPU_ERR_UNSUPPORTED,
				  "output_datatype %" PRId64 " is not a numeric type libnpu supports", v);
	*dt = (npu_dtype)v;
	return NPU_OK;
}

/* A scalar constant int input @i > 0 (a size). */
static npu_status signal_size(npu_ir_graph *g, const npu_ir_node *n, int i, int64_t lo,
			      int64_t *v)
{
	int c = 0;
	npu_status st;

	if (!in(g, n, i))
		return npu_sh_err(n, NPU_ERR_FORMAT, "input %d is missing", i);
	st = npu_sh_const_ints(g, n, i, v, 1, &c);
	if (st)
		return st;
	if (c != 1 || *v < lo || *v > NPU_IR_DIM_MAX)
		return npu_sh_err(n, NPU_ERR_SHAPE, "input '%s' must be one integer >= %" PRId64,
				  in(g, n, i)->name, lo);
	return NPU_OK;
}

/* HannWindow, HammingWindow, BlackmanWindow: size -> [size]. */
npu_status npu_ir_shape_window(npu_ir_graph *g, npu_ir_node *n)
{
	npu_dtype dt = NPU_DTYPE_FLOAT32;
	int64_t size;
	npu_status st = signal_dtype(n, &dt);

	if (!st)
		st = signal_size(g, n, 0, 0, &size);
	return st ? st : npu_sh_set_out(g, n, 0, dt, 1, &size);
}

/* MelWeightMatrix: [floor(dft_length / 2) + 1, num_mel_bins]. */
npu_status npu_ir_shape_mel_weight(npu_ir_graph *g, npu_ir_node *n)
{
	npu_dtype dt = NPU_DTYPE_FLOAT32;
	int64_t dims[2], mel, dft;
	npu_status st = signal_dtype(n, &dt);

	if (!st)
		st = signal_size(g, n, 0, 1, &mel);
	if (!st)
		st = signal_size(g, n, 1, 1, &dft);
	/* The matrix folds only when every operand is known: say which is not. */
	for (int i = 2; !st && i < 5; i++) {
		int64_t iv;
		float fv;
		int c = 0;

		if (!in(g, n, i) || npu_ir_numel(in(g, n, i)) != 1)
			return npu_sh_err(n, NPU_ERR_FORMAT, "input %d must be a scalar", i);
		st = i == 2 ? npu_sh_const_ints(g, n, i, &iv, 1, &c) :
		     npu_sh_const_floats(g, n, i, &fv, 1, &c);
	}
	if (st)
		return st;
	dims[0] = dft / 2 + 1;
	dims[1] = mel;
	return npu_sh_set_out(g, n, 0, dt, 2, dims);
}
