// SPDX-License-Identifier: MIT
/*
 * npu_context: a model's device memory on a partition, and its runs.
 *
 * Creating a context allocates one buffer per segment, copies constants
 * and programs, and patches the programs' relocations with the buffers'
 * device addresses.  A run copies inputs in, submits every step as a job
 * on the context's queue (a queue runs its jobs in order), waits for the
 * last and copies outputs out.
 *
 * A host step (the CPU fallback, host/npu_host.h) runs on the calling
 * thread when the submit loop reaches it: the programs queued before it
 * are waited for, then the host computes on the buffers' host mappings
 * (the same on the emulator and on the kernel's mmapped BOs), and the
 * programs after it are queued once it is done.
 *
 * A control step (the run-time If, npu_cmodel.h) chooses the next step:
 * the submit loop walks the steps with a step index, and a job records
 * the steps it ran in order (its trace), which is what the run's
 * statistics list.  Control steps go forward (the reader checks) except a
 * Loop's end, which repeats its body at most max_iterations times per
 * entry, so a run ends; its trace grows as it goes, up to MAX_RUN_STEPS.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dev/npu_dev.h"
#include "host/npu_host.h"
#include "model/npu_model_priv.h"
#include "trace/trace_json.h"

/* Steps one run may take (a Loop repeats its body's). */
#define MAX_RUN_STEPS	(1u << 22)

struct npu_context {
	npu_device *dev;
	const struct npu_cmodel *cm;
	npu_dev_ctx *dctx;
	/* npu_context_create_shared(): the context whose partition (dctx)
	 * and NPU_SEG_STATE buffers this one borrows; NULL: owns them. */
	npu_context *share;
	npu_dev_bo **bos;		/* one per segment */
	npu_dev_use *uses;		/* every segment, for each job */
	pthread_mutex_t lock;		/* busy, last */
	pthread_cond_t idle;
	bool busy;			/* a run is in flight */
	npu_run_stats last;
	uint64_t *last_cycles;		/* per step run in the last run */
	double *last_host_us;		/* per step run in the last run: host steps' wall time */
	uint32_t *last_trace;		/* per step run in the last run: its index in cm->steps */
	uint32_t last_cap;		/* entries of the three above */
	struct npu_dyn_shape *last_dyn;	/* the last run's run-time shapes (cm->ndyn) */
	struct npu_trace_rec *trace;	/* npu_context_trace(); NULL: off */
	bool trace_ready;		/* trace holds the last completed run */
};

struct npu_job {
	npu_context *ctx;
	/* Per step run, in the order they ran (the trace): */
	npu_dev_job **steps;		/* NULL for a host step */
	double *host_us;		/* a host step's wall time */
	uint32_t *trace;		/* its index in cm->steps */
	uint32_t nsteps;		/* steps run */
	uint32_t cap;			/* entries of the three above */
	uint32_t waited;		/* steps[0 .. waited) are known finished */
	struct npu_dyn_shape *dyn;	/* this run's run-time shapes (cm->ndyn), rank -1 until known */
	npu_tensor *outputs;		/* caller's, filled on completion */
	size_t noutputs;
	struct timespec start;
	bool finished;
	npu_status result;
	char error[512];
};

static double elapsed_us(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e6 + (double)(t.tv_nsec - t0->tv_nsec) / 1e3;
}

static void le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

void npu_context_destroy(npu_context *ctx)
{
	if (!ctx)
		return;
	pthread_mutex_lock(&ctx->lock);
	while (ctx->busy)
		pthread_cond_wait(&ctx->idle, &ctx->lock);
	pthread_mutex_unlock(&ctx->lock);
	for (uint32_t i = 0; ctx->bos && i < ctx->cm->nsegs; i++)
		if (!ctx->share || ctx->cm->segs[i].kind != NPU_SEG_STATE)
			npu_dev_bo_free(ctx->dev, ctx->bos[i]);
	if (ctx->dctx && ctx->trace)
		ctx->dev->ops->ctx_trace(ctx->dctx, NULL);
	if (ctx->dctx && !ctx->share)
		ctx->dev->ops->ctx_destroy(ctx->dctx);
	free(ctx->bos);
	free(ctx->uses);
	free(ctx->last_cycles);
	free(ctx->last_host_us);
	free(ctx->last_trace);
	free(ctx->last_dyn);
	npu_trace_rec_free(ctx->trace);
	pthread_mutex_destroy(&ctx->lock);
	pthread_cond_destroy(&ctx->idle);
	free(ctx);
}

/* The state segment of @cm that is the @k-th of its kind; -1 if none. */
static int nth_state(const struct npu_cmodel *cm, unsigned k)
{
	for (uint32_t i = 0; i < cm->nsegs; i++)
		if (cm->segs[i].kind == NPU_SEG_STATE && !k--)
			return (int)i;
	return -1;
}

/*
 * Allocate @ctx's buffers (a @share'd context borrows the owner's state
 * segments, matched in order) and patch the programs' addresses.
 */
