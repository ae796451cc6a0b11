/* SPDX-License-Identifier: MIT */
/*
 * npu-top: rates from two snapshots, and the mesh layout.
 *
 * Busy %:  kernel device    delta busy_ns / delta wall ns, per cluster
 *          kernel client    delta drm-engine-npu ns / (delta wall ns x
 *                           clusters it holds, or its capacity)
 *          emulator         delta busy ns / delta simulated ns (both from
 *                           simulated cycles at the emulator's clock)
 * Link load: bytes moved / what the link could move in the same time
 *          (64 B per cycle at clock_mhz for a kernel device, 64 B per
 *          simulated cycle for an emulator).
 *
 * A rate is "ok" only when both snapshots hold the counter; the first
 * screen of the TUI, a device that just appeared and a counter that went
 * backwards (driver reload, pid reuse) have none.
 */
#ifndef NPU_TOP_MODEL_H
#define NPU_TOP_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sources.h"

/* Link bandwidth in bytes per device cycle (seed 002 model). */
#define NT_LINK_BYTES_PER_CYCLE	NPU_M100_LINK_BYTES_PER_CYCLE

/* nt_node_kind() results other than a cluster number. */
#define NT_NODE_CCB	(-1)
#define NT_NODE_DDR	(-2)
#define NT_NODE_EMPTY	(-3)

struct nt_dev_view {
	const struct nt_device *d;	/* in the newer snapshot */
	bool cl_ok[NT_MAX_CLUSTERS];	/* never set for fused clusters */
	double cl_pct[NT_MAX_CLUSTERS];
	bool busy_ok;			/* mean over healthy clusters */
	double busy_pct;
	bool links_ok;
	double link_pct[NT_MAX_LINKS];
	int hot;			/* hottest link with load > 0, or -1 */
	uint64_t memory;		/* emulator: its file; kernel: sum of visible clients */
	bool memory_ok;
	unsigned n_procs;
};

struct nt_proc_view {
	const struct nt_proc *p;	/* in the newer snapshot */
	unsigned dev;			/* index into nt_view.dev */
	bool busy_ok;
	double busy_pct;
};

enum nt_sort { NT_SORT_BUSY, NT_SORT_MEMORY, NT_SORT_PID, NT_SORT_COUNT };

struct nt_view {
	double unix_s;
	double interval_s;		/* measured between the snapshots, 0 if one */
	unsigned n_dev, n_proc;
	struct nt_dev_view dev[NT_MAX_DEVICES];
	struct nt_proc_view proc[NT_MAX_PROCS];
};

/*
 * Build the view of cur; prev may be NULL (no rates).  The view points
 * into cur, which must outlive it.
 */
void nt_view_build(struct nt_view *v, const struct nt_snapshot *prev,
		   const struct nt_snapshot *cur, enum nt_sort sort);

/* Re-sort the process rows (the TUI's 's' key). */
void nt_view_sort(struct nt_view *v, enum nt_sort sort);
const char *nt_sort_name(enum nt_sort sort);

/* Fused clusters of d (defect_mask bits), 0 when unknown. */
uint32_t nt_fused(const struct nt_device *d);

/* Mesh layout; all need d->mesh_x != 0. */
int nt_node_of_cluster(const struct nt_device *d, unsigned cluster);	/* -1: none */
int nt_node_kind(const struct nt_device *d, unsigned node);	/* cluster or NT_NODE_* */
int nt_link_dest(const struct nt_device *d, unsigned link);	/* -1: leaves the mesh */
const char *nt_dir_name(unsigned dir);				/* "east", ... */
void nt_node_label(const struct nt_device *d, unsigned node, char *buf, size_t n);

#endif /* NPU_TOP_MODEL_H */
