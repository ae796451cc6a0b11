// SPDX-License-Identifier: MIT
/*
 * The run-time If as host-side control flow (issue 17).
 *
 * An If whose condition is computed at run time arrives here as a Where
 * marked NPU_ATTR_IF_WHERE (rewrite_control.c): Where(cond, then, else),
 * after the rewrites and fusion, so what runs is exactly what this pass
 * sees.  For each such Where W it finds the nodes only W's then input
 * needs (T) and those only its else input needs (E): every node that some
 * graph output needs by a path not through W's value inputs runs
 * unconditionally; of the rest, the ancestors of `then` are T, of `else`
 * E (a node in both runs unconditionally too).  Nothing outside T, E and
 * W reads a tensor of T or E (that reader would make it needed), so the
 * nodes of T and E move, in their order, to just before W, and lowering
 * in the order
 *
 *     IF_NOT(cond) -> else     T ...   JUMP -> W     else: E ...   W
 *
 * runs one branch: the control steps (npu_cmodel.h) go forward only.  W
 * stays a Where: CVU SELECT copies the bits of the value the condition
 * picks, so the other input, whose memory holds whatever was there last
 * (the branch did not run), is never used, even if it is a NaN.
 *
 * Why the scratch plan stays right: lifetimes are first and last use in
 * this order (npu_scratch.c).  A tensor made before the If and read in T
 * or E lives until its last reader, as in straight code.  T's and E's
 * tensors live inside their range, except `then` and `else`, which live
 * until W: so E may reuse memory T used (never both run) but never
 * `then`'s, and the condition lives until W.  Fusion ran before: it cannot
 * move work across the ranges afterwards, and a node fused from both
 * sides of a range boundary is whatever this pass sees.
 *
 * A Where inside T or E of another is nested: its region (T, E, W) lies
 * inside the outer one's T or E and is laid out there, recursively.  A
 * pair of regions that overlap without nesting (not produced by the
 * parser) keeps the second as a plain Where: both its branches run.
 * Only layer by layer (batch 1): a pipelined program has no steps to skip.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_lower.h"
#include "npu_debug.h"
#include "onnx/npu_onnx_if.h"

/* An If's or a Loop's region of nodes. */
struct ctl_if {
	int w;			/* the Where node; a Loop's npu.LoopEnd */
	int b;			/* a Loop's npu.LoopBegin; -1: an If */
	bool *t, *e;		/* per node: in the then (else) range; a Loop's body in t */
	bool on;		/* laid out as control flow */
};

struct layout {
	npu_ir_graph *g;
	struct ctl_if *ifs;
	int nifs;
	int *order;		/* new position -> old node index */
	int norder;
	struct npu_cc_seq *seq;	/* elements: nodes (old index) and marks */
	unsigned nseq;
};

/*
 * Nodes needed by the graph outputs into @need (per node), following
 * every input except inputs 1 and 2 of node @skip (-1: none); or, with
 * @from >= 0, the ancestors of tensor @from (the node making it included).
 */
static void needed(const npu_ir_graph *g, int skip, int from, bool *need, bool *tneed)
{
	memset(tneed, 0, (size_t)g->n_tensors * sizeof(*tneed));
	memset(need, 0, (size_t)g->n_nodes * sizeof(*need));
	if (from >= 0)
		tneed[from] = true;
	else
		for (int i = 0; i < g->n_outputs; i++)
			tneed[g->outputs[i]] = true;
	/* Sorted graph: one backward sweep. */
	for (int i = g->n_nodes - 1; i >= 0; i--) {
		const npu_ir_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		for (int j = 0; j < n->n_outputs && !need[i]; j++)
			need[i] = n->outputs[j] >= 0 && tneed[n->outputs[j]];
		if (!need[i])
			continue;
		for (int j = 0; j < n->n_inputs; j++)
			if (n->inputs[j] >= 0 && !(i == skip && j > 0))
				tneed[n->inputs[j]] = true;
	}
}

