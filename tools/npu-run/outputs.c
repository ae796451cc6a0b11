// SPDX-License-Identifier: MIT
/* npu-run: writing outputs to --output-dir. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "outputs.h"
#include "util.h"

/* Leaves room in NAME_MAX (255) for ".<batch>.bin" and a "_<index>". */
#define STEM_MAX 200

typedef char nr_stem[STEM_MAX + 24];

void nr_sanitize_name(const char *name, char *out, size_t cap)
{
	size_t n = 0;

	if (!cap)
		return;
	for (; *name && n + 1 < cap; name++) {
		char c = *name;
		int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			 (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';

		out[n++] = ok ? c : '_';
	}
	out[n] = '\0';
	/* "" / "." / ".." would name no file or a directory, not a new file. */
	if (!strcmp(out, "") || !strcmp(out, ".") || !strcmp(out, "..")) {
		size_t len = strlen(out);

		for (size_t i = 0; i < len; i++)
			out[i] = '_';
		if (!len && cap > 1)
			strcpy(out, "_");
	}
}

/* mkdir -p: each missing component in turn. */
static int make_dirs(const char *dir)
{
	char *path = strdup(dir);
	struct stat st;
	int rc = 0;

	if (!path)
		return nr_fail(NR_EXIT_RUNTIME, "out of memory");
	for (char *p = path + 1; ; p++) {
		char saved = *p;

		if (saved && saved != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0777) && errno != EEXIST) {
			rc = nr_fail(NR_EXIT_RUNTIME, "--output-dir %s: cannot create %s: %s", dir,
				     path, strerror(errno));
			break;
		}
		*p = saved;
		if (!saved)
			break;
	}
	if (!rc && (stat(dir, &st) || !S_ISDIR(st.st_mode)))
		rc = nr_fail(NR_EXIT_RUNTIME, "--output-dir %s: not a directory; give a directory "
			     "path", dir);
	free(path);
	return rc;
}

/* @head (@head_bytes, may be 0) then @data into @path. */
static int write_file(const char *dir, const char *path, const void *head, size_t head_bytes,
		      const void *data, size_t bytes)
{
	FILE *f = fopen(path, "wb");
	int err;

	if (!f)
		return nr_fail(NR_EXIT_RUNTIME, "--output-dir %s: cannot create %s: %s", dir, path,
			       strerror(errno));
	if (fwrite(head, 1, head_bytes, f) != head_bytes || fwrite(data, 1, bytes, f) != bytes) {
		err = errno;
		fclose(f);
		return nr_fail(NR_EXIT_RUNTIME, "--output-dir %s: writing %s failed: %s", dir, path,
			       strerror(err));
	}
	if (fclose(f))
		return nr_fail(NR_EXIT_RUNTIME, "--output-dir %s: writing %s failed: %s", dir, path,
			       strerror(errno));
	return 0;
}

/* ---- .npy ---- */

/*
 * The NumPy descr of what the file holds for @dtype (int64 as int64,
 * float64 as float64: the conversion below comes first); NULL for a dtype NumPy has none for
 * (bfloat16).  Little-endian like the device; '|' for single bytes.
 */
static const char *npy_descr(npu_dtype dtype)
{
	switch (dtype) {
	case NPU_DTYPE_FLOAT32: return "<f4";
	case NPU_DTYPE_FLOAT16: return "<f2";
	case NPU_DTYPE_FLOAT64: return "<f8";
	case NPU_DTYPE_INT64: return "<i8";
	case NPU_DTYPE_UINT64: return "<u8";
	case NPU_DTYPE_INT32: return "<i4";
	case NPU_DTYPE_UINT32: return "<u4";
	case NPU_DTYPE_INT16: return "<i2";
	case NPU_DTYPE_UINT16: return "<u2";
	case NPU_DTYPE_INT8: return "|i1";
	case NPU_DTYPE_UINT8: return "|u1";
	case NPU_DTYPE_BOOL: return "|b1";
	default: return NULL;
	}
}

int nr_outputs_check(const npu_model *model, enum nr_output_format format)
{
	size_t n = npu_model_output_count(model);

	if (format != NR_OUTPUT_NPY)
		return 0;
	for (size_t i = 0; i < n; i++) {
		npu_tensor_info t;

		if (npu_model_output_info(model, i, &t) != NPU_OK)
			return nr_fail(NR_EXIT_RUNTIME, "output %zu: %s", i, npu_last_error());
		if (!npy_descr(t.dtype))
			return nr_fail(NR_EXIT_USAGE, "--output-format npy: output '%s' is %s, which "
				       "NumPy has no dtype for; use --output-format raw", t.name,
				       npu_dtype_str(t.dtype));
	}
	return 0;
}

/*
 * A format 1.0 header for @t's shape and dtype into @buf: magic, version,
 * u16 length, then the dict as a Python literal padded with spaces and a
 * newline so the data starts at a multiple of 64 bytes (NumPy's own
 * alignment).  Returns its size.
 */
static size_t npy_header(const npu_tensor_info *t, char *buf, size_t cap)
{
	char dict[400];
	size_t len, total;
	int n;

	n = snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': (",
		     npy_descr(t->dtype));
	for (int i = 0; i < t->rank; i++)
		n += snprintf(dict + n, sizeof(dict) - (size_t)n, "%s%lld", i ? ", " : "",
			      (long long)t->dims[i]);
	/* A one-element tuple needs its comma: (10,). */
	snprintf(dict + n, sizeof(dict) - (size_t)n, "%s), }", t->rank == 1 ? "," : "");
	len = strlen(dict);
	total = (10 + len + 1 + 63) / 64 * 64;
	if (total > cap)
		return 0;
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (char)((total - 10) & 0xff);
	buf[9] = (char)((total - 10) >> 8);
	memcpy(buf + 10, dict, len);
	memset(buf + 10 + len, ' ', total - 10 - len - 1);
	buf[total - 1] = '\n';
	return total;
}

