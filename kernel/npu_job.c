// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Jobs: submission, one DRM scheduler per hardware queue, completion,
 * timeouts and device-wide recovery.
 *
 * A job's program runs as one ring descriptor.  The device writes a
 * completion record per ring slot (seqno last) and raises the queue's
 * interrupt; npu_queue_process() walks the queue's in-flight jobs in order
 * and signals their hardware fences.
 *
 * Recovery follows the scheduler's documented multi-queue flow: every
 * scheduler's timeout work runs on one ordered workqueue; a reset stops all
 * four schedulers, resets the device, fails only the guilty job and
 * resubmits the innocent ones.
 *
 * Copyright (c) 2026 The M100 NPU authors
 */

#include <kunit/visibility.h>
#include <linux/dma-fence-chain.h>
#include <linux/dma-resv.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/pm_runtime.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>

#include "npu_ctx.h"
#include "npu_device.h"
#include "npu_file.h"
#include "npu_gem.h"
#include "npu_job.h"
#include "npu_mmu.h"
#include "npu_scrub.h"

static unsigned int npu_job_timeout_ms = 2000;
module_param_named(job_timeout_ms, npu_job_timeout_ms, uint, 0444);
MODULE_PARM_DESC(job_timeout_ms,
		 "watchdog: a queue that makes no progress for this long is reset (default 2000)");

static const char * const npu_queue_names[NPU_HW_NUM_QUEUES] = {
	"npu-q0", "npu-q1", "npu-q2", "npu-q3",
};

static inline struct npu_job *to_npu_job(struct drm_sched_job *sched_job)
{
	return container_of(sched_job, struct npu_job, base);
}

static const char *npu_fence_driver_name(struct dma_fence *fence)
{
	return NPU_DRIVER_NAME;
}

static const char *npu_fence_timeline_name(struct dma_fence *fence)
{
	return "npu-queue";
}

static const struct dma_fence_ops npu_fence_ops = {
	.get_driver_name = npu_fence_driver_name,
	.get_timeline_name = npu_fence_timeline_name,
};

/* An already signalled hardware fence carrying @error (or success). */
static struct dma_fence *npu_fence_signalled(struct npu_queue *q, int error)
{
	struct dma_fence *fence = kzalloc(sizeof(*fence), GFP_KERNEL);
	unsigned long flags;

	if (!fence)
		return ERR_PTR(-ENOMEM);
	spin_lock_irqsave(&q->lock, flags);
	dma_fence_init(fence, &npu_fence_ops, &q->lock, q->fence_context,
		       ++q->hw_seqno);
	if (error)
		dma_fence_set_error(fence, error);
	dma_fence_signal_locked(fence);
	spin_unlock_irqrestore(&q->lock, flags);
	return fence;
}

VISIBLE_IF_KUNIT int npu_status_errno(u32 status)
{
	switch (status) {
	case NPU_TASK_OK:
		return 0;
	case NPU_TASK_MMU_FAULT:
		return -EFAULT;
	case NPU_TASK_TIMEOUT:
		return -ETIMEDOUT;
	case NPU_TASK_ABORTED:
		return -ECANCELED;
	case NPU_TASK_INDEX_FAULT:
		return -ERANGE;
	case NPU_TASK_ILLEGAL_INSN:
	case NPU_TASK_SYNC_DEADLOCK:
	case NPU_TASK_DEFECTIVE_CLUSTER:
	case NPU_TASK_BAD_DESCRIPTOR:
		return -EINVAL;
	default:
		return -EIO;
	}
}

/*
 * Take the job off the hardware and signal its fence (q->lock held).  The
 * signal may free the job at once (free_job on another CPU): it is the
 * last thing that touches it.
 */
static void npu_job_signal_locked(struct npu_job *job, int error)
{
	struct npu_device *ndev = job->ctx->ndev;
	struct dma_fence *fence = job->hw_fence;

	job->hw_fence = NULL;
	list_del_init(&job->link);
	if (error)
		dma_fence_set_error(fence, error);
	dma_fence_signal_locked(fence);
	dma_fence_put(fence);
	/* The reference run_job took: the last one lets the device suspend. */
	npu_pm_put(ndev);
}

