// SPDX-License-Identifier: MIT
/*
 * Generation sessions (gen/generator.c): options and arguments refused
 * before anything is compiled or run, and the session's protocol (which
 * I/O elements it writes for prefill and each decode step, buckets, the
 * ids it returns, stops) against a stand-in program that keeps the
 * npu_compile_generation I/O contract but has no cache: its logits echo
 * what the host wrote.  The real programs run end to end against
 * onnxruntime in tests/models/generate_test.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/npu_compile.h"
#include "gen/npu_generator.h"
#include "npu.h"
#include "npu_test.h"
#include "onnx_build.h"

static const char *const model = "tests/models/transformers/gpt2_past_op17.onnx";

static npu_status try_create(npu_device *dev, const npu_generator_options *o)
{
	npu_generator *gen = (npu_generator *)1;
	npu_status st = npu_generator_create(dev, model, o, &gen);

	ck_assert_ptr_null(gen);
	return st;
}

START_TEST(options_defaults)
{
	npu_generator_options o;

	memset(&o, 0xff, sizeof(o));
	npu_generator_options_init(&o);
	ck_assert_uint_eq(o.struct_size, sizeof(o));
	ck_assert_uint_eq(o.max_context, 512);
	ck_assert_int_eq(o.sampling, NPU_SAMPLING_GREEDY);
	ck_assert_int_eq(o.eos_id, -1);
	ck_assert_uint_eq(o.max_new_tokens, 0);
	ck_assert(o.temperature == 1.0f);
}
END_TEST

START_TEST(bad_options_refused)
{
	npu_generator_options o;
	npu_device *dev;

	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	npu_generator_options_init(&o);
	o.max_context = 0;
	ck_assert_int_eq(try_create(dev, &o), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "max_context 0"));
	o.max_context = 65537;
	ck_assert_int_eq(try_create(dev, &o), NPU_ERR_INVALID_ARG);
	npu_generator_options_init(&o);
	o.precision = NPU_PRECISION_INT8;
	ck_assert_int_eq(try_create(dev, &o), NPU_ERR_UNSUPPORTED);
	npu_generator_options_init(&o);
	o.sampling = NPU_SAMPLING_RANDOM;
	o.temperature = 0;
	ck_assert_int_eq(try_create(dev, &o), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "temperature"));
	o.temperature = 1;
	o.top_p = 1.5f;
	ck_assert_int_eq(try_create(dev, &o), NPU_ERR_INVALID_ARG);
	npu_generator_options_init(&o);
	o.clusters = 15;
	ck_assert_int_eq(try_create(dev, &o), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "healthy clusters"));
	npu_generator_options_init(&o);
	o.struct_size = 3;
	ck_assert_int_eq(try_create(dev, &o), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "npu_generator_options_init"));
	npu_device_close(dev);
}
END_TEST

START_TEST(bad_arguments_refused)
{
	npu_generator_stats stats = { .struct_size = sizeof(stats) };
	npu_generator *gen = (npu_generator *)1;
	npu_device *dev;
	const float *lg;
	size_t n;
	int64_t id;

	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	ck_assert_int_eq(npu_generator_create(dev, "/nonexistent/model.onnx", NULL, &gen),
			 NPU_ERR_IO);
	ck_assert_ptr_null(gen);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "/nonexistent/model.onnx"));
	ck_assert_int_eq(npu_generator_create(NULL, model, NULL, &gen), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_generator_create(dev, model, NULL, NULL), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_generator_feed(NULL, &id, 1), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_generator_step(NULL, &id), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_generator_logits(NULL, &lg, &n), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_generator_get_stats(NULL, &stats), NPU_ERR_INVALID_ARG);
	npu_generator_free(NULL);
	ck_assert_str_eq(npu_status_str(NPU_ERR_CONTEXT_FULL), "generation context full");
	npu_device_close(dev);
}
END_TEST


/*
 * The stand-in program, V logits per token: columns 0..V-5 pick the next
 * id, next(id) = (5 id + 3) % (V - 4), by 8 against at most 0.4; the last
 * four echo, as -(100 + x) or -x (exact in bf16), the attention_mask's sum
 * (V-4), the position (V-3), the cache row (V-2) and the id (V-1).
 */
#define FV	16
#define FPOS	64

static int64_t fake_next(int64_t id)
{
	return (5 * id + 3) % (FV - 4);
}

static unsigned fake_compiles[FPOS + 1];

