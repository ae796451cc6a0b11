/* SPDX-License-Identifier: MIT */
/*
 * DRM_IOCTL_NPU_SUBMIT: jobs that run, dependencies (binary and timeline
 * syncobjs), and every argument check.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npu_gt.h"

static uint32_t new_ctx(int fd)
{
	struct drm_npu_ctx_create cc;
	int rc = gt_ctx_create_retry(fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 2000);

	ck_assert_msg(rc == 0, "CTX_CREATE(1): %s", strerror(-rc));
	return cc.ctx_id;
}

/* ---- jobs that run ----------------------------------------------------------------- */

START_TEST(submit_copy)
{
	gt_begin("submit_copy");
	uint32_t ctx = new_ctx(G.fd), so;
	struct drm_npu_bo_ref refs[2];
	struct drm_npu_submit s;
	struct gt_copy c;
	uint64_t seq1;

	ck_assert_msg(gt_copy_init(G.fd, &c, 65536, 1) == 0, "%s", gt_msg);
	ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &so), 0);
	gt_copy_submit_args(&c, ctx, refs, &s);
	s.out_sync = so;
	ck_assert_int_eq(gt_submit(G.fd, &s), 0);
	seq1 = s.seqno;
	ck_assert_int_eq(gt_syncobj_wait(G.fd, &so, 1, GT_WAIT_NS), 0);
	ck_assert_msg(gt_copy_ok(&c), "destination differs from the source");
	{
		int st = gt_fence_status(G.fd, so);

		ck_assert_msg(st == GT_NO_STATUS || st == 1, "fence status %d", st);
	}
	/* A second job on the context gets a later seqno. */
	memset(c.dst.map, 0, c.bytes);
	gt_copy_submit_args(&c, ctx, refs, &s);
	s.out_sync = so;
	ck_assert_int_eq(gt_submit(G.fd, &s), 0);
	ck_assert_uint_gt(s.seqno, seq1);
	ck_assert_int_eq(gt_syncobj_wait(G.fd, &so, 1, GT_WAIT_NS), 0);
	ck_assert(gt_copy_ok(&c));
	gt_copy_fini(&c);
	gt_syncobj_destroy(G.fd, so);
}
END_TEST

START_TEST(submit_sizes)
{
	gt_begin("submit_sizes");
	static const uint64_t sizes[] = {
		1, 63, 4095, 4096, 4097, 65537, 1u << 20, (3u << 20) + 5,
		1u << 24, (1u << 24) + (1u << 16),	/* one level max, two levels */
	};
	uint32_t ctx = new_ctx(G.fd);

	for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct gt_copy c;
		int rc;

		ck_assert_msg(gt_copy_init(G.fd, &c, sizes[k], k) == 0, "%s", gt_msg);
		/* Bytes past the copy stay zero. */
		rc = gt_run_copy(&c, ctx, 0);
		ck_assert_msg(rc == 0, "%" PRIu64 " bytes: %s", sizes[k], gt_msg);
		ck_assert_msg(gt_copy_ok(&c), "%" PRIu64 " bytes: wrong data (%s)", sizes[k],
			      gt_ctx_str(G.fd, ctx));
		ck_assert_msg(gt_all_zero((uint8_t *)c.dst.map + c.bytes, c.dst.size - c.bytes),
			      "%" PRIu64 " bytes: written past the copy", sizes[k]);
		gt_copy_fini(&c);
	}
}
END_TEST

