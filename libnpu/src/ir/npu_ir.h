/* SPDX-License-Identifier: MIT */
/*
 * libnpu's graph IR: what the ONNX parser builds and the compiler lowers.
 *
 * A graph is two flat tables, tensors and nodes, both addressed by int ids
 * (indices).  Nodes refer to tensors by id, tensors to their producer by
 * node id.  Nothing points into the tables, so passes rewrite a graph by
 * editing ids, then call npu_ir_topo_sort() or npu_ir_remove_dead(), which
 * renumber the nodes and recompute every producer.
 *
 * - Tensor ids are stable for the life of the graph: tensors are never
 *   removed (npu_ir_remove_dead() frees the data of constants nothing uses
 *   any more).  Node ids change when nodes are sorted or removed.
 * - Adding a tensor or a node may move the tables: a pointer to a tensor
 *   or node is valid only until the next npu_ir_add_*() on that graph.
 * - Every string, array and constant payload is owned by the graph and
 *   freed by npu_ir_graph_free(), the only free function.
 * - Shapes are static: dims[i] >= 0 once known, -1 while unknown; rank -1
 *   while unknown.  npu_ir_infer_shapes() (npu_ir_shape.c, with the shape
 *   rules the compiler's operator registry gives) makes every tensor's
 *   dtype and shape known or fails.
 * - Constants carry their value in data (raw little endian, row major,
 *   bytes = numel * npu_dtype_size(dtype); bools one byte each, 0 or 1);
 *   data is NULL for tensors that are computed at run time.  A constant with no elements still has a
 *   non-NULL data (of 0 bytes).
 * - Nodes keep ONNX semantics: op, domain and the opset of that domain say
 *   exactly what the inputs and attributes mean (e.g. Softmax below opset
 *   13 flattens to 2-D at axis; Squeeze/Unsqueeze/Split/Slice/Pad/Clip/
 *   Reduce* take axes, pads, bounds ... as attributes in old opsets and as
 *   constant inputs in new ones).  Inputs are in ONNX order; -1 stands for
 *   an omitted optional input (or output).
 * - Quantization parameters are attached to tensors when they are known
 *   (constant scale and zero point of QuantizeLinear, DequantizeLinear,
 *   QLinearConv, QLinearMatMul): weights read by DequantizeLinear carry
 *   their per-channel scales, activations their per-tensor ones.
 *
 * Canonical form after npu_ir_infer_shapes(): Conv, ConvTranspose,
 * ConvInteger, QLinearConv, MaxPool and AveragePool carry explicit
 * kernel_shape, strides, dilations and pads (begin..., end...) attributes,
 * auto_pad "NOTSET" (and ConvTranspose no output_shape, its excess in
 * output_padding), so lowering never re-derives padding; Shape carries
 * resolved start and end.  Constant subgraphs are folded and dead nodes
 * removed; graph outputs may then be constants.
 */
#ifndef NPU_IR_H
#define NPU_IR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "npu_internal.h"

/* Largest dimension and element count the IR accepts: keeps every shape
 * computation far from int64 overflow. */
#define NPU_IR_DIM_MAX ((int64_t)1 << 31)
#define NPU_IR_NUMEL_MAX ((int64_t)1 << 40)

typedef enum npu_ir_attr_type {
	NPU_IR_ATTR_INT = 1,
	NPU_IR_ATTR_FLOAT,
	NPU_IR_ATTR_STRING,
	NPU_IR_ATTR_INTS,
	NPU_IR_ATTR_FLOATS,
	NPU_IR_ATTR_TENSOR,
	/* A list of strings (RNN activations): @n strings back to back in
	 * @s, each NUL terminated. */
	NPU_IR_ATTR_STRINGS,
	/* An ONNX attribute the IR does not carry (graphs, sparse tensors,
	 * type protos, lists of tensors): its name only. */
	NPU_IR_ATTR_OTHER,
} npu_ir_attr_type;

struct npu_ir_tensor;

