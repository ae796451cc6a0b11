// SPDX-License-Identifier: MIT
/*
 * Fused attention (fuse_attn.c, lower_attn.c): attention blocks built as
 * exporters write them (heads split by Reshape + Transpose, K^T by a
 * Transpose, a scale, an additive or Where mask, Softmax, times V, heads
 * merged), on the emulator against a C reference of the same arithmetic
 * (Q, K, V and the probabilities rounded to bf16, sums and softmax in
 * float).  Each case also checks what the fusion did: no Softmax or
 * Transpose left, one node marked as the block.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_lower.h"
#include "compile/npu_ops.h"
#include "compile/npu_view.h"
#include "ir_build.h"
#include "npu_test.h"

/* MASK_PADDING_WHERE: GPT-2's prefill, the padding mask added, then the
 * causal Where on the sum. */
enum mask_kind { MASK_NONE, MASK_PADDING, MASK_CAUSAL_ADD, MASK_CAUSAL_WHERE, MASK_PADDING_WHERE };
/* How K^T is made: a Transpose straight from [B, S, H, D], or split heads
 * then a Transpose of the last two axes (K/V heads repeated by Expand, or
 * by Tile). */
enum kt_kind { KT_DIRECT, KT_TWO_TRANSPOSES, KT_TILE_KV };

struct cfg {
	int B, S, H, KV, D;
	enum mask_kind mask;
	enum kt_kind kt;
	bool expect_fused;
	bool scale_q;		/* Q * d^-1/2 before the product instead of a Div after */
};

static float bf(float f)
{
	return npu_ir_bf16_to_f32(npu_ir_f32_to_bf16(f));
}

static float *randf(int64_t n, unsigned seed)
{
	float *v = malloc((size_t)n * sizeof(float));

	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
	}
	return v;
}

static int shape_const(npu_ir_graph *g, const char *name, int n, const int64_t *v)
{
	return irb_const(g, name, NPU_DTYPE_INT64, 1, (int64_t[]){ n }, v);
}

/* [B, S, heads * D] -> [B, heads, S, D]. */
static int split_heads(npu_ir_graph *g, const char *name, int x, const struct cfg *c, int heads)
{
	char n1[32];
	int r, t, sh;
	npu_ir_node *nd;

	snprintf(n1, sizeof(n1), "%s_shape", name);
	sh = shape_const(g, n1, 4, (int64_t[]){ c->B, c->S, heads, c->D });
	r = irb_tensor(g, NULL, NPU_DTYPE_FLOAT32, -1, NULL);
	t = irb_tensor(g, NULL, NPU_DTYPE_FLOAT32, -1, NULL);
	irb_node(g, "Reshape", (int[]){ x, sh }, 2, &r, 1);
	nd = irb_node(g, "Transpose", &r, 1, &t, 1);
	ck_assert_int_eq(npu_ir_set_attr_ints(nd, "perm", (int64_t[]){ 0, 2, 1, 3 }, 4), NPU_OK);
	return t;
}

/* [B, KV, S, D] -> [B, KV * G, S, D] as Hugging Face's repeat_kv exports it. */
static int repeat_kv_expand(npu_ir_graph *g, int x, const struct cfg *c)
{
	int G = c->H / c->KV, ax = shape_const(g, NULL, 1, (int64_t[]){ 2 });
	int sh = shape_const(g, NULL, 4, (int64_t[]){ c->B, c->H, c->S, c->D });
	int u = irb_tensor(g, NULL, NPU_DTYPE_FLOAT32, -1, NULL);
	int e = irb_tensor(g, NULL, NPU_DTYPE_FLOAT32, -1, NULL);
	int y = irb_tensor(g, NULL, NPU_DTYPE_FLOAT32, -1, NULL);
	int es = shape_const(g, NULL, 5, (int64_t[]){ c->B, c->KV, G, c->S, c->D });

	irb_node(g, "Unsqueeze", (int[]){ x, ax }, 2, &u, 1);
	irb_node(g, "Expand", (int[]){ u, es }, 2, &e, 1);
	irb_node(g, "Reshape", (int[]){ e, sh }, 2, &y, 1);
	return y;
}

