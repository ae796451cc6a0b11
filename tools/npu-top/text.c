// SPDX-License-Identifier: MIT
/*
 * npu-top: a view as a plain table (--once without --json, or stdout not
 * a terminal), for logs and for humans on a serial console.
 */
#include <inttypes.h>
#include <time.h>

#include "output.h"

#define CLUSTERS_PER_LINE 8

static void text_clusters(FILE *f, const struct nt_dev_view *dv)
{
	const struct nt_device *d = dv->d;
	uint32_t fused = nt_fused(d);

	for (unsigned c0 = 0; c0 < d->clusters; c0 += CLUSTERS_PER_LINE) {
		unsigned end = c0 + CLUSTERS_PER_LINE < d->clusters ? c0 + CLUSTERS_PER_LINE
								    : d->clusters;

		fputs("  cluster", f);
		for (unsigned c = c0; c < end; c++) {
			char label[8];

			snprintf(label, sizeof(label), "C%u", c);
			fprintf(f, " %7s", label);
		}
		fputs("\n  busy %  ", f);
		for (unsigned c = c0; c < end; c++) {
			if (fused & (1u << c))
				fprintf(f, " %7s", "fused");
			else if (dv->cl_ok[c])
				fprintf(f, " %7.1f", dv->cl_pct[c]);
			else
				fprintf(f, " %7s", "-");
		}
		fputc('\n', f);
	}
}

static void text_links(FILE *f, const struct nt_dev_view *dv)
{
	const struct nt_device *d = dv->d;
	char from[8], to[8];
	unsigned l;

	if (!d->mesh_x) {
		fputs("  link load: mesh geometry unknown\n", f);
		return;
	}
	if (!d->n_links) {
		fputs("  link load: no link counters\n", f);
		return;
	}
	if (!dv->links_ok) {
		fputs("  link load: -\n", f);
		return;
	}
	if (dv->hot < 0) {
		fputs("  link load: idle\n", f);
		return;
	}
	l = (unsigned)dv->hot;
	nt_node_label(d, l / NPU_HW_LINK_DIRS, from, sizeof(from));
	nt_node_label(d, (unsigned)nt_link_dest(d, l), to, sizeof(to));
	fprintf(f, "  link load: hottest %s -> %s (%s, link %u) %.1f%%\n", from, to,
		nt_dir_name(l % NPU_HW_LINK_DIRS), l, dv->link_pct[l]);
}

static void text_device(FILE *f, const struct nt_dev_view *dv)
{
	const struct nt_device *d = dv->d;
	char buf[64];

	fprintf(f, "%s  %s", d->name, d->kind == NT_KERNEL ? "kernel" : "emulator");
	if (d->pdev[0])
		fprintf(f, "  pci %s", d->pdev);
	if (d->kind == NT_EMULATOR)
		fprintf(f, "  %s", d->comm);
	fprintf(f, "  %u clusters x %u TPBs", d->clusters, d->tpbs);
	if (d->mesh_x)
		fprintf(f, "  mesh %ux%u", d->mesh_x, d->mesh_y);
	if (d->clock_mhz)
		fprintf(f, "  %u MHz", d->clock_mhz);
	if (d->sram) {
		nt_fmt_bytes(buf, sizeof(buf), d->sram);
		fprintf(f, "  SRAM %s", buf);
	}
	fputs("\n ", f);
	nt_fmt_mask(buf, sizeof(buf), nt_fused(d));
	fprintf(f, " fused %s", d->has_masks ? buf : "?");
	if (d->has_free) {
		nt_fmt_mask(buf, sizeof(buf), d->free_clusters);
		fprintf(f, "  free %s", buf);
	}
	if (d->has_resets)
		fprintf(f, "  resets %" PRIu64, d->resets);
	if (d->has_jobs)
		fprintf(f, "  jobs %" PRIu64, d->jobs);
	if (dv->memory_ok) {
		nt_fmt_bytes(buf, sizeof(buf), dv->memory);
		fprintf(f, "  memory %s", buf);
	}
	if (dv->busy_ok)
		fprintf(f, "  busy %.1f%%", dv->busy_pct);
	else
		fputs("  busy -", f);
	fputc('\n', f);
	text_clusters(f, dv);
	text_links(f, dv);
}

void nt_text_print(FILE *f, const struct nt_view *v)
{
	time_t t = (time_t)v->unix_s;
	char when[32] = "?";
	struct tm tm;

	if (localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(f, "npu-top  %s  interval %.2f s  %u device%s\n", when, v->interval_s, v->n_dev,
		v->n_dev == 1 ? "" : "s");
	for (unsigned i = 0; i < v->n_dev; i++) {
		fputc('\n', f);
		text_device(f, &v->dev[i]);
	}
	fprintf(f, "\n%-8s %-16s %-10s %6s %4s %-12s %7s %10s\n", "PID", "NAME", "DEVICE",
		"CLIENT", "CTX", "CLUSTERS", "BUSY%", "MEMORY");
	for (unsigned i = 0; i < v->n_proc; i++) {
		const struct nt_proc_view *pv = &v->proc[i];
		const struct nt_proc *p = pv->p;
		char client[24] = "-", ctx[16] = "-", cl[64] = "?", busy[16] = "-", mem[24] = "-";

		if (p->has_client)
			snprintf(client, sizeof(client), "%" PRIu64, p->client_id);
		if (p->has_contexts)
			snprintf(ctx, sizeof(ctx), "%u", p->contexts);
		if (p->has_clusters)
			nt_fmt_mask(cl, sizeof(cl), p->clusters);
		if (pv->busy_ok)
			snprintf(busy, sizeof(busy), "%.1f", pv->busy_pct);
		if (p->has_memory)
			nt_fmt_bytes(mem, sizeof(mem), p->memory);
		fprintf(f, "%-8d %-16s %-10s %6s %4s %-12s %7s %10s\n", p->pid, p->comm,
			v->dev[pv->dev].d->name, client, ctx, cl, busy, mem);
	}
	if (!v->n_proc)
		fputs("(no processes visible)\n", f);
}
