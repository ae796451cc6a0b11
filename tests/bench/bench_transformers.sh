#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench, transformer figures (issue 15 part 6), each measured in this
# run next to its reference and printed as
#
#   NAME: VALUE UNIT (REF: VALUE UNIT, ratio R)
#
#  - bert_emu_latency_1t / _Nt: the BERT-style encoder (bert_tiny_op17,
#    batch 1, sequence 128), median wall latency on the emulator backend
#    with 1 and with all threads, against onnxruntime-node with the same
#    intra-op threads on the same token ids, mask and type ids
#    (token_inputs.py writes them once; both engines read the files);
#    ratio = ours / onnxruntime (goal <= 1.0).  The two engines' outputs
#    are compared too: a mismatch prints FAIL and fails the target;
#  - bert_emu_vs_floor: the one-thread latency against the host floor of
#    one inference (figures.py floor), then the floor's parts;
#  - bert_simulated_throughput: the same model and input, one profiled run
#    (a pipelined batch of 8 if the compiler takes it, else batch 1; the
#    line says which), simulated inferences/s against seed 002's
#    three-bound lower bound of that run (figures.py three_bound, the
#    definition BlazeFace's figure uses); ratio = simulated / bound (goal
#    >= 0.9);
#  - compile_<model>[_s<S>]: compile time of every test model (sequence 16;
#    BERT also 128 and 512), npu-run --compile-only's load_ms, against
#    onnxruntime-node's InferenceSession.create on the same file; medians of
#    NPU_BENCH_COMPILES (default 5) each; ratio = ours / onnxruntime.
# Any figure that cannot be measured says "not measured: why" and the
# script exits 1.
# Usage: bench_transformers.sh MODELDIR NPU_RUN
set -u

DIR=$1
BIN=$2
ITER=${NPU_BENCH_ITERATIONS:-40}
COMPILES=${NPU_BENCH_COMPILES:-5}
case $COMPILES in
'' | *[!0-9]* | 0) echo "bench: NPU_BENCH_COMPILES=$COMPILES: give a count of 1 or more" >&2; exit 1 ;;
esac
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
status=0
# shellcheck source=tests/bench/bench_lib.sh
. "$(dirname "$0")/bench_lib.sh"

# npu-run's --shape and --input arguments for BERT at sequence S, batch 1,
# and ort_bench.js's feeds for the same files (in $TMP/bert_sS).
bert_shapes() {
	echo "--shape input_ids=1x$1 --shape attention_mask=1x$1 --shape token_type_ids=1x$1"
}
bert_inputs() {
	for n in input_ids attention_mask token_type_ids; do
		printf ' --input %s=%s' "$n" "$TMP/bert_s$1/$n.bin"
	done
}
bert_feeds() {
	for n in input_ids attention_mask token_type_ids; do
		printf ' %s=%s:int64:1x%s' "$n" "$TMP/bert_s$1/$n.bin" "$1"
	done
}

# ---- BERT, sequence 128: latency and simulated throughput ----
BERT=$DIR/bert_tiny_op17.onnx
SEQ=128
python3 "$BENCH/token_inputs.py" "$TMP/bert_s$SEQ" "$SEQ" || exit 1
NPU_ARGS="$(bert_shapes $SEQ)$(bert_inputs $SEQ)"
EMU_1T="no one-thread latency"
for t in $THREAD_COUNTS; do
	latency_line "bert_emu_latency_${t}t" "$t" "$BERT" \
		"$NPU_ARGS --output-dir $TMP/npu_out" "$(bert_feeds $SEQ) --out $TMP/ort_out"
	[ "$t" -eq 1 ] && EMU_1T=$LATENCY_MS
done
# shellcheck disable=SC2086
work_run "$TMP/work.json" "$BERT" $NPU_ARGS ||
	echo "bench: bert work run: $(why "$TMP/work.json.err")" >&2
floor_line bert "$EMU_1T" "$TMP/work.json"

# The latency is only worth printing for the right answer: each output of
# the last runs, ours against onnxruntime's (bf16 on the device: the bounds
# of make check-models).
for f in "$TMP"/ort_out/*.bin; do
	if [ ! -f "$f" ] || [ ! -f "$TMP/npu_out/${f##*/}" ]; then continue; fi
	python3 - "$TMP/npu_out/${f##*/}" "$f" <<'PY' || status=1
import math, struct, sys
a, b = (open(p, 'rb').read() for p in sys.argv[1:3])
name = sys.argv[2].rsplit('/', 1)[-1]
if len(a) != len(b) or not a:
    print('FAIL: bert %s: %d bytes from npu-run, %d from onnxruntime' % (name, len(a), len(b)))
    sys.exit(1)
x = struct.unpack('<%df' % (len(a) // 4), a)
y = struct.unpack('<%df' % (len(b) // 4), b)
nx, ny = math.sqrt(sum(p * p for p in x)), math.sqrt(sum(q * q for q in y))
cos = sum(p * q for p, q in zip(x, y)) / (nx * ny) if nx and ny else 0.0
err, rng = max(abs(p - q) for p, q in zip(x, y)), max(y) - min(y)
msg = 'bert %s: cosine %.6f, max error %.2f%% of range' % (name, cos, 100 * err / rng)
if cos >= 0.999 and err <= 0.02 * rng:
    sys.stderr.write('outputs: %s\n' % msg)
else:
    print('FAIL: %s (bounds: cosine >= 0.999, error <= 2%%)' % msg)
    sys.exit(1)
PY
done

# One profiled run: a pipelined batch of 8 when the compiler takes it.
prof() {
	# shellcheck disable=SC2086
	"$BIN" "$BERT" --device emu $NPU_ARGS --batch "$1" --iterations 1 --warmup 0 --profile \
		--json >"$TMP/prof.json" 2>"$TMP/prof.err"
}
if prof 8; then
	fig throughput bert_simulated_throughput "$TMP/prof.json" "batch 8 pipelined" || status=1
elif cp "$TMP/prof.err" "$TMP/prof8.err" && prof 1; then
	echo "bench: bert --batch 8: $(why "$TMP/prof8.err")" >&2
	fig throughput bert_simulated_throughput "$TMP/prof.json" \
		"batch 1, --batch 8 failed (stderr says why)" || status=1
else
	fig ratio bert_simulated_throughput "npu-run --profile failed: $(why "$TMP/prof.err")" \
		inferences/s "three-bound lower bound" "not computed without a run" || true
	status=1
fi

# ---- Compile time of every test model ----
for op in 14 17; do
	for s in 16 128 512; do
		# shellcheck disable=SC2046
		compile_line "compile_bert_tiny_op${op}_s$s" "$DIR/bert_tiny_op$op.onnx" $(bert_shapes "$s")
	done
	for m in gpt2 llama; do
		compile_line "compile_${m}_tiny_op${op}_s16" "$DIR/${m}_tiny_op$op.onnx" \
			--shape input_ids=1x16
	done
	compile_line "compile_vit_tiny_op$op" "$DIR/vit_tiny_op$op.onnx" \
		--shape pixel_values=1x3x32x32
done
echo "goals: latency ratios <= 1.0; bound ratio >= 0.9; compile times printed;" \
	"emulator within 1.5x of its floor" >&2
exit $status
