// SPDX-License-Identifier: MIT
/*
 * npu_compile_generation(): one program of a generation session (issue
 * 16), prefill or decode, from a decoder exported with past.  The contract
 * of the programs is in npu_compile.h; the graph surgery in
 * rewrite_kvcache.c; the KV cache's homes in the NPU_SEG_STATE segment are
 * placed by npu_compile_ir() from npu_compile_target.state.
 */
#include <stdio.h>
#include <string.h>

#include "compile/npu_gen.h"
#include "compile/npu_ops.h"

npu_status npu_compile_generation(const void *data, size_t size,
				  const struct npu_compile_target *tgt,
				  const struct npu_gen_program *prog,
				  struct npu_cmodel **out)
{
	struct npu_compile_target t;
	struct npu_kv_cache kv = { 0 };
	npu_ir_graph *g = NULL;
	npu_status st;
	char what[64];

	if (!out)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_compile_generation: NULL out");
	*out = NULL;
	if (!data || !tgt || !prog)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_compile_generation: NULL argument");
	if (prog->max_context < 2)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"a KV cache of %u positions: a generation session needs at least 2 (--max-context)",
				prog->max_context);
	if (prog->tokens > prog->max_context)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"a prefill of %u tokens does not fit a KV cache of %u positions: raise --max-context or use a smaller bucket",
				prog->tokens, prog->max_context);
	if (tgt->precision == NPU_PRECISION_INT8)
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"int8 precision is not available for generation programs: compile them in bf16");
	if (tgt->n_input_shapes)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"a generation program sets its input shapes itself (from --max-context and the bucket): give no input shapes");
	if (prog->tokens)
		snprintf(what, sizeof(what), "prefill of %u tokens", prog->tokens);
	else
		snprintf(what, sizeof(what), "decode step");
	t = *tgt;
	t.batch = 1;
	t.stages = 0;
	t.inflight = 0;
	t.step_cycles = NULL;
	t.nstep_cycles = 0;
	st = npu_compile_load(data, size, &t, &g);
	if (!st)
		st = npu_kvcache_rewrite(g, prog, &kv);
	if (!st) {
		st = npu_ops_infer_shapes(g);
		/* The model's own limits (its position tables) surface here. */
		if (st) {
			char msg[768];

			snprintf(msg, sizeof(msg), "%s", npu_last_error());
			st = npu_fail(st,
				      "the %s against a KV cache of %u positions does not fit the model: %s; a smaller --max-context may (the model's position tables bound it)",
				      what, prog->max_context, msg);
		}
	}
	if (!st)
		st = npu_kvcache_finish(g, &kv);
	if (!st) {
		t.state = kv.state;
		t.n_state = kv.n_state;
		t.state_bytes = kv.bytes;
		st = npu_compile_ir(g, &t, out);
	}
	npu_kvcache_free(&kv);
	npu_ir_graph_free(g);
	return st;
}
