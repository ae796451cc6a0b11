// SPDX-License-Identifier: MIT
/*
 * Outputs of run-time size (issue 17): NonZero, NonMaxSuppression, Unique
 * and Compress of run-time data, and the nodes after them, run on the
 * host with the CPU fallback, each checked against a C reference written
 * here: boolean indexing as torch exports it (Greater, NonZero,
 * Transpose, GatherND, Squeeze, Mul), a detector's NMS post-processing
 * (NonMaxSuppression, Gather of the box column, Gather of the boxes,
 * Concat), Unique unsorted with all four outputs, Compress with a
 * run-time condition then Reshape.  The public API: -1 dims and the
 * bound's bytes in the model's info, the run's shape from
 * npu_context_last_run_output_info(), a caller buffer too small refused
 * with the bytes needed, two runs of different sizes, the .npum round
 * trip (version 3).  Refusals: a node after NonZero the host cannot run
 * (named, and why), a host output larger than its bound.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_compile.h"
#include "compile/npu_ops.h"
#include "host/npu_host.h"
#include "ir_build.h"
#include "model/npu_model_priv.h"
#include "npu_test.h"

#define D(...) ((const int64_t[]){ __VA_ARGS__ })

static npu_status compile(npu_ir_graph *g, struct npu_cmodel **cm)
{
	struct npu_compile_target tgt = { .clusters = 14, .tpbs = 4, .hbsm_size = 2u << 20,
					  .batch = 1, .allow_cpu_fallback = true };

	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	return npu_compile_ir(g, &tgt, cm);
}

/* A context on the emulator for @cm (taken). */
struct run {
	npu_model *m;
	npu_device *dev;
	npu_context *ctx;
};

static void run_open(struct run *r, struct npu_cmodel *cm)
{
	r->m = calloc(1, sizeof(*r->m));
	ck_assert_ptr_nonnull(r->m);
	r->m->cm = cm;
	ck_assert_int_eq(npu_device_open("emu", &r->dev), NPU_OK);
	ck_assert_int_eq(npu_context_create(r->dev, r->m, 0, &r->ctx), NPU_OK);
}

static void run_close(struct run *r)
{
	npu_context_destroy(r->ctx);
	npu_model_free(r->m);
	npu_device_close(r->dev);
}

enum { ROWS = 6, COLS = 4 };

/*
 * x [ROWS, COLS], s [ROWS] -> keep = s > 0.5 -> nz = NonZero(keep) [1, k]
 * -> t = Transpose(nz) [k, 1] -> y = GatherND(x, t) * 2 [k, COLS],
 * idx = Squeeze(t, 1) [k] (what torch exports for x[s > 0.5] and
 * torch.nonzero(s > 0.5).squeeze(1)).
 */
static npu_ir_graph *index_model(void)
{
	npu_ir_graph *g = irb_graph(13);
	float half = 0.5f, two = 2;
	int64_t one = 1;
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 2, D(ROWS, COLS));
	int s = irb_tensor(g, "s", NPU_DTYPE_FLOAT32, 1, D(ROWS));
	int c = irb_const(g, "half", NPU_DTYPE_FLOAT32, 0, NULL, &half);
	int c2 = irb_const(g, "two", NPU_DTYPE_FLOAT32, 0, NULL, &two);
	int ax = irb_const(g, "axes", NPU_DTYPE_INT64, 1, D(1), &one);
	int keep = irb_tensor(g, "keep", 0, -1, NULL);
	int nz = irb_tensor(g, "nz", 0, -1, NULL);
	int t = irb_tensor(g, "t", 0, -1, NULL);
	int gnd = irb_tensor(g, "gnd", 0, -1, NULL);
	int y = irb_tensor(g, "y", 0, -1, NULL);
	int idx = irb_tensor(g, "idx", 0, -1, NULL);

	irb_node(g, "Greater", (int[]){ s, c }, 2, &keep, 1);
	irb_node(g, "NonZero", &keep, 1, &nz, 1);
	npu_ir_set_attr_ints(irb_node(g, "Transpose", &nz, 1, &t, 1), "perm", D(1, 0), 2);
	irb_node(g, "GatherND", (int[]){ x, t }, 2, &gnd, 1);
	irb_node(g, "Mul", (int[]){ gnd, c2 }, 2, &y, 1);
	irb_node(g, "Squeeze", (int[]){ t, ax }, 2, &idx, 1);
	irb_io(g, (int[]){ x, s }, 2, (int[]){ y, idx }, 2);
	return g;
}

