// SPDX-License-Identifier: MIT
/*
 * The attention block as one fused node (lowered by lower_attn.c):
 *
 *   S = MatMul(Q, K^T) [scaled: "npu_scale", fused by npu_fuse.c; a
 *                       constant scalar Mul or Div of Q or of K^T alone
 *                       joins that scale, then applied to the fp32
 *                       product instead of before the bf16 rounding]
 *   S = S + mask       (optional: an additive mask broadcast to S, or
 *                       S * m + f with constant m in {0, 1} and f <= -1e30
 *                       where m is 0, as a Where with a constant
 *                       condition becomes (rewrite_select.c): then the
 *                       additive mask f)
 *   P = Softmax(S) over the last axis
 *   Y = MatMul(P, V)
 *
 * Every intermediate must have that one consumer and be no graph output.
 * The second MatMul becomes the fused node: NPU_ATTR_ATTN, inputs Q, K, V
 * and the mask (as the tensors the layout nodes before them started from),
 * and each operand's walker view (npu_view.h) as an attribute, so the
 * Transposes and Reshapes between [B, S, H, D] and [B, H, S, D], a Split
 * of a fused QKV projection and grouped-query attention's K/V repeat are
 * read through by the tiles' DMAs; the layout nodes after Y (the merge of
 * the heads) likewise become its write-back rows.  Nodes left without a
 * consumer are dropped.
 *
 * Then every other float MatMul whose run-time operand comes through
 * layout nodes reads it through its view likewise (NPU_ATTR_MM_A, _B).
 *
 * When one (batch, head)'s K and V do not fit a tile's HBSM budget beside
 * 16 query rows, the keys are tiled (online softmax, lower_attn.c); only
 * when not even that fits do the nodes run one by one.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_lower.h"
#include "compile/npu_view.h"
#include "npu_debug.h"

#define CHAIN_MAX 64

static int live_producer(const npu_ir_graph *g, int t, const char *op)
{
	int p = t >= 0 ? g->tensors[t].producer : -1;

	if (p < 0 || g->nodes[p].dead || strcmp(g->nodes[p].op, op) ||
	    strcmp(g->nodes[p].domain ? g->nodes[p].domain : "", ""))
		return -1;
	return p;
}

/* Tensor @t feeds only the next node of the block. */
static bool private_to_block(const npu_ir_graph *g, int t)
{
	return t >= 0 && !npu_ir_is_graph_output(g, t) && npu_ir_count_uses(g, t) == 1 &&
	       g->tensors[t].dtype == NPU_DTYPE_FLOAT32;
}

/*
 * @v (the logical dims of an operand, its batch dims right-aligned to the
 * scores' @rank dims @dims) as a rank-@rank view: missing batch dims are 1,
 * size-1 batch dims broadcast.
 */
static bool fit(struct npu_lview *v, int rank, const int64_t *dims)
{
	int64_t d1[NPU_MAX_RANK];
	int lead = rank - v->rank;

	if (lead < 0)
		return false;
	for (int d = 0; d < rank; d++)
		d1[d] = d < lead ? 1 : v->size[d - lead];
	if (lead && !npu_lview_reshape(v, rank, d1))
		return false;
	for (int d = 0; d < rank - 2; d++) {
		if (v->size[d] == dims[d])
			continue;
		if (v->size[d] != 1)
			return false;
		v->size[d] = dims[d];
		v->stride[d] = 0;
		v->div[d] = 1;
		v->mod[d] = 0;
	}
	return true;
}

static npu_status put_view(npu_ir_graph *g, int node, const char *name, const struct npu_lview *v)
{
	int64_t a[2 + 4 * NPU_MAX_RANK];

	a[0] = v->rank;
	a[1] = v->off;
	for (int d = 0; d < v->rank; d++) {
		a[2 + d] = v->size[d];
		a[2 + v->rank + d] = v->stride[d];
		a[2 + 2 * v->rank + d] = v->div[d];
		a[2 + 3 * v->rank + d] = v->mod[d];
	}
	return npu_ir_set_attr_ints(&g->nodes[node], name, a, 2 + 4 * v->rank);
}

