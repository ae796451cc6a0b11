// SPDX-License-Identifier: MIT
/* npu-run: the score font (font.h), drawn here pixel by pixel. */
#include "font.h"

static const unsigned char digits[10][NR_FONT_H] = {
	{ 07, 05, 05, 05, 07 },	/* 0 */
	{ 02, 06, 02, 02, 07 },	/* 1 */
	{ 07, 01, 07, 04, 07 },	/* 2 */
	{ 07, 01, 07, 01, 07 },	/* 3 */
	{ 05, 05, 07, 01, 01 },	/* 4 */
	{ 07, 04, 07, 01, 07 },	/* 5 */
	{ 07, 04, 07, 05, 07 },	/* 6 */
	{ 07, 01, 01, 01, 01 },	/* 7 */
	{ 07, 05, 07, 05, 07 },	/* 8 */
	{ 07, 05, 07, 01, 07 },	/* 9 */
};

static const unsigned char dot[NR_FONT_H] = { 0, 0, 0, 0, 02 };

const unsigned char *nr_font_glyph(char ch)
{
	if (ch >= '0' && ch <= '9')
		return digits[ch - '0'];
	if (ch == '.')
		return dot;
	return 0;
}
