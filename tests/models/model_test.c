// SPDX-License-Identifier: MIT
/*
 * BlazeFace end to end on the emulator backend (make check-models):
 * compile the ONNX file, run it on a deterministic input, compare all four
 * outputs with onnxruntime's (cosine >= 0.999, max error <= 5% of the
 * output's range, in bf16), and check that fused clusters and a save/load
 * round trip change no output bit.
 *
 * Usage: model_test MODEL REFDIR   (REFDIR from ort_ref.js)
 * Prints "N passed, N failed".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npu.h"

#define NIN (128 * 128 * 3)

static int passed, failed;

static void check(int ok, const char *what, const char *detail)
{
	if (ok) {
		passed++;
		printf("ok - %s\n", what);
	} else {
		failed++;
		printf("not ok - %s: %s\n", what, detail);
	}
}

static void input_seed(float *x, unsigned seed)
{
	for (int i = 0; i < NIN; i++) {
		seed = seed * 1103515245u + 12345u;
		x[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
	}
}

/*
 * Run @model on @spec, batch element b fed input_seed(1 + 7 b); outputs
 * concatenated into *out (malloc'd), element by element.  *cycles gets the
 * simulated device cycles of the run (NULL: not wanted).
 */
static npu_status run_cycles(const char *spec, npu_model *model, float **out, size_t *n,
			     uint64_t *cycles)
{
	unsigned batch = npu_model_batch(model);
	size_t nout = npu_model_output_count(model);
	npu_device *dev;
	npu_context *ctx;
	float *x = malloc((size_t)batch * NIN * 4);
	npu_tensor *in = calloc(batch, sizeof(*in));
	npu_status st;

	for (unsigned b = 0; b < batch; b++) {
		input_seed(x + (size_t)b * NIN, 1 + 7 * b);
		in[b] = (npu_tensor){ NULL, NPU_DTYPE_FLOAT32, x + (size_t)b * NIN, NIN * 4 };
	}
	*out = NULL;
	*n = 0;
	st = npu_device_open(spec, &dev);
	if (!st) {
		st = npu_context_create(dev, model, 0, &ctx);
		if (!st) {
			npu_run_stats rs;

			st = npu_run(ctx, in, batch, NULL, 0);
			if (!st && cycles && !npu_context_last_run(ctx, &rs))
				*cycles = rs.device_cycles;
			for (size_t o = 0; !st && o < nout * batch; o++) {
				void *buf;
				size_t bytes;

				npu_context_output_buffer(ctx, o, &buf, &bytes);
				*out = realloc(*out, (*n) * 4 + bytes);
				memcpy(*out + *n, buf, bytes);
				*n += bytes / 4;
			}
			npu_context_destroy(ctx);
		}
		npu_device_close(dev);
	}
	free(in);
	free(x);
	return st;
}

static npu_status run(const char *spec, npu_model *model, float **out, size_t *n)
{
	return run_cycles(spec, model, out, n, NULL);
}

static npu_model *compile_batch(const char *path, const char *spec, unsigned batch)
{
	npu_compile_options co;
	npu_device *dev;
	npu_model *m = NULL;

	npu_compile_options_init(&co);
	co.batch = batch;
	if (npu_device_open(spec, &dev))
		return NULL;
	if (npu_model_load_file(path, dev, &co, &m))
		m = NULL;
	npu_device_close(dev);
	return m;
}

static npu_model *compile_for(const char *path, const char *spec)
{
	return compile_batch(path, spec, 1);
}

/*
 * A batch pipelined through stages gives, for every element, the bits the
 * layer-by-layer model gives for that input alone.
 */
