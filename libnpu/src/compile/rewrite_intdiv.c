// SPDX-License-Identifier: MIT
/*
 * Integer division by constants (issue 17): Mod of int32 (int64, uint64,
 * uint32, int16 and uint16 narrowed to it) by a constant divisor, and
 * BitShift of the narrowed unsigned types by constant amounts.  The NPU
 * has int32 Add, Sub, Mul, comparisons and Where, but no integer
 * division, so the quotient is estimated in float32 and corrected in
 * exact int32 arithmetic:
 *
 *   q1 = int(floor(float(a) / y))          off by at most 1 + 256 / |y|
 *   r1 = a - q1 y                          exact, |r1| < 2|y| + 256 < 2^24
 *   q  = q1 + int(floor(float(r1) / y))    off by at most 1 (rounding)
 *   r  = a - q y, then one step: r += y where r has the sign opposite to
 *        y, r -= y where |r| >= |y| (and q -= 1, q += 1)
 *
 * which is floor division (ONNX Mod's default, the sign of the divisor)
 * exactly for every int32 a and every constant divisor with 1 <= |y| <=
 * 2^22 (so r1 is exact in float32).  fmod = 1 (C's remainder, the sign
 * of the dividend) then subtracts y from a non-zero result whose sign
 * differs from a's.  BitShift RIGHT by s is the quotient by 2^s (s <= 22),
 * LEFT an int32 Mul by 2^s, which wraps modulo 2^32 as uint32 does.  Every
 * node is a step of its own: coverage, not speed.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_rewrite_priv.h"

#define DIV_MAX (1 << 22)

/* The output shape the new nodes broadcast to. */
struct shape {
	int rank;
	int64_t dims[NPU_MAX_RANK];
};

/* *@id = Cast(@x, @to), of @x's shape. */
static npu_status cast(npu_ir_graph *g, const char *name, int x, npu_dtype to, int *id)
{
	const npu_ir_tensor *t = &g->tensors[x];
	int64_t dims[NPU_MAX_RANK];
	npu_status st;
	int k;

	memcpy(dims, t->dims, sizeof(dims));
	if ((st = npu_rw_tensor(g, to, t->rank, dims, id)) ||
	    (st = npu_rw_op(g, "Cast", 13, name, &x, 1, id, 1, &k)))
		return st;
	return npu_ir_set_attr_int(&g->nodes[k], "to", to);
}

/* *@id = int32(floor(@num / @den)): float32 @num, float32 @den. */
static npu_status floor_div(npu_ir_graph *g, const char *name, int num, int den, int *id)
{
	int64_t dims[NPU_MAX_RANK];
	int d, f;
	npu_status st;

	if ((st = npu_rw_binary(g, "Div", 14, name, num, den, -1, &d)))
		return st;
	memcpy(dims, g->tensors[d].dims, sizeof(dims));
	if ((st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, g->tensors[d].rank, dims, &f)) ||
	    (st = npu_rw_op(g, "Floor", 13, name, &d, 1, &f, 1, NULL)))
		return st;
	return cast(g, name, f, NPU_DTYPE_INT32, id);
}

/*
 * *@id = the output of broadcasting binary @op (@a, @b): a new tensor,
 * bool for comparisons and logic, else @a's dtype.
 */
static npu_status op2(npu_ir_graph *g, const char *name, const char *op, int a, int b, int *id)
{
	static const char *const logic[] = { "Less", "GreaterOrEqual", "Equal", "Xor", "And" };
	npu_dtype dt = g->tensors[a].dtype;
	int64_t dims[NPU_MAX_RANK];
	int rank;
	npu_status st;

	for (size_t i = 0; i < sizeof(logic) / sizeof(logic[0]); i++)
		if (!strcmp(op, logic[i]))
			dt = NPU_DTYPE_BOOL;
	if (!npu_rw_bshape(&g->tensors[a], &g->tensors[b], dims, &rank))
		return npu_fail(NPU_ERR_INTERNAL, "%s: operands do not broadcast", op);
	st = npu_rw_tensor(g, dt, rank, dims, id);
	return st ? st : npu_rw_op(g, op, 13, name, (int[]){ a, b }, 2, id, 1, NULL);
}

