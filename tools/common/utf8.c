// SPDX-License-Identifier: MIT
/* UTF-8 validation (utf8.h), after RFC 3629's table of well-formed sequences. */
#include <stdint.h>

#include "utf8.h"

size_t utf8_seq_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;	/* a continuation byte, 0xc0/0xc1 (overlong) or past 0xf4 */
	cp = p[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		/* A NUL fails this test, so the scan stops at the string's end. */
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* Overlong forms, UTF-16 surrogates and code points past U+10FFFF. */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}
