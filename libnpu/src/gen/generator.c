// SPDX-License-Identifier: MIT
/*
 * Generation sessions (npu.h, "Generating text"): the decode program
 * compiled at create, prefill programs per bucket on first use, one
 * context owning the partition and the KV cache (NPU_SEG_STATE) and a
 * context shared with it per other program.  Per run the host writes
 * only the few I/O elements that changed into the zero-copy buffers and
 * reads one id (greedy) or one logits row.
 *
 * The step protocol: a feed leaves the logits of its last token; a step
 * picks an id from the current logits and keeps it "pending"; the next
 * step first runs the decode program on the pending id (its K/V into the
 * next free row), then picks from the new logits.  So every token that
 * enters the cache has a row, checked before the run.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "compile/npu_compile.h"
#include "dev/npu_dev.h"
#include "gen/npu_generator.h"
#include "gen/npu_sample.h"
#include "model/npu_model_priv.h"

#define GEN_DEFAULT_CONTEXT	512
#define GEN_MAX_CONTEXT		65536
#define GEN_MIN_BUCKET		16
#define GEN_MAX_BUCKETS		16

npu_gen_compile_fn *npu_gen_compile = npu_compile_generation;

/* One compiled program of the session and the indices of its I/O. */
struct gen_prog {
	npu_model *model;
	npu_context *ctx;	/* the owner (decode) or shared with it */
	unsigned tokens;	/* S: 1 for decode, the bucket for prefill */
	int in_ids, in_mask, in_pos, in_rows;	/* -1: the model has none */
	int out_logits, out_argmax;
	unsigned mask_len;	/* elements of attention_mask */
	unsigned mask_rows;	/* decode: mask elements already 1 in its buffer */
};

