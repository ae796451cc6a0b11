/* SPDX-License-Identifier: MIT */
/*
 * Einsum equations ("bhqd,bhkd->bhqk", "...ij,...jk", "ii->i"), parsed once
 * for the shape rule (shape_math.c) and the rewrite that lowers them
 * (compile/rewrite_einsum.c).
 *
 * Every axis of every operand gets a label: the letters a-z are labels
 * 0..25, A-Z 26..51, and the axes an ellipsis stands for are labels
 * NPU_EINSUM_ELL + i, right-aligned across the operands as numpy
 * broadcasting aligns them (an operand whose ellipsis covers fewer axes
 * takes the last ones).  Without "->" the output is, as ONNX and numpy
 * define it, the ellipsis axes, then the letters that occur exactly once
 * in the equation in alphabetical (ASCII) order.  An explicit output that
 * leaves out "..." sums the ellipsis axes away.
 */
#ifndef NPU_EINSUM_H
#define NPU_EINSUM_H

#include <stddef.h>
#include <stdint.h>

#include "npu.h"

#define NPU_EINSUM_ELL		52	/* the first label of an ellipsis axis */
#define NPU_EINSUM_LABELS	(NPU_EINSUM_ELL + NPU_MAX_RANK)

struct npu_einsum {
	int n_in;				/* operands: 1 or 2 */
	int rank[2];
	int lab[2][NPU_MAX_RANK];		/* label of each axis of each operand */
	int out_rank;
	int out[NPU_MAX_RANK];			/* label of each output axis */
	int64_t size[NPU_EINSUM_LABELS];	/* a label's size, broadcast; -1: unused */
};

/*
 * Parse @eq for @n_in operands of ranks @ranks[] into *@e (sizes -1).
 * 0 on success, else -1 with what is wrong in @why.
 */
int npu_einsum_parse(const char *eq, int n_in, const int *ranks, struct npu_einsum *e,
		     char *why, size_t len);

/*
 * Give every label its size from the operands' dims (@dims[i] for operand
 * i): a label repeated within one operand must have one size; across
 * operands sizes broadcast (1 against n).  0, or -1 with @why.
 */
int npu_einsum_sizes(struct npu_einsum *e, const int64_t *const *dims, char *why, size_t len);

/* Whether operand @i (or the output, @i = -1) has label @l. */
int npu_einsum_has(const struct npu_einsum *e, int i, int l);

/* The label's character for messages ('.' for an ellipsis axis). */
static inline char npu_einsum_char(int l)
{
	return l < 26 ? (char)('a' + l) : l < NPU_EINSUM_ELL ? (char)('A' + l - 26) : '.';
}

#endif /* NPU_EINSUM_H */
