// SPDX-License-Identifier: MIT
/*
 * Which dims of a node's outputs have run-time size (issue 17), when the
 * node reads a tensor that has (npu_ir_tensor.dyn: NonZero,
 * NonMaxSuppression, Unique or Compress of run-time data, and what is
 * computed from them).  The shape rule has already computed the outputs'
 * bounds from the inputs' bounds; this says which of those dims the run
 * decides, so that the public info has -1 there and the real size in the
 * others ([k, 4] boxes, not [-1, -1]).  Execution does not depend on it:
 * every such node runs on the host, on the actual shapes.  An operator
 * not listed, or one whose shape-giving input is not a constant, marks
 * every dim; an output with no dim of run-time size (Shape of such a
 * tensor) is marked NPU_IR_DYN_VALUE.
 */
#include <string.h>

#include "ir/shape_util.h"

/* The dims mask of tensor @t (0 for a static one). */
static unsigned dmask(const npu_ir_tensor *t)
{
	return t ? t->dyn & 0xffu : 0;
}

static bool is_any(const char *op, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(op, list[i]))
			return true;
	return false;
}

/* Constant int64/int32 list of input @i into @v, its length; -1 when not a constant. */
static int const_list(const npu_ir_graph *g, const npu_ir_node *n, int i, int64_t *v)
{
	const npu_ir_tensor *t = npu_ir_input(g, n, i);
	int cnt;

	if (!t || !t->data || npu_ir_const_ints(t, v, NPU_MAX_RANK, &cnt))
		return -1;
	return cnt;
}

/* Axes from attribute @attr or else constant input @i; -1 when neither gives them. */
static int axes_of(const npu_ir_graph *g, const npu_ir_node *n, const char *attr, int i, int64_t *v)
{
	const int64_t *a;
	int cnt;

	/* A missing attribute is NPU_OK with no values (count -1). */
	if (!npu_ir_attr_ints(n, attr, &a, &cnt) && a && cnt >= 0 && cnt <= NPU_MAX_RANK) {
		memcpy(v, a, (size_t)cnt * sizeof(*v));
		return cnt;
	}
	if (i >= n->n_inputs || n->inputs[i] < 0)
		return 0;
	return const_list(g, n, i, v);
}

static int norm_axis(int64_t a, int rank)
{
	return (int)(a < 0 ? a + rank : a);
}

