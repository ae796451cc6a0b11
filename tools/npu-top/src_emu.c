// SPDX-License-Identifier: MIT
/*
 * npu-top's emulator source: the stat files libnpu's in-process
 * emulators write (uapi/npu/npu_emu_stats.h).  Their counters are
 * simulated cycles; they become ns at the emulator's clock here
 * (nt_cycles_to_ns), so npu-top sees ns from every source.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npu/npu_emu_stats.h"
#include "parse.h"
#include "sources_impl.h"

struct emu_state {
	char buf[NT_FILE_MAX];		/* one stat file at a time */
};

struct emu_parse {
	struct nt_device *d;
	struct nt_proc *p;
	bool have_defect, have_healthy;
	uint64_t defect, healthy;
	unsigned n_links;
	uint64_t links[NT_MAX_LINKS];
	bool have_cycles;
	uint64_t cycles;			/* simulated cycles so far */
	uint64_t busy_cycles[NT_MAX_CLUSTERS];	/* per cluster, d->n_busy of them */
};

static void emu_key(const char *key, const char *val, void *arg)
{
	struct emu_parse *e = arg;
	struct nt_device *d = e->d;
	struct nt_proc *p = e->p;
	uint64_t v;

	if (strcmp(key, "comm") == 0) {
		nt_copy_printable(d->comm, sizeof(d->comm), val);
	} else if (strcmp(key, "mesh") == 0) {
		if (!nt_parse_dims(val, &d->mesh_x, &d->mesh_y))
			d->mesh_x = d->mesh_y = 0;
	} else if (strcmp(key, "cluster_busy") == 0) {
		d->n_busy = nt_parse_u64_list(val, e->busy_cycles, NT_MAX_CLUSTERS);
	} else if (strcmp(key, "link_bytes") == 0) {
		e->n_links = nt_parse_u64_list(val, e->links, NT_MAX_LINKS);
	} else if (strcmp(key, "defect_mask") == 0) {
		e->have_defect = nt_parse_u64_only(val, &e->defect);
	} else if (strcmp(key, "healthy_mask") == 0) {
		e->have_healthy = nt_parse_u64_only(val, &e->healthy);
	} else if (!nt_parse_u64_only(val, &v)) {
		return;		/* every other key we use is one number */
	} else if (strcmp(key, "clusters") == 0) {
		d->clusters = v <= NT_MAX_CLUSTERS ? (unsigned)v : 0;
	} else if (strcmp(key, "tpbs") == 0) {
		d->tpbs = v <= 64 ? (unsigned)v : 0;
	} else if (strcmp(key, "clock_mhz") == 0) {
		d->clock_mhz = v <= UINT32_MAX ? (unsigned)v : 0;
	} else if (strcmp(key, "cycles") == 0) {
		e->have_cycles = true;
		e->cycles = v;
	} else if (strcmp(key, "jobs") == 0) {
		d->has_jobs = true;
		d->jobs = v;
	} else if (strcmp(key, "contexts") == 0 && v <= UINT32_MAX) {
		p->has_contexts = true;
		p->contexts = (unsigned)v;
	} else if (strcmp(key, "context_clusters") == 0 && v <= UINT32_MAX) {
		p->has_clusters = true;
		p->clusters = (uint32_t)v;
	} else if (strcmp(key, "memory") == 0) {
		d->has_memory = p->has_memory = true;
		d->memory = p->memory = v;
	}
}

static bool pid_alive(const struct nt_sources *src, int pid)
{
	char path[PATH_MAX];
	struct stat st;

	return nt_rpath(src, path, sizeof(path), "/proc/%d", pid) && stat(path, &st) == 0 &&
	       S_ISDIR(st.st_mode);
}

static void read_emulator(struct emu_state *st, const struct nt_sources *src,
			  struct nt_snapshot *snap, const char *dir, int pid)
{
	char *buf = st->buf;
	struct nt_device *d = &snap->dev[snap->n_dev];
	struct nt_proc *p = &snap->proc[snap->n_proc];
	char path[PATH_MAX], name[NT_NAME_LEN];
	struct emu_parse e;
	int r;

