// SPDX-License-Identifier: MIT
/*
 * The KV cache of a generation program (issue 16): graph surgery on a
 * decoder exported "with past" (Hugging Face / optimum), before shape
 * inference.
 *
 * Such a model reads past_key_values.N.key/.value [batch, kv_heads, past,
 * head_dim] and returns present.N.* = Concat(past, new) on axis 2, which
 * the application feeds back as the next step's past.  On the NPU the
 * cache stays in device memory instead (the NPU_SEG_STATE segment, one
 * [1, kv_heads, max_context, head_dim] tensor per layer and kind), so each
 * Concat becomes npu.ScatterRows(cache, npu.kv_rows, new) writing the new
 * rows in place: its output is the cache itself.
 *
 * - Decode (one token): the past inputs get max_context - 1 rows, so every
 *   shape downstream of present (the scores, the causal mask the graph
 *   builds from the past length) is that of a full cache, and the
 *   attention reads the whole cache; attention_mask [1, max_context]
 *   hides the rows not yet written.  Attention does not depend on the
 *   order of its keys (positions enter through position_ids, before the
 *   cache), so the session may put a token in any free row.
 * - Prefill (S tokens, empty cache): the past inputs get 0 rows (a Shape of
 *   one folds to the right past length), the attention reads the new rows
 *   directly, and the scatter's output (the present tensor, living in the
 *   cache's bytes) stays a graph output so that nothing removes it; it is
 *   no I/O slot (npu_compile_target.state).
 *
 * Any other reader of a past input is refused after shape inference
 * (npu_kvcache_finish), by name.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_gen.h"
#include "compile/npu_lower.h"

#define ALIGN 64

static const char *const kinds[2] = { "key", "value" };

static int find_input(const npu_ir_graph *g, const char *name)
{
	for (int i = 0; i < g->n_inputs; i++)
		if (!strcmp(g->tensors[g->inputs[i]].name, name))
			return g->inputs[i];
	return -1;
}

static int find_output(const npu_ir_graph *g, const char *name)
{
	for (int i = 0; i < g->n_outputs; i++)
		if (!strcmp(g->tensors[g->outputs[i]].name, name))
			return g->outputs[i];
	return -1;
}

/* The node computing tensor @t (the graph may not be sorted yet), or NULL. */
static npu_ir_node *producer(npu_ir_graph *g, int t)
{
	for (int i = 0; i < g->n_nodes; i++)
		for (int k = 0; !g->nodes[i].dead && k < g->nodes[i].n_outputs; k++)
			if (g->nodes[i].outputs[k] == t)
				return &g->nodes[i];
	return NULL;
}

static npu_status append(int **arr, int *n, int v)
{
	int *p = realloc(*arr, (size_t)(*n + 1) * sizeof(int));

	if (!p)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	p[(*n)++] = v;
	*arr = p;
	return NPU_OK;
}

static npu_status add_state(struct npu_kv_cache *kv, const char *name, uint64_t off)
{
	struct npu_state_tensor *s = realloc(kv->state, (kv->n_state + 1) * sizeof(*s));
	char *dup = strdup(name);

	if (s)
		kv->state = s;
	if (!s || !dup) {
		free(dup);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	s[kv->n_state++] = (struct npu_state_tensor){ dup, off };
	return NPU_OK;
}

/* Graph input @name gets shape [1, @len] (its batch must allow 1). */
static npu_status shape_2d(npu_ir_graph *g, const char *name, int64_t len, bool needed)
{
	int id = find_input(g, name);
	npu_ir_tensor *t;
	char sh[160];

	if (id < 0)
		return needed ? npu_fail(NPU_ERR_UNSUPPORTED,
					 "the model has no input '%s': a generation program feeds the token ids there",
					 name) : NPU_OK;
	t = &g->tensors[id];
	npu_ir_named_shape_str(g, id, sh, sizeof(sh));
	if (t->rank >= 0 && (t->rank != 2 || (t->dims[0] >= 0 && t->dims[0] != 1) ||
			     (t->dims[1] >= 0 && t->dims[1] != len)))
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"input '%s' is %s: a generation program gives it [1, %" PRId64
				"] (batch 1); export the model with dynamic batch and sequence axes",
				name, sh, len);
	t->rank = 2;
	t->dims[0] = 1;
	t->dims[1] = len;
	return NPU_OK;
}

