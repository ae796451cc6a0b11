// SPDX-License-Identifier: MIT
/*
 * npu-top: a view as one JSON object on one line (JSON Lines when
 * repeated).  Unknown values are null, never 0, so a script can tell an
 * idle cluster from one without counters.
 */
#include <inttypes.h>
#include <math.h>

#include "output.h"

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_pct(FILE *f, bool ok, double pct)
{
	if (ok && isfinite(pct))
		fprintf(f, "%.2f", pct);
	else
		fputs("null", f);
}

static void json_u64(FILE *f, bool ok, uint64_t v)
{
	if (ok)
		fprintf(f, "%" PRIu64, v);
	else
		fputs("null", f);
}

static void json_mask_list(FILE *f, uint32_t mask)
{
	bool first = true;

	fputc('[', f);
	for (unsigned c = 0; c < 32; c++) {
		if (!(mask & (1u << c)))
			continue;
		fprintf(f, "%s%u", first ? "" : ", ", c);
		first = false;
	}
	fputc(']', f);
}

static void json_hottest(FILE *f, const struct nt_dev_view *dv)
{
	const struct nt_device *d = dv->d;
	char from[8], to[8];
	unsigned l;

	if (!dv->links_ok || dv->hot < 0) {
		fputs("null", f);
		return;
	}
	l = (unsigned)dv->hot;
	nt_node_label(d, l / NPU_HW_LINK_DIRS, from, sizeof(from));
	nt_node_label(d, (unsigned)nt_link_dest(d, l), to, sizeof(to));
	fprintf(f, "{\"index\": %u, \"node\": %u, \"dir\": \"%s\", \"from\": ", l,
		l / NPU_HW_LINK_DIRS, nt_dir_name(l % NPU_HW_LINK_DIRS));
	json_str(f, from);
	fputs(", \"to\": ", f);
	json_str(f, to);
	fprintf(f, ", \"pct\": %.2f}", dv->link_pct[l]);
}

static void json_proc(FILE *f, const struct nt_proc_view *pv)
{
	const struct nt_proc *p = pv->p;

	fprintf(f, "{\"pid\": %d, \"name\": ", p->pid);
	json_str(f, p->comm);
	fputs(", \"fd\": ", f);
	json_u64(f, p->fd >= 0, (uint64_t)p->fd);
	fputs(", \"client_id\": ", f);
	json_u64(f, p->has_client, p->client_id);
	fputs(", \"contexts\": ", f);
	json_u64(f, p->has_contexts, p->contexts);
	fputs(", \"clusters\": ", f);
	if (p->has_clusters)
		json_mask_list(f, p->clusters);
	else
		fputs("null", f);
	fputs(", \"busy_pct\": ", f);
	json_pct(f, pv->busy_ok, pv->busy_pct);
	fputs(", \"memory_bytes\": ", f);
	json_u64(f, p->has_memory, p->memory);
	fputc('}', f);
}

static void json_device(FILE *f, const struct nt_view *v, unsigned i)
{
	const struct nt_dev_view *dv = &v->dev[i];
	const struct nt_device *d = dv->d;
	bool first = true;

	fputs("{\"name\": ", f);
	json_str(f, d->name);
	fprintf(f, ", \"kind\": \"%s\", \"pid\": ", d->kind == NT_KERNEL ? "kernel" : "emulator");
	json_u64(f, d->kind == NT_EMULATOR, (uint64_t)d->pid);
	fputs(", \"pci\": ", f);
	if (d->pdev[0])
		json_str(f, d->pdev);
	else
		fputs("null", f);
	fprintf(f, ", \"clusters\": %u, \"tpbs\": %u, \"mesh\": ", d->clusters, d->tpbs);
	if (d->mesh_x)
		fprintf(f, "[%u, %u]", d->mesh_x, d->mesh_y);
	else
		fputs("null", f);
	fputs(", \"clock_mhz\": ", f);
	json_u64(f, d->clock_mhz, d->clock_mhz);
	fputs(", \"sram_bytes\": ", f);
	json_u64(f, d->sram, d->sram);
	fputs(", \"hbsm_bytes\": ", f);
	json_u64(f, d->hbsm, d->hbsm);
	fputs(", \"defect_mask\": ", f);
	json_u64(f, d->has_masks, d->defect_mask);
	fputs(", \"healthy_mask\": ", f);
	json_u64(f, d->has_masks, d->healthy_mask);
	fputs(", \"free_clusters\": ", f);
	json_u64(f, d->has_free, d->free_clusters);
	fputs(", \"fused\": ", f);
	json_mask_list(f, nt_fused(d));
	fputs(", \"cluster_busy_pct\": [", f);
	for (unsigned c = 0; c < d->clusters; c++) {
		fputs(c ? ", " : "", f);
		json_pct(f, dv->cl_ok[c], dv->cl_pct[c]);
	}
	fputs("], \"busy_pct\": ", f);
	json_pct(f, dv->busy_ok, dv->busy_pct);
	fputs(", \"link_load_pct\": ", f);
	if (dv->links_ok) {
		fputc('[', f);
		for (unsigned l = 0; l < d->n_links; l++)
			fprintf(f, "%s%.2f", l ? ", " : "", dv->link_pct[l]);
		fputc(']', f);
	} else {
		fputs("null", f);
	}
	fputs(", \"hottest_link\": ", f);
	json_hottest(f, dv);
	fputs(", \"memory_bytes\": ", f);
	json_u64(f, dv->memory_ok, dv->memory);
	fputs(", \"resets\": ", f);
	json_u64(f, d->has_resets, d->resets);
	fputs(", \"queue_depth\": ", f);
	if (d->n_queues) {
		fputc('[', f);
		for (unsigned q = 0; q < d->n_queues; q++)
			fprintf(f, "%s%" PRIu64, q ? ", " : "", d->queue_depth[q]);
		fputc(']', f);
	} else {
		fputs("null", f);
	}
	fputs(", \"jobs\": ", f);
	json_u64(f, d->has_jobs, d->jobs);
	fputs(", \"processes\": [", f);
	for (unsigned p = 0; p < v->n_proc; p++) {
		if (v->proc[p].dev != i)
			continue;
		fputs(first ? "" : ", ", f);
		json_proc(f, &v->proc[p]);
		first = false;
	}
	fputs("]}", f);
}

void nt_json_print(FILE *f, const struct nt_view *v)
{
	fprintf(f, "{\"time\": %.3f, \"interval_s\": %.3f, \"devices\": [", v->unix_s,
		v->interval_s);
	for (unsigned i = 0; i < v->n_dev; i++) {
		fputs(i ? ", " : "", f);
		json_device(f, v, i);
	}
	fputs("]}\n", f);
}
