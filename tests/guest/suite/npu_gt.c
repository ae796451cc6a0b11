/* SPDX-License-Identifier: MIT */
/*
 * npu_gt: helpers of the guest test suite.  See npu_gt.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/sync_file.h>

#include "npu_gt.h"

struct gt_dev G = { .fd = -1, .minor = -1 };
__thread char gt_msg[512];

int gt_fail(int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(gt_msg, sizeof(gt_msg), fmt, ap);
	va_end(ap);
	return rc;
}

unsigned gt_popcount(uint32_t v)
{
	return (unsigned)__builtin_popcount(v);
}

void gt_msleep(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int64_t gt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* ---- device ---------------------------------------------------------------- */

int gt_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret == -1 ? -errno : 0;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int gt_find_device(char *path, size_t len, int *minor)
{
	int minors[256], n = 0;
	struct dirent *de;
	DIR *dir = opendir("/dev/accel");

	if (!dir)
		return -errno;
	while ((de = readdir(dir)) && n < 256) {
		int m;
		char tail;

		if (sscanf(de->d_name, "accel%d%c", &m, &tail) == 1 && m >= 0)
			minors[n++] = m;
	}
	closedir(dir);
	qsort(minors, (size_t)n, sizeof(int), cmp_int);
	for (int i = 0; i < n; i++) {
		char p[64], name[64] = { 0 };
		struct drm_version v = { 0 };
		int fd;

		snprintf(p, sizeof(p), "/dev/accel/accel%d", minors[i]);
		fd = open(p, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v.name = name;
		v.name_len = sizeof(name) - 1;
		if (gt_ioctl(fd, DRM_IOCTL_VERSION, &v) == 0 &&
		    v.name_len == 3 && !memcmp(name, "npu", 3)) {
			close(fd);
			snprintf(path, len, "%s", p);
			*minor = minors[i];
			return 0;
		}
		close(fd);
	}
	return -ENODEV;
}

bool gt_driver_loaded(void)
{
	return access("/sys/module/npu", F_OK) == 0;
}

int gt_open(void)
{
	int fd;

	if (!G.path[0] && gt_find_device(G.path, sizeof(G.path), &G.minor))
		return -ENODEV;
	fd = open(G.path, O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int gt_query_info(int fd, struct drm_npu_device_info *info)
{
	struct drm_npu_dev_query q = {
		.type = DRM_NPU_QUERY_DEVICE,
		.size = sizeof(*info),
		.pointer = (uintptr_t)info,
	};

	memset(info, 0, sizeof(*info));
	return gt_ioctl(fd, DRM_IOCTL_NPU_DEV_QUERY, &q);
}

int gt_stats(int fd, struct drm_npu_stats_data *st)
{
	struct drm_npu_stats s = {
		.size = sizeof(*st),
		.pointer = (uintptr_t)st,
	};

	memset(st, 0, sizeof(*st));
	return gt_ioctl(fd, DRM_IOCTL_NPU_STATS, &s);
}

void gt_begin(const char *test)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	fprintf(stderr, "npu-guest-test: [%5ld.%03ld] %s\n", (long)ts.tv_sec,
		ts.tv_nsec / 1000000, test);
}

void gt_setup(void)
{
	int rc;

	G.fd = gt_open();
	ck_assert_msg(G.fd >= 0, "cannot open the npu device: %s",
		      strerror(-G.fd));
	rc = gt_query_info(G.fd, &G.info);
	ck_assert_msg(rc == 0, "DEV_QUERY failed: %s", strerror(-rc));
	ck_assert_msg(G.info.healthy_clusters > 0, "no healthy clusters");
}

void gt_teardown(void)
{
	if (G.fd >= 0)
		close(G.fd);
	G.fd = -1;
}

void gt_add_tcase(Suite *s, TCase *tc, double timeout)
{
	tcase_add_checked_fixture(tc, gt_setup, gt_teardown);
	tcase_set_timeout(tc, timeout);
	suite_add_tcase(s, tc);
}

/* ---- buffer objects ---------------------------------------------------------- */

int gt_bo_create(int fd, uint64_t size, uint32_t flags, struct gt_bo *bo)
{
	struct drm_npu_bo_create c = { .size = size, .flags = flags };
	int rc = gt_ioctl(fd, DRM_IOCTL_NPU_BO_CREATE, &c);

	memset(bo, 0, sizeof(*bo));
	if (rc)
		return rc;
	bo->handle = c.handle;
	bo->flags = flags;
	bo->size = c.size;
	bo->dev_addr = c.dev_addr;
	return 0;
}

int gt_bo_info(int fd, uint32_t handle, struct drm_npu_bo_info *info)
{
	memset(info, 0, sizeof(*info));
	info->handle = handle;
	return gt_ioctl(fd, DRM_IOCTL_NPU_BO_INFO, info);
}

int gt_bo_mmap_offset(int fd, uint32_t handle, uint64_t *offset)
{
	struct drm_npu_bo_mmap_offset m = { .handle = handle };
	int rc = gt_ioctl(fd, DRM_IOCTL_NPU_BO_MMAP_OFFSET, &m);

	*offset = rc ? 0 : m.offset;
	return rc;
}

int gt_bo_mmap(int fd, struct gt_bo *bo)
{
	uint64_t off;
	int rc = gt_bo_mmap_offset(fd, bo->handle, &off);
	void *p;

	if (rc)
		return rc;
	p = mmap(NULL, bo->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)off);
	if (p == MAP_FAILED)
		return -errno;
	bo->map = p;
	return 0;
}

int gt_gem_close(int fd, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	return gt_ioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

void gt_bo_free(int fd, struct gt_bo *bo)
{
	if (bo->map)
		munmap(bo->map, bo->size);
	if (bo->handle)
		gt_gem_close(fd, bo->handle);
	memset(bo, 0, sizeof(*bo));
}

/* ---- contexts ------------------------------------------------------------------ */

int gt_ctx_create(int fd, uint32_t clusters, uint32_t priority,
		  struct drm_npu_ctx_create *out)
{
	struct drm_npu_ctx_create c = {
		.clusters = clusters,
		.priority = priority,
	};
	int rc = gt_ioctl(fd, DRM_IOCTL_NPU_CTX_CREATE, &c);

	if (out)
		*out = c;
	return rc;
}

int gt_ctx_create_retry(int fd, uint32_t clusters, uint32_t priority,
			struct drm_npu_ctx_create *out, unsigned ms)
{
	int64_t end = gt_now_ns() + (int64_t)ms * 1000000;
	int rc;

	for (;;) {
		rc = gt_ctx_create(fd, clusters, priority, out);
		if (rc != -ENOSPC || gt_now_ns() > end)
			return rc;
		gt_msleep(20);
	}
}

int gt_ctx_destroy(int fd, uint32_t ctx_id)
{
	struct drm_npu_ctx_destroy d = { .ctx_id = ctx_id };

	return gt_ioctl(fd, DRM_IOCTL_NPU_CTX_DESTROY, &d);
}

int gt_ctx_query(int fd, uint32_t ctx_id, struct drm_npu_ctx_query *q)
{
	memset(q, 0, sizeof(*q));
	q->ctx_id = ctx_id;
	return gt_ioctl(fd, DRM_IOCTL_NPU_CTX_QUERY, q);
}

/* ---- syncobjs ------------------------------------------------------------------ */

int gt_syncobj_create(int fd, uint32_t flags, uint32_t *handle)
{
	struct drm_syncobj_create c = { .flags = flags };
	int rc = gt_ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);

	*handle = rc ? 0 : c.handle;
	return rc;
}

int gt_syncobj_destroy(int fd, uint32_t handle)
{
	struct drm_syncobj_destroy d = { .handle = handle };

	return gt_ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
}

int gt_syncobj_from_sync_file(int fd, int sync_file, uint32_t *handle)
{
	struct drm_syncobj_handle h = {
		.flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE,
		.fd = sync_file,
	};
	int rc = gt_syncobj_create(fd, 0, &h.handle);

	if (!rc) {
		rc = gt_ioctl(fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &h);
		if (rc)
			gt_syncobj_destroy(fd, h.handle);
	}
	close(sync_file);
	*handle = rc ? 0 : h.handle;
	return rc;
}

int gt_syncobj_wait(int fd, const uint32_t *handles, uint32_t count,
		    int64_t rel_ns)
{
	struct drm_syncobj_wait w = {
		.handles = (uintptr_t)handles,
		.timeout_nsec = gt_now_ns() + rel_ns,
		.count_handles = count,
		.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL,
	};

	return gt_ioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
}

int gt_syncobj_timeline_wait(int fd, uint32_t handle, uint64_t point,
			     int64_t rel_ns, uint32_t flags)
{
	struct drm_syncobj_timeline_wait w = {
		.handles = (uintptr_t)&handle,
		.points = (uintptr_t)&point,
		.timeout_nsec = gt_now_ns() + rel_ns,
		.count_handles = 1,
		.flags = flags | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL,
	};

	return gt_ioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w);
}

