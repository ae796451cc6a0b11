// SPDX-License-Identifier: MIT
/*
 * Post-training int8 quantization, calibrated from sample inputs
 * (npu_compile_options.precision = NPU_PRECISION_INT8).
 *
 * 1. Compile the float model with every convolution's input and output
 *    made a graph output, run it on the emulator over the calibration
 *    samples and record each tensor's range.
 * 2. Rewrite every float Conv as QuantizeLinear -> QLinearConv ->
 *    DequantizeLinear: activations uint8 with an asymmetric scale from
 *    their range (which always contains 0), weights int8 symmetric per
 *    output channel, bias int32 at scale x_scale * w_scale[oc].  The
 *    QLinearConv runs natively on the TCU; the rest stays float.
 *
 * Samples: every regular file in the calibration directory, sorted by
 * name, raw little-endian float32 of exactly the input's size or a .npy
 * file holding that many float32 values.  Models with one input only.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_lower.h"
#include "compile/npu_compile.h"
#include "compile/npu_ops.h"
#include "dev/npu_dev.h"
#include "model/npu_model_priv.h"
#include "onnx/npu_onnx.h"

#define MAX_SAMPLES 64

struct range {
	char *name;
	float lo, hi;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The float32 payload of a raw or .npy file of exactly @bytes. */
static npu_status read_sample(const char *path, size_t bytes, float *out)
{
	FILE *f = fopen(path, "rb");
	long len;
	size_t skip = 0;
	unsigned char hdr[10];

	if (!f)
		return npu_fail(NPU_ERR_IO, "calibration sample %s: cannot open", path);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	if (len >= 10 && fread(hdr, 1, 10, f) == 10 && !memcmp(hdr, "\x93NUMPY", 6)) {
		skip = hdr[6] == 1 ? 10 + (size_t)(hdr[8] | hdr[9] << 8) : 0;
		if (!skip) {
			fclose(f);
			return npu_fail(NPU_ERR_FORMAT, "calibration sample %s: .npy version %u",
					path, hdr[6]);
		}
	}
	if ((size_t)len < skip || (size_t)len - skip != bytes) {
		fclose(f);
		return npu_fail(NPU_ERR_SHAPE,
				"calibration sample %s holds %ld bytes of data; the input needs %zu (float32)",
				path, len - (long)skip, bytes);
	}
	fseek(f, (long)skip, SEEK_SET);
	if (fread(out, 1, bytes, f) != bytes) {
		fclose(f);
		return npu_fail(NPU_ERR_IO, "calibration sample %s: short read", path);
	}
	fclose(f);
	return NPU_OK;
}

static npu_status list_samples(const char *dir, char **names, int *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	*n = 0;
	if (!d)
		return npu_fail(NPU_ERR_IO, "calibration directory %s cannot be opened", dir);
	while ((e = readdir(d)) && *n < MAX_SAMPLES) {
		char path[1024];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		names[(*n)++] = strdup(path);
	}
	closedir(d);
	if (!*n)
		return npu_fail(NPU_ERR_INVALID_ARG, "calibration directory %s has no samples", dir);
	qsort(names, (size_t)*n, sizeof(*names), cmp_str);
	return NPU_OK;
}

static bool is_float_conv(const npu_ir_graph *g, const npu_ir_node *n)
{
	const npu_ir_tensor *w;

	if (n->dead || strcmp(n->op, "Conv"))
		return false;
	w = npu_ir_input(g, n, 1);
	return w && npu_ir_is_const(w) && w->dtype == NPU_DTYPE_FLOAT32 &&
	       npu_ir_input(g, n, 0)->dtype == NPU_DTYPE_FLOAT32;
}

static void add_output(npu_ir_graph *g, int t)
{
	int *o;

	if (t < 0 || npu_ir_is_graph_output(g, t) || npu_ir_is_const(&g->tensors[t]))
		return;
	for (int i = 0; i < g->n_inputs; i++)
		if (g->inputs[i] == t)
			return;
	o = realloc(g->outputs, (size_t)(g->n_outputs + 1) * sizeof(int));
	if (!o)
		return;
	g->outputs = o;
	g->outputs[g->n_outputs++] = t;
}

