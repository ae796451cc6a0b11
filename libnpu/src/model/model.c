// SPDX-License-Identifier: MIT
/*
 * npu_model: loading (native or ONNX), saving, introspection.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ir/npu_ir.h"
#include "model/npu_model_priv.h"
#include "onnx/npu_onnx.h"

void npu_compile_options_init(npu_compile_options *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->struct_size = sizeof(*opts);
}

/*
 * Load @data; an ONNX model's external data is read from side files in
 * @model_dir (the folder of the model file; NULL from memory: refused).
 */
static npu_status load_in(const void *data, size_t size, const char *model_dir,
			  npu_device *dev, const npu_compile_options *opts, npu_model **out)
{
	npu_compile_options o;
	struct npu_cmodel *cm = NULL;
	npu_model *m;
	npu_status st;

	if (!out)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_model_load_memory: NULL output");
	*out = NULL;
	if (!data || !size)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_model_load_memory: no data");
	npu_compile_options_init(&o);
	if (opts) {
		if (opts->struct_size < sizeof(size_t) || opts->struct_size > sizeof(o))
			return npu_fail(NPU_ERR_INVALID_ARG,
					"npu_compile_options.struct_size %zu: call npu_compile_options_init()",
					opts->struct_size);
		memcpy(&o, opts, opts->struct_size);
	}
	if (npu_cmodel_is_native(data, size))
		st = npu_cmodel_read(data, size, &cm);
	else
		st = npu_compile_onnx_in(data, size, model_dir, dev, &o, &cm);
	if (st)
		return st;
	m = calloc(1, sizeof(*m));
	if (!m) {
		npu_cmodel_free(cm);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	m->cm = cm;
	*out = m;
	return NPU_OK;
}

npu_status npu_model_load_memory(const void *data, size_t size, npu_device *dev,
				 const npu_compile_options *opts,
				 npu_model **out)
{
	return load_in(data, size, NULL, dev, opts, out);
}

/* The folder of file @path ("." for a bare name), malloc'd. */
static char *folder_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;
	char *d;

	if (!slash)
		return strdup(".");
	if (n == 0)
		n = 1;	/* "/model.onnx": the root */
	d = malloc(n + 1);
	if (d) {
		memcpy(d, path, n);
		d[n] = '\0';
	}
	return d;
}

/* Read a whole file; *buf is malloc'd. */
static npu_status read_file(const char *path, void **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat sb;
	void *p;

	if (!f)
		return npu_fail(NPU_ERR_IO, "cannot open model '%s': %s", path, strerror(errno));
	if (fstat(fileno(f), &sb) || !S_ISREG(sb.st_mode)) {
		fclose(f);
		return npu_fail(NPU_ERR_IO, "model '%s' is not a regular file", path);
	}
	p = malloc(sb.st_size ? (size_t)sb.st_size : 1);
	if (!p) {
		fclose(f);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory reading '%s'", path);
	}
	if (fread(p, 1, (size_t)sb.st_size, f) != (size_t)sb.st_size) {
		free(p);
		fclose(f);
		return npu_fail(NPU_ERR_IO, "cannot read model '%s'", path);
	}
	fclose(f);
	*buf = p;
	*len = (size_t)sb.st_size;
	return NPU_OK;
}

npu_status npu_model_load_file(const char *path, npu_device *dev,
			       const npu_compile_options *opts, npu_model **out)
{
	void *buf = NULL;
	char *dir;
	size_t len = 0;
	npu_status st;

	if (out)
		*out = NULL;
	if (!path || !out)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_model_load_file: NULL argument");
	st = read_file(path, &buf, &len);
	if (st)
		return st;
	if (!len) {
		free(buf);
		return npu_fail(NPU_ERR_FORMAT, "model '%s' is empty", path);
	}
	dir = folder_of(path);
	st = dir ? load_in(buf, len, dir, dev, opts, out) :
		   npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	free(dir);
	free(buf);
	if (st) {
		/* Prefix the file name to the detailed message. */
		char msg[1024];

		snprintf(msg, sizeof(msg), "%s", npu_last_error());
		npu_fail(st, "%s: %s", path, msg);
	}
	return st;
}

void npu_declared_inputs_free(npu_tensor_info *infos, size_t count)
{
	for (size_t i = 0; infos && i < count; i++)
		free((char *)infos[i].name);
	free(infos);
}

/* Graph input @k of @g as a tensor info; its name malloc'd. */
static npu_status declared_info(const npu_ir_graph *g, int k, npu_tensor_info *t)
{
	const npu_ir_tensor *x = &g->tensors[g->inputs[k]];
	bool open = x->rank < 0;

	t->name = strdup(x->name);
	if (!t->name)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	t->dtype = x->dtype;
	t->rank = x->rank;	/* -1: no declared shape */
	for (int d = 0; d < t->rank; d++) {
		t->dims[d] = x->dims[d] < 0 ? -1 : x->dims[d];
		open |= x->dims[d] < 0;
	}
	t->bytes = open ? 0 : (size_t)npu_ir_numel(x) * npu_dtype_size(x->dtype);
	return NPU_OK;
}

