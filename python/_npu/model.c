// SPDX-License-Identifier: MIT
/*
 * npu._npu.Model: a compiled model (npu_model) and the one context it runs
 * in on its device.  Runs release the GIL; the model's lock keeps one run
 * (or submitted job) on the context at a time, so the stats and output
 * shapes read after a run are that run's own.
 */
#include <string.h>

#include "npuext.h"

static int is_url(const char *s)
{
	return !strncmp(s, "http://", 7) || !strncmp(s, "https://", 8) ||
	       !strncmp(s, "file://", 7);
}

/* Fill @shapes from a sequence of (name, dims) pairs; names stay owned by @seq. */
static int parse_shapes(PyObject *seq, npu_input_shape **shapes, size_t *n)
{
	Py_ssize_t len;

	*shapes = NULL;
	*n = 0;
	if (seq == Py_None)
		return 0;
	len = PySequence_Size(seq);
	if (len < 0)
		return -1;
	*shapes = PyMem_Calloc((size_t)len ? (size_t)len : 1, sizeof(**shapes));
	if (!*shapes) {
		PyErr_NoMemory();
		return -1;
	}
	for (Py_ssize_t i = 0; i < len; i++) {
		npu_input_shape *s = &(*shapes)[i];
		PyObject *item = PySequence_GetItem(seq, i), *dims;
		int ok;

		if (!item)
			return -1;
		/* The name's UTF-8 lives as long as the str, which @seq holds. */
		ok = PyArg_ParseTuple(item, "sO", &s->name, &dims);
		Py_DECREF(item);
		if (!ok)
			return -1;
		s->rank = (int)PySequence_Size(dims);
		if (s->rank < 0)
			return -1;
		if (s->rank > NPU_MAX_RANK) {
			npx_raise_msg(NPU_ERR_INVALID_ARG, "shapes['%s']: rank %d; at most %d dims",
				      s->name, s->rank, NPU_MAX_RANK);
			return -1;
		}
		for (int d = 0; d < s->rank; d++) {
			PyObject *v = PySequence_GetItem(dims, d);

			s->dims[d] = v ? PyLong_AsLongLong(v) : -1;
			Py_XDECREF(v);
			if (PyErr_Occurred())
				return -1;
		}
		*n = (size_t)i + 1;
	}
	return 0;
}

static int model_init(npx_model *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "source", "device", "precision", "shapes", "clusters",
				  "batch", "allow_cpu_fallback", "calibration_dir",
				  "max_loop_iterations", "sha256", "offline", NULL };
	PyObject *source, *device, *shapes_seq = Py_None;
	const char *calib = NULL, *sha256 = NULL;
	int precision = 0, fallback = 0, offline = 0;
	npu_fetch_options fetch;
	unsigned clusters = 0, batch = 0, max_loop = 0;
	npu_compile_options opts;
	npu_input_shape *shapes = NULL;
	size_t nshapes = 0;
	npu_model *model = NULL;
	npu_context *ctx = NULL;
	npu_status s;
	Py_buffer mem = { 0 };
	PyObject *path_bytes = NULL;
	const char *path = NULL;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "OO!|iOIIpzIzp:Model", kwlist, &source,
					 &npx_device_type, &device, &precision, &shapes_seq,
					 &clusters, &batch, &fallback, &calib, &max_loop, &sha256,
					 &offline))
		return -1;
	if (self->model) {
		npx_raise_msg(NPU_ERR_INVALID_ARG, "the model is already loaded");
		return -1;
	}
	if (!((npx_device *)device)->dev) {
		npx_raise_msg(NPU_ERR_INVALID_ARG, "the device is closed");
		return -1;
	}
	if (PyUnicode_Check(source)) {
		/* A path's bytes as the OS has them (os.fsencode), not UTF-8. */
		if (!PyUnicode_FSConverter(source, &path_bytes))
			return -1;
		path = PyBytes_AS_STRING(path_bytes);
	} else if (npx_get_buffer(source, &mem, 0, "Model(source)")) {
		return -1;
	}
	if (parse_shapes(shapes_seq, &shapes, &nshapes))
		goto out;
	npu_compile_options_init(&opts);
	opts.precision = (npu_precision)precision;
	opts.calibration_dir = calib;
	opts.clusters = clusters;
	opts.batch = batch;
	opts.allow_cpu_fallback = fallback;
	opts.input_shapes = shapes;
	opts.n_input_shapes = nshapes;
	opts.max_loop_iterations = max_loop;
	npu_fetch_options_init(&fetch);
	fetch.sha256 = sha256;
	fetch.offline = offline;
	if ((sha256 || offline) && !(path && is_url(path))) {
		npx_raise_msg(NPU_ERR_INVALID_ARG, "sha256 and offline apply to a model given by "
			      "URL (http://, https://, file://)");
		goto out;
	}
	{
		npu_device *dev = ((npx_device *)device)->dev;

		/* In use from here: another thread's close() must not free it. */
		((npx_device *)device)->users++;
		Py_BEGIN_ALLOW_THREADS
		if (path && is_url(path))
			s = npu_model_load_url(path, &fetch, dev, &opts, &model);
		else if (path)
			s = npu_model_load_file(path, dev, &opts, &model);
		else
			s = npu_model_load_memory(mem.buf, (size_t)mem.len, dev, &opts, &model);
		if (s == NPU_OK)
			s = npu_context_create(dev, model, 0, &ctx);
		Py_END_ALLOW_THREADS
	}
	if (s == NPU_OK && !(self->lock = PyThread_allocate_lock())) {
		PyErr_NoMemory();
		s = NPU_ERR_NO_MEMORY;
	} else if (s != NPU_OK) {
		npx_raise(s);
	}
	if (s != NPU_OK) {
		((npx_device *)device)->users--;
		npu_context_destroy(ctx);
		npu_model_free(model);
		goto out;
	}
	/* The model keeps the device's use (users) until it is released. */
	self->model = model;
	self->ctx = ctx;
	self->device = (npx_device *)Py_NewRef(device);
