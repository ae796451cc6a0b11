#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench, LLM decode figures (issue 16 section 5), each measured in this
# run next to its reference and printed as
#
#   NAME: VALUE UNIT (REF: VALUE UNIT, ratio R)
#
#  - llm_decode_simulated_tokens_per_s_<model>_<precision>: simulated decode
#    tokens/s of a generation session (npu-run --generate, greedy, the
#    cycles of the decode program at the modelled clock) against the DDR
#    bound: DDR bandwidth / the bytes a token must read (every weight once
#    at the precision the device stores it, plus the whole KV cache;
#    llm_bytes.py); ratio = simulated / bound (goal >= 0.85).  Models: the
#    LLaMA-style test model (tests/models/transformers/llama_past_op17,
#    max context 128, its position table's limit) in bf16 and w8, and
#    LLaMA-2-7B's dimensions (hidden 4096, 32 heads, FFN 11008, vocabulary
#    32000; gen_llama_slice.py, 2 layers with seeded weights, made once
#    into the cache) at max context 512 in bf16, w8 and as 4-bit
#    MatMulNBits: the two layers' decode cycles and bytes scaled to 32
#    layers, the embedding, final norm and LM head once (the line says so);
#  - llm_decode_emu_latency_1t_<model>: median wall time of a decode step on
#    the emulator backend with one thread, against onnxruntime-node with
#    one intra-op thread running one decode step of the same ONNX file
#    with a cache of the same length (decode_feeds.py); ratio = ours /
#    onnxruntime;
#  - llm_decode_<model>_emu_vs_floor: the same one-thread decode step
#    against the host floor of the work a decode step does (the profiled
#    session's decode_work per step; figures.py floor), then its parts.
# Any figure that cannot be measured says "not measured: why" and the
# script exits 1.
# Usage: bench_llm.sh MODELDIR NPU_RUN
# Environment: NPU_BENCH_TOKENS (tokens generated per run of the 7B
# dimensions, default 8; the test model generates 64).
set -u

DIR=$1
BIN=$2
TOKENS=${NPU_BENCH_TOKENS:-8}
case $TOKENS in
'' | *[!0-9]* | 0 | 1) echo "bench: NPU_BENCH_TOKENS=$TOKENS: give 2 or more" >&2; exit 1 ;;
esac
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
status=0
# shellcheck source=tests/bench/bench_lib.sh
. "$(dirname "$0")/bench_lib.sh"
PY=/usr/bin/python3	# Debian's, with python3-onnx and python3-numpy (make deps)
PROMPT=1,2,3,4,5

# The 7B-dimension slices, keyed by the generator's bytes: a changed
# generator makes new ones (and the old ones are removed).
SLICES=${NPU_CACHE:-$HOME/.cache/npu}/bench
KEY=$(sha256sum "$BENCH/gen_llama_slice.py" | cut -c 1-12)
SLICE=$SLICES/llama2_7b_slice2_$KEY.onnx
SLICE4=$SLICES/llama2_7b_slice2_q4_$KEY.onnx
make_slice() {
	out=$1
	shift
	[ -f "$out" ] && [ -f "$out.data" ] && return 0
	mkdir -p "$SLICES" || return 1
	echo "bench: generating $out (once per generator version)" >&2
	"$PY" "$BENCH/gen_llama_slice.py" "$out" "$@" >"$TMP/gen.out" 2>"$TMP/gen.err" || return 1
}
find "$SLICES" -maxdepth 1 -name 'llama2_7b_slice2_*' ! -name "*_$KEY.onnx*" \
	-exec rm -f {} + 2>/dev/null
slice_ok=1
make_slice "$SLICE" || slice_ok=0
slice4_ok=1
make_slice "$SLICE4" --nbits 4 --block 32 || slice4_ok=0

# generate NAME MODEL MAX_CONTEXT DEVICE [NPU_ARGS...]: one generation
# session with the decode profile, into $TMP/NAME.json.
generate() {
	name=$1 m=$2 ctx=$3 dev=$4
	shift 4
	"$BIN" "$m" --device "$dev" --generate "$N" --prompt-ids "$PROMPT" \
		--max-context "$ctx" --percentiles 50 --profile --json "$@" \
		>"$TMP/$name.json" 2>"$TMP/$name.err"
}

# decode_line NAME MODEL MAX_CONTEXT PRECISION [LAYERS]: the simulated
# figure of $TMP/NAME.json (run by generate) against the DDR bound.
decode_line() {
	name=$1 m=$2 ctx=$3 prec=$4 layers=${5:-}
	fig_name=llm_decode_simulated_tokens_per_s_$name
	if [ ! -s "$TMP/$name.json" ]; then
		fig ratio "$fig_name" "npu-run --generate failed: $(why "$TMP/$name.err")" \
			tokens/s "DDR bound" "not computed without a run" || true
		status=1
		return
	fi
	bytes_prec=bf16
	[ "$prec" = w8 ] && bytes_prec=w8
	if ! "$PY" "$BENCH/llm_bytes.py" "$m" "$bytes_prec" "$ctx" >"$TMP/$name.bytes" \
		2>"$TMP/bytes.err"; then
		fig ratio "$fig_name" "$(fig get "$TMP/$name.json" simulated.tokens_per_s)" \
			tokens/s "DDR bound" "llm_bytes.py failed: $(why "$TMP/bytes.err")" || true
		status=1
		return
	fi
	# shellcheck disable=SC2086
	fig llm "$fig_name" "$TMP/$name.json" "$TMP/$name.bytes" $layers || status=1
}

