// SPDX-License-Identifier: MIT
/*
 * Shape rules of ONNX's neural-network operators (onnx/defs/nn):
 * convolutions (Conv, ConvInteger, QLinearConv, ConvTranspose), pools,
 * normalizations, Dropout and Flatten.
 *
 * Convolutions and pools resolve their geometry (kernel, strides,
 * dilations, auto_pad) into explicit attributes, the canonical form
 * npu_ir.h describes, so lowering never re-derives padding.
 */
#include <string.h>

#include "ir/shape_util.h"

/* Kernel sizes, strides, dilations and pads beyond this are not real. */
#define GEOM_MAX	((int64_t)1 << 24)

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
		return npu_sh_err(n, NPU_ERR_SHAPE, "attribute '%s' has %d values, expected %d",
				  name, c, want);
	for (int i = 0; i < c; i++) {
		if (v[i] < lo || v[i] > GEOM_MAX)
			return npu_sh_err(n, NPU_ERR_FORMAT, "attribute '%s' has value %" PRId64
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
		st = npu_sh_err(n, NPU_ERR_FORMAT, "attribute 'kernel_shape' is missing");
	for (int i = 0; !st && wk && i < ns; i++) {
		if (gm->k[i] >= 0 && gm->k[i] != wk[i])
			st = npu_sh_err(n, NPU_ERR_SHAPE, "kernel_shape does not match the weights");
		else if (wk[i] < 1 || wk[i] > GEOM_MAX)
			st = npu_sh_err(n, NPU_ERR_SHAPE, "the weights have a kernel size of %" PRId64, wk[i]);
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
		return npu_sh_err(n, NPU_ERR_FORMAT, "auto_pad '%s' is not NOTSET, VALID, SAME_UPPER or SAME_LOWER",
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
		return npu_sh_err(n, NPU_ERR_SHAPE, "the kernel (%" PRId64 " with dilation) is larger than the padded input (%" PRId64 ")",
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
	npu_status st = npu_sh_need_rank(n, x, 3, NPU_MAX_RANK);

	if (!st && w->rank != x->rank)
		st = npu_sh_err(n, NPU_ERR_SHAPE, "weights '%s' have rank %d, input '%s' rank %d",
				w->name, w->rank, x->name, x->rank);
	if (!st)
		st = npu_ir_attr_int(n, "group", 1, &group);
	if (st)
		return st;
	if (group < 1 || group > NPU_IR_DIM_MAX || x->dims[1] != w->dims[1] * group ||
	    w->dims[0] % group)
		return npu_sh_err(n, NPU_ERR_SHAPE, "input channels %" PRId64 ", weights [%" PRId64 ", %" PRId64
				  ", ...] and group %" PRId64 " do not fit", x->dims[1], w->dims[0],
				  w->dims[1], group);
	if (b && (b->rank != 1 || b->dims[0] != w->dims[0]))
		return npu_sh_err(n, NPU_ERR_SHAPE, "bias '%s' must have shape [%" PRId64 "]", b->name,
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
	return npu_sh_set_out(g, n, 0, out_dtype, x->rank, dims);
}

npu_status npu_ir_shape_conv(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *w;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &w);
	if (!st)
		st = npu_sh_need_float(n, x);
	if (!st)
		st = npu_sh_same_dtype(n, x, w);
	if (!st && in(g, n, 2))
		st = npu_sh_same_dtype(n, x, in(g, n, 2));
	return st ? st : conv_common(g, n, x, w, in(g, n, 2), x->dtype);
}

npu_status npu_ir_shape_conv_integer(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *w;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &w);
	if (!st && (!is_q8(x->dtype) || !is_q8(w->dtype)))
		st = npu_sh_err(n, NPU_ERR_SHAPE, "inputs must be int8 or uint8");
	return st ? st : conv_common(g, n, x, w, NULL, NPU_DTYPE_INT32);
}

npu_status npu_ir_shape_qlinear_conv(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *w, *yzp = in(g, n, 7), *b = in(g, n, 8);
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_in(g, n, 3, &w);
	if (!st && (!is_q8(x->dtype) || !is_q8(w->dtype)))
		st = npu_sh_err(n, NPU_ERR_SHAPE, "x and w must be int8 or uint8");
	if (!st && b && b->dtype != NPU_DTYPE_INT32)
		st = npu_sh_err(n, NPU_ERR_SHAPE, "bias '%s' must be int32", b->name);
	if (!st)
		st = conv_common(g, n, x, w, b, yzp ? yzp->dtype : x->dtype);
	if (!st)
		st = npu_sh_note_quant(x, in(g, n, 1), in(g, n, 2), 1);
	if (!st)
		st = npu_sh_note_quant(w, in(g, n, 4), in(g, n, 5), 0);
	if (!st)
		st = npu_sh_note_quant(npu_ir_output(g, n, 0), in(g, n, 6), yzp, 1);
	return st;
}

npu_status npu_ir_shape_conv_transpose(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *w, *b = in(g, n, 2);
	struct geom gm;
	int64_t group, op[NPU_MAX_RANK], dims[NPU_MAX_RANK], oshape[NPU_MAX_RANK];
	const int64_t *os;
	int nos;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &w);
	if (!st)
		st = npu_sh_need_float(n, x);
	if (!st)
		st = npu_sh_same_dtype(n, x, w);
	if (!st)
		st = npu_sh_need_rank(n, x, 3, NPU_MAX_RANK);
	if (!st && w->rank != x->rank)
		st = npu_sh_err(n, NPU_ERR_SHAPE, "weights '%s' have rank %d, input '%s' rank %d",
				w->name, w->rank, x->name, x->rank);
	if (!st)
		st = npu_ir_attr_int(n, "group", 1, &group);
	if (st)
		return st;
	if (group < 1 || group > NPU_IR_DIM_MAX || x->dims[1] != w->dims[0])
		return npu_sh_err(n, NPU_ERR_SHAPE, "input channels %" PRId64 " do not match the weights' %" PRId64,
				  x->dims[1], w->dims[0]);
	if (w->dims[0] % group)
		return npu_sh_err(n, NPU_ERR_SHAPE, "group %" PRId64 " does not divide %" PRId64 " channels",
				  group, w->dims[0]);
	if (b && (b->rank != 1 || b->dims[0] != w->dims[1] * group))
		return npu_sh_err(n, NPU_ERR_SHAPE, "bias '%s' must have shape [%" PRId64 "]", b->name,
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
			return npu_sh_err(n, NPU_ERR_SHAPE, "output_shape has %d values, expected %d",
					  nos, gm.ns);
		for (int i = 0; i < gm.ns; i++) {
			oshape[i] = os[nos - gm.ns + i];
			if (oshape[i] < 0 || oshape[i] > NPU_IR_DIM_MAX)
				return npu_sh_err(n, NPU_ERR_SHAPE, "output_shape value %" PRId64 " out of range",
						  oshape[i]);
		}
	}
	for (int i = 0; i < gm.ns; i++) {
		int64_t in_ = x->dims[2 + i], dk = (gm.k[i] - 1) * gm.d[i] + 1;
		int64_t full = gm.s[i] * (in_ - 1) + op[i] + dk;
		bool same = !strcmp(gm.auto_pad, "SAME_UPPER") || !strcmp(gm.auto_pad, "SAME_LOWER");
		int64_t total;

		if (in_ < 1)
			return npu_sh_err(n, NPU_ERR_SHAPE, "input '%s' has an empty spatial dimension", x->name);
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
			return npu_sh_err(n, NPU_ERR_SHAPE, "pads larger than the output");
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
	return npu_sh_set_out(g, n, 0, x->dtype, x->rank, dims);
}

npu_status npu_ir_shape_pool(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	struct geom gm;
	int64_t ceil_mode = 0, dims[NPU_MAX_RANK];
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st && !(is_q8(x->dtype) && !strcmp(n->op, "MaxPool")))
		st = npu_sh_need_float(n, x);
	if (!st)
		st = npu_sh_need_rank(n, x, 3, NPU_MAX_RANK);
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
	st = npu_sh_set_out(g, n, 0, x->dtype, x->rank, dims);
	if (!st)	/* MaxPool's Indices */
		st = npu_sh_set_out(g, n, 1, NPU_DTYPE_INT64, x->rank, dims);
	return st;
}

npu_status npu_ir_shape_global_pool(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t dims[NPU_MAX_RANK];
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_float(n, x);
	if (!st)
		st = npu_sh_need_rank(n, x, 3, NPU_MAX_RANK);
	if (st)
		return st;
	for (int d = 0; d < x->rank; d++)
		dims[d] = d < 2 ? x->dims[d] : 1;
	return npu_sh_set_out(g, n, 0, x->dtype, x->rank, dims);
}

/* ---- normalization ---- */

npu_status npu_ir_shape_batchnorm(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t training = 0;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_float(n, x);
	if (!st)
		st = npu_sh_need_rank(n, x, 2, NPU_MAX_RANK);
	if (!st)
		st = npu_ir_attr_int(n, "training_mode", 0, &training);
	if (st)
		return st;
	/* Training mode (batch statistics, running mean and variance outputs)
	 * becomes reductions in the compiler (compile/rewrite_norm.c). */
	for (int i = 1; !training && i < n->n_outputs; i++)
		if (n->outputs[i] >= 0)
			return npu_sh_err(n, NPU_ERR_UNSUPPORTED, "the training outputs (running mean and variance) are not supported");
	for (int i = 1; i < 5; i++) {
		npu_ir_tensor *p;

		st = npu_sh_need_in(g, n, i, &p);
		if (st)
			return st;
		if (p->rank != 1 || p->dims[0] != x->dims[1])
			return npu_sh_err(n, NPU_ERR_SHAPE, "parameter '%s' must have shape [%" PRId64 "]",
					  p->name, x->dims[1]);
	}
	for (int i = 1; training && i < 3; i++)
		if ((st = npu_sh_set_out(g, n, i, x->dtype, 1, &x->dims[1])))
			return st;
	return npu_sh_set_like(g, n, 0, x);
}

/* InstanceNormalization: scale and B hold one value per channel. */
npu_status npu_ir_shape_instnorm(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *scale, *b;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_float(n, x);
	if (!st)
		st = npu_sh_need_in(g, n, 1, &scale);
	if (!st)
		st = npu_sh_need_in(g, n, 2, &b);
	if (st)
		return st;
	if (x->rank < 3 || npu_ir_numel(scale) != x->dims[1] || npu_ir_numel(b) != x->dims[1])
		return npu_sh_err(n, NPU_ERR_SHAPE, "scale and B must hold one value per channel of a "
				  "tensor of rank 3 or more");
	return npu_sh_set_like(g, n, 0, x);
}

npu_status npu_ir_shape_layernorm(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *scale;
	int64_t axis, stash, dims[NPU_MAX_RANK];
	int a = 0;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_float(n, x);
	if (!st)
		st = npu_sh_need_in(g, n, 1, &scale);
	if (!st)
		st = npu_ir_attr_int(n, "axis", -1, &axis);
	if (!st)
		st = npu_ir_attr_int(n, "stash_type", 1, &stash);
	if (!st)
		st = npu_sh_axis(n, axis, x->rank, &a);
	if (!st)
		st = npu_sh_broadcast_to(n, scale, x);
	if (!st && in(g, n, 2))
		st = npu_sh_broadcast_to(n, in(g, n, 2), x);
	if (!st)
		st = npu_sh_set_like(g, n, 0, x);
	if (st)
		return st;
	if (!npu_dtype_size((npu_dtype)stash))
		return npu_sh_err(n, NPU_ERR_UNSUPPORTED, "stash_type %" PRId64 " is not supported", stash);
	for (int d = 0; d < x->rank; d++)
		dims[d] = d < a ? x->dims[d] : 1;
	st = npu_sh_set_out(g, n, 1, (npu_dtype)stash, x->rank, dims);
	if (!st)
		st = npu_sh_set_out(g, n, 2, (npu_dtype)stash, x->rank, dims);
	return st;
}

/* ---- others ---- */

/*
 * Dropout at inference (or training with a constant ratio of 0): the
 * output is the input and the mask all true (bool from opset 12, the
 * input's type before).
 */
npu_status npu_ir_shape_dropout(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x, *tm = in(g, n, 2), *ratio = in(g, n, 1);
	float r = 1.0f;
	int cnt = 0;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (st)
		return st;
	if (tm && (!tm->data || ((const char *)tm->data)[0]) &&
	    (!ratio || !ratio->data || npu_ir_const_floats(ratio, &r, 1, &cnt) || cnt != 1 ||
	     r != 0.0f))
		return npu_sh_err(n, NPU_ERR_UNSUPPORTED,
				  "training mode is not supported (only with a constant ratio of 0)");
	st = npu_sh_set_like(g, n, 0, x);
	if (!st && n->n_outputs > 1 && n->outputs[1] >= 0)
		st = npu_sh_set_out(g, n, 1, n->opset >= 12 ? NPU_DTYPE_BOOL : x->dtype, x->rank,
				    x->dims);
	return st;
}

npu_status npu_ir_shape_flatten(npu_ir_graph *g, npu_ir_node *n)
{
	npu_ir_tensor *x;
	int64_t axis, dims[2] = { 1, 1 };
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_ir_attr_int(n, "axis", 1, &axis);
	if (st)
		return st;
	if (axis < -x->rank || axis > x->rank)
		return npu_sh_err(n, NPU_ERR_SHAPE, "axis %" PRId64 " is out of range for rank %d",
				  axis, x->rank);
	if (axis < 0)
		axis += x->rank;
	for (int d = 0; d < x->rank; d++)
		dims[d < axis ? 0 : 1] *= x->dims[d];
	return npu_sh_set_out(g, n, 0, x->dtype, 2, dims);
}

/*
 * Optional input @i of a recurrent node, when present and of known shape,
 * must be @rank dims equal to @want (where both are known).
 */
static npu_status rnn_check_in(const npu_ir_graph *g, const npu_ir_node *n, int i, int rank,
			       const int64_t *want, const char *what, const char *form)
{
	const npu_ir_tensor *t = in(g, n, i);
	char sh[160];
	bool ok;

	if (!t || t->rank < 0)
		return NPU_OK;
	ok = t->rank == rank;
	for (int d = 0; ok && d < rank; d++)
		ok = t->dims[d] < 0 || want[d] < 0 || t->dims[d] == want[d];
	if (ok)
		return NPU_OK;
	return npu_sh_err(n, NPU_ERR_SHAPE, "%s is %s, it must be %s (D directions, G gates, hidden H)",
			  what, npu_ir_shape_str(t, sh, sizeof(sh)), form);
}

/*
 * LSTM, GRU, RNN: X [T, B, I] (layout 1: [B, T, I]), W [D, G * H, I] with
 * G gates (4, 3, 1); Y [T, D, B, H] ([B, T, D, H]), Y_h and Y_c [D, B, H]
 * ([B, D, H]).
 */
npu_status npu_ir_shape_rnn(npu_ir_graph *g, npu_ir_node *n)
{
	int64_t gates = !strcmp(n->op, "LSTM") ? 4 : !strcmp(n->op, "GRU") ? 3 : 1;
	int64_t hidden = -1, layout = 0, T, B, D, H, yd[4], hd[3];
	const char *dir;
	npu_ir_tensor *x, *w;
	npu_status st = npu_sh_need_in(g, n, 0, &x);

	if (!st)
		st = npu_sh_need_in(g, n, 1, &w);
	if (!st)
		st = npu_sh_need_float(n, x);
	if (!st)
		st = npu_sh_need_rank(n, x, 3, 3);
	if (!st)
		st = npu_sh_need_rank(n, w, 3, 3);
	if (!st)
		st = npu_ir_attr_int(n, "hidden_size", -1, &hidden);
	if (!st)
		st = npu_ir_attr_int(n, "layout", 0, &layout);
	if (!st)
		st = npu_ir_attr_string(n, "direction", "forward", &dir);
	if (st)
		return st;
	if (strcmp(dir, "forward") && strcmp(dir, "reverse") && strcmp(dir, "bidirectional"))
		return npu_sh_err(n, NPU_ERR_FORMAT,
				  "direction '%s' is not forward, reverse or bidirectional", dir);
	if (layout != 0 && layout != 1)
		return npu_sh_err(n, NPU_ERR_FORMAT, "layout %" PRId64 " is not 0 or 1", layout);
	D = strcmp(dir, "bidirectional") ? 1 : 2;
	H = hidden > 0 ? hidden : w->dims[1] >= 0 ? w->dims[1] / gates : -1;
	if (w->dims[0] >= 0 && w->dims[0] != D)
		return npu_sh_err(n, NPU_ERR_SHAPE, "W has %" PRId64 " directions, direction '%s' needs %" PRId64,
				  w->dims[0], dir, D);
	if (H >= 0 && w->dims[1] >= 0 && w->dims[1] != gates * H)
		return npu_sh_err(n, NPU_ERR_SHAPE, "W's second dimension %" PRId64
				  " is not %" PRId64 " gates times hidden_size %" PRId64,
				  w->dims[1], gates, H);
	T = x->dims[layout ? 1 : 0];
	B = x->dims[layout ? 0 : 1];
	if ((st = rnn_check_in(g, n, 2, 3, (int64_t[]){ D, gates * H, H }, "R", "[D, G * H, H]")) ||
	    (st = rnn_check_in(g, n, 3, 2, (int64_t[]){ D, 2 * gates * H }, "B", "[D, 2 * G * H]")) ||
	    (st = rnn_check_in(g, n, 4, 1, (int64_t[]){ B }, "sequence_lens", "[batch]")) ||
	    (st = rnn_check_in(g, n, 5, 3, layout ? (int64_t[]){ B, D, H } : (int64_t[]){ D, B, H },
			       "initial_h", layout ? "[batch, D, H]" : "[D, batch, H]")))
		return st;
	if (gates == 4 &&
	    ((st = rnn_check_in(g, n, 6, 3, layout ? (int64_t[]){ B, D, H } : (int64_t[]){ D, B, H },
				"initial_c", layout ? "[batch, D, H]" : "[D, batch, H]")) ||
	     (st = rnn_check_in(g, n, 7, 2, (int64_t[]){ D, 3 * H }, "P", "[D, 3 * H]"))))
		return st;
	if (layout) {
		yd[0] = B, yd[1] = T, yd[2] = D, yd[3] = H;
		hd[0] = B, hd[1] = D, hd[2] = H;
	} else {
		yd[0] = T, yd[1] = D, yd[2] = B, yd[3] = H;
		hd[0] = D, hd[1] = B, hd[2] = H;
	}
	if ((st = npu_sh_set_out(g, n, 0, x->dtype, 4, yd)) ||
	    (st = npu_sh_set_out(g, n, 1, x->dtype, 3, hd)))
		return st;
	return gates == 4 ? npu_sh_set_out(g, n, 2, x->dtype, 3, hd) : NPU_OK;
}
