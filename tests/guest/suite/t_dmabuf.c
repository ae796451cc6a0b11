/* SPDX-License-Identifier: MIT */
/*
 * dma-buf (PRIME): import of a udmabuf (memfd pages) and of npu BOs
 * exported by another file, used by jobs without a copy; CPU mmap of an
 * imported buffer forwarded to its exporter; implicit fences in the
 * buffer's reservation object, both ways; bad file descriptors.
 *
 * The fence tests need a fence that stays pending until the test signals
 * it: a sw_sync fence (debugfs sync/sw_sync, CONFIG_SW_SYNC: the debug
 * kernel), else a vgem fence (vgem.ko, which the stock kernel has as a
 * module: the initramfs carries it in /lib/modules/opt and the test loads
 * it).  Without either, the fence of a 16 MiB copy on a context of another
 * file (and queue) stands in: "held back" is then checked as "the blocker
 * was done when the held job was", and a check that needs the job pending
 * is made only if it still is afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/dma-buf.h>
#include <linux/sync_file.h>
#include <linux/udmabuf.h>

#include "npu_gt.h"

/* ---- helpers ----------------------------------------------------------------------- */

/* A sealed memfd of @size mapped at *@map and a udmabuf over it. */
struct udma {
	int memfd;
	int fd;			/* the dma-buf */
	uint64_t size;
	uint8_t *map;		/* the memfd's pages, shared */
};

static void udma_new(struct udma *u, uint64_t size)
{
	struct udmabuf_create c = { 0 };
	int dev;

	memset(u, 0, sizeof(*u));
	u->size = size;
	u->memfd = memfd_create("npu-gt-udmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	ck_assert_msg(u->memfd >= 0, "memfd_create: %s", strerror(errno));
	ck_assert_int_eq(ftruncate(u->memfd, (off_t)size), 0);
	ck_assert_msg(fcntl(u->memfd, F_ADD_SEALS, F_SEAL_SHRINK) == 0,
		      "F_SEAL_SHRINK: %s", strerror(errno));
	u->map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, u->memfd, 0);
	ck_assert_msg(u->map != MAP_FAILED, "mmap memfd: %s", strerror(errno));
	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	ck_assert_msg(dev >= 0, "/dev/udmabuf: %s (CONFIG_UDMABUF=y on both guest kernels)",
		      strerror(errno));
	c.memfd = (uint32_t)u->memfd;
	c.flags = UDMABUF_FLAGS_CLOEXEC;
	c.offset = 0;
	c.size = size;
	u->fd = ioctl(dev, UDMABUF_CREATE, &c);
	ck_assert_msg(u->fd >= 0, "UDMABUF_CREATE(%" PRIu64 "): %s", size, strerror(errno));
	close(dev);
}

static void udma_free(struct udma *u)
{
	if (u->map && u->map != MAP_FAILED)
		munmap(u->map, u->size);
	if (u->fd > 0)
		close(u->fd);
	if (u->memfd > 0)
		close(u->memfd);
	memset(u, 0, sizeof(*u));
}

static int prime_import(int fd, int dmabuf, uint32_t *handle)
{
	struct drm_prime_handle p = { .fd = dmabuf };
	int rc = gt_ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);

	if (!rc)
		*handle = p.handle;
	return rc;
}

/* Import @dmabuf into @fd as a gt_bo (size and dev_addr from BO_INFO). */
static void import_bo(int fd, int dmabuf, struct gt_bo *bo)
{
	struct drm_npu_bo_info info;
	int rc;

	memset(bo, 0, sizeof(*bo));
	rc = prime_import(fd, dmabuf, &bo->handle);
	ck_assert_msg(rc == 0, "PRIME_FD_TO_HANDLE: %s", strerror(-rc));
	ck_assert_int_eq(gt_bo_info(fd, bo->handle, &info), 0);
	bo->size = info.size;
	bo->dev_addr = info.dev_addr;
	bo->flags = info.flags;
	ck_assert_msg(bo->dev_addr && !(bo->dev_addr & 4095),
		      "imported BO dev_addr 0x%" PRIx64, bo->dev_addr);
}

static uint32_t new_ctx(int fd)
{
	struct drm_npu_ctx_create cc;
	int rc = gt_ctx_create_retry(fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 2000);

	ck_assert_msg(rc == 0, "CTX_CREATE(1): %s", strerror(-rc));
	return cc.ctx_id;
}

/*
 * Submit a copy of @bytes from @src to @dst (program in @cmd, which must be
 * mapped) on @ctx with out_sync @so (0: none) and optional in_syncs.
 */
static int submit_copy(int fd, uint32_t ctx, struct gt_bo *cmd,
		       const struct gt_bo *src, const struct gt_bo *dst,
		       uint64_t bytes, uint32_t so, const struct drm_npu_sync *in,
		       uint32_t nin)
{
	struct drm_npu_bo_ref refs[2] = {
		{ src->handle, DRM_NPU_BO_REF_READ },
		{ dst->handle, DRM_NPU_BO_REF_WRITE },
	};
	struct drm_npu_submit s = { 0 };

	s.ctx_id = ctx;
	s.cmd_handle = cmd->handle;
	s.cmd_size = gt_build_copy(cmd->map, src->dev_addr, dst->dev_addr, bytes);
	s.bos = (uintptr_t)refs;
	s.bo_count = 2;
	s.out_sync = so;
	s.in_syncs = (uintptr_t)in;
	s.in_sync_count = nin;
	return gt_submit(fd, &s);
}