/* Run the index model on @s, checking y and idx against C and their run-time shapes. */
static void index_run(npu_context *ctx, const float *s)
{
	float x[ROWS * COLS], y[ROWS * COLS], want[ROWS * COLS];
	int64_t idx[ROWS], want_idx[ROWS];
	npu_tensor in[2] = { { NULL, NPU_DTYPE_FLOAT32, x, sizeof(x) },
			     { NULL, NPU_DTYPE_FLOAT32, (void *)s, ROWS * sizeof(float) } };
	npu_tensor out[2] = { { NULL, NPU_DTYPE_FLOAT32, y, sizeof(y) },
			      { NULL, NPU_DTYPE_INT64, idx, sizeof(idx) } };
	npu_tensor_info ti;
	int k = 0;

	for (int i = 0; i < ROWS * COLS; i++)
		x[i] = (float)((i * 5) % 13) - 6.5f;
	for (int r = 0; r < ROWS; r++) {
		if (!(s[r] > 0.5f))
			continue;
		for (int j = 0; j < COLS; j++)
			want[k * COLS + j] = 2 * x[r * COLS + j];
		want_idx[k++] = r;
	}
	ck_assert_int_eq(npu_run(ctx, in, 2, out, 2), NPU_OK);
	ck_assert_int_eq(npu_context_last_run_output_info(ctx, 0, &ti), NPU_OK);
	ck_assert_int_eq(ti.rank, 2);
	ck_assert_int_eq(ti.dims[0], k);
	ck_assert_int_eq(ti.dims[1], COLS);
	ck_assert_uint_eq(ti.bytes, (size_t)k * COLS * sizeof(float));
	ck_assert_int_eq(npu_context_last_run_output_info(ctx, 1, &ti), NPU_OK);
	ck_assert_int_eq(ti.rank, 1);
	ck_assert_int_eq(ti.dims[0], k);
	ck_assert_uint_eq(ti.bytes, (size_t)k * sizeof(int64_t));
	for (int i = 0; i < k * COLS; i++)
		ck_assert_float_eq(y[i], want[i]);
	for (int i = 0; i < k; i++)
		ck_assert_int_eq(idx[i], want_idx[i]);
}

START_TEST(dyn_boolean_indexing)
{
	static const float s1[ROWS] = { 0.9f, 0.1f, 0.7f, 0.5f, 0.51f, -1 };
	static const float s2[ROWS] = { 0, 0, 0, 0, 0, 0.6f };
	static const float s3[ROWS] = { 1, 1, 1, 1, 1, 1 };
	npu_ir_graph *g = index_model();
	struct npu_cmodel *cm, *back;
	npu_tensor_info ti;
	struct run r;
	uint8_t *buf;
	size_t len;

	ck_assert_int_eq(compile(g, &cm), NPU_OK);
	ck_assert_uint_ge(npu_cmodel_host_steps(cm), 5);
	run_open(&r, cm);
	/* Before a run: the bound, dims -1 where the run decides. */
	ck_assert_int_eq(npu_context_last_run_output_info(r.ctx, 0, &ti), NPU_ERR_NOT_FOUND);
	ck_assert_int_eq(npu_model_output_info(r.m, 1, &ti), NPU_OK);
	ck_assert_int_eq(ti.rank, 1);
	ck_assert_int_eq(ti.dims[0], -1);
	ck_assert_uint_eq(ti.bytes, ROWS * sizeof(int64_t));
	ck_assert_int_eq(npu_model_output_info(r.m, 0, &ti), NPU_OK);
	ck_assert_uint_eq(ti.bytes, ROWS * COLS * sizeof(float));
	/* GatherND then Mul: the rows are the run's, the columns the data's. */
	ck_assert_int_eq(ti.dims[0], -1);
	ck_assert_int_eq(ti.dims[1], COLS);
	index_run(r.ctx, s1);
	index_run(r.ctx, s2);
	index_run(r.ctx, s3);
	index_run(r.ctx, s1);
	/* The file keeps the run-time shapes: version 3, and the same results. */
	ck_assert_int_eq(npu_cmodel_write(cm, &buf, &len), NPU_OK);
	ck_assert_int_eq(buf[4], 3);
	ck_assert_int_eq(npu_cmodel_read(buf, len, &back), NPU_OK);
	ck_assert_uint_eq(back->ndyn, cm->ndyn);
	ck_assert_uint_ne(back->outputs[0].dyn, 0);
	ck_assert_int_eq(back->outputs[1].info.dims[0], -1);
	free(buf);
	run_close(&r);
	run_open(&r, back);
	index_run(r.ctx, s1);
	index_run(r.ctx, s2);
	run_close(&r);
	npu_ir_graph_free(g);
}
END_TEST