static npu_status fake_compile(const void *data, size_t size,
			       const struct npu_compile_target *tgt,
			       const struct npu_gen_program *prog, struct npu_cmodel **out)
{
	unsigned s = prog->tokens ? prog->tokens : 1;
	unsigned l = prog->tokens ? prog->tokens : prog->max_context;
	int64_t ids_dims[2] = { 1, s }, mask_dims[2] = { 1, l }, rows_dims[1] = { s };
	int64_t logit_dims[3] = { 1, s, FV }, tab_dims[2] = { FV, FV }, pos_dims[2] = { FPOS, FV };
	int64_t m_dims[2] = { l, FV }, v_dims[1] = { FV };
	static float t[FV * FV], p[FPOS * FV], m[FPOS * FV], r[FV];
	onnxb *b = onnxb_new(8, 17);
	Onnx__NodeProto *n;
	npu_ir_graph *g = NULL;
	uint8_t *bytes;
	size_t len;
	npu_status st;

	(void)data;
	(void)size;
	fake_compiles[prog->tokens]++;
	memset(t, 0, sizeof(t));
	memset(p, 0, sizeof(p));
	memset(m, 0, sizeof(m));
	memset(r, 0, sizeof(r));
	for (int i = 0; i < FV; i++) {
		for (int j = 0; j < FV - 4; j++)
			t[i * FV + j] = j == fake_next(i) ? 8.0f : 0.1f * (float)((i + j) % 5);
		t[i * FV + FV - 4] = -100;
		t[i * FV + FV - 1] = (float)(-100 - i);
	}
	for (int i = 0; i < FPOS; i++) {
		p[i * FV + FV - 3] = (float)-i;
		m[i * FV + FV - 4] = -1;
	}
	r[FV - 2] = -1;
	onnxb_input(b, "input_ids", ONNXB_I64, 2, ids_dims);
	onnxb_input(b, "attention_mask", ONNXB_I64, 2, mask_dims);
	onnxb_input(b, "position_ids", ONNXB_I64, 2, ids_dims);
	onnxb_input(b, "npu.kv_rows", ONNXB_I32, 1, rows_dims);
	onnxb_output(b, "logits", ONNXB_F32, 3, logit_dims);
	onnxb_output(b, "npu.argmax", ONNXB_I64, 2, ids_dims);
	onnxb_init_f32(b, "T", 2, tab_dims, t);
	onnxb_init_f32(b, "P", 2, pos_dims, p);
	onnxb_init_f32(b, "M", 2, m_dims, m);
	onnxb_init_f32(b, "R", 1, v_dims, r);
	onnxb_init_i64(b, "ax02", 2, (const int64_t[]){ 0, 2 });
	onnxb_init_i64(b, "ax1", 1, (const int64_t[]){ 1 });
	onnxb_node(b, "Gather", "by_id", "T,input_ids", "e");
	onnxb_node(b, "Gather", "by_pos", "P,position_ids", "pe");
	n = onnxb_node(b, "Cast", "rows_f", "npu.kv_rows", "rf");
	onnxb_attr_i(b, n, "to", ONNXB_F32);
	onnxb_node(b, "Unsqueeze", "rows_u", "rf,ax02", "ru");
	onnxb_node(b, "Mul", "rows_v", "ru,R", "re");
	n = onnxb_node(b, "Cast", "mask_f", "attention_mask", "mf");
	onnxb_attr_i(b, n, "to", ONNXB_F32);
	onnxb_node(b, "MatMul", "mask_sum", "mf,M", "ms");
	onnxb_node(b, "Unsqueeze", "mask_u", "ms,ax1", "me");
	onnxb_node(b, "Add", "add1", "e,pe", "a1");
	onnxb_node(b, "Add", "add2", "a1,re", "a2");
	onnxb_node(b, "Add", "add3", "a2,me", "logits");
	n = onnxb_node(b, "ArgMax", "argmax", "logits", "npu.argmax");
	onnxb_attr_i(b, n, "axis", 2);
	onnxb_attr_i(b, n, "keepdims", 0);
	bytes = onnxb_pack(b, &len);
	onnxb_free(b);
	st = npu_compile_parse(bytes, len, tgt, &g);
	if (!st)
		st = npu_compile_ir(g, tgt, out);
	npu_ir_graph_free(g);
	free(bytes);
	return st;
}

