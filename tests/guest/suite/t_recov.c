/* SPDX-License-Identifier: MIT */
/*
 * Recovery, through the driver's debugfs knobs (skipped, with the reason
 * printed, when a knob is missing):
 *   inject_hang        write "1": the next job hangs
 *   inject_fault       write "1": the next job ends with an MMU fault
 *   inject_reset_fail  write "1": the next device reset fails
 *   reset              write "1": reset the device now
 *   fail_mmu/          the fault_attr behind inject_fault, on kernels with
 *                      CONFIG_FAULT_INJECTION (probability, interval, times)
 * found in /sys/kernel/debug/accel/<minor>/ (or another accel/dri debugfs
 * directory of the npu device).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "npu_gt.h"

#define HANG_TIMEOUT_MS		1000u	/* submit timeout for the hung job */
#define HANG_SIGNAL_NS		(10ll * 1000000000ll)

#define NEED_KNOB(name)								\
	do {									\
		char p_[256];							\
		if (gt_debugfs_path(name, p_, sizeof(p_)))			\
			GT_SKIP("no debugfs knob \"%s\" (looked in "		\
				"/sys/kernel/debug/accel/%d/ and the other "	\
				"accel/dri directories)", name, G.minor);	\
	} while (0)

static uint32_t new_ctx(int fd)
{
	struct drm_npu_ctx_create cc;
	int rc = gt_ctx_create_retry(fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 3000);

	ck_assert_msg(rc == 0, "CTX_CREATE(1): %s", strerror(-rc));
	return cc.ctx_id;
}

/*
 * Arm @knob, submit a good-looking copy on a new context and expect the job
 * to end with @err within 10 s and the context banned with it.
 * Returns the context (still alive, banned).
 */
static uint32_t injected_failure(const char *knob, int err, const char *what,
				 struct gt_copy *c, uint32_t *so)
{
	uint32_t ctx = new_ctx(G.fd);
	struct drm_npu_ctx_query q;
	int64_t t0;
	int rc, st;

	ck_assert_msg(gt_copy_init(G.fd, c, 65536, 50) == 0, "%s", gt_msg);
	ck_assert_int_eq(gt_syncobj_create(G.fd, 0, so), 0);
	rc = gt_debugfs_write(knob, "1");
	ck_assert_msg(rc == 0, "writing 1 to %s: %s", knob, strerror(-rc));
	t0 = gt_now_ns();
	ck_assert_int_eq(gt_submit_copy(c, ctx, *so, 0, NULL, 0, HANG_TIMEOUT_MS), 0);
	if (err == ETIMEDOUT) {
		/* Really hung: not done after 200 ms. */
		rc = gt_syncobj_wait(G.fd, so, 1, 200 * 1000000ll);
		ck_assert_msg(rc == -ETIME, "%s: the hung job completed at once (%d)", what, rc);
	}
	rc = gt_syncobj_wait(G.fd, so, 1, HANG_SIGNAL_NS - (gt_now_ns() - t0));
	ck_assert_msg(rc == 0, "%s: syncobj not signalled within 10 s of submit: %s",
		      what, strerror(-rc));
	st = gt_fence_status(G.fd, *so);
	ck_assert_msg(st == GT_NO_STATUS || st == -err, "%s: fence status %d, expected %d",
		      what, st, -err);
	ck_assert_int_eq(gt_ctx_query(G.fd, ctx, &q), 0);
	ck_assert_msg(q.state == DRM_NPU_CTX_BANNED, "%s: context not banned", what);
	ck_assert_msg(q.last_error == (uint32_t)err, "%s: last_error %u, expected %d",
		      what, q.last_error, err);
	ck_assert_uint_eq(q.jobs_failed, 1);
	ck_assert_int_eq(gt_submit_copy(c, ctx, 0, 0, NULL, 0, 0), -EIO);
	return ctx;
}

