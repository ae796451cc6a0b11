// SPDX-License-Identifier: MIT
/*
 * Runs every registered suite.  Check prints its summary line
 * ("100%: Checks: N, Failures: 0, Errors: 0"); the exit status is non-zero
 * when any check failed.  Check's own CK_RUN_SUITE=name / CK_RUN_CASE=name
 * select a single suite or test case.
 */
#include <stdio.h>
#include <stdlib.h>

#include "npu_test.h"

#define MAX_SUITES 64

static Suite *(*suite_makers[MAX_SUITES])(void);
static int nsuites;

void npu_test_register(Suite *(*make)(void))
{
	if (nsuites == MAX_SUITES) {
		fprintf(stderr, "too many test suites (max %d)\n", MAX_SUITES);
		abort();
	}
	suite_makers[nsuites++] = make;
}

int main(void)
{
	SRunner *sr = NULL;
	int failed;

	for (int i = 0; i < nsuites; i++) {
		Suite *s = suite_makers[i]();

		if (!sr)
			sr = srunner_create(s);
		else
			srunner_add_suite(sr, s);
	}
	if (!sr) {
		fprintf(stderr, "no test suites registered\n");
		return 1;
	}
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
