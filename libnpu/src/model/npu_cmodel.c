// SPDX-License-Identifier: MIT
/*
 * Compiled models in memory: freeing and validation.  Validation is what
 * makes a file (or a compiler bug) unable to point a program outside its
 * buffers: every index, offset and size is checked before a context uses
 * the model.
 */
#include <stdlib.h>
#include <string.h>

#include "model/npu_cmodel.h"

#define MAX_SEG_SIZE (1ull << 32)

void npu_cmodel_free(struct npu_cmodel *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->nsegs; i++)
		free(m->segs[i].data);
	for (uint32_t i = 0; i < m->ninputs; i++)
		free(m->inputs[i].name);
	for (uint32_t i = 0; i < m->noutputs; i++)
		free(m->outputs[i].name);
	free(m->segs);
	free(m->relocs);
	free(m->inputs);
	free(m->outputs);
	for (uint32_t i = 0; m->steps && i < m->nsteps; i++) {
		free(m->steps[i].label);
		npu_host_step_free(m->steps[i].host);
	}
	free(m->steps);
	free(m->fallback_ops);
	free(m->notes);
	free(m);
}

static npu_status check_io(const struct npu_cmodel *m, const struct npu_io *io,
			   const char *what, uint32_t i)
{
	const npu_tensor_info *t = &io->info;
	uint64_t limit;
	size_t esize = npu_dtype_size(t->dtype);
	uint64_t count = 1;

	if (!io->name || !*io->name || t->name != io->name)
		return npu_fail(NPU_ERR_FORMAT, "bad model: %s %u has no name", what, i);
	if (io->seg >= m->nsegs || m->segs[io->seg].kind != NPU_SEG_IO)
		return npu_fail(NPU_ERR_FORMAT, "bad model: %s '%s' is not in an I/O segment",
				what, io->name);
	if (!esize)
		return npu_fail(NPU_ERR_FORMAT, "bad model: %s '%s' has an unknown dtype %d",
				what, io->name, (int)t->dtype);
	if (t->rank < 0 || t->rank > NPU_MAX_RANK)
		return npu_fail(NPU_ERR_FORMAT, "bad model: %s '%s' has rank %d", what,
				io->name, t->rank);
	if (io->dyn > m->ndyn || (io->dyn && (!strcmp(what, "input") || npu_cmodel_batch(m) > 1)))
		return npu_fail(NPU_ERR_FORMAT, "bad model: %s '%s' has a bad run-time shape %u",
				what, io->name, io->dyn);
	for (int d = 0; d < t->rank; d++) {
		/* -1: a dim of run-time size; bytes is then the bound, checked below. */
		if (t->dims[d] == -1 && io->dyn)
			continue;
		if (t->dims[d] < 0 || (t->dims[d] && count > (1ull << 40) / (uint64_t)t->dims[d]))
			return npu_fail(NPU_ERR_FORMAT, "bad model: %s '%s' has a bad dimension",
					what, io->name);
		count *= (uint64_t)t->dims[d];
	}
	if (io->dyn ? t->bytes % esize || t->bytes > (1ull << 40) :
	    t->bytes != count * esize)
		return npu_fail(NPU_ERR_FORMAT, "bad model: %s '%s' size %zu does not match its shape",
				what, io->name, t->bytes);
	/* Batch element 0 lies within the first stride; the rest follow. */
	limit = npu_cmodel_batch(m) > 1 ? m->io_stride : m->segs[io->seg].size;
	if (io->offset > limit || npu_io_dev_bytes(t) > limit - io->offset)
		return npu_fail(NPU_ERR_FORMAT, "bad model: %s '%s' lies outside its segment",
				what, io->name);
	return NPU_OK;
}

void npu_host_step_free(struct npu_host_step *h)
{
	if (!h)
		return;
	for (uint32_t i = 0; h->attrs && i < h->nattrs; i++) {
		free(h->attrs[i].name);
		free(h->attrs[i].s);
		free(h->attrs[i].ints);
		free(h->attrs[i].floats);
	}
	free(h->attrs);
	free(h->tensors);
	free(h->op);
	free(h->node);
	free(h);
}

uint32_t npu_cmodel_dyn_shapes(const struct npu_cmodel *m)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < m->noutputs; i++)
		n = m->outputs[i].dyn > n ? m->outputs[i].dyn : n;
	for (uint32_t i = 0; i < m->nsteps; i++) {
		const struct npu_host_step *h = m->steps[i].host;

		for (uint32_t k = 0; h && h->tensors && k < h->ninputs + h->noutputs; k++)
			n = h->tensors[k].dyn > n ? h->tensors[k].dyn : n;
	}
	return n;
}

