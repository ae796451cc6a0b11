#!/bin/sh
# SPDX-License-Identifier: MIT
# CLI test of npu-run on the bundled sample (tools/npu-run/samples/tiny-cnn.onnx:
# input 'image' float32 1x3x32x32, output 'probabilities' float32 1x10) on the
# emulator: exit codes and one-line messages, the JSON summary, raw and .npy
# inputs, --output-dir, .npum round trip, top-k with labels, the profile,
# batches and the timing options; int64 inputs and outputs (int32 on the
# device) on a hand-made Concat model; float64, uint32 and int16 ones
# (float32 / int32 on the device) with the compile's note; --output-format npy for every output
# dtype (hand-made Cast models) and its bfloat16 refusal; ONNX external data (a
# hand-made MatMul model with its weights in a side file, and a '..' location
# refused); the CPU fallback (a hand-made Relu -> Det -> Add model: Det on the
# host with --cpu-fallback, refused by name without); --fix (a hand-made
# If on an int64 input fixed each way, and its refusals).  Run from the repository root after
# `make build/bin/npu-run`; $1 overrides the binary.
#
# Output-name sanitising needs a tensor name with characters outside
# [A-Za-z0-9._-]; the sample has none, so the test makes a copy of it whose
# output is renamed 'prob:bilities' (the same length, so the protobuf stays
# valid) and expects prob_bilities.bin.  The unsupported-operator case is made
# the same way (Relu -> Loop: control flow, which the NPU compiler refuses).
set -u

# The hand-made models' protobuf encoder (tests/tools/onnx_pb.py).
PYTHONPATH=$(dirname "$0")${PYTHONPATH:+:$PYTHONPATH}
export PYTHONPATH
BIN=${1:-build/bin/npu-run}
MODEL=tools/npu-run/samples/tiny-cnn.onnx
LABELS=tools/npu-run/samples/tiny-cnn.labels
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
pass=0
fail=0

ok() { pass=$((pass + 1)); }
no() { fail=$((fail + 1)); echo "FAIL: $*"; }

# check NAME PYTHON-EXPR: EXPR sees the JSON output of the last run as j.
check() {
	if python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" \
		"$TMP/out.json" 2>"$TMP/py.err"; then ok; else no "$1"; cat "$TMP/py.err"; fi
}

# expect_exit NAME CODE ARGS...: exit status CODE and exactly one line on stderr,
# starting with "npu-run: ".
expect_exit() {
	name=$1 code=$2
	shift 2
	"$BIN" "$@" >/dev/null 2>"$TMP/err"
	rc=$?
	lines=$(wc -l <"$TMP/err")
	if [ "$rc" -eq "$code" ] && [ "$lines" -eq 1 ] && grep -q '^npu-run: ' "$TMP/err"; then ok
	else no "$name: exit $rc (want $code), $lines stderr lines: $(cat "$TMP/err")"; fi
}

# err_has NAME TEXT: the last expect_exit's message contains TEXT.
err_has() {
	if grep -qF -- "$2" "$TMP/err"; then ok; else no "$1: no '$2' in: $(cat "$TMP/err")"; fi
}

# run_json NAME ARGS...: run with --json into out.json, expect success and a quiet stderr.
run_json() {
	name=$1
	shift
	if "$BIN" "$@" --json >"$TMP/out.json" 2>"$TMP/err" && [ ! -s "$TMP/err" ]; then ok
	else no "$name: exit $?, stderr: $(cat "$TMP/err")"; fi
}

# same NAME FILE1 FILE2 / differ NAME FILE1 FILE2
same() { if cmp -s "$2" "$3"; then ok; else no "$1: $2 and $3 differ"; fi; }
differ() {
	if [ -f "$2" ] && [ -f "$3" ] && ! cmp -s "$2" "$3"; then ok
	else no "$1: $2 and $3 are equal or missing"; fi
}

# npy_is NAME FILE DESCR SHAPE DATA: FILE is NumPy format 1.0 with that descr,
# C order and SHAPE (a Python tuple, e.g. "(1, 10)"), and its data bytes are
# those of the file DATA.  The header is parsed by hand (no numpy needed): magic,
# version, u16 length, a dict literal padded with spaces to a multiple of 64
# bytes and ended by a newline.
npy_is() {
	if python3 -c "
import ast, struct, sys
path, descr, shape, want = sys.argv[1], sys.argv[2], ast.literal_eval(sys.argv[3]), sys.argv[4]
b = open(path, 'rb').read()
assert b[:8] == b'\x93NUMPY\x01\x00', 'not .npy 1.0: %r' % b[:8]
hlen = struct.unpack('<H', b[8:10])[0]
assert (10 + hlen) % 64 == 0 and b[9 + hlen:10 + hlen] == b'\n', 'header not padded to 64'
h = ast.literal_eval(b[10:10 + hlen].decode('latin1'))
assert h == {'descr': descr, 'fortran_order': False, 'shape': shape}, 'header %r' % h
assert b[10 + hlen:] == open(want, 'rb').read(), 'data differs from ' + want
" "$2" "$3" "$4" "$5" 2>"$TMP/py.err"; then ok; else no "$1: $(tail -1 "$TMP/py.err")"; fi
}

# size_is NAME FILE BYTES
size_is() {
	if [ -f "$2" ] && [ "$(wc -c <"$2")" -eq "$3" ]; then ok
	else no "$1: $2 missing or not $3 bytes"; fi
}

if [ ! -x "$BIN" ]; then
	echo "$BIN not built (make build/bin/npu-run)"
	echo "0 passed, 1 failed"
	exit 1
fi
if [ ! -f "$MODEL" ]; then
	echo "$MODEL missing"
	echo "0 passed, 1 failed"
	exit 1
fi

# ---- test data, written with python3 ----
python3 - "$TMP" "$MODEL" <<'EOF'
import math, struct, sys
tmp, model = sys.argv[1], sys.argv[2]
n = 3 * 32 * 32

def floats(k):
    return struct.pack('<%df' % n, *[math.sin(0.01 * (k + 1) * i) for i in range(n)])

def npy(path, descr, shape, data, fortran=False):
    # Format 1.0: magic, version, u16 header length, the dict padded with
    # spaces to a multiple of 64 bytes including the final newline.
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, 'True' if fortran else 'False', repr(tuple(shape)))
    pad = 64 - (10 + len(d) + 1) % 64
    h = (d + ' ' * (pad % 64) + '\n').encode()
    open(path, 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h + data)

a, b = floats(0), floats(1)
open(tmp + '/a.raw', 'wb').write(a)
open(tmp + '/b.raw', 'wb').write(b)
open(tmp + '/ab.raw', 'wb').write(a + b)
open(tmp + '/short.raw', 'wb').write(a[:1000])
npy(tmp + '/a.npy', '<f4', (1, 3, 32, 32), a)
npy(tmp + '/f8.npy', '<f8', (1, 3, 32, 32), struct.pack('<%dd' % n, *([0.5] * n)))
npy(tmp + '/shape.npy', '<f4', (1, 3, 16, 64), a)
npy(tmp + '/fortran.npy', '<f4', (1, 3, 32, 32), a, fortran=True)
npy(tmp + '/trunc.npy', '<f4', (1, 3, 32, 32), a[:100])
npy(tmp + '/ab.npy', '<f4', (2, 1, 3, 32, 32), a + b)
# Same-length renames keep every protobuf length field valid.
m = open(model, 'rb').read()
open(tmp + '/colon.onnx', 'wb').write(m.replace(b'probabilities', b'prob:bilities'))
open(tmp + '/loop.onnx', 'wb').write(m.replace(b'Relu', b'Loop'))
# Non-ASCII names (tools/common/json.c): 'image' as UTF-8 'imgé' and as
# bytes that are not UTF-8, both 5 bytes.
open(tmp + '/utf8.onnx', 'wb').write(m.replace(b'image', b'img\xc3\xa9'))
open(tmp + '/badutf8.onnx', 'wb').write(m.replace(b'image', b'img\xff\xfe'))
EOF
mkdir -p "$TMP/cal"
cp "$TMP/a.raw" "$TMP/cal/0.raw"
cp "$TMP/b.raw" "$TMP/cal/1.raw"

# ---- usage errors: exit 2, one line ----
expect_exit "unknown flag" 2 "$MODEL" --frobnicate
err_has "unknown flag" "--frobnicate"
expect_exit "missing value" 2 "$MODEL" --iterations
err_has "missing value" "needs a value"
expect_exit "bad number" 2 "$MODEL" --iterations ten
err_has "bad number" "'ten'"
expect_exit "zero iterations" 2 "$MODEL" --iterations 0
expect_exit "negative warmup" 2 "$MODEL" --warmup -1
expect_exit "batch too large" 2 "$MODEL" --batch 65
expect_exit "clusters 0" 2 "$MODEL" --clusters 0
expect_exit "bad duration" 2 "$MODEL" --duration soon
expect_exit "percentile 0" 2 "$MODEL" --percentiles 0,50
err_has "percentile 0" "above 0"
expect_exit "percentile 101" 2 "$MODEL" --percentiles 50,101
expect_exit "percentile list" 2 "$MODEL" --percentiles 50,,90
expect_exit "percentile word" 2 "$MODEL" --percentiles median
expect_exit "bad precision" 2 "$MODEL" --precision fp16
expect_exit "int8 without calibrate" 2 "$MODEL" --precision int8
err_has "int8 without calibrate" "--calibrate"
expect_exit "compile-only without -o" 2 "$MODEL" --compile-only
err_has "compile-only without -o" "-o FILE"
expect_exit "switch with value" 2 "$MODEL" --json=yes
expect_exit "no model" 2 --iterations 3
expect_exit "two models" 2 "$MODEL" "$MODEL"
expect_exit "labels without top-k" 2 "$MODEL" --labels "$LABELS"
expect_exit "unknown input name" 2 "$MODEL" --device emu --input pixels="$TMP/a.raw"
err_has "unknown input name" "'image'"
expect_exit "input twice" 2 "$MODEL" --device emu --input image="$TMP/a.raw" \
	--input image="$TMP/b.raw"
