// SPDX-License-Identifier: MIT
/*
 * The compiler driver: IR graph -> compiled model.  Places tensors in DDR,
 * lowers node by node (lower_*.c), plans the scratch once every node is
 * lowered (npu_scratch.c), and describes the inputs and outputs.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_lower.h"
#include "compile/npu_compile.h"
#include "compile/npu_narrow.h"
#include "compile/npu_ops.h"
#include "compile/npu_rewrite.h"
#include "host/npu_host.h"
#include "npu_debug.h"

#define ALIGN 64

static uint64_t align_up(uint64_t v)
{
	return (v + ALIGN - 1) & ~(uint64_t)(ALIGN - 1);
}

unsigned npu_cc_hw_dtype(npu_dtype t)
{
	switch (t) {
	case NPU_DTYPE_FLOAT32: return NPU_DT_FP32;
	case NPU_DTYPE_FLOAT16: return NPU_DT_FP16;
	case NPU_DTYPE_BFLOAT16: return NPU_DT_BF16;
	case NPU_DTYPE_INT8: return NPU_DT_INT8;
	case NPU_DTYPE_UINT8: return NPU_DT_UINT8;
	case NPU_DTYPE_BOOL: return NPU_DT_UINT8;	/* one byte, 0 or 1 */
	case NPU_DTYPE_INT32: return NPU_DT_INT32;
	default: return 0;
	}
}

unsigned npu_cc_hw_size(unsigned hw_dtype)
{
	switch (hw_dtype) {
	case NPU_DT_INT8:
	case NPU_DT_UINT8: return 1;
	case NPU_DT_BF16:
	case NPU_DT_FP16: return 2;
	case NPU_DT_INT32:
	case NPU_DT_FP32: return 4;
	default: return 0;
	}
}

uint64_t npu_cc_const(struct npu_cc *cc, const void *data, uint64_t bytes,
		      npu_status *st)
{
	uint64_t off = align_up(cc->clen), need = off + (bytes ? bytes : 1);

	if (need > cc->ccap) {
		uint64_t cap = cc->ccap ? cc->ccap : 65536;
		uint8_t *p;

		while (cap < need)
			cap *= 2;
		p = realloc(cc->cdata, cap);
		if (!p) {
			*st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory for constants");
			return 0;
		}
		memset(p + cc->ccap, 0, cap - cc->ccap);
		cc->cdata = p;
		cc->ccap = cap;
	}
	memcpy(cc->cdata + off, data, bytes);
	cc->clen = need;
	return off;
}

npu_status npu_cc_act(const npu_ir_node *n, struct npu_hw_tcu_params *p)
{
	int64_t fn;
	float a, b;
	npu_status st;

	if (!npu_ir_attr_find(n, "npu_act"))
		return NPU_OK;
	if ((st = npu_ir_attr_int(n, "npu_act", 0, &fn)) ||
	    (st = npu_ir_attr_float(n, "npu_act_alpha", 0.0f, &a)) ||
	    (st = npu_ir_attr_float(n, "npu_act_beta", 0.0f, &b)))
		return st;
	p->act = (uint8_t)fn;
	memcpy(&p->act_alpha, &a, 4);
	memcpy(&p->act_beta, &b, 4);
	return NPU_OK;
}

static uint64_t tensor_bytes(const npu_ir_tensor *t)
{
	return (uint64_t)npu_ir_numel(t) * npu_dtype_size(t->dtype);
}

