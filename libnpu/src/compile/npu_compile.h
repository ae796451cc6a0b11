/* SPDX-License-Identifier: MIT */
/* Entry points of the compiler. */
#ifndef NPU_COMPILE_H
#define NPU_COMPILE_H

#include "ir/npu_ir.h"
#include "model/npu_cmodel.h"
#include "npu.h"

/* What to compile for: the partition the programs will run on. */
struct npu_compile_target {
	unsigned clusters;	/* logical clusters */
	unsigned tpbs;		/* TPBs per cluster */
	unsigned hbsm_size;	/* bytes of HBSM per TPB */
	unsigned precision;	/* enum npu_precision */
	unsigned batch;		/* inputs per run (0 or 1: one, layer by layer) */
};

/* Lower a shape-inferred graph.  The graph may be rewritten. */
npu_status npu_compile_ir(npu_ir_graph *g, const struct npu_compile_target *tgt,
			  struct npu_cmodel **out);

/* Post-training int8, calibrated on opts->calibration_dir (npu_int8.c). */
npu_status npu_int8_compile(const void *data, size_t size, const npu_compile_options *opts,
			    const struct npu_compile_target *tgt, struct npu_cmodel **out);

#endif /* NPU_COMPILE_H */
