// SPDX-License-Identifier: MIT
/*
 * A float Conv whose result a Log reads through a magnitude (an STFT done
 * as a Conv with a fixed cos/sin basis, then |X|, then a log spectrum:
 * Silero VAD's front end) in three bf16 products instead of one.
 *
 * Why: the TCU multiplies in bf16 (8 bits of mantissa).  Rounding the
 * signal and the basis to bf16 adds noise about 2^-9 of the largest terms
 * to every output, and a spectrum's quiet bins are far below its loud
 * ones: their magnitude is then mostly that noise, and the Log (which
 * reads relative error) turns it into errors of a fifth of the log
 * spectrum's range.  fp32 products would not, and the M100 has none.
 *
 * How: rewrite_bf16x3.c's split, the input's channels tripled as
 * Concat(x, x, xl) against weights (wh, wl, wh) (per group for a grouped
 * Conv): error about 2^-17 of the terms instead of 2^-9, for three times
 * the MACs and one CVU pass over the input.
 *
 * Which Convs: float32 (grouped ones too: the blocks per group), constant
 * weights, a run-time input, and a Log within NPU_PREC_DEPTH nodes
 * downstream reached only through what computes a magnitude or a power
 * spectrum from it (Slice, Pow, Mul, Add, Sqrt, Abs, ReduceSum, a MatMul by
 * a constant filter bank, Max/Clip floors, shape-only nodes).  Other Convs
 * keep one bf16 product (their results feed activations that tolerate it,
 * and three products cost three times the TCU time), unless the caller
 * asked for NPU_PRECISION_BF16X3, which marks every Conv first
 * (npu_rewrite_want_bf16x3()).
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_rewrite_priv.h"

/* How far downstream of the Conv the Log may be (Silero's is the 7th node on). */
#define NPU_PREC_DEPTH 8
/* The attribute NPU_PRECISION_BF16X3 puts on every Conv: split it too. */
#define NPU_PREC_WANT "npu_want_bf16x3"

static bool is_op(const npu_ir_node *n, const char *op)
{
	return !n->dead && !n->domain[0] && !strcmp(n->op, op);
}

/* Operators a magnitude or power spectrum passes through on its way to a Log. */
static bool spectral_step(const npu_ir_graph *g, const npu_ir_node *n)
{
	static const char *const pass[] = {
		"Slice", "Pow", "Mul", "Add", "Sqrt", "Abs", "ReduceSum", "ReduceSumSquare",
		"ReduceL2", "Max", "Clip", "Reshape", "Squeeze", "Unsqueeze", "Transpose",
		"Identity", "Concat",
	};

	if (is_op(n, "MatMul"))	/* a mel filter bank: a constant B */
		return n->n_inputs == 2 && n->inputs[1] >= 0 &&
		       npu_ir_is_const(&g->tensors[n->inputs[1]]);
	for (size_t i = 0; i < sizeof(pass) / sizeof(pass[0]); i++)
		if (is_op(n, pass[i]))
			return true;
	return false;
}

/*
 * Whether a Log reads tensor @t within @depth spectral steps; @seen marks
 * the tensors already looked from (each at most once per question, so a
 * graph whose tensors fan out costs one scan of the nodes per tensor).
 */
static bool reaches_log(const npu_ir_graph *g, int t, int depth, bool *seen)
{
	if (seen[t])
		return false;
	seen[t] = true;
	for (int i = 0; i < g->n_nodes; i++) {
		const npu_ir_node *n = &g->nodes[i];
		bool reads = false;

		if (n->dead)
			continue;
		for (int j = 0; j < n->n_inputs; j++)
			reads |= n->inputs[j] == t;
		if (!reads)
			continue;
		if (is_op(n, "Log"))
			return true;
		if (depth > 1 && spectral_step(g, n))
			for (int o = 0; o < n->n_outputs; o++)
				if (n->outputs[o] >= 0 &&
				    reaches_log(g, n->outputs[o], depth - 1, seen))
					return true;
	}
	return false;
}

/* Whether a Log reads Conv @n's output through a magnitude (above). */
static npu_status conv_feeds_log(const npu_ir_graph *g, const npu_ir_node *n, bool *yes)
{
	bool *seen = calloc((size_t)g->n_tensors, sizeof(*seen));

	if (!seen)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	*yes = reaches_log(g, n->outputs[0], NPU_PREC_DEPTH, seen);
	free(seen);
	return NPU_OK;
}