npu_status npu_attn_view(const npu_ir_node *n, const char *name, int t, struct npu_lview *v)
{
	const int64_t *a;
	int cnt;
	npu_status st = npu_ir_attr_ints(n, name, &a, &cnt);

	if (st)
		return st;
	if (!a || cnt < 2 || a[0] < 1 || a[0] > NPU_MAX_RANK || cnt != 2 + 4 * a[0])
		return npu_fail(NPU_ERR_INTERNAL, "fused attention without its %s view", name);
	memset(v, 0, sizeof(*v));
	v->t = t;
	v->rank = (int)a[0];
	v->off = a[1];
	for (int d = 0; d < v->rank; d++) {
		v->size[d] = a[2 + d];
		v->stride[d] = a[2 + v->rank + d];
		v->div[d] = a[2 + 2 * v->rank + d];
		v->mod[d] = a[2 + 3 * v->rank + d];
	}
	return NPU_OK;
}

uint64_t npu_attn_rows(uint64_t budget, int64_t D, int64_t Dv, int64_t Sk, int mask)
{
	/*
	 * Per query row: Q fp32 + bf16, scores fp32, probabilities bf16, Y,
	 * and the row's max and sum when the keys are tiled.
	 */
	uint64_t per = (uint64_t)(D * 6 + Sk * 6 + Dv * 4 + 8) + (mask == 2 ? (uint64_t)Sk * 4 : 0);
	/* Per tile: K and V fp32 + bf16, a broadcast mask row, alignment. */
	uint64_t fixed = (uint64_t)(D * Sk + Sk * Dv) * 6 + (mask == 1 ? (uint64_t)Sk * 4 : 0) + 1024;

	return budget > fixed ? (budget - fixed) / per : 0;
}

uint64_t npu_attn_combine_rows(uint64_t budget, int64_t nk, int64_t Dv)
{
	/* Per row: every block's Y, max, sum and weight; the result, max, sum. */
	uint64_t per = (uint64_t)(nk * (Dv + 3) + Dv + 2) * 4;

	return budget > 1024 ? (budget - 1024) / per : 0;
}

int64_t npu_attn_key_block(uint64_t budget, int64_t D, int64_t Dv, int64_t Sk, int64_t Sq,
			   int mask)
{
	uint64_t want = Sq < 16 ? (uint64_t)Sq : 16;

	for (int64_t nk = 1; nk <= Sk; nk++) {
		int64_t bk = (Sk + nk - 1) / nk;

		if (nk > 1 && !npu_attn_combine_rows(budget, nk, Dv))
			return 0;
		if (npu_attn_rows(budget, D, Dv, bk, mask) >= want)
			return bk;
	}
	return 0;
}

/*
 * GPT-2's Where(causal, S, min) as S * m + f: the additive mask that
 * gives the same softmax, as a new constant; -1 if it is not one.
 */
static int additive_mask(npu_ir_graph *g, int mi, int fi)
{
	const npu_ir_tensor *m = &g->tensors[mi], *f = &g->tensors[fi];
	int64_t n = npu_ir_numel(m), nf = npu_ir_numel(f), dims[NPU_MAX_RANK];
	int rank = m->rank, t;
	float *a;

	if (!npu_ir_is_const(m) || !npu_ir_is_const(f) || m->dtype != NPU_DTYPE_FLOAT32 ||
	    f->dtype != NPU_DTYPE_FLOAT32 || (nf != 1 && nf != n) ||
	    (nf != 1 && f->rank != m->rank))
		return -1;
	for (int d = 0; nf != 1 && d < m->rank; d++)
		if (f->dims[d] != m->dims[d])
			return -1;
	a = malloc((size_t)n * 4 + 4);
	if (!a)
		return -1;
	for (int64_t i = 0; i < n; i++) {
		float mv = ((const float *)m->data)[i], fv = ((const float *)f->data)[nf == 1 ? 0 : i];

		/* Where m is 0, S + f rounds to f (|S| << ulp(f)): both give 0. */
		if (!(mv == 1.0f || (mv == 0.0f && fv <= -1e30f))) {
			free(a);
			return -1;
		}
		a[i] = fv;
	}
	memcpy(dims, m->dims, sizeof(dims));
	if (npu_ir_add_tensor(g, NULL, NPU_DTYPE_FLOAT32, rank, dims, &t) ||
	    npu_ir_set_const_owned(g, t, a, (size_t)n * 4)) {
		free(a);
		return -1;
	}
	return t;
}