static npu_status alloc_segments(npu_context *ctx, npu_context *share)
{
	const struct npu_cmodel *cm = ctx->cm;
	npu_device *dev = ctx->dev;
	unsigned nstate = 0;
	npu_status st = NPU_OK;

	for (uint32_t i = 0; !st && i < cm->nsegs; i++) {
		const struct npu_seg *s = &cm->segs[i];
		bool ro = s->kind == NPU_SEG_CONST || s->kind == NPU_SEG_PROGRAM;

		ctx->uses[i].flags = NPU_DEV_USE_READ | (ro ? 0 : NPU_DEV_USE_WRITE);
		if (s->kind == NPU_SEG_STATE && share) {
			int k = nth_state(share->cm, nstate++);

			if (k < 0 || share->cm->segs[k].size != s->size)
				return npu_fail(NPU_ERR_INTERNAL,
						"programs of one generation session disagree on their state segment %u",
						nstate - 1);
			ctx->bos[i] = share->bos[k];
			ctx->uses[i].bo = ctx->bos[i];
			continue;
		}
		st = npu_dev_bo_create(dev, s->size, ro ? NPU_DEV_BO_DEVICE_RO : 0,
				       &ctx->bos[i]);
		if (st)
			break;
		if (ro)
			memcpy(ctx->bos[i]->host, s->data, s->size);
		else
			memset(ctx->bos[i]->host, 0, s->size);
		ctx->uses[i].bo = ctx->bos[i];
	}
	if (!st && share && nth_state(share->cm, nstate) >= 0)
		return npu_fail(NPU_ERR_INTERNAL,
				"programs of one generation session disagree on their state segments");
	/* Addresses are known now: patch them into the programs. */
	for (uint32_t i = 0; !st && i < cm->nrelocs; i++) {
		const struct npu_reloc *x = &cm->relocs[i];

		le64((uint8_t *)ctx->bos[x->seg]->host + x->offset,
		     ctx->bos[x->target]->dev_addr + x->addend);
	}
	/* Programs and constants are final: the device may keep what it
	 * decodes from them (the emulator, its decoded programs). */
	for (uint32_t i = 0; !st && i < cm->nsegs; i++)
		if (ctx->bos[i]->flags & NPU_DEV_BO_DEVICE_RO)
			npu_dev_bo_seal(dev, ctx->bos[i]);
	return st;
}

static npu_status context_new(npu_device *dev, const struct npu_cmodel *cm, npu_context **out)
{
	npu_context *ctx = calloc(1, sizeof(*ctx));

	*out = NULL;
	if (!ctx)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	ctx->dev = dev;
	ctx->cm = cm;
	pthread_mutex_init(&ctx->lock, NULL);
	pthread_cond_init(&ctx->idle, NULL);
	ctx->bos = calloc(cm->nsegs ? cm->nsegs : 1, sizeof(*ctx->bos));
	ctx->uses = calloc(cm->nsegs ? cm->nsegs : 1, sizeof(*ctx->uses));
	ctx->last_cycles = calloc(cm->nsteps ? cm->nsteps : 1, sizeof(*ctx->last_cycles));
	ctx->last_host_us = calloc(cm->nsteps ? cm->nsteps : 1, sizeof(*ctx->last_host_us));
	ctx->last_trace = calloc(cm->nsteps ? cm->nsteps : 1, sizeof(*ctx->last_trace));
	ctx->last_cap = cm->nsteps ? cm->nsteps : 1;
	ctx->last_dyn = calloc(cm->ndyn ? cm->ndyn : 1, sizeof(*ctx->last_dyn));
	if (!ctx->bos || !ctx->uses || !ctx->last_cycles || !ctx->last_host_us ||
	    !ctx->last_trace || !ctx->last_dyn) {
		npu_context_destroy(ctx);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	*out = ctx;
	return NPU_OK;
}

npu_status npu_context_create(npu_device *dev, const npu_model *model,
			      unsigned clusters, npu_context **out)
{
	const struct npu_cmodel *cm;
	npu_context *ctx;
	npu_status st;

	if (out)
		*out = NULL;
	if (!dev || !model || !out)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_context_create: NULL argument");
	cm = model->cm;
	if (!clusters)
		clusters = cm->nclusters;
	if (clusters < cm->nclusters)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"the model was compiled for %u clusters; a partition of %u is too small",
				cm->nclusters, clusters);
	if (cm->tpbs > dev->info.tpbs_per_cluster)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"the model was compiled for %u TPBs per cluster; this device has %u",
				cm->tpbs, dev->info.tpbs_per_cluster);
	if ((st = npu_cmodel_check_isa(cm, dev->isa_version)))
		return st;
	if ((st = context_new(dev, cm, &ctx)))
		return st;
	st = dev->ops->ctx_create(dev, clusters, &ctx->dctx);
	if (!st)
		st = alloc_segments(ctx, NULL);
	if (st) {
		npu_context_destroy(ctx);
		return st;
	}
	*out = ctx;
	return NPU_OK;
}

npu_status npu_context_create_shared(const npu_model *model, npu_context *share,
				     npu_context **out)
{
	const struct npu_cmodel *cm;
	npu_context *ctx;
	npu_status st;

	if (out)
		*out = NULL;
	if (!model || !share || !out)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_context_create_shared: NULL argument");
	cm = model->cm;
	if (cm->nclusters > share->dctx->nclusters)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"a program compiled for %u clusters cannot share a partition of %u",
				cm->nclusters, share->dctx->nclusters);
	if ((st = npu_cmodel_check_isa(cm, share->dev->isa_version)))
		return st;
	if ((st = context_new(share->dev, cm, &ctx)))
		return st;
	ctx->share = share;
	ctx->dctx = share->dctx;
	st = alloc_segments(ctx, share);
	if (st) {
		npu_context_destroy(ctx);
		return st;
	}
	*out = ctx;
	return NPU_OK;
}

npu_status npu_context_state(const npu_context *ctx, unsigned k, void **host, size_t *bytes)
{
	int i = ctx ? nth_state(ctx->cm, k) : -1;

	if (i < 0)
		return npu_fail(NPU_ERR_NOT_FOUND, "the context has no state segment %u", k);
	*host = ctx->bos[i]->host;
	*bytes = ctx->cm->segs[i].size;
	return NPU_OK;
}

