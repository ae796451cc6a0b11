// SPDX-License-Identifier: MIT
/*
 * TCU MATMUL / CONV2D through the real engine (npu_tdev_run), compared with
 * naive C references computed here.
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
	srand(11);
}

static void teardown(void)
{
	npu_tdev_destroy(d);
	d = NULL;
}

static struct npu_hw_insn *one(struct npu_tprog *p, unsigned op)
{
	npu_tprog_init(p);
	return npu_tprog_add(p, NPU_UNIT_TCU, op, 1, 1);
}

static struct npu_hw_completion run(struct npu_tprog *p)
{
	struct npu_hw_completion c;

	memset(&c, 0, sizeof(c));
	npu_tdev_run(d, p, NULL, &c);
	npu_tprog_free(p);
	return c;
}

static double round_mode(double v, int away)
{
	if (away)
		return v < 0 ? -floor(-v + 0.5) : floor(v + 0.5);
	return nearbyint(v);
}

static int32_t sat(double v, int32_t lo, int32_t hi)
{
	return v < lo ? lo : v > hi ? hi : (int32_t)v;
}

static float frnd(void)
{
	return (float)rand() / RAND_MAX * 2 - 1;
}

/*
 * C[m][n] = round(A[m] * 1 * 0.5) + out_zp with exact .5 cases: K = 1, B = 1.
 * Returns the INT8 outputs for the given round mode.
 */
static void run_round(unsigned mode, const int8_t *a, int n, int out_zp,
		      float scale, int8_t *out)
{
	struct npu_tprog p;
	struct npu_hw_insn *in = one(&p, NPU_TCU_MATMUL);
	uint32_t A0 = 0x1000, B0 = 0x2000, C0 = 0x3000;
	struct npu_hw_completion c;

	memcpy(hb + A0, a, (size_t)n);
	hb[B0] = 1;
	npu_twu_dense(&in->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, NPU_DT_INT8, A0, 2,
		      (uint32_t[]){ 1, (uint32_t)n });
	npu_twu_dense(&in->opnd[NPU_OPND_SRC1], NPU_SPACE_HBSM, NPU_DT_INT8, B0, 2,
		      (uint32_t[]){ 1, 1 });
	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_INT8, C0, 2,
		      (uint32_t[]){ 1, (uint32_t)n });
	in->params.tcu.flags = NPU_TCU_F_SCALE;
	in->params.tcu.out_scale = npu_f32_bits(scale);
	in->params.tcu.out_zp = out_zp;
	in->params.tcu.round = (uint8_t)mode;
	c = run(&p);
	ck_assert_uint_eq(c.status, NPU_TASK_OK);
	memcpy(out, hb + C0, (size_t)n);
}

START_TEST(test_tcu_requant_rounding)
{
	/* x * 0.5 = -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 3 */
	const int8_t a[] = { -5, -3, -1, 1, 3, 5, 7, 6 };
	const int8_t even[] = { -2, -2, 0, 0, 2, 2, 4, 3 };
	const int8_t away[] = { -3, -2, -1, 1, 2, 3, 4, 3 };
	int8_t out[8];

	run_round(NPU_ROUND_HALF_EVEN, a, 8, 0, 0.5f, out);
	for (int i = 0; i < 8; i++)
		ck_assert_msg(out[i] == even[i], "half-even [%d]: %d want %d", i, out[i], even[i]);
	/* the +1 out_zp is added after rounding */
	run_round(NPU_ROUND_HALF_AWAY, a, 8, 1, 0.5f, out);
	for (int i = 0; i < 8; i++)
		ck_assert_msg(out[i] == away[i] + 1, "half-away [%d]: %d want %d", i, out[i], away[i] + 1);
}
END_TEST