/* A caller buffer smaller than the run's result: an error with the bytes needed. */
START_TEST(dyn_buffer_too_small)
{
	static const float s[ROWS] = { 0.9f, 0.8f, 0.7f, 0, 0, 0 };
	npu_ir_graph *g = index_model();
	struct npu_cmodel *cm;
	float x[ROWS * COLS] = { 0 }, y[3 * COLS];
	int64_t idx[ROWS];
	npu_tensor in[2] = { { NULL, NPU_DTYPE_FLOAT32, x, sizeof(x) },
			     { NULL, NPU_DTYPE_FLOAT32, (void *)s, sizeof(s) } };
	npu_tensor out[2] = { { NULL, NPU_DTYPE_FLOAT32, y, 2 * COLS * sizeof(float) },
			      { NULL, NPU_DTYPE_INT64, idx, sizeof(idx) } };
	struct run r;

	ck_assert_int_eq(compile(g, &cm), NPU_OK);
	run_open(&r, cm);
	ck_assert_int_eq(npu_run(r.ctx, in, 2, out, 2), NPU_ERR_SHAPE);
	ck_assert_msg(strstr(npu_last_error(), "output 'y'") &&
		      strstr(npu_last_error(), "[3, 4]") &&
		      strstr(npu_last_error(), "give at least 48 bytes"), "%s", npu_last_error());
	/* Exactly the result's size is enough. */
	out[0].bytes = 3 * COLS * sizeof(float);
	ck_assert_int_eq(npu_run(r.ctx, in, 2, out, 2), NPU_OK);
	run_close(&r);
	npu_ir_graph_free(g);
}
END_TEST

struct box {
	float y1, x1, y2, x2;
};

/* IoU of corner boxes, 0 without overlap. */
static float iou(const struct box *a, const struct box *b)
{
	float iw = fminf(a->x2, b->x2) - fmaxf(a->x1, b->x1);
	float ih = fminf(a->y2, b->y2) - fmaxf(a->y1, b->y1);
	float inter = iw > 0 && ih > 0 ? iw * ih : 0;
	float u = (a->x2 - a->x1) * (a->y2 - a->y1) + (b->x2 - b->x1) * (b->y2 - b->y1) - inter;

	return inter > 0 ? inter / u : 0;
}

enum { NBOX = 8, NCLS = 2, MAXOUT = 3 };

/*
 * Greedy NMS of class @c, the plain way: repeatedly the best remaining box
 * above the score threshold, dropping those overlapping it; into @sel.
 */
static int nms_ref(const struct box *bx, const float *sc, int c, float thr, float iou_thr,
		   int64_t *sel)
{
	bool gone[NBOX] = { false };
	int n = 0;

	while (n < MAXOUT) {
		int best = -1;

		for (int i = 0; i < NBOX; i++)
			if (!gone[i] && sc[c * NBOX + i] > thr &&
			    (best < 0 || sc[c * NBOX + i] > sc[c * NBOX + best]))
				best = i;
		if (best < 0)
			break;
		sel[n * 3] = 0;
		sel[n * 3 + 1] = c;
		sel[n * 3 + 2] = best;
		n++;
		gone[best] = true;
		for (int i = 0; i < NBOX; i++)
			if (!gone[i] && iou(&bx[best], &bx[i]) > iou_thr)
				gone[i] = true;
	}
	return n;
}

/*
 * A detector's tail: sel = NMS(boxes, scores, 3, 0.4, 0.2) [k, 3];
 * col = Gather(sel, 2, axis 1) [k]; picked = Gather(boxes[0], col) [k, 4]
 * (boxes[0] by a Squeeze); out = Concat(picked, picked) on axis 1.
 */
