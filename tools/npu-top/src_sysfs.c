// SPDX-License-Identifier: MIT
/*
 * npu-top's kernel source: /dev/accel/accelN nodes bound to the npu
 * driver, read through its sysfs group (/sys/class/accel/accelN/device/
 * npu/).  busy_ns there is already ns of wall time.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "parse.h"
#include "sources_impl.h"

struct sysfs_state {
	char buf[NT_FILE_MAX];		/* one sysfs file at a time */
};

static void geometry_pair(struct nt_device *d, const char *key, const char *val)
{
	uint64_t v;

	if (strcmp(key, "mesh") == 0) {
		if (!nt_parse_dims(val, &d->mesh_x, &d->mesh_y))
			d->mesh_x = d->mesh_y = 0;
		return;
	}
	if (!nt_parse_u64_only(val, &v))
		return;
	if (strcmp(key, "clusters") == 0 && v <= NT_MAX_CLUSTERS)
		d->clusters = (unsigned)v;
	else if (strcmp(key, "tpbs") == 0 && v <= 64)
		d->tpbs = (unsigned)v;
	else if (strcmp(key, "queues") == 0 && v <= 64)
		d->queues = (unsigned)v;
	else if (strcmp(key, "clock_mhz") == 0 && v <= UINT32_MAX)
		d->clock_mhz = (unsigned)v;
	else if (strcmp(key, "sram") == 0)
		d->sram = v;
	else if (strcmp(key, "hbsm") == 0)
		d->hbsm = v;
}

/* "clusters=14 tpbs=4 mesh=4x4 ..." (one line of key=value pairs). */
static void parse_geometry(struct nt_device *d, char *buf)
{
	char *save = NULL;

	for (char *tok = strtok_r(buf, " \t\r\n", &save); tok;
	     tok = strtok_r(NULL, " \t\r\n", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq || eq == tok)
			continue;
		*eq = '\0';
		geometry_pair(d, tok, eq + 1);
	}
}

static bool read_u64_file(const struct nt_sources *src, const char *dir, const char *name,
			  uint64_t *out)
{
	char buf[256];

	if (nt_read_rfile(src, buf, sizeof(buf), "%s/%s", dir, name) < 0)
		return false;
	return nt_parse_u64_only(buf, out);
}

static void read_kernel_device(struct sysfs_state *st, const struct nt_sources *src,
			       struct nt_device *d)
{
	char dir[PATH_MAX], path[PATH_MAX], link[PATH_MAX];
	char *buf = st->buf;
	const size_t bufsize = sizeof(st->buf);
	uint64_t defect = 0, healthy = 0, v;
	bool have_defect, have_healthy;
	ssize_t n;

	snprintf(dir, sizeof(dir), "/sys/class/accel/%s/device/npu", d->name);
	if (nt_read_rfile(src, buf, bufsize, "%s/geometry", dir) >= 0)
		parse_geometry(d, buf);
	if (nt_read_rfile(src, buf, bufsize, "%s/busy_ns", dir) >= 0)
		d->n_busy = nt_parse_u64_list(buf, d->busy_ns,
					      d->clusters ? d->clusters : NT_MAX_CLUSTERS);
	have_defect = read_u64_file(src, dir, "defect_mask", &defect);
	have_healthy = read_u64_file(src, dir, "healthy_mask", &healthy);
	nt_settle_geometry(d, have_defect, defect, healthy, have_healthy);
	if (read_u64_file(src, dir, "free_clusters", &v) && v <= UINT32_MAX) {
		d->has_free = true;
		d->free_clusters = (uint32_t)v & nt_cluster_bits(d->clusters);
	}
	d->has_resets = read_u64_file(src, dir, "reset_count", &d->resets);
	if (nt_read_rfile(src, buf, bufsize, "%s/queue_depth", dir) >= 0)
		d->n_queues = nt_parse_u64_list(buf, d->queue_depth, NT_MAX_QUEUES);
	/* Optional: older drivers have no link counters. */
	if (d->mesh_x && nt_read_rfile(src, buf, bufsize, "%s/link_bytes", dir) >= 0) {
		unsigned want = d->mesh_x * d->mesh_y * NPU_HW_LINK_DIRS;

		if (nt_parse_u64_list(buf, d->link_bytes, want) == want)
			d->n_links = want;
	}
	/* The device link names the PCI function, e.g. ../../../0000:00:04.0. */
	if (nt_rpath(src, path, sizeof(path), "/sys/class/accel/%s/device", d->name)) {
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0) {
			const char *base;

			link[n] = '\0';
			base = strrchr(link, '/');
			nt_copy_printable(d->pdev, sizeof(d->pdev), base ? base + 1 : link);
		}
	}
}

static bool is_npu_node(const struct nt_sources *src, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	if (!nt_rpath(src, path, sizeof(path), "/dev/accel/%s", name) || stat(path, &st) != 0)
		return false;
	if (!(S_ISCHR(st.st_mode) && major(st.st_rdev) == NT_ACCEL_MAJOR) &&
	    !(src->fake && S_ISREG(st.st_mode)))
		return false;
	/* Bound to npu: the driver's sysfs group exists (other accel drivers lack it). */
	if (!nt_rpath(src, path, sizeof(path), "/sys/class/accel/%s/device/npu", name) ||
	    stat(path, &st) != 0)
		return false;
	return S_ISDIR(st.st_mode);
}

static int cmp_minor(const void *a, const void *b)
{
	const struct nt_device *x = a, *y = b;

	return (x->minor > y->minor) - (x->minor < y->minor);
}

static void sysfs_sample(void *state, const struct nt_sources *src, struct nt_snapshot *snap)
{
	char path[PATH_MAX];
	struct dirent *e;
	unsigned first = snap->n_dev;
	DIR *dir;

	if (!nt_rpath(src, path, sizeof(path), "/dev/accel"))
		return;
	dir = opendir(path);
	if (!dir)
		return;
	while ((e = readdir(dir)) && snap->n_dev < NT_MAX_DEVICES) {
		struct nt_device *d = &snap->dev[snap->n_dev];
		int minor;

		if (!nt_parse_accel_name(e->d_name, &minor) || !is_npu_node(src, e->d_name))
			continue;
		memset(d, 0, sizeof(*d));
		snprintf(d->name, sizeof(d->name), "accel%d", minor);
		d->kind = NT_KERNEL;
		d->minor = minor;
		read_kernel_device(state, src, d);
		snap->n_dev++;
	}
	closedir(dir);
	qsort(&snap->dev[first], snap->n_dev - first, sizeof(snap->dev[0]), cmp_minor);
}


static void *sysfs_open(const struct nt_sources *src)
{
	(void)src;
	return calloc(1, sizeof(struct sysfs_state));
}

const struct nt_source nt_source_sysfs = {
	.name = "sysfs",
	.open = sysfs_open,
	.sample = sysfs_sample,
	.close = free,
};
