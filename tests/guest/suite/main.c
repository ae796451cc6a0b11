/* SPDX-License-Identifier: MIT */
/*
 * npu-guest-test: Check suite for the M100 DRM-accel driver, run as a
 * static binary inside the QEMU guest (tests/guest/init.sh runs every
 * /bin/npu-* and requires exit status 0).
 *
 * Usage: npu-guest-test [SUITE [TCASE]]
 * Check's environment variables apply too (CK_RUN_SUITE, CK_RUN_CASE,
 * CK_FORK, CK_VERBOSITY, CK_TIMEOUT_MULTIPLIER), and NPU_GT_DEVICE=/dev/...
 * picks the device node instead of the first accel node named "npu".  Every test runs in its
 * own forked process (CK_FORK=yes, the default) with its own open file of
 * the device, so a crash or a hang fails that test only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npu_gt.h"

int main(int argc, char **argv)
{
	enum print_output out = getenv("CK_VERBOSITY") ? CK_ENV : CK_VERBOSE;
	SRunner *sr;
	int failed;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("NPU_GT_DEVICE")) {
		/* Debugging aid: test this node, whatever its driver name. */
		snprintf(G.path, sizeof(G.path), "%s", getenv("NPU_GT_DEVICE"));
		sscanf(G.path, "/dev/accel/accel%d", &G.minor);
	} else if (gt_find_device(G.path, sizeof(G.path), &G.minor)) {
		if (!gt_driver_loaded()) {
			/* The harness also boots without npu.ko (PCI smoke
			 * check only): nothing to test then. */
			printf("npu-guest-test: SKIP: npu.ko is not loaded and no "
			       "/dev/accel/accel* is an npu device\n");
			printf("0 passed, 0 failed, 1 skipped\n");
			return 0;
		}
		printf("npu-guest-test: FAIL: npu.ko is loaded but no "
		       "/dev/accel/accel* reports driver name \"npu\"\n");
		return 1;
	}
	printf("npu-guest-test: device %s (accel minor %d)\n", G.path, G.minor);

	sr = srunner_create(gt_suite_basic());
	srunner_add_suite(sr, gt_suite_ctx());
	srunner_add_suite(sr, gt_suite_submit());
	srunner_add_suite(sr, gt_suite_negative());
	srunner_add_suite(sr, gt_suite_isolation());
	srunner_add_suite(sr, gt_suite_lifetime());
	srunner_add_suite(sr, gt_suite_fuzz());
	srunner_add_suite(sr, gt_suite_recovery());
	srunner_add_suite(sr, gt_suite_fdinfo());
	srunner_add_suite(sr, gt_suite_pm());
	srunner_add_suite(sr, gt_suite_scrub());
	srunner_add_suite(sr, gt_suite_dmabuf());

	if (argc > 1)
		srunner_run(sr, argv[1], argc > 2 ? argv[2] : NULL, out);
	else
		srunner_run_all(sr, out);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
