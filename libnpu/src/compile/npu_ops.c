// SPDX-License-Identifier: MIT
/*
 * The operator registry (npu_ops.h): one table of every ONNX operator
 * libnpu knows, with its IR rules, whether and how the compiler runs it,
 * and the lookups the passes use.
 *
 * The table is sorted by name (strcmp order), then by since, and looked up
 * by binary search.  It is kept sorted by hand and the unit test
 * (tests/libnpu/test_ops.c) checks the order and that one operator's
 * opset ranges do not overlap: a static const table needs no
 * initialisation, no lock and no writable state, which sorting at first
 * use (pthread_once) would add to every lookup path for the sake of a
 * mistake the test catches at once.
 */
#include <stdio.h>
#include <string.h>

#include "compile/npu_ops.h"
#include "compile/npu_rewrite_priv.h"

/* ---- support checks ---- */

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
	/* The compiler's rewrite (rewrite_resize.c) has no antialiasing
	 * filter and resizes every axis. */
	if (npu_ir_attr_int(n, "antialias", 0, &antialias) || antialias)
		return "antialias is not";
	if (npu_ir_attr_find(n, "axes"))
		return "the axes attribute is not";
	return NULL;
}

/* The Indices output of a 2-D float32 pool is a rewrite's (rewrite_detect.c). */
static const char *support_maxpool(const npu_ir_graph *g, const npu_ir_node *n)
{
	(void)g;
	if (n->n_outputs > 1 && n->outputs[1] >= 0)
		return "its Indices output (other than of a 2-D float32 pool) is not";
	return NULL;
}

/*
 * Gather: constant indices become Slices and a Concat (rewrite_move.c);
 * computed ones an indexed GSDU gather (lower_gather.c), which takes int32.
 */
static const char *support_gather(const npu_ir_graph *g, const npu_ir_node *n)
{
	const npu_ir_tensor *ind = n->n_inputs > 1 && n->inputs[1] >= 0 ?
				   &g->tensors[n->inputs[1]] : NULL;

	if (!ind || (!npu_ir_is_const(ind) && ind->dtype != NPU_DTYPE_INT32))
		return "only with constant or int32 indices is";
	return NULL;
}

/*
 * Where: a constant condition with float32 values becomes a float mask
 * (rewrite_select.c); any other a CVU SELECT (lower_eltwise.c), which
 * copies values of up to 4 bytes (int64 ones are int32 on the device).
 */
static const char *support_where(const npu_ir_graph *g, const npu_ir_node *n)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 1), *y = npu_ir_input(g, n, 2);
	unsigned dt = x ? npu_cc_hw_dtype(x->dtype) : 0;

	if (!npu_ir_input(g, n, 0) || !x || !y)
		return "only with its three inputs is";
	if (x->dtype != NPU_DTYPE_INT64 && (!dt || npu_cc_hw_size(dt) > 4))
		return "only on float32, float16, bfloat16, int64, int32, int8, uint8 and bool values is";
	return NULL;
}

/* Gelu: exact (erf) or its tanh approximation, both CVU/TCU functions. */
static const char *support_gelu(const npu_ir_graph *g, const npu_ir_node *n)
{
	const char *a = "none";

	(void)g;
	if (npu_ir_attr_string(n, "approximate", "none", &a) ||
	    (strcmp(a, "none") && strcmp(a, "tanh")))
		return "only approximate \"none\" or \"tanh\" is";
	return NULL;
}

/* Swish: NPU_FN_SILU is x sigmoid(x), alpha 1. */
static const char *support_swish(const npu_ir_graph *g, const npu_ir_node *n)
{
	float alpha = 1.0f;

	(void)g;
	if (npu_ir_attr_float(n, "alpha", 1.0f, &alpha) || alpha != 1.0f)
		return "only alpha 1 (SiLU) is";
	return NULL;
}

/* Einsum: Transposes, MatMuls, Muls and ReduceSums of float32 (rewrite_einsum.c). */
static const char *support_einsum(const npu_ir_graph *g, const npu_ir_node *n)
{
	for (int i = 0; i < n->n_inputs; i++) {
		const npu_ir_tensor *x = npu_ir_input(g, n, i);

		if (!x || x->dtype != NPU_DTYPE_FLOAT32)
			return "only on float32 operands is";
	}
	return NULL;
}

/* LSTM, GRU, RNN: what the unrolling rewrite (rewrite_rnn.c) needs. */
static const char *support_rnn(const npu_ir_graph *g, const npu_ir_node *n)
{
	return npu_rnn_unsupported(g, n);
}

/* ---- the table ---- */

/* Elementwise operators: the CVU function, of one input or of two. */
#define CVU_UNARY(f)	.lower = npu_lower_eltwise, .cvu = { f, NPU_OP_CVU_UNARY }
#define CVU_BINARY(f)	.lower = npu_lower_eltwise, .cvu = { f, NPU_OP_CVU_BINARY }