START_TEST(dyn_nms_postprocess)
{
	npu_ir_graph *g = irb_graph(13);
	int64_t maxout = MAXOUT, two = 2, zero = 0;
	float iou_thr = 0.4f, score_thr = 0.2f;
	int b = irb_tensor(g, "boxes", NPU_DTYPE_FLOAT32, 3, D(1, NBOX, 4));
	int s = irb_tensor(g, "scores", NPU_DTYPE_FLOAT32, 3, D(1, NCLS, NBOX));
	int cm_ = irb_const(g, "maxout", NPU_DTYPE_INT64, 1, D(1), &maxout);
	int ci = irb_const(g, "iou", NPU_DTYPE_FLOAT32, 1, D(1), &iou_thr);
	int cs = irb_const(g, "thr", NPU_DTYPE_FLOAT32, 1, D(1), &score_thr);
	int c2 = irb_const(g, "two", NPU_DTYPE_INT64, 0, NULL, &two);
	int ax0 = irb_const(g, "ax0", NPU_DTYPE_INT64, 1, D(1), &zero);
	int sel = irb_tensor(g, "sel", 0, -1, NULL), col = irb_tensor(g, "col", 0, -1, NULL);
	int b0 = irb_tensor(g, "b0", 0, -1, NULL), pk = irb_tensor(g, "picked", 0, -1, NULL);
	int o = irb_tensor(g, "out", 0, -1, NULL);
	struct npu_cmodel *cm;
	struct box bx[NBOX];
	float sc[NCLS * NBOX], got[2 * NCLS * MAXOUT * 8];
	int64_t gsel[NCLS * MAXOUT * 3], want[NCLS * MAXOUT * 3];
	npu_tensor in[2] = { { NULL, NPU_DTYPE_FLOAT32, bx, sizeof(bx) },
			     { NULL, NPU_DTYPE_FLOAT32, sc, sizeof(sc) } };
	npu_tensor out[2] = { { NULL, NPU_DTYPE_INT64, gsel, sizeof(gsel) },
			      { NULL, NPU_DTYPE_FLOAT32, got, sizeof(got) } };
	npu_tensor_info ti;
	struct run r;
	int k = 0;

	irb_node(g, "NonMaxSuppression", (int[]){ b, s, cm_, ci, cs }, 5, &sel, 1);
	npu_ir_set_attr_int(irb_node(g, "Gather", (int[]){ sel, c2 }, 2, &col, 1), "axis", 1);
	irb_node(g, "Squeeze", (int[]){ b, ax0 }, 2, &b0, 1);
	irb_node(g, "Gather", (int[]){ b0, col }, 2, &pk, 1);
	npu_ir_set_attr_int(irb_node(g, "Concat", (int[]){ pk, pk }, 2, &o, 1), "axis", 1);
	irb_io(g, (int[]){ b, s }, 2, (int[]){ sel, o }, 2);
	ck_assert_int_eq(compile(g, &cm), NPU_OK);
	/* Boxes on a diagonal, overlapping their neighbours; scores per class. */
	for (int i = 0; i < NBOX; i++) {
		float at = (float)(i % 5) * 0.6f + (float)(i / 5) * 0.1f;

		bx[i] = (struct box){ at, at, at + 1, at + 1 };
		sc[i] = (float)((i * 3) % 8) / 8;
		sc[NBOX + i] = (float)((i * 5 + 2) % 8) / 8;
	}
	/* Corners in either order are the same box. */
	bx[3] = (struct box){ bx[3].y2, bx[3].x2, bx[3].y1, bx[3].x1 };
	for (int c = 0; c < NCLS; c++) {
		struct box sorted[NBOX];

		for (int i = 0; i < NBOX; i++)
			sorted[i] = (struct box){ fminf(bx[i].y1, bx[i].y2), fminf(bx[i].x1, bx[i].x2),
						  fmaxf(bx[i].y1, bx[i].y2), fmaxf(bx[i].x1, bx[i].x2) };
		k += nms_ref(sorted, sc, c, score_thr, iou_thr, want + k * 3);
	}
	run_open(&r, cm);
	ck_assert_int_eq(npu_model_output_info(r.m, 0, &ti), NPU_OK);
	ck_assert_int_eq(ti.dims[0], -1);
	ck_assert_int_eq(ti.dims[1], 3);
	ck_assert_uint_eq(ti.bytes, (size_t)NCLS * MAXOUT * 3 * sizeof(int64_t));
	/* Gather of the boxes by a run-time column, Concat on axis 1: [-1, 8]. */
	ck_assert_int_eq(npu_model_output_info(r.m, 1, &ti), NPU_OK);
	ck_assert_int_eq(ti.dims[0], -1);
	ck_assert_int_eq(ti.dims[1], 8);
	ck_assert_int_eq(npu_run(r.ctx, in, 2, out, 2), NPU_OK);
	ck_assert_int_eq(npu_context_last_run_output_info(r.ctx, 0, &ti), NPU_OK);
	ck_assert_int_eq(ti.dims[0], k);
	ck_assert_int_gt(k, 2);
	for (int i = 0; i < k * 3; i++)
		ck_assert_int_eq(gsel[i], want[i]);
	ck_assert_int_eq(npu_context_last_run_output_info(r.ctx, 1, &ti), NPU_OK);
	ck_assert_int_eq(ti.rank, 2);
	ck_assert_int_eq(ti.dims[0], k);
	ck_assert_int_eq(ti.dims[1], 8);
	for (int i = 0; i < k; i++)
		for (int j = 0; j < 8; j++)
			ck_assert_float_eq(got[i * 8 + j], ((const float *)&bx[want[i * 3 + 2]])[j % 4]);
	run_close(&r);
	npu_ir_graph_free(g);
}
END_TEST