/* Turn Concat @c (past, new) into npu.ScatterRows(cache, rows, new), in place. */
static npu_status to_scatter(npu_ir_node *c, int cache, int rows)
{
	int newrows = c->inputs[1];
	int *in = realloc(c->inputs, 3 * sizeof(int));
	char *op = strdup(NPU_OP_SCATTER_ROWS), *dom = strdup("");
	npu_status st;

	if (in)
		c->inputs = in;
	if (!in || !op || !dom) {
		free(op);
		free(dom);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	free(c->op);
	free(c->domain);
	c->op = op;
	c->domain = dom;
	in[0] = cache;
	in[1] = rows;
	in[2] = newrows;
	c->n_inputs = 3;
	while (c->n_attrs)
		npu_ir_remove_attr(c, c->attrs[0].name);
	if ((st = npu_ir_set_attr_int(c, "axis", 2)))
		return st;
	/* Nothing reads the cache before this node writes it: no copy. */
	return npu_ir_set_attr_int(c, NPU_ATTR_IN_PLACE, 1);
}

/*
 * Layer @layer's @kind: check the past input and its Concat, add the cache
 * tensor at *@off and make the Concat write it.
 */
static npu_status one_cache(npu_ir_graph *g, const struct npu_gen_program *prog, int layer,
			    int kind, int rows, uint64_t *off, struct npu_kv_cache *kv)
{
	char pname[96], oname[96], cname[96], lbl[96], sh[160];
	int past, present, cache, newrows;
	int64_t dims[4], axis = 0;
	npu_ir_tensor *p;
	npu_ir_node *c;
	npu_status st;

	snprintf(pname, sizeof(pname), "past_key_values.%d.%s", layer, kinds[kind]);
	snprintf(oname, sizeof(oname), "present.%d.%s", layer, kinds[kind]);
	snprintf(cname, sizeof(cname), NPU_GEN_CACHE_FMT, layer, kinds[kind]);
	past = find_input(g, pname);
	present = find_output(g, oname);
	if (past < 0 || present < 0)
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"layer %d has %s '%s' but no %s '%s': a generation program needs both for every layer; export with use_cache=True (optimum's decoder-with-past)",
				layer, past < 0 ? "output" : "input", past < 0 ? oname : pname,
				past < 0 ? "input" : "output", past < 0 ? pname : oname);
	p = &g->tensors[past];
	npu_ir_named_shape_str(g, past, sh, sizeof(sh));
	if (p->rank != 4 || p->dims[1] <= 0 || p->dims[3] <= 0 ||
	    (p->dims[0] >= 0 && p->dims[0] != 1) ||
	    !(p->dtype == NPU_DTYPE_FLOAT32 || p->dtype == NPU_DTYPE_FLOAT16 ||
	      p->dtype == NPU_DTYPE_BFLOAT16))
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"input '%s' is %s: a KV cache input must be floating point [batch, kv_heads, past_sequence, head_dim] with static kv_heads and head_dim and batch 1",
				pname, sh);
	c = producer(g, present);
	if (c && !strcmp(c->op, "Concat") && !c->domain[0] &&
	    (st = npu_ir_attr_int(c, "axis", 0, &axis)))
		return st;
	if (!c || strcmp(c->op, "Concat") || c->domain[0] || c->n_inputs != 2 ||
	    c->inputs[0] != past || (axis != 2 && axis != -2))
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"output '%s' is not Concat('%s', new keys) on axis 2 (it is computed by %s%s%s): a generation program appends the new rows to the cache on the sequence axis",
				oname, pname, c ? "node " : "nothing", c ? npu_ir_node_label(c, lbl, sizeof(lbl)) : "",
				c ? (axis != 2 && axis != -2 ? ", on another axis" : ", of other inputs") : "");
	newrows = c->inputs[1];
	dims[0] = 1;
	dims[1] = p->dims[1];
	dims[2] = prog->max_context;
	dims[3] = p->dims[3];
	if ((st = npu_ir_add_tensor(g, cname, p->dtype, 4, dims, &cache)) ||
	    (st = append(&g->inputs, &g->n_inputs, cache)))
		return st;
	p = &g->tensors[past];
	/* A Shape of the past folds to the program's past length. */
	p->dims[0] = 1;
	p->dims[2] = prog->tokens ? 0 : prog->max_context - 1;
	c = producer(g, present);
	if (prog->tokens) {
		/* Prefill: the attention reads the new rows, not the cache. */
		for (int i = 0; i < g->n_nodes; i++)
			for (int k = 0; &g->nodes[i] != c && k < g->nodes[i].n_inputs; k++)
				if (g->nodes[i].inputs[k] == present)
					g->nodes[i].inputs[k] = newrows;
	}
	if ((st = to_scatter(c, cache, rows)) || (st = append(&kv->past, &kv->n_past, past)))
		return st;
	/* The cache and the scatter's output (present) share the bytes. */
	if ((st = add_state(kv, cname, *off)) || (st = add_state(kv, oname, *off)))
		return st;
	*off += ((uint64_t)dims[1] * dims[2] * dims[3] * npu_dtype_size(p->dtype) + ALIGN - 1) &
		~(uint64_t)(ALIGN - 1);
	return NPU_OK;
}