/* ... or by Tile: every KV head, G times over. */
static int repeat_kv(npu_ir_graph *g, int x, const struct cfg *c)
{
	int r, y;

	if (c->kt != KT_TILE_KV)
		return repeat_kv_expand(g, x, c);
	r = shape_const(g, NULL, 4, (int64_t[]){ 1, c->H / c->KV, 1, 1 });
	y = irb_tensor(g, NULL, NPU_DTYPE_FLOAT32, -1, NULL);
	irb_node(g, "Tile", (int[]){ x, r }, 2, &y, 1);
	return y;
}

/* Reference: y[b][s][h * D + d] (heads merged), from the graph's inputs. */
static void reference(const struct cfg *c, const float *q, const float *k, const float *v,
		      const float *pad, float *y)
{
	int G = c->H / c->KV, S = c->S, D = c->D;
	float *sc = malloc((size_t)S * 4), scale = 1.0f / sqrtf((float)D);

	/* Expand repeats each KV head G times in a row, Tile all of them G times. */
#define KVH(h) (c->kt == KT_TILE_KV ? (h) % c->KV : (h) / G)

	for (int b = 0; b < c->B; b++)
		for (int h = 0; h < c->H; h++)
			for (int i = 0; i < S; i++) {
				float mx = -INFINITY, sum = 0.0f;

				for (int j = 0; j < S; j++) {
					float acc = 0.0f;

					for (int d = 0; d < D; d++)
						acc += bf(q[((b * S + i) * c->H + h) * D + d]) *
						       bf(k[((b * S + j) * c->KV + KVH(h)) * D + d]);
					acc *= scale;
					if (c->mask == MASK_PADDING || c->mask == MASK_PADDING_WHERE)
						acc += pad[b * S + j];
					if (c->mask != MASK_NONE && c->mask != MASK_PADDING && j > i)
						acc = c->mask == MASK_CAUSAL_ADD ? acc - 3.4028235e38f :
						      -3.4028235e38f;
					sc[j] = acc;
					mx = fmaxf(mx, acc);
				}
				for (int j = 0; j < S; j++) {
					sc[j] = expf(sc[j] - mx);
					sum += sc[j];
				}
				for (int d = 0; d < D; d++) {
					float acc = 0.0f;

					for (int j = 0; j < S; j++)
						acc += bf(sc[j] / sum) *
						       bf(v[((b * S + j) * c->KV + KVH(h)) * D + d]);
					y[((b * S + i) * c->H + h) * D + d] = acc;
				}
			}
	free(sc);
#undef KVH
}