/* Submit and wait up to 10 s; asserts. */
static void run_copy(int fd, uint32_t ctx, struct gt_bo *cmd,
		     const struct gt_bo *src, const struct gt_bo *dst,
		     uint64_t bytes)
{
	uint32_t so;
	int rc, st;

	ck_assert_int_eq(gt_syncobj_create(fd, 0, &so), 0);
	rc = submit_copy(fd, ctx, cmd, src, dst, bytes, so, NULL, 0);
	ck_assert_msg(rc == 0, "SUBMIT: %s", strerror(-rc));
	rc = gt_syncobj_wait(fd, &so, 1, GT_WAIT_NS);
	ck_assert_msg(rc == 0, "SYNCOBJ_WAIT: %s", strerror(-rc));
	st = gt_fence_status(fd, so);
	ck_assert_msg(st == GT_NO_STATUS || st == 1, "job fence status %d", st);
	gt_syncobj_destroy(fd, so);
}

static bool job_done(int fd, uint32_t so)
{
	return gt_syncobj_wait(fd, &so, 1, 0) == 0;
}

/* A mapped npu BO of @size, filled with pattern @seed (0: zeroed). */
static void npu_bo(int fd, uint64_t size, unsigned seed, struct gt_bo *bo)
{
	int rc = gt_bo_create(fd, size, 0, bo);

	ck_assert_msg(rc == 0, "BO_CREATE(%" PRIu64 "): %s", size, strerror(-rc));
	ck_assert_int_eq(gt_bo_mmap(fd, bo), 0);
	if (seed)
		gt_fill(bo->map, size, seed);
}

static void expect_pattern(const void *p, uint64_t bytes, unsigned seed,
			   const char *what)
{
	int64_t bad = gt_check(p, bytes, seed);

	ck_assert_msg(bad < 0, "%s: byte %" PRId64 " is 0x%02x, expected 0x%02x", what,
		      bad, bad < 0 ? 0 : ((const uint8_t *)p)[bad],
		      gt_pattern((uint64_t)(bad < 0 ? 0 : bad), seed));
}

/* ---- blockers ------------------------------------------------------------------------ */

/*
 * Something that holds a fence pending.  "manual": a gate, until
 * blocker_release.  Otherwise a 16 MiB copy on a context of its own file,
 * which finishes by itself.
 */
struct blocker {
	bool manual;
	const char *kind;
	struct gt_gate gate;
	int fd;			/* the copy's file */
	uint32_t ctx, so;
	struct gt_bo cmd, src, dst;
};

#define BLOCK_BYTES	(16u << 20)

static void blocker_init(struct blocker *b)
{
	memset(b, 0, sizeof(*b));
	if (gt_gate_init(&b->gate)) {
		b->manual = true;
		b->kind = b->gate.kind;
		return;
	}
	b->kind = "copy";
	fprintf(stderr, "npu-guest-test: no sw_sync, no vgem: blocking with a %u MiB copy\n",
		BLOCK_BYTES >> 20);
	b->fd = gt_open();
	ck_assert_int_ge(b->fd, 0);
	b->ctx = new_ctx(b->fd);
	npu_bo(b->fd, GT_COPY_PROG_SIZE, 0, &b->cmd);
	npu_bo(b->fd, BLOCK_BYTES, 0, &b->src);
	npu_bo(b->fd, BLOCK_BYTES, 0, &b->dst);
	ck_assert_int_eq(gt_syncobj_create(b->fd, 0, &b->so), 0);
}

/* A sync_file of a new pending fence. */
static int blocker_fence(struct blocker *b)
{
	struct drm_syncobj_handle h = {
		.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
		.fd = -1,
	};
	int rc;

	if (b->manual)
		return gt_gate_fence(&b->gate);
	rc = submit_copy(b->fd, b->ctx, &b->cmd, &b->src, &b->dst, BLOCK_BYTES, b->so,
			 NULL, 0);
	ck_assert_msg(rc == 0, "blocker SUBMIT: %s", strerror(-rc));
	h.handle = b->so;
	ck_assert_int_eq(gt_ioctl(b->fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h), 0);
	return h.fd;
}

/* Let the last fence signal (a copy finishes by itself). */
static void blocker_release(struct blocker *b)
{
	if (b->manual)
		gt_gate_release(&b->gate);
}

/* The last fence has signalled, without error. */
static bool blocker_done(struct blocker *b)
{
	if (b->manual)
		return true;	/* released by the test */
	return gt_fence_status(b->fd, b->so) == 1;
}

static void blocker_fini(struct blocker *b)
{
	if (b->manual) {
		gt_gate_fini(&b->gate);
		return;
	}
	gt_syncobj_wait(b->fd, &b->so, 1, GT_WAIT_NS);
	gt_syncobj_destroy(b->fd, b->so);
	gt_bo_free(b->fd, &b->dst);
	gt_bo_free(b->fd, &b->src);
	gt_bo_free(b->fd, &b->cmd);
	close(b->fd);
}

/*
 * The fences of a dma-buf's reservation a reader (@flags DMA_BUF_SYNC_READ:
 * its writers) or a writer (DMA_BUF_SYNC_WRITE: everything) waits for, as
 * a sync_file: *@status (1 signalled, 0 pending) and whether one of them is
 * a job of the npu (scheduler timeline "npu-q<N>").
 */
static void resv_fences(int dmabuf, uint32_t flags, int *status, bool *npu)
{
	struct dma_buf_export_sync_file e = { .flags = flags, .fd = -1 };
	struct sync_fence_info fi[16];
	struct sync_file_info info;

	ck_assert_msg(ioctl(dmabuf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &e) == 0,
		      "DMA_BUF_IOCTL_EXPORT_SYNC_FILE: %s", strerror(errno));
	memset(&info, 0, sizeof(info));
	memset(fi, 0, sizeof(fi));
	info.num_fences = 16;
	info.sync_fence_info = (uintptr_t)fi;
	ck_assert_msg(ioctl(e.fd, SYNC_IOC_FILE_INFO, &info) == 0, "SYNC_IOC_FILE_INFO: %s",
		      strerror(errno));
	*status = info.status;
	*npu = false;
	for (uint32_t i = 0; i < info.num_fences && i < 16; i++)
		if (!strncmp(fi[i].obj_name, "npu-q", 5))
			*npu = true;
	close(e.fd);
}

