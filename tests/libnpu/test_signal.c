// SPDX-License-Identifier: MIT
/*
 * Issue 17's signal processing and the node suite's other skips, each
 * against a C reference written the direct way: DFT and STFT (the basis
 * product on the TCU, rewrite_signal.c) against a double-precision DFT
 * sum, with the error a 512-point transform gets and the error plain bf16
 * products would give; the window functions and the mel matrix folded at
 * compile time; the training optimisers (rewrite_train.c) with R and T at
 * run time; Pow of an int32 base (rewrite_pow.c) against wrapping
 * repeated multiplication, and its refusals.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_ops.h"
#include "compile/npu_rewrite.h"
#include "ir_build.h"
#include "npu_test.h"

static bool has_op(const npu_ir_graph *g, const char *op)
{
	for (int i = 0; i < g->n_nodes; i++)
		if (!g->nodes[i].dead && !strcmp(g->nodes[i].op, op))
			return true;
	return false;
}

/* Shapes, rewrites (@gone must be gone), compile, run: x[] in, y[] out. */
static npu_status run(npu_ir_graph *g, const char *gone, void *const *x, void *const *y)
{
	struct npu_cmodel *cm;
	npu_status st;

	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	st = npu_rewrite(g);
	if (st)
		return st;
	if (gone)
		ck_assert_msg(!has_op(g, gone), "%s is still in the graph", gone);
	st = irb_compile(g, "emu", &cm);
	if (st)
		return st;
	st = irb_exec(cm, "emu", x, y);
	ck_assert_msg(st == NPU_OK, "run: %s", npu_last_error());
	return st;
}

static void fill(float *v, int64_t n, unsigned seed)
{
	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
	}
}

static float bf16(float v)
{
	return npu_ir_bf16_to_f32(npu_ir_f32_to_bf16(v));
}

/* ---- DFT ---- */

/*
 * Bin k (re, im) of the length-@len DFT of @x (@c = 1 real, 2 complex
 * samples at stride @stride): the defining sum, in double.
 */
static void dft_ref(const float *x, int64_t n, int c, int64_t stride, int64_t len, int64_t k,
		    bool inverse, double *re, double *im)
{
	double s = inverse ? 1.0 : -1.0;

	*re = 0;
	*im = 0;
	for (int64_t i = 0; i < n && i < len; i++) {
		double th = s * 2.0 * M_PI * (double)k * (double)i / (double)len;
		double xr = x[i * stride * c], xi = c == 2 ? x[i * stride * c + 1] : 0.0;

		*re += xr * cos(th) - xi * sin(th);
		*im += xr * sin(th) + xi * cos(th);
	}
	if (inverse) {
		*re /= (double)len;
		*im /= (double)len;
	}
}

/*
 * A real 512-point signal: the TCU's three bf16 products stay within
 * 1e-4 of the largest bin; plain bf16 products (the signal and the basis
 * rounded to bf16, fp32 sums) are measured beside them.
 */
