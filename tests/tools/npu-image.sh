#!/bin/sh
# SPDX-License-Identifier: MIT
# CLI test of npu-run's picture inputs (--input NAME=photo.png|.jpg) on
# hand-made Identity models, whose output is the tensor npu-run made of
# the picture: every PNG colour type (RGB, grey, palette, RGBA with a
# transparent pixel, grey + alpha, 16 bits, interlaced) and JPEG (colour and grey,
# made by cjpeg; djpeg's pixels the reference) against the values
# image_gen.py computes; --image-layout (given and inferred), --image-mean
# and --image-std per channel, BlazeFace's defaults with --detect
# blazeface, uint8 inputs, one grey channel (luma of colour), resizing
# (area when shrinking 2x, bilinear when enlarging); and every bad input
# (truncated or corrupt PNG and JPEG, a huge header, text named .png,
# inputs a picture cannot fill, bad flag values) refused with exit status
# and one line, run by npu-run built with ASan/UBSan (build/bin/npu-run-san,
# check-tools builds it) so a leak or a bad longjmp fails the test.
# Run from the repository root after `make build/bin/npu-run
# build/bin/npu-run-san`; $1 and $2 override the binaries.
set -u

PYTHONPATH=$(dirname "$0")${PYTHONPATH:+:$PYTHONPATH}
export PYTHONPATH
BIN=${1:-build/bin/npu-run}
SAN=${2:-build/bin/npu-run-san}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
pass=0
fail=0
export NPU_EMU_STATS=0
# Leaks are errors (libnpu's too: ASan sees every malloc); an ASan or UBSan
# report exits 99.
export ASAN_OPTIONS=detect_leaks=1:exitcode=99 UBSAN_OPTIONS=halt_on_error=1:exitcode=99

ok() { pass=$((pass + 1)); }
no() { fail=$((fail + 1)); echo "FAIL: $*"; }

[ -x "$SAN" ] || { echo "npu-image.sh: $SAN is missing: make build/bin/npu-run-san"; exit 1; }
python3 "$(dirname "$0")/image_gen.py" "$TMP" || { echo "image_gen.py failed"; exit 1; }
cjpeg -quality 90 "$TMP/smooth.ppm" >"$TMP/smooth.jpg" &&
	cjpeg -quality 90 -grayscale "$TMP/smooth.ppm" >"$TMP/grey.jpg" &&
	cjpeg -quality 90 "$TMP/noise.ppm" >"$TMP/noise.jpg" &&
	djpeg -ppm "$TMP/smooth.jpg" | tail -c 768 >"$TMP/smooth_jpg.want" &&
	djpeg -pnm "$TMP/grey.jpg" | tail -c 256 | python3 -c \
		"import sys; sys.stdout.buffer.write(bytes(v for v in sys.stdin.buffer.read() for _ in range(3)))" \
		>"$TMP/grey_jpg.want" ||
	{ echo "cjpeg/djpeg failed (make deps installs libjpeg-turbo-progs)"; exit 1; }
n=$(wc -c <"$TMP/noise.jpg")
head -c $((n / 2)) "$TMP/noise.jpg" >"$TMP/trunc.jpg"

# run NAME MODEL ARGS...: npu-run once, its output y in $TMP/out/y.bin.
run() {
	name=$1 model=$2
	shift 2
	rm -rf "$TMP/out"
	if "$BIN" "$TMP/$model" --device emu --iterations 1 --warmup 0 --output-dir "$TMP/out" \
		"$@" >"$TMP/stdout" 2>"$TMP/err"; then ok; else no "$name: $(cat "$TMP/err")"; fi
}

# same NAME WANT: y.bin is WANT byte for byte.
same() {
	if cmp -s "$TMP/out/y.bin" "$TMP/$2"; then ok; else no "$1: y.bin differs from $2"; fi
}

