#!/bin/sh
# SPDX-License-Identifier: MIT
# BlazeFace through npu-run on pictures (issue 19), on the emulator:
#  1. astronaut.png (512x512, area-averaged to 128x128, BlazeFace's [-1, 1])
#     gives the outputs of astronaut-128.raw (png_to_raw.py's tensor of it)
#     bit for bit: tolerance zero;
#  2. a JPEG of it (cjpeg -quality 95) gives the raw tensor's faces: same
#     count, IoU >= 0.9, scores within 0.03 (JPEG's loss is the difference);
#  3. --draw writes a valid 512x512 PNG: the photo, with green box pixels
#     on the face's box edges and the photo's pixels away from it;
#  4. --draw on decoded outputs (--detect-from: one hand-made face) and a
#     flat grey picture: the box's edges green exactly where the box is,
#     keypoints red, the rest grey;
#  5. --draw from a raw tensor: a 128x128 picture of it; an unwritable
#     --draw path refused in one line;
#  6. --draw of absurd decoded boxes (1e30, -1e30, NaN) by npu-run built
#     with ASan/UBSan: clipped, no overflow, no crash.
# Usage: npu_run_image.sh MODEL MODELS_DIR [NPU_RUN [NPU_RUN_SAN]]
set -u

# shellcheck source=tests/models/run_common.sh
. "$(dirname "$0")/run_common.sh"

MODEL=$1
DIR=$2
npu_run_at "${3-}"
SAN=${4:-build/bin/npu-run-san}
PHOTO=$DIR/astronaut.png
RAW=$DIR/astronaut-128.raw
PYTHONPATH=$HERE${PYTHONPATH:+:$PYTHONPATH}
export PYTHONPATH
run() { "$BIN" "$MODEL" --device emu --iterations 1 --warmup 0 "$@"; }

# 1. PNG and raw: the same outputs.
if run --input "input:0=$PHOTO" --detect blazeface --output-dir "$TMP/png" >/dev/null 2>"$TMP/err" &&
	run --input "input:0=$RAW" --output-dir "$TMP/raw" >/dev/null 2>>"$TMP/err"; then
	same=1
	for f in "$TMP"/raw/*.bin; do cmp -s "$f" "$TMP/png/${f##*/}" || same=0; done
	if [ $same = 1 ]; then ok "astronaut.png gives astronaut-128.raw's outputs bit for bit"
	else no "astronaut.png's outputs differ from astronaut-128.raw's"; fi
else
	no "PNG input: $(cat "$TMP/err")"
fi

# 2. JPEG and raw: the same faces.
python3 - "$PHOTO" "$TMP/photo.ppm" <<'PY'
import sys
from png_to_raw import decode
w, h, bpp, rows = decode(sys.argv[1])
with open(sys.argv[2], 'wb') as f:
    f.write(b'P6 %d %d 255\n' % (w, h))
    for r in rows:
        f.write(bytes(r[i] for x in range(w) for i in range(x * bpp, x * bpp + 3)))
PY
cjpeg -quality 95 "$TMP/photo.ppm" >"$TMP/photo.jpg" 2>"$TMP/err" || no "cjpeg: $(cat "$TMP/err")"
if run --input "input:0=$TMP/photo.jpg" --detect blazeface --json >"$TMP/jpg.json" 2>"$TMP/err" &&
	run --input "input:0=$RAW" --detect blazeface --json >"$TMP/raw.json" 2>>"$TMP/err" &&
	python3 - "$TMP/jpg.json" "$TMP/raw.json" <<'PY'
import json, sys
a, b = (json.load(open(p))['detect']['detections'] for p in sys.argv[1:3])
def iou(p, q):
    ix = max(0, min(p['xmax'], q['xmax']) - max(p['xmin'], q['xmin']))
    iy = max(0, min(p['ymax'], q['ymax']) - max(p['ymin'], q['ymin']))
    area = lambda r: (r['xmax'] - r['xmin']) * (r['ymax'] - r['ymin'])
    return ix * iy / (area(p) + area(q) - ix * iy)
if not a or len(a) != len(b):
    sys.exit('# %d faces from the JPEG, %d from the raw tensor' % (len(a), len(b)))
worst = min(iou(p, q) for p, q in zip(a, b))
ds = max(abs(p['score'] - q['score']) for p, q in zip(a, b))
print('# JPEG: %d face(s), worst IoU %.4f, score difference %.4f' % (len(a), worst, ds))
sys.exit(0 if worst >= 0.9 and ds <= 0.03 else 1)
PY
then ok "a JPEG of the photo gives the raw tensor's faces"
else no "JPEG input: $(cat "$TMP/err")"; fi

# 3. --draw on the photo.
if run --input "input:0=$PHOTO" --detect blazeface --json --draw "$TMP/faces.png" \
	>"$TMP/draw.json" 2>"$TMP/err" && python3 - "$TMP/draw.json" "$TMP/faces.png" "$PHOTO" <<'PY'
