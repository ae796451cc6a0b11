// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Register level: identity and geometry, reset, queue programming,
 * interrupt enable.  A leaf: nothing here calls into the queue, recovery
 * or submit code.
 *
 * Copyright (c) 2026 The M100 NPU authors
 */

#include <linux/interrupt.h>
#include <linux/iopoll.h>
#include <linux/lockdep.h>
#include <drm/drm_print.h>

#include "npu_device.h"

#define NPU_RESET_TIMEOUT_US	100000

/**
 * npu_hw_reset - full device reset, then wait until it is ready
 * @ndev: the device.
 *
 * Context: npu_device.reset_lock held.
 * Return: 0, or -EIO if the device did not come back.
 */
int npu_hw_reset(struct npu_device *ndev)
{
	u32 status;
	int ret;

	lockdep_assert_held(&ndev->reset_lock);
	npu_wr(ndev, NPU_REG_RESET, NPU_RESET_MAGIC);
	ret = readl_poll_timeout(ndev->regs + NPU_REG_STATUS, status,
				 status & NPU_STATUS_READY, 10,
				 NPU_RESET_TIMEOUT_US);
	if (npu_fault_hit(&ndev->inject_reset_fail))
		ret = -EIO;	/* fault injection */
	return ret ? -EIO : 0;
}

/**
 * npu_hw_start_queues - point every queue at its ring, enable interrupts
 * @ndev: the device, after a reset; the rings are allocated.
 *
 * Context: npu_device.reset_lock held (probe, recovery), or runtime resume,
 * which cannot take it (run_job resumes the device while recovery holds it
 * and waits in drm_sched_stop()) and needs not: recovery holds a runtime-PM
 * reference, so the two never overlap.
 */
void npu_hw_start_queues(struct npu_device *ndev)
{
	for (unsigned int i = 0; i < NPU_HW_NUM_QUEUES; i++) {
		struct npu_queue *q = &ndev->queues[i];

		npu_wr(ndev, NPU_REG_Q(i, NPU_Q_CTRL), 0);
		npu_wr(ndev, NPU_REG_Q(i, NPU_Q_BASE_LO), lower_32_bits(q->ring_dma));
		npu_wr(ndev, NPU_REG_Q(i, NPU_Q_BASE_HI), upper_32_bits(q->ring_dma));
		npu_wr(ndev, NPU_REG_Q(i, NPU_Q_SIZE_LOG2), NPU_RING_LOG2);
		npu_wr(ndev, NPU_REG_Q(i, NPU_Q_CTRL), NPU_Q_CTRL_ENABLE);
	}
	npu_wr(ndev, NPU_REG_IRQ_STATUS, ~0u);
	npu_wr(ndev, NPU_REG_IRQ_MASK, NPU_IRQ_QUEUE_ALL | NPU_IRQ_ERROR |
	       NPU_IRQ_MMU_FAULT);
}

static void npu_hw_read_info(struct npu_device *ndev)
{
	struct drm_npu_device_info *info = &ndev->info;
	u32 geom = npu_rd(ndev, NPU_REG_GEOM);
	u32 mesh = npu_rd(ndev, NPU_REG_MESH);
	u32 all;

	info->hw_version = npu_rd(ndev, NPU_REG_VERSION);
	info->isa_version = npu_rd(ndev, NPU_REG_ISA_VERSION);
	info->caps = npu_rd(ndev, NPU_REG_CAPS);
	info->clusters = min_t(u32, NPU_GEOM_CLUSTERS(geom), NPU_HW_MAX_CLUSTERS);
	info->tpbs_per_cluster = NPU_GEOM_TPBS(geom);
	info->queues = NPU_GEOM_QUEUES(geom);
	info->dma_engines = NPU_GEOM_DMA_ENGINES(geom);
	info->mesh_x = NPU_MESH_X(mesh);
	info->mesh_y = NPU_MESH_Y(mesh);
	info->ccb_node = NPU_MESH_CCB_NODE(mesh);
	info->ddr_node = NPU_MESH_DDR_NODE(mesh);
	all = info->clusters >= 32 ? ~0u : BIT(info->clusters) - 1;
	info->defect_mask = npu_rd(ndev, NPU_REG_FUSE_MASK) & all;
	info->healthy_mask = all & ~info->defect_mask;
	info->healthy_clusters = hweight32(info->healthy_mask);
	info->hbsm_size = npu_rd(ndev, NPU_REG_HBSM_SIZE);
	info->sram_size = npu_rd(ndev, NPU_REG_SRAM_SIZE);
	info->clock_mhz = npu_rd(ndev, NPU_REG_CLOCK_MHZ);
	info->su_counters = npu_rd(ndev, NPU_REG_SU_COUNTERS);
	info->tcu_geom = npu_rd(ndev, NPU_REG_TCU_GEOM);
	info->link_bw = npu_rd(ndev, NPU_REG_LINK_BW);
	info->ddr_bw = npu_rd(ndev, NPU_REG_DDR_BW);
	for (u32 c = 0; c < info->clusters; c++)
		info->cluster_pos[c] = npu_rd(ndev, NPU_REG_CLUSTER_POS(c));
	info->va_start = NPU_VA_START;
	info->va_size = NPU_VA_END - NPU_VA_START;
}