static npu_status io_buffer(npu_context *ctx, const struct npu_io *io, uint32_t b,
			    void **data, size_t *bytes)
{
	if (data)
		*data = (uint8_t *)ctx->bos[io->seg]->host +
			npu_cmodel_io_offset(ctx->cm, io, b);
	if (bytes)
		*bytes = npu_io_dev_bytes(&io->info);
	return NPU_OK;
}

/* Tensor @index of a batched model: batch element index / n, tensor index % n. */
static npu_status io_index(npu_context *ctx, size_t index, const struct npu_io *ios,
			   uint32_t n, const char *what, void **data, size_t *bytes)
{
	uint32_t batch = npu_cmodel_batch(ctx->cm);

	if (!n || index >= (size_t)n * batch)
		return npu_fail(NPU_ERR_NOT_FOUND, "the model has %u %ss%s, no %s %zu",
				n * batch, what, batch > 1 ? " (all batch elements)" : "",
				what, index);
	return io_buffer(ctx, &ios[index % n], (uint32_t)(index / n), data, bytes);
}

npu_status npu_context_input_buffer(npu_context *ctx, size_t index,
				    void **data, size_t *bytes)
{
	if (!ctx)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_context_input_buffer: NULL context");
	return io_index(ctx, index, ctx->cm->inputs, ctx->cm->ninputs, "input", data, bytes);
}

npu_status npu_context_output_buffer(npu_context *ctx, size_t index,
				     void **data, size_t *bytes)
{
	if (!ctx)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_context_output_buffer: NULL context");
	return io_index(ctx, index, ctx->cm->outputs, ctx->cm->noutputs, "output", data, bytes);
}

/*
 * Which model tensor caller tensor @i is: batch element i / n (0 for an
 * unbatched model), then by name, else by position i % n in the element.
 */
static npu_status match(const struct npu_cmodel *cm, const struct npu_io *ios, uint32_t n,
			const npu_tensor *t, size_t i, const char *what,
			const struct npu_io **out, uint32_t *elem)
{
	const struct npu_io *io = NULL;
	uint32_t batch = npu_cmodel_batch(cm);

	if (!n || i >= (size_t)n * batch)
		return npu_fail(NPU_ERR_INVALID_ARG, "%zu %ss given, the model has %u%s",
				i + 1, what, n * batch,
				batch > 1 ? " (one per input of each batch element)" : "");
	if (t->name) {
		for (uint32_t k = 0; k < n && !io; k++)
			if (!strcmp(ios[k].name, t->name))
				io = &ios[k];
		if (!io)
			return npu_fail(NPU_ERR_NOT_FOUND, "the model has no %s named '%s'",
					what, t->name);
	} else {
		io = &ios[i % n];
	}
	/* An output of run-time size takes any buffer; the run checks it fits (out_dyn()). */
	if (t->dtype != io->info.dtype || (t->bytes != io->info.bytes && !io->dyn))
		return npu_fail(NPU_ERR_SHAPE,
				"%s '%s': got %s, %zu bytes; the model wants %s, %zu bytes",
				what, io->name, npu_dtype_str(t->dtype), t->bytes,
				npu_dtype_str(io->info.dtype), io->info.bytes);
	if (!t->data && t->bytes)
		return npu_fail(NPU_ERR_INVALID_ARG, "%s '%s': NULL data", what, io->name);
	*out = io;
	*elem = (uint32_t)(i / n);
	return NPU_OK;
}

/* Room for @n entries in three per-step arrays @a, @b, @c of capacity *@cap; false: no memory. */
static bool grow3(uint32_t n, uint32_t *cap, void **a, size_t sa, void **b, size_t sb, void **c,
		  size_t sc)
{
	uint32_t nc = *cap;
	void *p;

	if (n <= nc)
		return true;
	while (nc < n)
		nc = nc > MAX_RUN_STEPS / 2 ? MAX_RUN_STEPS : 2 * nc;
	if (!(p = realloc(*a, (size_t)nc * sa)))
		return false;
	*a = p;
	if (!(p = realloc(*b, (size_t)nc * sb)))
		return false;
	*b = p;
	if (!(p = realloc(*c, (size_t)nc * sc)))
		return false;
	*c = p;
	*cap = nc;
	return true;
}

/*
 * Output @io of run-time size into the caller's @t: the actual shape's
 * elements, NPU_ERR_SHAPE saying the bytes needed when @t is smaller.
 */
static npu_status out_dyn(const npu_job *job, const struct npu_io *io, const void *src,
			  npu_tensor *t)
{
	const struct npu_dyn_shape *s = &job->dyn[io->dyn - 1];
	npu_tensor_info info = io->info;
	size_t n = 1;
	char sh[160];

	if (s->rank != info.rank)
		return npu_fail(NPU_ERR_INTERNAL, "output '%s': the run did not compute its shape",
				io->name);
	for (int d = 0; d < s->rank; d++)
		n *= (size_t)s->dims[d];
	memcpy(info.dims, s->dims, sizeof(info.dims));
	info.bytes = n * npu_dtype_size(info.dtype);
	if (t->bytes < info.bytes) {
		size_t o = 0;

		for (int d = 0; d < s->rank && o < sizeof(sh); d++)
			o += (size_t)snprintf(sh + o, sizeof(sh) - o, "%s%lld", d ? ", " : "",
					      (long long)s->dims[d]);
		if (!s->rank)
			sh[0] = '\0';
		return npu_fail(NPU_ERR_SHAPE,
				"output '%s': this run's result is %s[%s], %zu bytes; the buffer given has %zu: give at least %zu bytes (the model's bound is %zu)",
				io->name, npu_dtype_str(info.dtype), sh, info.bytes, t->bytes,
				info.bytes, io->info.bytes);
	}
	return npu_tensor_from_device(&info, src, t->data);
}