/*
 * Unique (unsorted, no axis) of x [8] int32 with all four outputs;
 * Compress(m [3, 4], cond [4] bool at run time, axis 1) then Reshape [-1].
 */
START_TEST(dyn_unique_compress)
{
	npu_ir_graph *g = irb_graph(13);
	int64_t flat = -1;
	int x = irb_tensor(g, "x", NPU_DTYPE_INT32, 1, D(8));
	int m = irb_tensor(g, "m", NPU_DTYPE_FLOAT32, 2, D(3, 4));
	int c = irb_tensor(g, "cond", NPU_DTYPE_BOOL, 1, D(4));
	int sh = irb_const(g, "flat", NPU_DTYPE_INT64, 1, D(1), &flat);
	int u[4] = { irb_tensor(g, "y", 0, -1, NULL), irb_tensor(g, "first", 0, -1, NULL),
		     irb_tensor(g, "inverse", 0, -1, NULL), irb_tensor(g, "counts", 0, -1, NULL) };
	int cp = irb_tensor(g, "cp", 0, -1, NULL), cr = irb_tensor(g, "cr", 0, -1, NULL);
	static const int32_t xv[8] = { 4, -1, 4, 7, -1, 4, 0, 7 };
	static const int32_t want_y[4] = { 4, -1, 7, 0 };
	static const int64_t want_first[4] = { 0, 1, 3, 6 }, want_inv[8] = { 0, 1, 0, 2, 1, 0, 3, 2 };
	static const int64_t want_cnt[4] = { 3, 2, 2, 1 };
	float mv[12], cout[12];
	uint8_t cond[4] = { 1, 0, 0, 1 };
	int32_t y[8];
	int64_t first[8], inv[8], cnt[8];
	npu_tensor in[3] = { { NULL, NPU_DTYPE_INT32, (void *)xv, sizeof(xv) },
			     { NULL, NPU_DTYPE_FLOAT32, mv, sizeof(mv) },
			     { NULL, NPU_DTYPE_BOOL, cond, sizeof(cond) } };
	npu_tensor out[5] = { { NULL, NPU_DTYPE_INT32, y, sizeof(y) },
			      { NULL, NPU_DTYPE_INT64, first, sizeof(first) },
			      { NULL, NPU_DTYPE_INT64, inv, sizeof(inv) },
			      { NULL, NPU_DTYPE_INT64, cnt, sizeof(cnt) },
			      { NULL, NPU_DTYPE_FLOAT32, cout, sizeof(cout) } };
	npu_tensor_info ti;
	struct npu_cmodel *cm;
	struct run r;

	npu_ir_set_attr_int(irb_node(g, "Unique", &x, 1, u, 4), "sorted", 0);
	npu_ir_set_attr_int(irb_node(g, "Compress", (int[]){ m, c }, 2, &cp, 1), "axis", 1);
	irb_node(g, "Reshape", (int[]){ cp, sh }, 2, &cr, 1);
	irb_io(g, (int[]){ x, m, c }, 3, (int[]){ u[0], u[1], u[2], u[3], cr }, 5);
	ck_assert_int_eq(compile(g, &cm), NPU_OK);
	for (int i = 0; i < 12; i++)
		mv[i] = (float)i;
	run_open(&r, cm);
	/* inverse_indices has X's size, static. */
	ck_assert_int_eq(npu_model_output_info(r.m, 2, &ti), NPU_OK);
	ck_assert_int_eq(ti.dims[0], 8);
	ck_assert_int_eq(npu_run(r.ctx, in, 3, out, 5), NPU_OK);
	for (int k = 0; k < 4; k++) {
		ck_assert_int_eq(npu_context_last_run_output_info(r.ctx, (size_t)k, &ti), NPU_OK);
		ck_assert_int_eq(ti.dims[0], k == 2 ? 8 : 4);
	}
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(y[i], want_y[i]);
		ck_assert_int_eq(first[i], want_first[i]);
		ck_assert_int_eq(cnt[i], want_cnt[i]);
	}
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(inv[i], want_inv[i]);
	/* Columns 0 and 3 of each row, flattened. */
	ck_assert_int_eq(npu_context_last_run_output_info(r.ctx, 4, &ti), NPU_OK);
	ck_assert_int_eq(ti.dims[0], 6);
	for (int i = 0; i < 6; i++)
		ck_assert_float_eq(cout[i], (float)((i / 2) * 4 + (i % 2) * 3));
	run_close(&r);
	npu_ir_graph_free(g);
}
END_TEST

