// SPDX-License-Identifier: MIT
/*
 * npu._npu: module setup, errors and the name tables the Python half builds
 * its enums from (so status codes, dtypes and precisions are defined once,
 * in npu.h, and a renumbering there cannot drift from Python).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "npuext.h"

/* npu.Error, registered by the Python half at import (_set_error_class):
 * the exception class is Python code, raised from here. */
static PyObject *error_class;

PyObject *npx_str(const char *s)
{
	return PyUnicode_DecodeUTF8(s ? s : "", s ? (Py_ssize_t)strlen(s) : 0, "replace");
}

static PyObject *raise_with(npu_status s, const char *msg)
{
	PyObject *cls = error_class ? error_class : PyExc_RuntimeError;
	PyObject *exc = PyObject_CallFunction(cls, "iN", (int)s, npx_str(msg));

	if (exc) {
		PyErr_SetObject(cls, exc);
		Py_DECREF(exc);
	}
	return NULL;
}

PyObject *npx_raise(npu_status s)
{
	const char *msg = npu_last_error();

	return raise_with(s, msg && *msg ? msg : npu_status_str(s));
}

PyObject *npx_raise_msg(npu_status s, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return raise_with(s, msg);
}

int npx_get_buffer(PyObject *obj, Py_buffer *view, int writable, const char *what)
{
	int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);

	if (PyObject_GetBuffer(obj, view, flags) == 0)
		return 0;
	PyErr_Clear();
	npx_raise_msg(NPU_ERR_INVALID_ARG, "%s: expected a C-contiguous%s array (numpy's "
		      "np.ascontiguousarray() makes one), got %s", what,
		      writable ? " writable" : "", Py_TYPE(obj)->tp_name);
	return -1;
}

static PyObject *set_error_class(PyObject *self, PyObject *cls)
{
	(void)self;
	if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls,
						   (PyTypeObject *)PyExc_Exception)) {
		PyErr_SetString(PyExc_TypeError, "an Exception subclass is needed");
		return NULL;
	}
	Py_XSETREF(error_class, Py_NewRef(cls));
	Py_RETURN_NONE;
}

static PyObject *status_str(PyObject *self, PyObject *arg)
{
	long s = PyLong_AsLong(arg);

	(void)self;
	if (s == -1 && PyErr_Occurred())
		return NULL;
	return PyUnicode_FromString(npu_status_str((npu_status)s));
}

struct name_value {
	const char *name;
	long value;
};

#define NV(prefix, x) { #x, prefix##x }
static const struct name_value statuses[] = {
	{ "OK", NPU_OK },
	NV(NPU_ERR_, INVALID_ARG), NV(NPU_ERR_, NO_MEMORY), NV(NPU_ERR_, NO_DEVICE),
	NV(NPU_ERR_, DEVICE), NV(NPU_ERR_, VERSION), NV(NPU_ERR_, IO), NV(NPU_ERR_, FORMAT),
	NV(NPU_ERR_, UNSUPPORTED), NV(NPU_ERR_, NOT_FOUND), NV(NPU_ERR_, TIMEOUT),
	NV(NPU_ERR_, NETWORK), NV(NPU_ERR_, CHECKSUM), NV(NPU_ERR_, BUSY),
	NV(NPU_ERR_, JOB_FAILED), NV(NPU_ERR_, SHAPE), NV(NPU_ERR_, INTERNAL),
	NV(NPU_ERR_, CONTEXT_FULL),
	{ NULL, 0 }
};
/* Every status has a name: a new one in npu.h must be added above. */
_Static_assert(NPU_STATUS_COUNT == 18, "a new npu_status needs its name in statuses[]");

static const struct name_value dtypes[] = {
	NV(NPU_DTYPE_, FLOAT32), NV(NPU_DTYPE_, UINT8), NV(NPU_DTYPE_, INT8),
	NV(NPU_DTYPE_, UINT16), NV(NPU_DTYPE_, INT16), NV(NPU_DTYPE_, INT32),
	NV(NPU_DTYPE_, INT64), NV(NPU_DTYPE_, BOOL), NV(NPU_DTYPE_, FLOAT16),
	NV(NPU_DTYPE_, FLOAT64), NV(NPU_DTYPE_, UINT32), NV(NPU_DTYPE_, UINT64),
	NV(NPU_DTYPE_, BFLOAT16),
	{ NULL, 0 }
};

