// SPDX-License-Identifier: MIT
/*
 * Data movement on the host (issue 17): Identity, Reshape, Flatten,
 * Squeeze, Unsqueeze, Transpose, Concat, Slice, Gather, GatherND, Expand,
 * Shape and Size, computing on the actual shapes of their inputs.  They
 * run what follows an operator of run-time output size (NonZero,
 * NonMaxSuppression, Unique, Compress): a detector's post-processing
 * (Gather, Slice, Squeeze, Concat of the selected rows), boolean indexing
 * (NonZero, Transpose, GatherND).  Each sets its output's shape
 * (npu_host_shape()); shape-giving inputs (Reshape's shape, Slice's
 * starts ...) are read at run time, computed or constant alike.
 */
#include <string.h>

#include "host/npu_host.h"

const char *npu_host_move_accepts(const npu_ir_graph *g, const npu_ir_node *n)
{
	for (int i = 0; i < n->n_inputs; i++) {
		const npu_ir_tensor *t = npu_ir_input(g, n, i);

		if (t && (i ? !npu_host_dtype_ok(t->dtype) : !npu_dtype_size(t->dtype)))
			return "only float32, int64, int32, int8, uint8 and bool indices and shapes are";
	}
	if (!strcmp(n->op, "GatherND") && npu_ir_attr_find(n, "batch_dims")) {
		int64_t b = 0;

		npu_ir_attr_int(n, "batch_dims", 0, &b);
		if (b)
			return "only batch_dims 0 is";
	}
	return NULL;
}

static size_t esz(const struct npu_host_buf *b)
{
	return npu_dtype_size(b->dtype);
}

/* Input @i's values as int64 (an attribute's when @attr names one the node has), count in *@n. */
static npu_status ints_of(const struct npu_host_step *h, const struct npu_host_buf *in,
			  uint32_t i, const char *attr, int64_t *v, int cap, int *n)
{
	const struct npu_host_attr *a = attr ? npu_host_attr_find(h, attr) : NULL;

	*n = 0;
	if (a && a->type == NPU_IR_ATTR_INTS) {
		if (a->n > (uint32_t)cap)
			return npu_fail(NPU_ERR_SHAPE, "attribute '%s' has too many values", attr);
		for (uint32_t k = 0; k < a->n; k++)
			v[k] = a->ints[k];
		*n = (int)a->n;
		return NPU_OK;
	}
	if (i >= h->ninputs || !in[i].data)
		return NPU_OK;
	if (in[i].numel > (size_t)cap)
		return npu_fail(NPU_ERR_SHAPE, "input %u has %zu values, at most %d are taken", i,
				in[i].numel, cap);
	for (size_t k = 0; k < in[i].numel; k++)
		v[k] = npu_host_get_int(&in[i], k);
	*n = (int)in[i].numel;
	return NPU_OK;
}

/* Output 0 is input 0's bytes under shape @dims (Reshape-like). */
static npu_status as_shape(const struct npu_host_buf *in, struct npu_host_buf *out, int rank,
			   const int64_t *dims)
{
	npu_status st = npu_host_shape(&out[0], rank, dims);

	if (!st && out[0].numel != in[0].numel)
		return npu_fail(NPU_ERR_SHAPE, "%zu elements cannot take a shape of %zu",
				in[0].numel, out[0].numel);
	if (!st && out[0].data != in[0].data)
		memmove(out[0].data, in[0].data, in[0].numel * esz(&in[0]));
	return st;
}

static npu_status reshape(const struct npu_host_step *h, const struct npu_host_buf *in,
			  struct npu_host_buf *out)
{
	int64_t d[NPU_MAX_RANK], known = 1;
	int n, infer = -1;
	bool allowzero = npu_host_attr_int(h, "allowzero", 0) != 0;
	npu_status st = ints_of(h, in, 1, "shape", d, NPU_MAX_RANK, &n);

