// SPDX-License-Identifier: MIT
/*
 * Tensor Walker Units: decoding, bounds, and moving operand views between
 * the address spaces and dense buffers.
 *
 * A walker is decoded and bounds-checked once per instruction (before the
 * task runs), so the per-iteration paths below never check element
 * addresses again for HBSM and SRAM; DDR goes through the MMU per run.
 */
#include <stdlib.h>
#include <string.h>

#include "npu_core_priv.h"
#include "npu_kern.h"

/* Base addresses above this are out of every space (keeps sums in int64). */
#define NPU_WALK_MAX_BASE (1ull << 40)

int npu_walk_decode(const struct npu_hw_twu *twu, struct npu_walk *w)
{
	memset(w, 0, sizeof(*w));
	if (twu->nlevels == 0 || twu->nlevels > NPU_TWU_MAX_LEVELS)
		return NPU_IE_WALKER;
	if (twu->flags || twu->pad || twu->reserved)
		return NPU_IE_RESERVED;
	if (twu->space == NPU_SPACE_NONE || twu->space >= NPU_SPACE_COUNT)
		return NPU_IE_SPACE;
	if (twu->space != NPU_SPACE_HBSM_REMOTE &&
	    (twu->cluster_mask || twu->tpb_mask))
		return NPU_IE_RESERVED;
	if (twu->base >= NPU_WALK_MAX_BASE)
		return NPU_IE_RANGE;
	w->esz = (unsigned)npu_hw_dtype_size(twu->dtype);
	if (!w->esz)
		return NPU_IE_DTYPE;
	w->base = twu->base;
	w->space = twu->space;
	w->dtype = twu->dtype;
	w->nlevels = twu->nlevels;
	w->cluster_mask = twu->cluster_mask;
	w->tpb_mask = twu->tpb_mask;
	for (unsigned l = 0; l < NPU_TWU_MAX_LEVELS; l++) {
		const struct npu_hw_twu_level *lv = &twu->level[l];
		int64_t diff;

		if (l >= twu->nlevels) {
			if (lv->initial || lv->step || lv->final)
				return NPU_IE_RESERVED;
			continue;
		}
		w->initial[l] = lv->initial;
		w->step[l] = lv->step;
		if (lv->step == 0) {
			/* Broadcast level: Value stays, final is the count. */
			if (lv->final < 1 || lv->final > NPU_TWU_MAX_COUNT)
				return NPU_IE_WALKER;
			w->count[l] = (uint32_t)lv->final;
			continue;
		}
		diff = (int64_t)lv->final - lv->initial;
		if (diff % lv->step || diff / lv->step < 0 ||
		    diff / lv->step >= NPU_TWU_MAX_COUNT)
			return NPU_IE_WALKER;
		w->count[l] = (uint32_t)(diff / lv->step + 1);
	}
	return 0;
}

void npu_walk_bounds(const struct npu_walk *w, uint64_t *lo, uint64_t *hi)
{
	int64_t mn = (int64_t)w->base, mx = (int64_t)w->base;

	for (unsigned l = 0; l < w->nlevels; l++) {
		int64_t first = w->initial[l];
		int64_t last = w->initial[l] + w->step[l] * (int64_t)(w->count[l] - 1);

		mn += first < last ? first : last;
		mx += first > last ? first : last;
	}
	/* A negative address is below every space: report it as out of all. */
	*lo = mn < 0 ? UINT64_MAX : (uint64_t)mn;
	*hi = mn < 0 ? UINT64_MAX : (uint64_t)mx;
}

uint64_t npu_walk_elems(const struct npu_walk *w, unsigned nlevels)
{
	uint64_t n = 1;

	for (unsigned l = 0; l < nlevels && l < w->nlevels; l++)
		n *= w->count[l];
	return n;
}

void npu_opnd_view(const struct npu_iteration *it, unsigned o,
		   struct npu_view *v)
{
	const struct npu_dinsn *di = it->di;
	const struct npu_walk *w = &di->opnd[o];
	unsigned nsem = w->nlevels - di->nrep;
	int64_t addr = (int64_t)w->base;
	uint64_t r = it->iter;

	memset(v, 0, sizeof(*v));
	for (unsigned j = 0; j < di->nrep; j++) {
		unsigned l = nsem + j;
		uint64_t idx = r;

		/* A 64-bit division per level and operand showed in profiles;
		 * the outermost level (and any once r is small) needs none. */
		if (r >= w->count[l]) {
			idx = r % w->count[l];
			r /= w->count[l];
		} else {
			r = 0;
		}
		addr += w->initial[l] + w->step[l] * (int64_t)idx;
	}
	for (unsigned l = 0; l < nsem; l++) {
		addr += w->initial[l];
		v->dims[l] = w->count[l];
		v->strides[l] = w->step[l];
	}
	v->base = (uint64_t)addr;
	v->space = w->space;
	v->dtype = w->dtype;
	v->esz = w->esz;
	v->ndims = nsem;
	v->cluster_mask = w->cluster_mask;
	v->tpb_mask = w->tpb_mask;
}

uint64_t npu_view_elems(const struct npu_view *v)
{
	uint64_t n = 1;

	for (unsigned l = 0; l < v->ndims; l++)
		n *= v->dims[l];
	return n;
}

