// SPDX-License-Identifier: MIT
/*
 * Device core instance: configuration, BAR0 registers, reset, interrupts.
 * Queue processing lives in npu_queue.c, program execution in npu_task.c
 * (and the files npu_task.h lists).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#include "npu_core_priv.h"
#include "npu_pool.h"

void npu_core_config_default(struct npu_core_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->clusters = NPU_M100_CLUSTERS;
	cfg->tpbs_per_cluster = NPU_M100_TPBS_PER_CLUSTER;
	cfg->mesh_x = NPU_M100_MESH_X;
	cfg->mesh_y = NPU_M100_MESH_Y;
	cfg->clock_mhz = NPU_M100_CLOCK_MHZ;
	cfg->hbsm_size = NPU_M100_HBSM_SIZE;
	cfg->sram_size = NPU_M100_SRAM_SIZE;
}

static bool is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

int npu_core_config_check(const struct npu_core_config *cfg, char *err,
			  size_t errlen)
{
	const char *msg = NULL;
	char buf[160];
	uint32_t all;

	if (cfg->clusters < 1 || cfg->clusters > NPU_HW_MAX_CLUSTERS) {
		snprintf(buf, sizeof(buf), "clusters=%u: must be 1..%d",
			 cfg->clusters, NPU_HW_MAX_CLUSTERS);
		msg = buf;
	} else if (cfg->tpbs_per_cluster < 1 ||
		   cfg->tpbs_per_cluster > NPU_HW_MAX_TPBS_PER_CLUSTER) {
		snprintf(buf, sizeof(buf), "tpbs-per-cluster=%u: must be 1..%d",
			 cfg->tpbs_per_cluster, NPU_HW_MAX_TPBS_PER_CLUSTER);
		msg = buf;
	} else if (cfg->mesh_x < 2 || cfg->mesh_y < 1 ||
		   cfg->mesh_x * cfg->mesh_y > NPU_HW_MAX_MESH_NODES ||
		   cfg->mesh_x * cfg->mesh_y < cfg->clusters + 2) {
		snprintf(buf, sizeof(buf),
			 "mesh %ux%u: needs x >= 2, at most %d nodes and room for %u clusters plus the CCB and DDR port",
			 cfg->mesh_x, cfg->mesh_y, NPU_HW_MAX_MESH_NODES,
			 cfg->clusters);
		msg = buf;
	} else if (cfg->clock_mhz < 1 || cfg->clock_mhz > 100000) {
		snprintf(buf, sizeof(buf), "clock-mhz=%u: must be 1..100000",
			 cfg->clock_mhz);
		msg = buf;
	} else if (!is_pow2(cfg->hbsm_size) || cfg->hbsm_size < (64u << 10) ||
		   cfg->hbsm_size > NPU_M100_HBSM_SIZE) {
		snprintf(buf, sizeof(buf),
			 "hbsm-size=%u: must be a power of two, 64 KiB..2 MiB",
			 cfg->hbsm_size);
		msg = buf;
	} else if (cfg->sram_size < (1u << 20) ||
		   cfg->sram_size > NPU_M100_SRAM_SIZE ||
		   cfg->sram_size % (NPU_M100_SRAM_BANKS * NPU_M100_SRAM_INTERLEAVE)) {
		snprintf(buf, sizeof(buf),
			 "sram-size=%u: must be 1..32 MiB in whole 16 KiB stripes",
			 cfg->sram_size);
		msg = buf;
	} else {
		all = (1u << cfg->clusters) - 1;
		if (cfg->defect_mask & ~all) {
			snprintf(buf, sizeof(buf),
				 "defect-mask=0x%x names clusters beyond the %u present",
				 cfg->defect_mask, cfg->clusters);
			msg = buf;
		} else if ((cfg->defect_mask & all) == all) {
			snprintf(buf, sizeof(buf),
				 "defect-mask=0x%x fuses every cluster: nothing could run",
				 cfg->defect_mask);
			msg = buf;
		}
	}
	if (!msg)
		return 0;
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
	return -1;
}

uint8_t *npu_core_hbsm_of(struct npu_core *core, unsigned pcluster,
			  unsigned tpb)
{
	size_t idx = (size_t)pcluster * core->cfg.tpbs_per_cluster + tpb;

	return core->hbsm + idx * core->cfg.hbsm_size;
}

static unsigned default_threads(unsigned clusters)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		n = 1;
	if ((unsigned long)n > clusters)
		n = clusters;
	return (unsigned)n - 1;
}

static void place_nodes(struct npu_core *core)
{
	unsigned n = 0;

	core->ccb_node = 0;
	core->ddr_node = core->cfg.mesh_x - 1;
	for (unsigned node = 0; node < core->cfg.mesh_x * core->cfg.mesh_y &&
	     n < core->cfg.clusters; node++) {
		if (node == core->ccb_node || node == core->ddr_node)
			continue;
		core->node_of_cluster[n++] = (uint8_t)node;
	}
}

static void reset_locked(struct npu_core *core);

struct npu_core *npu_core_create(const struct npu_core_config *cfg,
				 const struct npu_core_host *host, char *err,
				 size_t errlen)
{
	struct npu_core *core;
	size_t hbsm_total;

	if (npu_core_config_check(cfg, err, errlen))
		return NULL;
	if (!host || !host->mem_read || !host->mem_write) {
		if (err && errlen)
			snprintf(err, errlen, "host memory callbacks missing");
		return NULL;
	}
	core = calloc(1, sizeof(*core));
	if (!core)
		goto oom;
	core->cfg = *cfg;
	core->host = *host;
	place_nodes(core);
	hbsm_total = (size_t)cfg->clusters * cfg->tpbs_per_cluster * cfg->hbsm_size;
	/* calloc of large blocks maps zero pages lazily: unused TPBs cost nothing. */
	core->hbsm = calloc(1, hbsm_total);
	core->sram = calloc(1, cfg->sram_size);
	if (!core->hbsm || !core->sram)
		goto oom;
	pthread_mutex_init(&core->lock, NULL);
	/* Default: one extra worker per further core, at most one per cluster. */
	core->pool = npu_pool_create(cfg->threads ? cfg->threads - 1 :
				     default_threads(cfg->clusters));
	if (!core->pool) {
		pthread_mutex_destroy(&core->lock);
		goto oom;
	}
	/* Power-on state; the host hears of resets after this one only. */
	reset_locked(core);
	return core;
