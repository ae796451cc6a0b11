// SPDX-License-Identifier: MIT
/*
 * npu-top --record FILE: one JSON object per line and per sample, for
 * plotting later.  Unlike --json (what the screen shows), a record keeps
 * the raw cumulative counters next to the rates: busy ns per device,
 * cluster and process (ns from every source, sources.h), so a plot can
 * recompute utilisation over any window.  The format is in npu-top(1).
 */
#include "json.h"
#include "output.h"

/* A device's busy ns over its healthy clusters; false without counters. */
static bool device_busy_ns(const struct nt_device *d, uint64_t *sum)
{
	uint32_t fused = nt_fused(d);

	*sum = 0;
	if (!d->n_busy)
		return false;
	for (unsigned c = 0; c < d->n_busy; c++)
		if (!(fused & (1u << c)))
			*sum += d->busy_ns[c];
	return true;
}

static void put_pct(struct json_writer *j, const char *key, bool ok, double pct)
{
	if (ok)
		json_fixed(j, key, pct, 2);
	else
		json_null(j, key);
}

static void record_device(struct json_writer *j, const struct nt_dev_view *dv)
{
	const struct nt_device *d = dv->d;
	uint64_t busy;

	json_begin_object(j, NULL);
	json_string(j, "name", d->name);
	json_string(j, "kind", d->kind == NT_KERNEL ? "kernel" : "emulator");
	if (device_busy_ns(d, &busy))
		json_u64(j, "busy_ns", busy);
	else
		json_null(j, "busy_ns");
	json_begin_array(j, "cluster_busy_ns");
	for (unsigned c = 0; c < d->n_busy; c++)
		json_u64(j, NULL, d->busy_ns[c]);
	json_end_array(j);
	/* The time those ns are out of: simulated for an emulator, else the wall. */
	if (d->has_device_ns)
		json_u64(j, "device_ns", d->device_ns);
	else
		json_null(j, "device_ns");
	put_pct(j, "busy_pct", dv->busy_ok, dv->busy_pct);
	json_begin_array(j, "cluster_busy_pct");
	for (unsigned c = 0; c < d->clusters; c++)
		put_pct(j, NULL, dv->cl_ok[c], dv->cl_pct[c]);
	json_end_array(j);
	json_end_object(j);
}

static void record_proc(struct json_writer *j, const struct nt_view *v,
			const struct nt_proc_view *pv)
{
	const struct nt_proc *p = pv->p;

	json_begin_object(j, NULL);
	json_i64(j, "pid", p->pid);
	json_string(j, "name", p->comm);
	json_string(j, "device", v->dev[pv->dev].d->name);
	if (p->has_client)
		json_u64(j, "client_id", p->client_id);
	else
		json_null(j, "client_id");
	if (p->has_busy)
		json_u64(j, "busy_ns", p->busy_ns);
	else
		json_null(j, "busy_ns");
	put_pct(j, "busy_pct", pv->busy_ok, pv->busy_pct);
	json_end_object(j);
}

void nt_record_print(FILE *f, const struct nt_view *v, int64_t mono_ns)
{
	struct json_writer j;

	json_init(&j, f, JSON_COMPACT);
	json_begin_object(&j, NULL);
	json_fixed(&j, "time", v->unix_s, 6);
	json_i64(&j, "mono_ns", mono_ns);
	json_fixed(&j, "interval_s", v->interval_s, 6);
	json_begin_array(&j, "devices");
	for (unsigned i = 0; i < v->n_dev; i++)
		record_device(&j, &v->dev[i]);
	json_end_array(&j);
	json_begin_array(&j, "processes");
	for (unsigned i = 0; i < v->n_proc; i++)
		record_proc(&j, v, &v->proc[i]);
	json_end_array(&j);
	json_end_object(&j);
}
