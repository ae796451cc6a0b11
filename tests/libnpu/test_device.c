// SPDX-License-Identifier: MIT
/*
 * Devices and the emulator backend: opening, buffers, partitions, running
 * a real program through a ring, job errors.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dev/npu_dev.h"
#include "npu/npu_hw.h"
#include "npu_test.h"

static void dma_twu(struct npu_hw_twu *t, uint64_t va, uint32_t n)
{
	memset(t, 0, sizeof(*t));
	t->base = va;
	t->space = NPU_SPACE_DDR;
	t->dtype = NPU_DT_UINT8;
	t->nlevels = 1;
	t->level[0].step = 1;
	t->level[0].final = (int32_t)n - 1;
}

/* A program in @cmd: one DMA copy of @n bytes from @src to @dst. */
static uint32_t write_copy(npu_dev_bo *cmd, uint64_t src, uint64_t dst,
			   uint32_t n)
{
	struct npu_hw_prog *hdr = cmd->host;
	struct npu_hw_insn *in = (struct npu_hw_insn *)(hdr + 1);

	memset(hdr, 0, sizeof(*hdr) + sizeof(*in));
	hdr->magic = NPU_PROG_MAGIC;
	hdr->version_major = NPU_PROG_VERSION_MAJOR;
	hdr->version_minor = NPU_PROG_VERSION_MINOR;
	hdr->insn_count = 1;
	hdr->insn_offset = sizeof(*hdr);
	in->unit = NPU_UNIT_DMA;
	in->opcode = NPU_DMA_COPY;
	dma_twu(&in->opnd[NPU_OPND_SRC0], src, n);
	dma_twu(&in->opnd[NPU_OPND_DST], dst, n);
	return sizeof(*hdr) + sizeof(*in);
}

struct rig {
	npu_device *dev;
	npu_dev_ctx *ctx;
	npu_dev_bo *cmd, *a, *b;
};

static void rig_open(struct rig *r, const char *spec, uint32_t clusters)
{
	memset(r, 0, sizeof(*r));
	ck_assert_int_eq(npu_device_open(spec, &r->dev), NPU_OK);
	ck_assert_int_eq(r->dev->ops->ctx_create(r->dev, clusters, &r->ctx), NPU_OK);
	ck_assert_int_eq(npu_dev_bo_create(r->dev, 4096, NPU_DEV_BO_DEVICE_RO, &r->cmd), NPU_OK);
	ck_assert_int_eq(npu_dev_bo_create(r->dev, 100000, 0, &r->a), NPU_OK);
	ck_assert_int_eq(npu_dev_bo_create(r->dev, 100000, 0, &r->b), NPU_OK);
}

static void rig_close(struct rig *r)
{
	npu_dev_bo_free(r->dev, r->cmd);
	npu_dev_bo_free(r->dev, r->a);
	npu_dev_bo_free(r->dev, r->b);
	r->dev->ops->ctx_destroy(r->ctx);
	npu_device_close(r->dev);
}

/* Run the program of @size bytes already in r->cmd. */
static npu_status run_cmd(struct rig *r, uint32_t size)
{
	npu_dev_use uses[2] = {
		{ r->a, NPU_DEV_USE_READ }, { r->b, NPU_DEV_USE_WRITE },
	};
	npu_dev_job *job;
	npu_status st;

	st = r->dev->ops->submit(r->ctx, r->cmd, 0, size, uses, 2, 0, &job);
	if (st)
		return st;
	st = r->dev->ops->job_wait(job, 10ll * 1000000000);
	if (!st)
		ck_assert_uint_gt(r->dev->ops->job_cycles(job), 0);
	r->dev->ops->job_free(job);
	return st;
}

static npu_status run_copy(struct rig *r, uint64_t src, uint32_t n)
{
	return run_cmd(r, write_copy(r->cmd, src, r->b->dev_addr, n));
}

START_TEST(emu_info)
{
	npu_device_info info;
	npu_device *dev;

	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_int_eq(npu_device_get_info(dev, &info), NPU_OK);
	ck_assert_int_eq(info.backend, NPU_BACKEND_EMU);
	ck_assert_uint_eq(info.clusters, NPU_M100_CLUSTERS);
	ck_assert_uint_eq(info.healthy_clusters, NPU_M100_CLUSTERS);
	ck_assert_uint_eq(info.tpbs_per_cluster, NPU_M100_TPBS_PER_CLUSTER);
	npu_device_close(dev);

	ck_assert_int_eq(npu_device_open("emu:defect-mask=0x2001", &dev), NPU_OK);
	ck_assert_int_eq(npu_device_get_info(dev, &info), NPU_OK);
	ck_assert_uint_eq(info.defect_mask, 0x2001);
	ck_assert_uint_eq(info.healthy_clusters, NPU_M100_CLUSTERS - 2);
	ck_assert_uint_eq(info.healthy_mask & info.defect_mask, 0);
	npu_device_close(dev);
}
END_TEST

