/* SPDX-License-Identifier: MIT */
/*
 * fdinfo (Documentation/gpu/drm-usage-stats.rst): /proc/self/fdinfo/<fd>
 * of an open device file shows drm-driver: npu, a unique drm-client-id and
 * drm-engine-cluster<N>: <ns> ns per physical cluster N, busy time of this
 * file's jobs only.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "npu_gt.h"

START_TEST(fdinfo_keys)
{
	gt_begin("fdinfo_keys");
	struct gt_fdinfo a, b;
	int fd2 = gt_open();

	ck_assert_int_ge(fd2, 0);
	ck_assert_int_eq(gt_fdinfo(G.fd, &a), 0);
	ck_assert_int_eq(gt_fdinfo(fd2, &b), 0);
	ck_assert_msg(!strcmp(a.driver, "npu"), "drm-driver is \"%s\", expected \"npu\"", a.driver);
	ck_assert_msg(a.has_client_id && b.has_client_id, "no drm-client-id");
	ck_assert_msg(a.client_id != b.client_id, "two files share drm-client-id %" PRIu64,
		      a.client_id);
	for (unsigned c = 0; c < G.info.clusters; c++)
		if (G.info.healthy_mask & (1u << c)) {
			ck_assert_msg(a.has_cluster[c], "no drm-engine-cluster%u key", c);
			ck_assert_msg(a.cluster_ns[c] == 0,
				      "fresh file: drm-engine-cluster%u is %" PRIu64 " ns", c,
				      a.cluster_ns[c]);
		}
	close(fd2);
}
END_TEST

START_TEST(fdinfo_busy)
{
	gt_begin("fdinfo_busy");
	unsigned n = G.info.healthy_clusters >= 2 ? 2 : 1;
	struct drm_npu_ctx_create cc;
	struct gt_fdinfo before, after;

	ck_assert_int_eq(gt_ctx_create_retry(G.fd, n, DRM_NPU_PRIORITY_NORMAL, &cc, 2000), 0);
	ck_assert_int_eq(gt_fdinfo(G.fd, &before), 0);
	for (unsigned k = 0; k < 4; k++)
		ck_assert_msg(gt_good_job(G.fd, cc.ctx_id, 4 << 20) == 0, "%s", gt_msg);
	ck_assert_int_eq(gt_fdinfo(G.fd, &after), 0);
	for (unsigned c = 0; c < GT_MAX_CLUSTERS; c++) {
		uint32_t bit = 1u << c;

		if (cc.cluster_mask & bit) {
			ck_assert_msg(after.has_cluster[c], "no drm-engine-cluster%u key", c);
			ck_assert_msg(after.cluster_ns[c] > before.cluster_ns[c],
				      "cluster %u of the partition: busy %" PRIu64 " -> %" PRIu64 " ns",
				      c, before.cluster_ns[c], after.cluster_ns[c]);
		} else if (G.info.defect_mask & bit) {
			ck_assert_msg(!after.has_cluster[c] || after.cluster_ns[c] == 0,
				      "fused cluster %u shows %" PRIu64 " ns busy", c,
				      after.cluster_ns[c]);
		} else if (c < G.info.clusters) {
			/* Healthy, not ours: this file never ran there. */
			ck_assert_msg(after.cluster_ns[c] == 0,
				      "cluster %u outside this file's partition shows %" PRIu64 " ns",
				      c, after.cluster_ns[c]);
		}
	}
	ck_assert_int_eq(gt_ctx_destroy(G.fd, cc.ctx_id), 0);
}
END_TEST

Suite *gt_suite_fdinfo(void)
{
	Suite *s = suite_create("fdinfo");
	TCase *tc = tcase_create("usage");

	tcase_add_test(tc, fdinfo_keys);
	tcase_add_test(tc, fdinfo_busy);
	gt_add_tcase(s, tc, 30);
	return s;
}
