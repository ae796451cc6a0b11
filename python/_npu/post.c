// SPDX-License-Identifier: MIT
/*
 * The post-processing helpers of npu_post.h.  Option structs are set from
 * Python dicts through field tables built with offsetof(), so their layout
 * stays npu_post.h's alone; a preset names the header's own initialiser.
 */
#include <stddef.h>
#include <string.h>

#include "npuext.h"

/* ---- Buffers ---- */

/* A buffer argument of at least @bytes bytes. */
static int sized_buffer(PyObject *obj, Py_buffer *v, int writable, Py_ssize_t bytes,
			const char *what)
{
	if (npx_get_buffer(obj, v, writable, what))
		return -1;
	if (v->len >= bytes)
		return 0;
	npx_raise_msg(NPU_ERR_SHAPE, "%s: %zd bytes, %zd needed", what, v->len, bytes);
	PyBuffer_Release(v);
	return -1;
}

static PyObject *status_result(npu_status s)
{
	if (s != NPU_OK)
		return npx_raise(s);
	Py_RETURN_NONE;
}

/* ---- Softmax, quantization ---- */

static PyObject *post_softmax(PyObject *self, PyObject *args)
{
	PyObject *in_obj, *out_obj;
	long long rows, cols;
	Py_buffer in = { 0 }, out = { 0 };
	npu_status s;

	(void)self;
	if (!PyArg_ParseTuple(args, "OOLL:softmax", &in_obj, &out_obj, &rows, &cols))
		return NULL;
	if (rows < 0 || cols < 0 || (cols && rows > PY_SSIZE_T_MAX / 4 / cols))
		return npx_raise_msg(NPU_ERR_INVALID_ARG, "softmax: %lld rows of %lld", rows, cols);
	if (sized_buffer(in_obj, &in, 0, (Py_ssize_t)(rows * cols * 4), "softmax input"))
		return NULL;
	if (sized_buffer(out_obj, &out, 1, (Py_ssize_t)(rows * cols * 4), "softmax output")) {
		PyBuffer_Release(&in);
		return NULL;
	}
	Py_BEGIN_ALLOW_THREADS
	s = npu_softmax(in.buf, out.buf, rows, cols);
	Py_END_ALLOW_THREADS
	PyBuffer_Release(&in);
	PyBuffer_Release(&out);
	return status_result(s);
}

/* quantize (@to_int) or dequantize @n elements of type @dtype. */
static PyObject *quant(PyObject *args, int to_int)
{
	PyObject *in_obj, *out_obj;
	int dtype, zp;
	long long n;
	float scale;
	Py_buffer in = { 0 }, out = { 0 };
	npu_status s;

	if (!PyArg_ParseTuple(args, "iOOLfi", &dtype, &in_obj, &out_obj, &n, &scale, &zp))
		return NULL;
	if (n < 0 || n > PY_SSIZE_T_MAX / 4)
		return npx_raise_msg(NPU_ERR_INVALID_ARG, "%lld elements", n);
	if (sized_buffer(in_obj, &in, 0, (Py_ssize_t)(to_int ? 4 * n : n), "input"))
		return NULL;
	if (sized_buffer(out_obj, &out, 1, (Py_ssize_t)(to_int ? n : 4 * n), "output")) {
		PyBuffer_Release(&in);
		return NULL;
	}
	s = to_int ? npu_quantize((npu_dtype)dtype, in.buf, out.buf, n, scale, zp)
		   : npu_dequantize((npu_dtype)dtype, in.buf, out.buf, n, scale, zp);
	PyBuffer_Release(&in);
	PyBuffer_Release(&out);
	return status_result(s);
}

static PyObject *post_quantize(PyObject *self, PyObject *args)
{
	(void)self;
	return quant(args, 1);
}

static PyObject *post_dequantize(PyObject *self, PyObject *args)
{
	(void)self;
	return quant(args, 0);
}

/* ---- Labels and top-k ---- */

typedef struct {
	PyObject_HEAD
	npu_labels *labels;
} npx_labels;

static int labels_init(npx_labels *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "path", NULL };
	PyObject *path_obj;
	npu_labels *l = NULL;
	npu_status s;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&:Labels", kwlist, PyUnicode_FSConverter,
					 &path_obj))
		return -1;
	Py_BEGIN_ALLOW_THREADS
	s = npu_labels_load(PyBytes_AS_STRING(path_obj), &l);
	Py_END_ALLOW_THREADS
	Py_DECREF(path_obj);
	if (s != NPU_OK) {
		npx_raise(s);
		return -1;
	}
	npu_labels_free(self->labels);
	self->labels = l;
	return 0;
}