struct block {
	int m1, mul, add, sm, m2;
	/* GPT-2's prefill: the Mul's scores are Add(S, pad) with a run-time
	 * padding mask pad; the block's mask is then pad + f (fuse_one). */
	int add0, pad;
	int pre[2];		/* a Mul or Div by a scalar of Q, of K^T, or -1 */
	int q, kt, v, mask;	/* tensors: the operands as the block reads them */
	float scale;
};

/*
 * Operand @t of Q K^T scaled by a constant scalar on its own (a Mul or
 * Div node only the product reads): the node, the unscaled tensor in
 * *@x, the factor folded into *@scale; -1 if not.
 */
static int pre_scale(const npu_ir_graph *g, int t, int *x, float *scale)
{
	int p = live_producer(g, t, "Mul"), cnt;
	const npu_ir_node *n;
	const npu_ir_tensor *c;
	float f;

	if (p < 0)
		p = live_producer(g, t, "Div");
	if (p < 0 || !private_to_block(g, t))
		return -1;
	n = &g->nodes[p];
	if (n->n_inputs != 2 || n->inputs[0] == n->inputs[1])
		return -1;
	for (int i = 0; i < 2; i++) {
		if (!strcmp(n->op, "Div") && i == 0)
			continue;	/* a scalar divided by the operand is no scale */
		c = &g->tensors[n->inputs[i]];
		if (!npu_ir_is_const(c) || c->dtype != NPU_DTYPE_FLOAT32 || npu_ir_numel(c) != 1 ||
		    npu_ir_const_floats(c, &f, 1, &cnt) || cnt != 1 || !isfinite(f) || f == 0.0f ||
		    g->tensors[n->inputs[1 - i]].rank != g->tensors[t].rank)
			continue;
		*x = n->inputs[1 - i];
		*scale *= strcmp(n->op, "Div") ? f : 1.0f / f;
		return p;
	}
	return -1;
}

/*
 * Add node @a0 as S + pad: S a MatMul's output that only @a0 reads, pad a
 * float32 tensor computed at run time (a padding mask).  Returns S, -1 if
 * @a0 is not that.
 */
static int padded_scores(const npu_ir_graph *g, int a0, int *pad)
{
	const npu_ir_node *n = &g->nodes[a0];

	if (n->n_inputs != 2)
		return -1;
	for (int i = 0; i < 2; i++) {
		int sc = n->inputs[i], p = n->inputs[1 - i];

		if (sc != p && live_producer(g, sc, "MatMul") >= 0 && private_to_block(g, sc) &&
		    !npu_ir_is_const(&g->tensors[p]) &&
		    g->tensors[p].dtype == NPU_DTYPE_FLOAT32 &&
		    g->tensors[p].rank == g->tensors[sc].rank) {
			*pad = p;
			return sc;
		}
	}
	return -1;
}