START_TEST(submit_cmd_offset_ro)
{
	gt_begin("submit_cmd_offset_ro");
	uint32_t ctx = new_ctx(G.fd);
	struct gt_bo cmd;
	struct gt_copy c;
	struct drm_npu_bo_ref refs[2];
	struct drm_npu_submit s;
	uint32_t so;

	/* Program at offset 4160 of a DEVICE_RO BO, not listed in bos. */
	ck_assert_msg(gt_copy_init(G.fd, &c, 8192, 5) == 0, "%s", gt_msg);
	ck_assert_int_eq(gt_bo_create(G.fd, 3 * 4096, DRM_NPU_BO_DEVICE_RO, &cmd), 0);
	ck_assert_int_eq(gt_bo_mmap(G.fd, &cmd), 0);
	gt_build_copy((uint8_t *)cmd.map + 4160, c.src.dev_addr, c.dst.dev_addr, c.bytes);
	ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &so), 0);
	gt_copy_submit_args(&c, ctx, refs, &s);
	s.cmd_handle = cmd.handle;
	s.cmd_offset = 4160;
	s.out_sync = so;
	ck_assert_int_eq(gt_submit(G.fd, &s), 0);
	ck_assert_int_eq(gt_syncobj_wait(G.fd, &so, 1, GT_WAIT_NS), 0);
	ck_assert(gt_copy_ok(&c));

	/* A cmd_size larger than the program, up to the end of the BO. */
	memset(c.dst.map, 0, c.bytes);
	s.cmd_size = (uint32_t)cmd.size - 4160;
	ck_assert_int_eq(gt_submit(G.fd, &s), 0);
	ck_assert_int_eq(gt_syncobj_wait(G.fd, &so, 1, GT_WAIT_NS), 0);
	ck_assert(gt_copy_ok(&c));
	gt_bo_free(G.fd, &cmd);
	gt_copy_fini(&c);
}
END_TEST

START_TEST(submit_many_in_order)
{
	gt_begin("submit_many_in_order");
	enum { N = 100 };
	uint32_t ctx = new_ctx(G.fd);
	struct gt_batch b;
	struct drm_npu_ctx_query q;

	ck_assert_msg(gt_batch_init(G.fd, &b, N, 65536, 21) == 0, "%s", gt_msg);
	for (unsigned k = 0; k < N; k++)
		ck_assert_msg(gt_batch_submit(&b, k, ctx) == 0, "%s", gt_msg);
	ck_assert_msg(gt_batch_wait(&b, 30ll * 1000000000ll) == 0, "%s", gt_msg);
	for (unsigned k = 0; k < N; k++)
		ck_assert_msg(gt_batch_verify(&b, k) == 0, "%s", gt_msg);
	ck_assert_int_eq(gt_ctx_query(G.fd, ctx, &q), 0);
	ck_assert_uint_eq(q.jobs_submitted, N);
	ck_assert_uint_eq(q.jobs_completed, N);
	ck_assert_uint_eq(q.jobs_failed, 0);
	gt_batch_fini(&b);
}
END_TEST

/* Job 1 without out_sync; job 2 on the same context after it, with one. */
START_TEST(submit_no_out_sync)
{
	gt_begin("submit_no_out_sync");
	uint32_t ctx = new_ctx(G.fd), so;
	struct gt_copy c1, c2;

	ck_assert_msg(gt_copy_init(G.fd, &c1, 1 << 20, 8) == 0, "%s", gt_msg);
	ck_assert_msg(gt_copy_init(G.fd, &c2, 4096, 9) == 0, "%s", gt_msg);
	ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &so), 0);
	ck_assert_int_eq(gt_submit_copy(&c1, ctx, 0, 0, NULL, 0, 0), 0);
	ck_assert_int_eq(gt_submit_copy(&c2, ctx, so, 0, NULL, 0, 0), 0);
	ck_assert_int_eq(gt_syncobj_wait(G.fd, &so, 1, GT_WAIT_NS), 0);
	ck_assert(gt_copy_ok(&c2));
	ck_assert_msg(gt_copy_ok(&c1), "jobs of one context did not run in order");
	gt_copy_fini(&c1);
	gt_copy_fini(&c2);
}
END_TEST

/*
 * A -> B on context 1, then B -> C on context 2 waiting for the first job.
 * Large copies, so a missing dependency shows as a wrong C.
 */
