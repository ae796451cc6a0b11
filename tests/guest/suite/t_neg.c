/* SPDX-License-Identifier: MIT */
/*
 * Negative tests across ioctls: invalid, deleted and foreign handles and
 * ids, non-zero pad fields, unknown flags.  (Submit-specific argument
 * checks are in t_submit.c, DEV_QUERY/STATS/BO_CREATE ones in t_basic.c.)
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "npu_gt.h"

START_TEST(neg_invalid_handles)
{
	gt_begin("neg_invalid_handles");
	static const uint32_t bad[] = { 0, 0xdead, 0x7fffffff, 0xffffffff };
	struct drm_npu_bo_info info;
	uint64_t off;

	for (unsigned k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		ck_assert_int_eq(gt_bo_info(G.fd, bad[k], &info), -ENOENT);
		ck_assert_int_eq(gt_bo_mmap_offset(G.fd, bad[k], &off), -ENOENT);
	}
}
END_TEST

START_TEST(neg_deleted_handle)
{
	gt_begin("neg_deleted_handle");
	struct drm_npu_ctx_create cc;
	struct drm_npu_bo_info info;
	struct gt_copy c;
	uint32_t dead;
	uint64_t off;

	ck_assert_int_eq(gt_ctx_create_retry(G.fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 2000), 0);
	ck_assert_msg(gt_copy_init(G.fd, &c, 4096, 1) == 0, "%s", gt_msg);

	/* A deleted data BO. */
	dead = c.dst.handle;
	munmap(c.dst.map, c.dst.size);
	c.dst.map = NULL;
	ck_assert_int_eq(gt_gem_close(G.fd, dead), 0);
	c.dst.handle = 0;
	ck_assert_int_eq(gt_bo_info(G.fd, dead, &info), -ENOENT);
	ck_assert_int_eq(gt_bo_mmap_offset(G.fd, dead, &off), -ENOENT);
	{
		struct drm_npu_bo_ref refs[2] = {
			{ c.src.handle, DRM_NPU_BO_REF_READ },
			{ dead, DRM_NPU_BO_REF_WRITE },
		};
		struct drm_npu_submit s = {
			.ctx_id = cc.ctx_id, .cmd_handle = c.cmd.handle,
			.cmd_size = c.prog_size, .bos = (uintptr_t)refs, .bo_count = 2,
		};

		ck_assert_int_eq(gt_submit(G.fd, &s), -ENOENT);
		/* A deleted command BO. */
		refs[1].handle = c.src.handle;
		munmap(c.cmd.map, c.cmd.size);
		c.cmd.map = NULL;
		ck_assert_int_eq(gt_gem_close(G.fd, c.cmd.handle), 0);
		ck_assert_int_eq(gt_submit(G.fd, &s), -ENOENT);
		c.cmd.handle = 0;
	}
	/* GEM_CLOSE twice: DRM core says EINVAL. */
	ck_assert_int_eq(gt_gem_close(G.fd, dead), -EINVAL);
	gt_copy_fini(&c);

	/* A deleted syncobj. */
	{
		uint32_t so;
		struct drm_npu_sync in;
		struct gt_copy c2;

		ck_assert_msg(gt_copy_init(G.fd, &c2, 4096, 2) == 0, "%s", gt_msg);
		ck_assert_int_eq(gt_syncobj_create(G.fd, DRM_SYNCOBJ_CREATE_SIGNALED, &so), 0);
		ck_assert_int_eq(gt_syncobj_destroy(G.fd, so), 0);
		in = (struct drm_npu_sync){ .handle = so };
		ck_assert_int_eq(gt_submit_copy(&c2, cc.ctx_id, 0, 0, &in, 1, 0), -ENOENT);
		ck_assert_int_eq(gt_submit_copy(&c2, cc.ctx_id, so, 0, NULL, 0, 0), -ENOENT);
		gt_copy_fini(&c2);
	}
}
END_TEST

