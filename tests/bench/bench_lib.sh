# SPDX-License-Identifier: MIT
# shellcheck shell=sh disable=SC2034 # status is the caller's
# make bench: what the model scripts share (sourced, POSIX sh).  The caller
# sets BIN (npu-run), ITER (timed runs per latency figure), TMP (a scratch
# directory) and status=0; a figure that cannot be measured prints
# "not measured: why" (tests/bench/figures.py) and sets status=1.
BENCH=$(dirname "$0")
# fig ARGS...: tests/bench/figures.py (the line format and the bound).
fig() { python3 "$BENCH/figures.py" "$@"; }
export NPU_EMU_STATS=0

# Latency figures with 1 and with all threads (one figure on one CPU).
THREAD_COUNTS=1
if [ "$(nproc)" -gt 1 ]; then THREAD_COUNTS="1 $(nproc)"; fi

# The reference engine, named in the figures by the version make models
# installed.
ORT_DIR=${NPU_CACHE:-$HOME/.cache/npu}/ort/node_modules/onnxruntime-node
ORT=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' \
	"$ORT_DIR/package.json" 2>/dev/null)
ORT="onnxruntime-node${ORT:+ $ORT}"

# why FILE: the last line of a failed command's stderr, for a figure.
why() {
	w=$(tail -n 1 "$1" | cut -c 1-240)
	echo "${w:-no message}"
}

# npu_p50 THREADS MODEL ARGS...: median wall latency (ms) of npu-run on the
# emulator backend with THREADS threads, over $ITER timed runs ($TMP/npu.json).
npu_p50() {
	t=$1 m=$2
	shift 2
	"$BIN" "$m" --device "emu:threads=$t" "$@" --iterations "$ITER" --warmup 5 \
		--percentiles 50 --json >"$TMP/npu.json" 2>"$TMP/npu.err" || return 1
	fig get "$TMP/npu.json" latency_ms.percentiles.0.ms
}

# ort_p50 THREADS MODEL ARGS...: the same in onnxruntime-node with THREADS
# intra-op threads (ARGS: ort_bench.js run's feeds and --out).
ort_p50() {
	t=$1 m=$2
	shift 2
	node "$BENCH/ort_bench.js" run "$m" "$t" "$ITER" 5 "$@" >"$TMP/ort.json" \
		2>"$TMP/ort.err" || return 1
	fig get "$TMP/ort.json" p50_ms
}

# bench_rounds: NPU_BENCH_ROUNDS (default 4), the rounds of an alternated
# figure; fails, saying why, on anything but a count of 1 or more.
bench_rounds() {
	case ${NPU_BENCH_ROUNDS:-4} in
	'' | *[!0-9]* | 0)
		echo "bench: NPU_BENCH_ROUNDS=$NPU_BENCH_ROUNDS: give a count of 1 or more" >&2
		return 1 ;;
	esac
	echo "${NPU_BENCH_ROUNDS:-4}"
}

# ort_round R THREADS MODEL ARGS...: onnxruntime's round R of an
# alternated figure, into $TMP/ort.rR.json; once a round has failed, $ref
# says why and later rounds do not run.
ort_round() {
	round=$1
	shift
	[ -z "$ref" ] || return 0
	if ort_p50 "$@" >/dev/null; then
		mv "$TMP/ort.json" "$TMP/ort.r$round.json"
	else
		ref="onnxruntime failed: $(why "$TMP/ort.err")"
	fi
}