START_TEST(dft_512_point_error)
{
	enum { N = 512 };
	float *x = malloc(N * sizeof(*x)), *y = malloc(N * 2 * sizeof(*y));
	npu_ir_graph *g = irb_graph(17);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, (int64_t[]){ 1, N, 1 });
	int ty = irb_tensor(g, "y", 0, -1, NULL);
	double err = 0, err_bf16 = 0, peak = 0;

	ck_assert_ptr_nonnull(x);
	ck_assert_ptr_nonnull(y);
	fill(x, N, 17);
	irb_node(g, "DFT", &tx, 1, &ty, 1);
	irb_io(g, &tx, 1, &ty, 1);
	ck_assert_int_eq(run(g, "DFT", (void *[]){ x }, (void *[]){ y }), NPU_OK);
	for (int64_t k = 0; k < N; k++) {
		double re, im, br = 0, bi = 0;

		dft_ref(x, N, 1, 1, N, k, false, &re, &im);
		for (int64_t i = 0; i < N; i++) {
			double th = -2.0 * M_PI * (double)((k * i) % N) / N;

			br += (double)(bf16(x[i]) * bf16((float)cos(th)));
			bi += (double)(bf16(x[i]) * bf16((float)sin(th)));
		}
		peak = fmax(peak, hypot(re, im));
		err = fmax(err, fmax(fabs(y[2 * k] - re), fabs(y[2 * k + 1] - im)));
		err_bf16 = fmax(err_bf16, fmax(fabs(br - re), fabs(bi - im)));
	}
	fprintf(stderr, "DFT 512 points: max error %.2e of the largest bin (three bf16 products), %.2e (plain bf16)\n",
		err / peak, err_bf16 / peak);
	ck_assert_msg(err / peak < 1e-4, "error %g of the largest bin %g", err, peak);
	ck_assert_msg(err_bf16 / peak > 1e-4, "plain bf16 is this exact? %g", err_bf16 / peak);
	npu_ir_graph_free(g);
	free(x);
	free(y);
}
END_TEST

/* Complex [2, 6, 5, 2] over axis 1 (moved beside re/im and back), inverse, dft_length 8. */
START_TEST(dft_complex_inverse_axis_padded)
{
	enum { B = 2, N = 6, M = 5, L = 8 };
	float x[B * N * M * 2], y[B * L * M * 2];
	int64_t len = L;
	npu_ir_graph *g = irb_graph(17);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, (int64_t[]){ B, N, M, 2 });
	int tl = irb_const(g, "len", NPU_DTYPE_INT64, 0, NULL, &len);
	int ty = irb_tensor(g, "y", 0, -1, NULL);
	npu_ir_node *n;

	fill(x, B * N * M * 2, 5);
	n = irb_node(g, "DFT", (int[]){ tx, tl }, 2, &ty, 1);
	npu_ir_set_attr_int(n, "axis", 1);
	npu_ir_set_attr_int(n, "inverse", 1);
	irb_io(g, &tx, 1, &ty, 1);
	ck_assert_int_eq(run(g, "DFT", (void *[]){ x }, (void *[]){ y }), NPU_OK);
	for (int b = 0; b < B; b++)
		for (int k = 0; k < L; k++)
			for (int m = 0; m < M; m++) {
				double re, im;
				const float *got = &y[((b * L + k) * M + m) * 2];

				dft_ref(&x[(b * N * M + m) * 2], N, 2, M, L, k, true, &re, &im);
				ck_assert_msg(fabs(got[0] - re) < 1e-4 && fabs(got[1] - im) < 1e-4,
					      "b %d bin %d m %d: got (%g, %g), want (%g, %g)", b, k, m,
					      got[0], got[1], re, im);
			}
	npu_ir_graph_free(g);
}
END_TEST

/* Opset 20: the axis as a constant input (1, of [2, 8, 3, 1]), onesided: [2, 5, 3, 2]. */
START_TEST(dft_opset20_axis_input_onesided)
{
	enum { B = 2, N = 8, M = 3, K = N / 2 + 1 };
	float x[B * N * M], y[B * K * M * 2];
	int64_t axis = 1;
	npu_ir_graph *g = irb_graph(20);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, (int64_t[]){ B, N, M, 1 });
	int ta = irb_const(g, "axis", NPU_DTYPE_INT64, 0, NULL, &axis);
	int ty = irb_tensor(g, "y", 0, -1, NULL);
	npu_ir_node *n;

	fill(x, B * N * M, 13);
	n = irb_node(g, "DFT", (int[]){ tx, -1, ta }, 3, &ty, 1);
	n->opset = 20;
	npu_ir_set_attr_int(n, "onesided", 1);
	irb_io(g, &tx, 1, &ty, 1);
	ck_assert_int_eq(run(g, "DFT", (void *[]){ x }, (void *[]){ y }), NPU_OK);
	for (int b = 0; b < B; b++)
		for (int k = 0; k < K; k++)
			for (int m = 0; m < M; m++) {
				double re, im;
				const float *got = &y[((b * K + k) * M + m) * 2];

				dft_ref(&x[b * N * M + m], N, 1, M, N, k, false, &re, &im);
				ck_assert_msg(fabs(got[0] - re) < 1e-4 && fabs(got[1] - im) < 1e-4,
					      "b %d bin %d m %d: got (%g, %g), want (%g, %g)", b, k, m,
					      got[0], got[1], re, im);
			}
	npu_ir_graph_free(g);
}
END_TEST

