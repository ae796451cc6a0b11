/* SPDX-License-Identifier: MIT */
/*
 * The geometry of a 2-D convolution or pooling node (NCHW, 1-D as height 1),
 * read once from a canonical node, and the HBSM footprint of the tiles that
 * the fusion pass (fuse_conv.c) must know before it pairs two convolutions
 * that the lowering (lower_conv.c) then lays out.
 */
#ifndef NPU_CONV_GEOM_H
#define NPU_CONV_GEOM_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/npu_ir.h"

/* The largest stride the TCU's Conv takes (larger ones are folded: rewrite_conv_fold.c). */
#define NPU_CONV_STRIDE_MAX 64

struct npu_conv_geom {
	int64_t N, C, H, W, OC, OH, OW, KH, KW;
	int64_t sh, sw, dh, dw, pt, pl, pb, pr, groups;
};

/*
 * Read node @n's geometry (a pool when @pool: groups = channels).  The end
 * padding includes what ceil_mode's last window reaches past the input.
 */
npu_status npu_conv_geom_read(const npu_ir_graph *g, const npu_ir_node *n, bool pool,
			      struct npu_conv_geom *geom);

/*
 * The most input rows a block of @ohb output rows reads: a block away
 * from the top and bottom edges gets no padding, so it reads the most.
 */
int64_t npu_conv_max_rows(const struct npu_conv_geom *g, int64_t ohb);

static inline uint64_t npu_align64(uint64_t v)
{
	return (v + 63) & ~(uint64_t)63;
}

/*
 * HBSM bytes of a depthwise (@ga) + pointwise (@gb) pair tile making
 * @orows output rows from @rows input rows, with a residual when @res
 * (the layout lower_conv.c's lower_pair uses).
 */
uint64_t npu_pair_tile_bytes(const struct npu_conv_geom *ga, const struct npu_conv_geom *gb,
			     bool res, int64_t rows, int64_t orows);

#endif /* NPU_CONV_GEOM_H */
