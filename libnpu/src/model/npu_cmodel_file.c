// SPDX-License-Identifier: MIT
/*
 * The native compiled-model file, version 3 (2 without control steps or
 * tensors of run-time size, 1 without host steps either).
 * Little endian throughout.
 *
 *   header (32 bytes): magic "NPUM", version u16, minor u16,
 *                      header size u32, flags u32, file size u64,
 *                      CRC-32 of everything after the header u32, 0 u32
 *   records:           tag u32, payload length u32, payload
 *     META     nclusters u32, tpbs u32, precision u32, producer char[64]
 *     SEG      kind u32, 0 u32, size u64, contents (CONST/PROGRAM only)
 *     RELOC    seg u32, target u32, offset u64, addend u64
 *     INPUT,   seg u32, dtype u32, offset u64, rank u32, zero_point i32,
 *     OUTPUT   scale f32, dyn u32, bytes u64, dims i64[8], name (rest)
 *     STEP     seg u32, size u32, offset u64
 *     FALLBACK the CPU-fallback operator list (rest)
 *     BATCH    batch u32, 0 u32, io_stride u64 (only when batch > 1)
 *     LABEL    step index u32, what the step runs (rest; after its STEP)
 *     HOST     (version 2) the host step at step index u32 (its STEP has
 *              seg 0xffffffff): opset u32, ninputs u32, noutputs u32,
 *              nattrs u32, op length u32, node length u32, op, node;
 *              per tensor seg u32, dtype u32, offset u64, rank u32, dyn u32,
 *              dims i64[8]; per attribute type u32, name length u32, name,
 *              then INT i64 | FLOAT f32 | STRING length u32, bytes |
 *              INTS n u32, i64[n] | FLOATS n u32, f32[n]
 *     CTL      (version 3) the control step at step index u32 (after its
 *              HOST record, which gives its tensors): kind u32
 *              (enum npu_ctl_kind), target step u32, 0 u32
 *
 * The reader trusts nothing: every length is checked against what is left,
 * and the result goes through npu_cmodel_validate().
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "model/npu_cmodel.h"

enum {
	TAG_META = 1,
	TAG_SEG = 2,
	TAG_RELOC = 3,
	TAG_INPUT = 4,
	TAG_OUTPUT = 5,
	TAG_STEP = 6,
	TAG_FALLBACK = 7,
	TAG_BATCH = 8,
	TAG_LABEL = 9,
	TAG_HOST = 10,
	TAG_CTL = 11,
};

/* npu_ir_attr_type's values, which host attributes use. */
enum { HATTR_INT = 1, HATTR_FLOAT, HATTR_STRING, HATTR_INTS, HATTR_FLOATS };
#define HOST_TENSOR	56
#define MAX_HOST_STR	4096

#define MAX_LABEL	1024

#define HEADER_SIZE	32
#define IO_FIXED	(4 * 4 + 8 + 4 + 4 + 8 + 8 * NPU_MAX_RANK)
#define MAX_RECORDS	(1u << 20)

static uint32_t crc32_table[256];

static void crc32_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc32_table[i] = c;
	}
}

static uint32_t crc32(const uint8_t *p, size_t n)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	uint32_t c = 0xffffffffu;

	pthread_once(&once, crc32_init);
	while (n--)
		c = crc32_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

/* ---- writing ---- */

static void le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

struct wbuf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

static void put(struct wbuf *w, const void *src, size_t n)
{
	if (w->oom)
		return;
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap : 4096;
		uint8_t *p;

		while (cap < w->len + n)
			cap *= 2;
		p = realloc(w->p, cap);
		if (!p) {
			w->oom = true;
			return;
		}
		w->p = p;
		w->cap = cap;
	}
	memcpy(w->p + w->len, src, n);
	w->len += n;
}

static void put32(struct wbuf *w, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
			 (uint8_t)(v >> 24) };

	put(w, b, 4);
}