/* Account a finished job and signal its hardware fence (q->lock held). */
static void npu_job_done_locked(struct npu_queue *q, struct npu_job *job,
				int error, u64 cycles)
{
	struct npu_device *ndev = q->ndev;
	struct npu_ctx *ctx = job->ctx;
	u64 now = ktime_get_ns();
	u64 busy = now - max(job->start_ns, q->last_done_ns);
	u64 seqno = job->base.s_fence->finished.seqno;
	unsigned long c, mask = ctx->cluster_mask, flags;

	q->last_done_ns = now;
	/* The file outlives this: it waits for its contexts' fences. */
	for_each_set_bit(c, &mask, NPU_HW_MAX_CLUSTERS) {
		atomic64_add(busy, &ndev->stats.cluster_busy_ns[c]);
		atomic64_add(busy, &ctx->nfile->busy_ns[c]);
		atomic64_add(cycles, &ctx->nfile->cycles[c]);
	}
	atomic64_add(cycles, &ndev->stats.device_cycles);
	atomic64_add(cycles, &ctx->device_cycles);
	spin_lock_irqsave(&ctx->recent_lock, flags);
	ctx->recent[seqno % DRM_NPU_CTX_RECENT_JOBS].seqno = seqno;
	ctx->recent[seqno % DRM_NPU_CTX_RECENT_JOBS].cycles = cycles;
	spin_unlock_irqrestore(&ctx->recent_lock, flags);
	atomic64_inc(&ndev->stats.jobs_completed);
	atomic64_inc(&ctx->jobs_completed);
	if (error) {
		atomic64_inc(&ndev->stats.jobs_failed);
		atomic64_inc(&ctx->jobs_failed);
		if (error == -EFAULT) {
			atomic64_inc(&ndev->stats.mmu_faults);
			npu_ctx_ban(ctx, error);
		} else if (error == -ETIMEDOUT) {
			atomic64_inc(&ndev->stats.timeouts);
			npu_ctx_ban(ctx, error);
		}
		dma_fence_set_error(job->hw_fence, error);
	}
	job->hw_done = true;
	job->hw_error = error;
	npu_job_signal_locked(job, 0);
}

/**
 * npu_queue_process - complete the jobs whose records the device wrote
 * @q: the queue.
 *
 * Called from the interrupt handler, the timeout work and recovery.
 */
void npu_queue_process(struct npu_queue *q)
{
	struct npu_job *job, *tmp;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	list_for_each_entry_safe(job, tmp, &q->inflight, link) {
		struct npu_hw_completion *c = &q->comp[job->slot];
		int scrub_err = npu_scrub_poll_locked(q, job);

		if (READ_ONCE(c->seqno) != job->hw_seqno)
			break;
		dma_rmb();	/* the record before its seqno */
		npu_job_done_locked(q, job,
				    scrub_err ?: npu_status_errno(c->status),
				    c->cycles);
	}
	spin_unlock_irqrestore(&q->lock, flags);
}

static void npu_job_fill_desc(struct npu_job *job, struct npu_hw_task *d,
			      u64 seqno, dma_addr_t comp, bool bad_pt)
{
	struct npu_ctx *ctx = job->ctx;

	memset(d, 0, sizeof(*d));
	d->magic = NPU_TASK_MAGIC;
	d->flags = NPU_TASK_F_IRQ;
	d->seqno = seqno;
	d->fence_addr = comp;
	d->pt_base = bad_pt ? ctx->ndev->null_pt_dma : ctx->vm->root.dma;
	d->prog_va = job->prog_va;
	d->prog_size = job->prog_size;
	d->asid = ctx->vm->asid;
	d->nclusters = ctx->nclusters;
	memcpy(d->cluster_map, ctx->cluster_map, ctx->nclusters);
	d->timeout_cycles = job->timeout_cycles;
	d->sram_base = ctx->sram.start;
	d->sram_size = ctx->sram.size;
}

