// SPDX-License-Identifier: MIT
/*
 * The training optimisers of ai.onnx.preview.training (Adagrad, Adam,
 * Momentum with its Nesterov mode) as the elementwise formulas ONNX defines
 * them by: Mul, Add, Sub, Div, Sqrt, Exp and one Where per step on the
 * CVU.  Inputs: the learning rate R and the step count T (scalars, at run
 * time or constant), then n groups of tensors (X, G and the optimiser's
 * state: Adagrad H; Momentum V; Adam V, H), one update per group.
 *
 *   Adagrad   r = R / (1 + T decay_factor), Gr = norm_coefficient X + G,
 *             H' = H + Gr Gr, X' = X - r Gr / (sqrt(H') + epsilon)
 *   Momentum  Gr = norm_coefficient X + G, b = T > 0 ? beta : 1,
 *             V' = alpha V + b Gr, X' = X - R V' (standard),
 *             X' = X - R (Gr + alpha V') (nesterov)
 *   Adam      Gr = norm_coefficient X + G, V' = alpha V + (1 - alpha) Gr,
 *             H' = beta H + (1 - beta) Gr Gr,
 *             r = T > 0 ? R sqrt(1 - beta^T) / (1 - alpha^T) : R,
 *             X' = (1 - norm_coefficient_post) (X - r V' / (sqrt(H') + epsilon))
 *
 * beta^T of a run-time T is exp(T ln beta) (alpha, beta in (0, 1]; 0 is
 * taken as 0^T = 0, the T = 0 branch being R).  Scalar terms of constants
 * fold here; T at run time is Cast to float32 once.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_rewrite_priv.h"

/* A scalar operand: a tensor (@id >= 0) or the constant @v. */
struct sv {
	int id;
	double v;
};

struct train {
	npu_ir_graph *g;
	const char *name;
};

static struct sv konst(double v)
{
	return (struct sv){ -1, v };
}

/* @a's tensor: a float32 scalar constant made for it when it has none. */
static npu_status tensor_of(struct train *t, struct sv *a)
{
	float *f;

	if (a->id >= 0)
		return NPU_OK;
	f = malloc(sizeof(*f));
	if (!f)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	*f = (float)a->v;
	return npu_rw_const(t->g, NPU_DTYPE_FLOAT32, 0, NULL, f, &a->id);
}

/* *@y = @a @op @b ("Add", "Sub", "Mul", "Div"), folded when both are constants. */
static npu_status bin(struct train *t, const char *op, struct sv a, struct sv b, int out,
		      struct sv *y)
{
	npu_status st;

	if (a.id < 0 && b.id < 0 && out < 0) {
		*y = konst(op[0] == 'A' ? a.v + b.v : op[0] == 'S' ? a.v - b.v :
			   op[0] == 'M' ? a.v * b.v : a.v / b.v);
		return NPU_OK;
	}
	if ((st = tensor_of(t, &a)) || (st = tensor_of(t, &b)))
		return st;
	y->v = 0;
	return npu_rw_binary(t->g, op, 14, t->name, a.id, b.id, out, &y->id);
}

/* *@y = @op(@a) ("Sqrt", "Exp") of a tensor, or folded. */
static npu_status unary(struct train *t, const char *op, struct sv a, struct sv *y)
{
	const npu_ir_tensor *x;
	int64_t dims[NPU_MAX_RANK];
	npu_status st;

	if (a.id < 0) {
		*y = konst(op[0] == 'S' ? sqrt(a.v) : exp(a.v));
		return NPU_OK;
	}
	x = &t->g->tensors[a.id];
	memcpy(dims, x->dims, sizeof(dims));
	y->v = 0;
	if ((st = npu_rw_tensor(t->g, NPU_DTYPE_FLOAT32, x->rank, dims, &y->id)))
		return st;
	return npu_rw_op(t->g, op, 13, t->name, &a.id, 1, &y->id, 1, NULL);
}

/* *@y = T > 0 ? @pos : @zero, for T (@tf, float32) at run time or constant. */
static npu_status if_started(struct train *t, struct sv tf, struct sv pos, struct sv zero,
			     struct sv *y)
{
	struct sv z = konst(0);
	int64_t dims[NPU_MAX_RANK];
	int cond, r;
	npu_status st;

	if (tf.id < 0) {
		*y = tf.v > 0 ? pos : zero;
		return NPU_OK;
	}
	if ((st = tensor_of(t, &pos)) || (st = tensor_of(t, &zero)) || (st = tensor_of(t, &z)) ||
	    (st = npu_rw_tensor(t->g, NPU_DTYPE_BOOL, 0, NULL, &cond)) ||
	    (st = npu_rw_op(t->g, "Greater", 13, t->name, (int[]){ tf.id, z.id }, 2, &cond, 1,
			    NULL)))
		return st;
	npu_rw_bshape(&t->g->tensors[pos.id], &t->g->tensors[zero.id], dims, &r);
	y->v = 0;
	if ((st = npu_rw_tensor(t->g, NPU_DTYPE_FLOAT32, r, dims, &y->id)))
		return st;
	return npu_rw_op(t->g, "Where", 16, t->name, (int[]){ cond, pos.id, zero.id }, 3, &y->id,
			 1, NULL);
}

