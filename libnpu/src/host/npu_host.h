/* SPDX-License-Identifier: MIT */
/*
 * The CPU fallback's operators (issue 17): plain C references of ONNX
 * operators the NPU cannot run, one file per operator (host_*.c), run as
 * host steps between NPU programs (model/npu_cmodel.h, model/context.c).
 *
 * A host operator computes on the tensors as the device holds them: an
 * int64 tensor of the model is int32 on the device (compile/npu_narrow.c),
 * so an operator taking int64 sees int32.  Output shapes are static (the
 * compiler's shape inference fixed them); an operator whose output size
 * depends on values (NonZero, NonMaxSuppression, Compress, Unique) has no
 * host implementation yet and stays refused.
 */
#ifndef NPU_HOST_H
#define NPU_HOST_H

#include "ir/npu_ir.h"
#include "model/npu_cmodel.h"

/* One tensor of a host call; data NULL for an omitted optional one. */
struct npu_host_buf {
	npu_dtype dtype;
	int rank;
	int64_t dims[NPU_MAX_RANK];
	size_t numel;
	void *data;
};

/* Compute outputs @out of step @h from inputs @in (h->ninputs, h->noutputs of them). */
typedef npu_status (*npu_host_fn)(const struct npu_host_step *h, const struct npu_host_buf *in,
				  struct npu_host_buf *out);
/*
 * Compile time: NULL if the host implementation takes node @n (its dtypes,
 * attributes, optional inputs), else what it does not take ("int8 inputs
 * are not"; the message adds " supported on the host").
 */
typedef const char *(*npu_host_accepts_fn)(const npu_ir_graph *g, const npu_ir_node *n);

struct npu_host_op {
	const char *name;	/* ONNX op_type, default domain */
	int since;		/* first opset the implementation follows */
	npu_host_accepts_fn accepts;
	npu_host_fn run;
};

/* The host implementation of @name at @opset, NULL if there is none. */
const struct npu_host_op *npu_host_op_get(const char *name, int opset);

/* Run host step @h over device buffers: @in[i] / @out[i] the host addresses of its tensors. */
npu_status npu_host_run(const struct npu_host_step *h, void *const *in, void *const *out);

/* Attributes of a host step, by name; the default when it has none. */
const struct npu_host_attr *npu_host_attr_find(const struct npu_host_step *h, const char *name);
int64_t npu_host_attr_int(const struct npu_host_step *h, const char *name, int64_t def);
float npu_host_attr_float(const struct npu_host_step *h, const char *name, float def);
const char *npu_host_attr_string(const struct npu_host_step *h, const char *name, const char *def);

/*
 * Element @i of @b as a double / written from a double (float32, int32,
 * int64 (a constant the compiler kept), int8, uint8, bool).
 */
double npu_host_get(const struct npu_host_buf *b, size_t i);
void npu_host_set(struct npu_host_buf *b, size_t i, double v);
/* The element of @in that element @i of @out reads under numpy broadcasting. */
size_t npu_host_bcast(const struct npu_host_buf *in, const struct npu_host_buf *out, size_t i);
/* Whether @dt is one npu_host_get() reads. */
bool npu_host_dtype_ok(npu_dtype dt);

/* The operators (host_*.c). */
npu_status npu_host_mod(const struct npu_host_step *h, const struct npu_host_buf *in,
			struct npu_host_buf *out);
const char *npu_host_mod_accepts(const npu_ir_graph *g, const npu_ir_node *n);
npu_status npu_host_det(const struct npu_host_step *h, const struct npu_host_buf *in,
			struct npu_host_buf *out);
const char *npu_host_det_accepts(const npu_ir_graph *g, const npu_ir_node *n);
npu_status npu_host_onehot(const struct npu_host_step *h, const struct npu_host_buf *in,
			   struct npu_host_buf *out);
const char *npu_host_onehot_accepts(const npu_ir_graph *g, const npu_ir_node *n);
npu_status npu_host_roialign(const struct npu_host_step *h, const struct npu_host_buf *in,
			     struct npu_host_buf *out);
const char *npu_host_roialign_accepts(const npu_ir_graph *g, const npu_ir_node *n);

#endif /* NPU_HOST_H */
