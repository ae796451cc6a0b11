// SPDX-License-Identifier: MIT
/*
 * npu.IfSelect, what an ONNX If becomes (onnx/npu_onnx_if.c): a constant
 * condition (a constant, or one that folded at shape inference, such as
 * a comparison of shapes after --shape) makes it the chosen branch's value
 * and the other branch dead code that npu_ir_remove_dead() drops; a
 * run-time one a Where over the two branches' values, marked so that
 * layer by layer only the chosen branch runs (npu_control.c); pipelined,
 * both are computed.
 */
#include <stdio.h>

#include "compile/npu_lower.h"
#include "compile/npu_rewrite_priv.h"

npu_status npu_rewrite_if_select(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *c = npu_ir_input(g, n, 0);
	int ci = n->inputs[0], ai = n->inputs[1], bi = n->inputs[2], zi = n->outputs[0], cs = ci;
	int opset = n->opset;
	char name[128];
	npu_status st;

	*applied = false;
	if (!c)
		return NPU_OK;
	snprintf(name, sizeof(name), "%s", n->name);
	if (npu_ir_is_const(c) && c->data) {
		int si = ((const uint8_t *)c->data)[0] ? ai : bi;

		*applied = true;
		g->nodes[k].dead = true;
		if (!npu_ir_is_graph_output(g, zi)) {
			/* Readers of the output read the chosen value itself. */
			for (int i = 0; i < g->n_nodes; i++)
				for (int j = 0; !g->nodes[i].dead && j < g->nodes[i].n_inputs; j++)
					if (g->nodes[i].inputs[j] == zi)
						g->nodes[i].inputs[j] = si;
			return NPU_OK;
		}
		npu_rw_detach(g, k, zi);
		return npu_rw_op(g, "Identity", opset, name, &si, 1, &zi, 1, NULL);
	}
	*applied = true;
	npu_rw_detach(g, k, zi);
	g->nodes[k].dead = true;
	/* One element of any rank: a scalar, so Where broadcasts it to the values' shape. */
	if (c->rank > 0 && (st = npu_rw_reshape(g, name, ci, 0, NULL, -1, &cs)))
		return st;
	if ((st = npu_rw_op(g, "Where", opset > 9 ? opset : 9, name, (int[]){ cs, ai, bi }, 3, &zi,
			    1, &k)))
		return st;
	/* Layer by layer only the chosen branch runs (npu_control.c). */
	return npu_ir_set_attr_int(&g->nodes[k], NPU_ATTR_IF_WHERE, 1);
}
