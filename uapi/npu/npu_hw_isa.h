/* SPDX-License-Identifier: MIT */
/*
 * M100 program format and TPB instruction encoding.
 *
 * A program is a struct npu_hw_prog header followed by fixed-size 512-byte
 * instructions.  The CCB dispatcher sends each instruction to the TPBs
 * named by its destination masks (broadcast), or keeps it in the CCB for
 * DMA-engine instructions.  Within one functional unit of one TPB the
 * instructions run in program order; across units only the Synchronization
 * Unit counters order them (dataflow).  Documentation/hw/isa.md is the
 * normative description; this header is the encoding.
 *
 * Floating-point parameters are carried as IEEE-754 binary32 bit patterns
 * in __u32 fields (the kernel has no float type).
 */
#ifndef NPU_HW_ISA_H
#define NPU_HW_ISA_H

#include "npu_hw_common.h"
#include "npu_hw_geom.h"

#define NPU_PROG_MAGIC			0x50555050u	/* "PPUP" */
#define NPU_PROG_VERSION_MAJOR		1
/*
 * 1.1: NPU_FN_SIN .. NPU_FN_SIGN, NPU_REDUCE_SUM_ABS .. PROD.
 * 1.2: NPU_FN_SILU, NPU_FN_GELU_TANH; NPU_CVU_F_RMS (RMS norm);
 * comparisons and logic NPU_FN_EQUAL .. NPU_FN_XOR, NPU_FN_NOT and
 * NPU_FN_TRUNC, NPU_CVU_SELECT, NPU_CVU_SCAN (NPU_CVU_F_EXCLUSIVE,
 * NPU_CVU_F_REVERSE), NPU_REDUCE_ARGMAX and NPU_REDUCE_ARGMIN.
 * 1.3: NPU_CVU_DEQUANT (NPU_CVU_F_NIBBLES): quantised weights widened
 * on the chip.
 * 1.3: NPU_GSDU_F_DST_INDEXED (rows written at run-time positions).
 * 1.4: NPU_FN_MOD, NPU_FN_FMOD (remainders; exact on int32: ONNX Mod).
 */
#define NPU_PROG_VERSION_MINOR		4
#define NPU_PROG_MAX_INSNS		65536
#define NPU_INSN_SIZE			512
#define NPU_MAX_REPEAT_LEVELS		4

/**
 * struct npu_hw_prog - program header, at npu_hw_task.prog_va.
 * @magic:	NPU_PROG_MAGIC.
 * @version_major: NPU_PROG_VERSION_MAJOR; a different major is refused.
 * @version_minor: informational.
 * @insn_count:	number of instructions, <= NPU_PROG_MAX_INSNS.
 * @insn_offset: byte offset of the first instruction from the header,
 *		a multiple of 64 and >= sizeof(struct npu_hw_prog).
 * @flags:	must be zero.
 * @reserved:	must be zero.
 */
struct npu_hw_prog {
	__u32 magic;
	__u16 version_major;
	__u16 version_minor;
	__u32 insn_count;
	__u32 insn_offset;
	__u32 flags;
	__u32 reserved[11];
};
NPU_HW_ASSERT_SIZE(struct npu_hw_prog, 64);

/* Element types.  NONE marks an unused operand. */
enum npu_hw_dtype {
	NPU_DT_NONE = 0,
	NPU_DT_INT8 = 1,
	NPU_DT_UINT8 = 2,
	NPU_DT_INT32 = 3,
	NPU_DT_BF16 = 4,
	NPU_DT_FP16 = 5,
	NPU_DT_FP32 = 6,
	NPU_DT_COUNT
};

/* Address spaces an operand or GSDU descriptor can name. */
enum npu_hw_space {
	NPU_SPACE_NONE = 0,
	NPU_SPACE_HBSM = 1,		/* the executing TPB's own HBSM */
	NPU_SPACE_HBSM_REMOTE = 2,	/* other TPBs' HBSM: cluster/tpb masks */
	NPU_SPACE_SRAM = 3,		/* the task's CCB SRAM window */
	NPU_SPACE_DDR = 4,		/* device virtual address, via the MMU */
	NPU_SPACE_COUNT
};