static void put64(struct wbuf *w, uint64_t v)
{
	put32(w, (uint32_t)v);
	put32(w, (uint32_t)(v >> 32));
}

static void record(struct wbuf *w, uint32_t tag, uint64_t len)
{
	put32(w, tag);
	put32(w, (uint32_t)len);
}

static void put_io(struct wbuf *w, uint32_t tag, const struct npu_io *io)
{
	size_t nlen = strlen(io->name);
	uint32_t scale;

	memcpy(&scale, &io->info.scale, 4);
	record(w, tag, IO_FIXED + nlen);
	put32(w, io->seg);
	put32(w, (uint32_t)io->info.dtype);
	put64(w, io->offset);
	put32(w, (uint32_t)io->info.rank);
	put32(w, (uint32_t)io->info.zero_point);
	put32(w, scale);
	put32(w, io->dyn);
	put64(w, io->info.bytes);
	for (int d = 0; d < NPU_MAX_RANK; d++)
		put64(w, (uint64_t)io->info.dims[d]);
	put(w, io->name, nlen);
}

static void put_str(struct wbuf *w, const char *str)
{
	size_t n = str ? strlen(str) : 0;

	put32(w, (uint32_t)n);
	put(w, str, n);
}

/* The HOST record of step @i into @w (its payload built first for the length). */
static void put_host(struct wbuf *w, uint32_t i, const struct npu_host_step *h)
{
	struct wbuf b = { 0 };

	put32(&b, i);
	put32(&b, (uint32_t)h->opset);
	put32(&b, h->ninputs);
	put32(&b, h->noutputs);
	put32(&b, h->nattrs);
	put32(&b, (uint32_t)strlen(h->op));
	put32(&b, (uint32_t)strlen(h->node));
	put(&b, h->op, strlen(h->op));
	put(&b, h->node, strlen(h->node));
	for (uint32_t k = 0; k < h->ninputs + h->noutputs; k++) {
		const struct npu_host_tensor *t = &h->tensors[k];

		put32(&b, t->seg);
		put32(&b, t->dtype);
		put64(&b, t->offset);
		put32(&b, (uint32_t)t->rank);
		put32(&b, t->dyn);
		for (int d = 0; d < NPU_MAX_RANK; d++)
			put64(&b, (uint64_t)t->dims[d]);
	}
	for (uint32_t k = 0; k < h->nattrs; k++) {
		const struct npu_host_attr *a = &h->attrs[k];
		uint32_t f;

		put32(&b, a->type);
		put_str(&b, a->name);
		switch (a->type) {
		case HATTR_INT:
			put64(&b, (uint64_t)a->i);
			break;
		case HATTR_FLOAT:
			memcpy(&f, &a->f, 4);
			put32(&b, f);
			break;
		case HATTR_STRING:
			put_str(&b, a->s);
			break;
		case HATTR_INTS:
			put32(&b, a->n);
			for (uint32_t j = 0; j < a->n; j++)
				put64(&b, (uint64_t)a->ints[j]);
			break;
		default:
			put32(&b, a->n);
			for (uint32_t j = 0; j < a->n; j++) {
				memcpy(&f, &a->floats[j], 4);
				put32(&b, f);
			}
			break;
		}
	}
	if (b.oom)
		w->oom = true;
	record(w, TAG_HOST, b.len);
	put(w, b.p, b.len);
	free(b.p);
	if (h->ctl) {
		record(w, TAG_CTL, 16);
		put32(w, i);
		put32(w, h->ctl);
		put32(w, h->target);
		put32(w, 0);
	}
}

/* The oldest file version that holds @m: 3 with a control step, 2 with a host step, else 1. */
static uint32_t file_version(const struct npu_cmodel *m)
{
	uint32_t v = 1;

	if (m->ndyn)
		return 3;
	for (uint32_t i = 0; i < m->nsteps; i++)
		if (npu_step_is_control(&m->steps[i]))
			return 3;
		else if (npu_step_on_host(&m->steps[i]))
			v = 2;
	return v;
}

