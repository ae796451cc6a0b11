/* SPDX-License-Identifier: MIT */
/*
 * Compiler debug output, chosen by the environment:
 *
 *   NPU_DEBUG=ir,rewrites,fuse,tiles,mem    (or "all")
 *
 * prints to stderr the graph after each pass (ir), which rewrites fired
 * (rewrites), the fusion decisions (fuse), the tile plan of every work
 * item (tiles) and the scratch memory plan (mem).  The variable is read
 * once per process; with it unset a check costs one load and a branch.
 */
#ifndef NPU_DEBUG_H
#define NPU_DEBUG_H

#include <stdbool.h>
#include <stdio.h>

enum npu_debug_topic {
	NPU_DEBUG_IR = 1u << 0,
	NPU_DEBUG_REWRITES = 1u << 1,
	NPU_DEBUG_FUSE = 1u << 2,
	NPU_DEBUG_TILES = 1u << 3,
	NPU_DEBUG_MEM = 1u << 4,
};

/* The topics NPU_DEBUG selects (0 when unset). */
unsigned npu_debug_topics(void);

static inline bool npu_debug_on(enum npu_debug_topic t)
{
	return (npu_debug_topics() & t) != 0;
}

/* One line on stderr, "npu <topic>: ...", when topic @t is on. */
void npu_debug(enum npu_debug_topic t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Parse a topic list as NPU_DEBUG has it; unknown words are reported. */
unsigned npu_debug_parse(const char *spec, FILE *warn);

#endif /* NPU_DEBUG_H */
