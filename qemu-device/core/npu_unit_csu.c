// SPDX-License-Identifier: MIT
/*
 * Cluster Service Unit: work the TPB hands to its cluster CPU.
 *
 *  GSDU  - runs a chain of gather/scatter descriptors (struct
 *          npu_hw_gsdu_desc) that moves rows between any two spaces,
 *          including remote HBSMs and broadcast destinations.
 *  TOPK  - per-row k largest/smallest values and their indices.
 *  NMS   - greedy non-maximum suppression over boxes and scores.
 *
 * Semantics, check order and error codes follow Documentation/hw/isa.md;
 * costs follow Documentation/hw/cycle-model.md (CSU_OVH plus the work,
 * no HBSM latency).
 */
#include <string.h>

#include "npu_core_priv.h"	/* npu_job_sram(): the task's SRAM window */
#include "npu_exec.h"
#include "npu_kern.h"

#define CSU_OVH			200	/* service routine start, per iteration */
#define GSDU_DESC_CYCLES	50	/* the CPU programs one transfer */
#define VEC_BW			NPU_M100_DTDU_BYTES_PER_CYCLE
/*
 * Largest transfer one descriptor may describe (rows * row_bytes).  Not
 * in isa.md: without it a stride-0 descriptor could ask for 2^64 bytes of
 * copying and stall the emulator for hours.  Longer moves take several
 * descriptors.
 */
#define GSDU_MAX_DESC_BYTES	(64ull << 20)
/* Rows move through a bounce buffer in pieces of this size. */
#define GSDU_BOUNCE_BYTES	(64u << 10)
/* DDR addresses are device VAs of NPU_MMU_VA_BITS. */
#define DDR_SPACE_BYTES		(1ull << NPU_MMU_VA_BITS)
/* Per-iteration operand limit, as in the engine's walker checks. */
#define CSU_MAX_ELEMS		(1ull << 24)
/*
 * Most boxes NMS accepts (not in isa.md): as many [4] fp32 boxes as the
 * largest HBSM holds.  More can only come from broadcast walker levels and
 * would make the quadratic suppression arbitrarily slow.
 */
#define NMS_MAX_BOXES		(1u << 17)

/* ---- shared checks ---- */

struct shape {
	unsigned nd;
	uint32_t d[NPU_TWU_MAX_LEVELS];	/* 1 beyond nd */
	uint64_t elems;			/* saturates at UINT64_MAX */
};

static void opnd_shape(const struct npu_dinsn *di, unsigned o, struct shape *s)
{
	const struct npu_walk *w = &di->opnd[o];

	memset(s, 0, sizeof(*s));
	for (unsigned l = 0; l < NPU_TWU_MAX_LEVELS; l++)
		s->d[l] = 1;
	s->nd = w->nlevels - di->nrep;
	s->elems = 1;
	for (unsigned l = 0; l < s->nd; l++) {
		s->d[l] = w->count[l];
		/* counts are >= 1, so the division is safe */
		if (s->elems > UINT64_MAX / w->count[l])
			s->elems = UINT64_MAX;
		else
			s->elems *= w->count[l];
	}
}

static bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/*
 * Operand slots in order: those in @must are used, those in @may are
 * optional, all others unused; used ones are in the local HBSM (CSU
 * compute operands must be).  isa.md check 7: NPU_IE_SPACE.
 */
static int check_opnds(const struct npu_dinsn *di, unsigned must, unsigned may)
{
	for (unsigned o = 0; o < NPU_OPNDS; o++) {
		unsigned bit = 1u << o;

		if (!di->used[o]) {
			if (must & bit)
				return NPU_IE_SPACE;
			continue;
		}
		if (!((must | may) & bit))
			return NPU_IE_SPACE;
		if (di->opnd[o].space != NPU_SPACE_HBSM)
			return NPU_IE_SPACE;
	}
	return 0;
}

static bool params_reserved_clear(const struct npu_hw_csu_params *p)
{
	return !p->reserved0 && !p->reserved1 &&
	       all_zero(p->reserved, sizeof(p->reserved));
}

