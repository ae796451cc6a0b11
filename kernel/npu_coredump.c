// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Device coredump: on a job timeout, an MMU fault or a device error, the
 * state that explains it (queue and interrupt registers, the job's ring
 * descriptor and completion record, the fault, the context's partition,
 * the head of the command buffer) is captured where it happens, possibly
 * in the interrupt handler, and handed to dev_coredumpv() from a work
 * item: /sys/class/devcoredump/devcd<N>/data.  The format is documented in
 * Documentation/driver.md, "Device coredump".
 *
 * Copyright (c) 2026 The M100 NPU authors
 */

#include <linux/cleanup.h>
#include <linux/devcoredump.h>
#include <linux/highmem.h>
#include <linux/ktime.h>
#include <linux/lockdep.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "npu_coredump.h"
#include "npu_ctx.h"
#include "npu_device.h"
#include "npu_gem.h"
#include "npu_job.h"
#include "npu_queue.h"

#define NPU_COREDUMP_TEXT_SIZE	SZ_8K

/* The captured state; turned into text by the work item. */
struct npu_dump {
	enum npu_coredump_reason reason;
	int error;
	u64 time_ns;
	u32 queue;
	u32 ctx_gid;
	u32 ctx_id;
	pid_t pid;
	u64 seqno;
	u64 hw_seqno;
	u32 slot;
	bool on_ring;
	/* registers */
	u32 dev_status;
	u32 irq_status;
	u32 irq_raw;
	u32 irq_mask;
	u32 fault_status;
	u64 fault_addr;
	u32 q_ctrl;
	u32 q_status;
	u32 q_size_log2;
	u32 q_head;
	u32 q_tail;
	u64 q_base;
	u64 q_done_seq;
	u64 q_tasks;
	u64 q_busy;
	/* the fault latched by the interrupt handler */
	u32 irq_fault_status;
	u64 irq_fault_addr;
	struct npu_hw_task task;
	struct npu_hw_completion comp;
	/* the context */
	u32 nclusters;
	u32 cluster_mask;
	u8 cluster_map[NPU_HW_MAX_CLUSTERS];
	u64 sram_base;
	u64 sram_size;
	/* the command buffer */
	u64 cmd_va;
	u32 cmd_offset;
	u32 cmd_size;
	u32 cmd_len;
	u8 cmd_head[NPU_COREDUMP_CMD_HEAD];
};

static const char * const npu_coredump_reasons[] = {
	[NPU_COREDUMP_TIMEOUT] = "timeout",
	[NPU_COREDUMP_MMU_FAULT] = "mmu_fault",
	[NPU_COREDUMP_DEVICE_ERROR] = "device_error",
};

/* Up to @len bytes of @bo from @offset, through its pinned shmem pages. */
static u32 npu_coredump_read_bo(struct npu_bo *bo, u64 offset, u8 *dst, u32 len)
{
	struct page **pages = READ_ONCE(bo->base.pages);
	u64 size = bo->base.base.size;
	u32 done = 0;

	if (!pages || offset >= size)
		return 0;
	len = min_t(u64, len, size - offset);
	while (done < len) {
		u64 pos = offset + done;
		u32 in_page = offset_in_page(pos);
		u32 n = min_t(u32, len - done, PAGE_SIZE - in_page);
		void *va = kmap_local_page(pages[pos >> PAGE_SHIFT]);

		memcpy(dst + done, va + in_page, n);
		kunmap_local(va);
		done += n;
	}
	return done;
}

static void npu_coredump_regs(struct npu_device *ndev, struct npu_dump *d)
{
	u32 qi = d->queue;

	d->dev_status = npu_rd(ndev, NPU_REG_STATUS);
	d->irq_status = npu_rd(ndev, NPU_REG_IRQ_STATUS);
	d->irq_raw = npu_rd(ndev, NPU_REG_IRQ_RAW);
	d->irq_mask = npu_rd(ndev, NPU_REG_IRQ_MASK);
	d->fault_status = npu_rd(ndev, NPU_REG_FAULT_STATUS);
	d->fault_addr = npu_rd64(ndev, NPU_REG_FAULT_ADDR_LO);
	d->q_ctrl = npu_rd(ndev, NPU_REG_Q(qi, NPU_Q_CTRL));
	d->q_status = npu_rd(ndev, NPU_REG_Q(qi, NPU_Q_STATUS));
	d->q_size_log2 = npu_rd(ndev, NPU_REG_Q(qi, NPU_Q_SIZE_LOG2));
	d->q_head = npu_rd(ndev, NPU_REG_Q(qi, NPU_Q_HEAD));
	d->q_tail = npu_rd(ndev, NPU_REG_Q(qi, NPU_Q_TAIL));
	d->q_base = npu_rd(ndev, NPU_REG_Q(qi, NPU_Q_BASE_LO)) |
		    (u64)npu_rd(ndev, NPU_REG_Q(qi, NPU_Q_BASE_HI)) << 32;
	d->q_done_seq = npu_rd64(ndev, NPU_REG_Q(qi, NPU_Q_DONE_SEQ_LO));
	d->q_tasks = npu_rd64(ndev, NPU_REG_Q(qi, NPU_Q_TASKS_LO));
	d->q_busy = npu_rd64(ndev, NPU_REG_Q(qi, NPU_Q_BUSY_LO));
}

