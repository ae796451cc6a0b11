/* SPDX-License-Identifier: MIT */
/*
 * libnpu: the M100 NPU runtime.
 *
 * Conventions
 * - Every symbol starts with npu_ (types npu_*, macros NPU_*).
 * - Handles are opaque; each has a create/open call and one destroy/close
 *   call.  Destroy calls accept NULL.
 * - Functions that can fail return npu_status.  On failure the calling
 *   thread's npu_last_error() holds a sentence saying what was wrong and,
 *   where it can, what to do about it; output handles are set to NULL.
 * - Ownership: a call never takes ownership of memory passed in unless its
 *   comment says so; memory returned through a pointer to const stays valid
 *   as long as the handle it came from.
 * - Thread safety: npu_device, npu_model and npu_context may be used from
 *   several threads at once; one npu_job by one thread at a time.
 *   npu_last_error() is per thread.
 * - Public functions are declared with NPU_API; everything else in the
 *   library is hidden from the shared object.
 * - Extensible option structs start with struct_size: set it to
 *   sizeof(struct) (npu_*_options_init() does), so older binaries keep
 *   working when fields are added at the end.
 */
#ifndef NPU_H
#define NPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the public API: libnpu.so exports these symbols and nothing else. */
#if defined(__GNUC__)
#define NPU_API __attribute__((visibility("default")))
#else
#define NPU_API
#endif

#define NPU_LIB_VERSION_MAJOR 0
#define NPU_LIB_VERSION_MINOR 1
#define NPU_LIB_VERSION_PATCH 0

/* ---- Version ---- */

/* A version as one comparable number: NPU_VERSION_NUMBER(0, 1, 0) = 0x000100. */
#define NPU_VERSION_NUMBER(major, minor, patch) \
	((uint32_t)(major) << 16 | (uint32_t)(minor) << 8 | (uint32_t)(patch))
/* The version this program was compiled against. */
#define NPU_LIB_VERSION NPU_VERSION_NUMBER(NPU_LIB_VERSION_MAJOR, NPU_LIB_VERSION_MINOR, \
					   NPU_LIB_VERSION_PATCH)

/*
 * The version of the libnpu this process actually runs, "0.1.0"
 * (major.minor.patch); never NULL.  With libnpu.so it is the library the
 * dynamic linker loaded, which can differ from NPU_LIB_VERSION_* in the
 * header the program was built with.  npu_version_number() is the same
 * as NPU_VERSION_NUMBER(major, minor, patch), for comparing.
 */
NPU_API const char *npu_version(void);
NPU_API uint32_t npu_version_number(void);

/* ---- Status ---- */

typedef enum npu_status {
	NPU_OK = 0,
	NPU_ERR_INVALID_ARG,	/* a bad argument to a libnpu call */
	NPU_ERR_NO_MEMORY,	/* host or device memory exhausted */
	NPU_ERR_NO_DEVICE,	/* no such device, or it cannot be opened */
	NPU_ERR_DEVICE,		/* the driver or device reported an error */
	NPU_ERR_VERSION,	/* driver, device or file version not supported */
	NPU_ERR_IO,		/* reading or writing a file failed */
	NPU_ERR_FORMAT,		/* a model file is corrupt, truncated or not a model */
	NPU_ERR_UNSUPPORTED,	/* an operator or feature the NPU does not run */
	NPU_ERR_NOT_FOUND,	/* no tensor, label, cache entry ... of that name */
	NPU_ERR_TIMEOUT,	/* a wait or a download ran out of time */
	NPU_ERR_NETWORK,	/* a download failed (DNS, connection, HTTP status) */
	NPU_ERR_CHECKSUM,	/* downloaded data does not match its sha256 */
	NPU_ERR_BUSY,		/* not enough free clusters for the partition */
	NPU_ERR_JOB_FAILED,	/* the NPU ended a job with an error */
	NPU_ERR_SHAPE,		/* a tensor's size, shape or dtype does not match */
	NPU_ERR_INTERNAL,	/* a libnpu bug: please report it */
	NPU_ERR_CONTEXT_FULL,	/* a generation session's KV cache has no free row */
	NPU_STATUS_COUNT
} npu_status;

/* A short fixed description of @s ("invalid argument", ...); never NULL. */
NPU_API const char *npu_status_str(npu_status s);
/* Details of the calling thread's last failure; "" if none.  Valid until
 * the thread's next libnpu call. */
NPU_API const char *npu_last_error(void);

/* ---- Tensors ---- */