/* The file stems of all outputs, unique: a clash gets "_<index>". */
static nr_stem *make_stems(const npu_model *model, size_t n)
{
	nr_stem *stem = calloc(n ? n : 1, sizeof(*stem));

	if (!stem)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		npu_tensor_info t;

		if (npu_model_output_info(model, i, &t) != NPU_OK)
			t.name = "";
		nr_sanitize_name(t.name, stem[i], STEM_MAX);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(stem[i], stem[j])) {
				size_t len = strlen(stem[i]);

				snprintf(stem[i] + len, sizeof(stem[i]) - len, "_%zu", i);
				break;
			}
	}
	return stem;
}

void nr_output_paths_free(char **paths, size_t n)
{
	if (!paths)
		return;
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

/*
 * Buffer @index (batch element @b) of output @t as DIR/<stem>[.<b>].bin or
 * .npy; *@path_out gets the path.
 */
static int write_output(npu_context *ctx, const char *dir, const char *stem, unsigned b,
			size_t index, const npu_tensor_info *t, enum nr_output_format format,
			char **path_out)
{
	char suffix[16] = "", head[512];
	size_t bytes, head_bytes = 0, len = strlen(dir);
	void *wide = NULL, *data;
	char *path;
	int rc;

	*path_out = NULL;
	if (npu_context_output_buffer(ctx, index, &data, &bytes) != NPU_OK)
		return nr_fail(NR_EXIT_RUNTIME, "output buffer %zu: %s", index, npu_last_error());
	/* The NPU computes int64 as int32 ...: the file gets the model's type. */
	if (npu_dtype_device(t->dtype) != t->dtype) {
		wide = malloc(t->bytes + 1);
		if (!wide)
			return nr_fail(NR_EXIT_RUNTIME, "out of memory");
		if (npu_tensor_from_device(t, data, wide) != NPU_OK) {
			free(wide);
			return nr_fail(NR_EXIT_RUNTIME, "output '%s': %s", t->name, npu_last_error());
		}
		data = wide;
		bytes = t->bytes;
	}
	/* An output of run-time size fills the start of its buffer. */
	if (bytes > t->bytes)
		bytes = t->bytes;
	if (format == NR_OUTPUT_NPY) {
		/* The header promises shape x dtype: never write a file that lies. */
		if (bytes != nr_shape_elems(t->dims, t->rank) * npu_dtype_size(t->dtype)) {
			free(wide);
			return nr_fail(NR_EXIT_RUNTIME, "output '%s': %zu bytes do not match its "
				       "shape; use --output-format raw", t->name, bytes);
		}
		head_bytes = npy_header(t, head, sizeof(head));
	}
	if (b)
		snprintf(suffix, sizeof(suffix), ".%u", b);
	path = malloc(len + strlen(stem) + strlen(suffix) + 8);
	if (!path) {
		free(wide);
		return nr_fail(NR_EXIT_RUNTIME, "out of memory");
	}
	sprintf(path, "%s%s%s%s.%s", dir, dir[len - 1] == '/' ? "" : "/", stem, suffix,
		format == NR_OUTPUT_NPY ? "npy" : "bin");
	rc = write_file(dir, path, head, head_bytes, data, bytes);
	free(wide);
	*path_out = path;
	return rc;
}

/* A dim of run-time size (-1): the last run gives the shape. */
static bool has_open_dim(const npu_tensor_info *t)
{
	for (int d = 0; d < t->rank; d++)
		if (t->dims[d] < 0)
			return true;
	return false;
}

int nr_outputs_write(npu_context *ctx, const npu_model *model, unsigned batch, const char *dir,
		     enum nr_output_format format, char ***paths_out)
{
	size_t n = npu_model_output_count(model);
	nr_stem *stem;
	char **paths;
	int rc;

	if (paths_out)
		*paths_out = NULL;
	rc = nr_outputs_check(model, format);
	if (!rc)
		rc = make_dirs(dir);
	if (rc)
		return rc;
	stem = make_stems(model, n);
	paths = calloc(n ? n : 1, sizeof(*paths));
	if (!stem || !paths) {
		free(stem);
		free(paths);
		return nr_fail(NR_EXIT_RUNTIME, "out of memory");
	}
	/* With a batch, buffer b * n + i is output i of batch element b. */
	for (unsigned b = 0; b < batch && !rc; b++)
		for (size_t i = 0; i < n && !rc; i++) {
			char *path;

			npu_tensor_info info;

			if (npu_model_output_info(model, i, &info) != NPU_OK ||
			    (has_open_dim(&info) &&
			     npu_context_last_run_output_info(ctx, (size_t)b * n + i, &info) != NPU_OK)) {
				rc = nr_fail(NR_EXIT_RUNTIME, "output %zu: %s", i,
					     npu_last_error());
				break;
			}
			rc = write_output(ctx, dir, stem[i], b, (size_t)b * n + i, &info, format,
					  &path);
			if (b == 0)
				paths[i] = path;
			else
				free(path);
		}
	free(stem);
	if (rc || !paths_out)
		nr_output_paths_free(paths, n);
	else
		*paths_out = paths;
	return rc;
}
