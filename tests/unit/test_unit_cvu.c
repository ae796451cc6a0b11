// SPDX-License-Identifier: MIT
/*
 * CVU operations through the real engine (npu_tdev_run), compared with
 * naive C references computed here.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
	srand(23);
}

static void teardown(void)
{
	npu_tdev_destroy(d);
	d = NULL;
}

static struct npu_hw_insn *one(struct npu_tprog *p, unsigned op)
{
	npu_tprog_init(p);
	return npu_tprog_add(p, NPU_UNIT_CVU, op, 1, 1);
}

/* A program of one UNARY @fn of @n dense elements in HBSM, @sdt at @src
 * to @ddt at @dst. */
static struct npu_hw_insn *unary_insn(struct npu_tprog *p, unsigned fn,
				      unsigned sdt, uint32_t src, unsigned ddt,
				      uint32_t dst, uint32_t n)
{
	struct npu_hw_insn *in = one(p, NPU_CVU_UNARY);

	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, sdt, src, 1, (uint32_t[]){ n });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, ddt, dst, 1, (uint32_t[]){ n });
	in->params.cvu.fn = (uint8_t)fn;
	return in;
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

static float frnd(void)
{
	return (float)rand() / RAND_MAX * 2 - 1;
}

static int32_t sat(double v, int32_t lo, int32_t hi)
{
	return v < lo ? lo : v > hi ? hi : (int32_t)v;
}

static void put_f32(uint32_t addr, const float *x, size_t n)
{
	memcpy(hb + addr, x, n * sizeof(float));
}

static void get_f32(float *y, uint32_t addr, size_t n)
{
	memcpy(y, hb + addr, n * sizeof(float));
}

/* fp32 unary [N] -> [N] */
static void unary_f32(unsigned fn, float imm0, float imm1, const float *x, float *y,
		      unsigned n)
{
	struct npu_tprog p;
	struct npu_hw_insn *in = unary_insn(&p, fn, NPU_DT_FP32, 0x1000, NPU_DT_FP32, 0x8000, n);
	struct npu_hw_completion c;

	put_f32(0x1000, x, n);
	in->params.cvu.imm[0] = npu_f32_bits(imm0);
	in->params.cvu.imm[1] = npu_f32_bits(imm1);
	c = run(&p);
	ck_ok(c);
	get_f32(y, 0x8000, n);
}

START_TEST(test_cvu_sigmoid)
{
	enum { N = 200 };
	float x[N], y[N];
	double worst = 0;

	for (int i = 0; i < N; i++)
		x[i] = frnd() * 10;
	x[0] = 0;
	unary_f32(NPU_FN_SIGMOID, 0, 0, x, y, N);
	for (int i = 0; i < N; i++)
		worst = fmax(worst, fabs(y[i] - 1.0 / (1.0 + exp(-(double)x[i]))));
	ck_assert_msg(worst < 1e-6, "sigmoid worst %g", worst);
	ck_assert(y[0] == 0.5f);
}
END_TEST

START_TEST(test_cvu_relu_clip)
{
	enum { N = 64 };
	float x[N], y[N];

	for (int i = 0; i < N; i++)
		x[i] = frnd() * 4;
	unary_f32(NPU_FN_RELU, 0, 0, x, y, N);
	for (int i = 0; i < N; i++)
		ck_assert_msg(y[i] == (x[i] > 0 ? x[i] : 0.0f), "relu %d: %g", i, y[i]);
	unary_f32(NPU_FN_CLIP, -1.5f, 0.75f, x, y, N);
	for (int i = 0; i < N; i++) {
		float e = x[i] < -1.5f ? -1.5f : x[i] > 0.75f ? 0.75f : x[i];

		ck_assert_msg(y[i] == e, "clip %d: %g of %g want %g", i, y[i], x[i], e);
	}
}
END_TEST

