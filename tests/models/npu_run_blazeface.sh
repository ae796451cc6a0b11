#!/bin/sh
# SPDX-License-Identifier: MIT
# BlazeFace through npu-run on the emulator backend, on a photo of a face:
#  0. all four outputs npu-run writes (--output-dir) match onnxruntime's for
#     the same photo: cosine >= 0.999 and max error <= 5% of the output's
#     range (bf16);
# npu-run --detect blazeface (libnpu's anchors, decoding and weighted NMS):
#  1. on the emulator, fed a photo of a face, its faces match the ones the
#     same code decodes from onnxruntime's raw outputs for that photo
#     (--detect-from): same count, IoU >= 0.9, scores within 0.02, and the
#     face is where it is in the photo;
#  2. on a tiny synthetic case (one anchor scoring, the rest not) the box,
#     score and keypoint are the hand-computed ones.
# Usage: npu_run_blazeface.sh MODEL PHOTO.raw ORT_OUTDIR [NPU_RUN]
set -u

# shellcheck source=tests/models/run_common.sh
. "$(dirname "$0")/run_common.sh"

MODEL=$1
PHOTO=$2
REF=$3
npu_run_at "${4-}"

if "$BIN" "$MODEL" --device emu --iterations 1 --warmup 0 --input "input:0=$PHOTO" \
	--output-dir "$TMP/out" >/dev/null 2>"$TMP/err"; then
	for f in "$REF"/*.bin; do
		name=${f##*/}
		if python3 - "$TMP/out/$name" "$f" <<'PY'
import math, struct, sys
a, b = (open(p, 'rb').read() for p in sys.argv[1:3])
if len(a) != len(b):
    print('# %s: %d bytes from npu-run, %d from onnxruntime' % (sys.argv[2], len(a), len(b)))
    sys.exit(1)
x = struct.unpack('<%df' % (len(a) // 4), a)
y = struct.unpack('<%df' % (len(b) // 4), b)
dot = sum(p * q for p, q in zip(x, y))
cos = dot / math.sqrt(sum(p * p for p in x) * sum(q * q for q in y))
rng = max(y) - min(y)
err = max(abs(p - q) for p, q in zip(x, y))
print('# %s: cosine %.6f, max error %.4g = %.2f%% of range %.4g'
      % (sys.argv[2].split('/')[-1], cos, err, 100 * err / rng, rng))
sys.exit(0 if cos >= 0.999 and err <= 0.05 * rng else 1)
PY
		then ok "npu-run output $name matches onnxruntime's on the photo"
		else no "npu-run output $name differs from onnxruntime's"; fi
	done
else
	no "npu-run --output-dir: $(cat "$TMP/err")"
fi

if "$BIN" "$MODEL" --device emu --iterations 1 --warmup 0 --input "input:0=$PHOTO" \
	--detect blazeface --json >"$TMP/npu.json" 2>"$TMP/err" &&
	"$BIN" "$MODEL" --device emu --detect blazeface --detect-from "$REF" --json \
	>"$TMP/ort.json" 2>>"$TMP/err"; then
	if python3 - "$TMP/npu.json" "$TMP/ort.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))['detect']['detections']
b = json.load(open(sys.argv[2]))['detect']['detections']
def iou(p, q):
    ix = max(0, min(p['xmax'], q['xmax']) - max(p['xmin'], q['xmin']))
    iy = max(0, min(p['ymax'], q['ymax']) - max(p['ymin'], q['ymin']))
    inter = ix * iy
    area = lambda r: (r['xmax'] - r['xmin']) * (r['ymax'] - r['ymin'])
    return inter / (area(p) + area(q) - inter)
print('# %d faces from the NPU, %d from onnxruntime' % (len(a), len(b)))
for p in a:
    print('#   NPU score %.4f  x %.3f-%.3f  y %.3f-%.3f'
          % (p['score'], p['xmin'], p['xmax'], p['ymin'], p['ymax']))
if not a or len(a) != len(b):
    sys.exit(1)
worst = min(iou(p, q) for p, q in zip(a, b))
dscore = max(abs(p['score'] - q['score']) for p, q in zip(a, b))
print('# worst IoU %.4f, largest score difference %.4f' % (worst, dscore))
# The astronaut's face: about x 180-280, y 80-175 of the 512-pixel photo.
f = a[0]
cx, cy = (f['xmin'] + f['xmax']) / 2, (f['ymin'] + f['ymax']) / 2
where = 0.35 < cx < 0.55 and 0.15 < cy < 0.35 and f['score'] > 0.8
print('# best face centre (%.3f, %.3f) score %.3f' % (cx, cy, f['score']))
sys.exit(0 if worst >= 0.9 and dscore <= 0.02 and where else 1)
PY
	then ok "BlazeFace on a photo: the emulator's faces match onnxruntime's, decoded alike"
	else no "BlazeFace faces differ from onnxruntime's"; fi
else
	no "npu-run --detect: $(cat "$TMP/err")"
fi

# Synthetic outputs with one known face (blazeface_synthetic.py says which).
mkdir -p "$TMP/syn"
python3 "$HERE/blazeface_synthetic.py" "$TMP/syn"
if "$BIN" "$MODEL" --device emu --detect blazeface --detect-from "$TMP/syn" --json \
	>"$TMP/syn.json" 2>"$TMP/err" && python3 - "$TMP/syn.json" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))['detect']['detections']
want = dict(score=1 / (1 + math.exp(-2)), xmin=0.03125, xmax=0.23125, ymin=-0.01875,
            ymax=0.08125)
ok = len(d) == 1 and all(abs(d[0][k] - v) < 1e-5 for k, v in want.items())
ok = ok and abs(d[0]['keypoints'][0][0] - 0.08125) < 1e-5
ok = ok and abs(d[0]['keypoints'][0][1] - 0.08125) < 1e-5
print('# synthetic:', d)
sys.exit(0 if ok else 1)
PY
then ok "synthetic case: the hand-computed box, score and keypoint"
else no "synthetic case: $(cat "$TMP/err") $(cat "$TMP/syn.json")"; fi

# Bad use: a directory without the outputs, an unknown detector.
if "$BIN" "$MODEL" --device emu --detect blazeface --detect-from "$TMP" >/dev/null 2>"$TMP/err"; then
	no "--detect-from a directory without outputs succeeded"
elif grep -q "write it with --output-dir" "$TMP/err"; then ok "--detect-from names the missing file"
else no "--detect-from message: $(cat "$TMP/err")"; fi
"$BIN" "$MODEL" --detect yolo >/dev/null 2>"$TMP/err"
if [ $? -eq 2 ] && grep -q "unknown detector" "$TMP/err"; then ok "--detect yolo refused"
else no "--detect yolo: $(cat "$TMP/err")"; fi

summary
