/* SPDX-License-Identifier: MIT */
/*
 * DEV_QUERY, buffer objects (create, info, mmap) and STATS.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "npu_gt.h"

static long page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

static uint64_t round_page(uint64_t v)
{
	uint64_t p = (uint64_t)page_size();

	return (v + p - 1) & ~(p - 1);
}

/* ---- DEV_QUERY ---------------------------------------------------------------- */

START_TEST(query_size)
{
	gt_begin("query_size");
	struct drm_npu_dev_query q = { .type = DRM_NPU_QUERY_DEVICE };

	ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_DEV_QUERY, &q), 0);
	ck_assert_uint_eq(q.size, sizeof(struct drm_npu_device_info));
	ck_assert_uint_eq(q.pointer, 0);
}
END_TEST

START_TEST(query_full)
{
	gt_begin("query_full");
	const struct drm_npu_device_info *i = &G.info;
	uint32_t all;

	ck_assert_uint_gt(i->clusters, 0);
	ck_assert_uint_le(i->clusters, GT_MAX_CLUSTERS);
	all = i->clusters == 32 ? ~0u : (1u << i->clusters) - 1;
	ck_assert_uint_eq(i->healthy_clusters, gt_popcount(i->healthy_mask));
	ck_assert_uint_eq(i->healthy_mask & i->defect_mask, 0);
	ck_assert_uint_eq(i->healthy_mask & ~all, 0);
	ck_assert_uint_eq(i->healthy_mask | i->defect_mask, all);
	ck_assert_uint_gt(i->healthy_clusters, 0);
	ck_assert_uint_eq(i->hw_version >> 16, NPU_HW_VERSION_MAJOR);
	ck_assert_uint_eq(i->isa_version >> 16, NPU_PROG_VERSION_MAJOR);
	ck_assert_uint_gt(i->tpbs_per_cluster, 0);
	ck_assert_uint_gt(i->queues, 0);
	ck_assert_uint_le(i->queues, NPU_HW_NUM_QUEUES);
	ck_assert_uint_gt(i->dma_engines, 0);
	ck_assert_uint_gt(i->mesh_x, 0);
	ck_assert_uint_gt(i->mesh_y, 0);
	ck_assert_uint_gt(i->hbsm_size, 0);
	ck_assert_uint_gt(i->sram_size, 0);
	ck_assert_uint_gt(i->clock_mhz, 0);
	ck_assert_uint_gt(i->su_counters, 0);
	for (unsigned c = 0; c < i->clusters; c++) {
		ck_assert_uint_lt(i->cluster_pos[c] & 0xff, i->mesh_x);
		ck_assert_uint_lt((i->cluster_pos[c] >> 8) & 0xff, i->mesh_y);
	}
	ck_assert_uint_eq(i->pad, 0);
	ck_assert_uint_gt(i->va_size, 0);
	ck_assert_uint_gt(i->va_start, 0);	/* VA 0 stays unmapped */
	ck_assert_uint_eq(i->va_start % (uint64_t)page_size(), 0);
	ck_assert_uint_le(i->va_start + i->va_size, 1ull << NPU_MMU_VA_BITS);
	ck_assert_uint_ge(i->va_size, DRM_NPU_MAX_BO_SIZE);
}
END_TEST

START_TEST(query_prefix)
{
	gt_begin("query_prefix");
	uint8_t buf[sizeof(struct drm_npu_device_info)];
	struct drm_npu_dev_query q = {
		.type = DRM_NPU_QUERY_DEVICE,
		.size = 8,
		.pointer = (uintptr_t)buf,
	};

	memset(buf, 0xaa, sizeof(buf));
	ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_DEV_QUERY, &q), 0);
	ck_assert_uint_eq(q.size, sizeof(struct drm_npu_device_info));
	ck_assert_mem_eq(buf, &G.info, 8);
	for (size_t k = 8; k < sizeof(buf); k++)
		ck_assert_msg(buf[k] == 0xaa, "byte %zu past the 8-byte buffer written", k);
}
END_TEST

START_TEST(query_larger)
{
	gt_begin("query_larger");
	enum { EXTRA = 64 };
	uint8_t buf[sizeof(struct drm_npu_device_info) + EXTRA];
	struct drm_npu_dev_query q = {
		.type = DRM_NPU_QUERY_DEVICE,
		.size = sizeof(buf),
		.pointer = (uintptr_t)buf,
	};

	memset(buf, 0xaa, sizeof(buf));
	ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_DEV_QUERY, &q), 0);
	ck_assert_uint_eq(q.size, sizeof(struct drm_npu_device_info));
	ck_assert_mem_eq(buf, &G.info, sizeof(G.info));
	for (size_t k = sizeof(G.info); k < sizeof(buf); k++)
		ck_assert_msg(buf[k] == 0, "tail byte %zu is 0x%02x, not 0", k, buf[k]);
}
END_TEST

