/* SPDX-License-Identifier: MIT */
/*
 * The M100 device core: a plain C library with no QEMU dependency.
 *
 * It implements the BAR0 registers, the task queues, the device MMU and
 * the execution of programs with real results, plus a cycle model.  The
 * host (the QEMU PCI shell, or libnpu's in-process emulator backend)
 * supplies physical memory access and interrupt delivery.
 *
 * Threading: MMIO calls, npu_core_task_fetch() and npu_core_task_complete()
 * must be serialised by the host (QEMU: under the BQL).  Different tasks may
 * run npu_core_task_execute() concurrently on worker threads, alongside
 * MMIO calls.
 */
#ifndef NPU_CORE_H
#define NPU_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npu/npu_hw.h"
#include "npu_trace.h"

struct npu_core;
struct npu_core_task;

/*
 * What the core reports through npu_core_host.log.  Guest errors are what
 * a driver or a program did wrong and the device refused or failed on
 * (QEMU reports them under LOG_GUEST_ERROR); the others are not.
 */
enum npu_core_event {
	/* Guest error: a register access refused, counted in
	 * NPU_REG_BAD_ACCESS (offset, size, write, value). */
	NPU_EV_BAD_ACCESS,
	/* Guest error: a queue stopped in NPU_Q_STATE_ERROR (queue). */
	NPU_EV_QUEUE_ERROR,
	/* Guest error: a task ended with an error status (queue, seqno, comp). */
	NPU_EV_TASK_ERROR,
	/* A task ended NPU_TASK_ABORTED, as the driver asked (queue, seqno, comp). */
	NPU_EV_TASK_ABORTED,
	/* The host could not give a task what it needed: NPU_TASK_INTERNAL
	 * (queue, seqno, comp). */
	NPU_EV_HOST_ERROR,
};

/* One report; fields the event does not name are zero. */
struct npu_core_log {
	enum npu_core_event event;
	const char *msg;		/* one line, no newline, says what and why */
	uint32_t offset;		/* BAR0 offset of the access */
	uint64_t value;			/* the value written */
	unsigned size;			/* bytes of the access */
	bool write;
	unsigned queue;
	uint64_t seqno;			/* the task descriptor's */
	const struct npu_hw_completion *comp;	/* the record as written */
};

/* Instance parameters; npu_core_config_default() gives the M100. */
struct npu_core_config {
	unsigned clusters;		/* 1..NPU_HW_MAX_CLUSTERS */
	unsigned tpbs_per_cluster;	/* 1..NPU_HW_MAX_TPBS_PER_CLUSTER */
	unsigned mesh_x, mesh_y;	/* clusters + 2 <= mesh_x * mesh_y <= 16 */
	uint32_t defect_mask;		/* fused clusters */
	unsigned clock_mhz;		/* 1..100000 */
	uint32_t hbsm_size;		/* per TPB: 64 KiB..2 MiB, power of two */
	uint32_t sram_size;		/* 1 MiB..32 MiB, multiple of 4 KiB banks */
	unsigned threads;		/* execution threads per task, 0 = auto */
	bool timing;			/* reported in NPU_CAP_TIMING only */
};

struct npu_core_host {
	/* DDR access by physical address; return 0, or -1 if unbacked. */
	int (*mem_read)(void *opaque, uint64_t pa, void *buf, size_t len);
	int (*mem_write)(void *opaque, uint64_t pa, const void *buf, size_t len);
	/* The masked interrupt status changed (level: 0 = deasserted). */
	void (*irq)(void *opaque, uint32_t pending);
	/* Queue @queue has new work: call npu_core_task_fetch() soon, but not
	 * from inside the MMIO callback. May be NULL (host polls). */
	void (*kick)(void *opaque, unsigned queue);
	/*
	 * Optional (may be NULL): bracket the mem_read/mem_write calls of
	 * one instruction iteration or of a round of them, made from one
	 * thread with no other callback in between, so a host can take its
	 * memory lock once per bracket instead of once per access.  Brackets
	 * never nest; several threads may each be inside one at once.
	 */
	void (*mem_begin)(void *opaque);
	void (*mem_end)(void *opaque);
	/*
	 * Optional (may be NULL): a host pointer to the @len bytes of DDR at
	 * physical address @pa, one backed range, which the core then reads
	 * (and, if @write, writes) in place instead of calling mem_read or
	 * mem_write: a view or a descriptor's bytes move with one memcpy, or
	 * none, rather than through a callback per row.  The pointer is
	 * valid until the end of the mem_begin/mem_end bracket it was
	 * obtained in.  NULL when the host cannot give one (outside a
	 * bracket, a range not in one piece of host memory, or never): the
	 * core then copies through mem_read/mem_write, which also reports
	 * any bus error, so NULL is never an error in itself.  For a read
	 * the core may ask for the whole pages around the bytes it needs,
	 * and read other bytes of a range it got through the same pointer
	 * until the bracket ends; it asks again for every write, so a host
	 * learns every range written.
	 */
	void *(*mem_map)(void *opaque, uint64_t pa, size_t len, bool write);
	/*
	 * Optional (may be NULL): a version of the @len bytes of DDR at
	 * physical address @pa, one backed range, asked inside a bracket:
	 * nonzero, and returned again for the range only while none of its
	 * bytes has changed since; 0 when the host cannot tell.  A program
	 * the queue keeps decoded whose bytes still have the version they
	 * had when it was last read runs without reading them again.  A host
	 * that cannot see every write to a range (a guest's memory, which
	 * the guest CPU writes at will) returns 0 for it.
	 */
	uint64_t (*mem_version)(void *opaque, uint64_t pa, size_t len);
	/*
	 * Optional (may be NULL): the tracer for the task about to run from
	 * @queue whose descriptor has @seqno, or NULL not to trace it
	 * (npu_trace.h).  Called on the executing thread as the task starts.
	 */
	struct npu_tracer *(*tracer)(void *opaque, unsigned queue, uint64_t seqno);
	/*
	 * Optional: a guest error or another event worth a log line
	 * (struct npu_core_log; @rec and its strings live for the call only).
	 * Called from MMIO calls and npu_core_task_fetch()/_complete() with
	 * the core's register lock held: it must not call into the core.
	 */
	void (*log)(void *opaque, const struct npu_core_log *rec);
	/*
	 * Optional: the device was reset (NPU_REG_RESET, npu_core_reset() or
	 * npu_core_power_loss()), after the core reset its own state, with
	 * no lock held.  Every task out is orphaned: the host stops waiting
	 * for it (npu_core_task_complete() only frees it) and drops whatever
	 * it keeps for the device's state (timers, pending interrupts).
	 */
	void (*reset)(void *opaque);
	void *opaque;
};