npu_status npu_kvcache_rewrite(npu_ir_graph *g, const struct npu_gen_program *prog,
			       struct npu_kv_cache *kv)
{
	int64_t S = prog->tokens ? prog->tokens : 1;
	int logits = find_output(g, "logits"), rows, am, nout = 0, *outs = NULL;
	uint64_t off = 0;
	npu_status st;
	char name[96];

	memset(kv, 0, sizeof(*kv));
	snprintf(name, sizeof(name), "past_key_values.0.key");
	if (find_input(g, name) < 0 || find_output(g, "present.0.key") < 0)
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"the model has no %s: it was not exported with past; export with use_cache=True (optimum's decoder-with-past) so it reads past_key_values.N.key/value and returns present.N.key/value",
				find_input(g, name) < 0 ? "input 'past_key_values.0.key'" :
							  "output 'present.0.key'");
	if (logits < 0)
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"the model has no output 'logits': a generation program samples the next token from it");
	for (int i = 0; i < g->n_inputs; i++) {
		const char *n = g->tensors[g->inputs[i]].name;

		if (strcmp(n, "input_ids") && strcmp(n, "attention_mask") &&
		    strcmp(n, "position_ids") && strncmp(n, "past_key_values.", 16))
			return npu_fail(NPU_ERR_UNSUPPORTED,
					"the model has input '%s': a generation program feeds only input_ids, attention_mask, position_ids and the past_key_values.*",
					n);
	}
	am = prog->tokens ? prog->tokens : prog->max_context;
	if ((st = shape_2d(g, "input_ids", S, true)) ||
	    (st = shape_2d(g, "position_ids", S, false)) ||
	    (st = shape_2d(g, "attention_mask", am, false)))
		return st;
	if ((st = npu_ir_add_tensor(g, NPU_GEN_KV_ROWS, NPU_DTYPE_INT32, 1, &S, &rows)) ||
	    (st = append(&g->inputs, &g->n_inputs, rows)))
		return st;
	for (kv->layers = 0;; kv->layers++) {
		snprintf(name, sizeof(name), "past_key_values.%d.key", kv->layers);
		if (find_input(g, name) < 0) {
			snprintf(name, sizeof(name), "present.%d.key", kv->layers);
			if (find_output(g, name) < 0)
				break;
		}
		for (int k = 0; k < 2; k++)
			if ((st = one_cache(g, prog, kv->layers, k, rows, &off, kv)))
				return st;
	}
	kv->bytes = off;
	/* Outputs: logits, its ArgMax, then (prefill) the cache writes. */
	{
		int am_id, node;
		npu_ir_node *n;

		if ((st = npu_ir_add_tensor(g, NPU_GEN_ARGMAX, NPU_DTYPE_INT64, -1, NULL, &am_id)) ||
		    (st = npu_ir_add_node(g, "ArgMax", NPU_GEN_ARGMAX, &logits, 1, &am_id, 1, &node)))
			return st;
		n = &g->nodes[node];
		if ((st = npu_ir_set_attr_int(n, "axis", -1)) ||
		    (st = npu_ir_set_attr_int(n, "keepdims", 0)))
			return st;
		if ((st = append(&outs, &nout, logits)) || (st = append(&outs, &nout, am_id)))
			goto fail;
	}
	for (unsigned i = 1; prog->tokens && i < kv->n_state; i += 2)
		if ((st = append(&outs, &nout, npu_ir_find_tensor(g, kv->state[i].name))))
			goto fail;
	free(g->outputs);
	g->outputs = outs;
	g->n_outputs = nout;
	return npu_ir_topo_sort(g);
fail:
	free(outs);
	return st;
}

npu_status npu_kvcache_finish(npu_ir_graph *g, struct npu_kv_cache *kv)
{
	for (int i = 0; i < kv->n_past; i++) {
		int p = kv->past[i], k = 0;
		char lbl[96];

		for (int j = 0; j < g->n_nodes; j++) {
			const npu_ir_node *n = &g->nodes[j];

			for (int m = 0; !n->dead && m < n->n_inputs; m++)
				if (n->inputs[m] == p)
					return npu_fail(NPU_ERR_UNSUPPORTED,
							"input '%s' is read by node %s (%s) besides its Concat with the new rows: a generation program keeps the cache on the device and feeds it nowhere else",
							g->tensors[p].name,
							npu_ir_node_label(n, lbl, sizeof(lbl)), n->op);
		}
		while (k < g->n_inputs && g->inputs[k] != p)
			k++;
		if (k < g->n_inputs) {
			memmove(&g->inputs[k], &g->inputs[k + 1],
				(size_t)(g->n_inputs - k - 1) * sizeof(int));
			g->n_inputs--;
		}
	}
	return NPU_OK;
}

void npu_kvcache_free(struct npu_kv_cache *kv)
{
	for (unsigned i = 0; i < kv->n_state; i++)
		free((char *)kv->state[i].name);
	free(kv->state);
	free(kv->past);
	memset(kv, 0, sizeof(*kv));
}