	for (int k = 0; !st && k < n; k++) {
		if (d[k] == 0 && !allowzero) {
			if (k >= in[0].rank)
				return npu_fail(NPU_ERR_SHAPE, "shape entry %d is 0 past the input's rank", k);
			d[k] = in[0].dims[k];
		}
		if (d[k] == -1 && infer < 0)
			infer = k;
		else if (d[k] < 0)
			return npu_fail(NPU_ERR_SHAPE, "shape entry %d is %lld", k, (long long)d[k]);
		else
			known *= d[k];
	}
	if (st)
		return st;
	if (infer >= 0)
		d[infer] = known ? (int64_t)in[0].numel / known : 0;
	return as_shape(in, out, n, d);
}

static npu_status flatten(const struct npu_host_step *h, const struct npu_host_buf *in,
			  struct npu_host_buf *out)
{
	int64_t axis = npu_host_attr_int(h, "axis", 1), d[2] = { 1, 1 };

	if (axis < 0)
		axis += in[0].rank;
	for (int k = 0; k < in[0].rank; k++)
		d[k >= axis] *= in[0].dims[k];
	return as_shape(in, out, 2, d);
}

static npu_status squeeze(const struct npu_host_step *h, const struct npu_host_buf *in,
			  struct npu_host_buf *out, bool un)
{
	int64_t ax[NPU_MAX_RANK], d[NPU_MAX_RANK];
	int n, r = in[0].rank, nr, k = 0;
	bool mark[NPU_MAX_RANK] = { false };
	npu_status st = ints_of(h, in, 1, "axes", ax, NPU_MAX_RANK, &n);

	if (st)
		return st;
	nr = un ? r + n : r;
	if (nr > NPU_MAX_RANK)
		return npu_fail(NPU_ERR_SHAPE, "the output would have rank %d", nr);
	for (int a = 0; a < n; a++) {
		int64_t x = ax[a] < 0 ? ax[a] + nr : ax[a];

		if (x < 0 || x >= nr || mark[x])
			return npu_fail(NPU_ERR_SHAPE, "axis %lld is outside rank %d or repeated",
					(long long)ax[a], nr);
		if (!un && in[0].dims[x] != 1)
			return npu_fail(NPU_ERR_SHAPE,
					"axis %lld has size %lld at run time, it cannot be squeezed",
					(long long)ax[a], (long long)in[0].dims[x]);
		mark[x] = true;
	}
	if (un) {
		for (int a = 0, s = 0; a < nr; a++)
			d[a] = mark[a] ? 1 : in[0].dims[s++];
		return as_shape(in, out, nr, d);
	}
	for (int a = 0; a < r; a++)
		if (n ? !mark[a] : in[0].dims[a] != 1)
			d[k++] = in[0].dims[a];
	return as_shape(in, out, k, d);
}

/* Row-major strides of @b. */
static void strides(const struct npu_host_buf *b, size_t *s)
{
	size_t acc = 1;

	for (int d = b->rank - 1; d >= 0; d--) {
		s[d] = acc;
		acc *= (size_t)b->dims[d];
	}
}

static npu_status transpose(const struct npu_host_step *h, const struct npu_host_buf *in,
			    struct npu_host_buf *out)
{
	int64_t perm[NPU_MAX_RANK], d[NPU_MAX_RANK];
	size_t s[NPU_MAX_RANK], es = esz(&in[0]);
	int n, r = in[0].rank;
	npu_status st = ints_of(h, in, 99, "perm", perm, NPU_MAX_RANK, &n);

	if (!st && !n)
		for (n = 0; n < r; n++)
			perm[n] = r - 1 - n;
	if (!st && n != r)
		return npu_fail(NPU_ERR_SHAPE, "perm has %d entries for rank %d", n, r);
	for (int k = 0; !st && k < r; k++) {
		if (perm[k] < 0 || perm[k] >= r)
			return npu_fail(NPU_ERR_SHAPE, "perm entry %d is %lld", k, (long long)perm[k]);
		d[k] = in[0].dims[perm[k]];
	}
	if (!st)
		st = npu_host_shape(&out[0], r, d);
	if (st)
		return st;
	strides(&in[0], s);
	for (size_t i = 0; i < out[0].numel; i++) {
		size_t rest = i, src = 0;

		for (int k = r - 1; k >= 0; k--) {
			src += (rest % (size_t)d[k]) * s[perm[k]];
			rest /= (size_t)d[k];
		}
		memcpy((uint8_t *)out[0].data + i * es, (const uint8_t *)in[0].data + src * es, es);
	}
	return NPU_OK;
}

