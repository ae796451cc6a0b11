// SPDX-License-Identifier: MIT
/*
 * Generation sessions end to end on the emulator (make check-models): for
 * each decoder exported with past and each prompt onnxruntime generated
 * from (ort_generate.js: REFDIR/NAME_pP.json and .logits.f32), the
 * session's greedy ids equal onnxruntime's for every step and each step's
 * logits have cosine >= 0.999 with onnxruntime's, in bf16 and again with
 * weight-only int8 (NPU_PRECISION_W8).  ort_generate.js refuses references
 * whose top two logits at any step are closer than 0.5 (far above the
 * device's bf16 logit error), so the ids must be equal at every step, with
 * no allowance.  Then: the same ids on a device with defective clusters
 * (another partition) as on a healthy one; two sessions on one device
 * stepped in turn give the ids each gives alone (their caches do not
 * disturb each other); a 16-token prompt in a 32-row cache stops with
 * NPU_ERR_CONTEXT_FULL after exactly 17 tokens; a prompt longer than the
 * cache and a token id outside the vocabulary are refused up front.
 *
 * Usage: generate_test REFDIR MODEL.onnx...   Prints "N passed, N failed".
 */
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu.h"

#define MAX_IDS		256
#define MAX_PROMPTS	4
#define CONTEXT		64	/* cache rows for the reference runs: prompt + 32 fit */
#define MIN_COSINE	0.999

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
}

/* One onnxruntime generation: prompt, ids, and steps x vocab logits. */
struct ref {
	char name[256];
	int64_t prompt[MAX_IDS], ids[MAX_IDS];
	size_t n_prompt, n_ids;
	double margin[MAX_IDS];	/* onnxruntime's top logit minus the next, per step */
	unsigned vocab;
	float *logits;
};

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		*len = (size_t)n;
	}
	return buf;
}

/* The integers of the JSON array after "@key": in @json. */
static size_t json_ints(const char *json, const char *key, int64_t *out, size_t cap)
{
	char pat[64];
	const char *p;
	size_t n = 0;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(json, pat);
	if (!p)
		return 0;
	p += strlen(pat);
	if (*p != '[')
		return (out[0] = strtoll(p, NULL, 10)), 1;
	for (p++; *p && *p != ']' && n < cap; n++) {
		char *end;

		out[n] = strtoll(p, &end, 10);
		p = *end == ',' ? end + 1 : end;
	}
	return n;
}

/* The numbers of the JSON array after "@key": in @json. */
static size_t json_doubles(const char *json, const char *key, double *out, size_t cap)
{
	char pat[64];
	const char *p;
	size_t n = 0;

	snprintf(pat, sizeof(pat), "\"%s\":[", key);
	p = strstr(json, pat);
	if (!p)
		return 0;
	for (p += strlen(pat); *p && *p != ']' && n < cap; n++) {
		char *end;

		out[n] = strtod(p, &end);
		p = *end == ',' ? end + 1 : end;
	}
	return n;
}

static int load_ref(const char *dir, const char *name, struct ref *r)
{
	char path[512];
	size_t len;
	char *json;
	int64_t v;

	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%.200s", name);
	snprintf(path, sizeof(path), "%s/%s.json", dir, name);
	json = slurp(path, &len);
	if (!json)
		return -1;
	r->n_prompt = json_ints(json, "prompt", r->prompt, MAX_IDS);
	r->n_ids = json_ints(json, "generated", r->ids, MAX_IDS);
	r->vocab = json_ints(json, "vocab", &v, 1) ? (unsigned)v : 0;
	if (json_doubles(json, "margin", r->margin, MAX_IDS) != r->n_ids)
		r->n_ids = 0;
	free(json);
	snprintf(path, sizeof(path), "%s/%s.logits.f32", dir, name);
	r->logits = (float *)slurp(path, &len);
	if (!r->n_prompt || !r->n_ids || !r->vocab || !r->logits ||
	    len != r->n_ids * r->vocab * sizeof(float)) {
		free(r->logits);
		return -1;
	}
	return 0;
}