bool npu_view_dense(const struct npu_view *v)
{
	int64_t expect = v->esz;

	for (unsigned l = 0; l < v->ndims; l++) {
		if (v->dims[l] != 1 && v->strides[l] != expect)
			return false;
		expect *= v->dims[l];
	}
	return true;
}

void npu_view_span(const struct npu_view *v, int64_t *lo, int64_t *hi)
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

void *npu_iter_alloc(struct npu_iteration *it, size_t bytes)
{
	struct npu_scratch_cache *k = it->keep;
	size_t want = bytes ? bytes : 1, size = want;
	unsigned best = NPU_SCRATCH_KEEP;
	void *p = NULL;

	if (it->nscratch == sizeof(it->scratch) / sizeof(it->scratch[0]))
		return NULL;
	/* The smallest kept block that fits. */
	for (unsigned i = 0; k && i < NPU_SCRATCH_KEEP; i++)
		if (k->p[i] && k->size[i] >= want &&
		    (best == NPU_SCRATCH_KEEP || k->size[i] < k->size[best]))
			best = i;
	if (best < NPU_SCRATCH_KEEP) {
		p = k->p[best];
		size = k->size[best];
		k->p[best] = NULL;
	} else {
		p = malloc(want);
	}
	if (p) {
		it->scratch[it->nscratch] = p;
		it->scratch_size[it->nscratch++] = size;
	}
	return p;
}

/* Keep @p in an empty slot, or in place of a smaller block; else free. */
static void keep_or_free(struct npu_scratch_cache *k, void *p, size_t size)
{
	unsigned slot = NPU_SCRATCH_KEEP;

	if (!k || size > NPU_SCRATCH_KEEP_MAX) {
		free(p);
		return;
	}
	for (unsigned i = 0; i < NPU_SCRATCH_KEEP; i++) {
		if (!k->p[i]) {
			slot = i;
			break;
		}
		if (k->size[i] < size &&
		    (slot == NPU_SCRATCH_KEEP || k->size[i] < k->size[slot]))
			slot = i;
	}
	if (slot == NPU_SCRATCH_KEEP) {
		free(p);
		return;
	}
	free(k->p[slot]);
	k->p[slot] = p;
	k->size[slot] = size;
}

void npu_iter_release(struct npu_iteration *it)
{
	for (unsigned s = 0; s < it->nscratch; s++)
		keep_or_free(it->keep, it->scratch[s], it->scratch_size[s]);
	it->nscratch = 0;
}

void npu_scratch_cache_free(struct npu_scratch_cache *keep)
{
	for (unsigned i = 0; i < NPU_SCRATCH_KEEP; i++) {
		free(keep->p[i]);
		keep->p[i] = NULL;
	}
}

/* Host pointer for a (space, cluster, tpb) target, or NULL for DDR. */
static uint8_t *space_ptr(struct npu_iteration *it, unsigned space,
			  unsigned lcluster, unsigned tpb, uint64_t *limit)
{
	uint32_t size;
	uint8_t *p;

	switch (space) {
	case NPU_SPACE_HBSM:
		*limit = npu_task_hbsm_size(it->task);
		return npu_iter_hbsm(it);
	case NPU_SPACE_HBSM_REMOTE:
		*limit = npu_task_hbsm_size(it->task);
		return npu_task_hbsm(it->task, lcluster, tpb);
	case NPU_SPACE_SRAM:
		p = npu_task_sram(it->task, &size);
		*limit = size;
		return p;
	default:
		*limit = 0;
		return NULL;
	}
}

uint8_t *npu_ddr_map(struct npu_iteration *it, uint64_t va, size_t len,
		     bool write)
{
	return npu_mmu_map(npu_task_fetched(it->task), it->tlb, va, len, write);
}

/*
 * Where the @bytes of dense view @v lie on the host (a remote HBSM view:
 * in TPB @tpb of cluster @lcluster): in its on-chip space, or DDR the
 * host maps in one piece for @write (valid for the bracket); NULL when
 * neither.
 */
static uint8_t *dense_ptr(struct npu_iteration *it, const struct npu_view *v,
			  unsigned lcluster, unsigned tpb, uint64_t bytes, bool write)
{
	uint64_t limit;
	uint8_t *p;

	if (v->space == NPU_SPACE_DDR)
		return npu_ddr_map(it, v->base, bytes, write);
	p = space_ptr(it, v->space, lcluster, tpb, &limit);
	return p ? p + v->base : NULL;
}

static int ddr_access(struct npu_iteration *it, uint64_t va, void *buf,
		      size_t len, bool write)
{
	struct npu_core_task *ft = npu_task_fetched(it->task);
	uint8_t *p = npu_ddr_map(it, va, len, write);
	int ret;

	/* In place when the host maps the range; memmove: GSDU pieces may
	 * overlap their source (read whole, then written). */
	if (p) {
		if (write)
			memmove(p, buf, len);
		else
			memmove(buf, p, len);
		return 0;
	}
	ret = write ? npu_mmu_write(ft, it->tlb, va, buf, len, &it->fault_addr,
				    &it->detail) :
		      npu_mmu_read(ft, it->tlb, va, buf, len, &it->fault_addr,
				   &it->detail);
	if (ret == NPU_TASK_MMU_FAULT) {
		ft->mmu_fault = true;
		ft->mmu_fault_write = write;
	}
	return ret;
}