typedef enum npu_dtype {
	NPU_DTYPE_FLOAT32 = 1,
	NPU_DTYPE_UINT8 = 2,
	NPU_DTYPE_INT8 = 3,
	NPU_DTYPE_UINT16 = 4,		/* computed as int32 on the device */
	NPU_DTYPE_INT16 = 5,		/* computed as int32 on the device */
	NPU_DTYPE_INT32 = 6,
	NPU_DTYPE_INT64 = 7,
	NPU_DTYPE_BOOL = 9,		/* one byte, 0 or 1 (an input byte above 1
					 * is NPU_ERR_INVALID_ARG); on the device
					 * a uint8 0/1 */
	NPU_DTYPE_FLOAT16 = 10,
	NPU_DTYPE_FLOAT64 = 11,		/* ONNX DOUBLE; computed as float32 */
	NPU_DTYPE_UINT32 = 12,		/* computed as int32: values < 2^31 */
	NPU_DTYPE_UINT64 = 13,		/* computed as int32: values < 2^31 */
	NPU_DTYPE_BFLOAT16 = 16,
} npu_dtype;	/* values follow ONNX TensorProto.DataType */

NPU_API const char *npu_dtype_str(npu_dtype t);
NPU_API size_t npu_dtype_size(npu_dtype t);	/* 0 if unknown */

#define NPU_MAX_RANK 8

/* Describes a model input or output. */
typedef struct npu_tensor_info {
	const char *name;		/* owned by the model */
	npu_dtype dtype;
	int rank;
	int64_t dims[NPU_MAX_RANK];
	/*
	 * product(dims) * npu_dtype_size(dtype).  An output whose size is
	 * known only at run time (NonZero, NonMaxSuppression, Unique,
	 * Compress and what is computed from them, with the CPU fallback)
	 * has -1 in the dims the run decides and the bound's size here: the
	 * most a run can produce, what the caller must provide to be sure.
	 * npu_context_last_run_output_info() gives a run's actual shape.
	 */
	size_t bytes;
	/* Quantized tensors: real = scale * (q - zero_point); else scale 0. */
	float scale;
	int32_t zero_point;
} npu_tensor_info;

/*
 * The type a tensor of type @t is computed in on the NPU (its device
 * buffer's type): @t itself for float32, float16, bfloat16, int32, int8,
 * uint8 and bool; float32 for float64; int32 for int64, uint64, uint32,
 * int16 and uint16.
 */
NPU_API npu_dtype npu_dtype_device(npu_dtype t);

/*
 * Convert one tensor described by @info (a model input's or output's
 * info) between the caller's type and its device buffer's
 * (npu_dtype_device(); npu_context_input_buffer() and _output_buffer()
 * hold that type).  npu_run() does this itself; these are for callers of
 * the zero-copy buffers.  @src and @dst must not overlap unless the two
 * types are the same.  To the device: NPU_ERR_INVALID_ARG naming the
 * element when a value does not fit (an integer outside int32, a finite
 * float64 beyond float32's range; infinities and NaN are kept) or a bool
 * byte is not 0 or 1.  From the device: int32 results are wrapped into
 * uint32, int16 and uint16 and sign-extended into int64 and uint64 (as
 * the ONNX type's own arithmetic wraps), float32 widened to float64.
 */
NPU_API npu_status npu_tensor_to_device(const npu_tensor_info *info, const void *src,
					void *dst);
NPU_API npu_status npu_tensor_from_device(const npu_tensor_info *info, const void *src,
					  void *dst);

/* Caller memory holding one tensor's data, raw little endian. */
typedef struct npu_tensor {
	const char *name;		/* NULL: by position */
	npu_dtype dtype;
	void *data;
	size_t bytes;
} npu_tensor;

/* ---- Devices ---- */

typedef enum npu_backend {
	NPU_BACKEND_EMU = 1,		/* in-process device core */
	NPU_BACKEND_KERNEL = 2,		/* /dev/accel/accelN via the npu driver */
} npu_backend;

typedef struct npu_device_info {
	npu_backend backend;
	char path[64];			/* "emu" or "/dev/accel/accel0" */
	char driver[32];		/* "npu 1.0" or "emu" */
	uint32_t hw_version;		/* major << 16 | minor */
	uint32_t clusters;
	uint32_t tpbs_per_cluster;
	uint32_t mesh_x, mesh_y;
	uint32_t defect_mask;
	uint32_t healthy_mask;
	uint32_t healthy_clusters;
	uint32_t hbsm_size;
	uint32_t sram_size;
	uint32_t clock_mhz;
} npu_device_info;