expect_exit "unknown top-k output" 2 "$MODEL" --device emu --top-k 3 --top-k-output logits
err_has "unknown top-k output" "probabilities"
expect_exit "unknown detector" 2 "$MODEL" --detect yolo
err_has "unknown detector" "known: blazeface"
for t in -0.1 1.5 nan abc ""; do
	expect_exit "detect threshold '$t'" 2 "$MODEL" --detect blazeface --detect-threshold "$t"
done
expect_exit "detect-from without detect" 2 "$MODEL" --detect-from "$TMP"
err_has "detect-from without detect" "--detect DETECTOR"

# ---- runtime errors: exit 1, one line ----
expect_exit "missing model" 1 "$TMP/none.onnx" --device emu
err_has "missing model" "$TMP/none.onnx"
expect_exit "missing device node" 1 "$MODEL" --device /dev/accel/accel9
err_has "missing device node" "--device /dev/accel/accel9: no such device node"
err_has "missing device node hint" "--device emu"
expect_exit "not a model" 1 "$LABELS" --device emu
err_has "not a model" "ONNX"
expect_exit "unsupported op" 1 "$TMP/loop.onnx" --device emu
err_has "unsupported op names op" "'Loop'"
err_has "unsupported op names node" "relu1"
err_has "unsupported op names opset" "opset"
err_has "unsupported op hint" "run with a model the NPU supports"
# ---- the CPU fallback (issue 17): x [2,3,3] -> Relu -> Det (host) -> Add(d, d) ----
# Hand-made protobuf; Det has no NPU lowering, so it runs on the host between
# the Relu and the Add programs with --cpu-fallback and is refused without.
python3 - "$TMP" <<'EOF'
import struct, sys
tmp = sys.argv[1]

from onnx_pb import enc, fld, value_info

nodes = (fld(1, fld(1, b'x') + fld(2, b'r') + fld(3, b'relu_1') + fld(4, b'Relu')) +
         fld(1, fld(1, b'r') + fld(2, b'd') + fld(3, b'det_1') + fld(4, b'Det')) +
         fld(1, fld(1, b'd') + fld(1, b'd') + fld(2, b'y') + fld(3, b'add_1') + fld(4, b'Add')))
graph = nodes + fld(2, b'det') + fld(11, value_info(b'x', 1, [2, 3, 3])) + fld(12, value_info(b'y', 1, [2]))
open(tmp + '/det.onnx', 'wb').write(fld(1, 8) + fld(8, fld(2, 13)) + fld(7, graph))
x = [((i * 7) % 11 - 3) * 0.5 for i in range(18)]
open(tmp + '/det_x.raw', 'wb').write(struct.pack('<18f', *x))
want = []
for b in range(2):
    a = [max(v, 0.0) for v in x[9 * b:9 * b + 9]]
    want.append(2 * (a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) +
                     a[2] * (a[3] * a[7] - a[4] * a[6])))
open(tmp + '/det_y.txt', 'w').write(' '.join(repr(v) for v in want))
EOF
expect_exit "host op without --cpu-fallback" 1 "$TMP/det.onnx" --device emu
err_has "host op refusal names op" "'Det'"
err_has "host op refusal names node" "det_1"
err_has "host op refusal names opset" "opset 13"
err_has "host op refusal names the option" "--cpu-fallback"
run_json "--cpu-fallback" "$TMP/det.onnx" --device emu --cpu-fallback --iterations 2 \
	--input x="$TMP/det_x.raw" --output-dir "$TMP/det_out"
check "--cpu-fallback lists the host node" \
	"len(j['host_steps']) == 1 and j['host_steps'][0]['op'] == 'Det' and 'det_1' in j['host_steps'][0]['label'] and j['host_steps'][0]['wall_us'] >= 0"
check "--cpu-fallback host share" "0 <= j['host_wall_share'] <= 1 and j['steps'] == 3"
python3 -c "
import struct, sys
got = struct.unpack('<2f', open(sys.argv[1], 'rb').read())
want = [float(v) for v in open(sys.argv[2]).read().split()]
sys.exit(0 if all(abs(g - w) <= 1e-4 * (1 + abs(w)) for g, w in zip(got, want)) else 1)" \
	"$TMP/det_out/y.bin" "$TMP/det_y.txt" && ok || no "--cpu-fallback output against the reference"
run_json "no host steps" "$MODEL" --device emu --iterations 1
check "no host steps listed" "j['host_steps'] == [] and j['host_wall_share'] == 0"
if "$BIN" "$TMP/det.onnx" --device emu --cpu-fallback --iterations 1 --profile \
	>"$TMP/det.txt" 2>"$TMP/err" && grep -q "ran on the CPU (--cpu-fallback)" "$TMP/det.txt" &&
	grep -q "Det det_1 (host), .* ms on the CPU" "$TMP/det.txt"; then ok
else no "--cpu-fallback text and --profile: $(cat "$TMP/err" "$TMP/det.txt")"; fi
run_json "--cpu-fallback --profile" "$TMP/det.onnx" --device emu --cpu-fallback --iterations 1 --profile
check "--profile marks the host step" \
	"[s['host'] for s in j['profile']['steps']] == [False, True, False] and j['profile']['steps'][1]['cycles'] == 0"
"$BIN" "$TMP/det.onnx" --device emu --cpu-fallback --compile-only -o "$TMP/det.npum" \
	>/dev/null 2>"$TMP/err" && ok || no "--cpu-fallback -o: $(cat "$TMP/err")"
run_json ".npum with a host step" "$TMP/det.npum" --device emu --iterations 1
check ".npum keeps the host step" "len(j['host_steps']) == 1"
# The sample is a classifier: its 1x10 output holds no BlazeFace anchors.
expect_exit "detect on a classifier" 1 "$MODEL" --device emu --detect blazeface
err_has "detect on a classifier" "BlazeFace front model"
expect_exit "bad emulator option" 1 "$MODEL" --device emu:bogus=1
expect_exit "more clusters than healthy" 2 "$MODEL" --device emu:defect-mask=0x2001 --clusters 13
err_has "more clusters than healthy" "--clusters 12 or fewer"
expect_exit "missing labels" 1 "$MODEL" --device emu --top-k 3 --labels "$TMP/none.labels"
expect_exit "missing input file" 1 "$MODEL" --device emu --input image="$TMP/none.raw"
err_has "missing input file" "none.raw"
expect_exit "short raw input" 1 "$MODEL" --device emu --input image="$TMP/short.raw"
err_has "short raw names input" "'image'"
err_has "short raw has size" "1000 bytes"
err_has "short raw wants size" "12288 bytes"
expect_exit "npy float64" 1 "$MODEL" --device emu --input image="$TMP/f8.npy"
err_has "npy float64 names input" "'image'"
err_has "npy float64 has dtype" "float64"
err_has "npy float64 wants dtype" "float32 [1, 3, 32, 32]"
expect_exit "npy shape" 1 "$MODEL" --device emu --input image="$TMP/shape.npy"
err_has "npy shape names input" "'image'"
err_has "npy shape has shape" "[1, 3, 16, 64]"
expect_exit "npy fortran" 1 "$MODEL" --device emu --input image="$TMP/fortran.npy"
err_has "npy fortran" "Fortran"
expect_exit "npy truncated" 1 "$MODEL" --device emu --input image="$TMP/trunc.npy"

# ---- help and version ----
if "$BIN" --help | grep -q '^usage: npu-run'; then ok; else no "--help"; fi
if "$BIN" --version | grep -Eq '^npu-run [0-9]+\.[0-9]+\.[0-9]+$'; then ok; else no "--version"; fi

# ---- the JSON summary ----
run_json "json run" "$MODEL" --device emu
check "keys" "all(k in j for k in ['model', 'device', 'partition_clusters', 'precision', \
'batch', 'inputs', 'outputs', 'load_ms', 'warmup', 'iterations', 'latency_ms', \
'throughput_ips', 'simulated', 'cluster_utilization', 'steps', 'scratch_bytes'])"
check "model path" "j['model'] == '$MODEL'"
check "device" "j['device']['path'] == 'emu' and j['device']['clusters'] == 14 and \
j['device']['defect_mask'] == 0 and j['device']['clock_mhz'] > 0"
check "numbers are numbers" "all(type(v) in (int, float) and not isinstance(v, bool) for v in \
[j['load_ms'], j['throughput_ips'], j['latency_ms']['mean'], j['latency_ms']['min'], \
j['latency_ms']['max'], j['simulated']['us_per_inference'], j['simulated']['throughput_ips'], \
j['simulated']['cycles_per_run'], j['cluster_utilization'], j['steps'], j['batch']])"
check "default percentiles" \
	"[p['percentile'] for p in j['latency_ms']['percentiles']] == [50, 90, 99]"
check "latency >= 0" "all(p['ms'] >= 0 for p in j['latency_ms']['percentiles']) and \
j['latency_ms']['min'] >= 0"
check "percentiles within min..max" "all(j['latency_ms']['min'] <= p['ms'] <= \
j['latency_ms']['max'] for p in j['latency_ms']['percentiles'])"
check "simulated time > 0" "j['simulated']['us_per_inference'] > 0 and \
j['simulated']['cycles_per_run'] > 0"
check "simulated time at the clock" "abs(j['simulated']['us_per_run'] - \
j['simulated']['cycles_per_run'] / j['device']['clock_mhz']) < 1e-6"
check "throughput" "j['throughput_ips'] > 0 and abs(j['throughput_ips'] * \
j['latency_ms']['mean'] / 1000 - 1) < 1e-6"
check "cluster utilization" "0 < j['cluster_utilization'] <= 1"
check "iterations" "j['iterations'] == 10 and j['warmup'] == 1"
check "inputs listed" "j['inputs'] == [{'name': 'image', 'dtype': 'float32', \
'shape': [1, 3, 32, 32], 'bytes': 12288, 'source': 'generated', 'file': None}]"
check "outputs listed" "[(o['name'], o['dtype'], o['shape'], o['bytes']) for o in j['outputs']] \
== [('probabilities', 'float32', [1, 10], 40)]"
check "steps" "j['steps'] == 7"
check "scratch bytes" "type(j['scratch_bytes']) is int and j['scratch_bytes'] > 0 and \
j['scratch_bytes'] % 64 == 0"
SCRATCH1=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['scratch_bytes'])" \
	"$TMP/out.json")
