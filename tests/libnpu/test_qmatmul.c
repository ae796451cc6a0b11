// SPDX-License-Identifier: MIT
/*
 * Quantised weights (issue 16): com.microsoft MatMulNBits and the
 * weight-only int8 of NPU_PRECISION_W8 on the emulator, against a C
 * reference of the same arithmetic (weights widened to bf16 as the CVU
 * DEQUANT does, A rounded to bf16, sums in float); the DDR bytes a run
 * reads (the DMA counters) are the packed weights', not bf16's; ISA 1.3
 * is required by name; unsupported forms are refused by name.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_compile.h"
#include "compile/npu_ops.h"
#include "ir_build.h"
#include "model/npu_cmodel.h"
#include "model/npu_model_priv.h"
#include "npu_test.h"

static float bf(float f)
{
	return npu_ir_bf16_to_f32(npu_ir_f32_to_bf16(f));
}

static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 9;
}

/* One MatMulNBits case: shapes, format, and what the test gave it. */
struct nb {
	int M, K, N, bits, block;
	int zp;			/* 0 none, 1 uint8 (packed for 4 bits), 2 float32 */
	bool bias, g_idx;
	/* filled in */
	uint8_t *q;		/* codes [N][K] unpacked */
	float *s, *zf, *b;	/* [N][K / block], zero points as floats, bias [N] */
};

/* The graph: A [1, M, K] -> Y [1, M, N]. */
static npu_ir_graph *nb_graph(struct nb *c, int *y_out)
{
	npu_ir_graph *g = irb_graph(17);
	int kb = c->K / c->block, bpr = c->K * c->bits / 8, zrow = (kb * c->bits + 7) / 8;
	uint8_t *packed = calloc((size_t)(c->N * bpr), 1), *zp = calloc((size_t)(c->N * zrow), 1);
	uint32_t seed = 7u + (uint32_t)c->block + (uint32_t)c->zp;
	int in[6] = { -1, -1, -1, -1, -1, -1 }, y;
	npu_ir_node *n;

	c->q = malloc((size_t)(c->N * c->K));
	c->s = malloc((size_t)(c->N * kb) * 4);
	c->zf = malloc((size_t)(c->N * kb) * 4);
	c->b = malloc((size_t)c->N * 4);
	for (int i = 0; i < c->N * c->K; i++) {
		c->q[i] = (uint8_t)(lcg(&seed) % (1u << c->bits));
		if (c->bits == 4)
			packed[i / 2] |= (uint8_t)(c->q[i] << (i % 2 ? 4 : 0));
		else
			packed[i] = c->q[i];
	}
	for (int r = 0; r < c->N; r++)
		for (int j = 0; j < kb; j++) {
			uint8_t z = (uint8_t)(lcg(&seed) % (1u << c->bits));

			c->s[r * kb + j] = (float)(lcg(&seed) % 1000 + 1) / 40000.0f;
			c->zf[r * kb + j] = c->zp == 2 ? (float)z + 0.25f :
					    c->zp == 1 ? (float)z : (float)(1 << (c->bits - 1));
			if (c->bits == 4)
				zp[r * zrow + j / 2] |= (uint8_t)(z << (j % 2 ? 4 : 0));
			else
				zp[r * zrow + j] = z;
		}
	for (int j = 0; j < c->N; j++)
		c->b[j] = (float)(lcg(&seed) % 200) / 100.0f - 1.0f;
	in[0] = irb_tensor(g, "A", NPU_DTYPE_FLOAT32, 3, (int64_t[]){ 1, c->M, c->K });
	in[1] = irb_const(g, "B", NPU_DTYPE_UINT8, 3, (int64_t[]){ c->N, kb, bpr / kb }, packed);
	in[2] = irb_const(g, "scales", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ c->N * kb }, c->s);
	if (c->zp == 1)
		in[3] = irb_const(g, "zp", NPU_DTYPE_UINT8, 1, (int64_t[]){ c->N * zrow }, zp);
	if (c->zp == 2)
		in[3] = irb_const(g, "zp", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ c->N * kb }, c->zf);
	if (c->g_idx) {
		int32_t *gi = calloc((size_t)c->K, 4);

		for (int k = 0; k < c->K; k++)
			gi[k] = k / c->block;
		in[4] = irb_const(g, "g_idx", NPU_DTYPE_INT32, 1, (int64_t[]){ c->K }, gi);
		free(gi);
	}
	if (c->bias)
		in[5] = irb_const(g, "bias", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ c->N }, c->b);
	y = irb_tensor(g, "Y", NPU_DTYPE_FLOAT32, -1, NULL);
	n = irb_node(g, "MatMulNBits", in, 6, &y, 1);
	free(n->domain);
	n->domain = strdup("com.microsoft");
	n->opset = 1;
	ck_assert_int_eq(npu_ir_set_attr_int(n, "K", c->K), NPU_OK);
	ck_assert_int_eq(npu_ir_set_attr_int(n, "N", c->N), NPU_OK);
	ck_assert_int_eq(npu_ir_set_attr_int(n, "bits", c->bits), NPU_OK);
	ck_assert_int_eq(npu_ir_set_attr_int(n, "block_size", c->block), NPU_OK);
	irb_io(g, in, 1, &y, 1);
	free(packed);
	free(zp);
	*y_out = y;
	return g;
}