struct npu_generator {
	npu_device *dev;
	npu_generator_options o;
	struct npu_compile_target tgt;
	char *model_dir;
	void *onnx;		/* kept for lazy prefill compiles */
	size_t onnx_size;
	struct gen_prog decode;
	struct gen_prog prefill[GEN_MAX_BUCKETS];
	unsigned nbuckets;	/* prefill programs compiled */
	unsigned vocab;
	unsigned position;	/* cache rows holding a token */
	int have_logits;	/* logits/argmax of the last run are current */
	const struct gen_prog *last;	/* the program of the last run */
	unsigned last_row;	/* its logits row of the last token */
	int pending;		/* the last step's id is not in the cache yet */
	int64_t pending_id;
	unsigned since_feed;	/* steps since the last feed */
	npu_generator_stop stop;
	float *logits;		/* the current logits row (host copy) */
	uint32_t *order;	/* sampling scratch */
	double *prob;
	struct npu_rng rng;
	double feed_start;	/* first feed's start, for time to first token */
	npu_generator_stats st;
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

void npu_generator_options_init(npu_generator_options *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->struct_size = sizeof(*opts);
	opts->max_context = GEN_DEFAULT_CONTEXT;
	opts->temperature = 1.0f;
	opts->eos_id = -1;
}

/* ---- files ---- */

static npu_status read_onnx(const char *path, void **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat sb;
	void *p;

	if (!f)
		return npu_fail(NPU_ERR_IO, "cannot open model '%s': %s", path, strerror(errno));
	if (fstat(fileno(f), &sb) || !S_ISREG(sb.st_mode) || !sb.st_size) {
		fclose(f);
		return npu_fail(NPU_ERR_IO, "model '%s' is not a non-empty regular file", path);
	}
	p = malloc((size_t)sb.st_size);
	if (!p || fread(p, 1, (size_t)sb.st_size, f) != (size_t)sb.st_size) {
		free(p);
		fclose(f);
		return npu_fail(p ? NPU_ERR_IO : NPU_ERR_NO_MEMORY, "cannot read model '%s'", path);
	}
	fclose(f);
	*buf = p;
	*len = (size_t)sb.st_size;
	return NPU_OK;
}

/* ---- programs ---- */

static int find_io(const npu_model *m, int output, const char *name, npu_tensor_info *t)
{
	size_t n = output ? npu_model_output_count(m) : npu_model_input_count(m);

	for (size_t i = 0; i < n; i++) {
		if (output ? npu_model_output_info(m, i, t) : npu_model_input_info(m, i, t))
			continue;
		if (!strcmp(t->name, name))
			return (int)i;
	}
	return -1;
}

/* Index the program's I/O by the names of the npu_compile_generation contract. */
static npu_status index_io(struct npu_generator *g, struct gen_prog *p)
{
	npu_tensor_info t;

	p->in_ids = find_io(p->model, 0, "input_ids", &t);
	p->in_rows = find_io(p->model, 0, "npu.kv_rows", &t);
	p->in_pos = find_io(p->model, 0, "position_ids", &t);
	p->in_mask = find_io(p->model, 0, "attention_mask", &t);
	p->mask_len = p->in_mask >= 0 ? (unsigned)(t.bytes / npu_dtype_size(t.dtype)) : 0;
	p->out_argmax = find_io(p->model, 1, "npu.argmax", &t);
	p->out_logits = find_io(p->model, 1, "logits", &t);
	if (p->in_ids < 0 || p->in_rows < 0 || p->out_logits < 0 || p->out_argmax < 0)
		return npu_fail(NPU_ERR_INTERNAL,
				"the generation program for %u tokens lacks input_ids, npu.kv_rows, logits or npu.argmax",
				p->tokens);
	if (t.rank != 3 || t.dims[1] != (int64_t)p->tokens || t.dims[2] < 1 ||
	    t.dtype != NPU_DTYPE_FLOAT32)
		return npu_fail(NPU_ERR_INTERNAL,
				"the generation program for %u tokens has logits of another shape than [1, %u, vocab] float32",
				p->tokens, p->tokens);
	if (!g->vocab)
		g->vocab = (unsigned)t.dims[2];
	else if (g->vocab != (unsigned)t.dims[2])
		return npu_fail(NPU_ERR_INTERNAL, "generation programs disagree on the vocabulary");
	return NPU_OK;
}

/* Compile the program for @tokens (0: decode) and create its context. */
static npu_status make_prog(struct npu_generator *g, unsigned tokens, struct gen_prog *p)
{
	struct npu_gen_program gp = { .max_context = g->o.max_context, .tokens = tokens };
	struct npu_cmodel *cm = NULL;
	npu_status st;

	memset(p, 0, sizeof(*p));
	p->tokens = tokens ? tokens : 1;
	st = npu_gen_compile(g->onnx, g->onnx_size, &g->tgt, &gp, &cm);
	if (st)
		return st;
	p->model = calloc(1, sizeof(*p->model));
	if (!p->model) {
		npu_cmodel_free(cm);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	p->model->cm = cm;
	if (tokens)
		st = npu_context_create_shared(p->model, g->decode.ctx, &p->ctx);
	else
		st = npu_context_create(g->dev, p->model, g->o.clusters, &p->ctx);
	return st ? st : index_io(g, p);
}

static void free_prog(struct gen_prog *p)
{
	npu_context_destroy(p->ctx);
	npu_model_free(p->model);
	memset(p, 0, sizeof(*p));
}

/* The smallest bucket holding @n tokens: 16, 32, 64, ... capped at max_context. */
static unsigned bucket_for(const struct npu_generator *g, size_t n, unsigned *index)
{
	unsigned b = GEN_MIN_BUCKET, i = 0;

	while (b < n && b < g->o.max_context) {
		b *= 2;
		i++;
	}
	*index = i;
	return b < g->o.max_context ? b : g->o.max_context;
}

static unsigned bucket_count(const struct npu_generator *g)
{
	unsigned i;

	bucket_for(g, g->o.max_context, &i);
	return i + 1;
}

/* ---- I/O elements (an int64 tensor's buffer holds int32 on the device) ---- */

static npu_status io_set(struct gen_prog *p, int index, size_t elem, int64_t v)
{
	npu_tensor_info t;
	size_t bytes, n;
	void *data;
	npu_status st;

	if (index < 0)
		return NPU_OK;
	if ((st = npu_context_input_buffer(p->ctx, (size_t)index, &data, &bytes)) ||
	    (st = npu_model_input_info(p->model, (size_t)index, &t)))
		return st;
	n = t.bytes / npu_dtype_size(t.dtype);
	if (elem >= n)
		return npu_fail(NPU_ERR_INTERNAL, "input '%s' has %zu elements, not %zu", t.name,
				n, elem + 1);
	if (bytes == n * 8)
		((int64_t *)data)[elem] = v;
	else
		((int32_t *)data)[elem] = (int32_t)v;
	return NPU_OK;
}

static npu_status io_get_id(struct gen_prog *p, size_t elem, int64_t *v)
{
	size_t bytes;
	void *data;
	npu_status st = npu_context_output_buffer(p->ctx, (size_t)p->out_argmax, &data, &bytes);

	if (st)
		return st;
	if (bytes >= (size_t)p->tokens * 8)
		*v = ((const int64_t *)data)[elem];
	else
		*v = ((const int32_t *)data)[elem];
	return NPU_OK;
}

static npu_status load_logits(struct npu_generator *g)
{
	struct gen_prog *p = (struct gen_prog *)g->last;
	size_t bytes;
	void *data;
	npu_status st = npu_context_output_buffer(p->ctx, (size_t)p->out_logits, &data, &bytes);

	if (st)
		return st;
	if (bytes < (size_t)p->tokens * g->vocab * sizeof(float))
		return npu_fail(NPU_ERR_INTERNAL, "the logits buffer is %zu bytes", bytes);
	memcpy(g->logits, (const float *)data + (size_t)g->last_row * g->vocab,
	       (size_t)g->vocab * sizeof(float));
	return NPU_OK;
}

struct run_cost {
	double wall_us;
	uint64_t cycles, dma;
};

static npu_status run_prog(struct npu_generator *g, struct gen_prog *p, unsigned row,
			   struct run_cost *c)
{
	uint64_t d0 = npu_dev_dma_bytes(g->dev);
	double t0 = now_us();
	npu_run_stats rs = { 0 };
	npu_status st = npu_run(p->ctx, NULL, 0, NULL, 0);

	c->wall_us = now_us() - t0;
	if (st)
		return st;
	npu_context_last_run(p->ctx, &rs);
	c->cycles = rs.device_cycles;
	c->dma = npu_dev_dma_bytes(g->dev) - d0;
	g->last = p;
	g->last_row = row;
	g->have_logits = 1;
	return NPU_OK;
}

static double cycles_us(const struct npu_generator *g, uint64_t cycles)
{
	return g->st.clock_mhz ? (double)cycles / g->st.clock_mhz : 0;
}

/* Run @id through the decode program at the next free row. */
static npu_status decode_one(struct npu_generator *g, int64_t id, struct run_cost *c)
{
	struct gen_prog *p = &g->decode;
	unsigned row = g->position;
	npu_status st;

	if (row >= g->o.max_context)
		return npu_fail(NPU_ERR_CONTEXT_FULL,
				"the KV cache's %u rows are all used; start a new session (or raise max_context)",
				g->o.max_context);
	/* Only the elements that changed: the mask grows one row per token. */
	while (p->in_mask >= 0 && p->mask_rows <= row) {
		if ((st = io_set(p, p->in_mask, p->mask_rows, 1)))
			return st;
		p->mask_rows++;
	}
	if ((st = io_set(p, p->in_ids, 0, id)) || (st = io_set(p, p->in_pos, 0, row)) ||
	    (st = io_set(p, p->in_rows, 0, row)))
		return st;
	st = run_prog(g, p, 0, c);
	if (st)
		return st;
	g->position++;
	g->st.decode_runs++;
	g->st.decode_wall_us += c->wall_us;
	g->st.decode_cycles += c->cycles;
	g->st.decode_device_us += cycles_us(g, c->cycles);
	g->st.decode_dma_bytes += c->dma;
	return NPU_OK;
}

/* Run the prompt into the empty cache with the smallest bucket that holds it. */
static npu_status prefill(struct npu_generator *g, const int64_t *ids, size_t n)
{
	unsigned bi, b = bucket_for(g, n, &bi);
	struct gen_prog *p;
	struct run_cost c;
	npu_status st;

	if (bi >= GEN_MAX_BUCKETS)
		return npu_fail(NPU_ERR_INTERNAL, "prefill bucket %u out of range", b);
	p = &g->prefill[bi];
	if (!p->model) {
		st = make_prog(g, b, p);
		if (st) {
			free_prog(p);
			return st;
		}
		/* Every bucket compiled: the ONNX bytes are not needed again. */
		if (++g->nbuckets == bucket_count(g)) {
			free(g->onnx);
			g->onnx = NULL;
		}
	}
	/* Padding after the prompt: id 0, masked; its K/V rows are masked
	 * in decode until overwritten by the tokens that follow. */
	for (unsigned i = 0; i < b; i++) {
		if ((st = io_set(p, p->in_ids, i, i < n ? ids[i] : 0)) ||
		    (st = io_set(p, p->in_pos, i, i)) || (st = io_set(p, p->in_rows, i, i)) ||
		    (i < p->mask_len && (st = io_set(p, p->in_mask, i, i < n))))
			return st;
	}
	st = run_prog(g, p, (unsigned)n - 1, &c);
	if (st)
		return st;
	g->position = (unsigned)n;
	g->st.prefill_tokens = b;
	g->st.prefill_wall_us = c.wall_us;
	g->st.prefill_cycles = c.cycles;
	return NPU_OK;
}

/* ---- the API ---- */

static npu_status check_options(const npu_generator_options *o)
{
	if (!o->max_context || o->max_context > GEN_MAX_CONTEXT)
		return npu_fail(NPU_ERR_INVALID_ARG, "max_context %u: give 1 to %u positions",
				o->max_context, GEN_MAX_CONTEXT);
	if (o->precision == NPU_PRECISION_INT8)
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"generation in int8 (calibrated activations) is not supported; use bf16");
	if (o->precision == NPU_PRECISION_BF16X3)
		return npu_fail(NPU_ERR_UNSUPPORTED,
				"generation at bf16x3 is not supported (it splits Convs, which "
				"decoders have none of); use bf16 or w8");
	if (o->precision != NPU_PRECISION_DEFAULT && o->precision != NPU_PRECISION_BF16 &&
	    o->precision != NPU_PRECISION_W8)
		return npu_fail(NPU_ERR_INVALID_ARG, "precision %d is not a precision", o->precision);
	if (o->sampling != NPU_SAMPLING_GREEDY && o->sampling != NPU_SAMPLING_RANDOM)
		return npu_fail(NPU_ERR_INVALID_ARG, "sampling %d is neither greedy nor random",
				o->sampling);
	if (o->sampling == NPU_SAMPLING_RANDOM &&
	    (!(o->temperature > 0) || !(o->top_p >= 0) || o->top_p > 1))
		return npu_fail(NPU_ERR_INVALID_ARG,
				"random sampling needs a temperature above 0 (%g given) and top_p from 0 to 1 (%g given)",
				o->temperature, o->top_p);
	return NPU_OK;
}

/* The partition to compile for, as npu_model_load_* does for @dev. */
static npu_status set_target(struct npu_generator *g)
{
	const npu_device_info *di = &g->dev->info;

	g->tgt.clusters = di->healthy_clusters;
	g->tgt.tpbs = di->tpbs_per_cluster;
	g->tgt.hbsm_size = di->hbsm_size;
	/* w8: int8 weights streamed and widened on chip, bf16 activations. */
	g->tgt.precision = g->o.precision == NPU_PRECISION_W8 ? NPU_PRECISION_W8
							      : NPU_PRECISION_BF16;
	g->tgt.batch = 1;
	g->tgt.model_dir = g->model_dir;
	if (g->o.clusters) {
		if (g->o.clusters > di->healthy_clusters)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"%u clusters requested; the device has %u healthy clusters",
					g->o.clusters, di->healthy_clusters);
		g->tgt.clusters = g->o.clusters;
	}
	return NPU_OK;
}

