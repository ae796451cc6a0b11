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
 * Being software on a service processor, every CSU iteration pays a fixed
 * service overhead on top of its work.  Checks and semantics are those of
 * Documentation/hw/isa.md ("CSU"), costs those of cycle-model.md.
 */
#include <stddef.h>
#include <string.h>

#include "npu_exec.h"
#include "npu_kern.h"

#define CSU_SERVICE_CYCLES	200
#define GSDU_DESC_CYCLES	50	/* fetch and program one descriptor */
#define GSDU_BYTES_PER_CYCLE	64	/* one link's rate */
/*
 * Largest transfer one descriptor may describe (rows * row_bytes): without
 * a bound a stride-0 descriptor could ask for 2^64 bytes of copying.
 * Longer moves take several descriptors.
 */
#define GSDU_MAX_DESC_BYTES	(64ull << 20)
/* Rows move through a bounce buffer in pieces of this size. */
#define GSDU_BOUNCE_BYTES	(64u << 10)
/*
 * Most boxes NMS accepts: as many [4] fp32 boxes as the largest HBSM
 * could hold.  More can only come from broadcast walker levels, and would
 * just make the quadratic suppression arbitrarily slow.
 */
#define NMS_MAX_BOXES		(1u << 17)

/* ---- shared checks ---- */

/*
 * Operands in @need used (NPU_IE_SHAPE) and in the local HBSM, as CSU
 * compute operands must be (NPU_IE_SPACE); every other slot entirely zero
 * (NPU_IE_RESERVED).
 */
static int check_opnds(const struct npu_dinsn *di, unsigned need)
{
	for (unsigned o = 0; o < NPU_OPNDS; o++) {
		bool want = need & (1u << o);

		if (!want) {
			if (!npu_opnd_slot_clear(di, o))
				return NPU_IE_RESERVED;
			continue;
		}
		if (!di->used[o])
			return NPU_IE_SHAPE;
		if (di->opnd[o].space != NPU_SPACE_HBSM)
			return NPU_IE_SPACE;
	}
	return 0;
}

/* The reserved words of the CSU parameter block. */
static bool params_reserved_clear(const struct npu_hw_csu_params *p)
{
	return !p->reserved0 && !p->reserved1 &&
	       npu_all_zero(p->reserved, sizeof(p->reserved));
}

static bool is_float_dtype(unsigned dt)
{
	return dt == NPU_DT_FP32 || dt == NPU_DT_BF16 || dt == NPU_DT_FP16;
}

static bool f32_bits_finite(uint32_t bits)
{
	return ((bits >> 23) & 0xff) != 0xff;
}

/* b(n) = floor(log2 n) + 1 = ceil(log2(n + 1)): the bit length of n. */
static unsigned bit_length(uint64_t n)
{
	return n ? 64u - (unsigned)__builtin_clzll(n) : 0;
}

/* Sort-like service cost of n elements: floor(n * b(n) / 8). */
static uint64_t sort_cycles(uint64_t n)
{
	return n * bit_length(n) / 8;
}

/* ---- GSDU ---- */

static int validate_gsdu(struct npu_task *task, struct npu_dinsn *di)
{
	const struct npu_hw_csu_params *p = &di->raw.params.csu;
	int ret;

	(void)task;
	ret = check_opnds(di, 0);
	if (ret)
		return ret;
	/* Nothing to repeat over: a chain runs once.  (The engine already
	 * refuses repeat levels without an operand to count them.) */
	if (di->raw.repeat_levels || di->nrep)
		return NPU_IE_PARAM;
	if (!params_reserved_clear(p))
		return NPU_IE_RESERVED;
	if (p->largest || p->box_format || p->k || p->max_out ||
	    p->iou_threshold || p->score_threshold || p->count_addr)
		return NPU_IE_PARAM;
	if (p->chain_space != NPU_SPACE_HBSM && p->chain_space != NPU_SPACE_DDR)
		return NPU_IE_SPACE;
	/* The chain itself is read, and checked, only while running. */
	if (p->chain_addr & 7)
		return NPU_IE_PARAM;
	return 0;
}

