// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Contexts: a partition of healthy clusters, an SRAM window, a device
 * address space and a scheduler entity on one hardware queue.
 *
 * Copyright (c) 2026 The M100 NPU authors
 */

#include <kunit/visibility.h>
#include <linux/bitops.h>
#include <linux/capability.h>
#include <linux/dma-fence.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>

#include "npu/npu_hw_partition.h"
#include "npu_ctx.h"
#include "npu_device.h"
#include "npu_file.h"
#include "npu_gem.h"
#include "npu_mmu.h"
#include "npu_scrub.h"

/* How long destroying a context waits for its last job. */
#define NPU_CTX_DRAIN_TIMEOUT	(30 * HZ)

static void npu_ctx_release(struct kref *ref)
{
	struct npu_ctx *ctx = container_of(ref, struct npu_ctx, ref);

	npu_vm_destroy(ctx->vm);
	dma_fence_put(ctx->last_fence);
	dma_fence_put(ctx->last_run_fence);
	mutex_destroy(&ctx->submit_lock);
	kfree(ctx);
}

void npu_ctx_put(struct npu_ctx *ctx)
{
	kref_put(&ctx->ref, npu_ctx_release);
}

struct npu_ctx *npu_ctx_lookup(struct npu_file *nfile, u32 id)
{
	struct npu_ctx *ctx;

	xa_lock(&nfile->contexts);
	ctx = xa_load(&nfile->contexts, id);
	if (ctx)
		kref_get(&ctx->ref);
	xa_unlock(&nfile->contexts);
	return ctx;
}

void npu_ctx_ban(struct npu_ctx *ctx, int error)
{
	if (!atomic_xchg(&ctx->banned, 1))
		atomic_set(&ctx->last_error, error);
}

VISIBLE_IF_KUNIT void npu_ctx_release_partition(struct npu_ctx *ctx)
{
	struct npu_device *ndev = ctx->ndev;

	mutex_lock(&ndev->ctx_lock);
	if (!ctx->released) {
		npu_scrub_release(ctx);
		ndev->free_clusters |= ctx->cluster_mask;
		if (drm_mm_node_allocated(&ctx->sram))
			drm_mm_remove_node(&ctx->sram);
		ctx->queue->contexts--;
		xa_erase(&ndev->contexts, ctx->gid);
		ctx->released = true;
	}
	mutex_unlock(&ndev->ctx_lock);
}

VISIBLE_IF_KUNIT int npu_ctx_reserve(struct npu_ctx *ctx, u32 n)
{
	struct npu_device *ndev = ctx->ndev;
	const struct drm_npu_device_info *info = &ndev->info;
	struct npu_queue *queue = NULL;
	u64 sram;
	int ret;

	mutex_lock(&ndev->ctx_lock);
	ctx->cluster_mask = npu_hw_partition_pick(info->mesh_x, info->mesh_y,
						  info->clusters,
						  info->cluster_pos,
						  ndev->free_clusters, n,
						  ctx->cluster_map);
	if (!ctx->cluster_mask) {
		dev_info_ratelimited(ndev->drm.dev,
				     "partition of %u clusters refused: %u of %u healthy clusters free\n",
				     n, hweight32(ndev->free_clusters),
				     info->healthy_clusters);
		ret = -ENOSPC;
		goto out;
	}
	sram = npu_ctx_sram_bytes(info, n);
	ret = drm_mm_insert_node_generic(&ndev->sram_mm, &ctx->sram, sram,
					 NPU_M100_SRAM_INTERLEAVE, 0,
					 DRM_MM_INSERT_BEST);
	if (ret) {
		dev_info_ratelimited(ndev->drm.dev,
				     "partition of %u clusters refused: no %llu-byte SRAM window free\n",
				     n, sram);
		ret = -ENOSPC;
		goto out;
	}
	ret = xa_alloc(&ndev->contexts, &ctx->gid, ctx, xa_limit_32b,
		       GFP_KERNEL);
	if (ret) {
		drm_mm_remove_node(&ctx->sram);
		goto out;
	}
	/* The least used queue. */
	for (unsigned int q = 0; q < NPU_HW_NUM_QUEUES; q++)
		if (!queue || ndev->queues[q].contexts < queue->contexts)
			queue = &ndev->queues[q];
	queue->contexts++;
	ctx->queue = queue;
	ndev->free_clusters &= ~ctx->cluster_mask;
	ctx->nclusters = n;
	npu_scrub_claim(ctx);
out:
	mutex_unlock(&ndev->ctx_lock);
	return ret;
}

