#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench, the guest path: boots the kernel-CI guest once (Debian's
# stock Linux 6.12 and npu.ko under our QEMU, TCG; the NPU device with one
# execution thread) with its own initramfs (tests/guest/bench.mk), whose
# /init runs tests/guest/bench/npu-guest-bench.sh, and prints
#
#  - blazeface_guest_latency: npu-run's median latency over 50 runs of
#    BlazeFace through /dev/accel/accel0 inside the guest, against the
#    in-process emulator (npu-run --device emu:threads=1 on the host,
#    measured here in the same run); ratio = guest / host (goal <= 2.0);
#  - guest_empty_job_latency: submit to signal of a job with an empty
#    program (submit + syncobj wait), against the driver's null ioctl in
#    the same guest (tests/guest/bench/npu_submit_latency.c);
#  - guest_libnpu_job_latency: the same empty job with what libnpu's kernel
#    backend does around every job (a pooled syncobj, the context query,
#    the fence status only after a failed job), against the bare empty job.
# A guest that does not boot, or a bench in it that fails, makes every
# figure say "not measured: why" and the script exit 1.
# Usage: bench_guest.sh MODEL PHOTO.raw NPU_RUN     (from the repository
# root; it runs `make guest-bench` itself, so that a guest that does not
# build is a figure not measured, not a stop before every other part, and so
# that the bench target's recipe names no $(MAKE), which `make -n` would run)
set -u

MODEL=$1
PHOTO=$2
# shellcheck disable=SC2034 # read by bench_lib.sh's npu_p50
BIN=$3
ITER=${NPU_BENCH_ITERATIONS:-50}
RUNS=50
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
status=0
# shellcheck source=tests/bench/bench_lib.sh
. "$(dirname "$0")/bench_lib.sh"

guest=build/guest-bench
log=$guest/logs/bench.log
bf_guest="" empty="" null="" libnpu=""

# not_measured WHY: every guest figure says so.
not_measured() {
	for n in blazeface_guest_latency guest_empty_job_latency guest_libnpu_job_latency; do
		echo "$n: not measured: $1"
	done
	status=1
}

if ! make --no-print-directory guest-bench >"$TMP/build.log" 2>&1; then
	tail -n 20 "$TMP/build.log" >&2
	not_measured "building the guest failed: $(why "$TMP/build.log")"
	exit 1
fi

# One boot.  The guest compiles BlazeFace itself under TCG before it runs
# it: allow for a loaded machine, where QEMU's threads may also wait for a
# CPU longer than the driver's 2 s no-progress timeout (job_timeout_ms), which
# would reset the device and fail the run: 20 s here.
NPU_GUEST_DIR=$guest NPU_GUEST_TESTS=npu-guest-bench NPU_GUEST_TIMEOUT=900 \
	NPU_GUEST_APPEND="npu.modloop=0 npu.test_timeout=800 npu.job_timeout_ms=20000 npu_bench.runs=$RUNS" \
	tests/guest/run.sh bench >"$TMP/run.txt" 2>&1
boot=$?
echo "guest: $(grep -E '^(not )?ok' "$TMP/run.txt" | head -1)" >&2
tr -d '\r' <"$log" >"$TMP/log" 2>/dev/null
if [ "$boot" -ne 0 ]; then
	sed -n '/^    --- last/,$p' "$TMP/run.txt" | head -n 60 >&2
	not_measured "the guest bench failed: $(grep '^not ok' "$TMP/run.txt" | head -1 | cut -c 1-240)"
else
	sed -n 's/^npu-bench: blazeface_json //p' "$TMP/log" | tail -n 1 >"$TMP/guest.json"
	bf_guest=$(fig get "$TMP/guest.json" latency_ms.percentiles.0.ms 2>"$TMP/get.err") ||
		bf_guest="no BlazeFace figure in the guest's log ($log): $(why "$TMP/get.err")"
	line=$(grep '^npu-bench: null_ioctl_us=' "$TMP/log" | tail -n 1)
	if [ -n "$line" ]; then
		null=$(echo "$line" | sed 's/.*null_ioctl_us=\([0-9.]*\).*/\1/')
		empty=$(echo "$line" | sed 's/.*empty_job_us=\([0-9.]*\).*/\1/')
		libnpu=$(echo "$line" | sed 's/.*libnpu_job_us=\([0-9.]*\).*/\1/')
	else
		null="no npu-submit-latency line in the guest's log ($log)"
		empty=$null libnpu=$null
	fi

	host=$(npu_p50 1 "$MODEL" --input "input:0=$PHOTO") ||
		host="npu-run failed: $(why "$TMP/npu.err")"
	fig ratio blazeface_guest_latency "$bf_guest" ms "in-process emulator, 1 thread" \
		"$host" || status=1
	fig ratio guest_empty_job_latency "$empty" us "null ioctl" "$null" '%.1f' || status=1
	fig ratio guest_libnpu_job_latency "$libnpu" us "bare empty job" "$empty" '%.1f' ||
		status=1
fi
echo "goals: blazeface_guest_latency ratio <= 2.0 (guest: $RUNS runs in QEMU's TCG guest," \
	"device with 1 thread; host: $ITER runs)" >&2
exit $status
