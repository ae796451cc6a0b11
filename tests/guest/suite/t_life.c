/* SPDX-License-Identifier: MIT */
/*
 * Lifetime: processes killed mid-submit, files closed with jobs in flight,
 * handles closed under running jobs.  Afterwards nothing leaks: device-wide
 * STATS (bo_count, contexts, free_clusters) and, when the driver has it,
 * the debugfs "bos" list return to where they were.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "npu_gt.h"

/* ---- kill -9 during submission ------------------------------------------------------ */

/* Child: submit batches forever; say 'R' once the first one is verified. */
static void submit_loop_child(int wfd)
{
	enum { JOBS = 4 };
	struct drm_npu_ctx_create cc;
	struct gt_batch b;
	bool told = false;
	int fd = gt_open(), rc;

	if (fd < 0)
		_exit(10);
	rc = gt_ctx_create_retry(fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 3000);
	if (rc)
		_exit(11);
	if (gt_batch_init(fd, &b, JOBS, 256 << 10, 77))
		_exit(12);
	for (;;) {
		for (unsigned k = 0; k < JOBS; k++)
			if (gt_batch_submit(&b, k, cc.ctx_id))
				_exit(13);
		if (gt_batch_wait(&b, GT_WAIT_NS))
			_exit(14);
		if (!told) {
			for (unsigned k = 0; k < JOBS; k++)
				if (gt_batch_verify(&b, k))
					_exit(15);
			if (write(wfd, "R", 1) != 1)
				_exit(16);
			told = true;
		}
	}
}

START_TEST(life_fork_kill)
{
	gt_begin("life_fork_kill");
	enum { ROUNDS = 20 };
	struct gt_baseline base;
	struct drm_npu_ctx_create mine;
	bool have_ctx = G.info.healthy_clusters >= 2;
	uint32_t rng = 12345;

	if (have_ctx)
		ck_assert_int_eq(gt_ctx_create_retry(G.fd, 1, DRM_NPU_PRIORITY_NORMAL, &mine, 2000), 0);
	gt_take_baseline(&base);
	if (base.bos_lines < 0)
		fprintf(stderr, "life_fork_kill: no debugfs \"bos\" file: checking STATS only\n");

	for (unsigned r = 0; r < ROUNDS; r++) {
		struct pollfd pfd;
		int p[2], status;
		char ch = 0;
		pid_t pid;

		ck_assert_int_eq(pipe(p), 0);
		fflush(NULL);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			close(p[0]);
			submit_loop_child(p[1]);
		}
		close(p[1]);
		pfd = (struct pollfd){ .fd = p[0], .events = POLLIN };
		ck_assert_msg(poll(&pfd, 1, 10000) == 1, "round %u: child not ready in 10 s", r);
		if (read(p[0], &ch, 1) != 1 || ch != 'R') {
			waitpid(pid, &status, 0);
			ck_abort_msg("round %u: child failed before its first batch (exit %d)",
				     r, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		}
		close(p[0]);
		/* Kill at a different point of the submit/wait loop each time. */
		rng = rng * 1103515245u + 12345u;
		gt_msleep((rng >> 16) % 30);
		ck_assert_int_eq(kill(pid, SIGKILL), 0);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
			      "round %u: child ended otherwise (status 0x%x)", r, status);
	}
	gt_expect_baseline(&base, "after 20 killed submitters");
	if (have_ctx)
		ck_assert_msg(gt_good_job(G.fd, mine.ctx_id, 1 << 20) == 0,
			      "parent's context after the kills: %s", gt_msg);
	ck_assert_msg(gt_good_job_new_ctx(G.fd) == 0, "%s", gt_msg);
}
END_TEST

