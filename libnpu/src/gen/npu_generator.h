/* SPDX-License-Identifier: MIT */
/* Generation sessions (gen/generator.c): internals the unit tests reach. */
#ifndef NPU_GENERATOR_H
#define NPU_GENERATOR_H

#include "compile/npu_compile.h"

typedef npu_status npu_gen_compile_fn(const void *data, size_t size,
				      const struct npu_compile_target *tgt,
				      const struct npu_gen_program *prog,
				      struct npu_cmodel **out);

/*
 * What a session compiles its programs with: npu_compile_generation.  A
 * unit test may point it at a stand-in that keeps the program I/O contract
 * (tests/libnpu/test_generator.c), to test the session on its own; it
 * must restore it.  Not for anything else: sessions read it unlocked.
 */
extern npu_gen_compile_fn *npu_gen_compile;

#endif /* NPU_GENERATOR_H */