static void chain(bool timeline)
{
	const uint64_t bytes = 4u << 20;
	uint32_t ctx1 = new_ctx(G.fd), ctx2, so, so2 = 0;
	struct gt_copy c1, c2;
	struct drm_npu_sync in;
	uint64_t point;

	ctx2 = G.info.healthy_clusters >= 2 ? new_ctx(G.fd) : ctx1;
	ck_assert_msg(gt_copy_init(G.fd, &c1, bytes, 31) == 0, "%s", gt_msg);
	ck_assert_msg(gt_copy_init(G.fd, &c2, bytes, 0) == 0, "%s", gt_msg);
	/* c2 copies c1's destination into its own destination. */
	gt_build_copy(c2.cmd.map, c1.dst.dev_addr, c2.dst.dev_addr, bytes);
	c2.seed = c1.seed;
	ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &so), 0);
	if (!timeline)
		ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &so2), 0);

	ck_assert_int_eq(gt_submit_copy(&c1, ctx1, so, timeline ? 1 : 0, NULL, 0, 0), 0);
	in = (struct drm_npu_sync){ .handle = so, .point = timeline ? 1 : 0 };
	{
		struct drm_npu_bo_ref refs[2] = {
			{ c1.dst.handle, DRM_NPU_BO_REF_READ },
			{ c2.dst.handle, DRM_NPU_BO_REF_WRITE },
		};
		struct drm_npu_submit s = {
			.ctx_id = ctx2,
			.cmd_handle = c2.cmd.handle,
			.cmd_size = c2.prog_size,
			.bos = (uintptr_t)refs,
			.bo_count = 2,
			.in_syncs = (uintptr_t)&in,
			.in_sync_count = 1,
			.out_sync = timeline ? so : so2,
			.out_point = timeline ? 2 : 0,
		};

		ck_assert_int_eq(gt_submit(G.fd, &s), 0);
	}
	if (timeline) {
		ck_assert_int_eq(gt_syncobj_timeline_wait(G.fd, so, 2, GT_WAIT_NS, 0), 0);
		ck_assert_int_eq(gt_syncobj_query(G.fd, so, &point), 0);
		ck_assert_uint_eq(point, 2);
		/* Point 1 is signalled too. */
		ck_assert_int_eq(gt_syncobj_timeline_wait(G.fd, so, 1, 0, 0), 0);
	} else {
		ck_assert_int_eq(gt_syncobj_wait(G.fd, &so2, 1, GT_WAIT_NS), 0);
	}
	ck_assert_msg(gt_copy_ok(&c1), "first job: wrong data");
	ck_assert_msg(gt_copy_ok(&c2), "second job ran before the first finished");
	gt_copy_fini(&c1);
	gt_copy_fini(&c2);
}

START_TEST(submit_chain_binary)
{
	gt_begin("submit_chain_binary");
	chain(false);
}
END_TEST

START_TEST(submit_chain_timeline)
{
	gt_begin("submit_chain_timeline");
	chain(true);
}
END_TEST

START_TEST(submit_timeline_point_order)
{
	gt_begin("submit_timeline_point_order");
	uint32_t ctx = new_ctx(G.fd), so;
	struct gt_copy c;

	ck_assert_msg(gt_copy_init(G.fd, &c, 4096, 2) == 0, "%s", gt_msg);
	ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &so), 0);
	ck_assert_int_eq(gt_submit_copy(&c, ctx, so, 5, NULL, 0, 0), 0);
	ck_assert_int_eq(gt_syncobj_timeline_wait(G.fd, so, 5, GT_WAIT_NS, 0), 0);
	/* Not later than the last point. */
	ck_assert_int_eq(gt_submit_copy(&c, ctx, so, 5, NULL, 0, 0), -EINVAL);
	ck_assert_int_eq(gt_submit_copy(&c, ctx, so, 3, NULL, 0, 0), -EINVAL);
	ck_assert_int_eq(gt_submit_copy(&c, ctx, so, 6, NULL, 0, 0), 0);
	ck_assert_int_eq(gt_syncobj_timeline_wait(G.fd, so, 6, GT_WAIT_NS, 0), 0);
	gt_copy_fini(&c);
}
END_TEST

