// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_tdev.h"

/* This thread is between the core's mem_begin and mem_end. */
static _Thread_local bool in_bracket;

/* npu_tdev.bounce_reads: this thread's copies, let go of as its bracket ends. */
#define BOUNCE_MAX 64
static _Thread_local struct { void *p; size_t len; } bounce[BOUNCE_MAX];
static _Thread_local unsigned nbounce;

static void mem_begin(void *opaque)
{
	struct npu_tdev *d = opaque;

	if (in_bracket)
		atomic_fetch_add(&d->mem_misnested, 1);
	in_bracket = true;
	atomic_fetch_add(&d->mem_begins, 1);
}

static void mem_end(void *opaque)
{
	struct npu_tdev *d = opaque;

	if (!in_bracket)
		atomic_fetch_add(&d->mem_misnested, 1);
	in_bracket = false;
	for (unsigned i = 0; i < nbounce; i++) {
		memset(bounce[i].p, 0xa5, bounce[i].len);
		free(bounce[i].p);
	}
	nbounce = 0;
	atomic_fetch_add(&d->mem_ends, 1);
}

static int mem_read(void *opaque, uint64_t pa, void *buf, size_t len)
{
	struct npu_tdev *d = opaque;

	if (in_bracket)
		atomic_fetch_add(&d->mem_bracketed, 1);

	if (pa > d->ddr_size || len > d->ddr_size - pa)
		return -1;
	memcpy(buf, d->ddr + pa, len);
	return 0;
}

static int mem_write(void *opaque, uint64_t pa, const void *buf, size_t len)
{
	struct npu_tdev *d = opaque;

	if (in_bracket)
		atomic_fetch_add(&d->mem_bracketed, 1);

	if (pa > d->ddr_size || len > d->ddr_size - pa)
		return -1;
	memcpy(d->ddr + pa, buf, len);
	return 0;
}

static void *mem_map(void *opaque, uint64_t pa, size_t len, bool write)
{
	struct npu_tdev *d = opaque;

	void *copy;

	if (!d->map_ddr || !in_bracket || pa > d->ddr_size ||
	    len > d->ddr_size - pa)
		return NULL;
	if (d->bounce_reads) {
		if (write || nbounce == BOUNCE_MAX || !(copy = malloc(len)))
			return NULL;
		memcpy(copy, d->ddr + pa, len);
		bounce[nbounce].p = copy;
		bounce[nbounce++].len = len;
	} else {
		copy = d->ddr + pa;
	}
	atomic_fetch_add(&d->mem_bracketed, 1);
	atomic_fetch_add(&d->mem_maps, 1);
	return copy;
}

static uint64_t mem_version(void *opaque, uint64_t pa, size_t len)
{
	struct npu_tdev *d = opaque;

	if (!d->map_ddr || !in_bracket || pa > d->ddr_size ||
	    len > d->ddr_size - pa)
		return 0;
	return d->ddr_version;
}

static void irq(void *opaque, uint32_t pending)
{
	struct npu_tdev *d = opaque;

	d->irq_pending = pending;
	d->irq_calls++;
}

static struct npu_tracer *tracer(void *opaque, unsigned queue, uint64_t seqno)
{
	(void)queue;
	(void)seqno;
	return ((struct npu_tdev *)opaque)->tracer;
}

static void log_hook(void *opaque, const struct npu_core_log *rec)
{
	struct npu_tdev *d = opaque;

	if ((unsigned)rec->event <= NPU_EV_HOST_ERROR)
		d->log_count[rec->event]++;
	d->log_last = *rec;
	snprintf(d->log_msg, sizeof(d->log_msg), "%s", rec->msg);
	d->log_last.msg = d->log_msg;
	if (rec->comp) {
		d->log_comp = *rec->comp;
		d->log_last.comp = &d->log_comp;
	}
}

static void reset_hook(void *opaque)
{
	((struct npu_tdev *)opaque)->resets++;
}