static npu_status concat(const struct npu_host_step *h, const struct npu_host_buf *in,
			 struct npu_host_buf *out)
{
	int r = in[0].rank;
	int64_t axis = npu_host_attr_int(h, "axis", 0), d[NPU_MAX_RANK], outer = 1, inner = 1;
	size_t es = esz(&in[0]);
	uint8_t *o = out[0].data;
	npu_status st;

	if (axis < 0)
		axis += r;
	if (axis < 0 || axis >= r)
		return npu_fail(NPU_ERR_SHAPE, "axis %lld is outside rank %d",
				(long long)npu_host_attr_int(h, "axis", 0), r);
	memcpy(d, in[0].dims, sizeof(d));
	d[axis] = 0;
	for (uint32_t i = 0; i < h->ninputs; i++) {
		for (int k = 0; k < r; k++)
			if (in[i].rank != r || (k != axis && in[i].dims[k] != d[k]))
				return npu_fail(NPU_ERR_SHAPE,
						"input %u's shape does not match input 0's but along axis %lld at run time",
						i, (long long)axis);
		d[axis] += in[i].dims[axis];
	}
	if ((st = npu_host_shape(&out[0], r, d)))
		return st;
	for (int k = 0; k < r; k++) {
		if (k < axis)
			outer *= d[k];
		else if (k > axis)
			inner *= d[k];
	}
	for (int64_t b = 0; b < outer; b++)
		for (uint32_t i = 0; i < h->ninputs; i++) {
			size_t n = (size_t)(in[i].dims[axis] * inner) * es;

			memcpy(o, (const uint8_t *)in[i].data + (size_t)b * n, n);
			o += n;
		}
	return NPU_OK;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static npu_status slice(const struct npu_host_step *h, const struct npu_host_buf *in,
			struct npu_host_buf *out)
{
	int64_t st_[NPU_MAX_RANK], en[NPU_MAX_RANK], ax[NPU_MAX_RANK], sp[NPU_MAX_RANK];
	int64_t start[NPU_MAX_RANK], step[NPU_MAX_RANK], d[NPU_MAX_RANK];
	int ns, ne, na, nsp, r = in[0].rank;
	size_t s[NPU_MAX_RANK], es = esz(&in[0]);
	bool attrs = h->opset < 10;
	npu_status st = ints_of(h, in, attrs ? 99 : 1, attrs ? "starts" : NULL, st_, NPU_MAX_RANK, &ns);

