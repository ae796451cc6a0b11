// SPDX-License-Identifier: MIT
/*
 * npu-run: compile or load a model, run it on an M100 NPU (a kernel
 * device or the emulator) and report wall latency, throughput and the
 * simulated NPU time, optionally with a per-step and per-unit profile,
 * the top-k classes and the outputs written to files.  It uses libnpu's
 * public API only (npu.h), like any application would.
 *
 * Flow: parse the command line (args.c), open the device, load and
 * compile the model, match and read the inputs (inputs.c), create a
 * context, write the inputs into its zero-copy buffers once, run warmup
 * and timed iterations with nothing to copy, optionally one more run
 * between two counter samples for --profile, then write outputs
 * (outputs.c) and print the summary (report.c).
 *
 * Exit status: 0 ok, 1 runtime error (device, model, input files, run),
 * 2 bad command line.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "detect.h"
#include "draw.h"
#include "generate.h"
#include "inputs.h"
#include "outputs.h"
#include "report.h"
#include "fix.h"
#include "shapes.h"
#include "trace.h"
#include "util.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npu-run reads and writes little-endian tensors in place: little-endian hosts only"
#endif

/* Everything a run holds, so one function can free it on every path. */
struct state {
	npu_device *dev;
	npu_model *model;
	npu_context *ctx;
	npu_labels *labels;
	struct nr_input *in;
	size_t n_in;
	double *lat;
	size_t n_lat;
	npu_step_stats *steps;
	double *step_host_us;
	struct nr_host_step *host;
	npu_top_k_entry *top;
	float *scores;
	char **paths;
	size_t n_paths;
};

static void state_free(struct state *st)
{
	nr_output_paths_free(st->paths, st->n_paths);
	free(st->scores);
	free(st->top);
	free(st->steps);
	free(st->step_host_us);
	free(st->host);
	free(st->lat);
	nr_inputs_free(st->in, st->n_in);
	npu_labels_free(st->labels);
	npu_context_destroy(st->ctx);
	npu_model_free(st->model);
	npu_device_close(st->dev);
}

/* ---- device ---- */

static int is_device_path(const char *spec)
{
	return spec && strcmp(spec, "emu") && strncmp(spec, "emu:", 4);
}

static int open_device(const char *spec, npu_device **dev)
{
	const char *env = getenv("NPU_DEVICE"), *eff = spec;
	char label[600];
	struct stat sb;
	npu_status s = npu_device_open(spec, dev);

	if (s == NPU_OK)
		return 0;
	if (spec) {
		snprintf(label, sizeof(label), "--device %s", spec);
	} else if (env && *env) {
		snprintf(label, sizeof(label), "NPU_DEVICE=%s", env);
		eff = env;
	} else {
		snprintf(label, sizeof(label), "default device");
	}
	if (is_device_path(eff) && stat(eff, &sb) && errno == ENOENT)
		return nr_fail(NR_EXIT_RUNTIME, "%s: no such device node; load npu.ko or use "
			       "--device emu", label);
	if (s == NPU_ERR_NO_DEVICE)
		return nr_fail(NR_EXIT_RUNTIME, "%s: %s; check the node, or use --device emu",
			       label, npu_last_error());
	return nr_fail(NR_EXIT_RUNTIME, "%s: %s", label, npu_last_error());
}

/* A partition larger than the device's healthy clusters can never be had. */
static int check_clusters(const struct nr_options *o, npu_device *dev)
{
	npu_device_info info;

	if (!o->clusters || npu_device_get_info(dev, &info) != NPU_OK ||
	    o->clusters <= info.healthy_clusters)
		return 0;
	return nr_fail(NR_EXIT_USAGE, "--clusters %u: device %s has %u healthy clusters; give "
		       "--clusters %u or fewer", o->clusters, info.path, info.healthy_clusters,
		       info.healthy_clusters);
}

/* ---- model ---- */

