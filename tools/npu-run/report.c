// SPDX-License-Identifier: MIT
/*
 * npu-run: the summary and the profile.  The numbers are computed once
 * into struct summary and both printers read it, so the text and the
 * JSON output cannot disagree.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image_input.h"
#include "json.h"
#include "report.h"
#include "shapes.h"
#include "util.h"

/* M100 rates the counters are measured against; the API does not expose
 * them (Documentation/hw: 64 B/cycle per NoC link, 256 B/cycle DDR/DMA). */
#define LINK_BYTES_PER_CYCLE	64.0
#define DMA_BYTES_PER_CYCLE	256.0
#define HOT_LINKS		5
#define LINK_DIRS		4

static const char *const unit_keys[NPU_UNITS] = { "tcu", "cvu", "dtdu", "csu" };
static const char *const dir_names[LINK_DIRS] = { "east", "west", "north", "south" };

enum { RES_COMPUTE, RES_SRAM, RES_NETWORK, RES_COUNT };
static const char *const res_names[RES_COUNT] = { "compute", "SRAM", "network" };

struct link_load {
	unsigned link, from, to;	/* to: -1u if the link leaves the mesh */
	uint64_t bytes, stalls;
	double util;
};

/* The profiled run, seen through the counters. */
struct prof_view {
	int counters;			/* units and traffic available */
	uint64_t cycles;
	unsigned tpbs;
	unsigned n_clusters;
	unsigned cluster[NPU_MAX_CLUSTERS];	/* physical indices, ascending */
	double busy[NPU_MAX_CLUSTERS];		/* < 0: not available */
	double unit[NPU_MAX_CLUSTERS][NPU_UNITS];
	uint64_t conflicts[NPU_MAX_CLUSTERS];
	double dma[NPU_DMA_ENGINES];
	struct link_load links[HOT_LINKS];
	unsigned n_links, links_used;
	double util[RES_COUNT];
	char where[RES_COUNT][96];
	int bottleneck;
};

struct summary {
	double mean, min, max;
	double pct[NR_MAX_PERCENTILES];
	double throughput;		/* wall, inferences/s */
	double sim_us;			/* simulated time per inference */
	double sim_throughput;		/* inferences/s; 0: unknown */
	int have_util;
	double util;			/* cluster utilization over the timed runs */
	unsigned util_clusters;
	int have_mem;
	npu_model_info mem;		/* the model's device memory */
	struct prof_view pv;
};

void nr_counters_delta(const npu_device_counters *a, const npu_device_counters *b,
		       npu_device_counters *d)
{
	d->have = a->have & b->have;
	d->cycles = b->cycles - a->cycles;
	for (int c = 0; c < NPU_MAX_CLUSTERS; c++) {
		d->cluster_busy[c] = b->cluster_busy[c] - a->cluster_busy[c];
		d->hbsm_conflicts[c] = b->hbsm_conflicts[c] - a->hbsm_conflicts[c];
		for (int u = 0; u < NPU_UNITS; u++)
			d->unit_busy[c][u] = b->unit_busy[c][u] - a->unit_busy[c][u];
	}
	for (int e = 0; e < NPU_DMA_ENGINES; e++)
		d->dma_bytes[e] = b->dma_bytes[e] - a->dma_bytes[e];
	d->gsdu_bytes = b->gsdu_bytes - a->gsdu_bytes;
	d->load_bytes = b->load_bytes - a->load_bytes;
	d->store_bytes = b->store_bytes - a->store_bytes;
	d->macs_float = b->macs_float - a->macs_float;
	d->macs_int8 = b->macs_int8 - a->macs_int8;
	for (int l = 0; l < NPU_MAX_LINKS; l++) {
		d->link_bytes[l] = b->link_bytes[l] - a->link_bytes[l];
		d->link_stalls[l] = b->link_stalls[l] - a->link_stalls[l];
	}
}

/* ---- analysis ---- */

static uint64_t cluster_activity(const npu_device_counters *d, unsigned c)
{
	uint64_t sum = 0;

	if (d->have & NPU_HAVE_CLUSTERS)
		return d->cluster_busy[c];
	for (int u = 0; u < NPU_UNITS; u++)
		sum += d->unit_busy[c][u];
	return sum;
}

/*
 * The physical clusters of our partition.  The API does not say which
 * ones libnpu picked, but the counters do: over the measured period only
 * our jobs ran (on the emulator; on a shared kernel device another
 * process's jobs could blur this), so the partition is the @n busiest
 * healthy clusters.  An idle cluster of the partition ties at 0 with
 * those outside it, which changes no mean.
 */