/*
 * *@x3 = Concat(x, x, xl) along the channels of each of @group groups:
 * x [N, C, ...] seen as [N, G, C/G, ...], the three blocks on axis 2.
 */
static npu_status concat_groups(npu_ir_graph *g, const char *name, int x, int64_t group,
				int rank, const int64_t *xd, int *x3)
{
	int64_t gd[NPU_MAX_RANK], yd[NPU_MAX_RANK];
	int xg, cat;
	npu_status st;

	memcpy(yd, xd, sizeof(yd));
	yd[1] = 3 * xd[1];
	if (group == 1)
		return npu_rw_bf16x3_operand(g, name, x, 1, x3);
	gd[0] = xd[0];
	gd[1] = group;
	gd[2] = xd[1] / group;
	for (int a = 2; a < rank; a++)
		gd[a + 1] = xd[a];
	if ((st = npu_rw_reshape(g, name, x, rank + 1, gd, -1, &xg)) ||
	    (st = npu_rw_bf16x3_operand(g, name, xg, 2, &cat)))
		return st;
	return npu_rw_reshape(g, name, cat, rank, yd, -1, x3);
}

npu_status npu_rewrite_conv_bf16x3(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *w = npu_ir_input(g, n, 1);
	int xid = n->inputs[0], x3, w3;
	int64_t group, xd[NPU_MAX_RANK], wd[NPU_MAX_RANK], per, cin, m;
	int rank;
	bool want;
	float *wf;
	const float *src;
	char name[128];
	npu_status st;

	*applied = false;
	if (!is_op(n, "Conv") || npu_ir_attr_find(n, NPU_RW_BF16X3_ATTR) || !x || !w ||
	    x->dtype != NPU_DTYPE_FLOAT32 || w->dtype != NPU_DTYPE_FLOAT32 ||
	    npu_ir_is_const(x) || !npu_ir_is_const(w) || w->rank != x->rank || x->rank < 3 ||
	    n->n_outputs < 1 || n->outputs[0] < 0)
		return NPU_OK;
	if ((st = npu_ir_attr_int(n, "group", 1, &group)))
		return st;
	/* A grouped input is viewed with one rank more. */
	if (group < 1 || x->dims[1] % group || w->dims[1] * group != x->dims[1] ||
	    (group > 1 && x->rank + 1 > NPU_MAX_RANK))
		return NPU_OK;
	/* NPU_PRECISION_BF16X3 wants every Conv; otherwise an STFT's. */
	want = npu_ir_attr_find(n, NPU_PREC_WANT) != NULL;
	if (!want && (st = conv_feeds_log(g, n, &want)))
		return st;
	if (!want)
		return NPU_OK;
	rank = x->rank;
	memcpy(xd, x->dims, sizeof(xd));
	memcpy(wd, w->dims, sizeof(wd));
	cin = wd[1];
	m = wd[0];
	per = 1;
	for (int a = 2; a < rank; a++)
		per *= wd[a];
	if (m * 3 * cin * per > NPU_RW_MATRIX_MAX)
		return NPU_OK;
	/* Weights [m][3 cin][k...]: the input blocks x, x, xl against wh, wl, wh. */
	wf = malloc((size_t)(m * 3 * cin * per) * sizeof(*wf));
	if (!wf)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	src = w->data;
	for (int64_t o = 0; o < m; o++)
		for (int64_t i = 0; i < cin * per; i++) {
			float *row = wf + o * 3 * cin * per;

			npu_rw_bf16x3_split(src[o * cin * per + i], &row[i], &row[cin * per + i]);
			row[2 * cin * per + i] = row[i];
		}
	wd[1] = 3 * cin;
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, rank, wd, wf, &w3)) ||
	    (st = concat_groups(g, name, xid, group, rank, xd, &x3)))
		return st;
	g->nodes[k].inputs[0] = x3;
	g->nodes[k].inputs[1] = w3;
	npu_ir_remove_attr(&g->nodes[k], NPU_PREC_WANT);
	return npu_ir_set_attr_int(&g->nodes[k], NPU_RW_BF16X3_ATTR, 1);
}

npu_status npu_rewrite_want_bf16x3(npu_ir_graph *g)
{
	npu_status st;

	for (int i = 0; i < g->n_nodes; i++)
		if (is_op(&g->nodes[i], "Conv") &&
		    (st = npu_ir_set_attr_int(&g->nodes[i], NPU_PREC_WANT, 1)))
			return st;
	return NPU_OK;
}
