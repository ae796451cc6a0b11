// SPDX-License-Identifier: MIT
/*
 * Clip with a bound computed at run time (opset 11 on): the CVU's clip
 * takes its bounds as immediates, so a run-time min becomes Max(x, min)
 * and a run-time max Min(., max) before the Clip, which keeps only its
 * constant bounds.  openWakeWord's melspectrogram floors its log
 * spectrum 80 dB under its own peak: Clip(x, ReduceMax(x) - 80, inf).
 */
#include "compile/npu_rewrite_priv.h"

npu_status npu_rewrite_clip_runtime(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	static const char *const op[2] = { "Max", "Min" };
	int cur = n->inputs[0];
	char name[128];
	npu_status st;

	*applied = false;
	if (n->opset < 11 || n->n_inputs < 2 || cur < 0)
		return NPU_OK;
	snprintf(name, sizeof(name), "%s", n->name);
	for (int b = 0; b < 2; b++) {
		int t = 1 + b < g->nodes[k].n_inputs ? g->nodes[k].inputs[1 + b] : -1;

		if (t < 0 || npu_ir_is_const(&g->tensors[t]))
			continue;
		*applied = true;
		if ((st = npu_rw_binary(g, op[b], 13, name, cur, t, -1, &cur)))
			return st;
		g->nodes[k].inputs[1 + b] = -1;
	}
	g->nodes[k].inputs[0] = cur;
	return NPU_OK;
}