START_TEST(open_errors)
{
	npu_device *dev = (npu_device *)1;

	ck_assert_int_eq(npu_device_open("/dev/accel/does-not-exist", &dev), NPU_ERR_NO_DEVICE);
	ck_assert_ptr_null(dev);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "/dev/accel/does-not-exist"));
	ck_assert_int_eq(npu_device_open("emu:bogus=1", &dev), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "bogus"));
	ck_assert_int_eq(npu_device_open("emu:defect-mask=0x3fff", &dev), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "fuses every cluster"));
	ck_assert_int_eq(npu_device_open("emu:clusters=x", &dev), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_device_open("emu", NULL), NPU_ERR_INVALID_ARG);
}
END_TEST

START_TEST(device_list_has_emu)
{
	npu_device_info infos[8];
	size_t n = 0;

	ck_assert_int_eq(npu_device_list(infos, 8, &n), NPU_OK);
	ck_assert_uint_ge(n, 1);
	ck_assert_str_eq(infos[n - 1].path, "emu");
	ck_assert_int_eq(npu_device_list(NULL, 0, &n), NPU_OK);
	ck_assert_int_eq(npu_device_list(NULL, 0, NULL), NPU_ERR_INVALID_ARG);
}
END_TEST

START_TEST(emu_runs_a_copy)
{
	struct rig r;
	uint8_t *a, *b;

	rig_open(&r, "emu", 2);
	a = r.a->host;
	b = r.b->host;
	for (int i = 0; i < 100000; i++)
		a[i] = (uint8_t)(i * 7 + 3);
	ck_assert_int_eq(run_copy(&r, r.a->dev_addr, 100000), NPU_OK);
	ck_assert_mem_eq(a, b, 100000);
	rig_close(&r);
}
END_TEST

/*
 * A sealed program (the host's promise not to write it again) runs again
 * and again on the data of each run: the device keeps its decoding, not
 * what the program read.
 */
START_TEST(emu_sealed_program_reruns)
{
	struct rig r;
	uint32_t size;

	rig_open(&r, "emu", 1);
	size = write_copy(r.cmd, r.a->dev_addr, r.b->dev_addr, 4096);
	npu_dev_bo_seal(r.dev, r.cmd);
	for (int run = 0; run < 3; run++) {
		memset(r.a->host, 0x30 + run, 4096);
		ck_assert_int_eq(run_cmd(&r, size), NPU_OK);
		ck_assert_mem_eq(r.a->host, r.b->host, 4096);
	}
	/* Sealing a writable buffer does nothing: it stays the host's. */
	npu_dev_bo_seal(r.dev, r.a);
	memset(r.a->host, 0x40, 4096);
	ck_assert_int_eq(run_cmd(&r, size), NPU_OK);
	ck_assert_mem_eq(r.a->host, r.b->host, 4096);
	rig_close(&r);
}
END_TEST

/* A write to a sealed buffer faults where it is made (not a stale run). */
START_TEST(emu_sealed_buffer_is_read_only)
{
	struct rig r;

	rig_open(&r, "emu", 1);
	write_copy(r.cmd, r.a->dev_addr, r.b->dev_addr, 16);
	npu_dev_bo_seal(r.dev, r.cmd);
	ck_assert_uint_eq(((volatile uint8_t *)r.cmd->host)[0],
			  NPU_PROG_MAGIC & 0xff);
	/* The sanitizers' handler would turn the fault into an abort. */
	signal(SIGSEGV, SIG_DFL);
	((volatile uint8_t *)r.cmd->host)[0] = 0;
	ck_abort_msg("a sealed buffer took a write");
}
END_TEST

