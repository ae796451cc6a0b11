// SPDX-License-Identifier: MIT
/*
 * npu-run: input shapes from the input files.  An ONNX model may leave
 * input dims open ("batch", "?"); --shape fixes them, and so does the
 * file given with --input: an .npy header gives every dim, a raw file's
 * size one open dim (the others are declared).  The chosen shape goes to
 * the compiler as if given with --shape and is said on stderr and in the
 * summary, or in the JSON (shape_from) with --json.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "image.h"
#include "inputs.h"
#include "shapes.h"
#include "util.h"

/* "float32[?,76,32,1]" of a declared input into @buf ("float32[?]": no shape). */
static const char *declared_str(const npu_tensor_info *t, char *buf, size_t cap)
{
	size_t o = (size_t)snprintf(buf, cap, "%s[%s", npu_dtype_str(t->dtype),
				    t->rank < 0 ? "?" : "");

	for (int i = 0; i < t->rank && o < cap; i++) {
		if (t->dims[i] < 0)
			o += (size_t)snprintf(buf + o, cap - o, "%s?", i ? "," : "");
		else
			o += (size_t)snprintf(buf + o, cap - o, "%s%" PRId64, i ? "," : "",
					      t->dims[i]);
	}
	if (o < cap)
		snprintf(buf + o, cap - o, "]");
	return buf;
}

static const char *dims_str(const int64_t *d, int rank, char *buf, size_t cap)
{
	size_t o = 0;

	buf[0] = '\0';
	for (int i = 0; i < rank && o < cap; i++)
		o += (size_t)snprintf(buf + o, cap - o, "%s%" PRId64, i ? "x" : "", d[i]);
	return buf;
}

/* The shape of input @t from the header of .npy file @file. */
static int from_npy(const char *arg, const char *file, const npu_tensor_info *t, int rank,
		    const int64_t *dims, npu_input_shape *sh)
{
	char want[160], got[160];

	declared_str(t, want, sizeof(want));
	dims_str(dims, rank, got, sizeof(got));
	if (t->rank >= 0 && rank != t->rank)
		return nr_fail(NR_EXIT_RUNTIME, "--input %s: %s holds shape %s (rank %d), but input "
			       "'%s' is %s; save it with %d dims or give --shape %s=DIMS",
			       arg, file, got, rank, t->name, want, t->rank, t->name);
	for (int i = 0; i < rank; i++) {
		if (dims[i] < 1 || (t->rank >= 0 && t->dims[i] >= 0 && dims[i] != t->dims[i]))
			return nr_fail(NR_EXIT_RUNTIME, "--input %s: %s holds shape %s, but input "
				       "'%s' is %s: axis %d does not fit; save it with the "
				       "model's shape or give --shape %s=DIMS", arg, file, got,
				       t->name, want, i, t->name);
		sh->dims[i] = dims[i];
	}
	sh->rank = rank;
	return 0;
}

/* The single open dim of input @t from the size of raw file @file. */
static int from_size(const char *arg, const char *file, const npu_tensor_info *t,
		     npu_input_shape *sh, int *axis)
{
	char want[160];
	uint64_t known = npu_dtype_size(t->dtype), size;
	int open = 0;
	struct stat sb;

	declared_str(t, want, sizeof(want));
	if (stat(file, &sb) || !S_ISREG(sb.st_mode))
		return nr_fail(NR_EXIT_RUNTIME, "--input %s: cannot read %s; give a raw or .npy "
			       "file", arg, file);
	size = (uint64_t)sb.st_size;
	if (t->rank < 0)
		return nr_fail(NR_EXIT_RUNTIME, "--input %s: input '%s' has no declared shape, "
			       "which a raw file's size cannot give; give --shape %s=DIMS or an "
			       ".npy file", arg, t->name, t->name);
	for (int i = 0; i < t->rank; i++) {
		if (t->dims[i] < 0) {
			open++;
			*axis = i;
		} else {
			known *= (uint64_t)t->dims[i];
		}
	}
	if (open > 1)
		return nr_fail(NR_EXIT_RUNTIME, "--input %s: input '%s' is %s, %d dims open, and a "
			       "raw file's size gives only one; give --shape %s=DIMS or an .npy "
			       "file", arg, t->name, want, open, t->name);
	if (!known || !size || size % known)
		return nr_fail(NR_EXIT_RUNTIME, "--input %s: %s holds %llu bytes, which is no "
			       "whole number of %s (%llu bytes each for axis %d); give --shape "
			       "%s=DIMS or an .npy file", arg, file, (unsigned long long)size,
			       want, (unsigned long long)known, *axis, t->name);
	sh->rank = t->rank;
	for (int i = 0; i < t->rank; i++)
		sh->dims[i] = t->dims[i] < 0 ? (int64_t)(size / known) : t->dims[i];
	return 0;
}