/* Give tensor @id its home if it has none yet (not a use of it). */
static npu_status place(struct npu_cc *cc, int id)
{
	const npu_ir_tensor *t = &cc->g->tensors[id];
	int whole = cc->home[id].slice_of;
	npu_status st = NPU_OK;
	uint64_t off;

	if (cc->loc[id].seg != NPU_NO_SEG)
		return NPU_OK;
	if (npu_ir_is_const(t)) {
		off = npu_cc_const(cc, t->data, t->bytes, &st);
		if (st)
			return st;
		cc->loc[id] = (struct npu_loc){ cc->seg_const, off };
	} else if (whole >= 0) {
		/* Its slice of a Concat's output (npu_cc_concat_slices). */
		if ((st = place(cc, whole)))
			return st;
		cc->loc[id] = (struct npu_loc){ cc->loc[whole].seg,
						cc->loc[whole].off + cc->home[id].slice_off };
	} else {
		off = npu_scratch_block(cc, tensor_bytes(t), id);
		if (cc->blocks_oom)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		cc->loc[id] = (struct npu_loc){ cc->seg_scratch, off };
	}
	return NPU_OK;
}

npu_status npu_cc_loc(struct npu_cc *cc, int id, struct npu_loc *out)
{
	npu_status st = place(cc, id);

	if (st)
		return st;
	npu_scratch_touch(cc, id);
	*out = cc->loc[id];
	return NPU_OK;
}

bool npu_cc_has_home(const struct npu_cc *cc, int id)
{
	return cc->loc[id].seg != NPU_NO_SEG || cc->home[id].slice_of >= 0;
}

npu_status npu_cc_grow(struct npu_cc *cc)
{
	int n = cc->g->n_tensors;
	struct npu_loc *l;
	struct npu_home *h;

	if (n <= cc->nloc)
		return NPU_OK;
	l = realloc(cc->loc, (size_t)n * sizeof(*l));
	if (l)
		cc->loc = l;
	h = l ? realloc(cc->home, (size_t)n * sizeof(*h)) : NULL;
	if (!h)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	cc->home = h;
	for (int i = cc->nloc; i < n; i++) {
		cc->loc[i] = (struct npu_loc){ NPU_NO_SEG, 0 };
		cc->home[i] = (struct npu_home){ .slice_of = -1, .first = INT_MAX, .last = -1 };
	}
	cc->nloc = n;
	return NPU_OK;
}

/*
 * Describe graph input or output @id.  @wide: its type at the model's
 * boundary when the device computes it in another (npu_narrow.c: int64
 * as int32, float64 as float32 ...), else 0: the caller's tensor keeps
 * that type and its size, the I/O slot holds the device type and libnpu
 * converts on the host (npu_io_dev_bytes()).
 */
npu_status npu_cc_dyn(struct npu_cc *cc, int t, uint32_t *dyn)
{
	int *ids;

	*dyn = 0;
	if (t < 0 || !cc->g->tensors[t].dyn)
		return NPU_OK;
	for (uint32_t i = 0; i < cc->ndyn; i++)
		if (cc->dyn_ids[i] == t) {
			*dyn = i + 1;
			return NPU_OK;
		}
	ids = realloc(cc->dyn_ids, (cc->ndyn + 1) * sizeof(*ids));
	if (!ids)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	cc->dyn_ids = ids;
	ids[cc->ndyn++] = t;
	*dyn = cc->ndyn;
	return NPU_OK;
}

static npu_status add_io(struct npu_cc *cc, int id, bool output, npu_dtype wide)
{
	const npu_ir_tensor *t = &cc->g->tensors[id];
	struct npu_io **arr = output ? &cc->cm->outputs : &cc->cm->inputs;
	uint32_t *n = output ? &cc->cm->noutputs : &cc->cm->ninputs;
	struct npu_io *io, *grown;
	uint64_t off;

	if (!npu_ir_shape_known(t) || !npu_dtype_size(t->dtype))
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s '%s' has no static shape and dtype",
				output ? "output" : "input", t->name);
	grown = realloc(*arr, (*n + 1) * sizeof(**arr));
	if (!grown)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	*arr = grown;
	io = &grown[(*n)++];
	memset(io, 0, sizeof(*io));
	io->name = strdup(t->name);
	if (!io->name)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	io->info.name = io->name;
	io->info.dtype = wide ? wide : t->dtype;
	io->info.rank = t->rank;
	memcpy(io->info.dims, t->dims, sizeof(t->dims));
	io->info.bytes = (size_t)npu_ir_numel(t) * npu_dtype_size(io->info.dtype);
	/* Run-time size (issue 17): -1 where the run decides, bytes the bound. */
	for (int d = 0; output && d < t->rank; d++)
		if (t->dyn & (1u << d))
			io->info.dims[d] = -1;
	if (output && npu_cc_dyn(cc, id, &io->dyn))
		return NPU_ERR_NO_MEMORY;
	if (t->quant.count == 1) {
		io->info.scale = t->quant.scale[0];
		io->info.zero_point = t->quant.zero_point[0];
	}
	if (cc->loc[id].seg == NPU_NO_SEG) {
		off = align_up(cc->io_len);
		cc->io_len = off + (npu_io_dev_bytes(&io->info) ? npu_io_dev_bytes(&io->info) : 1);
		cc->loc[id] = (struct npu_loc){ cc->seg_io, off };
	}
	io->seg = cc->seg_io;
	io->offset = cc->loc[id].off;
	return NPU_OK;
}

