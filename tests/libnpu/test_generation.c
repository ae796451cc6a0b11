// SPDX-License-Identifier: MIT
/*
 * Generation programs (npu_compile_generation, issue 16) on the emulator:
 * the decoders exported with past (tests/models/transformers/, *_past_op17)
 * compiled as a prefill of 16 tokens and a decode step against one
 * device-resident KV cache (a context and a shared one), the prompt then
 * 8 decode steps, each step's logits against the same model compiled
 * normally for the whole sequence (past of one masked row), the cache's
 * documented layout read back through the state buffer against that run's
 * present.0.key, the on-device ArgMax against the logits, a row past the
 * cache refused with nothing written, and the refusals by their text.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_compile.h"
#include "compile/npu_gen.h"
#include "model/npu_cmodel.h"
#include "model/npu_model_priv.h"
#include "onnx_build.h"
#include "npu_test.h"

#define DIR "tests/models/transformers/"
#define VOCAB 256
#define HEAD_DIM 16
#define PROMPT 16
#define STEPS 8
#define TOTAL (PROMPT + STEPS)

static struct npu_compile_target emu_target(npu_device *dev)
{
	struct npu_compile_target t = { 0 };
	npu_device_info info;

	npu_device_get_info(dev, &info);
	t.clusters = info.healthy_clusters;
	t.tpbs = info.tpbs_per_cluster;
	t.hbsm_size = info.hbsm_size;
	t.precision = NPU_PRECISION_BF16;
	return t;
}

static npu_model *wrap(struct npu_cmodel *cm)
{
	npu_model *m = calloc(1, sizeof(*m));

	ck_assert_ptr_nonnull(m);
	m->cm = cm;
	return m;
}

static npu_status gen_compile(const void *d, size_t n, npu_device *dev, unsigned maxc,
			      unsigned tokens, struct npu_cmodel **cm)
{
	struct npu_compile_target t = emu_target(dev);
	struct npu_gen_program p = { maxc, tokens };

	return npu_compile_generation(d, n, &t, &p, cm);
}

/* One named tensor of a run. */
struct named {
	const char *name;
	void *data;
};

static void *find(const struct named *v, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return v[i].data;
	return NULL;
}

/* Run @ctx with its inputs and outputs matched by name (all must be given). */
static npu_status run(npu_context *ctx, const struct npu_cmodel *cm, const struct named *in,
		      int nin, const struct named *out, int nout)
{
	npu_tensor x[16], y[16];

	ck_assert_uint_le(cm->ninputs, 16);
	ck_assert_uint_le(cm->noutputs, 16);
	for (uint32_t i = 0; i < cm->ninputs; i++) {
		void *p = find(in, nin, cm->inputs[i].name);

		ck_assert_msg(p, "no data for input '%s'", cm->inputs[i].name);
		x[i] = (npu_tensor){ NULL, cm->inputs[i].info.dtype, p, cm->inputs[i].info.bytes };
	}
	for (uint32_t i = 0; i < cm->noutputs; i++) {
		void *p = find(out, nout, cm->outputs[i].name);

		ck_assert_msg(p, "no buffer for output '%s'", cm->outputs[i].name);
		y[i] = (npu_tensor){ NULL, cm->outputs[i].info.dtype, p, cm->outputs[i].info.bytes };
	}
	return npu_run(ctx, x, cm->ninputs, y, cm->noutputs);
}

static const struct npu_seg *state_seg(const struct npu_cmodel *cm)
{
	for (uint32_t i = 0; i < cm->nsegs; i++)
		if (cm->segs[i].kind == NPU_SEG_STATE)
			return &cm->segs[i];
	return NULL;
}

/* The token ids of the test sequence (an LCG, mod the vocabulary). */
static void tokens(int64_t *ids, int n)
{
	uint32_t s = 12345;

	for (int i = 0; i < n; i++) {
		s = s * 1103515245u + 12345u;
		ids[i] = (s >> 16) % VOCAB;
	}
}

