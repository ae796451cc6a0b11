/* SPDX-License-Identifier: MIT */
/* npu-run: the summary (text or JSON) and the profile. */
#ifndef NPU_RUN_REPORT_H
#define NPU_RUN_REPORT_H

#include <stddef.h>

#include "args.h"
#include "detect.h"
#include "inputs.h"
#include "npu.h"

/* One profiled run: its steps and the counters' increase over it. */
struct nr_profile {
	npu_step_stats *steps;
	double *host_us;		/* per step: a host step's wall time, else < 0 */
	size_t n_steps;
	uint64_t total_cycles;		/* npu_run_stats.device_cycles */
	npu_device_counters delta;
};

/* A step of the last timed run that ran on the host (--cpu-fallback). */
struct nr_host_step {
	const char *label;		/* "Det #0 (host)" */
	const char *op;
	double us;			/* its wall time */
};

struct nr_top_k {
	const char *output;		/* tensor name */
	npu_top_k_entry *entries;
	int64_t n;
};

/* Everything the summary shows; main fills it, the printers only read. */
struct nr_report {
	const struct nr_options *o;
	npu_device_info dev;
	unsigned partition;		/* clusters of the context */
	const npu_model *model;
	const npu_context *ctx;		/* its last run's run-time output shapes */
	unsigned batch;
	const struct nr_input *inputs;
	size_t n_inputs;
	char **output_paths;		/* per output, or NULL without --output-dir */
	double load_ms;			/* load and compile */
	double *lat_ms;			/* wall latency of each timed run */
	size_t n_lat;
	npu_run_stats last;		/* the last timed run */
	const struct nr_host_step *host;	/* its host steps */
	size_t n_host;
	double host_us;			/* their wall time together */
	npu_device_counters loop_delta;	/* counters over the timed runs */
	const struct nr_top_k *top;	/* NULL without --top-k */
	const struct nr_profile *prof;	/* NULL without --profile */
	const struct nr_detect *det;	/* NULL without --detect */
};

/* What --generate measured; main's generation flow fills it. */
struct nr_gen_report {
	const struct nr_options *o;
	npu_device_info dev;
	const int64_t *prompt;
	size_t n_prompt;
	const int64_t *ids;		/* generated */
	size_t n_ids;
	const char *stop;		/* why it stopped, a phrase */
	double create_ms;		/* compile the decode program, set up the cache */
	double *step_ms;		/* wall time of each step after the first */
	size_t n_step;
	npu_generator_stats st;
	int have_traffic;		/* the backend counts DMA bytes */
	/* --profile, on a backend with NPU_HAVE_WORK: the counters over the
	 * decode runs of the steps (work_runs of them). */
	int have_work;
	unsigned work_runs;
	npu_device_counters work;
	const npu_step_stats *steps;	/* --profile: the last decode run's steps */
	size_t n_steps;
};

/* The --generate summary on stdout, as text or (--json) one JSON object. */
void nr_report_generation(const struct nr_gen_report *g);

/* The summary on stdout, as text or (--json) one JSON object. */
void nr_report_print(const struct nr_report *r);

/* What --compile-only prints. */
void nr_report_compiled(const struct nr_options *o, const npu_device_info *dev,
			const npu_model *model, double load_ms);

/* @d = @b - @a, field by field (counters only grow). */
void nr_counters_delta(const npu_device_counters *a, const npu_device_counters *b,
		       npu_device_counters *d);

#endif /* NPU_RUN_REPORT_H */
