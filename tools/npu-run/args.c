// SPDX-License-Identifier: MIT
/*
 * npu-run: the command line, one table (nr_opts) that getopt_long and
 * --help are both made from (tools/common/opts.h).  Options take their
 * value as the next argument or after '=' (--batch 4, --batch=4); the
 * model is the one argument that is not an option.  Everything is checked here, before a
 * device is opened or a model compiled, so a typo costs no compile time.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "opts.h"
#include "detect.h"
#include "util.h"


/* Upper bounds that only catch typos (and keep counts within unsigned). */
#define MAX_WARMUP	1000000u
#define MAX_ITERATIONS	100000000u
#define MAX_TOP_K	1000000u
#define MAX_DURATION	86400.0
#define MAX_GENERATE	1000000u
#define MAX_CONTEXT	65536u		/* npu_generator_options.max_context */

/* What each option does, for apply()'s switch. */
enum nr_opt_id {
	OPT_DEVICE, OPT_CLUSTERS, OPT_PRECISION, OPT_CALIBRATE, OPT_BATCH, OPT_CPU_FALLBACK,
	OPT_MAX_LOOP_ITERATIONS, OPT_SHAPE, OPT_FIX, OPT_INPUT, OPT_OUTPUT_DIR,
	OPT_OUTPUT_FORMAT, OPT_WARMUP, OPT_ITERATIONS, OPT_DURATION, OPT_PERCENTILES, OPT_JSON,
	OPT_PROFILE, OPT_TOP_K, OPT_TOP_K_OUTPUT, OPT_LABELS, OPT_DETECT, OPT_DETECT_THRESHOLD,
	OPT_DETECT_FROM, OPT_GENERATE, OPT_PROMPT_IDS, OPT_PROMPT_IDS_FILE, OPT_MAX_CONTEXT,
	OPT_SAMPLE, OPT_EOS, OPT_COMPILE_ONLY, OPT_SAVE, OPT_HELP, OPT_VERSION, OPT_IMAGE_MEAN,
	OPT_IMAGE_STD, OPT_IMAGE_LAYOUT, OPT_DRAW, OPT_TRACE,
	OPT_INPUT_IMAGE = -1,		/* help only: --input's picture form */
};

/*
 * Every option, in the order --help lists them: the parser (tools/common/
 * opts.h) and the help are both made from this table.  A metavar means
 * the option takes a value.
 */
