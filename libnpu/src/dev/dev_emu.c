// SPDX-License-Identifier: MIT
/*
 * The emulator backend: an in-process device core, driven the way the
 * kernel driver drives the real device: rings, descriptors, per-context
 * page tables, cluster partitions and SRAM windows.
 *
 * Device "physical" memory is a set of host allocations (chunks), each at
 * its own physical range with an unbacked guard page after it, so the core
 * sees a stray access as a bus error.  One worker thread runs the core
 * whenever a doorbell rings and harvests completion records into the jobs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "npu_core.h"
#include "npu/npu_hw_partition.h"
#include "dev/emu_stats.h"
#include "dev/npu_dev.h"
#include "trace/trace_rec.h"

/*
 * 255 tasks in flight per queue.  npu_submit() queues a run's steps all at
 * once; a transformer's decode step is 72 of them, and with 63 slots the
 * submitter slept for a slot mid-run, to be woken by the worker and wake
 * it again for the last few: 16.6 futex calls per token, now 7.8.
 */
#define EMU_RING_LOG2		8
#define EMU_RING_ENTRIES	(1u << EMU_RING_LOG2)
#define EMU_PA_START		(1ull << 30)
#define EMU_VA_START		(1ull << 20)
#define EMU_VA_END		(1ull << NPU_MMU_VA_BITS)
#define EMU_MAX_CTX		64
#define EMU_PAGE		NPU_MMU_PAGE_SIZE

struct emu_chunk {
	uint64_t pa;
	size_t size;
	uint8_t *host;
	/*
	 * Nonzero once sealed (emu_bo_seal): the bytes never change again,
	 * and this is their version for the core (npu_core_host.mem_version),
	 * unique to this chunk.  The host pages are then read-only, so a
	 * write that breaks the promise faults where it is made.
	 */
	uint64_t version;
};

struct emu_bo {
	npu_dev_bo pub;
	struct emu_chunk *chunk;
	uint64_t mapped;		/* bit i: mapped in context id i */
	struct emu_bo *prev, *next;	/* every buffer of the device */
};

struct emu_ctx {
	npu_dev_ctx pub;
	struct emu_chunk *root;
	struct emu_chunk **tables;	/* every table page, for freeing */
	size_t ntables, cap_tables;
	uint32_t sram_base, sram_size;
	struct npu_trace_rec *trace;	/* NULL: jobs not traced */
};

struct npu_dev_job {
	struct emu_dev *emu;
	unsigned queue;
	uint64_t seqno;
	uint32_t slot;
	/*
	 * Harvested: set with release order after @comp (and @why, the
	 * trace) are final, so a waiter that reads it with acquire order
	 * needs no lock.  A run waits for each of its steps and frees each:
	 * ~150 lock round trips per decode token, mostly for jobs long done.
	 */
	atomic_bool done;
	bool awaited;			/* a thread waits for it (emu_wait_done) */
	struct npu_hw_completion comp;
	struct npu_dev_job *next;	/* its queue's outstanding jobs */
	struct npu_trace_job trace;	/* trace.rec NULL: not traced */
	/* Why the device failed it, from the core's log hook ("" if not). */
	char why[200];
};

struct emu_queue {
	struct emu_chunk *ring;
	struct emu_chunk *comp;
	uint32_t tail;
	uint32_t outstanding;
	/*
	 * Its jobs not yet harvested, oldest first: a queue completes its
	 * tasks in order, so a harvest stops at the first not done rather
	 * than reading every outstanding job's completion (a run queues all
	 * its steps, 72 for a decode token, and the worker harvests each
	 * time it runs dry).
	 */
	struct npu_dev_job *head, **tailp;
	unsigned contexts;
};

struct emu_dev {
	struct npu_device base;
	struct npu_core *core;
	struct npu_core_config cfg;

	/*
	 * Protects the chunk list; the core reads it from the worker, holding
	 * it for reading over each round of iterations (emu_mem_begin), so
	 * a buffer allocation or free waits for the running iterations.
	 */
	pthread_rwlock_t chunk_lock;
	struct emu_chunk **chunks;	/* sorted by pa */
	size_t nchunks, cap_chunks;
	uint64_t chunk_gen;		/* bumped when a chunk goes */
	uint64_t next_pa;

	/* Protects everything below (bookkeeping, rings, jobs). */
	pthread_mutex_t lock;
	pthread_cond_t kick;		/* worker: a doorbell rang */
	pthread_cond_t done;		/* waiters: jobs were harvested */
	/*
	 * A queue has work (set by emu_kick, cleared by the worker), and the
	 * worker waits on @kick or is about to.  Atomics rather than under
	 * @lock: the core kicks at every doorbell and every completion that
	 * leaves work, and only a sleeping worker needs the lock and a
	 * wake-up.  Dekker-style: the kicker sets @kicked then reads
	 * @sleeping, the worker sets @sleeping then reads @kicked (both
	 * sequentially consistent), so one of them sees the other.
	 */
	atomic_bool kicked, sleeping;
	bool stop;
	pthread_t worker;
	uint64_t next_va;
	uint64_t seqno;
	uint32_t free_clusters;
	uint64_t ctx_ids;		/* bit i: context id i in use */
	uint8_t *sram_used;		/* one byte per 4 KiB bank */
	struct emu_queue q[NPU_HW_NUM_QUEUES];
	unsigned slot_waiters;		/* submitters waiting for a ring slot */
	/* Outstanding jobs that record a trace: emu_tracer looks for one
	 * only while any is (read without the lock). */
	atomic_uint traced;
	struct emu_ctx *ctxs[EMU_MAX_CTX];	/* by context id */
	struct emu_bo *bos;
	bool worker_started;
	uint32_t cluster_pos[NPU_HW_MAX_CLUSTERS];
	uint64_t jobs;			/* completed */
	uint64_t bo_bytes;		/* in live buffers */
	uint64_t versions;		/* the last sealed chunk's version */
	/* The stats file for monitors; used by the worker and open/close. */
	struct npu_emu_publisher stats;
	pthread_mutex_t stats_lock;	/* serializes writes of the file */
};

/* ---- physical memory ---- */

static struct emu_chunk *chunk_find(struct emu_dev *emu, uint64_t pa)
{
	size_t lo = 0, hi = emu->nchunks;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		struct emu_chunk *c = emu->chunks[mid];

		if (pa < c->pa)
			hi = mid;
		else if (pa >= c->pa + c->size)
			lo = mid + 1;
		else
			return c;
	}
	return NULL;
}