/* ---- STFT ---- */

/* [2, 100, 1], frame_step 10, a constant Hann window of 16, onesided: [2, 9, 9, 2]. */
START_TEST(stft_windowed_frames)
{
	enum { B = 2, S = 100, FL = 16, STEP = 10, F = (S - FL) / STEP + 1, K = FL / 2 + 1 };
	float x[B * S], w[FL], y[B * F * K * 2], fr[FL];
	int64_t step = STEP;
	npu_ir_graph *g = irb_graph(17);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, (int64_t[]){ B, S, 1 });
	int ts = irb_const(g, "step", NPU_DTYPE_INT64, 0, NULL, &step);
	int tw, ty = irb_tensor(g, "y", 0, -1, NULL);

	for (int i = 0; i < FL; i++)
		w[i] = (float)(0.5 - 0.5 * cos(2.0 * M_PI * i / FL));
	tw = irb_const(g, "w", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ FL }, w);
	fill(x, B * S, 9);
	irb_node(g, "STFT", (int[]){ tx, ts, tw }, 3, &ty, 1);
	irb_io(g, &tx, 1, &ty, 1);
	ck_assert_int_eq(run(g, "STFT", (void *[]){ x }, (void *[]){ y }), NPU_OK);
	for (int b = 0; b < B; b++)
		for (int f = 0; f < F; f++) {
			for (int i = 0; i < FL; i++)
				fr[i] = x[b * S + f * STEP + i] * w[i];
			for (int k = 0; k < K; k++) {
				double re, im;
				const float *got = &y[((b * F + f) * K + k) * 2];

				dft_ref(fr, FL, 1, 1, FL, k, false, &re, &im);
				ck_assert_msg(fabs(got[0] - re) < 1e-4 && fabs(got[1] - im) < 1e-4,
					      "b %d frame %d bin %d: got (%g, %g), want (%g, %g)", b,
					      f, k, got[0], got[1], re, im);
			}
		}
	npu_ir_graph_free(g);
}
END_TEST

/* A complex signal [1, 40, 2], no window, frame_length 8 given, two-sided: [1, 6, 8, 2]. */
START_TEST(stft_complex_two_sided)
{
	enum { S = 40, FL = 8, STEP = 6, F = (S - FL) / STEP + 1 };
	float x[S * 2], y[F * FL * 2];
	int64_t step = STEP, fl = FL;
	npu_ir_graph *g = irb_graph(17);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, (int64_t[]){ 1, S, 2 });
	int ts = irb_const(g, "step", NPU_DTYPE_INT64, 0, NULL, &step);
	int tl = irb_const(g, "fl", NPU_DTYPE_INT64, 0, NULL, &fl);
	int ty = irb_tensor(g, "y", 0, -1, NULL);
	npu_ir_node *n;

	fill(x, S * 2, 21);
	/* window omitted: input 2 is -1 */
	n = irb_node(g, "STFT", (int[]){ tx, ts, -1, tl }, 4, &ty, 1);
	npu_ir_set_attr_int(n, "onesided", 0);
	irb_io(g, &tx, 1, &ty, 1);
	ck_assert_int_eq(run(g, "STFT", (void *[]){ x }, (void *[]){ y }), NPU_OK);
	for (int f = 0; f < F; f++)
		for (int k = 0; k < FL; k++) {
			double re, im;
			const float *got = &y[(f * FL + k) * 2];

			dft_ref(&x[f * STEP * 2], FL, 2, 1, FL, k, false, &re, &im);
			ck_assert_msg(fabs(got[0] - re) < 1e-4 && fabs(got[1] - im) < 1e-4,
				      "frame %d bin %d: got (%g, %g), want (%g, %g)", f, k, got[0],
				      got[1], re, im);
		}
	npu_ir_graph_free(g);
}
END_TEST

