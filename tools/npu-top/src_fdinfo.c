// SPDX-License-Identifier: MIT
/*
 * npu-top's process source: the clients of the kernel devices the sysfs
 * source found, through /proc/<pid>/fd and the DRM fdinfo keys
 * (drm-engine-npu, in ns).
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

struct fdinfo_state {
	char buf[NT_FILE_MAX];		/* one fdinfo file at a time */
};

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
		f->has_npu_ns = parse_ns(val, &p->busy_ns);
	} else if (strncmp(key, "drm-engine-cluster", 18) == 0) {
		if (parse_ns(val, &v)) {
			nt_add_sat(&f->cluster_ns_sum, v);
			f->has_cluster_ns = true;
		}
	} else if (strcmp(key, "drm-engine-capacity-npu") == 0) {
		if (nt_parse_u64_only(val, &v) && v >= 1 && v <= NT_MAX_CLUSTERS)
			p->capacity = (unsigned)v;
	} else if (strncmp(key, "drm-total-", 10) == 0) {
		if (nt_parse_size(val, &v)) {
			nt_add_sat(&p->memory, v);
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

	if (!nt_rpath(src, path, sizeof(path), "/proc/%d/fd/%s", pid, fdname))
		return false;
	len = readlink(path, target, sizeof(target) - 1);
	if (len <= 0)
		return false;
	target[len] = '\0';
	base = strrchr(target, '/');
	if (base && nt_parse_accel_name(base + 1, &minor) && base - target >= 9 &&
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

static void scan_process_fds(struct fdinfo_state *st, const struct nt_sources *src,
			     struct nt_snapshot *snap, int pid)
{
	char *buf = st->buf;
	char path[PATH_MAX], comm[NT_COMM_LEN] = "";
	struct dirent *e;
	DIR *dir;

	if (!nt_rpath(src, path, sizeof(path), "/proc/%d/fd", pid))
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

		if (!nt_parse_index(e->d_name, &fd) ||
		    !fd_device(src, pid, e->d_name, dev, sizeof(dev)))
			continue;
		if (!nt_find_device(snap, dev))
			continue;	/* an accel node of another driver */
		if (nt_read_rfile(src, buf, sizeof(st->buf), "/proc/%d/fdinfo/%d", pid, fd) < 0)
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
			p->has_busy = true;
		} else if (f.has_cluster_ns) {
			p->has_busy = true;
			p->busy_ns = f.cluster_ns_sum;
		}
		/* dup()ed or inherited fds of one open file: one row. */
		for (unsigned i = 0; i < snap->n_proc && !dup; i++)
			dup = same_client(&snap->proc[i], p);
		if (dup)
			continue;
		if (!comm[0])
			nt_read_comm(src, pid, comm, sizeof(comm));
		memcpy(p->comm, comm, sizeof(comm));
		snap->n_proc++;
	}
	closedir(dir);
}

static void fdinfo_sample(void *state, const struct nt_sources *src, struct nt_snapshot *snap)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *dir;

	/* Walking every process's fds costs; skip it when there is nothing to match. */
	if (!snap->n_dev)
		return;
	if (!nt_rpath(src, path, sizeof(path), "/proc"))
		return;
	dir = opendir(path);
	if (!dir)
		return;
	while ((e = readdir(dir)) && snap->n_proc < NT_MAX_PROCS) {
		int pid;

		if (nt_parse_index(e->d_name, &pid) && pid > 0)
			scan_process_fds(state, src, snap, pid);
	}
	closedir(dir);
}

static void *fdinfo_open(const struct nt_sources *src)
{
	(void)src;
	return calloc(1, sizeof(struct fdinfo_state));
}

const struct nt_source nt_source_fdinfo = {
	.name = "fdinfo",
	.open = fdinfo_open,
	.sample = fdinfo_sample,
	.close = free,
};