#define TRAFFIC_PAIRS (NPU_HW_MAX_MESH_NODES * NPU_HW_MAX_MESH_NODES)

struct gsdu_run {
	struct npu_iteration *it;
	unsigned own_cl, own_tpb;	/* the executing TPB */
	unsigned ncl, ntpb;		/* partition geometry */
	unsigned own_node;
	uint8_t *bounce;
	/* Bit from * NODES + to: traffic[from][to] is set (else garbage). */
	uint64_t set[(TRAFFIC_PAIRS + 63) / 64];
	/*
	 * NoC traffic, summed per (source node, destination node) over the
	 * whole chain so a long chain does not exhaust the cost's transfer
	 * slots.  Last: only the entries in set[] are written, so the
	 * 2 KiB table is neither cleared nor scanned whole per iteration.
	 */
	uint64_t traffic[NPU_HW_MAX_MESH_NODES][NPU_HW_MAX_MESH_NODES];
};

static void traffic_add(struct gsdu_run *g, unsigned from, unsigned to,
			uint64_t bytes)
{
	unsigned k = from * NPU_HW_MAX_MESH_NODES + to;

	if (from == to || from >= NPU_HW_MAX_MESH_NODES ||
	    to >= NPU_HW_MAX_MESH_NODES)
		return;
	if (!(g->set[k / 64] & 1ull << (k % 64))) {
		g->set[k / 64] |= 1ull << (k % 64);
		g->traffic[from][to] = 0;
	}
	g->traffic[from][to] += bytes;
}

/*
 * The descriptor checks of isa.md ("NPU_CSU_GSDU", step 3); any failure
 * is NPU_IE_CHAIN, including logical clusters outside the partition.
 * Addresses are not checked here but as they are used (NPU_IE_RANGE from
 * npu_space_read/write, or an MMU fault).
 */
static bool gsdu_desc_ok(const struct gsdu_run *g,
			 const struct npu_hw_gsdu_desc *d)
{
	if (d->flags & ~NPU_GSDU_F_KNOWN)
		return false;
	if (d->reserved0 ||
	    !npu_all_zero(d->reserved, sizeof(d->reserved)))
		return false;
	if (d->src_space == NPU_SPACE_NONE || d->src_space >= NPU_SPACE_COUNT ||
	    d->dst_space == NPU_SPACE_NONE || d->dst_space >= NPU_SPACE_COUNT)
		return false;
	if (!d->rows || !d->row_bytes ||
	    (uint64_t)d->rows * d->row_bytes > GSDU_MAX_DESC_BYTES)
		return false;
	/* A remote source is exactly one TPB; other spaces name none. */
	if (d->src_space == NPU_SPACE_HBSM_REMOTE) {
		if (d->src_cluster >= g->ncl || d->src_tpb >= g->ntpb)
			return false;
	} else if (d->src_cluster || d->src_tpb) {
		return false;
	}
	/* A remote destination is a non-empty broadcast inside the
	 * partition; other spaces name none. */
	if (d->dst_space == NPU_SPACE_HBSM_REMOTE) {
		if (!d->dst_cluster_mask || (d->dst_cluster_mask >> g->ncl) ||
		    !d->dst_tpb_mask || (d->dst_tpb_mask >> g->ntpb))
			return false;
	} else if (d->dst_cluster_mask || d->dst_tpb_mask) {
		return false;
	}
	/*
	 * The index table is __u32s; without an indexed side it must not be
	 * named.  One table cannot index both sides (no meaning found for it
	 * that a second table would not serve better): refused.
	 */
	if ((d->flags & NPU_GSDU_F_INDEXED) && (d->flags & NPU_GSDU_F_DST_INDEXED))
		return false;
	if (d->flags & (NPU_GSDU_F_INDEXED | NPU_GSDU_F_DST_INDEXED)) {
		if (d->index_addr & 3)
			return false;
	} else if (d->index_addr || d->index_limit) {
		return false;
	}
	return true;
}

