/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Copyright (c) 2026 The M100 NPU authors */

#ifndef NPU_QUEUE_H
#define NPU_QUEUE_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <drm/gpu_scheduler.h>

#include "npu/npu_hw.h"

/*
 * Ring entries per queue; at most NPU_JOBS_IN_FLIGHT jobs are in flight, each
 * with at most one scrub descriptor before it (npu_scrub.c).
 */
#define NPU_RING_LOG2		7
#define NPU_RING_ENTRIES	BIT(NPU_RING_LOG2)
#define NPU_JOBS_IN_FLIGHT	32

struct npu_device;

/**
 * struct npu_queue - one hardware task queue and its scheduler
 * @ndev: owner.
 * @index: queue number.
 * @sched: the DRM scheduler feeding this queue.
 * @ring: CPU view of the ring (NPU_RING_ENTRIES descriptors).
 * @ring_dma: its bus address.
 * @comp: completion records, one per ring entry.
 * @comp_dma: their bus address.
 * @lock: protects @inflight, @tail, @hw_seqno, @last_done_ns, @hung and
 *	the fault latch (@fault_status, @fault_addr), the
 *	ring and completion slots of in-flight jobs, and the hardware fences
 *	(their dma_fence lock).
 * @inflight: jobs written to the ring and not yet completed, oldest first.
 * @tail: next ring index the driver writes.
 * @hw_seqno: last sequence number given to a descriptor.
 * @last_done_ns: when the last job of this queue completed (busy time).
 * @hung: fault injection: the doorbell is held back until the next reset.
 * @fault_status: NPU_REG_FAULT_STATUS of the last MMU fault of this queue,
 *	latched by the interrupt handler for the coredump; cleared when a job
 *	completes with an MMU fault, and by a reset (0: none).
 * @fault_addr: NPU_REG_FAULT_ADDR of that fault.
 * @progress: NPU_Q_TASKS at the last timeout check (timeout work only,
 *	which runs on the ordered npu_device.reset_wq).
 * @fence_context: dma_fence context of the hardware fences.
 * @contexts: how many contexts use this queue (protected by ndev->ctx_lock).
 */
struct npu_queue {
	struct npu_device *ndev;
	unsigned int index;
	struct drm_gpu_scheduler sched;
	struct npu_hw_task *ring;
	dma_addr_t ring_dma;
	struct npu_hw_completion *comp;
	dma_addr_t comp_dma;
	spinlock_t lock;	/* inflight, ring slots, hw fences, fault latch */
	struct list_head inflight;
	u32 tail;
	u64 hw_seqno;
	u64 last_done_ns;
	bool hung;
	u32 fault_status;
	u64 fault_addr;
	u64 progress;
	u64 fence_context;
	unsigned int contexts;
};

int npu_queue_init(struct npu_device *ndev);
int npu_queue_irq_init(struct npu_device *ndev);
int npu_sched_init(struct npu_device *ndev);
void npu_sched_fini(struct npu_device *ndev);
void npu_queue_process(struct npu_queue *q);
void npu_queue_cancel(struct npu_queue *q, int error);

#endif /* NPU_QUEUE_H */
