/* SPDX-License-Identifier: MIT */
/*
 * Scrub between contexts (Documentation/driver.md, "Scrub between
 * contexts"): HBSM and the CCB SRAM window keep their contents across
 * tasks and are not behind the MMU, so the driver zeroes them when clusters
 * or SRAM pass from one context to another, and only then.
 *
 * Context A writes a pattern into the last 64 KiB of every TPB's HBSM of
 * its partition (DMA to HBSM_REMOTE) and into the first and last 64 KiB of
 * its SRAM window; context B reads the same bytes back into a BO through a GSDU
 * chain (HBSM_REMOTE and SRAM sources).  Within one context B sees the
 * pattern (no scrub between jobs of a context); across contexts, after A's
 * file is closed or A's process is killed mid-job, it sees zeros.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "npu_gt.h"

#define SC_R		(64u << 10)	/* pattern bytes per TPB and in SRAM */
#define SC_CHAIN_OFF	4096u		/* GSDU chain offset in the command BO */
#define SC_CMD_SIZE	(64u << 10)
#define SC_SEED		77u
#define SC_FILL_VALUE	0x5a5a5a5au
#define SC_CAL_REPS	32u		/* iterations of the first calibration fill */
#define SC_MAX_REPS	(1u << 20)	/* 2^20 x 32768 cycles: within 60 s */
#define SC_KILL_MS	1500u		/* wanted length of the killed job */

/* A partition as CTX_CREATE returned it. */
struct sc_part {
	uint32_t ctx_id;
	uint32_t n;
	uint32_t mask;
	uint8_t map[GT_MAX_CLUSTERS];
	uint32_t sram_base;
	uint32_t sram_size;
};

/* Per file: the command, pattern and result BOs. */
struct sc_io {
	int fd;
	struct gt_bo cmd, pat, out;
	uint32_t regions;	/* HBSM regions read back, then one SRAM */
	uint32_t timeout_ms;	/* of the next submits (0: default) */
};

static int sc_ctx(int fd, uint32_t n, struct sc_part *p, unsigned ms)
{
	struct drm_npu_ctx_create cc;
	int rc = gt_ctx_create_retry(fd, n, DRM_NPU_PRIORITY_NORMAL, &cc, ms);

	if (rc)
		return gt_fail(rc, "CTX_CREATE(%u clusters): %s", n, strerror(-rc));
	p->ctx_id = cc.ctx_id;
	p->n = n;
	p->mask = cc.cluster_mask;
	memcpy(p->map, cc.cluster_map, sizeof(p->map));
	p->sram_base = cc.sram_base;
	p->sram_size = cc.sram_size;
	return 0;
}

static int sc_io_init(int fd, struct sc_io *io)
{
	int rc;

	memset(io, 0, sizeof(*io));
	io->fd = fd;
	io->regions = GT_MAX_CLUSTERS * NPU_HW_MAX_TPBS_PER_CLUSTER;
	rc = gt_bo_create(fd, SC_CMD_SIZE, 0, &io->cmd);
	if (!rc)
		rc = gt_bo_create(fd, SC_R, 0, &io->pat);
	if (!rc)
		rc = gt_bo_create(fd, (uint64_t)(io->regions + 1) * SC_R, 0, &io->out);
	if (!rc)
		rc = gt_bo_mmap(fd, &io->cmd);
	if (!rc)
		rc = gt_bo_mmap(fd, &io->pat);
	if (!rc)
		rc = gt_bo_mmap(fd, &io->out);
	if (rc)
		return gt_fail(rc, "BO setup: %s", strerror(-rc));
	gt_fill(io->pat.map, SC_R, SC_SEED);
	return 0;
}

static void sc_io_fini(struct sc_io *io)
{
	gt_bo_free(io->fd, &io->cmd);
	gt_bo_free(io->fd, &io->pat);
	gt_bo_free(io->fd, &io->out);
}

static struct npu_hw_insn *sc_prog(struct sc_io *io, uint32_t ninsn)
{
	struct npu_hw_prog *h = io->cmd.map;

