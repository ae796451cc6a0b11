// SPDX-License-Identifier: MIT
/*
 * Data movement through the real engine (npu_tdev_run): DTDU TRANSPOSE, PAD,
 * FILL, COPY (conversion, remote broadcast), CSU GSDU chains (remote,
 * broadcast, indexed gather), TOPK and NMS, against C references.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npu_kern.h"
#include "npu_tdev.h"
#include "npu_test.h"

static struct npu_tdev *d;
static uint8_t *hb;

static void setup(void)
{
	d = npu_tdev_create(NULL, 64);
	ck_assert_ptr_nonnull(d);
	hb = npu_tdev_hbsm(d, 0, 0);
	ck_assert_ptr_nonnull(hb);
	srand(31);
}

static void teardown(void)
{
	npu_tdev_destroy(d);
	d = NULL;
}

static struct npu_hw_insn *one(struct npu_tprog *p, unsigned unit, unsigned op)
{
	npu_tprog_init(p);
	return npu_tprog_add(p, unit, op, 1, 1);
}

static struct npu_hw_completion run_n(struct npu_tprog *p, unsigned nclusters)
{
	struct npu_tdev_submit opt = { .nclusters = nclusters };
	struct npu_hw_completion c;

	memset(&c, 0, sizeof(c));
	npu_tdev_run(d, p, &opt, &c);
	npu_tprog_free(p);
	return c;
}

static struct npu_hw_completion run(struct npu_tprog *p)
{
	return run_n(p, 1);
}

#define ck_ok(c) ck_assert_msg((c).status == NPU_TASK_OK, "status %u detail %u insn %d", \
			       (c).status, (c).detail, (int)(c).insn_index)

START_TEST(test_dtdu_transpose)
{
	enum { R = 7, C = 13 };
	struct npu_tprog p;
	struct npu_hw_insn *in = one(&p, NPU_UNIT_DTDU, NPU_DTDU_TRANSPOSE);
	uint16_t *x = (uint16_t *)(hb + 0x1000), y[C * R];
	struct npu_hw_completion c;

	for (int i = 0; i < R * C; i++)
		x[i] = (uint16_t)(rand() & 0xffff);
	/* x is [C (inner), R]: x[r][c]; y is [R (inner), C]: y[c][r] */
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_BF16, 0x1000, 2, (uint32_t[]){ C, R });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_BF16, 0x2000, 2, (uint32_t[]){ R, C });
	c = run(&p);
	ck_ok(c);
	memcpy(y, hb + 0x2000, sizeof(y));
	for (int r = 0; r < R; r++)
		for (int cc = 0; cc < C; cc++)
			ck_assert_msg(y[cc * R + r] == x[r * C + cc], "y[%d][%d]", cc, r);
}
END_TEST

static void pad(unsigned mode, uint32_t value)
{
	enum { H = 4, W = 5, C = 2, PT = 2, PL = 1, PB = 1, PR = 3 };
	enum { OH = H + PT + PB, OW = W + PL + PR };
	struct npu_tprog p;
	struct npu_hw_insn *in = one(&p, NPU_UNIT_DTDU, NPU_DTDU_PAD);
	int8_t *x = (int8_t *)(hb + 0x1000), *y = (int8_t *)(hb + 0x2000);
	struct npu_hw_completion c;
	unsigned bad = 0;

	for (int i = 0; i < H * W * C; i++)
		x[i] = (int8_t)(rand() % 256 - 128);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_INT8, 0x1000, 3, (uint32_t[]){ C, W, H });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_INT8, 0x2000, 3, (uint32_t[]){ C, OW, OH });
	in->params.dtdu.pad_mode = (uint8_t)mode;
	in->params.dtdu.value = value;
	in->params.dtdu.pad_top = PT;
	in->params.dtdu.pad_left = PL;
	in->params.dtdu.pad_bottom = PB;
	in->params.dtdu.pad_right = PR;
	c = run(&p);
	ck_ok(c);
	for (int oh = 0; oh < OH; oh++)
		for (int ow = 0; ow < OW; ow++)
			for (int ch = 0; ch < C; ch++) {
				int ih = oh - PT, iw = ow - PL, e;
				int inside = ih >= 0 && ih < H && iw >= 0 && iw < W;

				if (mode == NPU_PAD_EDGE) {
					ih = ih < 0 ? 0 : ih >= H ? H - 1 : ih;
					iw = iw < 0 ? 0 : iw >= W ? W - 1 : iw;
				} else if (mode == NPU_PAD_REFLECT) {
					ih = ih < 0 ? -ih : ih >= H ? 2 * (H - 1) - ih : ih;
					iw = iw < 0 ? -iw : iw >= W ? 2 * (W - 1) - iw : iw;
				}
				if (mode == NPU_PAD_CONSTANT && !inside)
					e = (int8_t)value;
				else
					e = x[(ih * W + iw) * C + ch];
				bad += y[(oh * OW + ow) * C + ch] != e;
			}
	ck_assert_msg(!bad, "pad mode %u: %u mismatches", mode, bad);
}

