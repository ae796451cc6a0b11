// SPDX-License-Identifier: MIT
/*
 * npu-run: input data.  A file is raw little-endian data in the tensor's
 * dtype, or a NumPy .npy file (recognised by its magic, whatever its
 * name) whose dtype and shape must be the model's.  With a batch, a file
 * holding one tensor fills every batch element and a file holding
 * exactly batch tensors gives one to each.  Inputs without a file are
 * generated from a fixed generator seeded by the input's index, so two
 * runs of the same model see the same data and give the same outputs.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image_input.h"
#include "inputs.h"
#include "util.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_MAX_HEADER 65536	/* numpy writes a few hundred bytes */
#define DESC_LEN 128

/* ---- generated data ---- */

/* 64-bit LCG (Knuth's MMIX constants): fixed, so runs are reproducible. */
static uint64_t lcg_next(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s;
}

/* Round-to-nearest-even float32 -> IEEE binary16 bits. */
static uint16_t f32_to_f16(float f)
{
	uint32_t x, sign, mant;
	int exp;

	memcpy(&x, &f, sizeof(x));
	sign = (x >> 16) & 0x8000;
	exp = (int)((x >> 23) & 0xff) - 127 + 15;
	mant = x & 0x7fffff;
	if (((x >> 23) & 0xff) == 0xff)
		return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
	if (exp >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (exp <= 0) {
		uint32_t shift, half, r;

		if (exp < -10)
			return (uint16_t)sign;
		mant |= 0x800000;
		shift = (uint32_t)(14 - exp);
		half = 1u << (shift - 1);
		r = mant >> shift;
		if ((mant & ((1u << shift) - 1)) > half ||
		    ((mant & ((1u << shift) - 1)) == half && (r & 1)))
			r++;
		return (uint16_t)(sign | r);
	}
	{
		uint32_t r = ((uint32_t)exp << 10) | (mant >> 13);
		uint32_t rest = mant & 0x1fff;

		/* A carry out of the mantissa correctly bumps the exponent. */
		if (rest > 0x1000 || (rest == 0x1000 && (r & 1)))
			r++;
		return (uint16_t)(sign | r);
	}
}

static uint16_t f32_to_bf16(float f)
{
	uint32_t x;

	memcpy(&x, &f, sizeof(x));
	if ((x & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((x >> 16) | 0x40);
	return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

/*
 * Fill @n elements of @dtype: floats uniform in [-1, 1), ints over their
 * range, but int64 and uint64 0 or 1: int64 inputs are token ids, masks and
 * segment ids of transformer exports, and these index every embedding
 * table (BERT's token types have 2 rows) and fit the int32 the NPU
 * computes int64 as; uint32 below 2^31 for the same reason.
 */
static void generate(npu_dtype dtype, uint64_t n, size_t index, void *out)
{
	uint64_t s = 0x9e3779b97f4a7c15ull * (index + 1);

	lcg_next(&s);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = lcg_next(&s);
		/* The top 24 bits: the LCG's best, and exact in a float. */
		float f = (float)(r >> 40) / 8388608.0f - 1.0f;

		switch (dtype) {
		case NPU_DTYPE_FLOAT32:
			((float *)out)[i] = f;
			break;
		case NPU_DTYPE_FLOAT16:
			((uint16_t *)out)[i] = f32_to_f16(f);
			break;
		case NPU_DTYPE_BFLOAT16:
			((uint16_t *)out)[i] = f32_to_bf16(f);
			break;
		case NPU_DTYPE_UINT8:
		case NPU_DTYPE_INT8:
			((uint8_t *)out)[i] = (uint8_t)(r >> 56);
			break;
		case NPU_DTYPE_INT32:
			((uint32_t *)out)[i] = (uint32_t)(r >> 32);
			break;
		case NPU_DTYPE_INT64:
		case NPU_DTYPE_UINT64:
			((int64_t *)out)[i] = (int64_t)(r >> 63);
			break;
		case NPU_DTYPE_FLOAT64:
			((double *)out)[i] = f;
			break;
		case NPU_DTYPE_INT16:
		case NPU_DTYPE_UINT16:
			((uint16_t *)out)[i] = (uint16_t)(r >> 48);
			break;
		case NPU_DTYPE_UINT32:	/* below 2^31: what the NPU's int32 holds */
			((uint32_t *)out)[i] = (uint32_t)(r >> 33);
			break;
		case NPU_DTYPE_BOOL:
			((uint8_t *)out)[i] = (uint8_t)(r >> 63);
			break;
		}
	}
}

/* ---- .npy ---- */

struct npy {
	char descr[16];
	int fortran;
	int rank;
	int64_t dims[NPU_MAX_RANK];
	size_t data_off;
};

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* A Python string literal ('x' or "x") into @buf; NULL if malformed or too long. */
static const char *npy_string(const char *p, const char *end, char *buf, size_t cap)
{
	char q;
	size_t n = 0;

	if (p >= end || (*p != '\'' && *p != '"'))
		return NULL;
	q = *p++;
	while (p < end && *p != q) {
		if (n + 1 >= cap || *p == '\\')
			return NULL;
		buf[n++] = *p++;
	}
	if (p >= end)
		return NULL;
	buf[n] = '\0';
	return p + 1;
}

/* A shape tuple: "()", "(5,)", "(1, 3, 32, 32)". */
static const char *npy_shape(const char *p, const char *end, struct npy *h)
{
	p = skip_ws(p, end);
	if (p >= end || *p++ != '(')
		return NULL;
	h->rank = 0;
	for (;;) {
		long long v = 0;
		int digits = 0;

		p = skip_ws(p, end);
		if (p < end && *p == ')')
			return p + 1;
		while (p < end && *p >= '0' && *p <= '9' && digits < 18) {
			v = v * 10 + (*p++ - '0');
			digits++;
		}
		while (p < end && (*p == 'L'))	/* Python 2 longs */
			p++;
		if (!digits || h->rank == NPU_MAX_RANK)
			return NULL;
		h->dims[h->rank++] = v;
		p = skip_ws(p, end);
		if (p < end && *p == ',')
			p++;
		else if (p >= end || *p != ')')
			return NULL;
	}
}

/* The header dict: {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }. */
static int npy_dict(const char *p, const char *end, struct npy *h)
{
	unsigned seen = 0;

	p = skip_ws(p, end);
	if (p >= end || *p++ != '{')
		return -1;
	for (;;) {
		char key[32];

		p = skip_ws(p, end);
		if (p < end && *p == '}')
			break;
		p = npy_string(p, end, key, sizeof(key));
		if (!p)
			return -1;
		p = skip_ws(p, end);
		if (p >= end || *p++ != ':')
			return -1;
		p = skip_ws(p, end);
		if (!strcmp(key, "descr")) {
			p = npy_string(p, end, h->descr, sizeof(h->descr));
			seen |= 1;
		} else if (!strcmp(key, "fortran_order")) {
			if (end - p >= 4 && !memcmp(p, "True", 4)) {
				h->fortran = 1;
				p += 4;
			} else if (end - p >= 5 && !memcmp(p, "False", 5)) {
				h->fortran = 0;
				p += 5;
			} else {
				return -1;
			}
			seen |= 2;
		} else if (!strcmp(key, "shape")) {
			p = npy_shape(p, end, h);
			seen |= 4;
		} else {
			return -1;
		}
		if (!p)
			return -1;
		p = skip_ws(p, end);
		if (p < end && *p == ',')
			p++;
		else if (p >= end || *p != '}')
			return -1;
	}
	return seen == 7 ? 0 : -1;
}

/* The dtype of an .npy descr; 0 if npu-run has no such dtype. */
static npu_dtype npy_dtype(const char *descr)
{
	static const struct {
		const char *code;
		npu_dtype dtype;
	} map[] = {
		{ "f4", NPU_DTYPE_FLOAT32 }, { "f2", NPU_DTYPE_FLOAT16 },
		{ "u1", NPU_DTYPE_UINT8 }, { "i1", NPU_DTYPE_INT8 },
		{ "i4", NPU_DTYPE_INT32 }, { "i8", NPU_DTYPE_INT64 },
		{ "b1", NPU_DTYPE_BOOL }, { "f8", NPU_DTYPE_FLOAT64 },
		{ "i2", NPU_DTYPE_INT16 }, { "u2", NPU_DTYPE_UINT16 },
		{ "u4", NPU_DTYPE_UINT32 }, { "u8", NPU_DTYPE_UINT64 },
	};

	int one_byte = !strcmp(descr + 1, "u1") || !strcmp(descr + 1, "i1") ||
		       !strcmp(descr + 1, "b1");

	/* Little-endian ('<'), not applicable ('|') or native ('='; the
	 * tool is built for little-endian hosts, like the device); single
	 * bytes have no byte order, so '>u1' is as good. */
	if (descr[0] != '<' && descr[0] != '|' && descr[0] != '=' && !(descr[0] == '>' && one_byte))
		return 0;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(descr + 1, map[i].code))
			return map[i].dtype;
	return 0;
}

/* A readable name of an .npy descr, for messages: "float64", "big-endian float32". */
static void npy_descr_name(const char *descr, char *buf, size_t cap)
{
	static const struct {
		const char *code;
		const char *name;
	} names[] = {
		{ "f8", "float64" }, { "f4", "float32" }, { "f2", "float16" },
		{ "u1", "uint8" }, { "i1", "int8" }, { "u2", "uint16" }, { "i2", "int16" },
		{ "u4", "uint32" }, { "i4", "int32" }, { "u8", "uint64" }, { "i8", "int64" },
		{ "b1", "bool" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (descr[0] && !strcmp(descr + 1, names[i].code)) {
			snprintf(buf, cap, "%s%s", descr[0] == '>' ? "big-endian " : "",
				 names[i].name);
			return;
		}
	snprintf(buf, cap, "dtype '%s'", descr);
}

/* ---- files ---- */

/* "float32 [1, 3, 32, 32], 12288 bytes" */
static void tensor_desc(const npu_tensor_info *t, char *buf, size_t cap)
{
	char shape[160];

	snprintf(buf, cap, "%s %s, %zu bytes", npu_dtype_str(t->dtype),
		 nr_shape_str(t->dims, t->rank, shape, sizeof(shape)), t->bytes);
}

static int same_shape(const int64_t *a, int ra, const int64_t *b, int rb)
{
	return ra == rb && !memcmp(a, b, (size_t)ra * sizeof(*a));
}

/*
 * Does an .npy shape hold one tensor (return 1), or one per batch
 * element (2: [batch, dims...] or [batch * d0, d1, ...]), or neither (0)?
 */
static int npy_shape_fits(const struct npy *h, const npu_tensor_info *t, unsigned batch)
{
	if (same_shape(h->dims, h->rank, t->dims, t->rank))
		return 1;
	if (batch <= 1)
		return 0;
	if (h->rank == t->rank + 1 && h->dims[0] == batch &&
	    same_shape(h->dims + 1, h->rank - 1, t->dims, t->rank))
		return 2;
	if (h->rank == t->rank && t->rank > 0 && h->dims[0] == (int64_t)batch * t->dims[0] &&
	    same_shape(h->dims + 1, h->rank - 1, t->dims + 1, t->rank - 1))
		return 2;
	return 0;
}

/* Read and check an .npy header; sets the data offset. */
static int npy_header(FILE *f, const char *arg, const char *file, uint64_t size,
		      const npu_tensor_info *t, unsigned batch, struct npy *h, int *per_element)
{
	unsigned char pre[12];
	char *text, desc[256], got[DESC_LEN], shape[160];
	size_t pre_len, hlen;
	npu_dtype dt;
	int fits;

	memset(h, 0, sizeof(*h));
	if (size < 10 || fread(pre, 1, 10, f) != 10)
		return nr_fail(NR_EXIT_RUNTIME, "--input %s: a truncated .npy file; write it "
			       "again with numpy.save", arg);
	if (pre[6] == 1) {
		pre_len = 10;
		hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
	} else if ((pre[6] == 2 || pre[6] == 3) && size >= 12 && fread(pre + 10, 1, 2, f) == 2) {
		pre_len = 12;
		hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 |
		       (size_t)pre[11] << 24;
	} else {
		return nr_fail(NR_EXIT_RUNTIME, "--input %s: .npy format version %u.%u is not "
			       "supported; write it with numpy.save (version 1.0 to 3.0)", arg,
			       pre[6], pre[7]);
	}
	if (hlen > NPY_MAX_HEADER || pre_len + hlen > size)
		return nr_fail(NR_EXIT_RUNTIME, "--input %s: the .npy header is %s; write the "
			       "file again with numpy.save", arg,
			       hlen > NPY_MAX_HEADER ? "too long" : "truncated");
	text = malloc(hlen + 1);
	if (!text)
		return nr_fail(NR_EXIT_RUNTIME, "out of memory");
	if (fread(text, 1, hlen, f) != hlen || npy_dict(text, text + hlen, h)) {
		free(text);
		return nr_fail(NR_EXIT_RUNTIME, "--input %s: malformed .npy header (want "
			       "descr, fortran_order and shape); write it with numpy.save", arg);
	}
	free(text);
	h->data_off = pre_len + hlen;

	tensor_desc(t, desc, sizeof(desc));
	dt = npy_dtype(h->descr);
	npy_descr_name(h->descr, got, sizeof(got));
	nr_shape_str(h->dims, h->rank, shape, sizeof(shape));
	if (dt != t->dtype)
		return nr_fail(NR_EXIT_RUNTIME, "--input %s: %s holds %s %s, but input '%s' is %s; "
			       "save it as little-endian %s", arg, file, got, shape, t->name, desc,
			       npu_dtype_str(t->dtype));
	if (h->fortran)
		return nr_fail(NR_EXIT_RUNTIME, "--input %s: the .npy data is in Fortran order; "
			       "save it in C order (numpy.ascontiguousarray)", arg);
	fits = npy_shape_fits(h, t, batch);
	if (!fits)
		return nr_fail(NR_EXIT_RUNTIME, "--input %s: %s holds %s %s, but input '%s' is "
			       "%s%s; save it with the model's shape", arg, file, got, shape,
			       t->name, desc, batch > 1 ? " (or that many per batch element)" : "");
	*per_element = fits == 2;
	if (size - h->data_off != (uint64_t)t->bytes * (fits == 2 ? batch : 1))
		return nr_fail(NR_EXIT_RUNTIME, "--input %s: %s holds %llu data bytes, but its "
			       "header says %s %s: %zu bytes; the file is damaged", arg, file,
			       (unsigned long long)(size - h->data_off), got, shape,
			       t->bytes * (fits == 2 ? batch : 1));
	return 0;
}

int nr_npy_peek(const char *arg, const char *file, int *rank, int64_t *dims)
{
	unsigned char pre[12];
	struct npy h;
	size_t hlen;
	char *text;
	int rc = 0;
	FILE *f = fopen(file, "rb");

	if (!f)
		return nr_fail(NR_EXIT_RUNTIME, "--input %s: cannot open %s: %s", arg, file,
			       strerror(errno));
	if (fread(pre, 1, 10, f) != 10 || memcmp(pre, NPY_MAGIC, 6)) {
		fclose(f);
		return -1;	/* raw */
	}
	memset(&h, 0, sizeof(h));
	if (pre[6] == 1)
		hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
	else if ((pre[6] == 2 || pre[6] == 3) && fread(pre + 10, 1, 2, f) == 2)
		hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 |
		       (size_t)pre[11] << 24;
	else
		hlen = NPY_MAX_HEADER + 1;
	text = hlen <= NPY_MAX_HEADER ? malloc(hlen + 1) : NULL;
	if (!text || fread(text, 1, hlen, f) != hlen || npy_dict(text, text + hlen, &h))
		rc = nr_fail(NR_EXIT_RUNTIME, "--input %s: malformed .npy header (want descr, "
			     "fortran_order and shape); write it with numpy.save", arg);
	free(text);
	fclose(f);
	if (!rc) {
		*rank = h.rank;
		memcpy(dims, h.dims, sizeof(h.dims));
	}
	return rc;
}

/* A raw file of the wrong size: say what it has and what the input wants. */
static int raw_size_error(const char *arg, const char *file, uint64_t size,
			  const npu_tensor_info *t, unsigned batch)
{
	char desc[256], all[96] = "";

	tensor_desc(t, desc, sizeof(desc));
	if (batch > 1)
		snprintf(all, sizeof(all), " (or %zu bytes for all %u batch elements)",
			 t->bytes * batch, batch);
	return nr_fail(NR_EXIT_RUNTIME, "--input %s: %s holds %llu bytes, but input '%s' is %s%s; "
		       "give raw little-endian %s data of that size or an .npy file", arg, file,
		       (unsigned long long)size, t->name, desc, all, npu_dtype_str(t->dtype));
}

/* Read @file (raw or .npy) for input @t into @in->data (batch x bytes). */
static int read_input(const char *arg, const char *file, const npu_tensor_info *t,
		      unsigned batch, struct nr_input *in)
{
	unsigned char magic[NPY_MAGIC_LEN];
	uint64_t size, data_bytes;
	size_t off = 0;
	struct stat st;
	int rc = 0;
	FILE *f = fopen(file, "rb");

	if (!f)
		return nr_fail(NR_EXIT_RUNTIME, "--input %s: cannot open %s: %s", arg, file,
			       strerror(errno));
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		fclose(f);
		return nr_fail(NR_EXIT_RUNTIME, "--input %s: %s is not a regular file; give a raw "
			       "or .npy file", arg, file);
	}
	size = (uint64_t)st.st_size;
	if (size >= NPY_MAGIC_LEN && fread(magic, 1, NPY_MAGIC_LEN, f) == NPY_MAGIC_LEN &&
	    !memcmp(magic, NPY_MAGIC, NPY_MAGIC_LEN)) {
		struct npy h;

		rewind(f);
		rc = npy_header(f, arg, file, size, t, batch, &h, &in->per_element);
		off = h.data_off;
	} else if (size == t->bytes || (batch > 1 && size == (uint64_t)t->bytes * batch)) {
		in->per_element = size != t->bytes;
	} else {
		rc = raw_size_error(arg, file, size, t, batch);
	}
	data_bytes = in->per_element ? (uint64_t)t->bytes * batch : t->bytes;
	if (!rc && (fseek(f, (long)off, SEEK_SET) ||
		    fread(in->data, 1, data_bytes, f) != data_bytes))
		rc = nr_fail(NR_EXIT_RUNTIME, "--input %s: reading %s failed: %s", arg, file,
			     ferror(f) ? strerror(errno) : "file shrank while read");
	fclose(f);
	return rc;
}

int nr_read_tensor_file(const char *arg, const char *file, const npu_tensor_info *t, void *data)
{
	struct nr_input in = { .data = data };

	return read_input(arg, file, t, 1, &in);
}

/* A name that promises a picture (the content decides; this only catches a mix-up). */
static int named_like_picture(const char *file)
{
	static const char *const ext[] = { ".png", ".jpg", ".jpeg" };
	size_t len = strlen(file);

	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
		if (len > strlen(ext[i]) && !strcasecmp(file + len - strlen(ext[i]), ext[i]))
			return 1;
	return 0;
}

/* ---- matching arguments to inputs ---- */

/*
 * Which input does "NAME=FILE" name?  Tensor names and paths may both
 * hold '=', so the model's names are tried as prefixes (the longest
 * wins) rather than cutting at the first '='.  A bare FILE is fine for a
 * model with one input.
 */
int nr_match_input(const char *arg, const npu_tensor_info *infos, size_t n, size_t *index,
		   const char **file)
{
	size_t best_len = 0;
	int found = 0;

	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(infos[i].name);

		if (!strncmp(arg, infos[i].name, len) && arg[len] == '=' &&
		    (!found || len > best_len)) {
			*index = i;
			*file = arg + len + 1;
			best_len = len;
			found = 1;
		}
	}
	if (found)
		return 0;
	if (n == 1 && !strchr(arg, '=')) {
		*index = 0;
		*file = arg;
		return 0;
	}
	return -1;
}

static void list_names(const npu_tensor_info *infos, size_t n, char *buf, size_t cap)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && len < cap; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s'%s'", i ? ", " : "",
					infos[i].name);
}

