// SPDX-License-Identifier: MIT
/*
 * Softmax over the last axis and top-k selection (npu_post.h).
 */
#include <math.h>
#include <stdbool.h>

#include "npu_internal.h"
#include "npu_post.h"

/* ---- softmax ---- */

/*
 * Softmax is invariant to adding a constant to every logit, so each row
 * is shifted by its maximum first: every exponent is then <= 0 and
 * exp() stays in (0, 1] instead of overflowing for large logits.  The
 * denominator is summed in double so long rows lose little precision.
 */
static void softmax_row(const float *in, float *out, int64_t n)
{
	float max = -INFINITY;
	double sum = 0.0;
	float inv;

	for (int64_t i = 0; i < n; i++) {
		if (isnan(in[i])) {
			for (int64_t j = 0; j < n; j++)
				out[j] = NAN;
			return;
		}
		if (in[i] > max)
			max = in[i];
	}
	if (isinf(max)) {
		/*
		 * max = +inf: x - max is NaN for the +inf entries; in the
		 * limit they share all the mass.  max = -inf: every entry
		 * is -inf; treat them as equal logits (uniform).
		 */
		int64_t hits = 0;

		for (int64_t i = 0; i < n; i++)
			hits += in[i] == max;
		for (int64_t i = 0; i < n; i++)
			out[i] = in[i] == max ? 1.0f / (float)hits : 0.0f;
		return;
	}
	/* Element i is read before out[i] is written: in == out is fine. */
	for (int64_t i = 0; i < n; i++) {
		float e = expf(in[i] - max);

		out[i] = e;
		sum += e;
	}
	/* The maximum contributes exp(0) = 1, so sum >= 1. */
	inv = (float)(1.0 / sum);
	for (int64_t i = 0; i < n; i++)
		out[i] *= inv;
}

npu_status npu_softmax(const float *in, float *out, int64_t rows, int64_t cols)
{
	if (rows < 0 || cols < 0)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"npu_softmax: negative shape (rows %lld, cols %lld)",
				(long long)rows, (long long)cols);
	if (rows == 0 || cols == 0)
		return NPU_OK;
	if (rows > INT64_MAX / cols || (uint64_t)(rows * cols) > SIZE_MAX / sizeof(float))
		return npu_fail(NPU_ERR_INVALID_ARG,
				"npu_softmax: %lld x %lld elements is too large",
				(long long)rows, (long long)cols);
	if (!in || !out)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_softmax: %s is NULL",
				!in ? "in" : "out");
	for (int64_t r = 0; r < rows; r++)
		softmax_row(in + r * cols, out + r * cols, cols);
	return NPU_OK;
}

/* ---- top-k ---- */

/*
 * The ranking: higher score first, NaN after every number, ties (and
 * NaNs among themselves) by lower index.  It is a strict total order on
 * (score, index) pairs, so the result never depends on visiting order.
 */
static bool ranks_before(const float *scores, int64_t a, int64_t b)
{
	float sa = scores[a], sb = scores[b];
	bool na = isnan(sa), nb = isnan(sb);

	if (na != nb)
		return nb;
	if (!na && sa != sb)
		return sa > sb;
	return a < b;
}

/*
 * A binary heap of indices in out[0..len) with the worst-ranked entry at
 * the root: a candidate only has to beat the root to get in.
 */
static void sift_down(const float *scores, npu_top_k_entry *h, int64_t len, int64_t i)
{
	for (;;) {
		int64_t l = 2 * i + 1, r = l + 1, worst = i;
		int64_t tmp;

		if (l < len && ranks_before(scores, h[worst].index, h[l].index))
			worst = l;
		if (r < len && ranks_before(scores, h[worst].index, h[r].index))
			worst = r;
		if (worst == i)
			return;
		tmp = h[i].index;
		h[i].index = h[worst].index;
		h[worst].index = tmp;
		i = worst;
	}
}

npu_status npu_top_k(const float *scores, int64_t n, int64_t k, const npu_labels *labels,
		     npu_top_k_entry *out, int64_t *count)
{
	int64_t len;

	if (!count)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_top_k: count is NULL");
	*count = 0;
	if (n < 0 || k < 0)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_top_k: negative %s (%lld)",
				n < 0 ? "n" : "k", (long long)(n < 0 ? n : k));
	len = k < n ? k : n;
	if (len == 0)
		return NPU_OK;
	if (!scores || !out)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_top_k: %s is NULL",
				!scores ? "scores" : "out");

	/* Heap of the first len indices, then let the rest challenge it. */
	for (int64_t i = 0; i < len; i++)
		out[i].index = i;
	for (int64_t i = len / 2 - 1; i >= 0; i--)
		sift_down(scores, out, len, i);
	for (int64_t i = len; i < n; i++) {
		if (ranks_before(scores, i, out[0].index)) {
			out[0].index = i;
			sift_down(scores, out, len, 0);
		}
	}
	/* Heap sort: move the worst to the back each time: best first. */
	for (int64_t end = len - 1; end > 0; end--) {
		int64_t tmp = out[0].index;

		out[0].index = out[end].index;
		out[end].index = tmp;
		sift_down(scores, out, end, 0);
	}
	for (int64_t i = 0; i < len; i++) {
		out[i].score = scores[out[i].index];
		out[i].label = labels ? npu_labels_get(labels, (size_t)out[i].index) : NULL;
	}
	*count = len;
	return NPU_OK;
}
