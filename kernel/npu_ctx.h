/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Copyright (c) 2026 The M100 NPU authors */

#ifndef NPU_CTX_H
#define NPU_CTX_H

#include <linux/kref.h>
#include <drm/drm_mm.h>
#include <drm/gpu_scheduler.h>

#include "npu_device.h"

struct npu_file;
struct npu_vm;

/**
 * struct npu_ctx - an execution context: partition, address space, queue
 * @ref: held by the file's context table and by every job.
 * @ndev: the device.
 * @nfile: owning file; valid while the context is in its table and for
 *	accounting of jobs that have not signalled (the file waits for them).
 * @id: id in the file (1..DRM_NPU_MAX_CTX_PER_FILE).
 * @gid: device-wide id (npu_device.contexts, debugfs).
 * @pid: creator, for debugfs.
 * @vm: the context's device page tables.
 * @entity: scheduler entity on @queue's scheduler.
 * @queue: hardware queue.
 * @priority: enum drm_npu_priority.
 * @nclusters: partition size.
 * @cluster_mask: physical clusters of the partition.
 * @cluster_map: logical -> physical cluster.
 * @sram: window of the CCB SRAM (allocated from npu_device.sram_mm).
 * @released: partition and SRAM returned (under npu_device.ctx_lock).
 * @dead: destroyed: jobs not yet started are cancelled.
 * @banned: a job faulted or hung; new submits fail with -EIO.
 * @last_error: errno (negative) of the job that banned it.
 * @jobs_submitted: counters for DRM_IOCTL_NPU_CTX_QUERY.
 * @jobs_completed: see @jobs_submitted.
 * @jobs_failed: see @jobs_submitted.
 * @device_cycles: simulated cycles of the completed jobs.
 * @recent_lock: protects @recent.
 * @recent: cycles of the last DRM_NPU_CTX_RECENT_JOBS completed jobs, by
 *	    scheduler seqno modulo the size (DRM_IOCTL_NPU_CTX_QUERY).
 * @submit_lock: keeps arm and push of this context's jobs in one order.
 * @fence_lock: protects @last_fence and @last_run_fence.
 * @last_fence: finished fence of the newest job (destroy waits for it).
 * @last_run_fence: finished fence of the newest job written to the ring.
 *	A job refused at run_job signals at once, before the jobs ahead of
 *	it on the hardware, so @last_fence alone does not cover those:
 *	destroy waits for this one too.
 * @scrub_flags: NPU_CTX_SCRUB_* bits (npu_scrub.c).
 */
struct npu_ctx {
	struct kref ref;
	struct npu_device *ndev;
	struct npu_file *nfile;
	u32 id;
	u32 gid;
	pid_t pid;
	struct npu_vm *vm;
	struct drm_sched_entity entity;
	struct npu_queue *queue;
	u32 priority;
	u32 nclusters;
	u32 cluster_mask;
	u8 cluster_map[NPU_HW_MAX_CLUSTERS];
	struct drm_mm_node sram;
	bool released;
	atomic_t dead;
	atomic_t banned;
	atomic_t last_error;
	atomic64_t jobs_submitted;
	atomic64_t jobs_completed;
	atomic64_t jobs_failed;
	atomic64_t device_cycles;
	spinlock_t recent_lock;		/* protects recent[] */
	struct {
		u64 seqno;
		u64 cycles;
	} recent[DRM_NPU_CTX_RECENT_JOBS];
	struct mutex submit_lock;	/* orders arm + push of jobs */
	spinlock_t fence_lock;		/* protects last_fence, last_run_fence */
	struct dma_fence *last_fence;
	struct dma_fence *last_run_fence;
	unsigned long scrub_flags;
};

/* SRAM window of an @n-cluster partition: in proportion, in 4 KiB banks. */
static inline u32 npu_ctx_sram_bytes(const struct drm_npu_device_info *info,
				     u32 n)
{
	return round_down((u64)info->sram_size * n / info->healthy_clusters,
			  NPU_M100_SRAM_INTERLEAVE);
}

struct npu_ctx *npu_ctx_lookup(struct npu_file *nfile, u32 id);
void npu_ctx_put(struct npu_ctx *ctx);
void npu_ctx_ban(struct npu_ctx *ctx, int error);
void npu_ctx_destroy_all(struct npu_file *nfile);

int npu_ioctl_ctx_create(struct drm_device *dev, void *data,
			 struct drm_file *file);
int npu_ioctl_ctx_destroy(struct drm_device *dev, void *data,
			  struct drm_file *file);
int npu_ioctl_ctx_query(struct drm_device *dev, void *data,
			struct drm_file *file);

#if IS_ENABLED(CONFIG_KUNIT)
/* The partition allocator, visible to kernel/tests/npu_ctx_test.c. */
int npu_ctx_reserve(struct npu_ctx *ctx, u32 n);
void npu_ctx_release_partition(struct npu_ctx *ctx);
#endif

#endif /* NPU_CTX_H */
