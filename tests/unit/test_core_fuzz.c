// SPDX-License-Identifier: MIT
/*
 * Robustness: thousands of tasks built from mutated instruction templates
 * (every unit and opcode), fully random instructions and random
 * descriptors, plus random MMIO traffic.  Every task must end with a
 * defined status and a written completion record, and the device must
 * still run a known-good task afterwards.  A seeded xorshift PRNG keeps
 * every run identical; CK_RUN_CASE=fuzz narrows a failure down.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_tdev.h"
#include "npu_test.h"
#include "npu_test_rng.h"

#define RD(d, off) npu_core_mmio_read((d)->core, (off))
#define WR(d, off, v) npu_core_mmio_write((d)->core, (off), (v))

#define HBSM_SIZE (64u << 10)	/* npu_tdev_small's */
#define SRAM_SIZE (1u << 20)	/* npu_tdev_small's */
#define DDR_VA 0x20000000ull
#define DDR_LEN (64u << 10)
#define GSDU_CHAIN 0x8000u

/* Semantic operand views above this many elements are tamed (kept
 * valid-but-cheap) so that the fuzz stays fast under ASan. */
#define MAX_FUZZ_ELEMS 4096

static uint64_t rng;

static uint32_t rnd(void)
{
	return npu_test_rnd(&rng);
}

static struct npu_tdev *fuzz_dev(void)
{
	struct npu_tdev *d = npu_tdev_small(3, 2, 0x4, 1);

	ck_assert_ptr_nonnull(d);
	return d;
}

/* ---- templates: one valid instruction per unit and opcode ---- */

static void twu(struct npu_hw_twu *t, unsigned space, unsigned dtype,
		uint64_t base, unsigned nd, uint32_t d0, uint32_t d1,
		uint32_t d2, uint32_t d3)
{
	uint32_t dims[4] = { d0, d1, d2, d3 };

	npu_twu_dense(t, space, dtype, base, nd, dims);
}

enum {
	T_COPY, T_FILL, T_TRANSPOSE, T_PAD,
	T_UNARY, T_BINARY, T_REDUCE, T_SOFTMAX, T_LOGSOFTMAX, T_LAYERNORM, T_POOL,
	T_MATMUL, T_CONV,
	T_GSDU, T_TOPK, T_NMS,
	T_NOP, T_BARRIER,
	T_DMA_IN, T_DMA_BCAST, T_DMA_DDR,
	NTEMPL
};

static const char *const templ_name[NTEMPL] = {
	"DTDU COPY", "DTDU FILL", "DTDU TRANSPOSE", "DTDU PAD",
	"CVU UNARY", "CVU BINARY", "CVU REDUCE", "CVU SOFTMAX", "CVU LOGSOFTMAX",
	"CVU LAYERNORM", "CVU POOL", "TCU MATMUL", "TCU CONV2D",
	"CSU GSDU", "CSU TOPK", "CSU NMS", "SYNC NOP", "SYNC BARRIER",
	"DMA DDR->SRAM", "DMA SRAM->HBSM broadcast", "DMA DDR->DDR",
};

