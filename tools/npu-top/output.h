/* SPDX-License-Identifier: MIT */
/*
 * npu-top: the three ways of showing a view (JSON, a text table, the
 * ncurses TUI) and the formatting they share.
 */
#ifndef NPU_TOP_OUTPUT_H
#define NPU_TOP_OUTPUT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"
#include "sources.h"

/* Set by SIGINT/SIGTERM/SIGHUP; every loop polls it. */
extern volatile sig_atomic_t nt_stop;

/* Intervals: the -d minimum and the steps of the TUI's +/- keys. */
#define NT_MIN_INTERVAL	0.1
#define NT_MAX_INTERVAL	3600.0

/* "12.0 MiB", "512 B" */
void nt_fmt_bytes(char *buf, size_t n, uint64_t bytes);
/* 0x1e -> "1-4"; 0 -> "-" */
void nt_fmt_mask(char *buf, size_t n, uint32_t mask);
/* strtod with the -d rules: finite, NT_MIN_INTERVAL..NT_MAX_INTERVAL */
int nt_parse_interval(const char *s, double *out);

/* One JSON object on one line. */
void nt_json_print(FILE *f, const struct nt_view *v);
/* --record: one JSON line with the raw busy ns next to the rates; mono_ns
 * is the sample's CLOCK_MONOTONIC time. */
void nt_record_print(FILE *f, const struct nt_view *v, int64_t mono_ns);
/* A static table for humans without a terminal. */
void nt_text_print(FILE *f, const struct nt_view *v);

struct nt_tui_opts {
	const struct nt_sources *src;
	double interval;
	enum nt_sort sort;
};

/*
 * Run the terminal UI on stdout until 'q' or a signal.  first is the
 * snapshot main took to check that a device exists (it stays the
 * caller's to free).  Returns the exit status.
 */
int nt_tui_run(const struct nt_tui_opts *o, struct nt_snapshot *first);

#endif /* NPU_TOP_OUTPUT_H */