/*
 * The reference: the model compiled normally for all TOTAL tokens after a
 * past of one row that the mask hides; its logits [TOTAL, VOCAB] and
 * present.0.key rows 1.. ([kvh, TOTAL + 1, HEAD_DIM]).
 */
static void reference(const void *d, size_t n, npu_device *dev, int kvh, const int64_t *ids,
		      float *logits, float *key0)
{
	npu_input_shape sh[8];
	npu_compile_options o;
	struct npu_cmodel *cm;
	int64_t mask[TOTAL + 1], pos[TOTAL];
	size_t kv = (size_t)kvh * HEAD_DIM;
	float *past = calloc(kv, sizeof(float));
	float *pres = malloc((size_t)4 * kv * (TOTAL + 1) * sizeof(float));
	struct named in[8], out[6];
	const char *pn[4] = { "past_key_values.0.key", "past_key_values.0.value",
			      "past_key_values.1.key", "past_key_values.1.value" };
	const char *on[4] = { "present.0.key", "present.0.value", "present.1.key",
			      "present.1.value" };
	npu_model *m;
	npu_context *ctx;

	npu_compile_options_init(&o);
	sh[0] = (npu_input_shape){ "input_ids", 2, { 1, TOTAL } };
	sh[1] = (npu_input_shape){ "position_ids", 2, { 1, TOTAL } };
	sh[2] = (npu_input_shape){ "attention_mask", 2, { 1, TOTAL + 1 } };
	for (int i = 0; i < 4; i++) {
		sh[3 + i] = (npu_input_shape){ pn[i], 4, { 1, kvh, 1, HEAD_DIM } };
		in[3 + i] = (struct named){ pn[i], past };
		out[2 + i] = (struct named){ on[i], pres + (size_t)i * kv * (TOTAL + 1) };
	}
	o.input_shapes = sh;
	o.n_input_shapes = 7;
	ck_assert_msg(npu_compile_onnx(d, n, dev, &o, &cm) == NPU_OK, "%s", npu_last_error());
	mask[0] = 0;
	for (int i = 0; i < TOTAL; i++) {
		mask[i + 1] = 1;
		pos[i] = i;
	}
	in[0] = (struct named){ "input_ids", (void *)ids };
	in[1] = (struct named){ "position_ids", pos };
	in[2] = (struct named){ "attention_mask", mask };
	out[0] = (struct named){ "logits", logits };
	out[1] = (struct named){ "unused", NULL };
	m = wrap(cm);
	ck_assert_int_eq(npu_context_create(dev, m, 0, &ctx), NPU_OK);
	ck_assert_msg(run(ctx, cm, in, 7, out, 6) == NPU_OK, "%s", npu_last_error());
	/* present.0.key rows 1.. (row 0 is the hidden past row). */
	for (int h = 0; h < kvh; h++)
		memcpy(key0 + (size_t)h * TOTAL * HEAD_DIM,
		       pres + ((size_t)h * (TOTAL + 1) + 1) * HEAD_DIM,
		       (size_t)TOTAL * HEAD_DIM * sizeof(float));
	npu_context_destroy(ctx);
	npu_model_free(m);
	free(past);
	free(pres);
}

static double cosine(const float *a, const float *b, int n, float *maxdiff)
{
	double ab = 0, aa = 0, bb = 0;

	*maxdiff = 0;
	for (int i = 0; i < n; i++) {
		ab += (double)a[i] * b[i];
		aa += (double)a[i] * a[i];
		bb += (double)b[i] * b[i];
		if (fabsf(a[i] - b[i]) > *maxdiff)
			*maxdiff = fabsf(a[i] - b[i]);
	}
	return ab / sqrt(aa * bb + 1e-30);
}

static int64_t argmax(const float *v, int n)
{
	int64_t k = 0;

	for (int i = 1; i < n; i++)
		if (v[i] > v[k])
			k = i;
	return k;
}

