// SPDX-License-Identifier: MIT
/*
 * NegativeLogLikelihoodLoss (and SoftmaxCrossEntropyLoss, which is
 * LogSoftmax then it) with a constant target (and weight): the
 * picked log-probabilities are a row gather of the input, each scaled by
 * a compile-time coefficient (-weight of its class, 0 where ignored,
 * divided by the total weight for the mean), then summed when reduced.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_rewrite_priv.h"

npu_status npu_rewrite_nll_loss(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *t = npu_ir_input(g, n, 1);
	const npu_ir_tensor *w = npu_ir_input(g, n, 2), *y = npu_ir_output(g, n, 0);
	int64_t N, C, D = 1, cnt, ignore = 0, td[NPU_MAX_RANK], *tv = NULL, *rows = NULL;
	int yid = n->outputs[0], xi = n->inputs[0], tr, got, picks, coef, prod, kn;
	bool has_ignore = npu_ir_attr_find(n, "ignore_index") != NULL, none, mean;
	float *wv = NULL, *cv = NULL;
	double wsum = 0;
	const char *red;
	char name[128];
	npu_status st;

	*applied = false;
	if (!x || !t || !y || x->dtype != NPU_DTYPE_FLOAT32 || !npu_ir_is_const(t) ||
	    (w && (!npu_ir_is_const(w) || w->dtype != NPU_DTYPE_FLOAT32)) || x->rank < 2)
		return NPU_OK;
	if ((st = npu_ir_attr_string(n, "reduction", "mean", &red)) ||
	    (st = npu_ir_attr_int(n, "ignore_index", 0, &ignore)))
		return st;
	none = !strcmp(red, "none");
	mean = !strcmp(red, "mean");
	N = x->dims[0];
	C = x->dims[1];
	for (int d = 2; d < x->rank; d++)
		D *= x->dims[d];
	cnt = npu_ir_numel(t);
	tr = t->rank;
	memcpy(td, t->dims, sizeof(td));
	if (cnt != N * D || cnt < 1 || cnt > 65536 || (w && npu_ir_numel(w) != C))
		return NPU_OK;
	tv = malloc((size_t)cnt * sizeof(*tv));
	rows = malloc((size_t)cnt * sizeof(*rows));
	cv = malloc((size_t)cnt * sizeof(*cv));
	wv = malloc((size_t)C * sizeof(*wv));
	st = !tv || !rows || !cv || !wv ? npu_fail(NPU_ERR_NO_MEMORY, "out of memory") : NPU_OK;
	if (st || npu_ir_const_ints(t, tv, (int)cnt, &got))
		goto out;
	for (int64_t c = 0; c < C; c++)
		wv[c] = w ? ((const float *)w->data)[c] : 1.0f;
	for (int64_t i = 0; i < cnt; i++) {
		int64_t nn = i / D, d = i % D, cls = tv[i];
		bool skip = has_ignore && cls == ignore;

		if (!skip && (cls < 0 || cls >= C))
			goto out;	/* a class out of range: left to be refused */
		rows[i] = (nn * C + (skip ? 0 : cls)) * D + d;
		cv[i] = skip ? 0.0f : -wv[cls];
		wsum += skip ? 0.0 : wv[cls];
	}
	if (mean)
		for (int64_t i = 0; i < cnt; i++)
			cv[i] = wsum != 0 ? (float)(cv[i] / wsum) : 0.0f;
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, tr, td, cv, &coef))) {
		cv = NULL;
		goto out;
	}
	cv = NULL;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	if ((st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, tr, td, &picks)) ||
	    (st = npu_rw_gather_rows(g, name, xi, npu_ir_numel(&g->tensors[xi]), 1, rows,
				     (int)cnt, tr, td, picks)) ||
	    (st = npu_rw_out(g, none ? yid : -1, NPU_DTYPE_FLOAT32, tr, td, &prod)) ||
	    (st = npu_rw_op(g, "Mul", 14, name, (int[]){ picks, coef }, 2, &prod, 1, NULL)))
		goto out;
	if (!none) {
		int64_t axes[NPU_MAX_RANK];

		for (int a = 0; a < tr; a++)
			axes[a] = a;
		if (!(st = npu_rw_op(g, "ReduceSum", 13, name, &prod, 1, &yid, 1, &kn)) &&
		    !(st = npu_ir_set_attr_ints(&g->nodes[kn], "axes", axes, tr)))
			st = npu_ir_set_attr_int(&g->nodes[kn], "keepdims", 0);
	}
out:
	free(tv);
	free(rows);
	free(cv);
	free(wv);
	return st;
}

/*
 * SoftmaxCrossEntropyLoss: LogSoftmax over the classes (axis 1), whose
 * result is the optional log_prob output, then NegativeLogLikelihoodLoss
 * with the same target, weight and attributes (rewritten in turn).
 */
npu_status npu_rewrite_sce_loss(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0);
	int yid = n->outputs[0], lp = n->n_outputs > 1 ? n->outputs[1] : -1, nin = n->n_inputs;
	int ins[3] = { -1, -1, -1 }, kn, nl;
	int64_t xd[NPU_MAX_RANK], ignore = 0;
	bool has_ignore = npu_ir_attr_find(n, "ignore_index") != NULL;
	const char *red;
	char name[128], rbuf[16];
	npu_status st;

	*applied = false;
	if (!x || x->dtype != NPU_DTYPE_FLOAT32 || nin < 2 || nin > 3 || x->rank < 2)
		return NPU_OK;
	if ((st = npu_ir_attr_string(n, "reduction", "mean", &red)) ||
	    (st = npu_ir_attr_int(n, "ignore_index", 0, &ignore)))
		return st;
	snprintf(rbuf, sizeof(rbuf), "%s", red);
	memcpy(ins, n->inputs, (size_t)nin * sizeof(int));
	memcpy(xd, x->dims, sizeof(xd));
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	npu_rw_detach(g, k, yid);
	if (lp >= 0)
		npu_rw_detach(g, k, lp);
	g->nodes[k].dead = true;
	if ((st = npu_rw_out(g, lp, NPU_DTYPE_FLOAT32, g->tensors[ins[0]].rank, xd, &lp)) ||
	    (st = npu_rw_op(g, "LogSoftmax", 13, name, &ins[0], 1, &lp, 1, &kn)) ||
	    (st = npu_ir_set_attr_int(&g->nodes[kn], "axis", 1)))
		return st;
	ins[0] = lp;
	if ((st = npu_rw_op(g, "NegativeLogLikelihoodLoss", 13, name, ins, nin, &yid, 1, &nl)) ||
	    (st = npu_ir_set_attr_string(&g->nodes[nl], "reduction", rbuf)))
		return st;
	return has_ignore ? npu_ir_set_attr_int(&g->nodes[nl], "ignore_index", ignore) : NPU_OK;
}