/*
 * A speech front end's framing (Whisper: 400-sample frames every 160
 * samples, a Hann window): the hop exceeds a Conv's stride, so the signal
 * is folded by gcd(400, 160) = 80 samples into channels first.
 */
START_TEST(stft_speech_hop)
{
	enum { S = 4000, FL = 400, STEP = 160, F = (S - FL) / STEP + 1, K = FL / 2 + 1 };
	float *x = malloc(S * sizeof(*x)), *y = malloc(F * K * 2 * sizeof(*y)), w[FL], fr[FL];
	int64_t step = STEP;
	npu_ir_graph *g = irb_graph(17);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, (int64_t[]){ 1, S, 1 });
	int ts = irb_const(g, "step", NPU_DTYPE_INT64, 0, NULL, &step);
	int tw, ty = irb_tensor(g, "y", 0, -1, NULL);
	double err = 0, peak = 0;

	ck_assert_ptr_nonnull(x);
	ck_assert_ptr_nonnull(y);
	for (int i = 0; i < FL; i++)
		w[i] = (float)(0.5 - 0.5 * cos(2.0 * M_PI * i / FL));
	tw = irb_const(g, "w", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ FL }, w);
	fill(x, S, 31);
	irb_node(g, "STFT", (int[]){ tx, ts, tw }, 3, &ty, 1);
	irb_io(g, &tx, 1, &ty, 1);
	ck_assert_int_eq(run(g, "STFT", (void *[]){ x }, (void *[]){ y }), NPU_OK);
	for (int f = 0; f < F; f++) {
		for (int i = 0; i < FL; i++)
			fr[i] = x[f * STEP + i] * w[i];
		for (int k = 0; k < K; k++) {
			double re, im;

			dft_ref(fr, FL, 1, 1, FL, k, false, &re, &im);
			peak = fmax(peak, hypot(re, im));
			err = fmax(err, fmax(fabs(y[(f * K + k) * 2] - re),
					     fabs(y[(f * K + k) * 2 + 1] - im)));
		}
	}
	ck_assert_msg(err / peak < 1e-4, "error %g of the largest bin %g", err, peak);
	npu_ir_graph_free(g);
	free(x);
	free(y);
}
END_TEST

/* A window computed at run time cannot go into the basis: refused by name. */
START_TEST(stft_runtime_window_refused)
{
	int64_t step = 4;
	npu_ir_graph *g = irb_graph(17);
	int tx = irb_tensor(g, "x", NPU_DTYPE_FLOAT32, 3, (int64_t[]){ 1, 32, 1 });
	int tw = irb_tensor(g, "w", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ 8 });
	int ts = irb_const(g, "step", NPU_DTYPE_INT64, 0, NULL, &step);
	int ty = irb_tensor(g, "y", 0, -1, NULL);

	irb_node(g, "STFT", (int[]){ tx, ts, tw }, 3, &ty, 1);
	irb_io(g, (int[]){ tx, tw }, 2, &ty, 1);
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_int_eq(npu_rewrite(g), NPU_ERR_UNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "STFT (node"));
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "window is computed at run time"));
	npu_ir_graph_free(g);
}
END_TEST

/* ---- windows and the mel matrix: folded ---- */