/*
 * Concat of two NonZero outputs [1, ka] and [1, kb] on axis 1: an NPU
 * Concat with leading dims 1 would be built in place, its inputs in their
 * slices of the output; on the host the result is compact, [1, ka + kb].
 */
START_TEST(dyn_concat_compact)
{
	npu_ir_graph *g = irb_graph(13);
	int a = irb_tensor(g, "a", NPU_DTYPE_FLOAT32, 1, D(6));
	int b = irb_tensor(g, "b", NPU_DTYPE_FLOAT32, 1, D(5));
	int na = irb_tensor(g, "na", 0, -1, NULL), nb = irb_tensor(g, "nb", 0, -1, NULL);
	int y = irb_tensor(g, "y", 0, -1, NULL);
	float av[6] = { 0, 1, 0, 2, 3, 0 }, bv[5] = { 4, 0, 0, 0, 5 };
	static const int64_t want[5] = { 1, 3, 4, 0, 4 };
	int64_t yv[11];
	npu_tensor in[2] = { { NULL, NPU_DTYPE_FLOAT32, av, sizeof(av) },
			     { NULL, NPU_DTYPE_FLOAT32, bv, sizeof(bv) } };
	npu_tensor out = { NULL, NPU_DTYPE_INT64, yv, sizeof(yv) };
	npu_tensor_info ti;
	struct npu_cmodel *cm;
	struct run r;

	irb_node(g, "NonZero", &a, 1, &na, 1);
	irb_node(g, "NonZero", &b, 1, &nb, 1);
	npu_ir_set_attr_int(irb_node(g, "Concat", (int[]){ na, nb }, 2, &y, 1), "axis", 1);
	irb_io(g, (int[]){ a, b }, 2, &y, 1);
	ck_assert_int_eq(compile(g, &cm), NPU_OK);
	run_open(&r, cm);
	ck_assert_int_eq(npu_run(r.ctx, in, 2, &out, 1), NPU_OK);
	ck_assert_int_eq(npu_context_last_run_output_info(r.ctx, 0, &ti), NPU_OK);
	ck_assert_int_eq(ti.rank, 2);
	ck_assert_int_eq(ti.dims[0], 1);
	ck_assert_int_eq(ti.dims[1], 5);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(yv[i], want[i]);
	run_close(&r);
	npu_ir_graph_free(g);
}
END_TEST

/*
 * After NonZero, a run-time K: v = x[x > 0] (Greater, NonZero, Squeeze,
 * Gather), K = Min(Shape(v), 3), TopK(v, K), ReduceSum(v) and ArgMax(v):
 * checked against C for 5 and then 2 positive values.
 */