/*
 * The device whose chunk_lock this thread holds for reading between
 * emu_mem_begin and emu_mem_end: its accesses then skip the lock, taken
 * once per instruction iteration (or round) rather than once per access.
 */
static _Thread_local const struct emu_dev *emu_mem_held;

/*
 * The chunks this thread's brackets found, by page: a lookup that hits
 * costs a few instructions instead of a binary search through the chunk
 * list's pointers.  One round touches several chunks in turn (the three
 * levels of page tables, weights, activations, a GSDU chain), which a
 * single last-found chunk kept missing: ~150 instructions a lookup,
 * 2,000 lookups per decode token.  Valid while @gen is the device's
 * chunk_gen, which a freed chunk bumps under the write lock; new chunks
 * take addresses never used before, so no entry can hide one.
 */
#define EMU_MAP_CACHE 64

struct emu_map_cache {
	const struct emu_dev *dev;
	uint64_t gen;
	struct {
		uint64_t lo, hi;	/* the chunk's [pa, pa + size) */
		struct emu_chunk *chunk;
	} e[EMU_MAP_CACHE];
};

static _Thread_local struct emu_map_cache emu_map_cache;

static void emu_mem_begin(void *opaque)
{
	struct emu_dev *emu = opaque;

	pthread_rwlock_rdlock(&emu->chunk_lock);
	emu_mem_held = emu;
	if (emu_map_cache.dev != emu || emu_map_cache.gen != emu->chunk_gen) {
		memset(emu_map_cache.e, 0, sizeof(emu_map_cache.e));
		emu_map_cache.dev = emu;
		emu_map_cache.gen = emu->chunk_gen;
	}
}

static void emu_mem_end(void *opaque)
{
	struct emu_dev *emu = opaque;

	emu_mem_held = NULL;
	pthread_rwlock_unlock(&emu->chunk_lock);
}

/* The chunk holding @pa, inside this thread's bracket; NULL if none. */
static struct emu_chunk *chunk_held(struct emu_dev *emu, uint64_t pa)
{
	unsigned slot = (unsigned)(pa / EMU_PAGE % EMU_MAP_CACHE);
	struct emu_chunk *c;

	/* An empty entry (lo == hi) holds nothing. */
	if (pa - emu_map_cache.e[slot].lo <
	    emu_map_cache.e[slot].hi - emu_map_cache.e[slot].lo)
		return emu_map_cache.e[slot].chunk;
	c = chunk_find(emu, pa);
	if (c) {
		emu_map_cache.e[slot].lo = c->pa;
		emu_map_cache.e[slot].hi = c->pa + c->size;
		emu_map_cache.e[slot].chunk = c;
	}
	return c;
}

static int emu_mem_access(void *opaque, uint64_t pa, void *buf, size_t len,
			  bool write)
{
	struct emu_dev *emu = opaque;
	bool held = emu_mem_held == emu;
	struct emu_chunk *c;
	int ret = -1;

	if (!held)
		pthread_rwlock_rdlock(&emu->chunk_lock);
	c = held ? chunk_held(emu, pa) : chunk_find(emu, pa);
	if (c && len <= c->size - (pa - c->pa) && !(write && c->version)) {
		if (write)
			memcpy(c->host + (pa - c->pa), buf, len);
		else
			memcpy(buf, c->host + (pa - c->pa), len);
		ret = 0;
	}
	if (!held)
		pthread_rwlock_unlock(&emu->chunk_lock);
	return ret;
}

/*
 * In-place access for the core (npu_core_host.mem_map): only inside a
 * bracket, whose read lock keeps the chunk, hence the pointer, alive
 * until emu_mem_end.
 */
static void *emu_mem_map(void *opaque, uint64_t pa, size_t len, bool write)
{
	struct emu_dev *emu = opaque;
	struct emu_chunk *c;

	if (emu_mem_held != emu)
		return NULL;
	c = chunk_held(emu, pa);
	if (!c || len > c->size - (pa - c->pa) || (write && c->version))
		return NULL;
	return c->host + (pa - c->pa);
}

/* The core's mem_version: a sealed chunk's, inside a bracket. */
static uint64_t emu_mem_version(void *opaque, uint64_t pa, size_t len)
{
	struct emu_dev *emu = opaque;
	struct emu_chunk *c;

	if (emu_mem_held != emu)
		return 0;
	c = chunk_held(emu, pa);
	if (!c || len > c->size - (pa - c->pa))
		return 0;
	return c->version;
}

static int emu_mem_read(void *opaque, uint64_t pa, void *buf, size_t len)
{
	return emu_mem_access(opaque, pa, buf, len, false);
}

static int emu_mem_write(void *opaque, uint64_t pa, const void *buf, size_t len)
{
	return emu_mem_access(opaque, pa, (void *)buf, len, true);
}

static struct emu_chunk *chunk_alloc(struct emu_dev *emu, size_t size)
{
	size_t bytes = (size + EMU_PAGE - 1) & ~(size_t)(EMU_PAGE - 1);
	struct emu_chunk *c = calloc(1, sizeof(*c));
	size_t i;

	if (!c)
		return NULL;
	c->host = aligned_alloc(EMU_PAGE, bytes);
	if (!c->host) {
		free(c);
		return NULL;
	}
	memset(c->host, 0, bytes);
	c->size = bytes;
	pthread_rwlock_wrlock(&emu->chunk_lock);
	if (emu->nchunks == emu->cap_chunks) {
		size_t cap = emu->cap_chunks ? 2 * emu->cap_chunks : 64;
		struct emu_chunk **n = realloc(emu->chunks, cap * sizeof(*n));

		if (!n) {
			pthread_rwlock_unlock(&emu->chunk_lock);
			free(c->host);
			free(c);
			return NULL;
		}
		emu->chunks = n;
		emu->cap_chunks = cap;
	}
	/* Fresh ranges only grow, so appending keeps the list sorted. */
	c->pa = emu->next_pa;
	emu->next_pa += bytes + EMU_PAGE;	/* unbacked guard page */
	i = emu->nchunks++;
	emu->chunks[i] = c;
	pthread_rwlock_unlock(&emu->chunk_lock);
	return c;
}