START_TEST(test_dtdu_pad_constant)
{
	pad(NPU_PAD_CONSTANT, 0xa5);
}
END_TEST

START_TEST(test_dtdu_pad_edge_reflect)
{
	pad(NPU_PAD_EDGE, 0);
	pad(NPU_PAD_REFLECT, 0);
}
END_TEST

START_TEST(test_dtdu_fill)
{
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	uint16_t h;
	uint32_t w;

	memset(hb + 0x1000, 0x11, 0x200);
	/* bf16 1.5 = 0x3fc0 over a [10, 3] sub-tile with a 32-byte pitch */
	in = one(&p, NPU_UNIT_DTDU, NPU_DTDU_FILL);
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_BF16, 0x1000, 2, (uint32_t[]){ 10, 3 });
	npu_twu_level(&in->opnd[3], 1, 0, 32, 64);
	in->params.dtdu.value = 0xdead3fc0u;	/* only the low 16 bits count */
	c = run(&p);
	ck_ok(c);
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < 16; i++) {
			memcpy(&h, hb + 0x1000 + r * 32 + 2 * i, 2);
			ck_assert_uint_eq(h, i < 10 ? 0x3fc0 : 0x1111);
		}
	/* int32 fill */
	in = one(&p, NPU_UNIT_DTDU, NPU_DTDU_FILL);
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_INT32, 0x1100, 1, (uint32_t[]){ 5 });
	in->params.dtdu.value = 0x80000001u;
	c = run(&p);
	ck_ok(c);
	for (int i = 0; i < 5; i++) {
		memcpy(&w, hb + 0x1100 + 4 * i, 4);
		ck_assert_uint_eq(w, 0x80000001u);
	}
	memcpy(&w, hb + 0x1100 + 20, 4);
	ck_assert_uint_eq(w, 0x11111111u);
}
END_TEST

START_TEST(test_dtdu_copy_convert)
{
	enum { N = 10 };
	const float x[N] = { 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 126.6f, 300.0f, -300.0f, -7.49f, NAN };
	const int8_t e8[N] = { 0, 2, 2, 0, -2, 127, 127, -128, -7, 0 };
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	int8_t *y = (int8_t *)(hb + 0x2000);

	memcpy(hb + 0x1000, x, sizeof(x));
	/* fp32 -> int8: half-even, saturate, NaN -> 0 */
	in = one(&p, NPU_UNIT_DTDU, NPU_DTDU_COPY);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0x1000, 1, (uint32_t[]){ N });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_INT8, 0x2000, 1, (uint32_t[]){ N });
	c = run(&p);
	ck_ok(c);
	for (int i = 0; i < N; i++)
		ck_assert_msg(y[i] == e8[i], "fp32->int8 [%d]: %d want %d", i, y[i], e8[i]);
	/* int8 -> bf16 as a [2, 5] walk into a [10] walk (element order kept) */
	in = one(&p, NPU_UNIT_DTDU, NPU_DTDU_COPY);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_INT8, 0x2000, 2, (uint32_t[]){ 2, 5 });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_BF16, 0x3000, 1, (uint32_t[]){ N });
	c = run(&p);
	ck_ok(c);
	for (int i = 0; i < N; i++) {
		uint16_t h;

		memcpy(&h, hb + 0x3000 + 2 * i, 2);
		ck_assert_msg(npu_bf16_to_f32(h) == (float)e8[i], "int8->bf16 [%d]", i);
	}
}
END_TEST

