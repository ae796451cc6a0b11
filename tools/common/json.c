// SPDX-License-Identifier: MIT
/*
 * The tools' JSON writer (json.h).  Output is produced as the calls come,
 * with no buffering of its own: a printer that dies half-way leaves a
 * truncated document, never a reordered one.
 */
#include <inttypes.h>
#include <math.h>

#include "json.h"
#include "utf8.h"

void json_init(struct json_writer *j, FILE *f, enum json_style style)
{
	*j = (struct json_writer){ .f = f, .style = style };
	j->first[0] = true;
}

/* After a value: a value at the top is a whole document (a JSON Lines
 * line), which ends with a newline. */
static void value_done(struct json_writer *j)
{
	if (j->depth == 0)
		fputc('\n', j->f);
}

/* Whether members at the current depth go on one line. */
static bool on_one_line(const struct json_writer *j)
{
	return j->style == JSON_COMPACT || (j->inline_from && j->depth >= j->inline_from);
}

void json_write_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		size_t n = utf8_seq_len((const char *)p);

		if (!n) {
			/* One replacement per bad byte, then resynchronise. */
			fputs("\\ufffd", f);
			p++;
			continue;
		}
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fwrite(p, 1, n, f);
		p += n;
	}
	fputc('"', f);
}

/*
 * Start a member: the comma and line break before it, then its key.
 * False (and nothing written) if @key does not fit the container.
 */
static bool member(struct json_writer *j, const char *key)
{
	bool in_object = j->depth > 0 && j->object[j->depth];

	if ((key != NULL) != in_object) {
		j->misuse = true;
		return false;
	}
	if (j->depth > 0) {
		if (on_one_line(j))
			fputs(j->first[j->depth] ? "" : ", ", j->f);
		else
			fprintf(j->f, "%s\n%*s", j->first[j->depth] ? "" : ",", 2 * j->depth, "");
	}
	j->first[j->depth] = false;
	if (key) {
		json_write_string(j->f, key);
		fputs(": ", j->f);
	}
	return true;
}

static void begin(struct json_writer *j, const char *key, bool object, bool one_line)
{
	if (j->depth == JSON_MAX_DEPTH) {
		j->misuse = true;
		return;
	}
	if (!member(j, key))
		return;
	fputc(object ? '{' : '[', j->f);
	j->depth++;
	j->first[j->depth] = true;
	j->object[j->depth] = object;
	if (one_line && !j->inline_from)
		j->inline_from = j->depth;
}

static void end(struct json_writer *j, bool object)
{
	if (j->depth == 0 || j->object[j->depth] != object) {
		j->misuse = true;
		return;
	}
	if (!j->first[j->depth] && !on_one_line(j))
		fprintf(j->f, "\n%*s", 2 * (j->depth - 1), "");
	if (j->inline_from == j->depth)
		j->inline_from = 0;
	j->depth--;
	fputc(object ? '}' : ']', j->f);
	value_done(j);
}

void json_begin_object(struct json_writer *j, const char *key)
{
	begin(j, key, true, false);
}

void json_begin_array(struct json_writer *j, const char *key)
{
	begin(j, key, false, false);
}

void json_begin_object_inline(struct json_writer *j, const char *key)
{
	begin(j, key, true, true);
}

void json_begin_array_inline(struct json_writer *j, const char *key)
{
	begin(j, key, false, true);
}

void json_end_object(struct json_writer *j)
{
	end(j, true);
}

void json_end_array(struct json_writer *j)
{
	end(j, false);
}

void json_string(struct json_writer *j, const char *key, const char *s)
{
	if (!member(j, key))
		return;
	if (s)
		json_write_string(j->f, s);
	else
		fputs("null", j->f);
	value_done(j);
}

void json_u64(struct json_writer *j, const char *key, uint64_t v)
{
	if (!member(j, key))
		return;
	fprintf(j->f, "%" PRIu64, v);
	value_done(j);
}

void json_i64(struct json_writer *j, const char *key, int64_t v)
{
	if (!member(j, key))
		return;
	fprintf(j->f, "%" PRId64, v);
	value_done(j);
}

void json_bool(struct json_writer *j, const char *key, bool v)
{
	if (!member(j, key))
		return;
	fputs(v ? "true" : "false", j->f);
	value_done(j);
}

void json_null(struct json_writer *j, const char *key)
{
	if (!member(j, key))
		return;
	fputs("null", j->f);
	value_done(j);
}

void json_double(struct json_writer *j, const char *key, double v, int digits)
{
	if (!member(j, key))
		return;
	if (isfinite(v))
		fprintf(j->f, "%.*g", digits, v);
	else
		fputs("null", j->f);
	value_done(j);
}

void json_fixed(struct json_writer *j, const char *key, double v, int decimals)
{
	if (!member(j, key))
		return;
	if (isfinite(v))
		fprintf(j->f, "%.*f", decimals, v);
	else
		fputs("null", j->f);
	value_done(j);
}