static const npu_ir_tensor *folded(npu_ir_graph *g, int t)
{
	ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
	ck_assert_msg(npu_ir_is_const(&g->tensors[t]), "not folded");
	return &g->tensors[t];
}

START_TEST(windows_fold)
{
	static const struct { const char *op; double a0, a1, a2; } win[] = {
		{ "HannWindow", 0.5, 0.5, 0 },
		{ "HammingWindow", 25.0 / 46, 21.0 / 46, 0 },
		{ "BlackmanWindow", 0.42, 0.5, 0.08 },
	};

	for (int w = 0; w < 3; w++)
		for (int periodic = 0; periodic < 2; periodic++) {
			int32_t size = 10;
			npu_ir_graph *g = irb_graph(17);
			int ts = irb_const(g, "size", NPU_DTYPE_INT32, 0, NULL, &size);
			int ty = irb_tensor(g, "y", 0, -1, NULL);
			const npu_ir_tensor *y;
			npu_ir_node *n = irb_node(g, win[w].op, &ts, 1, &ty, 1);

			npu_ir_set_attr_int(n, "periodic", periodic);
			irb_io(g, (int[]){ 0 }, 0, &ty, 1);
			y = folded(g, ty);
			ck_assert_int_eq(y->dtype, NPU_DTYPE_FLOAT32);
			ck_assert_int_eq(npu_ir_numel(y), size);
			for (int i = 0; i < size; i++) {
				double den = periodic ? size : size - 1;
				double want = win[w].a0 - win[w].a1 * cos(2 * M_PI * i / den) +
					      win[w].a2 * cos(4 * M_PI * i / den);

				ck_assert_msg(fabs(((const float *)y->data)[i] - want) < 1e-6,
					      "%s periodic %d [%d]: got %g, want %g", win[w].op,
					      periodic, i, ((const float *)y->data)[i], want);
			}
			npu_ir_graph_free(g);
		}
}
END_TEST

/*
 * MelWeightMatrix 8 bands of a 16-point DFT at 8192 Hz, 0..4096 Hz:
 * [9, 8], every band a triangle of values in [0, 1] peaking at exactly 1.
 */
START_TEST(mel_matrix_folds)
{
	int32_t mel = 8, dft = 16, rate = 8192;
	float lo = 0, hi = 4096;
	npu_ir_graph *g = irb_graph(17);
	int in[5] = { irb_const(g, "m", NPU_DTYPE_INT32, 0, NULL, &mel),
		      irb_const(g, "d", NPU_DTYPE_INT32, 0, NULL, &dft),
		      irb_const(g, "r", NPU_DTYPE_INT32, 0, NULL, &rate),
		      irb_const(g, "l", NPU_DTYPE_FLOAT32, 0, NULL, &lo),
		      irb_const(g, "h", NPU_DTYPE_FLOAT32, 0, NULL, &hi) };
	int ty = irb_tensor(g, "y", 0, -1, NULL);
	const npu_ir_tensor *y;

	irb_node(g, "MelWeightMatrix", in, 5, &ty, 1);
	irb_io(g, (int[]){ 0 }, 0, &ty, 1);
	y = folded(g, ty);
	ck_assert_int_eq(y->rank, 2);
	ck_assert_int_eq(y->dims[0], 9);
	ck_assert_int_eq(y->dims[1], 8);
	for (int m = 0; m < 8; m++) {
		float peak = 0;

		for (int b = 0; b < 9; b++) {
			float v = ((const float *)y->data)[b * 8 + m];

			ck_assert(v >= 0 && v <= 1);
			peak = fmaxf(peak, v);
		}
		ck_assert_msg(peak == 1.0f, "band %d peaks at %g", m, peak);
	}
	npu_ir_graph_free(g);
}
END_TEST

/* ---- training optimisers ---- */

