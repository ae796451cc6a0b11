/* SPDX-License-Identifier: MIT */
/*
 * ONNX external data: tensors (data_location EXTERNAL) whose bytes live in
 * side files named relative to the model file's folder.  Private to the
 * ONNX loader (npu_onnx.c).
 */
#ifndef NPU_ONNX_EXT_H
#define NPU_ONNX_EXT_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/npu_ir.h"
#include "onnx/onnx.pb-c.h"

/* The side files one parse has mapped, each once however many tensors it holds. */
struct npu_onnx_ext {
	const char *model_dir;	/* the model's folder; NULL: loaded from memory */
	npu_ir_graph *g;	/* owns the mappings; NULL: copy, map nothing */
	char *real_dir;		/* realpath(model_dir), on first use */
	int n_files;
	struct npu_onnx_ext_file {
		char *path;		/* realpath of the side file */
		const unsigned char *base;	/* its mapping (NULL if empty) */
		size_t size;
	} *files;
};

/*
 * The @bytes bytes of external tensor @tp (@what names it: "initializer
 * 'W'"), whose elements are @elem bytes each.  *@data points into the
 * side file's mapping (owned by x->g; *@mapped true) when the offset is a
 * multiple of @elem and @copy is false, else to a malloc'd copy (bools
 * and misaligned data are copied: the one copy).  Refusals are
 * NPU_ERR_FORMAT and name @what and the location.
 */
npu_status npu_onnx_ext_read(struct npu_onnx_ext *x, const Onnx__TensorProto *tp,
			     const char *what, size_t bytes, size_t elem, bool copy,
			     void **data, bool *mapped);

/* Free the file table (not the mappings, which the graph owns). */
void npu_onnx_ext_done(struct npu_onnx_ext *x);

#endif /* NPU_ONNX_EXT_H */