typedef struct npu_device npu_device;

/*
 * List the devices: every /dev/accel/accel* bound to the npu driver, then
 * the emulator.  Fills up to @cap entries, sets *@count to how many exist.
 */
NPU_API npu_status npu_device_list(npu_device_info *infos, size_t cap, size_t *count);

/*
 * Open a device.  @spec: "emu", "emu:key=value,...", a device node path,
 * or NULL for the default: $NPU_DEVICE if set, else the first kernel
 * device, else the emulator.  Emulator keys: clusters, tpbs, mesh=XxY,
 * defect-mask, clock-mhz, threads; $NPU_EMU_OPTIONS gives defaults.
 */
NPU_API npu_status npu_device_open(const char *spec, npu_device **out);
NPU_API void npu_device_close(npu_device *dev);
NPU_API npu_status npu_device_get_info(const npu_device *dev, npu_device_info *info);

#define NPU_MAX_CLUSTERS	16	/* cluster masks are 16 bits */
#define NPU_MAX_LINKS		64	/* mesh nodes (<= 16) x 4 directions */
#define NPU_UNITS		4	/* TCU, CVU, DTDU, CSU */
#define NPU_DMA_ENGINES		2

/* Which parts of npu_device_counters the backend could fill. */
enum npu_counters_have {
	NPU_HAVE_CYCLES = 1u << 0,	/* cycles */
	NPU_HAVE_CLUSTERS = 1u << 1,	/* cluster_busy */
	NPU_HAVE_UNITS = 1u << 2,	/* unit_busy, hbsm_conflicts */
	NPU_HAVE_TRAFFIC = 1u << 3,	/* dma_bytes, gsdu_bytes, link_* */
	NPU_HAVE_WORK = 1u << 4,	/* load_bytes, store_bytes, macs_* */
};

/*
 * The device's performance counters: cumulative over every job of every
 * process since the device was reset, in simulated cycles and bytes.
 * Sample twice and subtract for a period.  Per physical cluster; directed
 * NoC link l leaves mesh node l / 4 going east, west, north, south
 * (l % 4); node (x, y) is y * mesh_x + x.  have: enum npu_counters_have.
 */
typedef struct npu_device_counters {
	uint32_t have;
	uint64_t cycles;
	uint64_t cluster_busy[NPU_MAX_CLUSTERS];
	uint64_t unit_busy[NPU_MAX_CLUSTERS][NPU_UNITS];	/* summed over TPBs */
	uint64_t hbsm_conflicts[NPU_MAX_CLUSTERS];
	uint64_t dma_bytes[NPU_DMA_ENGINES];
	uint64_t gsdu_bytes;
	uint64_t link_bytes[NPU_MAX_LINKS];
	uint64_t link_stalls[NPU_MAX_LINKS];
	/*
	 * The work behind the cycles: bytes every unit's operands read and
	 * wrote (DMA and GSDU included, a broadcast once per receiving TPB)
	 * and the TCU's multiply-accumulates with float (bf16, fp16) and
	 * int8 inputs: what a host must move and compute at least to run the
	 * same programs (Documentation/benchmarks.md, "The host floor").
	 */
	uint64_t load_bytes;
	uint64_t store_bytes;
	uint64_t macs_float;
	uint64_t macs_int8;
} npu_device_counters;

/* Read the counters; what the backend cannot read is 0 and not in have. */
NPU_API npu_status npu_device_read_counters(npu_device *dev, npu_device_counters *out);

/* ---- Models ---- */

typedef enum npu_precision {
	NPU_PRECISION_DEFAULT = 0,	/* bf16 for float models, native for quantized */
	NPU_PRECISION_BF16 = 1,		/* bf16 data, fp32 accumulation */
	NPU_PRECISION_INT8 = 2,		/* int8, per-channel weights, calibrated */
	/*
	 * Weight-only int8 for float models: constant MatMul/Gemm weights as
	 * int8 per output channel (a scale each), widened to bf16 on the chip;
	 * activations bf16, fp32 accumulation.  Needs ISA 1.3.
	 */
	NPU_PRECISION_W8 = 3,
	/*
	 * Closer to fp32 for float models: every float Conv with constant
	 * weights as three bf16 products (x w = xh wh + xh wl + xl wh, each
	 * operand split into its bf16 head and the rest), summed in fp32:
	 * about 16 bits of the products instead of 8, for three times the
	 * TCU work of those Convs.  MatMul and Gemm stay one bf16 product.
	 * At every precision a Conv whose result a Log reads through a
	 * magnitude (an STFT as a Conv) gets this (Documentation/libnpu.md,
	 * "Three bf16 products").
	 */
	NPU_PRECISION_BF16X3 = 4,
} npu_precision;