int gt_syncobj_query(int fd, uint32_t handle, uint64_t *point)
{
	struct drm_syncobj_timeline_array a = {
		.handles = (uintptr_t)&handle,
		.points = (uintptr_t)point,
		.count_handles = 1,
	};

	*point = 0;
	return gt_ioctl(fd, DRM_IOCTL_SYNCOBJ_QUERY, &a);
}

int gt_fence_status(int fd, uint32_t syncobj)
{
	struct drm_syncobj_handle h = {
		.handle = syncobj,
		.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
		.fd = -1,
	};
	struct sync_file_info info;
	int rc;

	if (gt_ioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h) || h.fd < 0)
		return GT_NO_STATUS;
	memset(&info, 0, sizeof(info));
	rc = gt_ioctl(h.fd, SYNC_IOC_FILE_INFO, &info);
	close(h.fd);
	return rc ? GT_NO_STATUS : info.status;
}

/* ---- programs -------------------------------------------------------------------- */

static void twu_bytes(struct npu_hw_twu *t, uint64_t va, uint64_t bytes)
{
	memset(t, 0, sizeof(*t));
	t->base = va;
	t->space = NPU_SPACE_DDR;
	t->dtype = NPU_DT_UINT8;
	if (bytes <= NPU_TWU_MAX_COUNT) {
		t->nlevels = 1;
		t->level[0] = (struct npu_hw_twu_level){ 0, 1, (int32_t)bytes - 1 };
	} else {
		/* 64 KiB rows (bytes is a multiple of 64 KiB); the row level
		 * is a repeat level, as an iteration moves at most 2^24
		 * elements (isa.md). */
		uint64_t rows = bytes >> 16;

		t->nlevels = 2;
		t->level[0] = (struct npu_hw_twu_level){ 0, 1, 65535 };
		t->level[1] = (struct npu_hw_twu_level){
			0, 65536, (int32_t)((rows - 1) << 16) };
	}
}