static Py_ssize_t labels_len(npx_labels *self)
{
	return (Py_ssize_t)npu_labels_count(self->labels);
}

static PyObject *labels_item(npx_labels *self, Py_ssize_t i)
{
	const char *s = i >= 0 ? npu_labels_get(self->labels, (size_t)i) : NULL;

	if (!s) {
		PyErr_SetString(PyExc_IndexError, "label index out of range");
		return NULL;
	}
	return npx_str(s);
}

static void labels_dealloc(npx_labels *self)
{
	npu_labels_free(self->labels);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PySequenceMethods labels_seq = {
	.sq_length = (lenfunc)labels_len,
	.sq_item = (ssizeargfunc)labels_item,
};

PyTypeObject npx_labels_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "npu._npu.Labels",
	.tp_doc = "Labels(path): class labels, one per line (npu_labels_load).",
	.tp_basicsize = sizeof(npx_labels),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_new = PyType_GenericNew,
	.tp_init = (initproc)labels_init,
	.tp_dealloc = (destructor)labels_dealloc,
	.tp_as_sequence = &labels_seq,
};

/* top_k(scores, n, k, labels) -> [(index, score, label or None)] */
static PyObject *post_top_k(PyObject *self, PyObject *args)
{
	PyObject *scores_obj, *labels_obj, *list = NULL;
	long long n, k;
	int64_t count = 0;
	Py_buffer sc = { 0 };
	npu_top_k_entry *e;
	const npu_labels *labels = NULL;
	npu_status s;

	(void)self;
	if (!PyArg_ParseTuple(args, "OLLO:top_k", &scores_obj, &n, &k, &labels_obj))
		return NULL;
	if (labels_obj != Py_None) {
		if (!PyObject_TypeCheck(labels_obj, &npx_labels_type)) {
			PyErr_SetString(PyExc_TypeError, "labels: a Labels object or None");
			return NULL;
		}
		labels = ((npx_labels *)labels_obj)->labels;
	}
	if (n < 0 || k < 0 || n > PY_SSIZE_T_MAX / 4)
		return npx_raise_msg(NPU_ERR_INVALID_ARG, "top_k: n %lld, k %lld", n, k);
	if (sized_buffer(scores_obj, &sc, 0, (Py_ssize_t)(4 * n), "scores"))
		return NULL;
	if (k > n)
		k = n;
	e = PyMem_Calloc(k ? (size_t)k : 1, sizeof(*e));
	if (!e) {
		PyBuffer_Release(&sc);
		return PyErr_NoMemory();
	}
	s = npu_top_k(sc.buf, n, k, labels, e, &count);
	PyBuffer_Release(&sc);
	if (s != NPU_OK) {
		PyMem_Free(e);
		return npx_raise(s);
	}
	list = PyList_New((Py_ssize_t)count);
	for (int64_t i = 0; list && i < count; i++) {
		PyObject *t = e[i].label
			? Py_BuildValue("(LdN)", (long long)e[i].index, (double)e[i].score,
					npx_str(e[i].label))
			: Py_BuildValue("(LdO)", (long long)e[i].index, (double)e[i].score, Py_None);

		if (!t) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, t);
	}
	PyMem_Free(e);
	return list;
}

/* ---- Option tables ---- */

enum field_kind { F_INT, F_FLOAT, F_INTS, F_FLOATS };

struct field {
	const char *name;
	size_t off;
	enum field_kind kind;
	int cap;		/* arrays: their length in the struct */
	ptrdiff_t count_off;	/* arrays: the int field set to how many were given, or -1 */
};

#define F_(S, f, k) { #f, offsetof(S, f), k, 0, -1 }
#define FA_(S, f, k, count) { #f, offsetof(S, f), k, \
	(int)(sizeof(((S *)0)->f) / sizeof(((S *)0)->f[0])), offsetof(S, count) }

_Static_assert(sizeof(npu_nms_algorithm) == sizeof(int), "npu_nms_algorithm set as an int");