START_TEST(test_tcu_requant_saturation)
{
	const int8_t a[] = { 100, -100, 64, -64, 63, -65, 127, -128 };
	int8_t out[8];

	/* x * 2 + 0: 200 -> 127, -200 -> -128, 128 -> 127, -128, 126, -130 -> -128 */
	run_round(NPU_ROUND_HALF_EVEN, a, 8, 0, 2.0f, out);
	for (int i = 0; i < 8; i++) {
		int32_t e = sat(2.0 * a[i], -128, 127);

		ck_assert_msg(out[i] == e, "[%d]: %d want %d", i, out[i], e);
	}
	ck_assert_int_eq(out[0], 127);
	ck_assert_int_eq(out[1], -128);
	/* with out_zp = -10, 63*2 - 10 = 116 stays; -65*2 - 10 saturates */
	run_round(NPU_ROUND_HALF_EVEN, a, 8, -10, 2.0f, out);
	ck_assert_int_eq(out[4], 116);
	ck_assert_int_eq(out[5], -128);
	ck_assert_int_eq(out[2], 118);
}
END_TEST

/* int8 x int8 + bias, per-tensor scale, INT8 out with out_zp */
START_TEST(test_tcu_matmul_i8_bias_scale)
{
	enum { M = 9, N = 20, K = 33 };
	struct npu_tprog p;
	struct npu_hw_insn *in = one(&p, NPU_TCU_MATMUL);
	uint32_t A0 = 0x1000, B0 = 0x3000, Z0 = 0x6000, C0 = 0x7000;
	int8_t *A = (int8_t *)(hb + A0), *B = (int8_t *)(hb + B0);
	int8_t *C = (int8_t *)(hb + C0);
	int32_t bias[N];
	float s = 1.0f / 128;
	int out_zp = 7;
	unsigned bad = 0, sats = 0;
	struct npu_hw_completion c;

	for (int i = 0; i < M * K; i++)
		A[i] = (int8_t)(rand() % 256 - 128);
	for (int i = 0; i < K * N; i++)
		B[i] = (int8_t)(rand() % 256 - 128);
	for (int i = 0; i < N; i++)
		bias[i] = rand() % 4001 - 2000;
	memcpy(hb + Z0, bias, sizeof(bias));
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_INT8, A0, 2, (uint32_t[]){ K, M });
	npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_INT8, B0, 2, (uint32_t[]){ N, K });
	npu_twu_dense(&in->opnd[2], NPU_SPACE_HBSM, NPU_DT_INT32, Z0, 1, (uint32_t[]){ N });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_INT8, C0, 2, (uint32_t[]){ N, M });
	in->params.tcu.flags = NPU_TCU_F_SCALE;
	in->params.tcu.out_scale = npu_f32_bits(s);
	in->params.tcu.out_zp = out_zp;
	c = run(&p);
	ck_assert_msg(c.status == NPU_TASK_OK, "status %u detail %u", c.status, c.detail);
	for (int m = 0; m < M; m++)
		for (int n = 0; n < N; n++) {
			int32_t acc = bias[n];

			for (int k = 0; k < K; k++)
				acc += A[m * K + k] * B[k * N + n];
			int32_t e = sat(round_mode((float)acc * s, 0) + out_zp, -128, 127);

			sats += e == 127 || e == -128;
			bad += C[m * N + n] != e;
		}
	ck_assert_msg(!bad, "%u mismatches", bad);
	ck_assert_msg(sats > 0, "the data should reach saturation");
}
END_TEST

/* uint8 x int8 with both zero points into INT32 (raw accumulators) */
START_TEST(test_tcu_matmul_u8_i8_zp_int32)
{
	enum { M = 6, N = 17, K = 29 };
	struct npu_tprog p;
	struct npu_hw_insn *in = one(&p, NPU_TCU_MATMUL);
	uint32_t A0 = 0x1000, B0 = 0x3000, Z0 = 0x6000, C0 = 0x7000;
	uint8_t *A = hb + A0;
	int8_t *B = (int8_t *)(hb + B0);
	int32_t bias[N], C[M * N];
	int a_zp = 128, b_zp = -3;
	unsigned bad = 0;
	struct npu_hw_completion c;

	for (int i = 0; i < M * K; i++)
		A[i] = (uint8_t)(rand() % 256);
	for (int i = 0; i < K * N; i++)
		B[i] = (int8_t)(rand() % 256 - 128);
	for (int i = 0; i < N; i++)
		bias[i] = rand() % 200001 - 100000;
	memcpy(hb + Z0, bias, sizeof(bias));
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_UINT8, A0, 2, (uint32_t[]){ K, M });
	npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_INT8, B0, 2, (uint32_t[]){ N, K });
	npu_twu_dense(&in->opnd[2], NPU_SPACE_HBSM, NPU_DT_INT32, Z0, 1, (uint32_t[]){ N });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_INT32, C0, 2, (uint32_t[]){ N, M });
	in->params.tcu.a_zp = a_zp;
	in->params.tcu.b_zp = b_zp;
	c = run(&p);
	ck_assert_msg(c.status == NPU_TASK_OK, "status %u detail %u", c.status, c.detail);
	memcpy(C, hb + C0, sizeof(C));
	for (int m = 0; m < M; m++)
		for (int n = 0; n < N; n++) {
			int32_t acc = bias[n];

			for (int k = 0; k < K; k++)
				acc += (A[m * K + k] - a_zp) * (B[k * N + n] - b_zp);
			bad += C[m * N + n] != acc;
		}
	ck_assert_msg(!bad, "%u mismatches", bad);
}
END_TEST

