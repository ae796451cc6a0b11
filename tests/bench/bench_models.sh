#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench, model figures: BlazeFace on the emulator backend, each figure
# measured in this run next to its reference and printed as
#
#   NAME: VALUE UNIT (REF: VALUE UNIT, ratio R)
#
#  - wall latency (median) on the emulator backend with 1 and with all
#    threads, against onnxruntime-node with the same intra-op threads on
#    the same photo; ratio = ours / onnxruntime (goal <= 1.0);
#  - simulated throughput at the modelled clock (pipelined batch of 8)
#    against seed 002's three-bound lower bound for the mapping that ran:
#    T = max(T_comp, T_mem, T_net), each bound from the cycle model's own
#    tallies of that run (busiest TCU, DDR bytes / DDR bandwidth, busiest
#    NoC link / link bandwidth); ratio = simulated / bound throughput
#    (goal >= 0.9);
#  - simulated throughput on 12 healthy clusters (two fused) against 14;
#    goal >= 0.95 x 12/14 = 0.814.
# Usage: bench_models.sh MODEL PHOTO.raw NPU_RUN
set -u

MODEL=$1
PHOTO=$2
BIN=$3
ITER=${NPU_BENCH_ITERATIONS:-40}
THREADS=$(nproc)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
export NPU_EMU_STATS=0
status=0

die() { echo "bench: $*" >&2; exit 1; }

# npu_p50 THREADS: median wall latency (ms) of npu-run on the emulator.
npu_p50() {
	"$BIN" "$MODEL" --device "emu:threads=$1" --input "input:0=$PHOTO" \
		--iterations "$ITER" --warmup 5 --percentiles 50 --json >"$TMP/npu.json" ||
		die "npu-run failed"
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["latency_ms"]["percentiles"][0]["ms"])' \
		"$TMP/npu.json"
}

ort_p50() {
	node tests/bench/ort_bench.js "$MODEL" "$PHOTO" "$1" "$ITER" 5 >"$TMP/ort.json" ||
		die "onnxruntime failed"
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["p50_ms"])' "$TMP/ort.json"
}

for t in 1 "$THREADS"; do
	ours=$(npu_p50 "$t") || exit 1
	ref=$(ort_p50 "$t") || exit 1
	python3 -c 'import sys; a, b, t = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]); print("blazeface_emu_latency_%dt: %.3f ms (onnxruntime-node 1.30.0, %d thread%s: %.3f ms, ratio %.2f)" % (t, a, t, "" if t == 1 else "s", b, a / b))' \
		"$ours" "$ref" "$t"
done

# Simulated figures: one profiled run of a pipelined batch of 8.
sim() {
	"$BIN" "$MODEL" --device "$1" --batch 8 --iterations 1 --warmup 0 --profile \
		--json >"$2" || die "npu-run --batch 8 --device $1 failed"
}
sim emu "$TMP/p14.json"
sim emu:defect-mask=0x2001 "$TMP/p12.json"
python3 - "$TMP/p14.json" "$TMP/p12.json" <<'PY' || status=1
import json, sys
j14, j12 = (json.load(open(p)) for p in sys.argv[1:3])

def bound(j):
    """Seed 002's three bounds for the run, in cycles: the busiest TCU
    (compute), the DDR port's bytes at its bandwidth (memory) and the
    busiest NoC link at its bandwidth (network)."""
    p = j['profile']
    cycles = p['total_cycles']
    t_comp = max(c['tcu'] for c in p['clusters']) * cycles
    ddr_bytes = sum(d['bytes'] for d in p['dma']) + p['gsdu_bytes']
    t_mem = ddr_bytes / 256.0   # NPU_M100_DDR_BYTES_PER_CYCLE
    hot = p['hottest_links'][0]
    t_net = hot['bytes'] / 64.0  # NPU_M100_LINK_BYTES_PER_CYCLE
    which = max((t_comp, 'compute'), (t_mem, 'memory'), (t_net, 'network'))
    return which[0], which[1], cycles

b14, kind, cyc = bound(j14)
batch = j14['batch']
clock = j14['simulated']['clock_mhz'] * 1e6
sim_ips = batch * clock / cyc
bound_ips = batch * clock / b14
print('blazeface_simulated_throughput_batch8: %.1f inferences/s '
      '(three-bound lower bound, %s-bound: %.1f inferences/s, ratio %.2f)'
      % (sim_ips, kind, bound_ips, sim_ips / bound_ips))
ips12 = j12['simulated']['throughput_ips']
ips14 = j14['simulated']['throughput_ips']
print('blazeface_simulated_throughput_12_clusters: %.1f inferences/s '
      '(14 clusters: %.1f inferences/s, ratio %.3f)' % (ips12, ips14, ips12 / ips14))
sys.stderr.write('goals: latency ratios <= 1.0; bound ratio >= 0.9; '
                 '12/14 clusters ratio >= %.3f\n' % (0.95 * 12 / 14))
PY
exit $status