/* Write one piece from @buf to the descriptor's destination(s),
 * clusters in order. */
static int gsdu_put(struct gsdu_run *g, const struct npu_hw_gsdu_desc *d,
		    uint64_t addr, const uint8_t *buf, size_t len)
{
	int st;

	if (d->dst_space != NPU_SPACE_HBSM_REMOTE)
		return npu_space_write(g->it, d->dst_space, g->own_cl,
				       g->own_tpb, addr, buf, len);
	for (uint32_t cm = npu_mask_below(d->dst_cluster_mask, g->ncl); cm; cm &= cm - 1) {
		unsigned c = (unsigned)__builtin_ctz(cm);

		for (uint32_t tm = npu_mask_below(d->dst_tpb_mask, g->ntpb); tm; tm &= tm - 1) {
			unsigned t = (unsigned)__builtin_ctz(tm);

			st = npu_space_write(g->it, NPU_SPACE_HBSM_REMOTE, c, t,
					     addr, buf, len);
			if (st)
				return st;
		}
	}
	return 0;
}

/*
 * The DDR sides of one descriptor mapped in place over every row it
 * moves (npu_ddr_map of the span the rows cover), so a row moves with a
 * memmove rather than a translation and a host call per row.  NULL for
 * a side that is not DDR, is indexed, spans far more pages than it has
 * rows (and far more bytes than it moves), or that the host does not map: its rows then take the copying path,
 * which reports faults exactly (a mapped span faults nowhere, so no
 * row's outcome changes).
 */
struct gsdu_maps {
	uint8_t *src, *dst;
	uint64_t src_lo, dst_lo;
};

static uint8_t *map_rows(struct gsdu_run *g, uint64_t base, int32_t stride,
			 uint32_t rows, uint32_t row_bytes, bool write,
			 uint64_t *lo)
{
	int64_t last = (int64_t)stride * (int64_t)(rows - 1);
	uint64_t moved = (uint64_t)rows * row_bytes, span;

	/* Beyond the VA space it faults: the copying path says how. */
	if (base >> 40 || (last < 0 && (uint64_t)-last > base))
		return NULL;
	*lo = last < 0 ? base - (uint64_t)-last : base;
	span = (uint64_t)(last < 0 ? -last : last) + row_bytes;
	/* Rows very far apart: the rows' own translations cost less than
	 * checking every page between them (see ddr_map_view). */
	if (span > 2 * moved + 2 * NPU_MMU_PAGE_SIZE &&
	    span / NPU_MMU_PAGE_SIZE > 16 * (uint64_t)rows)
		return NULL;
	return npu_ddr_map(g->it, *lo, (size_t)span, write);
}

static void gsdu_map(struct gsdu_run *g, const struct npu_hw_gsdu_desc *d,
		     struct gsdu_maps *m)
{
	memset(m, 0, sizeof(*m));
	if (d->src_space == NPU_SPACE_DDR && !(d->flags & NPU_GSDU_F_INDEXED))
		m->src = map_rows(g, d->src, d->src_stride, d->rows, d->row_bytes,
				  false, &m->src_lo);
	if (d->dst_space == NPU_SPACE_DDR && !(d->flags & NPU_GSDU_F_DST_INDEXED))
		m->dst = map_rows(g, d->dst, d->dst_stride, d->rows, d->row_bytes,
				  true, &m->dst_lo);
}

/*
 * Move @len bytes from src to dst through the bounce buffer, piece by
 * piece (each read, then written everywhere); an on-chip to DDR piece is
 * written from its source directly, same checks in the same order.  A
 * mapped DDR side (@m) is read or written in place, a piece at a time
 * with memmove, which reads the whole piece before writing as the bounce
 * does.  Address arithmetic wraps like the hardware's: a wrapped
 * HBSM/SRAM address fails the space's bounds check, a wrapped DDR address
 * faults in the MMU.
 */