out:
	PyMem_Free(shapes);
	Py_XDECREF(path_bytes);
	if (mem.obj)
		PyBuffer_Release(&mem);
	return self->model ? 0 : -1;
}

static int check_open(npx_model *self)
{
	if (self->model)
		return 0;
	npx_raise_msg(NPU_ERR_INVALID_ARG, "the model is closed");
	return -1;
}

/* Take the model's lock, letting other threads run while waiting; the
 * model may have been closed meanwhile: 0 if locked and still open. */
static int lock_model(npx_model *self)
{
	if (check_open(self))
		return -1;
	if (self->job_pending) {
		npx_raise_msg(NPU_ERR_INVALID_ARG, "a job submitted on this model is not finished: "
			      "call its wait() first (a model runs one job at a time)");
		return -1;
	}
	if (!PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) {
		Py_BEGIN_ALLOW_THREADS
		PyThread_acquire_lock(self->lock, WAIT_LOCK);
		Py_END_ALLOW_THREADS
	}
	if (!self->model) {
		PyThread_release_lock(self->lock);
		return check_open(self);
	}
	return 0;
}

static PyObject *tensor_info_tuple(const npu_tensor_info *t)
{
	PyObject *dims = PyTuple_New(t->rank > 0 ? t->rank : 0);

	for (int d = 0; dims && d < t->rank; d++) {
		PyObject *v = PyLong_FromLongLong(t->dims[d]);

		if (!v) {
			Py_CLEAR(dims);
			break;
		}
		PyTuple_SET_ITEM(dims, d, v);
	}
	if (!dims)
		return NULL;
	return Py_BuildValue("(NiNndi)", npx_str(t->name), (int)t->dtype, dims,
			     (Py_ssize_t)t->bytes, (double)t->scale, (int)t->zero_point);
}

static PyObject *io_info(npx_model *self, PyObject *arg, int output)
{
	Py_ssize_t i = PyLong_AsSsize_t(arg);
	npu_tensor_info t;
	npu_status s;

	if (i == -1 && PyErr_Occurred())
		return NULL;
	if (check_open(self))
		return NULL;
	if (i < 0)
		return npx_raise_msg(NPU_ERR_NOT_FOUND, "no %s %zd", output ? "output" : "input", i);
	s = output ? npu_model_output_info(self->model, (size_t)i, &t)
		   : npu_model_input_info(self->model, (size_t)i, &t);
	return s == NPU_OK ? tensor_info_tuple(&t) : npx_raise(s);
}

static PyObject *model_input_info(npx_model *self, PyObject *arg)
{
	return io_info(self, arg, 0);
}