uint32_t gt_build_copy(void *dst, uint64_t src_va, uint64_t dst_va,
		       uint64_t bytes)
{
	struct {
		struct npu_hw_prog hdr;
		struct npu_hw_insn insn;
	} prog;

	memset(&prog, 0, sizeof(prog));
	prog.hdr.magic = NPU_PROG_MAGIC;
	prog.hdr.version_major = NPU_PROG_VERSION_MAJOR;
	prog.hdr.version_minor = NPU_PROG_VERSION_MINOR;
	prog.hdr.insn_count = 1;
	prog.hdr.insn_offset = sizeof(prog.hdr);
	prog.insn.unit = NPU_UNIT_DMA;
	prog.insn.opcode = NPU_DMA_COPY;
	prog.insn.params.dma.engine = 0;
	prog.insn.repeat_levels = bytes > NPU_TWU_MAX_COUNT ? 1 : 0;
	twu_bytes(&prog.insn.opnd[NPU_OPND_SRC0], src_va, bytes);
	twu_bytes(&prog.insn.opnd[NPU_OPND_DST], dst_va, bytes);
	memcpy(dst, &prog, sizeof(prog));
	return (uint32_t)sizeof(prog);
}

uint8_t gt_pattern(uint64_t i, unsigned seed)
{
	return (uint8_t)(seed * 31u + i * 13u + (i >> 8) + (i >> 16) * 7u + 1u);
}

void gt_fill(void *p, uint64_t bytes, unsigned seed)
{
	uint8_t *b = p;

	for (uint64_t i = 0; i < bytes; i++)
		b[i] = gt_pattern(i, seed);
}

