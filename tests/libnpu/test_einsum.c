// SPDX-License-Identifier: MIT
/*
 * Einsum (compile/rewrite_einsum.c): each equation is compiled with its
 * operands given at run time and run on the emulator, against a C
 * reference that loops over every assignment of the labels of the same
 * equation written out in plain letters (the ellipsis, the implicit
 * output and the diagonal by hand), so the reference shares nothing with
 * the parser.  Products through a MatMul are bf16 with fp32 sums: the
 * tolerance is 2^-7 of the sum of the absolute products.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_compile.h"
#include "compile/npu_ops.h"
#include "compile/npu_rewrite.h"
#include "ir/npu_einsum.h"
#include "ir_build.h"
#include "npu_test.h"
#include "onnx_build.h"

static float *randf(int64_t n, unsigned seed)
{
	float *v = malloc((size_t)(n ? n : 1) * sizeof(float));

	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
	}
	return v;
}

static int count_op(const npu_ir_graph *g, const char *op)
{
	int c = 0;

	for (int i = 0; i < g->n_nodes; i++)
		c += !g->nodes[i].dead && !strcmp(g->nodes[i].op, op);
	return c;
}

/*
 * Transposes left, plus those the compiler folded into a MatMul's operand
 * view (fuse_attn.c marks the MatMul "npu_mm_a"/"npu_mm_b").
 */
static int count_transposes(const npu_ir_graph *g)
{
	int c = count_op(g, "Transpose");

	for (int i = 0; i < g->n_nodes; i++)
		if (!g->nodes[i].dead && !strcmp(g->nodes[i].op, "MatMul"))
			c += !!npu_ir_attr_find(&g->nodes[i], "npu_mm_a") +
			     !!npu_ir_attr_find(&g->nodes[i], "npu_mm_b");
	return c;
}

static int64_t numel(int r, const int64_t *d)
{
	int64_t n = 1;

	for (int i = 0; i < r; i++)
		n *= d[i];
	return n;
}

/*
 * The reference: @ref "ab,bc->ac" (letters only, an explicit output) over
 * operands of dims @d[i]; a label's size is its largest dim (size 1
 * broadcasts).  @y and @mag get the sums and the sums of |products|.
 */
static void reference(const char *ref, int nin, const int *r, const int64_t *const *d,
		      float *const *x, double *y, double *mag)
{
	char term[3][NPU_MAX_RANK + 1];
	int nt[3] = { 0, 0, 0 }, t = 0, labels[26], nl = 0;
	int64_t size[26] = { 0 }, idx[26], yn = 1;

	for (const char *p = ref; *p; p++) {
		if (*p == ',' || *p == '-') {
			t++;
			p += *p == '-';
			continue;
		}
		term[t][nt[t]++] = *p;
	}
	ck_assert_int_eq(t, nin);
	for (int i = 0; i < nin; i++)
		for (int a = 0; a < r[i]; a++) {
			int l = term[i][a] - 'a';

			if (d[i][a] > size[l])
				size[l] = d[i][a];
		}
	for (int l = 0; l < 26; l++)
		if (size[l])
			labels[nl++] = l;
	for (int a = 0; a < nt[nin]; a++)
		yn *= size[term[nin][a] - 'a'];
	memset(y, 0, (size_t)yn * sizeof(*y));
	memset(mag, 0, (size_t)yn * sizeof(*mag));
	memset(idx, 0, sizeof(idx));
	for (;;) {
		double prod = 1.0;
		int64_t off = 0;

		for (int i = 0; i < nin; i++) {
			int64_t o = 0;

			for (int a = 0; a < r[i]; a++)
				o = o * d[i][a] + (d[i][a] == 1 ? 0 : idx[term[i][a] - 'a']);
			prod *= x[i][o];
		}
		for (int a = 0; a < nt[nin]; a++) {
			int l = term[nin][a] - 'a';

			off = off * size[l] + idx[l];
		}
		y[off] += prod;
		mag[off] += fabs(prod);
		/* the next assignment */
		{
			int j = nl - 1;

			while (j >= 0 && ++idx[labels[j]] == size[labels[j]])
				idx[labels[j--]] = 0;
			if (j < 0)
				break;
		}
	}
}

/*
 * Einsum @eq of run-time operands of dims @d[i] against @ref; the graph
 * after compiling is left in *@out (when not NULL) for its node counts.
 */
