// SPDX-License-Identifier: MIT
/*
 * npu-top: rates between two snapshots and the mesh layout.
 */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t nt_fused(const struct nt_device *d)
{
	return d->has_masks ? d->defect_mask : 0;
}

/* ---- mesh ---- */

/*
 * The default placement of qemu-device/core (place_nodes) and
 * npu_hw_geom.h: CCB at node 0, DDR port at node mesh_x - 1, clusters in
 * the remaining nodes in row-major order.  The driver does not export
 * NPU_REG_CLUSTER_POS, so this is the layout every M100 build uses.
 */
int nt_node_of_cluster(const struct nt_device *d, unsigned cluster)
{
	unsigned nodes = d->mesh_x * d->mesh_y, n = 0;

	for (unsigned node = 0; node < nodes; node++) {
		if (node == NPU_M100_CCB_NODE || node == d->mesh_x - 1)
			continue;
		if (n++ == cluster)
			return cluster < d->clusters ? (int)node : -1;
	}
	return -1;
}

int nt_node_kind(const struct nt_device *d, unsigned node)
{
	unsigned n = 0;

	if (node == NPU_M100_CCB_NODE)
		return NT_NODE_CCB;
	if (node == d->mesh_x - 1)
		return NT_NODE_DDR;
	for (unsigned i = 0; i < node; i++)
		if (i != NPU_M100_CCB_NODE && i != d->mesh_x - 1)
			n++;
	return n < d->clusters ? (int)n : NT_NODE_EMPTY;
}

int nt_link_dest(const struct nt_device *d, unsigned link)
{
	unsigned node = link / NPU_HW_LINK_DIRS, x, y;

	if (!d->mesh_x || node >= d->mesh_x * d->mesh_y)
		return -1;
	x = node % d->mesh_x;
	y = node / d->mesh_x;
	switch (link % NPU_HW_LINK_DIRS) {
	case NPU_LINK_EAST:
		return x + 1 < d->mesh_x ? (int)(node + 1) : -1;
	case NPU_LINK_WEST:
		return x > 0 ? (int)(node - 1) : -1;
	case NPU_LINK_NORTH:
		return y > 0 ? (int)(node - d->mesh_x) : -1;
	default:
		return y + 1 < d->mesh_y ? (int)(node + d->mesh_x) : -1;
	}
}

const char *nt_dir_name(unsigned dir)
{
	static const char *const names[NPU_HW_LINK_DIRS] = { "east", "west", "north", "south" };

	return names[dir % NPU_HW_LINK_DIRS];
}

void nt_node_label(const struct nt_device *d, unsigned node, char *buf, size_t n)
{
	int k = nt_node_kind(d, node);

	if (k == NT_NODE_CCB)
		snprintf(buf, n, "CCB");
	else if (k == NT_NODE_DDR)
		snprintf(buf, n, "DDR");
	else if (k == NT_NODE_EMPTY)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "C%d", k);
}

/* ---- rates ---- */

static double clamp_pct(double pct)
{
	if (!isfinite(pct) || pct < 0)
		return 0;
	return pct > 100 ? 100 : pct;
}

/* cur - prev, false when the counter went backwards (reset, reuse). */
static bool delta(uint64_t prev, uint64_t cur, double *out)
{
	if (cur < prev)
		return false;
	*out = (double)(cur - prev);
	return true;
}

static unsigned popcount32(uint32_t v)
{
	unsigned n = 0;

	for (; v; v &= v - 1)
		n++;
	return n;
}

/*
 * Time the device could have worked between the snapshots, in ns: wall
 * time for a kernel device, simulated time for an emulator (which only
 * advances while it runs jobs).  Busy counters are ns from every source.
 */
static bool device_span(const struct nt_device *p, const struct nt_device *c, double wall_ns,
			double *span)
{
	if (c->kind == NT_KERNEL) {
		*span = wall_ns;
		return wall_ns > 0;
	}
	return p->has_device_ns && c->has_device_ns && delta(p->device_ns, c->device_ns, span);
}

static void device_rates(struct nt_dev_view *dv, const struct nt_device *p, double wall_ns)
{
	const struct nt_device *d = dv->d;
	uint32_t fused = nt_fused(d);
	double span, sum = 0, link_span;
	unsigned healthy = 0;

	if (!p || !device_span(p, d, wall_ns, &span))
		return;
	for (unsigned c = 0; c < d->clusters; c++) {
		double db;

		if (fused & (1u << c) || c >= d->n_busy || c >= p->n_busy ||
		    !delta(p->busy_ns[c], d->busy_ns[c], &db))
			continue;
		/* An idle emulator has no simulated time at all: 0 %, not unknown. */
		dv->cl_pct[c] = span > 0 ? clamp_pct(100.0 * db / span) : 0;
		dv->cl_ok[c] = true;
		sum += dv->cl_pct[c];
		healthy++;
	}
	if (healthy) {
		dv->busy_ok = true;
		dv->busy_pct = sum / healthy;
	}

	if (!d->n_links || d->n_links != p->n_links || d->mesh_x != p->mesh_x ||
	    d->mesh_y != p->mesh_y)
		return;
	/* Device cycles in the interval: link counters are bytes per cycle. */
	if (d->kind == NT_KERNEL) {
		if (!d->clock_mhz)
			return;
		link_span = wall_ns / 1e3 * d->clock_mhz;
	} else {
		link_span = span / 1e3 * (d->clock_mhz ? d->clock_mhz : NPU_M100_CLOCK_MHZ);
	}
	link_span *= NT_LINK_BYTES_PER_CYCLE;
	for (unsigned l = 0; l < d->n_links; l++) {
		double db;

		if (!delta(p->link_bytes[l], d->link_bytes[l], &db))
			return;
		dv->link_pct[l] = link_span > 0 ? clamp_pct(100.0 * db / link_span) : 0;
	}
	dv->links_ok = true;
	for (unsigned l = 0; l < d->n_links; l++) {
		if (nt_link_dest(d, l) < 0 || dv->link_pct[l] <= 0)
			continue;
		if (dv->hot < 0 || dv->link_pct[l] > dv->link_pct[dv->hot])
			dv->hot = (int)l;
	}
}

