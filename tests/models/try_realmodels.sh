#!/bin/sh
# SPDX-License-Identifier: MIT
# The real models of tests/models/README.md that libnpu does not run yet:
# compile each with the shapes an application uses and print the first
# refusal (or that it compiles now, so that it can join
# npu_run_realmodels.sh).  Informational: exits 0 whatever compiles, 1
# only when a model is missing (make check-models fetches them first).
# Usage: try_realmodels.sh [MODELDIR] [NPU_RUN]   (make models first)
set -u
DIR=${1:-${NPU_CACHE:-$HOME/.cache/npu}/models}
BIN=${2:-build/bin/npu-run}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
missing=0

try() {
	model=$1
	shift
	if [ ! -s "$DIR/$model" ]; then
		echo "$model: missing (run make models)"
		missing=1
		return
	fi
	if "$BIN" "$DIR/$model" --device emu --compile-only -o "$TMP/m.npum" "$@" \
		>/dev/null 2>"$TMP/err"; then
		echo "$model: compiles"
	else
		echo "$model: $(sed "s|^npu-run: $DIR/$model: ||" "$TMP/err" | head -1)"
	fi
}

# Every model of tests/models/README.md runs in npu_run_realmodels.sh now.
# Silero VAD v5 does with --fix sr=16000; without it, its If on the input sr
# is decided at run time, so both branches compile, and the 8 kHz one does
# not take 512-sample frames: this prints that refusal.
try silero_vad_v5.onnx --shape input=1x512 --shape state=2x1x128
exit "$missing"