static void chunk_free(struct emu_dev *emu, struct emu_chunk *c)
{
	if (!c)
		return;
	pthread_rwlock_wrlock(&emu->chunk_lock);
	for (size_t i = 0; i < emu->nchunks; i++) {
		if (emu->chunks[i] == c) {
			memmove(&emu->chunks[i], &emu->chunks[i + 1],
				(emu->nchunks - i - 1) * sizeof(*emu->chunks));
			emu->nchunks--;
			emu->chunk_gen++;	/* brackets' caches forget it */
			break;
		}
	}
	pthread_rwlock_unlock(&emu->chunk_lock);
	/* The allocator writes freed memory. */
	if (c->version)
		mprotect(c->host, c->size, PROT_READ | PROT_WRITE);
	free(c->host);
	free(c);
}

/* ---- page tables (emu->lock held) ---- */

static uint64_t *pt_entries(struct emu_dev *emu, uint64_t table_pa)
{
	struct emu_chunk *c = chunk_find(emu, table_pa);

	return c ? (uint64_t *)(c->host + (table_pa - c->pa)) : NULL;
}

static int ctx_add_table(struct emu_ctx *ctx, struct emu_chunk *c)
{
	if (ctx->ntables == ctx->cap_tables) {
		size_t cap = ctx->cap_tables ? 2 * ctx->cap_tables : 16;
		struct emu_chunk **n = realloc(ctx->tables, cap * sizeof(*n));

		if (!n)
			return -1;
		ctx->tables = n;
		ctx->cap_tables = cap;
	}
	ctx->tables[ctx->ntables++] = c;
	return 0;
}

static int pt_map_page(struct emu_dev *emu, struct emu_ctx *ctx, uint64_t va,
		       uint64_t pte)
{
	uint64_t table = ctx->root->pa;

	for (int level = NPU_MMU_LEVELS - 1; level > 0; level--) {
		uint64_t *e;

		pthread_rwlock_rdlock(&emu->chunk_lock);
		e = pt_entries(emu, table) + NPU_MMU_INDEX(va, level);
		pthread_rwlock_unlock(&emu->chunk_lock);
		if (!(*e & NPU_PTE_VALID)) {
			struct emu_chunk *t = chunk_alloc(emu, EMU_PAGE);

			if (!t || ctx_add_table(ctx, t)) {
				chunk_free(emu, t);
				return -1;
			}
			*e = t->pa | NPU_PTE_VALID;
		}
		table = *e & NPU_PTE_ADDR_MASK;
	}
	pthread_rwlock_rdlock(&emu->chunk_lock);
	pt_entries(emu, table)[NPU_MMU_INDEX(va, 0)] = pte;
	pthread_rwlock_unlock(&emu->chunk_lock);
	return 0;
}

static int ctx_map_bo(struct emu_dev *emu, struct emu_ctx *ctx, struct emu_bo *bo)
{
	uint64_t perm = NPU_PTE_VALID | NPU_PTE_READ |
			(bo->pub.flags & NPU_DEV_BO_DEVICE_RO ? 0 : NPU_PTE_WRITE);

	for (size_t off = 0; off < bo->chunk->size; off += EMU_PAGE)
		if (pt_map_page(emu, ctx, bo->pub.dev_addr + off,
				((bo->chunk->pa + off) & NPU_PTE_ADDR_MASK) | perm))
			return -1;
	bo->mapped |= 1ull << ctx->pub.id;
	return 0;
}

/* ---- the worker ---- */

static void emu_kick(void *opaque, unsigned queue)
{
	struct emu_dev *emu = opaque;

	(void)queue;
	/* Called from inside the core's MMIO write and completions: flag
	 * the worker; lock and signal only if it sleeps (or is about to). */
	atomic_store(&emu->kicked, true);
	if (atomic_load(&emu->sleeping)) {
		/*
		 * Once the lock is ours, a worker that set @sleeping is inside
		 * pthread_cond_wait (it held the lock until then), so the
		 * signal reaches it; sent after the unlock, it wakes the
		 * worker to a free lock instead of one this thread holds.
		 */
		pthread_mutex_lock(&emu->lock);
		pthread_mutex_unlock(&emu->lock);
		pthread_cond_signal(&emu->kick);
	}
}

/*
 * The core asks, as each task starts, whether to trace it: the job with
 * that descriptor, if its context records a trace.  The job stays on the
 * outstanding list (and alive) until harvested after the task completed.
 */
static struct npu_tracer *emu_tracer(void *opaque, unsigned queue, uint64_t seqno)
{
	struct emu_dev *emu = opaque;
	struct npu_tracer *t = NULL;

	/* Counted before the doorbell rang for it, so seen here. */
	if (!atomic_load(&emu->traced))
		return NULL;
	pthread_mutex_lock(&emu->lock);
	for (struct npu_dev_job *j = emu->q[queue].head; j; j = j->next) {
		if (j->seqno == seqno) {
			t = j->trace.rec ? &j->trace.ops : NULL;
			break;
		}
	}
	pthread_mutex_unlock(&emu->lock);
	return t;
}

/*
 * The core's log hook.  libnpu drives the registers itself, so what
 * matters is a failed task: its line (without the queue and task, which
 * mean nothing to the caller) becomes the job's error message.  Called
 * with the core's lock held, as emu_kick is.
 */
static void emu_log(void *opaque, const struct npu_core_log *rec)
{
	struct emu_dev *emu = opaque;
	char prefix[64];
	const char *msg = rec->msg;
	size_t n;

	if (rec->event == NPU_EV_BAD_ACCESS || rec->event == NPU_EV_QUEUE_ERROR)
		return;
	n = (size_t)snprintf(prefix, sizeof(prefix), "queue %u, task %llu: ",
			     rec->queue, (unsigned long long)rec->seqno);
	if (!strncmp(msg, prefix, n))
		msg += n;
	if (rec->queue >= NPU_HW_NUM_QUEUES)
		return;
	pthread_mutex_lock(&emu->lock);
	for (struct npu_dev_job *j = emu->q[rec->queue].head; j; j = j->next) {
		if (j->seqno == rec->seqno) {
			snprintf(j->why, sizeof(j->why), "%s", msg);
			break;
		}
	}
	pthread_mutex_unlock(&emu->lock);
}

/*
 * Collect the completed jobs; true if a thread waits for one of them (or
 * for the ring slots they free).  A program's steps complete a few at a
 * time while its caller waits for the last: waking it at each harvest
 * cost it and the worker a futex call and a context switch for nothing.
 */