static void check_impl(const char *eq, const char *ref, int nin, const int *r,
		       const int64_t *const *d, npu_ir_graph **out, bool const_b)
{
	npu_ir_graph *g = irb_graph(13);
	float *x[2] = { NULL, NULL }, *yv;
	double *ry, *mag;
	int ti[2], ty = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);
	struct npu_cmodel *cm;
	npu_status st;
	int64_t yn;

	for (int i = 0; i < nin; i++) {
		char nm[16];

		snprintf(nm, sizeof(nm), "x%d", i);
		x[i] = randf(numel(r[i], d[i]), 7u + (unsigned)i);
		ti[i] = const_b && i == 1 ? irb_const(g, nm, NPU_DTYPE_FLOAT32, r[i], d[i], x[i]) :
			irb_tensor(g, nm, NPU_DTYPE_FLOAT32, r[i], d[i]);
	}
	ck_assert_int_eq(npu_ir_set_attr_string(irb_node(g, "Einsum", ti, nin, &ty, 1),
						"equation", eq), NPU_OK);
	irb_io(g, ti, const_b ? 1 : nin, &ty, 1);
	st = npu_ops_infer_shapes(g);
	ck_assert_msg(st == NPU_OK, "%s: shapes: %s", eq, npu_last_error());
	yn = npu_ir_numel(&g->tensors[ty]);
	yv = calloc((size_t)yn, sizeof(*yv));
	ry = calloc((size_t)yn, sizeof(*ry));
	mag = calloc((size_t)yn, sizeof(*mag));
	reference(ref, nin, r, d, x, ry, mag);
	st = irb_compile(g, "emu", &cm);
	ck_assert_msg(st == NPU_OK, "%s: compile: %s", eq, npu_last_error());
	ck_assert_int_eq(count_op(g, "Einsum"), 0);
	/* Moves of constant weights are done at compile time. */
	if (const_b) {
		ck_assert_int_eq(count_op(g, "Transpose"), 0);
		ck_assert_int_eq(count_op(g, "Expand") + count_op(g, "Concat"), 0);
	}
	st = irb_exec(cm, "emu", (void *const *)x, (void *[]){ yv });
	ck_assert_msg(st == NPU_OK, "%s: run: %s", eq, npu_last_error());
	for (int64_t i = 0; i < yn; i++)
		ck_assert_msg(fabs(yv[i] - ry[i]) <= mag[i] / 128.0 + 1e-5,
			      "%s: element %lld: %g, expected %g", eq, (long long)i, yv[i], ry[i]);
	free(x[0]);
	free(x[1]);
	free(yv);
	free(ry);
	free(mag);
	if (out)
		*out = g;
	else
		npu_ir_graph_free(g);
}

/* Both operands computed at run time; or the second a constant (weights). */
static void check(const char *eq, const char *ref, int nin, const int *r,
		  const int64_t *const *d, npu_ir_graph **out)
{
	check_impl(eq, ref, nin, r, d, out, false);
}

static void check_const_b(const char *eq, const char *ref, const int *r,
			  const int64_t *const *d)
{
	check_impl(eq, ref, 2, r, d, NULL, true);
}

#define D(...) ((const int64_t[]){ __VA_ARGS__ })

/* Attention's scores and context: exactly the exporters' Transpose + MatMul. */
START_TEST(attention_contractions)
{
	npu_ir_graph *g;

	check("bhqd,bhkd->bhqk", "bhqd,bhkd->bhqk", 2, (int[]){ 4, 4 },
	      (const int64_t *[]){ D(2, 3, 16, 8), D(2, 3, 12, 8) }, &g);
	ck_assert_int_eq(count_op(g, "MatMul"), 1);
	ck_assert_int_eq(count_transposes(g), 1);
	ck_assert_int_eq(count_op(g, "Reshape"), 0);
	npu_ir_graph_free(g);
	check("bhqk,bhkd->bhqd", "bhqk,bhkd->bhqd", 2, (int[]){ 4, 4 },
	      (const int64_t *[]){ D(2, 3, 16, 12), D(2, 3, 12, 8) }, &g);
	ck_assert_int_eq(count_op(g, "MatMul"), 1);
	ck_assert_int_eq(count_op(g, "Transpose"), 0);
	ck_assert_int_eq(count_op(g, "Reshape"), 0);
	npu_ir_graph_free(g);
	check("bij, bjk -> bik", "bij,bjk->bik", 2, (int[]){ 3, 3 },
	      (const int64_t *[]){ D(3, 5, 7), D(3, 7, 6) }, NULL);
	/* Operands the other way round: B's labels come first. */
	check("bjk,bij->bik", "bjk,bij->bik", 2, (int[]){ 3, 3 },
	      (const int64_t *[]){ D(3, 7, 6), D(3, 5, 7) }, NULL);
}
END_TEST

