// SPDX-License-Identifier: MIT
/*
 * Shape rules of ONNX's quantization operators (onnx/defs/quantization):
 * QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear.  Constant
 * scales and zero points are attached to the tensors they describe
 * (npu_ir_quant).
 */
#include "ir/shape_util.h"

npu_status npu_ir_shape_quantize(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *s, *zp = in(g, n, 2);
	int64_t axis = 1, block = 0, odt = 0;
	npu_dtype dt = zp ? zp->dtype : NPU_DTYPE_UINT8;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &s);
	if (!st)
		st = npu_ir_attr_int(n, "axis", 1, &axis);
	if (!st)
		st = npu_ir_attr_int(n, "block_size", 0, &block);
	if (!st)
		st = npu_ir_attr_int(n, "output_dtype", 0, &odt);
	if (st)
		return st;
	if (block)
		return npu_sh_err(n, NPU_ERR_UNSUPPORTED, "blocked quantization is not supported");
	if (odt && !zp)
		dt = (npu_dtype)odt;
	if (!is_q8(dt) && dt != NPU_DTYPE_INT32)
		return npu_sh_err(n, NPU_ERR_UNSUPPORTED, "quantization to %s is not supported", dts(dt));
	if (npu_ir_numel(s) > 1) {
		int a = 0;

		st = npu_sh_axis(n, axis, x->rank, &a);
		if (!st && (s->rank != 1 || s->dims[0] != x->dims[a]))
			st = npu_sh_err(n, NPU_ERR_SHAPE, "per-axis scale '%s' must have %" PRId64 " values",
					s->name, x->dims[a]);
		if (st)
			return st;
	}
	st = npu_sh_set_out(g, n, 0, dt, x->rank, x->dims);
	if (!st)
		st = npu_sh_note_quant(npu_ir_output(g, n, 0), s, zp, axis);
	return st;
}

npu_status npu_ir_shape_dequantize(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *s, *zp = in(g, n, 2);
	int64_t axis = 1, block = 0;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &s);
	if (!st)
		st = npu_ir_attr_int(n, "axis", 1, &axis);
	if (!st)
		st = npu_ir_attr_int(n, "block_size", 0, &block);
	if (!st && zp)
		st = npu_sh_same_dtype(n, x, zp);
	if (st)
		return st;
	if (block)
		return npu_sh_err(n, NPU_ERR_UNSUPPORTED, "blocked quantization is not supported");
	if (!is_float(s->dtype))
		return npu_sh_err(n, NPU_ERR_SHAPE, "scale '%s' must be a float type", s->name);
	if (npu_ir_numel(s) > 1) {
		int a = 0;

		st = npu_sh_axis(n, axis, x->rank, &a);
		if (!st && (s->rank != 1 || s->dims[0] != x->dims[a]))
			st = npu_sh_err(n, NPU_ERR_SHAPE, "per-axis scale '%s' must have %" PRId64 " values",
					s->name, x->dims[a]);
		if (st)
			return st;
	}
	st = npu_sh_set_out(g, n, 0, n->opset >= 19 ? s->dtype : NPU_DTYPE_FLOAT32, x->rank,
			    x->dims);
	if (!st)
		st = npu_sh_note_quant(x, s, zp, axis);
	return st;
}

/* DynamicQuantizeLinear: y (uint8, like x), y_scale (float), y_zero_point (uint8). */
npu_status npu_ir_shape_dyn_quant(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_float(n, x);
	if (!st)
		st = npu_sh_set_out(g, n, 0, NPU_DTYPE_UINT8, x->rank, x->dims);
	if (!st)
		st = npu_sh_set_out(g, n, 1, NPU_DTYPE_FLOAT32, 0, NULL);
	if (!st)
		st = npu_sh_set_out(g, n, 2, NPU_DTYPE_UINT8, 0, NULL);
	return st;
}