START_TEST(test_dtdu_copy_broadcast_remote)
{
	enum { N = 300 };
	struct npu_tprog p;
	struct npu_hw_insn *in = one(&p, NPU_UNIT_DTDU, NPU_DTDU_COPY);
	struct npu_hw_completion c;

	for (int i = 0; i < N; i++)
		hb[0x1000 + i] = (uint8_t)(i * 7 + 3);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_UINT8, 0x1000, 1, (uint32_t[]){ N });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM_REMOTE, NPU_DT_UINT8, 0x8000, 1, (uint32_t[]){ N });
	in->opnd[3].cluster_mask = 1;
	in->opnd[3].tpb_mask = 0xF;
	c = run(&p);
	ck_ok(c);
	for (unsigned t = 0; t < 4; t++) {
		uint8_t *h = npu_tdev_hbsm(d, 0, t);

		ck_assert_msg(memcmp(h + 0x8000, hb + 0x1000, N) == 0, "tpb %u", t);
		ck_assert_uint_eq(h[0x8000 + N], 0);
	}
	/* cluster 1 was not named */
	ck_assert_uint_eq(npu_tdev_hbsm(d, 1, 0)[0x8000], 0);
}
END_TEST

/*
 * A two-descriptor chain in local HBSM: rows to TPB 2 of (logical = physical)
 * cluster 1, then a broadcast to TPBs 1 and 3 of clusters 0 and 1.
 */
START_TEST(test_gsdu_chain_remote_broadcast)
{
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	struct npu_hw_gsdu_desc g[2];

	for (int i = 0; i < 256; i++)
		hb[0x1000 + i] = (uint8_t)(255 - i);
	memset(g, 0, sizeof(g));
	/* 4 rows of 16 bytes, source pitch 32, destination pitch 20 */
	g[0].src_space = NPU_SPACE_HBSM;
	g[0].dst_space = NPU_SPACE_HBSM_REMOTE;
	g[0].src = 0x1000;
	g[0].dst = 0x9000;
	g[0].row_bytes = 16;
	g[0].rows = 4;
	g[0].src_stride = 32;
	g[0].dst_stride = 20;
	g[0].dst_cluster_mask = 2;
	g[0].dst_tpb_mask = 4;
	g[0].next = 0x500 + sizeof(g[0]);
	g[1].src_space = NPU_SPACE_HBSM;
	g[1].dst_space = NPU_SPACE_HBSM_REMOTE;
	g[1].src = 0x1080;
	g[1].dst = 0xa000;
	g[1].row_bytes = 64;
	g[1].rows = 1;
	g[1].dst_cluster_mask = 3;
	g[1].dst_tpb_mask = 0xA;
	memcpy(hb + 0x500, g, sizeof(g));

	in = one(&p, NPU_UNIT_CSU, NPU_CSU_GSDU);
	in->params.csu.chain_space = NPU_SPACE_HBSM;
	in->params.csu.chain_addr = 0x500;
	c = run_n(&p, 2);
	ck_ok(c);
	{
		uint8_t *r = npu_tdev_hbsm(d, 1, 2);

		for (int row = 0; row < 4; row++) {
			ck_assert(memcmp(r + 0x9000 + row * 20, hb + 0x1000 + row * 32, 16) == 0);
			if (row < 3)
				ck_assert_uint_eq(r[0x9000 + row * 20 + 16], 0);
		}
		ck_assert_uint_eq(npu_tdev_hbsm(d, 1, 1)[0x9000], 0);
	}
	for (unsigned cl = 0; cl < 2; cl++)
		for (unsigned t = 0; t < 4; t++) {
			uint8_t *r = npu_tdev_hbsm(d, cl, t);

			if (t == 1 || t == 3)
				ck_assert_msg(memcmp(r + 0xa000, hb + 0x1080, 64) == 0, "c%u t%u", cl, t);
			else
				ck_assert_msg(r[0xa000] == 0 && r[0xa000 + 63] == 0, "c%u t%u", cl, t);
		}
}
END_TEST