/*
 * Tensor Walker Unit configuration (seed 000, Fig. 10).
 *
 * Level 0 is the innermost loop.  Level l's Value starts at @initial and
 * advances by @step each time every inner level has wrapped; after it has
 * produced @final it restarts from @initial.  The generated address is
 * @base plus the sum of all Values.  A level therefore runs
 * (final - initial) / step + 1 times, which must be a positive integer.
 *
 * Broadcast levels: with @step == 0 the Value stays at @initial and the
 * level runs @final times (1..NPU_TWU_MAX_COUNT); this is how an operand is
 * reused across a loop of the instruction (e.g. a bias row over M rows).
 *
 * Double buffering: an outer level with initial 0, step = buffer offset,
 * final = buffer offset alternates between two buffers on successive
 * iterations of the level above it.
 */
#define NPU_TWU_MAX_LEVELS		5
#define NPU_TWU_MAX_COUNT		(1 << 24)

struct npu_hw_twu_level {
	__s32 initial;
	__s32 step;
	__s32 final;
};
NPU_HW_ASSERT_SIZE(struct npu_hw_twu_level, 12);

/**
 * struct npu_hw_twu - one operand: a walker over an address space.
 * @base:	byte address in @space (HBSM offset, SRAM window offset, or
 *		device VA).
 * @space:	enum npu_hw_space; TCU, CVU and CSU compute operands must be
 *		NPU_SPACE_HBSM.
 * @dtype:	enum npu_hw_dtype of the elements.
 * @nlevels:	0 (operand unused) to NPU_TWU_MAX_LEVELS.
 * @flags:	must be zero.
 * @cluster_mask: for NPU_SPACE_HBSM_REMOTE, logical clusters (a
 *		destination may name several: broadcast; a source exactly one).
 * @tpb_mask:	for NPU_SPACE_HBSM_REMOTE, TPBs within those clusters.
 * @pad:	must be zero.
 * @level:	the loop levels, [0] innermost.
 * @reserved:	must be zero.
 */
struct npu_hw_twu {
	__u64 base;
	__u8 space;
	__u8 dtype;
	__u8 nlevels;
	__u8 flags;
	__u16 cluster_mask;
	__u8 tpb_mask;
	__u8 pad;
	struct npu_hw_twu_level level[NPU_TWU_MAX_LEVELS];
	__u32 reserved;
};
NPU_HW_ASSERT_SIZE(struct npu_hw_twu, 80);

/*
 * Synchronization (seed 000 SU; seed 003's set/wait flags between pipes).
 *
 * Instructions run in iterations r = 0, 1, ... (one per combination of
 * repeat-level values; a single iteration without repeat levels).  Before iteration r, every enabled wait blocks until its counter
 * >= @value + r * @iter_step.  After each iteration (NPU_SIGNAL_PER_ITER)
 * or once after the last one, every enabled signal adds one to its counter.
 * Waits read the executing TPB's own counters (the CCB's for DMA
 * instructions); signals can target the local TPB, the TPBs of other
 * logical clusters by mask (remote, broadcast), or the CCB.
 */
#define NPU_SYNC_WAITS			4
#define NPU_SYNC_SIGNALS		2

#define NPU_WAIT_ENABLE			NPU_HW_BIT(0)
#define NPU_WAIT_KNOWN			(NPU_WAIT_ENABLE)

struct npu_hw_sync_wait {
	__u8 counter;
	__u8 flags;
	__u16 reserved;
	__u32 value;
	__u32 iter_step;
};
NPU_HW_ASSERT_SIZE(struct npu_hw_sync_wait, 12);