oom:
	if (core) {
		free(core->hbsm);
		free(core->sram);
		free(core);
	}
	if (err && errlen)
		snprintf(err, errlen, "out of memory allocating device memories");
	return NULL;
}

void npu_core_destroy(struct npu_core *core)
{
	if (!core)
		return;
	/* Tasks still out belong to the host; it must complete them first. */
	npu_pool_destroy(core->pool);
	npu_task_free_spares(core);
	for (unsigned i = 0; i < NPU_HW_NUM_QUEUES; i++)
		free(core->q[i].spare);
	pthread_mutex_destroy(&core->lock);
	free(core->hbsm);
	free(core->sram);
	free(core);
}

void npu_core_update_irq_locked(struct npu_core *core)
{
	if (core->host.irq)
		core->host.irq(core->host.opaque, core->irq_status & core->irq_mask);
}

static void reset_locked(struct npu_core *core)
{
	core->generation++;
	for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
		/* A task still executing is orphaned: ask it to stop early. */
		struct npu_core_task *spare = core->q[q].spare;

		if (core->q[q].task_out && core->q[q].task)
			atomic_store(&core->q[q].task->abort, true);
		memset(&core->q[q], 0, sizeof(core->q[q]));
		core->q[q].spare = spare;	/* memory, not state */
	}
	core->irq_status = 0;
	core->irq_mask = 0;
	core->fault_status = 0;
	core->fault_addr = 0;
	core->mmu_ctrl = NPU_MMU_CTRL_ENABLE;
	core->perf_ctrl = NPU_PERF_CTRL_ENABLE;
	core->scratch = 0;
	core->bad_access = 0;
	core->latch_hi = 0;
	memset(&core->perf, 0, sizeof(core->perf));
	npu_core_update_irq_locked(core);
}

/* Outside the lock: the host completes orphaned tasks from its hook. */
static void host_reset(struct npu_core *core)
{
	if (core->host.reset)
		core->host.reset(core->host.opaque);
}

