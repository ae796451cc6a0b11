// SPDX-License-Identifier: MIT
/*
 * Data movement without compute: DMA from DDR to DDR through tensor
 * walkers.  Reshape-like operators share their input's memory; copies,
 * Transpose, Concat, Slice, Split and constant Pad become DMA programs.
 *
 * An element of E bytes is walked as E uint8 bytes (an innermost level of
 * step 1) unless it is a hardware dtype, so int64 and friends move too.
 */
#include <stdlib.h>
#include <string.h>

#include "compile/npu_lower.h"

#define MAX_LEVELS 5

/* A walk in elements: count and element stride per level, [0] innermost. */
struct ewalk {
	int n;
	int64_t count[NPU_MAX_RANK + 1];
	int64_t stride[NPU_MAX_RANK + 1];	/* elements */
};

/* Drop count-1 levels and merge contiguous ones (same merge on @b). */
static void simplify(struct ewalk *a, struct ewalk *b)
{
	struct ewalk x = { 0 }, y = { 0 };

	for (int l = 0; l < a->n; l++) {
		if (a->count[l] == 1)
			continue;
		if (x.n && a->stride[l] == x.stride[x.n - 1] * x.count[x.n - 1] &&
		    b->stride[l] == y.stride[y.n - 1] * y.count[y.n - 1]) {
			x.count[x.n - 1] *= a->count[l];
			y.count[y.n - 1] *= a->count[l];
			continue;
		}
		x.count[x.n] = y.count[y.n] = a->count[l];
		x.stride[x.n++] = a->stride[l];
		y.stride[y.n++] = b->stride[l];
	}
	if (!x.n) {
		x.n = y.n = 1;
		x.count[0] = y.count[0] = 1;
		x.stride[0] = y.stride[0] = 1;
	}
	*a = x;
	*b = y;
}

/*
 * Emit DMA instructions moving the walk @src (at seg/off) to @dst, element
 * size @esize (@hw: hardware dtype or 0).  Splits the outermost level when
 * a walk exceeds the per-instruction element limit.
 */
static npu_status dma_walk(struct npu_pb *pb, const struct ewalk *src_in,
			   uint32_t sseg, uint64_t soff, const struct ewalk *dst_in,
			   uint32_t dseg, uint64_t doff, unsigned esize, unsigned hw)
{
	struct ewalk s = *src_in, d = *dst_in;
	unsigned extra = hw ? 0 : 1, dtype = hw ? hw : NPU_DT_UINT8;
	uint64_t inner = 1, outer, per, engine = 0;
	int top;

	simplify(&s, &d);
	if (s.n + (int)extra > MAX_LEVELS)
		return npu_fail(NPU_ERR_UNSUPPORTED, "a move of %d dimensions is not supported",
				s.n);
	top = s.n - 1;
	for (int l = 0; l < top; l++)
		inner *= (uint64_t)s.count[l];
	inner *= hw ? 1 : esize;
	if (inner > (1u << 24))
		return npu_fail(NPU_ERR_UNSUPPORTED, "a move with rows of %llu elements",
				(unsigned long long)inner);
	outer = (uint64_t)s.count[top];
	per = (1u << 24) / inner;
	for (uint64_t o0 = 0; o0 < outer; o0 += per) {
		uint64_t rows = outer - o0 < per ? outer - o0 : per;
		struct npu_hw_insn *in = npu_pb_add(pb, NPU_UNIT_DMA, NPU_DMA_COPY, 0, 0);
		struct npu_hw_twu *w[2];

		if (!in)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		in->params.dma.engine = (uint32_t)(engine++ & 1);
		w[0] = &in->opnd[NPU_OPND_SRC0];
		w[1] = &in->opnd[NPU_OPND_DST];
		for (int k = 0; k < 2; k++) {
			const struct ewalk *e = k ? &d : &s;

			w[k]->space = NPU_SPACE_DDR;
			w[k]->dtype = (uint8_t)dtype;
			if (extra)
				npu_twu_lvl(w[k], 0, esize, 1);
			for (int l = 0; l < top; l++)
				npu_twu_lvl(w[k], l + extra, e->count[l], e->stride[l] * esize);
			npu_twu_lvl(w[k], top + extra, (int64_t)rows, e->stride[top] * esize);
		}
		npu_pb_ddr(pb, npu_pb_index(pb, in), NPU_OPND_SRC0, sseg,
			   soff + o0 * (uint64_t)s.stride[top] * esize);
		npu_pb_ddr(pb, npu_pb_index(pb, in), NPU_OPND_DST, dseg,
			   doff + o0 * (uint64_t)d.stride[top] * esize);
	}
	return NPU_OK;
}