#define NPU_SIGNAL_ENABLE		NPU_HW_BIT(0)
#define NPU_SIGNAL_PER_ITER		NPU_HW_BIT(1)
#define NPU_SIGNAL_REMOTE		NPU_HW_BIT(2)	/* cluster/tpb masks */
#define NPU_SIGNAL_CCB			NPU_HW_BIT(3)	/* the CCB's counters */
#define NPU_SIGNAL_KNOWN		(NPU_SIGNAL_ENABLE | NPU_SIGNAL_PER_ITER | \
					 NPU_SIGNAL_REMOTE | NPU_SIGNAL_CCB)

struct npu_hw_sync_signal {
	__u8 counter;
	__u8 flags;
	__u8 tpb_mask;
	__u8 reserved0;
	__u16 cluster_mask;
	__u16 reserved1;
};
NPU_HW_ASSERT_SIZE(struct npu_hw_sync_signal, 8);

struct npu_hw_sync {
	struct npu_hw_sync_wait wait[NPU_SYNC_WAITS];
	struct npu_hw_sync_signal signal[NPU_SYNC_SIGNALS];
};
NPU_HW_ASSERT_SIZE(struct npu_hw_sync, 64);

/* Functional units.  TCU..SYNC live in every TPB; DMA in the CCB. */
enum npu_hw_unit {
	NPU_UNIT_TCU = 0,
	NPU_UNIT_CVU = 1,
	NPU_UNIT_DTDU = 2,
	NPU_UNIT_CSU = 3,
	NPU_UNIT_SYNC = 4,
	NPU_TPB_UNITS = 5,
	NPU_UNIT_DMA = 5,	/* CCB DMA engines */
	NPU_UNIT_COUNT = 6
};

/* Opcodes, per unit. */
enum npu_hw_tcu_op { NPU_TCU_MATMUL = 1, NPU_TCU_CONV2D = 2 };
enum npu_hw_cvu_op {
	NPU_CVU_UNARY = 1,	/* dst = fn(src0) */
	NPU_CVU_BINARY = 2,	/* dst = fn(src0, src1) */
	NPU_CVU_REDUCE = 3,	/* over the inner reduce_levels of src0 */
	NPU_CVU_SOFTMAX = 4,
	NPU_CVU_LOGSOFTMAX = 5,
	NPU_CVU_LAYERNORM = 6,	/* src1 = gamma, src2 = beta; NPU_CVU_F_RMS: no src2 */
	NPU_CVU_POOL = 7,
	/* version 1.2 */
	NPU_CVU_SELECT = 8,	/* dst = src0 != 0 ? src1 : src2, element bits copied */
	NPU_CVU_SCAN = 9,	/* running sum along level reduce_levels - 1 of src0 */
	/*
	 * version 1.3: dst = (src0 - zp) * src1, zp = src2 when used, else
	 * in_zp: quantised weights widened (to BF16) on the chip.  SRC0 is
	 * INT8 or UINT8 (NPU_CVU_F_NIBBLES: two 4-bit elements per byte);
	 * SRC1 (scale, FP32 or BF16) and SRC2 (zero point, any dtype) walk
	 * the destination's shape, a scale per block by a broadcast level.
	 */
	NPU_CVU_DEQUANT = 10,
};
enum npu_hw_dtdu_op {
	NPU_DTDU_COPY = 1,
	NPU_DTDU_FILL = 2,
	NPU_DTDU_TRANSPOSE = 3,
	NPU_DTDU_PAD = 4,
};
enum npu_hw_csu_op {
	NPU_CSU_GSDU = 1,	/* run a GSDU descriptor chain */
	NPU_CSU_TOPK = 2,
	NPU_CSU_NMS = 3,
};
enum npu_hw_sync_op { NPU_SYNC_NOP = 1, NPU_SYNC_BARRIER = 2 };
enum npu_hw_dma_op { NPU_DMA_COPY = 1 };

/* Operand slots. */
#define NPU_OPND_SRC0			0
#define NPU_OPND_SRC1			1
#define NPU_OPND_SRC2			2	/* bias, beta, indices ... */
#define NPU_OPND_DST			3
#define NPU_OPNDS			4

/*
 * Elementwise functions: CVU UNARY/BINARY, CVU pipeline stages and the
 * TCU's nonlinear pipeline.  Unary functions take parameters from
 * imm[0] (alpha / lo) and imm[1] (beta / hi); in a pipeline stage a binary
 * function takes its second operand from the stage immediate.
 */