const uint8_t *npu_space_at(struct npu_iteration *it, unsigned space,
			    unsigned lcluster, unsigned tpb, uint64_t addr,
			    size_t len, int *status)
{
	uint64_t limit;
	uint8_t *p;

	*status = 0;
	if (space == NPU_SPACE_DDR)
		return NULL;
	p = space_ptr(it, space, lcluster, tpb, &limit);
	if (!p || addr > limit || len > limit - addr) {
		it->fault_addr = addr;
		it->detail = NPU_IE_RANGE;
		*status = NPU_TASK_ILLEGAL_INSN;
		return NULL;
	}
	return p + addr;
}

int npu_space_read(struct npu_iteration *it, unsigned space,
		   unsigned lcluster, unsigned tpb, uint64_t addr,
		   void *buf, size_t len)
{
	const uint8_t *p;
	int st;

	npu_cost_load(it->cost, len);
	if (space == NPU_SPACE_DDR)
		return ddr_access(it, addr, buf, len, false);
	p = npu_space_at(it, space, lcluster, tpb, addr, len, &st);
	if (!p)
		return st;
	memcpy(buf, p, len);
	return 0;
}

int npu_space_write(struct npu_iteration *it, unsigned space,
		    unsigned lcluster, unsigned tpb, uint64_t addr,
		    const void *buf, size_t len)
{
	uint64_t limit;
	uint8_t *p;

	npu_cost_store(it->cost, len);
	if (space == NPU_SPACE_DDR)
		return ddr_access(it, addr, (void *)buf, len, true);
	p = space_ptr(it, space, lcluster, tpb, &limit);
	if (!p || addr > limit || len > limit - addr) {
		it->fault_addr = addr;
		it->detail = NPU_IE_RANGE;
		return NPU_TASK_ILLEGAL_INSN;
	}
	memmove(p + addr, buf, len);
	return 0;
}

/*
 * Walk every innermost run of a view, calling fn(run address, dense
 * offset).  A run is dims[0] elements when strides[0] == esz (one memcpy),
 * else one element.
 */
typedef int (*run_fn)(void *arg, uint64_t addr, size_t off, size_t len);

static int for_each_run(const struct npu_view *v, run_fn fn, void *arg)
{
	uint32_t idx[NPU_TWU_MAX_LEVELS] = { 0 };
	bool contig = v->ndims == 0 || v->strides[0] == (int64_t)v->esz ||
		      v->dims[0] == 1;
	size_t run_elems = contig && v->ndims ? v->dims[0] : 1;
	unsigned first = contig ? 1 : 0;
	uint64_t total = npu_view_elems(v);
	size_t off = 0;

	if (v->ndims == 0)
		return fn(arg, v->base, 0, v->esz);
	for (uint64_t done = 0; done < total; done += run_elems) {
		int64_t addr = (int64_t)v->base;
		int ret;

		for (unsigned l = first; l < v->ndims; l++)
			addr += v->strides[l] * (int64_t)idx[l];
		ret = fn(arg, (uint64_t)addr, off, run_elems * v->esz);
		if (ret)
			return ret;
		off += run_elems * v->esz;
		for (unsigned l = first; l < v->ndims; l++) {
			if (++idx[l] < v->dims[l])
				break;
			idx[l] = 0;
		}
	}
	return 0;
}

struct run_arg {
	struct npu_iteration *it;
	uint8_t *host;		/* space pointer, NULL for DDR */
	uint8_t *buf;		/* dense buffer */
	unsigned space;
	bool write;
};

static int run_copy(void *arg, uint64_t addr, size_t off, size_t len)
{
	struct run_arg *a = arg;

	if (a->host) {
		if (a->write)
			memcpy(a->host + addr, a->buf + off, len);
		else
			memcpy(a->buf + off, a->host + addr, len);
		return 0;
	}
	return ddr_access(a->it, addr, a->buf + off, len, a->write);
}

/* Fast gather for the common 2-D/1-D strided cases on host memory. */
static bool gather_fast(const struct npu_view *v, const uint8_t *host,
			uint8_t *dst)
{
	if (v->ndims == 2 && v->strides[0] == (int64_t)v->esz) {
		size_t row = (size_t)v->dims[0] * v->esz;

		for (uint32_t r = 0; r < v->dims[1]; r++)
			memcpy(dst + r * row, host + v->base + v->strides[1] * (int64_t)r, row);
		return true;
	}
	if (v->ndims >= 1 && v->strides[0] == 0 && npu_view_elems(v) == v->dims[0]) {
		npu_kern_fill(dst, v->esz, v->dims[0], host + v->base);
		return true;
	}
	return false;
}

/*
 * A view reduced for copying: one-element levels dropped and levels that
 * continue each other (stride = inner stride * inner count) merged.  The
 * element order, hence the dense layout and the order of the writes, is
 * unchanged.  At least one level.
 */
