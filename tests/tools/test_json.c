// SPDX-License-Identifier: MIT
/*
 * Unit test of the tools' JSON writer (tools/common/json.c): escapes,
 * control characters, invalid UTF-8, nesting and commas in both styles,
 * numbers, and misuse.  Each case writes into a memory stream and
 * compares the exact text.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

Suite *opts_suite(void);	/* test_opts.c */

struct capture {
	char *buf;
	size_t len;
	FILE *f;
	struct json_writer j;
};

static void cap_open(struct capture *c, enum json_style style)
{
	c->buf = NULL;
	c->f = open_memstream(&c->buf, &c->len);
	ck_assert_ptr_nonnull(c->f);
	json_init(&c->j, c->f, style);
}

/* Close the stream and compare what was written with @want. */
static void cap_expect(struct capture *c, const char *want)
{
	ck_assert_int_eq(fclose(c->f), 0);
	ck_assert_str_eq(c->buf, want);
	free(c->buf);
}

/* The literal json_write_string gives for @s. */
static void expect_literal(const char *s, const char *want)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	json_write_string(f, s);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_str_eq(buf, want);
	free(buf);
}

START_TEST(escapes)
{
	expect_literal("plain", "\"plain\"");
	expect_literal("a\"b\\c", "\"a\\\"b\\\\c\"");
	expect_literal("", "\"\"");
	expect_literal("/", "\"/\"");
}
END_TEST

START_TEST(control_characters)
{
	expect_literal("a\nb\tc", "\"a\\nb\\tc\"");
	expect_literal("\x01\x1f\r\x7f", "\"\\u0001\\u001f\\u000d\\u007f\"");
}
END_TEST

START_TEST(valid_utf8_unchanged)
{
	expect_literal("caf\xc3\xa9", "\"caf\xc3\xa9\"");			/* café */
	expect_literal("\xe2\x82\xac", "\"\xe2\x82\xac\"");			/* € */
	expect_literal("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");		/* U+1F600 */
	expect_literal("\xef\xbf\xbf\xf4\x8f\xbf\xbf", "\"\xef\xbf\xbf\xf4\x8f\xbf\xbf\"");
}
END_TEST