/* Choose the shape of open input @t from the file of --input @arg. */
static int choose(struct nr_options *o, const char *arg, const char *file,
		  const npu_tensor_info *t)
{
	npu_input_shape *sh = &o->shapes[o->n_shapes];
	int64_t dims[NPU_MAX_RANK];
	char from[64], got[160];
	int rank = 0, axis = 0, rc;

	memset(sh, 0, sizeof(*sh));
	/* A picture is resized to the input's size: it cannot choose one. */
	if (nr_image_sniff(file) != NR_IMAGE_NONE)
		return nr_fail(NR_EXIT_USAGE, "--input %s: input '%s' has open dims, and a picture "
			       "is resized to the input's shape rather than giving one; give "
			       "--shape %s=DIMS (e.g. 1x3x224x224)", arg, t->name, t->name);
	rc = nr_npy_peek(arg, file, &rank, dims);
	if (rc > 0)
		return rc;
	if (rc == 0) {
		rc = from_npy(arg, file, t, rank, dims, sh);
		snprintf(from, sizeof(from), "the .npy header");
	} else {
		rc = from_size(arg, file, t, sh, &axis);
		snprintf(from, sizeof(from), "the file's size (axis %d)", axis);
	}
	if (rc)
		return rc;
	sh->name = strdup(t->name);
	o->shape_from[o->n_shapes] = strdup(from);
	if (!sh->name || !o->shape_from[o->n_shapes]) {
		free((char *)sh->name);
		free(o->shape_from[o->n_shapes]);
		return nr_fail(NR_EXIT_RUNTIME, "out of memory");
	}
	o->n_shapes++;
	/* --json: the JSON says it (shape_from); stderr stays quiet. */
	if (!o->json)
		fprintf(stderr, "npu-run: input '%s': shape %s from %s of %s\n", t->name,
		dims_str(sh->dims, sh->rank, got, sizeof(got)), from, file);
	return 0;
}

int nr_shapes_from_inputs(struct nr_options *o)
{
	npu_tensor_info *decl = NULL;
	size_t n = 0;
	int rc = 0;

	if (!o->n_inputs || strstr(o->model, "://"))
		return 0;
	/* A compiled model or one that does not parse: the load says why. */
	if (npu_model_declared_inputs(o->model, &decl, &n) != NPU_OK)
		return 0;
	for (unsigned i = 0; !rc && i < o->n_inputs; i++) {
		size_t k;
		const char *file;
		int open = 0;

		if (nr_match_input(o->inputs[i], decl, n, &k, &file) || !*file ||
		    nr_shape_given(o, decl[k].name))
			continue;
		open = decl[k].rank < 0;
		for (int d = 0; d < decl[k].rank; d++)
			open |= decl[k].dims[d] < 0;
		if (open)
			rc = choose(o, o->inputs[i], file, &decl[k]);
	}
	npu_declared_inputs_free(decl, n);
	return rc;
}

const char *nr_shape_from(const struct nr_options *o, const char *name)
{
	for (unsigned i = 0; i < o->n_shapes; i++)
		if (!strcmp(o->shapes[i].name, name))
			return o->shape_from[i] ? o->shape_from[i] : "--shape";
	return NULL;
}