static const struct field anchor_fields[] = {
	FA_(npu_anchor_options, strides, F_INTS, num_layers),
	F_(npu_anchor_options, num_layers, F_INT),
	F_(npu_anchor_options, min_scale, F_FLOAT),
	F_(npu_anchor_options, max_scale, F_FLOAT),
	F_(npu_anchor_options, input_width, F_INT),
	F_(npu_anchor_options, input_height, F_INT),
	F_(npu_anchor_options, anchor_offset_x, F_FLOAT),
	F_(npu_anchor_options, anchor_offset_y, F_FLOAT),
	FA_(npu_anchor_options, feature_map_width, F_INTS, num_feature_maps),
	FA_(npu_anchor_options, feature_map_height, F_INTS, num_feature_maps),
	F_(npu_anchor_options, num_feature_maps, F_INT),
	FA_(npu_anchor_options, aspect_ratios, F_FLOATS, num_aspect_ratios),
	F_(npu_anchor_options, num_aspect_ratios, F_INT),
	F_(npu_anchor_options, reduce_boxes_in_lowest_layer, F_INT),
	F_(npu_anchor_options, interpolated_scale_aspect_ratio, F_FLOAT),
	F_(npu_anchor_options, fixed_anchor_size, F_INT),
	{ NULL, 0, F_INT, 0, -1 }
};

static const struct field decode_fields[] = {
	F_(npu_decode_options, num_classes, F_INT),
	F_(npu_decode_options, num_coords, F_INT),
	F_(npu_decode_options, box_coord_offset, F_INT),
	F_(npu_decode_options, keypoint_coord_offset, F_INT),
	F_(npu_decode_options, num_keypoints, F_INT),
	F_(npu_decode_options, num_values_per_keypoint, F_INT),
	F_(npu_decode_options, x_scale, F_FLOAT),
	F_(npu_decode_options, y_scale, F_FLOAT),
	F_(npu_decode_options, w_scale, F_FLOAT),
	F_(npu_decode_options, h_scale, F_FLOAT),
	F_(npu_decode_options, reverse_output_order, F_INT),
	F_(npu_decode_options, apply_exponential_on_box_size, F_INT),
	F_(npu_decode_options, sigmoid_score, F_INT),
	F_(npu_decode_options, score_clipping_thresh, F_FLOAT),
	F_(npu_decode_options, min_score_thresh, F_FLOAT),
	{ NULL, 0, F_INT, 0, -1 }
};

static const struct field nms_fields[] = {
	F_(npu_nms_options, algorithm, F_INT),
	F_(npu_nms_options, iou_threshold, F_FLOAT),
	F_(npu_nms_options, min_score_thresh, F_FLOAT),
	F_(npu_nms_options, max_detections, F_INT),
	{ NULL, 0, F_INT, 0, -1 }
};

static int set_scalar(char *p, enum field_kind kind, PyObject *v)
{
	if (kind == F_INT || kind == F_INTS) {
		long x = PyLong_AsLong(v);

		if (x == -1 && PyErr_Occurred())
			return -1;
		if (x < INT32_MIN || x > INT32_MAX) {
			PyErr_SetString(PyExc_OverflowError, "out of int range");
			return -1;
		}
		*(int *)p = (int)x;
	} else {
		double x = PyFloat_AsDouble(v);

		if (x == -1.0 && PyErr_Occurred())
			return -1;
		*(float *)p = (float)x;
	}
	return 0;
}

static int set_field(void *opts, const struct field *f, PyObject *v, const char *what)
{
	char *p = (char *)opts + f->off;
	size_t elem = f->kind == F_INTS ? sizeof(int) : sizeof(float);
	Py_ssize_t n;

	if (f->kind == F_INT || f->kind == F_FLOAT) {
		if (set_scalar(p, f->kind, v) == 0)
			return 0;
		PyErr_Clear();
		npx_raise_msg(NPU_ERR_INVALID_ARG, "%s option %s: a %s is needed", what, f->name,
			      f->kind == F_INT ? "whole number" : "number");
		return -1;
	}
	n = PySequence_Check(v) ? PySequence_Size(v) : -1;
	if (n < 0 || n > f->cap) {
		PyErr_Clear();
		npx_raise_msg(NPU_ERR_INVALID_ARG, "%s option %s: a list of at most %d numbers is "
			      "needed", what, f->name, f->cap);
		return -1;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *x = PySequence_GetItem(v, i);
		int rc = x ? set_scalar(p + (size_t)i * elem, f->kind, x) : -1;

		Py_XDECREF(x);
		if (rc) {
			PyErr_Clear();
			npx_raise_msg(NPU_ERR_INVALID_ARG, "%s option %s[%zd]: not a number",
				      what, f->name, i);
			return -1;
		}
	}
	if (f->count_off >= 0)
		*(int *)((char *)opts + f->count_off) = (int)n;
	return 0;
}

