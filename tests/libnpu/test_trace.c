// SPDX-License-Identifier: MIT
/*
 * npu_context_trace() / npu_context_write_trace(): the emulator's timeline
 * of a run, its bound, its errors, and the refusal on a backend that
 * cannot see the timeline (a kernel device; faked here by hiding the
 * emulator's ctx_trace operation, as no /dev/accel exists in the suite).
 * The trace's content is checked against the counters by
 * tests/tools/npu-trace.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dev/npu_dev.h"
#include "npu_internal.h"
#include "npu_test.h"
#include "onnx_build.h"

struct fixture {
	npu_device *dev;
	npu_model *model;
	npu_context *ctx;
	char path[64];
};

static void setup(struct fixture *f)
{
	size_t len;
	uint8_t *onnx = onnxb_small_cnn(&len);
	int fd;

	ck_assert_ptr_nonnull(onnx);
	ck_assert_int_eq(npu_device_open("emu", &f->dev), NPU_OK);
	ck_assert_int_eq(npu_model_load_memory(onnx, len, f->dev, NULL, &f->model), NPU_OK);
	free(onnx);
	ck_assert_int_eq(npu_context_create(f->dev, f->model, 0, &f->ctx), NPU_OK);
	strcpy(f->path, "/tmp/npu-trace-XXXXXX");
	fd = mkstemp(f->path);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

static void teardown(struct fixture *f)
{
	unlink(f->path);
	npu_context_destroy(f->ctx);
	npu_model_free(f->model);
	npu_device_close(f->dev);
}

START_TEST(trace_written_after_a_run)
{
	struct fixture f;
	size_t len = 0;
	char *json;

	setup(&f);
	ck_assert_int_eq(npu_context_write_trace(f.ctx, f.path), NPU_ERR_NOT_FOUND);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "npu_context_trace()"));
	ck_assert_int_eq(npu_context_trace(f.ctx, 1u << 20), NPU_OK);
	ck_assert_int_eq(npu_context_write_trace(f.ctx, f.path), NPU_ERR_NOT_FOUND);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "no run"));
	ck_assert_int_eq(npu_run(f.ctx, NULL, 0, NULL, 0), NPU_OK);
	ck_assert_int_eq(npu_context_write_trace(f.ctx, f.path), NPU_OK);
	json = npu_test_slurp(f.path, &len);
	ck_assert_ptr_nonnull(json);
	json = realloc(json, len + 1);
	json[len] = 0;
	ck_assert_ptr_nonnull(strstr(json, "\"traceEvents\":["));
	ck_assert_ptr_nonnull(strstr(json, "\"clock_mhz\":"));
	ck_assert_ptr_nonnull(strstr(json, "\"name\":\"TPB 0 TCU\""));
	ck_assert_ptr_nonnull(strstr(json, "\"cat\":\"step\""));
	ck_assert_ptr_nonnull(strstr(json, "\"ph\":\"X\""));
	ck_assert_int_eq(json[len - 2], '}');
	free(json);
	/* Stopped: nothing to write. */
	ck_assert_int_eq(npu_context_trace(f.ctx, 0), NPU_OK);
	ck_assert_int_eq(npu_context_write_trace(f.ctx, f.path), NPU_ERR_NOT_FOUND);
	teardown(&f);
}
END_TEST

START_TEST(trace_bad_path)
{
	struct fixture f;

	setup(&f);
	ck_assert_int_eq(npu_context_trace(f.ctx, 1u << 20), NPU_OK);
	ck_assert_int_eq(npu_run(f.ctx, NULL, 0, NULL, 0), NPU_OK);
	ck_assert_int_eq(npu_context_write_trace(f.ctx, "/nonexistent/dir/t.json"), NPU_ERR_IO);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "/nonexistent/dir/t.json"));
	ck_assert_int_eq(npu_context_write_trace(f.ctx, NULL), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_context_write_trace(NULL, f.path), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_context_trace(NULL, 1), NPU_ERR_INVALID_ARG);
	teardown(&f);
}
END_TEST

/* A run past the bound is refused, naming it; the next bound applies afresh. */
START_TEST(trace_bounded)
{
	struct fixture f;

	setup(&f);
	ck_assert_int_eq(npu_context_trace(f.ctx, 3), NPU_OK);
	ck_assert_int_eq(npu_run(f.ctx, NULL, 0, NULL, 0), NPU_OK);
	ck_assert_int_eq(npu_context_write_trace(f.ctx, f.path), NPU_ERR_NO_MEMORY);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "more than 3 trace events"));
	ck_assert_int_eq(npu_context_trace(f.ctx, 1u << 20), NPU_OK);
	ck_assert_int_eq(npu_run(f.ctx, NULL, 0, NULL, 0), NPU_OK);
	ck_assert_int_eq(npu_context_write_trace(f.ctx, f.path), NPU_OK);
	teardown(&f);
}
END_TEST

/* Tracing changes no cycle: the same run's cycles traced and untraced. */
START_TEST(trace_same_cycles)
{
	struct fixture f;
	npu_run_stats plain, traced;

	setup(&f);
	ck_assert_int_eq(npu_run(f.ctx, NULL, 0, NULL, 0), NPU_OK);
	ck_assert_int_eq(npu_context_last_run(f.ctx, &plain), NPU_OK);
	ck_assert_int_eq(npu_context_trace(f.ctx, 1u << 20), NPU_OK);
	ck_assert_int_eq(npu_run(f.ctx, NULL, 0, NULL, 0), NPU_OK);
	ck_assert_int_eq(npu_context_last_run(f.ctx, &traced), NPU_OK);
	ck_assert_uint_gt(plain.device_cycles, 0);
	ck_assert_uint_eq(plain.device_cycles, traced.device_cycles);
	teardown(&f);
}
END_TEST

/* A backend without the timeline (the kernel driver's): refused, saying how to trace. */
START_TEST(trace_refused_without_emulator)
{
	struct fixture f;
	struct npu_dev_ops blind;
	const struct npu_dev_ops *real;

	setup(&f);
	real = f.dev->ops;
	blind = *real;
	blind.ctx_trace = NULL;
	f.dev->ops = &blind;
	ck_assert_int_eq(npu_context_trace(f.ctx, 1u << 20), NPU_ERR_UNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "tracing needs the emulator"));
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "--device emu"));
	/* Stopping is always fine. */
	ck_assert_int_eq(npu_context_trace(f.ctx, 0), NPU_OK);
	f.dev->ops = real;
	teardown(&f);
}
END_TEST

static Suite *trace_suite(void)
{
	Suite *s = suite_create("npu_trace");
	TCase *tc = tcase_create("trace");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, trace_written_after_a_run);
	tcase_add_test(tc, trace_bad_path);
	tcase_add_test(tc, trace_bounded);
	tcase_add_test(tc, trace_same_cycles);
	tcase_add_test(tc, trace_refused_without_emulator);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(trace_suite)
