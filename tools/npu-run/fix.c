// SPDX-License-Identifier: MIT
/*
 * npu-run --fix NAME=VALUES: a graph input a deployment never changes
 * (Silero VAD's sample rate) fixed at compile time, so libnpu keeps only
 * the branch its value selects (npu_compile_options.input_values).  The
 * dtype and the count come from the input the ONNX model declares.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fix.h"
#include "inputs.h"
#include "util.h"

/* Elements of @t with the --shape given for it; -1 while a dim is open. */
static int64_t elems_of(const struct nr_options *o, npu_tensor_info *t)
{
	const npu_input_shape *sh = nr_shape_given(o, t->name);
	int64_t n = 1;

	if (sh) {
		t->rank = sh->rank;
		memcpy(t->dims, sh->dims, sizeof(sh->dims));
	}
	if (t->rank < 0)
		return -1;
	for (int d = 0; d < t->rank; d++) {
		if (t->dims[d] < 0)
			return -1;
		n *= t->dims[d];
	}
	return n;
}

/* Store number @s as element @i of @out, a @dtype array; 0 or -1 (does not fit). */
static int store(const char *s, char **end, npu_dtype dtype, int64_t i, void *out)
{
	double d;
	long long v;
	unsigned long long u;

	errno = 0;
	switch (dtype) {
	case NPU_DTYPE_FLOAT32:
		d = strtod(s, end);
		((float *)out)[i] = (float)d;
		return errno || (isfinite(d) && fabs(d) > 3.4028234663852886e38) ? -1 : 0;
	case NPU_DTYPE_FLOAT64:
		((double *)out)[i] = strtod(s, end);
		return errno ? -1 : 0;
	case NPU_DTYPE_UINT8: case NPU_DTYPE_UINT16: case NPU_DTYPE_UINT32:
	case NPU_DTYPE_UINT64: case NPU_DTYPE_BOOL:
		if (*s == '-')
			return -1;
		u = strtoull(s, end, 0);
		if (errno || (dtype == NPU_DTYPE_BOOL && u > 1) ||
		    (dtype != NPU_DTYPE_UINT64 && dtype != NPU_DTYPE_BOOL &&
		     u >> (8 * npu_dtype_size(dtype))))
			return -1;
		if (dtype == NPU_DTYPE_UINT64)
			((uint64_t *)out)[i] = u;
		else if (dtype == NPU_DTYPE_UINT32)
			((uint32_t *)out)[i] = (uint32_t)u;
		else if (dtype == NPU_DTYPE_UINT16)
			((uint16_t *)out)[i] = (uint16_t)u;
		else
			((uint8_t *)out)[i] = (uint8_t)u;
		return 0;
	case NPU_DTYPE_INT8: case NPU_DTYPE_INT16: case NPU_DTYPE_INT32: case NPU_DTYPE_INT64:
		v = strtoll(s, end, 0);
		if (errno)
			return -1;
		if (dtype == NPU_DTYPE_INT64) {
			((int64_t *)out)[i] = v;
		} else if (dtype == NPU_DTYPE_INT32) {
			if (v < INT32_MIN || v > INT32_MAX)
				return -1;
			((int32_t *)out)[i] = (int32_t)v;
		} else if (dtype == NPU_DTYPE_INT16) {
			if (v < INT16_MIN || v > INT16_MAX)
				return -1;
			((int16_t *)out)[i] = (int16_t)v;
		} else {
			if (v < INT8_MIN || v > INT8_MAX)
				return -1;
			((int8_t *)out)[i] = (int8_t)v;
		}
		return 0;
	default:
		return -2;
	}
}

/* Does @s look like numbers ("16000", "-1.5,2", "0x10")? */
static int is_numbers(const char *s)
{
	return *s && strspn(s, "0123456789+-.,eExXabcdefABCDEFinfINFnaNA ") == strlen(s) &&
	       strchr("0123456789+-.", *s);
}