static npu_ir_node *train_node(npu_ir_graph *g, const char *op, const int *in, int nin,
			       const int *out, int nout)
{
	npu_ir_node *n = irb_node(g, op, in, nin, out, nout);

	free(n->domain);
	n->domain = strdup("ai.onnx.preview.training");
	n->opset = 1;
	return n;
}

/* Adam on two tensors with R and T given at run time, T = 0 (no bias correction) and 3. */
START_TEST(adam_runtime_step)
{
	enum { N = 5 };
	const float alpha = 0.9f, beta = 0.99f, eps = 1e-3f, norm = 0.01f;

	for (int64_t t = 0; t < 4; t += 3) {
		float r = 0.1f, x[N], gr[N], v[N], h[N], xo[N], vo[N], ho[N];
		npu_ir_graph *g = irb_graph(17);
		int in[6], out[3];
		npu_ir_node *n;

		fill(x, N, 1);
		fill(gr, N, 2);
		fill(v, N, 3);
		fill(h, N, 4);
		for (int i = 0; i < N; i++)
			h[i] = fabsf(h[i]);
		in[0] = irb_tensor(g, "R", NPU_DTYPE_FLOAT32, 0, NULL);
		in[1] = irb_tensor(g, "T", NPU_DTYPE_INT64, 0, NULL);
		in[2] = irb_tensor(g, "X", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ N });
		in[3] = irb_tensor(g, "G", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ N });
		in[4] = irb_tensor(g, "V", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ N });
		in[5] = irb_tensor(g, "H", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ N });
		for (int i = 0; i < 3; i++)
			out[i] = irb_tensor(g, (const char *[]){ "Xn", "Vn", "Hn" }[i], 0, -1, NULL);
		n = train_node(g, "Adam", in, 6, out, 3);
		npu_ir_set_attr_float(n, "alpha", alpha);
		npu_ir_set_attr_float(n, "beta", beta);
		npu_ir_set_attr_float(n, "epsilon", eps);
		npu_ir_set_attr_float(n, "norm_coefficient", norm);
		irb_io(g, in, 6, out, 3);
		ck_assert_int_eq(run(g, "Adam", (void *[]){ &r, &t, x, gr, v, h },
				     (void *[]){ xo, vo, ho }), NPU_OK);
		for (int i = 0; i < N; i++) {
			double gg = norm * x[i] + gr[i], vn = alpha * v[i] + (1 - alpha) * gg;
			double hn = beta * h[i] + (1 - beta) * gg * gg, ra = r;
			double xn;

			if (t > 0)
				ra = r * sqrt(1 - pow(beta, (double)t)) / (1 - pow(alpha, (double)t));
			xn = x[i] - ra * vn / (sqrt(hn) + eps);
			ck_assert_msg(fabs(vo[i] - vn) < 1e-5 && fabs(ho[i] - hn) < 1e-5 &&
				      fabs(xo[i] - xn) < 1e-4 * (1 + fabs(xn)),
				      "T %lld [%d]: X %g/%g V %g/%g H %g/%g", (long long)t, i, xo[i],
				      xn, vo[i], vn, ho[i], hn);
		}
		npu_ir_graph_free(g);
	}
}
END_TEST

