/* SPDX-License-Identifier: MIT */
/*
 * Inside the graph rewrites (npu_rewrite.c, rewrite_*.c).
 *
 * Every rewrite (an npu_rewrite_fn) takes node @k of a shape-inferred graph
 * and either leaves it alone or marks it dead / edits it in place and
 * appends nodes that compute its outputs, giving every new tensor its dtype
 * and shape.  Adding tensors or nodes moves the tables: rewrites copy what
 * they need from a node or tensor before adding anything.
 *
 * *@applied: false at entry; set to true exactly when the rewrite changed
 * the graph (marked the node dead, edited it, added a tensor or a node) --
 * each rewrite sets it just before its first change, so it is also true on
 * an error return after one.  NPU_OK alone says nothing: a rewrite that
 * does not fit the node returns NPU_OK with *@applied false and the graph
 * as it was, and some that fit keep the node alive, edited (8-bit and
 * float16 operands, a Pow's exponent, a 2-D MatMul B, LayerNormalization's
 * statistics outputs).  The driver tries a node's rewrites again until
 * none applies, so a rewrite must report false on what it leaves (an edit
 * in place must take the node out of what the rewrite handles).
 */
#ifndef NPU_REWRITE_PRIV_H
#define NPU_REWRITE_PRIV_H

#include "compile/npu_rewrite.h"
#include "ir/npu_ir.h"

/* ---- building blocks (rewrite_util.c) ---- */

/* Largest per-axis matrix (elements) a rewrite builds: 64 MB of float32. */
#define NPU_RW_MATRIX_MAX ((int64_t)1 << 24)

/* A new tensor of @dt and shape; a constant taking malloc'd @data (freed on failure). */
npu_status npu_rw_tensor(npu_ir_graph *g, npu_dtype dt, int rank, const int64_t *dims, int *id);
npu_status npu_rw_const(npu_ir_graph *g, npu_dtype dt, int rank, const int64_t *dims,
			void *data, int *id);
/* A 1-D int64 constant of @n values. */
npu_status npu_rw_ints(npu_ir_graph *g, const int64_t *v, int n, int *id);
/* Append node @op at @opset; *@id gets its id (may be NULL). */
npu_status npu_rw_op(npu_ir_graph *g, const char *op, int opset, const char *name,
		     const int *ins, int nin, const int *outs, int nout, int *id);
/* *@id = @y when >= 0, else a new tensor of @dt and shape. */
npu_status npu_rw_out(npu_ir_graph *g, int y, npu_dtype dt, int rank, const int64_t *dims,
		      int *id);
/* The numpy broadcast of @a's and @b's shapes; false if they do not broadcast. */
bool npu_rw_bshape(const npu_ir_tensor *a, const npu_ir_tensor *b, int64_t *dims, int *rank);
/*
 * *@id = @a @op @b at @opset (a broadcasting binary operator), into @y when
 * >= 0, else a new tensor of @a's dtype and the broadcast shape.
 */
npu_status npu_rw_binary(npu_ir_graph *g, const char *op, int opset, const char *name, int a,
			 int b, int y, int *id);
/* Node @k no longer produces tensor @t: the rewrite will. */
void npu_rw_detach(npu_ir_graph *g, int k, int t);
/* *@id = @x reshaped to @dims (into @y when >= 0). */
npu_status npu_rw_reshape(npu_ir_graph *g, const char *name, int x, int rank,
			  const int64_t *dims, int y, int *id);
/* *@id = elements [@i, @i + 1), or [@lo, @hi), of @x along @axis. */
npu_status npu_rw_slice_one(npu_ir_graph *g, const char *name, int x, int axis, int64_t i,
			    int *id);
npu_status npu_rw_slice(npu_ir_graph *g, const char *name, int x, int axis, int64_t lo,
			int64_t hi, int *id);
/* Concat @n parts along @axis into @y (or a new tensor) of @dims. */
npu_status npu_rw_concat(npu_ir_graph *g, const char *name, const int *parts, int n, int axis,
			 int rank, const int64_t *dims, int y, int *id);
/*
 * *@res = @x (float32) mapped along @axis by the matrix @m [in][out]
 * (malloc'd, taken): a MatMul on the last axis, Transposes around it for
 * the others.  Writes @y when >= 0, else a new tensor.
 */
npu_status npu_rw_map_axis(npu_ir_graph *g, const char *name, int x, int axis, int64_t out,
			   float *m, int y, int *res);
/*
 * *@yid (@yr, @yd) = rows @idx[0..cnt) of @x seen as [rows, inner] (@x is
 * reshaped to that first when @rows > 0): one Slice per run of consecutive
 * rows, a Concat, a Reshape (rewrite_move.c).
 */
npu_status npu_rw_gather_rows(npu_ir_graph *g, const char *name, int x, int64_t rows,
			      int64_t inner, const int64_t *idx, int cnt, int yr,
			      const int64_t *yd, int yid);
/*
 * Strided sampling folded into channels (rewrite_conv_fold.c): *@id = @x
 * [N, C, .., L, ..] (float32, @axis >= 2) cut to its first @used samples
 * along @axis (a multiple of @fold) and folded to [N, C * fold, ..,
 * used / fold, ..], sample j * fold + r of channel c becoming sample j of
 * channel c * fold + r.  npu_rw_stride_fold() is the fold that brings
 * @stride to NPU_CONV_STRIDE_MAX or less (1 if it is already): gcd(stride, kernel) when it
 * does (the kernel a whole number of folded taps), else the smallest
 * divisor of @stride that does.
 */
npu_status npu_rw_fold_axis(npu_ir_graph *g, const char *name, int x, int axis, int64_t used,
			    int64_t fold, int *id);
