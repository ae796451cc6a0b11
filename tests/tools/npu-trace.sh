#!/bin/sh
# SPDX-License-Identifier: MIT
# CLI test of npu-run --trace (issue 19): the Chrome trace-event JSON of the
# last run, checked against the same run's own counters (--profile --json in
# the same invocation; tests/tools/trace_check.py): per cluster and unit the
# spans' cycles sum to the unit_busy counters, DMA and GSDU bytes and HBSM
# conflicts to theirs, spans on a unit never overlap, every span lies inside
# its step, the steps' cycles are the profile's.  On BlazeFace (make
# check-tools fetches it first: tools/npu-run/npu-run.mk) and the bundled
# sample; a hand-made model with a host step (--cpu-fallback) and one whose
# node name is not valid UTF-8; the trace is the same whatever the thread
# count, and tracing changes no cycle.  Bad input: an unwritable path, an
# empty one, a full disk (/dev/full), --trace with options that run no model.  (A kernel device's
# refusal is in the unit suite, test_trace.c: no /dev/accel here.)
# Run from the repository root after `make build/bin/npu-run`; $1 overrides
# the binary.
set -u

PYTHONPATH=$(dirname "$0")${PYTHONPATH:+:$PYTHONPATH}
export PYTHONPATH
BIN=${1:-build/bin/npu-run}
CHECK=$(dirname "$0")/trace_check.py
BLAZEFACE=${NPU_MODELS:-$HOME/.cache/npu/models}/face_detection_front_128x128_barracuda.onnx
SAMPLE=tools/npu-run/samples/tiny-cnn.onnx
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
pass=0
fail=0

ok() { pass=$((pass + 1)); }
no() { fail=$((fail + 1)); echo "FAIL: $*"; }

# traced NAME TRACE ARGS...: run with --trace TRACE --profile --json into
# $TMP/sum.json; success and a quiet stderr.
traced() {
	name=$1 trace=$2
	shift 2
	if "$BIN" "$@" --iterations 1 --profile --json --trace "$trace" >"$TMP/sum.json" \
		2>"$TMP/err" && [ ! -s "$TMP/err" ]; then ok
	else no "$name: exit $?, stderr: $(cat "$TMP/err")"; fi
}