enum npu_hw_fn {
	NPU_FN_IDENTITY = 0,
	NPU_FN_RELU = 1,
	NPU_FN_LEAKY_RELU = 2,	/* x < 0 ? alpha * x : x */
	NPU_FN_CLIP = 3,	/* min(max(x, lo), hi) */
	NPU_FN_SIGMOID = 4,
	NPU_FN_TANH = 5,
	NPU_FN_EXP = 6,
	NPU_FN_LOG = 7,
	NPU_FN_SQRT = 8,
	NPU_FN_RSQRT = 9,
	NPU_FN_RECIP = 10,
	NPU_FN_ABS = 11,
	NPU_FN_NEG = 12,
	NPU_FN_ERF = 13,
	NPU_FN_GELU = 14,	/* 0.5 x (1 + erf(x / sqrt 2)) */
	NPU_FN_HARDSIGMOID = 15,	/* clip(alpha x + beta, 0, 1) */
	NPU_FN_HARDSWISH = 16,	/* x * clip(x / 6 + 1 / 2, 0, 1) */
	NPU_FN_FLOOR = 17,
	NPU_FN_CEIL = 18,
	NPU_FN_ROUND = 19,	/* half to even */
	NPU_FN_UNARY_END = 20,
	NPU_FN_ADD = 32,
	NPU_FN_SUB = 33,
	NPU_FN_MUL = 34,
	NPU_FN_DIV = 35,
	NPU_FN_MAX = 36,
	NPU_FN_MIN = 37,
	NPU_FN_PRELU = 38,	/* a < 0 ? a * b : a */
	NPU_FN_POW = 39,
	/*
	 * Comparisons and logic (version 1.2): 1.0 if true, else 0.0.  A
	 * comparison with a NaN is false (EQUAL too); AND, OR and XOR take
	 * any non-zero (NaN included) as true.
	 */
	NPU_FN_EQUAL = 40,
	NPU_FN_LESS = 41,
	NPU_FN_GREATER = 42,
	NPU_FN_LESS_EQUAL = 43,
	NPU_FN_GREATER_EQUAL = 44,
	NPU_FN_AND = 45,
	NPU_FN_OR = 46,
	NPU_FN_XOR = 47,
	/*
	 * Remainders (version 1.4): MOD takes the divisor's sign (Python's
	 * %, ONNX Mod), FMOD the dividend's (C fmod, ONNX Mod fmod=1).  On
	 * INT32 operands (see int32 arithmetic) exact; a zero divisor gives 0.
	 */
	NPU_FN_MOD = 48,
	NPU_FN_FMOD = 49,
	NPU_FN_BINARY_END = 50,
	/* More unary functions (version 1.1); α = imm[0], β = imm[1]. */
	NPU_FN_SIN = 64,
	NPU_FN_COS = 65,
	NPU_FN_TAN = 66,
	NPU_FN_ASIN = 67,
	NPU_FN_ACOS = 68,
	NPU_FN_ATAN = 69,
	NPU_FN_SINH = 70,
	NPU_FN_COSH = 71,
	NPU_FN_ASINH = 72,
	NPU_FN_ACOSH = 73,
	NPU_FN_ATANH = 74,
	NPU_FN_SOFTPLUS = 75,	/* ln(1 + e^x) */
	NPU_FN_SOFTSIGN = 76,	/* x / (1 + |x|) */
	NPU_FN_ELU = 77,	/* x < 0 ? α (e^x - 1) : x */
	NPU_FN_SELU = 78,	/* β (x <= 0 ? α (e^x - 1) : x) */
	NPU_FN_CELU = 79,	/* max(0, x) + min(0, α (e^(x/α) - 1)) */
	NPU_FN_THRESHOLDED_RELU = 80,	/* x > α ? x : 0 */
	NPU_FN_SHRINK = 81,	/* x < -α ? x + β : x > α ? x - β : 0 */
	NPU_FN_SIGN = 82,	/* -1, 0 or 1 (NaN stays NaN) */
	/* version 1.2 */
	NPU_FN_SILU = 83,	/* x sigmoid(x) (SiLU, Swish) */
	NPU_FN_GELU_TANH = 84,	/* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
	NPU_FN_UNARY2_END = 85,
	NPU_FN_NOT = 85,	/* x == 0 ? 1 : 0 (NaN gives 0) */
	NPU_FN_TRUNC = 86,	/* rounded toward zero (NaN and inf kept) */
	NPU_FN_UNARY3_END = 87,
};

