/* SPDX-License-Identifier: MIT */
/*
 * Random-ioctl fuzz: at least 10,000 ioctls with random numbers in the
 * driver's range (DRM_COMMAND_BASE + 0..15), random direction and size
 * encodings and random contents, on valid and invalid handles: up to
 * 100,000 in at most 45 s.  The process must survive, nothing may leak once
 * the files are closed, and the device must still run a good job.
 *
 * Safety of the fuzzer itself: the only ioctls that write through a user
 * pointer are DEV_QUERY and STATS (at offset 8).  Their pointer is forced
 * into a scratch area fenced by PROT_NONE guard pages, or to an address
 * that cannot be mapped, so the kernel can never scribble over our heap.
 * BO_CREATE sizes are clamped to 1 MiB so random submits cannot pin much
 * memory; the file is reopened every 1,000 ioctls to bound what piles up.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "npu_gt.h"

#define FUZZ_MIN_IOCTLS		10000u
#define FUZZ_MAX_IOCTLS		100000u
#define FUZZ_SECONDS		45
#define FUZZ_REOPEN_EVERY	1000u
#define SCRATCH_SIZE		(64u << 10)
#define ARG_SIZE		(16u << 10)	/* _IOC_SIZE is 14 bits */
#define MAX_NR			16

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545f4914f6cdd1dull;
}

static uint8_t *scratch, *arg;

/* @size bytes between two PROT_NONE guard pages. */
static void *guarded(size_t size)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, size + 2 * pg, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ck_assert(p != MAP_FAILED);
	ck_assert_int_eq(mprotect(p + pg, size, PROT_READ | PROT_WRITE), 0);
	return p + pg;
}

struct pool {
	int fd;
	struct gt_copy c;	/* valid program src -> dst */
	struct gt_bo ro, nomap;
	uint32_t ctx[2];
	unsigned nctx;
	uint32_t sync[3];	/* signalled, empty, timeline with point 1 */
	uint32_t ids[16];	/* handles, ctx ids, syncobjs, junk */
	unsigned nids;
};

static void pool_open(struct pool *p)
{
	memset(p, 0, sizeof(*p));
	p->fd = gt_open();
	ck_assert_int_ge(p->fd, 0);
	ck_assert_msg(gt_copy_init(p->fd, &p->c, 4096, 1) == 0, "%s", gt_msg);
	ck_assert_int_eq(gt_bo_create(p->fd, 4096, DRM_NPU_BO_DEVICE_RO, &p->ro), 0);
	ck_assert_int_eq(gt_bo_create(p->fd, 4096, DRM_NPU_BO_NO_MMAP, &p->nomap), 0);
	for (unsigned k = 0; k < 2; k++) {
		struct drm_npu_ctx_create cc;

		if (gt_ctx_create_retry(p->fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 1000) == 0)
			p->ctx[p->nctx++] = cc.ctx_id;
	}
	ck_assert_uint_gt(p->nctx, 0);
	ck_assert_int_eq(gt_syncobj_create(p->fd, DRM_SYNCOBJ_CREATE_SIGNALED, &p->sync[0]), 0);
	ck_assert_int_eq(gt_syncobj_create(p->fd, 0, &p->sync[1]), 0);
	ck_assert_int_eq(gt_syncobj_create(p->fd, 0, &p->sync[2]), 0);
	ck_assert_int_eq(gt_submit_copy(&p->c, p->ctx[0], p->sync[2], 1, NULL, 0, 0), 0);

	p->ids[p->nids++] = p->c.cmd.handle;
	p->ids[p->nids++] = p->c.src.handle;
	p->ids[p->nids++] = p->c.dst.handle;
	p->ids[p->nids++] = p->ro.handle;
	p->ids[p->nids++] = p->nomap.handle;
	for (unsigned k = 0; k < p->nctx; k++)
		p->ids[p->nids++] = p->ctx[k];
	for (unsigned k = 0; k < 3; k++)
		p->ids[p->nids++] = p->sync[k];
	p->ids[p->nids++] = 0;
	p->ids[p->nids++] = 0xdead;
	p->ids[p->nids++] = 0xffffffff;
}

