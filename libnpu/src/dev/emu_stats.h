/* SPDX-License-Identifier: MIT */
/*
 * The emulator's stats file for monitors (format: uapi/npu/npu_emu_stats.h).
 * One emulator per process publishes (the first opened); the others stay
 * silent, since the file is named by the pid.  $NPU_EMU_STATS=0 turns
 * publishing off.
 */
#ifndef NPU_EMU_STATS_PRIV_H
#define NPU_EMU_STATS_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "npu.h"

struct npu_emu_stats {
	const npu_device_info *info;
	npu_device_counters counters;
	uint64_t jobs;
	unsigned contexts;
	uint32_t context_clusters;	/* physical */
	uint64_t memory;
};

struct npu_emu_publisher {
	char path[256];
	bool active;
	uint64_t last_ns;
};

/* Become the process's publisher if none is (false: stay silent). */
bool npu_emu_stats_claim(struct npu_emu_publisher *p);
/* Is a write due (every 100 ms at most, or @force)? */
bool npu_emu_stats_due(struct npu_emu_publisher *p, bool force);
/* Replace the file atomically; errors are ignored (monitoring is optional). */
void npu_emu_stats_write(struct npu_emu_publisher *p, const struct npu_emu_stats *s);
/* Remove the file and give up the role. */
void npu_emu_stats_release(struct npu_emu_publisher *p);

#endif /* NPU_EMU_STATS_PRIV_H */