npu_status npu_generator_create(npu_device *dev, const char *path,
				const npu_generator_options *opts, npu_generator **out)
{
	struct npu_generator *g;
	npu_status st;
	char *dir;

	if (out)
		*out = NULL;
	if (!dev || !path || !out)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_generator_create: NULL argument");
	g = calloc(1, sizeof(*g));
	if (!g)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	g->dev = dev;
	npu_generator_options_init(&g->o);
	if (opts) {
		if (opts->struct_size < sizeof(size_t) || opts->struct_size > sizeof(g->o)) {
			free(g);
			return npu_fail(NPU_ERR_INVALID_ARG,
					"npu_generator_options.struct_size %zu: call npu_generator_options_init()",
					opts->struct_size);
		}
		memcpy(&g->o, opts, opts->struct_size);
	}
	g->st.struct_size = sizeof(g->st);
	g->st.max_context = g->o.max_context;
	g->st.clock_mhz = dev->info.clock_mhz;
	npu_rng_seed(&g->rng, g->o.seed);
	dir = strdup(path);
	g->model_dir = dir ? strdup(dirname(dir)) : NULL;
	free(dir);
	st = check_options(&g->o);
	if (!st && !g->model_dir)
		st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	if (!st)
		st = set_target(g);
	if (!st)
		st = read_onnx(path, &g->onnx, &g->onnx_size);
	if (!st)
		st = make_prog(g, 0, &g->decode);
	if (!st) {
		g->st.vocab = g->vocab;
		g->logits = malloc((size_t)g->vocab * sizeof(float));
		g->order = malloc((size_t)g->vocab * sizeof(uint32_t));
		g->prob = malloc((size_t)g->vocab * sizeof(double));
		if (!g->logits || !g->order || !g->prob)
			st = npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	if (st) {
		char msg[1024];

		snprintf(msg, sizeof(msg), "%s", npu_last_error());
		npu_generator_free(g);
		return npu_fail(st, "%s: %s", path, msg);
	}
	*out = g;
	return NPU_OK;
}

void npu_generator_free(npu_generator *gen)
{
	if (!gen)
		return;
	/* The shared contexts before the owner of the partition and cache. */
	for (unsigned i = 0; i < GEN_MAX_BUCKETS; i++)
		free_prog(&gen->prefill[i]);
	free_prog(&gen->decode);
	free(gen->onnx);
	free(gen->model_dir);
	free(gen->logits);
	free(gen->order);
	free(gen->prob);
	free(gen);
}

static npu_status check_ids(const struct npu_generator *g, const int64_t *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] < 0 || ids[i] >= (int64_t)g->vocab)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"token %zu is id %lld, outside the vocabulary of %u ids (0 to %u)",
					i, (long long)ids[i], g->vocab, g->vocab - 1);
	return NPU_OK;
}