	memset(io->cmd.map, 0, SC_CMD_SIZE);
	h->magic = NPU_PROG_MAGIC;
	h->version_major = NPU_PROG_VERSION_MAJOR;
	h->version_minor = NPU_PROG_VERSION_MINOR;
	h->insn_count = ninsn;
	h->insn_offset = sizeof(*h);
	return (struct npu_hw_insn *)(h + 1);
}

static void sc_twu(struct npu_hw_twu *t, uint8_t space, uint64_t base,
		   uint32_t bytes)
{
	t->space = space;
	t->dtype = NPU_DT_UINT8;
	t->base = base;
	t->nlevels = 1;
	t->level[0].initial = 0;
	t->level[0].step = 1;
	t->level[0].final = (int32_t)bytes - 1;
}

/* Submit the program in io->cmd (@ninsn instructions), wait, check OK. */
static int sc_run(struct sc_io *io, uint32_t ctx_id, uint32_t ninsn, bool wait)
{
	struct drm_npu_bo_ref refs[2] = {
		{ io->pat.handle, DRM_NPU_BO_REF_READ },
		{ io->out.handle, DRM_NPU_BO_REF_WRITE },
	};
	struct drm_npu_submit s = {
		.ctx_id = ctx_id,
		.cmd_handle = io->cmd.handle,
		.cmd_size = sizeof(struct npu_hw_prog) + ninsn * NPU_INSN_SIZE,
		.bos = (uintptr_t)refs,
		.bo_count = 2,
		.timeout_ms = io->timeout_ms,
	};
	uint32_t so;
	int rc, st;

	rc = gt_syncobj_create(io->fd, 0, &so);
	if (rc)
		return gt_fail(rc, "SYNCOBJ_CREATE: %s", strerror(-rc));
	s.out_sync = so;
	rc = gt_submit(io->fd, &s);
	if (rc || !wait) {
		if (rc)
			gt_fail(rc, "SUBMIT: %s", strerror(-rc));
		gt_syncobj_destroy(io->fd, so);
		return rc;
	}
	rc = gt_syncobj_wait(io->fd, &so, 1, GT_WAIT_NS);
	st = gt_fence_status(io->fd, so);
	gt_syncobj_destroy(io->fd, so);
	if (rc)
		return gt_fail(rc, "SYNCOBJ_WAIT: %s", strerror(-rc));
	if (st != 1)
		return gt_fail(-EIO, "job failed: fence status %d (%s)", st,
			       gt_ctx_str(io->fd, ctx_id));
	return 0;
}

/* Offsets A writes: the end of each HBSM and of its SRAM window. */
static uint32_t sc_hbsm_off(void)
{
	return G.info.hbsm_size - SC_R;
}

static uint32_t sc_sram_off(const struct sc_part *p)
{
	return p->sram_size - SC_R;
}

/* The pattern into every TPB of @p (broadcast) and both ends of its SRAM window. */
static int sc_write(struct sc_io *io, const struct sc_part *p)
{
	struct npu_hw_insn *in = sc_prog(io, 3);
	struct npu_hw_twu *d;

	for (unsigned i = 0; i < 3; i++) {
		in[i].unit = NPU_UNIT_DMA;
		in[i].opcode = NPU_DMA_COPY;
		in[i].params.dma.engine = i % 2;
		sc_twu(&in[i].opnd[NPU_OPND_SRC0], NPU_SPACE_DDR, io->pat.dev_addr, SC_R);
	}
	d = &in[0].opnd[NPU_OPND_DST];
	sc_twu(d, NPU_SPACE_HBSM_REMOTE, sc_hbsm_off(), SC_R);
	d->cluster_mask = (uint16_t)((1u << p->n) - 1);
	d->tpb_mask = (uint8_t)((1u << G.info.tpbs_per_cluster) - 1);
	sc_twu(&in[1].opnd[NPU_OPND_DST], NPU_SPACE_SRAM, sc_sram_off(p), SC_R);
	sc_twu(&in[2].opnd[NPU_OPND_DST], NPU_SPACE_SRAM, 0, SC_R);
	return sc_run(io, p->ctx_id, 3, true);
}