enum npu_hw_reduce_fn {
	NPU_REDUCE_SUM = 0,
	NPU_REDUCE_MEAN = 1,
	NPU_REDUCE_MAX = 2,
	NPU_REDUCE_MIN = 3,
	/* version 1.1 */
	NPU_REDUCE_SUM_ABS = 4,		/* sum |x| (L1) */
	NPU_REDUCE_SUM_SQUARE = 5,	/* sum x^2 */
	NPU_REDUCE_L2 = 6,		/* sqrt(sum x^2) */
	NPU_REDUCE_LOG_SUM = 7,		/* ln(sum x) */
	NPU_REDUCE_LOG_SUM_EXP = 8,	/* ln(sum e^x), computed from the row's max */
	NPU_REDUCE_PROD = 9,
	/*
	 * version 1.2: the index (0-based, within the row) of the largest or
	 * smallest element, first on ties (last with NPU_CVU_F_REVERSE); a
	 * NaN counts as larger and smaller than any number (the first NaN
	 * wins).  Written as an integer: give DST the INT32 dtype.
	 */
	NPU_REDUCE_ARGMAX = 10,
	NPU_REDUCE_ARGMIN = 11,
	NPU_REDUCE_END = 12,
};

enum npu_hw_pool_fn { NPU_POOL_MAX = 0, NPU_POOL_AVG = 1 };
enum npu_hw_pad_mode { NPU_PAD_CONSTANT = 0, NPU_PAD_EDGE = 1, NPU_PAD_REFLECT = 2 };
enum npu_hw_round { NPU_ROUND_HALF_EVEN = 0, NPU_ROUND_HALF_AWAY = 1 };

/* TCU flags (npu_hw_tcu_params.flags) */
#define NPU_TCU_F_ACCUMULATE		NPU_HW_BIT(0)	/* dst += result (INT32/FP32 dst) */
#define NPU_TCU_F_PER_CHANNEL		NPU_HW_BIT(1)	/* scales at qscale_addr */
#define NPU_TCU_F_SCALE			NPU_HW_BIT(2)	/* multiply by out_scale */
#define NPU_TCU_F_KNOWN			(NPU_TCU_F_ACCUMULATE | NPU_TCU_F_PER_CHANNEL | \
					 NPU_TCU_F_SCALE)

/**
 * struct npu_hw_tcu_params - TCU MATMUL / CONV2D.
 *
 * Integer inputs: acc(int32) = sum (a - a_zp)(b - b_zp) + bias.  Float
 * inputs: acc(fp32) = sum a*b + bias.  Then the FixPipe-style output stage
 * (seed 003): v = acc * scale (NPU_TCU_F_SCALE: out_scale; PER_CHANNEL: the
 * fp32 array at qscale_addr, one per output channel), v = act(v), and for
 * an INT8/UINT8 destination round(v) + out_zp saturated.  An INT32
 * destination receives acc unscaled; ACCUMULATE adds to the destination.
 *
 * @act: enum npu_hw_fn (unary); @round: enum npu_hw_round;
 * @act_alpha/@act_beta: fp32 bits of the activation parameters.
 * CONV2D only: strides, dilations, pads (top/left/bottom/right) and groups.
 */
