// SPDX-License-Identifier: MIT
/*
 * Static shape and dtype inference, constant folding of shape subgraphs,
 * and the NPU compiler's operator list.
 *
 * One table (ops[]) says, for every operator libnpu knows, the first opset
 * that has it, its shape rule (shape_*.c, by ONNX operator family) and
 * whether the NPU compiler runs it or only folds it away as a constant.
 * npu_ir_infer_shapes() walks the nodes in topological order: each node's
 * shape rule sets its outputs' dtype and shape (checking them against what
 * the model declares), then nodes whose inputs are all constant and whose
 * op has an evaluator are computed (npu_ir_const.c) and dropped.
 */
#include <string.h>

#include "ir/shape_util.h"

#define OP_NPU		1u	/* the NPU compiler lowers it */
#define OP_CONST	2u	/* supported only when it folds to a constant */

/* Folding budget: constants larger than this stay nodes. */
#define FOLD_MAX_BYTES	((size_t)16 << 20)
#define FOLD_TOTAL_BYTES ((size_t)128 << 20)

/* Extra support check: NULL if the node is fine, else what is not. */
typedef const char *(*support_fn)(const npu_ir_graph *g, const npu_ir_node *n);

struct op_def {
	const char *op;
	int since;		/* first opset with this operator */
	int until;		/* last opset with it (0: still current) */
	npu_ir_shape_fn infer;
	unsigned flags;
	support_fn support;
};

/* ---- the operator table ---- */

static const char *support_resize(const npu_ir_graph *g, const npu_ir_node *n)
{
	const char *mode = "nearest";
	int64_t antialias = 0;

	(void)g;
	if (npu_ir_attr_string(n, "mode", "nearest", &mode))
		return "its mode attribute is not a string";
	if (strcmp(mode, "nearest") && strcmp(mode, "linear") && strcmp(mode, "bilinear") &&
	    strcmp(mode, "cubic"))
		return "only modes nearest, linear and cubic are";
	/* The compiler's rewrite (compile/npu_rewrite.c) has no antialiasing
	 * filter and resizes every axis. */
	if (npu_ir_attr_int(n, "antialias", 0, &antialias) || antialias)
		return "antialias is not";
	if (npu_ir_attr_find(n, "axes"))
		return "the axes attribute is not";
	return NULL;
}

static const char *support_maxpool(const npu_ir_graph *g, const npu_ir_node *n)
{
	(void)g;
	if (n->n_outputs > 1 && n->outputs[1] >= 0)
		return "its Indices output is not";
	return NULL;
}

/* Gather on run-time data: Slices and a Concat (compile/npu_rewrite.c). */
static const char *support_gather(const npu_ir_graph *g, const npu_ir_node *n)
{
	const npu_ir_tensor *ind = n->n_inputs > 1 && n->inputs[1] >= 0 ?
				   &g->tensors[n->inputs[1]] : NULL;

	if (!ind || !npu_ir_is_const(ind))
		return "only with constant indices is";
	return NULL;
}