static const enum drm_sched_priority npu_sched_prio[] = {
	[DRM_NPU_PRIORITY_LOW] = DRM_SCHED_PRIORITY_LOW,
	[DRM_NPU_PRIORITY_NORMAL] = DRM_SCHED_PRIORITY_NORMAL,
	[DRM_NPU_PRIORITY_HIGH] = DRM_SCHED_PRIORITY_HIGH,
};

int npu_ioctl_ctx_create(struct drm_device *dev, void *data,
			 struct drm_file *file)
{
	struct npu_device *ndev = to_npu_device(dev);
	struct npu_file *nfile = file->driver_priv;
	struct drm_npu_ctx_create *args = data;
	struct drm_gpu_scheduler *sched;
	struct npu_ctx *ctx;
	u32 id;
	int ret;

	if (args->flags || args->priority > DRM_NPU_PRIORITY_HIGH ||
	    !args->clusters || args->clusters > ndev->info.healthy_clusters)
		return -EINVAL;
	if (args->priority == DRM_NPU_PRIORITY_HIGH && !capable(CAP_SYS_NICE))
		return -EPERM;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	kref_init(&ctx->ref);
	ctx->ndev = ndev;
	ctx->nfile = nfile;
	ctx->pid = task_tgid_nr(current);
	ctx->priority = args->priority;
	spin_lock_init(&ctx->fence_lock);
	spin_lock_init(&ctx->recent_lock);
	mutex_init(&ctx->submit_lock);
	ctx->vm = npu_vm_create(ndev);
	if (IS_ERR(ctx->vm)) {
		ret = PTR_ERR(ctx->vm);
		ctx->vm = NULL;
		goto err_free;
	}
	ret = npu_ctx_reserve(ctx, args->clusters);
	if (ret)
		goto err_free;
	sched = &ctx->queue->sched;
	ret = drm_sched_entity_init(&ctx->entity, npu_sched_prio[args->priority],
				    &sched, 1, NULL);
	if (ret)
		goto err_partition;

	mutex_lock(&nfile->lock);
	ret = xa_alloc(&nfile->contexts, &id, ctx,
		       XA_LIMIT(1, DRM_NPU_MAX_CTX_PER_FILE), GFP_KERNEL);
	if (!ret)
		ctx->id = id;
	mutex_unlock(&nfile->lock);
	if (ret) {
		ret = ret == -EBUSY ? -EMFILE : ret;
		goto err_entity;
	}

	args->ctx_id = ctx->id;
	args->queue = ctx->queue->index;
	args->cluster_mask = ctx->cluster_mask;
	args->sram_base = ctx->sram.start;
	args->sram_size = ctx->sram.size;
	memset(args->cluster_map, 0, sizeof(args->cluster_map));
	memcpy(args->cluster_map, ctx->cluster_map, ctx->nclusters);
	return 0;

err_entity:
	drm_sched_entity_destroy(&ctx->entity);
err_partition:
	npu_ctx_release_partition(ctx);
err_free:
	npu_ctx_put(ctx);
	return ret;
}

