/*
 * qtest for the M100 NPU PCI device: no guest OS, the test plays driver.
 *
 * Built inside the cached QEMU tree (qemu-device/build-qemu.sh copies it to
 * tests/qtest/) against libqtest and libqos.  Every task is a real program
 * in guest memory behind real device page tables.
 *
 * Copyright (c) 2026 The M100 NPU authors
 * SPDX-License-Identifier: MIT
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "qapi/qmp/qdict.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "hw/pci/pci_regs.h"

#include "../../hw/misc/npu/uapi/npu/npu_hw.h"

#define NPU_SLOT            4
#define NPU_DEVFN           QPCI_DEVFN(NPU_SLOT, 0)

/* Guest memory used by the tests: all above 16 MiB, 128 MiB guest. */
#define MEM_BASE            0x01000000ull
#define MEM_END             0x07000000ull
#define MSI_ADDR            0x00800000ull /* MSI-X messages land in RAM */
#define MSI_DATA(v)         (0x4e500000u + (v))
#define PROG_VA             0x10000000ull
#define SRC_VA              0x20000000ull
#define DST_VA              0x30000000ull

typedef struct Npu {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar bar;
    uint64_t next_pa;
    uint64_t ring_pa[NPU_HW_NUM_QUEUES];
    uint64_t fence_pa;
    uint64_t seqno;
    unsigned ring_log2;
} Npu;

static uint32_t rd(Npu *n, uint32_t off)
{
    return qpci_io_readl(n->dev, n->bar, off);
}

static void wr(Npu *n, uint32_t off, uint32_t v)
{
    qpci_io_writel(n->dev, n->bar, off, v);
}

static uint64_t alloc(Npu *n, size_t bytes)
{
    uint64_t pa = n->next_pa;

    n->next_pa += (bytes + 4095) & ~4095ull;
    g_assert_cmphex(n->next_pa, <=, MEM_END);
    qtest_memset(n->qts, pa, 0, bytes);
    return pa;
}

/* Map [va, va + len) to pa in the page tables rooted at root. */
static void map(Npu *n, uint64_t root, uint64_t va, uint64_t pa, size_t len,
                bool write)
{
    for (uint64_t off = 0; off < len; off += NPU_MMU_PAGE_SIZE) {
        uint64_t table = root, v = va + off;

        for (int level = NPU_MMU_LEVELS - 1; level > 0; level--) {
            uint64_t pte_pa = table + 8 * NPU_MMU_INDEX(v, level);
            uint64_t pte = qtest_readq(n->qts, pte_pa);

            if (!(pte & NPU_PTE_VALID)) {
                pte = alloc(n, 4096) | NPU_PTE_VALID;
                qtest_writeq(n->qts, pte_pa, pte);
            }
            table = pte & NPU_PTE_ADDR_MASK;
        }
        qtest_writeq(n->qts, table + 8 * NPU_MMU_INDEX(v, 0),
                     ((pa + off) & NPU_PTE_ADDR_MASK) | NPU_PTE_VALID |
                     NPU_PTE_READ | (write ? NPU_PTE_WRITE : 0));
    }
}

static void setup_queues(Npu *n)
{
    n->ring_log2 = 4;
    for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
        uint64_t ring = n->ring_pa[q];

        wr(n, NPU_REG_Q(q, NPU_Q_BASE_LO), (uint32_t)ring);
        wr(n, NPU_REG_Q(q, NPU_Q_BASE_HI), (uint32_t)(ring >> 32));
        wr(n, NPU_REG_Q(q, NPU_Q_SIZE_LOG2), n->ring_log2);
        wr(n, NPU_REG_Q(q, NPU_Q_CTRL), NPU_Q_CTRL_ENABLE);
    }
    wr(n, NPU_REG_IRQ_MASK, NPU_IRQ_QUEUE_ALL | NPU_IRQ_ERROR |
       NPU_IRQ_MMU_FAULT);
}

/* Enable MSI-X and aim vector v at MSI_ADDR + 4 v with MSI_DATA(v). */
static void setup_msix(Npu *n)
{
    qpci_msix_enable(n->dev);
    for (unsigned v = 0; v < NPU_MSIX_VECTORS; v++) {
        uint64_t e = n->dev->msix_table_off + 16 * v;

        qpci_io_writel(n->dev, n->dev->msix_table_bar, e,
                       (uint32_t)(MSI_ADDR + 4 * v));
        qpci_io_writel(n->dev, n->dev->msix_table_bar, e + 4, 0);
        qpci_io_writel(n->dev, n->dev->msix_table_bar, e + 8, MSI_DATA(v));
        qpci_io_writel(n->dev, n->dev->msix_table_bar, e + 12, 0);
        qtest_writel(n->qts, MSI_ADDR + 4 * v, 0);
    }
}

/* A machine with the NPU (device properties @props), and @args for QEMU. */
static Npu *npu_start_args(const char *args, const char *props)
{
    Npu *n = g_new0(Npu, 1);

    n->qts = qtest_initf("-m 128M -nic none %s "
                         "-device npu-m100,addr=%02x.0%s%s",
                         args ? args : "", NPU_SLOT, props ? "," : "",
                         props ? props : "");
    n->bus = qpci_new_pc(n->qts, NULL);
    n->dev = qpci_device_find(n->bus, NPU_DEVFN);
    g_assert(n->dev);
    qpci_device_enable(n->dev);
    n->bar = qpci_iomap(n->dev, 0, NULL);
    n->next_pa = MEM_BASE;
    for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
        n->ring_pa[q] = alloc(n, 4096);
    }
    n->fence_pa = alloc(n, 4096);
    setup_queues(n);
    return n;
}

static Npu *npu_start(const char *props)
{
    return npu_start_args(NULL, props);
}

static void npu_stop(Npu *n)
{
    qpci_iounmap(n->dev, n->bar);
    g_free(n->dev);
    qpci_free_pc(n->bus);
    qtest_quit(n->qts);
    g_free(n);
}

static uint8_t pattern_byte(uint64_t i, unsigned seed)
{
    return (uint8_t)(seed + i * 13 + (i >> 8));
}

static void twu_bytes(struct npu_hw_twu *t, uint64_t va, uint32_t bytes)
{
    memset(t, 0, sizeof(*t));
    t->base = va;
    t->space = NPU_SPACE_DDR;
    t->dtype = NPU_DT_UINT8;
    t->nlevels = 1;
    t->level[0].initial = 0;
    t->level[0].step = 1;
    t->level[0].final = (int32_t)bytes - 1;
}

/* A DMA copy task: bytes from SRC_VA to DST_VA, in a fresh context. */
typedef struct Task {
    struct npu_hw_task desc;
    uint64_t root;
    uint64_t src_pa;
    uint64_t dst_pa;
    uint64_t prog_pa;
    uint32_t bytes;
    unsigned seed;
} Task;

static unsigned first_healthy(Npu *n)
{
    uint32_t fuse = rd(n, NPU_REG_FUSE_MASK);
    unsigned c = 0;

    while (fuse & (1u << c)) {
        c++;
    }
    return c;
}

/*
 * read_va: where the copy reads (SRC_VA normally; an unmapped address for
 * a fault).  dst_writable: map DST_VA writable.
 */