/* per-channel scales (one fp32 per output column n) into UINT8 */
START_TEST(test_tcu_matmul_per_channel)
{
	enum { M = 5, N = 24, K = 16 };
	struct npu_tprog p;
	struct npu_hw_insn *in = one(&p, NPU_TCU_MATMUL);
	uint32_t A0 = 0x1000, B0 = 0x3000, S0 = 0x6400, C0 = 0x7000;
	int8_t *A = (int8_t *)(hb + A0), *B = (int8_t *)(hb + B0);
	uint8_t *C = hb + C0;
	float sc[N];
	int out_zp = 128;
	unsigned bad = 0, distinct = 0;
	struct npu_hw_completion c;

	for (int i = 0; i < M * K; i++)
		A[i] = (int8_t)(rand() % 256 - 128);
	for (int i = 0; i < K * N; i++)
		B[i] = (int8_t)(rand() % 256 - 128);
	for (int i = 0; i < N; i++)
		sc[i] = 0.0005f * (float)(1 + i * 3);
	memcpy(hb + S0, sc, sizeof(sc));
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_INT8, A0, 2, (uint32_t[]){ K, M });
	npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_INT8, B0, 2, (uint32_t[]){ N, K });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_UINT8, C0, 2, (uint32_t[]){ N, M });
	in->params.tcu.flags = NPU_TCU_F_PER_CHANNEL;
	in->params.tcu.qscale_addr = S0;
	in->params.tcu.out_zp = out_zp;
	c = run(&p);
	ck_assert_msg(c.status == NPU_TASK_OK, "status %u detail %u", c.status, c.detail);
	for (int m = 0; m < M; m++)
		for (int n = 0; n < N; n++) {
			int32_t acc = 0;

			for (int k = 0; k < K; k++)
				acc += A[m * K + k] * B[k * N + n];
			int32_t e = sat(round_mode((float)acc * sc[n], 0) + out_zp, 0, 255);
			int32_t e0 = sat(round_mode((float)acc * sc[0], 0) + out_zp, 0, 255);

			distinct += e != e0;
			bad += C[m * N + n] != e;
		}
	ck_assert_msg(!bad, "%u mismatches", bad);
	ck_assert_msg(distinct > 0, "per-channel scales should matter");
}
END_TEST

