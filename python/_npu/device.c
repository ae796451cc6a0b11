// SPDX-License-Identifier: MIT
/* npu._npu.Device (an npu_device) and devices() (npu_device_list). */
#include "npuext.h"

static PyObject *info_dict(const npu_device_info *i)
{
	return Py_BuildValue("{s:i,s:N,s:N,s:k,s:k,s:k,s:k,s:k,s:k,s:k,s:k,s:k,s:k,s:k}",
			     "backend", (int)i->backend, "path", npx_str(i->path), "driver", npx_str(i->driver),
			     "hw_version", (unsigned long)i->hw_version,
			     "clusters", (unsigned long)i->clusters,
			     "tpbs_per_cluster", (unsigned long)i->tpbs_per_cluster,
			     "mesh_x", (unsigned long)i->mesh_x, "mesh_y", (unsigned long)i->mesh_y,
			     "defect_mask", (unsigned long)i->defect_mask,
			     "healthy_mask", (unsigned long)i->healthy_mask,
			     "healthy_clusters", (unsigned long)i->healthy_clusters,
			     "hbsm_size", (unsigned long)i->hbsm_size,
			     "sram_size", (unsigned long)i->sram_size,
			     "clock_mhz", (unsigned long)i->clock_mhz);
}

PyObject *npx_devices(PyObject *self, PyObject *noargs)
{
	npu_device_info infos[16];
	size_t count = 0;
	npu_status s;
	PyObject *list;

	(void)self;
	(void)noargs;
	Py_BEGIN_ALLOW_THREADS
	s = npu_device_list(infos, sizeof(infos) / sizeof(infos[0]), &count);
	Py_END_ALLOW_THREADS
	if (s != NPU_OK)
		return npx_raise(s);
	if (count > sizeof(infos) / sizeof(infos[0]))
		count = sizeof(infos) / sizeof(infos[0]);
	list = PyList_New((Py_ssize_t)count);
	for (size_t i = 0; list && i < count; i++) {
		PyObject *d = info_dict(&infos[i]);

		if (!d) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, d);
	}
	return list;
}

static int device_init(npx_device *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "spec", NULL };
	const char *spec = NULL;
	npu_device *dev = NULL;
	npu_status s;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|z:Device", kwlist, &spec))
		return -1;
	if (self->dev) {
		npx_raise_msg(NPU_ERR_INVALID_ARG, "the device is already open");
		return -1;
	}
	Py_BEGIN_ALLOW_THREADS
	s = npu_device_open(spec, &dev);
	Py_END_ALLOW_THREADS
	if (s != NPU_OK) {
		npx_raise(s);
		return -1;
	}
	self->dev = dev;
	return 0;
}

static int device_check_open(npx_device *self)
{
	if (self->dev)
		return 0;
	npx_raise_msg(NPU_ERR_INVALID_ARG, "the device is closed");
	return -1;
}

static PyObject *device_info(npx_device *self, PyObject *noargs)
{
	npu_device_info info;
	npu_status s;

	(void)noargs;
	if (device_check_open(self))
		return NULL;
	s = npu_device_get_info(self->dev, &info);
	return s == NPU_OK ? info_dict(&info) : npx_raise(s);
}

/* Cumulative counters (npu_device_counters) as a dict of ints and lists. */
static PyObject *u64_list(const uint64_t *v, size_t n)
{
	PyObject *l = PyList_New((Py_ssize_t)n);

	for (size_t i = 0; l && i < n; i++) {
		PyObject *x = PyLong_FromUnsignedLongLong(v[i]);

		if (!x) {
			Py_CLEAR(l);
			break;
		}
		PyList_SET_ITEM(l, (Py_ssize_t)i, x);
	}
	return l;
}

static PyObject *device_counters(npx_device *self, PyObject *noargs)
{
	npu_device_counters c;
	npu_status s;
	PyObject *units;

	(void)noargs;
	if (device_check_open(self))
		return NULL;
	self->users++;
	Py_BEGIN_ALLOW_THREADS
	s = npu_device_read_counters(self->dev, &c);
	Py_END_ALLOW_THREADS
	self->users--;
	if (s != NPU_OK)
		return npx_raise(s);
	units = PyList_New(NPU_MAX_CLUSTERS);
	for (int i = 0; units && i < NPU_MAX_CLUSTERS; i++) {
		PyObject *u = u64_list(c.unit_busy[i], NPU_UNITS);

		if (!u) {
			Py_CLEAR(units);
			break;
		}
		PyList_SET_ITEM(units, i, u);
	}
	if (!units)
		return NULL;
	return Py_BuildValue("{s:k,s:K,s:N,s:N,s:N,s:N,s:K,s:N,s:N}",
			     "have", (unsigned long)c.have,
			     "cycles", (unsigned long long)c.cycles,
			     "cluster_busy", u64_list(c.cluster_busy, NPU_MAX_CLUSTERS),
			     "unit_busy", units,
			     "hbsm_conflicts", u64_list(c.hbsm_conflicts, NPU_MAX_CLUSTERS),
			     "dma_bytes", u64_list(c.dma_bytes, NPU_DMA_ENGINES),
			     "gsdu_bytes", (unsigned long long)c.gsdu_bytes,
			     "link_bytes", u64_list(c.link_bytes, NPU_MAX_LINKS),
			     "link_stalls", u64_list(c.link_stalls, NPU_MAX_LINKS));
}

static PyObject *device_close(npx_device *self, PyObject *noargs)
{
	(void)noargs;
	if (self->users) {
		return npx_raise_msg(NPU_ERR_INVALID_ARG, "the device is in use by %zd open "
				     "model(s) or call(s): close them (model.close()) before the "
				     "device", self->users);
	}
	if (self->dev) {
		npu_device *dev = self->dev;

		self->dev = NULL;
		Py_BEGIN_ALLOW_THREADS
		npu_device_close(dev);
		Py_END_ALLOW_THREADS
	}
	Py_RETURN_NONE;
}

static PyObject *device_is_open(npx_device *self, void *closure)
{
	(void)closure;
	return PyBool_FromLong(self->dev != NULL);
}

static void device_dealloc(npx_device *self)
{
	/* Models hold a reference: none is left when this runs. */
	if (self->dev)
		npu_device_close(self->dev);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef device_methods[] = {
	{ "info", (PyCFunction)device_info, METH_NOARGS, "npu_device_get_info() as a dict." },
	{ "counters", (PyCFunction)device_counters, METH_NOARGS,
	  "npu_device_read_counters() as a dict." },
	{ "close", (PyCFunction)device_close, METH_NOARGS, "npu_device_close()." },
	{ NULL, NULL, 0, NULL }
};

static PyGetSetDef device_getset[] = {
	{ "is_open", (getter)device_is_open, NULL, "False after close().", NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};

PyTypeObject npx_device_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "npu._npu.Device",
	.tp_doc = "An open NPU device (npu_device_open).",
	.tp_basicsize = sizeof(npx_device),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_new = PyType_GenericNew,
	.tp_init = (initproc)device_init,
	.tp_dealloc = (destructor)device_dealloc,
	.tp_methods = device_methods,
	.tp_getset = device_getset,
};