/*
 * A constant graph output: an I/O slot filled by a DMA from CONST.  An
 * int64 one (@wide) is copied from an int32 copy of it, its slot's type
 * (constants of the other types narrowing changes are converted already).
 */
static npu_status const_output(struct npu_cc *cc, int id, npu_dtype wide)
{
	bool copy = wide && cc->g->tensors[id].dtype == NPU_DTYPE_INT64;
	struct npu_loc src;
	npu_status st;
	uint64_t off;
	int from = id;

	if (copy && (st = npu_narrow_const(cc->g, id, "a graph output", &from)))
		return st;
	if (copy && (st = npu_cc_grow(cc)))
		return st;
	/* The constant's own home first, then the output's I/O slot. */
	if ((st = npu_cc_loc(cc, from, &src)))
		return st;
	cc->loc[id].seg = NPU_NO_SEG;
	if ((st = add_io(cc, id, true, wide)))
		return st;
	off = cc->loc[id].off;
	if (from == id)
		cc->loc[id] = src;
	{
		/* A temporary alias tensor is not needed: copy by hand. */
		int tmp;
		const npu_ir_tensor *t = &cc->g->tensors[from];
		int64_t dims[NPU_MAX_RANK];

		memcpy(dims, t->dims, sizeof(dims));
		if ((st = npu_ir_add_tensor(cc->g, NULL, t->dtype, t->rank, dims, &tmp)) ||
		    (st = npu_cc_grow(cc)))
			return st;
		cc->loc[tmp] = (struct npu_loc){ cc->seg_io, off };
		return npu_cc_copy(cc, from, tmp);
	}
}

static npu_status add_segment(struct npu_cmodel *cm, uint32_t kind, uint32_t *idx)
{
	struct npu_seg *s = realloc(cm->segs, (cm->nsegs + 1) * sizeof(*s));

	if (!s)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	cm->segs = s;
	memset(&s[cm->nsegs], 0, sizeof(*s));
	s[cm->nsegs].kind = kind;
	s[cm->nsegs].size = ALIGN;
	*idx = cm->nsegs++;
	return NPU_OK;
}

/*
 * The NPU_SEG_STATE segment of a generation program and its tensors'
 * homes (tgt->state): fixed offsets, outside the scratch plan, so their
 * bytes are never shared and live across runs.
 */
