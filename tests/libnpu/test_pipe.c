// SPDX-License-Identifier: MIT
/*
 * Batches pipelined through stages (compile/npu_pipe.c) through the public
 * API: every batch element gives the bits the unbatched model gives for
 * that input alone, on every defect mask; stages own disjoint clusters and
 * hand over through their own CCB counters; the batch survives a
 * save/load; bad batch arguments are clear errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/npu_model_priv.h"
#include "npu.h"
#include "npu/npu_hw.h"
#include "npu_test.h"
#include "onnx_build.h"

#define D(...) ((const int64_t[]){ __VA_ARGS__ })

#define NIN ONNXB_SMALL_CNN_IN
#define NCLS ONNXB_SMALL_CNN_CLASSES

static npu_model *load(npu_device *dev, unsigned batch)
{
	npu_compile_options co;
	npu_model *m = NULL;
	uint8_t *buf;
	size_t len;
	npu_status st;

	npu_compile_options_init(&co);
	co.batch = batch;
	buf = onnxb_small_cnn(&len);
	st = npu_model_load_memory(buf, len, dev, &co, &m);
	free(buf);
	ck_assert_msg(!st, "batch %u: %s", batch, npu_last_error());
	return m;
}

/* Outputs of one unbatched run on input seed @seed, concatenated. */
static float *run_one(npu_device *dev, npu_model *m, unsigned seed, size_t *n)
{
	float x[NIN];
	npu_tensor in = { "x", NPU_DTYPE_FLOAT32, x, sizeof(x) };
	npu_context *ctx;
	float *y = NULL;

	*n = 0;
	onnxb_fill(x, NIN, seed);
	ck_assert_msg(!npu_context_create(dev, m, 0, &ctx), "%s", npu_last_error());
	ck_assert_msg(!npu_run(ctx, &in, 1, NULL, 0), "%s", npu_last_error());
	for (size_t o = 0; o < npu_model_output_count(m); o++) {
		void *buf;
		size_t bytes;

		ck_assert(!npu_context_output_buffer(ctx, o, &buf, &bytes));
		y = realloc(y, *n * 4 + bytes);
		memcpy(y + *n, buf, bytes);
		*n += bytes / 4;
	}
	npu_context_destroy(ctx);
	return y;
}

/* A batch run (inputs given by name) matches unbatched runs bit for bit. */
static void batch_matches(const char *spec, unsigned batch)
{
	npu_device *dev;
	npu_model *one, *many;
	npu_context *ctx;
	npu_tensor *in = calloc(batch, sizeof(*in));
	float *x = calloc((size_t)batch * NIN, 4);
	npu_run_stats rs;
	float *got = NULL;
	size_t ngot = 0;

	ck_assert_msg(!npu_device_open(spec, &dev), "%s", npu_last_error());
	one = load(dev, 1);
	many = load(dev, batch);
	ck_assert_uint_eq(npu_model_batch(one), 1);
	ck_assert_uint_eq(npu_model_batch(many), batch);
	for (unsigned b = 0; b < batch; b++) {
		onnxb_fill(x + (size_t)b * NIN, NIN, 100 + b);
		in[b] = (npu_tensor){ "x", NPU_DTYPE_FLOAT32, x + (size_t)b * NIN, NIN * 4 };
	}
	ck_assert_msg(!npu_context_create(dev, many, 0, &ctx), "%s", npu_last_error());
	ck_assert_msg(!npu_run(ctx, in, batch, NULL, 0), "%s", npu_last_error());
	ck_assert(!npu_context_last_run(ctx, &rs));
	ck_assert_uint_ge(rs.steps, 1);
	/* Keep the batch's outputs: the single runs need the partition. */
	for (size_t o = 0; o < 2 * (size_t)batch; o++) {
		void *buf;
		size_t bytes;

		ck_assert(!npu_context_output_buffer(ctx, o, &buf, &bytes));
		got = realloc(got, (ngot + bytes / 4) * 4);
		memcpy(got + ngot, buf, bytes);
		ngot += bytes / 4;
	}
	npu_context_destroy(ctx);
	for (unsigned b = 0; b < batch; b++) {
		size_t n;
		float *want = run_one(dev, one, 100 + b, &n);

		ck_assert_uint_eq(ngot, n * batch);
		ck_assert_msg(!memcmp(got + (size_t)b * n, want, n * 4),
			      "%s: batch element %u differs from its own run", spec, b);
		free(want);
	}
	free(got);
	npu_model_free(one);
	npu_model_free(many);
	npu_device_close(dev);
	free(in);
	free(x);
}

START_TEST(batch_elements_match_single_runs)
{
	batch_matches("emu", 2);
	batch_matches("emu", 5);
	batch_matches("emu:clusters=4", 3);
}
END_TEST