npu_status npu_generator_feed(npu_generator *g, const int64_t *ids, size_t n)
{
	size_t need;
	npu_status st;

	if (!g || (!ids && n))
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_generator_feed: NULL argument");
	if (!n)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_generator_feed: no tokens; give at least one");
	need = n + (g->pending ? 1 : 0);
	if (!g->position && n > g->o.max_context)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"the prompt has %zu tokens, more than the maximum context of %u; shorten it or raise max_context",
				n, g->o.max_context);
	if (need > (size_t)g->o.max_context - g->position)
		return npu_fail(NPU_ERR_CONTEXT_FULL,
				"%zu tokens do not fit into the %u free rows of the KV cache (%u of %u used)",
				need, g->o.max_context - g->position, g->position, g->o.max_context);
	if ((st = check_ids(g, ids, n)))
		return st;
	if (!g->st.fed)
		g->feed_start = now_us();
	g->have_logits = 0;
	if (!g->position) {
		st = prefill(g, ids, n);
	} else {
		struct run_cost c;

		st = g->pending ? decode_one(g, g->pending_id, &c) : NPU_OK;
		g->pending = 0;
		for (size_t i = 0; !st && i < n; i++)
			st = decode_one(g, ids[i], &c);
	}
	if (!st && g->o.sampling != NPU_SAMPLING_GREEDY)
		st = load_logits(g);
	if (st) {
		g->have_logits = 0;
		return st;
	}
	g->st.fed += (unsigned)n;
	g->since_feed = 0;
	g->stop = NPU_GEN_RUNNING;
	g->st.position = g->position;
	g->st.stop = g->stop;
	return NPU_OK;
}

