#!/bin/sh
# SPDX-License-Identifier: MIT
# The recurrent test models (tests/models/recurrent) through npu-run on the
# emulator over the frames ort_recurrent.js ran, libnpu carrying its own
# state: frame 0 starts from zero states, frame k takes the hn (and cn)
# npu-run wrote for frame k - 1.  Every output of every frame against
# onnxruntime's: cosine >= 0.999 and max error <= 2% of its range (bf16
# products; an error in the carried state would grow frame by frame).
# The single nodes of gen_nodes.py (clip, activations with alpha/beta) on
# onnxruntime's X, each output against onnxruntime's by the same measure.
# Usage: npu_run_recurrent.sh MODELDIR REFDIR [NPU_RUN]
set -u

# shellcheck source=tests/models/run_common.sh
. "$(dirname "$0")/run_common.sh"

DIR=$1
REF=$2
npu_run_at "${3-}"
FRAMES=4

# run MODEL STATES: STATES are "h0=hn c0=cn" pairs (input=output).
run() {
	model=$1 states=$2
	size=$(python3 -c "import os; print(os.path.getsize('$REF/$model/f0/hn.bin'))")
	for pair in $states; do
		head -c "$size" /dev/zero >"$TMP/$model-${pair%%=*}.bin"
	done
	k=0
	while [ $k -lt $FRAMES ]; do
		ins="--input x=$REF/$model/f$k/in_x.bin"
		for pair in $states; do
			ins="$ins --input ${pair%%=*}=$TMP/$model-${pair%%=*}.bin"
		done
		# shellcheck disable=SC2086
		if ! "$BIN" "$DIR/$model.onnx" --device emu --iterations 1 --warmup 0 $ins \
			--output-dir "$TMP/$model-f$k" >/dev/null 2>"$TMP/err"; then
			no "$model frame $k compiles and runs: $(cat "$TMP/err")"
			return
		fi
		for f in "$REF/$model/f$k"/*.bin; do
			name=${f##*/}
			case $name in in_*) continue ;; esac
			if close_py "$TMP/$model-f$k/$name" "$f"; then
				ok "$model frame $k $name matches onnxruntime"
			else
				no "$model frame $k $name matches onnxruntime"
			fi
		done
		# The next frame starts from this frame's state, as computed here.
		for pair in $states; do
			cp "$TMP/$model-f$k/${pair#*=}.bin" "$TMP/$model-${pair%%=*}.bin"
		done
		k=$((k + 1))
	done
}

run lstm_frames "h0=hn c0=cn"
run gru_frames "h0=hn"
for model in node_lstm_clip node_gru_acts node_rnn_acts; do
	if ! "$BIN" "$DIR/$model.onnx" --device emu --iterations 1 --warmup 0 \
		--input "X=$REF/$model/in_X.bin" --output-dir "$TMP/$model" >/dev/null 2>"$TMP/err"; then
		no "$model compiles and runs: $(cat "$TMP/err")"
		continue
	fi
	for f in "$REF/$model"/*.bin; do
		name=${f##*/}
		case $name in in_*) continue ;; esac
		if close_py "$TMP/$model/$name" "$f"; then ok "$model $name matches onnxruntime"
		else no "$model $name matches onnxruntime"; fi
	done
done
summary