/* int8 in-quant -> sigmoid -> stage ADD 1 -> stage MUL 2 -> int8 out-quant */
START_TEST(test_cvu_pipeline_quant)
{
	enum { N = 300 };
	struct npu_tprog p;
	struct npu_hw_insn *in = one(&p, NPU_CVU_UNARY);
	uint32_t X0 = 0x4000, Y0 = 0x5001;
	int8_t *X = (int8_t *)(hb + X0), *Y = (int8_t *)(hb + Y0);
	struct npu_hw_cvu_params *cv = &in->params.cvu;
	float is = 0.05f, os = 0.02f;
	int izp = 3, ozp = -20;
	unsigned bad = 0, exact = 0;
	struct npu_hw_completion c;

	for (int i = 0; i < N; i++)
		X[i] = (int8_t)(rand() % 256 - 128);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_INT8, X0, 2, (uint32_t[]){ 20, 15 });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_INT8, Y0, 2, (uint32_t[]){ 20, 15 });
	cv->fn = NPU_FN_SIGMOID;
	cv->flags = NPU_CVU_F_IN_QUANT | NPU_CVU_F_OUT_QUANT;
	cv->in_scale = npu_f32_bits(is);
	cv->in_zp = izp;
	cv->out_scale = npu_f32_bits(os);
	cv->out_zp = ozp;
	cv->nstages = 2;
	cv->stage[0].fn = NPU_FN_ADD;
	cv->stage[0].imm = npu_f32_bits(1.0f);
	cv->stage[1].fn = NPU_FN_MUL;
	cv->stage[1].imm = npu_f32_bits(2.0f);
	c = run(&p);
	ck_ok(c);
	for (int i = 0; i < N; i++) {
		float v = ((float)X[i] - izp) * is;

		v = 1.0f / (1.0f + expf(-v));
		v = (v + 1.0f) * 2.0f;
		int32_t e = sat(nearbyint(v / os) + ozp, -128, 127);

		bad += abs(Y[i] - e) > 1;
		exact += Y[i] == e;
	}
	ck_assert_msg(!bad, "%u mismatches", bad);
	ck_assert_msg(exact > N * 9 / 10, "only %u exact", exact);
	/* the values must span the range: (sigmoid + 1) * 2 in [2, 4] -> [80, 127] */
	ck_assert_int_eq(Y[-1], 0);	/* byte before an odd-addressed dst untouched */
}
END_TEST

/* y[r][i] = x[r][i] + b[i], b broadcast over the rows by a step-0 level */
START_TEST(test_cvu_binary_broadcast)
{
	enum { R = 6, N = 5 };
	struct npu_tprog p;
	struct npu_hw_insn *in = one(&p, NPU_CVU_BINARY);
	float x[R * N], b[N], y[R * N];
	struct npu_hw_completion c;

	for (int i = 0; i < R * N; i++)
		x[i] = frnd() * 3;
	for (int i = 0; i < N; i++)
		b[i] = frnd() * 100;
	put_f32(0x1000, x, R * N);
	put_f32(0x2000, b, N);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0x1000, 2, (uint32_t[]){ N, R });
	npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_FP32, 0x2000, 2, (uint32_t[]){ N, 1 });
	npu_twu_level(&in->opnd[1], 1, 0, 0, R);
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x3000, 2, (uint32_t[]){ N, R });
	in->params.cvu.fn = NPU_FN_ADD;
	c = run(&p);
	ck_ok(c);
	get_f32(y, 0x3000, R * N);
	for (int i = 0; i < R * N; i++)
		ck_assert_msg(y[i] == x[i] + b[i % N], "add %d: %g want %g", i, y[i], x[i] + b[i % N]);
}
END_TEST

static void reduce(unsigned fn, unsigned levels, const uint32_t *sdims, unsigned snd,
		   const uint32_t *ddims, unsigned dnd)
{
	struct npu_tprog p;
	struct npu_hw_insn *in = one(&p, NPU_CVU_REDUCE);
	struct npu_hw_completion c;

	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0x1000, snd, sdims);
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x8000, dnd, ddims);
	in->params.cvu.fn = (uint8_t)fn;
	in->params.cvu.reduce_levels = (uint8_t)levels;
	c = run(&p);
	ck_ok(c);
}

