/* SPDX-License-Identifier: MIT */
/* UTF-8 validation for the tools: names from files and /proc are bytes. */
#ifndef NPU_TOOLS_UTF8_H
#define NPU_TOOLS_UTF8_H

#include <stddef.h>

/*
 * Length (1 to 4) of the valid UTF-8 sequence at @s, or 0 if the byte at
 * @s does not start one: a stray continuation byte, a truncated or
 * overlong sequence, a UTF-16 surrogate or a code point past U+10FFFF.
 * @s is NUL-terminated; a NUL ends a sequence early, and is never read past.
 */
size_t utf8_seq_len(const char *s);

#endif /* NPU_TOOLS_UTF8_H */