static void templ(unsigned k, struct npu_hw_insn *in)
{
	struct npu_hw_twu *s0 = &in->opnd[NPU_OPND_SRC0], *s1 = &in->opnd[NPU_OPND_SRC1];
	struct npu_hw_twu *s2 = &in->opnd[NPU_OPND_SRC2], *dst = &in->opnd[NPU_OPND_DST];
	const unsigned H = NPU_SPACE_HBSM, F = NPU_DT_FP32;

	memset(in, 0, sizeof(*in));
	in->cluster_mask = 1;
	in->tpb_mask = 1;
	switch (k) {
	case T_COPY:
		in->unit = NPU_UNIT_DTDU;
		in->opcode = NPU_DTDU_COPY;
		twu(s0, H, NPU_DT_UINT8, 0, 1, 64, 0, 0, 0);
		twu(dst, H, NPU_DT_UINT8, 0x1000, 1, 64, 0, 0, 0);
		break;
	case T_FILL:
		in->unit = NPU_UNIT_DTDU;
		in->opcode = NPU_DTDU_FILL;
		twu(dst, H, NPU_DT_INT32, 0x2000, 2, 8, 4, 0, 0);
		in->params.dtdu.value = 0x12345678;
		break;
	case T_TRANSPOSE:
		in->unit = NPU_UNIT_DTDU;
		in->opcode = NPU_DTDU_TRANSPOSE;
		twu(s0, H, NPU_DT_UINT8, 0, 2, 4, 8, 0, 0);
		twu(dst, H, NPU_DT_UINT8, 0x3000, 2, 8, 4, 0, 0);
		break;
	case T_PAD:
		in->unit = NPU_UNIT_DTDU;
		in->opcode = NPU_DTDU_PAD;
		twu(s0, H, NPU_DT_UINT8, 0, 3, 2, 3, 3, 0);
		twu(dst, H, NPU_DT_UINT8, 0x3100, 3, 2, 5, 5, 0);
		in->params.dtdu.pad_top = 1;
		in->params.dtdu.pad_left = 1;
		in->params.dtdu.pad_bottom = 1;
		in->params.dtdu.pad_right = 1;
		break;
	case T_UNARY:
		in->unit = NPU_UNIT_CVU;
		in->opcode = NPU_CVU_UNARY;
		twu(s0, H, F, 0x4000, 1, 16, 0, 0, 0);
		twu(dst, H, F, 0x4800, 1, 16, 0, 0, 0);
		in->params.cvu.fn = NPU_FN_RELU;
		break;
	case T_BINARY:
		in->unit = NPU_UNIT_CVU;
		in->opcode = NPU_CVU_BINARY;
		twu(s0, H, F, 0x4000, 1, 16, 0, 0, 0);
		twu(s1, H, F, 0x4040, 1, 16, 0, 0, 0);
		twu(dst, H, F, 0x4800, 1, 16, 0, 0, 0);
		in->params.cvu.fn = NPU_FN_ADD;
		break;
	case T_REDUCE:
		in->unit = NPU_UNIT_CVU;
		in->opcode = NPU_CVU_REDUCE;
		twu(s0, H, F, 0x4000, 2, 8, 2, 0, 0);
		twu(dst, H, F, 0x4800, 1, 2, 0, 0, 0);
		in->params.cvu.fn = NPU_REDUCE_SUM;
		in->params.cvu.reduce_levels = 1;
		break;
	case T_SOFTMAX:
	case T_LOGSOFTMAX:
		in->unit = NPU_UNIT_CVU;
		in->opcode = k == T_SOFTMAX ? NPU_CVU_SOFTMAX : NPU_CVU_LOGSOFTMAX;
		twu(s0, H, F, 0x4000, 2, 8, 2, 0, 0);
		twu(dst, H, F, 0x4800, 2, 8, 2, 0, 0);
		in->params.cvu.reduce_levels = 1;
		break;
	case T_LAYERNORM:
		in->unit = NPU_UNIT_CVU;
		in->opcode = NPU_CVU_LAYERNORM;
		twu(s0, H, F, 0x4000, 2, 8, 2, 0, 0);
		twu(s1, H, F, 0x4100, 2, 8, 2, 0, 0);
		twu(s2, H, F, 0x4200, 2, 8, 2, 0, 0);
		twu(dst, H, F, 0x4800, 2, 8, 2, 0, 0);
		in->params.cvu.reduce_levels = 1;
		in->params.cvu.imm[0] = npu_f32_bits(1e-5f);
		break;
	case T_POOL:
		in->unit = NPU_UNIT_CVU;
		in->opcode = NPU_CVU_POOL;
		twu(s0, H, F, 0x4000, 3, 1, 4, 4, 0);
		twu(dst, H, F, 0x4800, 3, 1, 2, 2, 0);
		in->params.cvu.fn = NPU_POOL_MAX;
		in->params.cvu.kernel_h = 2;
		in->params.cvu.kernel_w = 2;
		in->params.cvu.stride_h = 2;
		in->params.cvu.stride_w = 2;
		in->params.cvu.dil_h = 1;
		in->params.cvu.dil_w = 1;
		break;
	case T_MATMUL:
		in->unit = NPU_UNIT_TCU;
		in->opcode = NPU_TCU_MATMUL;
		twu(s0, H, NPU_DT_INT8, 0x5000, 2, 4, 2, 0, 0);	/* A [K, M] */
		twu(s1, H, NPU_DT_INT8, 0x5100, 2, 4, 4, 0, 0);	/* B [N, K] */
		twu(dst, H, NPU_DT_INT32, 0x5200, 2, 4, 2, 0, 0);	/* C [N, M] */
		break;
	case T_CONV:
		in->unit = NPU_UNIT_TCU;
		in->opcode = NPU_TCU_CONV2D;
		twu(s0, H, NPU_DT_INT8, 0x5000, 3, 2, 3, 3, 0);	/* X [C, W, H] */
		twu(s1, H, NPU_DT_INT8, 0x5100, 4, 2, 2, 1, 1);	/* Wt [OC, C, KW, KH] */
		twu(dst, H, NPU_DT_INT32, 0x5400, 3, 2, 3, 3, 0);	/* Y [OC, OW, OH] */
		in->params.tcu.stride_h = 1;
		in->params.tcu.stride_w = 1;
		in->params.tcu.dil_h = 1;
		in->params.tcu.dil_w = 1;
		in->params.tcu.groups = 1;
		break;
	case T_GSDU:
		in->unit = NPU_UNIT_CSU;
		in->opcode = NPU_CSU_GSDU;
		in->params.csu.chain_space = NPU_SPACE_HBSM;
		in->params.csu.chain_addr = GSDU_CHAIN;
		break;
	case T_TOPK:
		in->unit = NPU_UNIT_CSU;
		in->opcode = NPU_CSU_TOPK;
		twu(s0, H, F, 0x4000, 2, 8, 2, 0, 0);
		twu(dst, H, F, 0x6000, 2, 2, 2, 0, 0);
		twu(s2, H, NPU_DT_INT32, 0x6100, 2, 2, 2, 0, 0);
		in->params.csu.k = 2;
		in->params.csu.largest = 1;
		break;
	case T_NMS:
		in->unit = NPU_UNIT_CSU;
		in->opcode = NPU_CSU_NMS;
		twu(s0, H, F, 0x6800, 2, 4, 4, 0, 0);	/* boxes [4, n] */
		twu(s1, H, F, 0x6900, 1, 4, 0, 0, 0);	/* scores [n] */
		twu(dst, H, NPU_DT_INT32, 0x6a00, 1, 2, 0, 0, 0);
		in->params.csu.max_out = 2;
		in->params.csu.iou_threshold = npu_f32_bits(0.5f);
		in->params.csu.count_addr = 0x6b00;
		break;
	case T_NOP:
		in->unit = NPU_UNIT_SYNC;
		in->opcode = NPU_SYNC_NOP;
		break;
	case T_BARRIER:
		in->unit = NPU_UNIT_SYNC;
		in->opcode = NPU_SYNC_BARRIER;
		in->tpb_mask = 0x3;
		in->params.sync.barrier_id = 1;
		break;
	case T_DMA_IN:
		in->unit = NPU_UNIT_DMA;
		in->opcode = NPU_DMA_COPY;
		in->cluster_mask = 0;
		in->tpb_mask = 0;
		twu(s0, NPU_SPACE_DDR, NPU_DT_UINT8, DDR_VA, 1, 256, 0, 0, 0);
		twu(dst, NPU_SPACE_SRAM, NPU_DT_UINT8, 0x100, 1, 256, 0, 0, 0);
		break;
	case T_DMA_BCAST:
		in->unit = NPU_UNIT_DMA;
		in->opcode = NPU_DMA_COPY;
		in->cluster_mask = 0;
		in->tpb_mask = 0;
		in->params.dma.engine = 1;
		twu(s0, NPU_SPACE_SRAM, NPU_DT_FP32, 0x100, 1, 16, 0, 0, 0);
		twu(dst, NPU_SPACE_HBSM_REMOTE, NPU_DT_FP32, 0x7000, 1, 16, 0, 0, 0);
		dst->cluster_mask = 1;
		dst->tpb_mask = 0x3;
		break;
	default:	/* T_DMA_DDR */
		in->unit = NPU_UNIT_DMA;
		in->opcode = NPU_DMA_COPY;
		in->cluster_mask = 0;
		in->tpb_mask = 0;
		twu(s0, NPU_SPACE_DDR, NPU_DT_UINT8, DDR_VA, 2, 64, 4, 0, 0);
		twu(dst, NPU_SPACE_DDR, NPU_DT_UINT8, DDR_VA + 0x8000, 2, 64, 4, 0, 0);
		break;
	}
}

