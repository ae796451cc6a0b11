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
		const char *op = g->nodes[k].op;
		int before = g->n_nodes;

		if (g->nodes[k].dead || (g->nodes[k].domain[0] &&
					 strcmp(g->nodes[k].domain, "ai.onnx")) ||
		    empty_io(g, &g->nodes[k]))
			continue;
		if (!strcmp(op, "Resize") || !strcmp(op, "Upsample"))
			st = npu_rewrite_resize(g, k);
		else if (!strcmp(op, "ConvTranspose"))
			st = npu_rewrite_conv_transpose(g, k);
		else if (!strcmp(op, "Conv"))
			st = npu_rewrite_conv3d(g, k);
		else if (!strcmp(op, "Sum") || !strcmp(op, "Mean") || !strcmp(op, "Max") ||
			 !strcmp(op, "Min"))
			st = npu_rewrite_variadic(g, k);
		else if (!strcmp(op, "InstanceNormalization"))
			st = npu_rewrite_instnorm(g, k);
		else if (!strcmp(op, "MeanVarianceNormalization"))
			st = npu_rewrite_mvn(g, k);
		else if (!strcmp(op, "Pow"))
			st = npu_rewrite_pow_int(g, k);
		else if (!strcmp(op, "QuantizeLinear") || !strcmp(op, "DequantizeLinear"))
			st = npu_rewrite_quant_axis(g, k);
		else if (!strcmp(op, "DynamicQuantizeLinear"))
			st = npu_rewrite_dyn_quant(g, k);
		else if (!strcmp(op, "BitShift"))
			st = npu_rewrite_bitshift(g, k);
		else if (!strcmp(op, "CastLike"))
			st = npu_rewrite_cast_like(g, k);
		else if (!strcmp(op, "GridSample"))
			st = npu_rewrite_grid_sample(g, k);
		else if (!strcmp(op, "LRN"))
			st = npu_rewrite_lrn(g, k);
		else if (!strcmp(op, "Hardmax"))
			st = npu_rewrite_hardmax(g, k);
		else if (!strcmp(op, "Gather"))
			st = npu_rewrite_gather(g, k);
		else if (!strcmp(op, "Expand") || !strcmp(op, "Tile"))
			st = npu_rewrite_repeat(g, k);
		else if (!strcmp(op, "DepthToSpace") || !strcmp(op, "SpaceToDepth"))
			st = npu_rewrite_depth_space(g, k);
		else if (!strcmp(op, "LayerNormalization"))
			st = npu_rewrite_layernorm_stats(g, k);
		else if (!strcmp(op, "Pad"))
			st = npu_rewrite_pad(g, k);
		else if (!strcmp(op, "MatMul") || !strcmp(op, "QLinearMatMul"))
			st = npu_rewrite_batched_matmul(g, k);
		else if (!strcmp(op, "Gemm"))
			st = npu_rewrite_gemm_matrix_c(g, k);
		else if (!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool"))
			st = npu_rewrite_pool3d(g, k);
		else if (!strncmp(op, "Reduce", 6))
			st = npu_rewrite_reduce_runs(g, k);
		if (!st && g->n_nodes == before && !g->nodes[k].dead &&
		    (!strcmp(op, "Clip") || !strcmp(op, "MaxPool") || !strcmp(op, "Add") ||
		     !strcmp(op, "Mod") ||
		     !strcmp(op, "Sub") || !strcmp(op, "Mul") || !strcmp(op, "Div") ||
		     !strcmp(op, "Max") || !strcmp(op, "Min")))
			st = npu_rewrite_8bit(g, k);
		if (!st && g->n_nodes == before && !g->nodes[k].dead &&
		    (!strcmp(op, "Max") || !strcmp(op, "Min") || !strcmp(op, "Mod")))
			st = npu_rewrite_f16(g, k);
		/* Mod, now in float32 (its inputs cast), becomes arithmetic. */
		if (!st && !strcmp(op, "Mod") && !g->nodes[k].dead)
			st = npu_rewrite_mod(g, k);
		changed |= g->n_nodes != before;
	}
	if (st || !changed)
		return st;
	if ((st = npu_ir_remove_dead(g)))
		return st;
	return npu_ir_topo_sort(g);
}
