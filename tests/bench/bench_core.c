// SPDX-License-Identifier: MIT
/*
 * Device-core kernel benchmarks, each against a oneDNN reference measured
 * in the same run on the same data, one thread on both sides.  Output:
 *
 *   NAME: VALUE UNIT (REF: VALUE UNIT, ratio R)
 *
 * one line per benchmark; diagnostics go to stderr.  The results of both
 * sides are compared: a mismatch prints "FAIL: ..." and the exit status is
 * non-zero.
 *
 * With --json FILE, the rates make bench's host floor takes
 * (tests/bench/figures.py floor) are written to FILE as well: this
 * machine's memcpy bandwidth, bytes read plus bytes written per second
 * over buffers far beyond the last-level cache, and the rates of the
 * device core's own one-thread GEMM kernels in multiply-accumulates per
 * second, all measured in this run.
 *
 * oneDNN threading: the Debian build uses OpenMP, and libgomp reads
 * OMP_NUM_THREADS when it is loaded, i.e. before main() runs, so setting
 * the variable here is too late for this process.  oneDNN 2.6 has no C call
 * to cap its threads under OpenMP either, so the bench calls libgomp's
 * omp_set_num_threads(1), looked up with dlsym because libgomp is only an
 * indirect dependency (through libdnnl).  The variable is still set for any
 * child process.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <oneapi/dnnl/dnnl.h>

#include "npu_kern.h"

/*
 * oneDNN exports this row-major bf16 GEMM (it is what its own tests call)
 * but its public C header does not declare it.  bfloat16_t is a 16-bit
 * struct on the C++ side, so uint16_t pointers are ABI compatible.
 */
dnnl_status_t dnnl_gemm_bf16bf16f32(char transa, char transb, dnnl_dim_t M,
				    dnnl_dim_t N, dnnl_dim_t K, float alpha,
				    const uint16_t *A, dnnl_dim_t lda,
				    const uint16_t *B, dnnl_dim_t ldb,
				    float beta, float *C, dnnl_dim_t ldc);

#define DIM	1024
#define WARMUP	2
/* The memcpy probe: far beyond any last-level cache, best of this many. */
#define COPY_BYTES	(256ull << 20)
#define COPY_REPS	5

static int failures;

/* What the floor needs (--json): bytes/s and MACs/s, 0 until measured. */
static struct {
	double memcpy_bytes_per_s;
	double gemm_bf16_macs_per_s, gemm_i8_macs_per_s;
} rates;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint32_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return p;
}

static void one_thread(void)
{
	void (*set)(int) = NULL;
	int (*get)(void) = NULL;
	void *s;

	setenv("OMP_NUM_THREADS", "1", 1);
	s = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
	memcpy(&set, &s, sizeof(s));	/* object -> function pointer */
	s = dlsym(RTLD_DEFAULT, "omp_get_max_threads");
	memcpy(&get, &s, sizeof(s));
	if (set)
		set(1);
	fprintf(stderr, "oneDNN threads: %d\n", get ? get() : -1);
}

/*
 * Time @ours and @ref alternately (so that clock or thermal drift affects
 * both alike) and keep the best of @reps runs of each.
 */
struct timing {
	double ours, ref;
};

typedef void run_fn(void *ctx);

static struct timing best_of(int reps, run_fn *ours, run_fn *ref, void *ctx)
{
	struct timing t = { 1e30, 1e30 };

	for (int i = 0; i < WARMUP; i++) {
		ours(ctx);
		ref(ctx);
	}
	for (int i = 0; i < reps; i++) {
		double t0 = now(), t1, t2;

		ours(ctx);
		t1 = now();
		ref(ctx);
		t2 = now();
		if (t1 - t0 < t.ours)
			t.ours = t1 - t0;
		if (t2 - t1 < t.ref)
			t.ref = t2 - t1;
	}
	return t;
}

static void report(const char *name, double ops, struct timing t,
		   const char *unit, const char *ref_name)
{
	double a = ops / t.ours * 1e-9, b = ops / t.ref * 1e-9;

	printf("%s: %.1f %s (%s: %.1f %s, ratio %.2f)\n", name, a, unit,
	       ref_name, b, unit, a / b);
	fflush(stdout);
}

static void fail(const char *what)
{
	printf("FAIL: %s\n", what);
	fflush(stdout);
	failures++;
}