static npu_status place_state(struct npu_cc *cc, const struct npu_compile_target *tgt)
{
	uint32_t seg = 0;
	npu_status st;

	if (!tgt->n_state)
		return NPU_OK;
	if ((st = add_segment(cc->cm, NPU_SEG_STATE, &seg)))
		return st;
	cc->cm->segs[seg].size = align_up(tgt->state_bytes ? tgt->state_bytes : 1);
	for (unsigned i = 0; i < tgt->n_state; i++) {
		int id = npu_ir_find_tensor(cc->g, tgt->state[i].name);

		if (id < 0)
			return npu_fail(NPU_ERR_INTERNAL, "state tensor '%s' is not in the graph",
					tgt->state[i].name);
		if (tgt->state[i].offset % ALIGN ||
		    tgt->state[i].offset + tensor_bytes(&cc->g->tensors[id]) > tgt->state_bytes)
			return npu_fail(NPU_ERR_INTERNAL,
					"state tensor '%s' at offset %llu does not fit the %llu state bytes",
					tgt->state[i].name, (unsigned long long)tgt->state[i].offset,
					(unsigned long long)tgt->state_bytes);
		cc->loc[id] = (struct npu_loc){ seg, tgt->state[i].offset };
	}
	return NPU_OK;
}

/* Tensor @id lives in the state segment (no I/O slot). */
static bool is_state(const struct npu_cc *cc, const struct npu_compile_target *tgt, int id)
{
	for (unsigned i = 0; i < tgt->n_state; i++)
		if (!strcmp(cc->g->tensors[id].name, tgt->state[i].name))
			return true;
	return false;
}

static npu_dtype is_wide(const npu_dtype *wide, int nwide, int id)
{
	return wide && id < nwide ? wide[id] : 0;
}

/* NPU_DEBUG=ir: the graph after pass @pass. */
static void debug_graph(const npu_ir_graph *g, const char *pass)
{
	if (!npu_debug_on(NPU_DEBUG_IR))
		return;
	flockfile(stderr);
	fprintf(stderr, "npu ir: after %s\n", pass);
	npu_ir_dump(g, stderr);
	funlockfile(stderr);
}

/* NPU_DEBUG=rewrites: one line per rewrite that applied. */
static void debug_rewrite(void *arg, const char *op, int fn, const npu_ir_node *n)
{
	char lbl[96];

	(void)arg;
	npu_debug(NPU_DEBUG_REWRITES, "%s rewrite %d applied to node %s: %s", op, fn,
		  npu_ir_node_label(n, lbl, sizeof(lbl)),
		  n->dead ? "replaced by new nodes" : "edited in place");
}

/* Forget the work items from @from on (a lowering that failed part way). */
static void drop_work(struct npu_cc *cc, unsigned from)
{
	for (unsigned i = from; i < cc->nwork; i++) {
		npu_tiles_free(cc->work[i].tiles, cc->work[i].ntiles);
		npu_pb_free(&cc->work[i].dma);
		npu_host_step_free(cc->work[i].host);
	}
	cc->nwork = from;
}

/*
 * Node @n has no NPU lowering: a host step with tgt->allow_cpu_fallback
 * (lower_host.c), else the registry's refusal, which then says that the
 * option would run it when the host has an implementation.
 */
static npu_status fallback_or_refuse(struct npu_cc *cc, const struct npu_compile_target *tgt,
				     const npu_ir_node *n)
{
	const struct npu_host_op *op = npu_host_op_get(n->op, n->opset);
	char msg[768], lbl[96];
	npu_status st;

	npu_ir_node_label(n, lbl, sizeof(lbl));
	if (tgt->allow_cpu_fallback) {
		st = npu_lower_host(cc, n);
		if (!st)
			return NPU_OK;
		snprintf(msg, sizeof(msg), "%s", npu_last_error());
		return npu_fail(st, "operator '%s' (node %s, opset %d) is not supported by the NPU compiler, and %s",
				n->op, lbl, n->opset, msg);
	}
	st = npu_op_refuse(cc->g, n);
	if (!op || !st)
		return st;
	snprintf(msg, sizeof(msg), "%s", npu_last_error());
	return npu_fail(st, "%s; compile with allow_cpu_fallback (npu-run --cpu-fallback) to run it on the CPU",
			msg);
}

/*
 * Node @n reads or writes a tensor of run-time size (npu_ir_tensor.dyn,
 * issue 17) and the CPU fallback is on: a host step, or a refusal that
 * says why the node has to run on the host.
 */
