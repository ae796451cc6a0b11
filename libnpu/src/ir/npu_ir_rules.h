/* SPDX-License-Identifier: MIT */
/*
 * The IR's rules for ONNX operators, for the operator registry
 * (compile/npu_ops.c) to point at: shape rules, split by ONNX operator
 * family (shape_math.c, shape_nn.c, shape_tensor.c, shape_reduce.c,
 * shape_quant.c, shape_generator.c, shape_logical.c), and constant evaluators
 * (npu_ir_const.c).  struct npu_ir_op bundles one operator's rules for
 * npu_ir_infer_shapes().
 *
 * A shape rule runs once the shapes of the node's inputs are known: it
 * checks the inputs and attributes, sets every output's dtype and static
 * shape (against what the model declares) and may rewrite the node's
 * attributes into the canonical form npu_ir.h describes.  It fails with
 * NPU_ERR_SHAPE, NPU_ERR_FORMAT or NPU_ERR_UNSUPPORTED naming the node.
 * One rule may serve several operators (npu_ir_shape_unary_float: every
 * float function of one input).
 */
#ifndef NPU_IR_RULES_H
#define NPU_IR_RULES_H

#include "ir/npu_ir.h"

typedef npu_status (*npu_ir_shape_fn)(npu_ir_graph *g, npu_ir_node *n);

/*
 * A constant evaluator: computes output 0 of @n (whose dtype and shape
 * the shape rule has set) into @out, zeroed, numel * dtype size bytes,
 * from the node's constant inputs.  Nodes with more than one output are
 * evaluated only by evaluators flagged NPU_IR_EVAL_OUTPUTS.
 */
typedef npu_status (*npu_ir_eval_fn)(npu_ir_graph *g, const npu_ir_node *n, void *out);

/* The evaluator reads only input 0's shape, not its data (Shape, Size). */
#define NPU_IR_EVAL_SHAPES	1u
/*
 * The evaluator computes every output (Split): @out holds them one after
 * another in output order, each numel * dtype size bytes.  Folded only
 * when every output is used, so that each one's size is known.
 */
#define NPU_IR_EVAL_OUTPUTS	2u

/* One operator's rules, as the lookup given to npu_ir_infer_shapes() returns them. */
struct npu_ir_op {
	npu_ir_shape_fn shape;		/* never NULL */
	npu_ir_eval_fn eval;		/* NULL: the operator is never folded */
	unsigned eval_flags;		/* NPU_IR_EVAL_* */
};

/* ---- math (shape_math.c) ---- */

