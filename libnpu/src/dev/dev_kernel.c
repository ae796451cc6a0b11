// SPDX-License-Identifier: MIT
/*
 * The kernel backend: /dev/accel/accelN bound to the npu driver, through
 * libdrm.  Each job gets a syncobj; its error is read from the fence via
 * a sync_file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/sync_file.h>
#include <xf86drm.h>

#include "npu_accel.h"
#include "dev/npu_dev.h"

#define KDRV_MAJOR 1

/*
 * Syncobjs kept for reuse: a job's out-syncobj is taken here and given
 * back when the job is freed, its fence replaced by the next submit, so a
 * model's steps do not pay a create and a destroy ioctl each (two of the
 * eight a step costs; in a TCG guest every ioctl is tens of microseconds).
 */
#define KERNEL_SYNCOBJ_POOL 64

struct kernel_dev {
	struct npu_device base;
	int fd;
	pthread_mutex_t pool_lock;	/* protects pool, npool */
	uint32_t pool[KERNEL_SYNCOBJ_POOL];
	unsigned npool;
	/*
	 * Context @ok_ctx's jobs up to seqno @ok_seqno are known to have
	 * succeeded: a wait for its job @ok_seqno returned, and no job of
	 * the context had failed then.  A context's jobs complete in
	 * submission order, so a run's earlier steps need no wait of their
	 * own (kernel_job_wait()): one ioctl each instead of two, which
	 * in a TCG guest is ~30 ioctls per BlazeFace run.  Protected by
	 * ok_lock; ok_seqno 0 when nothing is known.
	 */
	pthread_mutex_t ok_lock;
	uint32_t ok_ctx;
	uint64_t ok_seqno;
};

struct kernel_ctx {
	npu_dev_ctx pub;
};

struct npu_dev_job {
	struct kernel_dev *kd;
	uint32_t syncobj;
	uint32_t ctx_id;
	uint64_t seqno;		/* from the submit, for its cycles */
	uint64_t cycles;	/* simulated, once known */
};

static npu_status kfail(npu_status s, const char *what, int err)
{
	return npu_fail(s, "%s: %s", what, strerror(err));
}

static int kioctl(struct kernel_dev *kd, unsigned long req, void *arg)
{
	return drmIoctl(kd->fd, req, arg) ? errno : 0;
}

/*
 * Open @path and check it is the npu driver of a supported version; *@isa
 * (may be NULL) gets the program version the device runs.
 */
static npu_status kernel_probe(const char *path, int *fd_out,
			       npu_device_info *info, uint32_t *isa)
{
	struct drm_npu_device_info di;
	struct drm_npu_dev_query q = { .type = DRM_NPU_QUERY_DEVICE };
	drmVersionPtr v;
	int fd, major;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return npu_fail(NPU_ERR_NO_DEVICE, "cannot open %s: %s%s", path,
				strerror(errno),
				errno == EACCES ? " (add yourself to the device's group, often 'render' or 'accel')" : "");
	v = drmGetVersion(fd);
	if (!v || strcmp(v->name, "npu")) {
		npu_status st = npu_fail(NPU_ERR_NO_DEVICE,
					 "%s is driven by '%s', not the npu driver",
					 path, v ? v->name : "?");
		drmFreeVersion(v);
		close(fd);
		return st;
	}
	major = v->version_major;
	if (major != KDRV_MAJOR) {
		npu_status st = npu_fail(NPU_ERR_VERSION,
					 "%s: npu driver %d.%d is not supported by this libnpu (it needs %d.x): update libnpu or the driver",
					 path, v->version_major, v->version_minor, KDRV_MAJOR);
		drmFreeVersion(v);
		close(fd);
		return st;
	}
	memset(info, 0, sizeof(*info));
	snprintf(info->driver, sizeof(info->driver), "npu %d.%d",
		 v->version_major, v->version_minor);
	drmFreeVersion(v);

	memset(&di, 0, sizeof(di));
	q.size = sizeof(di);
	q.pointer = (uintptr_t)&di;
	if (drmIoctl(fd, DRM_IOCTL_NPU_DEV_QUERY, &q)) {
		npu_status st = kfail(NPU_ERR_DEVICE, "device query", errno);

		close(fd);
		return st;
	}
	info->backend = NPU_BACKEND_KERNEL;
	snprintf(info->path, sizeof(info->path), "%s", path);
	info->hw_version = di.hw_version;
	if (isa)
		*isa = di.isa_version;
	info->clusters = di.clusters;
	info->tpbs_per_cluster = di.tpbs_per_cluster;
	info->mesh_x = di.mesh_x;
	info->mesh_y = di.mesh_y;
	info->defect_mask = di.defect_mask;
	info->healthy_mask = di.healthy_mask;
	info->healthy_clusters = di.healthy_clusters;
	info->hbsm_size = di.hbsm_size;
	info->sram_size = di.sram_size;
	info->clock_mhz = di.clock_mhz;
	*fd_out = fd;
	return NPU_OK;
}