	if (!st)
		st = ints_of(h, in, attrs ? 99 : 2, attrs ? "ends" : NULL, en, NPU_MAX_RANK, &ne);
	if (!st)
		st = ints_of(h, in, attrs ? 99 : 3, attrs ? "axes" : NULL, ax, NPU_MAX_RANK, &na);
	if (!st)
		st = ints_of(h, in, attrs ? 99 : 4, NULL, sp, NPU_MAX_RANK, &nsp);
	if (st)
		return st;
	if (ns != ne || (na && na != ns) || (nsp && nsp != ns))
		return npu_fail(NPU_ERR_SHAPE, "starts, ends, axes and steps differ in length");
	for (int k = 0; k < r; k++) {
		start[k] = 0;
		step[k] = 1;
		d[k] = in[0].dims[k];
	}
	for (int k = 0; k < ns; k++) {
		int64_t a = na ? ax[k] : k, dim, b, e, stp = nsp ? sp[k] : 1;

		if (a < 0)
			a += r;
		if (a < 0 || a >= r || !stp)
			return npu_fail(NPU_ERR_SHAPE, "axis %lld or step 0 is bad", (long long)a);
		dim = in[0].dims[a];
		b = st_[k] < 0 ? st_[k] + dim : st_[k];
		e = en[k] < 0 ? en[k] + dim : en[k];
		if (stp > 0) {
			b = clamp64(b, 0, dim);
			e = clamp64(e, 0, dim);
			d[a] = e > b ? (e - b + stp - 1) / stp : 0;
		} else {
			b = clamp64(b, -1, dim - 1);
			e = clamp64(e, -1, dim - 1);
			d[a] = b > e ? (b - e - stp - 1) / -stp : 0;
		}
		start[a] = b;
		step[a] = stp;
	}
	if ((st = npu_host_shape(&out[0], r, d)))
		return st;
	strides(&in[0], s);
	for (size_t i = 0; i < out[0].numel; i++) {
		size_t rest = i;
		int64_t src = 0;

		for (int k = r - 1; k >= 0; k--) {
			src += (start[k] + (int64_t)(rest % (size_t)d[k]) * step[k]) * (int64_t)s[k];
			rest /= (size_t)d[k];
		}
		memcpy((uint8_t *)out[0].data + i * es, (const uint8_t *)in[0].data + src * (int64_t)es, es);
	}
	return NPU_OK;
}

static npu_status gather(const struct npu_host_step *h, const struct npu_host_buf *in,
			 struct npu_host_buf *out)
{
	const struct npu_host_buf *x = &in[0], *ix = &in[1];
	int64_t axis = npu_host_attr_int(h, "axis", 0), d[NPU_MAX_RANK], outer = 1, inner = 1, len;
	size_t es = esz(x);
	int r = 0;
	npu_status st;

	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis >= x->rank || x->rank - 1 + ix->rank > NPU_MAX_RANK)
		return npu_fail(NPU_ERR_SHAPE, "axis %lld is outside rank %d",
				(long long)npu_host_attr_int(h, "axis", 0), x->rank);
	for (int k = 0; k < x->rank; k++) {
		if (k == axis)
			for (int j = 0; j < ix->rank; j++)
				d[r++] = ix->dims[j];
		else
			d[r++] = x->dims[k];
		if (k < axis)
			outer *= x->dims[k];
		else if (k > axis)
			inner *= x->dims[k];
	}
	len = x->dims[axis];
	if ((st = npu_host_shape(&out[0], r, d)))
		return st;
	for (int64_t b = 0; b < outer; b++)
		for (size_t j = 0; j < ix->numel; j++) {
			int64_t at = npu_host_get_int(ix, j);

			if (at < 0)
				at += len;
			if (at < 0 || at >= len)
				return npu_fail(NPU_ERR_SHAPE, "index %lld is outside 0..%lld at run time",
						(long long)npu_host_get(ix, j), (long long)len - 1);
			memcpy((uint8_t *)out[0].data + (size_t)((b * (int64_t)ix->numel + (int64_t)j) * inner) * es,
			       (const uint8_t *)x->data + (size_t)((b * len + at) * inner) * es,
			       (size_t)inner * es);
		}
	return NPU_OK;
}

/* GatherND, batch_dims 0: each index tuple (the last dim of indices) picks a slice of data. */
static npu_status gather_nd(const struct npu_host_step *h, const struct npu_host_buf *in,
			    struct npu_host_buf *out)
{
	const struct npu_host_buf *x = &in[0], *ix = &in[1];
	int64_t q = ix->rank ? ix->dims[ix->rank - 1] : 0, d[NPU_MAX_RANK], inner = 1, n;
	size_t s[NPU_MAX_RANK], es = esz(x);
	int r = 0;
	npu_status st;

	(void)h;
	if (!ix->rank || q > x->rank || ix->rank - 1 + x->rank - q > NPU_MAX_RANK)
		return npu_fail(NPU_ERR_SHAPE, "indices' last dim %lld exceeds the data's rank %d",
				(long long)q, x->rank);
	for (int k = 0; k < ix->rank - 1; k++)
		d[r++] = ix->dims[k];
	for (int k = (int)q; k < x->rank; k++) {
		d[r++] = x->dims[k];
		inner *= x->dims[k];
	}
	if ((st = npu_host_shape(&out[0], r, d)))
		return st;
	strides(x, s);
	n = q ? (int64_t)ix->numel / q : 0;
	for (int64_t t = 0; t < n; t++) {
		size_t src = 0;

		for (int64_t k = 0; k < q; k++) {
			int64_t v = npu_host_get_int(ix, (size_t)(t * q + k));

			if (v < 0)
				v += x->dims[k];
			if (v < 0 || v >= x->dims[k])
				return npu_fail(NPU_ERR_SHAPE, "index %lld is outside dim %lld of size %lld",
						(long long)v, (long long)k, (long long)x->dims[k]);
			src += (size_t)v * s[k];
		}
		memcpy((uint8_t *)out[0].data + (size_t)(t * inner) * es,
		       (const uint8_t *)x->data + src * es, (size_t)inner * es);
	}
	return NPU_OK;
}

