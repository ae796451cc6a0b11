/* SPDX-License-Identifier: MIT */
/*
 * Isolation: a job can only touch what its own context mapped; a fault bans
 * that context and nothing else; handles do not cross processes or files.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "npu_gt.h"

static uint32_t new_ctx(int fd)
{
	struct drm_npu_ctx_create cc;
	int rc = gt_ctx_create_retry(fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 2000);

	ck_assert_msg(rc == 0, "CTX_CREATE(1): %s", strerror(-rc));
	return cc.ctx_id;
}

/*
 * Run the prepared copy @c on @ctx listing only its destination (its
 * program reads whatever it was built to read) and expect an MMU fault:
 * the fence signals -EFAULT, the context is banned with last_error EFAULT,
 * nothing was written, and later submits fail with EIO.
 */
static void expect_fault(int fd, uint32_t ctx, struct gt_copy *c, const char *what)
{
	struct drm_npu_bo_ref ref = { c->dst.handle, DRM_NPU_BO_REF_WRITE };
	struct drm_npu_submit s = {
		.ctx_id = ctx,
		.cmd_handle = c->cmd.handle,
		.cmd_size = c->prog_size,
		.bos = (uintptr_t)&ref,
		.bo_count = 1,
	};
	struct drm_npu_ctx_query q0, q;
	uint32_t so;
	int rc, st;

	ck_assert_int_eq(gt_ctx_query(fd, ctx, &q0), 0);
	ck_assert_int_eq(gt_syncobj_create(fd, 0, &so), 0);
	s.out_sync = so;
	rc = gt_submit(fd, &s);
	ck_assert_msg(rc == 0, "%s: SUBMIT: %s", what, strerror(-rc));
	rc = gt_syncobj_wait(fd, &so, 1, GT_WAIT_NS);
	ck_assert_msg(rc == 0, "%s: the faulting job did not complete in 10 s: %s",
		      what, strerror(-rc));
	st = gt_fence_status(fd, so);
	ck_assert_msg(st == GT_NO_STATUS || st == -EFAULT,
		      "%s: fence status %d, expected -EFAULT", what, st);
	ck_assert_int_eq(gt_ctx_query(fd, ctx, &q), 0);
	ck_assert_msg(q.state == DRM_NPU_CTX_BANNED, "%s: context not banned", what);
	ck_assert_msg(q.last_error == EFAULT, "%s: last_error %u, expected EFAULT (%d)",
		      what, q.last_error, EFAULT);
	ck_assert_uint_eq(q.jobs_failed, q0.jobs_failed + 1);
	ck_assert_uint_eq(q.jobs_completed, q0.jobs_completed + 1);
	ck_assert_msg(gt_all_zero(c->dst.map, c->bytes), "%s: the faulting job wrote data", what);
	/* Banned: submits fail with EIO, even good ones. */
	rc = gt_submit_copy(c, ctx, 0, 0, NULL, 0, 0);
	ck_assert_msg(rc == -EIO, "%s: submit on a banned context: %d, expected -EIO", what, rc);
	gt_syncobj_destroy(fd, so);
}

START_TEST(iso_other_ctx_bo)
{
	gt_begin("iso_other_ctx_bo");
	uint32_t a, b;
	struct gt_copy ca, cb;

	if (G.info.healthy_clusters < 2)
		GT_SKIP("needs 2 healthy clusters");
	a = new_ctx(G.fd);
	b = new_ctx(G.fd);
	/* Context A writes X (= ca.dst). */
	ck_assert_msg(gt_copy_init(G.fd, &ca, 65536, 1) == 0, "%s", gt_msg);
	ck_assert_msg(gt_run_copy(&ca, a, 0) == 0, "%s", gt_msg);
	ck_assert(gt_copy_ok(&ca));
	/* Context B reads X's address without listing it. */
	ck_assert_msg(gt_copy_init(G.fd, &cb, 65536, 2) == 0, "%s", gt_msg);
	gt_copy_set_src(&cb, ca.dst.dev_addr);
	expect_fault(G.fd, b, &cb, "read of another context's BO");
	/* A is unaffected and keeps running jobs. */
	memset(ca.dst.map, 0, ca.bytes);
	ck_assert_msg(gt_run_copy(&ca, a, 0) == 0, "%s", gt_msg);
	ck_assert(gt_copy_ok(&ca));
	ck_assert_msg(gt_good_job(G.fd, a, 1 << 20) == 0, "%s", gt_msg);
	/* A banned context can still be destroyed. */
	ck_assert_int_eq(gt_ctx_destroy(G.fd, b), 0);
	ck_assert_msg(gt_good_job_new_ctx(G.fd) == 0, "%s", gt_msg);
	gt_copy_fini(&ca);
	gt_copy_fini(&cb);
}
END_TEST