/* Layer 0's key cache rows [0, @rows) against the reference's. */
static void check_key0(npu_context *ctx, int kvh, unsigned maxc, const float *key0, int rows)
{
	float *st;
	size_t bytes;

	ck_assert_int_eq(npu_context_state(ctx, 0, (void **)&st, &bytes), NPU_OK);
	ck_assert_uint_ge(bytes, (size_t)kvh * maxc * HEAD_DIM * 4);

	for (int h = 0; h < kvh; h++)
		for (int r = 0; r < rows; r++) {
			float md;
			double c = cosine(st + ((size_t)h * maxc + r) * HEAD_DIM,
					  key0 + ((size_t)h * TOTAL + r) * HEAD_DIM, HEAD_DIM, &md);

			ck_assert_msg(c > 0.999 && md < 0.05,
				      "cache layer 0 key head %d row %d: cosine %.5f, max diff %g", h,
				      r, c, md);
		}
}

/*
 * Prompt then STEPS decode steps of model @file, against the reference;
 * @from_end: the decode steps fill the cache from its last row down (the
 * attention does not care where a token's row is).
 */
static void generate(const char *file, int kvh, unsigned maxc, bool from_end)
{
	size_t n;
	void *d = npu_test_slurp(file, &n);
	int64_t ids[TOTAL], pos[TOTAL], *mask = calloc(maxc, sizeof(int64_t)), am[PROMPT];
	float *ref = malloc((size_t)TOTAL * VOCAB * sizeof(float));
	float *key0 = malloc((size_t)kvh * TOTAL * HEAD_DIM * sizeof(float));
	float logits[PROMPT * VOCAB];
	int32_t rows[PROMPT];
	struct npu_cmodel *cp, *cd;
	npu_model *mp, *md;
	npu_context *xp, *xd;
	npu_device *dev;
	double worst = 1;
	float maxd = 0;

	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	tokens(ids, TOTAL);
	reference(d, n, dev, kvh, ids, ref, key0);
	ck_assert_msg(gen_compile(d, n, dev, maxc, PROMPT, &cp) == NPU_OK, "%s", npu_last_error());
	ck_assert_msg(gen_compile(d, n, dev, maxc, 0, &cd) == NPU_OK, "%s", npu_last_error());
	/* One layout: the same state segment, [layers][2][kvh][maxc][16] floats. */
	ck_assert_ptr_nonnull(state_seg(cp));
	ck_assert_ptr_nonnull(state_seg(cd));
	ck_assert_uint_eq(state_seg(cp)->size, state_seg(cd)->size);
	ck_assert_uint_eq(state_seg(cp)->size, 4ull * kvh * maxc * HEAD_DIM * 4);
	mp = wrap(cp);
	md = wrap(cd);
	ck_assert_int_eq(npu_context_create(dev, mp, 0, &xp), NPU_OK);
	ck_assert_msg(npu_context_create_shared(md, xp, &xd) == NPU_OK, "%s", npu_last_error());

	/* The prompt. */
	for (int i = 0; i < PROMPT; i++) {
		pos[i] = i;
		am[i] = 1;
		rows[i] = i;
	}
	{
		int64_t amax[PROMPT];
		struct named in[] = { { "input_ids", ids }, { "position_ids", pos },
				      { "attention_mask", am }, { NPU_GEN_KV_ROWS, rows } };
		struct named out[] = { { "logits", logits }, { NPU_GEN_ARGMAX, amax } };

		ck_assert_msg(run(xp, cp, in, 4, out, 2) == NPU_OK, "%s", npu_last_error());
		for (int i = 0; i < PROMPT; i++) {
			double c = cosine(logits + i * VOCAB, ref + i * VOCAB, VOCAB, &maxd);

			worst = c < worst ? c : worst;
			ck_assert_msg(c > 0.999, "%s prefill row %d: cosine %.5f", file, i, c);
			ck_assert_int_eq(amax[i], argmax(logits + i * VOCAB, VOCAB));
		}
	}
	check_key0(xp, kvh, maxc, key0, PROMPT);

	/* Decode steps: token PROMPT + s at row PROMPT + s. */
	for (int s = 0; s < STEPS; s++) {
		int p = PROMPT + s;
		int64_t pid = p, amax;
		int32_t row = from_end ? (int32_t)maxc - 1 - s : p;
		struct named in[] = { { "input_ids", &ids[p] }, { "position_ids", &pid },
				      { "attention_mask", mask }, { NPU_GEN_KV_ROWS, &row } };
		struct named out[] = { { "logits", logits }, { NPU_GEN_ARGMAX, &amax } };
		double c;

		for (int i = 0; i < PROMPT; i++)
			mask[i] = 1;
		mask[row] = 1;
		ck_assert_msg(run(xd, cd, in, 4, out, 2) == NPU_OK, "%s", npu_last_error());
		c = cosine(logits, ref + (size_t)p * VOCAB, VOCAB, &maxd);
		worst = c < worst ? c : worst;
		ck_assert_msg(c > 0.999, "%s decode step %d: cosine %.5f, max diff %g", file, s, c,
			      maxd);
		ck_assert_int_eq(amax, argmax(logits, VOCAB));
	}
	check_key0(xd, kvh, maxc, key0, from_end ? PROMPT : TOTAL);
	printf("%s: prefill + %d decode steps at max_context %u%s: worst logits cosine %.6f\n",
	       file, STEPS, maxc, from_end ? " (decode rows from the end)" : "", worst);

	/* A row past the cache: the run fails and writes nothing. */
	{
		size_t bytes;
		void *before, *cache;
		int64_t pid = 3, amax;
		int32_t row = (int32_t)maxc;
		struct named in[] = { { "input_ids", ids }, { "position_ids", &pid },
				      { "attention_mask", mask }, { NPU_GEN_KV_ROWS, &row } };
		struct named out[] = { { "logits", logits }, { NPU_GEN_ARGMAX, &amax } };

		ck_assert_int_eq(npu_context_state(xd, 0, &cache, &bytes), NPU_OK);
		before = malloc(bytes);
		memcpy(before, cache, bytes);
		ck_assert_int_ne(run(xd, cd, in, 4, out, 2), NPU_OK);
		ck_assert_msg(strstr(npu_last_error(), "npu.ScatterRows") &&
			      strstr(npu_last_error(), "out of range"), "%s", npu_last_error());
		ck_assert_int_eq(memcmp(before, cache, bytes), 0);
		free(before);
	}
	npu_context_destroy(xd);
	npu_context_destroy(xp);
	npu_model_free(md);
	npu_model_free(mp);
	npu_device_close(dev);
	free(mask);
	free(ref);
	free(key0);
	free(d);
}

