// SPDX-License-Identifier: MIT
/*
 * Integers and quantization: 8-bit operators computed in float32 between a
 * Cast and a scale-1 QuantizeLinear (exact: integers by then), per-axis and
 * computed-parameter Quantize/DequantizeLinear, DynamicQuantizeLinear,
 * BitShift, and Casts to 8-bit of values known to be integers.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_rewrite_priv.h"

static bool is_8bit(npu_dtype t)
{
	return t == NPU_DTYPE_INT8 || t == NPU_DTYPE_UINT8;
}

/* *@id = @x as float32: a converted constant, or a Cast. */
static npu_status to_float(npu_ir_graph *g, const char *name, int x, int *id)
{
	const npu_ir_tensor *t = &g->tensors[x];
	int64_t cnt = npu_ir_numel(t), dims[NPU_MAX_RANK];
	int r = t->rank, k;
	npu_status st;

	memcpy(dims, t->dims, sizeof(dims));
	if (npu_ir_is_const(t)) {
		float *f = malloc((size_t)(cnt ? cnt : 1) * sizeof(float));

		if (!f)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		for (int64_t i = 0; i < cnt; i++)
			f[i] = t->dtype == NPU_DTYPE_INT8 ? ((const int8_t *)t->data)[i] :
			       ((const uint8_t *)t->data)[i];
		return npu_rw_const(g, NPU_DTYPE_FLOAT32, r, dims, f, id);
	}
	if ((st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, dims, id)) ||
	    (st = npu_rw_op(g, "Cast", 13, name, &x, 1, id, 1, &k)))
		return st;
	return npu_ir_set_attr_int(&g->nodes[k], "to", 1);	/* FLOAT */
}

/*
 * *@id = @x (float32 holding integers) wrapped into @dt's range modulo 256,
 * as integer arithmetic overflows: x - 256 floor((x - lowest) / 256).
 * Exact in float32 for |x| < 2^24.
 */
static npu_status wrap_256(npu_ir_graph *g, const char *name, int x, npu_dtype dt, int *id)
{
	int64_t dims[NPU_MAX_RANK], one = 1;
	int r = g->tensors[x].rank, c[3], t[4];
	float *v[3];
	npu_status st = NPU_OK;

	memcpy(dims, g->tensors[x].dims, sizeof(dims));
	for (int i = 0; i < 3; i++) {
		v[i] = malloc(sizeof(float));
		if (!v[i]) {
			while (i--)
				free(v[i]);
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		}
	}
	*v[0] = dt == NPU_DTYPE_INT8 ? 128.0f : 0.0f;
	*v[1] = 1.0f / 256.0f;
	*v[2] = 256.0f;
	for (int i = 0; i < 3; i++)
		if (st)
			free(v[i]);
		else
			st = npu_rw_const(g, NPU_DTYPE_FLOAT32, 1, &one, v[i], &c[i]);
	for (int i = 0; i < 4 && !st; i++)
		st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, dims, &t[i]);
	if (st || (st = npu_rw_op(g, "Add", 14, name, (int[]){ x, c[0] }, 2, &t[0], 1, NULL)) ||
	    (st = npu_rw_op(g, "Mul", 14, name, (int[]){ t[0], c[1] }, 2, &t[1], 1, NULL)) ||
	    (st = npu_rw_op(g, "Floor", 13, name, &t[1], 1, &t[2], 1, NULL)) ||
	    (st = npu_rw_op(g, "Mul", 14, name, (int[]){ t[2], c[2] }, 2, &t[3], 1, NULL)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, dims, id)))
		return st;
	return npu_rw_op(g, "Sub", 14, name, (int[]){ x, t[3] }, 2, id, 1, NULL);
}

/*
 * Clip, MaxPool, Max, Min, Add, Sub, Mul and (uint8) Div on 8-bit tensors: the same node
 * in float32 between a Cast and a QuantizeLinear of scale 1 (exact: every
 * value is an integer in range by then; the arithmetic ones wrap modulo 256
 * first, Div floors).
 */
