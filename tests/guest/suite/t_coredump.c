/* SPDX-License-Identifier: MIT */
/*
 * Device coredump: a forced hang (debugfs inject_hang) and a forced MMU
 * fault (inject_fault) each leave a dump in /sys/class/devcoredump/devcd<N>/
 * whose failing_device is our PCI function.  The tests read data, check the
 * fields against what they submitted (Documentation/driver.md, "Device
 * coredump"), then write to data to dismiss the dump.  Dumps of our device
 * left by earlier tests are dismissed first: the kernel keeps one per
 * device.  Skipped when the kernel has no devcoredump or a knob is missing.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npu_gt.h"

#define CD_CLASS	"/sys/class/devcoredump"
#define CD_MAX		(64u << 10)
#define CD_CMD_OFFSET	4032u	/* the program straddles a page boundary */

/* The BDF of our PCI function, from /sys/class/accel/accel<minor>/device. */
static void cd_our_device(char *out, size_t len)
{
	char p[128], link[256];
	ssize_t n;

	snprintf(p, sizeof(p), "/sys/class/accel/accel%d/device", G.minor);
	n = readlink(p, link, sizeof(link) - 1);
	ck_assert_msg(n > 0, "readlink %s: %s", p, strerror(errno));
	link[n] = 0;
	snprintf(out, len, "%s", basename(link));
}

/* Is devcd @name's failing_device @bdf? */
static bool cd_is_ours(const char *name, const char *bdf)
{
	char p[300], link[256];
	ssize_t n;

	snprintf(p, sizeof(p), CD_CLASS "/%s/failing_device", name);
	n = readlink(p, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = 0;
	return strcmp(basename(link), bdf) == 0;
}

/* Name of a devcd of @bdf into @out; false if there is none. */
static bool cd_find(const char *bdf, char *out, size_t len)
{
	DIR *d = opendir(CD_CLASS);
	struct dirent *e;
	bool found = false;

	if (!d)
		return false;
	while (!found && (e = readdir(d)))
		if (!strncmp(e->d_name, "devcd", 5) && cd_is_ours(e->d_name, bdf)) {
			snprintf(out, len, "%.63s", e->d_name);
			found = true;
		}
	closedir(d);
	return found;
}

static int cd_dismiss(const char *name)
{
	char p[300];
	int fd, rc = 0;

	snprintf(p, sizeof(p), CD_CLASS "/%s/data", name);
	fd = open(p, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, "1", 1) != 1)
		rc = -errno;
	close(fd);
	return rc;
}

/* Dismiss every dump of @bdf (earlier tests' hangs) and wait until gone. */
static void cd_dismiss_all(const char *bdf)
{
	char name[64];

	for (unsigned i = 0; i < 200 && cd_find(bdf, name, sizeof(name)); i++) {
		cd_dismiss(name);
		gt_msleep(10);
	}
	ck_assert_msg(!cd_find(bdf, name, sizeof(name)), "%s of %s does not go away", name, bdf);
}

/* Wait up to @ms for a dump of @bdf; read its data (malloc'ed, 0-terminated). */
static char *cd_wait_read(const char *bdf, unsigned ms, char *name, size_t len)
{
	char p[300], *buf;
	size_t n = 0;
	ssize_t r;
	int fd;

	for (unsigned t = 0; !cd_find(bdf, name, len); t += 20) {
		ck_assert_msg(t < ms, "no devcoredump of %s within %u ms", bdf, ms);
		gt_msleep(20);
	}
	snprintf(p, sizeof(p), CD_CLASS "/%s/data", name);
	fd = open(p, O_RDONLY);
	ck_assert_msg(fd >= 0, "open %s: %s", p, strerror(errno));
	buf = malloc(CD_MAX);
	ck_assert_ptr_nonnull(buf);
	while (n < CD_MAX - 1 && (r = read(fd, buf + n, CD_MAX - 1 - n)) > 0)
		n += r;
	close(fd);
	buf[n] = 0;
	return buf;
}

/* The text after "@key: " on its own line, or NULL. */
static const char *cd_val(const char *dump, const char *key)
{
	size_t k = strlen(key);

	for (const char *l = dump; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, key, k) && l[k] == ':' && l[k + 1] == ' ')
			return l + k + 2;
	return NULL;
}