START_TEST(one_operand)
{
	check("ij->ji", "ij->ji", 1, (int[]){ 2 }, (const int64_t *[]){ D(5, 7) }, NULL);
	check("ij->i", "ij->i", 1, (int[]){ 2 }, (const int64_t *[]){ D(5, 7) }, NULL);
	check("ij", "ij->ij", 1, (int[]){ 2 }, (const int64_t *[]){ D(5, 7) }, NULL);
	check("ji", "ji->ij", 1, (int[]){ 2 }, (const int64_t *[]){ D(5, 7) }, NULL);
	check("abc->ca", "abc->ca", 1, (int[]){ 3 }, (const int64_t *[]){ D(3, 4, 5) }, NULL);
	check("ij->", "ij->", 1, (int[]){ 2 }, (const int64_t *[]){ D(5, 7) }, NULL);
}
END_TEST

START_TEST(products_and_ellipsis)
{
	npu_ir_graph *g;

	check("i,i->", "i,i->", 2, (int[]){ 1, 1 }, (const int64_t *[]){ D(40), D(40) }, NULL);
	check("i,i", "i,i->", 2, (int[]){ 1, 1 }, (const int64_t *[]){ D(40), D(40) }, NULL);
	check("...ij,...jk->...ik", "xyij,xyjk->xyik", 2, (int[]){ 4, 4 },
	      (const int64_t *[]){ D(2, 3, 5, 6), D(2, 3, 6, 4) }, NULL);
	/* Broadcast batch: the ellipsis of fewer axes takes the last ones. */
	check("...ij,...jk", "xyij,yjk->xyik", 2, (int[]){ 4, 3 },
	      (const int64_t *[]){ D(2, 3, 5, 6), D(3, 6, 4) }, NULL);
	check("...ij,...jk->...ik", "xyij,xyjk->xyik", 2, (int[]){ 4, 4 },
	      (const int64_t *[]){ D(2, 1, 5, 6), D(1, 3, 6, 4) }, NULL);
	/* Three batch labels: merged into one MatMul batch, broadcast by Expand. */
	check("abcij,abcjk->abcik", "abcij,abcjk->abcik", 2, (int[]){ 5, 5 },
	      (const int64_t *[]){ D(2, 3, 2, 4, 5), D(2, 1, 2, 5, 3) }, NULL);
	/* No contraction: an exact Mul. */
	check("i,j->ij", "i,j->ij", 2, (int[]){ 1, 1 }, (const int64_t *[]){ D(5), D(7) }, NULL);
	check("bi,bi->bi", "bi,bi->bi", 2, (int[]){ 2, 2 },
	      (const int64_t *[]){ D(3, 8), D(3, 8) }, NULL);
	/* A projection by constant weights, W as [out][in] (x W^T). */
	check_const_b("bsd,hd->bsh", "bsd,hd->bsh", (int[]){ 3, 2 },
		      (const int64_t *[]){ D(2, 5, 16), D(12, 16) });
	check_const_b("bij,jk->bik", "bij,jk->bik", (int[]){ 3, 2 },
		      (const int64_t *[]){ D(2, 5, 16), D(16, 12) });
	/* Three batch axes, the constant of batch 1 broadcast by the MatMul. */
	check_const_b("...ij,...jk->...ik", "abcij,abcjk->abcik", (int[]){ 5, 5 },
		      (const int64_t *[]){ D(2, 3, 2, 4, 5), D(1, 1, 1, 5, 3) });
	/* Batch 1 in one operand, run time: no Expand either. */
	check("abcij,abcjk->abcik", "abcij,abcjk->abcik", 2, (int[]){ 5, 5 },
	      (const int64_t *[]){ D(1, 1, 1, 4, 5), D(2, 3, 2, 5, 3) }, &g);
	ck_assert_int_eq(count_op(g, "Expand") + count_op(g, "Concat"), 0);
	npu_ir_graph_free(g);
	/* A label summed in one operand only, and a kept label of each. */
	check("ijk,jl->il", "ijk,jl->il", 2, (int[]){ 3, 2 },
	      (const int64_t *[]){ D(4, 6, 3), D(6, 5) }, NULL);
}
END_TEST