typedef struct npu_ir_attr {
	char *name;
	npu_ir_attr_type type;
	int64_t i;			/* INT */
	float f;			/* FLOAT */
	char *s;			/* STRING, NUL terminated */
	int n;				/* INTS, FLOATS: element count */
	int64_t *ints;			/* INTS */
	float *floats;			/* FLOATS */
	struct npu_ir_tensor *t;	/* TENSOR: a constant outside the graph's table */
} npu_ir_attr;

/* Quantization of a tensor, when known: real = scale * (q - zero_point). */
typedef struct npu_ir_quant {
	int count;		/* 0: none; 1: per tensor; > 1: per channel */
	int axis;		/* per channel: the channel axis (>= 0) */
	float *scale;		/* count entries */
	int32_t *zero_point;	/* count entries */
} npu_ir_quant;

typedef struct npu_ir_tensor {
	char *name;
	npu_dtype dtype;		/* 0 while unknown */
	int rank;			/* -1 while unknown */
	int64_t dims[NPU_MAX_RANK];	/* -1: unknown */
	void *data;			/* constant value, or NULL */
	size_t bytes;			/* size of data */
	/*
	 * data points into a read-only file mapping the graph owns (ONNX
	 * external data, npu_ir_graph_own_mapping()), not into malloc'd
	 * memory: never written, freed with the mapping, not with the tensor.
	 */
	bool data_mapped;
	npu_ir_quant quant;
	int producer;			/* node id; -1 for inputs and constants */
	/*
	 * Dims whose size is known only at run time (bit d: dim d; issue 17):
	 * the output of NonZero, NonMaxSuppression, Unique or Compress of a
	 * run-time input and everything computed from it.  dims[] hold the
	 * bound (the largest size the run can produce), which sizes the
	 * tensor's buffer; the host steps that compute it write the actual
	 * shape at run time (model/npu_cmodel.h, struct npu_host_tensor).
	 * NPU_IR_DYN_VALUE: computed from such a tensor (Shape of it), static
	 * in the dims not marked, but still a run-time value the host makes.
	 */
	uint16_t dyn;
} npu_ir_tensor;

#define NPU_IR_DYN_VALUE	0x100u

typedef struct npu_ir_node {
	char *op;		/* ONNX op_type: "Conv" */
	char *domain;		/* "" for the default ONNX domain */
	char *name;		/* "" when the model gave none */
	int opset;		/* version of @domain's opset the model imports */
	int src_index;		/* position in the model file; -1 for new nodes */
	int n_inputs;
	int *inputs;		/* tensor ids, -1: omitted optional input */
	int n_outputs;
	int *outputs;		/* tensor ids, -1: omitted optional output */
	int n_attrs;
	npu_ir_attr *attrs;
	bool dead;		/* npu_ir_remove_dead() drops it */
} npu_ir_node;

typedef struct npu_ir_graph {
	char *name;
	char *producer;		/* producer_name of the model, "" if none */
	int64_t ir_version;	/* the ONNX IR version of the file */
	int opset;		/* default-domain opset; 0 if not imported */

	int n_tensors;
	npu_ir_tensor *tensors;
	int n_nodes;
	npu_ir_node *nodes;	/* in topological order after npu_ir_topo_sort() */
	int n_inputs;
	int *inputs;		/* tensor ids of the graph inputs (never constants) */
	int n_outputs;
	int *outputs;		/* tensor ids of the graph outputs */
	/*
	 * Set when npu_ir_infer_shapes() failed because an operand that fixes
	 * an output's shape (Reshape's shape, Resize's scales ...) is computed
	 * at run time: that tensor's id, else -1.  When it is a graph input
	 * whose value the caller knows, npu_ir_freeze_input() and a new try
	 * make the shapes static.
	 */
	int need_const;
	/*
	 * Set by npu_ir_infer_shapes() while it runs the shape rule of a node
	 * with an input of run-time size: the rule computes the outputs'
	 * bounds, which need not match the dims the model declares.
	 */
	bool shaping_dyn;
	/*
	 * The names the model gives the symbolic dims of its graph inputs
	 * (ONNX dim_param: "batch", "sequence"), so that errors can name the
	 * dim a caller has to give a size (npu_ir_set_dim_name()).
	 */
	int n_dim_names;
	struct npu_ir_dim_name {
		int tensor;	/* tensor id */
		int axis;
		char *name;
	} *dim_names;
	/*
	 * Read-only file mappings (ONNX external data) that constants'
	 * data_mapped payloads point into: unmapped by npu_ir_graph_free(),
	 * so they live as long as the graph (a compiled model keeps none).
	 */
	int n_mappings;
	struct npu_ir_mapping {
		void *addr;
		size_t len;
	} *mappings;

	/* private */
	int cap_tensors, cap_nodes;
	int hash_cap;		/* power of two */
	int *hash;		/* tensor ids by name, open addressing, -1 empty */
	int next_anon;
} npu_ir_graph;

