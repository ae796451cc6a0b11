/* SPDX-License-Identifier: MIT */
/* Graph rewrites that turn operators without a lowering into ones with. */
#ifndef NPU_REWRITE_H
#define NPU_REWRITE_H

#include <stdbool.h>

#include "ir/npu_ir.h"

/*
 * One rewrite of node @k of a shape-inferred graph: *@applied = true
 * exactly when it changed the graph (npu_rewrite_priv.h has the contract).
 */
typedef npu_status (*npu_rewrite_fn)(npu_ir_graph *g, int k, bool *applied);

/* Most rewrites one operator has. */
#define NPU_REWRITE_FNS_MAX 4

/*
 * On a shape-inferred graph: Resize/Upsample, ConvTranspose, and
 * LayerNormalization's Mean/InvStdDev outputs become supported operators
 * (npu_rewrite.c), the rewrites applied until none applies any more.
 * Nodes it cannot rewrite stay as they are.
 */
npu_status npu_rewrite(npu_ir_graph *g);

/*
 * Called after every rewrite that applied: @op's rewrite number @fn (its
 * place in that operator's list) on node @n, which it may have marked
 * dead.  @n is valid until the next change to the graph.
 */
typedef void (*npu_rewrite_hook)(void *arg, const char *op, int fn, const npu_ir_node *n);

/* npu_rewrite() telling @hook (when not NULL) which rewrites fired. */
npu_status npu_rewrite_hooked(npu_ir_graph *g, npu_rewrite_hook hook, void *arg);

/*
 * NPU_PRECISION_BF16X3: mark every Conv so that its rewrite computes it as
 * three bf16 products (rewrite_precision.c), not only those feeding a Log.
 */
npu_status npu_rewrite_want_bf16x3(npu_ir_graph *g);

#endif /* NPU_REWRITE_H */