npu_status npu_rewrite_8bit(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	/* Mod's result lies between 0 and the divisor: in range, no wrap. */
	bool arith = strcmp(n->op, "Clip") && strcmp(n->op, "MaxPool") && strcmp(n->op, "Max") &&
		     strcmp(n->op, "Min") && strcmp(n->op, "Mod");
	bool div = !strcmp(n->op, "Div");
	int yid = n->outputs[0], nin = n->n_inputs, t, sc, zp, cur;
	int64_t dims[NPU_MAX_RANK], one = 1;
	npu_dtype dt;
	char name[128];
	float *scale;
	uint8_t *z;
	npu_status st = NPU_OK;

	*applied = false;
	if (!x || !y || !is_8bit(x->dtype) || y->dtype != x->dtype ||
	    (n->n_outputs > 1 && n->outputs[1] >= 0) || (div && x->dtype != NPU_DTYPE_UINT8))
		return NPU_OK;
	dt = y->dtype;
	memcpy(dims, y->dims, sizeof(dims));
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	for (int i = 0; i < nin && !st; i++) {
		int in = g->nodes[k].inputs[i], f;

		if (in < 0 || !is_8bit(g->tensors[in].dtype))
			continue;
		if (!(st = to_float(g, name, in, &f)))
			g->nodes[k].inputs[i] = f;
	}
	if (st || (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, y->rank, dims, &t)))
		return st;
	npu_rw_detach(g, k, yid);
	g->nodes[k].outputs[0] = t;
	g->tensors[t].producer = k;
	cur = t;
	if (div) {
		if ((st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, g->tensors[t].rank, dims, &cur)) ||
		    (st = npu_rw_op(g, "Floor", 13, name, &t, 1, &cur, 1, NULL)))
			return st;
	} else if (arith && (st = wrap_256(g, name, t, dt, &cur))) {
		return st;
	}
	scale = malloc(sizeof(*scale));
	z = calloc(1, 1);
	if (!scale || !z) {
		free(scale);
		free(z);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	*scale = 1.0f;
	if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, 1, &one, scale, &sc)))
		return free(z), st;
	if ((st = npu_rw_const(g, dt, 1, &one, z, &zp)))
		return st;
	return npu_rw_op(g, "QuantizeLinear", 13, name, (int[]){ cur, sc, zp }, 3, &yid, 1, NULL);
}

/* Per-axis scale and zero point as float32 constants shaped to broadcast on @axis. */
static npu_status per_axis_const(npu_ir_graph *g, const npu_ir_tensor *t, int rank, int axis,
				 bool ints, int *id)
{
	int64_t cnt = npu_ir_numel(t), dims[NPU_MAX_RANK];
	float *f = malloc((size_t)(cnt ? cnt : 1) * sizeof(*f));
	int got = 0;

	if (!f)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	if (!ints && npu_ir_const_floats(t, f, (int)cnt, &got)) {
		free(f);
		return npu_fail(NPU_ERR_UNSUPPORTED, "scale '%s' is not a float constant", t->name);
	}
	for (int64_t i = 0; ints && i < cnt; i++)
		f[i] = t->dtype == NPU_DTYPE_INT8 ? ((const int8_t *)t->data)[i] :
		       t->dtype == NPU_DTYPE_UINT8 ? ((const uint8_t *)t->data)[i] :
		       (float)((const int32_t *)t->data)[i];
	for (int d = 0; d < rank; d++)
		dims[d] = d == axis ? cnt : 1;
	return npu_rw_const(g, NPU_DTYPE_FLOAT32, rank - axis, dims + axis, f, id);
}

/*
 * QuantizeLinear and DequantizeLinear with per-axis constant parameters:
 * float32 arithmetic with broadcast constants.  Quantize: x / scale + zp,
 * then a scale-1 QuantizeLinear (rounds half to even and saturates, as
 * ONNX does; zp is an integer, so adding it before rounding is the same).
 * Dequantize: (x - zp) * scale.
 */