void npu_core_config_default(struct npu_core_config *cfg);
/* 0 if valid, else -1 with a message naming the bad parameter in err. */
int npu_core_config_check(const struct npu_core_config *cfg, char *err,
			  size_t errlen);

struct npu_core *npu_core_create(const struct npu_core_config *cfg,
				 const struct npu_core_host *host, char *err,
				 size_t errlen);
void npu_core_destroy(struct npu_core *core);

uint32_t npu_core_mmio_read(struct npu_core *core, uint32_t offset);
/*
 * @n consecutive registers from @offset, as @n reads in a row would give
 * them but under one acquisition of the core's lock: a 64-bit counter's
 * _LO and _HI read in one block are of the same value.  For a host that
 * reads many counters at once (the in-process backend's counters).
 */
void npu_core_mmio_read_block(struct npu_core *core, uint32_t offset,
			      uint32_t *vals, unsigned n);
void npu_core_mmio_write(struct npu_core *core, uint32_t offset, uint32_t value);
/* An access of @size bytes at @offset the host bus could not pass on as
 * aligned 4-byte accesses (e.g. a 1- or 2-byte access): counted in
 * NPU_REG_BAD_ACCESS and logged (@value: what a write carried). */
void npu_core_mmio_bad_access(struct npu_core *core, uint32_t offset,
			      unsigned size, bool write, uint64_t value);
/* Power-on reset; same as writing NPU_RESET_MAGIC to NPU_REG_RESET.
 * Calls the host's reset hook. */
void npu_core_reset(struct npu_core *core);
/*
 * Power loss (PCI D3hot): a reset (the host's reset hook is called), and
 * HBSM and SRAM lose their contents (they read as zeros afterwards).  A
 * task still executing is asked to stop as by a reset; the host lets it
 * finish before calling this, or the task may write the memories again
 * after they were cleared.
 */
void npu_core_power_loss(struct npu_core *core);

/*
 * Task lifecycle, one task at a time per queue:
 *  fetch    - host context: reads the next ring entry of @queue; NULL when
 *             the queue is idle, disabled, or already has a task out.
 *  execute  - any thread: runs the task (validation, compute, cycle model).
 *  complete - host context: writes the completion record, advances HEAD,
 *             updates counters and interrupts, frees the task.  A task whose
 *             queue was reset after fetch completes silently.
 */
struct npu_core_task *npu_core_task_fetch(struct npu_core *core, unsigned queue);
void npu_core_task_execute(struct npu_core_task *task);
uint64_t npu_core_task_cycles(const struct npu_core_task *task);
unsigned npu_core_task_status(const struct npu_core_task *task);
/* Whether the task ran from its program's record of an earlier run, its
 * cycle model skipped (costs checked; see npu_core_debug_replays). */
bool npu_core_task_replayed(const struct npu_core_task *task);
void npu_core_task_complete(struct npu_core_task *task);

/* Run every queue until idle, synchronously (in-process backend, tests). */
void npu_core_run_pending(struct npu_core *core);

/*
 * Debug backdoor into device memories (tests, tracing tools): the HBSM of
 * physical cluster @cluster, TPB @tpb, or the CCB SRAM.  NULL if out of
 * range.  Not synchronised with running tasks.
 */
uint8_t *npu_core_debug_hbsm(struct npu_core *core, unsigned cluster,
			     unsigned tpb, size_t *size);
uint8_t *npu_core_debug_sram(struct npu_core *core, size_t *size);
/*
 * Tasks that ran from their program's record of an earlier run (costs
 * checked, cycle model skipped), and of those, how many diverged from it
 * and caught up through the full cycle model.  Tests and benchmarks.
 */
void npu_core_debug_replays(struct npu_core *core, uint64_t *replays,
			    uint64_t *divergences);

/* Human-readable name of an enum npu_hw_task_status. */
const char *npu_core_status_str(unsigned status);
/* Human-readable name of an enum npu_hw_insn_error. */
const char *npu_core_insn_error_str(unsigned err);

#endif /* NPU_CORE_H */