static npu_status dyn_host(struct npu_cc *cc, const npu_ir_node *n)
{
	const npu_ir_tensor *x = NULL;
	char msg[768], lbl[96];
	npu_status st = npu_lower_host(cc, n);

	if (!st)
		return NPU_OK;
	for (int i = 0; i < n->n_inputs && !x; i++)
		if (n->inputs[i] >= 0 && cc->g->tensors[n->inputs[i]].dyn)
			x = &cc->g->tensors[n->inputs[i]];
	snprintf(msg, sizeof(msg), "%s", npu_last_error());
	npu_ir_node_label(n, lbl, sizeof(lbl));
	if (!x)
		return npu_fail(st, "operator '%s' (node %s, opset %d) has an output of run-time size, which only the CPU fallback computes, and %s",
				n->op, lbl, n->opset, msg);
	return npu_fail(st, "operator '%s' (node %s, opset %d) reads '%s', whose size is known only at run time (an output of NonZero, NonMaxSuppression, Unique or Compress, or computed from one), so it has to run on the host, and %s",
			n->op, lbl, n->opset, x->name, msg);
}

/* Node @n has outputs and none of them has an element. */
static bool no_elements(const npu_ir_graph *g, const npu_ir_node *n)
{
	int outs = 0;

	for (int i = 0; i < n->n_outputs; i++) {
		const npu_ir_tensor *y = npu_ir_output(g, n, i);

		if (y && npu_ir_numel(y))
			return false;
		outs += y != NULL;
	}
	return outs > 0;
}

/* Lower node @i (cc->cur_node). */
static npu_status lower_node(struct npu_cc *cc, const struct npu_compile_target *tgt, int i)
{
	const npu_ir_node *n = &cc->g->nodes[i];
	npu_lower_fn fn;
	char label[96];
	unsigned nwork;
	npu_status st;

	if (n->dead)
		return NPU_OK;
	cc->cur_node = i;
	/* Tensors of run-time size: the host computes the node, or nothing does. */
	if (npu_ir_node_dyn(cc->g, n))
		return tgt->allow_cpu_fallback ? dyn_host(cc, n) : npu_op_refuse(cc->g, n);
	fn = npu_op_lowering(n);
	/* Outputs without elements (Trilu of [3, 0, 5]): nothing to
	 * compute, even for an operator only rewrites make runnable
	 * (the rewrite pass leaves empty nodes alone). */
	if (!fn && no_elements(cc->g, n))
		return NPU_OK;
	if (!fn || !npu_op_supported(cc->g, n))
		return fallback_or_refuse(cc, tgt, n);
	nwork = cc->nwork;
	st = fn(cc, n);
	if (st == NPU_ERR_UNSUPPORTED && tgt->allow_cpu_fallback &&
	    npu_host_op_get(n->op, n->opset)) {
		/* The lowering refused this node: drop what it made, run it on the host. */
		drop_work(cc, nwork);
		st = fallback_or_refuse(cc, tgt, n);
	}
	if (st) {
		char msg[768];

		snprintf(msg, sizeof(msg), "%s", npu_last_error());
		st = npu_fail(st, "node %s (%s): %s%s",
			      npu_ir_node_label(n, label, sizeof(label)), n->op, msg,
			      st == NPU_ERR_UNSUPPORTED && !tgt->allow_cpu_fallback &&
			      npu_host_op_get(n->op, n->opset) ?
			      "; compile with allow_cpu_fallback (npu-run --cpu-fallback) to run it on the CPU" : "");
	}
	return st;
}

/*
 * Lower every node in graph order, or in cc->seq's order with its control
 * steps (a run-time If, npu_control.c), whose targets then become work
 * items.
 */
