#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench, BlazeFace figures on the emulator backend, each measured in
# this run next to its reference and printed as
#
#   NAME: VALUE UNIT (REF: VALUE UNIT, ratio R)
#
#  - wall latency (median) on the emulator backend with 1 and with all
#    threads, against onnxruntime-node with the same intra-op threads on
#    the same photo; ratio = ours / onnxruntime (goal <= 1.0);
#  - simulated throughput at the modelled clock (pipelined batch of 8)
#    against seed 002's three-bound lower bound for the mapping that ran
#    (figures.py three_bound: T = max(T_comp, T_mem, T_net), each from the
#    cycle model's own tallies of that run); ratio = simulated / bound
#    throughput (goal >= 0.9);
#  - simulated throughput on 12 healthy clusters (two fused) against 14;
#    goal >= 0.95 x 12/14 = 0.814;
#  - blazeface_emu_vs_floor: the one-thread latency against the host floor
#    of one inference (figures.py floor: its operand bytes at this
#    machine's memcpy bandwidth plus its MACs at the device core's GEMM
#    rate, both measured in this run), then the floor's parts.
# Any figure that cannot be measured says "not measured: why" and the
# script exits 1.
# Usage: bench_blazeface.sh MODEL PHOTO.raw NPU_RUN
set -u

MODEL=$1
PHOTO=$2
BIN=$3
ITER=${NPU_BENCH_ITERATIONS:-40}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
status=0
# shellcheck source=tests/bench/bench_lib.sh
. "$(dirname "$0")/bench_lib.sh"

EMU_1T="no one-thread latency"
for t in $THREAD_COUNTS; do
	latency_line "blazeface_emu_latency_${t}t" "$t" "$MODEL" "--input input:0=$PHOTO" \
		"input:0=$PHOTO:float32:1x128x128x3"
	[ "$t" -eq 1 ] && EMU_1T=$LATENCY_MS
done
work_run "$TMP/work.json" "$MODEL" --input "input:0=$PHOTO" ||
	echo "bench: blazeface work run: $(why "$TMP/work.json.err")" >&2
floor_line blazeface "$EMU_1T" "$TMP/work.json"

# Simulated figures: one profiled run of a pipelined batch of 8.
sim() {
	"$BIN" "$MODEL" --device "$1" --batch 8 --iterations 1 --warmup 0 --profile \
		--json >"$2" 2>"$TMP/sim.err"
}
if sim emu "$TMP/p14.json"; then
	fig throughput blazeface_simulated_throughput_batch8 "$TMP/p14.json" || status=1
	if sim emu:defect-mask=0x2001 "$TMP/p12.json"; then
		fig clusters blazeface_simulated_throughput_12_clusters "$TMP/p12.json" \
			"$TMP/p14.json" || status=1
	else
		echo "blazeface_simulated_throughput_12_clusters: not measured:" \
			"npu-run failed: $(why "$TMP/sim.err")"
		status=1
	fi
else
	echo "blazeface_simulated_throughput_batch8: not measured: npu-run failed: $(why "$TMP/sim.err")"
	echo "blazeface_simulated_throughput_12_clusters: not measured: no 14-cluster run"
	status=1
fi
echo "goals: latency ratios <= 1.0; bound ratio >= 0.9; 12/14 clusters ratio >= 0.814;" \
	"emulator within 1.5x of its floor" >&2
exit $status