/*
 * { name, since, until (0: current), NPU_OP_*, then by name what applies:
 *   .ir.shape (every entry), .ir.eval (folds as a constant), .support,
 *   .lower (NULL: a rewrite or the fusion pass turns it into operators
 *   that have one), .rewrites (tried in order, before fusion) }
 */
static const struct npu_op ops[] = {
	{ "Abs", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary, CVU_UNARY(NPU_FN_ABS) },
	{ "Acos", 7, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float, CVU_UNARY(NPU_FN_ACOS) },
	{ "Acosh", 9, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float,
	  CVU_UNARY(NPU_FN_ACOSH) },
	{ "Add", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_binary,
	  .ir.eval = npu_ir_eval_add, CVU_BINARY(NPU_FN_ADD),
	  .rewrites = { npu_rewrite_8bit } },
	{ "And", 7, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_logical,
	  .ir.eval = npu_ir_eval_and, CVU_BINARY(NPU_FN_AND) },
	{ "ArgMax", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_argreduce,
	  .lower = npu_lower_argreduce },
	{ "ArgMin", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_argreduce,
	  .lower = npu_lower_argreduce },
	{ "Asin", 7, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float, CVU_UNARY(NPU_FN_ASIN) },
	{ "Asinh", 9, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float,
	  CVU_UNARY(NPU_FN_ASINH) },
	{ "Atan", 7, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float, CVU_UNARY(NPU_FN_ATAN) },
	{ "Atanh", 9, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float,
	  CVU_UNARY(NPU_FN_ATANH) },
	{ "AveragePool", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_pool, .lower = npu_lower_pool,
	  .rewrites = { npu_rewrite_pool3d } },
	{ "BatchNormalization", 1, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_batchnorm,
	  .rewrites = { npu_rewrite_batchnorm_training } },
	{ "BitShift", 11, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_binary,
	  .rewrites = { npu_rewrite_bitshift, npu_rewrite_bitshift_int } },
	/* Signal processing (issue 17): window functions fold at compile time. */
	{ "BlackmanWindow", 17, 0, NPU_OP_CONST, .ir.shape = npu_ir_shape_window,
	  .ir.eval = npu_ir_eval_window },
	{ "Cast", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_cast,
	  .ir.eval = npu_ir_eval_cast, .lower = npu_lower_quant,
	  .rewrites = { npu_rewrite_cast_int8 } },
	{ "CastLike", 15, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_cast_like,
	  .rewrites = { npu_rewrite_cast_like } },
	{ "Ceil", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float, CVU_UNARY(NPU_FN_CEIL) },
	{ "Celu", 12, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float, CVU_UNARY(NPU_FN_CELU) },
	{ "Clip", 1, 0, NPU_OP_NPU | NPU_OP_TCU_ACT, .ir.shape = npu_ir_shape_clip, CVU_UNARY(NPU_FN_CLIP),
	  .rewrites = { npu_rewrite_8bit, npu_rewrite_clip_runtime } },
	/* Compress, NonZero, OneHot, TopK: detection and ranking (issue 17) */
	{ "Compress", 9, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_compress,
	  .rewrites = { npu_rewrite_compress } },
	{ "Concat", 4, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_concat,
	  .ir.eval = npu_ir_eval_concat, .lower = npu_lower_concat,
	  .rewrites = { npu_rewrite_swap_halves } },
	{ "ConstantOfShape", 9, 0, NPU_OP_CONST, .ir.shape = npu_ir_shape_constant_of_shape,
	  .ir.eval = npu_ir_eval_constant_of_shape },
	{ "Conv", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_conv, .lower = npu_lower_conv,
	  .rewrites = { npu_rewrite_conv3d, npu_rewrite_conv_fold, npu_rewrite_conv_bf16x3 } },
	{ "ConvInteger", 10, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_conv_integer,
	  .lower = npu_lower_conv },
	{ "ConvTranspose", 1, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_conv_transpose,
	  .rewrites = { npu_rewrite_conv_transpose } },
	{ "Cos", 7, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float, CVU_UNARY(NPU_FN_COS) },
	{ "Cosh", 9, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float, CVU_UNARY(NPU_FN_COSH) },
	{ "CumSum", 11, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary, .lower = npu_lower_cumsum },
	/* Signal processing (issue 17): a MatMul by a constant cos/sin basis (rewrite_signal.c) */
	{ "DFT", 17, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_dft,
	  .rewrites = { npu_rewrite_dft } },
	{ "DepthToSpace", 1, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_depth_space,
	  .rewrites = { npu_rewrite_depth_space } },
	{ "DequantizeLinear", 10, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_dequantize,
	  .lower = npu_lower_quant,
	  .rewrites = { npu_rewrite_quant_axis } },
	/* CPU fallback only (issue 17, host/host_det.c). */
	{ "Det", 11, 0, NPU_OP_HOST, .ir.shape = npu_ir_shape_det },
	{ "Div", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_binary,
	  .ir.eval = npu_ir_eval_div, CVU_BINARY(NPU_FN_DIV),
	  .rewrites = { npu_rewrite_8bit } },
	{ "Dropout", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_dropout, .lower = npu_lower_alias,
	  .rewrites = { npu_rewrite_dropout_mask } },
	{ "DynamicQuantizeLinear", 11, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_dyn_quant,
	  .rewrites = { npu_rewrite_dyn_quant } },
	{ "Einsum", 12, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_einsum,
	  .support = support_einsum,
	  .rewrites = { npu_rewrite_einsum } },
	{ "Elu", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float, CVU_UNARY(NPU_FN_ELU) },
	{ "Equal", 7, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_compare,
	  .ir.eval = npu_ir_eval_equal, CVU_BINARY(NPU_FN_EQUAL) },
	{ "Erf", 9, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float, CVU_UNARY(NPU_FN_ERF) },
	{ "Exp", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float, CVU_UNARY(NPU_FN_EXP) },
	{ "Expand", 8, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_expand,
	  .ir.eval = npu_ir_eval_expand,
	  .rewrites = { npu_rewrite_repeat } },
	{ "EyeLike", 9, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_eye_like,
	  .rewrites = { npu_rewrite_eye_like } },
	{ "Flatten", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_flatten,
	  .ir.eval = npu_ir_eval_copy, .lower = npu_lower_alias },
	{ "Floor", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float,
	  CVU_UNARY(NPU_FN_FLOOR) },
	{ "GRU", 7, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_rnn,
	  .support = support_rnn, .rewrites = { npu_rewrite_rnn } },
	{ "Gather", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_gather,
	  .ir.eval = npu_ir_eval_gather, .support = support_gather, .lower = npu_lower_gather,
	  .rewrites = { npu_rewrite_gather } },
	{ "GatherElements", 11, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_gather_elements,
	  .rewrites = { npu_rewrite_gather_elements } },
	{ "GatherND", 11, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_gather_nd,
	  .rewrites = { npu_rewrite_gather_elements } },
	/* approximate "tanh": NPU_FN_GELU_TANH (npu_op_cvu_fn) */
	{ "Gelu", 20, 0, NPU_OP_NPU | NPU_OP_TCU_ACT, .ir.shape = npu_ir_shape_unary_float,
	  .support = support_gelu, CVU_UNARY(NPU_FN_GELU) },
	{ "Gemm", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_gemm, .lower = npu_lower_matmul,
	  .rewrites = { npu_rewrite_gemm_matrix_c } },
	{ "GlobalAveragePool", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_global_pool,
	  .lower = npu_lower_global_pool },
	{ "GlobalMaxPool", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_global_pool,
	  .lower = npu_lower_global_pool },
	{ "Greater", 7, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_compare,
	  .ir.eval = npu_ir_eval_greater, CVU_BINARY(NPU_FN_GREATER) },
	{ "GreaterOrEqual", 12, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_compare,
	  .ir.eval = npu_ir_eval_greater_equal, CVU_BINARY(NPU_FN_GREATER_EQUAL) },
	{ "GridSample", 16, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_grid_sample,
	  .rewrites = { npu_rewrite_grid_sample } },
	{ "HammingWindow", 17, 0, NPU_OP_CONST, .ir.shape = npu_ir_shape_window,
	  .ir.eval = npu_ir_eval_window },
	{ "HannWindow", 17, 0, NPU_OP_CONST, .ir.shape = npu_ir_shape_window,
	  .ir.eval = npu_ir_eval_window },
	{ "HardSigmoid", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float,
	  CVU_UNARY(NPU_FN_HARDSIGMOID) },
	{ "HardSwish", 14, 0, NPU_OP_NPU | NPU_OP_TCU_ACT, .ir.shape = npu_ir_shape_unary_float,
	  CVU_UNARY(NPU_FN_HARDSWISH) },
	{ "Hardmax", 1, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_softmax,
	  .rewrites = { npu_rewrite_hardmax } },
	{ "Identity", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary,
	  .ir.eval = npu_ir_eval_copy, .lower = npu_lower_alias },
	{ "InstanceNormalization", 6, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_instnorm,
	  .rewrites = { npu_rewrite_instnorm } },
	{ "IsInf", 10, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_is_class,
	  .rewrites = { npu_rewrite_isinf } },
	{ "IsNaN", 9, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_is_class,
	  .rewrites = { npu_rewrite_isnan } },
	{ "LRN", 1, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_unary_float,
	  .rewrites = { npu_rewrite_lrn } },
	{ "LSTM", 7, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_rnn,
	  .support = support_rnn, .rewrites = { npu_rewrite_rnn } },
	{ "LayerNormalization", 17, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_layernorm,
	  .lower = npu_lower_layernorm,
	  .rewrites = { npu_rewrite_layernorm_stats } },
	{ "LeakyRelu", 1, 0, NPU_OP_NPU | NPU_OP_TCU_ACT, .ir.shape = npu_ir_shape_unary_float,
	  CVU_UNARY(NPU_FN_LEAKY_RELU) },
	{ "Less", 7, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_compare,
	  .ir.eval = npu_ir_eval_less, CVU_BINARY(NPU_FN_LESS) },
	{ "LessOrEqual", 12, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_compare,
	  .ir.eval = npu_ir_eval_less_equal, CVU_BINARY(NPU_FN_LESS_EQUAL) },
	{ "Log", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float, CVU_UNARY(NPU_FN_LOG) },
	{ "LogSoftmax", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_softmax,
	  .lower = npu_lower_softmax },
	{ "MatMul", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_matmul, .lower = npu_lower_matmul,
	  .rewrites = { npu_rewrite_batched_matmul } },
	{ "MatMulInteger", 10, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_matmul_integer,
	  .lower = npu_lower_matmul },
	/* rewrites: Split first: each binary node is then converted on its own (the other way round converts once, a different graph). */
	{ "Max", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_variadic,
	  .ir.eval = npu_ir_eval_max, CVU_BINARY(NPU_FN_MAX),
	  .rewrites = { npu_rewrite_variadic, npu_rewrite_8bit, npu_rewrite_f16,
			npu_rewrite_minmax_int } },
	/* rewrites: Either order: an 8-bit 3-D pool goes float32, then 2-D. */
	{ "MaxPool", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_pool,
	  .support = support_maxpool, .lower = npu_lower_pool,
	  .rewrites = { npu_rewrite_pool3d, npu_rewrite_8bit, npu_rewrite_maxpool_indices } },
	{ "Mean", 1, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_variadic,
	  .rewrites = { npu_rewrite_variadic } },
	{ "MeanVarianceNormalization", 9, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_unary_float,
	  .rewrites = { npu_rewrite_mvn } },
	{ "MelWeightMatrix", 17, 0, NPU_OP_CONST, .ir.shape = npu_ir_shape_mel_weight,
	  .ir.eval = npu_ir_eval_mel_weight },
	/* rewrites: as Max */
	{ "Min", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_variadic,
	  .ir.eval = npu_ir_eval_min, CVU_BINARY(NPU_FN_MIN),
	  .rewrites = { npu_rewrite_variadic, npu_rewrite_8bit, npu_rewrite_f16,
			npu_rewrite_minmax_int } },
	/*
	 * rewrites: One fits: 8-bit and float16 leave a float32 Mod for
	 * npu_rewrite_mod.  int32 (int64 narrowed) is the CVU's exact MOD,
	 * FMOD with fmod = 1 (npu_op_cvu_fn; ISA 1.4, issue 17).
	 */
	{ "Mod", 10, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_binary,
	  .ir.eval = npu_ir_eval_mod, CVU_BINARY(NPU_FN_MOD),
	  .rewrites = { npu_rewrite_8bit, npu_rewrite_f16, npu_rewrite_mod } },
	/* rewrites: One fits: 8-bit operands, or a rotary Neg folded into a constant. */
	{ "Mul", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_binary,
	  .ir.eval = npu_ir_eval_mul, CVU_BINARY(NPU_FN_MUL),
	  .rewrites = { npu_rewrite_8bit, npu_rewrite_rotate_half } },
	{ "Neg", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary,
	  .ir.eval = npu_ir_eval_neg, CVU_UNARY(NPU_FN_NEG) },
	{ "NegativeLogLikelihoodLoss", 12, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_nll_loss,
	  .rewrites = { npu_rewrite_nll_loss } },
	/* Outputs of run-time size: only the CPU fallback runs them (issue 17, host/). */
	{ "NonMaxSuppression", 10, 0, NPU_OP_HOST, .ir.shape = npu_ir_shape_nms },
	{ "NonZero", 9, 0, NPU_OP_CONST, .ir.shape = npu_ir_shape_nonzero,
	  .ir.eval = npu_ir_eval_nonzero },
	{ "Not", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_not, .ir.eval = npu_ir_eval_not,
	  CVU_UNARY(NPU_FN_NOT) },
	{ "OneHot", 9, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_onehot,
	  .rewrites = { npu_rewrite_onehot } },
	{ "Or", 7, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_logical, .ir.eval = npu_ir_eval_or,
	  CVU_BINARY(NPU_FN_OR) },
	{ "PRelu", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_prelu, CVU_BINARY(NPU_FN_PRELU) },
	{ "Pad", 2, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_pad, .lower = npu_lower_pad,
	  .rewrites = { npu_rewrite_pad } },
	{ "Pow", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_binary, CVU_BINARY(NPU_FN_POW),
	  .rewrites = { npu_rewrite_pow_int, npu_rewrite_pow_int_base } },
	{ "QLinearConv", 10, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_qlinear_conv,
	  .lower = npu_lower_conv },
	{ "QLinearMatMul", 10, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_qlinear_matmul,
	  .lower = npu_lower_matmul,
	  .rewrites = { npu_rewrite_batched_matmul } },
	/* rewrites: One fits: per-axis constant parameters, or computed per-tensor ones. */
	{ "QuantizeLinear", 10, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_quantize,
	  .lower = npu_lower_quant,
	  .rewrites = { npu_rewrite_quant_axis, npu_rewrite_quant_computed } },
	/* LAYERNORM with NPU_CVU_F_RMS; fuse_pattern.c makes it from LLaMA's RMSNorm */
	{ "RMSNormalization", 23, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_layernorm,
	  .lower = npu_lower_layernorm },
	{ "RNN", 7, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_rnn,
	  .support = support_rnn, .rewrites = { npu_rewrite_rnn } },
	{ "Range", 11, 0, NPU_OP_CONST, .ir.shape = npu_ir_shape_range,
	  .ir.eval = npu_ir_eval_range },
	{ "Reciprocal", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float,
	  CVU_UNARY(NPU_FN_RECIP) },
	{ "ReduceL1", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_reduce,
	  .lower = npu_lower_reduce },
	{ "ReduceL2", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_reduce,
	  .lower = npu_lower_reduce },
	{ "ReduceLogSum", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_reduce,
	  .lower = npu_lower_reduce },
	{ "ReduceLogSumExp", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_reduce,
	  .lower = npu_lower_reduce },
	{ "ReduceMax", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_reduce,
	  .lower = npu_lower_reduce,
	  .rewrites = { npu_rewrite_reduce_runs } },
	{ "ReduceMean", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_reduce,
	  .lower = npu_lower_reduce,
	  .rewrites = { npu_rewrite_reduce_runs } },
	{ "ReduceMin", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_reduce,
	  .lower = npu_lower_reduce,
	  .rewrites = { npu_rewrite_reduce_runs } },
	{ "ReduceProd", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_reduce,
	  .lower = npu_lower_reduce,
	  .rewrites = { npu_rewrite_reduce_runs } },
	{ "ReduceSum", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_reduce,
	  .lower = npu_lower_reduce,
	  .rewrites = { npu_rewrite_reduce_runs } },
	{ "ReduceSumSquare", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_reduce,
	  .lower = npu_lower_reduce },
	{ "Relu", 1, 0, NPU_OP_NPU | NPU_OP_TCU_ACT, .ir.shape = npu_ir_shape_unary, CVU_UNARY(NPU_FN_RELU) },
	{ "Reshape", 5, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_reshape,
	  .ir.eval = npu_ir_eval_copy, .lower = npu_lower_alias },
	{ "Resize", 10, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_resize, .support = support_resize,
	  .rewrites = { npu_rewrite_resize } },
	{ "ReverseSequence", 10, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_unary,
	  .rewrites = { npu_rewrite_reverse_sequence } },
	/* CPU fallback only (issue 17, host/host_roialign.c). */
	{ "RoiAlign", 10, 0, NPU_OP_HOST, .ir.shape = npu_ir_shape_roialign },
	{ "Round", 11, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float,
	  CVU_UNARY(NPU_FN_ROUND) },
	/* Signal processing (issue 17): a strided Conv by the windowed basis (rewrite_signal.c) */
	{ "STFT", 17, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_stft,
	  .rewrites = { npu_rewrite_stft } },
	{ "Scatter", 9, 10, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_scatter,
	  .rewrites = { npu_rewrite_scatter } },
	{ "ScatterElements", 11, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_scatter,
	  .rewrites = { npu_rewrite_scatter } },
	{ "ScatterND", 11, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_scatter,
	  .rewrites = { npu_rewrite_scatter, npu_rewrite_scatter_nd_rows } },
	{ "Selu", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float, CVU_UNARY(NPU_FN_SELU) },
	{ "Shape", 1, 0, NPU_OP_CONST, .ir.shape = npu_ir_shape_shape,
	  .ir.eval = npu_ir_eval_shape, .ir.eval_flags = NPU_IR_EVAL_SHAPES },
	{ "Shrink", 9, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float,
	  CVU_UNARY(NPU_FN_SHRINK) },
	{ "Sigmoid", 1, 0, NPU_OP_NPU | NPU_OP_TCU_ACT, .ir.shape = npu_ir_shape_unary_float,
	  CVU_UNARY(NPU_FN_SIGMOID) },
	{ "Sign", 9, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float, CVU_UNARY(NPU_FN_SIGN) },
	{ "Sin", 7, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float, CVU_UNARY(NPU_FN_SIN) },
	{ "Sinh", 9, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float, CVU_UNARY(NPU_FN_SINH) },
	{ "Size", 1, 0, NPU_OP_CONST, .ir.shape = npu_ir_shape_size,
	  .ir.eval = npu_ir_eval_size, .ir.eval_flags = NPU_IR_EVAL_SHAPES },
	{ "Slice", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_slice,
	  .ir.eval = npu_ir_eval_slice, .lower = npu_lower_slice },
	{ "Softmax", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_softmax,
	  .lower = npu_lower_softmax },
	{ "SoftmaxCrossEntropyLoss", 12, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_nll_loss,
	  .rewrites = { npu_rewrite_sce_loss } },
	{ "Softplus", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float,
	  CVU_UNARY(NPU_FN_SOFTPLUS) },
	{ "Softsign", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float,
	  CVU_UNARY(NPU_FN_SOFTSIGN) },
	{ "SpaceToDepth", 1, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_depth_space,
	  .rewrites = { npu_rewrite_depth_space } },
	{ "Split", 2, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_split,
	  .ir.eval = npu_ir_eval_split, .ir.eval_flags = NPU_IR_EVAL_OUTPUTS, .lower = npu_lower_split },
	{ "Sqrt", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float,
	  .ir.eval = npu_ir_eval_sqrt, CVU_UNARY(NPU_FN_SQRT) },
	{ "Squeeze", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_squeeze,
	  .ir.eval = npu_ir_eval_copy, .lower = npu_lower_alias },
	{ "Sub", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_binary,
	  .ir.eval = npu_ir_eval_sub, CVU_BINARY(NPU_FN_SUB),
	  .rewrites = { npu_rewrite_8bit } },
	{ "Sum", 1, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_variadic,
	  .rewrites = { npu_rewrite_variadic } },
	{ "Swish", 24, 0, NPU_OP_NPU | NPU_OP_TCU_ACT, .ir.shape = npu_ir_shape_unary_float,
	  .support = support_swish, CVU_UNARY(NPU_FN_SILU) },
	{ "Tan", 7, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float, CVU_UNARY(NPU_FN_TAN) },
	{ "Tanh", 1, 0, NPU_OP_NPU | NPU_OP_TCU_ACT, .ir.shape = npu_ir_shape_unary_float, CVU_UNARY(NPU_FN_TANH) },
	{ "ThresholdedRelu", 10, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unary_float,
	  CVU_UNARY(NPU_FN_THRESHOLDED_RELU) },
	{ "Tile", 6, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_tile,
	  .ir.eval = npu_ir_eval_tile,
	  .rewrites = { npu_rewrite_repeat } },
	{ "TopK", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_topk, .lower = npu_lower_topk },
	{ "Transpose", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_transpose,
	  .ir.eval = npu_ir_eval_transpose, .lower = npu_lower_transpose },
	{ "Trilu", 14, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_unary,
	  .rewrites = { npu_rewrite_trilu } },
	{ "Unique", 11, 0, NPU_OP_HOST, .ir.shape = npu_ir_shape_unique },
	{ "Unsqueeze", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_unsqueeze,
	  .ir.eval = npu_ir_eval_copy, .lower = npu_lower_alias },
	{ "Upsample", 7, 9, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_upsample,
	  .support = support_resize,
	  .rewrites = { npu_rewrite_resize } },
	{ "Where", 9, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_where,
	  .ir.eval = npu_ir_eval_where, .support = support_where, .lower = npu_lower_where,
	  .rewrites = { npu_rewrite_where } },
	{ "Xor", 7, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_logical, .ir.eval = npu_ir_eval_xor,
	  CVU_BINARY(NPU_FN_XOR) },
	/*
	 * libnpu's own operators (lower case, after every ONNX name): made by
	 * rewrites, never folded.  NPU_OP_SCATTER_ROWS (npu_lower.h).
	 */
	/* An ONNX If (issue 17, onnx/npu_onnx_if.c, rewrite_control.c). */
	{ "npu.IfSelect", 1, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_if_select,
	  .ir.eval = npu_ir_eval_if_select, .rewrites = { npu_rewrite_if_select } },
	/* An ONNX Loop (issue 17, onnx/npu_onnx_if.c, lower_loop.c): control steps. */
	{ "npu.LoopBegin", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_loop_begin,
	  .lower = npu_lower_loop_begin },
	{ "npu.LoopEnd", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_loop_end,
	  .lower = npu_lower_loop_end },
	{ "npu.ScatterRows", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_scatter_rows,
	  .lower = npu_lower_scatter_rows },
};

