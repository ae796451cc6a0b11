// SPDX-License-Identifier: MIT
/* Unit dispatch table, and the SYNC unit (NOP; BARRIER is run by the engine). */
#include "npu_exec.h"

static int sync_validate(struct npu_task *task, struct npu_dinsn *di)
{
	const struct npu_hw_sync_params *p = &di->raw.params.sync;

	(void)task;
	for (unsigned o = 0; o < NPU_OPNDS; o++)
		if (di->used[o])
			return NPU_IE_RESERVED;
	for (unsigned i = 0; i < sizeof(p->reserved) / sizeof(p->reserved[0]); i++)
		if (p->reserved[i])
			return NPU_IE_RESERVED;
	if (di->raw.opcode == NPU_SYNC_NOP && p->barrier_id)
		return NPU_IE_PARAM;
	if (di->raw.opcode == NPU_SYNC_BARRIER) {
		/* A barrier orders whole TPBs; it carries no counters. */
		for (unsigned i = 0; i < NPU_SYNC_WAITS; i++)
			if (di->raw.sync.wait[i].flags)
				return NPU_IE_SYNC;
		for (unsigned i = 0; i < NPU_SYNC_SIGNALS; i++)
			if (di->raw.sync.signal[i].flags)
				return NPU_IE_SYNC;
		if (di->raw.repeat_levels)
			return NPU_IE_PARAM;
	}
	return 0;
}

static int sync_exec(struct npu_iteration *it)
{
	/* The waits and signals around the iteration are the whole task. */
	it->cost->cycles += 1;
	return NPU_TASK_OK;
}

static const struct npu_unit_ops sync_ops = {
	.validate = sync_validate,
	.exec = sync_exec,
};

const struct npu_unit_ops *npu_unit_sync(unsigned opcode)
{
	return opcode == NPU_SYNC_NOP || opcode == NPU_SYNC_BARRIER ?
	       &sync_ops : NULL;
}

const struct npu_unit_ops *npu_unit_lookup(unsigned unit, unsigned opcode)
{
	switch (unit) {
	case NPU_UNIT_TCU: return npu_unit_tcu(opcode);
	case NPU_UNIT_CVU: return npu_unit_cvu(opcode);
	case NPU_UNIT_DTDU: return npu_unit_dtdu(opcode);
	case NPU_UNIT_CSU: return npu_unit_csu(opcode);
	case NPU_UNIT_SYNC: return npu_unit_sync(opcode);
	case NPU_UNIT_DMA: return npu_unit_dma(opcode);
	default: return NULL;
	}
}
