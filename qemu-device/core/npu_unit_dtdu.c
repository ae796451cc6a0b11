// SPDX-License-Identifier: MIT
/*
 * Data Transformation and Distribution Unit: COPY, FILL, TRANSPOSE, PAD.
 *
 * The DTDU reads its source from the executing TPB's own HBSM and writes
 * either that HBSM or, through NPU_SPACE_HBSM_REMOTE, the HBSMs of the
 * TPBs named by the destination masks (broadcast).  Every operand is
 * moved as a whole per iteration: load into a dense buffer, transform,
 * store through the destination view, so the results never depend on the
 * walk order of overlapping source and destination.
 *
 * Validation follows the checks of Documentation/hw/isa.md ("DTDU"), in
 * its order: operand usage, spaces and sizes, pad mode, reserved and
 * unused parameter fields, then per-opcode dtypes and shapes.  The engine
 * has already decoded and range-checked every used walker.
 */
#include <string.h>

#include "npu_exec.h"
#include "npu_kern.h"


/*
 * Operand usage: operands in @need must be used (NPU_IE_SHAPE), every
 * other slot must be entirely zero (NPU_IE_RESERVED: an unused walker
 * with stray fields is as malformed as a reserved bit).
 */
static int check_opnds(const struct npu_dinsn *di, unsigned need)
{
	for (unsigned o = 0; o < NPU_OPNDS; o++) {
		bool want = need & (1u << o);

		if (want && !di->used[o])
			return NPU_IE_SHAPE;
		if (!want && !npu_opnd_slot_clear(di, o))
			return NPU_IE_RESERVED;
	}
	return 0;
}

/* SRC0 local HBSM, DST local or remote (non-empty masks) HBSM. */
static int check_spaces(const struct npu_dinsn *di, bool has_src)
{
	const struct npu_walk *d = &di->opnd[NPU_OPND_DST];

	if (has_src && di->opnd[NPU_OPND_SRC0].space != NPU_SPACE_HBSM)
		return NPU_IE_SPACE;
	if (d->space == NPU_SPACE_HBSM_REMOTE) {
		if (!d->cluster_mask || !d->tpb_mask)
			return NPU_IE_DEST;
	} else if (d->space != NPU_SPACE_HBSM) {
		return NPU_IE_SPACE;
	}
	return 0;
}

/*
 * The reserved words must be zero (NPU_IE_RESERVED), and so must the
 * fields the opcode does not use (NPU_IE_PARAM), so that a future meaning
 * can be given to them: value and pad_mode / pads when unused.
 */
static int check_params(const struct npu_hw_dtdu_params *p, bool use_value,
			bool use_pad)
{
	if (!npu_all_zero(p->reserved0, sizeof(p->reserved0)) ||
	    !npu_all_zero(p->reserved, sizeof(p->reserved)))
		return NPU_IE_RESERVED;
	if (!use_value && p->value)
		return NPU_IE_PARAM;
	if (!use_pad && (p->pad_mode || p->pad_top || p->pad_left ||
			 p->pad_bottom || p->pad_right))
		return NPU_IE_PARAM;
	return 0;
}

/* Common prologue (isa.md checks 1 and 2): operands, spaces, sizes.
 * Fills the shapes. */
static int check_common(const struct npu_dinsn *di, bool has_src,
			struct npu_shape *src, struct npu_shape *dst)
{
	unsigned need = 1u << NPU_OPND_DST;
	int ret;

	if (has_src)
		need |= 1u << NPU_OPND_SRC0;
	ret = check_opnds(di, need);
	if (ret)
		return ret;
	ret = check_spaces(di, has_src);
	if (ret)
		return ret;
	npu_opnd_shape(di, NPU_OPND_DST, dst);
	if (dst->elems > NPU_VIEW_MAX_ELEMS)
		return NPU_IE_SHAPE;
	if (has_src) {
		npu_opnd_shape(di, NPU_OPND_SRC0, src);
		if (src->elems > NPU_VIEW_MAX_ELEMS)
			return NPU_IE_SHAPE;
	}
	return 0;
}