/* T and E of If @c; false when both are empty (nothing to skip). */
static bool branches(const npu_ir_graph *g, struct ctl_if *c, bool *always, bool *tneed)
{
	const npu_ir_node *w = &g->nodes[c->w];
	bool any = false;

	needed(g, c->w, -1, always, tneed);
	needed(g, -1, w->inputs[1], c->t, tneed);
	needed(g, -1, w->inputs[2], c->e, tneed);
	for (int i = 0; i < g->n_nodes; i++) {
		bool both = c->t[i] && c->e[i];

		c->t[i] = c->t[i] && !always[i] && !both;
		c->e[i] = c->e[i] && !always[i] && !both;
		any |= c->t[i] || c->e[i];
	}
	return any;
}

static bool in_region(const struct ctl_if *c, int i)
{
	return i == c->w || i == c->b || c->t[i] || c->e[i];
}

/*
 * Loop @c's body: the nodes that depend on its LoopBegin and that its
 * LoopEnd needs (one that only needs values from before the loop runs
 * once, before it: ONNX operators are pure).  False if the end does not
 * depend on the begin.
 */
static bool loop_body(const npu_ir_graph *g, struct ctl_if *c, bool *down, bool *tdown)
{
	const npu_ir_node *e = &g->nodes[c->w];

	memset(tdown, 0, (size_t)g->n_tensors * sizeof(*tdown));
	memset(down, 0, (size_t)g->n_nodes * sizeof(*down));
	for (int j = 0; j < g->nodes[c->b].n_outputs; j++)
		if (g->nodes[c->b].outputs[j] >= 0)
			tdown[g->nodes[c->b].outputs[j]] = true;
	for (int i = c->b + 1; i < g->n_nodes; i++) {
		const npu_ir_node *n = &g->nodes[i];

		for (int j = 0; !n->dead && j < n->n_inputs && !down[i]; j++)
			down[i] = n->inputs[j] >= 0 && tdown[n->inputs[j]];
		for (int j = 0; down[i] && j < n->n_outputs; j++)
			if (n->outputs[j] >= 0)
				tdown[n->outputs[j]] = true;
	}
	if (!down[c->w])
		return false;
	/* Ancestors of the end, into c->t (tdown reused as the tensors needed). */
	memset(tdown, 0, (size_t)g->n_tensors * sizeof(*tdown));
	for (int j = 0; j < e->n_inputs; j++)
		if (e->inputs[j] >= 0)
			tdown[e->inputs[j]] = true;
	for (int i = c->w - 1; i > c->b; i--) {
		const npu_ir_node *n = &g->nodes[i];
		bool need = false;

		for (int j = 0; !n->dead && j < n->n_outputs && !need; j++)
			need = n->outputs[j] >= 0 && tdown[n->outputs[j]];
		if (!need)
			continue;
		c->t[i] = down[i];
		for (int j = 0; j < n->n_inputs; j++)
			if (n->inputs[j] >= 0)
				tdown[n->inputs[j]] = true;
	}
	return true;
}

/* Region @b lies inside @a's T or inside its E. */
static bool nested_in(const npu_ir_graph *g, const struct ctl_if *b, const struct ctl_if *a)
{
	bool in_t = true, in_e = true;

	for (int i = 0; i < g->n_nodes; i++)
		if (in_region(b, i)) {
			in_t = in_t && a->t[i];
			in_e = in_e && a->e[i];
		}
	return in_t || in_e;
}

static bool overlap(const npu_ir_graph *g, const struct ctl_if *a, const struct ctl_if *b)
{
	for (int i = 0; i < g->n_nodes; i++)
		if (in_region(a, i) && in_region(b, i))
			return true;
	return false;
}

