// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * DRM_IOCTL_NPU_SUBMIT: argument checks, BO lookup and mapping, input and
 * output syncobjs, and the hand-over of the job to its context's
 * scheduler entity (npu_queue.c runs it).
 *
 * Copyright (c) 2026 The M100 NPU authors
 */

#include <linux/cleanup.h>
#include <linux/dma-fence-chain.h>
#include <linux/dma-resv.h>
#include <linux/lockdep.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_syncobj.h>

#include "npu_ctx.h"
#include "npu_device.h"
#include "npu_file.h"
#include "npu_gem.h"
#include "npu_job.h"
#include "npu_mmu.h"
#include "npu_recover.h"
#include "npu_submit.h"
#include "npu_trace.h"

/**
 * npu_job_release - drop what a job holds and free it
 * @job: a job that never reached the scheduler, or one the scheduler is
 *	done with (free_job).
 */
void npu_job_release(struct npu_job *job)
{
	for (u32 i = 0; i < job->bo_count; i++)
		drm_gem_object_put(job->bos[i]);
	kvfree(job->bos);
	kvfree(job->bo_flags);
	npu_ctx_put(job->ctx);
	kfree(job);
}

/* Add @obj (a reference) once; a BO listed twice gets both usages. */
static void npu_job_add_bo(struct npu_job *job, struct drm_gem_object *obj,
			   u32 flags)
{
	for (u32 i = 0; i < job->bo_count; i++) {
		if (job->bos[i] == obj) {
			job->bo_flags[i] |= flags;
			drm_gem_object_put(obj);
			return;
		}
	}
	job->bo_flags[job->bo_count] = flags;
	job->bos[job->bo_count++] = obj;
}

static int npu_job_lookup_bos(struct npu_job *job, struct drm_file *file,
			      const struct drm_npu_submit *args)
{
	struct drm_npu_bo_ref *refs;
	struct drm_gem_object *cmd;
	int ret = 0;

	job->bos = kvcalloc(args->bo_count + 1, sizeof(*job->bos), GFP_KERNEL);
	job->bo_flags = kvcalloc(args->bo_count + 1, sizeof(*job->bo_flags),
				 GFP_KERNEL);
	if (!job->bos || !job->bo_flags)
		return -ENOMEM;

	cmd = drm_gem_object_lookup(file, args->cmd_handle);
	if (!cmd)
		return -ENOENT;
	job->bo_flags[job->bo_count] = DRM_NPU_BO_REF_READ;
	job->bos[job->bo_count++] = cmd;
	if ((u64)args->cmd_offset + args->cmd_size > cmd->size)
		return -EINVAL;

	if (!args->bo_count)
		return 0;
	refs = kvmalloc_array(args->bo_count, sizeof(*refs), GFP_KERNEL);
	if (!refs)
		return -ENOMEM;
	if (copy_from_user(refs, u64_to_user_ptr(args->bos),
			   (size_t)args->bo_count * sizeof(*refs))) {
		ret = -EFAULT;
		goto out;
	}
	for (u32 i = 0; i < args->bo_count; i++) {
		struct drm_gem_object *obj;
		u32 f = refs[i].flags;

		if (!f || f & ~(DRM_NPU_BO_REF_READ | DRM_NPU_BO_REF_WRITE)) {
			ret = -EINVAL;
			goto out;
		}
		obj = drm_gem_object_lookup(file, refs[i].handle);
		if (!obj) {
			ret = -ENOENT;
			goto out;
		}
		if (f & DRM_NPU_BO_REF_WRITE &&
		    to_npu_bo(obj)->flags & DRM_NPU_BO_DEVICE_RO) {
			drm_gem_object_put(obj);
			ret = -EACCES;
			goto out;
		}
		npu_job_add_bo(job, obj, f);
	}
out:
	kvfree(refs);
	return ret;
}

