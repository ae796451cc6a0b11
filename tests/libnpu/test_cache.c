// SPDX-License-Identifier: MIT
/* The fetched models' directory, found as tests/models/fetch.sh finds it. */
#include <stdio.h>
#include <stdlib.h>

#include "npu_test.h"
#include "test_cache.h"

const char *npu_test_models_dir(char *buf, size_t cap)
{
	const char *cache = getenv("NPU_CACHE"), *home = getenv("HOME");
	int n = -1;

	if (cache && cache[0])
		n = snprintf(buf, cap, "%s/models", cache);
	else if (home && home[0])
		n = snprintf(buf, cap, "%s/.cache/npu/models", home);
	else
		ck_abort_msg("neither NPU_CACHE nor HOME is set: set NPU_CACHE to the directory "
			     "`make models` fetches into");
	ck_assert_msg(n > 0 && (size_t)n < cap, "the models directory path is too long");
	return buf;
}
