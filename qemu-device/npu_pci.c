/*
 * M100 NPU: PCI device shell around the device core.
 *
 * The core (qemu-device/core, no QEMU dependency) implements the registers,
 * queues, MMU and execution.  This file gives it a PCI function, BAR0,
 * interrupts, DMA and threads:
 *
 * - A doorbell (TAIL write) only schedules kick_bh; ring entries are read
 *   in that bottom half, never inside the MMIO callback.
 * - Each task queue has a worker thread that runs npu_core_task_execute()
 *   without the BQL.  Its DMA goes straight to guest RAM (see npu_dma()),
 *   and inside the core's memory brackets it maps guest RAM in place
 *   (npu_mem_map()).  Behind an IOMMU a translation may fault and raise
 *   the IOMMU's interrupt, so there the main loop accesses memory for the
 *   workers (npu_access()); every wait of the BQL's holder for a worker
 *   makes those accesses (npu_wait_idle_locked()), so neither waits for
 *   the other.
 * - Completion (fence writeback, HEAD) and the fetch of the queue's next
 *   entry happen on the worker itself, so a queue's tasks run back to back
 *   without a trip through the main loop; only the interrupt waits for the
 *   BQL (irq_bh).  Two cases keep the main loop in that path: timing mode,
 *   whose completion waits for a timer on the virtual clock, and an IOMMU,
 *   whose faults must be raised under the BQL (done_bh).
 * - A PCI power-management capability offers D3hot, in which the device
 *   loses its on-chip state (npu_enter_d3()).
 * - The core decodes every register, the reset register included; it
 *   reports guest errors through npu_log() (LOG_GUEST_ERROR and trace
 *   events) and resets through npu_reset_hook(), which orphans the tasks
 *   the shell still holds.
 *
 * Copyright (c) 2026 The M100 NPU authors
 * SPDX-License-Identifier: MIT
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/module.h"
#include "qemu/range.h"
#include "qemu/thread.h"
#include "qemu/timer.h"
#include "qemu/units.h"
#include "qemu/rcu.h"
#include "qapi/error.h"
#include "exec/memory.h"
#include "hw/pci/pci.h"
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "qom/object.h"

#include "npu_core.h"
#include "trace.h"

#define TYPE_NPU_M100 "npu-m100"
OBJECT_DECLARE_SIMPLE_TYPE(NpuM100State, NPU_M100)

#define NPU_MSIX_BAR 2

/*
 * Guest memory access a thread without the BQL asks the BQL's holder to
 * make, behind an IOMMU (npu_access()): a DMA (npu_dma_now()) or a
 * mapping in one piece (npu_map_range_now()).  It lives on the asking
 * thread's stack.
 */
typedef struct NpuAccess {
    bool dma;
    hwaddr pa;
    hwaddr len;
    bool write;
    void *buf;              /* DMA: the bytes read or written */
    int ret;                /* DMA: 0, or -1 if not all RAM it reaches */
    void *host;             /* mapping: NULL if not RAM in one piece */
    bool done;
    QSIMPLEQ_ENTRY(NpuAccess) next;
} NpuAccess;

typedef struct NpuQueueSlot {
    NpuM100State *s;
    unsigned index;
    QemuThread thread;
    QemuCond wake;          /* worker waits here for a task */

    int64_t submit_ns;      /* virtual time at fetch (timing mode, BQL) */
    QEMUTimer gate;         /* timing mode: hold virtual time until executed */
    QEMUTimer finish;       /* timing mode: completion at the simulated end */

    /*
     * Protected by NpuM100State.lock: the task the shell owns, from
     * npu_core_task_fetch() until npu_core_task_complete(), and its
     * hand-off to and from the worker.  While executing is set only the
     * worker touches the task.
     */
    struct npu_core_task *task;
    bool orphan;            /* the device was reset after fetch */
    bool executing;         /* given to the worker, not finished yet */
    bool executed;          /* finished, not yet seen by the main loop */
} NpuQueueSlot;

struct NpuM100State {
    PCIDevice parent_obj;

    MemoryRegion mmio;
    struct npu_core *core;
    QEMUBH *kick_bh;        /* fetch new ring entries */
    QEMUBH *done_bh;        /* collect tasks the workers finished */
    QEMUBH *irq_bh;         /* deliver what a worker's completion raised */
    /*
     * The device's DMA goes through an IOMMU, whose translation may fault
     * and raise the IOMMU's interrupt, which needs the BQL: workers ask
     * the main loop to access memory (npu_access()).  Fixed at realize.
     */
    bool behind_iommu;
    /*
     * Workers complete and fetch tasks themselves (npu_worker_complete()):
     * not in timing mode, and not behind an IOMMU.  Fixed at realize.
     */
    bool worker_completes;

    /*
     * The interrupt status as the core last reported it, and what happened
     * since it was last delivered: the core reports it from any thread
     * (npu_irq()), the interrupt is raised under the BQL (npu_irq_flush()).
     * Protected by irq_lock.
     */
    QemuMutex irq_lock;
    uint32_t irq_status;    /* the latest masked IRQ_STATUS */
    uint32_t irq_rose;      /* bits that rose since the last delivery */
    bool irq_left_zero;     /* the status left zero since then (MSI) */

    bool intx_level;        /* INTx line as last driven (BQL) */
    uint8_t pm_cap;         /* config offset of the PM capability */
    bool d3;                /* in D3hot: BAR0 does not respond (BQL) */

    /*
     * Protects every slot's task hand-off, stopping, workers and the
     * access requests.
     */
    QemuMutex lock;
    QemuCond idle;          /* a worker finished a task, or asks for access */
    bool stopping;
    unsigned workers;       /* worker threads not yet returned */
    QSIMPLEQ_HEAD(, NpuAccess) accesses;  /* for access_bh */
    QemuCond accessed;      /* an access was made */
    QEMUBH *access_bh;      /* make the accesses under the BQL */

    NpuQueueSlot slot[NPU_HW_NUM_QUEUES];

