// SPDX-License-Identifier: MIT
/*
 * NonMaxSuppression on the host (issue 17), as ONNX defines it: per batch
 * and class, the boxes whose score is above score_threshold, best first
 * (equal scores: the lower box index first), each kept unless its IoU
 * with a box kept before is above iou_threshold, at most
 * max_output_boxes_per_class of them (0 or omitted: none).  Boxes are
 * [y1, x1, y2, x2] corners in either order (center_point_box 0) or
 * [x_center, y_center, width, height] (1).  The output, rows [batch,
 * class, box] in that order, has as many rows as boxes survive: known
 * only at run time, within the bound the compiler gave its buffer.
 */
#include <math.h>
#include <stdlib.h>

#include "host/npu_host.h"

const char *npu_host_nms_accepts(const npu_ir_graph *g, const npu_ir_node *n)
{
	const npu_ir_tensor *b = npu_ir_input(g, n, 0), *s = npu_ir_input(g, n, 1);

	if (!b || !s || b->dtype != NPU_DTYPE_FLOAT32 || s->dtype != NPU_DTYPE_FLOAT32)
		return "only float32 boxes and scores are";
	return NULL;
}

struct nms_box {
	float y1, x1, y2, x2;
};

/* Box @i of batch @b as sorted corners. */
static struct nms_box corners(const float *p, bool center)
{
	struct nms_box r;

	if (center) {
		r.x1 = p[0] - p[2] / 2;
		r.x2 = p[0] + p[2] / 2;
		r.y1 = p[1] - p[3] / 2;
		r.y2 = p[1] + p[3] / 2;
	} else {
		r.y1 = fminf(p[0], p[2]);
		r.y2 = fmaxf(p[0], p[2]);
		r.x1 = fminf(p[1], p[3]);
		r.x2 = fmaxf(p[1], p[3]);
	}
	return r;
}

/* Whether @a and @b overlap more than @thr (no overlap or an empty box: no). */
static bool suppresses(const struct nms_box *a, const struct nms_box *b, float thr)
{
	float iw = fminf(a->x2, b->x2) - fmaxf(a->x1, b->x1);
	float ih = fminf(a->y2, b->y2) - fmaxf(a->y1, b->y1);
	float inter, a1, a2, uni;

	if (iw <= 0 || ih <= 0)
		return false;
	inter = iw * ih;
	a1 = (a->x2 - a->x1) * (a->y2 - a->y1);
	a2 = (b->x2 - b->x1) * (b->y2 - b->y1);
	uni = a1 + a2 - inter;
	if (a1 <= 0 || a2 <= 0 || uni <= 0)
		return false;
	return inter / uni > thr;
}

struct nms_cand {
	float score;
	int64_t box;
};

static int by_score(const void *pa, const void *pb)
{
	const struct nms_cand *a = pa, *b = pb;

	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	return a->box < b->box ? -1 : a->box > b->box;
}

/* Optional input @i is there and holds a value. */
static bool given(const struct npu_host_step *h, const struct npu_host_buf *in, uint32_t i)
{
	return i < h->ninputs && in[i].data && in[i].numel;
}

npu_status npu_host_nms(const struct npu_host_step *h, const struct npu_host_buf *in,
			struct npu_host_buf *out)
{
	const struct npu_host_buf *bx = &in[0], *sc = &in[1];
	int64_t nb = bx->dims[0], nbox = bx->dims[1], ncls = sc->dims[1], rows = 0, dims[2];
	int64_t maxout = given(h, in, 2) ? (int64_t)npu_host_get(&in[2], 0) : 0;
	float iou = given(h, in, 3) ? (float)npu_host_get(&in[3], 0) : 0;
	bool has_thr = given(h, in, 4);
	float thr = has_thr ? (float)npu_host_get(&in[4], 0) : 0;
	bool center = npu_host_attr_int(h, "center_point_box", 0) != 0;
	struct nms_cand *cand = malloc((size_t)(nbox ? nbox : 1) * sizeof(*cand));
	struct nms_box *kept = malloc((size_t)(nbox ? nbox : 1) * sizeof(*kept));
	npu_status st = NPU_OK;

	if (!cand || !kept) {
		free(cand);
		free(kept);
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory");
	}
	if (maxout > nbox)
		maxout = nbox;
	/* Two passes: count the rows (the output's shape), then write them. */
	for (int pass = 0; pass < 2 && !st; pass++) {
		int64_t r = 0;

		for (int64_t b = 0; b < nb; b++)
			for (int64_t c = 0; c < ncls; c++) {
				const float *s = (const float *)sc->data + (b * ncls + c) * nbox;
				const float *p = (const float *)bx->data + b * nbox * 4;
				int64_t nc = 0, nk = 0;

				for (int64_t i = 0; i < nbox; i++)
					if (!has_thr || s[i] > thr)
						cand[nc++] = (struct nms_cand){ s[i], i };
				qsort(cand, (size_t)nc, sizeof(*cand), by_score);
				for (int64_t i = 0; i < nc && nk < maxout; i++) {
					struct nms_box q = corners(p + cand[i].box * 4, center);
					bool drop = false;

					for (int64_t k = 0; k < nk && !drop; k++)
						drop = suppresses(&kept[k], &q, iou);
					if (drop)
						continue;
					kept[nk++] = q;
					if (pass) {
						npu_host_set(&out[0], (size_t)(r * 3), (double)b);
						npu_host_set(&out[0], (size_t)(r * 3 + 1), (double)c);
						npu_host_set(&out[0], (size_t)(r * 3 + 2), (double)cand[i].box);
					}
					r++;
				}
			}
		if (!pass) {
			rows = r;
			dims[0] = rows;
			dims[1] = 3;
			st = npu_host_shape(&out[0], 2, dims);
		}
	}
	free(cand);
	free(kept);
	return st;
}
