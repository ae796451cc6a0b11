// SPDX-License-Identifier: MIT
/*
 * npu-run: the command line.  Options take their value as the next
 * argument or after '=' (--batch 4, --batch=4); the model is the one
 * argument that is not an option.  Everything is checked here, before a
 * device is opened or a model compiled, so a typo costs no compile time.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "detect.h"
#include "util.h"

#define NR_VERSION_STR(a, b, c) #a "." #b "." #c
#define NR_VERSION_XSTR(a, b, c) NR_VERSION_STR(a, b, c)
#define NR_VERSION NR_VERSION_XSTR(NPU_LIB_VERSION_MAJOR, NPU_LIB_VERSION_MINOR, \
				   NPU_LIB_VERSION_PATCH)

/* Upper bounds that only catch typos (and keep counts within unsigned). */
#define MAX_WARMUP	1000000u
#define MAX_ITERATIONS	100000000u
#define MAX_TOP_K	1000000u
#define MAX_DURATION	86400.0
#define MAX_GENERATE	1000000u
#define MAX_CONTEXT	65536u		/* npu_generator_options.max_context */

static void usage(FILE *f)
{
	fputs("usage: npu-run MODEL|URL [options]\n"
	      "Compile (ONNX) or load (.npum) a model, run it on an M100 NPU and report\n"
	      "latency, throughput and simulated NPU time.\n"
	      "\n"
	      "  --device SPEC         emu, emu:key=value,..., /dev/accel/accelN\n"
	      "                        (default: $NPU_DEVICE, a kernel device, else emu)\n"
	      "  --clusters N          partition size in clusters (default: the model's)\n"
	      "  --precision P         bf16, bf16x3 (Convs as three bf16 products: near fp32),\n"
	      "                        int8 (needs --calibrate DIR) or w8 (int8 weights)\n"
	      "  --calibrate DIR       sample inputs (.npy or raw float32) for int8\n"
	      "  --batch N             inputs per run, pipelined (1..64)\n"
	      "  --cpu-fallback        run operators the NPU cannot on the CPU, as host steps\n"
	      "                        between NPU programs (listed in the summary)\n"
	      "  --max-loop-iterations N  a Loop that has not stopped after N iterations\n"
	      "                        fails the run (default 65536)\n"
	      "  --shape NAME=DIMS     compile input NAME with shape DIMS, e.g. 1x3x224x224\n"
	      "                        (repeatable; needed for symbolic dims such as batch;\n"
	      "                        NAME= alone is a scalar)\n"
	      "  --fix NAME=VALUES     compile input NAME as a constant (repeatable): numbers\n"
	      "                        joined by ',' in its dtype (e.g. sr=16000) or an .npy\n"
	      "                        FILE; only what the value selects is compiled and the\n"
	      "                        model no longer takes the input\n"
	      "  --input NAME=FILE     input data, raw little-endian or .npy (repeatable);\n"
	      "                        inputs not given are generated deterministically\n"
	      "  --input NAME=IMAGE    a PNG or JPEG picture (recognised by its content):\n"
	      "                        resized to the input's height and width (area when\n"
	      "                        shrinking 2x or more, else bilinear), RGB (or grey for\n"
	      "                        1 channel), (pixel/255 - mean) / std for float32,\n"
	      "                        pixels 0..255 for uint8\n"
	      "  --image-mean LIST     one value or one per channel (default 0; 0.5 with\n"
	      "                        --detect blazeface: BlazeFace takes [-1, 1])\n"
	      "  --image-std LIST      one value or one per channel (default 1; 0.5 with\n"
	      "                        --detect blazeface)\n"
	      "  --image-layout L      nchw or nhwc (default: the dim of size 3 or 1 of the\n"
	      "                        input's shape)\n"
	      "  --output-dir DIR      write each output as DIR/<name>.bin\n"
	      "  --output-format F     raw (DIR/<name>.bin, the default) or npy (DIR/<name>.npy,\n"
	      "                        NumPy format with shape and dtype)\n"
	      "  --warmup N            untimed runs first (default 1)\n"
	      "  --iterations N        timed runs (default 10)\n"
	      "  --duration S          run at least S seconds (and at least N iterations)\n"
	      "  --percentiles LIST    latency percentiles, e.g. 50,90,99 (the default)\n"
	      "  --json                print the summary as one JSON object\n"
	      "  --profile             per-step cycles, unit, DMA and NoC link utilization\n"
	      "                        (with --generate: the last decode run's steps)\n"
	      "  --trace FILE          write the last run's simulated timeline (a span per\n"
	      "                        instruction on each unit, DMA, NoC links, steps) as\n"
	      "                        Chrome trace JSON for ui.perfetto.dev (emulator only)\n"
	      "  --top-k K             the K best classes of the first output\n"
	      "  --top-k-output NAME   ... of this output instead\n"
	      "  --labels FILE         class names, one per line (with --top-k)\n"
	      "  --detect blazeface    decode face boxes (anchors, weighted NMS) from the outputs\n"
	      "  --detect-threshold F  minimum face score, 0..1 (default 0.5)\n"
	      "  --draw FILE.png       with --detect: write input 0 (the picture at its own\n"
	      "                        size, or the tensor) with each box, keypoints, score\n"
	      "  --detect-from DIR     decode DIR/<output>.bin (as --output-dir writes) instead of\n"
	      "                        running the model\n"
	      "  --generate N          generate N tokens with a decoder exported with past\n"
	      "                        (KV cache on the device); prints the ids, time to first\n"
	      "                        token, per-token latency, tokens/s, simulated time and\n"
	      "                        DDR bytes per token\n"
	      "  --prompt-ids LIST     the prompt's token ids, e.g. 1,2,3 (with --generate)\n"
	      "  --prompt-ids-file F   ... read from F (ids separated by commas or spaces)\n"
	      "  --max-context L       positions the KV cache holds (default 512)\n"
	      "  --sample SPEC         greedy (the default, ArgMax on the device) or\n"
	      "                        top-k=K,top-p=P,temperature=T,seed=S (any of them)\n"
	      "  --eos ID              stop after generating the end-of-sequence id ID\n"
	      "  --compile-only        compile and write the model (-o), do not run\n"
	      "  -o FILE               write the compiled model (native .npum format)\n"
	      "  -h, --help            this help\n"
	      "  --version             print the version\n"
	      "\n"
	      "Exit status: 0 ok, 1 device, model or run error, 2 bad command line.\n",
	      f);
}

