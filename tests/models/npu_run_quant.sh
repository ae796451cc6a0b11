#!/bin/sh
# SPDX-License-Identifier: MIT
# Quantised weights (issue 16) through npu-run on the emulator:
#  - the MatMulNBits models (tests/models/nbits) against onnxruntime's
#    outputs (ort_nbits.js writes them under NBREF/<model>/Y.bin):
#    cosine >= 0.999 and max error <= 1% of the range;
#  - the transformer test models at --precision w8 against onnxruntime's
#    float outputs (TFREF, from ort_transformers.js): cosine >= 0.999 and
#    max error <= 3% of the range (int8 weights, bf16 activations).
# Usage: npu_run_quant.sh NBDIR NBREF TFDIR TFREF [NPU_RUN]
set -u

# shellcheck source=tests/models/run_common.sh
. "$(dirname "$0")/run_common.sh"

NB=$1
NBREF=$2
TF=$3
TFREF=$4
npu_run_at "${5-}"

# close OURS REF MAXERR: cosine >= 0.999 and max error <= MAXERR x range.
close() {
	python3 - "$1" "$2" "$3" <<'PY'
import math, struct, sys
a, b = (open(p, 'rb').read() for p in sys.argv[1:3])
if len(a) != len(b) or not a:
    print('# %d bytes from npu-run, %d from onnxruntime' % (len(a), len(b)))
    sys.exit(1)
x = struct.unpack('<%df' % (len(a) // 4), a)
y = struct.unpack('<%df' % (len(b) // 4), b)
dot = sum(p * q for p, q in zip(x, y))
nx, ny = math.sqrt(sum(p * p for p in x)), math.sqrt(sum(q * q for q in y))
rng = max(y) - min(y)
err = max(abs(p - q) for p, q in zip(x, y))
cos = dot / (nx * ny) if nx and ny else 0.0
print('# cosine %.6f, max error %.4g = %.2f%% of range %.4g' % (cos, err, 100 * err / rng, rng))
sys.exit(0 if cos >= 0.999 and err <= float(sys.argv[3]) * rng else 1)
PY
}

for f in "$NB"/*.onnx; do
	name=$(basename "$f" .onnx)
	if "$BIN" "$f" --device emu --iterations 1 --warmup 0 --input "A=$NB/in_A.bin" \
		--output-dir "$TMP/$name" >/dev/null 2>"$TMP/err" &&
		close "$TMP/$name/Y.bin" "$NBREF/$name/Y.bin" 0.01; then
		ok "$name matches onnxruntime"
	else
		no "$name matches onnxruntime: $(cat "$TMP/err")"
	fi
done

for case in gpt2_tiny_op17_b1_s16 llama_tiny_op17_b1_s16 bert_tiny_op17_b1_s16; do
	model=${case%_b1_s16}
	args=""
	for f in "$TFREF/$case"/in_*.bin; do
		n=${f##*/in_}
		n=${n%.bin}
		args="$args --input $n=$f --shape $n=1x16"
	done
	# shellcheck disable=SC2086
	if "$BIN" "$TF/$model.onnx" --device emu --iterations 1 --warmup 0 --precision w8 $args \
		--output-dir "$TMP/$case" >/dev/null 2>"$TMP/err"; then
		for f in "$TFREF/$case"/*.bin; do
			out=${f##*/}
			case $out in in_*) continue ;; esac
			if close "$TMP/$case/$out" "$f" 0.03; then ok "$case w8 $out matches onnxruntime"
			else no "$case w8 $out matches onnxruntime"; fi
		done
	else
		no "$case compiles and runs at w8: $(cat "$TMP/err")"
	fi
done
summary
