// SPDX-License-Identifier: MIT
/*
 * ONNX external data: models whose weights live in side files next to the
 * .onnx file, written into a temp folder by the test.  A MatMul + Gemm
 * model (with a Constant node's value external too) compiles and runs to
 * the same output bytes as the same model with its weights inline; one
 * side file holds every tensor at its own offset and is mapped once; the
 * IR points into the mapping (no copy) where the offset is aligned; every
 * refusal (location absolute, '..', a symlink out, missing, past the end,
 * wrong length, bad offset, unknown key, loaded from memory) is
 * NPU_ERR_FORMAT naming the tensor; int8 calibration and batch (profile)
 * compiles read the side files too.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile/npu_ops.h"
#include "ir/npu_ir.h"
#include "npu_test.h"
#include "onnx/npu_onnx.h"
#include "onnx_build.h"

#define D(...) ((const int64_t[]){ __VA_ARGS__ })

#define K 16	/* x [1, K] */
#define N1 12	/* MatMul W1 [K, N1] */
#define N2 8	/* Gemm W2 [N1, N2] + c [N2] (a Constant node) */

static float w1[K * N1], w2[N1 * N2], cv[N2];

/* x -> MatMul(W1) -> h -> Gemm(h, W2, c) -> y; c is a Constant node. */
static uint8_t *mlp_model(size_t *len)
{
	onnxb *b = onnxb_new(8, 13);
	Onnx__NodeProto *n;
	uint8_t *buf;

	onnxb_fill(w1, K * N1, 71);
	onnxb_fill(w2, N1 * N2, 72);
	onnxb_fill(cv, N2, 73);
	onnxb_input(b, "x", ONNXB_F32, 2, D(1, K));
	onnxb_init_f32(b, "W1", 2, D(K, N1), w1);
	onnxb_init_f32(b, "W2", 2, D(N1, N2), w2);
	n = onnxb_node(b, "Constant", "cnode", "", "c");
	onnxb_attr_t(b, n, "value", onnxb_tensor(b, "c", ONNXB_F32, 1, D(N2), cv, sizeof(cv)));
	onnxb_node(b, "MatMul", "mm", "x,W1", "h");
	onnxb_node(b, "Gemm", "gemm", "h,W2,c", "y");
	onnxb_output(b, "y", ONNXB_F32, 2, D(1, N2));
	buf = onnxb_pack(b, len);
	onnxb_free(b);
	return buf;
}