static void check_batch(const char *path, const char *spec, unsigned batch)
{
	npu_model *one = compile_for(path, spec), *many = compile_batch(path, spec, batch);
	float *yb = NULL;
	size_t nb = 0, per = 0;
	uint64_t c1 = 0, cb = 0;
	char what[160], msg[512];
	npu_status st = one && many ? NPU_OK : NPU_ERR_INTERNAL;
	int same = 1;

	snprintf(what, sizeof(what), "batch of %u pipelined on %s: each element as run alone",
		 batch, spec);
	if (!st)
		st = run_cycles(spec, many, &yb, &nb, &cb);
	for (size_t o = 0; one && o < npu_model_output_count(one); o++) {
		npu_tensor_info ti;

		npu_model_output_info(one, o, &ti);
		per += ti.bytes / 4;
	}
	for (unsigned b = 0; !st && b < batch && same; b++) {
		npu_model *m1 = one;
		unsigned seed = 1 + 7 * b;
		float *x = malloc(NIN * 4);
		npu_tensor in = { NULL, NPU_DTYPE_FLOAT32, x, NIN * 4 };
		npu_device *dev;
		npu_context *ctx;

		input_seed(x, seed);
		st = npu_device_open(spec, &dev);
		if (st) {
			free(x);
			break;
		}
		if (!(st = npu_context_create(dev, m1, 0, &ctx))) {
			npu_run_stats rs;
			size_t at = 0;

			st = npu_run(ctx, &in, 1, NULL, 0);
			if (!st && !npu_context_last_run(ctx, &rs))
				c1 += rs.device_cycles;
			for (size_t o = 0; !st && o < npu_model_output_count(m1); o++) {
				void *buf;
				size_t bytes;

				npu_context_output_buffer(ctx, o, &buf, &bytes);
				/* Element b's outputs: b * outputs + o in the batch run. */
				same &= nb == per * batch &&
					!memcmp(buf, yb + (size_t)b * per + at, bytes);
				at += bytes / 4;
			}
			npu_context_destroy(ctx);
		}
		npu_device_close(dev);
		free(x);
	}
	snprintf(msg, sizeof(msg), "%s", st ? npu_last_error() : "outputs differ");
	check(!st && same, what, msg);
	if (!st)
		printf("# batch %u on %s: %.0f simulated cycles per input pipelined, %.0f layer by layer (%.2fx)\n",
		       batch, spec, (double)cb / batch, (double)c1 / batch,
		       cb ? (double)c1 / (double)cb : 0);
	free(yb);
	npu_model_free(one);
	npu_model_free(many);
}