/* A valid GSDU chain (one HBSM -> HBSM descriptor) and sane floats. */
static void plant_data(struct npu_tdev *d)
{
	struct npu_hw_gsdu_desc g = { 0 };
	static const float boxes[16] = {
		0, 1, 0, 5,	/* y1 of boxes 0..3 */
		0, 1, 4, 5,	/* x1 */
		2, 3, 2, 7,	/* y2 */
		2, 3, 6, 7,	/* x2 */
	};
	static const float scores[4] = { 0.9f, 0.8f, 0.7f, 0.6f };

	g.src_space = NPU_SPACE_HBSM;
	g.dst_space = NPU_SPACE_HBSM;
	g.row_bytes = 64;
	g.src = 0;
	g.dst = 0x9000;
	g.rows = 1;
	for (unsigned c = 0; c < 3; c++) {
		for (unsigned t = 0; t < 2; t++) {
			uint8_t *h = npu_tdev_hbsm(d, c, t);
			float f[64];

			for (unsigned i = 0; i < 64; i++)
				f[i] = (float)((int)i % 7 - 3) * 0.5f;
			memcpy(h + 0x4000, f, sizeof(f));
			memcpy(h + 0x6800, boxes, sizeof(boxes));
			memcpy(h + 0x6900, scores, sizeof(scores));
			memcpy(h + GSDU_CHAIN, &g, sizeof(g));
		}
	}
}

