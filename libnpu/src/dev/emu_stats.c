// SPDX-License-Identifier: MIT
/* The emulator's stats file for monitors (emu_stats.h). */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dev/emu_stats.h"
#include "npu/npu_emu_stats.h"
#include "npu/npu_hw_geom.h"

static pthread_mutex_t claim_lock = PTHREAD_MUTEX_INITIALIZER;
static bool claimed;	/* protected by claim_lock: a publisher exists */

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Files of processes that died without closing their emulator. */
static void remove_stale(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end, path[512];
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0 || e->d_name[0] == '0')
			continue;
		if (kill((pid_t)pid, 0) && errno == ESRCH) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	}
	closedir(d);
}

bool npu_emu_stats_claim(struct npu_emu_publisher *p)
{
	const char *env = getenv("NPU_EMU_STATS"), *dir = getenv(NPU_EMU_STATS_DIR_ENV);
	char def[64];
	struct stat st;

	memset(p, 0, sizeof(*p));
	if (env && !strcmp(env, "0"))
		return false;
	if (!dir || !*dir) {
		snprintf(def, sizeof(def), NPU_EMU_STATS_DIR_FMT, (unsigned)getuid());
		dir = def;
	}
	/* Private to the user: a directory someone else owns is not used. */
	if (mkdir(dir, 0700) && errno != EEXIST)
		return false;
	if (stat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != getuid())
		return false;
	remove_stale(dir);
	if ((size_t)snprintf(p->path, sizeof(p->path), "%s/%d", dir, (int)getpid()) >=
	    sizeof(p->path))
		return false;
	pthread_mutex_lock(&claim_lock);
	p->active = !claimed;
	claimed = true;
	pthread_mutex_unlock(&claim_lock);
	return p->active;
}

bool npu_emu_stats_due(struct npu_emu_publisher *p, bool force)
{
	uint64_t t;

	if (!p->active)
		return false;
	t = now_ns(CLOCK_MONOTONIC);
	if (!force && p->last_ns && t - p->last_ns < 100000000ull)
		return false;
	p->last_ns = t;
	return true;
}

static void list(FILE *f, const char *key, const uint64_t *v, unsigned n)
{
	fprintf(f, "%s:", key);
	for (unsigned i = 0; i < n; i++)
		fprintf(f, " %llu", (unsigned long long)v[i]);
	fputc('\n', f);
}

void npu_emu_stats_write(struct npu_emu_publisher *p, const struct npu_emu_stats *s)
{
	const npu_device_info *in = s->info;
	const npu_device_counters *c = &s->counters;
	unsigned links = in->mesh_x * in->mesh_y * NPU_HW_LINK_DIRS;
	char tmp[sizeof(p->path) + 8], comm[64] = "";
	FILE *f;

	if (!p->active)
		return;
	f = fopen("/proc/self/comm", "r");
	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", p->path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "pid: %d\ncomm: %s\nclusters: %u\ntpbs: %u\nmesh: %ux%u\nclock_mhz: %u\n",
		(int)getpid(), comm, in->clusters, in->tpbs_per_cluster, in->mesh_x, in->mesh_y,
		in->clock_mhz);
	fprintf(f, "defect_mask: 0x%x\nhealthy_mask: 0x%x\ncycles: %llu\njobs: %llu\n",
		in->defect_mask, in->healthy_mask, (unsigned long long)c->cycles,
		(unsigned long long)s->jobs);
	list(f, "cluster_busy", c->cluster_busy,
	     in->clusters < NPU_MAX_CLUSTERS ? in->clusters : NPU_MAX_CLUSTERS);
	fprintf(f, "unit_busy:");
	for (unsigned k = 0; k < in->clusters && k < NPU_MAX_CLUSTERS; k++)
		for (unsigned u = 0; u < NPU_UNITS; u++)
			fprintf(f, " %llu", (unsigned long long)c->unit_busy[k][u]);
	fputc('\n', f);
	list(f, "link_bytes", c->link_bytes, links < NPU_MAX_LINKS ? links : NPU_MAX_LINKS);
	list(f, "dma_bytes", c->dma_bytes, NPU_DMA_ENGINES);
	fprintf(f, "contexts: %u\ncontext_clusters: 0x%x\nmemory: %llu\nupdated_ns: %llu\n",
		s->contexts, s->context_clusters, (unsigned long long)s->memory,
		(unsigned long long)now_ns(CLOCK_REALTIME));
	if (fclose(f) || rename(tmp, p->path))
		unlink(tmp);
}

void npu_emu_stats_release(struct npu_emu_publisher *p)
{
	if (!p->active)
		return;
	unlink(p->path);
	pthread_mutex_lock(&claim_lock);
	claimed = false;
	pthread_mutex_unlock(&claim_lock);
	p->active = false;
}