# latency_decode NAME MODEL MAX_CONTEXT [ROUNDS]: ours (the median decode
# step of $TMP/NAME.json, run by generate with one emulator thread) against
# one onnxruntime decode step.  With ROUNDS > 1 the two alternate, as in
# latency_line: ROUNDS - 1 further generations (into $TMP/NAME.rR.json) and
# ROUNDS onnxruntime runs of ITER / ROUNDS steps each, ours then theirs,
# each side's figure the median of its rounds'.  The test model's step
# takes 0.2-0.4 ms, and onnxruntime's measured 0.17 to 0.38 ms from one
# process to the next when taken in one block.
latency_decode() {
	name=$1 m=$2 ctx=$3 rounds=${4:-1}
	ours='' ref='' r=0 iter=$ITER
	rm -f "$TMP/$name".r*.json "$TMP"/ort.r*.json
	if [ ! -s "$TMP/$name.json" ]; then
		ours="npu-run --generate failed: $(why "$TMP/$name.err")"
	fi
	if feeds=$("$PY" "$BENCH/decode_feeds.py" "$m" "$ctx" "$TMP/feeds" 2>"$TMP/ort.err"); then
		ITER=$(( (iter + rounds - 1) / rounds ))
		while [ "$r" -lt "$rounds" ]; do
			# a subshell: generate sets name, m and ctx
			if [ -z "$ours" ] && [ "$r" -gt 0 ] &&
			   ! (generate "$name.r$r" "$m" "$ctx" emu:threads=1); then
				ours="npu-run --generate failed: $(why "$TMP/$name.r$r.err")"
			fi
			# shellcheck disable=SC2086
			ort_round "$r" 1 "$m" $feeds
			r=$((r + 1))
		done
		ITER=$iter
		[ -n "$ref" ] || ref=$(fig median p50_ms "$TMP"/ort.r*.json)
	else
		ref="decode_feeds.py failed: $(why "$TMP/ort.err")"
	fi
	rm -rf "$TMP/feeds"
	set -- "$TMP/$name.json"
	for f in "$TMP/$name".r*.json; do
		[ -e "$f" ] && set -- "$@" "$f"
	done
	[ -n "$ours" ] || ours=$(fig median token_latency_ms.percentiles.0.ms "$@")
	fig ratio "llm_decode_emu_latency_1t_$name" "$ours" ms \
		"$ORT, 1 thread, one decode step, cache $ctx" "$ref" || status=1
	floor_line "llm_decode_$name" "$ours" "$TMP/$name.json"
}

# ---- the LLaMA-style test model ----
TEST=$DIR/llama_past_op17.onnx
ITER=${NPU_BENCH_ITERATIONS:-40}
N=64
generate llama_test_bf16 "$TEST" 128 emu:threads=1
generate llama_test_w8 "$TEST" 128 emu --precision w8
decode_line llama_test_bf16 "$TEST" 128 bf16
decode_line llama_test_w8 "$TEST" 128 w8
ROUNDS=$(bench_rounds) || exit 1
latency_decode llama_test_bf16 "$TEST" 128 "$ROUNDS"

# ---- LLaMA-2-7B's dimensions, 2 layers scaled to 32 ----
ITER=${NPU_BENCH_LLM_ITERATIONS:-5}
N=$TOKENS
if [ "$slice_ok" = 1 ]; then
	generate llama2_7b_bf16 "$SLICE" 512 emu:threads=1
	generate llama2_7b_w8 "$SLICE" 512 emu --precision w8
else
	cp "$TMP/gen.err" "$TMP/llama2_7b_bf16.err"
	cp "$TMP/gen.err" "$TMP/llama2_7b_w8.err"
fi
if [ "$slice4_ok" = 1 ]; then
	generate llama2_7b_q4 "$SLICE4" 512 emu
else
	cp "$TMP/gen.err" "$TMP/llama2_7b_q4.err"
fi
decode_line llama2_7b_bf16 "$SLICE" 512 bf16 32
decode_line llama2_7b_w8 "$SLICE" 512 w8 32
decode_line llama2_7b_q4 "$SLICE4" 512 q4 32
if [ "$slice_ok" = 1 ]; then
	latency_decode llama2_7b_bf16 "$SLICE" 512
else
	fig ratio llm_decode_emu_latency_1t_llama2_7b_bf16 \
		"the model was not generated: $(why "$TMP/llama2_7b_bf16.err")" ms "$ORT" "not run" || true
	floor_line llm_decode_llama2_7b_bf16 "the model was not generated" "$TMP/llama2_7b_bf16.json"
	status=1
fi
echo "goals: decode bound ratios >= 0.85; latency ratios printed;" \
	"emulator within 1.5x of its floor" >&2
exit $status