START_TEST(test_gsdu_indexed_gather)
{
	enum { ROWS = 6, RB = 12, STRIDE = 16 };
	const uint32_t idx[ROWS] = { 5, 0, 9, 9, 2, 7 };
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	struct npu_hw_gsdu_desc g;

	for (int i = 0; i < 10 * STRIDE; i++)
		hb[0x1000 + i] = (uint8_t)(i * 13 + 1);
	memcpy(hb + 0x600, idx, sizeof(idx));
	memset(&g, 0, sizeof(g));
	g.flags = NPU_GSDU_F_INDEXED;
	g.src_space = NPU_SPACE_HBSM;
	g.dst_space = NPU_SPACE_HBSM;
	g.src = 0x1000;
	g.dst = 0x2000;
	g.row_bytes = RB;
	g.rows = ROWS;
	g.src_stride = STRIDE;
	g.dst_stride = RB;
	g.index_addr = 0x600;
	memcpy(hb + 0x700, &g, sizeof(g));
	in = one(&p, NPU_UNIT_CSU, NPU_CSU_GSDU);
	in->params.csu.chain_space = NPU_SPACE_HBSM;
	in->params.csu.chain_addr = 0x700;
	c = run(&p);
	ck_ok(c);
	for (int i = 0; i < ROWS; i++)
		ck_assert_msg(memcmp(hb + 0x2000 + i * RB, hb + 0x1000 + idx[i] * STRIDE, RB) == 0,
			      "row %d", i);
	ck_assert_uint_eq(hb[0x2000 + ROWS * RB], 0);
}
END_TEST

/* An index at or past the limit ends the task before any row is read with it. */
START_TEST(test_gsdu_index_limit)
{
	enum { ROWS = 4, RB = 8 };
	const uint32_t idx[ROWS] = { 1, 3, 4, 0 };	/* row 2 is past a 4-row table */
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	struct npu_hw_gsdu_desc g;

	for (int i = 0; i < 4 * RB; i++)
		hb[0x1000 + i] = (uint8_t)(i + 1);
	memset(hb + 0x2000, 0, ROWS * RB);
	memcpy(hb + 0x600, idx, sizeof(idx));
	memset(&g, 0, sizeof(g));
	g.flags = NPU_GSDU_F_INDEXED;
	g.src_space = NPU_SPACE_HBSM;
	g.dst_space = NPU_SPACE_HBSM;
	g.src = 0x1000;
	g.dst = 0x2000;
	g.row_bytes = RB;
	g.rows = ROWS;
	g.src_stride = RB;
	g.dst_stride = RB;
	g.index_addr = 0x600;
	g.index_limit = 4;
	memcpy(hb + 0x700, &g, sizeof(g));
	in = one(&p, NPU_UNIT_CSU, NPU_CSU_GSDU);
	in->params.csu.chain_space = NPU_SPACE_HBSM;
	in->params.csu.chain_addr = 0x700;
	c = run(&p);
	ck_assert_uint_eq(c.status, NPU_TASK_INDEX_FAULT);
	ck_assert_uint_eq(c.fault_addr, 4);	/* the index */
	ck_assert_uint_eq(c.detail, 4);		/* the limit */
	ck_assert_uint_eq(c.detail2, 2);	/* the row */
	ck_assert_str_eq(npu_core_status_str(c.status), "index out of range");
	/* Rows before it moved; it and the rows after did not. */
	ck_assert(memcmp(hb + 0x2000, hb + 0x1000 + 1 * RB, RB) == 0);
	ck_assert(memcmp(hb + 0x2000 + RB, hb + 0x1000 + 3 * RB, RB) == 0);
	ck_assert_uint_eq(hb[0x2000 + 2 * RB], 0);
	ck_assert_uint_eq(hb[0x2000 + 3 * RB], 0);
	/* Within the limit the same chain runs. */
	((uint32_t *)(hb + 0x600))[2] = 2;
	in = one(&p, NPU_UNIT_CSU, NPU_CSU_GSDU);
	in->params.csu.chain_space = NPU_SPACE_HBSM;
	in->params.csu.chain_addr = 0x700;
	c = run(&p);
	ck_ok(c);
	ck_assert(memcmp(hb + 0x2000 + 2 * RB, hb + 0x1000 + 2 * RB, RB) == 0);
	/* A limit without INDEXED is a malformed descriptor. */
	g.flags = 0;
	g.index_addr = 0;
	memcpy(hb + 0x700, &g, sizeof(g));
	in = one(&p, NPU_UNIT_CSU, NPU_CSU_GSDU);
	in->params.csu.chain_space = NPU_SPACE_HBSM;
	in->params.csu.chain_addr = 0x700;
	c = run(&p);
	ck_assert_uint_eq(c.status, NPU_TASK_ILLEGAL_INSN);
	ck_assert_uint_eq(c.detail, NPU_IE_CHAIN);
}
END_TEST

/* One GSDU task of the descriptor @g placed at HBSM 0x700. */
static struct npu_hw_completion run_desc(const struct npu_hw_gsdu_desc *g)
{
	struct npu_tprog p;
	struct npu_hw_insn *in;

