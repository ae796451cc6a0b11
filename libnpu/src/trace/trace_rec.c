// SPDX-License-Identifier: MIT
/* Recording a run's spans and link bookings (trace_rec.h). */
#include <stdlib.h>

#include "trace/trace_rec.h"

struct npu_trace_rec *npu_trace_rec_new(size_t max_events)
{
	struct npu_trace_rec *rec = calloc(1, sizeof(*rec));

	if (rec)
		rec->max_events = max_events;
	return rec;
}

void npu_trace_rec_free(struct npu_trace_rec *rec)
{
	if (!rec)
		return;
	free(rec->spans);
	free(rec->links);
	free(rec);
}

void npu_trace_rec_reset(struct npu_trace_rec *rec)
{
	rec->nspans = 0;
	rec->nlinks = 0;
	rec->jobs = 0;
	rec->dropped = false;
}

/* Room for one more event in @arr (of @size-byte entries), or false. */
static bool room(struct npu_trace_rec *rec, void **arr, size_t n, size_t *cap,
		 size_t size)
{
	if (rec->dropped || rec->nspans + rec->nlinks >= rec->max_events) {
		rec->dropped = true;
		return false;
	}
	if (n == *cap) {
		size_t c = *cap ? *cap * 2 : 4096;
		void *p = realloc(*arr, c * size);

		if (!p) {
			rec->dropped = true;
			return false;
		}
		*arr = p;
		*cap = c;
	}
	return true;
}

static void on_span(struct npu_tracer *t, const struct npu_trace_span *s)
{
	struct npu_trace_job *tj = (struct npu_trace_job *)t;
	struct npu_trace_rec *rec = tj->rec;

	if (!room(rec, (void **)&rec->spans, rec->nspans, &rec->cap_spans,
		  sizeof(*rec->spans)))
		return;
	rec->spans[rec->nspans++] = (struct npu_trace_rec_span){ .s = *s, .job = tj->job };
}

static void on_link(struct npu_tracer *t, unsigned link, uint64_t start, uint64_t len,
		    uint64_t bytes)
{
	struct npu_trace_job *tj = (struct npu_trace_job *)t;
	struct npu_trace_rec *rec = tj->rec;

	if (!room(rec, (void **)&rec->links, rec->nlinks, &rec->cap_links,
		  sizeof(*rec->links)))
		return;
	rec->links[rec->nlinks++] = (struct npu_trace_rec_link){
		.start = start, .len = len, .bytes = bytes, .job = tj->job, .link = link,
	};
}

void npu_trace_job_init(struct npu_trace_job *tj, struct npu_trace_rec *rec)
{
	tj->ops.span = on_span;
	tj->ops.link = on_link;
	tj->rec = rec;
	tj->job = rec ? rec->jobs++ : 0;
}