START_TEST(invalid_utf8_replaced)
{
	/* Latin-1 é: a lead byte with no continuation. */
	expect_literal("caf\xe9", "\"caf\\ufffd\"");
	/* A stray continuation byte, then text again. */
	expect_literal("a\x80z", "\"a\\ufffdz\"");
	/* Overlong '/' (0xc0 0xaf): both bytes replaced. */
	expect_literal("\xc0\xaf", "\"\\ufffd\\ufffd\"");
	/* Overlong 3-byte form of U+007F. */
	expect_literal("\xe0\x81\xbf", "\"\\ufffd\\ufffd\\ufffd\"");
	/* A UTF-16 surrogate U+D800 encoded as UTF-8. */
	expect_literal("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
	/* Past U+10FFFF. */
	expect_literal("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	/* Truncated at the end of the string: the NUL is not read past. */
	expect_literal("x\xe2\x82", "\"x\\ufffd\\ufffd\"");
	expect_literal("\xff", "\"\\ufffd\"");
}
END_TEST

START_TEST(nesting_compact)
{
	struct capture c;

	cap_open(&c, JSON_COMPACT);
	json_begin_object(&c.j, NULL);
	json_string(&c.j, "name", "x");
	json_begin_array(&c.j, "list");
	json_u64(&c.j, NULL, 1);
	json_begin_object(&c.j, NULL);
	json_end_object(&c.j);
	json_begin_array(&c.j, NULL);
	json_end_array(&c.j);
	json_null(&c.j, NULL);
	json_end_array(&c.j);
	json_bool(&c.j, "ok", true);
	json_string(&c.j, "none", NULL);
	json_end_object(&c.j);
	ck_assert(!c.j.misuse);
	ck_assert_int_eq(c.j.depth, 0);
	cap_expect(&c, "{\"name\": \"x\", \"list\": [1, {}, [], null], \"ok\": true, "
		   "\"none\": null}\n");
}
END_TEST

START_TEST(nesting_pretty)
{
	struct capture c;

	cap_open(&c, JSON_PRETTY);
	json_begin_object(&c.j, NULL);
	json_string(&c.j, "a", "x");
	json_begin_array_inline(&c.j, "shape");
	json_i64(&c.j, NULL, 1);
	json_i64(&c.j, NULL, -3);
	json_end_array(&c.j);
	json_begin_array(&c.j, "rows");
	json_begin_object_inline(&c.j, NULL);
	json_u64(&c.j, "k", 7);
	json_begin_array(&c.j, "in");	/* inside an inline object: one line too */
	json_u64(&c.j, NULL, 8);
	json_end_array(&c.j);
	json_end_object(&c.j);
	json_begin_object(&c.j, NULL);
	json_bool(&c.j, "b", false);
	json_end_object(&c.j);
	json_end_array(&c.j);
	json_begin_object(&c.j, "empty");
	json_end_object(&c.j);
	json_end_object(&c.j);
	ck_assert(!c.j.misuse);
	cap_expect(&c, "{\n"
		   "  \"a\": \"x\",\n"
		   "  \"shape\": [1, -3],\n"
		   "  \"rows\": [\n"
		   "    {\"k\": 7, \"in\": [8]},\n"
		   "    {\n"
		   "      \"b\": false\n"
		   "    }\n"
		   "  ],\n"
		   "  \"empty\": {}\n"
		   "}\n");
}
END_TEST

START_TEST(json_lines)
{
	struct capture c;

	/* Several documents on one writer: one line each. */
	cap_open(&c, JSON_COMPACT);
	for (int i = 0; i < 2; i++) {
		json_begin_object(&c.j, NULL);
		json_i64(&c.j, "i", i);
		json_end_object(&c.j);
	}
	ck_assert(!c.j.misuse);
	cap_expect(&c, "{\"i\": 0}\n{\"i\": 1}\n");
}
END_TEST

START_TEST(keys_escaped)
{
	struct capture c;

	cap_open(&c, JSON_COMPACT);
	json_begin_object(&c.j, NULL);
	json_u64(&c.j, "caf\xc3\xa9 \"q\"\xfe", 1);
	json_end_object(&c.j);
	cap_expect(&c, "{\"caf\xc3\xa9 \\\"q\\\"\\ufffd\": 1}\n");
}
END_TEST

START_TEST(numbers)
{
	struct capture c;

	cap_open(&c, JSON_COMPACT);
	json_begin_array(&c.j, NULL);
	json_u64(&c.j, NULL, UINT64_MAX);
	json_i64(&c.j, NULL, INT64_MIN);
	json_i64(&c.j, NULL, INT64_MAX);
	json_double(&c.j, NULL, NAN, 10);
	json_double(&c.j, NULL, INFINITY, 10);
	json_double(&c.j, NULL, -INFINITY, 10);
	json_fixed(&c.j, NULL, NAN, 2);
	json_double(&c.j, NULL, 0.1, JSON_DOUBLE_EXACT);
	json_double(&c.j, NULL, 1.0 / 3, 10);
	json_fixed(&c.j, NULL, 12.345, 2);
	json_double(&c.j, NULL, 1e300, 10);
	json_double(&c.j, NULL, -2.5e-7, 6);
	json_end_array(&c.j);
	cap_expect(&c, "[18446744073709551615, -9223372036854775808, 9223372036854775807, "
		   "null, null, null, null, 0.10000000000000001, 0.3333333333, 12.35, 1e+300, "
		   "-2.5e-07]\n");
}
END_TEST

START_TEST(double_round_trip)
{
	const double v[] = { 0.1, 1.0 / 3, 6.02214076e23, 5e-324, 1.7976931348623157e308 };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char *buf = NULL;
		size_t len;
		FILE *f = open_memstream(&buf, &len);
		struct json_writer j;

		ck_assert_ptr_nonnull(f);
		json_init(&j, f, JSON_COMPACT);
		json_double(&j, NULL, v[i], JSON_DOUBLE_EXACT);
		ck_assert_int_eq(fclose(f), 0);
		ck_assert(strtod(buf, NULL) == v[i]);
		free(buf);
	}
}
END_TEST

START_TEST(misuse_detected)
{
	struct capture c;

	/* A key in an array, a value without a key in an object, a
	 * mismatched close: none writes anything, each is flagged. */
	cap_open(&c, JSON_COMPACT);
	json_begin_array(&c.j, NULL);
	json_u64(&c.j, "key", 1);
	ck_assert(c.j.misuse);
	c.j.misuse = false;
	json_end_object(&c.j);
	ck_assert(c.j.misuse);
	c.j.misuse = false;
	json_begin_object(&c.j, NULL);
	json_u64(&c.j, NULL, 2);
	ck_assert(c.j.misuse);
	json_end_object(&c.j);
	json_end_array(&c.j);
	json_end_array(&c.j);	/* nothing open */
	cap_expect(&c, "[{}]\n");
}
END_TEST

START_TEST(depth_limit)
{
	struct capture c;

	cap_open(&c, JSON_COMPACT);
	for (int i = 0; i < JSON_MAX_DEPTH; i++)
		json_begin_array(&c.j, NULL);
	ck_assert(!c.j.misuse);
	json_begin_array(&c.j, NULL);
	ck_assert(c.j.misuse);
	for (int i = 0; i < JSON_MAX_DEPTH; i++)
		json_end_array(&c.j);
	ck_assert_int_eq(c.j.depth, 0);
	fclose(c.f);
	ck_assert_uint_eq(strlen(c.buf), 2 * JSON_MAX_DEPTH + 1);
	free(c.buf);
}
END_TEST

static Suite *json_suite(void)
{
	Suite *s = suite_create("tools-json");
	TCase *t = tcase_create("writer");

	tcase_add_test(t, escapes);
	tcase_add_test(t, control_characters);
	tcase_add_test(t, valid_utf8_unchanged);
	tcase_add_test(t, invalid_utf8_replaced);
	tcase_add_test(t, nesting_compact);
	tcase_add_test(t, nesting_pretty);
	tcase_add_test(t, json_lines);
	tcase_add_test(t, keys_escaped);
	tcase_add_test(t, numbers);
	tcase_add_test(t, double_round_trip);
	tcase_add_test(t, misuse_detected);
	tcase_add_test(t, depth_limit);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(json_suite());
	int failed;

	srunner_add_suite(sr, opts_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
