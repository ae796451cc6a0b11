// SPDX-License-Identifier: MIT
/*
 * npu-top: discover kernel devices, their clients and emulators, and read
 * their counters into a snapshot.
 *
 * Everything is best effort: a file that is missing, unreadable (another
 * user's /proc/<pid>/fd) or malformed leaves the matching fields unset;
 * nothing here fails the whole sample.
 */
#include "sources.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "npu/npu_emu_stats.h"
#include "parse.h"

/* ---- paths ---- */

/* Format a path below the root into out; false if it does not fit. */
static bool rpath(const struct nt_sources *src, char *out, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static bool rpath(const struct nt_sources *src, char *out, size_t n, const char *fmt, ...)
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
static long read_rfile(const struct nt_sources *src, char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static long read_rfile(const struct nt_sources *src, char *buf, size_t size, const char *fmt, ...)
{
	char rel[PATH_MAX], path[PATH_MAX];
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	if (r < 0 || (size_t)r >= sizeof(rel) || !rpath(src, path, sizeof(path), "%s", rel))
		return -1;
	return nt_read_file(path, buf, size);
}

/* "123" -> 123 for names made only of digits (pids, fds, minors). */
static bool parse_index(const char *s, int *out)
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
static bool parse_accel_name(const char *s, int *minor)
{
	return strncmp(s, "accel", 5) == 0 && parse_index(s + 5, minor);
}

void nt_sources_init(struct nt_sources *src)
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
}

const struct nt_device *nt_snapshot_device(const struct nt_snapshot *snap, const char *name)
{
	for (unsigned i = 0; i < snap->n_dev; i++)
		if (strcmp(snap->dev[i].name, name) == 0)
			return &snap->dev[i];
	return NULL;
}

static struct nt_device *find_device(struct nt_snapshot *snap, const char *name)
{
	return (struct nt_device *)nt_snapshot_device(snap, name);
}

/* ---- geometry shared by both device kinds ---- */

static uint32_t cluster_bits(unsigned clusters)
{
	return clusters >= 32 ? UINT32_MAX : (1u << clusters) - 1;
}

/*
 * Make the parsed fields consistent: counts within the hardware limits,
 * masks within the cluster count, and a mesh only if every cluster plus
 * the CCB and the DDR port fits on it (else the node mapping is unknown
 * and no heat map can be drawn).
 */
static void settle_geometry(struct nt_device *d, bool have_masks, uint64_t defect,
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
		d->defect_mask = (uint32_t)defect & cluster_bits(d->clusters);
		if (have_healthy && healthy <= UINT32_MAX)
			d->healthy_mask = (uint32_t)healthy & cluster_bits(d->clusters) &
					  ~d->defect_mask;
		else
			d->healthy_mask = cluster_bits(d->clusters) & ~d->defect_mask;
	}
}

/* ---- kernel devices ---- */

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

	if (read_rfile(src, buf, sizeof(buf), "%s/%s", dir, name) < 0)
		return false;
	return nt_parse_u64_only(buf, out);
}