/* ACCUMULATE into INT32: dst += A x B */
START_TEST(test_tcu_matmul_accumulate)
{
	enum { M = 4, N = 11, K = 12 };
	struct npu_tprog p;
	struct npu_hw_insn *in = one(&p, NPU_TCU_MATMUL);
	uint32_t A0 = 0x1000, B0 = 0x2000, C0 = 0x3000;
	int8_t *A = (int8_t *)(hb + A0), *B = (int8_t *)(hb + B0);
	int32_t init[M * N], C[M * N];
	unsigned bad = 0;
	struct npu_hw_completion c;

	for (int i = 0; i < M * K; i++)
		A[i] = (int8_t)(rand() % 256 - 128);
	for (int i = 0; i < K * N; i++)
		B[i] = (int8_t)(rand() % 256 - 128);
	for (int i = 0; i < M * N; i++)
		init[i] = rand() % 100001 - 50000;
	memcpy(hb + C0, init, sizeof(init));
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_INT8, A0, 2, (uint32_t[]){ K, M });
	npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_INT8, B0, 2, (uint32_t[]){ N, K });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_INT32, C0, 2, (uint32_t[]){ N, M });
	in->params.tcu.flags = NPU_TCU_F_ACCUMULATE;
	/* the same instruction twice: dst = init + 2 * A x B */
	*npu_tprog_add(&p, NPU_UNIT_TCU, NPU_TCU_MATMUL, 1, 1) = p.insn[0];
	c = run(&p);
	ck_assert_msg(c.status == NPU_TASK_OK, "status %u detail %u", c.status, c.detail);
	memcpy(C, hb + C0, sizeof(C));
	for (int m = 0; m < M; m++)
		for (int n = 0; n < N; n++) {
			int32_t acc = 0;

			for (int k = 0; k < K; k++)
				acc += A[m * K + k] * B[k * N + n];
			bad += C[m * N + n] != init[m * N + n] + 2 * acc;
		}
	ck_assert_msg(!bad, "%u mismatches", bad);
}
END_TEST

static void matmul_bf16(unsigned odt, double tol)
{
	enum { M = 7, N = 19, K = 24 };
	struct npu_tprog p;
	struct npu_hw_insn *in = one(&p, NPU_TCU_MATMUL);
	uint32_t A0 = 0x20000, B0 = 0x21000, Z0 = 0x22000, C0 = 0x23000;
	float a[M * K], b[K * N], bias[N], s = 0.5f;
	double worst = 0;
	struct npu_hw_completion c;

	for (int i = 0; i < M * K; i++) {
		uint16_t h = npu_f32_to_bf16(frnd());

		a[i] = npu_bf16_to_f32(h);
		memcpy(hb + A0 + 2 * i, &h, 2);
	}
	for (int i = 0; i < K * N; i++) {
		uint16_t h = npu_f32_to_bf16(frnd());

		b[i] = npu_bf16_to_f32(h);
		memcpy(hb + B0 + 2 * i, &h, 2);
	}
	for (int i = 0; i < N; i++)
		bias[i] = frnd();
	memcpy(hb + Z0, bias, sizeof(bias));
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_BF16, A0, 2, (uint32_t[]){ K, M });
	npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_BF16, B0, 2, (uint32_t[]){ N, K });
	npu_twu_dense(&in->opnd[2], NPU_SPACE_HBSM, NPU_DT_FP32, Z0, 1, (uint32_t[]){ N });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, odt, C0, 2, (uint32_t[]){ N, M });
	in->params.tcu.flags = NPU_TCU_F_SCALE;
	in->params.tcu.out_scale = npu_f32_bits(s);
	c = run(&p);
	ck_assert_msg(c.status == NPU_TASK_OK, "status %u detail %u", c.status, c.detail);
	for (int m = 0; m < M; m++)
		for (int n = 0; n < N; n++) {
			double acc = bias[n];
			float got;

			for (int k = 0; k < K; k++)
				acc += (double)a[m * K + k] * b[k * N + n];
			acc *= s;
			if (odt == NPU_DT_FP32) {
				memcpy(&got, hb + C0 + 4 * (m * N + n), 4);
			} else {
				uint16_t h;

				memcpy(&h, hb + C0 + 2 * (m * N + n), 2);
				got = npu_bf16_to_f32(h);
			}
			worst = fmax(worst, fabs(got - acc) / fmax(1.0, fabs(acc)));
		}
	ck_assert_msg(worst < tol, "worst relative error %g", worst);
}

START_TEST(test_tcu_matmul_bf16_fp32)
{
	matmul_bf16(NPU_DT_FP32, 1e-5);
}
END_TEST

START_TEST(test_tcu_matmul_bf16_bf16)
{
	matmul_bf16(NPU_DT_BF16, 1.0 / 128);
}
END_TEST

