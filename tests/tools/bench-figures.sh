#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench's figure arithmetic (tests/bench/figures.py), without running
# the benchmarks: seed 002's three-bound lower bound picks the binding term
# (TCU or CVU, DDR bytes, the hottest link) of hand-made profiles; a real
# profiled run of the sample model on the emulator is never faster than its
# own bound; the line format; a side that was not measured prints
# "not measured" and exits 1 (never a number).  Run from the repository root
# after `make build/bin/npu-run`; $1 overrides the binary.
set -u

BIN=${1:-build/bin/npu-run}
fig() { python3 tests/bench/figures.py "$@"; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
pass=0
fail=0

ok() { pass=$((pass + 1)); }
no() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect NAME PATTERN CODE CMD...: CMD exits CODE and its stdout matches the
# extended regular expression PATTERN (the whole line).
expect() {
	name=$1 pat=$2 code=$3
	shift 3
	out=$("$@" 2>"$TMP/err")
	rc=$?
	if [ "$rc" -eq "$code" ] && printf '%s\n' "$out" | grep -Eqx "$pat"; then ok
	else no "$name: exit $rc, got '$out' $(cat "$TMP/err")"; fi
}

# profile FILE TCU CVU DMA_BYTES GSDU_BYTES LINK_BYTES [COUNTERS]: a
# hand-made `npu-run --profile --json` of 1000 cycles, batch 2, 1000 MHz.
profile() {
	python3 - "$@" <<'PY'
import json, sys
f, tcu, cvu, dma, gsdu, link = sys.argv[1:7]
counters = len(sys.argv) < 8 or sys.argv[7] == '1'
json.dump({'batch': 2, 'simulated': {'clock_mhz': 1000, 'throughput_ips': 2e6},
           'profile': {'counters': counters, 'total_cycles': 1000,
                       'clusters': [{'tcu': float(tcu) / 2, 'cvu': float(cvu) / 2},
                                    {'tcu': float(tcu), 'cvu': float(cvu)}],
                       'dma': [{'bytes': int(dma)}, {'bytes': 0}],
                       'gsdu_bytes': int(gsdu),
                       'hottest_links': [{'bytes': int(link)}] if int(link) else []}},
          open(f, 'w'))
PY
}

# Compute: the CVU of cluster 1 (800 busy cycles) binds: 2 x 1e9 / 800.
profile "$TMP/cvu.json" 0.5 0.8 25600 0 32000
expect "CVU binds" 'x: 2000000\.0 inferences/s \(three-bound lower bound, compute-bound: 2500000\.0 inferences/s, ratio 0\.80\)' \
	0 fig throughput x "$TMP/cvu.json"
# Memory: (153600 + 25600) / 256 = 700 cycles.
profile "$TMP/mem.json" 0.5 0.2 153600 25600 32000
expect "DDR binds, label" 'x: 2000000\.0 inferences/s \(batch 2 pipelined; three-bound lower bound, memory-bound: 2857142\.9 inferences/s, ratio 0\.70\)' \
	0 fig throughput x "$TMP/mem.json" "batch 2 pipelined"
# Network: 57600 / 64 = 900 cycles; no traffic at all leaves the TCU.
profile "$TMP/net.json" 0.5 0.2 0 0 57600
expect "link binds" '.*network-bound: 2222222\.2 inferences/s, ratio 0\.90\)' \
	0 fig throughput x "$TMP/net.json"
profile "$TMP/idle.json" 0.25 0.2 0 0 0
expect "no traffic" '.*compute-bound: 8000000\.0 inferences/s, ratio 0\.25\)' \
	0 fig throughput x "$TMP/idle.json"
profile "$TMP/zero.json" 0 0 0 0 0
expect "nothing busy" 'x: 2000000\.0 inferences/s \(three-bound lower bound: not measured: .*no busy unit.*\)' \
	1 fig throughput x "$TMP/zero.json"
profile "$TMP/none.json" 0.5 0.2 0 0 0 0
expect "no counters" 'x: 2000000\.0 inferences/s \(three-bound lower bound: not measured: .*counters.*\)' \
	1 fig throughput x "$TMP/none.json"

# Ratios, and what is not measured.
expect "ratio" 'y: 3\.000 ms \(ref, 1 thread: 1\.500 ms, ratio 2\.00\)' 0 \
	fig ratio y 3 ms "ref, 1 thread" 1.5
expect "format" 'y: 12\.3 ms \(ref: 4\.6 ms, ratio 2\.67\)' 0 fig ratio y 12.34 ms ref 4.62 '%.1f'
expect "ours not measured" 'y: not measured: npu-run failed: boom \(ref: 1\.500 ms\)' 1 \
	fig ratio y "npu-run failed: boom" ms ref 1.5
expect "ref not measured" 'y: 2\.000 ms \(ref: not measured: onnxruntime failed: gone\)' 1 \
	fig ratio y 2 ms ref "onnxruntime failed: gone"

# A real run: the simulated time is never below the run's own bound.
if "$BIN" tools/npu-run/samples/tiny-cnn.onnx --device emu --iterations 1 --warmup 0 --profile \
	--json >"$TMP/run.json" 2>"$TMP/err"; then
	expect "sample within its bound" 'tiny: [0-9.]+ inferences/s \(three-bound lower bound, (compute|memory|network)-bound: [0-9.]+ inferences/s, ratio (0\.[0-9]+|1\.00)\)' \
		0 fig throughput tiny "$TMP/run.json"
else
	no "npu-run --profile: $(cat "$TMP/err")"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
