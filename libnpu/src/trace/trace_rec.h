/* SPDX-License-Identifier: MIT */
/*
 * A run's trace as the emulator backend records it: the device core's
 * spans (one per instruction iteration) and NoC link bookings, each tagged
 * with the device job (the run's NPU program, in submission order) it
 * belongs to.  Bounded: past max_events the rest of the run is dropped
 * and the trace marked incomplete, so a big model cannot exhaust memory.
 *
 * Written by the backend's worker thread while the run's jobs execute,
 * read by the context after the run completed (the job wait orders the
 * two); reset by the context before the next run starts.
 */
#ifndef NPU_TRACE_REC_H
#define NPU_TRACE_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npu_trace.h"

struct npu_trace_rec_span {
	struct npu_trace_span s;
	uint32_t job;		/* device job of the run, from 0 */
};

struct npu_trace_rec_link {
	uint64_t start, len, bytes;
	uint32_t job;
	uint32_t link;
};

struct npu_trace_rec {
	size_t max_events;	/* spans + link bookings kept, at most */
	struct npu_trace_rec_span *spans;
	size_t nspans, cap_spans;
	struct npu_trace_rec_link *links;
	size_t nlinks, cap_links;
	uint32_t jobs;		/* device jobs submitted in this run */
	bool dropped;		/* events past max_events (or memory) were lost */
};

/* The per-job tracer handed to the device core. */
struct npu_trace_job {
	struct npu_tracer ops;
	struct npu_trace_rec *rec;
	uint32_t job;
};

struct npu_trace_rec *npu_trace_rec_new(size_t max_events);
void npu_trace_rec_free(struct npu_trace_rec *rec);
/* Forget the last run (before a new one is submitted). */
void npu_trace_rec_reset(struct npu_trace_rec *rec);
/* Bind @tj to the next device job of @rec's run (at submission). */
void npu_trace_job_init(struct npu_trace_job *tj, struct npu_trace_rec *rec);

#endif /* NPU_TRACE_REC_H */
