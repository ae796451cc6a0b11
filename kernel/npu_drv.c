// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * M100 NPU DRM-accel driver: PCI probe/remove, the DRM driver, file
 * lifetime, queries and fdinfo.
 *
 * Copyright (c) 2026 The M100 NPU authors
 */

#include <linux/cleanup.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "npu_coredump.h"
#include "npu_ctx.h"
#include "npu_device.h"
#include "npu_file.h"
#include "npu_gem.h"
#include "npu_queue.h"
#include "npu_scrub.h"
#include "npu_submit.h"

static int npu_open(struct drm_device *dev, struct drm_file *file)
{
	struct npu_file *nfile;

	nfile = kzalloc(sizeof(*nfile), GFP_KERNEL);
	if (!nfile)
		return -ENOMEM;
	nfile->ndev = to_npu_device(dev);
	mutex_init(&nfile->lock);
	drm_mm_init(&nfile->va_mm, NPU_VA_START, NPU_VA_END - NPU_VA_START);
	INIT_LIST_HEAD(&nfile->bindings);
	xa_init_flags(&nfile->contexts, XA_FLAGS_ALLOC1);
	file->driver_priv = nfile;
	return 0;
}

/* Handles are gone by now (drm_gem_release runs first); contexts remain. */
static void npu_postclose(struct drm_device *dev, struct drm_file *file)
{
	struct npu_file *nfile = file->driver_priv;

	npu_ctx_destroy_all(nfile);
	xa_destroy(&nfile->contexts);
	WARN_ON(!list_empty(&nfile->bindings));
	drm_mm_takedown(&nfile->va_mm);
	mutex_destroy(&nfile->lock);
	kfree(nfile);
}

/* Copy a kernel struct of @ksize to a user buffer of *@usize (see uAPI). */
static int npu_copy_sized(u64 uptr, u32 *usize, const void *kbuf, u32 ksize)
{
	void __user *ptr = u64_to_user_ptr(uptr);
	u32 want = *usize;
	int ret = 0;

	*usize = ksize;
	if (!want)
		return 0;
	if (!uptr)
		return -EFAULT;
	if (copy_to_user(ptr, kbuf, min(want, ksize)))
		return -EFAULT;
	if (want > ksize)
		ret = clear_user(ptr + ksize, want - ksize) ? -EFAULT : 0;
	return ret;
}

static int npu_ioctl_dev_query(struct drm_device *dev, void *data,
			       struct drm_file *file)
{
	struct npu_device *ndev = to_npu_device(dev);
	struct drm_npu_dev_query *args = data;

	switch (args->type) {
	case DRM_NPU_QUERY_DEVICE:
		return npu_copy_sized(args->pointer, &args->size, &ndev->info,
				      sizeof(ndev->info));
	default:
		return -EINVAL;
	}
}

static void npu_stats_fill(struct npu_device *ndev, struct drm_npu_stats_data *d)
{
	struct npu_stats *s = &ndev->stats;

	memset(d, 0, sizeof(*d));
	d->jobs_submitted = atomic64_read(&s->jobs_submitted);
	d->jobs_completed = atomic64_read(&s->jobs_completed);
	d->jobs_failed = atomic64_read(&s->jobs_failed);
	d->resets = atomic64_read(&s->resets);
	d->mmu_faults = atomic64_read(&s->mmu_faults);
	d->timeouts = atomic64_read(&s->timeouts);
	d->bo_count = atomic64_read(&s->bo_count);
	d->bo_bytes = atomic64_read(&s->bo_bytes);
	d->device_cycles = atomic64_read(&s->device_cycles);
	for (u32 c = 0; c < NPU_HW_MAX_CLUSTERS; c++)
		d->cluster_busy_ns[c] = atomic64_read(&s->cluster_busy_ns[c]);
	mutex_lock(&ndev->ctx_lock);
	d->free_clusters = hweight32(ndev->free_clusters);
	for (u32 q = 0; q < NPU_HW_NUM_QUEUES; q++)
		d->contexts += ndev->queues[q].contexts;
	mutex_unlock(&ndev->ctx_lock);
}

static int npu_ioctl_stats(struct drm_device *dev, void *data,
			   struct drm_file *file)
{
	struct drm_npu_stats *args = data;
	struct drm_npu_stats_data d;

	if (args->pad)
		return -EINVAL;
	npu_stats_fill(to_npu_device(dev), &d);
	return npu_copy_sized(args->pointer, &args->size, &d, sizeof(d));
}