	memcpy(hb + 0x700, g, sizeof(*g));
	in = one(&p, NPU_UNIT_CSU, NPU_CSU_GSDU);
	in->params.csu.chain_space = NPU_SPACE_HBSM;
	in->params.csu.chain_addr = 0x700;
	return run(&p);
}

/*
 * 1.3 DST_INDEXED: source row i goes to destination row index[i], rows in
 * order (of two equal indices the later row stays), at the cost of the
 * source-indexed form.
 */
START_TEST(test_gsdu_dst_indexed_scatter)
{
	enum { ROWS = 5, RB = 12, STRIDE = 16, DROWS = 10 };
	const uint32_t idx[ROWS] = { 7, 0, 3, 7, 9 };	/* 7 twice: row 3 stays */
	uint8_t want[DROWS * STRIDE];
	struct npu_hw_completion c;
	struct npu_hw_gsdu_desc g;
	uint64_t cycles;

	for (int i = 0; i < ROWS * RB; i++)
		hb[0x1000 + i] = (uint8_t)(i * 7 + 3);
	for (int i = 0; i < DROWS * STRIDE; i++)
		hb[0x2000 + i] = want[i] = (uint8_t)(200 - i);
	for (int i = 0; i < ROWS; i++)
		memcpy(want + idx[i] * STRIDE, hb + 0x1000 + i * RB, RB);
	memcpy(hb + 0x600, idx, sizeof(idx));
	memset(&g, 0, sizeof(g));
	g.flags = NPU_GSDU_F_DST_INDEXED;
	g.src_space = NPU_SPACE_HBSM;
	g.dst_space = NPU_SPACE_HBSM;
	g.src = 0x1000;
	g.dst = 0x2000;
	g.row_bytes = RB;
	g.rows = ROWS;
	g.src_stride = RB;
	g.dst_stride = STRIDE;
	g.index_addr = 0x600;
	g.index_limit = DROWS;
	c = run_desc(&g);
	ck_ok(c);
	cycles = c.cycles;
	ck_assert(memcmp(hb + 0x2000, want, sizeof(want)) == 0);
	ck_assert(memcmp(hb + 0x2000 + 7 * STRIDE, hb + 0x1000 + 3 * RB, RB) == 0);
	/* The gather of the same rows and bytes costs the same. */
	g.flags = NPU_GSDU_F_INDEXED;
	g.src_stride = STRIDE;
	g.dst_stride = RB;
	g.src = 0x2000;
	g.dst = 0x3000;
	c = run_desc(&g);
	ck_ok(c);
	ck_assert_uint_eq(c.cycles, cycles);
	/* Both sides indexed by one table: no meaning, a malformed descriptor. */
	g.flags = NPU_GSDU_F_INDEXED | NPU_GSDU_F_DST_INDEXED;
	c = run_desc(&g);
	ck_assert_uint_eq(c.status, NPU_TASK_ILLEGAL_INSN);
	ck_assert_uint_eq(c.detail, NPU_IE_CHAIN);
	/* A misaligned table too. */
	g.flags = NPU_GSDU_F_DST_INDEXED;
	g.index_addr = 0x602;
	c = run_desc(&g);
	ck_assert_uint_eq(c.status, NPU_TASK_ILLEGAL_INSN);
	ck_assert_uint_eq(c.detail, NPU_IE_CHAIN);
}
END_TEST

/*
 * An index at or past the destination's rows ends the task before the
 * descriptor writes anything, not even the rows before it (a KV cache is
 * never written past its end, nor partly); the descriptor before it in the
 * chain has been performed.
 */
