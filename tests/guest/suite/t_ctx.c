/* SPDX-License-Identifier: MIT */
/*
 * Contexts: partitions, limits, priorities, concurrency, destroy.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>

#include "npu_gt.h"

/* The partition a CTX_CREATE returned is well formed. */
static void check_partition(const struct drm_npu_ctx_create *cc, unsigned n)
{
	const struct drm_npu_device_info *i = &G.info;
	uint32_t from_map = 0;

	ck_assert_uint_eq(gt_popcount(cc->cluster_mask), n);
	ck_assert_uint_eq(cc->cluster_mask & i->defect_mask, 0);
	ck_assert_uint_eq(cc->cluster_mask & ~i->healthy_mask, 0);
	for (unsigned l = 0; l < n; l++) {
		ck_assert_uint_lt(cc->cluster_map[l], i->clusters);
		ck_assert_msg(!(from_map & (1u << cc->cluster_map[l])),
			      "cluster_map names physical cluster %u twice",
			      cc->cluster_map[l]);
		from_map |= 1u << cc->cluster_map[l];
	}
	ck_assert_uint_eq(from_map, cc->cluster_mask);
	ck_assert_uint_lt(cc->queue, i->queues);
	ck_assert_uint_gt(cc->sram_size, 0);
	ck_assert_uint_eq(cc->sram_base % 4096, 0);
	ck_assert_uint_le((uint64_t)cc->sram_base + cc->sram_size, i->sram_size);
}

START_TEST(ctx_partitions)
{
	gt_begin("ctx_partitions");
	for (unsigned n = 1; n <= G.info.healthy_clusters; n++) {
		struct drm_npu_ctx_create cc;
		struct drm_npu_stats_data st;
		int rc = gt_ctx_create_retry(G.fd, n, DRM_NPU_PRIORITY_NORMAL, &cc, 2000);

		ck_assert_msg(rc == 0, "CTX_CREATE(%u clusters): %s", n, strerror(-rc));
		check_partition(&cc, n);
		ck_assert_int_eq(gt_stats(G.fd, &st), 0);
		ck_assert_uint_le(st.free_clusters, G.info.healthy_clusters - n);
		rc = gt_good_job(G.fd, cc.ctx_id, 65536);
		ck_assert_msg(rc == 0, "partition of %u: %s", n, gt_msg);
		ck_assert_int_eq(gt_ctx_destroy(G.fd, cc.ctx_id), 0);
	}
}
END_TEST

START_TEST(ctx_bad_args)
{
	gt_begin("ctx_bad_args");
	struct drm_npu_ctx_create c;
	unsigned h = G.info.healthy_clusters;

	ck_assert_int_eq(gt_ctx_create(G.fd, 0, DRM_NPU_PRIORITY_NORMAL, NULL), -EINVAL);
	ck_assert_int_eq(gt_ctx_create(G.fd, h + 1, DRM_NPU_PRIORITY_NORMAL, NULL), -EINVAL);
	ck_assert_int_eq(gt_ctx_create(G.fd, GT_MAX_CLUSTERS + 1, DRM_NPU_PRIORITY_NORMAL, NULL), -EINVAL);
	ck_assert_int_eq(gt_ctx_create(G.fd, ~0u, DRM_NPU_PRIORITY_NORMAL, NULL), -EINVAL);
	ck_assert_int_eq(gt_ctx_create(G.fd, 1, DRM_NPU_PRIORITY_HIGH + 1, NULL), -EINVAL);
	ck_assert_int_eq(gt_ctx_create(G.fd, 1, ~0u, NULL), -EINVAL);
	memset(&c, 0, sizeof(c));
	c.clusters = 1;
	c.priority = DRM_NPU_PRIORITY_NORMAL;
	c.flags = 1;
	ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_CTX_CREATE, &c), -EINVAL);
	c.flags = 1u << 31;
	ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_CTX_CREATE, &c), -EINVAL);
}
END_TEST