/* Tear down a context already removed from its file's table. */
static void npu_ctx_destroy(struct npu_file *nfile, struct npu_ctx *ctx)
{
	struct npu_bo_binding *b;
	struct dma_fence *fences[2];

	/* Jobs not yet on the hardware end with -ECANCELED. */
	atomic_set(&ctx->dead, 1);
	drm_sched_entity_destroy(&ctx->entity);

	/*
	 * No run_job for this entity is in progress or to come.  The newest
	 * job may have been refused and signalled while older ones still run
	 * on the hardware, whose fences signal in ring order: wait for the
	 * newest job written to the ring as well.  The partition is not
	 * handed back, nor is destroy done, while any of them runs.
	 */
	spin_lock(&ctx->fence_lock);
	fences[0] = dma_fence_get(ctx->last_fence);
	fences[1] = dma_fence_get(ctx->last_run_fence);
	spin_unlock(&ctx->fence_lock);
	for (unsigned int i = 0; i < ARRAY_SIZE(fences); i++) {
		if (!fences[i])
			continue;
		/* A hung job ends through the scheduler timeout and reset. */
		dma_fence_wait_timeout(fences[i], false, NPU_CTX_DRAIN_TIMEOUT);
		dma_fence_put(fences[i]);
	}

	/* The id may be reused: no binding may claim a mapping in it. */
	mutex_lock(&nfile->lock);
	list_for_each_entry(b, &nfile->bindings, file_link)
		clear_bit(ctx->id - 1, &b->ctx_mapped);
	mutex_unlock(&nfile->lock);

	npu_ctx_release_partition(ctx);
	npu_ctx_put(ctx);
}

int npu_ioctl_ctx_destroy(struct drm_device *dev, void *data,
			  struct drm_file *file)
{
	struct npu_file *nfile = file->driver_priv;
	struct drm_npu_ctx_destroy *args = data;
	struct npu_ctx *ctx;

	if (args->pad)
		return -EINVAL;
	mutex_lock(&nfile->lock);
	ctx = xa_erase(&nfile->contexts, args->ctx_id);
	mutex_unlock(&nfile->lock);
	if (!ctx)
		return -ENOENT;
	npu_ctx_destroy(nfile, ctx);
	return 0;
}

void npu_ctx_destroy_all(struct npu_file *nfile)
{
	struct npu_ctx *ctx;
	unsigned long id;

	xa_for_each(&nfile->contexts, id, ctx) {
		mutex_lock(&nfile->lock);
		ctx = xa_erase(&nfile->contexts, id);
		mutex_unlock(&nfile->lock);
		if (ctx)
			npu_ctx_destroy(nfile, ctx);
	}
}

int npu_ioctl_ctx_query(struct drm_device *dev, void *data,
			struct drm_file *file)
{
	struct drm_npu_ctx_query *args = data;
	unsigned long flags;
	struct npu_ctx *ctx;

	if (args->pad || args->pad2)
		return -EINVAL;
	ctx = npu_ctx_lookup(file->driver_priv, args->ctx_id);
	if (!ctx)
		return -ENOENT;
	args->state = atomic_read(&ctx->banned) ? DRM_NPU_CTX_BANNED :
						  DRM_NPU_CTX_OK;
	args->jobs_submitted = atomic64_read(&ctx->jobs_submitted);
	args->jobs_completed = atomic64_read(&ctx->jobs_completed);
	args->jobs_failed = atomic64_read(&ctx->jobs_failed);
	args->last_error = -atomic_read(&ctx->last_error);
	args->device_cycles = atomic64_read(&ctx->device_cycles);
	args->job_cycles = 0;
	args->job_found = 0;
	if (args->job_seqno) {
		u32 i = args->job_seqno % DRM_NPU_CTX_RECENT_JOBS;

		spin_lock_irqsave(&ctx->recent_lock, flags);
		if (ctx->recent[i].seqno == args->job_seqno) {
			args->job_cycles = ctx->recent[i].cycles;
			args->job_found = 1;
		}
		spin_unlock_irqrestore(&ctx->recent_lock, flags);
	}
	npu_ctx_put(ctx);
	return 0;
}