/* Step 1: ranges of conv inputs and outputs over the samples. */
static npu_status calibrate(const void *data, size_t size, const struct npu_compile_target *tgt,
			    const char *dir, struct range **out, int *nout)
{
	npu_ir_graph *g = NULL;
	struct npu_cmodel *cm = NULL;
	char *files[MAX_SAMPLES];
	int nfiles = 0;
	npu_device *dev = NULL;
	npu_context *ctx = NULL;
	struct npu_model model;
	struct range *r = NULL;
	float *x = NULL;
	npu_status st;

	st = npu_compile_parse(data, size, tgt, &g);
	if (!st && g->n_inputs != 1)
		st = npu_fail(NPU_ERR_UNSUPPORTED, "int8 calibration of a model with %d inputs",
			      g->n_inputs);
	if (!st && g->tensors[g->inputs[0]].dtype != NPU_DTYPE_FLOAT32)
		st = npu_fail(NPU_ERR_UNSUPPORTED, "int8 calibration of a %s input",
			      npu_dtype_str(g->tensors[g->inputs[0]].dtype));
	if (!st) {
		int n0 = g->n_nodes;

		for (int i = 0; i < n0; i++)
			if (is_float_conv(g, &g->nodes[i])) {
				add_output(g, g->nodes[i].inputs[0]);
				add_output(g, g->nodes[i].outputs[0]);
			}
	{
		/* Calibration runs one sample at a time. */
		struct npu_compile_target one = *tgt;

		one.batch = 1;
		st = npu_compile_ir(g, &one, &cm);
	}
	}
	if (!st)
		st = list_samples(dir, files, &nfiles);
	if (!st)
		st = npu_emu_open("emu", &dev);
	if (!st) {
		model.cm = cm;
		st = npu_context_create(dev, &model, 0, &ctx);
	}
	if (!st) {
		r = calloc(cm->noutputs, sizeof(*r));
		x = malloc(cm->inputs[0].info.bytes);
		if (!r || !x)
			st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		for (uint32_t i = 0; !st && i < cm->noutputs; i++) {
			r[i].name = strdup(cm->outputs[i].name);
			r[i].lo = r[i].hi = 0.0f;	/* ranges always contain 0 */
		}
	}
	for (int s = 0; !st && s < nfiles; s++) {
		npu_tensor in = { NULL, NPU_DTYPE_FLOAT32, x, cm->inputs[0].info.bytes };

		st = read_sample(files[s], in.bytes, x);
		if (!st)
			st = npu_run(ctx, &in, 1, NULL, 0);
		for (uint32_t i = 0; !st && i < cm->noutputs; i++) {
			const float *v;
			size_t bytes;

			npu_context_output_buffer(ctx, i, (void **)&v, &bytes);
			for (size_t k = 0; k < bytes / 4; k++) {
				if (isfinite(v[k])) {
					r[i].lo = fminf(r[i].lo, v[k]);
					r[i].hi = fmaxf(r[i].hi, v[k]);
				}
			}
		}
	}
	npu_context_destroy(ctx);
	npu_device_close(dev);
	if (!st) {
		*out = r;
		*nout = (int)cm->noutputs;
		r = NULL;
	}
	if (r)
		for (uint32_t i = 0; i < cm->noutputs; i++)
			free(r[i].name);
	free(r);
	free(x);
	for (int i = 0; i < nfiles; i++)
		free(files[i]);
	npu_cmodel_free(cm);
	npu_ir_graph_free(g);
	return st;
}

static const struct range *find_range(const struct range *r, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(r[i].name, name))
			return &r[i];
	return NULL;
}

/* uint8 scale and zero point covering [lo, hi] (which contains 0). */
static void affine(const struct range *r, float *scale, uint8_t *zp)
{
	float lo = r ? r->lo : -1.0f, hi = r ? r->hi : 1.0f;
	float s = (hi - lo) / 255.0f;

	if (!(s > 0))
		s = 1.0f / 255.0f;
	*scale = s;
	*zp = (uint8_t)fminf(255.0f, fmaxf(0.0f, nearbyintf(-lo / s)));
}

static npu_status cst(npu_ir_graph *g, npu_dtype dt, int rank, const int64_t *dims,
		      const void *v, size_t bytes, int *id)
{
	npu_status st = npu_ir_add_tensor(g, NULL, dt, rank, dims, id);

	return st ? st : npu_ir_set_const(g, *id, v, bytes);
}

