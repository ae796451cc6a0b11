// SPDX-License-Identifier: MIT
/*
 * Elementwise operators on the CVU: unary functions, binary operators and
 * Where (SELECT) with numpy broadcasting.
 *
 * The output and every input are seen through one "view": the output's
 * dimensions, adjacent ones merged where every operand is contiguous
 * across them, with each input's element stride per dimension (0 where it
 * is broadcast).  Tiles are ranges of the outermost view dimension (or of
 * the elements, when the view is flat); DMA walkers expand broadcast
 * inputs into dense HBSM buffers, the CVU works on dense data.
 *
 * Which CVU function an operator is, and whether it takes one input or
 * two, is in its registry entry (npu_ops.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_lower.h"
#include "compile/npu_ops.h"

static uint32_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

#define MAX_DIMS 5

struct view {
	int nd;				/* dims, [0] innermost */
	int64_t count[MAX_DIMS];
	int64_t stride[4][MAX_DIMS];	/* elements; [0] output, [1..] inputs */
};

/* Build the merged broadcast view of output @o and inputs @in[0..nin). */
static npu_status make_view(const npu_ir_tensor *o, const npu_ir_tensor *const *in,
			    int nin, struct view *v)
{
	int64_t cnt[NPU_MAX_RANK], st[4][NPU_MAX_RANK];
	int r = o->rank, nd = 0;

	for (int k = 0; k <= nin; k++) {
		const npu_ir_tensor *t = k ? in[k - 1] : o;
		int64_t s = 1;

		for (int d = r - 1; d >= 0; d--) {
			int td = d - (r - t->rank);
			int64_t dim = td >= 0 ? t->dims[td] : 1;

			st[k][d] = dim == 1 && o->dims[d] != 1 ? 0 : s;
			s *= dim;
		}
	}
	for (int d = 0; d < r; d++)
		cnt[d] = o->dims[d];
	/* Innermost first, merging a dim into the one inside it when every
	 * operand steps across the boundary as if they were one dim. */
	memset(v, 0, sizeof(*v));
	for (int d = r - 1; d >= 0; d--) {
		if (cnt[d] == 1)
			continue;
		if (nd > 0) {
			bool merge = true;

			for (int k = 0; k <= nin && merge; k++)
				if (st[k][d] != v->stride[k][nd - 1] * v->count[nd - 1])
					merge = false;
			if (merge) {
				v->count[nd - 1] *= cnt[d];
				continue;
			}
		}
		if (nd == MAX_DIMS)
			return npu_fail(NPU_ERR_UNSUPPORTED,
					"broadcast pattern needs more than %d loop levels", MAX_DIMS);
		v->count[nd] = cnt[d];
		for (int k = 0; k <= nin; k++)
			v->stride[k][nd] = st[k][d];
		nd++;
	}
	if (!nd) {
		v->count[0] = 1;
		for (int k = 0; k <= nin; k++)
			v->stride[k][0] = 1;
		nd = 1;
	}
	v->nd = nd;
	return NPU_OK;
}