static PyObject *model_output_info(npx_model *self, PyObject *arg)
{
	return io_info(self, arg, 1);
}

static PyObject *model_counts(npx_model *self, PyObject *noargs)
{
	(void)noargs;
	if (check_open(self))
		return NULL;
	return Py_BuildValue("(nn)", (Py_ssize_t)npu_model_input_count(self->model),
			     (Py_ssize_t)npu_model_output_count(self->model));
}

static PyObject *model_info(npx_model *self, PyObject *noargs)
{
	npu_model_info mi = { .struct_size = sizeof(mi) };
	npu_status s;

	(void)noargs;
	if (check_open(self))
		return NULL;
	s = npu_model_get_info(self->model, &mi);
	if (s != NPU_OK)
		return npx_raise(s);
	return Py_BuildValue("{s:I,s:I,s:I,s:K,s:K,s:K,s:K,s:K,s:I,s:N,s:N}",
			     "batch", mi.batch, "clusters", mi.clusters, "steps", mi.steps,
			     "const_bytes", (unsigned long long)mi.const_bytes,
			     "program_bytes", (unsigned long long)mi.program_bytes,
			     "scratch_bytes", (unsigned long long)mi.scratch_bytes,
			     "io_bytes", (unsigned long long)mi.io_bytes,
			     "state_bytes", (unsigned long long)mi.state_bytes,
			     "host_steps", mi.host_steps,
			     "host_nodes", npx_str(mi.host_nodes), "notes", npx_str(mi.notes));
}

static PyObject *model_save(npx_model *self, PyObject *args)
{
	PyObject *path;
	npu_status s;

	if (!PyArg_ParseTuple(args, "O&:save", PyUnicode_FSConverter, &path))
		return NULL;
	/* The lock keeps close() on another thread from freeing the model. */
	if (lock_model(self)) {
		Py_DECREF(path);
		return NULL;
	}
	Py_BEGIN_ALLOW_THREADS
	s = npu_model_save(self->model, PyBytes_AS_STRING(path));
	Py_END_ALLOW_THREADS
	PyThread_release_lock(self->lock);
	Py_DECREF(path);
	if (s != NPU_OK)
		return npx_raise(s);
	Py_RETURN_NONE;
}

/* npu_context_trace(max_events): record the runs' timeline (0 stops). */
static PyObject *model_trace(npx_model *self, PyObject *args)
{
	unsigned long long max_events;
	npu_status s;

	if (!PyArg_ParseTuple(args, "K:trace", &max_events))
		return NULL;
	if (lock_model(self))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	s = npu_context_trace(self->ctx, (size_t)max_events);
	Py_END_ALLOW_THREADS
	PyThread_release_lock(self->lock);
	if (s != NPU_OK)
		return npx_raise(s);
	Py_RETURN_NONE;
}

/* npu_context_write_trace(path): the last run's timeline as Chrome trace JSON. */
static PyObject *model_write_trace(npx_model *self, PyObject *args)
{
	PyObject *path;
	npu_status s;

	if (!PyArg_ParseTuple(args, "O&:write_trace", PyUnicode_FSConverter, &path))
		return NULL;
	if (lock_model(self)) {
		Py_DECREF(path);
		return NULL;
	}
	Py_BEGIN_ALLOW_THREADS
	s = npu_context_write_trace(self->ctx, PyBytes_AS_STRING(path));
	Py_END_ALLOW_THREADS
	PyThread_release_lock(self->lock);
	Py_DECREF(path);
	if (s != NPU_OK)
		return npx_raise(s);
	Py_RETURN_NONE;
}

void npx_release_views(Py_buffer *views, Py_ssize_t n)
{
	for (Py_ssize_t i = 0; views && i < n; i++)
		if (views[i].obj)
			PyBuffer_Release(&views[i]);
	PyMem_Free(views);
}

