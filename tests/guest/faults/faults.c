/* SPDX-License-Identifier: MIT */
/*
 * npu-guest-faults: the npu driver under systematic allocation failure.
 *
 * For every operation a process does on the device (open, close, mmap, each
 * ioctl, submit with every BO and syncobj path) it fails the Nth injection
 * point of failslab and fail_page_alloc inside that one system call, for
 * N = 1, 2, ... until the call runs with no injection left over, through
 * the task's own /proc/self/task/<tid>/fail-nth (Documentation/
 * fault-injection/fault-injection.rst), so nothing else in the guest is
 * disturbed.  For every N it asserts:
 *
 *   - the call fails with a clean errno of the operation's list (ENOMEM for
 *     most), or succeeds with a correct result (a failure the kernel
 *     absorbed, e.g. kvmalloc falling back to vmalloc); the run without an
 *     injection succeeds;
 *   - a failed call changed nothing (a failed submit ran no job and wrote
 *     no byte); a successful one did what it says (the job's data is right);
 *   - afterwards nothing is leaked: DRM_IOCTL_NPU_STATS bo_count, bo_bytes,
 *     contexts and free_clusters, the line counts of debugfs bos and
 *     contexts, and the process's open files are back to where they were.
 *
 * After each operation a normal job must still run with the right result.
 * Output: one line per operation (injection points swept, errnos seen,
 * absorbed failures, leaks) and a closing "N passed, N failed" line.
 * Without fail-nth (Debian's stock kernel has no CONFIG_FAULT_INJECTION) or
 * without npu.ko it prints a skip line and exits 0.
 *
 * Usage: npu-guest-faults [-l | -n] [OP...]   (default: every operation)
 *   -l  list the operations
 *   -n  no injection: each operation once, with its checks and the leak
 *       accounting (works on any kernel; to test this program)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "npu_gt.h"

#define PROG		"npu-guest-faults"
#define MAX_POINTS	4000		/* per operation: a runaway guard */
#define COPY_BYTES	4096u		/* one page per BO: few page points */
#define MANY_BOS	4

static int fail_nth_fd = -1;
static bool dry;		/* -n */

/* ---- fail-nth ------------------------------------------------------------- */

static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -EIO;
}

static int read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* Arm: the @n-th injection point of this task fails. */
static void nth_arm(unsigned n)
{
	char b[16];
	int len = snprintf(b, sizeof(b), "%u", n);

	if (pwrite(fail_nth_fd, b, (size_t)len, 0) != len) {
		printf("%s: cannot write fail-nth: %s\n", PROG, strerror(errno));
		exit(1);
	}
}

/* Disarm; true when the armed failure was injected. */
static bool nth_disarm(void)
{
	char b[16] = { 0 };
	ssize_t n = pread(fail_nth_fd, b, sizeof(b) - 1, 0);

	if (pwrite(fail_nth_fd, "0", 1, 0) != 1 || n <= 0) {
		printf("%s: cannot use fail-nth: %s\n", PROG, strerror(errno));
		exit(1);
	}
	return atoi(b) == 0;
}

/*
 * The allocator switches the sweep needs, saved and restored: the default
 * ignore-gfp-wait=Y would spare every sleeping (GFP_KERNEL) allocation,
 * ignore-gfp-highmem=Y and min-order=1 every shmem page; verbose=0 keeps
 * stack dumps off the console.  6.12's should_fail_ex() takes fail-nth
 * before probability, interval, times and task-filter, so those stay as
 * they are (probability 0: no task but this one sees a failure).
 */
static const struct knob {
	const char *path, *val;
} knobs[] = {
	{ "/sys/kernel/debug/failslab/ignore-gfp-wait", "N" },
	{ "/sys/kernel/debug/failslab/verbose", "0" },
	{ "/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait", "N" },
	{ "/sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem", "N" },
	{ "/sys/kernel/debug/fail_page_alloc/min-order", "0" },
	{ "/sys/kernel/debug/fail_page_alloc/verbose", "0" },
};
static char saved[sizeof(knobs) / sizeof(knobs[0])][32];