static bool is_float_dtype(unsigned dt)
{
	return dt == NPU_DT_FP32 || dt == NPU_DT_BF16 || dt == NPU_DT_FP16;
}

/* L(n) = max(1, ceil(log2 n)) of the cycle model. */
static uint64_t log2_ceil_min1(uint64_t n)
{
	return n <= 2 ? 1 : 64u - (unsigned)__builtin_clzll(n - 1);
}

/* ceil(n * L(n) / 8): the CPU's sort-like work on n elements. */
static uint64_t sort_cycles(uint64_t n)
{
	return (n * log2_ceil_min1(n) + 7) / 8;
}

/* ---- GSDU ---- */

static int validate_gsdu(struct npu_job *job, struct npu_dinsn *di)
{
	const struct npu_hw_csu_params *p = &di->raw.params.csu;
	uint64_t limit;
	int ret;

	if (!params_reserved_clear(p))
		return NPU_IE_RESERVED;
	/* Nothing to repeat over: a chain runs once. */
	if (di->raw.repeat_levels || di->nrep)
		return NPU_IE_PARAM;
	ret = check_opnds(di, 0, 0);
	if (ret)
		return ret;
	if (p->chain_space != NPU_SPACE_HBSM && p->chain_space != NPU_SPACE_DDR)
		return NPU_IE_SPACE;
	if (p->largest || p->box_format || p->k || p->max_out ||
	    p->iou_threshold || p->score_threshold || p->count_addr)
		return NPU_IE_PARAM;
	if (p->chain_addr & 7)
		return NPU_IE_PARAM;
	/* The first descriptor must lie in its space; later ones are
	 * checked as the chain is walked. */
	limit = p->chain_space == NPU_SPACE_HBSM ? npu_job_hbsm_size(job) :
						   DDR_SPACE_BYTES;
	if (p->chain_addr > limit ||
	    limit - p->chain_addr < sizeof(struct npu_hw_gsdu_desc))
		return NPU_IE_RANGE;
	return 0;
}

struct gsdu_run {
	struct npu_exec_ctx *ctx;
	unsigned own_cl, own_tpb;	/* the executing TPB */
	unsigned ncl, ntpb;		/* partition geometry */
	unsigned own_node, ccb_node, ddr_node;
	uint64_t hbsm_size, sram_size;
	uint8_t *bounce;
	uint32_t *index;		/* INDEXED: the table, read once */
	/*
	 * NoC traffic, summed per (source node, destination node) over the
	 * whole chain so a long chain does not exhaust the cost's transfer
	 * slots.
	 */
	uint64_t traffic[NPU_HW_MAX_MESH_NODES][NPU_HW_MAX_MESH_NODES];
};

/* Outcome of checking one descriptor. */
enum { DESC_OK, DESC_BAD, DESC_DEFECTIVE };

static uint64_t space_limit(const struct gsdu_run *g, unsigned space)
{
	switch (space) {
	case NPU_SPACE_HBSM:
	case NPU_SPACE_HBSM_REMOTE:
		return g->hbsm_size;
	case NPU_SPACE_SRAM:
		return g->sram_size;
	default:
		return DDR_SPACE_BYTES;
	}
}

/*
 * Is [base + off, base + off + len) inside [0, limit)?  off is a signed
 * row offset (|off| < 2^63), so the sum is formed without overflow.
 */
static bool row_in(uint64_t base, int64_t off, uint64_t len, uint64_t limit)
{
	uint64_t a;

	if (base > limit)
		return false;
	if (off < 0) {
		if ((uint64_t)-off > base)
			return false;
		a = base - (uint64_t)-off;
	} else {
		if ((uint64_t)off > limit)
			return false;
		a = base + (uint64_t)off;
	}
	return a <= limit && len <= limit - a;
}

/* Rows base + i * stride, i < rows: the extremes bound all others. */
static bool rows_in(uint64_t base, uint32_t rows, int32_t stride, uint64_t len,
		    uint64_t limit)
{
	if (!rows)
		return true;
	/* |(rows - 1) * stride| < 2^32 * 2^31: fits in int64 */
	return row_in(base, 0, len, limit) &&
	       row_in(base, (int64_t)(rows - 1) * stride, len, limit);
}

