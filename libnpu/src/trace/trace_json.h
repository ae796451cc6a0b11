/* SPDX-License-Identifier: MIT */
/*
 * A recorded run written as Chrome trace-event JSON (the format Perfetto's
 * UI and chrome://tracing open).  Kept apart from the context so the
 * format's layout lives in one file and the context only describes the
 * run it has.
 */
#ifndef NPU_TRACE_JSON_H
#define NPU_TRACE_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "npu.h"
#include "trace/trace_rec.h"

enum npu_trace_step_kind {
	NPU_TRACE_STEP_DEVICE,	/* an NPU program: the next device job */
	NPU_TRACE_STEP_HOST,	/* a host step (the CPU fallback) */
	NPU_TRACE_STEP_CONTROL,	/* a host step choosing the next step */
};

/* One step of the run, in the order it ran. */
struct npu_trace_step {
	const char *label;	/* the compiler's ("Conv conv1"); may be NULL */
	enum npu_trace_step_kind kind;
	uint64_t cycles;	/* a device step's simulated cycles */
	double host_us;		/* a host or control step's wall time */
};

struct npu_trace_run {
	const struct npu_trace_rec *rec;
	const struct npu_trace_step *steps;
	size_t nsteps;
	unsigned clock_mhz;
	unsigned tpbs;		/* per cluster */
	unsigned mesh_x;
	unsigned nclusters;	/* the partition */
	const uint8_t *cluster_map;	/* logical -> physical */
};

/* Write @run to @f; NPU_ERR_IO naming @path when a write fails. */
npu_status npu_trace_write_json(const struct npu_trace_run *run, FILE *f,
				const char *path);

#endif /* NPU_TRACE_JSON_H */