const char *nr_precision_str(npu_precision p)
{
	switch (p) {
	case NPU_PRECISION_BF16: return "bf16";
	case NPU_PRECISION_INT8: return "int8";
	case NPU_PRECISION_W8: return "w8";
	case NPU_PRECISION_BF16X3: return "bf16x3";
	default: return "default";
	}
}

/* An unsigned decimal from @lo to @hi. */
static int parse_uint(const char *flag, const char *s, unsigned lo, unsigned hi,
		      unsigned *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || v < lo || v > hi)
		return nr_fail(NR_EXIT_USAGE, "%s: '%s' is not an integer from %u to %u", flag,
			       s, lo, hi);
	*out = (unsigned)v;
	return 0;
}

static int parse_duration(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(*out) || *out < 0 || *out > MAX_DURATION)
		return nr_fail(NR_EXIT_USAGE,
			       "--duration: '%s' is not a number of seconds from 0 to %.0f", s,
			       MAX_DURATION);
	return 0;
}

/* A comma-separated list of percentiles, each 0 < p <= 100. */
static int parse_percentiles(const char *s, struct nr_options *o)
{
	const char *p = s;

	o->n_percentiles = 0;
	for (;;) {
		char *end;
		double v;

		errno = 0;
		v = strtod(p, &end);
		if (end == p || errno || !isfinite(v) || (*end && *end != ','))
			return nr_fail(NR_EXIT_USAGE,
				       "--percentiles: '%s' is not a comma-separated list of "
				       "numbers (e.g. 50,90,99)", s);
		if (v <= 0 || v > 100)
			return nr_fail(NR_EXIT_USAGE,
				       "--percentiles: %g is not a percentile; give numbers "
				       "above 0 and at most 100", v);
		if (o->n_percentiles == NR_MAX_PERCENTILES)
			return nr_fail(NR_EXIT_USAGE, "--percentiles: more than %d values",
				       NR_MAX_PERCENTILES);
		o->percentiles[o->n_percentiles++] = v;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

/*
 * --shape NAME=DIMS: DIMS is sizes joined by 'x' ("1x3x224x224"), each 1 to
 * 2^31; empty for a scalar (rank 0).  The name is checked against the
 * model's inputs when it is compiled.
 */
static int parse_shape(const char *s, struct nr_options *o)
{
	const char *eq = strchr(s, '='), *p;
	npu_input_shape *sh;

	if (!eq || eq == s)
		return nr_fail(NR_EXIT_USAGE, "--shape: '%s' is not NAME=DIMS (e.g. x=1x3x224x224)",
			       s);
	for (unsigned i = 0; i < o->n_shapes; i++)
		if (strlen(o->shapes[i].name) == (size_t)(eq - s) &&
		    !strncmp(o->shapes[i].name, s, (size_t)(eq - s)))
			return nr_fail(NR_EXIT_USAGE, "--shape: input '%.*s' is given twice",
				       (int)(eq - s), s);
	sh = &o->shapes[o->n_shapes];
	memset(sh, 0, sizeof(*sh));
	for (p = eq + 1; *p;) {
		unsigned long long v;
		char *end;

		if (sh->rank == NPU_MAX_RANK)
			return nr_fail(NR_EXIT_USAGE, "--shape %s: more than %d dims", s,
				       NPU_MAX_RANK);
		errno = 0;
		v = strtoull(p, &end, 10);
		if (*p < '0' || *p > '9' || errno || v < 1 || v > (1ull << 31) ||
		    (*end && (*end != 'x' || !end[1])))
			return nr_fail(NR_EXIT_USAGE,
				       "--shape %s: DIMS must be sizes from 1 to 2147483648 joined "
				       "by 'x' (e.g. 1x3x224x224)", s);
		sh->dims[sh->rank++] = (int64_t)v;
		p = *end ? end + 1 : end;
	}
	sh->name = strndup(s, (size_t)(eq - s));
	if (!sh->name)
		return nr_fail(NR_EXIT_RUNTIME, "out of memory");
	o->n_shapes++;
	return 0;
}

const npu_input_shape *nr_shape_given(const struct nr_options *o, const char *name)
{
	for (unsigned i = 0; i < o->n_shapes; i++)
		if (!strcmp(o->shapes[i].name, name))
			return &o->shapes[i];
	return NULL;
}

int nr_parse_ids(const char *what, const char *s, int64_t **ids, size_t *n)
{
	size_t cap = strlen(s) / 2 + 1, k = 0;
	int64_t *v = malloc(cap * sizeof(*v));
	const char *p = s;

	if (!v)
		return nr_fail(NR_EXIT_RUNTIME, "out of memory");
	for (;;) {
		long long x;
		char *end;

		while (*p == ',' || *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (!*p)
			break;
		errno = 0;
		x = strtoll(p, &end, 10);
		if (*p < '0' || *p > '9' || errno || x > INT32_MAX ||
		    (*end && !strchr(", \t\n\r", *end))) {
			free(v);
			return nr_fail(NR_EXIT_USAGE, "%s: '%.*s' is not a token id (a number from 0 "
				       "to %d)", what, (int)strcspn(p, ", \t\n\r"), p, INT32_MAX);
		}
		v[k++] = x;
		p = end;
	}
	if (!k) {
		free(v);
		return nr_fail(NR_EXIT_USAGE, "%s: the prompt is empty; give at least one token id",
			       what);
	}
	free(*ids);
	*ids = v;
	*n = k;
	return 0;
}

/* --sample greedy | top-k=K,top-p=P,temperature=T,seed=S (any subset). */
static int parse_sample(const char *s, struct nr_options *o)
{
	const char *p = s;

	if (!strcmp(s, "greedy")) {
		o->sample_random = 0;
		return 0;
	}
	o->sample_random = 1;
	while (*p) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);
		char *end;
		double v;

		errno = 0;
		v = eq ? strtod(eq + 1, &end) : 0;
		if (!eq || end == eq + 1 || end != p + len || errno || !isfinite(v))
			goto bad;
		if (eq - p == 5 && !strncmp(p, "top-k", 5) && v >= 0 && v <= MAX_TOP_K &&
		    v == floor(v))
			o->sample_top_k = (unsigned)v;
		else if (eq - p == 5 && !strncmp(p, "top-p", 5) && v > 0 && v <= 1)
			o->sample_top_p = (float)v;
		else if (eq - p == 11 && !strncmp(p, "temperature", 11) && v > 0 && v <= 1000)
			o->sample_temperature = (float)v;
		else if (eq - p == 4 && !strncmp(p, "seed", 4) && v >= 0 && v == floor(v) &&
			 v < 18446744073709551616.0)
			o->sample_seed = strtoull(eq + 1, NULL, 10);
		else
			goto bad;
		p += len;
		if (*p == ',' && *++p == '\0')
			goto bad;
	}
	return 0;
bad:
	return nr_fail(NR_EXIT_USAGE, "--sample %s: give greedy, or any of top-k=K (an integer), "
		       "top-p=P (above 0, at most 1), temperature=T (above 0), seed=S (an "
		       "integer) joined by commas, e.g. top-k=40,top-p=0.9,temperature=0.8,seed=1",
		       s);
}

static int parse_precision(const char *s, npu_precision *out)
{
	if (!strcmp(s, "bf16"))
		*out = NPU_PRECISION_BF16;
	else if (!strcmp(s, "int8"))
		*out = NPU_PRECISION_INT8;
	else if (!strcmp(s, "w8"))
		*out = NPU_PRECISION_W8;
	else if (!strcmp(s, "bf16x3"))
		*out = NPU_PRECISION_BF16X3;
	else
		return nr_fail(NR_EXIT_USAGE, "--precision: '%s' is none of bf16, bf16x3, int8 and w8",
			       s);
	return 0;
}

static int parse_output_format(const char *s, struct nr_options *o)
{
	if (!strcmp(s, "raw"))
		o->output_format = NR_OUTPUT_RAW;
	else if (!strcmp(s, "npy"))
		o->output_format = NR_OUTPUT_NPY;
	else
		return nr_fail(NR_EXIT_USAGE, "--output-format: '%s' is not a format; choose raw "
			       "or npy", s);
	o->output_format_given = 1;
	return 0;
}

/* --image-mean / --image-std: one number, or one per channel joined by ','. */
static int parse_channels(const char *flag, const char *s, int positive, float *v,
			  unsigned *n)
{
	const char *p = s;

	*n = 0;
	for (;;) {
		char *end;
		double x;

		errno = 0;
		x = strtod(p, &end);
		if (end == p || errno || !isfinite(x) || (*end && *end != ',') ||
		    (positive && !(x > 0)) || *n == 3)
			return nr_fail(NR_EXIT_USAGE, "%s %s: give one number or three joined by ',' "
				       "(one per channel, e.g. 0.485,0.456,0.406)%s", flag, s,
				       positive ? ", each above 0" : "");
		v[(*n)++] = (float)x;
		if (!*end)
			break;
		p = end + 1;
	}
	if (*n == 2)
		return nr_fail(NR_EXIT_USAGE, "%s %s: two values; give one for every channel or "
			       "one per channel (3 for RGB)", flag, s);
	return 0;
}

/* Apply one option that takes a value. */
static int apply(struct nr_options *o, const char *flag, const char *val)
{
	if (!strcmp(flag, "--device")) {
		if (!*val)
			return nr_fail(NR_EXIT_USAGE, "--device: empty; give emu or a device node");
		o->device = val;
		return 0;
	}
	if (!strcmp(flag, "--clusters"))
		return parse_uint(flag, val, 1, NPU_MAX_CLUSTERS, &o->clusters);
	if (!strcmp(flag, "--precision"))
		return parse_precision(val, &o->precision);
	if (!strcmp(flag, "--calibrate")) {
		o->calibrate = val;
		return 0;
	}
	if (!strcmp(flag, "--batch"))
		return parse_uint(flag, val, 1, NR_MAX_BATCH, &o->batch);
	if (!strcmp(flag, "--max-loop-iterations"))
		return parse_uint(flag, val, 1, 1u << 24, &o->max_loop_iterations);
	if (!strcmp(flag, "--input")) {
		o->inputs[o->n_inputs++] = val;
		return 0;
	}
	if (!strcmp(flag, "--shape"))
		return parse_shape(val, o);
	if (!strcmp(flag, "--fix")) {
		o->fixes[o->n_fixes++] = val;
		return 0;
	}
	if (!strcmp(flag, "--output-dir")) {
		if (!*val)
			return nr_fail(NR_EXIT_USAGE, "--output-dir: empty directory name");
		o->output_dir = val;
		return 0;
	}
	if (!strcmp(flag, "--output-format"))
		return parse_output_format(val, o);
	if (!strcmp(flag, "--warmup"))
		return parse_uint(flag, val, 0, MAX_WARMUP, &o->warmup);
	if (!strcmp(flag, "--iterations"))
		return parse_uint(flag, val, 1, MAX_ITERATIONS, &o->iterations);
	if (!strcmp(flag, "--duration"))
		return parse_duration(val, &o->duration);
	if (!strcmp(flag, "--percentiles"))
		return parse_percentiles(val, o);
	if (!strcmp(flag, "--top-k"))
		return parse_uint(flag, val, 1, MAX_TOP_K, &o->top_k);
	if (!strcmp(flag, "--top-k-output")) {
		o->top_k_output = val;
		return 0;
	}
	if (!strcmp(flag, "--labels")) {
		o->labels = val;
		return 0;
	}
	if (!strcmp(flag, "--detect")) {
		if (!nr_detect_known(val))
			return nr_fail(NR_EXIT_USAGE, "--detect %s: unknown detector; known: blazeface",
				       val);
		o->detect = val;
		return 0;
	}
	if (!strcmp(flag, "--detect-threshold")) {
		char *end;

		errno = 0;
		o->detect_threshold = strtod(val, &end);
		if (errno || end == val || *end || !(o->detect_threshold >= 0) ||
		    o->detect_threshold > 1)
			return nr_fail(NR_EXIT_USAGE, "--detect-threshold %s: give a score from 0 to 1",
				       val);
		return 0;
	}
	if (!strcmp(flag, "--detect-from")) {
		if (!*val)
			return nr_fail(NR_EXIT_USAGE, "--detect-from: empty directory name");
		o->detect_from = val;
		return 0;
	}
	if (!strcmp(flag, "--image-mean"))
		return parse_channels(flag, val, 0, o->image_mean, &o->n_image_mean);
	if (!strcmp(flag, "--image-std"))
		return parse_channels(flag, val, 1, o->image_std, &o->n_image_std);
	if (!strcmp(flag, "--image-layout")) {
		if (!strcmp(val, "nchw"))
			o->image_layout = NR_LAYOUT_NCHW;
		else if (!strcmp(val, "nhwc"))
			o->image_layout = NR_LAYOUT_NHWC;
		else
			return nr_fail(NR_EXIT_USAGE, "--image-layout %s: give nchw or nhwc", val);
		return 0;
	}
	if (!strcmp(flag, "--draw")) {
		if (!*val)
			return nr_fail(NR_EXIT_USAGE, "--draw: empty file name");
		o->draw = val;
		return 0;
	}
	if (!strcmp(flag, "--generate")) {
		o->gen_flag = 1;
		return parse_uint(flag, val, 1, MAX_GENERATE, &o->generate);
	}
	if (!strcmp(flag, "--prompt-ids")) {
		o->gen_flag = 1;
		if (o->prompt_ids)
			return nr_fail(NR_EXIT_USAGE, "--prompt-ids is given twice");
		return nr_parse_ids(flag, val, &o->prompt_ids, &o->n_prompt_ids);
	}
	if (!strcmp(flag, "--prompt-ids-file")) {
		o->gen_flag = 1;
		if (!*val)
			return nr_fail(NR_EXIT_USAGE, "--prompt-ids-file: empty file name");
		o->prompt_ids_file = val;
		return 0;
	}
	if (!strcmp(flag, "--max-context")) {
		o->gen_flag = 1;
		return parse_uint(flag, val, 1, MAX_CONTEXT, &o->max_context);
	}
	if (!strcmp(flag, "--sample")) {
		o->gen_flag = 1;
		return parse_sample(val, o);
	}
	if (!strcmp(flag, "--eos")) {
		unsigned id;

		o->gen_flag = 1;
		if (parse_uint(flag, val, 0, INT32_MAX, &id))
			return 1;
		o->eos_id = id;
		return 0;
	}
	if (!strcmp(flag, "--trace")) {
		if (!*val)
			return nr_fail(NR_EXIT_USAGE, "--trace: empty file name");
		o->trace = val;
		return 0;
	}
	if (!strcmp(flag, "-o")) {
		if (!*val)
			return nr_fail(NR_EXIT_USAGE, "-o: empty file name");
		o->save = val;
		return 0;
	}
	return nr_fail(NR_EXIT_USAGE, "unknown option '%s' (see --help)", flag);
}

static int takes_value(const char *flag)
{
	static const char *const flags[] = {
		"--device", "--clusters", "--precision", "--calibrate", "--batch", "--input", "--shape",
		"--fix", "--output-dir", "--output-format", "--warmup", "--iterations", "--duration",
		"--percentiles", "--top-k", "--top-k-output", "--labels", "-o", "--detect",
		"--detect-threshold", "--detect-from", "--generate", "--prompt-ids",
		"--prompt-ids-file", "--max-context", "--sample", "--eos", "--max-loop-iterations",
		"--image-mean", "--image-std", "--image-layout", "--draw", "--trace",
	};

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (!strcmp(flag, flags[i]))
			return 1;
	return 0;
}

/* A flag without a value; returns 1 if @arg was one. */
static int apply_switch(struct nr_options *o, const char *arg)
{
	if (!strcmp(arg, "--json"))
		o->json = 1;
	else if (!strcmp(arg, "--profile"))
		o->profile = 1;
	else if (!strcmp(arg, "--compile-only"))
		o->compile_only = 1;
	else if (!strcmp(arg, "--cpu-fallback"))
		o->cpu_fallback = 1;
	else
		return 0;
	return 1;
}

/* Combinations that cannot work, found before any device or model work. */
static int check_combinations(struct nr_options *o)
{
	if (!o->model)
		return nr_fail(NR_EXIT_USAGE, "no model given; usage: npu-run MODEL|URL [options] "
			       "(see --help)");
	if (o->precision == NPU_PRECISION_INT8 && !o->calibrate)
		return nr_fail(NR_EXIT_USAGE, "--precision int8 needs --calibrate DIR, a directory "
			       "of sample inputs (.npy or raw float32)");
	/* --calibrate alone asks for int8: it means nothing otherwise. */
	if (o->calibrate && o->precision == NPU_PRECISION_DEFAULT)
		o->precision = NPU_PRECISION_INT8;
	if (o->calibrate && o->precision != NPU_PRECISION_INT8)
		return nr_fail(NR_EXIT_USAGE, "--calibrate applies to --precision int8 only");
	if (o->compile_only && !o->save)
		return nr_fail(NR_EXIT_USAGE, "--compile-only needs -o FILE, where to write the "
			       "compiled model");
	if (o->output_format_given && !o->output_dir)
		return nr_fail(NR_EXIT_USAGE, "--output-format says how --output-dir writes the "
			       "outputs; add --output-dir DIR");
	if (o->trace && (o->generate || o->compile_only || o->detect_from))
		return nr_fail(NR_EXIT_USAGE, "--trace records a model's run: it does not apply to "
			       "%s", o->generate ? "--generate" : o->compile_only ?
			       "--compile-only" : "--detect-from");
	if (o->detect_from && !o->detect)
		return nr_fail(NR_EXIT_USAGE, "--detect-from needs --detect DETECTOR");
	if (o->draw && !o->detect)
		return nr_fail(NR_EXIT_USAGE, "--draw draws the detections: add --detect blazeface");
	if (o->gen_flag && !o->generate)
		return nr_fail(NR_EXIT_USAGE, "--prompt-ids, --prompt-ids-file, --max-context, "
			       "--sample and --eos apply to --generate N only");
	if (o->generate) {
		if (o->prompt_ids && o->prompt_ids_file)
			return nr_fail(NR_EXIT_USAGE, "--prompt-ids and --prompt-ids-file both give "
				       "the prompt; give one of them");
		if (!o->prompt_ids && !o->prompt_ids_file)
			return nr_fail(NR_EXIT_USAGE, "--generate needs a prompt: --prompt-ids 1,2,3 "
				       "or --prompt-ids-file FILE");
		if (o->batch || o->precision == NPU_PRECISION_INT8 || o->n_inputs ||
		    o->n_shapes || o->n_fixes || o->output_dir || o->top_k || o->detect || o->compile_only ||
		    o->save)
			return nr_fail(NR_EXIT_USAGE, "--generate runs a generation session: "
				       "--batch, --precision int8, --input, --shape, --fix, --output-dir, "
				       "--top-k, --detect, --compile-only and -o do not "
				       "apply to it");
	}
	if ((o->labels || o->top_k_output) && !o->top_k)
		return nr_fail(NR_EXIT_USAGE, "%s needs --top-k K",
			       o->labels ? "--labels" : "--top-k-output");
	return -1;
}

int nr_parse_args(int argc, char **argv, struct nr_options *o)
{
	int options_done = 0;

	memset(o, 0, sizeof(*o));
	o->warmup = 1;
	o->iterations = 10;
	o->percentiles[0] = 50;
	o->percentiles[1] = 90;
	o->percentiles[2] = 99;
	o->n_percentiles = 3;
	o->detect_threshold = 0.5;
	o->eos_id = -1;
	o->sample_temperature = 1.0f;
	/* At most one --input or --shape per argument: argc bounds the count. */
	o->inputs = calloc((size_t)argc + 1, sizeof(*o->inputs));
	o->shapes = calloc((size_t)argc + 1, sizeof(*o->shapes));
	o->shape_from = calloc((size_t)argc + 1, sizeof(*o->shape_from));
	o->fixes = calloc((size_t)argc + 1, sizeof(*o->fixes));
	o->fix_values = calloc((size_t)argc + 1, sizeof(*o->fix_values));
	if (!o->inputs || !o->shapes || !o->shape_from || !o->fixes || !o->fix_values)
		return nr_fail(NR_EXIT_RUNTIME, "out of memory");

	for (int i = 1; i < argc; i++) {
		char flag[32];
		const char *arg = argv[i], *eq, *val;
		size_t len;

		if (options_done || arg[0] != '-' || !arg[1]) {
			if (o->model)
				return nr_fail(NR_EXIT_USAGE, "unexpected argument '%s': the model "
					       "is already '%s' (see --help)", arg, o->model);
			o->model = arg;
			continue;
		}
		if (!strcmp(arg, "--")) {
			options_done = 1;
			continue;
		}
		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(arg, "--version")) {
			printf("npu-run %s\n", NR_VERSION);
			return 0;
		}
		if (apply_switch(o, arg))
			continue;
		eq = strncmp(arg, "--", 2) ? NULL : strchr(arg, '=');
		len = eq ? (size_t)(eq - arg) : strlen(arg);
		if (len >= sizeof(flag))
			return nr_fail(NR_EXIT_USAGE, "unknown option '%.*s' (see --help)",
				       (int)len, arg);
		memcpy(flag, arg, len);
		flag[len] = '\0';
		if (!takes_value(flag)) {
			if (eq && apply_switch(o, flag))
				return nr_fail(NR_EXIT_USAGE, "%s takes no value", flag);
			return nr_fail(NR_EXIT_USAGE, "unknown option '%s' (see --help)", flag);
		}
		val = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
		if (!val)
			return nr_fail(NR_EXIT_USAGE, "%s needs a value (see --help)", flag);
		if (apply(o, flag, val))
			return NR_EXIT_USAGE;
	}
	return check_combinations(o);
}

void nr_options_free(struct nr_options *o)
{
	free(o->prompt_ids);
	o->prompt_ids = NULL;
	free(o->inputs);
	o->inputs = NULL;
	for (unsigned i = 0; o->shapes && i < o->n_shapes; i++) {
		free((char *)o->shapes[i].name);
		if (o->shape_from)
			free(o->shape_from[i]);
	}
	free(o->shape_from);
	o->shape_from = NULL;
	free(o->shapes);
	o->shapes = NULL;
	o->n_shapes = 0;
	for (size_t i = 0; o->fix_values && i < o->n_fix_values; i++) {
		free((char *)o->fix_values[i].name);
		free(o->fix_values[i].data);
	}
	free(o->fix_values);
	o->fix_values = NULL;
	o->n_fix_values = 0;
	free(o->fixes);
	o->fixes = NULL;
	o->n_fixes = 0;
}