void npu_core_reset(struct npu_core *core)
{
	pthread_mutex_lock(&core->lock);
	reset_locked(core);
	pthread_mutex_unlock(&core->lock);
	host_reset(core);
}

/*
 * Zero a device memory.  On Linux the whole pages inside it are handed
 * back to the kernel (MADV_DONTNEED on private anonymous memory, which is
 * what calloc returns, reads back as zeros), so a power cycle neither
 * touches nor keeps the up to 144 MiB of HBSM and SRAM of an M100.
 */
static void zero_memory(uint8_t *p, size_t len)
{
#ifdef __linux__
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)p + pg - 1) & ~(pg - 1);
	uintptr_t hi = ((uintptr_t)p + len) & ~(pg - 1);

	if (hi > lo && !madvise((void *)lo, hi - lo, MADV_DONTNEED)) {
		memset(p, 0, lo - (uintptr_t)p);
		memset((void *)hi, 0, (uintptr_t)p + len - hi);
		return;
	}
#endif
	memset(p, 0, len);
}

void npu_core_power_loss(struct npu_core *core)
{
	pthread_mutex_lock(&core->lock);
	reset_locked(core);
	zero_memory(core->hbsm, (size_t)core->cfg.clusters *
		    core->cfg.tpbs_per_cluster * core->cfg.hbsm_size);
	zero_memory(core->sram, core->cfg.sram_size);
	pthread_mutex_unlock(&core->lock);
	host_reset(core);
}

/* Count a refused register access and say why; core->lock held. */
static void bad_access_locked(struct npu_core *core, uint32_t off,
			      unsigned size, bool write, uint64_t val,
			      const char *why)
{
	struct npu_core_log rec = {
		.event = NPU_EV_BAD_ACCESS, .offset = off, .size = size,
		.write = write, .value = write ? val : 0,
	};

	core->bad_access++;
	if (write)
		npu_core_log_locked(core, &rec, "%u-byte write of 0x%llx at 0x%x refused: %s",
				    size, (unsigned long long)val, off, why);
	else
		npu_core_log_locked(core, &rec, "%u-byte read at 0x%x refused: %s",
				    size, off, why);
}

#define NO_REGISTER "no register there"
#define NO_WRITABLE "no writable register there"
#define NOT_ALIGNED "registers are 4-byte aligned inside BAR0"

/* A queue stops in the error state; core->lock held. */
static void __attribute__((format(printf, 3, 4)))
queue_error_locked(struct npu_core *core, unsigned qi, const char *fmt, ...)
{
	struct npu_core_log rec = { .event = NPU_EV_QUEUE_ERROR, .queue = qi };
	char why[160];
	va_list ap;

	if (!core->host.log)
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	npu_core_log_locked(core, &rec, "queue %u stopped: %s", qi, why);
}

/* 64-bit register pairs: a _LO read latches the _HI half. */
static uint32_t read64(struct npu_core *core, uint64_t v, bool hi)
{
	if (!hi) {
		core->latch_hi = v >> 32;
		return (uint32_t)v;
	}
	return (uint32_t)core->latch_hi;
}

