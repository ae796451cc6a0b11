// SPDX-License-Identifier: MIT
/*
 * Static shape and dtype inference, constant folding of shape subgraphs,
 * and the NPU compiler's operator list.
 *
 * One table (ops[]) says, for every operator libnpu knows, the first opset
 * that has it, its shape rule and whether the NPU compiler runs it or only
 * folds it away as a constant.  npu_ir_infer_shapes() walks the nodes in
 * topological order: each node's shape rule sets its outputs' dtype and
 * shape (checking them against what the model declares), then nodes whose
 * inputs are all constant and whose op has an evaluator are computed
 * (npu_ir_const.c) and dropped.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir/npu_ir.h"

#define OP_NPU		1u	/* the NPU compiler lowers it */
#define OP_CONST	2u	/* supported only when it folds to a constant */

/* Kernel sizes, strides, dilations and pads beyond this are not real. */
#define GEOM_MAX	((int64_t)1 << 24)

/* Folding budget: constants larger than this stay nodes. */
#define FOLD_MAX_BYTES	((size_t)16 << 20)
#define FOLD_TOTAL_BYTES ((size_t)128 << 20)

typedef npu_status (*shape_fn)(npu_ir_graph *g, npu_ir_node *n);
/* Extra support check: NULL if the node is fine, else what is not. */
typedef const char *(*support_fn)(const npu_ir_graph *g, const npu_ir_node *n);

struct op_def {
	const char *op;
	int since;		/* first opset with this operator */
	int until;		/* last opset with it (0: still current) */
	shape_fn infer;
	unsigned flags;
	support_fn support;
};

/* ---- helpers ---- */