static npu_status lower_all(struct npu_cc *cc, const struct npu_compile_target *tgt)
{
	unsigned *seq_work;
	npu_status st = NPU_OK;

	if (!cc->seq) {
		for (int i = 0; !st && i < cc->g->n_nodes; i++)
			st = lower_node(cc, tgt, i);
		return st;
	}
	seq_work = calloc(cc->nseq + 1, sizeof(*seq_work));
	if (!seq_work)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (unsigned k = 0; !st && k < cc->nseq; k++) {
		const struct npu_cc_seq *e = &cc->seq[k];

		seq_work[k] = cc->nwork;
		if (e->node >= 0) {
			st = lower_node(cc, tgt, e->node);
			/* A Loop's begin or end: its control step goes to element target. */
			for (unsigned w = seq_work[k]; !st && e->ctl && w < cc->nwork; w++)
				if (cc->work[w].host && cc->work[w].host->ctl == e->ctl)
					cc->work[w].host->target = e->target;
			continue;
		}
		/* A control step belongs to the next node (work stays in node order). */
		for (unsigned j = k + 1; j < cc->nseq; j++)
			if (cc->seq[j].node >= 0) {
				cc->cur_node = cc->seq[j].node;
				break;
			}
		st = npu_control_step(cc, e);
	}
	seq_work[cc->nseq] = cc->nwork;
	if (!st)
		npu_control_targets(cc, seq_work);
	free(seq_work);
	return st;
}

npu_status npu_compile_ir(npu_ir_graph *g, const struct npu_compile_target *tgt,
			  struct npu_cmodel **out)
{
	struct npu_cc cc = { 0 };
	/* Graph inputs and outputs of types the NPU lacks, by tensor id. */
	npu_dtype *wide = NULL;
	char *notes = NULL;
	npu_status st;
	int i, nwide = 0;