START_TEST(submit_in_sync_states)
{
	gt_begin("submit_in_sync_states");
	uint32_t ctx = new_ctx(G.fd), empty, sig, tl, out;
	struct drm_npu_sync in;
	struct gt_copy c;

	ck_assert_msg(gt_copy_init(G.fd, &c, 4096, 4) == 0, "%s", gt_msg);
	ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &empty), 0);
	ck_assert_int_eq(gt_syncobj_create(G.fd, DRM_SYNCOBJ_CREATE_SIGNALED, &sig), 0);
	ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &tl), 0);
	ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &out), 0);

	/* No fence: wait-for-submit is not supported. */
	in = (struct drm_npu_sync){ .handle = empty };
	ck_assert_int_eq(gt_submit_copy(&c, ctx, out, 0, &in, 1, 0), -EINVAL);
	/* A timeline point nobody submitted. */
	ck_assert_int_eq(gt_submit_copy(&c, ctx, tl, 1, NULL, 0, 0), 0);
	ck_assert_int_eq(gt_syncobj_timeline_wait(G.fd, tl, 1, GT_WAIT_NS, 0), 0);
	in = (struct drm_npu_sync){ .handle = tl, .point = 7 };
	ck_assert_int_eq(gt_submit_copy(&c, ctx, out, 0, &in, 1, 0), -EINVAL);
	/* An already signalled fence and a signalled point run at once. */
	in = (struct drm_npu_sync){ .handle = sig };
	ck_assert_int_eq(gt_submit_copy(&c, ctx, out, 0, &in, 1, 0), 0);
	ck_assert_int_eq(gt_syncobj_wait(G.fd, &out, 1, GT_WAIT_NS), 0);
	in = (struct drm_npu_sync){ .handle = tl, .point = 1 };
	memset(c.dst.map, 0, c.bytes);
	ck_assert_int_eq(gt_submit_copy(&c, ctx, out, 0, &in, 1, 0), 0);
	ck_assert_int_eq(gt_syncobj_wait(G.fd, &out, 1, GT_WAIT_NS), 0);
	ck_assert(gt_copy_ok(&c));
	/* The same syncobj many times, up to the bound. */
	{
		struct drm_npu_sync many[DRM_NPU_MAX_SUBMIT_SYNCS];

		for (unsigned k = 0; k < DRM_NPU_MAX_SUBMIT_SYNCS; k++)
			many[k] = (struct drm_npu_sync){ .handle = sig };
		ck_assert_int_eq(gt_submit_copy(&c, ctx, out, 0, many,
						DRM_NPU_MAX_SUBMIT_SYNCS, 0), 0);
		ck_assert_int_eq(gt_syncobj_wait(G.fd, &out, 1, GT_WAIT_NS), 0);
	}
	gt_copy_fini(&c);
}
END_TEST

/* A program the device refuses: EINVAL at submit, or a failed job that
 * does not ban the context (driver-guide.md: "Keep"). */
START_TEST(submit_bad_program)
{
	gt_begin("submit_bad_program");
	uint32_t ctx = new_ctx(G.fd), so;
	struct gt_copy c;
	struct drm_npu_ctx_query q;
	int rc, st;

	ck_assert_msg(gt_copy_init(G.fd, &c, 4096, 6) == 0, "%s", gt_msg);
	((struct npu_hw_prog *)c.cmd.map)->magic = 0x12345678;
	ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &so), 0);
	rc = gt_submit_copy(&c, ctx, so, 0, NULL, 0, 0);
	if (rc) {
		ck_assert_int_eq(rc, -EINVAL);
	} else {
		ck_assert_int_eq(gt_syncobj_wait(G.fd, &so, 1, GT_WAIT_NS), 0);
		st = gt_fence_status(G.fd, so);
		ck_assert_msg(st == GT_NO_STATUS || st == -EINVAL,
			      "bad program: fence status %d, expected -EINVAL", st);
		ck_assert_int_eq(gt_ctx_query(G.fd, ctx, &q), 0);
		ck_assert_uint_eq(q.state, DRM_NPU_CTX_OK);
		ck_assert_uint_eq(q.jobs_failed, 1);
		ck_assert_uint_eq(q.jobs_completed, 1);
		ck_assert_uint_eq(q.last_error, 0);
		ck_assert_msg(gt_all_zero(c.dst.map, c.bytes), "a refused program wrote");
	}
	ck_assert_msg(gt_good_job(G.fd, ctx, 4096) == 0, "after a bad program: %s", gt_msg);
	gt_copy_fini(&c);
}
END_TEST