/* ---- int8 ---- */

struct i8_ctx {
	int n;
	int8_t *A, *B;
	int32_t *C, *R;
};

static void i8_ours(void *p)
{
	struct i8_ctx *c = p;

	npu_kern_gemm_i8(c->n, c->n, c->n, c->A, c->n, true, 0, c->B, c->n, true,
			 0, c->C, c->n, false);
}

static void i8_ref(void *p)
{
	struct i8_ctx *c = p;
	const int32_t co = 0;

	if (dnnl_gemm_s8s8s32('N', 'N', 'F', c->n, c->n, c->n, 1.0f, c->A, c->n,
			      0, c->B, c->n, 0, 0.0f, c->R, c->n, &co) != dnnl_success)
		fail("dnnl_gemm_s8s8s32 returned an error");
}

static void bench_i8(void)
{
	const size_t nn = (size_t)DIM * DIM;
	struct i8_ctx c = {
		.n = DIM, .A = xmalloc(nn), .B = xmalloc(nn),
		.C = xmalloc(nn * 4), .R = xmalloc(nn * 4),
	};
	struct timing t;

	/*
	 * A uses the full int8 range; B is kept to 7 bits, as oneDNN asks for
	 * s8 x s8 on CPUs without VNNI (where it would otherwise saturate in
	 * 16-bit intermediates), so that the equality check below is valid on
	 * any CPU.
	 */
	for (size_t i = 0; i < nn; i++) {
		c.A[i] = (int8_t)rnd();
		c.B[i] = (int8_t)((int)(rnd() % 128) - 64);
	}
	t = best_of(60, i8_ours, i8_ref, &c);
	if (memcmp(c.C, c.R, nn * 4))
		fail("gemm_i8_1024_1t: result differs from dnnl_gemm_s8s8s32");
	report("gemm_i8_1024_1t", 2.0 * DIM * DIM * DIM, t, "GOP/s",
	       "oneDNN dnnl_gemm_s8s8s32");
	rates.gemm_i8_macs_per_s = (double)DIM * DIM * DIM / t.ours;
	free(c.A);
	free(c.B);
	free(c.C);
	free(c.R);
}

/* ---- bf16 and fp32 ---- */

struct f_ctx {
	int n;
	uint16_t *A16, *B16;
	float *A, *B, *C, *R;
};

static void bf16_ours(void *p)
{
	struct f_ctx *c = p;

	npu_kern_gemm_bf16(c->n, c->n, c->n, c->A16, c->n, c->B16, c->n, c->C,
			   c->n, false);
}

static void bf16_ref(void *p)
{
	struct f_ctx *c = p;

	if (dnnl_gemm_bf16bf16f32('N', 'N', c->n, c->n, c->n, 1.0f, c->A16, c->n,
				  c->B16, c->n, 0.0f, c->R, c->n) != dnnl_success)
		fail("dnnl_gemm_bf16bf16f32 returned an error");
}

static void f32_ours(void *p)
{
	struct f_ctx *c = p;

	npu_kern_gemm_f32(c->n, c->n, c->n, c->A, c->n, c->B, c->n, c->C, c->n,
			  false);
}

static void f32_ref(void *p)
{
	struct f_ctx *c = p;

	if (dnnl_sgemm('N', 'N', c->n, c->n, c->n, 1.0f, c->A, c->n, c->B, c->n,
		       0.0f, c->R, c->n) != dnnl_success)
		fail("dnnl_sgemm returned an error");
}

/*
 * Both sides sum K = 1024 products of random values in [-1, 1] in fp32, in
 * different orders.  The sums are around sqrt(K)/3 ~ 10 in magnitude, where
 * an fp32 ulp is ~1e-6, so the two differ by ~1e-5; a missing or doubled
 * product would be off by ~0.3.  1e-3 separates the two cases.
 */
static bool close_enough(const float *a, const float *b, size_t n,
			 double *maxdiff)
{
	const double tol = 1e-3;
	bool ok = true;

	*maxdiff = 0.0;
	for (size_t i = 0; i < n; i++) {
		double d = fabs((double)a[i] - (double)b[i]);

		if (!(d <= tol))
			ok = false;
		if (!(d <= *maxdiff))	/* NaN too */
			*maxdiff = d;
	}
	return ok;
}

