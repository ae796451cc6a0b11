/* SPDX-License-Identifier: MIT */
/*
 * A compiled model: what the compiler produces, the native file holds and
 * a context runs.
 *
 * Device memory is a list of segments, each one buffer: constants
 * (weights), programs, scratch (activations) and the inputs/outputs.
 * Programs refer to device addresses, which are only known once a
 * context has allocated its buffers, so every such address is recorded as
 * a relocation: "the 64-bit field at this offset of this segment is the
 * address of that segment plus an addend".  Steps are the programs to run
 * in order, each one job.
 */
#ifndef NPU_CMODEL_H
#define NPU_CMODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "npu_internal.h"

enum npu_seg_kind {
	NPU_SEG_CONST = 1,	/* contents in the model; device read-only */
	NPU_SEG_PROGRAM = 2,	/* contents in the model, relocated at load */
	NPU_SEG_SCRATCH = 3,	/* zeroed at context creation */
	NPU_SEG_IO = 4,		/* inputs and outputs, written by the host */
	/*
	 * State kept across runs (a generation session's KV cache, issue
	 * 16): zeroed when allocated, never written by the host, and shared
	 * by the programs of one session (npu_context_create_shared()).
	 * Two programs compiled for the same model and maximum context lay
	 * it out identically (compile/npu_compile.h, npu_compile_generation).
	 */
	NPU_SEG_STATE = 5,
};

struct npu_seg {
	uint32_t kind;		/* enum npu_seg_kind */
	uint64_t size;		/* bytes */
	uint8_t *data;		/* CONST/PROGRAM: size bytes, owned */
};

struct npu_reloc {
	uint32_t seg;		/* segment holding the 64-bit field */
	uint64_t offset;	/* of the field, 8-byte aligned, in that segment */
	uint32_t target;	/* segment whose address goes there */
	uint64_t addend;	/* added to the target's address */
};

/* An input or output of the model. */
struct npu_io {
	npu_tensor_info info;	/* info.name points at name */
	char *name;
	uint32_t seg;		/* an NPU_SEG_IO segment */
	uint64_t offset;	/* where the tensor's bytes start in it */
	/*
	 * 0: a static shape.  k > 0: an output of run-time size (issue 17):
	 * info.dims has -1 where the run decides, info.bytes is the bound
	 * (the buffer), and the run's actual shape is run-time shape k - 1
	 * (struct npu_dyn_shape, written by the host step computing it).
	 */
	uint32_t dyn;
};

/*
 * The device computes with float32, float16, bfloat16, int32, int8, uint8
 * and bool.  An input or output of another ONNX type keeps its type and
 * size in info (what the caller passes and gets); its I/O slot holds the
 * nearest device type and libnpu converts on the host: float64 as
 * float32, int64, uint64, uint32, int16 and uint16 as int32.  The file
 * format stores info only: the boundary type always implies the slot's.
 */
static inline npu_dtype npu_io_dev_dtype(const npu_tensor_info *t)
{
	switch (t->dtype) {
	case NPU_DTYPE_FLOAT64:
		return NPU_DTYPE_FLOAT32;
	case NPU_DTYPE_INT64:
	case NPU_DTYPE_UINT64:
	case NPU_DTYPE_UINT32:
	case NPU_DTYPE_INT16:
	case NPU_DTYPE_UINT16:
		return NPU_DTYPE_INT32;
	default:
		return t->dtype;
	}
}

/* Bytes of an I/O tensor's slot on the device (see npu_io_dev_dtype()). */
static inline size_t npu_io_dev_bytes(const npu_tensor_info *t)
{
	size_t es = npu_dtype_size(t->dtype);

	return es ? t->bytes / es * npu_dtype_size(npu_io_dev_dtype(t)) : t->bytes;
}

/*
 * Host steps (issue 17): a node the NPU cannot run, computed on the host
 * between two NPU programs by libnpu's C reference of its operator
 * (host/npu_host.h), with npu_compile_options.allow_cpu_fallback.  It
 * reads and writes the same device buffers the programs use (segment +
 * offset, through the buffers' host mappings), so it runs the same on
 * every backend.
 */

/* A step whose seg is this runs on the host (npu_step.host). */
#define NPU_HOST_SEG	0xffffffffu