	snprintf(name, sizeof(name), "emu:%d", pid);
	if (nt_find_device(snap, name))
		return;		/* listed twice (two stats directories) */
	r = snprintf(path, sizeof(path), "%s/%d", dir, pid);
	if (r < 0 || (size_t)r >= sizeof(path) || nt_read_file(path, buf, sizeof(st->buf)) < 0)
		return;
	memset(d, 0, sizeof(*d));
	memset(p, 0, sizeof(*p));
	memset(&e, 0, sizeof(e));
	e.d = d;
	e.p = p;
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->kind = NT_EMULATOR;
	d->minor = -1;
	d->pid = pid;
	nt_parse_kv(buf, ':', emu_key, &e);
	nt_settle_geometry(d, e.have_defect, e.defect, e.healthy, e.have_healthy);
	/* Simulated cycles to ns at the emulator's clock, as the kernel reports. */
	d->has_device_ns = e.have_cycles;
	d->device_ns = nt_cycles_to_ns(e.cycles, d->clock_mhz);
	for (unsigned c = 0; c < d->n_busy; c++)
		d->busy_ns[c] = nt_cycles_to_ns(e.busy_cycles[c], d->clock_mhz);
	if (d->mesh_x && e.n_links >= d->mesh_x * d->mesh_y * NPU_HW_LINK_DIRS) {
		d->n_links = d->mesh_x * d->mesh_y * NPU_HW_LINK_DIRS;
		memcpy(d->link_bytes, e.links, d->n_links * sizeof(d->link_bytes[0]));
	}
	if (!d->comm[0])
		nt_read_comm(src, pid, d->comm, sizeof(d->comm));
	p->pid = pid;
	p->fd = -1;
	memcpy(p->comm, d->comm, sizeof(p->comm));
	memcpy(p->dev, d->name, sizeof(p->dev));
	if (p->has_clusters)
		p->clusters &= nt_cluster_bits(d->clusters);
	if (d->n_busy) {
		p->has_busy = true;
		for (unsigned c = 0; c < d->n_busy; c++)
			nt_add_sat(&p->busy_ns, d->busy_ns[c]);
	}
	snap->n_dev++;
	snap->n_proc++;
}

static int cmp_pid(const void *a, const void *b)
{
	const struct nt_device *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static void scan_emu_dir(struct emu_state *st, const struct nt_sources *src,
			 struct nt_snapshot *snap, const char *path)
{
	struct dirent *e;
	DIR *dir = opendir(path);

	if (!dir)
		return;
	while ((e = readdir(dir)) && snap->n_dev < NT_MAX_DEVICES && snap->n_proc < NT_MAX_PROCS) {
		int pid;

		/* Only "<pid>": the writer's temporary files have other names. */
		if (nt_parse_index(e->d_name, &pid) && pid > 0 && pid_alive(src, pid))
			read_emulator(st, src, snap, path, pid);
	}
	closedir(dir);
}

/*
 * Without $NPU_EMU_STATS_DIR every /tmp/npu-emu-<uid> is scanned, not only
 * ours: run as root, npu-top sees every user's emulators; otherwise the
 * other directories are simply unreadable.
 */
static void emu_sample(void *state, const struct nt_sources *src, struct nt_snapshot *snap)
{
	char tmp[PATH_MAX], path[PATH_MAX];
	unsigned first = snap->n_dev;
	struct dirent *e;
	DIR *dir;

	if (src->emu_dir[0]) {
		scan_emu_dir(state, src, snap, src->emu_dir);
	} else if (nt_rpath(src, tmp, sizeof(tmp), "/tmp") && (dir = opendir(tmp))) {
		while ((e = readdir(dir))) {
			int uid;
			int r;

			if (strncmp(e->d_name, "npu-emu-", 8) != 0 ||
			    !nt_parse_index(e->d_name + 8, &uid))
				continue;
			r = snprintf(path, sizeof(path), "%s/%s", tmp, e->d_name);
			if (r > 0 && (size_t)r < sizeof(path))
				scan_emu_dir(state, src, snap, path);
		}
		closedir(dir);
	}
	/* Readdir order is arbitrary; show emulators by pid (process rows are sorted later). */
	qsort(&snap->dev[first], snap->n_dev - first, sizeof(snap->dev[0]), cmp_pid);
}


static void *emu_open(const struct nt_sources *src)
{
	(void)src;
	return calloc(1, sizeof(struct emu_state));
}

const struct nt_source nt_source_emulator = {
	.name = "emulator",
	.open = emu_open,
	.sample = emu_sample,
	.close = free,
};
