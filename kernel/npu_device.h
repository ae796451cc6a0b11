/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Copyright (c) 2026 The M100 NPU authors */

#ifndef NPU_DEVICE_H
#define NPU_DEVICE_H

#include <linux/bitmap.h>
#include <linux/fault-inject.h>
#include <linux/io.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <drm/drm_device.h>
#include <drm/drm_mm.h>
#include <drm/gpu_scheduler.h>

#include "npu/npu_hw.h"
#include "npu_accel.h"
#include "npu_queue.h"

#define NPU_DRIVER_NAME		"npu"
#define NPU_DRIVER_DESC		"M100 dataflow NPU"
#define NPU_DRIVER_MAJOR	1
#define NPU_DRIVER_MINOR	0

/* Device address range handed out to BOs (39-bit device VA). */
#define NPU_VA_START		BIT_ULL(20)
#define NPU_VA_END		BIT_ULL(NPU_MMU_VA_BITS)

struct npu_dump;
struct npu_scrub;

/**
 * struct npu_fault - one fault-injection knob of the driver
 * @attr: on a kernel with CONFIG_FAULT_INJECTION, a fault_attr: debugfs
 *	directory fail_hang/, fail_mmu/ or fail_reset/ (probability,
 *	interval, times, space, verbose, task-filter); the counter file
 *	inject_hang, inject_fault or inject_reset_fail sets it to "the next
 *	N times" (probability 100, interval 1, times N).
 * @count: without CONFIG_FAULT_INJECTION (Debian's stock kernel), the
 *	counter behind the inject_* file: the next @count events fail.
 *
 * npu_fault_hit() consumes one event.  See "Fault injection" in
 * Documentation/driver.md.
 */
struct npu_fault {
#ifdef CONFIG_FAULT_INJECTION
	struct fault_attr attr;
#else
	atomic_t count;
#endif
};

/**
 * struct npu_stats - device-wide counters, all atomic
 */
struct npu_stats {
	atomic64_t jobs_submitted;
	atomic64_t jobs_completed;
	atomic64_t jobs_failed;
	atomic64_t resets;
	atomic64_t mmu_faults;
	atomic64_t timeouts;
	atomic64_t bo_count;
	atomic64_t bo_bytes;
	atomic64_t device_cycles;
	atomic64_t cluster_busy_ns[NPU_HW_MAX_CLUSTERS];
};

/**
 * struct npu_device - one M100 function
 * @drm: DRM device (accel minor).
 * @pdev: PCI function.
 * @regs: BAR0.
 * @info: geometry and versions, read at probe (immutable afterwards).
 * @queues: the task queues.
 * @reset_wq: ordered workqueue running every scheduler's timeout work, so
 *	device-wide resets never race each other.
 * @reset_lock: serialises device resets (timeouts, debugfs, probe, remove):
 *	npu_hw_reset() and npu_hw_fini() assert it.  Runtime PM does not take
 *	it (see npu_hw_start_queues()).
 * @reg64_lock: serialises reads of 64-bit register pairs: every _LO read
 *	latches its _HI half in one latch shared by all pairs.
 * @null_pt: an empty top-level page table (fault injection).
 * @null_pt_dma: its bus address.
 * @ctx_lock: protects @free_clusters, @sram_mm, @contexts, the per-queue
 *	context counts and @asid_next.
 * @free_clusters: healthy clusters not in any partition.
 * @sram_mm: allocator of CCB SRAM windows.
 * @contexts: every live context (for debugfs), by global id.
 * @asids: allocator of address-space ids.
 * @stats: counters for DRM_IOCTL_NPU_STATS, sysfs and debugfs.
 * @bo_lock: protects @bos.
 * @bos: every live BO (for debugfs).
 * @inject_hang: fault injection: jobs whose doorbell is held back (hang).
 * @inject_fault: fault injection: jobs run on an empty page table (MMU
 *	fault).
 * @inject_reset_fail: fault injection: reset attempts that report failure.
 * @debugfs: the driver's debugfs directory.
 * @dump_lock: protects @dump_pending.
 * @dump_pending: device state captured for a devcoredump, waiting for
 *	@dump_work (npu_coredump.c).
 * @dump_work: hands @dump_pending to dev_coredumpv() in process context.
 * @pm_suspends: runtime suspends (sysfs npu/suspend_count).
 * @pm_resumes: runtime resumes (sysfs npu/resume_count).
 * @scrub: HBSM/SRAM scrub state (npu_scrub.c).
 */
struct npu_device {
	struct drm_device drm;
	struct pci_dev *pdev;
	void __iomem *regs;
	struct drm_npu_device_info info;
	struct npu_queue queues[NPU_HW_NUM_QUEUES];
	struct workqueue_struct *reset_wq;
	struct mutex reset_lock;	/* one device reset at a time */
	spinlock_t reg64_lock;		/* the shared _HI latch */
	u64 *null_pt;
	dma_addr_t null_pt_dma;
	struct mutex ctx_lock;		/* partitions, SRAM, contexts */
	u32 free_clusters;
	struct drm_mm sram_mm;
	struct xarray contexts;
	struct ida asids;
	struct npu_stats stats;
	struct mutex bo_lock;		/* the bos list */
	struct list_head bos;
	struct npu_fault inject_hang;
	struct npu_fault inject_fault;
	struct npu_fault inject_reset_fail;
	struct dentry *debugfs;
	spinlock_t dump_lock;		/* dump_pending */
	struct npu_dump *dump_pending;
	struct work_struct dump_work;
	atomic64_t pm_suspends;
	atomic64_t pm_resumes;
	struct npu_scrub *scrub;
};

#define to_npu_device(d) container_of(d, struct npu_device, drm)

static inline u32 npu_rd(struct npu_device *ndev, u32 off)
{
	return readl(ndev->regs + off);
}

static inline void npu_wr(struct npu_device *ndev, u32 off, u32 val)
{
	writel(val, ndev->regs + off);
}

static inline u64 npu_rd64(struct npu_device *ndev, u32 off)
{
	unsigned long flags;
	u64 v;

	spin_lock_irqsave(&ndev->reg64_lock, flags);
	v = npu_rd(ndev, off);	/* latches the upper half */
	v |= (u64)npu_rd(ndev, off + 4) << 32;
	spin_unlock_irqrestore(&ndev->reg64_lock, flags);
	return v;
}

/* npu_hw.c: register level, calls nothing above it */
int npu_hw_init(struct npu_device *ndev);
int npu_hw_reset(struct npu_device *ndev);
void npu_hw_start_queues(struct npu_device *ndev);
void npu_hw_fini(struct npu_device *ndev);
void npu_hw_suspend(struct npu_device *ndev);
int npu_hw_resume(struct npu_device *ndev);

/* npu_pm.c */
extern const struct dev_pm_ops npu_pm_ops;
void npu_pm_init(struct npu_device *ndev);
void npu_pm_fini(struct npu_device *ndev);
int npu_pm_get(struct npu_device *ndev);
bool npu_pm_get_if_active(struct npu_device *ndev);
void npu_pm_put(struct npu_device *ndev);

/* npu_debugfs.c */
void npu_fault_init(struct npu_device *ndev);
bool npu_fault_hit(struct npu_fault *f);
void npu_debugfs_init(struct npu_device *ndev);
extern const struct attribute_group *npu_sysfs_groups[];

#endif /* NPU_DEVICE_H */