struct flat_view {
	uint32_t dims[NPU_TWU_MAX_LEVELS];
	int64_t strides[NPU_TWU_MAX_LEVELS];
	unsigned ndims;
};

static void flatten(const struct npu_view *v, struct flat_view *f)
{
	f->ndims = 0;
	for (unsigned l = 0; l < v->ndims; l++) {
		unsigned n = f->ndims;

		if (v->dims[l] == 1)
			continue;
		if (n && v->strides[l] == f->strides[n - 1] * (int64_t)f->dims[n - 1] &&
		    (uint64_t)f->dims[n - 1] * v->dims[l] <= UINT32_MAX) {
			f->dims[n - 1] *= v->dims[l];
			continue;
		}
		f->dims[n] = v->dims[l];
		f->strides[n] = v->strides[l];
		f->ndims++;
	}
	if (!f->ndims) {
		f->dims[0] = 1;
		f->strides[0] = 0;
		f->ndims = 1;
	}
}

/* One innermost row of @n elements @stride apart, to or from dense @buf. */
#define STRIDED_ROW(T, host, buf, n, stride, write)			\
	do {								\
		T *d_ = (T *)(void *)(buf);				\
									\
		for (uint32_t i_ = 0; i_ < (n); i_++) {			\
			uint8_t *h_ = (host) + (stride) * (int64_t)i_;	\
									\
			if (write)					\
				memcpy(h_, &d_[i_], sizeof(T));		\
			else						\
				memcpy(&d_[i_], h_, sizeof(T));		\
		}							\
	} while (0)

static void row_copy(uint8_t *host, uint8_t *buf, uint32_t n, int64_t stride,
		     unsigned esz, bool write)
{
	if (stride == (int64_t)esz) {
		if (write)
			memcpy(host, buf, (size_t)n * esz);
		else
			memcpy(buf, host, (size_t)n * esz);
		return;
	}
	switch (esz) {
	case 1:
		STRIDED_ROW(uint8_t, host, buf, n, stride, write);
		break;
	case 2:
		STRIDED_ROW(uint16_t, host, buf, n, stride, write);
		break;
	case 4:
		STRIDED_ROW(uint32_t, host, buf, n, stride, write);
		break;
	case 8:
		STRIDED_ROW(uint64_t, host, buf, n, stride, write);
		break;
	default:
		for (uint32_t i = 0; i < n; i++) {
			uint8_t *h = host + stride * (int64_t)i;

			if (write)
				memcpy(h, buf + (size_t)i * esz, esz);
			else
				memcpy(buf + (size_t)i * esz, h, esz);
		}
		break;
	}
}

/*
 * Copy a view of host memory (HBSM, SRAM) to or from a dense buffer, row
 * by row with the address stepped level by level: the same element order
 * as for_each_run, without a call and an address sum per element.
 */
static void host_view_copy(const struct npu_view *v, uint8_t *host,
			   uint8_t *buf, bool write)
{
	uint32_t idx[NPU_TWU_MAX_LEVELS] = { 0 };
	struct flat_view f;
	int64_t addr = (int64_t)v->base;
	unsigned esz = v->esz, first = 1;
	size_t step;

	flatten(v, &f);
	/*
	 * A planar tile (innermost level strided, the next one contiguous,
	 * rows apart by at least their length so no element repeats) is a
	 * transpose between the two layouts: done by blocks, per outer index.
	 */
	if (f.ndims >= 2 && (esz == 2 || esz == 4) && f.strides[1] == (int64_t)esz &&
	    f.strides[0] >= (int64_t)f.dims[1] * esz && f.dims[0] >= 4 && f.dims[1] >= 4)
		first = 2;
	step = (size_t)f.dims[0] * esz * (first == 2 ? f.dims[1] : 1);
	for (;;) {
		unsigned l;

		if (first == 1)
			row_copy(host + addr, buf, f.dims[0], f.strides[0], esz, write);
		else if (write)
			npu_kern_transpose_strided(host + addr, (size_t)f.strides[0], buf,
						   (size_t)f.dims[0] * esz, esz,
						   f.dims[1], f.dims[0]);
		else
			npu_kern_transpose_strided(buf, (size_t)f.dims[0] * esz,
						   host + addr, (size_t)f.strides[0], esz,
						   f.dims[0], f.dims[1]);
		buf += step;
		for (l = first; l < f.ndims; l++) {
			addr += f.strides[l];
			if (++idx[l] < f.dims[l])
				break;
			addr -= f.strides[l] * (int64_t)f.dims[l];
			idx[l] = 0;
		}
		if (l >= f.ndims)
			return;
	}
}

/* Innermost runs shorter than this make a DDR read worth bouncing. */
#define DDR_GATHER_MAX_RUN 64
/* ... when the span is at most this large and half of it is read anyway. */
#define DDR_GATHER_MAX_SPAN (1u << 20)

/*
 * Gather a DDR view of short runs (a channel-planar tensor read element
 * by element, say) by reading its whole span with one MMU copy per page
 * and picking the elements from that: the same bytes as a translation
 * and a host access per run.  Only where the view reads at least half of
 * the span, so the extra reads stay among pages it touches.  false when
 * not applicable or when the span read fails: the caller then reads run
 * by run, which reports the fault exactly as before (this attempt
 * records none).
 */