struct npu_hw_tcu_params {
	__u8 act;
	__u8 round;
	__u16 flags;
	__u32 act_alpha;
	__u32 act_beta;
	__s32 a_zp;
	__s32 b_zp;
	__s32 out_zp;
	__u32 out_scale;
	__u32 qscale_addr;
	__u16 stride_h, stride_w;
	__u16 dil_h, dil_w;
	__u16 pad_top, pad_left, pad_bottom, pad_right;
	__u16 groups;
	__u16 reserved0;
	__u32 reserved[15];
};
NPU_HW_ASSERT_SIZE(struct npu_hw_tcu_params, 112);

/* CVU flags */
#define NPU_CVU_F_IN_QUANT		NPU_HW_BIT(0)	/* int srcs: (q - in_zp) * in_scale */
#define NPU_CVU_F_OUT_QUANT		NPU_HW_BIT(1)	/* int dst: round(v / out_scale) + out_zp */
#define NPU_CVU_F_COUNT_PAD		NPU_HW_BIT(2)	/* AVG pool counts padding */
/*
 * LAYERNORM as RMS norm (1.2): y = x / sqrt(mean(x^2) + eps) * gamma, no
 * mean subtracted and no beta (src2 unused).
 */
#define NPU_CVU_F_RMS			NPU_HW_BIT(3)
#define NPU_CVU_F_EXCLUSIVE		NPU_HW_BIT(4)	/* SCAN: sum of the elements before */
#define NPU_CVU_F_REVERSE		NPU_HW_BIT(5)	/* SCAN from the end; ARGMAX/MIN: last index */
/*
 * DEQUANT (1.3): SRC0 is UINT8 bytes of two unsigned 4-bit elements each,
 * the low nibble first (as ONNX MatMulNBits packs them); SRC0's level 0
 * then counts bytes, half the destination's level 0.
 */
#define NPU_CVU_F_NIBBLES		NPU_HW_BIT(6)
#define NPU_CVU_F_KNOWN			(NPU_CVU_F_IN_QUANT | NPU_CVU_F_OUT_QUANT | \
					 NPU_CVU_F_COUNT_PAD | NPU_CVU_F_EXCLUSIVE | \
					 NPU_CVU_F_REVERSE | NPU_CVU_F_RMS | \
					 NPU_CVU_F_NIBBLES)
#define NPU_CVU_STAGES			4

struct npu_hw_cvu_stage {
	__u8 fn;		/* enum npu_hw_fn */
	__u8 reserved[3];
	__u32 imm;		/* fp32 bits: parameter or second operand */
};

/**
 * struct npu_hw_cvu_params - CVU operations, computed in fp32 (version
 * 1.2: SELECT copies bits; INT32-only ADD/SUB/MUL, comparisons, SCAN and
 * ARGMAX/ARGMIN work on the integers).
 * @fn:		UNARY/BINARY: enum npu_hw_fn; REDUCE: enum npu_hw_reduce_fn;
 *		POOL: enum npu_hw_pool_fn.
 * @flags:	NPU_CVU_F_*.
 * @nstages:	pipeline stages applied to every result before it is
 *		written (0..NPU_CVU_STAGES): the configurable pipeline.
 * @reduce_levels: REDUCE/SOFTMAX/LOGSOFTMAX/LAYERNORM: how many inner
 *		levels of src0 form the reduced axis (1..4); SCAN: the scanned
 *		level is reduce_levels - 1.
 * @imm:	fp32 bits: [0] alpha/lo/eps, [1] beta/hi.
 * @in_scale, @in_zp, @out_scale, @out_zp: quantization framing.
 * @round:	enum npu_hw_round for integer results.
 * @kernel_h ... @dil_w: POOL geometry on [H][W][C] operands.
 */
struct npu_hw_cvu_params {
	__u8 fn;
	__u8 flags;
	__u8 nstages;
	__u8 reduce_levels;
	__u32 imm[2];
	__u32 in_scale;
	__s32 in_zp;
	__u32 out_scale;
	__s32 out_zp;
	__u8 round;
	__u8 reserved0[3];
	struct npu_hw_cvu_stage stage[NPU_CVU_STAGES];
	__u16 kernel_h, kernel_w;
	__u16 stride_h, stride_w;
	__u16 pad_top, pad_left, pad_bottom, pad_right;
	__u16 dil_h, dil_w;
	__u32 reserved[7];
};
NPU_HW_ASSERT_SIZE(struct npu_hw_cvu_params, 112);