check "no profile unasked" "'profile' not in j and 'top_k' not in j"

run_json "json percentiles" "$MODEL" --device emu --percentiles 25,99.9 --iterations 5 --warmup 0
check "asked percentiles" "[p['percentile'] for p in j['latency_ms']['percentiles']] == [25, 99.9]"
check "percentiles ordered" "j['latency_ms']['percentiles'][0]['ms'] <= \
j['latency_ms']['percentiles'][1]['ms']"
check "iterations 5" "j['iterations'] == 5 and j['warmup'] == 0"

# The text summary has the same parts.
if "$BIN" "$MODEL" --device emu >"$TMP/out.txt" 2>"$TMP/err" && [ ! -s "$TMP/err" ]; then ok
else no "text run"; fi
for key in model device partition batch input output load latency percentiles throughput \
	simulated utilization steps; do
	if grep -q "^$key " "$TMP/out.txt"; then ok; else no "text summary line '$key'"; fi
done
if grep -q '^percentiles p50 .* ms, p90 .* ms, p99 .* ms$' "$TMP/out.txt"; then ok
else no "text percentiles"; fi

# ---- outputs and inputs ----
run_json "output-dir" "$MODEL" --device emu --output-dir "$TMP/gen1/sub" --iterations 1
size_is "output file" "$TMP/gen1/sub/probabilities.bin" 40
check "output file in JSON" "j['outputs'][0]['file'] == '$TMP/gen1/sub/probabilities.bin'"
"$BIN" "$MODEL" --device emu --output-dir "$TMP/gen2" --iterations 1 >/dev/null 2>&1
GEN_OUT=$TMP/gen1/sub/probabilities.bin
same "generated inputs are deterministic" "$GEN_OUT" "$TMP/gen2/probabilities.bin"

# Sanitising: 'prob:bilities' -> prob_bilities.bin.
run_json "sanitised name" "$TMP/colon.onnx" --device emu --output-dir "$TMP/colon" --iterations 1
size_is "sanitised file" "$TMP/colon/prob_bilities.bin" 40
check "sanitised name in JSON" "j['outputs'][0]['name'] == 'prob:bilities' and \
j['outputs'][0]['file'].endswith('/prob_bilities.bin')"
if [ "$(ls "$TMP/colon")" = "prob_bilities.bin" ]; then ok; else no "only the sanitised file"; fi
same "renamed output same data" "$TMP/colon/prob_bilities.bin" "$GEN_OUT"

run_json "raw input" "$MODEL" --device emu --input image="$TMP/a.raw" --output-dir "$TMP/ra1" \
	--iterations 1
check "raw input in JSON" "j['inputs'][0]['source'] == 'file' and \
j['inputs'][0]['file'] == '$TMP/a.raw'"
"$BIN" "$MODEL" --device emu --input image="$TMP/a.raw" --output-dir "$TMP/ra2" --iterations 1 \
	>/dev/null 2>&1
same "same input twice" "$TMP/ra1/probabilities.bin" "$TMP/ra2/probabilities.bin"
differ "raw input is used" "$TMP/ra1/probabilities.bin" "$GEN_OUT"
"$BIN" "$MODEL" --device emu --input image="$TMP/b.raw" --output-dir "$TMP/rb" --iterations 1 \
	>/dev/null 2>&1
differ "other input, other output" "$TMP/ra1/probabilities.bin" "$TMP/rb/probabilities.bin"
"$BIN" "$MODEL" --device emu --input "$TMP/a.raw" --output-dir "$TMP/rbare" --iterations 1 \
	>/dev/null 2>&1
same "bare FILE for a one-input model" "$TMP/ra1/probabilities.bin" "$TMP/rbare/probabilities.bin"
if "$BIN" "$MODEL" --device emu --input image="$TMP/a.npy" --output-dir "$TMP/npy" \
	--iterations 1 >/dev/null 2>"$TMP/err"; then ok; else no "npy input: $(cat "$TMP/err")"; fi
same "npy equals raw" "$TMP/ra1/probabilities.bin" "$TMP/npy/probabilities.bin"

# ---- .npum round trip ----
if "$BIN" "$MODEL" --device emu --compile-only -o "$TMP/tiny.npum" >"$TMP/out.txt" 2>"$TMP/err" \
	&& [ -s "$TMP/tiny.npum" ] && [ ! -s "$TMP/err" ]; then ok
else no "compile-only: $(cat "$TMP/err")"; fi
if grep -q "tiny.npum" "$TMP/out.txt"; then ok; else no "compile-only says where"; fi
run_json "compile-only json" "$MODEL" --device emu --compile-only -o "$TMP/tiny2.npum"
check "compile-only JSON" "j['output'] == '$TMP/tiny2.npum' and j['batch'] == 1 and \
'latency_ms' not in j and j['scratch_bytes'] > 0"
"$BIN" "$TMP/tiny.npum" --device emu --input image="$TMP/a.raw" --output-dir "$TMP/npum" \
	--iterations 1 >/dev/null 2>&1
same "npum gives the onnx outputs" "$TMP/ra1/probabilities.bin" "$TMP/npum/probabilities.bin"
expect_exit "npum batch mismatch" 1 "$TMP/tiny.npum" --device emu --batch 2
err_has "npum batch mismatch" "batch"
expect_exit "partition smaller than the npum" 2 "$TMP/tiny.npum" --device emu --clusters 2
err_has "partition smaller than the npum" "--clusters 14 or more"

# ---- top-k with labels ----
if "$BIN" "$MODEL" --device emu --top-k 3 --labels "$LABELS" >"$TMP/out.txt" 2>"$TMP/err"; then ok
else no "top-k text: $(cat "$TMP/err")"; fi
sed -n '/^top-k /,$p' "$TMP/out.txt" | sed -n '2,4s/.*  //p' >"$TMP/top.txt"
if [ "$(wc -l <"$TMP/top.txt")" -eq 3 ]; then ok; else no "top-k text has 3 classes"; fi
while read -r label; do
	if grep -qx "$label" "$LABELS"; then ok; else no "top-k label '$label' not in $LABELS"; fi
done <"$TMP/top.txt"
run_json "top-k json" "$MODEL" --device emu --top-k 3 --labels "$LABELS"
check "top-k 3 entries" \
	"len(j['top_k']['classes']) == 3 and j['top_k']['output'] == 'probabilities'"
check "top-k sorted" "[c['score'] for c in j['top_k']['classes']] == \
sorted([c['score'] for c in j['top_k']['classes']], reverse=True)"
check "top-k labels" "all(c['label'] == open('$LABELS').read().split('\n')[c['index']] \
for c in j['top_k']['classes'])"
check "top-k scores are probabilities" "all(0 <= c['score'] <= 1 for c in j['top_k']['classes'])"

# ---- profile ----
run_json "profile" "$MODEL" --device emu --profile
check "profile steps sum to total" "sum(s['cycles'] for s in j['profile']['steps']) == \
j['profile']['total_cycles'] > 0"
check "profile total is the run's" \
	"j['profile']['total_cycles'] == j['simulated']['cycles_per_run']"
check "profile step labels" "j['profile']['steps'][0]['label'] == 'Conv conv1' and \
len(j['profile']['steps']) == j['steps']"
check "profile shares" "abs(sum(s['share'] for s in j['profile']['steps']) - 1) < 1e-6"
check "bottleneck named" "j['profile']['bottleneck'] in ('compute', 'SRAM', 'network')"
check "bottleneck is the max" "j['profile']['utilization'][{'compute': 'compute', 'SRAM': 'sram', \
'network': 'network'}[j['profile']['bottleneck']]] == max(j['profile']['utilization'].values())"
check "three utilizations" "all(0 <= j['profile']['utilization'][k] <= 1 for k in \
('compute', 'sram', 'network'))"
check "cluster units" "len(j['profile']['clusters']) == j['partition_clusters'] and \
all(0 <= c[u] <= 1 for c in j['profile']['clusters'] for u in ('tcu', 'cvu', 'dtdu', 'csu'))"
check "hottest links" "0 < len(j['profile']['hottest_links']) <= 5 and \
[l['bytes'] for l in j['profile']['hottest_links']] == \
sorted([l['bytes'] for l in j['profile']['hottest_links']], reverse=True) and \
abs(j['profile']['hottest_links'][0]['utilization'] - \
j['profile']['utilization']['network']) < 1e-9"
check "link ends" "all(l['from'] == l['link'] // 4 and l['direction'] == \
['east', 'west', 'north', 'south'][l['link'] % 4] for l in j['profile']['hottest_links'])"
if "$BIN" "$MODEL" --device emu --profile >"$TMP/out.txt" 2>/dev/null && \
	grep -Eq '^bottleneck +(compute|SRAM|network)$' "$TMP/out.txt" && \
	grep -Eq '^memory +scratch [1-9][0-9]* bytes, constants ' "$TMP/out.txt" && \
	grep -q '^utilization compute .*, SRAM .*, network ' "$TMP/out.txt"; then ok
else no "profile text"; fi