static int gsdu_move(struct gsdu_run *g, const struct npu_hw_gsdu_desc *d,
		     uint64_t src, uint64_t dst, uint64_t len,
		     const struct gsdu_maps *m)
{
	bool remote = d->src_space == NPU_SPACE_HBSM_REMOTE;
	unsigned scl = remote ? d->src_cluster : g->own_cl;
	unsigned stpb = remote ? d->src_tpb : g->own_tpb;
	bool direct = d->dst_space == NPU_SPACE_DDR && d->src_space != NPU_SPACE_DDR;
	/* A mapped source is read in place unless the destination is DDR
	 * written through the host, which might overlap it. */
	uint8_t *sp = m->src && (d->dst_space != NPU_SPACE_DDR || m->dst) ?
		      m->src + (src - m->src_lo) : NULL;
	uint8_t *dp = m->dst ? m->dst + (dst - m->dst_lo) : NULL;

	while (len) {
		size_t n = len < GSDU_BOUNCE_BYTES ? (size_t)len : GSDU_BOUNCE_BYTES;
		int st = 0;

		/* The work counts as the copying path's reads and writes. */
		if (sp && dp) {
			npu_cost_load(g->it->cost, n);
			npu_cost_store(g->it->cost, n);
			memmove(dp, sp, n);
		} else if (sp) {
			npu_cost_load(g->it->cost, n);
			st = gsdu_put(g, d, dst, sp, n);
		} else if (dp && direct) {
			const uint8_t *p = npu_space_at(g->it, d->src_space, scl,
							stpb, src, n, &st);

			npu_cost_load(g->it->cost, n);
			if (p) {
				npu_cost_store(g->it->cost, n);
				memcpy(dp, p, n);
			}
		} else if (dp) {
			/* DDR to DDR, the source not mapped: read, then write. */
			st = npu_space_read(g->it, d->src_space, scl, stpb, src,
					    g->bounce, n);
			if (!st) {
				npu_cost_store(g->it->cost, n);
				memmove(dp, g->bounce, n);
			}
		} else if (direct) {
			/* On-chip to DDR: the two cannot overlap, so the piece
			 * goes straight from its checked source. */
			const uint8_t *p = npu_space_at(g->it, d->src_space, scl,
							stpb, src, n, &st);

			npu_cost_load(g->it->cost, n);
			if (p)
				st = npu_space_write(g->it, NPU_SPACE_DDR, g->own_cl,
						     g->own_tpb, dst, p, n);
		} else {
			st = npu_space_read(g->it, d->src_space, scl, stpb, src,
					    g->bounce, n);
			if (!st)
				st = gsdu_put(g, d, dst, g->bounce, n);
		}
		if (st)
			return st;
		src += n;
		dst += n;
		if (sp)
			sp += n;
		if (dp)
			dp += n;
		len -= n;
	}
	return 0;
}

/* Account the mesh traffic of one descriptor: everything flows through
 * this TPB's GSDU, so data enters and leaves via its cluster node. */
static void gsdu_account(struct gsdu_run *g, const struct npu_hw_gsdu_desc *d,
			 uint64_t bytes)
{
	struct npu_task *task = g->it->task;

	switch (d->src_space) {
	case NPU_SPACE_SRAM:
		traffic_add(g, npu_task_ccb_node(task), g->own_node, bytes);
		break;
	case NPU_SPACE_DDR:
		traffic_add(g, npu_task_ddr_node(task), g->own_node, bytes);
		break;
	case NPU_SPACE_HBSM_REMOTE:
		if (d->src_cluster != g->own_cl)
			traffic_add(g, npu_task_cluster_node(task, d->src_cluster),
				    g->own_node, bytes);
		break;
	default:
		break;
	}
	switch (d->dst_space) {
	case NPU_SPACE_SRAM:
		traffic_add(g, g->own_node, npu_task_ccb_node(task), bytes);
		break;
	case NPU_SPACE_DDR:
		traffic_add(g, g->own_node, npu_task_ddr_node(task), bytes);
		break;
	case NPU_SPACE_HBSM_REMOTE:
		for (uint32_t cm = npu_mask_below(d->dst_cluster_mask, g->ncl); cm;
		     cm &= cm - 1) {
			unsigned c = (unsigned)__builtin_ctz(cm);

			if (c != g->own_cl)
				traffic_add(g, g->own_node,
					    npu_task_cluster_node(task, c), bytes);
		}
		break;
	default:
		break;
	}
}