/* An argument that names no input of the model. */
static int no_such_input(const char *arg, const npu_tensor_info *infos, size_t n)
{
	const char *eq = strchr(arg, '=');
	char names[512];

	list_names(infos, n, names, sizeof(names));
	if (eq)
		return nr_fail(NR_EXIT_USAGE, "--input %s: the model has no input named '%.*s'; "
			       "its inputs are %s", arg, (int)(eq - arg), arg, names);
	return nr_fail(NR_EXIT_USAGE, "--input %s: give NAME=FILE; the model's inputs are %s",
		       arg, names);
}

static int assign_files(const struct nr_options *o, struct nr_input *in, size_t n)
{
	npu_tensor_info infos[64], *all = n <= 64 ? infos : malloc(n * sizeof(*all));
	int rc = 0;

	if (!all)
		return nr_fail(NR_EXIT_RUNTIME, "out of memory");
	for (size_t i = 0; i < n; i++)
		all[i] = in[i].info;
	for (unsigned a = 0; a < o->n_inputs && !rc; a++) {
		const char *arg = o->inputs[a], *file = NULL;
		size_t idx = 0;

		if (nr_match_input(arg, all, n, &idx, &file))
			rc = no_such_input(arg, all, n);
		else if (!*file)
			rc = nr_fail(NR_EXIT_USAGE, "--input %s: no file name after '='", arg);
		else if (in[idx].file)
			rc = nr_fail(NR_EXIT_USAGE, "--input %s: input '%s' is already given (%s)",
				     arg, in[idx].info.name, in[idx].file);
		else
			in[idx].file = file;
	}
	if (all != infos)
		free(all);
	return rc;
}