npu_status npu_dma_blocks(struct npu_pb *pb, unsigned esize, unsigned hw, int64_t elems,
			  int64_t blocks, uint32_t sseg, uint64_t soff, int64_t sstride,
			  uint32_t dseg, uint64_t doff, int64_t dstride)
{
	struct ewalk src = { 2, { elems, blocks }, { 1, sstride } };
	struct ewalk dst = { 2, { elems, blocks }, { 1, dstride } };

	if (elems <= 0 || blocks <= 0)
		return NPU_OK;
	return dma_walk(pb, &src, sseg, soff, &dst, dseg, doff, esize, hw);
}

/* Dense row-major walk of @t (innermost first). */
static void dense(const npu_ir_tensor *t, struct ewalk *w)
{
	int64_t s = 1;

	w->n = t->rank;
	for (int l = 0; l < t->rank; l++) {
		w->count[l] = t->dims[t->rank - 1 - l];
		w->stride[l] = s;
		s *= w->count[l];
	}
	if (!w->n) {
		w->n = 1;
		w->count[0] = 1;
		w->stride[0] = 1;
	}
}

static npu_status finish(struct npu_cc *cc, struct npu_pb *pb, npu_status st)
{
	if (!st)
		return npu_sched_dma(cc, pb);
	npu_pb_free(pb);
	return st;
}

npu_status npu_cc_copy(struct npu_cc *cc, int src, int dst)
{
	const npu_ir_tensor *t = &cc->g->tensors[src];
	struct npu_loc ls, ld;
	struct ewalk w;
	struct npu_pb pb;
	npu_status st;

	if ((st = npu_cc_loc(cc, src, &ls)) || (st = npu_cc_loc(cc, dst, &ld)))
		return st;
	w.n = 1;
	w.count[0] = npu_ir_numel(t);
	w.stride[0] = 1;
	if (!w.count[0])
		return NPU_OK;
	npu_pb_init(&pb);
	st = dma_walk(&pb, &w, ls.seg, ls.off, &w, ld.seg, ld.off,
		      (unsigned)npu_dtype_size(t->dtype), npu_cc_hw_dtype(t->dtype));
	return finish(cc, &pb, st);
}

/* Reshape, Flatten, Squeeze, Unsqueeze, Identity: same bytes. */
npu_status npu_lower_alias(struct npu_cc *cc, const npu_ir_node *n)
{
	int in = n->inputs[0], out = n->outputs[0];
	struct npu_loc l;
	npu_status st;

	if ((st = npu_cc_loc(cc, in, &l)))
		return st;
	if (npu_cc_has_home(cc, out))	/* a graph output, a Concat slice: its own memory */
		return npu_cc_copy(cc, in, out);
	cc->loc[out] = l;
	return NPU_OK;
}

npu_status npu_lower_transpose(struct npu_cc *cc, const npu_ir_node *n)
{
	const npu_ir_tensor *x = npu_ir_input(cc->g, n, 0), *y = npu_ir_output(cc->g, n, 0);
	int64_t perm[NPU_MAX_RANK], xs[NPU_MAX_RANK], s = 1;
	const int64_t *p;
	struct ewalk src, dst;
	struct npu_loc lx, ly;
	struct npu_pb pb;
	int cnt, r = x->rank;
	npu_status st;

	if ((st = npu_ir_attr_ints(n, "perm", &p, &cnt)))
		return st;
	for (int i = 0; i < r; i++)
		perm[i] = cnt < 0 ? r - 1 - i : p[i];
	for (int d = r - 1; d >= 0; d--) {
		xs[d] = s;
		s *= x->dims[d];
	}
	dense(y, &dst);
	src.n = r;
	for (int l = 0; l < r; l++) {
		int od = r - 1 - l;	/* output dim at level l */

		src.count[l] = y->dims[od];
		src.stride[l] = xs[perm[od]];
	}
	if (!r)
		src = dst;
	if ((st = npu_cc_loc(cc, n->inputs[0], &lx)) || (st = npu_cc_loc(cc, n->outputs[0], &ly)))
		return st;
	npu_pb_init(&pb);
	st = dma_walk(&pb, &src, lx.seg, lx.off, &dst, ly.seg, ly.off,
		      (unsigned)npu_dtype_size(x->dtype), npu_cc_hw_dtype(x->dtype));
	return finish(cc, &pb, st);
}