static void pool_close(struct pool *p)
{
	/* Unmap before close(), so the BOs die with the file. */
	gt_copy_fini(&p->c);
	close(p->fd);
	p->fd = -1;
}

static uint32_t rand_id(const struct pool *p)
{
	return rnd() % 4 ? p->ids[rnd() % p->nids] : (uint32_t)(rnd() % 64);
}

/* A random 64-bit value that is never a dangerous user pointer. */
static uint64_t rand_word(const struct pool *p)
{
	static const uint64_t edges[] = {
		0xffffffffffffffffull, 0x8000000000000000ull, 0xffffffffull,
		0x7fffffffull, 0x80000000ull, DRM_NPU_MAX_BO_SIZE,
		DRM_NPU_MAX_BO_SIZE + 1, DRM_NPU_MAX_PROG_SIZE,
		DRM_NPU_MAX_SUBMIT_BOS + 1, DRM_NPU_MAX_SUBMIT_SYNCS + 1,
		DRM_NPU_MAX_TIMEOUT_MS + 1, 64, 63, 4096,
	};

	switch (rnd() % 10) {
	case 0:
		return 0;
	case 1:
		return rnd() % 32;
	case 2:
		return rand_id(p) | ((uint64_t)(rnd() % 4) << 32);
	case 3:
		return ((uint64_t)rand_id(p) << 32) | rand_id(p);
	case 4:
		return (uintptr_t)scratch + ((rnd() % SCRATCH_SIZE) & ~7ull);
	case 5:
		return rnd() % 2 ? 1ull << (rnd() % 13) : 1ull << (32 + rnd() % 12);
	case 6:
		return edges[rnd() % (sizeof(edges) / sizeof(edges[0]))];
	case 7:
		return rnd() | (1ull << 63);
	default:
		return rnd();
	}
}

/* Refill the scratch area: BO refs and syncs first, random after. */
static void scratch_fill(const struct pool *p)
{
	struct drm_npu_bo_ref *refs = (void *)scratch;
	struct drm_npu_sync *syncs = (void *)(scratch + 64);

	refs[0] = (struct drm_npu_bo_ref){ p->c.src.handle, DRM_NPU_BO_REF_READ };
	refs[1] = (struct drm_npu_bo_ref){ p->c.dst.handle, DRM_NPU_BO_REF_WRITE };
	for (unsigned k = 2; k < 8; k++)
		refs[k] = (struct drm_npu_bo_ref){ rand_id(p), (uint32_t)(rnd() % 5) };
	syncs[0] = (struct drm_npu_sync){ .handle = p->sync[0] };
	syncs[1] = (struct drm_npu_sync){ .handle = p->sync[2], .point = 1 };
	for (unsigned k = 2; k < 8; k++)
		syncs[k] = (struct drm_npu_sync){ rand_id(p), (uint32_t)(rnd() % 8 == 0), rnd() % 4 };
	for (size_t off = 256; off < SCRATCH_SIZE; off += 8) {
		uint64_t w = rand_word(p);

		if (w >= (uintptr_t)scratch && w < (uintptr_t)scratch + SCRATCH_SIZE)
			w = rnd() % 16;	/* keep scratch free of self pointers */
		memcpy(scratch + off, &w, 8);
	}
}