START_TEST(gpt2_prefill_decode)
{
	generate(DIR "gpt2_past_op17.onnx", 4, 32, false);
}
END_TEST

START_TEST(llama_prefill_decode)
{
	generate(DIR "llama_past_op17.onnx", 2, 32, false);
}
END_TEST

START_TEST(llama_decode_rows_from_end)
{
	generate(DIR "llama_past_op17.onnx", 2, 48, true);
}
END_TEST

#define D(...) ((const int64_t[]){ __VA_ARGS__ })

/*
 * A toy decoder with past in ONNX: new K/V rows made from input_ids,
 * present.0.* = Concat(past, new) on @axis; logits = ReduceMax over the
 * sequence of present.0.key, plus (@past_elsewhere) that of past.0.value.
 */
static uint8_t *toy(int axis, bool past_elsewhere, size_t *len)
{
	onnxb *b = onnxb_new(8, 17);
	uint8_t *buf;

	onnxb_input(b, "input_ids", ONNXB_I64, 2, D(1, -1));
	onnxb_input(b, "past_key_values.0.key", ONNXB_F32, 4, D(-1, 2, -1, 4));
	onnxb_input(b, "past_key_values.0.value", ONNXB_F32, 4, D(-1, 2, -1, 4));
	onnxb_init_i64(b, "col", 4, D(1, 1, -1, 1));
	onnxb_init_i64(b, "kv", 4, D(1, 2, 1, 4));
	onnxb_attr_i(b, onnxb_node(b, "Cast", NULL, "input_ids", "idf"), "to", ONNXB_F32);
	onnxb_node(b, "Reshape", NULL, "idf,col", "idc");
	onnxb_node(b, "Expand", NULL, "idc,kv", "new");
	onnxb_attr_i(b, onnxb_node(b, "Concat", NULL, "past_key_values.0.key,new", "present.0.key"),
		     "axis", axis);
	onnxb_attr_i(b, onnxb_node(b, "Concat", NULL, "past_key_values.0.value,new",
				   "present.0.value"), "axis", 2);
	onnxb_attr_ints(b, onnxb_node(b, "ReduceMax", NULL, "present.0.key", "mk"), "axes", 1,
			D(2));
	if (past_elsewhere) {
		onnxb_attr_ints(b, onnxb_node(b, "ReduceMax", NULL, "past_key_values.0.value", "mv"),
				"axes", 1, D(2));
		onnxb_node(b, "Add", NULL, "mk,mv", "logits");
	} else {
		onnxb_node(b, "Identity", NULL, "mk", "logits");
	}
	onnxb_output(b, "logits", ONNXB_F32, -1, NULL);
	onnxb_output(b, "present.0.key", ONNXB_F32, -1, NULL);
	onnxb_output(b, "present.0.value", ONNXB_F32, -1, NULL);
	buf = onnxb_pack(b, len);
	onnxb_free(b);
	return buf;
}

