// SPDX-License-Identifier: MIT
/*
 * npu-top: the sample, and what its sources share (sources_impl.h).
 *
 * A sample asks each source in turn (nt_sources_list) to add what it sees:
 * kernel devices through sysfs (src_sysfs.c), their clients through
 * /proc fdinfo (src_fdinfo.c), libnpu's emulators through their stat
 * files (src_emu.c).  Everything is best effort: a file that is missing,
 * unreadable or malformed leaves the matching fields unset; nothing here
 * fails the whole sample.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "npu/npu_emu_stats.h"
#include "parse.h"
#include "sources_impl.h"

static const struct nt_source *const sources[NT_SOURCE_COUNT] = {
	&nt_source_sysfs, &nt_source_fdinfo, &nt_source_emulator,
};

/* Format a path below the root into out; false if it does not fit. */
bool nt_rpath(const struct nt_sources *src, char *out, size_t n, const char *fmt, ...)
{
	size_t len = strlen(src->root);
	va_list ap;
	int r;

	if (len >= n)
		return false;
	memcpy(out, src->root, len);
	va_start(ap, fmt);
	r = vsnprintf(out + len, n - len, fmt, ap);
	va_end(ap);
	return r >= 0 && (size_t)r < n - len;
}

/* A file below the root into buf; -1 when unreadable. */
long nt_read_rfile(const struct nt_sources *src, char *buf, size_t size, const char *fmt, ...)
{
	char rel[PATH_MAX], path[PATH_MAX];
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	if (r < 0 || (size_t)r >= sizeof(rel) || !nt_rpath(src, path, sizeof(path), "%s", rel))
		return -1;
	return nt_read_file(path, buf, size);
}

/* "123" -> 123 for names made only of digits (pids, fds, minors). */
bool nt_parse_index(const char *s, int *out)
{
	uint64_t v;

	if (*s < '0' || *s > '9' || !nt_parse_u64_only(s, &v) || v > INT_MAX)
		return false;
	/* Reject "0x10" and "1 " which nt_parse_u64_only tolerates. */
	for (const char *p = s; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	*out = (int)v;
	return true;
}

/* "accel7" -> 7. */
bool nt_parse_accel_name(const char *s, int *minor)
{
	return strncmp(s, "accel", 5) == 0 && nt_parse_index(s + 5, minor);
}

void nt_read_comm(const struct nt_sources *src, int pid, char *out, size_t n)
{
	char buf[256];
	char *nl;

	if (nt_read_rfile(src, buf, sizeof(buf), "/proc/%d/comm", pid) < 0) {
		snprintf(out, n, "?");
		return;
	}
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	nt_copy_printable(out, n, buf);
}

void nt_add_sat(uint64_t *sum, uint64_t v)
{
	*sum = *sum > UINT64_MAX - v ? UINT64_MAX : *sum + v;
}

uint64_t nt_cycles_to_ns(uint64_t cycles, unsigned clock_mhz)
{
	uint64_t mhz = clock_mhz ? clock_mhz : NPU_M100_CLOCK_MHZ;

	/* cycles * 1000 / MHz, in two parts so it cannot overflow. */
	return cycles / mhz * 1000 + cycles % mhz * 1000 / mhz;
}

bool nt_sources_init(struct nt_sources *src)
{
	const char *root = getenv("NPU_TOP_ROOT");
	const char *emu = getenv(NPU_EMU_STATS_DIR_ENV);

	memset(src, 0, sizeof(*src));
	if (root && *root && strlen(root) < sizeof(src->root)) {
		size_t len = strlen(root);

		memcpy(src->root, root, len + 1);
		while (len > 0 && src->root[len - 1] == '/')
			src->root[--len] = '\0';
		src->fake = true;
	}
	if (emu && *emu && strlen(emu) < sizeof(src->emu_dir))
		strcpy(src->emu_dir, emu);
	for (unsigned i = 0; i < NT_SOURCE_COUNT; i++) {
		src->state[i] = sources[i]->open(src);
		if (!src->state[i]) {
			nt_sources_close(src);
			return false;
		}
	}
	return true;
}

const struct nt_device *nt_snapshot_device(const struct nt_snapshot *snap, const char *name)
{
	for (unsigned i = 0; i < snap->n_dev; i++)
		if (strcmp(snap->dev[i].name, name) == 0)
			return &snap->dev[i];
	return NULL;
}

struct nt_device *nt_find_device(struct nt_snapshot *snap, const char *name)
{
	return (struct nt_device *)nt_snapshot_device(snap, name);
}

uint32_t nt_cluster_bits(unsigned clusters)
{
	return clusters >= 32 ? UINT32_MAX : (1u << clusters) - 1;
}

/* Without a usable mesh the node mapping is unknown and no heat map can
 * be drawn. */
void nt_settle_geometry(struct nt_device *d, bool have_masks, uint64_t defect,
			    uint64_t healthy, bool have_healthy)
{
	unsigned nodes;

	if (d->clusters == 0 || d->clusters > NT_MAX_CLUSTERS)
		d->clusters = d->n_busy;	/* the counters say how many there are */
	if (d->n_busy > d->clusters)
		d->n_busy = d->clusters;
	if (d->tpbs > NPU_HW_MAX_TPBS_PER_CLUSTER)
		d->tpbs = 0;
	nodes = d->mesh_x * d->mesh_y;
	if (d->mesh_x < 2 || d->mesh_y < 1 || nodes > NT_MAX_NODES ||
	    nodes < d->clusters + 2) {
		d->mesh_x = 0;
		d->mesh_y = 0;
	}
	if (d->clock_mhz > 1000000)
		d->clock_mhz = 0;
	if (have_masks && defect <= UINT32_MAX) {
		d->has_masks = true;
		d->defect_mask = (uint32_t)defect & nt_cluster_bits(d->clusters);
		if (have_healthy && healthy <= UINT32_MAX)
			d->healthy_mask = (uint32_t)healthy & nt_cluster_bits(d->clusters) &
					  ~d->defect_mask;
		else
			d->healthy_mask = nt_cluster_bits(d->clusters) & ~d->defect_mask;
	}
}

/* ---- the sample ---- */

void nt_sources_close(struct nt_sources *src)
{
	for (unsigned i = 0; i < NT_SOURCE_COUNT; i++) {
		if (src->state[i])
			sources[i]->close(src->state[i]);
		src->state[i] = NULL;
	}
}

void nt_snapshot_take(const struct nt_sources *src, struct nt_snapshot *snap)
{
	struct timespec mono, real;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	snap->mono_ns = (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec;
	snap->unix_s = (double)real.tv_sec + real.tv_nsec / 1e9;
	snap->n_dev = 0;
	snap->n_proc = 0;
	for (unsigned i = 0; i < NT_SOURCE_COUNT; i++)
		sources[i]->sample(src->state[i], src, snap);
}