int npx_tensors(PyObject *list, int writable, npu_tensor **tensors, Py_buffer **views,
		Py_ssize_t *n)
{
	PyObject *seq = PySequence_Fast(list, "a list of (dtype, buffer) pairs is needed");
	Py_ssize_t len;

	*tensors = NULL;
	*views = NULL;
	*n = 0;
	if (!seq)
		return -1;
	len = PySequence_Fast_GET_SIZE(seq);
	*tensors = PyMem_Calloc((size_t)len ? (size_t)len : 1, sizeof(**tensors));
	*views = PyMem_Calloc((size_t)len ? (size_t)len : 1, sizeof(**views));
	if (!*tensors || !*views) {
		PyErr_NoMemory();
		goto fail;
	}
	for (Py_ssize_t i = 0; i < len; i++) {
		PyObject *buf;
		int dtype;

		if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "iO", &dtype, &buf) ||
		    npx_get_buffer(buf, &(*views)[i], writable, writable ? "output" : "input"))
			goto fail;
		*n = i + 1;
		(*tensors)[i].dtype = (npu_dtype)dtype;
		(*tensors)[i].data = (*views)[i].buf;
		(*tensors)[i].bytes = (size_t)(*views)[i].len;
	}
	Py_DECREF(seq);
	return 0;
fail:
	Py_DECREF(seq);
	npx_release_views(*views, *n);
	PyMem_Free(*tensors);
	*views = NULL;
	*tensors = NULL;
	*n = 0;
	return -1;
}

static PyObject *step_tuple(const npu_step_info *si)
{
	return Py_BuildValue("(NKiNd)", npx_str(si->label),
			     (unsigned long long)si->device_cycles, si->on_host, npx_str(si->op),
			     si->host_us);
}

PyObject *npx_model_run_result(npx_model *m)
{
	npu_run_stats rs;
	size_t nout = npu_model_output_count(m->model);
	PyObject *steps = NULL, *outs = NULL;
	npu_status s = npu_context_last_run(m->ctx, &rs);

	if (s != NPU_OK)
		return npx_raise(s);
	steps = PyList_New(0);
	for (size_t i = 0; steps && i < rs.steps; i++) {
		npu_step_info si = { .struct_size = sizeof(si) };
		PyObject *t;

		if ((s = npu_context_last_run_step(m->ctx, i, &si)) != NPU_OK) {
			Py_CLEAR(steps);
			return npx_raise(s);
		}
		t = step_tuple(&si);
		if (!t || PyList_Append(steps, t) < 0)
			Py_CLEAR(steps);
		Py_XDECREF(t);
	}
	outs = steps ? PyList_New((Py_ssize_t)nout) : NULL;
	for (size_t i = 0; outs && i < nout; i++) {
		npu_tensor_info t;
		PyObject *v;

		if ((s = npu_context_last_run_output_info(m->ctx, i, &t)) != NPU_OK) {
			Py_DECREF(steps);
			Py_DECREF(outs);
			return npx_raise(s);
		}
		v = tensor_info_tuple(&t);
		if (!v)
			Py_CLEAR(outs);
		else
			PyList_SET_ITEM(outs, (Py_ssize_t)i, v);
	}
	if (!outs) {
		Py_XDECREF(steps);
		return NULL;
	}
	return Py_BuildValue("{s:K,s:d,s:d,s:N,s:N}",
			     "device_cycles", (unsigned long long)rs.device_cycles,
			     "device_us", rs.device_us, "wall_us", rs.wall_us,
			     "steps", steps, "outputs", outs);
}

static PyObject *model_run(npx_model *self, PyObject *args)
{
	PyObject *in_list, *out_list, *result = NULL;
	npu_tensor *in = NULL, *out = NULL;
	Py_buffer *in_views = NULL, *out_views = NULL;
	Py_ssize_t nin = 0, nout = 0;
	npu_status s;

	if (!PyArg_ParseTuple(args, "OO:run", &in_list, &out_list))
		return NULL;
	if (npx_tensors(in_list, 0, &in, &in_views, &nin) ||
	    npx_tensors(out_list, 1, &out, &out_views, &nout))
		goto out;
	if (lock_model(self))
		goto out;
	Py_BEGIN_ALLOW_THREADS
	s = npu_run(self->ctx, in, (size_t)nin, out, (size_t)nout);
	Py_END_ALLOW_THREADS
	result = s == NPU_OK ? npx_model_run_result(self) : npx_raise(s);
	PyThread_release_lock(self->lock);
out:
	npx_release_views(in_views, nin);
	npx_release_views(out_views, nout);
	PyMem_Free(in);
	PyMem_Free(out);
	return result;
}