static void check(const struct cfg *c)
{
	npu_ir_graph *g = irb_graph(13);
	int S = c->S, HD = c->H * c->D, KD = c->KV * c->D;
	int xq = irb_tensor(g, "q", NPU_DTYPE_FLOAT32, 3, (int64_t[]){ c->B, S, HD });
	int xk = irb_tensor(g, "k", NPU_DTYPE_FLOAT32, 3, (int64_t[]){ c->B, S, KD });
	int xv = irb_tensor(g, "v", NPU_DTYPE_FLOAT32, 3, (int64_t[]){ c->B, S, KD });
	int pad = -1, q, k, v, kt, s, sd, sm, p, ot, y, osh, ins[4], nin = 3;
	float dv = sqrtf((float)c->D);
	float *qv = randf((int64_t)c->B * S * HD, 1), *kv = randf((int64_t)c->B * S * KD, 2);
	float *vv = randf((int64_t)c->B * S * KD, 3), *padv = NULL;
	float *yv = calloc((size_t)c->B * S * HD, 4), *ref = calloc((size_t)c->B * S * HD, 4);
	bool fused = false, left = false;
	struct npu_cmodel *cm;
	npu_ir_node *nd;
	npu_status st;

	q = split_heads(g, "q", xq, c, c->H);
	v = split_heads(g, "v", xv, c, c->KV);
	kt = irb_tensor(g, NULL, NPU_DTYPE_FLOAT32, -1, NULL);
	if (c->kt == KT_DIRECT) {
		/* GPT-2: [B, S, H, D] straight to K^T [B, H, D, S]. */
		int sh = shape_const(g, "kt_shape", 4, (int64_t[]){ c->B, S, c->KV, c->D });

		k = irb_tensor(g, NULL, NPU_DTYPE_FLOAT32, -1, NULL);
		irb_node(g, "Reshape", (int[]){ xk, sh }, 2, &k, 1);
		nd = irb_node(g, "Transpose", &k, 1, &kt, 1);
		ck_assert_int_eq(npu_ir_set_attr_ints(nd, "perm", (int64_t[]){ 0, 2, 3, 1 }, 4),
				 NPU_OK);
	} else {
		k = split_heads(g, "k", xk, c, c->KV);
		if (c->KV != c->H)
			k = repeat_kv(g, k, c);
		nd = irb_node(g, "Transpose", &k, 1, &kt, 1);
		ck_assert_int_eq(npu_ir_set_attr_ints(nd, "perm", (int64_t[]){ 0, 1, 3, 2 }, 4),
				 NPU_OK);
	}
	if (c->KV != c->H)
		v = repeat_kv(g, v, c);
	if (c->scale_q) {
		float r = 1.0f / dv;
		int qs = irb_tensor(g, NULL, NPU_DTYPE_FLOAT32, -1, NULL);

		irb_node(g, "Mul", (int[]){ q, irb_const(g, "rsqrt_d", NPU_DTYPE_FLOAT32, 0, NULL, &r) },
			 2, &qs, 1);
		q = qs;
	}
	s = irb_tensor(g, NULL, NPU_DTYPE_FLOAT32, -1, NULL);
	irb_node(g, "MatMul", (int[]){ q, kt }, 2, &s, 1);
	sd = s;
	if (!c->scale_q) {
		sd = irb_tensor(g, NULL, NPU_DTYPE_FLOAT32, -1, NULL);
		irb_node(g, "Div",
			 (int[]){ s, irb_const(g, "sqrt_d", NPU_DTYPE_FLOAT32, 0, NULL, &dv) }, 2,
			 &sd, 1);
	}
	if (c->mask == MASK_PADDING || c->mask == MASK_PADDING_WHERE) {
		int m = irb_tensor(g, NULL, NPU_DTYPE_FLOAT32, -1, NULL);

		pad = irb_tensor(g, "pad", NPU_DTYPE_FLOAT32, 4, (int64_t[]){ c->B, 1, 1, S });
		padv = malloc((size_t)c->B * S * 4);
		for (int i = 0; i < c->B * S; i++)
			padv[i] = (i * 7) % 5 == 0 ? -10000.0f : 0.0f;
		irb_node(g, "Add", (int[]){ sd, pad }, 2, &m, 1);
		sd = m;
	}
	if (c->mask != MASK_NONE && c->mask != MASK_PADDING) {
		int m = irb_tensor(g, NULL, NPU_DTYPE_FLOAT32, -1, NULL), cm_t;
		float *tab = malloc((size_t)S * S * 4);
		bool *keep = malloc((size_t)S * S);
		float lowest = -3.4028235e38f;

		for (int i = 0; i < S; i++)
			for (int j = 0; j < S; j++) {
				tab[i * S + j] = j > i ? lowest : 0.0f;
				keep[i * S + j] = j <= i;
			}
		if (c->mask == MASK_CAUSAL_ADD) {
			cm_t = irb_const(g, "causal", NPU_DTYPE_FLOAT32, 4, (int64_t[]){ 1, 1, S, S }, tab);
			irb_node(g, "Add", (int[]){ sd, cm_t }, 2, &m, 1);
		} else {
			cm_t = irb_const(g, "causal", NPU_DTYPE_BOOL, 4, (int64_t[]){ 1, 1, S, S }, keep);
			irb_node(g, "Where",
				 (int[]){ cm_t, sd,
					  irb_const(g, "lowest", NPU_DTYPE_FLOAT32, 0, NULL, &lowest) },
				 3, &m, 1);
		}
		free(tab);
		free(keep);
		sd = m;
	}
	sm = irb_tensor(g, NULL, NPU_DTYPE_FLOAT32, -1, NULL);
	nd = irb_node(g, "Softmax", &sd, 1, &sm, 1);
	ck_assert_int_eq(npu_ir_set_attr_int(nd, "axis", -1), NPU_OK);
	p = irb_tensor(g, NULL, NPU_DTYPE_FLOAT32, -1, NULL);
	irb_node(g, "MatMul", (int[]){ sm, v }, 2, &p, 1);
	ot = irb_tensor(g, NULL, NPU_DTYPE_FLOAT32, -1, NULL);
	nd = irb_node(g, "Transpose", &p, 1, &ot, 1);
	ck_assert_int_eq(npu_ir_set_attr_ints(nd, "perm", (int64_t[]){ 0, 2, 1, 3 }, 4), NPU_OK);
	osh = shape_const(g, "o_shape", 3, (int64_t[]){ c->B, S, HD });
	y = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);
	irb_node(g, "Reshape", (int[]){ ot, osh }, 2, &y, 1);
	ins[0] = xq;
	ins[1] = xk;
	ins[2] = xv;
	if (pad >= 0)
		ins[nin++] = pad;
	irb_io(g, ins, nin, &y, 1);

	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	st = irb_compile(g, "emu", &cm);
	ck_assert_msg(st == NPU_OK, "compile: %s", npu_last_error());
	for (int i = 0; i < g->n_nodes; i++) {
		const npu_ir_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		fused |= npu_ir_attr_find(n, NPU_ATTR_ATTN) != NULL;
		left |= !strcmp(n->op, "Softmax") || !strcmp(n->op, "Transpose") ||
			!strcmp(n->op, "Concat") || !strcmp(n->op, "Expand") ||
			!strcmp(n->op, "Tile") ||
			!strcmp(n->op, "Mul") || !strcmp(n->op, "Div");
	}
	ck_assert_msg(fused == c->expect_fused, "fused attention: %d, expected %d", fused,
		      c->expect_fused);
	if (c->expect_fused)
		ck_assert_msg(!left, "a Softmax or layout node was left beside the fused block");
	st = irb_exec(cm, "emu", (void *[]){ qv, kv, vv, padv }, (void *[]){ yv });
	ck_assert_msg(st == NPU_OK, "run: %s", npu_last_error());
	reference(c, qv, kv, vv, padv, ref);
	/*
	 * With tiled keys the probabilities are rounded to bf16 before they
	 * are normalized, not after: each weight's rounding (2^-9 of it) then
	 * moves the result by up to 2^-8 of |V| (1) more.
	 */
	for (int i = 0; i < c->B * S * HD; i++)
		ck_assert_msg(fabsf(yv[i] - ref[i]) <= (c->S >= 768 ? 6e-3f : 2e-3f),
			      "element %d: %g, expected %g", i, yv[i], ref[i]);
	free(qv);
	free(kv);
	free(vv);
	free(padv);
	free(yv);
	free(ref);
	npu_ir_graph_free(g);
}

