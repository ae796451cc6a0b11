// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Observability and fault injection.
 *
 * sysfs (on the PCI device): geometry, defect mask, busy time, resets,
 * queue depths, NoC link bytes.  debugfs (accel/<minor>/): BO and context lists, fault
 * injection (hang, MMU fault, failing reset) and a reset trigger.
 *
 * Fault injection: each knob is a struct npu_fault.  On a kernel with
 * CONFIG_FAULT_INJECTION it is a fault_attr with its own debugfs directory
 * (fail_hang/, fail_mmu/, fail_reset/: probability, interval, times, ...);
 * Debian's stock kernel has no fault injection, so there it is a plain
 * counter.  Both kernels have the counter files inject_hang, inject_fault
 * and inject_reset_fail: writing N makes the next N events fail (on a
 * fault-injection kernel by setting the fault_attr to probability 100,
 * interval 1, times N), so tests written against the counters run on both.
 *
 * Copyright (c) 2026 The M100 NPU authors
 */

#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/ratelimit.h>
#include <linux/seq_file.h>
#include <linux/sysfs.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include "npu_ctx.h"
#include "npu_device.h"
#include "npu_gem.h"
#include "npu_recover.h"
#include "npu_scrub.h"

/* ---- sysfs ---- */

static struct npu_device *npu_from_dev(struct device *dev)
{
	return pci_get_drvdata(to_pci_dev(dev));
}

static ssize_t geometry_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	const struct drm_npu_device_info *i = &npu_from_dev(dev)->info;

	return sysfs_emit(buf,
			  "clusters=%u tpbs=%u mesh=%ux%u queues=%u sram=%u hbsm=%u clock_mhz=%u\n",
			  i->clusters, i->tpbs_per_cluster, i->mesh_x,
			  i->mesh_y, i->queues, i->sram_size, i->hbsm_size,
			  i->clock_mhz);
}
static DEVICE_ATTR_RO(geometry);

static ssize_t defect_mask_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "0x%x\n", npu_from_dev(dev)->info.defect_mask);
}
static DEVICE_ATTR_RO(defect_mask);

static ssize_t healthy_mask_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "0x%x\n", npu_from_dev(dev)->info.healthy_mask);
}
static DEVICE_ATTR_RO(healthy_mask);

static ssize_t free_clusters_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	struct npu_device *ndev = npu_from_dev(dev);
	u32 free;

	mutex_lock(&ndev->ctx_lock);
	free = ndev->free_clusters;
	mutex_unlock(&ndev->ctx_lock);
	return sysfs_emit(buf, "0x%x\n", free);
}
static DEVICE_ATTR_RO(free_clusters);

/* One number per cluster: nanoseconds it spent in jobs. */
static ssize_t busy_ns_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	struct npu_device *ndev = npu_from_dev(dev);
	int len = 0;

	for (u32 c = 0; c < ndev->info.clusters; c++)
		len += sysfs_emit_at(buf, len, "%s%llu", c ? " " : "",
				     atomic64_read(&ndev->stats.cluster_busy_ns[c]));
	return len + sysfs_emit_at(buf, len, "\n");
}
static DEVICE_ATTR_RO(busy_ns);

static ssize_t reset_count_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lld\n",
			  atomic64_read(&npu_from_dev(dev)->stats.resets));
}
static DEVICE_ATTR_RO(reset_count);

/* One number per queue: jobs on the hardware now. */
static ssize_t queue_depth_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct npu_device *ndev = npu_from_dev(dev);
	int len = 0;

	for (u32 i = 0; i < NPU_HW_NUM_QUEUES; i++) {
		struct npu_queue *q = &ndev->queues[i];
		struct list_head *pos;
		unsigned long flags;
		u32 n = 0;

		spin_lock_irqsave(&q->lock, flags);
		list_for_each(pos, &q->inflight)
			n++;
		spin_unlock_irqrestore(&q->lock, flags);
		len += sysfs_emit_at(buf, len, "%s%u", i ? " " : "", n);
	}
	return len + sysfs_emit_at(buf, len, "\n");
}
static DEVICE_ATTR_RO(queue_depth);

/*
 * One number per directed NoC link (mesh_x * mesh_y * 4): bytes it carried,
 * from the device's performance counters.  npu-top draws its heat map
 * from the deltas.
 */
