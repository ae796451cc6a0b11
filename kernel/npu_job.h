/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Copyright (c) 2026 The M100 NPU authors */

#ifndef NPU_JOB_H
#define NPU_JOB_H

#include <linux/dma-fence.h>
#include <drm/gpu_scheduler.h>

#include "npu_scrub.h"

struct npu_ctx;

/**
 * struct npu_job - one submitted program
 * @base: scheduler job.
 * @ctx: the context (a reference).
 * @bos: every BO the job uses, the command BO included (references).
 * @bo_flags: per entry of @bos: DRM_NPU_BO_REF_READ/_WRITE, the union of
 *	the job's references to it (the command BO is READ).
 * @bo_count: entries in @bos.
 * @prog_va: device address of the program.
 * @prog_size: its size.
 * @timeout_cycles: the device's cycle budget for the task.
 * @link: entry in npu_queue.inflight (under npu_queue.lock).
 * @hw_fence: fence of the current hardware attempt, signalled on completion.
 * @hw_seqno: sequence number in the ring descriptor.
 * @slot: ring index (and completion record) of the current attempt.
 * @start_ns: when the current attempt was written to the ring.
 * @hw_done: the device finished it (even if the scheduler was stopped).
 * @hw_error: result of that completion (0 or negative errno).
 * @guilty_error: set by recovery: the job hung; it is not run again.
 * @scrub: the scrub task written before it, if any (npu_scrub.c).
 */
struct npu_job {
	struct drm_sched_job base;
	struct npu_ctx *ctx;
	struct drm_gem_object **bos;
	u32 *bo_flags;
	u32 bo_count;
	u64 prog_va;
	u32 prog_size;
	u64 timeout_cycles;
	struct list_head link;
	struct dma_fence *hw_fence;
	u64 hw_seqno;
	u32 slot;
	u64 start_ns;
	bool hw_done;
	int hw_error;
	int guilty_error;
	struct npu_scrub_job scrub;
};

int npu_ioctl_submit(struct drm_device *dev, void *data,
		     struct drm_file *file);

#if IS_ENABLED(CONFIG_KUNIT)
/* Pure helpers of npu_job.c, visible to kernel/tests/npu_submit_test.c. */
struct drm_npu_submit;
int npu_submit_check(const struct drm_npu_submit *args);
int npu_status_errno(u32 status);
#endif

#endif /* NPU_JOB_H */
