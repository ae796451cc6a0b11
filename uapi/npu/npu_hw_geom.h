/* SPDX-License-Identifier: MIT */
/*
 * M100 geometry: compile-time defaults and hard limits.
 *
 * Defaults come from seeds/000 (the M100 paper) unless marked "design
 * choice"; Documentation/hw/geometry.md cites each one.  A device instance
 * may be built smaller (QEMU properties); software must read the geometry
 * registers, never these defaults, to learn what it runs on.
 */
#ifndef NPU_HW_GEOM_H
#define NPU_HW_GEOM_H

#include "npu_hw_common.h"

/* Limits of the register and descriptor encodings. */
#define NPU_HW_MAX_CLUSTERS		16	/* 16-bit cluster masks */
#define NPU_HW_MAX_TPBS_PER_CLUSTER	4	/* 4-bit TPB masks */
#define NPU_HW_MAX_MESH_NODES		16	/* mesh_x * mesh_y */
#define NPU_HW_NUM_QUEUES		4	/* seed 000: four CPU-engine pairs */
#define NPU_HW_NUM_DMA_ENGINES		2	/* seed 000: two DMA engines */
#define NPU_HW_SU_COUNTERS		32	/* per TPB and in the CCB; design choice */
#define NPU_HW_LINK_DIRS		4	/* east, west, north, south */
#define NPU_HW_MAX_LINKS		(NPU_HW_MAX_MESH_NODES * NPU_HW_LINK_DIRS)

/* M100 defaults. */
#define NPU_M100_CLUSTERS		14	/* seed 000: 14 clusters */
#define NPU_M100_TPBS_PER_CLUSTER	4	/* seed 000: 4 TPBs per cluster */
#define NPU_M100_MAX_DEFECTIVE		2	/* seed 000: up to 2 fused clusters */
#define NPU_M100_HBSM_SIZE		(2u << 20)	/* seed 000: 2 MB */
#define NPU_M100_HBSM_BANKS		32	/* seed 000: 32 banks */
#define NPU_M100_HBSM_BANK_BYTES	32	/* seed 000: 32 B/cycle, 32 B interleave */
#define NPU_M100_HBSM_PORTS		8	/* seed 000: 8 requester ports */
#define NPU_M100_HBSM_LATENCY		20	/* seed 000: ~20 cycles */
#define NPU_M100_SRAM_SIZE		(32u << 20)	/* seed 000: 32 MB */
#define NPU_M100_SRAM_BANKS		4	/* seed 000: 4 x 8 MB */
#define NPU_M100_SRAM_INTERLEAVE	4096	/* seed 000: 4 KB interleave */
#define NPU_M100_TCU_ROWS		8	/* seed 000: 8 x 64 MAC array */
#define NPU_M100_TCU_COLS		64
#define NPU_M100_TCU_DOT		4	/* seed 000: 4-element dot per MAC */
#define NPU_M100_TCU_ACT_BW		32	/* seed 000: activation bytes/cycle */
#define NPU_M100_TCU_WGT_BW		64	/* seed 000: weight bytes/cycle */
#define NPU_M100_CVU_BYTES_PER_CYCLE	64	/* design choice */
#define NPU_M100_DTDU_BYTES_PER_CYCLE	64	/* design choice */
#define NPU_M100_DDR_BYTES_PER_CYCLE	256	/* seed 000: 256 GB/s at 1 GHz */
#define NPU_M100_LINK_BYTES_PER_CYCLE	64	/* design choice (seed 002 model) */
#define NPU_M100_HOP_LATENCY		2	/* design choice: cycles per hop */
#define NPU_M100_CLOCK_MHZ		1000	/* design choice: not disclosed */
#define NPU_M100_MESH_X			4	/* design choice: 4 x 4 mesh */
#define NPU_M100_MESH_Y			4

/*
 * Default mesh placement (design choice): node (x, y) has index y*mesh_x+x.
 * The CCB sits at node 0 (0,0), the DDR port at node mesh_x-1 (3,0); the
 * clusters fill the remaining nodes in row-major order.  Software reads
 * the actual placement from NPU_REG_CLUSTER_POS / NPU_REG_MESH.
 */
#define NPU_M100_CCB_NODE		0
#define NPU_M100_DDR_NODE		(NPU_M100_MESH_X - 1)

/* Directed link index: node * NPU_HW_LINK_DIRS + dir. */
enum npu_hw_link_dir {
	NPU_LINK_EAST = 0,	/* x + 1 */
	NPU_LINK_WEST = 1,	/* x - 1 */
	NPU_LINK_NORTH = 2,	/* y - 1 */
	NPU_LINK_SOUTH = 3,	/* y + 1 */
};

#endif /* NPU_HW_GEOM_H */
