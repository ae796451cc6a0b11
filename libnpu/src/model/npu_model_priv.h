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

/*
 * A context for @model on @share's partition, queue and address space,
 * its NPU_SEG_STATE segments bound to @share's (same sizes, else
 * NPU_ERR_INTERNAL): the programs of one generation session run on one
 * partition and see one KV cache.  @share must outlive it; runs of the
 * two are serialised by the caller.
 */
npu_status npu_context_create_shared(const npu_model *model, npu_context *share,
				     npu_context **out);

/*
 * The host view of @ctx's @k-th NPU_SEG_STATE segment (a generation
 * session's KV cache, shared with its owner's): for tests and tools that
 * check the cache's layout.  NPU_ERR_NOT_FOUND if it has none.
 */
npu_status npu_context_state(const npu_context *ctx, unsigned k, void **host, size_t *bytes);

#endif /* NPU_MODEL_PRIV_H */
