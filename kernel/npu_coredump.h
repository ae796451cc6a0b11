/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Copyright (c) 2026 The M100 NPU authors */

#ifndef NPU_COREDUMP_H
#define NPU_COREDUMP_H

#include <linux/types.h>

struct npu_device;
struct npu_job;
struct npu_queue;

/* Version of the text format (Documentation/driver.md, "Device coredump"). */
#define NPU_COREDUMP_VERSION	1
/* Bytes of the job's command buffer the dump carries. */
#define NPU_COREDUMP_CMD_HEAD	256

/**
 * enum npu_coredump_reason - why the device state was captured
 * @NPU_COREDUMP_TIMEOUT: the watchdog found the job's queue hung.
 * @NPU_COREDUMP_MMU_FAULT: the job ended with NPU_TASK_MMU_FAULT.
 * @NPU_COREDUMP_DEVICE_ERROR: the job ended with NPU_TASK_BUS_ERROR or
 *	NPU_TASK_INTERNAL.
 */
enum npu_coredump_reason {
	NPU_COREDUMP_TIMEOUT,
	NPU_COREDUMP_MMU_FAULT,
	NPU_COREDUMP_DEVICE_ERROR,
};

int npu_coredump_init(struct npu_device *ndev);
void npu_coredump_capture(struct npu_queue *q, struct npu_job *job,
			  enum npu_coredump_reason reason, int error);
void npu_coredump_cancel(struct npu_device *ndev);

#endif /* NPU_COREDUMP_H */
