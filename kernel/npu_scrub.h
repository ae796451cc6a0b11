/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Copyright (c) 2026 The M100 NPU authors */

#ifndef NPU_SCRUB_H
#define NPU_SCRUB_H

#include <linux/types.h>

struct dentry;
struct npu_ctx;
struct npu_device;
struct npu_job;
struct npu_queue;

/* npu_ctx.scrub_flags */
#define NPU_CTX_SCRUB_PENDING	0	/* holds another context's data */
#define NPU_CTX_SCRUB_USED	1	/* a job of this context was written */

/**
 * struct npu_scrub_job - the scrub a job carries (first job of a context)
 * @needed: this job's ring write is preceded by a scrub task, on every
 *	attempt (a reset may have orphaned the previous one).
 * @slot: ring slot of the current scrub attempt.
 * @seqno: its descriptor seqno; 0 once its record has been read.
 * @start_ns: when it was written to the ring.
 * @error: 0, or -EIO when the scrub did not complete OK.
 */
struct npu_scrub_job {
	bool needed;
	u32 slot;
	u64 seqno;
	u64 start_ns;
	int error;
};

int npu_scrub_init(struct npu_device *ndev);
void npu_scrub_debugfs_init(struct npu_device *ndev, struct dentry *root);
void npu_scrub_claim(struct npu_ctx *ctx);
void npu_scrub_release(struct npu_ctx *ctx);
void npu_scrub_write_locked(struct npu_queue *q, struct npu_job *job);
int npu_scrub_poll_locked(struct npu_queue *q, struct npu_job *job);

#endif /* NPU_SCRUB_H */
