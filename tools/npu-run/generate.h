/* SPDX-License-Identifier: MIT */
/* npu-run --generate: a generation session (npu_generator) and its figures. */
#ifndef NPU_RUN_GENERATE_H
#define NPU_RUN_GENERATE_H

#include "args.h"

/* Generate o->generate tokens from the prompt on @dev; the exit status. */
int nr_generate(const struct nr_options *o, npu_device *dev);

#endif /* NPU_RUN_GENERATE_H */