START_TEST(test_gsdu_dst_index_limit)
{
	enum { ROWS = 4, RB = 8, DROWS = 6 };
	const uint32_t idx[ROWS] = { 1, 5, 6, 0 };	/* row 2 is past a 6-row cache */
	struct npu_hw_gsdu_desc g[2];
	struct npu_hw_completion c;
	uint8_t before[DROWS * RB];

	for (int i = 0; i < ROWS * RB; i++)
		hb[0x1000 + i] = (uint8_t)(i + 1);
	for (int i = 0; i < DROWS * RB; i++)
		hb[0x2000 + i] = before[i] = (uint8_t)(0x80 + i);
	memset(hb + 0x3000, 0, RB);
	memcpy(hb + 0x600, idx, sizeof(idx));
	memset(g, 0, sizeof(g));
	/* First a plain copy of one row, then the scatter. */
	g[0].src_space = g[0].dst_space = NPU_SPACE_HBSM;
	g[0].src = 0x1000;
	g[0].dst = 0x3000;
	g[0].row_bytes = RB;
	g[0].rows = 1;
	g[0].next = 0x700 + sizeof(g[0]);
	g[1].flags = NPU_GSDU_F_DST_INDEXED;
	g[1].src_space = g[1].dst_space = NPU_SPACE_HBSM;
	g[1].src = 0x1000;
	g[1].dst = 0x2000;
	g[1].row_bytes = RB;
	g[1].rows = ROWS;
	g[1].src_stride = RB;
	g[1].dst_stride = RB;
	g[1].index_addr = 0x600;
	g[1].index_limit = DROWS;
	memcpy(hb + 0x700 + sizeof(g[0]), &g[1], sizeof(g[1]));
	c = run_desc(&g[0]);
	ck_assert_uint_eq(c.status, NPU_TASK_INDEX_FAULT);
	ck_assert_uint_eq(c.fault_addr, 6);	/* the index */
	ck_assert_uint_eq(c.detail, DROWS);	/* the limit */
	ck_assert_uint_eq(c.detail2, 2);	/* the row */
	ck_assert(memcmp(hb + 0x2000, before, sizeof(before)) == 0);
	ck_assert(memcmp(hb + 0x3000, hb + 0x1000, RB) == 0);
	/* A negative int32 row is 2^32 - 1 to the device: past any limit. */
	((uint32_t *)(hb + 0x600))[2] = UINT32_MAX;
	c = run_desc(&g[0]);
	ck_assert_uint_eq(c.status, NPU_TASK_INDEX_FAULT);
	ck_assert_uint_eq(c.fault_addr, UINT32_MAX);
	ck_assert(memcmp(hb + 0x2000, before, sizeof(before)) == 0);
	/* Within the limit the same chain writes every row. */
	((uint32_t *)(hb + 0x600))[2] = 2;
	c = run_desc(&g[0]);
	ck_ok(c);
	ck_assert(memcmp(hb + 0x2000 + 1 * RB, hb + 0x1000, RB) == 0);
	ck_assert(memcmp(hb + 0x2000 + 5 * RB, hb + 0x1000 + RB, RB) == 0);
	ck_assert(memcmp(hb + 0x2000 + 2 * RB, hb + 0x1000 + 2 * RB, RB) == 0);
	ck_assert(memcmp(hb + 0x2000, hb + 0x1000 + 3 * RB, RB) == 0);
	ck_assert(memcmp(hb + 0x2000 + 3 * RB, before + 3 * RB, RB) == 0);
}
END_TEST

START_TEST(test_gsdu_bad_chain)
{
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	struct npu_hw_gsdu_desc g;

	memset(&g, 0, sizeof(g));
	g.src_space = NPU_SPACE_HBSM;
	g.dst_space = NPU_SPACE_HBSM_REMOTE;
	g.src = 0x1000;
	g.dst = 0x2000;
	g.row_bytes = 8;
	g.rows = 1;
	g.dst_cluster_mask = 2;		/* logical cluster 1, outside a 1-cluster task */
	g.dst_tpb_mask = 1;
	memcpy(hb + 0x700, &g, sizeof(g));
	in = one(&p, NPU_UNIT_CSU, NPU_CSU_GSDU);
	in->params.csu.chain_space = NPU_SPACE_HBSM;
	in->params.csu.chain_addr = 0x700;
	c = run(&p);
	ck_assert_uint_eq(c.status, NPU_TASK_ILLEGAL_INSN);
	ck_assert_uint_eq(c.detail, NPU_IE_CHAIN);
}
END_TEST