npu_status npu_rewrite_quant_axis(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	bool q = !strcmp(n->op, "QuantizeLinear");
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *s = npu_ir_input(g, n, 1);
	const npu_ir_tensor *z = npu_ir_input(g, n, 2), *y = npu_ir_output(g, n, 0);
	int yid = n->outputs[0], xi = n->inputs[0], r, sc, zc = -1, t[3], one, zp1;
	int64_t axis, xd[NPU_MAX_RANK], o = 1;
	npu_dtype ydt;
	char name[128];
	float *ov;
	uint8_t *zv;
	npu_status st;

	*applied = false;
	if (!x || !s || !y || npu_ir_numel(s) <= 1 || !npu_ir_is_const(s) ||
	    (z && !npu_ir_is_const(z)) || npu_ir_attr_find(n, "block_size") ||
	    (z && !is_8bit(z->dtype) && z->dtype != NPU_DTYPE_INT32))
		return NPU_OK;
	if ((st = npu_ir_attr_int(n, "axis", 1, &axis)))
		return st;
	r = x->rank;
	if (axis < 0)
		axis += r;
	if (axis < 0 || axis >= r || npu_ir_numel(s) != x->dims[axis])
		return NPU_OK;
	if (q ? (x->dtype != NPU_DTYPE_FLOAT32 || !is_8bit(y->dtype)) :
	    (!is_8bit(x->dtype) || y->dtype != NPU_DTYPE_FLOAT32))
		return NPU_OK;
	ydt = y->dtype;
	memcpy(xd, x->dims, sizeof(xd));
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	if ((st = per_axis_const(g, s, r, (int)axis, false, &sc)) ||
	    (z && (st = per_axis_const(g, z, r, (int)axis, true, &zc))))
		return st;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	for (int i = 0; i < 3 && !st; i++)
		st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, xd, &t[i]);
	if (st)
		return st;
	if (!q) {
		int cur = t[0];

		if ((st = npu_rw_op(g, "Cast", 13, name, &xi, 1, &t[0], 1, &one)) ||
		    (st = npu_ir_set_attr_int(&g->nodes[one], "to", 1)))
			return st;
		if (zc >= 0) {
			if ((st = npu_rw_op(g, "Sub", 14, name, (int[]){ t[0], zc }, 2, &t[1], 1,
					    NULL)))
				return st;
			cur = t[1];
		}
		return npu_rw_op(g, "Mul", 14, name, (int[]){ cur, sc }, 2, &yid, 1, NULL);
	}
	if ((st = npu_rw_op(g, "Div", 14, name, (int[]){ xi, sc }, 2, &t[0], 1, NULL)))
		return st;
	if (zc >= 0 &&
	    (st = npu_rw_op(g, "Add", 14, name, (int[]){ t[0], zc }, 2, &t[1], 1, NULL)))
		return st;
	ov = malloc(sizeof(*ov));
	zv = calloc(1, 1);
	if (!ov || !zv) {
		free(ov);
		free(zv);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	*ov = 1.0f;
	if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, 1, &o, ov, &one)))
		return free(zv), st;
	if ((st = npu_rw_const(g, ydt, 1, &o, zv, &zp1)))
		return st;
	return npu_rw_op(g, "QuantizeLinear", 13, name, (int[]){ zc >= 0 ? t[1] : t[0], one, zp1 },
			 3, &yid, 1, NULL);
}

/* A one-element float32 constant. */
static npu_status scalar(npu_ir_graph *g, float v, int *id)
{
	float *p = malloc(sizeof(*p));
	int64_t one = 1;

	if (!p)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	*p = v;
	return npu_rw_const(g, NPU_DTYPE_FLOAT32, 1, &one, p, id);
}

/* *@id = float32 @x (integers in 0..255) as @y (or a new uint8 tensor). */
static npu_status to_uint8(npu_ir_graph *g, const char *name, int x, int y, int *id)
{
	int64_t one = 1, dims[NPU_MAX_RANK];
	uint8_t *z = calloc(1, 1);
	int sc, zp, r = g->tensors[x].rank;
	npu_status st;

	if (!z)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	memcpy(dims, g->tensors[x].dims, sizeof(dims));
	if ((st = npu_rw_const(g, NPU_DTYPE_UINT8, 1, &one, z, &zp)) ||
	    (st = scalar(g, 1.0f, &sc)) ||
	    (st = npu_rw_out(g, y, NPU_DTYPE_UINT8, r, dims, id)))
		return st;
	return npu_rw_op(g, "QuantizeLinear", 13, name, (int[]){ x, sc, zp }, 3, id, 1, NULL);
}