/*
 * Read back, on context @p, every TPB of the logical clusters in @lmask
 * (SC_R bytes at sc_hbsm_off()) and the first and last SC_R bytes of the
 * SRAM window of @owner (inside @p's), into io->out: region k = the k-th
 * (cluster, TPB), then the two SRAM regions.
 */
static int sc_read(struct sc_io *io, const struct sc_part *p, uint32_t lmask,
		   const struct sc_part *owner, uint32_t *nregions)
{
	struct npu_hw_insn *in = sc_prog(io, 1);
	struct npu_hw_gsdu_desc *chain =
		(struct npu_hw_gsdu_desc *)((char *)io->cmd.map + SC_CHAIN_OFF);
	uint64_t chain_va = io->cmd.dev_addr + SC_CHAIN_OFF;
	uint32_t k = 0;

	memset(io->out.map, 0xee, io->out.size);
	in[0].unit = NPU_UNIT_CSU;
	in[0].opcode = NPU_CSU_GSDU;
	in[0].cluster_mask = 1;
	in[0].tpb_mask = 1;
	in[0].params.csu.chain_space = NPU_SPACE_DDR;
	in[0].params.csu.chain_addr = chain_va;
	for (unsigned c = 0; c < p->n; c++) {
		if (!(lmask & (1u << c)))
			continue;
		for (unsigned t = 0; t < G.info.tpbs_per_cluster; t++, k++) {
			chain[k].src_space = NPU_SPACE_HBSM_REMOTE;
			chain[k].src = sc_hbsm_off();
			chain[k].src_cluster = (uint16_t)c;
			chain[k].src_tpb = (uint8_t)t;
		}
	}
	chain[k].src_space = NPU_SPACE_SRAM;
	chain[k++].src = owner->sram_base - p->sram_base + sc_sram_off(owner);
	chain[k].src_space = NPU_SPACE_SRAM;
	chain[k++].src = owner->sram_base - p->sram_base;
	for (uint32_t i = 0; i < k; i++) {
		chain[i].dst_space = NPU_SPACE_DDR;
		chain[i].dst = io->out.dev_addr + (uint64_t)i * SC_R;
		chain[i].rows = 1;
		chain[i].row_bytes = SC_R;
		chain[i].src_stride = SC_R;
		chain[i].dst_stride = SC_R;
		chain[i].next = i + 1 < k ? chain_va + (i + 1) * sizeof(*chain) : 0;
	}
	*nregions = k;
	return sc_run(io, p->ctx_id, 1, true);
}

/* Every region is the pattern (@want_pattern) or all zero. */
static int sc_expect(const struct sc_io *io, uint32_t k, bool want_pattern)
{
	for (uint32_t i = 0; i < k; i++) {
		const uint8_t *r = (const uint8_t *)io->out.map + (uint64_t)i * SC_R;
		const char *what = i + 2 >= k ? "SRAM" : "HBSM";

		if (want_pattern) {
			int64_t bad = gt_check(r, SC_R, SC_SEED);

			if (bad >= 0)
				return gt_fail(-EIO, "region %u (%s): byte %" PRId64
					       " is 0x%02x, not the pattern 0x%02x", i,
					       what, bad, r[bad], gt_pattern(bad, SC_SEED));
		} else if (!gt_all_zero(r, SC_R)) {
			uint32_t j = 0;

			while (!r[j])
				j++;
			return gt_fail(-EIO, "region %u (%s): byte %u is 0x%02x: "
				       "another context's data was not scrubbed",
				       i, what, j, r[j]);
		}
	}
	return 0;
}

/* debugfs "scrub"; fields are -1 when absent. */
struct sc_stats {
	long long scrubs, failed, last_clusters, last_sram, last_cycles, last_ns;
};

/*
 * Owner A: a 1-cluster context on its own file writes the pattern into its
 * HBSM and SRAM, then closes the file, leaving the partition (in @a) dirty.
 */