static int knobs_set(void)
{
	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		int rc = read_str(knobs[i].path, saved[i], sizeof(saved[i]));

		if (!rc)
			rc = write_str(knobs[i].path, knobs[i].val);
		if (rc) {
			printf("%s: %s: %s\n", PROG, knobs[i].path, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

static void knobs_restore(void)
{
	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
		if (saved[i][0])
			write_str(knobs[i].path, saved[i]);
}

/* ---- leak accounting ------------------------------------------------------- */

struct counts {
	uint64_t bo_count, bo_bytes;
	uint32_t contexts, free_clusters;
	long bos_lines, ctx_lines;
	int fds;
};

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* the directory itself */
}

static int counts_take(struct counts *c)
{
	struct drm_npu_stats_data st;
	int rc = gt_stats(G.fd, &st);

	if (rc)
		return rc;
	c->bo_count = st.bo_count;
	c->bo_bytes = st.bo_bytes;
	c->contexts = st.contexts;
	c->free_clusters = st.free_clusters;
	c->bos_lines = gt_debugfs_lines("bos");
	c->ctx_lines = gt_debugfs_lines("contexts");
	c->fds = count_fds();
	return 0;
}

static bool counts_eq(const struct counts *a, const struct counts *b)
{
	return a->bo_count == b->bo_count && a->bo_bytes == b->bo_bytes &&
	       a->contexts == b->contexts && a->free_clusters == b->free_clusters &&
	       a->bos_lines == b->bos_lines && a->ctx_lines == b->ctx_lines &&
	       a->fds == b->fds;
}

/* A baseline: the counts unchanged over 200 ms (at most 5 s of waiting). */
static int counts_settle(struct counts *c)
{
	struct counts prev;
	int same = 0;

	if (counts_take(&prev))
		return -EIO;
	for (int i = 0; i < 250 && same < 10; i++) {
		gt_msleep(20);
		if (counts_take(c))
			return -EIO;
		same = counts_eq(c, &prev) ? same + 1 : 0;
		prev = *c;
	}
	return 0;
}

/* Poll up to 5 s (files and jobs are released asynchronously). */
static int counts_expect(const struct counts *base)
{
	struct counts now;

	for (int i = 0; i < 250; i++) {
		if (counts_take(&now))
			return gt_fail(-EIO, "STATS failed");
		if (counts_eq(&now, base))
			return 0;
		gt_msleep(20);
	}
	return gt_fail(-EIO,
		       "leak: bo_count %" PRIu64 " (was %" PRIu64 "), bo_bytes %" PRIu64
		       " (%" PRIu64 "), contexts %u (%u), free_clusters %u (%u), "
		       "debugfs bos %ld lines (%ld), contexts %ld lines (%ld), fds %d (%d)",
		       now.bo_count, base->bo_count, now.bo_bytes, base->bo_bytes,
		       now.contexts, base->contexts, now.free_clusters,
		       base->free_clusters, now.bos_lines, base->bos_lines,
		       now.ctx_lines, base->ctx_lines, now.fds, base->fds);
}

/* ---- the operations ------------------------------------------------------------ */

/*
 * State of one attempt.  setup() builds it on a file of its own (fd), run()
 * is the one system call under injection, check() judges its result, and
 * closing the file in cleanup releases whatever is left.
 */
struct fx {
	int fd;
	int fd2;			/* open: the new file */
	int variant;
	struct gt_copy c;
	struct gt_bo bos[MANY_BOS];
	struct gt_bo bo;
	uint32_t ctx;
	uint32_t so_in, so_out;
	uint64_t offset;
	void *map;
	struct drm_npu_submit s;
	struct drm_npu_bo_ref refs[MANY_BOS + 2];
	struct drm_npu_sync in[2];
	struct drm_npu_ctx_create cc;
	struct drm_npu_stats_data st;
	struct drm_npu_ctx_query q;
	struct drm_npu_device_info info;
	uint32_t handle;
};

static int raw_ioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

static int setup_file(struct fx *x)
{
	x->fd = gt_open();
	return x->fd < 0 ? gt_fail(x->fd, "open: %s", strerror(-x->fd)) : 0;
}

static int setup_ctx(struct fx *x)
{
	struct drm_npu_ctx_create cc;
	int rc = setup_file(x);

	if (!rc)
		rc = gt_ctx_create_retry(x->fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 5000);
	if (rc)
		return gt_fail(rc, "setup CTX_CREATE: %s", strerror(-rc));
	x->ctx = cc.ctx_id;
	return 0;
}

/* A file, a context and a 4 KiB copy job ready to submit. */
static int setup_copy(struct fx *x)
{
	int rc = setup_ctx(x);

	if (!rc)
		rc = gt_copy_init(x->fd, &x->c, COPY_BYTES, 7);
	return rc;
}

static void cleanup_file(struct fx *x)
{
	if (x->map)
		munmap(x->map, x->bo.size ? x->bo.size : 4096);
	if (x->c.fd)
		gt_copy_fini(&x->c);
	for (int i = 0; i < MANY_BOS; i++)
		if (x->bos[i].handle)
			gt_bo_free(x->fd, &x->bos[i]);
	if (x->fd2 > 0)
		close(x->fd2);
	if (x->fd > 0)
		close(x->fd);
}

/* open */
static int run_open(struct fx *x)
{
	x->fd2 = open(G.path, O_RDWR | O_CLOEXEC);
	return x->fd2 < 0 ? -errno : 0;
}

static int check_open(struct fx *x, int rc)
{
	if (rc)
		return 0;
	rc = gt_query_info(x->fd2, &x->info);
	return rc ? gt_fail(rc, "DEV_QUERY on the new file: %s", strerror(-rc)) : 0;
}

/* close of a file holding a BO, a mapped BO, a context after a job, a syncobj */
static int setup_close(struct fx *x)
{
	int rc = setup_copy(x);

	if (!rc)
		rc = gt_run_copy(&x->c, x->ctx, 0);
	if (!rc)
		rc = gt_syncobj_create(x->fd, 0, &x->so_out);
	if (!rc && !gt_copy_ok(&x->c))
		rc = gt_fail(-EIO, "setup job: wrong data");
	if (rc)
		return rc;
	/* The file goes with the close under test; the maps stay valid. */
	x->fd2 = x->fd;
	x->fd = -1;
	return 0;
}

static int run_close(struct fx *x)
{
	int rc = close(x->fd2) ? -errno : 0;

	x->fd2 = -1;
	return rc;
}

static int check_close(struct fx *x, int rc)
{
	(void)x;
	return rc ? gt_fail(rc, "close failed: %s", strerror(-rc)) : 0;
}

static void cleanup_close(struct fx *x)
{
	/* The BOs' maps keep them alive until unmapped: unmap, no ioctl. */
	struct gt_bo *b[3] = { &x->c.cmd, &x->c.src, &x->c.dst };

	for (int i = 0; i < 3; i++)
		if (b[i]->map)
			munmap(b[i]->map, b[i]->size);
	memset(&x->c, 0, sizeof(x->c));
	cleanup_file(x);
}

/* DEV_QUERY, STATS, CTX_QUERY, BO_INFO: no allocation expected, but swept */
static int run_query(struct fx *x)
{
	struct drm_npu_dev_query q = {
		.type = DRM_NPU_QUERY_DEVICE,
		.size = sizeof(x->info),
		.pointer = (uintptr_t)&x->info,
	};

	return raw_ioctl(x->fd, DRM_IOCTL_NPU_DEV_QUERY, &q);
}

static int check_query(struct fx *x, int rc)
{
	if (!rc && (!x->info.clusters || x->info.healthy_clusters != G.info.healthy_clusters))
		return gt_fail(-EIO, "DEV_QUERY returned wrong data");
	return 0;
}

static int run_stats(struct fx *x)
{
	struct drm_npu_stats s = { .size = sizeof(x->st), .pointer = (uintptr_t)&x->st };

	return raw_ioctl(x->fd, DRM_IOCTL_NPU_STATS, &s);
}

static int check_stats(struct fx *x, int rc)
{
	if (!rc && x->st.contexts < 1)
		return gt_fail(-EIO, "STATS: %u contexts with one live", x->st.contexts);
	return 0;
}

static int run_ctx_query(struct fx *x)
{
	x->q.ctx_id = x->ctx;
	return raw_ioctl(x->fd, DRM_IOCTL_NPU_CTX_QUERY, &x->q);
}

static int check_ctx_query(struct fx *x, int rc)
{
	if (!rc && (x->q.state != DRM_NPU_CTX_OK || x->q.jobs_submitted))
		return gt_fail(-EIO, "CTX_QUERY returned wrong data");
	return 0;
}

static int setup_bo(struct fx *x)
{
	int rc = setup_file(x);

	if (!rc)
		rc = gt_bo_create(x->fd, 65536, 0, &x->bo);
	return rc ? gt_fail(rc, "setup BO_CREATE: %s", strerror(-rc)) : 0;
}

static int run_bo_info(struct fx *x)
{
	struct drm_npu_bo_info i = { .handle = x->bo.handle };
	int rc = raw_ioctl(x->fd, DRM_IOCTL_NPU_BO_INFO, &i);

	if (!rc && (i.size != x->bo.size || i.dev_addr != x->bo.dev_addr))
		return gt_fail(-EIO, "BO_INFO returned wrong data");
	return rc;
}

static int check_pass(struct fx *x, int rc)
{
	(void)x;
	(void)rc;
	return 0;
}

/* BO_CREATE (variant: flags 0 and NO_MMAP|DEVICE_RO) */
static int run_bo_create(struct fx *x)
{
	struct drm_npu_bo_create c = {
		.size = 3 * 4096 + 1,
		.flags = x->variant ? DRM_NPU_BO_NO_MMAP | DRM_NPU_BO_DEVICE_RO : 0,
	};
	int rc = raw_ioctl(x->fd, DRM_IOCTL_NPU_BO_CREATE, &c);

	x->handle = rc ? 0 : c.handle;
	x->bo.size = rc ? 0 : c.size;
	return rc;
}

static int check_bo_create(struct fx *x, int rc)
{
	struct drm_npu_bo_info i;

	if (rc)
		return 0;
	rc = gt_bo_info(x->fd, x->handle, &i);
	if (rc || i.size != 4 * 4096 || x->bo.size != 4 * 4096 || !i.dev_addr)
		return gt_fail(-EIO, "the new BO: BO_INFO %d, size %" PRIu64, rc, (uint64_t)i.size);
	x->bo.size = 0;
	return 0;
}

/* BO_MMAP_OFFSET */
static int run_mmap_offset(struct fx *x)
{
	struct drm_npu_bo_mmap_offset m = { .handle = x->bo.handle };
	int rc = raw_ioctl(x->fd, DRM_IOCTL_NPU_BO_MMAP_OFFSET, &m);

	x->offset = rc ? 0 : m.offset;
	return rc;
}

static int check_mmap_offset(struct fx *x, int rc)
{
	void *p;

	if (rc)
		return 0;
	p = mmap(NULL, x->bo.size, PROT_READ | PROT_WRITE, MAP_SHARED, x->fd,
		 (off_t)x->offset);
	if (p == MAP_FAILED)
		return gt_fail(-errno, "mmap at the offset: %s", strerror(errno));
	munmap(p, x->bo.size);
	return 0;
}

/* mmap() of a BO (the shmem pages are allocated here) */
static int setup_mmap(struct fx *x)
{
	int rc = setup_bo(x);

	if (!rc)
		rc = gt_bo_mmap_offset(x->fd, x->bo.handle, &x->offset);
	return rc;
}

static int run_mmap(struct fx *x)
{
	void *p = mmap(NULL, x->bo.size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       x->fd, (off_t)x->offset);

	if (p == MAP_FAILED)
		return -errno;
	x->map = p;
	return 0;
}

static int check_mmap(struct fx *x, int rc)
{
	if (rc)
		return 0;
	if (!gt_all_zero(x->map, x->bo.size))
		return gt_fail(-EIO, "a new BO is not zero");
	gt_fill(x->map, x->bo.size, 3);
	if (gt_check(x->map, x->bo.size, 3) >= 0)
		return gt_fail(-EIO, "the mapping does not keep its data");
	return 0;
}

/* GEM_CLOSE of a BO mapped into a context */
static int setup_gem_close(struct fx *x)
{
	int rc = setup_copy(x);

	if (!rc)
		rc = gt_run_copy(&x->c, x->ctx, 0);
	return rc;
}

static int run_gem_close(struct fx *x)
{
	struct drm_gem_close c = { .handle = x->c.dst.handle };
	int rc = raw_ioctl(x->fd, DRM_IOCTL_GEM_CLOSE, &c);

	if (!rc)
		x->c.dst.handle = 0;
	return rc;
}

/* CTX_CREATE */
static int run_ctx_create(struct fx *x)
{
	memset(&x->cc, 0, sizeof(x->cc));
	x->cc.clusters = 1;
	x->cc.priority = DRM_NPU_PRIORITY_NORMAL;
	return raw_ioctl(x->fd, DRM_IOCTL_NPU_CTX_CREATE, &x->cc);
}

static int check_ctx_create(struct fx *x, int rc)
{
	if (rc)
		return 0;
	if (gt_popcount(x->cc.cluster_mask) != 1)
		return gt_fail(-EIO, "cluster_mask 0x%x for 1 cluster", x->cc.cluster_mask);
	return gt_good_job(x->fd, x->cc.ctx_id, COPY_BYTES);
}

/* CTX_DESTROY of a context that ran a job */
static int setup_ctx_destroy(struct fx *x)
{
	return setup_gem_close(x);
}

static int run_ctx_destroy(struct fx *x)
{
	struct drm_npu_ctx_destroy d = { .ctx_id = x->ctx };

	return raw_ioctl(x->fd, DRM_IOCTL_NPU_CTX_DESTROY, &d);
}

static int check_ctx_destroy(struct fx *x, int rc)
{
	struct drm_npu_ctx_query q;

	if (rc)
		return gt_fail(rc, "CTX_DESTROY failed: %s", strerror(-rc));
	rc = gt_ctx_query(x->fd, x->ctx, &q);
	return rc == -ENOENT ? 0 : gt_fail(-EIO, "destroyed context answers CTX_QUERY: %d", rc);
}

/* SYNCOBJ_CREATE, export to a sync_file (the suite reads fences so) */
static int run_syncobj_create(struct fx *x)
{
	struct drm_syncobj_create c = { .flags = x->variant ? DRM_SYNCOBJ_CREATE_SIGNALED : 0 };
	int rc = raw_ioctl(x->fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);

	x->so_out = rc ? 0 : c.handle;
	return rc;
}

static int check_syncobj_create(struct fx *x, int rc)
{
	if (rc)
		return 0;
	rc = gt_syncobj_wait(x->fd, &x->so_out, 1, 0);
	if (x->variant ? rc != 0 : rc != -EINVAL)
		return gt_fail(-EIO, "new syncobj: wait %d", rc);
	return 0;
}

static int setup_sync_export(struct fx *x)
{
	int rc = setup_copy(x);

	if (!rc)
		rc = gt_syncobj_create(x->fd, 0, &x->so_out);
	if (!rc)
		rc = gt_submit_copy(&x->c, x->ctx, x->so_out, 0, NULL, 0, 0);
	if (!rc)
		rc = gt_syncobj_wait(x->fd, &x->so_out, 1, GT_WAIT_NS);
	return rc ? gt_fail(rc, "setup job: %s", strerror(-rc)) : 0;
}

static int run_sync_export(struct fx *x)
{
	struct drm_syncobj_handle h = {
		.handle = x->so_out,
		.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
		.fd = -1,
	};
	int rc = raw_ioctl(x->fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h);

	x->fd2 = rc ? -1 : h.fd;
	return rc;
}

static int check_sync_export(struct fx *x, int rc)
{
	if (rc)
		return 0;
	return x->fd2 >= 0 ? 0 : gt_fail(-EIO, "no sync_file fd");
}

/*
 * SUBMIT.  Variants: 0 no syncobj; 1 binary out_sync; 2 timeline out_sync
 * at point 1; 3 binary and timeline in_syncs (signalled) and a binary
 * out_sync; 4 the BOs already mapped in the context (a job ran); 5 four
 * more BOs listed, each mapped on first use.
 */
static int setup_submit(struct fx *x)
{
	int rc = setup_copy(x);

	if (rc)
		return rc;
	if (x->variant == 4) {
		rc = gt_run_copy(&x->c, x->ctx, 0);
		if (rc)
			return rc;
		memset(x->c.dst.map, 0, x->c.bytes);
	}
	if (x->variant == 5)
		for (int i = 0; i < MANY_BOS && !rc; i++)
			rc = gt_bo_create(x->fd, 4096, i & 1 ? DRM_NPU_BO_DEVICE_RO : 0,
					  &x->bos[i]);
	if (!rc && x->variant >= 1)
		rc = gt_syncobj_create(x->fd, 0, &x->so_out);
	if (!rc && x->variant == 3) {
		struct drm_syncobj_timeline_array a;
		uint64_t point = 5;

		rc = gt_syncobj_create(x->fd, DRM_SYNCOBJ_CREATE_SIGNALED, &x->in[0].handle);
		if (!rc)
			rc = gt_syncobj_create(x->fd, 0, &x->in[1].handle);
		a = (struct drm_syncobj_timeline_array){
			.handles = (uintptr_t)&x->in[1].handle,
			.points = (uintptr_t)&point,
			.count_handles = 1,
		};
		if (!rc)
			rc = gt_ioctl(x->fd, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &a);
		x->in[1].point = 5;
	}
	if (rc)
		return gt_fail(rc, "setup: %s", strerror(-rc));
	gt_copy_submit_args(&x->c, x->ctx, x->refs, &x->s);
	if (x->variant == 5) {
		for (int i = 0; i < MANY_BOS; i++)
			x->refs[2 + i] = (struct drm_npu_bo_ref){
				x->bos[i].handle, DRM_NPU_BO_REF_READ };
		x->s.bo_count = 2 + MANY_BOS;
	}
	x->s.out_sync = x->so_out;
	x->s.out_point = x->variant == 2 ? 1 : 0;
	if (x->variant == 3) {
		x->s.in_syncs = (uintptr_t)x->in;
		x->s.in_sync_count = 2;
	}
	return 0;
}

static int run_submit(struct fx *x)
{
	return raw_ioctl(x->fd, DRM_IOCTL_NPU_SUBMIT, &x->s);
}

static int check_submit(struct fx *x, int rc)
{
	struct drm_npu_ctx_query q;
	uint64_t want = x->variant == 4 ? 1 : 0;
	int r;

	if (rc) {
		/* Nothing happened: no job, no byte, no fence. */
		gt_msleep(1);
		r = gt_ctx_query(x->fd, x->ctx, &q);
		if (r || q.jobs_submitted != want || q.state != DRM_NPU_CTX_OK)
			return gt_fail(-EIO, "after a failed submit: %s", gt_ctx_str(x->fd, x->ctx));
		if (!gt_all_zero(x->c.dst.map, x->c.bytes))
			return gt_fail(-EIO, "a failed submit wrote the destination");
		if (x->so_out && gt_syncobj_wait(x->fd, &x->so_out, 1, 0) != -EINVAL)
			return gt_fail(-EIO, "a failed submit left a fence in out_sync");
		return 0;
	}
	if (x->variant == 2)
		r = gt_syncobj_timeline_wait(x->fd, x->so_out, 1, GT_WAIT_NS, 0);
	else if (x->so_out)
		r = gt_syncobj_wait(x->fd, &x->so_out, 1, GT_WAIT_NS);
	else {
		int64_t end = gt_now_ns() + GT_WAIT_NS;

		do {
			r = gt_ctx_query(x->fd, x->ctx, &q);
			if (!r && q.jobs_completed > want)
				break;
			gt_msleep(2);
		} while (gt_now_ns() < end);
		r = r ? r : q.jobs_completed > want ? 0 : -ETIME;
	}
	if (r)
		return gt_fail(r, "waiting for the job: %s", strerror(-r));
	if (!gt_copy_ok(&x->c))
		return gt_fail(-EIO, "the job's data is wrong");
	r = gt_ctx_query(x->fd, x->ctx, &q);
	if (r || q.jobs_failed || q.state != DRM_NPU_CTX_OK)
		return gt_fail(-EIO, "after the job: %s", gt_ctx_str(x->fd, x->ctx));
	return 0;
}

struct op {
	const char *name;
	int variant;
	int (*setup)(struct fx *x);
	int (*run)(struct fx *x);
	int (*check)(struct fx *x, int rc);
	void (*cleanup)(struct fx *x);
	int errnos[3];		/* what an injected failure may return */
};

#define ENOMEM_ONLY { ENOMEM }

static const struct op ops[] = {
	{ "open", 0, NULL, run_open, check_open, cleanup_file, ENOMEM_ONLY },
	{ "close", 0, setup_close, run_close, check_close, cleanup_close, ENOMEM_ONLY },
	{ "dev_query", 0, setup_file, run_query, check_query, cleanup_file, ENOMEM_ONLY },
	{ "stats", 0, setup_ctx, run_stats, check_stats, cleanup_file, ENOMEM_ONLY },
	{ "bo_create", 0, setup_file, run_bo_create, check_bo_create, cleanup_file, ENOMEM_ONLY },
	{ "bo_create_ro", 1, setup_file, run_bo_create, check_bo_create, cleanup_file, ENOMEM_ONLY },
	{ "bo_info", 0, setup_bo, run_bo_info, check_pass, cleanup_file, ENOMEM_ONLY },
	{ "bo_mmap_offset", 0, setup_bo, run_mmap_offset, check_mmap_offset, cleanup_file, ENOMEM_ONLY },
	{ "mmap", 0, setup_mmap, run_mmap, check_mmap, cleanup_file, ENOMEM_ONLY },
	{ "gem_close", 0, setup_gem_close, run_gem_close, check_pass, cleanup_file, ENOMEM_ONLY },
	{ "ctx_create", 0, setup_file, run_ctx_create, check_ctx_create, cleanup_file, ENOMEM_ONLY },
	{ "ctx_query", 0, setup_ctx, run_ctx_query, check_ctx_query, cleanup_file, ENOMEM_ONLY },
	{ "ctx_destroy", 0, setup_ctx_destroy, run_ctx_destroy, check_ctx_destroy, cleanup_file, ENOMEM_ONLY },
	{ "syncobj_create", 0, setup_file, run_syncobj_create, check_syncobj_create, cleanup_file, ENOMEM_ONLY },
	{ "syncobj_create_signaled", 1, setup_file, run_syncobj_create, check_syncobj_create, cleanup_file, ENOMEM_ONLY },
	/* drm_syncobj reports a failed sync_file_create() as EINVAL. */
	{ "syncobj_export", 0, setup_sync_export, run_sync_export, check_sync_export, cleanup_file, { ENOMEM, EMFILE, EINVAL } },
	{ "submit", 0, setup_submit, run_submit, check_submit, cleanup_file, ENOMEM_ONLY },
	{ "submit_out_binary", 1, setup_submit, run_submit, check_submit, cleanup_file, ENOMEM_ONLY },
	{ "submit_out_timeline", 2, setup_submit, run_submit, check_submit, cleanup_file, ENOMEM_ONLY },
	{ "submit_in_syncs", 3, setup_submit, run_submit, check_submit, cleanup_file, ENOMEM_ONLY },
	{ "submit_mapped", 4, setup_submit, run_submit, check_submit, cleanup_file, ENOMEM_ONLY },
	{ "submit_many_bos", 5, setup_submit, run_submit, check_submit, cleanup_file, ENOMEM_ONLY },
};

#define NOPS (sizeof(ops) / sizeof(ops[0]))

/* ---- the sweep ------------------------------------------------------------------- */

struct tally {
	unsigned points, absorbed, leaks;
	unsigned err[134];		/* by errno */
};

static bool errno_ok(const struct op *op, int e)
{
	for (int i = 0; i < 3; i++)
		if (op->errnos[i] && op->errnos[i] == e)
			return true;
	return false;
}

static const char *errname(int e)
{
	switch (e) {
	case ENOMEM: return "ENOMEM";
	case EFAULT: return "EFAULT";
	case EINVAL: return "EINVAL";
	case ENOENT: return "ENOENT";
	case EMFILE: return "EMFILE";
	case ENOSPC: return "ENOSPC";
	case EIO: return "EIO";
	case EAGAIN: return "EAGAIN";
	case EINTR: return "EINTR";
	case EBUSY: return "EBUSY";
	default: return "E?";
	}
}

/* One attempt with the Nth point failing (n = 0: none armed). */
static int attempt(const struct op *op, unsigned n, bool *injected, int *rcp)
{
	struct fx x;
	int rc;

	memset(&x, 0, sizeof(x));
	x.fd = -1;
	x.fd2 = -1;
	x.variant = op->variant;
	if (op->setup) {
		rc = op->setup(&x);
		if (rc) {
			op->cleanup(&x);
			return gt_fail(rc, "setup: %s", gt_msg);
		}
	}
	if (n)
		nth_arm(n);
	rc = op->run(&x);
	*injected = n ? nth_disarm() : false;
	*rcp = rc;
	if (rc && !*injected) {
		op->cleanup(&x);
		return gt_fail(rc, "N=%u: failed without an injected failure: %s",
			       n, strerror(-rc));
	}
	if (rc && !errno_ok(op, -rc)) {
		op->cleanup(&x);
		return gt_fail(rc, "N=%u: injected failure returned %s (%d)",
			       n, errname(-rc), rc);
	}
	{
		char what[sizeof(gt_msg)];
		int c = op->check(&x, rc);

		if (c) {
			snprintf(what, sizeof(what), "%s", gt_msg);
			op->cleanup(&x);
			return gt_fail(c, "N=%u (%s): %s", n, rc ? errname(-rc) : "success", what);
		}
	}
	op->cleanup(&x);
	return 0;
}

static bool sweep(const struct op *op)
{
	struct counts base;
	struct tally t;
	int64_t t0 = gt_now_ns();
	char errs[256] = "";
	bool ok = true, done = false;
	unsigned n;
	int rc, res = 0;

	memset(&t, 0, sizeof(t));
	if (counts_settle(&base)) {
		printf("%s: %s: STATS failed\n", PROG, op->name);
		return false;
	}
	for (n = dry ? 0 : 1; n <= MAX_POINTS && ok; n++) {
		bool injected = false;

		rc = attempt(op, n, &injected, &res);
		if (rc) {
			printf("%s: %s: FAIL: %s\n", PROG, op->name, gt_msg);
			ok = false;
			break;
		}
		if (counts_expect(&base)) {
			printf("%s: %s: FAIL: N=%u (%s): %s\n", PROG, op->name, n,
			       injected ? (res ? errname(-res) : "absorbed") : "no injection",
			       gt_msg);
			t.leaks++;
			ok = false;
			break;
		}
		if (!injected) {
			done = true;
			break;
		}
		t.points++;
		if (res)
			t.err[-res < 134 ? -res : 0]++;
		else
			t.absorbed++;
	}
	if (ok && !done) {
		printf("%s: %s: FAIL: still failing after %u injection points\n",
		       PROG, op->name, MAX_POINTS);
		ok = false;
	}
	/* The device still works. */
	if (ok && (rc = gt_good_job_new_ctx(G.fd))) {
		printf("%s: %s: FAIL: a normal job afterwards: %s\n", PROG, op->name, gt_msg);
		ok = false;
	}
	/* Its BOs are freed once the scheduler lets go of the job. */
	if (ok && counts_expect(&base)) {
		printf("%s: %s: FAIL: after the normal job: %s\n", PROG, op->name, gt_msg);
		t.leaks++;
		ok = false;
	}
	for (int e = 0; e < 134; e++)
		if (t.err[e]) {
			size_t l = strlen(errs);

			snprintf(errs + l, sizeof(errs) - l, "%s%s %u", l ? ", " : "",
				 errname(e), t.err[e]);
		}
	printf("%s: %-24s %4u injection points, failed with %s, absorbed %u, leaks %u, %.2f s: %s\n",
	       PROG, op->name, t.points, errs[0] ? errs : "-", t.absorbed, t.leaks,
	       (double)(gt_now_ns() - t0) / 1e9, ok ? "PASS" : "FAIL");
	fflush(stdout);
	return ok;
}

int main(int argc, char **argv)
{
	char path[64];
	unsigned passed = 0, failed = 0;
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "-l")) {
		for (size_t i = 0; i < NOPS; i++)
			printf("%s\n", ops[i].name);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "-n")) {
		dry = true;
		argv++;
		argc--;
	}
	snprintf(path, sizeof(path), "/proc/self/task/%ld/fail-nth", (long)syscall(SYS_gettid));
	if (!dry && access(path, F_OK)) {
		printf("%s: SKIP: no %s (kernel without CONFIG_FAULT_INJECTION)\n", PROG, path);
		return 0;
	}
	if (!gt_driver_loaded()) {
		printf("%s: SKIP: npu.ko is not loaded\n", PROG);
		return 0;
	}
	if (!dry && (access("/sys/kernel/debug/failslab", F_OK) ||
		     access("/sys/kernel/debug/fail_page_alloc", F_OK))) {
		printf("%s: FAIL: fail-nth without failslab and fail_page_alloc in debugfs\n", PROG);
		return 1;
	}
	G.fd = gt_open();
	if (G.fd < 0) {
		printf("%s: FAIL: npu.ko loaded but no npu device: %s\n", PROG, strerror(-G.fd));
		return 1;
	}
	rc = gt_query_info(G.fd, &G.info);
	if (rc) {
		printf("%s: FAIL: DEV_QUERY: %s\n", PROG, strerror(-rc));
		return 1;
	}
	fail_nth_fd = dry ? 0 : open(path, O_RDWR | O_CLOEXEC);
	if (fail_nth_fd < 0 || (!dry && knobs_set())) {
		printf("%s: FAIL: cannot set up fault injection\n", PROG);
		knobs_restore();
		return 1;
	}
	/* No page faults inside a system call under injection. */
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		printf("%s: note: mlockall: %s\n", PROG, strerror(errno));

	for (size_t i = 0; i < NOPS; i++) {
		bool want = argc < 2;

		for (int a = 1; a < argc; a++)
			want |= !strcmp(argv[a], ops[i].name);
		if (!want)
			continue;
		if (sweep(&ops[i]))
			passed++;
		else
			failed++;
	}
	if (!dry)
		knobs_restore();
	printf("%s: %u passed, %u failed\n", PROG, passed, failed);
	return failed ? 1 : 0;
}
