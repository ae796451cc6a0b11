/* SPDX-License-Identifier: MIT */
/*
 * Runtime power management: an idle device autosuspends (to D3hot, where
 * the M100 loses its registers and on-chip memory), a submit resumes it,
 * and contexts, BOs, their device addresses and CPU mappings survive.
 *
 * Reads /sys/class/accel/accelN/device/power/{runtime_status,control,
 * autosuspend_delay_ms} and the driver's npu/{suspend,resume}_count.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npu_gt.h"

#define PM_SLACK_MS	5000u	/* beyond the autosuspend delay (TCG) */

static uint64_t count(const char *name)
{
	char buf[64];
	int rc = gt_dev_attr_read(name, buf, sizeof(buf));

	ck_assert_msg(rc == 0, "reading %s: %s", name, strerror(-rc));
	return strtoull(buf, NULL, 10);
}

static const char *status(void)
{
	static char buf[32];

	if (gt_dev_attr_read("power/runtime_status", buf, sizeof(buf)))
		snprintf(buf, sizeof(buf), "?");
	return buf;
}

/*
 * Poll runtime_status every 2 ms until it reads @want, for up to @ms.
 * Returns the CLOCK_MONOTONIC time it was first seen, or -1.
 */
static int64_t wait_status(const char *want, unsigned ms)
{
	int64_t end = gt_now_ns() + (int64_t)ms * 1000000;

	for (;;) {
		int64_t now = gt_now_ns();

		if (!strcmp(status(), want))
			return now;
		if (now > end)
			return -1;
		usleep(2000);
	}
}

/*
 * Runtime PM must be there and allowed (the driver allows it at probe);
 * returns the autosuspend delay in ms, or -1 (reason printed) to skip.
 */
static int need_pm(void)
{
	char buf[64];
	long delay;
	int rc;

	if (gt_dev_attr_read("power/runtime_status", buf, sizeof(buf))) {
		fprintf(stderr, "SKIP: no power/runtime_status (kernel without CONFIG_PM)\n");
		return -1;
	}
	rc = gt_dev_attr_read("npu/suspend_count", buf, sizeof(buf));
	ck_assert_msg(rc == 0, "npu/suspend_count: %s", strerror(-rc));
	ck_assert_int_eq(gt_dev_attr_read("power/control", buf, sizeof(buf)), 0);
	ck_assert_msg(!strcmp(buf, "auto"),
		      "power/control is \"%s\": the driver should allow runtime PM", buf);
	ck_assert_int_eq(gt_dev_attr_read("power/autosuspend_delay_ms", buf, sizeof(buf)), 0);
	delay = strtol(buf, NULL, 10);
	ck_assert_msg(delay >= 0 && delay <= 10000,
		      "autosuspend_delay_ms %ld (npu.autosuspend_ms disables it?)", delay);
	return (int)delay;
}

static uint32_t new_ctx(int fd, struct drm_npu_ctx_create *cc)
{
	int rc = gt_ctx_create_retry(fd, 1, DRM_NPU_PRIORITY_NORMAL, cc, 3000);

	ck_assert_msg(rc == 0, "CTX_CREATE(1): %s", strerror(-rc));
	return cc->ctx_id;
}

/* Suspended means D3hot (the PCI core's power_state, when it has one). */
static void check_d3hot(const char *when)
{
	char buf[32];

	if (gt_dev_attr_read("power_state", buf, sizeof(buf)))
		return;
	ck_assert_msg(!strcmp(buf, "D3hot") || strcmp(status(), "suspended"),
		      "%s: runtime_status suspended, power_state %s", when, buf);
}

static void wait_suspended(int delay, const char *when)
{
	ck_assert_msg(wait_status("suspended", delay + PM_SLACK_MS) >= 0,
		      "%s: not suspended within %u ms (runtime_status \"%s\")",
		      when, delay + PM_SLACK_MS, status());
	check_d3hot(when);
}