static void bench_float(void)
{
	const size_t nn = (size_t)DIM * DIM;
	struct f_ctx c = {
		.n = DIM,
		.A16 = xmalloc(nn * 2), .B16 = xmalloc(nn * 2),
		.A = xmalloc(nn * 4), .B = xmalloc(nn * 4),
		.C = xmalloc(nn * 4), .R = xmalloc(nn * 4),
	};
	struct timing t;
	double md;

	for (size_t i = 0; i < 2 * nn; i++) {
		float v = (float)((double)(int32_t)rnd() / 2147483648.0);
		uint32_t u;

		memcpy(&u, &v, 4);
		if (i < nn) {
			c.A[i] = v;
			c.A16[i] = (uint16_t)(u >> 16);
		} else {
			c.B[i - nn] = v;
			c.B16[i - nn] = (uint16_t)(u >> 16);
		}
	}

	t = best_of(40, bf16_ours, bf16_ref, &c);
	if (!close_enough(c.C, c.R, nn, &md))
		fail("gemm_bf16_1024_1t: result differs from dnnl_gemm_bf16bf16f32");
	fprintf(stderr, "bf16 max |ours - oneDNN| = %g\n", md);
	report("gemm_bf16_1024_1t", 2.0 * DIM * DIM * DIM, t, "GFLOP/s",
	       "oneDNN dnnl_gemm_bf16bf16f32");
	rates.gemm_bf16_macs_per_s = (double)DIM * DIM * DIM / t.ours;

	t = best_of(20, f32_ours, f32_ref, &c);
	if (!close_enough(c.C, c.R, nn, &md))
		fail("gemm_f32_1024_1t: result differs from dnnl_sgemm");
	fprintf(stderr, "f32 max |ours - oneDNN| = %g\n", md);
	report("gemm_f32_1024_1t", 2.0 * DIM * DIM * DIM, t, "GFLOP/s",
	       "oneDNN dnnl_sgemm");

	free(c.A16);
	free(c.B16);
	free(c.A);
	free(c.B);
	free(c.C);
	free(c.R);
}

/* ---- memcpy bandwidth ---- */

/*
 * The host's copy rate, the data-movement half of the floor: the best of
 * COPY_REPS memcpy calls of COPY_BYTES between buffers written first (so
 * no page is faulted in while timed), counted as the bytes read plus the
 * bytes written.  Printed without a reference: it is one.
 */
static void bench_memcpy(void)
{
	uint8_t *src = xmalloc(COPY_BYTES), *dst = xmalloc(COPY_BYTES);
	double best = 1e30;

	memset(src, 0x5a, COPY_BYTES);
	memset(dst, 0, COPY_BYTES);
	for (int i = 0; i < COPY_REPS; i++) {
		double t0 = now();

		memcpy(dst, src, COPY_BYTES);
		t0 = now() - t0;
		if (t0 < best)
			best = t0;
		src[i] = (uint8_t)i;	/* a different copy each time */
	}
	if (memcmp(dst + COPY_REPS, src + COPY_REPS, COPY_BYTES - COPY_REPS))
		fail("memcpy_256mib_1t: the copy differs from its source");
	rates.memcpy_bytes_per_s = 2.0 * COPY_BYTES / best;
	printf("memcpy_256mib_1t: %.1f GB/s read + write (best of %d)\n",
	       rates.memcpy_bytes_per_s * 1e-9, COPY_REPS);
	fflush(stdout);
	free(src);
	free(dst);
}

static int write_json(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		return -1;
	}
	fprintf(f, "{\n  \"memcpy_bytes_per_s\": %.6e,\n  \"memcpy_bytes\": %llu,\n"
		"  \"gemm_bf16_macs_per_s\": %.6e,\n  \"gemm_i8_macs_per_s\": %.6e,\n"
		"  \"gemm_dim\": %d,\n  \"threads\": 1\n}\n",
		rates.memcpy_bytes_per_s, COPY_BYTES, rates.gemm_bf16_macs_per_s,
		rates.gemm_i8_macs_per_s, DIM);
	if (fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *json = NULL;

	if (argc == 3 && !strcmp(argv[1], "--json")) {
		json = argv[2];
	} else if (argc != 1) {
		fprintf(stderr, "usage: %s [--json FILE]\n", argv[0]);
		return 2;
	}
	one_thread();
	bench_i8();
	bench_float();
	bench_memcpy();
	if (json && write_json(json))
		failures++;
	return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