# latency_line NAME THREADS MODEL "NPU_ARGS" "ORT_ARGS": one latency figure,
# ours / onnxruntime's.  The argument strings are split on blanks.  The two
# engines alternate: NPU_BENCH_ROUNDS rounds (default 4) of ITER / rounds
# timed runs each, ours then onnxruntime's, and each side's figure is the
# median of its round medians.  On a shared VM either side's speed moved by
# up to 2x from one minute to the next; alternating puts both in the same
# minutes, so the ratio says more than two back-to-back blocks did.
latency_line() {
	name=$1 t=$2 m=$3
	rounds=$(bench_rounds) || exit 1
	iter=$ITER
	ITER=$(( (iter + rounds - 1) / rounds ))
	ours='' ref='' r=0
	rm -f "$TMP"/npu.r*.json "$TMP"/ort.r*.json
	while [ "$r" -lt "$rounds" ]; do
		# shellcheck disable=SC2086
		if [ -z "$ours" ] && npu_p50 "$t" "$m" $4 >/dev/null; then
			mv "$TMP/npu.json" "$TMP/npu.r$r.json"
		elif [ -z "$ours" ]; then
			ours="npu-run failed: $(why "$TMP/npu.err")"
		fi
		# shellcheck disable=SC2086
		ort_round "$r" "$t" "$m" $5
		r=$((r + 1))
	done
	ITER=$iter
	[ -n "$ours" ] || ours=$(fig median latency_ms.percentiles.0.ms "$TMP"/npu.r*.json)
	[ -n "$ref" ] || ref=$(fig median p50_ms "$TMP"/ort.r*.json)
	s=s
	[ "$t" -eq 1 ] && s=
	fig ratio "$name" "$ours" ms "$ORT, $t thread$s" "$ref" || status=1
	LATENCY_MS=$ours
}

# The host floor's rates (figures.py floor): npu-bench-core --json of this
# make bench run ($NPU_BENCH_RATES, the Makefile's), else measured here
# once per script.
host_rates() {
	if [ -n "${NPU_BENCH_RATES:-}" ]; then
		echo "$NPU_BENCH_RATES"
		return
	fi
	if [ ! -s "$TMP/rates.json" ]; then
		"$(dirname "$BIN")/npu-bench-core" --json "$TMP/rates.json" >"$TMP/rates.out" \
			2>"$TMP/rates.err" || echo "bench: npu-bench-core: $(why "$TMP/rates.err")" >&2
	fi
	echo "$TMP/rates.json"
}

# floor_line PREFIX EMU_MS WORK.json: PREFIX_emu_vs_floor, the emulator's
# wall time of one inference (or decode step) against the host floor of the
# work WORK.json counted (npu-run --profile --json, one inference, or
# --generate --profile --json), and the floor's parts.
floor_line() {
	fig floor "$1" "$2" "$3" "$(host_rates)" || status=1
}

# work_run JSON MODEL ARGS...: one profiled inference on one emulator
# thread, for its work counters; stderr in JSON.err.
work_run() {
	out=$1 m=$2
	shift 2
	"$BIN" "$m" --device emu:threads=1 "$@" --iterations 1 --warmup 0 --profile --json \
		>"$out" 2>"$out.err"
}

# compile_line NAME MODEL NPU_ARGS...: compile time, the median of
# $COMPILES runs of npu-run --compile-only (its load_ms: reading the file,
# parsing, compiling; no device work), against the median of as many
# onnxruntime InferenceSession.create on the same file.
compile_line() {
	name=$1 m=$2
	shift 2
	i=0 files=""
	while [ "$i" -lt "$COMPILES" ]; do
		"$BIN" "$m" "$@" --compile-only -o "$TMP/compiled.npum" --json \
			>"$TMP/compile$i.json" 2>"$TMP/npu.err" || break
		files="$files $TMP/compile$i.json"
		i=$((i + 1))
	done
	if [ "$i" -eq "$COMPILES" ]; then
		# shellcheck disable=SC2086
		ours=$(fig median load_ms $files)
	else
		ours="npu-run --compile-only failed: $(why "$TMP/npu.err")"
	fi
	if node "$BENCH/ort_bench.js" create "$m" "$COMPILES" >"$TMP/ort.json" 2>"$TMP/ort.err"
	then
		ref=$(fig get "$TMP/ort.json" p50_ms)
	else
		ref="onnxruntime failed: $(why "$TMP/ort.err")"
	fi
	fig ratio "$name" "$ours" ms "$ORT session creation" "$ref" '%.1f' || status=1
}