static bool emu_harvest_locked(struct emu_dev *emu)
{
	bool wake = false;

	for (unsigned qi = 0; qi < NPU_HW_NUM_QUEUES; qi++) {
		struct emu_queue *q = &emu->q[qi];
		struct npu_dev_job *j;

		while ((j = q->head)) {
			struct npu_hw_completion *c = (struct npu_hw_completion *)
				(q->comp->host + j->slot * sizeof(*c));

			if (c->seqno != j->seqno)
				break;
			if (j->trace.rec)
				atomic_fetch_sub(&emu->traced, 1);
			j->comp = *c;
			q->head = j->next;
			if (!q->head)
				q->tailp = &q->head;
			wake |= j->awaited || emu->slot_waiters;
			emu->jobs++;
			q->outstanding--;
			/* Last: a waiter may free the job once it reads this. */
			atomic_store_explicit(&j->done, true, memory_order_release);
		}
	}
	return wake;
}

static npu_status emu_counters(struct npu_device *dev, npu_device_counters *out);

/*
 * Refresh the stats file (at most every 100 ms unless @force).  Called
 * without emu->lock: reading the registers takes the core's lock, and the
 * core calls emu_kick (which takes emu->lock) with it held.
 */
static void emu_publish(struct emu_dev *emu, bool force)
{
	struct npu_emu_stats s = { .info = &emu->base.info };

	pthread_mutex_lock(&emu->stats_lock);
	if (!npu_emu_stats_due(&emu->stats, force)) {
		pthread_mutex_unlock(&emu->stats_lock);
		return;
	}
	pthread_mutex_lock(&emu->lock);
	s.jobs = emu->jobs;
	s.memory = emu->bo_bytes;
	for (unsigned i = 0; i < EMU_MAX_CTX; i++)
		if (emu->ctx_ids >> i & 1) {
			s.contexts++;
			s.context_clusters |= emu->ctxs[i]->pub.cluster_mask;
		}
	pthread_mutex_unlock(&emu->lock);
	emu_counters(&emu->base, &s.counters);
	npu_emu_stats_write(&emu->stats, &s);
	pthread_mutex_unlock(&emu->stats_lock);
}

static void *emu_worker(void *arg)
{
	struct emu_dev *emu = arg;
	bool wake;

	pthread_mutex_lock(&emu->lock);
	for (;;) {
		while (!atomic_load(&emu->kicked) && !emu->stop) {
			atomic_store(&emu->sleeping, true);
			if (!atomic_load(&emu->kicked))
				pthread_cond_wait(&emu->kick, &emu->lock);
			atomic_store(&emu->sleeping, false);
		}
		if (emu->stop)
			break;
		atomic_store(&emu->kicked, false);
		pthread_mutex_unlock(&emu->lock);
		npu_core_run_pending(emu->core);
		pthread_mutex_lock(&emu->lock);
		wake = emu_harvest_locked(emu);
		pthread_mutex_unlock(&emu->lock);
		/* After the unlock: a waiter woken under it went straight
		 * back to sleep on the lock (three futex calls per run). */
		if (wake)
			pthread_cond_broadcast(&emu->done);
		emu_publish(emu, false);
		pthread_mutex_lock(&emu->lock);
	}
	pthread_mutex_unlock(&emu->lock);
	return NULL;
}

/* ---- buffers ---- */

static void emu_bo_free(struct npu_device *dev, npu_dev_bo *pub);

static npu_status emu_bo_create(struct npu_device *dev, size_t size,
				uint32_t flags, npu_dev_bo **out)
{
	struct emu_dev *emu = (struct emu_dev *)dev;
	struct emu_bo *bo;

	*out = NULL;
	if (!size || size > (1ull << 32))
		return npu_fail(NPU_ERR_INVALID_ARG,
				"buffer size %zu: must be 1 byte to 4 GiB", size);
	bo = calloc(1, sizeof(*bo));
	if (bo)
		bo->chunk = chunk_alloc(emu, size);
	if (!bo || !bo->chunk) {
		free(bo);
		return npu_fail(NPU_ERR_NO_MEMORY,
				"cannot allocate a %zu-byte device buffer", size);
	}
	pthread_mutex_lock(&emu->lock);
	bo->pub.dev_addr = emu->next_va;
	/* Addresses are not reused: a stale address faults, as on hardware. */
	emu->next_va += bo->chunk->size + EMU_PAGE;
	bo->next = emu->bos;
	if (emu->bos)
		emu->bos->prev = bo;
	emu->bos = bo;
	emu->bo_bytes += bo->chunk->size;
	pthread_mutex_unlock(&emu->lock);
	if (bo->pub.dev_addr + bo->chunk->size > EMU_VA_END) {
		emu_bo_free(dev, &bo->pub);
		return npu_fail(NPU_ERR_NO_MEMORY, "device address space exhausted");
	}
	bo->pub.host = bo->chunk->host;
	bo->pub.size = size;
	bo->pub.flags = flags;
	*out = &bo->pub;
	return NPU_OK;
}

/*
 * The host will not write @pub again (npu_dev_ops.bo_seal): its chunk
 * gets a version and read-only pages.  Only device read-only buffers: the
 * device never writes those either.  Where the pages cannot be made
 * read-only (a host page larger than the device's), it stays unsealed.
 */
static void emu_bo_seal(struct npu_device *dev, npu_dev_bo *pub)
{
	struct emu_dev *emu = (struct emu_dev *)dev;
	struct emu_bo *bo = (struct emu_bo *)pub;
	struct emu_chunk *c = bo->chunk;

	if (!(pub->flags & NPU_DEV_BO_DEVICE_RO) || c->version ||
	    (size_t)sysconf(_SC_PAGESIZE) > EMU_PAGE ||
	    mprotect(c->host, c->size, PROT_READ))
		return;
	/* Under the write lock: no task reads the version meanwhile. */
	pthread_rwlock_wrlock(&emu->chunk_lock);
	c->version = ++emu->versions;
	pthread_rwlock_unlock(&emu->chunk_lock);
}

static void emu_unmap_bo_locked(struct emu_dev *emu, struct emu_bo *bo,
				struct emu_ctx *ctx)
{
	for (size_t off = 0; off < bo->chunk->size; off += EMU_PAGE)
		pt_map_page(emu, ctx, bo->pub.dev_addr + off, 0);
	bo->mapped &= ~(1ull << ctx->pub.id);
}

static void emu_bo_free(struct npu_device *dev, npu_dev_bo *pub)
{
	struct emu_dev *emu = (struct emu_dev *)dev;
	struct emu_bo *bo = (struct emu_bo *)pub;

	pthread_mutex_lock(&emu->lock);
	for (unsigned i = 0; i < EMU_MAX_CTX; i++)
		if (bo->mapped >> i & 1 && emu->ctxs[i])
			emu_unmap_bo_locked(emu, bo, emu->ctxs[i]);
	if (bo->prev)
		bo->prev->next = bo->next;
	else
		emu->bos = bo->next;
	if (bo->next)
		bo->next->prev = bo->prev;
	emu->bo_bytes -= bo->chunk->size;
	pthread_mutex_unlock(&emu->lock);
	chunk_free(emu, bo->chunk);
	free(bo);
}

