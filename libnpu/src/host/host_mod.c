// SPDX-License-Identifier: MIT
/*
 * Mod on the host: the remainder of A / B, broadcast.  fmod 0 (integers
 * only): the sign of the divisor, as Python's %; fmod 1: the sign of the
 * dividend, as C's fmod.  A zero integer divisor gives 0 (ONNX leaves it
 * undefined; the C reference must not trap).
 */
#include <math.h>

#include "host/npu_host.h"

const char *npu_host_mod_accepts(const npu_ir_graph *g, const npu_ir_node *n)
{
	const npu_ir_tensor *a = npu_ir_input(g, n, 0), *b = npu_ir_input(g, n, 1);

	if (!a || !b || a->dtype != b->dtype || !npu_host_dtype_ok(a->dtype) ||
	    a->dtype == NPU_DTYPE_BOOL)
		return "only float32, int64, int32, int8 and uint8 operands of one dtype are";
	return NULL;
}

npu_status npu_host_mod(const struct npu_host_step *h, const struct npu_host_buf *in,
			struct npu_host_buf *out)
{
	bool fmod_c = npu_host_attr_int(h, "fmod", 0) != 0;
	bool fp = in[0].dtype == NPU_DTYPE_FLOAT32;

	npu_status st;

	if (fp && !fmod_c)
		return npu_fail(NPU_ERR_INVALID_ARG, "float operands need fmod = 1");
	/* The inputs may have run-time sizes (issue 17): the output's is theirs broadcast. */
	if ((st = npu_host_bcast_shape(h, in, out)))
		return st;
	for (size_t i = 0; i < out[0].numel; i++) {
		double a = npu_host_get(&in[0], npu_host_bcast(&in[0], &out[0], i));
		double b = npu_host_get(&in[1], npu_host_bcast(&in[1], &out[0], i));
		double r;

		if (fp) {
			r = fmod(a, b);
		} else if (b == 0) {
			r = 0;
		} else {
			int64_t x = (int64_t)a, y = (int64_t)b, m = x % y;

			if (!fmod_c && m && ((m < 0) != (y < 0)))
				m += y;
			r = (double)m;
		}
		npu_host_set(&out[0], i, r);
	}
	return NPU_OK;
}