npu_status npu_cmodel_write(const struct npu_cmodel *m, uint8_t **buf,
			    size_t *len)
{
	struct wbuf w = { 0 };
	uint8_t zero[HEADER_SIZE] = { 0 };
	npu_status st = npu_cmodel_validate(m);

	*buf = NULL;
	*len = 0;
	if (st)
		return st;
	put(&w, zero, HEADER_SIZE);
	record(&w, TAG_META, 12 + sizeof(m->producer));
	put32(&w, m->nclusters);
	put32(&w, m->tpbs);
	put32(&w, m->precision);
	put(&w, m->producer, sizeof(m->producer));
	for (uint32_t i = 0; i < m->nsegs; i++) {
		const struct npu_seg *s = &m->segs[i];
		bool has_data = s->kind == NPU_SEG_CONST || s->kind == NPU_SEG_PROGRAM;

		if (has_data && s->size > UINT32_MAX - 16) {
			free(w.p);
			return npu_fail(NPU_ERR_INVALID_ARG,
					"segment %u is too large for the file format (%llu bytes)",
					i, (unsigned long long)s->size);
		}
		record(&w, TAG_SEG, 16 + (has_data ? s->size : 0));
		put32(&w, s->kind);
		put32(&w, 0);
		put64(&w, s->size);
		if (has_data)
			put(&w, s->data, s->size);
	}
	for (uint32_t i = 0; i < m->nrelocs; i++) {
		record(&w, TAG_RELOC, 24);
		put32(&w, m->relocs[i].seg);
		put32(&w, m->relocs[i].target);
		put64(&w, m->relocs[i].offset);
		put64(&w, m->relocs[i].addend);
	}
	for (uint32_t i = 0; i < m->ninputs; i++)
		put_io(&w, TAG_INPUT, &m->inputs[i]);
	for (uint32_t i = 0; i < m->noutputs; i++)
		put_io(&w, TAG_OUTPUT, &m->outputs[i]);
	for (uint32_t i = 0; i < m->nsteps; i++) {
		record(&w, TAG_STEP, 16);
		put32(&w, m->steps[i].seg);
		put32(&w, m->steps[i].size);
		put64(&w, m->steps[i].offset);
	}
	for (uint32_t i = 0; i < m->nsteps; i++) {
		size_t n = m->steps[i].label ? strlen(m->steps[i].label) : 0;

		if (!n)
			continue;
		n = n > MAX_LABEL ? MAX_LABEL : n;
		record(&w, TAG_LABEL, 4 + n);
		put32(&w, i);
		put(&w, m->steps[i].label, n);
	}
	for (uint32_t i = 0; i < m->nsteps; i++)
		if (npu_step_on_host(&m->steps[i]))
			put_host(&w, i, m->steps[i].host);
	if (npu_cmodel_batch(m) > 1) {
		record(&w, TAG_BATCH, 16);
		put32(&w, m->batch);
		put32(&w, 0);
		put64(&w, m->io_stride);
	}
	if (m->fallback_ops && *m->fallback_ops) {
		record(&w, TAG_FALLBACK, strlen(m->fallback_ops));
		put(&w, m->fallback_ops, strlen(m->fallback_ops));
	}
	if (w.oom) {
		free(w.p);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory writing the model");
	}
	/* Header last: it covers the size and checksum of the rest. */
	le32(w.p + 0, NPU_CMODEL_MAGIC);
	/* version u16, minor u16 = 0: 1 unless a host step needs 2, a control step or run-time shapes 3 */
	le32(w.p + 4, file_version(m));
	le32(w.p + 8, HEADER_SIZE);
	le32(w.p + 12, 0);
	le32(w.p + 16, (uint32_t)w.len);
	le32(w.p + 20, (uint32_t)((uint64_t)w.len >> 32));
	le32(w.p + 24, crc32(w.p + HEADER_SIZE, w.len - HEADER_SIZE));
	le32(w.p + 28, 0);
	*buf = w.p;
	*len = w.len;
	return NPU_OK;
}