npu_status npu_lower_concat(struct npu_cc *cc, const npu_ir_node *n)
{
	const npu_ir_tensor *y = npu_ir_output(cc->g, n, 0);
	unsigned esize = (unsigned)npu_dtype_size(y->dtype), hw = npu_cc_hw_dtype(y->dtype);
	int64_t axis, outer = 1, inner = 1, at = 0;
	struct npu_loc ly;
	struct npu_pb pb;
	npu_status st;

	if (npu_ir_attr_find(n, NPU_ATTR_FUSED))
		return NPU_OK;	/* its only reader makes it from its own input */
	if ((st = npu_ir_attr_int(n, "axis", 0, &axis)))
		return st;
	if (axis < 0)
		axis += y->rank;
	npu_ir_axis_sizes(y, axis, &outer, &inner);
	if ((st = npu_cc_loc(cc, n->outputs[0], &ly)))
		return st;
	npu_pb_init(&pb);
	for (int i = 0; i < n->n_inputs && !st; i++) {
		const npu_ir_tensor *x = npu_ir_input(cc->g, n, i);
		struct ewalk src, dst;
		struct npu_loc lx;
		int64_t len;

		if (!x)
			continue;
		len = x->dims[axis] * inner;
		if ((st = npu_cc_loc(cc, n->inputs[i], &lx)))
			break;
		/* Already in place (npu_cc_concat_slices): nothing to copy. */
		if (lx.seg == ly.seg && lx.off == ly.off + (uint64_t)(at * inner) * esize) {
			at += x->dims[axis];
			continue;
		}
		if (len && outer) {
			src = (struct ewalk){ 2, { len, outer }, { 1, len } };
			dst = (struct ewalk){ 2, { len, outer }, { 1, y->dims[axis] * inner } };
			st = dma_walk(&pb, &src, lx.seg, lx.off, &dst, ly.seg,
				      ly.off + (uint64_t)(at * inner) * esize, esize, hw);
		}
		at += x->dims[axis];
	}
	return finish(cc, &pb, st);
}

/*
 * Concat in place: when everything before the axis has size 1, each input
 * is one contiguous slice of the output, so a computed input can simply
 * live there and its producer writes it in place, instead of being copied
 * (read and written through DDR once more).  Decided before any node is
 * lowered (a producer comes before its Concat), as alias constraints the
 * homes and the memory plan follow (npu_cc_loc, npu_scratch.c): the input
 * is at a fixed offset in the output, and the two share one lifetime.
 * From the last node to the first, so an input that is itself a Concat's
 * output has its own inputs in its slice too.  Only tensors that have no
 * home of their own yet: not graph inputs or outputs, not constants, not
 * an input listed twice, not the slice of a later Concat.
 */
npu_status npu_cc_concat_slices(struct npu_cc *cc)
{
	const npu_ir_graph *g = cc->g;
	npu_status st = NPU_OK;

	for (int i = g->n_nodes - 1; i >= 0 && !st; i--) {
		const npu_ir_node *n = &g->nodes[i];
		const npu_ir_tensor *y;
		int64_t axis, outer = 1, inner = 1, at = 0;
		int yi;

		/* A Concat of run-time-sized inputs runs on the host, compacting them. */
		if (n->dead || strcmp(n->op, "Concat") || n->n_outputs < 1 || n->outputs[0] < 0 ||
		    npu_ir_node_dyn(cc->g, n))
			continue;
		yi = n->outputs[0];
		y = &g->tensors[yi];
		if ((st = npu_ir_attr_int(n, "axis", 0, &axis)))
			break;
		if (axis < 0)
			axis += y->rank;
		npu_ir_axis_sizes(y, axis, &outer, &inner);
		/* Its output in scratch: not a graph output (I/O), not a constant. */
		if (outer != 1 || npu_ir_is_const(y) || cc->loc[yi].seg != NPU_NO_SEG)
			continue;
		for (int k = 0; k < n->n_inputs; k++) {
			int t = n->inputs[k];
			const npu_ir_tensor *x = t >= 0 ? &g->tensors[t] : NULL;
			bool twice = false;

			if (!x)
				continue;
			for (int j = 0; j < n->n_inputs; j++)
				twice |= j != k && n->inputs[j] == t;
			if (!twice && !npu_ir_is_const(x) && x->producer >= 0 &&
			    x->dtype == y->dtype && !npu_cc_has_home(cc, t) &&
			    !npu_ir_is_graph_output(g, t)) {
				cc->home[t].slice_of = yi;
				cc->home[t].slice_off = (uint64_t)(at * inner) * npu_dtype_size(y->dtype);
			}
			at += x->dims[axis];
		}
	}
	return st;
}