/* "scheme://...": a URL for npu_model_load_url (which checks the scheme). */
static int is_url(const char *s)
{
	const char *p = strstr(s, "://");

	if (!p || p == s)
		return 0;
	for (const char *q = s; q < p; q++)
		if (!isalnum((unsigned char)*q) && *q != '+' && *q != '-' && *q != '.')
			return 0;
	return 1;
}

struct progress {
	const char *url;
	double last;
	int shown;
};

/* Download progress on stderr, only for a terminal (see fetch_options). */
static int show_progress(void *user, uint64_t received, uint64_t total)
{
	struct progress *p = user;
	double now = nr_now();

	if (p->shown && now - p->last < 0.1 && received != total)
		return 0;
	p->last = now;
	p->shown = 1;
	if (total)
		fprintf(stderr, "\rnpu-run: downloading %s: %.1f of %.1f MB (%.0f%%)   ", p->url,
			(double)received / 1e6, (double)total / 1e6,
			100.0 * (double)received / (double)total);
	else
		fprintf(stderr, "\rnpu-run: downloading %s: %.1f MB   ", p->url,
			(double)received / 1e6);
	return 0;
}

/* libnpu's message says what is wrong; add what to do where it does not. */
static const char *load_hint(npu_status s, int url)
{
	switch (s) {
	case NPU_ERR_UNSUPPORTED: return "; run with a model the NPU supports";
	case NPU_ERR_FORMAT: return "; give an ONNX model or a .npum file written by npu-run -o";
	case NPU_ERR_IO: return url ? "" : "; check the model path";
	case NPU_ERR_NETWORK:
	case NPU_ERR_TIMEOUT:
	case NPU_ERR_NOT_FOUND: return url ? "; check the URL and the network" : "";
	default: return "";
	}
}

static int load_model(const struct nr_options *o, npu_device *dev, npu_model **model,
		      double *ms)
{
	npu_compile_options copts;
	npu_status s;
	int url = is_url(o->model);
	double t0;

	npu_compile_options_init(&copts);
	copts.precision = o->precision;
	copts.calibration_dir = o->calibrate;
	copts.clusters = o->clusters;
	copts.batch = o->batch;
	copts.allow_cpu_fallback = o->cpu_fallback;
	copts.max_loop_iterations = o->max_loop_iterations;
	copts.input_shapes = o->shapes;
	copts.n_input_shapes = o->n_shapes;
	copts.input_values = o->fix_values;
	copts.n_input_values = o->n_fix_values;
	t0 = nr_now();
	if (url) {
		struct progress p = { .url = o->model };
		npu_fetch_options fo;

		npu_fetch_options_init(&fo);
		if (isatty(STDERR_FILENO)) {
			fo.progress = show_progress;
			fo.progress_user = &p;
		}
		s = npu_model_load_url(o->model, &fo, dev, &copts, model);
		if (p.shown)
			fputc('\n', stderr);
	} else {
		s = npu_model_load_file(o->model, dev, &copts, model);
	}
	*ms = (nr_now() - t0) * 1e3;
	if (s != NPU_OK) {
		const char *msg = npu_last_error();

		/* Some messages already say what to do ("...: check the URL"). */
		return nr_fail(NR_EXIT_RUNTIME, "%s%s", msg,
			       strstr(msg, "check ") || strstr(msg, "; ") ? "" : load_hint(s, url));
	}
	/* A .npum keeps the shapes it was compiled with: --shape can only agree. */
	for (unsigned i = 0; i < o->n_shapes; i++) {
		const npu_input_shape *sh = &o->shapes[i];
		size_t n = npu_model_input_count(*model), k;
		npu_tensor_info t = { 0 };
		int fixed = 0;

		/* A --fix'ed input is no input of the compiled model. */
		for (size_t f = 0; f < o->n_fix_values; f++)
			fixed |= !strcmp(o->fix_values[f].name, sh->name);
		if (fixed)
			continue;
		for (k = 0; k < n; k++)
			if (!npu_model_input_info(*model, k, &t) && !strcmp(t.name, sh->name))
				break;
		if (k == n)
			return nr_fail(NR_EXIT_RUNTIME, "--shape %s: %s has no input of that name",
				       sh->name, o->model);
		if (t.rank != sh->rank ||
		    memcmp(t.dims, sh->dims, (size_t)sh->rank * sizeof(sh->dims[0])))
			return nr_fail(NR_EXIT_RUNTIME, "--shape %s: %s is compiled for another "
				       "shape of it; compile the ONNX model with this --shape",
				       sh->name, o->model);
	}
	/* A .npum keeps the batch it was compiled with; --batch cannot change it. */
	if (o->batch && npu_model_batch(*model) != o->batch)
		return nr_fail(NR_EXIT_RUNTIME, "%s is compiled for batch %u, not %u; compile the "
			       "ONNX model with --batch %u", o->model, npu_model_batch(*model),
			       o->batch, o->batch);
	return 0;
}