# ---- batch ----
run_json "batch 2" "$MODEL" --device emu --batch 2 --output-dir "$TMP/b2"
check "batch reported" "j['batch'] == 2"
check "batch scratch: a copy per element" "j['scratch_bytes'] == 2 * $SCRATCH1"
check "batch throughput" "j['throughput_ips'] > 0 and abs(j['throughput_ips'] * \
j['latency_ms']['mean'] / 1000 - 2) < 1e-6"
check "batch simulated per inference" "abs(j['simulated']['us_per_inference'] * 2 - \
j['simulated']['us_per_run']) < 1e-6"
size_is "batch element 1 file" "$TMP/b2/probabilities.1.bin" 40
same "batch element 0 is the unbatched output" "$TMP/b2/probabilities.bin" "$GEN_OUT"
same "batch element 1 same input" "$TMP/b2/probabilities.1.bin" "$GEN_OUT"
# A file of two tensors gives one to each element.
run_json "batch per element" "$MODEL" --device emu --batch 2 --input image="$TMP/ab.raw" \
	--output-dir "$TMP/bab" --iterations 1
same "per-element raw 0" "$TMP/bab/probabilities.bin" "$TMP/ra1/probabilities.bin"
same "per-element raw 1" "$TMP/bab/probabilities.1.bin" "$TMP/rb/probabilities.bin"
"$BIN" "$MODEL" --device emu --batch 2 --input image="$TMP/ab.npy" --output-dir "$TMP/babn" \
	--iterations 1 >/dev/null 2>&1
same "per-element npy 1" "$TMP/babn/probabilities.1.bin" "$TMP/rb/probabilities.bin"
"$BIN" "$MODEL" --device emu --batch 2 --input image="$TMP/a.raw" --output-dir "$TMP/baa" \
	--iterations 1 >/dev/null 2>&1
same "one tensor fills the batch" "$TMP/baa/probabilities.1.bin" "$TMP/ra1/probabilities.bin"

# ---- timing ----
run_json "duration" "$MODEL" --device emu --duration 0.2 --iterations 3
check "duration runs at least the iterations" "j['iterations'] >= 3"
check "duration runs 0.2 s" "j['iterations'] * j['latency_ms']['mean'] >= 150"

# ---- partitions, precision, URLs ----
run_json "defect mask and clusters" "$MODEL" --device emu:defect-mask=0x2001 --clusters 4 \
	--output-dir "$TMP/cl4" --iterations 2
check "partition of 4" "j['partition_clusters'] == 4 and j['device']['defect_mask'] == 8193 \
and j['device']['healthy_clusters'] == 12"
same "fused clusters change no bit" "$TMP/cl4/probabilities.bin" "$GEN_OUT"
run_json "int8" "$MODEL" --device emu --precision int8 --calibrate "$TMP/cal" --iterations 2 \
	--top-k 1