static void nb_free(struct nb *c)
{
	free(c->q);
	free(c->s);
	free(c->zf);
	free(c->b);
}

static float *randa(int64_t n)
{
	float *v = malloc((size_t)n * 4);
	uint32_t seed = 3;

	for (int64_t i = 0; i < n; i++)
		v[i] = (float)(lcg(&seed) % 2001) / 1000.0f - 1.0f;
	return v;
}

/* Compile for the emulator at @precision. */
static npu_status compile(npu_ir_graph *g, unsigned precision, struct npu_cmodel **cm)
{
	struct npu_compile_target tgt = { 0 };
	npu_device_info info;
	npu_device *dev;

	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	npu_device_get_info(dev, &info);
	npu_device_close(dev);
	tgt.clusters = info.healthy_clusters;
	tgt.tpbs = info.tpbs_per_cluster;
	tgt.hbsm_size = info.hbsm_size;
	tgt.precision = precision;
	return npu_compile_ir(g, &tgt, cm);
}

/* Run @cm once on the emulator (and free it); the DDR bytes its DMAs read into *@dma. */
static void exec(struct npu_cmodel *cm, void *x, void *y, uint64_t *dma)
{
	npu_model *m = calloc(1, sizeof(*m));
	npu_tensor in = { NULL, cm->inputs[0].info.dtype, x, cm->inputs[0].info.bytes };
	npu_tensor out = { NULL, cm->outputs[0].info.dtype, y, cm->outputs[0].info.bytes };
	npu_device_counters a, b;
	npu_device *dev;
	npu_context *ctx;

	m->cm = cm;
	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_int_eq(npu_context_create(dev, m, 0, &ctx), NPU_OK);
	ck_assert_int_eq(npu_device_read_counters(dev, &a), NPU_OK);
	ck_assert_msg(npu_run(ctx, &in, 1, &out, 1) == NPU_OK, "run: %s", npu_last_error());
	ck_assert_int_eq(npu_device_read_counters(dev, &b), NPU_OK);
	*dma = b.dma_bytes[0] + b.dma_bytes[1] - a.dma_bytes[0] - a.dma_bytes[1];
	npu_context_destroy(ctx);
	npu_model_free(m);
	npu_device_close(dev);
}

