/* SPDX-License-Identifier: MIT */
/*
 * Token sampling for generation sessions: greedy, temperature, top-k,
 * top-p (nucleus), drawn with a seeded PRNG of our own so that one seed
 * gives the same ids on every platform.  Pure functions, no device.
 */
#ifndef NPU_SAMPLE_H
#define NPU_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "npu.h"

/* xoshiro256** state, seeded through splitmix64. */
struct npu_rng {
	uint64_t s[4];
};

void npu_rng_seed(struct npu_rng *r, uint64_t seed);
uint64_t npu_rng_next(struct npu_rng *r);
/* A double uniform in [0, 1) from the top 53 bits of the next draw. */
double npu_rng_uniform(struct npu_rng *r);

struct npu_sample_params {
	float temperature;	/* > 0; <= 0 means greedy */
	unsigned top_k;		/* 0: no cut */
	float top_p;		/* 0 or >= 1: no cut */
};

/*
 * The index of the highest of @x[0..@n), the lowest index on a tie (as
 * ONNX ArgMax with select_last_index 0); NaN counts as below everything.
 * 0 for n == 0.
 */
int64_t npu_argmax_f32(const float *x, size_t n);

/*
 * One id drawn from @logits[0..@n) (@n >= 1) with @p and @r.  @order and
 * @prob are caller scratch of @n entries each.  A temperature <= 0,
 * top_k 1 or a distribution that collapses to one id gives the argmax
 * without drawing; otherwise exactly one PRNG draw per call.
 */
int64_t npu_sample_logits(const struct npu_sample_params *p, struct npu_rng *r,
			  const float *logits, size_t n, uint32_t *order, double *prob);

#endif /* NPU_SAMPLE_H */
