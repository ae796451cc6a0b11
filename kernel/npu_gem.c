// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Buffer objects: GEM shmem memory with a device address per file.
 *
 * When a file gets a handle to a BO (creation or import), the BO gets a
 * range in that file's device address space (a binding).  Contexts of the
 * file map it into their page tables on first use by a job (npu_submit.c).
 * When the handle goes away, the BO is unmapped from those contexts once
 * its jobs are done.
 *
 * dma-buf (PRIME): npu BOs export through the DRM core's helpers.  An npu
 * BO exported by any file of this device imports as the same GEM object;
 * any other dma-buf imports through an attachment whose sg_table (mapped
 * for this device) becomes the BO's pages: its device address is bound like
 * any other BO's, and CPU mmap of it is forwarded to the exporter.
 *
 * Copyright (c) 2026 The M100 NPU authors
 */

#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_prime.h>
#include <drm/drm_print.h>
#include <drm/gpu_scheduler.h>

#include "npu_ctx.h"
#include "npu_device.h"
#include "npu_file.h"
#include "npu_gem.h"
#include "npu_mmu.h"

/* How long closing a handle waits for the BO's jobs before unmapping. */
#define NPU_BO_IDLE_TIMEOUT	(30 * HZ)

struct npu_bo_binding *npu_bo_binding_find(struct npu_bo *bo,
					   struct npu_file *nfile)
{
	struct npu_bo_binding *b;

	lockdep_assert_held(&bo->lock);
	list_for_each_entry(b, &bo->bindings, link)
		if (b->nfile == nfile)
			return b;
	return NULL;
}

/*
 * Count the BO and list it for debugfs when it gets its first handle, not
 * in npu_gem_create_object(): drm_gem_shmem_create() frees an object whose
 * set-up failed with kfree(), without npu_bo_free(), so a BO registered
 * there would stay on the list, freed, and be counted forever (found by
 * npu-guest-faults, bo_create).  Every BO user space sees has had a handle.
 */
static void npu_bo_register(struct npu_bo *bo)
{
	struct npu_device *ndev = to_npu_device(bo->base.base.dev);

	mutex_lock(&ndev->bo_lock);
	if (list_empty(&bo->dev_link)) {
		list_add_tail(&bo->dev_link, &ndev->bos);
		atomic64_inc(&ndev->stats.bo_count);
		atomic64_add(bo->base.base.size, &ndev->stats.bo_bytes);
	}
	mutex_unlock(&ndev->bo_lock);
}

/*
 * Wait (up to NPU_BO_IDLE_TIMEOUT in all) for this device's jobs that use
 * @obj.  A BO shared through a dma-buf also carries the fences of other
 * users (an exporter, another driver): closing a handle does not wait for
 * those, they do not use this file's mapping.
 */
static void npu_bo_wait_jobs(struct npu_device *ndev,
			     struct drm_gem_object *obj)
{
	long left = NPU_BO_IDLE_TIMEOUT;
	struct dma_resv_iter cursor;
	struct dma_fence *fence;

	dma_resv_iter_begin(&cursor, obj->resv, DMA_RESV_USAGE_BOOKKEEP);
	dma_resv_for_each_fence_unlocked(&cursor, fence) {
		struct drm_sched_fence *sf = to_drm_sched_fence(fence);
		bool ours = false;

		for (unsigned int q = 0; sf && q < NPU_HW_NUM_QUEUES; q++)
			ours |= sf->sched == &ndev->queues[q].sched;
		if (!ours || left <= 0)
			continue;
		left = dma_fence_wait_timeout(fence, false, left);
	}
	dma_resv_iter_end(&cursor);
}

static int npu_bo_open(struct drm_gem_object *obj, struct drm_file *file)
{
	struct npu_file *nfile = file->driver_priv;
	struct npu_bo *bo = to_npu_bo(obj);
	struct npu_bo_binding *b;
	u64 align = obj->size >= SZ_2M ? SZ_2M :
		    obj->size >= SZ_64K ? SZ_64K : NPU_MMU_PAGE_SIZE;
	int ret;

	npu_bo_register(bo);
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	b->nfile = nfile;
	mutex_lock(&nfile->lock);
	ret = drm_mm_insert_node_generic(&nfile->va_mm, &b->va, obj->size,
					 align, 0, DRM_MM_INSERT_BEST);
	if (!ret) {
		list_add_tail(&b->file_link, &nfile->bindings);
		mutex_lock(&bo->lock);
		list_add_tail(&b->link, &bo->bindings);
		mutex_unlock(&bo->lock);
	}
	mutex_unlock(&nfile->lock);
	if (ret) {
		kfree(b);
		return ret == -ENOSPC ? -ENOMEM : ret;
	}
	return 0;
}

