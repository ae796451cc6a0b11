#!/bin/sh
# SPDX-License-Identifier: MIT
# The run-time output size test models (tests/models/dynout) through
# npu-run --cpu-fallback on the emulator, on the inputs ort_dynout.js ran:
# every output's shape (npu-run --json, the run's actual shape) and byte
# count must be onnxruntime's, int64 outputs bit for bit, float32 ones by
# close.py (cosine >= 0.999, max error <= 2% of the range; head_nonzero's
# convolutions run in bf16 on the NPU, nms_tail is host steps only).
# Usage: npu_run_dynout.sh MODELDIR REFDIR [NPU_RUN]
set -u

# shellcheck source=tests/models/run_common.sh
. "$(dirname "$0")/run_common.sh"

DIR=$1
REF=$2
npu_run_at "${3-}"

for model in head_nonzero nms_tail; do
	inputs "$REF/$model"
	# shellcheck disable=SC2086
	if ! "$BIN" "$DIR/$model.onnx" --device emu --cpu-fallback --iterations 1 --warmup 0 $ins \
		--output-dir "$TMP/$model" --json >"$TMP/$model.json" 2>"$TMP/err"; then
		no "$model compiles and runs with --cpu-fallback: $(cat "$TMP/err")"
		continue
	fi
	while read -r name dims; do
		got=$(python3 -c "
import json, sys
j = json.load(open('$TMP/$model.json'))
o = [o for o in j['outputs'] if o['name'] == '$name'][0]
print('x'.join(str(d) for d in o['shape']) if o.get('runtime_shape') else 'static')")
		if [ "$got" = "$dims" ]; then
			ok "$model $name: run-time shape $got as onnxruntime's"
		else
			no "$model $name: run-time shape $got, onnxruntime's $dims"
			continue
		fi
		case $(python3 -c "
import json
j = json.load(open('$TMP/$model.json'))
print([o for o in j['outputs'] if o['name'] == '$name'][0]['dtype'])") in
		float32)
			if close_py "$TMP/$model/$name.bin" "$REF/$model/$name.bin"; then
				ok "$model $name matches onnxruntime"
			else
				no "$model $name matches onnxruntime"
			fi ;;
		*)
			if cmp -s "$TMP/$model/$name.bin" "$REF/$model/$name.bin"; then
				ok "$model $name is onnxruntime's, bit for bit"
			else
				no "$model $name is onnxruntime's, bit for bit"
			fi ;;
		esac
	done <"$REF/$model/shapes.txt"
done
summary