START_TEST(batch_defect_masks_identical)
{
	static const char *const specs[] = {
		"emu:defect-mask=0x0001", "emu:defect-mask=0x2001", "emu:defect-mask=0x0180",
		"emu:defect-mask=0x0840",
	};

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		batch_matches(specs[i], 4);
}
END_TEST

/*
 * The program's structure: stages own disjoint clusters, each stage's
 * write-backs signal its own CCB counter, and more than one stage exists.
 */
START_TEST(stages_own_disjoint_clusters)
{
	npu_device *dev;
	npu_model *m;
	const struct npu_cmodel *cm;
	uint32_t owner[16];
	unsigned stages = 0;
	uint64_t seen = 0;

	ck_assert(!npu_device_open("emu", &dev));
	m = load(dev, 8);
	cm = m->cm;
	ck_assert_uint_eq(cm->nsteps, 1);
	for (unsigned c = 0; c < 16; c++)
		owner[c] = UINT32_MAX;
	{
		const struct npu_step *s = &cm->steps[0];
		const uint8_t *p = cm->segs[s->seg].data + s->offset;
		const struct npu_hw_prog *h = (const void *)p;

		for (uint32_t i = 0; i < h->insn_count; i++) {
			const struct npu_hw_insn *in =
				(const void *)(p + h->insn_offset + (size_t)i * NPU_INSN_SIZE);
			unsigned ctr = in->sync.signal[0].counter;

			if (in->unit != NPU_UNIT_CSU || !(in->sync.signal[0].flags & NPU_SIGNAL_CCB))
				continue;
			for (unsigned c = 0; c < 16; c++) {
				if (!(in->cluster_mask & (1u << c)))
					continue;
				ck_assert_msg(owner[c] == UINT32_MAX || owner[c] == ctr,
					      "cluster %u works for stages %u and %u", c, owner[c], ctr);
				owner[c] = ctr;
			}
			if (!(seen & (1ull << ctr)))
				stages++;
			seen |= 1ull << ctr;
		}
	}
	ck_assert_uint_ge(stages, 2);
	npu_model_free(m);
	npu_device_close(dev);
}
END_TEST

START_TEST(batch_save_load_and_errors)
{
	char path[] = "/tmp/npu-pipe-XXXXXX";
	npu_device *dev;
	npu_model *m, *back;
	npu_context *ctx;
	npu_compile_options co;
	float x[NIN] = { 0 }, y[NCLS];
	npu_tensor in[4], out = { "prob", NPU_DTYPE_FLOAT32, y, sizeof(y) };
	void *buf;
	size_t len, bytes;
	uint8_t *onnx;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert(!npu_device_open("emu", &dev));
	m = load(dev, 3);
	ck_assert_msg(!npu_model_save(m, path), "%s", npu_last_error());
	ck_assert_msg(!npu_model_load_file(path, dev, NULL, &back), "%s", npu_last_error());
	ck_assert_uint_eq(npu_model_batch(back), 3);
	unlink(path);
	npu_model_free(m);

	for (int i = 0; i < 4; i++)
		in[i] = (npu_tensor){ NULL, NPU_DTYPE_FLOAT32, x, sizeof(x) };
	ck_assert(!npu_context_create(dev, back, 0, &ctx));
	/* 3 elements x 1 input: a fourth tensor is one too many. */
	ck_assert_int_eq(npu_run(ctx, in, 4, NULL, 0), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "batch"));
	ck_assert_int_eq(npu_run(ctx, in, 3, &out, 1), NPU_OK);
	ck_assert_int_eq(npu_context_input_buffer(ctx, 2, &buf, &bytes), NPU_OK);
	ck_assert_uint_eq(bytes, sizeof(x));
	ck_assert_int_eq(npu_context_input_buffer(ctx, 3, &buf, &bytes), NPU_ERR_NOT_FOUND);
	ck_assert_int_eq(npu_context_output_buffer(ctx, 5, &buf, &bytes), NPU_OK);
	ck_assert_int_eq(npu_context_output_buffer(ctx, 6, &buf, &bytes), NPU_ERR_NOT_FOUND);
	npu_context_destroy(ctx);

	npu_compile_options_init(&co);
	co.batch = NPU_MAX_BATCH + 1;
	onnx = onnxb_small_cnn(&len);
	ck_assert_int_eq(npu_model_load_memory(onnx, len, dev, &co, &m), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "batch"));
	free(onnx);

	npu_model_free(back);
	npu_device_close(dev);
}
END_TEST

