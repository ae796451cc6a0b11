/* SPDX-License-Identifier: MIT */
/*
 * Unit-test registration: each test file under tests/unit builds one suite
 * and registers it with NPU_TEST_SUITE(), so files never edit a shared list.
 */
#ifndef NPU_TEST_H
#define NPU_TEST_H

#include <check.h>

void npu_test_register(Suite *(*make)(void));

#define NPU_TEST_SUITE(make)						\
	static void __attribute__((constructor)) npu_test_reg_##make(void) \
	{								\
		npu_test_register(make);				\
	}

#endif /* NPU_TEST_H */