static bool perf_reg(struct npu_core *core, uint32_t off, uint32_t *val)
{
	const struct npu_perf *p = &core->perf;
	uint32_t base = off & ~7u;
	bool hi = off & 4;
	uint64_t v;

	if (base == NPU_REG_PERF_CYCLES) {
		v = p->cycles;
	} else if (base >= NPU_REG_PERF_CLUSTER_BUSY(0) &&
		   base < NPU_REG_PERF_CLUSTER_BUSY(NPU_HW_MAX_CLUSTERS)) {
		v = p->cluster_busy[(base - NPU_REG_PERF_CLUSTER_BUSY(0)) / 8];
	} else if (base >= NPU_REG_PERF_UNIT_BUSY(0, 0) &&
		   base < NPU_REG_PERF_UNIT_BUSY(NPU_HW_MAX_CLUSTERS, 0)) {
		uint32_t i = (base - NPU_REG_PERF_UNIT_BUSY(0, 0)) / 8;

		v = p->unit_busy[i / NPU_PERF_UNITS][i % NPU_PERF_UNITS];
	} else if (base >= NPU_REG_PERF_HBSM_CONFLICTS(0) &&
		   base < NPU_REG_PERF_HBSM_CONFLICTS(NPU_HW_MAX_CLUSTERS)) {
		v = p->hbsm_conflicts[(base - NPU_REG_PERF_HBSM_CONFLICTS(0)) / 8];
	} else if (base >= NPU_REG_PERF_DMA_BYTES(0) &&
		   base < NPU_REG_PERF_DMA_BYTES(NPU_HW_NUM_DMA_ENGINES)) {
		v = p->dma_bytes[(base - NPU_REG_PERF_DMA_BYTES(0)) / 8];
	} else if (base == NPU_REG_PERF_GSDU_BYTES) {
		v = p->gsdu_bytes;
	} else if (base == NPU_REG_PERF_LOAD_BYTES) {
		v = p->load_bytes;
	} else if (base == NPU_REG_PERF_STORE_BYTES) {
		v = p->store_bytes;
	} else if (base == NPU_REG_PERF_MACS_FLOAT) {
		v = p->macs_float;
	} else if (base == NPU_REG_PERF_MACS_INT8) {
		v = p->macs_int8;
	} else if (base >= NPU_REG_PERF_LINK_BYTES(0) &&
		   base < NPU_REG_PERF_LINK_BYTES(NPU_HW_MAX_LINKS)) {
		v = p->link_bytes[(base - NPU_REG_PERF_LINK_BYTES(0)) / 8];
	} else if (base >= NPU_REG_PERF_LINK_STALLS(0) &&
		   base < NPU_REG_PERF_LINK_STALLS(NPU_HW_MAX_LINKS)) {
		v = p->link_stalls[(base - NPU_REG_PERF_LINK_STALLS(0)) / 8];
	} else {
		return false;
	}
	*val = read64(core, v, hi);
	return true;
}

static uint32_t queue_read(struct npu_core *core, unsigned qi, uint32_t r)
{
	struct npu_queue *q = &core->q[qi];

	switch (r) {
	case NPU_Q_BASE_LO: return (uint32_t)q->base;
	case NPU_Q_BASE_HI: return (uint32_t)(q->base >> 32);
	case NPU_Q_SIZE_LOG2: return q->size_log2;
	case NPU_Q_HEAD: return q->head;
	case NPU_Q_TAIL: return q->tail;
	case NPU_Q_CTRL: return q->ctrl & NPU_Q_CTRL_ENABLE;
	case NPU_Q_STATUS: return q->state | (q->last_status << 8);
	case NPU_Q_DONE_SEQ_LO: return read64(core, q->done_seq, false);
	case NPU_Q_DONE_SEQ_HI: return read64(core, q->done_seq, true);
	case NPU_Q_TASKS_LO: return read64(core, q->tasks, false);
	case NPU_Q_TASKS_HI: return read64(core, q->tasks, true);
	case NPU_Q_BUSY_LO: return read64(core, q->busy, false);
	case NPU_Q_BUSY_HI: return read64(core, q->busy, true);
	default:
		bad_access_locked(core, NPU_REG_Q(qi, r), 4, false, 0, NO_REGISTER);
		return 0;
	}
}

