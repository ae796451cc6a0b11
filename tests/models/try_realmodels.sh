#!/bin/sh
# SPDX-License-Identifier: MIT
# The real models of tests/models/README.md that libnpu does not run yet:
# compile each with the shapes an application uses and print the first
# refusal (or that it compiles now, so that it can join
# npu_run_realmodels.sh).  Informational: always exits 0.
# Usage: try_realmodels.sh [MODELDIR] [NPU_RUN]   (make models first)
set -u
DIR=${1:-${NPU_CACHE:-$HOME/.cache/npu}/models}
BIN=${2:-build/bin/npu-run}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM

try() {
	model=$1
	shift
	if [ ! -s "$DIR/$model" ]; then
		echo "$model: missing (run make models)"
		return
	fi
	if "$BIN" "$DIR/$model" --device emu --compile-only -o "$TMP/m.npum" "$@" \
		>/dev/null 2>"$TMP/err"; then
		echo "$model: compiles"
	else
		echo "$model: $(sed "s|^npu-run: $DIR/$model: ||" "$TMP/err" | head -1)"
	fi
}

# Silero VAD v4 (@ricky0123/vad-web's legacy and openWakeWord's copy): 512
# samples at 16 kHz with the LSTM state h, c carried from frame to frame.
try silero_vad.onnx --shape input=1x512 --shape h=2x1x64 --shape c=2x1x64
# Silero VAD v5: the same with one state tensor.
try silero_vad_v5.onnx --shape input=1x512 --shape state=2x1x128
# openWakeWord's front end: 1280 samples (80 ms) into mel frames.
try melspectrogram.onnx --shape input=1x1280
# openWakeWord's "hey jarvis" classifier.
try hey_jarvis_v0.1.onnx
