// SPDX-License-Identifier: MIT
/*
 * What the core tells its host's log hook: refused register accesses,
 * stopped queues and failed tasks, each as one line that says what the
 * driver or the program did and why the device refused it, with the
 * fields a host needs for structured tracing (struct npu_core_log).
 *
 * A task's line is made from its descriptor and its completion record
 * alone, so it says exactly what the driver can read back.
 */
#include <stdarg.h>
#include <stdio.h>

#include "npu_core_priv.h"

#define LOG_LINE 256

const char *npu_core_insn_error_str(unsigned err)
{
	static const char *const names[] = {
		[NPU_IE_UNIT] = "unknown unit",
		[NPU_IE_OPCODE] = "unknown opcode for its unit",
		[NPU_IE_RESERVED] = "a reserved field or an unknown flag is set",
		[NPU_IE_DEST] = "bad cluster or TPB destination masks",
		[NPU_IE_WALKER] = "malformed walker (levels, counts or steps)",
		[NPU_IE_RANGE] = "a walker leaves its address space",
		[NPU_IE_DTYPE] = "unsupported combination of dtypes",
		[NPU_IE_SHAPE] = "operand shapes disagree",
		[NPU_IE_PARAM] = "bad parameter value",
		[NPU_IE_SYNC] = "bad counter number or sync flags",
		[NPU_IE_SPACE] = "address space not allowed for this operand",
		[NPU_IE_CHAIN] = "bad GSDU descriptor, or a chain too long",
	};

	if (err < sizeof(names) / sizeof(names[0]) && names[err])
		return names[err];
	return "unknown instruction error";
}

