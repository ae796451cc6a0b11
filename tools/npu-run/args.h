/* SPDX-License-Identifier: MIT */
/* npu-run: the command line. */
#ifndef NPU_RUN_ARGS_H
#define NPU_RUN_ARGS_H

#include "npu.h"

#define NR_MAX_PERCENTILES	16
#define NR_MAX_BATCH		64	/* npu_compile_options.batch */

/* How --output-dir writes each output (--output-format). */
enum nr_output_format {
	NR_OUTPUT_RAW,			/* DIR/<name>.bin, raw little-endian */
	NR_OUTPUT_NPY,			/* DIR/<name>.npy, NumPy format 1.0 */
};

/* How an image input's pixels are laid out (--image-layout). */
enum nr_image_layout {
	NR_LAYOUT_AUTO,			/* from the input's shape */
	NR_LAYOUT_NCHW,
	NR_LAYOUT_NHWC,
};

struct nr_options {
	const char *model;		/* path or URL */
	const char *device;		/* NULL: libnpu's default */
	unsigned clusters;		/* 0: the model's own count */
	npu_precision precision;
	const char *calibrate;		/* int8 calibration directory */
	unsigned batch;			/* 0: not given (unbatched) */
	unsigned max_loop_iterations;	/* --max-loop-iterations; 0: the default */
	const char **inputs;		/* --input arguments, "NAME=FILE" */
	unsigned n_inputs;
	npu_input_shape *shapes;	/* --shape NAME=DIMS; names malloc'd */
	/* Where shape i came from, malloc'd: NULL for --shape, else "the
	 * file's size (axis N)" or "the .npy header" (shapes.c). */
	char **shape_from;
	unsigned n_shapes;
	const char **fixes;		/* --fix arguments, "NAME=VALUES" */
	unsigned n_fixes;
	npu_tensor *fix_values;		/* from them (fix.c); names, data malloc'd */
	size_t n_fix_values;
	const char *output_dir;
	enum nr_output_format output_format;
	int output_format_given;	/* --output-format appeared */
	unsigned warmup;
	unsigned iterations;
	double duration;		/* seconds; 0: just the iterations */
	double percentiles[NR_MAX_PERCENTILES];
	unsigned n_percentiles;
	int json;
	int profile;
	const char *trace;		/* --trace FILE: Chrome trace of the last run */
	unsigned top_k;			/* 0: no top-k */
	const char *labels;
	const char *top_k_output;	/* NULL: the first output */
	int compile_only;
	int cpu_fallback;		/* --cpu-fallback: allow_cpu_fallback */
	const char *save;		/* -o FILE */
	const char *detect;		/* --detect DETECTOR, NULL: none */
	double detect_threshold;	/* minimum score, default 0.5 */
	const char *detect_from;	/* decode DIR/<output>.bin instead of running */
	/* --generate N: a generation session instead of one-shot runs. */
	unsigned generate;		/* tokens to generate; 0: no generation */
	int64_t *prompt_ids;		/* --prompt-ids, malloc'd */
	size_t n_prompt_ids;
	const char *prompt_ids_file;	/* --prompt-ids-file */
	unsigned max_context;		/* 0: libnpu's default */
	int sample_random;		/* --sample other than greedy */
	unsigned sample_top_k;
	float sample_top_p, sample_temperature;
	uint64_t sample_seed;
	int64_t eos_id;			/* -1: none */
	int gen_flag;			/* a generation-only flag appeared */
	/* Image inputs (image_input.c) and --draw (draw.c). */
	float image_mean[3], image_std[3];	/* per channel, or [0] for all */
	unsigned n_image_mean, n_image_std;	/* 0: not given */
	enum nr_image_layout image_layout;
	const char *draw;		/* --draw FILE.png: the detections on the input */
};

/*
 * Parse the command line into @o.  Returns -1 to go on, or the exit
 * status to leave with: 0 after --help or --version, NR_EXIT_USAGE with
 * the one-line message printed.  Free @o with nr_options_free() either way.
 */
int nr_parse_args(int argc, char **argv, struct nr_options *o);
void nr_options_free(struct nr_options *o);

/* The --shape given for input @name, or NULL. */
const npu_input_shape *nr_shape_given(const struct nr_options *o, const char *name);

/*
 * A list of token ids, separated by commas or white space, into a
 * malloc'd *@ids; 0 or NR_EXIT_USAGE with "@what: ..." printed.
 */
int nr_parse_ids(const char *what, const char *s, int64_t **ids, size_t *n);

/* "default", "bf16" or "int8". */
const char *nr_precision_str(npu_precision p);

#endif /* NPU_RUN_ARGS_H */