/* ---- reading ---- */

struct rbuf {
	const uint8_t *p;
	size_t len, pos;
};

static bool take(struct rbuf *r, void *dst, size_t n)
{
	if (n > r->len - r->pos)
		return false;
	memcpy(dst, r->p + r->pos, n);
	r->pos += n;
	return true;
}

static bool get32(struct rbuf *r, uint32_t *v)
{
	uint8_t b[4];

	if (!take(r, b, 4))
		return false;
	*v = b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
	return true;
}

static bool get64(struct rbuf *r, uint64_t *v)
{
	uint32_t lo, hi;

	if (!get32(r, &lo) || !get32(r, &hi))
		return false;
	*v = lo | (uint64_t)hi << 32;
	return true;
}

bool npu_cmodel_is_native(const void *buf, size_t len)
{
	const uint8_t *p = buf;

	return len >= 4 && (p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24) ==
	       NPU_CMODEL_MAGIC;
}

/* Append one element to a growing array of @size-byte elements. */
static void *grow(void **arr, uint32_t *n, size_t size)
{
	void *p;

	if (*n >= MAX_RECORDS)
		return NULL;
	p = realloc(*arr, (*n + 1) * size);
	if (!p)
		return NULL;
	*arr = p;
	memset((uint8_t *)p + *n * size, 0, size);
	return (uint8_t *)p + (*n)++ * size;
}

static npu_status read_io(struct rbuf *r, uint32_t len, struct npu_io *io)
{
	uint32_t dtype, rank, zp, scale, nlen;
	uint64_t bytes;

	if (len < IO_FIXED || len - IO_FIXED > 4096)
		return npu_fail(NPU_ERR_FORMAT, "corrupt model file: bad tensor record length %u", len);
	nlen = len - IO_FIXED;
	if (!get32(r, &io->seg) || !get32(r, &dtype) || !get64(r, &io->offset) ||
	    !get32(r, &rank) || !get32(r, &zp) || !get32(r, &scale) ||
	    !get32(r, &io->dyn) || !get64(r, &bytes))
		return npu_fail(NPU_ERR_FORMAT, "truncated model file");
	for (int d = 0; d < NPU_MAX_RANK; d++) {
		uint64_t v;

		if (!get64(r, &v))
			return npu_fail(NPU_ERR_FORMAT, "truncated model file");
		io->info.dims[d] = (int64_t)v;
	}
	io->name = calloc(1, nlen + 1);
	if (!io->name)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	if (!take(r, io->name, nlen))
		return npu_fail(NPU_ERR_FORMAT, "truncated model file");
	if (strlen(io->name) != nlen)
		return npu_fail(NPU_ERR_FORMAT, "corrupt model file: a tensor name contains NUL");
	io->info.name = io->name;
	io->info.dtype = (npu_dtype)dtype;
	io->info.rank = (int)rank;
	io->info.zero_point = (int32_t)zp;
	memcpy(&io->info.scale, &scale, 4);
	io->info.bytes = (size_t)bytes;
	return NPU_OK;
}

/* A length-prefixed string of at most MAX_HOST_STR bytes, NUL-terminated, into *@out. */
static bool get_str(struct rbuf *r, char **out)
{
	uint32_t n;

	if (!get32(r, &n) || n > MAX_HOST_STR || n > r->len - r->pos)
		return false;
	*out = calloc(1, (size_t)n + 1);
	return *out && take(r, *out, n) && strlen(*out) == n;
}