static void make_copy(Npu *n, Task *t, uint32_t bytes, uint64_t read_va,
                      bool dst_writable)
{
    struct {
        struct npu_hw_prog hdr;
        struct npu_hw_insn insn;
    } prog;
    uint8_t *buf = g_malloc(bytes);
    uint64_t prog_pa;

    memset(t, 0, sizeof(*t));
    t->bytes = bytes;
    t->seed = (unsigned)n->seqno + 7;
    t->root = alloc(n, 4096);
    t->src_pa = alloc(n, bytes);
    t->dst_pa = alloc(n, bytes);
    for (uint32_t i = 0; i < bytes; i++) {
        buf[i] = pattern_byte(i, t->seed);
    }
    qtest_bufwrite(n->qts, t->src_pa, buf, bytes);
    g_free(buf);
    map(n, t->root, SRC_VA, t->src_pa, bytes, false);
    map(n, t->root, DST_VA, t->dst_pa, bytes, dst_writable);

    memset(&prog, 0, sizeof(prog));
    prog.hdr.magic = NPU_PROG_MAGIC;
    prog.hdr.version_major = NPU_PROG_VERSION_MAJOR;
    prog.hdr.version_minor = NPU_PROG_VERSION_MINOR;
    prog.hdr.insn_count = 1;
    prog.hdr.insn_offset = sizeof(prog.hdr);
    prog.insn.unit = NPU_UNIT_DMA;
    prog.insn.opcode = NPU_DMA_COPY;
    twu_bytes(&prog.insn.opnd[NPU_OPND_SRC0], read_va, bytes);
    twu_bytes(&prog.insn.opnd[NPU_OPND_DST], DST_VA, bytes);
    prog_pa = alloc(n, sizeof(prog));
    qtest_memwrite(n->qts, prog_pa, &prog, sizeof(prog));
    map(n, t->root, PROG_VA, prog_pa, sizeof(prog), false);
    t->prog_pa = prog_pa;

    t->desc.magic = NPU_TASK_MAGIC;
    t->desc.flags = NPU_TASK_F_IRQ;
    t->desc.pt_base = t->root;
    t->desc.prog_va = PROG_VA;
    t->desc.prog_size = sizeof(prog);
    t->desc.asid = 1;
    t->desc.nclusters = 1;
    t->desc.cluster_map[0] = first_healthy(n);
    t->desc.sram_size = rd(n, NPU_REG_SRAM_SIZE);
}

static bool dst_matches(Npu *n, Task *t)
{
    uint8_t *buf = g_malloc(t->bytes);
    bool ok = true;

    qtest_bufread(n->qts, t->dst_pa, buf, t->bytes);
    for (uint32_t i = 0; i < t->bytes && ok; i++) {
        ok = buf[i] == pattern_byte(i, t->seed);
    }
    g_free(buf);
    return ok;
}

static uint64_t fence_of(Npu *n, unsigned q)
{
    return n->fence_pa + 64 * q;
}

/* Put desc in queue q's ring with a fresh seqno and ring the doorbell. */
static uint64_t submit(Npu *n, unsigned q, struct npu_hw_task *desc)
{
    uint8_t zero[64] = { 0 };
    uint32_t tail = rd(n, NPU_REG_Q(q, NPU_Q_TAIL));

    desc->seqno = ++n->seqno;
    desc->fence_addr = fence_of(n, q);
    qtest_memwrite(n->qts, fence_of(n, q), zero, sizeof(zero));
    qtest_memwrite(n->qts, n->ring_pa[q] + tail * sizeof(*desc), desc,
                   sizeof(*desc));
    wr(n, NPU_REG_Q(q, NPU_Q_TAIL), (tail + 1) & ((1u << n->ring_log2) - 1));
    return desc->seqno;
}

static void read_fence(Npu *n, unsigned q, struct npu_hw_completion *c)
{
    qtest_memread(n->qts, fence_of(n, q), c, sizeof(*c));
}

/* Wait (real time, bounded) until queue q's HEAD reaches head. */
static void wait_head(Npu *n, unsigned q, uint32_t head)
{
    for (int i = 0; i < 20000; i++) {
        if (rd(n, NPU_REG_Q(q, NPU_Q_HEAD)) == head) {
            return;
        }
        g_usleep(500);
    }
    g_assert_cmpuint(rd(n, NPU_REG_Q(q, NPU_Q_HEAD)), ==, head);
}

/* Submit, wait for completion, return the completion record. */
static void run(Npu *n, unsigned q, struct npu_hw_task *desc,
                struct npu_hw_completion *c)
{
    uint32_t mask = (1u << n->ring_log2) - 1;
    uint32_t head = rd(n, NPU_REG_Q(q, NPU_Q_HEAD));

    submit(n, q, desc);
    wait_head(n, q, (head + 1) & mask);
    read_fence(n, q, c);
}

static void run_good_copy(Npu *n, unsigned q)
{
    struct npu_hw_completion c;
    Task t;

    make_copy(n, &t, 4096, SRC_VA, true);
    run(n, q, &t.desc, &c);
    g_assert_cmpuint(c.status, ==, NPU_TASK_OK);
    g_assert_cmpuint(c.seqno, ==, t.desc.seqno);
    g_assert_true(dst_matches(n, &t));
}

static void wait_running(Npu *n, unsigned q)
{
    for (int i = 0; i < 20000; i++) {
        uint32_t st = rd(n, NPU_REG_Q(q, NPU_Q_STATUS));

        if (NPU_Q_STATE(st) == NPU_Q_STATE_RUNNING) {
            return;
        }
        g_usleep(500);
    }
    g_assert_not_reached();
}

/* ---- Identity and geometry ---- */

static void test_identity(void)
{
    Npu *n = npu_start(NULL);
    uint32_t geom = rd(n, NPU_REG_GEOM);
    uint32_t bad;

    g_assert_cmphex(qpci_config_readw(n->dev, PCI_VENDOR_ID), ==,
                    NPU_PCI_VENDOR_ID);
    g_assert_cmphex(qpci_config_readw(n->dev, PCI_DEVICE_ID), ==,
                    NPU_PCI_DEVICE_ID);
    g_assert_cmphex(qpci_config_readw(n->dev, PCI_CLASS_DEVICE), ==,
                    NPU_PCI_CLASS);
    g_assert_cmphex(rd(n, NPU_REG_ID), ==, NPU_ID_MAGIC);
    g_assert_cmpuint(NPU_VERSION_MAJOR(rd(n, NPU_REG_VERSION)), ==,
                     NPU_HW_VERSION_MAJOR);
    g_assert_cmpuint(NPU_GEOM_CLUSTERS(geom), ==, NPU_M100_CLUSTERS);
    g_assert_cmpuint(NPU_GEOM_TPBS(geom), ==, NPU_M100_TPBS_PER_CLUSTER);
    g_assert_cmpuint(NPU_GEOM_QUEUES(geom), ==, NPU_HW_NUM_QUEUES);
    g_assert_cmpuint(NPU_GEOM_DMA_ENGINES(geom), ==, 2);
    g_assert_cmpuint(rd(n, NPU_REG_SRAM_SIZE), ==, NPU_M100_SRAM_SIZE);
    g_assert_cmpuint(rd(n, NPU_REG_HBSM_SIZE), ==, NPU_M100_HBSM_SIZE);
    g_assert_cmpuint(rd(n, NPU_REG_CLOCK_MHZ), ==, NPU_M100_CLOCK_MHZ);
    g_assert_cmphex(rd(n, NPU_REG_FUSE_MASK), ==, 0);
    g_assert_cmphex(rd(n, NPU_REG_CAPS) & NPU_CAP_TIMING, ==, 0);
    g_assert_true(qpci_find_capability(n->dev, PCI_CAP_ID_MSIX, 0) != 0);
    g_assert_true(qpci_find_capability(n->dev, PCI_CAP_ID_MSI, 0) != 0);

    wr(n, NPU_REG_SCRATCH, 0xdeadbeef);
    g_assert_cmphex(rd(n, NPU_REG_SCRATCH), ==, 0xdeadbeef);

    /* 64-bit access: a _LO/_HI pair read in one go. */
    g_assert_cmphex(qpci_io_readq(n->dev, n->bar, NPU_REG_ID), ==,
                    ((uint64_t)rd(n, NPU_REG_VERSION) << 32) | NPU_ID_MAGIC);

    /* Byte, word and unaligned accesses are ignored and counted. */
    bad = rd(n, NPU_REG_BAD_ACCESS);
    g_assert_cmpuint(qpci_io_readb(n->dev, n->bar, NPU_REG_ID), ==, 0);
    g_assert_cmpuint(rd(n, NPU_REG_BAD_ACCESS), ==, bad + 1);
    qpci_io_writew(n->dev, n->bar, NPU_REG_SCRATCH, 0x1234);
    g_assert_cmpuint(rd(n, NPU_REG_BAD_ACCESS), ==, bad + 2);
    /* QEMU may split an unaligned access: each piece is counted. */
    g_assert_cmpuint(rd(n, NPU_REG_SCRATCH + 2), ==, 0);
    g_assert_cmpuint(rd(n, NPU_REG_BAD_ACCESS), >, bad + 2);
    g_assert_cmphex(rd(n, NPU_REG_SCRATCH), ==, 0xdeadbeef);
    npu_stop(n);
}

