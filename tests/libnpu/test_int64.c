// SPDX-License-Identifier: MIT
/*
 * int64 tensors (token ids, masks) on the emulator: the NPU computes them
 * as int32 (compile/npu_narrow.c) while the model's inputs and outputs
 * stay int64 for the caller (model/context.c converts).  An embedding
 * Gather, a Cast to float, a Concat with a constant, a Gather from a
 * constant int64 table and a folded Shape, against a C reference; values
 * outside int32 refused by name; graphs without int64 left alone.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_compile.h"
#include "compile/npu_narrow.h"
#include "compile/npu_ops.h"
#include "ir_build.h"
#include "model/npu_model_priv.h"
#include "npu_test.h"

enum { V = 40, E = 8, B = 2, S = 5, P = 3, NOUT = 5 };

static npu_status compile(npu_ir_graph *g, npu_device *dev, struct npu_cmodel **cm)
{
	struct npu_compile_target tgt = { 0 };
	npu_device_info info;

	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	npu_device_get_info(dev, &info);
	tgt.clusters = info.healthy_clusters;
	tgt.tpbs = info.tpbs_per_cluster;
	tgt.hbsm_size = info.hbsm_size;
	return npu_compile_ir(g, &tgt, cm);
}

/*
 * ids int64 [B, S] at run time: emb = Gather(wte, ids), idf = Cast(ids,
 * float), cat = Concat(ids, pad) on axis 1, pos = Gather(ptab, ids) from an
 * int64 table, shp = Shape(ids) (folds to a constant output).
 */
static npu_ir_graph *model(const float *wte, const int64_t *pad, const int64_t *ptab)
{
	npu_ir_graph *g = irb_graph(13);
	int w = irb_const(g, "wte", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ V, E }, wte);
	int pd = irb_const(g, "pad", NPU_DTYPE_INT64, 2, (int64_t[]){ B, P }, pad);
	int pt = irb_const(g, "ptab", NPU_DTYPE_INT64, 1, (int64_t[]){ V }, ptab);
	int ids = irb_tensor(g, "ids", NPU_DTYPE_INT64, 2, (int64_t[]){ B, S });
	int out[NOUT];
	npu_ir_node *n;

	out[0] = irb_tensor(g, "emb", NPU_DTYPE_FLOAT32, -1, NULL);
	out[1] = irb_tensor(g, "idf", NPU_DTYPE_FLOAT32, -1, NULL);
	out[2] = irb_tensor(g, "cat", NPU_DTYPE_INT64, -1, NULL);
	out[3] = irb_tensor(g, "pos", NPU_DTYPE_INT64, -1, NULL);
	out[4] = irb_tensor(g, "shp", NPU_DTYPE_INT64, -1, NULL);
	irb_node(g, "Gather", (int[]){ w, ids }, 2, &out[0], 1);
	n = irb_node(g, "Cast", &ids, 1, &out[1], 1);
	ck_assert_int_eq(npu_ir_set_attr_int(n, "to", NPU_DTYPE_FLOAT32), NPU_OK);
	n = irb_node(g, "Concat", (int[]){ ids, pd }, 2, &out[2], 1);
	ck_assert_int_eq(npu_ir_set_attr_int(n, "axis", 1), NPU_OK);
	irb_node(g, "Gather", (int[]){ pt, ids }, 2, &out[3], 1);
	irb_node(g, "Shape", &ids, 1, &out[4], 1);
	irb_io(g, &ids, 1, out, NOUT);
	return g;
}

struct bufs {
	float wte[V * E], emb[B * S * E], idf[B * S];
	int64_t pad[B * P], ptab[V], cat[B * (S + P)], pos[B * S], shp[2];
};

static void fill(struct bufs *b)
{
	for (int i = 0; i < V * E; i++)
		b->wte[i] = (float)i * 0.125f - 7.0f;
	for (int i = 0; i < B * P; i++)
		b->pad[i] = (int64_t[]){ -5, 0, 100000, INT32_MAX, INT32_MIN, 7 }[i];
	for (int i = 0; i < V; i++)
		b->ptab[i] = 1000 * i - 20000;
}

