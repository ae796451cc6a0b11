// SPDX-License-Identifier: MIT
/*
 * The operator registry (compile/npu_ops.c), walked entry by entry: sorted
 * for the binary search, opset ranges of one operator apart, a shape rule
 * everywhere, a lowering (or a rewrite that removes the operator) for
 * everything the compiler accepts, an evaluator for what only folds, and
 * the lookups' answers and messages.
 */
#include <stdio.h>
#include <string.h>

#include "compile/npu_ops.h"
#include "host/npu_host.h"
#include "npu_test.h"

/*
 * What one entry must be on its own: NULL if fine, else what is wrong
 * (into @buf).  Run on every entry and, below, on doctored copies, so the
 * test shows it would catch a lowering removed from an entry.
 */
static const char *entry_problem(const struct npu_op *d, char *buf, size_t len)
{
	bool eltwise = d->lower == npu_lower_eltwise;

	if (!d->name || !d->name[0])
		return "an entry without a name";
	if (d->since < 1 || (d->until && d->until < d->since))
		snprintf(buf, len, "%s: opsets %d..%d", d->name, d->since, d->until);
	else if (!d->ir.shape)
		snprintf(buf, len, "%s has no shape rule", d->name);
	else if ((d->flags & ~NPU_OP_TCU_ACT) != NPU_OP_NPU &&
		 d->flags != (NPU_OP_NPU | NPU_OP_BY_REWRITE) && d->flags != NPU_OP_CONST &&
		 d->flags != NPU_OP_HOST)
		snprintf(buf, len, "%s: flags %#x (NPU_OP_NPU, maybe with NPU_OP_BY_REWRITE or NPU_OP_TCU_ACT, or NPU_OP_CONST, or NPU_OP_HOST)",
			 d->name, d->flags);
	else if (d->flags == NPU_OP_HOST &&
		 (d->lower || d->rewrites[0] || !npu_host_op_get(d->name, d->until ? d->until : 99)))
		snprintf(buf, len, "%s runs on the host only: no lowering, no rewrite, a host implementation",
			 d->name);
	else if ((d->flags & NPU_OP_TCU_ACT) && d->cvu.kind != NPU_OP_CVU_UNARY)
		snprintf(buf, len, "%s: a TCU activation is a unary CVU function", d->name);
	else if ((d->flags & ~NPU_OP_TCU_ACT) == NPU_OP_NPU && !d->lower)
		snprintf(buf, len, "%s is accepted but has no lowering", d->name);
	else if ((d->flags & NPU_OP_BY_REWRITE) && (d->lower || !d->rewrites[0]))
		snprintf(buf, len, "%s is accepted by its rewrites: it needs one and no lowering",
			 d->name);
	else if ((d->flags & NPU_OP_CONST) && (!d->ir.eval || d->lower || d->rewrites[0]))
		snprintf(buf, len, "%s only folds: it needs an evaluator, no lowering, no rewrite",
			 d->name);
	else if (d->ir.eval_flags && !d->ir.eval)
		snprintf(buf, len, "%s: evaluator flags without an evaluator", d->name);
	else if (eltwise != (d->cvu.kind != NPU_OP_CVU_NONE))
		snprintf(buf, len, "%s: a CVU kind goes with npu_lower_eltwise and only with it",
			 d->name);
	else if (d->cvu.kind == NPU_OP_CVU_UNARY &&
		 !(d->cvu.fn < NPU_FN_UNARY_END ||
		   (d->cvu.fn >= NPU_FN_SIN && d->cvu.fn < NPU_FN_UNARY2_END) ||
		   (d->cvu.fn >= NPU_FN_NOT && d->cvu.fn < NPU_FN_UNARY3_END)))
		snprintf(buf, len, "%s: CVU function %u is not unary", d->name, d->cvu.fn);
	else if (d->cvu.kind == NPU_OP_CVU_BINARY &&
		 !(d->cvu.fn >= NPU_FN_ADD && d->cvu.fn < NPU_FN_BINARY_END))
		snprintf(buf, len, "%s: CVU function %u is not binary", d->name, d->cvu.fn);
	else
		return NULL;
	return buf;
}

START_TEST(sorted_and_apart)
{
	size_t n;
	const struct npu_op *t = npu_ops_table(&n);

	ck_assert_uint_gt(n, 100);
	for (size_t i = 1; i < n; i++) {
		int c = strcmp(t[i - 1].name, t[i].name);

		ck_assert_msg(c <= 0, "'%s' comes after '%s': the table must be sorted by name",
			      t[i].name, t[i - 1].name);
		/* One operator's ranges: in order and apart. */
		ck_assert_msg(c || (t[i - 1].until && t[i - 1].until < t[i].since),
			      "%s: opsets %d..%d and %d..%d overlap or are out of order",
			      t[i].name, t[i - 1].since, t[i - 1].until, t[i].since, t[i].until);
	}
}
END_TEST

START_TEST(every_entry_complete)
{
	size_t n;
	const struct npu_op *t = npu_ops_table(&n);
	char buf[160];

	for (size_t i = 0; i < n; i++) {
		const char *why = entry_problem(&t[i], buf, sizeof(buf));

		ck_assert_msg(!why, "%s", why ? why : "");
	}
}
END_TEST

