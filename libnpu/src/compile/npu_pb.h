/* SPDX-License-Identifier: MIT */
/*
 * Program builder: one npu_hw_prog (a step of a compiled model) with its
 * instructions, GSDU chains after them, and relocations for every device
 * address it holds.  Addresses are (segment, offset) pairs until a context
 * allocates the segments; NPU_PB_SELF names the program's own segment.
 */
#ifndef NPU_PB_H
#define NPU_PB_H

#include "model/npu_cmodel.h"
#include "npu/npu_hw.h"

#define NPU_PB_SELF UINT32_MAX

struct npu_pb_reloc {
	bool in_chain;		/* field in the chain area, else in an insn */
	uint64_t field;		/* byte offset of the u64 in that area */
	uint32_t target;	/* segment, or NPU_PB_SELF */
	uint64_t addend;
};

struct npu_pb {
	struct npu_hw_insn *insns;
	uint32_t n, cap;
	uint8_t *chain;		/* GSDU descriptors, after the instructions */
	size_t chain_len, chain_cap;
	struct npu_pb_reloc *relocs;
	uint32_t nrelocs, cap_relocs;
	bool oom;
};

void npu_pb_init(struct npu_pb *pb);
void npu_pb_free(struct npu_pb *pb);
/* Append a zeroed instruction; NULL when out of memory (pb->oom). */
struct npu_hw_insn *npu_pb_add(struct npu_pb *pb, unsigned unit, unsigned opcode,
			       unsigned cluster_mask, unsigned tpb_mask);
/* Index of @in in the program (for relocations). */
uint32_t npu_pb_index(const struct npu_pb *pb, const struct npu_hw_insn *in);
/* Operand @slot of instruction @idx lives in DDR at (@seg, @offset). */
void npu_pb_ddr(struct npu_pb *pb, uint32_t idx, unsigned slot, uint32_t seg,
		uint64_t offset);
/*
 * Append a chain of @n GSDU descriptors (their next fields are set here);
 * @src_seg/@dst_seg give, per descriptor, the segment of a DDR src/dst
 * (ignored for other spaces), whose offset is in desc->src/dst.  Returns
 * the chain's offset in the chain area (for npu_pb_gsdu()).
 */
uint64_t npu_pb_chain(struct npu_pb *pb, const struct npu_hw_gsdu_desc *d,
		      const uint32_t *src_seg, const uint32_t *dst_seg, uint32_t n);
/*
 * Append a copy of instruction @idx of @src (no chain) with its
 * relocations; those targeting segment shift_seg[k] move by shift[k]
 * (NPU_PB_SELF: no shift).  NULL when out of memory.
 */
struct npu_hw_insn *npu_pb_copy(struct npu_pb *pb, const struct npu_pb *src, uint32_t idx,
				const uint32_t shift_seg[2], const uint64_t shift[2]);
/* Make CSU instruction @idx run the chain at @chain_off. */
void npu_pb_gsdu(struct npu_pb *pb, uint32_t idx, uint64_t chain_off);
/* Emit the program as a new PROGRAM segment and step of @cm, named @label. */
npu_status npu_pb_finish(struct npu_pb *pb, struct npu_cmodel *cm, const char *label);

#endif /* NPU_PB_H */