/* Set the fields @dict names (None: none) in @opts; the arrays first, so an
 * explicit count given with them wins. */
static int set_fields(void *opts, const struct field *table, PyObject *dict, const char *what)
{
	PyObject *key, *value;
	Py_ssize_t pos = 0;

	if (dict == Py_None)
		return 0;
	if (!PyDict_Check(dict)) {
		PyErr_SetString(PyExc_TypeError, "options: a dict is needed");
		return -1;
	}
	while (PyDict_Next(dict, &pos, &key, &value)) {
		const char *name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
		const struct field *f = table;

		while (name && f->name && strcmp(f->name, name))
			f++;
		if (!name || !f->name) {
			npx_raise_msg(NPU_ERR_INVALID_ARG, "no %s option named '%s'", what,
				      name ? name : "?");
			return -1;
		}
	}
	for (int pass = 0; pass < 2; pass++)
		for (const struct field *f = table; f->name; f++) {
			int is_array = f->kind == F_INTS || f->kind == F_FLOATS;
			PyObject *v = PyDict_GetItemString(dict, f->name);

			if (v && is_array == !pass && set_field(opts, f, v, what))
				return -1;
		}
	return 0;
}

/* The options as a dict (arrays cut to their count). */
static PyObject *get_fields(const void *opts, const struct field *table)
{
	PyObject *d = PyDict_New();

	for (const struct field *f = table; d && f->name; f++) {
		const char *p = (const char *)opts + f->off;
		PyObject *v;

		if (f->kind == F_INT) {
			v = PyLong_FromLong(*(const int *)p);
		} else if (f->kind == F_FLOAT) {
			v = PyFloat_FromDouble(*(const float *)p);
		} else {
			int n = *(const int *)((const char *)opts + f->count_off);

			n = n < 0 ? 0 : n > f->cap ? f->cap : n;
			v = PyList_New(n);
			for (int i = 0; v && i < n; i++) {
				PyObject *x = f->kind == F_INTS
					? PyLong_FromLong(((const int *)p)[i])
					: PyFloat_FromDouble(((const float *)p)[i]);

				if (!x)
					Py_CLEAR(v);
				else
					PyList_SET_ITEM(v, i, x);
			}
		}
		if (!v || PyDict_SetItemString(d, f->name, v) < 0)
			Py_CLEAR(d);
		Py_XDECREF(v);
	}
	return d;
}

/* Options of @kind from @preset (NULL: the neutral init) and @overrides. */
static int make_options(const char *kind, const char *preset, PyObject *overrides,
			npu_anchor_options *ao, npu_decode_options *dopt, npu_nms_options *nopt,
			const struct field **table)
{
	int blazeface = preset && !strcmp(preset, "blazeface_front");

	if (preset && !blazeface) {
		npx_raise_msg(NPU_ERR_INVALID_ARG, "no %s preset named '%s'; known: "
			      "blazeface_front", kind, preset);
		return -1;
	}
	if (!strcmp(kind, "anchor")) {
		if (blazeface)
			npu_anchor_options_blazeface_front(ao);
		else
			npu_anchor_options_init(ao);
		*table = anchor_fields;
		return set_fields(ao, anchor_fields, overrides, kind);
	}
	if (!strcmp(kind, "decode")) {
		if (blazeface)
			npu_decode_options_blazeface_front(dopt);
		else
			npu_decode_options_init(dopt);
		*table = decode_fields;
		return set_fields(dopt, decode_fields, overrides, kind);
	}
	if (!strcmp(kind, "nms")) {
		npu_nms_options_init(nopt);	/* BlazeFace's are the defaults */
		*table = nms_fields;
		return set_fields(nopt, nms_fields, overrides, kind);
	}
	npx_raise_msg(NPU_ERR_INVALID_ARG, "no options of kind '%s' (anchor, decode, nms)", kind);
	return -1;
}

/* options(kind, preset, overrides) -> dict: what a preset sets, for docs and checks. */
static PyObject *post_options(PyObject *self, PyObject *args)
{
	const char *kind, *preset;
	PyObject *overrides = Py_None;
	npu_anchor_options ao;
	npu_decode_options dopt;
	npu_nms_options nopt;
	const struct field *table;

	(void)self;
	if (!PyArg_ParseTuple(args, "sz|O:options", &kind, &preset, &overrides) ||
	    make_options(kind, preset, overrides, &ao, &dopt, &nopt, &table))
		return NULL;
	return get_fields(table == anchor_fields ? (void *)&ao
			  : table == decode_fields ? (void *)&dopt : (void *)&nopt, table);
}

