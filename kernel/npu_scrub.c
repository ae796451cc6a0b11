// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Scrub between contexts: HBSM and the CCB SRAM window keep their contents
 * across tasks and are not behind the MMU (Documentation/hw/queues.md), so
 * a context given clusters or SRAM another context used could read what it
 * left there (LeftoverLocals, CVE-2023-4969).
 *
 * Ownership passes when a context's partition is reserved.  Free clusters
 * and SRAM banks are "dirty" when a context that ran (or was due a scrub)
 * released them.  A context that gets a dirty cluster or bank is marked
 * NPU_CTX_SCRUB_PENDING; its first job written to the ring is preceded, in
 * the same ring and before the same doorbell, by a scrub task the driver
 * builds: a DTDU FILL of 0 over every TPB's whole HBSM and DMA copies of a
 * zero block over the whole SRAM window, run on the context's cluster map
 * and SRAM window.  The queue runs tasks in ring order, so the scrub has
 * completed before the job starts, and the context cannot skip it: it is
 * written by run_job, not by anything the context submits.
 *
 * The scrub programs run in a driver-owned address space (its own page
 * tables and ASID) holding only a zero page and one program per partition
 * size, all read-only; the context's address space is not involved.
 *
 * Copyright (c) 2026 The M100 NPU authors
 */

#include <linux/bitmap.h>
#include <linux/build_bug.h>
#include <linux/debugfs.h>
#include <linux/dma-mapping.h>
#include <linux/ktime.h>
#include <linux/scatterlist.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "npu_ctx.h"
#include "npu_device.h"
#include "npu_job.h"
#include "npu_mmu.h"
#include "npu_scrub.h"

/* Device address of the scrub buffer in the scrub address space. */
#define NPU_SCRUB_VA		SZ_64K
/* The zero page the SRAM is filled from, then one program per size. */
#define NPU_SCRUB_ZERO_BYTES	SZ_4K
#define NPU_SCRUB_PROG_STRIDE	SZ_4K
#define NPU_SCRUB_INSNS		4
#define NPU_SCRUB_ELEM		4	/* INT32 elements */

static_assert(sizeof(struct npu_hw_prog) +
	      NPU_SCRUB_INSNS * sizeof(struct npu_hw_insn) <=
	      NPU_SCRUB_PROG_STRIDE);
/* At most one scrub descriptor per job in flight. */
static_assert(2 * NPU_JOBS_IN_FLIGHT < NPU_RING_ENTRIES);

/**
 * struct npu_scrub - the device's scrub state
 * @vm: the scrub address space.
 * @buf: CPU view of the zero page and the programs.
 * @buf_dma: its bus address.
 * @buf_size: its size.
 * @sram_bytes: per partition size n (index n - 1): the SRAM window its
 *	program fills, the window npu_ctx_sram_bytes() gives.
 * @nbanks: SRAM banks (NPU_M100_SRAM_INTERLEAVE bytes each).
 * @dirty_clusters: free clusters that may hold a context's data
 *	(npu_device.ctx_lock).
 * @dirty_sram: free SRAM banks that may hold a context's data
 *	(npu_device.ctx_lock).
 * @stat_lock: protects the statistics below.
 * @count: scrubs completed.
 * @failed: scrubs that did not complete OK.
 * @cycles_total: simulated cycles of all scrubs.
 * @last_clusters: partition size of the last scrub.
 * @last_sram: SRAM bytes of the last scrub.
 * @last_cycles: simulated cycles of the last scrub.
 * @last_ns: wall time of the last scrub: from its doorbell (or the end of
 *	the task before it on the queue) to its completion being seen.
 */
struct npu_scrub {
	struct npu_vm *vm;
	void *buf;
	dma_addr_t buf_dma;
	size_t buf_size;
	u32 sram_bytes[NPU_HW_MAX_CLUSTERS];
	u32 nbanks;
	u32 dirty_clusters;
	unsigned long *dirty_sram;
	spinlock_t stat_lock;	/* the statistics */
	u64 count;
	u64 failed;
	u64 cycles_total;
	u32 last_clusters;
	u32 last_sram;
	u64 last_cycles;
	u64 last_ns;
};

static void npu_scrub_twu(struct npu_hw_twu *t, u8 space, u64 base)
{
	t->space = space;
	t->dtype = NPU_DT_INT32;
	t->base = base;
}