/* ---- public ---- */

int nr_inputs_prepare(const npu_model *model, unsigned batch, const struct nr_options *o,
		      struct nr_input **out, size_t *n_out)
{
	size_t n = npu_model_input_count(model), pictures = 0;
	struct nr_input *in = calloc(n ? n : 1, sizeof(*in));
	int rc = 0;

	*out = in;
	*n_out = 0;
	if (!in)
		return nr_fail(NR_EXIT_RUNTIME, "out of memory");
	*n_out = n;
	for (size_t i = 0; i < n; i++)
		if (npu_model_input_info(model, i, &in[i].info) != NPU_OK)
			return nr_fail(NR_EXIT_RUNTIME, "%s", npu_last_error());
	rc = assign_files(o, in, n);
	for (size_t i = 0; i < n && !rc; i++) {
		struct nr_input *x = &in[i];
		uint64_t elems = nr_shape_elems(x->info.dims, x->info.rank);

		x->data = malloc(x->info.bytes * batch + 1);
		if (!x->data)
			return nr_fail(NR_EXIT_RUNTIME, "out of memory for input '%s' (%zu bytes)",
				       x->info.name, x->info.bytes * batch);
		if (x->file) {
			char arg[1024];

			snprintf(arg, sizeof(arg), "%s=%s", x->info.name, x->file);
			if (nr_image_sniff(x->file) != NR_IMAGE_NONE)
				rc = nr_image_input(o, arg, x->file, &x->info, x->data, &x->image);
			else if (named_like_picture(x->file) && !access(x->file, R_OK))
				rc = nr_fail(NR_EXIT_RUNTIME, "--input %s: %s is named like a picture "
					     "but holds no PNG or JPEG data; give a PNG or JPEG file "
					     "(or raw or .npy data under another name)", arg, x->file);
			else
				rc = read_input(arg, x->file, &x->info, batch, x);
		} else if (elems * npu_dtype_size(x->info.dtype) == x->info.bytes) {
			generate(x->info.dtype, elems, i, x->data);
		} else {
			memset(x->data, 0, x->info.bytes);
		}
		pictures += x->image.rgb != NULL;
		/* One tensor for the whole batch: every element gets a copy. */
		if (!rc && !x->per_element)
			for (unsigned b = 1; b < batch; b++)
				memcpy((char *)x->data + (size_t)b * x->info.bytes, x->data,
				       x->info.bytes);
	}
	/* The picture options would silently do nothing: say so. */
	if (!rc && !pictures && (o->n_image_mean || o->n_image_std || o->image_layout))
		rc = nr_fail(NR_EXIT_USAGE, "--image-mean, --image-std and --image-layout apply to "
			     "pictures, and no --input is a PNG or JPEG file");
	return rc;
}