START_TEST(test_cvu_reduce_sum_max)
{
	enum { A = 7, B = 3, O = 4 };
	float x[O * B * A], y[O];

	for (int i = 0; i < O * B * A; i++)
		x[i] = frnd() * 10;
	put_f32(0x1000, x, O * B * A);
	/* sum over the 2 inner levels [A, B] of [A, B, O] -> [O] */
	reduce(NPU_REDUCE_SUM, 2, (uint32_t[]){ A, B, O }, 3, (uint32_t[]){ O }, 1);
	get_f32(y, 0x8000, O);
	for (int o = 0; o < O; o++) {
		double s = 0;

		for (int i = 0; i < A * B; i++)
			s += x[o * A * B + i];
		ck_assert_msg(fabs(s - y[o]) < 1e-4, "sum %d: %g want %g", o, y[o], s);
	}
	/* max over the innermost level -> [B, O] */
	reduce(NPU_REDUCE_MAX, 1, (uint32_t[]){ A, B, O }, 3, (uint32_t[]){ B, O }, 2);
	get_f32(y, 0x8000, 1);
	for (int r = 0; r < O * B; r++) {
		float m = x[r * A], got;

		for (int i = 1; i < A; i++)
			m = fmaxf(m, x[r * A + i]);
		memcpy(&got, hb + 0x8000 + 4 * r, 4);
		ck_assert_msg(got == m, "max %d: %g want %g", r, got, m);
	}
	/* max over everything -> one element */
	reduce(NPU_REDUCE_MAX, 3, (uint32_t[]){ A, B, O }, 3, (uint32_t[]){ 1 }, 1);
	{
		float m = x[0];

		for (int i = 1; i < O * B * A; i++)
			m = fmaxf(m, x[i]);
		get_f32(y, 0x8000, 1);
		ck_assert(y[0] == m);
	}
}
END_TEST

START_TEST(test_cvu_softmax)
{
	enum { R = 5, N = 13 };
	struct npu_tprog p;
	struct npu_hw_insn *in = one(&p, NPU_CVU_SOFTMAX);
	float x[R * N], y[R * N];
	double worst = 0;
	struct npu_hw_completion c;

	for (int i = 0; i < R * N; i++)
		x[i] = frnd() * 20;
	put_f32(0x1000, x, R * N);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0x1000, 2, (uint32_t[]){ N, R });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x4000, 2, (uint32_t[]){ N, R });
	in->params.cvu.reduce_levels = 1;
	c = run(&p);
	ck_ok(c);
	get_f32(y, 0x4000, R * N);
	for (int r = 0; r < R; r++) {
		double s = 0, m = -INFINITY, z = 0;

		for (int i = 0; i < N; i++) {
			s += y[r * N + i];
			m = fmax(m, x[r * N + i]);
			ck_assert(y[r * N + i] >= 0);
		}
		ck_assert_msg(fabs(s - 1.0) < 1e-5, "row %d sums to %.9g", r, s);
		for (int i = 0; i < N; i++)
			z += exp(x[r * N + i] - m);
		for (int i = 0; i < N; i++)
			worst = fmax(worst, fabs(y[r * N + i] - exp(x[r * N + i] - m) / z));
	}
	ck_assert_msg(worst < 1e-6, "softmax worst %g", worst);
}
END_TEST

START_TEST(test_cvu_layernorm)
{
	enum { R = 6, N = 8 };
	struct npu_tprog p;
	struct npu_hw_insn *in = one(&p, NPU_CVU_LAYERNORM);
	float x[R * N], g[N], b[N], y[R * N], eps = 1e-5f;
	double worst = 0;
	struct npu_hw_completion c;

	for (int i = 0; i < R * N; i++)
		x[i] = frnd() * 3 + (float)(i / N);
	for (int i = 0; i < N; i++) {
		g[i] = frnd() + 1;
		b[i] = frnd();
	}
	put_f32(0x1000, x, R * N);
	put_f32(0x2000, g, N);
	put_f32(0x2100, b, N);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0x1000, 2, (uint32_t[]){ N, R });
	npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_FP32, 0x2000, 2, (uint32_t[]){ N, 1 });
	npu_twu_level(&in->opnd[1], 1, 0, 0, R);
	npu_twu_dense(&in->opnd[2], NPU_SPACE_HBSM, NPU_DT_FP32, 0x2100, 2, (uint32_t[]){ N, 1 });
	npu_twu_level(&in->opnd[2], 1, 0, 0, R);
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x3000, 2, (uint32_t[]){ N, R });
	in->params.cvu.reduce_levels = 1;
	in->params.cvu.imm[0] = npu_f32_bits(eps);
	c = run(&p);
	ck_ok(c);
	get_f32(y, 0x3000, R * N);
	for (int r = 0; r < R; r++) {
		double mu = 0, var = 0;

		for (int i = 0; i < N; i++)
			mu += x[r * N + i];
		mu /= N;
		for (int i = 0; i < N; i++)
			var += (x[r * N + i] - mu) * (x[r * N + i] - mu);
		var /= N;
		for (int i = 0; i < N; i++) {
			double e = (x[r * N + i] - mu) / sqrt(var + eps) * g[i] + b[i];

			worst = fmax(worst, fabs(e - y[r * N + i]));
		}
	}
	ck_assert_msg(worst < 1e-4, "layernorm worst %g", worst);
}
END_TEST