/* ---- Anchors, detections, NMS ---- */

/* anchors(preset, overrides) -> bytearray of float32 [N, 4] */
static PyObject *post_anchors(PyObject *self, PyObject *args)
{
	const char *preset;
	PyObject *overrides, *out;
	npu_anchor_options ao;
	npu_decode_options dopt;
	npu_nms_options nopt;
	const struct field *table;
	size_t count = 0;
	npu_status s;

	(void)self;
	if (!PyArg_ParseTuple(args, "zO:anchors", &preset, &overrides) ||
	    make_options("anchor", preset, overrides, &ao, &dopt, &nopt, &table))
		return NULL;
	s = npu_anchors_generate(&ao, NULL, 0, &count);
	if (s != NPU_OK)
		return npx_raise(s);
	out = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(count * sizeof(npu_anchor)));
	if (!out)
		return NULL;
	s = npu_anchors_generate(&ao, (npu_anchor *)PyByteArray_AS_STRING(out), count, &count);
	if (s != NPU_OK) {
		Py_DECREF(out);
		return npx_raise(s);
	}
	return out;
}

_Static_assert(sizeof(npu_anchor) == 4 * sizeof(float), "anchors cross as float32 [N, 4]");

static PyObject *detection_tuple(const npu_detection *d)
{
	int nk = d->num_keypoints < 0 ? 0 : d->num_keypoints > NPU_DETECTION_MAX_KEYPOINTS
		? NPU_DETECTION_MAX_KEYPOINTS : d->num_keypoints;
	PyObject *kp = PyTuple_New(nk);

	for (int i = 0; kp && i < nk; i++) {
		PyObject *p = Py_BuildValue("(dd)", (double)d->keypoints[i].x,
					    (double)d->keypoints[i].y);

		if (!p)
			Py_CLEAR(kp);
		else
			PyTuple_SET_ITEM(kp, i, p);
	}
	if (!kp)
		return NULL;
	return Py_BuildValue("(dddddiN)", (double)d->xmin, (double)d->ymin, (double)d->xmax,
			     (double)d->ymax, (double)d->score, d->class_id, kp);
}

static PyObject *detection_list(const npu_detection *d, size_t n)
{
	PyObject *list = PyList_New((Py_ssize_t)n);

	for (size_t i = 0; list && i < n; i++) {
		PyObject *t = detection_tuple(&d[i]);

		if (!t)
			Py_CLEAR(list);
		else
			PyList_SET_ITEM(list, (Py_ssize_t)i, t);
	}
	return list;
}

/* decode(preset, overrides, boxes, scores, anchors, num_anchors) -> [detection] */
static PyObject *post_decode(PyObject *self, PyObject *args)
{
	const char *preset;
	PyObject *overrides, *bo, *so, *ao_obj, *list = NULL;
	Py_ssize_t n;
	npu_anchor_options ao;
	npu_decode_options dopt;
	npu_nms_options nopt;
	const struct field *table;
	Py_buffer b = { 0 }, sc = { 0 }, an = { 0 };
	npu_detection *det = NULL;
	size_t count = 0;
	npu_status s;

	(void)self;
	if (!PyArg_ParseTuple(args, "zOOOOn:decode", &preset, &overrides, &bo, &so, &ao_obj, &n) ||
	    make_options("decode", preset, overrides, &ao, &dopt, &nopt, &table))
		return NULL;
	if (n < 0 || dopt.num_coords < 1 || dopt.num_classes < 1 ||
	    n > PY_SSIZE_T_MAX / 4 / (dopt.num_coords + dopt.num_classes + 4))
		return npx_raise_msg(NPU_ERR_INVALID_ARG, "decode: %zd anchors, %d coords, %d "
				     "classes", n, dopt.num_coords, dopt.num_classes);
	if (sized_buffer(bo, &b, 0, n * dopt.num_coords * 4, "raw_boxes") ||
	    sized_buffer(so, &sc, 0, n * dopt.num_classes * 4, "raw_scores") ||
	    sized_buffer(ao_obj, &an, 0, n * (Py_ssize_t)sizeof(npu_anchor), "anchors"))
		goto out;
	det = PyMem_Calloc(n ? (size_t)n : 1, sizeof(*det));
	if (!det) {
		PyErr_NoMemory();
		goto out;
	}
	s = npu_detections_decode(&dopt, b.buf, sc.buf, an.buf, (size_t)n, det, (size_t)n,
				  &count);
	list = s == NPU_OK ? detection_list(det, count) : npx_raise(s);
out:
	PyMem_Free(det);
	if (b.obj)
		PyBuffer_Release(&b);
	if (sc.obj)
		PyBuffer_Release(&sc);
	if (an.obj)
		PyBuffer_Release(&an);
	return list;
}