/* *@id = Where(@c, @a, @b) into @y (>= 0) or a new int32 tensor of shape @s. */
static npu_status where(npu_ir_graph *g, const char *name, int c, int a, int b,
			const struct shape *s, int y, int *id)
{
	npu_status st = npu_rw_out(g, y, NPU_DTYPE_INT32, s->rank, s->dims, id);

	return st ? st : npu_rw_op(g, "Where", 16, name, (int[]){ c, a, b }, 3, id, 1, NULL);
}

/* A constant like the divisor @y (@n values, its shape) of @dt from @v. */
static npu_status like(npu_ir_graph *g, const struct shape *y, npu_dtype dt, const int32_t *v,
		       int64_t n, int *id)
{
	void *d = malloc((size_t)(n ? n : 1) * 4);

	if (!d)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int64_t i = 0; i < n; i++) {
		if (dt == NPU_DTYPE_FLOAT32)
			((float *)d)[i] = (float)v[i];
		else
			((int32_t *)d)[i] = v[i];
	}
	return npu_rw_const(g, dt, y->rank, y->dims, d, id);
}

/*
 * Floor division of int32 @a by the constant divisor @yv (the shape of
 * tensor @yt; every |value| in 1..DIV_MAX): *@q the quotient, *@r the
 * remainder (either may be NULL), written into @qy / @ry when >= 0.
 */