/*
 * The checks of isa.md "NPU_CSU_GSDU" step 2, in its order.  A logical
 * cluster outside the partition is NPU_TASK_DEFECTIVE_CLUSTER (*cluster),
 * anything else NPU_IE_CHAIN.  For INDEXED, the index table is read into
 * g->index here so that the source rows it selects can be checked before
 * anything is copied.
 */
static int gsdu_check(struct gsdu_run *g, const struct npu_hw_gsdu_desc *d,
		      unsigned *cluster, int *status)
{
	uint64_t len = d->row_bytes, srclim, dstlim;

	*status = 0;
	if ((d->flags & ~NPU_GSDU_F_KNOWN) || d->reserved0 || d->reserved1 ||
	    !all_zero(d->reserved, sizeof(d->reserved)))
		return DESC_BAD;
	if (d->src_space == NPU_SPACE_NONE || d->src_space >= NPU_SPACE_COUNT ||
	    d->dst_space == NPU_SPACE_NONE || d->dst_space >= NPU_SPACE_COUNT)
		return DESC_BAD;
	if (d->src_space == NPU_SPACE_HBSM_REMOTE) {
		if (d->src_cluster >= g->ncl) {
			*cluster = d->src_cluster;
			return DESC_DEFECTIVE;
		}
		if (d->src_tpb >= g->ntpb)
			return DESC_BAD;
	}
	if (d->dst_space == NPU_SPACE_HBSM_REMOTE) {
		if (!d->dst_cluster_mask || !d->dst_tpb_mask)
			return DESC_BAD;
		if (d->dst_cluster_mask >> g->ncl) {
			*cluster = g->ncl;
			while (!(d->dst_cluster_mask & (1u << *cluster)))
				(*cluster)++;
			return DESC_DEFECTIVE;
		}
		if (d->dst_tpb_mask >> g->ntpb)
			return DESC_BAD;
	}
	if ((d->src_space != NPU_SPACE_HBSM_REMOTE &&
	     (d->src_cluster || d->src_tpb)) ||
	    (d->dst_space != NPU_SPACE_HBSM_REMOTE &&
	     (d->dst_cluster_mask || d->dst_tpb_mask)))
		return DESC_BAD;
	if ((uint64_t)d->rows * len > GSDU_MAX_DESC_BYTES)
		return DESC_BAD;
	srclim = space_limit(g, d->src_space);
	dstlim = space_limit(g, d->dst_space);
	if (!rows_in(d->dst, d->rows, d->dst_stride, len, dstlim))
		return DESC_BAD;
	if (!(d->flags & NPU_GSDU_F_INDEXED))
		return rows_in(d->src, d->rows, d->src_stride, len, srclim) ?
			DESC_OK : DESC_BAD;

	if ((d->index_addr & 3) ||
	    !row_in(d->index_addr, 0, 4ull * d->rows, g->hbsm_size))
		return DESC_BAD;
	if (!d->rows)
		return DESC_OK;
	if (!g->index) {
		/* Any table fits in the HBSM, so one buffer that size
		 * serves the whole chain. */
		g->index = npu_ctx_alloc(g->ctx, g->hbsm_size);
		if (!g->index) {
			*status = NPU_TASK_INTERNAL;
			return DESC_BAD;
		}
	}
	*status = npu_space_read(g->ctx, NPU_SPACE_HBSM, g->own_cl, g->own_tpb,
				 d->index_addr, g->index, 4ull * d->rows);
	if (*status)
		return DESC_BAD;
	for (uint32_t i = 0; i < d->rows; i++)
		/* |index * stride| < 2^32 * 2^31: fits in int64 */
		if (!row_in(d->src, (int64_t)g->index[i] * d->src_stride, len,
			    srclim))
			return DESC_BAD;
	return DESC_OK;
}

