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
	/* Pipelined stages (0: as many as the batch, clusters allow). */
	unsigned stages;
	/* Inputs in flight per stage, their work items interleaved (0: one). */
	unsigned inflight;
	/* Simulated cycles of each layer-by-layer step (npu_profile_run),
	 * to balance pipelined stages; NULL: estimate from FLOPs. */
	const double *step_cycles;
	unsigned nstep_cycles;
	/* Shapes for graph inputs (npu_compile_options.input_shapes). */
	const npu_input_shape *input_shapes;
	size_t n_input_shapes;
	/* Graph inputs fixed to a value (npu_compile_options.input_values). */
	const npu_tensor *input_values;
	size_t n_input_values;
	/*
	 * The folder of the model file, for ONNX external data (tensors whose
	 * bytes live in side files named relative to it); NULL for a model
	 * loaded from memory, which then refuses external data by name.
	 */
	const char *model_dir;
	/*
	 * Generation programs (npu_generation.c): the tensors living in the
	 * NPU_SEG_STATE segment (@state_bytes, kept across runs), by name, at
	 * fixed offsets.  Such a graph input is no I/O slot (nothing the
	 * host writes) and such a graph output is none either (it only keeps
	 * the node writing the state alive).  None: no STATE segment.
	 */
	const struct npu_state_tensor *state;
	unsigned n_state;
	uint64_t state_bytes;
	/*
	 * npu_compile_options.allow_cpu_fallback: a node the NPU cannot run
	 * whose operator has a host implementation (host/npu_host.h) becomes
	 * a host step (compile/lower_host.c) instead of an error.
	 */
	bool allow_cpu_fallback;
	/* A Loop that never stops fails after this many iterations (0: NPU_LOOP_MAX_ITERATIONS_DEFAULT). */
	uint32_t max_loop_iterations;
};

/* A tensor in the NPU_SEG_STATE segment (npu_compile_target.state). */
struct npu_state_tensor {
	const char *name;
	uint64_t offset;	/* 64-byte aligned */
};

/*
 * Give the graph inputs @shapes (@n of them; npu_input_shapes.c): each
 * names a graph input and keeps its declared rank and static dims.
 * NPU_ERR_INVALID_ARG, naming the input and what to change, otherwise.
 */
npu_status npu_apply_input_shapes(npu_ir_graph *g, const npu_input_shape *shapes, size_t n);
/*
 * Turn the graph inputs @values name (@n of them; npu_input_values.c) into
 * constants of those values, dropping them from the inputs: each names a
 * graph input and matches its dtype and (given) shape byte for byte.
 * NPU_ERR_INVALID_ARG, naming the input and what to change, otherwise.
 */
npu_status npu_apply_input_values(npu_ir_graph *g, const npu_tensor *values, size_t n);
/* Parse ONNX @data, give the inputs tgt's shapes, fix tgt's input values
 * (no inference yet): *@out. */
npu_status npu_compile_load(const void *data, size_t size, const struct npu_compile_target *tgt,
			    npu_ir_graph **out);
/* npu_compile_load, then infer shapes: *@out. */
npu_status npu_compile_parse(const void *data, size_t size, const struct npu_compile_target *tgt,
			     npu_ir_graph **out);

/* Lower a shape-inferred graph.  The graph may be rewritten. */
npu_status npu_compile_ir(npu_ir_graph *g, const struct npu_compile_target *tgt,
			  struct npu_cmodel **out);

/*
 * Compile @data for @tgt and run it once, on zeros, on a private emulator
 * of the target's geometry: the simulated cycles of the run (@total) and,
 * if @cycles is not NULL, of each step (malloc'd, *n of them).
 */
npu_status npu_profile_run(const void *data, size_t size, const struct npu_compile_target *tgt,
			   uint64_t *total, double **cycles, unsigned *n);
/* Choose tgt->stages, tgt->inflight and tgt->step_cycles for a batch (npu_profile.c). */
npu_status npu_profile_pipeline(const void *data, size_t size, struct npu_compile_target *tgt,
				double **cycles);

/* Post-training int8, calibrated on opts->calibration_dir (npu_int8.c). */
npu_status npu_int8_compile(const void *data, size_t size, const npu_compile_options *opts,
			    const struct npu_compile_target *tgt, struct npu_cmodel **out);

/*
 * One program of a generation session (issue 16), compiled from a decoder
 * exported "with past" the way Hugging Face exports it: inputs input_ids,
 * attention_mask, position_ids (where present), past_key_values.N.key and
 * .value [batch, kv_heads, past, head_dim]; outputs logits and
 * present.N.key/.value (= Concat(past, new) on the sequence axis).
 *
 * @max_context: positions the KV cache holds (its rows).
 * @tokens: 0 for the decode program (one token against the cache); else a
 *	prefill program of an empty cache for @tokens tokens (a bucket).
 *
 * The compiled program, batch 1, has these I/O tensors, by name:
 * - inputs "input_ids" int64 [1, S] (S = @tokens, or 1 for decode);
 *   "attention_mask" int64 [1, S] for prefill, [1, @max_context] for
 *   decode (1 at cache rows holding a token, 0 elsewhere), if the model
 *   has it; "position_ids" int64 [1, S], if the model has it;
 *   "npu.kv_rows" int32 [S]: the cache rows the S new K/V rows go to
 *   (prefill: 0..S-1; decode: the next free row, < @max_context; a row
 *   out of range ends the run with an error, nothing is written);
 * - outputs "logits" float32 [1, S, vocab] and "npu.argmax" int64 [1, S]
 *   (ArgMax of each logits row, on the device: greedy sampling);
 *   the present.* outputs are not outputs of the program.
 * - one NPU_SEG_STATE segment, the KV cache: for each layer N in order,
 *   key then value, each [1, kv_heads, @max_context, head_dim] in the
 *   past input's dtype, row-major, 64-byte aligned; the same layout for
 *   every @tokens of the same model and @max_context.
 * The decode program reads the whole cache with the mask hiding rows not
 * yet written; each program writes only its new rows in place.
 */
struct npu_gen_program {
	unsigned max_context;
	unsigned tokens;
};

npu_status npu_compile_generation(const void *data, size_t size,
				  const struct npu_compile_target *tgt,
				  const struct npu_gen_program *prog,
				  struct npu_cmodel **out);

#endif /* NPU_COMPILE_H */