uint32_t npu_cmodel_host_steps(const struct npu_cmodel *m)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < m->nsteps; i++)
		n += npu_step_on_host(&m->steps[i]) && !npu_step_is_control(&m->steps[i]);
	return n;
}

/* Bytes of host-step tensor @t (0 for an omitted one). */
static uint64_t host_bytes(const struct npu_host_tensor *t)
{
	uint64_t n = npu_dtype_size((npu_dtype)t->dtype);

	if (t->seg == NPU_HOST_SEG)
		return 0;
	for (int d = 0; d < t->rank; d++)
		n *= (uint64_t)t->dims[d];
	return n;
}

static bool int_scalar(const struct npu_host_tensor *t)
{
	return t->seg == NPU_HOST_SEG ||
	       (host_bytes(t) == npu_dtype_size((npu_dtype)t->dtype) &&
		(t->dtype == NPU_DTYPE_INT32 || t->dtype == NPU_DTYPE_INT64));
}

static bool bool_scalar(const struct npu_host_tensor *t)
{
	return t->seg == NPU_HOST_SEG || (t->dtype == NPU_DTYPE_BOOL && host_bytes(t) == 1);
}

/*
 * A Loop's control step @i (npu_cmodel.h): the tensors its kind has, in
 * sizes the copies stay inside (each tensor already inside its segment),
 * a LOOP_BEGIN going forward to the step after its LOOP_END, which goes
 * back to the step after it, and an iteration limit.
 */
static npu_status check_loop(const struct npu_cmodel *m, uint32_t i)
{
	const struct npu_host_step *h = m->steps[i].host, *b = h;
	bool begin = h->ctl == NPU_CTL_LOOP_BEGIN;
	uint32_t N, K;
	const struct npu_host_tensor *in = h->tensors, *out;

	if (begin ? h->ninputs < 2 || h->noutputs < 2 * (h->ninputs - 2) + 2 :
		    h->ninputs < 2 || h->noutputs < h->ninputs ||
		    h->noutputs - h->ninputs + 2 > h->ninputs)
		return npu_fail(NPU_ERR_FORMAT, "bad model: control step %u has the wrong tensors", i);
	N = begin ? h->ninputs - 2 : h->noutputs - h->ninputs;
	K = h->noutputs - 2 - 2 * N;
	out = h->tensors + h->ninputs;
	if (!int_scalar(&in[0]) || !bool_scalar(&in[1]) || out[0].seg == NPU_HOST_SEG ||
	    !int_scalar(&out[0]) || !bool_scalar(&out[1]))
		return npu_fail(NPU_ERR_FORMAT,
				"bad model: control step %u has a bad trip count, condition or counter", i);
	for (uint32_t k = 0; k < N; k++) {
		uint64_t src = host_bytes(&in[2 + k]);

		if ((host_bytes(&out[2 + k]) && src && host_bytes(&out[2 + k]) != src) ||
		    (host_bytes(&out[2 + N + k]) && src && host_bytes(&out[2 + N + k]) != src))
			return npu_fail(NPU_ERR_FORMAT,
					"bad model: control step %u copies carried value %u between sizes", i, k);
	}
	for (uint32_t k = 0; !begin && k < K; k++) {
		const struct npu_host_tensor *s = &out[2 + 2 * N + k];

		if (s->seg != NPU_HOST_SEG &&
		    (s->rank < 1 || s->dims[0] < 0 ||
		     host_bytes(&in[2 + N + k]) * (uint64_t)s->dims[0] != host_bytes(s)))
			return npu_fail(NPU_ERR_FORMAT,
					"bad model: control step %u has scan output %u of the wrong size", i, k);
	}
	if (begin) {
		const struct npu_step *e = h->target >= 1 && h->target <= m->nsteps ?
					   &m->steps[h->target - 1] : NULL;

		if (h->target <= i || !e || !npu_step_on_host(e) || !e->host ||
		    e->host->ctl != NPU_CTL_LOOP_END || e->host->target != i + 1)
			return npu_fail(NPU_ERR_FORMAT,
					"bad model: control step %u (a Loop's begin) does not go to the step after its end",
					i);
		return NPU_OK;
	}
	if (h->target < 1 || h->target > i || !npu_step_on_host(&m->steps[h->target - 1]) ||
	    !(b = m->steps[h->target - 1].host) || b->ctl != NPU_CTL_LOOP_BEGIN || b->target != i + 1)
		return npu_fail(NPU_ERR_FORMAT,
				"bad model: control step %u (a Loop's end) does not go back to the step after its begin",
				i);
	if (h->nattrs != 1 || strcmp(h->attrs[0].name, "max_iterations") ||
	    h->attrs[0].type != 1 || h->attrs[0].i < 1 ||
	    h->attrs[0].i > (int64_t)NPU_LOOP_MAX_ITERATIONS)
		return npu_fail(NPU_ERR_FORMAT,
				"bad model: control step %u (a Loop's end) has no iteration limit of 1 to %u",
				i, NPU_LOOP_MAX_ITERATIONS);
	return NPU_OK;
}