static void sc_leave_pattern(struct sc_part *a)
{
	struct sc_io io;
	int fa = gt_open();

	ck_assert_int_ge(fa, 0);
	ck_assert_msg(sc_ctx(fa, 1, a, 10000) == 0, "%s", gt_msg);
	ck_assert_msg(sc_io_init(fa, &io) == 0, "%s", gt_msg);
	ck_assert_msg(sc_write(&io, a) == 0, "A write: %s", gt_msg);
	sc_io_fini(&io);
	close(fa);
}

static int sc_stats(struct sc_stats *st)
{
	char path[256], line[128];
	long long v;
	FILE *f;

	memset(st, 0xff, sizeof(*st));
	if (gt_debugfs_path("scrub", path, sizeof(path)))
		return -ENOENT;
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "scrubs: %lld", &v) == 1)
			st->scrubs = v;
		else if (sscanf(line, "failed: %lld", &v) == 1)
			st->failed = v;
		else if (sscanf(line, "last_clusters: %lld", &v) == 1)
			st->last_clusters = v;
		else if (sscanf(line, "last_sram_bytes: %lld", &v) == 1)
			st->last_sram = v;
		else if (sscanf(line, "last_cycles: %lld", &v) == 1)
			st->last_cycles = v;
		else if (sscanf(line, "last_ns: %lld", &v) == 1)
			st->last_ns = v;
	}
	fclose(f);
	return 0;
}

/* One more scrub than @before, of @n clusters; print its cost. */
static void sc_expect_scrubbed(const struct sc_stats *before, uint32_t n,
			       const char *what)
{
	struct sc_stats st;

	if (before->scrubs < 0 || sc_stats(&st)) {
		fprintf(stderr, "scrub %s: no debugfs \"scrub\": cost not measured\n", what);
		return;
	}
	ck_assert_msg(st.scrubs == before->scrubs + 1,
		      "%s: scrubs %lld -> %lld, expected one more", what,
		      before->scrubs, st.scrubs);
	ck_assert_msg(st.failed == before->failed, "%s: a scrub failed", what);
	ck_assert_msg(st.last_clusters == n, "%s: last scrub of %lld clusters, expected %u",
		      what, st.last_clusters, n);
	ck_assert_msg(st.last_cycles > 0, "%s: the scrub took 0 cycles", what);
	printf("npu-guest-test: scrub %s: %u cluster(s), %lld SRAM bytes: %lld cycles, %lld us\n",
	       what, n, st.last_sram, st.last_cycles, st.last_ns / 1000);
}

/* Wait until every healthy cluster is free (earlier tests' files). */
static void sc_all_free(int fd)
{
	struct sc_part all;

	ck_assert_msg(sc_ctx(fd, G.info.healthy_clusters, &all, 10000) == 0, "%s", gt_msg);
	ck_assert_int_eq(gt_ctx_destroy(fd, all.ctx_id), 0);
}

/* Negative control: jobs of one context see what earlier ones left. */
START_TEST(scrub_same_ctx_keeps)
{
	gt_begin("scrub_same_ctx_keeps");
	struct sc_part p;
	struct sc_io io;
	uint32_t k;

	ck_assert_msg(sc_ctx(G.fd, 1, &p, 10000) == 0, "%s", gt_msg);
	ck_assert_msg(sc_io_init(G.fd, &io) == 0, "%s", gt_msg);
	ck_assert_msg(sc_write(&io, &p) == 0, "write: %s", gt_msg);
	ck_assert_msg(sc_read(&io, &p, 1, &p, &k) == 0, "read: %s", gt_msg);
	ck_assert_uint_eq(k, G.info.tpbs_per_cluster + 2);
	ck_assert_msg(sc_expect(&io, k, true) == 0,
		      "the same context's second job: %s", gt_msg);
	sc_io_fini(&io);
	ck_assert_int_eq(gt_ctx_destroy(G.fd, p.ctx_id), 0);
}
END_TEST