/* Output 0's dims mask, or -1 for "all of them". */
static long out_mask(const npu_ir_graph *g, const npu_ir_node *n, const npu_ir_tensor *y)
{
	static const char *const unary[] = { "Identity", "Cast", "Abs", "Neg", "Not", "Sigmoid",
					     "Relu", "Exp", "Log", "Sqrt", "Floor", "Ceil", "Round",
					     "Tanh", "Reciprocal" };
	static const char *const binary[] = { "Add", "Sub", "Mul", "Div", "Pow", "Min", "Max",
					      "Mod", "Equal", "Greater", "Less", "GreaterOrEqual",
					      "LessOrEqual", "And", "Or", "Xor", "Where" };
	static const char *const reduce[] = { "ReduceMax", "ReduceMin", "ReduceSum", "ReduceMean",
					      "ReduceProd", "ArgMax", "ArgMin" };
	const npu_ir_tensor *x = npu_ir_input(g, n, 0);
	unsigned xm = dmask(x), m = 0;
	int64_t v[NPU_MAX_RANK], axis = 0;
	int cnt, r = 0;

	if (!x || x->rank < 0)
		return -1;
	if (is_any(n->op, unary, sizeof(unary) / sizeof(unary[0])))
		return x->rank == y->rank ? (long)xm : -1;
	if (is_any(n->op, binary, sizeof(binary) / sizeof(binary[0]))) {
		for (int i = 0; i < n->n_inputs; i++) {
			const npu_ir_tensor *t = npu_ir_input(g, n, i);

			if (t && t->rank <= y->rank)
				m |= dmask(t) << (y->rank - t->rank);
		}
		return m;
	}
	if (!strcmp(n->op, "Shape") || !strcmp(n->op, "Size"))
		return 0;
	if (!strcmp(n->op, "Transpose")) {
		const int64_t *perm;

		if (npu_ir_attr_ints(n, "perm", &perm, &cnt) || !perm) {
			for (int k = 0; k < y->rank; k++)
				m |= ((xm >> (y->rank - 1 - k)) & 1u) << k;
			return m;
		}
		for (int k = 0; k < cnt && k < y->rank; k++)
			if (perm[k] >= 0 && perm[k] < NPU_MAX_RANK)
				m |= ((xm >> perm[k]) & 1u) << k;
		return m;
	}
	if (!strcmp(n->op, "Reshape")) {
		if ((cnt = const_list(g, n, 1, v)) != y->rank)
			return -1;
		for (int k = 0; k < cnt; k++)
			if (v[k] == -1 ? xm != 0 : v[k] == 0 ? (xm >> k) & 1u : 0)
				m |= 1u << k;
		return m;
	}
	if (!strcmp(n->op, "Flatten")) {
		npu_ir_attr_int(n, "axis", 1, &axis);
		axis = norm_axis(axis, x->rank);
		return (xm & ((1u << axis) - 1) ? 1 : 0) | (xm >> axis ? 2 : 0);
	}
	if (!strcmp(n->op, "Squeeze") || !strcmp(n->op, "Unsqueeze")) {
		bool un = n->op[0] == 'U', mark[NPU_MAX_RANK] = { false };
		int nr = un ? y->rank : x->rank;

		if ((cnt = axes_of(g, n, "axes", 1, v)) <= 0)
			return -1;
		for (int k = 0; k < cnt; k++) {
			int a = norm_axis(v[k], nr);

			if (a < 0 || a >= nr)
				return -1;
			mark[a] = true;
		}
		/* Squeeze drops the marked dims; Unsqueeze inserts static 1s there. */
		for (int k = 0, s = 0; k < nr; k++) {
			if (mark[k])
				continue;
			if (un)
				m |= ((xm >> s) & 1u) << k;
			else
				m |= ((xm >> k) & 1u) << s;
			s++;
		}
		return m;
	}
	if (!strcmp(n->op, "Concat")) {
		for (int i = 0; i < n->n_inputs; i++)
			m |= dmask(npu_ir_input(g, n, i));
		return m;
	}
	if (!strcmp(n->op, "Gather")) {
		const npu_ir_tensor *ind = npu_ir_input(g, n, 1);

		npu_ir_attr_int(n, "axis", 0, &axis);
		axis = norm_axis(axis, x->rank);
		for (int k = 0; k < x->rank; k++) {
			if (k == axis) {
				for (int j = 0; ind && j < ind->rank; j++, r++)
					m |= ((dmask(ind) >> j) & 1u) << r;
				continue;
			}
			m |= ((xm >> k) & 1u) << r++;
		}
		return m;
	}
	if (!strcmp(n->op, "GatherND")) {
		const npu_ir_tensor *ind = npu_ir_input(g, n, 1);
		int q;

		if (!ind || ind->rank < 1 || (dmask(ind) >> (ind->rank - 1)) & 1u)
			return -1;
		q = (int)ind->dims[ind->rank - 1];
		for (int j = 0; j < ind->rank - 1; j++, r++)
			m |= ((dmask(ind) >> j) & 1u) << r;
		for (int k = q; k < x->rank; k++, r++)
			m |= ((xm >> k) & 1u) << r;
		return m;
	}
	if (!strcmp(n->op, "Slice")) {
		/* Constant bounds keep a static dim static; a run-time-sized one stays. */
		for (int i = 1; i < n->n_inputs; i++)
			if (n->inputs[i] >= 0 && !npu_ir_input(g, n, i)->data)
				return -1;
		return xm;
	}
	if (!strcmp(n->op, "TopK")) {
		npu_ir_attr_int(n, "axis", -1, &axis);
		axis = norm_axis(axis, x->rank);
		m = xm & ~(1u << axis);
		if (n->n_inputs > 1 && !npu_ir_input(g, n, 1)->data)
			m |= 1u << axis;
		return m;
	}
	if (is_any(n->op, reduce, sizeof(reduce) / sizeof(reduce[0]))) {
		bool red[NPU_MAX_RANK] = { false }, arg = !strncmp(n->op, "Arg", 3);
		int64_t keep = 1;

		npu_ir_attr_int(n, "keepdims", 1, &keep);
		if (arg) {
			npu_ir_attr_int(n, "axis", 0, &v[0]);
			cnt = 1;
		} else if ((cnt = axes_of(g, n, "axes", 1, v)) < 0) {
			return -1;
		}
		for (int k = 0; k < cnt; k++)
			red[norm_axis(v[k], x->rank) & (NPU_MAX_RANK - 1)] = true;
		for (int k = 0; k < x->rank; k++) {
			if (!cnt || red[k]) {
				r += keep != 0;
				continue;
			}
			m |= ((xm >> k) & 1u) << r++;
		}
		return r == y->rank ? (long)m : -1;
	}
	return -1;
}

void npu_ir_dyn_outputs(npu_ir_graph *g, const npu_ir_node *n)
{
	for (int j = 0; j < n->n_outputs; j++) {
		npu_ir_tensor *y = npu_ir_output(g, n, j);
		long m;

		if (!y || y->dyn)
			continue;
		m = j == 0 || !strcmp(n->op, "TopK") ? out_mask(g, n, y) : -1;
		if (m < 0)
			m = (long)((1u << y->rank) - 1);
		m &= (long)((1u << y->rank) - 1);
		/* Always marked: a run-time value, whatever its shape. */
		y->dyn = (uint16_t)(m ? m : NPU_IR_DYN_VALUE);
	}
}
