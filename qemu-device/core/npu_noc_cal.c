// SPDX-License-Identifier: MIT
/* NoC link calendars (npu_noc_cal.h). */
#include <stdlib.h>
#include <string.h>

#include "npu_noc_cal.h"

uint64_t npu_link_cal_book(struct npu_link_cal *c, uint64_t t, uint64_t len)
{
	uint32_t lo = 0, hi = c->n, i;

	/* The first interval ending after t. */
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (c->e[mid] > t)
			hi = mid;
		else
			lo = mid + 1;
	}
	for (i = lo; i < c->n; i++) {
		if (t + len <= c->s[i])
			break;
		if (c->e[i] > t)
			t = c->e[i];
	}
	if (i > 0 && c->e[i - 1] == t) {
		c->e[i - 1] = t + len;
		if (i < c->n && c->s[i] == c->e[i - 1]) {
			c->e[i - 1] = c->e[i];
			memmove(&c->s[i], &c->s[i + 1], (c->n - i - 1) * sizeof(*c->s));
			memmove(&c->e[i], &c->e[i + 1], (c->n - i - 1) * sizeof(*c->e));
			c->n--;
		}
		return t;
	}
	if (i < c->n && c->s[i] == t + len) {
		c->s[i] = t;
		return t;
	}
	if (c->n == c->cap) {
		uint32_t cap = c->cap ? 2 * c->cap : 64;
		uint64_t *s, *e;

		if (cap > NPU_LINK_CAL_MAX) {
			/* Full: the two earliest become one. */
			c->e[0] = c->e[1];
			memmove(&c->s[1], &c->s[2], (c->n - 2) * sizeof(*c->s));
			memmove(&c->e[1], &c->e[2], (c->n - 2) * sizeof(*c->e));
			c->n--;
			return npu_link_cal_book(c, t, len);
		}
		s = realloc(c->s, cap * sizeof(*s));
		if (s)
			c->s = s;
		e = s ? realloc(c->e, cap * sizeof(*e)) : NULL;
		if (!e) {
			/* No memory: queue behind everything booked. */
			t = c->n && c->e[c->n - 1] > t ? c->e[c->n - 1] : t;
			if (c->n)
				c->e[c->n - 1] = t + len;
			return t;
		}
		c->e = e;
		c->cap = cap;
	}
	memmove(&c->s[i + 1], &c->s[i], (c->n - i) * sizeof(*c->s));
	memmove(&c->e[i + 1], &c->e[i], (c->n - i) * sizeof(*c->e));
	c->s[i] = t;
	c->e[i] = t + len;
	c->n++;
	return t;
}

/* The index of the first interval ending after @t (c->n if none). */
static uint32_t first_after(const struct npu_link_cal *c, uint64_t t)
{
	uint32_t lo = 0, hi = c->n;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (c->e[mid] > t)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

uint64_t npu_link_cal_fill(struct npu_link_cal *c, uint64_t t, uint64_t len)
{
	while (len) {
		uint32_t i = first_after(c, t);
		uint64_t piece;

		if (i < c->n && c->s[i] <= t) {
			t = c->e[i];	/* busy at t: skip to the end */
			continue;
		}
		piece = i < c->n && c->s[i] - t < len ? c->s[i] - t : len;
		t = npu_link_cal_book(c, t, piece) + piece;
		len -= piece;
	}
	return t;
}

void npu_link_cal_free(struct npu_link_cal *c)
{
	free(c->s);
	free(c->e);
	memset(c, 0, sizeof(*c));
}