/* A writes and closes its file; B gets the same cluster and window. */
START_TEST(scrub_after_close)
{
	gt_begin("scrub_after_close");
	struct sc_part a, b;
	struct sc_stats st;
	struct sc_io io;
	int fb;
	uint32_t k;

	sc_all_free(G.fd);
	sc_leave_pattern(&a);

	fb = gt_open();
	ck_assert_int_ge(fb, 0);
	ck_assert_msg(sc_ctx(fb, 1, &b, 10000) == 0, "%s", gt_msg);
	ck_assert_msg(b.mask == a.mask && b.sram_base == a.sram_base &&
		      b.sram_size == a.sram_size,
		      "B did not get A's partition: cluster mask 0x%x vs 0x%x, SRAM 0x%x+0x%x vs 0x%x+0x%x",
		      b.mask, a.mask, b.sram_base, b.sram_size, a.sram_base, a.sram_size);
	sc_stats(&st);
	ck_assert_msg(sc_io_init(fb, &io) == 0, "%s", gt_msg);
	ck_assert_msg(sc_read(&io, &b, 1, &b, &k) == 0, "B read: %s", gt_msg);
	ck_assert_msg(sc_expect(&io, k, false) == 0, "%s", gt_msg);
	sc_expect_scrubbed(&st, 1, "1-cluster partition");

	/* B's own data now stays for B's next job. */
	ck_assert_msg(sc_write(&io, &b) == 0, "B write: %s", gt_msg);
	ck_assert_msg(sc_read(&io, &b, 1, &b, &k) == 0, "B read: %s", gt_msg);
	ck_assert_msg(sc_expect(&io, k, true) == 0, "B's own data: %s", gt_msg);
	sc_io_fini(&io);
	close(fb);
}
END_TEST

/* A job filling every TPB of logical cluster 0 with SC_FILL_VALUE @reps times. */
static int sc_fill(struct sc_io *io, const struct sc_part *p, uint32_t reps,
		   bool wait)
{
	struct npu_hw_insn *in = sc_prog(io, 1);
	struct npu_hw_twu *d = &in[0].opnd[NPU_OPND_DST];

	in[0].unit = NPU_UNIT_DTDU;
	in[0].opcode = NPU_DTDU_FILL;
	in[0].cluster_mask = 1;
	in[0].tpb_mask = (uint8_t)((1u << G.info.tpbs_per_cluster) - 1);
	in[0].repeat_levels = 1;
	in[0].params.dtdu.value = SC_FILL_VALUE;
	d->space = NPU_SPACE_HBSM;
	d->dtype = NPU_DT_INT32;
	d->nlevels = 2;
	d->level[0].step = 4;
	d->level[0].final = (int32_t)G.info.hbsm_size - 4;
	d->level[1].final = (int32_t)reps;	/* broadcast level: the repeat */
	return sc_run(io, p->ctx_id, 1, wait);
}

/* What child A reports once its long job is submitted. */
struct sc_child {
	struct sc_part a;
	uint32_t reps;
	uint32_t cal_reps;
	uint32_t hung;
	int64_t cal_ns;
};

