// SPDX-License-Identifier: MIT
/*
 * Chrome trace-event JSON of a recorded run (trace_json.h).
 *
 * The run is laid out end to end as it ran: each NPU program takes its
 * simulated cycles, each host step its measured wall time (converted to
 * cycles at the device clock, so one time base holds both).  Every event's
 * "ts"/"dur" are microseconds, as the format requires: cycles / clock_mhz;
 * its args keep the exact cycles ("cycle": start from the run's start,
 * "cycles": length), which is what tools that check a trace should read.
 *
 * Processes and threads (tracks):
 *   pid 1          "run": thread 1 "steps", one span per step, labelled
 *                  by the compiler ("Conv conv1"); host steps are there too
 *                  (category "host").
 *   pid 2          "CCB": one thread per DMA engine.
 *   pid 3          "NoC": a busy-percentage counter for each of the
 *                  links busy longest over the run.
 *   pid 10 + L     logical cluster L: one thread per TPB and unit
 *                  ("TPB 0 TCU"), and an "HBSM conflicts" counter.
 * Counters are sampled in NPU_TRACE_WINDOWS windows per NPU program.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "npu_internal.h"
#include "npu/npu_hw.h"
#include "trace/trace_json.h"

#define NPU_TRACE_WINDOWS	32	/* counter samples per NPU program */
#define NPU_TRACE_HOT_LINKS	8	/* links given a counter track */
#define PID_RUN			1
#define PID_CCB			2
#define PID_NOC			3
#define PID_CLUSTER0		10
#define UNIT_TRACKS		8	/* tids per TPB: unit + 1 */

static const char *const unit_names[NPU_UNIT_COUNT] = {
	[NPU_UNIT_TCU] = "TCU", [NPU_UNIT_CVU] = "CVU", [NPU_UNIT_DTDU] = "DTDU",
	[NPU_UNIT_CSU] = "CSU", [NPU_UNIT_SYNC] = "SYNC", [NPU_UNIT_DMA] = "DMA",
};

static const char *const dir_names[NPU_HW_LINK_DIRS] = { "east", "west", "north", "south" };

/* The opcode's name, as the ISA (npu_hw_isa.h) calls it. */
static const char *op_name(unsigned unit, unsigned op)
{
	static const char *const tcu[] = { NULL, "matmul", "conv2d" };
	static const char *const cvu[] = { NULL, "unary", "binary", "reduce", "softmax",
					   "logsoftmax", "layernorm", "pool", "select",
					   "scan", "dequant" };
	static const char *const dtdu[] = { NULL, "copy", "fill", "transpose", "pad" };
	static const char *const csu[] = { NULL, "gsdu", "topk", "nms" };
	static const char *const sync[] = { NULL, "nop", "barrier" };
	static const char *const dma[] = { NULL, "copy" };
	const char *const *t = NULL;
	size_t n = 0;

#define PICK(a) do { t = (a); n = NPU_ARRAY_SIZE(a); } while (0)
	switch (unit) {
	case NPU_UNIT_TCU: PICK(tcu); break;
	case NPU_UNIT_CVU: PICK(cvu); break;
	case NPU_UNIT_DTDU: PICK(dtdu); break;
	case NPU_UNIT_CSU: PICK(csu); break;
	case NPU_UNIT_SYNC: PICK(sync); break;
	case NPU_UNIT_DMA: PICK(dma); break;
	}
#undef PICK
	return t && op < n && t[op] ? t[op] : "op";
}

/*
 * @s as a JSON string: quotes, backslashes and control characters escaped,
 * and every byte that is not part of valid UTF-8 replaced by U+FFFD, so a
 * label made of a model's arbitrary node names still gives valid JSON.
 */
static void json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	fputc('"', f);
	while (*p) {
		unsigned c = *p, len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 :
				       (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
		uint32_t cp = len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
		bool ok = len != 0;

		for (unsigned i = 1; ok && i < len; i++) {
			ok = (p[i] & 0xc0) == 0x80;
			cp = cp << 6 | (p[i] & 0x3f);
		}
		/* No overlong forms, surrogates or code points past U+10FFFF. */
		if (ok && len > 1)
			ok = !(len == 2 && cp < 0x80) && !(len == 3 && cp < 0x800) &&
			     !(len == 4 && (cp < 0x10000 || cp > 0x10ffff)) &&
			     !(cp >= 0xd800 && cp <= 0xdfff);
		if (!ok) {
			fputs("\\ufffd", f);
			p++;
			continue;
		}
		if (len > 1) {
			fwrite(p, 1, len, f);
		} else if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc((int)c, f);
		} else if (c < 0x20) {
			fprintf(f, "\\u%04x", c);
		} else {
			fputc((int)c, f);
		}
		p += len;
	}
	fputc('"', f);
}

