// SPDX-License-Identifier: MIT
/*
 * Shape rules of the spectral operators of opset 17: DFT (a signal
 * [batch, ..., N, 1 or 2] to its spectrum [batch, ..., K, 2] along one
 * axis) and STFT (frames of a signal [batch, length, 1 or 2] to
 * [batch, frames, K, 2]).  Their sizes come from constant operands
 * (dft_length, frame_step, frame_length); compile/rewrite_signal.c turns
 * them into a MatMul or a Conv with a constant cos/sin basis.
 */
#include "ir/shape_util.h"

/* Scalar constant int input @i (absent: *@v = @def); > 0. */
static npu_status opt_size(npu_ir_graph *g, const npu_ir_node *n, int i, int64_t def,
			   int64_t *v)
{
	int c = 0;
	npu_status st;

	*v = def;
	if (!in(g, n, i))
		return NPU_OK;
	st = npu_sh_const_ints(g, n, i, v, 1, &c);
	if (st)
		return st;
	if (c != 1 || *v < 1 || *v > NPU_IR_DIM_MAX)
		return npu_sh_err(n, NPU_ERR_SHAPE, "input '%s' must be one integer >= 1",
				  in(g, n, i)->name);
	return NPU_OK;
}

/* The signal's last dim: 1 (real) or 2 (complex). */
static npu_status signal_in(const npu_ir_graph *g, const npu_ir_node *n, int lo_rank,
			    npu_ir_tensor **x)
{
	npu_status st = npu_sh_need_in(g, n, 0, x);

	if (!st)
		st = npu_sh_need_float(n, *x);
	if (!st)
		st = npu_sh_need_rank(n, *x, lo_rank, NPU_MAX_RANK);
	if (!st && (*x)->dims[(*x)->rank - 1] != 1 && (*x)->dims[(*x)->rank - 1] != 2)
		return npu_sh_err(n, NPU_ERR_SHAPE,
				  "the signal's last dim must be 1 (real) or 2 (complex), not %" PRId64,
				  (*x)->dims[(*x)->rank - 1]);
	return st;
}

/*
 * DFT's axis: the attribute (default 1) up to opset 19, from opset 20 the
 * optional third input (default -2), which must be a constant.
 */
npu_status npu_ir_dft_axis(npu_ir_graph *g, const npu_ir_node *n, int64_t *axis)
{
	int c = 0;

	if (n->opset < 20)
		return npu_ir_attr_int(n, "axis", 1, axis);
	*axis = -2;
	if (!in(g, n, 2))
		return NPU_OK;
	return npu_sh_const_ints(g, n, 2, axis, 1, &c);
}

npu_status npu_ir_shape_dft(npu_ir_graph *g, npu_ir_node *n)
{
	int64_t axis = 1, onesided = 0, len, dims[NPU_MAX_RANK];
	npu_ir_tensor *x;
	int a;
	npu_status st = signal_in(g, n, 3, &x);

	if (!st)
		st = npu_ir_dft_axis(g, n, &axis);
	if (!st)
		st = npu_ir_attr_int(n, "onesided", 0, &onesided);
	if (!st)
		st = npu_sh_axis(n, axis, x->rank, &a);
	if (st)
		return st;
	if (a == 0 || a == x->rank - 1)
		return npu_sh_err(n, NPU_ERR_SHAPE,
				  "axis %" PRId64 " is the batch or the real/imaginary axis", axis);
	if ((st = opt_size(g, n, 1, x->dims[a], &len)))
		return st;
	for (int i = 0; i < x->rank; i++)
		dims[i] = x->dims[i];
	dims[a] = onesided ? len / 2 + 1 : len;
	dims[x->rank - 1] = 2;
	return npu_sh_set_out(g, n, 0, x->dtype, x->rank, dims);
}

npu_status npu_ir_shape_stft(npu_ir_graph *g, npu_ir_node *n)
{
	int64_t onesided = 1, step, flen, wlen = -1, dims[4];
	npu_ir_tensor *x, *w = in(g, n, 2);
	npu_status st = signal_in(g, n, 3, &x);

	if (!st && x->rank != 3)
		return npu_sh_err(n, NPU_ERR_SHAPE, "the signal must be [batch, length, 1 or 2]");
	if (!st)
		st = npu_ir_attr_int(n, "onesided", 1, &onesided);
	if (!st)
		st = opt_size(g, n, 1, 0, &step);
	if (st)
		return st;
	if (!in(g, n, 1))
		return npu_sh_err(n, NPU_ERR_FORMAT, "frame_step is missing");
	if (w && w->rank != 1)
		return npu_sh_err(n, NPU_ERR_SHAPE, "the window must be 1-D");
	if (w)
		wlen = w->dims[0];
	if ((st = opt_size(g, n, 3, wlen, &flen)))
		return st;
	if (flen < 1)
		return npu_sh_err(n, NPU_ERR_SHAPE, "neither a window nor frame_length gives the frame length");
	if (w && wlen != flen)
		return npu_sh_err(n, NPU_ERR_SHAPE, "the window has %" PRId64 " values, frame_length is %" PRId64,
				  wlen, flen);
	if (flen > x->dims[1])
		return npu_sh_err(n, NPU_ERR_SHAPE, "frame_length %" PRId64 " exceeds the signal's %" PRId64 " samples",
				  flen, x->dims[1]);
	dims[0] = x->dims[0];
	dims[1] = (x->dims[1] - flen) / step + 1;
	dims[2] = onesided ? flen / 2 + 1 : flen;
	dims[3] = 2;
	return npu_sh_set_out(g, n, 0, x->dtype, 4, dims);
}
