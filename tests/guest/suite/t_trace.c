/* SPDX-License-Identifier: MIT */
/*
 * Tracepoints (events/npu/ in tracefs): a job's submit, run and done
 * events, in that order with the same context and seqno; the MMU fault,
 * timeout and reset events of forced failures.  Each test works in its own
 * tracefs instance (instances/npu_gt_<pid>) with the global trace clock, so
 * the system's own tracing is not touched and events of different CPUs
 * are ordered.  tracefs is mounted on /sys/kernel/tracing if it is not
 * there yet; the tests skip only when the kernel has no tracefs.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npu_gt.h"

#define TR_BUF_SIZE	(4u << 20)

struct tr {
	char root[128];		/* tracefs mount */
	char inst[192];		/* our instance */
	char *buf;		/* the instance's trace, read by tr_read */
	char **lines;		/* npu event lines of buf, in order */
	unsigned nlines;
};

static bool tr_has_events(const char *root)
{
	char p[192];
	struct stat st;

	snprintf(p, sizeof(p), "%s/events", root);
	return stat(p, &st) == 0;
}

/* Find or mount tracefs; false when the kernel has none. */
static bool tr_find_root(char *out, size_t len)
{
	if (tr_has_events("/sys/kernel/tracing")) {
		snprintf(out, len, "/sys/kernel/tracing");
		return true;
	}
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0 &&
	    tr_has_events("/sys/kernel/tracing")) {
		snprintf(out, len, "/sys/kernel/tracing");
		return true;
	}
	if (tr_has_events("/sys/kernel/debug/tracing")) {
		snprintf(out, len, "/sys/kernel/debug/tracing");
		return true;
	}
	return false;
}

