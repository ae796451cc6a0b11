// SPDX-License-Identifier: MIT
/*
 * ONNX -> compiled model.  The lowering passes land operator by operator;
 * until an operator has one, a model using it is refused by name.
 */
#include "model/npu_model_priv.h"

npu_status npu_compile_onnx(const void *data, size_t size, npu_device *dev,
			    const npu_compile_options *opts,
			    struct npu_cmodel **out)
{
	(void)data;
	(void)size;
	(void)dev;
	(void)opts;
	*out = NULL;
	return npu_fail(NPU_ERR_UNSUPPORTED,
			"this libnpu cannot compile ONNX models yet; load a compiled model (.npum)");
}