/* Binary float32 node @op (@a, @b) into a new tensor of @ref's shape. */
static npu_status bin(npu_ir_graph *g, const char *name, const char *op, int a, int b, int ref,
		      int *id)
{
	int64_t dims[NPU_MAX_RANK];
	npu_status st;

	memcpy(dims, g->tensors[ref].dims, sizeof(dims));
	st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, g->tensors[ref].rank, dims, id);
	return st ? st : npu_rw_op(g, op, 14, name, (int[]){ a, b }, b >= 0 ? 2 : 1, id, 1, NULL);
}

/*
 * DynamicQuantizeLinear in float32, as its ONNX function: scale =
 * (max(0, max x) - min(0, min x)) / 255, zero point = clamp(round(-min /
 * scale)), y = clamp(round(x / scale) + zero point), the integers then
 * written as uint8 by scale-1 QuantizeLinears.
 */
npu_status npu_rewrite_dyn_quant(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0);
	int xi = n->inputs[0], out[3] = { -1, -1, -1 }, r, kn, c0, c255, mx, mn, t[12];
	int64_t axes[NPU_MAX_RANK], kd[NPU_MAX_RANK];
	char name[128];
	npu_status st;

	*applied = false;
	if (!x || x->dtype != NPU_DTYPE_FLOAT32 || npu_ir_numel(x) < 1)
		return NPU_OK;
	for (int i = 0; i < n->n_outputs && i < 3; i++)
		out[i] = n->outputs[i];
	r = x->rank;
	for (int a = 0; a < r; a++) {
		axes[a] = a;
		kd[a] = 1;
	}
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	for (int i = 0; i < 3; i++)
		if (out[i] >= 0)
			npu_rw_detach(g, k, out[i]);
	g->nodes[k].dead = true;
	if ((st = scalar(g, 0.0f, &c0)) || (st = scalar(g, 255.0f, &c255)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, kd, &mx)) ||
	    (st = npu_rw_op(g, "ReduceMax", 13, name, &xi, 1, &mx, 1, &kn)) ||
	    (st = npu_ir_set_attr_ints(&g->nodes[kn], "axes", axes, r)) ||
	    (st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, r, kd, &mn)) ||
	    (st = npu_rw_op(g, "ReduceMin", 13, name, &xi, 1, &mn, 1, &kn)) ||
	    (st = npu_ir_set_attr_ints(&g->nodes[kn], "axes", axes, r)) ||
	    (st = bin(g, name, "Max", mx, c0, mx, &t[0])) ||
	    (st = bin(g, name, "Min", mn, c0, mn, &t[1])) ||
	    (st = bin(g, name, "Sub", t[0], t[1], mx, &t[2])) ||
	    (st = bin(g, name, "Div", t[2], c255, mx, &t[3])) ||		/* scale */
	    (st = bin(g, name, "Sub", c0, t[1], mx, &t[4])) ||
	    (st = bin(g, name, "Div", t[4], t[3], mx, &t[5])) ||
	    (st = bin(g, name, "Round", t[5], -1, mx, &t[6])) ||
	    (st = bin(g, name, "Max", t[6], c0, mx, &t[7])) ||
	    (st = bin(g, name, "Min", t[7], c255, mx, &t[8])) ||		/* zero point */
	    (st = bin(g, name, "Div", xi, t[3], xi, &t[9])) ||
	    (st = bin(g, name, "Round", t[9], -1, xi, &t[10])) ||
	    (st = bin(g, name, "Add", t[10], t[8], xi, &t[11])) ||
	    (st = bin(g, name, "Max", t[11], c0, xi, &t[0])) ||
	    (st = bin(g, name, "Min", t[0], c255, xi, &t[1])))
		return st;
	if (out[0] >= 0 && (st = to_uint8(g, name, t[1], out[0], &kn)))
		return st;
	if (out[1] >= 0 && (st = npu_rw_reshape(g, name, t[3], 0, NULL, out[1], &kn)))
		return st;
	if (out[2] >= 0) {
		int z;

		if ((st = npu_rw_reshape(g, name, t[8], 0, NULL, -1, &z)))
			return st;
		return to_uint8(g, name, z, out[2], &kn);
	}
	return NPU_OK;
}