static void test_geometry_props(void)
{
    Npu *n = npu_start("clusters=8,tpbs-per-cluster=2,defect-mask=0x81,"
                       "clock-mhz=800,mesh-x=4,mesh-y=3");
    uint32_t geom = rd(n, NPU_REG_GEOM);
    uint32_t mesh = rd(n, NPU_REG_MESH);

    g_assert_cmpuint(NPU_GEOM_CLUSTERS(geom), ==, 8);
    g_assert_cmpuint(NPU_GEOM_TPBS(geom), ==, 2);
    g_assert_cmphex(rd(n, NPU_REG_FUSE_MASK), ==, 0x81);
    g_assert_cmpuint(rd(n, NPU_REG_CLOCK_MHZ), ==, 800);
    g_assert_cmpuint(NPU_MESH_X(mesh), ==, 4);
    g_assert_cmpuint(NPU_MESH_Y(mesh), ==, 3);
    /* Work runs around the fused clusters. */
    run_good_copy(n, 0);
    npu_stop(n);
}

/* ---- Tasks and interrupts ---- */

static void test_task_msix(void)
{
    Npu *n = npu_start(NULL);
    struct npu_hw_completion c;
    Task t;

    setup_msix(n);
    for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
        make_copy(n, &t, 64 * 1024 + 100, SRC_VA, true);
        run(n, q, &t.desc, &c);
        g_assert_cmpuint(c.status, ==, NPU_TASK_OK);
        g_assert_cmpuint(c.seqno, ==, t.desc.seqno);
        g_assert_cmpuint(c.cycles, >, 0);
        g_assert_true(dst_matches(n, &t));
        g_assert_cmpuint(rd(n, NPU_REG_Q(q, NPU_Q_DONE_SEQ_LO)), ==,
                         t.desc.seqno);
        g_assert_cmphex(rd(n, NPU_REG_IRQ_STATUS) & NPU_IRQ_QUEUE(q), !=, 0);
        /* The message for queue q went to vector q, and only there. */
        g_assert_cmphex(qtest_readl(n->qts, MSI_ADDR + 4 * q), ==,
                        MSI_DATA(q));
        g_assert_cmphex(qtest_readl(n->qts, MSI_ADDR + 4 * NPU_MSIX_VEC_ERROR),
                        ==, 0);
        wr(n, NPU_REG_IRQ_STATUS, NPU_IRQ_QUEUE(q));
        g_assert_cmphex(rd(n, NPU_REG_IRQ_STATUS), ==, 0);
    }
    g_assert_cmpuint(rd(n, NPU_REG_PERF_CYCLES), >, 0);
    npu_stop(n);
}

/* Several queues in flight at once, several tasks per ring. */
static void test_concurrent_queues(void)
{
    Npu *n = npu_start(NULL);
    Task t[NPU_HW_NUM_QUEUES][3];
    struct npu_hw_completion c;

    for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
        for (unsigned i = 0; i < 3; i++) {
            make_copy(n, &t[q][i], 32 * 1024, SRC_VA, true);
        }
    }
    for (unsigned i = 0; i < 3; i++) {
        for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
            uint32_t tail = rd(n, NPU_REG_Q(q, NPU_Q_TAIL));

            t[q][i].desc.seqno = ++n->seqno;
            t[q][i].desc.fence_addr = 0;
            qtest_memwrite(n->qts, n->ring_pa[q] + tail * sizeof(t[q][i].desc),
                           &t[q][i].desc, sizeof(t[q][i].desc));
            wr(n, NPU_REG_Q(q, NPU_Q_TAIL), tail + 1);
        }
    }
    for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
        wait_head(n, q, 3);
        g_assert_cmpuint(rd(n, NPU_REG_Q(q, NPU_Q_TASKS_LO)), ==, 3);
        g_assert_cmpuint(rd(n, NPU_REG_Q(q, NPU_Q_DONE_SEQ_LO)), ==,
                         t[q][2].desc.seqno);
        for (unsigned i = 0; i < 3; i++) {
            g_assert_true(dst_matches(n, &t[q][i]));
        }
    }
    read_fence(n, 0, &c);
    g_assert_cmpuint(c.seqno, ==, 0); /* no fence address, none written */
    npu_stop(n);
}

static void test_intx_fallback(void)
{
    Npu *n = npu_start("msix=off,msi=off");

    g_assert_cmpuint(qpci_find_capability(n->dev, PCI_CAP_ID_MSIX, 0), ==, 0);
    g_assert_cmpuint(qpci_config_readw(n->dev, PCI_STATUS) &
                     PCI_STATUS_INTERRUPT, ==, 0);
    run_good_copy(n, 1);
    /* The line is up while IRQ_STATUS is non-zero. */
    g_assert_cmpuint(qpci_config_readw(n->dev, PCI_STATUS) &
                     PCI_STATUS_INTERRUPT, !=, 0);
    wr(n, NPU_REG_IRQ_STATUS, NPU_IRQ_QUEUE(1));
    g_assert_cmpuint(qpci_config_readw(n->dev, PCI_STATUS) &
                     PCI_STATUS_INTERRUPT, ==, 0);
    npu_stop(n);
}