/**
 * npu_coredump_capture - snapshot the device state around a failing job
 * @q: the job's queue.
 * @job: the job, still on @q (not yet signalled).
 * @reason: why.
 * @error: the errno the job ends with.
 *
 * Atomic (GFP_ATOMIC, no sleeping): it runs in the interrupt handler.  The
 * dump is emitted later by npu_device.dump_work; while one waits, further
 * captures are dropped (devcoredump keeps one dump per device anyway).
 *
 * Context: @q->lock held.
 */
void npu_coredump_capture(struct npu_queue *q, struct npu_job *job,
			  enum npu_coredump_reason reason, int error)
{
	struct npu_device *ndev = q->ndev;
	struct npu_ctx *ctx = job->ctx;
	struct npu_dump *d;

	lockdep_assert_held(&q->lock);
	if (!IS_ENABLED(CONFIG_DEV_COREDUMP) || READ_ONCE(ndev->dump_pending))
		return;
	d = kzalloc(sizeof(*d), GFP_ATOMIC);
	if (!d)
		return;
	d->reason = reason;
	d->error = error;
	d->time_ns = ktime_get_ns();
	d->queue = q->index;
	d->ctx_gid = ctx->gid;
	d->ctx_id = ctx->id;
	d->pid = ctx->pid;
	d->seqno = job->base.s_fence->finished.seqno;
	d->hw_seqno = job->hw_seqno;
	d->slot = job->slot;
	d->on_ring = job->hw_fence && job->slot < NPU_RING_ENTRIES;
	npu_coredump_regs(ndev, d);
	d->irq_fault_status = q->fault_status;
	d->irq_fault_addr = q->fault_addr;
	if (d->on_ring) {
		d->task = q->ring[job->slot];
		d->comp = q->comp[job->slot];
	}
	d->nclusters = ctx->nclusters;
	d->cluster_mask = ctx->cluster_mask;
	memcpy(d->cluster_map, ctx->cluster_map, sizeof(d->cluster_map));
	d->sram_base = ctx->sram.start;
	d->sram_size = ctx->sram.size;
	d->cmd_va = job->prog_va;
	d->cmd_offset = job->cmd_offset;
	d->cmd_size = job->prog_size;
	if (job->bo_count)
		d->cmd_len = npu_coredump_read_bo(to_npu_bo(job->bos[0]),
						  job->cmd_offset, d->cmd_head,
						  min_t(u32, job->prog_size,
							NPU_COREDUMP_CMD_HEAD));

	scoped_guard(spinlock_irqsave, &ndev->dump_lock) {
		if (!ndev->dump_pending) {
			ndev->dump_pending = d;
			d = NULL;
		}
	}
	if (!d)
		schedule_work(&ndev->dump_work);
	kfree(d);	/* one was already waiting */
}