/* ---- runs ---- */

static int run_once(npu_context *ctx, double *ms)
{
	double t0 = nr_now();
	npu_status s = npu_run(ctx, NULL, 0, NULL, 0);

	*ms = (nr_now() - t0) * 1e3;
	if (s != NPU_OK)
		return nr_fail(NR_EXIT_RUNTIME, "the run failed (%s): %s", npu_status_str(s),
			       npu_last_error());
	return 0;
}

static void read_counters(npu_device *dev, npu_device_counters *c)
{
	/* A backend that cannot read them reports have = 0: not an error. */
	if (npu_device_read_counters(dev, c) != NPU_OK)
		memset(c, 0, sizeof(*c));
}

/* Warmup, then timed runs until both --iterations and --duration are met. */
static int timed_loop(const struct nr_options *o, struct state *st, struct nr_report *r)
{
	npu_device_counters a, b;
	size_t cap = o->iterations;
	double start, ms;
	int rc;

	for (unsigned i = 0; i < o->warmup; i++) {
		rc = run_once(st->ctx, &ms);
		if (rc)
			return rc;
	}
	st->lat = malloc(cap * sizeof(*st->lat));
	if (!st->lat)
		return nr_fail(NR_EXIT_RUNTIME, "out of memory");
	read_counters(st->dev, &a);
	start = nr_now();
	while (st->n_lat < o->iterations || nr_now() - start < o->duration) {
		if (st->n_lat == cap) {
			double *bigger = realloc(st->lat, 2 * cap * sizeof(*st->lat));

			if (!bigger)
				return nr_fail(NR_EXIT_RUNTIME, "out of memory");
			st->lat = bigger;
			cap *= 2;
		}
		rc = run_once(st->ctx, &st->lat[st->n_lat]);
		if (rc)
			return rc;
		st->n_lat++;
	}
	read_counters(st->dev, &b);
	nr_counters_delta(&a, &b, &r->loop_delta);
	npu_context_last_run(st->ctx, &r->last);
	r->lat_ms = st->lat;
	r->n_lat = st->n_lat;
	return 0;
}

/* One more run between two counter samples: its steps and unit loads. */
static int profile_run(struct state *st, struct nr_profile *p)
{
	npu_device_counters a, b;
	npu_run_stats rs;
	size_t n = 0;
	double ms;
	int rc;

	read_counters(st->dev, &a);
	rc = run_once(st->ctx, &ms);
	if (rc)
		return rc;
	read_counters(st->dev, &b);
	nr_counters_delta(&a, &b, &p->delta);
	npu_context_last_run(st->ctx, &rs);
	p->total_cycles = rs.device_cycles;
	if (npu_context_last_run_steps(st->ctx, NULL, 0, &n) != NPU_OK)
		return nr_fail(NR_EXIT_RUNTIME, "reading the steps: %s", npu_last_error());
	st->steps = calloc(n ? n : 1, sizeof(*st->steps));
	if (!st->steps)
		return nr_fail(NR_EXIT_RUNTIME, "out of memory");
	if (npu_context_last_run_steps(st->ctx, st->steps, n, &p->n_steps) != NPU_OK)
		return nr_fail(NR_EXIT_RUNTIME, "reading the steps: %s", npu_last_error());
	if (p->n_steps > n)
		p->n_steps = n;
	p->steps = st->steps;
	st->step_host_us = calloc(n ? n : 1, sizeof(*st->step_host_us));
	if (!st->step_host_us)
		return nr_fail(NR_EXIT_RUNTIME, "out of memory");
	for (size_t i = 0; i < p->n_steps; i++) {
		npu_step_info si = { .struct_size = sizeof(si) };

		if (npu_context_last_run_step(st->ctx, i, &si) == NPU_OK && si.on_host)
			st->step_host_us[i] = si.host_us;
		else
			st->step_host_us[i] = -1;
	}
	p->host_us = st->step_host_us;
	return 0;
}