START_TEST(query_bad)
{
	gt_begin("query_bad");
	struct drm_npu_device_info info;
	struct drm_npu_dev_query q = {
		.type = 0x1234,
		.size = sizeof(info),
		.pointer = (uintptr_t)&info,
	};

	ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_DEV_QUERY, &q), -EINVAL);
	q.type = DRM_NPU_QUERY_DEVICE;
	q.pointer = 0;
	ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_DEV_QUERY, &q), -EFAULT);
	q.size = sizeof(info);
	q.pointer = 8;
	ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_DEV_QUERY, &q), -EFAULT);
	q.size = sizeof(info);
	q.pointer = 0xffff800000000000ull;	/* kernel half */
	ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_DEV_QUERY, &q), -EFAULT);
}
END_TEST

START_TEST(query_two_files)
{
	gt_begin("query_two_files");
	struct drm_npu_device_info other;
	int fd = gt_open();

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(gt_query_info(fd, &other), 0);
	ck_assert_mem_eq(&other, &G.info, sizeof(other));
	close(fd);
}
END_TEST

/* ---- buffer objects ----------------------------------------------------------- */

START_TEST(bo_create_info)
{
	gt_begin("bo_create_info");
	static const uint64_t sizes[] = { 1, 4095, 4096, 4097, 65536 + 1, (1u << 20) + 3 };
	static const uint32_t flags[] = {
		0, DRM_NPU_BO_NO_MMAP, DRM_NPU_BO_DEVICE_RO,
		DRM_NPU_BO_NO_MMAP | DRM_NPU_BO_DEVICE_RO,
	};
	enum { N = sizeof(sizes) / sizeof(sizes[0]) };
	struct gt_bo bo[N];
	const struct drm_npu_device_info *i = &G.info;

	for (unsigned k = 0; k < N; k++) {
		struct drm_npu_bo_info info;
		uint32_t f = flags[k % 4];

		ck_assert_int_eq(gt_bo_create(G.fd, sizes[k], f, &bo[k]), 0);
		ck_assert_uint_ne(bo[k].handle, 0);
		ck_assert_uint_eq(bo[k].size, round_page(sizes[k]));
		ck_assert_uint_eq(bo[k].dev_addr % (uint64_t)page_size(), 0);
		ck_assert_uint_ge(bo[k].dev_addr, i->va_start);
		ck_assert_uint_le(bo[k].dev_addr + bo[k].size, i->va_start + i->va_size);
		ck_assert_int_eq(gt_bo_info(G.fd, bo[k].handle, &info), 0);
		ck_assert_uint_eq(info.handle, bo[k].handle);
		ck_assert_uint_eq(info.flags, f);
		ck_assert_uint_eq(info.size, bo[k].size);
		ck_assert_uint_eq(info.dev_addr, bo[k].dev_addr);
		for (unsigned j = 0; j < k; j++) {
			ck_assert_uint_ne(bo[j].handle, bo[k].handle);
			ck_assert_msg(bo[j].dev_addr + bo[j].size <= bo[k].dev_addr ||
				      bo[k].dev_addr + bo[k].size <= bo[j].dev_addr,
				      "BOs %u and %u overlap in the device address space", j, k);
		}
	}
	for (unsigned k = 0; k < N; k++)
		ck_assert_int_eq(gt_gem_close(G.fd, bo[k].handle), 0);
}
END_TEST

START_TEST(bo_mmap_rw)
{
	gt_begin("bo_mmap_rw");
	struct gt_bo a, b;
	uint64_t off1, off2, offb;
	void *p;

	ck_assert_int_eq(gt_bo_create(G.fd, 3 * 4096 + 100, 0, &a), 0);
	ck_assert_int_eq(gt_bo_create(G.fd, 4096, DRM_NPU_BO_DEVICE_RO, &b), 0);
	ck_assert_int_eq(gt_bo_mmap_offset(G.fd, a.handle, &off1), 0);
	ck_assert_int_eq(gt_bo_mmap_offset(G.fd, a.handle, &off2), 0);
	ck_assert_uint_eq(off1, off2);
	ck_assert_int_eq(gt_bo_mmap_offset(G.fd, b.handle, &offb), 0);
	ck_assert_uint_ne(off1, offb);

	ck_assert_int_eq(gt_bo_mmap(G.fd, &a), 0);
	ck_assert_msg(gt_all_zero(a.map, a.size), "a new BO is not zeroed");
	gt_fill(a.map, a.size, 7);
	ck_assert_int_eq(munmap(a.map, a.size), 0);
	a.map = NULL;
	ck_assert_int_eq(gt_bo_mmap(G.fd, &a), 0);
	ck_assert_int_eq(gt_check(a.map, a.size, 7), -1);

	/* A DEVICE_RO BO is still CPU-writable. */
	ck_assert_int_eq(gt_bo_mmap(G.fd, &b), 0);
	memset(b.map, 0x5a, b.size);
	ck_assert_uint_eq(((uint8_t *)b.map)[b.size - 1], 0x5a);

	/* A mapping larger than the BO is refused. */
	p = mmap(NULL, a.size + 4096, PROT_READ, MAP_SHARED, G.fd, (off_t)off1);
	ck_assert_msg(p == MAP_FAILED, "mmap past the end of a BO succeeded");

	gt_bo_free(G.fd, &a);
	gt_bo_free(G.fd, &b);
}
END_TEST