/*
 * Control step @i (a host step with ctl set): a known kind, a target
 * after it and inside the list (forward only: no run can loop), an If's
 * condition one bool element.
 */
static npu_status check_control(const struct npu_cmodel *m, uint32_t i)
{
	const struct npu_host_step *h = m->steps[i].host;

	switch (h->ctl) {
	case NPU_CTL_NONE:
		return NPU_OK;
	case NPU_CTL_IF_NOT:
		if (h->ninputs != 1 || h->noutputs || h->tensors[0].seg == NPU_HOST_SEG ||
		    h->tensors[0].dtype != NPU_DTYPE_BOOL)
			return npu_fail(NPU_ERR_FORMAT,
					"bad model: control step %u has no bool condition", i);
		break;
	case NPU_CTL_JUMP:
		if (h->ninputs || h->noutputs)
			return npu_fail(NPU_ERR_FORMAT, "bad model: control step %u has tensors", i);
		break;
	case NPU_CTL_LOOP_BEGIN:
	case NPU_CTL_LOOP_END:
		return check_loop(m, i);
	default:
		return npu_fail(NPU_ERR_FORMAT, "bad model: control step %u of unknown kind %u", i,
				h->ctl);
	}
	if (h->target <= i || h->target > m->nsteps)
		return npu_fail(NPU_ERR_FORMAT,
				"bad model: control step %u goes to step %u, outside steps %u to %u",
				i, h->target, i + 1, m->nsteps);
	return NPU_OK;
}

/*
 * Host step @i: an operator name, tensors inside segments the host may
 * touch (outputs not in CONST or PROGRAM), a batch of one.
 */
static npu_status check_host(const struct npu_cmodel *m, uint32_t i)
{
	const struct npu_host_step *h = m->steps[i].host;

	if (!h || !h->op || !*h->op || !h->node)
		return npu_fail(NPU_ERR_FORMAT, "bad model: host step %u has no operator", i);
	if (npu_cmodel_batch(m) > 1)
		return npu_fail(NPU_ERR_FORMAT, "bad model: host step %u in a batched model", i);
	if (h->ninputs > 64 || h->noutputs > 64 || h->nattrs > 256 || (h->ninputs + h->noutputs && !h->tensors))
		return npu_fail(NPU_ERR_FORMAT, "bad model: host step %u has too many tensors", i);
	for (uint32_t k = 0; k < h->ninputs + h->noutputs; k++) {
		const struct npu_host_tensor *t = &h->tensors[k];
		size_t esize = npu_dtype_size((npu_dtype)t->dtype);
		uint64_t count = 1;
		const struct npu_seg *s;

		if (t->seg == NPU_HOST_SEG)
			continue;
		if (t->seg >= m->nsegs || !esize || t->rank < 0 || t->rank > NPU_MAX_RANK ||
		    t->dyn > m->ndyn)
			return npu_fail(NPU_ERR_FORMAT, "bad model: host step %u tensor %u is bad", i, k);
		s = &m->segs[t->seg];
		if (s->kind == NPU_SEG_PROGRAM || (k >= h->ninputs && s->kind == NPU_SEG_CONST))
			return npu_fail(NPU_ERR_FORMAT,
					"bad model: host step %u tensor %u is in a read-only segment", i, k);
		for (int d = 0; d < t->rank; d++) {
			if (t->dims[d] < 0 || (t->dims[d] && count > (1ull << 40) / (uint64_t)t->dims[d]))
				return npu_fail(NPU_ERR_FORMAT,
						"bad model: host step %u tensor %u has a bad dimension", i, k);
			count *= (uint64_t)t->dims[d];
		}
		if (t->offset > s->size || count * esize > s->size - t->offset)
			return npu_fail(NPU_ERR_FORMAT,
					"bad model: host step %u tensor %u lies outside its segment", i, k);
	}
	for (uint32_t k = 0; k < h->nattrs; k++)
		if (!h->attrs[k].name || (h->attrs[k].n && !h->attrs[k].ints && !h->attrs[k].floats))
			return npu_fail(NPU_ERR_FORMAT, "bad model: host step %u attribute %u is bad", i, k);
	return check_control(m, i);
}

