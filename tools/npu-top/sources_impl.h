/* SPDX-License-Identifier: MIT */
/*
 * npu-top: what the sources (src_*.c) share: paths below $NPU_TOP_ROOT,
 * name parsing, the geometry checks both device kinds need, and the one
 * conversion of device cycles to ns.  Private to sources.c and src_*.c.
 */
#ifndef NPU_TOP_SOURCES_IMPL_H
#define NPU_TOP_SOURCES_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sources.h"

/* The three sources, in the order a sample runs them: clients are matched
 * against the kernel devices found just before. */
extern const struct nt_source nt_source_sysfs;
extern const struct nt_source nt_source_fdinfo;
extern const struct nt_source nt_source_emulator;

/* Format a path below the root into out; false if it does not fit. */
bool nt_rpath(const struct nt_sources *src, char *out, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A file below the root into buf; -1 when unreadable. */
long nt_read_rfile(const struct nt_sources *src, char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* "123" -> 123 for names made only of digits (pids, fds, minors). */
bool nt_parse_index(const char *s, int *out);
/* "accel7" -> 7. */
bool nt_parse_accel_name(const char *s, int *minor);
/* /proc/<pid>/comm, printable; "?" when unreadable. */
void nt_read_comm(const struct nt_sources *src, int pid, char *out, size_t n);
/* *sum += v, saturating. */
void nt_add_sat(uint64_t *sum, uint64_t v);

struct nt_device *nt_find_device(struct nt_snapshot *snap, const char *name);
uint32_t nt_cluster_bits(unsigned clusters);
/*
 * Make the parsed fields consistent: counts within the hardware limits,
 * masks within the cluster count, and a mesh only if every cluster plus
 * the CCB and the DDR port fits on it.
 */
void nt_settle_geometry(struct nt_device *d, bool have_masks, uint64_t defect,
			uint64_t healthy, bool have_healthy);

/*
 * @cycles of a device clocked at @clock_mhz, in ns: the one place npu-top
 * turns cycles into time, so every source reports busy ns.  An unknown
 * clock (0) is taken as the M100's NPU_M100_CLOCK_MHZ.
 */
uint64_t nt_cycles_to_ns(uint64_t cycles, unsigned clock_mhz);

#endif /* NPU_TOP_SOURCES_IMPL_H */
