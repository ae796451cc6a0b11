// SPDX-License-Identifier: MIT
/*
 * npu-core-demo: runs one small CNN block on the device core through a real
 * task queue and checks it against a plain C reference.
 *
 * DMA (DDR -> HBSM) -> TCU CONV2D 3x3 int8 + bias + requant + ReLU ->
 * CVU 2x2 max pool -> CSU GSDU (HBSM -> DDR), chained by SU counters.
 * Prints the result check, the simulated cycles and the perf counters.
 * This stands in for npu-run until libnpu exists.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_tdev.h"

enum { H = 32, W = 32, C = 16, OC = 32, K = 3, PH = H / 2, PW = W / 2 };

#define VA_X 0x20000000ull
#define VA_W 0x20100000ull
#define VA_B 0x20200000ull
#define VA_Y 0x20300000ull
#define VA_CHAIN 0x20400000ull

#define HB_X 0x00000
#define HB_W 0x10000
#define HB_B 0x20000
#define HB_C 0x30000
#define HB_P 0x50000

static const float scale = 1.0f / 64;

static void reference(const int8_t *x, const int8_t *w, const int32_t *b,
		      int8_t *out)
{
	static int8_t conv[H][W][OC];

	for (int y = 0; y < H; y++)
		for (int xx = 0; xx < W; xx++)
			for (int o = 0; o < OC; o++) {
				int32_t acc = b[o];

				for (int ky = 0; ky < K; ky++)
					for (int kx = 0; kx < K; kx++) {
						int iy = y + ky - 1, ix = xx + kx - 1;

						if (iy < 0 || iy >= H || ix < 0 || ix >= W)
							continue;
						for (int c = 0; c < C; c++)
							acc += x[(iy * W + ix) * C + c] *
							       w[((ky * K + kx) * C + c) * OC + o];
					}
				float v = fmaxf((float)acc * scale, 0.0f);
				float r = rintf(v);

				conv[y][xx][o] = (int8_t)(r > 127 ? 127 : r);
			}
	for (int y = 0; y < PH; y++)
		for (int xx = 0; xx < PW; xx++)
			for (int o = 0; o < OC; o++) {
				int8_t m = -128;

				for (int dy = 0; dy < 2; dy++)
					for (int dx = 0; dx < 2; dx++)
						if (conv[2 * y + dy][2 * xx + dx][o] > m)
							m = conv[2 * y + dy][2 * xx + dx][o];
				out[(y * PW + xx) * OC + o] = m;
			}
}

static void dma_in(struct npu_tprog *p, uint64_t va, uint32_t hb, uint32_t bytes)
{
	struct npu_hw_insn *in = npu_tprog_add(p, NPU_UNIT_DMA, NPU_DMA_COPY, 0, 0);
	uint32_t n = bytes;

	npu_twu_dense(&in->opnd[NPU_OPND_SRC0], NPU_SPACE_DDR, NPU_DT_INT8, va, 1, &n);
	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM_REMOTE, NPU_DT_INT8, hb, 1, &n);
	in->opnd[NPU_OPND_DST].cluster_mask = 1;
	in->opnd[NPU_OPND_DST].tpb_mask = 1;
	in->sync.signal[0] = (struct npu_hw_sync_signal){
		.counter = 0, .flags = NPU_SIGNAL_ENABLE | NPU_SIGNAL_REMOTE,
		.cluster_mask = 1, .tpb_mask = 1 };
}

static uint64_t rd64(struct npu_core *core, uint32_t off)
{
	uint64_t lo = npu_core_mmio_read(core, off);

	return lo | (uint64_t)npu_core_mmio_read(core, off + 4) << 32;
}

int main(void)
{
	struct npu_tdev *d = npu_tdev_create(NULL, 256);
	struct npu_hw_completion comp;
	struct npu_tprog p;
	struct npu_hw_insn *in;
	struct npu_tdev_submit opt = { 0 };
	int8_t *x, *w, *y, ref[PH * PW * OC];
	int32_t *b;
	struct npu_hw_gsdu_desc *g;
	unsigned mismatches = 0;
	int st;

	if (!d)
		return 1;
	opt.root = npu_tdev_ctx(d);
	x = npu_tdev_buf(d, opt.root, VA_X, H * W * C, false);
	w = npu_tdev_buf(d, opt.root, VA_W, K * K * C * OC, false);
	b = npu_tdev_buf(d, opt.root, VA_B, OC * 4, false);
	y = npu_tdev_buf(d, opt.root, VA_Y, PH * PW * OC, true);
	g = npu_tdev_buf(d, opt.root, VA_CHAIN, sizeof(*g), false);
	srand(1);
	for (int i = 0; i < H * W * C; i++)
		x[i] = (int8_t)(rand() % 256 - 128);
	for (int i = 0; i < K * K * C * OC; i++)
		w[i] = (int8_t)(rand() % 31 - 15);
	for (int i = 0; i < OC; i++)
		b[i] = rand() % 2001 - 1000;

	npu_tprog_init(&p);
	dma_in(&p, VA_X, HB_X, H * W * C);
	dma_in(&p, VA_W, HB_W, K * K * C * OC);
	dma_in(&p, VA_B, HB_B, OC * 4);

	in = npu_tprog_add(&p, NPU_UNIT_TCU, NPU_TCU_CONV2D, 1, 1);
	npu_twu_dense(&in->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, NPU_DT_INT8, HB_X, 3,
		      (uint32_t[]){ C, W, H });
	npu_twu_dense(&in->opnd[NPU_OPND_SRC1], NPU_SPACE_HBSM, NPU_DT_INT8, HB_W, 4,
		      (uint32_t[]){ OC, C, K, K });
	npu_twu_dense(&in->opnd[NPU_OPND_SRC2], NPU_SPACE_HBSM, NPU_DT_INT32, HB_B, 1,
		      (uint32_t[]){ OC });
	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_INT8, HB_C, 3,
		      (uint32_t[]){ OC, W, H });
	in->params.tcu.act = NPU_FN_RELU;
	in->params.tcu.flags = NPU_TCU_F_SCALE;
	in->params.tcu.out_scale = npu_f32_bits(scale);
	in->params.tcu.stride_h = in->params.tcu.stride_w = 1;
	in->params.tcu.dil_h = in->params.tcu.dil_w = 1;
	in->params.tcu.pad_top = in->params.tcu.pad_left = 1;
	in->params.tcu.pad_bottom = in->params.tcu.pad_right = 1;
	in->params.tcu.groups = 1;
	in->sync.wait[0] = (struct npu_hw_sync_wait){ .counter = 0, .flags = NPU_WAIT_ENABLE, .value = 3 };
	in->sync.signal[0] = (struct npu_hw_sync_signal){ .counter = 1, .flags = NPU_SIGNAL_ENABLE };

	in = npu_tprog_add(&p, NPU_UNIT_CVU, NPU_CVU_POOL, 1, 1);
	npu_twu_dense(&in->opnd[NPU_OPND_SRC0], NPU_SPACE_HBSM, NPU_DT_INT8, HB_C, 3,
		      (uint32_t[]){ OC, W, H });
	npu_twu_dense(&in->opnd[NPU_OPND_DST], NPU_SPACE_HBSM, NPU_DT_INT8, HB_P, 3,
		      (uint32_t[]){ OC, PW, PH });
	in->params.cvu.fn = NPU_POOL_MAX;
	in->params.cvu.kernel_h = in->params.cvu.kernel_w = 2;
	in->params.cvu.stride_h = in->params.cvu.stride_w = 2;
	in->params.cvu.dil_h = in->params.cvu.dil_w = 1;
	in->sync.wait[0] = (struct npu_hw_sync_wait){ .counter = 1, .flags = NPU_WAIT_ENABLE, .value = 1 };
	in->sync.signal[0] = (struct npu_hw_sync_signal){ .counter = 2, .flags = NPU_SIGNAL_ENABLE };

	g->src_space = NPU_SPACE_HBSM;
	g->dst_space = NPU_SPACE_DDR;
	g->row_bytes = PH * PW * OC;
	g->rows = 1;
	g->src = HB_P;
	g->dst = VA_Y;
	in = npu_tprog_add(&p, NPU_UNIT_CSU, NPU_CSU_GSDU, 1, 1);
	in->params.csu.chain_space = NPU_SPACE_DDR;
	in->params.csu.chain_addr = VA_CHAIN;
	in->sync.wait[0] = (struct npu_hw_sync_wait){ .counter = 2, .flags = NPU_WAIT_ENABLE, .value = 1 };

	st = npu_tdev_run(d, &p, &opt, &comp);
	reference(x, w, b, ref);
	for (int i = 0; i < PH * PW * OC; i++)
		mismatches += y[i] != ref[i];
	printf("M100 device core: conv3x3 %dx%dx%d->%d int8 + ReLU + maxpool 2x2\n",
	       H, W, C, OC);
	printf("  task status      : %s (insn %d, detail %u)\n",
	       npu_core_status_str(comp.status), (int)comp.insn_index, comp.detail);
	printf("  result           : %s (%u of %d outputs differ from the C reference)\n",
	       mismatches ? "MISMATCH" : "bit-exact", mismatches, PH * PW * OC);
	printf("  simulated cycles : %llu (%.2f us at %u MHz)\n",
	       (unsigned long long)comp.cycles,
	       comp.cycles / (double)npu_core_mmio_read(d->core, NPU_REG_CLOCK_MHZ),
	       npu_core_mmio_read(d->core, NPU_REG_CLOCK_MHZ));
	printf("  cluster 0 busy   : %llu cycles; TCU %llu, CVU %llu, CSU %llu\n",
	       (unsigned long long)rd64(d->core, NPU_REG_PERF_CLUSTER_BUSY(0)),
	       (unsigned long long)rd64(d->core, NPU_REG_PERF_UNIT_BUSY(0, NPU_PERF_UNIT_TCU)),
	       (unsigned long long)rd64(d->core, NPU_REG_PERF_UNIT_BUSY(0, NPU_PERF_UNIT_CVU)),
	       (unsigned long long)rd64(d->core, NPU_REG_PERF_UNIT_BUSY(0, NPU_PERF_UNIT_CSU)));
	printf("  DMA bytes        : %llu, GSDU bytes %llu, HBSM conflicts %llu\n",
	       (unsigned long long)rd64(d->core, NPU_REG_PERF_DMA_BYTES(0)),
	       (unsigned long long)rd64(d->core, NPU_REG_PERF_GSDU_BYTES),
	       (unsigned long long)rd64(d->core, NPU_REG_PERF_HBSM_CONFLICTS(0)));
	npu_tprog_free(&p);
	npu_tdev_destroy(d);
	return st == NPU_TASK_OK && !mismatches ? 0 : 1;
}