/*
 * LAYERNORM with NPU_CVU_F_RMS (1.2): x / sqrt(mean(x^2) + eps) * gamma,
 * no beta operand; one with a beta operand, or RMS on another opcode, is
 * refused.
 */
static struct npu_hw_insn *rms_insn(struct npu_tprog *p, unsigned R, unsigned N, float eps)
{
	struct npu_hw_insn *in = one(p, NPU_CVU_LAYERNORM);

	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0x1000, 2, (uint32_t[]){ N, R });
	npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_FP32, 0x2000, 2, (uint32_t[]){ N, 1 });
	npu_twu_level(&in->opnd[1], 1, 0, 0, R);
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x3000, 2, (uint32_t[]){ N, R });
	in->params.cvu.reduce_levels = 1;
	in->params.cvu.flags = NPU_CVU_F_RMS;
	in->params.cvu.imm[0] = npu_f32_bits(eps);
	return in;
}

START_TEST(test_cvu_rmsnorm)
{
	enum { R = 5, N = 24 };
	struct npu_tprog p;
	struct npu_hw_insn *in;
	float x[R * N], g[N], y[R * N], eps = 1e-6f;
	double worst = 0;
	uint64_t rms_cycles;
	struct npu_hw_completion c;

	for (int i = 0; i < R * N; i++)
		x[i] = frnd() * 3 + (float)(i / N);	/* rows with an offset: no mean removed */
	for (int i = 0; i < N; i++)
		g[i] = frnd() + 1;
	put_f32(0x1000, x, R * N);
	put_f32(0x2000, g, N);
	rms_insn(&p, R, N, eps);
	c = run(&p);
	ck_ok(c);
	get_f32(y, 0x3000, R * N);
	for (int r = 0; r < R; r++) {
		double ms = 0;

		for (int i = 0; i < N; i++)
			ms += (double)x[r * N + i] * x[r * N + i];
		ms /= N;
		for (int i = 0; i < N; i++) {
			double e = x[r * N + i] / sqrt(ms + eps) * g[i];

			worst = fmax(worst, fabs(e - y[r * N + i]) / fmax(1.0, fabs(e)));
		}
	}
	ck_assert_msg(worst < 2e-6, "rmsnorm worst %g", worst);
	rms_cycles = c.cycles;

	/*
	 * Cycle cost as LAYERNORM's, three passes: above one pass over the
	 * same x (UNARY), below LAYERNORM, which also streams beta.
	 */
	in = rms_insn(&p, R, N, eps);
	in->params.cvu.flags = 0;
	npu_twu_dense(&in->opnd[2], NPU_SPACE_HBSM, NPU_DT_FP32, 0x2100, 2, (uint32_t[]){ N, 1 });
	npu_twu_level(&in->opnd[2], 1, 0, 0, R);
	c = run(&p);
	ck_ok(c);
	ck_assert_uint_lt(rms_cycles, c.cycles);
	in = one(&p, NPU_CVU_UNARY);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0x1000, 2, (uint32_t[]){ N, R });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x3000, 2, (uint32_t[]){ N, R });
	c = run(&p);
	ck_ok(c);
	ck_assert_uint_gt(rms_cycles, c.cycles);

	/* a beta operand is not part of RMS norm */
	in = rms_insn(&p, R, N, eps);
	npu_twu_dense(&in->opnd[2], NPU_SPACE_HBSM, NPU_DT_FP32, 0x2100, 2, (uint32_t[]){ N, 1 });
	npu_twu_level(&in->opnd[2], 1, 0, 0, R);
	c = run(&p);
	ck_assert_uint_eq(c.status, NPU_TASK_ILLEGAL_INSN);
	ck_assert_uint_eq(c.detail, NPU_IE_RESERVED);
	/* gamma must match x */
	in = rms_insn(&p, R, N, eps);
	npu_twu_dense(&in->opnd[1], NPU_SPACE_HBSM, NPU_DT_FP32, 0x2000, 1, (uint32_t[]){ N });
	c = run(&p);
	ck_assert_uint_eq(c.status, NPU_TASK_ILLEGAL_INSN);
	ck_assert_uint_eq(c.detail, NPU_IE_SHAPE);
	/* RMS is a LAYERNORM flag only */
	in = one(&p, NPU_CVU_SOFTMAX);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0x1000, 2, (uint32_t[]){ N, R });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x3000, 2, (uint32_t[]){ N, R });
	in->params.cvu.reduce_levels = 1;
	in->params.cvu.flags = NPU_CVU_F_RMS;
	c = run(&p);
	ck_assert_uint_eq(c.status, NPU_TASK_ILLEGAL_INSN);
	ck_assert_uint_eq(c.detail, NPU_IE_PARAM);
}
END_TEST