static uint32_t mmio_read_locked(struct npu_core *core, uint32_t off)
{
	uint32_t v = 0;
	const struct npu_core_config *c = &core->cfg;

	if (off & 3 || off >= NPU_BAR0_SIZE) {
		bad_access_locked(core, off, 4, false, 0, NOT_ALIGNED);
		return 0;
	}
	switch (off) {
	case NPU_REG_ID: v = NPU_ID_MAGIC; break;
	case NPU_REG_VERSION:
		v = (NPU_HW_VERSION_MAJOR << 16) | NPU_HW_VERSION_MINOR;
		break;
	case NPU_REG_CAPS:
		v = NPU_CAP_INT8 | NPU_CAP_BF16 | NPU_CAP_FP16 | NPU_CAP_MMU |
		    NPU_CAP_PERF | (c->timing ? NPU_CAP_TIMING : 0);
		break;
	case NPU_REG_ISA_VERSION:
		v = (NPU_PROG_VERSION_MAJOR << 16) | NPU_PROG_VERSION_MINOR;
		break;
	case NPU_REG_GEOM:
		v = c->clusters | c->tpbs_per_cluster << 8 |
		    NPU_HW_NUM_QUEUES << 16 | NPU_HW_NUM_DMA_ENGINES << 24;
		break;
	case NPU_REG_MESH:
		v = c->mesh_x | c->mesh_y << 8 | (uint32_t)core->ccb_node << 16 |
		    (uint32_t)core->ddr_node << 24;
		break;
	case NPU_REG_HBSM_SIZE: v = c->hbsm_size; break;
	case NPU_REG_SRAM_SIZE: v = c->sram_size; break;
	case NPU_REG_CLOCK_MHZ: v = c->clock_mhz; break;
	case NPU_REG_FUSE_MASK: v = c->defect_mask; break;
	case NPU_REG_TCU_GEOM:
		v = NPU_M100_TCU_ROWS | NPU_M100_TCU_COLS << 8 |
		    NPU_M100_TCU_DOT << 16;
		break;
	case NPU_REG_SU_COUNTERS: v = NPU_HW_SU_COUNTERS; break;
	case NPU_REG_HBSM_GEOM:
		v = NPU_M100_HBSM_BANKS | NPU_M100_HBSM_BANK_BYTES << 8 |
		    NPU_M100_HBSM_PORTS << 16;
		break;
	case NPU_REG_SRAM_GEOM: v = NPU_M100_SRAM_BANKS | 12 << 8; break;
	case NPU_REG_LINK_BW: v = NPU_M100_LINK_BYTES_PER_CYCLE; break;
	case NPU_REG_DDR_BW: v = NPU_M100_DDR_BYTES_PER_CYCLE; break;
	case NPU_REG_RESET: v = 0; break;
	case NPU_REG_STATUS:
		v = NPU_STATUS_READY;
		for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++)
			if (core->q[q].state == NPU_Q_STATE_RUNNING)
				v |= NPU_STATUS_QUEUE_BUSY(q);
		break;
	case NPU_REG_BAD_ACCESS: v = core->bad_access; break;
	case NPU_REG_SCRATCH: v = core->scratch; break;
	case NPU_REG_IRQ_STATUS: v = core->irq_status & core->irq_mask; break;
	case NPU_REG_IRQ_MASK: v = core->irq_mask; break;
	case NPU_REG_IRQ_RAW: v = core->irq_status; break;
	case NPU_REG_MMU_CTRL: v = core->mmu_ctrl; break;
	case NPU_REG_FAULT_STATUS: v = core->fault_status; break;
	case NPU_REG_FAULT_ADDR_LO: v = read64(core, core->fault_addr, false); break;
	case NPU_REG_FAULT_ADDR_HI: v = read64(core, core->fault_addr, true); break;
	case NPU_REG_PERF_CTRL: v = core->perf_ctrl; break;
	default:
		if (off >= NPU_REG_CLUSTER_POS(0) &&
		    off < NPU_REG_CLUSTER_POS(NPU_HW_MAX_CLUSTERS)) {
			unsigned cl = (off - NPU_REG_CLUSTER_POS(0)) / 4;

			if (cl < c->clusters) {
				unsigned node = core->node_of_cluster[cl];

				v = node % c->mesh_x | (node / c->mesh_x) << 8;
			}
		} else if (off >= NPU_REG_QUEUE_BASE &&
			   off < NPU_REG_Q(NPU_HW_NUM_QUEUES, 0)) {
			v = queue_read(core, (off - NPU_REG_QUEUE_BASE) / NPU_REG_QUEUE_STRIDE,
				       (off - NPU_REG_QUEUE_BASE) % NPU_REG_QUEUE_STRIDE);
		} else if (off >= NPU_REG_PERF_CTRL && off < NPU_REG_PERF_END) {
			if (!perf_reg(core, off, &v))
				bad_access_locked(core, off, 4, false, 0, NO_REGISTER);
		} else {
			bad_access_locked(core, off, 4, false, 0, NO_REGISTER);
		}
		break;
	}
	return v;
}