/* Match the block ending in MatMul @k; false if it is not one. */
static bool match(npu_ir_graph *g, int k, struct block *b)
{
	const npu_ir_node *m2 = &g->nodes[k], *sm;
	int s, x, r;
	int64_t axis;

	memset(b, 0, sizeof(*b));
	b->mul = b->add = b->mask = b->pre[0] = b->pre[1] = -1;
	b->add0 = b->pad = -1;
	b->m2 = k;
	if (m2->n_inputs != 2 || npu_ir_attr_find(m2, "npu_act") ||
	    npu_ir_attr_find(m2, NPU_ATTR_SCALE) || npu_ir_attr_find(m2, NPU_ATTR_ATTN))
		return false;
	b->sm = live_producer(g, m2->inputs[0], "Softmax");
	if (b->sm < 0 || !private_to_block(g, m2->inputs[0]))
		return false;
	sm = &g->nodes[b->sm];
	r = g->tensors[sm->outputs[0]].rank;
	if (npu_ir_attr_int(sm, "axis", sm->opset < 13 ? 1 : -1, &axis) ||
	    (axis != -1 && axis != r - 1))
		return false;
	x = sm->inputs[0];
	if (!private_to_block(g, x))
		return false;
	b->add = live_producer(g, x, "Add");
	s = x;
	if (b->add >= 0) {
		const npu_ir_node *add = &g->nodes[b->add];
		int mul;

		if (add->n_inputs != 2)
			return false;
		/* The scores side is a MatMul's or the Mul of a masked Where. */
		for (int i = 0; i < 2; i++) {
			int a = add->inputs[i], o = add->inputs[1 - i];

			if (live_producer(g, a, "MatMul") >= 0 && private_to_block(g, a)) {
				s = a;
				b->mask = o;
				break;
			}
			mul = live_producer(g, a, "Mul");
			if (mul >= 0 && private_to_block(g, a) && g->nodes[mul].n_inputs == 2) {
				for (int j = 0; j < 2; j++) {
					int sj = g->nodes[mul].inputs[j], pad = -1;

					if (!npu_ir_is_const(&g->tensors[g->nodes[mul].inputs[1 - j]]) ||
					    !npu_ir_is_const(&g->tensors[o]) || !private_to_block(g, sj))
						continue;
					if (live_producer(g, sj, "MatMul") < 0) {
						/* (S + pad) * m + f: S's own additive mask first. */
						int a0 = live_producer(g, sj, "Add");

						sj = a0 >= 0 ? padded_scores(g, a0, &pad) : -1;
						if (sj < 0)
							continue;
						b->add0 = a0;
						b->pad = pad;
					}
					b->mul = mul;
					s = sj;
					b->mask = o;	/* made additive on success */
				}
				if (b->mul >= 0)
					break;
			}
		}
		if (b->mask < 0 || g->tensors[b->mask].dtype != NPU_DTYPE_FLOAT32)
			return false;
	}
	b->m1 = live_producer(g, s, "MatMul");
	if (b->m1 < 0 || b->m1 == k || g->nodes[b->m1].n_inputs != 2 ||
	    npu_ir_attr_find(&g->nodes[b->m1], "npu_act") ||
	    (b->add < 0 && !private_to_block(g, s)))
		return false;
	if (npu_ir_attr_float(&g->nodes[b->m1], NPU_ATTR_SCALE, 1.0f, &b->scale) ||
	    !isfinite(b->scale))
		return false;
	b->q = g->nodes[b->m1].inputs[0];
	b->kt = g->nodes[b->m1].inputs[1];
	b->v = m2->inputs[1];
	if (b->q != b->kt) {
		b->pre[0] = pre_scale(g, b->q, &b->q, &b->scale);
		b->pre[1] = pre_scale(g, b->kt, &b->kt, &b->scale);
	}
	return g->tensors[b->q].dtype == NPU_DTYPE_FLOAT32 &&
	       g->tensors[b->kt].dtype == NPU_DTYPE_FLOAT32 &&
	       g->tensors[b->v].dtype == NPU_DTYPE_FLOAT32 &&
	       !npu_ir_is_const(&g->tensors[b->q]) && !npu_ir_is_const(&g->tensors[b->kt]) &&
	       !npu_ir_is_const(&g->tensors[b->v]) && g->tensors[b->q].rank >= 2 &&
	       g->tensors[b->kt].rank >= 2 && g->tensors[b->v].rank >= 2;
}

/* The mask seen as the scores' [..., Sq, Sk] (numpy broadcasting); false if not. */
static bool mask_view(const npu_ir_graph *g, int t, int rank, const int64_t *dims,
		      struct npu_lview *v)
{
	const npu_ir_tensor *m = &g->tensors[t];
	int lead = rank - m->rank;

	npu_lview_dense(g, t, v);
	if (lead < 0)
		return false;
	v->rank = rank;
	for (int d = rank - 1; d >= 0; d--) {
		int64_t md = d < lead ? 1 : m->dims[d - lead];
		int64_t ms = d < lead ? 0 : v->stride[d - lead];

		if (md != dims[d] && md != 1)
			return false;
		v->size[d] = dims[d];
		v->stride[d] = md == 1 ? 0 : ms;
		v->div[d] = 1;
	}
	/* The keys are the rows' elements: they must not repeat. */
	return v->stride[rank - 1] != 0 || dims[rank - 1] == 1;
}