/*
 * Index @i of a descriptor's table (local HBSM), checked against the
 * limit: NPU_TASK_INDEX_FAULT naming the index, the limit and the row.
 */
static int gsdu_index(struct gsdu_run *g, const struct npu_hw_gsdu_desc *d,
		      uint32_t i, uint32_t *idx)
{
	int st = npu_space_read(g->it, NPU_SPACE_HBSM, g->own_cl, g->own_tpb,
				(uint64_t)d->index_addr + 4ull * i, idx,
				sizeof(*idx));

	if (st)
		return st;
	if (d->index_limit && *idx >= d->index_limit) {
		g->it->fault_addr = *idx;
		g->it->detail = d->index_limit;
		g->it->detail2 = i;
		return NPU_TASK_INDEX_FAULT;
	}
	return 0;
}

/*
 * DST_INDEXED: every index is checked before the first row is written,
 * so a bad one leaves the destination as it was.  The rows then read the
 * table again as they go, checked again: a descriptor that writes its own
 * table (local HBSM) sees what it wrote, and still never writes past the
 * limit.
 */
static int gsdu_run_scatter(struct gsdu_run *g,
			    const struct npu_hw_gsdu_desc *d)
{
	struct gsdu_maps m;
	uint32_t idx;
	int st;

	for (uint32_t i = 0; i < d->rows; i++) {
		st = gsdu_index(g, d, i, &idx);
		if (st)
			return st;
	}
	gsdu_map(g, d, &m);
	for (uint32_t i = 0; i < d->rows; i++) {
		st = gsdu_index(g, d, i, &idx);
		if (!st)
			/* |idx * stride| < 2^63: no overflow */
			st = gsdu_move(g, d,
				       d->src + (uint64_t)((int64_t)i * d->src_stride),
				       d->dst + (uint64_t)((int64_t)idx * d->dst_stride),
				       d->row_bytes, &m);
		if (st)
			return st;
	}
	return 0;
}

static int gsdu_run_desc(struct gsdu_run *g, const struct npu_hw_gsdu_desc *d)
{
	uint64_t row = d->row_bytes;
	struct gsdu_maps m;
	int st;

	if (d->flags & NPU_GSDU_F_DST_INDEXED)
		return gsdu_run_scatter(g, d);

	gsdu_map(g, d, &m);
	/* Densely packed rows on both sides move as one block. */
	if (!(d->flags & NPU_GSDU_F_INDEXED) &&
	    (d->rows == 1 || ((int64_t)d->src_stride == (int64_t)row &&
			      (int64_t)d->dst_stride == (int64_t)row)))
		return gsdu_move(g, d, d->src, d->dst, row * d->rows, &m);

	for (uint32_t i = 0; i < d->rows; i++) {
		int64_t soff;

		if (d->flags & NPU_GSDU_F_INDEXED) {
			uint32_t idx;

			/* Read as used: an earlier row may have rewritten it. */
			st = gsdu_index(g, d, i, &idx);
			if (st)
				return st;
			/* |idx * stride| < 2^63: no overflow */
			soff = (int64_t)idx * d->src_stride;
		} else {
			soff = (int64_t)i * d->src_stride;
		}
		st = gsdu_move(g, d, d->src + (uint64_t)soff,
			       d->dst + (uint64_t)((int64_t)i * d->dst_stride),
			       row, &m);
		if (st)
			return st;
	}
	return 0;
}