/* Momentum, Nesterov mode, T at run time (beta applies only from T > 0). */
START_TEST(momentum_nesterov_runtime_step)
{
	enum { N = 6 };
	const float alpha = 0.8f, beta = 0.3f;

	for (int64_t t = 0; t < 3; t += 2) {
		float r = 0.05f, x[N], gr[N], v[N], xo[N], vo[N];
		npu_ir_graph *g = irb_graph(17);
		int in[5], out[2];
		npu_ir_node *n;

		fill(x, N, 7);
		fill(gr, N, 8);
		fill(v, N, 9);
		in[0] = irb_tensor(g, "R", NPU_DTYPE_FLOAT32, 0, NULL);
		in[1] = irb_tensor(g, "T", NPU_DTYPE_INT64, 0, NULL);
		in[2] = irb_tensor(g, "X", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ N });
		in[3] = irb_tensor(g, "G", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ N });
		in[4] = irb_tensor(g, "V", NPU_DTYPE_FLOAT32, 1, (int64_t[]){ N });
		out[0] = irb_tensor(g, "Xn", 0, -1, NULL);
		out[1] = irb_tensor(g, "Vn", 0, -1, NULL);
		n = train_node(g, "Momentum", in, 5, out, 2);
		npu_ir_set_attr_float(n, "alpha", alpha);
		npu_ir_set_attr_float(n, "beta", beta);
		npu_ir_set_attr_string(n, "mode", "nesterov");
		irb_io(g, in, 5, out, 2);
		ck_assert_int_eq(run(g, "Momentum", (void *[]){ &r, &t, x, gr, v },
				     (void *[]){ xo, vo }), NPU_OK);
		for (int i = 0; i < N; i++) {
			double b = t > 0 ? beta : 1.0, vn = alpha * v[i] + b * gr[i];
			double xn = x[i] - r * (gr[i] + alpha * vn);

			ck_assert_msg(fabs(vo[i] - vn) < 1e-5 && fabs(xo[i] - xn) < 1e-5,
				      "T %lld [%d]: X %g/%g V %g/%g", (long long)t, i, xo[i], xn,
				      vo[i], vn);
		}
		npu_ir_graph_free(g);
	}
}
END_TEST

/* ---- Pow of an integer base ---- */

/* x^e by repeated multiplication, wrapping as int32. */
static int32_t ipow_ref(int32_t x, int64_t e)
{
	uint32_t r = 1;

	for (int64_t i = 0; i < e; i++)
		r *= (uint32_t)x;
	return (int32_t)r;
}

/* Per-element exponents 0..31 (one Where per mixed bit), overflow wrapping. */
START_TEST(pow_int_base_exact)
{
	enum { N = 8 };
	int32_t x[N] = { -3, 2, 7, 0, -1, 46341, 3, 0 }, y[N];
	int64_t e[N] = { 3, 10, 0, 5, 7, 2, 31, 0 };
	npu_ir_graph *g = irb_graph(15);
	int tx = irb_tensor(g, "x", NPU_DTYPE_INT32, 1, (int64_t[]){ N });
	int te = irb_const(g, "e", NPU_DTYPE_INT64, 1, (int64_t[]){ N }, e);
	int ty = irb_tensor(g, "y", 0, -1, NULL);

	irb_node(g, "Pow", (int[]){ tx, te }, 2, &ty, 1);
	irb_io(g, &tx, 1, &ty, 1);
	ck_assert_int_eq(run(g, "Pow", (void *[]){ x }, (void *[]){ y }), NPU_OK);
	for (int i = 0; i < N; i++)
		ck_assert_msg(y[i] == ipow_ref(x[i], e[i]), "%d^%lld: got %d, want %d", x[i],
			      (long long)e[i], y[i], ipow_ref(x[i], e[i]));
	npu_ir_graph_free(g);
}
END_TEST

/* A scalar float exponent of a whole value, broadcast over [2, 3]. */
START_TEST(pow_int_base_float_scalar_exponent)
{
	int32_t x[6] = { 1, -2, 3, -4, 5, 6 }, y[6];
	float e = 3.0f;
	npu_ir_graph *g = irb_graph(15);
	int tx = irb_tensor(g, "x", NPU_DTYPE_INT32, 2, (int64_t[]){ 2, 3 });
	int te = irb_const(g, "e", NPU_DTYPE_FLOAT32, 0, NULL, &e);
	int ty = irb_tensor(g, "y", 0, -1, NULL);

	irb_node(g, "Pow", (int[]){ tx, te }, 2, &ty, 1);
	irb_io(g, &tx, 1, &ty, 1);
	ck_assert_int_eq(run(g, "Pow", (void *[]){ x }, (void *[]){ y }), NPU_OK);
	for (int i = 0; i < 6; i++)
		ck_assert_int_eq(y[i], x[i] * x[i] * x[i]);
	npu_ir_graph_free(g);
}
END_TEST