static const struct op_def ops[] = {
	/* convolution and matrix */
	{ "Conv", 1, 0, npu_ir_shape_conv, OP_NPU, NULL },
	{ "ConvTranspose", 1, 0, npu_ir_shape_conv_transpose, OP_NPU, NULL },
	{ "Gemm", 1, 0, npu_ir_shape_gemm, OP_NPU, NULL },
	{ "MatMul", 1, 0, npu_ir_shape_matmul, OP_NPU, NULL },
	/* arithmetic */
	{ "Add", 1, 0, npu_ir_shape_binary, OP_NPU, NULL },
	{ "Sub", 1, 0, npu_ir_shape_binary, OP_NPU, NULL },
	{ "Mod", 10, 0, npu_ir_shape_binary, OP_NPU, NULL },
	{ "BitShift", 11, 0, npu_ir_shape_binary, OP_NPU, NULL },
	{ "Mul", 1, 0, npu_ir_shape_binary, OP_NPU, NULL },
	{ "Div", 1, 0, npu_ir_shape_binary, OP_NPU, NULL },
	{ "Pow", 1, 0, npu_ir_shape_binary, OP_NPU, NULL },
	{ "Max", 1, 0, npu_ir_shape_variadic, OP_NPU, NULL },
	{ "Min", 1, 0, npu_ir_shape_variadic, OP_NPU, NULL },
	{ "Sum", 1, 0, npu_ir_shape_variadic, OP_NPU, NULL },
	{ "Mean", 1, 0, npu_ir_shape_variadic, OP_NPU, NULL },
	/* activations and unary math */
	{ "Relu", 1, 0, npu_ir_shape_unary, OP_NPU, NULL },
	{ "LeakyRelu", 1, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "PRelu", 1, 0, npu_ir_shape_prelu, OP_NPU, NULL },
	{ "Clip", 1, 0, npu_ir_shape_clip, OP_NPU, NULL },
	{ "Sigmoid", 1, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Tanh", 1, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "HardSigmoid", 1, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "HardSwish", 14, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Erf", 9, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Gelu", 20, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Sqrt", 1, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Exp", 1, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Log", 1, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Neg", 1, 0, npu_ir_shape_unary, OP_NPU, NULL },
	{ "Abs", 1, 0, npu_ir_shape_unary, OP_NPU, NULL },
	{ "Reciprocal", 1, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Floor", 1, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Ceil", 1, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Round", 11, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Sin", 7, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Cos", 7, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Tan", 7, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Asin", 7, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Acos", 7, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Atan", 7, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Sinh", 9, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Cosh", 9, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Asinh", 9, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Acosh", 9, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Atanh", 9, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Softplus", 1, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Softsign", 1, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Elu", 1, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Selu", 1, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Celu", 12, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "ThresholdedRelu", 10, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Shrink", 9, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Sign", 9, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "Identity", 1, 0, npu_ir_shape_unary, OP_NPU, NULL },
	{ "Dropout", 1, 0, npu_ir_shape_dropout, OP_NPU, NULL },
	{ "Cast", 1, 0, npu_ir_shape_cast, OP_NPU, NULL },
	{ "CastLike", 15, 0, npu_ir_shape_cast_like, OP_NPU, NULL },
	{ "EyeLike", 9, 0, npu_ir_shape_eye_like, OP_NPU, NULL },
	{ "ReverseSequence", 10, 0, npu_ir_shape_unary, OP_NPU, NULL },
	{ "Trilu", 14, 0, npu_ir_shape_unary, OP_NPU, NULL },
	{ "Scatter", 9, 10, npu_ir_shape_scatter, OP_NPU, NULL },
	{ "ScatterElements", 11, 0, npu_ir_shape_scatter, OP_NPU, NULL },
	{ "ScatterND", 11, 0, npu_ir_shape_scatter, OP_NPU, NULL },
	{ "NegativeLogLikelihoodLoss", 12, 0, npu_ir_shape_nll_loss, OP_NPU, NULL },
	{ "SoftmaxCrossEntropyLoss", 12, 0, npu_ir_shape_nll_loss, OP_NPU, NULL },
	{ "GatherElements", 11, 0, npu_ir_shape_gather_elements, OP_NPU, NULL },
	{ "GatherND", 11, 0, npu_ir_shape_gather_nd, OP_NPU, NULL },
	/* normalization */
	{ "Softmax", 1, 0, npu_ir_shape_softmax, OP_NPU, NULL },
	{ "LogSoftmax", 1, 0, npu_ir_shape_softmax, OP_NPU, NULL },
	{ "Hardmax", 1, 0, npu_ir_shape_softmax, OP_NPU, NULL },
	{ "LayerNormalization", 17, 0, npu_ir_shape_layernorm, OP_NPU, NULL },
	{ "BatchNormalization", 1, 0, npu_ir_shape_batchnorm, OP_NPU, NULL },
	{ "InstanceNormalization", 6, 0, npu_ir_shape_instnorm, OP_NPU, NULL },
	{ "LRN", 1, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	{ "GridSample", 16, 0, npu_ir_shape_grid_sample, OP_NPU, NULL },
	{ "MeanVarianceNormalization", 9, 0, npu_ir_shape_unary_float, OP_NPU, NULL },
	/* pooling */
	{ "MaxPool", 1, 0, npu_ir_shape_pool, OP_NPU, support_maxpool },
	{ "AveragePool", 1, 0, npu_ir_shape_pool, OP_NPU, NULL },
	{ "GlobalAveragePool", 1, 0, npu_ir_shape_global_pool, OP_NPU, NULL },
	{ "GlobalMaxPool", 1, 0, npu_ir_shape_global_pool, OP_NPU, NULL },
	/* shape and layout */
	{ "Reshape", 5, 0, npu_ir_shape_reshape, OP_NPU, NULL },
	{ "Flatten", 1, 0, npu_ir_shape_flatten, OP_NPU, NULL },
	{ "Transpose", 1, 0, npu_ir_shape_transpose, OP_NPU, NULL },
	{ "Concat", 4, 0, npu_ir_shape_concat, OP_NPU, NULL },
	{ "Split", 2, 0, npu_ir_shape_split, OP_NPU, NULL },
	{ "Slice", 1, 0, npu_ir_shape_slice, OP_NPU, NULL },
	{ "Pad", 2, 0, npu_ir_shape_pad, OP_NPU, NULL },
	{ "Squeeze", 1, 0, npu_ir_shape_squeeze, OP_NPU, NULL },
	{ "Expand", 8, 0, npu_ir_shape_expand, OP_NPU, NULL },
	{ "Tile", 6, 0, npu_ir_shape_tile, OP_NPU, NULL },
	{ "DepthToSpace", 1, 0, npu_ir_shape_depth_space, OP_NPU, NULL },
	{ "SpaceToDepth", 1, 0, npu_ir_shape_depth_space, OP_NPU, NULL },
	{ "Unsqueeze", 1, 0, npu_ir_shape_unsqueeze, OP_NPU, NULL },
	/* reductions */
	{ "ReduceMean", 1, 0, npu_ir_shape_reduce, OP_NPU, NULL },
	{ "ReduceSum", 1, 0, npu_ir_shape_reduce, OP_NPU, NULL },
	{ "ReduceMax", 1, 0, npu_ir_shape_reduce, OP_NPU, NULL },
	{ "ReduceMin", 1, 0, npu_ir_shape_reduce, OP_NPU, NULL },
	{ "ReduceL1", 1, 0, npu_ir_shape_reduce, OP_NPU, NULL },
	{ "ReduceL2", 1, 0, npu_ir_shape_reduce, OP_NPU, NULL },
	{ "ReduceSumSquare", 1, 0, npu_ir_shape_reduce, OP_NPU, NULL },
	{ "ReduceLogSum", 1, 0, npu_ir_shape_reduce, OP_NPU, NULL },
	{ "ReduceLogSumExp", 1, 0, npu_ir_shape_reduce, OP_NPU, NULL },
	{ "ReduceProd", 1, 0, npu_ir_shape_reduce, OP_NPU, NULL },
	/* resize */
	{ "Resize", 10, 0, npu_ir_shape_resize, OP_NPU, support_resize },
	{ "Upsample", 7, 9, npu_ir_shape_upsample, OP_NPU, support_resize },
	/* quantized */
	{ "QuantizeLinear", 10, 0, npu_ir_shape_quantize, OP_NPU, NULL },
	{ "DynamicQuantizeLinear", 11, 0, npu_ir_shape_dyn_quant, OP_NPU, NULL },
	{ "DequantizeLinear", 10, 0, npu_ir_shape_dequantize, OP_NPU, NULL },
	{ "QLinearConv", 10, 0, npu_ir_shape_qlinear_conv, OP_NPU, NULL },
	{ "QLinearMatMul", 10, 0, npu_ir_shape_qlinear_matmul, OP_NPU, NULL },
	{ "MatMulInteger", 10, 0, npu_ir_shape_matmul_integer, OP_NPU, NULL },
	{ "ConvInteger", 10, 0, npu_ir_shape_conv_integer, OP_NPU, NULL },
	/* shape computations, folded to constants */
	{ "Shape", 1, 0, npu_ir_shape_shape, OP_CONST, NULL },
	{ "Size", 1, 0, npu_ir_shape_size, OP_CONST, NULL },
	{ "Gather", 1, 0, npu_ir_shape_gather, OP_NPU, support_gather },
	{ "ConstantOfShape", 9, 0, npu_ir_shape_constant_of_shape, OP_CONST, NULL },
	{ "Range", 11, 0, npu_ir_shape_range, OP_CONST, NULL },
};

static const struct op_def *find_op(const npu_ir_node *n)
{
	if (n->domain[0] && strcmp(n->domain, "ai.onnx") != 0)
		return NULL;
	for (size_t i = 0; i < NPU_ARRAY_SIZE(ops); i++)
		if (!strcmp(ops[i].op, n->op))
			return (n->opset >= ops[i].since &&
				(!ops[i].until || n->opset <= ops[i].until)) ? &ops[i] : NULL;
	return NULL;
}

bool npu_ir_op_known(const char *op, int opset)
{
	npu_ir_node n;

	memset(&n, 0, sizeof(n));
	n.op = (char *)op;
	n.domain = (char *)"";
	n.opset = opset;
	return find_op(&n) != NULL;
}

/* The standard message, plus @why when given. */
static npu_status unsupported(const npu_ir_node *n, const char *why)
{
	char lbl[96], dom[160] = "";

	if (n->domain[0] && strcmp(n->domain, "ai.onnx") != 0)
		snprintf(dom, sizeof(dom), "%s.", n->domain);
	npu_ir_node_label(n, lbl, sizeof(lbl));
	if (why)
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"operator '%s%s' (node %s, opset %d) is not supported by the NPU compiler: %s",
				dom, n->op, lbl, n->opset, why);
	return npu_fail(NPU_ERR_UNSUPPORTED,
			"operator '%s%s' (node %s, opset %d) is not supported by the NPU compiler",
			dom, n->op, lbl, n->opset);
}

static npu_status unknown_op(const npu_ir_node *n)
{
	char why[96];

	if (!n->domain[0] || !strcmp(n->domain, "ai.onnx")) {
		for (size_t i = 0; i < NPU_ARRAY_SIZE(ops); i++) {
			if (strcmp(ops[i].op, n->op))
				continue;
			if (n->opset < ops[i].since)
				snprintf(why, sizeof(why), "it needs opset %d or later", ops[i].since);
			else
				snprintf(why, sizeof(why), "it was removed after opset %d", ops[i].until);
			return unsupported(n, why);
		}
	}
	return unsupported(n, NULL);
}

npu_status npu_ir_check_supported(const npu_ir_graph *g, int *bad_node)
{
	char why[128];

	if (bad_node)
		*bad_node = -1;
	for (int i = 0; i < g->n_nodes; i++) {
		const npu_ir_node *n = &g->nodes[i];
		const struct op_def *d = find_op(n);
		const char *w;

		if (n->dead)
			continue;
		if (bad_node)
			*bad_node = i;
		if (!d)
			return unknown_op(n);
		if ((d->flags & OP_CONST) && npu_ir_const_can_eval(g, n))
			return unsupported(n, "its constant output is too large to fold");
		if (d->flags & OP_CONST)
			return unsupported(n, "only on constant inputs, which fold away");
		if (d->support && (w = d->support(g, n))) {
			snprintf(why, sizeof(why), "%s supported", w);
			return unsupported(n, why);
		}
	}
	if (bad_node)
		*bad_node = -1;
	return NPU_OK;
}

npu_status npu_ir_infer_shapes(npu_ir_graph *g)
{
	size_t folded = 0;
	npu_status st;

	g->need_const = -1;
	st = npu_ir_topo_sort(g);
	if (!st)	/* what no output needs is neither inferred nor checked */
		st = npu_ir_remove_dead(g);
	if (st)
		return st;
	for (int i = 0; i < g->n_inputs; i++) {
		const npu_ir_tensor *t = &g->tensors[g->inputs[i]];
		char sh[160];

		if (!t->dtype)
			return npu_fail(NPU_ERR_SHAPE, "graph input '%s' has no dtype", t->name);
		if (!npu_ir_shape_known(t))
			return npu_fail(NPU_ERR_SHAPE,
					"graph input '%s' has the dynamic shape %s: the NPU needs static shapes, so give it one",
					t->name, npu_ir_shape_str(t, sh, sizeof(sh)));
	}
	for (int i = 0; i < g->n_nodes; i++) {
		npu_ir_node *n = &g->nodes[i];
		const struct op_def *d = find_op(n);
		npu_ir_tensor *y;

		if (n->dead)
			continue;
		if (!d)
			return unknown_op(n);
		for (int j = 0; j < n->n_inputs; j++) {
			const npu_ir_tensor *t = in(g, n, j);

			if (t && (!t->dtype || !npu_ir_shape_known(t)))
				return npu_sh_err(n, NPU_ERR_SHAPE, "input '%s' has no known shape",
						  t->name);
		}
		st = d->infer(g, n);
		if (st)
			return st;
		for (int j = 0; j < n->n_outputs; j++) {
			const npu_ir_tensor *t = npu_ir_output(g, n, j);

			if (t && (!t->dtype || !npu_ir_shape_known(t)))
				return npu_sh_err(n, NPU_ERR_FORMAT, "output %d ('%s') is not one that %s has",
						  j, t->name, n->op);
		}
		y = npu_ir_output(g, n, 0);
		if (y && npu_ir_const_can_eval(g, n)) {
			size_t bytes = (size_t)npu_ir_numel(y) * npu_dtype_size(y->dtype);

			if (bytes > FOLD_MAX_BYTES || folded + bytes > FOLD_TOTAL_BYTES)
				continue;
			st = npu_ir_const_eval(g, i);
			if (st)
				return st;
			folded += bytes;
			n = &g->nodes[i];
			n->dead = true;
		}
	}
	for (int i = 0; i < g->n_outputs; i++) {
		const npu_ir_tensor *t = &g->tensors[g->outputs[i]];

		if (!t->dtype || !npu_ir_shape_known(t))
			return npu_fail(NPU_ERR_SHAPE, "graph output '%s' has no known shape", t->name);
	}
	return npu_ir_remove_dead(g);
}