static void sc_child_a(int wfd)
{
	struct sc_child r;
	struct sc_io io;
	int64_t t0, reps;
	int fa = gt_open();

	memset(&r, 0, sizeof(r));
	if (fa < 0 || sc_ctx(fa, 1, &r.a, 10000) || sc_io_init(fa, &io) ||
	    sc_write(&io, &r.a))
		_exit(1);
	io.timeout_ms = DRM_NPU_MAX_TIMEOUT_MS;
	/*
	 * Timing mode holds the guest's clock while the host executes a task,
	 * so no guest-visible window is sure to fall inside a running fill:
	 * there A's last job hangs instead (debugfs inject_hang) until the
	 * watchdog resets the device.
	 */
	if (G.info.caps & NPU_CAP_TIMING &&
	    gt_debugfs_write("inject_hang", "1") == 0) {
		r.hung = 1;
		r.reps = SC_CAL_REPS;
		if (sc_fill(&io, &r.a, r.reps, false))
			_exit(3);
		if (write(wfd, &r, sizeof(r)) != sizeof(r))
			_exit(4);
		for (;;)
			pause();
	}
	/*
	 * Calibrate until one fill takes at least 200 ms (fixed costs then
	 * matter little), then size the long job for about SC_KILL_MS.
	 */
	for (r.cal_reps = SC_CAL_REPS;; r.cal_reps *= 4) {
		t0 = gt_now_ns();
		if (sc_fill(&io, &r.a, r.cal_reps, true))
			_exit(2);
		r.cal_ns = gt_now_ns() - t0;
		if (r.cal_ns >= 200000000 || r.cal_reps >= SC_MAX_REPS / 4)
			break;
	}
	reps = (int64_t)SC_KILL_MS * 1000000 * r.cal_reps / r.cal_ns;
	r.reps = (uint32_t)(reps < r.cal_reps ? r.cal_reps :
			    reps > SC_MAX_REPS ? SC_MAX_REPS : reps);
	if (sc_fill(&io, &r.a, r.reps, false))
		_exit(3);
	if (write(wfd, &r, sizeof(r)) != sizeof(r))
		_exit(4);
	for (;;)
		pause();
}

/*
 * A (a child process) writes the pattern, starts a long job filling its
 * HBSM with SC_FILL_VALUE and is killed by SIGKILL while that job is on
 * the device.  B takes the whole device and reads A's HBSM and SRAM
 * bytes: zeros.
 */
START_TEST(scrub_after_kill)
{
	gt_begin("scrub_after_kill");
	struct drm_npu_stats_data ds;
	struct sc_part b;
	struct sc_child r;
	struct sc_stats st;
	struct sc_io io;
	int pfd[2], status, fb;
	uint32_t lmask = 0, k;
	int64_t t0, t1;
	uint64_t open_jobs;
	pid_t pid;

	sc_all_free(G.fd);
	/* Jobs never run (cancelled) stay submitted and not completed. */
	ck_assert_int_eq(gt_stats(G.fd, &ds), 0);
	open_jobs = ds.jobs_submitted - ds.jobs_completed;
	ck_assert_int_eq(pipe(pfd), 0);
	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(pfd[0]);
		sc_child_a(pfd[1]);
	}
	close(pfd[1]);
	ck_assert_msg(read(pfd[0], &r, sizeof(r)) == sizeof(r),
		      "child A failed before its long job was submitted");
	close(pfd[0]);
	gt_msleep(100);
	/* Only A has jobs: one more not completed is A's fill, on the device. */
	ck_assert_int_eq(gt_stats(G.fd, &ds), 0);
	ck_assert_msg(ds.jobs_submitted - ds.jobs_completed == open_jobs + 1,
		      "A's last job (%u iterations%s) already finished: not killed mid-job "
		      "(jobs submitted %llu, completed %llu, %llu open before A)",
		      r.reps, r.hung ? ", hung" : "", (unsigned long long)ds.jobs_submitted,
		      (unsigned long long)ds.jobs_completed, (unsigned long long)open_jobs);
	t0 = gt_now_ns();
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	fb = gt_open();
	ck_assert_int_ge(fb, 0);
	/* The partition comes back once A's last job has ended. */
	ck_assert_msg(sc_ctx(fb, G.info.healthy_clusters, &b, 60000) == 0, "%s", gt_msg);
	t1 = gt_now_ns();
	if (r.hung)
		printf("npu-guest-test: scrub_after_kill: A killed with a hung job; its "
		       "partition was free %" PRId64 " ms after SIGKILL\n", (t1 - t0) / 1000000);
	else
		printf("npu-guest-test: scrub_after_kill: A killed during a %u-iteration fill "
		       "(%u iterations took %" PRId64 " ms); its partition was free %" PRId64
		       " ms after SIGKILL\n", r.reps, r.cal_reps, r.cal_ns / 1000000,
		       (t1 - t0) / 1000000);
	for (unsigned l = 0; l < b.n; l++)
		if (r.a.mask & (1u << b.map[l]))
			lmask |= 1u << l;
	ck_assert_msg(__builtin_popcount(lmask) == 1,
		      "A's cluster (mask 0x%x) not in B's map", r.a.mask);
	ck_assert_msg(r.a.sram_base >= b.sram_base &&
		      r.a.sram_base + r.a.sram_size <= b.sram_base + b.sram_size,
		      "A's SRAM window is not inside B's");
	sc_stats(&st);
	ck_assert_msg(sc_io_init(fb, &io) == 0, "%s", gt_msg);
	ck_assert_msg(sc_read(&io, &b, lmask, &r.a, &k) == 0,
		      "B read: %s", gt_msg);
	ck_assert_uint_eq(k, G.info.tpbs_per_cluster + 2);
	ck_assert_msg(sc_expect(&io, k, false) == 0, "%s", gt_msg);
	sc_expect_scrubbed(&st, G.info.healthy_clusters, "whole device");
	sc_io_fini(&io);
	close(fb);
}
END_TEST