/**
 * struct npu_hw_dtdu_params - DTDU COPY / FILL / TRANSPOSE / PAD.
 * @value:	FILL and constant PAD: element bit pattern in the dst dtype
 *		(low bits used).
 * @pad_mode:	enum npu_hw_pad_mode.
 * @pad_top ... @pad_right: PAD amounts on [H][W][C] operands.
 */
struct npu_hw_dtdu_params {
	__u32 value;
	__u8 pad_mode;
	__u8 reserved0[3];
	__u16 pad_top, pad_left, pad_bottom, pad_right;
	__u32 reserved[24];
};
NPU_HW_ASSERT_SIZE(struct npu_hw_dtdu_params, 112);

/**
 * struct npu_hw_csu_params - cluster-CPU assisted operations.
 * @chain_space: GSDU: NPU_SPACE_HBSM or NPU_SPACE_DDR, where the chain is.
 * @largest:	TOPK: 1 for the largest k, 0 for the smallest.
 * @box_format:	NMS: 0 = [y1, x1, y2, x2], 1 = [cx, cy, w, h].
 * @chain_addr:	GSDU: address of the first struct npu_hw_gsdu_desc.
 * @k:		TOPK: elements kept per row.
 * @max_out:	NMS: maximum boxes kept.
 * @iou_threshold, @score_threshold: NMS, fp32 bits.
 * @count_addr:	NMS: HBSM address where the kept count is written (int32).
 */
struct npu_hw_csu_params {
	__u8 chain_space;
	__u8 largest;
	__u8 box_format;
	__u8 reserved0;
	__u32 reserved1;
	__u64 chain_addr;
	__u32 k;
	__u32 max_out;
	__u32 iou_threshold;
	__u32 score_threshold;
	__u32 count_addr;
	__u32 reserved[19];
};
NPU_HW_ASSERT_SIZE(struct npu_hw_csu_params, 112);

/** struct npu_hw_sync_params - SYNC BARRIER: @barrier_id names it in errors. */
struct npu_hw_sync_params {
	__u32 barrier_id;
	__u32 reserved[27];
};
NPU_HW_ASSERT_SIZE(struct npu_hw_sync_params, 112);

/** struct npu_hw_dma_params - CCB DMA COPY on engine @engine (0 or 1). */
struct npu_hw_dma_params {
	__u32 engine;
	__u32 reserved[27];
};
NPU_HW_ASSERT_SIZE(struct npu_hw_dma_params, 112);

/**
 * struct npu_hw_insn - one instruction.
 * @unit:	enum npu_hw_unit.
 * @opcode:	per-unit opcode.
 * @flags:	must be zero.
 * @cluster_mask: logical clusters that receive the instruction (TPB
 *		units); must be zero for NPU_UNIT_DMA.
 * @tpb_mask:	TPBs within each of those clusters.
 * @repeat_levels: how many outer levels of every used operand are repeat
 *		levels (0..NPU_MAX_REPEAT_LEVELS).  The instruction runs once
 *		per combination of repeat-level values (its iterations, in
 *		row-major order); every used operand must give those levels
 *		the same counts (a reused operand uses broadcast levels).
 * @reserved: must be zero.
 * @sync:	waits and signals.
 * @opnd:	operand walkers, NPU_OPND_*.
 * @params:	per-unit parameters.
 */
struct npu_hw_insn {
	__u8 unit;
	__u8 opcode;
	__u16 flags;
	__u16 cluster_mask;
	__u8 tpb_mask;
	__u8 repeat_levels;
	__u32 reserved[2];
	struct npu_hw_sync sync;
	struct npu_hw_twu opnd[NPU_OPNDS];
	union {
		struct npu_hw_tcu_params tcu;
		struct npu_hw_cvu_params cvu;
		struct npu_hw_dtdu_params dtdu;
		struct npu_hw_csu_params csu;
		struct npu_hw_sync_params sync;
		struct npu_hw_dma_params dma;
		__u8 raw[112];
	} params;
};
NPU_HW_ASSERT_SIZE(struct npu_hw_insn, NPU_INSN_SIZE);