/* Write one piece to the descriptor's destination(s). */
static int gsdu_put(struct gsdu_run *g, const struct npu_hw_gsdu_desc *d,
		    uint64_t addr, size_t len)
{
	int st;

	if (d->dst_space != NPU_SPACE_HBSM_REMOTE)
		return npu_space_write(g->ctx, d->dst_space, g->own_cl,
				       g->own_tpb, addr, g->bounce, len);
	for (unsigned c = 0; c < g->ncl; c++) {
		if (!(d->dst_cluster_mask & (1u << c)))
			continue;
		for (unsigned t = 0; t < g->ntpb; t++) {
			if (!(d->dst_tpb_mask & (1u << t)))
				continue;
			st = npu_space_write(g->ctx, NPU_SPACE_HBSM_REMOTE, c, t,
					     addr, g->bounce, len);
			if (st)
				return st;
		}
	}
	return 0;
}

/* Move @len bytes from src to dst through the bounce buffer.  Overlapping
 * rows see the effect of earlier pieces, as a streaming engine would. */
static int gsdu_move(struct gsdu_run *g, const struct npu_hw_gsdu_desc *d,
		     uint64_t src, uint64_t dst, uint64_t len)
{
	bool remote = d->src_space == NPU_SPACE_HBSM_REMOTE;
	unsigned scl = remote ? d->src_cluster : g->own_cl;
	unsigned stpb = remote ? d->src_tpb : g->own_tpb;

	while (len) {
		size_t n = len < GSDU_BOUNCE_BYTES ? (size_t)len : GSDU_BOUNCE_BYTES;
		int st;

		st = npu_space_read(g->ctx, d->src_space, scl, stpb, src,
				    g->bounce, n);
		if (st)
			return st;
		st = gsdu_put(g, d, dst, n);
		if (st)
			return st;
		src += n;
		dst += n;
		len -= n;
	}
	return 0;
}

/* Address of source row i (checked by gsdu_check). */
static uint64_t gsdu_src_row(const struct gsdu_run *g,
			     const struct npu_hw_gsdu_desc *d, uint32_t i)
{
	uint64_t k = (d->flags & NPU_GSDU_F_INDEXED) ? g->index[i] : i;

	return d->src + (uint64_t)((int64_t)k * d->src_stride);
}

static int gsdu_copy(struct gsdu_run *g, const struct npu_hw_gsdu_desc *d)
{
	uint64_t row = d->row_bytes;

	if (!row || !d->rows)
		return 0;
	/* Densely packed rows on both sides move as one block. */
	if (!(d->flags & NPU_GSDU_F_INDEXED) &&
	    (d->rows == 1 || ((int64_t)d->src_stride == (int64_t)row &&
			      (int64_t)d->dst_stride == (int64_t)row)))
		return gsdu_move(g, d, d->src, d->dst, row * d->rows);
	for (uint32_t i = 0; i < d->rows; i++) {
		int st = gsdu_move(g, d, gsdu_src_row(g, d, i),
				   d->dst + (uint64_t)((int64_t)i * d->dst_stride),
				   row);

		if (st)
			return st;
	}
	return 0;
}

/* Add the bytes of [addr, addr + len) in the SRAM window to its banks:
 * bank = (window base + offset) >> 12 & 3.  The window base is 4 KiB
 * aligned, so it only rotates the banks, which leaves their maximum (all
 * the model uses) unchanged: offsets alone suffice. */
static void sram_banks_add(uint64_t bank[4], uint64_t addr, uint64_t len)
{
	while (len) {
		uint64_t n = ((addr | 4095) + 1) - addr;

		if (n > len)
			n = len;
		bank[(addr >> 12) & 3] += n;
		addr += n;
		len -= n;
	}
}

static unsigned space_node(const struct gsdu_run *g, unsigned space,
			   unsigned lcluster)
{
	switch (space) {
	case NPU_SPACE_HBSM:
		return g->own_node;
	case NPU_SPACE_HBSM_REMOTE:
		return npu_job_cluster_node(g->ctx->job, lcluster);
	case NPU_SPACE_SRAM:
		return g->ccb_node;
	default:
		return g->ddr_node;
	}
}