npu_status npu_cmodel_validate(const struct npu_cmodel *m)
{
	npu_status st;

	if (!m->nclusters || m->nclusters > 16)
		return npu_fail(NPU_ERR_FORMAT, "bad model: %u clusters", m->nclusters);
	if (!m->tpbs || m->tpbs > 8)
		return npu_fail(NPU_ERR_FORMAT, "bad model: %u TPBs per cluster", m->tpbs);
	for (uint32_t i = 0; i < m->nsegs; i++) {
		const struct npu_seg *s = &m->segs[i];

		if (s->kind < NPU_SEG_CONST || s->kind > NPU_SEG_STATE)
			return npu_fail(NPU_ERR_FORMAT, "bad model: segment %u has kind %u", i, s->kind);
		if (!s->size || s->size > MAX_SEG_SIZE)
			return npu_fail(NPU_ERR_FORMAT, "bad model: segment %u has size %llu", i,
					(unsigned long long)s->size);
		if ((s->kind == NPU_SEG_CONST || s->kind == NPU_SEG_PROGRAM) && !s->data)
			return npu_fail(NPU_ERR_FORMAT, "bad model: segment %u has no contents", i);
	}
	if (m->batch > NPU_MAX_BATCH)
		return npu_fail(NPU_ERR_FORMAT, "bad model: batch %u (at most %d)", m->batch,
				NPU_MAX_BATCH);
	if (npu_cmodel_batch(m) > 1) {
		if (!m->io_stride || m->io_stride > MAX_SEG_SIZE)
			return npu_fail(NPU_ERR_FORMAT, "bad model: I/O stride %llu",
					(unsigned long long)m->io_stride);
		for (uint32_t i = 0; i < m->nsegs; i++)
			if (m->segs[i].kind == NPU_SEG_IO &&
			    m->segs[i].size < m->batch * m->io_stride)
				return npu_fail(NPU_ERR_FORMAT,
						"bad model: I/O segment %u is smaller than its batch", i);
	}
	for (uint32_t i = 0; i < m->nrelocs; i++) {
		const struct npu_reloc *x = &m->relocs[i];

		if (x->seg >= m->nsegs || x->target >= m->nsegs ||
		    (m->segs[x->seg].kind != NPU_SEG_PROGRAM &&
		     m->segs[x->seg].kind != NPU_SEG_CONST))
			return npu_fail(NPU_ERR_FORMAT, "bad model: relocation %u names a bad segment", i);
		if (x->offset % 8 || x->offset > m->segs[x->seg].size - 8 ||
		    m->segs[x->seg].size < 8)
			return npu_fail(NPU_ERR_FORMAT, "bad model: relocation %u is outside its segment", i);
		if (x->addend > m->segs[x->target].size)
			return npu_fail(NPU_ERR_FORMAT, "bad model: relocation %u points past its target", i);
	}
	for (uint32_t i = 0; i < m->ninputs; i++)
		if ((st = check_io(m, &m->inputs[i], "input", i)))
			return st;
	for (uint32_t i = 0; i < m->noutputs; i++)
		if ((st = check_io(m, &m->outputs[i], "output", i)))
			return st;
	for (uint32_t i = 0; i < m->ninputs + m->noutputs; i++)
		for (uint32_t j = i + 1; j < m->ninputs + m->noutputs; j++) {
			const struct npu_io *a = i < m->ninputs ? &m->inputs[i] : &m->outputs[i - m->ninputs];
			const struct npu_io *b = j < m->ninputs ? &m->inputs[j] : &m->outputs[j - m->ninputs];

			if (!strcmp(a->name, b->name))
				return npu_fail(NPU_ERR_FORMAT, "bad model: two tensors named '%s'",
						a->name);
		}
	for (uint32_t i = 0; i < m->nsteps; i++) {
		const struct npu_step *s = &m->steps[i];

		if (npu_step_on_host(s)) {
			if ((st = check_host(m, i)))
				return st;
			continue;
		}
		if (s->host)
			return npu_fail(NPU_ERR_FORMAT, "bad model: step %u is a program and a host step", i);
		if (s->seg >= m->nsegs || m->segs[s->seg].kind != NPU_SEG_PROGRAM)
			return npu_fail(NPU_ERR_FORMAT, "bad model: step %u is not in a program segment", i);
		if (s->offset % 64 || s->size < 64 || s->offset > m->segs[s->seg].size ||
		    s->size > m->segs[s->seg].size - s->offset)
			return npu_fail(NPU_ERR_FORMAT, "bad model: step %u lies outside its segment", i);
	}
	return NPU_OK;
}