START_TEST(rec_hang_x10)
{
	gt_begin("rec_hang_x10");
	bool innocent = G.info.healthy_clusters >= 2 && G.info.queues >= 2;
	uint32_t bystander = 0;

	NEED_KNOB("inject_hang");
	if (innocent)
		bystander = new_ctx(G.fd);
	for (unsigned r = 0; r < 10; r++) {
		struct drm_npu_stats_data st0, st1;
		struct gt_copy c, ok;
		uint32_t so, ctx, so_ok = 0;
		char what[64];

		snprintf(what, sizeof(what), "hang %u", r);
		ck_assert_int_eq(gt_stats(G.fd, &st0), 0);
		if (innocent) {
			/* A job of another context, in flight during the hang. */
			ck_assert_msg(gt_copy_init(G.fd, &ok, 4 << 20, 60 + r) == 0, "%s", gt_msg);
			ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &so_ok), 0);
		}
		ctx = new_ctx(G.fd);
		ck_assert_msg(gt_copy_init(G.fd, &c, 65536, 50) == 0, "%s", gt_msg);
		ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &so), 0);
		ck_assert_int_eq(gt_debugfs_write("inject_hang", "1"), 0);
		{
			int64_t t0 = gt_now_ns();
			struct drm_npu_ctx_query q;
			int rc, fst;

			ck_assert_int_eq(gt_submit_copy(&c, ctx, so, 0, NULL, 0, HANG_TIMEOUT_MS), 0);
			rc = gt_syncobj_wait(G.fd, &so, 1, 200 * 1000000ll);
			ck_assert_msg(rc == -ETIME, "%s: the hung job completed at once (%d)", what, rc);
			/* Only now: "the next job" is device-wide, and a job on
			 * another queue submitted at the same time could be the
			 * one that starts first. */
			if (innocent)
				ck_assert_int_eq(gt_submit_copy(&ok, bystander, so_ok, 0, NULL, 0, 0), 0);
			rc = gt_syncobj_wait(G.fd, &so, 1, HANG_SIGNAL_NS - (gt_now_ns() - t0));
			ck_assert_msg(rc == 0, "%s: syncobj not signalled within 10 s: %s",
				      what, strerror(-rc));
			fst = gt_fence_status(G.fd, so);
			ck_assert_msg(fst == GT_NO_STATUS || fst == -ETIMEDOUT,
				      "%s: fence status %d, expected -ETIMEDOUT", what, fst);
			ck_assert_int_eq(gt_ctx_query(G.fd, ctx, &q), 0);
			ck_assert_msg(q.state == DRM_NPU_CTX_BANNED, "%s: context not banned", what);
			ck_assert_msg(q.last_error == ETIMEDOUT, "%s: last_error %u, expected ETIMEDOUT",
				      what, q.last_error);
			ck_assert_uint_eq(q.jobs_failed, 1);
			ck_assert_int_eq(gt_submit_copy(&c, ctx, 0, 0, NULL, 0, 0), -EIO);
		}
		if (innocent) {
			struct drm_npu_ctx_query q;
			int rc = gt_syncobj_wait(G.fd, &so_ok, 1, GT_WAIT_NS);

			ck_assert_msg(rc == 0, "%s: the other context's job did not finish: %s",
				      what, strerror(-rc));
			ck_assert_msg(gt_copy_ok(&ok), "%s: the other context's job lost its data", what);
			ck_assert_int_eq(gt_ctx_query(G.fd, bystander, &q), 0);
			ck_assert_msg(q.state == DRM_NPU_CTX_OK && q.jobs_failed == 0,
				      "%s: an innocent context was hurt (state %u, %" PRIu64 " failed)",
				      what, q.state, (uint64_t)q.jobs_failed);
			gt_copy_fini(&ok);
			gt_syncobj_destroy(G.fd, so_ok);
		}
		ck_assert_int_eq(gt_stats(G.fd, &st1), 0);
		ck_assert_uint_ge(st1.timeouts, st0.timeouts + 1);
		ck_assert_uint_ge(st1.jobs_failed, st0.jobs_failed + 1);
		ck_assert_int_eq(gt_ctx_destroy(G.fd, ctx), 0);
		gt_copy_fini(&c);
		gt_syncobj_destroy(G.fd, so);
		ck_assert_msg(gt_good_job_new_ctx(G.fd) == 0, "%s, then a new context: %s",
			      what, gt_msg);
	}
	if (innocent)
		ck_assert_msg(gt_good_job(G.fd, bystander, 1 << 20) == 0, "%s", gt_msg);
}
END_TEST