/*
 * The shape to compile a model input with (npu_compile_options.input_shapes):
 * @name is the graph input's name, @dims[0..@rank) its sizes (each 1 to
 * 2^31, rank 0 a scalar).
 */
typedef struct npu_input_shape {
	const char *name;
	int rank;
	int64_t dims[NPU_MAX_RANK];
} npu_input_shape;

/* How to compile a model.  npu_compile_options_init() sets the defaults. */
typedef struct npu_compile_options {
	size_t struct_size;
	npu_precision precision;
	/* INT8: a directory of sample inputs (.npy or raw) to calibrate on. */
	const char *calibration_dir;
	/* Logical clusters to compile for; 0: every healthy cluster of the
	 * device given to npu_model_load_*, or all 14 without one. */
	unsigned clusters;
	/*
	 * Non-zero: a node the NPU cannot run whose operator libnpu has a C
	 * reference of (Documentation/libnpu.md, "Host steps, control flow
	 * and the CPU fallback") runs on the host between two NPU programs (a
	 * host step; npu_model_get_info's host_steps, npu_context_step_info).
	 * Zero (the default): such a node fails compilation with
	 * NPU_ERR_UNSUPPORTED naming the operator, the node, the opset and
	 * this option.  Batch 1 only; ignored for compiled (native) models.
	 */
	int allow_cpu_fallback;
	/*
	 * Inputs per run.  0 or 1: one input, the nodes run one after another,
	 * each over the whole partition (lowest latency).  2..64: one program
	 * takes @batch inputs and pipelines them through stages, each stage a
	 * group of nodes on its own TPBs placed with the seed-002 cost model
	 * (highest throughput).  The tensors of a run are then batch-major:
	 * input i of the run is model input i % n of batch element i / n.
	 */
	unsigned batch;
	/*
	 * Shapes for graph inputs, by name, applied before shape inference:
	 * an input whose declared shape has symbolic dims (ONNX dim_param
	 * "batch", "sequence") or unknown ones compiles only with one.  A
	 * shape must keep the input's declared rank and static dims; one for
	 * a fully static input that matches changes nothing.  A shape naming
	 * no graph input, given twice, or with a size outside 1..2^31 is
	 * NPU_ERR_INVALID_ARG.  Read during the load call only; the caller
	 * keeps ownership.  Ignored for compiled (native) models.
	 */
	const npu_input_shape *input_shapes;
	size_t n_input_shapes;
	/*
	 * A Loop runs its body as steps the host repeats (issue 17): one
	 * whose trip count and condition never stop it fails its run with
	 * NPU_ERR_UNSUPPORTED after this many iterations.  0: 65536; at most
	 * 2^24 (else NPU_ERR_INVALID_ARG).  Kept in the compiled model.
	 */
	unsigned max_loop_iterations;
	/*
	 * Graph inputs fixed to a value at compile time, by name (OpenVINO's
	 * --input name->value): a value a deployment never changes (a sample
	 * rate, a window size, a flag).  Each becomes a constant before shape
	 * inference, so constant folding and an If whose condition it decides
	 * keep only what it selects; it is then no input of the compiled
	 * model (npu_model_input_info() lists the others, in their order).
	 * An npu_tensor carries exactly what is needed (name, dtype, raw
	 * little-endian data, bytes), as npu_run() takes inputs.  @dtype must
	 * be the declared input's and @bytes its element count times the
	 * dtype's size; an input with open dims takes its shape from
	 * input_shapes (which may name it too) first.  A name that is no
	 * graph input, given twice, a NULL name or data, another dtype or
	 * byte count is NPU_ERR_INVALID_ARG.  Read during the load call only;
	 * the caller keeps ownership.  Ignored for compiled (native) models.
	 */
	const npu_tensor *input_values;
	size_t n_input_values;
} npu_compile_options;

NPU_API void npu_compile_options_init(npu_compile_options *opts);

typedef struct npu_model npu_model;

/*
 * Load a model: ONNX (compiled now) or the native compiled format
 * (npu_model_save).  @dev may be NULL; @opts may be NULL for defaults.
 * The caller owns *out and frees it with npu_model_free().  An ONNX
 * model's external data (weights in side files) is read from the folder
 * of @path, during the call only.
 */