/* CVU parameters of @n's function. */
static npu_status cvu_params(struct npu_cc *cc, const npu_ir_node *n,
			     const struct npu_op *f, struct npu_hw_cvu_params *p)
{
	memset(p, 0, sizeof(*p));
	p->fn = (uint8_t)npu_op_cvu_fn(f, n);
	if (f->cvu.kind == NPU_OP_CVU_BINARY)
		return NPU_OK;
	npu_status st = NPU_OK;
	float a = 0.0f, b = 0.0f;	/* set by the getters unless they fail */

	if (f->cvu.fn == NPU_FN_LEAKY_RELU) {
		st = npu_ir_attr_float(n, "alpha", 0.01f, &a);
		p->imm[0] = f32_bits(a);
	} else if (f->cvu.fn == NPU_FN_HARDSIGMOID) {
		st = npu_ir_attr_float(n, "alpha", 0.2f, &a);
		if (!st)
			st = npu_ir_attr_float(n, "beta", 0.5f, &b);
		p->imm[0] = f32_bits(a);
		p->imm[1] = f32_bits(b);
	} else if (f->cvu.fn == NPU_FN_ELU || f->cvu.fn == NPU_FN_CELU ||
		   f->cvu.fn == NPU_FN_THRESHOLDED_RELU) {
		st = npu_ir_attr_float(n, "alpha", 1.0f, &a);
		p->imm[0] = f32_bits(a);
	} else if (f->cvu.fn == NPU_FN_SELU) {
		/* ONNX's defaults, to float precision. */
		st = npu_ir_attr_float(n, "alpha", 1.67326319217681884765625f, &a);
		if (!st)
			st = npu_ir_attr_float(n, "gamma", 1.05070102214813232421875f, &b);
		p->imm[0] = f32_bits(a);
		p->imm[1] = f32_bits(b);
	} else if (f->cvu.fn == NPU_FN_SHRINK) {
		st = npu_ir_attr_float(n, "lambd", 0.5f, &a);
		if (!st)
			st = npu_ir_attr_float(n, "bias", 0.0f, &b);
		p->imm[0] = f32_bits(a);
		p->imm[1] = f32_bits(b);
	} else if (f->cvu.fn == NPU_FN_CLIP) {
		float lo = -INFINITY, hi = INFINITY, v;
		int cnt;

		if (n->opset < 11) {
			st = npu_ir_attr_float(n, "min", lo, &lo);
			if (!st)
				st = npu_ir_attr_float(n, "max", hi, &hi);
		} else {
			const npu_ir_tensor *ta = npu_ir_input(cc->g, n, 1);
			const npu_ir_tensor *tb = npu_ir_input(cc->g, n, 2);

			if ((ta && !npu_ir_is_const(ta)) || (tb && !npu_ir_is_const(tb)))
				return npu_fail(NPU_ERR_UNSUPPORTED, "Clip bounds must be constants");
			if (ta && !npu_ir_const_floats(ta, &v, 1, &cnt) && cnt == 1)
				lo = v;
			if (tb && !npu_ir_const_floats(tb, &v, 1, &cnt) && cnt == 1)
				hi = v;
		}
		p->imm[0] = f32_bits(lo);
		p->imm[1] = f32_bits(hi);
	}
	return st;
}

/*
 * One eltwise instruction per tile over the view @v of output @lo and
 * inputs @li[0..nin): each operand gets an HBSM buffer of @buf bytes
 * (input k at k * buf, the output at (@nbuf - 1) * buf), DMA walkers expand
 * broadcast inputs, the output is written back dense.  @dt are the
 * operands' device dtypes ([0] the output).
 */
