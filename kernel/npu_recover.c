// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Recovery: the job watchdog, device reset and the reinsert of jobs that
 * were not guilty.
 *
 * Recovery follows the scheduler's documented multi-queue flow: every
 * scheduler's timeout work runs on one ordered workqueue; a reset stops all
 * four schedulers, resets the device, fails only the guilty job and
 * resubmits the innocent ones.
 *
 * Copyright (c) 2026 The M100 NPU authors
 */

#include <linux/cleanup.h>
#include <linux/lockdep.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/pm_runtime.h>
#include <drm/drm_drv.h>
#include <drm/drm_print.h>

#include "npu_coredump.h"
#include "npu_ctx.h"
#include "npu_device.h"
#include "npu_job.h"
#include "npu_queue.h"
#include "npu_recover.h"
#include "npu_trace.h"

unsigned int npu_job_timeout_ms = 2000;
module_param_named(job_timeout_ms, npu_job_timeout_ms, uint, 0444);
MODULE_PARM_DESC(job_timeout_ms,
		 "watchdog: a queue that makes no progress for this long is reset (default 2000)");

/* Put a timed-out job back where drm_sched_job_timedout() took it from. */
static void npu_job_reinsert(struct drm_sched_job *sched_job)
{
	struct drm_gpu_scheduler *sched = sched_job->sched;

	guard(spinlock)(&sched->job_list_lock);
	list_add(&sched_job->list, &sched->pending_list);
}

/**
 * npu_recover_timedout_job - the schedulers' timedout_job callback
 * @sched_job: the oldest job of a queue that made no progress.
 *
 * Runs on npu_device.reset_wq.  A late completion or a queue that still
 * completes work is not a hang: the job goes back and waits another
 * period.  Otherwise the device is reset.
 *
 * Return: DRM_GPU_SCHED_STAT_NOMINAL, or DRM_GPU_SCHED_STAT_ENODEV once the
 * device is unplugged.
 */
enum drm_gpu_sched_stat npu_recover_timedout_job(struct drm_sched_job *sched_job)
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
	trace_npu_job_timeout(job, npu_job_timeout_ms);
	/* The registers before the reset clears them. */
	scoped_guard(spinlock_irqsave, &q->lock)
		npu_coredump_capture(q, job, NPU_COREDUMP_TIMEOUT, -ETIMEDOUT);
	npu_recover(ndev, sched_job);
	drm_dev_exit(idx);
	return DRM_GPU_SCHED_STAT_NOMINAL;

no_reset:
	npu_job_reinsert(sched_job);
	drm_dev_exit(idx);
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

/* The job hung: it fails with -ETIMEDOUT, is not run again, and its context is banned. */
static void npu_recover_blame(struct npu_device *ndev, struct npu_job *job)
{
	lockdep_assert_held(&ndev->reset_lock);
	if (job->hw_done)
		return;
	job->guilty_error = -ETIMEDOUT;
	npu_ctx_ban(job->ctx, -ETIMEDOUT);
	atomic64_inc(&ndev->stats.timeouts);
	atomic64_inc(&ndev->stats.jobs_completed);
	atomic64_inc(&ndev->stats.jobs_failed);
	atomic64_inc(&job->ctx->jobs_completed);
	atomic64_inc(&job->ctx->jobs_failed);
}

/* npu_recover() with the reset lock held. */
static int npu_recover_locked(struct npu_device *ndev, struct drm_sched_job *bad)
{
	unsigned int i;
	int ret = 0;

	lockdep_assert_held(&ndev->reset_lock);
	for (i = 0; i < NPU_HW_NUM_QUEUES; i++) {
		struct drm_gpu_scheduler *sched = &ndev->queues[i].sched;

		drm_sched_stop(sched, bad && bad->sched == sched ? bad : NULL);
	}
	/* Whatever finished before the reset keeps its result. */
	for (i = 0; i < NPU_HW_NUM_QUEUES; i++)
		npu_queue_process(&ndev->queues[i]);
	if (bad)
		npu_recover_blame(ndev, to_npu_job(bad));

	for (i = 0; i < 3; i++) {
		ret = npu_hw_reset(ndev);
		if (!ret)
			break;
		drm_warn(&ndev->drm, "reset attempt %u failed: %d\n", i + 1, ret);
	}
	trace_npu_reset(bad ? (int)to_npu_job(bad)->ctx->queue->index : -1,
			min(i + 1, 3u), ret);
	atomic64_inc(&ndev->stats.resets);

	/* Jobs the reset interrupted run again from the start. */
	for (i = 0; i < NPU_HW_NUM_QUEUES; i++)
		npu_queue_cancel(&ndev->queues[i], -ECANCELED);
	npu_hw_start_queues(ndev);

	for (i = 0; i < NPU_HW_NUM_QUEUES; i++)
		drm_sched_resubmit_jobs(&ndev->queues[i].sched);
	for (i = 0; i < NPU_HW_NUM_QUEUES; i++)
		drm_sched_start(&ndev->queues[i].sched);
	return ret;
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
	int ret;

	/* Awake already (a job in flight, or debugfs resumed it): stay so. */
	pm_runtime_get_noresume(ndev->drm.dev);
	scoped_guard(mutex, &ndev->reset_lock)
		ret = npu_recover_locked(ndev, bad);
	npu_pm_put(ndev);
	return ret;
}