/* The check above catches an entry that loses its lowering or its rules. */
START_TEST(incomplete_entry_caught)
{
	const struct npu_op *conv = npu_op_get("Conv", 13), *shape = npu_op_get("Shape", 13);
	const struct npu_op *relu = npu_op_get("Relu", 13);
	struct npu_op d;
	char buf[160];

	ck_assert_ptr_nonnull(conv);
	ck_assert_ptr_null(entry_problem(conv, buf, sizeof(buf)));
	d = *conv;
	d.lower = NULL;
	ck_assert_str_eq(entry_problem(&d, buf, sizeof(buf)),
			 "Conv is accepted but has no lowering");
	d = *conv;
	d.ir.shape = NULL;
	ck_assert_str_eq(entry_problem(&d, buf, sizeof(buf)), "Conv has no shape rule");
	d = *relu;
	d.lower = NULL;
	ck_assert_ptr_nonnull(entry_problem(&d, buf, sizeof(buf)));
	d = *shape;
	d.ir.eval = NULL;
	ck_assert_str_eq(entry_problem(&d, buf, sizeof(buf)),
			 "Shape only folds: it needs an evaluator, no lowering, no rewrite");
	d = *npu_op_get("Resize", 13);
	ck_assert_ptr_null(entry_problem(&d, buf, sizeof(buf)));
	d.rewrites[0] = NULL;
	ck_assert_str_eq(entry_problem(&d, buf, sizeof(buf)),
			 "Resize is accepted by its rewrites: it needs one and no lowering");
}
END_TEST

/* Every entry is found by name at the ends of its range, and not outside. */
START_TEST(lookup_by_name_and_opset)
{
	size_t n;
	const struct npu_op *t = npu_ops_table(&n);

	for (size_t i = 0; i < n; i++) {
		const struct npu_op *d = &t[i];

		ck_assert_ptr_eq(npu_op_get(d->name, d->since), d);
		/* RMSNormalization (23) and Swish (24) come after the opsets the
		 * parser takes (to 21): fuse_pattern.c makes them. */
		ck_assert_ptr_eq(npu_op_get(d->name, d->until ? d->until :
					    d->since > 21 ? d->since : 21), d);
		if (d->since > 1 && (i == 0 || strcmp(t[i - 1].name, d->name)))
			ck_assert_ptr_null(npu_op_get(d->name, d->since - 1));
		if (d->until)
			ck_assert(!npu_ops_known(d->name, d->until + 1));
	}
	ck_assert_ptr_null(npu_op_get("StringNormalizer", 13));
	ck_assert_ptr_null(npu_op_get("NonMaxSuppression", 9));
	ck_assert_ptr_null(npu_op_get("", 13));
	ck_assert_ptr_null(npu_op_get("conv", 13));
	ck_assert_ptr_null(npu_op_get("Zzz", 13));
	ck_assert(npu_op_get("Add", 14)->cvu.kind == NPU_OP_CVU_BINARY);
	ck_assert_uint_eq(npu_op_get("Add", 14)->cvu.fn, NPU_FN_ADD);
	ck_assert(npu_op_get("Relu", 14)->cvu.kind == NPU_OP_CVU_UNARY);
	ck_assert_ptr_eq(npu_op_get("Conv", 11)->lower, npu_lower_conv);
	/* What the TCU output stage applies after a Conv, Gemm or MatMul. */
	ck_assert(npu_op_get("Relu", 14)->flags & NPU_OP_TCU_ACT);
	ck_assert(npu_op_get("Clip", 13)->flags & NPU_OP_TCU_ACT);
	ck_assert(!(npu_op_get("Exp", 13)->flags & NPU_OP_TCU_ACT));
}
END_TEST

/* The refusals that users and tests match on, word for word. */
START_TEST(find_messages)
{
	npu_ir_node n = { .op = (char *)"LayerNormalization", .domain = (char *)"",
			  .name = (char *)"ln", .opset = 13, .src_index = 4 };
	const struct npu_op *d = npu_op_get("Conv", 13);	/* failures reset it */

	ck_assert_int_eq(npu_op_find(&n, &d), NPU_ERR_UNSUPPORTED);
	ck_assert_ptr_null(d);
	ck_assert_str_eq(npu_last_error(),
			 "operator 'LayerNormalization' (node 'ln', opset 13) is not supported by the NPU compiler: it needs opset 17 or later");
	n.op = (char *)"Upsample";
	n.name = (char *)"";
	n.opset = 10;
	ck_assert_int_eq(npu_op_find(&n, &d), NPU_ERR_UNSUPPORTED);
	ck_assert_str_eq(npu_last_error(),
			 "operator 'Upsample' (node #4, opset 10) is not supported by the NPU compiler: it was removed after opset 9");
	n.op = (char *)"StringNormalizer";
	ck_assert_int_eq(npu_op_find(&n, &d), NPU_ERR_UNSUPPORTED);
	ck_assert_str_eq(npu_last_error(),
			 "operator 'StringNormalizer' (node #4, opset 10) is not supported by the NPU compiler");
	n.op = (char *)"Relu";
	n.domain = (char *)"com.example";
	ck_assert_int_eq(npu_op_find(&n, &d), NPU_ERR_UNSUPPORTED);
	ck_assert_str_eq(npu_last_error(),
			 "operator 'com.example.Relu' (node #4, opset 10) is not supported by the NPU compiler");
	ck_assert_ptr_null(npu_op_lowering(&n));
	n.domain = (char *)"ai.onnx";
	ck_assert_int_eq(npu_op_find(&n, &d), NPU_OK);
	ck_assert_ptr_eq(d, npu_op_get("Relu", 10));
	ck_assert_ptr_eq(npu_op_lowering(&n), npu_lower_eltwise);
	n.op = (char *)"Resize";
	ck_assert_ptr_null(npu_op_lowering(&n));
}
END_TEST

static Suite *ops_suite(void)
{
	Suite *s = suite_create("npu_ops");
	TCase *tc = tcase_create("registry");

	tcase_add_test(tc, sorted_and_apart);
	tcase_add_test(tc, every_entry_complete);
	tcase_add_test(tc, incomplete_entry_caught);
	tcase_add_test(tc, lookup_by_name_and_opset);
	tcase_add_test(tc, find_messages);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(ops_suite)