/* ---- import of a udmabuf ----------------------------------------------------------- */

#define UDMA_SIZE	(1u << 20)

START_TEST(dmabuf_udmabuf_dst)
{
	gt_begin("dmabuf_udmabuf_dst");
	uint32_t ctx = new_ctx(G.fd);
	struct gt_bo cmd, src, imp;
	struct udma u;
	uint64_t bytes = UDMA_SIZE - 4096;

	udma_new(&u, UDMA_SIZE);
	memset(u.map, 0xa5, UDMA_SIZE);
	import_bo(G.fd, u.fd, &imp);
	ck_assert_uint_eq(imp.size, UDMA_SIZE);
	ck_assert_uint_eq(imp.flags, 0);
	npu_bo(G.fd, GT_COPY_PROG_SIZE, 0, &cmd);
	npu_bo(G.fd, bytes, 7, &src);

	run_copy(G.fd, ctx, &cmd, &src, &imp, bytes);
	/* The device wrote the memfd's own pages: no copy in between. */
	expect_pattern(u.map, bytes, 7, "udmabuf after the copy");
	for (uint64_t i = bytes; i < UDMA_SIZE; i++)
		ck_assert_msg(u.map[i] == 0xa5, "byte %" PRIu64 " past the copy is 0x%02x", i,
			      u.map[i]);
	/* A second job into the same import reuses its mapping. */
	gt_fill(src.map, bytes, 8);
	run_copy(G.fd, ctx, &cmd, &src, &imp, bytes);
	expect_pattern(u.map, bytes, 8, "udmabuf after the second copy");

	gt_bo_free(G.fd, &imp);
	gt_bo_free(G.fd, &src);
	gt_bo_free(G.fd, &cmd);
	udma_free(&u);
}
END_TEST

START_TEST(dmabuf_udmabuf_src)
{
	gt_begin("dmabuf_udmabuf_src");
	uint32_t ctx = new_ctx(G.fd);
	struct gt_bo cmd, dst, imp;
	struct udma u;

	udma_new(&u, UDMA_SIZE);
	gt_fill(u.map, UDMA_SIZE, 11);
	import_bo(G.fd, u.fd, &imp);
	npu_bo(G.fd, GT_COPY_PROG_SIZE, 0, &cmd);
	npu_bo(G.fd, UDMA_SIZE, 0, &dst);

	run_copy(G.fd, ctx, &cmd, &imp, &dst, UDMA_SIZE);
	expect_pattern(dst.map, UDMA_SIZE, 11, "npu BO copied from the udmabuf");
	/* CPU writes to the memfd after import are what the next job reads. */
	gt_fill(u.map, UDMA_SIZE, 12);
	run_copy(G.fd, ctx, &cmd, &imp, &dst, UDMA_SIZE);
	expect_pattern(dst.map, UDMA_SIZE, 12, "npu BO after rewriting the memfd");

	gt_bo_free(G.fd, &imp);
	gt_bo_free(G.fd, &dst);
	gt_bo_free(G.fd, &cmd);
	udma_free(&u);
}
END_TEST

/* A udmabuf as the command BO too: the program itself lives in the memfd. */
START_TEST(dmabuf_udmabuf_cmd)
{
	gt_begin("dmabuf_udmabuf_cmd");
	uint32_t ctx = new_ctx(G.fd);
	struct gt_bo cmd, src, dst;
	struct udma u;

	udma_new(&u, 4096);
	import_bo(G.fd, u.fd, &cmd);
	cmd.map = u.map;
	npu_bo(G.fd, 65536, 21, &src);
	npu_bo(G.fd, 65536, 0, &dst);
	run_copy(G.fd, ctx, &cmd, &src, &dst, 65536);
	expect_pattern(dst.map, 65536, 21, "copy by a program in a udmabuf");
	cmd.map = NULL;
	gt_bo_free(G.fd, &cmd);
	gt_bo_free(G.fd, &src);
	gt_bo_free(G.fd, &dst);
	udma_free(&u);
}
END_TEST

/*
 * A buffer of another DRM driver (a vgem dumb BO, shmem pages): a job
 * writes it and the bytes show through vgem's own mapping; a vgem write
 * fence in its reservation holds back a job that reads it until vgem
 * signals it.  (vgem is a module of the stock kernel; the debug kernel
 * has none and skips this.)
 */
START_TEST(dmabuf_vgem_import)
{
	gt_begin("dmabuf_vgem_import");
	uint32_t ctx = new_ctx(G.fd), vbo, vf, so;
	struct gt_bo cmd, src, dst, imp;
	uint8_t *vmap;
	int vfd = gt_vgem_open(), dmabuf, rc;

	if (vfd < 0)
		GT_SKIP("no vgem in this kernel (the stock kernel runs this)");
	vbo = gt_vgem_bo(vfd, UDMA_SIZE, &vmap);
	memset(vmap, 0x5a, UDMA_SIZE);
	ck_assert_int_eq(gt_prime_export(vfd, vbo, DRM_CLOEXEC | DRM_RDWR, &dmabuf), 0);
	import_bo(G.fd, dmabuf, &imp);
	ck_assert_uint_eq(imp.size, UDMA_SIZE);
	npu_bo(G.fd, GT_COPY_PROG_SIZE, 0, &cmd);
	npu_bo(G.fd, UDMA_SIZE, 81, &src);
	npu_bo(G.fd, UDMA_SIZE, 0, &dst);

	run_copy(G.fd, ctx, &cmd, &src, &imp, UDMA_SIZE);
	expect_pattern(vmap, UDMA_SIZE, 81, "vgem BO written by the npu");

	ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &so), 0);
	vf = gt_vgem_fence(vfd, vbo, true);
	gt_fill(vmap, UDMA_SIZE, 82);
	rc = submit_copy(G.fd, ctx, &cmd, &imp, &dst, UDMA_SIZE, so, NULL, 0);
	ck_assert_msg(rc == 0, "SUBMIT: %s", strerror(-rc));
	gt_msleep(300);
	ck_assert_msg(!job_done(G.fd, so), "the job ran before vgem's write fence signalled");
	ck_assert(gt_all_zero(dst.map, UDMA_SIZE));
	gt_vgem_signal(vfd, vf);
	ck_assert_int_eq(gt_syncobj_wait(G.fd, &so, 1, GT_WAIT_NS), 0);
	expect_pattern(dst.map, UDMA_SIZE, 82, "npu BO copied from the vgem BO");

	gt_syncobj_destroy(G.fd, so);
	gt_bo_free(G.fd, &dst);
	gt_bo_free(G.fd, &src);
	gt_bo_free(G.fd, &cmd);
	gt_bo_free(G.fd, &imp);
	close(dmabuf);
	munmap(vmap, UDMA_SIZE);
	close(vfd);
}
END_TEST

