# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# What the npu-run model checks of tests/models (npu_run_*.sh) share.
# Each sources it after its usage comment and `set -u`:
#	. "$(dirname "$0")/run_common.sh"
# and gets a scratch directory $TMP (removed on exit), the checks ok and
# no ("ok - ..." or "not ok - ...", counted), summary to close with,
# npu_run_at to say which npu-run runs, inputs and close_py for the
# usual npu-run arguments and comparison, and NPU_EMU_STATS=0 (no
# emulator statistics in npu-run's output).
HERE=$(dirname "$0")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
pass=0
fail=0
export NPU_EMU_STATS=0

ok() { pass=$((pass + 1)); echo "ok - $*"; }
no() { fail=$((fail + 1)); echo "not ok - $*"; }

# summary: prints "N passed, N failed"; false if a check failed.
summary() {
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}

# npu_run_at [PATH]: BIN, the npu-run the checks run: PATH, else the build's.
# shellcheck disable=SC2034 # BIN is the sourcing script's
npu_run_at() {
	BIN=${1:-build/bin/npu-run}
}

# inputs DIR: ins, an "--input NAME=FILE" for each DIR/in_NAME.bin (the
# inputs the reference script wrote), for npu-run's command line unquoted.
inputs() {
	ins=""
	for _in_file in "$1"/in_*.bin; do
		_in_name=${_in_file##*/in_}
		ins="$ins --input ${_in_name%.bin}=$_in_file"
	done
}

# close_py OURS REF: close.py's comparison of npu-run's output file with
# onnxruntime's (cosine >= 0.999, max error <= 2% of the range); one line
# of figures.
close_py() {
	python3 "$HERE/close.py" "$1" "$2"
}
