// SPDX-License-Identifier: MIT
/*
 * npu-top: number formatting shared by the text table and the TUI.
 */
#include <math.h>
#include <stdlib.h>

#include "output.h"

void nt_fmt_bytes(char *buf, size_t n, uint64_t bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	unsigned u = 0;

	if (bytes < 1024) {
		snprintf(buf, n, "%u B", (unsigned)bytes);
		return;
	}
	v /= 1024;
	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	snprintf(buf, n, v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
}

void nt_fmt_mask(char *buf, size_t n, uint32_t mask)
{
	size_t len = 0;

	if (n == 0)
		return;
	buf[0] = '\0';
	if (!mask) {
		snprintf(buf, n, "-");
		return;
	}
	for (unsigned c = 0; c < 32 && len < n; c++) {
		unsigned end = c;
		int r;

		if (!(mask & (1u << c)))
			continue;
		while (end + 1 < 32 && mask & (1u << (end + 1)))
			end++;
		if (end == c)
			r = snprintf(buf + len, n - len, "%s%u", len ? "," : "", c);
		else
			r = snprintf(buf + len, n - len, "%s%u-%u", len ? "," : "", c, end);
		if (r < 0)
			break;
		len += (size_t)r;
		c = end;
	}
}

int nt_parse_interval(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	v = strtod(s, &end);
	if (*end || !isfinite(v) || v < NT_MIN_INTERVAL - 1e-9 || v > NT_MAX_INTERVAL)
		return -1;
	*out = v;
	return 0;
}