static uint64_t fuzz_root(struct npu_tdev *d)
{
	uint64_t root = npu_tdev_ctx(d);
	uint8_t *ddr = npu_tdev_buf(d, root, DDR_VA, DDR_LEN, true);

	for (unsigned i = 0; i < DDR_LEN; i++)
		ddr[i] = (uint8_t)(i * 31 + 7);
	return root;
}

START_TEST(test_templates_valid)
{
	struct npu_tdev *d = fuzz_dev();
	struct npu_tdev_submit o = { .nclusters = 1 };
	uint32_t seen_units = 0;

	o.root = fuzz_root(d);
	plant_data(d);
	for (unsigned k = 0; k < NTEMPL; k++) {
		struct npu_tprog p;
		struct npu_hw_completion c;
		int st;

		npu_tprog_init(&p);
		templ(k, npu_tprog_add(&p, 0, 0, 0, 0));
		seen_units |= 1u << p.insn[0].unit;
		st = npu_tdev_run(d, &p, &o, &c);
		ck_assert_msg(st == NPU_TASK_OK,
			      "template %s: status %d (%s) insn %u detail %u",
			      templ_name[k], st, npu_core_status_str((unsigned)st),
			      c.insn_index, c.detail);
		npu_tprog_free(&p);
	}
	ck_assert_uint_eq(seen_units, (1u << NPU_UNIT_COUNT) - 1);
	/* the GSDU template really moved its row */
	ck_assert_mem_eq(npu_tdev_hbsm(d, 0, 0) + 0x9000, npu_tdev_hbsm(d, 0, 0), 64);
	npu_tdev_destroy(d);
}
END_TEST

/* ---- mutation ---- */

static const int32_t interesting[] = {
	0, 1, -1, 2, 3, 4, 7, 8, 15, 16, 63, 64, 255, 256, 4095, 4096,
	65535, 65536, 0x7fffffff, (int32_t)0x80000000, 1 << 24, (1 << 24) + 1,
	-4096, 1000, 12,
};
#define NINTERESTING (sizeof(interesting) / sizeof(interesting[0]))

static int32_t pick_interesting(void)
{
	return interesting[rnd() % NINTERESTING];
}

static void mutate(struct npu_hw_insn *in)
{
	uint8_t *b = (uint8_t *)in;
	unsigned o = rnd() % NPU_OPNDS, l = rnd() % NPU_TWU_MAX_LEVELS;

	switch (rnd() % 10) {
	case 0:
	case 1:		/* flip random bytes anywhere */
		for (unsigned n = 1 + rnd() % 3; n; n--)
			b[rnd() % NPU_INSN_SIZE] ^= (uint8_t)(rnd() | 1);
		break;
	case 2:		/* flip one bit of the header, sync or walkers */
		b[rnd() % 400] ^= (uint8_t)(1u << (rnd() % 8));
		break;
	case 3:		/* an interesting walker level value */
		switch (rnd() % 3) {
		case 0: in->opnd[o].level[l].initial = pick_interesting(); break;
		case 1: in->opnd[o].level[l].step = pick_interesting(); break;
		default: in->opnd[o].level[l].final = pick_interesting(); break;
		}
		break;
	case 4:		/* walker shape fields */
		switch (rnd() % 6) {
		case 5: in->opnd[o].base += (uint64_t)(int64_t)((int32_t)(rnd() % 0x20000) - 0x10000); break;
		case 0: in->opnd[o].nlevels = (uint8_t)(rnd() % 7); break;
		case 1: in->opnd[o].space = (uint8_t)(rnd() % 6); break;
		case 2: in->opnd[o].dtype = (uint8_t)(rnd() % 8); break;
		case 3: in->opnd[o].base = (uint64_t)pick_interesting() & 0xffffff; break;
		default:
			in->opnd[o].cluster_mask = (uint16_t)(rnd() % 8);
			in->opnd[o].tpb_mask = (uint8_t)(rnd() % 5);
			break;
		}
		break;
	case 5: {	/* a repeat level on every used operand */
		in->repeat_levels = (uint8_t)(rnd() % 3);
		for (unsigned p = 0; p < NPU_OPNDS; p++) {
			struct npu_hw_twu *t = &in->opnd[p];

			if (t->nlevels && t->nlevels < NPU_TWU_MAX_LEVELS)
				npu_twu_level(t, t->nlevels, 0, rnd() % 2 ? 0 : 64,
					      rnd() % 2 ? 3 : 192);
		}
		break;
	}
	case 6: {	/* sync fields */
		unsigned w = rnd() % NPU_SYNC_WAITS, s = rnd() % NPU_SYNC_SIGNALS;

		if (rnd() % 2) {
			in->sync.wait[w].flags = (uint8_t)(rnd() % 3);
			in->sync.wait[w].counter = (uint8_t)(rnd() % 34);
			in->sync.wait[w].value = rnd() % 4;
			in->sync.wait[w].iter_step = rnd() % 3;
		} else {
			in->sync.signal[s].flags = (uint8_t)(rnd() % 32);
			in->sync.signal[s].counter = (uint8_t)(rnd() % 34);
			in->sync.signal[s].cluster_mask = (uint16_t)(rnd() % 8);
			in->sync.signal[s].tpb_mask = (uint8_t)(rnd() % 5);
		}
		break;
	}
	case 7:		/* a parameter word */
	{
		int32_t v = pick_interesting();

		memcpy(in->params.raw + 4 * (rnd() % 28), &v, sizeof(v));
		break;
	}
	case 8:		/* unit, opcode, masks */
		switch (rnd() % 4) {
		case 0: in->unit = (uint8_t)(rnd() % 8); break;
		case 1: in->opcode = (uint8_t)(rnd() % 9); break;
		case 2: in->cluster_mask = (uint16_t)(rnd() % 16); break;
		default: in->tpb_mask = (uint8_t)(rnd() % 8); break;
		}
		break;
	default:	/* a parameter byte */
		in->params.raw[rnd() % sizeof(in->params.raw)] = (uint8_t)rnd();
		break;
	}
}

