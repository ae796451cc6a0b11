// SPDX-License-Identifier: MIT
/*
 * ONNX loader: a serialized ModelProto -> the graph IR.
 *
 * Before protobuf-c decodes anything, a wire-format walk over the bytes
 * (driven by protobuf-c's own descriptors of onnx.proto, and accepting
 * exactly what protobuf-c accepts) finds the first byte that is wrong, so
 * a truncated or foreign file gets "... at byte N" instead of a bare
 * "cannot decode".  The walk also bounds the nesting depth, which
 * protobuf-c's recursive decoder does not.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

#include "onnx/npu_onnx.h"
#include "onnx/npu_onnx_ext.h"
#include "onnx/onnx.pb-c.h"
#include "onnx/npu_onnx_if.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the ONNX loader copies little-endian tensor data as is: little-endian hosts only"
#endif

/* More than these is a hostile file, not a model (and would make the
 * quadratic duplicate checks slow). */
#define MAX_MESSAGES	(1u << 24)
#define MAX_ATTRS	1024
#define MAX_IMPORTS	64

/* ---- wire-format walk ---- */

struct wire {
	const uint8_t *buf;
	size_t msgs;
};

static npu_status wire_err(size_t at, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static npu_status wire_err(size_t at, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return npu_fail(NPU_ERR_FORMAT, "not an ONNX model: %s at byte %zu", msg, at);
}

/* Bytes used by the varint at @p (at most @max of @avail), 0 if none. */
static size_t varint(const uint8_t *p, size_t avail, size_t max, uint64_t *v)
{
	uint64_t r = 0;

	for (size_t i = 0; i < avail && i < max; i++) {
		r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*v = r;
			return i + 1;
		}
	}
	return 0;
}

static bool is_varint_type(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_ENUM:
		return true;
	default:
		return false;
	}
}

static int fixed_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
		return 4;
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	default:
		return 0;
	}
}

static const char *const wire_names[8] = {
	"varint", "64-bit", "length-delimited", "group start", "group end", "32-bit",
	"invalid (6)", "invalid (7)",
};

/* Check the packed repeated field @f in [@off, @end). */
static npu_status scan_packed(const struct wire *w, const ProtobufCMessageDescriptor *d,
			      const ProtobufCFieldDescriptor *f, size_t off, size_t end)
{
	int fs = fixed_size(f->type);
	uint64_t v;

	if (fs) {
		if ((end - off) % (size_t)fs)
			return wire_err(off, "packed field '%s' of %s is %zu bytes, not a multiple of %d",
					f->name, d->name, end - off, fs);
		return NPU_OK;
	}
	while (off < end) {
		size_t n;

		if (f->type == PROTOBUF_C_TYPE_BOOL) {
			if (w->buf[off] > 1)
				return wire_err(off, "packed bool field '%s' of %s holds %u",
						f->name, d->name, w->buf[off]);
			off++;
			continue;
		}
		n = varint(w->buf + off, end - off, 10, &v);
		if (!n)
			return wire_err(off, "bad varint in packed field '%s' of %s", f->name, d->name);
		off += n;
	}
	return NPU_OK;
}

/* Walk the message of type @d in [@off, @end). */
static npu_status scan_msg(struct wire *w, const ProtobufCMessageDescriptor *d, size_t off,
			   size_t end, int depth)
{
	while (off < end) {
		const ProtobufCFieldDescriptor *f;
		size_t at = off, n, pstart, pend;
		uint64_t tag, v;
		unsigned wt;
		npu_status st;

		n = varint(w->buf + off, end - off, 5, &tag);
		if (!n)
			return end - off < 5 ? wire_err(at, "the data ends inside a field tag")
					     : wire_err(at, "a field tag longer than 5 bytes");
		if (tag >> 3 == 0)
			return wire_err(at, "field number 0 is not valid");
		off += n;
		wt = (unsigned)(tag & 7);
		f = protobuf_c_message_descriptor_get_field(d, (uint32_t)(tag >> 3));
		pstart = off;
		switch (wt) {
		case 0:
			n = varint(w->buf + off, end - off, 10, &v);
			if (!n)
				return wire_err(off, "an unterminated varint");
			pend = off + n;
			break;
		case 1:
		case 5:
			if (end - off < (wt == 1 ? 8u : 4u))
				return wire_err(off, "the data ends inside a %s value",
						wire_names[wt]);
			pend = off + (wt == 1 ? 8 : 4);
			break;
		case 2:
			n = varint(w->buf + off, end - off, 5, &v);
			if (!n)
				return wire_err(off, "a bad length prefix");
			pstart = off + n;
			if (v > end - pstart)
				return wire_err(at, "%s%s%s needs %" PRIu64 " bytes but %zu remain",
						f ? "field '" : "a field", f ? f->name : "",
						f ? "'" : "", v, end - pstart);
			pend = pstart + (size_t)v;
			break;
		default:
			return wire_err(at, "wire type %s is not valid%s%s", wire_names[wt],
					f ? " for field " : "", f ? f->name : "");
		}
		off = pend;
		if (!f)
			continue;	/* unknown field: kept aside by protobuf-c */
		if (f->type == PROTOBUF_C_TYPE_MESSAGE || f->type == PROTOBUF_C_TYPE_STRING ||
		    f->type == PROTOBUF_C_TYPE_BYTES) {
			if (wt != 2)
				return wire_err(at, "field '%s' of %s has wire type %s, expected length-delimited",
						f->name, d->name, wire_names[wt]);
			if (f->type != PROTOBUF_C_TYPE_MESSAGE)
				continue;
			if (depth + 1 > NPU_ONNX_MAX_DEPTH)
				return wire_err(at, "messages nest more than %d deep", NPU_ONNX_MAX_DEPTH);
			if (++w->msgs > MAX_MESSAGES)
				return wire_err(at, "more than %u messages", MAX_MESSAGES);
			st = scan_msg(w, f->descriptor, pstart, pend, depth + 1);
			if (st)
				return st;
			continue;
		}
		if (wt == 2 && f->label == PROTOBUF_C_LABEL_REPEATED) {
			st = scan_packed(w, d, f, pstart, pend);
			if (st)
				return st;
			continue;
		}
		if (f->type == PROTOBUF_C_TYPE_BOOL)
			continue;	/* protobuf-c takes any wire type */
		if ((is_varint_type(f->type) && wt != 0) ||
		    (fixed_size(f->type) == 4 && wt != 5) || (fixed_size(f->type) == 8 && wt != 1))
			return wire_err(at, "field '%s' of %s has wire type %s", f->name, d->name,
					wire_names[wt]);
	}
	return NPU_OK;
}