START_TEST(no_mask)
{
	check(&(struct cfg){ 1, 16, 4, 4, 16, MASK_NONE, KT_TWO_TRANSPOSES, true, false });
}
END_TEST

START_TEST(padding_mask_batch)
{
	check(&(struct cfg){ 2, 16, 4, 4, 16, MASK_PADDING, KT_TWO_TRANSPOSES, true, false });
}
END_TEST

START_TEST(causal_add)
{
	check(&(struct cfg){ 1, 24, 2, 2, 8, MASK_CAUSAL_ADD, KT_TWO_TRANSPOSES, true, false });
}
END_TEST

START_TEST(causal_where)
{
	check(&(struct cfg){ 2, 16, 4, 4, 16, MASK_CAUSAL_WHERE, KT_DIRECT, true, false });
}
END_TEST

/* GPT-2's prefill: (S + pad) then Where(causal): one block, the mask pad +
 * the causal table computed once (fuse_attn.c padded_mask). */
START_TEST(padding_then_causal_where)
{
	check(&(struct cfg){ 2, 16, 4, 4, 16, MASK_PADDING_WHERE, KT_DIRECT, true, false });
}
END_TEST

START_TEST(grouped_query)
{
	check(&(struct cfg){ 1, 16, 4, 2, 16, MASK_CAUSAL_ADD, KT_TWO_TRANSPOSES, true, false });
}
END_TEST

/* GQA with the K/V heads repeated by Tile: head h reads KV head h % KV. */
START_TEST(grouped_query_tile)
{
	check(&(struct cfg){ 2, 16, 6, 2, 8, MASK_PADDING, KT_TILE_KV, true, false });
}
END_TEST

/* The scale on Q before the product, K^T straight from [B, S, H, D]. */
START_TEST(scale_on_q)
{
	check(&(struct cfg){ 1, 16, 2, 2, 16, MASK_PADDING, KT_DIRECT, true, true });
}
END_TEST

/* Many query blocks per head: 512 queries, a padding mask. */
START_TEST(long_sequence)
{
	check(&(struct cfg){ 1, 512, 2, 2, 32, MASK_PADDING, KT_TWO_TRANSPOSES, true, false });
}
END_TEST