/* Handles, context ids and syncobjs of one file mean nothing in another. */
START_TEST(neg_other_fd)
{
	gt_begin("neg_other_fd");
	struct drm_npu_ctx_create cc;
	struct drm_npu_ctx_query q;
	struct drm_npu_bo_info info;
	struct gt_copy c;
	uint64_t off;
	uint32_t so;
	void *p;
	int fd2 = gt_open();

	ck_assert_int_ge(fd2, 0);
	ck_assert_int_eq(gt_ctx_create_retry(G.fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 2000), 0);
	ck_assert_msg(gt_copy_init(G.fd, &c, 4096, 3) == 0, "%s", gt_msg);
	ck_assert_int_eq(gt_syncobj_create(G.fd, DRM_SYNCOBJ_CREATE_SIGNALED, &so), 0);

	/* fd2 has no BO, no context and no syncobj of its own. */
	ck_assert_int_eq(gt_bo_info(fd2, c.src.handle, &info), -ENOENT);
	ck_assert_int_eq(gt_bo_info(fd2, c.cmd.handle, &info), -ENOENT);
	ck_assert_int_eq(gt_bo_mmap_offset(fd2, c.src.handle, &off), -ENOENT);
	ck_assert_int_eq(gt_ctx_query(fd2, cc.ctx_id, &q), -ENOENT);
	ck_assert_int_eq(gt_ctx_destroy(fd2, cc.ctx_id), -ENOENT);
	{
		struct drm_npu_bo_ref refs[2];
		struct drm_npu_submit s;

		gt_copy_submit_args(&c, cc.ctx_id, refs, &s);
		ck_assert_int_eq(gt_submit(fd2, &s), -ENOENT);
	}
	/* fd1's mmap offset is not mappable through fd2. */
	ck_assert_int_eq(gt_bo_mmap_offset(G.fd, c.src.handle, &off), 0);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd2, (off_t)off);
	ck_assert_msg(p == MAP_FAILED, "mapped another file's BO through its fake offset");

	/* With a context of its own, fd2 still cannot name fd1's objects. */
	if (G.info.healthy_clusters >= 2) {
		struct drm_npu_ctx_create cc2;
		struct drm_npu_sync in = { .handle = so };
		struct drm_npu_submit s;
		struct gt_copy c2;
		struct drm_npu_bo_ref refs[2];

		ck_assert_int_eq(gt_ctx_create_retry(fd2, 1, DRM_NPU_PRIORITY_NORMAL, &cc2, 2000), 0);
		ck_assert_msg(gt_copy_init(fd2, &c2, 4096, 4) == 0, "%s", gt_msg);
		gt_copy_submit_args(&c2, cc2.ctx_id, refs, &s);
		s.in_syncs = (uintptr_t)&in;
		s.in_sync_count = 1;
		/* syncobj handle of fd1, unknown in fd2 (fd2 has none). */
		ck_assert_int_eq(gt_submit(fd2, &s), -ENOENT);
		gt_copy_fini(&c2);
	}
	/* fd1 is unaffected. */
	ck_assert_msg(gt_good_job(G.fd, cc.ctx_id, 4096) == 0, "%s", gt_msg);
	gt_copy_fini(&c);
	close(fd2);
}
END_TEST

START_TEST(neg_pads)
{
	gt_begin("neg_pads");
	struct drm_npu_ctx_create cc;
	struct gt_bo bo;

	ck_assert_int_eq(gt_ctx_create_retry(G.fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 2000), 0);
	ck_assert_int_eq(gt_bo_create(G.fd, 4096, 0, &bo), 0);
	{
		struct drm_npu_bo_mmap_offset m = { .handle = bo.handle, .pad = 1 };

		ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_BO_MMAP_OFFSET, &m), -EINVAL);
		m.pad = 0x80000000u;
		ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_BO_MMAP_OFFSET, &m), -EINVAL);
	}
	{
		struct drm_npu_ctx_query q = { .ctx_id = cc.ctx_id, .pad = 1 };

		ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_CTX_QUERY, &q), -EINVAL);
		q.pad = 0;
		q.pad2 = 1;
		ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_CTX_QUERY, &q), -EINVAL);
		/* A seqno the context never had is simply not found. */
		q.pad2 = 0;
		q.job_seqno = 1ull << 40;
		ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_CTX_QUERY, &q), 0);
		ck_assert_uint_eq(q.job_found, 0);
		ck_assert_uint_eq(q.job_cycles, 0);
	}
	{
		struct drm_npu_ctx_destroy d = { .ctx_id = cc.ctx_id, .pad = 1 };
		struct drm_npu_ctx_query q;

		ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_CTX_DESTROY, &d), -EINVAL);
		/* The context survived the rejected destroy. */
		ck_assert_int_eq(gt_ctx_query(G.fd, cc.ctx_id, &q), 0);
	}
	{
		struct drm_npu_stats_data st;
		struct drm_npu_stats s = { .size = sizeof(st), .pad = 1, .pointer = (uintptr_t)&st };

		ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_STATS, &s), -EINVAL);
	}
	{
		struct drm_npu_ctx_create c = { .clusters = 1, .flags = 2 };

		ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_CTX_CREATE, &c), -EINVAL);
	}
	{
		struct drm_npu_bo_create c = { .size = 4096, .flags = 0x100 };

		ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_BO_CREATE, &c), -EINVAL);
	}
	ck_assert_int_eq(gt_ctx_destroy(G.fd, cc.ctx_id), 0);
	gt_bo_free(G.fd, &bo);
}
END_TEST

/* Ioctl numbers past the last one, in our range, are refused. */
START_TEST(neg_unknown_ioctl)
{
	gt_begin("neg_unknown_ioctl");
	uint8_t buf[64] = { 0 };

	for (unsigned nr = DRM_NPU_CTX_QUERY + 1; nr < 0x20; nr++) {
		int rc = gt_ioctl(G.fd, DRM_IOWR(DRM_COMMAND_BASE + nr, uint8_t[64]), buf);

		ck_assert_msg(rc == -EINVAL || rc == -ENOTTY,
			      "driver ioctl 0x%02x: %d (%s)", nr, rc, strerror(-rc));
	}
}
END_TEST

Suite *gt_suite_negative(void)
{
	Suite *s = suite_create("negative");
	TCase *tc = tcase_create("handles");

	tcase_add_test(tc, neg_invalid_handles);
	tcase_add_test(tc, neg_deleted_handle);
	tcase_add_test(tc, neg_other_fd);
	tcase_add_test(tc, neg_pads);
	tcase_add_test(tc, neg_unknown_ioctl);
	gt_add_tcase(s, tc, 30);
	return s;
}
