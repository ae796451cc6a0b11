/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the shape rules (shape_*.c), internal to ir/: errors
 * that name the node, dtype predicates, input and rank checks, outputs set
 * against what the model declares, constant operands and broadcasting.
 */
#ifndef NPU_SHAPE_UTIL_H
#define NPU_SHAPE_UTIL_H

#include <inttypes.h>

#include "ir/npu_ir.h"
#include "ir/npu_ir_rules.h"

/* Fail with @s: "node 'conv1' (Conv): <message>". */
npu_status npu_sh_err(const npu_ir_node *n, npu_status s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline bool is_float(npu_dtype t)
{
	return t == NPU_DTYPE_FLOAT32 || t == NPU_DTYPE_FLOAT16 || t == NPU_DTYPE_BFLOAT16 ||
	       t == NPU_DTYPE_FLOAT64;
}

/* The wide integers (int8 and uint8 are is_q8()); the NPU computes them as int32. */
static inline bool is_int(npu_dtype t)
{
	return t == NPU_DTYPE_INT32 || t == NPU_DTYPE_INT64 || t == NPU_DTYPE_UINT32 ||
	       t == NPU_DTYPE_UINT64 || t == NPU_DTYPE_INT16 || t == NPU_DTYPE_UINT16;
}

static inline bool is_q8(npu_dtype t)
{
	return t == NPU_DTYPE_INT8 || t == NPU_DTYPE_UINT8;
}

/* The dtype's name for messages, "unknown" for 0. */
static inline const char *dts(npu_dtype t)
{
	return t ? npu_dtype_str(t) : "unknown";
}

/* Input @i of @n, NULL if absent or omitted. */
static inline npu_ir_tensor *in(const npu_ir_graph *g, const npu_ir_node *n, int i)
{
	return npu_ir_input(g, n, i);
}

/* Input @i into *@out, or NPU_ERR_FORMAT when it is missing. */
npu_status npu_sh_need_in(const npu_ir_graph *g, const npu_ir_node *n, int i,
			  npu_ir_tensor **out);
/* NPU_ERR_SHAPE unless @t is float32, float16 or bfloat16. */
npu_status npu_sh_need_float(const npu_ir_node *n, const npu_ir_tensor *t);
npu_status npu_sh_same_dtype(const npu_ir_node *n, const npu_ir_tensor *a,
			     const npu_ir_tensor *b);
/* NPU_ERR_SHAPE unless @lo <= rank <= @hi. */
npu_status npu_sh_need_rank(const npu_ir_node *n, const npu_ir_tensor *t, int lo, int hi);
/* @axis in -rank..rank-1 made non-negative into *@out. */
npu_status npu_sh_axis(const npu_ir_node *n, int64_t axis, int rank, int *out);

/*
 * Set output @i's dtype and shape (an absent output is fine), failing if
 * the model declares another or a dimension is out of range.
 */
npu_status npu_sh_set_out(npu_ir_graph *g, const npu_ir_node *n, int i, npu_dtype dtype,
			  int rank, const int64_t *dims);
/* Output @i like tensor @x. */
/*
 * Node @n reads a tensor of run-time size: mark which dims of its outputs
 * are too (npu_ir_tensor.dyn; shape_dyn.c).
 */
void npu_ir_dyn_outputs(npu_ir_graph *g, const npu_ir_node *n);
/*
 * Output @i of a node whose size is known only at run time (issue 17):
 * @dims the bound, @dyn the dims the run decides (npu_ir_tensor.dyn);
 * the model's declared dims are not checked against the bound.
 */
npu_status npu_sh_set_dyn_out(npu_ir_graph *g, const npu_ir_node *n, int i, npu_dtype dtype,
			      int rank, const int64_t *dims, uint16_t dyn);
npu_status npu_sh_set_like(npu_ir_graph *g, const npu_ir_node *n, int i,
			   const npu_ir_tensor *x);

/*
 * Input @i as a constant int (float) list of at most @cap values: when it
 * is computed at run time, g->need_const names it and NPU_ERR_SHAPE says
 * the output shape would not be static.
 */
npu_status npu_sh_const_ints(npu_ir_graph *g, const npu_ir_node *n, int i,
			     int64_t *vals, int cap, int *count);
npu_status npu_sh_const_floats(npu_ir_graph *g, const npu_ir_node *n, int i,
			       float *vals, int cap, int *count);
/*
 * An "axes"-like list of at most 2 * NPU_MAX_RANK values: attribute @attr
 * below opset @input_since, input @input (if present) from it on.
 * *@count = -1 when absent.
 */
npu_status npu_sh_axes_list(npu_ir_graph *g, const npu_ir_node *n, const char *attr,
			    int input, int input_since, int64_t *vals, int *count);

/* Numpy broadcast of @a and @b into @dims / *@rank. */
npu_status npu_sh_broadcast(const npu_ir_node *n, const npu_ir_tensor *a,
			    const npu_ir_tensor *b, int64_t *dims, int *rank);
/* NPU_ERR_SHAPE unless @b broadcasts to @a's shape (unidirectional). */
npu_status npu_sh_broadcast_to(const npu_ir_node *n, const npu_ir_tensor *b,
			       const npu_ir_tensor *a);

/*
 * Attach the constant @scale / @zp (may be NULL) pair to @t's quant (per
 * channel along @axis when @scale has more than one value); nothing when
 * @t already has one or the pair is not constant or does not fit.
 */
npu_status npu_sh_note_quant(npu_ir_tensor *t, const npu_ir_tensor *scale,
			     const npu_ir_tensor *zp, int64_t axis);

#endif /* NPU_SHAPE_UTIL_H */