size_t npu_kernel_list(npu_device_info *infos, size_t cap)
{
	DIR *d = opendir("/dev/accel");
	struct dirent *e;
	size_t n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		npu_device_info info;
		char path[64];
		int fd;

		if (strncmp(e->d_name, "accel", 5) || strlen(e->d_name) > 40)
			continue;
		snprintf(path, sizeof(path), "/dev/accel/%.40s", e->d_name);
		if (kernel_probe(path, &fd, &info, NULL))
			continue;
		close(fd);
		if (n < cap)
			infos[n] = info;
		n++;
	}
	closedir(d);
	npu_clear_error();
	return n;
}

/* A syncobj for a job's fence: a pooled one, else a new one; 0 or errno. */
static int syncobj_get(struct kernel_dev *kd, uint32_t *handle)
{
	pthread_mutex_lock(&kd->pool_lock);
	if (kd->npool) {
		*handle = kd->pool[--kd->npool];
		pthread_mutex_unlock(&kd->pool_lock);
		return 0;
	}
	pthread_mutex_unlock(&kd->pool_lock);
	return drmSyncobjCreate(kd->fd, 0, handle) ? errno : 0;
}

/* Back to the pool (its fence stays until the next submit replaces it). */
static void syncobj_put(struct kernel_dev *kd, uint32_t handle)
{
	pthread_mutex_lock(&kd->pool_lock);
	if (kd->npool < KERNEL_SYNCOBJ_POOL) {
		kd->pool[kd->npool++] = handle;
		handle = 0;
	}
	pthread_mutex_unlock(&kd->pool_lock);
	if (handle)
		drmSyncobjDestroy(kd->fd, handle);
}

static void kernel_close(struct npu_device *dev)
{
	struct kernel_dev *kd = (struct kernel_dev *)dev;

	while (kd->npool)
		drmSyncobjDestroy(kd->fd, kd->pool[--kd->npool]);
	pthread_mutex_destroy(&kd->pool_lock);
	pthread_mutex_destroy(&kd->ok_lock);
	close(kd->fd);
	free(kd);
}

static npu_status kernel_bo_create(struct npu_device *dev, size_t size,
				   uint32_t flags, npu_dev_bo **out)
{
	struct kernel_dev *kd = (struct kernel_dev *)dev;
	struct drm_npu_bo_create c = {
		.size = size,
		.flags = flags & NPU_DEV_BO_DEVICE_RO ? DRM_NPU_BO_DEVICE_RO : 0,
	};
	struct drm_npu_bo_mmap_offset m = { 0 };
	struct drm_gem_close gc = { 0 };
	npu_dev_bo *bo;
	void *host;
	int err;

	*out = NULL;
	err = kioctl(kd, DRM_IOCTL_NPU_BO_CREATE, &c);
	if (err)
		return kfail(err == ENOMEM ? NPU_ERR_NO_MEMORY : NPU_ERR_DEVICE,
			     "creating a device buffer", err);
	m.handle = c.handle;
	err = kioctl(kd, DRM_IOCTL_NPU_BO_MMAP_OFFSET, &m);
	host = err ? MAP_FAILED : mmap(NULL, c.size, PROT_READ | PROT_WRITE,
				       MAP_SHARED, kd->fd, (off_t)m.offset);
	bo = host == MAP_FAILED ? NULL : calloc(1, sizeof(*bo));
	if (!bo) {
		err = err ? err : errno ? errno : ENOMEM;
		if (host != MAP_FAILED)
			munmap(host, c.size);
		gc.handle = c.handle;
		drmIoctl(kd->fd, DRM_IOCTL_GEM_CLOSE, &gc);
		return kfail(NPU_ERR_NO_MEMORY, "mapping a device buffer", err);
	}
	bo->host = host;
	bo->dev_addr = c.dev_addr;
	bo->size = size;
	bo->flags = flags;
	bo->handle = c.handle;
	*out = bo;
	return NPU_OK;
}

