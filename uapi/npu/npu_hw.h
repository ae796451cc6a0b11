/* SPDX-License-Identifier: MIT */
/* The whole M100 hardware interface; see Documentation/hw/. */
#ifndef NPU_HW_H
#define NPU_HW_H

#include "npu_hw_common.h"
#include "npu_hw_geom.h"
#include "npu_hw_regs.h"
#include "npu_hw_queue.h"
#include "npu_hw_mmu.h"
#include "npu_hw_isa.h"

#endif /* NPU_HW_H */
