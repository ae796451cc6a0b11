// SPDX-License-Identifier: MIT
/*
 * npu-top: a live monitor of M100 NPUs, kernel devices (/dev/accel/accelN
 * bound to npu) and libnpu's in-process emulators alike: per-cluster busy
 * %, NoC link load on the mesh, and the processes using them.
 *
 * It only reads files (sysfs, /proc/<pid>/fdinfo, emulator stat files,
 * see sources.h); it does not open the device and does not link libnpu,
 * so it runs anywhere, including a minimal guest.
 *
 * Modes: the ncurses TUI when stdout is a terminal; otherwise (or with
 * --batch, --once, -n) text tables; --json for JSON objects, one per
 * line; --record FILE for JSON lines with the raw busy ns (record.c).  Exit status: 0 ok, 1 no NPU found (or the terminal cannot be
 * driven), 2 a bad command line.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "output.h"

#define EXIT_NONE	1
#define EXIT_USAGE	2
#define DEFAULT_INTERVAL	1.0
#define ONCE_INTERVAL		0.5	/* --once: short, but long enough to see work */
#define MAX_COUNT		1000000000L

volatile sig_atomic_t nt_stop;

struct options {
	double interval;
	bool interval_set;
	long count;			/* 0: until interrupted */
	bool count_set;
	bool once, json, batch;
	enum nt_sort sort;
	const char *record;		/* --record FILE, or NULL */
};

static void usage(FILE *f)
{
	fputs("usage: npu-top [-d SECONDS] [-s busy|memory|pid]\n"
	      "       npu-top --once [--json] [-d SECONDS]\n"
	      "       npu-top [--json | --batch] [-n COUNT] [-d SECONDS]\n"
	      "       npu-top --record FILE [--json | --batch] [-n COUNT] [-d SECONDS]\n"
	      "\n"
	      "Live monitor of M100 NPUs: per-cluster busy %, NoC link load and the\n"
	      "processes using each device (kernel /dev/accel/accelN and libnpu emulators).\n"
	      "\n"
	      "  -d, --delay SECONDS   sampling interval, >= 0.1 (default 1.0; --once 0.5)\n"
	      "  -n, --iterations N    print N samples, then exit (implies --batch)\n"
	      "      --once            print one sample (two reads -d apart) and exit\n"
	      "  -J, --json            JSON objects, one per line, instead of the TUI\n"
	      "  -b, --batch           text tables instead of the TUI\n"
	      "  -s, --sort KEY        order processes by busy (default), memory or pid\n"
	      "      --record FILE     also write each sample to FILE as one JSON line (busy ns\n"
	      "                        and % per device and process); no TUI, and nothing on\n"
	      "                        stdout without --json or --batch\n"
	      "  -h, --help            this text\n"
	      "\n"
	      "TUI keys: q quit, s sort, p pause, d/+/- interval, h help.\n"
	      "Environment: NPU_TOP_ROOT (read /dev, /sys, /proc, /tmp below it),\n"
	      "NPU_EMU_STATS_DIR (emulator stat files), NO_COLOR.\n",
	      f);
}

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...)
{
	va_list ap;

	fputs("npu-top: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (npu-top --help lists the options)\n", stderr);
	return EXIT_USAGE;
}

static bool parse_count(const char *s, long *out)
{
	char *end;
	long v;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 1 || v > MAX_COUNT)
		return false;
	*out = v;
	return true;
}

static bool parse_sort(const char *s, enum nt_sort *out)
{
	for (int i = 0; i < NT_SORT_COUNT; i++)
		if (strcmp(s, nt_sort_name((enum nt_sort)i)) == 0) {
			*out = (enum nt_sort)i;
			return true;
		}
	return false;
}