/* ---- graph ---- */

npu_status npu_ir_graph_create(npu_ir_graph **out);
void npu_ir_graph_free(npu_ir_graph *g);	/* accepts NULL */
/*
 * Hand the mapping [@addr, @addr + @len) (mmap'd) to @g, which unmaps it
 * when freed; on failure it is unmapped at once.
 */
npu_status npu_ir_graph_own_mapping(npu_ir_graph *g, void *addr, size_t len);

/* ---- tensors ---- */

/*
 * Add a tensor named @name (NULL: a fresh unique name) of @rank dims
 * (@dims may be NULL: all unknown; rank -1: unknown).  Fails with
 * NPU_ERR_INVALID_ARG if the name is taken.
 */
npu_status npu_ir_add_tensor(npu_ir_graph *g, const char *name, npu_dtype dtype,
			     int rank, const int64_t *dims, int *id);
/* Id of the tensor named @name, or -1. */
int npu_ir_find_tensor(const npu_ir_graph *g, const char *name);
/* Make tensor @t a constant: copies @bytes of @data (which must match its
 * dtype and shape) and clears its producer. */
npu_status npu_ir_set_const(npu_ir_graph *g, int t, const void *data, size_t bytes);
/* Same, taking ownership of @data (malloc'd; freed on failure too). */
npu_status npu_ir_set_const_owned(npu_ir_graph *g, int t, void *data, size_t bytes);
/* Set the per-tensor (count 1) or per-channel quantization of @t. */
npu_status npu_ir_set_quant(npu_ir_tensor *t, int count, int axis,
			    const float *scale, const int32_t *zero_point);
/*
 * Turn graph input tensor @t into a constant holding a copy of @data
 * (@bytes must match its dtype and shape) and drop it from the inputs.
 */
npu_status npu_ir_freeze_input(npu_ir_graph *g, int t, const void *data, size_t bytes);
/* Free a tensor that lives outside a graph (npu_onnx_parse_tensor()). */
void npu_ir_tensor_free(npu_ir_tensor *t);
/* Give a graph input a static shape (for inputs with dynamic dims). */
npu_status npu_ir_set_input_shape(npu_ir_graph *g, int input, int rank, const int64_t *dims);

/* Record that dim @axis of tensor @t is the symbolic dim @name. */
npu_status npu_ir_set_dim_name(npu_ir_graph *g, int t, int axis, const char *name);
/* The name of symbolic dim @axis of tensor @t, or NULL if it has none. */
const char *npu_ir_dim_name(const npu_ir_graph *g, int t, int axis);
/*
 * Tensor @t's shape with its symbolic dims by name: "int64[batch,sequence]",
 * "float32[?,3,224,224]" (unnamed: ?); into @buf, returns @buf.
 */
const char *npu_ir_named_shape_str(const npu_ir_graph *g, int t, char *buf, size_t len);

/* Number of elements; -1 if the shape is not fully known. */
int64_t npu_ir_numel(const npu_ir_tensor *t);
/*
 * Elements before and after dimension @axis (0 <= @axis < rank): the outer
 * count of blocks and the inner stride of one step along @axis.
 */