/* The 1.2 unary functions through the engine: SiLU and the tanh GELU. */
START_TEST(test_cvu_silu_gelu_tanh)
{
	enum { N = 64 };
	float x[N], y[N];
	double worst = 0;

	for (int i = 0; i < N; i++)
		x[i] = (float)(i - 32) / 4.0f;
	unary_f32(NPU_FN_SILU, 0, 0, x, y, N);
	for (int i = 0; i < N; i++)
		worst = fmax(worst, fabs(y[i] - x[i] / (1 + exp(-(double)x[i]))));
	unary_f32(NPU_FN_GELU_TANH, 0, 0, x, y, N);
	for (int i = 0; i < N; i++) {
		double v = x[i];
		double e = 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));

		worst = fmax(worst, fabs(y[i] - e));
	}
	ck_assert_msg(worst < 4e-6, "worst %g", worst);
}
END_TEST

/* POOL on int8 [C, W, H]; avg with and without COUNT_PAD */
static void pool(unsigned fn, unsigned flags, int out_float)
{
	enum { H = 7, W = 6, C = 3, KH = 3, KW = 3, S = 2, PT = 1, PB = 1, PL = 1, PR = 1 };
	enum { OH = (H + PT + PB - KH) / S + 1, OW = (W + PL + PR - KW) / S + 1 };
	struct npu_tprog p;
	struct npu_hw_insn *in = one(&p, NPU_CVU_POOL);
	uint32_t X0 = 0x6000, Y0 = 0x7000;
	int8_t *X = (int8_t *)(hb + X0);
	struct npu_hw_cvu_params *cv = &in->params.cvu;
	unsigned bad = 0;
	struct npu_hw_completion c;

	for (int i = 0; i < H * W * C; i++)
		X[i] = (int8_t)(rand() % 256 - 128);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_INT8, X0, 3, (uint32_t[]){ C, W, H });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, out_float ? NPU_DT_FP32 : NPU_DT_INT8, Y0, 3,
		      (uint32_t[]){ C, OW, OH });
	cv->fn = (uint8_t)fn;
	cv->flags = (uint8_t)flags;
	cv->kernel_h = KH;
	cv->kernel_w = KW;
	cv->stride_h = cv->stride_w = S;
	cv->dil_h = cv->dil_w = 1;
	cv->pad_top = PT;
	cv->pad_bottom = PB;
	cv->pad_left = PL;
	cv->pad_right = PR;
	c = run(&p);
	ck_ok(c);
	for (int oh = 0; oh < OH; oh++)
		for (int ow = 0; ow < OW; ow++)
			for (int ch = 0; ch < C; ch++) {
				double s = 0, m = -1e9;
				int n = 0, o = (oh * OW + ow) * C + ch;

				for (int kh = 0; kh < KH; kh++)
					for (int kw = 0; kw < KW; kw++) {
						int ih = oh * S - PT + kh, iw = ow * S - PL + kw;

						if (ih < 0 || ih >= H || iw < 0 || iw >= W)
							continue;
						s += X[(ih * W + iw) * C + ch];
						m = fmax(m, X[(ih * W + iw) * C + ch]);
						n++;
					}
				if (fn == NPU_POOL_MAX) {
					bad += ((int8_t *)(hb + Y0))[o] != (int8_t)m;
				} else {
					double e = s / ((flags & NPU_CVU_F_COUNT_PAD) ? KH * KW : n);
					float got;

					memcpy(&got, hb + Y0 + 4 * o, 4);
					bad += fabs(got - e) > 1e-4;
				}
			}
	ck_assert_msg(!bad, "pool fn %u flags %u: %u mismatches", fn, flags, bad);
}