START_TEST(diagonal)
{
	check("ii->i", "ii->i", 1, (int[]){ 2 }, (const int64_t *[]){ D(6, 6) }, NULL);
	check("ii", "ii->", 1, (int[]){ 2 }, (const int64_t *[]){ D(6, 6) }, NULL);
	check("...ii->...i", "xii->xi", 1, (int[]){ 3 }, (const int64_t *[]){ D(3, 5, 5) },
	      NULL);
	check("bii,bij->bj", "bii,bij->bj", 2, (int[]){ 3, 3 },
	      (const int64_t *[]){ D(2, 4, 4), D(2, 4, 3) }, NULL);
}
END_TEST

/*
 * The libonnx-testdata Einsum node cases (float64 there) in float32, as
 * ONNX bytes through the parser at opset 12: the equations as written,
 * spaces included.
 */
START_TEST(onnx_node_cases_float32)
{
	static const struct {
		const char *eq, *ref;
		int nin, rank[2];
		int64_t dims[2][3];
	} cases[] = {
		{ "bij, bjk -> bik", "bij,bjk->bik", 2, { 3, 3 }, { { 5, 2, 3 }, { 5, 3, 4 } } },
		{ "i,i", "i,i->", 2, { 1, 1 }, { { 5 }, { 5 } } },
		{ "ij->i", "ij->i", 1, { 2 }, { { 3, 4 } } },
		{ "ij->ji", "ij->ji", 1, { 2 }, { { 3, 4 } } },
		{ "...ii ->...i", "xii->xi", 1, { 3 }, { { 3, 5, 5 } } },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct npu_compile_target tgt = { 0 };
		const int64_t *d[2] = { cases[c].dims[0], cases[c].dims[1] };
		onnxb *b = onnxb_new(8, 12);
		npu_ir_graph *g = NULL;
		struct npu_cmodel *cm;
		float *x[2] = { NULL, NULL }, *yv;
		double *ry, *mag;
		size_t len;
		uint8_t *buf;
		int64_t yn;
		npu_status st;

		onnxb_input(b, "x", ONNXB_F32, cases[c].rank[0], d[0]);
		if (cases[c].nin == 2)
			onnxb_input(b, "y", ONNXB_F32, cases[c].rank[1], d[1]);
		onnxb_attr_s(b, onnxb_node(b, "Einsum", "einsum",
					   cases[c].nin == 2 ? "x,y" : "x", "out"),
			     "equation", cases[c].eq);
		onnxb_output(b, "out", ONNXB_F32, -1, NULL);
		buf = onnxb_pack(b, &len);
		onnxb_free(b);
		st = npu_compile_parse(buf, len, &tgt, &g);
		free(buf);
		ck_assert_msg(st == NPU_OK, "%s: %s", cases[c].eq, npu_last_error());
		yn = npu_ir_numel(&g->tensors[g->outputs[0]]);
		for (int i = 0; i < cases[c].nin; i++)
			x[i] = randf(numel(cases[c].rank[i], d[i]), 11u + (unsigned)i);
		yv = calloc((size_t)yn, sizeof(*yv));
		ry = calloc((size_t)yn, sizeof(*ry));
		mag = calloc((size_t)yn, sizeof(*mag));
		reference(cases[c].ref, cases[c].nin, cases[c].rank, d, x, ry, mag);
		st = irb_compile(g, "emu", &cm);
		ck_assert_msg(st == NPU_OK, "%s: compile: %s", cases[c].eq, npu_last_error());
		st = irb_exec(cm, "emu", (void *const *)x, (void *[]){ yv });
		ck_assert_msg(st == NPU_OK, "%s: run: %s", cases[c].eq, npu_last_error());
		for (int64_t i = 0; i < yn; i++)
			ck_assert_msg(fabs(yv[i] - ry[i]) <= mag[i] / 128.0 + 1e-5,
				      "%s: element %lld: %g, expected %g", cases[c].eq,
				      (long long)i, yv[i], ry[i]);
		free(x[0]);
		free(x[1]);
		free(yv);
		free(ry);
		free(mag);
		npu_ir_graph_free(g);
	}
}
END_TEST

