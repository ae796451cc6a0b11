/* SPDX-License-Identifier: MIT */
/*
 * Choosing a compact cluster partition on the mesh.  Shared by the kernel
 * driver and libnpu's emulator backend, so both hand out the same
 * partitions for the same requests.  Plain C, no allocation.
 */
#ifndef NPU_HW_PARTITION_H
#define NPU_HW_PARTITION_H

#include "npu_hw_common.h"

static inline int npu_hw_pos_in(__u32 pos, __u32 x0, __u32 y0, __u32 x1,
				__u32 y1)
{
	__u32 x = pos & 0xff, y = (pos >> 8) & 0xff;

	return x >= x0 && x <= x1 && y >= y0 && y <= y1;
}

/**
 * npu_hw_partition_pick - choose @n of the @free clusters, compactly
 * @mesh_x: mesh columns.
 * @mesh_y: mesh rows.
 * @clusters: clusters present (entries of @pos).
 * @pos: mesh position of each cluster, x | y << 8 (NPU_REG_CLUSTER_POS).
 * @free: candidate clusters, bit c = cluster c.
 * @n: how many to choose.
 * @map: out: logical -> physical cluster, row-major in mesh order.
 *
 * Picks the smallest mesh rectangle holding @n free clusters (then the
 * squarest, then the first found), so a partition's NoC traffic stays
 * local, and numbers its clusters row-major.
 *
 * Return: the chosen mask, or 0 if fewer than @n are free.
 */
static inline __u32 npu_hw_partition_pick(__u32 mesh_x, __u32 mesh_y,
					  __u32 clusters, const __u32 *pos,
					  __u32 free, __u32 n, __u8 *map)
{
	__u32 best_cost = 0xffffffffu, bx0 = 0, by0 = 0, bx1 = 0, by1 = 0;
	__u32 nx = mesh_x, ny = mesh_y, mask = 0, k = 0, avail = 0;
	__u32 r, c, x, y;

	for (c = 0; c < clusters; c++)
		avail += (free >> c) & 1;
	if (!n || avail < n)
		return 0;
	/* Every rectangle x0..x1, y0..y1 of the mesh (at most 16 nodes). */
	for (r = 0; r < nx * nx * ny * ny; r++) {
		__u32 x0 = r % nx, x1 = r / nx % nx;
		__u32 y0 = r / (nx * nx) % ny, y1 = r / (nx * nx * ny);
		__u32 w, h, cnt = 0, cost;

		if (x1 < x0 || y1 < y0)
			continue;
		w = x1 - x0 + 1;
		h = y1 - y0 + 1;
		for (c = 0; c < clusters; c++)
			if ((free >> c) & 1 &&
			    npu_hw_pos_in(pos[c], x0, y0, x1, y1))
				cnt++;
		if (cnt < n)
			continue;
		cost = (w * h) * 64 + (w > h ? w - h : h - w);
		if (cost < best_cost) {
			best_cost = cost;
			bx0 = x0;
			by0 = y0;
			bx1 = x1;
			by1 = y1;
		}
	}
	for (y = by0; y <= by1 && k < n; y++)
		for (x = bx0; x <= bx1 && k < n; x++)
			for (c = 0; c < clusters && k < n; c++)
				if ((free >> c) & 1 && pos[c] == (x | y << 8)) {
					map[k++] = (__u8)c;
					mask |= 1u << c;
				}
	return k == n ? mask : 0;
}

#endif /* NPU_HW_PARTITION_H */