check "int8 reported" "j['precision'] == 'int8' and j['top_k']['classes'][0]['score'] > 0"
# w8: the Gemm's weights int8 on the device, the Convs bf16; the same top class.
run_json "w8" "$MODEL" --device emu --precision w8 --iterations 1 --output-dir "$TMP/w8"
check "w8 reported" "j['precision'] == 'w8'"
python3 - "$TMP/w8/probabilities.bin" "$GEN_OUT" <<'PY' && ok || no "w8 agrees with bf16"
import struct, sys
a, b = (open(p, 'rb').read() for p in sys.argv[1:3])
x, y = (struct.unpack('<%df' % (len(v) // 4), v) for v in (a, b))
sys.exit(0 if x.index(max(x)) == y.index(max(y)) and max(abs(p - q) for p, q in zip(x, y)) < 0.02 else 1)
PY
# bf16x3: the Convs as three bf16 products (closer to fp32), more cycles,
# the same top class and probabilities close to bf16's.
run_json "bf16x3" "$MODEL" --device emu --precision bf16x3 --iterations 1 \
	--output-dir "$TMP/x3"
check "bf16x3 reported" "j['precision'] == 'bf16x3' and j['simulated']['cycles_per_run'] > 3540"
python3 - "$TMP/x3/probabilities.bin" "$GEN_OUT" <<'PY' && ok || no "bf16x3 agrees with bf16"
import struct, sys
a, b = (open(p, 'rb').read() for p in sys.argv[1:3])
x, y = (struct.unpack('<%df' % (len(v) // 4), v) for v in (a, b))
sys.exit(0 if x.index(max(x)) == y.index(max(y)) and max(abs(p - q) for p, q in zip(x, y)) < 0.02 else 1)
PY
run_json "file URL" "file://$PWD/$MODEL" --device emu --iterations 2
check "file URL runs" "j['model'].startswith('file://') and j['simulated']['cycles_per_run'] > 0"

# ---- compiler debug output (NPU_DEBUG) ----
# Each topic prints its own lines on stderr and nothing of the others; the
# outputs are the same bits with it on; unset, stderr stays empty.
"$BIN" "$MODEL" --device emu --iterations 1 --output-dir "$TMP/dbg0" >/dev/null 2>"$TMP/dbg0.err"
if [ -s "$TMP/dbg0.err" ]; then no "no debug output without NPU_DEBUG"; else ok; fi
for topic in ir rewrites fuse tiles mem; do
	NPU_DEBUG=$topic "$BIN" "$MODEL" --device emu --iterations 1 --output-dir "$TMP/dbg" \
		>/dev/null 2>"$TMP/dbg.err"
	others=$(grep '^npu [a-z]*:' "$TMP/dbg.err" | grep -cv "^npu $topic:")
	# The sample has nothing to rewrite (a 3-D pool below has).
	if [ "$topic" = rewrites ] || grep -q "^npu $topic: " "$TMP/dbg.err"; then ok
	else no "NPU_DEBUG=$topic prints"; fi
	[ "$others" -eq 0 ] && ok || no "NPU_DEBUG=$topic prints only $topic"
	same "NPU_DEBUG=$topic changes no bit" "$TMP/dbg/probabilities.bin" "$TMP/dbg0/probabilities.bin"
done
NPU_DEBUG=fuse "$BIN" "$MODEL" --device emu --iterations 1 >/dev/null 2>"$TMP/dbg.err"
grep -q "^npu fuse: activation Relu .* into Conv" "$TMP/dbg.err" && ok || no "fuse names the fused activation"
NPU_DEBUG=tiles "$BIN" "$MODEL" --device emu --iterations 1 >/dev/null 2>"$TMP/dbg.err"
grep -q "^npu tiles: Conv conv1: [0-9]* tiles over" "$TMP/dbg.err" && ok || no "tiles names the node and its tiles"
NPU_DEBUG=mem "$BIN" "$MODEL" --device emu --iterations 1 >/dev/null 2>"$TMP/dbg.err"
grep -q "^npu mem: scratch: .* B planned per input" "$TMP/dbg.err" && ok || no "mem prints the plan's total"
NPU_DEBUG=ir "$BIN" "$MODEL" --device emu --iterations 1 >/dev/null 2>"$TMP/dbg.err"
for pass_name in "shape inference" rewrites fusion; do
	grep -q "^npu ir: after $pass_name" "$TMP/dbg.err" && ok || no "ir prints the graph after $pass_name"
done
POOL3D=/usr/share/libonnx-testdata/data/node/test_maxpool_3d_default/model.onnx
NPU_DEBUG=rewrites "$BIN" "$POOL3D" --device emu --iterations 1 >/dev/null 2>"$TMP/dbg.err"
grep -q "^npu rewrites: MaxPool rewrite 0 applied to node .*: replaced by new nodes" "$TMP/dbg.err" &&
	ok || no "rewrites names the rewrite that fired"
NPU_DEBUG=ir,bogus "$BIN" "$MODEL" --device emu --iterations 1 >/dev/null 2>"$TMP/dbg.err"
grep -q "NPU_DEBUG: unknown topic 'bogus' (ignored); topics are ir, rewrites, fuse, tiles, mem or all" \
	"$TMP/dbg.err" && ok || no "an unknown NPU_DEBUG topic is named"

# ---- --shape: a copy of the sample exported with symbolic dims ----
# image [batch,3,height,width] -> probabilities [batch,10]: the protobuf is
# rewritten field by field (dim_value -> dim_param, lengths recomputed).
python3 - "$MODEL" "$TMP/sym.onnx" "$TMP/sym1.onnx" <<'EOF'
import sys

from onnx_pb import parse, ser

def sub(b, field, fn):  # apply fn to each length-delimited @field
    f = parse(b)
    for e in f:
        if e[0] == (field << 3 | 2):
            e[1] = fn(e[1])
    return ser(f)

def dims(names):
    it = iter(names)
    def one(d):
        n = next(it)
        return d if n is None else ser([[2 << 3 | 2, n.encode()]])
    return lambda shape: sub(shape, 1, one)

def value(name, names):
    def fn(vi):
        if dict((k, v) for k, v in parse(vi)).get(1 << 3 | 2) != name:
            return vi
        return sub(vi, 2, lambda tp: sub(tp, 1, lambda tt: sub(tt, 2, dims(names))))
    return fn

src = open(sys.argv[1], 'rb').read()
m = sub(src, 7, lambda g: sub(sub(g, 11, value(b'image', ['batch', None, 'height', 'width'])),
                              12, value(b'probabilities', ['batch', None])))
open(sys.argv[2], 'wb').write(m)
# Only the batch open: a raw file's size fixes it.
m = sub(src, 7, lambda g: sub(sub(g, 11, value(b'image', ['batch', None, None, None])),
                              12, value(b'probabilities', ['batch', None])))
open(sys.argv[3], 'wb').write(m)
EOF
SYM=$TMP/sym.onnx
expect_exit "symbolic without --shape" 1 "$SYM" --device emu
err_has "symbolic names input and dim" "graph input 'image' has the symbolic dimension 'batch' (axis 0 of float32[batch,3,height,width])"
err_has "symbolic names the flag" "--shape image=<batch>x3x<height>x<width>"
"$BIN" "$MODEL" --device emu --iterations 1 --output-dir "$TMP/static" >/dev/null 2>&1
run_json "--shape as exported" "$SYM" --device emu --iterations 1 --shape image=1x3x32x32 \
	--output-dir "$TMP/sym1"
check "--shape in the JSON" "j['inputs'][0]['shape'] == [1, 3, 32, 32] and j['inputs'][0]['shape_given'] is True"
same "--shape runs as the static model" "$TMP/sym1/probabilities.bin" "$TMP/static/probabilities.bin"
run_json "--shape batch 2, 16x24" "$SYM" --device emu --iterations 1 --shape=image=2x3x16x24
check "--shape specialises the output" "j['outputs'][0]['shape'] == [2, 10] and j['inputs'][0]['bytes'] == 2 * 3 * 16 * 24 * 4"
"$BIN" "$SYM" --device emu --iterations 1 --shape image=1x3x32x32 >"$TMP/sym.txt" 2>&1
grep -q "^input .*image float32 .*shape from --shape" "$TMP/sym.txt" && ok || no "the summary says the shape came from --shape"
run_json "--shape matching a static input" "$MODEL" --device emu --iterations 1 --shape image=1x3x32x32
check "--shape matching a static input is accepted" "j['inputs'][0]['shape'] == [1, 3, 32, 32]"
run_json "no --shape" "$MODEL" --device emu --iterations 1
check "no shape_given without --shape" "'shape_given' not in j['inputs'][0]"
for bad in image =1x3 image=1x image=1xx3 image=x1 image=0x3x32x32 image=1x-3 image=ax3 \
	image=1x2x3x4x5x6x7x8x9 image=2147483649 "image=1 x3"; do
	expect_exit "--shape '$bad'" 2 "$SYM" --shape "$bad"
	err_has "--shape '$bad' names the option" "--shape"
done
expect_exit "--shape twice" 2 "$SYM" --shape image=1x3x32x32 --shape image=1x3x16x16
err_has "--shape twice" "given twice"
expect_exit "--shape contradicts a static dim" 1 "$SYM" --device emu --shape image=1x4x32x32
err_has "--shape contradicts a static dim" "makes axis 1 4, but the model declares float32[batch,3,height,width], where it is 3"
expect_exit "--shape of another rank" 1 "$SYM" --device emu --shape image=1x3x32
err_has "--shape of another rank" "has rank 3, but the model declares float32[batch,3,height,width]: give 4 dims"
expect_exit "--shape naming no input" 1 "$SYM" --device emu --shape pixels=1x3x32x32
err_has "--shape naming no input" "'pixels', which is not an input of the model; its inputs are 'image' float32[batch,3,height,width]"
expect_exit "--shape contradicts the static sample" 1 "$MODEL" --device emu --shape image=2x3x32x32
"$BIN" "$SYM" --device emu --shape image=2x3x16x16 --compile-only -o "$TMP/sym.npum" >/dev/null 2>&1
run_json "compiled --shape model" "$TMP/sym.npum" --device emu --iterations 1 --shape image=2x3x16x16
expect_exit "--shape against a compiled model" 1 "$TMP/sym.npum" --device emu --shape image=1x3x16x16
err_has "--shape against a compiled model" "compiled for another shape"

# ---- input shapes from the --input files (issue 17) ----
SYM1=$TMP/sym1.onnx
expect_exit "one open dim without input" 1 "$SYM1" --device emu
err_has "one open dim: both flags" "--shape image=<batch>x3x32x32 or --input image=FILE (raw or .npy)"
expect_exit "three open dims" 1 "$SYM" --device emu
err_has "three open dims names the npy flag" "or --input image=FILE.npy (npu-run)"
run_json "batch from a raw file's size" "$SYM1" --device emu --iterations 1 --input image="$TMP/ab.raw" \
	--output-dir "$TMP/fs2"
check "raw size gives batch 2" "j['inputs'][0]['shape'] == [2, 3, 32, 32] and j['inputs'][0]['shape_from'] == \"the file's size (axis 0)\" and 'shape_given' not in j['inputs'][0] and j['outputs'][0]['shape'] == [2, 10]"
"$BIN" "$SYM1" --device emu --iterations 1 --input image="$TMP/ab.raw" >"$TMP/fs.txt" 2>"$TMP/err"
err_has "the chosen shape on stderr" "npu-run: input 'image': shape 2x3x32x32 from the file's size (axis 0) of $TMP/ab.raw"
[ "$(wc -l <"$TMP/err")" -eq 1 ] && ok || no "the chosen shape is one line: $(cat "$TMP/err")"
grep -q "^input .*image float32 \[2, 3, 32, 32\] from .*ab.raw, shape from the file's size (axis 0)" \
	"$TMP/fs.txt" && ok || no "the summary says where the shape came from: $(cat "$TMP/fs.txt")"
"$BIN" "$SYM1" --device emu --iterations 1 --input image="$TMP/a.raw" --output-dir "$TMP/fs1" \
	>/dev/null 2>&1
same "batch 1 from the size runs as the static model" "$TMP/fs1/probabilities.bin" "$TMP/ra1/probabilities.bin"
run_json "every dim from an .npy header" "$SYM" --device emu --iterations 1 --input image="$TMP/a.npy" \
	--output-dir "$TMP/fnpy"
check "npy header gives the shape" "j['inputs'][0]['shape'] == [1, 3, 32, 32] and j['inputs'][0]['shape_from'] == 'the .npy header'"
same "the .npy shape runs as the static model" "$TMP/fnpy/probabilities.bin" "$TMP/ra1/probabilities.bin"
run_json "--shape wins over the file" "$SYM1" --device emu --iterations 1 --shape image=1x3x32x32 \
	--input image="$TMP/a.raw"
check "--shape wins over the file" "j['inputs'][0]['shape_from'] == '--shape' and j['inputs'][0]['shape_given'] is True"
expect_exit "raw size not a whole batch" 1 "$SYM1" --device emu --input image="$TMP/short.raw"
err_has "raw size not whole names sizes" "holds 1000 bytes, which is no whole number of float32[?,3,32,32] (12288 bytes each for axis 0)"
err_has "raw size not whole names flags" "give --shape image=DIMS or an .npy file"
expect_exit "raw file, three open dims" 1 "$SYM" --device emu --input image="$TMP/a.raw"
err_has "raw file, three open dims says why" "float32[?,3,?,?], 3 dims open, and a raw file's size gives only one; give --shape image=DIMS or an .npy file"
expect_exit "npy contradicting a static dim" 1 "$SYM1" --device emu --input image="$TMP/shape.npy"
err_has "npy contradicting names the axis" "holds shape 1x3x16x64, but input 'image' is float32[?,3,32,32]: axis 2 does not fit; save it with the model's shape or give --shape image=DIMS"
expect_exit "npy of another rank" 1 "$SYM" --device emu --input image="$TMP/ab.npy"
err_has "npy of another rank" "(rank 5), but input 'image' is float32[?,3,?,?]; save it with 4 dims or give --shape image=DIMS"

# ---- int64 inputs and outputs (token ids): int32 on the device ----
# ids int64 [1,3] -> Concat with a constant int64 [1,2] -> cat int64 [1,5],
# written as protobuf by hand; .npy '<i8' and raw in, int64 out.
python3 - "$TMP" <<'EOF'
import struct, sys
tmp = sys.argv[1]

from onnx_pb import fld, value_info

node = (fld(1, b'ids') + fld(1, b'pad') + fld(2, b'cat') + fld(4, b'Concat') +
        fld(5, fld(1, b'axis') + fld(3, 1) + fld(20, 2)))
init = fld(1, 1) + fld(1, 2) + fld(2, 7) + fld(8, b'pad') + fld(9, struct.pack('<2q', 7, -9))
graph = (fld(1, node) + fld(2, b'i64') + fld(5, init) + fld(11, value_info(b'ids', 7, [1, 3])) +
         fld(12, value_info(b'cat', 7, [1, 5])))
open(tmp + '/i64.onnx', 'wb').write(fld(1, 8) + fld(8, fld(2, 13)) + fld(7, graph))
ids = struct.pack('<3q', 3, -2, 70000)
h = "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 3), }"
h = (h + ' ' * ((64 - (10 + len(h) + 1) % 64) % 64) + '\n').encode()
open(tmp + '/ids.npy', 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h + ids)
open(tmp + '/ids.raw', 'wb').write(ids)
open(tmp + '/big.raw', 'wb').write(struct.pack('<3q', 1, 2, 1 << 33))
open(tmp + '/cat.want', 'wb').write(struct.pack('<5q', 3, -2, 70000, 7, -9))
EOF
"$BIN" "$TMP/i64.onnx" --device emu --iterations 1 --input ids="$TMP/ids.npy" \
	--output-dir "$TMP/i64npy" >/dev/null 2>"$TMP/err" && ok || no "int64 .npy input: $(cat "$TMP/err")"
same "int64 .npy in, int64 out" "$TMP/i64npy/cat.bin" "$TMP/cat.want"
"$BIN" "$TMP/i64.onnx" --device emu --iterations 1 --input ids="$TMP/ids.raw" \
	--output-dir "$TMP/i64raw" >/dev/null 2>"$TMP/err" && ok || no "int64 raw input: $(cat "$TMP/err")"
same "int64 raw in, int64 out" "$TMP/i64raw/cat.bin" "$TMP/cat.want"
expect_exit "int64 input outside int32" 1 "$TMP/i64.onnx" --device emu --input ids="$TMP/big.raw"
err_has "int64 input outside int32 named" "input 'ids': element 2 is 8589934592, outside int32"
"$BIN" "$TMP/i64.onnx" --device emu --iterations 1 --output-dir "$TMP/i64gen" >/dev/null 2>&1
python3 -c "
import struct, sys
v = struct.unpack('<5q', open(sys.argv[1], 'rb').read())
sys.exit(0 if all(x in (0, 1) for x in v[:3]) and v[3:] == (7, -9) else 1)" \
	"$TMP/i64gen/cat.bin" && ok || no "generated int64 inputs are 0 or 1"

# ---- bool inputs and outputs (masks): bytes 0/1, uint8 on the device ----
# mask bool [1,4] -> Not -> keep bool [1,4]; .npy '|b1' and raw in, raw out.
python3 - "$TMP" <<'EOF'
import struct, sys
tmp = sys.argv[1]

from onnx_pb import enc, fld, value_info

node = fld(1, b'mask') + fld(2, b'keep') + fld(4, b'Not')
graph = (fld(1, node) + fld(2, b'b') + fld(11, value_info(b'mask', 9, [1, 4])) +
         fld(12, value_info(b'keep', 9, [1, 4])))
open(tmp + '/bool.onnx', 'wb').write(fld(1, 8) + fld(8, fld(2, 13)) + fld(7, graph))
m = bytes([1, 0, 0, 1])
h = "{'descr': '|b1', 'fortran_order': False, 'shape': (1, 4), }"
h = (h + ' ' * ((64 - (10 + len(h) + 1) % 64) % 64) + '\n').encode()
open(tmp + '/mask.npy', 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h + m)
open(tmp + '/mask.raw', 'wb').write(m)
open(tmp + '/bad.raw', 'wb').write(bytes([1, 0, 255, 1]))
open(tmp + '/keep.want', 'wb').write(bytes([0, 1, 1, 0]))
EOF
"$BIN" "$TMP/bool.onnx" --device emu --iterations 1 --input mask="$TMP/mask.npy" \
	--output-dir "$TMP/bnpy" >/dev/null 2>"$TMP/err" && ok || no "bool .npy input: $(cat "$TMP/err")"
same "bool .npy in, bool out" "$TMP/bnpy/keep.bin" "$TMP/keep.want"
"$BIN" "$TMP/bool.onnx" --device emu --iterations 1 --input mask="$TMP/mask.raw" \
	--output-dir "$TMP/braw" >/dev/null 2>"$TMP/err" && ok || no "bool raw input: $(cat "$TMP/err")"
same "bool raw in, bool out" "$TMP/braw/keep.bin" "$TMP/keep.want"
expect_exit "bool input byte other than 0/1" 1 "$TMP/bool.onnx" --device emu --input mask="$TMP/bad.raw"
err_has "bool input byte named" "input 'mask': element 2 is 255; a bool tensor holds bytes 0 (false) and 1 (true) only"

# ---- float64, uint32, int16 (issue 17): float32 / int32 on the device ----
# f64: x float64 [1,4] + a float64 constant; u32: Max(a uint32 [1,3], a
# uint32 constant); i16: Concat(s int16 [1,3], an int16 constant).  .npy
# '<f8', '<u4', '<i2' and raw in; raw and .npy out in the model's type; the
# compile's note; values the NPU's type cannot hold refused by name.
python3 - "$TMP" <<'EOF'
import struct, sys
tmp = sys.argv[1]

from onnx_pb import enc, fld, value_info

def model(path, op, x, dt, xdims, c, cfmt, cdims, y, ydims, attrs=b''):
    node = fld(1, x) + fld(1, b'c') + fld(2, y) + fld(4, op) + attrs
    init = (b''.join(fld(1, d) for d in cdims) + fld(2, dt) + fld(8, b'c') +
            fld(9, struct.pack(cfmt, *c)))
    graph = (fld(1, node) + fld(2, b't') + fld(5, init) + fld(11, value_info(x, dt, xdims)) +
             fld(12, value_info(y, dt, ydims)))
    open(path, 'wb').write(fld(1, 8) + fld(8, fld(2, 13)) + fld(7, graph))

def npy(path, descr, shape, data):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    h = (h + ' ' * ((64 - (10 + len(h) + 1) % 64) % 64) + '\n').encode()
    open(path, 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h + data)

# float64 (DOUBLE, 11): x + c, values exact in float32.
model(tmp + '/f64.onnx', b'Add', b'x', 11, [1, 4], [0.5, -1, 2, 0.125], '<4d', [1, 4], b'y', [1, 4])
x = struct.pack('<4d', 1, 2, -3, 0.25)
npy(tmp + '/x64.npy', '<f8', '(1, 4)', x)
open(tmp + '/x64.raw', 'wb').write(x)
open(tmp + '/big64.raw', 'wb').write(struct.pack('<4d', 1, 1e300, 0, 0))
open(tmp + '/y64.want', 'wb').write(struct.pack('<4d', 1.5, 1, -1, 0.375))
# uint32 (12): Max(a, c), a value of c above 2^30.
model(tmp + '/u32.onnx', b'Max', b'a', 12, [1, 3], [5, 7, 2000000000], '<3I', [1, 3], b'm', [1, 3])
a = struct.pack('<3I', 6, 1, 2)
npy(tmp + '/a32.npy', '<u4', '(1, 3)', a)
open(tmp + '/big32.raw', 'wb').write(struct.pack('<3I', 6, 3000000000, 2))
open(tmp + '/m32.want', 'wb').write(struct.pack('<3I', 6, 7, 2000000000))
# int16 (5): Concat(s, c) along axis 1.
model(tmp + '/i16.onnx', b'Concat', b's', 5, [1, 3], [-300, 32767], '<2h', [1, 2], b'cat', [1, 5],
      fld(5, fld(1, b'axis') + fld(3, 1) + fld(20, 2)))
s16 = struct.pack('<3h', -32768, 5, 1000)
npy(tmp + '/s16.npy', '<i2', '(1, 3)', s16)
open(tmp + '/cat16.want', 'wb').write(s16 + struct.pack('<2h', -300, 32767))
EOF
"$BIN" "$TMP/f64.onnx" --device emu --iterations 1 --input x="$TMP/x64.npy" \
	--output-dir "$TMP/o64" >"$TMP/out.txt" 2>"$TMP/err" && ok || no "float64 .npy input: $(cat "$TMP/err")"
same "float64 .npy in, float64 out" "$TMP/o64/y.bin" "$TMP/y64.want"
if grep -q '^note        float64 computed as float32 (the NPU has no float64): 3 tensors (c, x, y); nodes' \
	"$TMP/out.txt"; then ok; else no "float64 note: $(cat "$TMP/out.txt")"; fi
run_json "float64 raw input, npy output" "$TMP/f64.onnx" --device emu --iterations 1 \
	--input x="$TMP/x64.raw" --output-dir "$TMP/o64n" --output-format npy
npy_is "float64 npy output" "$TMP/o64n/y.npy" '<f8' '(1, 4)' "$TMP/y64.want"
check "float64 note in JSON" "len(j['notes']) == 1 and j['notes'][0].startswith('float64 computed as float32')"
check "float64 input in JSON" "j['inputs'][0]['dtype'] == 'float64'"
expect_exit "float64 input beyond float32" 1 "$TMP/f64.onnx" --device emu --input x="$TMP/big64.raw"
err_has "float64 input beyond float32 named" "input 'x': element 1 is 1e+300, beyond float32's largest value"
"$BIN" "$TMP/u32.onnx" --device emu --iterations 1 --input a="$TMP/a32.npy" \
	--output-dir "$TMP/o32" --output-format npy >/dev/null 2>"$TMP/err" && ok || \
	no "uint32 .npy input: $(cat "$TMP/err")"
npy_is "uint32 npy in and out" "$TMP/o32/m.npy" '<u4' '(1, 3)' "$TMP/m32.want"
expect_exit "uint32 input outside int32" 1 "$TMP/u32.onnx" --device emu --input a="$TMP/big32.raw"
err_has "uint32 input outside int32 named" "input 'a': element 1 is 3000000000, outside int32"
"$BIN" "$TMP/i16.onnx" --device emu --iterations 1 --input s="$TMP/s16.npy" \
	--output-dir "$TMP/o16" --output-format npy >/dev/null 2>"$TMP/err" && ok || \
	no "int16 .npy input: $(cat "$TMP/err")"
npy_is "int16 npy in and out" "$TMP/o16/cat.npy" '<i2' '(1, 5)' "$TMP/cat16.want"
run_json "tiny CNN has no notes" "$MODEL" --device emu --iterations 1
check "no notes for a float32 model" "j['notes'] == []"

# ---- --output-format npy: outputs as NumPy .npy ----
expect_exit "bad output format" 2 "$MODEL" --output-dir "$TMP/x" --output-format csv
err_has "bad output format lists choices" "choose raw or npy"
expect_exit "output format without output-dir" 2 "$MODEL" --output-format npy
err_has "output format without output-dir" "add --output-dir DIR"
run_json "npy output" "$MODEL" --device emu --iterations 1 --output-dir "$TMP/onpy" \
	--output-format npy
npy_is "npy output: float32 header and the raw run's bytes" "$TMP/onpy/probabilities.npy" \
	'<f4' '(1, 10)' "$GEN_OUT"
check "npy output file in JSON" "j['outputs'][0]['file'] == '$TMP/onpy/probabilities.npy'"
if [ "$(ls "$TMP/onpy")" = "probabilities.npy" ]; then ok; else no "npy: only the .npy file"; fi
"$BIN" "$MODEL" --device emu --iterations 1 --output-dir "$TMP/oraw" --output-format=raw \
	>/dev/null 2>&1
same "--output-format raw is the default" "$TMP/oraw/probabilities.bin" "$GEN_OUT"
"$BIN" "$MODEL" --device emu --iterations 1 --batch 2 --input image="$TMP/ab.raw" \
	--output-dir "$TMP/obnpy" --output-format npy >/dev/null 2>&1
npy_is "npy batch element 0" "$TMP/obnpy/probabilities.npy" '<f4' '(1, 10)' \
	"$TMP/ra1/probabilities.bin"
npy_is "npy batch element 1" "$TMP/obnpy/probabilities.1.npy" '<f4' '(1, 10)' \
	"$TMP/rb/probabilities.bin"
"$BIN" "$TMP/colon.onnx" --device emu --iterations 1 --output-dir "$TMP/ocolon" \
	--output-format npy >/dev/null 2>&1
npy_is "npy sanitised name" "$TMP/ocolon/prob_bilities.npy" '<f4' '(1, 10)' "$GEN_OUT"
# int64 (int32 on the device, widened as for raw) and bool outputs.
"$BIN" "$TMP/i64.onnx" --device emu --iterations 1 --input ids="$TMP/ids.npy" \
	--output-dir "$TMP/oi64" --output-format npy >/dev/null 2>"$TMP/err" && ok || \
	no "int64 npy output: $(cat "$TMP/err")"
npy_is "int64 npy output" "$TMP/oi64/cat.npy" '<i8' '(1, 5)' "$TMP/cat.want"
"$BIN" "$TMP/bool.onnx" --device emu --iterations 1 --input mask="$TMP/mask.npy" \
	--output-dir "$TMP/obool" --output-format npy >/dev/null 2>"$TMP/err" && ok || \
	no "bool npy output: $(cat "$TMP/err")"
npy_is "bool npy output" "$TMP/obool/keep.npy" '|b1' '(1, 4)' "$TMP/keep.want"
# Round trip: keep.npy is a bool [1,4] like the input mask; Not twice is the mask.
"$BIN" "$TMP/bool.onnx" --device emu --iterations 1 --input mask="$TMP/obool/keep.npy" \
	--output-dir "$TMP/obool2" --output-format npy >/dev/null 2>"$TMP/err" && ok || \
	no "npy output back as --input: $(cat "$TMP/err")"
npy_is "npy round trip" "$TMP/obool2/keep.npy" '|b1' '(1, 4)' "$TMP/mask.raw"
# The other dtypes: x float32 [1,4] -> Cast(to) -> y [1,4]; the .npy holds the
# raw run's bytes.  bfloat16 has no NumPy descr: refused before the runs.
python3 - "$TMP" <<'EOF'
import sys
tmp = sys.argv[1]

from onnx_pb import enc, fld, value_info

# Shapes of rank 2, 1 and 0 (the header tuples "(1, 4)", "(4,)", "()").
for dt, name, dims in ((10, 'f16', [1, 4]), (6, 'i32', [4]), (3, 'i8', [1, 4]), (2, 'u8', []),
                       (16, 'bf16', [1, 4])):
    node = (fld(1, b'x') + fld(2, b'y') + fld(4, b'Cast') +
            fld(5, fld(1, b'to') + fld(3, dt) + fld(20, 2)))
    graph = (fld(1, node) + fld(2, b'c') + fld(11, value_info(b'x', 1, dims)) +
             fld(12, value_info(b'y', dt, dims)))
    open('%s/cast_%s.onnx' % (tmp, name), 'wb').write(fld(1, 8) + fld(8, fld(2, 13)) +
                                                      fld(7, graph))
EOF
for c in 'f16:<f2:(1, 4)' 'i32:<i4:(4,)' 'i8:|i1:(1, 4)' 'u8:|u1:()'; do
	t=${c%%:*} descr=${c#*:} shape=${c##*:}
	descr=${descr%%:*}
	"$BIN" "$TMP/cast_$t.onnx" --device emu --iterations 1 --output-dir "$TMP/c${t}raw" \
		>/dev/null 2>&1
	"$BIN" "$TMP/cast_$t.onnx" --device emu --iterations 1 --output-dir "$TMP/c${t}npy" \
		--output-format npy >/dev/null 2>"$TMP/err" && ok || no "$t npy: $(cat "$TMP/err")"
	npy_is "$t npy output" "$TMP/c${t}npy/y.npy" "$descr" "$shape" "$TMP/c${t}raw/y.bin"
done
expect_exit "bfloat16 npy output" 2 "$TMP/cast_bf16.onnx" --device emu --output-dir "$TMP/cbf" \
	--output-format npy
err_has "bfloat16 npy output names output" "output 'y' is bfloat16"
err_has "bfloat16 npy output says raw" "use --output-format raw"
if [ -e "$TMP/cbf" ]; then no "bfloat16 npy refused before any file"; else ok; fi
"$BIN" "$TMP/cast_bf16.onnx" --device emu --iterations 1 --output-dir "$TMP/cbfraw" \
	>/dev/null 2>&1
size_is "bfloat16 raw output still works" "$TMP/cbfraw/y.bin" 8

# ---- ONNX external data: weights in a side file next to the model ----
# x float32 [1,4] -> MatMul(W [4,3]) -> Add(b [3]) -> y [1,3], written as
# protobuf by hand twice: W and b inline, and W and b in ext/w.bin (b at an
# offset); the outputs are the same bytes.  A location with '..' is refused.
mkdir -p "$TMP/ext/sub"
python3 - "$TMP" <<'EOF'
import struct, sys
tmp = sys.argv[1]

from onnx_pb import enc, fld, value_info

def entry(k, v):
    return fld(13, fld(1, k) + fld(2, v))

w = struct.pack('<12f', *[0.5 - 0.125 * i for i in range(12)])
b = struct.pack('<3f', 0.25, -1.0, 2.0)

def model(ext, loc=b'w.bin'):
    def tensor(name, dims, raw, off):
        t = b''.join(fld(1, d) for d in dims) + fld(2, 1) + fld(8, name)
        if not ext:
            return t + fld(9, raw)
        return (t + entry(b'location', loc) + entry(b'offset', b'%d' % off) +
                entry(b'length', b'%d' % len(raw)) + fld(14, 1))
    nodes = (fld(1, fld(1, b'x') + fld(1, b'W') + fld(2, b'h') + fld(4, b'MatMul')) +
             fld(1, fld(1, b'h') + fld(1, b'b') + fld(2, b'y') + fld(4, b'Add')))
    graph = (nodes + fld(2, b'ext') + fld(5, tensor(b'W', [4, 3], w, 0)) +
             fld(5, tensor(b'b', [3], b, 64)) + fld(11, value_info(b'x', 1, [1, 4])) +
             fld(12, value_info(b'y', 1, [1, 3])))
    return fld(1, 8) + fld(8, fld(2, 13)) + fld(7, graph)

open(tmp + '/ext/inline.onnx', 'wb').write(model(False))
open(tmp + '/ext/model.onnx', 'wb').write(model(True))
open(tmp + '/ext/w.bin', 'wb').write(w + b'\0' * (64 - len(w)) + b)
open(tmp + '/ext/sub/up.onnx', 'wb').write(model(True, b'../w.bin'))
open(tmp + '/ext/x.raw', 'wb').write(struct.pack('<4f', 1.0, -2.0, 0.5, 3.0))
EOF
"$BIN" "$TMP/ext/model.onnx" --device emu --iterations 1 --input x="$TMP/ext/x.raw" \
	--output-dir "$TMP/ext/o1" >/dev/null 2>"$TMP/err" && ok || no "external data: $(cat "$TMP/err")"
"$BIN" "$TMP/ext/inline.onnx" --device emu --iterations 1 --input x="$TMP/ext/x.raw" \
	--output-dir "$TMP/ext/o2" >/dev/null 2>"$TMP/err" && ok || no "inline twin: $(cat "$TMP/err")"
same "external data: same output as inline" "$TMP/ext/o1/y.bin" "$TMP/ext/o2/y.bin"
size_is "external data output" "$TMP/ext/o1/y.bin" 12
expect_exit "external data leaving the folder" 1 "$TMP/ext/sub/up.onnx" --device emu
err_has "external data '..' named" "initializer 'W': external data location '../w.bin' has a '..' component"

# --generate (a generation session; tests/models/generate_test.c checks its ids
# against onnxruntime): usage errors before any device work, then one real
# generation with a decoder exported with past.
GPT2=tests/models/transformers/gpt2_past_op17.onnx
expect_exit "generate without prompt" 2 "$GPT2" --generate 4
err_has "generate without prompt says how" "--prompt-ids"
expect_exit "both prompt forms" 2 "$GPT2" --generate 4 --prompt-ids 1,2 --prompt-ids-file "$TMP/ids"
expect_exit "prompt id not a number" 2 "$GPT2" --generate 4 --prompt-ids 1,x,3
err_has "prompt id not a number names it" "'x' is not a token id"
expect_exit "negative prompt id" 2 "$GPT2" --generate 4 --prompt-ids 1,-2
expect_exit "empty prompt" 2 "$GPT2" --generate 4 --prompt-ids ,
err_has "empty prompt says so" "the prompt is empty"
expect_exit "generate 0" 2 "$GPT2" --generate 0 --prompt-ids 1
expect_exit "prompt without generate" 2 "$GPT2" --prompt-ids 1,2
expect_exit "max-context without generate" 2 "$GPT2" --max-context 64
expect_exit "bad sample" 2 "$GPT2" --generate 4 --prompt-ids 1 --sample top-k=many
expect_exit "top-p above 1" 2 "$GPT2" --generate 4 --prompt-ids 1 --sample top-p=1.5
expect_exit "temperature 0" 2 "$GPT2" --generate 4 --prompt-ids 1 --sample temperature=0
expect_exit "generate with batch" 2 "$GPT2" --generate 4 --prompt-ids 1 --batch 2
expect_exit "bad eos" 2 "$GPT2" --generate 4 --prompt-ids 1 --eos end
expect_exit "prompt over max context" 2 "$GPT2" --generate 4 --prompt-ids 1,2,3 --max-context 2 \
	--device emu
err_has "prompt over max context says so" "more than the maximum context of 2"
: >"$TMP/empty.ids"
expect_exit "empty prompt file" 1 "$GPT2" --generate 4 --prompt-ids-file "$TMP/empty.ids" --device emu
expect_exit "missing prompt file" 1 "$GPT2" --generate 4 --prompt-ids-file "$TMP/none.ids" --device emu
expect_exit "generate with a model without past" 1 "$MODEL" --generate 4 --prompt-ids 1 --device emu
printf '1, 2,3\n4\n' >"$TMP/p.ids"
if "$BIN" "$GPT2" --device emu --generate 6 --prompt-ids-file "$TMP/p.ids" --max-context 32 \
	--json >"$TMP/out.json" 2>"$TMP/err"; then
	ok
	check "generate: prompt from the file" "j['prompt'] == [1, 2, 3, 4]"
	check "generate: 6 ids in the vocabulary" \
		"len(j['generated']) == 6 and all(0 <= i < j['vocab'] for i in j['generated'])"
	check "generate: figures" "j['time_to_first_token_ms'] > 0 and j['tokens_per_s'] > 0 and \
j['simulated']['decode_steps'] == 5 and j['simulated']['cycles_per_token'] > 0 and \
j['ddr_bytes_per_token'] > 0 and len(j['token_latency_ms']['percentiles']) == 3"
	"$BIN" "$GPT2" --device emu --generate 6 --prompt-ids 1,2,3,4 --max-context 32 --json \
		>"$TMP/again.json" 2>/dev/null
	check "generate: --prompt-ids gives the same ids" \
		"j['generated'] == json.load(open('$TMP/again.json'))['generated']"
	first=$(python3 -c "import json; print(json.load(open('$TMP/out.json'))['generated'][1])")
	"$BIN" "$GPT2" --device emu --generate 6 --prompt-ids 1,2,3,4 --max-context 32 \
		--eos "$first" --json >"$TMP/out.json" 2>/dev/null
	check "generate: --eos stops after the id" \
		"j['generated'][-1] == $first and j['stop'] == 'end-of-sequence id'"
	"$BIN" "$GPT2" --device emu --generate 40 --prompt-ids-file "$TMP/p.ids" --max-context 16 \
		--sample top-k=5,temperature=0.8,seed=7 --json >"$TMP/out.json" 2>/dev/null
	check "generate: sampled until the context is full" \
		"len(j['generated']) == 13 and j['stop'] == 'maximum context reached'"
	"$BIN" "$GPT2" --device emu --generate 3 --prompt-ids 1,2,3,4 --max-context 32 \
		--profile --json >"$TMP/out.json" 2>/dev/null
	check "generate --profile: the decode steps sum to a token's cycles" \
		"len(j['profile']) > 10 and \
sum(s['cycles'] for s in j['profile']) == j['simulated']['cycles_per_token'] and \
any(s['step'].startswith('Attention') for s in j['profile'])"
	"$BIN" "$GPT2" --device emu --generate 3 --prompt-ids 1,2,3,4 --max-context 32 \
		--profile >"$TMP/out.txt" 2>/dev/null
	grep -q '^profile     the last decode run' "$TMP/out.txt" && ok ||
		no "generate --profile: no profile in the text summary"
else
	no "generate: $(cat "$TMP/err")"
fi

# ---- --fix (issue 17): x float32[4], sr int64 -> If(sr == 16000) then x * 2 else x + 1 ----
# Hand-made protobuf; --fix sr=V compiles only the branch V selects and the
# model then takes x alone.
python3 - "$TMP" <<'EOF'
import struct, sys
tmp = sys.argv[1]

from onnx_pb import enc, fld, value_info

def tensor(name, elem, raw):
    return fld(2, elem) + fld(8, name) + fld(9, raw)

def node(ins, outs, name, op, attrs=b''):
    return fld(1, b''.join(fld(1, i) for i in ins) + b''.join(fld(2, o) for o in outs) +
               fld(3, name) + fld(4, op) + attrs)

def branch(name, op, const, cname):
    return (node([b'x', cname], [b'out'], name + b'_op', op) + fld(2, name) +
            fld(5, tensor(cname, 1, struct.pack('<f', const))) + fld(12, value_info(b'out', 1, [4])))

attr = lambda name, g: fld(5, fld(1, name) + fld(6, g) + fld(20, 5))
graph = (node([b'sr', b'rate'], [b'c'], b'eq', b'Equal') +
         node([b'c'], [b'y'], b'if_sr', b'If', attr(b'then_branch', branch(b'then', b'Mul', 2, b'two')) +
              attr(b'else_branch', branch(b'else', b'Add', 1, b'one'))) +
         fld(2, b'fix') + fld(5, tensor(b'rate', 7, struct.pack('<q', 16000))) +
         fld(11, value_info(b'x', 1, [4])) + fld(11, value_info(b'sr', 7, [])) + fld(12, value_info(b'y', 1, [4])))
open(tmp + '/fix.onnx', 'wb').write(fld(1, 8) + fld(8, fld(2, 13)) + fld(7, graph))
open(tmp + '/fix_x.raw', 'wb').write(struct.pack('<4f', -1.5, 0, 2.25, 7))
d = "{'descr': '<i8', 'fortran_order': False, 'shape': (), }"
d += ' ' * (118 - len(d)) + '\n'
open(tmp + '/sr8k.npy', 'wb').write(b'\x93NUMPY\x01\x00' + bytes([len(d), 0]) + d.encode() +
                                    struct.pack('<q', 8000))
EOF
# fix_run NAME WANT ARGS...: run fix.onnx on fix_x.raw; y must be WANT.
fix_run() {
	name=$1 want=$2
	shift 2
	rm -rf "$TMP/fix_out"
	if "$BIN" "$TMP/fix.onnx" --device emu --iterations 1 --input x="$TMP/fix_x.raw" \
		--output-dir "$TMP/fix_out" "$@" >"$TMP/fix.txt" 2>"$TMP/err" &&
		python3 -c "
import struct, sys
got = struct.unpack('<4f', open(sys.argv[1], 'rb').read())
sys.exit(0 if list(got) == [float(v) for v in sys.argv[2].split(',')] else 1)" \
		"$TMP/fix_out/y.bin" "$want"; then ok
	else no "$name: $(cat "$TMP/err")"; fi
}
fix_run "--fix sr=16000 runs the then branch" -3,0,4.5,14 --fix sr=16000
grep -qx "npu-run: fixed at compile time (no longer inputs of the model): sr=16000" "$TMP/err" &&
	ok || no "--fix says which inputs were fixed: $(cat "$TMP/err")"
fix_run "--fix sr=8000 runs the else branch" -0.5,1,3.25,8 --fix=sr=8000
fix_run "--fix sr=FILE.npy" -0.5,1,3.25,8 --fix sr="$TMP/sr8k.npy"
fix_run "--fix with a --shape of the same input" -3,0,4.5,14 --shape sr= --fix sr=16000
run_json "--fix --json" "$TMP/fix.onnx" --device emu --iterations 1 --fix sr=16000
check "--fix: the model takes x alone" "[i['name'] for i in j['inputs']] == ['x']"
"$BIN" "$TMP/fix.onnx" --device emu --iterations 1 --fix sr=16000 --input sr="$TMP/sr8k.npy" \
	>/dev/null 2>"$TMP/err"
[ $? -eq 2 ] && ok || no "--input of a fixed input: not a usage error"
err_has "--input of a fixed input lists the inputs" "the model has no input named 'sr'; its inputs are 'x'"
expect_exit "--fix no such input" 2 "$TMP/fix.onnx" --device emu --fix rate=1
err_has "--fix no such input names them" "--fix rate=1: $TMP/fix.onnx has no input of that name; its inputs are 'x', 'sr'"
expect_exit "--fix not int64" 2 "$TMP/fix.onnx" --device emu --fix sr=1.5
err_has "--fix not int64 says the dtype" "--fix sr=1.5: '1.5' is no int64 value"
expect_exit "--fix two values" 2 "$TMP/fix.onnx" --device emu --fix sr=1,2
err_has "--fix two values says the count" "input 'sr' is int64 of 1 values; give 1"
expect_exit "--fix twice" 2 "$TMP/fix.onnx" --device emu --fix sr=1 --fix sr=2
err_has "--fix twice names it" "--fix: input 'sr' is given twice"
expect_exit "--fix empty" 2 "$TMP/fix.onnx" --device emu --fix sr=
err_has "--fix empty says what to give" "no value after '='"
expect_exit "--fix x count" 2 "$TMP/fix.onnx" --device emu --fix x=1,2,3
err_has "--fix x count says the count" "3 values, but input 'x' holds 4 (float32); give 4"
"$BIN" "$TMP/fix.onnx" --device emu --fix sr=16000 -o "$TMP/fix.npum" --compile-only \
	>/dev/null 2>&1 || no "--fix --compile-only"
expect_exit "--fix on a .npum" 1 "$TMP/fix.npum" --device emu --fix sr=16000
err_has "--fix on a .npum says why" "--fix applies to ONNX models"

# ---- non-ASCII names in the JSON: UTF-8 unchanged, other bytes U+FFFD ----
run_json "UTF-8 input name" "$TMP/utf8.onnx" --device emu --iterations 1 --profile
check "UTF-8 name kept" "j['inputs'][0]['name'] == 'img\u00e9'"
if grep -q "\"img$(printf '\303\251')\"" "$TMP/out.json"; then ok
else no "UTF-8 name not written as is"; fi
run_json "invalid UTF-8 input name" "$TMP/badutf8.onnx" --device emu --iterations 1 --profile
check "invalid bytes replaced" "j['inputs'][0]['name'] == 'img\ufffd\ufffd'"
if LC_ALL=C grep -q "$(printf '\377')" "$TMP/out.json"; then no "raw 0xff in the JSON"; else ok; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