/* Drop the layout nodes of @chain that nothing reads any more. */
static void drop_unused(npu_ir_graph *g, const int *chain, int n)
{
	bool again = true;

	while (again) {
		again = false;
		for (int i = 0; i < n; i++) {
			npu_ir_node *nd = &g->nodes[chain[i]];
			bool used = false;

			if (nd->dead)
				continue;
			for (int k = 0; k < nd->n_outputs; k++)
				if (nd->outputs[k] >= 0 &&
				    (npu_ir_is_graph_output(g, nd->outputs[k]) ||
				     npu_ir_count_uses(g, nd->outputs[k])))
					used = true;
			if (!used) {
				nd->dead = true;
				again = true;
			}
		}
	}
}

/*
 * The two inner dims walk with plain strides that a DMA walker's levels
 * take (int32 byte steps), and do not repeat elements.
 */
static bool plain_rows(const struct npu_lview *v)
{
	for (int d = v->rank - 2; d < v->rank; d++)
		if (v->div[d] != 1 || v->mod[d] || (v->size[d] > 1 && !v->stride[d]) ||
		    llabs(v->stride[d]) * 4 * v->size[d] >= INT32_MAX)
			return false;
	return true;
}

/*
 * (S + pad) * m + f as S + (pad + f'), f' the additive form of m and f in
 * *@mask: where m is 0 the softmax weight is 0 either way (f' <= -1e30;
 * pad + f' may round to -inf, which the fused softmax clamps), where m is
 * 1 it is S + pad.  A new Add node computes pad + f' at run time, once per
 * block, in the broadcast shape of the two; *@mask becomes its output, or
 * -1 if the shapes do not broadcast.
 */
static npu_status padded_mask(npu_ir_graph *g, const struct block *b, int *mask, int *node)
{
	const npu_ir_tensor *p = &g->tensors[b->pad], *f = &g->tensors[*mask];
	int64_t dims[NPU_MAX_RANK];
	int in[2] = { b->pad, *mask }, out, id;
	npu_status st;

	if (p->rank != f->rank) {
		*mask = -1;
		return NPU_OK;
	}
	for (int d = 0; d < p->rank; d++) {
		if (p->dims[d] != f->dims[d] && p->dims[d] != 1 && f->dims[d] != 1) {
			*mask = -1;
			return NPU_OK;
		}
		dims[d] = p->dims[d] > f->dims[d] ? p->dims[d] : f->dims[d];
	}
	if ((st = npu_ir_add_tensor(g, NULL, NPU_DTYPE_FLOAT32, p->rank, dims, &out)) ||
	    (st = npu_ir_add_node(g, "Add", g->nodes[b->mul].name, in, 2, &out, 1, &id)))
		return st;
	*mask = out;
	*node = id;
	return NPU_OK;
}