START_TEST(pm_idle_suspends)
{
	gt_begin("pm_idle_suspends");
	int delay = need_pm();
	struct drm_npu_ctx_create cc;
	struct drm_npu_ctx_query q;
	uint64_t s0, r0, s1, r1;
	int64_t t0, t1, t_cold, t_warm;
	struct gt_copy c;
	int rc;

	if (delay < 0)
		return;
	/* (A context may wake it: the driver may scrub a partition.) */
	new_ctx(G.fd, &cc);
	wait_suspended(delay, "idle device");
	s0 = count("npu/suspend_count");
	r0 = count("npu/resume_count");
	ck_assert_msg(s0 >= 1, "suspended, but suspend_count is 0");

	/* BOs live in system memory: creating and mapping them does not wake it. */
	ck_assert_msg(gt_copy_init(G.fd, &c, 1 << 20, 71) == 0, "%s", gt_msg);
	ck_assert_msg(!strcmp(status(), "suspended"),
		      "BO_CREATE/mmap woke the device (%s)", status());
	ck_assert_uint_eq(count("npu/resume_count"), r0);

	t0 = gt_now_ns();
	rc = gt_run_copy(&c, cc.ctx_id, 0);
	ck_assert_msg(rc == 0, "job on a suspended device: %s", strerror(-rc));
	t_cold = gt_now_ns() - t0;
	ck_assert_msg(gt_copy_ok(&c), "wrong data after resume");
	r1 = count("npu/resume_count");
	ck_assert_msg(r1 > r0, "the submit did not resume the device (resume_count %"
		      PRIu64 " -> %" PRIu64 ")", r0, r1);
	/* The same job on the awake device, for the log: resume latency. */
	memset(c.dst.map, 0, c.bytes);
	t_warm = gt_now_ns();
	ck_assert_int_eq(gt_run_copy(&c, cc.ctx_id, 0), 0);
	t_warm = gt_now_ns() - t_warm;
	ck_assert(gt_copy_ok(&c));
	fprintf(stderr, "pm_idle_suspends: 1 MiB copy %" PRId64 " us from suspended, %"
		PRId64 " us awake (%" PRIu64 " resume(s) between)\n", t_cold / 1000,
		t_warm / 1000, count("npu/resume_count") - r1);
	ck_assert_int_eq(gt_ctx_query(G.fd, cc.ctx_id, &q), 0);
	ck_assert_uint_eq(q.state, DRM_NPU_CTX_OK);
	ck_assert_uint_eq(q.jobs_completed, 2);
	ck_assert_uint_eq(q.jobs_failed, 0);

	/* Idle again: suspends, but not before the delay has passed. */
	t1 = wait_status("suspended", delay + PM_SLACK_MS);
	ck_assert_msg(t1 >= 0, "not suspended again within %u ms (%s)",
		      delay + PM_SLACK_MS, status());
	ck_assert_msg(t1 - t0 >= (int64_t)delay * 1000000,
		      "suspended %" PRId64 " ms after the submit, delay %u ms",
		      (t1 - t0) / 1000000, delay);
	check_d3hot("idle after the job");
	s1 = count("npu/suspend_count");
	ck_assert_msg(s1 > s0, "suspend_count %" PRIu64 " -> %" PRIu64, s0, s1);
	fprintf(stderr, "pm_idle_suspends: delay %d ms, suspended %" PRId64
		" ms after the submit; suspend_count %" PRIu64 ", resume_count %"
		PRIu64 "\n", delay, (t1 - t0) / 1000000, s1,
		count("npu/resume_count"));
	gt_copy_fini(&c);
	ck_assert_int_eq(gt_ctx_destroy(G.fd, cc.ctx_id), 0);
}
END_TEST

/*
 * A context, its BOs and their mappings made before a suspend run jobs
 * after it, at the same device addresses.
 */