/* Cycles as the format's microseconds. */
static void put_us(FILE *f, const char *key, uint64_t cycles, unsigned mhz)
{
	fprintf(f, "\"%s\":%.6f", key, (double)cycles / mhz);
}

struct layout {
	uint64_t *start;	/* per step: first cycle on the run's timeline */
	uint64_t *len;		/* per step: cycles it takes there */
	size_t *job_step;	/* device job -> step */
	size_t njobs;
	uint64_t total;
};

static void layout_free(struct layout *l)
{
	free(l->start);
	free(l->len);
	free(l->job_step);
}

static npu_status layout_run(const struct npu_trace_run *run, struct layout *l)
{
	uint64_t t = 0;
	size_t n = run->nsteps ? run->nsteps : 1;

	l->start = calloc(n, sizeof(*l->start));
	l->len = calloc(n, sizeof(*l->len));
	l->job_step = calloc(n, sizeof(*l->job_step));
	if (!l->start || !l->len || !l->job_step)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory for the trace");
	for (size_t i = 0; i < run->nsteps; i++) {
		const struct npu_trace_step *s = &run->steps[i];

		l->start[i] = t;
		if (s->kind == NPU_TRACE_STEP_DEVICE) {
			l->len[i] = s->cycles;
			l->job_step[l->njobs++] = i;
		} else {
			l->len[i] = (uint64_t)llround(s->host_us * run->clock_mhz);
		}
		t += l->len[i];
	}
	l->total = t;
	if (l->njobs != run->rec->jobs)
		return npu_fail(NPU_ERR_INTERNAL,
				"the trace recorded %u NPU programs but the run had %zu",
				run->rec->jobs, l->njobs);
	/*
	 * A context's programs run one after the other on its queue, so the
	 * records come job by job: the counters below walk them in one pass.
	 */
	for (size_t i = 0; i < run->rec->nspans; i++)
		if (run->rec->spans[i].job >= l->njobs ||
		    (i && run->rec->spans[i].job < run->rec->spans[i - 1].job))
			return npu_fail(NPU_ERR_INTERNAL, "the trace's spans are out of job order");
	for (size_t i = 0; i < run->rec->nlinks; i++)
		if (run->rec->links[i].job >= l->njobs ||
		    (i && run->rec->links[i].job < run->rec->links[i - 1].job))
			return npu_fail(NPU_ERR_INTERNAL, "the trace's link records are out of job order");
	return NPU_OK;
}

static void meta(FILE *f, int pid, int tid, const char *what, const char *name, int sort)
{
	fprintf(f, ",\n{\"ph\":\"M\",\"ts\":0,\"pid\":%d,\"tid\":%d,\"name\":\"%s_name\",\"args\":{\"name\":",
		pid, tid, what);
	json_str(f, name);
	fprintf(f, "}}");
	fprintf(f, ",\n{\"ph\":\"M\",\"ts\":0,\"pid\":%d,\"tid\":%d,\"name\":\"%s_sort_index\","
		"\"args\":{\"sort_index\":%d}}", pid, tid, what, sort);
}

/* Process and thread names, for the tracks that have events. */
static void write_tracks(FILE *f, const struct npu_trace_run *run)
{
	const struct npu_trace_rec *rec = run->rec;
	bool used[NPU_HW_MAX_CLUSTERS][NPU_HW_MAX_TPBS_PER_CLUSTER][UNIT_TRACKS] = { { { 0 } } };
	bool cl[NPU_HW_MAX_CLUSTERS] = { 0 }, dma[NPU_HW_NUM_DMA_ENGINES] = { 0 };
	char name[96];

	for (size_t i = 0; i < rec->nspans; i++) {
		const struct npu_trace_span *s = &rec->spans[i].s;

		if (s->lcluster == NPU_TRACE_CCB) {
			if (s->tpb < NPU_HW_NUM_DMA_ENGINES)
				dma[s->tpb] = true;
		} else if (s->lcluster < NPU_HW_MAX_CLUSTERS &&
			   s->tpb < NPU_HW_MAX_TPBS_PER_CLUSTER && s->unit < NPU_TPB_UNITS) {
			used[s->lcluster][s->tpb][s->unit] = true;
			cl[s->lcluster] = true;
		}
	}
	meta(f, PID_RUN, 0, "process", "run", 0);
	meta(f, PID_RUN, 1, "thread", "steps", 0);
	meta(f, PID_CCB, 0, "process", "CCB", 1);
	for (unsigned e = 0; e < NPU_HW_NUM_DMA_ENGINES; e++) {
		if (!dma[e])
			continue;
		snprintf(name, sizeof(name), "DMA engine %u", e);
		meta(f, PID_CCB, (int)e + 1, "thread", name, (int)e);
	}
	meta(f, PID_NOC, 0, "process", "NoC links", 2);
	for (unsigned c = 0; c < run->nclusters && c < NPU_HW_MAX_CLUSTERS; c++) {
		if (!cl[c])
			continue;
		snprintf(name, sizeof(name), "cluster %u (logical %u)", run->cluster_map[c], c);
		meta(f, PID_CLUSTER0 + (int)c, 0, "process", name, 3 + (int)c);
		for (unsigned t = 0; t < run->tpbs && t < NPU_HW_MAX_TPBS_PER_CLUSTER; t++) {
			for (unsigned u = 0; u < NPU_TPB_UNITS; u++) {
				int tid = (int)(t * UNIT_TRACKS + u + 1);

				if (!used[c][t][u])
					continue;
				snprintf(name, sizeof(name), "TPB %u %s", t, unit_names[u]);
				meta(f, PID_CLUSTER0 + (int)c, tid, "thread", name, tid);
			}
		}
	}
}