static void npu_bo_close(struct drm_gem_object *obj, struct drm_file *file)
{
	struct npu_file *nfile = file->driver_priv;
	struct npu_bo *bo = to_npu_bo(obj);
	struct npu_bo_binding *b;
	unsigned long bit;

	/* Jobs still using the BO must not lose their mapping. */
	npu_bo_wait_jobs(nfile->ndev, obj);

	mutex_lock(&nfile->lock);
	mutex_lock(&bo->lock);
	b = npu_bo_binding_find(bo, nfile);
	if (b)
		list_del(&b->link);
	mutex_unlock(&bo->lock);
	if (b) {
		list_del(&b->file_link);
		for_each_set_bit(bit, &b->ctx_mapped, DRM_NPU_MAX_CTX_PER_FILE) {
			struct npu_ctx *ctx = xa_load(&nfile->contexts, bit + 1);

			if (ctx)
				npu_vm_unmap(ctx->vm, b->va.start, obj->size);
		}
		drm_mm_remove_node(&b->va);
	}
	mutex_unlock(&nfile->lock);
	kfree(b);
}

static void npu_bo_free(struct drm_gem_object *obj)
{
	struct npu_device *ndev = to_npu_device(obj->dev);
	struct npu_bo *bo = to_npu_bo(obj);

	mutex_lock(&ndev->bo_lock);
	if (!list_empty(&bo->dev_link)) {
		list_del_init(&bo->dev_link);
		atomic64_dec(&ndev->stats.bo_count);
		atomic64_sub(obj->size, &ndev->stats.bo_bytes);
	}
	mutex_unlock(&ndev->bo_lock);
	WARN_ON(!list_empty(&bo->bindings));
	mutex_destroy(&bo->lock);
	drm_gem_shmem_free(&bo->base);
}

/*
 * An imported BO's mapping is the exporter's (drm_gem_shmem_mmap forwards
 * it with dma_buf_mmap).  Some exporters leave VM_DONTEXPAND clear, which
 * drm_gem_mmap_obj() warns about: the mapping must not grow either way.
 */
static int npu_bo_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma)
{
	int ret;

	if (to_npu_bo(obj)->flags & DRM_NPU_BO_NO_MMAP)
		return -EPERM;
	ret = drm_gem_shmem_object_mmap(obj, vma);
	if (!ret && obj->import_attach)
		vm_flags_set(vma, VM_DONTEXPAND);
	return ret;
}

