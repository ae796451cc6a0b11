/* SPDX-License-Identifier: MIT */
/*
 * uAPI of the M100 NPU DRM-accel driver (/dev/accel/accelN, driver "npu").
 *
 * Shared unchanged by the kernel driver (kernel/), libnpu and the tests.
 */
#ifndef NPU_ACCEL_H
#define NPU_ACCEL_H

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/**
 * DOC: M100 NPU uAPI
 *
 * Rules that hold for every ioctl:
 *
 * - Ioctl numbers are append-only; a struct only grows at its end.
 * - Every ``pad`` and ``reserved`` field must be zero, and every unknown
 *   flag bit must be clear: otherwise the ioctl fails with -EINVAL.
 * - Every count and size is bounded (``DRM_NPU_MAX_*``); beyond a bound the
 *   ioctl fails with -EINVAL (or -E2BIG where noted).
 * - A bad user pointer gives -EFAULT; an unknown handle -ENOENT.
 *
 * Memory: a buffer object (BO) is GEM shmem memory.  Each open file has its
 * own device virtual address space layout: a BO gets a device address
 * (``dev_addr``) in every file that holds a handle to it.  Each context has
 * its own device page tables; a BO is mapped into a context's page tables
 * the first time a job of that context lists it, at the file's address for
 * it, with the permissions the BO allows, and stays mapped until the
 * handle is closed or the context is destroyed.  A job that touches memory
 * not mapped in its own context ends with an MMU fault.
 *
 * Contexts: a context owns a partition of healthy clusters (exclusive while
 * it lives), a window of the CCB SRAM, a task queue and a priority.  Its
 * command streams name clusters by logical id 0..N-1; the driver programs
 * the logical-to-physical map, so they run unchanged whichever clusters are
 * fused.
 *
 * Jobs: DRM_IOCTL_NPU_SUBMIT queues a program (&struct npu_hw_prog in a BO)
 * on the context's queue.  Dependencies and completion use DRM syncobjs,
 * binary or timeline.  Every BO a job lists carries the job's fence in its
 * reservation object until it completes: a write fence if the job may
 * write it (DRM_NPU_BO_REF_WRITE), else a read fence (the command BO is
 * read).  A job's fence is signalled with an error
 * when the task fails: -EFAULT (MMU fault), -ETIMEDOUT (hang or timeout),
 * -EINVAL (the device refused the program), -EIO (other device error),
 * -ECANCELED (the context was destroyed or banned before it ran, or a
 * dependency failed), -ESRCH (still queued when its process was killed),
 * -ENODEV (the device was removed).
 *
 * A context whose job faulted or hung is banned: later submits fail with
 * -EIO (see &drm_npu_ctx_state).
 *
 * dma-buf (PRIME): DRM_IOCTL_PRIME_HANDLE_TO_FD exports a BO (flags
 * DRM_CLOEXEC, DRM_RDWR; its NO_MMAP and DEVICE_RO flags stay with it),
 * DRM_IOCTL_PRIME_FD_TO_HANDLE imports a dma-buf.  An npu BO of the same
 * device imports as the same BO (same handle in the exporting file); any
 * other dma-buf (udmabuf, another driver or device) becomes a BO whose
 * pages are the exporter's, used by jobs like any BO, without a copy.
 * An fd that is not open is -EBADF; one that is not a dma-buf, or a
 * dma-buf that is empty, not a whole number of 4 KiB pages, larger than
 * DRM_NPU_MAX_BO_SIZE or not in 4 KiB-aligned DMA segments, is -EINVAL.
 * CPU mmap of an imported BO (BO_MMAP_OFFSET + mmap) is forwarded to the
 * exporter (which may refuse it).  Implicit sync: for a BO shared through a
 * dma-buf (exported or imported), a job waits for the write fences in its
 * reservation if it only reads the BO, and for all of its read and write
 * fences if it may write it; jobs on unshared BOs only wait for their
 * in_syncs.
 */