int64_t gt_check(const void *p, uint64_t bytes, unsigned seed)
{
	const uint8_t *b = p;

	for (uint64_t i = 0; i < bytes; i++)
		if (b[i] != gt_pattern(i, seed))
			return (int64_t)i;
	return -1;
}

bool gt_all_zero(const void *p, uint64_t bytes)
{
	const uint8_t *b = p;

	for (uint64_t i = 0; i < bytes; i++)
		if (b[i])
			return false;
	return true;
}

int gt_copy_init(int fd, struct gt_copy *c, uint64_t bytes, unsigned seed)
{
	int rc;

	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->bytes = bytes;
	c->seed = seed;
	rc = gt_bo_create(fd, GT_COPY_PROG_SIZE, 0, &c->cmd);
	if (!rc)
		rc = gt_bo_create(fd, bytes, 0, &c->src);
	if (!rc)
		rc = gt_bo_create(fd, bytes, 0, &c->dst);
	if (rc) {
		gt_copy_fini(c);
		return gt_fail(rc, "BO_CREATE for a copy of %" PRIu64 ": %s",
			       bytes, strerror(-rc));
	}
	rc = gt_bo_mmap(fd, &c->cmd);
	if (!rc)
		rc = gt_bo_mmap(fd, &c->src);
	if (!rc)
		rc = gt_bo_mmap(fd, &c->dst);
	if (rc) {
		gt_copy_fini(c);
		return gt_fail(rc, "mmap of a copy BO: %s", strerror(-rc));
	}
	gt_fill(c->src.map, bytes, seed);
	c->prog_size = gt_build_copy(c->cmd.map, c->src.dev_addr,
				     c->dst.dev_addr, bytes);
	return 0;
}

void gt_copy_set_src(struct gt_copy *c, uint64_t src_va)
{
	gt_build_copy(c->cmd.map, src_va, c->dst.dev_addr, c->bytes);
}

void gt_copy_set_dst(struct gt_copy *c, uint64_t dst_va)
{
	gt_build_copy(c->cmd.map, c->src.dev_addr, dst_va, c->bytes);
}

void gt_copy_fini(struct gt_copy *c)
{
	gt_bo_free(c->fd, &c->cmd);
	gt_bo_free(c->fd, &c->src);
	gt_bo_free(c->fd, &c->dst);
}

bool gt_copy_ok(const struct gt_copy *c)
{
	return gt_check(c->dst.map, c->bytes, c->seed) < 0;
}

void gt_copy_submit_args(const struct gt_copy *c, uint32_t ctx_id,
			 struct drm_npu_bo_ref refs[2],
			 struct drm_npu_submit *s)
{
	refs[0] = (struct drm_npu_bo_ref){ c->src.handle, DRM_NPU_BO_REF_READ };
	refs[1] = (struct drm_npu_bo_ref){ c->dst.handle, DRM_NPU_BO_REF_WRITE };
	memset(s, 0, sizeof(*s));
	s->ctx_id = ctx_id;
	s->cmd_handle = c->cmd.handle;
	s->cmd_offset = 0;
	s->cmd_size = c->prog_size;
	s->bos = (uintptr_t)refs;
	s->bo_count = 2;
}

int gt_submit(int fd, struct drm_npu_submit *s)
{
	return gt_ioctl(fd, DRM_IOCTL_NPU_SUBMIT, s);
}

int gt_submit_copy(const struct gt_copy *c, uint32_t ctx_id, uint32_t sync,
		   uint64_t point, const struct drm_npu_sync *in,
		   uint32_t nin, uint32_t timeout_ms)
{
	struct drm_npu_bo_ref refs[2];
	struct drm_npu_submit s;

	gt_copy_submit_args(c, ctx_id, refs, &s);
	s.out_sync = sync;
	s.out_point = point;
	s.in_syncs = (uintptr_t)in;
	s.in_sync_count = nin;
	s.timeout_ms = timeout_ms;
	return gt_submit(c->fd, &s);
}