/* @a^T: exp(T ln a) (0 for a = 0, where only T > 0 reads it). */
static npu_status pow_t(struct train *t, double a, struct sv tf, struct sv *y)
{
	struct sv e;
	npu_status st;

	if (a <= 0) {
		*y = konst(0);
		return NPU_OK;
	}
	if (tf.id < 0) {
		*y = konst(pow(a, tf.v));
		return NPU_OK;
	}
	st = bin(t, "Mul", tf, konst(log(a)), -1, &e);
	return st ? st : unary(t, "Exp", e, y);
}

/* A scalar input: its constant value, or the tensor (T: Cast to float32). */
static npu_status scalar_in(struct train *t, int id, struct sv *y)
{
	const npu_ir_tensor *x = &t->g->tensors[id];
	int64_t iv;
	float fv;
	int c, k;
	npu_status st;

	if (npu_ir_is_const(x) && !npu_ir_const_floats(x, &fv, 1, &c) && c == 1) {
		*y = konst(fv);
		return NPU_OK;
	}
	if (npu_ir_is_const(x) && !npu_ir_const_ints(x, &iv, 1, &c) && c == 1) {
		*y = konst((double)iv);
		return NPU_OK;
	}
	if (x->dtype == NPU_DTYPE_FLOAT32) {
		*y = (struct sv){ id, 0 };
		return NPU_OK;
	}
	y->v = 0;
	if ((st = npu_rw_tensor(t->g, NPU_DTYPE_FLOAT32, 0, NULL, &y->id)) ||
	    (st = npu_rw_op(t->g, "Cast", 13, t->name, &id, 1, &y->id, 1, &k)))
		return st;
	return npu_ir_set_attr_int(&t->g->nodes[k], "to", NPU_DTYPE_FLOAT32);
}

struct opt_attrs {
	float alpha, beta, epsilon, decay, norm, norm_post;
	bool nesterov;
};

static npu_status read_attrs(const npu_ir_node *n, struct opt_attrs *a)
{
	const char *mode = "standard";
	npu_status st;
	bool adam = !strcmp(n->op, "Adam");

	if ((st = npu_ir_attr_float(n, "alpha", adam ? 0.9f : 0.0f, &a->alpha)) ||
	    (st = npu_ir_attr_float(n, "beta", adam ? 0.999f : 0.0f, &a->beta)) ||
	    (st = npu_ir_attr_float(n, "epsilon", 1e-6f, &a->epsilon)) ||
	    (st = npu_ir_attr_float(n, "decay_factor", 0.0f, &a->decay)) ||
	    (st = npu_ir_attr_float(n, "norm_coefficient", 0.0f, &a->norm)) ||
	    (st = npu_ir_attr_float(n, "norm_coefficient_post", 0.0f, &a->norm_post)) ||
	    (st = npu_ir_attr_string(n, "mode", "standard", &mode)))
		return st;
	a->nesterov = !strcmp(mode, "nesterov");
	if (!a->nesterov && strcmp(mode, "standard")) {
		char lbl[96];

		return npu_fail(NPU_ERR_UNSUPPORTED,
				"Momentum (node %s): mode \"%s\" is neither \"standard\" nor \"nesterov\"",
				npu_ir_node_label(n, lbl, sizeof(lbl)), mode);
	}
	return NPU_OK;
}

/* One group: inputs @in[] (X, G, state...), outputs @out[] (X', state'...). */
static npu_status update(struct train *t, const char *op, const struct opt_attrs *a,
			 struct sv r, const int *in, const int *out, const struct sv *radj)
{
	struct sv x = { in[0], 0 }, gr, v1, v2, h1, h2, d, q;
	npu_status st;