static int validate_copy(struct npu_task *task, struct npu_dinsn *di)
{
	struct npu_shape s, d;
	int ret;

	(void)task;
	ret = check_common(di, true, &s, &d);
	if (ret)
		return ret;
	ret = check_params(&di->raw.params.dtdu, false, false);
	if (ret)
		return ret;
	/* Each side walks in its own order: only the counts must agree. */
	if (s.elems != d.elems)
		return NPU_IE_SHAPE;
	return 0;
}

static int validate_fill(struct npu_task *task, struct npu_dinsn *di)
{
	struct npu_shape d;
	int ret;

	(void)task;
	ret = check_common(di, false, NULL, &d);
	if (ret)
		return ret;
	/* The value's bits above the dst element size are ignored ("low
	 * bits used"), so any value is accepted. */
	return check_params(&di->raw.params.dtdu, true, false);
}

static int validate_transpose(struct npu_task *task, struct npu_dinsn *di)
{
	struct npu_shape s, d;
	int ret;

	(void)task;
	ret = check_common(di, true, &s, &d);
	if (ret)
		return ret;
	ret = check_params(&di->raw.params.dtdu, false, false);
	if (ret)
		return ret;
	if (di->opnd[NPU_OPND_SRC0].dtype != di->opnd[NPU_OPND_DST].dtype)
		return NPU_IE_DTYPE;
	/* src [C, R] (dims[0] innermost) -> dst [R, C]; two semantic levels
	 * leave room for at most 3 repeat levels. */
	if (s.nd != 2 || d.nd != 2 || d.d[0] != s.d[1] || d.d[1] != s.d[0])
		return NPU_IE_SHAPE;
	return 0;
}

static int validate_pad(struct npu_task *task, struct npu_dinsn *di)
{
	const struct npu_hw_dtdu_params *p = &di->raw.params.dtdu;
	struct npu_shape s, d;
	int ret;

	(void)task;
	ret = check_common(di, true, &s, &d);
	if (ret)
		return ret;
	if (p->pad_mode > NPU_PAD_REFLECT)
		return NPU_IE_PARAM;
	ret = check_params(p, p->pad_mode == NPU_PAD_CONSTANT, true);
	if (ret)
		return ret;
	if (di->opnd[NPU_OPND_SRC0].dtype != di->opnd[NPU_OPND_DST].dtype)
		return NPU_IE_DTYPE;
	/* src [C, W, H] -> dst [C, W + pl + pr, H + pt + pb]; no overflow:
	 * dims < 2^25 and pads < 2^16.  Three semantic levels leave room
	 * for at most 2 repeat levels. */
	if (s.nd != 3 || d.nd != 3 || d.d[0] != s.d[0] ||
	    (uint64_t)d.d[1] != (uint64_t)s.d[1] + p->pad_left + p->pad_right ||
	    (uint64_t)d.d[2] != (uint64_t)s.d[2] + p->pad_top + p->pad_bottom)
		return NPU_IE_SHAPE;
	/* Reflection never repeats the edge, so it needs pad < dim. */
	if (p->pad_mode == NPU_PAD_REFLECT &&
	    (p->pad_left >= s.d[1] || p->pad_right >= s.d[1] ||
	     p->pad_top >= s.d[2] || p->pad_bottom >= s.d[2]))
		return NPU_IE_PARAM;
	return 0;
}

/* ---- execution ---- */

/*
 * A dense local source is returned by npu_view_load as a pointer into the
 * HBSM itself; storing it into an overlapping destination would then read
 * bytes already overwritten.  A remote destination aliases the source
 * when its masks include this very TPB.
 */
static bool may_alias(const struct npu_iteration *it,
		      const struct npu_view *src, const struct npu_view *dst)
{
	int64_t slo, shi, dlo, dhi;

	if (src->space != NPU_SPACE_HBSM)
		return false;
	if (dst->space == NPU_SPACE_HBSM_REMOTE) {
		if (!(dst->cluster_mask & (1u << npu_iter_lcluster(it))) ||
		    !(dst->tpb_mask & (1u << npu_iter_tpb_index(it))))
			return false;
	} else if (dst->space != NPU_SPACE_HBSM) {
		return false;
	}
	npu_view_span(src, &slo, &shi);
	npu_view_span(dst, &dlo, &dhi);
	return slo < dhi && dlo < shi;
}