struct npu_tdev *npu_tdev_create(const struct npu_core_config *cfg,
				 unsigned ddr_mb)
{
	struct npu_tdev *d = calloc(1, sizeof(*d));
	struct npu_core_config def;
	struct npu_core_host host = {
		.mem_read = mem_read, .mem_write = mem_write, .irq = irq,
		.mem_begin = mem_begin, .mem_end = mem_end, .mem_map = mem_map,
		.mem_version = mem_version,
		.tracer = tracer, .log = log_hook, .reset = reset_hook,
	};
	char err[200];

	if (!d)
		return NULL;
	d->ddr_size = (uint64_t)ddr_mb << 20;
	d->ddr = calloc(1, d->ddr_size);
	d->next_pa = 0x1000;	/* keep PA 0 unused: catches null pointers */
	host.opaque = d;
	if (!cfg) {
		npu_core_config_default(&def);
		cfg = &def;
	}
	d->core = d->ddr ? npu_core_create(cfg, &host, err, sizeof(err)) : NULL;
	if (!d->core) {
		fprintf(stderr, "npu_tdev: %s\n", d->ddr ? err : "no memory");
		free(d->ddr);
		free(d);
		return NULL;
	}
	d->ring_log2 = 4;
	for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
		d->ring_pa[q] = npu_tdev_alloc(d, sizeof(struct npu_hw_task) << d->ring_log2);
		npu_core_mmio_write(d->core, NPU_REG_Q(q, NPU_Q_BASE_LO), (uint32_t)d->ring_pa[q]);
		npu_core_mmio_write(d->core, NPU_REG_Q(q, NPU_Q_BASE_HI), (uint32_t)(d->ring_pa[q] >> 32));
		npu_core_mmio_write(d->core, NPU_REG_Q(q, NPU_Q_SIZE_LOG2), d->ring_log2);
		npu_core_mmio_write(d->core, NPU_REG_Q(q, NPU_Q_CTRL), NPU_Q_CTRL_ENABLE);
	}
	d->fence_pa = npu_tdev_alloc(d, 4096);
	npu_core_mmio_write(d->core, NPU_REG_IRQ_MASK, 0xffffffffu);
	return d;
}

struct npu_tdev *npu_tdev_small(unsigned clusters, unsigned tpbs,
				uint32_t defect, unsigned threads)
{
	struct npu_core_config cfg;

	npu_core_config_default(&cfg);
	cfg.clusters = clusters;
	cfg.tpbs_per_cluster = tpbs;
	cfg.mesh_x = 4;
	cfg.mesh_y = (clusters + 2 + 3) / 4;
	cfg.defect_mask = defect;
	cfg.hbsm_size = 64u << 10;
	cfg.sram_size = 1u << 20;
	cfg.threads = threads;
	return npu_tdev_create(&cfg, 64);
}

void npu_tdev_destroy(struct npu_tdev *d)
{
	if (!d)
		return;
	npu_core_destroy(d->core);
	free(d->ddr);
	free(d);
}

uint64_t npu_tdev_alloc(struct npu_tdev *d, size_t bytes)
{
	uint64_t pa = d->next_pa;
	uint64_t len = (bytes + 4095) & ~4095ull;

	if (len == 0)
		len = 4096;
	if (pa + len > d->ddr_size) {
		fprintf(stderr, "npu_tdev: fake DDR exhausted\n");
		abort();
	}
	d->next_pa += len;
	memset(d->ddr + pa, 0, len);
	return pa;
}

void *npu_tdev_ptr(struct npu_tdev *d, uint64_t pa)
{
	return d->ddr + pa;
}

uint64_t npu_tdev_ctx(struct npu_tdev *d)
{
	return npu_tdev_alloc(d, 4096);
}