static double cosine(const float *a, const float *b, size_t n)
{
	double ab = 0, aa = 0, bb = 0;

	for (size_t i = 0; i < n; i++) {
		ab += (double)a[i] * b[i];
		aa += (double)a[i] * a[i];
		bb += (double)b[i] * b[i];
	}
	return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0;
}

static npu_status create(npu_device *dev, const char *model, unsigned context,
			 npu_precision precision, npu_generator **gen)
{
	npu_generator_options o;

	npu_generator_options_init(&o);
	o.max_context = context;
	o.precision = precision;
	return npu_generator_create(dev, model, &o, gen);
}

/* Free-running greedy generation of r->n_ids tokens from r's prompt into @ids. */
static npu_status generate(npu_generator *gen, const struct ref *r, int64_t *ids)
{
	npu_status st = npu_generator_feed(gen, r->prompt, r->n_prompt);

	for (size_t k = 0; !st && k < r->n_ids; k++)
		st = npu_generator_step(gen, &ids[k]);
	return st;
}

/* The same on a fresh device @spec, on a partition of @clusters (0: all). */
static npu_status generate_on(const char *spec, unsigned clusters, const char *model,
			      const struct ref *r, int64_t *ids)
{
	npu_generator_options o;
	npu_device *dev = NULL;
	npu_generator *gen = NULL;
	npu_status st;

	npu_generator_options_init(&o);
	o.max_context = CONTEXT;
	o.clusters = clusters;
	st = npu_device_open(spec, &dev);
	if (!st)
		st = npu_generator_create(dev, model, &o, &gen);
	if (!st)
		st = generate(gen, r, ids);
	npu_generator_free(gen);
	npu_device_close(dev);
	return st;
}

/* Where @got first differs from @want (@n ids), into @buf; 1 if all equal. */
static int same_ids(const int64_t *want, const int64_t *got, size_t n, char *buf, size_t cap)
{
	for (size_t k = 0; k < n; k++)
		if (got[k] != want[k]) {
			snprintf(buf, cap, "step %zu: id %lld, expected %lld", k + 1,
				 (long long)got[k], (long long)want[k]);
			return 0;
		}
	return 1;
}

/*
 * Every step of @r against onnxruntime: ids equal, each step's logits
 * cosine at least @min_cosine.
 */
static void test_reference(npu_device *dev, const char *model, const struct ref *r,
			   npu_precision precision, double min_cosine)
{
	const char *prec = precision == NPU_PRECISION_W8 ? " (w8)" : "";
	char what[1024], detail[1024] = "";
	npu_generator *gen = NULL;
	double worst = 1;
	npu_status st;
	int ids_ok = 1;

	st = create(dev, model, CONTEXT, precision, &gen);
	if (!st)
		st = npu_generator_feed(gen, r->prompt, r->n_prompt);
	for (size_t k = 0; !st && ids_ok && k < r->n_ids; k++) {
		const float *lg;
		size_t vocab;
		int64_t id;

		st = npu_generator_step(gen, &id);
		if (!st)
			st = npu_generator_logits(gen, &lg, &vocab);
		if (st)
			break;
		if (vocab != r->vocab) {
			snprintf(detail, sizeof(detail), "vocabulary %zu, onnxruntime's %u", vocab,
				 r->vocab);
			ids_ok = 0;
			break;
		}
		double c = cosine(lg, r->logits + k * r->vocab, vocab);

		if (c < worst)
			worst = c;
		if (id != r->ids[k]) {
			snprintf(detail, sizeof(detail),
				 "step %zu: id %lld, onnxruntime %lld by a margin of %.4f",
				 k + 1, (long long)id, (long long)r->ids[k], r->margin[k]);
			ids_ok = 0;
		}
	}
	npu_generator_free(gen);
	snprintf(what, sizeof(what), "%.200s%s: greedy ids equal onnxruntime's for %zu steps",
		 r->name, prec, r->n_ids);
	if (st) {
		check(0, what, npu_last_error());
		return;
	}
	check(ids_ok, what, detail);
	snprintf(what, sizeof(what), "%.200s%s: every step's logits cosine >= %.3f (worst %.6f)",
		 r->name, prec, min_cosine, worst);
	check(ids_ok && worst >= min_cosine, what, "below the bound");
}