/* Compile and run case @c against the C reference. */
static void check_nbits(struct nb *c)
{
	int y, kb = c->K / c->block;
	npu_ir_graph *g = nb_graph(c, &y);
	struct npu_cmodel *cm;
	float *a = randa((int64_t)c->M * c->K), *yv = calloc((size_t)(c->M * c->N), 4);
	uint64_t dma, weights = (uint64_t)c->N * c->K * c->bits / 8 + (uint64_t)c->N * kb * 4;
	npu_status st;

	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	st = compile(g, NPU_PRECISION_BF16, &cm);
	ck_assert_msg(st == NPU_OK, "compile: %s", npu_last_error());
	exec(cm, a, yv, &dma);
	for (int i = 0; i < c->M; i++)
		for (int j = 0; j < c->N; j++) {
			float s = 0.0f, tol = 0.0f;

			for (int k = 0; k < c->K; k++) {
				float w = bf(((float)c->q[j * c->K + k] - c->zf[j * kb + k / c->block]) *
					     c->s[j * kb + k / c->block]);

				s += bf(a[i * c->K + k]) * w;
				tol += fabsf(w);
			}
			if (c->bias)
				s += c->b[j];
			ck_assert_msg(fabsf(yv[i * c->N + j] - s) <= 1e-5f * tol + 1e-6f,
				      "bits %d block %d zp %d: y[%d][%d] %g, expected %g", c->bits,
				      c->block, c->zp, i, j, yv[i * c->N + j], s);
		}
	/*
	 * DDR reads: the packed codes and scales (and zero points, bias, A),
	 * never the bf16 weights (2 bytes each).
	 */
	if (c->zp)
		weights += (uint64_t)c->N * kb * (c->zp == 2 ? 4 : 1);
	ck_assert_uint_ge(dma, weights);
	ck_assert_msg(dma < weights + (uint64_t)c->M * c->K * 4 * 8 + (uint64_t)c->N * 4,
		      "DMA read %llu bytes for %llu bytes of weights", (unsigned long long)dma,
		      (unsigned long long)weights);
	ck_assert_uint_lt(dma, (uint64_t)c->N * c->K * 2);
	free(a);
	free(yv);
	npu_ir_graph_free(g);	/* the run freed cm with its model */
	nb_free(c);
}

START_TEST(nbits_blocks)
{
	static const int blocks[] = { 16, 32, 64, 128 };

	for (unsigned i = 0; i < 4; i++)
		for (int zp = 0; zp < 3; zp++) {
			struct nb c = { .M = 3, .K = 256, .N = 40, .bits = 4, .block = blocks[i],
					.zp = zp, .bias = zp == 1 };

			check_nbits(&c);
		}
}
END_TEST

/* 8-bit blocks; one row (decode) over a wide N spread over the workers. */
START_TEST(nbits_8bit_and_decode)
{
	struct nb c8 = { .M = 2, .K = 128, .N = 24, .bits = 8, .block = 32, .zp = 1, .bias = true };
	struct nb dec = { .M = 1, .K = 512, .N = 1000, .bits = 4, .block = 32, .zp = 1 };

	check_nbits(&c8);
	check_nbits(&dec);
}
END_TEST

/* Refused by name, with what is not supported. */
static void refused(struct nb *c, const char *why)
{
	int y;
	npu_ir_graph *g = nb_graph(c, &y);
	struct npu_cmodel *cm = NULL;
	npu_status st;

	st = npu_ops_infer_shapes(g);
	if (!st)
		st = compile(g, NPU_PRECISION_BF16, &cm);
	ck_assert_int_eq(st, NPU_ERR_UNSUPPORTED);
	ck_assert_msg(strstr(npu_last_error(), "operator 'com.microsoft.MatMulNBits' (node ") &&
		      strstr(npu_last_error(), why), "message: %s", npu_last_error());
	npu_ir_graph_free(g);
	nb_free(c);
}

START_TEST(nbits_refused)
{
	struct nb gi = { .M = 1, .K = 64, .N = 8, .bits = 4, .block = 32, .g_idx = true };
	struct nb b8 = { .M = 1, .K = 64, .N = 8, .bits = 4, .block = 8 };
	struct nb b48 = { .M = 1, .K = 96, .N = 8, .bits = 4, .block = 48 };

	refused(&gi, "g_idx (act-order) is not supported");
	refused(&b8, "only a block_size that is a power of two >= 16 is supported");
	refused(&b48, "only a block_size that is a power of two >= 16 is supported");
}
END_TEST