static void traffic_add(struct gsdu_run *g, unsigned from, unsigned to,
			uint64_t bytes)
{
	if (from == to || from >= NPU_HW_MAX_MESH_NODES ||
	    to >= NPU_HW_MAX_MESH_NODES)
		return;
	g->traffic[from][to] += bytes;
}

/*
 * Transfer time of one descriptor (cycle-model.md, CSU GSDU).  Between
 * TPBs of one cluster (or within the local HBSM) it streams at VEC_BW.
 * Otherwise it is a transfer between the source's node and each
 * destination's node, as long as its slowest resource: the mesh links
 * (LINK_BW), the DDR port (bytes read plus written, DDR_BW), the SRAM
 * (busiest bank, SRAM_BANK_BW).  Hop latency is left to the engine's
 * routing of the recorded transfers.  Descriptors run one after the
 * other, so these times add up in cost->cycles.
 */
static uint64_t gsdu_time(struct gsdu_run *g, const struct npu_hw_gsdu_desc *d,
			  uint64_t bytes)
{
	unsigned src_node = space_node(g, d->src_space, d->src_cluster);
	uint64_t t = 0, ddr_bytes = 0, bank[4] = { 0 };
	bool links = false, resource = false;

	if (d->dst_space == NPU_SPACE_HBSM_REMOTE) {
		for (unsigned c = 0; c < g->ncl; c++) {
			unsigned n;

			if (!(d->dst_cluster_mask & (1u << c)))
				continue;
			n = npu_job_cluster_node(g->ctx->job, c);
			if (n != src_node) {
				links = true;
				traffic_add(g, src_node, n, bytes);
			}
		}
	} else {
		unsigned n = space_node(g, d->dst_space, 0);

		if (n != src_node) {
			links = true;
			traffic_add(g, src_node, n, bytes);
		}
	}
	if (links) {
		t = (bytes + NPU_M100_LINK_BYTES_PER_CYCLE - 1) /
		    NPU_M100_LINK_BYTES_PER_CYCLE;
		resource = true;
	}
	if (d->src_space == NPU_SPACE_DDR)
		ddr_bytes += bytes;
	if (d->dst_space == NPU_SPACE_DDR)
		ddr_bytes += bytes;
	if (ddr_bytes) {
		uint64_t td = (ddr_bytes + NPU_M100_DDR_BYTES_PER_CYCLE - 1) /
			      NPU_M100_DDR_BYTES_PER_CYCLE;

		t = td > t ? td : t;
		resource = true;
	}
	if ((d->src_space == NPU_SPACE_SRAM || d->dst_space == NPU_SPACE_SRAM) &&
	    bytes) {
		for (uint32_t i = 0; i < d->rows; i++) {
			if (d->src_space == NPU_SPACE_SRAM)
				sram_banks_add(bank, gsdu_src_row(g, d, i),
					       d->row_bytes);
			if (d->dst_space == NPU_SPACE_SRAM)
				sram_banks_add(bank, d->dst + (uint64_t)((int64_t)i *
									 d->dst_stride),
					       d->row_bytes);
		}
		for (unsigned b = 0; b < 4; b++) {
			uint64_t tb = (bank[b] + 63) / 64;	/* SRAM_BANK_BW */

			t = tb > t ? tb : t;
		}
		resource = true;
	}
	if (!resource)
		t = (bytes + VEC_BW - 1) / VEC_BW;
	return t;
}

static int chain_fault(struct npu_exec_ctx *ctx, uint64_t addr, unsigned pos)
{
	ctx->fault_addr = addr;
	ctx->detail = NPU_IE_CHAIN;
	ctx->detail2 = pos;
	return NPU_TASK_ILLEGAL_INSN;
}