/* The same program gives the same bytes whatever clusters are fused. */
START_TEST(emu_defect_masks)
{
	static const char *const specs[] = {
		"emu", "emu:defect-mask=0x1", "emu:defect-mask=0x2001",
		"emu:defect-mask=0x0180", "emu:clusters=4,mesh=3x2,defect-mask=0x2",
	};

	for (size_t s = 0; s < sizeof(specs) / sizeof(specs[0]); s++) {
		struct rig r;

		rig_open(&r, specs[s], 1);
		ck_assert_uint_eq(r.ctx->cluster_mask & r.dev->info.defect_mask, 0);
		for (int i = 0; i < 5000; i++)
			((uint8_t *)r.a->host)[i] = (uint8_t)(i ^ 0x5a);
		ck_assert_int_eq(run_copy(&r, r.a->dev_addr, 5000), NPU_OK);
		ck_assert_mem_eq(r.a->host, r.b->host, 5000);
		rig_close(&r);
	}
}
END_TEST

START_TEST(emu_partitions)
{
	npu_dev_ctx *c[3] = { NULL };
	npu_device *dev;

	ck_assert_int_eq(npu_device_open("emu:defect-mask=0x81", &dev), NPU_OK);
	ck_assert_int_eq(dev->ops->ctx_create(dev, 8, &c[0]), NPU_OK);
	ck_assert_int_eq(__builtin_popcount(c[0]->cluster_mask), 8);
	ck_assert_int_eq(dev->ops->ctx_create(dev, 4, &c[1]), NPU_OK);
	ck_assert_uint_eq(c[0]->cluster_mask & c[1]->cluster_mask, 0);
	ck_assert_uint_ne(c[0]->queue, c[1]->queue);
	/* 12 healthy, 12 taken. */
	ck_assert_int_eq(dev->ops->ctx_create(dev, 1, &c[2]), NPU_ERR_BUSY);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "0 of 12"));
	ck_assert_int_eq(dev->ops->ctx_create(dev, 13, &c[2]), NPU_ERR_INVALID_ARG);
	dev->ops->ctx_destroy(c[0]);
	ck_assert_int_eq(dev->ops->ctx_create(dev, 8, &c[2]), NPU_OK);
	dev->ops->ctx_destroy(c[1]);
	dev->ops->ctx_destroy(c[2]);
	npu_device_close(dev);
}
END_TEST

START_TEST(emu_job_fault)
{
	struct rig r;

	rig_open(&r, "emu", 1);
	/* Read an address nobody mapped: the job ends with an MMU fault. */
	ck_assert_int_eq(run_copy(&r, 0x7000000000ull, 64), NPU_ERR_JOB_FAILED);
	ck_assert_msg(strstr(npu_last_error(), "0x7000000000"), "%s", npu_last_error());
	/* The device core's own account of it, with why. */
	ck_assert_msg(strstr(npu_last_error(),
			     "MMU fault: read of device address 0x7000000000"),
		      "%s", npu_last_error());
	ck_assert_msg(strstr(npu_last_error(), "not mapped"), "%s", npu_last_error());
	/* The next job is fine. */
	memset(r.a->host, 0x42, 64);
	ck_assert_int_eq(run_copy(&r, r.a->dev_addr, 64), NPU_OK);
	ck_assert_uint_eq(((uint8_t *)r.b->host)[63], 0x42);
	rig_close(&r);
}
END_TEST

/* A buffer freed and its address reused by nobody: a stale job faults. */
START_TEST(emu_freed_buffer_unmapped)
{
	struct rig r;
	uint64_t old;

	rig_open(&r, "emu", 1);
	ck_assert_int_eq(run_copy(&r, r.a->dev_addr, 64), NPU_OK);
	old = r.a->dev_addr;
	npu_dev_bo_free(r.dev, r.a);
	ck_assert_int_eq(npu_dev_bo_create(r.dev, 100000, 0, &r.a), NPU_OK);
	ck_assert_uint_ne(old, r.a->dev_addr);
	ck_assert_int_eq(run_copy(&r, old, 64), NPU_ERR_JOB_FAILED);
	rig_close(&r);
}
END_TEST

START_TEST(emu_many_jobs)
{
	npu_dev_use uses[2];
	enum { NJOBS = 600 };	/* more than twice the emulator's 255 ring slots */
	npu_dev_job *jobs[NJOBS];
	struct rig r;
	uint32_t size;

	rig_open(&r, "emu", 1);
	memset(r.a->host, 7, 1000);
	uses[0] = (npu_dev_use){ r.a, NPU_DEV_USE_READ };
	uses[1] = (npu_dev_use){ r.b, NPU_DEV_USE_WRITE };
	size = write_copy(r.cmd, r.a->dev_addr, r.b->dev_addr, 1000);
	/* More jobs than ring entries: submit waits for room. */
	for (int i = 0; i < NJOBS; i++)
		ck_assert_int_eq(r.dev->ops->submit(r.ctx, r.cmd, 0, size, uses, 2, 0, &jobs[i]), NPU_OK);
	for (int i = 0; i < NJOBS; i++) {
		ck_assert_int_eq(r.dev->ops->job_wait(jobs[i], -1), NPU_OK);
		r.dev->ops->job_free(jobs[i]);
	}
	ck_assert_uint_eq(((uint8_t *)r.b->host)[999], 7);
	rig_close(&r);
}
END_TEST

