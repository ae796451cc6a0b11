// SPDX-License-Identifier: MIT
/*
 * DFT and STFT (opset 17) on the TCU: a discrete Fourier transform over a
 * static axis is a product with a constant cos/sin basis, so
 *
 *   DFT   the signal, the transformed axis moved next to the real/imag
 *         axis and both flattened to one row of N*C values, times a
 *         constant [N*C][K*2] matrix: one MatMul;
 *   STFT  a 1-D Conv over the signal [batch, C, length] whose kernels are
 *         the basis times the window ([K*2][C][frame_length], stride
 *         frame_step): the Conv's sliding window is the framing, so no
 *         frame is copied out (a Slice/Gather per frame would move every
 *         sample frame_length / frame_step times before the MatMul).
 *
 * Row n of the basis is zero from dft_length on (ONNX truncates) and
 * absent rows are the zero padding; onesided keeps bins 0..L/2; inverse
 * conjugates the basis and scales it by 1/L.
 *
 * The TCU multiplies bf16 operands (fp32 accumulation): a 512-point
 * transform of a signal with values around 1 comes out with errors near
 * 1e-2 of its largest bin (tests/libnpu/test_signal.c measures it),
 * beyond the node suite's tolerance on small bins.  So each product is
 * three bf16 products (rewrite_bf16x3.c): the signal as Concat(x, x,
 * x - bf16(x)) along the reduced axis of one MatMul (or the channels of
 * one Conv), the basis as its bf16 head, the rest and the head again:
 * three times the TCU work of a plain bf16 product, errors near 1e-5.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_rewrite_priv.h"
#include "ir/npu_ir_rules.h"

/* Basis entries at most (float32 of each of the three blocks). */
#define SIGNAL_BASIS_MAX ((int64_t)1 << 22)

struct basis {
	int64_t n, c, k, len;	/* signal samples, 1 or 2, bins, dft_length */
	bool inverse;
	const float *window;	/* [n] or NULL */
};

/* Entry (row sample @i, channel @c) x (bin @k, re/im @o) of the basis. */
static double basis_at(const struct basis *b, int64_t i, int64_t c, int64_t k, int o)
{
	double th, cs, sn, w = b->window ? b->window[i] : 1.0, s = b->inverse ? 1.0 : -1.0;

	if (i >= b->len)
		return 0.0;	/* truncated */
	th = 2.0 * M_PI * (double)((k * i) % b->len) / (double)b->len;
	cs = cos(th);
	sn = s * sin(th);
	/* (xr + i xi)(cos + i sn) */
	if (b->inverse)
		w /= (double)b->len;
	if (o == 0)
		return w * (c == 0 ? cs : -sn);
	return w * (c == 0 ? sn : cs);
}

/*
 * The three blocks [W_hi; W_lo; W_hi] of the basis as float32: for a
 * MatMul a [3 * N * C][K * 2] matrix (row blk * N * C + sample * C +
 * channel); for a Conv [K * 2][3 * C * fold][N / fold] kernels, the signal
 * folded by @fold samples into channels (see npu_rewrite_stft).
 */
static void basis_fill(const struct basis *b, float *m, bool conv, int64_t fold)
{
	int64_t rows = b->n * b->c, cols = b->k * 2, kl = b->n / fold, cc = b->c * fold;

	for (int64_t i = 0; i < b->n; i++)
		for (int64_t c = 0; c < b->c; c++)
			for (int64_t k = 0; k < b->k; k++)
				for (int o = 0; o < 2; o++) {
					float hi, lo;
					int64_t col = k * 2 + o;

					npu_rw_bf16x3_split((float)basis_at(b, i, c, k, o), &hi, &lo);

					for (int blk = 0; blk < 3; blk++) {
						float e = blk == 1 ? lo : hi;
						/* Conv: sample i of channel c is tap i / fold
						 * of channel c * fold + i % fold */
						int64_t at = conv ?
							(col * 3 * cc + blk * cc + c * fold + i % fold) * kl +
							i / fold :
							(blk * rows + i * b->c + c) * cols + col;

						m[at] = e;
					}
				}
}

/* The perm that swaps @a and @b of rank @r. */
static void swap_perm(int64_t *perm, int r, int a, int b)
{
	for (int i = 0; i < r; i++)
		perm[i] = i;
	perm[a] = b;
	perm[b] = a;
}

static npu_status transpose(npu_ir_graph *g, const char *name, int x, const int64_t *perm,
			    int y, int *id)
{
	const npu_ir_tensor *t = &g->tensors[x];
	int64_t dims[NPU_MAX_RANK];
	int r = t->rank, k;
	npu_status st;

	for (int i = 0; i < r; i++)
		dims[i] = t->dims[perm[i]];
	if ((st = npu_rw_out(g, y, NPU_DTYPE_FLOAT32, r, dims, id)) ||
	    (st = npu_rw_op(g, "Transpose", 13, name, &x, 1, id, 1, &k)))
		return st;
	return npu_ir_set_attr_ints(&g->nodes[k], "perm", perm, r);
}

