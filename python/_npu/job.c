// SPDX-License-Identifier: MIT
/*
 * npu._npu.Job: a run started by Model.submit() (npu_job).  It keeps its
 * model alive, holds the model's lock and the output buffers until it is
 * waited for, and waits (without the GIL) when dropped unwaited, so no run
 * ever writes into memory Python has freed.
 */
#include "npuext.h"

struct npx_job {
	PyObject_HEAD
	npx_model *model;	/* NULL once finished */
	npu_job *job;
	npu_tensor *out;	/* npu_submit() keeps this pointer until the wait */
	Py_buffer *views;
	Py_ssize_t nout;
	PyObject *result;	/* the run's result once waited for */
	npu_status status;	/* a failed run's status ... */
	PyObject *error;	/* ... and message, raised again by a later wait() */
};

void npx_job_attach(npx_job *j, npx_model *m, npu_job *job, npu_tensor *out, Py_buffer *views,
		    Py_ssize_t n)
{
	j->model = (npx_model *)Py_NewRef(m);
	j->job = job;
	j->out = out;
	j->views = views;
	j->nout = n;
}

/* The run is over (waited for or failed): free it and give the model back. */
static void finish(npx_job *self)
{
	npx_model *m = self->model;

	npu_job_free(self->job);	/* finished: returns at once */
	self->job = NULL;
	npx_release_views(self->views, self->nout);
	PyMem_Free(self->out);
	self->views = NULL;
	self->out = NULL;
	self->nout = 0;
	m->job_pending = 0;
	PyThread_release_lock(m->lock);
	self->model = NULL;
	Py_DECREF(m);
}

static PyObject *job_wait(npx_job *self, PyObject *args)
{
	long long timeout_ns = -1;
	npu_status s;

	if (!PyArg_ParseTuple(args, "|L:wait", &timeout_ns))
		return NULL;
	if (self->result)
		return Py_NewRef(self->result);
	if (self->error)
		return npx_raise_msg(self->status, "%s", PyUnicode_AsUTF8(self->error));
	if (!self->model)
		return npx_raise_msg(NPU_ERR_INVALID_ARG, "the job was never submitted");
	Py_BEGIN_ALLOW_THREADS
	s = npu_job_wait(self->job, timeout_ns);
	Py_END_ALLOW_THREADS
	if (s == NPU_ERR_TIMEOUT)
		return npx_raise(s);	/* still running: wait again */
	if (s == NPU_OK) {
		self->result = npx_model_run_result(self->model);
	} else {
		self->status = s;
		self->error = PyUnicode_FromString(npu_last_error());
		npx_raise(s);
	}
	finish(self);
	return self->result ? Py_NewRef(self->result) : NULL;
}

static PyObject *job_finished(npx_job *self, void *closure)
{
	(void)closure;
	return PyBool_FromLong(self->model == NULL);
}

static void job_dealloc(npx_job *self)
{
	if (self->model) {
		npu_job *job = self->job;

		/* Dropped unwaited: the device may still write the outputs. */
		Py_BEGIN_ALLOW_THREADS
		npu_job_wait(job, -1);
		Py_END_ALLOW_THREADS
		finish(self);
	}
	Py_XDECREF(self->result);
	Py_XDECREF(self->error);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef job_methods[] = {
	{ "wait", (PyCFunction)job_wait, METH_VARARGS,
	  "wait(timeout_ns=-1): the run's result, as Model.run() returns it; "
	  "npu.Error TIMEOUT if it is still running." },
	{ NULL, NULL, 0, NULL }
};

static PyGetSetDef job_getset[] = {
	{ "finished", (getter)job_finished, NULL, "True once waited for.", NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};

PyTypeObject npx_job_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "npu._npu.Job",
	.tp_doc = "A submitted run (npu_job); made by Model.submit().",
	.tp_basicsize = sizeof(npx_job),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_dealloc = (destructor)job_dealloc,
	.tp_methods = job_methods,
	.tp_getset = job_getset,
};
