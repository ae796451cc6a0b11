#!/bin/sh
# SPDX-License-Identifier: MIT
# The kernel CI's host-step model (tests/guest/hoststep/conv_det_add.onnx)
# through npu-run --cpu-fallback on the emulator against onnxruntime's
# output (ort_hoststep.js): the Det runs on the host between two NPU
# programs, and y must be close (close.py).  The guest then checks the
# driver's run against the host emulator's, bit for bit.
# Usage: npu_run_hoststep.sh MODEL REFDIR [NPU_RUN]
set -u

# shellcheck source=tests/models/run_common.sh
. "$(dirname "$0")/run_common.sh"
MODEL=$1 REF=$2
npu_run_at "${3-}"
inputs "$REF"
# shellcheck disable=SC2086 # $ins: npu-run's --input arguments
if "$BIN" "$MODEL" --device emu --cpu-fallback $ins --output-dir "$TMP/o" \
	>"$TMP/log" 2>&1 && grep -q "ran on the CPU" "$TMP/log"; then
	ok "hoststep: runs with its Det on the host"
	line=$(close_py "$TMP/o/y.bin" "$REF/y.bin")
	rc=$?
	echo "$line"
	if [ $rc = 0 ]; then ok "hoststep: y matches onnxruntime"
	else no "hoststep: y matches onnxruntime"; fi
else
	no "hoststep: runs with its Det on the host: $(cat "$TMP/log")"
fi
summary
