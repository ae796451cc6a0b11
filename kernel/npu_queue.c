// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The queue layer: rings and completion records, one DRM scheduler per
 * hardware queue, descriptor write and doorbell, the completion walk,
 * cancel, and the interrupt handler.
 *
 * A job's program runs as one ring descriptor.  The device writes a
 * completion record per ring slot (seqno last) and raises the queue's
 * interrupt; npu_queue_process() walks the queue's in-flight jobs in order
 * and signals their hardware fences.
 *
 * Copyright (c) 2026 The M100 NPU authors
 */

#include <kunit/visibility.h>
#include <linux/cleanup.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/ktime.h>
#include <linux/lockdep.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_print.h>

#include "npu_coredump.h"
#include "npu_ctx.h"
#include "npu_device.h"
#include "npu_file.h"
#include "npu_job.h"
#include "npu_mmu.h"
#include "npu_queue.h"
#include "npu_recover.h"
#include "npu_scrub.h"
#include "npu_submit.h"
#include "npu_trace.h"

static const char * const npu_queue_names[NPU_HW_NUM_QUEUES] = {
	"npu-q0", "npu-q1", "npu-q2", "npu-q3",
};

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

/**
 * npu_queue_init - allocate every queue's ring and completion records
 * @ndev: the device, identified by npu_hw_init().
 *
 * Return: 0 or -ENOMEM.
 */
int npu_queue_init(struct npu_device *ndev)
{
	struct device *dev = ndev->drm.dev;

	for (unsigned int i = 0; i < NPU_HW_NUM_QUEUES; i++) {
		struct npu_queue *q = &ndev->queues[i];

		q->ndev = ndev;
		q->index = i;
		spin_lock_init(&q->lock);
		INIT_LIST_HEAD(&q->inflight);
		q->ring = dmam_alloc_coherent(dev, NPU_RING_ENTRIES * sizeof(*q->ring),
					      &q->ring_dma, GFP_KERNEL);
		q->comp = dmam_alloc_coherent(dev, NPU_RING_ENTRIES * sizeof(*q->comp),
					      &q->comp_dma, GFP_KERNEL);
		if (!q->ring || !q->comp)
			return -ENOMEM;
	}
	ndev->null_pt = dmam_alloc_coherent(dev, NPU_MMU_PAGE_SIZE,
					    &ndev->null_pt_dma, GFP_KERNEL);
	if (!ndev->null_pt)
		return -ENOMEM;
	return 0;
}

/* An already signalled hardware fence carrying @error (or success). */
static struct dma_fence *npu_fence_signalled(struct npu_queue *q, int error)
{
	struct dma_fence *fence = kzalloc(sizeof(*fence), GFP_KERNEL);

