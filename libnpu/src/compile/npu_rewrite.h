/* SPDX-License-Identifier: MIT */
/* Graph rewrites that turn operators without a lowering into ones with. */
#ifndef NPU_REWRITE_H
#define NPU_REWRITE_H

#include "ir/npu_ir.h"

/*
 * On a shape-inferred graph: Resize/Upsample, ConvTranspose, and
 * LayerNormalization's Mean/InvStdDev outputs become supported operators
 * (npu_rewrite.c).  Nodes it cannot rewrite stay as they are.
 */
npu_status npu_rewrite(npu_ir_graph *g);

#endif /* NPU_REWRITE_H */
