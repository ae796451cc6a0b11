// SPDX-License-Identifier: MIT
/*
 * Unit tests for npu_kern_move.c's strided transpose (blocked, SIMD for
 * 2- and 4-byte elements where available) against an element-by-element
 * reference, on random shapes, paddings and element sizes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_kern.h"
#include "npu_test.h"

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

START_TEST(transpose_strided_vs_reference)
{
	static const size_t eszs[] = { 1, 2, 4, 8, 3, 2, 4 };
	uint64_t rng = 0x1234567887654321ull;
	unsigned nbad = 0;
	char first[200] = "";

	for (unsigned t = 0; t < 3000; t++) {
		size_t esz = eszs[rng_next(&rng) % 7];
		size_t rows = rng_next(&rng) % 40 + 1, cols = rng_next(&rng) % 40 + 1;
		size_t xs = cols * esz + (rng_next(&rng) % 3) * esz + rng_next(&rng) % 2;
		size_t ys = rows * esz + (rng_next(&rng) % 3) * esz + rng_next(&rng) % 2;
		size_t xbytes = rows * xs, ybytes = cols * ys;
		uint8_t *x = malloc(xbytes), *y = malloc(ybytes), *want = malloc(ybytes);

		ck_assert(x && y && want);
		for (size_t i = 0; i < xbytes; i++)
			x[i] = (uint8_t)rng_next(&rng);
		/* padding bytes must stay as they were */
		memset(y, 0x5a, ybytes);
		memset(want, 0x5a, ybytes);
		for (size_t r = 0; r < rows; r++)
			for (size_t c = 0; c < cols; c++)
				memcpy(want + c * ys + r * esz, x + r * xs + c * esz, esz);
		npu_kern_transpose_strided(y, ys, x, xs, esz, rows, cols);
		if (memcmp(y, want, ybytes) && !nbad++)
			snprintf(first, sizeof(first),
				 "case %u: %zu x %zu of %zu bytes, strides %zu/%zu",
				 t, rows, cols, esz, xs, ys);
		free(x);
		free(y);
		free(want);
	}
	ck_assert_msg(nbad == 0, "%u mismatches, first: %s", nbad, first);
}
END_TEST

static Suite *kern_move_suite(void)
{
	Suite *s = suite_create("kern_move");
	TCase *tc = tcase_create("transpose_strided");

	tcase_add_test(tc, transpose_strided_vs_reference);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(kern_move_suite)