/* ---- contexts ---- */

/* First fit of @n 4 KiB banks; returns the first bank or -1. */
static long sram_alloc(struct emu_dev *emu, uint32_t n)
{
	uint32_t banks = emu->cfg.sram_size / NPU_M100_SRAM_INTERLEAVE;

	for (uint32_t start = 0; start + n <= banks; start++) {
		uint32_t k = 0;

		while (k < n && !emu->sram_used[start + k])
			k++;
		if (k == n) {
			memset(emu->sram_used + start, 1, n);
			return start;
		}
		start += k;
	}
	return -1;
}

static npu_status emu_ctx_create(struct npu_device *dev, uint32_t clusters,
				 npu_dev_ctx **out)
{
	struct emu_dev *emu = (struct emu_dev *)dev;
	const npu_device_info *info = &dev->info;
	struct emu_ctx *ctx;
	struct emu_queue *best = NULL;
	uint32_t banks;
	long bank;
	unsigned id;

	*out = NULL;
	if (!clusters || clusters > info->healthy_clusters)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"a partition of %u clusters: this device has %u healthy clusters",
				clusters, info->healthy_clusters);
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	ctx->root = chunk_alloc(emu, EMU_PAGE);
	if (!ctx->root) {
		free(ctx);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory for page tables");
	}

	pthread_mutex_lock(&emu->lock);
	ctx->pub.cluster_mask = npu_hw_partition_pick(info->mesh_x, info->mesh_y,
						      info->clusters, emu->cluster_pos,
						      emu->free_clusters, clusters,
						      ctx->pub.cluster_map);
	banks = (uint32_t)((uint64_t)emu->cfg.sram_size * clusters /
			   info->healthy_clusters / NPU_M100_SRAM_INTERLEAVE);
	bank = ctx->pub.cluster_mask ? sram_alloc(emu, banks) : -1;
	for (id = 0; id < EMU_MAX_CTX && (emu->ctx_ids >> id & 1); id++)
		;
	if (!ctx->pub.cluster_mask || bank < 0 || id == EMU_MAX_CTX) {
		uint32_t nfree = (uint32_t)__builtin_popcount(emu->free_clusters);

		if (bank >= 0)
			memset(emu->sram_used + bank, 0, banks);
		pthread_mutex_unlock(&emu->lock);
		chunk_free(emu, ctx->root);
		free(ctx);
		if (id == EMU_MAX_CTX)
			return npu_fail(NPU_ERR_BUSY, "too many contexts (%d) on the emulator",
					EMU_MAX_CTX);
		return npu_fail(NPU_ERR_BUSY,
				"a partition of %u clusters is not free: %u of %u healthy clusters are; "
				"close other contexts or ask for fewer clusters",
				clusters, nfree, info->healthy_clusters);
	}
	emu->free_clusters &= ~ctx->pub.cluster_mask;
	emu->ctx_ids |= 1ull << id;
	ctx->pub.id = id;
	ctx->pub.dev = dev;
	ctx->pub.nclusters = clusters;
	ctx->sram_base = (uint32_t)bank * NPU_M100_SRAM_INTERLEAVE;
	ctx->sram_size = banks * NPU_M100_SRAM_INTERLEAVE;
	for (unsigned i = 0; i < NPU_HW_NUM_QUEUES; i++)
		if (!best || emu->q[i].contexts < best->contexts)
			best = &emu->q[i];
	best->contexts++;
	ctx->pub.queue = (uint32_t)(best - emu->q);
	emu->ctxs[id] = ctx;
	pthread_mutex_unlock(&emu->lock);
	emu_publish(emu, true);
	*out = &ctx->pub;
	return NPU_OK;
}

static void emu_ctx_destroy(npu_dev_ctx *pub)
{
	struct emu_ctx *ctx = (struct emu_ctx *)pub;
	struct emu_dev *emu;

	if (!ctx)
		return;
	emu = (struct emu_dev *)pub->dev;
	pthread_mutex_lock(&emu->lock);
	/* Callers wait for their jobs first (npu_context does). */
	emu->free_clusters |= pub->cluster_mask;
	emu->ctx_ids &= ~(1ull << pub->id);
	memset(emu->sram_used + ctx->sram_base / NPU_M100_SRAM_INTERLEAVE, 0,
	       ctx->sram_size / NPU_M100_SRAM_INTERLEAVE);
	emu->q[pub->queue].contexts--;
	emu->ctxs[pub->id] = NULL;
	/* The id may be reused: no buffer may claim a mapping in it. */
	for (struct emu_bo *bo = emu->bos; bo; bo = bo->next)
		bo->mapped &= ~(1ull << pub->id);
	pthread_mutex_unlock(&emu->lock);
	emu_publish(emu, true);
	for (size_t i = 0; i < ctx->ntables; i++)
		chunk_free(emu, ctx->tables[i]);
	free(ctx->tables);
	chunk_free(emu, ctx->root);
	free(ctx);
}

static void emu_ctx_trace(npu_dev_ctx *pub, struct npu_trace_rec *rec)
{
	struct emu_dev *emu = (struct emu_dev *)pub->dev;

	pthread_mutex_lock(&emu->lock);
	((struct emu_ctx *)pub)->trace = rec;
	pthread_mutex_unlock(&emu->lock);
}

/* ---- jobs ---- */

