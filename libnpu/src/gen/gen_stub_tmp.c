// SPDX-License-Identifier: MIT
/* TEMPORARY (branch genrt): until branch gencc's npu_compile_generation links. */
#include "compile/npu_compile.h"

__attribute__((weak)) npu_status npu_compile_generation(const void *data, size_t size,
							const struct npu_compile_target *tgt,
							const struct npu_gen_program *prog,
							struct npu_cmodel **out)
{
	(void)data;
	(void)size;
	(void)tgt;
	(void)prog;
	*out = NULL;
	return npu_fail(NPU_ERR_UNSUPPORTED,
			"generation programs are not compiled by this libnpu yet (npu_compile_generation)");
}