START_TEST(batch_validate_rejects)
{
	npu_device *dev;
	npu_model *m;
	struct npu_cmodel *cm;

	ck_assert(!npu_device_open("emu", &dev));
	m = load(dev, 2);
	cm = m->cm;
	ck_assert_int_eq(npu_cmodel_validate(cm), NPU_OK);
	cm->batch = NPU_MAX_BATCH + 1;
	ck_assert_int_eq(npu_cmodel_validate(cm), NPU_ERR_FORMAT);
	cm->batch = 2;
	cm->io_stride *= 4;	/* the I/O segment no longer holds the batch */
	ck_assert_int_eq(npu_cmodel_validate(cm), NPU_ERR_FORMAT);
	cm->io_stride /= 4;
	ck_assert_int_eq(npu_cmodel_validate(cm), NPU_OK);
	npu_model_free(m);
	npu_device_close(dev);
}
END_TEST

/*
 * Performance counters and per-step cycles: the run shows on the
 * partition's clusters and not on the fused one, the steps add up to the
 * run and are named after their nodes, and the names survive save/load.
 */
START_TEST(counters_and_step_profile)
{
	char path[] = "/tmp/npu-prof-XXXXXX";
	npu_device *dev;
	npu_model *m, *back;
	npu_context *ctx;
	npu_device_counters a, b;
	npu_run_stats rs;
	npu_step_stats ss[64];
	size_t n = 0;
	uint64_t busy = 0, links = 0, tcu = 0, sum = 0;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert(!npu_device_open("emu:defect-mask=0x0001", &dev));
	m = load(dev, 1);
	ck_assert(!npu_context_create(dev, m, 0, &ctx));
	ck_assert_int_eq(npu_context_last_run_steps(ctx, ss, 64, &n), NPU_ERR_NOT_FOUND);
	ck_assert(!npu_device_read_counters(dev, &a));
	ck_assert_uint_eq(a.have & (NPU_HAVE_CYCLES | NPU_HAVE_UNITS | NPU_HAVE_TRAFFIC),
			  NPU_HAVE_CYCLES | NPU_HAVE_UNITS | NPU_HAVE_TRAFFIC);
	ck_assert(!npu_run(ctx, NULL, 0, NULL, 0));
	ck_assert(!npu_device_read_counters(dev, &b));
	ck_assert(!npu_context_last_run(ctx, &rs));
	ck_assert_uint_gt(rs.device_cycles, 0);
	ck_assert_uint_eq(b.cycles - a.cycles, rs.device_cycles);
	ck_assert_uint_eq(b.cluster_busy[0], a.cluster_busy[0]);	/* fused */
	for (unsigned c = 1; c < NPU_MAX_CLUSTERS; c++) {
		busy += b.cluster_busy[c] - a.cluster_busy[c];
		tcu += b.unit_busy[c][0] - a.unit_busy[c][0];
	}
	for (unsigned l = 0; l < NPU_MAX_LINKS; l++)
		links += b.link_bytes[l] - a.link_bytes[l];
	ck_assert_uint_gt(busy, 0);
	ck_assert_uint_gt(tcu, 0);
	ck_assert_uint_gt(links, 0);
	ck_assert_uint_gt(b.dma_bytes[0] + b.dma_bytes[1], a.dma_bytes[0] + a.dma_bytes[1]);

	ck_assert(!npu_context_last_run_steps(ctx, ss, 64, &n));
	ck_assert_uint_eq(n, rs.steps);
	ck_assert_uint_ge(n, 6);	/* relu fuses into conv1 */
	for (size_t i = 0; i < n; i++)
		sum += ss[i].device_cycles;
	ck_assert_uint_eq(sum, rs.device_cycles);
	ck_assert_str_eq(ss[0].label, "Conv conv1");
	ck_assert_str_eq(ss[n - 1].label, "Softmax softmax");
	npu_context_destroy(ctx);

	ck_assert(!npu_model_save(m, path));
	ck_assert(!npu_model_load_file(path, dev, NULL, &back));
	unlink(path);
	ck_assert(!npu_context_create(dev, back, 0, &ctx));
	ck_assert(!npu_run(ctx, NULL, 0, NULL, 0));
	ck_assert(!npu_context_last_run_steps(ctx, ss, 2, &n));
	ck_assert_uint_eq(n, rs.steps);
	ck_assert_str_eq(ss[0].label, "Conv conv1");
	ck_assert_str_eq(ss[1].label, "Conv conv2");
	npu_context_destroy(ctx);
	npu_model_free(back);
	npu_model_free(m);
	npu_device_close(dev);
}
END_TEST

static Suite *pipe_suite(void)
{
	Suite *s = suite_create("npu_pipe");
	TCase *tc = tcase_create("pipe");

	tcase_add_test(tc, batch_elements_match_single_runs);
	tcase_add_test(tc, batch_defect_masks_identical);
	tcase_add_test(tc, stages_own_disjoint_clusters);
	tcase_add_test(tc, batch_save_load_and_errors);
	tcase_add_test(tc, batch_validate_rejects);
	tcase_add_test(tc, counters_and_step_profile);
	tcase_set_timeout(tc, 300);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(pipe_suite)