/* CPU mmap of an imported buffer through the npu file goes to udmabuf. */
START_TEST(dmabuf_mmap_forward)
{
	gt_begin("dmabuf_mmap_forward");
	struct gt_bo imp;
	struct udma u;
	int rc;

	udma_new(&u, UDMA_SIZE);
	gt_fill(u.map, UDMA_SIZE, 31);
	import_bo(G.fd, u.fd, &imp);
	rc = gt_bo_mmap(G.fd, &imp);
	ck_assert_msg(rc == 0, "mmap of an imported udmabuf: %s", strerror(-rc));
	expect_pattern(imp.map, UDMA_SIZE, 31, "imported BO read through the npu file");
	gt_fill(imp.map, UDMA_SIZE, 32);
	expect_pattern(u.map, UDMA_SIZE, 32, "memfd after a write through the npu file");
	gt_bo_free(G.fd, &imp);
	udma_free(&u);
}
END_TEST

/* One import per file and dma-buf; the BO lives until handle and fd go. */
START_TEST(dmabuf_import_accounting)
{
	gt_begin("dmabuf_import_accounting");
	struct drm_npu_stats_data st0, st1, st2;
	struct gt_baseline base;
	uint32_t h1, h2, h3;
	struct udma u;
	int fd2 = gt_open();

	ck_assert_int_ge(fd2, 0);
	gt_take_baseline(&base);
	udma_new(&u, UDMA_SIZE);
	ck_assert_int_eq(gt_stats(G.fd, &st0), 0);
	ck_assert_int_eq(prime_import(G.fd, u.fd, &h1), 0);
	ck_assert_int_eq(prime_import(G.fd, u.fd, &h2), 0);
	ck_assert_msg(h1 == h2, "same dma-buf imported twice: handles %u and %u", h1, h2);
	ck_assert_int_eq(gt_stats(G.fd, &st1), 0);
	ck_assert_uint_eq(st1.bo_count, st0.bo_count + 1);
	ck_assert_uint_eq(st1.bo_bytes, st0.bo_bytes + UDMA_SIZE);
	/* Another file's import of a foreign dma-buf is a BO of its own. */
	ck_assert_int_eq(prime_import(fd2, u.fd, &h3), 0);
	ck_assert_int_eq(gt_stats(G.fd, &st2), 0);
	ck_assert_uint_eq(st2.bo_count, st0.bo_count + 2);
	/* Exporting an imported BO gives back the same dma-buf. */
	{
		int again;
		uint32_t h4;

		ck_assert_int_eq(gt_prime_export(G.fd, h1, DRM_CLOEXEC, &again), 0);
		ck_assert_int_eq(prime_import(G.fd, again, &h4), 0);
		ck_assert_uint_eq(h4, h1);
		ck_assert_int_eq(prime_import(fd2, again, &h4), 0);
		ck_assert_uint_eq(h4, h3);
		close(again);
	}
	/* The dma-buf fd is not needed once imported. */
	close(u.fd);
	u.fd = 0;
	{
		struct drm_npu_bo_info info;

		ck_assert_int_eq(gt_bo_info(G.fd, h1, &info), 0);
		ck_assert_uint_eq(info.size, UDMA_SIZE);
	}
	ck_assert_int_eq(gt_gem_close(G.fd, h1), 0);
	ck_assert_int_eq(gt_gem_close(G.fd, h1), -EINVAL);
	close(fd2);
	udma_free(&u);
	gt_expect_baseline(&base, "udmabuf imports closed");
}
END_TEST

/* ---- npu BOs shared through dma-buf ------------------------------------------------ */