/* ---- data types ---- */

static const char *const onnx_dtype_names[] = {
	"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64",
	"STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64",
	"COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
	"FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1",
};

const char *npu_onnx_dtype_name(int code)
{
	if (code < 0 || code >= (int)NPU_ARRAY_SIZE(onnx_dtype_names))
		return NULL;
	return onnx_dtype_names[code];
}

/* The npu_dtype for ONNX type @code of tensor @what ('x'). */
static npu_status map_dtype(int64_t code, const char *what, npu_dtype *out)
{
	const char *name = code >= 0 && code <= INT32_MAX ? npu_onnx_dtype_name((int)code) : NULL;

	switch (code) {
	case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
	case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8:
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT8:
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT32:
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
	case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL:
	case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16:
	case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16:
		*out = (npu_dtype)code;
		return NPU_OK;
	}
	if (!name || code == 0)
		return npu_fail(NPU_ERR_FORMAT, "%s has data type %" PRId64
				", which is not an ONNX data type", what, code);
	return npu_fail(NPU_ERR_UNSUPPORTED,
			"%s has data type %s, which libnpu does not support (it supports FLOAT, FLOAT16, BFLOAT16, INT8, UINT8, INT32, INT64 and BOOL)",
			what, name);
}

/* ---- tensors ---- */

static const char *str0(const char *s)
{
	return s ? s : "";
}

/*
 * Fill @t (dtype, shape, data) from TensorProto @tp; @what names it in
 * messages ("initializer 'w'").  raw_data is taken over from @tp (protobuf-c
 * allocates it with malloc), so weights are not copied twice.  External
 * data comes from @ext (NULL: refused): @t's data points into the side
 * file's mapping unless @copy (a tensor outside the graph's table).
 */
static npu_status load_tensor(npu_ir_tensor *t, Onnx__TensorProto *tp, const char *what,
			      struct npu_onnx_ext *ext, bool copy)
{
	bool external = tp->has_data_location &&
			tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	int64_t numel = 1;
	size_t es, bytes, count = 0;
	const char *field = NULL;
	char *data;
	npu_status st;