START_TEST(rec_inject_fault)
{
	gt_begin("rec_inject_fault");
	NEED_KNOB("inject_fault");
	for (unsigned r = 0; r < 3; r++) {
		struct drm_npu_stats_data st0, st1;
		struct gt_copy c;
		uint32_t so, ctx;

		ck_assert_int_eq(gt_stats(G.fd, &st0), 0);
		ctx = injected_failure("inject_fault", EFAULT, "injected fault", &c, &so);
		ck_assert_int_eq(gt_stats(G.fd, &st1), 0);
		ck_assert_uint_ge(st1.mmu_faults, st0.mmu_faults + 1);
		ck_assert_int_eq(gt_ctx_destroy(G.fd, ctx), 0);
		gt_copy_fini(&c);
		gt_syncobj_destroy(G.fd, so);
		ck_assert_msg(gt_good_job_new_ctx(G.fd) == 0, "after an injected fault: %s", gt_msg);
	}
}
END_TEST

/* A reset on demand, idle and with jobs in flight: nothing is lost. */
START_TEST(rec_reset)
{
	gt_begin("rec_reset");
	struct drm_npu_stats_data st0, st1;
	struct drm_npu_ctx_query q;
	uint32_t ctx;
	struct gt_batch b;

	NEED_KNOB("reset");
	ctx = new_ctx(G.fd);
	ck_assert_msg(gt_good_job(G.fd, ctx, 65536) == 0, "%s", gt_msg);

	ck_assert_int_eq(gt_stats(G.fd, &st0), 0);
	ck_assert_int_eq(gt_debugfs_write("reset", "1"), 0);
	ck_assert_int_eq(gt_stats(G.fd, &st1), 0);
	ck_assert_uint_eq(st1.resets, st0.resets + 1);
	ck_assert_int_eq(gt_ctx_query(G.fd, ctx, &q), 0);
	ck_assert_uint_eq(q.state, DRM_NPU_CTX_OK);
	ck_assert_msg(gt_good_job(G.fd, ctx, 65536) == 0, "context made before the reset: %s", gt_msg);
	ck_assert_msg(gt_good_job_new_ctx(G.fd) == 0, "new context after the reset: %s", gt_msg);

	/* Jobs in flight across a reset are innocent: resubmitted, not lost. */
	ck_assert_msg(gt_batch_init(G.fd, &b, 8, 2 << 20, 70) == 0, "%s", gt_msg);
	for (unsigned k = 0; k < 8; k++)
		ck_assert_msg(gt_batch_submit(&b, k, ctx) == 0, "%s", gt_msg);
	ck_assert_int_eq(gt_debugfs_write("reset", "1"), 0);
	ck_assert_msg(gt_batch_wait(&b, GT_WAIT_NS) == 0, "jobs across a reset: %s", gt_msg);
	for (unsigned k = 0; k < 8; k++) {
		int st = gt_fence_status(G.fd, b.sync[k]);

		ck_assert_msg(st == GT_NO_STATUS || st == 1,
			      "job %u in flight during a reset: fence status %d", k, st);
		ck_assert_msg(gt_batch_verify(&b, k) == 0, "%s", gt_msg);
	}
	gt_batch_fini(&b);
	ck_assert_int_eq(gt_ctx_query(G.fd, ctx, &q), 0);
	ck_assert_uint_eq(q.state, DRM_NPU_CTX_OK);
	ck_assert_uint_eq(q.jobs_failed, 0);
}
END_TEST

/*
 * The reset that recovers a hang fails: the hung job must still be
 * signalled (nobody waits forever), and the device must come back, by
 * itself or after one or two resets on demand.
 */
START_TEST(rec_reset_fail)
{
	gt_begin("rec_reset_fail");
	struct gt_copy c;
	uint32_t so, ctx;
	int rc = -1;

	NEED_KNOB("inject_reset_fail");
	NEED_KNOB("inject_hang");
	NEED_KNOB("reset");
	ck_assert_int_eq(gt_debugfs_write("inject_reset_fail", "1"), 0);
	ctx = injected_failure("inject_hang", ETIMEDOUT, "hang with a failing reset", &c, &so);
	ck_assert_int_eq(gt_ctx_destroy(G.fd, ctx), 0);
	gt_copy_fini(&c);
	gt_syncobj_destroy(G.fd, so);
	for (unsigned attempt = 0; attempt < 3; attempt++) {
		rc = gt_good_job_new_ctx(G.fd);
		if (rc == 0)
			break;
		fprintf(stderr, "rec_reset_fail: attempt %u: %s; resetting\n", attempt, gt_msg);
		gt_debugfs_write("reset", "1");
	}
	ck_assert_msg(rc == 0, "the device did not come back after a failed reset: %s", gt_msg);
}
END_TEST

