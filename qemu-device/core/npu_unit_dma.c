// SPDX-License-Identifier: MIT
/*
 * CCB DMA engines: COPY between DDR and the CCB SRAM, and from either into
 * TPB HBSMs through the Data Reorganisation and Broadcast path (an
 * NPU_SPACE_HBSM_REMOTE destination writes every masked TPB).
 *
 * DMA instructions execute in the CCB (it->tpb == NULL): there is no
 * local HBSM, so HBSM can only be a remote destination; results go back
 * through a GSDU.  Checks follow Documentation/hw/isa.md ("DMA"), the
 * cost cycle-model.md.
 */
#include <string.h>

#include "npu_exec.h"
#include "npu_kern.h"

/* Transfers without a DDR endpoint stream at this rate (bytes/cycle). */
#define DMA_SRAM_BYTES_PER_CYCLE 256

static int validate_copy(struct npu_task *task, struct npu_dinsn *di)
{
	const struct npu_hw_dma_params *p = &di->raw.params.dma;
	const struct npu_walk *s = &di->opnd[NPU_OPND_SRC0];
	const struct npu_walk *d = &di->opnd[NPU_OPND_DST];
	struct npu_shape ss, ds;
	uint64_t n;

	(void)task;
	if (!di->used[NPU_OPND_SRC0] || !di->used[NPU_OPND_DST])
		return NPU_IE_SHAPE;
	for (unsigned o = NPU_OPND_SRC1; o <= NPU_OPND_SRC2; o++)
		if (!npu_opnd_slot_clear(di, o))
			return NPU_IE_RESERVED;
	if (!npu_all_zero(p->reserved, sizeof(p->reserved)))
		return NPU_IE_RESERVED;
	if (p->engine >= NPU_HW_NUM_DMA_ENGINES)
		return NPU_IE_PARAM;
	/* The engines read DDR and SRAM only; HBSM data leaves via a GSDU. */
	if (s->space != NPU_SPACE_DDR && s->space != NPU_SPACE_SRAM)
		return NPU_IE_SPACE;
	switch (d->space) {
	case NPU_SPACE_DDR:
	case NPU_SPACE_SRAM:
		break;
	case NPU_SPACE_HBSM_REMOTE:
		if (!d->cluster_mask || !d->tpb_mask)
			return NPU_IE_DEST;
		break;
	default:
		return NPU_IE_SPACE;
	}
	/* A DMA engine moves bytes; it does not convert. */
	if (s->dtype != d->dtype)
		return NPU_IE_DTYPE;
	npu_opnd_shape(di, NPU_OPND_SRC0, &ss);
	npu_opnd_shape(di, NPU_OPND_DST, &ds);
	n = ss.elems;
	if (n != ds.elems || n > NPU_VIEW_MAX_ELEMS)
		return NPU_IE_SHAPE;
	return 0;
}

/*
 * npu_view_load may give a pointer into device memory (a dense SRAM
 * source, or a dense DDR source the host maps); storing it into an
 * overlapping destination of the same space must not read bytes it
 * already wrote: the whole source is read before the destination is
 * written.  DDR to DDR always goes through a copy: two virtual ranges
 * apart may share physical pages.
 */
static bool may_alias(const struct npu_view *src, const struct npu_view *dst)
{
	int64_t slo, shi, dlo, dhi;

	if (src->space == NPU_SPACE_DDR && dst->space == NPU_SPACE_DDR)
		return true;
	if (src->space != NPU_SPACE_SRAM || dst->space != NPU_SPACE_SRAM)
		return false;
	npu_view_span(src, &slo, &shi);
	npu_view_span(dst, &dlo, &dhi);
	return slo < dhi && dlo < shi;
}

/*
 * Cost: the engines stream at the DDR port rate when DDR is involved (and
 * at the same width otherwise).  DDR data crosses the CCB's DDR port, not
 * the mesh; HBSM destinations are written over the broadcast path (the
 * DRB, seed 000: "broadcast weights to TPBs directly via the DRB, which
 * supports up to 256 GB/s"), one copy for every masked TPB.  SRAM
 * endpoints add no transfer.
 */
static void dma_cost(struct npu_iteration *it, const struct npu_view *s,
		     const struct npu_view *d, uint64_t bytes)
{
	struct npu_cost *c = it->cost;
	unsigned rate = (s->space == NPU_SPACE_DDR || d->space == NPU_SPACE_DDR) ?
				NPU_M100_DDR_BYTES_PER_CYCLE :
				DMA_SRAM_BYTES_PER_CYCLE;

	c->cycles += (bytes + rate - 1) / rate;
	c->dma_bytes += bytes;
	if (s->space == NPU_SPACE_DDR)
		npu_cost_path(c, NPU_PATH_DDR_PORT, bytes);
	if (d->space == NPU_SPACE_DDR)
		npu_cost_path(c, NPU_PATH_DDR_PORT, bytes);
	if (d->space == NPU_SPACE_HBSM_REMOTE)
		npu_cost_path(c, NPU_PATH_DRB, bytes);
}

static int exec_copy(struct npu_iteration *it)
{
	struct npu_view s, d;
	const void *data;
	uint64_t n, bytes;
	int st;

	npu_opnd_view(it, NPU_OPND_SRC0, &s);
	npu_opnd_view(it, NPU_OPND_DST, &d);
	n = npu_view_elems(&s);
	/* What validate established; never store past the loaded buffer. */
	if (n != npu_view_elems(&d) || s.esz != d.esz) {
		it->detail = NPU_IE_SHAPE;
		return NPU_TASK_ILLEGAL_INSN;
	}
	bytes = n * s.esz;
	if (npu_view_copy(it, &s, &d, &st)) {
		if (st)
			return st;
		dma_cost(it, &s, &d, bytes);
		return NPU_TASK_OK;
	}
	data = npu_view_load(it, &s, &st);
	if (!data)
		return st;
	if (may_alias(&s, &d)) {
		void *tmp = npu_iter_alloc(it, bytes);

		if (!tmp)
			return NPU_TASK_INTERNAL;
		memcpy(tmp, data, bytes);
		data = tmp;
	}
	st = npu_view_store(it, &d, data);
	if (st)
		return st;
	dma_cost(it, &s, &d, bytes);
	return NPU_TASK_OK;
}

static const struct npu_unit_ops dma_copy = { validate_copy, exec_copy };

const struct npu_unit_ops *npu_unit_dma(unsigned opcode)
{
	return opcode == NPU_DMA_COPY ? &dma_copy : NULL;
}