/* The ids @r's prompt gives on a healthy device, and on one with defects. */
static void test_defect_mask(const char *model, const struct ref *r, const int64_t *alone)
{
	char what[1024], detail[1024] = "";
	int64_t ids[MAX_IDS];
	npu_status st;

	snprintf(what, sizeof(what), "%.200s: the same ids with clusters 0 and 5 defective", r->name);
	st = generate_on("emu:defect-mask=0x21", 0, model, r, ids);
	check(!st && same_ids(alone, ids, r->n_ids, detail, sizeof(detail)), what,
	      st ? npu_last_error() : detail);
}

/* Two sessions on one device, fed and stepped in turn, against each alone. */
static void test_interleaved(const char *model, const struct ref *a, const struct ref *b)
{
	char what[1024], detail[1024] = "", d2[512] = "";
	npu_generator_options o;
	npu_device *dev = NULL;
	npu_generator *ga = NULL, *gb = NULL;
	int64_t ia[MAX_IDS], ib[MAX_IDS], sa[MAX_IDS], sb[MAX_IDS];
	size_t n = a->n_ids < b->n_ids ? a->n_ids : b->n_ids;
	npu_status st;
	int ok;

	snprintf(what, sizeof(what), "%.200s and %.200s: two sessions on one device stepped in "
		 "turn give the ids each gives alone", a->name, b->name);
	npu_generator_options_init(&o);
	o.max_context = CONTEXT;
	o.clusters = 4;		/* two partitions of one device */
	st = generate_on("emu", 4, model, a, sa);
	if (!st)
		st = generate_on("emu", 4, model, b, sb);
	if (!st)
		st = npu_device_open("emu", &dev);
	if (!st)
		st = npu_generator_create(dev, model, &o, &ga);
	if (!st)
		st = npu_generator_create(dev, model, &o, &gb);
	if (!st)
		st = npu_generator_feed(ga, a->prompt, a->n_prompt);
	if (!st)
		st = npu_generator_feed(gb, b->prompt, b->n_prompt);
	for (size_t k = 0; !st && k < n; k++) {
		st = npu_generator_step(ga, &ia[k]);
		if (!st)
			st = npu_generator_step(gb, &ib[k]);
	}
	if (st) {
		check(0, what, npu_last_error());
	} else {
		ok = same_ids(sa, ia, n, detail, sizeof(detail));
		ok &= same_ids(sb, ib, n, d2, sizeof(d2));
		strncat(detail, d2, sizeof(detail) - strlen(detail) - 1);
		check(ok, what, detail);
	}
	npu_generator_free(ga);
	npu_generator_free(gb);
	npu_device_close(dev);
}