START_TEST(iso_never_listed)
{
	gt_begin("iso_never_listed");
	uint32_t ctx = new_ctx(G.fd);
	struct gt_copy c;
	struct gt_bo y;

	ck_assert_int_eq(gt_bo_create(G.fd, 65536, 0, &y), 0);
	ck_assert_int_eq(gt_bo_mmap(G.fd, &y), 0);
	gt_fill(y.map, y.size, 9);
	ck_assert_msg(gt_copy_init(G.fd, &c, 4096, 3) == 0, "%s", gt_msg);
	gt_copy_set_src(&c, y.dev_addr);
	expect_fault(G.fd, ctx, &c, "read of a BO no job listed");
	gt_bo_free(G.fd, &y);
	gt_copy_fini(&c);
}
END_TEST

START_TEST(iso_far_address)
{
	gt_begin("iso_far_address");
	uint64_t addrs[2] = { gt_unmapped_addr(&G.info), 0 };
	const char *names[2] = { "read far outside every BO", "read of device address 0" };

	for (unsigned k = 0; k < 2; k++) {
		uint32_t ctx = new_ctx(G.fd);
		struct gt_copy c;

		ck_assert_msg(gt_copy_init(G.fd, &c, 4096, 4 + k) == 0, "%s", gt_msg);
		gt_copy_set_src(&c, addrs[k]);
		expect_fault(G.fd, ctx, &c, names[k]);
		gt_copy_fini(&c);
		ck_assert_int_eq(gt_ctx_destroy(G.fd, ctx), 0);
	}
	ck_assert_msg(gt_good_job_new_ctx(G.fd) == 0, "%s", gt_msg);
}
END_TEST

/* Writes are checked too: a write far away faults. */
START_TEST(iso_far_write)
{
	gt_begin("iso_far_write");
	uint32_t ctx = new_ctx(G.fd);
	struct gt_copy c;
	struct drm_npu_bo_ref ref;
	struct drm_npu_submit s;
	struct drm_npu_ctx_query q;
	uint32_t so;

	ck_assert_msg(gt_copy_init(G.fd, &c, 4096, 6) == 0, "%s", gt_msg);
	gt_copy_set_dst(&c, gt_unmapped_addr(&G.info));
	ref = (struct drm_npu_bo_ref){ c.src.handle, DRM_NPU_BO_REF_READ };
	ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &so), 0);
	s = (struct drm_npu_submit){
		.ctx_id = ctx, .cmd_handle = c.cmd.handle, .cmd_size = c.prog_size,
		.bos = (uintptr_t)&ref, .bo_count = 1, .out_sync = so,
	};
	ck_assert_int_eq(gt_submit(G.fd, &s), 0);
	ck_assert_int_eq(gt_syncobj_wait(G.fd, &so, 1, GT_WAIT_NS), 0);
	ck_assert_int_eq(gt_ctx_query(G.fd, ctx, &q), 0);
	ck_assert_uint_eq(q.state, DRM_NPU_CTX_BANNED);
	ck_assert_uint_eq(q.last_error, EFAULT);
	gt_copy_fini(&c);
}
END_TEST