#undef CVU_UNARY
#undef CVU_BINARY

#define NOPS NPU_ARRAY_SIZE(ops)

/* MatMulNBits: packed weights, scales and zero points as lower_qmatmul.c takes them. */
static const char *support_matmul_nbits(const npu_ir_graph *g, const npu_ir_node *n)
{
	return npu_matmul_nbits_refusal(g, n);
}

/*
 * The com.microsoft domain (onnxruntime's contrib operators): only what
 * quantised LLMs ship, looked up by name (a handful of entries).
 */
static const struct npu_op ms_ops[] = {
	{ "MatMulNBits", 1, 0, NPU_OP_NPU, .ir.shape = npu_ir_shape_matmul_nbits,
	  .support = support_matmul_nbits, .lower = npu_lower_matmul_nbits },
};

#define MS_DOMAIN "com.microsoft"

/*
 * ai.onnx.preview.training: the optimisers, elementwise formulas of their
 * inputs (rewrite_train.c), one update of a model's weights per run.
 */
static const struct npu_op train_ops[] = {
	{ "Adagrad", 1, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_optimizer,
	  .rewrites = { npu_rewrite_optimizer } },
	{ "Adam", 1, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_optimizer,
	  .rewrites = { npu_rewrite_optimizer } },
	{ "Momentum", 1, 0, NPU_OP_NPU | NPU_OP_BY_REWRITE, .ir.shape = npu_ir_shape_optimizer,
	  .rewrites = { npu_rewrite_optimizer } },
};