START_TEST(ctx_enospc)
{
	gt_begin("ctx_enospc");
	unsigned h = G.info.healthy_clusters;
	struct drm_npu_ctx_create all, one;
	int fd2 = gt_open();

	ck_assert_int_ge(fd2, 0);
	ck_assert_int_eq(gt_ctx_create_retry(G.fd, h, DRM_NPU_PRIORITY_NORMAL, &all, 2000), 0);
	check_partition(&all, h);
	ck_assert_uint_eq(all.cluster_mask, G.info.healthy_mask);
	ck_assert_int_eq(gt_ctx_create(G.fd, 1, DRM_NPU_PRIORITY_NORMAL, NULL), -ENOSPC);
	ck_assert_int_eq(gt_ctx_create(fd2, 1, DRM_NPU_PRIORITY_NORMAL, NULL), -ENOSPC);
	/* More than the device has healthy stays EINVAL, even when full. */
	ck_assert_int_eq(gt_ctx_create(fd2, h + 1, DRM_NPU_PRIORITY_NORMAL, NULL), -EINVAL);
	ck_assert_int_eq(gt_ctx_destroy(G.fd, all.ctx_id), 0);
	/* "The partition is free when this returns." */
	ck_assert_int_eq(gt_ctx_create(fd2, 1, DRM_NPU_PRIORITY_NORMAL, &one), 0);
	ck_assert_msg(gt_good_job(fd2, one.ctx_id, 4096) == 0, "%s", gt_msg);
	close(fd2);
}
END_TEST

START_TEST(ctx_fill_singles)
{
	gt_begin("ctx_fill_singles");
	unsigned h = G.info.healthy_clusters;
	struct drm_npu_ctx_create cc[GT_MAX_CLUSTERS];
	int fds[GT_MAX_CLUSTERS];
	uint32_t seen = 0;

	/* One context per file, so DRM_NPU_MAX_CTX_PER_FILE never interferes. */
	for (unsigned k = 0; k < h; k++) {
		fds[k] = gt_open();
		ck_assert_int_ge(fds[k], 0);
		ck_assert_int_eq(gt_ctx_create_retry(fds[k], 1, DRM_NPU_PRIORITY_NORMAL, &cc[k], 2000), 0);
		check_partition(&cc[k], 1);
		ck_assert_msg(!(seen & cc[k].cluster_mask),
			      "cluster 0x%x given to two live contexts", cc[k].cluster_mask);
		seen |= cc[k].cluster_mask;
		for (unsigned j = 0; j < k; j++)
			ck_assert_msg(cc[j].sram_base + cc[j].sram_size <= cc[k].sram_base ||
				      cc[k].sram_base + cc[k].sram_size <= cc[j].sram_base,
				      "SRAM windows of live contexts %u and %u overlap", j, k);
	}
	ck_assert_uint_eq(seen, G.info.healthy_mask);
	ck_assert_int_eq(gt_ctx_create(G.fd, 1, DRM_NPU_PRIORITY_NORMAL, NULL), -ENOSPC);
	for (unsigned k = 0; k < h; k++)
		close(fds[k]);
	/* Closing the files freed every partition. */
	ck_assert_int_eq(gt_ctx_create_retry(G.fd, h, DRM_NPU_PRIORITY_NORMAL, NULL, 2000), 0);
}
END_TEST

START_TEST(ctx_per_file_limit)
{
	gt_begin("ctx_per_file_limit");
	unsigned created = 0;
	int rc = 0;

	for (unsigned k = 0; k <= DRM_NPU_MAX_CTX_PER_FILE; k++) {
		rc = gt_ctx_create_retry(G.fd, 1, DRM_NPU_PRIORITY_NORMAL, NULL, 500);
		if (rc)
			break;
		created++;
	}
	ck_assert_msg(rc != 0, "%u contexts on one file, limit is %u",
		      created, DRM_NPU_MAX_CTX_PER_FILE);
	ck_assert_msg(rc == -EMFILE || rc == -ENOSPC,
		      "context %u failed with %s, expected EMFILE or ENOSPC",
		      created + 1, strerror(-rc));
	ck_assert_uint_le(created, DRM_NPU_MAX_CTX_PER_FILE);
	if (created < DRM_NPU_MAX_CTX_PER_FILE) {
		ck_assert_int_eq(rc, -ENOSPC);
		ck_assert_uint_eq(created, G.info.healthy_clusters);
	}
}
END_TEST