/* The element with bit pattern @bits (low bits) in host representation. */
static void elem_from_bits(void *out, unsigned esz, uint32_t bits)
{
	uint8_t b8 = (uint8_t)bits;
	uint16_t b16 = (uint16_t)bits;

	switch (esz) {
	case 1:
		memcpy(out, &b8, 1);
		break;
	case 2:
		memcpy(out, &b16, 2);
		break;
	default:
		memcpy(out, &bits, 4);
		break;
	}
}

/*
 * Cost of one iteration (Documentation/hw/cycle-model.md): streaming at
 * DTDU_BYTES_PER_CYCLE over the larger of the two sides (reads and writes
 * overlap), the HBSM access latency and
 * the bank conflicts of both access patterns (only local-HBSM views have
 * any, see npu_cycles_hbsm_conflicts); a remote destination adds
 * one mesh transfer of bytes(DST) per destination cluster other than this
 * TPB's (TPBs of one cluster share its router and NoC, so the data crosses
 * the mesh once per cluster).
 */
static void dtdu_cost(struct npu_iteration *it, const struct npu_view *src,
		      const struct npu_view *dst)
{
	struct npu_cost *c = it->cost;
	uint64_t dbytes = npu_view_elems(dst) * dst->esz;
	uint64_t bytes = dbytes, conf;

	if (!npu_cost_take_known(it)) {
		conf = npu_cycles_hbsm_conflicts(dst, NPU_M100_HBSM_BANKS,
						 NPU_M100_HBSM_BANK_BYTES);
		if (src) {
			uint64_t sbytes = npu_view_elems(src) * src->esz;

			if (sbytes > bytes)
				bytes = sbytes;
			conf += npu_cycles_hbsm_conflicts(src, NPU_M100_HBSM_BANKS,
							  NPU_M100_HBSM_BANK_BYTES);
		}
		/* cycles includes the conflict stalls; conflicts is their
		 * count for the performance counters. */
		c->cycles += (bytes + NPU_M100_DTDU_BYTES_PER_CYCLE - 1) /
				     NPU_M100_DTDU_BYTES_PER_CYCLE +
			     NPU_M100_HBSM_LATENCY + conf;
		c->conflicts += conf;
	}
	if (dst->space == NPU_SPACE_HBSM_REMOTE) {
		unsigned own = npu_iter_lcluster(it);
		unsigned ncl = npu_task_nclusters(it->task);
		unsigned from = npu_task_cluster_node(it->task, own);

		for (unsigned cl = 0; cl < ncl; cl++) {
			if (cl == own || !(dst->cluster_mask & (1u << cl)))
				continue;
			npu_cost_xfer(c, from, npu_task_cluster_node(it->task, cl),
				      dbytes);
		}
	}
}

/* Defensive re-check of what validate established: exec must never
 * overrun a buffer even if views and validation somehow disagree. */
static int shape_fault(struct npu_iteration *it)
{
	it->detail = NPU_IE_SHAPE;
	return NPU_TASK_ILLEGAL_INSN;
}

static int exec_copy(struct npu_iteration *it)
{
	struct npu_view s, d;
	uint64_t n;
	int st;

	npu_opnd_view(it, NPU_OPND_SRC0, &s);
	npu_opnd_view(it, NPU_OPND_DST, &d);
	n = npu_view_elems(&s);
	if (n != npu_view_elems(&d))
		return shape_fault(it);
	if (s.dtype == d.dtype) {
		const void *data = npu_view_load(it, &s, &st);

		if (!data)
			return st;
		if (may_alias(it, &s, &d)) {
			void *tmp = npu_iter_alloc(it, n * s.esz);

			if (!tmp)
				return NPU_TASK_INTERNAL;
			memcpy(tmp, data, n * s.esz);
			data = tmp;
		}
		st = npu_view_store(it, &d, data);
	} else {
		/* Numeric conversion; the fp32 copy is always scratch, so no
		 * aliasing.  Integer results round half to even, saturate. */
		const float *f = npu_view_load_f32(it, &s, &st);

		if (!f)
			return st;
		st = npu_view_store_f32(it, &d, f, NPU_ROUND_HALF_EVEN);
	}
	if (st)
		return st;
	dtdu_cost(it, &s, &d);
	return NPU_TASK_OK;
}

