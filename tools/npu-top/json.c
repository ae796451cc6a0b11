// SPDX-License-Identifier: MIT
/*
 * npu-top: a view as one JSON object on one line (JSON Lines when
 * repeated), through the tools' shared writer (tools/common/json.h).
 * Unknown values are null, never 0, so a script can tell an idle cluster
 * from one without counters.
 */
#include <math.h>

#include "json.h"
#include "output.h"

/* Percentages with two decimals, as the TUI shows them. */
static void put_pct(struct json_writer *j, const char *key, bool ok, double pct)
{
	if (ok)
		json_fixed(j, key, pct, 2);
	else
		json_null(j, key);
}

static void put_u64(struct json_writer *j, const char *key, bool ok, uint64_t v)
{
	if (ok)
		json_u64(j, key, v);
	else
		json_null(j, key);
}

static void put_mask_list(struct json_writer *j, const char *key, uint32_t mask)
{
	json_begin_array(j, key);
	for (unsigned c = 0; c < 32; c++)
		if (mask & (1u << c))
			json_u64(j, NULL, c);
	json_end_array(j);
}

static void put_hottest(struct json_writer *j, const struct nt_dev_view *dv)
{
	const struct nt_device *d = dv->d;
	char from[8], to[8];
	unsigned l;

	if (!dv->links_ok || dv->hot < 0) {
		json_null(j, "hottest_link");
		return;
	}
	l = (unsigned)dv->hot;
	nt_node_label(d, l / NPU_HW_LINK_DIRS, from, sizeof(from));
	nt_node_label(d, (unsigned)nt_link_dest(d, l), to, sizeof(to));
	json_begin_object(j, "hottest_link");
	json_u64(j, "index", l);
	json_u64(j, "node", l / NPU_HW_LINK_DIRS);
	json_string(j, "dir", nt_dir_name(l % NPU_HW_LINK_DIRS));
	json_string(j, "from", from);
	json_string(j, "to", to);
	json_fixed(j, "pct", dv->link_pct[l], 2);
	json_end_object(j);
}

static void put_proc(struct json_writer *j, const struct nt_proc_view *pv)
{
	const struct nt_proc *p = pv->p;

	json_begin_object(j, NULL);
	json_i64(j, "pid", p->pid);
	json_string(j, "name", p->comm);
	put_u64(j, "fd", p->fd >= 0, (uint64_t)p->fd);
	put_u64(j, "client_id", p->has_client, p->client_id);
	put_u64(j, "contexts", p->has_contexts, p->contexts);
	if (p->has_clusters)
		put_mask_list(j, "clusters", p->clusters);
	else
		json_null(j, "clusters");
	put_pct(j, "busy_pct", pv->busy_ok, pv->busy_pct);
	put_u64(j, "memory_bytes", p->has_memory, p->memory);
	json_end_object(j);
}

static void put_device(struct json_writer *j, const struct nt_view *v, unsigned i)
{
	const struct nt_dev_view *dv = &v->dev[i];
	const struct nt_device *d = dv->d;

	json_begin_object(j, NULL);
	json_string(j, "name", d->name);
	json_string(j, "kind", d->kind == NT_KERNEL ? "kernel" : "emulator");
	put_u64(j, "pid", d->kind == NT_EMULATOR, (uint64_t)d->pid);
	json_string(j, "pci", d->pdev[0] ? d->pdev : NULL);
	json_u64(j, "clusters", d->clusters);
	json_u64(j, "tpbs", d->tpbs);
	if (d->mesh_x) {
		json_begin_array(j, "mesh");
		json_u64(j, NULL, d->mesh_x);
		json_u64(j, NULL, d->mesh_y);
		json_end_array(j);
	} else {
		json_null(j, "mesh");
	}
	put_u64(j, "clock_mhz", d->clock_mhz, d->clock_mhz);
	put_u64(j, "sram_bytes", d->sram, d->sram);
	put_u64(j, "hbsm_bytes", d->hbsm, d->hbsm);
	put_u64(j, "defect_mask", d->has_masks, d->defect_mask);
	put_u64(j, "healthy_mask", d->has_masks, d->healthy_mask);
	put_u64(j, "free_clusters", d->has_free, d->free_clusters);
	put_mask_list(j, "fused", nt_fused(d));
	json_begin_array(j, "cluster_busy_pct");
	for (unsigned c = 0; c < d->clusters; c++)
		put_pct(j, NULL, dv->cl_ok[c], dv->cl_pct[c]);
	json_end_array(j);
	put_pct(j, "busy_pct", dv->busy_ok, dv->busy_pct);
	if (dv->links_ok) {
		json_begin_array(j, "link_load_pct");
		for (unsigned l = 0; l < d->n_links; l++)
			json_fixed(j, NULL, dv->link_pct[l], 2);
		json_end_array(j);
	} else {
		json_null(j, "link_load_pct");
	}
	put_hottest(j, dv);
	put_u64(j, "memory_bytes", dv->memory_ok, dv->memory);
	put_u64(j, "resets", d->has_resets, d->resets);
	if (d->n_queues) {
		json_begin_array(j, "queue_depth");
		for (unsigned q = 0; q < d->n_queues; q++)
			json_u64(j, NULL, d->queue_depth[q]);
		json_end_array(j);
	} else {
		json_null(j, "queue_depth");
	}
	put_u64(j, "jobs", d->has_jobs, d->jobs);
	json_begin_array(j, "processes");
	for (unsigned p = 0; p < v->n_proc; p++)
		if (v->proc[p].dev == i)
			put_proc(j, &v->proc[p]);
	json_end_array(j);
	json_end_object(j);
}

void nt_json_print(FILE *f, const struct nt_view *v)
{
	struct json_writer j;

	json_init(&j, f, JSON_COMPACT);
	json_begin_object(&j, NULL);
	json_fixed(&j, "time", v->unix_s, 3);
	json_fixed(&j, "interval_s", v->interval_s, 3);
	json_begin_array(&j, "devices");
	for (unsigned i = 0; i < v->n_dev; i++)
		put_device(&j, v, i);
	json_end_array(&j);
	json_end_object(&j);
}
