#!/bin/sh
# SPDX-License-Identifier: MIT
# The control-flow test models (tests/models/control) through npu-run on
# the emulator on the inputs ort_control.js ran: every float output
# against onnxruntime's (close.py: cosine >= 0.999, max error <= 2% of
# its range), an int64 output (early_exit's iteration count) exactly.
# Each case also checks from --profile --json that only the steps of
# the path taken ran: the Loop's body as many times as it iterated.
# Usage: npu_run_control.sh MODELDIR REFDIR [NPU_RUN]
set -u

# shellcheck source=tests/models/run_common.sh
. "$(dirname "$0")/run_common.sh"

DIR=$1
REF=$2
npu_run_at "${3-}"

# ran JSON LABEL: how many steps of the run npu-run profiled are LABEL.
ran() {
	python3 -c "import json, sys; print(sum(s['label'] == sys.argv[2] for s in json.load(open(sys.argv[1]))['profile']['steps']))" "$1" "$2"
}

# int64 FILE: the one little-endian int64 in FILE.
int64() {
	python3 -c "import struct, sys; print(struct.unpack('<q', open(sys.argv[1], 'rb').read(8))[0])" "$1"
}

# sign FILE: pos when the float32 values in FILE sum to more than 0, else neg.
sign() {
	python3 -c "import struct, sys; b = open(sys.argv[1], 'rb').read(); print('pos' if sum(struct.unpack('<%df' % (len(b) // 4), b)) > 0 else 'neg')" "$1"
}

# path MODEL CASE JSON: the steps that ran are those of the path onnxruntime took.
path() {
	if [ "$1" = steps_branch ]; then
		iters=$(int64 "$REF/$1/$2/in_n.bin") body="Gemm /lin/Gemm"
		if [ "$(sign "$REF/$1/$2/h.bin")" = pos ]; then
			taken="Gemm /a/Gemm" skipped="Gemm /b/Gemm"
		else
			taken="Gemm /b/Gemm" skipped="Gemm /a/Gemm"
		fi
	elif [ "$1" = early_exit ]; then
		iters=$(int64 "$REF/$1/$2/steps.bin") body="Mul /Mul_1" taken="" skipped=""
	else
		return	# nested: its outputs say it all
	fi
	got=$(ran "$3" "$body")
	if [ "$got" -ne "$iters" ]; then
		no "$1 $2: the loop body ran $got times, onnxruntime's $iters"
	elif [ -n "$taken" ] && { [ "$(ran "$3" "$taken")" -ne 1 ] || [ "$(ran "$3" "$skipped")" -ne 0 ]; }; then
		no "$1 $2: the If ran '$skipped' or not '$taken'"
	else
		ok "$1 $2: the body ran $iters times${taken:+, the If only '$taken'}"
	fi
}

for model in steps_branch early_exit nested; do
	for case in "$REF/$model"/*/; do
		case=${case%/}
		c=${case##*/}
		inputs "$case"
		# shellcheck disable=SC2086
		if ! "$BIN" "$DIR/$model.onnx" --device emu --iterations 1 --warmup 0 $ins \
			--output-dir "$TMP/$model-$c" --profile --json >"$TMP/$model-$c.json" \
			2>"$TMP/err"; then
			no "$model $c compiles and runs: $(cat "$TMP/err")"
			continue
		fi
		path "$model" "$c" "$TMP/$model-$c.json"
		for f in "$case"/*.bin; do
			name=${f##*/}
			case $name in in_*) continue ;; esac
			if [ "$name" = steps.bin ]; then
				if cmp -s "$TMP/$model-$c/$name" "$f"; then
					ok "$model $c $name equals onnxruntime's"
				else
					no "$model $c $name equals onnxruntime's"
				fi
			elif close_py "$TMP/$model-$c/$name" "$f"; then
				ok "$model $c $name matches onnxruntime"
			else
				no "$model $c $name matches onnxruntime"
			fi
		done
	done
done
printf '%s' 'npu-run control flow: '
summary