START_TEST(bo_no_mmap)
{
	gt_begin("bo_no_mmap");
	struct gt_bo bo;
	uint64_t off;
	int rc;

	ck_assert_int_eq(gt_bo_create(G.fd, 4096, DRM_NPU_BO_NO_MMAP, &bo), 0);
	rc = gt_bo_mmap_offset(G.fd, bo.handle, &off);
	/* The header says only "fails"; accept the usual refusals. */
	ck_assert_msg(rc == -EINVAL || rc == -EPERM || rc == -EACCES,
		      "MMAP_OFFSET of a NO_MMAP BO: %d (%s)", rc, strerror(-rc));
	ck_assert_int_eq(gt_gem_close(G.fd, bo.handle), 0);
}
END_TEST

START_TEST(bo_create_bad)
{
	gt_begin("bo_create_bad");
	struct drm_npu_bo_create c;

	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_BO_CREATE, &c), -EINVAL);
	c.size = DRM_NPU_MAX_BO_SIZE + 1;
	ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_BO_CREATE, &c), -EINVAL);
	c.size = ~0ull;
	ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_BO_CREATE, &c), -EINVAL);
	c.size = ~0ull - 4094;	/* wraps when rounded up */
	ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_BO_CREATE, &c), -EINVAL);
	c.size = 4096;
	c.flags = 1u << 2;
	ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_BO_CREATE, &c), -EINVAL);
	c.flags = 1u << 31;
	ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_BO_CREATE, &c), -EINVAL);
	c.flags = ~DRM_NPU_BO_FLAGS;
	ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_BO_CREATE, &c), -EINVAL);
}
END_TEST

START_TEST(bo_large)
{
	gt_begin("bo_large");
	struct gt_bo bo;

	/* 64 MiB: allocated lazily, so cheap unless touched. */
	ck_assert_int_eq(gt_bo_create(G.fd, 64ull << 20, 0, &bo), 0);
	ck_assert_uint_eq(bo.size, 64ull << 20);
	ck_assert_int_eq(gt_bo_mmap(G.fd, &bo), 0);
	((uint8_t *)bo.map)[bo.size - 1] = 1;
	ck_assert_uint_eq(((uint8_t *)bo.map)[0], 0);
	gt_bo_free(G.fd, &bo);
}
END_TEST

/* ---- STATS --------------------------------------------------------------------- */

/* Device-wide counters move with earlier tests' late releases: wait until
 * two reads 100 ms apart agree. */
static void stable_stats(struct drm_npu_stats_data *st)
{
	struct drm_npu_stats_data b;

	ck_assert_int_eq(gt_stats(G.fd, st), 0);
	for (int k = 0; k < 30; k++) {
		gt_msleep(100);
		ck_assert_int_eq(gt_stats(G.fd, &b), 0);
		if (b.bo_count == st->bo_count && b.contexts == st->contexts &&
		    b.free_clusters == st->free_clusters) {
			*st = b;
			return;
		}
		*st = b;
	}
}

START_TEST(stats_basic)
{
	gt_begin("stats_basic");
	struct drm_npu_stats s = { 0 };
	struct drm_npu_stats_data st0, st1, st2;
	struct drm_npu_ctx_create cc;
	struct gt_bo bo;

	ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_STATS, &s), 0);
	ck_assert_uint_eq(s.size, sizeof(struct drm_npu_stats_data));

	stable_stats(&st0);
	ck_assert_uint_le(st0.free_clusters, G.info.healthy_clusters);
	ck_assert_uint_ge(st0.jobs_submitted, st0.jobs_completed);
	ck_assert_uint_ge(st0.jobs_completed, st0.jobs_failed);
	for (unsigned c = 0; c < GT_MAX_CLUSTERS; c++)
		if (G.info.defect_mask & (1u << c))
			ck_assert_uint_eq(st0.cluster_busy_ns[c], 0);

	ck_assert_int_eq(gt_bo_create(G.fd, 8192, 0, &bo), 0);
	ck_assert_int_eq(gt_ctx_create_retry(G.fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 2000), 0);
	ck_assert_int_eq(gt_stats(G.fd, &st1), 0);
	ck_assert_uint_eq(st1.bo_count, st0.bo_count + 1);
	ck_assert_uint_eq(st1.bo_bytes, st0.bo_bytes + 8192);
	ck_assert_uint_eq(st1.contexts, st0.contexts + 1);
	ck_assert_uint_eq(st1.free_clusters, st0.free_clusters - 1);

	ck_assert_int_eq(gt_ctx_destroy(G.fd, cc.ctx_id), 0);
	ck_assert_int_eq(gt_gem_close(G.fd, bo.handle), 0);
	ck_assert_int_eq(gt_stats(G.fd, &st2), 0);
	ck_assert_uint_eq(st2.bo_count, st0.bo_count);
	ck_assert_uint_eq(st2.bo_bytes, st0.bo_bytes);
	ck_assert_uint_eq(st2.contexts, st0.contexts);
	ck_assert_uint_eq(st2.free_clusters, st0.free_clusters);
}
END_TEST