/* A BO stays mapped in a context after a job listed it (documented). */
START_TEST(iso_mapping_persists)
{
	gt_begin("iso_mapping_persists");
	uint32_t ctx = new_ctx(G.fd);
	struct gt_copy c1, c2;
	struct drm_npu_bo_ref ref;
	struct drm_npu_submit s;
	uint32_t so;

	ck_assert_msg(gt_copy_init(G.fd, &c1, 65536, 7) == 0, "%s", gt_msg);
	ck_assert_msg(gt_run_copy(&c1, ctx, 0) == 0, "%s", gt_msg);
	/* Job 2 reads c1.src, which only job 1 listed. */
	ck_assert_msg(gt_copy_init(G.fd, &c2, 65536, 7) == 0, "%s", gt_msg);
	gt_copy_set_src(&c2, c1.src.dev_addr);
	ref = (struct drm_npu_bo_ref){ c2.dst.handle, DRM_NPU_BO_REF_WRITE };
	ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &so), 0);
	s = (struct drm_npu_submit){
		.ctx_id = ctx, .cmd_handle = c2.cmd.handle, .cmd_size = c2.prog_size,
		.bos = (uintptr_t)&ref, .bo_count = 1, .out_sync = so,
	};
	ck_assert_int_eq(gt_submit(G.fd, &s), 0);
	ck_assert_int_eq(gt_syncobj_wait(G.fd, &so, 1, GT_WAIT_NS), 0);
	ck_assert_msg(gt_copy_ok(&c2), "a BO mapped by an earlier job of the context "
		      "was not readable (uAPI: stays mapped until the handle is closed)");
	gt_copy_fini(&c1);
	gt_copy_fini(&c2);
}
END_TEST

/* Closing the handle unmaps the BO from the contexts that mapped it. */
START_TEST(iso_closed_handle)
{
	gt_begin("iso_closed_handle");
	uint32_t ctx = new_ctx(G.fd);
	struct gt_copy c1, c2;
	uint64_t x_addr;

	ck_assert_msg(gt_copy_init(G.fd, &c1, 65536, 8) == 0, "%s", gt_msg);
	ck_assert_msg(gt_run_copy(&c1, ctx, 0) == 0, "%s", gt_msg);
	x_addr = c1.src.dev_addr;
	/* Make the faulting job's BOs first: a BO made after the close could
	 * legitimately reuse X's address. */
	ck_assert_msg(gt_copy_init(G.fd, &c2, 4096, 9) == 0, "%s", gt_msg);
	gt_copy_set_src(&c2, x_addr);
	gt_bo_free(G.fd, &c1.src);
	expect_fault(G.fd, ctx, &c2, "read of a closed BO's old address");
	gt_copy_fini(&c1);
	gt_copy_fini(&c2);
}
END_TEST

/* DEVICE_RO is enforced by the device MMU, not only at submit. */
START_TEST(iso_device_ro_write)
{
	gt_begin("iso_device_ro_write");
	uint32_t ctx = new_ctx(G.fd), so;
	struct gt_copy c;
	struct gt_bo ro;
	struct drm_npu_ctx_query q;
	int st;

	ck_assert_int_eq(gt_bo_create(G.fd, 4096, DRM_NPU_BO_DEVICE_RO, &ro), 0);
	ck_assert_int_eq(gt_bo_mmap(G.fd, &ro), 0);
	memset(ro.map, 0x11, ro.size);
	ck_assert_msg(gt_copy_init(G.fd, &c, 4096, 10) == 0, "%s", gt_msg);
	gt_copy_set_dst(&c, ro.dev_addr);
	{
		struct drm_npu_bo_ref refs[2] = {
			{ c.src.handle, DRM_NPU_BO_REF_READ },
			{ ro.handle, DRM_NPU_BO_REF_READ },
		};
		struct drm_npu_submit s = {
			.ctx_id = ctx, .cmd_handle = c.cmd.handle, .cmd_size = c.prog_size,
			.bos = (uintptr_t)refs, .bo_count = 2,
		};

		ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &so), 0);
		s.out_sync = so;
		ck_assert_int_eq(gt_submit(G.fd, &s), 0);
	}
	ck_assert_int_eq(gt_syncobj_wait(G.fd, &so, 1, GT_WAIT_NS), 0);
	st = gt_fence_status(G.fd, so);
	ck_assert_msg(st == GT_NO_STATUS || st == -EFAULT, "fence status %d", st);
	ck_assert_int_eq(gt_ctx_query(G.fd, ctx, &q), 0);
	ck_assert_uint_eq(q.state, DRM_NPU_CTX_BANNED);
	ck_assert_uint_eq(q.last_error, EFAULT);
	for (uint64_t i = 0; i < ro.size; i++)
		ck_assert_msg(((uint8_t *)ro.map)[i] == 0x11,
			      "the device wrote byte %" PRIu64 " of a DEVICE_RO BO", i);
	gt_bo_free(G.fd, &ro);
	gt_copy_fini(&c);
}
END_TEST