/*
 * The host steps (CPU fallback) of the last timed run: each node and its
 * wall time, and their share of the run's wall time.
 */
static int host_steps(struct state *st, struct nr_report *r)
{
	size_t n = r->last.steps;

	st->host = calloc(n ? n : 1, sizeof(*st->host));
	if (!st->host)
		return nr_fail(NR_EXIT_RUNTIME, "out of memory");
	for (size_t i = 0; i < n; i++) {
		npu_step_info si = { .struct_size = sizeof(si) };

		if (npu_context_last_run_step(st->ctx, i, &si) != NPU_OK)
			return nr_fail(NR_EXIT_RUNTIME, "reading the steps: %s", npu_last_error());
		if (!si.on_host)
			continue;
		st->host[r->n_host].label = si.label;
		st->host[r->n_host].op = si.op;
		st->host[r->n_host].us = si.host_us;
		r->host_us += si.host_us;
		r->n_host++;
	}
	r->host = st->host;
	return 0;
}

/* ---- top-k ---- */

static int find_output(const npu_model *model, const char *name, size_t *index)
{
	size_t n = npu_model_output_count(model);
	char names[512] = "";
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		npu_tensor_info t;

		if (npu_model_output_info(model, i, &t) != NPU_OK)
			continue;
		if (!name || !strcmp(t.name, name)) {
			*index = i;
			return 0;
		}
		if (len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s'%s'",
						len ? ", " : "", t.name);
	}
	if (!name)
		return nr_fail(NR_EXIT_RUNTIME, "--top-k: the model has no outputs");
	return nr_fail(NR_EXIT_USAGE, "--top-k-output %s: the model has no output of that name; "
		       "its outputs are %s", name, names);
}

static float half_to_float(uint16_t h, int bf16)
{
	uint32_t x;
	float f;

	if (bf16) {
		x = (uint32_t)h << 16;
	} else {
		uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;

		if (e == 0x1f) {
			x = sign | 0x7f800000 | m << 13;
		} else if (e) {
			x = sign | (e + 112) << 23 | m << 13;
		} else {
			f = (float)m / 16777216.0f;	/* m x 2^-24 */
			return sign ? -f : f;
		}
	}
	memcpy(&f, &x, sizeof(f));
	return f;
}

/* Output @idx of batch element 0 as float32 scores. */
static int output_scores(struct state *st, size_t idx, const npu_tensor_info *t, int64_t *n)
{
	uint64_t elems = nr_shape_elems(t->dims, t->rank);
	/* The buffer holds what the NPU computes in: float64 as float32. */
	npu_dtype dt = npu_dtype_device(t->dtype);
	void *data;
	size_t bytes;

	if (npu_context_output_buffer(st->ctx, idx, &data, &bytes) != NPU_OK)
		return nr_fail(NR_EXIT_RUNTIME, "output '%s': %s", t->name, npu_last_error());
	/* An output of run-time size fills the start of its buffer (the bound). */
	if (elems * npu_dtype_size(dt) > bytes)
		elems = 0;
	st->scores = malloc((elems ? elems : 1) * sizeof(float));
	if (!st->scores)
		return nr_fail(NR_EXIT_RUNTIME, "out of memory");
	*n = (int64_t)elems;
	switch (dt) {
	case NPU_DTYPE_FLOAT32:
		memcpy(st->scores, data, elems * sizeof(float));
		return 0;
	case NPU_DTYPE_FLOAT16:
	case NPU_DTYPE_BFLOAT16:
		for (uint64_t i = 0; i < elems; i++)
			st->scores[i] = half_to_float(((const uint16_t *)data)[i],
						      t->dtype == NPU_DTYPE_BFLOAT16);
		return 0;
	case NPU_DTYPE_UINT8:
	case NPU_DTYPE_INT8:
		if (t->scale > 0 && npu_dequantize(t->dtype, data, st->scores, (int64_t)elems,
						   t->scale, t->zero_point) == NPU_OK)
			return 0;
		break;
	default:
		break;
	}
	return nr_fail(NR_EXIT_RUNTIME, "--top-k: output '%s' is %s%s; top-k needs float scores "
		       "(choose another with --top-k-output)", t->name, npu_dtype_str(t->dtype),
		       t->scale > 0 ? "" : " without a quantization scale");
}