/* ---- argument checks ------------------------------------------------------------------ */

/*
 * Each check starts from a valid submit, breaks one thing and expects an
 * exact errno.  At the end the context must have accepted no job at all.
 */
struct fixture {
	uint32_t ctx;
	struct gt_copy c;
	struct drm_npu_bo_ref refs[2];
	struct drm_npu_sync in;
	uint32_t sync_sig, out;
};

static void fx_init(struct fixture *f)
{
	f->ctx = new_ctx(G.fd);
	ck_assert_msg(gt_copy_init(G.fd, &f->c, 4096, 12) == 0, "%s", gt_msg);
	ck_assert_int_eq(gt_syncobj_create(G.fd, DRM_SYNCOBJ_CREATE_SIGNALED, &f->sync_sig), 0);
	ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &f->out), 0);
}

static struct drm_npu_submit fx_valid(struct fixture *f)
{
	struct drm_npu_submit s;

	gt_copy_submit_args(&f->c, f->ctx, f->refs, &s);
	f->in = (struct drm_npu_sync){ .handle = f->sync_sig };
	s.in_syncs = (uintptr_t)&f->in;
	s.in_sync_count = 1;
	s.out_sync = f->out;
	return s;
}

#define EXPECT(f, errno_, what, stmt)						\
	do {									\
		struct drm_npu_submit s = fx_valid(f);				\
		int rc_;							\
		stmt;								\
		rc_ = gt_submit(G.fd, &s);					\
		ck_assert_msg(rc_ == (errno_), "%s: got %d (%s), expected %d (%s)", \
			      what, rc_, strerror(-rc_), errno_, strerror(-(errno_))); \
	} while (0)

static void fx_done(struct fixture *f)
{
	struct drm_npu_ctx_query q;

	ck_assert_int_eq(gt_ctx_query(G.fd, f->ctx, &q), 0);
	ck_assert_uint_eq(q.state, DRM_NPU_CTX_OK);
	ck_assert_msg(q.jobs_submitted == 0, "%" PRIu64 " rejected submits were counted",
		      (uint64_t)q.jobs_submitted);
	/* The untouched valid submit works. */
	EXPECT(f, 0, "valid submit", (void)0);
	ck_assert_int_eq(gt_syncobj_wait(G.fd, &f->out, 1, GT_WAIT_NS), 0);
	ck_assert(gt_copy_ok(&f->c));
	gt_copy_fini(&f->c);
}

START_TEST(submit_bad_ids)
{
	gt_begin("submit_bad_ids");
	struct fixture f;

	fx_init(&f);
	EXPECT(&f, -ENOENT, "unknown ctx", s.ctx_id = f.ctx + 1000);
	EXPECT(&f, -ENOENT, "ctx 0xffffffff", s.ctx_id = ~0u);
	EXPECT(&f, -ENOENT, "cmd_handle 0", s.cmd_handle = 0);
	EXPECT(&f, -ENOENT, "unknown cmd_handle", s.cmd_handle = 0xdead);
	EXPECT(&f, -ENOENT, "unknown bo handle", f.refs[1].handle = 0xdead);
	EXPECT(&f, -ENOENT, "bo handle 0", f.refs[0].handle = 0);
	EXPECT(&f, -ENOENT, "unknown in_sync", f.in.handle = 0xdead);
	EXPECT(&f, -ENOENT, "in_sync 0", f.in.handle = 0);
	EXPECT(&f, -ENOENT, "unknown out_sync", s.out_sync = 0xdead);
	fx_done(&f);
}
END_TEST

