// SPDX-License-Identifier: MIT
/*
 * The tools' option tables on getopt_long (opts.h).  getopt_long keeps
 * its state in globals (optind, optarg, optopt), so one parse runs at a
 * time; the tools parse their command line once, in main.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"

/* getopt_long's code for a long option: above any short option's char. */
#define LONG_BASE 256

int tool_opts_init(struct tool_opts *p, const struct tool_opt *table, unsigned n,
		   int argc, char **argv)
{
	struct option *lo = calloc(n + 1, sizeof(*lo));
	unsigned k = 0, s = 0;

	memset(p, 0, sizeof(*p));
	if (!lo)
		return -1;
	/* '-': non-options come back in order (code 1); ':': a missing value
	 * is ':' rather than '?'. */
	p->shortopts[s++] = '-';
	p->shortopts[s++] = ':';
	for (unsigned i = 0; i < n; i++) {
		if (table[i].id < 0)
			continue;	/* a second help entry for an option listed before */
		if (table[i].name)
			lo[k++] = (struct option){ table[i].name,
						   table[i].metavar ? required_argument : no_argument,
						   NULL, LONG_BASE + (int)i };
		if (table[i].short_name && s + 3 < sizeof(p->shortopts)) {
			p->shortopts[s++] = table[i].short_name;
			if (table[i].metavar)
				p->shortopts[s++] = ':';
		}
	}
	p->table = table;
	p->n = n;
	p->argc = argc;
	p->argv = argv;
	p->longopts = lo;
	opterr = 0;	/* the tools word their own messages */
	optind = 0;	/* glibc: a full re-initialisation */
	return 0;
}

void tool_opts_free(struct tool_opts *p)
{
	free(p->longopts);
	p->longopts = NULL;
}

const char *tool_opt_flag(const struct tool_opt *opt, char *buf, size_t n)
{
	if (opt->name)
		snprintf(buf, n, "--%s", opt->name);
	else
		snprintf(buf, n, "-%c", opt->short_name);
	return buf;
}

static const struct tool_opt *by_short(const struct tool_opts *p, int c)
{
	for (unsigned i = 0; i < p->n; i++)
		if (p->table[i].short_name && p->table[i].short_name == c)
			return &p->table[i];
	return NULL;
}

/* The option text @s as written, up to any '=', for a message. */
static const char *option_text(struct tool_opts *p, const char *s)
{
	size_t len = strcspn(s, "=");

	if (len >= sizeof(p->text))
		len = sizeof(p->text) - 1;
	memcpy(p->text, s, len);
	p->text[len] = '\0';
	return p->text;
}

/* Whether @s ("--name" or "--name=value") spells @name out in full. */
static int spelled_out(const char *s, const char *name)
{
	size_t len = strlen(name);

	return s[0] == '-' && s[1] == '-' && !strncmp(s + 2, name, len) &&
	       (s[2 + len] == '\0' || s[2 + len] == '=');
}

enum tool_opts_event tool_opts_next(struct tool_opts *p, const struct tool_opt **opt,
				    const char **arg)
{
	int at, c, index = -1;

	*opt = NULL;
	*arg = NULL;
	if (optind == 0)
		optind = 1;
	if (p->options_done) {
		if (optind >= p->argc)
			return TOOL_OPTS_END;
		*arg = p->argv[optind++];
		return TOOL_OPTS_POSITIONAL;
	}
	at = optind;
	c = getopt_long(p->argc, p->argv, p->shortopts, p->longopts, &index);
	if (c == -1) {
		/* "--" (or the end): what is left is positional. */
		p->options_done = 1;
		return tool_opts_next(p, opt, arg);
	}
	if (c == 1) {
		*arg = optarg;
		return TOOL_OPTS_POSITIONAL;
	}
	/* An abbreviated long option is unknown, whatever else is wrong with it. */
	if ((c == ':' || c == '?') && optopt >= LONG_BASE &&
	    !spelled_out(p->argv[at], p->table[optopt - LONG_BASE].name)) {
		*arg = option_text(p, p->argv[at]);
		return TOOL_OPTS_UNKNOWN;
	}
	if (c == ':') {
		*opt = optopt >= LONG_BASE ? &p->table[optopt - LONG_BASE] : by_short(p, optopt);
		return *opt ? TOOL_OPTS_NEEDS_VALUE : TOOL_OPTS_UNKNOWN;
	}
	if (c == '?') {
		if (optopt >= LONG_BASE) {
			*opt = &p->table[optopt - LONG_BASE];
			return TOOL_OPTS_NO_VALUE;
		}
		if (optopt > 0) {
			snprintf(p->text, sizeof(p->text), "-%c", optopt);
			*arg = p->text;
		} else {
			*arg = option_text(p, p->argv[at]);
		}
		return TOOL_OPTS_UNKNOWN;
	}
	if (c >= LONG_BASE) {
		*opt = &p->table[c - LONG_BASE];
		/* getopt_long takes unique prefixes; we want names in full, so
		 * a script's typo is an error and a new option breaks nothing. */
		if (!spelled_out(p->argv[at], (*opt)->name)) {
			*opt = NULL;
			*arg = option_text(p, p->argv[at]);
			return TOOL_OPTS_UNKNOWN;
		}
	} else {
		*opt = by_short(p, c);
	}
	*arg = optarg;
	return TOOL_OPTS_OPTION;
}

void tool_opts_usage(FILE *f, const struct tool_opt *table, unsigned n, int col)
{
	for (unsigned i = 0; i < n; i++) {
		const struct tool_opt *o = &table[i];
		char label[96];
		const char *h = o->help;
		int len;

		if (!h)
			continue;
		if (o->name && o->short_name)
			len = snprintf(label, sizeof(label), "-%c, --%s", o->short_name, o->name);
		else if (o->name)
			len = snprintf(label, sizeof(label), "--%s", o->name);
		else
			len = snprintf(label, sizeof(label), "-%c", o->short_name);
		if (o->metavar && len >= 0 && (size_t)len < sizeof(label))
			snprintf(label + len, sizeof(label) - (size_t)len, " %s", o->metavar);
		len = (int)strlen(label);
		fprintf(f, "  %s%*s", label, 2 + len + 2 <= col ? col - 2 - len : 2, "");
		for (;;) {
			size_t line = strcspn(h, "\n");

			fprintf(f, "%.*s\n", (int)line, h);
			if (!h[line])
				break;
			h += line + 1;
			fprintf(f, "%*s", col, "");
		}
	}
}