static int exec_gsdu(struct npu_exec_ctx *ctx)
{
	const struct npu_hw_csu_params *p = &ctx->di->raw.params.csu;
	struct npu_cost *cost = ctx->cost;
	uint64_t addr = p->chain_addr, chain_limit;
	struct gsdu_run *g;
	uint32_t sram_size;
	int st = NPU_TASK_OK;

	/* ~2 KiB of traffic table: scratch rather than stack. */
	g = npu_ctx_alloc(ctx, sizeof(*g));
	if (!g)
		return NPU_TASK_INTERNAL;
	memset(g, 0, sizeof(*g));
	g->ctx = ctx;
	g->own_cl = npu_ctx_lcluster(ctx);
	g->own_tpb = npu_ctx_tpb_index(ctx);
	g->ncl = npu_job_nclusters(ctx->job);
	g->ntpb = npu_job_tpbs(ctx->job);
	g->own_node = npu_job_cluster_node(ctx->job, g->own_cl);
	g->ccb_node = npu_job_ccb_node(ctx->job);
	g->ddr_node = npu_job_ddr_node(ctx->job);
	g->hbsm_size = npu_job_hbsm_size(ctx->job);
	npu_job_sram(ctx->job, &sram_size);
	g->sram_size = sram_size;
	g->bounce = npu_ctx_alloc(ctx, GSDU_BOUNCE_BYTES);
	if (!g->bounce)
		return NPU_TASK_INTERNAL;
	chain_limit = space_limit(g, p->chain_space);

	cost->cycles += CSU_OVH;
	for (unsigned pos = 0;; pos++) {
		struct npu_hw_gsdu_desc d;
		unsigned cluster = 0;
		uint64_t bytes;
		int res;

		/* Also what stops a cyclic chain. */
		if (pos == NPU_GSDU_MAX_CHAIN) {
			st = chain_fault(ctx, addr, pos);
			break;
		}
		if ((addr & 7) || !row_in(addr, 0, sizeof(d), chain_limit)) {
			st = chain_fault(ctx, addr, pos);
			break;
		}
		st = npu_space_read(ctx, p->chain_space, g->own_cl, g->own_tpb,
				    addr, &d, sizeof(d));
		if (st)
			break;
		res = gsdu_check(g, &d, &cluster, &st);
		if (st)
			break;
		if (res == DESC_DEFECTIVE) {
			ctx->detail = cluster;
			st = NPU_TASK_DEFECTIVE_CLUSTER;
			break;
		}
		if (res != DESC_OK) {
			st = chain_fault(ctx, addr, pos);
			break;
		}
		st = gsdu_copy(g, &d);
		if (st)
			break;
		bytes = (uint64_t)d.rows * d.row_bytes;
		cost->cycles += GSDU_DESC_CYCLES + gsdu_time(g, &d, bytes);
		cost->gsdu_bytes += bytes;
		if (!d.next)
			break;
		addr = d.next;
	}
	for (unsigned i = 0; i < NPU_HW_MAX_MESH_NODES; i++)
		for (unsigned j = 0; j < NPU_HW_MAX_MESH_NODES; j++)
			if (g->traffic[i][j])
				npu_cost_xfer(cost, i, j, g->traffic[i][j]);
	return st;
}

/* ---- TOPK ---- */

static int validate_topk(struct npu_job *job, struct npu_dinsn *di)
{
	const struct npu_hw_csu_params *p = &di->raw.params.csu;
	bool has_val = di->used[NPU_OPND_DST], has_idx = di->used[NPU_OPND_SRC2];
	struct shape s, v, ix;
	int ret;

	(void)job;
	if (!params_reserved_clear(p))
		return NPU_IE_RESERVED;
	/* values (DST) and indices (SRC2) are each optional, not both */
	ret = check_opnds(di, 1u << NPU_OPND_SRC0,
			  (1u << NPU_OPND_SRC2) | (1u << NPU_OPND_DST));
	if (ret)
		return ret;
	if (!has_val && !has_idx)
		return NPU_IE_SPACE;
	if (!is_float_dtype(di->opnd[NPU_OPND_SRC0].dtype) ||
	    (has_val && di->opnd[NPU_OPND_DST].dtype !=
			di->opnd[NPU_OPND_SRC0].dtype) ||
	    (has_idx && di->opnd[NPU_OPND_SRC2].dtype != NPU_DT_INT32))
		return NPU_IE_DTYPE;
	opnd_shape(di, NPU_OPND_SRC0, &s);
	if (p->chain_space || p->box_format || p->chain_addr || p->max_out ||
	    p->iou_threshold || p->score_threshold || p->count_addr ||
	    p->largest > 1 || p->k < 1 || p->k > s.d[0])
		return NPU_IE_PARAM;
	/* x [n, rows] -> [k, rows]: two semantic levels each, leaving room
	 * for at most 3 repeat levels. */
	if (s.nd != 2 || s.elems > CSU_MAX_ELEMS)
		return NPU_IE_SHAPE;
	if (has_val) {
		opnd_shape(di, NPU_OPND_DST, &v);
		if (v.nd != 2 || v.d[0] != p->k || v.d[1] != s.d[1])
			return NPU_IE_SHAPE;
	}
	if (has_idx) {
		opnd_shape(di, NPU_OPND_SRC2, &ix);
		if (ix.nd != 2 || ix.d[0] != p->k || ix.d[1] != s.d[1])
			return NPU_IE_SHAPE;
	}
	return 0;
}