static const struct tool_opt nr_opts[] = {
	{ "device", 0, "SPEC", "emu, emu:key=value,..., /dev/accel/accelN\n"
	  "(default: $NPU_DEVICE, a kernel device, else emu)", OPT_DEVICE },
	{ "clusters", 0, "N", "partition size in clusters (default: the model's)", OPT_CLUSTERS },
	{ "precision", 0, "P", "bf16, bf16x3 (Convs as three bf16 products: near fp32),\n"
	  "int8 (needs --calibrate DIR) or w8 (int8 weights)", OPT_PRECISION },
	{ "calibrate", 0, "DIR", "sample inputs (.npy or raw float32) for int8", OPT_CALIBRATE },
	{ "batch", 0, "N", "inputs per run, pipelined (1..64)", OPT_BATCH },
	{ "cpu-fallback", 0, NULL, "run operators the NPU cannot on the CPU, as host steps\n"
	  "between NPU programs (listed in the summary)", OPT_CPU_FALLBACK },
	{ "max-loop-iterations", 0, "N", "a Loop that has not stopped after N iterations\n"
	  "fails the run (default 65536)", OPT_MAX_LOOP_ITERATIONS },
	{ "shape", 0, "NAME=DIMS", "compile input NAME with shape DIMS, e.g. 1x3x224x224\n"
	  "(repeatable; needed for symbolic dims such as batch;\n"
	  "NAME= alone is a scalar)", OPT_SHAPE },
	{ "fix", 0, "NAME=VALUES", "compile input NAME as a constant (repeatable): numbers\n"
	  "joined by ',' in its dtype (e.g. sr=16000) or an .npy\n"
	  "FILE; only what the value selects is compiled and the\n"
	  "model no longer takes the input", OPT_FIX },
	{ "input", 0, "NAME=FILE", "input data, raw little-endian or .npy (repeatable);\n"
	  "inputs not given are generated deterministically", OPT_INPUT },
	{ "input", 0, "NAME=IMAGE", "a PNG or JPEG picture (recognised by its content):\n"
	  "resized to the input's height and width (area when\n"
	  "shrinking 2x or more, else bilinear), RGB (or grey for\n"
	  "1 channel), (pixel/255 - mean) / std for float32,\n"
	  "pixels 0..255 for uint8", OPT_INPUT_IMAGE },
	{ "image-mean", 0, "LIST", "one value or one per channel (default 0; 0.5 with\n"
	  "--detect blazeface: BlazeFace takes [-1, 1])", OPT_IMAGE_MEAN },
	{ "image-std", 0, "LIST", "one value or one per channel (default 1; 0.5 with\n"
	  "--detect blazeface)", OPT_IMAGE_STD },
	{ "image-layout", 0, "L", "nchw or nhwc (default: the dim of size 3 or 1 of the\n"
	  "input's shape)", OPT_IMAGE_LAYOUT },
	{ "output-dir", 0, "DIR", "write each output as DIR/<name>.bin", OPT_OUTPUT_DIR },
	{ "output-format", 0, "F", "raw (DIR/<name>.bin, the default) or npy (DIR/<name>.npy,\n"
	  "NumPy format with shape and dtype)", OPT_OUTPUT_FORMAT },
	{ "warmup", 0, "N", "untimed runs first (default 1)", OPT_WARMUP },
	{ "iterations", 0, "N", "timed runs (default 10)", OPT_ITERATIONS },
	{ "duration", 0, "S", "run at least S seconds (and at least N iterations)", OPT_DURATION },
	{ "percentiles", 0, "LIST", "latency percentiles, e.g. 50,90,99 (the default)",
	  OPT_PERCENTILES },
	{ "json", 0, NULL, "print the summary as one JSON object", OPT_JSON },
	{ "profile", 0, NULL, "per-step cycles, unit, DMA and NoC link utilization\n"
	  "(with --generate: the last decode run's steps)", OPT_PROFILE },
	{ "trace", 0, "FILE", "write the last run's simulated timeline (a span per\n"
	  "instruction on each unit, DMA, NoC links, steps) as\n"
	  "Chrome trace JSON for ui.perfetto.dev (emulator only)", OPT_TRACE },
	{ "top-k", 0, "K", "the K best classes of the first output", OPT_TOP_K },
	{ "top-k-output", 0, "NAME", "... of this output instead", OPT_TOP_K_OUTPUT },
	{ "labels", 0, "FILE", "class names, one per line (with --top-k)", OPT_LABELS },
	{ "detect", 0, "blazeface", "decode face boxes (anchors, weighted NMS) from the outputs",
	  OPT_DETECT },
	{ "detect-threshold", 0, "F", "minimum face score, 0..1 (default 0.5)",
	  OPT_DETECT_THRESHOLD },
	{ "draw", 0, "FILE.png", "with --detect: write input 0 (the picture at its own\n"
	  "size, or the tensor) with each box, keypoints, score", OPT_DRAW },
	{ "detect-from", 0, "DIR", "decode DIR/<output>.bin (as --output-dir writes) instead of\n"
	  "running the model", OPT_DETECT_FROM },
	{ "generate", 0, "N", "generate N tokens with a decoder exported with past\n"
	  "(KV cache on the device); prints the ids, time to first\n"
	  "token, per-token latency, tokens/s, simulated time and\n"
	  "DDR bytes per token", OPT_GENERATE },
	{ "prompt-ids", 0, "LIST", "the prompt's token ids, e.g. 1,2,3 (with --generate)",
	  OPT_PROMPT_IDS },
	{ "prompt-ids-file", 0, "F", "... read from F (ids separated by commas or spaces)",
	  OPT_PROMPT_IDS_FILE },
	{ "max-context", 0, "L", "positions the KV cache holds (default 512)", OPT_MAX_CONTEXT },
	{ "sample", 0, "SPEC", "greedy (the default, ArgMax on the device) or\n"
	  "top-k=K,top-p=P,temperature=T,seed=S (any of them)", OPT_SAMPLE },
	{ "eos", 0, "ID", "stop after generating the end-of-sequence id ID", OPT_EOS },
	{ "compile-only", 0, NULL, "compile and write the model (-o), do not run",
	  OPT_COMPILE_ONLY },
	{ NULL, 'o', "FILE", "write the compiled model (native .npum format)", OPT_SAVE },
	{ "help", 'h', NULL, "this help", OPT_HELP },
	{ "version", 0, NULL, "print the version of npu-run and of the libnpu it runs on",
	  OPT_VERSION },
};

#define NR_N_OPTS ((unsigned)(sizeof(nr_opts) / sizeof(nr_opts[0])))