static void topk_run(npu_context *ctx, const float *x)
{
	float vals[8], sum = 0, top[3];
	int64_t idx[8], am = 0, want_idx[3];
	float got_sum;
	int64_t got_am;
	npu_tensor in = { NULL, NPU_DTYPE_FLOAT32, (void *)x, 8 * sizeof(float) };
	npu_tensor out[4] = { { NULL, NPU_DTYPE_FLOAT32, vals, sizeof(vals) },
			      { NULL, NPU_DTYPE_INT64, idx, sizeof(idx) },
			      { NULL, NPU_DTYPE_FLOAT32, &got_sum, sizeof(got_sum) },
			      { NULL, NPU_DTYPE_INT64, &got_am, sizeof(got_am) } };
	float pos[8];
	int n = 0, k;
	npu_tensor_info ti;

	for (int i = 0; i < 8; i++)
		if (x[i] > 0)
			pos[n++] = x[i];
	for (int i = 0; i < n; i++) {
		sum += pos[i];
		if (pos[i] > pos[am])
			am = i;
	}
	k = n < 3 ? n : 3;
	for (int j = 0; j < k; j++) {
		int b = -1;

		for (int i = 0; i < n; i++) {
			bool used = false;

			for (int q = 0; q < j; q++)
				used |= want_idx[q] == i;
			if (!used && (b < 0 || pos[i] > pos[b]))
				b = i;
		}
		want_idx[j] = b;
		top[j] = pos[b];
	}
	ck_assert_int_eq(npu_run(ctx, &in, 1, out, 4), NPU_OK);
	ck_assert_int_eq(npu_context_last_run_output_info(ctx, 0, &ti), NPU_OK);
	ck_assert_int_eq(ti.dims[0], k);
	for (int j = 0; j < k; j++) {
		ck_assert_float_eq(vals[j], top[j]);
		ck_assert_int_eq(idx[j], want_idx[j]);
	}
	ck_assert_float_eq_tol(got_sum, sum, 1e-5f);
	ck_assert_int_eq(got_am, am);
}

START_TEST(dyn_topk_reduce)
{
	npu_ir_graph *g = irb_graph(13);
	float zero = 0;
	int64_t three = 3, ax0 = 0;
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 1, D(8));
	int c0 = irb_const(g, "zero", NPU_DTYPE_FLOAT32, 0, NULL, &zero);
	int c3 = irb_const(g, "three", NPU_DTYPE_INT64, 1, D(1), &three);
	int ca = irb_const(g, "ax0", NPU_DTYPE_INT64, 1, D(1), &ax0);
	int gt = irb_tensor(g, "gt", 0, -1, NULL), nz = irb_tensor(g, "nz", 0, -1, NULL);
	int sq = irb_tensor(g, "sq", 0, -1, NULL), v = irb_tensor(g, "v", 0, -1, NULL);
	int shp = irb_tensor(g, "shp", 0, -1, NULL), k = irb_tensor(g, "k", 0, -1, NULL);
	int tv = irb_tensor(g, "tv", 0, -1, NULL), ti = irb_tensor(g, "ti", 0, -1, NULL);
	int rs = irb_tensor(g, "rs", 0, -1, NULL), am = irb_tensor(g, "am", 0, -1, NULL);
	static const float x1[8] = { 0.5f, -1, 2, 0.25f, -3, 4, 1, -0.5f };
	static const float x2[8] = { -1, -2, 3, -4, -5, 0.5f, -7, -8 };
	struct npu_cmodel *cm;
	struct run r;

	irb_node(g, "Greater", (int[]){ x, c0 }, 2, &gt, 1);
	irb_node(g, "NonZero", &gt, 1, &nz, 1);
	irb_node(g, "Squeeze", (int[]){ nz, ca }, 2, &sq, 1);
	irb_node(g, "Gather", (int[]){ x, sq }, 2, &v, 1);
	irb_node(g, "Shape", &v, 1, &shp, 1);
	irb_node(g, "Min", (int[]){ shp, c3 }, 2, &k, 1);
	irb_node(g, "TopK", (int[]){ v, k }, 2, (int[]){ tv, ti }, 2);
	npu_ir_set_attr_int(irb_node(g, "ReduceSum", &v, 1, &rs, 1), "keepdims", 0);
	npu_ir_set_attr_int(irb_node(g, "ArgMax", &v, 1, &am, 1), "keepdims", 0);
	irb_io(g, &x, 1, (int[]){ tv, ti, rs, am }, 4);
	ck_assert_int_eq(compile(g, &cm), NPU_OK);
	run_open(&r, cm);
	topk_run(r.ctx, x1);
	topk_run(r.ctx, x2);
	run_close(&r);
	npu_ir_graph_free(g);
}
END_TEST