/* A context of another file reads an address only this file uses. */
START_TEST(iso_other_file_addr)
{
	gt_begin("iso_other_file_addr");
	struct gt_bo pad[8], x;
	struct gt_copy c;
	uint32_t ctx2;
	int fd2;

	if (G.info.healthy_clusters < 2)
		GT_SKIP("needs 2 healthy clusters");
	for (unsigned k = 0; k < 8; k++)
		ck_assert_int_eq(gt_bo_create(G.fd, 1 << 20, 0, &pad[k]), 0);
	ck_assert_int_eq(gt_bo_create(G.fd, 65536, 0, &x), 0);
	{
		/* X must be mapped somewhere: run a job of this file on it. */
		uint32_t ctx1 = new_ctx(G.fd);
		struct gt_copy c1;

		ck_assert_msg(gt_copy_init(G.fd, &c1, 65536, 12) == 0, "%s", gt_msg);
		gt_copy_set_dst(&c1, x.dev_addr);
		{
			struct drm_npu_bo_ref refs[2] = {
				{ c1.src.handle, DRM_NPU_BO_REF_READ },
				{ x.handle, DRM_NPU_BO_REF_WRITE },
			};
			struct drm_npu_submit s = {
				.ctx_id = ctx1, .cmd_handle = c1.cmd.handle,
				.cmd_size = c1.prog_size, .bos = (uintptr_t)refs, .bo_count = 2,
			};
			uint32_t so;

			ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &so), 0);
			s.out_sync = so;
			ck_assert_int_eq(gt_submit(G.fd, &s), 0);
			ck_assert_int_eq(gt_syncobj_wait(G.fd, &so, 1, GT_WAIT_NS), 0);
		}
		gt_copy_fini(&c1);
	}
	fd2 = gt_open();
	ck_assert_int_ge(fd2, 0);
	ctx2 = new_ctx(fd2);
	ck_assert_msg(gt_copy_init(fd2, &c, 4096, 13) == 0, "%s", gt_msg);
	if (!(x.dev_addr + x.size <= c.cmd.dev_addr || c.cmd.dev_addr + c.cmd.size <= x.dev_addr) ||
	    !(x.dev_addr + x.size <= c.dst.dev_addr || c.dst.dev_addr + c.dst.size <= x.dev_addr) ||
	    !(x.dev_addr + x.size <= c.src.dev_addr || c.src.dev_addr + c.src.size <= x.dev_addr)) {
		gt_copy_fini(&c);
		close(fd2);
		GT_SKIP("the other file's BOs share X's address range");
	}
	gt_copy_set_src(&c, x.dev_addr);
	expect_fault(fd2, ctx2, &c, "read of another file's BO address");
	gt_copy_fini(&c);
	close(fd2);
}
END_TEST

/* ---- another process --------------------------------------------------------------- */

struct parent_ids {
	uint32_t bo[3];
	uint32_t ctx;
	uint32_t syncobj;
	uint32_t prog_size;
};

