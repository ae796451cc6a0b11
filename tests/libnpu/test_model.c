// SPDX-License-Identifier: MIT
/*
 * Compiled models and contexts: a hand-built model (a DMA program that
 * copies its input to its output, addresses through relocations) run
 * synchronously, asynchronously and zero-copy; the native file format's
 * round trip and its errors on corrupt, truncated and foreign files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/npu_model_priv.h"
#include "npu/npu_hw.h"
#include "npu_test.h"

#define N_ELEMS 1000	/* float32 [10, 100] */

static void twu_bytes(struct npu_hw_twu *t, uint32_t n)
{
	memset(t, 0, sizeof(*t));
	t->space = NPU_SPACE_DDR;
	t->dtype = NPU_DT_UINT8;
	t->nlevels = 1;
	t->level[0].step = 1;
	t->level[0].final = (int32_t)n - 1;
}

/* Segments: 0 program, 1 I/O (input at 0, output at 4096). */
static struct npu_cmodel *copy_model(void)
{
	struct npu_cmodel *m = calloc(1, sizeof(*m));
	struct npu_hw_prog *hdr;
	struct npu_hw_insn *in;
	size_t psize = sizeof(*hdr) + sizeof(*in);
	uint32_t bytes = N_ELEMS * 4;

	m->nclusters = 1;
	m->tpbs = 1;
	strcpy(m->producer, "test_model.c");
	m->nsegs = 2;
	m->segs = calloc(2, sizeof(*m->segs));
	m->segs[0].kind = NPU_SEG_PROGRAM;
	m->segs[0].size = psize;
	m->segs[0].data = calloc(1, psize);
	m->segs[1].kind = NPU_SEG_IO;
	m->segs[1].size = 8192;

	hdr = (struct npu_hw_prog *)m->segs[0].data;
	in = (struct npu_hw_insn *)(hdr + 1);
	hdr->magic = NPU_PROG_MAGIC;
	hdr->version_major = NPU_PROG_VERSION_MAJOR;
	hdr->insn_count = 1;
	hdr->insn_offset = sizeof(*hdr);
	in->unit = NPU_UNIT_DMA;
	in->opcode = NPU_DMA_COPY;
	twu_bytes(&in->opnd[NPU_OPND_SRC0], bytes);
	twu_bytes(&in->opnd[NPU_OPND_DST], bytes);

	m->nrelocs = 2;
	m->relocs = calloc(2, sizeof(*m->relocs));
	m->relocs[0] = (struct npu_reloc){
		.seg = 0, .target = 1, .addend = 0,
		.offset = (uint64_t)((uint8_t *)&in->opnd[NPU_OPND_SRC0].base - m->segs[0].data),
	};
	m->relocs[1] = (struct npu_reloc){
		.seg = 0, .target = 1, .addend = 4096,
		.offset = (uint64_t)((uint8_t *)&in->opnd[NPU_OPND_DST].base - m->segs[0].data),
	};

	m->ninputs = m->noutputs = 1;
	m->inputs = calloc(1, sizeof(*m->inputs));
	m->outputs = calloc(1, sizeof(*m->outputs));
	for (int k = 0; k < 2; k++) {
		struct npu_io *io = k ? m->outputs : m->inputs;

		io->name = strdup(k ? "y" : "x");
		io->info.name = io->name;
		io->info.dtype = NPU_DTYPE_FLOAT32;
		io->info.rank = 2;
		io->info.dims[0] = 10;
		io->info.dims[1] = 100;
		io->info.bytes = bytes;
		io->seg = 1;
		io->offset = k ? 4096 : 0;
	}
	m->nsteps = 1;
	m->steps = calloc(1, sizeof(*m->steps));
	m->steps[0] = (struct npu_step){ .seg = 0, .offset = 0, .size = (uint32_t)psize };
	ck_assert_int_eq(npu_cmodel_validate(m), NPU_OK);
	return m;
}

static npu_model *wrap(struct npu_cmodel *cm)
{
	npu_model *m = calloc(1, sizeof(*m));

	m->cm = cm;
	return m;
}

static void fill(float *x, float seed)
{
	for (int i = 0; i < N_ELEMS; i++)
		x[i] = seed + (float)i * 0.25f;
}