void npu_core_log_locked(struct npu_core *core, struct npu_core_log *rec,
			 const char *fmt, ...)
{
	char line[LOG_LINE];
	va_list ap;

	if (!core->host.log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	rec->msg = line;
	core->host.log(core->host.opaque, rec);
}

/* " (instruction N)", or "" when the failure names none. */
static const char *insn_of(const struct npu_hw_completion *c, char *buf,
			   size_t len)
{
	if (c->insn_index == UINT32_MAX)
		return "";
	snprintf(buf, len, " (instruction %u)", c->insn_index);
	return buf;
}

/* The status-specific part of a failed task's line. */
static void describe(const struct npu_core_task *task, bool fence_failed,
		     char *out, size_t len)
{
	const struct npu_hw_completion *c = &task->comp;
	const struct npu_hw_task *d = &task->desc;
	unsigned long long addr = (unsigned long long)c->fault_addr;
	char in[32];

	switch (c->status) {
	case NPU_TASK_MMU_FAULT:
		snprintf(out, len, "%s of device address 0x%llx in address space %u: %s%s",
			 c->detail & NPU_FAULT_DETAIL_WRITE ? "write" : "read",
			 addr, d->asid,
			 c->detail & NPU_FAULT_DETAIL_BAD_PTE ? "a page-table entry has reserved bits set" :
			 c->detail & NPU_FAULT_DETAIL_PERM ? "the mapping does not allow it" :
			 "not mapped",
			 c->insn_index == UINT32_MAX ? " (loading the program)" :
			 insn_of(c, in, sizeof(in)));
		break;
	case NPU_TASK_ILLEGAL_INSN:
		snprintf(out, len, "instruction %u: %s (error %u)", c->insn_index,
			 npu_core_insn_error_str(c->detail), c->detail);
		break;
	case NPU_TASK_SYNC_DEADLOCK: {
		unsigned cl = c->detail >> 16 & 0xff, tpb = c->detail >> 8 & 0xff;
		unsigned ctr = c->detail & 0xff;

		if (ctr == NPU_DEADLOCK_BARRIER)
			snprintf(out, len, "instruction %u: barrier %u never completes (cluster %u TPB %u waits)",
				 c->insn_index, c->detail2, cl, tpb);
		else if (cl == NPU_DEADLOCK_CCB)
			snprintf(out, len, "instruction %u on DMA engine %u waits for CCB counter %u to reach %u, and nothing can signal it",
				 c->insn_index, tpb, ctr, c->detail2);
		else
			snprintf(out, len, "instruction %u on cluster %u TPB %u waits for counter %u to reach %u, and nothing can signal it",
				 c->insn_index, cl, tpb, ctr, c->detail2);
		break;
	}
	case NPU_TASK_DEFECTIVE_CLUSTER:
		snprintf(out, len, "cluster %u is fused off or outside the task's %u-cluster partition%s",
			 c->detail, d->nclusters, insn_of(c, in, sizeof(in)));
		break;
	case NPU_TASK_TIMEOUT:
		snprintf(out, len, "ran past its budget of %llu cycles",
			 (unsigned long long)(d->timeout_cycles ? d->timeout_cycles :
					      NPU_TASK_DEFAULT_TIMEOUT));
		break;
	case NPU_TASK_ABORTED:
		snprintf(out, len, "stopped by NPU_Q_CTRL_ABORT");
		break;
	case NPU_TASK_BAD_DESCRIPTOR:
		snprintf(out, len, "magic 0x%x, flags 0x%x, %u clusters, page tables at 0x%llx, program at 0x%llx (%u bytes), SRAM window 0x%x+0x%x, budget %llu cycles",
			 d->magic, d->flags, d->nclusters,
			 (unsigned long long)d->pt_base,
			 (unsigned long long)d->prog_va, d->prog_size,
			 d->sram_base, d->sram_size,
			 (unsigned long long)d->timeout_cycles);
		break;
	case NPU_TASK_BUS_ERROR:
		if (!task->desc_ok)
			snprintf(out, len, "ring entry %u at physical address 0x%llx cannot be read",
				 task->ring_index, addr);
		else if (fence_failed)
			snprintf(out, len, "the completion record at 0x%llx cannot be written%s",
				 (unsigned long long)d->fence_addr,
				 d->fence_addr & 7 ? " (not 8-byte aligned)" : "");
		else
			snprintf(out, len, "physical address 0x%llx is not memory%s",
				 addr, insn_of(c, in, sizeof(in)));
		break;
	case NPU_TASK_INTERNAL:
		snprintf(out, len, "the emulator ran out of host memory%s",
			 insn_of(c, in, sizeof(in)));
		break;
	case NPU_TASK_INDEX_FAULT: {
		/* Indices are int32 on the device: 2^31 and up were negative. */
		long long idx = (long long)c->fault_addr;

		if (c->fault_addr >= 1ull << 31 && c->fault_addr < 1ull << 32)
			idx -= 1ll << 32;

		snprintf(out, len, "instruction %u: index %lld at row %u is outside [0, %u)",
			 c->insn_index, idx, c->detail2, c->detail);
		break;
	}
	default:
		snprintf(out, len, "status %u", c->status);
		break;
	}
}

void npu_core_log_task_locked(struct npu_core_task *task, bool fence_failed)
{
	struct npu_core *core = task->core;
	const struct npu_hw_completion *c = &task->comp;
	struct npu_core_log rec = {
		.event = NPU_EV_TASK_ERROR,
		.queue = task->queue,
		.seqno = task->desc.seqno,
		.comp = c,
	};
	char what[LOG_LINE];

	if (!core->host.log || c->status == NPU_TASK_OK)
		return;
	if (c->status == NPU_TASK_ABORTED)
		rec.event = NPU_EV_TASK_ABORTED;
	else if (c->status == NPU_TASK_INTERNAL)
		rec.event = NPU_EV_HOST_ERROR;
	describe(task, fence_failed, what, sizeof(what));
	npu_core_log_locked(core, &rec, "queue %u, task %llu: %s: %s", task->queue,
			    (unsigned long long)task->desc.seqno,
			    npu_core_status_str(c->status), what);
}
