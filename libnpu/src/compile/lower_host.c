// SPDX-License-Identifier: MIT
/*
 * The CPU fallback at compile time (issue 17): a node the NPU cannot run
 * becomes a host step when npu_compile_options.allow_cpu_fallback is set
 * and libnpu has a C reference of its operator (host/npu_host.h).  The
 * step reads its inputs where the programs before it left them and
 * writes its outputs where the programs after it read them: every tensor
 * gets its home as for a lowering (npu_cc_loc), so the scratch plan sees
 * the step's node use them, and moves the step's scratch addresses with
 * the rest (npu_scratch.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_lower.h"
#include "host/npu_host.h"

/* Attribute @a of the node into host attribute @o; false for a type the host cannot keep. */
static bool copy_attr(const npu_ir_attr *a, struct npu_host_attr *o)
{
	o->name = strdup(a->name);
	o->type = a->type;
	switch (a->type) {
	case NPU_IR_ATTR_INT:
		o->i = a->i;
		break;
	case NPU_IR_ATTR_FLOAT:
		o->f = a->f;
		break;
	case NPU_IR_ATTR_STRING:
		o->s = strdup(a->s ? a->s : "");
		return o->name && o->s;
	case NPU_IR_ATTR_INTS:
		o->n = (uint32_t)a->n;
		o->ints = malloc((a->n ? (size_t)a->n : 1) * sizeof(*o->ints));
		if (o->ints && a->n)
			memcpy(o->ints, a->ints, (size_t)a->n * sizeof(*o->ints));
		return o->name && o->ints;
	case NPU_IR_ATTR_FLOATS:
		o->n = (uint32_t)a->n;
		o->floats = malloc((a->n ? (size_t)a->n : 1) * sizeof(*o->floats));
		if (o->floats && a->n)
			memcpy(o->floats, a->floats, (size_t)a->n * sizeof(*o->floats));
		return o->name && o->floats;
	default:
		return false;
	}
	return o->name != NULL;
}

npu_status npu_host_tensor_of(struct npu_cc *cc, int id, struct npu_host_tensor *t)
{
	const npu_ir_tensor *x;
	struct npu_loc loc;
	npu_status st;

	t->seg = NPU_HOST_SEG;
	if (id < 0)
		return NPU_OK;
	x = &cc->g->tensors[id];
	if (!npu_ir_shape_known(x) || !npu_dtype_size(x->dtype))
		return npu_fail(NPU_ERR_UNSUPPORTED, "tensor '%s' has no static shape and dtype",
				x->name);
	if ((st = npu_cc_loc(cc, id, &loc)))
		return st;
	t->seg = loc.seg;
	t->offset = loc.off;
	t->dtype = (uint32_t)x->dtype;
	t->rank = x->rank;
	memcpy(t->dims, x->dims, sizeof(t->dims));
	return npu_cc_dyn(cc, id, &t->dyn);
}

/* "Det det_1, Mod #3": the model's list of nodes run on the host. */
static npu_status note_fallback(struct npu_cmodel *cm, const char *label)
{
	size_t old = cm->fallback_ops ? strlen(cm->fallback_ops) : 0;
	char *p = realloc(cm->fallback_ops, old + strlen(label) + 3);

	if (!p)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	sprintf(p + old, "%s%s", old ? ", " : "", label);
	cm->fallback_ops = p;
	return NPU_OK;
}

npu_status npu_lower_host(struct npu_cc *cc, const npu_ir_node *n)
{
	const struct npu_host_op *op = npu_host_op_get(n->op, n->opset);
	struct npu_host_step *h;
	char lbl[96], what[160];
	const char *why;
	npu_status st = NPU_OK;

	if (!op)
		return npu_fail(NPU_ERR_UNSUPPORTED, "the CPU fallback has no implementation of it");
	if (op->accepts && (why = op->accepts(cc->g, n)))
		return npu_fail(NPU_ERR_UNSUPPORTED, "the CPU fallback takes it, but %s supported on the host",
				why);
	if (cc->batch > 1)
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"the CPU fallback runs layer by layer only: compile with batch 1");
	for (int i = 0; i < n->n_inputs && !op->dynamic; i++)
		if (n->inputs[i] >= 0 && cc->g->tensors[n->inputs[i]].dyn)
			return npu_fail(NPU_ERR_UNSUPPORTED,
					"its input '%s' has a size known only at run time, and the CPU fallback's %s takes static shapes only",
					cc->g->tensors[n->inputs[i]].name, n->op);
	h = calloc(1, sizeof(*h));
	if (!h)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	npu_ir_node_label(n, lbl, sizeof(lbl));
	h->op = strdup(n->op);
	h->node = strdup(lbl);
	h->opset = n->opset;
	h->ninputs = (uint32_t)n->n_inputs;
	h->noutputs = (uint32_t)n->n_outputs;
	h->tensors = calloc((size_t)(n->n_inputs + n->n_outputs) + 1, sizeof(*h->tensors));
	h->attrs = calloc((size_t)n->n_attrs + 1, sizeof(*h->attrs));
	if (!h->op || !h->node || !h->tensors || !h->attrs)
		st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int i = 0; !st && i < n->n_attrs; i++) {
		h->nattrs++;
		if (!copy_attr(&n->attrs[i], &h->attrs[i]))
			st = npu_fail(NPU_ERR_UNSUPPORTED,
				      "the CPU fallback cannot keep attribute '%s' (a tensor or graph)",
				      n->attrs[i].name);
	}
	for (int i = 0; !st && i < n->n_inputs; i++)
		st = npu_host_tensor_of(cc, n->inputs[i], &h->tensors[i]);
	for (int i = 0; !st && i < n->n_outputs; i++)
		st = npu_host_tensor_of(cc, n->outputs[i], &h->tensors[n->n_inputs + i]);
	if (st) {
		npu_host_step_free(h);
		return st;
	}
	snprintf(what, sizeof(what), "%s %s", n->op, lbl);
	if ((st = note_fallback(cc->cm, what))) {
		npu_host_step_free(h);
		return st;
	}
	return npu_sched_host(cc, h);
}