START_TEST(ctx_priorities)
{
	gt_begin("ctx_priorities");
	static const uint32_t prios[] = {
		DRM_NPU_PRIORITY_LOW, DRM_NPU_PRIORITY_NORMAL, DRM_NPU_PRIORITY_HIGH,
	};

	for (unsigned k = 0; k < 3; k++) {
		struct drm_npu_ctx_create cc;
		int rc = gt_ctx_create_retry(G.fd, 1, prios[k], &cc, 2000);

		if (prios[k] == DRM_NPU_PRIORITY_HIGH && geteuid() != 0 && rc == -EPERM)
			continue;	/* allowed without CAP_SYS_NICE */
		ck_assert_msg(rc == 0, "priority %u: %s", prios[k], strerror(-rc));
		ck_assert_msg(gt_good_job(G.fd, cc.ctx_id, 65536) == 0, "priority %u: %s",
			      prios[k], gt_msg);
		ck_assert_int_eq(gt_ctx_destroy(G.fd, cc.ctx_id), 0);
	}
}
END_TEST

static int drop_cap(unsigned cap)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[cap / 32].effective &= ~(1u << (cap % 32));
	d[cap / 32].permitted &= ~(1u << (cap % 32));
	d[cap / 32].inheritable &= ~(1u << (cap % 32));
	if (syscall(SYS_capset, &h, d))
		return -errno;
	return 0;
}

static int high_prio_without_cap(void *arg)
{
	struct drm_npu_ctx_create cc;
	int fd, rc;

	(void)arg;
	rc = drop_cap(CAP_SYS_NICE);
	if (rc)
		return gt_fail(rc, "capset: %s", strerror(-rc));
	fd = gt_open();
	if (fd < 0)
		return gt_fail(fd, "open: %s", strerror(-fd));
	rc = gt_ctx_create_retry(fd, 1, DRM_NPU_PRIORITY_HIGH, &cc, 2000);
	if (rc != -EPERM)
		return gt_fail(-EINVAL, "HIGH without CAP_SYS_NICE: %s, expected EPERM",
			       rc ? strerror(-rc) : "success");
	rc = gt_ctx_create_retry(fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 2000);
	if (rc)
		return gt_fail(rc, "NORMAL without CAP_SYS_NICE: %s", strerror(-rc));
	close(fd);
	return 0;
}

START_TEST(ctx_priority_needs_cap)
{
	gt_begin("ctx_priority_needs_cap");
	char msg[512];

	if (geteuid() != 0)
		GT_SKIP("not root: cannot compare with and without CAP_SYS_NICE");
	ck_assert_msg(gt_in_child(high_prio_without_cap, NULL, msg, sizeof(msg)) == 0,
		      "%s", msg);
}
END_TEST

START_TEST(ctx_destroy_query)
{
	gt_begin("ctx_destroy_query");
	struct drm_npu_ctx_create cc;
	struct drm_npu_ctx_query q;
	struct gt_copy c;

	ck_assert_int_eq(gt_ctx_create_retry(G.fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 2000), 0);
	ck_assert_int_eq(gt_ctx_query(G.fd, cc.ctx_id, &q), 0);
	ck_assert_uint_eq(q.state, DRM_NPU_CTX_OK);
	ck_assert_uint_eq(q.jobs_submitted, 0);
	ck_assert_uint_eq(q.jobs_completed, 0);
	ck_assert_uint_eq(q.jobs_failed, 0);
	ck_assert_uint_eq(q.last_error, 0);
	ck_assert_uint_eq(q.pad, 0);
	for (int k = 0; k < 3; k++)
		ck_assert_msg(gt_good_job(G.fd, cc.ctx_id, 4096) == 0, "%s", gt_msg);
	ck_assert_int_eq(gt_ctx_query(G.fd, cc.ctx_id, &q), 0);
	ck_assert_uint_eq(q.state, DRM_NPU_CTX_OK);
	ck_assert_uint_eq(q.jobs_submitted, 3);
	ck_assert_uint_eq(q.jobs_completed, 3);
	ck_assert_uint_eq(q.jobs_failed, 0);
	ck_assert_uint_eq(q.last_error, 0);

	ck_assert_int_eq(gt_copy_init(G.fd, &c, 4096, 3), 0);
	ck_assert_int_eq(gt_ctx_destroy(G.fd, cc.ctx_id), 0);
	ck_assert_int_eq(gt_ctx_destroy(G.fd, cc.ctx_id), -ENOENT);
	ck_assert_int_eq(gt_ctx_query(G.fd, cc.ctx_id, &q), -ENOENT);
	ck_assert_int_eq(gt_submit_copy(&c, cc.ctx_id, 0, 0, NULL, 0, 0), -ENOENT);
	ck_assert_int_eq(gt_ctx_destroy(G.fd, 0xdead), -ENOENT);
	ck_assert_int_eq(gt_ctx_query(G.fd, 0xdead, &q), -ENOENT);
	gt_copy_fini(&c);
}
END_TEST