/*
 * The scrub a new owner was due never ran: B's first job (and the scrub
 * before it) hangs (debugfs inject_hang) and is failed by the reset.  The
 * next owner C must still read zeros.
 */
START_TEST(scrub_after_hang)
{
	gt_begin("scrub_after_hang");
	struct sc_part a, b, c;
	struct sc_io io;
	uint32_t so, k;
	int fb, fc, rc, st;
	struct drm_npu_submit s;

	if (gt_debugfs_write("inject_hang", "0") == -ENOENT)
		GT_SKIP("no debugfs inject_hang");
	sc_all_free(G.fd);
	sc_leave_pattern(&a);

	fb = gt_open();
	ck_assert_int_ge(fb, 0);
	ck_assert_msg(sc_ctx(fb, 1, &b, 10000) == 0, "%s", gt_msg);
	ck_assert_msg(b.mask == a.mask && b.sram_base == a.sram_base,
		      "B did not get A's partition (0x%x vs 0x%x)", b.mask, a.mask);
	ck_assert_msg(sc_io_init(fb, &io) == 0, "%s", gt_msg);
	sc_prog(&io, 0);
	ck_assert_int_eq(gt_syncobj_create(fb, 0, &so), 0);
	memset(&s, 0, sizeof(s));
	s.ctx_id = b.ctx_id;
	s.cmd_handle = io.cmd.handle;
	s.cmd_size = sizeof(struct npu_hw_prog);
	s.out_sync = so;
	ck_assert_int_eq(gt_debugfs_write("inject_hang", "1"), 0);
	rc = gt_submit(fb, &s);
	ck_assert_msg(rc == 0, "SUBMIT: %s", strerror(-rc));
	rc = gt_syncobj_wait(fb, &so, 1, 20 * 1000000000ll);
	ck_assert_msg(rc == 0, "the hung job was not failed within 20 s: %s", strerror(-rc));
	st = gt_fence_status(fb, so);
	ck_assert_msg(st < 0 && st != GT_NO_STATUS, "the hung job ended with status %d", st);
	gt_syncobj_destroy(fb, so);
	sc_io_fini(&io);
	close(fb);

	fc = gt_open();
	ck_assert_int_ge(fc, 0);
	ck_assert_msg(sc_ctx(fc, 1, &c, 10000) == 0, "%s", gt_msg);
	ck_assert_msg(c.mask == a.mask && c.sram_base == a.sram_base,
		      "C did not get A's partition (0x%x vs 0x%x)", c.mask, a.mask);
	ck_assert_msg(sc_io_init(fc, &io) == 0, "%s", gt_msg);
	ck_assert_msg(sc_read(&io, &c, 1, &c, &k) == 0, "C read: %s", gt_msg);
	ck_assert_msg(sc_expect(&io, k, false) == 0, "%s", gt_msg);
	sc_io_fini(&io);
	close(fc);
}
END_TEST

/* An empty program (0 instructions) on @p; wall time of submit to signal. */
static int64_t sc_empty_job(struct sc_io *io, const struct sc_part *p)
{
	int64_t t0 = gt_now_ns();

	sc_prog(io, 0);
	ck_assert_msg(sc_run(io, p->ctx_id, 0, true) == 0, "empty job: %s", gt_msg);
	return gt_now_ns() - t0;
}

