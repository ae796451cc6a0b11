/* SPDX-License-Identifier: MIT */
/*
 * npu_gt: helpers of the guest test suite (npu-guest-test) for the M100
 * DRM-accel driver.  Raw ioctls only (no libdrm); the contract under test
 * is uapi/drm/npu_accel.h.
 *
 * Conventions: functions that wrap an ioctl return 0 or -errno.  Helpers
 * that do several steps and can fail for several reasons return 0 or a
 * negative errno and describe the failure in gt_msg (a static buffer), so
 * that a test can say ck_assert_msg(rc == 0, "%s", gt_msg).
 */
#ifndef NPU_GT_H
#define NPU_GT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <drm.h>
#include "npu_accel.h"
#include <npu/npu_hw.h>

#define GT_MAX_CLUSTERS		16
#define GT_WAIT_NS		(10ull * 1000000000ull)	/* default job wait */
#define GT_NS_PER_MS		1000000ull

/* The device under test, opened by the checked fixture of every case. */
struct gt_dev {
	int fd;
	int minor;			/* N of /dev/accel/accelN */
	char path[64];
	struct drm_npu_device_info info;
};

extern struct gt_dev G;
extern __thread char gt_msg[512];

/* Print a reason and leave the test (it counts as passed in Check). */
#define GT_SKIP(...)							\
	do {								\
		fprintf(stderr, "SKIP %s: ", __func__);			\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		return;							\
	} while (0)

/* --- device ---------------------------------------------------------------- */

/* Find the first /dev/accel/accel* whose DRM driver name is "npu". */
int gt_find_device(char *path, size_t len, int *minor);
/* Another open file of the device found by gt_find_device; -errno. */
int gt_open(void);
/* ioctl() that restarts on EINTR/EAGAIN; 0 or -errno. */
int gt_ioctl(int fd, unsigned long req, void *arg);
int gt_query_info(int fd, struct drm_npu_device_info *info);
int gt_stats(int fd, struct drm_npu_stats_data *st);
/* The checked fixture: open the device into G (asserts on failure). */
void gt_setup(void);
void gt_teardown(void);
/* First statement of every test: its name and the CLOCK_MONOTONIC time
 * (the kernel log's clock) on stderr, to match kernel messages to tests. */
void gt_begin(const char *test);
/* True when /sys/module/npu exists (the driver is loaded). */
bool gt_driver_loaded(void);

/* --- buffer objects ---------------------------------------------------------- */

struct gt_bo {
	uint32_t handle;
	uint32_t flags;
	uint64_t size;
	uint64_t dev_addr;
	void *map;			/* NULL until gt_bo_mmap */
};

int gt_bo_create(int fd, uint64_t size, uint32_t flags, struct gt_bo *bo);
int gt_bo_info(int fd, uint32_t handle, struct drm_npu_bo_info *info);
int gt_bo_mmap_offset(int fd, uint32_t handle, uint64_t *offset);
/* mmap the whole BO read/write into bo->map; 0 or -errno. */
int gt_bo_mmap(int fd, struct gt_bo *bo);
int gt_gem_close(int fd, uint32_t handle);
/* munmap (if mapped) and close the handle (if non-zero). */
void gt_bo_free(int fd, struct gt_bo *bo);

/* --- contexts ------------------------------------------------------------------ */

int gt_ctx_create(int fd, uint32_t clusters, uint32_t priority,
		  struct drm_npu_ctx_create *out);
/* Like gt_ctx_create, but retries -ENOSPC for up to @ms (a previous
 * test's files may still be releasing their partitions). */
int gt_ctx_create_retry(int fd, uint32_t clusters, uint32_t priority,
			struct drm_npu_ctx_create *out, unsigned ms);
int gt_ctx_destroy(int fd, uint32_t ctx_id);
int gt_ctx_query(int fd, uint32_t ctx_id, struct drm_npu_ctx_query *q);