static void read_kernel_device(const struct nt_sources *src, struct nt_device *d)
{
	char dir[PATH_MAX], path[PATH_MAX], link[PATH_MAX];
	static char buf[NT_FILE_MAX];
	uint64_t defect = 0, healthy = 0, v;
	bool have_defect, have_healthy;
	ssize_t n;

	snprintf(dir, sizeof(dir), "/sys/class/accel/%s/device/npu", d->name);
	if (read_rfile(src, buf, sizeof(buf), "%s/geometry", dir) >= 0)
		parse_geometry(d, buf);
	if (read_rfile(src, buf, sizeof(buf), "%s/busy_ns", dir) >= 0)
		d->n_busy = nt_parse_u64_list(buf, d->busy,
					      d->clusters ? d->clusters : NT_MAX_CLUSTERS);
	have_defect = read_u64_file(src, dir, "defect_mask", &defect);
	have_healthy = read_u64_file(src, dir, "healthy_mask", &healthy);
	settle_geometry(d, have_defect, defect, healthy, have_healthy);
	if (read_u64_file(src, dir, "free_clusters", &v) && v <= UINT32_MAX) {
		d->has_free = true;
		d->free_clusters = (uint32_t)v & cluster_bits(d->clusters);
	}
	d->has_resets = read_u64_file(src, dir, "reset_count", &d->resets);
	if (read_rfile(src, buf, sizeof(buf), "%s/queue_depth", dir) >= 0)
		d->n_queues = nt_parse_u64_list(buf, d->queue_depth, NT_MAX_QUEUES);
	/* Optional: older drivers have no link counters. */
	if (d->mesh_x && read_rfile(src, buf, sizeof(buf), "%s/link_bytes", dir) >= 0) {
		unsigned want = d->mesh_x * d->mesh_y * NPU_HW_LINK_DIRS;

		if (nt_parse_u64_list(buf, d->link_bytes, want) == want)
			d->n_links = want;
	}
	/* The device link names the PCI function, e.g. ../../../0000:00:04.0. */
	if (rpath(src, path, sizeof(path), "/sys/class/accel/%s/device", d->name)) {
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

	if (!rpath(src, path, sizeof(path), "/dev/accel/%s", name) || stat(path, &st) != 0)
		return false;
	if (!(S_ISCHR(st.st_mode) && major(st.st_rdev) == NT_ACCEL_MAJOR) &&
	    !(src->fake && S_ISREG(st.st_mode)))
		return false;
	/* Bound to npu: the driver's sysfs group exists (other accel drivers lack it). */
	if (!rpath(src, path, sizeof(path), "/sys/class/accel/%s/device/npu", name) ||
	    stat(path, &st) != 0)
		return false;
	return S_ISDIR(st.st_mode);
}

static int cmp_minor(const void *a, const void *b)
{
	const struct nt_device *x = a, *y = b;

	return (x->minor > y->minor) - (x->minor < y->minor);
}

static void scan_kernel_devices(const struct nt_sources *src, struct nt_snapshot *snap)
{
	char path[PATH_MAX];
	struct dirent *e;
	unsigned first = snap->n_dev;
	DIR *dir;

	if (!rpath(src, path, sizeof(path), "/dev/accel"))
		return;
	dir = opendir(path);
	if (!dir)
		return;
	while ((e = readdir(dir)) && snap->n_dev < NT_MAX_DEVICES) {
		struct nt_device *d = &snap->dev[snap->n_dev];
		int minor;

		if (!parse_accel_name(e->d_name, &minor) || !is_npu_node(src, e->d_name))
			continue;
		memset(d, 0, sizeof(*d));
		snprintf(d->name, sizeof(d->name), "accel%d", minor);
		d->kind = NT_KERNEL;
		d->minor = minor;
		read_kernel_device(src, d);
		snap->n_dev++;
	}
	closedir(dir);
	qsort(&snap->dev[first], snap->n_dev - first, sizeof(snap->dev[0]), cmp_minor);
}

/* ---- clients of kernel devices ---- */

struct fdinfo_parse {
	struct nt_proc *p;
	bool other_driver;
	bool has_npu_ns;
	uint64_t cluster_ns_sum;
	bool has_cluster_ns;
};

/* "123 ns" -> 123. */
static bool parse_ns(const char *val, uint64_t *out)
{
	const char *s = val;

	if (!nt_parse_u64(&s, out))
		return false;
	while (*s == ' ' || *s == '\t')
		s++;
	return *s == '\0' || strcmp(s, "ns") == 0;
}

static void add_sat(uint64_t *sum, uint64_t v)
{
	*sum = *sum > UINT64_MAX - v ? UINT64_MAX : *sum + v;
}

static void fdinfo_key(const char *key, const char *val, void *arg)
{
	struct fdinfo_parse *f = arg;
	struct nt_proc *p = f->p;
	uint64_t v;

	if (strcmp(key, "drm-driver") == 0) {
		f->other_driver = strcmp(val, "npu") != 0;
	} else if (strcmp(key, "drm-client-id") == 0) {
		p->has_client = nt_parse_u64_only(val, &p->client_id);
	} else if (strcmp(key, "drm-engine-npu") == 0) {
		f->has_npu_ns = parse_ns(val, &p->engine);
	} else if (strncmp(key, "drm-engine-cluster", 18) == 0) {
		if (parse_ns(val, &v)) {
			add_sat(&f->cluster_ns_sum, v);
			f->has_cluster_ns = true;
		}
	} else if (strcmp(key, "drm-engine-capacity-npu") == 0) {
		if (nt_parse_u64_only(val, &v) && v >= 1 && v <= NT_MAX_CLUSTERS)
			p->capacity = (unsigned)v;
	} else if (strncmp(key, "drm-total-", 10) == 0) {
		if (nt_parse_size(val, &v)) {
			add_sat(&p->memory, v);
			p->has_memory = true;
		}
	} else if (strcmp(key, "npu-contexts") == 0) {
		if (nt_parse_u64_only(val, &v) && v <= UINT32_MAX) {
			p->has_contexts = true;
			p->contexts = (unsigned)v;
		}
	} else if (strcmp(key, "npu-clusters") == 0) {
		if (nt_parse_u64_only(val, &v) && v <= UINT32_MAX) {
			p->has_clusters = true;
			p->clusters = (uint32_t)v;
		}
	}
}

static void read_comm(const struct nt_sources *src, int pid, char *out, size_t n)
{
	char buf[256];
	char *nl;

	if (read_rfile(src, buf, sizeof(buf), "/proc/%d/comm", pid) < 0) {
		snprintf(out, n, "?");
		return;
	}
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	nt_copy_printable(out, n, buf);
}

/*
 * Which accel node an fd refers to.  The link target is enough for real
 * systems (/dev/accel/accelN) and for test trees (<root>/dev/accel/accelN);
 * a node under another name in /dev is recognised by its major.
 */
static bool fd_device(const struct nt_sources *src, int pid, const char *fdname, char *name,
		      size_t n)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *base;
	struct stat st;
	ssize_t len;
	int minor;

	if (!rpath(src, path, sizeof(path), "/proc/%d/fd/%s", pid, fdname))
		return false;
	len = readlink(path, target, sizeof(target) - 1);
	if (len <= 0)
		return false;
	target[len] = '\0';
	base = strrchr(target, '/');
	if (base && parse_accel_name(base + 1, &minor) && base - target >= 9 &&
	    strncmp(base - 9, "dev/accel", 9) == 0) {
		snprintf(name, n, "accel%d", minor);
		return true;
	}
	if (strncmp(target, "/dev/", 5) != 0 || stat(path, &st) != 0 ||
	    !S_ISCHR(st.st_mode) || major(st.st_rdev) != NT_ACCEL_MAJOR)
		return false;
	snprintf(name, n, "accel%u", minor(st.st_rdev));
	return true;
}