static int exec_fill(struct npu_iteration *it)
{
	struct npu_view d;
	uint8_t value[4];
	uint64_t n;
	void *buf;
	int st;

	npu_opnd_view(it, NPU_OPND_DST, &d);
	n = npu_view_elems(&d);
	if (n > NPU_VIEW_MAX_ELEMS || d.esz > sizeof(value))
		return shape_fault(it);
	elem_from_bits(value, d.esz, it->di->raw.params.dtdu.value);
	buf = npu_iter_alloc(it, n * d.esz);
	if (!buf)
		return NPU_TASK_INTERNAL;
	npu_kern_fill(buf, d.esz, n, value);
	st = npu_view_store(it, &d, buf);
	if (st)
		return st;
	dtdu_cost(it, NULL, &d);
	return NPU_TASK_OK;
}

static int exec_transpose(struct npu_iteration *it)
{
	struct npu_view s, d;
	const void *x;
	size_t rows, cols;
	void *y;
	int st;

	npu_opnd_view(it, NPU_OPND_SRC0, &s);
	npu_opnd_view(it, NPU_OPND_DST, &d);
	if (s.ndims != 2 || d.ndims != 2 || s.esz != d.esz ||
	    d.dims[0] != s.dims[1] || d.dims[1] != s.dims[0])
		return shape_fault(it);
	cols = s.dims[0];
	rows = s.dims[1];
	x = npu_view_load(it, &s, &st);
	if (!x)
		return st;
	/* y is scratch, so an overlapping destination is harmless. */
	y = npu_iter_alloc(it, rows * cols * s.esz);
	if (!y)
		return NPU_TASK_INTERNAL;
	npu_kern_transpose(y, x, s.esz, rows, cols);
	st = npu_view_store(it, &d, y);
	if (st)
		return st;
	dtdu_cost(it, &s, &d);
	return NPU_TASK_OK;
}

static int exec_pad(struct npu_iteration *it)
{
	const struct npu_hw_dtdu_params *p = &it->di->raw.params.dtdu;
	struct npu_view s, d;
	uint8_t value[4];
	const void *x;
	void *y;
	int st;

	npu_opnd_view(it, NPU_OPND_SRC0, &s);
	npu_opnd_view(it, NPU_OPND_DST, &d);
	if (s.ndims != 3 || d.ndims != 3 || s.esz != d.esz ||
	    s.esz > sizeof(value) || d.dims[0] != s.dims[0] ||
	    (uint64_t)d.dims[1] != (uint64_t)s.dims[1] + p->pad_left + p->pad_right ||
	    (uint64_t)d.dims[2] != (uint64_t)s.dims[2] + p->pad_top + p->pad_bottom)
		return shape_fault(it);
	elem_from_bits(value, d.esz, p->value);
	x = npu_view_load(it, &s, &st);
	if (!x)
		return st;
	y = npu_iter_alloc(it, npu_view_elems(&d) * d.esz);
	if (!y)
		return NPU_TASK_INTERNAL;
	/* views list [C, W, H] innermost first, the kernel takes H, W, C */
	npu_kern_pad_hwc(y, x, s.esz, s.dims[2], s.dims[1], s.dims[0],
			 p->pad_top, p->pad_left, p->pad_bottom, p->pad_right,
			 p->pad_mode, value);
	st = npu_view_store(it, &d, y);
	if (st)
		return st;
	dtdu_cost(it, &s, &d);
	return NPU_TASK_OK;
}

static const struct npu_unit_ops dtdu_copy = { validate_copy, exec_copy };
static const struct npu_unit_ops dtdu_fill = { validate_fill, exec_fill };
static const struct npu_unit_ops dtdu_transpose = { validate_transpose,
						    exec_transpose };
static const struct npu_unit_ops dtdu_pad = { validate_pad, exec_pad };

const struct npu_unit_ops *npu_unit_dtdu(unsigned opcode)
{
	switch (opcode) {
	case NPU_DTDU_COPY:
		return &dtdu_copy;
	case NPU_DTDU_FILL:
		return &dtdu_fill;
	case NPU_DTDU_TRANSPOSE:
		return &dtdu_transpose;
	case NPU_DTDU_PAD:
		return &dtdu_pad;
	default:
		return NULL;
	}
}
