// SPDX-License-Identifier: MIT
/*
 * Which lowering handles which ONNX operator.  An operator missing here is
 * refused by name, never run on the CPU behind the user's back.
 */
#include <string.h>

#include "compile/npu_cc.h"

bool npu_lower_is_eltwise(const char *op);
npu_status npu_lower_transpose(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_concat(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_slice(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_split(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_pad(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_global_pool(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_quant(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_layernorm(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_reduce(struct npu_cc *cc, const npu_ir_node *n);

static const struct {
	const char *op;
	npu_lower_fn fn;
} table[] = {
	{ "Reshape", npu_lower_alias },
	{ "Flatten", npu_lower_alias },
	{ "Squeeze", npu_lower_alias },
	{ "Unsqueeze", npu_lower_alias },
	{ "Identity", npu_lower_alias },
	{ "Dropout", npu_lower_alias },
	{ "Transpose", npu_lower_transpose },
	{ "Concat", npu_lower_concat },
	{ "Slice", npu_lower_slice },
	{ "Split", npu_lower_split },
	{ "Pad", npu_lower_pad },
	{ "MatMul", npu_lower_matmul },
	{ "Gemm", npu_lower_matmul },
	{ "QLinearMatMul", npu_lower_matmul },
	{ "MatMulInteger", npu_lower_matmul },
	{ "Conv", npu_lower_conv },
	{ "QLinearConv", npu_lower_conv },
	{ "ConvInteger", npu_lower_conv },
	{ "QuantizeLinear", npu_lower_quant },
	{ "DequantizeLinear", npu_lower_quant },
	{ "Cast", npu_lower_quant },
	{ "MaxPool", npu_lower_pool },
	{ "AveragePool", npu_lower_pool },
	{ "GlobalAveragePool", npu_lower_global_pool },
	{ "GlobalMaxPool", npu_lower_global_pool },
	{ "Softmax", npu_lower_softmax },
	{ "LayerNormalization", npu_lower_layernorm },
	{ "ReduceMean", npu_lower_reduce },
	{ "ReduceSum", npu_lower_reduce },
	{ "ReduceMax", npu_lower_reduce },
	{ "ReduceMin", npu_lower_reduce },
	{ "ReduceL1", npu_lower_reduce },
	{ "ReduceL2", npu_lower_reduce },
	{ "ReduceSumSquare", npu_lower_reduce },
	{ "ReduceLogSum", npu_lower_reduce },
	{ "ReduceLogSumExp", npu_lower_reduce },
	{ "ReduceProd", npu_lower_reduce },
	{ "LogSoftmax", npu_lower_softmax },
};

npu_lower_fn npu_lower_find(const char *op, int opset)
{
	(void)opset;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].op, op))
			return table[i].fn;
	return npu_lower_is_eltwise(op) ? npu_lower_eltwise : NULL;
}