static struct dma_fence *npu_run_job(struct drm_sched_job *sched_job)
{
	struct npu_job *job = to_npu_job(sched_job);
	struct npu_ctx *ctx = job->ctx;
	struct npu_queue *q = ctx->queue;
	struct npu_device *ndev = q->ndev;
	struct dma_fence *fence;
	unsigned long flags;
	bool bad_pt;
	int err = 0, idx;
	u32 slot;

	/* Resubmitted after a reset: the guilty job and finished jobs do not run again. */
	if (job->guilty_error)
		return npu_fence_signalled(q, job->guilty_error);
	if (job->hw_done)
		return npu_fence_signalled(q, job->hw_error);
	if (atomic_read(&ctx->dead) || atomic_read(&ctx->banned))
		err = -ECANCELED;
	else if (sched_job->s_fence->finished.error)
		err = sched_job->s_fence->finished.error;
	if (err)
		return npu_fence_signalled(q, err);
	if (!drm_dev_enter(&ndev->drm, &idx))
		return npu_fence_signalled(q, -ENODEV);

	fence = kzalloc(sizeof(*fence), GFP_KERNEL);
	if (!fence) {
		drm_dev_exit(idx);
		return ERR_PTR(-ENOMEM);
	}
	/* Held while the job is in flight: dropped in npu_job_signal_locked. */
	err = npu_pm_get(ndev);
	if (err) {
		kfree(fence);
		drm_dev_exit(idx);
		return npu_fence_signalled(q, err);
	}
	bad_pt = npu_fault_hit(&ndev->inject_fault);

	spin_lock_irqsave(&q->lock, flags);
	/* Another context's data in the partition: a scrub runs first. */
	npu_scrub_write_locked(q, job);
	slot = q->tail;
	dma_fence_init(fence, &npu_fence_ops, &q->lock, q->fence_context,
		       ++q->hw_seqno);
	memset(&q->comp[slot], 0, sizeof(q->comp[slot]));
	npu_job_fill_desc(job, &q->ring[slot], q->hw_seqno,
			  q->comp_dma + slot * sizeof(struct npu_hw_completion),
			  bad_pt);
	job->hw_fence = dma_fence_get(fence);
	job->hw_seqno = q->hw_seqno;
	job->slot = slot;
	job->start_ns = ktime_get_ns();
	list_add_tail(&job->link, &q->inflight);
	q->tail = (slot + 1) % NPU_RING_ENTRIES;
	if (npu_fault_hit(&ndev->inject_hang))
		q->hung = true;
	dma_wmb();	/* descriptor before doorbell */
	if (!q->hung)
		npu_wr(ndev, NPU_REG_Q(q->index, NPU_Q_TAIL), q->tail);
	spin_unlock_irqrestore(&q->lock, flags);
	drm_dev_exit(idx);
	return fence;
}

/* Put a timed-out job back where drm_sched_job_timedout() took it from. */
static void npu_job_reinsert(struct drm_sched_job *sched_job)
{
	struct drm_gpu_scheduler *sched = sched_job->sched;

	spin_lock(&sched->job_list_lock);
	list_add(&sched_job->list, &sched->pending_list);
	spin_unlock(&sched->job_list_lock);
}

static enum drm_gpu_sched_stat npu_timedout_job(struct drm_sched_job *sched_job)
{
	struct npu_job *job = to_npu_job(sched_job);
	struct npu_queue *q = job->ctx->queue;
	struct npu_device *ndev = q->ndev;
	u64 tasks;
	int idx;

	if (!drm_dev_enter(&ndev->drm, &idx))
		return DRM_GPU_SCHED_STAT_ENODEV;

	/* A late interrupt is not a hang. */
	npu_queue_process(q);
	if (job->hw_done)
		goto no_reset;
	/* The queue still completes work: give it another period. */
	tasks = npu_rd64(ndev, NPU_REG_Q(q->index, NPU_Q_TASKS_LO));
	if (tasks != q->progress && !q->hung) {
		q->progress = tasks;
		goto no_reset;
	}