START_TEST(dmabuf_export_import)
{
	gt_begin("dmabuf_export_import");
	struct drm_npu_stats_data st0, st1;
	struct gt_bo a, b, nom;
	struct drm_npu_bo_info info;
	uint32_t h;
	int dmabuf, dmabuf2, fd2 = gt_open();
	void *p;

	ck_assert_int_ge(fd2, 0);
	npu_bo(G.fd, 1 << 20, 41, &a);
	ck_assert_int_eq(gt_prime_export(G.fd, a.handle, DRM_CLOEXEC | DRM_RDWR, &dmabuf), 0);
	ck_assert_int_ge(dmabuf, 0);
	/* Same file: the same handle. */
	ck_assert_int_eq(prime_import(G.fd, dmabuf, &h), 0);
	ck_assert_uint_eq(h, a.handle);
	/* Exporting again gives the same dma-buf (same import). */
	ck_assert_int_eq(gt_prime_export(G.fd, a.handle, DRM_CLOEXEC, &dmabuf2), 0);
	ck_assert_int_eq(prime_import(G.fd, dmabuf2, &h), 0);
	ck_assert_uint_eq(h, a.handle);
	close(dmabuf2);

	/* Another file: the same GEM object (no new BO), its own address. */
	ck_assert_int_eq(gt_stats(G.fd, &st0), 0);
	import_bo(fd2, dmabuf, &b);
	ck_assert_int_eq(gt_stats(G.fd, &st1), 0);
	ck_assert_uint_eq(st1.bo_count, st0.bo_count);
	ck_assert_uint_eq(b.size, a.size);
	ck_assert_int_eq(gt_bo_mmap(fd2, &b), 0);
	expect_pattern(b.map, b.size, 41, "second file's view of the exported BO");
	gt_fill(b.map, b.size, 42);
	expect_pattern(a.map, a.size, 42, "exporter's view after the importer wrote");
	/* mmap of the dma-buf fd itself works for a mappable BO. */
	p = mmap(NULL, a.size, PROT_READ, MAP_SHARED, dmabuf, 0);
	ck_assert_msg(p != MAP_FAILED, "mmap of the dma-buf: %s", strerror(errno));
	expect_pattern(p, a.size, 42, "dma-buf mmap");
	munmap(p, a.size);
	close(dmabuf);

	/* Flags travel with the BO: NO_MMAP stays unmappable everywhere. */
	ck_assert_int_eq(gt_bo_create(G.fd, 65536, DRM_NPU_BO_NO_MMAP, &nom), 0);
	ck_assert_int_eq(gt_prime_export(G.fd, nom.handle, DRM_CLOEXEC, &dmabuf), 0);
	p = mmap(NULL, 65536, PROT_READ, MAP_SHARED, dmabuf, 0);
	ck_assert_msg(p == MAP_FAILED, "a NO_MMAP BO was mapped through its dma-buf");
	ck_assert_int_eq(prime_import(fd2, dmabuf, &h), 0);
	ck_assert_int_eq(gt_bo_info(fd2, h, &info), 0);
	ck_assert_uint_eq(info.flags, DRM_NPU_BO_NO_MMAP);
	{
		uint64_t off;
		int rc = gt_bo_mmap_offset(fd2, h, &off);

		ck_assert_msg(rc == -EPERM, "MMAP_OFFSET of an imported NO_MMAP BO: %s",
			      strerror(-rc));
	}
	close(dmabuf);
	gt_bo_free(G.fd, &nom);
	gt_bo_free(fd2, &b);
	gt_bo_free(G.fd, &a);
	close(fd2);
}
END_TEST

/*
 * Job 1 on file A writes X; job 2 on file B, submitted right after with no
 * syncobj, reads X (imported from A's export).  Job 2 must see job 1's
 * data: the implicit write fence in X's reservation.  Job 1 sits behind a
 * 16 MiB copy on its context, and the two contexts are on different
 * hardware queues when the device has several, so a missed dependency
 * shows as zeros.
 */
#define BIG	(16u << 20)
#define MID	(4u << 20)

START_TEST(dmabuf_implicit_cross_file)
{
	gt_begin("dmabuf_implicit_cross_file");
	struct drm_npu_ctx_create ca, cb;
	struct gt_bo cmd0, cmd1, cmdb, big_s, big_d, src, x, xb, y;
	uint32_t so1, so2;
	int dmabuf, rc, st, fd2 = gt_open();

	ck_assert_int_ge(fd2, 0);
	ck_assert_int_eq(gt_ctx_create_retry(G.fd, 1, DRM_NPU_PRIORITY_NORMAL, &ca, 2000), 0);
	ck_assert_int_eq(gt_ctx_create_retry(fd2, 1, DRM_NPU_PRIORITY_NORMAL, &cb, 2000), 0);
	if (G.info.queues > 1)
		ck_assert_msg(ca.queue != cb.queue, "both contexts on queue %u", ca.queue);
	npu_bo(G.fd, GT_COPY_PROG_SIZE, 0, &cmd0);
	npu_bo(G.fd, GT_COPY_PROG_SIZE, 0, &cmd1);
	npu_bo(G.fd, BIG, 51, &big_s);
	npu_bo(G.fd, BIG, 0, &big_d);
	npu_bo(G.fd, MID, 52, &src);
	npu_bo(G.fd, MID, 0, &x);
	ck_assert_int_eq(gt_prime_export(G.fd, x.handle, DRM_CLOEXEC, &dmabuf), 0);
	import_bo(fd2, dmabuf, &xb);
	close(dmabuf);
	npu_bo(fd2, GT_COPY_PROG_SIZE, 0, &cmdb);
	npu_bo(fd2, MID, 0, &y);
	ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &so1), 0);
	ck_assert_int_eq(gt_syncobj_create(fd2, 0, &so2), 0);

	rc = submit_copy(G.fd, ca.ctx_id, &cmd0, &big_s, &big_d, BIG, 0, NULL, 0);
	ck_assert_msg(rc == 0, "SUBMIT big: %s", strerror(-rc));
	rc = submit_copy(G.fd, ca.ctx_id, &cmd1, &src, &x, MID, so1, NULL, 0);
	ck_assert_msg(rc == 0, "SUBMIT job 1: %s", strerror(-rc));
	rc = submit_copy(fd2, cb.ctx_id, &cmdb, &xb, &y, MID, so2, NULL, 0);
	ck_assert_msg(rc == 0, "SUBMIT job 2: %s", strerror(-rc));
	rc = gt_syncobj_wait(fd2, &so2, 1, 3 * GT_WAIT_NS);
	ck_assert_msg(rc == 0, "job 2: %s", strerror(-rc));
	/* Job 2 ran after job 1: job 1's fence is signalled by now. */
	st = gt_fence_status(G.fd, so1);
	ck_assert_msg(st == GT_NO_STATUS || st == 1, "job 1 fence status %d when job 2 is done",
		      st);
	expect_pattern(y.map, MID, 52, "job 2's copy of what job 1 wrote");
	expect_pattern(big_d.map, BIG, 51, "the big copy");

	gt_syncobj_destroy(G.fd, so1);
	gt_syncobj_destroy(fd2, so2);
	gt_bo_free(fd2, &y);
	gt_bo_free(fd2, &cmdb);
	gt_bo_free(fd2, &xb);
	gt_bo_free(G.fd, &x);
	gt_bo_free(G.fd, &src);
	gt_bo_free(G.fd, &big_d);
	gt_bo_free(G.fd, &big_s);
	gt_bo_free(G.fd, &cmd1);
	gt_bo_free(G.fd, &cmd0);
	close(fd2);
}
END_TEST