/* A valid argument for @nr, to be mutated. */
static size_t template_for(const struct pool *p, unsigned nr)
{
	memset(arg, 0, 256);
	switch (nr) {
	case DRM_NPU_DEV_QUERY: {
		struct drm_npu_dev_query q = { 0, (uint32_t)(rnd() % 512), (uintptr_t)scratch + 1024 };

		memcpy(arg, &q, sizeof(q));
		return sizeof(q);
	}
	case DRM_NPU_BO_CREATE: {
		struct drm_npu_bo_create c = { rnd() % (1 << 20) + 1, (uint32_t)(rnd() % 4), 0, 0 };

		memcpy(arg, &c, sizeof(c));
		return sizeof(c);
	}
	case DRM_NPU_BO_MMAP_OFFSET: {
		struct drm_npu_bo_mmap_offset m = { rand_id(p), 0, 0 };

		memcpy(arg, &m, sizeof(m));
		return sizeof(m);
	}
	case DRM_NPU_BO_INFO: {
		struct drm_npu_bo_info i = { .handle = rand_id(p) };

		memcpy(arg, &i, sizeof(i));
		return sizeof(i);
	}
	case DRM_NPU_CTX_CREATE: {
		struct drm_npu_ctx_create c = { .clusters = 1, .priority = (uint32_t)(rnd() % 3) };

		memcpy(arg, &c, sizeof(c));
		return sizeof(c);
	}
	case DRM_NPU_CTX_DESTROY: {
		/* Rarely a real one: the pool's contexts should mostly live. */
		struct drm_npu_ctx_destroy d = { rnd() % 8 ? 0xdead : rand_id(p), 0 };

		memcpy(arg, &d, sizeof(d));
		return sizeof(d);
	}
	case DRM_NPU_SUBMIT: {
		struct drm_npu_submit s = {
			.ctx_id = p->ctx[rnd() % p->nctx],
			.cmd_handle = p->c.cmd.handle,
			.cmd_size = p->c.prog_size,
			.bos = (uintptr_t)scratch,
			.bo_count = (uint32_t)(rnd() % 3),
			.in_syncs = (uintptr_t)scratch + 64,
			.in_sync_count = (uint32_t)(rnd() % 3),
			.out_sync = rnd() % 2 ? p->sync[1] : 0,
		};

		memcpy(arg, &s, sizeof(s));
		return sizeof(s);
	}
	case DRM_NPU_STATS: {
		struct drm_npu_stats s = { (uint32_t)(rnd() % 512), 0, (uintptr_t)scratch + 2048 };

		memcpy(arg, &s, sizeof(s));
		return sizeof(s);
	}
	case DRM_NPU_CTX_QUERY: {
		struct drm_npu_ctx_query q = { .ctx_id = rand_id(p) };

		memcpy(arg, &q, sizeof(q));
		return sizeof(q);
	}
	default:
		for (size_t off = 0; off < 128; off += 8) {
			uint64_t w = rand_word(p);

			memcpy(arg + off, &w, 8);
		}
		return (size_t)(rnd() % 128);
	}
}

static bool safe_out_ptr(uint64_t v)
{
	return v < 4096 || v >= (1ull << 47) ||
	       (v >= (uintptr_t)scratch && v < (uintptr_t)scratch + SCRATCH_SIZE);
}

/* What the kernel reads at @off: bytes past @usize read as zero. */
static uint64_t seen64(size_t off, size_t usize)
{
	uint8_t b[8] = { 0 };

	for (size_t k = 0; k < 8; k++)
		if (off + k < usize)
			b[k] = arg[off + k];
	uint64_t v;

	memcpy(&v, b, 8);
	return v;
}

static void zero_seen(size_t off, size_t usize)
{
	for (size_t k = off; k < off + 8 && k < usize; k++)
		arg[k] = 0;
}

static void sanitize(unsigned nr, unsigned dir, size_t usize)
{
	if (!(dir & _IOC_WRITE))
		return;		/* the kernel reads nothing: all zero */
	if (nr == DRM_NPU_DEV_QUERY || nr == DRM_NPU_STATS) {
		uint64_t ptr = seen64(8, usize);

		if (!safe_out_ptr(ptr)) {
			if (usize >= 16) {
				uint64_t s = (uintptr_t)scratch + (ptr % SCRATCH_SIZE);

				memcpy(arg + 8, &s, 8);
			} else {
				zero_seen(8, usize);
			}
		}
	}
	if (nr == DRM_NPU_BO_CREATE) {
		uint64_t size = seen64(0, usize);

		if (size > (1u << 20) && size <= DRM_NPU_MAX_BO_SIZE) {
			if (usize >= 8) {
				size &= (1u << 20) - 1;
				memcpy(arg, &size, 8);
			} else {
				zero_seen(0, usize);
			}
		}
	}
}