static int exec_topk(struct npu_exec_ctx *ctx)
{
	const struct npu_hw_csu_params *p = &ctx->di->raw.params.csu;
	bool has_val = ctx->di->used[NPU_OPND_DST];
	bool has_idx = ctx->di->used[NPU_OPND_SRC2];
	struct npu_view s, v, ix;
	size_t n, rows, k = p->k;
	const float *x;
	float *vals;
	int32_t *idx;
	int st;

	memset(&v, 0, sizeof(v));
	memset(&ix, 0, sizeof(ix));
	npu_opnd_view(ctx, NPU_OPND_SRC0, &s);
	n = s.dims[0];
	rows = s.ndims == 2 ? s.dims[1] : 1;
	/* What validate established; never index past the buffers. */
	if (k < 1 || k > n)
		goto shape;
	if (has_val) {
		npu_opnd_view(ctx, NPU_OPND_DST, &v);
		if (npu_view_elems(&v) != rows * k)
			goto shape;
	}
	if (has_idx) {
		npu_opnd_view(ctx, NPU_OPND_SRC2, &ix);
		if (npu_view_elems(&ix) != rows * k || ix.esz != sizeof(int32_t))
			goto shape;
	}
	x = npu_view_load_f32(ctx, &s, &st);
	if (!x)
		return st;
	vals = npu_ctx_alloc(ctx, rows * k * sizeof(*vals));
	idx = npu_ctx_alloc(ctx, rows * k * sizeof(*idx));
	if (!vals || !idx)
		return NPU_TASK_INTERNAL;
	npu_kern_topk(vals, idx, x, rows, n, k, p->largest != 0);
	/* Same dtype as the source, so the round trip through fp32 is exact. */
	if (has_val) {
		st = npu_view_store_f32(ctx, &v, vals, NPU_ROUND_HALF_EVEN);
		if (st)
			return st;
	}
	if (has_idx) {
		st = npu_view_store(ctx, &ix, idx);
		if (st)
			return st;
	}
	ctx->cost->cycles += CSU_OVH + rows * sort_cycles(n);
	return NPU_TASK_OK;
shape:
	ctx->detail = NPU_IE_SHAPE;
	return NPU_TASK_ILLEGAL_INSN;
}

/* ---- NMS ---- */