#define DRM_NPU_DEV_QUERY		0x00
#define DRM_NPU_BO_CREATE		0x01
#define DRM_NPU_BO_MMAP_OFFSET		0x02
#define DRM_NPU_BO_INFO			0x03
#define DRM_NPU_CTX_CREATE		0x04
#define DRM_NPU_CTX_DESTROY		0x05
#define DRM_NPU_SUBMIT			0x06
#define DRM_NPU_STATS			0x07
#define DRM_NPU_CTX_QUERY		0x08

/* Bounds. */
#define DRM_NPU_MAX_BO_SIZE		(1ull << 32)	/* 4 GiB per BO */
#define DRM_NPU_MAX_SUBMIT_BOS		1024
#define DRM_NPU_MAX_SUBMIT_SYNCS	64
#define DRM_NPU_MAX_CTX_PER_FILE	16
#define DRM_NPU_MAX_PROG_SIZE		(64u << 20)
#define DRM_NPU_MAX_TIMEOUT_MS		60000u

/* ---- DRM_IOCTL_NPU_DEV_QUERY ---- */

/**
 * enum drm_npu_query_type - what DRM_IOCTL_NPU_DEV_QUERY returns
 * @DRM_NPU_QUERY_DEVICE: &struct drm_npu_device_info
 */
enum drm_npu_query_type {
	DRM_NPU_QUERY_DEVICE = 0,
};

/**
 * struct drm_npu_dev_query - extensible, size-versioned query
 * @type:	enum drm_npu_query_type.
 * @size:	in: size of the buffer at @pointer (0: ask for the size);
 *		out: the size the kernel knows for @type.  A smaller buffer
 *		gets the first @size bytes; a larger one gets zeros past the
 *		kernel's size (so new fields read as 0 on older kernels).
 * @pointer:	user buffer, or 0 with @size 0.
 */
struct drm_npu_dev_query {
	__u32 type;
	__u32 size;
	__u64 pointer;
};

/**
 * struct drm_npu_device_info - the device, as DRM_NPU_QUERY_DEVICE reports it
 * @hw_version:		NPU_REG_VERSION: major << 16 | minor.
 * @isa_version:	NPU_REG_ISA_VERSION: program format major << 16 | minor.
 * @caps:		NPU_REG_CAPS (NPU_CAP_*).
 * @clusters:		clusters present, healthy or not.
 * @tpbs_per_cluster:	TPBs per cluster.
 * @queues:		hardware task queues.
 * @dma_engines:	CCB DMA engines.
 * @mesh_x:		NoC mesh columns.
 * @mesh_y:		NoC mesh rows.
 * @ccb_node:		mesh node of the CCB.
 * @ddr_node:		mesh node of the DDR port.
 * @defect_mask:	fused-off clusters, bit c = cluster c.
 * @healthy_mask:	usable clusters.
 * @healthy_clusters:	popcount of @healthy_mask: the largest partition.
 * @hbsm_size:		HBSM bytes per TPB.
 * @sram_size:		CCB SRAM bytes.
 * @clock_mhz:		modelled clock.
 * @su_counters:	synchronization counters per TPB.
 * @tcu_geom:		NPU_REG_TCU_GEOM.
 * @link_bw:		NoC link bytes per cycle per direction.
 * @ddr_bw:		DDR bytes per cycle.
 * @cluster_pos:	mesh position of cluster c: x | y << 8.
 * @va_start:		first device address a BO can get.
 * @va_size:		size of the device address range for BOs.
 */
struct drm_npu_device_info {
	__u32 hw_version;
	__u32 isa_version;
	__u32 caps;
	__u32 clusters;
	__u32 tpbs_per_cluster;
	__u32 queues;
	__u32 dma_engines;
	__u32 mesh_x;
	__u32 mesh_y;
	__u32 ccb_node;
	__u32 ddr_node;
	__u32 defect_mask;
	__u32 healthy_mask;
	__u32 healthy_clusters;
	__u32 hbsm_size;
	__u32 sram_size;
	__u32 clock_mhz;
	__u32 su_counters;
	__u32 tcu_geom;
	__u32 link_bw;
	__u32 ddr_bw;
	__u32 cluster_pos[16];
	__u32 pad;
	__u64 va_start;
	__u64 va_size;
};

