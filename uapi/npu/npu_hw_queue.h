/* SPDX-License-Identifier: MIT */
/*
 * M100 task queues: ring entries (task descriptors), completion records
 * and per-task status codes.
 *
 * A ring is 1 << NPU_Q_SIZE_LOG2 entries of struct npu_hw_task at a
 * physical address.  The driver fills entries [HEAD, TAIL) and writes TAIL;
 * the device runs them in order, writes each one's completion record and
 * only then advances HEAD past it.
 */
#ifndef NPU_HW_QUEUE_H
#define NPU_HW_QUEUE_H

#include "npu_hw_common.h"
#include "npu_hw_geom.h"

#define NPU_TASK_MAGIC			0x4b534154u	/* "TASK" */
#define NPU_RING_MIN_LOG2		1
#define NPU_RING_MAX_LOG2		12

/* struct npu_hw_task.flags */
#define NPU_TASK_F_IRQ			NPU_HW_BIT(0)	/* interrupt on completion */
#define NPU_TASK_F_KNOWN		(NPU_TASK_F_IRQ)

/*
 * Default and maximum simulated-cycle budgets of one task.  A task that
 * exceeds its budget ends with NPU_TASK_TIMEOUT: the budget, together with
 * deadlock detection, is why a task can never hang the device.
 */
#define NPU_TASK_DEFAULT_TIMEOUT	1000000000ull	/* 1 s at 1 GHz */
#define NPU_TASK_MAX_TIMEOUT		100000000000ull

/**
 * struct npu_hw_task - one ring entry, written by the kernel driver.
 * @magic:	NPU_TASK_MAGIC; anything else ends the task BAD_DESCRIPTOR.
 * @flags:	NPU_TASK_F_*; unknown bits are an error.
 * @seqno:	fence sequence number written back on completion.
 * @fence_addr:	physical address of a struct npu_hw_completion (8-byte
 *		aligned), or 0 for none.
 * @pt_base:	physical address of the context's level-2 page table.
 * @prog_va:	device virtual address of the program (struct npu_hw_prog).
 * @prog_size:	size in bytes of the program, header included.
 * @asid:	address-space id of the context (used for TLB invalidation
 *		and fault reports).
 * @nclusters:	clusters in the partition, 1..16; logical cluster i is
 *		physical cluster @cluster_map[i].
 * @pad0:	must be zero.
 * @cluster_map: logical to physical cluster numbers.  A map entry naming a
 *		fused cluster ends the task NPU_TASK_DEFECTIVE_CLUSTER.
 * @timeout_cycles: simulated-cycle budget; 0 means NPU_TASK_DEFAULT_TIMEOUT.
 * @sram_base:	start of the task's window in CCB SRAM, 4 KiB aligned.
 * @sram_size:	size of that window; SRAM addresses in the program are
 *		offsets into it.
 * @reserved:	must be zero.
 */
struct npu_hw_task {
	__u32 magic;
	__u32 flags;
	__u64 seqno;
	__u64 fence_addr;
	__u64 pt_base;
	__u64 prog_va;
	__u32 prog_size;
	__u16 asid;
	__u8 nclusters;
	__u8 pad0;
	__u8 cluster_map[NPU_HW_MAX_CLUSTERS];
	__u64 timeout_cycles;
	__u32 sram_base;
	__u32 sram_size;
	__u64 reserved[6];
};
NPU_HW_ASSERT_SIZE(struct npu_hw_task, 128);

