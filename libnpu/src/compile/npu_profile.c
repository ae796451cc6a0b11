// SPDX-License-Identifier: MIT
/*
 * Profile-guided pipelining: the cycle model chooses the schedule.
 *
 * FLOPs are a poor guide to how long a node takes on the NPU: a depthwise
 * convolution has few FLOPs but uses a sliver of the TCU, and moves take
 * DMA and NoC time with no FLOPs at all.  So before a batch is pipelined,
 * the model is compiled layer by layer and run once, on zeros, on a
 * private emulator of the target's geometry; the simulated cycles of each
 * step (one per work item, in the same order) become the stage-balancing
 * cost.  Then a few stage counts, each with one, two or four inputs in
 * flight per stage, are compiled and run the same way and the fastest is
 * kept: more stages overlap more work but take longer to fill and drain,
 * more inputs in flight hide a stage's waits but plan tiles in less HBSM
 * and fill the pipeline in coarser groups, and where the balance lies
 * depends on the model.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_compile.h"
#include "compile/npu_ops.h"
#include "dev/npu_dev.h"
#include "model/npu_model_priv.h"
#include "onnx/npu_onnx.h"

npu_status npu_profile_run(const void *data, size_t size, const struct npu_compile_target *tgt,
			   uint64_t *total, double **cycles, unsigned *n)
{
	npu_ir_graph *g = NULL;
	struct npu_cmodel *cm = NULL;
	struct npu_model model;
	npu_device *dev = NULL;
	npu_context *ctx = NULL;
	npu_step_stats *ss = NULL;
	npu_run_stats rs;
	size_t count = 0;
	char spec[96];
	npu_status st;

	*total = 0;
	if (cycles) {
		*cycles = NULL;
		*n = 0;
	}
	st = npu_compile_parse(data, size, tgt, &g);
	if (!st)
		st = npu_compile_ir(g, tgt, &cm);
	snprintf(spec, sizeof(spec), "emu:clusters=%u,tpbs=%u", tgt->clusters, tgt->tpbs);
	if (!st)
		st = npu_emu_open(spec, &dev);
	if (!st) {
		model.cm = cm;
		st = npu_context_create(dev, &model, 0, &ctx);
	}
	if (!st)
		st = npu_run(ctx, NULL, 0, NULL, 0);	/* inputs stay zero */
	if (!st && !(st = npu_context_last_run(ctx, &rs)))
		*total = rs.device_cycles;
	if (!st && cycles) {
		ss = calloc(cm->nsteps ? cm->nsteps : 1, sizeof(*ss));
		*cycles = calloc(cm->nsteps ? cm->nsteps : 1, sizeof(**cycles));
		if (!ss || !*cycles)
			st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
		if (!st)
			st = npu_context_last_run_steps(ctx, ss, cm->nsteps, &count);
		for (size_t i = 0; !st && i < count; i++)
			(*cycles)[i] = (double)ss[i].device_cycles;
		if (!st)
			*n = (unsigned)count;
		if (st) {
			free(*cycles);
			*cycles = NULL;
		}
	}
	free(ss);
	npu_context_destroy(ctx);
	npu_device_close(dev);
	npu_cmodel_free(cm);
	npu_ir_graph_free(g);
	return st;
}

npu_status npu_profile_pipeline(const void *data, size_t size, struct npu_compile_target *tgt,
				double **cycles)
{
	static const unsigned tries[] = { 2, 3, 4, 5, 6, 7, 8 };
	struct npu_compile_target t = *tgt;
	double best = INFINITY;
	uint64_t total;
	unsigned best_s = 0, best_m = 1;
	npu_status st;

	*cycles = NULL;
	t.batch = 1;
	st = npu_profile_run(data, size, &t, &total, cycles, &tgt->nstep_cycles);
	if (st)
		return st;
	tgt->step_cycles = *cycles;
	t = *tgt;
	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		if (tries[i] > tgt->batch || tries[i] > tgt->clusters)
			break;
		/* One, two or four inputs in flight per stage (interleaved items). */
		for (unsigned m = 1; m <= 4 && m <= tgt->batch; m *= 2) {
			/* Two groups per stage show the steady state: enough to compare. */
			t.stages = tries[i];
			t.inflight = m;
			t.batch = tgt->batch < 2 * m * tries[i] ? tgt->batch : 2 * m * tries[i];
			st = npu_profile_run(data, size, &t, &total, NULL, NULL);
			/* Two in flight plan tiles in a quarter of the HBSM: not all fit. */
			if (st && m > 1)
				continue;
			if (st)
				return st;
			if ((double)total / t.batch < best) {
				best = (double)total / t.batch;
				best_s = tries[i];
				best_m = m;
			}
		}
	}
	tgt->stages = best_s;
	tgt->inflight = best_m;
	return NPU_OK;
}