static int validate_nms(struct npu_job *job, struct npu_dinsn *di)
{
	const struct npu_hw_csu_params *p = &di->raw.params.csu;
	struct shape b, s, d;
	int ret;

	if (!params_reserved_clear(p))
		return NPU_IE_RESERVED;
	/* The kept count has one fixed address: iterations would race on
	 * it, so NMS runs exactly once. */
	if (di->raw.repeat_levels || di->nrep)
		return NPU_IE_PARAM;
	ret = check_opnds(di, (1u << NPU_OPND_SRC0) | (1u << NPU_OPND_SRC1) |
				      (1u << NPU_OPND_DST), 0);
	if (ret)
		return ret;
	if (di->opnd[NPU_OPND_SRC0].dtype != NPU_DT_FP32 ||
	    di->opnd[NPU_OPND_SRC1].dtype != NPU_DT_FP32 ||
	    di->opnd[NPU_OPND_DST].dtype != NPU_DT_INT32)
		return NPU_IE_DTYPE;
	/* Thresholds are any fp32 bits: the kernel defines NaN and inf
	 * (a NaN iou_threshold suppresses nothing, -inf keeps all scores). */
	if (p->chain_space || p->largest || p->chain_addr || p->k ||
	    p->box_format > 1 || (p->count_addr & 3))
		return NPU_IE_PARAM;
	opnd_shape(di, NPU_OPND_SRC0, &b);
	opnd_shape(di, NPU_OPND_SRC1, &s);
	opnd_shape(di, NPU_OPND_DST, &d);
	/* boxes [4, n], scores [n], dst [max_out] */
	if (b.nd != 2 || b.d[0] != 4 || s.nd != 1 || s.d[0] != b.d[1] ||
	    d.nd != 1 || p->max_out < 1 || d.d[0] != p->max_out)
		return NPU_IE_SHAPE;
	if (b.d[1] > NMS_MAX_BOXES || d.elems > CSU_MAX_ELEMS)
		return NPU_IE_SHAPE;
	if ((uint64_t)p->count_addr + sizeof(int32_t) > npu_job_hbsm_size(job))
		return NPU_IE_RANGE;
	return 0;
}

static int exec_nms(struct npu_exec_ctx *ctx)
{
	const struct npu_hw_csu_params *p = &ctx->di->raw.params.csu;
	struct npu_view b, s, d;
	const float *boxes, *scores;
	size_t n, max_out = p->max_out, kept;
	int32_t *sel, count;
	int st;

	npu_opnd_view(ctx, NPU_OPND_SRC0, &b);
	npu_opnd_view(ctx, NPU_OPND_SRC1, &s);
	npu_opnd_view(ctx, NPU_OPND_DST, &d);
	n = s.dims[0];
	if (b.ndims != 2 || b.dims[0] != 4 || b.dims[1] != n ||
	    npu_view_elems(&d) != max_out || d.esz != sizeof(int32_t)) {
		ctx->detail = NPU_IE_SHAPE;
		return NPU_TASK_ILLEGAL_INSN;
	}
	boxes = npu_view_load_f32(ctx, &b, &st);
	if (!boxes)
		return st;
	scores = npu_view_load_f32(ctx, &s, &st);
	if (!scores)
		return st;
	sel = npu_ctx_alloc(ctx, max_out * sizeof(*sel));
	if (!sel)
		return NPU_TASK_INTERNAL;
	kept = npu_kern_nms(sel, boxes, scores, n, max_out,
			    npu_f32_from_bits(p->iou_threshold),
			    npu_f32_from_bits(p->score_threshold),
			    p->box_format);
	if (kept > max_out)
		kept = max_out;
	/* Unused slots read -1 so consumers need not fetch the count. */
	for (size_t i = kept; i < max_out; i++)
		sel[i] = -1;
	st = npu_view_store(ctx, &d, sel);
	if (st)
		return st;
	count = (int32_t)kept;
	st = npu_space_write(ctx, NPU_SPACE_HBSM, npu_ctx_lcluster(ctx),
			     npu_ctx_tpb_index(ctx), p->count_addr, &count,
			     sizeof(count));
	if (st)
		return st;
	ctx->cost->cycles += CSU_OVH + sort_cycles(n);
	return NPU_TASK_OK;
}

static const struct npu_unit_ops csu_gsdu = { validate_gsdu, exec_gsdu };
static const struct npu_unit_ops csu_topk = { validate_topk, exec_topk };
static const struct npu_unit_ops csu_nms = { validate_nms, exec_nms };

const struct npu_unit_ops *npu_unit_csu(unsigned opcode)
{
	switch (opcode) {
	case NPU_CSU_GSDU:
		return &csu_gsdu;
	case NPU_CSU_TOPK:
		return &csu_topk;
	case NPU_CSU_NMS:
		return &csu_nms;
	default:
		return NULL;
	}
}
