/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Tracepoints of the npu driver: /sys/kernel/tracing/events/npu/.
 *
 * A job is named by its context (the device-wide id "ctx" and the file's id
 * "ctx_id", as CTX_CREATE returned it) and its scheduler fence "seqno" (what
 * SUBMIT returned); "hw_seqno" is the ring descriptor's sequence number of
 * the current attempt.
 *
 * Copyright (c) 2026 The M100 NPU authors
 */

#undef TRACE_SYSTEM
#define TRACE_SYSTEM npu

#if !defined(NPU_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define NPU_TRACE_H

#include <linux/tracepoint.h>

#include "npu_ctx.h"
#include "npu_job.h"
#include "npu_queue.h"

TRACE_EVENT(npu_job_submit,
	    TP_PROTO(const struct npu_job *job),
	    TP_ARGS(job),
	    TP_STRUCT__entry(__field(u32, queue)
			     __field(u32, ctx)
			     __field(u32, ctx_id)
			     __field(u64, seqno)
			     __field(u64, prog_va)
			     __field(u32, prog_size)
			     __field(u32, bo_count)),
	    TP_fast_assign(__entry->queue = job->ctx->queue->index;
			   __entry->ctx = job->ctx->gid;
			   __entry->ctx_id = job->ctx->id;
			   __entry->seqno = job->base.s_fence->finished.seqno;
			   __entry->prog_va = job->prog_va;
			   __entry->prog_size = job->prog_size;
			   __entry->bo_count = job->bo_count;),
	    TP_printk("queue=%u ctx=%u ctx_id=%u seqno=%llu prog_va=0x%llx prog_size=%u bos=%u",
		      __entry->queue, __entry->ctx, __entry->ctx_id,
		      __entry->seqno, __entry->prog_va, __entry->prog_size,
		      __entry->bo_count)
);

TRACE_EVENT(npu_job_run,
	    TP_PROTO(const struct npu_job *job),
	    TP_ARGS(job),
	    TP_STRUCT__entry(__field(u32, queue)
			     __field(u32, ctx)
			     __field(u32, ctx_id)
			     __field(u64, seqno)
			     __field(u64, hw_seqno)
			     __field(u32, slot)),
	    TP_fast_assign(__entry->queue = job->ctx->queue->index;
			   __entry->ctx = job->ctx->gid;
			   __entry->ctx_id = job->ctx->id;
			   __entry->seqno = job->base.s_fence->finished.seqno;
			   __entry->hw_seqno = job->hw_seqno;
			   __entry->slot = job->slot;),
	    TP_printk("queue=%u ctx=%u ctx_id=%u seqno=%llu hw_seqno=%llu slot=%u",
		      __entry->queue, __entry->ctx, __entry->ctx_id,
		      __entry->seqno, __entry->hw_seqno, __entry->slot)
);

TRACE_EVENT(npu_job_done,
	    TP_PROTO(const struct npu_job *job, int error, u64 cycles),
	    TP_ARGS(job, error, cycles),
	    TP_STRUCT__entry(__field(u32, queue)
			     __field(u32, ctx)
			     __field(u32, ctx_id)
			     __field(u64, seqno)
			     __field(u64, hw_seqno)
			     __field(int, error)
			     __field(u64, cycles)),
	    TP_fast_assign(__entry->queue = job->ctx->queue->index;
			   __entry->ctx = job->ctx->gid;
			   __entry->ctx_id = job->ctx->id;
			   __entry->seqno = job->base.s_fence->finished.seqno;
			   __entry->hw_seqno = job->hw_seqno;
			   __entry->error = error;
			   __entry->cycles = cycles;),
	    TP_printk("queue=%u ctx=%u ctx_id=%u seqno=%llu hw_seqno=%llu error=%d cycles=%llu",
		      __entry->queue, __entry->ctx, __entry->ctx_id,
		      __entry->seqno, __entry->hw_seqno, __entry->error,
		      __entry->cycles)
);

TRACE_EVENT(npu_job_timeout,
	    TP_PROTO(const struct npu_job *job, unsigned int timeout_ms),
	    TP_ARGS(job, timeout_ms),
	    TP_STRUCT__entry(__field(u32, queue)
			     __field(u32, ctx)
			     __field(u32, ctx_id)
			     __field(u64, seqno)
			     __field(u64, hw_seqno)
			     __field(u32, timeout_ms)),
	    TP_fast_assign(__entry->queue = job->ctx->queue->index;
			   __entry->ctx = job->ctx->gid;
			   __entry->ctx_id = job->ctx->id;
			   __entry->seqno = job->base.s_fence->finished.seqno;
			   __entry->hw_seqno = job->hw_seqno;
			   __entry->timeout_ms = timeout_ms;),
	    TP_printk("queue=%u ctx=%u ctx_id=%u seqno=%llu hw_seqno=%llu timeout_ms=%u",
		      __entry->queue, __entry->ctx, __entry->ctx_id,
		      __entry->seqno, __entry->hw_seqno, __entry->timeout_ms)
);

TRACE_EVENT(npu_reset,
	    TP_PROTO(int queue, unsigned int attempts, int error),
	    TP_ARGS(queue, attempts, error),
	    TP_STRUCT__entry(__field(int, queue)
			     __field(u32, attempts)
			     __field(int, error)),
	    TP_fast_assign(__entry->queue = queue;
			   __entry->attempts = attempts;
			   __entry->error = error;),
	    TP_printk("queue=%d attempts=%u error=%d",
		      __entry->queue, __entry->attempts, __entry->error)
);

TRACE_EVENT(npu_mmu_fault,
	    TP_PROTO(u32 status, u64 addr),
	    TP_ARGS(status, addr),
	    TP_STRUCT__entry(__field(u32, queue)
			     __field(u32, asid)
			     __field(bool, write)
			     __field(u64, addr)),
	    TP_fast_assign(__entry->queue = NPU_FAULT_QUEUE(status);
			   __entry->asid = NPU_FAULT_ASID(status);
			   __entry->write = !!(status & NPU_FAULT_WRITE);
			   __entry->addr = addr;),
	    TP_printk("queue=%u asid=%u %s addr=0x%llx",
		      __entry->queue, __entry->asid,
		      __entry->write ? "write" : "read", __entry->addr)
);

#endif /* NPU_TRACE_H */

/* An out-of-tree module: define_trace.h finds this file on the -I path. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE npu_trace
#include <trace/define_trace.h>