START_TEST(run_sync_async_zero_copy)
{
	npu_model *model = wrap(copy_model());
	float x[N_ELEMS], y[N_ELEMS];
	npu_tensor in = { "x", NPU_DTYPE_FLOAT32, x, sizeof(x) };
	npu_tensor out = { NULL, NPU_DTYPE_FLOAT32, y, sizeof(y) };
	npu_tensor_info info;
	npu_run_stats stats;
	npu_device *dev;
	npu_context *ctx;
	npu_job *job;
	void *buf;
	size_t bytes;

	ck_assert_uint_eq(npu_model_input_count(model), 1);
	ck_assert_int_eq(npu_model_input_info(model, 0, &info), NPU_OK);
	ck_assert_str_eq(info.name, "x");
	ck_assert_int_eq(info.dims[1], 100);
	ck_assert_int_eq(npu_model_output_info(model, 1, &info), NPU_ERR_NOT_FOUND);

	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_int_eq(npu_context_create(dev, model, 0, &ctx), NPU_OK);

	fill(x, 1.0f);
	ck_assert_int_eq(npu_run(ctx, &in, 1, &out, 1), NPU_OK);
	ck_assert_mem_eq(x, y, sizeof(x));
	ck_assert_int_eq(npu_context_last_run(ctx, &stats), NPU_OK);
	ck_assert_uint_gt(stats.device_cycles, 0);
	ck_assert_uint_eq(stats.steps, 1);

	fill(x, -7.0f);
	memset(y, 0, sizeof(y));
	ck_assert_int_eq(npu_submit(ctx, &in, 1, &out, 1, &job), NPU_OK);
	ck_assert_int_eq(npu_job_wait(job, 10ll * 1000000000), NPU_OK);
	npu_job_free(job);
	ck_assert_mem_eq(x, y, sizeof(x));

	/* Zero-copy: write the input buffer, run with no tensors. */
	ck_assert_int_eq(npu_context_input_buffer(ctx, 0, &buf, &bytes), NPU_OK);
	ck_assert_uint_eq(bytes, sizeof(x));
	fill(buf, 100.0f);
	ck_assert_int_eq(npu_run(ctx, NULL, 0, NULL, 0), NPU_OK);
	ck_assert_int_eq(npu_context_output_buffer(ctx, 0, &buf, &bytes), NPU_OK);
	fill(x, 100.0f);
	ck_assert_mem_eq(x, buf, sizeof(x));

	npu_context_destroy(ctx);
	npu_device_close(dev);
	npu_model_free(model);
}
END_TEST

START_TEST(run_errors)
{
	npu_model *model = wrap(copy_model());
	float x[N_ELEMS], y[N_ELEMS];
	npu_tensor in = { "x", NPU_DTYPE_FLOAT32, x, sizeof(x) - 4 };
	npu_tensor out = { "nope", NPU_DTYPE_FLOAT32, y, sizeof(y) };
	npu_device *dev;
	npu_context *ctx;

	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_int_eq(npu_context_create(dev, model, 0, &ctx), NPU_OK);
	ck_assert_int_eq(npu_run(ctx, &in, 1, NULL, 0), NPU_ERR_SHAPE);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "4000 bytes"));
	in.bytes = sizeof(x);
	in.dtype = NPU_DTYPE_INT32;
	ck_assert_int_eq(npu_run(ctx, &in, 1, NULL, 0), NPU_ERR_SHAPE);
	in.dtype = NPU_DTYPE_FLOAT32;
	ck_assert_int_eq(npu_run(ctx, &in, 1, &out, 1), NPU_ERR_NOT_FOUND);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "nope"));
	{
		npu_tensor two[2] = { in, in };

		two[1].name = NULL;	/* by position: there is no second input */
		ck_assert_int_eq(npu_run(ctx, two, 2, NULL, 0), NPU_ERR_INVALID_ARG);
	}
	ck_assert_int_eq(npu_run(NULL, NULL, 0, NULL, 0), NPU_ERR_INVALID_ARG);
	/* Still works after the refusals. */
	out.name = "y";
	ck_assert_int_eq(npu_run(ctx, &in, 1, &out, 1), NPU_OK);
	npu_context_destroy(ctx);
	ck_assert_int_eq(npu_context_create(dev, model, 15, &ctx), NPU_ERR_INVALID_ARG);
	npu_device_close(dev);
	npu_model_free(model);
}
END_TEST

/* Same outputs for every defect mask of up to two fused clusters. */
START_TEST(defect_masks_same_outputs)
{
	npu_model *model = wrap(copy_model());
	float x[N_ELEMS], y[N_ELEMS];
	npu_tensor in = { NULL, NPU_DTYPE_FLOAT32, x, sizeof(x) };
	npu_tensor out = { NULL, NPU_DTYPE_FLOAT32, y, sizeof(y) };

	fill(x, 3.0f);
	for (int a = -1; a < 14; a++) {
		for (int b = a + 1; b < 14; b += 5) {
			char spec[64];
			npu_device *dev;
			npu_context *ctx;
			unsigned mask = (a >= 0 ? 1u << a : 0) | 1u << b;

			snprintf(spec, sizeof(spec), "emu:defect-mask=0x%x", mask);
			ck_assert_int_eq(npu_device_open(spec, &dev), NPU_OK);
			ck_assert_int_eq(npu_context_create(dev, model, 0, &ctx), NPU_OK);
			memset(y, 0, sizeof(y));
			ck_assert_int_eq(npu_run(ctx, &in, 1, &out, 1), NPU_OK);
			ck_assert_mem_eq(x, y, sizeof(x));
			npu_context_destroy(ctx);
			npu_device_close(dev);
		}
	}
	npu_model_free(model);
}
END_TEST

static char *tmp_path(const char *name)
{
	static char path[256];

	snprintf(path, sizeof(path), "/tmp/npu-test-%d-%s", (int)getpid(), name);
	return path;
}

