/* SPDX-License-Identifier: MIT */
/*
 * npu-submit-latency: the guest side of make bench's guest_empty_job_latency
 * (tests/bench/bench_guest.sh).  In one process on one open file of the
 * npu driver, the median wall time (CLOCK_MONOTONIC, microseconds) of
 *
 *   null_ioctl   DRM_IOCTL_NPU_DEV_QUERY asking only for the size: the
 *                driver's cheapest ioctl, i.e. the syscall and DRM's
 *                dispatch, the floor any job pays;
 *   empty_job    DRM_IOCTL_NPU_SUBMIT of a program with no instructions
 *                (a 64-byte header: the smallest valid program) and
 *                DRM_IOCTL_SYNCOBJ_WAIT on its out-syncobj: submit, the
 *                scheduler, the ring and doorbell, the device's fetch and
 *                completion, the interrupt and the fence signal;
 *   libnpu_job   the same empty job with everything libnpu's kernel backend
 *                does around it (libnpu/src/dev/dev_kernel.c: a syncobj
 *                from its pool, the context query for the job's cycles,
 *                and the fence's status through a sync_file only once the
 *                context has a failed job, which it never has here).
 *
 * Checks that could fail: every ioctl succeeds, every empty job's fence
 * signals without error, and the context counts exactly the jobs submitted
 * as completed and none as failed.  Prints one line,
 *   npu-bench: null_ioctl_us=X empty_job_us=Y libnpu_job_us=Z
 * and exits 0, or says what failed and exits 1.
 *
 * Usage: npu-submit-latency [DEVICE [RUNS]]   (default /dev/accel/accel0, 400)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/sync_file.h>
#include <drm.h>
#include "npu_accel.h"
#include <npu/npu_hw.h>

#define WARMUP		20
#define WAIT_NS		(10ll * 1000000000ll)

static int fd = -1;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* ioctl() restarted on EINTR/EAGAIN; 0 or errno. */
static int xioctl(unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret == -1 ? errno : 0;
}