static npu_status expand(const struct npu_host_step *h, const struct npu_host_buf *in,
			 struct npu_host_buf *out)
{
	int64_t sh[NPU_MAX_RANK], d[NPU_MAX_RANK];
	int n, r;
	size_t es = esz(&in[0]);
	npu_status st = ints_of(h, in, 1, NULL, sh, NPU_MAX_RANK, &n);

	if (st)
		return st;
	r = n > in[0].rank ? n : in[0].rank;
	for (int k = 0; k < r; k++) {
		int64_t a = k - (r - in[0].rank) >= 0 ? in[0].dims[k - (r - in[0].rank)] : 1;
		int64_t b = k - (r - n) >= 0 ? sh[k - (r - n)] : 1;

		if (a != b && a != 1 && b != 1)
			return npu_fail(NPU_ERR_SHAPE, "shape %lld does not broadcast with %lld on axis %d",
					(long long)b, (long long)a, k);
		d[k] = a == 1 ? b : a;
	}
	if ((st = npu_host_shape(&out[0], r, d)))
		return st;
	for (size_t i = 0; i < out[0].numel; i++)
		memcpy((uint8_t *)out[0].data + i * es,
		       (const uint8_t *)in[0].data + npu_host_bcast(&in[0], &out[0], i) * es, es);
	return NPU_OK;
}

static npu_status shape_of(const struct npu_host_step *h, const struct npu_host_buf *in,
			   struct npu_host_buf *out, bool size)
{
	int64_t r = in[0].rank, b = npu_host_attr_int(h, "start", 0), e = npu_host_attr_int(h, "end", r);
	int64_t n;
	npu_status st;

	if (size) {
		if ((st = npu_host_shape(&out[0], 0, NULL)))
			return st;
		npu_host_set(&out[0], 0, (double)in[0].numel);
		return NPU_OK;
	}
	b = clamp64(b < 0 ? b + r : b, 0, r);
	e = clamp64(e < 0 ? e + r : e, 0, r);
	n = e > b ? e - b : 0;
	if ((st = npu_host_shape(&out[0], 1, &n)))
		return st;
	for (int64_t k = 0; k < n; k++)
		npu_host_set(&out[0], (size_t)k, (double)in[0].dims[b + k]);
	return NPU_OK;
}

npu_status npu_host_move(const struct npu_host_step *h, const struct npu_host_buf *in,
			 struct npu_host_buf *out)
{
	const char *op = h->op;

	if (!strcmp(op, "Identity"))
		return as_shape(in, out, in[0].rank, in[0].dims);
	if (!strcmp(op, "Reshape"))
		return reshape(h, in, out);
	if (!strcmp(op, "Flatten"))
		return flatten(h, in, out);
	if (!strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze"))
		return squeeze(h, in, out, op[0] == 'U');
	if (!strcmp(op, "Transpose"))
		return transpose(h, in, out);
	if (!strcmp(op, "Concat"))
		return concat(h, in, out);
	if (!strcmp(op, "Slice"))
		return slice(h, in, out);
	if (!strcmp(op, "Gather"))
		return gather(h, in, out);
	if (!strcmp(op, "GatherND"))
		return gather_nd(h, in, out);
	if (!strcmp(op, "Expand"))
		return expand(h, in, out);
	if (!strcmp(op, "Shape") || !strcmp(op, "Size"))
		return shape_of(h, in, out, op[1] == 'i');
	return npu_fail(NPU_ERR_INTERNAL, "no host data movement '%s'", op);
}
