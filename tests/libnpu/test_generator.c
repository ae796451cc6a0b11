// SPDX-License-Identifier: MIT
/*
 * Generation sessions (gen/generator.c): options and arguments refused
 * before anything is compiled or run.  The sessions themselves run end to
 * end against onnxruntime in tests/models/generate_test.c.
 */
#include <string.h>

#include "npu.h"
#include "npu_test.h"

static const char *const model = "tests/models/transformers/gpt2_past_op17.onnx";

static npu_status try_create(npu_device *dev, const npu_generator_options *o)
{
	npu_generator *gen = (npu_generator *)1;
	npu_status st = npu_generator_create(dev, model, o, &gen);

	ck_assert_ptr_null(gen);
	return st;
}

START_TEST(options_defaults)
{
	npu_generator_options o;

	memset(&o, 0xff, sizeof(o));
	npu_generator_options_init(&o);
	ck_assert_uint_eq(o.struct_size, sizeof(o));
	ck_assert_uint_eq(o.max_context, 512);
	ck_assert_int_eq(o.sampling, NPU_SAMPLING_GREEDY);
	ck_assert_int_eq(o.eos_id, -1);
	ck_assert_uint_eq(o.max_new_tokens, 0);
	ck_assert(o.temperature == 1.0f);
}
END_TEST

START_TEST(bad_options_refused)
{
	npu_generator_options o;
	npu_device *dev;

	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	npu_generator_options_init(&o);
	o.max_context = 0;
	ck_assert_int_eq(try_create(dev, &o), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "max_context 0"));
	o.max_context = 65537;
	ck_assert_int_eq(try_create(dev, &o), NPU_ERR_INVALID_ARG);
	npu_generator_options_init(&o);
	o.precision = NPU_PRECISION_INT8;
	ck_assert_int_eq(try_create(dev, &o), NPU_ERR_UNSUPPORTED);
	npu_generator_options_init(&o);
	o.sampling = NPU_SAMPLING_RANDOM;
	o.temperature = 0;
	ck_assert_int_eq(try_create(dev, &o), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "temperature"));
	o.temperature = 1;
	o.top_p = 1.5f;
	ck_assert_int_eq(try_create(dev, &o), NPU_ERR_INVALID_ARG);
	npu_generator_options_init(&o);
	o.clusters = 15;
	ck_assert_int_eq(try_create(dev, &o), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "healthy clusters"));
	npu_generator_options_init(&o);
	o.struct_size = 3;
	ck_assert_int_eq(try_create(dev, &o), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "npu_generator_options_init"));
	npu_device_close(dev);
}
END_TEST

START_TEST(bad_arguments_refused)
{
	npu_generator_stats stats = { .struct_size = sizeof(stats) };
	npu_generator *gen = (npu_generator *)1;
	npu_device *dev;
	const float *lg;
	size_t n;
	int64_t id;

	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_int_eq(npu_generator_create(dev, "/nonexistent/model.onnx", NULL, &gen),
			 NPU_ERR_IO);
	ck_assert_ptr_null(gen);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "/nonexistent/model.onnx"));
	ck_assert_int_eq(npu_generator_create(NULL, model, NULL, &gen), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_generator_create(dev, model, NULL, NULL), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_generator_feed(NULL, &id, 1), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_generator_step(NULL, &id), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_generator_logits(NULL, &lg, &n), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_generator_get_stats(NULL, &stats), NPU_ERR_INVALID_ARG);
	npu_generator_free(NULL);
	ck_assert_str_eq(npu_status_str(NPU_ERR_CONTEXT_FULL), "generation context full");
	npu_device_close(dev);
}
END_TEST

static Suite *generator_suite(void)
{
	Suite *s = suite_create("generator");
	TCase *tc = tcase_create("generator");

	tcase_add_test(tc, options_defaults);
	tcase_add_test(tc, bad_options_refused);
	tcase_add_test(tc, bad_arguments_refused);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(generator_suite)