static void test_msi_fallback(void)
{
    Npu *n = npu_start("msix=off");
    uint8_t cap = qpci_find_capability(n->dev, PCI_CAP_ID_MSI, 0);
    uint16_t flags;

    g_assert_cmpuint(cap, !=, 0);
    flags = qpci_config_readw(n->dev, cap + PCI_MSI_FLAGS);
    g_assert_true(flags & PCI_MSI_FLAGS_64BIT);
    qpci_config_writel(n->dev, cap + PCI_MSI_ADDRESS_LO, (uint32_t)MSI_ADDR);
    qpci_config_writel(n->dev, cap + PCI_MSI_ADDRESS_HI, 0);
    qpci_config_writew(n->dev, cap + PCI_MSI_DATA_64, 0x4e50);
    qpci_config_writew(n->dev, cap + PCI_MSI_FLAGS, flags | PCI_MSI_FLAGS_ENABLE);
    qtest_writel(n->qts, MSI_ADDR, 0);
    run_good_copy(n, 2);
    g_assert_cmphex(qtest_readl(n->qts, MSI_ADDR), ==, 0x4e50);
    /* No line interrupt while MSI is on. */
    g_assert_cmpuint(qpci_config_readw(n->dev, PCI_STATUS) &
                     PCI_STATUS_INTERRUPT, ==, 0);
    npu_stop(n);
}

/* ---- Timing mode ---- */

static void test_timing_deterministic(void)
{
    Npu *n = npu_start("timing=on,clock-mhz=500");
    struct npu_hw_completion c;
    uint64_t cycles, ns;
    Task t;

    g_assert_cmphex(rd(n, NPU_REG_CAPS) & NPU_CAP_TIMING, !=, 0);
    make_copy(n, &t, 256 * 1024, SRC_VA, true);

    /* First run: learn the simulated duration. */
    submit(n, 0, &t.desc);
    wait_running(n, 0);
    qtest_clock_step(n->qts, 1000000000);
    wait_head(n, 0, 1);
    read_fence(n, 0, &c);
    g_assert_cmpuint(c.status, ==, NPU_TASK_OK);
    cycles = c.cycles;
    g_assert_cmpuint(cycles, >, 2);
    ns = cycles * 1000 / 500;

    /* Same task again: done exactly ns after submission, not before. */
    for (int round = 0; round < 3; round++) {
        submit(n, 0, &t.desc);
        wait_running(n, 0);
        qtest_clock_step(n->qts, ns - 1);
        g_usleep(20000); /* a worker finishing late must not matter */
        qtest_clock_step(n->qts, 0);
        read_fence(n, 0, &c);
        g_assert_cmpuint(c.seqno, ==, 0);
        g_assert_cmpuint(rd(n, NPU_REG_Q(0, NPU_Q_HEAD)), ==,
                         (uint32_t)(1 + round));
        qtest_clock_step(n->qts, 1);
        read_fence(n, 0, &c);
        g_assert_cmpuint(c.seqno, ==, t.desc.seqno);
        g_assert_cmpuint(c.cycles, ==, cycles);
        g_assert_cmpuint(rd(n, NPU_REG_Q(0, NPU_Q_HEAD)), ==,
                         (uint32_t)(2 + round));
    }
    npu_stop(n);
}

/* ---- MMU ---- */

static void test_mmu_fault(void)
{
    Npu *n = npu_start(NULL);
    struct npu_hw_completion c;
    uint32_t fs;
    Task t;

    setup_msix(n);
    make_copy(n, &t, 8192, 0x40000000ull, true); /* source unmapped */
    run(n, 3, &t.desc, &c);
    g_assert_cmpuint(c.status, ==, NPU_TASK_MMU_FAULT);
    g_assert_cmphex(c.fault_addr, ==, 0x40000000ull);
    fs = rd(n, NPU_REG_FAULT_STATUS);
    g_assert_true(fs & NPU_FAULT_VALID);
    g_assert_false(fs & NPU_FAULT_WRITE);
    g_assert_cmpuint(NPU_FAULT_QUEUE(fs), ==, 3);
    g_assert_cmphex(rd(n, NPU_REG_FAULT_ADDR_LO), ==, 0x40000000u);
    g_assert_cmphex(rd(n, NPU_REG_IRQ_STATUS) & NPU_IRQ_MMU_FAULT, !=, 0);
    g_assert_cmphex(qtest_readl(n->qts, MSI_ADDR + 4 * NPU_MSIX_VEC_ERROR),
                    ==, MSI_DATA(NPU_MSIX_VEC_ERROR));
    wr(n, NPU_REG_FAULT_CLEAR, 1);
    wr(n, NPU_REG_IRQ_STATUS, 0xffffffffu);
    g_assert_cmphex(rd(n, NPU_REG_FAULT_STATUS), ==, 0);

    /* A write through a read-only mapping faults as a write. */
    make_copy(n, &t, 4096, SRC_VA, false);
    run(n, 3, &t.desc, &c);
    g_assert_cmpuint(c.status, ==, NPU_TASK_MMU_FAULT);
    g_assert_cmphex(c.fault_addr, ==, DST_VA);
    g_assert_true(rd(n, NPU_REG_FAULT_STATUS) & NPU_FAULT_WRITE);
    wr(n, NPU_REG_FAULT_CLEAR, 1);

    /* The queue goes on. */
    run_good_copy(n, 3);
    npu_stop(n);
}

/* ---- Power management (D3hot) ---- */

static uint8_t pm_cap(Npu *n)
{
    uint8_t pm = qpci_find_capability(n->dev, PCI_CAP_ID_PM, 0);

    g_assert_cmpuint(pm, !=, 0);
    return pm;
}

static void set_pm_state(Npu *n, uint8_t pm, uint16_t state)
{
    qpci_config_writew(n->dev, pm + PCI_PM_CTRL, state);
}

static uint16_t pm_state(Npu *n, uint8_t pm)
{
    return qpci_config_readw(n->dev, pm + PCI_PM_CTRL) &
           PCI_PM_CTRL_STATE_MASK;
}

/* Turn t (from make_copy) into a copy between DDR and the SRAM window. */
static void copy_via_sram(Npu *n, Task *t, bool to_sram)
{
    struct npu_hw_insn insn;
    uint64_t prog_pa = t->prog_pa;
    struct npu_hw_twu *sram;

    qtest_memread(n->qts, prog_pa + sizeof(struct npu_hw_prog), &insn,
                  sizeof(insn));
    sram = &insn.opnd[to_sram ? NPU_OPND_DST : NPU_OPND_SRC0];
    sram->space = NPU_SPACE_SRAM;
    sram->base = 0;
    qtest_memwrite(n->qts, prog_pa + sizeof(struct npu_hw_prog), &insn,
                   sizeof(insn));
}

static bool dst_is_zero(Npu *n, Task *t)
{
    uint8_t *buf = g_malloc(t->bytes);
    bool ok = true;

    qtest_bufread(n->qts, t->dst_pa, buf, t->bytes);
    for (uint32_t i = 0; i < t->bytes && ok; i++) {
        ok = buf[i] == 0;
    }
    g_free(buf);
    return ok;
}

/*
 * The PM capability offers D3hot.  In D3hot BAR0 reads all ones and
 * ignores writes; back in D0 the registers are as after a reset and the
 * SRAM contents (which survive a reset) are gone.
 */