static ssize_t link_bytes_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	struct npu_device *ndev = npu_from_dev(dev);
	u32 links = ndev->info.mesh_x * ndev->info.mesh_y * NPU_HW_LINK_DIRS;
	int len = 0, idx;

	bool awake;

	if (!drm_dev_enter(&ndev->drm, &idx))
		return -ENODEV;
	/* Not woken up for this: D3hot cleared the counters (zeros). */
	awake = npu_pm_get_if_active(ndev);
	for (u32 l = 0; l < links && l < NPU_HW_MAX_LINKS; l++)
		len += sysfs_emit_at(buf, len, "%s%llu", l ? " " : "",
				     awake ? npu_rd64(ndev, NPU_REG_PERF_LINK_BYTES(l)) : 0);
	if (awake)
		npu_pm_put(ndev);
	drm_dev_exit(idx);
	return len + sysfs_emit_at(buf, len, "\n");
}
static DEVICE_ATTR_RO(link_bytes);

/* Runtime suspends (to D3hot) and resumes since probe. */
static ssize_t suspend_count_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lld\n",
			  atomic64_read(&npu_from_dev(dev)->pm_suspends));
}
static DEVICE_ATTR_RO(suspend_count);

static ssize_t resume_count_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lld\n",
			  atomic64_read(&npu_from_dev(dev)->pm_resumes));
}
static DEVICE_ATTR_RO(resume_count);

static struct attribute *npu_attrs[] = {
	&dev_attr_geometry.attr,
	&dev_attr_defect_mask.attr,
	&dev_attr_healthy_mask.attr,
	&dev_attr_free_clusters.attr,
	&dev_attr_busy_ns.attr,
	&dev_attr_reset_count.attr,
	&dev_attr_queue_depth.attr,
	&dev_attr_link_bytes.attr,
	&dev_attr_suspend_count.attr,
	&dev_attr_resume_count.attr,
	NULL,
};

static const struct attribute_group npu_attr_group = {
	.name = "npu",
	.attrs = npu_attrs,
};

const struct attribute_group *npu_sysfs_groups[] = {
	&npu_attr_group,
	NULL,
};

/* ---- fault injection ---- */

static void npu_fault_init_one(struct npu_fault *f)
{
#ifdef CONFIG_FAULT_INJECTION
	f->attr = (struct fault_attr)FAULT_ATTR_INITIALIZER;
	/* A lock of its own for lockdep (the initializer's is static). */
	ratelimit_state_init(&f->attr.ratelimit_state, 0,
			     DEFAULT_RATELIMIT_BURST);
	/* One line per injected fault; 2 would dump the stack each time. */
	f->attr.verbose = 1;
#else
	atomic_set(&f->count, 0);
#endif
}

/* Every knob disarmed; before anything can consult one (probe). */
void npu_fault_init(struct npu_device *ndev)
{
	npu_fault_init_one(&ndev->inject_hang);
	npu_fault_init_one(&ndev->inject_fault);
	npu_fault_init_one(&ndev->inject_reset_fail);
}

/**
 * npu_fault_hit - should this event fail?
 * @f: the knob.
 *
 * Consumes one injection when it returns true.  Called where the event
 * happens (job start, device reset), which is never the submitting task:
 * a task's fail-nth does not reach these knobs.
 *
 * Return: true to inject the fault.
 */
bool npu_fault_hit(struct npu_fault *f)
{
#ifdef CONFIG_FAULT_INJECTION
	return should_fail(&f->attr, 1);
#else
	return atomic_dec_if_positive(&f->count) >= 0;
#endif
}

/* inject_<name>: read the failures left, write N for "the next N events". */
static int npu_fault_count_get(void *data, u64 *val)
{
	struct npu_fault *f = data;
	s64 n;

#ifdef CONFIG_FAULT_INJECTION
	n = f->attr.probability ? atomic_read(&f->attr.times) : 0;
#else
	n = atomic_read(&f->count);
#endif
	*val = n;
	return 0;
}