int gt_run_copy(const struct gt_copy *c, uint32_t ctx_id, uint32_t timeout_ms)
{
	uint32_t so;
	int rc = gt_syncobj_create(c->fd, 0, &so);

	if (rc)
		return gt_fail(rc, "SYNCOBJ_CREATE: %s", strerror(-rc));
	rc = gt_submit_copy(c, ctx_id, so, 0, NULL, 0, timeout_ms);
	if (rc) {
		gt_syncobj_destroy(c->fd, so);
		return gt_fail(rc, "SUBMIT: %s", strerror(-rc));
	}
	rc = gt_syncobj_wait(c->fd, &so, 1, GT_WAIT_NS);
	gt_syncobj_destroy(c->fd, so);
	if (rc)
		return gt_fail(rc, "SYNCOBJ_WAIT (10 s): %s", strerror(-rc));
	return 0;
}

int gt_good_job(int fd, uint32_t ctx_id, uint64_t bytes)
{
	static unsigned seed = 100;
	struct drm_npu_ctx_query q0, q1;
	struct gt_copy c;
	uint32_t so;
	int rc, st;
	int64_t bad;

	rc = gt_ctx_query(fd, ctx_id, &q0);
	if (rc)
		return gt_fail(rc, "CTX_QUERY(%u): %s", ctx_id, strerror(-rc));
	rc = gt_copy_init(fd, &c, bytes, seed++);
	if (rc)
		return rc;
	rc = gt_syncobj_create(fd, 0, &so);
	if (rc) {
		gt_copy_fini(&c);
		return gt_fail(rc, "SYNCOBJ_CREATE: %s", strerror(-rc));
	}
	rc = gt_submit_copy(&c, ctx_id, so, 0, NULL, 0, 0);
	if (rc) {
		gt_fail(rc, "SUBMIT on ctx %u: %s", ctx_id, strerror(-rc));
		goto out;
	}
	rc = gt_syncobj_wait(fd, &so, 1, GT_WAIT_NS);
	if (rc) {
		gt_fail(rc, "SYNCOBJ_WAIT (10 s) on ctx %u: %s", ctx_id,
			strerror(-rc));
		goto out;
	}
	st = gt_fence_status(fd, so);
	if (st != GT_NO_STATUS && st != 1) {
		rc = gt_fail(-EIO, "good job fence status %d (%s)", st,
			     st < 0 ? strerror(-st) : "pending");
		goto out;
	}
	bad = gt_check(c.dst.map, c.bytes, c.seed);
	if (bad >= 0) {
		rc = gt_fail(-EIO, "good job: dst byte %" PRId64 " is 0x%02x, expected 0x%02x",
			     bad, ((uint8_t *)c.dst.map)[bad],
			     gt_pattern((uint64_t)bad, c.seed));
		goto out;
	}
	rc = gt_ctx_query(fd, ctx_id, &q1);
	if (rc) {
		gt_fail(rc, "CTX_QUERY after job: %s", strerror(-rc));
		goto out;
	}
	if (q1.state != DRM_NPU_CTX_OK || q1.jobs_failed != q0.jobs_failed ||
	    q1.jobs_completed < q0.jobs_completed + 1 ||
	    q1.jobs_submitted < q0.jobs_submitted + 1)
		rc = gt_fail(-EIO, "good job: ctx state %u, failed %" PRIu64 "->%" PRIu64
			     ", completed %" PRIu64 "->%" PRIu64 ", submitted %" PRIu64 "->%" PRIu64,
			     q1.state, (uint64_t)q0.jobs_failed, (uint64_t)q1.jobs_failed,
			     (uint64_t)q0.jobs_completed, (uint64_t)q1.jobs_completed,
			     (uint64_t)q0.jobs_submitted, (uint64_t)q1.jobs_submitted);
	else if (q1.device_cycles <= q0.device_cycles)
		rc = gt_fail(-EIO, "good job: context cycles %" PRIu64 " -> %" PRIu64,
			     (uint64_t)q0.device_cycles, (uint64_t)q1.device_cycles);
out:
	gt_syncobj_destroy(fd, so);
	gt_copy_fini(&c);
	return rc;
}