    /* Properties */
    uint32_t clusters;
    uint32_t tpbs_per_cluster;
    uint32_t mesh_x;
    uint32_t mesh_y;
    uint32_t defect_mask;
    uint32_t clock_mhz;
    uint32_t threads;
    bool timing;
    bool use_msix;
    bool use_msi;
};

/*
 * DMA for the core.  Called from worker threads without the BQL, so only
 * guest RAM is reachable: an address that is not RAM (MMIO, a hole, or
 * anything while bus mastering is off) fails and the core ends the task
 * with a bus error.  address_space_map/unmap keep dirty tracking and TCG's
 * translated code coherent with what the device writes.
 */
/*
 * The guest RAM at @pa, up to *@len bytes of it in one piece, mapped, and
 * *@len set to what was; NULL where @pa is not RAM the device reaches.
 * Behind an IOMMU this translates, and a fault raises the IOMMU's
 * interrupt: only under the BQL.
 */
static void *npu_map_ram_now(NpuM100State *s, hwaddr pa, hwaddr *len,
                             bool write)
{
    AddressSpace *as = pci_get_address_space(PCI_DEVICE(s));
    hwaddr xlat, plen = *len;
    bool direct;

    assert(!s->behind_iommu || qemu_mutex_iothread_locked());
    WITH_RCU_READ_LOCK_GUARD() {
        MemoryRegion *mr = address_space_translate(as, pa, &xlat, &plen, write,
                                                   MEMTXATTRS_UNSPECIFIED);
        direct = memory_access_is_direct(mr, write);
    }
    if (!direct || plen == 0) {
        return NULL;
    }
    *len = plen;
    return address_space_map(as, pa, len, write, MEMTXATTRS_UNSPECIFIED);
}

static int npu_dma_now(NpuM100State *s, hwaddr pa, uint8_t *buf, hwaddr len,
                       bool write)
{
    AddressSpace *as = pci_get_address_space(PCI_DEVICE(s));

    while (len) {
        hwaddr plen = len;
        void *host = npu_map_ram_now(s, pa, &plen, write);

        if (!host) {
            return -1;
        }
        if (write) {
            memcpy(host, buf, plen);
        } else {
            memcpy(buf, host, plen);
        }
        address_space_unmap(as, host, plen, write, plen);
        pa += plen;
        buf += plen;
        len -= plen;
    }
    return 0;
}

/* @len bytes of guest RAM at @pa in one piece, mapped; NULL if not. */
static void *npu_map_range_now(NpuM100State *s, hwaddr pa, hwaddr len,
                               bool write)
{
    hwaddr plen = len;
    void *host = npu_map_ram_now(s, pa, &plen, write);

    if (host && plen < len) {
        address_space_unmap(pci_get_address_space(PCI_DEVICE(s)), host, plen,
                            write, 0);
        host = NULL;
    }
    return host;
}

static void npu_access_now(NpuM100State *s, NpuAccess *acc)
{
    if (acc->dma) {
        acc->ret = npu_dma_now(s, acc->pa, acc->buf, acc->len, acc->write);
    } else {
        acc->host = npu_map_range_now(s, acc->pa, acc->len, acc->write);
    }
}

/* Make the accesses asked for, with s->lock and the BQL held. */
static void npu_serve_accesses_locked(NpuM100State *s)
{
    NpuAccess *acc;

    while ((acc = QSIMPLEQ_FIRST(&s->accesses))) {
        QSIMPLEQ_REMOVE_HEAD(&s->accesses, next);
        qemu_mutex_unlock(&s->lock);
        npu_access_now(s, acc);
        qemu_mutex_lock(&s->lock);
        acc->done = true;
        qemu_cond_broadcast(&s->accessed);
    }
}

static void npu_access_bh(void *opaque)
{
    NpuM100State *s = opaque;

    qemu_mutex_lock(&s->lock);
    npu_serve_accesses_locked(s);
    qemu_mutex_unlock(&s->lock);
}

/*
 * npu_access_now() from any thread.  Behind an IOMMU a thread without the
 * BQL (a worker, an execution thread of the core) hands the access to the
 * BQL's holder and waits: access_bh makes it, and so does every wait of
 * the BQL's holder for the workers (npu_wait_idle_locked()).  One request
 * covers a whole DMA, which behind an IOMMU is a mapping per page.
 */
static void npu_access(NpuM100State *s, NpuAccess *acc)
{
    if (!s->behind_iommu || qemu_mutex_iothread_locked()) {
        npu_access_now(s, acc);
        return;
    }
    qemu_mutex_lock(&s->lock);
    QSIMPLEQ_INSERT_TAIL(&s->accesses, acc, next);
    qemu_bh_schedule(s->access_bh);
    qemu_cond_broadcast(&s->idle);
    while (!acc->done) {
        qemu_cond_wait(&s->accessed, &s->lock);
    }
    qemu_mutex_unlock(&s->lock);
}

/*
 * With the BQL and s->lock held: wait until a worker signals s->idle,
 * making the accesses that may be what it waits for.
 */
static void npu_wait_idle_locked(NpuM100State *s)
{
    npu_serve_accesses_locked(s);
    if (QSIMPLEQ_EMPTY(&s->accesses)) {
        qemu_cond_wait(&s->idle, &s->lock);
    }
}

static int npu_dma(NpuM100State *s, uint64_t pa, void *buf, size_t len,
                   bool is_write)
{
    NpuAccess acc = {
        .dma = true, .pa = pa, .len = len, .write = is_write, .buf = buf,
    };

    npu_access(s, &acc);
    return acc.ret;
}

static void *npu_map_range(NpuM100State *s, hwaddr pa, hwaddr len,
                           bool write)
{
    NpuAccess acc = { .pa = pa, .len = len, .write = write };

    npu_access(s, &acc);
    return acc.host;
}

/*
 * In-place DMA (npu_core_host.mem_map): the core reads and writes views,
 * descriptors and programs where they lie in guest RAM instead of through
 * a copy per row.  A range is mapped with address_space_map, as npu_dma()
 * does, and kept until the end of the core's memory bracket, then
 * unmapped: that marks written pages dirty and drops translated code they
 * held, before the task completes.  Brackets are per thread (the core may
 * bracket on several execution threads at once), so the table is too.
 * When it is full, or the range is not RAM in one piece, the core copies
 * through npu_mem_read/npu_mem_write, which also report the bus error.
 */