/* Count the entries of a list line "key: a b c" and sum them. */
static int list_stats(const char *text, const char *key, uint64_t *sum, uint64_t *first,
		      uint64_t *last)
{
	const char *p = strstr(text, key);
	int n = 0;

	*sum = *first = *last = 0;
	if (!p)
		return -1;
	p += strlen(key);
	while (*p == ' ') {
		uint64_t v = strtoull(p, (char **)&p, 10);

		*sum += v;
		if (!n)
			*first = v;
		*last = v;
		n++;
	}
	return n;
}

/* The emulator shows itself to monitors through a stats file (npu-top). */
START_TEST(emu_stats_file)
{
	char dir[] = "/tmp/npu-stats-XXXXXX", path[64], text[4096] = "";
	struct rig r;
	npu_device *second;
	npu_dev_ctx *extra;
	uint64_t sum, first, last;
	size_t n;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("NPU_EMU_STATS_DIR", dir, 1);
	snprintf(path, sizeof(path), "%s/%d", dir, (int)getpid());
	rig_open(&r, "emu:defect-mask=0x2001", 2);
	/* One publisher per process: a second emulator writes nothing. */
	ck_assert_int_eq(npu_device_open("emu", &second), NPU_OK);
	ck_assert_int_eq(run_copy(&r, r.a->dev_addr, 100000), NPU_OK);
	/* A context change forces a write with the job's counters. */
	ck_assert_int_eq(r.dev->ops->ctx_create(r.dev, 1, &extra), NPU_OK);
	r.dev->ops->ctx_destroy(extra);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	ck_assert_uint_gt(n, 0);
	ck_assert_ptr_nonnull(strstr(text, "defect_mask: 0x2001\n"));
	ck_assert_ptr_nonnull(strstr(text, "jobs: 1\n"));
	ck_assert_ptr_nonnull(strstr(text, "contexts: 1\n"));
	ck_assert_ptr_null(strstr(text, "cycles: 0\n"));
	ck_assert_int_eq(list_stats(text, "cluster_busy:", &sum, &first, &last), 14);
	ck_assert_uint_eq(first, 0);	/* fused */
	ck_assert_uint_eq(last, 0);	/* fused */
	/* The copy is DDR to DDR: no cluster works and the mesh carries
	 * nothing (DDR is the CCB's port), but a DMA engine does. */
	ck_assert_int_eq(list_stats(text, "link_bytes:", &sum, &first, &last), 64);
	ck_assert_uint_eq(sum, 0);
	ck_assert_int_eq(list_stats(text, "dma_bytes:", &sum, &first, &last), 2);
	ck_assert_uint_gt(sum, 0);
	ck_assert_int_eq(list_stats(text, "unit_busy:", &sum, &first, &last), 56);
	npu_device_close(second);
	rig_close(&r);
	/* Closing the publisher removes its file. */
	ck_assert_int_ne(access(path, F_OK), 0);
	ck_assert_int_eq(rmdir(dir), 0);
	unsetenv("NPU_EMU_STATS_DIR");
}
END_TEST

static Suite *device_suite(void)
{
	Suite *s = suite_create("npu_device");
	TCase *tc = tcase_create("emu");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, emu_info);
	tcase_add_test(tc, open_errors);
	tcase_add_test(tc, device_list_has_emu);
	tcase_add_test(tc, emu_runs_a_copy);
	tcase_add_test(tc, emu_sealed_program_reruns);
	tcase_add_test_raise_signal(tc, emu_sealed_buffer_is_read_only, SIGSEGV);
	tcase_add_test(tc, emu_defect_masks);
	tcase_add_test(tc, emu_partitions);
	tcase_add_test(tc, emu_job_fault);
	tcase_add_test(tc, emu_freed_buffer_unmapped);
	tcase_add_test(tc, emu_many_jobs);
	tcase_add_test(tc, emu_stats_file);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(device_suite)