static void die(const char *what, int err)
{
	printf("npu-submit-latency: %s: %s\n", what, err ? strerror(err) : "failed");
	exit(1);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static double median_us(int64_t *ns, unsigned n)
{
	qsort(ns, n, sizeof(*ns), cmp_i64);
	return (n % 2 ? (double)ns[n / 2] : (ns[n / 2 - 1] + ns[n / 2]) / 2.0) / 1000.0;
}

static void syncobj_wait(uint32_t so)
{
	struct drm_syncobj_wait w = {
		.handles = (uintptr_t)&so,
		.timeout_nsec = now_ns() + WAIT_NS,
		.count_handles = 1,
		.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL,
	};
	int err = xioctl(DRM_IOCTL_SYNCOBJ_WAIT, &w);

	if (err)
		die(err == ETIME ? "an empty job did not finish within 10 s" : "SYNCOBJ_WAIT", err);
}

/* 1 signalled without error, else the fence's error (< 0) or 0 pending. */
static int fence_status(uint32_t so)
{
	struct drm_syncobj_handle h = {
		.handle = so,
		.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
		.fd = -1,
	};
	struct sync_file_info info;
	int err = xioctl(DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h);

	if (err)
		die("SYNCOBJ_HANDLE_TO_FD (export sync_file)", err);
	memset(&info, 0, sizeof(info));
	if (ioctl(h.fd, SYNC_IOC_FILE_INFO, &info))
		die("SYNC_IOC_FILE_INFO", errno);
	close(h.fd);
	return info.status;
}

static uint32_t syncobj_create(void)
{
	struct drm_syncobj_create c = { 0 };
	int err = xioctl(DRM_IOCTL_SYNCOBJ_CREATE, &c);

	if (err)
		die("SYNCOBJ_CREATE", err);
	return c.handle;
}

static void syncobj_destroy(uint32_t so)
{
	struct drm_syncobj_destroy d = { .handle = so };
	int err = xioctl(DRM_IOCTL_SYNCOBJ_DESTROY, &d);

	if (err)
		die("SYNCOBJ_DESTROY", err);
}

static void submit(struct drm_npu_submit *s, uint32_t so)
{
	int err;

	s->out_sync = so;
	err = xioctl(DRM_IOCTL_NPU_SUBMIT, s);
	if (err)
		die("SUBMIT of an empty program", err);
}

static void check_done(uint32_t so, const char *what)
{
	int st = fence_status(so);

	if (st != 1) {
		printf("npu-submit-latency: %s: fence status %d (%s)\n", what, st,
		       st < 0 ? strerror(-st) : "pending after the wait");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/dev/accel/accel0";
	unsigned runs = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 400;
	struct drm_npu_ctx_create cc = { .clusters = 1, .priority = DRM_NPU_PRIORITY_NORMAL };
	struct drm_npu_bo_create bc = { .size = 4096 };
	struct drm_npu_bo_mmap_offset mo = { 0 };
	struct drm_npu_ctx_query cq = { 0 };
	struct drm_npu_submit s = { 0 };
	struct npu_hw_prog *prog;
	uint64_t submitted = 0;
	int64_t *ns;
	double null_us, empty_us, libnpu_us;
	uint32_t so;
	int err;

	if (runs < 10 || runs > 100000) {
		printf("npu-submit-latency: RUNS must be 10..100000, not '%s'\n", argv[2]);
		return 1;
	}
	ns = calloc(runs, sizeof(*ns));
	if (!ns)
		die("out of memory", ENOMEM);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die(path, errno);
	if ((err = xioctl(DRM_IOCTL_NPU_CTX_CREATE, &cc)))
		die("CTX_CREATE (1 cluster)", err);
	if ((err = xioctl(DRM_IOCTL_NPU_BO_CREATE, &bc)))
		die("BO_CREATE", err);
	mo.handle = bc.handle;
	if ((err = xioctl(DRM_IOCTL_NPU_BO_MMAP_OFFSET, &mo)))
		die("BO_MMAP_OFFSET", err);
	prog = mmap(NULL, bc.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)mo.offset);
	if (prog == MAP_FAILED)
		die("mmap of the command BO", errno);
	memset(prog, 0, sizeof(*prog));
	prog->magic = NPU_PROG_MAGIC;
	prog->version_major = NPU_PROG_VERSION_MAJOR;
	prog->version_minor = NPU_PROG_VERSION_MINOR;
	prog->insn_count = 0;
	prog->insn_offset = sizeof(*prog);
	s.ctx_id = cc.ctx_id;
	s.cmd_handle = bc.handle;
	s.cmd_size = sizeof(*prog);

	/* The null ioctl. */
	for (unsigned i = 0; i < WARMUP + runs; i++) {
		struct drm_npu_dev_query q = { .type = DRM_NPU_QUERY_DEVICE };
		int64_t t0 = now_ns();

		if ((err = xioctl(DRM_IOCTL_NPU_DEV_QUERY, &q)))
			die("DEV_QUERY (size only)", err);
		if (i >= WARMUP)
			ns[i - WARMUP] = now_ns() - t0;
		if (!q.size)
			die("DEV_QUERY returned size 0", 0);
	}
	null_us = median_us(ns, runs);

	/* The empty job: one syncobj, its fence replaced by each submit. */
	so = syncobj_create();
	for (unsigned i = 0; i < WARMUP + runs; i++) {
		int64_t t0 = now_ns();

		submit(&s, so);
		syncobj_wait(so);
		if (i >= WARMUP)
			ns[i - WARMUP] = now_ns() - t0;
		submitted++;
		if (i % 64 == 0)
			check_done(so, "an empty job");
	}
	check_done(so, "the last empty job");
	syncobj_destroy(so);
	empty_us = median_us(ns, runs);

	/* What libnpu's kernel backend does per job (dev_kernel.c). */
	so = syncobj_create();	/* its pool: one syncobj, reused */
	for (unsigned i = 0; i < WARMUP + runs; i++) {
		struct drm_npu_ctx_query q;
		int64_t t0 = now_ns();

		submit(&s, so);
		syncobj_wait(so);
		memset(&q, 0, sizeof(q));
		q.ctx_id = cc.ctx_id;
		q.job_seqno = s.seqno;
		if ((err = xioctl(DRM_IOCTL_NPU_CTX_QUERY, &q)))
			die("CTX_QUERY", err);
		if (q.jobs_failed)
			check_done(so, "an empty job (libnpu's sequence)");
		if (i >= WARMUP)
			ns[i - WARMUP] = now_ns() - t0;
		submitted++;
		if (!q.job_found)
			die("CTX_QUERY does not know the job just completed", 0);
	}
	check_done(so, "the last empty job (libnpu's sequence)");
	syncobj_destroy(so);
	libnpu_us = median_us(ns, runs);

	cq.ctx_id = cc.ctx_id;
	if ((err = xioctl(DRM_IOCTL_NPU_CTX_QUERY, &cq)))
		die("CTX_QUERY", err);
	if (cq.jobs_submitted != submitted || cq.jobs_completed != submitted ||
	    cq.jobs_failed || cq.state != DRM_NPU_CTX_OK) {
		printf("npu-submit-latency: the context counts %llu submitted, %llu completed, %llu failed, state %u; %llu were submitted\n",
		       (unsigned long long)cq.jobs_submitted,
		       (unsigned long long)cq.jobs_completed,
		       (unsigned long long)cq.jobs_failed, cq.state,
		       (unsigned long long)submitted);
		return 1;
	}
	printf("npu-bench: null_ioctl_us=%.1f empty_job_us=%.1f libnpu_job_us=%.1f runs=%u\n",
	       null_us, empty_us, libnpu_us, runs);
	munmap(prog, bc.size);
	close(fd);
	free(ns);
	return 0;
}
