/* SPDX-License-Identifier: MIT */
/*
 * Where the unit tests find what `make models` fetched: the directory
 * tests/models/fetch.sh and the Makefile use, $NPU_CACHE/models, else
 * $HOME/.cache/npu/models.  `make check-unit` fetches BlazeFace first and
 * passes NPU_CACHE, so a test that needs it fails, never skips, when the
 * file is not there.
 */
#ifndef NPU_TEST_CACHE_H
#define NPU_TEST_CACHE_H

#include <stddef.h>

/* The models directory into @buf; aborts the test if there is none. */
const char *npu_test_models_dir(char *buf, size_t cap);

#endif /* NPU_TEST_CACHE_H */