NPU_API npu_status npu_model_load_file(const char *path, npu_device *dev,
				       const npu_compile_options *opts,
				       npu_model **out);
/* Same from memory; the buffer is not kept after the call.  ONNX external
 * data has no folder to come from here: refused (NPU_ERR_FORMAT). */
NPU_API npu_status npu_model_load_memory(const void *data, size_t size,
					 npu_device *dev,
					 const npu_compile_options *opts,
					 npu_model **out);
/* Write the compiled model in the native format. */
NPU_API npu_status npu_model_save(const npu_model *model, const char *path);
NPU_API void npu_model_free(npu_model *model);

NPU_API size_t npu_model_input_count(const npu_model *model);
NPU_API size_t npu_model_output_count(const npu_model *model);
/* Info of input/output @index; NPU_ERR_NOT_FOUND past the end. */
NPU_API npu_status npu_model_input_info(const npu_model *model, size_t index,
					npu_tensor_info *info);
NPU_API npu_status npu_model_output_info(const npu_model *model, size_t index,
					 npu_tensor_info *info);
/*
 * The inputs an ONNX model file declares, before compiling anything: a dim
 * the model leaves open (a symbolic name or no value) is -1, rank -1 for
 * an input with no declared shape, and @bytes 0 then.  For choosing npu_compile_options.input_shapes (npu-run takes an
 * open dim from the size of an input file).  Parses the whole model, as a
 * load does.  A compiled (native) model is NPU_ERR_FORMAT: its inputs are
 * npu_model_input_info()'s.  Free *@infos with npu_declared_inputs_free().
 */
NPU_API npu_status npu_model_declared_inputs(const char *path, npu_tensor_info **infos,
					     size_t *count);
NPU_API void npu_declared_inputs_free(npu_tensor_info *infos, size_t count);
/* Inputs per run (npu_compile_options.batch; 1 for an unbatched model). */
NPU_API unsigned npu_model_batch(const npu_model *model);
/* Logical clusters the compiled program uses (the smallest partition). */
NPU_API unsigned npu_model_clusters(const npu_model *model);

/*
 * What a compiled model is and the device memory a context of it takes.
 * Extensible: set struct_size to sizeof(npu_model_info); fields past it
 * are not written, so older binaries keep working when fields are added.
 */
typedef struct npu_model_info {
	size_t struct_size;
	unsigned batch;			/* inputs per run (npu_model_batch) */
	unsigned clusters;		/* npu_model_clusters */
	unsigned steps;			/* programs per run */
	uint64_t const_bytes;		/* constants (weights) */
	uint64_t program_bytes;		/* the programs */
	/* Intermediate tensors: the compiler's peak, tensors alive at
	 * different times sharing bytes; one copy per batch element. */
	uint64_t scratch_bytes;
	uint64_t io_bytes;		/* inputs and outputs, every batch element */
	/* Kept across runs: a generation program's KV cache (issue 16). */
	uint64_t state_bytes;
	/* Steps run on the host (allow_cpu_fallback), counted in steps. */
	unsigned host_steps;
	/* "Det 'det_1', Mod #3": the nodes those steps run ("" if none);
	 * valid while the model lives. */
	const char *host_nodes;
	/*
	 * What the compiler did that changes how the model computes, one
	 * line each, "" if nothing: tensors of types the NPU does not have,
	 * computed in the nearest one, by name ("float64 computed as
	 * float32: ...").  Owned by the model.  A model loaded from a .npum
	 * file has none (the file does not keep them).
	 */
	const char *notes;
} npu_model_info;

/* Fill @info (see npu_model_info); NPU_ERR_INVALID_ARG for NULL or a struct_size too small. */
NPU_API npu_status npu_model_get_info(const npu_model *model, npu_model_info *info);

/* ---- Contexts and runs ---- */

typedef struct npu_context npu_context;

/*
 * Allocate a partition of @clusters on @dev (0: the model's own count)
 * and the model's device memory.  @dev and @model must outlive it.
 */
NPU_API npu_status npu_context_create(npu_device *dev, const npu_model *model,
				      unsigned clusters, npu_context **out);
NPU_API void npu_context_destroy(npu_context *ctx);

/*
 * Zero-copy: the device memory of input or output @index, mapped in this
 * process.  Write inputs there and read outputs there; npu_run() with
 * NULL tensors then copies nothing.  Valid while the context lives.  With
 * a batch, index i is tensor i % n of batch element i / n.  The buffer
 * holds the type the NPU computes the tensor in, npu_dtype_device(): an
 * int64 tensor's holds int32 (@bytes is half the tensor's), a float64
 * one's float32; npu_run() with tensors converts, checking inputs fit,
 * and npu_tensor_to_device() / _from_device() convert for these buffers.
 * An output of run-time size (npu_tensor_info.bytes) has a buffer of its
 * bound; a run's result fills its start, row-major, in the shape
 * npu_context_last_run_output_info() gives.
 */