const char *gt_ctx_str(int fd, uint32_t ctx_id)
{
	static __thread char buf[160];
	struct drm_npu_ctx_query q;
	int rc = gt_ctx_query(fd, ctx_id, &q);

	if (rc)
		snprintf(buf, sizeof(buf), "ctx %u: CTX_QUERY %s", ctx_id, strerror(-rc));
	else
		snprintf(buf, sizeof(buf), "ctx %u: state %u, last_error %u, submitted %"
			 PRIu64 ", completed %" PRIu64 ", failed %" PRIu64, ctx_id,
			 q.state, q.last_error, (uint64_t)q.jobs_submitted,
			 (uint64_t)q.jobs_completed, (uint64_t)q.jobs_failed);
	return buf;
}

int gt_good_job_new_ctx(int fd)
{
	struct drm_npu_ctx_create cc;
	int rc = gt_ctx_create_retry(fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 2000);

	if (rc)
		return gt_fail(rc, "CTX_CREATE(1): %s", strerror(-rc));
	rc = gt_good_job(fd, cc.ctx_id, 65536);
	gt_ctx_destroy(fd, cc.ctx_id);
	return rc;
}

int gt_batch_init(int fd, struct gt_batch *b, unsigned n, uint64_t bytes,
		  unsigned seed)
{
	int rc;

	memset(b, 0, sizeof(*b));
	b->fd = fd;
	b->n = n;
	b->bytes = bytes;
	b->seed = seed;
	b->dst = calloc(n, sizeof(*b->dst));
	b->sync = calloc(n, sizeof(*b->sync));
	if (!b->dst || !b->sync)
		return gt_fail(-ENOMEM, "calloc");
	rc = gt_bo_create(fd, (uint64_t)n * GT_BATCH_SLOT, 0, &b->cmd);
	if (!rc)
		rc = gt_bo_mmap(fd, &b->cmd);
	if (!rc)
		rc = gt_bo_create(fd, bytes, 0, &b->src);
	if (!rc)
		rc = gt_bo_mmap(fd, &b->src);
	if (rc)
		return gt_fail(rc, "batch BO create/mmap: %s", strerror(-rc));
	gt_fill(b->src.map, bytes, seed);
	for (unsigned k = 0; k < n; k++) {
		rc = gt_bo_create(fd, bytes, 0, &b->dst[k]);
		if (!rc)
			rc = gt_bo_mmap(fd, &b->dst[k]);
		if (!rc)
			rc = gt_syncobj_create(fd, 0, &b->sync[k]);
		if (rc)
			return gt_fail(rc, "batch job %u setup: %s", k, strerror(-rc));
		gt_build_copy((uint8_t *)b->cmd.map + k * GT_BATCH_SLOT,
			      b->src.dev_addr, b->dst[k].dev_addr, bytes);
	}
	return 0;
}

int gt_batch_submit(struct gt_batch *b, unsigned k, uint32_t ctx_id)
{
	return gt_batch_submit_after(b, k, ctx_id, NULL, 0);
}

int gt_batch_submit_after(struct gt_batch *b, unsigned k, uint32_t ctx_id,
			  const struct drm_npu_sync *in, uint32_t nin)
{
	struct drm_npu_bo_ref refs[2] = {
		{ b->src.handle, DRM_NPU_BO_REF_READ },
		{ b->dst[k].handle, DRM_NPU_BO_REF_WRITE },
	};
	struct drm_npu_submit s = {
		.ctx_id = ctx_id,
		.cmd_handle = b->cmd.handle,
		.cmd_offset = k * GT_BATCH_SLOT,
		.cmd_size = (uint32_t)GT_COPY_PROG_SIZE,
		.bos = (uintptr_t)refs,
		.bo_count = 2,
		.in_syncs = (uintptr_t)in,
		.in_sync_count = nin,
		.out_sync = b->sync[k],
	};
	int rc = gt_submit(b->fd, &s);

	return rc ? gt_fail(rc, "SUBMIT of batch job %u: %s", k, strerror(-rc)) : 0;
}

int gt_batch_wait(struct gt_batch *b, int64_t rel_ns)
{
	int rc = gt_syncobj_wait(b->fd, b->sync, b->n, rel_ns);

	return rc ? gt_fail(rc, "SYNCOBJ_WAIT on %u jobs: %s", b->n, strerror(-rc)) : 0;
}

