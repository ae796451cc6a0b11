/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Copyright (c) 2026 The M100 NPU authors */

#ifndef NPU_SUBMIT_H
#define NPU_SUBMIT_H

#include <drm/drm_device.h>
#include <drm/drm_file.h>

#include "npu_accel.h"

struct npu_job;

int npu_submit_check(const struct drm_npu_submit *args);
void npu_job_release(struct npu_job *job);
int npu_ioctl_submit(struct drm_device *dev, void *data,
		     struct drm_file *file);

#endif /* NPU_SUBMIT_H */