static int64_t cd_num(const char *dump, const char *key)
{
	const char *v = cd_val(dump, key);

	ck_assert_msg(v, "no \"%s:\" line in the dump:\n%.3000s", key, dump);
	return strtoll(v, NULL, 0);
}

static uint64_t cd_u64(const char *dump, const char *key)
{
	const char *v = cd_val(dump, key);

	ck_assert_msg(v, "no \"%s:\" line in the dump:\n%.3000s", key, dump);
	return strtoull(v, NULL, 0);
}

/* Parse the "cmd.head: OOOO: xx xx ..." lines into @out; returns bytes. */
static unsigned cd_head(const char *dump, uint8_t *out, unsigned max)
{
	unsigned n = 0;

	for (const char *l = dump; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *p;
		unsigned off;

		if (strncmp(l, "cmd.head: ", 10))
			continue;
		off = strtoul(l + 10, (char **)&p, 16);
		ck_assert_msg(off == n && *p == ':', "cmd.head line at offset %u, expected %u", off, n);
		p++;
		while (*p == ' ' && n < max) {
			char *e;
			unsigned long b = strtoul(p, &e, 16);

			if (e == p)
				break;
			out[n++] = (uint8_t)b;
			p = e;
		}
	}
	return n;
}

struct cd_job {
	struct drm_npu_ctx_create cc;
	struct gt_copy c;
	struct gt_bo cmd;	/* the program at CD_CMD_OFFSET */
	uint32_t prog_size;
	uint64_t seqno;
	uint32_t so;
};

/* Arm @knob and submit a copy whose program sits at CD_CMD_OFFSET of a
 * two-page command BO; wait for its fence to fail with @err. */
static void cd_failing_job(struct cd_job *j, const char *knob, int err)
{
	struct drm_npu_bo_ref refs[2];
	struct drm_npu_submit s;
	int rc, st;

	rc = gt_ctx_create_retry(G.fd, 1, DRM_NPU_PRIORITY_NORMAL, &j->cc, 3000);
	ck_assert_msg(rc == 0, "CTX_CREATE: %s", strerror(-rc));
	ck_assert_msg(gt_copy_init(G.fd, &j->c, 65536, 81) == 0, "%s", gt_msg);
	ck_assert_int_eq(gt_bo_create(G.fd, 8192, 0, &j->cmd), 0);
	ck_assert_int_eq(gt_bo_mmap(G.fd, &j->cmd), 0);
	memset(j->cmd.map, 0xa5, 8192);
	j->prog_size = gt_build_copy((uint8_t *)j->cmd.map + CD_CMD_OFFSET,
				     j->c.src.dev_addr, j->c.dst.dev_addr, j->c.bytes);
	ck_assert_uint_gt(CD_CMD_OFFSET + j->prog_size, 4096);
	ck_assert_int_eq(gt_syncobj_create(G.fd, 0, &j->so), 0);
	gt_copy_submit_args(&j->c, j->cc.ctx_id, refs, &s);
	s.cmd_handle = j->cmd.handle;
	s.cmd_offset = CD_CMD_OFFSET;
	s.cmd_size = j->prog_size;
	s.out_sync = j->so;
	rc = gt_debugfs_write(knob, "1");
	ck_assert_msg(rc == 0, "writing 1 to %s: %s", knob, strerror(-rc));
	rc = gt_submit(G.fd, &s);
	ck_assert_msg(rc == 0, "SUBMIT: %s", strerror(-rc));
	j->seqno = s.seqno;
	rc = gt_syncobj_wait(G.fd, &j->so, 1, 3 * GT_WAIT_NS);
	ck_assert_msg(rc == 0, "the %s job was not failed: %s", knob, strerror(-rc));
	st = gt_fence_status(G.fd, j->so);
	ck_assert_msg(st == GT_NO_STATUS || st == -err, "fence status %d, expected %d", st, -err);
}

static void cd_job_fini(struct cd_job *j)
{
	gt_syncobj_destroy(G.fd, j->so);
	gt_bo_free(G.fd, &j->cmd);
	gt_copy_fini(&j->c);
	ck_assert_int_eq(gt_ctx_destroy(G.fd, j->cc.ctx_id), 0);
}

