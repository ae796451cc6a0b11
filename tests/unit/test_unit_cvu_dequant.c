// SPDX-License-Identifier: MIT
/*
 * Program version 1.3 on the CVU: DEQUANT widens 8-bit and packed 4-bit
 * weights with a scale and zero point per block, through the real engine
 * (npu_tdev_run), against a C reference computed here (exact bf16 bits).
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
	srand(43);
}

static void teardown(void)
{
	npu_tdev_destroy(d);
	d = NULL;
}

static struct npu_hw_completion run(struct npu_tprog *p)
{
	struct npu_hw_completion c;

	memset(&c, 0, sizeof(c));
	npu_tdev_run(d, p, NULL, &c);
	npu_tprog_free(p);
	return c;
}

#define ck_ok(c) ck_assert_msg((c).status == NPU_TASK_OK, "status %u detail %u", \
			       (c).status, (c).detail)
#define ck_illegal(c, det) do {						\
		ck_assert_uint_eq((c).status, NPU_TASK_ILLEGAL_INSN);	\
		ck_assert_uint_eq((c).detail, (det));			\
	} while (0)

enum { R = 3, K = 64, B = 16, NB = K / B };
enum { H_Q = 0x0, H_S = 0x1000, H_Z = 0x2000, H_D = 0x3000 };

/*
 * One DEQUANT of an [R][K] weight matrix in blocks of B along a row,
 * written transposed ([K][R], the TCU's B layout): walker levels are
 * (element in block, block, row).  @nib: packed 4-bit; @zp: zero points
 * per block from SRC2 (else in_zp = @in_zp); @sdt: the scales' dtype.
 */
static struct npu_hw_insn *dequant(struct npu_tprog *p, bool nib, bool zp, int in_zp,
				   unsigned sdt, unsigned qdt)
{
	struct npu_hw_insn *in;
	unsigned ss = sdt == NPU_DT_FP32 ? 4 : 2;

	npu_tprog_init(p);
	in = npu_tprog_add(p, NPU_UNIT_CVU, NPU_CVU_DEQUANT, 1, 1);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, qdt, H_Q, 3,
		      (uint32_t[]){ nib ? B / 2 : B, NB, R });
	npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, sdt, H_S, 3, (uint32_t[]){ B, NB, R });
	npu_twu_level(&in->opnd[1], 0, 0, 0, B);	/* one scale per block */
	npu_twu_level(&in->opnd[1], 1, 0, (int32_t)ss, (NB - 1) * (int32_t)ss);
	npu_twu_level(&in->opnd[1], 2, 0, NB * (int32_t)ss, (R - 1) * NB * (int32_t)ss);
	if (zp) {
		npu_twu_dense(&in->opnd[2], NPU_SPACE_HBSM, NPU_DT_UINT8, H_Z, 3,
			      (uint32_t[]){ B, NB, R });
		npu_twu_level(&in->opnd[2], 0, 0, 0, B);
		npu_twu_level(&in->opnd[2], 1, 0, 1, NB - 1);
		npu_twu_level(&in->opnd[2], 2, 0, NB, (R - 1) * NB);
	}
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_BF16, H_D, 3, (uint32_t[]){ B, NB, R });
	npu_twu_level(&in->opnd[3], 0, 0, R * 2, (B - 1) * R * 2);
	npu_twu_level(&in->opnd[3], 1, 0, B * R * 2, (NB - 1) * B * R * 2);
	npu_twu_level(&in->opnd[3], 2, 0, 2, (R - 1) * 2);
	in->params.cvu.flags = nib ? NPU_CVU_F_NIBBLES : 0;
	in->params.cvu.in_zp = in_zp;
	return in;
}

/* Random weights, scales and zero points; checks every bf16 of the result. */
static void check_case(bool nib, bool zp, int in_zp, unsigned sdt, unsigned qdt)
{
	uint8_t q[R * K];
	float s[R * NB];
	uint8_t z[R * NB];
	struct npu_tprog p;
	struct npu_hw_completion c;

	for (int i = 0; i < R * K; i++)
		q[i] = (uint8_t)(nib ? rand() % 16 : rand() % 256);
	for (int i = 0; i < R * NB; i++) {
		s[i] = (float)(rand() % 2000 + 1) / 7919.0f;
		z[i] = (uint8_t)(nib ? rand() % 16 : rand() % 256);
	}
	memset(hb, 0, 0x4000);
	for (int i = 0; i < R * K; i++)
		if (nib)	/* low nibble first */
			hb[H_Q + i / 2] |= (uint8_t)(q[i] << (i % 2 ? 4 : 0));
		else
			hb[H_Q + i] = q[i];
	for (int i = 0; i < R * NB; i++) {
		if (sdt == NPU_DT_FP32) {
			memcpy(hb + H_S + i * 4, &s[i], 4);
		} else {
			uint16_t h = npu_f32_to_bf16(s[i]);

			s[i] = npu_bf16_to_f32(h);
			memcpy(hb + H_S + i * 2, &h, 2);
		}
		hb[H_Z + i] = z[i];
	}
	dequant(&p, nib, zp, in_zp, sdt, qdt);
	c = run(&p);
	ck_ok(c);
	for (int r = 0; r < R; r++)
		for (int k = 0; k < K; k++) {
			int v = qdt == NPU_DT_INT8 ? (int8_t)q[r * K + k] : q[r * K + k];
			float zf = zp ? (float)z[r * NB + k / B] : (float)in_zp;
			uint16_t want = npu_f32_to_bf16(((float)v - zf) * s[r * NB + k / B]), got;

			memcpy(&got, hb + H_D + (k * R + r) * 2, 2);
			ck_assert_msg(got == want, "nib %d zp %d: [%d][%d] %04x != %04x", nib, zp,
				      r, k, got, want);
		}
}