/* ---- Buffer objects ---- */

/* The BO cannot be mapped into user space (DRM_IOCTL_NPU_BO_MMAP_OFFSET fails). */
#define DRM_NPU_BO_NO_MMAP		(1u << 0)
/* The device may only read the BO: its mappings have no write permission. */
#define DRM_NPU_BO_DEVICE_RO		(1u << 1)
#define DRM_NPU_BO_FLAGS		(DRM_NPU_BO_NO_MMAP | DRM_NPU_BO_DEVICE_RO)

/**
 * struct drm_npu_bo_create - create a zeroed buffer object
 * @size:	in: bytes, 1..DRM_NPU_MAX_BO_SIZE; rounded up to pages.
 *		out: the rounded size.
 * @flags:	DRM_NPU_BO_*.
 * @handle:	out: GEM handle.
 * @dev_addr:	out: the BO's device address in this file's address space.
 *
 * -ENOMEM when the kernel is out of memory (also for what shmem itself
 * would report as -ENOSPC).
 */
struct drm_npu_bo_create {
	__u64 size;
	__u32 flags;
	__u32 handle;
	__u64 dev_addr;
};

/**
 * struct drm_npu_bo_mmap_offset - offset to mmap() the BO at on the fd
 * @handle:	in: GEM handle.
 * @pad:	must be zero.
 * @offset:	out: fake offset for mmap().
 */
struct drm_npu_bo_mmap_offset {
	__u32 handle;
	__u32 pad;
	__u64 offset;
};

/**
 * struct drm_npu_bo_info - what a handle is
 * @handle:	in: GEM handle.
 * @flags:	out: DRM_NPU_BO_* it was created with.
 * @size:	out: bytes.
 * @dev_addr:	out: device address in this file's address space.
 */
struct drm_npu_bo_info {
	__u32 handle;
	__u32 flags;
	__u64 size;
	__u64 dev_addr;
};

/* ---- Contexts ---- */

/**
 * enum drm_npu_priority - scheduling priority of a context's jobs on its queue
 * @DRM_NPU_PRIORITY_LOW: behind normal work.
 * @DRM_NPU_PRIORITY_NORMAL: the default.
 * @DRM_NPU_PRIORITY_HIGH: ahead of normal work; needs CAP_SYS_NICE.
 */
enum drm_npu_priority {
	DRM_NPU_PRIORITY_LOW = 0,
	DRM_NPU_PRIORITY_NORMAL = 1,
	DRM_NPU_PRIORITY_HIGH = 2,
};

/**
 * struct drm_npu_ctx_create - create a context over a cluster partition
 * @clusters:	in: partition size, 1..healthy clusters.  -ENOSPC when not
 *		that many healthy clusters are free (the kernel log says how
 *		many are); -EINVAL when more than the device has healthy.
 * @priority:	in: enum drm_npu_priority.
 * @flags:	in: must be zero.
 * @ctx_id:	out: context id, for submit and destroy.
 * @queue:	out: the hardware queue its jobs run on.
 * @cluster_mask: out: physical clusters of the partition.
 * @sram_base:	out: start of its CCB SRAM window.
 * @sram_size:	out: size of its CCB SRAM window.
 * @cluster_map: out: logical cluster i runs on physical cluster_map[i].
 */
struct drm_npu_ctx_create {
	__u32 clusters;
	__u32 priority;
	__u32 flags;
	__u32 ctx_id;
	__u32 queue;
	__u32 cluster_mask;
	__u32 sram_base;
	__u32 sram_size;
	__u8 cluster_map[16];
};

/**
 * struct drm_npu_ctx_destroy - destroy a context
 * @ctx_id:	in: from DRM_IOCTL_NPU_CTX_CREATE.
 * @pad:	must be zero.
 *
 * Jobs not yet on the hardware are cancelled (their fences signal
 * -ECANCELED); those already written to the ring are waited for, a hung
 * one until the timeout and reset end it.  When this returns, every fence
 * of the context has signalled and the partition is free.
 */