static void write_steps(FILE *f, const struct npu_trace_run *run, const struct layout *l)
{
	static const char *const cat[] = { "step", "host", "control" };

	for (size_t i = 0; i < run->nsteps; i++) {
		const struct npu_trace_step *s = &run->steps[i];
		char fallback[32];
		const char *label = s->label;

		if (!label || !*label) {
			snprintf(fallback, sizeof(fallback), "step %zu", i);
			label = fallback;
		}
		fprintf(f, ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":1,\"cat\":\"%s\",\"name\":",
			PID_RUN, cat[s->kind]);
		json_str(f, label);
		fputc(',', f);
		put_us(f, "ts", l->start[i], run->clock_mhz);
		fputc(',', f);
		put_us(f, "dur", l->len[i], run->clock_mhz);
		fprintf(f, ",\"args\":{\"step\":%zu,\"cycle\":%llu,\"cycles\":%llu", i,
			(unsigned long long)l->start[i], (unsigned long long)l->len[i]);
		if (s->kind == NPU_TRACE_STEP_DEVICE)
			fprintf(f, ",\"device_cycles\":%llu", (unsigned long long)s->cycles);
		else
			fprintf(f, ",\"device_cycles\":0,\"host_us\":%.3f", s->host_us);
		fprintf(f, "}}");
	}
}

static void write_spans(FILE *f, const struct npu_trace_run *run, const struct layout *l)
{
	const struct npu_trace_rec *rec = run->rec;

	for (size_t i = 0; i < rec->nspans; i++) {
		const struct npu_trace_span *s = &rec->spans[i].s;
		size_t step = l->job_step[rec->spans[i].job];
		uint64_t at = l->start[step] + s->start;
		bool ccb = s->lcluster == NPU_TRACE_CCB;
		int pid = ccb ? PID_CCB : PID_CLUSTER0 + s->lcluster;
		int tid = ccb ? s->tpb + 1 : s->tpb * UNIT_TRACKS + s->unit + 1;
		const char *unit = s->unit < NPU_UNIT_COUNT ? unit_names[s->unit] : "unit";

		fprintf(f, ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"cat\":\"%s\",\"name\":\"%s %s\",",
			pid, tid, s->unit == NPU_UNIT_CSU && s->gsdu_bytes ? "gsdu" : unit, unit,
			op_name(s->unit, s->opcode));
		put_us(f, "ts", at, run->clock_mhz);
		fputc(',', f);
		put_us(f, "dur", s->dur, run->clock_mhz);
		fprintf(f, ",\"args\":{\"step\":%zu,\"insn\":%u,\"iter\":%llu,\"cycle\":%llu,"
			"\"cycles\":%llu,\"unit\":\"%s\"", step, s->insn,
			(unsigned long long)s->iter, (unsigned long long)at,
			(unsigned long long)s->dur, unit);
		if (ccb)
			fprintf(f, ",\"engine\":%u,\"dma_bytes\":%llu", s->tpb,
				(unsigned long long)s->dma_bytes);
		else
			fprintf(f, ",\"cluster\":%u,\"tpb\":%u,\"conflicts\":%llu", s->pcluster,
				s->tpb, (unsigned long long)s->conflicts);
		if (s->gsdu_bytes)
			fprintf(f, ",\"gsdu_bytes\":%llu", (unsigned long long)s->gsdu_bytes);
		fprintf(f, "}}");
	}
}