int gt_batch_verify(struct gt_batch *b, unsigned k)
{
	int64_t bad = gt_check(b->dst[k].map, b->bytes, b->seed);

	if (bad < 0)
		return 0;
	return gt_fail(-EIO, "batch job %u: dst byte %" PRId64 " is 0x%02x, expected 0x%02x",
		       k, bad, ((uint8_t *)b->dst[k].map)[bad],
		       gt_pattern((uint64_t)bad, b->seed));
}

void gt_batch_fini(struct gt_batch *b)
{
	for (unsigned k = 0; b->dst && k < b->n; k++) {
		gt_bo_free(b->fd, &b->dst[k]);
		if (b->sync[k])
			gt_syncobj_destroy(b->fd, b->sync[k]);
	}
	gt_bo_free(b->fd, &b->cmd);
	gt_bo_free(b->fd, &b->src);
	free(b->dst);
	free(b->sync);
	b->dst = NULL;
	b->sync = NULL;
}

int gt_in_child(int (*fn)(void *), void *arg, char *msg, size_t len)
{
	int pfd[2], status;
	pid_t pid;
	ssize_t n;

	msg[0] = 0;
	if (pipe(pfd))
		return snprintf(msg, len, "pipe: %s", strerror(errno)), -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return snprintf(msg, len, "fork: %s", strerror(errno)), -1;
	if (pid == 0) {
		int rc;

		close(pfd[0]);
		gt_msg[0] = 0;
		rc = fn(arg);
		if (rc) {
			if (!gt_msg[0])
				snprintf(gt_msg, sizeof(gt_msg), "child failed: %d", rc);
			if (write(pfd[1], gt_msg, strlen(gt_msg)) < 0)
				_exit(2);
		}
		_exit(rc ? 1 : 0);
	}
	close(pfd[1]);
	n = read(pfd[0], msg, len - 1);
	msg[n > 0 ? n : 0] = 0;
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (!msg[0]) {
		if (WIFSIGNALED(status))
			snprintf(msg, len, "child killed by signal %d", WTERMSIG(status));
		else
			snprintf(msg, len, "child exit status %d", WEXITSTATUS(status));
	}
	return -1;
}

void gt_take_baseline(struct gt_baseline *b)
{
	struct drm_npu_stats_data again;

	/* Wait for earlier tests' releases to settle. */
	ck_assert_int_eq(gt_stats(G.fd, &b->st), 0);
	for (int k = 0; k < 30; k++) {
		gt_msleep(100);
		ck_assert_int_eq(gt_stats(G.fd, &again), 0);
		if (again.bo_count == b->st.bo_count && again.contexts == b->st.contexts &&
		    again.free_clusters == b->st.free_clusters)
			break;
		b->st = again;
	}
	b->bos_lines = gt_debugfs_lines("bos");
}

/* Poll up to 5 s for the counters to return to @b. */
void gt_expect_baseline(const struct gt_baseline *b, const char *what)
{
	struct drm_npu_stats_data st;
	long lines = b->bos_lines;

	for (int k = 0; k < 50; k++) {
		ck_assert_int_eq(gt_stats(G.fd, &st), 0);
		if (b->bos_lines >= 0)
			lines = gt_debugfs_lines("bos");
		if (st.bo_count == b->st.bo_count && st.bo_bytes == b->st.bo_bytes &&
		    st.contexts == b->st.contexts &&
		    st.free_clusters == b->st.free_clusters && lines == b->bos_lines)
			return;
		gt_msleep(100);
	}
	ck_assert_msg(st.bo_count == b->st.bo_count && st.bo_bytes == b->st.bo_bytes,
		      "%s: %" PRIu64 " BOs (%" PRIu64 " bytes) live, %" PRIu64 " (%" PRIu64
		      ") before: leaked", what, (uint64_t)st.bo_count, (uint64_t)st.bo_bytes,
		      (uint64_t)b->st.bo_count, (uint64_t)b->st.bo_bytes);
	ck_assert_msg(st.contexts == b->st.contexts, "%s: %u contexts live, %u before",
		      what, st.contexts, b->st.contexts);
	ck_assert_msg(st.free_clusters == b->st.free_clusters,
		      "%s: %u free clusters, %u before", what, st.free_clusters,
		      b->st.free_clusters);
	ck_assert_msg(lines == b->bos_lines, "%s: debugfs bos has %ld lines, %ld before",
		      what, lines, b->bos_lines);
}

