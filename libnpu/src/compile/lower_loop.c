// SPDX-License-Identifier: MIT
/*
 * An ONNX Loop as host-side control flow (issue 17): npu.LoopBegin and
 * npu.LoopEnd (onnx/npu_onnx_if.c) become control steps around the
 * body's steps (npu_cmodel.h, NPU_CTL_LOOP_BEGIN and _END; the context
 * runs them, model/context.c).  The carried values, iter_num and the
 * condition live in device memory where the body reads them (v_in, homes
 * like any tensor's); the LOOP_END step copies the body's results there
 * between iterations, and the Loop's outputs when it stops.
 *
 * Lifetimes (npu_scratch.c: first and last node that asks for a tensor):
 * both steps ask for every tensor they touch, so iter_num, cond and v_in
 * live from the LOOP_BEGIN to the LOOP_END, and the Loop's outputs from
 * the LOOP_BEGIN on (a scan output is written at every LOOP_END while the
 * body still runs: nothing in the body may share its bytes).  A tensor
 * made before the loop and read in the body lives until the LOOP_END too
 * (npu_scratch_keep(): whatever the body's lowerings asked for, a fused
 * producer's inputs included).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_lower.h"
#include "onnx/npu_onnx_if.h"

static int attr_int(const npu_ir_node *n, const char *name, int def)
{
	const npu_ir_attr *a = npu_ir_attr_find(n, name);

	return a ? (int)a->i : def;
}

/* The npu.LoopEnd reading loop begin @b's iter_num; -1 if none. */
static int loop_end_of(const npu_ir_graph *g, const npu_ir_node *b)
{
	for (int i = 0; i < g->n_nodes; i++) {
		const npu_ir_node *e = &g->nodes[i];

		if (!e->dead && !strcmp(e->op, NPU_OP_LOOP_END) && e->n_inputs > 1 &&
		    e->inputs[1] == b->outputs[0])
			return i;
	}
	return -1;
}

/* A control step of @kind for loop node @n: tensors @ins, then @outs; its target comes later. */
static npu_status loop_step(struct npu_cc *cc, const npu_ir_node *n, uint32_t kind,
			    const int *ins, int nin, const int *outs, int nout, const char *what)
{
	struct npu_host_step *h;
	char lbl[96], name[160];
	npu_status st = NPU_OK;

	if (cc->batch > 1)
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"a Loop runs its body step by step: compile with batch 1");
	if (!cc->seq)
		return npu_fail(NPU_ERR_INTERNAL, "a Loop without its control-flow layout");
	h = calloc(1, sizeof(*h));
	if (!h)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	/* "Loop 'loop_1': begin" (the node's name ends in "/begin" or "/end"). */
	npu_ir_node_label(n, lbl, sizeof(lbl));
	snprintf(name, sizeof(name), "Loop %s: %s", lbl, what);
	h->op = strdup(n->op);
	h->node = strdup(name);
	h->opset = n->opset;
	h->ctl = kind;
	h->ninputs = (uint32_t)nin;
	h->noutputs = (uint32_t)nout;
	h->tensors = calloc((size_t)(nin + nout) + 1, sizeof(*h->tensors));
	h->attrs = calloc(1, sizeof(*h->attrs));
	if (!h->op || !h->node || !h->tensors || !h->attrs)
		st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int k = 0; !st && k < nin; k++)
		st = npu_host_tensor_of(cc, ins[k], &h->tensors[k]);
	for (int k = 0; !st && k < nout; k++)
		st = npu_host_tensor_of(cc, outs[k], &h->tensors[nin + k]);
	if (!st && kind == NPU_CTL_LOOP_END) {
		h->attrs[0].name = strdup("max_iterations");
		h->attrs[0].type = NPU_IR_ATTR_INT;
		h->attrs[0].i = cc->max_loop_iterations ? cc->max_loop_iterations :
							   NPU_LOOP_MAX_ITERATIONS_DEFAULT;
		h->nattrs = 1;
		if (!h->attrs[0].name)
			st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	if (st) {
		npu_host_step_free(h);
		return st;
	}
	return npu_sched_host(cc, h);
}

/* The outputs both steps share: iter_num, cond, v_in x N (of @b), v_final x N, scan x K (of @e). */
static void shared_outs(const npu_ir_node *b, const npu_ir_node *e, int N, int K, int *outs)
{
	for (int k = 0; k < N + 2; k++)
		outs[k] = k < b->n_outputs ? b->outputs[k] : -1;
	for (int k = 0; k < N + K; k++)
		outs[N + 2 + k] = k < e->n_outputs ? e->outputs[k] : -1;
}

npu_status npu_lower_loop_begin(struct npu_cc *cc, const npu_ir_node *n)
{
	int ei = loop_end_of(cc->g, n), N, K, *ins, *outs;
	const npu_ir_node *e;
	npu_status st;

	if (ei < 0)
		return npu_fail(NPU_ERR_INTERNAL, "a Loop without its end");
	e = &cc->g->nodes[ei];
	N = attr_int(e, NPU_LOOP_N, -1);
	K = attr_int(e, NPU_LOOP_K, -1);
	if (N < 0 || K < 0 || n->n_inputs != N + 2 || n->n_outputs != N + 2)
		return npu_fail(NPU_ERR_INTERNAL, "a malformed Loop");
	ins = calloc((size_t)(N + 2), sizeof(int));
	outs = calloc((size_t)(2 * N + K + 2), sizeof(int));
	if (!ins || !outs) {
		free(ins);
		free(outs);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	memcpy(ins, n->inputs, (size_t)(N + 2) * sizeof(int));
	shared_outs(n, e, N, K, outs);
	st = loop_step(cc, n, NPU_CTL_LOOP_BEGIN, ins, N + 2, outs, 2 * N + K + 2, "begin");
	free(ins);
	free(outs);
	return st;
}

npu_status npu_lower_loop_end(struct npu_cc *cc, const npu_ir_node *n)
{
	int N = attr_int(n, NPU_LOOP_N, -1), K = attr_int(n, NPU_LOOP_K, -1), *ins, *outs;
	const npu_ir_node *b;
	npu_status st;

	if (N < 0 || K < 0 || n->n_inputs < 4 + 2 * N + K || n->inputs[1] < 0 ||
	    cc->g->tensors[n->inputs[1]].producer < 0)
		return npu_fail(NPU_ERR_INTERNAL, "a malformed Loop");
	b = &cc->g->nodes[cc->g->tensors[n->inputs[1]].producer];
	ins = calloc((size_t)(2 + N + K), sizeof(int));
	outs = calloc((size_t)(2 * N + K + 2), sizeof(int));
	if (!ins || !outs) {
		free(ins);
		free(outs);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	/* M, cond_out, v_out x N, scan_out x K. */
	ins[0] = n->inputs[0];
	memcpy(ins + 1, n->inputs + 3 + N, (size_t)(1 + N + K) * sizeof(int));
	shared_outs(b, n, N, K, outs);
	/*
	 * Values made before the loop that the body reads (what its lowerings
	 * asked for: a fused producer's inputs too) stay alive until here.
	 */
	npu_scratch_keep(cc, (int)(b - cc->g->nodes));
	st = loop_step(cc, n, NPU_CTL_LOOP_END, ins, 2 + N + K, outs, 2 * N + K + 2,
			       "next iteration");
	free(ins);
	free(outs);
	return st;
}