/* Slice (opset 10+: starts, ends, axes, steps as constant inputs; before,
 * starts, ends and axes as attributes). */
npu_status npu_lower_slice(struct npu_cc *cc, const npu_ir_node *n)
{
	const npu_ir_tensor *x = npu_ir_input(cc->g, n, 0), *y = npu_ir_output(cc->g, n, 0);
	int64_t start[NPU_MAX_RANK] = { 0 }, step[NPU_MAX_RANK], xs[NPU_MAX_RANK], s = 1;
	int64_t st_v[NPU_MAX_RANK], ax_v[NPU_MAX_RANK], sp_v[NPU_MAX_RANK];
	int nst = 0, nax = -1, nsp = -1, r = x->rank;
	unsigned esize = (unsigned)npu_dtype_size(x->dtype);
	struct ewalk src, dst;
	struct npu_loc lx, ly;
	uint64_t base = 0;
	struct npu_pb pb;
	npu_status st;

	for (int d = 0; d < r; d++)
		step[d] = 1;
	/* Before opset 10 starts, ends and axes are attributes (no steps):
	 * the shape rule's plan reads them. */
	if (n->opset < 10) {
		int64_t len[NPU_MAX_RANK];

		if ((st = npu_ir_slice_plan(cc->g, n, start, step, len)))
			return st;
	} else if ((st = npu_ir_const_ints(npu_ir_input(cc->g, n, 1), st_v, NPU_MAX_RANK, &nst))) {
		return st;
	}
	if (n->opset >= 10 && npu_ir_input(cc->g, n, 3) &&
	    (st = npu_ir_const_ints(npu_ir_input(cc->g, n, 3), ax_v, NPU_MAX_RANK, &nax)))
		return st;
	if (n->opset >= 10 && npu_ir_input(cc->g, n, 4) &&
	    (st = npu_ir_const_ints(npu_ir_input(cc->g, n, 4), sp_v, NPU_MAX_RANK, &nsp)))
		return st;
	for (int i = 0; i < nst; i++) {
		int64_t a = nax < 0 ? i : ax_v[i], v = st_v[i], dim, stp = nsp < 0 ? 1 : sp_v[i];

		if (a < 0)
			a += r;
		if (a < 0 || a >= r)
			return npu_fail(NPU_ERR_FORMAT, "Slice axis out of range");
		dim = x->dims[a];
		if (v < 0)
			v += dim;
		/* Clamp as ONNX does: [0, dim] going up, [0, dim - 1] going down. */
		if (stp > 0)
			v = v < 0 ? 0 : v > dim ? dim : v;
		else
			v = v < 0 ? 0 : v > dim - 1 ? dim - 1 : v;
		start[a] = v;
		step[a] = stp;
	}
	for (int d = r - 1; d >= 0; d--) {
		xs[d] = s;
		s *= x->dims[d];
	}
	dense(y, &dst);
	src.n = r;
	for (int l = 0; l < r; l++) {
		int d = r - 1 - l;

		src.count[l] = y->dims[d];
		src.stride[l] = xs[d] * step[d];
		base += (uint64_t)(start[d] * xs[d]);
	}
	if (!npu_ir_numel(y))
		return NPU_OK;
	if ((st = npu_cc_loc(cc, n->inputs[0], &lx)) || (st = npu_cc_loc(cc, n->outputs[0], &ly)))
		return st;
	npu_pb_init(&pb);
	st = dma_walk(&pb, &src, lx.seg, lx.off + base * esize, &dst, ly.seg, ly.off, esize,
		      npu_cc_hw_dtype(x->dtype));
	return finish(cc, &pb, st);
}

/* Pad, mode "constant": the output starts as a constant block, then the
 * input is copied inside.  Both DMAs run on one engine, in order. */
