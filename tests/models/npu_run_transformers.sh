#!/bin/sh
# SPDX-License-Identifier: MIT
# The committed transformer test models (tests/models/transformers) through
# npu-run on the emulator, each shape given with --shape, against the
# outputs onnxruntime gave for the same inputs (ort_transformers.js writes
# them, with the inputs, under REFDIR/<model>_b<batch>[_s<seq>]/):
#  - every output: cosine >= 0.999 and max error <= 2% of its range (bf16);
#  - fused clusters (one, and two far apart) change no output bit.
# BERT, GPT-2 and LLaMA take int64 token ids (and masks): npu-run passes
# them as int64, libnpu narrows them to the device's int32.
# Usage: npu_run_transformers.sh MODELDIR REFDIR [NPU_RUN]
set -u

# shellcheck source=tests/models/run_common.sh
. "$(dirname "$0")/run_common.sh"

DIR=$1
REF=$2
npu_run_at "${3-}"

# run_case MODEL CASE SHAPES...: MODEL on the inputs of REF/CASE.
run_case() {
	model=$1 case=$2
	shift 2
	inputs "$REF/$case"
	# shellcheck disable=SC2086
	"$BIN" "$DIR/$model.onnx" --device emu --iterations 1 --warmup 0 "$@" $ins \
		--output-dir "$TMP/$case" >/dev/null 2>"$TMP/err" || return 1
	for f in "$REF/$case"/*.bin; do
		name=${f##*/}
		case $name in in_*) continue ;; esac
		if close_py "$TMP/$case/$name" "$f"; then ok "$case $name matches onnxruntime"
		else no "$case $name matches onnxruntime"; fi
	done
	for mask in 0x1 0x2001; do
		# shellcheck disable=SC2086
		"$BIN" "$DIR/$model.onnx" --device "emu:defect-mask=$mask" --iterations 1 --warmup 0 \
			"$@" $ins --output-dir "$TMP/$case-$mask" >/dev/null 2>&1
		if diff -r -q "$TMP/$case" "$TMP/$case-$mask" >/dev/null; then
			ok "$case: fused clusters $mask change no bit"
		else
			no "$case: fused clusters $mask change no bit"
		fi
	done
}

for op in 14 17; do
	for b in 1 2; do
		if run_case "vit_tiny_op$op" "vit_tiny_op${op}_b$b" --shape "pixel_values=${b}x3x32x32"; then :
		else no "vit_tiny_op$op batch $b compiles and runs: $(cat "$TMP/err")"; fi
	done
	for b in 1 2; do
		s="${b}x16"
		if run_case "bert_tiny_op$op" "bert_tiny_op${op}_b${b}_s16" --shape "input_ids=$s" \
			--shape "attention_mask=$s" --shape "token_type_ids=$s"; then :
		else no "bert_tiny_op$op batch $b compiles and runs: $(cat "$TMP/err")"; fi
		for m in llama gpt2; do
			if run_case "${m}_tiny_op$op" "${m}_tiny_op${op}_b${b}_s16" --shape "input_ids=$s"
			then :
			else no "${m}_tiny_op$op batch $b compiles and runs: $(cat "$TMP/err")"; fi
		done
	done
	# Long sequences: the 512 positions of BERT's table.
	if run_case "bert_tiny_op$op" "bert_tiny_op${op}_b1_s512" --shape "input_ids=1x512" \
		--shape "attention_mask=1x512" --shape "token_type_ids=1x512"; then :
	else no "bert_tiny_op$op sequence 512 compiles and runs: $(cat "$TMP/err")"; fi
done
summary