START_TEST(test_dequant_values)
{
	check_case(true, true, 0, NPU_DT_FP32, NPU_DT_UINT8);	/* MatMulNBits, zero points */
	check_case(true, false, 8, NPU_DT_FP32, NPU_DT_UINT8);	/* MatMulNBits, default 8 */
	check_case(true, false, 8, NPU_DT_BF16, NPU_DT_UINT8);
	check_case(false, false, 0, NPU_DT_FP32, NPU_DT_INT8);	/* w8: symmetric int8 */
	check_case(false, true, 0, NPU_DT_FP32, NPU_DT_UINT8);	/* 8-bit with zero points */
}
END_TEST

/*
 * The cycle model: one streaming pass over the larger of the bytes read
 * (packed weights, a scale per block) and written (bf16): as much as a
 * bf16 -> bf16 copy of the widened size, not free.
 */
START_TEST(test_dequant_cycles)
{
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	uint64_t deq, copy;

	memset(hb, 0, 0x4000);
	in = dequant(&p, true, false, 8, NPU_DT_FP32, NPU_DT_UINT8);
	/* dense destination: no bank conflicts in either */
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_BF16, H_D, 3, (uint32_t[]){ B, NB, R });
	c = run(&p);
	ck_ok(c);
	deq = c.cycles;
	npu_tprog_init(&p);
	in = npu_tprog_add(&p, NPU_UNIT_CVU, NPU_CVU_UNARY, 1, 1);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_BF16, H_S, 1, (uint32_t[]){ R * K });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_BF16, H_D, 1, (uint32_t[]){ R * K });
	c = run(&p);
	ck_ok(c);
	copy = c.cycles;
	ck_assert_uint_gt(deq, 0);
	ck_assert_uint_eq(deq, copy);
}
END_TEST

START_TEST(test_dequant_validation)
{
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;

	/* packed 4-bit from INT8 */
	dequant(&p, true, false, 8, NPU_DT_FP32, NPU_DT_INT8);
	c = run(&p);
	ck_illegal(c, NPU_IE_DTYPE);
	/* scales of an integer dtype */
	dequant(&p, false, false, 0, NPU_DT_INT32, NPU_DT_INT8);
	c = run(&p);
	ck_illegal(c, NPU_IE_DTYPE);
	/* zero points from SRC2 and in_zp both */
	dequant(&p, true, true, 8, NPU_DT_FP32, NPU_DT_UINT8);
	c = run(&p);
	ck_illegal(c, NPU_IE_PARAM);
	/* a stage */
	in = dequant(&p, true, false, 8, NPU_DT_FP32, NPU_DT_UINT8);
	in->params.cvu.nstages = 1;
	in->params.cvu.stage[0].fn = NPU_FN_RELU;
	c = run(&p);
	ck_illegal(c, NPU_IE_PARAM);
	/* bytes counted as elements: the shapes disagree */
	in = dequant(&p, false, false, 0, NPU_DT_FP32, NPU_DT_UINT8);
	in->params.cvu.flags = NPU_CVU_F_NIBBLES;
	c = run(&p);
	ck_illegal(c, NPU_IE_SHAPE);
	/* NIBBLES outside DEQUANT */
	npu_tprog_init(&p);
	in = npu_tprog_add(&p, NPU_UNIT_CVU, NPU_CVU_UNARY, 1, 1);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_UINT8, 0, 1, (uint32_t[]){ 8 });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x100, 1, (uint32_t[]){ 8 });
	in->params.cvu.flags = NPU_CVU_F_NIBBLES;
	c = run(&p);
	ck_illegal(c, NPU_IE_PARAM);
}
END_TEST

static Suite *unit_cvu_dequant_suite(void)
{
	Suite *s = suite_create("unit_cvu_dequant");
	TCase *tc = tcase_create("cvu_dequant");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_dequant_values);
	tcase_add_test(tc, test_dequant_cycles);
	tcase_add_test(tc, test_dequant_validation);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(unit_cvu_dequant_suite)