/*
 * BitShift on uint8 by constant amounts: in float32, x * 2^s wrapped
 * modulo 256 (LEFT) or floor(x / 2^s) (RIGHT), written back as uint8.
 */
npu_status npu_rewrite_bitshift(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *s = npu_ir_input(g, n, 1);
	int yid = n->outputs[0], xi = n->inputs[0], xf, p, t, w, kn;
	int64_t cnt, dims[NPU_MAX_RANK];
	const char *dir;
	char name[128];
	bool left;
	float *pv;
	npu_status st;

	*applied = false;
	if (!x || !s || x->dtype != NPU_DTYPE_UINT8 || s->dtype != NPU_DTYPE_UINT8 ||
	    !npu_ir_is_const(s))
		return NPU_OK;
	if ((st = npu_ir_attr_string(n, "direction", "", &dir)))
		return st;
	if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
		return NPU_OK;
	left = !strcmp(dir, "LEFT");
	cnt = npu_ir_numel(s);
	for (int64_t i = 0; i < cnt; i++)
		if (((const uint8_t *)s->data)[i] > 15)
			return NPU_OK;	/* 255 * 2^s must stay exact in float32 */
	pv = malloc((size_t)(cnt ? cnt : 1) * sizeof(*pv));
	if (!pv)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t i = 0; i < cnt; i++)
		pv[i] = (float)(1u << ((const uint8_t *)s->data)[i]);
	memcpy(dims, s->dims, sizeof(dims));
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	if ((st = npu_rw_const(g, NPU_DTYPE_FLOAT32, s->rank, dims, pv, &p)))
		return st;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	if ((st = to_float(g, name, xi, &xf)) ||
	    (st = bin(g, name, left ? "Mul" : "Div", xf, p, yid, &t)))
		return st;
	if (left)
		st = wrap_256(g, name, t, NPU_DTYPE_UINT8, &w);
	else
		st = bin(g, name, "Floor", t, -1, yid, &w);
	return st ? st : to_uint8(g, name, w, yid, &kn);
}

/* Whether float32 tensor @t holds only integers, as its producers show. */
static bool integral(const npu_ir_graph *g, int t, int depth)
{
	static const char *const keep[] = { "Clip", "Max", "Min", "Relu", "Add", "Sub", "Mul",
					     "Neg", "Abs", "Identity", "Reshape", "Flatten",
					     "Squeeze", "Unsqueeze", "Transpose" };
	const npu_ir_tensor *x = &g->tensors[t];
	const npu_ir_node *n;
	bool ok = false;

	if (depth > 16)
		return false;
	if (npu_ir_is_const(x)) {
		int64_t cnt = npu_ir_numel(x);

		if (x->dtype != NPU_DTYPE_FLOAT32)
			return x->dtype == NPU_DTYPE_INT64 || x->dtype == NPU_DTYPE_INT32;
		for (int64_t i = 0; i < cnt; i++) {
			float v = ((const float *)x->data)[i];

			if (!isfinite(v) || v != floorf(v))
				return false;
		}
		return true;
	}
	if (x->producer < 0)
		return false;
	n = &g->nodes[x->producer];
	if (!strcmp(n->op, "Round") || !strcmp(n->op, "Floor") || !strcmp(n->op, "Ceil"))
		return true;
	if (!strcmp(n->op, "Cast"))
		return n->inputs[0] >= 0 && g->tensors[n->inputs[0]].dtype != NPU_DTYPE_FLOAT32 &&
		       g->tensors[n->inputs[0]].dtype != NPU_DTYPE_FLOAT16 &&
		       g->tensors[n->inputs[0]].dtype != NPU_DTYPE_BFLOAT16;
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		ok |= !strcmp(n->op, keep[i]);
	if (!ok)
		return false;
	/* Shape operands (Reshape's shape ...) are integers anyway. */
	for (int i = 0; i < n->n_inputs; i++)
		if (n->inputs[i] >= 0 && !integral(g, n->inputs[i], depth + 1))
			return false;
	return true;
}

