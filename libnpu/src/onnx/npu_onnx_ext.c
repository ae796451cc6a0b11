// SPDX-License-Identifier: MIT
/*
 * ONNX external data: a tensor's external_data entries name a side file
 * ("location", relative to the model's folder), where its bytes start
 * ("offset", decimal, default 0) and how many there are ("length",
 * decimal, default: what its dtype and dims need).  Each side file is
 * mapped once (read-only, MAP_PRIVATE) and the graph owns the mapping, so
 * a weight's bytes reach the IR without a copy; the compiler's conversion
 * to what the program stores is the only one.
 *
 * The model chooses the location, so it is checked like hostile input:
 * absolute paths, '..' components and names that resolve (through
 * symlinks) outside the model's folder are refused, and every offset and
 * length is checked against the file's size before a byte is read.
 * Keys: "checksum" (optional in ONNX) and onnxruntime's own "prepacked*"
 * entries are ignored; any other key is refused, as onnxruntime does.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx/npu_onnx_ext.h"

/* What to do about a location that leaves the model's folder. */
#define KEEP "; keep side files in the model's folder or below it"

/* The parsed external_data entries of one tensor. */
struct ext_ref {
	const char *location;
	uint64_t offset;
	uint64_t length;
	bool has_length;
};

/* A decimal number without sign or spaces, at most INT64_MAX; false if not. */
static bool parse_decimal(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!s[0])
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		if (v > ((uint64_t)INT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return true;
}

static npu_status parse_ref(const Onnx__TensorProto *tp, const char *what, struct ext_ref *r)
{
	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < tp->n_external_data; i++) {
		const Onnx__StringStringEntryProto *e = tp->external_data[i];
		const char *k = e->key, *v = e->value ? e->value : "";

		if (!k || !k[0])
			return npu_fail(NPU_ERR_FORMAT, "%s has an external_data entry without a key",
					what);
		if (!v[0] || !strcmp(k, "checksum") || !strncmp(k, "prepacked", 9))
			continue;	/* empty values count as absent, as in onnxruntime */
		if (!strcmp(k, "location")) {
			r->location = v;
		} else if (!strcmp(k, "offset")) {
			if (!parse_decimal(v, &r->offset))
				return npu_fail(NPU_ERR_FORMAT,
						"%s: external data offset '%s' is not a decimal number of bytes; the model is corrupt",
						what, v);
		} else if (!strcmp(k, "length")) {
			if (!parse_decimal(v, &r->length))
				return npu_fail(NPU_ERR_FORMAT,
						"%s: external data length '%s' is not a decimal number of bytes; the model is corrupt",
						what, v);
			r->has_length = true;
		} else {
			return npu_fail(NPU_ERR_FORMAT,
					"%s: external_data key '%s' is not one ONNX defines (location, offset, length, checksum); remove it",
					what, k);
		}
	}
	if (!r->location)
		return npu_fail(NPU_ERR_FORMAT,
				"%s stores its data in an external file but names none (no 'location' key); the model is corrupt",
				what);
	return NPU_OK;
}

/* Refuse a location that is absolute or climbs out with a '..' component. */
static npu_status check_location(const char *loc, const char *what)
{
	if (loc[0] == '/')
		return npu_fail(NPU_ERR_FORMAT,
				"%s: external data location '%s' is an absolute path; libnpu reads side files only from the model's folder, named relative to it",
				what, loc);
	for (const char *p = loc; *p;) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return npu_fail(NPU_ERR_FORMAT,
					"%s: external data location '%s' has a '..' component, which leaves the model's folder%s",
					what, loc, KEEP);
		p += n;
		p += *p == '/';
	}
	return NPU_OK;
}