/*
 * drm_ioctl() does not enter the device for driver ioctls: each one runs
 * inside drm_dev_enter/exit, so nothing touches an unplugged device.
 */
#define NPU_IOCTL_WRAP(name)						\
static int npu_##name##_guarded(struct drm_device *dev, void *data,	\
				struct drm_file *file)			\
{									\
	int idx, ret;							\
									\
	if (!drm_dev_enter(dev, &idx))					\
		return -ENODEV;						\
	ret = npu_ioctl_##name(dev, data, file);			\
	drm_dev_exit(idx);						\
	return ret;							\
}

NPU_IOCTL_WRAP(dev_query)
NPU_IOCTL_WRAP(bo_create)
NPU_IOCTL_WRAP(bo_mmap_offset)
NPU_IOCTL_WRAP(bo_info)
NPU_IOCTL_WRAP(ctx_create)
NPU_IOCTL_WRAP(ctx_destroy)
NPU_IOCTL_WRAP(submit)
NPU_IOCTL_WRAP(stats)
NPU_IOCTL_WRAP(ctx_query)

#define NPU_IOCTL(n, func) \
	DRM_IOCTL_DEF_DRV(NPU_##n, npu_##func##_guarded, DRM_RENDER_ALLOW)

static const struct drm_ioctl_desc npu_ioctls[] = {
	NPU_IOCTL(DEV_QUERY, dev_query),
	NPU_IOCTL(BO_CREATE, bo_create),
	NPU_IOCTL(BO_MMAP_OFFSET, bo_mmap_offset),
	NPU_IOCTL(BO_INFO, bo_info),
	NPU_IOCTL(CTX_CREATE, ctx_create),
	NPU_IOCTL(CTX_DESTROY, ctx_destroy),
	NPU_IOCTL(SUBMIT, submit),
	NPU_IOCTL(STATS, stats),
	NPU_IOCTL(CTX_QUERY, ctx_query),
};

static void npu_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct npu_file *nfile = file->driver_priv;
	struct npu_device *ndev = nfile->ndev;
	struct npu_ctx *ctx;
	unsigned long id;
	u32 contexts = 0, mask = 0;
	u64 total = 0;

	for (u32 c = 0; c < ndev->info.clusters; c++) {
		u64 ns = atomic64_read(&nfile->busy_ns[c]);

		total += ns;
		drm_printf(p, "drm-engine-cluster%u:\t%llu ns\n", c, ns);
		drm_printf(p, "drm-cycles-cluster%u:\t%llu\n", c,
			   atomic64_read(&nfile->cycles[c]));
	}
	drm_printf(p, "drm-engine-npu:\t%llu ns\n", total);
	drm_printf(p, "drm-engine-capacity-npu:\t%u\n",
		   ndev->info.healthy_clusters);
	/* Monitors (npu-top) show which clusters each process holds. */
	xa_lock(&nfile->contexts);
	xa_for_each(&nfile->contexts, id, ctx) {
		contexts++;
		mask |= ctx->cluster_mask;
	}
	xa_unlock(&nfile->contexts);
	drm_printf(p, "npu-contexts:\t%u\n", contexts);
	drm_printf(p, "npu-clusters:\t0x%x\n", mask);
	drm_show_memory_stats(p, file);
}

static const struct file_operations npu_fops = {
	.owner = THIS_MODULE,
	DRM_ACCEL_FOPS,
	.show_fdinfo = drm_show_fdinfo,
};

static const struct drm_driver npu_drm_driver = {
	.driver_features = DRIVER_COMPUTE_ACCEL | DRIVER_GEM | DRIVER_SYNCOBJ |
			   DRIVER_SYNCOBJ_TIMELINE,
	.open = npu_open,
	.postclose = npu_postclose,
	.show_fdinfo = npu_show_fdinfo,
	.gem_create_object = npu_gem_create_object,
	.gem_prime_import = npu_gem_prime_import,
	.gem_prime_import_sg_table = npu_gem_prime_import_sg_table,
	.ioctls = npu_ioctls,
	.num_ioctls = ARRAY_SIZE(npu_ioctls),
	.fops = &npu_fops,
	.name = NPU_DRIVER_NAME,
	.desc = NPU_DRIVER_DESC,
	.major = NPU_DRIVER_MAJOR,
	.minor = NPU_DRIVER_MINOR,
};

/* Last reference to the DRM device: every file is closed by now. */
static void npu_drm_release(struct drm_device *dev, void *res)
{
	struct npu_device *ndev = to_npu_device(dev);

	npu_sched_fini(ndev);
	drm_mm_takedown(&ndev->sram_mm);
	xa_destroy(&ndev->contexts);
	ida_destroy(&ndev->asids);
}