npu_status npu_generator_step(npu_generator *g, int64_t *id)
{
	double t0 = now_us();
	struct run_cost c = { 0 };
	npu_status st;
	int64_t v;

	if (!g || !id)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_generator_step: NULL argument");
	if (!g->st.fed)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_generator_step: feed a prompt first");
	if (g->stop == NPU_GEN_STOP_EOS || g->stop == NPU_GEN_STOP_MAX_TOKENS)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"the session stopped at %s; feed more tokens to go on",
				g->stop == NPU_GEN_STOP_EOS ? "the end-of-sequence id" :
				"max_new_tokens");
	if (g->pending) {
		if (g->position >= g->o.max_context) {
			g->stop = g->st.stop = NPU_GEN_STOP_CONTEXT;
			return npu_fail(NPU_ERR_CONTEXT_FULL,
					"the KV cache's %u rows are all used after %u generated tokens; the last token has no row",
					g->o.max_context, g->st.generated);
		}
		st = decode_one(g, g->pending_id, &c);
		if (!st && g->o.sampling != NPU_SAMPLING_GREEDY)
			st = load_logits(g);
		if (st)
			return st;
		g->pending = 0;
	}
	if (!g->have_logits)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_generator_step: the last run failed; feed again");
	if (g->o.sampling == NPU_SAMPLING_GREEDY) {
		st = io_get_id((struct gen_prog *)g->last, g->last_row, &v);
		if (st)
			return st;
	} else {
		struct npu_sample_params sp = {
			.temperature = g->o.temperature, .top_k = g->o.top_k, .top_p = g->o.top_p,
		};

		v = npu_sample_logits(&sp, &g->rng, g->logits, g->vocab, g->order, g->prob);
	}
	if (v < 0 || v >= (int64_t)g->vocab)
		return npu_fail(NPU_ERR_INTERNAL, "the device's ArgMax gave id %lld of %u",
				(long long)v, g->vocab);
	*id = v;
	g->pending = 1;
	g->pending_id = v;
	g->since_feed++;
	g->st.generated++;
	if (g->st.generated == 1)
		g->st.first_token_us = now_us() - g->feed_start;
	if (g->o.eos_id >= 0 && v == g->o.eos_id)
		g->stop = NPU_GEN_STOP_EOS;
	else if (g->o.max_new_tokens && g->since_feed >= g->o.max_new_tokens)
		g->stop = NPU_GEN_STOP_MAX_TOKENS;
	g->st.stop = g->stop;
	g->st.position = g->position;
	g->st.step_wall_us = now_us() - t0;
	g->st.step_cycles = c.cycles;
	g->st.step_device_us = cycles_us(g, c.cycles);
	g->st.step_dma_bytes = c.dma;
	return NPU_OK;
}