/* Jobs queued behind others when their context dies end ECANCELED. */
START_TEST(ctx_destroy_cancels)
{
	gt_begin("ctx_destroy_cancels");
	enum { N = 24 };
	struct drm_npu_ctx_create cc;
	struct gt_batch b;
	unsigned done = 0, cancelled = 0;

	ck_assert_int_eq(gt_ctx_create_retry(G.fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 2000), 0);
	ck_assert_msg(gt_batch_init(G.fd, &b, N, 2u << 20, 11) == 0, "%s", gt_msg);
	for (unsigned k = 0; k < N; k++)
		ck_assert_msg(gt_batch_submit(&b, k, cc.ctx_id) == 0, "%s", gt_msg);
	ck_assert_int_eq(gt_ctx_destroy(G.fd, cc.ctx_id), 0);
	/* Every fence is signalled once destroy has returned: no wait. */
	ck_assert_msg(gt_batch_wait(&b, 0) == 0, "right after CTX_DESTROY: %s", gt_msg);
	for (unsigned k = 0; k < N; k++) {
		int st = gt_fence_status(G.fd, b.sync[k]);

		if (st == GT_NO_STATUS)
			continue;
		ck_assert_msg(st == 1 || st == -ECANCELED,
			      "job %u of a destroyed context: fence status %d (%s)",
			      k, st, st < 0 ? strerror(-st) : "pending");
		if (st == 1) {
			ck_assert_msg(gt_batch_verify(&b, k) == 0, "%s", gt_msg);
			done++;
		} else {
			cancelled++;
		}
	}
	fprintf(stderr, "ctx_destroy_cancels: %u jobs completed, %u cancelled\n",
		done, cancelled);
	gt_batch_fini(&b);
	ck_assert_msg(gt_good_job_new_ctx(G.fd) == 0, "%s", gt_msg);
}
END_TEST

struct destroyer {
	int fd;
	uint32_t ctx_id;
	int rc;
};

static void *destroy_main(void *arg)
{
	struct destroyer *d = arg;

	d->rc = gt_ctx_destroy(d->fd, d->ctx_id);
	return NULL;
}

/*
 * Destroy returns only once the hardware is done with the context, even
 * when its newest jobs were cancelled before they reached the hardware
 * (and so signalled first) while an older one still runs there: here a
 * hung job, which ends through the scheduler timeout.  Deterministic:
 * jobs 1..N-1 wait for a gate's fence (sw_sync or vgem) that the test
 * signals only once destroy has taken the context out of the file
 * (CTX_QUERY says ENOENT).
 */