/* Compile and run model() on @ids; the run's status. */
static npu_status run(struct bufs *b, const int64_t *ids, size_t ids_bytes)
{
	npu_ir_graph *g = model(b->wte, b->pad, b->ptab);
	struct npu_cmodel *cm;
	npu_device *dev;
	npu_context *ctx;
	npu_model *m;
	npu_status st;
	npu_tensor in = { "ids", NPU_DTYPE_INT64, (void *)ids, ids_bytes };
	npu_tensor out[NOUT] = {
		{ "emb", NPU_DTYPE_FLOAT32, b->emb, sizeof(b->emb) },
		{ "idf", NPU_DTYPE_FLOAT32, b->idf, sizeof(b->idf) },
		{ "cat", NPU_DTYPE_INT64, b->cat, sizeof(b->cat) },
		{ "pos", NPU_DTYPE_INT64, b->pos, sizeof(b->pos) },
		{ "shp", NPU_DTYPE_INT64, b->shp, sizeof(b->shp) },
	};
	void *buf;
	size_t bytes;

	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_int_eq(compile(g, dev, &cm), NPU_OK);
	/* The caller sees int64 and its size; the device slot is int32. */
	ck_assert_int_eq(cm->inputs[0].info.dtype, NPU_DTYPE_INT64);
	ck_assert_uint_eq(cm->inputs[0].info.bytes, B * S * 8);
	for (int i = 2; i < NOUT; i++)
		ck_assert_int_eq(cm->outputs[i].info.dtype, NPU_DTYPE_INT64);
	m = calloc(1, sizeof(*m));
	m->cm = cm;
	ck_assert_int_eq(npu_context_create(dev, m, 0, &ctx), NPU_OK);
	ck_assert_int_eq(npu_context_input_buffer(ctx, 0, &buf, &bytes), NPU_OK);
	ck_assert_uint_eq(bytes, B * S * 4);
	st = npu_run(ctx, &in, 1, out, NOUT);
	npu_context_destroy(ctx);
	npu_model_free(m);
	npu_device_close(dev);
	npu_ir_graph_free(g);
	return st;
}

START_TEST(int64_io_exact)
{
	static struct bufs b;
	int64_t ids[B * S] = { 0, 39, 3, 3, 17, 8, 1, 22, 38, 5 };

	fill(&b);
	ck_assert_int_eq(run(&b, ids, sizeof(ids)), NPU_OK);
	for (int i = 0; i < B * S; i++) {
		ck_assert_msg(memcmp(b.emb + i * E, b.wte + ids[i] * E, E * sizeof(float)) == 0,
			      "emb row %d", i);
		ck_assert_msg(b.idf[i] == (float)ids[i], "idf %d: %g", i, b.idf[i]);
		ck_assert_msg(b.pos[i] == b.ptab[ids[i]], "pos %d: %lld", i, (long long)b.pos[i]);
	}
	for (int r = 0; r < B; r++)
		for (int c = 0; c < S + P; c++) {
			int64_t want = c < S ? ids[r * S + c] : b.pad[r * P + c - S];

			ck_assert_msg(b.cat[r * (S + P) + c] == want, "cat (%d, %d): %lld", r, c,
				      (long long)b.cat[r * (S + P) + c]);
		}
	ck_assert(b.shp[0] == B && b.shp[1] == S);
}
END_TEST

START_TEST(int64_input_outside_int32)
{
	static struct bufs b;
	int64_t ids[B * S] = { 0, 1, 2, 3, (int64_t)1 << 32, 5, 6, 7, 8, 9 };

	fill(&b);
	ck_assert_int_eq(run(&b, ids, sizeof(ids)), NPU_ERR_INVALID_ARG);
	ck_assert_msg(strstr(npu_last_error(), "input 'ids': element 4 is 4294967296, outside int32"),
		      "%s", npu_last_error());
	ids[4] = (int64_t)INT32_MIN - 1;
	ck_assert_int_eq(run(&b, ids, sizeof(ids)), NPU_ERR_INVALID_ARG);
	ck_assert_msg(strstr(npu_last_error(), "element 4 is -2147483649"), "%s", npu_last_error());
}
END_TEST