/*
 * Cost and count: for a 1-cluster and a whole-device partition, three
 * times: a context runs an empty job on the partition the previous one
 * used (exactly one scrub, of that size), then a second empty job (no
 * scrub).  Prints the device's cycles and wall time per scrub, and the
 * first job's extra latency as the submitter sees it.
 */
START_TEST(scrub_cost)
{
	gt_begin("scrub_cost");
	uint32_t sizes[2] = { 1, G.info.healthy_clusters };
	struct sc_stats st0, st1, st2;
	struct sc_io io;
	struct sc_part p;

	if (sc_stats(&st0))
		GT_SKIP("no debugfs \"scrub\"");
	sc_all_free(G.fd);
	ck_assert_msg(sc_io_init(G.fd, &io) == 0, "%s", gt_msg);
	for (unsigned si = 0; si < 2; si++) {
		/* Make the partition dirty: a context that ran a job. */
		ck_assert_msg(sc_ctx(G.fd, sizes[si], &p, 10000) == 0, "%s", gt_msg);
		sc_empty_job(&io, &p);
		ck_assert_int_eq(gt_ctx_destroy(G.fd, p.ctx_id), 0);
		for (unsigned rep = 0; rep < 3; rep++) {
			int64_t first, second;

			ck_assert_msg(sc_ctx(G.fd, sizes[si], &p, 10000) == 0, "%s", gt_msg);
			ck_assert_int_eq(sc_stats(&st0), 0);
			first = sc_empty_job(&io, &p);
			ck_assert_int_eq(sc_stats(&st1), 0);
			second = sc_empty_job(&io, &p);
			ck_assert_int_eq(sc_stats(&st2), 0);
			ck_assert_msg(st1.scrubs == st0.scrubs + 1,
				      "%u clusters: a new owner's first job: scrubs %lld -> %lld",
				      sizes[si], st0.scrubs, st1.scrubs);
			ck_assert_msg(st2.scrubs == st1.scrubs,
				      "%u clusters: the same context's second job was scrubbed",
				      sizes[si]);
			ck_assert_msg(st1.failed == st0.failed, "a scrub failed");
			ck_assert_int_eq(st1.last_clusters, sizes[si]);
			ck_assert_int_eq(st1.last_sram, p.sram_size);
			printf("npu-guest-test: scrub_cost: %u cluster(s), %lld SRAM bytes: "
			       "%lld cycles, %lld us on the device queue; first job %" PRId64
			       " us, second %" PRId64 " us\n", sizes[si], st1.last_sram,
			       st1.last_cycles, st1.last_ns / 1000, first / 1000,
			       second / 1000);
			ck_assert_int_eq(gt_ctx_destroy(G.fd, p.ctx_id), 0);
		}
	}
	sc_io_fini(&io);
}
END_TEST

/*
 * Keep the device awake for each test: in D3hot the M100 loses HBSM and SRAM
 * (power management), which would zero them without any scrub and make the
 * zeros these tests read prove nothing, and the negative control fail.
 * No error on a kernel without runtime PM.
 */
static void sc_awake(void)
{
	gt_dev_attr_write("power/control", "on");
}

static void sc_auto(void)
{
	gt_dev_attr_write("power/control", "auto");
}

Suite *gt_suite_scrub(void)
{
	Suite *s = suite_create("scrub");
	TCase *tc = tcase_create("scrub");

	tcase_add_test(tc, scrub_same_ctx_keeps);
	tcase_add_test(tc, scrub_after_close);
	tcase_add_test(tc, scrub_after_kill);
	tcase_add_test(tc, scrub_after_hang);
	tcase_add_test(tc, scrub_cost);
	gt_add_tcase(s, tc, 90);
	/* After gt_add_tcase's fixture, which finds the device (G.minor). */
	tcase_add_checked_fixture(tc, sc_awake, sc_auto);
	return s;
}