NPU_API npu_status npu_context_input_buffer(npu_context *ctx, size_t index,
					    void **data, size_t *bytes);
NPU_API npu_status npu_context_output_buffer(npu_context *ctx, size_t index,
					     void **data, size_t *bytes);

/*
 * Run once, synchronously.  @inputs: @n_inputs tensors, matched by name, or
 * by position when name is NULL (with a batch: tensor i belongs to batch
 * element i / n and is matched within it); NULL to use what is already in the input
 * buffers.  @outputs likewise receive the results.  A tensor whose dtype
 * or byte size does not match the model is NPU_ERR_SHAPE; an output of
 * run-time size (a -1 dim in its info) takes a buffer of any size that
 * holds the run's result (see npu_context_last_run_output_info()).
 */
NPU_API npu_status npu_run(npu_context *ctx, const npu_tensor *inputs,
			   size_t n_inputs, npu_tensor *outputs,
			   size_t n_outputs);

typedef struct npu_job npu_job;

/*
 * Start a run and return at once.  Inputs are copied before it returns;
 * outputs are written by npu_job_wait().  One run per context at a time:
 * a second submit waits for the first to finish.
 */
NPU_API npu_status npu_submit(npu_context *ctx, const npu_tensor *inputs,
			      size_t n_inputs, npu_tensor *outputs,
			      size_t n_outputs, npu_job **out);
/* Wait up to @timeout_ns (negative: forever).  NPU_ERR_TIMEOUT leaves the
 * job running; wait again or free it (freeing waits). */
NPU_API npu_status npu_job_wait(npu_job *job, int64_t timeout_ns);
NPU_API void npu_job_free(npu_job *job);

/* Timing of the last completed run of @ctx. */
typedef struct npu_run_stats {
	uint64_t device_cycles;		/* simulated cycles, all steps */
	double device_us;		/* the same at the device clock */
	double wall_us;			/* submit to completion, host time */
	unsigned steps;			/* programs run */
} npu_run_stats;

NPU_API npu_status npu_context_last_run(const npu_context *ctx,
					npu_run_stats *stats);

/* One step (program) of the last completed run. */
typedef struct npu_step_stats {
	const char *label;	/* what it runs ("Conv conv1"), valid while the model lives */
	uint64_t device_cycles;	/* simulated cycles */
} npu_step_stats;

/*
 * The steps of the last completed run of @ctx, in order: fills up to @cap
 * entries and sets *@count to the number of steps.
 */
NPU_API npu_status npu_context_last_run_steps(const npu_context *ctx, npu_step_stats *steps,
					      size_t cap, size_t *count);

/*
 * One step of the last completed run, in more detail than npu_step_stats.
 * Extensible: set struct_size to sizeof(npu_step_info).
 */
typedef struct npu_step_info {
	size_t struct_size;
	const char *label;	/* as npu_step_stats; a host step's ends in " (host)" */
	uint64_t device_cycles;	/* 0 for a host step */
	int on_host;		/* 1: a host step (the CPU fallback), 0: an NPU program */
	const char *op;		/* a host step's ONNX operator, else NULL */
	double host_us;		/* a host step's wall time, else 0 */
} npu_step_info;

/*
 * Step @index of the last completed run of @ctx: NPU_ERR_NOT_FOUND past
 * the last step or before the first run.  Host steps run on the calling
 * thread inside npu_submit()/npu_run() (the programs before one finish
 * first), so a model with host steps returns from npu_submit() only
 * after its last host step.
 */
NPU_API npu_status npu_context_last_run_step(const npu_context *ctx, size_t index,
					     npu_step_info *info);

/*
 * The actual shape of output @index after the last completed run of
 * @ctx: the model's info (npu_model_output_info()) with, for an output
 * of run-time size (dims -1 there), the dims this run computed and
 * @bytes their size.  NPU_ERR_NOT_FOUND past the last output or before
 * the first run.  npu_run() and npu_job_wait() copy that many bytes into
 * the caller's tensor, which may be any size at least as large (the
 * model's bound always is); a smaller one fails the run with
 * NPU_ERR_SHAPE saying how many bytes the result needs (the outputs
 * after it are not copied).
 */