static npu_status push(struct layout *l, struct npu_cc_seq e, unsigned *at)
{
	struct npu_cc_seq *s = realloc(l->seq, (l->nseq + 1) * sizeof(*s));

	if (!s)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	l->seq = s;
	if (at)
		*at = l->nseq;
	l->seq[l->nseq++] = e;
	if (e.node >= 0)
		l->order[l->norder++] = e.node;
	return NPU_OK;
}

/*
 * Lay out the live nodes with @in[i] set, in their order, each If region
 * whose Where is among them (and not inside another such region) as a
 * block at its Where's place.
 */
static npu_status lay_out(struct layout *l, const bool *in)
{
	const npu_ir_graph *g = l->g;
	npu_status st = NPU_OK;
	int *top = calloc((size_t)g->n_nodes + 1, sizeof(*top));

	if (!top)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	/* top[i]: 1 + the outermost If among @in whose region holds node i. */
	for (int k = 0; k < l->nifs; k++) {
		const struct ctl_if *c = &l->ifs[k];
		bool outer = c->on && in[c->w];

		for (int j = 0; outer && j < l->nifs; j++)
			if (j != k && l->ifs[j].on && in[l->ifs[j].w] &&
			    (l->ifs[j].t[c->w] || l->ifs[j].e[c->w]))
				outer = false;
		for (int i = 0; outer && i < g->n_nodes; i++)
			if (in_region(c, i))
				top[i] = k + 1;
	}
	for (int i = 0; !st && i < g->n_nodes; i++) {
		const struct ctl_if *c;
		unsigned at_if = 0, at_jump = 0, at_else;

		if (!in[i] || g->nodes[i].dead)
			continue;
		if (!top[i]) {
			st = push(l, (struct npu_cc_seq){ .node = i }, NULL);
			continue;
		}
		c = &l->ifs[top[i] - 1];
		if (i != c->w)
			continue;	/* laid out with its Where (LoopEnd) */
		if (c->b >= 0) {
			/* LOOP_BEGIN -> after the end; body; LOOP_END -> the body's start. */
			st = push(l, (struct npu_cc_seq){ .node = c->b, .ctl = NPU_CTL_LOOP_BEGIN },
				  &at_if);
			if (!st)
				st = lay_out(l, c->t);
			if (!st)
				st = push(l, (struct npu_cc_seq){ .node = i, .ctl = NPU_CTL_LOOP_END },
					  &at_jump);
			if (!st) {
				l->seq[at_if].target = l->nseq;
				l->seq[at_jump].target = at_if + 1;
			}
			continue;
		}
		st = push(l, (struct npu_cc_seq){ .node = -1, .ctl = NPU_CTL_IF_NOT,
						   .cond = g->nodes[i].inputs[0], .w = i }, &at_if);
		if (!st)
			st = lay_out(l, c->t);
		if (!st)
			st = push(l, (struct npu_cc_seq){ .node = -1, .ctl = NPU_CTL_JUMP, .cond = -1,
							   .w = i }, &at_jump);
		at_else = l->nseq;
		if (!st)
			st = lay_out(l, c->e);
		if (!st) {
			l->seq[at_if].target = at_else;
			l->seq[at_jump].target = l->nseq;
			st = push(l, (struct npu_cc_seq){ .node = i }, NULL);
		}
	}
	free(top);
	return st;
}

