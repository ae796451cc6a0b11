#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench's figure arithmetic (tests/bench/figures.py), without running
# the benchmarks: seed 002's three-bound lower bound picks the binding term
# (TCU or CVU, DDR bytes, the hottest link) of hand-made profiles; a real
# profiled run of the sample model on the emulator is never faster than its
# own bound; the host floor of hand-made work counters and rates (and of the
# sample model's real counters); the line format; a side that was not measured prints
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

# The host floor: (6 + 4) MB at 10 GB/s = 1 ms, 2 G float MACs at 100
# GMAC/s = 20 ms, 1 G int8 MACs at 200 GMAC/s = 5 ms: 26 ms.
python3 - "$TMP" <<'PY'
import json, sys
d = sys.argv[1]
w = {'load_bytes': 6000000, 'store_bytes': 4000000, 'macs_float': 2000000000,
     'macs_int8': 1000000000}
json.dump({'profile': {'work': w}}, open(d + '/work.json', 'w'))
json.dump({'decode_work': dict({k: 4 * v for k, v in w.items()}, runs=4)},
          open(d + '/decode.json', 'w'))
json.dump({'decode_work': dict(w, runs=0)}, open(d + '/decode0.json', 'w'))
json.dump({'profile': {'work': {'load_bytes': 1}}}, open(d + '/part.json', 'w'))
json.dump({'profile': {'counters': True}}, open(d + '/nowork.json', 'w'))
r = {'memcpy_bytes_per_s': 1e10, 'gemm_bf16_macs_per_s': 1e11, 'gemm_i8_macs_per_s': 2e11}
json.dump(r, open(d + '/rates.json', 'w'))
json.dump(dict(r, gemm_i8_macs_per_s=0), open(d + '/rates0.json', 'w'))
PY
expect "floor" 'f_emu_vs_floor: 52\.000 ms \(host floor: 26\.000 ms, ratio 2\.00\)' 0 \
	fig floor f 52 "$TMP/work.json" "$TMP/rates.json"
expect "floor bytes" 'f_floor_bytes: 10\.00 MB moved, 1\.000 ms at 10\.0 GB/s memcpy \(operand loads 6\.00 MB, stores 4\.00 MB\)' \
	0 fig floor f 52 "$TMP/work.json" "$TMP/rates.json"
expect "floor MACs" 'f_floor_macs: 2000\.00 M float MACs, 20\.000 ms at 100\.0 GMAC/s bf16 GEMM; 1000\.00 M int8 MACs, 5\.000 ms at 200\.0 GMAC/s int8 GEMM' \
	0 fig floor f 52 "$TMP/work.json" "$TMP/rates.json"
expect "floor per decode step" 'g_emu_vs_floor: 13\.000 ms \(host floor: 26\.000 ms, ratio 0\.50\)' 0 \
	fig floor g 13 "$TMP/decode.json" "$TMP/rates.json"
expect "floor, no decode step" 'g_emu_vs_floor: 13\.000 ms \(host floor: not measured: .*runs: 0.*\)' 1 \
	fig floor g 13 "$TMP/decode0.json" "$TMP/rates.json"
expect "floor, counters missing" 'h_emu_vs_floor: 1\.000 ms \(host floor: not measured: .*lack store_bytes, macs_float, macs_int8\)' \
	1 fig floor h 1 "$TMP/part.json" "$TMP/rates.json"
expect "floor, no work" 'h_emu_vs_floor: 1\.000 ms \(host floor: not measured: no profile\.work or decode_work.*\)' \
	1 fig floor h 1 "$TMP/nowork.json" "$TMP/rates.json"
expect "floor, no run" 'h_emu_vs_floor: 1\.000 ms \(host floor: not measured: .*No such file.*\)' \
	1 fig floor h 1 "$TMP/absent.json" "$TMP/rates.json"
expect "floor, a rate missing" 'h_emu_vs_floor: 1\.000 ms \(host floor: not measured: the host rates lack gemm_i8_macs_per_s\)' \
	1 fig floor h 1 "$TMP/work.json" "$TMP/rates0.json"
expect "floor, ours not measured" 'h_emu_vs_floor: not measured: npu-run failed \(host floor: 26\.000 ms\)' \
	1 fig floor h "npu-run failed" "$TMP/work.json" "$TMP/rates.json"

# A real run: the simulated time is never below the run's own bound.
if "$BIN" tools/npu-run/samples/tiny-cnn.onnx --device emu --iterations 1 --warmup 0 --profile \
	--json >"$TMP/run.json" 2>"$TMP/err"; then
	expect "sample within its bound" 'tiny: [0-9.]+ inferences/s \(three-bound lower bound, (compute|memory|network)-bound: [0-9.]+ inferences/s, ratio (0\.[0-9]+|1\.00)\)' \
		0 fig throughput tiny "$TMP/run.json"
	# Its work counters: some bytes moved and some float MACs done.
	expect "sample's floor" 'tiny_floor_bytes: [0-9.]+ MB moved, [0-9.]+ ms at 10\.0 GB/s memcpy \(operand loads 0\.0*[1-9][0-9.]* MB, stores 0\.0*[1-9][0-9.]* MB\)' \
		0 fig floor tiny 1 "$TMP/run.json" "$TMP/rates.json"
	expect "sample's MACs" 'tiny_floor_macs: [0-9.]*[1-9][0-9.]* M float MACs, .*; 0\.00 M int8 MACs, 0\.000 ms .*' \
		0 fig floor tiny 1 "$TMP/run.json" "$TMP/rates.json"
else
	no "npu-run --profile: $(cat "$TMP/err")"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
