/* SPDX-License-Identifier: MIT */
/*
 * Reproducible test data: xorshift64*, each user with its own state (any
 * nonzero seed), so a test's numbers do not depend on which others ran.
 */
#ifndef NPU_TEST_RNG_H
#define NPU_TEST_RNG_H

#include <stdint.h>

static inline uint32_t npu_test_rnd(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return (uint32_t)((*state * 0x2545f4914f6cdd1dull) >> 32);
}

/* Uniform in [lo, hi]. */
static inline int npu_test_range(uint64_t *state, int lo, int hi)
{
	return lo + (int)(npu_test_rnd(state) % (uint32_t)(hi - lo + 1));
}

#endif /* NPU_TEST_RNG_H */