/* A chain failure: fault_addr names the descriptor; detail2 stays 0. */
static int chain_fault(struct npu_iteration *it, uint64_t addr)
{
	it->fault_addr = addr;
	it->detail = NPU_IE_CHAIN;
	return NPU_TASK_ILLEGAL_INSN;
}

static int exec_gsdu(struct npu_iteration *it)
{
	const struct npu_hw_csu_params *p = &it->di->raw.params.csu;
	struct npu_cost *cost = it->cost;
	struct gsdu_run *g;
	uint64_t addr = p->chain_addr, ddr_bytes = 0;
	unsigned ddr;
	int st = NPU_TASK_OK;

	/* ~2 KiB of traffic table: scratch rather than stack. */
	g = npu_iter_alloc(it, sizeof(*g));
	if (!g)
		return NPU_TASK_INTERNAL;
	memset(g, 0, offsetof(struct gsdu_run, traffic));
	g->it = it;
	g->own_cl = npu_iter_lcluster(it);
	g->own_tpb = npu_iter_tpb_index(it);
	g->ncl = npu_task_nclusters(it->task);
	g->ntpb = npu_task_tpbs(it->task);
	g->own_node = npu_task_cluster_node(it->task, g->own_cl);
	g->bounce = npu_iter_alloc(it, GSDU_BOUNCE_BYTES);
	if (!g->bounce)
		return NPU_TASK_INTERNAL;

	cost->cycles += CSU_SERVICE_CYCLES;
	for (unsigned n = 0;; n++) {
		struct npu_hw_gsdu_desc d;
		uint64_t bytes;

		/* Bounds the work of a cyclic or runaway chain. */
		if (n == NPU_GSDU_MAX_CHAIN) {
			st = chain_fault(it, addr);
			break;
		}
		/* HBSM: NPU_IE_RANGE outside the space; DDR: the MMU. */
		st = npu_space_read(it, p->chain_space, g->own_cl, g->own_tpb,
				    addr, &d, sizeof(d));
		if (st)
			break;
		cost->cycles += GSDU_DESC_CYCLES;
		if (p->chain_space == NPU_SPACE_DDR)
			traffic_add(g, npu_task_ddr_node(it->task), g->own_node,
				    sizeof(d));
		if (!gsdu_desc_ok(g, &d)) {
			st = chain_fault(it, addr);
			break;
		}
		st = gsdu_run_desc(g, &d);
		if (st)
			break;
		bytes = (uint64_t)d.rows * d.row_bytes;
		cost->cycles += bytes / GSDU_BYTES_PER_CYCLE;
		/* A chain can ask for hours of copying inside one iteration:
		 * stop as soon as it alone overruns the task's cycle budget. */
		if (cost->cycles > npu_task_timeout(it->task)) {
			st = NPU_TASK_TIMEOUT;
			break;
		}
		cost->gsdu_bytes += bytes;
		gsdu_account(g, &d, bytes);
		if (!d.next)
			break;
		/* This descriptor has been performed; the link is bad. */
		if (d.next & 7) {
			st = chain_fault(it, addr);
			break;
		}
		addr = d.next;
	}
	ddr = npu_task_ddr_node(it->task);
	/* In (from, to) order, as a scan of the whole table would go. */
	for (unsigned w = 0; w < sizeof(g->set) / sizeof(g->set[0]); w++) {
		for (uint64_t b = g->set[w]; b; b &= b - 1) {
			unsigned k = w * 64 + (unsigned)__builtin_ctzll(b);
			unsigned i = k / NPU_HW_MAX_MESH_NODES, j = k % NPU_HW_MAX_MESH_NODES;

			if (!g->traffic[i][j])
				continue;
			npu_cost_xfer(cost, i, j, g->traffic[i][j]);
			/* DDR bytes also cross the DDR port. */
			if (i == ddr || j == ddr)
				ddr_bytes += g->traffic[i][j];
		}
	}
	npu_cost_path(cost, NPU_PATH_DDR_PORT, ddr_bytes);
	return st;
}