/* Returns -1 to go on, else an exit status. */
static int parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_ONCE = 256, OPT_RECORD };
	static const struct option longs[] = {
		{ "delay", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'd' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "record", required_argument, NULL, OPT_RECORD },
		{ "json", no_argument, NULL, 'J' },
		{ "batch", no_argument, NULL, 'b' },
		{ "sort", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->interval = DEFAULT_INTERVAL;
	opterr = 0;	/* our own one-line messages */
	while ((c = getopt_long(argc, argv, ":d:n:Jbs:h", longs, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (nt_parse_interval(optarg, &o->interval) != 0)
				return bad("bad interval '%s': want seconds, %.1f to %.0f", optarg,
					   NT_MIN_INTERVAL, NT_MAX_INTERVAL);
			o->interval_set = true;
			break;
		case 'n':
			if (!parse_count(optarg, &o->count))
				return bad("bad count '%s': want a whole number >= 1", optarg);
			o->count_set = true;
			break;
		case OPT_ONCE:
			o->once = true;
			break;
		case OPT_RECORD:
			if (!*optarg)
				return bad("--record: empty file name");
			o->record = optarg;
			break;
		case 'J':
			o->json = true;
			break;
		case 'b':
			o->batch = true;
			break;
		case 's':
			if (!parse_sort(optarg, &o->sort))
				return bad("bad sort key '%s': want busy, memory or pid", optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			return bad("option '%s' needs a value", argv[optind - 1]);
		default: {
			const char *arg = argv[optind - 1];

			if (strncmp(arg, "--", 2) != 0)
				return bad("unknown option '-%c'", optopt);
			if (strchr(arg, '=') && optopt)
				return bad("option '%.*s' takes no value", (int)strcspn(arg, "="), arg);
			return bad("unknown option '%s'", arg);
		}
		}
	}
	if (optind < argc)
		return bad("unexpected argument '%s'", argv[optind]);
	if (o->once && o->count_set)
		return bad("--once and -n exclude each other");
	if (o->once) {
		o->count = 1;
		if (!o->interval_set)
			o->interval = ONCE_INTERVAL;
	}
	return -1;
}

static void on_signal(int sig)
{
	(void)sig;
	nt_stop = 1;
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: sleeps and reads return early so we exit promptly. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* Sleep, cut short by a signal; false if asked to stop. */
static bool nap(double seconds)
{
	struct timespec ts = {
		.tv_sec = (time_t)seconds,
		.tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9),
	};

	while (!nt_stop && nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	return !nt_stop;
}

/*
 * --json, --batch, --once, -n, --record, or stdout is not a terminal.  first stays
 * the caller's; the second buffer is ours, whichever role it has last.
 */
static int run_stream(const struct options *o, const struct nt_sources *src,
		      struct nt_snapshot *first, FILE *record)
{
	struct nt_snapshot *second = malloc(sizeof(*second));
	struct nt_view *view = malloc(sizeof(*view));
	struct nt_snapshot *prev = first, *cur = second;
	/* --record alone writes only the file. */
	bool show = o->json || o->batch || !record;
	int status = 0;

	if (!second || !view) {
		fputs("npu-top: out of memory\n", stderr);
		free(second);
		free(view);
		return 1;
	}
	for (long i = 0; !o->count || i < o->count; i++) {
		struct nt_snapshot *tmp;

		if (!nap(o->interval))
			break;
		nt_snapshot_take(src, cur);
		nt_view_build(view, prev, cur, o->sort);
		if (record) {
			nt_record_print(record, view, cur->mono_ns);
			if (fflush(record) != 0 || ferror(record)) {
				fprintf(stderr, "npu-top: cannot write %s: %s\n", o->record,
					strerror(errno));
				status = 1;
				break;
			}
		}
		if (!show) {
			/* nothing on stdout */
		} else if (o->json) {
			nt_json_print(stdout, view);
		} else {
			if (i)
				fputc('\n', stdout);
			nt_text_print(stdout, view);
		}
		if (fflush(stdout) != 0 || ferror(stdout)) {
			status = 1;	/* the reader went away */
			break;
		}
		tmp = prev;
		prev = cur;
		cur = tmp;
	}
	free(view);
	free(second);
	return status;
}

int main(int argc, char **argv)
{
	struct nt_snapshot *first;
	struct nt_sources src;
	FILE *record = NULL;
	struct options o;
	int status;

	status = parse_options(argc, argv, &o);
	if (status >= 0)
		return status;
	first = malloc(sizeof(*first));
	if (!first || !nt_sources_init(&src)) {
		fputs("npu-top: out of memory\n", stderr);
		free(first);
		return 1;
	}
	nt_snapshot_take(&src, first);
	if (!first->n_dev) {
		fputs("npu-top: no NPU found: no /dev/accel/accel* bound to npu and no emulator "
		      "running (see npu-run --device emu)\n", stderr);
		free(first);
		nt_sources_close(&src);
		return EXIT_NONE;
	}
	if (o.record && !(record = fopen(o.record, "w"))) {
		fprintf(stderr, "npu-top: cannot write %s: %s (--record needs a writable file)\n",
			o.record, strerror(errno));
		free(first);
		nt_sources_close(&src);
		return 1;
	}
	install_signals();
	if (!o.json && !o.batch && !o.once && !o.count_set && !record &&
	    isatty(STDOUT_FILENO)) {
		struct nt_tui_opts t = { .src = &src, .interval = o.interval, .sort = o.sort };

		status = nt_tui_run(&t, first);
	} else {
		status = run_stream(&o, &src, first, record);
	}
	if (record && fclose(record) != 0 && !status) {
		fprintf(stderr, "npu-top: cannot write %s: %s\n", o.record, strerror(errno));
		status = 1;
	}
	free(first);
	nt_sources_close(&src);
	return status;
}
