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
	NPU_DTYPE_INT32 = 6,
	NPU_DTYPE_INT64 = 7,
	NPU_DTYPE_FLOAT16 = 10,
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
	size_t bytes;			/* product(dims) * npu_dtype_size(dtype) */
	/* Quantized tensors: real = scale * (q - zero_point); else scale 0. */
	float scale;
	int32_t zero_point;
} npu_tensor_info;

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
 * Open a device.  @spec: "emu", a device node path, or NULL for the
 * default: $NPU_DEVICE if set, else the first kernel device, else "emu".
 * Emulator geometry comes from $NPU_EMU_DEFECT_MASK etc. (see the manual).
 */
NPU_API npu_status npu_device_open(const char *spec, npu_device **out);
NPU_API void npu_device_close(npu_device *dev);
NPU_API npu_status npu_device_get_info(const npu_device *dev, npu_device_info *info);

#ifdef __cplusplus
}
#endif

#endif /* NPU_H */