/* --- syncobjs ------------------------------------------------------------------ */

int gt_syncobj_create(int fd, uint32_t flags, uint32_t *handle);
int gt_syncobj_destroy(int fd, uint32_t handle);
/* A new syncobj holding the fence of @sync_file, which is closed. */
int gt_syncobj_from_sync_file(int fd, int sync_file, uint32_t *handle);
/* Current CLOCK_MONOTONIC time in ns. */
int64_t gt_now_ns(void);
/* Wait for all @count handles; @rel_ns from now (converted to the
 * absolute CLOCK_MONOTONIC deadline the ioctl takes).  -ETIME on timeout. */
int gt_syncobj_wait(int fd, const uint32_t *handles, uint32_t count,
		    int64_t rel_ns);
int gt_syncobj_timeline_wait(int fd, uint32_t handle, uint64_t point,
			     int64_t rel_ns, uint32_t flags);
int gt_syncobj_query(int fd, uint32_t handle, uint64_t *point);
/*
 * Status of the fence in a binary syncobj, through a sync_file export:
 * 1 signalled OK, 0 pending, < 0 the fence error (-EFAULT ...).
 * GT_NO_STATUS if the export or the query is not possible.
 */
#define GT_NO_STATUS	(-100000)
int gt_fence_status(int fd, uint32_t syncobj);

/* --- programs --------------------------------------------------------------------- */

/* Bytes of a one-instruction program: header + one instruction. */
#define GT_COPY_PROG_SIZE	(sizeof(struct npu_hw_prog) + sizeof(struct npu_hw_insn))

/*
 * Write a DMA-copy program at @dst (CPU pointer into a command BO): one
 * NPU_UNIT_DMA / NPU_DMA_COPY instruction copying @bytes from device
 * address @src_va to @dst_va with dense uint8 walkers.  @bytes is 1..2^24
 * (one iteration), or a multiple of 64 KiB up to 2 GiB (64 KiB per
 * iteration of a repeat level).  Returns the program size.
 */
uint32_t gt_build_copy(void *dst, uint64_t src_va, uint64_t dst_va,
		       uint64_t bytes);

/* Deterministic test data. */
uint8_t gt_pattern(uint64_t i, unsigned seed);
void gt_fill(void *p, uint64_t bytes, unsigned seed);
/* Index of the first byte that differs from the pattern, or -1. */
int64_t gt_check(const void *p, uint64_t bytes, unsigned seed);
bool gt_all_zero(const void *p, uint64_t bytes);

/*
 * A copy job: cmd BO with the program, src BO filled with a pattern, dst
 * BO zeroed, all mapped.  The program copies src -> dst unless rebuilt.
 */
struct gt_copy {
	int fd;
	struct gt_bo cmd, src, dst;
	uint64_t bytes;
	unsigned seed;
	uint32_t prog_size;
};

int gt_copy_init(int fd, struct gt_copy *c, uint64_t bytes, unsigned seed);
/* Rewrite the program to read from @src_va instead (e.g. to fault). */
void gt_copy_set_src(struct gt_copy *c, uint64_t src_va);
/* Rewrite the program to copy src -> @dst_va. */
void gt_copy_set_dst(struct gt_copy *c, uint64_t dst_va);
void gt_copy_fini(struct gt_copy *c);
bool gt_copy_ok(const struct gt_copy *c);

/* Fill a drm_npu_submit for a gt_copy (bos: src READ, dst WRITE).  @refs
 * must hold 2 entries and outlive the ioctl. */
void gt_copy_submit_args(const struct gt_copy *c, uint32_t ctx_id,
			 struct drm_npu_bo_ref refs[2],
			 struct drm_npu_submit *s);
int gt_submit(int fd, struct drm_npu_submit *s);
/* Submit a copy with out_sync @sync (0: none) at @point. */
int gt_submit_copy(const struct gt_copy *c, uint32_t ctx_id, uint32_t sync,
		   uint64_t point, const struct drm_npu_sync *in,
		   uint32_t nin, uint32_t timeout_ms);