# against NAME TRACE: trace_check.py's checks of TRACE against sum.json, counted here.
against() {
	python3 "$CHECK" "$2" "$TMP/sum.json" >"$TMP/check.out" 2>&1
	counts=$(tail -n 1 "$TMP/check.out")
	p=$(echo "$counts" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
	f=$(echo "$counts" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
	if [ -z "$p" ]; then
		no "$1: trace_check.py did not finish: $(cat "$TMP/check.out")"
		return
	fi
	pass=$((pass + p))
	fail=$((fail + f))
	[ "$f" -eq 0 ] || sed "s/^/$1: /" "$TMP/check.out" | grep FAIL
}

# pycheck NAME EXPR: EXPR sees the trace as t and the summary as j.
pycheck() {
	if python3 -c "import json,sys; t=json.load(open(sys.argv[1], encoding='utf-8')); \
j=json.load(open(sys.argv[2])); sys.exit(0 if ($3) else 1)" "$2" "$TMP/sum.json" \
		2>"$TMP/py.err"; then ok; else no "$1"; cat "$TMP/py.err"; fi
}

# expect_exit NAME CODE ARGS...: exit status CODE and one "npu-run: " line on stderr.
expect_exit() {
	name=$1 code=$2
	shift 2
	"$BIN" "$@" >/dev/null 2>"$TMP/err"
	rc=$?
	lines=$(wc -l <"$TMP/err")
	if [ "$rc" -eq "$code" ] && [ "$lines" -eq 1 ] && grep -q '^npu-run: ' "$TMP/err"; then ok
	else no "$name: exit $rc (want $code), $lines stderr lines: $(cat "$TMP/err")"; fi
}

err_has() {
	if grep -qF -- "$2" "$TMP/err"; then ok; else no "$1: no '$2' in: $(cat "$TMP/err")"; fi
}

# ---- BlazeFace: the trace against the run's counters ----
if [ ! -f "$BLAZEFACE" ]; then
	no "BlazeFace is missing ($BLAZEFACE): run make models (make check-tools fetches it)"
else
	traced "BlazeFace --trace" "$TMP/bf.json" "$BLAZEFACE" --device emu:threads=1
	against "BlazeFace" "$TMP/bf.json"
	pycheck "BlazeFace: Conv steps are labelled" "$TMP/bf.json" \
		"any(e['ph'] == 'X' and e['pid'] == 1 and e['name'].startswith('Conv') for e in t['traceEvents'])"
	pycheck "BlazeFace: TCU, CVU, DTDU, CSU and DMA tracks" "$TMP/bf.json" \
		"{'TCU','CVU','DTDU','CSU','DMA'} <= {e['args']['unit'] for e in t['traceEvents'] if e['ph'] == 'X' and e['pid'] != 1}"
	pycheck "BlazeFace: a process per cluster that ran something" "$TMP/bf.json" \
		"len({e['pid'] for e in t['traceEvents'] if e['ph'] == 'M' and e['name'] == 'process_name' and e['pid'] >= 10}) == len([c for c in j['profile']['clusters'] if sum(c['unit_busy_cycles'].values())]) > 1"
	cp "$TMP/sum.json" "$TMP/bf-sum.json"
	# The recording order is the accounting order, not the threads': same file.
	traced "BlazeFace --trace, 2 threads" "$TMP/bf2.json" "$BLAZEFACE" --device emu:threads=2
	if cmp -s "$TMP/bf.json" "$TMP/bf2.json"; then ok
	else no "BlazeFace: the trace differs between 1 and 2 threads"; fi
	# Tracing changes no cycle and no counter: the profile without --trace is the same.
	if "$BIN" "$BLAZEFACE" --device emu:threads=1 --iterations 1 --profile --json \
		>"$TMP/bf-plain.json" 2>"$TMP/err"; then ok; else no "BlazeFace untraced: $(cat "$TMP/err")"; fi
	if python3 - "$TMP/bf-sum.json" "$TMP/bf-plain.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
# Wall-clock figures differ from run to run; everything simulated must not.
for d in (a, b):
    for k in ('load_ms', 'latency_ms', 'throughput_ips', 'host_wall_share'):
        d.pop(k, None)
sys.exit(0 if a == b else 1)
EOF
	then ok; else no "BlazeFace: the summary with --trace differs from the one without"; fi
fi

# ---- the bundled sample ----
traced "sample --trace" "$TMP/tiny.json" "$SAMPLE" --device emu
against "sample" "$TMP/tiny.json"

# ---- a host step: x -> Relu -> Det (CPU fallback) -> Add ----
# Hand-made as in npu-run.sh; the Relu's node name is not valid UTF-8
# ("r\xc3\xa9lu\xff": an e-acute, then a stray byte), which the step label
# carries: the trace must still be valid JSON, the stray byte U+FFFD.
python3 - "$TMP" <<'EOF'
import struct, sys
tmp = sys.argv[1]

from onnx_pb import fld, value_info

nodes = (fld(1, fld(1, b'x') + fld(2, b'r') + fld(3, b'r\xc3\xa9lu\xff') + fld(4, b'Relu')) +
         fld(1, fld(1, b'r') + fld(2, b'd') + fld(3, b'det_1') + fld(4, b'Det')) +
         fld(1, fld(1, b'd') + fld(1, b'd') + fld(2, b'y') + fld(3, b'add_1') + fld(4, b'Add')))
graph = nodes + fld(2, b'det') + fld(11, value_info(b'x', 1, [2, 3, 3])) + fld(12, value_info(b'y', 1, [2]))
open(tmp + '/det.onnx', 'wb').write(fld(1, 8) + fld(8, fld(2, 13)) + fld(7, graph))
EOF
traced "host step --trace" "$TMP/det.json" "$TMP/det.onnx" --device emu --cpu-fallback
against "host step" "$TMP/det.json"
pycheck "host step: on the steps track, after an NPU step, before the next" "$TMP/det.json" \
	"[e['cat'] for e in sorted((e for e in t['traceEvents'] if e['ph'] == 'X' and e['pid'] == 1), key=lambda e: e['args']['step'])] == ['step', 'host', 'step']"
pycheck "host step: its label and wall time" "$TMP/det.json" \
	"[(('det_1' in e['name']) and e['args']['host_us'] > 0 and e['args']['device_cycles'] == 0) for e in t['traceEvents'] if e['ph'] == 'X' and e.get('cat') == 'host'] == [True]"
pycheck "a label with bad UTF-8: kept, the stray byte U+FFFD" "$TMP/det.json" \
	"any('r\u00e9lu\ufffd' in e['name'] for e in t['traceEvents'] if e['ph'] == 'X' and e['pid'] == 1)"

# ---- bad input ----
expect_exit "--trace into a missing directory" 2 "$SAMPLE" --device emu --trace "$TMP/no/such/dir/t.json"
err_has "--trace missing directory says what to do" "give a path in a writable directory"
expect_exit "--trace into a directory" 2 "$SAMPLE" --device emu --trace "$TMP"
err_has "--trace into a directory names it" "--trace $TMP: cannot write it"
# A device that takes the open but no byte: the write's failure is the run's.
if [ -w /dev/full ]; then
	expect_exit "--trace to a full disk" 1 "$SAMPLE" --device emu --trace /dev/full
	err_has "--trace to a full disk says so" "writing the trace /dev/full failed"
else
	no "/dev/full is missing: the full-disk case cannot run"
fi
expect_exit "--trace empty" 2 "$SAMPLE" --device emu --trace ""
err_has "--trace empty" "--trace: empty file name"
expect_exit "--trace without a value" 2 "$SAMPLE" --device emu --trace
expect_exit "--trace with --compile-only" 2 "$SAMPLE" --device emu --trace "$TMP/c.json" \
	--compile-only -o "$TMP/c.npum"
err_has "--trace with --compile-only" "--trace records a model's run: it does not apply to --compile-only"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