static int child_uses_parent_ids(void *arg)
{
	const struct parent_ids *p = arg;
	struct drm_npu_bo_info info;
	struct drm_npu_ctx_query q;
	uint64_t off;
	int fd = gt_open(), rc;

	if (fd < 0)
		return gt_fail(fd, "child open: %s", strerror(-fd));
	for (unsigned k = 0; k < 3; k++) {
		rc = gt_bo_info(fd, p->bo[k], &info);
		if (rc != -ENOENT)
			return gt_fail(-EINVAL, "child BO_INFO(parent handle %u): %d, expected -ENOENT",
				       p->bo[k], rc);
		rc = gt_bo_mmap_offset(fd, p->bo[k], &off);
		if (rc != -ENOENT)
			return gt_fail(-EINVAL, "child MMAP_OFFSET(parent handle %u): %d",
				       p->bo[k], rc);
	}
	rc = gt_ctx_query(fd, p->ctx, &q);
	if (rc != -ENOENT)
		return gt_fail(-EINVAL, "child CTX_QUERY(parent ctx %u): %d", p->ctx, rc);
	{
		struct drm_npu_bo_ref refs[2] = {
			{ p->bo[1], DRM_NPU_BO_REF_READ }, { p->bo[2], DRM_NPU_BO_REF_WRITE },
		};
		struct drm_npu_submit s = {
			.ctx_id = p->ctx, .cmd_handle = p->bo[0], .cmd_size = p->prog_size,
			.bos = (uintptr_t)refs, .bo_count = 2,
		};

		rc = gt_submit(fd, &s);
		if (rc != -ENOENT)
			return gt_fail(-EINVAL, "child SUBMIT with parent ids: %d", rc);
		/* Even with a context of its own (if a cluster is free). */
		if (G.info.healthy_clusters >= 2) {
			struct drm_npu_ctx_create cc;

			rc = gt_ctx_create_retry(fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 2000);
			if (rc)
				return gt_fail(rc, "child CTX_CREATE: %s", strerror(-rc));
			s.ctx_id = cc.ctx_id;
			rc = gt_submit(fd, &s);
			if (rc != -ENOENT)
				return gt_fail(-EINVAL, "child SUBMIT with parent handles: %d", rc);
		}
	}
	close(fd);
	return 0;
}

START_TEST(iso_fork_handles)
{
	gt_begin("iso_fork_handles");
	struct parent_ids p;
	struct gt_copy c;
	char msg[512];

	p.ctx = new_ctx(G.fd);
	ck_assert_msg(gt_copy_init(G.fd, &c, 4096, 14) == 0, "%s", gt_msg);
	p.bo[0] = c.cmd.handle;
	p.bo[1] = c.src.handle;
	p.bo[2] = c.dst.handle;
	p.prog_size = c.prog_size;
	ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &p.syncobj), 0);
	ck_assert_msg(gt_in_child(child_uses_parent_ids, &p, msg, sizeof(msg)) == 0, "%s", msg);
	/* The parent's objects are intact. */
	ck_assert_msg(gt_run_copy(&c, p.ctx, 0) == 0, "%s", gt_msg);
	ck_assert(gt_copy_ok(&c));
	gt_copy_fini(&c);
}
END_TEST

Suite *gt_suite_isolation(void)
{
	Suite *s = suite_create("isolation");
	TCase *tc = tcase_create("mmu");

	tcase_add_test(tc, iso_other_ctx_bo);
	tcase_add_test(tc, iso_never_listed);
	tcase_add_test(tc, iso_far_address);
	tcase_add_test(tc, iso_far_write);
	tcase_add_test(tc, iso_mapping_persists);
	tcase_add_test(tc, iso_closed_handle);
	tcase_add_test(tc, iso_device_ro_write);
	tcase_add_test(tc, iso_other_file_addr);
	gt_add_tcase(s, tc, 30);

	tc = tcase_create("process");
	tcase_add_test(tc, iso_fork_handles);
	gt_add_tcase(s, tc, 30);
	return s;
}
