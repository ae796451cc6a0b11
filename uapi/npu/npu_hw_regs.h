/* SPDX-License-Identifier: MIT */
/*
 * M100 BAR0 register map (64 KiB, little endian).
 *
 * All registers are 32 bits wide and must be accessed with aligned 32-bit
 * reads/writes.  64-bit counters are exposed as _LO/_HI pairs: reading _LO
 * latches the full 64-bit value so that the following read of _HI returns
 * the matching upper half (a 64-bit aligned access reads both at once).
 * Reads of undefined offsets return 0 and writes to them are ignored;
 * both are counted in NPU_REG_BAD_ACCESS, as are writes to a queue's
 * BASE/SIZE registers while the queue is enabled.
 */
#ifndef NPU_HW_REGS_H
#define NPU_HW_REGS_H

#include "npu_hw_common.h"
#include "npu_hw_geom.h"

#define NPU_BAR0_SIZE			0x10000

/* PCI identity. Class 0x1200: processing accelerator. */
#define NPU_PCI_VENDOR_ID		0x1b36	/* Red Hat, QEMU-emulated device range */
#define NPU_PCI_DEVICE_ID		0x0110
#define NPU_PCI_CLASS			0x1200
#define NPU_MSIX_VECTORS		5	/* 0..3: queues, 4: error/MMU fault */
#define NPU_MSIX_VEC_ERROR		4

/* ---- Identity and version (read-only) ---- */
#define NPU_REG_ID			0x0000	/* NPU_ID_MAGIC */
#define   NPU_ID_MAGIC			0x4d313030u	/* "M100" */
#define NPU_REG_VERSION			0x0004	/* major << 16 | minor */
#define   NPU_HW_VERSION_MAJOR		1
#define   NPU_HW_VERSION_MINOR		0
#define   NPU_VERSION_MAJOR(v)		((v) >> 16)
#define   NPU_VERSION_MINOR(v)		((v) & 0xffff)
#define NPU_REG_CAPS			0x0008	/* NPU_CAP_* */
#define   NPU_CAP_INT8			NPU_HW_BIT(0)
#define   NPU_CAP_BF16			NPU_HW_BIT(1)
#define   NPU_CAP_FP16			NPU_HW_BIT(2)
#define   NPU_CAP_MMU			NPU_HW_BIT(3)
#define   NPU_CAP_PERF			NPU_HW_BIT(4)
#define   NPU_CAP_TIMING		NPU_HW_BIT(5)	/* cycle-timed completion on */
#define NPU_REG_ISA_VERSION		0x000c	/* NPU_PROG_VERSION_MAJOR << 16 | minor */

/* ---- Geometry (read-only) ---- */
#define NPU_REG_GEOM			0x0010
#define   NPU_GEOM_CLUSTERS(v)		((v) & 0xff)
#define   NPU_GEOM_TPBS(v)		(((v) >> 8) & 0xff)
#define   NPU_GEOM_QUEUES(v)		(((v) >> 16) & 0xff)
#define   NPU_GEOM_DMA_ENGINES(v)	(((v) >> 24) & 0xff)
#define NPU_REG_MESH			0x0014
#define   NPU_MESH_X(v)			((v) & 0xff)
#define   NPU_MESH_Y(v)			(((v) >> 8) & 0xff)
#define   NPU_MESH_CCB_NODE(v)		(((v) >> 16) & 0xff)
#define   NPU_MESH_DDR_NODE(v)		(((v) >> 24) & 0xff)
#define NPU_REG_HBSM_SIZE		0x0018	/* bytes per TPB */
#define NPU_REG_SRAM_SIZE		0x001c	/* CCB SRAM bytes */
#define NPU_REG_CLOCK_MHZ		0x0020
#define NPU_REG_FUSE_MASK		0x0024	/* bit c: cluster c is defective */
#define NPU_REG_TCU_GEOM		0x0028	/* rows | cols << 8 | dot << 16 */
#define NPU_REG_SU_COUNTERS		0x002c	/* counters per TPB */
#define NPU_REG_HBSM_GEOM		0x0030	/* banks | bank_bytes << 8 | ports << 16 */
#define NPU_REG_SRAM_GEOM		0x0034	/* banks | interleave_log2 << 8 */
#define NPU_REG_LINK_BW			0x0038	/* bytes per cycle per direction */
#define NPU_REG_DDR_BW			0x003c	/* bytes per cycle */
#define NPU_REG_CLUSTER_POS(c)		(0x0040 + 4 * (c))	/* x | y << 8, c < 16 */

/* ---- Control ---- */
#define NPU_REG_RESET			0x0100	/* write NPU_RESET_MAGIC: full reset */
#define   NPU_RESET_MAGIC		0x52535421u	/* "RST!" */
#define NPU_REG_STATUS			0x0104	/* NPU_STATUS_* (read-only) */
#define   NPU_STATUS_READY		NPU_HW_BIT(0)
#define   NPU_STATUS_QUEUE_BUSY(q)	NPU_HW_BIT(8 + (q))
#define NPU_REG_BAD_ACCESS		0x0108	/* count of ignored accesses */
#define NPU_REG_SCRATCH			0x010c	/* read/write, for probe tests */

/* ---- Interrupts: bit q = queue q completion, plus the bits below ---- */
#define NPU_REG_IRQ_STATUS		0x0110	/* write 1 to clear */
#define NPU_REG_IRQ_MASK		0x0114	/* 1 = enabled; reset value 0 */
#define NPU_REG_IRQ_RAW			0x0118	/* status before masking */
#define   NPU_IRQ_QUEUE(q)		NPU_HW_BIT(q)
#define   NPU_IRQ_QUEUE_ALL		0xfu
#define   NPU_IRQ_ERROR			NPU_HW_BIT(8)	/* a task ended in error */
#define   NPU_IRQ_MMU_FAULT		NPU_HW_BIT(9)	/* fault registers valid */

