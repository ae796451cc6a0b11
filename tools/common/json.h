/* SPDX-License-Identifier: MIT */
/*
 * The JSON writer npu-run, npu-top and npu-plan share, so the three tools
 * escape strings and format numbers one way.
 *
 * It writes straight to a FILE* and tracks nesting, so commas and
 * indentation come out right whatever order a printer calls it in:
 *
 *	struct json_writer j;
 *
 *	json_init(&j, stdout, JSON_PRETTY);
 *	json_begin_object(&j, NULL);
 *	json_string(&j, "name", "café");
 *	json_begin_array_inline(&j, "shape");
 *	json_i64(&j, NULL, 1);
 *	json_end_array(&j);
 *	json_end_object(&j);		// "}\n": a document ends with a newline
 *
 * Inside an object every value has a key; inside an array (or at the top)
 * the key is NULL.  A call that breaks this, or nests deeper than
 * JSON_MAX_DEPTH, writes nothing and sets json_writer.misuse (a bug in
 * the caller, which the tools' tests check is 0).
 *
 * Strings: valid UTF-8 is written unchanged ("café" stays "café"); '"',
 * '\\', control characters and DEL are escaped; each byte that is not part
 * of a valid UTF-8 sequence (a stray continuation byte, a truncated or
 * overlong sequence, a UTF-16 surrogate, past U+10FFFF) becomes "\ufffd",
 * U+FFFD REPLACEMENT CHARACTER, so names read from files or /proc always
 * give valid JSON.  Doubles that are NaN or infinite become null (JSON has
 * neither); 64-bit integers are written exactly.
 */
#ifndef NPU_TOOLS_JSON_H
#define NPU_TOOLS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

/* Significant digits that make any double read back to the same value. */
#define JSON_DOUBLE_EXACT 17

enum json_style {
	JSON_COMPACT,	/* one line: {"a": 1, "b": [1, 2]} (JSON Lines) */
	JSON_PRETTY,	/* one member per line, indented by two spaces */
};

struct json_writer {
	FILE *f;
	enum json_style style;
	int depth;		/* open containers */
	int inline_from;	/* depth from which containers stay on one line; 0: none */
	bool misuse;		/* a call broke the nesting rules (see above) */
	bool first[JSON_MAX_DEPTH + 1];		/* no member yet at this depth */
	bool object[JSON_MAX_DEPTH + 1];	/* the container at this depth is an object */
};

void json_init(struct json_writer *j, FILE *f, enum json_style style);

/* Containers.  @key: the member's name inside an object, else NULL. */
void json_begin_object(struct json_writer *j, const char *key);
void json_begin_array(struct json_writer *j, const char *key);
/* The same, kept on one line with what it holds even in JSON_PRETTY
 * (a shape, a pair of coordinates, a table row). */
void json_begin_object_inline(struct json_writer *j, const char *key);
void json_begin_array_inline(struct json_writer *j, const char *key);
void json_end_object(struct json_writer *j);
void json_end_array(struct json_writer *j);

/* Values.  json_string(NULL) writes null. */
void json_string(struct json_writer *j, const char *key, const char *s);
void json_u64(struct json_writer *j, const char *key, uint64_t v);
void json_i64(struct json_writer *j, const char *key, int64_t v);
void json_bool(struct json_writer *j, const char *key, bool v);
void json_null(struct json_writer *j, const char *key);
/* @v with @digits significant digits (%g); NaN and +-inf are null. */
void json_double(struct json_writer *j, const char *key, double v, int digits);
/* @v with @decimals digits after the point (%f); NaN and +-inf are null. */
void json_fixed(struct json_writer *j, const char *key, double v, int decimals);

/* A JSON string literal of @s on @f, escaped as above: for a caller that
 * writes its own structure. */
void json_write_string(FILE *f, const char *s);

#endif /* NPU_TOOLS_JSON_H */