NPU_API npu_status npu_context_last_run_output_info(const npu_context *ctx, size_t index,
						    npu_tensor_info *info);

/* ---- Tracing: the emulator's timeline of a run ---- */

/*
 * Record the simulated timeline of the runs of @ctx from now on: every
 * instruction iteration on every unit (TCU, CVU, DTDU, CSU, SYNC of each
 * TPB; the CCB's DMA engines) with its start and length in cycles, and
 * every NoC link transfer.  Results and cycles are the same as untraced.
 * @max_events bounds one run's recording (about 64 bytes an event): a run
 * with more keeps recording nothing past it, and npu_context_write_trace()
 * then refuses it, naming the bound.  0 stops recording and frees it.
 * Only the emulator sees the device's timeline: on a kernel device this
 * is NPU_ERR_UNSUPPORTED (open "emu" to trace).
 */
NPU_API npu_status npu_context_trace(npu_context *ctx, size_t max_events);

/*
 * Write the timeline of the last completed run of @ctx (recorded by
 * npu_context_trace()) to @path in the Chrome trace-event JSON format,
 * which https://ui.perfetto.dev and chrome://tracing open: a track per
 * TPB unit of each cluster and per DMA engine with a span per
 * instruction iteration, the steps with the compiler's labels (host
 * steps included), counters of the busiest NoC links and of HBSM bank
 * conflicts.  ts/dur are microseconds at the device clock; each event's
 * args give its cycles.  NPU_ERR_NOT_FOUND before a recorded run
 * completed, NPU_ERR_IO if @path cannot be written.
 *
 * A writer rather than an array of spans: the file is what people open,
 * a binding (Python's ctypes) needs nothing but a path, and the recorded
 * layout stays free to change with the cycle model.
 */
NPU_API npu_status npu_context_write_trace(npu_context *ctx, const char *path);

/* ---- Generating text ---- */

/*
 * A generation session (issue 16): a decoder ONNX model exported "with
 * past" the way Hugging Face exports it (inputs input_ids, attention_mask,
 * position_ids where present, past_key_values.N.key/value; outputs logits,
 * present.N.key/value) runs token by token on one partition of a device,
 * its KV cache kept in device memory across steps.  libnpu compiles two
 * kinds of program from the model: decode (one token against the cache,
 * at create) and prefill (a prompt padded to a bucket of 16, 32, 64, ...
 * up to max_context tokens, on first use of each bucket).  Per step the
 * host writes one token id, its position, one mask element and the cache
 * row, and reads one id (greedy: ArgMax on the device) or one logits row
 * (the other samplings, done here in libnpu).
 *
 * Thread safety: one session by one thread at a time; sessions on one
 * device may run on different threads (each has its own partition).
 */
typedef struct npu_generator npu_generator;

typedef enum npu_sampling {
	NPU_SAMPLING_GREEDY = 0,	/* the highest logit, the lowest id on a tie
					 * (ArgMax on the device) */
	NPU_SAMPLING_RANDOM = 1,	/* a seeded draw from softmax(logits /
					 * temperature), cut to top_k and top_p */
} npu_sampling;

/* Why a session stops generating (npu_generator_stats.stop). */
typedef enum npu_generator_stop {
	NPU_GEN_RUNNING = 0,		/* it can step again */
	NPU_GEN_STOP_EOS = 1,		/* the last step returned eos_id */
	NPU_GEN_STOP_MAX_TOKENS = 2,	/* max_new_tokens since the last feed */
	NPU_GEN_STOP_CONTEXT = 3,	/* the cache is full (NPU_ERR_CONTEXT_FULL) */
} npu_generator_stop;

/* How to generate.  npu_generator_options_init() sets the defaults. */
typedef struct npu_generator_options {
	size_t struct_size;
	/* Positions the KV cache holds: prompt plus generated tokens that
	 * enter it (default 512, at most 65536). */
	unsigned max_context;
	npu_precision precision;	/* DEFAULT, BF16 or W8 (INT8 is refused) */
	unsigned clusters;		/* partition size; 0: every healthy cluster */
	npu_sampling sampling;		/* default greedy */
	/* NPU_SAMPLING_RANDOM: logits are divided by @temperature (> 0,
	 * default 1), cut to the @top_k highest (0: no cut) and to the
	 * fewest highest whose probability sums to @top_p (0 or 1: no cut),
	 * then one id is drawn with a PRNG seeded by @seed: the same seed
	 * and logits give the same ids on every platform. */
	float temperature;
	unsigned top_k;
	float top_p;
	uint64_t seed;
	int64_t eos_id;			/* stop after returning it; -1 (default): none */
	unsigned max_new_tokens;	/* stop after this many steps since the
					 * last feed; 0 (default): no limit */
} npu_generator_options;

