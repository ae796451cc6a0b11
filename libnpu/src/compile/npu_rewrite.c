// SPDX-License-Identifier: MIT
/*
 * Graph rewrites before fusion and lowering: operators the NPU has no
 * lowering for become operators it has, on a shape-inferred graph.
 *
 * - Resize (nearest, linear, cubic; every coordinate transformation) and
 *   ConvTranspose's zero insertion are linear maps along one axis at a
 *   time with weights known at compile time: each axis becomes a MatMul by
 *   a constant [in][out] matrix (with Transposes around it when the axis
 *   is not the last).  ConvTranspose then is an ordinary stride-1 Conv
 *   with spatially flipped, channel-swapped weights over the zero-inserted
 *   and padded input.
 * - LayerNormalization's optional Mean and InvStdDev outputs: ReduceMean,
 *   Sub, Mul, Add, Sqrt and Reciprocal beside the fused normalization.
 * - Pad in 'edge' and 'reflect' modes: a Concat of one-element Slices.
 * - Batched MatMul / QLinearMatMul with a constant B: one 2-D MatMul per
 *   batch element, concatenated; Gemm with a full matrix C: Gemm + Add.
 *
 * A node this pass cannot rewrite is left alone, so the lowering refuses
 * it by name as before.  The rewrites live in rewrite_*.c by concern, their
 * building blocks in rewrite_util.c.
 */
#include <string.h>

#include "compile/npu_rewrite.h"
#include "compile/npu_rewrite_priv.h"

/*
 * Which rewrites apply to which operator, in order: each runs while the
 * node is still alive (a rewrite that replaces the node marks it dead; the
 * 8-bit and float16 ones edit it in place into float32, for the ones after
 * them, e.g. Mod).
 */
static const struct {
	const char *op;
	npu_rewrite_fn fn;
} rewrites[] = {
	{ "Resize", npu_rewrite_resize },
	{ "Upsample", npu_rewrite_resize },
	{ "ConvTranspose", npu_rewrite_conv_transpose },
	{ "Conv", npu_rewrite_conv3d },
	{ "GridSample", npu_rewrite_grid_sample },
	{ "MatMul", npu_rewrite_batched_matmul },
	{ "QLinearMatMul", npu_rewrite_batched_matmul },
	{ "Gemm", npu_rewrite_gemm_matrix_c },
	{ "MaxPool", npu_rewrite_pool3d },
	{ "AveragePool", npu_rewrite_pool3d },
	{ "LayerNormalization", npu_rewrite_layernorm_stats },
	{ "InstanceNormalization", npu_rewrite_instnorm },
	{ "MeanVarianceNormalization", npu_rewrite_mvn },
	{ "LRN", npu_rewrite_lrn },
	{ "BatchNormalization", npu_rewrite_batchnorm_training },
	{ "ReduceMean", npu_rewrite_reduce_runs },
	{ "ReduceSum", npu_rewrite_reduce_runs },
	{ "ReduceMax", npu_rewrite_reduce_runs },
	{ "ReduceMin", npu_rewrite_reduce_runs },
	{ "ReduceProd", npu_rewrite_reduce_runs },
	{ "Sum", npu_rewrite_variadic },
	{ "Mean", npu_rewrite_variadic },
	{ "Max", npu_rewrite_variadic },
	{ "Min", npu_rewrite_variadic },
	{ "Hardmax", npu_rewrite_hardmax },
	{ "Pow", npu_rewrite_pow_int },
	{ "QuantizeLinear", npu_rewrite_quant_axis },
	{ "QuantizeLinear", npu_rewrite_quant_computed },
	{ "DequantizeLinear", npu_rewrite_quant_axis },
	{ "DynamicQuantizeLinear", npu_rewrite_dyn_quant },
	{ "BitShift", npu_rewrite_bitshift },
	{ "CastLike", npu_rewrite_cast_like },
	{ "Cast", npu_rewrite_cast_int8 },
	{ "Pad", npu_rewrite_pad },
	{ "Gather", npu_rewrite_gather },
	{ "GatherElements", npu_rewrite_gather_elements },
	{ "GatherND", npu_rewrite_gather_elements },
	{ "Expand", npu_rewrite_repeat },
	{ "Tile", npu_rewrite_repeat },
	{ "DepthToSpace", npu_rewrite_depth_space },
	{ "SpaceToDepth", npu_rewrite_depth_space },
	{ "EyeLike", npu_rewrite_eye_like },
	{ "ReverseSequence", npu_rewrite_reverse_sequence },
	{ "Trilu", npu_rewrite_trilu },
	{ "Scatter", npu_rewrite_scatter },
	{ "ScatterElements", npu_rewrite_scatter },
	{ "ScatterND", npu_rewrite_scatter },
	{ "NegativeLogLikelihoodLoss", npu_rewrite_nll_loss },
	{ "SoftmaxCrossEntropyLoss", npu_rewrite_sce_loss },
	/* 8-bit and float16 operands: the node in float32 */
	{ "Clip", npu_rewrite_8bit },
	{ "MaxPool", npu_rewrite_8bit },
	{ "Max", npu_rewrite_8bit },
	{ "Min", npu_rewrite_8bit },
	{ "Add", npu_rewrite_8bit },
	{ "Sub", npu_rewrite_8bit },
	{ "Mul", npu_rewrite_8bit },
	{ "Div", npu_rewrite_8bit },
	{ "Mod", npu_rewrite_8bit },
	{ "Max", npu_rewrite_f16 },
	{ "Min", npu_rewrite_f16 },
	{ "Mod", npu_rewrite_f16 },
	{ "Mod", npu_rewrite_mod },	/* on float32, after the two above */
};

/* Input 0 or output 0 has no elements: the lowerings deal with those. */
static bool empty_io(const npu_ir_graph *g, const npu_ir_node *n)
{
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);

	return (x && npu_ir_numel(x) == 0) || (y && npu_ir_numel(y) == 0);
}

npu_status npu_rewrite(npu_ir_graph *g)
{
	bool changed = false;
	npu_status st = NPU_OK;

	/* New nodes are visited too: a 3-D ConvTranspose becomes a 3-D Conv,
	 * which becomes a 2-D one.  Every rewrite emits only nodes that no
	 * rewrite changes again, or that a later rewrite takes further. */
	for (int k = 0; k < g->n_nodes && !st; k++) {
		int before = g->n_nodes;
		bool applied;

		if (g->nodes[k].dead || (g->nodes[k].domain[0] &&
					 strcmp(g->nodes[k].domain, "ai.onnx")) ||
		    empty_io(g, &g->nodes[k]))
			continue;
		for (size_t i = 0; i < sizeof(rewrites) / sizeof(rewrites[0]) && !st; i++)
			if (!g->nodes[k].dead && !strcmp(g->nodes[k].op, rewrites[i].op))
				st = rewrites[i].fn(g, k, &applied);
		changed |= g->n_nodes != before || g->nodes[k].dead;
	}
	if (st || !changed)
		return st;
	if ((st = npu_ir_remove_dead(g)))
		return st;
	return npu_ir_topo_sort(g);
}
