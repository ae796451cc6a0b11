// SPDX-License-Identifier: MIT
/*
 * The NoC part of the cycle model: the route of a transfer over the mesh
 * (XY routing) or over one of the CCB's own paths, booked on the link
 * calendars (npu_noc_cal.c).
 */
#include <stdlib.h>

#include "npu_task.h"

unsigned npu_noc_hops(const struct npu_task *task, unsigned a, unsigned b)
{
	unsigned mx = task->core->cfg.mesh_x;
	int dx = (int)(a % mx) - (int)(b % mx), dy = (int)(a / mx) - (int)(b / mx);

	return (unsigned)(abs(dx) + abs(dy));
}

/*
 * A transfer over one of the CCB's own paths: DDR_BYTES_PER_CYCLE wide,
 * one hop of latency, taking the cycles the path has free from @start on
 * (its arbiter interleaves requests: a long DMA flows around the short
 * GSDU requests booked ahead of it, cycle-model.md).
 */
static uint64_t route_path(struct npu_task *task, const struct npu_xfer *x,
			   uint64_t start)
{
	uint64_t ser = (x->bytes + NPU_M100_DDR_BYTES_PER_CYCLE - 1) /
		       NPU_M100_DDR_BYTES_PER_CYCLE;
	uint64_t done = npu_link_cal_fill(&task->path[x->path], start, ser);

	return done - start + NPU_M100_HOP_LATENCY;
}

/* XY routing: add bytes to each link on the path; returns transfer time. */
uint64_t npu_noc_route(struct npu_task *task, const struct npu_xfer *x,
		       uint64_t start)
{
	struct npu_perf *perf = &task->ft->perf;
	unsigned mx = task->core->cfg.mesh_x;
	unsigned x0 = x->src_node % mx, y0 = x->src_node / mx;
	unsigned x1 = x->dst_node % mx, y1 = x->dst_node / mx;
	uint64_t ser = (x->bytes + NPU_M100_LINK_BYTES_PER_CYCLE - 1) /
		       NPU_M100_LINK_BYTES_PER_CYCLE;
	uint64_t t = start, nh = 0;

	if (x->path != NPU_PATH_MESH)
		return route_path(task, x, start);
	while (x0 != x1 || y0 != y1) {
		unsigned dir, node = y0 * mx + x0, link;

		if (x0 != x1)
			dir = x1 > x0 ? NPU_LINK_EAST : NPU_LINK_WEST;
		else
			dir = y1 > y0 ? NPU_LINK_SOUTH : NPU_LINK_NORTH;
		link = node * NPU_HW_LINK_DIRS + dir;
		if (link < NPU_HW_MAX_LINKS) {
			uint64_t at = npu_link_cal_book(&task->link[link], t, ser);

			perf->link_bytes[link] += x->bytes;
			perf->link_stalls[link] += at - t;
			if (task->tracer)
				task->tracer->link(task->tracer, link, at, ser, x->bytes);
			t = at;
		}
		t += NPU_M100_HOP_LATENCY;
		nh++;
		switch (dir) {
		case NPU_LINK_EAST: x0++; break;
		case NPU_LINK_WEST: x0--; break;
		case NPU_LINK_SOUTH: y0++; break;
		default: y0--; break;
		}
	}
	return nh ? t - start + ser : 0;
}