static const struct nt_proc *find_proc(const struct nt_snapshot *s, const struct nt_proc *p)
{
	for (unsigned i = 0; i < s->n_proc; i++) {
		const struct nt_proc *q = &s->proc[i];

		if (q->pid != p->pid || strcmp(q->dev, p->dev) != 0)
			continue;
		if (p->has_client ? (q->has_client && q->client_id == p->client_id)
				  : (!q->has_client && q->fd == p->fd))
			return q;
	}
	return NULL;
}

static void proc_rate(struct nt_proc_view *pv, const struct nt_snapshot *prev,
		      const struct nt_device *pd, const struct nt_device *d, double wall_ns)
{
	const struct nt_proc *p = pv->p, *q;
	unsigned held = 0;
	double span, de;

	if (!prev || !pd || !p->has_busy || !(q = find_proc(prev, p)) || !q->has_busy ||
	    !device_span(pd, d, wall_ns, &span) || !delta(q->busy_ns, p->busy_ns, &de))
		return;
	if (p->has_clusters)
		held = popcount32(p->clusters & ~nt_fused(d));
	if (!held)
		held = p->capacity;
	if (!held)
		held = d->clusters - popcount32(nt_fused(d));
	if (!held)
		return;
	pv->busy_pct = span > 0 ? clamp_pct(100.0 * de / (span * held)) : 0;
	pv->busy_ok = true;
}

static enum nt_sort sort_key;

static int cmp_proc(const void *a, const void *b)
{
	const struct nt_proc_view *x = a, *y = b;
	int r = 0;

	if (sort_key == NT_SORT_BUSY) {
		double bx = x->busy_ok ? x->busy_pct : -1, by = y->busy_ok ? y->busy_pct : -1;

		r = (bx < by) - (bx > by);
	} else if (sort_key == NT_SORT_MEMORY) {
		uint64_t mx = x->p->has_memory ? x->p->memory : 0;
		uint64_t my = y->p->has_memory ? y->p->memory : 0;

		r = (mx < my) - (mx > my);
	}
	if (!r)
		r = (x->p->pid > y->p->pid) - (x->p->pid < y->p->pid);
	if (!r)
		r = (x->dev > y->dev) - (x->dev < y->dev);
	if (!r)
		r = (x->p->client_id > y->p->client_id) - (x->p->client_id < y->p->client_id);
	return r;
}

void nt_view_sort(struct nt_view *v, enum nt_sort sort)
{
	sort_key = sort;
	qsort(v->proc, v->n_proc, sizeof(v->proc[0]), cmp_proc);
}

const char *nt_sort_name(enum nt_sort sort)
{
	static const char *const names[NT_SORT_COUNT] = { "busy", "memory", "pid" };

	return sort < NT_SORT_COUNT ? names[sort] : "?";
}

void nt_view_build(struct nt_view *v, const struct nt_snapshot *prev,
		   const struct nt_snapshot *cur, enum nt_sort sort)
{
	double wall_ns = prev ? (double)(cur->mono_ns - prev->mono_ns) : 0;

	memset(v, 0, sizeof(*v));
	v->unix_s = cur->unix_s;
	v->interval_s = wall_ns > 0 ? wall_ns / 1e9 : 0;
	v->n_dev = cur->n_dev;
	for (unsigned i = 0; i < cur->n_dev; i++) {
		struct nt_dev_view *dv = &v->dev[i];

		dv->d = &cur->dev[i];
		dv->hot = -1;
		/* A kernel device's memory is summed from its clients below (0 if none). */
		dv->memory_ok = dv->d->kind == NT_KERNEL || dv->d->has_memory;
		dv->memory = dv->d->kind == NT_KERNEL ? 0 : dv->d->memory;
		device_rates(dv, prev ? nt_snapshot_device(prev, dv->d->name) : NULL, wall_ns);
	}
	for (unsigned i = 0; i < cur->n_proc; i++) {
		const struct nt_proc *p = &cur->proc[i];
		struct nt_proc_view *pv = &v->proc[v->n_proc];
		struct nt_dev_view *dv = NULL;
		unsigned di;

		for (di = 0; di < v->n_dev && !dv; di++)
			if (strcmp(v->dev[di].d->name, p->dev) == 0)
				dv = &v->dev[di];
		if (!dv)
			continue;
		pv->p = p;
		pv->dev = (unsigned)(dv - v->dev);
		proc_rate(pv, prev, prev ? nt_snapshot_device(prev, p->dev) : NULL, dv->d, wall_ns);
		dv->n_procs++;
		/* Clients' drm-total-* summed: a shared buffer counts once per client. */
		if (dv->d->kind == NT_KERNEL && p->has_memory)
			dv->memory = p->memory > UINT64_MAX - dv->memory ? UINT64_MAX
									 : dv->memory + p->memory;
		v->n_proc++;
	}
	nt_view_sort(v, sort);
}