/* K and V of one head beyond a tile's HBSM: the keys tiled (online softmax). */
START_TEST(keys_tiled)
{
	check(&(struct cfg){ 1, 1024, 1, 1, 128, MASK_NONE, KT_TWO_TRANSPOSES, true, false });
}
END_TEST

/* Tiled keys with a causal mask: whole key blocks masked for early rows. */
START_TEST(keys_tiled_causal)
{
	check(&(struct cfg){ 1, 768, 2, 1, 128, MASK_CAUSAL_WHERE, KT_TWO_TRANSPOSES, true, false });
}
END_TEST

/*
 * Cross attention of rank 3 (batch and heads one axis): Sq != Sk, Dv != D,
 * K^T by Transpose(0, 2, 1), no mask, no scale, Y written as it is.  With
 * @expose the probabilities are a graph output too: nothing fuses, but the
 * first MatMul still reads K^T through the Transpose (a walker view).
 */
static void cross(bool expose)
{
	enum { BH = 3, SQ = 10, SK = 24, DQ = 8, DV = 12 };
	npu_ir_graph *g = irb_graph(13);
	int q = irb_tensor(g, "q", NPU_DTYPE_FLOAT32, 3, (int64_t[]){ BH, SQ, DQ });
	int k = irb_tensor(g, "k", NPU_DTYPE_FLOAT32, 3, (int64_t[]){ BH, SK, DQ });
	int v = irb_tensor(g, "v", NPU_DTYPE_FLOAT32, 3, (int64_t[]){ BH, SK, DV });
	int kt = irb_tensor(g, NULL, NPU_DTYPE_FLOAT32, -1, NULL);
	int sc = irb_tensor(g, NULL, NPU_DTYPE_FLOAT32, -1, NULL);
	int p = irb_tensor(g, NULL, NPU_DTYPE_FLOAT32, -1, NULL);
	int y = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);
	float *qv = randf(BH * SQ * DQ, 4), *kv = randf(BH * SK * DQ, 5), *vv = randf(BH * SK * DV, 6);
	float yv[BH * SQ * DV], pv[BH * SQ * SK], e[SK];
	struct npu_cmodel *cm;
	npu_ir_node *nd;
	bool fused = false;

	nd = irb_node(g, "Transpose", &k, 1, &kt, 1);
	ck_assert_int_eq(npu_ir_set_attr_ints(nd, "perm", (int64_t[]){ 0, 2, 1 }, 3), NPU_OK);
	irb_node(g, "MatMul", (int[]){ q, kt }, 2, &sc, 1);
	nd = irb_node(g, "Softmax", &sc, 1, &p, 1);
	ck_assert_int_eq(npu_ir_set_attr_int(nd, "axis", 2), NPU_OK);
	irb_node(g, "MatMul", (int[]){ p, v }, 2, &y, 1);
	irb_io(g, (int[]){ q, k, v }, 3, (int[]){ y, p }, expose ? 2 : 1);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_msg(irb_compile(g, "emu", &cm) == NPU_OK, "compile: %s", npu_last_error());
	for (int i = 0; i < g->n_nodes; i++) {
		fused |= !g->nodes[i].dead && npu_ir_attr_find(&g->nodes[i], NPU_ATTR_ATTN);
		/* Unfused, the first MatMul reads K^T through the Transpose. */
		ck_assert(g->nodes[i].dead || strcmp(g->nodes[i].op, "Transpose"));
	}
	ck_assert_int_eq(fused, !expose);
	ck_assert_msg(irb_exec(cm, "emu", (void *[]){ qv, kv, vv }, (void *[]){ yv, pv }) ==
		      NPU_OK, "run: %s", npu_last_error());
	for (int b = 0; b < BH; b++)
		for (int i = 0; i < SQ; i++) {
			float mx = -INFINITY, sum = 0.0f;

			for (int j = 0; j < SK; j++) {
				e[j] = 0.0f;
				for (int d = 0; d < DQ; d++)
					e[j] += bf(qv[(b * SQ + i) * DQ + d]) * bf(kv[(b * SK + j) * DQ + d]);
				mx = fmaxf(mx, e[j]);
			}
			for (int j = 0; j < SK; j++) {
				e[j] = expf(e[j] - mx);
				sum += e[j];
			}
			for (int d = 0; d < DV; d++) {
				float acc = 0.0f;

				for (int j = 0; j < SK; j++)
					acc += bf(e[j] / sum) * bf(vv[(b * SK + j) * DV + d]);
				ck_assert_msg(fabsf(yv[(b * SQ + i) * DV + d] - acc) <= 2e-3f,
					      "(%d, %d, %d): %g, expected %g", b, i, d,
					      yv[(b * SQ + i) * DV + d], acc);
			}
		}
	free(qv);
	free(kv);
	free(vv);
	npu_ir_graph_free(g);
}