	if (tp->segment)
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s is segmented, which is not supported", what);
	if (!tp->has_data_type)
		return npu_fail(NPU_ERR_FORMAT, "%s has no data type", what);
	st = map_dtype(tp->data_type, what, &t->dtype);
	if (st)
		return st;
	if (tp->n_dims > NPU_MAX_RANK)
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s has rank %zu; libnpu supports up to %d",
				what, tp->n_dims, NPU_MAX_RANK);
	t->rank = (int)tp->n_dims;
	for (size_t i = 0; i < tp->n_dims; i++) {
		if (tp->dims[i] < 0 || tp->dims[i] > NPU_IR_DIM_MAX)
			return npu_fail(NPU_ERR_FORMAT, "%s has dimension %zu = %" PRId64,
					what, i, tp->dims[i]);
		t->dims[i] = tp->dims[i];
		if (tp->dims[i] && numel > NPU_IR_NUMEL_MAX / tp->dims[i])
			return npu_fail(NPU_ERR_FORMAT, "%s has too many elements", what);
		numel *= tp->dims[i];
	}
	es = npu_dtype_size(t->dtype);
	bytes = (size_t)numel * es;
	if (external) {
		void *ed;
		bool mapped;

		/* Bools are normalised to 0/1 below: they need a copy. */
		st = npu_onnx_ext_read(ext, tp, what, bytes, es,
				       copy || t->dtype == NPU_DTYPE_BOOL, &ed, &mapped);
		if (st)
			return st;
		data = ed;
		for (size_t i = 0; t->dtype == NPU_DTYPE_BOOL && i < bytes; i++)
			data[i] = data[i] != 0;
		if (!t->data_mapped)
			free(t->data);
		t->data = data;
		t->data_mapped = mapped;
		t->bytes = bytes;
		return NPU_OK;
	}
	if (tp->has_raw_data) {
		if (tp->raw_data.len != bytes)
			return npu_fail(NPU_ERR_FORMAT,
					"%s has %zu bytes of raw_data; its shape and type need %zu",
					what, tp->raw_data.len, bytes);
		if (bytes) {
			data = (char *)tp->raw_data.data;
			tp->raw_data.data = NULL;
			tp->raw_data.len = 0;
		} else {
			data = malloc(1);
			if (!data)
				return npu_fail(NPU_ERR_NO_MEMORY, "out of memory loading %s", what);
		}
		/* Bools are one byte each; any non-zero byte reads as true. */
		for (size_t i = 0; t->dtype == NPU_DTYPE_BOOL && i < bytes; i++)
			data[i] = data[i] != 0;
		free(t->data);
		t->data = data;
		t->bytes = bytes;
		return NPU_OK;
	}
	switch (t->dtype) {
	case NPU_DTYPE_FLOAT32:
		count = tp->n_float_data;
		field = "float_data";
		break;
	case NPU_DTYPE_INT64:
		count = tp->n_int64_data;
		field = "int64_data";
		break;
	default:
		count = tp->n_int32_data;
		field = "int32_data";
		break;
	}
	if (count == 0 && numel > 0)
		return npu_fail(NPU_ERR_FORMAT, "%s has no data", what);
	if (count != (size_t)numel)
		return npu_fail(NPU_ERR_FORMAT, "%s has %zu values in %s; its shape needs %" PRId64,
				what, count, field, numel);
	data = malloc(bytes ? bytes : 1);
	if (!data)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory loading %s", what);
	for (int64_t i = 0; i < numel; i++) {
		int32_t v32 = t->dtype == NPU_DTYPE_FLOAT32 || t->dtype == NPU_DTYPE_INT64 ?
			      0 : tp->int32_data[i];
		uint16_t v16 = (uint16_t)(uint32_t)v32;

		switch (t->dtype) {
		case NPU_DTYPE_FLOAT32:
			memcpy(data + 4 * i, &tp->float_data[i], 4);
			break;
		case NPU_DTYPE_INT64:
			memcpy(data + 8 * i, &tp->int64_data[i], 8);
			break;
		case NPU_DTYPE_INT32:
			memcpy(data + 4 * i, &v32, 4);
			break;
		case NPU_DTYPE_INT8:
		case NPU_DTYPE_UINT8:
			data[i] = (char)(uint8_t)(uint32_t)v32;
			break;
		case NPU_DTYPE_BOOL:
			data[i] = v32 != 0;
			break;
		case NPU_DTYPE_FLOAT16:
		case NPU_DTYPE_BFLOAT16:
			memcpy(data + 2 * i, &v16, 2);
			break;
		}
	}
	free(t->data);
	t->data = data;
	t->bytes = bytes;
	return NPU_OK;
}

/* A standalone constant (attribute value), named @name. */
static npu_status new_const(npu_ir_tensor **out, const char *name)
{
	npu_ir_tensor *t = calloc(1, sizeof(*t));

	*out = t;
	if (!t || !(t->name = strdup(name))) {
		free(t);
		*out = NULL;
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	t->rank = -1;
	t->producer = -1;
	return NPU_OK;
}

/*
 * Apply a declared type (graph input/output, value_info) to @t.  Declared
 * dims that are symbolic stay -1.
 */
static npu_status apply_type(npu_ir_tensor *t, const Onnx__TypeProto *tp, const char *what)
{
	const Onnx__TypeProto__Tensor *tt;
	const Onnx__TensorShapeProto *sh;
	npu_dtype dt = 0;
	npu_status st;

	if (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET)
		return NPU_OK;
	if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
		const char *kind = tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ? "a sequence" :
				   tp->value_case == ONNX__TYPE_PROTO__VALUE_MAP_TYPE ? "a map" :
				   tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE ? "an optional" :
				   tp->value_case == ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE ?
				   "a sparse tensor" : "not a tensor";

		return npu_fail(NPU_ERR_UNSUPPORTED, "%s is %s; libnpu supports dense tensors only",
				what, kind);
	}
	tt = tp->tensor_type;
	if (!tt)
		return NPU_OK;
	if (tt->has_elem_type && tt->elem_type) {
		st = map_dtype(tt->elem_type, what, &dt);
		if (st)
			return st;
		if (t->dtype && t->dtype != dt)
			return npu_fail(NPU_ERR_FORMAT, "%s is declared %s and %s", what,
					npu_dtype_str(t->dtype), npu_dtype_str(dt));
		t->dtype = dt;
	}
	sh = tt->shape;
	if (!sh)
		return NPU_OK;
	if (sh->n_dim > NPU_MAX_RANK)
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s has rank %zu; libnpu supports up to %d",
				what, sh->n_dim, NPU_MAX_RANK);
	if (t->rank >= 0 && t->rank != (int)sh->n_dim)
		return npu_fail(NPU_ERR_FORMAT, "%s is declared with ranks %d and %zu", what,
				t->rank, sh->n_dim);
	t->rank = (int)sh->n_dim;
	for (size_t i = 0; i < sh->n_dim; i++) {
		const Onnx__TensorShapeProto__Dimension *d = sh->dim[i];
		int64_t v = -1;

		if (d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
			v = d->dim_value;
			if (v < 0 || v > NPU_IR_DIM_MAX)
				return npu_fail(NPU_ERR_FORMAT, "%s has dimension %zu = %" PRId64,
						what, i, v);
		}
		if (v >= 0 && t->dims[i] >= 0 && t->dims[i] != v)
			return npu_fail(NPU_ERR_FORMAT, "%s is declared with dimension %zu both %" PRId64
					" and %" PRId64, what, i, t->dims[i], v);
		if (v >= 0)
			t->dims[i] = v;
	}
	return NPU_OK;
}