npu_status npu_lower_pad(struct npu_cc *cc, const npu_ir_node *n)
{
	const npu_ir_tensor *x = npu_ir_input(cc->g, n, 0), *y = npu_ir_output(cc->g, n, 0);
	const npu_ir_tensor *pv = npu_ir_input(cc->g, n, 2);
	int64_t pads[2 * NPU_MAX_RANK], ys[NPU_MAX_RANK], s = 1;
	unsigned esize = (unsigned)npu_dtype_size(x->dtype);
	const char *mode;
	struct ewalk src, dst;
	struct npu_loc lx, ly;
	uint64_t base = 0, bytes = (uint64_t)npu_ir_numel(y) * esize, coff;
	uint8_t *fill;
	struct npu_pb pb;
	int np, r = x->rank;
	npu_status st;

	if ((st = npu_ir_attr_string(n, "mode", "constant", &mode)))
		return st;
	if (strcmp(mode, "constant"))
		return npu_fail(NPU_ERR_UNSUPPORTED, "Pad mode '%s'", mode);
	if (n->opset < 11) {
		const int64_t *p;

		if ((st = npu_ir_attr_ints(n, "pads", &p, &np)))
			return st;
		if (np != 2 * r)
			return npu_fail(NPU_ERR_FORMAT, "Pad: %d pads for rank %d", np, r);
		memcpy(pads, p, sizeof(*p) * (size_t)np);
	} else if ((st = npu_ir_const_ints(npu_ir_input(cc->g, n, 1), pads, 2 * NPU_MAX_RANK, &np)) ||
		   np != 2 * r) {
		return st ? st : npu_fail(NPU_ERR_UNSUPPORTED, "Pad with axes");
	}
	for (int i = 0; i < 2 * r; i++)
		if (pads[i] < 0)
			return npu_fail(NPU_ERR_UNSUPPORTED, "Pad with negative pads (cropping)");
	fill = calloc(1, bytes ? bytes : 1);
	if (!fill)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	if (pv && npu_ir_is_const(pv) && pv->bytes >= esize)
		for (uint64_t i = 0; i < bytes; i += esize)
			memcpy(fill + i, pv->data, esize);
	coff = npu_cc_const(cc, fill, bytes, &st);
	free(fill);
	if (st)
		return st;
	for (int d = r - 1; d >= 0; d--) {
		ys[d] = s;
		s *= y->dims[d];
		base += (uint64_t)(pads[d] * ys[d]);
	}
	dense(x, &src);
	dst.n = r;
	for (int l = 0; l < r; l++) {
		dst.count[l] = x->dims[r - 1 - l];
		dst.stride[l] = ys[r - 1 - l];
	}
	if ((st = npu_cc_loc(cc, n->inputs[0], &lx)) || (st = npu_cc_loc(cc, n->outputs[0], &ly)))
		return st;
	npu_pb_init(&pb);
	{
		struct ewalk all = { 1, { (int64_t)(bytes / esize) }, { 1 } };

		st = dma_walk(&pb, &all, cc->seg_const, coff, &all, ly.seg, ly.off, esize,
			      npu_cc_hw_dtype(x->dtype));
	}
	/* Same engine as the fill, so it runs after it. */
	if (!st && npu_ir_numel(x)) {
		uint32_t first = pb.n;

		st = dma_walk(&pb, &src, lx.seg, lx.off, &dst, ly.seg, ly.off + base * esize,
			      esize, npu_cc_hw_dtype(x->dtype));
		for (uint32_t i = first; i < pb.n; i++)
			pb.insns[i].params.dma.engine = 0;
		for (uint32_t i = 0; i < first; i++)
			pb.insns[i].params.dma.engine = 0;
	}
	return finish(cc, &pb, st);
}

/* Split: each output is a block of the input along the axis. */
npu_status npu_lower_split(struct npu_cc *cc, const npu_ir_node *n)
{
	const npu_ir_tensor *x = npu_ir_input(cc->g, n, 0);
	unsigned esize = (unsigned)npu_dtype_size(x->dtype), hw = npu_cc_hw_dtype(x->dtype);
	int64_t axis, outer = 1, inner = 1, at = 0;
	struct npu_loc lx;
	struct npu_pb pb;
	npu_status st;

	if ((st = npu_ir_attr_int(n, "axis", 0, &axis)))
		return st;
	if (axis < 0)
		axis += x->rank;
	npu_ir_axis_sizes(x, axis, &outer, &inner);
	if ((st = npu_cc_loc(cc, n->inputs[0], &lx)))
		return st;
	npu_pb_init(&pb);
	for (int i = 0; i < n->n_outputs && !st; i++) {
		const npu_ir_tensor *y = npu_ir_output(cc->g, n, i);
		struct ewalk src, dst;
		struct npu_loc ly;
		int64_t len;

		if (!y)
			continue;
		len = y->dims[axis] * inner;
		if ((st = npu_cc_loc(cc, n->outputs[i], &ly)))
			break;
		if (len && outer) {
			src = (struct ewalk){ 2, { len, outer }, { 1, x->dims[axis] * inner } };
			dst = (struct ewalk){ 2, { len, outer }, { 1, len } };
			st = dma_walk(&pb, &src, lx.seg, lx.off + (uint64_t)(at * inner) * esize,
				      &dst, ly.seg, ly.off, esize, hw);
		}
		at += y->dims[axis];
	}
	return finish(cc, &pb, st);
}
