// SPDX-License-Identifier: MIT
/*
 * In the guest: libnpu end to end through the kernel driver.  A small CNN
 * (conv + relu, max pool, pointwise conv, global average pool, gemm,
 * softmax) is compiled for the device, run through /dev/accel/accelN, and
 * run again on the in-process emulator configured like the device: the two
 * backends run the same programs, so every output byte must agree.
 *
 * Prints "N passed, N failed"; exit status 0 only if all passed.  Without
 * an npu device node it says so and passes nothing (exit 0) only when the
 * driver is not loaded.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_compile.h"
#include "compile/npu_ops.h"
#include "model/npu_model_priv.h"
#include "npu.h"

static int passed, failed;

static void check(int ok, const char *what, const char *detail)
{
	if (ok) {
		passed++;
		printf("ok - %s\n", what);
	} else {
		failed++;
		printf("not ok - %s: %s\n", what, detail);
	}
	fflush(stdout);
}

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static int cst(npu_ir_graph *g, int rank, const int64_t *dims, unsigned seed)
{
	int64_t n = 1;
	float *v;
	int id;

	for (int i = 0; i < rank; i++)
		n *= dims[i];
	npu_ir_add_tensor(g, NULL, NPU_DTYPE_FLOAT32, rank, dims, &id);
	v = malloc((size_t)n * 4);
	for (int64_t i = 0; i < n; i++)
		v[i] = (float)(rnd(&seed) & 0xffff) / 65536.0f - 0.5f;
	npu_ir_set_const_owned(g, id, v, (size_t)n * 4);
	return id;
}

static int node(npu_ir_graph *g, const char *op, const int *in, int nin, npu_ir_node **out)
{
	int t, id;

	npu_ir_add_tensor(g, NULL, NPU_DTYPE_FLOAT32, -1, NULL, &t);
	npu_ir_add_node(g, op, op, in, nin, &t, 1, &id);
	*out = &g->nodes[id];
	return t;
}

static void conv_attrs(npu_ir_node *n, int k, int p)
{
	npu_ir_set_attr_ints(n, "kernel_shape", (int64_t[]){ k, k }, 2);
	npu_ir_set_attr_ints(n, "pads", (int64_t[]){ p, p, p, p }, 4);
	npu_ir_set_attr_ints(n, "strides", (int64_t[]){ 1, 1 }, 2);
}

static npu_ir_graph *small_cnn(void)
{
	npu_ir_graph *g;
	npu_ir_node *n;
	int x, t;

	npu_ir_graph_create(&g);
	g->opset = 17;
	npu_ir_add_tensor(g, "x", NPU_DTYPE_FLOAT32, 4, (int64_t[]){ 1, 8, 16, 16 }, &x);
	t = node(g, "Conv", (int[]){ x, cst(g, 4, (int64_t[]){ 16, 8, 3, 3 }, 1),
				     cst(g, 1, (int64_t[]){ 16 }, 2) }, 3, &n);
	conv_attrs(n, 3, 1);
	t = node(g, "Relu", &t, 1, &n);
	t = node(g, "MaxPool", &t, 1, &n);
	npu_ir_set_attr_ints(n, "kernel_shape", (int64_t[]){ 2, 2 }, 2);
	npu_ir_set_attr_ints(n, "strides", (int64_t[]){ 2, 2 }, 2);
	t = node(g, "Conv", (int[]){ t, cst(g, 4, (int64_t[]){ 8, 16, 1, 1 }, 3) }, 2, &n);
	conv_attrs(n, 1, 0);
	t = node(g, "GlobalAveragePool", &t, 1, &n);
	t = node(g, "Flatten", &t, 1, &n);
	t = node(g, "Gemm", (int[]){ t, cst(g, 2, (int64_t[]){ 8, 5 }, 4),
				     cst(g, 1, (int64_t[]){ 5 }, 5) }, 3, &n);
	t = node(g, "Softmax", &t, 1, &n);
	free(g->tensors[t].name);
	g->tensors[t].name = strdup("y");
	g->inputs = malloc(sizeof(int));
	g->outputs = malloc(sizeof(int));
	g->inputs[0] = x;
	g->outputs[0] = t;
	g->n_inputs = g->n_outputs = 1;
	return g;
}

static npu_status run_on(npu_device *dev, npu_model *m, const float *x, float *y)
{
	npu_tensor in = { "x", NPU_DTYPE_FLOAT32, (void *)x, 8 * 16 * 16 * 4 };
	npu_tensor out = { "y", NPU_DTYPE_FLOAT32, y, 5 * 4 };
	npu_context *ctx;
	npu_status st = npu_context_create(dev, m, 0, &ctx);

	if (!st)
		st = npu_run(ctx, &in, 1, &out, 1);
	npu_context_destroy(ctx);
	return st;
}

int main(void)
{
	struct npu_compile_target tgt = { 0 };
	float x[8 * 16 * 16], yk[5], ye[5];
	npu_device *kdev = NULL, *edev = NULL;
	npu_device_info info;
	struct npu_cmodel *cm = NULL;
	npu_model model;
	npu_ir_graph *g;
	char spec[128], msg[512];
	unsigned seed = 7;
	npu_status st;
	double sum = 0;

	if (npu_device_open(NULL, &kdev) || (npu_device_get_info(kdev, &info), info.backend != NPU_BACKEND_KERNEL)) {
		printf("npu-guest-libnpu: no npu kernel device (%s)\n", npu_last_error());
		npu_device_close(kdev);
		check(0, "a kernel device is present", "none found");
		goto out;
	}
	check(1, "a kernel device is present", "");
	printf("# %s: %s, %u clusters, %u healthy (fuse 0x%x)\n", info.path, info.driver,
	       info.clusters, info.healthy_clusters, info.defect_mask);

	g = small_cnn();
	tgt.clusters = info.healthy_clusters;
	tgt.tpbs = info.tpbs_per_cluster;
	tgt.hbsm_size = info.hbsm_size;
	st = npu_ops_infer_shapes(g);
	if (!st)
		st = npu_compile_ir(g, &tgt, &cm);
	npu_ir_graph_free(g);
	snprintf(msg, sizeof(msg), "%s", npu_last_error());
	check(!st, "the model compiles for the device", msg);
	if (st)
		goto out;
	model.cm = cm;

	for (size_t i = 0; i < sizeof(x) / 4; i++)
		x[i] = (float)(rnd(&seed) & 0xffff) / 32768.0f - 1.0f;
	st = run_on(kdev, &model, x, yk);
	snprintf(msg, sizeof(msg), "%s", npu_last_error());
	check(!st, "runs through the kernel driver", msg);
	for (int i = 0; i < 5; i++)
		sum += yk[i];
	snprintf(msg, sizeof(msg), "softmax sums to %g", sum);
	check(!st && fabs(sum - 1.0) < 1e-4, "the output is a distribution", msg);

	snprintf(spec, sizeof(spec), "emu:clusters=%u,tpbs=%u,mesh=%ux%u,defect-mask=0x%x,clock-mhz=%u",
		 info.clusters, info.tpbs_per_cluster, info.mesh_x, info.mesh_y, info.defect_mask,
		 info.clock_mhz);
	st = npu_device_open(spec, &edev);
	if (!st)
		st = run_on(edev, &model, x, ye);
	snprintf(msg, sizeof(msg), "%s", st ? npu_last_error() : "outputs differ");
	check(!st && !memcmp(yk, ye, sizeof(yk)), "bit-identical to the emulator backend", msg);

	/* Again, to see a second run on the same device is the same. */
	st = run_on(kdev, &model, x, ye);
	check(!st && !memcmp(yk, ye, sizeof(yk)), "a second kernel run gives the same bytes",
	      st ? npu_last_error() : "outputs differ");
out:
	npu_cmodel_free(cm);
	npu_device_close(edev);
	npu_device_close(kdev);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