void npu_ir_axis_sizes(const npu_ir_tensor *t, int64_t axis, int64_t *outer, int64_t *inner);
static inline bool npu_ir_is_const(const npu_ir_tensor *t)
{
	return t->data != NULL;
}
bool npu_ir_shape_known(const npu_ir_tensor *t);
/* Node @n reads or writes a tensor of run-time size (npu_ir_tensor.dyn). */
bool npu_ir_node_dyn(const npu_ir_graph *g, const npu_ir_node *n);
/* "float32[1,3,224,224]", "?[?]" ...: into @buf, returns @buf. */
const char *npu_ir_shape_str(const npu_ir_tensor *t, char *buf, size_t len);

/*
 * Read a constant integer tensor (int32 or int64, any shape) as int64:
 * fails with NPU_ERR_SHAPE if @t is not a constant of those types or holds
 * more than @cap elements.  *@count gets the element count.
 */
npu_status npu_ir_const_ints(const npu_ir_tensor *t, int64_t *vals, int cap, int *count);
/* Same for float32/float16/bfloat16 constants, as float. */
npu_status npu_ir_const_floats(const npu_ir_tensor *t, float *vals, int cap, int *count);

/* ---- nodes ---- */

/*
 * Append a node (default domain, the graph's opset) reading @inputs and
 * writing @outputs (tensor ids, -1 for omitted ones), and make it the
 * producer of its outputs.  The node is appended at the end: call
 * npu_ir_topo_sort() when done editing.
 */
npu_status npu_ir_add_node(npu_ir_graph *g, const char *op, const char *name,
			   const int *inputs, int n_inputs,
			   const int *outputs, int n_outputs, int *id);
/* Input @i of @n as a tensor, NULL if absent or omitted. */
npu_ir_tensor *npu_ir_input(const npu_ir_graph *g, const npu_ir_node *n, int i);
npu_ir_tensor *npu_ir_output(const npu_ir_graph *g, const npu_ir_node *n, int i);
/* "'conv1'" or "#12" (its index in the model file): for messages. */
const char *npu_ir_node_label(const npu_ir_node *n, char *buf, size_t len);

/* How many node inputs (of live nodes) read tensor @t. */
int npu_ir_count_uses(const npu_ir_graph *g, int t);
bool npu_ir_is_graph_output(const npu_ir_graph *g, int t);

/* ---- attributes ---- */

npu_ir_attr *npu_ir_attr_find(const npu_ir_node *n, const char *name);
/*
 * Typed getters: @def when absent; NPU_ERR_FORMAT naming the node when the
 * attribute has another type (an INT is accepted where a FLOAT is asked).
 */
npu_status npu_ir_attr_int(const npu_ir_node *n, const char *name, int64_t def, int64_t *out);
npu_status npu_ir_attr_float(const npu_ir_node *n, const char *name, float def, float *out);
npu_status npu_ir_attr_string(const npu_ir_node *n, const char *name, const char *def,
			      const char **out);
/* Lists: absent gives *vals NULL and *count -1. */
npu_status npu_ir_attr_ints(const npu_ir_node *n, const char *name, const int64_t **vals,
			    int *count);
npu_status npu_ir_attr_floats(const npu_ir_node *n, const char *name, const float **vals,
			      int *count);
/* A list of strings: *@buf holds *@count strings back to back, each NUL
 * terminated; absent gives *@buf NULL and *@count -1. */
npu_status npu_ir_attr_strings(const npu_ir_node *n, const char *name, const char **buf,
			       int *count);
/* Absent gives NULL. */
npu_status npu_ir_attr_tensor(const npu_ir_node *n, const char *name,
			      const npu_ir_tensor **out);

/* Setters replace an attribute of the same name. */
npu_status npu_ir_set_attr_int(npu_ir_node *n, const char *name, int64_t v);
npu_status npu_ir_set_attr_float(npu_ir_node *n, const char *name, float v);
npu_status npu_ir_set_attr_string(npu_ir_node *n, const char *name, const char *s);
npu_status npu_ir_set_attr_ints(npu_ir_node *n, const char *name, const int64_t *v, int count);
npu_status npu_ir_set_attr_floats(npu_ir_node *n, const char *name, const float *v, int count);
npu_status npu_ir_set_attr_strings(npu_ir_node *n, const char *name, const char *const *v,
				   int count);