/* repeat level: R batches of A, B reused through a broadcast level */
START_TEST(test_tcu_matmul_repeat_broadcast)
{
	enum { M = 5, N = 9, K = 16, R = 3 };
	struct npu_tprog p;
	struct npu_hw_insn *in = one(&p, NPU_TCU_MATMUL);
	uint32_t A0 = 0x10000, B0 = 0x11000, C0 = 0x12000;
	int8_t *A = (int8_t *)(hb + A0), *B = (int8_t *)(hb + B0);
	int32_t C[R * M * N];
	unsigned bad = 0;
	struct npu_hw_completion c;

	for (int i = 0; i < R * M * K; i++)
		A[i] = (int8_t)(rand() % 256 - 128);
	for (int i = 0; i < K * N; i++)
		B[i] = (int8_t)(rand() % 256 - 128);
	in->repeat_levels = 1;
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_INT8, A0, 3, (uint32_t[]){ K, M, R });
	npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_INT8, B0, 3, (uint32_t[]){ N, K, 1 });
	npu_twu_level(&in->opnd[1], 2, 0, 0, R);	/* broadcast */
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_INT32, C0, 3, (uint32_t[]){ N, M, R });
	c = run(&p);
	ck_assert_msg(c.status == NPU_TASK_OK, "status %u detail %u", c.status, c.detail);
	memcpy(C, hb + C0, sizeof(C));
	for (int r = 0; r < R; r++)
		for (int m = 0; m < M; m++)
			for (int n = 0; n < N; n++) {
				int32_t acc = 0;

				for (int k = 0; k < K; k++)
					acc += A[(r * M + m) * K + k] * B[k * N + n];
				bad += C[(r * M + m) * N + n] != acc;
			}
	ck_assert_msg(!bad, "%u mismatches", bad);
}
END_TEST

static void conv_i8(int H, int W, int C, int OC, int G, int KH, int KW,
		    int SH, int SW, int PT, int PL, int PB, int PR, int with_bias)
{
	int OH = (H + PT + PB - (KH - 1) - 1) / SH + 1;
	int OW = (W + PL + PR - (KW - 1) - 1) / SW + 1;
	struct npu_tprog p;
	struct npu_hw_insn *in = one(&p, NPU_TCU_CONV2D);
	uint32_t X0 = 0x30000, W0 = 0x38000, Z0 = 0x3c000, Y0 = 0x40000;
	int8_t *X = (int8_t *)(hb + X0), *Wt = (int8_t *)(hb + W0), *Y = (int8_t *)(hb + Y0);
	int32_t *bias = malloc(sizeof(int32_t) * (size_t)OC);
	int x_zp = 5, out_zp = -7, CG = C / G;
	float s = 0.02f;
	unsigned bad = 0;
	struct npu_hw_tcu_params *t = &in->params.tcu;
	struct npu_hw_completion c;

	ck_assert_ptr_nonnull(bias);
	for (int i = 0; i < H * W * C; i++)
		X[i] = (int8_t)(rand() % 256 - 128);
	for (int i = 0; i < KH * KW * CG * OC; i++)
		Wt[i] = (int8_t)(rand() % 31 - 15);
	for (int i = 0; i < OC; i++)
		bias[i] = with_bias ? rand() % 2001 - 1000 : 0;
	memcpy(hb + Z0, bias, sizeof(int32_t) * (size_t)OC);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_INT8, X0, 3,
		      (uint32_t[]){ (uint32_t)C, (uint32_t)W, (uint32_t)H });
	npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_INT8, W0, 4,
		      (uint32_t[]){ (uint32_t)OC, (uint32_t)CG, (uint32_t)KW, (uint32_t)KH });
	if (with_bias)
		npu_twu_dense(&in->opnd[2], NPU_SPACE_HBSM, NPU_DT_INT32, Z0, 1,
			      (uint32_t[]){ (uint32_t)OC });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_INT8, Y0, 3,
		      (uint32_t[]){ (uint32_t)OC, (uint32_t)OW, (uint32_t)OH });
	t->a_zp = x_zp;
	t->out_zp = out_zp;
	t->flags = NPU_TCU_F_SCALE;
	t->out_scale = npu_f32_bits(s);
	t->stride_h = (uint16_t)SH;
	t->stride_w = (uint16_t)SW;
	t->dil_h = t->dil_w = 1;
	t->pad_top = (uint16_t)PT;
	t->pad_left = (uint16_t)PL;
	t->pad_bottom = (uint16_t)PB;
	t->pad_right = (uint16_t)PR;
	t->groups = (uint16_t)G;
	c = run(&p);
	ck_assert_msg(c.status == NPU_TASK_OK, "status %u detail %u", c.status, c.detail);
	for (int oh = 0; oh < OH; oh++)
		for (int ow = 0; ow < OW; ow++)
			for (int o = 0; o < OC; o++) {
				int g = o / (OC / G);
				int32_t acc = bias[o];

				for (int kh = 0; kh < KH; kh++)
					for (int kw = 0; kw < KW; kw++)
						for (int ci = 0; ci < CG; ci++) {
							int ih = oh * SH - PT + kh, iw = ow * SW - PL + kw;
							int xv = (ih < 0 || ih >= H || iw < 0 || iw >= W) ? x_zp :
								 X[(ih * W + iw) * C + g * CG + ci];

							acc += (xv - x_zp) * Wt[((kh * KW + kw) * CG + ci) * OC + o];
						}
				int32_t e = sat(round_mode((float)acc * s, 0) + out_zp, -128, 127);

				bad += Y[(oh * OW + ow) * OC + o] != e;
			}
	free(bias);
	ck_assert_msg(!bad, "conv: %u mismatches of %d", bad, OH * OW * OC);
}