#define NPU_BRACKET_MAPS 256
/* Recent mappings looked through for one that holds a range. */
#define NPU_BRACKET_LOOKBACK 4
/* Read windows found by their address: window number % this. */
#define NPU_WINDOW_SLOTS 64
/*
 * Without an IOMMU, a read maps the whole aligned window around the range,
 * where it is RAM in one piece, so the next views of the same buffer find
 * it mapped: a mapping costs the same whatever its length, and a read
 * marks nothing.  A write does the same through a MemoryRegionCache of
 * the window (npu_write_window()), which marks dirty exactly the ranges
 * written when the bracket ends: a guest's buffers are pages spread over
 * its RAM, and mapping and unmapping each written page by itself was most
 * of what a task cost beyond the core's own work when they were.  Behind
 * an IOMMU, writes map exactly their range, which unmapping marks dirty.
 */
#define NPU_READ_WINDOW (256 * KiB)
/* Write windows one bracket keeps, and the written ranges it records. */
#define NPU_WRITE_WINDOWS 32
#define NPU_WRITTEN_MAX 1024
/* The smallest page an IOMMU maps (VT-d's, virtio-iommu's). */
#define NPU_IOMMU_PAGE (4 * KiB)

typedef struct NpuMapping {
    hwaddr pa, len;
    void *host;
    bool write;
} NpuMapping;

typedef struct NpuWriteWindow {
    MemoryRegionCache cache;
    hwaddr pa, len;
} NpuWriteWindow;

/* A range written through write window @window, marked dirty at the end. */
typedef struct NpuWritten {
    hwaddr pa, len;
    unsigned window;
} NpuWritten;

static __thread NpuM100State *npu_bracket_dev;
static __thread unsigned npu_bracket_nmaps;
static __thread NpuMapping npu_bracket_maps[NPU_BRACKET_MAPS];
/* Per slot: 1 + the index of the read window mapped last there, or 0. */
static __thread uint16_t npu_bracket_window[NPU_WINDOW_SLOTS];
static __thread unsigned npu_bracket_nwwin, npu_bracket_nwritten;
static __thread NpuWriteWindow npu_bracket_wwin[NPU_WRITE_WINDOWS];
static __thread NpuWritten npu_bracket_written[NPU_WRITTEN_MAX];
/* Per slot: 1 + the index of the write window opened last there, or 0. */
static __thread uint8_t npu_bracket_wslot[NPU_WINDOW_SLOTS];

static void npu_mem_begin(void *opaque)
{
    npu_bracket_dev = opaque;
    npu_bracket_nmaps = 0;
    npu_bracket_nwwin = 0;
    npu_bracket_nwritten = 0;
    memset(npu_bracket_window, 0, sizeof(npu_bracket_window));
    memset(npu_bracket_wslot, 0, sizeof(npu_bracket_wslot));
}

static void npu_mem_end(void *opaque)
{
    AddressSpace *as = pci_get_address_space(PCI_DEVICE(opaque));

    /* Dirty and drop translated code where written, then let go. */
    for (unsigned i = 0; i < npu_bracket_nwritten; i++) {
        NpuWritten *w = &npu_bracket_written[i];
        NpuWriteWindow *win = &npu_bracket_wwin[w->window];

        address_space_cache_invalidate(&win->cache, w->pa - win->pa, w->len);
    }
    for (unsigned i = 0; i < npu_bracket_nwwin; i++) {
        address_space_cache_destroy(&npu_bracket_wwin[i].cache);
    }
    npu_bracket_nwwin = 0;
    npu_bracket_nwritten = 0;

    for (unsigned i = 0; i < npu_bracket_nmaps; i++) {
        NpuMapping *m = &npu_bracket_maps[i];

        address_space_unmap(as, m->host, m->len, m->write,
                            m->write ? m->len : 0);
    }
    npu_bracket_nmaps = 0;
    npu_bracket_dev = NULL;
}

static bool npu_mapping_holds(const NpuMapping *m, hwaddr pa, hwaddr len,
                              bool write)
{
    return pa >= m->pa && pa - m->pa < m->len &&
           len <= m->len - (pa - m->pa) && (m->write || !write);
}

static uint8_t *npu_keep_mapping(hwaddr pa, hwaddr len, void *host,
                                 bool write)
{
    NpuMapping *m = &npu_bracket_maps[npu_bracket_nmaps++];

    m->pa = pa;
    m->len = len;
    m->host = host;
    m->write = write;
    return host;
}

/*
 * Where the core writes @len bytes at @pa in place: in the write window
 * around it, opened on first use, with the range recorded for npu_mem_end()
 * to mark.  NULL when the window is not RAM in one piece or the bracket's
 * tables are full.
 */
static void *npu_write_window(NpuM100State *s, hwaddr pa, hwaddr len)
{
    uint8_t *slot = &npu_bracket_wslot[(pa / NPU_READ_WINDOW) %
                                       NPU_WINDOW_SLOTS];
    NpuWriteWindow *win = *slot ? &npu_bracket_wwin[*slot - 1] : NULL;
    NpuWritten *last;
    unsigned w;

    if (npu_bracket_nwritten == NPU_WRITTEN_MAX) {
        return NULL;
    }
    if (!win || pa < win->pa || pa - win->pa + len > win->len) {
        hwaddr start = QEMU_ALIGN_DOWN(pa, NPU_READ_WINDOW);
        hwaddr wlen = QEMU_ALIGN_UP(pa + len, NPU_READ_WINDOW) - start;

        if (npu_bracket_nwwin == NPU_WRITE_WINDOWS) {
            return NULL;
        }
        win = &npu_bracket_wwin[npu_bracket_nwwin];
        if (address_space_cache_init(&win->cache,
                                     pci_get_address_space(PCI_DEVICE(s)),
                                     start, wlen, true) < (int64_t)wlen ||
            !win->cache.ptr) {
            address_space_cache_destroy(&win->cache);
            return NULL;
        }
        win->pa = start;
        win->len = wlen;
        *slot = ++npu_bracket_nwwin;
    }
    w = win - npu_bracket_wwin;
    last = npu_bracket_nwritten ?
           &npu_bracket_written[npu_bracket_nwritten - 1] : NULL;
    if (last && last->window == w && pa >= last->pa &&
        pa <= last->pa + last->len) {
        /* Within or right after the last range: grow it. */
        last->len = MAX(last->len, pa + len - last->pa);
    } else {
        npu_bracket_written[npu_bracket_nwritten++] =
            (NpuWritten){ .pa = pa, .len = len, .window = w };
    }
    return (uint8_t *)win->cache.ptr + (pa - win->pa);
}

