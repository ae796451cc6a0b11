// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * KUnit: the argument checks of DRM_IOCTL_NPU_SUBMIT (npu_submit_check())
 * at and beyond every bound of the uAPI, and the mapping of a completion
 * status to the errno a job's fence carries (npu_status_errno()).
 *
 * Copyright (c) 2026 The M100 NPU authors
 */

#include <kunit/test.h>
#include <linux/errno.h>
#include <drm/drm_device.h>

#include "npu/npu_hw.h"
#include "npu_accel.h"
#include "../npu_job.h"

/* A submit every check accepts; each case changes one field from it. */
static const struct drm_npu_submit npu_submit_ok = {
	.ctx_id = 1,
	.cmd_handle = 1,
	.cmd_offset = 0,
	.cmd_size = sizeof(struct npu_hw_prog),
};

enum npu_submit_field {
	F_NONE, F_FLAGS, F_PAD, F_CMD_OFFSET, F_CMD_SIZE, F_BO_COUNT,
	F_IN_SYNC_COUNT, F_TIMEOUT_MS, F_OUT_SYNC, F_OUT_POINT, F_SYNC_POINT,
	F_CTX_ID, F_SEQNO,
};

struct npu_submit_case {
	const char *name;
	enum npu_submit_field field;
	u64 value;
	int ret;
};

static const struct npu_submit_case npu_submit_cases[] = {
	{ "baseline", F_NONE, 0, 0 },
	{ "flags 1", F_FLAGS, 1, -EINVAL },
	{ "flags bit 31", F_FLAGS, BIT(31), -EINVAL },
	{ "pad 1", F_PAD, 1, -EINVAL },
	{ "cmd_offset 64", F_CMD_OFFSET, 64, 0 },
	{ "cmd_offset 1", F_CMD_OFFSET, 1, -EINVAL },
	{ "cmd_offset 32", F_CMD_OFFSET, 32, -EINVAL },
	{ "cmd_offset 63", F_CMD_OFFSET, 63, -EINVAL },
	{ "cmd_offset max aligned", F_CMD_OFFSET, 0xffffffc0, 0 },
	{ "cmd_size 0", F_CMD_SIZE, 0, -EINVAL },
	{ "cmd_size 63", F_CMD_SIZE, 63, -EINVAL },
	{ "cmd_size max", F_CMD_SIZE, DRM_NPU_MAX_PROG_SIZE, 0 },
	{ "cmd_size max+1", F_CMD_SIZE, DRM_NPU_MAX_PROG_SIZE + 1, -EINVAL },
	{ "cmd_size u32 max", F_CMD_SIZE, U32_MAX, -EINVAL },
	{ "bo_count max", F_BO_COUNT, DRM_NPU_MAX_SUBMIT_BOS, 0 },
	{ "bo_count max+1", F_BO_COUNT, DRM_NPU_MAX_SUBMIT_BOS + 1, -EINVAL },
	{ "bo_count u32 max", F_BO_COUNT, U32_MAX, -EINVAL },
	{ "in_sync_count max", F_IN_SYNC_COUNT, DRM_NPU_MAX_SUBMIT_SYNCS, 0 },
	{ "in_sync_count max+1", F_IN_SYNC_COUNT,
	  DRM_NPU_MAX_SUBMIT_SYNCS + 1, -EINVAL },
	{ "timeout_ms max", F_TIMEOUT_MS, DRM_NPU_MAX_TIMEOUT_MS, 0 },
	{ "timeout_ms max+1", F_TIMEOUT_MS, DRM_NPU_MAX_TIMEOUT_MS + 1,
	  -EINVAL },
	{ "out_sync without point", F_OUT_SYNC, 5, 0 },
	{ "out_point without out_sync", F_OUT_POINT, 7, -EINVAL },
	{ "out_sync and out_point", F_SYNC_POINT, 7, 0 },
	/* Checked later, against the file's tables: not here. */
	{ "ctx_id 0 passes the checks", F_CTX_ID, 0, 0 },
	{ "seqno is output only", F_SEQNO, ~0ull, 0 },
};

static void npu_submit_case_desc(const struct npu_submit_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s -> %d", c->name, c->ret);
}

KUNIT_ARRAY_PARAM(npu_submit, npu_submit_cases, npu_submit_case_desc);

static void npu_submit_test_check(struct kunit *test)
{
	const struct npu_submit_case *c = test->param_value;
	struct drm_npu_submit args = npu_submit_ok;

	switch (c->field) {
	case F_NONE:
		break;
	case F_FLAGS:
		args.flags = c->value;
		break;
	case F_PAD:
		args.pad = c->value;
		break;
	case F_CMD_OFFSET:
		args.cmd_offset = c->value;
		break;
	case F_CMD_SIZE:
		args.cmd_size = c->value;
		break;
	case F_BO_COUNT:
		args.bo_count = c->value;
		break;
	case F_IN_SYNC_COUNT:
		args.in_sync_count = c->value;
		break;
	case F_TIMEOUT_MS:
		args.timeout_ms = c->value;
		break;
	case F_OUT_SYNC:
		args.out_sync = c->value;
		break;
	case F_OUT_POINT:
		args.out_point = c->value;
		break;
	case F_SYNC_POINT:
		args.out_sync = 3;
		args.out_point = c->value;
		break;
	case F_CTX_ID:
		args.ctx_id = c->value;
		break;
	case F_SEQNO:
		args.seqno = c->value;
		break;
	}
	KUNIT_EXPECT_EQ(test, npu_submit_check(&args), c->ret);
}

/* The errno of each completion status (uapi/drm/npu_accel.h "Jobs"). */
static void npu_submit_test_status_errno(struct kunit *test)
{
	static const int want[NPU_TASK_STATUS_COUNT] = {
		[NPU_TASK_OK] = 0,
		[NPU_TASK_MMU_FAULT] = -EFAULT,
		[NPU_TASK_ILLEGAL_INSN] = -EINVAL,
		[NPU_TASK_SYNC_DEADLOCK] = -EINVAL,
		[NPU_TASK_DEFECTIVE_CLUSTER] = -EINVAL,
		[NPU_TASK_TIMEOUT] = -ETIMEDOUT,
		[NPU_TASK_ABORTED] = -ECANCELED,
		[NPU_TASK_BAD_DESCRIPTOR] = -EINVAL,
		[NPU_TASK_BUS_ERROR] = -EIO,
		[NPU_TASK_INTERNAL] = -EIO,
		[NPU_TASK_INDEX_FAULT] = -ERANGE,
	};

	for (u32 s = 0; s < NPU_TASK_STATUS_COUNT; s++)
		KUNIT_EXPECT_EQ_MSG(test, npu_status_errno(s), want[s],
				    "status %u", s);
	/* A status this driver does not know is a device error. */
	KUNIT_EXPECT_EQ(test, npu_status_errno(NPU_TASK_STATUS_COUNT), -EIO);
	KUNIT_EXPECT_EQ(test, npu_status_errno(U32_MAX), -EIO);
}

static struct kunit_case npu_submit_test_cases[] = {
	KUNIT_CASE_PARAM(npu_submit_test_check, npu_submit_gen_params),
	KUNIT_CASE(npu_submit_test_status_errno),
	{}
};

static struct kunit_suite npu_submit_suite = {
	.name = "npu_submit",
	.test_cases = npu_submit_test_cases,
};

kunit_test_suite(npu_submit_suite);
