/* SPDX-License-Identifier: MIT */
/*
 * Type narrowing (npu_narrow.c): the NPU's integer type is int32 and its
 * widest float float32, so every int64, uint64, uint32, int16, uint16
 * and float64 tensor computed at run time is computed as int32 or float32
 * on the device.  Runs after shape inference, before the rewrites.
 */
#ifndef NPU_NARROW_H
#define NPU_NARROW_H

#include <stdbool.h>

#include "ir/npu_ir.h"

/*
 * Compute every tensor of @g of a type the NPU lacks in the type
 * npu_dtype_device() names.  int64: every int64 tensor that is computed
 * at run time (graph inputs included) becomes int32; Cast to int64
 * becomes Cast to int32 (an Identity when its input is int32 already); a
 * constant int64 tensor that is a run-time operand of a node computing
 * int64 data (Add, Equal, Concat, Where's values, Gather's table ...) is
 * replaced by an int32 copy, NPU_ERR_UNSUPPORTED naming it when a value
 * does not fit; constants read at compile time (shapes, axes, Slice
 * bounds, Gather's constant indices) stay int64.  float64 (as float32),
 * uint64, uint32, int16 and uint16 (as int32): every live tensor, its
 * constants converted in place (NPU_ERR_UNSUPPORTED naming a value that
 * does not fit), Casts to them cast to the device type.
 *
 * *@boundary gets a malloc'd array of *@nboundary dtypes by tensor id:
 * for a graph input or output of such a type its type (the device slot
 * holds the device type), else 0; NULL when nothing changed: a graph
 * without such tensors is left untouched.  *@notes gets a malloc'd text,
 * one line per type other than int64 naming the tensors and nodes that
 * compute in another type, or NULL.
 */
npu_status npu_narrow_types(npu_ir_graph *g, npu_dtype **boundary, int *nboundary,
			    char **notes);

/*
 * An int32 copy of int64 constant @t in *@copy (a new constant named
 * after it); NPU_ERR_UNSUPPORTED naming @t and @what (who reads it) when
 * a value lies outside int32.
 */
npu_status npu_narrow_const(npu_ir_graph *g, int t, const char *what, int *copy);

#endif /* NPU_NARROW_H */