static void npu_scrub_level(struct npu_hw_twu *t, s32 initial, s32 step,
			    s32 final)
{
	struct npu_hw_twu_level *l = &t->level[t->nlevels++];

	l->initial = initial;
	l->step = step;
	l->final = final;
}

/*
 * Copy of one 4 KiB zero block (the zero page in DDR, or SRAM block 0 once
 * zeroed) over @blocks 4 KiB blocks of SRAM from @off.
 */
static void npu_scrub_sram_insn(struct npu_hw_insn *insn, u32 engine,
				u8 src_space, u64 src, u32 off, u32 blocks)
{
	struct npu_hw_twu *s = &insn->opnd[NPU_OPND_SRC0];
	struct npu_hw_twu *dst = &insn->opnd[NPU_OPND_DST];
	s32 last = NPU_SCRUB_ZERO_BYTES - NPU_SCRUB_ELEM;

	insn->unit = NPU_UNIT_DMA;
	insn->opcode = NPU_DMA_COPY;
	insn->params.dma.engine = engine;
	npu_scrub_twu(s, src_space, src);
	npu_scrub_level(s, 0, NPU_SCRUB_ELEM, last);
	npu_scrub_level(s, 0, 0, blocks);		/* the same block again */
	npu_scrub_twu(dst, NPU_SPACE_SRAM, off);
	npu_scrub_level(dst, 0, NPU_SCRUB_ELEM, last);
	npu_scrub_level(dst, 0, NPU_SCRUB_ZERO_BYTES,
			(blocks - 1) * NPU_SCRUB_ZERO_BYTES);
}

/* DMA waits until CCB counter 0 is 1: SRAM block 0 is zero. */
static void npu_scrub_wait_block0(struct npu_hw_insn *insn)
{
	insn->sync.wait[0].counter = 0;
	insn->sync.wait[0].flags = NPU_WAIT_ENABLE;
	insn->sync.wait[0].value = 1;
}

/*
 * The program for a partition of @n clusters: a DTDU FILL of 0 over the
 * whole HBSM of every TPB of logical clusters 0..n-1; and the SRAM window
 * of @sram bytes: its first 4 KiB block from the zero page in DDR, then
 * the rest from that block by both DMA engines, half each.  Only the first
 * block crosses the DDR port (256 B per cycle, shared by the engines); an
 * SRAM-to-SRAM copy runs at 256 B per cycle on each engine.
 */
static void npu_scrub_build(const struct drm_npu_device_info *info, void *at,
			    u32 n, u32 sram)
{
	struct npu_hw_prog *p = at;
	struct npu_hw_insn *insn = at + sizeof(*p);
	struct npu_hw_twu *dst = &insn[0].opnd[NPU_OPND_DST];
	u32 blocks = sram / NPU_SCRUB_ZERO_BYTES, half;

	memset(at, 0, NPU_SCRUB_PROG_STRIDE);
	p->magic = NPU_PROG_MAGIC;
	p->version_major = NPU_PROG_VERSION_MAJOR;
	p->version_minor = 0;
	p->insn_offset = sizeof(*p);
	p->insn_count = 1;

	insn[0].unit = NPU_UNIT_DTDU;
	insn[0].opcode = NPU_DTDU_FILL;
	insn[0].cluster_mask = GENMASK(n - 1, 0);
	insn[0].tpb_mask = GENMASK(info->tpbs_per_cluster - 1, 0);
	insn[0].params.dtdu.value = 0;
	npu_scrub_twu(dst, NPU_SPACE_HBSM, 0);
	npu_scrub_level(dst, 0, NPU_SCRUB_ELEM,
			info->hbsm_size - NPU_SCRUB_ELEM);

	if (!blocks)
		return;
	npu_scrub_sram_insn(&insn[p->insn_count], 0, NPU_SPACE_DDR,
			    NPU_SCRUB_VA, 0, 1);
	/* Counter 0 of the task's CCB counters: block 0 is zero. */
	insn[p->insn_count].sync.signal[0].counter = 0;
	insn[p->insn_count++].sync.signal[0].flags = NPU_SIGNAL_ENABLE;
	half = (blocks - 1) / 2;
	if (half) {
		npu_scrub_sram_insn(&insn[p->insn_count], 0, NPU_SPACE_SRAM, 0,
				    NPU_SCRUB_ZERO_BYTES, half);
		npu_scrub_wait_block0(&insn[p->insn_count++]);
	}
	if (blocks - 1 - half) {
		npu_scrub_sram_insn(&insn[p->insn_count], 1, NPU_SPACE_SRAM, 0,
				    (1 + half) * NPU_SCRUB_ZERO_BYTES,
				    blocks - 1 - half);
		npu_scrub_wait_block0(&insn[p->insn_count++]);
	}
}

