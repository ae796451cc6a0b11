/* SPDX-License-Identifier: MIT */
/*
 * Tracing the cycle model: where each instruction iteration of a task ran
 * in simulated time, and when each NoC link carried its transfers.
 *
 * The task engine decides every iteration's start and duration in one
 * place (account() in npu_rounds.c) and every link booking in
 * npu_noc_route(); with a tracer attached to the task it hands each of
 * them over as it is decided.  Without one it costs a NULL test per
 * iteration and per hop, and recording changes nothing the engine
 * computes: results and cycles are the same traced or not.
 *
 * A host attaches a tracer per task through npu_core_host.tracer (called
 * once when the task starts).  The callbacks run on the thread executing
 * the task, one at a time, in the engine's accounting order (dataflow
 * rounds, not time order): the tracer needs no lock of its own as long
 * as nothing else touches it until the task has completed.
 */
#ifndef NPU_TRACE_H
#define NPU_TRACE_H

#include <stdint.h>

/* Cluster of a span run by a CCB DMA engine (no TPB). */
#define NPU_TRACE_CCB 0xffu

/* One iteration of one instruction on one unit. */
struct npu_trace_span {
	uint64_t start, dur;	/* simulated cycles from the task's start */
	uint64_t iter;		/* iteration of the instruction */
	uint64_t dma_bytes;	/* CCB DMA engine bytes (DMA spans) */
	uint64_t gsdu_bytes;	/* GSDU bytes moved by this iteration */
	uint64_t conflicts;	/* HBSM bank conflicts (count; stalls are in dur) */
	uint32_t insn;		/* instruction index in the program */
	uint8_t unit;		/* enum npu_hw_unit: TCU..CSU, NPU_UNIT_DMA */
	uint8_t opcode;
	uint8_t pcluster;	/* physical cluster, NPU_TRACE_CCB for DMA */
	uint8_t lcluster;	/* logical cluster in the task's partition */
	uint8_t tpb;		/* TPB, or the DMA engine */
};

struct npu_tracer {
	void (*span)(struct npu_tracer *t, const struct npu_trace_span *s);
	/*
	 * Directed mesh link @link (node * 4 + direction) carries @bytes
	 * during [start, start + len) cycles from the task's start.
	 */
	void (*link)(struct npu_tracer *t, unsigned link, uint64_t start,
		     uint64_t len, uint64_t bytes);
};

#endif /* NPU_TRACE_H */