static npu_status eltwise_tiles(struct npu_cc *cc, const struct view *v, int nin,
				const struct npu_loc *li, const struct npu_loc *lo,
				const unsigned *dt, unsigned opcode,
				const struct npu_hw_cvu_params *p, unsigned nbuf)
{
	uint64_t buf = cc->hbsm / nbuf / 4 * 4, ybuf = (nbuf - 1) * buf;
	static const unsigned slot[3] = { NPU_OPND_SRC0, NPU_OPND_SRC1, NPU_OPND_SRC2 };
	struct npu_tile *tiles = NULL;
	unsigned ntiles = 0, esz[4];
	uint64_t inner = 1, outer, rows_per;
	npu_status st = NPU_OK;

	for (int k = 0; k <= nin; k++)
		esz[k] = npu_cc_hw_size(dt[k]);
	for (int d = 0; d < v->nd - 1; d++)
		inner *= v->count[d];
	outer = (uint64_t)v->count[v->nd - 1];
	if (v->nd == 1) {
		/* Flat: any element range is a tile. */
		inner = 1;
	}
	/* Rows sized for 4-byte elements: every operand's fits its buffer. */
	if (inner * 4 > buf)
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"elementwise rows of %llu elements do not fit the HBSM",
				(unsigned long long)inner);
	rows_per = buf / (inner * 4);
	/* Spread over the workers when the tensor is big enough. */
	if (outer / cc->workers >= 1 && (outer + cc->workers - 1) / cc->workers < rows_per)
		rows_per = (outer + cc->workers - 1) / cc->workers;
	if (rows_per > (1u << 24) / inner)
		rows_per = (1u << 24) / inner;
	ntiles = (unsigned)((outer + rows_per - 1) / rows_per);
	tiles = calloc(ntiles, sizeof(*tiles));
	if (!tiles)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");

	for (unsigned i = 0; i < ntiles && !st; i++) {
		struct npu_tile *t = &tiles[i];
		uint64_t r0 = i * rows_per, rows = outer - r0 < rows_per ? outer - r0 : rows_per;
		uint64_t elems = rows * inner;
		struct npu_hw_insn *op = &t->op[0];

		for (int k = 0; k < nin; k++) {
			struct npu_tile_in *ti = &t->in[t->nin++];
			int64_t es = esz[k + 1];
			int l;

			memset(&ti->walk, 0, sizeof(ti->walk));
			ti->walk.space = NPU_SPACE_DDR;
			ti->walk.dtype = (uint8_t)dt[k + 1];
			ti->walk.base = li[k].off + r0 * (uint64_t)v->stride[k + 1][v->nd - 1] * es;
			ti->seg = li[k].seg;
			if (v->nd == 1) {
				npu_twu_lvl(&ti->walk, 0, (int64_t)elems, v->stride[k + 1][0] * es);
			} else {
				for (l = 0; l < v->nd - 1; l++)
					npu_twu_lvl(&ti->walk, l, v->count[l], v->stride[k + 1][l] * es);
				npu_twu_lvl(&ti->walk, l, (int64_t)rows, v->stride[k + 1][l] * es);
			}
			ti->hbsm = (uint32_t)(k * buf);
			npu_twu_flat(&op->opnd[slot[k]], NPU_SPACE_HBSM, dt[k + 1], k * buf, elems);
		}
		op->unit = NPU_UNIT_CVU;
		op->opcode = (uint8_t)opcode;
		op->params.cvu = *p;
		npu_twu_flat(&op->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, dt[0], ybuf, elems);
		t->nop = 1;
		/* The output is dense row-major: the tile is one block. */
		st = npu_tile_out(t, (uint32_t)ybuf, 1, (uint32_t)(elems * esz[0]), 0,
				  lo->seg, lo->off + r0 * inner * esz[0], 0);
	}
	if (!st)
		st = npu_sched_emit(cc, tiles, ntiles);
	npu_tiles_free(tiles, ntiles);
	return st;
}

/*
 * The dtypes an elementwise operator takes: float32 in and out, except
 * that comparisons and logic (a bool output) read every device dtype
 * (the CVU reads them exactly as fp32, and compares two int32 as
 * integers), and Add, Sub and Mul of int32 into int32 (int64 is int32 on
 * the device) are the CVU's exact int32 arithmetic, wrapping as int32 does.
 */
static bool eltwise_dtype_ok(const npu_ir_tensor *t, bool bool_out, bool int_arith)
{
	if (int_arith)
		return t->dtype == NPU_DTYPE_INT32;
	return t->dtype == NPU_DTYPE_FLOAT32 || (bool_out && npu_cc_hw_dtype(t->dtype));
}

static bool is_int_arith(const struct npu_op *f, const npu_ir_tensor *o)
{
	return o->dtype == NPU_DTYPE_INT32 && f->cvu.kind == NPU_OP_CVU_BINARY &&
	       (f->cvu.fn == NPU_FN_ADD || f->cvu.fn == NPU_FN_SUB || f->cvu.fn == NPU_FN_MUL ||
		f->cvu.fn == NPU_FN_MOD);
}