/* The side file at @loc, mapped on first use; *@out indexes x->files. */
static npu_status open_file(struct npu_onnx_ext *x, const char *loc, const char *what, int *out)
{
	char *joined = NULL, *real = NULL;
	struct npu_onnx_ext_file *files;
	size_t dl;
	void *base = NULL;
	struct stat sb;
	npu_status st;
	int fd = -1;

	if (!x->real_dir) {
		x->real_dir = realpath(x->model_dir, NULL);
		if (!x->real_dir)
			return npu_fail(NPU_ERR_FORMAT,
					"%s stores its data in '%s', but the model's folder '%s' cannot be resolved: %s",
					what, loc, x->model_dir, strerror(errno));
	}
	dl = strlen(x->real_dir);
	joined = malloc(dl + strlen(loc) + 2);
	if (!joined)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	sprintf(joined, "%s/%s", x->real_dir, loc);
	real = realpath(joined, NULL);
	if (!real) {
		st = npu_fail(NPU_ERR_FORMAT,
			      "%s stores its data in external file '%s', which cannot be found next to the model ('%s': %s); copy it there",
			      what, loc, joined, strerror(errno));
		goto out;
	}
	/* Inside the folder: "<dir>/..." ("/" is its own prefix). */
	if (strncmp(real, x->real_dir, dl) || (dl > 1 && real[dl] != '/') || !real[dl]) {
		st = npu_fail(NPU_ERR_FORMAT,
			      "%s: external data location '%s' resolves to '%s', outside the model's folder '%s'%s",
			      what, loc, real, x->real_dir, KEEP);
		goto out;
	}
	for (int i = 0; i < x->n_files; i++) {
		if (!strcmp(x->files[i].path, real)) {
			*out = i;
			st = NPU_OK;
			goto out;
		}
	}
	/* O_NONBLOCK: a FIFO named by a hostile model must not hang the open. */
	fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		st = npu_fail(NPU_ERR_FORMAT, "%s: external data file '%s' %s; it must be a readable file",
			      what, loc, fd < 0 ? strerror(errno) : "is not a regular file");
		goto out;
	}
	if ((uint64_t)sb.st_size > SIZE_MAX / 2) {
		st = npu_fail(NPU_ERR_FORMAT, "%s: external data file '%s' is too large", what, loc);
		goto out;
	}
	if (sb.st_size) {
		base = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (base == MAP_FAILED) {
			st = npu_fail(NPU_ERR_IO, "%s: cannot map external data file '%s': %s",
				      what, loc, strerror(errno));
			goto out;
		}
		st = npu_ir_graph_own_mapping(x->g, base, (size_t)sb.st_size);
		if (st)
			goto out;	/* unmapped by the graph */
	}
	files = realloc(x->files, (size_t)(x->n_files + 1) * sizeof(*files));
	if (!files) {
		st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	x->files = files;
	files[x->n_files] = (struct npu_onnx_ext_file){
		.path = real, .base = base, .size = (size_t)sb.st_size,
	};
	real = NULL;
	*out = x->n_files++;
	st = NPU_OK;
out:
	if (fd >= 0)
		close(fd);
	free(real);
	free(joined);
	return st;
}

npu_status npu_onnx_ext_read(struct npu_onnx_ext *x, const Onnx__TensorProto *tp,
			     const char *what, size_t bytes, size_t elem, bool copy,
			     void **data, bool *mapped)
{
	const struct npu_onnx_ext_file *f;
	struct ext_ref r;
	npu_status st;
	int fi = -1;

	*data = NULL;
	*mapped = false;
	st = parse_ref(tp, what, &r);
	if (st)
		return st;
	if (!x || !x->model_dir || !x->g)
		return npu_fail(NPU_ERR_FORMAT,
				"%s stores its data in an external file '%s'; load the model with npu_model_load_file so libnpu can find it",
				what, r.location);
	st = check_location(r.location, what);
	if (st)
		return st;
	if (r.has_length && r.length != bytes)
		return npu_fail(NPU_ERR_FORMAT,
				"%s: external data in '%s' is %" PRIu64 " bytes long; its shape and type need %zu: the model is corrupt",
				what, r.location, r.length, bytes);
	st = open_file(x, r.location, what, &fi);
	if (st)
		return st;
	f = &x->files[fi];
	if (r.offset > f->size || bytes > f->size - r.offset)
		return npu_fail(NPU_ERR_FORMAT,
				"%s: external data at offset %" PRIu64 ", %zu bytes, runs past the end of '%s' (%zu bytes); the side file is truncated or not the model's",
				what, r.offset, bytes, r.location, f->size);
	if (bytes && !copy && elem && r.offset % elem == 0) {
		*data = (void *)(f->base + r.offset);
		*mapped = true;
		return NPU_OK;
	}
	*data = malloc(bytes ? bytes : 1);
	if (!*data)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory loading %s", what);
	if (bytes)
		memcpy(*data, f->base + r.offset, bytes);
	return NPU_OK;
}

void npu_onnx_ext_done(struct npu_onnx_ext *x)
{
	for (int i = 0; i < x->n_files; i++)
		free(x->files[i].path);
	free(x->files);
	free(x->real_dir);
	x->files = NULL;
	x->n_files = 0;
	x->real_dir = NULL;
}
