// SPDX-License-Identifier: MIT
/*
 * CCB DMA engines: COPY between DDR, the task's CCB SRAM window and TPB
 * HBSMs (NPU_SPACE_HBSM_REMOTE: a source names one TPB, a destination may
 * name many, which is how the DRB broadcasts weights).
 *
 * DMA instructions execute in the CCB (ctx->tpb == NULL), so there is no
 * local HBSM.  Semantics, check order and error codes follow
 * Documentation/hw/isa.md ("DMA"); the cost follows
 * Documentation/hw/cycle-model.md.
 */
#include <string.h>

#include "npu_exec.h"
#include "npu_kern.h"

/* Per-iteration operand limit, as in the engine's walker checks. */
#define DMA_MAX_ELEMS		(1ull << 24)
#define SRAM_BANKS		4
#define SRAM_BANK_BW		64	/* bytes per cycle per bank */
#define VEC_BW			NPU_M100_DTDU_BYTES_PER_CYCLE

static uint64_t opnd_elems(const struct npu_dinsn *di, unsigned o)
{
	const struct npu_walk *w = &di->opnd[o];
	uint64_t n = 1;

	for (unsigned l = 0; l < w->nlevels - di->nrep; l++) {
		if (n > UINT64_MAX / w->count[l])
			return UINT64_MAX;
		n *= w->count[l];
	}
	return n;
}

static bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static bool dma_space(unsigned space)
{
	return space == NPU_SPACE_DDR || space == NPU_SPACE_SRAM ||
	       space == NPU_SPACE_HBSM_REMOTE;
}

static bool one_bit(unsigned m)
{
	return m && !(m & (m - 1));
}

static int validate_copy(struct npu_job *job, struct npu_dinsn *di)
{
	const struct npu_hw_dma_params *p = &di->raw.params.dma;
	const struct npu_walk *s = &di->opnd[NPU_OPND_SRC0];
	const struct npu_walk *d = &di->opnd[NPU_OPND_DST];
	uint64_t n;

	(void)job;
	if (!all_zero(p->reserved, sizeof(p->reserved)))
		return NPU_IE_RESERVED;
	/* isa.md check 7, slots in order */
	if (!di->used[NPU_OPND_SRC0] || !dma_space(s->space) ||
	    di->used[NPU_OPND_SRC1] || di->used[NPU_OPND_SRC2] ||
	    !di->used[NPU_OPND_DST] || !dma_space(d->space))
		return NPU_IE_SPACE;
	/* check 8: a remote source reads exactly one TPB */
	if (s->space == NPU_SPACE_HBSM_REMOTE &&
	    (!one_bit(s->cluster_mask) || !one_bit(s->tpb_mask)))
		return NPU_IE_DEST;
	if (d->space == NPU_SPACE_HBSM_REMOTE && (!d->cluster_mask || !d->tpb_mask))
		return NPU_IE_DEST;
	/* A DMA engine moves bytes; it does not convert. */
	if (s->dtype != d->dtype)
		return NPU_IE_DTYPE;
	if (p->engine >= NPU_HW_NUM_DMA_ENGINES)
		return NPU_IE_PARAM;
	n = opnd_elems(di, NPU_OPND_SRC0);
	if (n != opnd_elems(di, NPU_OPND_DST) || n > DMA_MAX_ELEMS)
		return NPU_IE_SHAPE;
	return 0;
}

/* Byte range a view touches; HBSM/SRAM offsets are far inside int64. */
static void view_span(const struct npu_view *v, int64_t *lo, int64_t *hi)
{
	int64_t mn = (int64_t)v->base, mx = (int64_t)v->base;

	for (unsigned l = 0; l < v->ndims; l++) {
		int64_t last = v->strides[l] * (int64_t)(v->dims[l] - 1);

		if (last < 0)
			mn += last;
		else
			mx += last;
	}
	*lo = mn;
	*hi = mx + (int64_t)v->esz;
}

/* The one TPB a remote source names (validated single bits). */
static unsigned low_bit(unsigned m)
{
	return (unsigned)__builtin_ctz(m | 0x10000);
}

/*
 * A dense SRAM or HBSM source can come back from npu_view_load as a
 * pointer into device memory (DDR always lands in scratch); storing it
 * into an overlapping destination in the same memory must not read bytes
 * it already wrote.
 */
static bool may_alias(const struct npu_view *src, const struct npu_view *dst)
{
	int64_t slo, shi, dlo, dhi;

	if (src->space == NPU_SPACE_SRAM) {
		if (dst->space != NPU_SPACE_SRAM)
			return false;
	} else if (src->space == NPU_SPACE_HBSM_REMOTE) {
		if (dst->space != NPU_SPACE_HBSM_REMOTE ||
		    !(dst->cluster_mask & (1u << low_bit(src->cluster_mask))) ||
		    !(dst->tpb_mask & (1u << low_bit(src->tpb_mask))))
			return false;
	} else {
		return false;
	}
	view_span(src, &slo, &shi);
	view_span(dst, &dlo, &dhi);
	return slo < dhi && dlo < shi;
}

/*
 * Bytes of an SRAM view per bank, bank = (window base + offset) >> 12 & 3.
 * The window base is 4 KiB aligned, so it only rotates the banks and the
 * busiest bank's load is the same computed from offsets alone.
 */