static npu_status emu_submit(npu_dev_ctx *pub, npu_dev_bo *cmd, uint32_t offset,
			     uint32_t size, const npu_dev_use *uses,
			     uint32_t nuses, uint32_t timeout_ms,
			     npu_dev_job **out)
{
	struct emu_ctx *ctx = (struct emu_ctx *)pub;
	struct emu_dev *emu = (struct emu_dev *)pub->dev;
	struct emu_queue *q = &emu->q[pub->queue];
	struct npu_hw_task *d;
	struct npu_dev_job *job;
	uint64_t ms = timeout_ms ? timeout_ms : 2000;

	*out = NULL;
	if ((uint64_t)offset + size > cmd->size || offset % 64)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"program at offset %u, %u bytes: outside its %zu-byte buffer or not 64-byte aligned",
				offset, size, cmd->size);
	job = calloc(1, sizeof(*job));
	if (!job)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");

	pthread_mutex_lock(&emu->lock);
	/* Map every buffer on its first use by this context. */
	for (uint32_t i = 0; i <= nuses; i++) {
		struct emu_bo *bo = (struct emu_bo *)(i < nuses ? uses[i].bo : cmd);

		if (i < nuses && uses[i].flags & NPU_DEV_USE_WRITE &&
		    bo->pub.flags & NPU_DEV_BO_DEVICE_RO) {
			pthread_mutex_unlock(&emu->lock);
			free(job);
			return npu_fail(NPU_ERR_INVALID_ARG,
					"buffer %u is device read-only but the job writes it", i);
		}
		if (!(bo->mapped >> pub->id & 1) && ctx_map_bo(emu, ctx, bo)) {
			pthread_mutex_unlock(&emu->lock);
			free(job);
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory for page tables");
		}
	}
	/* Wait for a free ring slot. */
	while (q->outstanding >= EMU_RING_ENTRIES - 1) {
		emu->slot_waiters++;
		pthread_cond_wait(&emu->done, &emu->lock);
		emu->slot_waiters--;
	}

	job->emu = emu;
	job->queue = pub->queue;
	job->seqno = ++emu->seqno;
	if (ctx->trace) {
		npu_trace_job_init(&job->trace, ctx->trace);
		atomic_fetch_add(&emu->traced, 1);
	}
	job->slot = q->tail;
	d = (struct npu_hw_task *)(q->ring->host + q->tail * sizeof(*d));
	memset(d, 0, sizeof(*d));
	memset(q->comp->host + q->tail * sizeof(struct npu_hw_completion), 0,
	       sizeof(struct npu_hw_completion));
	d->magic = NPU_TASK_MAGIC;
	d->seqno = job->seqno;
	d->fence_addr = q->comp->pa + q->tail * sizeof(struct npu_hw_completion);
	d->pt_base = ctx->root->pa;
	d->prog_va = cmd->dev_addr + offset;
	d->prog_size = size;
	d->asid = (uint16_t)(pub->id + 1);
	d->nclusters = (uint8_t)pub->nclusters;
	memcpy(d->cluster_map, pub->cluster_map, pub->nclusters);
	d->timeout_cycles = ms * 1000 * emu->cfg.clock_mhz;
	d->sram_base = ctx->sram_base;
	d->sram_size = ctx->sram_size;
	q->tail = (q->tail + 1) % EMU_RING_ENTRIES;
	q->outstanding++;
	job->next = NULL;
	*q->tailp = job;
	q->tailp = &job->next;
	pthread_mutex_unlock(&emu->lock);

	/* The doorbell; the core calls emu_kick, which wakes the worker. */
	npu_core_mmio_write(emu->core, NPU_REG_Q(job->queue, NPU_Q_TAIL),
			    (job->slot + 1) % EMU_RING_ENTRIES);
	*out = job;
	return NPU_OK;
}

/* Wait until the worker harvested @job; false on timeout. */
static bool emu_wait_done(npu_dev_job *job, int64_t timeout_ns)
{
	struct emu_dev *emu = job->emu;
	struct timespec until;
	int err = 0;

	if (atomic_load_explicit(&job->done, memory_order_acquire))
		return true;
	clock_gettime(CLOCK_REALTIME, &until);
	if (timeout_ns >= 0) {
		until.tv_sec += timeout_ns / 1000000000;
		until.tv_nsec += timeout_ns % 1000000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
	}
	pthread_mutex_lock(&emu->lock);
	job->awaited = true;
	while (!atomic_load(&job->done) && err != ETIMEDOUT)
		err = timeout_ns < 0 ? pthread_cond_wait(&emu->done, &emu->lock) :
		      pthread_cond_timedwait(&emu->done, &emu->lock, &until);
	pthread_mutex_unlock(&emu->lock);
	return atomic_load(&job->done);
}

static npu_status emu_job_wait(npu_dev_job *job, int64_t timeout_ns)
{
	if (!emu_wait_done(job, timeout_ns))
		return npu_fail(NPU_ERR_TIMEOUT, "the job did not finish within %lld ms",
				(long long)(timeout_ns / 1000000));
	if (job->comp.status == NPU_TASK_INDEX_FAULT) {
		/* Indices are int32 on the NPU: 2^31 and up were negative. */
		int64_t idx = (int64_t)job->comp.fault_addr;

		if (idx >= ((int64_t)1 << 31) && idx < ((int64_t)1 << 32))
			idx -= (int64_t)1 << 32;
		return npu_fail(NPU_ERR_JOB_FAILED,
				"index %lld out of range [0, %u) at position %u%s",
				(long long)idx, job->comp.detail, job->comp.detail2,
				idx < 0 ? " (negative indices computed at run time are not supported)" :
				" (an input, e.g. a token id or a cache row, is outside the tensor it indexes)");
	}
	if (job->comp.status != NPU_TASK_OK && job->why[0])
		return npu_fail(NPU_ERR_JOB_FAILED, "the NPU ended the job with %s",
				job->why);
	if (job->comp.status != NPU_TASK_OK)
		return npu_fail(NPU_ERR_JOB_FAILED,
				"the NPU ended the job with '%s' (instruction %d, address 0x%llx)",
				npu_core_status_str(job->comp.status),
				(int)job->comp.insn_index,
				(unsigned long long)job->comp.fault_addr);
	return NPU_OK;
}

static uint64_t emu_job_cycles(const npu_dev_job *job)
{
	return atomic_load_explicit(&job->done, memory_order_acquire) ? job->comp.cycles : 0;
}

static void emu_job_free(npu_dev_job *job)
{
	if (!job)
		return;
	/* A job leaves the outstanding list only when it is done. */
	emu_wait_done(job, -1);
	free(job);
}