/* The cache limits: a full cache stops, a long prompt and a bad id are refused. */
static void test_limits(const char *model, const char *tag)
{
	char what[1024], detail[1024];
	npu_generator_stats stats = { .struct_size = sizeof(stats) };
	npu_device *dev = NULL;
	npu_generator *gen = NULL;
	int64_t prompt[33], id = 0, bad = 1 << 30;
	unsigned ok_steps = 0;
	npu_status st;

	for (int i = 0; i < 33; i++)
		prompt[i] = 1 + i;
	st = npu_device_open("emu", &dev);
	if (!st)
		st = create(dev, model, 32, NPU_PRECISION_BF16, &gen);
	if (st) {
		snprintf(what, sizeof(what), "%s: a session with a 32-row cache", tag);
		check(0, what, npu_last_error());
		goto out;
	}
	snprintf(what, sizeof(what), "%s: a 33-token prompt into 32 rows is NPU_ERR_INVALID_ARG",
		 tag);
	st = npu_generator_feed(gen, prompt, 33);
	snprintf(detail, sizeof(detail), "%s: %s", npu_status_str(st), npu_last_error());
	check(st == NPU_ERR_INVALID_ARG && strstr(npu_last_error(), "33 tokens"), what, detail);
	snprintf(what, sizeof(what), "%s: an id outside the vocabulary is NPU_ERR_INVALID_ARG "
		 "naming it", tag);
	st = npu_generator_feed(gen, &bad, 1);
	snprintf(detail, sizeof(detail), "%s: %s", npu_status_str(st), npu_last_error());
	check(st == NPU_ERR_INVALID_ARG && strstr(npu_last_error(), "1073741824"), what, detail);
	snprintf(what, sizeof(what), "%s: a step before any prompt is NPU_ERR_INVALID_ARG", tag);
	st = npu_generator_step(gen, &id);
	check(st == NPU_ERR_INVALID_ARG, what, npu_status_str(st));

	snprintf(what, sizeof(what), "%s: 16-token prompt, 32 rows: 17 tokens, then "
		 "NPU_ERR_CONTEXT_FULL", tag);
	st = npu_generator_feed(gen, prompt, 16);
	while (!st && ok_steps < 40) {
		st = npu_generator_step(gen, &id);
		ok_steps += !st;
	}
	npu_generator_get_stats(gen, &stats);
	snprintf(detail, sizeof(detail), "%u steps, then %s: %s; stop %d, position %u", ok_steps,
		 npu_status_str(st), npu_last_error(), stats.stop, stats.position);
	check(ok_steps == 17 && st == NPU_ERR_CONTEXT_FULL && stats.stop == NPU_GEN_STOP_CONTEXT &&
	      stats.position == 32, what, detail);
	snprintf(what, sizeof(what), "%s: a step after the cache is full is NPU_ERR_CONTEXT_FULL "
		 "again", tag);
	st = npu_generator_step(gen, &id);
	check(st == NPU_ERR_CONTEXT_FULL, what, npu_status_str(st));
	snprintf(what, sizeof(what), "%s: feeding into a full cache is NPU_ERR_CONTEXT_FULL", tag);
	st = npu_generator_feed(gen, prompt, 1);
	check(st == NPU_ERR_CONTEXT_FULL, what, npu_status_str(st));
out:
	npu_generator_free(gen);
	npu_device_close(dev);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s REFDIR MODEL.onnx...\n", argv[0]);
		return 2;
	}
	for (int m = 2; m < argc; m++) {
		char *copy = strdup(argv[m]), *base = basename(copy), name[300];
		struct ref refs[MAX_PROMPTS];
		npu_device *dev = NULL;
		int n = 0;
		static const int prompt_lens[] = { 11, 5, 7, 9 };

		*strrchr(base, '.') = '\0';
		for (size_t p = 0; p < sizeof(prompt_lens) / sizeof(prompt_lens[0]); p++) {
			snprintf(name, sizeof(name), "%s_p%d", base, prompt_lens[p]);
			if (!load_ref(argv[1], name, &refs[n]))
				n++;
			else
				check(0, name, "no onnxruntime reference (run ort_generate.js)");
		}
		if (!npu_device_open("emu", &dev)) {
			for (int i = 0; i < n; i++)
				test_reference(dev, argv[m], &refs[i], NPU_PRECISION_BF16,
					       MIN_COSINE);
			for (int i = 0; i < n; i++)
				test_reference(dev, argv[m], &refs[i], NPU_PRECISION_W8,
					       MIN_COSINE);
			npu_device_close(dev);
			dev = NULL;
		}
		if (n) {
			int64_t alone[MAX_IDS];
			npu_status st = generate_on("emu", 0, argv[m], &refs[0], alone);

			if (st)
				check(0, refs[0].name, npu_last_error());
			else
				test_defect_mask(argv[m], &refs[0], alone);
			test_interleaved(argv[m], &refs[0], &refs[n - 1]);
		}
		test_limits(argv[m], base);
		for (int i = 0; i < n; i++)
			free(refs[i].logits);
		free(copy);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