static unsigned pick_clusters(const npu_device_counters *d, const npu_device_info *dev,
			      unsigned n, unsigned *out)
{
	unsigned cand[NPU_MAX_CLUSTERS], nc = 0, total = dev->clusters;
	uint32_t healthy = dev->healthy_mask;

	if (total > NPU_MAX_CLUSTERS)
		total = NPU_MAX_CLUSTERS;
	if (!healthy)
		healthy = (uint32_t)((1ull << total) - 1);
	for (unsigned c = 0; c < total; c++)
		if (healthy & (1u << c))
			cand[nc++] = c;
	if (n > nc || n == 0)
		n = nc;
	/* Selection of the n busiest, ties to the lower index. */
	for (unsigned i = 0; i < n; i++) {
		unsigned best = i;

		for (unsigned j = i + 1; j < nc; j++)
			if (cluster_activity(d, cand[j]) > cluster_activity(d, cand[best]))
				best = j;
		out[i] = cand[best];
		memmove(&cand[i + 1], &cand[i], (best - i) * sizeof(*cand));
		cand[i] = out[i];
	}
	/* Back in index order, for display. */
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && out[j - 1] > out[j]; j--) {
			unsigned t = out[j];

			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

/* Where a link goes: -1u off the mesh. */
static unsigned link_target(unsigned link, const npu_device_info *dev)
{
	unsigned node = link / LINK_DIRS, mx = dev->mesh_x ? dev->mesh_x : 1;
	unsigned my = dev->mesh_y ? dev->mesh_y : 1, x = node % mx, y = node / mx;

	switch (link % LINK_DIRS) {
	case 0: return x + 1 < mx ? node + 1 : -1u;
	case 1: return x > 0 ? node - 1 : -1u;
	case 2: return y > 0 ? node - mx : -1u;
	default: return y + 1 < my ? node + mx : -1u;
	}
}

/* "node 3 (3,0) DDR" */
static void node_name(unsigned node, const npu_device_info *dev, char *buf, size_t cap)
{
	unsigned mx = dev->mesh_x ? dev->mesh_x : 1;
	/* Default placement (uapi npu_hw_geom.h): CCB at node 0, DDR port at
	 * the end of row 0; the API does not report the actual one. */
	const char *role = node == 0 ? " CCB" : node == mx - 1 ? " DDR" : "";

	if (node == -1u)
		snprintf(buf, cap, "off-mesh");
	else
		snprintf(buf, cap, "node %u (%u,%u)%s", node, node % mx, node / mx, role);
}

static void add_link(struct prof_view *pv, const struct link_load *l)
{
	unsigned pos = pv->n_links;

	while (pos > 0 && pv->links[pos - 1].bytes < l->bytes)
		pos--;
	if (pos >= HOT_LINKS)
		return;
	if (pv->n_links < HOT_LINKS)
		pv->n_links++;
	memmove(&pv->links[pos + 1], &pv->links[pos],
		(pv->n_links - 1 - pos) * sizeof(pv->links[0]));
	pv->links[pos] = *l;
}

static void set_max(struct prof_view *pv, int res, double v, const char *fmt, unsigned a)
{
	if (v > pv->util[res] || !pv->where[res][0]) {
		pv->util[res] = v;
		snprintf(pv->where[res], sizeof(pv->where[res]), fmt, a);
	}
}

static void analyze_links(struct prof_view *pv, const npu_device_counters *d,
			  const npu_device_info *dev)
{
	unsigned nodes = dev->mesh_x * dev->mesh_y, n_links = nodes * LINK_DIRS;

	if (n_links > NPU_MAX_LINKS || !n_links)
		n_links = NPU_MAX_LINKS;
	for (unsigned l = 0; l < n_links; l++) {
		struct link_load ll = {
			.link = l, .from = l / LINK_DIRS, .to = link_target(l, dev),
			.bytes = d->link_bytes[l], .stalls = d->link_stalls[l],
		};

		if (!ll.bytes)
			continue;
		ll.util = (double)ll.bytes / (LINK_BYTES_PER_CYCLE * (double)pv->cycles);
		pv->links_used++;
		add_link(pv, &ll);
	}
	if (pv->n_links) {
		const struct link_load *h = &pv->links[0];

		pv->util[RES_NETWORK] = h->util;
		snprintf(pv->where[RES_NETWORK], sizeof(pv->where[RES_NETWORK]),
			 "link %u, node %u %s", h->link, h->from, dir_names[h->link % LINK_DIRS]);
	} else {
		snprintf(pv->where[RES_NETWORK], sizeof(pv->where[RES_NETWORK]), "no traffic");
	}
}

static void analyze_profile(const struct nr_report *r, struct prof_view *pv)
{
	const npu_device_counters *d = &r->prof->delta;
	uint32_t need = NPU_HAVE_CYCLES | NPU_HAVE_UNITS | NPU_HAVE_TRAFFIC;
	double tpb_cycles;

	memset(pv, 0, sizeof(*pv));
	pv->counters = (d->have & need) == need && d->cycles;
	if (!pv->counters)
		return;
	pv->cycles = d->cycles;
	pv->tpbs = r->dev.tpbs_per_cluster ? r->dev.tpbs_per_cluster : 4;
	tpb_cycles = (double)pv->cycles * pv->tpbs;
	pv->n_clusters = pick_clusters(d, &r->dev, r->partition, pv->cluster);
	for (unsigned i = 0; i < pv->n_clusters; i++) {
		unsigned c = pv->cluster[i];

		pv->busy[i] = d->have & NPU_HAVE_CLUSTERS ?
			      (double)d->cluster_busy[c] / (double)pv->cycles : -1;
		for (int u = 0; u < NPU_UNITS; u++)
			pv->unit[i][u] = (double)d->unit_busy[c][u] / tpb_cycles;
		pv->conflicts[i] = d->hbsm_conflicts[c];
		/* Compute: the TCU and CVU do the arithmetic; DTDU and CSU move
		 * data and synchronise. */
		set_max(pv, RES_COMPUTE, pv->unit[i][0], "TCU, cluster %u", c);
		set_max(pv, RES_COMPUTE, pv->unit[i][1], "CVU, cluster %u", c);
		/* A bank conflict costs an HBSM cycle: the share of TPB cycles
		 * lost to them is SRAM pressure inside a cluster. */
		set_max(pv, RES_SRAM, (double)pv->conflicts[i] / tpb_cycles,
			"HBSM conflicts, cluster %u", c);
	}
	/* Everything comes in from DDR through the CCB's DMA engines. */
	for (unsigned e = 0; e < NPU_DMA_ENGINES; e++) {
		pv->dma[e] = (double)d->dma_bytes[e] / (DMA_BYTES_PER_CYCLE * (double)pv->cycles);
		set_max(pv, RES_SRAM, pv->dma[e], "DMA engine %u", e);
	}
	analyze_links(pv, d, &r->dev);
	pv->bottleneck = RES_COMPUTE;
	for (int k = 1; k < RES_COUNT; k++)
		if (pv->util[k] > pv->util[pv->bottleneck])
			pv->bottleneck = k;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Linear interpolation between the closest ranks (numpy's default). */
static double percentile(const double *sorted, size_t n, double p)
{
	double pos = p / 100.0 * (double)(n - 1);
	size_t lo = (size_t)pos;

	if (lo + 1 >= n)
		return sorted[n - 1];
	return sorted[lo] + (pos - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

static void summarize(const struct nr_report *r, struct summary *s)
{
	const npu_device_counters *d = &r->loop_delta;
	double *sorted = malloc((r->n_lat ? r->n_lat : 1) * sizeof(*sorted)), sum = 0;

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < r->n_lat; i++)
		sum += r->lat_ms[i];
	if (r->n_lat && sorted) {
		memcpy(sorted, r->lat_ms, r->n_lat * sizeof(*sorted));
		qsort(sorted, r->n_lat, sizeof(*sorted), cmp_double);
		s->mean = sum / (double)r->n_lat;
		s->min = sorted[0];
		s->max = sorted[r->n_lat - 1];
		for (unsigned i = 0; i < r->o->n_percentiles; i++)
			s->pct[i] = percentile(sorted, r->n_lat, r->o->percentiles[i]);
		s->throughput = s->mean > 0 ? r->batch * 1000.0 / s->mean : 0;
	}
	free(sorted);
	s->mem.struct_size = sizeof(s->mem);
	s->have_mem = npu_model_get_info(r->model, &s->mem) == NPU_OK;
	s->sim_us = r->last.device_us / r->batch;
	s->sim_throughput = s->sim_us > 0 ? 1e6 / s->sim_us : 0;
	if ((d->have & (NPU_HAVE_CYCLES | NPU_HAVE_CLUSTERS)) ==
	    (NPU_HAVE_CYCLES | NPU_HAVE_CLUSTERS) && d->cycles) {
		unsigned cl[NPU_MAX_CLUSTERS];
		uint64_t busy = 0;

		s->util_clusters = pick_clusters(d, &r->dev, r->partition, cl);
		for (unsigned i = 0; i < s->util_clusters; i++)
			busy += d->cluster_busy[cl[i]];
		s->have_util = s->util_clusters > 0;
		if (s->have_util)
			s->util = (double)busy / ((double)d->cycles * s->util_clusters);
	}
	if (r->prof)
		analyze_profile(r, &s->pv);
}

/* ---- JSON ---- */

/*
 * The shared writer (tools/common/json.h) in its pretty style; numbers
 * with 10 significant digits, as npu-run has always printed them.
 */
static void jw_num(struct json_writer *w, const char *key, double v)
{
	json_double(w, key, v, 10);
}

/* Short arrays on one line. */
static void jw_shape(struct json_writer *w, const char *key, const int64_t *dims, int rank)
{
	json_begin_array_inline(w, key);
	for (int i = 0; i < rank; i++)
		json_i64(w, NULL, dims[i]);
	json_end_array(w);
}

/*
 * Output @i as the last run produced it: an output of run-time size (a -1
 * dim in the model) gets that run's shape, *@bound the model's bytes (0
 * for a static output).
 */
static npu_status run_output_info(const struct nr_report *r, size_t i, npu_tensor_info *t,
				  size_t *bound)
{
	npu_status st = npu_model_output_info(r->model, i, t);

	*bound = 0;
	for (int d = 0; !st && d < t->rank; d++)
		if (t->dims[d] < 0 && r->ctx) {
			*bound = t->bytes;
			return npu_context_last_run_output_info(r->ctx, i, t);
		}
	return st;
}

static void json_tensor(struct json_writer *w, const npu_tensor_info *t)
{
	json_string(w, "name", t->name);
	json_string(w, "dtype", npu_dtype_str(t->dtype));
	jw_shape(w, "shape", t->dims, t->rank);
	json_u64(w, "bytes", t->bytes);
	if (t->scale != 0) {
		jw_num(w, "scale", t->scale);
		json_i64(w, "zero_point", t->zero_point);
	}
}

static void json_device(struct json_writer *w, const npu_device_info *dev)
{
	char hw[32], mask[16];

	snprintf(hw, sizeof(hw), "%u.%u", dev->hw_version >> 16, dev->hw_version & 0xffff);
	snprintf(mask, sizeof(mask), "0x%x", dev->defect_mask);
	json_begin_object(w, "device");
	json_string(w, "path", dev->path);
	json_string(w, "driver", dev->driver);
	json_string(w, "backend", dev->backend == NPU_BACKEND_KERNEL ? "kernel" : "emu");
	json_string(w, "hw_version", hw);
	json_u64(w, "clusters", dev->clusters);
	json_u64(w, "healthy_clusters", dev->healthy_clusters);
	json_u64(w, "tpbs_per_cluster", dev->tpbs_per_cluster);
	json_u64(w, "defect_mask", dev->defect_mask);
	json_string(w, "defect_mask_hex", mask);
	json_begin_array_inline(w, "mesh");
	json_u64(w, NULL, dev->mesh_x);
	json_u64(w, NULL, dev->mesh_y);
	json_end_array(w);
	json_u64(w, "clock_mhz", dev->clock_mhz);
	json_end_object(w);
}

static void json_io(struct json_writer *w, const struct nr_report *r)
{
	size_t n_out = npu_model_output_count(r->model);

	json_begin_array(w, "inputs");
	for (size_t i = 0; i < r->n_inputs; i++) {
		const struct nr_input *in = &r->inputs[i];

		json_begin_object(w, NULL);
		json_tensor(w, &in->info);
		json_string(w, "source", in->file ? "file" : "generated");
		json_string(w, "file", in->file);
		if (in->image.rgb) {
			json_begin_object(w, "image");
			json_string(w, "format", in->image.kind);
			json_u64(w, "width", in->image.w);
			json_u64(w, "height", in->image.h);
			json_bool(w, "grey", in->image.grey);
			json_end_object(w);
		}
		if (nr_shape_given(r->o, in->info.name)) {
			const char *from = nr_shape_from(r->o, in->info.name);

			/* shape_given: by --shape; shape_from: --shape or a file */
			if (!strcmp(from, "--shape"))
				json_bool(w, "shape_given", 1);
			json_string(w, "shape_from", from);
		}
		if (in->file && r->batch > 1)
			json_bool(w, "per_batch_element", in->per_element);
		json_end_object(w);
	}
	json_end_array(w);
	json_begin_array(w, "outputs");
	for (size_t i = 0; i < n_out; i++) {
		npu_tensor_info t;
		size_t bound;

		if (run_output_info(r, i, &t, &bound) != NPU_OK)
			continue;
		json_begin_object(w, NULL);
		json_tensor(w, &t);
		/* Run-time size (issue 17): shape and bytes are the last run's. */
		json_bool(w, "runtime_shape", bound != 0);
		if (bound)
			json_u64(w, "bound_bytes", bound);
		if (r->output_paths)
			json_string(w, "file", r->output_paths[i]);
		json_end_object(w);
	}
	json_end_array(w);
}

static void json_top_k(struct json_writer *w, const struct nr_report *r)
{
	const struct nr_top_k *t = r->top;

	json_begin_object(w, "top_k");
	json_string(w, "output", t->output);
	json_u64(w, "k", r->o->top_k);
	json_u64(w, "batch_element", 0);
	json_begin_array(w, "classes");
	for (int64_t i = 0; i < t->n; i++) {
		json_begin_object(w, NULL);
		json_i64(w, "index", t->entries[i].index);
		jw_num(w, "score", t->entries[i].score);
		json_string(w, "label", t->entries[i].label);
		json_end_object(w);
	}
	json_end_array(w);
	json_end_object(w);
}

static void json_detect(struct json_writer *w, const struct nr_report *r)
{
	const struct nr_detect *d = r->det;

	json_begin_object(w, "detect");
	json_string(w, "detector", r->o->detect);
	jw_num(w, "threshold", d->threshold);
	json_u64(w, "input_width", d->input_w);
	json_u64(w, "input_height", d->input_h);
	if (r->o->draw)
		json_string(w, "draw", r->o->draw);
	json_begin_array(w, "detections");
	for (size_t i = 0; i < d->n; i++) {
		const npu_detection *x = &d->det[i];

		json_begin_object(w, NULL);
		jw_num(w, "score", x->score);
		jw_num(w, "xmin", x->xmin);
		jw_num(w, "ymin", x->ymin);
		jw_num(w, "xmax", x->xmax);
		jw_num(w, "ymax", x->ymax);
		json_begin_array(w, "keypoints");
		for (int k = 0; k < x->num_keypoints; k++) {
			json_begin_array(w, NULL);
			jw_num(w, NULL, x->keypoints[k].x);
			jw_num(w, NULL, x->keypoints[k].y);
			json_end_array(w);
		}
		json_end_array(w);
		json_end_object(w);
	}
	json_end_array(w);
	json_end_object(w);
}

/* The work counters of @d (NPU_HAVE_WORK) as members of the open object. */
static void json_work(struct json_writer *w, const npu_device_counters *d)
{
	json_u64(w, "load_bytes", d->load_bytes);
	json_u64(w, "store_bytes", d->store_bytes);
	json_u64(w, "macs_float", d->macs_float);
	json_u64(w, "macs_int8", d->macs_int8);
}

static void json_counters(struct json_writer *w, const struct nr_report *r, const struct prof_view *pv)
{
	const npu_device_counters *d = &r->prof->delta;

	json_u64(w, "tpbs_per_cluster", pv->tpbs);
	json_begin_array(w, "clusters");
	for (unsigned i = 0; i < pv->n_clusters; i++) {
		json_begin_object(w, NULL);
		json_u64(w, "cluster", pv->cluster[i]);
		if (pv->busy[i] >= 0)
			jw_num(w, "busy", pv->busy[i]);
		else
			json_null(w, "busy");
		for (int u = 0; u < NPU_UNITS; u++)
			jw_num(w, unit_keys[u], pv->unit[i][u]);
		json_u64(w, "hbsm_conflicts", pv->conflicts[i]);
		/* The raw counters behind the shares: what a trace's spans sum to. */
		json_begin_object(w, "unit_busy_cycles");
		for (int u = 0; u < NPU_UNITS; u++)
			json_u64(w, unit_keys[u], d->unit_busy[pv->cluster[i]][u]);
		json_end_object(w);
		json_end_object(w);
	}
	json_end_array(w);
	json_begin_array(w, "dma");
	for (unsigned e = 0; e < NPU_DMA_ENGINES; e++) {
		json_begin_object(w, NULL);
		json_u64(w, "engine", e);
		json_u64(w, "bytes", d->dma_bytes[e]);
		jw_num(w, "utilization", pv->dma[e]);
		json_end_object(w);
	}
	json_end_array(w);
	json_u64(w, "gsdu_bytes", d->gsdu_bytes);
	json_u64(w, "links_used", pv->links_used);
	json_begin_array(w, "hottest_links");
	for (unsigned i = 0; i < pv->n_links; i++) {
		const struct link_load *l = &pv->links[i];

		json_begin_object(w, NULL);
		json_u64(w, "link", l->link);
		json_u64(w, "from", l->from);
		if (l->to == -1u)
			json_null(w, "to");
		else
			json_u64(w, "to", l->to);
		json_string(w, "direction", dir_names[l->link % LINK_DIRS]);
		json_u64(w, "bytes", l->bytes);
		jw_num(w, "utilization", l->util);
		json_u64(w, "stalls", l->stalls);
		json_end_object(w);
	}
	json_end_array(w);
	json_begin_object(w, "utilization");
	jw_num(w, "compute", pv->util[RES_COMPUTE]);
	jw_num(w, "sram", pv->util[RES_SRAM]);
	jw_num(w, "network", pv->util[RES_NETWORK]);
	json_end_object(w);
	json_begin_object(w, "where");
	json_string(w, "compute", pv->where[RES_COMPUTE]);
	json_string(w, "sram", pv->where[RES_SRAM]);
	json_string(w, "network", pv->where[RES_NETWORK]);
	json_end_object(w);
	json_string(w, "bottleneck", res_names[pv->bottleneck]);
}

static void json_profile(struct json_writer *w, const struct nr_report *r, const struct prof_view *pv)
{
	const struct nr_profile *p = r->prof;

	json_begin_object(w, "profile");
	json_u64(w, "total_cycles", p->total_cycles);
	json_begin_array(w, "steps");
	for (size_t i = 0; i < p->n_steps; i++) {
		json_begin_object(w, NULL);
		json_string(w, "label", p->steps[i].label ? p->steps[i].label : "");
		json_u64(w, "cycles", p->steps[i].device_cycles);
		jw_num(w, "share", p->total_cycles ?
		       (double)p->steps[i].device_cycles / (double)p->total_cycles : 0);
		json_bool(w, "host", p->host_us && p->host_us[i] >= 0);
		if (p->host_us && p->host_us[i] >= 0)
			jw_num(w, "host_us", p->host_us[i]);
		json_end_object(w);
	}
	json_end_array(w);
	json_bool(w, "counters", pv->counters);
	if (pv->counters)
		json_counters(w, r, pv);
	else
		json_string(w, "note", "this device does not report unit and traffic counters");
	if (p->delta.have & NPU_HAVE_WORK) {
		json_begin_object(w, "work");
		json_work(w, &p->delta);
		json_end_object(w);
	}
	json_end_object(w);
}

/* The nodes the CPU fallback ran in the last timed run, and their share of its wall time. */
static void json_host(struct json_writer *w, const struct nr_report *r)
{
	json_begin_array(w, "host_steps");
	for (size_t i = 0; i < r->n_host; i++) {
		json_begin_object(w, NULL);
		json_string(w, "label", r->host[i].label);
		json_string(w, "op", r->host[i].op ? r->host[i].op : "");
		jw_num(w, "wall_us", r->host[i].us);
		json_end_object(w);
	}
	json_end_array(w);
	jw_num(w, "host_wall_share", r->last.wall_us > 0 ? r->host_us / r->last.wall_us : 0);
}

/*
 * The compiler's notes (npu_model_info.notes: types the NPU lacks,
 * computed in another), one "note" line each.
 */
static void text_notes(const char *notes)
{
	while (notes && *notes) {
		const char *nl = strchr(notes, '\n');
		int len = nl ? (int)(nl - notes) : (int)strlen(notes);

		printf("%-12s%.*s\n", "note", len, notes);
		notes += len + (nl ? 1 : 0);
	}
}

/* The same as a JSON array of strings, "notes" (empty if none). */
static void json_notes(struct json_writer *w, const char *notes)
{
	json_begin_array(w, "notes");
	while (notes && *notes) {
		const char *nl = strchr(notes, '\n');
		size_t len = nl ? (size_t)(nl - notes) : strlen(notes);
		char *line = strndup(notes, len);

		if (line)
			json_string(w, NULL, line);
		free(line);
		notes += len + (nl ? 1 : 0);
	}
	json_end_array(w);
}

static void print_json(const struct nr_report *r, const struct summary *s)
{
	struct json_writer w;

	json_init(&w, stdout, JSON_PRETTY);
	json_begin_object(&w, NULL);
	json_string(&w, "model", r->o->model);
	json_device(&w, &r->dev);
	json_u64(&w, "partition_clusters", r->partition);
	json_string(&w, "precision", nr_precision_str(r->o->precision));
	json_u64(&w, "batch", r->batch);
	json_io(&w, r);
	json_notes(&w, s->have_mem ? s->mem.notes : NULL);
	jw_num(&w, "load_ms", r->load_ms);
	json_u64(&w, "warmup", r->o->warmup);
	json_u64(&w, "iterations", r->n_lat);
	json_begin_object(&w, "latency_ms");
	jw_num(&w, "mean", s->mean);
	jw_num(&w, "min", s->min);
	jw_num(&w, "max", s->max);
	json_begin_array(&w, "percentiles");
	for (unsigned i = 0; i < r->o->n_percentiles; i++) {
		json_begin_object(&w, NULL);
		jw_num(&w, "percentile", r->o->percentiles[i]);
		jw_num(&w, "ms", s->pct[i]);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_end_object(&w);
	jw_num(&w, "throughput_ips", s->throughput);
	json_begin_object(&w, "simulated");
	json_u64(&w, "cycles_per_run", r->last.device_cycles);
	jw_num(&w, "us_per_run", r->last.device_us);
	jw_num(&w, "us_per_inference", s->sim_us);
	jw_num(&w, "throughput_ips", s->sim_throughput);
	json_u64(&w, "clock_mhz", r->dev.clock_mhz);
	json_end_object(&w);
	if (s->have_util)
		jw_num(&w, "cluster_utilization", s->util);
	else
		json_null(&w, "cluster_utilization");
	json_u64(&w, "steps", r->last.steps);
	json_host(&w, r);
	if (s->have_mem)
		json_u64(&w, "scratch_bytes", s->mem.scratch_bytes);
	else
		json_null(&w, "scratch_bytes");
	if (r->top)
		json_top_k(&w, r);
	if (r->det)
		json_detect(&w, r);
	if (r->prof)
		json_profile(&w, r, &s->pv);
	json_end_object(&w);
}

/* ---- text ---- */

static void text_tensor(const char *what, const npu_tensor_info *t, const char *extra)
{
	char shape[160];

	printf("%-12s%s %s %s", what, t->name, npu_dtype_str(t->dtype),
	       nr_shape_str(t->dims, t->rank, shape, sizeof(shape)));
	if (t->scale != 0)
		printf(" (scale %g, zero point %d)", t->scale, t->zero_point);
	printf("%s\n", extra);
}

/* "resized by area", "not resized", for an input read from a picture. */
static const char *image_resize_str(const struct nr_options *o, const struct nr_input *in)
{
	static char buf[64];
	struct nr_image_geom g;

	/* Checked when the picture was read: cannot fail here. */
	if (nr_image_geometry(o, "", &in->info, &g))
		return "?";
	snprintf(buf, sizeof(buf), "%s%s", !strcmp(nr_image_resize_method(in->image.w, in->image.h,
		 g.w, g.h), "not resized") ? "" : "resized by ",
		 nr_image_resize_method(in->image.w, in->image.h, g.w, g.h));
	return buf;
}

static void text_io(const struct nr_report *r)
{
	size_t n_out = npu_model_output_count(r->model);
	char extra[1200];

	for (size_t i = 0; i < r->n_inputs; i++) {
		const struct nr_input *in = &r->inputs[i];

		if (in->image.rgb) {
			char norm[96];

			nr_image_norm_str(r->o, &in->info, norm, sizeof(norm));
			snprintf(extra, sizeof(extra), " from %s (%s %ux%u %s, %s, %s)", in->file,
				 in->image.kind, in->image.w, in->image.h,
				 in->image.grey ? "grey" : "colour",
				 image_resize_str(r->o, in), norm);
		}
		else if (in->file)
			snprintf(extra, sizeof(extra), " from %s%s", in->file,
				 r->batch > 1 ? (in->per_element ? " (one per batch element)" :
						 " (every batch element)") : "");
		else
			snprintf(extra, sizeof(extra), " (generated)");
		if (nr_shape_given(r->o, in->info.name))
			snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra),
				 ", shape from %s", nr_shape_from(r->o, in->info.name));
		text_tensor("input", &in->info, extra);
	}
	for (size_t i = 0; i < n_out; i++) {
		npu_tensor_info t;
		size_t bound;

		if (run_output_info(r, i, &t, &bound) != NPU_OK)
			continue;
		extra[0] = '\0';
		if (bound)
			snprintf(extra, sizeof(extra), " (run-time size: the last run's; up to %zu bytes)",
				 bound);
		if (r->output_paths)
			snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), " -> %s",
				 r->output_paths[i]);
		text_tensor("output", &t, extra);
	}
}

static void text_top_k(const struct nr_report *r)
{
	const struct nr_top_k *t = r->top;

	printf("%-12s%lld of %s%s, best first:\n", "top-k", (long long)t->n, t->output,
	       r->batch > 1 ? " (batch element 0)" : "");
	for (int64_t i = 0; i < t->n; i++) {
		printf("  %2lld. class %-6lld %10.6f", (long long)i + 1,
		       (long long)t->entries[i].index, t->entries[i].score);
		if (t->entries[i].label)
			printf("  %s", t->entries[i].label);
		putchar('\n');
	}
}

static void text_counters(const struct nr_report *r, const struct prof_view *pv)
{
	const npu_device_counters *d = &r->prof->delta;

	printf("units       busy / (cycles x %u TPBs), clusters of the partition:\n", pv->tpbs);
	printf("  cluster   busy    TCU    CVU   DTDU    CSU  HBSM conflicts\n");
	for (unsigned i = 0; i < pv->n_clusters; i++) {
		if (pv->busy[i] >= 0)
			printf("  %7u %5.1f%%", pv->cluster[i], 100 * pv->busy[i]);
		else
			printf("  %7u %6s", pv->cluster[i], "n/a");
		for (int u = 0; u < NPU_UNITS; u++)
			printf(" %5.1f%%", 100 * pv->unit[i][u]);
		printf("  %" PRIu64 "\n", pv->conflicts[i]);
	}
	printf("dma         bytes / (%.0f x cycles):", DMA_BYTES_PER_CYCLE);
	for (unsigned e = 0; e < NPU_DMA_ENGINES; e++)
		printf("%s engine %u %" PRIu64 " bytes %.1f%%", e ? "," : "", e, d->dma_bytes[e],
		       100 * pv->dma[e]);
	printf("; GSDU %" PRIu64 " bytes\n", d->gsdu_bytes);
	printf("links       bytes / (%.0f x cycles), hottest %u of %u used:\n",
	       LINK_BYTES_PER_CYCLE, pv->n_links, pv->links_used);
	for (unsigned i = 0; i < pv->n_links; i++) {
		const struct link_load *l = &pv->links[i];
		char from[48], to[48];

		node_name(l->from, &r->dev, from, sizeof(from));
		node_name(l->to, &r->dev, to, sizeof(to));
		printf("  link %2u %-5s %s -> %s: %" PRIu64 " bytes, %.1f%%, %" PRIu64 " stalls\n",
		       l->link, dir_names[l->link % LINK_DIRS], from, to, l->bytes, 100 * l->util,
		       l->stalls);
	}
	printf("utilization compute %.1f%% (%s), SRAM %.1f%% (%s), network %.1f%% (%s)\n",
	       100 * pv->util[RES_COMPUTE], pv->where[RES_COMPUTE], 100 * pv->util[RES_SRAM],
	       pv->where[RES_SRAM], 100 * pv->util[RES_NETWORK], pv->where[RES_NETWORK]);
	printf("bottleneck  %s\n", res_names[pv->bottleneck]);
}

/* "memory      scratch 8388608 bytes (8 x 1048576 per batch element), ..." */
static void text_memory(const struct summary *s)
{
	const npu_model_info *m = &s->mem;

	if (!s->have_mem)
		return;
	printf("%-12sscratch %" PRIu64 " bytes", "memory", m->scratch_bytes);
	if (m->batch > 1)
		printf(" (%u x %" PRIu64 " per batch element)", m->batch,
		       m->scratch_bytes / m->batch);
	printf(", constants %" PRIu64 " bytes, programs %" PRIu64 " bytes, I/O %" PRIu64
	       " bytes\n", m->const_bytes, m->program_bytes, m->io_bytes);
}

static void text_profile(const struct nr_report *r, const struct summary *s)
{
	const struct nr_profile *p = r->prof;
	const struct prof_view *pv = &s->pv;

	printf("profile     one run, %" PRIu64 " cycles, %zu steps\n", p->total_cycles, p->n_steps);
	text_memory(s);
	printf("  %4s %12s %7s  %s\n", "step", "cycles", "share", "label");
	for (size_t i = 0; i < p->n_steps; i++) {
		printf("  %4zu %12" PRIu64 " %6.1f%%  %s", i, p->steps[i].device_cycles,
		       p->total_cycles ? 100.0 * (double)p->steps[i].device_cycles /
		       (double)p->total_cycles : 0.0, p->steps[i].label ? p->steps[i].label : "");
		if (p->host_us && p->host_us[i] >= 0)
			printf(", %.3f ms on the CPU", p->host_us[i] / 1000);
		printf("\n");
	}
	if (pv->counters)
		text_counters(r, pv);
	else
		printf("counters    not reported by this device (%s): steps only\n",
		       r->dev.path);
}

static void print_text(const struct nr_report *r, const struct summary *s)
{
	const npu_device_info *dev = &r->dev;

	printf("%-12s%s\n", "model", r->o->model);
	printf("%-12s%s (%s): %u clusters, %u healthy, defect mask 0x%x, mesh %ux%u, %u MHz\n",
	       "device", dev->path, dev->driver, dev->clusters, dev->healthy_clusters,
	       dev->defect_mask, dev->mesh_x, dev->mesh_y, dev->clock_mhz);
	printf("%-12s%u clusters\n", "partition", r->partition);
	printf("%-12s%s\n", "precision", nr_precision_str(r->o->precision));
	printf("%-12s%u\n", "batch", r->batch);
	text_io(r);
	if (s->have_mem)
		text_notes(s->mem.notes);
	printf("%-12s%.3f ms\n", "load", r->load_ms);
	printf("%-12smean %.3f ms, min %.3f ms, max %.3f ms over %zu runs (%u warmup)\n",
	       "latency", s->mean, s->min, s->max, r->n_lat, r->o->warmup);
	printf("%-12s", "percentiles");
	for (unsigned i = 0; i < r->o->n_percentiles; i++)
		printf("%sp%g %.3f ms", i ? ", " : "", r->o->percentiles[i], s->pct[i]);
	printf("\n%-12s%.2f inferences/s (wall)\n", "throughput", s->throughput);
	printf("%-12s%.3f us per inference (%" PRIu64 " cycles per run at %u MHz), "
	       "%.2f inferences/s\n", "simulated", s->sim_us, r->last.device_cycles,
	       dev->clock_mhz, s->sim_throughput);
	if (s->have_util)
		printf("%-12s%.1f%% (busy / cycles, mean over %u clusters)\n", "utilization",
		       100 * s->util, s->util_clusters);
	else
		printf("%-12sn/a (the device reports no cluster counters)\n", "utilization");
	printf("%-12s%u\n", "steps", r->last.steps);
	if (r->n_host) {
		printf("%-12s%zu step%s ran on the CPU (--cpu-fallback), %.1f%% of the wall time "
		       "of the last run:\n", "host", r->n_host, r->n_host > 1 ? "s" : "",
		       r->last.wall_us > 0 ? 100 * r->host_us / r->last.wall_us : 0.0);
		for (size_t i = 0; i < r->n_host; i++)
			printf("%-12s%s: %.3f ms\n", "", r->host[i].label, r->host[i].us / 1000);
	}
	if (r->top)
		text_top_k(r);
	if (r->det)
		nr_detect_print_text(r->det);
	if (r->det && r->o->draw)
		printf("%-12s%s\n", "drawn", r->o->draw);
	if (r->prof)
		text_profile(r, s);
}

void nr_report_print(const struct nr_report *r)
{
	struct summary s;

	summarize(r, &s);
	if (r->o->json)
		print_json(r, &s);
	else
		print_text(r, &s);
}

/* ---- --generate ---- */

struct gen_summary {
	double pct[NR_MAX_PERCENTILES];	/* per-token wall latency, ms */
	double tokens_per_s;		/* wall, over the steps after the first */
	double sim_us;			/* simulated time per decode step */
	double sim_tokens_per_s;
	double dma_per_token;		/* bytes the DMA engines moved per decode step */
};

static void gen_summarize(const struct nr_gen_report *g, struct gen_summary *s)
{
	double *sorted = malloc((g->n_step ? g->n_step : 1) * sizeof(*sorted)), sum = 0;
	unsigned runs = g->st.decode_runs;

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < g->n_step; i++)
		sum += g->step_ms[i];
	if (g->n_step && sorted) {
		memcpy(sorted, g->step_ms, g->n_step * sizeof(*sorted));
		qsort(sorted, g->n_step, sizeof(*sorted), cmp_double);
		for (unsigned i = 0; i < g->o->n_percentiles; i++)
			s->pct[i] = percentile(sorted, g->n_step, g->o->percentiles[i]);
		s->tokens_per_s = sum > 0 ? (double)g->n_step / (sum / 1e3) : 0;
	}
	free(sorted);
	if (runs) {
		s->sim_us = g->st.decode_device_us / runs;
		s->sim_tokens_per_s = s->sim_us > 0 ? 1e6 / s->sim_us : 0;
		s->dma_per_token = (double)g->st.decode_dma_bytes / runs;
	}
}