static void counter(FILE *f, int pid, const char *name, const char *key, uint64_t at,
		    unsigned mhz, double v)
{
	fprintf(f, ",\n{\"ph\":\"C\",\"pid\":%d,\"name\":", pid);
	json_str(f, name);
	fputc(',', f);
	put_us(f, "ts", at, mhz);
	fprintf(f, ",\"args\":{\"%s\":%.6g}}", key, v);
}

/* The window of a device step each counter sample covers, in cycles. */
static uint64_t window_of(const struct layout *l, size_t step)
{
	return l->len[step] / NPU_TRACE_WINDOWS + 1;
}

/*
 * The NPU_TRACE_HOT_LINKS links busy longest over the run (ties: the lower
 * index); returns how many.  Fills every link's @busy cycles and @bytes.
 */
static unsigned hot_links(const struct npu_trace_rec *rec, unsigned *hot, uint64_t *busy,
			  uint64_t *bytes)
{
	unsigned n = 0;

	memset(busy, 0, NPU_HW_MAX_LINKS * sizeof(*busy));
	memset(bytes, 0, NPU_HW_MAX_LINKS * sizeof(*bytes));
	for (size_t i = 0; i < rec->nlinks; i++) {
		if (rec->links[i].link < NPU_HW_MAX_LINKS) {
			busy[rec->links[i].link] += rec->links[i].len;
			bytes[rec->links[i].link] += rec->links[i].bytes;
		}
	}
	for (unsigned k = 0; k < NPU_TRACE_HOT_LINKS; k++) {
		int best = -1;

		for (unsigned i = 0; i < NPU_HW_MAX_LINKS; i++) {
			bool taken = false;

			for (unsigned j = 0; j < n; j++)
				taken |= hot[j] == i;
			if (!taken && busy[i] && (best < 0 || busy[i] > busy[best]))
				best = (int)i;
		}
		if (best < 0)
			break;
		hot[n++] = (unsigned)best;
	}
	return n;
}

/* Add [s, e) of busy time to the windows of @w cycles it overlaps. */
static void add_busy(uint64_t *win, uint64_t w, uint64_t s, uint64_t e)
{
	while (s < e) {
		uint64_t k = s / w, end = (k + 1) * w < e ? (k + 1) * w : e;

		if (k < NPU_TRACE_WINDOWS)
			win[k] += end - s;
		s = end;
	}
}

static npu_status write_links(FILE *f, const struct npu_trace_run *run, const struct layout *l,
			      unsigned *hot, unsigned nhot)
{
	const struct npu_trace_rec *rec = run->rec;
	uint64_t *win = calloc((size_t)nhot * NPU_TRACE_WINDOWS + 1, sizeof(*win));
	size_t i = 0;

	if (!win)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory for the trace");
	for (size_t j = 0; j < l->njobs; j++) {
		size_t step = l->job_step[j];
		uint64_t w = window_of(l, step);

		memset(win, 0, (size_t)nhot * NPU_TRACE_WINDOWS * sizeof(*win));
		for (; i < rec->nlinks && rec->links[i].job == j; i++) {
			const struct npu_trace_rec_link *b = &rec->links[i];

			for (unsigned h = 0; h < nhot; h++)
				if (hot[h] == b->link)
					add_busy(&win[h * NPU_TRACE_WINDOWS], w, b->start,
						 b->start + b->len);
		}
		for (unsigned h = 0; h < nhot; h++) {
			unsigned node = hot[h] / NPU_HW_LINK_DIRS, mx = run->mesh_x ? run->mesh_x : 1;
			char name[64];

			snprintf(name, sizeof(name), "link %u (%u,%u) %s", hot[h], node % mx,
				 node / mx, dir_names[hot[h] % NPU_HW_LINK_DIRS]);
			for (uint64_t k = 0; k < NPU_TRACE_WINDOWS && k * w < l->len[step]; k++) {
				uint64_t span = l->len[step] - k * w < w ? l->len[step] - k * w : w;

				counter(f, PID_NOC, name, "busy %", l->start[step] + k * w,
					run->clock_mhz,
					100.0 * (double)win[h * NPU_TRACE_WINDOWS + k] / (double)span);
			}
			counter(f, PID_NOC, name, "busy %", l->start[step] + l->len[step],
				run->clock_mhz, 0);
		}
	}
	free(win);
	return NPU_OK;
}