static void test_d3hot_loses_state(void)
{
    Npu *n = npu_start(NULL);
    uint8_t pm = pm_cap(n);
    struct npu_hw_completion c;
    Task a, b;

    g_assert_cmphex(qpci_config_readw(n->dev, pm + PCI_PM_PMC) &
                    PCI_PM_CAP_VER_MASK, ==, 3);
    g_assert_cmpuint(pm_state(n, pm), ==, 0);

    /* DDR -> SRAM, then SRAM -> DDR: the SRAM holds the pattern. */
    make_copy(n, &a, 4096, SRC_VA, true);
    copy_via_sram(n, &a, true);
    run(n, 0, &a.desc, &c);
    g_assert_cmpuint(c.status, ==, NPU_TASK_OK);
    make_copy(n, &b, 4096, SRC_VA, true);
    copy_via_sram(n, &b, false);
    b.seed = a.seed;
    run(n, 0, &b.desc, &c);
    g_assert_cmpuint(c.status, ==, NPU_TASK_OK);
    g_assert_true(dst_matches(n, &b));
    /* A reset keeps on-chip memory. */
    wr(n, NPU_REG_RESET, NPU_RESET_MAGIC);
    setup_queues(n);
    make_copy(n, &b, 4096, SRC_VA, true);
    copy_via_sram(n, &b, false);
    b.seed = a.seed;
    run(n, 0, &b.desc, &c);
    g_assert_true(dst_matches(n, &b));

    wr(n, NPU_REG_SCRATCH, 0x5a5a1234);
    set_pm_state(n, pm, 3);
    g_assert_cmpuint(pm_state(n, pm), ==, 3);
    g_assert_cmphex(rd(n, NPU_REG_ID), ==, 0xffffffff);
    g_assert_cmphex(rd(n, NPU_REG_SCRATCH), ==, 0xffffffff);
    wr(n, NPU_REG_SCRATCH, 1);          /* dropped */
    wr(n, NPU_REG_Q(0, NPU_Q_TAIL), 3); /* no task runs */
    /* D1 and D2 are not supported: the state stays D3hot. */
    set_pm_state(n, pm, 1);
    g_assert_cmpuint(pm_state(n, pm), ==, 3);

    set_pm_state(n, pm, 0);
    g_assert_cmpuint(pm_state(n, pm), ==, 0);
    g_assert_cmphex(rd(n, NPU_REG_ID), ==, NPU_ID_MAGIC);
    g_assert_cmphex(rd(n, NPU_REG_SCRATCH), ==, 0);
    g_assert_cmpuint(rd(n, NPU_REG_IRQ_MASK), ==, 0);
    for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
        g_assert_cmpuint(rd(n, NPU_REG_Q(q, NPU_Q_CTRL)), ==, 0);
        g_assert_cmpuint(rd(n, NPU_REG_Q(q, NPU_Q_HEAD)), ==, 0);
        g_assert_cmpuint(rd(n, NPU_REG_Q(q, NPU_Q_TAIL)), ==, 0);
    }
    /* The driver reprograms the queues; the SRAM now reads zeros. */
    setup_queues(n);
    make_copy(n, &b, 4096, SRC_VA, true);
    copy_via_sram(n, &b, false);
    run(n, 0, &b.desc, &c);
    g_assert_cmpuint(c.status, ==, NPU_TASK_OK);
    g_assert_true(dst_is_zero(n, &b));
    run_good_copy(n, 2);
    npu_stop(n);
}

/* D3hot while a task executes: it is abandoned, no completion, no crash. */
static void test_d3hot_in_flight(void)
{
    Npu *n = npu_start("timing=on");
    uint8_t pm = pm_cap(n);
    struct npu_hw_completion c;
    Task t;

    make_copy(n, &t, 64 * 1024, SRC_VA, true);
    submit(n, 1, &t.desc);
    wait_running(n, 1);
    set_pm_state(n, pm, 3);
    qtest_clock_step(n->qts, 1000000000);
    g_usleep(20000);
    qtest_clock_step(n->qts, 1000000000);
    read_fence(n, 1, &c);
    g_assert_cmpuint(c.seqno, ==, 0);
    set_pm_state(n, pm, 0);
    g_assert_cmpuint(rd(n, NPU_REG_Q(1, NPU_Q_HEAD)), ==, 0);
    g_assert_cmpuint(NPU_Q_STATE(rd(n, NPU_REG_Q(1, NPU_Q_STATUS))), ==,
                     NPU_Q_STATE_DISABLED);

    setup_queues(n);
    make_copy(n, &t, 4096, SRC_VA, true);
    submit(n, 1, &t.desc);
    wait_running(n, 1);
    qtest_clock_step(n->qts, 1000000000);
    wait_head(n, 1, 1);
    read_fence(n, 1, &c);
    g_assert_cmpuint(c.status, ==, NPU_TASK_OK);
    g_assert_true(dst_matches(n, &t));
    npu_stop(n);
}

/* ---- Reset ---- */

static void test_reset_in_flight(void)
{
    Npu *n = npu_start("timing=on");
    struct npu_hw_completion c;
    Task t;

    make_copy(n, &t, 64 * 1024, SRC_VA, true);
    submit(n, 1, &t.desc);
    wait_running(n, 1);
    wr(n, NPU_REG_RESET, NPU_RESET_MAGIC);
    qtest_clock_step(n->qts, 1000000000);
    g_usleep(20000);
    qtest_clock_step(n->qts, 1000000000);
    read_fence(n, 1, &c);
    g_assert_cmpuint(c.seqno, ==, 0);
    g_assert_cmpuint(rd(n, NPU_REG_Q(1, NPU_Q_HEAD)), ==, 0);
    g_assert_cmpuint(NPU_Q_STATE(rd(n, NPU_REG_Q(1, NPU_Q_STATUS))), ==,
                     NPU_Q_STATE_DISABLED);

    setup_queues(n);
    make_copy(n, &t, 4096, SRC_VA, true);
    submit(n, 1, &t.desc);
    wait_running(n, 1);
    qtest_clock_step(n->qts, 1000000000);
    wait_head(n, 1, 1);
    read_fence(n, 1, &c);
    g_assert_cmpuint(c.status, ==, NPU_TASK_OK);
    g_assert_true(dst_matches(n, &t));
    npu_stop(n);
}

/* Reset while the worker is really executing, by register and by QEMU. */
static void test_reset_executing(void)
{
    Npu *n = npu_start(NULL);
    Task t;

    for (int i = 0; i < 4; i++) {
        make_copy(n, &t, 8 * 1024 * 1024, SRC_VA, true);
        submit(n, 0, &t.desc);
        if (i & 1) {
            qtest_qmp_assert_success(n->qts, "{'execute': 'system_reset'}");
            qpci_device_enable(n->dev);
            n->bar = qpci_iomap(n->dev, 0, NULL);
        } else {
            wr(n, NPU_REG_RESET, NPU_RESET_MAGIC);
        }
        g_assert_cmpuint(rd(n, NPU_REG_Q(0, NPU_Q_HEAD)), ==, 0);
        setup_queues(n);
        n->next_pa = MEM_BASE + 5 * 4096;
        run_good_copy(n, 0);
        wr(n, NPU_REG_RESET, NPU_RESET_MAGIC);
        setup_queues(n);
    }
    npu_stop(n);
}

/* ---- Bad input ---- */