/* The job owns the output views and tensors until it is waited for. */
static PyObject *model_submit(npx_model *self, PyObject *args)
{
	PyObject *in_list, *out_list;
	npu_tensor *in = NULL, *out = NULL;
	Py_buffer *in_views = NULL, *out_views = NULL;
	Py_ssize_t nin = 0, nout = 0;
	npu_job *job = NULL;
	npu_status s;
	PyObject *jobobj = NULL;

	if (!PyArg_ParseTuple(args, "OO:submit", &in_list, &out_list))
		return NULL;
	if (npx_tensors(in_list, 0, &in, &in_views, &nin) ||
	    npx_tensors(out_list, 1, &out, &out_views, &nout))
		goto fail;
	jobobj = npx_job_type.tp_alloc(&npx_job_type, 0);
	if (!jobobj || lock_model(self))
		goto fail;
	Py_BEGIN_ALLOW_THREADS
	s = npu_submit(self->ctx, in, (size_t)nin, out, (size_t)nout, &job);
	Py_END_ALLOW_THREADS
	if (s != NPU_OK) {
		npx_raise(s);
		PyThread_release_lock(self->lock);
		goto fail;
	}
	/* Inputs are copied by npu_submit(): their views can go now. */
	npx_release_views(in_views, nin);
	PyMem_Free(in);
	self->job_pending = 1;
	npx_job_attach((npx_job *)jobobj, self, job, out, out_views, nout);
	return jobobj;
fail:
	Py_XDECREF(jobobj);
	npx_release_views(in_views, nin);
	npx_release_views(out_views, nout);
	PyMem_Free(in);
	PyMem_Free(out);
	return NULL;
}

static void model_release(npx_model *self)
{
	npu_context *ctx = self->ctx;
	npu_model *model = self->model;

	self->ctx = NULL;
	self->model = NULL;
	Py_BEGIN_ALLOW_THREADS
	npu_context_destroy(ctx);
	npu_model_free(model);
	Py_END_ALLOW_THREADS
	if (self->device) {
		self->device->users--;
		Py_CLEAR(self->device);
	}
}

static PyObject *model_close(npx_model *self, PyObject *noargs)
{
	(void)noargs;
	if (!self->model)
		Py_RETURN_NONE;
	if (lock_model(self))
		return NULL;
	model_release(self);
	PyThread_release_lock(self->lock);
	Py_RETURN_NONE;
}

static PyObject *model_is_open(npx_model *self, void *closure)
{
	(void)closure;
	return PyBool_FromLong(self->model != NULL);
}

static void model_dealloc(npx_model *self)
{
	/* No job is left (each holds a reference), no run in progress (it
	 * holds one too): release without the lock. */
	if (self->model)
		model_release(self);
	if (self->lock)
		PyThread_free_lock(self->lock);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef model_methods[] = {
	{ "counts", (PyCFunction)model_counts, METH_NOARGS, "(inputs, outputs)." },
	{ "input_info", (PyCFunction)model_input_info, METH_O,
	  "(name, dtype, dims, bytes, scale, zero_point) of input i." },
	{ "output_info", (PyCFunction)model_output_info, METH_O, "As input_info, of output i." },
	{ "info", (PyCFunction)model_info, METH_NOARGS, "npu_model_get_info() as a dict." },
	{ "save", (PyCFunction)model_save, METH_VARARGS, "npu_model_save(path)." },
	{ "run", (PyCFunction)model_run, METH_VARARGS,
	  "run(inputs, outputs): lists of (dtype, buffer) by position; returns the run's "
	  "stats, steps and output shapes." },
	{ "submit", (PyCFunction)model_submit, METH_VARARGS, "As run(), returning a Job." },
	{ "trace", (PyCFunction)model_trace, METH_VARARGS, "npu_context_trace(max_events)." },
	{ "write_trace", (PyCFunction)model_write_trace, METH_VARARGS,
	  "npu_context_write_trace(path)." },
	{ "close", (PyCFunction)model_close, METH_NOARGS, "Free the context and the model." },
	{ NULL, NULL, 0, NULL }
};

static PyGetSetDef model_getset[] = {
	{ "is_open", (getter)model_is_open, NULL, "False after close().", NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};

PyTypeObject npx_model_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "npu._npu.Model",
	.tp_doc = "A compiled model and its context (npu_model, npu_context).",
	.tp_basicsize = sizeof(npx_model),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_new = PyType_GenericNew,
	.tp_init = (initproc)model_init,
	.tp_dealloc = (destructor)model_dealloc,
	.tp_methods = model_methods,
	.tp_getset = model_getset,
};