uint32_t npu_core_mmio_read(struct npu_core *core, uint32_t off)
{
	uint32_t v;

	pthread_mutex_lock(&core->lock);
	v = mmio_read_locked(core, off);
	pthread_mutex_unlock(&core->lock);
	return v;
}

void npu_core_mmio_read_block(struct npu_core *core, uint32_t off,
			      uint32_t *vals, unsigned n)
{
	pthread_mutex_lock(&core->lock);
	for (unsigned i = 0; i < n; i++)
		vals[i] = mmio_read_locked(core, off + 4 * i);
	pthread_mutex_unlock(&core->lock);
}

static void queue_write(struct npu_core *core, unsigned qi, uint32_t r,
			uint32_t val)
{
	struct npu_queue *q = &core->q[qi];
	bool kick = false;

	switch (r) {
	case NPU_Q_BASE_LO:
	case NPU_Q_BASE_HI:
	case NPU_Q_SIZE_LOG2:
		/* The ring is fixed while enabled: a moving ring would let
		 * the device read entries the driver no longer owns. */
		if (q->ctrl & NPU_Q_CTRL_ENABLE) {
			bad_access_locked(core, NPU_REG_Q(qi, r), 4, true, val,
					  "the ring's base and size are fixed while its queue is enabled");
			return;
		}
		if (r == NPU_Q_BASE_LO)
			q->base = (q->base & ~0xffffffffull) | val;
		else if (r == NPU_Q_BASE_HI)
			q->base = (q->base & 0xffffffffull) | (uint64_t)val << 32;
		else
			q->size_log2 = val;
		break;
	case NPU_Q_TAIL:
		q->tail = val;
		kick = true;
		break;
	case NPU_Q_CTRL:
		if (val & NPU_Q_CTRL_ABORT) {
			if (q->task_out && q->task)
				atomic_store(&q->task->abort, true);
		}
		if ((val & NPU_Q_CTRL_ENABLE) && !(q->ctrl & NPU_Q_CTRL_ENABLE)) {
			/* Enabling validates the ring configuration once. */
			if (q->base & (NPU_MMU_PAGE_SIZE - 1) ||
			    q->size_log2 < NPU_RING_MIN_LOG2 ||
			    q->size_log2 > NPU_RING_MAX_LOG2) {
				if (q->base & (NPU_MMU_PAGE_SIZE - 1))
					queue_error_locked(core, qi,
							   "enabled with a ring base not %u-byte aligned (low bits 0x%x)",
							   (unsigned)NPU_MMU_PAGE_SIZE,
							   (unsigned)(q->base & (NPU_MMU_PAGE_SIZE - 1)));
				else
					queue_error_locked(core, qi,
							   "enabled with a ring of 2^%u entries, outside 2^%u..2^%u",
							   q->size_log2, NPU_RING_MIN_LOG2,
							   NPU_RING_MAX_LOG2);
				q->state = NPU_Q_STATE_ERROR;
				q->last_status = NPU_TASK_BAD_DESCRIPTOR;
				core->irq_status |= NPU_IRQ_ERROR;
				npu_core_update_irq_locked(core);
				return;
			}
			q->ctrl |= NPU_Q_CTRL_ENABLE;
			q->head = 0;
			q->tail = 0;
			q->state = NPU_Q_STATE_IDLE;
		} else if (!(val & NPU_Q_CTRL_ENABLE)) {
			q->ctrl &= ~NPU_Q_CTRL_ENABLE;
			if (!q->task_out)
				q->state = NPU_Q_STATE_DISABLED;
		}
		kick = true;
		break;
	default:
		bad_access_locked(core, NPU_REG_Q(qi, r), 4, true, val, NO_WRITABLE);
		return;
	}
	if (kick && core->host.kick && (q->ctrl & NPU_Q_CTRL_ENABLE))
		core->host.kick(core->host.opaque, qi);
}

void npu_core_mmio_bad_access(struct npu_core *core, uint32_t offset,
			      unsigned size, bool write, uint64_t value)
{
	pthread_mutex_lock(&core->lock);
	bad_access_locked(core, offset, size, write, value,
			  "registers take aligned 4- or 8-byte accesses");
	pthread_mutex_unlock(&core->lock);
}

