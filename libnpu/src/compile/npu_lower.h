/* SPDX-License-Identifier: MIT */
/*
 * The lowering interface: what a lowering (lower_*.c) is given, and what
 * the fusion pass (npu_fuse.c, fuse_conv.c) decided for it.  A lowering
 * turns one node into tiles (npu_tile.h) or DDR-to-DDR DMA and hands them
 * to the scheduler (npu_cc.h); the operator registry (npu_ops.h) says
 * which lowering a node gets.
 */
#ifndef NPU_LOWER_H
#define NPU_LOWER_H

#include "compile/npu_cc.h"
#include "compile/npu_tile.h"

/* A node's lowering, as the operator registry gives it (npu_op_lowering(), npu_ops.h). */
typedef npu_status (*npu_lower_fn)(struct npu_cc *cc, const npu_ir_node *n);

npu_status npu_lower_eltwise(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_where(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_alias(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_matmul(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_conv(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_pool(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_softmax(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_gather(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_transpose(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_concat(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_slice(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_split(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_pad(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_global_pool(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_quant(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_layernorm(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_reduce(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_argreduce(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_cumsum(struct npu_cc *cc, const npu_ir_node *n);
/* Detection and ranking on the CSU (lower_topk.c, issue 17): TopK. */
npu_status npu_lower_topk(struct npu_cc *cc, const npu_ir_node *n);
/* com.microsoft MatMulNBits: packed weights widened on the chip (lower_qmatmul.c). */
npu_status npu_lower_matmul_nbits(struct npu_cc *cc, const npu_ir_node *n);
/* Why MatMulNBits node @n cannot run ("... is not"), or NULL. */
const char *npu_matmul_nbits_refusal(const npu_ir_graph *g, const npu_ir_node *n);
/*
 * NPU_PRECISION_W8 (lower_qmatmul.c): Y[M][N] = alpha (A B + beta C) with
 * the constant float B ([K][N], [N][K] when @trans) as int8 rows per
 * output channel; @c the optional constant bias row.
 */
npu_status npu_lower_matmul_w8(struct npu_cc *cc, const npu_ir_node *n, const npu_ir_tensor *b,
			       const npu_ir_tensor *c, int64_t M, int64_t K, int64_t N, bool trans,
			       float alpha, float beta);
/* npu.ScatterRows: rows written at given (constant or run-time) positions (lower_scatter.c). */
npu_status npu_lower_scatter_rows(struct npu_cc *cc, const npu_ir_node *n);
/*
 * The CPU fallback (lower_host.c, issue 17): node @n as a host step run by
 * its operator's C reference (host/npu_host.h); NPU_ERR_UNSUPPORTED saying
 * why when the host has no implementation or it does not take the node.
 */
npu_status npu_lower_host(struct npu_cc *cc, const npu_ir_node *n);
/*
 * An ONNX Loop's npu.LoopBegin and npu.LoopEnd (lower_loop.c, issue 17):
 * control steps that copy the carried values and repeat the body's steps.
 */
npu_status npu_lower_loop_begin(struct npu_cc *cc, const npu_ir_node *n);
npu_status npu_lower_loop_end(struct npu_cc *cc, const npu_ir_node *n);
/* Where tensor @id (-1: omitted) lives, as a host step's tensor (lower_host.c). */
npu_status npu_host_tensor_of(struct npu_cc *cc, int id, struct npu_host_tensor *t);
/* A MatMul marked NPU_ATTR_ATTN: the fused attention block (lower_attn.c). */
npu_status npu_lower_attention(struct npu_cc *cc, const npu_ir_node *n);

/*
 * Before the rewrites (fuse_pattern.c): decomposed layer norm, RMS norm,
 * GELU (erf and tanh forms) and SiLU become LayerNormalization,
 * RMSNormalization, Gelu and Swish nodes.
 */
npu_status npu_fuse_patterns(npu_ir_graph *g);
/*
 * The fusion pass (npu_fuse.c, fuse_conv.c), after the rewrites: folds and
 * fuses nodes, and decides which nodes run inside another's tiles, for
 * tiles of at most @hbsm bytes.  Its choices are node attributes; the
 * lowerings follow them and decide nothing themselves.
 */
npu_status npu_fuse(npu_ir_graph *g, uint32_t hbsm);
/* The convolution pairing and elision decisions (fuse_conv.c). */
npu_status npu_fuse_conv(npu_ir_graph *g, uint32_t hbsm);
/* The attention blocks (fuse_attn.c). */
npu_status npu_fuse_attention(npu_ir_graph *g, uint32_t hbsm);
/*
 * Query rows of one fused attention tile in @budget HBSM bytes (0: not
 * even one): head dim @D, value dim @Dv, @Sk keys; @mask 0 none, 1 one
 * row broadcast over the queries, 2 a row per query.
 */
uint64_t npu_attn_rows(uint64_t budget, int64_t D, int64_t Dv, int64_t Sk, int mask);
/*
 * Keys per block of a fused attention tile: all @Sk when they fit beside
 * min(@Sq, 16) query rows, else the largest even split that does (the
 * online-softmax tiling); 0 when nothing fits.
 */
int64_t npu_attn_key_block(uint64_t budget, int64_t D, int64_t Dv, int64_t Sk, int64_t Sq,
			   int mask);
/* Query rows of one combine tile over @nk key blocks (0: none fit). */
uint64_t npu_attn_combine_rows(uint64_t budget, int64_t nk, int64_t Dv);
struct npu_lview;
/*
 * Operand view @name ("npu_attn_q", _k, _v, _m, _o; NPU_ATTR_MM_A, _B) of
 * node @n, over tensor @t.
 */
npu_status npu_attn_view(const npu_ir_node *n, const char *name, int t, struct npu_lview *v);

/* The fused activation of @n (from npu_fuse) into TCU output-stage params. */
npu_status npu_cc_act(const npu_ir_node *n, struct npu_hw_tcu_params *p);

/* Lowered inside the tiles of the node that reads its output: skip it. */
#define NPU_ATTR_FUSED		"npu_fused"
/*
 * On a Where (int 1): an If whose condition is computed at run time
 * (rewrite_control.c); layer by layer its branches become step ranges of
 * which only the chosen one runs (npu_control.c).
 */
#define NPU_ATTR_IF_WHERE	"npu_if"
/* A pointwise Conv that also runs its depthwise producer (marked FUSED). */
#define NPU_ATTR_PAIR		"npu_pair"
/*
 * On a pair: its residual is rebuilt in the tile from the depthwise input,
 * pooled with this window and stride (1: the input itself).
 */
#define NPU_ATTR_RES_POOL	"npu_res_pool"
/* On a MatMul: its product is scaled by this float (a fused Mul or Div). */
#define NPU_ATTR_SCALE		"npu_scale"
/*
 * On a MatMul: it is a whole attention block, softmax(Q K^T * s + mask) V
 * (fuse_attn.c): inputs Q, K^T, V [, additive mask], each read through its
 * walker view ("npu_attn_q", _k, _v, _m; the output's "npu_attn_o"), s in
 * "npu_attn_scale".
 */
#define NPU_ATTR_ATTN		"npu_attn"
/*
 * On a plain MatMul: operand A (B) computed at run time is read through
 * this walker view of its input tensor, the layout nodes that made it
 * folded away (fuse_attn.c).
 */
#define NPU_ATTR_MM_A		"npu_mm_a"
#define NPU_ATTR_MM_B		"npu_mm_b"

/*
 * libnpu's own operator (default domain, any opset; the registry's entry
 * "npu.ScatterRows", lower_scatter.c): inputs data (rank >= 1, any dtype
 * the NPU moves), rows (int32 [S], constant or computed; constant int64
 * too), updates (data's shape with dim axis = S); attribute axis (int,
 * default 0, negative from the end); output data's shape and dtype:
 * out = data, then out[.., rows[i], ..] = updates[.., i, ..] along axis,
 * in order (the last of duplicate rows wins).  A rewrite makes one with
 * npu_ir_add_node(g, NPU_OP_SCATTER_ROWS, ...) and an "axis" attribute.
 */
#define NPU_OP_SCATTER_ROWS	"npu.ScatterRows"
/*
 * On an npu.ScatterRows node (int 1): its output lives in data's bytes,
 * whatever data's home (a graph input, the NPU_SEG_STATE KV cache, the
 * scratch), so the node writes only the rows.  The rewrite that sets it
 * promises that no node reads data after this one (data's value is gone).
 * Without it the lowering writes in place only when that is safe by
 * itself (data in the scratch, this node its only reader, no tensor
 * sharing its bytes), else it copies data to the output first.  When the
 * output already has a home of its own (a graph output, a Concat slice)
 * other than data's, or data is a constant (the CONST segment serves every
 * run), data is copied there whatever the attribute says.
 */
#define NPU_ATTR_IN_PLACE	"npu_in_place"

/*
 * Before lowering: which Concat inputs live in their slice of the output
 * (cc->home[].slice_of), so their producers write them in place
 * (lower_move.c).
 */
npu_status npu_cc_concat_slices(struct npu_cc *cc);

#endif /* NPU_LOWER_H */