	*out = NULL;
	cc.g = g;
	cc.nclusters = tgt->clusters;
	cc.tpbs = tgt->tpbs;
	cc.workers = tgt->clusters * tgt->tpbs;
	/* Tiles get half the HBSM: the scheduler double-buffers (npu_sched.c). */
	/* Inputs in flight in a pipeline get a double buffer each (four at most). */
	cc.nbufs = tgt->batch > 1 && tgt->inflight > 1 ? 4 : 2;
	cc.hbsm = tgt->hbsm_size / cc.nbufs;
	cc.batch = tgt->batch ? tgt->batch : 1;
	cc.cur_node = -1;
	cc.stages = tgt->stages;
	cc.inflight = tgt->inflight;
	cc.step_cycles = tgt->step_cycles;
	cc.nstep_cycles = tgt->nstep_cycles;
	cc.max_loop_iterations = tgt->max_loop_iterations;
	cc.spread = cc.workers;
	if (cc.batch > 1 && cc.stages > 1 && cc.workers / cc.stages > cc.tpbs)
		cc.spread = cc.workers / cc.stages;
	/*
	 * Inputs in flight share a stage's workers (rounds continue where the
	 * last one ended), so each item's tiles need only a share of them:
	 * fewer, larger tiles re-read fewer halo rows over the DDR link.
	 */
	if (cc.batch > 1 && cc.stages > 1 && cc.inflight > 1) {
		uint32_t sp = cc.workers / cc.stages / cc.inflight;

		cc.spread = sp > cc.tpbs ? sp : cc.tpbs;
	}
	cc.cm = calloc(1, sizeof(*cc.cm));
	if (!cc.cm) {
		st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	debug_graph(g, "shape inference");
	/* The device computes int64 as int32 ...: before the rewrites see dtypes. */
	st = npu_narrow_types(g, &wide, &nwide, &notes);
	if (!st && wide)
		debug_graph(g, "type narrowing");
	cc.cm->notes = notes;
	/* Layer/RMS norm, GELU and SiLU spelled out node by node: one node each. */
	if (!st)
		st = npu_fuse_patterns(g);
	/* NPU_PRECISION_BF16X3: every float Conv is one the rewrites split. */
	if (!st && tgt->precision == NPU_PRECISION_BF16X3)
		st = npu_rewrite_want_bf16x3(g);
	if (!st)
		st = npu_rewrite_hooked(g, npu_debug_on(NPU_DEBUG_REWRITES) ? debug_rewrite : NULL,
					NULL);
	if (!st) {
		debug_graph(g, "rewrites");
		st = npu_fuse(g, cc.hbsm);
	}
	if (!st)
		debug_graph(g, "fusion");
	/* A run-time If's branches as step ranges: reorders the nodes. */
	if (!st)
		st = npu_control_layout(&cc);
	/* Homes for every tensor, those rewrites and fusion added too. */
	if (!st)
		st = npu_cc_grow(&cc);
	if (st)
		goto out;
	cc.cm->nclusters = tgt->clusters;
	cc.cm->tpbs = tgt->tpbs;
	cc.cm->precision = tgt->precision;
	snprintf(cc.cm->producer, sizeof(cc.cm->producer), "libnpu %d.%d",
		 NPU_LIB_VERSION_MAJOR, NPU_LIB_VERSION_MINOR);
	st = add_segment(cc.cm, NPU_SEG_IO, &cc.seg_io);
	if (!st)
		st = add_segment(cc.cm, NPU_SEG_SCRATCH, &cc.seg_scratch);
	if (!st)
		st = add_segment(cc.cm, NPU_SEG_CONST, &cc.seg_const);
	if (!st)
		st = place_state(&cc, tgt);
	for (i = 0; !st && i < g->n_inputs; i++)
		if (!is_state(&cc, tgt, g->inputs[i]))
			st = add_io(&cc, g->inputs[i], false, is_wide(wide, nwide, g->inputs[i]));
	for (i = 0; !st && i < g->n_outputs; i++) {
		const npu_ir_tensor *t = &g->tensors[g->outputs[i]];

		if (is_state(&cc, tgt, g->outputs[i]))
			continue;
		if (!npu_ir_is_const(t) && t->producer < 0)
			st = npu_fail(NPU_ERR_UNSUPPORTED,
				      "graph output '%s' is a graph input: nothing computes it",
				      t->name);
		else if (npu_ir_is_const(t))
			/* Folded at compile time: copied from the constants each run. */
			st = const_output(&cc, g->outputs[i],
					  is_wide(wide, nwide, g->outputs[i]));
		else
			st = add_io(&cc, g->outputs[i], true,
				    is_wide(wide, nwide, g->outputs[i]));
	}
	if (!st)
		st = npu_cc_concat_slices(&cc);
	if (!st)
		st = lower_all(&cc, tgt);
	cc.io_stride = align_up(cc.io_len ? cc.io_len : 1);
	/* Tensors alive at different times share scratch (npu_scratch.c). */
	if (!st)
		st = npu_scratch_plan(&cc);
	if (!st)
		st = npu_sched_finish(&cc);
	if (!st) {
		/* A batch gets one copy of the I/O and scratch per input. */
		cc.cm->batch = cc.batch;
		cc.cm->ndyn = cc.ndyn;
		cc.cm->io_stride = cc.batch > 1 ? cc.io_stride : 0;
		cc.cm->segs[cc.seg_io].size = cc.batch * cc.io_stride;
		cc.cm->segs[cc.seg_scratch].size = cc.batch * cc.scratch_stride;
		cc.cm->segs[cc.seg_const].size = align_up(cc.clen ? cc.clen : 1);
		cc.cm->segs[cc.seg_const].data = calloc(1, cc.cm->segs[cc.seg_const].size);
		if (!cc.cm->segs[cc.seg_const].data)
			st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		else if (cc.clen)
			memcpy(cc.cm->segs[cc.seg_const].data, cc.cdata, cc.clen);
	}
	if (!st)
		st = npu_cmodel_validate(cc.cm);
out:
	npu_sched_free(&cc);
	free(wide);
	free(cc.cdata);
	free(cc.bconst);
	free(cc.dyn_ids);
	free(cc.loc);
	free(cc.home);
	free(cc.blocks);
	free(cc.seq);
	if (st) {
		npu_cmodel_free(cc.cm);
		return st;
	}
	*out = cc.cm;
	return NPU_OK;
}
