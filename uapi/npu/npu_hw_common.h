/* SPDX-License-Identifier: MIT */
/*
 * Shared by the device core, the QEMU device, the kernel driver and libnpu.
 * This is the single definition of the M100 NPU hardware interface: every
 * layout below is consumed as-is; nothing is redeclared elsewhere.
 */
#ifndef NPU_HW_COMMON_H
#define NPU_HW_COMMON_H

#include <linux/types.h>

/*
 * NPU_HW_STATIC_ASSERT - compile-time layout check usable from C11
 * userspace and from the kernel (gnu11), which both accept _Static_assert.
 */
#define NPU_HW_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#define NPU_HW_ASSERT_SIZE(type, size) \
	NPU_HW_STATIC_ASSERT(sizeof(type) == (size), #type " size")

#define NPU_HW_BIT(n) (1u << (n))

#endif /* NPU_HW_COMMON_H */