/* One tensor of a host step, where it lives and what it holds on the device. */
struct npu_host_tensor {
	uint32_t seg;		/* NPU_HOST_SEG: an omitted optional input/output */
	uint64_t offset;
	uint32_t dtype;		/* npu_dtype as the device holds it (int64: int32) */
	int rank;
	int64_t dims[NPU_MAX_RANK];	/* dyn: the bound */
	/*
	 * 0: static.  k > 0: a tensor of run-time size (issue 17) whose
	 * actual shape is run-time shape k - 1 of the run: the host step
	 * writing it sets it, the host steps reading it take it from there.
	 */
	uint32_t dyn;
};

/* The actual shape of a tensor of run-time size, per run (npu_host_tensor.dyn). */
struct npu_dyn_shape {
	int rank;
	int64_t dims[NPU_MAX_RANK];
};

/* An attribute of a host step's node (the types of npu_ir_attr_type but TENSOR/GRAPH). */
struct npu_host_attr {
	char *name;
	uint32_t type;		/* NPU_IR_ATTR_INT, _FLOAT, _STRING, _INTS, _FLOATS */
	int64_t i;
	float f;
	char *s;
	uint32_t n;		/* INTS, FLOATS */
	int64_t *ints;
	float *floats;
};

/*
 * Control steps (issue 17, version 3 of the file): host steps that
 * choose the next step instead of computing a node, so a run-time If runs
 * only its taken branch.  The context runs them itself (model/context.c,
 * run_control()); npu_host_run() never sees one.  Targets are step
 * indices; the reader allows only forward ones (target > the step's own
 * index, <= nsteps) except a LOOP_END's, which goes back to the step after
 * its LOOP_BEGIN at most max_iterations times per entry.
 */
enum npu_ctl_kind {
	NPU_CTL_NONE = 0,	/* a host step computing a node */
	/* input 0 (a bool, any shape of one element) false: go to target */
	NPU_CTL_IF_NOT = 1,
	NPU_CTL_JUMP = 2,	/* go to target */
	/*
	 * An ONNX Loop (compile/lower_loop.c).  Both have the outputs
	 * iter_num (int32 or int64, one), cond (bool, one), v_in x N (the
	 * carried values, where the body reads them), v_final x N, scan x K
	 * (the Loop's outputs; a scan output [L, ...] holds L iterations).
	 * LOOP_BEGIN: inputs M (int, one; NPU_HOST_SEG: none), cond (bool;
	 * none: true), v_initial x N.  It sets iter_num 0, cond, v_in =
	 * v_initial and goes on when M > 0 and cond, else sets v_final =
	 * v_initial and goes to target (after the LOOP_END).
	 * LOOP_END: inputs M, cond_out, v_out x N, scan_out x K, attribute
	 * "max_iterations".  Iteration i = iter_num + 1 done: scan[i - 1] =
	 * scan_out; if i < M and cond_out, then v_in = v_out, cond = cond_out,
	 * iter_num = i and go to target (the body's first step, right after
	 * the LOOP_BEGIN: the reader checks the pair); else v_final = v_out.
	 * A run stops with an error after max_iterations iterations, or when
	 * the iterations do not fill a scan output exactly.
	 */
	NPU_CTL_LOOP_BEGIN = 3,
	NPU_CTL_LOOP_END = 4,
};

/* A Loop without a trip count that never stops fails after this many iterations. */
#define NPU_LOOP_MAX_ITERATIONS_DEFAULT	65536
/* ... and a file may not ask for more. */
#define NPU_LOOP_MAX_ITERATIONS		(1u << 24)

struct npu_host_step {
	char *op;		/* ONNX op_type of the default domain */
	int opset;
	char *node;		/* the node's label, for messages */
	uint32_t ninputs, noutputs;
	struct npu_host_tensor *tensors;	/* inputs, then outputs */
	uint32_t nattrs;
	struct npu_host_attr *attrs;
	uint32_t ctl;		/* enum npu_ctl_kind */
	uint32_t target;	/* ctl: the step to go to */
};

/*
 * The checks of npu_tensor_to_device() alone (model/io_convert.c): every
 * value of input @t at @src fits its device slot, bools are 0 or 1.
 */
npu_status npu_io_check_input(const npu_tensor_info *t, const void *src);

struct npu_step {
	uint32_t seg;		/* an NPU_SEG_PROGRAM segment; NPU_HOST_SEG: a host step */
	uint64_t offset;	/* of the npu_hw_prog header, 64-byte aligned */
	uint32_t size;		/* program bytes */
	char *label;		/* what it runs, for profiles ("Conv conv1"); may be NULL */
	struct npu_host_step *host;	/* seg == NPU_HOST_SEG: what the host computes */
};

static inline bool npu_step_on_host(const struct npu_step *s)
{
	return s->seg == NPU_HOST_SEG;
}