/* ---- fences of other users ----------------------------------------------------------- */

/*
 * A fence the exporter put into a udmabuf's reservation: a write fence
 * holds back a job that reads or writes the buffer; a read fence holds
 * back a job that writes it, and not one that only reads it.
 */
START_TEST(dmabuf_exporter_fence)
{
	gt_begin("dmabuf_exporter_fence");
	uint32_t ctx = new_ctx(G.fd), so;
	struct gt_bo cmd, src, dst, imp;
	struct blocker blk;
	struct udma u;
	int rc;

	blocker_init(&blk);
	udma_new(&u, UDMA_SIZE);
	gt_fill(u.map, UDMA_SIZE, 61);
	import_bo(G.fd, u.fd, &imp);
	npu_bo(G.fd, GT_COPY_PROG_SIZE, 0, &cmd);
	npu_bo(G.fd, UDMA_SIZE, 62, &src);
	npu_bo(G.fd, UDMA_SIZE, 0, &dst);
	ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &so), 0);

	for (uint32_t pass = 0; pass < 4; pass++) {
		bool write_fence = !(pass & 2), job_writes = pass & 1;
		bool held = write_fence || job_writes;
		struct dma_buf_import_sync_file im = {
			.flags = write_fence ? DMA_BUF_SYNC_WRITE : DMA_BUF_SYNC_READ,
			.fd = blocker_fence(&blk),
		};

		ck_assert_msg(ioctl(u.fd, DMA_BUF_IOCTL_IMPORT_SYNC_FILE, &im) == 0,
			      "DMA_BUF_IOCTL_IMPORT_SYNC_FILE: %s", strerror(errno));
		close(im.fd);
		memset(dst.map, 0, UDMA_SIZE);
		rc = job_writes ?
		     submit_copy(G.fd, ctx, &cmd, &src, &imp, UDMA_SIZE, so, NULL, 0) :
		     submit_copy(G.fd, ctx, &cmd, &imp, &dst, UDMA_SIZE, so, NULL, 0);
		ck_assert_msg(rc == 0, "pass %u: SUBMIT: %s", pass, strerror(-rc));
		if (held && blk.manual) {
			gt_msleep(300);
			ck_assert_msg(!job_done(G.fd, so),
				      "pass %u (%s fence, job %s): the job ran before the fence signalled",
				      pass, write_fence ? "write" : "read",
				      job_writes ? "writes" : "reads");
			if (job_writes)
				expect_pattern(u.map, UDMA_SIZE, 61, "udmabuf while held back");
			else
				ck_assert(gt_all_zero(dst.map, UDMA_SIZE));
			blocker_release(&blk);
		}
		rc = gt_syncobj_wait(G.fd, &so, 1, 2 * GT_WAIT_NS);
		ck_assert_msg(rc == 0, "pass %u: job: %s", pass, strerror(-rc));
		if (held)
			ck_assert_msg(blocker_done(&blk),
				      "pass %u (%s fence, job %s): the job finished before the blocker",
				      pass, write_fence ? "write" : "read",
				      job_writes ? "writes" : "reads");
		else
			blocker_release(&blk);	/* a reader did not wait for it */
		if (job_writes) {
			expect_pattern(u.map, UDMA_SIZE, 62, "copy into the udmabuf");
			gt_fill(u.map, UDMA_SIZE, 61);
		} else {
			expect_pattern(dst.map, UDMA_SIZE, 61, "copy out of the udmabuf");
		}
	}
	gt_syncobj_destroy(G.fd, so);
	gt_bo_free(G.fd, &imp);
	gt_bo_free(G.fd, &dst);
	gt_bo_free(G.fd, &src);
	gt_bo_free(G.fd, &cmd);
	udma_free(&u);
	blocker_fini(&blk);
}
END_TEST

/*
 * A job's own fence in the reservation of what it uses: a write fence on
 * its destination, a read fence on its source.  The job waits for the
 * blocker (an in_sync) while the reservations are read.
 */
