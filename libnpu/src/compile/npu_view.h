/* SPDX-License-Identifier: MIT */
/*
 * Strided views: a tensor seen through the layout nodes that made it
 * (Transpose, Reshape, Squeeze, Unsqueeze, Flatten, Identity, Split, Expand
 * and Concat of copies), as a walker pattern over the bytes of the tensor
 * they started from.  A lowering that reads or writes through a view folds
 * those nodes into its DMA-in walkers and write-back rows instead of running
 * them as DDR-to-DDR steps (fused attention, lower_attn.c).
 *
 * Element idx[] of the view lies at element
 *   off + sum_d ((idx[d] / div[d]) % mod[d]) * stride[d]   (no % when mod is 0)
 * of tensor t.  A stride of 0 repeats (broadcast, Expand); a div > 1 repeats
 * each element div times along that axis, which is what merging a repeated
 * axis into the one before it makes: grouped-query attention's K/V heads
 * ([B, KV, G, S, D] with G copies -> [B, KV*G, S, D]: head h reads KV head
 * h / G); a mod repeats the whole axis, as Tile does (head h reads KV
 * head h % KV).
 */
#ifndef NPU_VIEW_H
#define NPU_VIEW_H

#include <stdbool.h>

#include "ir/npu_ir.h"

struct npu_lview {
	int t;			/* the tensor whose bytes are read */
	int rank;
	int64_t off;		/* elements */
	int64_t size[NPU_MAX_RANK], stride[NPU_MAX_RANK], div[NPU_MAX_RANK], mod[NPU_MAX_RANK];
};

/* Tensor @t itself: dense, row-major. */
void npu_lview_dense(const npu_ir_graph *g, int t, struct npu_lview *v);
/* out[i] = in[perm[i]]. */
bool npu_lview_transpose(struct npu_lview *v, const int64_t *perm);
/* The same elements in row-major order as @rank dims @dims; false if no view. */
bool npu_lview_reshape(struct npu_lview *v, int rank, const int64_t *dims);
/* Element offset of @idx (one index per dim) in v->t. */
int64_t npu_lview_at(const struct npu_lview *v, const int64_t *idx);
/* Every element distinct (no stride 0 or div over a dim of more than one). */
bool npu_lview_injective(const struct npu_lview *v);

/*
 * The view of tensor @t through the layout nodes that produced it, back to
 * the first tensor something else computed (or that is constant, or a graph
 * input).  The nodes folded are appended to @chain (up to @max; *@n counts).
 */
void npu_lview_trace(const npu_ir_graph *g, int t, struct npu_lview *v, int *chain, int *n,
		    int max);
/*
 * Where tensor @t's elements land when its only consumers are layout nodes
 * ending in tensor *@y: the view of @t inside *@y (a write walker), through
 * as many of those nodes as keep each row of the last axis contiguous.
 * Without such nodes *@y = @t (dense).  The nodes are appended to @chain.
 */
void npu_lview_trace_out(const npu_ir_graph *g, int t, struct npu_lview *v, int *y, int *chain,
			int *n, int max);

#endif /* NPU_VIEW_H */