/* ---- TOPK ---- */

static int validate_topk(struct npu_task *task, struct npu_dinsn *di)
{
	const struct npu_hw_csu_params *p = &di->raw.params.csu;
	struct npu_shape s, v, ix;
	int ret;

	(void)task;
	ret = check_opnds(di, (1u << NPU_OPND_SRC0) | (1u << NPU_OPND_SRC2) |
				      (1u << NPU_OPND_DST));
	if (ret)
		return ret;
	if (!params_reserved_clear(p))
		return NPU_IE_RESERVED;
	if (p->chain_space || p->box_format || p->chain_addr || p->max_out ||
	    p->iou_threshold || p->score_threshold || p->count_addr ||
	    p->largest > 1)
		return NPU_IE_PARAM;
	if (!is_float_dtype(di->opnd[NPU_OPND_SRC0].dtype) ||
	    !is_float_dtype(di->opnd[NPU_OPND_DST].dtype) ||
	    di->opnd[NPU_OPND_SRC2].dtype != NPU_DT_INT32)
		return NPU_IE_DTYPE;
	npu_opnd_shape(di, NPU_OPND_SRC0, &s);
	npu_opnd_shape(di, NPU_OPND_DST, &v);
	npu_opnd_shape(di, NPU_OPND_SRC2, &ix);
	/* [n, rows] -> [k, rows]; a single row may drop the rows level. */
	if (s.nd < 1 || s.nd > 2 || v.nd != s.nd || ix.nd != s.nd)
		return NPU_IE_SHAPE;
	if (s.elems > NPU_VIEW_MAX_ELEMS || v.elems > NPU_VIEW_MAX_ELEMS)
		return NPU_IE_SHAPE;
	if (p->k < 1 || p->k > s.d[0])
		return NPU_IE_PARAM;
	if (v.d[0] != p->k || ix.d[0] != p->k ||
	    (s.nd == 2 && (v.d[1] != s.d[1] || ix.d[1] != s.d[1])))
		return NPU_IE_SHAPE;
	return 0;
}

static int exec_topk(struct npu_iteration *it)
{
	const struct npu_hw_csu_params *p = &it->di->raw.params.csu;
	struct npu_view s, v, ix;
	size_t n, rows, k = p->k;
	const float *x;
	float *vals;
	int32_t *idx;
	int st;

	npu_opnd_view(it, NPU_OPND_SRC0, &s);
	npu_opnd_view(it, NPU_OPND_DST, &v);
	npu_opnd_view(it, NPU_OPND_SRC2, &ix);
	n = s.dims[0];
	rows = s.ndims == 2 ? s.dims[1] : 1;
	/* What validate established; never index past the buffers. */
	if (k < 1 || k > n || npu_view_elems(&v) != rows * k ||
	    npu_view_elems(&ix) != rows * k || ix.esz != sizeof(int32_t)) {
		it->detail = NPU_IE_SHAPE;
		return NPU_TASK_ILLEGAL_INSN;
	}
	x = npu_view_load_f32(it, &s, &st);
	if (!x)
		return st;
	vals = npu_iter_alloc(it, rows * k * sizeof(*vals));
	idx = npu_iter_alloc(it, rows * k * sizeof(*idx));
	if (!vals || !idx)
		return NPU_TASK_INTERNAL;
	npu_kern_topk(vals, idx, x, rows, n, k, p->largest != 0);
	/* Values convert to DST's float dtype, rounding to nearest even. */
	st = npu_view_store_f32(it, &v, vals, NPU_ROUND_HALF_EVEN);
	if (st)
		return st;
	st = npu_view_store(it, &ix, idx);
	if (st)
		return st;
	it->cost->cycles += CSU_SERVICE_CYCLES + rows * sort_cycles(n);
	return NPU_TASK_OK;
}