static bool get_host_attr(struct rbuf *r, struct npu_host_attr *a)
{
	uint32_t f = 0;

	if (!get32(r, &a->type) || !get_str(r, &a->name))
		return false;
	switch (a->type) {
	case HATTR_INT:
		return get64(r, (uint64_t *)&a->i);
	case HATTR_FLOAT:
		if (!get32(r, &f))
			return false;
		memcpy(&a->f, &f, 4);
		return true;
	case HATTR_STRING:
		return get_str(r, &a->s);
	case HATTR_INTS:
	case HATTR_FLOATS:
		if (!get32(r, &a->n) || a->n > 65536 ||
		    (uint64_t)a->n * (a->type == HATTR_INTS ? 8 : 4) > r->len - r->pos)
			return false;
		if (a->type == HATTR_INTS) {
			a->ints = calloc(a->n ? a->n : 1, 8);
			for (uint32_t j = 0; a->ints && j < a->n; j++)
				get64(r, (uint64_t *)&a->ints[j]);
			return a->ints != NULL;
		}
		a->floats = calloc(a->n ? a->n : 1, 4);
		for (uint32_t j = 0; a->floats && j < a->n; j++) {
			get32(r, &f);
			memcpy(&a->floats[j], &f, 4);
		}
		return a->floats != NULL;
	default:
		return false;
	}
}

static npu_status read_host(struct rbuf *r, struct npu_cmodel *m)
{
	uint32_t idx, opset, oplen, nodelen;
	struct npu_host_step *h;
	uint32_t nt;

	if (!get32(r, &idx) || idx >= m->nsteps || !npu_step_on_host(&m->steps[idx]) ||
	    m->steps[idx].host)
		return npu_fail(NPU_ERR_FORMAT, "corrupt model file: bad host step record");
	h = calloc(1, sizeof(*h));
	if (!h)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	m->steps[idx].host = h;
	if (!get32(r, &opset) || !get32(r, &h->ninputs) || !get32(r, &h->noutputs) ||
	    !get32(r, &h->nattrs) || !get32(r, &oplen) || !get32(r, &nodelen) ||
	    h->ninputs > 64 || h->noutputs > 64 || h->nattrs > 256 || oplen > MAX_HOST_STR ||
	    nodelen > MAX_HOST_STR || (uint64_t)oplen + nodelen > r->len - r->pos)
		return npu_fail(NPU_ERR_FORMAT, "corrupt model file: bad host step record");
	h->opset = (int)opset;
	h->op = calloc(1, (size_t)oplen + 1);
	h->node = calloc(1, (size_t)nodelen + 1);
	nt = h->ninputs + h->noutputs;
	h->tensors = calloc(nt ? nt : 1, sizeof(*h->tensors));
	h->attrs = calloc(h->nattrs ? h->nattrs : 1, sizeof(*h->attrs));
	if (!h->op || !h->node || !h->tensors || !h->attrs)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	take(r, h->op, oplen);
	take(r, h->node, nodelen);
	if ((uint64_t)nt * HOST_TENSOR > r->len - r->pos)
		return npu_fail(NPU_ERR_FORMAT, "corrupt model file: bad host step record");
	for (uint32_t k = 0; k < nt; k++) {
		struct npu_host_tensor *t = &h->tensors[k];
		uint32_t rank = 0;

		get32(r, &t->seg);
		get32(r, &t->dtype);
		get64(r, &t->offset);
		get32(r, &rank);
		get32(r, &t->dyn);
		t->rank = (int)rank;
		for (int d = 0; d < NPU_MAX_RANK; d++)
			get64(r, (uint64_t *)&t->dims[d]);
	}
	for (uint32_t k = 0; k < h->nattrs; k++)
		if (!get_host_attr(r, &h->attrs[k]))
			return npu_fail(NPU_ERR_FORMAT,
					"corrupt model file: bad attribute %u of host step %u", k, idx);
	return NPU_OK;
}