	drm_warn(&ndev->drm, "queue %u: no progress for %u ms (context %u): resetting the device\n",
		 q->index, npu_job_timeout_ms, job->ctx->id);
	npu_recover(ndev, sched_job);
	drm_dev_exit(idx);
	return DRM_GPU_SCHED_STAT_NOMINAL;

no_reset:
	npu_job_reinsert(sched_job);
	drm_dev_exit(idx);
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

/**
 * npu_queue_cancel - forget the jobs on a queue after a device reset
 * @q: the queue.
 * @error: error for their hardware fences.
 *
 * The schedulers are stopped (their callbacks removed) or the device is
 * gone, so nothing waits on these fences any more.
 */
void npu_queue_cancel(struct npu_queue *q, int error)
{
	struct npu_job *job, *tmp;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	list_for_each_entry_safe(job, tmp, &q->inflight, link)
		npu_job_signal_locked(job, error);
	q->tail = 0;
	q->hung = false;
	q->progress = 0;
	spin_unlock_irqrestore(&q->lock, flags);
}

/**
 * npu_recover - reset the device and restart every queue
 * @ndev: the device.
 * @bad: the job that hung (its fence fails with -ETIMEDOUT), or NULL.
 *
 * Must run on npu_device.reset_wq, like the timeout handlers.
 *
 * Return: 0, or the error of the last failed reset attempt.
 */
int npu_recover(struct npu_device *ndev, struct drm_sched_job *bad)
{
	unsigned int i;
	int ret = 0;

	/* Awake already (a job in flight, or debugfs resumed it): stay so. */
	pm_runtime_get_noresume(ndev->drm.dev);
	mutex_lock(&ndev->reset_lock);
	for (i = 0; i < NPU_HW_NUM_QUEUES; i++) {
		struct drm_gpu_scheduler *sched = &ndev->queues[i].sched;

		drm_sched_stop(sched, bad && bad->sched == sched ? bad : NULL);
	}
	/* Whatever finished before the reset keeps its result. */
	for (i = 0; i < NPU_HW_NUM_QUEUES; i++)
		npu_queue_process(&ndev->queues[i]);
	if (bad) {
		struct npu_job *job = to_npu_job(bad);

		if (!job->hw_done) {
			job->guilty_error = -ETIMEDOUT;
			npu_ctx_ban(job->ctx, -ETIMEDOUT);
			atomic64_inc(&ndev->stats.timeouts);
			atomic64_inc(&ndev->stats.jobs_completed);
			atomic64_inc(&ndev->stats.jobs_failed);
			atomic64_inc(&job->ctx->jobs_completed);
			atomic64_inc(&job->ctx->jobs_failed);
		}
	}

	for (i = 0; i < 3; i++) {
		ret = npu_hw_reset(ndev);
		if (!ret)
			break;
		drm_warn(&ndev->drm, "reset attempt %u failed: %d\n", i + 1, ret);
	}
	atomic64_inc(&ndev->stats.resets);

	/* Jobs the reset interrupted run again from the start. */
	for (i = 0; i < NPU_HW_NUM_QUEUES; i++)
		npu_queue_cancel(&ndev->queues[i], -ECANCELED);
	npu_hw_start_queues(ndev);

	for (i = 0; i < NPU_HW_NUM_QUEUES; i++)
		drm_sched_resubmit_jobs(&ndev->queues[i].sched);
	for (i = 0; i < NPU_HW_NUM_QUEUES; i++)
		drm_sched_start(&ndev->queues[i].sched);
	mutex_unlock(&ndev->reset_lock);
	npu_pm_put(ndev);
	return ret;
}

static void npu_job_release(struct npu_job *job)
{
	for (u32 i = 0; i < job->bo_count; i++)
		drm_gem_object_put(job->bos[i]);
	kvfree(job->bos);
	kvfree(job->bo_flags);
	npu_ctx_put(job->ctx);
	kfree(job);
}

static void npu_free_job(struct drm_sched_job *sched_job)
{
	struct npu_job *job = to_npu_job(sched_job);

	WARN_ON(job->hw_fence);
	drm_sched_job_cleanup(sched_job);
	npu_job_release(job);
}

static const struct drm_sched_backend_ops npu_sched_ops = {
	.run_job = npu_run_job,
	.timedout_job = npu_timedout_job,
	.free_job = npu_free_job,
};

int npu_sched_init(struct npu_device *ndev)
{
	int ret;

	ndev->reset_wq = alloc_ordered_workqueue("npu-reset", 0);
	if (!ndev->reset_wq)
		return -ENOMEM;
	for (unsigned int i = 0; i < NPU_HW_NUM_QUEUES; i++) {
		struct npu_queue *q = &ndev->queues[i];
		const struct drm_sched_init_args args = {
			.ops = &npu_sched_ops,
			.timeout_wq = ndev->reset_wq,
			.num_rqs = DRM_SCHED_PRIORITY_COUNT,
			.credit_limit = NPU_JOBS_IN_FLIGHT,
			.timeout = msecs_to_jiffies(npu_job_timeout_ms),
			.name = npu_queue_names[i],
			.dev = ndev->drm.dev,
		};

		q->fence_context = dma_fence_context_alloc(1);
		ret = drm_sched_init(&q->sched, &args);
		if (ret) {
			while (i--)
				drm_sched_fini(&ndev->queues[i].sched);
			destroy_workqueue(ndev->reset_wq);
			ndev->reset_wq = NULL;
			return ret;
		}
	}
	return 0;
}

void npu_sched_fini(struct npu_device *ndev)
{
	if (!ndev->reset_wq)
		return;
	for (unsigned int i = 0; i < NPU_HW_NUM_QUEUES; i++)
		drm_sched_fini(&ndev->queues[i].sched);
	destroy_workqueue(ndev->reset_wq);
	ndev->reset_wq = NULL;
}

/* ---- DRM_IOCTL_NPU_SUBMIT ---- */

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
	int ret = 0;