static void mutate(const struct pool *p, size_t len)
{
	unsigned n = 1 + (unsigned)(rnd() % 3);

	if (len < 4)
		len = 4;
	for (unsigned k = 0; k < n; k++) {
		size_t off = (rnd() % len) & ~3ull;
		uint32_t v;

		switch (rnd() % 4) {
		case 0:
			v = (uint32_t)rand_word(p);
			break;
		case 1:
			v = rand_id(p);
			break;
		case 2:
			v = 1u << (rnd() % 32);
			break;
		default:
			v = (uint32_t)rnd();
			break;
		}
		memcpy(arg + off, &v, 4);
	}
}

START_TEST(fuzz_ioctls)
{
	gt_begin("fuzz_ioctls");
	static const unsigned dirs[] = {
		_IOC_READ | _IOC_WRITE, _IOC_WRITE, _IOC_READ, _IOC_NONE,
	};
	struct gt_baseline base;
	struct pool p;
	int64_t deadline = gt_now_ns() + FUZZ_SECONDS * 1000000000ll;
	unsigned long n = 0, ok = 0, by_errno[256] = { 0 };

	scratch = guarded(SCRATCH_SIZE);
	arg = guarded(ARG_SIZE);
	gt_take_baseline(&base);
	pool_open(&p);
	scratch_fill(&p);

	while (n < FUZZ_MAX_IOCTLS && (n < FUZZ_MIN_IOCTLS || gt_now_ns() < deadline)) {
		unsigned nr = (unsigned)(rnd() % MAX_NR), dir;
		size_t len, usize;
		unsigned long cmd;
		int rc;

		if (gt_now_ns() > deadline + 10 * 1000000000ll)
			break;	/* far too slow: stop, and fail below */
		if (n && n % FUZZ_REOPEN_EVERY == 0) {
			pool_close(&p);
			pool_open(&p);
		}
		if (n % 100 == 0)
			scratch_fill(&p);

		if (rnd() % 10 < 6) {
			/* A valid argument, mutated half the time, mostly
			 * with the right encoding. */
			len = template_for(&p, nr);
			if (rnd() % 2)
				mutate(&p, len);
			dir = rnd() % 5 ? _IOC_READ | _IOC_WRITE : dirs[rnd() % 4];
			usize = rnd() % 5 ? len : (size_t)(rnd() % 256);
		} else {
			for (size_t off = 0; off < 512; off += 8) {
				uint64_t w = rand_word(&p);

				memcpy(arg + off, &w, 8);
			}
			dir = dirs[rnd() % 4];
			usize = rnd() % 8 ? (size_t)(rnd() % 257) : (size_t)(rnd() % ARG_SIZE);
		}
		sanitize(nr, dir, usize);
		cmd = _IOC(dir, DRM_IOCTL_BASE, DRM_COMMAND_BASE + nr, usize);
		/* Handles: sometimes the pool's, sometimes another fd number. */
		rc = gt_ioctl(p.fd, cmd, arg);
		n++;
		if (rc == 0)
			ok++;
		else
			by_errno[-rc < 256 ? -rc : 255]++;
	}
	pool_close(&p);

	fprintf(stderr, "fuzz_ioctls: %lu ioctls, %lu succeeded; errors:", n, ok);
	for (unsigned e = 0; e < 256; e++)
		if (by_errno[e])
			fprintf(stderr, " %s=%lu", e == 255 ? "other" : strerror((int)e), by_errno[e]);
	fputc('\n', stderr);
	ck_assert_msg(n >= FUZZ_MIN_IOCTLS, "only %lu ioctls in the time bound", n);
	/* Error codes the uAPI can give, and nothing stranger. */
	ck_assert_msg(by_errno[255] == 0, "errno values >= 255 returned");

	gt_expect_baseline(&base, "after the fuzzer's files were closed");
	ck_assert_msg(gt_good_job_new_ctx(G.fd) == 0, "after the fuzz: %s", gt_msg);
}
END_TEST

Suite *gt_suite_fuzz(void)
{
	Suite *s = suite_create("fuzz");
	TCase *tc = tcase_create("ioctl");

	tcase_add_test(tc, fuzz_ioctls);
	gt_add_tcase(s, tc, 90);
	return s;
}
