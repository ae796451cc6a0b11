// SPDX-License-Identifier: MIT
/*
 * npu-top: tolerant readers for sysfs, fdinfo and emulator stat files.
 */
#include "parse.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "utf8.h"

long nt_read_file(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	int fd;

	if (size == 0)
		return -1;
	/* O_NONBLOCK: a FIFO planted where a counter file should be must not hang us. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	while (len < size - 1) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	/* An embedded NUL would silently cut the text; make it a line break. */
	for (size_t i = 0; i < len; i++)
		if (buf[i] == '\0')
			buf[i] = '\n';
	return (long)len;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Hand-written rather than strtoull(): strtoull accepts "-1" (and wraps
 * it to UINT64_MAX) and a leading '+', which would turn garbage into
 * plausible-looking counters.
 */
bool nt_parse_u64(const char **s, uint64_t *out)
{
	const char *p = *s;
	unsigned base = 10;
	uint64_t v = 0;
	int digits = 0;

	while (is_blank(*p))
		p++;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && hex_digit(p[2]) >= 0) {
		base = 16;
		p += 2;
	}
	for (;; p++, digits++) {
		int d = hex_digit(*p);

		if (d < 0 || (unsigned)d >= base)
			break;
		if (v > (UINT64_MAX - (unsigned)d) / base)
			return false;
		v = v * base + (unsigned)d;
	}
	if (digits == 0)
		return false;
	*out = v;
	*s = p;
	return true;
}

bool nt_parse_u64_only(const char *s, uint64_t *out)
{
	uint64_t v;

	if (!nt_parse_u64(&s, &v))
		return false;
	while (is_blank(*s) || *s == '\n' || *s == '\r')
		s++;
	if (*s)
		return false;
	*out = v;
	return true;
}

unsigned nt_parse_u64_list(const char *s, uint64_t *out, unsigned max)
{
	unsigned n = 0;

	while (n < max) {
		uint64_t v;

		if (!nt_parse_u64(&s, &v))
			break;
		/* "12x" is not a number followed by another token. */
		if (*s && !is_blank(*s) && *s != '\n' && *s != '\r')
			break;
		out[n++] = v;
	}
	return n;
}

bool nt_parse_size(const char *s, uint64_t *bytes)
{
	static const struct {
		const char *unit;
		unsigned shift;
	} units[] = {
		{ "", 0 }, { "B", 0 }, { "KiB", 10 }, { "MiB", 20 }, { "GiB", 30 }, { "TiB", 40 },
	};
	uint64_t v;

	if (!nt_parse_u64(&s, &v))
		return false;
	while (is_blank(*s))
		s++;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t len = strlen(units[i].unit);
		const char *rest = s + len;

		if (strncmp(s, units[i].unit, len) != 0)
			continue;
		while (is_blank(*rest) || *rest == '\n' || *rest == '\r')
			rest++;
		if (*rest)
			continue;
		if (units[i].shift && v > (UINT64_MAX >> units[i].shift))
			return false;
		*bytes = v << units[i].shift;
		return true;
	}
	return false;
}

bool nt_parse_dims(const char *s, unsigned *x, unsigned *y)
{
	uint64_t a, b;

	if (!nt_parse_u64(&s, &a) || (*s != 'x' && *s != 'X'))
		return false;
	s++;
	/* A hex prefix after the 'x' would be ambiguous; insist on decimal. */
	if (*s < '0' || *s > '9' || !nt_parse_u64_only(s, &b))
		return false;
	if (a > 1000 || b > 1000)
		return false;
	*x = (unsigned)a;
	*y = (unsigned)b;
	return true;
}

static char *trim(char *s)
{
	char *e;

	while (is_blank(*s))
		s++;
	e = s + strlen(s);
	while (e > s && (is_blank(e[-1]) || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

void nt_parse_kv(char *buf, char sep, nt_kv_fn fn, void *arg)
{
	char *line = buf;

	while (line && *line) {
		char *next = strchr(line, '\n');
		char *colon;

		if (next)
			*next++ = '\0';
		colon = strchr(line, sep);
		if (colon) {
			char *key;

			*colon = '\0';
			key = trim(line);
			if (*key)
				fn(key, trim(colon + 1), arg);
		}
		line = next;
	}
}

void nt_copy_printable(char *dst, size_t n, const char *src)
{
	size_t i = 0;

	if (n == 0)
		return;
	while (*src && i < n - 1) {
		unsigned char c = (unsigned char)*src;
		size_t len = utf8_seq_len(src);

		/* Valid UTF-8 stays ("café"), whole or not at all; control
		 * characters and bytes that are not UTF-8 become '?', so the
		 * terminal and JSON consumers get text. */
		if (len > 1 && i + len <= n - 1) {
			memcpy(dst + i, src, len);
			i += len;
			src += len;
			continue;
		}
		if (len > 1)
			break;		/* no room for the whole character */
		dst[i++] = (c < 0x20 || c == 0x7f || len == 0) ? '?' : (char)c;
		src++;
	}
	dst[i] = '\0';
}