static void *npu_mem_map(void *opaque, uint64_t pa, size_t len, bool write)
{
    NpuM100State *s = opaque;
    NpuMapping *m;
    uint16_t *slot;
    void *host;

    if (npu_bracket_dev != s || !len) {
        return NULL;
    }
    /*
     * A range already mapped in this bracket (a buffer many views use):
     * the read window of its address, then the last few mappings.
     */
    slot = &npu_bracket_window[(pa / NPU_READ_WINDOW) % NPU_WINDOW_SLOTS];
    if (*slot && npu_mapping_holds(&npu_bracket_maps[*slot - 1], pa, len,
                                   write)) {
        m = &npu_bracket_maps[*slot - 1];
        return (uint8_t *)m->host + (pa - m->pa);
    }
    for (unsigned i = npu_bracket_nmaps, n = 0;
         i-- > 0 && n < NPU_BRACKET_LOOKBACK; n++) {
        m = &npu_bracket_maps[i];
        if (npu_mapping_holds(m, pa, len, write)) {
            return (uint8_t *)m->host + (pa - m->pa);
        }
    }
    if (write && !s->behind_iommu) {
        /* Needs no entry in the table. */
        host = npu_write_window(s, pa, len);
        if (host) {
            return host;
        }
    }
    if (npu_bracket_nmaps == NPU_BRACKET_MAPS) {
        return NULL;
    }
    /*
     * Behind an IOMMU, only what the device was asked to reach is looked
     * up: a window around it may cross addresses the guest did not map,
     * and the IOMMU would report those to the guest as DMA faults.  And
     * a range across a page boundary is not asked for at all: its pages
     * are seldom together in guest RAM, and each request is a trip to the
     * main loop, which the copy the core then makes costs anyway.
     */
    if (s->behind_iommu && pa / NPU_IOMMU_PAGE !=
                           (pa + len - 1) / NPU_IOMMU_PAGE) {
        return NULL;
    }
    if (!write && !s->behind_iommu) {
        hwaddr start = QEMU_ALIGN_DOWN(pa, NPU_READ_WINDOW);
        hwaddr end = QEMU_ALIGN_UP(pa + len, NPU_READ_WINDOW);

        host = npu_map_range(s, start, end - start, false);
        if (host) {
            *slot = npu_bracket_nmaps + 1;
            return npu_keep_mapping(start, end - start, host, false) +
                   (pa - start);
        }
    }
    host = npu_map_range(s, pa, len, write);
    return host ? npu_keep_mapping(pa, len, host, write) : NULL;
}

static int npu_mem_read(void *opaque, uint64_t pa, void *buf, size_t len)
{
    return npu_dma(opaque, pa, buf, len, false);
}

static int npu_mem_write(void *opaque, uint64_t pa, const void *buf,
                         size_t len)
{
    return npu_dma(opaque, pa, (void *)buf, len, true);
}

/*
 * Raise what the core reported since the last delivery.  The core reports
 * the masked interrupt status as a level.  MSI-X sends a message when a
 * bit of a vector's group rose and is still set, MSI when the status left
 * zero and is not zero now; INTx follows the level.  Under the BQL.
 */
static void npu_irq_flush(NpuM100State *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    uint32_t status, rose;
    bool left_zero, intx = false;

    qemu_mutex_lock(&s->irq_lock);
    status = s->irq_status;
    rose = s->irq_rose & status;
    left_zero = s->irq_left_zero;
    s->irq_rose = 0;
    s->irq_left_zero = false;
    qemu_mutex_unlock(&s->irq_lock);

    if (msix_enabled(pdev)) {
        for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
            if (rose & NPU_IRQ_QUEUE(q)) {
                msix_notify(pdev, q);
            }
        }
        if (rose & (NPU_IRQ_ERROR | NPU_IRQ_MMU_FAULT)) {
            msix_notify(pdev, NPU_MSIX_VEC_ERROR);
        }
    } else if (msi_enabled(pdev)) {
        if (status && left_zero) {
            msi_notify(pdev, 0);
        }
    } else {
        intx = status != 0;
    }
    if (intx != s->intx_level) {
        s->intx_level = intx;
        pci_set_irq(pdev, intx);
    }
}

static void npu_irq_bh(void *opaque)
{
    npu_irq_flush(opaque);
}

/*
 * The core's interrupt hook, called with its register lock held: from
 * MMIO and reset under the BQL, which delivers at once, or from a worker
 * completing a task, which leaves delivery to irq_bh.  Rises are kept
 * until then, so a bit that rises while another thread lowers the level
 * still sends its message.
 */
static void npu_irq(void *opaque, uint32_t pending)
{
    NpuM100State *s = opaque;

    qemu_mutex_lock(&s->irq_lock);
    s->irq_rose |= pending & ~s->irq_status;
    s->irq_left_zero |= pending && !s->irq_status;
    s->irq_status = pending;
    qemu_mutex_unlock(&s->irq_lock);
    if (qemu_mutex_iothread_locked()) {
        npu_irq_flush(s);
    } else {
        qemu_bh_schedule(s->irq_bh);
    }
}

/* The queue slot whose worker this thread is, or NULL. */
static __thread NpuQueueSlot *npu_worker_slot;

