/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Copyright (c) 2026 The M100 NPU authors */

#ifndef NPU_GEM_H
#define NPU_GEM_H

#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_mm.h>

struct dma_buf;
struct dma_buf_attachment;
struct npu_file;

/**
 * struct npu_bo - a GEM shmem buffer object
 * @base: the shmem object.
 * @flags: DRM_NPU_BO_* from creation.
 * @dev_link: entry in npu_device.bos (protected by npu_device.bo_lock).
 * @pid: creator, for debugfs.
 * @lock: protects @bindings.
 * @bindings: one &struct npu_bo_binding per file holding a handle.
 */
struct npu_bo {
	struct drm_gem_shmem_object base;
	u32 flags;
	struct list_head dev_link;
	pid_t pid;
	struct mutex lock;	/* bindings */
	struct list_head bindings;
};

/**
 * struct npu_bo_binding - a BO as one file sees it
 * @link: entry in npu_bo.bindings.
 * @file_link: entry in npu_file.bindings (protected by npu_file.lock).
 * @nfile: the file.
 * @va: the BO's device address range in @nfile's address space.
 * @ctx_mapped: bit i set: mapped in the page tables of @nfile's context
 *	with id i + 1.  Changed under npu_file.lock.
 */
struct npu_bo_binding {
	struct list_head link;
	struct list_head file_link;
	struct npu_file *nfile;
	struct drm_mm_node va;
	unsigned long ctx_mapped;
};

static inline struct npu_bo *to_npu_bo(struct drm_gem_object *obj)
{
	return container_of(to_drm_gem_shmem_obj(obj), struct npu_bo, base);
}

struct drm_gem_object *npu_gem_create_object(struct drm_device *dev,
					     size_t size);
struct drm_gem_object *npu_gem_prime_import(struct drm_device *dev,
					    struct dma_buf *dma_buf);
struct drm_gem_object *
npu_gem_prime_import_sg_table(struct drm_device *dev,
			      struct dma_buf_attachment *attach,
			      struct sg_table *sgt);
struct npu_bo_binding *npu_bo_binding_find(struct npu_bo *bo,
					   struct npu_file *nfile);

int npu_ioctl_bo_create(struct drm_device *dev, void *data,
			struct drm_file *file);
int npu_ioctl_bo_mmap_offset(struct drm_device *dev, void *data,
			     struct drm_file *file);
int npu_ioctl_bo_info(struct drm_device *dev, void *data,
		      struct drm_file *file);

#endif /* NPU_GEM_H */