START_TEST(test_cvu_pool_max)
{
	pool(NPU_POOL_MAX, 0, 0);
}
END_TEST

START_TEST(test_cvu_pool_avg)
{
	pool(NPU_POOL_AVG, 0, 1);
	pool(NPU_POOL_AVG, NPU_CVU_F_COUNT_PAD, 1);
}
END_TEST

/* quantize fp32 -> int8 (OUT_QUANT, half-even / half-away) and dequantize */
START_TEST(test_cvu_quant_dequant)
{
	enum { N = 10 };
	const float x[N] = { 0.25f, 0.75f, -0.25f, -0.75f, 1.25f, 100.0f, -100.0f, 0.0f, 3.1f, -2.6f };
	/* v / 0.5 = 0.5, 1.5, -0.5, -1.5, 2.5, 200, -200, 0, 6.2, -5.2; out_zp 4 */
	const int8_t even[N] = { 4, 6, 4, 2, 6, 127, -128, 4, 10, -1 };
	const int8_t away[N] = { 5, 6, 3, 2, 7, 127, -128, 4, 10, -1 };
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	int8_t *Y = (int8_t *)(hb + 0x2000);
	float back[N];

	put_f32(0x1000, x, N);
	for (unsigned mode = 0; mode < 2; mode++) {
		in = unary_insn(&p, NPU_FN_IDENTITY, NPU_DT_FP32, 0x1000, NPU_DT_INT8, 0x2000, N);
		in->params.cvu.flags = NPU_CVU_F_OUT_QUANT;
		in->params.cvu.out_scale = npu_f32_bits(0.5f);
		in->params.cvu.out_zp = 4;
		in->params.cvu.round = (uint8_t)mode;
		c = run(&p);
		ck_ok(c);
		for (int i = 0; i < N; i++) {
			int8_t e = mode == NPU_ROUND_HALF_AWAY ? away[i] : even[i];

			ck_assert_msg(Y[i] == e, "quant mode %u [%d]: %d want %d", mode, i, Y[i], e);
		}
	}
	/* dequantize the half-away result: (q - 4) * 0.5 */
	in = unary_insn(&p, NPU_FN_IDENTITY, NPU_DT_INT8, 0x2000, NPU_DT_FP32, 0x3000, N);
	in->params.cvu.flags = NPU_CVU_F_IN_QUANT;
	in->params.cvu.in_scale = npu_f32_bits(0.5f);
	in->params.cvu.in_zp = 4;
	c = run(&p);
	ck_ok(c);
	get_f32(back, 0x3000, N);
	for (int i = 0; i < N; i++)
		ck_assert_msg(back[i] == (float)(away[i] - 4) * 0.5f, "dequant [%d]: %g", i, back[i]);
}
END_TEST

/*
 * IDENTITY stores its source as loaded: over an overlapping destination
 * every element is read before any is written (memmove), through
 * stages the source is not written, and bf16 NaN payloads and signs
 * widen to fp32 bit for bit.
 */
START_TEST(test_cvu_identity_in_place)
{
	enum { N = 67 };
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;
	float x[N], y[N];
	uint16_t *h;

	for (int i = 0; i < N; i++)
		x[i] = frnd() * 8;
	/* fp32 moved two elements up over itself */
	put_f32(0x1000, x, N);
	unary_insn(&p, NPU_FN_IDENTITY, NPU_DT_FP32, 0x1000, NPU_DT_FP32, 0x1008, N);
	c = run(&p);
	ck_ok(c);
	get_f32(y, 0x1008, N);
	ck_assert_mem_eq(y, x, sizeof(x));
	/* through two stages, (x + 1) * 2, the source left as it was */
	put_f32(0x2000, x, N);
	in = unary_insn(&p, NPU_FN_IDENTITY, NPU_DT_FP32, 0x2000, NPU_DT_FP32, 0x2400, N);
	in->params.cvu.nstages = 2;
	in->params.cvu.stage[0].fn = NPU_FN_ADD;
	in->params.cvu.stage[0].imm = npu_f32_bits(1.0f);
	in->params.cvu.stage[1].fn = NPU_FN_MUL;
	in->params.cvu.stage[1].imm = npu_f32_bits(2.0f);
	c = run(&p);
	ck_ok(c);
	get_f32(y, 0x2400, N);
	for (int i = 0; i < N; i++)
		ck_assert_msg(y[i] == (x[i] + 1.0f) * 2.0f, "stages [%d]: %g of %g", i, y[i], x[i]);
	ck_assert_mem_eq(hb + 0x2000, x, sizeof(x));
	/* bf16 to fp32: NaNs of both signs with payloads, infinities, zeros */
	h = (uint16_t *)(void *)(hb + 0x3000);
	for (int i = 0; i < N; i++)
		h[i] = (uint16_t)(0x3f80 + i);
	h[1] = 0x7fc1;
	h[2] = 0xffa5;
	h[3] = 0x7f80;
	h[4] = 0x8000;
	unary_insn(&p, NPU_FN_IDENTITY, NPU_DT_BF16, 0x3000, NPU_DT_FP32, 0x4000, N);
	c = run(&p);
	ck_ok(c);
	for (int i = 0; i < N; i++) {
		uint32_t bits;

		memcpy(&bits, hb + 0x4000 + 4 * i, 4);
		ck_assert_msg(bits == (uint32_t)h[i] << 16, "bf16 [%d]: %08x of %04x", i,
			      bits, h[i]);
	}
}
END_TEST