/* What is wrong with an equation is said, naming the node; never a crash. */
START_TEST(bad_equations)
{
	static const struct {
		const char *eq;
		int nin, rank;
		const char *says;
	} bad[] = {
		{ "ij,jk->ik", 1, 2, "more operands" },
		{ "ij->ij", 2, 2, "operand terms" },
		{ "ijk->i", 1, 2, "rank 2" },
		{ "ij->k", 1, 2, "'k' is in no operand" },
		{ "ij->ii", 1, 2, "repeated" },
		{ "i1->i", 1, 2, "no letter" },
		{ "i..j->i", 1, 2, "'...'" },
		{ "ij,jk,kl->il", 2, 2, "more" },
	};

	for (size_t c = 0; c < sizeof(bad) / sizeof(bad[0]); c++) {
		npu_ir_graph *g = irb_graph(13);
		int ti[2], ty = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);
		npu_ir_node *n;

		for (int i = 0; i < bad[c].nin; i++)
			ti[i] = irb_tensor(g, i ? "b" : "a", NPU_DTYPE_FLOAT32, bad[c].rank,
					   D(3, 3));
		n = irb_node(g, "Einsum", ti, bad[c].nin, &ty, 1);
		npu_ir_set_attr_string(n, "equation", bad[c].eq);
		irb_io(g, ti, bad[c].nin, &ty, 1);
		ck_assert_int_ne(npu_ops_infer_shapes(g), NPU_OK);
		ck_assert_msg(strstr(npu_last_error(), "Einsum") &&
			      strstr(npu_last_error(), bad[c].says),
			      "%s: %s", bad[c].eq, npu_last_error());
		npu_ir_graph_free(g);
	}
	{
		/* Sizes that do not broadcast, and an int32 operand. */
		npu_ir_graph *g = irb_graph(13);
		int a = irb_tensor(g, "a", NPU_DTYPE_FLOAT32, 2, D(3, 4));
		int b = irb_tensor(g, "b", NPU_DTYPE_FLOAT32, 2, D(5, 2));
		int y = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);
		struct npu_cmodel *cm;

		npu_ir_set_attr_string(irb_node(g, "Einsum", (int[]){ a, b }, 2, &y, 1),
				       "equation", "ij,jk->ik");
		irb_io(g, (int[]){ a, b }, 2, &y, 1);
		ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_ERR_SHAPE);
		ck_assert_ptr_nonnull(strstr(npu_last_error(), "label 'j'"));
		npu_ir_graph_free(g);
		g = irb_graph(13);
		a = irb_tensor(g, "a", NPU_DTYPE_INT32, 2, D(3, 4));
		b = irb_tensor(g, "b", NPU_DTYPE_INT32, 2, D(4, 2));
		y = irb_tensor(g, "y", 0, -1, NULL);
		npu_ir_set_attr_string(irb_node(g, "Einsum", (int[]){ a, b }, 2, &y, 1),
				       "equation", "ij,jk->ik");
		irb_io(g, (int[]){ a, b }, 2, &y, 1);
		ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
		ck_assert_int_eq(irb_compile(g, "emu", &cm), NPU_ERR_UNSUPPORTED);
		ck_assert_ptr_nonnull(strstr(npu_last_error(), "only on float32 operands"));
		npu_ir_graph_free(g);
	}
}
END_TEST

/* The implicit output and the ellipsis as the parser sees them. */
START_TEST(parse_labels)
{
	struct npu_einsum e;
	char why[128];

	ck_assert_int_eq(npu_einsum_parse("ba,Cb", 2, (int[]){ 2, 2 }, &e, why, sizeof(why)), 0);
	/* a and C occur once: 'C' (ASCII 67) before 'a' (97). */
	ck_assert_int_eq(e.out_rank, 2);
	ck_assert_int_eq(e.out[0], 26 + 2);
	ck_assert_int_eq(e.out[1], 0);
	ck_assert_int_eq(npu_einsum_parse("...i,i...", 2, (int[]){ 3, 2 }, &e, why,
					  sizeof(why)), 0);
	ck_assert_int_eq(e.out_rank, 2);
	ck_assert_int_eq(e.lab[0][0], NPU_EINSUM_ELL);
	ck_assert_int_eq(e.lab[1][1], NPU_EINSUM_ELL + 1);
	ck_assert_int_eq(e.out[0], NPU_EINSUM_ELL);
}
END_TEST

static Suite *einsum_suite(void)
{
	Suite *s = suite_create("npu_einsum");
	TCase *tc = tcase_create("einsum");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, attention_contractions);
	tcase_add_test(tc, one_operand);
	tcase_add_test(tc, products_and_ellipsis);
	tcase_add_test(tc, diagonal);
	tcase_add_test(tc, onnx_node_cases_float32);
	tcase_add_test(tc, bad_equations);
	tcase_add_test(tc, parse_labels);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(einsum_suite)