static int tr_write(const char *dir, const char *file, const char *val)
{
	char p[320];
	int fd, rc = 0;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	fd = open(p, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* Set up our instance with every npu event enabled; asserts. */
static bool tr_start(struct tr *t)
{
	char p[256];
	struct stat st;
	int rc;

	memset(t, 0, sizeof(*t));
	if (!tr_find_root(t->root, sizeof(t->root)))
		return false;
	snprintf(p, sizeof(p), "%s/events/npu", t->root);
	ck_assert_msg(stat(p, &st) == 0,
		      "tracefs is at %s but has no events/npu: npu.ko registered no tracepoints",
		      t->root);
	snprintf(t->inst, sizeof(t->inst), "%s/instances/npu_gt_%d", t->root, (int)getpid());
	ck_assert_msg(mkdir(t->inst, 0700) == 0, "mkdir %s: %s", t->inst, strerror(errno));
	rc = tr_write(t->inst, "trace_clock", "global");
	ck_assert_msg(rc == 0, "trace_clock global: %s", strerror(-rc));
	rc = tr_write(t->inst, "events/npu/enable", "1");
	ck_assert_msg(rc == 0, "enabling events/npu in %s: %s", t->inst, strerror(-rc));
	rc = tr_write(t->inst, "tracing_on", "1");
	ck_assert_msg(rc == 0, "tracing_on: %s", strerror(-rc));
	return true;
}

/* Stop tracing and read the npu lines of the instance's buffer. */
static void tr_read(struct tr *t)
{
	char p[256];
	size_t n = 0;
	ssize_t r;
	int fd;

	tr_write(t->inst, "events/npu/enable", "0");
	snprintf(p, sizeof(p), "%s/trace", t->inst);
	fd = open(p, O_RDONLY);
	ck_assert_msg(fd >= 0, "open %s: %s", p, strerror(errno));
	t->buf = malloc(TR_BUF_SIZE);
	ck_assert_ptr_nonnull(t->buf);
	while (n < TR_BUF_SIZE - 1 && (r = read(fd, t->buf + n, TR_BUF_SIZE - 1 - n)) > 0)
		n += r;
	close(fd);
	t->buf[n] = 0;
	t->lines = calloc(n / 16 + 1, sizeof(*t->lines));
	ck_assert_ptr_nonnull(t->lines);
	for (char *s = strtok(t->buf, "\n"); s; s = strtok(NULL, "\n"))
		if (strstr(s, " npu_"))
			t->lines[t->nlines++] = s;
}

static void tr_stop(struct tr *t)
{
	if (t->inst[0]) {
		tr_write(t->inst, "events/npu/enable", "0");
		rmdir(t->inst);
	}
	free(t->lines);
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

/* Value of " key=" in @line (a number, decimal or 0x hex); false if absent. */
static bool tr_field(const char *line, const char *key, int64_t *v)
{
	char k[40];
	const char *p;

	snprintf(k, sizeof(k), " %s=", key);
	p = strstr(line, k);
	if (!p)
		return false;
	*v = strtoll(p + strlen(k), NULL, 0);
	return true;
}

/* Index of the only @event line of context @ctx_id and seqno @seqno; -1 if
 * none; asserts there is at most one. */
static int tr_find(const struct tr *t, const char *event, uint32_t ctx_id, uint64_t seqno)
{
	char name[48];
	int found = -1;

	snprintf(name, sizeof(name), " %s: ", event);
	for (unsigned i = 0; i < t->nlines; i++) {
		int64_t c, s;

		if (!strstr(t->lines[i], name) || !tr_field(t->lines[i], "ctx_id", &c) ||
		    !tr_field(t->lines[i], "seqno", &s))
			continue;
		if (c != ctx_id || (uint64_t)s != seqno)
			continue;
		ck_assert_msg(found < 0, "two %s events for ctx_id %u seqno %" PRIu64 ":\n%s\n%s",
			      event, ctx_id, seqno, t->lines[found], t->lines[i]);
		found = (int)i;
	}
	return found;
}

static int64_t tr_get(const struct tr *t, int i, const char *key)
{
	int64_t v;

	ck_assert_msg(tr_field(t->lines[i], key, &v), "no %s= in \"%s\"", key, t->lines[i]);
	return v;
}

static void tr_dump(const struct tr *t)
{
	for (unsigned i = 0; i < t->nlines && i < 40; i++)
		fprintf(stderr, "  trace: %s\n", t->lines[i]);
}

/* Submit the copy of @c on @ctx with a fresh syncobj; returns the seqno. */
static uint64_t submit_seqno(struct gt_copy *c, uint32_t ctx, uint32_t *so)
{
	struct drm_npu_bo_ref refs[2];
	struct drm_npu_submit s;
	int rc;

	ck_assert_int_eq(gt_syncobj_create(G.fd, 0, so), 0);
	gt_copy_submit_args(c, ctx, refs, &s);
	s.out_sync = *so;
	rc = gt_submit(G.fd, &s);
	ck_assert_msg(rc == 0, "SUBMIT: %s", strerror(-rc));
	return s.seqno;
}

START_TEST(trace_job_sequence)
{
	gt_begin("trace_job_sequence");
	struct drm_npu_ctx_create cc;
	struct gt_copy c;
	struct tr t;
	uint64_t seqno;
	uint32_t so;
	int rc, is, ir, id;

	rc = gt_ctx_create_retry(G.fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 3000);
	ck_assert_msg(rc == 0, "CTX_CREATE: %s", strerror(-rc));
	ck_assert_msg(gt_copy_init(G.fd, &c, 65536, 71) == 0, "%s", gt_msg);
	if (!tr_start(&t))
		GT_SKIP("the kernel has no tracefs");
	seqno = submit_seqno(&c, cc.ctx_id, &so);
	rc = gt_syncobj_wait(G.fd, &so, 1, GT_WAIT_NS);
	ck_assert_msg(rc == 0, "job not done: %s", strerror(-rc));
	ck_assert_msg(gt_copy_ok(&c), "copy data wrong");
	tr_read(&t);

	is = tr_find(&t, "npu_job_submit", cc.ctx_id, seqno);
	ir = tr_find(&t, "npu_job_run", cc.ctx_id, seqno);
	id = tr_find(&t, "npu_job_done", cc.ctx_id, seqno);
	if (is < 0 || ir < 0 || id < 0)
		tr_dump(&t);
	ck_assert_msg(is >= 0, "no npu_job_submit for ctx_id %u seqno %" PRIu64, cc.ctx_id, seqno);
	ck_assert_msg(ir >= 0, "no npu_job_run for ctx_id %u seqno %" PRIu64, cc.ctx_id, seqno);
	ck_assert_msg(id >= 0, "no npu_job_done for ctx_id %u seqno %" PRIu64, cc.ctx_id, seqno);
	ck_assert_msg(is < ir && ir < id, "order: submit at %d, run at %d, done at %d", is, ir, id);
	/* One job, one context, one queue, one ring attempt. */
	ck_assert_int_eq(tr_get(&t, is, "ctx"), tr_get(&t, ir, "ctx"));
	ck_assert_int_eq(tr_get(&t, ir, "ctx"), tr_get(&t, id, "ctx"));
	ck_assert_int_eq(tr_get(&t, is, "queue"), cc.queue);
	ck_assert_int_eq(tr_get(&t, ir, "queue"), cc.queue);
	ck_assert_int_eq(tr_get(&t, id, "queue"), cc.queue);
	ck_assert_int_eq(tr_get(&t, ir, "hw_seqno"), tr_get(&t, id, "hw_seqno"));
	ck_assert_int_eq(tr_get(&t, id, "error"), 0);
	ck_assert_int_gt(tr_get(&t, id, "cycles"), 0);
	ck_assert_uint_eq((uint64_t)tr_get(&t, is, "prog_va"), c.cmd.dev_addr);
	ck_assert_int_eq(tr_get(&t, is, "prog_size"), c.prog_size);
	ck_assert_int_eq(tr_get(&t, is, "bos"), 3);
	tr_stop(&t);
	gt_syncobj_destroy(G.fd, so);
	gt_copy_fini(&c);
	ck_assert_int_eq(gt_ctx_destroy(G.fd, cc.ctx_id), 0);
}
END_TEST

/* An injected MMU fault and an injected hang: their events (one instance each). */
START_TEST(trace_fault_hang)
{
	gt_begin("trace_fault_hang");
	struct drm_npu_ctx_create cc;
	char p[256];
	struct gt_copy c;
	struct tr t;
	uint64_t seqno;
	uint32_t so;
	int rc, ir, id, it, ix, fault = -1;

	if (gt_debugfs_path("inject_fault", p, sizeof(p)) ||
	    gt_debugfs_path("inject_hang", p, sizeof(p)))
		GT_SKIP("no debugfs inject_fault / inject_hang");
	ck_assert_msg(gt_copy_init(G.fd, &c, 65536, 72) == 0, "%s", gt_msg);

	/* MMU fault: a fault event on the context's queue, done with -EFAULT. */
	rc = gt_ctx_create_retry(G.fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 3000);
	ck_assert_msg(rc == 0, "CTX_CREATE: %s", strerror(-rc));
	if (!tr_start(&t))
		GT_SKIP("the kernel has no tracefs");
	ck_assert_int_eq(gt_debugfs_write("inject_fault", "1"), 0);
	seqno = submit_seqno(&c, cc.ctx_id, &so);
	rc = gt_syncobj_wait(G.fd, &so, 1, GT_WAIT_NS);
	ck_assert_msg(rc == 0, "faulting job not done: %s", strerror(-rc));
	tr_read(&t);
	ir = tr_find(&t, "npu_job_run", cc.ctx_id, seqno);
	id = tr_find(&t, "npu_job_done", cc.ctx_id, seqno);
	for (unsigned n = 0; n < t.nlines; n++)
		if (strstr(t.lines[n], " npu_mmu_fault: ") && fault < 0)
			fault = (int)n;
	if (ir < 0 || id < 0 || fault < 0)
		tr_dump(&t);
	ck_assert_msg(ir >= 0 && id > ir, "faulting job: run at %d, done at %d", ir, id);
	ck_assert_int_eq(tr_get(&t, id, "error"), -EFAULT);
	ck_assert_msg(fault >= 0, "no npu_mmu_fault event");
	ck_assert_int_eq(tr_get(&t, fault, "queue"), cc.queue);
	ck_assert_msg(strstr(t.lines[fault], " addr=0x"), "no address: %s", t.lines[fault]);
	tr_stop(&t);
	gt_syncobj_destroy(G.fd, so);
	ck_assert_int_eq(gt_ctx_destroy(G.fd, cc.ctx_id), 0);

	/* Hang: run, then the watchdog's timeout, then a reset naming the queue. */
	rc = gt_ctx_create_retry(G.fd, 1, DRM_NPU_PRIORITY_NORMAL, &cc, 3000);
	ck_assert_msg(rc == 0, "CTX_CREATE: %s", strerror(-rc));
	ck_assert(tr_start(&t));
	ck_assert_int_eq(gt_debugfs_write("inject_hang", "1"), 0);
	seqno = submit_seqno(&c, cc.ctx_id, &so);
	rc = gt_syncobj_wait(G.fd, &so, 1, 3 * GT_WAIT_NS);
	ck_assert_msg(rc == 0, "hung job not failed: %s", strerror(-rc));
	tr_read(&t);
	ir = tr_find(&t, "npu_job_run", cc.ctx_id, seqno);
	it = tr_find(&t, "npu_job_timeout", cc.ctx_id, seqno);
	ix = -1;
	for (int n = it < 0 ? 0 : it; n < (int)t.nlines; n++)
		if (strstr(t.lines[n], " npu_reset: ") && ix < 0)
			ix = n;
	if (ir < 0 || it < 0 || ix < 0)
		tr_dump(&t);
	ck_assert_msg(ir >= 0 && it > ir, "hung job: run at %d, timeout at %d", ir, it);
	ck_assert_msg(ix > it, "no npu_reset after the timeout");
	ck_assert_int_eq(tr_get(&t, it, "queue"), cc.queue);
	ck_assert_int_eq(tr_get(&t, it, "hw_seqno"), tr_get(&t, ir, "hw_seqno"));
	ck_assert_int_gt(tr_get(&t, it, "timeout_ms"), 0);
	ck_assert_int_eq(tr_get(&t, ix, "queue"), cc.queue);
	ck_assert_int_eq(tr_get(&t, ix, "error"), 0);
	ck_assert_int_ge(tr_get(&t, ix, "attempts"), 1);
	tr_stop(&t);
	gt_syncobj_destroy(G.fd, so);
	ck_assert_int_eq(gt_ctx_destroy(G.fd, cc.ctx_id), 0);
	gt_copy_fini(&c);
	ck_assert_msg(gt_good_job_new_ctx(G.fd) == 0, "after the hang: %s", gt_msg);
}
END_TEST

Suite *gt_suite_trace(void)
{
	Suite *s = suite_create("trace");
	TCase *tc = tcase_create("tracefs");

	tcase_add_test(tc, trace_job_sequence);
	tcase_add_test(tc, trace_fault_hang);
	gt_add_tcase(s, tc, 60);
	return s;
}