static int top_k(const struct nr_options *o, struct state *st, size_t idx, struct nr_top_k *tk)
{
	npu_tensor_info t;
	int64_t n = 0, k;
	int rc;

	/* The last run's shape: an output of run-time size has -1 dims in the model. */
	if (npu_context_last_run_output_info(st->ctx, idx, &t) != NPU_OK)
		return nr_fail(NR_EXIT_RUNTIME, "%s", npu_last_error());
	rc = output_scores(st, idx, &t, &n);
	if (rc)
		return rc;
	k = (int64_t)o->top_k < n ? (int64_t)o->top_k : n;
	st->top = calloc(k ? (size_t)k : 1, sizeof(*st->top));
	if (!st->top)
		return nr_fail(NR_EXIT_RUNTIME, "out of memory");
	if (npu_top_k(st->scores, n, k, st->labels, st->top, &tk->n) != NPU_OK)
		return nr_fail(NR_EXIT_RUNTIME, "--top-k: %s", npu_last_error());
	tk->output = t.name;
	tk->entries = st->top;
	return 0;
}

/* ---- main ---- */

/* --detect's picture coordinates and --draw, on input 0 (the detector's). */
static int detect_picture(const struct nr_options *o, const struct state *st,
			  struct nr_detect *det)
{
	const struct nr_input *in = st->n_in ? &st->in[0] : NULL;

	if (in && in->image.rgb) {
		det->image = in->file;
		det->image_w = in->image.w;
		det->image_h = in->image.h;
	}
	if (!o->draw)
		return 0;
	det->draw = o->draw;
	if (!in)
		return nr_fail(NR_EXIT_RUNTIME, "--draw: the model has no input to draw on");
	return nr_draw(o, in, det);
}

static int compile_only(const struct nr_options *o, struct state *st, double load_ms)
{
	npu_device_info info;

	npu_device_get_info(st->dev, &info);
	nr_report_compiled(o, &info, st->model, load_ms);
	return 0;
}

