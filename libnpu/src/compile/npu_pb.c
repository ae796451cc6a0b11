// SPDX-License-Identifier: MIT
/*
 * Program builder (see npu_pb.h).  Layout of the emitted segment:
 * header (64 bytes), instructions (512 each), chain area (64-aligned).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_pb.h"

void npu_pb_init(struct npu_pb *pb)
{
	memset(pb, 0, sizeof(*pb));
}

void npu_pb_free(struct npu_pb *pb)
{
	free(pb->insns);
	free(pb->chain);
	free(pb->relocs);
	memset(pb, 0, sizeof(*pb));
}

static bool reserve(void **arr, uint32_t *cap, uint32_t need, size_t size)
{
	uint32_t c = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return true;
	while (c < need)
		c *= 2;
	p = realloc(*arr, (size_t)c * size);
	if (!p)
		return false;
	*arr = p;
	*cap = c;
	return true;
}

struct npu_hw_insn *npu_pb_add(struct npu_pb *pb, unsigned unit, unsigned opcode,
			       unsigned cluster_mask, unsigned tpb_mask)
{
	struct npu_hw_insn *in;

	if (pb->oom || !reserve((void **)&pb->insns, &pb->cap, pb->n + 1, sizeof(*in))) {
		pb->oom = true;
		return NULL;
	}
	in = &pb->insns[pb->n++];
	memset(in, 0, sizeof(*in));
	in->unit = (uint8_t)unit;
	in->opcode = (uint8_t)opcode;
	in->cluster_mask = (uint16_t)cluster_mask;
	in->tpb_mask = (uint8_t)tpb_mask;
	return in;
}

uint32_t npu_pb_index(const struct npu_pb *pb, const struct npu_hw_insn *in)
{
	return (uint32_t)(in - pb->insns);
}

static void add_reloc(struct npu_pb *pb, bool in_chain, uint64_t field,
		      uint32_t target, uint64_t addend)
{
	if (pb->oom || !reserve((void **)&pb->relocs, &pb->cap_relocs, pb->nrelocs + 1,
				sizeof(*pb->relocs))) {
		pb->oom = true;
		return;
	}
	pb->relocs[pb->nrelocs++] = (struct npu_pb_reloc){ in_chain, field, target, addend };
}

void npu_pb_ddr(struct npu_pb *pb, uint32_t idx, unsigned slot, uint32_t seg,
		uint64_t offset)
{
	uint64_t field = (uint64_t)idx * sizeof(struct npu_hw_insn) +
			 offsetof(struct npu_hw_insn, opnd) +
			 slot * sizeof(struct npu_hw_twu) + offsetof(struct npu_hw_twu, base);

	pb->insns[idx].opnd[slot].base = 0;	/* the relocation writes it */
	add_reloc(pb, false, field, seg, offset);
}

struct npu_hw_insn *npu_pb_copy(struct npu_pb *pb, const struct npu_pb *src, uint32_t idx,
				const uint32_t shift_seg[2], const uint64_t shift[2])
{
	const uint64_t isz = sizeof(struct npu_hw_insn);
	struct npu_hw_insn *in;
	uint32_t at;

	in = npu_pb_add(pb, 0, 0, 0, 0);
	if (!in)
		return NULL;
	*in = src->insns[idx];
	at = pb->n - 1;
	for (uint32_t i = 0; i < src->nrelocs; i++) {
		const struct npu_pb_reloc *r = &src->relocs[i];
		uint64_t addend = r->addend;

		if (r->in_chain || r->field / isz != idx)
			continue;
		for (unsigned k = 0; k < 2; k++)
			if (shift_seg[k] != NPU_PB_SELF && r->target == shift_seg[k])
				addend += shift[k];
		add_reloc(pb, false, (uint64_t)at * isz + r->field % isz, r->target, addend);
	}
	return pb->oom ? NULL : &pb->insns[at];
}