/* A control step: a host step choosing the next step, computing nothing. */
static inline bool npu_step_is_control(const struct npu_step *s)
{
	return npu_step_on_host(s) && s->host && s->host->ctl != NPU_CTL_NONE;
}

struct npu_cmodel;
void npu_host_step_free(struct npu_host_step *h);
/* Host steps of @m computing nodes, control steps not counted (0: none). */
uint32_t npu_cmodel_host_steps(const struct npu_cmodel *m);
/* The run-time shapes @m's tensors name (the largest npu_host_tensor.dyn, npu_io.dyn). */
uint32_t npu_cmodel_dyn_shapes(const struct npu_cmodel *m);

struct npu_cmodel {
	uint32_t nclusters;	/* logical clusters the programs use */
	uint32_t tpbs;		/* TPBs per cluster the programs use */
	uint32_t precision;	/* enum npu_precision it was compiled for */
	char producer[64];	/* what made it, for diagnostics */
	struct npu_seg *segs;
	uint32_t nsegs;
	struct npu_reloc *relocs;
	uint32_t nrelocs;
	struct npu_io *inputs, *outputs;
	uint32_t ninputs, noutputs;
	struct npu_step *steps;
	uint32_t nsteps;
	/*
	 * Inputs per run (>= 1).  Batch element b's inputs and outputs sit at
	 * io.offset + b * io_stride; one program pipelines them (npu_pipe.c).
	 */
	uint32_t batch;
	uint64_t io_stride;
	/* Run-time shapes a run records (npu_host_tensor.dyn, npu_io.dyn). */
	uint32_t ndyn;
	/* Names of operators run on the CPU (allow_cpu_fallback), "," joined. */
	char *fallback_ops;
	/*
	 * What the compiler changed that the caller should know, one line
	 * each (tensors computed in another type than the model's: float64
	 * as float32 ...); NULL if nothing.  Not in the file format: a model
	 * loaded from .npum has none.
	 */
	char *notes;
};

#define NPU_MAX_BATCH	64

/* Inputs per run (a model with batch 0 runs one). */
static inline uint32_t npu_cmodel_batch(const struct npu_cmodel *m)
{
	return m->batch ? m->batch : 1;
}

/* Where batch element @b of I/O tensor @io starts in its segment. */
static inline uint64_t npu_cmodel_io_offset(const struct npu_cmodel *m,
					    const struct npu_io *io, uint32_t b)
{
	return io->offset + (uint64_t)b * m->io_stride;
}

void npu_cmodel_free(struct npu_cmodel *m);
/* Check every index, offset and size; NPU_ERR_FORMAT naming the first bad one. */
npu_status npu_cmodel_validate(const struct npu_cmodel *m);
/*
 * The program version minor the model's instructions need (0 if none
 * needs more than 1.0); *@step and *@what name the first instruction that
 * needs it (npu_cmodel_isa.c).
 */
unsigned npu_cmodel_isa_minor(const struct npu_cmodel *m, uint32_t *step, const char **what);
/*
 * NPU_ERR_VERSION when the model needs a newer program version than
 * @device_isa (NPU_REG_ISA_VERSION; 0: unknown, not checked), naming the
 * step and the feature.
 */
npu_status npu_cmodel_check_isa(const struct npu_cmodel *m, uint32_t device_isa);

/* The native file format (npu_cmodel_file.c). */
#define NPU_CMODEL_MAGIC	0x4d55504eu	/* "NPUM" */
/*
 * Version 2 adds host steps (HOST records): written only by a model that
 * has one, so models without stay version 1 and readable by older libnpu,
 * which refuses a version 2 file by its version.  Version 3 (issue 17)
 * adds tensors of run-time size: the u32 after a HOST tensor's rank and
 * the one after an INPUT/OUTPUT's scale (0 before) hold npu_host_tensor.dyn
 * and npu_io.dyn; written only by a model that has one.
 */
/*
 * Version 3 also adds control steps (CTL records: the run-time If, Loop):
 * written, like run-time sizes, only by a model that has one; a model
 * with host steps but neither stays version 2, and one with no host step
 * version 1.
 */
#define NPU_CMODEL_VERSION	3
#define NPU_CMODEL_VERSION_MIN	1
npu_status npu_cmodel_write(const struct npu_cmodel *m, uint8_t **buf,
			    size_t *len);
npu_status npu_cmodel_read(const uint8_t *buf, size_t len,
			   struct npu_cmodel **out);
bool npu_cmodel_is_native(const void *buf, size_t len);

#endif /* NPU_CMODEL_H */
