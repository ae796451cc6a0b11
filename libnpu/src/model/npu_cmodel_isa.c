// SPDX-License-Identifier: MIT
/*
 * Which program version a compiled model's programs need.
 *
 * Program version minors add instruction features (npu_hw_isa.h); a device
 * reports the version it runs (NPU_REG_ISA_VERSION) and refuses features
 * it does not know as an illegal instruction, mid-model.  So before a
 * context is made, every instruction of every step is read and the
 * highest minor any of them needs is compared with the device's: a model
 * for a newer device is refused by name instead.  Reading the programs
 * (not a field of the model file) keeps .npum files of any age exact.
 *
 * A new ISA feature adds its codes here.  GSDU descriptors are not
 * instructions: a program keeps its chains after the instructions
 * (compile/npu_pb.c), and their flags are read there.
 */
#include <stdio.h>
#include <string.h>

#include "model/npu_cmodel.h"
#include "npu/npu_hw_isa.h"

/* The minor a CVU or TCU function code needs. */
static unsigned fn_minor(unsigned fn)
{
	if (fn == NPU_FN_MOD || fn == NPU_FN_FMOD)
		return 4;
	if ((fn >= NPU_FN_EQUAL && fn < NPU_FN_BINARY_END) ||
	    fn == NPU_FN_SILU || fn == NPU_FN_GELU_TANH ||
	    (fn >= NPU_FN_NOT && fn < NPU_FN_UNARY3_END))
		return 2;
	if (fn >= NPU_FN_SIN && fn <= NPU_FN_SIGN)
		return 1;
	return 0;
}

static unsigned max_u(unsigned a, unsigned b)
{
	return a > b ? a : b;
}

/* The minor instruction @in needs; *@what names the feature when > 0. */
static unsigned insn_minor(const struct npu_hw_insn *in, const char **what)
{
	const struct npu_hw_cvu_params *p = &in->params.cvu;
	unsigned m = 0, f;

	if (in->unit == NPU_UNIT_TCU) {
		m = fn_minor(in->params.tcu.act);
		*what = "a TCU activation function";
		return m;
	}
	if (in->unit != NPU_UNIT_CVU)
		return 0;
	switch (in->opcode) {
	case NPU_CVU_SELECT:
		*what = "CVU SELECT";
		return 2;
	case NPU_CVU_SCAN:
		*what = "CVU SCAN";
		return 2;
	case NPU_CVU_DEQUANT:	/* 1.3: quantised weights widened on the chip */
		*what = "CVU DEQUANT (quantised weights)";
		return 3;
	case NPU_CVU_UNARY:
	case NPU_CVU_BINARY:
		m = fn_minor(p->fn);
		*what = "a CVU function";
		/* 1.2 adds and multiplies INT32 exactly; 1.1 would round in fp32 */
		if (in->opcode == NPU_CVU_BINARY && in->opnd[NPU_OPND_SRC0].dtype == NPU_DT_INT32 &&
		    in->opnd[NPU_OPND_SRC1].dtype == NPU_DT_INT32 &&
		    in->opnd[NPU_OPND_DST].dtype == NPU_DT_INT32 && m < 2) {
			m = 2;
			*what = "int32 arithmetic";
		}
		break;
	case NPU_CVU_REDUCE:
		m = p->fn >= NPU_REDUCE_ARGMAX ? 2 : p->fn >= NPU_REDUCE_SUM_ABS ? 1 : 0;
		*what = "a CVU reduction";
		break;
	default:
		break;
	}
	for (unsigned s = 0; s < p->nstages && s < NPU_CVU_STAGES; s++) {
		f = fn_minor(p->stage[s].fn);
		if (f > m) {
			m = f;
			*what = "a CVU pipeline stage";
		}
	}
	if ((p->flags & (NPU_CVU_F_EXCLUSIVE | NPU_CVU_F_REVERSE)) && m < 2) {
		m = 2;
		*what = "a CVU scan or index flag";
	}
	if ((p->flags & NPU_CVU_F_RMS) && m < 2) {
		m = 2;
		*what = "CVU RMS norm";
	}
	return m;
}

/*
 * The minor the GSDU descriptors of one program need: its chain area, the
 * descriptors packed after the instructions (npu_pb_finish()).
 */
static unsigned chain_minor(const uint8_t *prog, uint64_t size, uint64_t chain_at)
{
	for (uint64_t at = chain_at; at + sizeof(struct npu_hw_gsdu_desc) <= size;
	     at += sizeof(struct npu_hw_gsdu_desc)) {
		struct npu_hw_gsdu_desc d;

		memcpy(&d, prog + at, sizeof(d));
		if (d.flags & NPU_GSDU_F_DST_INDEXED)
			return 3;
	}
	return 0;
}

unsigned npu_cmodel_isa_minor(const struct npu_cmodel *m, uint32_t *step, const char **what)
{
	unsigned need = 0;

	*step = 0;
	*what = NULL;
	for (uint32_t i = 0; i < m->nsteps; i++) {
		const struct npu_step *st = &m->steps[i];
		const struct npu_seg *sg = st->seg < m->nsegs ? &m->segs[st->seg] : NULL;
		struct npu_hw_prog h;

		if (!sg || !sg->data || st->offset > sg->size || st->size > sg->size - st->offset ||
		    st->size < sizeof(h))
			continue;
		memcpy(&h, sg->data + st->offset, sizeof(h));
		if (h.insn_offset > st->size ||
		    (uint64_t)h.insn_count * NPU_INSN_SIZE > st->size - h.insn_offset)
			continue;	/* the device refuses it anyway */
		for (uint32_t k = 0; k < h.insn_count; k++) {
			struct npu_hw_insn in;
			const char *w = NULL;
			unsigned v;

			memcpy(&in, sg->data + st->offset + h.insn_offset + (uint64_t)k * NPU_INSN_SIZE,
			       sizeof(in));
			v = insn_minor(&in, &w);
			if (v > need) {
				need = max_u(need, v);
				*step = i;
				*what = w;
			}
		}
		if (chain_minor(sg->data + st->offset, st->size,
				h.insn_offset + (uint64_t)h.insn_count * NPU_INSN_SIZE) > need) {
			need = 3;
			*step = i;
			*what = "GSDU row writes at run-time positions";
		}
	}
	return need;
}

npu_status npu_cmodel_check_isa(const struct npu_cmodel *m, uint32_t device_isa)
{
	uint32_t step;
	const char *what;
	unsigned need = npu_cmodel_isa_minor(m, &step, &what);
	const char *label = need && m->steps[step].label ? m->steps[step].label : "";

	if (!device_isa || (device_isa >> 16) != NPU_PROG_VERSION_MAJOR ||
	    need <= (device_isa & 0xffff))
		return NPU_OK;
	return npu_fail(NPU_ERR_VERSION,
			"the model needs NPU program version %u.%u (step %u%s%s%s uses %s), the device runs %u.%u: run it on a newer device, or update the device",
			NPU_PROG_VERSION_MAJOR, need, step + 1, *label ? " (" : "", label,
			*label ? ")" : "", what, device_isa >> 16, device_isa & 0xffff);
}