/* Batch element @b of input @in into buffer @index of the context. */
static int copy_one(npu_context *ctx, const struct nr_input *in, size_t index, unsigned b)
{
	void *buf;
	size_t bytes;

	if (npu_context_input_buffer(ctx, index, &buf, &bytes) != NPU_OK)
		return nr_fail(NR_EXIT_RUNTIME, "input buffer of '%s': %s", in->info.name,
			       npu_last_error());
	/* The buffer holds the type the NPU computes in (int64 as int32 ...). */
	if (bytes != in->info.bytes / npu_dtype_size(in->info.dtype) *
		     npu_dtype_size(npu_dtype_device(in->info.dtype)))
		return nr_fail(NR_EXIT_RUNTIME, "input buffer of '%s' holds %zu bytes, the model "
			       "says %zu; please report this libnpu bug", in->info.name, bytes,
			       in->info.bytes);
	/* The zero-copy buffer skips npu_run()'s conversion and checks: the same here. */
	if (npu_tensor_to_device(&in->info, (const char *)in->data + (size_t)b * in->info.bytes,
				 buf) != NPU_OK)
		return nr_fail(NR_EXIT_RUNTIME, "%s", npu_last_error());
	return 0;
}

int nr_inputs_copy(npu_context *ctx, const struct nr_input *in, size_t n, unsigned batch)
{
	int rc = 0;

	/* With a batch, buffer b * n + i is input i of batch element b. */
	for (unsigned b = 0; b < batch && !rc; b++)
		for (size_t i = 0; i < n && !rc; i++)
			rc = copy_one(ctx, &in[i], (size_t)b * n + i, b);
	return rc;
}

void nr_inputs_free(struct nr_input *in, size_t n)
{
	if (!in)
		return;
	for (size_t i = 0; i < n; i++) {
		free(in[i].data);
		nr_image_free(&in[i].image);
	}
	free(in);
}