/*
 * Keep the names of a graph input's symbolic dims (dim_param "batch"), so
 * that the error asking for its shape can say which dim it means.
 */
static npu_status keep_dim_names(npu_ir_graph *g, int t, const Onnx__TypeProto *tp)
{
	const Onnx__TensorShapeProto *sh;

	if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type ||
	    !(sh = tp->tensor_type->shape))
		return NPU_OK;
	for (size_t i = 0; i < sh->n_dim && i < NPU_MAX_RANK; i++) {
		const Onnx__TensorShapeProto__Dimension *d = sh->dim[i];
		npu_status st;

		if (!d || d->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ||
		    !d->dim_param || !d->dim_param[0] || g->tensors[t].dims[i] >= 0)
			continue;
		st = npu_ir_set_dim_name(g, t, (int)i, d->dim_param);
		if (st)
			return st;
	}
	return NPU_OK;
}

/* ---- attributes ---- */

static npu_status load_attr(npu_ir_attr *a, Onnx__AttributeProto *ap, const char *where,
			    struct npu_onnx_ext *ext)
{
	Onnx__AttributeProto__AttributeType type = ap->has_type ? ap->type :
		ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
	char what[300];
	npu_status st;

	if (!ap->name || !ap->name[0])
		return npu_fail(NPU_ERR_FORMAT, "%s has an attribute without a name", where);
	a->name = strdup(ap->name);
	if (!a->name)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	if (type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED) {
		/* Files from before IR version 2 say the type by the field they set. */
		type = ap->n_floats ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS :
		       ap->n_ints ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS :
		       ap->has_s ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING :
		       ap->t ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR :
		       ap->has_f ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT :
		       ap->has_i ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT :
		       ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
	}
	switch (type) {
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
		a->type = NPU_IR_ATTR_FLOAT;
		a->f = ap->f;
		return NPU_OK;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
		a->type = NPU_IR_ATTR_INT;
		a->i = ap->i;
		return NPU_OK;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
		a->type = NPU_IR_ATTR_STRING;
		a->s = malloc(ap->s.len + 1);
		if (!a->s)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		if (ap->s.len)
			memcpy(a->s, ap->s.data, ap->s.len);
		a->s[ap->s.len] = '\0';
		return NPU_OK;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
		if (ap->n_ints > INT32_MAX / 8)
			return npu_fail(NPU_ERR_FORMAT, "%s: attribute '%s' is too long", where, ap->name);
		a->type = NPU_IR_ATTR_INTS;
		a->n = (int)ap->n_ints;
		a->ints = malloc((ap->n_ints ? ap->n_ints : 1) * sizeof(int64_t));
		if (!a->ints)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		if (ap->n_ints)
			memcpy(a->ints, ap->ints, ap->n_ints * sizeof(int64_t));
		return NPU_OK;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
		if (ap->n_floats > INT32_MAX / 8)
			return npu_fail(NPU_ERR_FORMAT, "%s: attribute '%s' is too long", where, ap->name);
		a->type = NPU_IR_ATTR_FLOATS;
		a->n = (int)ap->n_floats;
		a->floats = malloc((ap->n_floats ? ap->n_floats : 1) * sizeof(float));
		if (!a->floats)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		if (ap->n_floats)
			memcpy(a->floats, ap->floats, ap->n_floats * sizeof(float));
		return NPU_OK;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR:
		if (!ap->t)
			return npu_fail(NPU_ERR_FORMAT, "%s: tensor attribute '%s' has no tensor",
					where, ap->name);
		st = new_const(&a->t, ap->t->name && ap->t->name[0] ? ap->t->name : ap->name);
		if (st)
			return st;
		snprintf(what, sizeof(what), "%s: attribute '%s'", where, ap->name);
		st = load_tensor(a->t, ap->t, what, ext, true);
		if (st == NPU_ERR_UNSUPPORTED) {
			/* An op libnpu does not run anyway may carry any tensor:
			 * keep the name only; readers then get a clear type error. */
			npu_ir_tensor_free(a->t);
			a->t = NULL;
			a->type = NPU_IR_ATTR_OTHER;
			return NPU_OK;
		}
		a->type = NPU_IR_ATTR_TENSOR;
		return st;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: {
		size_t len = 1;
		char *p;

		if (ap->n_strings > INT32_MAX / 8)
			return npu_fail(NPU_ERR_FORMAT, "%s: attribute '%s' is too long", where, ap->name);
		for (size_t i = 0; i < ap->n_strings; i++)
			len += ap->strings[i].len + 1;
		a->type = NPU_IR_ATTR_STRINGS;
		a->n = (int)ap->n_strings;
		a->s = p = malloc(len);
		if (!a->s)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		for (size_t i = 0; i < ap->n_strings; i++) {
			/* A NUL inside a string ends it early: names of
			 * activations never hold one. */
			if (ap->strings[i].len)
				memcpy(p, ap->strings[i].data, ap->strings[i].len);
			p += ap->strings[i].len;
			*p++ = '\0';
		}
		*p = '\0';
		return NPU_OK;
	}
	default:
		a->type = NPU_IR_ATTR_OTHER;	/* graphs, sparse, type protos */
		return NPU_OK;
	}
}

