// SPDX-License-Identifier: MIT
/*
 * Shape rule of the training optimisers of ai.onnx.preview.training
 * (Adagrad, Adam, Momentum): inputs R, T, then n groups of tensors (X, G,
 * and the optimiser's state), outputs the new X and state of each group,
 * each of its input's dtype and shape.  The rewrite (compile/rewrite_train.c)
 * spells them out as elementwise arithmetic.
 */
#include <string.h>

#include "ir/shape_util.h"

npu_status npu_ir_shape_optimizer(npu_ir_graph *g, npu_ir_node *n)
{
	int groups = !strcmp(n->op, "Adam") ? 4 : 3, cnt;
	npu_ir_tensor *r, *t;
	npu_status st;

	if (n->n_inputs < 2 + groups || (n->n_inputs - 2) % groups)
		return npu_sh_err(n, NPU_ERR_FORMAT,
				  "%d inputs: R, T, then %d groups of n tensors (X, G, state) are expected",
				  n->n_inputs, groups);
	cnt = (n->n_inputs - 2) / groups;
	if (n->n_outputs > cnt * (groups - 1))
		return npu_sh_err(n, NPU_ERR_FORMAT, "%d outputs for %d tensors to update",
				  n->n_outputs, cnt);
	if ((st = npu_sh_need_in(g, n, 0, &r)) || (st = npu_sh_need_in(g, n, 1, &t)))
		return st;
	if (npu_ir_numel(r) != 1 || !is_float(r->dtype))
		return npu_sh_err(n, NPU_ERR_SHAPE, "the learning rate R must be a float scalar");
	if (npu_ir_numel(t) != 1 || !is_int(t->dtype))
		return npu_sh_err(n, NPU_ERR_SHAPE, "the step count T must be an integer scalar");
	for (int i = 0; i < cnt; i++) {
		npu_ir_tensor *x, *o;

		if ((st = npu_sh_need_in(g, n, 2 + i, &x)))
			return st;
		for (int j = 1; j < groups; j++) {
			if ((st = npu_sh_need_in(g, n, 2 + j * cnt + i, &o)))
				return st;
			if (o->dtype != x->dtype || o->rank != x->rank ||
			    memcmp(o->dims, x->dims, (size_t)x->rank * sizeof(*x->dims)))
				return npu_sh_err(n, NPU_ERR_SHAPE,
						  "'%s' differs in dtype or shape from '%s', which it updates",
						  o->name, x->name);
		}
	}
	for (int o = 0; o < n->n_outputs; o++) {
		int grp = o / cnt, src = 2 + (grp ? grp + 1 : 0) * cnt + o % cnt;

		if ((st = npu_sh_set_like(g, n, o, in(g, n, src))))
			return st;
	}
	return NPU_OK;
}
