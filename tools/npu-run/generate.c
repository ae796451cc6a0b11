// SPDX-License-Identifier: MIT
/*
 * npu-run --generate: read the prompt, create a generation session
 * (libnpu compiles the decode program and sets up the KV cache on the
 * device), feed the prompt, step until N tokens, the end-of-sequence id
 * or the full context, timing each step, then print the ids and the
 * figures (report.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generate.h"
#include "report.h"
#include "util.h"

static int read_prompt_file(const char *path, int64_t **ids, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, got;
	int rc;

	if (!f)
		return nr_fail(NR_EXIT_RUNTIME, "--prompt-ids-file %s: %s", path, strerror(errno));
	do {
		if (len + 4096 + 1 > cap) {
			char *bigger = realloc(buf, cap = 2 * cap + 4096 + 1);

			if (!bigger) {
				free(buf);
				fclose(f);
				return nr_fail(NR_EXIT_RUNTIME, "out of memory");
			}
			buf = bigger;
		}
		got = fread(buf + len, 1, 4096, f);
		len += got;
	} while (got);
	fclose(f);
	buf[len] = '\0';
	if (strlen(buf) != len) {
		free(buf);
		return nr_fail(NR_EXIT_RUNTIME, "--prompt-ids-file %s: not a text file of token ids",
			       path);
	}
	rc = nr_parse_ids("--prompt-ids-file", buf, ids, n);
	free(buf);
	return rc ? NR_EXIT_RUNTIME : 0;
}

static const char *stop_phrase(npu_generator_stop stop, unsigned n)
{
	switch (stop) {
	case NPU_GEN_STOP_EOS: return "end-of-sequence id";
	case NPU_GEN_STOP_CONTEXT: return "maximum context reached";
	case NPU_GEN_STOP_MAX_TOKENS: return n == 1 ? "1 token asked" : "the tokens asked";
	default: return "running";
	}
}

int nr_generate(const struct nr_options *o, npu_device *dev)
{
	struct nr_gen_report r = { .o = o, .st = { .struct_size = sizeof(r.st) } };
	npu_generator_options go;
	npu_generator *gen = NULL;
	int64_t *file_ids = NULL, *ids = NULL;
	npu_step_stats *steps = NULL;
	npu_device_counters work0, work1;
	unsigned work_runs;
	double t0;
	npu_status s;
	int rc = 0;

	r.prompt = o->prompt_ids;
	r.n_prompt = o->n_prompt_ids;
	if (o->prompt_ids_file) {
		rc = read_prompt_file(o->prompt_ids_file, &file_ids, &r.n_prompt);
		if (rc)
			return rc;
		r.prompt = file_ids;
	}
	npu_device_get_info(dev, &r.dev);
	{
		npu_device_counters c;

		r.have_traffic = npu_device_read_counters(dev, &c) == NPU_OK &&
				 (c.have & NPU_HAVE_TRAFFIC);
	}
	npu_generator_options_init(&go);
	if (o->max_context)
		go.max_context = o->max_context;
	go.precision = o->precision;
	go.clusters = o->clusters;
	go.eos_id = o->eos_id;
	go.max_new_tokens = o->generate;
	if (o->sample_random) {
		go.sampling = NPU_SAMPLING_RANDOM;
		go.temperature = o->sample_temperature;
		go.top_k = o->sample_top_k;
		go.top_p = o->sample_top_p;
		go.seed = o->sample_seed;
	}
	if (r.n_prompt > go.max_context) {
		rc = nr_fail(NR_EXIT_USAGE, "the prompt has %zu tokens, more than the maximum "
			     "context of %u; shorten it or raise --max-context", r.n_prompt,
			     go.max_context);
		goto out;
	}
	ids = malloc(o->generate * sizeof(*ids));
	r.step_ms = malloc(o->generate * sizeof(*r.step_ms));
	if (!ids || !r.step_ms) {
		rc = nr_fail(NR_EXIT_RUNTIME, "out of memory");
		goto out;
	}
	t0 = nr_now();
	s = npu_generator_create(dev, o->model, &go, &gen);
	r.create_ms = (nr_now() - t0) * 1e3;
	if (s != NPU_OK) {
		const char *msg = npu_last_error();
		int hint = (s == NPU_ERR_UNSUPPORTED || s == NPU_ERR_FORMAT ||
			    s == NPU_ERR_NOT_FOUND || s == NPU_ERR_SHAPE) && !strstr(msg, "past");

		rc = nr_fail(NR_EXIT_RUNTIME, "%s%s", msg, hint ? "; --generate needs a decoder "
			     "exported with past (past_key_values inputs, present outputs)" : "");
		goto out;
	}
	if (npu_generator_feed(gen, r.prompt, r.n_prompt) != NPU_OK) {
		rc = nr_fail(NR_EXIT_RUNTIME, "the prompt: %s", npu_last_error());
		goto out;
	}
	npu_generator_get_stats(gen, &r.st);
	work_runs = r.st.decode_runs;
	if (npu_device_read_counters(dev, &work0) != NPU_OK)
		work0.have = 0;
	while (r.n_ids < o->generate) {
		double ts = nr_now();

		s = npu_generator_step(gen, &ids[r.n_ids]);
		if (s == NPU_ERR_CONTEXT_FULL)
			break;
		if (s != NPU_OK) {
			rc = nr_fail(NR_EXIT_RUNTIME, "step %zu failed (%s): %s", r.n_ids + 1,
				     npu_status_str(s), npu_last_error());
			goto out;
		}
		/* The first step's time is in the time to first token. */
		if (r.n_ids)
			r.step_ms[r.n_step++] = (nr_now() - ts) * 1e3;
		r.n_ids++;
		npu_generator_get_stats(gen, &r.st);
		if (r.st.stop != NPU_GEN_RUNNING)
			break;
	}
	npu_generator_get_stats(gen, &r.st);
	if (o->profile && npu_device_read_counters(dev, &work1) == NPU_OK &&
	    (work0.have & work1.have & NPU_HAVE_WORK)) {
		nr_counters_delta(&work0, &work1, &r.work);
		r.work_runs = r.st.decode_runs - work_runs;
		r.have_work = 1;
	}
	if (o->profile && r.st.decode_runs) {
		size_t n = 0;

		if (npu_generator_last_steps(gen, NULL, 0, &n) == NPU_OK && n &&
		    (steps = calloc(n, sizeof(*steps))) &&
		    npu_generator_last_steps(gen, steps, n, &r.n_steps) == NPU_OK)
			r.steps = steps;
	}
	r.ids = ids;
	r.stop = stop_phrase(r.st.stop, o->generate);
	nr_report_generation(&r);
	if (fflush(stdout))
		rc = nr_fail(NR_EXIT_RUNTIME, "writing the summary failed: %s", strerror(errno));
out:
	npu_generator_free(gen);
	free(r.step_ms);
	free(steps);
	free(ids);
	free(file_ids);
	return rc;
}