static void emu_close(struct npu_device *dev)
{
	struct emu_dev *emu = (struct emu_dev *)dev;

	pthread_mutex_lock(&emu->lock);
	emu->stop = true;
	pthread_cond_signal(&emu->kick);
	pthread_mutex_unlock(&emu->lock);
	if (emu->worker_started)
		pthread_join(emu->worker, NULL);
	npu_emu_stats_release(&emu->stats);
	pthread_mutex_destroy(&emu->stats_lock);
	npu_core_destroy(emu->core);
	for (unsigned i = 0; i < NPU_HW_NUM_QUEUES; i++) {
		chunk_free(emu, emu->q[i].ring);
		chunk_free(emu, emu->q[i].comp);
	}
	for (unsigned i = 0; i < NPU_HW_NUM_QUEUES; i++) {
		while (emu->q[i].head) {
			struct npu_dev_job *j = emu->q[i].head;

			emu->q[i].head = j->next;
			free(j);
		}
	}
	/* Buffers the caller did not free: their chunks go below. */
	while (emu->bos) {
		struct emu_bo *bo = emu->bos;

		emu->bos = bo->next;
		free(bo);
	}
	for (size_t i = 0; i < emu->nchunks; i++) {
		free(emu->chunks[i]->host);
		free(emu->chunks[i]);
	}
	free(emu->chunks);
	free(emu->sram_used);
	pthread_rwlock_destroy(&emu->chunk_lock);
	pthread_mutex_destroy(&emu->lock);
	pthread_cond_destroy(&emu->kick);
	pthread_cond_destroy(&emu->done);
	free(emu);
}

_Static_assert(NPU_MAX_CLUSTERS == NPU_HW_MAX_CLUSTERS, "cluster count");
_Static_assert(NPU_MAX_LINKS == NPU_HW_MAX_LINKS, "link count");
_Static_assert(NPU_UNITS == NPU_PERF_UNITS, "unit count");
_Static_assert(NPU_DMA_ENGINES == NPU_HW_NUM_DMA_ENGINES, "DMA engines");

/*
 * @n 64-bit counters from @off into @out, in one locked block: a run of
 * the in-process backend reads them all before and after each run, and a
 * lock per register (thousands) held up the device's worker.
 */
static void perf_block(struct emu_dev *emu, uint32_t off, unsigned n, uint64_t *out)
{
	uint32_t v[2 * NPU_HW_MAX_LINKS];

	while (n) {
		unsigned k = n < NPU_HW_MAX_LINKS ? n : NPU_HW_MAX_LINKS;

		npu_core_mmio_read_block(emu->core, off, v, 2 * k);
		for (unsigned i = 0; i < k; i++)
			out[i] = (uint64_t)v[2 * i + 1] << 32 | v[2 * i];
		off += 8 * k;
		out += k;
		n -= k;
	}
}

static npu_status emu_counters(struct npu_device *dev, npu_device_counters *out)
{
	struct emu_dev *emu = (struct emu_dev *)dev;
	/* Only the device's own clusters and mesh links: the rest stay 0. */
	unsigned ncl = emu->cfg.clusters;
	unsigned nlinks = emu->cfg.mesh_x * emu->cfg.mesh_y * NPU_HW_LINK_DIRS;

	perf_block(emu, NPU_REG_PERF_CYCLES, 1, &out->cycles);
	perf_block(emu, NPU_REG_PERF_CLUSTER_BUSY(0), ncl, out->cluster_busy);
	perf_block(emu, NPU_REG_PERF_HBSM_CONFLICTS(0), ncl, out->hbsm_conflicts);
	perf_block(emu, NPU_REG_PERF_UNIT_BUSY(0, 0), ncl * NPU_PERF_UNITS,
		   &out->unit_busy[0][0]);
	perf_block(emu, NPU_REG_PERF_DMA_BYTES(0), NPU_HW_NUM_DMA_ENGINES, out->dma_bytes);
	perf_block(emu, NPU_REG_PERF_GSDU_BYTES, 1, &out->gsdu_bytes);
	perf_block(emu, NPU_REG_PERF_LINK_BYTES(0), nlinks, out->link_bytes);
	perf_block(emu, NPU_REG_PERF_LINK_STALLS(0), nlinks, out->link_stalls);
	perf_block(emu, NPU_REG_PERF_LOAD_BYTES, 1, &out->load_bytes);
	perf_block(emu, NPU_REG_PERF_STORE_BYTES, 1, &out->store_bytes);
	perf_block(emu, NPU_REG_PERF_MACS_FLOAT, 1, &out->macs_float);
	perf_block(emu, NPU_REG_PERF_MACS_INT8, 1, &out->macs_int8);
	out->have = NPU_HAVE_CYCLES | NPU_HAVE_CLUSTERS | NPU_HAVE_UNITS | NPU_HAVE_TRAFFIC |
		    NPU_HAVE_WORK;
	return NPU_OK;
}

static uint64_t emu_dma_bytes(struct npu_device *dev)
{
	struct emu_dev *emu = (struct emu_dev *)dev;
	uint64_t b[NPU_HW_NUM_DMA_ENGINES], sum = 0;

	perf_block(emu, NPU_REG_PERF_DMA_BYTES(0), NPU_HW_NUM_DMA_ENGINES, b);
	for (unsigned e = 0; e < NPU_HW_NUM_DMA_ENGINES; e++)
		sum += b[e];
	return sum;
}

static const struct npu_dev_ops emu_ops = {
	.counters = emu_counters,
	.dma_bytes = emu_dma_bytes,
	.close = emu_close,
	.bo_create = emu_bo_create,
	.bo_free = emu_bo_free,
	.bo_seal = emu_bo_seal,
	.ctx_create = emu_ctx_create,
	.ctx_destroy = emu_ctx_destroy,
	.submit = emu_submit,
	.ctx_trace = emu_ctx_trace,
	.job_wait = emu_job_wait,
	.job_cycles = emu_job_cycles,
	.job_free = emu_job_free,
};

/*
 * "emu" or "emu:key=value,...": clusters, tpbs, mesh=XxY, defect-mask,
 * clock-mhz, threads.  $NPU_EMU_OPTIONS adds defaults in the same syntax.
 */
static npu_status emu_parse(const char *opts, struct npu_core_config *cfg)
{
	char buf[256], *save = NULL, *kv;

	if (!opts || !*opts)
		return NPU_OK;
	if (strlen(opts) >= sizeof(buf))
		return npu_fail(NPU_ERR_INVALID_ARG, "emulator options too long");
	strcpy(buf, opts);
	for (kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '='), *end;
		unsigned long v, v2 = 0;

		if (!eq)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"emulator option '%s': expected key=value", kv);
		*eq = '\0';
		errno = 0;
		v = strtoul(eq + 1, &end, 0);
		if (!strcmp(kv, "mesh") && *end == 'x')
			v2 = strtoul(end + 1, &end, 0);
		if (errno || end == eq + 1 || *end)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"emulator option %s=%s: not a number", kv, eq + 1);
		if (!strcmp(kv, "clusters"))
			cfg->clusters = (unsigned)v;
		else if (!strcmp(kv, "tpbs"))
			cfg->tpbs_per_cluster = (unsigned)v;
		else if (!strcmp(kv, "mesh"))
			cfg->mesh_x = (unsigned)v, cfg->mesh_y = (unsigned)v2;
		else if (!strcmp(kv, "defect-mask"))
			cfg->defect_mask = (uint32_t)v;
		else if (!strcmp(kv, "clock-mhz"))
			cfg->clock_mhz = (unsigned)v;
		else if (!strcmp(kv, "threads"))
			cfg->threads = (unsigned)v;
		else
			return npu_fail(NPU_ERR_INVALID_ARG,
					"unknown emulator option '%s' (known: clusters, tpbs, mesh, defect-mask, clock-mhz, threads)",
					kv);
	}
	return NPU_OK;
}