/* Reorder the nodes as @l laid them out (dead ones last); node elements get the new indices. */
static npu_status reorder(npu_ir_graph *g, struct layout *l)
{
	npu_ir_node *nodes = malloc((size_t)g->n_nodes * sizeof(*nodes));
	int *pos = malloc((size_t)g->n_nodes * sizeof(*pos));
	int n = 0;

	if (!nodes || !pos) {
		free(nodes);
		free(pos);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	for (int i = 0; i < l->norder; i++) {
		pos[l->order[i]] = n;
		nodes[n++] = g->nodes[l->order[i]];
	}
	for (int i = 0; i < g->n_nodes; i++)
		if (g->nodes[i].dead)
			nodes[n++] = g->nodes[i];
	if (n != g->n_nodes) {
		free(nodes);
		free(pos);
		return npu_fail(NPU_ERR_INTERNAL, "the If layout lost nodes (%d of %d)", n,
				g->n_nodes);
	}
	memcpy(g->nodes, nodes, (size_t)n * sizeof(*nodes));
	for (unsigned k = 0; k < l->nseq; k++) {
		if (l->seq[k].node >= 0)
			l->seq[k].node = pos[l->seq[k].node];
		if (l->seq[k].w >= 0 && l->seq[k].node < 0)
			l->seq[k].w = pos[l->seq[k].w];
	}
	free(nodes);
	free(pos);
	/*
	 * The producers' new indices (not npu_ir_topo_sort(): after fusion a
	 * dead node may read a tensor nothing makes any more).
	 */
	for (int t = 0; t < g->n_tensors; t++)
		g->tensors[t].producer = -1;
	for (int i = 0; i < g->n_nodes; i++)
		for (int j = 0; !g->nodes[i].dead && j < g->nodes[i].n_outputs; j++)
			if (g->nodes[i].outputs[j] >= 0)
				g->tensors[g->nodes[i].outputs[j]].producer = i;
	return NPU_OK;
}

npu_status npu_control_layout(struct npu_cc *cc)
{
	npu_ir_graph *g = cc->g;
	struct layout l = { .g = g };
	bool *always = NULL, *tneed = NULL, *all = NULL;
	npu_status st = NPU_OK;
	int on = 0;

	if (cc->batch > 1)
		return NPU_OK;
	for (int i = 0; i < g->n_nodes; i++)
		l.nifs += !g->nodes[i].dead && (npu_ir_attr_find(&g->nodes[i], NPU_ATTR_IF_WHERE) ||
						!strcmp(g->nodes[i].op, NPU_OP_LOOP_END));
	if (!l.nifs)
		return NPU_OK;
	l.ifs = calloc((size_t)l.nifs, sizeof(*l.ifs));
	always = calloc((size_t)g->n_nodes, sizeof(bool));
	all = calloc((size_t)g->n_nodes, sizeof(bool));
	tneed = calloc((size_t)g->n_tensors + 1, sizeof(bool));
	l.order = calloc((size_t)g->n_nodes, sizeof(int));
	if (!l.ifs || !always || !all || !tneed || !l.order) {
		st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	l.nifs = 0;
	for (int i = 0; !st && i < g->n_nodes; i++) {
		struct ctl_if *c = &l.ifs[l.nifs];

		const npu_ir_node *n = &g->nodes[i];
		bool loop = !n->dead && !strcmp(n->op, NPU_OP_LOOP_END);
		int it = loop && n->n_inputs > 1 ? n->inputs[1] : -1;

		if (!loop && (n->dead || !npu_ir_attr_find(n, NPU_ATTR_IF_WHERE) ||
			      n->n_inputs != 3 || n->inputs[1] < 0 || n->inputs[2] < 0))
			continue;
		c->w = i;
		c->b = it >= 0 ? g->tensors[it].producer : -1;
		c->t = calloc((size_t)g->n_nodes, sizeof(bool));
		c->e = calloc((size_t)g->n_nodes, sizeof(bool));
		l.nifs++;
		if (!c->t || !c->e)
			st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		else if (!loop)
			c->on = branches(g, c, always, tneed);
		else if (c->b < 0 || strcmp(g->nodes[c->b].op, NPU_OP_LOOP_BEGIN) ||
			 !loop_body(g, c, always, tneed))
			st = npu_fail(NPU_ERR_INTERNAL, "Loop end %s without its begin", n->name);
		else
			c->on = true;
	}
	/*
	 * Regions nest or are disjoint; an If that does neither stays a plain
	 * Where (both branches run), a Loop cannot.
	 */
	for (int b = 0; !st && b < l.nifs; b++)
		for (int a = 0; l.ifs[b].on && a < b; a++) {
			struct ctl_if *x = &l.ifs[a], *y = &l.ifs[b];

			if (!x->on || !overlap(g, x, y) || nested_in(g, x, y) || nested_in(g, y, x))
				continue;
			if (y->b < 0)
				y->on = false;
			else if (x->b < 0)
				x->on = false;
			else
				st = npu_fail(NPU_ERR_UNSUPPORTED,
					      "Loops '%s' and '%s' share nodes without one inside the other: libnpu cannot lay them out as step ranges",
					      g->nodes[x->w].name, g->nodes[y->w].name);
		}

	for (int k = 0; k < l.nifs; k++)
		on += l.ifs[k].on;
	if (st || !on)
		goto out;
	for (int i = 0; i < g->n_nodes; i++)
		all[i] = true;
	if (!(st = lay_out(&l, all)))
		st = reorder(g, &l);
	if (!st) {
		cc->seq = l.seq;
		cc->nseq = l.nseq;
		l.seq = NULL;
		npu_debug(NPU_DEBUG_TILES, "run-time If and Loop: %d of %d as control flow (%u steps laid out)",
			  on, l.nifs, cc->nseq);
	}
out:
	for (int k = 0; k < l.nifs; k++) {
		free(l.ifs[k].t);
		free(l.ifs[k].e);
	}
	free(l.ifs);
	free(l.order);
	free(l.seq);
	free(always);
	free(all);
	free(tneed);
	return st;
}

/*
 * "If 'if_1/select0': then-branch or skip it" for a control step's label
 * and node (@ctl: NPU_CTL_IF_NOT, or NPU_CTL_JUMP at the then-branch's end).
 */
static void if_label(const struct npu_cc *cc, int w, uint32_t ctl, char *buf, size_t len)
{
	char lbl[96];

	snprintf(buf, len, "If %s: %s", npu_ir_node_label(&cc->g->nodes[w], lbl, sizeof(lbl)),
		 ctl == NPU_CTL_IF_NOT ? "then-branch or skip it" : "end of the then-branch");
}

npu_status npu_control_step(struct npu_cc *cc, const struct npu_cc_seq *e)
{
	struct npu_host_step *h = calloc(1, sizeof(*h));
	char what[128];
	npu_status st = NPU_OK;

	if (!h)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	if_label(cc, e->w, e->ctl, what, sizeof(what));
	h->op = strdup(e->ctl == NPU_CTL_IF_NOT ? "npu.IfNot" : "npu.Jump");
	h->node = strdup(what);
	h->ctl = e->ctl;
	h->target = e->target;	/* a sequence element until npu_control_targets() */
	h->ninputs = e->cond >= 0;
	h->tensors = calloc(2, sizeof(*h->tensors));
	h->attrs = calloc(1, sizeof(*h->attrs));
	if (!h->op || !h->node || !h->tensors || !h->attrs)
		st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	if (!st && e->cond >= 0) {
		const npu_ir_tensor *c = &cc->g->tensors[e->cond];
		struct npu_loc loc;

		if (c->dtype != NPU_DTYPE_BOOL || npu_ir_numel(c) != 1)
			st = npu_fail(NPU_ERR_INTERNAL, "%s: condition '%s' is not one bool", what,
				      c->name);
		else if (!(st = npu_cc_loc(cc, e->cond, &loc)))
			h->tensors[0] = (struct npu_host_tensor){ .seg = loc.seg, .offset = loc.off,
								  .dtype = NPU_DTYPE_BOOL,
								  .rank = 0 };
	}
	if (st) {
		npu_host_step_free(h);
		return st;
	}
	return npu_sched_host(cc, h);
}

void npu_control_targets(struct npu_cc *cc, const unsigned *seq_work)
{
	for (unsigned i = 0; i < cc->nwork; i++) {
		struct npu_host_step *h = cc->work[i].host;

		if (h && h->ctl)
			h->target = seq_work[h->target];
	}
}