/* The logits row the stand-in gives for @id at @pos (its row) with @mask ones. */
static void check_row(npu_generator *gen, int64_t id, unsigned pos, unsigned mask)
{
	const float *lg;
	size_t n;

	ck_assert_int_eq(npu_generator_logits(gen, &lg, &n), NPU_OK);
	ck_assert_uint_eq(n, FV);
	ck_assert_msg(lg[FV - 1] == (float)(-100 - id) && lg[FV - 3] == -(float)pos &&
		      lg[FV - 2] == -(float)pos && lg[FV - 4] == (float)(-100 - (int)mask),
		      "want id %lld pos %u mask %u; the program saw id %g pos %g row %g mask %g",
		      (long long)id, pos, mask, -100 - lg[FV - 1], -lg[FV - 3], -lg[FV - 2],
		      -100 - lg[FV - 4]);
	ck_assert(fabsf(lg[fake_next(id)] - 8.0f) < 0.1f);
}

static npu_generator *fake_session(npu_device *dev, const npu_generator_options *o)
{
	npu_generator *gen = NULL;
	npu_status st;

	npu_gen_compile = fake_compile;
	memset(fake_compiles, 0, sizeof(fake_compiles));
	st = npu_generator_create(dev, model, o, &gen);
	ck_assert_msg(st == NPU_OK, "%s", npu_last_error());
	return gen;
}

START_TEST(session_protocol)
{
	npu_generator_stats stats = { .struct_size = sizeof(stats) };
	const int64_t prompt[5] = { 3, 1, 4, 1, 5 };
	npu_generator_options o;
	npu_device *dev;
	npu_generator *gen;
	int64_t id, last = prompt[4], bad = FV;
	unsigned steps = 0;
	uint64_t dma = 0;
	npu_status st;

	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	npu_generator_options_init(&o);
	o.max_context = 32;
	gen = fake_session(dev, &o);
	ck_assert_uint_eq(fake_compiles[0], 1);		/* decode at create */
	ck_assert_uint_eq(fake_compiles[16], 0);	/* prefill on first use */
	ck_assert_int_eq(npu_generator_feed(gen, &bad, 1), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "id 16, outside the vocabulary of 16"));
	ck_assert_int_eq(npu_generator_feed(gen, prompt, 5), NPU_OK);
	ck_assert_uint_eq(fake_compiles[16], 1);
	/* The prefill's row of the last prompt token: 5 ones in its mask. */
	check_row(gen, prompt[4], 4, 5);
	for (;;) {
		npu_device_counters c0, c1;

		ck_assert_int_eq(npu_device_read_counters(dev, &c0), NPU_OK);
		st = npu_generator_step(gen, &id);
		if (st)
			break;
		ck_assert_int_eq(npu_device_read_counters(dev, &c1), NPU_OK);
		steps++;
		ck_assert_int_eq(id, fake_next(last));
		npu_generator_get_stats(gen, &stats);
		if (steps == 1) {
			check_row(gen, prompt[4], 4, 5);
			ck_assert_uint_eq(stats.step_cycles, 0);
		} else {
			/* Decode of the token before at row 3 + steps, mask rows 0..that. */
			check_row(gen, last, 3 + steps, 4 + steps);
			ck_assert_uint_gt(stats.step_cycles, 0);
			/* The step's DMA bytes, as the device's counters give them. */
			ck_assert_uint_gt(stats.step_dma_bytes, 0);
			ck_assert_uint_eq(stats.step_dma_bytes,
					  c1.dma_bytes[0] + c1.dma_bytes[1] -
					  c0.dma_bytes[0] - c0.dma_bytes[1]);
			dma += stats.step_dma_bytes;
		}
		last = id;
	}
	ck_assert_uint_eq(stats.decode_dma_bytes, dma);
	ck_assert_int_eq(st, NPU_ERR_CONTEXT_FULL);
	ck_assert_uint_eq(steps, 32 - 5 + 1);
	npu_generator_get_stats(gen, &stats);
	ck_assert_uint_eq(stats.position, 32);
	ck_assert_uint_eq(stats.generated, steps);
	ck_assert_uint_eq(stats.decode_runs, steps - 1);
	ck_assert_int_eq(stats.stop, NPU_GEN_STOP_CONTEXT);
	ck_assert_uint_eq(stats.prefill_tokens, 16);
	ck_assert(stats.first_token_us > 0 && stats.decode_cycles > 0);
	ck_assert_int_eq(npu_generator_step(gen, &id), NPU_ERR_CONTEXT_FULL);
	npu_generator_free(gen);
	npu_gen_compile = npu_compile_generation;
	npu_device_close(dev);
}
END_TEST