int main(int argc, char **argv)
{
	const char *path, *refdir;
	npu_model *model, *back;
	float *y = NULL, *y2 = NULL;
	size_t n = 0, n2 = 0, at = 0;
	char msg[512], tmp[256];
	npu_status st;

	if (argc != 3) {
		fprintf(stderr, "usage: %s MODEL REFDIR\n", argv[0]);
		return 2;
	}
	path = argv[1];
	refdir = argv[2];
	model = compile_for(path, "emu");
	snprintf(msg, sizeof(msg), "%s", npu_last_error());
	check(model != NULL, "BlazeFace compiles for the emulator", msg);
	if (!model)
		goto out;
	check(npu_model_output_count(model) == 4, "four outputs", "wrong output count");
	st = run("emu", model, &y, &n);
	snprintf(msg, sizeof(msg), "%s", npu_last_error());
	check(!st, "runs on the emulator", msg);
	if (st)
		goto out;

	for (size_t o = 0; o < npu_model_output_count(model); o++) {
		npu_tensor_info ti;
		char name[256], file[512], what[300];
		size_t cnt;
		float *r;
		FILE *f;
		double dot = 0, na = 0, nb = 0, err = 0, lo = INFINITY, hi = -INFINITY;

		npu_model_output_info(model, o, &ti);
		snprintf(name, sizeof(name), "%s", ti.name);
		for (char *c = name; *c; c++)
			if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-", *c))
				*c = '_';
		snprintf(file, sizeof(file), "%s/%s.bin", refdir, name);
		cnt = ti.bytes / 4;
		r = malloc(ti.bytes);
		f = fopen(file, "rb");
		snprintf(what, sizeof(what), "output %s matches onnxruntime", ti.name);
		if (!f || fread(r, 4, cnt, f) != cnt) {
			check(0, what, "reference missing or short");
		} else {
			for (size_t i = 0; i < cnt; i++) {
				dot += (double)y[at + i] * r[i];
				na += (double)y[at + i] * y[at + i];
				nb += (double)r[i] * r[i];
				err = fmax(err, fabs((double)y[at + i] - r[i]));
				lo = fmin(lo, r[i]);
				hi = fmax(hi, r[i]);
			}
			snprintf(msg, sizeof(msg), "cosine %.6f, max error %.2f%% of range",
				 dot / sqrt(na * nb), 100 * err / (hi - lo));
			check(dot / sqrt(na * nb) >= 0.999 && err <= 0.05 * (hi - lo), what, msg);
			printf("# %s: %s\n", ti.name, msg);
		}
		if (f)
			fclose(f);
		free(r);
		at += cnt;
	}

	/* Fused clusters: compiled for the partition left, same bits. */
	{
		static const char *const specs[] = { "emu:defect-mask=0x2001",
						     "emu:defect-mask=0x0180" };

		for (size_t s = 0; s < 2; s++) {
			npu_model *m = compile_for(path, specs[s]);

			st = m ? run(specs[s], m, &y2, &n2) : NPU_ERR_INTERNAL;
			snprintf(msg, sizeof(msg), "%s", st ? npu_last_error() : "outputs differ");
			snprintf(tmp, sizeof(tmp), "same outputs with %s", specs[s]);
			check(!st && n2 == n && !memcmp(y, y2, n * 4), tmp, msg);
			free(y2);
			y2 = NULL;
			npu_model_free(m);
		}
	}

	/* int8, calibrated on four other inputs. */
	{
		char dir[] = "/tmp/npu-calib-XXXXXX";
		npu_compile_options co;
		npu_device *dev;
		npu_model *q = NULL;
		float *xs = malloc(NIN * 4);

		npu_compile_options_init(&co);
		co.precision = NPU_PRECISION_INT8;
		co.calibration_dir = mkdtemp(dir);
		for (unsigned k = 0; k < 4; k++) {
			char f[300];
			FILE *fp;

			snprintf(f, sizeof(f), "%s/sample%u.raw", dir, k);
			input_seed(xs, 100 + k);
			fp = fopen(f, "wb");
			fwrite(xs, 4, NIN, fp);
			fclose(fp);
		}
		st = npu_device_open("emu", &dev);
		if (!st)
			st = npu_model_load_file(path, dev, &co, &q);
		npu_device_close(dev);
		snprintf(msg, sizeof(msg), "%s", npu_last_error());
		check(!st, "compiles in int8 with calibration", msg);
		if (!st && !(st = run("emu", q, &y2, &n2))) {
			double dot = 0, na = 0, nb = 0;

			for (size_t i = 0; i < n; i++) {
				dot += (double)y2[i] * y[i];
				na += (double)y2[i] * y2[i];
				nb += (double)y[i] * y[i];
			}
			snprintf(msg, sizeof(msg), "cosine %.5f against the bf16 outputs",
				 dot / sqrt(na * nb));
			printf("# int8: %s\n", msg);
			check(dot / sqrt(na * nb) >= 0.98, "int8 outputs agree with bf16", msg);
		}
		free(y2);
		y2 = NULL;
		npu_model_free(q);
		for (unsigned k = 0; k < 4; k++) {
			char f[300];

			snprintf(f, sizeof(f), "%s/sample%u.raw", dir, k);
			unlink(f);
		}
		rmdir(dir);
		free(xs);
	}

	/* Stages pipelined across the partition: a batch per program. */
	check_batch(path, "emu", 4);
	check_batch(path, "emu:defect-mask=0x2001", 4);
	check_batch(path, "emu", 8);
	check_batch(path, "emu", 3);

	/* The native format round trip. */
	snprintf(tmp, sizeof(tmp), "/tmp/blazeface-%d.npum", (int)getpid());
	st = npu_model_save(model, tmp);
	if (!st)
		st = npu_model_load_file(tmp, NULL, NULL, &back);
	if (!st) {
		st = run("emu", back, &y2, &n2);
		npu_model_free(back);
	}
	unlink(tmp);
	snprintf(msg, sizeof(msg), "%s", st ? npu_last_error() : "outputs differ");
	check(!st && n2 == n && !memcmp(y, y2, n * 4), "saved and reloaded: same outputs", msg);
	free(y2);
out:
	free(y);
	npu_model_free(model);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