#define TRAIN_DOMAIN "ai.onnx.preview.training"

const struct npu_op *npu_ops_table(size_t *count)
{
	*count = NOPS;
	return ops;
}

/* The first entry named @name, or NULL. */
static const struct npu_op *first_named(const char *name)
{
	size_t lo = 0, hi = NOPS;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(ops[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < NOPS && !strcmp(ops[lo].name, name) ? &ops[lo] : NULL;
}

static bool same_name(const struct npu_op *d, const char *name)
{
	return d < ops + NOPS && !strcmp(d->name, name);
}

const struct npu_op *npu_op_get(const char *name, int opset)
{
	for (const struct npu_op *d = first_named(name); d && same_name(d, name); d++)
		if (opset >= d->since && (!d->until || opset <= d->until))
			return d;
	return NULL;
}

unsigned npu_op_cvu_fn(const struct npu_op *d, const npu_ir_node *n)
{
	const char *a = "none";
	int64_t fmod = 0;

	if (d->cvu.fn == NPU_FN_MOD && !npu_ir_attr_int(n, "fmod", 0, &fmod) && fmod)
		return NPU_FN_FMOD;
	if (d->cvu.fn == NPU_FN_GELU && !npu_ir_attr_string(n, "approximate", "none", &a) &&
	    !strcmp(a, "tanh"))
		return NPU_FN_GELU_TANH;
	return d->cvu.fn;
}

bool npu_ops_known(const char *op, int opset)
{
	return npu_op_get(op, opset) != NULL;
}

static bool default_domain(const npu_ir_node *n)
{
	return !n->domain[0] || !strcmp(n->domain, "ai.onnx");
}

/* Node @n's entry: the default domain's table, or com.microsoft's. */
static const struct npu_op *node_op(const npu_ir_node *n)
{
	if (default_domain(n))
		return npu_op_get(n->op, n->opset);
	if (!strcmp(n->domain, MS_DOMAIN))
		for (size_t i = 0; i < NPU_ARRAY_SIZE(ms_ops); i++)
			if (!strcmp(ms_ops[i].name, n->op) && n->opset >= ms_ops[i].since &&
			    (!ms_ops[i].until || n->opset <= ms_ops[i].until))
				return &ms_ops[i];
	if (!strcmp(n->domain, TRAIN_DOMAIN))
		for (size_t i = 0; i < NPU_ARRAY_SIZE(train_ops); i++)
			if (!strcmp(train_ops[i].name, n->op) && n->opset >= train_ops[i].since)
				return &train_ops[i];
	return NULL;
}

const struct npu_op *npu_op_of(const npu_ir_node *n)
{
	return node_op(n);
}

/* The standard message, plus @why when given. */
static npu_status unsupported(const npu_ir_node *n, const char *why)
{
	char lbl[96], dom[160] = "";

	if (!default_domain(n))
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

/* Node @n's operator has no entry at its opset: say whether another opset has one. */
static npu_status unknown_op(const npu_ir_node *n)
{
	const struct npu_op *d = default_domain(n) ? first_named(n->op) : NULL;
	char why[96];

	if (!d)
		return unsupported(n, NULL);
	if (n->opset < d->since) {
		snprintf(why, sizeof(why), "it needs opset %d or later", d->since);
	} else {
		/* The last definition before the node's opset ended. */
		while (same_name(d + 1, n->op) && d[1].since <= n->opset)
			d++;
		snprintf(why, sizeof(why), "it was removed after opset %d", d->until);
	}
	return unsupported(n, why);
}

npu_status npu_op_find(const npu_ir_node *n, const struct npu_op **out)
{
	*out = node_op(n);
	return *out ? NPU_OK : unknown_op(n);
}

npu_lower_fn npu_op_lowering(const npu_ir_node *n)
{
	const struct npu_op *d = node_op(n);

	return d ? d->lower : NULL;
}

bool npu_op_supported(const npu_ir_graph *g, const npu_ir_node *n)
{
	const struct npu_op *d = node_op(n);

	return !d || !d->support || !d->support(g, n);
}

/* The registry's lookup in the form npu_ir_infer_shapes() takes. */
static npu_status find_rules(const npu_ir_node *n, const struct npu_ir_op **out)
{
	const struct npu_op *d;
	npu_status st = npu_op_find(n, &d);

	*out = st ? NULL : &d->ir;
	return st;
}

/* Why node @n of an NPU_OP_CONST operator @d is still in the graph. */
static npu_status const_refusal(const npu_ir_graph *g, const npu_ir_node *n,
				const struct npu_op *d)
{
	if (npu_ir_const_can_eval(g, n, &d->ir))
		return unsupported(n, "its constant output is too large to fold");
	return unsupported(n, "only on constant inputs, which fold away");
}

/*
 * Bools run on the device as bytes 0/1 (NPU_DT_UINT8): comparisons and
 * logic make them, Where and Cast read them, data movement copies them; a
 * lowering that takes no bool says so by name.
 */
npu_status npu_ops_infer_shapes(npu_ir_graph *g)
{
	return npu_ir_infer_shapes(g, find_rules);
}

/*
 * Node @n reads or writes a tensor whose size is known only at run time
 * (npu_ir_tensor.dyn, issue 17): why no NPU program computes it.
 */
static npu_status dyn_refusal(const npu_ir_graph *g, const npu_ir_node *n)
{
	static const struct { const char *op, *why; } sources[] = {
		{ "Compress", "its output has as many slices as the run-time condition holds true" },
		{ "NonMaxSuppression",
		  "its output selected_indices [num_selected, 3] has as many rows as boxes survive" },
		{ "NonZero",
		  "its output [rank, count] has as many columns as the run-time data holds non-zero elements" },
		{ "Unique", "its outputs have as many entries as the input holds distinct values" },
	};
	char why[512];

	for (size_t i = 0; i < NPU_ARRAY_SIZE(sources); i++)
		if (!strcmp(n->op, sources[i].op)) {
			snprintf(why, sizeof(why),
				 "%s, known only at run time; NPU programs have static shapes: run it on the host with the CPU fallback (npu_compile_options.allow_cpu_fallback, npu-run --cpu-fallback)",
				 sources[i].why);
			return unsupported(n, why);
		}
	for (int i = 0; i < n->n_inputs; i++) {
		const npu_ir_tensor *t = npu_ir_input(g, n, i);

		if (t && t->dyn) {
			snprintf(why, sizeof(why),
				 "its input '%s' has a size known only at run time (an output of NonZero, NonMaxSuppression, Unique or Compress, or computed from one); NPU programs have static shapes, so the CPU fallback (npu_compile_options.allow_cpu_fallback, npu-run --cpu-fallback) runs everything after such an operator",
				 t->name);
			return unsupported(n, why);
		}
	}
	return unsupported(n, "its output has a size known only at run time");
}

npu_status npu_op_refuse(const npu_ir_graph *g, const npu_ir_node *n)
{
	const struct npu_op *d;
	const char *w;
	char why[128];
	npu_status st = npu_op_find(n, &d);

	if (st)
		return st;
	if (npu_ir_node_dyn(g, n))
		return dyn_refusal(g, n);
	if ((d->flags & NPU_OP_CONST) ||
	    (d->ir.eval && npu_ir_const_can_eval(g, n, &d->ir)))
		return const_refusal(g, n, d);
	if (d->support && (w = d->support(g, n))) {
		snprintf(why, sizeof(why), "%s supported", w);
		return unsupported(n, why);
	}
	return unsupported(n, NULL);
}

npu_status npu_ops_check_supported(const npu_ir_graph *g, int *bad_node)
{
	char why[128];

	if (bad_node)
		*bad_node = -1;
	for (int i = 0; i < g->n_nodes; i++) {
		const npu_ir_node *n = &g->nodes[i];
		const struct npu_op *d;
		const char *w;
		npu_status st;

		if (n->dead)
			continue;
		if (bad_node)
			*bad_node = i;
		if ((st = npu_op_find(n, &d)))
			return st;
		if (d->flags & NPU_OP_CONST)
			return const_refusal(g, n, d);
		if (d->support && (w = d->support(g, n))) {
			snprintf(why, sizeof(why), "%s supported", w);
			return unsupported(n, why);
		}
	}
	if (bad_node)
		*bad_node = -1;
	return NPU_OK;
}