START_TEST(session_stops_and_follow_up)
{
	npu_generator_stats stats = { .struct_size = sizeof(stats) };
	int64_t prompt[25], id, first, more[2] = { 7, 2 };
	npu_generator_options o;
	npu_device *dev;
	npu_generator *gen;

	for (int i = 0; i < 25; i++)
		prompt[i] = i % FV;
	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	npu_generator_options_init(&o);
	o.max_context = 24;
	o.max_new_tokens = 2;
	o.eos_id = fake_next(fake_next(7));
	gen = fake_session(dev, &o);
	/* 20 tokens: the bucket is the whole cache (24), not 32. */
	ck_assert_int_eq(npu_generator_step(gen, &id), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_generator_feed(gen, prompt, 25), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "25 tokens, more than the maximum context of 24"));
	ck_assert_int_eq(npu_generator_feed(gen, prompt, 20), NPU_OK);
	ck_assert_uint_eq(fake_compiles[24], 1);
	ck_assert_int_eq(npu_generator_step(gen, &first), NPU_OK);
	ck_assert_int_eq(first, fake_next(prompt[19]));
	ck_assert_int_eq(npu_generator_step(gen, &id), NPU_OK);
	ck_assert_int_eq(id, fake_next(first));
	npu_generator_get_stats(gen, &stats);
	ck_assert_int_eq(stats.stop, NPU_GEN_STOP_MAX_TOKENS);
	ck_assert_int_eq(npu_generator_step(gen, &id), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "max_new_tokens"));
	/* A follow-up turn: the pending id (row 21) then 7 and 2 through decode. */
	ck_assert_int_eq(npu_generator_feed(gen, more, 1), NPU_OK);
	check_row(gen, more[0], 22, 23);
	npu_generator_get_stats(gen, &stats);
	ck_assert_uint_eq(stats.position, 23);
	ck_assert_int_eq(stats.stop, NPU_GEN_RUNNING);
	ck_assert_int_eq(npu_generator_step(gen, &id), NPU_OK);
	ck_assert_int_eq(id, fake_next(7));
	ck_assert_int_eq(npu_generator_step(gen, &id), NPU_OK);	/* row 23, the last */
	ck_assert_int_eq(id, o.eos_id);
	npu_generator_get_stats(gen, &stats);
	ck_assert_int_eq(stats.stop, NPU_GEN_STOP_EOS);
	ck_assert_uint_eq(stats.position, 24);
	/* The eos id is pending and the cache full: a feed does not fit. */
	ck_assert_int_eq(npu_generator_feed(gen, more, 1), NPU_ERR_CONTEXT_FULL);
	npu_generator_free(gen);
	npu_gen_compile = npu_compile_generation;
	npu_device_close(dev);
}
END_TEST

START_TEST(session_sampling)
{
	const int64_t prompt[3] = { 9, 2, 6 };
	npu_generator_options o;
	npu_device *dev;
	npu_generator *a, *b;
	int64_t ia, ib, last = prompt[2];

	ck_assert_int_eq(npu_device_open("emu", &dev), NPU_OK);
	npu_generator_options_init(&o);
	o.max_context = 16;
	o.clusters = 2;		/* two sessions on one device */
	o.sampling = NPU_SAMPLING_RANDOM;
	o.top_k = 1;
	a = fake_session(dev, &o);
	o.top_k = 0;
	o.temperature = 0.5f;
	o.seed = 99;
	b = fake_session(dev, &o);
	ck_assert_int_eq(npu_generator_feed(a, prompt, 3), NPU_OK);
	ck_assert_int_eq(npu_generator_feed(b, prompt, 3), NPU_OK);
	/* top-k 1 is greedy; a margin of 7.6 at temperature 0.5 (e^-15) is too. */
	for (int k = 0; k < 8; k++) {
		ck_assert_int_eq(npu_generator_step(a, &ia), NPU_OK);
		ck_assert_int_eq(npu_generator_step(b, &ib), NPU_OK);
		ck_assert_int_eq(ia, fake_next(last));
		ck_assert_int_eq(ib, ia);
		last = ia;
	}
	npu_generator_free(a);
	npu_generator_free(b);
	npu_gen_compile = npu_compile_generation;
	npu_device_close(dev);
}
END_TEST

static Suite *generator_suite(void)
{
	Suite *s = suite_create("generator");
	TCase *tc = tcase_create("generator");

	tcase_add_test(tc, options_defaults);
	tcase_add_test(tc, bad_options_refused);
	tcase_add_test(tc, bad_arguments_refused);
	tcase_add_test(tc, session_protocol);
	tcase_add_test(tc, session_stops_and_follow_up);
	tcase_add_test(tc, session_sampling);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(generator_suite)