	/* Gr = norm X + G */
	gr = (struct sv){ in[1], 0 };
	if (a->norm != 0 && ((st = bin(t, "Mul", x, konst(a->norm), -1, &gr)) ||
			     (st = bin(t, "Add", gr, (struct sv){ in[1], 0 }, -1, &gr))))
		return st;
	if (!strcmp(op, "Adagrad")) {
		/* H' = H + Gr Gr; X' = X - r Gr / (sqrt(H') + eps) */
		if ((st = bin(t, "Mul", gr, gr, -1, &h1)) ||
		    (st = bin(t, "Add", (struct sv){ in[2], 0 }, h1, out[1], &h2)) ||
		    (st = unary(t, "Sqrt", h2, &d)) ||
		    (st = bin(t, "Add", d, konst(a->epsilon), -1, &d)) ||
		    (st = bin(t, "Mul", *radj, gr, -1, &q)) ||
		    (st = bin(t, "Div", q, d, -1, &q)))
			return st;
		return bin(t, "Sub", x, q, out[0], &q);
	}
	if (!strcmp(op, "Momentum")) {
		/* V' = alpha V + b Gr; X' = X - R V' or X - R (Gr + alpha V') */
		if ((st = bin(t, "Mul", (struct sv){ in[2], 0 }, konst(a->alpha), -1, &v1)) ||
		    (st = bin(t, "Mul", *radj, gr, -1, &v2)) ||
		    (st = bin(t, "Add", v1, v2, out[1], &v2)))
			return st;
		q = v2;
		if (a->nesterov &&
		    ((st = bin(t, "Mul", v2, konst(a->alpha), -1, &q)) ||
		     (st = bin(t, "Add", gr, q, -1, &q))))
			return st;
		if ((st = bin(t, "Mul", r, q, -1, &q)))
			return st;
		return bin(t, "Sub", x, q, out[0], &q);
	}
	/* Adam: V' = alpha V + (1 - alpha) Gr; H' = beta H + (1 - beta) Gr Gr */
	if ((st = bin(t, "Mul", (struct sv){ in[2], 0 }, konst(a->alpha), -1, &v1)) ||
	    (st = bin(t, "Mul", gr, konst(1.0 - a->alpha), -1, &v2)) ||
	    (st = bin(t, "Add", v1, v2, out[1], &v2)) ||
	    (st = bin(t, "Mul", (struct sv){ in[3], 0 }, konst(a->beta), -1, &h1)) ||
	    (st = bin(t, "Mul", gr, gr, -1, &h2)) ||
	    (st = bin(t, "Mul", h2, konst(1.0 - a->beta), -1, &h2)) ||
	    (st = bin(t, "Add", h1, h2, out[2], &h2)) ||
	    (st = unary(t, "Sqrt", h2, &d)) ||
	    (st = bin(t, "Add", d, konst(a->epsilon), -1, &d)) ||
	    (st = bin(t, "Div", v2, d, -1, &q)) ||
	    (st = bin(t, "Mul", *radj, q, -1, &q)))
		return st;
	if (a->norm_post == 0)
		return bin(t, "Sub", x, q, out[0], &q);
	if ((st = bin(t, "Sub", x, q, -1, &q)))
		return st;
	return bin(t, "Mul", q, konst(1.0 - a->norm_post), out[0], &q);
}

npu_status npu_rewrite_optimizer(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	struct train t = { g, NULL };
	int groups = !strcmp(n->op, "Adam") ? 4 : 3, nin = n->n_inputs, nout = n->n_outputs;
	int cnt = (nin - 2) / groups, ins[64], outs[64], in[4], out[3];
	struct opt_attrs a;
	struct sv r, tf, radj, x1, x2;
	char name[128], op[16];
	npu_status st;

	*applied = false;
	if (nin < 2 + groups || (nin - 2) % groups || nout != cnt * (groups - 1) || nin > 64)
		return NPU_OK;	/* the shape rule refused it already */
	for (int i = 2; i < nin; i++)
		if (n->inputs[i] < 0 || g->tensors[n->inputs[i]].dtype != NPU_DTYPE_FLOAT32)
			return NPU_OK;
	if ((st = read_attrs(n, &a)))
		return st;
	memcpy(ins, n->inputs, (size_t)nin * sizeof(*ins));
	memcpy(outs, n->outputs, (size_t)nout * sizeof(*outs));
	snprintf(name, sizeof(name), "%s", n->name);
	snprintf(op, sizeof(op), "%s", n->op);
	t.name = name;
	*applied = true;
	g->nodes[k].dead = true;
	for (int i = 0; i < nout; i++)
		if (outs[i] >= 0)
			npu_rw_detach(g, k, outs[i]);
	if ((st = scalar_in(&t, ins[0], &r)) || (st = scalar_in(&t, ins[1], &tf)))
		return st;
	/* The step's scalar factor, shared by every group. */
	if (!strcmp(op, "Adagrad")) {
		st = bin(&t, "Mul", tf, konst(a.decay), -1, &x1);
		if (!st)
			st = bin(&t, "Add", x1, konst(1.0), -1, &x1);
		if (!st)
			st = bin(&t, "Div", r, x1, -1, &radj);
	} else if (!strcmp(op, "Momentum")) {
		st = if_started(&t, tf, konst(a.beta), konst(1.0), &radj);
	} else {
		/* r = T > 0 ? R sqrt(1 - beta^T) / (1 - alpha^T) : R */
		st = pow_t(&t, a.beta, tf, &x1);
		if (!st)
			st = bin(&t, "Sub", konst(1.0), x1, -1, &x1);
		if (!st)
			st = unary(&t, "Sqrt", x1, &x1);
		if (!st)
			st = bin(&t, "Mul", r, x1, -1, &x1);
		if (!st)
			st = pow_t(&t, a.alpha, tf, &x2);
		if (!st)
			st = bin(&t, "Sub", konst(1.0), x2, -1, &x2);
		if (!st)
			st = bin(&t, "Div", x1, x2, -1, &x1);
		if (!st)
			st = if_started(&t, tf, x1, r, &radj);
	}
	for (int i = 0; !st && i < cnt; i++) {
		for (int j = 0; j < groups; j++)
			in[j] = ins[2 + j * cnt + i];
		for (int j = 0; j < groups - 1; j++)
			out[j] = outs[j * cnt + i];
		st = update(&t, op, &a, r, in, out, &radj);
	}
	return st;
}