static npu_status read_records(struct rbuf *r, struct npu_cmodel *m)
{
	bool have_meta = false;

	while (r->pos < r->len) {
		uint32_t tag, len;
		size_t start;
		npu_status st = NPU_OK;

		if (!get32(r, &tag) || !get32(r, &len) || len > r->len - r->pos)
			return npu_fail(NPU_ERR_FORMAT, "truncated model file: record at byte %zu",
					r->pos);
		start = r->pos;
		switch (tag) {
		case TAG_META:
			if (len != 12 + sizeof(m->producer) || !get32(r, &m->nclusters) ||
			    !get32(r, &m->tpbs) ||
			    !get32(r, &m->precision) ||
			    !take(r, m->producer, sizeof(m->producer)))
				return npu_fail(NPU_ERR_FORMAT, "corrupt model file: bad header record");
			m->producer[sizeof(m->producer) - 1] = '\0';
			have_meta = true;
			break;
		case TAG_SEG: {
			struct npu_seg *s = grow((void **)&m->segs, &m->nsegs, sizeof(*s));
			uint32_t pad;

			if (!s)
				return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
			if (len < 16 || !get32(r, &s->kind) || !get32(r, &pad) ||
			    !get64(r, &s->size))
				return npu_fail(NPU_ERR_FORMAT, "corrupt model file: bad segment record");
			if (s->kind == NPU_SEG_CONST || s->kind == NPU_SEG_PROGRAM) {
				if (s->size != len - 16)
					return npu_fail(NPU_ERR_FORMAT,
							"corrupt model file: segment %u says %llu bytes, holds %u",
							m->nsegs - 1, (unsigned long long)s->size, len - 16);
				s->data = malloc(s->size ? s->size : 1);
				if (!s->data)
					return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
				take(r, s->data, s->size);
			} else if (len != 16) {
				return npu_fail(NPU_ERR_FORMAT, "corrupt model file: bad segment record");
			}
			break;
		}
		case TAG_RELOC: {
			struct npu_reloc *x = grow((void **)&m->relocs, &m->nrelocs, sizeof(*x));

			if (!x)
				return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
			if (len != 24 || !get32(r, &x->seg) || !get32(r, &x->target) ||
			    !get64(r, &x->offset) || !get64(r, &x->addend))
				return npu_fail(NPU_ERR_FORMAT, "corrupt model file: bad relocation record");
			break;
		}
		case TAG_INPUT:
		case TAG_OUTPUT: {
			struct npu_io *io = tag == TAG_INPUT ?
				grow((void **)&m->inputs, &m->ninputs, sizeof(*io)) :
				grow((void **)&m->outputs, &m->noutputs, sizeof(*io));

			if (!io)
				return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
			st = read_io(r, len, io);
			break;
		}
		case TAG_STEP: {
			struct npu_step *x = grow((void **)&m->steps, &m->nsteps, sizeof(*x));

			if (!x)
				return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
			if (len != 16 || !get32(r, &x->seg) || !get32(r, &x->size) ||
			    !get64(r, &x->offset))
				return npu_fail(NPU_ERR_FORMAT, "corrupt model file: bad step record");
			break;
		}
		case TAG_LABEL: {
			uint32_t idx;

			if (len < 4 || len > 4 + MAX_LABEL || !get32(r, &idx) || idx >= m->nsteps ||
			    m->steps[idx].label)
				return npu_fail(NPU_ERR_FORMAT, "corrupt model file: bad step label record");
			m->steps[idx].label = calloc(1, len - 4 + 1);
			if (!m->steps[idx].label)
				return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
			take(r, m->steps[idx].label, len - 4);
			break;
		}
		case TAG_BATCH: {
			uint32_t pad;

			if (len != 16 || !get32(r, &m->batch) || !get32(r, &pad) ||
			    !get64(r, &m->io_stride))
				return npu_fail(NPU_ERR_FORMAT, "corrupt model file: bad batch record");
			break;
		}
		case TAG_HOST:
			st = read_host(r, m);
			break;
		case TAG_CTL: {
			uint32_t idx, pad;
			struct npu_host_step *h;

			if (len != 16 || !get32(r, &idx) || idx >= m->nsteps ||
			    !(h = m->steps[idx].host) || h->ctl)
				return npu_fail(NPU_ERR_FORMAT, "corrupt model file: bad control step record");
			get32(r, &h->ctl);
			get32(r, &h->target);
			get32(r, &pad);
			/* A kind of 0 would make it a host step of an unknown operator. */
			if (!h->ctl)
				return npu_fail(NPU_ERR_FORMAT, "corrupt model file: bad control step record");
			break;
		}
		case TAG_FALLBACK:
			free(m->fallback_ops);
			m->fallback_ops = calloc(1, (size_t)len + 1);
			if (!m->fallback_ops)
				return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
			take(r, m->fallback_ops, len);
			break;
		default:
			/* Unknown records of a newer minor version are skipped. */
			r->pos += len;
			break;
		}
		if (st)
			return st;
		if (r->pos != start + len)
			return npu_fail(NPU_ERR_FORMAT, "corrupt model file: record %u has the wrong length",
					tag);
	}
	if (!have_meta)
		return npu_fail(NPU_ERR_FORMAT, "corrupt model file: no header record");
	return NPU_OK;
}