static void finish_locked(npu_job *job, npu_status st)
{
	npu_context *ctx = job->ctx;
	uint64_t cycles = 0;

	/* A run with a Loop may have taken more steps than the model has. */
	if (!st && !grow3(job->nsteps, &ctx->last_cap, (void **)&ctx->last_cycles,
			  sizeof(*ctx->last_cycles), (void **)&ctx->last_host_us,
			  sizeof(*ctx->last_host_us), (void **)&ctx->last_trace,
			  sizeof(*ctx->last_trace)))
		st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");

	for (uint32_t i = 0; i < job->nsteps; i++) {
		uint64_t c = job->steps[i] ? ctx->dev->ops->job_cycles(job->steps[i]) : 0;

		if (!st) {
			ctx->last_cycles[i] = c;
			ctx->last_host_us[i] = job->host_us[i];
			ctx->last_trace[i] = job->trace[i];
		}
		cycles += c;
	}
	if (!st) {
		for (size_t i = 0; i < job->noutputs; i++) {
			const struct npu_io *io;
			uint32_t b;
			void *src;

			st = match(ctx->cm, ctx->cm->outputs, ctx->cm->noutputs, &job->outputs[i],
				   i, "output", &io, &b);
			if (st)
				break;
			io_buffer(ctx, io, b, &src, NULL);
			if (io->dyn && (st = out_dyn(job, io, src, &job->outputs[i])))
				break;
			if (!io->dyn)
				npu_tensor_from_device(&io->info, src, job->outputs[i].data);
		}
	}
	if (!st && ctx->cm->ndyn)
		memcpy(ctx->last_dyn, job->dyn, ctx->cm->ndyn * sizeof(*job->dyn));
	ctx->trace_ready = !st && ctx->trace;
	if (!st) {
		ctx->last.device_cycles = cycles;
		ctx->last.device_us = ctx->dev->info.clock_mhz ?
			(double)cycles / ctx->dev->info.clock_mhz : 0;
		ctx->last.wall_us = elapsed_us(&job->start);
		ctx->last.steps = job->nsteps;
	}
	for (uint32_t i = 0; i < job->nsteps; i++)
		if (job->steps[i])
			ctx->dev->ops->job_free(job->steps[i]);
	job->nsteps = 0;
	job->result = st;
	if (st)
		snprintf(job->error, sizeof(job->error), "%s", npu_last_error());
	job->finished = true;
	ctx->busy = false;
	pthread_cond_broadcast(&ctx->idle);
}

/* The host address of host-step tensor @t (NULL for an omitted one). */
static void *host_addr(npu_context *ctx, const struct npu_host_tensor *t)
{
	return t->seg == NPU_HOST_SEG ? NULL : (uint8_t *)ctx->bos[t->seg]->host + t->offset;
}

/*
 * Wait for the programs @job queued so far (the first that failed is the
 * error, named like npu_job_wait names it): the host is about to read or
 * write what they left.
 */
static npu_status wait_queued(npu_context *ctx, npu_job *job)
{
	for (; job->waited < job->nsteps; job->waited++) {
		uint32_t k = job->waited;
		npu_status st;

		if (!job->steps[k])
			continue;
		st = ctx->dev->ops->job_wait(job->steps[k], -1);
		if (st) {
			char msg[512];
			const char *lbl = ctx->cm->steps[job->trace[k]].label;

			snprintf(msg, sizeof(msg), "%s", npu_last_error());
			return npu_fail(st, "step %u of %u (%s): %s", job->trace[k] + 1,
					ctx->cm->nsteps, lbl ? lbl : "", msg);
		}
	}
	return NPU_OK;
}

/*
 * Step @i of @job, a host step run as the job's step @e: wait for the
 * programs queued before it, then compute it on the buffers' host
 * mappings, timed.
 */
