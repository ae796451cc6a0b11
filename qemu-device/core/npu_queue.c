// SPDX-License-Identifier: MIT
/*
 * Task queues: fetching ring entries, running them, writing completions.
 *
 * HEAD advances only in npu_core_task_complete(), after the completion
 * record is in memory, so a driver that sees HEAD move can reuse the entry
 * and trust the fence.
 */
#include <stdlib.h>
#include <string.h>

#include "npu_core_priv.h"

struct npu_core_task *npu_core_task_fetch(struct npu_core *core, unsigned qi)
{
	struct npu_core_task *task = NULL;
	struct npu_queue *q;
	uint32_t size;
	uint64_t addr;

	if (qi >= NPU_HW_NUM_QUEUES)
		return NULL;
	pthread_mutex_lock(&core->lock);
	q = &core->q[qi];
	if (!(q->ctrl & NPU_Q_CTRL_ENABLE) || q->task_out ||
	    q->state == NPU_Q_STATE_ERROR)
		goto out;
	size = 1u << q->size_log2;
	if (q->tail >= size) {
		/* A doorbell beyond the ring: stop the queue, report it. */
		struct npu_core_log rec = { .event = NPU_EV_QUEUE_ERROR, .queue = qi };

		npu_core_log_locked(core, &rec,
				    "queue %u stopped: doorbell TAIL %u beyond its %u-entry ring",
				    qi, q->tail, size);
		q->state = NPU_Q_STATE_ERROR;
		q->last_status = NPU_TASK_BAD_DESCRIPTOR;
		core->irq_status |= NPU_IRQ_ERROR;
		npu_core_update_irq_locked(core);
		goto out;
	}
	if (q->head == q->tail) {
		q->state = NPU_Q_STATE_IDLE;
		goto out;
	}
	task = q->spare;
	if (task) {
		q->spare = NULL;
		memset(task, 0, offsetof(struct npu_core_task, perf));
	} else {
		task = calloc(1, sizeof(*task));
		if (!task)
			goto out;
	}
	task->core = core;
	task->queue = qi;
	task->generation = core->generation;
	task->ring_index = q->head;
	atomic_init(&task->abort, false);
	task->mmu_on = core->mmu_ctrl & NPU_MMU_CTRL_ENABLE;
	addr = q->base + (uint64_t)q->head * sizeof(struct npu_hw_task);
	task->desc_ok = core->host.mem_read(core->host.opaque, addr, &task->desc,
					   sizeof(task->desc)) == 0;
	if (!task->desc_ok) {
		task->comp.status = NPU_TASK_BUS_ERROR;
		task->comp.fault_addr = addr;
		task->comp.insn_index = UINT32_MAX;
	}
	q->task_out = true;
	q->task = task;
	q->state = NPU_Q_STATE_RUNNING;
out:
	pthread_mutex_unlock(&core->lock);
	return task;
}

void npu_core_task_execute(struct npu_core_task *task)
{
	if (task->desc_ok)
		npu_task_run(task);
}

uint64_t npu_core_task_cycles(const struct npu_core_task *task)
{
	return task->cycles;
}

unsigned npu_core_task_status(const struct npu_core_task *task)
{
	return task->comp.status;
}

bool npu_core_task_replayed(const struct npu_core_task *task)
{
	return task->replayed;
}

/*
 * @task's counters into @dst, and @task's zero again (a spare task's
 * counters are): only the words it can have set where it says which.
 */
static void add_perf(struct npu_perf *dst, struct npu_core_task *task, bool add)
{
	uint64_t *s = (uint64_t *)&task->perf;
	uint64_t *d = (uint64_t *)dst;

	if (task->perf_sparse) {
		_Static_assert(offsetof(struct npu_perf, cycles) == 0,
			       "cycles is word 0, added apart");
		d[0] += add ? s[0] : 0;
		s[0] = 0;
		for (unsigned i = 0; i < task->nperf_words; i++) {
			unsigned w = task->perf_words[i];

			d[w] += add ? s[w] : 0;
			s[w] = 0;
		}
		return;
	}
	for (size_t i = 0; i < NPU_PERF_WORDS; i++) {
		d[i] += add ? s[i] : 0;
		s[i] = 0;
	}
}

void npu_core_task_complete(struct npu_core_task *task)
{
	struct npu_core *core = task->core;
	struct npu_queue *q = &core->q[task->queue];
	struct npu_hw_completion *c = &task->comp;
	uint64_t seq = task->desc.seqno;
	bool fence_ok = true;

	pthread_mutex_lock(&core->lock);
	if (task->generation != core->generation || q->task != task) {
		/* The device was reset after fetch: the task no longer exists. */
		pthread_mutex_unlock(&core->lock);
		free(task);
		return;
	}
	c->cycles = task->cycles;
	if (task->desc_ok && task->desc.fence_addr) {
		/* Everything but the seqno first: the seqno is the "done" flag. */
		c->seqno = 0;
		if (task->desc.fence_addr & 7)
			fence_ok = false;
		else
			fence_ok = core->host.mem_write(core->host.opaque,
							task->desc.fence_addr + 8,
							(uint8_t *)c + 8,
							sizeof(*c) - 8) == 0 &&
				   core->host.mem_write(core->host.opaque,
							task->desc.fence_addr,
							&seq, sizeof(seq)) == 0;
	}
	if (!fence_ok && c->status == NPU_TASK_OK)
		c->status = NPU_TASK_BUS_ERROR;
	npu_core_log_task_locked(task, !fence_ok);
	task->perf.cycles = task->cycles;
	add_perf(&core->perf, task, core->perf_ctrl & NPU_PERF_CTRL_ENABLE);
	if (task->mmu_fault && !(core->fault_status & NPU_FAULT_VALID)) {
		core->fault_status = NPU_FAULT_VALID |
			(task->mmu_fault_write ? NPU_FAULT_WRITE : 0) |
			(uint32_t)task->queue << 16 | task->desc.asid;
		core->fault_addr = c->fault_addr;
		core->irq_status |= NPU_IRQ_MMU_FAULT;
	}
	q->head = (q->head + 1) & ((1u << q->size_log2) - 1);
	q->done_seq = seq;
	q->tasks++;
	q->busy += task->cycles;
	q->last_status = c->status;
	q->task_out = false;
	q->task = NULL;
	q->state = (q->ctrl & NPU_Q_CTRL_ENABLE) ?
		   (q->head == q->tail ? NPU_Q_STATE_IDLE : NPU_Q_STATE_RUNNING) :
		   NPU_Q_STATE_DISABLED;
	if (c->status != NPU_TASK_OK)
		core->irq_status |= NPU_IRQ_ERROR;
	if (!task->desc_ok || (task->desc.flags & NPU_TASK_F_IRQ) ||
	    c->status != NPU_TASK_OK)
		core->irq_status |= NPU_IRQ_QUEUE(task->queue);
	npu_core_update_irq_locked(core);
	if (q->head != q->tail && (q->ctrl & NPU_Q_CTRL_ENABLE) && core->host.kick)
		core->host.kick(core->host.opaque, task->queue);
	if (!q->spare) {
		q->spare = task;
		task = NULL;
	}
	pthread_mutex_unlock(&core->lock);
	free(task);
}

void npu_core_run_pending(struct npu_core *core)
{
	bool progress = true;

	while (progress) {
		progress = false;
		for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
			struct npu_core_task *task = npu_core_task_fetch(core, q);

			if (!task)
				continue;
			npu_core_task_execute(task);
			npu_core_task_complete(task);
			progress = true;
		}
	}
}