/*
 * Elements of an operand's semantic levels as the decoder would count
 * them (0 if the walker is malformed, which the decoder rejects cheaply).
 */
static uint64_t sem_elems(const struct npu_hw_twu *t, unsigned nrep)
{
	uint64_t n = 1;

	if (!t->nlevels || t->nlevels > NPU_TWU_MAX_LEVELS || nrep >= t->nlevels)
		return 0;
	for (unsigned l = 0; l < t->nlevels - nrep; l++) {
		const struct npu_hw_twu_level *lv = &t->level[l];
		int64_t cnt;

		if (lv->step == 0) {
			cnt = lv->final;
		} else {
			int64_t diff = (int64_t)lv->final - lv->initial;

			if (diff % lv->step)
				return 0;
			cnt = diff / lv->step + 1;
		}
		if (cnt < 1 || cnt > NPU_TWU_MAX_COUNT)
			return 0;
		n *= (uint64_t)cnt;
		if (n > (1ull << 40))
			return n;
	}
	return n;
}

/*
 * Keep mutated operands legal-but-cheap: a walker the decoder would
 * accept with more than MAX_FUZZ_ELEMS elements per iteration (valid
 * but slow shapes, e.g. a huge MATMUL) goes back to a template walker.
 * Oversized walkers (beyond the 2^24 limit) stay: they must be refused.
 */
static void tame(struct npu_hw_insn *in, const struct npu_hw_insn *orig)
{
	unsigned nrep = in->repeat_levels;

	for (unsigned o = 0; o < NPU_OPNDS; o++) {
		uint64_t n = sem_elems(&in->opnd[o], nrep);

		if (n > MAX_FUZZ_ELEMS && n <= NPU_TWU_MAX_COUNT)
			in->opnd[o] = orig->opnd[o];
	}
	/* the GSDU chain stays at its planted, single-descriptor address */
	if (in->unit == NPU_UNIT_CSU && in->opcode == NPU_CSU_GSDU &&
	    in->params.csu.chain_space == NPU_SPACE_HBSM)
		in->params.csu.chain_addr = GSDU_CHAIN;
}

static void random_insn(struct npu_hw_insn *in)
{
	struct npu_hw_insn orig;
	unsigned k = rnd() % NTEMPL;

	templ(k, in);
	orig = *in;
	switch (rnd() % 20) {
	case 0:
	case 1: {	/* entirely random bytes */
		uint8_t *b = (uint8_t *)in;

		for (unsigned i = 0; i < NPU_INSN_SIZE; i++)
			b[i] = (uint8_t)rnd();
		break;
	}
	case 2:		/* random bytes, plausible unit and opcode */
		for (unsigned i = 0; i < NPU_INSN_SIZE; i++)
			((uint8_t *)in)[i] = (uint8_t)rnd();
		in->unit = orig.unit;
		in->opcode = orig.opcode;
		break;
	case 3:
	case 4:
	case 5:
	case 6:		/* the template itself */
		break;
	case 7:
	case 8:
	case 9:		/* several mutations */
		for (unsigned n = 2 + rnd() % 3; n; n--)
			mutate(in);
		break;
	default:	/* one mutation */
		mutate(in);
		break;
	}
	tame(in, &orig);
}

/*
 * Valid-looking variations of a template: other TPBs and clusters, and
 * SU counters linking it to its neighbours (which may well deadlock).
 */
