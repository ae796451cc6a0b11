#!/bin/sh
# SPDX-License-Identifier: MIT
# make check-examples: examples/c/classify.c, built against libnpu.so and
# statically (examples/examples.mk), prints the classes npu-run --top-k
# prints for the same model and input (index, score to 6 digits, label),
# for K 1, 3 and 10; and each kind of bad input ends in a message naming
# the file and libnpu's status, never a crash.
#   classify.sh CLASSIFY CLASSIFY_STATIC NPU_RUN LIBDIR
set -u
EX=$1 EX_STATIC=$2 NPU_RUN=$3 LIBDIR=$4
MODEL=tools/npu-run/samples/tiny-cnn.onnx
LABELS=tools/npu-run/samples/tiny-cnn.labels
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
export NPU_EMU_STATS=0
pass=0
fail=0
ok() { pass=$((pass + 1)); }
no() { fail=$((fail + 1)); echo "FAIL: $*"; }

# The sample's input, float32 [1, 3, 32, 32]: a smooth pattern, not the
# one npu-run generates, so that the two programs read the same file.
python3 -c '
import math, struct, sys
v = [math.sin(0.05 * i) * math.cos(0.013 * i * i % 7) for i in range(3 * 32 * 32)]
sys.stdout.buffer.write(struct.pack("<%df" % len(v), *v))' >"$TMP/in.raw"

# npu-run's top-k lines ("   1. class 3        0.146709  cat") in the
# example's format ("1. class 3 0.146709 cat").
reference() {
	"$NPU_RUN" "$MODEL" --device emu --iterations 1 --warmup 0 --input "image=$TMP/in.raw" \
		--top-k "$1" --labels "$LABELS" |
		awk '$2 == "class" { printf "%s class %s %s %s\n", $1, $3, $4, $5 }'
}

for k in 1 3 10; do
	reference "$k" >"$TMP/want.$k"
	[ "$(wc -l <"$TMP/want.$k")" -eq "$k" ] && ok || no "npu-run printed $k classes"
	LD_LIBRARY_PATH=$LIBDIR "$EX" "$MODEL" "$TMP/in.raw" "$LABELS" "$k" >"$TMP/got.$k" 2>"$TMP/err"
	[ $? -eq 0 ] && cmp -s "$TMP/want.$k" "$TMP/got.$k" && ok ||
		no "K=$k (libnpu.so): got '$(cat "$TMP/got.$k" "$TMP/err")', npu-run '$(cat "$TMP/want.$k")'"
	"$EX_STATIC" "$MODEL" "$TMP/in.raw" "$LABELS" "$k" >"$TMP/got.$k" 2>"$TMP/err"
	[ $? -eq 0 ] && cmp -s "$TMP/want.$k" "$TMP/got.$k" && ok ||
		no "K=$k (static): got '$(cat "$TMP/got.$k" "$TMP/err")', npu-run '$(cat "$TMP/want.$k")'"
done
# The default K is 3.
"$EX_STATIC" "$MODEL" "$TMP/in.raw" "$LABELS" >"$TMP/got" 2>&1 && cmp -s "$TMP/want.3" "$TMP/got" &&
	ok || no "default K: $(cat "$TMP/got")"
# The dynamic build really loads libnpu.so from LIBDIR.
LD_LIBRARY_PATH=$LIBDIR ldd "$EX" | grep -q "libnpu.so.0 => $LIBDIR/libnpu.so.0" && ok ||
	no "classify does not load $LIBDIR/libnpu.so.0: $(LD_LIBRARY_PATH=$LIBDIR ldd "$EX" | grep npu)"
ldd "$EX_STATIC" | grep -q libnpu && no "classify-static loads libnpu.so" || ok

# fails NAME CODE PATTERN ARGS...: exits CODE, no signal, stderr matches PATTERN.
fails() {
	name=$1 code=$2 pat=$3
	shift 3
	"$EX_STATIC" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" -eq "$code" ] && grep -Eq "$pat" "$TMP/err"; then ok
	else no "$name: exit $rc, stderr '$(cat "$TMP/err")'"; fi
}
printf 'not a model' >"$TMP/bad.onnx"
head -c 100 "$TMP/in.raw" >"$TMP/short.raw"
fails "no arguments" 2 "^usage: classify"
fails "K out of range" 2 "^usage: classify" "$MODEL" "$TMP/in.raw" "$LABELS" 11
fails "missing model" 1 "^classify: $TMP/none.onnx: input/output error: .*none.onnx" \
	"$TMP/none.onnx" "$TMP/in.raw" "$LABELS"
fails "not a model" 1 "^classify: $TMP/bad.onnx: bad model format: " \
	"$TMP/bad.onnx" "$TMP/in.raw" "$LABELS"
fails "missing labels" 1 "^classify: $TMP/none.txt: input/output error: .*none.txt" \
	"$MODEL" "$TMP/in.raw" "$TMP/none.txt"
fails "missing input" 1 "^classify: $TMP/none.raw: cannot open it; the model's input takes 12288 bytes" \
	"$MODEL" "$TMP/none.raw" "$LABELS"
fails "short input" 1 "^classify: $TMP/short.raw: wrong size; the model's input takes 12288 bytes" \
	"$MODEL" "$TMP/short.raw" "$LABELS"
fails "input too long" 1 "wrong size" "$MODEL" "$MODEL" "$LABELS"
# A model whose output is no score vector: bool [1, 4] -> Not -> bool [1, 4].
PYTHONPATH=tests/tools python3 - "$TMP/not.onnx" <<'EOF2'
import sys
from onnx_pb import fld, value_info
graph = (fld(1, fld(1, b'mask') + fld(2, b'keep') + fld(4, b'Not')) + fld(2, b'g') +
         fld(11, value_info(b'mask', 9, [1, 4])) + fld(12, value_info(b'keep', 9, [1, 4])))
open(sys.argv[1], 'wb').write(fld(1, 8) + fld(8, fld(2, 13)) + fld(7, graph))
EOF2
printf '\001\000\000\001' >"$TMP/mask.raw"
fails "output not float32" 1 "^classify: output 'keep' is bool, not float32 scores" \
	"$TMP/not.onnx" "$TMP/mask.raw" "$LABELS"

echo "examples/c/classify: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