import json, sys
from png_to_raw import decode
j = json.load(open(sys.argv[1]))['detect']
w, h, bpp, rows = decode(sys.argv[2])
_, _, pbpp, photo = decode(sys.argv[3])
px = lambda r, b, x, y: tuple(r[y][x * b:x * b + 3])
f = j['detections'][0]
x0, x1 = round(f['xmin'] * w), round(f['xmax'] * w)
y0, y1 = round(f['ymin'] * h), round(f['ymax'] * h)
cy, cx = (y0 + y1) // 2, (x0 + x1) // 2
edges = [(x0, cy), (x1 - 1, cy), (cx, y1 - 1)]
green = all(px(rows, bpp, x, y) == (0, 255, 0) for x, y in edges)
away = [(10, 500), (500, 500), (cx, y1 + 20)]
kept = all(px(rows, bpp, x, y) == px(photo, pbpp, x, y) for x, y in away)
print('# drawn %dx%d, box x %d-%d y %d-%d, edges green %s, photo kept %s'
      % (w, h, x0, x1, y0, y1, green, kept))
sys.exit(0 if (w, h) == (512, 512) and j['draw'] == sys.argv[2] and green and kept else 1)
PY
then ok "--draw: the 512x512 photo with the face's box"
else no "--draw on the photo: $(cat "$TMP/err")"; fi

# 4. --draw on a hand-made face (blazeface_synthetic.py's outputs:
# box x 0.03125-0.23125, y -0.01875-0.08125, keypoint 0 at 0.08125) over a
# flat grey 256x256 picture: box x 8-59, y 0-21 (clipped), lines 1 pixel.
mkdir -p "$TMP/syn"
python3 "$HERE/blazeface_synthetic.py" "$TMP/syn"
python3 - "$TMP/syn" <<'PY'
import struct, sys, zlib
d = sys.argv[1]
def chunk(k, b):
    return struct.pack('>I', len(b)) + k + b + struct.pack('>I', zlib.crc32(k + b))
raw = b''.join(b'\0' + bytes([128] * 256 * 3) for _ in range(256))
open(d + '/grey.png', 'wb').write(b'\x89PNG\r\n\x1a\n' +
    chunk(b'IHDR', struct.pack('>IIBBBBB', 256, 256, 8, 2, 0, 0, 0)) +
    chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))
PY
if "$BIN" "$MODEL" --device emu --detect blazeface --detect-from "$TMP/syn" \
	--input "input:0=$TMP/syn/grey.png" --draw "$TMP/syn.png" >"$TMP/syn.txt" 2>"$TMP/err" &&
	grep -q "pixels of the 256x256 picture" "$TMP/syn.txt" &&
	python3 - "$TMP/syn.png" <<'PY'
import sys
from png_to_raw import decode
w, h, bpp, rows = decode(sys.argv[1])
px = lambda x, y: tuple(rows[y][x * bpp:x * bpp + 3])
G, R, grey = (0, 255, 0), (255, 0, 0), (128, 128, 128)
want = {(8, 15): G, (58, 15): G, (30, 20): G, (40, 16): grey, (7, 15): grey, (59, 15): grey,
        (30, 21): grey, (21, 21): R, (200, 200): grey, (255, 255): grey}
bad = {k: px(*k) for k, v in want.items() if px(*k) != v}
print('# synthetic draw %dx%d, wrong pixels: %s' % (w, h, bad))
sys.exit(0 if (w, h) == (256, 256) and not bad else 1)
PY
then ok "--draw --detect-from: green edges, red keypoint, grey elsewhere, where the box is"
else no "--draw synthetic: $(cat "$TMP/err") $(cat "$TMP/syn.txt")"; fi

# 5. --draw from the raw tensor; an unwritable path.
if run --input "input:0=$RAW" --detect blazeface --draw "$TMP/tensor.png" >/dev/null 2>"$TMP/err" &&
	python3 -c "
import sys
from png_to_raw import decode
w, h, bpp, rows = decode(sys.argv[1])
sys.exit(0 if (w, h) == (128, 128) else 1)" "$TMP/tensor.png"
then ok "--draw from a raw tensor: a 128x128 picture"
else no "--draw from a tensor: $(cat "$TMP/err")"; fi
run --input "input:0=$PHOTO" --detect blazeface --draw "$TMP/no/such/dir.png" >/dev/null 2>"$TMP/err"
rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
	grep -q "^npu-run: --draw: cannot create $TMP/no/such/dir.png" "$TMP/err"
then ok "--draw into a missing directory refused in one line"
else no "--draw into a missing directory: exit $rc: $(cat "$TMP/err")"; fi

# 6. Absurd boxes, under ASan/UBSan.
python3 - "$TMP/syn" <<'PY'
import struct, sys
d = sys.argv[1]
def write(name, vals):
    open(d + '/' + name + '.bin', 'wb').write(struct.pack('<%df' % len(vals), *vals))
s = [-100.0] * 512
s[0] = s[100] = s[300] = 5.0
write('Identity_0', s)
b = [0.0] * (512 * 16)
b[0:4] = [1e30, -1e30, 1e30, 1e30]
b[1600:1606] = [float('nan')] * 6
b[4800:4816] = [-1e30] * 16
write('Identity_2_0', b)
PY
if "$SAN" "$MODEL" --device emu --detect blazeface --detect-from "$TMP/syn" \
	--input "input:0=$TMP/syn/grey.png" --draw "$TMP/absurd.png" >/dev/null 2>"$TMP/err" &&
	[ -s "$TMP/absurd.png" ]
then ok "--draw of absurd boxes: clipped, no sanitizer report"
else no "--draw of absurd boxes: $(cat "$TMP/err")"; fi

summary