/* Map every BO of the job into its context, on first use. */
static int npu_job_map_bos(struct npu_job *job, struct npu_file *nfile,
			   const struct drm_npu_submit *args)
{
	struct npu_ctx *ctx = job->ctx;
	int ret;

	guard(mutex)(&nfile->lock);
	for (u32 i = 0; i < job->bo_count; i++) {
		struct npu_bo *bo = to_npu_bo(job->bos[i]);
		struct npu_bo_binding *b;
		struct sg_table *sgt;

		scoped_guard(mutex, &bo->lock)
			b = npu_bo_binding_find(bo, nfile);
		if (!b)
			return -ENOENT;	/* the handle was closed meanwhile */
		if (i == 0)
			job->prog_va = b->va.start + args->cmd_offset;
		if (test_bit(ctx->id - 1, &b->ctx_mapped))
			continue;
		sgt = drm_gem_shmem_get_pages_sgt(&bo->base);
		if (IS_ERR(sgt))
			return PTR_ERR(sgt);
		ret = npu_vm_map(ctx->vm, b->va.start, sgt, bo->base.base.size,
				 !(bo->flags & DRM_NPU_BO_DEVICE_RO));
		if (ret)
			return ret;
		set_bit(ctx->id - 1, &b->ctx_mapped);
	}
	return 0;
}

/*
 * Implicit fences for a BO shared through dma-buf (exported, or imported
 * from another file or driver): the job waits for the writers of what it
 * reads, and for every user of what it writes.  Private BOs only follow
 * the in_syncs.  The BO's reservation is held.
 */
static int npu_job_add_implicit_deps(struct npu_job *job, u32 i)
{
	struct drm_gem_object *obj = job->bos[i];

	dma_resv_assert_held(obj->resv);
	if (!obj->import_attach && !READ_ONCE(obj->dma_buf))
		return 0;
	return drm_sched_job_add_implicit_dependencies(&job->base, obj,
						       job->bo_flags[i] &
						       DRM_NPU_BO_REF_WRITE);
}

static int npu_job_add_in_syncs(struct npu_job *job, struct drm_file *file,
				const struct drm_npu_submit *args)
{
	struct drm_npu_sync *syncs;
	int ret = 0;

	if (!args->in_sync_count)
		return 0;
	syncs = kvmalloc_array(args->in_sync_count, sizeof(*syncs), GFP_KERNEL);
	if (!syncs)
		return -ENOMEM;
	if (copy_from_user(syncs, u64_to_user_ptr(args->in_syncs),
			   (size_t)args->in_sync_count * sizeof(*syncs))) {
		ret = -EFAULT;
		goto out;
	}
	for (u32 i = 0; i < args->in_sync_count; i++) {
		struct dma_fence *fence;

		if (syncs[i].flags) {
			ret = -EINVAL;
			goto out;
		}
		ret = drm_syncobj_find_fence(file, syncs[i].handle,
					     syncs[i].point, 0, &fence);
		if (ret)
			goto out;
		ret = drm_sched_job_add_dependency(&job->base, fence);
		if (ret)
			goto out;
	}
out:
	kvfree(syncs);
	return ret;
}

/**
 * npu_submit_check - the checks on SUBMIT's arguments that need no lookup
 * @args: the ioctl arguments.
 *
 * Return: 0, or -EINVAL.
 */
int npu_submit_check(const struct drm_npu_submit *args)
{
	if (args->flags || args->pad)
		return -EINVAL;
	if (args->cmd_offset % 64 || args->cmd_size < sizeof(struct npu_hw_prog) ||
	    args->cmd_size > DRM_NPU_MAX_PROG_SIZE)
		return -EINVAL;
	if (args->bo_count > DRM_NPU_MAX_SUBMIT_BOS ||
	    args->in_sync_count > DRM_NPU_MAX_SUBMIT_SYNCS ||
	    args->timeout_ms > DRM_NPU_MAX_TIMEOUT_MS)
		return -EINVAL;
	if (!args->out_sync && args->out_point)
		return -EINVAL;
	return 0;
}

int npu_ioctl_submit(struct drm_device *dev, void *data,
		     struct drm_file *file)
{
	struct npu_device *ndev = to_npu_device(dev);
	struct npu_file *nfile = file->driver_priv;
	struct drm_npu_submit *args = data;
	struct dma_fence_chain *chain = NULL;
	struct drm_syncobj *out = NULL;
	struct ww_acquire_ctx acquire;
	struct dma_fence *finished;
	struct npu_ctx *ctx;
	struct npu_job *job;
	u64 ms;
	int ret;