/**
 * enum npu_hw_task_status - how a task ended (struct npu_hw_completion).
 * @NPU_TASK_OK:		completed.
 * @NPU_TASK_MMU_FAULT:		a DDR access missed the context's mappings or
 *				its permissions; @fault_addr is the VA,
 *				@detail has NPU_FAULT_DETAIL_*.
 * @NPU_TASK_ILLEGAL_INSN:	an instruction was malformed (bad unit/opcode,
 *				reserved bits, walker out of the HBSM ...);
 *				@insn_index names it, @detail is an
 *				enum npu_hw_insn_error.
 * @NPU_TASK_SYNC_DEADLOCK:	no unit could progress and nothing was in
 *				flight; @detail = NPU_DEADLOCK_DETAIL() of
 *				the first blocked wait, @detail2 = expected
 *				value, @insn_index = the waiting instruction.
 * @NPU_TASK_DEFECTIVE_CLUSTER:	the task addressed a fused cluster, or a
 *				logical cluster outside its partition;
 *				@detail = the cluster.
 * @NPU_TASK_TIMEOUT:		the cycle budget ran out.
 * @NPU_TASK_ABORTED:		aborted by NPU_Q_CTRL_ABORT (a device reset
 *				instead drops in-flight tasks unreported).
 * @NPU_TASK_BAD_DESCRIPTOR:	the ring entry or program header is invalid.
 * @NPU_TASK_BUS_ERROR:		a physical access (ring, page table, fence)
 *				failed; @fault_addr is the physical address.
 * @NPU_TASK_INTERNAL:		the emulator ran out of host resources.
 * @NPU_TASK_INDEX_FAULT:	an indexed GSDU transfer met an index at or
 *				past its descriptor's index_limit (data, not
 *				the program, is wrong: e.g. a token id outside
 *				the vocabulary); @insn_index names the
 *				instruction, @fault_addr = the index,
 *				@detail = the limit, @detail2 = the row.
 */
enum npu_hw_task_status {
	NPU_TASK_OK = 0,
	NPU_TASK_MMU_FAULT = 1,
	NPU_TASK_ILLEGAL_INSN = 2,
	NPU_TASK_SYNC_DEADLOCK = 3,
	NPU_TASK_DEFECTIVE_CLUSTER = 4,
	NPU_TASK_TIMEOUT = 5,
	NPU_TASK_ABORTED = 6,
	NPU_TASK_BAD_DESCRIPTOR = 7,
	NPU_TASK_BUS_ERROR = 8,
	NPU_TASK_INTERNAL = 9,
	NPU_TASK_INDEX_FAULT = 10,
	NPU_TASK_STATUS_COUNT
};

/* npu_hw_completion.detail for NPU_TASK_MMU_FAULT */
#define NPU_FAULT_DETAIL_WRITE		NPU_HW_BIT(0)	/* else read */
#define NPU_FAULT_DETAIL_NOT_MAPPED	NPU_HW_BIT(1)
#define NPU_FAULT_DETAIL_PERM		NPU_HW_BIT(2)
#define NPU_FAULT_DETAIL_BAD_PTE	NPU_HW_BIT(3)	/* reserved bits set */

/* npu_hw_completion.detail for NPU_TASK_SYNC_DEADLOCK */
#define NPU_DEADLOCK_DETAIL(cluster, tpb, counter) \
	(((__u32)(cluster) << 16) | ((__u32)(tpb) << 8) | (__u32)(counter))
#define NPU_DEADLOCK_CCB		0xff	/* cluster field: a CCB counter */
#define NPU_DEADLOCK_BARRIER		0xfe	/* counter field: a barrier */

/**
 * struct npu_hw_completion - written by the device at npu_hw_task.fence_addr.
 * @seqno:	the task's seqno; written last, after every other field.
 * @status:	enum npu_hw_task_status.
 * @insn_index:	index of the instruction that failed, or 0xffffffff.
 * @fault_addr:	faulting address (see the status).
 * @detail:	status-specific detail.
 * @detail2:	status-specific detail.
 * @cycles:	simulated cycles the task took.
 * @reserved:	written as zero.
 */
struct npu_hw_completion {
	__u64 seqno;
	__u32 status;
	__u32 insn_index;
	__u64 fault_addr;
	__u32 detail;
	__u32 detail2;
	__u64 cycles;
	__u64 reserved[3];
};
NPU_HW_ASSERT_SIZE(struct npu_hw_completion, 64);

#endif /* NPU_HW_QUEUE_H */