uint64_t gt_unmapped_addr(const struct drm_npu_device_info *info)
{
	const uint64_t lim = 1ull << NPU_MMU_VA_BITS;
	uint64_t end = info->va_start + info->va_size;

	/* Above the BO range, else below it, else the top of the range. */
	if (end <= lim - (4ull << 20))
		return lim - (2ull << 20);
	if (info->va_start >= (2ull << 20))
		return 1ull << 20;
	return (end - (1ull << 20)) & ~0xfffull;
}

/* ---- debugfs, fdinfo ------------------------------------------------------------- */

static bool file_mentions_npu(const char *dir)
{
	char p[PATH_MAX], buf[256] = { 0 };
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/name", dir);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;	/* no "name" file: cannot tell, accept */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 && strstr(buf, "npu");
}

int gt_debugfs_path(const char *name, char *out, size_t len)
{
	static const char *const roots[] = {
		"/sys/kernel/debug/accel", "/sys/kernel/debug/dri",
	};
	char p[PATH_MAX];

	if (G.minor >= 0) {
		snprintf(p, sizeof(p), "%s/%d/%s", roots[0], G.minor, name);
		if (access(p, F_OK) == 0) {
			snprintf(out, len, "%s", p);
			return 0;
		}
	}
	for (size_t r = 0; r < sizeof(roots) / sizeof(roots[0]); r++) {
		DIR *d = opendir(roots[r]);
		struct dirent *de;

		if (!d)
			continue;
		while ((de = readdir(d))) {
			char dir[PATH_MAX - 64];

			if (de->d_name[0] == '.')
				continue;
			snprintf(dir, sizeof(dir), "%s/%s", roots[r], de->d_name);
			snprintf(p, sizeof(p), "%s/%s", dir, name);
			if (access(p, F_OK) == 0 && file_mentions_npu(dir)) {
				snprintf(out, len, "%s", p);
				closedir(d);
				return 0;
			}
		}
		closedir(d);
	}
	return -ENOENT;
}

int gt_debugfs_write(const char *name, const char *val)
{
	char p[PATH_MAX];
	ssize_t n;
	int fd;

	if (gt_debugfs_path(name, p, sizeof(p)))
		return -ENOENT;
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	close(fd);
	return 0;
}

long gt_debugfs_lines(const char *name)
{
	char p[PATH_MAX], buf[4096];
	long lines = 0;
	ssize_t n;
	int fd;

	if (gt_debugfs_path(name, p, sizeof(p)))
		return -ENOENT;
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
	close(fd);
	return n < 0 ? -EIO : lines;
}

int gt_fdinfo(int fd, struct gt_fdinfo *fi)
{
	char p[64], line[256];
	FILE *f;

	memset(fi, 0, sizeof(*fi));
	snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", fd);
	f = fopen(p, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned c;
		uint64_t v;

		if (sscanf(line, "drm-driver: %31s", fi->driver) == 1)
			continue;
		if (sscanf(line, "drm-client-id: %" SCNu64, &v) == 1) {
			fi->has_client_id = true;
			fi->client_id = v;
			continue;
		}
		if (sscanf(line, "drm-engine-cluster%u: %" SCNu64, &c, &v) == 2 &&
		    c < GT_MAX_CLUSTERS) {
			fi->has_cluster[c] = true;
			fi->cluster_ns[c] = v;
		}
	}
	fclose(f);
	return 0;
}

/* Files of the PCI device in sysfs (power/..., npu/...). */
static void dev_file(const char *name, char *out, size_t len)
{
	snprintf(out, len, "/sys/class/accel/accel%d/device/%s", G.minor, name);
}

int gt_dev_attr_read(const char *name, char *buf, size_t len)
{
	char path[256];
	ssize_t n;
	int fd;

	dev_file(name, path, sizeof(path));
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

int gt_dev_attr_write(const char *name, const char *val)
{
	char path[256];
	ssize_t n;
	int fd;

	dev_file(name, path, sizeof(path));
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}