/* ---- graph ---- */

struct ctx {
	const Onnx__ModelProto *m;
	Onnx__GraphProto *gp;
	npu_ir_graph *g;
	int *node_of_output;	/* per tensor: ONNX node index defining it, or -1 */
	int cap;
	struct npu_onnx_ext ext;	/* side files of external data */
	char lbl[160];
};

static const char *node_label(struct ctx *c, size_t i)
{
	const Onnx__NodeProto *np = c->gp->node[i];

	if (np->name && np->name[0])
		snprintf(c->lbl, sizeof(c->lbl), "node '%s' (%s)", np->name, str0(np->op_type));
	else
		snprintf(c->lbl, sizeof(c->lbl), "node #%zu (%s)", i, str0(np->op_type));
	return c->lbl;
}

static bool is_default_domain(const char *d)
{
	return !d || !d[0] || !strcmp(d, "ai.onnx");
}

/* Opset version of @domain, 0 if the model does not import it. */
static int64_t opset_of(const Onnx__ModelProto *m, const char *domain)
{
	for (size_t i = 0; i < m->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *o = m->opset_import[i];

		if (is_default_domain(domain) ? is_default_domain(o->domain)
					      : !strcmp(str0(o->domain), domain))
			return o->has_version ? o->version : 1;
	}
	return 0;
}

/* Remember that ONNX node @node defines tensor @t (-2: an initializer, -3: a graph input). */
static npu_status note_def(struct ctx *c, int t, int node)
{
	if (t >= c->cap) {
		int ncap = c->cap ? c->cap * 2 : 64;
		int *p;

		while (ncap <= t)
			ncap *= 2;
		p = realloc(c->node_of_output, (size_t)ncap * sizeof(int));
		if (!p)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		for (int i = c->cap; i < ncap; i++)
			p[i] = -1;
		c->node_of_output = p;
		c->cap = ncap;
	}
	c->node_of_output[t] = node;
	return NPU_OK;
}

static npu_status redefined(struct ctx *c, size_t node, const char *name)
{
	int t = npu_ir_find_tensor(c->g, name);
	int prev = c->node_of_output[t];
	char first[200];

	if (prev == -2)
		snprintf(first, sizeof(first), "an initializer");
	else if (prev == -3)
		snprintf(first, sizeof(first), "a graph input");
	else
		snprintf(first, sizeof(first), "%s", node_label(c, (size_t)prev));
	return npu_fail(NPU_ERR_FORMAT, "tensor '%s' is defined twice: by %s and by %s",
			name, first, node_label(c, node));
}

/* A Constant node: its output becomes a constant tensor. */
static npu_status load_constant(struct ctx *c, size_t i, int t)
{
	const Onnx__NodeProto *np = c->gp->node[i];
	npu_ir_tensor *x = &c->g->tensors[t];
	Onnx__AttributeProto *ap = NULL;
	char what[220];
	int64_t one = 1;

	if (np->n_attribute != 1 || !np->attribute[0]->name)
		return npu_fail(NPU_ERR_FORMAT, "%s must have exactly one value attribute",
				node_label(c, i));
	ap = np->attribute[0];
	snprintf(what, sizeof(what), "the value of %s", node_label(c, i));
	if (!strcmp(ap->name, "value")) {
		if (!ap->t)
			return npu_fail(NPU_ERR_FORMAT, "%s has no tensor", what);
		return load_tensor(x, ap->t, what, &c->ext, false);
	}
	if (!strcmp(ap->name, "value_float") || !strcmp(ap->name, "value_int")) {
		bool fl = ap->name[6] == 'f';

		x->dtype = fl ? NPU_DTYPE_FLOAT32 : NPU_DTYPE_INT64;
		x->rank = 0;
		return npu_ir_set_const(c->g, t, fl ? (const void *)&ap->f : (const void *)&ap->i,
					fl ? 4 : 8);
	}
	if (!strcmp(ap->name, "value_floats") || !strcmp(ap->name, "value_ints")) {
		bool fl = ap->name[6] == 'f';
		size_t n = fl ? ap->n_floats : ap->n_ints;

		if (n > (size_t)NPU_IR_DIM_MAX)
			return npu_fail(NPU_ERR_FORMAT, "%s is too long", what);
		x->dtype = fl ? NPU_DTYPE_FLOAT32 : NPU_DTYPE_INT64;
		x->rank = 1;
		x->dims[0] = (int64_t)n;
		return npu_ir_set_const(c->g, t, fl ? (const void *)ap->floats : (const void *)ap->ints,
					n * (fl ? 4 : 8));
	}
	(void)one;
	if (!strcmp(ap->name, "sparse_value"))
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s is a sparse tensor, which is not supported", what);
	if (!strcmp(ap->name, "value_string") || !strcmp(ap->name, "value_strings"))
		return npu_fail(NPU_ERR_UNSUPPORTED, "%s is a string, which libnpu does not support", what);
	return npu_fail(NPU_ERR_FORMAT, "%s has no value attribute (it has '%s')",
			node_label(c, i), ap->name);
}