static void benign(struct npu_hw_insn *in)
{
	if (in->unit < NPU_TPB_UNITS) {
		in->cluster_mask = (uint16_t)(1 + rnd() % 3);
		if (!(in->unit == NPU_UNIT_SYNC && in->opcode == NPU_SYNC_BARRIER))
			in->tpb_mask = (uint8_t)(1 + rnd() % 3);
	}
	if (in->unit == NPU_UNIT_SYNC && in->opcode == NPU_SYNC_BARRIER)
		return;
	if (rnd() % 2) {
		in->sync.signal[0].flags = NPU_SIGNAL_ENABLE;
		in->sync.signal[0].counter = (uint8_t)(rnd() % 4);
		if (rnd() % 2) {
			in->sync.signal[0].flags |= NPU_SIGNAL_REMOTE;
			in->sync.signal[0].cluster_mask = (uint16_t)(1 + rnd() % 3);
			in->sync.signal[0].tpb_mask = (uint8_t)(1 + rnd() % 3);
		} else if (rnd() % 2) {
			in->sync.signal[0].flags |= NPU_SIGNAL_CCB;
		}
	}
	if (rnd() % 3 == 0) {
		in->sync.wait[1].flags = NPU_WAIT_ENABLE;
		in->sync.wait[1].counter = (uint8_t)(rnd() % 4);
		in->sync.wait[1].value = 1;
	}
}

/* A FILL + COPY whose result is checked: the device still works. */
static void known_good(struct npu_tdev *d, uint64_t root, unsigned q,
		       unsigned val)
{
	struct npu_tdev_submit o = { .root = root, .queue = q, .nclusters = 2 };
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	uint32_t dims[1] = { 64 };
	int st;

	npu_tprog_init(&p);
	in = npu_tprog_add(&p, NPU_UNIT_DTDU, NPU_DTDU_FILL, 0x2, 0x2);
	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_UINT8, 0xf000, 1, dims);
	in->params.dtdu.value = val & 0xff;
	in->sync.signal[0].flags = NPU_SIGNAL_ENABLE;
	in->sync.signal[0].counter = 31;
	in = npu_tprog_add(&p, NPU_UNIT_DTDU, NPU_DTDU_COPY, 0x2, 0x2);
	npu_twu_dense(&in->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, NPU_DT_UINT8, 0xf000, 1, dims);
	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_UINT8, 0xf100, 1, dims);
	in->sync.wait[0].flags = NPU_WAIT_ENABLE;
	in->sync.wait[0].counter = 31;
	in->sync.wait[0].value = 1;
	st = npu_tdev_run(d, &p, &o, &c);
	ck_assert_msg(st == NPU_TASK_OK, "known-good task: status %d (%s)", st,
		      npu_core_status_str((unsigned)st));
	/* logical cluster 1 of the default map is physical 1 */
	for (unsigned i = 0; i < 64; i++)
		ck_assert_uint_eq(npu_tdev_hbsm(d, 1, 1)[0xf100 + i], val & 0xff);
	npu_tprog_free(&p);
}