static const struct name_value precisions[] = {
	NV(NPU_PRECISION_, DEFAULT), NV(NPU_PRECISION_, BF16), NV(NPU_PRECISION_, INT8),
	NV(NPU_PRECISION_, W8), NV(NPU_PRECISION_, BF16X3),
	{ NULL, 0 }
};

static const struct name_value nms_algorithms[] = {
	NV(NPU_NMS_, WEIGHTED), NV(NPU_NMS_, HARD),
	{ NULL, 0 }
};

static const struct name_value backends[] = {
	NV(NPU_BACKEND_, EMU), NV(NPU_BACKEND_, KERNEL),
	{ NULL, 0 }
};

/* PyModule_AddObjectRef() that takes the reference (NULL: an error is set). */
static int module_add(PyObject *m, const char *name, PyObject *obj)
{
	int rc = obj ? PyModule_AddObjectRef(m, name, obj) : -1;

	Py_XDECREF(obj);
	return rc;
}

/* {name: value} for a table; dtypes also carry npu_dtype_str's name. */
static int add_table(PyObject *m, const char *attr, const struct name_value *t)
{
	PyObject *d = PyDict_New();

	if (!d)
		return -1;
	for (; t->name; t++) {
		PyObject *v = PyLong_FromLong(t->value);

		if (!v || PyDict_SetItemString(d, t->name, v) < 0) {
			Py_XDECREF(v);
			Py_DECREF(d);
			return -1;
		}
		Py_DECREF(v);
	}
	return module_add(m, attr, d);
}

/* {code: (npu_dtype_str name, element size)} */
static int add_dtype_info(PyObject *m)
{
	PyObject *d = PyDict_New();

	if (!d)
		return -1;
	for (const struct name_value *t = dtypes; t->name; t++) {
		PyObject *k = PyLong_FromLong(t->value);
		PyObject *v = Py_BuildValue("(sn)", npu_dtype_str((npu_dtype)t->value),
					    (Py_ssize_t)npu_dtype_size((npu_dtype)t->value));
		int rc = k && v ? PyDict_SetItem(d, k, v) : -1;

		Py_XDECREF(k);
		Py_XDECREF(v);
		if (rc < 0) {
			Py_DECREF(d);
			return -1;
		}
	}
	return module_add(m, "DTYPE_INFO", d);
}

static PyMethodDef methods[] = {
	{ "_set_error_class", set_error_class, METH_O, "Register npu.Error." },
	{ "status_str", status_str, METH_O, "npu_status_str(code)." },
	{ "devices", npx_devices, METH_NOARGS, "npu_device_list(): a list of info dicts." },
	{ NULL, NULL, 0, NULL }
};

static struct PyModuleDef moddef = {
	PyModuleDef_HEAD_INIT, "npu._npu", "The C half of the npu module (libnpu's API).",
	-1, methods, NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit__npu(void);
PyMODINIT_FUNC PyInit__npu(void)
{
	PyTypeObject *types[] = { &npx_device_type, &npx_model_type, &npx_job_type,
				  &npx_labels_type };
	PyObject *m = PyModule_Create(&moddef);

	if (!m)
		return NULL;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (PyModule_AddType(m, types[i]) < 0)
			goto fail;
	if (PyModule_AddFunctions(m, npx_post_methods) < 0 ||
	    add_table(m, "STATUS", statuses) < 0 || add_table(m, "DTYPE", dtypes) < 0 ||
	    add_table(m, "PRECISION", precisions) < 0 ||
	    add_table(m, "NMS_ALGORITHM", nms_algorithms) < 0 ||
	    add_table(m, "BACKEND", backends) < 0 || add_dtype_info(m) < 0 ||
	    PyModule_AddIntConstant(m, "MAX_RANK", NPU_MAX_RANK) < 0 ||
	    module_add(m, "HEADER_VERSION", Py_BuildValue("(iii)", NPU_LIB_VERSION_MAJOR,
							     NPU_LIB_VERSION_MINOR,
							     NPU_LIB_VERSION_PATCH)) < 0)
		goto fail;
	return m;
fail:
	Py_DECREF(m);
	return NULL;
}
