/* SPDX-License-Identifier: MIT */
/*
 * The tools' command lines, one table each: every option is one
 * struct tool_opt, from which both getopt_long's table and the usage
 * text are made, so which options exist, which take a value and what
 * the help says cannot drift apart.  Adding an option is one table entry
 * plus a case for its id in the tool's handler.
 *
 * Parsing is getopt_long's (--batch 4, --batch=4, -o FILE, -oFILE, "--"
 * ends the options), with three rules of our own kept from the tools'
 * earlier parsers: long options are never abbreviated (--iter is an
 * unknown option, not --iterations), arguments that are not options are
 * returned in order where they stand, and errors come back to the tool
 * as a kind plus the option's text, so each tool words them its way.
 */
#ifndef NPU_TOOLS_OPTS_H
#define NPU_TOOLS_OPTS_H

#include <stdio.h>

struct tool_opt {
	const char *name;	/* long name without "--", or NULL for a short-only option */
	char short_name;	/* 'o' for -o, or 0 */
	const char *metavar;	/* the value's name in the help ("N", "FILE"); NULL: a switch */
	const char *help;	/* one or more lines, '\n' between them; NULL: not listed */
	int id;			/* the tool's own code, passed back by tool_opts_next;
				 * < 0: an extra help entry only (another form of an
				 * option listed before), not parsed */
};

enum tool_opts_event {
	TOOL_OPTS_END,		/* no more arguments */
	TOOL_OPTS_OPTION,	/* *opt, with *arg its value (NULL for a switch) */
	TOOL_OPTS_POSITIONAL,	/* *arg, an argument that is not an option */
	TOOL_OPTS_UNKNOWN,	/* *arg, the unknown option as written, up to any '=' */
	TOOL_OPTS_NEEDS_VALUE,	/* *opt, the last argument, takes a value */
	TOOL_OPTS_NO_VALUE,	/* *opt, a switch, was given "=VALUE" */
};

struct tool_opts {
	const struct tool_opt *table;
	unsigned n;
	int argc;
	char **argv;
	void *longopts;		/* struct option[n + 1], made by tool_opts_init */
	char shortopts[80];
	char text[64];		/* an unknown option's text, for *arg */
	int options_done;	/* after "--": the rest is positional */
};

/* Returns 0, or -1 when out of memory.  Free with tool_opts_free. */
int tool_opts_init(struct tool_opts *p, const struct tool_opt *table, unsigned n,
		   int argc, char **argv);
void tool_opts_free(struct tool_opts *p);

/* The next event; *opt and *arg as each event says. */
enum tool_opts_event tool_opts_next(struct tool_opts *p, const struct tool_opt **opt,
				    const char **arg);

/* "--batch" or "-o": the option as users type it. */
const char *tool_opt_flag(const struct tool_opt *opt, char *buf, size_t n);

/*
 * One line per option (more for a long help): the flag and its value's
 * name, then the help from column @col, or after two spaces when the
 * flag is longer.
 */
void tool_opts_usage(FILE *f, const struct tool_opt *table, unsigned n, int col);

#endif /* NPU_TOOLS_OPTS_H */