/* Submit, wait up to 10 s; 0, -errno of submit, or -ETIME. */
int gt_run_copy(const struct gt_copy *c, uint32_t ctx_id, uint32_t timeout_ms);
/*
 * A complete good job on @ctx_id: fresh BOs, copy @bytes, wait, verify the
 * data and that the context is still OK.  0, or -errno with gt_msg.
 */
int gt_good_job(int fd, uint32_t ctx_id, uint64_t bytes);
/* "ctx N: state S, last_error E, ..." for failure messages. */
const char *gt_ctx_str(int fd, uint32_t ctx_id);
/* gt_good_job in a fresh context of 1 cluster on @fd (created, destroyed). */
int gt_good_job_new_ctx(int fd);

/*
 * N jobs sharing one source BO: job k copies src -> dst[k] with the program
 * at offset k * GT_BATCH_SLOT of one command BO, and signals sync[k].
 */
#define GT_BATCH_SLOT	1024u

struct gt_batch {
	int fd;
	unsigned n;
	uint64_t bytes;
	unsigned seed;
	struct gt_bo cmd, src;
	struct gt_bo *dst;
	uint32_t *sync;
};

int gt_batch_init(int fd, struct gt_batch *b, unsigned n, uint64_t bytes,
		  unsigned seed);
int gt_batch_submit(struct gt_batch *b, unsigned k, uint32_t ctx_id);
/* gt_batch_submit, the job to run after @nin in-syncs. */
int gt_batch_submit_after(struct gt_batch *b, unsigned k, uint32_t ctx_id,
			  const struct drm_npu_sync *in, uint32_t nin);
/* Wait for every job; 0 or -errno (-ETIME). */
int gt_batch_wait(struct gt_batch *b, int64_t rel_ns);
/* 0 when dst[k] holds the source data, else -EIO with gt_msg. */
int gt_batch_verify(struct gt_batch *b, unsigned k);
void gt_batch_fini(struct gt_batch *b);

/*
 * Run @fn(@arg) in a forked child.  Returns 0 when the child exited 0;
 * otherwise -1 with the child's gt_msg (or how it died) in @msg.
 */
int gt_in_child(int (*fn)(void *), void *arg, char *msg, size_t len);

/* --- debugfs, fdinfo ------------------------------------------------------------- */

/*
 * Path of debugfs file @name of our device: /sys/kernel/debug/accel/<minor>/,
 * else any /sys/kernel/debug/{accel,dri}/<x>/ holding @name whose "name"
 * file (if any) mentions npu.  0 or -ENOENT.
 */
int gt_debugfs_path(const char *name, char *out, size_t len);
/* Write @val to a debugfs file found by gt_debugfs_path; 0 or -errno
 * (-ENOENT: no such knob). */
int gt_debugfs_write(const char *name, const char *val);
/* Lines in debugfs file @name, or -errno. */
long gt_debugfs_lines(const char *name);

struct gt_fdinfo {
	char driver[32];
	bool has_client_id;
	uint64_t client_id;
	bool has_cluster[GT_MAX_CLUSTERS];
	uint64_t cluster_ns[GT_MAX_CLUSTERS];
};

int gt_fdinfo(int fd, struct gt_fdinfo *fi);

/*
 * Leak checks: device-wide STATS (bo_count, bo_bytes, contexts,
 * free_clusters) and the line count of debugfs "bos" when it exists.
 * gt_take_baseline waits for the counters to settle; gt_expect_baseline
 * polls up to 5 s for them to come back and asserts.
 */
struct gt_baseline {
	struct drm_npu_stats_data st;
	long bos_lines;		/* -ENOENT: no debugfs "bos" */
};

void gt_take_baseline(struct gt_baseline *b);
void gt_expect_baseline(const struct gt_baseline *b, const char *what);

