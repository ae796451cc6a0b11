/* SPDX-License-Identifier: MIT */
/* The public npu_model handle: a compiled model. */
#ifndef NPU_MODEL_PRIV_H
#define NPU_MODEL_PRIV_H

#include "model/npu_cmodel.h"

struct npu_model {
	struct npu_cmodel *cm;
};

/* Compile an ONNX model (libnpu/src/compile). */
npu_status npu_compile_onnx(const void *data, size_t size, npu_device *dev,
			    const npu_compile_options *opts,
			    struct npu_cmodel **out);

#endif /* NPU_MODEL_PRIV_H */