START_TEST(ctx_destroy_waits_for_hardware)
{
	gt_begin("ctx_destroy_waits_for_hardware");
	enum { N = 4 };
	struct drm_npu_ctx_create cc;
	struct drm_npu_ctx_query q;
	struct drm_npu_sync in = { 0 };
	struct destroyer d = { .fd = G.fd };
	struct gt_batch b;
	struct gt_gate gate;
	pthread_t th;
	int64_t t0;
	int st, rc;
	char knob[256];

	if (gt_debugfs_path("inject_hang", knob, sizeof(knob)))
		GT_SKIP("no debugfs knob \"inject_hang\"");
	if (!gt_gate_init(&gate))
		GT_SKIP("no sw_sync and no vgem: nothing to hold jobs back with");
	ck_assert_int_eq(gt_ctx_create_retry(G.fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 2000), 0);
	ck_assert_msg(gt_batch_init(G.fd, &b, N, 65536, 13) == 0, "%s", gt_msg);
	ck_assert_int_eq(gt_syncobj_from_sync_file(G.fd, gt_gate_fence(&gate), &in.handle), 0);

	/* Job 0 reaches the hardware and hangs there. */
	ck_assert_int_eq(gt_debugfs_write("inject_hang", "1"), 0);
	ck_assert_msg(gt_batch_submit(&b, 0, cc.ctx_id) == 0, "%s", gt_msg);
	rc = gt_syncobj_wait(G.fd, &b.sync[0], 1, 200 * GT_NS_PER_MS);
	ck_assert_msg(rc == -ETIME, "the hung job completed at once (%d)", rc);
	for (unsigned k = 1; k < N; k++)
		ck_assert_msg(gt_batch_submit_after(&b, k, cc.ctx_id, &in, 1) == 0,
			      "%s", gt_msg);

	d.ctx_id = cc.ctx_id;
	t0 = gt_now_ns();
	ck_assert_int_eq(pthread_create(&th, NULL, destroy_main, &d), 0);
	while (gt_ctx_query(G.fd, cc.ctx_id, &q) == 0) {
		ck_assert_msg(gt_now_ns() - t0 < (int64_t)GT_WAIT_NS,
			      "CTX_DESTROY did not take the context out within 10 s");
		usleep(1000);
	}
	/*
	 * Destroy marks the context dead just after.  Were the fence
	 * signalled first, jobs 1..N-1 would queue behind the hung one and
	 * still end -ECANCELED, at the reset, but the case would not be
	 * exercised.
	 */
	usleep(50000);
	gt_gate_release(&gate);
	pthread_join(th, NULL);
	ck_assert_int_eq(d.rc, 0);

	ck_assert_msg(gt_batch_wait(&b, 0) == 0,
		      "right after CTX_DESTROY (%.2f s): %s (the hung job still on the hardware?)",
		      (double)(gt_now_ns() - t0) / 1e9, gt_msg);
	st = gt_fence_status(G.fd, b.sync[0]);
	ck_assert_msg(st == GT_NO_STATUS || st == -ETIMEDOUT,
		      "the hung job: fence status %d, expected -ETIMEDOUT", st);
	for (unsigned k = 1; k < N; k++) {
		st = gt_fence_status(G.fd, b.sync[k]);
		ck_assert_msg(st == GT_NO_STATUS || st == -ECANCELED,
			      "job %u, held back until destroy: fence status %d, expected -ECANCELED",
			      k, st);
	}
	gt_syncobj_destroy(G.fd, in.handle);
	gt_batch_fini(&b);
	gt_gate_fini(&gate);
	ck_assert_msg(gt_good_job_new_ctx(G.fd) == 0, "%s", gt_msg);
}
END_TEST

/* ---- concurrent contexts -------------------------------------------------------- */

struct worker {
	int fd;
	uint32_t ctx_id;
	unsigned seed;
	int rc;
	char msg[600];
};

static void *worker_main(void *arg)
{
	enum { JOBS = 8, ROUNDS = 2 };
	struct worker *w = arg;
	struct gt_batch b;

	for (unsigned r = 0; r < ROUNDS; r++) {
		w->rc = gt_batch_init(w->fd, &b, JOBS, 1u << 20, w->seed + r);
		for (unsigned k = 0; !w->rc && k < JOBS; k++)
			w->rc = gt_batch_submit(&b, k, w->ctx_id);
		if (!w->rc)
			w->rc = gt_batch_wait(&b, 20ll * 1000000000ll);
		for (unsigned k = 0; !w->rc && k < JOBS; k++)
			w->rc = gt_batch_verify(&b, k);
		if (w->rc)
			snprintf(w->msg, sizeof(w->msg), "ctx %u round %u: %s",
				 w->ctx_id, r, gt_msg);
		gt_batch_fini(&b);
		if (w->rc)
			break;
	}
	return NULL;
}