START_TEST(stats_jobs)
{
	gt_begin("stats_jobs");
	struct drm_npu_stats_data st0, st1;
	struct drm_npu_ctx_create cc;

	ck_assert_int_eq(gt_ctx_create_retry(G.fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 2000), 0);
	ck_assert_int_eq(gt_stats(G.fd, &st0), 0);
	ck_assert_msg(gt_good_job(G.fd, cc.ctx_id, 1 << 20) == 0, "%s", gt_msg);
	ck_assert_int_eq(gt_stats(G.fd, &st1), 0);
	ck_assert_uint_ge(st1.jobs_submitted, st0.jobs_submitted + 1);
	ck_assert_uint_ge(st1.jobs_completed, st0.jobs_completed + 1);
	ck_assert_uint_ge(st1.device_cycles, st0.device_cycles + 1);
	ck_assert_uint_eq(st1.jobs_failed, st0.jobs_failed);
	/* Busy time on a partition cluster, never on a fused one. */
	ck_assert_uint_gt(st1.cluster_busy_ns[__builtin_ctz(cc.cluster_mask)],
			  st0.cluster_busy_ns[__builtin_ctz(cc.cluster_mask)]);
	for (unsigned c = 0; c < GT_MAX_CLUSTERS; c++)
		if (G.info.defect_mask & (1u << c))
			ck_assert_uint_eq(st1.cluster_busy_ns[c], 0);
	ck_assert_int_eq(gt_ctx_destroy(G.fd, cc.ctx_id), 0);
}
END_TEST

START_TEST(stats_bad)
{
	gt_begin("stats_bad");
	struct drm_npu_stats_data st;
	uint8_t buf[sizeof(st) + 32];
	struct drm_npu_stats s = { .size = sizeof(st), .pad = 1, .pointer = (uintptr_t)&st };

	ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_STATS, &s), -EINVAL);
	s.pad = 0;
	s.pointer = 0;
	ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_STATS, &s), -EFAULT);
	s.size = sizeof(st);
	s.pointer = 8;
	ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_STATS, &s), -EFAULT);
	/* Prefix and zero tail, like DEV_QUERY. */
	memset(buf, 0xaa, sizeof(buf));
	s.size = 8;
	s.pointer = (uintptr_t)buf;
	ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_STATS, &s), 0);
	ck_assert_uint_eq(s.size, sizeof(st));
	ck_assert_uint_eq(buf[8], 0xaa);
	memset(buf, 0xaa, sizeof(buf));
	s.size = sizeof(buf);
	ck_assert_int_eq(gt_ioctl(G.fd, DRM_IOCTL_NPU_STATS, &s), 0);
	ck_assert_uint_eq(s.size, sizeof(st));
	for (size_t k = sizeof(st); k < sizeof(buf); k++)
		ck_assert_uint_eq(buf[k], 0);
}
END_TEST

Suite *gt_suite_basic(void)
{
	Suite *s = suite_create("basic");
	TCase *tc;

	tc = tcase_create("query");
	tcase_add_test(tc, query_size);
	tcase_add_test(tc, query_full);
	tcase_add_test(tc, query_prefix);
	tcase_add_test(tc, query_larger);
	tcase_add_test(tc, query_bad);
	tcase_add_test(tc, query_two_files);
	gt_add_tcase(s, tc, 30);

	tc = tcase_create("bo");
	tcase_add_test(tc, bo_create_info);
	tcase_add_test(tc, bo_mmap_rw);
	tcase_add_test(tc, bo_no_mmap);
	tcase_add_test(tc, bo_create_bad);
	tcase_add_test(tc, bo_large);
	gt_add_tcase(s, tc, 30);

	tc = tcase_create("stats");
	tcase_add_test(tc, stats_basic);
	tcase_add_test(tc, stats_jobs);
	tcase_add_test(tc, stats_bad);
	gt_add_tcase(s, tc, 30);
	return s;
}