int64_t npu_rw_stride_fold(int64_t stride, int64_t kernel);
/* @v clamped to [0, @n - 1]. */
int64_t npu_rw_clamp(int64_t v, int64_t n);

/* ---- the rewrites ---- */

/* rewrite_resize.c, rewrite_grid.c */
npu_status npu_rewrite_resize(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_grid_sample(npu_ir_graph *g, int k, bool *applied);
/* rewrite_conv.c */
npu_status npu_rewrite_conv_transpose(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_conv3d(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_pool3d(npu_ir_graph *g, int k, bool *applied);
/* rewrite_conv_fold.c: a stride above 64 as a fold of samples into channels. */
npu_status npu_rewrite_conv_fold(npu_ir_graph *g, int k, bool *applied);
/* rewrite_clip.c: Clip's run-time bounds as Max / Min before it. */
npu_status npu_rewrite_clip_runtime(npu_ir_graph *g, int k, bool *applied);
/* rewrite_norm.c */
npu_status npu_rewrite_layernorm_stats(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_instnorm(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_mvn(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_lrn(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_batchnorm_training(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_reduce_runs(npu_ir_graph *g, int k, bool *applied);
/* rewrite_math.c */
npu_status npu_rewrite_batched_matmul(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_gemm_matrix_c(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_variadic(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_hardmax(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_pow_int(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_f16(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_mod(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_cast_like(npu_ir_graph *g, int k, bool *applied);
/* rewrite_signal.c: DFT as a MatMul, STFT as a Conv, by a cos/sin basis. */
npu_status npu_rewrite_dft(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_stft(npu_ir_graph *g, int k, bool *applied);
/* rewrite_train.c: ai.onnx.preview.training Adagrad, Adam, Momentum. */
npu_status npu_rewrite_optimizer(npu_ir_graph *g, int k, bool *applied);
/* rewrite_pow.c: Pow of an int32 (int64) base by constant whole exponents. */
npu_status npu_rewrite_pow_int_base(npu_ir_graph *g, int k, bool *applied);
/* rewrite_quant.c */
npu_status npu_rewrite_8bit(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_quant_axis(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_quant_computed(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_dyn_quant(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_bitshift(npu_ir_graph *g, int k, bool *applied);
/* rewrite_intdiv.c: int32 (narrowed) Mod by a constant, BitShift by constants. */
npu_status npu_rewrite_bitshift_int(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_cast_int8(npu_ir_graph *g, int k, bool *applied);
/* rewrite_move.c */
npu_status npu_rewrite_pad(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_gather(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_gather_elements(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_repeat(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_depth_space(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_eye_like(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_reverse_sequence(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_trilu(npu_ir_graph *g, int k, bool *applied);
/* rewrite_select.c */
npu_status npu_rewrite_where(npu_ir_graph *g, int k, bool *applied);
/* npu.IfSelect (an ONNX If): its chosen value, or a Where (rewrite_control.c). */
npu_status npu_rewrite_if_select(npu_ir_graph *g, int k, bool *applied);
/* rewrite_logic.c */
npu_status npu_rewrite_isnan(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_isinf(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_dropout_mask(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_minmax_int(npu_ir_graph *g, int k, bool *applied);
/* rewrite_scatter.c */
npu_status npu_rewrite_scatter(npu_ir_graph *g, int k, bool *applied);
/* ScatterND writing whole rows of axis 0 (indices [..., 1]): npu.ScatterRows. */
npu_status npu_rewrite_scatter_nd_rows(npu_ir_graph *g, int k, bool *applied);
/* rewrite_loss.c */
npu_status npu_rewrite_nll_loss(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_sce_loss(npu_ir_graph *g, int k, bool *applied);
/* rewrite_rotary.c */
npu_status npu_rewrite_rotate_half(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_swap_halves(npu_ir_graph *g, int k, bool *applied);
/* rewrite_detect.c (issue 17) */
npu_status npu_rewrite_compress(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_onehot(npu_ir_graph *g, int k, bool *applied);
npu_status npu_rewrite_maxpool_indices(npu_ir_graph *g, int k, bool *applied);
/* rewrite_einsum.c */
npu_status npu_rewrite_einsum(npu_ir_graph *g, int k, bool *applied);
/* rewrite_rnn.c: LSTM, GRU, RNN unrolled over time; why one is left alone. */
npu_status npu_rewrite_rnn(npu_ir_graph *g, int k, bool *applied);
const char *npu_rnn_unsupported(const npu_ir_graph *g, const npu_ir_node *n);
/*
 * rewrite_precision.c: a float Conv whose result a Log reads through a
 * magnitude (an STFT as a Conv) as three bf16 products (fp32 emulated).
 */
npu_status npu_rewrite_conv_bf16x3(npu_ir_graph *g, int k, bool *applied);
/*
 * rewrite_bf16x3.c: one fp32 product as three bf16 products, for the
 * rewrites above and rewrite_signal.c.  A constant operand's value @v as
 * its bf16 head @hi and the rest @lo (blocks wh, wl, wh); a run-time
 * operand @x as *@x3 = Concat(x, x, x - bf16(x)) along @axis.  A Conv or
 * MatMul made so carries NPU_RW_BF16X3_ATTR, so no rewrite splits it again.
 */
#define NPU_RW_BF16X3_ATTR "npu_bf16x3"
void npu_rw_bf16x3_split(float v, float *hi, float *lo);
npu_status npu_rw_bf16x3_operand(npu_ir_graph *g, const char *name, int x, int axis, int *x3);

#endif /* NPU_REWRITE_PRIV_H */