static npu_status load_node(struct ctx *c, size_t i, int64_t opset)
{
	const Onnx__NodeProto *np = c->gp->node[i];
	npu_ir_graph *g = c->g;
	int *ins = NULL, *outs = NULL, id;
	npu_ir_node *n;
	npu_status st = NPU_OK;

	ins = malloc((np->n_input ? np->n_input : 1) * sizeof(int));
	outs = malloc((np->n_output ? np->n_output : 1) * sizeof(int));
	if (!ins || !outs) {
		st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	for (size_t j = 0; j < np->n_input; j++) {
		const char *name = str0(np->input[j]);

		ins[j] = name[0] ? npu_ir_find_tensor(g, name) : -1;
		if (name[0] && ins[j] < 0) {
			st = npu_fail(NPU_ERR_FORMAT,
				      "%s reads tensor '%s' (input %zu), which no node, initializer or graph input defines",
				      node_label(c, i), name, j);
			goto out;
		}
	}
	for (size_t j = 0; j < np->n_output; j++) {
		const char *name = str0(np->output[j]);

		outs[j] = name[0] ? npu_ir_find_tensor(g, name) : -1;
	}
	st = npu_ir_add_node(g, np->op_type, str0(np->name), ins, (int)np->n_input,
			     outs, (int)np->n_output, &id);
	if (st)
		goto out;
	n = &g->nodes[id];
	n->opset = (int)opset;
	n->src_index = (int)i;
	free(n->domain);
	n->domain = strdup(is_default_domain(np->domain) ? "" : np->domain);
	n->attrs = calloc(np->n_attribute ? np->n_attribute : 1, sizeof(npu_ir_attr));
	if (!n->domain || !n->attrs) {
		st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	for (size_t j = 0; j < np->n_attribute; j++) {
		const char *an = np->attribute[j]->name;

		if (an && npu_ir_attr_find(n, an)) {
			st = npu_fail(NPU_ERR_FORMAT, "%s has attribute '%s' twice",
				      node_label(c, i), an);
			goto out;
		}
		st = load_attr(&n->attrs[n->n_attrs], np->attribute[j], node_label(c, i),
			       &c->ext);
		n->n_attrs++;	/* freed with the node even if half loaded */
		if (st)
			goto out;
	}
out:
	free(ins);
	free(outs);
	return st;
}

static npu_status load_graph(struct ctx *c)
{
	Onnx__GraphProto *gp = c->gp;
	npu_ir_graph *g = c->g;
	char what[300];
	npu_status st;
	int t;

	if (gp->n_node > INT32_MAX / 8 || gp->n_initializer > INT32_MAX / 8)
		return npu_fail(NPU_ERR_FORMAT, "the graph is too large");
	free(g->name);
	g->name = strdup(str0(gp->name));
	if (!g->name)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	if (gp->n_sparse_initializer) {
		const Onnx__SparseTensorProto *sp = gp->sparse_initializer[0];

		return npu_fail(NPU_ERR_UNSUPPORTED,
				"sparse initializer '%s' is not supported; store it as a dense initializer",
				sp->values ? str0(sp->values->name) : "");
	}
	for (size_t i = 0; i < gp->n_initializer; i++) {
		Onnx__TensorProto *tp = gp->initializer[i];
		const char *name = str0(tp->name);

		if (!name[0])
			return npu_fail(NPU_ERR_FORMAT, "initializer #%zu has no name", i);
		if (npu_ir_find_tensor(g, name) >= 0)
			return npu_fail(NPU_ERR_FORMAT, "initializer '%s' is defined twice", name);
		st = npu_ir_add_tensor(g, name, 0, -1, NULL, &t);
		if (!st)
			st = note_def(c, t, -2);
		if (st)
			return st;
		snprintf(what, sizeof(what), "initializer '%s'", name);
		st = load_tensor(&g->tensors[t], tp, what, &c->ext, false);
		if (st)
			return st;
	}
	for (size_t i = 0; i < gp->n_input; i++) {
		const Onnx__ValueInfoProto *vi = gp->input[i];
		const char *name = str0(vi->name);
		int *p;

		if (!name[0])
			return npu_fail(NPU_ERR_FORMAT, "graph input #%zu has no name", i);
		t = npu_ir_find_tensor(g, name);
		if (t >= 0 && c->node_of_output[t] == -2)
			continue;	/* an initializer: a constant, not an input */
		if (t >= 0)
			return npu_fail(NPU_ERR_FORMAT, "graph input '%s' is listed twice", name);
		st = npu_ir_add_tensor(g, name, 0, -1, NULL, &t);
		if (!st)
			st = note_def(c, t, -3);
		if (st)
			return st;
		snprintf(what, sizeof(what), "graph input '%s'", name);
		st = apply_type(&g->tensors[t], vi->type, what);
		if (!st)
			st = keep_dim_names(g, t, vi->type);
		if (st)
			return st;
		p = realloc(g->inputs, (size_t)(g->n_inputs + 1) * sizeof(int));
		if (!p)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		g->inputs = p;
		g->inputs[g->n_inputs++] = t;
	}
	/* Pass 1: every node output (and Constant values) gets its tensor. */
	for (size_t i = 0; i < gp->n_node; i++) {
		const Onnx__NodeProto *np = gp->node[i];
		bool constant = is_default_domain(np->domain) && !strcmp(str0(np->op_type), "Constant");

		if (!np->op_type || !np->op_type[0])
			return npu_fail(NPU_ERR_FORMAT, "node #%zu has no op_type", i);
		if (np->n_input > INT32_MAX / 8 || np->n_output > INT32_MAX / 8)
			return npu_fail(NPU_ERR_FORMAT, "%s has too many inputs or outputs",
					node_label(c, i));
		if (np->n_attribute > MAX_ATTRS)
			return npu_fail(NPU_ERR_FORMAT, "%s has %zu attributes (at most %d)",
					node_label(c, i), np->n_attribute, MAX_ATTRS);
		if (constant && (np->n_output != 1 || !np->output[0] || !np->output[0][0]))
			return npu_fail(NPU_ERR_FORMAT, "%s must have one output", node_label(c, i));
		for (size_t j = 0; j < np->n_output; j++) {
			const char *name = str0(np->output[j]);

			if (!name[0])
				continue;
			if (npu_ir_find_tensor(g, name) >= 0)
				return redefined(c, i, name);
			st = npu_ir_add_tensor(g, name, 0, -1, NULL, &t);
			if (!st)
				st = note_def(c, t, (int)i);
			if (!st && constant)
				st = load_constant(c, i, t);
			if (st)
				return st;
		}
	}
	/* Pass 2: the nodes themselves. */
	for (size_t i = 0; i < gp->n_node; i++) {
		const Onnx__NodeProto *np = gp->node[i];
		int64_t opset = opset_of(c->m, np->domain);

		if (is_default_domain(np->domain) && !strcmp(np->op_type, "Constant"))
			continue;
		if (!opset)
			return npu_fail(NPU_ERR_FORMAT, "%s uses domain '%s', which the model does not import",
					node_label(c, i), is_default_domain(np->domain) ? "ai.onnx" : np->domain);
		if (opset < 0 || opset > INT32_MAX)
			return npu_fail(NPU_ERR_VERSION, "%s: opset %" PRId64 " of domain '%s' is not supported",
					node_label(c, i), opset, str0(np->domain));
		st = load_node(c, i, opset);
		if (st)
			return st;
	}
	for (size_t i = 0; i < gp->n_output; i++) {
		const Onnx__ValueInfoProto *vi = gp->output[i];
		const char *name = str0(vi->name);
		int *p;

		t = npu_ir_find_tensor(g, name);
		if (t < 0)
			return npu_fail(NPU_ERR_FORMAT,
					"graph output '%s' is not produced by any node, initializer or graph input",
					name);
		if (c->node_of_output[t] == -4)
			return npu_fail(NPU_ERR_FORMAT, "graph output '%s' is listed twice", name);
		snprintf(what, sizeof(what), "graph output '%s'", name);
		st = g->tensors[t].data ? NPU_OK : apply_type(&g->tensors[t], vi->type, what);
		if (st)
			return st;
		p = realloc(g->outputs, (size_t)(g->n_outputs + 1) * sizeof(int));
		if (!p)
			return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		g->outputs = p;
		g->outputs[g->n_outputs++] = t;
		c->node_of_output[t] = -4;	/* seen as an output (definitions are all known) */
	}
	for (size_t i = 0; i < gp->n_value_info; i++) {
		const Onnx__ValueInfoProto *vi = gp->value_info[i];

		t = npu_ir_find_tensor(g, str0(vi->name));
		if (t < 0 || g->tensors[t].data)
			continue;	/* about a tensor the graph lacks, or a constant */
		snprintf(what, sizeof(what), "tensor '%s'", str0(vi->name));
		st = apply_type(&g->tensors[t], vi->type, what);
		if (st)
			return st;
	}
	return npu_ir_topo_sort(g);
}

static npu_status check_versions(const Onnx__ModelProto *m)
{
	int64_t opset = 0;
	bool seen_default = false;

	if (m->ir_version < NPU_ONNX_IR_VERSION_MIN || m->ir_version > NPU_ONNX_IR_VERSION_MAX)
		return npu_fail(NPU_ERR_VERSION,
				"ONNX IR version %" PRId64 " is not supported (libnpu reads IR versions %d..%d)",
				m->ir_version, NPU_ONNX_IR_VERSION_MIN, NPU_ONNX_IR_VERSION_MAX);
	if (m->n_opset_import > MAX_IMPORTS)
		return npu_fail(NPU_ERR_FORMAT, "the model imports %zu opsets (at most %d)",
				m->n_opset_import, MAX_IMPORTS);
	for (size_t i = 0; i < m->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *o = m->opset_import[i];

		for (size_t j = 0; j < i; j++) {
			const char *a = str0(o->domain), *b = str0(m->opset_import[j]->domain);

			if (is_default_domain(a) ? is_default_domain(b) : !strcmp(a, b))
				return npu_fail(NPU_ERR_FORMAT, "the model imports domain '%s' twice",
						is_default_domain(a) ? "ai.onnx" : a);
		}
		if (is_default_domain(o->domain)) {
			seen_default = true;
			opset = o->has_version ? o->version : 1;
		}
	}
	if (seen_default && (opset < NPU_ONNX_OPSET_MIN || opset > NPU_ONNX_OPSET_MAX))
		return npu_fail(NPU_ERR_VERSION,
				"the model uses ONNX opset %" PRId64 ", which is not supported (libnpu supports opset %d..%d)",
				opset, NPU_ONNX_OPSET_MIN, NPU_ONNX_OPSET_MAX);
	return NPU_OK;
}

npu_status npu_onnx_parse(const void *buf, size_t len, npu_ir_graph **out)
{
	return npu_onnx_parse_dir(buf, len, NULL, out);
}

npu_status npu_onnx_parse_dir(const void *buf, size_t len, const char *model_dir,
			      npu_ir_graph **out)
{
	struct wire w = { .buf = buf };
	struct ctx c;
	Onnx__ModelProto *m;
	npu_status st;

	if (!out)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_onnx_parse: out is NULL");
	*out = NULL;
	if (!buf && len)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_onnx_parse: buf is NULL");
	if (len == 0)
		return npu_fail(NPU_ERR_FORMAT, "not an ONNX model: the data is empty");
	if (len > INT32_MAX)
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"the model file is larger than 2 GB, which protobuf does not allow: save its weights as external data (side files next to the .onnx file)");
	st = scan_msg(&w, &onnx__model_proto__descriptor, 0, len, 0);
	if (st)
		return st;
	m = onnx__model_proto__unpack(NULL, len, buf);
	if (!m)	/* the walk above accepts only what protobuf-c decodes */
		return npu_fail(NPU_ERR_FORMAT,
				"not an ONNX model: protobuf-c could not decode it (or ran out of memory)");
	if (!m->has_ir_version && !m->graph) {
		st = npu_fail(NPU_ERR_FORMAT,
			      "not an ONNX model: the data decodes as protobuf but has neither an ir_version nor a graph");
		goto done;
	}
	if (!m->has_ir_version) {
		st = npu_fail(NPU_ERR_FORMAT, "the ONNX model has no ir_version");
		goto done;
	}
	st = check_versions(m);
	if (st)
		goto done;
	if (!m->graph) {
		st = npu_fail(NPU_ERR_FORMAT, "the ONNX model has no graph");
		goto done;
	}
	/* If nodes become their branches and npu.IfSelect (npu_onnx_if.c). */
	st = npu_onnx_flatten_if(m->graph, (int)opset_of(m, ""), 0);
	if (st)
		goto done;
	memset(&c, 0, sizeof(c));
	c.m = m;
	c.gp = m->graph;
	st = npu_ir_graph_create(&c.g);
	if (st)
		goto done;
	c.g->ir_version = m->ir_version;
	c.g->opset = (int)opset_of(m, "");
	free(c.g->producer);
	c.g->producer = strdup(str0(m->producer_name));
	c.ext.model_dir = model_dir;
	c.ext.g = c.g;
	st = c.g->producer ? load_graph(&c) : npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	npu_onnx_ext_done(&c.ext);
	free(c.node_of_output);
	if (st)
		npu_ir_graph_free(c.g);
	else
		*out = c.g;
done:
	onnx__model_proto__free_unpacked(m, NULL);
	return st;
}

npu_status npu_onnx_parse_tensor(const void *buf, size_t len, npu_ir_tensor **out)
{
	struct wire w = { .buf = buf };
	Onnx__TensorProto *tp;
	char what[300];
	npu_status st;

	if (!out)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_onnx_parse_tensor: out is NULL");
	*out = NULL;
	if (!buf && len)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_onnx_parse_tensor: buf is NULL");
	if (len > INT32_MAX)
		return npu_fail(NPU_ERR_UNSUPPORTED, "tensors over 2 GB are not supported");
	st = scan_msg(&w, &onnx__tensor_proto__descriptor, 0, len, 0);
	if (st)
		return st;
	tp = onnx__tensor_proto__unpack(NULL, len, buf);
	if (!tp)
		return npu_fail(NPU_ERR_FORMAT,
				"not an ONNX tensor: protobuf-c could not decode it (or ran out of memory)");
	st = new_const(out, str0(tp->name));
	snprintf(what, sizeof(what), "tensor '%s'", str0(tp->name));
	if (!st)
		st = load_tensor(*out, tp, what, NULL, true);
	if (st) {
		npu_ir_tensor_free(*out);
		*out = NULL;
	}
	onnx__tensor_proto__free_unpacked(tp, NULL);
	return st;
}
