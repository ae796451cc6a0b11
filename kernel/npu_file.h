/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Copyright (c) 2026 The M100 NPU authors */

#ifndef NPU_FILE_H
#define NPU_FILE_H

#include <linux/xarray.h>
#include <drm/drm_file.h>
#include <drm/drm_mm.h>

#include "npu_device.h"

/**
 * struct npu_file - per open file state
 * @ndev: the device.
 * @lock: protects @va_mm, every binding's ctx_mapped bits, and the page
 *	tables of this file's contexts while BOs are mapped or unmapped.
 *	Taken before npu_bo.lock.
 * @va_mm: this file's device address space, shared by its contexts.
 * @bindings: every &struct npu_bo_binding of this file.
 * @contexts: context id -> &struct npu_ctx (xarray lock: lookups).
 * @busy_ns: per physical cluster: time this file's jobs ran there.
 * @cycles: per physical cluster: simulated cycles of this file's jobs.
 */
struct npu_file {
	struct npu_device *ndev;
	struct mutex lock;	/* va_mm, bindings, mappings */
	struct drm_mm va_mm;
	struct list_head bindings;
	struct xarray contexts;
	atomic64_t busy_ns[NPU_HW_MAX_CLUSTERS];
	atomic64_t cycles[NPU_HW_MAX_CLUSTERS];
};

#endif /* NPU_FILE_H */