static void test_bad_descriptors(void)
{
    Npu *n = npu_start(NULL);
    struct npu_hw_completion c;
    Task t;

    /* Wrong magic. */
    make_copy(n, &t, 4096, SRC_VA, true);
    t.desc.magic = 0x12345678;
    run(n, 0, &t.desc, &c);
    g_assert_cmpuint(c.status, ==, NPU_TASK_BAD_DESCRIPTOR);
    g_assert_cmphex(rd(n, NPU_REG_IRQ_RAW) & NPU_IRQ_ERROR, !=, 0);

    /* Program outside the context's mappings. */
    make_copy(n, &t, 4096, SRC_VA, true);
    t.desc.prog_va = 0x7000000000ull;
    run(n, 0, &t.desc, &c);
    g_assert_cmpuint(c.status, !=, NPU_TASK_OK);

    /* Page-table root outside guest RAM. */
    make_copy(n, &t, 4096, SRC_VA, true);
    t.desc.pt_base = 0xfff000000000ull;
    run(n, 0, &t.desc, &c);
    g_assert_cmpuint(c.status, !=, NPU_TASK_OK);

    /* Program header corrupted. */
    make_copy(n, &t, 4096, SRC_VA, true);
    t.desc.prog_size = 10;
    run(n, 0, &t.desc, &c);
    g_assert_cmpuint(c.status, ==, NPU_TASK_BAD_DESCRIPTOR);

    /* Unaligned fence and fence outside RAM: no record, status says so. */
    make_copy(n, &t, 4096, SRC_VA, true);
    submit(n, 0, &t.desc);
    wait_head(n, 0, 5);
    t.desc.fence_addr = 0xfff000000000ull;
    {
        uint32_t tail = rd(n, NPU_REG_Q(0, NPU_Q_TAIL));

        t.desc.seqno = ++n->seqno;
        qtest_memwrite(n->qts, n->ring_pa[0] + tail * sizeof(t.desc),
                       &t.desc, sizeof(t.desc));
        wr(n, NPU_REG_Q(0, NPU_Q_TAIL), tail + 1);
        wait_head(n, 0, 6);
        g_assert_cmpuint(NPU_Q_LAST_STATUS(rd(n, NPU_REG_Q(0, NPU_Q_STATUS))),
                         ==, NPU_TASK_BUS_ERROR);
    }

    /* Ring in a hole of the address space: the entry cannot be read. */
    wr(n, NPU_REG_Q(2, NPU_Q_CTRL), 0);
    wr(n, NPU_REG_Q(2, NPU_Q_BASE_HI), 0xfff0);
    wr(n, NPU_REG_Q(2, NPU_Q_CTRL), NPU_Q_CTRL_ENABLE);
    wr(n, NPU_REG_Q(2, NPU_Q_TAIL), 1);
    wait_head(n, 2, 1);
    g_assert_cmpuint(NPU_Q_LAST_STATUS(rd(n, NPU_REG_Q(2, NPU_Q_STATUS))), ==,
                     NPU_TASK_BUS_ERROR);

    /* A doorbell beyond the ring stops the queue with an error. */
    wr(n, NPU_REG_Q(3, NPU_Q_TAIL), 1000);
    qtest_clock_step(n->qts, 0);
    g_usleep(10000);
    g_assert_cmpuint(NPU_Q_STATE(rd(n, NPU_REG_Q(3, NPU_Q_STATUS))), ==,
                     NPU_Q_STATE_ERROR);

    /* Bus mastering off: nothing reaches memory, the task fails. */
    qpci_config_writew(n->dev, PCI_COMMAND,
                       qpci_config_readw(n->dev, PCI_COMMAND) &
                       ~PCI_COMMAND_MASTER);
    make_copy(n, &t, 4096, SRC_VA, true);
    submit(n, 1, &t.desc);
    wait_head(n, 1, 1);
    g_assert_cmpuint(NPU_Q_LAST_STATUS(rd(n, NPU_REG_Q(1, NPU_Q_STATUS))), ==,
                     NPU_TASK_BUS_ERROR);
    g_assert_false(dst_matches(n, &t));
    qpci_device_enable(n->dev);

    /* Queue 0 still works. */
    run_good_copy(n, 0);
    npu_stop(n);
}

static void test_fuzz(void)
{
    Npu *n = npu_start(NULL);
    GRand *r = g_rand_new_with_seed(0x4e505531);
    uint8_t junk[4096];

    /* Random register writes, reset included, doorbells included. */
    for (int i = 0; i < 6000; i++) {
        uint32_t off = g_rand_int_range(r, 0, 0x3000) & ~3u;
        uint32_t v = g_rand_int(r);

        if (g_rand_int_range(r, 0, 4) == 0) {
            v &= 0xff;
        }
        if (off == NPU_REG_RESET && g_rand_boolean(r)) {
            v = NPU_RESET_MAGIC;
        }
        wr(n, off, v);
        if ((i & 255) == 0) {
            rd(n, g_rand_int_range(r, 0, 0x10000) & ~3u);
        }
    }
    /* Random ring contents, valid magic half the time. */
    wr(n, NPU_REG_RESET, NPU_RESET_MAGIC);
    setup_queues(n);
    for (int i = 0; i < 300; i++) {
        unsigned q = g_rand_int_range(r, 0, NPU_HW_NUM_QUEUES);
        uint32_t tail = rd(n, NPU_REG_Q(q, NPU_Q_TAIL));
        struct npu_hw_task *d = (struct npu_hw_task *)junk;

        for (size_t k = 0; k < sizeof(junk); k += 4) {
            uint32_t v = g_rand_int(r);
            memcpy(junk + k, &v, 4);
        }
        if (g_rand_boolean(r)) {
            d->magic = NPU_TASK_MAGIC;
            d->fence_addr = fence_of(n, q);
            d->pt_base = MEM_BASE + 4096 * g_rand_int_range(r, 0, 64);
            d->prog_va = PROG_VA;
        }
        qtest_memwrite(n->qts, n->ring_pa[q] + tail * sizeof(*d), d,
                       sizeof(*d));
        wr(n, NPU_REG_Q(q, NPU_Q_TAIL), (tail + 1) & 15);
    }
    for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
        wait_head(n, q, rd(n, NPU_REG_Q(q, NPU_Q_TAIL)));
    }
    g_rand_free(r);

    /* Still alive and correct. */
    wr(n, NPU_REG_RESET, NPU_RESET_MAGIC);
    setup_queues(n);
    g_assert_cmphex(rd(n, NPU_REG_ID), ==, NPU_ID_MAGIC);
    run_good_copy(n, 2);
    npu_stop(n);
}

/* ---- Lifecycle ---- */

static void test_hot_unplug(void)
{
    QTestState *qts = qtest_init("-m 128M -nic none");
    QPCIBus *bus = qpci_new_pc(qts, NULL);
    Npu n = { .qts = qts, .bus = bus };
    Task t;

    qtest_qmp_device_add(qts, "npu-m100", "npu1", "{'addr': '0x05', "
                         "'timing': true}");
    n.dev = qpci_device_find(bus, QPCI_DEVFN(5, 0));
    g_assert(n.dev);
    qpci_device_enable(n.dev);
    n.bar = qpci_iomap(n.dev, 0, NULL);
    n.next_pa = MEM_BASE;
    for (unsigned q = 0; q < NPU_HW_NUM_QUEUES; q++) {
        n.ring_pa[q] = alloc(&n, 4096);
    }
    n.fence_pa = alloc(&n, 4096);
    setup_queues(&n);
    g_assert_cmphex(rd(&n, NPU_REG_ID), ==, NPU_ID_MAGIC);

    /* Unplug with a task in flight (timing mode holds it). */
    make_copy(&n, &t, 1024 * 1024, SRC_VA, true);
    submit(&n, 0, &t.desc);
    wait_running(&n, 0);
    qpci_unplug_acpi_device_test(qts, "npu1", 0x05);
    g_assert_null(qpci_device_find(bus, QPCI_DEVFN(5, 0)));
    qtest_clock_step(qts, 1000000000);

    /* And plug it back. */
    qtest_qmp_device_add(qts, "npu-m100", "npu2", "{'addr': '0x05'}");
    g_free(n.dev);
    n.dev = qpci_device_find(bus, QPCI_DEVFN(5, 0));
    g_assert(n.dev);
    qpci_device_enable(n.dev);
    n.bar = qpci_iomap(n.dev, 0, NULL);
    g_assert_cmphex(rd(&n, NPU_REG_ID), ==, NPU_ID_MAGIC);
    g_free(n.dev);
    qpci_free_pc(bus);
    qtest_quit(qts);
}