	ret = npu_submit_check(args);
	if (ret)
		return ret;
	ctx = npu_ctx_lookup(nfile, args->ctx_id);
	if (!ctx)
		return -ENOENT;
	if (atomic_read(&ctx->banned)) {
		npu_ctx_put(ctx);
		return -EIO;
	}
	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job) {
		npu_ctx_put(ctx);
		return -ENOMEM;
	}
	job->ctx = ctx;
	INIT_LIST_HEAD(&job->link);
	job->prog_size = args->cmd_size;
	job->cmd_offset = args->cmd_offset;
	ms = args->timeout_ms ? args->timeout_ms : npu_job_timeout_ms;
	job->timeout_cycles = min_t(u64, ms * 1000 * ndev->info.clock_mhz,
				    NPU_TASK_MAX_TIMEOUT);

	ret = npu_job_lookup_bos(job, file, args);
	if (ret)
		goto err_release;
	ret = npu_job_map_bos(job, nfile, args);
	if (ret)
		goto err_release;

	ret = drm_sched_job_init(&job->base, &ctx->entity, 1, file,
				 file->client_id);
	if (ret)
		goto err_release;
	ret = npu_job_add_in_syncs(job, file, args);
	if (ret)
		goto err_cleanup;
	if (args->out_sync) {
		out = drm_syncobj_find(file, args->out_sync);
		if (!out) {
			ret = -ENOENT;
			goto err_cleanup;
		}
		if (args->out_point) {
			struct dma_fence *last = drm_syncobj_fence_get(out);
			bool ordered = !last || !to_dma_fence_chain(last) ||
				       args->out_point > last->seqno;

			dma_fence_put(last);
			if (!ordered) {
				ret = -EINVAL;
				goto err_cleanup;
			}
			chain = dma_fence_chain_alloc();
			if (!chain) {
				ret = -ENOMEM;
				goto err_cleanup;
			}
		}
	}

	ret = drm_gem_lock_reservations(job->bos, job->bo_count, &acquire);
	if (ret)
		goto err_cleanup;
	for (u32 i = 0; i < job->bo_count; i++) {
		ret = dma_resv_reserve_fences(job->bos[i]->resv, 1);
		if (!ret)
			ret = npu_job_add_implicit_deps(job, i);
		if (ret) {
			drm_gem_unlock_reservations(job->bos, job->bo_count,
						    &acquire);
			goto err_cleanup;
		}
	}

	scoped_guard(mutex, &ctx->submit_lock) {
		drm_sched_job_arm(&job->base);
		finished = dma_fence_get(&job->base.s_fence->finished);
		/*
		 * Every BO the job uses carries its fence until it is done: a
		 * write fence on what it writes, a read fence on what it only
		 * reads.
		 */
		for (u32 i = 0; i < job->bo_count; i++)
			dma_resv_add_fence(job->bos[i]->resv, finished,
					   job->bo_flags[i] & DRM_NPU_BO_REF_WRITE ?
					   DMA_RESV_USAGE_WRITE : DMA_RESV_USAGE_READ);
		drm_gem_unlock_reservations(job->bos, job->bo_count, &acquire);
		scoped_guard(spinlock, &ctx->fence_lock) {
			dma_fence_put(ctx->last_fence);
			ctx->last_fence = dma_fence_get(finished);
		}
		atomic64_inc(&ctx->jobs_submitted);
		atomic64_inc(&ndev->stats.jobs_submitted);
		args->seqno = finished->seqno;
		trace_npu_job_submit(job);
		/* From here on the scheduler owns the job. */
		drm_sched_entity_push_job(&job->base);
	}

	if (out) {
		if (chain)
			drm_syncobj_add_point(out, chain, finished,
					      args->out_point);
		else
			drm_syncobj_replace_fence(out, finished);
		drm_syncobj_put(out);
	}
	dma_fence_put(finished);
	return 0;

err_cleanup:
	dma_fence_chain_free(chain);
	if (out)
		drm_syncobj_put(out);
	drm_sched_job_cleanup(&job->base);
err_release:
	npu_job_release(job);
	return ret;
}