static void npu_kick(void *opaque, unsigned queue)
{
    NpuM100State *s = opaque;

    /* A worker completing a task of its queue fetches the next itself. */
    if (npu_worker_slot && npu_worker_slot->s == s &&
        npu_worker_slot->index == queue && s->worker_completes) {
        return;
    }
    qemu_bh_schedule(s->kick_bh);
}

/*
 * What the core reports: guest errors under LOG_GUEST_ERROR, the host's
 * own failures as warnings, and each as a trace event with its fields.
 * Called with the core's lock held (MMIO, fetch or completion, all under
 * the BQL): no call back into the core.
 */
static void npu_log(void *opaque, const struct npu_core_log *rec)
{
    const struct npu_hw_completion *c = rec->comp;

    switch (rec->event) {
    case NPU_EV_BAD_ACCESS:
        trace_npu_m100_bad_access(rec->write ? "write" : "read", rec->offset,
                                  rec->size, rec->value);
        break;
    case NPU_EV_QUEUE_ERROR:
        trace_npu_m100_queue_error(rec->queue);
        break;
    case NPU_EV_TASK_ERROR:
    case NPU_EV_TASK_ABORTED:
    case NPU_EV_HOST_ERROR:
        trace_npu_m100_task_error(rec->queue, rec->seqno, c->status,
                                  c->insn_index, c->detail, c->detail2,
                                  c->fault_addr);
        break;
    }
    if (rec->event == NPU_EV_HOST_ERROR) {
        warn_report("%s: %s", TYPE_NPU_M100, rec->msg);
    } else if (rec->event != NPU_EV_TASK_ABORTED) {
        qemu_log_mask(LOG_GUEST_ERROR, "%s: %s\n", TYPE_NPU_M100, rec->msg);
    }
}

static bool npu_fetch_locked(NpuM100State *s, NpuQueueSlot *slot);

/*
 * Hand @task, taken off @slot, back to the core: the completion record,
 * HEAD and the interrupt, or, for an orphan, only its freeing.
 */
static void npu_deliver(NpuQueueSlot *slot, struct npu_core_task *task,
                        bool orphan)
{
    trace_npu_m100_task_complete(slot->index, npu_core_task_status(task),
                                 npu_core_task_cycles(task),
                                 npu_core_task_replayed(task), orphan);
    npu_core_task_complete(task);
}

/*
 * The worker's own completion of a task it executed, with s->lock held:
 * the completion record and HEAD, then the queue's next entry, which the
 * worker runs next.  The interrupt goes to irq_bh (npu_irq()).  A task
 * orphaned by a reset meanwhile is only freed by npu_core_task_complete().
 */
static void npu_worker_complete(NpuM100State *s, NpuQueueSlot *slot)
{
    struct npu_core_task *task = slot->task;
    bool orphan = slot->orphan;

    slot->task = NULL;
    slot->orphan = false;
    npu_deliver(slot, task, orphan);
    npu_fetch_locked(s, slot);
}

static void *npu_worker(void *opaque)
{
    NpuQueueSlot *slot = opaque;
    NpuM100State *s = slot->s;

    npu_worker_slot = slot;
    qemu_mutex_lock(&s->lock);
    for (;;) {
        struct npu_core_task *task;

        while (!s->stopping && !slot->executing) {
            qemu_cond_wait(&slot->wake, &s->lock);
        }
        if (s->stopping) {
            break;
        }
        task = slot->task;
        qemu_mutex_unlock(&s->lock);
        npu_core_task_execute(task);
        qemu_mutex_lock(&s->lock);
        slot->executing = false;
        if (s->worker_completes) {
            /* Sets executing again if the queue has another entry. */
            npu_worker_complete(s, slot);
        } else {
            slot->executed = true;
            qemu_bh_schedule(s->done_bh);
        }
        qemu_cond_broadcast(&s->idle);
    }
    s->workers--;
    qemu_cond_broadcast(&s->idle);
    qemu_mutex_unlock(&s->lock);
    return NULL;
}

static void npu_fetch(NpuM100State *s, NpuQueueSlot *slot);

/* Main loop: deliver an executed task, then fetch the next. */
static void npu_complete(NpuM100State *s, NpuQueueSlot *slot)
{
    struct npu_core_task *task;
    bool orphan;

    timer_del(&slot->gate);
    timer_del(&slot->finish);
    qemu_mutex_lock(&s->lock);
    task = slot->task;
    orphan = slot->orphan;
    slot->task = NULL;
    slot->orphan = false;
    qemu_mutex_unlock(&s->lock);
    if (!task) {
        return;
    }
    npu_deliver(slot, task, orphan);
    npu_fetch(s, slot);
}

/* Main loop: take a finished task off the worker and deliver it. */
static void npu_collect(NpuM100State *s, NpuQueueSlot *slot)
{
    int64_t end, now;
    bool executed, orphan;
    uint64_t cycles;

    qemu_mutex_lock(&s->lock);
    executed = slot->executed && slot->task;
    slot->executed = false;
    orphan = slot->orphan;
    cycles = executed ? npu_core_task_cycles(slot->task) : 0;
    qemu_mutex_unlock(&s->lock);
    if (!executed) {
        return;
    }
    if (!s->timing || orphan) {
        npu_complete(s, slot);
        return;
    }
    end = slot->submit_ns + (int64_t)muldiv64(cycles, 1000, s->clock_mhz);
    now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    timer_del(&slot->gate);
    if (end <= now) {
        npu_complete(s, slot);
    } else {
        timer_mod(&slot->finish, end);
    }
}

static void npu_done_bh(void *opaque)
{
    NpuM100State *s = opaque;

    for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
        npu_collect(s, &s->slot[q]);
    }
}

/*
 * Timing mode: virtual time may not pass the submission instant before the
 * task has executed, so its completion time (submission + simulated cycles)
 * never depends on how fast the host is.  The worker needs no BQL, so
 * waiting for it here is bounded by the task's own cycle budget.
 */