START_TEST(test_tcu_conv2d_stride2_pads)
{
	/* 3x3, stride 2, asymmetric pads, bias, groups 1 */
	conv_i8(9, 10, 8, 12, 1, 3, 3, 2, 2, 1, 2, 1, 0, 1);
}
END_TEST

START_TEST(test_tcu_conv2d_groups)
{
	/* groups 2, stride (2, 1) */
	conv_i8(8, 7, 6, 4, 2, 3, 2, 2, 1, 1, 1, 1, 1, 1);
}
END_TEST

START_TEST(test_tcu_conv2d_depthwise)
{
	/* depthwise: groups = C = OC, 3x3, stride 2, pad 1 */
	conv_i8(10, 10, 8, 8, 8, 3, 3, 2, 2, 1, 1, 1, 1, 0);
}
END_TEST

/* validation: each case is refused before running */
static struct npu_hw_insn *mm(struct npu_tprog *p, unsigned adt, unsigned bdt, unsigned cdt)
{
	struct npu_hw_insn *in = one(p, NPU_TCU_MATMUL);

	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, adt, 0, 2, (uint32_t[]){ 8, 4 });
	npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, bdt, 0x100, 2, (uint32_t[]){ 16, 8 });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, cdt, 0x400, 2, (uint32_t[]){ 16, 4 });
	return in;
}

static void expect_bad(struct npu_tprog *p, unsigned detail, const char *what)
{
	struct npu_hw_completion c = run(p);

	ck_assert_msg(c.status == NPU_TASK_ILLEGAL_INSN && c.detail == detail,
		      "%s: status %u detail %u (want %u)", what, c.status, c.detail, detail);
	ck_assert_int_eq(c.insn_index, 0);
}