START_TEST(pm_state_survives)
{
	gt_begin("pm_state_survives");
	int delay = need_pm();
	const uint64_t bytes = 256 << 10;
	struct drm_npu_ctx_create cc;
	struct drm_npu_ctx_query q;
	struct drm_npu_bo_info bi;
	struct gt_batch b;
	struct gt_copy c;
	uint64_t r0;
	int rc;

	if (delay < 0)
		return;
	new_ctx(G.fd, &cc);
	ck_assert_msg(gt_copy_init(G.fd, &c, bytes, 81) == 0, "%s", gt_msg);
	ck_assert_msg(gt_batch_init(G.fd, &b, 8, 64 << 10, 83) == 0, "%s", gt_msg);
	ck_assert_int_eq(gt_run_copy(&c, cc.ctx_id, 0), 0);
	ck_assert(gt_copy_ok(&c));

	wait_suspended(delay, "after the first job");
	r0 = count("npu/resume_count");
	/* Same device addresses, the context still OK, CPU maps intact. */
	ck_assert_int_eq(gt_bo_info(G.fd, c.src.handle, &bi), 0);
	ck_assert_uint_eq(bi.dev_addr, c.src.dev_addr);
	ck_assert_int_eq(gt_bo_info(G.fd, c.dst.handle, &bi), 0);
	ck_assert_uint_eq(bi.dev_addr, c.dst.dev_addr);
	ck_assert_int_eq(gt_bo_info(G.fd, c.cmd.handle, &bi), 0);
	ck_assert_uint_eq(bi.dev_addr, c.cmd.dev_addr);
	ck_assert_int_eq(gt_ctx_query(G.fd, cc.ctx_id, &q), 0);
	ck_assert_uint_eq(q.state, DRM_NPU_CTX_OK);
	ck_assert_int_eq(gt_check(c.dst.map, bytes, 81), -1);

	/* New data through the old mappings, the same program and BOs. */
	gt_fill(c.src.map, bytes, 82);
	memset(c.dst.map, 0, bytes);
	c.seed = 82;
	rc = gt_run_copy(&c, cc.ctx_id, 0);
	ck_assert_msg(rc == 0, "job after resume: %s", strerror(-rc));
	ck_assert_msg(gt_copy_ok(&c), "wrong data after resume");
	ck_assert_uint_gt(count("npu/resume_count"), r0);
	/* A pipeline of jobs on the resumed device. */
	for (unsigned k = 0; k < b.n; k++)
		ck_assert_int_eq(gt_batch_submit(&b, k, cc.ctx_id), 0);
	ck_assert_int_eq(gt_batch_wait(&b, GT_WAIT_NS), 0);
	for (unsigned k = 0; k < b.n; k++)
		ck_assert_msg(gt_batch_verify(&b, k) == 0, "%s", gt_msg);
	ck_assert_int_eq(gt_ctx_query(G.fd, cc.ctx_id, &q), 0);
	ck_assert_uint_eq(q.state, DRM_NPU_CTX_OK);
	ck_assert_uint_eq(q.jobs_completed, 2 + b.n);
	ck_assert_uint_eq(q.jobs_failed, 0);

	/* And again across a second suspend. */
	wait_suspended(delay, "after the pipeline");
	r0 = count("npu/resume_count");
	memset(c.dst.map, 0, bytes);
	ck_assert_int_eq(gt_run_copy(&c, cc.ctx_id, 0), 0);
	ck_assert(gt_copy_ok(&c));
	ck_assert_uint_gt(count("npu/resume_count"), r0);
	gt_batch_fini(&b);
	gt_copy_fini(&c);
	ck_assert_int_eq(gt_ctx_destroy(G.fd, cc.ctx_id), 0);
}
END_TEST

/* Rewrite c's program: @to_sram: src BO -> SRAM window offset 0, else back. */
static void sram_prog(struct gt_copy *c, bool to_sram)
{
	struct npu_hw_insn *in;

	c->prog_size = gt_build_copy(c->cmd.map, c->src.dev_addr,
				     c->dst.dev_addr, c->bytes);
	in = (struct npu_hw_insn *)((uint8_t *)c->cmd.map +
				    sizeof(struct npu_hw_prog));
	in->opnd[to_sram ? NPU_OPND_DST : NPU_OPND_SRC0].space = NPU_SPACE_SRAM;
	in->opnd[to_sram ? NPU_OPND_DST : NPU_OPND_SRC0].base = 0;
}