static npu_status fuse_one(npu_ir_graph *g, struct block *b, uint32_t hbsm, int *chain,
			   int *nchain)
{
	const npu_ir_tensor *y = &g->tensors[g->nodes[b->m2].outputs[0]];
	int rank = y->rank, n0 = *nchain, yt, mask = b->mask, *in, added = -1;
	int64_t sdims[NPU_MAX_RANK];
	struct npu_lview q, k, v, m, o;
	int64_t D, Dv, Sk, Sq;
	int mk = 0;
	char lbl[96];
	npu_status st;

	if (rank < 2 || g->tensors[g->nodes[b->m1].outputs[0]].rank != rank)
		return NPU_OK;
	memcpy(sdims, y->dims, sizeof(sdims));
	Sq = y->dims[rank - 2];
	Dv = y->dims[rank - 1];
	D = g->tensors[b->q].dims[g->tensors[b->q].rank - 1];
	Sk = g->tensors[b->kt].dims[g->tensors[b->kt].rank - 1];
	sdims[rank - 1] = Sk;
	npu_lview_trace(g, b->q, &q, chain, nchain, CHAIN_MAX);
	npu_lview_trace(g, b->kt, &k, chain, nchain, CHAIN_MAX);
	npu_lview_trace(g, b->v, &v, chain, nchain, CHAIN_MAX);
	if (!fit(&q, rank, sdims) || !fit(&k, rank, sdims) || !fit(&v, rank, sdims) ||
	    q.size[rank - 2] != Sq || q.size[rank - 1] != D || k.size[rank - 2] != D ||
	    k.size[rank - 1] != Sk || v.size[rank - 2] != Sk || v.size[rank - 1] != Dv ||
	    !plain_rows(&q) || !plain_rows(&k) || !plain_rows(&v))
		goto no;
	if (mask >= 0 && b->mul >= 0) {
		const npu_ir_node *mul = &g->nodes[b->mul];
		int mc = npu_ir_is_const(&g->tensors[mul->inputs[0]]) ? mul->inputs[0] :
			 mul->inputs[1];

		mask = additive_mask(g, mc, mask);
		if (mask < 0)
			goto no;
		if (b->pad >= 0 && (st = padded_mask(g, b, &mask, &added)))
			return st;
		if (mask < 0)
			goto no;
	}
	if (mask >= 0) {
		if (!mask_view(g, mask, rank, sdims, &m) ||
		    llabs(m.stride[rank - 2]) * 4 * Sq >= INT32_MAX ||
		    llabs(m.stride[rank - 1]) * 4 * Sk >= INT32_MAX)
			goto no;
		mk = m.stride[rank - 2] ? 2 : 1;
	}
	if (!npu_attn_key_block(hbsm, D, Dv, Sk, Sq, mk))
		goto no;
	npu_lview_trace_out(g, g->nodes[b->m2].outputs[0], &o, &yt, chain, nchain, CHAIN_MAX);
	if (llabs(o.stride[rank - 2]) * 4 >= INT32_MAX)
		goto no;
	/* Commit: the second MatMul is the block. */
	if ((st = put_view(g, b->m2, "npu_attn_q", &q)) || (st = put_view(g, b->m2, "npu_attn_k", &k)) ||
	    (st = put_view(g, b->m2, "npu_attn_v", &v)) || (st = put_view(g, b->m2, "npu_attn_o", &o)) ||
	    (mask >= 0 && (st = put_view(g, b->m2, "npu_attn_m", &m))) ||
	    (st = npu_ir_set_attr_float(&g->nodes[b->m2], "npu_attn_scale", b->scale)) ||
	    (st = npu_ir_set_attr_int(&g->nodes[b->m2], NPU_ATTR_ATTN, 1)))
		return st;
	in = realloc(g->nodes[b->m2].inputs, 4 * sizeof(int));
	if (!in)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	in[0] = q.t;
	in[1] = k.t;
	in[2] = v.t;
	in[3] = mask;
	g->nodes[b->m2].inputs = in;
	g->nodes[b->m2].n_inputs = mask >= 0 ? 4 : 3;
	if (yt != g->nodes[b->m2].outputs[0]) {
		g->tensors[g->nodes[b->m2].outputs[0]].producer = -1;
		g->nodes[g->tensors[yt].producer].outputs[0] = -1;
		g->nodes[g->tensors[yt].producer].dead = true;
		g->nodes[b->m2].outputs[0] = yt;
		g->tensors[yt].producer = b->m2;
	}
	g->nodes[b->sm].dead = true;
	g->nodes[b->m1].dead = true;
	if (b->add >= 0)
		g->nodes[b->add].dead = true;
	if (b->mul >= 0)
		g->nodes[b->mul].dead = true;
	if (b->add0 >= 0)
		g->nodes[b->add0].dead = true;
	for (int i = 0; i < 2; i++)
		if (b->pre[i] >= 0)
			g->nodes[b->pre[i]].dead = true;
	if (npu_debug_on(NPU_DEBUG_FUSE))
		npu_debug(NPU_DEBUG_FUSE,
			  "attention %s: Q K^T%s, softmax, x V in one tile group per head "
			  "(Sq %lld, Sk %lld, D %lld), %d layout nodes read through",
			  npu_ir_node_label(&g->nodes[b->m2], lbl, sizeof(lbl)),
			  mask >= 0 ? " + mask" : "", (long long)Sq, (long long)Sk, (long long)D,
			  *nchain - n0);
	return NPU_OK;
no:
	*nchain = n0;
	if (added >= 0)
		g->nodes[added].dead = true;	/* the pad + f' no block reads */
	return NPU_OK;
}