/* x^0 is 1 everywhere, 0^0 too (no factor at all: ones of y's shape). */
START_TEST(pow_int_base_zero_exponent)
{
	int32_t x[4] = { 0, -5, 7, 1 }, y[4];
	int64_t e = 0;
	npu_ir_graph *g = irb_graph(15);
	int tx = irb_tensor(g, "x", NPU_DTYPE_INT32, 1, (int64_t[]){ 4 });
	int te = irb_const(g, "e", NPU_DTYPE_INT64, 0, NULL, &e);
	int ty = irb_tensor(g, "y", 0, -1, NULL);

	irb_node(g, "Pow", (int[]){ tx, te }, 2, &ty, 1);
	irb_io(g, &tx, 1, &ty, 1);
	ck_assert_int_eq(run(g, "Pow", (void *[]){ x }, (void *[]){ y }), NPU_OK);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(y[i], 1);
	npu_ir_graph_free(g);
}
END_TEST

/* Run-time, negative and fractional exponents: refused, naming the node. */
START_TEST(pow_int_base_refused)
{
	static const char *const why[] = { "computed at run time", "negative", "fraction" };

	for (int c = 0; c < 3; c++) {
		float fe = 2.5f;
		int32_t ie = -2;
		npu_ir_graph *g = irb_graph(15);
		int tx = irb_tensor(g, "x", NPU_DTYPE_INT32, 1, (int64_t[]){ 4 });
		int te = c == 0 ? irb_tensor(g, "e", NPU_DTYPE_INT32, 1, (int64_t[]){ 4 }) :
			 c == 1 ? irb_const(g, "e", NPU_DTYPE_INT32, 0, NULL, &ie) :
			 irb_const(g, "e", NPU_DTYPE_FLOAT32, 0, NULL, &fe);
		int ty = irb_tensor(g, "y", 0, -1, NULL);

		irb_node(g, "Pow", (int[]){ tx, te }, 2, &ty, 1);
		irb_io(g, c == 0 ? (int[]){ tx, te } : &tx, c == 0 ? 2 : 1, &ty, 1);
		ck_assert_int_eq(npu_ops_infer_shapes(g), NPU_OK);
		ck_assert_int_eq(npu_rewrite(g), NPU_ERR_UNSUPPORTED);
		ck_assert_ptr_nonnull(strstr(npu_last_error(), "Pow (node"));
		ck_assert_msg(strstr(npu_last_error(), why[c]), "%s", npu_last_error());
		npu_ir_graph_free(g);
	}
}
END_TEST

static Suite *signal_suite(void)
{
	Suite *s = suite_create("npu_signal");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, dft_512_point_error);
	tcase_add_test(tc, dft_complex_inverse_axis_padded);
	tcase_add_test(tc, dft_opset20_axis_input_onesided);
	tcase_add_test(tc, stft_windowed_frames);
	tcase_add_test(tc, stft_complex_two_sided);
	tcase_add_test(tc, stft_speech_hop);
	tcase_add_test(tc, stft_runtime_window_refused);
	tcase_add_test(tc, windows_fold);
	tcase_add_test(tc, mel_matrix_folds);
	tcase_add_test(tc, adam_runtime_step);
	tcase_add_test(tc, momentum_nesterov_runtime_step);
	tcase_add_test(tc, pow_int_base_exact);
	tcase_add_test(tc, pow_int_base_float_scalar_exponent);
	tcase_add_test(tc, pow_int_base_zero_exponent);
	tcase_add_test(tc, pow_int_base_refused);
	suite_add_tcase(s, tc);
	return s;
}

NPU_TEST_SUITE(signal_suite)