static void kernel_bo_free(struct npu_device *dev, npu_dev_bo *bo)
{
	struct kernel_dev *kd = (struct kernel_dev *)dev;
	struct drm_gem_close gc = { .handle = bo->handle };

	munmap(bo->host, (bo->size + 4095) & ~(size_t)4095);
	drmIoctl(kd->fd, DRM_IOCTL_GEM_CLOSE, &gc);
	free(bo);
}

/* Whether @job is known to have succeeded (see kernel_dev.ok_seqno). */
static bool known_ok(struct kernel_dev *kd, const npu_dev_job *job)
{
	bool ok;

	pthread_mutex_lock(&kd->ok_lock);
	ok = kd->ok_seqno && kd->ok_ctx == job->ctx_id && job->seqno <= kd->ok_seqno;
	pthread_mutex_unlock(&kd->ok_lock);
	return ok;
}

static void note_ok(struct kernel_dev *kd, const npu_dev_job *job)
{
	pthread_mutex_lock(&kd->ok_lock);
	if (kd->ok_ctx != job->ctx_id || job->seqno > kd->ok_seqno) {
		kd->ok_ctx = job->ctx_id;
		kd->ok_seqno = job->seqno;
	}
	pthread_mutex_unlock(&kd->ok_lock);
}

/* Forget what is known of context @ctx_id's jobs: its id may be reused. */
static void forget_ok(struct kernel_dev *kd, uint32_t ctx_id)
{
	pthread_mutex_lock(&kd->ok_lock);
	if (kd->ok_ctx == ctx_id)
		kd->ok_seqno = 0;
	pthread_mutex_unlock(&kd->ok_lock);
}

static npu_status kernel_ctx_create(struct npu_device *dev, uint32_t clusters,
				    npu_dev_ctx **out)
{
	struct kernel_dev *kd = (struct kernel_dev *)dev;
	struct drm_npu_ctx_create c = {
		.clusters = clusters,
		.priority = DRM_NPU_PRIORITY_NORMAL,
	};
	struct kernel_ctx *ctx;
	int err;

	*out = NULL;
	err = kioctl(kd, DRM_IOCTL_NPU_CTX_CREATE, &c);
	if (err == ENOSPC)
		return npu_fail(NPU_ERR_BUSY,
				"a partition of %u clusters is not free on %s (see dmesg): close other contexts or ask for fewer clusters",
				clusters, dev->info.path);
	if (err)
		return npu_fail(err == EINVAL ? NPU_ERR_INVALID_ARG : NPU_ERR_DEVICE,
				"a partition of %u clusters on %s: %s (the device has %u healthy clusters)",
				clusters, dev->info.path, strerror(err),
				dev->info.healthy_clusters);
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		struct drm_npu_ctx_destroy d = { .ctx_id = c.ctx_id };

		drmIoctl(kd->fd, DRM_IOCTL_NPU_CTX_DESTROY, &d);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	ctx->pub.dev = dev;
	ctx->pub.nclusters = clusters;
	ctx->pub.cluster_mask = c.cluster_mask;
	memcpy(ctx->pub.cluster_map, c.cluster_map, sizeof(ctx->pub.cluster_map));
	ctx->pub.queue = c.queue;
	ctx->pub.id = c.ctx_id;
	*out = &ctx->pub;
	return NPU_OK;
}