struct drm_npu_ctx_destroy {
	__u32 ctx_id;
	__u32 pad;
};

/**
 * enum drm_npu_ctx_state - health of a context
 * @DRM_NPU_CTX_OK: jobs can be submitted.
 * @DRM_NPU_CTX_BANNED: a job faulted or hung; submits fail with -EIO.
 */
enum drm_npu_ctx_state {
	DRM_NPU_CTX_OK = 0,
	DRM_NPU_CTX_BANNED = 1,
};

/**
 * struct drm_npu_ctx_query - state of a context
 * @ctx_id:	in.
 * @state:	out: enum drm_npu_ctx_state.
 * @jobs_submitted: out.
 * @jobs_completed: out: done, with or without error.
 * @jobs_failed: out: done with an error, whether the device failed the job
 *		or it never reached the device (cancelled behind a ban, a
 *		failed dependency, no device): while it is 0, every
 *		completed job of the context succeeded.
 * @last_error:	out: errno (positive) of the job that got it banned, else 0.
 * @pad:	must be zero.
 * @device_cycles: out: simulated device cycles of the context's completed jobs.
 * @job_seqno:	in: a job's seqno from DRM_IOCTL_NPU_SUBMIT, or 0.
 * @job_cycles:	out: that job's simulated cycles when @job_found.
 * @job_found:	out: 1 if @job_seqno is one of the context's last
 *		DRM_NPU_CTX_RECENT_JOBS completed jobs, else 0.
 * @pad2:	must be zero.
 *
 * The fields from @device_cycles on were added later; an older caller's
 * smaller struct simply does not see them (DRM zero-fills and truncates).
 */
struct drm_npu_ctx_query {
	__u32 ctx_id;
	__u32 state;
	__u64 jobs_submitted;
	__u64 jobs_completed;
	__u64 jobs_failed;
	__u32 last_error;
	__u32 pad;
	__u64 device_cycles;
	__u64 job_seqno;
	__u64 job_cycles;
	__u32 job_found;
	__u32 pad2;
};

#define DRM_NPU_CTX_RECENT_JOBS		256

/* ---- Submission ---- */

#define DRM_NPU_BO_REF_READ		(1u << 0)
#define DRM_NPU_BO_REF_WRITE		(1u << 1)

/**
 * struct drm_npu_bo_ref - a BO a job uses
 * @handle:	GEM handle.
 * @flags:	DRM_NPU_BO_REF_READ and/or _WRITE (at least one).  WRITE on a
 *		DRM_NPU_BO_DEVICE_RO BO is -EACCES.  WRITE makes the job's
 *		fence a write fence in the BO's reservation (and, on a BO
 *		shared through a dma-buf, makes the job wait for every
 *		earlier reader and writer; READ alone waits for writers).
 */
struct drm_npu_bo_ref {
	__u32 handle;
	__u32 flags;
};

/**
 * struct drm_npu_sync - a syncobj point
 * @handle:	syncobj handle.
 * @flags:	must be zero.
 * @point:	timeline point; 0 for a binary syncobj.
 */
struct drm_npu_sync {
	__u32 handle;
	__u32 flags;
	__u64 point;
};

/**
 * struct drm_npu_submit - queue a job on a context
 * @ctx_id:	context.
 * @cmd_handle:	BO holding the program (&struct npu_hw_prog, then the
 *		instructions).  It is used (and mapped) like any BO of the
 *		job and need not be in @bos.
 * @cmd_offset:	offset of the program in the BO, a multiple of 64.
 * @cmd_size:	bytes of the program, 64..DRM_NPU_MAX_PROG_SIZE, within
 *		the BO.
 * @bos:	user pointer to @bo_count &struct drm_npu_bo_ref.
 * @bo_count:	0..DRM_NPU_MAX_SUBMIT_BOS.
 * @in_sync_count: 0..DRM_NPU_MAX_SUBMIT_SYNCS.
 * @in_syncs:	user pointer to @in_sync_count &struct drm_npu_sync: the job
 *		runs after all of them signal.  An unknown syncobj is -ENOENT;
 *		a syncobj without a fence (at that point) is -EINVAL: wait
 *		for submit is not supported.
 * @out_sync:	syncobj that gets the job's fence (0: none); at
 *		@out_point if non-zero (a timeline point, which must be
 *		later than the syncobj's last point, else -EINVAL), else its
 *		fence is replaced.  @out_point without @out_sync is -EINVAL.
 * @flags:	must be zero.
 * @out_point:	see @out_sync.
 * @timeout_ms:	the device's budget for the task, in modelled time at the
 *		device clock (the task ends with -ETIMEDOUT beyond it); 0: the
 *		driver default.  At most DRM_NPU_MAX_TIMEOUT_MS.  Separately, a
 *		queue that makes no progress for the module parameter
 *		job_timeout_ms is reset and its job fails with -ETIMEDOUT.
 * @pad:	must be zero.
 * @seqno:	out: the job's sequence number on its context.
 */
