/* SPDX-License-Identifier: MIT */
/*
 * Device backends.  Both run the same command streams: a program
 * (struct npu_hw_prog + instructions) in a buffer, the buffers it uses,
 * a partition of logical clusters.  The kernel backend hands them to the
 * npu driver; the emulator backend plays the driver's part itself in front
 * of an in-process device core.
 */
#ifndef NPU_DEV_H
#define NPU_DEV_H

#include <stdbool.h>
#include <stdint.h>

#include "npu_internal.h"

struct npu_dev_ops;
struct npu_trace_rec;

/* Flags of npu_dev_bo_create(). */
#define NPU_DEV_BO_DEVICE_RO	(1u << 0)	/* the device only reads it */

/* Flags of a buffer a job uses. */
#define NPU_DEV_USE_READ	(1u << 0)
#define NPU_DEV_USE_WRITE	(1u << 1)

/* A buffer visible to the device and mapped in this process. */
typedef struct npu_dev_bo {
	void *host;		/* CPU mapping */
	uint64_t dev_addr;	/* device virtual address (any context) */
	size_t size;
	uint32_t flags;
	uint32_t handle;	/* backend's own id */
} npu_dev_bo;

/* A partition of clusters with its own address space and queue. */
typedef struct npu_dev_ctx {
	struct npu_device *dev;
	uint32_t nclusters;
	uint32_t cluster_mask;	/* physical */
	uint8_t cluster_map[16];
	uint32_t queue;
	uint32_t id;		/* backend's own id */
} npu_dev_ctx;

/* One buffer of a job. */
typedef struct npu_dev_use {
	npu_dev_bo *bo;
	uint32_t flags;		/* NPU_DEV_USE_* */
} npu_dev_use;

/* A submitted job; npu_dev_job_wait() then npu_dev_job_free(). */
typedef struct npu_dev_job npu_dev_job;

struct npu_device {
	const struct npu_dev_ops *ops;
	npu_device_info info;
	/* NPU_REG_ISA_VERSION: the program version it runs, major << 16 | minor */
	uint32_t isa_version;
};

struct npu_dev_ops {
	void (*close)(struct npu_device *dev);
	npu_status (*bo_create)(struct npu_device *dev, size_t size,
				uint32_t flags, npu_dev_bo **out);
	void (*bo_free)(struct npu_device *dev, npu_dev_bo *bo);
	/*
	 * Optional: the host has written device read-only @bo for the last
	 * time (a context's programs and constants, once relocated), so the
	 * backend may keep what it derives from the contents.  A write to it
	 * afterwards is a bug: the emulator makes its pages read-only.
	 */
	void (*bo_seal)(struct npu_device *dev, npu_dev_bo *bo);
	npu_status (*ctx_create)(struct npu_device *dev, uint32_t clusters,
				 npu_dev_ctx **out);
	void (*ctx_destroy)(npu_dev_ctx *ctx);
	/* Run the program at @cmd + @offset (@size bytes) on @ctx. */
	npu_status (*submit)(npu_dev_ctx *ctx, npu_dev_bo *cmd, uint32_t offset,
			     uint32_t size, const npu_dev_use *uses,
			     uint32_t nuses, uint32_t timeout_ms,
			     npu_dev_job **out);
	/* Wait for @job (timeout_ns < 0: forever); its result. */
	npu_status (*job_wait)(npu_dev_job *job, int64_t timeout_ns);
	/* Simulated cycles the job took (0 if the backend cannot tell). */
	uint64_t (*job_cycles)(const npu_dev_job *job);
	void (*job_free)(npu_dev_job *job);
	/*
	 * Optional (NULL: the backend cannot see the device's timeline, as
	 * the kernel driver cannot): record the spans of the jobs submitted
	 * on @ctx from now on into @rec (trace/trace_rec.h), or stop (NULL).
	 * @rec is the caller's and must outlive the jobs submitted with it.
	 */
	void (*ctx_trace)(npu_dev_ctx *ctx, struct npu_trace_rec *rec);
	/* Performance counters (npu_device_read_counters); out is zeroed. */
	npu_status (*counters)(struct npu_device *dev, npu_device_counters *out);
	/*
	 * Optional: the bytes both DMA engines moved, as the counters give
	 * them, without reading the rest (~220 registers, under the
	 * device's lock); 0 when it cannot tell.
	 */
	uint64_t (*dma_bytes)(struct npu_device *dev);
};

static inline npu_status npu_dev_bo_create(struct npu_device *dev, size_t size,
					   uint32_t flags, npu_dev_bo **out)
{
	return dev->ops->bo_create(dev, size, flags, out);
}

static inline void npu_dev_bo_free(struct npu_device *dev, npu_dev_bo *bo)
{
	if (bo)
		dev->ops->bo_free(dev, bo);
}

static inline void npu_dev_bo_seal(struct npu_device *dev, npu_dev_bo *bo)
{
	if (dev->ops->bo_seal)
		dev->ops->bo_seal(dev, bo);
}

/*
 * The bytes both DMA engines moved (npu_device_counters.dma_bytes),
 * 0 when the device cannot tell: a decode step reads them before and
 * after each token.
 */
uint64_t npu_dev_dma_bytes(struct npu_device *dev);

/* Backends. */
npu_status npu_emu_open(const char *spec, struct npu_device **out);
npu_status npu_kernel_open(const char *path, struct npu_device **out);
/* Kernel devices present: fills up to @cap entries, returns the count. */
size_t npu_kernel_list(npu_device_info *infos, size_t cap);

#endif /* NPU_DEV_H */
