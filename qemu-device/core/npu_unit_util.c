// SPDX-License-Identifier: MIT
/* Helpers shared by the task engine and the functional units. */
#include <math.h>
#include <string.h>

#include "npu_exec.h"
#include "npu_kern.h"

/* Eight bytes at a time: every instruction's reserved fields and unused
 * operand slots go through here each time a task is loaded. */
bool npu_all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t acc = 0;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, b + i, sizeof(w));
		acc |= w;
	}
	for (; i < n; i++)
		acc |= b[i];
	return !acc;
}

bool npu_opnd_slot_clear(const struct npu_dinsn *di, unsigned o)
{
	return !di->used[o] &&
	       npu_all_zero(&di->raw.opnd[o], sizeof(di->raw.opnd[o]));
}

void npu_opnd_shape(const struct npu_dinsn *di, unsigned o,
		    struct npu_shape *s)
{
	const struct npu_walk *w = &di->opnd[o];

	memset(s, 0, sizeof(*s));
	if (!di->used[o])
		return;
	s->nd = w->nlevels - di->nrep;
	s->elems = 1;
	for (unsigned l = 0; l < s->nd; l++) {
		s->d[l] = w->count[l];
		/* counts are >= 1 (walker decode), so the division is safe */
		if (s->elems > UINT64_MAX / w->count[l])
			s->elems = UINT64_MAX;
		else
			s->elems *= w->count[l];
	}
}

bool npu_shape_equal(const struct npu_shape *a, const struct npu_shape *b)
{
	if (a->nd != b->nd)
		return false;
	for (unsigned l = 0; l < a->nd; l++)
		if (a->d[l] != b->d[l])
			return false;
	return true;
}

bool npu_dtype_int_range(unsigned dt, int32_t *lo, int32_t *hi)
{
	switch (dt) {
	case NPU_DT_INT8:
		*lo = INT8_MIN;
		*hi = INT8_MAX;
		return true;
	case NPU_DT_UINT8:
		*lo = 0;
		*hi = UINT8_MAX;
		return true;
	case NPU_DT_INT32:
		*lo = INT32_MIN;
		*hi = INT32_MAX;
		return true;
	default:
		*lo = *hi = 0;
		return false;
	}
}

/*
 * Round v, add the zero point and saturate to [lo, hi], exactly as
 * sat(round(v) + zp) even when round(v) is outside int32: at magnitudes
 * >= 2^24 a float is already integral, so only smaller values need
 * npu_round_sat (NaN goes there too and becomes 0 + zp, as in the
 * walker layer's plain conversions).
 */
int32_t npu_requant(float v, unsigned round, int32_t zp, int32_t lo,
		    int32_t hi)
{
	int64_t r;

	if (fabsf(v) >= 0x1p24f) {
		double d = v;

		/* clamp before converting: inf and huge values */
		d = d > 0x1p40 ? 0x1p40 : d < -0x1p40 ? -0x1p40 : d;
		r = (int64_t)d;
	} else {
		r = npu_round_sat(v, round, INT32_MIN, INT32_MAX);
	}
	r += zp;
	return (int32_t)(r < lo ? lo : r > hi ? hi : r);
}