/* A constant the device computes with must fit int32: refused by name. */
START_TEST(int64_constant_outside_int32)
{
	static struct bufs b;
	npu_ir_graph *g;
	struct npu_cmodel *cm = NULL;
	npu_device *dev;

	fill(&b);
	b.pad[2] = (int64_t)1 << 40;
	g = model(b.wte, b.pad, b.ptab);
	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_int_eq(compile(g, dev, &cm), NPU_ERR_UNSUPPORTED);
	ck_assert_msg(strstr(npu_last_error(), "int64 constant 'pad' (input 1 of node") &&
		      strstr(npu_last_error(), "(Concat)) holds 1099511627776 at element 2: "
			     "outside int32"), "%s", npu_last_error());
	npu_device_close(dev);
	npu_ir_graph_free(g);
}
END_TEST

/* No int64 computed at run time: the pass changes nothing. */
START_TEST(float_graph_untouched)
{
	npu_ir_graph *g = irb_graph(13);
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ 2, 6 });
	int sh = irb_const(g, "shape", NPU_DTYPE_INT64, 1, (int64_t[]){ 2 },
			   (int64_t[]){ 3, 4 });
	int y = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);
	int nt, nn;
	npu_dtype *wide;
	char *notes;
	int nwide;

	irb_node(g, "Reshape", (int[]){ x, sh }, 2, &y, 1);
	irb_io(g, &x, 1, &y, 1);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	nt = g->n_tensors;
	nn = g->n_nodes;
	ck_assert_int_eq(npu_narrow_types(g, &wide, &nwide, &notes), NPU_OK);
	ck_assert_ptr_null(wide);
	ck_assert_ptr_null(notes);
	ck_assert_int_eq(g->n_tensors, nt);
	ck_assert_int_eq(g->n_nodes, nn);
	ck_assert_int_eq(g->tensors[sh].dtype, NPU_DTYPE_INT64);
	npu_ir_graph_free(g);
}
END_TEST

/* The .npum keeps int64 at the boundary; the device slot is derived. */
START_TEST(int64_npum_round_trip)
{
	static struct bufs b;
	npu_ir_graph *g;
	struct npu_cmodel *cm, *back;
	npu_device *dev;
	uint8_t *buf;
	size_t len;

	fill(&b);
	g = model(b.wte, b.pad, b.ptab);
	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_int_eq(compile(g, dev, &cm), NPU_OK);
	ck_assert_int_eq(npu_cmodel_write(cm, &buf, &len), NPU_OK);
	ck_assert_int_eq(npu_cmodel_read(buf, len, &back), NPU_OK);
	ck_assert_int_eq(back->inputs[0].info.dtype, NPU_DTYPE_INT64);
	ck_assert_uint_eq(back->inputs[0].info.bytes, B * S * 8);
	ck_assert_uint_eq(npu_io_dev_bytes(&back->inputs[0].info), B * S * 4);
	ck_assert_uint_eq(back->outputs[2].info.bytes, B * (S + P) * 8);
	free(buf);
	npu_cmodel_free(back);
	npu_cmodel_free(cm);
	npu_device_close(dev);
	npu_ir_graph_free(g);
}
END_TEST

static Suite *int64_suite(void)
{
	Suite *s = suite_create("npu_int64");
	TCase *tc = tcase_create("narrowing");

	tcase_add_test(tc, int64_io_exact);
	tcase_add_test(tc, int64_input_outside_int32);
	tcase_add_test(tc, int64_constant_outside_int32);
	tcase_add_test(tc, float_graph_untouched);
	tcase_add_test(tc, int64_npum_round_trip);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(int64_suite)