void npu_tdev_map(struct npu_tdev *d, uint64_t root, uint64_t va, uint64_t pa,
		  size_t len, bool read, bool write)
{
	for (uint64_t off = 0; off < len; off += 4096) {
		uint64_t table = root, v = va + off;

		for (int level = NPU_MMU_LEVELS - 1; level > 0; level--) {
			uint64_t *pte = (uint64_t *)(d->ddr + table) + NPU_MMU_INDEX(v, level);

			if (!(*pte & NPU_PTE_VALID))
				*pte = npu_tdev_alloc(d, 4096) | NPU_PTE_VALID;
			table = *pte & NPU_PTE_ADDR_MASK;
		}
		((uint64_t *)(d->ddr + table))[NPU_MMU_INDEX(v, 0)] =
			((pa + off) & NPU_PTE_ADDR_MASK) | NPU_PTE_VALID |
			(read ? NPU_PTE_READ : 0) | (write ? NPU_PTE_WRITE : 0);
	}
}

void *npu_tdev_buf(struct npu_tdev *d, uint64_t root, uint64_t va, size_t len,
		   bool write)
{
	uint64_t pa = npu_tdev_alloc(d, len);

	npu_tdev_map(d, root, va, pa, (len + 4095) & ~(size_t)4095, true, write);
	return d->ddr + pa;
}

void npu_tprog_init(struct npu_tprog *p)
{
	memset(p, 0, sizeof(*p));
}

void npu_tprog_free(struct npu_tprog *p)
{
	free(p->insn);
	memset(p, 0, sizeof(*p));
}

struct npu_hw_insn *npu_tprog_add(struct npu_tprog *p, unsigned unit,
				  unsigned opcode, unsigned cluster_mask,
				  unsigned tpb_mask)
{
	struct npu_hw_insn *in;

	if (p->n == p->cap) {
		unsigned cap = p->cap ? p->cap * 2 : 8;
		struct npu_hw_insn *ni = realloc(p->insn, cap * sizeof(*ni));

		if (!ni)
			abort();
		p->insn = ni;
		p->cap = cap;
	}
	in = &p->insn[p->n++];
	memset(in, 0, sizeof(*in));
	in->unit = (uint8_t)unit;
	in->opcode = (uint8_t)opcode;
	in->cluster_mask = (uint16_t)cluster_mask;
	in->tpb_mask = (uint8_t)tpb_mask;
	return in;
}

static size_t dt_size(unsigned dt)
{
	static const size_t sz[] = { 0, 1, 1, 4, 2, 2, 4 };

	return dt < sizeof(sz) / sizeof(sz[0]) ? sz[dt] : 0;
}

void npu_twu_dense(struct npu_hw_twu *t, unsigned space, unsigned dtype,
		   uint64_t base, unsigned ndims, const uint32_t *dims)
{
	int64_t stride = (int64_t)dt_size(dtype);

	memset(t, 0, sizeof(*t));
	t->base = base;
	t->space = (uint8_t)space;
	t->dtype = (uint8_t)dtype;
	t->nlevels = (uint8_t)ndims;
	for (unsigned l = 0; l < ndims; l++) {
		t->level[l].initial = 0;
		t->level[l].step = (int32_t)stride;
		t->level[l].final = (int32_t)(stride * (dims[l] - 1));
		stride *= dims[l];
	}
}

void npu_twu_level(struct npu_hw_twu *t, unsigned level, int32_t initial,
		   int32_t step, int32_t final)
{
	t->level[level].initial = initial;
	t->level[level].step = step;
	t->level[level].final = final;
	if (level + 1 > t->nlevels)
		t->nlevels = (uint8_t)(level + 1);
}

uint8_t *npu_tdev_hbsm(struct npu_tdev *d, unsigned cluster, unsigned tpb)
{
	return npu_core_debug_hbsm(d->core, cluster, tpb, NULL);
}

struct npu_hw_completion *npu_tdev_queue(struct npu_tdev *d, unsigned queue,
					 struct npu_hw_task *desc)
{
	uint32_t tail = npu_core_mmio_read(d->core, NPU_REG_Q(queue, NPU_Q_TAIL));
	struct npu_hw_completion *fence;