static void gen_json(const struct nr_gen_report *g, const struct gen_summary *s)
{
	struct json_writer w;

	json_init(&w, stdout, JSON_PRETTY);
	json_begin_object(&w, NULL);
	json_string(&w, "model", g->o->model);
	json_device(&w, &g->dev);
	json_u64(&w, "max_context", g->st.max_context);
	json_u64(&w, "vocab", g->st.vocab);
	json_string(&w, "sampling", g->o->sample_random ? "random" : "greedy");
	json_begin_array(&w, "prompt");
	for (size_t i = 0; i < g->n_prompt; i++)
		json_i64(&w, NULL, g->prompt[i]);
	json_end_array(&w);
	json_begin_array(&w, "generated");
	for (size_t i = 0; i < g->n_ids; i++)
		json_i64(&w, NULL, g->ids[i]);
	json_end_array(&w);
	json_string(&w, "stop", g->stop);
	jw_num(&w, "create_ms", g->create_ms);
	json_u64(&w, "prefill_tokens", g->st.prefill_tokens);
	jw_num(&w, "prefill_ms", g->st.prefill_wall_us / 1e3);
	json_u64(&w, "prefill_cycles", g->st.prefill_cycles);
	jw_num(&w, "time_to_first_token_ms", g->st.first_token_us / 1e3);
	json_begin_object(&w, "token_latency_ms");
	json_u64(&w, "tokens", g->n_step);
	json_begin_array(&w, "percentiles");
	for (unsigned i = 0; i < g->o->n_percentiles; i++) {
		json_begin_object(&w, NULL);
		jw_num(&w, "percentile", g->o->percentiles[i]);
		jw_num(&w, "ms", g->n_step ? s->pct[i] : NAN);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_end_object(&w);
	jw_num(&w, "tokens_per_s", g->n_step ? s->tokens_per_s : NAN);
	json_begin_object(&w, "simulated");
	json_u64(&w, "decode_steps", g->st.decode_runs);
	json_u64(&w, "cycles_per_token", g->st.decode_runs ?
	       g->st.decode_cycles / g->st.decode_runs : 0);
	jw_num(&w, "us_per_token", g->st.decode_runs ? s->sim_us : NAN);
	jw_num(&w, "tokens_per_s", g->st.decode_runs ? s->sim_tokens_per_s : NAN);
	json_u64(&w, "clock_mhz", g->st.clock_mhz);
	json_end_object(&w);
	jw_num(&w, "ddr_bytes_per_token", g->st.decode_runs && g->have_traffic ?
	       s->dma_per_token : NAN);
	if (g->have_work) {
		json_begin_object(&w, "decode_work");
		json_u64(&w, "runs", g->work_runs);
		json_work(&w, &g->work);
		json_end_object(&w);
	}
	if (g->o->profile) {
		json_begin_array(&w, "profile");
		for (size_t i = 0; i < g->n_steps; i++) {
			json_begin_object(&w, NULL);
			json_string(&w, "step", g->steps[i].label);
			json_u64(&w, "cycles", g->steps[i].device_cycles);
			json_end_object(&w);
		}
		json_end_array(&w);
	}
	json_end_object(&w);
}

static void gen_text(const struct nr_gen_report *g, const struct gen_summary *s)
{
	const npu_device_info *dev = &g->dev;

	printf("%-12s%s\n", "model", g->o->model);
	printf("%-12s%s (%s): %u clusters, %u healthy, defect mask 0x%x, %u MHz\n", "device",
	       dev->path, dev->driver, dev->clusters, dev->healthy_clusters, dev->defect_mask,
	       dev->clock_mhz);
	printf("%-12smax context %u, vocabulary %u, %s sampling, set up in %.3f ms\n",
	       "session", g->st.max_context, g->st.vocab,
	       g->o->sample_random ? "random" : "greedy", g->create_ms);
	printf("%-12s%zu tokens\n", "prompt", g->n_prompt);
	printf("%-12s%zu tokens (%s):", "generated", g->n_ids, g->stop);
	for (size_t i = 0; i < g->n_ids; i++)
		printf(" %" PRId64, g->ids[i]);
	printf("\n%-12s%.3f ms (prefill of %u tokens %.3f ms, %" PRIu64 " cycles)\n",
	       "first token", g->st.first_token_us / 1e3, g->st.prefill_tokens,
	       g->st.prefill_wall_us / 1e3, g->st.prefill_cycles);
	if (!g->n_step) {
		printf("%-12sn/a (one token: no decode step)\n", "per token");
		return;
	}
	printf("%-12s", "per token");
	for (unsigned i = 0; i < g->o->n_percentiles; i++)
		printf("%sp%g %.3f ms", i ? ", " : "", g->o->percentiles[i], s->pct[i]);
	printf(" (wall, %zu decode steps)\n", g->n_step);
	printf("%-12s%.2f tokens/s (wall)\n", "throughput", s->tokens_per_s);
	printf("%-12s%.3f us per token (%" PRIu64 " cycles at %u MHz), %.2f tokens/s\n",
	       "simulated", s->sim_us, g->st.decode_cycles / g->st.decode_runs, g->st.clock_mhz,
	       s->sim_tokens_per_s);
	if (g->have_traffic)
		printf("%-12s%.0f bytes per token (DMA counters)\n", "DDR read", s->dma_per_token);
	else
		printf("%-12snot reported (the %s backend counts no DMA bytes)\n", "DDR read",
		       g->dev.driver);
	if (g->o->profile && g->n_steps) {
		uint64_t total = 0;

		for (size_t i = 0; i < g->n_steps; i++)
			total += g->steps[i].device_cycles;
		printf("profile     the last decode run, %zu steps, %" PRIu64 " cycles:\n",
		       g->n_steps, total);
		for (size_t i = 0; i < g->n_steps; i++)
			printf("  %10" PRIu64 " cycles %5.1f%%  %s\n", g->steps[i].device_cycles,
			       total ? 100.0 * (double)g->steps[i].device_cycles / (double)total : 0,
			       g->steps[i].label);
	}
}

void nr_report_generation(const struct nr_gen_report *g)
{
	struct gen_summary s;

	gen_summarize(g, &s);
	if (g->o->json)
		gen_json(g, &s);
	else
		gen_text(g, &s);
}

void nr_report_compiled(const struct nr_options *o, const npu_device_info *dev,
			const npu_model *model, double load_ms)
{
	size_t n_in = npu_model_input_count(model), n_out = npu_model_output_count(model);
	npu_model_info mem = { .struct_size = sizeof(mem) };
	struct json_writer w;

	if (!o->json) {
		printf("compiled %s -> %s in %.3f ms: %zu input%s, %zu output%s, batch %u, "
		       "%u clusters, %s precision, for %s\n", o->model, o->save, load_ms, n_in,
		       n_in == 1 ? "" : "s", n_out, n_out == 1 ? "" : "s", npu_model_batch(model),
		       npu_model_clusters(model), nr_precision_str(o->precision), dev->path);
		if (npu_model_get_info(model, &mem) == NPU_OK)
			text_notes(mem.notes);
		return;
	}
	json_init(&w, stdout, JSON_PRETTY);
	json_begin_object(&w, NULL);
	json_string(&w, "model", o->model);
	json_string(&w, "output", o->save);
	json_device(&w, dev);
	json_string(&w, "precision", nr_precision_str(o->precision));
	json_u64(&w, "batch", npu_model_batch(model));
	json_u64(&w, "clusters", npu_model_clusters(model));
	if (npu_model_get_info(model, &mem) == NPU_OK)
		json_u64(&w, "scratch_bytes", mem.scratch_bytes);
	else
		json_null(&w, "scratch_bytes");
	json_notes(&w, mem.notes);
	jw_num(&w, "load_ms", load_ms);
	json_begin_array(&w, "inputs");
	for (size_t i = 0; i < n_in; i++) {
		npu_tensor_info t;

		if (npu_model_input_info(model, i, &t) != NPU_OK)
			continue;
		json_begin_object(&w, NULL);
		json_tensor(&w, &t);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_begin_array(&w, "outputs");
	for (size_t i = 0; i < n_out; i++) {
		npu_tensor_info t;

		if (npu_model_output_info(model, i, &t) != NPU_OK)
			continue;
		json_begin_object(&w, NULL);
		json_tensor(&w, &t);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_end_object(&w);
}