static void npu_gate_cb(void *opaque)
{
    NpuQueueSlot *slot = opaque;
    NpuM100State *s = slot->s;

    qemu_mutex_lock(&s->lock);
    while (slot->executing && !s->stopping) {
        npu_wait_idle_locked(s);
    }
    qemu_mutex_unlock(&s->lock);
    npu_collect(s, slot);
}

static void npu_finish_cb(void *opaque)
{
    NpuQueueSlot *slot = opaque;

    npu_complete(slot->s, slot);
}

/*
 * The queue's next entry, given to its worker; false if there is none.
 * With s->lock held: from the main loop, or from the worker that just
 * completed the queue's task (npu_worker_complete()).
 */
static bool npu_fetch_locked(NpuM100State *s, NpuQueueSlot *slot)
{
    struct npu_core_task *task;

    if (slot->task || s->stopping) {
        return false;
    }
    task = npu_core_task_fetch(s->core, slot->index);
    if (!task) {
        return false;
    }
    trace_npu_m100_task_fetch(slot->index);
    slot->task = task;
    slot->orphan = false;
    slot->executing = true;
    slot->executed = false;
    return true;
}

/* Main loop: fetch the queue's next entry and wake its worker. */
static void npu_fetch(NpuM100State *s, NpuQueueSlot *slot)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    bool fetched;

    qemu_mutex_lock(&s->lock);
    fetched = npu_fetch_locked(s, slot);
    if (fetched) {
        slot->submit_ns = now;
        qemu_cond_signal(&slot->wake);
    }
    qemu_mutex_unlock(&s->lock);
    if (fetched && s->timing) {
        timer_mod(&slot->gate, now);
    }
}

static void npu_kick_bh(void *opaque)
{
    NpuM100State *s = opaque;

    for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
        npu_fetch(s, &s->slot[q]);
    }
}

/*
 * The core's reset hook: after any reset (register, bus reset, D3hot,
 * unplug) every task out is an orphan: the core already asked a running
 * one to stop, and completing it only frees it.  A task the worker still
 * runs is completed when the worker hands it back; the slot stays busy
 * until then, so the queue never has two tasks at once.
 */
static void npu_reset_hook(void *opaque)
{
    NpuM100State *s = opaque;

    trace_npu_m100_reset();
    qemu_mutex_lock(&s->lock);
    for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
        NpuQueueSlot *slot = &s->slot[q];
        struct npu_core_task *task = slot->task;

        if (!task) {
            continue;
        }
        slot->orphan = true;
        timer_del(&slot->gate);
        timer_del(&slot->finish);
        slot->executed = false;
        if (!slot->executing) {
            /* Executed and waiting for delivery: drop it now. */
            slot->task = NULL;
            slot->orphan = false;
            npu_deliver(slot, task, true);
        }
    }
    qemu_mutex_unlock(&s->lock);
}

/*
 * PCI power management: D0 and D3hot, no D1/D2, no PME.  D3hot cuts the
 * power of everything behind BAR0, as on hardware: the core's registers,
 * queue programming and tasks, and the contents of HBSM and SRAM, are lost.
 * While in D3hot the function answers config cycles only (BAR0 reads
 * return all ones, writes are dropped), runs no task and raises no
 * interrupt.  No_Soft_Reset is 0, so the OS restores config space after
 * D3hot -> D0; QEMU keeps config space (BARs, MSI, MSI-X) as it was.
 */
static void npu_enter_d3(NpuM100State *s)
{
    bool busy;

    s->d3 = true;
    /*
     * Masks and lowers the interrupt; running tasks are asked to stop and
     * npu_reset_hook() orphans the tasks out.
     */
    npu_core_reset(s->core);
    /* Let aborted tasks leave the workers before the memories are cut. */
    qemu_mutex_lock(&s->lock);
    do {
        busy = false;
        for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
            busy |= s->slot[q].executing;
        }
        if (busy) {
            npu_wait_idle_locked(s);
        }
    } while (busy);
    qemu_mutex_unlock(&s->lock);
    npu_core_power_loss(s->core);
}

static void npu_pm_update(NpuM100State *s, uint16_t old)
{
    uint8_t *pmcsr = s->parent_obj.config + s->pm_cap + PCI_PM_CTRL;
    uint16_t val = pci_get_word(pmcsr);
    unsigned state = val & PCI_PM_CTRL_STATE_MASK;

    trace_npu_m100_pm_state(state);
    if (state == 1 || state == 2) {
        /* Unsupported states: the write leaves the state as it was. */
        qemu_log_mask(LOG_GUEST_ERROR, "%s: D%u is not supported\n",
                      TYPE_NPU_M100, state);
        pci_set_word(pmcsr, (val & ~PCI_PM_CTRL_STATE_MASK) |
                            (old & PCI_PM_CTRL_STATE_MASK));
        return;
    }
    if (state == 3 && !s->d3) {
        npu_enter_d3(s);
    } else if (state == 0 && s->d3) {
        /* Power is back: the core comes up as after a reset. */
        s->d3 = false;
    }
}

static void npu_config_write(PCIDevice *pdev, uint32_t addr, uint32_t val,
                             int len)
{
    NpuM100State *s = NPU_M100(pdev);
    uint32_t pmcsr = s->pm_cap + PCI_PM_CTRL;
    uint16_t old = pci_get_word(pdev->config + pmcsr);

    pci_default_write_config(pdev, addr, val, len);
    if (ranges_overlap(addr, len, pmcsr, 2)) {
        npu_pm_update(s, old);
    }
}

static uint64_t npu_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    NpuM100State *s = opaque;
    uint64_t lo, hi;

    if (s->d3) {
        /* A function in D3hot answers config cycles only: master abort. */
        qemu_log_mask(LOG_GUEST_ERROR,
                      "%s: read of 0x%" HWADDR_PRIx " in D3hot\n",
                      TYPE_NPU_M100, addr);
        return size == 8 ? UINT64_MAX : (1ull << (8 * size)) - 1;
    }
    if (size == 4) {
        lo = npu_core_mmio_read(s->core, addr);
        trace_npu_m100_mmio_read(addr, size, lo);
        return lo;
    }
    if (size == 8 && !(addr & 7)) {
        /* _LO first: it latches _HI, so a 64-bit read is consistent. */
        lo = npu_core_mmio_read(s->core, addr);
        hi = npu_core_mmio_read(s->core, addr + 4);
        trace_npu_m100_mmio_read(addr, size, lo | hi << 32);
        return lo | hi << 32;
    }
    npu_core_mmio_bad_access(s->core, addr, size, false, 0);
    return 0;
}