static npu_status nerr(const npu_ir_node *n, npu_status s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static npu_status nerr(const npu_ir_node *n, npu_status s, const char *fmt, ...)
{
	char msg[512], lbl[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return npu_fail(s, "node %s (%s): %s", npu_ir_node_label(n, lbl, sizeof(lbl)), n->op, msg);
}

static bool is_float(npu_dtype t)
{
	return t == NPU_DTYPE_FLOAT32 || t == NPU_DTYPE_FLOAT16 || t == NPU_DTYPE_BFLOAT16;
}

static bool is_int(npu_dtype t)
{
	return t == NPU_DTYPE_INT32 || t == NPU_DTYPE_INT64;
}

static bool is_q8(npu_dtype t)
{
	return t == NPU_DTYPE_INT8 || t == NPU_DTYPE_UINT8;
}

static const char *dts(npu_dtype t)
{
	return t ? npu_dtype_str(t) : "unknown";
}

static npu_ir_tensor *in(const npu_ir_graph *g, const npu_ir_node *n, int i)
{
	return npu_ir_input(g, n, i);
}

static npu_status need_in(const npu_ir_graph *g, const npu_ir_node *n, int i,
			  npu_ir_tensor **out)
{
	*out = in(g, n, i);
	if (!*out)
		return nerr(n, NPU_ERR_FORMAT, "input %d is missing", i);
	return NPU_OK;
}

static npu_status need_float(const npu_ir_node *n, const npu_ir_tensor *t)
{
	if (!is_float(t->dtype))
		return nerr(n, NPU_ERR_SHAPE, "input '%s' is %s, expected a float type",
			    t->name, dts(t->dtype));
	return NPU_OK;
}

static npu_status same_dtype(const npu_ir_node *n, const npu_ir_tensor *a,
			     const npu_ir_tensor *b)
{
	if (a->dtype != b->dtype)
		return nerr(n, NPU_ERR_SHAPE, "inputs '%s' (%s) and '%s' (%s) differ in dtype",
			    a->name, dts(a->dtype), b->name, dts(b->dtype));
	return NPU_OK;
}

static npu_status need_rank(const npu_ir_node *n, const npu_ir_tensor *t, int lo, int hi)
{
	if (t->rank < lo || t->rank > hi) {
		if (lo == hi)
			return nerr(n, NPU_ERR_SHAPE, "input '%s' has rank %d, expected %d",
				    t->name, t->rank, lo);
		return nerr(n, NPU_ERR_SHAPE, "input '%s' has rank %d, expected %d..%d",
			    t->name, t->rank, lo, hi);
	}
	return NPU_OK;
}

/* Normalize @axis against @rank (accepting -rank..rank-1). */
static npu_status norm_axis(const npu_ir_node *n, int64_t axis, int rank, int *out)
{
	if (axis < -rank || axis >= rank)
		return nerr(n, NPU_ERR_SHAPE, "axis %" PRId64 " is out of range for rank %d",
			    axis, rank);
	*out = (int)(axis < 0 ? axis + rank : axis);
	return NPU_OK;
}

/*
 * Set output @i's dtype and shape, checking them against any the model
 * declared.  Dims must be within NPU_IR_DIM_MAX.
 */
static npu_status set_out(npu_ir_graph *g, const npu_ir_node *n, int i, npu_dtype dtype,
			  int rank, const int64_t *dims)
{
	npu_ir_tensor *t = npu_ir_output(g, n, i);
	npu_ir_tensor want;
	char a[160], b[160];
	int64_t numel = 1;

	if (!t)
		return NPU_OK;
	if (rank < 0 || rank > NPU_MAX_RANK)
		return nerr(n, NPU_ERR_UNSUPPORTED, "output '%s' would have rank %d (max %d)",
			    t->name, rank, NPU_MAX_RANK);
	for (int d = 0; d < rank; d++) {
		if (dims[d] < 0 || dims[d] > NPU_IR_DIM_MAX ||
		    (dims[d] && numel > NPU_IR_NUMEL_MAX / dims[d]))
			return nerr(n, NPU_ERR_SHAPE, "output '%s' would have dimension %d = %" PRId64
				    " (negative or too large)", t->name, d, dims[d]);
		numel *= dims[d];
	}
	memset(&want, 0, sizeof(want));
	want.dtype = dtype;
	want.rank = rank;
	if (rank)
		memcpy(want.dims, dims, (size_t)rank * sizeof(int64_t));
	if ((t->dtype && t->dtype != dtype) || (t->rank >= 0 && t->rank != rank))
		goto mismatch;
	for (int d = 0; t->rank >= 0 && d < rank; d++)
		if (t->dims[d] >= 0 && t->dims[d] != dims[d])
			goto mismatch;
	t->dtype = dtype;
	t->rank = rank;
	for (int d = 0; d < NPU_MAX_RANK; d++)
		t->dims[d] = d < rank ? dims[d] : -1;
	return NPU_OK;
mismatch:
	return nerr(n, NPU_ERR_SHAPE, "output '%s' is %s but the model declares %s", t->name,
		    npu_ir_shape_str(&want, a, sizeof(a)), npu_ir_shape_str(t, b, sizeof(b)));
}

static npu_status set_like(npu_ir_graph *g, const npu_ir_node *n, int i, const npu_ir_tensor *x)
{
	return set_out(g, n, i, x->dtype, x->rank, x->dims);
}

/* A constant int list from input @i: error unless constant. */
static npu_status const_ints_in(npu_ir_graph *g, const npu_ir_node *n, int i,
				int64_t *vals, int cap, int *count)
{
	const npu_ir_tensor *t = in(g, n, i);

	if (!t->data) {
		g->need_const = n->inputs[i];
		return nerr(n, NPU_ERR_SHAPE, "input '%s' must be a constant (it is computed at run time, so the output shape would not be static)",
			    t->name);
	}
	if (npu_ir_const_ints(t, vals, cap, count))
		return nerr(n, NPU_ERR_SHAPE, "input '%s' must be a constant int64 list of at most %d values",
			    t->name, cap);
	return NPU_OK;
}

static npu_status const_floats_in(npu_ir_graph *g, const npu_ir_node *n, int i,
				  float *vals, int cap, int *count)
{
	const npu_ir_tensor *t = in(g, n, i);

	if (!t->data) {
		g->need_const = n->inputs[i];
		return nerr(n, NPU_ERR_SHAPE, "input '%s' must be a constant (it is computed at run time, so the output shape would not be static)",
			    t->name);
	}
	if (npu_ir_const_floats(t, vals, cap, count))
		return nerr(n, NPU_ERR_SHAPE, "input '%s' must be a constant float list of at most %d values",
			    t->name, cap);
	return NPU_OK;
}

/*
 * An "axes"-like list, from attribute @attr when opset < @input_since,
 * else from input @input (if present).  *@count = -1 when absent.
 */
static npu_status axes_list(npu_ir_graph *g, const npu_ir_node *n, const char *attr,
			    int input, int input_since, int64_t *vals, int *count)
{
	const int64_t *a;
	npu_status st;

	*count = -1;
	if (n->opset >= input_since) {
		if (!in(g, n, input))
			return NPU_OK;
		return const_ints_in(g, n, input, vals, NPU_MAX_RANK * 2, count);
	}
	st = npu_ir_attr_ints(n, attr, &a, count);
	if (st)
		return st;
	if (*count > NPU_MAX_RANK * 2)
		return nerr(n, NPU_ERR_SHAPE, "attribute '%s' has %d values", attr, *count);
	for (int i = 0; i < *count; i++)
		vals[i] = a[i];
	return NPU_OK;
}

/* Numpy broadcast of @a and @b into @dims/@rank. */
static npu_status broadcast(const npu_ir_node *n, const npu_ir_tensor *a, const npu_ir_tensor *b,
			    int64_t *dims, int *rank)
{
	int r = a->rank > b->rank ? a->rank : b->rank;

	for (int d = 0; d < r; d++) {
		int ia = d - (r - a->rank), ib = d - (r - b->rank);
		int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;

		if (da == db || db == 1)
			dims[d] = da;
		else if (da == 1)
			dims[d] = db;
		else {
			char x[160], y[160];

			return nerr(n, NPU_ERR_SHAPE, "shapes %s ('%s') and %s ('%s') do not broadcast",
				    npu_ir_shape_str(a, x, sizeof(x)), a->name,
				    npu_ir_shape_str(b, y, sizeof(y)), b->name);
		}
	}
	*rank = r;
	return NPU_OK;
}

/* @b broadcasts to @a's shape (unidirectional). */
static npu_status broadcast_to(const npu_ir_node *n, const npu_ir_tensor *b, const npu_ir_tensor *a)
{
	int64_t dims[NPU_MAX_RANK];
	int r = 0;
	npu_status st = broadcast(n, a, b, dims, &r);

	if (st)
		return st;
	if (r != a->rank || memcmp(dims, a->dims, (size_t)r * sizeof(int64_t)))
		return nerr(n, NPU_ERR_SHAPE, "input '%s' does not broadcast to the shape of '%s'",
			    b->name, a->name);
	return NPU_OK;
}

/* Read a quantization scale/zero point pair into @t's quant when constant. */
static npu_status note_quant(npu_ir_tensor *t, const npu_ir_tensor *scale,
			     const npu_ir_tensor *zp, int64_t axis)
{
	int64_t count;
	float *s;
	int32_t *z;
	npu_status st;

	if (!t || !scale || !scale->data || t->quant.count || (zp && !zp->data))
		return NPU_OK;
	count = npu_ir_numel(scale);
	if (axis < 0)
		axis += t->rank;
	if (count < 1 || count > (1 << 20) || (zp && npu_ir_numel(zp) != count) ||
	    !is_float(scale->dtype) ||
	    (count > 1 && (axis < 0 || axis >= t->rank || t->dims[axis] != count)))
		return NPU_OK;
	s = malloc((size_t)count * sizeof(*s));
	z = calloc((size_t)count, sizeof(*z));
	if (!s || !z) {
		free(s);
		free(z);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	for (int64_t i = 0; i < count; i++) {
		const char *p = zp ? (const char *)zp->data : NULL;
		uint16_t h;

		if (scale->dtype == NPU_DTYPE_FLOAT32) {
			memcpy(&s[i], (const char *)scale->data + 4 * i, 4);
		} else {
			memcpy(&h, (const char *)scale->data + 2 * i, 2);
			s[i] = scale->dtype == NPU_DTYPE_FLOAT16 ? npu_ir_f16_to_f32(h)
								 : npu_ir_bf16_to_f32(h);
		}
		if (!p)
			continue;
		if (zp->dtype == NPU_DTYPE_INT8)
			z[i] = (int8_t)p[i];
		else if (zp->dtype == NPU_DTYPE_UINT8)
			z[i] = (uint8_t)p[i];
		else if (zp->dtype == NPU_DTYPE_INT32)
			memcpy(&z[i], p + 4 * i, 4);
	}
	st = npu_ir_set_quant(t, (int)count, (int)axis, s, z);
	free(s);
	free(z);
	return st;
}

/* ---- elementwise ---- */

static npu_status shape_unary(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	npu_status st = need_in(g, n, 0, &x);

	return st ? st : set_like(g, n, 0, x);
}

static npu_status shape_unary_float(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = need_float(n, x);
	return st ? st : set_like(g, n, 0, x);
}

static npu_status shape_softmax(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t axis;
	int a = 0;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = need_float(n, x);
	if (!st)
		st = npu_ir_attr_int(n, "axis", n->opset < 13 ? 1 : -1, &axis);
	if (!st && x->rank == 0)
		st = nerr(n, NPU_ERR_SHAPE, "input '%s' is a scalar", x->name);
	if (!st)
		st = norm_axis(n, axis, x->rank, &a);
	return st ? st : set_like(g, n, 0, x);
}

static npu_status shape_clip(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	npu_status st = need_in(g, n, 0, &x);

	for (int i = 1; !st && i < n->n_inputs && i < 3; i++) {
		const npu_ir_tensor *b = in(g, n, i);

		if (b && npu_ir_numel(b) != 1)
			st = nerr(n, NPU_ERR_SHAPE, "bound '%s' must be a scalar", b->name);
		else if (b)
			st = same_dtype(n, x, b);
	}
	return st ? st : set_like(g, n, 0, x);
}

static npu_status shape_dropout(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *tm = in(g, n, 2);
	npu_status st = need_in(g, n, 0, &x);

	if (st)
		return st;
	if (n->n_outputs > 1 && n->outputs[1] >= 0)
		return nerr(n, NPU_ERR_UNSUPPORTED, "the mask output (bool) is not supported");
	if (tm && (!tm->data || ((const char *)tm->data)[0]))
		return nerr(n, NPU_ERR_UNSUPPORTED, "training mode is not supported");
	return set_like(g, n, 0, x);
}

static npu_status shape_binary(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *a, *b;
	int64_t dims[NPU_MAX_RANK];
	int r = 0;
	npu_status st = need_in(g, n, 0, &a);

	if (!st)
		st = need_in(g, n, 1, &b);
	if (!st && strcmp(n->op, "Pow") != 0)
		st = same_dtype(n, a, b);
	if (!st)
		st = broadcast(n, a, b, dims, &r);
	return st ? st : set_out(g, n, 0, a->dtype, r, dims);
}

/* Max, Min: any number of inputs, broadcast together. */
static npu_status shape_variadic(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *a, acc;
	npu_status st = need_in(g, n, 0, &a);

	if (st)
		return st;
	acc = *a;
	for (int i = 1; i < n->n_inputs && !st; i++) {
		npu_ir_tensor *b;

		st = need_in(g, n, i, &b);
		if (!st)
			st = same_dtype(n, &acc, b);
		if (!st) {
			int64_t dims[NPU_MAX_RANK] = { 0 };
			int r = 0;

			st = broadcast(n, &acc, b, dims, &r);
			if (!st) {
				memcpy(acc.dims, dims, sizeof(dims));
				acc.rank = r;
			}
		}
	}
	return st ? st : set_out(g, n, 0, a->dtype, acc.rank, acc.dims);
}

static npu_status shape_prelu(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *slope;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = need_in(g, n, 1, &slope);
	if (!st)
		st = same_dtype(n, x, slope);
	if (!st)
		st = broadcast_to(n, slope, x);
	return st ? st : set_like(g, n, 0, x);
}

static npu_status shape_cast(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t to;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = npu_ir_attr_int(n, "to", 0, &to);
	if (st)
		return st;
	if (!npu_dtype_size((npu_dtype)to))
		return nerr(n, NPU_ERR_UNSUPPORTED, "cast to ONNX data type %" PRId64
			    " is not supported (the NPU has float32, float16, bfloat16, int8, uint8, int32, int64)",
			    to);
	return set_out(g, n, 0, (npu_dtype)to, x->rank, x->dims);
}

/* ---- convolution and pooling ---- */

struct geom {
	int ns;
	int64_t k[NPU_MAX_RANK], s[NPU_MAX_RANK], d[NPU_MAX_RANK];
	int64_t pb[NPU_MAX_RANK], pe[NPU_MAX_RANK];
	const char *auto_pad;
};

static npu_status geom_list(const npu_ir_node *n, const char *name, int want, int64_t def,
			    int64_t lo, int64_t *out)
{
	const int64_t *v;
	int c;
	npu_status st = npu_ir_attr_ints(n, name, &v, &c);

	if (st)
		return st;
	if (c < 0) {
		for (int i = 0; i < want; i++)
			out[i] = def;
		return NPU_OK;
	}
	if (c != want)
		return nerr(n, NPU_ERR_SHAPE, "attribute '%s' has %d values, expected %d",
			    name, c, want);
	for (int i = 0; i < c; i++) {
		if (v[i] < lo || v[i] > GEOM_MAX)
			return nerr(n, NPU_ERR_FORMAT, "attribute '%s' has value %" PRId64
				    " out of range", name, v[i]);
		out[i] = v[i];
	}
	return NPU_OK;
}

/*
 * Kernel, strides, dilations, pads and auto_pad of a conv or pool over @ns
 * spatial dims; @wk: the kernel from the weights (NULL for pools).
 */
static npu_status read_geom(const npu_ir_node *n, int ns, const int64_t *wk, struct geom *gm)
{
	int64_t pads[2 * NPU_MAX_RANK];
	npu_status st;

	gm->ns = ns;
	st = geom_list(n, "kernel_shape", ns, -1, 1, gm->k);
	if (!st && gm->k[0] < 0 && !wk && ns > 0)
		st = nerr(n, NPU_ERR_FORMAT, "attribute 'kernel_shape' is missing");
	for (int i = 0; !st && wk && i < ns; i++) {
		if (gm->k[i] >= 0 && gm->k[i] != wk[i])
			st = nerr(n, NPU_ERR_SHAPE, "kernel_shape does not match the weights");
		else if (wk[i] < 1 || wk[i] > GEOM_MAX)
			st = nerr(n, NPU_ERR_SHAPE, "the weights have a kernel size of %" PRId64, wk[i]);
		gm->k[i] = wk[i];
	}
	if (!st)
		st = geom_list(n, "strides", ns, 1, 1, gm->s);
	if (!st)
		st = geom_list(n, "dilations", ns, 1, 1, gm->d);
	if (!st)
		st = geom_list(n, "pads", 2 * ns, 0, 0, pads);
	if (!st)
		st = npu_ir_attr_string(n, "auto_pad", "NOTSET", &gm->auto_pad);
	if (st)
		return st;
	if (strcmp(gm->auto_pad, "NOTSET") && strcmp(gm->auto_pad, "VALID") &&
	    strcmp(gm->auto_pad, "SAME_UPPER") && strcmp(gm->auto_pad, "SAME_LOWER"))
		return nerr(n, NPU_ERR_FORMAT, "auto_pad '%s' is not NOTSET, VALID, SAME_UPPER or SAME_LOWER",
			    gm->auto_pad);
	for (int i = 0; i < ns; i++) {
		gm->pb[i] = pads[i];
		gm->pe[i] = pads[ns + i];
	}
	return NPU_OK;
}

/*
 * Output size of spatial dim @i of a conv or pool over input size @x,
 * resolving auto_pad into explicit pads.
 */
static npu_status geom_out(const npu_ir_node *n, struct geom *gm, int i, int64_t x,
			   bool ceil_mode, int64_t *out)
{
	int64_t dk = (gm->k[i] - 1) * gm->d[i] + 1, o, span;

	if (!strcmp(gm->auto_pad, "SAME_UPPER") || !strcmp(gm->auto_pad, "SAME_LOWER")) {
		int64_t total, small;

		o = (x + gm->s[i] - 1) / gm->s[i];
		total = (o - 1) * gm->s[i] + dk - x;
		if (total < 0)
			total = 0;
		small = total / 2;
		gm->pb[i] = !strcmp(gm->auto_pad, "SAME_UPPER") ? small : total - small;
		gm->pe[i] = total - gm->pb[i];
		*out = o;
		return NPU_OK;
	}
	if (!strcmp(gm->auto_pad, "VALID"))
		gm->pb[i] = gm->pe[i] = 0;
	span = x + gm->pb[i] + gm->pe[i] - dk;
	if (span < 0)
		return nerr(n, NPU_ERR_SHAPE, "the kernel (%" PRId64 " with dilation) is larger than the padded input (%" PRId64 ")",
			    dk, x + gm->pb[i] + gm->pe[i]);
	o = span / gm->s[i] + 1;
	if (ceil_mode && span % gm->s[i]) {
		o++;
		/* The last window must start inside the input or left padding. */
		if ((o - 1) * gm->s[i] >= x + gm->pb[i])
			o--;
	}
	*out = o;
	return NPU_OK;
}

/* Write the resolved geometry back as explicit attributes. */
static npu_status geom_canon(npu_ir_node *n, const struct geom *gm)
{
	int64_t pads[2 * NPU_MAX_RANK];
	npu_status st;

	for (int i = 0; i < gm->ns; i++) {
		pads[i] = gm->pb[i];
		pads[gm->ns + i] = gm->pe[i];
	}
	st = npu_ir_set_attr_ints(n, "kernel_shape", gm->k, gm->ns);
	if (!st)
		st = npu_ir_set_attr_ints(n, "strides", gm->s, gm->ns);
	if (!st)
		st = npu_ir_set_attr_ints(n, "dilations", gm->d, gm->ns);
	if (!st)
		st = npu_ir_set_attr_ints(n, "pads", pads, 2 * gm->ns);
	if (!st)
		st = npu_ir_set_attr_string(n, "auto_pad", "NOTSET");
	return st;
}

/* Conv-like: x [N, C, spatial...], w [M, C/group, k...] -> [N, M, out...]. */
static npu_status conv_common(npu_ir_graph *g, npu_ir_node *n, const npu_ir_tensor *x,
			      const npu_ir_tensor *w, const npu_ir_tensor *b, npu_dtype out_dtype)
{
	struct geom gm;
	int64_t group, dims[NPU_MAX_RANK];
	npu_status st = need_rank(n, x, 3, NPU_MAX_RANK);

	if (!st && w->rank != x->rank)
		st = nerr(n, NPU_ERR_SHAPE, "weights '%s' have rank %d, input '%s' rank %d",
			  w->name, w->rank, x->name, x->rank);
	if (!st)
		st = npu_ir_attr_int(n, "group", 1, &group);
	if (st)
		return st;
	if (group < 1 || group > NPU_IR_DIM_MAX || x->dims[1] != w->dims[1] * group ||
	    w->dims[0] % group)
		return nerr(n, NPU_ERR_SHAPE, "input channels %" PRId64 ", weights [%" PRId64 ", %" PRId64
			    ", ...] and group %" PRId64 " do not fit", x->dims[1], w->dims[0],
			    w->dims[1], group);
	if (b && (b->rank != 1 || b->dims[0] != w->dims[0]))
		return nerr(n, NPU_ERR_SHAPE, "bias '%s' must have shape [%" PRId64 "]", b->name,
			    w->dims[0]);
	st = read_geom(n, x->rank - 2, w->dims + 2, &gm);
	for (int i = 0; !st && i < gm.ns; i++)
		st = geom_out(n, &gm, i, x->dims[2 + i], false, &dims[2 + i]);
	if (!st)
		st = geom_canon(n, &gm);
	if (!st)
		st = npu_ir_set_attr_int(n, "group", group);
	if (st)
		return st;
	dims[0] = x->dims[0];
	dims[1] = w->dims[0];
	return set_out(g, n, 0, out_dtype, x->rank, dims);
}

static npu_status shape_conv(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *w;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = need_in(g, n, 1, &w);
	if (!st)
		st = need_float(n, x);
	if (!st)
		st = same_dtype(n, x, w);
	if (!st && in(g, n, 2))
		st = same_dtype(n, x, in(g, n, 2));
	return st ? st : conv_common(g, n, x, w, in(g, n, 2), x->dtype);
}

static npu_status shape_conv_integer(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *w;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = need_in(g, n, 1, &w);
	if (!st && (!is_q8(x->dtype) || !is_q8(w->dtype)))
		st = nerr(n, NPU_ERR_SHAPE, "inputs must be int8 or uint8");
	return st ? st : conv_common(g, n, x, w, NULL, NPU_DTYPE_INT32);
}

static npu_status shape_qlinear_conv(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *w, *yzp = in(g, n, 7), *b = in(g, n, 8);
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = need_in(g, n, 3, &w);
	if (!st && (!is_q8(x->dtype) || !is_q8(w->dtype)))
		st = nerr(n, NPU_ERR_SHAPE, "x and w must be int8 or uint8");
	if (!st && b && b->dtype != NPU_DTYPE_INT32)
		st = nerr(n, NPU_ERR_SHAPE, "bias '%s' must be int32", b->name);
	if (!st)
		st = conv_common(g, n, x, w, b, yzp ? yzp->dtype : x->dtype);
	if (!st)
		st = note_quant(x, in(g, n, 1), in(g, n, 2), 1);
	if (!st)
		st = note_quant(w, in(g, n, 4), in(g, n, 5), 0);
	if (!st)
		st = note_quant(npu_ir_output(g, n, 0), in(g, n, 6), yzp, 1);
	return st;
}

static npu_status shape_conv_transpose(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *w, *b = in(g, n, 2);
	struct geom gm;
	int64_t group, op[NPU_MAX_RANK], dims[NPU_MAX_RANK], oshape[NPU_MAX_RANK];
	const int64_t *os;
	int nos;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = need_in(g, n, 1, &w);
	if (!st)
		st = need_float(n, x);
	if (!st)
		st = same_dtype(n, x, w);
	if (!st)
		st = need_rank(n, x, 3, NPU_MAX_RANK);
	if (!st && w->rank != x->rank)
		st = nerr(n, NPU_ERR_SHAPE, "weights '%s' have rank %d, input '%s' rank %d",
			  w->name, w->rank, x->name, x->rank);
	if (!st)
		st = npu_ir_attr_int(n, "group", 1, &group);
	if (st)
		return st;
	if (group < 1 || group > NPU_IR_DIM_MAX || x->dims[1] != w->dims[0])
		return nerr(n, NPU_ERR_SHAPE, "input channels %" PRId64 " do not match the weights' %" PRId64,
			    x->dims[1], w->dims[0]);
	if (w->dims[0] % group)
		return nerr(n, NPU_ERR_SHAPE, "group %" PRId64 " does not divide %" PRId64 " channels",
			    group, w->dims[0]);
	if (b && (b->rank != 1 || b->dims[0] != w->dims[1] * group))
		return nerr(n, NPU_ERR_SHAPE, "bias '%s' must have shape [%" PRId64 "]", b->name,
			    w->dims[1] * group);
	st = read_geom(n, x->rank - 2, w->dims + 2, &gm);
	if (!st)
		st = geom_list(n, "output_padding", gm.ns, 0, 0, op);
	if (!st)
		st = npu_ir_attr_ints(n, "output_shape", &os, &nos);
	if (st)
		return st;
	if (nos >= 0) {
		if (nos != gm.ns && nos != x->rank)
			return nerr(n, NPU_ERR_SHAPE, "output_shape has %d values, expected %d",
				    nos, gm.ns);
		for (int i = 0; i < gm.ns; i++) {
			oshape[i] = os[nos - gm.ns + i];
			if (oshape[i] < 0 || oshape[i] > NPU_IR_DIM_MAX)
				return nerr(n, NPU_ERR_SHAPE, "output_shape value %" PRId64 " out of range",
					    oshape[i]);
		}
	}
	for (int i = 0; i < gm.ns; i++) {
		int64_t in_ = x->dims[2 + i], dk = (gm.k[i] - 1) * gm.d[i] + 1;
		int64_t full = gm.s[i] * (in_ - 1) + op[i] + dk;
		bool same = !strcmp(gm.auto_pad, "SAME_UPPER") || !strcmp(gm.auto_pad, "SAME_LOWER");
		int64_t total;

		if (in_ < 1)
			return nerr(n, NPU_ERR_SHAPE, "input '%s' has an empty spatial dimension", x->name);
		if (nos >= 0 || same) {
			int64_t want = nos >= 0 ? oshape[i] : in_ * gm.s[i];

			total = full - want;
			if (total < 0) {	/* grow at the end, like output_padding */
				op[i] -= total;
				total = 0;
			}
			/* ONNX: SAME_UPPER puts the larger half at the end. */
			if (!strcmp(gm.auto_pad, "SAME_UPPER")) {
				gm.pb[i] = total / 2;
				gm.pe[i] = total - total / 2;
			} else {
				gm.pb[i] = total - total / 2;
				gm.pe[i] = total / 2;
			}
		} else if (!strcmp(gm.auto_pad, "VALID")) {
			gm.pb[i] = gm.pe[i] = 0;
		}
		dims[2 + i] = gm.s[i] * (in_ - 1) + op[i] + dk - gm.pb[i] - gm.pe[i];
		if (dims[2 + i] < 0)
			return nerr(n, NPU_ERR_SHAPE, "pads larger than the output");
	}
	st = geom_canon(n, &gm);
	if (!st)
		st = npu_ir_set_attr_ints(n, "output_padding", op, gm.ns);
	if (!st)
		st = npu_ir_set_attr_int(n, "group", group);
	if (st)
		return st;
	npu_ir_remove_attr(n, "output_shape");
	dims[0] = x->dims[0];
	dims[1] = w->dims[1] * group;
	return set_out(g, n, 0, x->dtype, x->rank, dims);
}

static npu_status shape_pool(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	struct geom gm;
	int64_t ceil_mode = 0, dims[NPU_MAX_RANK];
	npu_status st = need_in(g, n, 0, &x);

	if (!st && !(is_q8(x->dtype) && !strcmp(n->op, "MaxPool")))
		st = need_float(n, x);
	if (!st)
		st = need_rank(n, x, 3, NPU_MAX_RANK);
	if (!st)
		st = read_geom(n, x->rank - 2, NULL, &gm);
	if (!st)
		st = npu_ir_attr_int(n, "ceil_mode", 0, &ceil_mode);
	for (int i = 0; !st && i < gm.ns; i++)
		st = geom_out(n, &gm, i, x->dims[2 + i], ceil_mode != 0, &dims[2 + i]);
	if (!st)
		st = geom_canon(n, &gm);
	if (st)
		return st;
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	st = set_out(g, n, 0, x->dtype, x->rank, dims);
	if (!st)	/* MaxPool's Indices */
		st = set_out(g, n, 1, NPU_DTYPE_INT64, x->rank, dims);
	return st;
}

static npu_status shape_global_pool(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t dims[NPU_MAX_RANK];
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = need_float(n, x);
	if (!st)
		st = need_rank(n, x, 3, NPU_MAX_RANK);
	if (st)
		return st;
	for (int d = 0; d < x->rank; d++)
		dims[d] = d < 2 ? x->dims[d] : 1;
	return set_out(g, n, 0, x->dtype, x->rank, dims);
}

/* ---- matrix ---- */

static npu_status shape_gemm(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *a, *b, *c = in(g, n, 2);
	int64_t ta, tb, dims[2], k;
	npu_status st = need_in(g, n, 0, &a);

	if (!st)
		st = need_in(g, n, 1, &b);
	if (!st)
		st = same_dtype(n, a, b);
	if (!st)
		st = need_rank(n, a, 2, 2);
	if (!st)
		st = need_rank(n, b, 2, 2);
	if (!st)
		st = npu_ir_attr_int(n, "transA", 0, &ta);
	if (!st)
		st = npu_ir_attr_int(n, "transB", 0, &tb);
	if (st)
		return st;
	dims[0] = a->dims[ta ? 1 : 0];
	k = a->dims[ta ? 0 : 1];
	dims[1] = b->dims[tb ? 0 : 1];
	if (b->dims[tb ? 1 : 0] != k)
		return nerr(n, NPU_ERR_SHAPE, "inner dimensions differ: %" PRId64 " and %" PRId64,
			    k, b->dims[tb ? 1 : 0]);
	st = set_out(g, n, 0, a->dtype, 2, dims);
	if (!st && c) {
		st = same_dtype(n, a, c);
		if (!st)
			st = broadcast_to(n, c, npu_ir_output(g, n, 0));
	}
	return st;
}

static npu_status matmul_common(npu_ir_graph *g, npu_ir_node *n, const npu_ir_tensor *a,
				const npu_ir_tensor *b, npu_dtype out_dtype)
{
	npu_ir_tensor ba, bb;
	int64_t dims[NPU_MAX_RANK], ka, kb;
	int r = 0, ra = a->rank, rb = b->rank;
	npu_status st;

	if (ra < 1 || rb < 1)
		return nerr(n, NPU_ERR_SHAPE, "inputs must have rank 1 or more");
	ka = a->dims[ra - 1];
	kb = rb == 1 ? b->dims[0] : b->dims[rb - 2];
	if (ka != kb)
		return nerr(n, NPU_ERR_SHAPE, "inner dimensions differ: %" PRId64 " ('%s') and %" PRId64 " ('%s')",
			    ka, a->name, kb, b->name);
	/* Broadcast the batch dims. */
	memset(&ba, 0, sizeof(ba));
	memset(&bb, 0, sizeof(bb));
	ba.name = a->name;
	bb.name = b->name;
	ba.rank = ra > 2 ? ra - 2 : 0;
	bb.rank = rb > 2 ? rb - 2 : 0;
	memcpy(ba.dims, a->dims, (size_t)ba.rank * sizeof(int64_t));
	memcpy(bb.dims, b->dims, (size_t)bb.rank * sizeof(int64_t));
	st = broadcast(n, &ba, &bb, dims, &r);
	if (st)
		return st;
	if (ra > 1)
		dims[r++] = a->dims[ra - 2];
	if (rb > 1)
		dims[r++] = b->dims[rb - 1];
	if (r > NPU_MAX_RANK)
		return nerr(n, NPU_ERR_UNSUPPORTED, "rank too large");
	return set_out(g, n, 0, out_dtype, r, dims);
}

static npu_status shape_matmul(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *a, *b;
	npu_status st = need_in(g, n, 0, &a);

	if (!st)
		st = need_in(g, n, 1, &b);
	if (!st)
		st = same_dtype(n, a, b);
	return st ? st : matmul_common(g, n, a, b, a->dtype);
}

static npu_status shape_matmul_integer(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *a, *b;
	npu_status st = need_in(g, n, 0, &a);

	if (!st)
		st = need_in(g, n, 1, &b);
	if (!st && (!is_q8(a->dtype) || !is_q8(b->dtype)))
		st = nerr(n, NPU_ERR_SHAPE, "inputs must be int8 or uint8");
	return st ? st : matmul_common(g, n, a, b, NPU_DTYPE_INT32);
}

static npu_status shape_qlinear_matmul(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *a, *b, *yzp = in(g, n, 7);
	npu_status st = need_in(g, n, 0, &a);

	if (!st)
		st = need_in(g, n, 3, &b);
	if (!st && (!is_q8(a->dtype) || !is_q8(b->dtype)))
		st = nerr(n, NPU_ERR_SHAPE, "inputs must be int8 or uint8");
	if (!st)
		st = matmul_common(g, n, a, b, yzp ? yzp->dtype : a->dtype);
	if (!st)
		st = note_quant(a, in(g, n, 1), in(g, n, 2), a->rank - 1);
	if (!st)
		st = note_quant(b, in(g, n, 4), in(g, n, 5), b->rank - 1);
	if (!st)
		st = note_quant(npu_ir_output(g, n, 0), in(g, n, 6), yzp, -1);
	return st;
}

/* ---- normalization ---- */

static npu_status shape_batchnorm(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t training = 0;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = need_float(n, x);
	if (!st)
		st = need_rank(n, x, 2, NPU_MAX_RANK);
	if (!st)
		st = npu_ir_attr_int(n, "training_mode", 0, &training);
	if (st)
		return st;
	/* Training mode (batch statistics, running mean and variance outputs)
	 * becomes reductions in the compiler (compile/rewrite_norm.c). */
	for (int i = 1; !training && i < n->n_outputs; i++)
		if (n->outputs[i] >= 0)
			return nerr(n, NPU_ERR_UNSUPPORTED, "the training outputs (running mean and variance) are not supported");
	for (int i = 1; i < 5; i++) {
		npu_ir_tensor *p;

		st = need_in(g, n, i, &p);
		if (st)
			return st;
		if (p->rank != 1 || p->dims[0] != x->dims[1])
			return nerr(n, NPU_ERR_SHAPE, "parameter '%s' must have shape [%" PRId64 "]",
				    p->name, x->dims[1]);
	}
	for (int i = 1; training && i < 3; i++)
		if ((st = set_out(g, n, i, x->dtype, 1, &x->dims[1])))
			return st;
	return set_like(g, n, 0, x);
}

static npu_status shape_layernorm(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *scale;
	int64_t axis, stash, dims[NPU_MAX_RANK];
	int a = 0;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = need_float(n, x);
	if (!st)
		st = need_in(g, n, 1, &scale);
	if (!st)
		st = npu_ir_attr_int(n, "axis", -1, &axis);
	if (!st)
		st = npu_ir_attr_int(n, "stash_type", 1, &stash);
	if (!st)
		st = norm_axis(n, axis, x->rank, &a);
	if (!st)
		st = broadcast_to(n, scale, x);
	if (!st && in(g, n, 2))
		st = broadcast_to(n, in(g, n, 2), x);
	if (!st)
		st = set_like(g, n, 0, x);
	if (st)
		return st;
	if (!npu_dtype_size((npu_dtype)stash))
		return nerr(n, NPU_ERR_UNSUPPORTED, "stash_type %" PRId64 " is not supported", stash);
	for (int d = 0; d < x->rank; d++)
		dims[d] = d < a ? x->dims[d] : 1;
	st = set_out(g, n, 1, (npu_dtype)stash, x->rank, dims);
	if (!st)
		st = set_out(g, n, 2, (npu_dtype)stash, x->rank, dims);
	return st;
}

/* GridSample (2-D): [N, C, H, W] sampled at grid [N, Ho, Wo, 2]. */
static npu_status shape_grid_sample(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *grid;
	int64_t dims[4];
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = need_float(n, x);
	if (!st)
		st = need_in(g, n, 1, &grid);
	if (st)
		return st;
	if (x->rank != 4 || grid->rank != 4 || grid->dims[0] != x->dims[0] || grid->dims[3] != 2)
		return nerr(n, NPU_ERR_UNSUPPORTED, "only 2-D sampling ([N, C, H, W] with a "
			    "[N, Ho, Wo, 2] grid) is supported");
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	dims[2] = grid->dims[1];
	dims[3] = grid->dims[2];
	return set_out(g, n, 0, x->dtype, 4, dims);
}

/* DynamicQuantizeLinear: y (uint8, like x), y_scale (float), y_zero_point (uint8). */
static npu_status shape_dyn_quant(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = need_float(n, x);
	if (!st)
		st = set_out(g, n, 0, NPU_DTYPE_UINT8, x->rank, x->dims);
	if (!st)
		st = set_out(g, n, 1, NPU_DTYPE_FLOAT32, 0, NULL);
	if (!st)
		st = set_out(g, n, 2, NPU_DTYPE_UINT8, 0, NULL);
	return st;
}

/* GatherElements: the indices' shape. */
static npu_status shape_gather_elements(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *ind;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = need_in(g, n, 1, &ind);
	if (st)
		return st;
	if (!is_int(ind->dtype) || ind->rank != x->rank)
		return nerr(n, NPU_ERR_SHAPE, "indices must be integers of the data's rank");
	return set_out(g, n, 0, x->dtype, ind->rank, ind->dims);
}

/* GatherND: indices.shape[:-1] + data.shape[batch_dims + m:]. */
static npu_status shape_gather_nd(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *ind;
	int64_t bd = 0, m, dims[NPU_MAX_RANK];
	int r = 0;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = need_in(g, n, 1, &ind);
	if (!st)
		st = npu_ir_attr_int(n, "batch_dims", 0, &bd);
	if (st)
		return st;
	if (!is_int(ind->dtype) || ind->rank < 1)
		return nerr(n, NPU_ERR_SHAPE, "indices must be integers of rank 1 or more");
	m = ind->dims[ind->rank - 1];
	if (bd < 0 || bd >= ind->rank || bd + m > x->rank ||
	    ind->rank - 1 + x->rank - bd - m > NPU_MAX_RANK)
		return nerr(n, NPU_ERR_SHAPE, "batch_dims and the index length do not fit the data");
	for (int d = 0; d < ind->rank - 1; d++)
		dims[r++] = ind->dims[d];
	for (int64_t d = bd + m; d < x->rank; d++)
		dims[r++] = x->dims[d];
	return set_out(g, n, 0, x->dtype, r, dims);
}

/* NegativeLogLikelihoodLoss: the target's shape, or a scalar when reduced. */
static npu_status shape_nll_loss(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *t;
	const char *red;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = need_float(n, x);
	if (!st)
		st = need_in(g, n, 1, &t);
	if (!st)
		st = npu_ir_attr_string(n, "reduction", "mean", &red);
	if (st)
		return st;
	if (x->rank < 2 || t->rank != x->rank - 1 || !is_int(t->dtype))
		return nerr(n, NPU_ERR_SHAPE, "input must be [N, C, ...] and target [N, ...]");
	/* SoftmaxCrossEntropyLoss's optional log_prob output: like the scores. */
	if ((st = set_out(g, n, 1, x->dtype, x->rank, x->dims)))
		return st;
	if (!strcmp(red, "none"))
		return set_out(g, n, 0, x->dtype, t->rank, t->dims);
	if (strcmp(red, "sum") && strcmp(red, "mean"))
		return nerr(n, NPU_ERR_FORMAT, "reduction '%s' is not none, sum or mean", red);
	return set_out(g, n, 0, x->dtype, 0, NULL);
}

/* Scatter, ScatterElements, ScatterND: the data's shape. */
static npu_status shape_scatter(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *ind, *u;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = need_in(g, n, 1, &ind);
	if (!st)
		st = need_in(g, n, 2, &u);
	if (!st && !is_int(ind->dtype))
		st = nerr(n, NPU_ERR_SHAPE, "indices must be int32 or int64");
	if (!st)
		st = same_dtype(n, x, u);
	return st ? st : set_like(g, n, 0, x);
}

/* EyeLike: x's 2-D shape; dtype from the attribute, else x's. */
static npu_status shape_eye_like(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t dt = 0;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = npu_ir_attr_int(n, "dtype", 0, &dt);
	if (st)
		return st;
	if (x->rank != 2)
		return nerr(n, NPU_ERR_SHAPE, "the input must be 2-D");
	if (dt && !npu_dtype_size((npu_dtype)dt))
		return nerr(n, NPU_ERR_UNSUPPORTED, "dtype %" PRId64 " is not supported", dt);
	return set_out(g, n, 0, dt ? (npu_dtype)dt : x->dtype, 2, x->dims);
}

/* CastLike: x's shape, the dtype of the second input. */
static npu_status shape_cast_like(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *like;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = need_in(g, n, 1, &like);
	return st ? st : set_out(g, n, 0, like->dtype, x->rank, x->dims);
}

/* InstanceNormalization: scale and B hold one value per channel. */
static npu_status shape_instnorm(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *scale, *b;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = need_float(n, x);
	if (!st)
		st = need_in(g, n, 1, &scale);
	if (!st)
		st = need_in(g, n, 2, &b);
	if (st)
		return st;
	if (x->rank < 3 || npu_ir_numel(scale) != x->dims[1] || npu_ir_numel(b) != x->dims[1])
		return nerr(n, NPU_ERR_SHAPE, "scale and B must hold one value per channel of a "
			    "tensor of rank 3 or more");
	return set_like(g, n, 0, x);
}

/* ---- shape and layout ---- */

static npu_status shape_reshape(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t shape[NPU_MAX_RANK * 2], allowzero = 0, known = 1;
	int r = 0, infer = -1;
	npu_status st = need_in(g, n, 0, &x);

	if (!st && !in(g, n, 1))
		st = nerr(n, NPU_ERR_FORMAT, "the shape input is missing");
	if (!st)
		st = const_ints_in(g, n, 1, shape, NPU_MAX_RANK * 2, &r);
	if (!st)
		st = npu_ir_attr_int(n, "allowzero", 0, &allowzero);
	if (st)
		return st;
	if (r > NPU_MAX_RANK)
		return nerr(n, NPU_ERR_UNSUPPORTED, "the target rank %d exceeds %d", r, NPU_MAX_RANK);
	for (int i = 0; i < r; i++) {
		if (shape[i] == 0 && !allowzero) {
			if (i >= x->rank)
				return nerr(n, NPU_ERR_SHAPE, "shape value 0 at %d copies a dimension '%s' does not have",
					    i, x->name);
			shape[i] = x->dims[i];
		}
		if (shape[i] == -1) {
			if (infer >= 0)
				return nerr(n, NPU_ERR_SHAPE, "more than one -1 in the target shape");
			infer = i;
			continue;
		}
		if (shape[i] < 0 || shape[i] > NPU_IR_DIM_MAX)
			return nerr(n, NPU_ERR_SHAPE, "invalid target dimension %" PRId64, shape[i]);
		if (shape[i] && known > NPU_IR_NUMEL_MAX / shape[i])
			return nerr(n, NPU_ERR_SHAPE, "target shape too large");
		known *= shape[i];
	}
	if (infer >= 0) {
		if (!known || npu_ir_numel(x) % known)
			return nerr(n, NPU_ERR_SHAPE, "cannot infer the -1 dimension: %" PRId64
				    " elements do not divide by %" PRId64, npu_ir_numel(x), known);
		shape[infer] = npu_ir_numel(x) / known;
		known *= shape[infer];
	}
	if (known != npu_ir_numel(x))
		return nerr(n, NPU_ERR_SHAPE, "cannot reshape %" PRId64 " elements into %" PRId64,
			    npu_ir_numel(x), known);
	return set_out(g, n, 0, x->dtype, r, shape);
}

static npu_status shape_flatten(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t axis, dims[2] = { 1, 1 };
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = npu_ir_attr_int(n, "axis", 1, &axis);
	if (st)
		return st;
	if (axis < -x->rank || axis > x->rank)
		return nerr(n, NPU_ERR_SHAPE, "axis %" PRId64 " is out of range for rank %d",
			    axis, x->rank);
	if (axis < 0)
		axis += x->rank;
	for (int d = 0; d < x->rank; d++)
		dims[d < axis ? 0 : 1] *= x->dims[d];
	return set_out(g, n, 0, x->dtype, 2, dims);
}

npu_status npu_ir_transpose_perm(const npu_ir_node *n, int rank, int perm[NPU_MAX_RANK])
{
	const int64_t *p;
	int c;
	bool seen[NPU_MAX_RANK] = { false };
	npu_status st = npu_ir_attr_ints(n, "perm", &p, &c);

	if (st)
		return st;
	if (c < 0) {
		for (int i = 0; i < rank; i++)
			perm[i] = rank - 1 - i;
		return NPU_OK;
	}
	if (c != rank)
		return nerr(n, NPU_ERR_SHAPE, "perm has %d values for rank %d", c, rank);
	for (int i = 0; i < rank; i++) {
		if (p[i] < 0 || p[i] >= rank || seen[p[i]])
			return nerr(n, NPU_ERR_SHAPE, "perm is not a permutation of 0..%d", rank - 1);
		seen[p[i]] = true;
		perm[i] = (int)p[i];
	}
	return NPU_OK;
}

static npu_status shape_transpose(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int perm[NPU_MAX_RANK];
	int64_t dims[NPU_MAX_RANK];
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = npu_ir_transpose_perm(n, x->rank, perm);
	if (st)
		return st;
	for (int d = 0; d < x->rank; d++)
		dims[d] = x->dims[perm[d]];
	return set_out(g, n, 0, x->dtype, x->rank, dims);
}

static npu_status shape_concat(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x0 = NULL;
	int64_t axis, dims[NPU_MAX_RANK];
	int a = 0;
	npu_status st = npu_ir_attr_int(n, "axis", INT64_MIN, &axis);

	if (st)
		return st;
	if (axis == INT64_MIN)
		return nerr(n, NPU_ERR_FORMAT, "attribute 'axis' is missing");
	for (int i = 0; i < n->n_inputs; i++) {
		npu_ir_tensor *x = in(g, n, i);

		if (!x)
			continue;
		if (!x0) {
			x0 = x;
			st = norm_axis(n, axis, x->rank, &a);
			if (st)
				return st;
			memcpy(dims, x->dims, sizeof(dims));
			continue;
		}
		st = same_dtype(n, x0, x);
		if (st)
			return st;
		if (x->rank != x0->rank)
			return nerr(n, NPU_ERR_SHAPE, "inputs '%s' and '%s' differ in rank",
				    x0->name, x->name);
		for (int d = 0; d < x->rank; d++) {
			if (d == a)
				dims[d] += x->dims[d];
			else if (x->dims[d] != x0->dims[d])
				return nerr(n, NPU_ERR_SHAPE, "inputs '%s' and '%s' differ in dimension %d",
					    x0->name, x->name, d);
		}
	}
	if (!x0)
		return nerr(n, NPU_ERR_FORMAT, "no inputs");
	return set_out(g, n, 0, x0->dtype, x0->rank, dims);
}

static npu_status shape_split(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t axis, num = 0, *big = NULL, sum = 0, dims[NPU_MAX_RANK];
	const int64_t *sa;
	int a = 0, ns = -1, nout = n->n_outputs;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = npu_ir_attr_int(n, "axis", 0, &axis);
	if (!st)
		st = norm_axis(n, axis, x->rank, &a);
	if (st)
		return st;
	if (n->opset >= 13) {
		if (in(g, n, 1)) {
			const npu_ir_tensor *s = in(g, n, 1);

			if (npu_ir_numel(s) != nout)
				return nerr(n, NPU_ERR_SHAPE, "split has %" PRId64 " values for %d outputs",
					    npu_ir_numel(s), nout);
			big = malloc((size_t)(nout ? nout : 1) * sizeof(*big));
			if (!big)
				return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
			st = const_ints_in(g, n, 1, big, nout, &ns);
		}
		if (!st && n->opset >= 18)
			st = npu_ir_attr_int(n, "num_outputs", 0, &num);
	} else {
		st = npu_ir_attr_ints(n, "split", &sa, &ns);
		if (!st && ns >= 0) {
			if (ns != nout)
				st = nerr(n, NPU_ERR_SHAPE, "split has %d values for %d outputs", ns, nout);
			big = malloc((size_t)(nout ? nout : 1) * sizeof(*big));
			if (!big && !st)
				st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
			for (int i = 0; !st && i < ns; i++)
				big[i] = sa[i];
		}
	}
	if (!st && ns < 0) {
		int64_t dim = x->dims[a], chunk;

		if (num && num != nout)
			st = nerr(n, NPU_ERR_SHAPE, "num_outputs %" PRId64 " but %d outputs", num, nout);
		else if (nout < 1)
			st = nerr(n, NPU_ERR_FORMAT, "no outputs");
		else if (!num && dim % nout)
			st = nerr(n, NPU_ERR_SHAPE, "dimension %" PRId64 " does not split evenly into %d",
				  dim, nout);
		if (!st) {
			chunk = (dim + nout - 1) / nout;
			big = malloc((size_t)nout * sizeof(*big));
			if (!big)
				st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
			for (int i = 0; !st && i < nout; i++) {
				big[i] = dim - sum < chunk ? dim - sum : chunk;
				sum += big[i];
			}
			sum = 0;
		}
	}
	for (int i = 0; !st && i < nout; i++) {
		if (big[i] < 0 || big[i] > NPU_IR_DIM_MAX)
			st = nerr(n, NPU_ERR_SHAPE, "split size %" PRId64 " out of range", big[i]);
		sum += big[i];
	}
	if (!st && sum != x->dims[a])
		st = nerr(n, NPU_ERR_SHAPE, "split sizes add up to %" PRId64 ", not %" PRId64,
			  sum, x->dims[a]);
	for (int i = 0; !st && i < nout; i++) {
		memcpy(dims, x->dims, sizeof(dims));
		dims[a] = big[i];
		st = set_out(g, n, i, x->dtype, x->rank, dims);
	}
	free(big);
	return st;
}

npu_status npu_ir_slice_plan(npu_ir_graph *g, const npu_ir_node *n,
			     int64_t start[NPU_MAX_RANK], int64_t step[NPU_MAX_RANK],
			     int64_t len[NPU_MAX_RANK])
{
	const npu_ir_tensor *x = in(g, n, 0);
	int64_t s[NPU_MAX_RANK * 2], e[NPU_MAX_RANK * 2], ax[NPU_MAX_RANK * 2], st_[NPU_MAX_RANK * 2];
	int ns, ne, na = -1, nst = -1;
	bool seen[NPU_MAX_RANK] = { false };
	npu_status st;

	if (!x)
		return nerr(n, NPU_ERR_FORMAT, "input 0 is missing");
	if (n->opset < 10) {
		st = axes_list(g, n, "starts", 0, INT32_MAX, s, &ns);
		if (!st)
			st = axes_list(g, n, "ends", 0, INT32_MAX, e, &ne);
		if (!st)
			st = axes_list(g, n, "axes", 0, INT32_MAX, ax, &na);
	} else {
		st = in(g, n, 1) && in(g, n, 2) ? NPU_OK :
		     nerr(n, NPU_ERR_FORMAT, "inputs starts and ends are required");
		if (!st)
			st = axes_list(g, n, NULL, 1, 0, s, &ns);
		if (!st)
			st = axes_list(g, n, NULL, 2, 0, e, &ne);
		if (!st)
			st = axes_list(g, n, NULL, 3, 0, ax, &na);
		if (!st)
			st = axes_list(g, n, NULL, 4, 0, st_, &nst);
	}
	if (st)
		return st;
	if (ns < 0 || ne != ns || (na >= 0 && na != ns) || (nst >= 0 && nst != ns) ||
	    ns > x->rank)
		return nerr(n, NPU_ERR_SHAPE, "starts, ends, axes and steps must have the same length, at most the rank %d",
			    x->rank);
	for (int d = 0; d < x->rank; d++) {
		start[d] = 0;
		step[d] = 1;
		len[d] = x->dims[d];
	}
	for (int k = 0; k < ns; k++) {
		int a = 0;
		int64_t D, b, en, sp = nst >= 0 ? st_[k] : 1;

		st = norm_axis(n, na >= 0 ? ax[k] : k, x->rank, &a);
		if (st)
			return st;
		if (seen[a])
			return nerr(n, NPU_ERR_SHAPE, "axis %d is sliced twice", a);
		seen[a] = true;
		if (sp == 0)
			return nerr(n, NPU_ERR_SHAPE, "step 0");
		sp = sp > NPU_IR_NUMEL_MAX ? NPU_IR_NUMEL_MAX : sp < -NPU_IR_NUMEL_MAX ? -NPU_IR_NUMEL_MAX : sp;
		D = x->dims[a];
		b = s[k] < 0 ? s[k] + D : s[k];
		en = e[k] < 0 ? e[k] + D : e[k];
		if (sp > 0) {
			b = b < 0 ? 0 : b > D ? D : b;
			en = en < 0 ? 0 : en > D ? D : en;
			len[a] = en > b ? (en - b + sp - 1) / sp : 0;
		} else {
			b = b < 0 ? 0 : b > D - 1 ? D - 1 : b;
			en = en < -1 ? -1 : en > D - 1 ? D - 1 : en;
			len[a] = b > en ? (b - en - sp - 1) / -sp : 0;
		}
		start[a] = len[a] ? b : 0;
		step[a] = sp;
	}
	return NPU_OK;
}

static npu_status shape_slice(npu_ir_graph *g, npu_ir_node *n)
{
	int64_t start[NPU_MAX_RANK], step[NPU_MAX_RANK], len[NPU_MAX_RANK];
	npu_status st = npu_ir_slice_plan(g, n, start, step, len);
	const npu_ir_tensor *x = in(g, n, 0);

	return st ? st : set_out(g, n, 0, x->dtype, x->rank, len);
}

static npu_status shape_pad(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t pads[NPU_MAX_RANK * 2], axes[NPU_MAX_RANK * 2], dims[NPU_MAX_RANK];
	const char *mode;
	int np = -1, na = -1, axis[NPU_MAX_RANK];
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = npu_ir_attr_string(n, "mode", "constant", &mode);
	if (st)
		return st;
	if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge") &&
	    strcmp(mode, "wrap"))
		return nerr(n, NPU_ERR_FORMAT, "mode '%s' is not constant, reflect, edge or wrap", mode);
	if (n->opset < 11) {
		st = axes_list(g, n, "pads", 1, INT32_MAX, pads, &np);
	} else {
		if (!in(g, n, 1))
			return nerr(n, NPU_ERR_FORMAT, "the pads input is missing");
		st = const_ints_in(g, n, 1, pads, NPU_MAX_RANK * 2, &np);
		if (!st && in(g, n, 2) && npu_ir_numel(in(g, n, 2)) != 1)
			st = nerr(n, NPU_ERR_SHAPE, "constant_value must be a scalar");
		if (!st && n->opset >= 18)
			st = axes_list(g, n, NULL, 3, 0, axes, &na);
	}
	if (st)
		return st;
	if (na < 0) {
		na = x->rank;
		for (int i = 0; i < na; i++)
			axes[i] = i;
	}
	if (np != 2 * na)
		return nerr(n, NPU_ERR_SHAPE, "pads has %d values, expected %d", np, 2 * na);
	for (int i = 0; i < na; i++) {
		st = norm_axis(n, axes[i], x->rank, &axis[i]);
		if (st)
			return st;
	}
	memcpy(dims, x->dims, sizeof(dims));
	for (int i = 0; i < na; i++) {
		int64_t pb = pads[i], pe = pads[na + i];

		if (pb < -NPU_IR_DIM_MAX || pb > NPU_IR_DIM_MAX ||
		    pe < -NPU_IR_DIM_MAX || pe > NPU_IR_DIM_MAX)
			return nerr(n, NPU_ERR_SHAPE, "pad out of range");
		dims[axis[i]] += pb + pe;
		if (dims[axis[i]] < 0)
			return nerr(n, NPU_ERR_SHAPE, "negative pads remove more than dimension %d has",
				    axis[i]);
	}
	return set_out(g, n, 0, x->dtype, x->rank, dims);
}

static npu_status shape_squeeze(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t axes[NPU_MAX_RANK * 2], dims[NPU_MAX_RANK];
	bool drop[NPU_MAX_RANK] = { false };
	int na, r = 0;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = axes_list(g, n, "axes", 1, 13, axes, &na);
	if (st)
		return st;
	for (int i = 0; i < na; i++) {
		int a = 0;

		st = norm_axis(n, axes[i], x->rank, &a);
		if (st)
			return st;
		if (x->dims[a] != 1)
			return nerr(n, NPU_ERR_SHAPE, "dimension %d is %" PRId64 ", not 1", a, x->dims[a]);
		drop[a] = true;
	}
	for (int d = 0; d < x->rank; d++)
		if (!(na < 0 ? x->dims[d] == 1 : drop[d]))
			dims[r++] = x->dims[d];
	return set_out(g, n, 0, x->dtype, r, dims);
}

static npu_status shape_unsqueeze(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t axes[NPU_MAX_RANK * 2], dims[NPU_MAX_RANK];
	bool ins[NPU_MAX_RANK] = { false };
	int na, r, j = 0;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = axes_list(g, n, "axes", 1, 13, axes, &na);
	if (st)
		return st;
	if (na < 0)
		return nerr(n, NPU_ERR_FORMAT, "axes are missing");
	r = x->rank + na;
	if (r > NPU_MAX_RANK)
		return nerr(n, NPU_ERR_UNSUPPORTED, "output rank %d exceeds %d", r, NPU_MAX_RANK);
	for (int i = 0; i < na; i++) {
		int a = 0;

		st = norm_axis(n, axes[i], r, &a);
		if (st)
			return st;
		if (ins[a])
			return nerr(n, NPU_ERR_SHAPE, "axis %d given twice", a);
		ins[a] = true;
	}
	for (int d = 0; d < r; d++)
		dims[d] = ins[d] ? 1 : x->dims[j++];
	return set_out(g, n, 0, x->dtype, r, dims);
}

static npu_status shape_reduce(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t axes[NPU_MAX_RANK * 2], keep, noop = 0, dims[NPU_MAX_RANK];
	bool red[NPU_MAX_RANK] = { false };
	int na, r = 0, since = !strcmp(n->op, "ReduceSum") ? 13 : 18;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = axes_list(g, n, "axes", 1, since, axes, &na);
	if (!st)
		st = npu_ir_attr_int(n, "keepdims", 1, &keep);
	if (!st && n->opset >= since)
		st = npu_ir_attr_int(n, "noop_with_empty_axes", 0, &noop);
	if (st)
		return st;
	if (na <= 0 && noop)
		return set_like(g, n, 0, x);
	for (int i = 0; i < na; i++) {
		int a = 0;

		st = norm_axis(n, axes[i], x->rank, &a);
		if (st)
			return st;
		red[a] = true;
	}
	for (int d = 0; d < x->rank; d++) {
		if (na > 0 && !red[d])
			dims[r++] = x->dims[d];
		else if (keep)
			dims[r++] = 1;
	}
	return set_out(g, n, 0, x->dtype, r, dims);
}

/* ---- resize ---- */

static npu_status resize_dims(npu_ir_graph *g, npu_ir_node *n, const npu_ir_tensor *x,
			      const float *scales, int nsc, const int64_t *sizes, int nsz,
			      const int64_t *axes_in, int na)
{
	int64_t axes[NPU_MAX_RANK * 2], dims[NPU_MAX_RANK];
	const char *policy = "stretch";
	npu_status st;

	if (na < 0) {
		na = x->rank;
		for (int i = 0; i < na; i++)
			axes[i] = i;
	} else {
		memcpy(axes, axes_in, (size_t)na * sizeof(int64_t));
	}
	memcpy(dims, x->dims, sizeof(dims));
	if ((nsc > 0) == (nsz > 0))
		return nerr(n, NPU_ERR_SHAPE, "exactly one of scales and sizes must be given");
	if ((nsc > 0 ? nsc : nsz) != na)
		return nerr(n, NPU_ERR_SHAPE, "%s has %d values, expected %d",
			    nsc > 0 ? "scales" : "sizes", nsc > 0 ? nsc : nsz, na);
	if (n->opset >= 18) {
		st = npu_ir_attr_string(n, "keep_aspect_ratio_policy", "stretch", &policy);
		if (st)
			return st;
	}
	if (nsz > 0 && strcmp(policy, "stretch")) {
		bool larger = !strcmp(policy, "not_smaller");
		double scale = larger ? 0 : INFINITY;

		if (!larger && strcmp(policy, "not_larger"))
			return nerr(n, NPU_ERR_FORMAT, "keep_aspect_ratio_policy '%s'", policy);
		for (int i = 0; i < na; i++) {
			int a = 0;
			double s;

			st = norm_axis(n, axes[i], x->rank, &a);
			if (st)
				return st;
			if (!x->dims[a])
				return nerr(n, NPU_ERR_SHAPE, "cannot keep the aspect ratio of an empty dimension");
			s = (double)sizes[i] / (double)x->dims[a];
			scale = larger ? (s > scale ? s : scale) : (s < scale ? s : scale);
		}
		for (int i = 0; i < na; i++) {
			int a = (int)(axes[i] < 0 ? axes[i] + x->rank : axes[i]);
			double v = floor(scale * (double)x->dims[a] + 0.5);

			if (!(v >= 0 && v <= (double)NPU_IR_DIM_MAX))
				return nerr(n, NPU_ERR_SHAPE, "output size out of range");
			dims[a] = (int64_t)v;
		}
		return set_out(g, n, 0, x->dtype, x->rank, dims);
	}
	for (int i = 0; i < na; i++) {
		int a = 0;

		st = norm_axis(n, axes[i], x->rank, &a);
		if (st)
			return st;
		if (nsz > 0) {
			dims[a] = sizes[i];
		} else {
			/* As onnxruntime: the product in float, truncated. */
			float v = (float)x->dims[a] * scales[i];

			if (!(scales[i] > 0) || !(v >= 0 && v <= (float)NPU_IR_DIM_MAX))
				return nerr(n, NPU_ERR_SHAPE, "scale %g out of range", (double)scales[i]);
			dims[a] = (int64_t)floorf(v);
		}
	}
	return set_out(g, n, 0, x->dtype, x->rank, dims);
}

static npu_status shape_resize(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	float scales[NPU_MAX_RANK * 2];
	int64_t sizes[NPU_MAX_RANK * 2], axes[NPU_MAX_RANK * 2];
	const int64_t *av;
	int nsc = 0, nsz = 0, na = -1, si = n->opset < 11 ? 1 : 2;
	npu_status st = need_in(g, n, 0, &x);

	if (st)
		return st;
	if (in(g, n, si) && npu_ir_numel(in(g, n, si)) > 0)
		st = const_floats_in(g, n, si, scales, NPU_MAX_RANK * 2, &nsc);
	if (!st && n->opset >= 11 && in(g, n, 3) && npu_ir_numel(in(g, n, 3)) > 0)
		st = const_ints_in(g, n, 3, sizes, NPU_MAX_RANK * 2, &nsz);
	if (!st && n->opset >= 18)
		st = npu_ir_attr_ints(n, "axes", &av, &na);
	if (st)
		return st;
	if (na > NPU_MAX_RANK * 2)
		return nerr(n, NPU_ERR_SHAPE, "too many axes");
	for (int i = 0; i < na; i++)
		axes[i] = av[i];
	return resize_dims(g, n, x, scales, nsc, sizes, nsz, axes, na);
}

static npu_status shape_upsample(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	float scales[NPU_MAX_RANK * 2];
	const float *sv;
	int nsc = 0;
	npu_status st = need_in(g, n, 0, &x);

	if (st)
		return st;
	if (n->opset >= 9) {
		if (!in(g, n, 1))
			return nerr(n, NPU_ERR_FORMAT, "the scales input is missing");
		st = const_floats_in(g, n, 1, scales, NPU_MAX_RANK * 2, &nsc);
	} else {
		st = npu_ir_attr_floats(n, "scales", &sv, &nsc);
		if (!st && (nsc < 0 || nsc > NPU_MAX_RANK * 2))
			st = nerr(n, NPU_ERR_FORMAT, "attribute 'scales' is missing or too long");
		for (int i = 0; !st && i < nsc; i++)
			scales[i] = sv[i];
	}
	return st ? st : resize_dims(g, n, x, scales, nsc, NULL, 0, NULL, -1);
}

static const char *support_resize(const npu_ir_graph *g, const npu_ir_node *n)
{
	const char *mode = "nearest";
	int64_t antialias = 0;

	(void)g;
	if (npu_ir_attr_string(n, "mode", "nearest", &mode))
		return "its mode attribute is not a string";
	if (strcmp(mode, "nearest") && strcmp(mode, "linear") && strcmp(mode, "bilinear") &&
	    strcmp(mode, "cubic"))
		return "only modes nearest, linear and cubic are";
	/* The compiler's rewrite (compile/npu_rewrite.c) has no antialiasing
	 * filter and resizes every axis. */
	if (npu_ir_attr_int(n, "antialias", 0, &antialias) || antialias)
		return "antialias is not";
	if (npu_ir_attr_find(n, "axes"))
		return "the axes attribute is not";
	return NULL;
}

/* ---- quantization ---- */

static npu_status shape_quantize(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *s, *zp = in(g, n, 2);
	int64_t axis = 1, block = 0, odt = 0;
	npu_dtype dt = zp ? zp->dtype : NPU_DTYPE_UINT8;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = need_in(g, n, 1, &s);
	if (!st)
		st = npu_ir_attr_int(n, "axis", 1, &axis);
	if (!st)
		st = npu_ir_attr_int(n, "block_size", 0, &block);
	if (!st)
		st = npu_ir_attr_int(n, "output_dtype", 0, &odt);
	if (st)
		return st;
	if (block)
		return nerr(n, NPU_ERR_UNSUPPORTED, "blocked quantization is not supported");
	if (odt && !zp)
		dt = (npu_dtype)odt;
	if (!is_q8(dt) && dt != NPU_DTYPE_INT32)
		return nerr(n, NPU_ERR_UNSUPPORTED, "quantization to %s is not supported", dts(dt));
	if (npu_ir_numel(s) > 1) {
		int a = 0;

		st = norm_axis(n, axis, x->rank, &a);
		if (!st && (s->rank != 1 || s->dims[0] != x->dims[a]))
			st = nerr(n, NPU_ERR_SHAPE, "per-axis scale '%s' must have %" PRId64 " values",
				  s->name, x->dims[a]);
		if (st)
			return st;
	}
	st = set_out(g, n, 0, dt, x->rank, x->dims);
	if (!st)
		st = note_quant(npu_ir_output(g, n, 0), s, zp, axis);
	return st;
}

static npu_status shape_dequantize(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *s, *zp = in(g, n, 2);
	int64_t axis = 1, block = 0;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = need_in(g, n, 1, &s);
	if (!st)
		st = npu_ir_attr_int(n, "axis", 1, &axis);
	if (!st)
		st = npu_ir_attr_int(n, "block_size", 0, &block);
	if (!st && zp)
		st = same_dtype(n, x, zp);
	if (st)
		return st;
	if (block)
		return nerr(n, NPU_ERR_UNSUPPORTED, "blocked quantization is not supported");
	if (!is_float(s->dtype))
		return nerr(n, NPU_ERR_SHAPE, "scale '%s' must be a float type", s->name);
	if (npu_ir_numel(s) > 1) {
		int a = 0;

		st = norm_axis(n, axis, x->rank, &a);
		if (!st && (s->rank != 1 || s->dims[0] != x->dims[a]))
			st = nerr(n, NPU_ERR_SHAPE, "per-axis scale '%s' must have %" PRId64 " values",
				  s->name, x->dims[a]);
		if (st)
			return st;
	}
	st = set_out(g, n, 0, n->opset >= 19 ? s->dtype : NPU_DTYPE_FLOAT32, x->rank, x->dims);
	if (!st)
		st = note_quant(x, s, zp, axis);
	return st;
}

/* ---- shape arithmetic (folded to constants) ---- */

static npu_status shape_shape(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t start = 0, end, len;
	npu_status st = need_in(g, n, 0, &x);

	if (st)
		return st;
	end = x->rank;
	if (n->opset >= 15) {
		st = npu_ir_attr_int(n, "start", 0, &start);
		if (!st)
			st = npu_ir_attr_int(n, "end", x->rank, &end);
		if (st)
			return st;
	}
	if (start < 0)
		start += x->rank;
	if (end < 0)
		end += x->rank;
	start = start < 0 ? 0 : start > x->rank ? x->rank : start;
	end = end < 0 ? 0 : end > x->rank ? x->rank : end;
	len = end > start ? end - start : 0;
	/* The evaluator reads these back. */
	st = npu_ir_set_attr_int(n, "start", start);
	if (!st)
		st = npu_ir_set_attr_int(n, "end", end);
	return st ? st : set_out(g, n, 0, NPU_DTYPE_INT64, 1, &len);
}

static npu_status shape_size(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	npu_status st = need_in(g, n, 0, &x);

	return st ? st : set_out(g, n, 0, NPU_DTYPE_INT64, 0, NULL);
}

static npu_status shape_gather(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *ind;
	int64_t axis, dims[NPU_MAX_RANK];
	int a = 0, r = 0;
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = need_in(g, n, 1, &ind);
	if (!st)
		st = npu_ir_attr_int(n, "axis", 0, &axis);
	if (!st)
		st = norm_axis(n, axis, x->rank, &a);
	if (st)
		return st;
	if (!is_int(ind->dtype))
		return nerr(n, NPU_ERR_SHAPE, "indices '%s' must be int32 or int64", ind->name);
	if (x->rank - 1 + ind->rank > NPU_MAX_RANK)
		return nerr(n, NPU_ERR_UNSUPPORTED, "output rank exceeds %d", NPU_MAX_RANK);
	for (int d = 0; d < a; d++)
		dims[r++] = x->dims[d];
	for (int d = 0; d < ind->rank; d++)
		dims[r++] = ind->dims[d];
	for (int d = a + 1; d < x->rank; d++)
		dims[r++] = x->dims[d];
	return set_out(g, n, 0, x->dtype, r, dims);
}

/* Expand: x broadcast with the constant shape input. */
static npu_status shape_expand(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, want = { 0 };
	int64_t dims[NPU_MAX_RANK * 2], out[NPU_MAX_RANK];
	int r = 0, ro = 0;
	npu_status st = need_in(g, n, 0, &x);

	if (!st && !in(g, n, 1))
		st = nerr(n, NPU_ERR_FORMAT, "the shape input is missing");
	if (!st)
		st = const_ints_in(g, n, 1, dims, NPU_MAX_RANK * 2, &r);
	if (st)
		return st;
	if (r > NPU_MAX_RANK)
		return nerr(n, NPU_ERR_UNSUPPORTED, "output rank %d exceeds %d", r, NPU_MAX_RANK);
	want.rank = r;
	want.name = (char *)"shape";
	for (int d = 0; d < r; d++) {
		if (dims[d] < 0 || dims[d] > NPU_IR_DIM_MAX)
			return nerr(n, NPU_ERR_SHAPE, "shape value %" PRId64 " is invalid", dims[d]);
		want.dims[d] = dims[d];
	}
	st = broadcast(n, x, &want, out, &ro);
	return st ? st : set_out(g, n, 0, x->dtype, ro, out);
}

/* Tile: each dimension times its constant repeat count. */
static npu_status shape_tile(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t reps[NPU_MAX_RANK * 2], dims[NPU_MAX_RANK];
	int r = 0;
	npu_status st = need_in(g, n, 0, &x);

	if (!st && !in(g, n, 1))
		st = nerr(n, NPU_ERR_FORMAT, "the repeats input is missing");
	if (!st)
		st = const_ints_in(g, n, 1, reps, NPU_MAX_RANK * 2, &r);
	if (st)
		return st;
	if (r != x->rank)
		return nerr(n, NPU_ERR_SHAPE, "repeats has %d values for a tensor of rank %d", r,
			    x->rank);
	for (int d = 0; d < r; d++) {
		if (reps[d] < 0 || (reps[d] && x->dims[d] > NPU_IR_DIM_MAX / reps[d]))
			return nerr(n, NPU_ERR_SHAPE, "repeat %" PRId64 " is invalid", reps[d]);
		dims[d] = x->dims[d] * reps[d];
	}
	return set_out(g, n, 0, x->dtype, r, dims);
}

/* DepthToSpace, SpaceToDepth: NCHW with a blocksize. */
static npu_status shape_depth_space(npu_ir_graph *g, npu_ir_node *n)
{
	bool d2s = !strcmp(n->op, "DepthToSpace");
	npu_ir_tensor *x;
	int64_t b, dims[4];
	npu_status st = need_in(g, n, 0, &x);

	if (!st)
		st = npu_ir_attr_int(n, "blocksize", 0, &b);
	if (st)
		return st;
	if (x->rank != 4 || b < 1 || b > 4096)
		return nerr(n, NPU_ERR_SHAPE, "needs a 4-D input and a blocksize >= 1");
	memcpy(dims, x->dims, sizeof(dims));
	if (d2s) {
		if (dims[1] % (b * b))
			return nerr(n, NPU_ERR_SHAPE, "%" PRId64 " channels are not a multiple of "
				    "blocksize^2", dims[1]);
		dims[1] /= b * b;
		dims[2] *= b;
		dims[3] *= b;
	} else {
		if (dims[2] % b || dims[3] % b)
			return nerr(n, NPU_ERR_SHAPE, "height and width must be multiples of the "
				    "blocksize");
		dims[1] *= b * b;
		dims[2] /= b;
		dims[3] /= b;
	}
	return set_out(g, n, 0, x->dtype, 4, dims);
}

static npu_status shape_constant_of_shape(npu_ir_graph *g, npu_ir_node *n)
{
	const npu_ir_tensor *v;
	int64_t dims[NPU_MAX_RANK * 2];
	int r = 0;
	npu_status st;

	if (!in(g, n, 0))
		return nerr(n, NPU_ERR_FORMAT, "input 0 is missing");
	st = const_ints_in(g, n, 0, dims, NPU_MAX_RANK * 2, &r);
	if (!st)
		st = npu_ir_attr_tensor(n, "value", &v);
	if (st)
		return st;
	if (in(g, n, 0)->rank != 1)
		return nerr(n, NPU_ERR_SHAPE, "the shape input must be 1-D");
	if (v && npu_ir_numel(v) != 1)
		return nerr(n, NPU_ERR_FORMAT, "attribute 'value' must hold one element");
	if (r > NPU_MAX_RANK)
		return nerr(n, NPU_ERR_UNSUPPORTED, "output rank %d exceeds %d", r, NPU_MAX_RANK);
	return set_out(g, n, 0, v ? v->dtype : NPU_DTYPE_FLOAT32, r, dims);
}

static npu_status shape_range(npu_ir_graph *g, npu_ir_node *n)
{
	float fv[3];
	int64_t iv[3], len;
	npu_ir_tensor *x;
	double count;
	int c;
	npu_status st = need_in(g, n, 0, &x);

	for (int i = 0; !st && i < 3; i++) {
		npu_ir_tensor *t;

		st = need_in(g, n, i, &t);
		if (!st)
			st = same_dtype(n, x, t);
		if (!st && npu_ir_numel(t) != 1)
			st = nerr(n, NPU_ERR_SHAPE, "input '%s' must be a scalar", t->name);
		if (!st && is_float(t->dtype))
			st = const_floats_in(g, n, i, &fv[i], 1, &c);
		else if (!st)
			st = const_ints_in(g, n, i, &iv[i], 1, &c);
	}
	if (st)
		return st;
	if (is_float(x->dtype))
		count = ceil(((double)fv[1] - fv[0]) / fv[2]);
	else if (iv[2] == 0)
		count = NAN;
	else
		count = ceil(((double)iv[1] - (double)iv[0]) / (double)iv[2]);
	if (isnan(count) || count > (double)NPU_IR_DIM_MAX)
		return nerr(n, NPU_ERR_SHAPE, "the range has too many or undefined elements");
	len = count > 0 ? (int64_t)count : 0;
	return set_out(g, n, 0, x->dtype, 1, &len);
}

/* ---- the operator table ---- */

static const char *support_maxpool(const npu_ir_graph *g, const npu_ir_node *n)
{
	(void)g;
	if (n->n_outputs > 1 && n->outputs[1] >= 0)
		return "its Indices output is not";
	return NULL;
}

/* Gather on run-time data: Slices and a Concat (compile/npu_rewrite.c). */
static const char *support_gather(const npu_ir_graph *g, const npu_ir_node *n)
{
	const npu_ir_tensor *ind = n->n_inputs > 1 && n->inputs[1] >= 0 ?
				   &g->tensors[n->inputs[1]] : NULL;

	if (!ind || !npu_ir_is_const(ind))
		return "only with constant indices is";
	return NULL;
}

static const struct op_def ops[] = {
	/* convolution and matrix */
	{ "Conv", 1, 0, shape_conv, OP_NPU, NULL },
	{ "ConvTranspose", 1, 0, shape_conv_transpose, OP_NPU, NULL },
	{ "Gemm", 1, 0, shape_gemm, OP_NPU, NULL },
	{ "MatMul", 1, 0, shape_matmul, OP_NPU, NULL },
	/* arithmetic */
	{ "Add", 1, 0, shape_binary, OP_NPU, NULL },
	{ "Sub", 1, 0, shape_binary, OP_NPU, NULL },
	{ "Mod", 10, 0, shape_binary, OP_NPU, NULL },
	{ "BitShift", 11, 0, shape_binary, OP_NPU, NULL },
	{ "Mul", 1, 0, shape_binary, OP_NPU, NULL },
	{ "Div", 1, 0, shape_binary, OP_NPU, NULL },
	{ "Pow", 1, 0, shape_binary, OP_NPU, NULL },
	{ "Max", 1, 0, shape_variadic, OP_NPU, NULL },
	{ "Min", 1, 0, shape_variadic, OP_NPU, NULL },
	{ "Sum", 1, 0, shape_variadic, OP_NPU, NULL },
	{ "Mean", 1, 0, shape_variadic, OP_NPU, NULL },
	/* activations and unary math */
	{ "Relu", 1, 0, shape_unary, OP_NPU, NULL },
	{ "LeakyRelu", 1, 0, shape_unary_float, OP_NPU, NULL },
	{ "PRelu", 1, 0, shape_prelu, OP_NPU, NULL },
	{ "Clip", 1, 0, shape_clip, OP_NPU, NULL },
	{ "Sigmoid", 1, 0, shape_unary_float, OP_NPU, NULL },
	{ "Tanh", 1, 0, shape_unary_float, OP_NPU, NULL },
	{ "HardSigmoid", 1, 0, shape_unary_float, OP_NPU, NULL },
	{ "HardSwish", 14, 0, shape_unary_float, OP_NPU, NULL },
	{ "Erf", 9, 0, shape_unary_float, OP_NPU, NULL },
	{ "Gelu", 20, 0, shape_unary_float, OP_NPU, NULL },
	{ "Sqrt", 1, 0, shape_unary_float, OP_NPU, NULL },
	{ "Exp", 1, 0, shape_unary_float, OP_NPU, NULL },
	{ "Log", 1, 0, shape_unary_float, OP_NPU, NULL },
	{ "Neg", 1, 0, shape_unary, OP_NPU, NULL },
	{ "Abs", 1, 0, shape_unary, OP_NPU, NULL },
	{ "Reciprocal", 1, 0, shape_unary_float, OP_NPU, NULL },
	{ "Floor", 1, 0, shape_unary_float, OP_NPU, NULL },
	{ "Ceil", 1, 0, shape_unary_float, OP_NPU, NULL },
	{ "Round", 11, 0, shape_unary_float, OP_NPU, NULL },
	{ "Sin", 7, 0, shape_unary_float, OP_NPU, NULL },
	{ "Cos", 7, 0, shape_unary_float, OP_NPU, NULL },
	{ "Tan", 7, 0, shape_unary_float, OP_NPU, NULL },
	{ "Asin", 7, 0, shape_unary_float, OP_NPU, NULL },
	{ "Acos", 7, 0, shape_unary_float, OP_NPU, NULL },
	{ "Atan", 7, 0, shape_unary_float, OP_NPU, NULL },
	{ "Sinh", 9, 0, shape_unary_float, OP_NPU, NULL },
	{ "Cosh", 9, 0, shape_unary_float, OP_NPU, NULL },
	{ "Asinh", 9, 0, shape_unary_float, OP_NPU, NULL },
	{ "Acosh", 9, 0, shape_unary_float, OP_NPU, NULL },
	{ "Atanh", 9, 0, shape_unary_float, OP_NPU, NULL },
	{ "Softplus", 1, 0, shape_unary_float, OP_NPU, NULL },
	{ "Softsign", 1, 0, shape_unary_float, OP_NPU, NULL },
	{ "Elu", 1, 0, shape_unary_float, OP_NPU, NULL },
	{ "Selu", 1, 0, shape_unary_float, OP_NPU, NULL },
	{ "Celu", 12, 0, shape_unary_float, OP_NPU, NULL },
	{ "ThresholdedRelu", 10, 0, shape_unary_float, OP_NPU, NULL },
	{ "Shrink", 9, 0, shape_unary_float, OP_NPU, NULL },
	{ "Sign", 9, 0, shape_unary_float, OP_NPU, NULL },
	{ "Identity", 1, 0, shape_unary, OP_NPU, NULL },
	{ "Dropout", 1, 0, shape_dropout, OP_NPU, NULL },
	{ "Cast", 1, 0, shape_cast, OP_NPU, NULL },
	{ "CastLike", 15, 0, shape_cast_like, OP_NPU, NULL },
	{ "EyeLike", 9, 0, shape_eye_like, OP_NPU, NULL },
	{ "ReverseSequence", 10, 0, shape_unary, OP_NPU, NULL },
	{ "Trilu", 14, 0, shape_unary, OP_NPU, NULL },
	{ "Scatter", 9, 10, shape_scatter, OP_NPU, NULL },
	{ "ScatterElements", 11, 0, shape_scatter, OP_NPU, NULL },
	{ "ScatterND", 11, 0, shape_scatter, OP_NPU, NULL },
	{ "NegativeLogLikelihoodLoss", 12, 0, shape_nll_loss, OP_NPU, NULL },
	{ "SoftmaxCrossEntropyLoss", 12, 0, shape_nll_loss, OP_NPU, NULL },
	{ "GatherElements", 11, 0, shape_gather_elements, OP_NPU, NULL },
	{ "GatherND", 11, 0, shape_gather_nd, OP_NPU, NULL },
	/* normalization */
	{ "Softmax", 1, 0, shape_softmax, OP_NPU, NULL },
	{ "LogSoftmax", 1, 0, shape_softmax, OP_NPU, NULL },
	{ "Hardmax", 1, 0, shape_softmax, OP_NPU, NULL },
	{ "LayerNormalization", 17, 0, shape_layernorm, OP_NPU, NULL },
	{ "BatchNormalization", 1, 0, shape_batchnorm, OP_NPU, NULL },
	{ "InstanceNormalization", 6, 0, shape_instnorm, OP_NPU, NULL },
	{ "LRN", 1, 0, shape_unary_float, OP_NPU, NULL },
	{ "GridSample", 16, 0, shape_grid_sample, OP_NPU, NULL },
	{ "MeanVarianceNormalization", 9, 0, shape_unary_float, OP_NPU, NULL },
	/* pooling */
	{ "MaxPool", 1, 0, shape_pool, OP_NPU, support_maxpool },
	{ "AveragePool", 1, 0, shape_pool, OP_NPU, NULL },
	{ "GlobalAveragePool", 1, 0, shape_global_pool, OP_NPU, NULL },
	{ "GlobalMaxPool", 1, 0, shape_global_pool, OP_NPU, NULL },
	/* shape and layout */
	{ "Reshape", 5, 0, shape_reshape, OP_NPU, NULL },
	{ "Flatten", 1, 0, shape_flatten, OP_NPU, NULL },
	{ "Transpose", 1, 0, shape_transpose, OP_NPU, NULL },
	{ "Concat", 4, 0, shape_concat, OP_NPU, NULL },
	{ "Split", 2, 0, shape_split, OP_NPU, NULL },
	{ "Slice", 1, 0, shape_slice, OP_NPU, NULL },
	{ "Pad", 2, 0, shape_pad, OP_NPU, NULL },
	{ "Squeeze", 1, 0, shape_squeeze, OP_NPU, NULL },
	{ "Expand", 8, 0, shape_expand, OP_NPU, NULL },
	{ "Tile", 6, 0, shape_tile, OP_NPU, NULL },
	{ "DepthToSpace", 1, 0, shape_depth_space, OP_NPU, NULL },
	{ "SpaceToDepth", 1, 0, shape_depth_space, OP_NPU, NULL },
	{ "Unsqueeze", 1, 0, shape_unsqueeze, OP_NPU, NULL },
	/* reductions */
	{ "ReduceMean", 1, 0, shape_reduce, OP_NPU, NULL },
	{ "ReduceSum", 1, 0, shape_reduce, OP_NPU, NULL },
	{ "ReduceMax", 1, 0, shape_reduce, OP_NPU, NULL },
	{ "ReduceMin", 1, 0, shape_reduce, OP_NPU, NULL },
	{ "ReduceL1", 1, 0, shape_reduce, OP_NPU, NULL },
	{ "ReduceL2", 1, 0, shape_reduce, OP_NPU, NULL },
	{ "ReduceSumSquare", 1, 0, shape_reduce, OP_NPU, NULL },
	{ "ReduceLogSum", 1, 0, shape_reduce, OP_NPU, NULL },
	{ "ReduceLogSumExp", 1, 0, shape_reduce, OP_NPU, NULL },
	{ "ReduceProd", 1, 0, shape_reduce, OP_NPU, NULL },
	/* resize */
	{ "Resize", 10, 0, shape_resize, OP_NPU, support_resize },
	{ "Upsample", 7, 9, shape_upsample, OP_NPU, support_resize },
	/* quantized */
	{ "QuantizeLinear", 10, 0, shape_quantize, OP_NPU, NULL },
	{ "DynamicQuantizeLinear", 11, 0, shape_dyn_quant, OP_NPU, NULL },
	{ "DequantizeLinear", 10, 0, shape_dequantize, OP_NPU, NULL },
	{ "QLinearConv", 10, 0, shape_qlinear_conv, OP_NPU, NULL },
	{ "QLinearMatMul", 10, 0, shape_qlinear_matmul, OP_NPU, NULL },
	{ "MatMulInteger", 10, 0, shape_matmul_integer, OP_NPU, NULL },
	{ "ConvInteger", 10, 0, shape_conv_integer, OP_NPU, NULL },
	/* shape computations, folded to constants */
	{ "Shape", 1, 0, shape_shape, OP_CONST, NULL },
	{ "Size", 1, 0, shape_size, OP_CONST, NULL },
	{ "Gather", 1, 0, shape_gather, OP_NPU, support_gather },
	{ "ConstantOfShape", 9, 0, shape_constant_of_shape, OP_CONST, NULL },
	{ "Range", 11, 0, shape_range, OP_CONST, NULL },
};

static const struct op_def *find_op(const npu_ir_node *n)
{
	if (n->domain[0] && strcmp(n->domain, "ai.onnx") != 0)
		return NULL;
	for (size_t i = 0; i < NPU_ARRAY_SIZE(ops); i++)
		if (!strcmp(ops[i].op, n->op))
			return (n->opset >= ops[i].since &&
				(!ops[i].until || n->opset <= ops[i].until)) ? &ops[i] : NULL;
	return NULL;
}

bool npu_ir_op_known(const char *op, int opset)
{
	npu_ir_node n;

	memset(&n, 0, sizeof(n));
	n.op = (char *)op;
	n.domain = (char *)"";
	n.opset = opset;
	return find_op(&n) != NULL;
}

/* The standard message, plus @why when given. */
static npu_status unsupported(const npu_ir_node *n, const char *why)
{
	char lbl[96], dom[160] = "";

	if (n->domain[0] && strcmp(n->domain, "ai.onnx") != 0)
		snprintf(dom, sizeof(dom), "%s.", n->domain);
	npu_ir_node_label(n, lbl, sizeof(lbl));
	if (why)
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"operator '%s%s' (node %s, opset %d) is not supported by the NPU compiler: %s",
				dom, n->op, lbl, n->opset, why);
	return npu_fail(NPU_ERR_UNSUPPORTED,
			"operator '%s%s' (node %s, opset %d) is not supported by the NPU compiler",
			dom, n->op, lbl, n->opset);
}

static npu_status unknown_op(const npu_ir_node *n)
{
	char why[96];

	if (!n->domain[0] || !strcmp(n->domain, "ai.onnx")) {
		for (size_t i = 0; i < NPU_ARRAY_SIZE(ops); i++) {
			if (strcmp(ops[i].op, n->op))
				continue;
			if (n->opset < ops[i].since)
				snprintf(why, sizeof(why), "it needs opset %d or later", ops[i].since);
			else
				snprintf(why, sizeof(why), "it was removed after opset %d", ops[i].until);
			return unsupported(n, why);
		}
	}
	return unsupported(n, NULL);
}

npu_status npu_ir_check_supported(const npu_ir_graph *g, int *bad_node)
{
	char why[128];

	if (bad_node)
		*bad_node = -1;
	for (int i = 0; i < g->n_nodes; i++) {
		const npu_ir_node *n = &g->nodes[i];
		const struct op_def *d = find_op(n);
		const char *w;

		if (n->dead)
			continue;
		if (bad_node)
			*bad_node = i;
		if (!d)
			return unknown_op(n);
		if ((d->flags & OP_CONST) && npu_ir_const_can_eval(g, n))
			return unsupported(n, "its constant output is too large to fold");
		if (d->flags & OP_CONST)
			return unsupported(n, "only on constant inputs, which fold away");
		if (d->support && (w = d->support(g, n))) {
			snprintf(why, sizeof(why), "%s supported", w);
			return unsupported(n, why);
		}
	}
	if (bad_node)
		*bad_node = -1;
	return NPU_OK;
}

npu_status npu_ir_infer_shapes(npu_ir_graph *g)
{
	size_t folded = 0;
	npu_status st;

	g->need_const = -1;
	st = npu_ir_topo_sort(g);
	if (!st)	/* what no output needs is neither inferred nor checked */
		st = npu_ir_remove_dead(g);
	if (st)
		return st;
	for (int i = 0; i < g->n_inputs; i++) {
		const npu_ir_tensor *t = &g->tensors[g->inputs[i]];
		char sh[160];

		if (!t->dtype)
			return npu_fail(NPU_ERR_SHAPE, "graph input '%s' has no dtype", t->name);
		if (!npu_ir_shape_known(t))
			return npu_fail(NPU_ERR_SHAPE,
					"graph input '%s' has the dynamic shape %s: the NPU needs static shapes, so give it one",
					t->name, npu_ir_shape_str(t, sh, sizeof(sh)));
	}
	for (int i = 0; i < g->n_nodes; i++) {
		npu_ir_node *n = &g->nodes[i];
		const struct op_def *d = find_op(n);
		npu_ir_tensor *y;

		if (n->dead)
			continue;
		if (!d)
			return unknown_op(n);
		for (int j = 0; j < n->n_inputs; j++) {
			const npu_ir_tensor *t = in(g, n, j);

			if (t && (!t->dtype || !npu_ir_shape_known(t)))
				return nerr(n, NPU_ERR_SHAPE, "input '%s' has no known shape",
					    t->name);
		}
		st = d->infer(g, n);
		if (st)
			return st;
		for (int j = 0; j < n->n_outputs; j++) {
			const npu_ir_tensor *t = npu_ir_output(g, n, j);

			if (t && (!t->dtype || !npu_ir_shape_known(t)))
				return nerr(n, NPU_ERR_FORMAT, "output %d ('%s') is not one that %s has",
					    j, t->name, n->op);
		}
		y = npu_ir_output(g, n, 0);
		if (y && npu_ir_const_can_eval(g, n)) {
			size_t bytes = (size_t)npu_ir_numel(y) * npu_dtype_size(y->dtype);

			if (bytes > FOLD_MAX_BYTES || folded + bytes > FOLD_TOTAL_BYTES)
				continue;
			st = npu_ir_const_eval(g, i);
			if (st)
				return st;
			folded += bytes;
			n = &g->nodes[i];
			n->dead = true;
		}
	}
	for (int i = 0; i < g->n_outputs; i++) {
		const npu_ir_tensor *t = &g->tensors[g->outputs[i]];

		if (!t->dtype || !npu_ir_shape_known(t))
			return npu_fail(NPU_ERR_SHAPE, "graph output '%s' has no known shape", t->name);
	}
	return npu_ir_remove_dead(g);
}
