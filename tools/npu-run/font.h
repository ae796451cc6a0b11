/* SPDX-License-Identifier: MIT */
/* npu-run: a 3x5 bitmap font for scores on --draw pictures: digits and '.'. */
#ifndef NPU_RUN_FONT_H
#define NPU_RUN_FONT_H

#define NR_FONT_W	3
#define NR_FONT_H	5

/*
 * The rows of character @ch, top first, each NR_FONT_W bits with the
 * leftmost pixel the highest; NULL for a character the font lacks.
 */
const unsigned char *nr_font_glyph(char ch);

#endif /* NPU_RUN_FONT_H */
