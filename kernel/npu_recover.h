/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Copyright (c) 2026 The M100 NPU authors */

#ifndef NPU_RECOVER_H
#define NPU_RECOVER_H

#include <drm/gpu_scheduler.h>

struct npu_device;

/* Module parameter job_timeout_ms: the watchdog period. */
extern unsigned int npu_job_timeout_ms;

enum drm_gpu_sched_stat npu_recover_timedout_job(struct drm_sched_job *sched_job);
int npu_recover(struct npu_device *ndev, struct drm_sched_job *bad);

#endif /* NPU_RECOVER_H */