/* Step 2: Conv -> Q, QLinearConv, DQ. */
static npu_status rewrite_conv(npu_ir_graph *g, int ni, const struct range *r, int nr)
{
	npu_ir_node *n = &g->nodes[ni];
	int xi = n->inputs[0], yi = n->outputs[0], bi = n->n_inputs > 2 ? n->inputs[2] : -1;
	const npu_ir_tensor *w = &g->tensors[n->inputs[1]];
	int64_t OC = w->dims[0], per = npu_ir_numel(w) / OC, one = 1;
	float sx, sy, *sw = malloc((size_t)OC * 4);
	uint8_t zx, zy;
	int8_t *wq = malloc((size_t)npu_ir_numel(w) + 1), zw = 0;
	int32_t *bq = malloc((size_t)OC * 4);
	int t_sx, t_zx, t_wq, t_sw, t_zw, t_sy, t_zy, t_bq, t_xq, t_yq, id;
	int ins[9];
	npu_ir_tensor *x = &g->tensors[xi], *y = &g->tensors[yi];
	npu_status st = NPU_OK;

	if (!sw || !wq || !bq) {
		free(sw);
		free(wq);
		free(bq);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	affine(find_range(r, nr, x->name), &sx, &zx);
	affine(find_range(r, nr, y->name), &sy, &zy);
	for (int64_t o = 0; o < OC; o++) {
		float m = 0.0f, b = bi >= 0 ? ((const float *)g->tensors[bi].data)[o] : 0.0f;

		for (int64_t i = 0; i < per; i++)
			m = fmaxf(m, fabsf(((const float *)w->data)[o * per + i]));
		sw[o] = m > 0 ? m / 127.0f : 1.0f;
		for (int64_t i = 0; i < per; i++)
			wq[o * per + i] = (int8_t)nearbyintf(((const float *)w->data)[o * per + i] / sw[o]);
		bq[o] = (int32_t)nearbyintf(b / (sx * sw[o]));
	}
	if (!st)
		st = cst(g, NPU_DTYPE_FLOAT32, 0, NULL, &sx, 4, &t_sx);
	if (!st)
		st = cst(g, NPU_DTYPE_UINT8, 0, NULL, &zx, 1, &t_zx);
	if (!st)
		st = cst(g, NPU_DTYPE_INT8, g->tensors[n->inputs[1]].rank,
			 g->tensors[n->inputs[1]].dims, wq, (size_t)(OC * per), &t_wq);
	if (!st)
		st = cst(g, NPU_DTYPE_FLOAT32, 1, &OC, sw, (size_t)OC * 4, &t_sw);
	if (!st)
		st = cst(g, NPU_DTYPE_INT8, 0, NULL, &zw, 1, &t_zw);
	if (!st)
		st = cst(g, NPU_DTYPE_FLOAT32, 0, NULL, &sy, 4, &t_sy);
	if (!st)
		st = cst(g, NPU_DTYPE_UINT8, 0, NULL, &zy, 1, &t_zy);
	if (!st)
		st = cst(g, NPU_DTYPE_INT32, 1, &OC, bq, (size_t)OC * 4, &t_bq);
	free(sw);
	free(wq);
	free(bq);
	(void)one;
	if (st)
		return st;
	x = &g->tensors[xi];
	y = &g->tensors[yi];
	if ((st = npu_ir_add_tensor(g, NULL, NPU_DTYPE_UINT8, x->rank, x->dims, &t_xq)))
		return st;
	y = &g->tensors[yi];
	if ((st = npu_ir_add_tensor(g, NULL, NPU_DTYPE_UINT8, y->rank, y->dims, &t_yq)))
		return st;
	/* The conv gives up its output to the DequantizeLinear. */
	n = &g->nodes[ni];
	n->outputs[0] = t_yq;
	g->tensors[yi].producer = -1;
	g->tensors[t_yq].producer = ni;
	if ((st = npu_ir_add_node(g, "QuantizeLinear", "", (int[]){ xi, t_sx, t_zx }, 3,
				  &t_xq, 1, &id)))
		return st;
	if ((st = npu_ir_add_node(g, "DequantizeLinear", "", (int[]){ t_yq, t_sy, t_zy }, 3,
				  &yi, 1, &id)))
		return st;
	n = &g->nodes[ni];
	ins[0] = t_xq; ins[1] = t_sx; ins[2] = t_zx; ins[3] = t_wq; ins[4] = t_sw;
	ins[5] = t_zw; ins[6] = t_sy; ins[7] = t_zy; ins[8] = t_bq;
	free(n->op);
	n->op = strdup("QLinearConv");
	free(n->inputs);
	n->inputs = malloc(sizeof(ins));
	if (!n->op || !n->inputs)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	memcpy(n->inputs, ins, sizeof(ins));
	n->n_inputs = 9;
	if (n->opset < 10)
		n->opset = 10;
	return NPU_OK;
}

npu_status npu_int8_compile(const void *data, size_t size, const npu_compile_options *o,
			    const struct npu_compile_target *tgt, struct npu_cmodel **out)
{
	struct range *r = NULL;
	npu_ir_graph *g = NULL;
	int nr = 0;
	npu_status st;

	*out = NULL;
	if (!o->calibration_dir || !*o->calibration_dir)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"int8 precision needs calibration_dir: a directory of sample inputs");
	st = calibrate(data, size, tgt, o->calibration_dir, &r, &nr);
	if (!st)
		st = npu_compile_parse(data, size, tgt, &g);
	for (int i = 0, n0 = g ? g->n_nodes : 0; !st && i < n0; i++)
		if (is_float_conv(g, &g->nodes[i]))
			st = rewrite_conv(g, i, r, nr);
	if (!st)
		st = npu_ir_topo_sort(g);
	if (!st) {
		struct npu_compile_target t = *tgt;

		t.precision = NPU_PRECISION_INT8;
		st = npu_compile_ir(g, &t, out);
	}
	for (int i = 0; i < nr; i++)
		free(r[i].name);
	free(r);
	npu_ir_graph_free(g);
	return st;
}