/* One copy on a new context; its fence status (1 OK, -EFAULT, ...). */
static int job_status(void)
{
	struct drm_npu_ctx_create cc;
	struct gt_copy c;
	uint32_t so;
	int rc, st;

	rc = gt_ctx_create_retry(G.fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 3000);
	ck_assert_msg(rc == 0, "CTX_CREATE(1): %s", strerror(-rc));
	ck_assert_msg(gt_copy_init(G.fd, &c, 4096, 80) == 0, "%s", gt_msg);
	ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &so), 0);
	ck_assert_int_eq(gt_submit_copy(&c, cc.ctx_id, so, 0, NULL, 0, 0), 0);
	ck_assert_int_eq(gt_syncobj_wait(G.fd, &so, 1, HANG_SIGNAL_NS), 0);
	st = gt_fence_status(G.fd, so);
	ck_assert_msg(st == 1 || st == -EFAULT, "fence status %d", st);
	ck_assert_msg(st != 1 || gt_copy_ok(&c), "a job that was not faulted: wrong data");
	gt_syncobj_destroy(G.fd, so);
	gt_copy_fini(&c);
	ck_assert_int_eq(gt_ctx_destroy(G.fd, cc.ctx_id), 0);
	return st;
}

/*
 * On a fault-injection kernel the knobs are fault_attrs: fail_mmu/ with
 * probability 100, interval 2, times 2 faults every second job, twice.
 * (The attr's interval counter is not reset, so the first faulted job is
 * the first or the second.)
 */
START_TEST(rec_fault_attr)
{
	gt_begin("rec_fault_attr");
	char p[256];
	int st[6], faults = 0, prob = -1, left = -1;
	FILE *f;

	if (gt_debugfs_path("fail_mmu/probability", p, sizeof(p)))
		GT_SKIP("no debugfs fail_mmu/ (kernel without CONFIG_FAULT_INJECTION)");
	ck_assert_int_eq(gt_debugfs_write("fail_mmu/times", "0"), 0);
	ck_assert_int_eq(gt_debugfs_write("fail_mmu/interval", "2"), 0);
	ck_assert_int_eq(gt_debugfs_write("fail_mmu/probability", "100"), 0);
	ck_assert_int_eq(gt_debugfs_write("fail_mmu/times", "2"), 0);
	for (int i = 0; i < 6; i++) {
		st[i] = job_status();
		faults += st[i] == -EFAULT;
	}
	f = fopen(p, "r");	/* probability: still 100 */
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%d", &prob), 1);
	fclose(f);
	ck_assert_int_eq(gt_debugfs_path("inject_fault", p, sizeof(p)), 0);
	f = fopen(p, "r");	/* the compatible counter: times left */
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%d", &left), 1);
	fclose(f);
	gt_debugfs_write("fail_mmu/probability", "0");
	gt_debugfs_write("fail_mmu/interval", "1");
	ck_assert_msg(faults == 2, "%d of 6 jobs faulted, expected 2 (times)", faults);
	ck_assert_msg((st[0] == -EFAULT && st[2] == -EFAULT) ||
		      (st[1] == -EFAULT && st[3] == -EFAULT),
		      "faults not every second job: %d %d %d %d", st[0], st[1], st[2], st[3]);
	ck_assert_msg(st[4] == 1 && st[5] == 1, "jobs after times ran out: %d %d", st[4], st[5]);
	ck_assert_int_eq(prob, 100);
	ck_assert_msg(left == 0, "inject_fault reads %d after times ran out", left);
}
END_TEST

Suite *gt_suite_recovery(void)
{
	Suite *s = suite_create("recovery");
	TCase *tc = tcase_create("debugfs");

	tcase_add_test(tc, rec_hang_x10);
	tcase_add_test(tc, rec_inject_fault);
	tcase_add_test(tc, rec_reset);
	tcase_add_test(tc, rec_reset_fail);
	tcase_add_test(tc, rec_fault_attr);
	gt_add_tcase(s, tc, 150);
	return s;
}