/* GSDU descriptor flags */
#define NPU_GSDU_F_INDEXED		NPU_HW_BIT(0)	/* source rows by index table */
/*
 * 1.3: destination rows by index table (a KV cache row written at a
 * position known at run time); not together with INDEXED.
 */
#define NPU_GSDU_F_DST_INDEXED		NPU_HW_BIT(1)
#define NPU_GSDU_F_KNOWN		(NPU_GSDU_F_INDEXED | NPU_GSDU_F_DST_INDEXED)
#define NPU_GSDU_MAX_CHAIN		4096

/**
 * struct npu_hw_gsdu_desc - one gather/scatter transfer (seed 004 chain).
 * @flags:	NPU_GSDU_F_*.
 * @src_space, @dst_space: enum npu_hw_space (not NONE).
 * @row_bytes:	bytes per row.
 * @src, @dst:	addresses in their spaces.
 * @rows:	number of rows.
 * @src_stride, @dst_stride: bytes between rows.
 * @src_cluster, @src_tpb: the source TPB for a remote-HBSM source.
 * @dst_tpb_mask, @dst_cluster_mask: destinations for a remote-HBSM
 *		destination (broadcast).
 * @index_addr:	INDEXED: local HBSM address of __u32 row indices; source
 *		row i starts at src + index[i] * src_stride.  DST_INDEXED:
 *		the same table, destination row i starts at
 *		dst + index[i] * dst_stride (source row i at src + i *
 *		src_stride).
 * @index_limit: INDEXED: the rows the source has; an index >= it ends the
 *		task NPU_TASK_INDEX_FAULT before anything is read with it (a
 *		gather never reads outside its table).  DST_INDEXED: the rows
 *		the destination has; every index is checked before any row is
 *		written, and one >= it ends the task NPU_TASK_INDEX_FAULT with
 *		nothing of the descriptor written (a cache is never written
 *		past its end).  0: no limit.
 * @next:	address of the next descriptor in the chain's space, 0 ends.
 * @reserved:	must be zero.
 */
struct npu_hw_gsdu_desc {
	__u16 flags;
	__u8 src_space;
	__u8 dst_space;
	__u32 row_bytes;
	__u64 src;
	__u64 dst;
	__u32 rows;
	__s32 src_stride;
	__s32 dst_stride;
	__u16 src_cluster;
	__u8 src_tpb;
	__u8 dst_tpb_mask;
	__u16 dst_cluster_mask;
	__u16 reserved0;
	__u32 index_addr;
	__u32 index_limit;
	__u64 next;
	__u32 reserved[2];
};
NPU_HW_ASSERT_SIZE(struct npu_hw_gsdu_desc, 72);

/* npu_hw_completion.detail for NPU_TASK_ILLEGAL_INSN */
enum npu_hw_insn_error {
	NPU_IE_UNIT = 1,	/* unknown unit */
	NPU_IE_OPCODE = 2,	/* unknown opcode for the unit */
	NPU_IE_RESERVED = 3,	/* reserved field or unknown flag set */
	NPU_IE_DEST = 4,	/* bad destination masks */
	NPU_IE_WALKER = 5,	/* malformed walker (levels, counts, step) */
	NPU_IE_RANGE = 6,	/* walker leaves its address space */
	NPU_IE_DTYPE = 7,	/* unsupported dtype combination */
	NPU_IE_SHAPE = 8,	/* operand shapes disagree */
	NPU_IE_PARAM = 9,	/* bad parameter value */
	NPU_IE_SYNC = 10,	/* bad counter number or sync flags */
	NPU_IE_SPACE = 11,	/* address space not allowed here */
	NPU_IE_CHAIN = 12,	/* bad GSDU descriptor or chain too long */
};

#endif /* NPU_HW_ISA_H */