/* The fields every dump of @j has, whatever the reason. */
static void cd_check_common(const char *dump, const struct cd_job *j, const char *reason, int err)
{
	uint8_t head[512];
	unsigned n, want = j->prog_size < 256 ? j->prog_size : 256;
	char map[64] = "";

	ck_assert_msg(!strncmp(dump, "NPU DEVCOREDUMP 1\n", 18), "bad first line:\n%.200s", dump);
	ck_assert_msg(strstr(dump, "\nend\n"), "no end line:\n%.3000s", dump);
	ck_assert_msg(cd_val(dump, "reason") && !strncmp(cd_val(dump, "reason"), reason, strlen(reason)),
		      "reason is not %s:\n%.3000s", reason, dump);
	ck_assert_int_eq(cd_num(dump, "error"), -err);
	ck_assert_int_eq(cd_num(dump, "queue"), j->cc.queue);
	ck_assert_int_eq(cd_num(dump, "context_id"), j->cc.ctx_id);
	ck_assert_int_eq(cd_num(dump, "pid"), getpid());
	ck_assert_uint_eq(cd_u64(dump, "seqno"), j->seqno);
	ck_assert_int_eq(cd_num(dump, "task.valid"), 1);
	ck_assert_uint_eq(cd_u64(dump, "task.magic"), NPU_TASK_MAGIC);
	ck_assert_uint_eq(cd_u64(dump, "task.prog_va"), j->cmd.dev_addr + CD_CMD_OFFSET);
	ck_assert_uint_eq(cd_u64(dump, "task.prog_size"), j->prog_size);
	ck_assert_uint_eq(cd_u64(dump, "task.seqno"), cd_u64(dump, "hw_seqno"));
	ck_assert_int_eq(cd_num(dump, "task.nclusters"), 1);
	snprintf(map, sizeof(map), " %u\n", j->cc.cluster_map[0]);
	ck_assert_msg(!strncmp(cd_val(dump, "task.cluster_map") - 1, map, strlen(map)),
		      "task.cluster_map is not%s", map);
	ck_assert_msg(!strncmp(cd_val(dump, "ctx.cluster_map") - 1, map, strlen(map)),
		      "ctx.cluster_map is not%s", map);
	ck_assert_uint_eq(cd_u64(dump, "ctx.cluster_mask"), j->cc.cluster_mask);
	ck_assert_uint_eq(cd_u64(dump, "ctx.sram_base"), j->cc.sram_base);
	ck_assert_uint_eq(cd_u64(dump, "ctx.sram_size"), j->cc.sram_size);
	ck_assert_uint_eq(cd_u64(dump, "task.sram_base"), j->cc.sram_base);
	ck_assert_uint_eq(cd_u64(dump, "cmd.va"), j->cmd.dev_addr + CD_CMD_OFFSET);
	ck_assert_int_eq(cd_num(dump, "cmd.offset"), CD_CMD_OFFSET);
	ck_assert_int_eq(cd_num(dump, "cmd.head_bytes"), want);
	n = cd_head(dump, head, sizeof(head));
	ck_assert_uint_eq(n, want);
	ck_assert_msg(!memcmp(head, (uint8_t *)j->cmd.map + CD_CMD_OFFSET, n),
		      "cmd.head is not the program the test wrote");
	/* The queue registers of the right queue: base is the ring. */
	ck_assert_uint_ne(cd_u64(dump, "reg.q.base"), 0);
	ck_assert_int_ge(cd_num(dump, "reg.q.size_log2"), 1);
	ck_assert_int_le(cd_num(dump, "reg.q.size_log2"), 12);
	ck_assert_int_lt(cd_num(dump, "slot"), 1 << cd_num(dump, "reg.q.size_log2"));
}

static void cd_dismiss_checked(const char *bdf, const char *name)
{
	char again[64];
	unsigned t;

	ck_assert_int_eq(cd_dismiss(name), 0);
	for (t = 0; t < 2000 && cd_find(bdf, again, sizeof(again)) && !strcmp(again, name); t += 10)
		gt_msleep(10);
	ck_assert_msg(t < 2000, "%s still there 2 s after writing to data", name);
}