static void emu_fill_info(struct emu_dev *emu)
{
	npu_device_info *info = &emu->base.info;
	uint32_t geom = npu_core_mmio_read(emu->core, NPU_REG_GEOM);
	uint32_t mesh = npu_core_mmio_read(emu->core, NPU_REG_MESH);
	uint32_t all;

	memset(info, 0, sizeof(*info));
	info->backend = NPU_BACKEND_EMU;
	snprintf(info->path, sizeof(info->path), "emu");
	snprintf(info->driver, sizeof(info->driver), "emu");
	info->hw_version = npu_core_mmio_read(emu->core, NPU_REG_VERSION);
	emu->base.isa_version = npu_core_mmio_read(emu->core, NPU_REG_ISA_VERSION);
	info->clusters = NPU_GEOM_CLUSTERS(geom);
	info->tpbs_per_cluster = NPU_GEOM_TPBS(geom);
	info->mesh_x = NPU_MESH_X(mesh);
	info->mesh_y = NPU_MESH_Y(mesh);
	all = info->clusters >= 32 ? ~0u : (1u << info->clusters) - 1;
	info->defect_mask = npu_core_mmio_read(emu->core, NPU_REG_FUSE_MASK) & all;
	info->healthy_mask = all & ~info->defect_mask;
	info->healthy_clusters = (uint32_t)__builtin_popcount(info->healthy_mask);
	info->hbsm_size = npu_core_mmio_read(emu->core, NPU_REG_HBSM_SIZE);
	info->sram_size = npu_core_mmio_read(emu->core, NPU_REG_SRAM_SIZE);
	info->clock_mhz = npu_core_mmio_read(emu->core, NPU_REG_CLOCK_MHZ);
	for (uint32_t c = 0; c < info->clusters && c < NPU_HW_MAX_CLUSTERS; c++)
		emu->cluster_pos[c] = npu_core_mmio_read(emu->core, NPU_REG_CLUSTER_POS(c));
}

npu_status npu_emu_open(const char *spec, struct npu_device **out)
{
	struct npu_core_host host = {
		.mem_read = emu_mem_read,
		.mem_write = emu_mem_write,
		.kick = emu_kick,
		.mem_begin = emu_mem_begin,
		.mem_end = emu_mem_end,
		.mem_map = emu_mem_map,
		.mem_version = emu_mem_version,
		.tracer = emu_tracer,
		.log = emu_log,
	};
	struct emu_dev *emu;
	npu_status st;
	char err[256];

	*out = NULL;
	emu = calloc(1, sizeof(*emu));
	if (!emu)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	npu_core_config_default(&emu->cfg);
	st = emu_parse(getenv("NPU_EMU_OPTIONS"), &emu->cfg);
	if (!st && spec && !strncmp(spec, "emu:", 4))
		st = emu_parse(spec + 4, &emu->cfg);
	if (st) {
		free(emu);
		return st;
	}
	pthread_rwlock_init(&emu->chunk_lock, NULL);
	pthread_mutex_init(&emu->lock, NULL);
	pthread_cond_init(&emu->kick, NULL);
	pthread_cond_init(&emu->done, NULL);
	pthread_mutex_init(&emu->stats_lock, NULL);
	emu->next_pa = EMU_PA_START;
	emu->next_va = EMU_VA_START;
	host.opaque = emu;
	emu->core = npu_core_create(&emu->cfg, &host, err, sizeof(err));
	if (!emu->core) {
		pthread_rwlock_destroy(&emu->chunk_lock);
		pthread_mutex_destroy(&emu->lock);
		pthread_cond_destroy(&emu->kick);
		pthread_cond_destroy(&emu->done);
		pthread_mutex_destroy(&emu->stats_lock);
		free(emu);
		return npu_fail(NPU_ERR_INVALID_ARG, "emulator configuration: %s", err);
	}
	emu->base.ops = &emu_ops;
	emu_fill_info(emu);
	emu->free_clusters = emu->base.info.healthy_mask;
	emu->sram_used = calloc(emu->cfg.sram_size / NPU_M100_SRAM_INTERLEAVE, 1);
	for (unsigned i = 0; i < NPU_HW_NUM_QUEUES; i++) {
		emu->q[i].tailp = &emu->q[i].head;
		emu->q[i].ring = chunk_alloc(emu, EMU_RING_ENTRIES * sizeof(struct npu_hw_task));
		emu->q[i].comp = chunk_alloc(emu, EMU_RING_ENTRIES * sizeof(struct npu_hw_completion));
	}
	for (unsigned i = 0; i < NPU_HW_NUM_QUEUES && !st; i++)
		if (!emu->q[i].ring || !emu->q[i].comp || !emu->sram_used)
			st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	if (!st && pthread_create(&emu->worker, NULL, emu_worker, emu))
		st = npu_fail(NPU_ERR_NO_MEMORY, "cannot start the emulator thread");
	if (st) {
		emu_close(&emu->base);
		return st;
	}
	emu->worker_started = true;
	npu_emu_stats_claim(&emu->stats);
	for (unsigned i = 0; i < NPU_HW_NUM_QUEUES; i++) {
		npu_core_mmio_write(emu->core, NPU_REG_Q(i, NPU_Q_BASE_LO), (uint32_t)emu->q[i].ring->pa);
		npu_core_mmio_write(emu->core, NPU_REG_Q(i, NPU_Q_BASE_HI), (uint32_t)(emu->q[i].ring->pa >> 32));
		npu_core_mmio_write(emu->core, NPU_REG_Q(i, NPU_Q_SIZE_LOG2), EMU_RING_LOG2);
		npu_core_mmio_write(emu->core, NPU_REG_Q(i, NPU_Q_CTRL), NPU_Q_CTRL_ENABLE);
	}
	*out = &emu->base;
	return NPU_OK;
}
