// SPDX-License-Identifier: MIT
/*
 * Unit test of the tools' option tables (tools/common/opts.c): values
 * after a space or '=', switches, names spelled out in full, errors as
 * events, positionals in order and after "--", and the help layout.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"

Suite *opts_suite(void);

enum { T_BATCH, T_JSON, T_SAVE, T_HELP };

static const struct tool_opt table[] = {
	{ "batch", 0, "N", "inputs per run\nsecond line", T_BATCH },
	{ "json", 0, NULL, "JSON", T_JSON },
	{ NULL, 'o', "FILE", "write it", T_SAVE },
	{ "help", 'h', NULL, "this help", T_HELP },
};

#define N_OPTS ((unsigned)(sizeof(table) / sizeof(table[0])))

/* Parse @argv (NULL-terminated) and describe each event, one per line. */
static char *trace(const char **args)
{
	static char out[1024];
	char *argv[16];
	int argc = 0;
	struct tool_opts p;
	const struct tool_opt *opt;
	const char *arg;
	enum tool_opts_event ev;

	argv[argc++] = (char *)"tool";
	while (*args)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	out[0] = '\0';
	ck_assert_int_eq(tool_opts_init(&p, table, N_OPTS, argc, argv), 0);
	while ((ev = tool_opts_next(&p, &opt, &arg)) != TOOL_OPTS_END) {
		char line[128], flag[32];

		snprintf(line, sizeof(line), "%d %s %s\n", ev,
			 opt ? tool_opt_flag(opt, flag, sizeof(flag)) : "-", arg ? arg : "-");
		strcat(out, line);
		if (ev != TOOL_OPTS_OPTION && ev != TOOL_OPTS_POSITIONAL)
			break;
	}
	tool_opts_free(&p);
	return out;
}

START_TEST(values_and_switches)
{
	const char *a[] = { "--batch", "4", "--batch=5", "--json", "-o", "f", "-og", "-h", NULL };

	ck_assert_str_eq(trace(a), "1 --batch 4\n1 --batch 5\n1 --json -\n1 -o f\n1 -o g\n"
			 "1 --help -\n");
}
END_TEST

START_TEST(positionals_in_order)
{
	const char *a[] = { "m1", "--json", "m2", "--", "--batch", "-", NULL };

	ck_assert_str_eq(trace(a), "2 - m1\n1 --json -\n2 - m2\n2 - --batch\n2 - -\n");
}
END_TEST

START_TEST(no_abbreviations)
{
	const char *a[] = { "--bat", "4", NULL };
	const char *b[] = { "--js=1", NULL };
	const char *c[] = { "--bat", NULL };

	ck_assert_str_eq(trace(a), "3 - --bat\n");
	ck_assert_str_eq(trace(b), "3 - --js\n");
	ck_assert_str_eq(trace(c), "3 - --bat\n");
}
END_TEST

START_TEST(errors)
{
	const char *unknown[] = { "--frob=2", NULL };
	const char *short_unknown[] = { "-x", NULL };
	const char *needs[] = { "--json", "--batch", NULL };
	const char *needs_short[] = { "-o", NULL };
	const char *no_value[] = { "--json=yes", NULL };

	ck_assert_str_eq(trace(unknown), "3 - --frob\n");
	ck_assert_str_eq(trace(short_unknown), "3 - -x\n");
	ck_assert_str_eq(trace(needs), "1 --json -\n4 --batch -\n");
	ck_assert_str_eq(trace(needs_short), "4 -o -\n");
	ck_assert_str_eq(trace(no_value), "5 --json -\n");
}
END_TEST

START_TEST(usage_layout)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	tool_opts_usage(f, table, N_OPTS, 14);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_str_eq(buf, "  --batch N   inputs per run\n"
			 "              second line\n"
			 "  --json      JSON\n"
			 "  -o FILE     write it\n"
			 "  -h, --help  this help\n");
	free(buf);
}
END_TEST

Suite *opts_suite(void)
{
	Suite *s = suite_create("tools-opts");
	TCase *t = tcase_create("table");

	tcase_add_test(t, values_and_switches);
	tcase_add_test(t, positionals_in_order);
	tcase_add_test(t, no_abbreviations);
	tcase_add_test(t, errors);
	tcase_add_test(t, usage_layout);
	suite_add_tcase(s, t);
	return s;
}