npu_status npu_generator_logits(npu_generator *g, const float **logits, size_t *vocab)
{
	npu_status st;

	if (!g || !logits || !vocab)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_generator_logits: NULL argument");
	if (!g->have_logits)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_generator_logits: nothing has run; feed a prompt first");
	/* Greedy reads only the id per step: fetch the row on demand. */
	if (g->o.sampling == NPU_SAMPLING_GREEDY && (st = load_logits(g)))
		return st;
	*logits = g->logits;
	*vocab = g->vocab;
	return NPU_OK;
}

npu_status npu_generator_get_stats(const npu_generator *g, npu_generator_stats *stats)
{
	if (!g || !stats)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_generator_get_stats: NULL argument");
	if (stats->struct_size < sizeof(size_t) || stats->struct_size > sizeof(g->st))
		return npu_fail(NPU_ERR_INVALID_ARG,
				"npu_generator_stats.struct_size %zu: set it to sizeof(npu_generator_stats)",
				stats->struct_size);
	memcpy((char *)stats + sizeof(size_t), (const char *)&g->st + sizeof(size_t),
	       stats->struct_size - sizeof(size_t));
	return NPU_OK;
}

npu_status npu_generator_last_steps(const npu_generator *g, npu_step_stats *steps, size_t cap,
				    size_t *count)
{
	if (!g || !count || (cap && !steps))
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_generator_last_steps: NULL argument");
	if (!g->st.decode_runs || !g->decode.ctx)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"npu_generator_last_steps: no decode step has run yet (call npu_generator_step after a feed)");
	return npu_context_last_run_steps(g->decode.ctx, steps, cap, count);
}