/* Compiling @d as program (@maxc, @tokens) fails with @want in its text. */
static void refused(const void *d, size_t n, unsigned maxc, unsigned tokens, const char *want)
{
	struct npu_cmodel *cm = NULL;
	npu_device *dev;

	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_int_ne(gen_compile(d, n, dev, maxc, tokens, &cm), NPU_OK);
	ck_assert_ptr_null(cm);
	ck_assert_msg(strstr(npu_last_error(), want), "'%s' not in: %s", want, npu_last_error());
	npu_device_close(dev);
}

START_TEST(refusals)
{
	struct npu_cmodel *cm;
	npu_device *dev;
	size_t n;
	void *d = npu_test_slurp(DIR "gpt2_tiny_op17.onnx", &n);
	uint8_t *t;

	ck_assert_ptr_nonnull(d);
	refused(d, n, 32, 0, "not exported with past; export with use_cache=True");
	free(d);
	d = npu_test_slurp(DIR "gpt2_past_op17.onnx", &n);
	ck_assert_ptr_nonnull(d);
	refused(d, n, 1, 0, "at least 2 (--max-context)");
	refused(d, n, 8, 16, "a prefill of 16 tokens does not fit a KV cache of 8 positions");
	/* GPT-2's causal table has 128 rows: a decode step at 200 does not fit. */
	refused(d, n, 200, 0, "a smaller --max-context");
	free(d);
	/* The toy compiles as both programs; on axis 1, or reading a past elsewhere, not. */
	t = toy(2, false, &n);
	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_msg(gen_compile(t, n, dev, 8, 0, &cm) == NPU_OK, "%s", npu_last_error());
	npu_cmodel_free(cm);
	ck_assert_msg(gen_compile(t, n, dev, 8, 4, &cm) == NPU_OK, "%s", npu_last_error());
	npu_cmodel_free(cm);
	npu_device_close(dev);
	free(t);
	t = toy(1, false, &n);
	refused(t, n, 8, 0,
		"output 'present.0.key' is not Concat('past_key_values.0.key', new keys) on axis 2");
	refused(t, n, 8, 4, "on another axis");
	free(t);
	t = toy(2, true, &n);
	refused(t, n, 8, 0, "input 'past_key_values.0.value' is read by node");
	refused(t, n, 8, 4, "besides its Concat with the new rows");
	free(t);
}
END_TEST