/* Close a file with jobs queued and running; its BOs stay mapped in us. */
START_TEST(life_close_file_inflight)
{
	gt_begin("life_close_file_inflight");
	struct gt_baseline base;
	struct drm_npu_ctx_create cc;
	struct gt_batch b;
	int fd2;

	gt_take_baseline(&base);
	fd2 = gt_open();
	ck_assert_int_ge(fd2, 0);
	ck_assert_int_eq(gt_ctx_create_retry(fd2, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 2000), 0);
	ck_assert_msg(gt_batch_init(fd2, &b, 16, 1 << 20, 5) == 0, "%s", gt_msg);
	for (unsigned k = 0; k < 16; k++)
		ck_assert_msg(gt_batch_submit(&b, k, cc.ctx_id) == 0, "%s", gt_msg);
	close(fd2);
	/* The CPU mappings still hold the BOs: touch them, then drop them. */
	((volatile uint8_t *)b.src.map)[0] ^= 0;
	gt_batch_fini(&b);	/* ioctls on the closed fd fail harmlessly */
	gt_expect_baseline(&base, "after closing a file with jobs in flight");
	ck_assert_msg(gt_good_job_new_ctx(G.fd) == 0, "%s", gt_msg);
}
END_TEST

/* Close every handle of a running job: the job still completes correctly. */
START_TEST(life_close_handles_inflight)
{
	gt_begin("life_close_handles_inflight");
	struct gt_baseline base;
	struct drm_npu_ctx_create cc;
	struct gt_copy c;
	uint32_t so;
	int st;

	ck_assert_int_eq(gt_ctx_create_retry(G.fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 2000), 0);
	gt_take_baseline(&base);
	ck_assert_msg(gt_copy_init(G.fd, &c, 8 << 20, 15) == 0, "%s", gt_msg);
	ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &so), 0);
	ck_assert_int_eq(gt_submit_copy(&c, cc.ctx_id, so, 0, NULL, 0, 0), 0);
	ck_assert_int_eq(gt_gem_close(G.fd, c.cmd.handle), 0);
	ck_assert_int_eq(gt_gem_close(G.fd, c.src.handle), 0);
	ck_assert_int_eq(gt_gem_close(G.fd, c.dst.handle), 0);
	c.cmd.handle = c.src.handle = c.dst.handle = 0;
	ck_assert_int_eq(gt_syncobj_wait(G.fd, &so, 1, GT_WAIT_NS), 0);
	st = gt_fence_status(G.fd, so);
	ck_assert_msg(st == GT_NO_STATUS || st == 1, "fence status %d", st);
	/* Our mappings still show what the job wrote. */
	ck_assert_msg(gt_copy_ok(&c), "the job's result is wrong after its handles were closed");
	gt_copy_fini(&c);
	gt_syncobj_destroy(G.fd, so);
	gt_expect_baseline(&base, "after closing the handles of a finished job");
	ck_assert_msg(gt_good_job(G.fd, cc.ctx_id, 4096) == 0, "%s", gt_msg);
}
END_TEST

/* Many short-lived files, each with a context, BOs and a job. */
START_TEST(life_many_files)
{
	gt_begin("life_many_files");
	struct gt_baseline base;

	gt_take_baseline(&base);
	for (unsigned k = 0; k < 50; k++) {
		struct drm_npu_ctx_create cc;
		struct gt_copy c;
		int fd = gt_open();

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(gt_ctx_create_retry(fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 2000), 0);
		ck_assert_msg(gt_copy_init(fd, &c, 4096, k) == 0, "%s", gt_msg);
		ck_assert_int_eq(gt_submit_copy(&c, cc.ctx_id, 0, 0, NULL, 0, 0), 0);
		/* Leave everything to close(): handles, context, job. */
		munmap(c.cmd.map, c.cmd.size);
		munmap(c.src.map, c.src.size);
		munmap(c.dst.map, c.dst.size);
		close(fd);
	}
	gt_expect_baseline(&base, "after 50 files closed with live objects");
	ck_assert_msg(gt_good_job_new_ctx(G.fd) == 0, "%s", gt_msg);
}
END_TEST

Suite *gt_suite_lifetime(void)
{
	Suite *s = suite_create("lifetime");
	TCase *tc = tcase_create("release");

	tcase_add_test(tc, life_fork_kill);
	tcase_add_test(tc, life_close_file_inflight);
	tcase_add_test(tc, life_close_handles_inflight);
	tcase_add_test(tc, life_many_files);
	gt_add_tcase(s, tc, 60);
	return s;
}