/* Per cluster with any: HBSM bank conflicts per window, at the spans' starts. */
static npu_status write_conflicts(FILE *f, const struct npu_trace_run *run,
				  const struct layout *l)
{
	const struct npu_trace_rec *rec = run->rec;
	uint64_t total[NPU_HW_MAX_CLUSTERS] = { 0 };
	uint64_t *win = calloc((size_t)NPU_HW_MAX_CLUSTERS * NPU_TRACE_WINDOWS, sizeof(*win));
	size_t i;

	if (!win)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory for the trace");

	for (i = 0; i < rec->nspans; i++)
		if (rec->spans[i].s.lcluster < NPU_HW_MAX_CLUSTERS)
			total[rec->spans[i].s.lcluster] += rec->spans[i].s.conflicts;
	i = 0;

	for (size_t j = 0; j < l->njobs; j++) {
		size_t step = l->job_step[j];
		uint64_t w = window_of(l, step);

		memset(win, 0, (size_t)NPU_HW_MAX_CLUSTERS * NPU_TRACE_WINDOWS * sizeof(*win));
		for (; i < rec->nspans && rec->spans[i].job == j; i++) {
			const struct npu_trace_span *s = &rec->spans[i].s;

			if (s->lcluster < NPU_HW_MAX_CLUSTERS && s->start / w < NPU_TRACE_WINDOWS)
				win[s->lcluster * NPU_TRACE_WINDOWS + s->start / w] += s->conflicts;
		}
		for (unsigned c = 0; c < run->nclusters && c < NPU_HW_MAX_CLUSTERS; c++) {
			if (!total[c])
				continue;
			for (uint64_t k = 0; k < NPU_TRACE_WINDOWS && k * w < l->len[step]; k++)
				counter(f, PID_CLUSTER0 + (int)c, "HBSM conflicts", "conflicts",
					l->start[step] + k * w, run->clock_mhz,
					(double)win[c * NPU_TRACE_WINDOWS + k]);
			counter(f, PID_CLUSTER0 + (int)c, "HBSM conflicts", "conflicts",
				l->start[step] + l->len[step], run->clock_mhz, 0);
		}
	}
	free(win);
	return NPU_OK;
}

npu_status npu_trace_write_json(const struct npu_trace_run *run, FILE *f, const char *path)
{
	struct layout l = { 0 };
	uint64_t link_busy[NPU_HW_MAX_LINKS], link_bytes[NPU_HW_MAX_LINKS];
	unsigned hot[NPU_TRACE_HOT_LINKS], nhot;
	npu_status st;

	if (!run->clock_mhz)
		return npu_fail(NPU_ERR_INTERNAL, "the device reports no clock: cannot time a trace");
	st = layout_run(run, &l);
	if (st) {
		layout_free(&l);
		return st;
	}
	nhot = hot_links(run->rec, hot, link_busy, link_bytes);
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"generator\":\"libnpu\","
		"\"clock_mhz\":%u,\"time\":\"ts and dur are microseconds of simulated device "
		"time: cycles / clock_mhz; host steps take their measured wall time; each "
		"event's args give its start (cycle) and length (cycles) in cycles\","
		"\"total_cycles\":%llu,\"steps\":%zu,\"spans\":%zu,\"link_transfers\":%zu,"
		"\"counter_windows_per_step\":%d,\"hot_links\":[",
		run->clock_mhz, (unsigned long long)l.total, run->nsteps, run->rec->nspans,
		run->rec->nlinks, NPU_TRACE_WINDOWS);
	for (unsigned h = 0; h < nhot; h++)
		fprintf(f, "%s{\"link\":%u,\"busy_cycles\":%llu,\"bytes\":%llu}", h ? "," : "",
			hot[h], (unsigned long long)link_busy[hot[h]],
			(unsigned long long)link_bytes[hot[h]]);
	fprintf(f, "]},\n\"traceEvents\":[\n");
	/* The first event opens the array: every later one starts with ",\n". */
	fprintf(f, "{\"ph\":\"M\",\"ts\":0,\"pid\":%d,\"tid\":0,\"name\":\"process_labels\","
		"\"args\":{\"labels\":\"M100 emulator\"}}", PID_RUN);
	write_tracks(f, run);
	write_steps(f, run, &l);
	write_spans(f, run, &l);
	st = write_links(f, run, &l, hot, nhot);
	if (!st)
		st = write_conflicts(f, run, &l);
	fprintf(f, "\n]}\n");
	layout_free(&l);
	if (!st && (fflush(f) || ferror(f)))
		st = npu_fail(NPU_ERR_IO, "writing the trace %s failed: %s", path,
			      strerror(errno ? errno : EIO));
	return st;
}