/* Parse VALUES of --fix @arg for @t (@n elements) into @data. */
static int parse_values(const char *arg, const char *vals, const npu_tensor_info *t, int64_t n,
			void *data)
{
	const char *p = vals;
	int64_t k = 0;

	for (;;) {
		char *end;
		int r;

		if (k == n)
			return nr_fail(NR_EXIT_USAGE, "--fix %s: input '%s' is %s of %" PRId64
				       " values; give %" PRId64, arg, t->name,
				       npu_dtype_str(t->dtype), n, n);
		r = store(p, &end, t->dtype, k, data);
		if (r == -2)
			return nr_fail(NR_EXIT_USAGE, "--fix %s: input '%s' is %s: give its value "
				       "as an .npy file", arg, t->name, npu_dtype_str(t->dtype));
		if (r || end == p || (*end && *end != ','))
			return nr_fail(NR_EXIT_USAGE, "--fix %s: '%.*s' is no %s value; give numbers "
				       "joined by ',' that fit %s", arg, (int)strcspn(p, ","), p,
				       npu_dtype_str(t->dtype), npu_dtype_str(t->dtype));
		k++;
		if (!*end)
			break;
		p = end + 1;
	}
	if (k != n)
		return nr_fail(NR_EXIT_USAGE, "--fix %s: %" PRId64 " values, but input '%s' holds %"
			       PRId64 " (%s); give %" PRId64, arg, k, t->name, n,
			       npu_dtype_str(t->dtype), n);
	return 0;
}

static int fix_one(struct nr_options *o, const char *arg, npu_tensor_info *decl, size_t n)
{
	npu_tensor *v = &o->fix_values[o->n_fix_values];
	npu_tensor_info *t;
	const char *vals;
	int64_t elems;
	size_t k;
	int rc;

	if (nr_match_input(arg, decl, n, &k, &vals) || vals == arg) {
		char names[512] = "";
		size_t off = 0;

		for (size_t i = 0; i < n && off < sizeof(names); i++)
			off += (size_t)snprintf(names + off, sizeof(names) - off, "%s'%s'",
						i ? ", " : "", decl[i].name);
		return nr_fail(NR_EXIT_USAGE, "--fix %s: %s has no input of that name; its inputs "
			       "are %s", arg, o->model, n ? names : "none");
	}
	t = &decl[k];
	for (size_t i = 0; i < o->n_fix_values; i++)
		if (!strcmp(o->fix_values[i].name, t->name))
			return nr_fail(NR_EXIT_USAGE, "--fix: input '%s' is given twice", t->name);
	if (!*vals)
		return nr_fail(NR_EXIT_USAGE, "--fix %s: no value after '='; give numbers joined "
			       "by ',' or an .npy file", arg);
	elems = elems_of(o, t);
	if (elems < 0)
		return nr_fail(NR_EXIT_USAGE, "--fix %s: input '%s' has open dims; give its shape "
			       "too (--shape %s=DIMS)", arg, t->name, t->name);
	t->bytes = (size_t)elems * npu_dtype_size(t->dtype);
	v->name = strdup(t->name);
	v->dtype = t->dtype;
	v->bytes = t->bytes;
	v->data = malloc(t->bytes + 1);
	if (!v->name || !v->data) {
		free((char *)v->name);
		free(v->data);
		return nr_fail(NR_EXIT_RUNTIME, "out of memory");
	}
	o->n_fix_values++;
	if (is_numbers(vals))
		rc = parse_values(arg, vals, t, elems, v->data);
	else
		rc = nr_read_tensor_file(arg, vals, t, v->data);
	return rc;
}

int nr_fix_prepare(struct nr_options *o)
{
	npu_tensor_info *decl = NULL;
	size_t n = 0;
	int rc = 0;

	if (!o->n_fixes)
		return 0;
	if (strstr(o->model, "://"))
		return nr_fail(NR_EXIT_USAGE, "--fix needs a model file: download %s first",
			       o->model);
	if (npu_model_declared_inputs(o->model, &decl, &n) != NPU_OK)
		return nr_fail(NR_EXIT_RUNTIME, "--fix: %s; --fix applies to ONNX models (a .npum "
			       "keeps the values it was compiled with)", npu_last_error());
	for (unsigned i = 0; !rc && i < o->n_fixes; i++)
		rc = fix_one(o, o->fixes[i], decl, n);
	npu_declared_inputs_free(decl, n);
	/* One line once all are good (--json: the JSON's inputs omit them). */
	if (!rc && !o->json) {
		fputs("npu-run: fixed at compile time (no longer inputs of the model):", stderr);
		for (unsigned i = 0; i < o->n_fixes; i++)
			fprintf(stderr, " %s", o->fixes[i]);
		fputc('\n', stderr);
	}
	return rc;
}
