// SPDX-License-Identifier: MIT
/*
 * Einsum equations: parsing and label sizes (npu_einsum.h).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/npu_einsum.h"

static int fail(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

static int letter_label(char c)
{
	if (c >= 'a' && c <= 'z')
		return c - 'a';
	if (c >= 'A' && c <= 'Z')
		return 26 + c - 'A';
	return -1;
}

/* One term as written: its letters and where its ellipsis is (-1: none). */
struct term {
	int lab[NPU_MAX_RANK + 1];
	int n;		/* letters */
	int ell;	/* letters before the ellipsis, or -1 */
};

static int parse_term(const char *s, size_t n, struct term *t, const char *what, char *why,
		      size_t len)
{
	t->n = 0;
	t->ell = -1;
	for (size_t i = 0; i < n; i++) {
		int l = letter_label(s[i]);

		if (s[i] == '.') {
			if (t->ell >= 0 || i + 2 >= n || s[i + 1] != '.' || s[i + 2] != '.')
				return fail(why, len, "%s '%.*s' has a '.' that is not one '...'",
					    what, (int)n, s);
			t->ell = t->n;
			i += 2;
			continue;
		}
		if (l < 0)
			return fail(why, len, "%s '%.*s' has '%c', which is no letter", what,
				    (int)n, s, s[i]);
		if (t->n == NPU_MAX_RANK)
			return fail(why, len, "%s '%.*s' has more than %d axes", what, (int)n, s,
				    NPU_MAX_RANK);
		t->lab[t->n++] = l;
	}
	return 0;
}

/* Term @t's labels with its ellipsis as its last @ne of @E ellipsis labels. */
static int expand(const struct term *t, int ne, int E, int *lab)
{
	int r = 0;

	for (int j = 0; j <= t->n; j++) {
		if (j == t->ell)
			for (int i = 0; i < ne; i++)
				lab[r++] = NPU_EINSUM_ELL + E - ne + i;
		if (j < t->n)
			lab[r++] = t->lab[j];
	}
	return r;
}

int npu_einsum_parse(const char *eq, int n_in, const int *ranks, struct npu_einsum *e,
		     char *why, size_t len)
{
	char buf[256];
	const char *arrow, *p, *end;
	struct term t[2], to;
	int cnt[NPU_EINSUM_LABELS] = { 0 }, ne[2] = { 0, 0 }, E = 0, k = 0;
	size_t n = 0;

	memset(e, 0, sizeof(*e));
	for (int l = 0; l < NPU_EINSUM_LABELS; l++)
		e->size[l] = -1;
	if (n_in < 1 || n_in > 2)
		return fail(why, len, "%d operands: only 1 or 2 are supported", n_in);
	for (p = eq; *p; p++) {
		if (isspace((unsigned char)*p))
			continue;
		if (n + 1 >= sizeof(buf))
			return fail(why, len, "the equation is longer than %zu characters",
				    sizeof(buf) - 1);
		buf[n++] = *p;
	}
	buf[n] = '\0';
	arrow = strstr(buf, "->");
	end = arrow ? arrow : buf + n;
	for (p = buf; k < 2; k++) {
		const char *c = memchr(p, ',', (size_t)(end - p));
		const char *stop = c ? c : end;

		if (k == n_in)
			return fail(why, len, "equation '%s' has more operands than the node's %d",
				    eq, n_in);
		if (parse_term(p, (size_t)(stop - p), &t[k], "operand term", why, len))
			return -1;
		if (t[k].ell >= 0) {
			ne[k] = ranks[k] - t[k].n;
			if (ne[k] < 0)
				return fail(why, len,
					    "operand %d has rank %d, fewer than the %d letters of '%.*s'",
					    k, ranks[k], t[k].n, (int)(stop - p), p);
			if (ne[k] > E)
				E = ne[k];
		} else if (t[k].n != ranks[k]) {
			return fail(why, len, "operand %d has rank %d but its term '%.*s' %d letters",
				    k, ranks[k], (int)(stop - p), p, t[k].n);
		}
		p = stop + 1;
		if (!c) {
			k++;
			break;
		}
		if (k == 1)
			return fail(why, len, "equation '%s' has more than 2 operands", eq);
	}
	if (k != n_in)
		return fail(why, len, "equation '%s' has %d operand terms, the node %d operands", eq,
			    k, n_in);
	e->n_in = n_in;
	for (int i = 0; i < n_in; i++) {
		e->rank[i] = expand(&t[i], ne[i], E, e->lab[i]);
		for (int j = 0; j < t[i].n; j++)
			cnt[t[i].lab[j]]++;
	}
	if (arrow) {
		if (parse_term(arrow + 2, strlen(arrow + 2), &to, "output term", why, len))
			return -1;
		for (int j = 0; j < to.n; j++) {
			if (!cnt[to.lab[j]])
				return fail(why, len, "output label '%c' is in no operand",
					    npu_einsum_char(to.lab[j]));
			for (int i = 0; i < j; i++)
				if (to.lab[i] == to.lab[j])
					return fail(why, len, "output label '%c' is repeated",
						    npu_einsum_char(to.lab[j]));
		}
		if (to.n + (to.ell >= 0 ? E : 0) > NPU_MAX_RANK)
			return fail(why, len, "the output has more than %d axes", NPU_MAX_RANK);
		e->out_rank = expand(&to, to.ell >= 0 ? E : 0, E, e->out);
		return 0;
	}
	/* Implicit: the ellipsis axes, then single letters in ASCII order (A-Z, a-z). */
	for (int i = 0; i < E; i++)
		e->out[e->out_rank++] = NPU_EINSUM_ELL + i;
	for (int j = 0; j < 52; j++) {
		int l = j < 26 ? 26 + j : j - 26;

		if (cnt[l] != 1)
			continue;
		if (e->out_rank == NPU_MAX_RANK)
			return fail(why, len, "the output has more than %d axes", NPU_MAX_RANK);
		e->out[e->out_rank++] = l;
	}
	return 0;
}

int npu_einsum_sizes(struct npu_einsum *e, const int64_t *const *dims, char *why, size_t len)
{
	for (int i = 0; i < e->n_in; i++) {
		int64_t own[NPU_EINSUM_LABELS];

		for (int l = 0; l < NPU_EINSUM_LABELS; l++)
			own[l] = -1;
		for (int a = 0; a < e->rank[i]; a++) {
			int l = e->lab[i][a];
			int64_t d = dims[i][a];

			if (own[l] >= 0 && own[l] != d)
				return fail(why, len,
					    "label '%c' of operand %d has sizes %lld and %lld",
					    npu_einsum_char(l), i, (long long)own[l], (long long)d);
			own[l] = d;
			if (e->size[l] < 0 || e->size[l] == 1)
				e->size[l] = d;
			else if (d != 1 && d != e->size[l])
				return fail(why, len,
					    "label '%c' has size %lld in operand %d but %lld in another: they do not broadcast",
					    npu_einsum_char(l), (long long)d, i,
					    (long long)e->size[l]);
		}
	}
	return 0;
}

int npu_einsum_has(const struct npu_einsum *e, int i, int l)
{
	const int *lab = i < 0 ? e->out : e->lab[i];
	int r = i < 0 ? e->out_rank : e->rank[i];

	for (int a = 0; a < r; a++)
		if (lab[a] == l)
			return 1;
	return 0;
}