/* A folder of its own for each test. */
static void make_dir(char *dir, size_t size)
{
	snprintf(dir, size, "/tmp/npu-extdata-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void rm_dir(const char *dir)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void write_file(const char *dir, const char *name, const void *p, size_t n)
{
	char path[300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(p, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

static void set_entry(Onnx__TensorProto *t, const char *key, const char *value)
{
	Onnx__StringStringEntryProto *e;
	size_t i;

	for (i = 0; i < t->n_external_data; i++)
		if (!strcmp(t->external_data[i]->key, key))
			break;
	if (i == t->n_external_data) {
		if (!value)
			return;
		t->external_data = realloc(t->external_data, (i + 1) * sizeof(*t->external_data));
		e = malloc(sizeof(*e));
		ck_assert(t->external_data && e);
		onnx__string_string_entry_proto__init(e);
		e->key = strdup(key);
		e->value = NULL;
		t->external_data[t->n_external_data++] = e;
	}
	e = t->external_data[i];
	free(e->value);
	if (!value) {
		free(e->key);
		free(e);
		memmove(&t->external_data[i], &t->external_data[i + 1],
			(t->n_external_data - i - 1) * sizeof(*t->external_data));
		t->n_external_data--;
		return;
	}
	e->value = strdup(value);
}

/* Has raw_data or external data. */
static bool has_bytes(const Onnx__TensorProto *t)
{
	return t && (t->has_raw_data || t->n_external_data);
}

/* The tensors of @m with bytes: initializers, then attribute values (malloc'd). */
static size_t data_tensors(Onnx__ModelProto *m, Onnx__TensorProto ***out)
{
	Onnx__GraphProto *g = m->graph;
	size_t n = 0, cap = g->n_initializer;
	Onnx__TensorProto **ts;

	for (size_t i = 0; i < g->n_node; i++)
		cap += g->node[i]->n_attribute;
	ts = malloc((cap + 1) * sizeof(*ts));
	ck_assert_ptr_nonnull(ts);
	for (size_t i = 0; i < g->n_initializer; i++)
		if (has_bytes(g->initializer[i]))
			ts[n++] = g->initializer[i];
	for (size_t i = 0; i < g->n_node; i++)
		for (size_t j = 0; j < g->node[i]->n_attribute; j++)
			if (has_bytes(g->node[i]->attribute[j]->t))
				ts[n++] = g->node[i]->attribute[j]->t;
	*out = ts;
	return n;
}

/*
 * Move the raw_data of every tensor of model @buf into side file @file
 * in @dir: tensor i at the next multiple of 64, plus @skew[i] bytes (to
 * misalign one); returns the new model bytes.
 */
static uint8_t *externalize(const uint8_t *buf, size_t len, const char *dir, const char *file,
			    const unsigned *skew, size_t *out_len)
{
	Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
	Onnx__TensorProto **ts;
	uint8_t *side = NULL, *out;
	size_t n, end = 0;
	char num[32];

	ck_assert_ptr_nonnull(m);
	n = data_tensors(m, &ts);
	for (size_t i = 0; i < n; i++) {
		Onnx__TensorProto *t = ts[i];
		size_t off = (end + 63) / 64 * 64 + (skew ? skew[i] : 0);

		ck_assert(t->has_raw_data);
		side = realloc(side, off + t->raw_data.len);
		ck_assert_ptr_nonnull(side);
		memset(side + end, 0xee, off - end);
		memcpy(side + off, t->raw_data.data, t->raw_data.len);
		end = off + t->raw_data.len;
		t->has_raw_data = 0;
		t->has_data_location = 1;
		t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
		set_entry(t, "location", file);
		snprintf(num, sizeof(num), "%zu", off);
		set_entry(t, "offset", num);
		snprintf(num, sizeof(num), "%zu", t->raw_data.len);
		set_entry(t, "length", num);
	}
	write_file(dir, file, side, end);
	free(side);
	free(ts);
	*out_len = onnx__model_proto__get_packed_size(m);
	out = malloc(*out_len);
	ck_assert_ptr_nonnull(out);
	onnx__model_proto__pack(m, out);
	onnx__model_proto__free_unpacked(m, NULL);
	return out;
}

/* Model @buf with external_data key @key of tensor @tensor set to @value (NULL: removed). */
static uint8_t *with_entry(const uint8_t *buf, size_t len, const char *tensor, const char *key,
			   const char *value, size_t *out_len)
{
	Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
	Onnx__TensorProto **ts;
	uint8_t *out;
	size_t n;

	ck_assert_ptr_nonnull(m);
	n = data_tensors(m, &ts);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(ts[i]->name, tensor))
			set_entry(ts[i], key, value);
	free(ts);
	*out_len = onnx__model_proto__get_packed_size(m);
	out = malloc(*out_len);
	ck_assert_ptr_nonnull(out);
	onnx__model_proto__pack(m, out);
	onnx__model_proto__free_unpacked(m, NULL);
	return out;
}

/* The external MLP in @dir as model.onnx (+ weights.bin); its bytes. */
static uint8_t *ext_mlp(const char *dir, size_t *len)
{
	/* c (a Constant) 2 bytes past a multiple of 64: copied, not mapped. */
	static const unsigned skew[3] = { 0, 0, 2 };
	size_t ilen;
	uint8_t *in = mlp_model(&ilen), *ext = externalize(in, ilen, dir, "weights.bin", skew, len);

	free(in);
	write_file(dir, "model.onnx", ext, *len);
	return ext;
}

static npu_status load(const char *dir, const char *name, const npu_compile_options *co,
		       npu_device *dev, npu_model **m)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return npu_model_load_file(path, dev, co, m);
}

static void run(npu_device *dev, npu_model *m, const float *x, float *y)
{
	npu_tensor in = { "x", NPU_DTYPE_FLOAT32, (void *)x, K * 4 };
	npu_tensor out = { "y", NPU_DTYPE_FLOAT32, y, N2 * 4 };
	npu_context *ctx;

	ck_assert_msg(!npu_context_create(dev, m, 0, &ctx), "%s", npu_last_error());
	ck_assert_msg(!npu_run(ctx, &in, 1, &out, 1), "%s", npu_last_error());
	npu_context_destroy(ctx);
}

START_TEST(ext_same_bytes_as_inline)
{
	char dir[64];
	float x[K], ye[N2], yi[N2], h[N1];
	size_t len, ilen;
	uint8_t *ext, *in;
	npu_device *dev;
	npu_model *me, *mi;

	make_dir(dir, sizeof(dir));
	ext = ext_mlp(dir, &len);
	in = mlp_model(&ilen);
	write_file(dir, "inline.onnx", in, ilen);
	ck_assert_uint_gt(ilen - len, sizeof(w1) + sizeof(cv));	/* the weights left */
	ck_assert(!npu_device_open("emu", &dev));
	ck_assert_msg(!load(dir, "model.onnx", NULL, dev, &me), "%s", npu_last_error());
	ck_assert_msg(!load(dir, "inline.onnx", NULL, dev, &mi), "%s", npu_last_error());
	onnxb_fill(x, K, 74);
	run(dev, me, x, ye);
	run(dev, mi, x, yi);
	ck_assert_mem_eq(ye, yi, sizeof(ye));
	/* And the model computes x W1 W2 + c (bf16 weights: loose). */
	for (int j = 0; j < N1; j++) {
		h[j] = 0;
		for (int k = 0; k < K; k++)
			h[j] += x[k] * w1[k * N1 + j];
	}
	for (int j = 0; j < N2; j++) {
		float r = cv[j];

		for (int k = 0; k < N1; k++)
			r += h[k] * w2[k * N2 + j];
		ck_assert_msg(fabsf(ye[j] - r) <= 0.03f + 0.02f * fabsf(r), "y[%d] %g, want %g",
			      j, ye[j], r);
	}
	npu_model_free(me);
	npu_model_free(mi);
	npu_device_close(dev);
	free(ext);
	free(in);
	rm_dir(dir);
}
END_TEST

/* One side file, three tensors: mapped once; aligned ones not copied. */
START_TEST(ext_one_mapping_no_copy)
{
	char dir[64];
	size_t len;
	uint8_t *ext;
	npu_ir_graph *g;
	const npu_ir_tensor *t1, *t2, *c;

	make_dir(dir, sizeof(dir));
	ext = ext_mlp(dir, &len);
	ck_assert_msg(!npu_onnx_parse_dir(ext, len, dir, &g), "%s", npu_last_error());
	ck_assert_int_eq(g->n_mappings, 1);
	t1 = &g->tensors[npu_ir_find_tensor(g, "W1")];
	t2 = &g->tensors[npu_ir_find_tensor(g, "W2")];
	c = &g->tensors[npu_ir_find_tensor(g, "c")];
	ck_assert(t1->data_mapped && t2->data_mapped && !c->data_mapped);
	ck_assert_ptr_eq(t1->data, g->mappings[0].addr);
	ck_assert_ptr_eq(t2->data, (char *)g->mappings[0].addr + 768);
	ck_assert_mem_eq(t1->data, w1, sizeof(w1));
	ck_assert_mem_eq(t2->data, w2, sizeof(w2));
	ck_assert_mem_eq(c->data, cv, sizeof(cv));
	ck_assert_uint_eq(t1->bytes, sizeof(w1));
	/* Shape inference and folding free, replace and keep mapped data. */
	ck_assert_msg(!npu_ops_infer_shapes(g), "%s", npu_last_error());
	npu_ir_graph_free(g);
	free(ext);
	rm_dir(dir);
}
END_TEST

/* Loading @buf as @dir/bad.onnx fails with NPU_ERR_FORMAT naming @named; the message. */
static const char *refused(const char *dir, const uint8_t *buf, size_t len, const char *named)
{
	npu_model *m = (npu_model *)1;
	npu_status st;
	char want[80];

	write_file(dir, "bad.onnx", buf, len);
	st = load(dir, "bad.onnx", NULL, NULL, &m);
	ck_assert_msg(st == NPU_ERR_FORMAT, "got %s: %s", npu_status_str(st), npu_last_error());
	ck_assert_ptr_null(m);
	snprintf(want, sizeof(want), "'%s'", named);
	ck_assert_msg(strstr(npu_last_error(), want), "no %s in: %s", want, npu_last_error());
	return npu_last_error();
}

/* @tensor's key @key = @value is refused; the message has @text. */
static void refuse(const char *dir, const uint8_t *ext, size_t len, const char *tensor,
		   const char *key, const char *value, const char *text)
{
	size_t blen;
	uint8_t *bad = with_entry(ext, len, tensor, key, value, &blen);
	/* A Constant node's value is named after its node. */
	const char *msg = refused(dir, bad, blen, strcmp(tensor, "c") ? tensor : "cnode");

	ck_assert_msg(strstr(msg, text), "'%s' not in: %s", text, msg);
	free(bad);
}

START_TEST(ext_refusals)
{
	char dir[64], out[64], path[300], big[32];
	size_t len;
	uint8_t *ext;
	struct stat sb;

	make_dir(dir, sizeof(dir));
	make_dir(out, sizeof(out));
	ext = ext_mlp(dir, &len);
	snprintf(path, sizeof(path), "%s/weights.bin", dir);
	ck_assert_int_eq(stat(path, &sb), 0);
	refuse(dir, ext, len, "W1", "location", "/etc/passwd",
	       "external data location '/etc/passwd' is an absolute path");
	refuse(dir, ext, len, "W2", "location", "../weights.bin",
	       "location '../weights.bin' has a '..' component");
	refuse(dir, ext, len, "W2", "location", "sub/../../x/weights.bin", "'..' component");
	/* A symlink out of the folder, to a file that exists. */
	write_file(out, "w.bin", ext, len);
	snprintf(path, sizeof(path), "%s/w.bin", out);
	{
		char link[300];

		snprintf(link, sizeof(link), "%s/link.bin", dir);
		ck_assert_int_eq(symlink(path, link), 0);
	}
	refuse(dir, ext, len, "W1", "location", "link.bin", "outside the model's folder");
	/* A symlink that stays inside is fine: the same file. */
	{
		char link[300];
		npu_model *m;

		snprintf(link, sizeof(link), "%s/same.bin", dir);
		ck_assert_int_eq(symlink("weights.bin", link), 0);
		size_t olen;
		uint8_t *ok = with_entry(ext, len, "W1", "location", "same.bin", &olen);

		write_file(dir, "ok.onnx", ok, olen);
		ck_assert_msg(!load(dir, "ok.onnx", NULL, NULL, &m), "%s", npu_last_error());
		npu_model_free(m);
		free(ok);
	}
	refuse(dir, ext, len, "W1", "location", "nothere.bin",
	       "external file 'nothere.bin', which cannot be found");
	ck_assert_int_eq(mkdir((snprintf(path, sizeof(path), "%s/sub", dir), path), 0700), 0);
	refuse(dir, ext, len, "W1", "location", "sub", "is not a regular file");
	ck_assert_int_eq(mkfifo((snprintf(path, sizeof(path), "%s/fifo", dir), path), 0600), 0);
	refuse(dir, ext, len, "W1", "location", "fifo", "is not a regular file");
	refuse(dir, ext, len, "W1", "location", NULL, "no 'location' key");
	snprintf(big, sizeof(big), "%lld", (long long)sb.st_size - 100);
	refuse(dir, ext, len, "W2", "offset", big, "runs past the end of 'weights.bin'");
	snprintf(big, sizeof(big), "%lld", (long long)sb.st_size + 1);
	refuse(dir, ext, len, "W2", "offset", big, "runs past the end");
	refuse(dir, ext, len, "W2", "offset", "99999999999999999999", "is not a decimal number");
	refuse(dir, ext, len, "W1", "offset", "12a", "offset '12a' is not a decimal number");
	refuse(dir, ext, len, "W1", "offset", "-64", "is not a decimal number");
	refuse(dir, ext, len, "W1", "offset", "0x40", "is not a decimal number");
	refuse(dir, ext, len, "W1", "length", "764",
	       "is 764 bytes long; its shape and type need 768");
	refuse(dir, ext, len, "W1", "length", "+768", "length '+768' is not a decimal number");
	refuse(dir, ext, len, "W1", "basepath", "x", "external_data key 'basepath'");
	/* The Constant node's value is named after the node. */
	refuse(dir, ext, len, "c", "location", "../c.bin", "node 'cnode' (Constant)");
	free(ext);
	rm_dir(dir);
	rm_dir(out);
}
END_TEST

/* Accepted: checksum and prepacked* keys (ignored), no length (the tensor's size). */
START_TEST(ext_optional_keys)
{
	char dir[64];
	size_t len, l2;
	uint8_t *ext, *a, *b2;
	npu_model *m;

	make_dir(dir, sizeof(dir));
	ext = ext_mlp(dir, &len);
	a = with_entry(ext, len, "W1", "checksum", "a3f1", &l2);
	b2 = with_entry(a, l2, "W2", "length", NULL, &l2);
	free(a);
	a = with_entry(b2, l2, "W2", "prepacked_1", "k|0;8;0", &l2);
	write_file(dir, "ok.onnx", a, l2);
	ck_assert_msg(!load(dir, "ok.onnx", NULL, NULL, &m), "%s", npu_last_error());
	npu_model_free(m);
	free(a);
	free(b2);
	free(ext);
	rm_dir(dir);
}
END_TEST

START_TEST(ext_from_memory_refused)
{
	char dir[64];
	size_t len;
	uint8_t *ext;
	npu_model *m = (npu_model *)1;
	npu_ir_graph *g = (npu_ir_graph *)1;

	make_dir(dir, sizeof(dir));
	ext = ext_mlp(dir, &len);
	ck_assert_int_eq(npu_model_load_memory(ext, len, NULL, NULL, &m), NPU_ERR_FORMAT);
	ck_assert_ptr_null(m);
	ck_assert_str_eq(npu_last_error(),
			 "initializer 'W1' stores its data in an external file 'weights.bin'; load the model with npu_model_load_file so libnpu can find it");
	ck_assert_int_eq(npu_onnx_parse(ext, len, &g), NPU_ERR_FORMAT);
	ck_assert_ptr_null(g);
	free(ext);
	rm_dir(dir);
}
END_TEST

/* The other compile paths: batch (profile pipeline) and int8 calibration. */
START_TEST(ext_batch_and_int8)
{
	static float x[ONNXB_SMALL_CNN_IN], s[2][8 * 144];
	char dir[64], path[300];
	size_t len, clen;
	uint8_t *cnn, *ext;
	npu_compile_options co;
	npu_device *dev;
	npu_model *m;

	make_dir(dir, sizeof(dir));
	cnn = onnxb_small_cnn(&clen);
	ext = externalize(cnn, clen, dir, "cnn.bin", NULL, &len);
	write_file(dir, "cnn.onnx", ext, len);
	ck_assert(!npu_device_open("emu", &dev));
	npu_compile_options_init(&co);
	co.batch = 2;
	ck_assert_msg(!load(dir, "cnn.onnx", &co, dev, &m), "%s", npu_last_error());
	ck_assert_uint_eq(npu_model_batch(m), 2);
	npu_model_free(m);
	snprintf(path, sizeof(path), "%s/calib", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	onnxb_fill(x, ONNXB_SMALL_CNN_IN, 75);
	write_file(path, "s0.raw", x, sizeof(x));
	npu_compile_options_init(&co);
	co.precision = NPU_PRECISION_INT8;
	co.calibration_dir = path;
	ck_assert_msg(!load(dir, "cnn.onnx", &co, dev, &m), "%s", npu_last_error());
	{
		npu_tensor in = { "x", NPU_DTYPE_FLOAT32, x, sizeof(x) };
		npu_tensor o = { "s", NPU_DTYPE_FLOAT32, s[0], sizeof(s[0]) };
		double dot = 0, na = 0, nb = 0;
		npu_context *ctx;
		npu_model *f;

		ck_assert(!npu_context_create(dev, m, 0, &ctx));
		ck_assert_msg(!npu_run(ctx, &in, 1, &o, 1), "%s", npu_last_error());
		npu_context_destroy(ctx);
		/* Close to the float model with inline weights. */
		ck_assert(!npu_model_load_memory(cnn, clen, dev, NULL, &f));
		o.data = s[1];
		ck_assert(!npu_context_create(dev, f, 0, &ctx));
		ck_assert_msg(!npu_run(ctx, &in, 1, &o, 1), "%s", npu_last_error());
		npu_context_destroy(ctx);
		npu_model_free(f);
		for (size_t i = 0; i < 8 * 144; i++) {
			dot += (double)s[0][i] * s[1][i];
			na += (double)s[0][i] * s[0][i];
			nb += (double)s[1][i] * s[1][i];
		}
		ck_assert_msg(dot / sqrt(na * nb) > 0.99, "cosine %g", dot / sqrt(na * nb));
	}
	npu_model_free(m);
	co.precision = NPU_PRECISION_INT8;
	ck_assert_int_eq(npu_model_load_memory(ext, len, dev, &co, &m), NPU_ERR_FORMAT);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "'w1'"));
	npu_device_close(dev);
	free(cnn);
	free(ext);
	rm_dir(dir);
}
END_TEST

/* A transformer exported by torch, every tensor external: the same logits. */
START_TEST(ext_llama_tiny)
{
	static const char *path = "tests/models/transformers/llama_tiny_op17.onnx";
	static float le[16 * 256], li[16 * 256];
	npu_input_shape shape = { "input_ids", 2, { 1, 16 } };
	int64_t ids[16];
	char dir[64];
	size_t len, elen;
	uint8_t *in, *ext;
	npu_compile_options co;
	npu_device *dev;
	npu_model *m[2];

	in = npu_test_slurp(path, &len);
	/* Committed in the tree: only a wrong working directory misses it. */
	ck_assert_msg(in, "extdata: %s not found: run the tests from the repository root", path);
	make_dir(dir, sizeof(dir));
	ext = externalize(in, len, dir, "llama.onnx.data", NULL, &elen);
	ck_assert_uint_lt(elen, len / 4);	/* the weights left the .onnx file */
	write_file(dir, "llama.onnx", ext, elen);
	write_file(dir, "inline.onnx", in, len);
	npu_compile_options_init(&co);
	co.input_shapes = &shape;
	co.n_input_shapes = 1;
	ck_assert(!npu_device_open("emu", &dev));
	ck_assert_msg(!load(dir, "llama.onnx", &co, dev, &m[0]), "%s", npu_last_error());
	ck_assert_msg(!load(dir, "inline.onnx", &co, dev, &m[1]), "%s", npu_last_error());
	for (int i = 0; i < 16; i++)
		ids[i] = (i * 37 + 5) % 256;
	for (int k = 0; k < 2; k++) {
		npu_tensor x = { "input_ids", NPU_DTYPE_INT64, ids, sizeof(ids) };
		npu_tensor y = { "logits", NPU_DTYPE_FLOAT32, k ? li : le, sizeof(le) };
		npu_context *ctx;

		ck_assert(!npu_context_create(dev, m[k], 0, &ctx));
		ck_assert_msg(!npu_run(ctx, &x, 1, &y, 1), "%s", npu_last_error());
		npu_context_destroy(ctx);
		npu_model_free(m[k]);
	}
	ck_assert_mem_eq(le, li, sizeof(le));
	npu_device_close(dev);
	free(in);
	free(ext);
	rm_dir(dir);
}
END_TEST

/*
 * The models branch's export through onnx (every initializer external,
 * packed offsets), committed in the tree: it parses to the same
 * constants as the inline llama_past_op17.onnx.
 */
START_TEST(ext_llama_past_export)
{
	static const char *dir = "tests/models/transformers";
	npu_ir_graph *ge, *gi;
	uint8_t *be, *bi;
	size_t le, li;
	char path[200];
	int n = 0;

	snprintf(path, sizeof(path), "%s/llama_past_ext_op17.onnx", dir);
	be = npu_test_slurp(path, &le);
	snprintf(path, sizeof(path), "%s/llama_past_op17.onnx", dir);
	bi = npu_test_slurp(path, &li);
	if (!be || !bi) {
		free(be);
		free(bi);
	}
	ck_assert_msg(be && bi, "extdata: %s/llama_past{_ext,}_op17.onnx not found: "
		      "run the tests from the repository root", dir);
	ck_assert_msg(!npu_onnx_parse_dir(be, le, dir, &ge), "%s", npu_last_error());
	ck_assert_msg(!npu_onnx_parse(bi, li, &gi), "%s", npu_last_error());
	ck_assert_int_eq(ge->n_mappings, 1);
	for (int t = 0; t < gi->n_tensors; t++) {
		const npu_ir_tensor *x = &gi->tensors[t], *y;
		int u = npu_ir_find_tensor(ge, x->name);

		if (!x->data)
			continue;
		ck_assert_msg(u >= 0, "no '%s'", x->name);
		y = &ge->tensors[u];
		ck_assert_uint_eq(y->bytes, x->bytes);
		ck_assert_msg(!memcmp(y->data, x->data, x->bytes), "'%s' differs", x->name);
		n += y->data_mapped;
	}
	ck_assert_int_gt(n, 0);
	npu_ir_graph_free(ge);
	npu_ir_graph_free(gi);
	free(be);
	free(bi);
}
END_TEST

static Suite *extdata_suite(void)
{
	Suite *s = suite_create("extdata");
	TCase *tc = tcase_create("extdata");

	tcase_add_test(tc, ext_same_bytes_as_inline);
	tcase_add_test(tc, ext_one_mapping_no_copy);
	tcase_add_test(tc, ext_refusals);
	tcase_add_test(tc, ext_optional_keys);
	tcase_add_test(tc, ext_from_memory_refused);
	tcase_add_test(tc, ext_batch_and_int8);
	tcase_add_test(tc, ext_llama_tiny);
	tcase_add_test(tc, ext_llama_past_export);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(extdata_suite)
