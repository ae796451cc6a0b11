/* SPDX-License-Identifier: MIT */
/*
 * The CPU fallback's operators (issue 17): plain C references of ONNX
 * operators the NPU cannot run, one file per operator (host_*.c), run as
 * host steps between NPU programs (model/npu_cmodel.h, model/context.c).
 *
 * A host operator computes on the tensors as the device holds them: an
 * int64 tensor of the model is int32 on the device (compile/npu_narrow.c),
 * so an operator taking int64 sees int32.  Output shapes are static (the
 * compiler's shape inference fixed them), except for tensors of run-time
 * size (issue 17): NonZero, NonMaxSuppression, Compress and Unique of
 * run-time data compute their output's shape, and every node after them
 * runs here too, on the actual shapes.  Such an operator is flagged
 * .dynamic: it sets its outputs' shapes (npu_host_shape()) within the
 * bound the compiler gave their buffers; the run records them
 * (struct npu_dyn_shape) for the host steps after it and the caller.
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
	size_t cap;		/* elements the buffer holds (the bound of a run-time size) */
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
	/*
	 * Computes its outputs' shapes from its inputs' actual ones (issue
	 * 17): it may take inputs of run-time size and must set every
	 * output's shape with npu_host_shape().  Others take static shapes.
	 */
	bool dynamic;
};

/* The host implementation of @name at @opset, NULL if there is none. */
const struct npu_host_op *npu_host_op_get(const char *name, int opset);

/*
 * Run host step @h over device buffers: @in[i] / @out[i] the host
 * addresses of its tensors; @shapes the run's run-time shapes (the model's
 * ndyn of them, rank -1 until written): read for inputs of run-time size,
 * written for such outputs.
 */
npu_status npu_host_run(const struct npu_host_step *h, void *const *in, void *const *out,
			struct npu_dyn_shape *shapes);
/*
 * Output @b's actual shape (a .dynamic operator): NPU_ERR_INTERNAL naming
 * the sizes when it exceeds the buffer's bound.
 */
npu_status npu_host_shape(struct npu_host_buf *b, int rank, const int64_t *dims);

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
/* Element @i of an integer (or bool) @b exactly; a float's truncated, saturated. */
int64_t npu_host_get_int(const struct npu_host_buf *b, size_t i);
/* The element of @in that element @i of @out reads under numpy broadcasting. */
size_t npu_host_bcast(const struct npu_host_buf *in, const struct npu_host_buf *out, size_t i);
/*
 * Output 0's shape: the inputs' (actual) shapes broadcast; NPU_ERR_SHAPE
 * naming the input that does not broadcast.
 */
npu_status npu_host_bcast_shape(const struct npu_host_step *h, const struct npu_host_buf *in,
				struct npu_host_buf *out);
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

/* Of run-time output size and what follows them (issue 17): .dynamic. */
npu_status npu_host_nonzero(const struct npu_host_step *h, const struct npu_host_buf *in,
			    struct npu_host_buf *out);
const char *npu_host_nonzero_accepts(const npu_ir_graph *g, const npu_ir_node *n);
npu_status npu_host_compress(const struct npu_host_step *h, const struct npu_host_buf *in,
			     struct npu_host_buf *out);
const char *npu_host_compress_accepts(const npu_ir_graph *g, const npu_ir_node *n);
npu_status npu_host_nms(const struct npu_host_step *h, const struct npu_host_buf *in,
			struct npu_host_buf *out);
const char *npu_host_nms_accepts(const npu_ir_graph *g, const npu_ir_node *n);
npu_status npu_host_unique(const struct npu_host_step *h, const struct npu_host_buf *in,
			   struct npu_host_buf *out);
const char *npu_host_unique_accepts(const npu_ir_graph *g, const npu_ir_node *n);
/* host_move.c: Identity, Reshape, Flatten, (Un)Squeeze, Transpose, Concat, Slice, Gather(ND), Expand, Shape, Size */
npu_status npu_host_move(const struct npu_host_step *h, const struct npu_host_buf *in,
			 struct npu_host_buf *out);
const char *npu_host_move_accepts(const npu_ir_graph *g, const npu_ir_node *n);
/* host_eltwise.c: Cast, unary and binary math, comparisons, logic, Where */
npu_status npu_host_eltwise(const struct npu_host_step *h, const struct npu_host_buf *in,
			    struct npu_host_buf *out);
const char *npu_host_eltwise_accepts(const npu_ir_graph *g, const npu_ir_node *n);

/* host_reduce.c: ReduceMax, ReduceMin, ReduceSum, ReduceMean, ReduceProd, ArgMax, ArgMin */
npu_status npu_host_reduce(const struct npu_host_step *h, const struct npu_host_buf *in,
			   struct npu_host_buf *out);
const char *npu_host_reduce_accepts(const npu_ir_graph *g, const npu_ir_node *n);
npu_status npu_host_topk(const struct npu_host_step *h, const struct npu_host_buf *in,
			 struct npu_host_buf *out);
const char *npu_host_topk_accepts(const npu_ir_graph *g, const npu_ir_node *n);

#endif /* NPU_HOST_H */