static bool ddr_gather(struct npu_iteration *it, const struct npu_view *v,
		       uint8_t *buf)
{
	struct npu_core_task *ft = npu_task_fetched(it->task);
	uint64_t bytes = npu_view_elems(v) * v->esz, fault_addr;
	struct npu_view local;
	uint32_t detail;
	int64_t lo, hi;
	uint8_t *span;
	bool contig = v->ndims == 0 || v->strides[0] == (int64_t)v->esz;

	if (contig && v->ndims && (uint64_t)v->dims[0] * v->esz >= DDR_GATHER_MAX_RUN)
		return false;
	npu_view_span(v, &lo, &hi);
	if (lo < 0 || hi - lo > DDR_GATHER_MAX_SPAN || (uint64_t)(hi - lo) > 2 * bytes)
		return false;
	span = malloc((size_t)(hi - lo));
	if (!span)
		return false;
	if (npu_mmu_read(ft, it->tlb, (uint64_t)lo, span, (size_t)(hi - lo),
			 &fault_addr, &detail)) {
		free(span);
		return false;
	}
	local = *v;
	local.base = v->base - (uint64_t)lo;
	host_view_copy(&local, span, buf, false);
	free(span);
	return true;
}

/*
 * Whether the dense buffer overlaps the view's span in @host (a store of
 * data loaded in place): then the copy keeps for_each_run's exact
 * sequence of row copies, whose result the overlap depends on.
 */
static bool overlaps(const struct npu_view *v, const uint8_t *host,
		     const uint8_t *buf)
{
	uintptr_t b = (uintptr_t)buf, h = (uintptr_t)host;
	uint64_t bytes = npu_view_elems(v) * v->esz;
	int64_t lo, hi;

	npu_view_span(v, &lo, &hi);
	return b < h + (uint64_t)hi && h + (uint64_t)lo < b + bytes;
}

/* How many runs for_each_run would copy the view in. */
static uint64_t view_runs(const struct npu_view *v)
{
	bool contig = v->ndims == 0 || v->strides[0] == (int64_t)v->esz ||
		      v->dims[0] == 1;

	return npu_view_elems(v) / (contig && v->ndims ? v->dims[0] : 1);
}

/*
 * A DDR view whose whole span the host maps in one piece (ddr_map_view):
 * @local is the view with its base made relative to the returned
 * pointer, so the host-memory copies below serve it as they serve HBSM.
 * Every page of the span translated without a fault, so the run-by-run
 * path would fault on none of them either: the same bytes, written in
 * the same order where order matters.
 */
static uint8_t *ddr_map_view(struct npu_iteration *it, const struct npu_view *v,
			     bool write, struct npu_view *local)
{
	int64_t lo, hi;
	uint8_t *p;

	npu_view_span(v, &lo, &hi);
	if (lo < 0)
		return NULL;
	/*
	 * A span far larger than the view (a column of a large matrix):
	 * checking its every page would cost more than a lookup per run.  A
	 * page's check in a mapped range is a few instructions, a run's
	 * lookup and host call some hundred: up to 16 pages a run.
	 */
	if ((uint64_t)(hi - lo) > 2 * npu_view_elems(v) * v->esz + 2 * NPU_MMU_PAGE_SIZE &&
	    (uint64_t)(hi - lo) / NPU_MMU_PAGE_SIZE > 16 * view_runs(v))
		return NULL;
	p = npu_ddr_map(it, (uint64_t)lo, (size_t)(hi - lo), write);
	if (!p)
		return NULL;
	*local = *v;
	local->base = v->base - (uint64_t)lo;
	return p;
}

static int view_io(struct npu_iteration *it, const struct npu_view *v,
		   unsigned lcluster, unsigned tpb, uint8_t *buf, bool write)
{
	struct run_arg a = { .it = it, .buf = buf, .space = v->space,
			     .write = write };
	struct npu_view local;
	uint64_t limit = 0;
	uint8_t *host;

	if (v->space != NPU_SPACE_DDR) {
		a.host = space_ptr(it, v->space, lcluster, tpb, &limit);
		if (!a.host) {
			it->detail = NPU_IE_DEST;
			return NPU_TASK_ILLEGAL_INSN;
		}
		if (!write && gather_fast(v, a.host, buf))
			return 0;
		if (!overlaps(v, a.host, buf)) {
			host_view_copy(v, a.host, buf, write);
			return 0;
		}
		return for_each_run(v, run_copy, &a);
	}
	host = ddr_map_view(it, v, write, &local);
	if (host && !overlaps(&local, host, buf)) {
		if (!write && gather_fast(&local, host, buf))
			return 0;
		host_view_copy(&local, host, buf, write);
		return 0;
	}
	if (!write && ddr_gather(it, v, buf))
		return 0;
	return for_each_run(v, run_copy, &a);
}