static const struct drm_gem_object_funcs npu_bo_funcs = {
	.free = npu_bo_free,
	.open = npu_bo_open,
	.close = npu_bo_close,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = npu_bo_mmap,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

struct drm_gem_object *npu_gem_create_object(struct drm_device *dev,
					     size_t size)
{
	struct npu_bo *bo = kzalloc(sizeof(*bo), GFP_KERNEL);

	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->base.base.funcs = &npu_bo_funcs;
	bo->pid = task_tgid_nr(current);
	mutex_init(&bo->lock);
	INIT_LIST_HEAD(&bo->bindings);
	INIT_LIST_HEAD(&bo->dev_link);	/* npu_bo_register() */
	return &bo->base.base;
}

/**
 * npu_gem_prime_import - &drm_driver.gem_prime_import
 * @dev: the DRM device.
 * @dma_buf: the buffer to import.
 *
 * The device maps whole 4 KiB pages and a BO is at most
 * DRM_NPU_MAX_BO_SIZE: any other size is refused before attaching.
 *
 * Return: the GEM object (the same one for an npu BO of this device), or
 * an ERR_PTR: -EINVAL for an empty, unaligned or too large buffer.
 */
struct drm_gem_object *npu_gem_prime_import(struct drm_device *dev,
					    struct dma_buf *dma_buf)
{
	size_t size = dma_buf->size;

	if (!size || !PAGE_ALIGNED(size) ||
	    !IS_ALIGNED(size, NPU_MMU_PAGE_SIZE) || size > DRM_NPU_MAX_BO_SIZE) {
		drm_dbg_prime(dev, "refusing a dma-buf of %zu bytes\n", size);
		return ERR_PTR(-EINVAL);
	}
	return drm_gem_prime_import(dev, dma_buf);
}

/**
 * npu_gem_prime_import_sg_table - &drm_driver.gem_prime_import_sg_table
 * @dev: the DRM device.
 * @attach: the attachment to the exporter's buffer.
 * @sgt: its pages, mapped for this device.
 *
 * Every DMA segment must start and end on a device page: the page tables
 * map 4 KiB pages.
 *
 * Return: a new BO without pages of its own, or an ERR_PTR.
 */
struct drm_gem_object *
npu_gem_prime_import_sg_table(struct drm_device *dev,
			      struct dma_buf_attachment *attach,
			      struct sg_table *sgt)
{
	struct scatterlist *sg;
	u64 total = 0;
	unsigned int i;

	for_each_sgtable_dma_sg(sgt, sg, i) {
		if (!IS_ALIGNED(sg_dma_address(sg), NPU_MMU_PAGE_SIZE) ||
		    !IS_ALIGNED(sg_dma_len(sg), NPU_MMU_PAGE_SIZE))
			return ERR_PTR(-EINVAL);
		total += sg_dma_len(sg);
	}
	if (total < attach->dmabuf->size)
		return ERR_PTR(-EINVAL);
	return drm_gem_shmem_prime_import_sg_table(dev, attach, sgt);
}

static u64 npu_bo_dev_addr(struct npu_bo *bo, struct npu_file *nfile)
{
	struct npu_bo_binding *b;
	u64 addr = 0;

	mutex_lock(&bo->lock);
	b = npu_bo_binding_find(bo, nfile);
	if (b)
		addr = b->va.start;
	mutex_unlock(&bo->lock);
	return addr;
}

int npu_ioctl_bo_create(struct drm_device *dev, void *data,
			struct drm_file *file)
{
	struct drm_npu_bo_create *args = data;
	struct drm_gem_shmem_object *shmem;
	struct npu_bo *bo;
	u32 handle;
	int ret;

	if (args->flags & ~DRM_NPU_BO_FLAGS || !args->size ||
	    args->size > DRM_NPU_MAX_BO_SIZE)
		return -EINVAL;

	shmem = drm_gem_shmem_create(dev, PAGE_ALIGN(args->size));
	/* shmem reports a failed inode allocation as -ENOSPC. */
	if (IS_ERR(shmem))
		return PTR_ERR(shmem) == -ENOSPC ? -ENOMEM : PTR_ERR(shmem);
	bo = container_of(shmem, struct npu_bo, base);
	bo->flags = args->flags;

	/* The handle comes last: nothing after it can fail. */
	ret = drm_gem_handle_create(file, &shmem->base, &handle);
	drm_gem_object_put(&shmem->base);
	if (ret)
		return ret;
	args->handle = handle;
	args->size = shmem->base.size;
	args->dev_addr = npu_bo_dev_addr(bo, file->driver_priv);
	return 0;
}

int npu_ioctl_bo_mmap_offset(struct drm_device *dev, void *data,
			     struct drm_file *file)
{
	struct drm_npu_bo_mmap_offset *args = data;
	struct drm_gem_object *obj;
	int ret;

	if (args->pad)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	if (to_npu_bo(obj)->flags & DRM_NPU_BO_NO_MMAP) {
		ret = -EPERM;
		goto out;
	}
	ret = drm_gem_create_mmap_offset(obj);
	if (!ret)
		args->offset = drm_vma_node_offset_addr(&obj->vma_node);
out:
	drm_gem_object_put(obj);
	return ret;
}

int npu_ioctl_bo_info(struct drm_device *dev, void *data,
		      struct drm_file *file)
{
	struct drm_npu_bo_info *args = data;
	struct drm_gem_object *obj;
	struct npu_bo *bo;

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	bo = to_npu_bo(obj);
	args->flags = bo->flags;
	args->size = obj->size;
	args->dev_addr = npu_bo_dev_addr(bo, file->driver_priv);
	drm_gem_object_put(obj);
	return 0;
}