static int run_sram(struct gt_copy *c, uint32_t ctx, bool to_sram)
{
	sram_prog(c, to_sram);
	return gt_run_copy(c, ctx, 0);
}

/*
 * On-chip memory lives as long as the power: what a job left in its SRAM
 * window is there for the next job of the context while the device is
 * kept awake, and gone (zeros) after a suspend to D3hot.
 */
START_TEST(pm_sram_lost_in_d3)
{
	gt_begin("pm_sram_lost_in_d3");
	int delay = need_pm();
	const uint64_t bytes = 4096;
	struct drm_npu_ctx_create cc;
	struct gt_copy c;
	int64_t bad;
	int rc, rc2;

	if (delay < 0)
		return;
	new_ctx(G.fd, &cc);
	if (cc.sram_size < bytes)
		GT_SKIP("SRAM window of %u bytes", cc.sram_size);
	ck_assert_msg(gt_copy_init(G.fd, &c, bytes, 91) == 0, "%s", gt_msg);
	rc = gt_dev_attr_write("power/control", "on");
	ck_assert_msg(rc == 0, "writing on to power/control: %s", strerror(-rc));
	rc = run_sram(&c, cc.ctx_id, true);
	memset(c.dst.map, 0xee, bytes);
	rc2 = rc ? rc : run_sram(&c, cc.ctx_id, false);
	bad = gt_check(c.dst.map, bytes, 91);
	ck_assert_int_eq(gt_dev_attr_write("power/control", "auto"), 0);
	ck_assert_msg(rc == 0 && rc2 == 0, "SRAM copies: %s / %s", strerror(-rc),
		      strerror(-rc2));
	ck_assert_msg(bad < 0, "awake: SRAM read back wrong at byte %" PRId64, bad);

	wait_suspended(delay, "after the SRAM jobs");
	memset(c.dst.map, 0xee, bytes);
	ck_assert_int_eq(run_sram(&c, cc.ctx_id, false), 0);
	ck_assert_msg(gt_all_zero(c.dst.map, bytes),
		      "SRAM contents survived D3hot (first byte 0x%02x)",
		      ((uint8_t *)c.dst.map)[0]);
	gt_copy_fini(&c);
	ck_assert_int_eq(gt_ctx_destroy(G.fd, cc.ctx_id), 0);
}
END_TEST

/* power/control "on" keeps the device awake; "auto" lets it sleep again. */
START_TEST(pm_control_on)
{
	gt_begin("pm_control_on");
	int delay = need_pm();
	uint64_t s0;
	bool active;
	int rc;

	if (delay < 0)
		return;
	wait_suspended(delay, "idle device");
	rc = gt_dev_attr_write("power/control", "on");
	ck_assert_msg(rc == 0, "writing on to power/control: %s", strerror(-rc));
	active = wait_status("active", 2000) >= 0;
	s0 = count("npu/suspend_count");
	if (active)
		usleep((3 * delay + 200) * 1000);
	active = active && !strcmp(status(), "active");
	ck_assert_int_eq(gt_good_job_new_ctx(G.fd), 0);
	rc = gt_dev_attr_write("power/control", "auto");
	ck_assert_msg(rc == 0, "writing auto to power/control: %s", strerror(-rc));
	ck_assert_msg(active, "power/control on: runtime_status %s", status());
	ck_assert_uint_eq(count("npu/suspend_count"), s0);
	wait_suspended(delay, "back to auto");
}
END_TEST

Suite *gt_suite_pm(void)
{
	Suite *s = suite_create("pm");
	TCase *tc = tcase_create("runtime");

	tcase_add_test(tc, pm_idle_suspends);
	tcase_add_test(tc, pm_state_survives);
	tcase_add_test(tc, pm_control_on);
	tcase_add_test(tc, pm_sram_lost_in_d3);
	gt_add_tcase(s, tc, 60);
	return s;
}