static size_t npu_coredump_format(const struct npu_dump *d, char *buf,
				  size_t size)
{
	const struct npu_hw_task *t = &d->task;
	const struct npu_hw_completion *c = &d->comp;
	size_t n = 0;

#define P(...) (n += scnprintf(buf + n, size - n, __VA_ARGS__))
	P("NPU DEVCOREDUMP %u\n", NPU_COREDUMP_VERSION);
	P("driver: %s %u.%u\n", NPU_DRIVER_NAME, NPU_DRIVER_MAJOR,
	  NPU_DRIVER_MINOR);
	P("reason: %s\n", npu_coredump_reasons[d->reason]);
	P("error: %d\n", d->error);
	P("time_ns: %llu\n", d->time_ns);
	P("queue: %u\n", d->queue);
	P("context: %u\n", d->ctx_gid);
	P("context_id: %u\n", d->ctx_id);
	P("pid: %d\n", d->pid);
	P("seqno: %llu\n", d->seqno);
	P("hw_seqno: %llu\n", d->hw_seqno);
	P("slot: %u\n", d->slot);
	P("reg.status: 0x%08x\n", d->dev_status);
	P("reg.irq_status: 0x%08x\n", d->irq_status);
	P("reg.irq_raw: 0x%08x\n", d->irq_raw);
	P("reg.irq_mask: 0x%08x\n", d->irq_mask);
	P("reg.fault_status: 0x%08x\n", d->fault_status);
	P("reg.fault_addr: 0x%llx\n", d->fault_addr);
	P("reg.q.ctrl: 0x%08x\n", d->q_ctrl);
	P("reg.q.status: 0x%08x\n", d->q_status);
	P("reg.q.base: 0x%llx\n", d->q_base);
	P("reg.q.size_log2: %u\n", d->q_size_log2);
	P("reg.q.head: %u\n", d->q_head);
	P("reg.q.tail: %u\n", d->q_tail);
	P("reg.q.done_seq: %llu\n", d->q_done_seq);
	P("reg.q.tasks: %llu\n", d->q_tasks);
	P("reg.q.busy: %llu\n", d->q_busy);
	P("fault.status: 0x%08x\n", d->irq_fault_status);
	P("fault.addr: 0x%llx\n", d->irq_fault_addr);
	P("task.valid: %u\n", d->on_ring);
	P("task.magic: 0x%08x\n", t->magic);
	P("task.flags: 0x%08x\n", t->flags);
	P("task.seqno: %llu\n", t->seqno);
	P("task.fence_addr: 0x%llx\n", t->fence_addr);
	P("task.pt_base: 0x%llx\n", t->pt_base);
	P("task.prog_va: 0x%llx\n", t->prog_va);
	P("task.prog_size: %u\n", t->prog_size);
	P("task.asid: %u\n", t->asid);
	P("task.nclusters: %u\n", t->nclusters);
	P("task.cluster_map:");
	for (u32 i = 0; i < min_t(u32, t->nclusters, NPU_HW_MAX_CLUSTERS); i++)
		P(" %u", t->cluster_map[i]);
	P("\n");
	P("task.timeout_cycles: %llu\n", t->timeout_cycles);
	P("task.sram_base: 0x%x\n", t->sram_base);
	P("task.sram_size: 0x%x\n", t->sram_size);
	P("comp.seqno: %llu\n", c->seqno);
	P("comp.status: %u\n", c->status);
	P("comp.insn_index: 0x%08x\n", c->insn_index);
	P("comp.fault_addr: 0x%llx\n", c->fault_addr);
	P("comp.detail: 0x%08x\n", c->detail);
	P("comp.detail2: 0x%08x\n", c->detail2);
	P("comp.cycles: %llu\n", c->cycles);
	P("ctx.nclusters: %u\n", d->nclusters);
	P("ctx.cluster_mask: 0x%x\n", d->cluster_mask);
	P("ctx.cluster_map:");
	for (u32 i = 0; i < min_t(u32, d->nclusters, NPU_HW_MAX_CLUSTERS); i++)
		P(" %u", d->cluster_map[i]);
	P("\n");
	P("ctx.sram_base: 0x%llx\n", d->sram_base);
	P("ctx.sram_size: 0x%llx\n", d->sram_size);
	P("cmd.va: 0x%llx\n", d->cmd_va);
	P("cmd.offset: %u\n", d->cmd_offset);
	P("cmd.size: %u\n", d->cmd_size);
	P("cmd.head_bytes: %u\n", d->cmd_len);
	for (u32 off = 0; off < d->cmd_len; off += 16) {
		P("cmd.head: %04x:", off);
		for (u32 i = off; i < min(off + 16, d->cmd_len); i++)
			P(" %02x", d->cmd_head[i]);
		P("\n");
	}
	P("end\n");
#undef P
	return n;
}

static void npu_coredump_work(struct work_struct *work)
{
	struct npu_device *ndev = container_of(work, struct npu_device,
					       dump_work);
	struct npu_dump *d;
	size_t len;
	char *buf;

	scoped_guard(spinlock_irqsave, &ndev->dump_lock) {
		d = ndev->dump_pending;
		ndev->dump_pending = NULL;
	}
	if (!d)
		return;
	buf = vmalloc(NPU_COREDUMP_TEXT_SIZE);
	if (buf) {
		len = npu_coredump_format(d, buf, NPU_COREDUMP_TEXT_SIZE);
		drm_info(&ndev->drm, "%s on queue %u (context %u): device state in devcoredump\n",
			 npu_coredump_reasons[d->reason], d->queue, d->ctx_id);
		/* Takes @buf, even when it drops the dump. */
		dev_coredumpv(ndev->drm.dev, buf, len, GFP_KERNEL);
	}
	kfree(d);
}

/**
 * npu_coredump_cancel - wait for the dump work and drop a pending capture
 * @ndev: the device (remove, or its last reference).
 */
void npu_coredump_cancel(struct npu_device *ndev)
{
	cancel_work_sync(&ndev->dump_work);
	scoped_guard(spinlock_irqsave, &ndev->dump_lock) {
		kfree(ndev->dump_pending);
		ndev->dump_pending = NULL;
	}
}

static void npu_coredump_release(struct drm_device *drm, void *res)
{
	npu_coredump_cancel(to_npu_device(drm));
}

/**
 * npu_coredump_init - set up the dump work, cancelled at the DRM release
 * @ndev: the device.
 *
 * Return: 0 or -ENOMEM.
 */
int npu_coredump_init(struct npu_device *ndev)
{
	spin_lock_init(&ndev->dump_lock);
	INIT_WORK(&ndev->dump_work, npu_coredump_work);
	return drmm_add_action_or_reset(&ndev->drm, npu_coredump_release, NULL);
}