START_TEST(save_load_round_trip)
{
	npu_model *model = wrap(copy_model()), *back;
	float x[N_ELEMS], y[N_ELEMS];
	npu_tensor in = { NULL, NPU_DTYPE_FLOAT32, x, sizeof(x) };
	npu_tensor out = { NULL, NPU_DTYPE_FLOAT32, y, sizeof(y) };
	char *path = tmp_path("rt.npum");
	npu_tensor_info info;
	npu_device *dev;
	npu_context *ctx;

	ck_assert_int_eq(npu_model_save(model, path), NPU_OK);
	{
		char url[300];

		/* By URL too (file://, no network). */
		snprintf(url, sizeof(url), "file://%s", path);
		ck_assert_int_eq(npu_model_load_url(url, NULL, NULL, NULL, &back), NPU_OK);
		ck_assert_uint_eq(npu_model_input_count(back), 1);
		npu_model_free(back);
	}
	ck_assert_int_eq(npu_model_load_file(path, NULL, NULL, &back), NPU_OK);
	ck_assert_int_eq(npu_model_output_info(back, 0, &info), NPU_OK);
	ck_assert_str_eq(info.name, "y");
	ck_assert_uint_eq(info.bytes, sizeof(y));
	ck_assert_uint_eq(npu_model_clusters(back), 1);
	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_int_eq(npu_context_create(dev, back, 0, &ctx), NPU_OK);
	fill(x, 42.0f);
	ck_assert_int_eq(npu_run(ctx, &in, 1, &out, 1), NPU_OK);
	ck_assert_mem_eq(x, y, sizeof(x));
	npu_context_destroy(ctx);
	npu_device_close(dev);
	npu_model_free(back);
	npu_model_free(model);
	unlink(path);
}
END_TEST

START_TEST(file_errors)
{
	npu_model *model = wrap(copy_model()), *back = NULL;
	uint8_t *buf, *copy;
	size_t len;

	ck_assert_int_eq(npu_cmodel_write(model->cm, &buf, &len), NPU_OK);
	copy = malloc(len);

	/* Every truncation fails cleanly. */
	for (size_t n = 0; n < len; n++) {
		npu_status st = npu_model_load_memory(buf, n, NULL, NULL, &back);

		ck_assert_int_ne(st, NPU_OK);
		ck_assert_ptr_null(back);
	}
	/* Every single-byte corruption fails cleanly (the checksum), except
	 * in the minor version (bytes 6-7), which readers ignore. */
	for (size_t i = 0; i < len; i += 7) {
		if (i == 6 || i == 7)
			continue;
		memcpy(copy, buf, len);
		copy[i] ^= 0x5a;
		ck_assert_int_ne(npu_model_load_memory(copy, len, NULL, NULL, &back), NPU_OK);
	}
	/* A newer format version is a version error naming both. */
	memcpy(copy, buf, len);
	copy[4] = 9;
	ck_assert_int_eq(npu_model_load_memory(copy, len, NULL, NULL, &back), NPU_ERR_VERSION);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "version 9"));
	/* A file that is not a model at all. */
	ck_assert_int_eq(npu_model_load_file("/nonexistent/model.onnx", NULL, NULL, &back),
			 NPU_ERR_IO);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "/nonexistent/model.onnx"));
	ck_assert_int_eq(npu_model_load_memory(NULL, 0, NULL, NULL, &back), NPU_ERR_INVALID_ARG);
	free(copy);
	free(buf);
	npu_model_free(model);
}
END_TEST

/* Models whose indices point outside their buffers are refused. */
START_TEST(validate_rejects)
{
	struct npu_cmodel *m = copy_model();

	m->relocs[0].offset = m->segs[0].size;
	ck_assert_int_eq(npu_cmodel_validate(m), NPU_ERR_FORMAT);
	m->relocs[0].offset = 8;
	m->relocs[1].target = 7;
	ck_assert_int_eq(npu_cmodel_validate(m), NPU_ERR_FORMAT);
	m->relocs[1].target = 1;
	m->outputs[0].offset = 8192 - 100;
	ck_assert_int_eq(npu_cmodel_validate(m), NPU_ERR_FORMAT);
	m->outputs[0].offset = 4096;
	m->steps[0].offset = 64;
	ck_assert_int_eq(npu_cmodel_validate(m), NPU_ERR_FORMAT);
	m->steps[0].offset = 0;
	free(m->outputs[0].name);
	m->outputs[0].name = strdup("x");
	m->outputs[0].info.name = m->outputs[0].name;
	ck_assert_int_eq(npu_cmodel_validate(m), NPU_ERR_FORMAT);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "two tensors named 'x'"));
	npu_cmodel_free(m);
}
END_TEST

static Suite *model_suite(void)
{
	Suite *s = suite_create("npu_model");
	TCase *tc = tcase_create("model");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, run_sync_async_zero_copy);
	tcase_add_test(tc, run_errors);
	tcase_add_test(tc, defect_masks_same_outputs);
	tcase_add_test(tc, save_load_round_trip);
	tcase_add_test(tc, file_errors);
	tcase_add_test(tc, validate_rejects);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(model_suite)