START_TEST(test_cvu_validation)
{
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_hw_completion c;

	in = one(&p, NPU_CVU_UNARY);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0, 1, (uint32_t[]){ 8 });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x100, 1, (uint32_t[]){ 8 });
	in->params.cvu.fn = NPU_FN_MUL;
	c = run(&p);
	ck_assert_uint_eq(c.status, NPU_TASK_ILLEGAL_INSN);
	ck_assert_uint_eq(c.detail, NPU_IE_PARAM);

	in = one(&p, NPU_CVU_UNARY);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0, 1, (uint32_t[]){ 8 });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_INT8, 0x100, 1, (uint32_t[]){ 8 });
	in->params.cvu.flags = NPU_CVU_F_OUT_QUANT;	/* out_scale 0 */
	c = run(&p);
	ck_assert_uint_eq(c.status, NPU_TASK_ILLEGAL_INSN);
	ck_assert_uint_eq(c.detail, NPU_IE_PARAM);

	in = one(&p, NPU_CVU_REDUCE);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0, 2, (uint32_t[]){ 8, 2 });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x100, 1, (uint32_t[]){ 8 });
	in->params.cvu.reduce_levels = 1;
	c = run(&p);
	ck_assert_uint_eq(c.status, NPU_TASK_ILLEGAL_INSN);
	ck_assert_uint_eq(c.detail, NPU_IE_SHAPE);

	in = one(&p, NPU_CVU_UNARY);
	npu_twu_dense(&in->opnd[0], NPU_SPACE_HBSM, NPU_DT_FP32, 0, 1, (uint32_t[]){ 8 });
	npu_twu_dense(&in->opnd[3], NPU_SPACE_HBSM, NPU_DT_FP32, 0x100, 1, (uint32_t[]){ 8 });
	in->params.cvu.stage[2].fn = NPU_FN_RELU;	/* beyond nstages */
	c = run(&p);
	ck_assert_uint_eq(c.status, NPU_TASK_ILLEGAL_INSN);
	ck_assert_uint_eq(c.detail, NPU_IE_RESERVED);
}
END_TEST

static Suite *unit_cvu_suite(void)
{
	Suite *s = suite_create("unit_cvu");
	TCase *tc = tcase_create("cvu");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_cvu_sigmoid);
	tcase_add_test(tc, test_cvu_relu_clip);
	tcase_add_test(tc, test_cvu_pipeline_quant);
	tcase_add_test(tc, test_cvu_binary_broadcast);
	tcase_add_test(tc, test_cvu_reduce_sum_max);
	tcase_add_test(tc, test_cvu_softmax);
	tcase_add_test(tc, test_cvu_layernorm);
	tcase_add_test(tc, test_cvu_rmsnorm);
	tcase_add_test(tc, test_cvu_silu_gelu_tanh);
	tcase_add_test(tc, test_cvu_pool_max);
	tcase_add_test(tc, test_cvu_pool_avg);
	tcase_add_test(tc, test_cvu_quant_dequant);
	tcase_add_test(tc, test_cvu_identity_in_place);
	tcase_add_test(tc, test_cvu_validation);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(unit_cvu_suite)