START_TEST(dmabuf_job_fence_usage)
{
	gt_begin("dmabuf_job_fence_usage");
	uint32_t ctx = new_ctx(G.fd), so, gate;
	struct gt_bo cmd, is, id;
	struct udma us, ud;
	struct drm_npu_sync in = { 0 };
	struct blocker blk;
	int rc, st[3];
	bool npu[3];

	blocker_init(&blk);
	udma_new(&us, UDMA_SIZE);
	udma_new(&ud, UDMA_SIZE);
	gt_fill(us.map, UDMA_SIZE, 71);
	import_bo(G.fd, us.fd, &is);
	import_bo(G.fd, ud.fd, &id);
	npu_bo(G.fd, GT_COPY_PROG_SIZE, 0, &cmd);
	ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &so), 0);
	ck_assert_int_eq(gt_syncobj_from_sync_file(G.fd, blocker_fence(&blk), &gate), 0);
	in.handle = gate;
	rc = submit_copy(G.fd, ctx, &cmd, &is, &id, UDMA_SIZE, so, &in, 1);
	ck_assert_msg(rc == 0, "SUBMIT: %s", strerror(-rc));

	/* Destination: readers wait for the job (a write fence). */
	resv_fences(ud.fd, DMA_BUF_SYNC_READ, &st[0], &npu[0]);
	/* Source: readers do not wait, writers do (a read fence). */
	resv_fences(us.fd, DMA_BUF_SYNC_READ, &st[1], &npu[1]);
	resv_fences(us.fd, DMA_BUF_SYNC_WRITE, &st[2], &npu[2]);
	if (!job_done(G.fd, so)) {
		/* Pending after the three reads: pending during them. */
		ck_assert_msg(st[0] == 0 && npu[0],
			      "destination, readers' view: status %d, npu fence %d", st[0], npu[0]);
		ck_assert_msg(st[1] == 1 && !npu[1],
			      "source, readers' view: status %d, npu fence %d", st[1], npu[1]);
		ck_assert_msg(st[2] == 0 && npu[2],
			      "source, writers' view: status %d, npu fence %d", st[2], npu[2]);
	} else {
		ck_assert_msg(!blk.manual, "the job ran before its in_sync (%s) signalled", blk.kind);
		fprintf(stderr, "SKIP %s: the blocking copy finished before the checks\n",
			__func__);
	}

	blocker_release(&blk);
	ck_assert_int_eq(gt_syncobj_wait(G.fd, &so, 1, 2 * GT_WAIT_NS), 0);
	expect_pattern(ud.map, UDMA_SIZE, 71, "gated copy");
	resv_fences(ud.fd, DMA_BUF_SYNC_WRITE, &st[0], &npu[0]);
	ck_assert_msg(st[0] == 1, "destination after the job: status %d", st[0]);

	gt_syncobj_destroy(G.fd, gate);
	gt_syncobj_destroy(G.fd, so);
	gt_bo_free(G.fd, &cmd);
	gt_bo_free(G.fd, &id);
	gt_bo_free(G.fd, &is);
	udma_free(&ud);
	udma_free(&us);
	blocker_fini(&blk);
}
END_TEST

/*
 * Closing the handle of an imported BO waits for the npu's jobs on it, not
 * for fences of other users of the dma-buf (sw_sync only: the stock
 * kernel has no fence that is not the npu's to leave pending).
 */
START_TEST(dmabuf_close_foreign_fence)
{
	gt_begin("dmabuf_close_foreign_fence");
	struct blocker blk;
	struct gt_bo imp;
	struct udma u;
	int64_t t0, ms;

	blocker_init(&blk);
	if (!blk.manual) {
		blocker_fini(&blk);
		GT_SKIP("neither sw_sync nor vgem: no fence that is not the npu's");
	}
	udma_new(&u, UDMA_SIZE);
	import_bo(G.fd, u.fd, &imp);
	{
		struct dma_buf_import_sync_file im = {
			.flags = DMA_BUF_SYNC_WRITE,
			.fd = blocker_fence(&blk),
		};

		ck_assert_msg(ioctl(u.fd, DMA_BUF_IOCTL_IMPORT_SYNC_FILE, &im) == 0,
			      "DMA_BUF_IOCTL_IMPORT_SYNC_FILE: %s", strerror(errno));
		close(im.fd);
	}
	t0 = gt_now_ns();
	ck_assert_int_eq(gt_gem_close(G.fd, imp.handle), 0);
	ms = (gt_now_ns() - t0) / (int64_t)GT_NS_PER_MS;
	ck_assert_msg(ms < 2000, "GEM_CLOSE took %" PRId64 " ms with a foreign fence pending", ms);
	blocker_release(&blk);
	udma_free(&u);
	blocker_fini(&blk);
}
END_TEST

/* ---- bad input ------------------------------------------------------------------------ */

START_TEST(dmabuf_bad_fd)
{
	gt_begin("dmabuf_bad_fd");
	struct gt_baseline base;
	uint32_t h = 0, so;
	int memfd, closed, sync_fd, rc, out;

	gt_take_baseline(&base);
	rc = prime_import(G.fd, -1, &h);
	ck_assert_msg(rc == -EBADF, "fd -1: %s", strerror(-rc));
	closed = memfd_create("npu-gt-closed", MFD_CLOEXEC);
	ck_assert_int_ge(closed, 0);
	close(closed);
	rc = prime_import(G.fd, closed, &h);
	ck_assert_msg(rc == -EBADF, "closed fd: %s", strerror(-rc));
	/* Files that are not dma-bufs. */
	memfd = memfd_create("npu-gt-notdmabuf", MFD_CLOEXEC);
	ck_assert_int_ge(memfd, 0);
	ck_assert_int_eq(ftruncate(memfd, 65536), 0);
	rc = prime_import(G.fd, memfd, &h);
	ck_assert_msg(rc == -EINVAL, "memfd: %s", strerror(-rc));
	close(memfd);
	rc = prime_import(G.fd, G.fd, &h);
	ck_assert_msg(rc == -EINVAL, "the npu file itself: %s", strerror(-rc));
	ck_assert_int_eq(gt_syncobj_create(G.fd, DRM_SYNCOBJ_CREATE_SIGNALED, &so), 0);
	{
		struct drm_syncobj_handle sh = {
			.handle = so,
			.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
			.fd = -1,
		};

		ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &sh), 0);
		sync_fd = sh.fd;
	}
	rc = prime_import(G.fd, sync_fd, &h);
	ck_assert_msg(rc == -EINVAL, "a sync_file: %s", strerror(-rc));
	close(sync_fd);
	gt_syncobj_destroy(G.fd, so);
	/* Export: unknown handle, unknown flags. */
	rc = gt_prime_export(G.fd, 0x7fffffff, DRM_CLOEXEC, &out);
	ck_assert_msg(rc == -ENOENT, "export of an unknown handle: %s", strerror(-rc));
	{
		struct gt_bo bo;

		ck_assert_int_eq(gt_bo_create(G.fd, 4096, 0, &bo), 0);
		rc = gt_prime_export(G.fd, bo.handle, 0x1234, &out);
		ck_assert_msg(rc == -EINVAL, "export with flags 0x1234: %s", strerror(-rc));
		gt_bo_free(G.fd, &bo);
	}
	/* Nothing half-made stays behind. */
	gt_expect_baseline(&base, "failed imports");
}
END_TEST