START_TEST(ctx_concurrent)
{
	gt_begin("ctx_concurrent");
	unsigned n = G.info.queues < 4 ? G.info.queues : 4;
	struct drm_npu_ctx_create cc[4];
	struct worker w[4];
	pthread_t th[4];
	uint32_t queues = 0, mask = 0;

	if (n > G.info.healthy_clusters)
		n = G.info.healthy_clusters;
	if (n < 2)
		GT_SKIP("needs 2 queues and 2 healthy clusters (have %u, %u)",
			G.info.queues, G.info.healthy_clusters);
	for (unsigned k = 0; k < n; k++) {
		ck_assert_int_eq(gt_ctx_create_retry(G.fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc[k], 2000), 0);
		check_partition(&cc[k], 1);
		ck_assert_msg(!(queues & (1u << cc[k].queue)),
			      "contexts %u got queue %u already in use on an idle device",
			      k, cc[k].queue);
		queues |= 1u << cc[k].queue;
		ck_assert_uint_eq(mask & cc[k].cluster_mask, 0);
		mask |= cc[k].cluster_mask;
		for (unsigned j = 0; j < k; j++)
			ck_assert_msg(cc[j].sram_base + cc[j].sram_size <= cc[k].sram_base ||
				      cc[k].sram_base + cc[k].sram_size <= cc[j].sram_base,
				      "SRAM windows of contexts %u and %u overlap", j, k);
	}
	for (unsigned k = 0; k < n; k++) {
		w[k] = (struct worker){ .fd = G.fd, .ctx_id = cc[k].ctx_id, .seed = 40 + 5 * k };
		ck_assert_int_eq(pthread_create(&th[k], NULL, worker_main, &w[k]), 0);
	}
	for (unsigned k = 0; k < n; k++)
		pthread_join(th[k], NULL);
	for (unsigned k = 0; k < n; k++) {
		struct drm_npu_ctx_query q;

		ck_assert_msg(w[k].rc == 0, "%s", w[k].msg);
		ck_assert_int_eq(gt_ctx_query(G.fd, cc[k].ctx_id, &q), 0);
		ck_assert_uint_eq(q.state, DRM_NPU_CTX_OK);
		ck_assert_uint_eq(q.jobs_submitted, 16);
		ck_assert_uint_eq(q.jobs_completed, 16);
		ck_assert_uint_eq(q.jobs_failed, 0);
	}
	for (unsigned k = 0; k < n; k++)
		ck_assert_int_eq(gt_ctx_destroy(G.fd, cc[k].ctx_id), 0);
}
END_TEST

/* The same, with every context on its own file (as separate apps). */
START_TEST(ctx_concurrent_files)
{
	gt_begin("ctx_concurrent_files");
	unsigned n = G.info.queues < 4 ? G.info.queues : 4;
	struct drm_npu_ctx_create cc[4];
	struct worker w[4];
	pthread_t th[4];
	int fds[4];

	if (n > G.info.healthy_clusters)
		n = G.info.healthy_clusters;
	if (n < 2)
		GT_SKIP("needs 2 queues and 2 healthy clusters");
	for (unsigned k = 0; k < n; k++) {
		fds[k] = gt_open();
		ck_assert_int_ge(fds[k], 0);
		ck_assert_int_eq(gt_ctx_create_retry(fds[k], 1, DRM_NPU_PRIORITY_NORMAL, &cc[k], 2000), 0);
		w[k] = (struct worker){ .fd = fds[k], .ctx_id = cc[k].ctx_id, .seed = 60 + k };
	}
	for (unsigned k = 0; k < n; k++)
		ck_assert_int_eq(pthread_create(&th[k], NULL, worker_main, &w[k]), 0);
	for (unsigned k = 0; k < n; k++)
		pthread_join(th[k], NULL);
	for (unsigned k = 0; k < n; k++) {
		ck_assert_msg(w[k].rc == 0, "%s", w[k].msg);
		close(fds[k]);
	}
}
END_TEST

Suite *gt_suite_ctx(void)
{
	Suite *s = suite_create("ctx");
	TCase *tc;

	tc = tcase_create("create");
	tcase_add_test(tc, ctx_partitions);
	tcase_add_test(tc, ctx_bad_args);
	tcase_add_test(tc, ctx_enospc);
	tcase_add_test(tc, ctx_fill_singles);
	tcase_add_test(tc, ctx_per_file_limit);
	tcase_add_test(tc, ctx_priorities);
	tcase_add_test(tc, ctx_priority_needs_cap);
	gt_add_tcase(s, tc, 30);

	tc = tcase_create("lifecycle");
	tcase_add_test(tc, ctx_destroy_query);
	tcase_add_test(tc, ctx_destroy_cancels);
	tcase_add_test(tc, ctx_destroy_waits_for_hardware);
	gt_add_tcase(s, tc, 30);

	tc = tcase_create("concurrent");
	tcase_add_test(tc, ctx_concurrent);
	tcase_add_test(tc, ctx_concurrent_files);
	gt_add_tcase(s, tc, 60);
	return s;
}
