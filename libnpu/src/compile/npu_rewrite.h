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

/*
 * On a shape-inferred graph: Resize/Upsample, ConvTranspose, and
 * LayerNormalization's Mean/InvStdDev outputs become supported operators
 * (npu_rewrite.c).  Nodes it cannot rewrite stay as they are.
 */
npu_status npu_rewrite(npu_ir_graph *g);

#endif /* NPU_REWRITE_H */