	mutex_lock(&nfile->lock);
	for (u32 i = 0; i < job->bo_count; i++) {
		struct npu_bo *bo = to_npu_bo(job->bos[i]);
		struct npu_bo_binding *b;
		struct sg_table *sgt;

		mutex_lock(&bo->lock);
		b = npu_bo_binding_find(bo, nfile);
		mutex_unlock(&bo->lock);
		if (!b) {
			ret = -ENOENT;	/* the handle was closed meanwhile */
			break;
		}
		if (i == 0)
			job->prog_va = b->va.start + args->cmd_offset;
		if (test_bit(ctx->id - 1, &b->ctx_mapped))
			continue;
		sgt = drm_gem_shmem_get_pages_sgt(&bo->base);
		if (IS_ERR(sgt)) {
			ret = PTR_ERR(sgt);
			break;
		}
		ret = npu_vm_map(ctx->vm, b->va.start, sgt, bo->base.base.size,
				 !(bo->flags & DRM_NPU_BO_DEVICE_RO));
		if (ret)
			break;
		set_bit(ctx->id - 1, &b->ctx_mapped);
	}
	mutex_unlock(&nfile->lock);
	return ret;
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

VISIBLE_IF_KUNIT int npu_submit_check(const struct drm_npu_submit *args)
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

	mutex_lock(&ctx->submit_lock);
	drm_sched_job_arm(&job->base);
	finished = dma_fence_get(&job->base.s_fence->finished);
	/*
	 * Every BO the job uses carries its fence until it is done: a write
	 * fence on what it writes, a read fence on what it only reads.
	 */
	for (u32 i = 0; i < job->bo_count; i++)
		dma_resv_add_fence(job->bos[i]->resv, finished,
				   job->bo_flags[i] & DRM_NPU_BO_REF_WRITE ?
				   DMA_RESV_USAGE_WRITE : DMA_RESV_USAGE_READ);
	drm_gem_unlock_reservations(job->bos, job->bo_count, &acquire);
	spin_lock(&ctx->fence_lock);
	dma_fence_put(ctx->last_fence);
	ctx->last_fence = dma_fence_get(finished);
	spin_unlock(&ctx->fence_lock);
	atomic64_inc(&ctx->jobs_submitted);
	atomic64_inc(&ndev->stats.jobs_submitted);
	args->seqno = finished->seqno;
	/* From here on the scheduler owns the job. */
	drm_sched_entity_push_job(&job->base);
	mutex_unlock(&ctx->submit_lock);

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