START_TEST(test_csu_topk)
{
	enum { ROWS = 3, N = 20, K = 5 };
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	float x[ROWS * N], v[ROWS * K];
	int32_t ix[ROWS * K];

	for (int i = 0; i < ROWS * N; i++)
		x[i] = (float)(rand() % 50) - 25;	/* ties likely */
	memcpy(hb + 0x1000, x, sizeof(x));
	in = one(&p, NPU_UNIT_CSU, NPU_CSU_TOPK);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0x1000, 2, (uint32_t[]){ N, ROWS });
	npu_twu_dense(&in->opnd[2], NPU_SPACE_HBSM, NPU_DT_INT32, 0x2000, 2, (uint32_t[]){ K, ROWS });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x3000, 2, (uint32_t[]){ K, ROWS });
	in->params.csu.k = K;
	in->params.csu.largest = 1;
	c = run(&p);
	ck_ok(c);
	memcpy(ix, hb + 0x2000, sizeof(ix));
	memcpy(v, hb + 0x3000, sizeof(v));
	for (int r = 0; r < ROWS; r++) {
		int used[N] = { 0 };

		/* reference: repeated selection of the max, lowest index on ties */
		for (int k = 0; k < K; k++) {
			int best = -1;

			for (int i = 0; i < N; i++)
				if (!used[i] && (best < 0 || x[r * N + i] > x[r * N + best]))
					best = i;
			used[best] = 1;
			ck_assert_msg(ix[r * K + k] == best, "row %d k %d: idx %d want %d",
				      r, k, ix[r * K + k], best);
			ck_assert(v[r * K + k] == x[r * N + best]);
		}
	}
}
END_TEST

START_TEST(test_csu_nms)
{
	enum { N = 6, MAXO = 5 };
	/* [y1, x1, y2, x2] */
	const float boxes[N * 4] = {
		0, 0, 10, 10,		/* 0 */
		1, 1, 11, 11,		/* 1: IoU with 0 = 81/119 = 0.68 */
		20, 20, 30, 30,		/* 2 */
		0, 0, 10, 5,		/* 3: IoU with 0 = 0.5 */
		21, 21, 29, 29,		/* 4: IoU with 2 = 0.64 */
		50, 50, 60, 60,		/* 5: score under the threshold */
	};
	const float scores[N] = { 0.9f, 0.95f, 0.8f, 0.7f, 0.85f, 0.05f };
	/* order by score: 1, 0, 4, 2, 3; keep 1; 0 suppressed (0.68); 4 keep;
	 * 2 suppressed by 4 (0.64); 3 vs 1: inter 9*4=36 / (100+50-36) = 0.32 keep */
	const int32_t want[MAXO] = { 1, 4, 3, -1, -1 };
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	int32_t sel[MAXO], count;

	memcpy(hb + 0x1000, boxes, sizeof(boxes));
	memcpy(hb + 0x1100, scores, sizeof(scores));
	memset(hb + 0x1200, 0x77, sizeof(sel));
	in = one(&p, NPU_UNIT_CSU, NPU_CSU_NMS);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0x1000, 2, (uint32_t[]){ 4, N });
	npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_FP32, 0x1100, 1, (uint32_t[]){ N });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_INT32, 0x1200, 1, (uint32_t[]){ MAXO });
	in->params.csu.max_out = MAXO;
	in->params.csu.iou_threshold = npu_f32_bits(0.6f);
	in->params.csu.score_threshold = npu_f32_bits(0.1f);
	in->params.csu.count_addr = 0x1300;
	c = run(&p);
	ck_ok(c);
	memcpy(sel, hb + 0x1200, sizeof(sel));
	memcpy(&count, hb + 0x1300, 4);
	for (int i = 0; i < MAXO; i++)
		ck_assert_msg(sel[i] == want[i], "sel[%d] = %d want %d", i, sel[i], want[i]);
	ck_assert_int_eq(count, 3);
}
END_TEST

static Suite *unit_move_suite(void)
{
	Suite *s = suite_create("unit_move");
	TCase *tc = tcase_create("move");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_dtdu_transpose);
	tcase_add_test(tc, test_dtdu_pad_constant);
	tcase_add_test(tc, test_dtdu_pad_edge_reflect);
	tcase_add_test(tc, test_dtdu_fill);
	tcase_add_test(tc, test_dtdu_copy_convert);
	tcase_add_test(tc, test_dtdu_copy_broadcast_remote);
	tcase_add_test(tc, test_gsdu_chain_remote_broadcast);
	tcase_add_test(tc, test_gsdu_indexed_gather);
	tcase_add_test(tc, test_gsdu_index_limit);
	tcase_add_test(tc, test_gsdu_dst_indexed_scatter);
	tcase_add_test(tc, test_gsdu_dst_index_limit);
	tcase_add_test(tc, test_gsdu_bad_chain);
	tcase_add_test(tc, test_csu_topk);
	tcase_add_test(tc, test_csu_nms);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(unit_move_suite)