/* ---- NMS ---- */

static int validate_nms(struct npu_task *task, struct npu_dinsn *di)
{
	const struct npu_hw_csu_params *p = &di->raw.params.csu;
	struct npu_shape b, s, d;
	int ret;

	ret = check_opnds(di, (1u << NPU_OPND_SRC0) | (1u << NPU_OPND_SRC1) |
				      (1u << NPU_OPND_DST));
	if (ret)
		return ret;
	/* The kept count has one fixed address: iterations would race on
	 * it, so NMS runs exactly once. */
	if (di->raw.repeat_levels || di->nrep)
		return NPU_IE_PARAM;
	if (!params_reserved_clear(p))
		return NPU_IE_RESERVED;
	if (p->chain_space || p->largest || p->chain_addr || p->k ||
	    p->box_format > 1 || !f32_bits_finite(p->iou_threshold) ||
	    !f32_bits_finite(p->score_threshold) || p->max_out < 1 ||
	    (p->count_addr & 3))
		return NPU_IE_PARAM;
	if ((uint64_t)p->count_addr + sizeof(int32_t) > npu_task_hbsm_size(task))
		return NPU_IE_RANGE;
	if (di->opnd[NPU_OPND_SRC0].dtype != NPU_DT_FP32 ||
	    di->opnd[NPU_OPND_SRC1].dtype != NPU_DT_FP32 ||
	    di->opnd[NPU_OPND_DST].dtype != NPU_DT_INT32)
		return NPU_IE_DTYPE;
	npu_opnd_shape(di, NPU_OPND_SRC0, &b);
	npu_opnd_shape(di, NPU_OPND_SRC1, &s);
	npu_opnd_shape(di, NPU_OPND_DST, &d);
	/* boxes [4, n], scores [n], dst [max_out] */
	if (b.nd != 2 || b.d[0] != 4 || s.nd != 1 || s.d[0] != b.d[1] ||
	    d.nd != 1 || d.d[0] != p->max_out)
		return NPU_IE_SHAPE;
	if (b.d[1] > NMS_MAX_BOXES || d.elems > NPU_VIEW_MAX_ELEMS)
		return NPU_IE_SHAPE;
	return 0;
}

static int exec_nms(struct npu_iteration *it)
{
	const struct npu_hw_csu_params *p = &it->di->raw.params.csu;
	struct npu_view b, s, d;
	const float *boxes, *scores;
	size_t n, max_out = p->max_out, kept;
	int32_t *sel, count;
	int st;

	npu_opnd_view(it, NPU_OPND_SRC0, &b);
	npu_opnd_view(it, NPU_OPND_SRC1, &s);
	npu_opnd_view(it, NPU_OPND_DST, &d);
	n = s.dims[0];
	if (b.ndims != 2 || b.dims[0] != 4 || b.dims[1] != n ||
	    npu_view_elems(&d) != max_out || d.esz != sizeof(int32_t)) {
		it->detail = NPU_IE_SHAPE;
		return NPU_TASK_ILLEGAL_INSN;
	}
	boxes = npu_view_load_f32(it, &b, &st);
	if (!boxes)
		return st;
	scores = npu_view_load_f32(it, &s, &st);
	if (!scores)
		return st;
	sel = npu_iter_alloc(it, max_out * sizeof(*sel));
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
	st = npu_view_store(it, &d, sel);
	if (st)
		return st;
	count = (int32_t)kept;
	st = npu_space_write(it, NPU_SPACE_HBSM, npu_iter_lcluster(it),
			     npu_iter_tpb_index(it), p->count_addr, &count,
			     sizeof(count));
	if (st)
		return st;
	it->cost->cycles += CSU_SERVICE_CYCLES + sort_cycles(n);
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