/*
 * A job that never reaches the device ends in error all the same, and is
 * counted so: held back (by a blocker of its own) until a job before it
 * got its context banned, it ends cancelled, and CTX_QUERY's jobs_failed
 * counts both.  libnpu takes a jobs_failed of 0 to mean that every job
 * done so far succeeded, and skips reading the fence's status then.  (A
 * dependency on the faulting job itself would not do: the scheduler only
 * waits for a job of its own queue to be scheduled, and the device runs
 * the second job after the first faulted.)
 */
START_TEST(dmabuf_cancelled_job_counts)
{
	gt_begin("dmabuf_cancelled_job_counts");
	uint32_t ctx, gate[2], so[2];
	struct gt_bo cmd[2], src, dst, bad;
	struct drm_npu_sync in = { 0 };
	struct drm_npu_ctx_query q;
	struct blocker blk[2];
	int rc, st;

	blocker_init(&blk[0]);
	if (!blk[0].manual) {
		blocker_fini(&blk[0]);
		GT_SKIP("needs a fence the test signals (sw_sync or vgem)");
	}
	blocker_init(&blk[1]);
	ctx = new_ctx(G.fd);
	npu_bo(G.fd, GT_COPY_PROG_SIZE, 0, &cmd[0]);
	npu_bo(G.fd, GT_COPY_PROG_SIZE, 0, &cmd[1]);
	npu_bo(G.fd, 4096, 77, &src);
	npu_bo(G.fd, 4096, 0, &dst);
	/* Listed as the source, read at an address no BO is at: a fault. */
	bad = src;
	bad.dev_addr = gt_unmapped_addr(&G.info);
	for (unsigned k = 0; k < 2; k++) {
		ck_assert_int_eq(gt_syncobj_from_sync_file(G.fd, blocker_fence(&blk[k]),
							   &gate[k]), 0);
		ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &so[k]), 0);
	}
	in.handle = gate[0];
	rc = submit_copy(G.fd, ctx, &cmd[0], &bad, &dst, 4096, so[0], &in, 1);
	ck_assert_msg(rc == 0, "SUBMIT (the faulting job): %s", strerror(-rc));
	in.handle = gate[1];
	rc = submit_copy(G.fd, ctx, &cmd[1], &src, &dst, 4096, so[1], &in, 1);
	ck_assert_msg(rc == 0, "SUBMIT (the job behind it): %s", strerror(-rc));

	blocker_release(&blk[0]);
	ck_assert_int_eq(gt_syncobj_wait(G.fd, &so[0], 1, 2 * GT_WAIT_NS), 0);
	st = gt_fence_status(G.fd, so[0]);
	ck_assert_msg(st == GT_NO_STATUS || st == -EFAULT, "faulting job: status %d", st);
	ck_assert_int_eq(gt_ctx_query(G.fd, ctx, &q), 0);
	ck_assert_uint_eq(q.state, DRM_NPU_CTX_BANNED);
	ck_assert_uint_eq(q.jobs_failed, 1);

	blocker_release(&blk[1]);
	ck_assert_int_eq(gt_syncobj_wait(G.fd, &so[1], 1, 2 * GT_WAIT_NS), 0);
	st = gt_fence_status(G.fd, so[1]);
	ck_assert_msg(st == GT_NO_STATUS || st == -ECANCELED,
		      "job behind the ban: status %d, expected -ECANCELED", st);
	ck_assert_int_eq(gt_ctx_query(G.fd, ctx, &q), 0);
	ck_assert_uint_eq(q.jobs_completed, 2);
	ck_assert_uint_eq(q.jobs_failed, 2);
	ck_assert_msg(gt_all_zero(dst.map, 4096), "a job wrote its destination");

	for (unsigned k = 0; k < 2; k++) {
		gt_syncobj_destroy(G.fd, so[k]);
		gt_syncobj_destroy(G.fd, gate[k]);
		gt_bo_free(G.fd, &cmd[k]);
		blocker_fini(&blk[k]);
	}
	gt_bo_free(G.fd, &dst);
	gt_bo_free(G.fd, &src);
}
END_TEST

Suite *gt_suite_dmabuf(void)
{
	Suite *s = suite_create("dmabuf");
	TCase *imp = tcase_create("import");
	TCase *share = tcase_create("share");
	TCase *fence = tcase_create("fence");
	TCase *bad = tcase_create("bad");

	tcase_add_test(imp, dmabuf_udmabuf_dst);
	tcase_add_test(imp, dmabuf_udmabuf_src);
	tcase_add_test(imp, dmabuf_udmabuf_cmd);
	tcase_add_test(imp, dmabuf_vgem_import);
	tcase_add_test(imp, dmabuf_mmap_forward);
	tcase_add_test(imp, dmabuf_import_accounting);
	gt_add_tcase(s, imp, 30);
	tcase_add_test(share, dmabuf_export_import);
	tcase_add_test(share, dmabuf_implicit_cross_file);
	gt_add_tcase(s, share, 60);
	tcase_add_test(fence, dmabuf_exporter_fence);
	tcase_add_test(fence, dmabuf_job_fence_usage);
	tcase_add_test(fence, dmabuf_close_foreign_fence);
	tcase_add_test(fence, dmabuf_cancelled_job_counts);
	gt_add_tcase(s, fence, 30);
	tcase_add_test(bad, dmabuf_bad_fd);
	gt_add_tcase(s, bad, 30);
	return s;
}