/* A node after NonZero the host has no code for: named, and why it must run there. */
START_TEST(dyn_refused_downstream)
{
	npu_ir_graph *g = irb_graph(13);
	int x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 2, D(4, 4));
	int nz = irb_tensor(g, "nz", 0, -1, NULL), f = irb_tensor(g, "f", 0, -1, NULL);
	int y = irb_tensor(g, "y", 0, -1, NULL);
	struct npu_cmodel *cm = NULL;
	npu_ir_node *n;

	irb_node(g, "NonZero", &x, 1, &nz, 1);
	irb_node(g, "Cast", &nz, 1, &f, 1);
	npu_ir_set_attr_int(&g->nodes[1], "to", NPU_DTYPE_FLOAT32);
	n = irb_node(g, "Softmax", &f, 1, &y, 1);
	free(n->name);
	n->name = strdup("sm");
	irb_io(g, &x, 1, &y, 1);
	ck_assert_int_eq(compile(g, &cm), NPU_ERR_UNSUPPORTED);
	ck_assert_ptr_null(cm);
	ck_assert_msg(strstr(npu_last_error(), "'Softmax' (node 'sm'") &&
		      strstr(npu_last_error(), "reads 'f'") &&
		      strstr(npu_last_error(), "known only at run time") &&
		      strstr(npu_last_error(), "no implementation"), "%s", npu_last_error());
	npu_ir_graph_free(g);
}
END_TEST

/* A host output larger than the buffer's bound is an error, not an overflow. */
START_TEST(dyn_bound_enforced)
{
	struct npu_host_tensor t[2] = {
		{ .seg = 0, .dtype = NPU_DTYPE_FLOAT32, .rank = 1, .dims = { 4 } },
		{ .seg = 0, .dtype = NPU_DTYPE_INT32, .rank = 2, .dims = { 1, 2 }, .dyn = 1 },
	};
	struct npu_host_step h = { .op = (char *)"NonZero", .opset = 13, .node = (char *)"nz",
				   .ninputs = 1, .noutputs = 1, .tensors = t };
	struct npu_dyn_shape shapes[1] = { { -1, { 0 } } };
	float x[4] = { 1, 0, 2, 0 }, x3[4] = { 1, 1, 1, 0 };
	int32_t y[2] = { -1, -1 };

	ck_assert_int_eq(npu_host_run(&h, (void *[]){ x }, (void *[]){ y }, shapes), NPU_OK);
	ck_assert_int_eq(shapes[0].rank, 2);
	ck_assert_int_eq(shapes[0].dims[1], 2);
	ck_assert_int_eq(y[0], 0);
	ck_assert_int_eq(y[1], 2);
	ck_assert_int_eq(npu_host_run(&h, (void *[]){ x3 }, (void *[]){ y }, shapes),
			 NPU_ERR_INTERNAL);
	ck_assert_msg(strstr(npu_last_error(), "host step nz (NonZero)") &&
		      strstr(npu_last_error(), "3 elements") &&
		      strstr(npu_last_error(), "buffer of 2"), "%s", npu_last_error());
}
END_TEST

static Suite *dynout_suite(void)
{
	Suite *s = suite_create("dynout");
	TCase *tc = tcase_create("runtime_size");

	tcase_add_test(tc, dyn_boolean_indexing);
	tcase_add_test(tc, dyn_buffer_too_small);
	tcase_add_test(tc, dyn_nms_postprocess);
	tcase_add_test(tc, dyn_unique_compress);
	tcase_add_test(tc, dyn_concat_compact);
	tcase_add_test(tc, dyn_topk_reduce);
	tcase_add_test(tc, dyn_refused_downstream);
	tcase_add_test(tc, dyn_bound_enforced);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(dynout_suite)