/* --- misc ------------------------------------------------------------------------- */

unsigned gt_popcount(uint32_t v);
/* Sleep @ms milliseconds. */
void gt_msleep(unsigned ms);
/* A device address < 2^39 that no BO of any file can have. */
uint64_t gt_unmapped_addr(const struct drm_npu_device_info *info);
/* Write a description to gt_msg and return @rc. */
int gt_fail(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Suites, one per source file. */
#include <check.h>
Suite *gt_suite_basic(void);
Suite *gt_suite_ctx(void);
Suite *gt_suite_submit(void);
Suite *gt_suite_negative(void);
Suite *gt_suite_isolation(void);
Suite *gt_suite_lifetime(void);
Suite *gt_suite_fuzz(void);
Suite *gt_suite_recovery(void);
Suite *gt_suite_fdinfo(void);
Suite *gt_suite_trace(void);
Suite *gt_suite_coredump(void);
/*
 * A sysfs file of the device's PCI function, by name relative to it
 * ("power/control"): read (newline cut) or write; 0 or -errno.
 */
int gt_dev_attr_read(const char *name, char *buf, size_t len);
int gt_dev_attr_write(const char *name, const char *val);
Suite *gt_suite_pm(void);
Suite *gt_suite_scrub(void);
Suite *gt_suite_dmabuf(void);

/* Add @tc to @s with the suite's fixture and @timeout seconds. */
void gt_add_tcase(Suite *s, TCase *tc, double timeout);

/* --- fences the test signals (gt_gate.c) -------------------------------------------- */

/* PRIME_HANDLE_TO_FD: 0 and *@dmabuf, or -errno. */
int gt_prime_export(int fd, uint32_t handle, uint32_t flags, int *dmabuf);

/*
 * sw_sync (debugfs sync/sw_sync, CONFIG_SW_SYNC: the debug guest kernel).
 * gt_sw_sync_open gives a timeline's fd or -errno; gt_sw_sync_fence a
 * sync_file fd of a fence that signals when the timeline reaches @value,
 * or -errno; gt_sw_sync_inc advances the timeline by @n, 0 or -errno.
 */
int gt_sw_sync_open(void);
int gt_sw_sync_fence(int timeline, uint32_t value);
int gt_sw_sync_inc(int timeline, uint32_t n);

/*
 * vgem: a file of its primary node (dumb buffers need it), loading vgem.ko
 * from the initramfs first if needed, or -1 when this kernel has none; a
 * mapped dumb buffer of @size bytes (a multiple of 4 KiB); a pending fence
 * (write or read) attached to a BO, by id; and its signal.
 */
int gt_vgem_open(void);
uint32_t gt_vgem_bo(int vfd, uint64_t size, uint8_t **map);
uint32_t gt_vgem_fence(int vfd, uint32_t bo, bool write);
void gt_vgem_signal(int vfd, uint32_t fence);

/*
 * A gate: fences that stay pending until the test releases them, from
 * sw_sync, else vgem (which signals its fences itself after 10 s at the
 * latest).  gt_gate_init is false when the kernel has neither;
 * gt_gate_fence gives a sync_file fd of a new pending fence, and
 * gt_gate_release signals the newest one.
 */
struct gt_gate {
	const char *kind;	/* "sw_sync" or "vgem" */
	int tl;			/* sw_sync timeline, or -1 */
	uint32_t value;		/* its newest fence's value */
	int vfd;		/* vgem file, or -1 */
	uint32_t vbo, vfence;	/* vgem BO (its dma-buf: vdmabuf), newest fence */
	int vdmabuf;
	uint8_t *vmap;
};

bool gt_gate_init(struct gt_gate *g);
int gt_gate_fence(struct gt_gate *g);
void gt_gate_release(struct gt_gate *g);
void gt_gate_fini(struct gt_gate *g);

#endif /* NPU_GT_H */