/* Append the @n node ids of @chain to the growing list *@all of *@nall. */
static npu_status append_nodes(int **all, int *nall, const int *chain, int n)
{
	int *a = realloc(*all, (size_t)(*nall + n) * sizeof(int));

	if (!a)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	*all = a;
	memcpy(a + *nall, chain, (size_t)n * sizeof(int));
	*nall += n;
	return NPU_OK;
}

/*
 * A plain float MatMul whose operand computed at run time comes through
 * layout nodes: the operand read through its walker view (NPU_ATTR_MM_A,
 * _B) instead, those nodes dropped when nothing else reads them.
 */
static npu_status matmul_views(npu_ir_graph *g, int k, int *chain, int *nchain)
{
	static const char *const attr[2] = { NPU_ATTR_MM_A, NPU_ATTR_MM_B };
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *y = npu_ir_output(g, n, 0);
	int64_t dims[NPU_MAX_RANK];
	npu_status st;

	/* A third input is a bias row (npu_fuse.c), read as it is. */
	if (n->n_inputs < 2 || n->n_inputs > 3 || !y || y->rank < 2 ||
	    y->dtype != NPU_DTYPE_FLOAT32 ||
	    npu_ir_attr_find(n, NPU_ATTR_ATTN))
		return NPU_OK;
	memcpy(dims, y->dims, sizeof(dims));
	for (int i = 0; i < 2; i++) {
		int t = g->nodes[k].inputs[i], n0 = *nchain;
		const npu_ir_tensor *x = &g->tensors[t];
		struct npu_lview v;
		bool moves = false;

		if (npu_ir_is_const(x) || x->dtype != NPU_DTYPE_FLOAT32 || x->rank < 2 ||
		    npu_ir_attr_find(&g->nodes[k], attr[i]))
			continue;
		npu_lview_trace(g, t, &v, chain, nchain, CHAIN_MAX);
		/* Reshapes alone share memory already: only real moves count. */
		for (int j = n0; j < *nchain; j++)
			moves |= !strcmp(g->nodes[chain[j]].op, "Transpose") ||
				 !strcmp(g->nodes[chain[j]].op, "Expand") ||
				 !strcmp(g->nodes[chain[j]].op, "Concat") ||
				 !strcmp(g->nodes[chain[j]].op, "Split");
		if (!moves || !fit(&v, y->rank, dims) || !plain_rows(&v) ||
		    v.size[y->rank - 2] != x->dims[x->rank - 2] ||
		    v.size[y->rank - 1] != x->dims[x->rank - 1]) {
			*nchain = n0;
			continue;
		}
		if ((st = put_view(g, k, attr[i], &v)))
			return st;
		g->nodes[k].inputs[i] = v.t;
		if (npu_debug_on(NPU_DEBUG_FUSE)) {
			char lbl[96];

			npu_debug(NPU_DEBUG_FUSE, "MatMul %s reads %s through %d layout nodes",
				  npu_ir_node_label(&g->nodes[k], lbl, sizeof(lbl)), i ? "B" : "A",
				  *nchain - n0);
		}
	}
	return NPU_OK;
}

npu_status npu_fuse_attention(npu_ir_graph *g, uint32_t hbsm)
{
	int *chain = malloc(CHAIN_MAX * sizeof(int)), *all = NULL, nall = 0;
	npu_status st = NPU_OK;

	if (!chain)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (int i = 0; i < g->n_nodes && !st; i++) {
		struct block b;
		int n = 0;

		if (g->nodes[i].dead || strcmp(g->nodes[i].op, "MatMul") || !match(g, i, &b))
			continue;
		st = fuse_one(g, &b, hbsm, chain, &n);
		if (!st && n)
			st = append_nodes(&all, &nall, chain, n);
	}
	/* Then the MatMuls left: their operands through walker views. */
	for (int i = 0; i < g->n_nodes && !st; i++) {
		int n = 0;

		if (g->nodes[i].dead || strcmp(g->nodes[i].op, "MatMul"))
			continue;
		st = matmul_views(g, i, chain, &n);
		if (!st && n)
			st = append_nodes(&all, &nall, chain, n);
	}
	if (!st)
		drop_unused(g, all, nall);
	free(all);
	free(chain);
	return st;
}