/*
 * Cast from float32 to int8/uint8 of values its producers make integers
 * (Round, Floor, Ceil, then clamps and integer arithmetic): a scale-1
 * QuantizeLinear, exact for them.  (The CVU rounds where Cast truncates,
 * which only differs for values that are not integers.)  Out of range the
 * result saturates; ONNX leaves that case undefined.
 */
npu_status npu_rewrite_cast_int8(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	int yid = n->outputs[0], xi = n->inputs[0], kn, sc, zp;
	int64_t one = 1;
	npu_dtype dt;
	char name[128];
	uint8_t *z;
	npu_status st;

	*applied = false;
	if (!x || !y || x->dtype != NPU_DTYPE_FLOAT32 || !is_8bit(y->dtype) ||
	    !integral(g, xi, 0))
		return NPU_OK;
	dt = y->dtype;
	snprintf(name, sizeof(name), "%s", n->name);
	z = calloc(1, 1);
	if (!z)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	*applied = true;
	if ((st = npu_rw_const(g, dt, 1, &one, z, &zp)) || (st = scalar(g, 1.0f, &sc)))
		return st;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	return npu_rw_op(g, "QuantizeLinear", 13, name, (int[]){ xi, sc, zp }, 3, &yid, 1, &kn);
}

/*
 * QuantizeLinear with a scale or zero point computed at run time (per
 * tensor): round(x / scale) + zero point in float32, clamped to the 8-bit
 * range, written by a scale-1 QuantizeLinear (exact: integers by then).
 */
npu_status npu_rewrite_quant_computed(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *s = npu_ir_input(g, n, 1);
	const npu_ir_tensor *z = npu_ir_input(g, n, 2), *y = npu_ir_output(g, n, 0);
	int yid = n->outputs[0], xi = n->inputs[0], si = n->inputs[1];
	int zi = n->n_inputs > 2 ? n->inputs[2] : -1, t[5], lo, hi, zf = -1, kn, sc, zp;
	int64_t one = 1;
	npu_dtype dt;
	char name[128];
	uint8_t *zv;
	npu_status st;

	*applied = false;
	if (!x || !s || !y || x->dtype != NPU_DTYPE_FLOAT32 || s->dtype != NPU_DTYPE_FLOAT32 ||
	    !is_8bit(y->dtype) || npu_ir_numel(s) != 1 || (z && npu_ir_numel(z) != 1) ||
	    (z && !is_8bit(z->dtype)) || (npu_ir_is_const(s) && (!z || npu_ir_is_const(z))))
		return NPU_OK;
	dt = y->dtype;
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	if ((st = scalar(g, dt == NPU_DTYPE_INT8 ? -128.0f : 0.0f, &lo)) ||
	    (st = scalar(g, dt == NPU_DTYPE_INT8 ? 127.0f : 255.0f, &hi)) ||
	    (zi >= 0 && (st = to_float(g, name, zi, &zf))))
		return st;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	if ((st = bin(g, name, "Div", xi, si, xi, &t[0])) ||
	    (st = bin(g, name, "Round", t[0], -1, xi, &t[1])))
		return st;
	t[2] = t[1];
	if (zf >= 0 && (st = bin(g, name, "Add", t[1], zf, xi, &t[2])))
		return st;
	if ((st = bin(g, name, "Max", t[2], lo, xi, &t[3])) ||
	    (st = bin(g, name, "Min", t[3], hi, xi, &t[4])))
		return st;
	zv = calloc(1, 1);
	if (!zv)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	if ((st = npu_rw_const(g, dt, 1, &one, zv, &zp)) || (st = scalar(g, 1.0f, &sc)))
		return st;
	return npu_rw_op(g, "QuantizeLinear", 13, name, (int[]){ t[4], sc, zp }, 3, &yid, 1, &kn);
}
