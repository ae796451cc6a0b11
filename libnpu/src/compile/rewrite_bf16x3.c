// SPDX-License-Identifier: MIT
/*
 * Three bf16 products for one fp32 product (issue 17), shared by the
 * rewrites that need more than the TCU's bf16 operands give: the DFT and
 * STFT bases (rewrite_signal.c) and a Conv whose result a Log reads
 * through a magnitude, or every float Conv at NPU_PRECISION_BF16X3
 * (rewrite_precision.c).
 *
 * Each operand is split into its bf16 head and the rest, x = xh + xl and
 * w = wh + wl (xh = bf16(x) rounded to nearest even as the TCU rounds,
 * xl = x - xh exact in fp32), so x w = xh wh + xh wl + xl wh + xl wl; the
 * last term is 2^-16 of the product and dropped.  The three kept products
 * are one product over three times the reduced axis: the run-time operand
 * as Concat(x, x, xl) against the constant as (wh, wl, wh) stacked the
 * same way, summed by the TCU in fp32 (x itself in the first two blocks:
 * the TCU rounds it to xh).  Error about 2^-17 of the terms instead of
 * 2^-9, for three times the MACs and one CVU pass over x.
 */
#include <string.h>

#include "compile/npu_rewrite_priv.h"

void npu_rw_bf16x3_split(float v, float *hi, float *lo)
{
	*hi = npu_ir_bf16_to_f32(npu_ir_f32_to_bf16(v));
	*lo = v - *hi;
}

npu_status npu_rw_bf16x3_operand(npu_ir_graph *g, const char *name, int x, int axis, int *x3)
{
	const npu_ir_tensor *t = &g->tensors[x];
	int64_t dims[NPU_MAX_RANK];
	int rank = t->rank, xb, xh, xl, kc;
	npu_status st;

	memcpy(dims, t->dims, sizeof(dims));
	if ((st = npu_rw_tensor(g, NPU_DTYPE_BFLOAT16, rank, dims, &xb)) ||
	    (st = npu_rw_op(g, "Cast", 13, name, &x, 1, &xb, 1, &kc)) ||
	    (st = npu_ir_set_attr_int(&g->nodes[kc], "to", NPU_DTYPE_BFLOAT16)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, rank, dims, &xh)) ||
	    (st = npu_rw_op(g, "Cast", 13, name, &xb, 1, &xh, 1, &kc)) ||
	    (st = npu_ir_set_attr_int(&g->nodes[kc], "to", NPU_DTYPE_FLOAT32)) ||
	    (st = npu_rw_binary(g, "Sub", 14, name, x, xh, -1, &xl)))
		return st;
	dims[axis] *= 3;
	return npu_rw_concat(g, name, (int[]){ x, x, xl }, 3, axis, rank, dims, -1, x3);
}
