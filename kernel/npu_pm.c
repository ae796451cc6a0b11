// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Runtime power management with autosuspend.
 *
 * Every job written to a ring holds one runtime-PM reference, taken in
 * run_job before the descriptor reaches the hardware and dropped when the
 * job leaves the queue's in-flight list (completion, cancel).  When the
 * last queue drains, the device autosuspends after autosuspend_ms (the
 * standard power/autosuspend_delay_ms sysfs attribute changes it later);
 * the PCI core saves config space and puts the function into D3hot.
 *
 * In D3hot the M100 loses its on-chip state: registers, queue programming,
 * interrupt enables, HBSM and SRAM contents.  Everything the driver keeps
 * in system memory (rings, completion records, page tables, BOs, contexts
 * and their partitions) survives, so resume only programs the device again
 * as probe did.  Device addresses, contexts and mappings are unchanged.
 *
 * Copyright (c) 2026 The M100 NPU authors
 */

#include <linux/interrupt.h>
#include <linux/moduleparam.h>
#include <linux/pci.h>
#include <linux/pm_runtime.h>
#include <drm/drm_print.h>

#include "npu_device.h"

static int npu_autosuspend_ms = 50;
module_param_named(autosuspend_ms, npu_autosuspend_ms, int, 0444);
MODULE_PARM_DESC(autosuspend_ms,
		 "idle time before the device is suspended to D3hot, in ms; negative: never (default 50)");

static bool npu_pm_idle(struct npu_device *ndev)
{
	for (unsigned int i = 0; i < NPU_HW_NUM_QUEUES; i++) {
		struct npu_queue *q = &ndev->queues[i];
		unsigned long flags;
		bool empty;

		spin_lock_irqsave(&q->lock, flags);
		empty = list_empty(&q->inflight);
		spin_unlock_irqrestore(&q->lock, flags);
		if (!empty)
			return false;
	}
	return true;
}

/*
 * No reset_lock here: recovery holds a runtime-PM reference, so it never
 * runs alongside these callbacks, and run_job resumes the device while
 * recovery may be waiting for run_job (drm_sched_stop).
 */
static int npu_runtime_suspend(struct device *dev)
{
	struct npu_device *ndev = pci_get_drvdata(to_pci_dev(dev));

	/* Jobs hold references; this only guards against a bug. */
	if (!npu_pm_idle(ndev))
		return -EBUSY;
	npu_hw_suspend(ndev);
	/* The rings start again at slot 0 after resume, like the device. */
	for (unsigned int i = 0; i < NPU_HW_NUM_QUEUES; i++)
		npu_queue_cancel(&ndev->queues[i], -ECANCELED);
	atomic64_inc(&ndev->pm_suspends);
	return 0;
}

static int npu_runtime_resume(struct device *dev)
{
	struct npu_device *ndev = pci_get_drvdata(to_pci_dev(dev));
	int ret;

	ret = npu_hw_resume(ndev);
	if (ret) {
		drm_err(&ndev->drm, "device did not come back from D3hot: %d\n", ret);
		return ret;
	}
	atomic64_inc(&ndev->pm_resumes);
	return 0;
}

/* System sleep goes through the runtime callbacks (idle device only). */
const struct dev_pm_ops npu_pm_ops = {
	SYSTEM_SLEEP_PM_OPS(pm_runtime_force_suspend, pm_runtime_force_resume)
	RUNTIME_PM_OPS(npu_runtime_suspend, npu_runtime_resume, NULL)
};

/**
 * npu_pm_init - enable runtime PM at the end of probe
 * @ndev: the device, fully set up.
 *
 * The PCI core probes with a runtime-PM reference held and runtime PM
 * forbidden (power/control "on"); allow it and drop the reference, so an
 * idle device suspends after the autosuspend delay.
 */
void npu_pm_init(struct npu_device *ndev)
{
	struct device *dev = ndev->drm.dev;

	pm_runtime_set_autosuspend_delay(dev, npu_autosuspend_ms);
	pm_runtime_use_autosuspend(dev);
	pm_runtime_allow(dev);
	pm_runtime_mark_last_busy(dev);
	pm_runtime_put_autosuspend(dev);
}

/**
 * npu_pm_fini - undo npu_pm_init() at remove
 * @ndev: the device; the PCI core resumed it before calling remove.
 */
void npu_pm_fini(struct npu_device *ndev)
{
	struct device *dev = ndev->drm.dev;

	pm_runtime_get_noresume(dev);
	pm_runtime_forbid(dev);
	pm_runtime_dont_use_autosuspend(dev);
}

/**
 * npu_pm_get - resume the device (if needed) and hold it awake
 * @ndev: the device.
 *
 * Return: 0, or the errno of a failed resume (no reference held then).
 */
int npu_pm_get(struct npu_device *ndev)
{
	return pm_runtime_resume_and_get(ndev->drm.dev);
}

/**
 * npu_pm_get_if_active - hold the device awake only if it is awake
 * @ndev: the device.
 *
 * For register accesses that have no point on a powered-down device
 * (a TLB invalidation, counters that D3hot cleared).
 *
 * Return: true with a reference held, false if it is not active.
 */
bool npu_pm_get_if_active(struct npu_device *ndev)
{
	struct device *dev = ndev->drm.dev;
	int ret = pm_runtime_get_if_active(dev);

	if (ret > 0)
		return true;
	/* Runtime PM disabled (or not built): powered unless suspended. */
	if (ret < 0 && !pm_runtime_suspended(dev)) {
		pm_runtime_get_noresume(dev);
		return true;
	}
	return false;
}

/**
 * npu_pm_put - drop a reference; the device suspends once idle for the
 * autosuspend delay.  Safe in atomic context.
 * @ndev: the device.
 */
void npu_pm_put(struct npu_device *ndev)
{
	struct device *dev = ndev->drm.dev;

	pm_runtime_mark_last_busy(dev);
	pm_runtime_put_autosuspend(dev);
}
