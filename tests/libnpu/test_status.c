// SPDX-License-Identifier: MIT
/* Status strings, the per-thread error message, dtype helpers. */
#include <pthread.h>
#include <stdio.h>
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

/* The run-time version is the header's (tests link the library they were
 * built with) and its string and number agree. */
START_TEST(version_matches_header)
{
	unsigned major, minor, patch;
	char tail;

	ck_assert_ptr_nonnull(npu_version());
	ck_assert_int_eq(sscanf(npu_version(), "%u.%u.%u%c", &major, &minor, &patch, &tail), 3);
	ck_assert_uint_eq(major, NPU_LIB_VERSION_MAJOR);
	ck_assert_uint_eq(minor, NPU_LIB_VERSION_MINOR);
	ck_assert_uint_eq(patch, NPU_LIB_VERSION_PATCH);
	ck_assert_uint_eq(npu_version_number(), NPU_VERSION_NUMBER(major, minor, patch));
	ck_assert_uint_eq(npu_version_number(), NPU_LIB_VERSION);
	ck_assert(NPU_VERSION_NUMBER(0, 2, 0) > NPU_VERSION_NUMBER(0, 1, 255));
}
END_TEST

static Suite *status_suite(void)
{
	Suite *s = suite_create("npu_status");
	TCase *tc = tcase_create("status");

	tcase_add_test(tc, status_strings_distinct);
	tcase_add_test(tc, last_error_per_thread);
	tcase_add_test(tc, dtype_sizes);
	tcase_add_test(tc, version_matches_header);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(status_suite)