START_TEST(test_tcu_validation)
{
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;

	in = mm(&p, NPU_DT_INT8, NPU_DT_INT8, NPU_DT_INT8);
	in->params.tcu.flags = NPU_TCU_F_ACCUMULATE;
	expect_bad(&p, NPU_IE_DTYPE, "accumulate into int8");
	mm(&p, NPU_DT_INT8, NPU_DT_BF16, NPU_DT_INT32);
	expect_bad(&p, NPU_IE_DTYPE, "mixed int8/bf16");
	mm(&p, NPU_DT_INT8, NPU_DT_INT8, NPU_DT_FP32);
	expect_bad(&p, NPU_IE_DTYPE, "int -> fp32");
	in = mm(&p, NPU_DT_INT8, NPU_DT_INT8, NPU_DT_INT32);
	in->params.tcu.flags = NPU_TCU_F_ACCUMULATE | NPU_TCU_F_SCALE;
	in->params.tcu.out_scale = npu_f32_bits(1.0f);
	expect_bad(&p, NPU_IE_PARAM, "accumulate + scale");
	in = mm(&p, NPU_DT_INT8, NPU_DT_INT8, NPU_DT_INT8);
	in->params.tcu.flags = 0x80;
	expect_bad(&p, NPU_IE_RESERVED, "unknown flag");
	in = mm(&p, NPU_DT_INT8, NPU_DT_INT8, NPU_DT_INT8);
	in->params.tcu.round = 2;
	expect_bad(&p, NPU_IE_PARAM, "round mode");
	in = mm(&p, NPU_DT_INT8, NPU_DT_INT8, NPU_DT_INT8);
	in->params.tcu.a_zp = 128;
	expect_bad(&p, NPU_IE_PARAM, "int8 a_zp");
	in = mm(&p, NPU_DT_INT8, NPU_DT_INT8, NPU_DT_INT8);
	in->params.tcu.stride_h = 1;
	expect_bad(&p, NPU_IE_PARAM, "conv field on matmul");
	in = mm(&p, NPU_DT_INT8, NPU_DT_INT8, NPU_DT_INT8);
	npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_INT8, 0x100, 2, (uint32_t[]){ 16, 9 });
	expect_bad(&p, NPU_IE_SHAPE, "K mismatch");
	in = mm(&p, NPU_DT_INT8, NPU_DT_INT8, NPU_DT_INT8);
	npu_twu_dense(&in->opnd[3], NPU_SPACE_SRAM, NPU_DT_INT8, 0x400, 2, (uint32_t[]){ 16, 4 });
	expect_bad(&p, NPU_IE_SPACE, "SRAM destination");

	/* conv: groups not dividing C */
	in = one(&p, NPU_TCU_CONV2D);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_INT8, 0, 3, (uint32_t[]){ 4, 5, 5 });
	npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_INT8, 0x200, 4, (uint32_t[]){ 8, 4, 3, 3 });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_INT8, 0x800, 3, (uint32_t[]){ 8, 3, 3 });
	in->params.tcu.stride_h = in->params.tcu.stride_w = 1;
	in->params.tcu.dil_h = in->params.tcu.dil_w = 1;
	in->params.tcu.groups = 3;
	expect_bad(&p, NPU_IE_PARAM, "conv groups");

	/* a bad second instruction: the task is refused before the first runs */
	memset(hb + 0x400, 0x5a, 64);
	npu_tprog_init(&p);
	in = npu_tprog_add(&p, NPU_UNIT_TCU, NPU_TCU_MATMUL, 1, 1);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_INT8, 0, 2, (uint32_t[]){ 8, 4 });
	npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_INT8, 0x100, 2, (uint32_t[]){ 16, 8 });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_INT32, 0x400, 2, (uint32_t[]){ 16, 4 });
	in = npu_tprog_add(&p, NPU_UNIT_TCU, NPU_TCU_MATMUL, 1, 1);
	*in = p.insn[0];
	in->opnd[3].dtype = NPU_DT_INT8;
	in->params.tcu.flags = NPU_TCU_F_ACCUMULATE;
	c = run(&p);
	ck_assert_uint_eq(c.status, NPU_TASK_ILLEGAL_INSN);
	ck_assert_uint_eq(c.detail, NPU_IE_DTYPE);
	ck_assert_int_eq(c.insn_index, 1);
	ck_assert_uint_eq(hb[0x400], 0x5a);
}
END_TEST

static Suite *unit_tcu_suite(void)
{
	Suite *s = suite_create("unit_tcu");
	TCase *tc = tcase_create("tcu");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_tcu_requant_rounding);
	tcase_add_test(tc, test_tcu_requant_saturation);
	tcase_add_test(tc, test_tcu_matmul_i8_bias_scale);
	tcase_add_test(tc, test_tcu_matmul_u8_i8_zp_int32);
	tcase_add_test(tc, test_tcu_matmul_per_channel);
	tcase_add_test(tc, test_tcu_matmul_accumulate);
	tcase_add_test(tc, test_tcu_matmul_bf16_fp32);
	tcase_add_test(tc, test_tcu_matmul_bf16_bf16);
	tcase_add_test(tc, test_tcu_matmul_repeat_broadcast);
	tcase_add_test(tc, test_tcu_conv2d_stride2_pads);
	tcase_add_test(tc, test_tcu_conv2d_groups);
	tcase_add_test(tc, test_tcu_conv2d_depthwise);
	tcase_add_test(tc, test_tcu_validation);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(unit_tcu_suite)