const void *npu_view_load(struct npu_iteration *it, const struct npu_view *v,
			  int *status)
{
	uint64_t n = npu_view_elems(v);
	unsigned lc = 0, tpb = 0;
	uint8_t *buf;

	*status = 0;
	npu_cost_load(it->cost, n * v->esz);
	if (v->space == NPU_SPACE_HBSM_REMOTE) {
		/* A remote source names exactly one TPB. */
		lc = (unsigned)__builtin_ctz(v->cluster_mask | 0x10000);
		tpb = (unsigned)__builtin_ctz(v->tpb_mask | 0x100);
	}
	if (npu_view_dense(v) && (v->space != NPU_SPACE_DDR || n <= NPU_VIEW_MAX_ELEMS)) {
		/* The bytes themselves, not a copy (DDR's valid for the
		 * iteration: the host's bracket spans it). */
		uint8_t *host = dense_ptr(it, v, lc, tpb, n * v->esz, false);

		if (host)
			return host;
	}
	if (n > NPU_VIEW_MAX_ELEMS) {
		*status = NPU_TASK_INTERNAL;
		return NULL;
	}
	buf = npu_iter_alloc(it, n * v->esz);
	if (!buf) {
		*status = NPU_TASK_INTERNAL;
		return NULL;
	}
	*status = view_io(it, v, lc, tpb, buf, false);
	return *status ? NULL : buf;
}

float *npu_view_load_f32(struct npu_iteration *it, const struct npu_view *v,
			 int *status)
{
	uint64_t n = npu_view_elems(v);
	const void *raw = npu_view_load(it, v, status);
	float *f;

	if (!raw)
		return NULL;
	f = npu_iter_alloc(it, n * sizeof(float));
	if (!f) {
		*status = NPU_TASK_INTERNAL;
		return NULL;
	}
	npu_kern_to_f32(f, raw, v->dtype, n);
	return f;
}