static void npu_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                           unsigned size)
{
    NpuM100State *s = opaque;

    if (s->d3) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "%s: write of 0x%" HWADDR_PRIx " in D3hot ignored\n",
                      TYPE_NPU_M100, addr);
        return;
    }
    trace_npu_m100_mmio_write(addr, size, val);
    if (size == 8 && !(addr & 7)) {
        npu_core_mmio_write(s->core, addr, (uint32_t)val);
        npu_core_mmio_write(s->core, addr + 4, (uint32_t)(val >> 32));
        return;
    }
    if (size != 4) {
        npu_core_mmio_bad_access(s->core, addr, size, true, val);
        return;
    }
    npu_core_mmio_write(s->core, addr, (uint32_t)val);
}

static const MemoryRegionOps npu_mmio_ops = {
    .read = npu_mmio_read,
    .write = npu_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
};

static void npu_m100_realize(PCIDevice *pdev, Error **errp)
{
    NpuM100State *s = NPU_M100(pdev);
    struct npu_core_config cfg;
    struct npu_core_host host = {
        .mem_read = npu_mem_read,
        .mem_write = npu_mem_write,
        .mem_begin = npu_mem_begin,
        .mem_end = npu_mem_end,
        .mem_map = npu_mem_map,
        .irq = npu_irq,
        .kick = npu_kick,
        .log = npu_log,
        .reset = npu_reset_hook,
        .opaque = s,
    };
    char err[256];
    int ret;

    npu_core_config_default(&cfg);
    cfg.clusters = s->clusters;
    cfg.tpbs_per_cluster = s->tpbs_per_cluster;
    cfg.mesh_x = s->mesh_x;
    cfg.mesh_y = s->mesh_y;
    cfg.defect_mask = s->defect_mask;
    cfg.clock_mhz = s->clock_mhz;
    cfg.threads = s->threads;
    cfg.timing = s->timing;
    if (npu_core_config_check(&cfg, err, sizeof(err))) {
        error_setg(errp, "%s: %s", TYPE_NPU_M100, err);
        return;
    }

    pci_config_set_interrupt_pin(pdev->config, 1);
    ret = pci_add_capability(pdev, PCI_CAP_ID_PM, 0, PCI_PM_SIZEOF, errp);
    if (ret < 0) {
        return;
    }
    s->pm_cap = ret;
    /* PM 1.2, D0 and D3hot only, no PME; the state field is writable. */
    pci_set_word(pdev->config + s->pm_cap + PCI_PM_PMC, 3);
    pci_set_word(pdev->config + s->pm_cap + PCI_PM_CTRL, 0);
    pci_set_word(pdev->wmask + s->pm_cap + PCI_PM_CTRL,
                 PCI_PM_CTRL_STATE_MASK);
    memory_region_init_io(&s->mmio, OBJECT(s), &npu_mmio_ops, s,
                          "npu-m100-regs", NPU_BAR0_SIZE);
    pci_register_bar(pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY, &s->mmio);

    if (s->use_msix) {
        ret = msix_init_exclusive_bar(pdev, NPU_MSIX_VECTORS, NPU_MSIX_BAR,
                                      errp);
        if (ret) {
            return;
        }
        for (unsigned v = 0; v < NPU_MSIX_VECTORS; v++) {
            msix_vector_use(pdev, v);
        }
    }
    if (s->use_msi) {
        ret = msi_init(pdev, 0, 1, true, false, errp);
        if (ret) {
            goto fail_msix;
        }
    }

    /* The core reports its interrupt status as it is created. */
    qemu_mutex_init(&s->irq_lock);
    s->core = npu_core_create(&cfg, &host, err, sizeof(err));
    if (!s->core) {
        error_setg(errp, "%s: %s", TYPE_NPU_M100, err);
        qemu_mutex_destroy(&s->irq_lock);
        goto fail_msi;
    }

    DeviceState *dev = DEVICE(s);
    s->kick_bh = qemu_bh_new_guarded(npu_kick_bh, s,
                                     &dev->mem_reentrancy_guard);
    s->done_bh = qemu_bh_new_guarded(npu_done_bh, s,
                                     &dev->mem_reentrancy_guard);
    s->irq_bh = qemu_bh_new_guarded(npu_irq_bh, s,
                                    &dev->mem_reentrancy_guard);
    /*
     * Behind an IOMMU a DMA may fault, and the IOMMU raises its fault
     * interrupt at once, which needs the BQL: completion and fetch, which
     * access the fence and the ring with the core's register lock held,
     * stay in the main loop there (a worker waiting for the BQL there
     * would hold up the vCPU's register accesses, which hold the BQL).
     */
    s->behind_iommu =
        pci_device_iommu_address_space(pdev) != &address_space_memory;
    s->worker_completes = !s->timing && !s->behind_iommu;
    s->access_bh = qemu_bh_new_guarded(npu_access_bh, s,
                                       &dev->mem_reentrancy_guard);
    QSIMPLEQ_INIT(&s->accesses);
    qemu_cond_init(&s->accessed);
    qemu_mutex_init(&s->lock);
    qemu_cond_init(&s->idle);
    s->stopping = false;
    s->workers = NPU_HW_NUM_QUEUES;
    for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
        NpuQueueSlot *slot = &s->slot[q];
        char name[16];

        slot->s = s;
        slot->index = q;
        qemu_cond_init(&slot->wake);
        timer_init_ns(&slot->gate, QEMU_CLOCK_VIRTUAL, npu_gate_cb, slot);
        timer_init_ns(&slot->finish, QEMU_CLOCK_VIRTUAL, npu_finish_cb, slot);
        snprintf(name, sizeof(name), "npu-q%u", q);
        qemu_thread_create(&slot->thread, name, npu_worker, slot,
                           QEMU_THREAD_JOINABLE);
    }
    return;