static bool same_client(const struct nt_proc *a, const struct nt_proc *b)
{
	if (a->pid != b->pid || strcmp(a->dev, b->dev) != 0)
		return false;
	/* Without a client id only the fd identifies the client. */
	if (a->has_client && b->has_client)
		return a->client_id == b->client_id;
	return a->fd == b->fd;
}

static void scan_process_fds(const struct nt_sources *src, struct nt_snapshot *snap, int pid)
{
	static char buf[NT_FILE_MAX];
	char path[PATH_MAX], comm[NT_COMM_LEN] = "";
	struct dirent *e;
	DIR *dir;

	if (!rpath(src, path, sizeof(path), "/proc/%d/fd", pid))
		return;
	dir = opendir(path);	/* fails for other users' processes unless root */
	if (!dir)
		return;
	while ((e = readdir(dir)) && snap->n_proc < NT_MAX_PROCS) {
		struct nt_proc *p = &snap->proc[snap->n_proc];
		char dev[NT_NAME_LEN];
		struct fdinfo_parse f;
		bool dup = false;
		int fd;

		if (!parse_index(e->d_name, &fd) ||
		    !fd_device(src, pid, e->d_name, dev, sizeof(dev)))
			continue;
		if (!find_device(snap, dev))
			continue;	/* an accel node of another driver */
		if (read_rfile(src, buf, sizeof(buf), "/proc/%d/fdinfo/%d", pid, fd) < 0)
			continue;	/* closed meanwhile */
		memset(p, 0, sizeof(*p));
		memset(&f, 0, sizeof(f));
		f.p = p;
		p->pid = pid;
		p->fd = fd;
		snprintf(p->dev, sizeof(p->dev), "%s", dev);
		nt_parse_kv(buf, ':', fdinfo_key, &f);
		if (f.other_driver)
			continue;
		if (f.has_npu_ns) {
			p->has_engine = true;
		} else if (f.has_cluster_ns) {
			p->has_engine = true;
			p->engine = f.cluster_ns_sum;
		}
		/* dup()ed or inherited fds of one open file: one row. */
		for (unsigned i = 0; i < snap->n_proc && !dup; i++)
			dup = same_client(&snap->proc[i], p);
		if (dup)
			continue;
		if (!comm[0])
			read_comm(src, pid, comm, sizeof(comm));
		memcpy(p->comm, comm, sizeof(comm));
		snap->n_proc++;
	}
	closedir(dir);
}

static void scan_processes(const struct nt_sources *src, struct nt_snapshot *snap)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *dir;

	if (!rpath(src, path, sizeof(path), "/proc"))
		return;
	dir = opendir(path);
	if (!dir)
		return;
	while ((e = readdir(dir)) && snap->n_proc < NT_MAX_PROCS) {
		int pid;

		if (parse_index(e->d_name, &pid) && pid > 0)
			scan_process_fds(src, snap, pid);
	}
	closedir(dir);
}

/* ---- emulators ---- */

struct emu_parse {
	struct nt_device *d;
	struct nt_proc *p;
	bool have_defect, have_healthy;
	uint64_t defect, healthy;
	unsigned n_links;
	uint64_t links[NT_MAX_LINKS];
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
		d->n_busy = nt_parse_u64_list(val, d->busy, NT_MAX_CLUSTERS);
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
		d->has_cycles = true;
		d->cycles = v;
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