static npu_status divmod(npu_ir_graph *g, const char *name, int a, const npu_ir_tensor *y,
			 const int32_t *yv, const struct shape *s, int qy, int ry, int *q, int *r)
{
	/* A copy: adding tensors moves the table. */
	struct shape ys = { .rank = y->rank };
	const struct shape *yt = &ys;
	int64_t n = npu_ir_numel(y), one[1] = { 1 };
	int32_t *sv = malloc((size_t)(n ? n : 1) * 4), *av = malloc((size_t)(n ? n : 1) * 4);
	int yf, yi, sy, ay, af, q1, m, r1, rf, q2, qq, rr, rs, lo, hi, zero, onei, t1, t2, t3;
	int32_t *z = calloc(1, 4), *o = malloc(4);
	npu_status st;

	if (!sv || !av || !z || !o) {
		free(sv);
		free(av);
		free(z);
		free(o);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	memcpy(ys.dims, y->dims, sizeof(ys.dims));
	for (int64_t i = 0; i < n; i++) {
		sv[i] = yv[i] < 0 ? -1 : 1;
		av[i] = yv[i] < 0 ? -yv[i] : yv[i];
	}
	*o = 1;
	st = like(g, yt, NPU_DTYPE_FLOAT32, yv, n, &yf);
	if (!st)
		st = like(g, yt, NPU_DTYPE_INT32, yv, n, &yi);
	if (!st)
		st = like(g, yt, NPU_DTYPE_INT32, sv, n, &sy);
	if (!st)
		st = like(g, yt, NPU_DTYPE_INT32, av, n, &ay);
	free(sv);
	free(av);
	if (!st)
		st = npu_rw_const(g, NPU_DTYPE_INT32, 0, one, z, &zero);
	else
		free(z);
	if (!st)
		st = npu_rw_const(g, NPU_DTYPE_INT32, 0, one, o, &onei);
	else
		free(o);
	if (st)
		return st;
	/* The estimate, its remainder, the estimate of what is left. */
	if ((st = cast(g, name, a, NPU_DTYPE_FLOAT32, &af)) ||
	    (st = floor_div(g, name, af, yf, &q1)) ||
	    (st = op2(g, name, "Mul", q1, yi, &m)) ||
	    (st = op2(g, name, "Sub", a, m, &r1)) ||
	    (st = cast(g, name, r1, NPU_DTYPE_FLOAT32, &rf)) ||
	    (st = floor_div(g, name, rf, yf, &q2)) ||
	    (st = op2(g, name, "Add", q1, q2, &qq)) ||
	    (st = op2(g, name, "Mul", qq, yi, &m)) ||
	    (st = op2(g, name, "Sub", a, m, &rr)))
		return st;
	/* One exact step: rs = r * sign(y) must lie in [0, |y|). */
	if ((st = op2(g, name, "Mul", rr, sy, &rs)) ||
	    (st = op2(g, name, "Less", rs, zero, &lo)) ||
	    (st = op2(g, name, "GreaterOrEqual", rs, ay, &hi)))
		return st;
	if (r) {
		if ((st = op2(g, name, "Add", rr, yi, &t1)) ||
		    (st = op2(g, name, "Sub", rr, yi, &t2)) ||
		    (st = where(g, name, hi, t2, rr, s, -1, &t3)) ||
		    (st = where(g, name, lo, t1, t3, s, ry, r)))
			return st;
	}
	if (q) {
		if ((st = op2(g, name, "Sub", qq, onei, &t1)) ||
		    (st = op2(g, name, "Add", qq, onei, &t2)) ||
		    (st = where(g, name, hi, t2, qq, s, -1, &t3)) ||
		    (st = where(g, name, lo, t1, t3, s, qy, q)))
			return st;
	}
	return NPU_OK;
}

/*
 * The int32 values of constant @t (int32 after narrowing) into a new
 * array, or NULL when @t is not such a constant or a value is outside
 * @lo..@hi or 0 with @nonzero.
 */
static int32_t *const_values(const npu_ir_tensor *t, int32_t lo, int32_t hi, bool nonzero)
{
	int64_t n;
	int32_t *v;

	if (!t || t->dtype != NPU_DTYPE_INT32 || !npu_ir_is_const(t))
		return NULL;
	n = npu_ir_numel(t);
	v = malloc((size_t)(n ? n : 1) * 4);
	if (!v)
		return NULL;
	memcpy(v, t->data, (size_t)n * 4);
	for (int64_t i = 0; i < n; i++)
		if (v[i] < lo || v[i] > hi || (nonzero && !v[i])) {
			free(v);
			return NULL;
		}
	return v;
}

npu_status npu_rewrite_bitshift_int(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *sh = npu_ir_input(g, n, 1);
	int yid = n->outputs[0], xi = n->inputs[0], p, q;
	struct shape s;
	const char *dir;
	char name[128];
	int32_t *sv;
	int64_t cnt, dims[NPU_MAX_RANK];
	bool left;
	npu_status st;

	*applied = false;
	/* Only the unsigned types have BitShift: an int32 one is one of them narrowed. */
	if (!x || x->dtype != NPU_DTYPE_INT32 || npu_ir_is_const(x) || yid < 0 ||
	    !npu_ir_shape_known(&g->tensors[yid]))
		return NPU_OK;
	if ((st = npu_ir_attr_string(n, "direction", "", &dir)))
		return st;
	if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
		return NPU_OK;
	left = !strcmp(dir, "LEFT");
	/* RIGHT divides by 2^s: the divisor bound; LEFT multiplies modulo 2^32. */
	sv = const_values(sh, 0, left ? 31 : 22, false);
	if (!sv)
		return NPU_OK;
	cnt = npu_ir_numel(sh);
	for (int64_t i = 0; i < cnt; i++)
		sv[i] = (int32_t)(1u << sv[i]);	/* 2^31 wraps to INT32_MIN: the same modulo 2^32 */
	s.rank = g->tensors[yid].rank;
	memcpy(s.dims, g->tensors[yid].dims, sizeof(s.dims));
	snprintf(name, sizeof(name), "%s", n->name ? n->name : "");
	memcpy(dims, sh->dims, sizeof(dims));
	*applied = true;
	npu_rw_detach(g, k, yid);
	g->nodes[k].dead = true;
	if (!left) {
		st = divmod(g, name, xi, &g->tensors[g->nodes[k].inputs[1]], sv, &s, yid, -1, &q,
			    NULL);
		free(sv);
		return st;
	}
	if ((st = npu_rw_const(g, NPU_DTYPE_INT32, g->tensors[g->nodes[k].inputs[1]].rank, dims,
			       sv, &p)))
		return st;
	return npu_rw_binary(g, "Mul", 14, name, xi, p, yid, &q);
}