fail_msi:
    msi_uninit(pdev);
fail_msix:
    if (s->use_msix) {
        msix_uninit_exclusive_bar(pdev);
    }
}

static void npu_m100_exit(PCIDevice *pdev)
{
    NpuM100State *s = NPU_M100(pdev);

    /*
     * Ask running tasks to stop early (npu_reset_hook() drops the ones
     * already executed), then stop and join the workers.
     */
    npu_core_reset(s->core);
    qemu_mutex_lock(&s->lock);
    s->stopping = true;
    for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
        qemu_cond_signal(&s->slot[q].wake);
    }
    qemu_cond_broadcast(&s->idle);
    /* A worker may wait for an access before it can return. */
    while (s->workers) {
        npu_wait_idle_locked(s);
    }
    qemu_mutex_unlock(&s->lock);
    for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
        NpuQueueSlot *slot = &s->slot[q];

        qemu_thread_join(&slot->thread);
        timer_del(&slot->gate);
        timer_del(&slot->finish);
        if (slot->task) {
            /* Orphaned by the reset above: this only frees it. */
            npu_core_task_complete(slot->task);
            slot->task = NULL;
        }
        qemu_cond_destroy(&slot->wake);
    }
    qemu_bh_delete(s->kick_bh);
    qemu_bh_delete(s->done_bh);
    qemu_bh_delete(s->irq_bh);
    qemu_bh_delete(s->access_bh);
    qemu_cond_destroy(&s->accessed);
    npu_core_destroy(s->core);
    s->core = NULL;
    qemu_cond_destroy(&s->idle);
    qemu_mutex_destroy(&s->lock);
    qemu_mutex_destroy(&s->irq_lock);
    msi_uninit(pdev);
    if (s->use_msix) {
        msix_uninit_exclusive_bar(pdev);
    }
}

static void npu_m100_reset(DeviceState *dev)
{
    NpuM100State *s = NPU_M100(dev);

    /*
     * The core lowers its interrupt status, and npu_irq() the line;
     * npu_reset_hook() orphans the tasks out.
     */
    npu_core_reset(s->core);
    /* A bus reset puts the function back in D0. */
    s->d3 = false;
    pci_set_word(PCI_DEVICE(s)->config + s->pm_cap + PCI_PM_CTRL, 0);
}

static Property npu_m100_properties[] = {
    DEFINE_PROP_UINT32("clusters", NpuM100State, clusters,
                       NPU_M100_CLUSTERS),
    DEFINE_PROP_UINT32("tpbs-per-cluster", NpuM100State, tpbs_per_cluster,
                       NPU_M100_TPBS_PER_CLUSTER),
    DEFINE_PROP_UINT32("mesh-x", NpuM100State, mesh_x, NPU_M100_MESH_X),
    DEFINE_PROP_UINT32("mesh-y", NpuM100State, mesh_y, NPU_M100_MESH_Y),
    DEFINE_PROP_UINT32("defect-mask", NpuM100State, defect_mask, 0),
    DEFINE_PROP_UINT32("clock-mhz", NpuM100State, clock_mhz,
                       NPU_M100_CLOCK_MHZ),
    DEFINE_PROP_UINT32("threads", NpuM100State, threads, 0),
    DEFINE_PROP_BOOL("timing", NpuM100State, timing, false),
    DEFINE_PROP_BOOL("msix", NpuM100State, use_msix, true),
    DEFINE_PROP_BOOL("msi", NpuM100State, use_msi, true),
    DEFINE_PROP_END_OF_LIST(),
};

typedef struct NpuPropHelp {
    const char *name;
    const char *help;
} NpuPropHelp;

static const NpuPropHelp npu_m100_prop_help[] = {
    { "clusters", "clusters present, 1..16" },
    { "tpbs-per-cluster", "Tensor Processing Blocks per cluster, 1..4" },
    { "mesh-x", "NoC mesh columns (clusters + CCB + DDR port <= x*y <= 16)" },
    { "mesh-y", "NoC mesh rows" },
    { "defect-mask", "fused-off clusters, bit c = cluster c" },
    { "clock-mhz", "modelled clock, for timing mode and reports" },
    { "threads", "execution threads per task, 0 = one per host CPU" },
    { "timing", "complete tasks after their simulated cycles on the "
                "virtual clock (off: as soon as computed)" },
    { "msix", "offer MSI-X (5 vectors: queues 0-3, errors)" },
    { "msi", "offer MSI (one vector)" },
    { NULL, NULL },
};

/* HBSM, SRAM and tasks in flight live outside guest RAM: not migratable. */
static const VMStateDescription npu_m100_vmstate = {
    .name = TYPE_NPU_M100,
    .unmigratable = 1,
};

static void npu_m100_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = npu_m100_realize;
    k->exit = npu_m100_exit;
    k->config_write = npu_config_write;
    k->vendor_id = NPU_PCI_VENDOR_ID;
    k->device_id = NPU_PCI_DEVICE_ID;
    k->revision = 1;
    k->class_id = NPU_PCI_CLASS;
    dc->desc = "M100 dataflow NPU (14 clusters x 4 TPBs)";
    dc->reset = npu_m100_reset;
    dc->vmsd = &npu_m100_vmstate;
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
    device_class_set_props(dc, npu_m100_properties);
    for (const NpuPropHelp *h = npu_m100_prop_help; h->name; h++) {
        object_class_property_set_description(klass, h->name, h->help);
    }
}

static const TypeInfo npu_m100_info = {
    .name = TYPE_NPU_M100,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(NpuM100State),
    .class_init = npu_m100_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_CONVENTIONAL_PCI_DEVICE },
        { },
    },
};

static void npu_m100_register_types(void)
{
    type_register_static(&npu_m100_info);
}

type_init(npu_m100_register_types)
