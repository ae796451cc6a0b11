#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench, guest side (tests/bench/bench_guest.sh boots the guest with
# npu.tests=npu-guest-bench; busybox sh, no python): through npu.ko,
#  - BlazeFace on the test photo with npu-run, NPU_GUEST_BENCH_RUNS timed
#    runs after 5 warm-up runs, npu-run's own JSON (median latency) on one
#    line, after a run whose outputs must equal the host emulator's bit for
#    bit (a fast wrong answer is no figure);
#  - npu-submit-latency: a null ioctl and an empty job (medians).
# Each result is one console line starting "npu-bench: "; the host parses
# them from the serial log.  Exits 1 if anything failed.
set -u

dev=/dev/accel/accel0
bf=/usr/share/npu/blazeface
runs=50
status=0

# npu_bench.runs=N: timed runs (not npu.*, which /init passes to npu.ko).
for arg in $(cat /proc/cmdline); do
	case $arg in
	npu_bench.runs=*) runs=${arg#*=} ;;
	esac
done

rm -rf /tmp/bf
if npu-run "$bf/model.onnx" --device "$dev" --iterations 1 --warmup 0 \
	--input "input:0=$bf/photo.raw" --output-dir /tmp/bf >/tmp/bf.txt 2>&1; then
	for f in "$bf"/expect/*.bin; do
		if ! cmp -s "$f" "/tmp/bf/${f##*/}"; then
			echo "npu-guest-bench: BlazeFace's ${f##*/} differs from the host emulator's"
			status=1
		fi
	done
else
	echo "npu-guest-bench: npu-run BlazeFace failed:"
	cat /tmp/bf.txt
	status=1
fi

if [ "$status" -eq 0 ]; then
	if npu-run "$bf/model.onnx" --device "$dev" --input "input:0=$bf/photo.raw" \
		--iterations "$runs" --warmup 5 --percentiles 50 --json >/tmp/bf.json 2>/tmp/bf.err; then
		echo "npu-bench: blazeface_json $(tr -d '\n' </tmp/bf.json)"
	else
		echo "npu-guest-bench: npu-run BlazeFace --iterations $runs failed:"
		cat /tmp/bf.err
		status=1
	fi
fi

# Prints its own "npu-bench: " line.
npu-submit-latency "$dev" 400 || status=1
exit $status