/*
 * "npu-run 0.1.0": the libnpu this process runs (npu_version()), which is
 * npu-run's version too: the tool ships with the library.  A second line
 * says so when the header npu-run was built with was another version (a
 * libnpu.so swapped under it).
 */
static void print_version(void)
{
	printf("npu-run %s\n", npu_version());
	if (npu_version_number() != NPU_LIB_VERSION)
		printf("built against libnpu %d.%d.%d\n", NPU_LIB_VERSION_MAJOR,
		       NPU_LIB_VERSION_MINOR, NPU_LIB_VERSION_PATCH);
}

static void usage(FILE *f)
{
	fputs("usage: npu-run MODEL|URL [options]\n"
	      "Compile (ONNX) or load (.npum) a model, run it on an M100 NPU and report\n"
	      "latency, throughput and simulated NPU time.\n"
	      "\n", f);
	tool_opts_usage(f, nr_opts, NR_N_OPTS, 24);
	fputs("\n"
	      "Exit status: 0 ok, 1 device, model or run error, 2 bad command line.\n", f);
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

/*
 * Apply option @opt (spelled @flag, for messages) with its value @val
 * (NULL for a switch): 0, or non-zero with the message printed.  The
 * switch has no default, so the compiler (-Wswitch) reports a table
 * entry without its case here.
 */
static int apply(struct nr_options *o, const struct tool_opt *opt, const char *flag,
		 const char *val)
{
	switch ((enum nr_opt_id)opt->id) {
	case OPT_JSON:
		o->json = 1;
		return 0;
	case OPT_PROFILE:
		o->profile = 1;
		return 0;
	case OPT_COMPILE_ONLY:
		o->compile_only = 1;
		return 0;
	case OPT_CPU_FALLBACK:
		o->cpu_fallback = 1;
		return 0;
	case OPT_HELP:
	case OPT_VERSION:
		break;		/* nr_parse_args answers them */
	case OPT_DEVICE:
		if (!*val)
			return nr_fail(NR_EXIT_USAGE, "--device: empty; give emu or a device node");
		o->device = val;
		return 0;
	case OPT_CLUSTERS:
		return parse_uint(flag, val, 1, NPU_MAX_CLUSTERS, &o->clusters);
	case OPT_PRECISION:
		return parse_precision(val, &o->precision);
	case OPT_CALIBRATE:
		o->calibrate = val;
		return 0;
	case OPT_BATCH:
		return parse_uint(flag, val, 1, NR_MAX_BATCH, &o->batch);
	case OPT_MAX_LOOP_ITERATIONS:
		return parse_uint(flag, val, 1, 1u << 24, &o->max_loop_iterations);
	case OPT_INPUT:
		o->inputs[o->n_inputs++] = val;
		return 0;
	case OPT_SHAPE:
		return parse_shape(val, o);
	case OPT_FIX:
		o->fixes[o->n_fixes++] = val;
		return 0;
	case OPT_OUTPUT_DIR:
		if (!*val)
			return nr_fail(NR_EXIT_USAGE, "--output-dir: empty directory name");
		o->output_dir = val;
		return 0;
	case OPT_OUTPUT_FORMAT:
		return parse_output_format(val, o);
	case OPT_WARMUP:
		return parse_uint(flag, val, 0, MAX_WARMUP, &o->warmup);
	case OPT_ITERATIONS:
		return parse_uint(flag, val, 1, MAX_ITERATIONS, &o->iterations);
	case OPT_DURATION:
		return parse_duration(val, &o->duration);
	case OPT_PERCENTILES:
		return parse_percentiles(val, o);
	case OPT_TOP_K:
		return parse_uint(flag, val, 1, MAX_TOP_K, &o->top_k);
	case OPT_TOP_K_OUTPUT:
		o->top_k_output = val;
		return 0;
	case OPT_LABELS:
		o->labels = val;
		return 0;
	case OPT_DETECT:
		if (!nr_detect_known(val))
			return nr_fail(NR_EXIT_USAGE, "--detect %s: unknown detector; known: blazeface",
				       val);
		o->detect = val;
		return 0;
	case OPT_DETECT_THRESHOLD: {
		char *end;

		errno = 0;
		o->detect_threshold = strtod(val, &end);
		if (errno || end == val || *end || !(o->detect_threshold >= 0) ||
		    o->detect_threshold > 1)
			return nr_fail(NR_EXIT_USAGE, "--detect-threshold %s: give a score from 0 to 1",
				       val);
		return 0;
	}
	case OPT_DETECT_FROM:
		if (!*val)
			return nr_fail(NR_EXIT_USAGE, "--detect-from: empty directory name");
		o->detect_from = val;
		return 0;
	case OPT_IMAGE_MEAN:
		return parse_channels(flag, val, 0, o->image_mean, &o->n_image_mean);
	case OPT_IMAGE_STD:
		return parse_channels(flag, val, 1, o->image_std, &o->n_image_std);
	case OPT_IMAGE_LAYOUT:
		if (!strcmp(val, "nchw"))
			o->image_layout = NR_LAYOUT_NCHW;
		else if (!strcmp(val, "nhwc"))
			o->image_layout = NR_LAYOUT_NHWC;
		else
			return nr_fail(NR_EXIT_USAGE, "--image-layout %s: give nchw or nhwc", val);
		return 0;
	case OPT_DRAW:
		if (!*val)
			return nr_fail(NR_EXIT_USAGE, "--draw: empty file name");
		o->draw = val;
		return 0;
	case OPT_INPUT_IMAGE:
		break;		/* --help's second line for --input */
	case OPT_GENERATE:
		o->gen_flag = 1;
		return parse_uint(flag, val, 1, MAX_GENERATE, &o->generate);
	case OPT_PROMPT_IDS:
		o->gen_flag = 1;
		if (o->prompt_ids)
			return nr_fail(NR_EXIT_USAGE, "--prompt-ids is given twice");
		return nr_parse_ids(flag, val, &o->prompt_ids, &o->n_prompt_ids);
	case OPT_PROMPT_IDS_FILE:
		o->gen_flag = 1;
		if (!*val)
			return nr_fail(NR_EXIT_USAGE, "--prompt-ids-file: empty file name");
		o->prompt_ids_file = val;
		return 0;
	case OPT_MAX_CONTEXT:
		o->gen_flag = 1;
		return parse_uint(flag, val, 1, MAX_CONTEXT, &o->max_context);
	case OPT_SAMPLE:
		o->gen_flag = 1;
		return parse_sample(val, o);
	case OPT_EOS: {
		unsigned id = 0;

		o->gen_flag = 1;
		if (parse_uint(flag, val, 0, INT32_MAX, &id))
			return 1;
		o->eos_id = id;
		return 0;
	}
	case OPT_TRACE:
		if (!*val)
			return nr_fail(NR_EXIT_USAGE, "--trace: empty file name");
		o->trace = val;
		return 0;
	case OPT_SAVE:
		if (!*val)
			return nr_fail(NR_EXIT_USAGE, "-o: empty file name");
		o->save = val;
		return 0;
	}
	return nr_fail(NR_EXIT_USAGE, "unknown option '%s' (see --help)", flag);
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

/* The options in order; -1 when all applied, else the exit status. */
static int parse_loop(struct tool_opts *p, struct nr_options *o)
{
	const struct tool_opt *opt;
	const char *arg;
	char flag[64];

	for (;;) {
		switch (tool_opts_next(p, &opt, &arg)) {
		case TOOL_OPTS_END:
			return -1;
		case TOOL_OPTS_POSITIONAL:
			if (o->model)
				return nr_fail(NR_EXIT_USAGE, "unexpected argument '%s': the model "
					       "is already '%s' (see --help)", arg, o->model);
			o->model = arg;
			break;
		case TOOL_OPTS_UNKNOWN:
			return nr_fail(NR_EXIT_USAGE, "unknown option '%s' (see --help)", arg);
		case TOOL_OPTS_NEEDS_VALUE:
			return nr_fail(NR_EXIT_USAGE, "%s needs a value (see --help)",
				       tool_opt_flag(opt, flag, sizeof(flag)));
		case TOOL_OPTS_NO_VALUE:
			return nr_fail(NR_EXIT_USAGE, "%s takes no value",
				       tool_opt_flag(opt, flag, sizeof(flag)));
		case TOOL_OPTS_OPTION:
			if (opt->id == OPT_HELP) {
				usage(stdout);
				return 0;
			}
			if (opt->id == OPT_VERSION) {
				print_version();
				return 0;
			}
			if (apply(o, opt, tool_opt_flag(opt, flag, sizeof(flag)), arg))
				return NR_EXIT_USAGE;
			break;
		}
	}
}

int nr_parse_args(int argc, char **argv, struct nr_options *o)
{
	struct tool_opts p;
	int rc;

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

	if (tool_opts_init(&p, nr_opts, NR_N_OPTS, argc, argv))
		return nr_fail(NR_EXIT_RUNTIME, "out of memory");
	rc = parse_loop(&p, o);
	tool_opts_free(&p);
	if (rc >= 0)
		return rc;
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
