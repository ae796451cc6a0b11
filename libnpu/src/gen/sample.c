// SPDX-License-Identifier: MIT
/*
 * Token sampling (npu_sample.h).  Candidates are ordered by logit, high
 * first, the lower id first among equals, so every cut (top-k, top-p)
 * and the walk of the draw are deterministic; probabilities are computed
 * in double from logit - max, so a large logit cannot overflow.
 */
#include <math.h>
#include <stdlib.h>

#include "gen/npu_sample.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void npu_rng_seed(struct npu_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t npu_rng_next(struct npu_rng *r)
{
	uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

double npu_rng_uniform(struct npu_rng *r)
{
	return (double)(npu_rng_next(r) >> 11) * 0x1.0p-53;
}

int64_t npu_argmax_f32(const float *x, size_t n)
{
	size_t best = 0;

	for (size_t i = 1; i < n; i++)
		if (x[i] > x[best] || (isnan(x[best]) && !isnan(x[i])))
			best = i;
	return (int64_t)best;
}

/* Sort keys for qsort: the logits being ordered (qsort takes no context). */
static _Thread_local const float *sort_logits;

static float key(uint32_t i)
{
	float v = sort_logits[i];

	return isnan(v) ? -INFINITY : v;
}

static int by_logit_desc(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	float x = key(i), y = key(j);

	if (x != y)
		return x > y ? -1 : 1;
	return i < j ? -1 : i > j;
}

int64_t npu_sample_logits(const struct npu_sample_params *p, struct npu_rng *r,
			  const float *logits, size_t n, uint32_t *order, double *prob)
{
	size_t keep = n;
	double sum = 0, cum, u;
	float top;

	if (!(p->temperature > 0) || p->top_k == 1 || n <= 1)
		return npu_argmax_f32(logits, n);
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	sort_logits = logits;
	qsort(order, n, sizeof(*order), by_logit_desc);
	top = key(order[0]);
	if (p->top_k && p->top_k < keep)
		keep = p->top_k;
	if (!isfinite(top))
		return order[0];
	for (size_t i = 0; i < keep; i++) {
		prob[i] = exp(((double)key(order[i]) - top) / p->temperature);
		sum += prob[i];
	}
	/* Nucleus: the fewest highest whose probability reaches top_p. */
	if (p->top_p > 0 && p->top_p < 1) {
		double need = p->top_p * sum;

		cum = 0;
		for (size_t i = 0; i < keep; i++) {
			cum += prob[i];
			if (cum >= need) {
				keep = i + 1;
				sum = cum;
				break;
			}
		}
	}
	if (keep == 1)
		return order[0];
	u = npu_rng_uniform(r) * sum;
	cum = 0;
	for (size_t i = 0; i < keep; i++) {
		cum += prob[i];
		if (u < cum)
			return order[i];
	}
	return order[keep - 1];	/* rounding at the very end of the sum */
}