/*
 * One decode step's simulated cost at @maxc: cycles, DMA bytes; the
 * attention reading the cache still fused (a step per layer).
 */
static void decode_cost(const char *file, unsigned maxc)
{
	size_t n;
	void *d = npu_test_slurp(file, &n);
	int64_t id = 7, pos = 3, *mask = calloc(maxc, sizeof(int64_t)), amax;
	int32_t row = 3;
	float logits[VOCAB];
	struct named in[] = { { "input_ids", &id }, { "position_ids", &pos },
			      { "attention_mask", mask }, { NPU_GEN_KV_ROWS, &row } };
	struct named out[] = { { "logits", logits }, { NPU_GEN_ARGMAX, &amax } };
	struct npu_cmodel *cm;
	npu_step_stats steps[256];
	npu_device_counters c0, c1;
	npu_run_stats rs;
	npu_device *dev;
	npu_context *ctx;
	npu_model *m;
	size_t nsteps;
	int attn = 0;

	ck_assert_ptr_nonnull(d);
	for (int i = 0; i < 4; i++)
		mask[i] = 1;
	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_msg(gen_compile(d, n, dev, maxc, 0, &cm) == NPU_OK, "%s", npu_last_error());
	m = wrap(cm);
	ck_assert_int_eq(npu_context_create(dev, m, 0, &ctx), NPU_OK);
	ck_assert_int_eq(npu_device_read_counters(dev, &c0), NPU_OK);
	ck_assert_msg(run(ctx, cm, in, 4, out, 2) == NPU_OK, "%s", npu_last_error());
	ck_assert_int_eq(npu_device_read_counters(dev, &c1), NPU_OK);
	ck_assert_int_eq(npu_context_last_run(ctx, &rs), NPU_OK);
	ck_assert_int_eq(npu_context_last_run_steps(ctx, steps, 256, &nsteps), NPU_OK);
	for (size_t i = 0; i < nsteps && i < 256; i++)
		attn += !strncmp(steps[i].label, "Attention", 9);
	printf("%s decode step at max_context %u: %llu cycles, %u steps (%d fused attention), %llu DMA + %llu GSDU bytes, state %llu bytes\n",
	       file, maxc, (unsigned long long)rs.device_cycles, rs.steps, attn,
	       (unsigned long long)(c1.dma_bytes[0] + c1.dma_bytes[1] - c0.dma_bytes[0] -
				    c0.dma_bytes[1]),
	       (unsigned long long)(c1.gsdu_bytes - c0.gsdu_bytes),
	       (unsigned long long)state_seg(cm)->size);
	ck_assert_int_eq(attn, 2);
	ck_assert_int_eq(amax, argmax(logits, VOCAB));
	npu_context_destroy(ctx);
	npu_model_free(m);
	npu_device_close(dev);
	free(mask);
	free(d);
}

START_TEST(decode_cost_128)
{
	decode_cost(DIR "gpt2_past_op17.onnx", 64);
	decode_cost(DIR "gpt2_past_op17.onnx", 128);
	decode_cost(DIR "llama_past_op17.onnx", 64);
	decode_cost(DIR "llama_past_op17.onnx", 128);
}
END_TEST

static Suite *generation_suite(void)
{
	Suite *s = suite_create("generation");
	TCase *tc = tcase_create("programs");

	tcase_add_test(tc, gpt2_prefill_decode);
	tcase_add_test(tc, llama_prefill_decode);
	tcase_add_test(tc, llama_decode_rows_from_end);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, decode_cost_128);
	tcase_set_timeout(tc, 600);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(generation_suite)
