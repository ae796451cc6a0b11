/* SPDX-License-Identifier: MIT */
/*
 * int64 narrowing (npu_narrow.c): the NPU's integer type is int32, so
 * every int64 tensor computed at run time is computed as int32 on the
 * device.  Runs after shape inference, before the rewrites.
 */
#ifndef NPU_NARROW_H
#define NPU_NARROW_H

#include <stdbool.h>

#include "ir/npu_ir.h"

/*
 * Make every int64 tensor of @g that is computed at run time (graph
 * inputs included) int32; Cast to int64 becomes Cast to int32 (an
 * Identity when its input is int32 already); a constant int64 tensor
 * that is a run-time operand of a node computing int64 data (Add, Equal,
 * Concat, Where's values, Gather's table ...) is replaced by an int32
 * copy, NPU_ERR_UNSUPPORTED naming it when a value does not fit.
 * Constants read at compile time (shapes, axes, Slice bounds, Gather's
 * constant indices) stay int64.  *@wide gets a malloc'd array of
 * *@nwide flags by tensor id, set for the graph inputs and outputs that
 * are int64 (their device slots are int32), or NULL when there are none:
 * a graph without int64 tensors computed at run time is left untouched.
 */
npu_status npu_narrow_int64(npu_ir_graph *g, bool **wide, int *nwide);

/*
 * An int32 copy of int64 constant @t in *@copy (a new constant named
 * after it); NPU_ERR_UNSUPPORTED naming @t and @what (who reads it) when
 * a value lies outside int32.
 */
npu_status npu_narrow_const(npu_ir_graph *g, int t, const char *what, int *copy);

#endif /* NPU_NARROW_H */
