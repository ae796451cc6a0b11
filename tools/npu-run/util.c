// SPDX-License-Identifier: MIT
/* npu-run: error reporting and small helpers shared by its files. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "util.h"

int nr_fail(int status, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	fprintf(stderr, "npu-run: %s\n", msg);
	return status;
}

double nr_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

char *nr_shape_str(const int64_t *dims, int rank, char *buf, size_t cap)
{
	size_t len = 0;

	if (!cap)
		return buf;
	buf[0] = '\0';
	len += (size_t)snprintf(buf + len, cap - len, "[");
	for (int i = 0; i < rank && len < cap; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? ", " : "",
					(long long)dims[i]);
	if (len < cap)
		snprintf(buf + len, cap - len, "]");
	return buf;
}

uint64_t nr_shape_elems(const int64_t *dims, int rank)
{
	uint64_t n = 1;

	for (int i = 0; i < rank; i++) {
		if (dims[i] <= 0)
			return 0;
		n *= (uint64_t)dims[i];
	}
	return n;
}