	return rpath(src, path, sizeof(path), "/proc/%d", pid) && stat(path, &st) == 0 &&
	       S_ISDIR(st.st_mode);
}

static void read_emulator(const struct nt_sources *src, struct nt_snapshot *snap,
			  const char *dir, int pid)
{
	static char buf[NT_FILE_MAX];
	struct nt_device *d = &snap->dev[snap->n_dev];
	struct nt_proc *p = &snap->proc[snap->n_proc];
	char path[PATH_MAX], name[NT_NAME_LEN];
	struct emu_parse e;
	int r;

	snprintf(name, sizeof(name), "emu:%d", pid);
	if (find_device(snap, name))
		return;		/* listed twice (two stats directories) */
	r = snprintf(path, sizeof(path), "%s/%d", dir, pid);
	if (r < 0 || (size_t)r >= sizeof(path) || nt_read_file(path, buf, sizeof(buf)) < 0)
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
	settle_geometry(d, e.have_defect, e.defect, e.healthy, e.have_healthy);
	if (d->mesh_x && e.n_links >= d->mesh_x * d->mesh_y * NPU_HW_LINK_DIRS) {
		d->n_links = d->mesh_x * d->mesh_y * NPU_HW_LINK_DIRS;
		memcpy(d->link_bytes, e.links, d->n_links * sizeof(d->link_bytes[0]));
	}
	if (!d->comm[0])
		read_comm(src, pid, d->comm, sizeof(d->comm));
	p->pid = pid;
	p->fd = -1;
	memcpy(p->comm, d->comm, sizeof(p->comm));
	memcpy(p->dev, d->name, sizeof(p->dev));
	if (p->has_clusters)
		p->clusters &= cluster_bits(d->clusters);
	if (d->n_busy) {
		p->has_engine = true;
		for (unsigned c = 0; c < d->n_busy; c++)
			add_sat(&p->engine, d->busy[c]);
	}
	snap->n_dev++;
	snap->n_proc++;
}

static int cmp_pid(const void *a, const void *b)
{
	const struct nt_device *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static void scan_emu_dir(const struct nt_sources *src, struct nt_snapshot *snap, const char *path)
{
	struct dirent *e;
	DIR *dir = opendir(path);

	if (!dir)
		return;
	while ((e = readdir(dir)) && snap->n_dev < NT_MAX_DEVICES && snap->n_proc < NT_MAX_PROCS) {
		int pid;

		/* Only "<pid>": the writer's temporary files have other names. */
		if (parse_index(e->d_name, &pid) && pid > 0 && pid_alive(src, pid))
			read_emulator(src, snap, path, pid);
	}
	closedir(dir);
}

/*
 * Without $NPU_EMU_STATS_DIR every /tmp/npu-emu-<uid> is scanned, not only
 * ours: run as root, npu-top sees every user's emulators; otherwise the
 * other directories are simply unreadable.
 */
static void scan_emulators(const struct nt_sources *src, struct nt_snapshot *snap)
{
	char tmp[PATH_MAX], path[PATH_MAX];
	unsigned first = snap->n_dev;
	struct dirent *e;
	DIR *dir;

	if (src->emu_dir[0]) {
		scan_emu_dir(src, snap, src->emu_dir);
	} else if (rpath(src, tmp, sizeof(tmp), "/tmp") && (dir = opendir(tmp))) {
		while ((e = readdir(dir))) {
			int uid;
			int r;

			if (strncmp(e->d_name, "npu-emu-", 8) != 0 ||
			    !parse_index(e->d_name + 8, &uid))
				continue;
			r = snprintf(path, sizeof(path), "%s/%s", tmp, e->d_name);
			if (r > 0 && (size_t)r < sizeof(path))
				scan_emu_dir(src, snap, path);
		}
		closedir(dir);
	}
	/* Readdir order is arbitrary; show emulators by pid (process rows are sorted later). */
	qsort(&snap->dev[first], snap->n_dev - first, sizeof(snap->dev[0]), cmp_pid);
}

/* ---- the sample ---- */

void nt_snapshot_take(const struct nt_sources *src, struct nt_snapshot *snap)
{
	struct timespec mono, real;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	snap->mono_ns = (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec;
	snap->unix_s = (double)real.tv_sec + real.tv_nsec / 1e9;
	snap->n_dev = 0;
	snap->n_proc = 0;
	scan_kernel_devices(src, snap);
	/* Walking every process's fds costs; skip it when there is nothing to match. */
	if (snap->n_dev)
		scan_processes(src, snap);
	scan_emulators(src, snap);
}
