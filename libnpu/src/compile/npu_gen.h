/* SPDX-License-Identifier: MIT */
/*
 * Generation programs (issue 16): the graph surgery that turns a decoder
 * exported "with past" into a prefill or decode program against a KV cache
 * in the NPU_SEG_STATE segment (rewrite_kvcache.c), used by
 * npu_compile_generation() (npu_generation.c).
 */
#ifndef NPU_GEN_H
#define NPU_GEN_H

#include "compile/npu_compile.h"

/* Names of the tensors the surgery adds (the program's I/O contract). */
#define NPU_GEN_KV_ROWS		"npu.kv_rows"
#define NPU_GEN_ARGMAX		"npu.argmax"
#define NPU_GEN_CACHE_FMT	"npu.kv_cache.%d.%s"	/* layer, "key" or "value" */

/* The KV cache the surgery made: the state tensors and their layout. */
struct npu_kv_cache {
	int layers;
	struct npu_state_tensor *state;	/* names owned */
	unsigned n_state;
	uint64_t bytes;			/* the NPU_SEG_STATE segment */
	int *past;			/* the past_key_values.* inputs, 2 per layer */
	int n_past;
};

/*
 * Before shape inference: give the inputs the program's shapes, replace
 * each present.N.* = Concat(past, new) by npu.ScatterRows(cache, kv_rows,
 * new) in place in the cache (a new graph input in the state), add
 * npu.kv_rows and npu.argmax, and drop the present.* outputs (prefill
 * keeps them as state outputs so the writes stay alive).  Fails, saying
 * what to do, on a model not exported with past or not of that form.
 */
npu_status npu_kvcache_rewrite(npu_ir_graph *g, const struct npu_gen_program *prog,
			       struct npu_kv_cache *kv);
/*
 * After shape inference: the past inputs must be unused now (their Shape
 * folded); drop them from the graph inputs, else refuse naming the reader.
 */
npu_status npu_kvcache_finish(npu_ir_graph *g, struct npu_kv_cache *kv);
void npu_kvcache_free(struct npu_kv_cache *kv);

#endif /* NPU_GEN_H */