/* False (the test is skipped, reason printed) without devcoredump or @knob. */
static bool cd_need(const char *test, const char *knob)
{
	char p[256];
	struct stat st;

	if (stat(CD_CLASS, &st)) {
		fprintf(stderr, "SKIP %s: the kernel has no devcoredump (" CD_CLASS ")\n", test);
		return false;
	}
	if (gt_debugfs_path(knob, p, sizeof(p))) {
		fprintf(stderr, "SKIP %s: no debugfs knob %s\n", test, knob);
		return false;
	}
	return true;
}

START_TEST(coredump_hang)
{
	gt_begin("coredump_hang");
	char bdf[64], name[64];
	struct cd_job j;
	char *dump;

	if (!cd_need("coredump_hang", "inject_hang"))
		return;
	cd_our_device(bdf, sizeof(bdf));
	cd_dismiss_all(bdf);
	cd_failing_job(&j, "inject_hang", ETIMEDOUT);
	dump = cd_wait_read(bdf, 5000, name, sizeof(name));
	/* For the log: what a dump looks like. */
	fprintf(stderr, "coredump_hang: %s:\n%s", name, dump);
	cd_check_common(dump, &j, "timeout", ETIMEDOUT);
	/* Held back at the doorbell: written to the ring, never completed. */
	ck_assert_uint_eq(cd_u64(dump, "comp.seqno"), 0);
	ck_assert_int_ne(cd_num(dump, "reg.q.tail"),
			 (cd_num(dump, "slot") + 1) % (1 << cd_num(dump, "reg.q.size_log2")));
	ck_assert_int_eq(cd_num(dump, "reg.q.head"), cd_num(dump, "reg.q.tail"));
	free(dump);
	cd_dismiss_checked(bdf, name);
	cd_job_fini(&j);
	ck_assert_msg(gt_good_job_new_ctx(G.fd) == 0, "after the hang: %s", gt_msg);
}
END_TEST

START_TEST(coredump_mmu_fault)
{
	gt_begin("coredump_mmu_fault");
	char bdf[64], name[64];
	struct cd_job j;
	uint32_t fst;
	char *dump;

	if (!cd_need("coredump_mmu_fault", "inject_fault"))
		return;
	cd_our_device(bdf, sizeof(bdf));
	cd_dismiss_all(bdf);
	cd_failing_job(&j, "inject_fault", EFAULT);
	dump = cd_wait_read(bdf, 5000, name, sizeof(name));
	cd_check_common(dump, &j, "mmu_fault", EFAULT);
	/* The completion record the device wrote for it. */
	ck_assert_uint_eq(cd_u64(dump, "comp.seqno"), cd_u64(dump, "hw_seqno"));
	ck_assert_int_eq(cd_num(dump, "comp.status"), NPU_TASK_MMU_FAULT);
	ck_assert_uint_ne(cd_u64(dump, "comp.fault_addr"), 0);
	/* The fault registers as the interrupt handler latched them, when
	 * that interrupt came first (it normally does: one interrupt). */
	fst = cd_u64(dump, "fault.status");
	fprintf(stderr, "coredump_mmu_fault: fault.status 0x%x fault.addr 0x%" PRIx64
		" comp.fault_addr 0x%" PRIx64 " task.prog_va 0x%" PRIx64 "\n", fst,
		cd_u64(dump, "fault.addr"), cd_u64(dump, "comp.fault_addr"),
		cd_u64(dump, "task.prog_va"));
	if (fst) {
		ck_assert_msg(fst & NPU_FAULT_VALID, "fault.status 0x%x without VALID", fst);
		ck_assert_uint_eq(NPU_FAULT_QUEUE(fst), j.cc.queue);
		ck_assert_uint_eq(cd_u64(dump, "fault.addr"), cd_u64(dump, "comp.fault_addr"));
	}
	free(dump);
	cd_dismiss_checked(bdf, name);
	cd_job_fini(&j);
	ck_assert_msg(gt_good_job_new_ctx(G.fd) == 0, "after the fault: %s", gt_msg);
}
END_TEST

Suite *gt_suite_coredump(void)
{
	Suite *s = suite_create("coredump");
	TCase *tc = tcase_create("devcoredump");

	tcase_add_test(tc, coredump_hang);
	tcase_add_test(tc, coredump_mmu_fault);
	gt_add_tcase(s, tc, 60);
	return s;
}