START_TEST(cross_rank3)
{
	cross(false);
}
END_TEST

START_TEST(probabilities_visible_unfused)
{
	cross(true);
}
END_TEST

/*
 * A plain MatMul of two run-time operands that come through Transposes
 * ([B, S, H, D] to [B, H, S, D] and to [B, H, D, S]): both read through
 * walker views, no Transpose step left.
 */
START_TEST(matmul_through_transposes)
{
	enum { B = 2, SA = 5, SB = 6, H = 3, D = 4 };
	npu_ir_graph *g = irb_graph(13);
	int a = irb_tensor(g, "a", NPU_DTYPE_FLOAT32, 4, (int64_t[]){ B, SA, H, D });
	int b = irb_tensor(g, "b", NPU_DTYPE_FLOAT32, 4, (int64_t[]){ B, SB, H, D });
	int at = irb_tensor(g, NULL, NPU_DTYPE_FLOAT32, -1, NULL);
	int bt = irb_tensor(g, NULL, NPU_DTYPE_FLOAT32, -1, NULL);
	int y = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);
	float *av = randf(B * SA * H * D, 7), *bv = randf(B * SB * H * D, 8), yv[B * H * SA * SB];
	struct npu_cmodel *cm;
	npu_ir_node *nd;

	nd = irb_node(g, "Transpose", &a, 1, &at, 1);
	ck_assert_int_eq(npu_ir_set_attr_ints(nd, "perm", (int64_t[]){ 0, 2, 1, 3 }, 4), NPU_OK);
	nd = irb_node(g, "Transpose", &b, 1, &bt, 1);
	ck_assert_int_eq(npu_ir_set_attr_ints(nd, "perm", (int64_t[]){ 0, 2, 3, 1 }, 4), NPU_OK);
	irb_node(g, "MatMul", (int[]){ at, bt }, 2, &y, 1);
	irb_io(g, (int[]){ a, b }, 2, &y, 1);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_msg(irb_compile(g, "emu", &cm) == NPU_OK, "compile: %s", npu_last_error());
	for (int i = 0; i < g->n_nodes; i++)
		ck_assert(g->nodes[i].dead || strcmp(g->nodes[i].op, "Transpose"));
	ck_assert_msg(irb_exec(cm, "emu", (void *[]){ av, bv }, (void *[]){ yv }) == NPU_OK,
		      "run: %s", npu_last_error());
	for (int n = 0; n < B; n++)
		for (int h = 0; h < H; h++)
			for (int i = 0; i < SA; i++)
				for (int j = 0; j < SB; j++) {
					float acc = 0.0f, got = yv[((n * H + h) * SA + i) * SB + j];

					for (int d = 0; d < D; d++)
						acc += bf(av[((n * SA + i) * H + h) * D + d]) *
						       bf(bv[((n * SB + j) * H + h) * D + d]);
					ck_assert_msg(fabsf(got - acc) <= 1e-4f, "(%d %d %d %d): %g, expected %g",
						      n, h, i, j, got, acc);
				}
	free(av);
	free(bv);
	npu_ir_graph_free(g);
}
END_TEST

/* A dense view of @rank dims @dims. */
static struct npu_lview dense(int rank, const int64_t *dims)
{
	struct npu_lview v = { .rank = rank };
	int64_t st = 1;

	for (int d = rank - 1; d >= 0; d--) {
		v.size[d] = dims[d];
		v.stride[d] = st;
		v.div[d] = 1;
		st *= dims[d];
	}
	return v;
}