static void npu_scrub_fini(struct drm_device *dev, void *arg)
{
	struct npu_scrub *s = arg;

	npu_vm_destroy(s->vm);
}

/**
 * npu_scrub_init - the scrub address space and programs
 * @ndev: the device, its geometry read.
 *
 * Every healthy cluster and every SRAM bank starts dirty: the device never
 * clears them, not even at reset, so an earlier driver instance's contexts
 * may have left data there.
 *
 * Return: 0 or an errno.
 */
int npu_scrub_init(struct npu_device *ndev)
{
	const struct drm_npu_device_info *info = &ndev->info;
	struct scatterlist sg;
	struct sg_table sgt = { .sgl = &sg, .nents = 1, .orig_nents = 1 };
	struct npu_scrub *s;
	int ret;

	/* One iteration per walker: at most 2^24 INT32 elements. */
	if (info->hbsm_size / NPU_SCRUB_ELEM > NPU_TWU_MAX_COUNT ||
	    info->sram_size / NPU_SCRUB_ELEM > NPU_TWU_MAX_COUNT ||
	    info->hbsm_size % NPU_SCRUB_ELEM ||
	    !info->tpbs_per_cluster ||
	    info->tpbs_per_cluster > NPU_HW_MAX_TPBS_PER_CLUSTER) {
		drm_err(&ndev->drm, "scrub: unsupported geometry (HBSM %u, SRAM %u bytes)\n",
			info->hbsm_size, info->sram_size);
		return -ENODEV;
	}
	s = drmm_kzalloc(&ndev->drm, sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	spin_lock_init(&s->stat_lock);
	s->nbanks = DIV_ROUND_UP(info->sram_size, NPU_M100_SRAM_INTERLEAVE);
	s->dirty_sram = drmm_kcalloc(&ndev->drm, BITS_TO_LONGS(s->nbanks),
				     sizeof(long), GFP_KERNEL);
	if (!s->dirty_sram)
		return -ENOMEM;
	bitmap_fill(s->dirty_sram, s->nbanks);
	s->dirty_clusters = info->healthy_mask;

	s->buf_size = PAGE_ALIGN(NPU_SCRUB_ZERO_BYTES +
				 NPU_HW_MAX_CLUSTERS * NPU_SCRUB_PROG_STRIDE);
	s->buf = dmam_alloc_coherent(ndev->drm.dev, s->buf_size, &s->buf_dma,
				     GFP_KERNEL);
	if (!s->buf)
		return -ENOMEM;
	memset(s->buf, 0, s->buf_size);
	for (u32 n = 1; n <= info->healthy_clusters; n++) {
		s->sram_bytes[n - 1] = npu_ctx_sram_bytes(info, n);
		npu_scrub_build(info, s->buf + NPU_SCRUB_ZERO_BYTES +
				(n - 1) * NPU_SCRUB_PROG_STRIDE, n,
				s->sram_bytes[n - 1]);
	}

	s->vm = npu_vm_create(ndev);
	if (IS_ERR(s->vm))
		return PTR_ERR(s->vm);
	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = s->buf_dma;
	sg_dma_len(&sg) = s->buf_size;
	ret = npu_vm_map(s->vm, NPU_SCRUB_VA, &sgt, s->buf_size, false);
	if (ret) {
		npu_vm_destroy(s->vm);
		return ret;
	}
	ret = drmm_add_action_or_reset(&ndev->drm, npu_scrub_fini, s);
	if (ret)
		return ret;
	ndev->scrub = s;
	return 0;
}

static void npu_scrub_banks(const struct npu_ctx *ctx, u32 *first, u32 *end)
{
	*first = ctx->sram.start / NPU_M100_SRAM_INTERLEAVE;
	*end = DIV_ROUND_UP(ctx->sram.start + ctx->sram.size,
			    NPU_M100_SRAM_INTERLEAVE);
}

/**
 * npu_scrub_claim - a context takes its partition and SRAM window
 * @ctx: the context, its partition and window just reserved.
 *
 * If any of them may hold another context's data, the context's first job
 * is preceded by a scrub.  They belong to @ctx from now on.
 */
void npu_scrub_claim(struct npu_ctx *ctx)
{
	struct npu_device *ndev = ctx->ndev;
	struct npu_scrub *s = ndev->scrub;
	u32 first, end;
	bool dirty;

	lockdep_assert_held(&ndev->ctx_lock);
	if (!s)
		return;	/* no scrub state (unit tests) */
	npu_scrub_banks(ctx, &first, &end);
	dirty = s->dirty_clusters & ctx->cluster_mask ||
		find_next_bit(s->dirty_sram, end, first) < end;
	if (dirty)
		set_bit(NPU_CTX_SCRUB_PENDING, &ctx->scrub_flags);
	s->dirty_clusters &= ~ctx->cluster_mask;
	bitmap_clear(s->dirty_sram, first, end - first);
}

/**
 * npu_scrub_release - a context returns its partition and SRAM window
 * @ctx: the context; no job of it runs any more.
 *
 * They are dirty if a job of @ctx was written to the ring, or if the scrub
 * it was due never ran (they still hold the previous owner's data).
 */
void npu_scrub_release(struct npu_ctx *ctx)
{
	struct npu_device *ndev = ctx->ndev;
	struct npu_scrub *s = ndev->scrub;
	u32 first, end;

	lockdep_assert_held(&ndev->ctx_lock);
	if (!s)
		return;	/* no scrub state (unit tests) */
	if (!test_bit(NPU_CTX_SCRUB_USED, &ctx->scrub_flags) &&
	    !test_bit(NPU_CTX_SCRUB_PENDING, &ctx->scrub_flags))
		return;
	npu_scrub_banks(ctx, &first, &end);
	s->dirty_clusters |= ctx->cluster_mask;
	bitmap_set(s->dirty_sram, first, end - first);
}

/**
 * npu_scrub_write_locked - put the scrub a job needs on the ring
 * @q: the context's queue (its lock held).
 * @job: the job about to be written at q->tail.
 *
 * Called by run_job for every attempt of every job, before the job's own
 * descriptor; the same doorbell covers both.
 */
void npu_scrub_write_locked(struct npu_queue *q, struct npu_job *job)
{
	struct npu_ctx *ctx = job->ctx;
	struct npu_scrub *s = q->ndev->scrub;
	struct npu_hw_task *d;
	u32 slot = q->tail, n = ctx->nclusters;

	lockdep_assert_held(&q->lock);
	if (!s)
		return;
	if (test_and_clear_bit(NPU_CTX_SCRUB_PENDING, &ctx->scrub_flags))
		job->scrub.needed = true;
	set_bit(NPU_CTX_SCRUB_USED, &ctx->scrub_flags);
	if (!job->scrub.needed)
		return;
	WARN_ON_ONCE(ctx->sram.size != s->sram_bytes[n - 1]);

	d = &q->ring[slot];
	memset(d, 0, sizeof(*d));
	memset(&q->comp[slot], 0, sizeof(q->comp[slot]));
	d->magic = NPU_TASK_MAGIC;
	d->flags = NPU_TASK_F_IRQ;
	d->seqno = ++q->hw_seqno;
	d->fence_addr = q->comp_dma + slot * sizeof(struct npu_hw_completion);
	d->pt_base = s->vm->root.dma;
	d->prog_va = NPU_SCRUB_VA + NPU_SCRUB_ZERO_BYTES +
		     (n - 1) * NPU_SCRUB_PROG_STRIDE;
	d->prog_size = NPU_SCRUB_PROG_STRIDE;
	d->asid = s->vm->asid;
	d->nclusters = n;
	memcpy(d->cluster_map, ctx->cluster_map, n);
	d->timeout_cycles = NPU_TASK_MAX_TIMEOUT;
	d->sram_base = ctx->sram.start;
	d->sram_size = ctx->sram.size;

	job->scrub.slot = slot;
	job->scrub.seqno = q->hw_seqno;
	job->scrub.start_ns = ktime_get_ns();
	job->scrub.error = 0;
	q->tail = (slot + 1) % NPU_RING_ENTRIES;
}

/**
 * npu_scrub_poll_locked - account a job's scrub once its record is written
 * @q: the job's queue (its lock held).
 * @job: a job on q->inflight, in order.
 *
 * Called by the completion walk before it looks at the job's own record;
 * the scrub's record is written first (ring order).
 *
 * Return: 0, or -EIO when the scrub failed: the job's data cannot be
 * trusted, the context is banned and due a scrub again, and its partition
 * stays dirty (the context is marked used).
 */
int npu_scrub_poll_locked(struct npu_queue *q, struct npu_job *job)
{
	struct npu_scrub *s = q->ndev->scrub;
	struct npu_hw_completion *c;
	unsigned long flags;
	u64 now, ns;

	lockdep_assert_held(&q->lock);
	if (!job->scrub.seqno)
		return job->scrub.error;
	c = &q->comp[job->scrub.slot];
	if (READ_ONCE(c->seqno) != job->scrub.seqno)
		return 0;
	dma_rmb();	/* the record before its seqno */
	now = ktime_get_ns();
	ns = now - max(job->scrub.start_ns, q->last_done_ns);
	q->last_done_ns = now;
	job->scrub.seqno = 0;

	spin_lock_irqsave(&s->stat_lock, flags);
	s->count++;
	s->cycles_total += c->cycles;
	s->last_clusters = job->ctx->nclusters;
	s->last_sram = job->ctx->sram.size;
	s->last_cycles = c->cycles;
	s->last_ns = ns;
	if (c->status != NPU_TASK_OK) {
		s->failed++;
		job->scrub.error = -EIO;
	}
	spin_unlock_irqrestore(&s->stat_lock, flags);
	if (job->scrub.error) {
		/* No further job of the context may run unscrubbed. */
		set_bit(NPU_CTX_SCRUB_PENDING, &job->ctx->scrub_flags);
		npu_ctx_ban(job->ctx, -EIO);
	}
	if (job->scrub.error)
		drm_err_ratelimited(&q->ndev->drm,
				    "queue %u: scrub for context %u failed: status %u detail %u insn %u\n",
				    q->index, job->ctx->id, c->status,
				    c->detail, c->insn_index);
	else
		drm_dbg_driver(&q->ndev->drm,
			       "queue %u: scrubbed %u clusters, %u SRAM bytes: %llu cycles, %llu ns\n",
			       q->index, job->ctx->nclusters,
			       (u32)job->ctx->sram.size, c->cycles, ns);
	return job->scrub.error;
}

static int npu_scrub_show(struct seq_file *m, void *data)
{
	struct npu_device *ndev = m->private;
	struct npu_scrub *s = ndev->scrub;
	unsigned long flags;
	u32 dirty_clusters, dirty_banks;

	mutex_lock(&ndev->ctx_lock);
	dirty_clusters = s->dirty_clusters;
	dirty_banks = bitmap_weight(s->dirty_sram, s->nbanks);
	mutex_unlock(&ndev->ctx_lock);
	spin_lock_irqsave(&s->stat_lock, flags);
	seq_printf(m, "scrubs: %llu\nfailed: %llu\ncycles_total: %llu\n",
		   s->count, s->failed, s->cycles_total);
	seq_printf(m, "last_clusters: %u\nlast_sram_bytes: %u\nlast_cycles: %llu\nlast_ns: %llu\n",
		   s->last_clusters, s->last_sram, s->last_cycles, s->last_ns);
	spin_unlock_irqrestore(&s->stat_lock, flags);
	seq_printf(m, "dirty_clusters: 0x%x\ndirty_sram_banks: %u of %u\n",
		   dirty_clusters, dirty_banks, s->nbanks);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(npu_scrub);

/**
 * npu_scrub_debugfs_init - the debugfs file "scrub"
 * @ndev: the device.
 * @root: its debugfs directory.
 */
void npu_scrub_debugfs_init(struct npu_device *ndev, struct dentry *root)
{
	debugfs_create_file("scrub", 0444, root, ndev, &npu_scrub_fops);
}