static int npu_fault_count_set(void *data, u64 val)
{
	struct npu_fault *f = data;

	if (val > INT_MAX)
		return -EINVAL;
#ifdef CONFIG_FAULT_INJECTION
	/* times first: a consumer never sees probability 100 with old times. */
	atomic_set(&f->attr.times, 0);
	f->attr.interval = 1;
	atomic_set(&f->attr.space, 0);
	f->attr.task_filter = false;
	f->attr.probability = val ? 100 : 0;
	atomic_set(&f->attr.times, val);
#else
	atomic_set(&f->count, val);
#endif
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(npu_fault_count_fops, npu_fault_count_get,
			 npu_fault_count_set, "%lld\n");

static void npu_fault_debugfs(struct dentry *root, const char *counter,
			      const char *dir, struct npu_fault *f)
{
	debugfs_create_file_unsafe(counter, 0600, root, f,
				   &npu_fault_count_fops);
#ifdef CONFIG_FAULT_INJECTION
	fault_create_debugfs_attr(dir, root, &f->attr);
#endif
}

/* ---- debugfs ---- */

static int npu_bos_show(struct seq_file *m, void *unused)
{
	struct npu_device *ndev = m->private;
	struct npu_bo *bo;

	seq_puts(m, "size flags pid refs\n");
	mutex_lock(&ndev->bo_lock);
	list_for_each_entry(bo, &ndev->bos, dev_link)
		seq_printf(m, "%zu 0x%x %d %u\n", bo->base.base.size, bo->flags,
			   bo->pid, kref_read(&bo->base.base.refcount));
	mutex_unlock(&ndev->bo_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(npu_bos);

static int npu_contexts_show(struct seq_file *m, void *unused)
{
	struct npu_device *ndev = m->private;
	struct npu_ctx *ctx;
	unsigned long gid;

	seq_puts(m, "gid id pid queue clusters mask banned submitted completed failed\n");
	mutex_lock(&ndev->ctx_lock);
	xa_for_each(&ndev->contexts, gid, ctx)
		seq_printf(m, "%lu %u %d %u %u 0x%x %d %lld %lld %lld\n", gid,
			   ctx->id, ctx->pid, ctx->queue->index, ctx->nclusters,
			   ctx->cluster_mask, atomic_read(&ctx->banned),
			   atomic64_read(&ctx->jobs_submitted),
			   atomic64_read(&ctx->jobs_completed),
			   atomic64_read(&ctx->jobs_failed));
	mutex_unlock(&ndev->ctx_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(npu_contexts);

struct npu_reset_work {
	struct work_struct work;
	struct npu_device *ndev;
	int ret;
};

static void npu_reset_work_fn(struct work_struct *work)
{
	struct npu_reset_work *rw = container_of(work, struct npu_reset_work, work);

	rw->ret = npu_recover(rw->ndev, NULL);
}

/* Write anything: reset the device now (on the timeout workqueue). */
static ssize_t npu_reset_write(struct file *f, const char __user *buf,
			       size_t len, loff_t *off)
{
	struct npu_device *ndev = file_inode(f)->i_private;
	struct npu_reset_work rw = { .ndev = ndev };
	int idx;

	if (!drm_dev_enter(&ndev->drm, &idx))
		return -ENODEV;
	/* npu_recover() expects an awake device. */
	rw.ret = npu_pm_get(ndev);
	if (rw.ret) {
		drm_dev_exit(idx);
		return rw.ret;
	}
	INIT_WORK_ONSTACK(&rw.work, npu_reset_work_fn);
	queue_work(ndev->reset_wq, &rw.work);
	flush_work(&rw.work);
	destroy_work_on_stack(&rw.work);
	npu_pm_put(ndev);
	drm_dev_exit(idx);
	return rw.ret ? rw.ret : len;
}

static const struct file_operations npu_reset_fops = {
	.owner = THIS_MODULE,
	.write = npu_reset_write,
};

void npu_debugfs_init(struct npu_device *ndev)
{
	struct dentry *root = ndev->drm.accel ? ndev->drm.accel->debugfs_root : NULL;

	if (IS_ERR_OR_NULL(root))
		return;
	debugfs_create_file("bos", 0444, root, ndev, &npu_bos_fops);
	debugfs_create_file("contexts", 0444, root, ndev, &npu_contexts_fops);
	debugfs_create_file("reset", 0200, root, ndev, &npu_reset_fops);
	npu_scrub_debugfs_init(ndev, root);
	/* The next N jobs hang / fault, the next N resets fail. */
	npu_fault_debugfs(root, "inject_hang", "fail_hang", &ndev->inject_hang);
	npu_fault_debugfs(root, "inject_fault", "fail_mmu", &ndev->inject_fault);
	npu_fault_debugfs(root, "inject_reset_fail", "fail_reset",
			  &ndev->inject_reset_fail);
}