/* ---- MMU ---- */
#define NPU_REG_MMU_CTRL		0x0120
#define   NPU_MMU_CTRL_ENABLE		NPU_HW_BIT(0)	/* reset value: enabled */
#define NPU_REG_MMU_INVALIDATE		0x0124	/* write asid, or NPU_MMU_INV_ALL */
#define   NPU_MMU_INV_ALL		0xffffffffu
#define NPU_REG_FAULT_STATUS		0x0128	/* first fault since clear */
#define   NPU_FAULT_VALID		NPU_HW_BIT(31)
#define   NPU_FAULT_WRITE		NPU_HW_BIT(30)
#define   NPU_FAULT_QUEUE(v)		(((v) >> 16) & 0xf)
#define   NPU_FAULT_ASID(v)		((v) & 0xffff)
#define NPU_REG_FAULT_ADDR_LO		0x0130
#define NPU_REG_FAULT_ADDR_HI		0x0134
#define NPU_REG_FAULT_CLEAR		0x0138	/* write 1: clear fault registers */

/* ---- Task queues: NPU_REG_Q(q, reg), q < NPU_HW_NUM_QUEUES ---- */
#define NPU_REG_QUEUE_BASE		0x0200
#define NPU_REG_QUEUE_STRIDE		0x40
#define NPU_REG_Q(q, r)			(NPU_REG_QUEUE_BASE + (q) * NPU_REG_QUEUE_STRIDE + (r))
#define NPU_Q_BASE_LO			0x00	/* ring physical address, 4 KiB aligned */
#define NPU_Q_BASE_HI			0x04
#define NPU_Q_SIZE_LOG2			0x08	/* entries = 1 << n, 1 <= n <= 12 */
#define NPU_Q_HEAD			0x0c	/* read-only: next entry the device reads */
#define NPU_Q_TAIL			0x10	/* doorbell: index after last valid entry */
#define NPU_Q_CTRL			0x14
#define   NPU_Q_CTRL_ENABLE		NPU_HW_BIT(0)
#define   NPU_Q_CTRL_ABORT		NPU_HW_BIT(1)	/* end running task: ABORTED */
#define NPU_Q_STATUS			0x18	/* NPU_Q_STATE_* | last status << 8 */
#define   NPU_Q_STATE(v)		((v) & 0xff)
#define   NPU_Q_LAST_STATUS(v)		(((v) >> 8) & 0xff)
#define NPU_Q_DONE_SEQ_LO		0x20	/* seqno of last completed task */
#define NPU_Q_DONE_SEQ_HI		0x24
#define NPU_Q_TASKS_LO			0x28	/* tasks completed since reset */
#define NPU_Q_TASKS_HI			0x2c
#define NPU_Q_BUSY_LO			0x30	/* simulated cycles spent running */
#define NPU_Q_BUSY_HI			0x34

enum npu_hw_queue_state {
	NPU_Q_STATE_DISABLED = 0,
	NPU_Q_STATE_IDLE = 1,
	NPU_Q_STATE_RUNNING = 2,
	NPU_Q_STATE_ERROR = 3,	/* ring misconfigured: see last status */
};

/* ---- Performance counters (64-bit, _LO at the offset, _HI at +4) ---- */
#define NPU_REG_PERF_CTRL		0x1000
#define   NPU_PERF_CTRL_ENABLE		NPU_HW_BIT(0)	/* reset value: enabled */
#define   NPU_PERF_CTRL_CLEAR		NPU_HW_BIT(1)	/* self-clearing */
#define NPU_REG_PERF_CYCLES		0x1008	/* total simulated cycles */
#define NPU_REG_PERF_CLUSTER_BUSY(c)	(0x1100 + 8 * (c))
#define NPU_REG_PERF_UNIT_BUSY(c, u)	(0x1200 + 8 * ((c) * NPU_PERF_UNITS + (u)))
#define NPU_REG_PERF_HBSM_CONFLICTS(c)	(0x1400 + 8 * (c))
#define NPU_REG_PERF_DMA_BYTES(e)	(0x1500 + 8 * (e))
#define NPU_REG_PERF_GSDU_BYTES		0x1520
/* The work behind the time: operand bytes read and written by every unit
 * (DMA and GSDU included), and the TCU's multiply-accumulates. */
#define NPU_REG_PERF_LOAD_BYTES		0x1528
#define NPU_REG_PERF_STORE_BYTES	0x1530
#define NPU_REG_PERF_MACS_FLOAT		0x1538	/* bf16/fp16 inputs */
#define NPU_REG_PERF_MACS_INT8		0x1540	/* int8/uint8 inputs */
#define NPU_REG_PERF_LINK_BYTES(l)	(0x2000 + 8 * (l))	/* l < NPU_HW_MAX_LINKS */
#define NPU_REG_PERF_LINK_STALLS(l)	(0x2200 + 8 * (l))
#define NPU_REG_PERF_END		0x2400

/* Per-cluster unit counters, summed over the cluster's TPBs. */
enum npu_hw_perf_unit {
	NPU_PERF_UNIT_TCU = 0,
	NPU_PERF_UNIT_CVU = 1,
	NPU_PERF_UNIT_DTDU = 2,
	NPU_PERF_UNIT_CSU = 3,
	NPU_PERF_UNITS = 4,
};

#endif /* NPU_HW_REGS_H */