START_TEST(test_fuzz_instructions)
{
	struct npu_tdev *d = fuzz_dev();
	uint64_t root = fuzz_root(d);
	unsigned hist[NPU_TASK_STATUS_COUNT] = { 0 };
	const unsigned ntasks = 3000;

	rng = 0x243f6a8885a308d3ull;
	plant_data(d);
	for (unsigned i = 0; i < ntasks; i++) {
		struct npu_tdev_submit o = { .root = root };
		struct npu_tprog p;
		struct npu_hw_completion c;
		unsigned n = 1 + rnd() % 4;
		int st;

		bool valid = rnd() % 3 == 0;

		npu_tprog_init(&p);
		for (unsigned j = 0; j < n; j++) {
			struct npu_hw_insn *in = npu_tprog_add(&p, 0, 0, 0, 0);

			if (valid) {
				templ(rnd() % NTEMPL, in);
				benign(in);
			} else {
				random_insn(in);
			}
		}
		o.queue = rnd() % NPU_HW_NUM_QUEUES;
		o.nclusters = 1 + rnd() % 2;
		o.timeout_cycles = 200 + rnd() % 5000;
		if (rnd() % 4 == 0) {
			o.sram_base = 0x10000;
			o.sram_size = 0x10000;
		}
		memset(&c, 0, sizeof(c));
		st = npu_tdev_run(d, &p, &o, &c);
		ck_assert_msg(st >= 0, "task %u: completion not written", i);
		ck_assert_msg(c.status < NPU_TASK_STATUS_COUNT, "task %u: status %u",
			      i, c.status);
		ck_assert_uint_eq(c.reserved[0] | c.reserved[1] | c.reserved[2], 0);
		if (c.status == NPU_TASK_ILLEGAL_INSN)
			ck_assert_msg(c.insn_index < n && c.detail >= NPU_IE_UNIT &&
				      c.detail <= NPU_IE_CHAIN,
				      "task %u: insn %u detail %u", i, c.insn_index,
				      c.detail);
		ck_assert_msg(c.status != NPU_TASK_INTERNAL && c.status != NPU_TASK_ABORTED,
			      "task %u: status %s", i, npu_core_status_str(c.status));
		hist[c.status]++;
		npu_tprog_free(&p);
		if (i % 250 == 249) {
			known_good(d, root, i % NPU_HW_NUM_QUEUES, i);
			plant_data(d);
		}
	}
	known_good(d, root, 0, 0xa5);
	/* the fuzz reached both sides of validation */
	ck_assert_uint_gt(hist[NPU_TASK_OK], ntasks / 20);
	ck_assert_uint_gt(hist[NPU_TASK_ILLEGAL_INSN], ntasks / 5);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_fuzz_descriptors)
{
	struct npu_tdev *d = fuzz_dev();
	uint64_t root = fuzz_root(d);
	struct npu_hw_task good = { 0 };
	struct npu_hw_prog hdr_good, *hdr;
	struct npu_tprog p;
	size_t size;
	uint8_t *mem;
	unsigned hist[NPU_TASK_STATUS_COUNT] = { 0 };

	rng = 0x13198a2e03707344ull;
	plant_data(d);
	/* a valid program: three templates on two clusters */
	npu_tprog_init(&p);
	templ(T_FILL, npu_tprog_add(&p, 0, 0, 0, 0));
	templ(T_COPY, npu_tprog_add(&p, 0, 0, 0, 0));
	p.insn[1].cluster_mask = 0x2;
	templ(T_DMA_IN, npu_tprog_add(&p, 0, 0, 0, 0));
	size = sizeof(struct npu_hw_prog) + (size_t)p.n * NPU_INSN_SIZE;
	mem = npu_tdev_buf(d, root, 0x10000000, size, false);
	hdr = (struct npu_hw_prog *)mem;
	hdr->magic = NPU_PROG_MAGIC;
	hdr->version_major = NPU_PROG_VERSION_MAJOR;
	hdr->insn_count = p.n;
	hdr->insn_offset = sizeof(*hdr);
	memcpy(mem + sizeof(*hdr), p.insn, (size_t)p.n * NPU_INSN_SIZE);
	hdr_good = *hdr;
	good.magic = NPU_TASK_MAGIC;
	good.pt_base = root;
	good.prog_va = 0x10000000;
	good.prog_size = (uint32_t)size;
	good.asid = 1;
	good.nclusters = 2;
	good.cluster_map[1] = 1;
	good.sram_size = SRAM_SIZE;

	for (unsigned i = 0; i < 1500; i++) {
		struct npu_hw_task t = good;
		struct npu_hw_completion c;
		uint8_t *b = (uint8_t *)&t;
		int st;

		switch (rnd() % 6) {
		case 0:		/* random bytes, valid magic */
			for (unsigned j = 0; j < sizeof(t); j++)
				b[j] = (uint8_t)rnd();
			t.magic = NPU_TASK_MAGIC;
			break;
		case 1:		/* one random field */
			switch (rnd() % 8) {
			case 0: t.nclusters = (uint8_t)rnd(); break;
			case 1: t.cluster_map[rnd() % 16] = (uint8_t)(rnd() % 5); break;
			case 2: t.sram_base = (rnd() % 2 ? rnd() : (rnd() % 300) << 12); break;
			case 3: t.sram_size = (rnd() % 2 ? rnd() : (rnd() % 300) << 12); break;
			case 4: t.prog_size = rnd() % 4096; break;
			case 5: t.prog_va += (int64_t)(int32_t)rnd() % 8192; break;
			case 6: t.pt_base = (uint64_t)(rnd() % 32768) << 12; break;
			default: t.timeout_cycles = (uint64_t)rnd() << (rnd() % 40); break;
			}
			break;
		case 2:		/* program header bytes */
			((uint8_t *)hdr)[rnd() % sizeof(*hdr)] ^= (uint8_t)(rnd() | 1);
			break;
		case 3:		/* flips in the descriptor */
			for (unsigned n = 1 + rnd() % 4; n; n--)
				b[rnd() % sizeof(t)] ^= (uint8_t)(1u << (rnd() % 8));
			break;
		case 4:		/* cluster maps, including the fused cluster 2 */
			t.nclusters = (uint8_t)(1 + rnd() % 3);
			for (unsigned j = 0; j < 3; j++)
				t.cluster_map[j] = j < t.nclusters ? (uint8_t)(rnd() % 3) : 0;
			break;
		default:	/* as is */
			break;
		}
		t.seqno = 1000 + i;
		/* fuzzed fences are exercised by the MMIO fuzz; keep ours */
		st = npu_tdev_run_desc(d, rnd() % NPU_HW_NUM_QUEUES, &t, &c);
		ck_assert_msg(st >= 0, "desc %u: completion not written", i);
		ck_assert_uint_lt(c.status, NPU_TASK_STATUS_COUNT);
		ck_assert_msg(c.status != NPU_TASK_INTERNAL, "desc %u: internal", i);
		hist[c.status]++;
		*hdr = hdr_good;
		if (i % 300 == 299)
			known_good(d, root, i % NPU_HW_NUM_QUEUES, i);
	}
	known_good(d, root, 1, 0x3c);
	ck_assert_uint_gt(hist[NPU_TASK_OK], 100);
	ck_assert_uint_gt(hist[NPU_TASK_BAD_DESCRIPTOR], 100);
	ck_assert_uint_gt(hist[NPU_TASK_DEFECTIVE_CLUSTER], 0);
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
}
END_TEST