static int run(const struct nr_options *o)
{
	struct state st = { 0 };
	struct nr_report r = { .o = o };
	struct nr_profile prof = { 0 };
	struct nr_top_k tk = { 0 };
	struct nr_detect det = { .threshold = (float)o->detect_threshold };
	size_t top_idx = 0;
	int rc;

	if (o->labels && npu_labels_load(o->labels, &st.labels) != NPU_OK) {
		rc = nr_fail(NR_EXIT_RUNTIME, "--labels: %s; give a text file with one label per "
			     "line", npu_last_error());
		goto out;
	}
	rc = open_device(o->device, &st.dev);
	if (!rc)
		rc = check_clusters(o, st.dev);
	if (!rc && o->trace)
		rc = nr_trace_check(o->trace, st.dev);
	if (!rc && o->generate) {
		rc = nr_generate(o, st.dev);
		goto out;
	}
	if (!rc)
		rc = load_model(o, st.dev, &st.model, &r.load_ms);
	if (!rc && o->save && npu_model_save(st.model, o->save) != NPU_OK)
		rc = nr_fail(NR_EXIT_RUNTIME, "-o %s: %s", o->save, npu_last_error());
	if (rc)
		goto out;
	if (o->compile_only) {
		rc = compile_only(o, &st, r.load_ms);
		goto out;
	}
	if (o->detect_from) {
		/* Decode outputs someone else computed (another engine, say). */
		rc = nr_detect_run(st.model, NULL, o->detect_from, &det);
		/* --draw: on the --input picture (or tensor) the outputs came from. */
		if (!rc && o->draw)
			rc = nr_inputs_prepare(st.model, 1, o, &st.in, &st.n_in);
		if (!rc)
			rc = detect_picture(o, &st, &det);
		if (!rc)
			nr_detect_print_only(&det, o->model, o->json);
		goto out;
	}
	npu_device_get_info(st.dev, &r.dev);
	r.model = st.model;
	r.batch = npu_model_batch(st.model);
	if (!r.batch)
		r.batch = 1;
	r.partition = o->clusters ? o->clusters : npu_model_clusters(st.model);
	if (r.partition < npu_model_clusters(st.model)) {
		rc = nr_fail(NR_EXIT_USAGE, "--clusters %u: %s is compiled for %u clusters; give "
			     "--clusters %u or more, or compile the ONNX model with --clusters %u",
			     o->clusters, o->model, npu_model_clusters(st.model),
			     npu_model_clusters(st.model), o->clusters);
		goto out;
	}
	if (o->top_k)
		rc = find_output(st.model, o->top_k_output, &top_idx);
	/* Before the runs: a format the outputs cannot take costs no run time. */
	if (!rc && o->output_dir)
		rc = nr_outputs_check(st.model, o->output_format);
	if (!rc)
		rc = nr_inputs_prepare(st.model, r.batch, o, &st.in, &st.n_in);
	if (rc)
		goto out;
	if (npu_context_create(st.dev, st.model, o->clusters, &st.ctx) != NPU_OK) {
		rc = nr_fail(NR_EXIT_RUNTIME, "%s", npu_last_error());
		goto out;
	}
	rc = nr_inputs_copy(st.ctx, st.in, st.n_in, r.batch);
	if (!rc && o->trace)
		rc = nr_trace_start(st.ctx);
	if (!rc)
		rc = timed_loop(o, &st, &r);
	if (!rc)
		rc = host_steps(&st, &r);
	if (!rc && o->profile) {
		rc = profile_run(&st, &prof);
		r.prof = &prof;
	}
	/* The last run: --profile's when given, so the two describe one run. */
	if (!rc && o->trace)
		rc = nr_trace_write(st.ctx, o->trace);
	if (!rc && o->output_dir) {
		rc = nr_outputs_write(st.ctx, st.model, r.batch, o->output_dir, o->output_format,
				      &st.paths);
		st.n_paths = npu_model_output_count(st.model);
		r.output_paths = st.paths;
	}
	if (!rc && o->top_k) {
		rc = top_k(o, &st, top_idx, &tk);
		r.top = &tk;
	}
	if (!rc && o->detect) {
		rc = nr_detect_run(st.model, st.ctx, NULL, &det);
		if (!rc)
			rc = detect_picture(o, &st, &det);
		r.det = &det;
	}
	if (rc)
		goto out;
	r.inputs = st.in;
	r.n_inputs = st.n_in;
	r.ctx = st.ctx;
	nr_report_print(&r);
	if (fflush(stdout))
		rc = nr_fail(NR_EXIT_RUNTIME, "writing the summary failed: %s", strerror(errno));
out:
	nr_detect_free(&det);
	state_free(&st);
	return rc;
}

int main(int argc, char **argv)
{
	struct nr_options o;
	int rc = nr_parse_args(argc, argv, &o);

	/* Open input dims from the --input files, before anything loads. */
	if (rc < 0 && !o.generate && (rc = nr_shapes_from_inputs(&o)) == 0)
		rc = -1;
	/* Inputs fixed at compile time, after the shapes they may need. */
	if (rc < 0 && (rc = nr_fix_prepare(&o)) == 0)
		rc = -1;
	if (rc < 0)
		rc = run(&o);
	nr_options_free(&o);
	return rc;
}