void npu_core_mmio_write(struct npu_core *core, uint32_t off, uint32_t val)
{
	if (off == NPU_REG_RESET && val == NPU_RESET_MAGIC) {
		npu_core_reset(core);
		return;
	}
	pthread_mutex_lock(&core->lock);
	if (off & 3 || off >= NPU_BAR0_SIZE) {
		bad_access_locked(core, off, 4, true, val, NOT_ALIGNED);
		goto out;
	}
	switch (off) {
	case NPU_REG_RESET:
		bad_access_locked(core, off, 4, true, val,
				  "a reset needs NPU_RESET_MAGIC");
		break;
	case NPU_REG_SCRATCH:
		core->scratch = val;
		break;
	case NPU_REG_IRQ_STATUS:
		core->irq_status &= ~val;
		npu_core_update_irq_locked(core);
		break;
	case NPU_REG_IRQ_MASK:
		core->irq_mask = val & (NPU_IRQ_QUEUE_ALL | NPU_IRQ_ERROR |
					NPU_IRQ_MMU_FAULT);
		npu_core_update_irq_locked(core);
		break;
	case NPU_REG_MMU_CTRL:
		core->mmu_ctrl = val & NPU_MMU_CTRL_ENABLE;
		break;
	case NPU_REG_MMU_INVALIDATE:
		/* Translations are cached per task only, so there is nothing
		 * global to drop; a task fetched later sees the new tables. */
		break;
	case NPU_REG_FAULT_CLEAR:
		if (val & 1) {
			core->fault_status = 0;
			core->fault_addr = 0;
		}
		break;
	case NPU_REG_PERF_CTRL:
		if (val & NPU_PERF_CTRL_CLEAR)
			memset(&core->perf, 0, sizeof(core->perf));
		core->perf_ctrl = val & NPU_PERF_CTRL_ENABLE;
		break;
	default:
		if (off >= NPU_REG_QUEUE_BASE &&
		    off < NPU_REG_Q(NPU_HW_NUM_QUEUES, 0))
			queue_write(core, (off - NPU_REG_QUEUE_BASE) / NPU_REG_QUEUE_STRIDE,
				    (off - NPU_REG_QUEUE_BASE) % NPU_REG_QUEUE_STRIDE, val);
		else
			bad_access_locked(core, off, 4, true, val, NO_WRITABLE);
		break;
	}
out:
	pthread_mutex_unlock(&core->lock);
}

const char *npu_core_status_str(unsigned status)
{
	static const char *const names[NPU_TASK_STATUS_COUNT] = {
		[NPU_TASK_OK] = "ok",
		[NPU_TASK_MMU_FAULT] = "MMU fault",
		[NPU_TASK_ILLEGAL_INSN] = "illegal instruction",
		[NPU_TASK_SYNC_DEADLOCK] = "sync deadlock",
		[NPU_TASK_DEFECTIVE_CLUSTER] = "defective or unassigned cluster addressed",
		[NPU_TASK_TIMEOUT] = "timeout",
		[NPU_TASK_ABORTED] = "aborted",
		[NPU_TASK_BAD_DESCRIPTOR] = "bad task descriptor",
		[NPU_TASK_BUS_ERROR] = "bus error",
		[NPU_TASK_INTERNAL] = "device out of host resources",
		[NPU_TASK_INDEX_FAULT] = "index out of range",
	};

	return status < NPU_TASK_STATUS_COUNT ? names[status] : "unknown status";
}

uint8_t *npu_core_debug_hbsm(struct npu_core *core, unsigned cluster,
			     unsigned tpb, size_t *size)
{
	if (cluster >= core->cfg.clusters || tpb >= core->cfg.tpbs_per_cluster)
		return NULL;
	if (size)
		*size = core->cfg.hbsm_size;
	return npu_core_hbsm_of(core, cluster, tpb);
}

uint8_t *npu_core_debug_sram(struct npu_core *core, size_t *size)
{
	if (size)
		*size = core->cfg.sram_size;
	return core->sram;
}

void npu_core_debug_replays(struct npu_core *core, uint64_t *replays,
			    uint64_t *divergences)
{
	*replays = atomic_load(&core->replays);
	*divergences = atomic_load(&core->replay_divergences);
}
