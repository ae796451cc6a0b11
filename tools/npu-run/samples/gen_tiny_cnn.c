// SPDX-License-Identifier: MIT
/*
 * Writes tiny-cnn.onnx, the sample model `make run` runs: a 10-class
 * classifier on 1x3x32x32 images (conv-bn-relu, depthwise conv, pooling,
 * a residual add, global pooling, gemm, softmax) with fixed pseudo-random
 * weights.  Regenerate with `make tools/npu-run/samples/tiny-cnn.onnx`
 * after deleting it; the file is checked in so a fresh clone has it.
 *
 * Usage: gen_tiny_cnn OUT.onnx
 */
#include <stdio.h>
#include <stdlib.h>

#include "onnx_build.h"

#define D(...) ((const int64_t[]){ __VA_ARGS__ })

static void fill(float *v, size_t n, unsigned seed, float scale)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = scale * ((float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f);
	}
}

int main(int argc, char **argv)
{
	static float w1[16 * 3 * 9], b1[16], g[16], be[16], mu[16], var[16];
	static float dw[16 * 9], w2[32 * 16], b2[32], fc[10 * 32], fb[10];
	onnxb *b;
	Onnx__NodeProto *n;
	uint8_t *buf;
	size_t len;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUT.onnx\n", argv[0]);
		return 2;
	}
	fill(w1, sizeof(w1) / 4, 1, 0.3f);
	fill(b1, 16, 2, 0.1f);
	fill(g, 16, 3, 0.2f);
	for (int i = 0; i < 16; i++) {
		g[i] += 1.0f;
		var[i] = 0.5f + 0.01f * (float)i;
	}
	fill(be, 16, 4, 0.1f);
	fill(mu, 16, 5, 0.1f);
	fill(dw, sizeof(dw) / 4, 6, 0.3f);
	fill(w2, sizeof(w2) / 4, 7, 0.2f);
	fill(b2, 32, 8, 0.1f);
	fill(fc, sizeof(fc) / 4, 9, 0.3f);
	fill(fb, 10, 10, 0.1f);

	b = onnxb_new(8, 13);
	onnxb_input(b, "image", ONNXB_F32, 4, D(1, 3, 32, 32));
	onnxb_init_f32(b, "w1", 4, D(16, 3, 3, 3), w1);
	onnxb_init_f32(b, "b1", 1, D(16), b1);
	onnxb_init_f32(b, "bn_g", 1, D(16), g);
	onnxb_init_f32(b, "bn_b", 1, D(16), be);
	onnxb_init_f32(b, "bn_m", 1, D(16), mu);
	onnxb_init_f32(b, "bn_v", 1, D(16), var);
	onnxb_init_f32(b, "dw", 4, D(16, 1, 3, 3), dw);
	onnxb_init_f32(b, "w2", 4, D(32, 16, 1, 1), w2);
	onnxb_init_f32(b, "b2", 1, D(32), b2);
	onnxb_init_f32(b, "fc_w", 2, D(10, 32), fc);
	onnxb_init_f32(b, "fc_b", 1, D(10), fb);

	n = onnxb_node(b, "Conv", "conv1", "image,w1,b1", "c1");
	onnxb_attr_ints(b, n, "pads", 4, D(1, 1, 1, 1));
	onnxb_attr_ints(b, n, "strides", 2, D(2, 2));
	onnxb_node(b, "BatchNormalization", "bn1", "c1,bn_g,bn_b,bn_m,bn_v", "n1");
	onnxb_node(b, "Relu", "relu1", "n1", "r1");
	n = onnxb_node(b, "Conv", "dwconv", "r1,dw", "d1");
	onnxb_attr_ints(b, n, "pads", 4, D(1, 1, 1, 1));
	onnxb_attr_i(b, n, "group", 16);
	onnxb_node(b, "Add", "residual", "d1,r1", "a1");
	n = onnxb_node(b, "MaxPool", "pool", "a1", "p1");
	onnxb_attr_ints(b, n, "kernel_shape", 2, D(2, 2));
	onnxb_attr_ints(b, n, "strides", 2, D(2, 2));
	onnxb_node(b, "Conv", "conv2", "p1,w2,b2", "c2");
	onnxb_node(b, "Relu", "relu2", "c2", "r2");
	onnxb_node(b, "GlobalAveragePool", "gap", "r2", "gp");
	onnxb_node(b, "Flatten", "flatten", "gp", "fl");
	n = onnxb_node(b, "Gemm", "fc", "fl,fc_w,fc_b", "logits");
	onnxb_attr_i(b, n, "transB", 1);
	onnxb_node(b, "Softmax", "softmax", "logits", "probabilities");
	onnxb_output(b, "probabilities", ONNXB_F32, 2, D(1, 10));

	buf = onnxb_pack(b, &len);
	onnxb_free(b);
	f = fopen(argv[1], "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		perror(argv[1]);
		free(buf);
		return 1;
	}
	free(buf);
	return 0;
}
