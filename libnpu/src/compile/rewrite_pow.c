// SPDX-License-Identifier: MIT
/*
 * Pow of an integer base (issue 17): int32 on the device, int64 narrowed
 * to it (npu_narrow.c).  The CVU's POW is a float function (exp of y log
 * x), exact for no integer beyond 2^24 and wrong in sign for a negative
 * base, so an integer power is square and multiply instead: x^e is the
 * product over the set bits b of e of x^(2^b), in the CVU's exact int32
 * Mul, which wraps as ONNX's (numpy's) integer power does -- the ring of
 * int32 modulo 2^32 makes every partial product exact modulo 2^32.
 *
 * The exponent must be a constant of whole values >= 0 (int32, int64, or
 * a float holding whole numbers, as ONNX's Pow(int, float) cases do):
 * models raise to fixed powers (x ** 2, 2 ** k tables).  Bit b of the
 * exponent selects x^(2^b) or 1 per element: a Where on a constant mask,
 * or no select where every element agrees.  Refused, with the node's
 * name: an exponent computed at run time, a negative one (ONNX's integer
 * result would be 0 or +-1 by truncation; numpy refuses it), a fraction.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_rewrite_priv.h"

/* Exponent elements read at most (a per-element exponent table). */
#define POW_EXP_MAX 4096

static npu_status pow_refuse(const npu_ir_node *n, const char *why)
{
	char lbl[96];

	return npu_fail(NPU_ERR_UNSUPPORTED,
			"Pow (node %s) of an integer base: %s; an integer power is square and multiply by the exponent's bits, which must be known at compile time (a constant of whole values >= 0, at most %d of them)",
			npu_ir_node_label(n, lbl, sizeof(lbl)), why, POW_EXP_MAX);
}

/* The exponent @e's values as whole numbers >= 0 into @v (@cnt of them). */
static npu_status pow_exponents(const npu_ir_node *n, const npu_ir_tensor *e, int64_t *v,
				int *cnt)
{
	float *f;

	if (!npu_ir_is_const(e))
		return pow_refuse(n, "the exponent is computed at run time");
	if (npu_ir_numel(e) > POW_EXP_MAX)
		return pow_refuse(n, "the exponent has too many elements");
	if (e->dtype == NPU_DTYPE_INT32 || e->dtype == NPU_DTYPE_INT64) {
		if (npu_ir_const_ints(e, v, POW_EXP_MAX, cnt))
			return pow_refuse(n, "the exponent cannot be read");
	} else {
		f = malloc(POW_EXP_MAX * sizeof(*f));
		if (!f)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		if (npu_ir_const_floats(e, f, POW_EXP_MAX, cnt)) {
			free(f);
			return pow_refuse(n, "the exponent is neither an integer nor a float constant");
		}
		for (int i = 0; i < *cnt; i++) {
			if (f[i] != floorf(f[i]) || fabsf(f[i]) > 2147483647.0f) {
				free(f);
				return pow_refuse(n, "the exponent holds a fraction");
			}
			v[i] = (int64_t)f[i];
		}
		free(f);
	}
	for (int i = 0; i < *cnt; i++)
		if (v[i] < 0)
			return pow_refuse(n, "the exponent holds a negative value");
	return NPU_OK;
}

/* *@id = a constant int32 of shape @rank/@dims, every element @val. */
static npu_status pow_fill(npu_ir_graph *g, int rank, const int64_t *dims, int32_t val, int *id)
{
	int64_t cnt = 1;
	int32_t *d;

	for (int i = 0; i < rank; i++)
		cnt *= dims[i];
	d = malloc((size_t)(cnt ? cnt : 1) * sizeof(*d));
	if (!d)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t i = 0; i < cnt; i++)
		d[i] = val;
	return npu_rw_const(g, NPU_DTYPE_INT32, rank, dims, d, id);
}

/* *@f = x^(2^b) where bit @b of the exponents @v is set, else 1: a Where on a mask. */
static npu_status pow_select(npu_ir_graph *g, const char *name, const int64_t *v, int cnt,
			     int er, const int64_t *ed, int b, int pw, int one, int *f)
{
	int64_t fd[NPU_MAX_RANK];
	uint8_t *m = malloc((size_t)cnt);
	int mask, fr;
	npu_status st;

	if (!m)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int i = 0; i < cnt; i++)
		m[i] = (v[i] >> b) & 1;
	st = npu_rw_const(g, NPU_DTYPE_BOOL, er, ed, m, &mask);
	if (!st && !npu_rw_bshape(&g->tensors[mask], &g->tensors[pw], fd, &fr))
		st = npu_fail(NPU_ERR_SHAPE, "Pow operands do not broadcast");
	if (!st)
		st = npu_rw_tensor(g, NPU_DTYPE_INT32, fr, fd, f);
	if (!st)
		st = npu_rw_op(g, "Where", 16, name, (int[]){ mask, pw, one }, 3, f, 1, NULL);
	return st;
}

npu_status npu_rewrite_pow_int_base(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *e = npu_ir_input(g, n, 1);
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	int64_t *v, emax = 0, ed[NPU_MAX_RANK], yd[NPU_MAX_RANK];
	int yid, er, yr, cnt = 0, acc = -1, pw, one = -1;
	char name[128];
	npu_status st;

	*applied = false;
	if (!x || !e || !y || x->dtype != NPU_DTYPE_INT32 || y->dtype != NPU_DTYPE_INT32)
		return NPU_OK;
	v = malloc(POW_EXP_MAX * sizeof(*v));
	if (!v)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	if ((st = pow_exponents(n, e, v, &cnt))) {
		free(v);
		return st;
	}
	for (int i = 0; i < cnt; i++)
		emax = v[i] > emax ? v[i] : emax;
	pw = n->inputs[0];
	yid = n->outputs[0];
	er = e->rank;
	yr = y->rank;
	memcpy(ed, e->dims, sizeof(ed));
	memcpy(yd, y->dims, sizeof(yd));
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	g->nodes[k].dead = true;
	npu_rw_detach(g, k, yid);
	st = pow_fill(g, 0, NULL, 1, &one);
	for (int b = 0; !st && b < 63 && (emax >> b); b++) {
		bool all = true, any = false;
		int f = pw;

		for (int i = 0; i < cnt; i++) {
			all = all && ((v[i] >> b) & 1);
			any = any || ((v[i] >> b) & 1);
		}
		if (any && !all)
			st = pow_select(g, name, v, cnt, er, ed, b, pw, one, &f);
		if (!st && any)
			st = acc < 0 ? (acc = f, NPU_OK) : npu_rw_binary(g, "Mul", 14, name, acc, f, -1, &acc);
		/* x^(2^(b+1)) = (x^(2^b))^2, wrapping as int32 */
		if (!st && (emax >> (b + 1)))
			st = npu_rw_binary(g, "Mul", 14, name, pw, pw, -1, &pw);
	}
	/* Into y; broadcast to its shape by ones (x^0 = 1, 0^0 too, as ONNX says). */
	if (!st && acc >= 0 && g->tensors[acc].rank == yr &&
	    !memcmp(g->tensors[acc].dims, yd, (size_t)yr * sizeof(*yd))) {
		free(v);
		return npu_rw_op(g, "Identity", 14, name, &acc, 1, &yid, 1, NULL);
	}
	if (!st)
		st = pow_fill(g, yr, yd, 1, &one);
	if (!st)
		st = acc < 0 ? npu_rw_op(g, "Identity", 14, name, &one, 1, &yid, 1, NULL) :
		     npu_rw_binary(g, "Mul", 14, name, acc, one, yid, &acc);
	free(v);
	return st;
}