static npu_status signal_refuse(const npu_ir_node *n, const char *why)
{
	char lbl[96];

	return npu_fail(NPU_ERR_UNSUPPORTED, "%s (node %s): %s", n->op,
			npu_ir_node_label(n, lbl, sizeof(lbl)), why);
}

npu_status npu_rewrite_dft(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	int64_t axis = 1, inverse = 0, xd[NPU_MAX_RANK], td[NPU_MAX_RANK], perm[NPU_MAX_RANK];
	int64_t m = 1, flat[2], rows;
	int r, a, cur, yid, a3, mm;
	struct basis b = { 0 };
	char name[128];
	float *w;
	npu_status st;

	*applied = false;
	if (!x || !y || x->dtype != NPU_DTYPE_FLOAT32 || y->dtype != NPU_DTYPE_FLOAT32)
		return NPU_OK;
	if ((st = npu_ir_dft_axis(g, n, &axis)) ||
	    (st = npu_ir_attr_int(n, "inverse", 0, &inverse)))
		return st;
	r = x->rank;
	a = (int)(axis < 0 ? axis + r : axis);
	b.n = x->dims[a];
	b.c = x->dims[r - 1];
	b.k = y->dims[a];	/* L, or L / 2 + 1 when onesided */
	b.len = b.n;
	b.inverse = inverse != 0;
	if (n->n_inputs > 1 && n->inputs[1] >= 0) {
		int64_t len;
		int c;

		if (npu_ir_const_ints(npu_ir_input(g, n, 1), &len, 1, &c) || c != 1)
			return signal_refuse(n, "dft_length must be a constant");
		b.len = len;
	}
	rows = b.n * b.c;
	if (3 * rows * b.k * 2 > SIGNAL_BASIS_MAX)
		return signal_refuse(n, "the transform's basis matrix is too large (at most 4M entries)");
	memcpy(xd, x->dims, sizeof(xd));
	yid = n->outputs[0];
	snprintf(name, sizeof(name), "%s", n->name);
	w = malloc((size_t)(3 * rows * b.k * 2) * sizeof(*w));
	if (!w)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	basis_fill(&b, w, false, 1);
	*applied = true;
	cur = n->inputs[0];
	g->nodes[k].dead = true;
	npu_rw_detach(g, k, yid);
	swap_perm(perm, r, a, r - 2);
	st = NPU_OK;
	if (a != r - 2)
		st = transpose(g, name, cur, perm, -1, &cur);
	if (st) {
		free(w);
		return st;
	}
	memcpy(td, g->tensors[cur].dims, sizeof(td));
	for (int i = 0; i < r - 2; i++)
		m *= td[i];
	flat[0] = m;
	flat[1] = rows;
	if ((st = npu_rw_reshape(g, name, cur, 2, flat, -1, &cur)) ||
	    (st = npu_rw_bf16x3_operand(g, name, cur, 1, &a3))) {
		free(w);
		return st;
	}
	/* npu_rw_map_axis takes @w */
	if ((st = npu_rw_map_axis(g, name, a3, 1, b.k * 2, w, -1, &mm)))
		return st;
	td[r - 2] = b.k;
	td[r - 1] = 2;
	if (a == r - 2)
		return npu_rw_reshape(g, name, mm, r, td, yid, &cur);
	if ((st = npu_rw_reshape(g, name, mm, r, td, -1, &cur)))
		return st;
	return transpose(g, name, cur, perm, yid, &cur);
}