npu_status npu_model_declared_inputs(const char *path, npu_tensor_info **infos, size_t *count)
{
	npu_ir_graph *g = NULL;
	npu_tensor_info *t = NULL;
	void *buf = NULL;
	char *dir = NULL;
	size_t len = 0;
	npu_status st;

	if (!path || !infos || !count)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_model_declared_inputs: NULL argument");
	*infos = NULL;
	*count = 0;
	st = read_file(path, &buf, &len);
	if (st)
		return st;
	if (npu_cmodel_is_native(buf, len)) {
		free(buf);
		return npu_fail(NPU_ERR_FORMAT, "'%s' is a compiled model: its inputs have the "
				"shapes it was compiled with (npu_model_input_info)", path);
	}
	dir = folder_of(path);
	st = dir ? npu_onnx_parse_dir(buf, len, dir, &g) : npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	free(dir);
	free(buf);
	if (!st) {
		t = calloc((size_t)(g->n_inputs ? g->n_inputs : 1), sizeof(*t));
		if (!t)
			st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	for (int k = 0; !st && k < g->n_inputs; k++) {
		st = declared_info(g, k, &t[k]);
		*count = st ? (size_t)k : (size_t)k + 1;
	}
	npu_ir_graph_free(g);
	if (st) {
		npu_declared_inputs_free(t, *count);
		*count = 0;
		return st;
	}
	*infos = t;
	return NPU_OK;
}

npu_status npu_model_save(const npu_model *model, const char *path)
{
	uint8_t *buf;
	size_t len;
	npu_status st;
	FILE *f;

	if (!model || !path)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_model_save: NULL argument");
	st = npu_cmodel_write(model->cm, &buf, &len);
	if (st)
		return st;
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		int err = errno;

		free(buf);
		return npu_fail(NPU_ERR_IO, "cannot write '%s': %s", path, strerror(err));
	}
	free(buf);
	return NPU_OK;
}

void npu_model_free(npu_model *model)
{
	if (!model)
		return;
	npu_cmodel_free(model->cm);
	free(model);
}

size_t npu_model_input_count(const npu_model *model)
{
	return model ? model->cm->ninputs : 0;
}

size_t npu_model_output_count(const npu_model *model)
{
	return model ? model->cm->noutputs : 0;
}

npu_status npu_model_input_info(const npu_model *model, size_t index,
				npu_tensor_info *info)
{
	if (!model || !info)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_model_input_info: NULL argument");
	if (index >= model->cm->ninputs)
		return npu_fail(NPU_ERR_NOT_FOUND, "the model has %u inputs, no input %zu",
				model->cm->ninputs, index);
	*info = model->cm->inputs[index].info;
	return NPU_OK;
}

npu_status npu_model_output_info(const npu_model *model, size_t index,
				 npu_tensor_info *info)
{
	if (!model || !info)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_model_output_info: NULL argument");
	if (index >= model->cm->noutputs)
		return npu_fail(NPU_ERR_NOT_FOUND, "the model has %u outputs, no output %zu",
				model->cm->noutputs, index);
	*info = model->cm->outputs[index].info;
	return NPU_OK;
}

unsigned npu_model_batch(const npu_model *model)
{
	return model ? npu_cmodel_batch(model->cm) : 0;
}

unsigned npu_model_clusters(const npu_model *model)
{
	return model ? model->cm->nclusters : 0;
}

npu_status npu_model_get_info(const npu_model *model, npu_model_info *info)
{
	npu_model_info all = { .struct_size = sizeof(all) };
	const struct npu_cmodel *cm;
	size_t size;

	if (!model || !info)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_model_get_info: NULL argument");
	size = info->struct_size;
	if (size < sizeof(size_t))
		return npu_fail(NPU_ERR_INVALID_ARG,
				"npu_model_info.struct_size %zu: set it to sizeof(npu_model_info)",
				size);
	cm = model->cm;
	all.batch = npu_cmodel_batch(cm);
	all.clusters = cm->nclusters;
	all.steps = cm->nsteps;
	all.host_steps = npu_cmodel_host_steps(cm);
	all.host_nodes = cm->fallback_ops ? cm->fallback_ops : "";
	all.notes = cm->notes ? cm->notes : "";
	for (uint32_t i = 0; i < cm->nsegs; i++) {
		uint64_t *b = NULL;

		switch (cm->segs[i].kind) {
		case NPU_SEG_CONST: b = &all.const_bytes; break;
		case NPU_SEG_PROGRAM: b = &all.program_bytes; break;
		case NPU_SEG_SCRATCH: b = &all.scratch_bytes; break;
		case NPU_SEG_IO: b = &all.io_bytes; break;
		case NPU_SEG_STATE: b = &all.state_bytes; break;
		}
		if (b)
			*b += cm->segs[i].size;
	}
	memcpy((char *)info + sizeof(size_t), (const char *)&all + sizeof(size_t),
	       (size < sizeof(all) ? size : sizeof(all)) - sizeof(size_t));
	return NPU_OK;
}