START_TEST(test_fuzz_mmio)
{
	struct npu_tdev *d = fuzz_dev();
	uint64_t root;
	uint32_t geom = RD(d, NPU_REG_GEOM);

	rng = 0xa4093822299f31d0ull;
	for (unsigned i = 0; i < 20000; i++) {
		uint32_t off, val = rnd();

		switch (rnd() % 4) {
		case 0: off = rnd(); break;				/* anywhere */
		case 1: off = rnd() % NPU_BAR0_SIZE; break;		/* any byte */
		case 2: off = (rnd() % 0x300) & ~3u; break;		/* control/queues */
		default: off = (0x1000 + rnd() % 0x1400) & ~3u; break;	/* perf */
		}
		if (off == NPU_REG_RESET && rnd() % 8)
			val = NPU_RESET_MAGIC;
		/* queue rings inside the fake DDR, mostly */
		if (off >= NPU_REG_QUEUE_BASE && off < NPU_REG_Q(NPU_HW_NUM_QUEUES, 0) &&
		    (off - NPU_REG_QUEUE_BASE) % NPU_REG_QUEUE_STRIDE == NPU_Q_BASE_HI &&
		    rnd() % 4)
			val = 0;
		/*
		 * Random ring registers land on enabled queues too: they
		 * must not reach "1u << size_log2" unchecked (a UBSan
		 * shift error found by this test, since fixed).
		 */
		if (rnd() % 3)
			WR(d, off, val);
		else
			(void)RD(d, off);
		if (i % 64 == 63)
			npu_core_run_pending(d->core);
	}
	npu_core_run_pending(d->core);
	WR(d, NPU_REG_RESET, NPU_RESET_MAGIC);
	ck_assert_uint_eq(RD(d, NPU_REG_ID), NPU_ID_MAGIC);
	ck_assert_uint_eq(RD(d, NPU_REG_GEOM), geom);
	ck_assert_uint_eq(RD(d, NPU_REG_IRQ_RAW), 0);
	ck_assert_uint_eq(RD(d, NPU_REG_MMU_CTRL), NPU_MMU_CTRL_ENABLE);
	ck_assert_uint_eq(RD(d, NPU_REG_SCRATCH), 0);
	for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
		ck_assert_uint_eq(NPU_Q_STATE(RD(d, NPU_REG_Q(q, NPU_Q_STATUS))),
				  NPU_Q_STATE_DISABLED);
		/* the driver's bring-up sequence */
		WR(d, NPU_REG_Q(q, NPU_Q_BASE_LO), (uint32_t)d->ring_pa[q]);
		WR(d, NPU_REG_Q(q, NPU_Q_BASE_HI), (uint32_t)(d->ring_pa[q] >> 32));
		WR(d, NPU_REG_Q(q, NPU_Q_SIZE_LOG2), d->ring_log2);
		WR(d, NPU_REG_Q(q, NPU_Q_CTRL), NPU_Q_CTRL_ENABLE);
		ck_assert_uint_eq(NPU_Q_STATE(RD(d, NPU_REG_Q(q, NPU_Q_STATUS))),
				  NPU_Q_STATE_IDLE);
	}
	WR(d, NPU_REG_IRQ_MASK, 0xffffffff);
	root = fuzz_root(d);
	for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++)
		known_good(d, root, q, 0x60 + q);
	npu_tdev_destroy(d);
}
END_TEST

static Suite *core_fuzz_suite(void)
{
	Suite *s = suite_create("core_fuzz");
	TCase *t = tcase_create("fuzz");

	/* generous for slow sanitizer builds; the fuzz takes seconds */
	tcase_set_timeout(t, 120);
	tcase_add_test(t, test_templates_valid);
	tcase_add_test(t, test_fuzz_instructions);
	tcase_add_test(t, test_fuzz_descriptors);
	tcase_add_test(t, test_fuzz_mmio);
	suite_add_tcase(s, t);
	return s;
}

NPU_TEST_SUITE(core_fuzz_suite)