static npu_status host_step(npu_context *ctx, npu_job *job, uint32_t i, uint32_t e)
{
	const struct npu_host_step *h = ctx->cm->steps[i].host;
	void *in[64], *out[64];
	struct timespec t0;
	npu_status st;

	if ((st = wait_queued(ctx, job)))
		return st;
	for (uint32_t k = 0; k < h->ninputs; k++)
		in[k] = host_addr(ctx, &h->tensors[k]);
	for (uint32_t k = 0; k < h->noutputs; k++)
		out[k] = host_addr(ctx, &h->tensors[h->ninputs + k]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	st = npu_host_run(h, in, out, job->dyn);
	job->host_us[e] = elapsed_us(&t0);
	return st;
}

/* Elements of host-step tensor @t. */
static uint64_t numel(const struct npu_host_tensor *t)
{
	uint64_t n = 1;

	for (int d = 0; d < t->rank; d++)
		n *= (uint64_t)t->dims[d];
	return n;
}

static uint64_t tbytes(const struct npu_host_tensor *t)
{
	return numel(t) * npu_dtype_size((npu_dtype)t->dtype);
}

/* An integer scalar (int32 or int64 as the device holds it); @def for an omitted one. */
static int64_t read_int(npu_context *ctx, const struct npu_host_tensor *t, int64_t def)
{
	const void *p = host_addr(ctx, t);
	int64_t v64;
	int32_t v32;

	if (!p)
		return def;
	/* memcpy: an alias's home need not be aligned. */
	if (t->dtype == NPU_DTYPE_INT64) {
		memcpy(&v64, p, sizeof(v64));
		return v64;
	}
	memcpy(&v32, p, sizeof(v32));
	return v32;
}

static void write_int(npu_context *ctx, const struct npu_host_tensor *t, int64_t v)
{
	void *p = host_addr(ctx, t);
	int32_t v32 = (int32_t)v;

	if (p && t->dtype == NPU_DTYPE_INT64)
		memcpy(p, &v, sizeof(v));
	else if (p)
		memcpy(p, &v32, sizeof(v32));
}

/* A bool scalar; @def for an omitted one. */
static bool read_bool(npu_context *ctx, const struct npu_host_tensor *t, bool def)
{
	const uint8_t *p = host_addr(ctx, t);

	return p ? *p != 0 : def;
}

/*
 * Copy @n tensors @src to @dst (host-step tensors; omitted ones skipped)
 * through a host buffer: a body output may live in the bytes of another
 * carried value (an Identity), so every source is read before any write.
 */
static npu_status copy_all(npu_context *ctx, const struct npu_host_tensor *src,
			   const struct npu_host_tensor *dst, uint32_t n)
{
	uint64_t total = 0, off = 0;
	uint8_t *tmp;

	for (uint32_t k = 0; k < n; k++)
		total += tbytes(&dst[k]);
	if (!total)
		return NPU_OK;
	tmp = malloc(total);
	if (!tmp)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	for (uint32_t k = 0; k < n; k++) {
		const void *s = host_addr(ctx, &src[k]);

		if (s && host_addr(ctx, &dst[k]))
			memcpy(tmp + off, s, tbytes(&dst[k]));
		off += tbytes(&dst[k]);
	}
	off = 0;
	for (uint32_t k = 0; k < n; k++) {
		void *d = host_addr(ctx, &dst[k]);

		if (d && host_addr(ctx, &src[k]))
			memcpy(d, tmp + off, tbytes(&dst[k]));
		off += tbytes(&dst[k]);
	}
	free(tmp);
	return NPU_OK;
}

/*
 * A Loop's control step @i (npu_cmodel.h: NPU_CTL_LOOP_BEGIN, _END), the
 * programs before it finished: the step to run next into *@next.
 */
static npu_status run_loop(npu_context *ctx, uint32_t i, uint32_t *next)
{
	const struct npu_host_step *h = ctx->cm->steps[i].host;
	const struct npu_host_tensor *in = h->tensors, *out = h->tensors + h->ninputs;
	bool begin = h->ctl == NPU_CTL_LOOP_BEGIN;
	uint32_t N = begin ? h->ninputs - 2 : h->noutputs - h->ninputs;
	uint32_t K = h->noutputs - 2 - 2 * N;
	const struct npu_host_tensor *v_in = out + 2, *v_fin = out + 2 + N, *scan = out + 2 + 2 * N;
	int64_t M = read_int(ctx, &in[0], INT64_MAX), iter;
	bool cond;

	if (begin) {
		cond = read_bool(ctx, &in[1], true);
		write_int(ctx, &out[0], 0);
		if (host_addr(ctx, &out[1]))
			*(uint8_t *)host_addr(ctx, &out[1]) = cond;
		*next = i + 1;
		if (M > 0 && cond)
			return copy_all(ctx, in + 2, v_in, N);
		for (uint32_t k = 0; k < K; k++)
			if (host_addr(ctx, &scan[k]) && scan[k].dims[0])
				return npu_fail(NPU_ERR_UNSUPPORTED,
						"%s: the loop ran 0 iterations; its scan output %u was compiled for %" PRId64 " (the length the model declares or its trip count)",
						h->node, k, scan[k].dims[0]);
		*next = h->target;
		return copy_all(ctx, in + 2, v_fin, N);
	}
	/* The end of iteration iter - 1: its scan slices, then go round again or stop. */
	iter = read_int(ctx, &out[0], 0) + 1;
	cond = read_bool(ctx, &in[1], true);
	for (uint32_t k = 0; k < K; k++) {
		uint8_t *d = host_addr(ctx, &scan[k]);
		const uint8_t *src = host_addr(ctx, &in[2 + N + k]);
		uint64_t row = tbytes(&in[2 + N + k]);

		if (!d || !src)
			continue;
		if (iter > scan[k].dims[0])
			return npu_fail(NPU_ERR_UNSUPPORTED,
					"%s: iteration %" PRId64 " does not fit scan output %u, compiled for %" PRId64 " iterations (the length the model declares or its trip count)",
					h->node, iter, k, scan[k].dims[0]);
		memcpy(d + (uint64_t)(iter - 1) * row, src, row);
	}
	if (iter < M && cond) {
		if (iter >= (int64_t)h->attrs[0].i)
			return npu_fail(NPU_ERR_UNSUPPORTED,
					"%s: %" PRId64 " iterations and its condition is still true: stopped at the limit of %" PRId64 " (raise it with npu_compile_options.max_loop_iterations, npu-run --max-loop-iterations)",
					h->node, iter, h->attrs[0].i);
		write_int(ctx, &out[0], iter);
		if (host_addr(ctx, &out[1]))
			*(uint8_t *)host_addr(ctx, &out[1]) = cond;
		*next = h->target;
		return copy_all(ctx, in + 2, v_in, N);
	}
	for (uint32_t k = 0; k < K; k++)
		if (host_addr(ctx, &scan[k]) && iter != scan[k].dims[0])
			return npu_fail(NPU_ERR_UNSUPPORTED,
					"%s: the loop ran %" PRId64 " iterations; its scan output %u was compiled for %" PRId64 " (the length the model declares or its trip count)",
					h->node, iter, k, scan[k].dims[0]);
	*next = i + 1;
	return copy_all(ctx, in + 2, v_fin, N);
}

/*
 * Step @i of @job, a control step run as the job's step @e: the step to
 * run next into *@next.  An If waits for the programs before it (one of
 * them computed the condition) and reads the condition's byte.
 */
static npu_status run_control(npu_context *ctx, npu_job *job, uint32_t i, uint32_t e,
			      uint32_t *next)
{
	const struct npu_host_step *h = ctx->cm->steps[i].host;
	struct timespec t0;
	npu_status st;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	*next = h->target;
	st = NPU_OK;
	if (h->ctl == NPU_CTL_IF_NOT) {
		if ((st = wait_queued(ctx, job)))
			return st;
		if (*(const uint8_t *)host_addr(ctx, &h->tensors[0]))
			*next = i + 1;
	} else if (h->ctl == NPU_CTL_LOOP_BEGIN || h->ctl == NPU_CTL_LOOP_END) {
		if (!(st = wait_queued(ctx, job)))
			st = run_loop(ctx, i, next);
	}
	job->host_us[e] = elapsed_us(&t0);
	return st;
}

npu_status npu_submit(npu_context *ctx, const npu_tensor *inputs, size_t n_inputs,
		      npu_tensor *outputs, size_t n_outputs, npu_job **out)
{
	const struct npu_cmodel *cm;
	npu_status st = NPU_OK;
	npu_job *job;

	if (out)
		*out = NULL;
	if (!ctx || !out || (n_inputs && !inputs) || (n_outputs && !outputs))
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_submit: NULL argument");
	cm = ctx->cm;
	/* Check everything before touching the device. */
	for (size_t i = 0; i < n_inputs; i++) {
		const struct npu_io *io;
		uint32_t b;

		if ((st = match(cm, cm->inputs, cm->ninputs, &inputs[i], i, "input", &io, &b)) ||
		    (st = npu_io_check_input(&io->info, inputs[i].data)))
			return st;
	}
	for (size_t i = 0; i < n_outputs; i++) {
		const struct npu_io *io;
		uint32_t b;

		if ((st = match(cm, cm->outputs, cm->noutputs, &outputs[i], i, "output", &io,
				&b)))
			return st;
	}
	job = calloc(1, sizeof(*job));
	if (job) {
		job->steps = calloc(cm->nsteps ? cm->nsteps : 1, sizeof(*job->steps));
		job->host_us = calloc(cm->nsteps ? cm->nsteps : 1, sizeof(*job->host_us));
		job->trace = calloc(cm->nsteps ? cm->nsteps : 1, sizeof(*job->trace));
		job->dyn = calloc(cm->ndyn ? cm->ndyn : 1, sizeof(*job->dyn));
		for (uint32_t i = 0; job->dyn && i < cm->ndyn; i++)
			job->dyn[i].rank = -1;
	}
	if (!job || !job->steps || !job->host_us || !job->trace || !job->dyn) {
		if (job) {
			free(job->steps);
			free(job->host_us);
			free(job->trace);
			free(job->dyn);
		}
		free(job);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	job->ctx = ctx;
	job->cap = cm->nsteps ? cm->nsteps : 1;
	job->outputs = outputs;
	job->noutputs = n_outputs;

	pthread_mutex_lock(&ctx->lock);
	while (ctx->busy)
		pthread_cond_wait(&ctx->idle, &ctx->lock);
	ctx->busy = true;
	/* The recording is the last run's: start it afresh. */
	ctx->trace_ready = false;
	if (ctx->trace)
		npu_trace_rec_reset(ctx->trace);
	pthread_mutex_unlock(&ctx->lock);

	for (size_t i = 0; i < n_inputs; i++) {
		const struct npu_io *io;
		uint32_t b;
		void *dst;

		match(cm, cm->inputs, cm->ninputs, &inputs[i], i, "input", &io, &b);
		io_buffer(ctx, io, b, &dst, NULL);
		/* Checked above: cannot fail. */
		npu_tensor_to_device(&io->info, inputs[i].data, dst);
	}
	clock_gettime(CLOCK_MONOTONIC, &job->start);
	for (uint32_t i = 0, next; i < cm->nsteps && !st; i = next) {
		const struct npu_step *s = &cm->steps[i];
		uint32_t e = job->nsteps;

		next = i + 1;
		/* A Loop repeats steps: the trace grows, to a bound. */
		if (e == MAX_RUN_STEPS) {
			st = npu_fail(NPU_ERR_UNSUPPORTED,
				      "the run took %u steps, the most one run may take (a Loop repeating its body)",
				      MAX_RUN_STEPS);
			break;
		}
		if (!grow3(e + 1, &job->cap, (void **)&job->steps, sizeof(*job->steps),
			   (void **)&job->host_us, sizeof(*job->host_us), (void **)&job->trace,
			   sizeof(*job->trace))) {
			st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
			break;
		}
		job->steps[e] = NULL;
		job->host_us[e] = 0;
		job->trace[e] = i;
		if (npu_step_is_control(s))
			st = run_control(ctx, job, i, e, &next);
		else if (npu_step_on_host(s))
			st = host_step(ctx, job, i, e);
		else
			st = ctx->dev->ops->submit(ctx->dctx, ctx->bos[s->seg], (uint32_t)s->offset,
						   s->size, ctx->uses, cm->nsegs, 0, &job->steps[e]);
		if (!st)
			job->nsteps = e + 1;
	}
	if (st) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", npu_last_error());
		/* Let the steps already queued finish before reporting. */
		for (uint32_t i = 0; i < job->nsteps; i++)
			if (job->steps[i])
				ctx->dev->ops->job_wait(job->steps[i], -1);
		pthread_mutex_lock(&ctx->lock);
		finish_locked(job, NPU_ERR_DEVICE);
		pthread_mutex_unlock(&ctx->lock);
		free(job->steps);
		free(job->host_us);
		free(job->trace);
		free(job->dyn);
		free(job);
		return npu_fail(st, "%s", msg);
	}
	*out = job;
	return NPU_OK;
}

npu_status npu_job_wait(npu_job *job, int64_t timeout_ns)
{
	npu_context *ctx;
	npu_status st = NPU_OK;

	if (!job)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_job_wait: NULL job");
	ctx = job->ctx;
	if (job->finished)
		return job->result ? npu_fail(job->result, "%s", job->error) : NPU_OK;
	/* Steps run in order: the last one finishing means all did. */
	for (uint32_t i = job->nsteps, last = 1; i-- > 0;) {
		npu_status s;

		if (!job->steps[i])
			continue;	/* a host step, done in npu_submit() */
		s = ctx->dev->ops->job_wait(job->steps[i], last ? timeout_ns : -1);
		last = 0;

		if (s == NPU_ERR_TIMEOUT)
			return s;
		if (s && !st)
			st = s;
	}
	/* Report the first failing step. */
	for (uint32_t i = 0; st && i < job->nsteps; i++) {
		npu_status s = job->steps[i] ? ctx->dev->ops->job_wait(job->steps[i], 0) : NPU_OK;

		if (s) {
			char msg[512];

			const char *lbl = ctx->cm->steps[job->trace[i]].label;

			snprintf(msg, sizeof(msg), "%s", npu_last_error());
			if (lbl && *lbl)
				npu_fail(s, "step %u of %u (%s): %s", job->trace[i] + 1,
					 ctx->cm->nsteps, lbl, msg);
			else
				npu_fail(s, "step %u of %u: %s", job->trace[i] + 1, ctx->cm->nsteps,
					 msg);
			break;
		}
	}
	pthread_mutex_lock(&ctx->lock);
	finish_locked(job, st);
	pthread_mutex_unlock(&ctx->lock);
	return job->result ? npu_fail(job->result, "%s", job->error) : NPU_OK;
}

void npu_job_free(npu_job *job)
{
	if (!job)
		return;
	if (!job->finished)
		npu_job_wait(job, -1);
	free(job->steps);
	free(job->host_us);
	free(job->trace);
	free(job->dyn);
	free(job);
}

npu_status npu_run(npu_context *ctx, const npu_tensor *inputs, size_t n_inputs,
		   npu_tensor *outputs, size_t n_outputs)
{
	npu_job *job;
	npu_status st = npu_submit(ctx, inputs, n_inputs, outputs, n_outputs, &job);

	if (st)
		return st;
	st = npu_job_wait(job, -1);
	npu_job_free(job);
	return st;
}

npu_status npu_context_last_run(const npu_context *ctx, npu_run_stats *stats)
{
	if (!ctx || !stats)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_context_last_run: NULL argument");
	*stats = ctx->last;
	return NPU_OK;
}

npu_status npu_context_last_run_steps(const npu_context *ctx, npu_step_stats *steps,
				      size_t cap, size_t *count)
{
	npu_context *c = (npu_context *)ctx;

	if (!ctx || !count || (cap && !steps))
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_context_last_run_steps: NULL argument");
	pthread_mutex_lock(&c->lock);
	if (!c->last.steps) {
		pthread_mutex_unlock(&c->lock);
		*count = 0;
		return npu_fail(NPU_ERR_NOT_FOUND, "no run of this context has completed yet");
	}
	*count = c->last.steps;
	for (size_t i = 0; i < cap && i < c->last.steps; i++) {
		const struct npu_step *s = &ctx->cm->steps[c->last_trace[i]];

		steps[i].label = s->label ? s->label : "";
		steps[i].device_cycles = c->last_cycles[i];
	}
	pthread_mutex_unlock(&c->lock);
	return NPU_OK;
}

npu_status npu_context_last_run_step(const npu_context *ctx, size_t index, npu_step_info *info)
{
	npu_context *c = (npu_context *)ctx;
	npu_step_info all = { .struct_size = sizeof(all) };
	const struct npu_step *s;

	if (!ctx || !info || info->struct_size < sizeof(size_t))
		return npu_fail(NPU_ERR_INVALID_ARG,
				"npu_context_last_run_step: NULL argument or struct_size too small");
	pthread_mutex_lock(&c->lock);
	if (index >= c->last.steps) {
		unsigned n = c->last.steps;

		pthread_mutex_unlock(&c->lock);
		return npu_fail(NPU_ERR_NOT_FOUND, n ? "the last run had %u steps, no step %zu" :
				"no run of this context has completed yet%.0u%.0zu", n, index);
	}
	s = &ctx->cm->steps[c->last_trace[index]];
	all.label = s->label ? s->label : "";
	all.device_cycles = c->last_cycles[index];
	/* A control step runs on the host too, but computes no node: not "on host". */
	all.on_host = npu_step_on_host(s) && !npu_step_is_control(s);
	all.op = all.on_host ? s->host->op : NULL;
	all.host_us = all.on_host ? c->last_host_us[index] : 0;
	pthread_mutex_unlock(&c->lock);
	memcpy((char *)info + sizeof(size_t), (const char *)&all + sizeof(size_t),
	       (info->struct_size < sizeof(all) ? info->struct_size : sizeof(all)) - sizeof(size_t));
	return NPU_OK;
}

npu_status npu_context_last_run_output_info(const npu_context *ctx, size_t index,
					    npu_tensor_info *info)
{
	npu_context *c = (npu_context *)ctx;
	const struct npu_io *io;
	size_t n = 1;

	if (!ctx || !info)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_context_last_run_output_info: NULL argument");
	if (index >= ctx->cm->noutputs * npu_cmodel_batch(ctx->cm))
		return npu_fail(NPU_ERR_NOT_FOUND, "the model has %u outputs, no output %zu",
				ctx->cm->noutputs * npu_cmodel_batch(ctx->cm), index);
	io = &ctx->cm->outputs[index % ctx->cm->noutputs];
	pthread_mutex_lock(&c->lock);
	if (!c->last.steps) {
		pthread_mutex_unlock(&c->lock);
		return npu_fail(NPU_ERR_NOT_FOUND, "no run of this context has completed yet");
	}
	*info = io->info;
	if (io->dyn) {
		const struct npu_dyn_shape *s = &c->last_dyn[io->dyn - 1];

		memcpy(info->dims, s->dims, sizeof(info->dims));
		for (int d = 0; d < info->rank; d++)
			n *= (size_t)info->dims[d];
		info->bytes = n * npu_dtype_size(info->dtype);
	}
	pthread_mutex_unlock(&c->lock);
	return NPU_OK;
}

/* ---- Tracing (npu.h; the format is trace/trace_json.c's) ---- */

npu_status npu_context_trace(npu_context *ctx, size_t max_events)
{
	struct npu_trace_rec *rec = NULL;

	if (!ctx)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_context_trace: NULL context");
	if (max_events && !ctx->dev->ops->ctx_trace)
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"tracing needs the emulator: %s (%s) does not show its timeline to "
				"the host; open the device \"emu\" (npu-run --device emu)",
				ctx->dev->info.path, ctx->dev->info.driver);
	if (max_events && !(rec = npu_trace_rec_new(max_events)))
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	pthread_mutex_lock(&ctx->lock);
	while (ctx->busy)
		pthread_cond_wait(&ctx->idle, &ctx->lock);
	if (ctx->dev->ops->ctx_trace)
		ctx->dev->ops->ctx_trace(ctx->dctx, rec);
	npu_trace_rec_free(ctx->trace);
	ctx->trace = rec;
	ctx->trace_ready = false;
	pthread_mutex_unlock(&ctx->lock);
	return NPU_OK;
}