npu_status npu_cmodel_read(const uint8_t *buf, size_t len,
			   struct npu_cmodel **out)
{
	struct rbuf r = { buf, len, 0 };
	uint32_t magic, version, hsize, flags, crc, pad;
	struct npu_cmodel *m;
	uint64_t total;
	npu_status st;

	*out = NULL;
	if (!get32(&r, &magic) || magic != NPU_CMODEL_MAGIC)
		return npu_fail(NPU_ERR_FORMAT, "not a compiled NPU model (bad magic)");
	if (!get32(&r, &version) || !get32(&r, &hsize) || !get32(&r, &flags) ||
	    !get64(&r, &total) || !get32(&r, &crc) || !get32(&r, &pad))
		return npu_fail(NPU_ERR_FORMAT, "truncated model file: %zu bytes, the header alone is %d",
				len, HEADER_SIZE);
	if ((version & 0xffff) < NPU_CMODEL_VERSION_MIN || (version & 0xffff) > NPU_CMODEL_VERSION)
		return npu_fail(NPU_ERR_VERSION,
				"compiled model format version %u.%u; this libnpu reads versions %d to %d: recompile the model from its source",
				version & 0xffff, version >> 16, NPU_CMODEL_VERSION_MIN,
				NPU_CMODEL_VERSION);
	if (hsize != HEADER_SIZE || flags || pad)
		return npu_fail(NPU_ERR_FORMAT, "corrupt model file: bad header");
	if (total != len)
		return npu_fail(NPU_ERR_FORMAT,
				"truncated or padded model file: %zu bytes, the header says %llu",
				len, (unsigned long long)total);
	if (crc32(buf + HEADER_SIZE, len - HEADER_SIZE) != crc)
		return npu_fail(NPU_ERR_FORMAT, "corrupt model file: checksum mismatch");
	m = calloc(1, sizeof(*m));
	if (!m)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	st = read_records(&r, m);
	if (!st)
		m->ndyn = npu_cmodel_dyn_shapes(m);
	if (!st && m->ndyn > 4096)
		st = npu_fail(NPU_ERR_FORMAT, "corrupt model file: %u run-time shapes", m->ndyn);
	if (!st && m->ndyn && (version & 0xffff) < 3)
		st = npu_fail(NPU_ERR_FORMAT,
			      "corrupt model file: version %u names run-time shapes (version 3 does)",
			      version & 0xffff);
	if (!st)
		st = npu_cmodel_validate(m);
	if (st) {
		npu_cmodel_free(m);
		return st;
	}
	*out = m;
	return NPU_OK;
}