NPU_API void npu_generator_options_init(npu_generator_options *opts);

/*
 * Compile @path's decode program for @dev and set up a session on a
 * partition of it (the cache zeroed).  @opts may be NULL for defaults.
 * A model without past inputs, or that the compiler cannot take, fails
 * here by name.  @dev must outlive the session.
 */
NPU_API npu_status npu_generator_create(npu_device *dev, const char *path,
					const npu_generator_options *opts,
					npu_generator **out);
NPU_API void npu_generator_free(npu_generator *gen);

/*
 * Feed @n token ids (each in [0, vocab), else NPU_ERR_INVALID_ARG naming
 * it).  Into an empty cache they run as one prefill program (@n at most
 * max_context, else NPU_ERR_INVALID_ARG before anything runs); after that
 * (a follow-up turn) one by one through the decode program, after the
 * token the last step returned.  Tokens that would not fit into the free
 * cache rows: NPU_ERR_CONTEXT_FULL, nothing run.  Clears a stop at the
 * end-of-sequence id or max_new_tokens.
 */
NPU_API npu_status npu_generator_feed(npu_generator *gen, const int64_t *ids, size_t n);

/*
 * Generate one token into *@id: the first step after a feed samples from
 * the fed tokens' last logits; each later one runs the decode program on
 * the token returned before (writing its K/V into the next cache row).
 * NPU_ERR_CONTEXT_FULL when that token has no cache row left (with a
 * prompt of P tokens, at most max_context - P + 1 steps), never a write
 * past the cache; NPU_ERR_INVALID_ARG before a feed or after a stop at
 * eos_id or max_new_tokens (npu_generator_stats.stop says which).
 */
NPU_API npu_status npu_generator_step(npu_generator *gen, int64_t *id);

/*
 * The logits the last step sampled from (or, right after a feed, those
 * the next step will): @vocab floats, valid until the next feed or step.
 */
NPU_API npu_status npu_generator_logits(npu_generator *gen, const float **logits,
					size_t *vocab);

/* Counters of a session; extensible like npu_model_info. */
typedef struct npu_generator_stats {
	size_t struct_size;
	unsigned max_context;
	unsigned vocab;
	unsigned position;		/* cache rows holding a token */
	unsigned fed;			/* tokens fed (prompts) */
	unsigned generated;		/* tokens returned by steps */
	npu_generator_stop stop;
	unsigned prefill_tokens;	/* the bucket of the last prefill */
	/* Wall time from the start of the first feed to the first step's
	 * id (time to first token), and of the prefill run alone. */
	double first_token_us;
	double prefill_wall_us;
	uint64_t prefill_cycles;	/* simulated cycles of the last prefill */
	/* The last step: host wall time (run, sampling), the decode run's
	 * simulated cycles and time at the device clock (0 for the first
	 * step after a feed, which runs nothing), and the bytes the device's
	 * DMA engines moved during it (npu_device_counters.dma_bytes: DDR
	 * traffic, weights and cache reads; device-wide, so exact only when
	 * nothing else runs on the device meanwhile). */
	double step_wall_us;
	uint64_t step_cycles;
	double step_device_us;
	uint64_t step_dma_bytes;
	/* Sums over every decode run (steps and follow-up feeds). */
	unsigned decode_runs;
	double decode_wall_us;
	uint64_t decode_cycles;
	double decode_device_us;
	uint64_t decode_dma_bytes;
	unsigned clock_mhz;		/* the device clock the times are at */
} npu_generator_stats;

NPU_API npu_status npu_generator_get_stats(const npu_generator *gen,
					   npu_generator_stats *stats);

/*
 * The steps (programs) of the last decode run, as npu_context_last_run_steps
 * gives them: where a token's simulated time goes.  NPU_ERR_INVALID_ARG
 * before the first decode run.
 */
NPU_API npu_status npu_generator_last_steps(const npu_generator *gen, npu_step_stats *steps,
					    size_t cap, size_t *count);

#ifdef __cplusplus
}
#endif

/* Post-processing: softmax, top-k with labels, (de)quantization, anchors,
 * detection decoding and NMS. */
#include "npu_post.h"
/* Model files by URL: download, cache, sha256 check. */
#include "npu_fetch.h"

#endif /* NPU_H */