void npu_ir_remove_attr(npu_ir_node *n, const char *name);

/* ---- whole-graph passes ---- */

/*
 * Order the nodes so every node comes after the producers of its inputs
 * (stable: keeps the file order where it can) and recompute producers.
 * NPU_ERR_FORMAT if the graph has a cycle (naming a node on it), a tensor
 * has two producers, or a node reads a tensor nothing defines.
 */
npu_status npu_ir_topo_sort(npu_ir_graph *g);
/*
 * Drop nodes marked dead and nodes none of whose outputs reach a graph
 * output, then renumber (keeping the order) and free the data of constants
 * that nothing reads any more.
 */
npu_status npu_ir_remove_dead(npu_ir_graph *g);

/* Human-readable listing of the whole graph, for debugging. */
void npu_ir_dump(const npu_ir_graph *g, FILE *f);

/* ---- shape inference (npu_ir_shape.c) ---- */

/* An operator's shape rule and constant evaluator (ir/npu_ir_rules.h). */
struct npu_ir_op;
/*
 * Where npu_ir_infer_shapes() finds node @n's rules: NPU_OK with *@out
 * set, or the failure to report (NPU_ERR_UNSUPPORTED naming the operator)
 * when there are none.  The IR has no operator list of its own: the
 * compiler's registry gives one (npu_ops_infer_shapes(), compile/npu_ops.h).
 */
typedef npu_status (*npu_ir_op_find)(const npu_ir_node *n, const struct npu_ir_op **out);

/*
 * Infer the dtype and static shape of every tensor with the rules @find
 * gives, folding constant subgraphs (npu_ir_const.c) as it goes and
 * removing the folded nodes.  Fails with what @find fails with for an
 * operator it does not know, NPU_ERR_SHAPE for inconsistent shapes or
 * dtypes (also against shapes the model declares) or a dynamic input
 * dimension, NPU_ERR_FORMAT for bad attributes.
 */
npu_status npu_ir_infer_shapes(npu_ir_graph *g, npu_ir_op_find find);

/* ---- constant evaluation (npu_ir_const.c) ---- */

/* Whether node @n can be evaluated now (its rules @op have an evaluator
 * and the inputs it needs are constant).  Output shapes must already be
 * known. */
bool npu_ir_const_can_eval(const npu_ir_graph *g, const npu_ir_node *n,
			   const struct npu_ir_op *op);
/* The bytes evaluating @n makes (every output for NPU_IR_EVAL_OUTPUTS). */
size_t npu_ir_const_eval_bytes(const npu_ir_graph *g, const npu_ir_node *n,
			       const struct npu_ir_op *op);
/* Compute the outputs of node @node as constants with @op's evaluator
 * (after its shape rule). */
npu_status npu_ir_const_eval(npu_ir_graph *g, int node, const struct npu_ir_op *op);

/*
 * Slice (any opset), resolved against input 0's shape: for each axis the
 * first index, the step and the output length (shape_tensor.c).
 */
npu_status npu_ir_slice_plan(npu_ir_graph *g, const npu_ir_node *n,
			     int64_t start[NPU_MAX_RANK], int64_t step[NPU_MAX_RANK],
			     int64_t len[NPU_MAX_RANK]);
/* Transpose: the permutation (default: reversed axes) of a rank-@rank input. */
npu_status npu_ir_transpose_perm(const npu_ir_node *n, int rank, int perm[NPU_MAX_RANK]);

/* Half-precision conversions (round to nearest even). */
float npu_ir_f16_to_f32(uint16_t h);
uint16_t npu_ir_f32_to_f16(float f);
float npu_ir_bf16_to_f32(uint16_t h);
uint16_t npu_ir_f32_to_bf16(float f);

#endif /* NPU_IR_H */
