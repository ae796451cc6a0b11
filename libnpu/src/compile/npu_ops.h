/* SPDX-License-Identifier: MIT */
/*
 * The operator registry: everything libnpu knows about an ONNX operator,
 * in one table (npu_ops.c), one entry per operator of the default domain
 * ("" or "ai.onnx") and opset range.  An entry gives the IR's rules (shape
 * rule and constant evaluator, ir/npu_ir_rules.h), whether the compiler
 * accepts the operator or only folds it away as a constant, an extra
 * support check, and the lowering (for elementwise operators also the
 * CVU function), and the graph rewrites that turn it into operators
 * with a lowering (npu_rewrite.c runs them, rewrite_*.c has them).
 *
 * An operator is known at opset N when an entry of that name has
 * since <= N <= until (until 0: still current).  Adding an operator means
 * adding its entry, in sorted place, and its rules.
 */
#ifndef NPU_OPS_H
#define NPU_OPS_H

#include "compile/npu_lower.h"
#include "compile/npu_rewrite.h"
#include "ir/npu_ir_rules.h"

/* The compiler accepts it: lowered, or rewritten or fused into operators that are. */
#define NPU_OP_NPU	1u
/* Supported only when it folds to a constant. */
#define NPU_OP_CONST	2u
/*
 * With NPU_OP_NPU: no lowering of its own, its rewrites turn it into
 * operators that have one (a node they cannot rewrite is refused by name).
 */
#define NPU_OP_BY_REWRITE	4u
/*
 * With NPU_OP_NPU, on a unary elementwise operator: the TCU output stage
 * can apply it (function .cvu.fn), so the fusion pass folds it into the
 * Conv, Gemm or MatMul that feeds it (npu_fuse.c).
 */
#define NPU_OP_TCU_ACT	8u
/*
 * Alone: the NPU has no lowering, no rewrite; only the CPU fallback runs
 * it (host/npu_host.h, with allow_cpu_fallback), so it has a shape rule.
 */
#define NPU_OP_HOST	16u

/* Extra support check: NULL if node @n is fine, else what is not ("its
 * Indices output is not"; the message adds " supported"). */
typedef const char *(*npu_op_support_fn)(const npu_ir_graph *g, const npu_ir_node *n);

/* How an elementwise operator runs on the CVU. */
enum npu_op_cvu_kind {
	NPU_OP_CVU_NONE = 0,	/* not an elementwise CVU operator */
	NPU_OP_CVU_UNARY,	/* NPU_CVU_UNARY of input 0 */
	NPU_OP_CVU_BINARY,	/* NPU_CVU_BINARY of inputs 0 and 1, broadcast */
};

struct npu_op {
	const char *name;	/* ONNX op_type */
	int since;		/* first opset with this definition */
	int until;		/* last opset with it (0: still current) */
	unsigned flags;		/* NPU_OP_* */
	struct npu_ir_op ir;	/* shape rule and constant evaluator */
	npu_op_support_fn support;	/* NULL: no extra check */
	npu_lower_fn lower;	/* NULL: only a rewrite or the fusion pass handles it */
	/*
	 * Rewrites, in the order the pass tries them (unused slots NULL); the
	 * pass applies them until none applies, so the order is a preference
	 * (where it changes the result, the entry says so).
	 */
	npu_rewrite_fn rewrites[NPU_REWRITE_FNS_MAX];
	struct {
		unsigned fn;		/* NPU_FN_* */
		enum npu_op_cvu_kind kind;
	} cvu;			/* for lower == npu_lower_eltwise */
};

/*
 * The entry for operator @name of the default domain at @opset, NULL if
 * libnpu has none: a binary search over the table, sorted by name and
 * then by since.
 */
const struct npu_op *npu_op_get(const char *name, int opset);
/*
 * The entry for node @n's operator at its opset in its domain (the default
 * one, com.microsoft, ai.onnx.preview.training), NULL if libnpu has none.
 */
const struct npu_op *npu_op_of(const npu_ir_node *n);
/*
 * The entry for node @n's operator at its opset: NPU_ERR_UNSUPPORTED when
 * there is none, with the message every refusal uses, e.g. "operator
 * 'StringNormalizer' (node 'sn_1', opset 13) is not supported by the NPU
 * compiler", plus ": it needs opset N or later" or ": it was removed after
 * opset N" when the operator exists at other opsets.
 */
npu_status npu_op_find(const npu_ir_node *n, const struct npu_op **out);
/*
 * The lowering of node @n (npu_cc.c), NULL when it has none.  The same
 * lookup by name and opset as shape inference: every node that reaches
 * lowering passed npu_ops_infer_shapes(), or was made by a rewrite, the
 * fusion pass or the int8 pass at an opset where its operator exists (they
 * give their nodes fixed opsets, 10 to 15, or the graph's or the replaced
 * node's opset, and none makes an operator that an opset removed).
 */
npu_lower_fn npu_op_lowering(const npu_ir_node *n);
/*
 * Whether node @n passes its entry's extra support check (true without
 * one); a node that fails it is refused by npu_op_refuse(), not lowered.
 */
bool npu_op_supported(const npu_ir_graph *g, const npu_ir_node *n);

/*
 * Node @n reached lowering without a lowering: NPU_ERR_UNSUPPORTED with the
 * reason its entry knows (a constant output too large to fold, a failed
 * support check), else the plain refusal.
 */
npu_status npu_op_refuse(const npu_ir_graph *g, const npu_ir_node *n);

/*
 * The CVU (or TCU output-stage) function of elementwise node @n of entry
 * @d: .cvu.fn, unless the node's attributes choose another (Gelu with
 * approximate "tanh": NPU_FN_GELU_TANH).
 */
unsigned npu_op_cvu_fn(const struct npu_op *d, const npu_ir_node *n);

/* Whether libnpu knows @op (default domain) at @opset at all. */
bool npu_ops_known(const char *op, int opset);

/* npu_ir_infer_shapes() with the registry's rules (same failures). */
npu_status npu_ops_infer_shapes(npu_ir_graph *g);

/*
 * NPU_OK if the NPU compiler supports every node: NPU_ERR_UNSUPPORTED
 * naming the first node that it does not (see npu_op_find(); constant-only
 * operators and failed support checks add why).  *@bad_node (may be NULL)
 * gets its id or -1.
 */
npu_status npu_ops_check_supported(const npu_ir_graph *g, int *bad_node);

/* The whole table, for tests: *@count entries, sorted by name and since. */
const struct npu_op *npu_ops_table(size_t *count);

#endif /* NPU_OPS_H */