/* The last run's steps as the trace writer sees them; NULL without memory. */
static struct npu_trace_step *trace_steps(const npu_context *ctx)
{
	struct npu_trace_step *steps = calloc(ctx->last.steps ? ctx->last.steps : 1,
					      sizeof(*steps));

	for (unsigned i = 0; steps && i < ctx->last.steps; i++) {
		const struct npu_step *s = &ctx->cm->steps[ctx->last_trace[i]];

		steps[i].label = s->label;
		steps[i].kind = npu_step_is_control(s) ? NPU_TRACE_STEP_CONTROL :
				npu_step_on_host(s) ? NPU_TRACE_STEP_HOST : NPU_TRACE_STEP_DEVICE;
		steps[i].cycles = ctx->last_cycles[i];
		steps[i].host_us = ctx->last_host_us[i];
	}
	return steps;
}

npu_status npu_context_write_trace(npu_context *ctx, const char *path)
{
	struct npu_trace_run run = { 0 };
	npu_status st;
	FILE *f;

	if (!ctx || !path || !*path)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_context_write_trace: NULL argument");
	pthread_mutex_lock(&ctx->lock);
	while (ctx->busy)
		pthread_cond_wait(&ctx->idle, &ctx->lock);
	if (!ctx->trace) {
		pthread_mutex_unlock(&ctx->lock);
		return npu_fail(NPU_ERR_NOT_FOUND,
				"this context records no trace: call npu_context_trace() before the run");
	}
	if (!ctx->trace_ready) {
		pthread_mutex_unlock(&ctx->lock);
		return npu_fail(NPU_ERR_NOT_FOUND,
				"no run of this context has completed since tracing started, "
				"or the last one failed: run it, then write the trace");
	}
	if (ctx->trace->dropped) {
		size_t max = ctx->trace->max_events;

		pthread_mutex_unlock(&ctx->lock);
		return npu_fail(NPU_ERR_NO_MEMORY,
				"the last run has more than %zu trace events (spans and link "
				"transfers), the bound given to npu_context_trace(); raise it or "
				"trace a smaller input", max);
	}
	run.rec = ctx->trace;
	run.nsteps = ctx->last.steps;
	run.clock_mhz = ctx->dev->info.clock_mhz;
	run.tpbs = ctx->dev->info.tpbs_per_cluster;
	run.mesh_x = ctx->dev->info.mesh_x;
	run.nclusters = ctx->dctx->nclusters;
	run.cluster_map = ctx->dctx->cluster_map;
	run.steps = trace_steps(ctx);
	if (!run.steps) {
		pthread_mutex_unlock(&ctx->lock);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	f = fopen(path, "w");
	if (!f) {
		st = npu_fail(NPU_ERR_IO, "cannot write the trace to %s: %s", path, strerror(errno));
	} else {
		st = npu_trace_write_json(&run, f, path);
		if (fclose(f) && !st)
			st = npu_fail(NPU_ERR_IO, "writing the trace %s failed: %s", path,
				      strerror(errno));
	}
	pthread_mutex_unlock(&ctx->lock);
	free((void *)run.steps);
	return st;
}