static void test_migration_blocked(void)
{
    Npu *n = npu_start(NULL);
    QDict *rsp;
    const char *desc;

    rsp = qtest_qmp(n->qts, "{'execute': 'migrate', 'arguments': "
                    "{'uri': 'exec:cat > /dev/null'}}");
    g_assert(qdict_haskey(rsp, "error"));
    desc = qdict_get_str(qdict_get_qdict(rsp, "error"), "desc");
    g_assert_nonnull(strstr(desc, "npu-m100"));
    qobject_unref(rsp);
    npu_stop(n);
}

/* ---- Guest errors and trace events ---- */

/*
 * A device whose guest errors (-d guest_errors) and npu_m100_* trace
 * events go to a fresh log file, named in *path (free it, unlink it).
 */
static Npu *npu_start_logged(const char *props, char **path)
{
    g_autofree char *args = NULL;
    int fd = g_file_open_tmp("npu-m100-log-XXXXXX", path, NULL);

    g_assert_cmpint(fd, >=, 0);
    close(fd);
    args = g_strdup_printf("-d guest_errors -D %s -trace 'npu_m100_*'", *path);
    return npu_start_args(args, props);
}

static unsigned log_count(const char *path, const char *text)
{
    g_autofree char *s = NULL;
    unsigned count = 0;

    if (!g_file_get_contents(path, &s, NULL, NULL)) {
        return 0;
    }
    for (const char *p = strstr(s, text); p; p = strstr(p + 1, text)) {
        count++;
    }
    return count;
}

/*
 * Whether the log holds @text within a few seconds (QEMU flushes each
 * line, but a completion is logged from the main loop).
 */
static bool log_has(const char *path, const char *text)
{
    for (int i = 0; i < 10000; i++) {
        if (log_count(path, text)) {
            return true;
        }
        g_usleep(500);
    }
    g_test_message("log %s lacks '%s'", path, text);
    return false;
}

/*
 * Bad register accesses, a stopped queue and failed tasks are guest
 * errors (LOG_GUEST_ERROR) with what the core said about them, and trace
 * events with their fields; good accesses and good tasks log nothing.
 */
static void test_guest_error_log(void)
{
    char *path = NULL;
    Npu *n = npu_start_logged(NULL, &path);
    struct npu_hw_completion c;
    Task t;

    run_good_copy(n, 0);
    g_assert_cmpuint(rd(n, NPU_REG_SCRATCH), ==, 0);
    g_assert_cmpuint(log_count(path, "npu-m100: "), ==, 0);
    g_assert_cmpuint(log_count(path, "npu_m100_task_error"), ==, 0);
    /* ... but the trace events of MMIO and of the task are there. */
    g_assert_cmpuint(log_count(path, "npu_m100_task_fetch queue 0"), ==, 1);
    g_assert_cmpuint(log_count(path, "npu_m100_task_complete queue 0 "
                                     "status 0"), ==, 1);
    g_assert_true(log_has(path, "npu_m100_mmio_read addr 0x10c size 4 "
                                "val 0x0"));

    /* A write to a read-only register. */
    wr(n, NPU_REG_ID, 0x1234);
    g_assert_true(log_has(path, "npu-m100: 4-byte write of 0x1234 at 0x0 "
                                "refused: no writable register there\n"));
    g_assert_true(log_has(path, "npu_m100_bad_access write at 0x0 size 4 "
                                "value 0x1234"));
    /* A 2-byte access, which the bus passes on as it is. */
    qpci_io_readw(n->dev, n->bar, NPU_REG_SCRATCH);
    g_assert_true(log_has(path, "npu-m100: 2-byte read at 0x10c refused: "
                                "registers take aligned 4- or 8-byte "
                                "accesses"));
    /*
     * A reset register write without the magic resets nothing (the one
     * reset so far is the machine's, at start).
     */
    g_assert_cmpuint(log_count(path, "npu_m100_reset"), ==, 1);
    wr(n, NPU_REG_RESET, 1);
    g_assert_true(log_has(path, "a reset needs NPU_RESET_MAGIC"));
    g_assert_cmpuint(rd(n, NPU_REG_BAD_ACCESS), ==, 3);
    g_assert_cmpuint(log_count(path, "npu_m100_reset"), ==, 1);

    /* A descriptor with a wrong magic: its fields are in the line. */
    make_copy(n, &t, 4096, SRC_VA, true);
    t.desc.magic = 0x12345678;
    run(n, 1, &t.desc, &c);
    g_assert_cmpuint(c.status, ==, NPU_TASK_BAD_DESCRIPTOR);
    g_assert_true(log_has(path, "npu-m100: queue 1, task 2: bad task "
                                "descriptor: magic 0x12345678"));
    g_assert_true(log_has(path, "npu_m100_task_error queue 1 seqno 2 "
                                "status 7"));

    /* An MMU fault names the address and why. */
    make_copy(n, &t, 4096, 0x40000000ull, true);
    run(n, 2, &t.desc, &c);
    g_assert_cmpuint(c.status, ==, NPU_TASK_MMU_FAULT);
    g_assert_true(log_has(path, "npu-m100: queue 2, task 3: MMU fault: read "
                                "of device address 0x40000000 in address "
                                "space 1: not mapped (instruction 0)"));

    /* A doorbell beyond the ring stops the queue. */
    wr(n, NPU_REG_Q(3, NPU_Q_TAIL), 1000);
    g_assert_true(log_has(path, "npu-m100: queue 3 stopped: doorbell TAIL "
                                "1000 beyond its 16-entry ring"));
    g_assert_true(log_has(path, "npu_m100_queue_error queue 3"));

    /* Six guest errors in all, each logged once. */
    g_assert_cmpuint(log_count(path, "npu-m100: "), ==, 6);
    npu_stop(n);
    unlink(path);
    g_free(path);
}

/*
 * The core decodes the reset register, whatever the access size, and the
 * shell's reset hook orphans the job it holds: a 64-bit write of the magic
 * with a task held in timing mode drops that task.
 */
