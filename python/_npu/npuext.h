/* SPDX-License-Identifier: MIT */
/*
 * The C half of the Python module npu (the extension npu._npu): handles,
 * the GIL and raw memory.  The Python half (python/npu/) gives them their
 * numpy shapes and dtypes.  Struct layouts come from npu.h and are checked
 * by the compiler: nothing here restates one.
 *
 * Memory: tensors cross as Python buffers (numpy arrays the Python half
 * allocates); this module never hands out a pointer into libnpu memory, so
 * nothing a caller holds dangles after a model is closed.
 */
#ifndef NPUEXT_H
#define NPUEXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>

#include "npu.h"

/* Raise npu.Error for status @s with npu_last_error() as its message (call
 * on the thread that made the failing call, before any other libnpu call). */
PyObject *npx_raise(npu_status s);
/* Raise npu.Error for status @s with a message of this module's own. */
PyObject *npx_raise_msg(npu_status s, const char *fmt, ...);

/* A str from a name or message libnpu gives: UTF-8, invalid bytes (a model
 * may name a tensor with any bytes) replaced by U+FFFD rather than refused. */
PyObject *npx_str(const char *s);

/* A buffer argument: C-contiguous, of @min_bytes at least, writable if asked;
 * 0 on success, -1 with npu.Error raised. */
int npx_get_buffer(PyObject *obj, Py_buffer *view, int writable, const char *what);

/* Types and their registration (device.c, model.c, job.c, post.c). */
typedef struct npx_device {
	PyObject_HEAD
	npu_device *dev;
	/* Open models on it, and calls using it without the GIL (another
	 * thread could close it meanwhile): close() refuses while any. */
	Py_ssize_t users;
} npx_device;

typedef struct npx_model {
	PyObject_HEAD
	npu_model *model;
	npu_context *ctx;
	npx_device *device;	/* strong reference: outlives the context */
	/* One run of the context at a time: held by run() for its duration
	 * and by a submitted job until it is waited for or freed, so the stats
	 * and output shapes read after a run are that run's. */
	PyThread_type_lock lock;
	int job_pending;
} npx_model;

/* A submitted run (job.c): takes over @out, @views (the output buffers,
 * kept until the run is waited for) and the model's lock. */
typedef struct npx_job npx_job;
void npx_job_attach(npx_job *j, npx_model *m, npu_job *job, npu_tensor *out, Py_buffer *views,
		    Py_ssize_t n);

extern PyTypeObject npx_device_type;
extern PyTypeObject npx_model_type;
extern PyTypeObject npx_job_type;
extern PyTypeObject npx_labels_type;

PyObject *npx_devices(PyObject *self, PyObject *noargs);
/* The run's stats, steps and actual output shapes, read under the model's
 * lock right after the run (model.c; used by job.c). */
PyObject *npx_model_run_result(npx_model *m);
/* Build the npu_tensor array for run()/submit() from a list of (dtype,
 * buffer) pairs; views are filled and must be released with
 * npx_release_views().  0 or -1 with an exception. */
int npx_tensors(PyObject *list, int writable, npu_tensor **tensors, Py_buffer **views,
		Py_ssize_t *n);
void npx_release_views(Py_buffer *views, Py_ssize_t n);

/* Post-processing functions (post.c) for the module's method table. */
extern PyMethodDef npx_post_methods[];

#endif /* NPUEXT_H */