npu_status npu_rewrite_stft(npu_ir_graph *g, int k, bool *applied)
{
	const npu_ir_node *n = &g->nodes[k];
	const npu_ir_tensor *x = npu_ir_input(g, n, 0), *y = npu_ir_output(g, n, 0);
	const npu_ir_tensor *win = npu_ir_input(g, n, 2);
	int64_t step, batch, len, xd[3], wd[3], yd[4], perm[3] = { 0, 2, 1 }, fd[3];
	int64_t fold, kl, stride;
	int c, yid, cur, x3, wt, cv, kn;
	struct basis b = { 0 };
	float *window = NULL, *w;
	char name[128];
	npu_status st;

	*applied = false;
	if (!x || !y || x->dtype != NPU_DTYPE_FLOAT32 || y->dtype != NPU_DTYPE_FLOAT32)
		return NPU_OK;
	if (npu_ir_const_ints(npu_ir_input(g, n, 1), &step, 1, &c) || c != 1)
		return signal_refuse(n, "frame_step must be a constant");
	batch = x->dims[0];
	len = x->dims[1];
	b.c = x->dims[2];
	b.k = y->dims[2];
	b.n = len - (y->dims[1] - 1) * step;	/* at least frame_length */
	b.n = win ? win->dims[0] : b.n;
	if (n->n_inputs > 3 && n->inputs[3] >= 0) {
		int64_t fl;

		if (npu_ir_const_ints(npu_ir_input(g, n, 3), &fl, 1, &c) || c != 1)
			return signal_refuse(n, "frame_length must be a constant");
		b.n = fl;
	}
	b.len = b.n;
	if (win && !npu_ir_is_const(win))
		return signal_refuse(n, "the window is computed at run time; it must be a constant (it is folded into the transform's basis)");
	if (3 * b.c * b.n * b.k * 2 > SIGNAL_BASIS_MAX)
		return signal_refuse(n, "the transform's basis is too large (at most 4M entries)");
	if (win) {
		window = malloc((size_t)b.n * sizeof(*window));
		if (!window || npu_ir_const_floats(win, window, (int)b.n, &c) || c != b.n) {
			free(window);
			return signal_refuse(n, "the window must be a float constant of frame_length values");
		}
	}
	b.window = window;
	/*
	 * A Conv strides at most 64 (conv_geom.c); speech hops are longer
	 * (160 samples: 10 ms at 16 kHz).  Then fold = gcd(hop, frame
	 * length) consecutive samples become channels: stride hop / fold,
	 * kernel frame_length / fold taps (Whisper's 400 every 160: 80
	 * channels, 5 taps, stride 2), the fold every Conv gets
	 * (rewrite_conv_fold.c).  The basis is no zero-extended kernel.
	 */
	fold = npu_rw_stride_fold(step, b.n);
	if (b.n % fold) {
		free(window);
		return signal_refuse(n, "frame_step and frame_length share no factor that brings the stride to 64 or less (a Conv's limit)");
	}
	w = malloc((size_t)(3 * b.c * b.n * b.k * 2) * sizeof(*w));
	if (!w) {
		free(window);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	basis_fill(&b, w, true, fold);
	free(window);
	memcpy(yd, y->dims, sizeof(yd));
	yid = n->outputs[0];
	snprintf(name, sizeof(name), "%s", n->name);
	*applied = true;
	cur = n->inputs[0];
	g->nodes[k].dead = true;
	npu_rw_detach(g, k, yid);
	/* [B, length, C] -> [B, C, length] */
	xd[0] = batch;
	xd[1] = b.c;
	xd[2] = len;
	st = b.c == 1 ? npu_rw_reshape(g, name, cur, 3, xd, -1, &cur) :
	     transpose(g, name, cur, perm, -1, &cur);
	if (!st && fold > 1)
		st = npu_rw_fold_axis(g, name, cur, 2, (yd[1] - 1) * step + b.n, fold, &cur);
	if (!st)
		st = npu_rw_bf16x3_operand(g, name, cur, 1, &x3);
	wd[0] = b.k * 2;
	wd[1] = 3 * b.c * fold;
	wd[2] = b.n / fold;
	kl = b.n / fold;
	stride = step / fold;
	if (!st)
		st = npu_rw_const(g, NPU_DTYPE_FLOAT32, 3, wd, w, &wt);
	else
		free(w);
	fd[0] = batch;
	fd[1] = b.k * 2;
	fd[2] = yd[1];
	if (!st)
		st = npu_rw_tensor(g, NPU_DTYPE_FLOAT32, 3, fd, &cv);
	if (!st)
		st = npu_rw_op(g, "Conv", 11, name, (int[]){ x3, wt }, 2, &cv, 1, &kn);
	if (!st)
		st = npu_ir_set_attr_int(&g->nodes[kn], NPU_RW_BF16X3_ATTR, 1);
	if (!st)
		st = npu_ir_set_attr_ints(&g->nodes[kn], "kernel_shape", &kl, 1);
	if (!st)
		st = npu_ir_set_attr_ints(&g->nodes[kn], "strides", &stride, 1);
	if (!st)
		st = npu_ir_set_attr_ints(&g->nodes[kn], "pads", (int64_t[]){ 0, 0 }, 2);
	if (!st)
		st = npu_ir_set_attr_ints(&g->nodes[kn], "dilations", (int64_t[]){ 1 }, 1);
	/* [B, K*2, frames] -> [B, frames, K*2] -> [B, frames, K, 2] */
	if (!st)
		st = transpose(g, name, cv, perm, -1, &cur);
	return st ? st : npu_rw_reshape(g, name, cur, 4, yd, yid, &cur);
}