static void kernel_ctx_destroy(npu_dev_ctx *ctx)
{
	struct kernel_dev *kd;
	struct drm_npu_ctx_destroy d;

	if (!ctx)
		return;
	kd = (struct kernel_dev *)ctx->dev;
	forget_ok(kd, ctx->id);
	d = (struct drm_npu_ctx_destroy){ .ctx_id = ctx->id };
	drmIoctl(kd->fd, DRM_IOCTL_NPU_CTX_DESTROY, &d);
	free(ctx);
}

static npu_status kernel_submit(npu_dev_ctx *ctx, npu_dev_bo *cmd,
				uint32_t offset, uint32_t size,
				const npu_dev_use *uses, uint32_t nuses,
				uint32_t timeout_ms, npu_dev_job **out)
{
	struct kernel_dev *kd = (struct kernel_dev *)ctx->dev;
	struct drm_npu_bo_ref *refs;
	struct drm_npu_submit s = { 0 };
	npu_dev_job *job;
	int err;

	*out = NULL;
	job = calloc(1, sizeof(*job));
	refs = calloc(nuses ? nuses : 1, sizeof(*refs));
	if (!job || !refs) {
		free(job);
		free(refs);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	for (uint32_t i = 0; i < nuses; i++) {
		refs[i].handle = uses[i].bo->handle;
		refs[i].flags = (uses[i].flags & NPU_DEV_USE_READ ? DRM_NPU_BO_REF_READ : 0) |
				(uses[i].flags & NPU_DEV_USE_WRITE ? DRM_NPU_BO_REF_WRITE : 0);
		if (!refs[i].flags)
			refs[i].flags = DRM_NPU_BO_REF_READ;
	}
	err = syncobj_get(kd, &job->syncobj);
	if (err) {
		free(job);
		free(refs);
		return kfail(NPU_ERR_DEVICE, "creating a syncobj", err);
	}
	s.ctx_id = ctx->id;
	s.cmd_handle = cmd->handle;
	s.cmd_offset = offset;
	s.cmd_size = size;
	s.bos = (uintptr_t)refs;
	s.bo_count = nuses;
	s.out_sync = job->syncobj;
	s.timeout_ms = timeout_ms;
	err = kioctl(kd, DRM_IOCTL_NPU_SUBMIT, &s);
	free(refs);
	if (err) {
		syncobj_put(kd, job->syncobj);
		free(job);
		if (err == EIO)
			return npu_fail(NPU_ERR_JOB_FAILED,
					"the context is banned after an earlier job faulted or hung: create a new context");
		return kfail(err == EINVAL || err == EACCES ? NPU_ERR_INVALID_ARG :
			     NPU_ERR_DEVICE, "submitting a job", err);
	}
	job->kd = kd;
	job->ctx_id = ctx->id;
	job->seqno = s.seqno;
	*out = job;
	return NPU_OK;
}

static npu_status kernel_job_wait(npu_dev_job *job, int64_t timeout_ns)
{
	struct kernel_dev *kd = job->kd;
	struct sync_file_info info = { 0 };
	struct timespec now;
	int64_t abs;
	int sync_fd = -1, ret;

	if (known_ok(kd, job)) {
		/* Done and succeeded: only its cycles are still to read. */
		struct drm_npu_ctx_query cq = { .ctx_id = job->ctx_id, .job_seqno = job->seqno };

		if (!kioctl(kd, DRM_IOCTL_NPU_CTX_QUERY, &cq) && cq.job_found)
			job->cycles = cq.job_cycles;
		return NPU_OK;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	abs = timeout_ns < 0 ? INT64_MAX :
	      (int64_t)now.tv_sec * 1000000000 + now.tv_nsec + timeout_ns;
	ret = drmSyncobjWait(kd->fd, &job->syncobj, 1, abs,
			     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
	if (ret)
		return errno == ETIME ?
		       npu_fail(NPU_ERR_TIMEOUT, "the job did not finish within %lld ms",
				(long long)(timeout_ns / 1000000)) :
		       kfail(NPU_ERR_DEVICE, "waiting for a job", errno);
	/*
	 * Its cycles, while the driver still remembers them (the context's
	 * last DRM_NPU_CTX_RECENT_JOBS jobs; older drivers report none).
	 */
	{
		struct drm_npu_ctx_query cq = { .ctx_id = job->ctx_id, .job_seqno = job->seqno };

		if (!kioctl(kd, DRM_IOCTL_NPU_CTX_QUERY, &cq)) {
			if (cq.job_found)
				job->cycles = cq.job_cycles;
			/*
			 * No job of the context ever ended in error, this
			 * one included (it is done): the fence can only say
			 * success.  Saves three syscalls per job.
			 */
			if (!cq.jobs_failed) {
				note_ok(kd, job);
				return NPU_OK;
			}
		}
	}
	/* The fence's error says how the job ended. */
	if (drmSyncobjExportSyncFile(kd->fd, job->syncobj, &sync_fd))
		return NPU_OK;
	ret = ioctl(sync_fd, SYNC_IOC_FILE_INFO, &info);
	close(sync_fd);
	if (!ret && info.status < 0)
		return npu_fail(NPU_ERR_JOB_FAILED, "the NPU ended the job with an error: %s%s",
				strerror(-info.status),
				info.status == -EFAULT ? " (MMU fault: the program touched memory it was not given)" :
				info.status == -ETIMEDOUT ? " (it hung and the device was reset)" :
				info.status == -ERANGE ? " (an index, e.g. a token id, was outside its table)" : "");
	return NPU_OK;
}

static uint64_t kernel_job_cycles(const npu_dev_job *job)
{
	return job->cycles;
}

static void kernel_job_free(npu_dev_job *job)
{
	if (!job)
		return;
	syncobj_put(job->kd, job->syncobj);
	free(job);
}

/*
 * The driver's stats: job cycles, and per-cluster busy time (host time in
 * jobs) expressed at the device clock.
 */
static npu_status kernel_counters(struct npu_device *dev, npu_device_counters *out)
{
	struct kernel_dev *kd = (struct kernel_dev *)dev;
	struct drm_npu_stats_data d = { 0 };
	struct drm_npu_stats q = { .size = sizeof(d), .pointer = (uintptr_t)&d };
	int err = kioctl(kd, DRM_IOCTL_NPU_STATS, &q);

	if (err)
		return npu_fail(NPU_ERR_IO, "%s: reading the driver's stats failed: %s",
				dev->info.path, strerror(err));
	out->cycles = d.device_cycles;
	for (unsigned c = 0; c < NPU_MAX_CLUSTERS; c++)
		out->cluster_busy[c] = d.cluster_busy_ns[c] * dev->info.clock_mhz / 1000;
	out->have = NPU_HAVE_CYCLES | NPU_HAVE_CLUSTERS;
	return NPU_OK;
}

static const struct npu_dev_ops kernel_ops = {
	.counters = kernel_counters,
	.close = kernel_close,
	.bo_create = kernel_bo_create,
	.bo_free = kernel_bo_free,
	.ctx_create = kernel_ctx_create,
	.ctx_destroy = kernel_ctx_destroy,
	.submit = kernel_submit,
	.job_wait = kernel_job_wait,
	.job_cycles = kernel_job_cycles,
	.job_free = kernel_job_free,
};

npu_status npu_kernel_open(const char *path, struct npu_device **out)
{
	struct kernel_dev *kd;
	npu_device_info info;
	npu_status st;
	uint32_t isa = 0;
	int fd;

	*out = NULL;
	st = kernel_probe(path, &fd, &info, &isa);
	if (st)
		return st;
	kd = calloc(1, sizeof(*kd));
	if (!kd) {
		close(fd);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	kd->fd = fd;
	pthread_mutex_init(&kd->pool_lock, NULL);
	pthread_mutex_init(&kd->ok_lock, NULL);
	kd->base.ops = &kernel_ops;
	kd->base.info = info;
	kd->base.isa_version = isa;
	*out = &kd->base;
	return NPU_OK;
}