static int npu_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct npu_device *ndev;
	int ret;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	pci_set_master(pdev);
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(52));
	if (ret)
		return ret;
	ret = pcim_iomap_regions(pdev, BIT(0), NPU_DRIVER_NAME);
	if (ret)
		return ret;

	ndev = devm_drm_dev_alloc(&pdev->dev, &npu_drm_driver,
				  struct npu_device, drm);
	if (IS_ERR(ndev))
		return PTR_ERR(ndev);
	ndev->pdev = pdev;
	ndev->regs = pcim_iomap_table(pdev)[0];
	pci_set_drvdata(pdev, ndev);
	ret = drmm_mutex_init(&ndev->drm, &ndev->reset_lock);
	if (ret)
		return ret;
	ret = drmm_mutex_init(&ndev->drm, &ndev->ctx_lock);
	if (ret)
		return ret;
	ret = drmm_mutex_init(&ndev->drm, &ndev->bo_lock);
	if (ret)
		return ret;
	spin_lock_init(&ndev->reg64_lock);
	INIT_LIST_HEAD(&ndev->bos);
	xa_init_flags(&ndev->contexts, XA_FLAGS_ALLOC1);
	ida_init(&ndev->asids);
	npu_fault_init(ndev);

	scoped_guard(mutex, &ndev->reset_lock)
		ret = npu_hw_init(ndev);
	if (ret)
		return ret;
	ret = npu_queue_init(ndev);
	if (ret)
		return ret;
	scoped_guard(mutex, &ndev->reset_lock)
		npu_hw_start_queues(ndev);
	ndev->free_clusters = ndev->info.healthy_mask;
	drm_mm_init(&ndev->sram_mm, 0, ndev->info.sram_size);
	ret = npu_sched_init(ndev);
	if (ret) {
		drm_mm_takedown(&ndev->sram_mm);
		return ret;
	}
	ret = drmm_add_action_or_reset(&ndev->drm, npu_drm_release, NULL);
	if (ret)
		return ret;
	ret = npu_coredump_init(ndev);
	if (ret)
		return ret;
	ret = npu_scrub_init(ndev);
	if (ret)
		return ret;
	ret = npu_queue_irq_init(ndev);
	if (ret)
		return ret;
	ret = drm_dev_register(&ndev->drm, 0);
	if (ret)
		return ret;
	npu_debugfs_init(ndev);
	npu_pm_init(ndev);
	drm_info(&ndev->drm, "M100 %u.%u: %u clusters (%u healthy, fuse mask 0x%x) x %u TPBs, %u MiB SRAM, %u MHz\n",
		 NPU_VERSION_MAJOR(ndev->info.hw_version),
		 NPU_VERSION_MINOR(ndev->info.hw_version), ndev->info.clusters,
		 ndev->info.healthy_clusters, ndev->info.defect_mask,
		 ndev->info.tpbs_per_cluster, ndev->info.sram_size >> 20,
		 ndev->info.clock_mhz);
	return 0;
}

static void npu_remove(struct pci_dev *pdev)
{
	struct npu_device *ndev = pci_get_drvdata(pdev);

	/* The PCI core resumed the device before calling remove. */
	npu_pm_fini(ndev);
	drm_dev_unplug(&ndev->drm);
	guard(mutex)(&ndev->reset_lock);
	npu_hw_fini(ndev);
	/* Jobs on the hardware are lost; queued ones fail in run_job. */
	for (unsigned int i = 0; i < NPU_HW_NUM_QUEUES; i++)
		npu_queue_cancel(&ndev->queues[i], -ENODEV);
	npu_coredump_cancel(ndev);
}

static const struct pci_device_id npu_pci_ids[] = {
	{ PCI_DEVICE(NPU_PCI_VENDOR_ID, NPU_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, npu_pci_ids);

static struct pci_driver npu_pci_driver = {
	.name = NPU_DRIVER_NAME,
	.id_table = npu_pci_ids,
	.probe = npu_probe,
	.remove = npu_remove,
	/* pci_register_driver() copies these over driver.dev_groups. */
	.dev_groups = npu_sysfs_groups,
	.driver.pm = pm_ptr(&npu_pm_ops),
};
module_pci_driver(npu_pci_driver);

MODULE_AUTHOR("The M100 NPU authors");
MODULE_DESCRIPTION("DRM accel driver for the M100 dataflow NPU");
MODULE_LICENSE("Dual MIT/GPL");