static void sram_banks_add(uint64_t bank[SRAM_BANKS], const struct npu_view *v)
{
	uint32_t idx[NPU_TWU_MAX_LEVELS] = { 0 };
	bool contig = v->ndims && v->strides[0] == (int64_t)v->esz;
	uint64_t run = contig ? (uint64_t)v->dims[0] * v->esz : v->esz;
	unsigned first = contig ? 1 : 0;

	for (;;) {
		int64_t a = (int64_t)v->base;
		uint64_t addr, len = run;
		unsigned l;

		for (l = first; l < v->ndims; l++)
			a += v->strides[l] * (int64_t)idx[l];
		for (addr = (uint64_t)a; len;) {
			uint64_t n = ((addr | 4095) + 1) - addr;

			if (n > len)
				n = len;
			bank[(addr >> 12) & (SRAM_BANKS - 1)] += n;
			addr += n;
			len -= n;
		}
		for (l = first; l < v->ndims; l++) {
			if (++idx[l] < v->dims[l])
				break;
			idx[l] = 0;
		}
		if (l == v->ndims)
			return;
	}
}

/* Mesh node of a non-remote endpoint. */
static unsigned end_node(struct npu_job *job, unsigned space)
{
	return space == NPU_SPACE_DDR ? npu_job_ddr_node(job) :
					npu_job_ccb_node(job);
}

/*
 * Cost (cycle-model.md, DMA): the transfer time of the iteration's SRC0
 * bytes, as long as its slowest resource.  DDR-to-SRAM, SRAM-to-DDR and
 * SRAM-to-SRAM copies use the CCB's direct DDR channel and no mesh link;
 * HBSM endpoints are their clusters' nodes, reached over the mesh (the
 * engine routes the recorded transfers and adds link time and hops).  The
 * DDR port carries bytes read plus written; the SRAM is as slow as its
 * busiest bank.  A transfer with no resource at all (HBSM to HBSM inside
 * one cluster) streams at VEC_BW.
 */
static void dma_cost(struct npu_exec_ctx *ctx, const struct npu_view *s,
		     const struct npu_view *d, uint64_t bytes)
{
	struct npu_cost *c = ctx->cost;
	struct npu_job *job = ctx->job;
	uint64_t t = 0, ddr_bytes = 0, bank[SRAM_BANKS] = { 0 };
	bool resource = false;
	unsigned src_node;

	c->dma_bytes += bytes;
	src_node = s->space == NPU_SPACE_HBSM_REMOTE ?
			   npu_job_cluster_node(job, low_bit(s->cluster_mask)) :
			   end_node(job, s->space);
	if (d->space == NPU_SPACE_HBSM_REMOTE) {
		unsigned ncl = npu_job_nclusters(job);

		for (unsigned cl = 0; cl < ncl; cl++) {
			unsigned n;

			if (!(d->cluster_mask & (1u << cl)))
				continue;
			n = npu_job_cluster_node(job, cl);
			if (n != src_node) {
				npu_cost_xfer(c, src_node, n, bytes);
				resource = true;
			}
		}
	} else if (s->space == NPU_SPACE_HBSM_REMOTE) {
		npu_cost_xfer(c, src_node, end_node(job, d->space), bytes);
		resource = true;
	}
	if (s->space == NPU_SPACE_DDR)
		ddr_bytes += bytes;
	if (d->space == NPU_SPACE_DDR)
		ddr_bytes += bytes;
	if (ddr_bytes) {
		t = (ddr_bytes + NPU_M100_DDR_BYTES_PER_CYCLE - 1) /
		    NPU_M100_DDR_BYTES_PER_CYCLE;
		resource = true;
	}
	if (s->space == NPU_SPACE_SRAM || d->space == NPU_SPACE_SRAM) {
		if (s->space == NPU_SPACE_SRAM)
			sram_banks_add(bank, s);
		if (d->space == NPU_SPACE_SRAM)
			sram_banks_add(bank, d);
		for (unsigned b = 0; b < SRAM_BANKS; b++) {
			uint64_t tb = (bank[b] + SRAM_BANK_BW - 1) / SRAM_BANK_BW;

			t = tb > t ? tb : t;
		}
		resource = true;
	}
	if (!resource)
		t = (bytes + VEC_BW - 1) / VEC_BW;
	c->cycles += t;
}

static int exec_copy(struct npu_exec_ctx *ctx)
{
	struct npu_view s, d;
	const void *data;
	uint64_t n, bytes;
	int st;

	npu_opnd_view(ctx, NPU_OPND_SRC0, &s);
	npu_opnd_view(ctx, NPU_OPND_DST, &d);
	n = npu_view_elems(&s);
	/* What validate established; never store past the loaded buffer. */
	if (n != npu_view_elems(&d) || s.esz != d.esz) {
		ctx->detail = NPU_IE_SHAPE;
		return NPU_TASK_ILLEGAL_INSN;
	}
	bytes = n * s.esz;
	data = npu_view_load(ctx, &s, &st);
	if (!data)
		return st;
	if (may_alias(&s, &d)) {
		void *tmp = npu_ctx_alloc(ctx, bytes);

		if (!tmp)
			return NPU_TASK_INTERNAL;
		memcpy(tmp, data, bytes);
		data = tmp;
	}
	st = npu_view_store(ctx, &d, data);
	if (st)
		return st;
	dma_cost(ctx, &s, &d, bytes);
	return NPU_TASK_OK;
}

static const struct npu_unit_ops dma_copy = { validate_copy, exec_copy };

const struct npu_unit_ops *npu_unit_dma(unsigned opcode)
{
	return opcode == NPU_DMA_COPY ? &dma_copy : NULL;
}