START_TEST(submit_bad_cmd)
{
	gt_begin("submit_bad_cmd");
	struct fixture f;
	struct gt_bo big;

	fx_init(&f);
	EXPECT(&f, -EINVAL, "cmd_offset 32", s.cmd_offset = 32);
	EXPECT(&f, -EINVAL, "cmd_offset 1", s.cmd_offset = 1);
	EXPECT(&f, -EINVAL, "cmd_size 63", s.cmd_size = 63);
	EXPECT(&f, -EINVAL, "cmd_size 0", s.cmd_size = 0);
	EXPECT(&f, -EINVAL, "end past the BO",
	       (s.cmd_offset = (uint32_t)f.c.cmd.size - 64, s.cmd_size = 128));
	EXPECT(&f, -EINVAL, "offset past the BO",
	       (s.cmd_offset = (uint32_t)f.c.cmd.size, s.cmd_size = 64));
	EXPECT(&f, -EINVAL, "cmd_size past the BO", s.cmd_size = (uint32_t)f.c.cmd.size + 64);
	EXPECT(&f, -EINVAL, "u32 wrap of offset + size",
	       (s.cmd_offset = 0xffffffc0u, s.cmd_size = 128));
	EXPECT(&f, -EINVAL, "cmd_size 0xffffffff", s.cmd_size = 0xffffffffu);
	/* Over DRM_NPU_MAX_PROG_SIZE, inside a large enough BO. */
	ck_assert_int_eq(gt_bo_create(G.fd, DRM_NPU_MAX_PROG_SIZE + 8192, 0, &big), 0);
	EXPECT(&f, -EINVAL, "cmd_size > DRM_NPU_MAX_PROG_SIZE",
	       (s.cmd_handle = big.handle, s.cmd_size = DRM_NPU_MAX_PROG_SIZE + 64));
	gt_bo_free(G.fd, &big);
	fx_done(&f);
}
END_TEST

START_TEST(submit_bad_counts_ptrs)
{
	gt_begin("submit_bad_counts_ptrs");
	struct fixture f;
	struct drm_npu_bo_ref *refs;
	struct drm_npu_sync *syncs;

	fx_init(&f);
	refs = calloc(DRM_NPU_MAX_SUBMIT_BOS + 1, sizeof(*refs));
	syncs = calloc(DRM_NPU_MAX_SUBMIT_SYNCS + 1, sizeof(*syncs));
	ck_assert(refs && syncs);
	for (unsigned k = 0; k <= DRM_NPU_MAX_SUBMIT_BOS; k++)
		refs[k] = (struct drm_npu_bo_ref){ f.c.src.handle, DRM_NPU_BO_REF_READ };
	for (unsigned k = 0; k <= DRM_NPU_MAX_SUBMIT_SYNCS; k++)
		syncs[k] = (struct drm_npu_sync){ .handle = f.sync_sig };

	EXPECT(&f, -EINVAL, "bo_count MAX+1",
	       (s.bos = (uintptr_t)refs, s.bo_count = DRM_NPU_MAX_SUBMIT_BOS + 1));
	EXPECT(&f, -EINVAL, "bo_count 0xffffffff",
	       (s.bos = (uintptr_t)refs, s.bo_count = ~0u));
	EXPECT(&f, -EINVAL, "in_sync_count MAX+1",
	       (s.in_syncs = (uintptr_t)syncs, s.in_sync_count = DRM_NPU_MAX_SUBMIT_SYNCS + 1));
	EXPECT(&f, -EINVAL, "in_sync_count 0xffffffff",
	       (s.in_syncs = (uintptr_t)syncs, s.in_sync_count = ~0u));
	EXPECT(&f, -EFAULT, "bos NULL", s.bos = 0);
	EXPECT(&f, -EFAULT, "bos (void *)8", s.bos = 8);
	EXPECT(&f, -EFAULT, "bos kernel address", s.bos = 0xffff888000000000ull);
	EXPECT(&f, -EFAULT, "in_syncs NULL", s.in_syncs = 0);
	EXPECT(&f, -EFAULT, "in_syncs (void *)8", s.in_syncs = 8);
	EXPECT(&f, -EFAULT, "in_syncs kernel address", s.in_syncs = 0xffff888000000000ull);
	free(refs);
	free(syncs);
	fx_done(&f);
}
END_TEST