	if (!fence)
		return ERR_PTR(-ENOMEM);
	guard(spinlock_irqsave)(&q->lock);
	dma_fence_init(fence, &npu_fence_ops, &q->lock, q->fence_context,
		       ++q->hw_seqno);
	if (error)
		dma_fence_set_error(fence, error);
	dma_fence_signal_locked(fence);
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
 * Take the job off the hardware and signal its fence.  The signal may free
 * the job at once (free_job on another CPU): it is the last thing that
 * touches it.
 */
static void npu_job_signal_locked(struct npu_queue *q, struct npu_job *job,
				  int error)
{
	struct dma_fence *fence = job->hw_fence;

	lockdep_assert_held(&q->lock);
	job->hw_fence = NULL;
	list_del_init(&job->link);
	if (error)
		dma_fence_set_error(fence, error);
	dma_fence_signal_locked(fence);
	dma_fence_put(fence);
	/* The reference run_job took: the last one lets the device suspend. */
	npu_pm_put(q->ndev);
}

/* Account a finished job and signal its hardware fence. */
static void npu_job_done_locked(struct npu_queue *q, struct npu_job *job,
				int error, u64 cycles)
{
	struct npu_device *ndev = q->ndev;
	struct npu_ctx *ctx = job->ctx;
	u64 now = ktime_get_ns();
	u64 busy = now - max(job->start_ns, q->last_done_ns);
	u64 seqno = job->base.s_fence->finished.seqno;
	unsigned long c, mask = ctx->cluster_mask;

	lockdep_assert_held(&q->lock);
	q->last_done_ns = now;
	/* The file outlives this: it waits for its contexts' fences. */
	for_each_set_bit(c, &mask, NPU_HW_MAX_CLUSTERS) {
		atomic64_add(busy, &ndev->stats.cluster_busy_ns[c]);
		atomic64_add(busy, &ctx->nfile->busy_ns[c]);
		atomic64_add(cycles, &ctx->nfile->cycles[c]);
	}
	atomic64_add(cycles, &ndev->stats.device_cycles);
	atomic64_add(cycles, &ctx->device_cycles);
	scoped_guard(spinlock_irqsave, &ctx->recent_lock) {
		ctx->recent[seqno % DRM_NPU_CTX_RECENT_JOBS].seqno = seqno;
		ctx->recent[seqno % DRM_NPU_CTX_RECENT_JOBS].cycles = cycles;
	}
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
	trace_npu_job_done(job, error, cycles);
	npu_job_signal_locked(q, job, 0);
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

	guard(spinlock_irqsave)(&q->lock);
	list_for_each_entry_safe(job, tmp, &q->inflight, link) {
		struct npu_hw_completion *c = &q->comp[job->slot];
		int scrub_err = npu_scrub_poll_locked(q, job);
		int error;

		if (READ_ONCE(c->seqno) != job->hw_seqno)
			break;
		dma_rmb();	/* the record before its seqno */
		error = scrub_err ?: npu_status_errno(c->status);
		if (c->status == NPU_TASK_MMU_FAULT) {
			npu_coredump_capture(q, job, NPU_COREDUMP_MMU_FAULT, error);
			q->fault_status = 0;	/* the latch is this job's */
			q->fault_addr = 0;
		} else if (c->status == NPU_TASK_BUS_ERROR ||
			 c->status == NPU_TASK_INTERNAL)
			npu_coredump_capture(q, job, NPU_COREDUMP_DEVICE_ERROR,
					     error);
		npu_job_done_locked(q, job, error, c->cycles);
	}
}

/**
 * npu_queue_cancel - forget the jobs on a queue after a device reset
 * @q: the queue.
 * @error: error for their hardware fences.
 *
 * The schedulers are stopped (their callbacks removed) or the device is
 * gone, so nothing waits on these fences any more.
 *
 * Context: npu_device.reset_lock held (recovery, remove), or runtime
 * suspend of an idle device, which must not take it (see
 * npu_hw_start_queues()).
 */
void npu_queue_cancel(struct npu_queue *q, int error)
{
	struct npu_job *job, *tmp;

	guard(spinlock_irqsave)(&q->lock);
	list_for_each_entry_safe(job, tmp, &q->inflight, link)
		npu_job_signal_locked(q, job, error);
	q->tail = 0;
	q->hung = false;
	q->fault_status = 0;
	q->fault_addr = 0;
	q->progress = 0;
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

/*
 * Write the job's descriptor into the next ring slot and ring the doorbell;
 * @fence becomes its hardware fence.
 */
static void npu_queue_write_locked(struct npu_queue *q, struct npu_job *job,
				   struct dma_fence *fence, bool bad_pt)
{
	struct npu_device *ndev = q->ndev;
	u32 slot;

	lockdep_assert_held(&q->lock);
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
	trace_npu_job_run(job);
	q->tail = (slot + 1) % NPU_RING_ENTRIES;
	if (npu_fault_hit(&ndev->inject_hang))
		q->hung = true;
	dma_wmb();	/* descriptor before doorbell */
	if (!q->hung)
		npu_wr(ndev, NPU_REG_Q(q->index, NPU_Q_TAIL), q->tail);
}

/*
 * A job that ends with @error without reaching the device (its context
 * died or was banned, a dependency failed, the device is gone): counted
 * as completed and failed, as a job the device failed is, so that a
 * context whose jobs_failed is 0 has had no job end in error.
 */
static struct dma_fence *npu_job_refused(struct npu_job *job, int error)
{
	struct npu_queue *q = job->ctx->queue;

	atomic64_inc(&q->ndev->stats.jobs_completed);
	atomic64_inc(&q->ndev->stats.jobs_failed);
	atomic64_inc(&job->ctx->jobs_completed);
	atomic64_inc(&job->ctx->jobs_failed);
	return npu_fence_signalled(q, error);
}

static struct dma_fence *npu_run_job(struct drm_sched_job *sched_job)
{
	struct npu_job *job = to_npu_job(sched_job);
	struct npu_ctx *ctx = job->ctx;
	struct npu_queue *q = ctx->queue;
	struct npu_device *ndev = q->ndev;
	struct dma_fence *fence;
	bool bad_pt;
	int err = 0, idx;

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
		return npu_job_refused(job, err);
	if (!drm_dev_enter(&ndev->drm, &idx))
		return npu_job_refused(job, -ENODEV);

	fence = kzalloc(sizeof(*fence), GFP_KERNEL);
	if (!fence) {
		drm_dev_exit(idx);
		return npu_job_refused(job, -ENOMEM);
	}
	/* Held while the job is in flight: dropped in npu_job_signal_locked. */
	err = npu_pm_get(ndev);
	if (err) {
		kfree(fence);
		drm_dev_exit(idx);
		return npu_job_refused(job, err);
	}
	bad_pt = npu_fault_hit(&ndev->inject_fault);
	scoped_guard(spinlock_irqsave, &q->lock)
		npu_queue_write_locked(q, job, fence, bad_pt);
	drm_dev_exit(idx);
	/* Destroy waits for it: see npu_ctx.last_run_fence. */
	scoped_guard(spinlock, &ctx->fence_lock) {
		dma_fence_put(ctx->last_run_fence);
		ctx->last_run_fence = dma_fence_get(&sched_job->s_fence->finished);
	}
	return fence;
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
	.timedout_job = npu_recover_timedout_job,
	.free_job = npu_free_job,
};

/**
 * npu_sched_init - one scheduler per hardware queue
 * @ndev: the device.
 *
 * Every scheduler's timeout work runs on one ordered workqueue, so
 * device-wide resets never race each other.
 *
 * Return: 0 or an errno.
 */
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

static irqreturn_t npu_irq(int irq, void *arg)
{
	struct npu_device *ndev = arg;
	u32 status = npu_rd(ndev, NPU_REG_IRQ_STATUS);

	if (!status || status == ~0u)
		return IRQ_NONE;
	/* Acknowledge first: an event arriving meanwhile raises it again. */
	npu_wr(ndev, NPU_REG_IRQ_STATUS, status);
	if (status & NPU_IRQ_MMU_FAULT) {
		u32 fs = npu_rd(ndev, NPU_REG_FAULT_STATUS);
		u64 addr = npu_rd64(ndev, NPU_REG_FAULT_ADDR_LO);

		drm_dbg_driver(&ndev->drm, "MMU fault: queue %u asid %u %s at 0x%llx\n",
			       NPU_FAULT_QUEUE(fs), NPU_FAULT_ASID(fs),
			       fs & NPU_FAULT_WRITE ? "write" : "read", addr);
		trace_npu_mmu_fault(fs, addr);
		npu_wr(ndev, NPU_REG_FAULT_CLEAR, 1);
		if (NPU_FAULT_QUEUE(fs) < NPU_HW_NUM_QUEUES) {
			struct npu_queue *q = &ndev->queues[NPU_FAULT_QUEUE(fs)];

			guard(spinlock_irqsave)(&q->lock);
			q->fault_status = fs;
			q->fault_addr = addr;
		}
	}
	for (unsigned int i = 0; i < NPU_HW_NUM_QUEUES; i++)
		npu_queue_process(&ndev->queues[i]);
	return IRQ_HANDLED;
}

/**
 * npu_queue_irq_init - MSI-X (one vector per queue plus errors), else MSI,
 * else INTx; every vector runs the same handler.
 * @ndev: the device.
 *
 * Return: 0 or an errno.
 */
int npu_queue_irq_init(struct npu_device *ndev)
{
	struct pci_dev *pdev = ndev->pdev;
	int nvec, ret;

	nvec = pci_alloc_irq_vectors(pdev, 1, NPU_MSIX_VECTORS, PCI_IRQ_ALL_TYPES);
	if (nvec < 0)
		return nvec;
	for (int i = 0; i < nvec; i++) {
		ret = devm_request_irq(&pdev->dev, pci_irq_vector(pdev, i), npu_irq,
				       IRQF_SHARED, NPU_DRIVER_NAME, ndev);
		if (ret)
			return ret;
	}
	drm_dbg_driver(&ndev->drm, "%d %s interrupt vector(s)\n", nvec,
		       pdev->msix_enabled ? "MSI-X" : pdev->msi_enabled ? "MSI" : "INTx");
	return 0;
}
