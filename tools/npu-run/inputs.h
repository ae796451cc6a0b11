/* SPDX-License-Identifier: MIT */
/* npu-run: input data from raw or .npy files, or generated. */
#ifndef NPU_RUN_INPUTS_H
#define NPU_RUN_INPUTS_H

#include "args.h"
#include "image.h"
#include "npu.h"

struct nr_input {
	npu_tensor_info info;
	const char *file;	/* NULL: generated */
	int per_element;	/* the file held one tensor per batch element */
	void *data;		/* batch x info.bytes, batch-element major */
	struct nr_image image;	/* the file was a picture: as read (--draw, summary) */
};

/*
 * Match the --input arguments to the model's inputs, read and check the
 * files and generate the rest, for @batch elements.  Returns 0 with
 * *@out holding model-input-count entries, or the exit status with the
 * message printed (NR_EXIT_USAGE: an argument naming no input or one
 * twice; NR_EXIT_RUNTIME: a file that cannot be read or does not fit).
 * Free *@out with nr_inputs_free() in both cases.
 */
int nr_inputs_prepare(const npu_model *model, unsigned batch, const struct nr_options *o,
		      struct nr_input **out, size_t *n);

/* Copy the prepared data into the context's (zero-copy) input buffers. */
int nr_inputs_copy(npu_context *ctx, const struct nr_input *in, size_t n, unsigned batch);

/*
 * Read one tensor @t (raw little-endian or .npy, as --input takes) from
 * @file into @data (t->bytes); messages name the argument @arg.
 */
int nr_read_tensor_file(const char *arg, const char *file, const npu_tensor_info *t, void *data);

void nr_inputs_free(struct nr_input *in, size_t n);

/*
 * Which of @infos does the --input argument @arg ("NAME=FILE", or a bare
 * FILE for a one-input model) name?  0 with *@index and *@file set, or -1.
 */
int nr_match_input(const char *arg, const npu_tensor_info *infos, size_t n, size_t *index,
		   const char **file);

/*
 * The shape in the header of .npy file @file: 0 with *@rank and @dims set,
 * -1 for a file that is no .npy (raw), else the exit status with the
 * message printed.
 */
int nr_npy_peek(const char *arg, const char *file, int *rank, int64_t *dims);

#endif /* NPU_RUN_INPUTS_H */