int npu_view_store(struct npu_iteration *it, const struct npu_view *v,
		   const void *data)
{
	unsigned ncl = npu_task_nclusters(it->task), ntpb = npu_task_tpbs(it->task);
	int ret;

	if (v->space != NPU_SPACE_HBSM_REMOTE) {
		npu_cost_store(it->cost, npu_view_elems(v) * v->esz);
		return view_io(it, v, 0, 0, (uint8_t *)data, true);
	}
	/* Broadcast: every TPB of every masked cluster gets the data. */
	for (uint32_t cm = npu_mask_below(v->cluster_mask, ncl); cm; cm &= cm - 1) {
		unsigned c = (unsigned)__builtin_ctz(cm);

		for (uint32_t tm = npu_mask_below(v->tpb_mask, ntpb); tm; tm &= tm - 1) {
			unsigned t = (unsigned)__builtin_ctz(tm);

			npu_cost_store(it->cost, npu_view_elems(v) * v->esz);
			ret = view_io(it, v, c, t, (uint8_t *)data, true);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* copy_2d's prefetching: rows this narrow, this many bytes apart... */
#define COPY_NARROW_ROW 256
#define COPY_FAR_ROWS 4096
/* ... asked for this many rows ahead, with this many tiles' columns. */
#define COPY_PREFETCH_ROWS 16
#define COPY_TILES_AHEAD 4

/* @n rows of @row bytes (a constant where inlined). */
static inline __attribute__((always_inline)) void
copy_rows_fixed(uint8_t *dst, int64_t ds, const uint8_t *src, int64_t ss,
		uint32_t n, size_t row)
{
	for (uint32_t j = 0; j < n; j++)
		memcpy(dst + ds * (int64_t)j, src + ss * (int64_t)j, row);
}

/* One destination of a view copy (npu_view_copy): from @src, two levels
 * as flattened, @transpose or row by row. */
static void copy_2d(uint8_t *dst, const struct flat_view *fd,
		    const uint8_t *src, const struct flat_view *fs,
		    unsigned esz, bool transpose)
{
	const size_t row = (size_t)fs->dims[0] * esz;
	const int64_t ss = fs->strides[1];

	if (transpose) {
		npu_kern_transpose_strided(dst, (size_t)fd->strides[0], src,
					   (size_t)fs->strides[1], esz,
					   fs->dims[1], fs->dims[0]);
		return;
	}
	if (row <= COPY_NARROW_ROW && ss >= COPY_FAR_ROWS) {
		/*
		 * A column tile of a wide matrix (a weight's DMA): each row a
		 * line or two on its own page, which the hardware prefetcher
		 * does not follow.  Ask for rows ahead, and once every
		 * COPY_TILES_AHEAD tiles for the next tiles' part of them too
		 * (the DMAs that follow read them; the lines share a DRAM
		 * page and a translation).  Prefetches never fault.
		 */
		const bool ahead = (uintptr_t)src / row % COPY_TILES_AHEAD == 0;
		const size_t span = ahead ? COPY_TILES_AHEAD * row : row;

		for (uint32_t j = 0; j < fs->dims[1]; j++) {
			/* an address, not a pointer: it may lie past the view */
			const uintptr_t p = (uintptr_t)src +
				(uintptr_t)(ss * (int64_t)(j + COPY_PREFETCH_ROWS));
			size_t x;

			for (x = 0; x < row; x += 64)
				__builtin_prefetch((const void *)(p + x), 0, 3);
			for (; x < span; x += 64)
				__builtin_prefetch((const void *)(p + x), 0, 2);
			memcpy(dst + fd->strides[1] * (int64_t)j, src + ss * (int64_t)j, row);
		}
		return;
	}
	/*
	 * Rows of a weight tile's width (16 bf16 or fp32 elements, the TCU's
	 * N) as fixed-size copies the compiler inlines, not a libc call each.
	 */
	switch (row) {
	case 32:
		copy_rows_fixed(dst, fd->strides[1], src, ss, fs->dims[1], 32);
		return;
	case 64:
		copy_rows_fixed(dst, fd->strides[1], src, ss, fs->dims[1], 64);
		return;
	default:
		break;
	}
	for (uint32_t j = 0; j < fs->dims[1]; j++)
		memcpy(dst + fd->strides[1] * (int64_t)j, src + ss * (int64_t)j, row);
}

/*
 * A dense one-level view @f as two levels shaped like @like (rows of
 * like->dims[0] elements), when the counts agree; else @f is left as is
 * (and the caller's checks refuse the pair).
 */
static void as_rows(struct flat_view *f, const struct flat_view *like,
		    unsigned esz)
{
	if (f->strides[0] != (int64_t)esz ||
	    (uint64_t)like->dims[0] * like->dims[1] != f->dims[0])
		return;
	f->dims[0] = like->dims[0];
	f->dims[1] = like->dims[1];
	f->strides[0] = (int64_t)esz;
	f->strides[1] = (int64_t)esz * like->dims[0];
	f->ndims = 2;
}

/*
 * npu_view_copy of one dense run (or one element) to another: a memcpy
 * per destination, with the same mappings, counts and TPB order as the
 * rows below, and false in the same cases (a DDR side the host does not
 * map in one piece).  Most of a decode step's DMAs are such, a few
 * elements each, and paid for the rows' setup; single elements went
 * through a load and a store.  DDR and on-chip memory cannot overlap.
 */
static bool copy_run(struct npu_iteration *it, const struct npu_view *s,
		     const struct npu_view *d, uint64_t bytes, int *status)
{
	const uint8_t *src = dense_ptr(it, s, 0, 0, bytes, false);
	unsigned ncl, ntpb;
	uint64_t limit;
	uint8_t *p;

	if (!src)
		return false;
	if (d->space != NPU_SPACE_HBSM_REMOTE) {
		p = dense_ptr(it, d, 0, 0, bytes, true);
		if (!p)
			return false;
		npu_cost_load(it->cost, bytes);
		npu_cost_store(it->cost, bytes);
		memcpy(p, src, bytes);
		return true;
	}
	npu_cost_load(it->cost, bytes);
	ncl = npu_task_nclusters(it->task);
	ntpb = npu_task_tpbs(it->task);
	for (uint32_t cm = npu_mask_below(d->cluster_mask, ncl); cm; cm &= cm - 1) {
		unsigned c = (unsigned)__builtin_ctz(cm);

		for (uint32_t tm = npu_mask_below(d->tpb_mask, ntpb); tm; tm &= tm - 1) {
			p = space_ptr(it, d->space, c, (unsigned)__builtin_ctz(tm), &limit);
			if (!p) {
				it->detail = NPU_IE_DEST;
				*status = NPU_TASK_ILLEGAL_INSN;
				return true;
			}
			npu_cost_store(it->cost, bytes);
			memcpy(p + d->base, src, bytes);
		}
	}
	return true;
}

bool npu_view_copy(struct npu_iteration *it, const struct npu_view *s,
		   const struct npu_view *d, int *status)
{
	unsigned ncl = npu_task_nclusters(it->task), ntpb = npu_task_tpbs(it->task);
	unsigned esz = s->esz;
	uint64_t bytes = npu_view_elems(s) * esz;
	struct flat_view fs, fd;
	struct npu_view local;
	const uint8_t *src, *first = NULL;
	uint64_t limit;
	bool transpose, block;

	*status = 0;
	if ((s->space != NPU_SPACE_DDR && s->space != NPU_SPACE_SRAM) ||
	    d->space == s->space || d->space == NPU_SPACE_HBSM || d->esz != esz)
		return false;
	flatten(s, &fs);
	flatten(d, &fd);
	if (fs.ndims == 1 && fd.ndims == 1 && fs.dims[0] == fd.dims[0] &&
	    (fs.dims[0] == 1 ||
	     (fs.strides[0] == (int64_t)esz && fd.strides[0] == (int64_t)esz)))
		return copy_run(it, s, d, bytes, status);
	/*
	 * A dense side flattens to one level: give it the other side's two
	 * (a strided tile of DDR into dense HBSM, the weights' usual DMA),
	 * the same elements in the same order.
	 */
	if (fd.ndims == 1 && fs.ndims == 2) {
		as_rows(&fd, &fs, esz);
	} else if (fs.ndims == 1 && fd.ndims == 2) {
		as_rows(&fs, &fd, esz);
	} else if (fs.ndims == 1 && fd.ndims == 1) {
		/*
		 * One run to one run: a single row.  Most of a decode step's
		 * DMAs are such (a few dense elements each), and went
		 * through a load and a store instead.
		 */
		struct flat_view one = { .dims = { fs.dims[0], 1 }, .ndims = 2 };

		as_rows(&fs, &one, esz);
		as_rows(&fd, &one, esz);
	}
	if (fs.ndims != 2 || fd.ndims != 2 || fs.dims[0] != fd.dims[0] ||
	    fs.dims[1] != fd.dims[1] || fs.strides[0] != (int64_t)esz ||
	    fs.strides[1] <= 0 || fd.strides[0] <= 0 || fd.strides[1] <= 0)
		return false;
	/*
	 * Rows to rows go in the store's order (row_copy's).  A transpose
	 * writes in blocks: only where no element repeats (host_view_copy's
	 * condition), so the order cannot show.
	 */
	if (fd.strides[0] == (int64_t)esz)
		transpose = false;
	else if (fd.strides[1] == (int64_t)esz &&
		 fd.strides[0] >= (int64_t)fd.dims[1] * esz)
		transpose = true;
	else
		return false;
	if (s->space == NPU_SPACE_DDR) {
		src = ddr_map_view(it, s, false, &local);
		if (!src)
			return false;
		src += local.base;
	} else {
		src = space_ptr(it, s->space, 0, 0, &limit);
		if (!src)
			return false;
		src += s->base;
	}
	if (d->space == NPU_SPACE_DDR) {
		uint8_t *dst = ddr_map_view(it, d, true, &local);

		if (!dst)
			return false;
		npu_cost_load(it->cost, bytes);
		npu_cost_store(it->cost, bytes);
		copy_2d(dst + local.base, &fd, src, &fs, esz, transpose);
		return true;
	}
	if (d->space != NPU_SPACE_HBSM_REMOTE) {
		uint8_t *dst = space_ptr(it, d->space, 0, 0, &limit);

		if (!dst)
			return false;
		npu_cost_load(it->cost, bytes);
		npu_cost_store(it->cost, bytes);
		copy_2d(dst + d->base, &fd, src, &fs, esz, transpose);
		return true;
	}
	/*
	 * Every TPB of every masked cluster, in npu_view_store's order
	 * (the work counted as npu_view_load and npu_view_store count it).
	 * Where the destination is one block of @bytes (a dense tile, or a
	 * transpose into one), the second TPB on copy the first's block:
	 * the same bytes at the same offsets, without the source's strides
	 * or the transpose again (broadcasts go to up to 56 TPBs).  The
	 * source is DDR or SRAM, so no copy can change what it reads.
	 */
	npu_cost_load(it->cost, bytes);
	block = transpose ? fd.strides[0] == (int64_t)fd.dims[1] * esz :
			    fd.dims[1] == 1 || fd.strides[1] == (int64_t)fd.dims[0] * esz;
	for (uint32_t cm = npu_mask_below(d->cluster_mask, ncl); cm; cm &= cm - 1) {
		unsigned c = (unsigned)__builtin_ctz(cm);

		for (uint32_t tm = npu_mask_below(d->tpb_mask, ntpb); tm; tm &= tm - 1) {
			unsigned t = (unsigned)__builtin_ctz(tm);
			uint8_t *dst;

			dst = space_ptr(it, d->space, c, t, &limit);
			if (!dst) {
				it->detail = NPU_IE_DEST;
				*status = NPU_TASK_ILLEGAL_INSN;
				return true;
			}
			npu_cost_store(it->cost, bytes);
			if (first && block) {
				memcpy(dst + d->base, first, bytes);
				continue;
			}
			copy_2d(dst + d->base, &fd, src, &fs, esz, transpose);
			first = dst + d->base;
		}
	}
	return true;
}

int npu_view_store_f32(struct npu_iteration *it, const struct npu_view *v,
		       const float *data, unsigned round_mode)
{
	uint64_t n = npu_view_elems(v);
	void *raw;

	/*
	 * A dense local destination takes the conversion in place: no
	 * scratch and no second pass.  Not when the values overlap it (loaded
	 * in place): they are all converted before any is written, below.
	 */
	if ((v->space == NPU_SPACE_HBSM || v->space == NPU_SPACE_SRAM) &&
	    npu_view_dense(v)) {
		uint64_t limit;
		uint8_t *host = space_ptr(it, v->space, 0, 0, &limit);
		uintptr_t h, f = (uintptr_t)data;

		if (host) {
			h = (uintptr_t)(host + v->base);
			if (f + n * sizeof(float) <= h || h + n * v->esz <= f) {
				npu_kern_from_f32(host + v->base, v->dtype, data, n,
						  round_mode);
				npu_cost_store(it->cost, n * v->esz);
				return 0;
			}
		}
	}
	raw = npu_iter_alloc(it, n * v->esz);
	if (!raw)
		return NPU_TASK_INTERNAL;
	npu_kern_from_f32(raw, v->dtype, data, n, round_mode);
	return npu_view_store(it, v, raw);
}

const void *npu_opnd_load(struct npu_iteration *it, unsigned o, int *status)
{
	struct npu_view v;

	npu_opnd_view(it, o, &v);
	return npu_view_load(it, &v, status);
}

float *npu_opnd_load_f32(struct npu_iteration *it, unsigned o, int *status)
{
	struct npu_view v;

	npu_opnd_view(it, o, &v);
	return npu_view_load_f32(it, &v, status);
}
