/* SPDX-License-Identifier: MIT */
/*
 * npu-top: tolerant readers for the small text files it watches (sysfs
 * attributes, fdinfo, emulator stat files).  Every function here accepts
 * arbitrary bytes and reports what it could not parse instead of guessing:
 * a monitor must never crash or show invented numbers because a file was
 * truncated mid-write or holds garbage.
 */
#ifndef NPU_TOP_PARSE_H
#define NPU_TOP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest file read; sysfs pages are 4 KiB, fdinfo a few KiB. */
#define NT_FILE_MAX 65536

/*
 * Read at most size-1 bytes of path into buf and NUL-terminate it.
 * Returns the length, or -1 if the file cannot be opened or read.
 */
long nt_read_file(const char *path, char *buf, size_t size);

/*
 * Parse one unsigned number at *s: decimal, or hexadecimal after 0x/0X.
 * Leading blanks are skipped; a sign, no digits or a value above
 * UINT64_MAX fail.  On success *s points past the digits.
 */
bool nt_parse_u64(const char **s, uint64_t *out);

/*
 * Parse s as exactly one number followed only by blanks.
 */
bool nt_parse_u64_only(const char *s, uint64_t *out);

/*
 * Parse a blank-separated list of numbers into out[0..max).  Stops at
 * the first token that is not a number (a truncated or garbled tail);
 * returns how many were stored.
 */
unsigned nt_parse_u64_list(const char *s, uint64_t *out, unsigned max);

/*
 * Parse a DRM fdinfo size "N", "N B", "N KiB", "N MiB", "N GiB" or
 * "N TiB" into bytes.  Fails on an unknown unit or overflow.
 */
bool nt_parse_size(const char *s, uint64_t *bytes);

/* Parse "XxY" (mesh); fails unless both are plain decimal numbers. */
bool nt_parse_dims(const char *s, unsigned *x, unsigned *y);

/*
 * Split buf (modified in place) into lines of "key<sep>value" and call
 * fn for each; the value has surrounding blanks removed.  Lines without
 * sep or with an empty key are skipped.
 */
typedef void (*nt_kv_fn)(const char *key, const char *val, void *arg);
void nt_parse_kv(char *buf, char sep, nt_kv_fn fn, void *arg);

/* Copy src into dst (size n): valid UTF-8 unchanged (never cut inside a
 * character), control characters and invalid bytes as '?'. */
void nt_copy_printable(char *dst, size_t n, const char *src);

#endif /* NPU_TOP_PARSE_H */