npu_status npu_lower_eltwise(struct npu_cc *cc, const npu_ir_node *n)
{
	const struct npu_op *f = npu_op_get(n->op, n->opset);
	const npu_ir_tensor *o = npu_ir_output(cc->g, n, 0), *in[2] = { NULL, NULL };
	bool binary = f && f->cvu.kind == NPU_OP_CVU_BINARY;
	bool bool_out = o && o->dtype == NPU_DTYPE_BOOL;
	bool int_arith = f && o && is_int_arith(f, o);
	int nin = binary ? 2 : 1;
	struct npu_hw_cvu_params p;
	struct npu_loc lo, li[2];
	unsigned dt[3];
	struct view v;
	npu_status st;

	if (!f || f->cvu.kind == NPU_OP_CVU_NONE)
		return npu_fail(NPU_ERR_INTERNAL, "%s is not an elementwise CVU operator", n->op);
	if (binary && n->n_inputs == 1)
		return npu_lower_alias(cc, n);	/* Max/Min of one input */
	if (binary && n->n_inputs > 2)
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s of %d inputs (at most 2)", n->op,
				n->n_inputs);
	for (int k = 0; k < nin; k++) {
		in[k] = npu_ir_input(cc->g, n, k);
		if (!in[k])
			return npu_fail(NPU_ERR_FORMAT, "missing input %d", k);
		if (!eltwise_dtype_ok(in[k], bool_out, int_arith))
			return npu_fail(NPU_ERR_UNSUPPORTED, "%s on %s tensors", n->op,
					npu_dtype_str(in[k]->dtype));
		dt[k + 1] = npu_cc_hw_dtype(in[k]->dtype);
		if ((st = npu_cc_loc(cc, n->inputs[k], &li[k])))
			return st;
	}
	if (o->dtype != NPU_DTYPE_FLOAT32 && !bool_out && !int_arith)
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s producing %s", n->op,
				npu_dtype_str(o->dtype));
	dt[0] = npu_cc_hw_dtype(o->dtype);
	if ((st = npu_cc_loc(cc, n->outputs[0], &lo)) ||
	    (st = cvu_params(cc, n, f, &p)) || (st = make_view(o, in, nin, &v)))
		return st;
	/* Each operand gets a third of HBSM (the output the last, also when unary). */
	return eltwise_tiles(cc, &v, nin, li, &lo, dt,
			     binary ? NPU_CVU_BINARY : NPU_CVU_UNARY, &p, 3);
}

/*
 * Where with a condition computed at run time: CVU SELECT, which copies
 * the chosen value's bits (exact, also for inf and NaN in the branch not
 * taken), all three inputs broadcast as numpy says.  A constant condition
 * never gets here: rewrite_select.c makes it a float mask first.
 */
npu_status npu_lower_where(struct npu_cc *cc, const npu_ir_node *n)
{
	const npu_ir_tensor *o = npu_ir_output(cc->g, n, 0), *in[3];
	struct npu_hw_cvu_params p;
	struct npu_loc lo, li[3];
	unsigned dt[4];
	struct view v;
	npu_status st;

	for (int k = 0; k < 3; k++) {
		in[k] = npu_ir_input(cc->g, n, k);
		if (!in[k])
			return npu_fail(NPU_ERR_FORMAT, "missing input %d", k);
		dt[k + 1] = npu_cc_hw_dtype(in[k]->dtype);
		if (!dt[k + 1] || npu_cc_hw_size(dt[k + 1]) > 4)
			return npu_fail(NPU_ERR_UNSUPPORTED, "Where on %s tensors",
					npu_dtype_str(in[k]->dtype));
		if ((st = npu_cc_loc(cc, n->inputs[k], &li[k])))
			return st;
	}
	dt[0] = npu_cc_hw_dtype(o->dtype);
	if (in[0]->dtype != NPU_DTYPE_BOOL || dt[2] != dt[0] || dt[3] != dt[0])
		return npu_fail(NPU_ERR_INTERNAL, "Where without a bool condition and values of the output's type");
	memset(&p, 0, sizeof(p));
	if ((st = npu_cc_loc(cc, n->outputs[0], &lo)) || (st = make_view(o, in, 3, &v)))
		return st;
	/* Four operands: a quarter of HBSM each. */
	return eltwise_tiles(cc, &v, 3, li, &lo, dt, NPU_CVU_SELECT, &p, 4);
}