npu_status npu_ir_shape_unary(npu_ir_graph *g, npu_ir_node *n);	/* like input 0 */
npu_status npu_ir_shape_unary_float(npu_ir_graph *g, npu_ir_node *n);	/* same, float only */
npu_status npu_ir_shape_binary(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_variadic(npu_ir_graph *g, npu_ir_node *n);	/* Max, Min, Sum, Mean */
npu_status npu_ir_shape_prelu(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_clip(npu_ir_graph *g, npu_ir_node *n);
/* Softmax, LogSoftmax, Hardmax */
npu_status npu_ir_shape_softmax(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_gemm(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_matmul(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_matmul_integer(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_qlinear_matmul(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_matmul_nbits(npu_ir_graph *g, npu_ir_node *n);
/* NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss */
npu_status npu_ir_shape_nll_loss(npu_ir_graph *g, npu_ir_node *n);
/* Einsum of one or two operands (the equation: ir/npu_einsum.h) */
npu_status npu_ir_shape_einsum(npu_ir_graph *g, npu_ir_node *n);

/* ---- neural network (shape_nn.c) ---- */

npu_status npu_ir_shape_conv(npu_ir_graph *g, npu_ir_node *n);
/* LSTM, GRU, RNN: Y, Y_h (and LSTM's Y_c) from X, W and the attributes. */
npu_status npu_ir_shape_rnn(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_conv_integer(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_qlinear_conv(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_conv_transpose(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_pool(npu_ir_graph *g, npu_ir_node *n);	/* MaxPool, AveragePool */
npu_status npu_ir_shape_global_pool(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_batchnorm(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_instnorm(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_layernorm(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_dropout(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_flatten(npu_ir_graph *g, npu_ir_node *n);

/* ---- tensor (shape_tensor.c) ---- */

npu_status npu_ir_shape_cast(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_cast_like(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_reshape(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_transpose(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_squeeze(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_unsqueeze(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_depth_space(npu_ir_graph *g, npu_ir_node *n);	/* both directions */
npu_status npu_ir_shape_shape(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_size(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_concat(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_split(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_slice(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_pad(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_expand(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_where(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_tile(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_gather(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_gather_elements(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_gather_nd(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_scatter(npu_ir_graph *g, npu_ir_node *n);	/* all three */
npu_status npu_ir_shape_scatter_rows(npu_ir_graph *g, npu_ir_node *n);	/* npu.ScatterRows */
npu_status npu_ir_shape_resize(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_upsample(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_grid_sample(npu_ir_graph *g, npu_ir_node *n);

/* ---- reduction (shape_reduce.c) ---- */

npu_status npu_ir_shape_reduce(npu_ir_graph *g, npu_ir_node *n);	/* every Reduce* */
npu_status npu_ir_shape_argreduce(npu_ir_graph *g, npu_ir_node *n);	/* ArgMax, ArgMin */

/* ---- quantization (shape_quant.c) ---- */

npu_status npu_ir_shape_quantize(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_dequantize(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_dyn_quant(npu_ir_graph *g, npu_ir_node *n);

/* ---- generators (shape_generator.c) ---- */

npu_status npu_ir_shape_constant_of_shape(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_range(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_eye_like(npu_ir_graph *g, npu_ir_node *n);
/* HannWindow, HammingWindow, BlackmanWindow (opset 17): a constant size -> [size] */
npu_status npu_ir_shape_window(npu_ir_graph *g, npu_ir_node *n);
/* MelWeightMatrix (opset 17): [dft_length / 2 + 1, num_mel_bins] */
npu_status npu_ir_shape_mel_weight(npu_ir_graph *g, npu_ir_node *n);

/* ---- logical (shape_logical.c): bool outputs ---- */

/* Equal, Less, Greater, LessOrEqual, GreaterOrEqual */
npu_status npu_ir_shape_compare(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_logical(npu_ir_graph *g, npu_ir_node *n);	/* And, Or, Xor */
npu_status npu_ir_shape_not(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_is_class(npu_ir_graph *g, npu_ir_node *n);	/* IsNaN, IsInf */

/* ---- spectral operators (shape_signal.c): DFT, STFT (opset 17) ---- */

npu_status npu_ir_shape_dft(npu_ir_graph *g, npu_ir_node *n);
/* DFT's axis: the attribute before opset 20, the constant input 2 from it. */
npu_status npu_ir_dft_axis(npu_ir_graph *g, const npu_ir_node *n, int64_t *axis);
npu_status npu_ir_shape_stft(npu_ir_graph *g, npu_ir_node *n);

/* ---- training optimisers (shape_train.c): Adagrad, Adam, Momentum ---- */

npu_status npu_ir_shape_optimizer(npu_ir_graph *g, npu_ir_node *n);

/* ---- constant evaluators (npu_ir_const.c) ---- */

/* Identity, Reshape, Flatten, Squeeze, Unsqueeze: the bytes of input 0. */
npu_status npu_ir_eval_copy(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_shape(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_size(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_cast(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_gather(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_concat(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_slice(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_split(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_transpose(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_add(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_sub(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_mul(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_div(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_mod(npu_ir_graph *g, const npu_ir_node *n, void *out);
/* Min, Max: any number of inputs. */
npu_status npu_ir_eval_min(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_max(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_neg(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_sqrt(npu_ir_graph *g, const npu_ir_node *n, void *out);
/* Comparisons and logical functions: bool outputs. */
npu_status npu_ir_eval_equal(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_less(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_greater(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_less_equal(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_greater_equal(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_and(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_or(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_xor(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_not(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_where(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_expand(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_tile(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_constant_of_shape(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_range(npu_ir_graph *g, const npu_ir_node *n, void *out);
/* The window functions and the mel matrix of audio front ends (opset 17). */
npu_status npu_ir_eval_window(npu_ir_graph *g, const npu_ir_node *n, void *out);
npu_status npu_ir_eval_mel_weight(npu_ir_graph *g, const npu_ir_node *n, void *out);

/* ---- operators only the CPU fallback runs (shape_fallback.c, issue 17) ---- */

/* Det: X [*, M, M] -> [*] */
npu_status npu_ir_shape_det(npu_ir_graph *g, npu_ir_node *n);
/* Outputs of run-time size (shape_detect.c, issue 17): bounds, npu_ir_tensor.dyn. */
npu_status npu_ir_shape_nms(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_unique(npu_ir_graph *g, npu_ir_node *n);
/* RoiAlign: X [N, C, H, W], rois [R, 4], batch_indices [R] -> [R, C, output_height, output_width] */
npu_status npu_ir_shape_roialign(npu_ir_graph *g, npu_ir_node *n);

/* npu.IfSelect, an ONNX If (shape_control.c, onnx/npu_onnx_if.c): cond, a, b -> a or b */
npu_status npu_ir_shape_if_select(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_eval_if_select(npu_ir_graph *g, const npu_ir_node *n, void *out);
/*
 * npu.LoopBegin and npu.LoopEnd, an ONNX Loop (shape_control.c,
 * onnx/npu_onnx_if.h): iter_num int64 and cond bool scalars, carried
 * values in their initial shapes; a scan output [length, ...].
 */
npu_status npu_ir_shape_loop_begin(npu_ir_graph *g, npu_ir_node *n);
npu_status npu_ir_shape_loop_end(npu_ir_graph *g, npu_ir_node *n);

/* ---- detection and ranking (shape_detect.c, issue 17) ---- */

npu_status npu_ir_shape_topk(npu_ir_graph *g, npu_ir_node *n);	/* K a constant */
npu_status npu_ir_shape_onehot(npu_ir_graph *g, npu_ir_node *n);	/* depth a constant */
npu_status npu_ir_shape_compress(npu_ir_graph *g, npu_ir_node *n);	/* condition a constant */
npu_status npu_ir_shape_nonzero(npu_ir_graph *g, npu_ir_node *n);	/* of a constant */
npu_status npu_ir_eval_nonzero(npu_ir_graph *g, const npu_ir_node *n, void *out);

#endif /* NPU_IR_RULES_H */