static int parse_detection(PyObject *t, npu_detection *d)
{
	PyObject *kp;
	double v[5];
	Py_ssize_t nk;

	if (!PyArg_ParseTuple(t, "dddddiO", &v[0], &v[1], &v[2], &v[3], &v[4], &d->class_id, &kp))
		return -1;
	d->xmin = (float)v[0];
	d->ymin = (float)v[1];
	d->xmax = (float)v[2];
	d->ymax = (float)v[3];
	d->score = (float)v[4];
	nk = PySequence_Size(kp);
	if (nk < 0 || nk > NPU_DETECTION_MAX_KEYPOINTS) {
		PyErr_Clear();
		npx_raise_msg(NPU_ERR_INVALID_ARG, "a detection has at most %d keypoints",
			      NPU_DETECTION_MAX_KEYPOINTS);
		return -1;
	}
	d->num_keypoints = (int)nk;
	for (Py_ssize_t i = 0; i < nk; i++) {
		PyObject *p = PySequence_GetItem(kp, i);
		double x, y;
		int ok = p && PyArg_ParseTuple(p, "dd", &x, &y);

		Py_XDECREF(p);
		if (!ok)
			return -1;
		d->keypoints[i].x = (float)x;
		d->keypoints[i].y = (float)y;
	}
	return 0;
}

/* nms(overrides, detections) -> [detection] */
static PyObject *post_nms(PyObject *self, PyObject *args)
{
	PyObject *overrides, *dets, *seq, *list = NULL;
	npu_anchor_options ao;
	npu_decode_options dopt;
	npu_nms_options nopt;
	const struct field *table;
	npu_detection *d;
	Py_ssize_t n;
	size_t count = 0;
	npu_status s;

	(void)self;
	if (!PyArg_ParseTuple(args, "OO:nms", &overrides, &dets) ||
	    make_options("nms", NULL, overrides, &ao, &dopt, &nopt, &table))
		return NULL;
	seq = PySequence_Fast(dets, "nms: a list of detections is needed");
	if (!seq)
		return NULL;
	n = PySequence_Fast_GET_SIZE(seq);
	d = PyMem_Calloc(n ? (size_t)n : 1, sizeof(*d));
	if (!d) {
		Py_DECREF(seq);
		return PyErr_NoMemory();
	}
	for (Py_ssize_t i = 0; i < n; i++)
		if (parse_detection(PySequence_Fast_GET_ITEM(seq, i), &d[i]))
			goto out;
	s = npu_nms(&nopt, d, (size_t)n, d, (size_t)n, &count);
	list = s == NPU_OK ? detection_list(d, count) : npx_raise(s);
out:
	Py_DECREF(seq);
	PyMem_Free(d);
	return list;
}

PyMethodDef npx_post_methods[] = {
	{ "softmax", post_softmax, METH_VARARGS, "softmax(in, out, rows, cols)." },
	{ "quantize", post_quantize, METH_VARARGS, "quantize(dtype, in, out, n, scale, zp)." },
	{ "dequantize", post_dequantize, METH_VARARGS,
	  "dequantize(dtype, in, out, n, scale, zp)." },
	{ "top_k", post_top_k, METH_VARARGS, "top_k(scores, n, k, labels)." },
	{ "options", post_options, METH_VARARGS, "options(kind, preset[, overrides]) -> dict." },
	{ "anchors", post_anchors, METH_VARARGS, "anchors(preset, overrides) -> bytearray." },
	{ "decode", post_decode, METH_VARARGS,
	  "decode(preset, overrides, boxes, scores, anchors, n) -> [detection]." },
	{ "nms", post_nms, METH_VARARGS, "nms(overrides, detections) -> [detection]." },
	{ NULL, NULL, 0, NULL }
};
