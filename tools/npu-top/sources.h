/* SPDX-License-Identifier: MIT */
/*
 * npu-top: one sample of everything it watches, as plain numbers.
 *
 * A snapshot holds raw cumulative counters only; rates need two snapshots
 * and live in model.h.  Every file is read below an optional root
 * ($NPU_TOP_ROOT) so tests can point npu-top at a fake /dev, /sys, /proc
 * and /tmp.
 *
 * Sources (struct nt_source, one file each):
 *   kernel devices   /dev/accel/accelN whose /sys/class/accel/accelN/device/npu/
 *                    exists (the npu driver's sysfs group on the PCI device),
 *                    src_sysfs.c
 *   their clients    /proc/<pid>/fd/<n> -> /dev/accel/accelN, with
 *                    /proc/<pid>/fdinfo/<n> (DRM fdinfo keys), src_fdinfo.c
 *   emulators        stat files of libnpu's in-process emulator
 *                    (uapi/npu/npu_emu_stats.h), src_emu.c
 */
#ifndef NPU_TOP_SOURCES_H
#define NPU_TOP_SOURCES_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "npu/npu_hw_geom.h"

#define NT_MAX_CLUSTERS	NPU_HW_MAX_CLUSTERS
#define NT_MAX_NODES	NPU_HW_MAX_MESH_NODES
#define NT_MAX_LINKS	NPU_HW_MAX_LINKS
#define NT_MAX_QUEUES	NPU_HW_NUM_QUEUES
#define NT_MAX_DEVICES	64
#define NT_MAX_PROCS	512
#define NT_NAME_LEN	32
#define NT_COMM_LEN	64

/* The accel subsystem's character major (DRM render nodes are 226). */
#define NT_ACCEL_MAJOR	261

enum nt_kind { NT_KERNEL, NT_EMULATOR };

struct nt_device {
	char name[NT_NAME_LEN];		/* "accel0" or "emu:<pid>" */
	enum nt_kind kind;
	int minor;			/* N of accelN; -1 for an emulator */
	int pid;			/* the emulator's process; 0 for kernel */
	char pdev[NT_NAME_LEN];		/* PCI address, "" when unknown */
	char comm[NT_COMM_LEN];		/* emulator: its process name */

	/* Geometry, 0 when unknown.  mesh_x/mesh_y are 0 unless usable. */
	unsigned clusters, tpbs, mesh_x, mesh_y, queues, clock_mhz;
	uint64_t sram, hbsm;
	bool has_masks, has_free;
	uint32_t defect_mask, healthy_mask, free_clusters;

	/*
	 * Cumulative counters, in ns from every source (an emulator's
	 * simulated cycles are converted at its clock, nt_cycles_to_ns).
	 */
	unsigned n_busy;		/* entries of busy_ns[] that parsed */
	uint64_t busy_ns[NT_MAX_CLUSTERS];	/* per cluster */
	bool has_device_ns;		/* emulator: simulated time so far; */
	uint64_t device_ns;		/* a kernel device's time is the wall clock */
	bool has_jobs;
	uint64_t jobs;
	unsigned n_links;		/* 0 (no counters) or mesh_x * mesh_y * 4 */
	uint64_t link_bytes[NT_MAX_LINKS];
	bool has_resets;
	uint64_t resets;
	unsigned n_queues;
	uint64_t queue_depth[NT_MAX_QUEUES];
	bool has_memory;		/* emulator only; kernel: sum of its clients */
	uint64_t memory;
};

/* One DRM client (kernel) or the emulator's own process. */
struct nt_proc {
	int pid;
	int fd;				/* first fd seen for this client, -1: emulator */
	char comm[NT_COMM_LEN];
	char dev[NT_NAME_LEN];		/* nt_device.name it uses */
	bool has_client;
	uint64_t client_id;
	bool has_contexts;
	unsigned contexts;
	bool has_clusters;
	uint32_t clusters;		/* physical clusters its contexts hold */
	bool has_busy;
	uint64_t busy_ns;		/* kernel: drm-engine-npu; emulator: its clusters' busy */
	unsigned capacity;		/* drm-engine-capacity-npu, 0 when unknown */
	bool has_memory;
	uint64_t memory;		/* bytes, sum of drm-total-* */
};

struct nt_snapshot {
	int64_t mono_ns;		/* CLOCK_MONOTONIC when the sample started */
	double unix_s;			/* CLOCK_REALTIME, same moment */
	unsigned n_dev, n_proc;
	struct nt_device dev[NT_MAX_DEVICES];
	struct nt_proc proc[NT_MAX_PROCS];
};

/*
 * One kind of thing npu-top watches, as nvtop has one per GPU vendor.
 * open() makes the source's state (NULL: out of memory); sample() adds
 * what the source sees now to the snapshot, devices and processes, with
 * busy time in ns; close() frees the state.  A source that finds nothing
 * adds nothing: devices may appear later (an emulator starting).
 */
struct nt_sources;
struct nt_source {
	const char *name;		/* "sysfs", "fdinfo", "emulator" */
	void *(*open)(const struct nt_sources *src);
	void (*sample)(void *state, const struct nt_sources *src, struct nt_snapshot *snap);
	void (*close)(void *state);
};

#define NT_SOURCE_COUNT	3

struct nt_sources {
	char root[PATH_MAX];		/* "" = the real / */
	bool fake;			/* NPU_TOP_ROOT set: accept regular files as nodes */
	char emu_dir[PATH_MAX];		/* $NPU_EMU_STATS_DIR, "" = scan <root>/tmp/npu-emu-* */
	void *state[NT_SOURCE_COUNT];	/* each source's, from its open() */
};

/* Fill src from $NPU_TOP_ROOT and $NPU_EMU_STATS_DIR and open every
 * source; false when out of memory.  Close with nt_sources_close. */
bool nt_sources_init(struct nt_sources *src);
void nt_sources_close(struct nt_sources *src);

/* Take one sample.  Never fails: what cannot be read is left out. */
void nt_snapshot_take(const struct nt_sources *src, struct nt_snapshot *snap);

/* Find a device of snap by name, NULL if absent. */
const struct nt_device *nt_snapshot_device(const struct nt_snapshot *snap, const char *name);

#endif /* NPU_TOP_SOURCES_H */