uint64_t npu_pb_chain(struct npu_pb *pb, const struct npu_hw_gsdu_desc *d,
		      const uint32_t *src_seg, const uint32_t *dst_seg, uint32_t n)
{
	size_t start = pb->chain_len, need = start + (size_t)n * sizeof(*d);

	if (pb->oom)
		return 0;
	if (need > pb->chain_cap) {
		size_t cap = pb->chain_cap ? pb->chain_cap : 4096;
		uint8_t *p;

		while (cap < need)
			cap *= 2;
		p = realloc(pb->chain, cap);
		if (!p) {
			pb->oom = true;
			return 0;
		}
		pb->chain = p;
		pb->chain_cap = cap;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct npu_hw_gsdu_desc *o = (struct npu_hw_gsdu_desc *)(pb->chain + start) + i;
		uint64_t at = start + (uint64_t)i * sizeof(*o);

		*o = d[i];
		if (d[i].src_space == NPU_SPACE_DDR) {
			o->src = 0;
			add_reloc(pb, true, at + offsetof(struct npu_hw_gsdu_desc, src),
				  src_seg[i], d[i].src);
		}
		if (d[i].dst_space == NPU_SPACE_DDR) {
			o->dst = 0;
			add_reloc(pb, true, at + offsetof(struct npu_hw_gsdu_desc, dst),
				  dst_seg[i], d[i].dst);
		}
		o->next = 0;
		if (i + 1 < n)
			add_reloc(pb, true, at + offsetof(struct npu_hw_gsdu_desc, next),
				  NPU_PB_SELF, at + sizeof(*o));	/* fixed up in finish */
	}
	pb->chain_len = need;
	return start;
}

void npu_pb_gsdu(struct npu_pb *pb, uint32_t idx, uint64_t chain_off)
{
	uint64_t field = (uint64_t)idx * sizeof(struct npu_hw_insn) +
			 offsetof(struct npu_hw_insn, params) +
			 offsetof(struct npu_hw_csu_params, chain_addr);

	pb->insns[idx].params.csu.chain_space = NPU_SPACE_DDR;
	/* Chain offsets are relative to the chain area: marked by in_chain
	 * targets, resolved in npu_pb_finish(). */
	add_reloc(pb, false, field, NPU_PB_SELF, chain_off | (1ull << 63));
}

npu_status npu_pb_finish(struct npu_pb *pb, struct npu_cmodel *cm, const char *label)
{
	uint64_t insn_bytes = (uint64_t)pb->n * sizeof(struct npu_hw_insn);
	uint64_t chain_at = sizeof(struct npu_hw_prog) + insn_bytes;
	uint64_t size = chain_at + pb->chain_len;
	uint32_t seg = cm->nsegs;
	struct npu_hw_prog *hdr;
	struct npu_seg *segs;
	struct npu_reloc *relocs;
	struct npu_step *steps;
	uint8_t *data;
	char *lab;

	if (pb->oom)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory building a program");
	if (pb->n > NPU_PROG_MAX_INSNS)
		return npu_fail(NPU_ERR_INTERNAL, "program of %u instructions is too long", pb->n);
	data = calloc(1, size);
	lab = label ? strdup(label) : NULL;
	segs = realloc(cm->segs, (cm->nsegs + 1) * sizeof(*segs));
	if (segs)
		cm->segs = segs;
	relocs = realloc(cm->relocs, (cm->nrelocs + pb->nrelocs + 1) * sizeof(*relocs));
	if (relocs)
		cm->relocs = relocs;
	steps = realloc(cm->steps, (cm->nsteps + 1) * sizeof(*steps));
	if (steps)
		cm->steps = steps;
	if (!data || !segs || !relocs || !steps || (label && !lab)) {
		free(data);
		free(lab);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory building a program");
	}
	hdr = (struct npu_hw_prog *)data;
	hdr->magic = NPU_PROG_MAGIC;
	hdr->version_major = NPU_PROG_VERSION_MAJOR;
	hdr->version_minor = NPU_PROG_VERSION_MINOR;
	hdr->insn_count = pb->n;
	hdr->insn_offset = sizeof(*hdr);
	memcpy(data + sizeof(*hdr), pb->insns, insn_bytes);
	if (pb->chain_len)
		memcpy(data + chain_at, pb->chain, pb->chain_len);

	for (uint32_t i = 0; i < pb->nrelocs; i++) {
		const struct npu_pb_reloc *r = &pb->relocs[i];
		struct npu_reloc *o = &cm->relocs[cm->nrelocs++];
		uint64_t addend = r->addend;

		o->seg = seg;
		o->offset = (r->in_chain ? chain_at : sizeof(*hdr)) + r->field;
		o->target = r->target == NPU_PB_SELF ? seg : r->target;
		if (r->target == NPU_PB_SELF)
			/* chain_addr (bit 63 marker) and next fields: chain area. */
			addend = chain_at + (addend & ~(1ull << 63));
		o->addend = addend;
	}
	cm->segs[seg] = (struct npu_seg){ .kind = NPU_SEG_PROGRAM, .size = size, .data = data };
	cm->nsegs++;
	cm->steps[cm->nsteps++] = (struct npu_step){ .seg = seg, .offset = 0,
						     .size = (uint32_t)size, .label = lab };
	return NPU_OK;
}