/**
 * npu_hw_init - identify the device, reset it, read its geometry
 * @ndev: the device, BAR0 mapped.
 *
 * Context: npu_device.reset_lock held.
 * Return: 0, -ENODEV for an unknown device or version, or an errno.
 */
int npu_hw_init(struct npu_device *ndev)
{
	u32 id = npu_rd(ndev, NPU_REG_ID);
	u32 ver = npu_rd(ndev, NPU_REG_VERSION);
	int ret;

	if (id != NPU_ID_MAGIC) {
		drm_err(&ndev->drm, "unknown device: ID register 0x%08x, expected 0x%08x\n",
			id, NPU_ID_MAGIC);
		return -ENODEV;
	}
	if (NPU_VERSION_MAJOR(ver) != NPU_HW_VERSION_MAJOR) {
		drm_err(&ndev->drm, "hardware interface %u.%u is not supported: this driver knows %u.x\n",
			NPU_VERSION_MAJOR(ver), NPU_VERSION_MINOR(ver),
			NPU_HW_VERSION_MAJOR);
		return -ENODEV;
	}
	ret = npu_hw_reset(ndev);
	if (ret) {
		drm_err(&ndev->drm, "device did not come out of reset\n");
		return ret;
	}
	npu_hw_read_info(ndev);
	if (!ndev->info.healthy_clusters || ndev->info.sram_size < SZ_1M) {
		drm_err(&ndev->drm, "no usable clusters (fuse mask 0x%x)\n",
			ndev->info.defect_mask);
		return -ENODEV;
	}
	return 0;
}

/**
 * npu_hw_suspend - quiesce the idle device before D3hot
 * @ndev: the device, no job in flight.
 *
 * Masks the interrupts and waits for a handler still running, so none
 * reads the registers of the powered-down function.
 */
void npu_hw_suspend(struct npu_device *ndev)
{
	struct pci_dev *pdev = ndev->pdev;
	int irq;

	npu_wr(ndev, NPU_REG_IRQ_MASK, 0);
	for (unsigned int i = 0; (irq = pci_irq_vector(pdev, i)) >= 0; i++)
		synchronize_irq(irq);
}

/**
 * npu_hw_resume - program the device again after D3hot
 * @ndev: the device, back in D0 (config space restored by the PCI core).
 *
 * D3hot lost every register (No_Soft_Reset is 0): reset it and point the
 * queues at their rings again, as probe did.  No fault injection here.
 *
 * Return: 0, or -EIO if the device does not answer or stay ready.
 */
int npu_hw_resume(struct npu_device *ndev)
{
	u32 status;

	if (npu_rd(ndev, NPU_REG_ID) != NPU_ID_MAGIC)
		return -EIO;
	npu_wr(ndev, NPU_REG_RESET, NPU_RESET_MAGIC);
	if (readl_poll_timeout(ndev->regs + NPU_REG_STATUS, status,
			       status & NPU_STATUS_READY, 10,
			       NPU_RESET_TIMEOUT_US))
		return -EIO;
	npu_hw_start_queues(ndev);
	return 0;
}

/**
 * npu_hw_fini - quiesce the device at remove: no more DMA or interrupts
 * @ndev: the device.
 *
 * Context: npu_device.reset_lock held.
 */
void npu_hw_fini(struct npu_device *ndev)
{
	lockdep_assert_held(&ndev->reset_lock);
	npu_wr(ndev, NPU_REG_IRQ_MASK, 0);
	npu_hw_reset(ndev);
}