struct drm_npu_submit {
	__u32 ctx_id;
	__u32 cmd_handle;
	__u32 cmd_offset;
	__u32 cmd_size;
	__u64 bos;
	__u32 bo_count;
	__u32 in_sync_count;
	__u64 in_syncs;
	__u32 out_sync;
	__u32 flags;
	__u64 out_point;
	__u32 timeout_ms;
	__u32 pad;
	__u64 seqno;
};

/* ---- Statistics ---- */

/**
 * struct drm_npu_stats - device-wide counters (extensible like DEV_QUERY)
 * @size:	in: bytes at @pointer; out: size the kernel knows.
 * @pad:	must be zero.
 * @pointer:	user pointer to &struct drm_npu_stats_data.
 */
struct drm_npu_stats {
	__u32 size;
	__u32 pad;
	__u64 pointer;
};

/**
 * struct drm_npu_stats_data - counters since the driver bound the device
 * @jobs_submitted:	jobs accepted by DRM_IOCTL_NPU_SUBMIT.
 * @jobs_completed:	jobs done (successfully or not).
 * @jobs_failed:	jobs done with an error.
 * @resets:		device resets (recovery and debugfs).
 * @mmu_faults:		jobs ended by an MMU fault.
 * @timeouts:		jobs ended by the scheduler timeout.
 * @bo_count:		live BOs.
 * @bo_bytes:		bytes in live BOs.
 * @contexts:		live contexts.
 * @free_clusters:	healthy clusters not in any partition.
 * @device_cycles:	simulated cycles of all completed jobs.
 * @cluster_busy_ns:	per physical cluster: time it was in a running job.
 */
struct drm_npu_stats_data {
	__u64 jobs_submitted;
	__u64 jobs_completed;
	__u64 jobs_failed;
	__u64 resets;
	__u64 mmu_faults;
	__u64 timeouts;
	__u64 bo_count;
	__u64 bo_bytes;
	__u32 contexts;
	__u32 free_clusters;
	__u64 device_cycles;
	__u64 cluster_busy_ns[16];
};

#define DRM_IOCTL_NPU_DEV_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_DEV_QUERY, struct drm_npu_dev_query)
#define DRM_IOCTL_NPU_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_BO_CREATE, struct drm_npu_bo_create)
#define DRM_IOCTL_NPU_BO_MMAP_OFFSET \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_BO_MMAP_OFFSET, struct drm_npu_bo_mmap_offset)
#define DRM_IOCTL_NPU_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_BO_INFO, struct drm_npu_bo_info)
#define DRM_IOCTL_NPU_CTX_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_CTX_CREATE, struct drm_npu_ctx_create)
#define DRM_IOCTL_NPU_CTX_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NPU_CTX_DESTROY, struct drm_npu_ctx_destroy)
#define DRM_IOCTL_NPU_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_SUBMIT, struct drm_npu_submit)
#define DRM_IOCTL_NPU_STATS \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_STATS, struct drm_npu_stats)
#define DRM_IOCTL_NPU_CTX_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_CTX_QUERY, struct drm_npu_ctx_query)

#if defined(__cplusplus)
}
#endif

#endif /* NPU_ACCEL_H */
