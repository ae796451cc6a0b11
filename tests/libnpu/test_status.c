// SPDX-License-Identifier: MIT
/* Status strings, the per-thread error message, dtype helpers. */
#include <pthread.h>
#include <string.h>

#include "npu_internal.h"
#include "npu_test.h"

START_TEST(status_strings_distinct)
{
	for (int a = 0; a < NPU_STATUS_COUNT; a++) {
		ck_assert_ptr_nonnull(npu_status_str(a));
		ck_assert_str_ne(npu_status_str(a), "unknown status");
		for (int b = a + 1; b < NPU_STATUS_COUNT; b++)
			ck_assert_str_ne(npu_status_str(a), npu_status_str(b));
	}
	ck_assert_str_eq(npu_status_str(NPU_STATUS_COUNT), "unknown status");
	ck_assert_str_eq(npu_status_str((npu_status)-1), "unknown status");
}
END_TEST

static void *other_thread(void *arg)
{
	(void)arg;
	npu_fail(NPU_ERR_IO, "thread-local %d", 2);
	return NULL;
}

START_TEST(last_error_per_thread)
{
	pthread_t t;

	ck_assert_int_eq(npu_fail(NPU_ERR_FORMAT, "bad %s", "model"), NPU_ERR_FORMAT);
	ck_assert_int_eq(pthread_create(&t, NULL, other_thread, NULL), 0);
	pthread_join(t, NULL);
	ck_assert_str_eq(npu_last_error(), "bad model");
	npu_clear_error();
	ck_assert_str_eq(npu_last_error(), "");
}
END_TEST

START_TEST(dtype_sizes)
{
	ck_assert_uint_eq(npu_dtype_size(NPU_DTYPE_FLOAT32), 4);
	ck_assert_uint_eq(npu_dtype_size(NPU_DTYPE_BFLOAT16), 2);
	ck_assert_uint_eq(npu_dtype_size(NPU_DTYPE_INT8), 1);
	ck_assert_uint_eq(npu_dtype_size(NPU_DTYPE_INT64), 8);
	ck_assert_uint_eq(npu_dtype_size((npu_dtype)99), 0);
	ck_assert_str_eq(npu_dtype_str(NPU_DTYPE_UINT8), "uint8");
	ck_assert_str_eq(npu_dtype_str((npu_dtype)99), "unknown");
}
END_TEST

static Suite *status_suite(void)
{
	Suite *s = suite_create("npu_status");
	TCase *tc = tcase_create("status");

	tcase_add_test(tc, status_strings_distinct);
	tcase_add_test(tc, last_error_per_thread);
	tcase_add_test(tc, dtype_sizes);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(status_suite)