# close NAME WANT TOL: y.bin's float32 values within TOL of WANT's.
close() {
	if python3 - "$TMP/out/y.bin" "$TMP/$2" "$3" <<'PY'
import struct, sys
a, b = (open(p, 'rb').read() for p in sys.argv[1:3])
if len(a) != len(b):
    sys.exit('%d bytes, want %d' % (len(a), len(b)))
x, y = (struct.unpack('<%df' % (len(v) // 4), v) for v in (a, b))
err = max(abs(p - q) for p, q in zip(x, y))
sys.exit(0 if err <= float(sys.argv[3]) else 'max error %g' % err)
PY
	then ok; else no "$1: y.bin is not within $3 of $2"; fi
}

# ---- pictures into tensors ----
run "RGB PNG, nchw, mean/std per channel" f_nchw.onnx --input x="$TMP/rgb.png" \
	--image-mean 0.1,0.2,0.3 --image-std 0.5,0.25,2
close "RGB PNG, nchw, mean/std per channel" nchw.want 1e-6
run "RGB PNG, nhwc, defaults (pixel/255)" f_nhwc.onnx --input x="$TMP/rgb.png"
close "RGB PNG, nhwc, defaults" nhwc.want 1e-6
run "--image-layout nhwc given" f_nhwc.onnx --input x="$TMP/rgb.png" --image-layout nhwc
close "--image-layout nhwc given" nhwc.want 1e-6
run "one mean and std for all channels" f_nhwc.onnx --input x="$TMP/rgb.png" \
	--image-mean 0.5 --image-std 0.5
close "--image-mean 0.5 --image-std 0.5" blaze.want 1e-6
# The detector finds no BlazeFace outputs in this model and fails, after
# --output-dir has written them.
rm -rf "$TMP/out"
"$BIN" "$TMP/f_nhwc.onnx" --device emu --iterations 1 --input x="$TMP/rgb.png" \
	--detect blazeface --output-dir "$TMP/out" >/dev/null 2>"$TMP/err"
close "--detect blazeface: mean 0.5, std 0.5" blaze.want 1e-6
run "uint8 input: the pixels" u8.onnx --input x="$TMP/rgb.png"
same "uint8 input: the pixels" u8.want
run "interlaced PNG" u8.onnx --input x="$TMP/interlaced.png"
same "interlaced (Adam7) PNG" u8.want
run "16-bit PNG" u8.onnx --input x="$TMP/rgb16.png"
same "16-bit PNG: 8-bit values again" u8.want
run "grey PNG into 3 channels" u8.onnx --input x="$TMP/grey.png"
same "grey PNG replicated to RGB" grey_u8.want
run "palette PNG" u8.onnx --input x="$TMP/palette.png"
same "palette PNG expanded" palette.want
run "RGBA PNG" u8.onnx --input x="$TMP/rgba.png"
same "RGBA PNG: opaque as is, transparent on black" rgba.want
run "grey + alpha PNG" u8.onnx --input x="$TMP/greya.png"
same "grey + alpha PNG" grey_u8.want
run "grey PNG into 1 channel" f_grey.onnx --input x="$TMP/grey.png"
close "grey PNG into 1 channel" grey1.want 1e-6
run "colour PNG into 1 channel" f_grey.onnx --input x="$TMP/rgb.png"
close "colour PNG into 1 channel: BT.601 luma" luma1.want 1e-5
run "shrunk 2x: area" f_3x3.onnx --input x="$TMP/wide.png" --image-layout nchw
close "shrunk 2x: pairs averaged" wide.want 1e-6
# [1, 3, 4, 3] read the other way: another tensor.
cp "$TMP/out/y.bin" "$TMP/nchw.bin"
run "--image-layout nhwc on [1, 3, 4, 3]" f_3x3.onnx --input x="$TMP/wide.png" --image-layout nhwc
if ! cmp -s "$TMP/out/y.bin" "$TMP/nchw.bin"; then ok
else no "--image-layout nhwc and nchw made the same tensor"; fi
run "enlarged 2x: bilinear" f_big.onnx --input x="$TMP/rgb.png"
close "enlarged 2x: bilinear, half-pixel centres" big.want 1e-5
run "JPEG" u8_16.onnx --input x="$TMP/smooth.jpg"
same "JPEG: djpeg's pixels" smooth_jpg.want
run "grey JPEG" u8_16.onnx --input x="$TMP/grey.jpg"
same "grey JPEG: djpeg's grey, replicated" grey_jpg.want
cp "$TMP/smooth.jpg" "$TMP/smooth.dat"
run "a JPEG named .dat: recognised by content" u8_16.onnx --input x="$TMP/smooth.dat"
same "a JPEG named .dat" smooth_jpg.want
"$BIN" "$TMP/f_nhwc.onnx" --device emu --iterations 1 --input x="$TMP/rgb.png" --json \
	>"$TMP/out.json" 2>"$TMP/err" && python3 - "$TMP/out.json" <<'PY' && ok || no "JSON image: $(cat "$TMP/err")"
import json, sys
i = json.load(open(sys.argv[1]))['inputs'][0]
sys.exit(0 if i['image'] == {'format': 'PNG', 'width': 6, 'height': 4, 'grey': False} else 1)
PY
"$BIN" "$TMP/f_3x3.onnx" --device emu --iterations 1 --input x="$TMP/wide.png" \
	--image-layout nchw >"$TMP/stdout" 2>&1
if grep -q "from $TMP/wide.png (PNG 6x4 colour, resized by area and bilinear, to \[0, 1\])" \
	"$TMP/stdout"; then ok; else no "summary's input line: $(grep '^input' "$TMP/stdout")"; fi
"$BIN" "$TMP/f_big.onnx" --device emu --iterations 1 --input x="$TMP/grey.png" \
	--image-mean 0.5 --image-std 0.25 >"$TMP/stdout" 2>&1
if grep -q "from $TMP/grey.png (PNG 6x4 grey, resized by bilinear, to \[-2, 2\])" \
	"$TMP/stdout"; then ok; else no "summary's input line: $(grep '^input' "$TMP/stdout")"; fi

# ---- refused, each with its exit status and one line; under ASan/UBSan ----
# bad NAME CODE TEXT ARGS...: exit CODE, one "npu-run: " line containing TEXT.
bad() {
	name=$1 code=$2 text=$3
	shift 3
	"$SAN" "$@" >/dev/null 2>"$TMP/err"
	rc=$?
	lines=$(wc -l <"$TMP/err")
	if [ "$rc" -eq "$code" ] && [ "$lines" -eq 1 ] && grep -q '^npu-run: ' "$TMP/err" &&
		grep -qF -- "$text" "$TMP/err"; then ok
	else no "$name: exit $rc (want $code), want one line with '$text': $(cat "$TMP/err")"; fi
}
M=$TMP/f_nchw.onnx
bad "truncated PNG" 1 "$TMP/trunc.png is a damaged or truncated PNG file" $M --input x="$TMP/trunc.png"
bad "corrupt PNG (CRC)" 1 "$TMP/badcrc.png is a damaged or truncated PNG file" $M --input x="$TMP/badcrc.png"
bad "huge PNG" 1 "$TMP/huge.png is 20000x20000 pixels, more than npu-run reads" $M --input x="$TMP/huge.png"
bad "text named .png" 1 "$TMP/text.png is named like a picture but holds no PNG or JPEG data" \
	$M --input x="$TMP/text.png"
bad "truncated JPEG" 1 "$TMP/trunc.jpg is a damaged or truncated JPEG file" $M --input x="$TMP/trunc.jpg"
bad "missing picture" 1 "cannot open $TMP/none.png" $M --input x="$TMP/none.png"
bad "4-channel input" 1 "4 channels in layout nchw; a picture gives 3 (RGB) or 1 (grey)" \
	"$TMP/f_4ch.onnx" --input x="$TMP/rgb.png" --image-layout nchw
bad "rank-2 input" 1 "a picture fills a rank-4" "$TMP/f_rank2.onnx" --input x="$TMP/rgb.png"
bad "float16 input" 1 "a picture fills float32 or uint8 inputs" "$TMP/f16.onnx" --input x="$TMP/rgb.png"
bad "ambiguous layout" 2 "give --image-layout nchw or nhwc" "$TMP/f_3x3.onnx" --input x="$TMP/rgb.png"
bad "open dims" 2 "give --shape x=DIMS" "$TMP/f_open.onnx" --input x="$TMP/rgb.png"
bad "mean on uint8" 2 "--image-mean and --image-std apply to float32 inputs" \
	"$TMP/u8.onnx" --input x="$TMP/rgb.png" --image-mean 0.5
bad "3 means, 1 channel" 2 "--image-mean has 3 values, but input 'x' has 1 channel" \
	"$TMP/f_grey.onnx" --input x="$TMP/rgb.png" --image-mean 0.1,0.2,0.3
bad "two means" 2 "two values" $M --image-mean 0.1,0.2
bad "std 0" 2 "each above 0" $M --image-std 0
bad "mean not a number" 2 "give one number or three" $M --image-mean abc
bad "layout chw" 2 "--image-layout chw: give nchw or nhwc" $M --image-layout chw
bad "--image-mean without a picture" 2 "no --input is a PNG or JPEG file" $M --image-mean 0.5
bad "--draw without --detect" 2 "add --detect blazeface" $M --draw "$TMP/d.png"
# The good path under ASan too: no leak from a picture read, resized and drawn.
if "$SAN" "$TMP/u8.onnx" --device emu --iterations 1 --input x="$TMP/noise.jpg" \
	>/dev/null 2>"$TMP/err"; then ok; else no "ASan run on a JPEG: $(cat "$TMP/err")"; fi

echo "npu-image: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