	desc->fence_addr = d->fence_pa + 64 * queue;
	fence = (struct npu_hw_completion *)(d->ddr + desc->fence_addr);
	memset(fence, 0, sizeof(*fence));
	memcpy(d->ddr + d->ring_pa[queue] + tail * sizeof(*desc), desc, sizeof(*desc));
	tail = (tail + 1) & ((1u << d->ring_log2) - 1);
	npu_core_mmio_write(d->core, NPU_REG_Q(queue, NPU_Q_TAIL), tail);
	return fence;
}

int npu_tdev_run_desc(struct npu_tdev *d, unsigned queue,
		      struct npu_hw_task *desc, struct npu_hw_completion *comp)
{
	struct npu_hw_completion *fence = npu_tdev_queue(d, queue, desc);

	npu_core_run_pending(d->core);
	*comp = *fence;
	npu_core_mmio_write(d->core, NPU_REG_IRQ_STATUS, 0xffffffffu);
	return comp->seqno == desc->seqno ? (int)comp->status : -1;
}

struct npu_hw_prog *npu_tdev_prepare(struct npu_tdev *d,
				     const struct npu_tprog *p,
				     const struct npu_tdev_submit *opt,
				     struct npu_hw_task *desc)
{
	struct npu_tdev_submit o = opt ? *opt : (struct npu_tdev_submit){ 0 };
	uint32_t fuse = npu_core_mmio_read(d->core, NPU_REG_FUSE_MASK);
	uint32_t ncl = NPU_GEOM_CLUSTERS(npu_core_mmio_read(d->core, NPU_REG_GEOM));
	size_t size = sizeof(struct npu_hw_prog) + (size_t)p->n * sizeof(struct npu_hw_insn);
	struct npu_hw_prog *hdr;
	uint8_t *mem;

	if (!o.root)
		o.root = npu_tdev_ctx(d);
	if (!o.nclusters)
		o.nclusters = 1;
	if (!o.prog_va)
		o.prog_va = 0x10000000;
	mem = npu_tdev_buf(d, o.root, o.prog_va, size, false);
	hdr = (struct npu_hw_prog *)mem;
	hdr->magic = NPU_PROG_MAGIC;
	hdr->version_major = NPU_PROG_VERSION_MAJOR;
	hdr->version_minor = NPU_PROG_VERSION_MINOR;
	hdr->insn_count = p->n;
	hdr->insn_offset = sizeof(*hdr);
	if (p->n)
		memcpy(mem + sizeof(*hdr), p->insn, (size_t)p->n * sizeof(*p->insn));

	memset(desc, 0, sizeof(*desc));
	desc->magic = NPU_TASK_MAGIC;
	desc->flags = NPU_TASK_F_IRQ;
	desc->seqno = ++d->seqno;
	desc->pt_base = o.root;
	desc->prog_va = o.prog_va;
	desc->prog_size = (uint32_t)size;
	desc->asid = 1;
	desc->nclusters = (uint8_t)o.nclusters;
	desc->timeout_cycles = o.timeout_cycles;
	if (o.cluster_map) {
		memcpy(desc->cluster_map, o.cluster_map, o.nclusters);
	} else {
		unsigned n = 0;

		for (unsigned c = 0; c < ncl && n < o.nclusters; c++)
			if (!(fuse & (1u << c)))
				desc->cluster_map[n++] = (uint8_t)c;
	}
	desc->sram_base = o.sram_base;
	desc->sram_size = o.sram_size ? o.sram_size :
			  npu_core_mmio_read(d->core, NPU_REG_SRAM_SIZE) - o.sram_base;
	return hdr;
}

int npu_tdev_run(struct npu_tdev *d, const struct npu_tprog *p,
		 const struct npu_tdev_submit *opt,
		 struct npu_hw_completion *comp)
{
	struct npu_hw_task desc;

	npu_tdev_prepare(d, p, opt, &desc);
	return npu_tdev_run_desc(d, opt ? opt->queue : 0, &desc, comp);
}