static void test_reset_hook(void)
{
    char *path = NULL;
    Npu *n = npu_start_logged("timing=on", &path);
    struct npu_hw_completion c;
    Task t;

    make_copy(n, &t, 64 * 1024, SRC_VA, true);
    submit(n, 1, &t.desc);
    wait_running(n, 1);
    g_assert_cmpuint(log_count(path, "npu_m100_reset"), ==, 1);
    qpci_io_writeq(n->dev, n->bar, NPU_REG_RESET,
                   NPU_RESET_MAGIC | (uint64_t)NPU_REG_STATUS << 32);
    g_assert_cmpuint(log_count(path, "npu_m100_reset"), ==, 2);
    /* The upper half went to the read-only STATUS register. */
    g_assert_true(log_has(path, "npu-m100: 4-byte write of 0x104 at 0x104 "
                                "refused"));
    qtest_clock_step(n->qts, 1000000000);
    /* Executed or stopped early, it is delivered to no one. */
    g_assert_true(log_has(path, " orphan 1"));
    g_assert_cmpuint(log_count(path, " orphan 0"), ==, 0);
    read_fence(n, 1, &c);
    g_assert_cmpuint(c.seqno, ==, 0);
    g_assert_cmpuint(rd(n, NPU_REG_Q(1, NPU_Q_HEAD)), ==, 0);

    /* The queue works again once set up. */
    setup_queues(n);
    make_copy(n, &t, 4096, SRC_VA, true);
    submit(n, 1, &t.desc);
    wait_running(n, 1);
    qtest_clock_step(n->qts, 1000000000);
    wait_head(n, 1, 1);
    read_fence(n, 1, &c);
    g_assert_cmpuint(c.status, ==, NPU_TASK_OK);
    g_assert_true(log_has(path, " orphan 0"));
    npu_stop(n);
    unlink(path);
    g_free(path);
}

/*
 * Behind an IOMMU (VT-d, translation on), a task whose page tables send a
 * read to an IOVA the guest did not map there: the IOMMU records a DMA
 * fault and raises its interrupt, which needs the BQL, from the mapping a
 * worker asked the main loop for; the task ends with a bus error, and the
 * device and QEMU go on.
 */
#define DMAR_BASE           0xfed90000ull
#define DMAR_GCMD           0x18
#define DMAR_GSTS           0x1c
#define DMAR_RTADDR         0x20
#define DMAR_FSTS           0x34
#define DMAR_FECTL          0x38
#define DMAR_FEDATA         0x3c
#define DMAR_FEADDR         0x40
#define DMAR_GCMD_TE        (1u << 31)
#define DMAR_GCMD_SRTP      (1u << 30)
#define DMAR_FSTS_PPF       (1u << 1)
#define SL_READ             1ull
#define SL_WRITE            2ull

/* Identity-map the 4 KiB page at @iova in the 3-level table at @slpt. */
static void sl_map(Npu *n, uint64_t slpt, uint64_t iova)
{
    uint64_t table = slpt;

    for (int level = 3; level > 1; level--) {
        uint64_t pte_pa = table + 8 * ((iova >> (12 + 9 * (level - 1))) & 511);
        uint64_t pte = qtest_readq(n->qts, pte_pa);

        if (!pte) {
            pte = alloc(n, 4096) | SL_READ | SL_WRITE;
            qtest_writeq(n->qts, pte_pa, pte);
        }
        table = pte & ~0xfffull;
    }
    qtest_writeq(n->qts, table + 8 * ((iova >> 12) & 511),
                 (iova & ~0xfffull) | SL_READ | SL_WRITE);
}

static void dmar_command(Npu *n, uint32_t bit)
{
    qtest_writel(n->qts, DMAR_BASE + DMAR_GCMD,
                 qtest_readl(n->qts, DMAR_BASE + DMAR_GSTS) | bit);
    g_assert_cmphex(qtest_readl(n->qts, DMAR_BASE + DMAR_GSTS) & bit, ==, bit);
}

static void test_iommu_fault(void)
{
    Npu *n = npu_start_args("-M q35 -device intel-iommu,intremap=off", NULL);
    uint64_t root, ctx, slpt, end;
    struct npu_hw_completion c;
    Task bad, good;

    make_copy(n, &bad, 4096, SRC_VA, true);
    make_copy(n, &good, 4096, SRC_VA, true);
    end = n->next_pa;

    /* Bus 0's context table gives the NPU a 39-bit, 3-level domain 1. */
    root = alloc(n, 4096);
    ctx = alloc(n, 4096);
    slpt = alloc(n, 4096);
    qtest_writeq(n->qts, root, ctx | 1);
    qtest_writeq(n->qts, ctx + 16 * NPU_DEVFN, slpt | 1);
    qtest_writeq(n->qts, ctx + 16 * NPU_DEVFN + 8, 1 | 1 << 8);
    /* Everything the tests wrote, except the first task's source. */
    for (uint64_t pa = MEM_BASE; pa < end; pa += 4096) {
        if (pa < bad.src_pa || pa >= bad.src_pa + bad.bytes) {
            sl_map(n, slpt, pa);
        }
    }
    qtest_writeq(n->qts, DMAR_BASE + DMAR_RTADDR, root);
    dmar_command(n, DMAR_GCMD_SRTP);
    dmar_command(n, DMAR_GCMD_TE);
    /* Fault events unmasked: the IOMMU raises its interrupt. */
    qtest_writel(n->qts, DMAR_BASE + DMAR_FEDATA, 0x40);
    qtest_writel(n->qts, DMAR_BASE + DMAR_FEADDR, 0xfee00000);
    qtest_writel(n->qts, DMAR_BASE + DMAR_FECTL, 0);
    g_assert_cmphex(qtest_readl(n->qts, DMAR_BASE + DMAR_FSTS) &
                    DMAR_FSTS_PPF, ==, 0);

    run(n, 0, &bad.desc, &c);
    g_assert_cmpuint(c.status, ==, NPU_TASK_BUS_ERROR);
    g_assert_cmpuint(c.seqno, ==, bad.desc.seqno);
    g_assert_false(dst_matches(n, &bad));
    g_assert_cmphex(qtest_readl(n->qts, DMAR_BASE + DMAR_FSTS) &
                    DMAR_FSTS_PPF, ==, DMAR_FSTS_PPF);

    /* The device goes on: the same copy from a mapped source works. */
    run(n, 1, &good.desc, &c);
    g_assert_cmpuint(c.status, ==, NPU_TASK_OK);
    g_assert_true(dst_matches(n, &good));
    npu_stop(n);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/npu-m100/identity", test_identity);
    qtest_add_func("/npu-m100/geometry-props", test_geometry_props);
    qtest_add_func("/npu-m100/task-msix", test_task_msix);
    qtest_add_func("/npu-m100/concurrent-queues", test_concurrent_queues);
    qtest_add_func("/npu-m100/intx-fallback", test_intx_fallback);
    qtest_add_func("/npu-m100/msi-fallback", test_msi_fallback);
    qtest_add_func("/npu-m100/timing-deterministic",
                   test_timing_deterministic);
    qtest_add_func("/npu-m100/mmu-fault", test_mmu_fault);
    qtest_add_func("/npu-m100/reset-in-flight", test_reset_in_flight);
    qtest_add_func("/npu-m100/d3hot-loses-state", test_d3hot_loses_state);
    qtest_add_func("/npu-m100/d3hot-in-flight", test_d3hot_in_flight);
    qtest_add_func("/npu-m100/reset-executing", test_reset_executing);
    qtest_add_func("/npu-m100/bad-descriptors", test_bad_descriptors);
    qtest_add_func("/npu-m100/fuzz", test_fuzz);
    qtest_add_func("/npu-m100/hot-unplug", test_hot_unplug);
    qtest_add_func("/npu-m100/migration-blocked", test_migration_blocked);
    qtest_add_func("/npu-m100/guest-error-log", test_guest_error_log);
    qtest_add_func("/npu-m100/reset-hook", test_reset_hook);
    qtest_add_func("/npu-m100/iommu-fault", test_iommu_fault);
    return g_test_run();
}