/* The view algebra against index arithmetic done by hand. */
START_TEST(views)
{
	struct npu_lview v = dense(4, (int64_t[]){ 2, 5, 3, 4 });	/* [B, S, H, D] */
	int64_t idx[4];

	/* [B, H, S, D] and back to [B, S, H*D]: the same elements. */
	ck_assert(npu_lview_transpose(&v, (int64_t[]){ 0, 2, 1, 3 }));
	for (int64_t h = 0; h < 3; h++)
		for (int64_t s = 0; s < 5; s++) {
			memcpy(idx, (int64_t[]){ 1, h, s, 2 }, sizeof(idx));
			ck_assert_int_eq(npu_lview_at(&v, idx), ((1 * 5 + s) * 3 + h) * 4 + 2);
		}
	ck_assert(npu_lview_transpose(&v, (int64_t[]){ 0, 2, 1, 3 }));
	ck_assert(npu_lview_reshape(&v, 3, (int64_t[]){ 2, 5, 12 }));
	ck_assert_int_eq(v.stride[2], 1);
	ck_assert_int_eq(v.stride[1], 12);
	/* Transposed dims do not merge into one stride pattern. */
	v = dense(2, (int64_t[]){ 2, 3 });
	ck_assert(npu_lview_transpose(&v, (int64_t[]){ 1, 0 }));
	ck_assert(!npu_lview_reshape(&v, 1, (int64_t[]){ 6 }));
	/* GQA: [B, KV, 1, S, D] repeated G = 3 times, merged: head h reads h / 3. */
	v = dense(5, (int64_t[]){ 1, 2, 1, 4, 8 });
	v.size[2] = 3;
	v.stride[2] = 0;
	ck_assert(npu_lview_reshape(&v, 4, (int64_t[]){ 1, 6, 4, 8 }));
	ck_assert(!npu_lview_injective(&v));
	for (int64_t h = 0; h < 6; h++) {
		memcpy(idx, (int64_t[]){ 0, h, 3, 5 }, sizeof(idx));
		ck_assert_int_eq(npu_lview_at(&v, idx), (h / 3 * 4 + 3) * 8 + 5);
	}
	/* ... and split again: [1, 2, 3, 4, 8] repeats the middle axis. */
	ck_assert(npu_lview_reshape(&v, 5, (int64_t[]){ 1, 2, 3, 4, 8 }));
	ck_assert_int_eq(v.stride[2], 0);
	ck_assert_int_eq(v.stride[1], 32);
	/* Tile: [1, 2, 4, 8] repeated 3 times along axis 1, head h reads h % 2. */
	v = dense(5, (int64_t[]){ 1, 1, 2, 4, 8 });
	v.size[1] = 3;
	v.stride[1] = 0;
	ck_assert(npu_lview_reshape(&v, 4, (int64_t[]){ 1, 6, 4, 8 }));
	for (int64_t h = 0; h < 6; h++) {
		memcpy(idx, (int64_t[]){ 0, h, 1, 7 }, sizeof(idx));
		ck_assert_int_eq(npu_lview_at(&v, idx), (h % 2 * 4 + 1) * 8 + 7);
	}
	/* A repeated dim [6 (i / 3)] splits along the repeat, [2][3], not across it. */
	v = dense(1, (int64_t[]){ 2 });
	v.size[0] = 6;
	v.div[0] = 3;
	ck_assert(npu_lview_reshape(&v, 2, (int64_t[]){ 2, 3 }));
	for (int64_t a = 0; a < 2; a++)
		for (int64_t b = 0; b < 3; b++) {
			memcpy(idx, (int64_t[]){ a, b }, 2 * sizeof(int64_t));
			ck_assert_int_eq(npu_lview_at(&v, idx), (a * 3 + b) / 3);
		}
	v = dense(1, (int64_t[]){ 2 });
	v.size[0] = 6;
	v.div[0] = 3;
	ck_assert(!npu_lview_reshape(&v, 2, (int64_t[]){ 3, 2 }));
}
END_TEST

static Suite *attention_suite(void)
{
	Suite *s = suite_create("npu_attention");
	TCase *tc = tcase_create("fused");

	tcase_add_test(tc, views);
	tcase_add_test(tc, matmul_through_transposes);
	tcase_add_test(tc, no_mask);
	tcase_add_test(tc, cross_rank3);
	tcase_add_test(tc, probabilities_visible_unfused);
	tcase_add_test(tc, padding_mask_batch);
	tcase_add_test(tc, causal_add);
	tcase_add_test(tc, causal_where);
	tcase_add_test(tc, padding_then_causal_where);
	tcase_add_test(tc, grouped_query);
	tcase_add_test(tc, grouped_query_tile);
	tcase_add_test(tc, scale_on_q);
	tcase_add_test(tc, long_sequence);
	tcase_add_test(tc, keys_tiled);
	tcase_add_test(tc, keys_tiled_causal);
	tcase_set_timeout(tc, 300);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(attention_suite)
