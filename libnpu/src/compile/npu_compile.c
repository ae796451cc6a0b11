// SPDX-License-Identifier: MIT
/*
 * ONNX -> compiled model: parse, infer shapes (folding constant
 * subgraphs), lower for the target partition.
 */
#include <stdlib.h>

#include "compile/npu_compile.h"
#include "compile/npu_ops.h"
#include "npu/npu_hw.h"
#include "dev/npu_dev.h"
#include "model/npu_model_priv.h"
#include "onnx/npu_onnx.h"

npu_status npu_compile_onnx(const void *data, size_t size, npu_device *dev,
			    const npu_compile_options *opts,
			    struct npu_cmodel **out)
{
	return npu_compile_onnx_in(data, size, NULL, dev, opts, out);
}

npu_status npu_compile_onnx_in(const void *data, size_t size, const char *model_dir,
			       npu_device *dev, const npu_compile_options *opts,
			       struct npu_cmodel **out)
{
	struct npu_compile_target tgt = {
		.model_dir = model_dir,
		.clusters = NPU_M100_CLUSTERS,
		.tpbs = NPU_M100_TPBS_PER_CLUSTER,
		.hbsm_size = NPU_M100_HBSM_SIZE,
		.precision = NPU_PRECISION_BF16,
	};
	npu_ir_graph *g = NULL;
	double *cycles = NULL;
	npu_status st;

	*out = NULL;
	if (dev) {
		tgt.clusters = dev->info.healthy_clusters;
		tgt.tpbs = dev->info.tpbs_per_cluster;
		tgt.hbsm_size = dev->info.hbsm_size;
	}
	if (opts->clusters) {
		if (dev && opts->clusters > dev->info.healthy_clusters)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"%u clusters requested; the device has %u healthy clusters",
					opts->clusters, dev->info.healthy_clusters);
		tgt.clusters = opts->clusters > 16 ? 16 : opts->clusters;
	}
	if (opts->batch > NPU_MAX_BATCH)
		return npu_fail(NPU_ERR_INVALID_ARG, "batch %u: at most %d inputs per run",
				opts->batch, NPU_MAX_BATCH);
	tgt.batch = opts->batch ? opts->batch : 1;
	tgt.allow_cpu_fallback = opts->allow_cpu_fallback != 0;
	if (opts->max_loop_iterations > NPU_LOOP_MAX_ITERATIONS)
		return npu_fail(NPU_ERR_INVALID_ARG, "max_loop_iterations %u: at most %u",
				opts->max_loop_iterations, NPU_LOOP_MAX_ITERATIONS);
	tgt.max_loop_iterations = opts->max_loop_iterations;
	tgt.input_shapes = opts->input_shapes;
	tgt.n_input_shapes = opts->n_input_shapes;
	tgt.input_values = opts->input_values;
	tgt.n_input_values = opts->n_input_values;
	if (opts->precision == NPU_PRECISION_INT8)
		return npu_int8_compile(data, size, opts, &tgt, out);
	if (opts->precision == NPU_PRECISION_W8 || opts->precision == NPU_PRECISION_BF16X3)
		tgt.precision = opts->precision;
	if (tgt.batch > 1) {
		st = npu_profile_pipeline(data, size, &tgt, &cycles);
		if (st) {
			free(cycles);
			return st;
		}
	}
	st = npu_compile_parse(data, size, &tgt, &g);
	if (!st)
		st = npu_compile_ir(g, &tgt, out);
	npu_ir_graph_free(g);
	free(cycles);
	return st;
}