START_TEST(submit_bad_flags_pads)
{
	gt_begin("submit_bad_flags_pads");
	struct fixture f;
	struct gt_bo ro;

	fx_init(&f);
	EXPECT(&f, -EINVAL, "submit flags 1", s.flags = 1);
	EXPECT(&f, -EINVAL, "submit flags bit 31", s.flags = 1u << 31);
	EXPECT(&f, -EINVAL, "submit pad", s.pad = 1);
	EXPECT(&f, -EINVAL, "timeout_ms > MAX", s.timeout_ms = DRM_NPU_MAX_TIMEOUT_MS + 1);
	EXPECT(&f, -EINVAL, "timeout_ms 0xffffffff", s.timeout_ms = ~0u);
	EXPECT(&f, -EINVAL, "in_sync flags", f.in.flags = 1);
	EXPECT(&f, -EINVAL, "bo ref flags 0", f.refs[0].flags = 0);
	EXPECT(&f, -EINVAL, "bo ref unknown flag",
	       f.refs[0].flags = DRM_NPU_BO_REF_READ | (1u << 2));
	EXPECT(&f, -EINVAL, "bo ref flag bit 31", f.refs[1].flags = 1u << 31);
	ck_assert_int_eq(gt_bo_create(G.fd, 4096, DRM_NPU_BO_DEVICE_RO, &ro), 0);
	EXPECT(&f, -EACCES, "WRITE on a DEVICE_RO BO",
	       f.refs[1] = ((struct drm_npu_bo_ref){ ro.handle, DRM_NPU_BO_REF_WRITE }));
	EXPECT(&f, -EACCES, "READ|WRITE on a DEVICE_RO BO",
	       f.refs[1] = ((struct drm_npu_bo_ref){ ro.handle,
				DRM_NPU_BO_REF_READ | DRM_NPU_BO_REF_WRITE }));
	gt_bo_free(G.fd, &ro);
	fx_done(&f);
}
END_TEST

Suite *gt_suite_submit(void)
{
	Suite *s = suite_create("submit");
	TCase *tc;

	tc = tcase_create("run");
	tcase_add_test(tc, submit_copy);
	tcase_add_test(tc, submit_sizes);
	tcase_add_test(tc, submit_cmd_offset_ro);
	tcase_add_test(tc, submit_many_in_order);
	tcase_add_test(tc, submit_no_out_sync);
	tcase_add_test(tc, submit_bad_program);
	gt_add_tcase(s, tc, 30);

	tc = tcase_create("sync");
	tcase_add_test(tc, submit_chain_binary);
	tcase_add_test(tc, submit_chain_timeline);
	tcase_add_test(tc, submit_timeline_point_order);
	tcase_add_test(tc, submit_in_sync_states);
	gt_add_tcase(s, tc, 30);

	tc = tcase_create("args");
	tcase_add_test(tc, submit_bad_ids);
	tcase_add_test(tc, submit_bad_cmd);
	tcase_add_test(tc, submit_bad_counts_ptrs);
	tcase_add_test(tc, submit_bad_flags_pads);
	gt_add_tcase(s, tc, 30);
	return s;
}