/* Programs with DEQUANT need 1.3; a 1.2 device refuses them by name. */
START_TEST(nbits_needs_isa_1_3)
{
	struct nb c = { .M = 1, .K = 64, .N = 8, .bits = 4, .block = 32 };
	int y;
	npu_ir_graph *g = nb_graph(&c, &y);
	struct npu_cmodel *cm;

	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_eq(compile(g, NPU_PRECISION_BF16, &cm), NPU_OK);
	ck_assert_int_eq(npu_cmodel_check_isa(cm, NPU_PROG_VERSION_MAJOR << 16 | 3), NPU_OK);
	ck_assert_int_eq(npu_cmodel_check_isa(cm, NPU_PROG_VERSION_MAJOR << 16 | 2),
			 NPU_ERR_VERSION);
	ck_assert_msg(strstr(npu_last_error(), "needs NPU program version 1.3") &&
		      strstr(npu_last_error(), "CVU DEQUANT"), "message: %s", npu_last_error());
	npu_cmodel_free(cm);
	npu_ir_graph_free(g);
	nb_free(&c);
}
END_TEST

/*
 * NPU_PRECISION_W8: a float MatMul (with its bias row) and a Gemm with
 * transB get symmetric int8 rows per output channel: the result is the
 * reference with those weights, and DDR reads a byte per weight.
 */
static void check_w8(bool gemm)
{
	const int M = 3, K = 96, N = 40;
	npu_ir_graph *g = irb_graph(17);
	float *w = randa((int64_t)K * N), *a = randa((int64_t)M * K), *b = randa(N);
	float *yv = calloc((size_t)(M * N), 4);
	struct npu_cmodel *cm;
	uint64_t dma;
	int x, wt, bt, y;
	npu_ir_node *n;

	for (int i = 0; i < K * N; i++)
		w[i] *= (float)(1 + i % 7);	/* channels of different ranges */
	x = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 2, (int64_t[]){ M, K });
	wt = irb_const(g, "w", NPU_DTYPE_FLOAT32, 2, gemm ? (int64_t[]){ N, K } : (int64_t[]){ K, N },
		       w);
	bt = irb_const(g, "b", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ N }, b);
	y = irb_tensor(g, "y", NPU_DTYPE_FLOAT32, -1, NULL);
	if (gemm) {
		n = irb_node(g, "Gemm", (int[]){ x, wt, bt }, 3, &y, 1);
		ck_assert_int_eq(npu_ir_set_attr_int(n, "transB", 1), NPU_OK);
		ck_assert_int_eq(npu_ir_set_attr_float(n, "alpha", 0.5f), NPU_OK);
	} else {
		n = irb_node(g, "MatMul", (int[]){ x, wt }, 2, &y, 1);
	}
	irb_io(g, &x, 1, &y, 1);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_msg(compile(g, NPU_PRECISION_W8, &cm) == NPU_OK, "compile: %s", npu_last_error());
	exec(cm, a, yv, &dma);
	for (int j = 0; j < N; j++) {
		float mx = 0.0f, sc;

		for (int k = 0; k < K; k++)
			mx = fmaxf(mx, fabsf(gemm ? w[j * K + k] : w[k * N + j]));
		sc = mx / 127.0f;
		for (int i = 0; i < M; i++) {
			float s = 0.0f, tol = 0.0f;

			for (int k = 0; k < K; k++) {
				float q = nearbyintf((gemm ? w[j * K + k] : w[k * N + j]) / sc);
				float wq = bf(q * sc);

				s += bf(a[i * K + k]) * wq;
				tol += fabsf(wq);
			}
			s = gemm ? 0.5f * s + b[j] : s;
			ck_assert_msg(fabsf(yv[i * N + j] - s) <= 1e-5f * tol + 1e-5f,
				      "%s y[%d][%d] %g, expected %g", gemm ? "Gemm" : "MatMul", i, j,
				      yv[i * N + j], s);
		}
	}
	ck_assert_uint_ge(dma, (uint64_t)K * N);
	ck_assert_uint_lt(dma, (uint64_t)K * N * 2);
	free(w);
	free(a);
	free(b);
	free(yv);
	npu_ir_graph_free(g);
}

START_TEST(w8_matmul_gemm)
{
	check_w8(false);
	check_w8(true);
}
END_TEST

static Suite *qmatmul_suite(void)
{
	Suite *s = suite_create("qmatmul");
	TCase *tc = tcase_create("qmatmul");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, nbits_blocks);
	tcase_add_test(tc, nbits_8bit_and_decode);
	tcase_add_test(tc, nbits_refused);
	tcase_add_test(tc, nbits_needs_isa_1_3);
	tcase_add_test(tc, w8_matmul_gemm);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(qmatmul_suite)
