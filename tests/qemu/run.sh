#!/bin/sh
# make check-qemu: the NPU device in a real QEMU, no guest OS.
#
# 1. The qtest suite (tests/qemu/npu-m100-test.c, built in the QEMU tree).
# 2. Start-up checks: the device is listed, and invalid property
#    combinations stop QEMU with a message naming the property.
#
# Prints "N passed, N failed" and exits non-zero on any failure.
set -u

bin=${1:-build/bin}
qemu=$bin/qemu-system-x86_64
qtest=$bin/npu-m100-qtest
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "not ok - $1"; }

# --- qtest suite (TAP) ---
log=$(mktemp)
QTEST_QEMU_BINARY=$qemu timeout 600 "$qtest" --tap -k >"$log" 2>&1
rc=$?
grep -E '^(ok|not ok) ' "$log" | sed 's/^/qtest: /'
n_ok=$(grep -c '^ok ' "$log")
n_bad=$(grep -c '^not ok ' "$log")
plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$log" | head -1)
pass=$((pass + n_ok))
fail=$((fail + n_bad))
if [ "$rc" -ne 0 ] || [ -z "$plan" ] || [ $((n_ok + n_bad)) -ne "$plan" ]; then
	# A crash or an assertion stops the suite early: show why.
	grep -v '^# starting QEMU' "$log" | tail -20
	[ "$n_bad" -eq 0 ] && fail=$((fail + 1)) && echo "not ok - qtest suite exited with status $rc"
fi
rm -f "$log"

# --- start-up checks ---
if "$qemu" -device help 2>&1 | grep -q 'name "npu-m100", bus PCI'; then
	ok "-device help lists npu-m100"
else
	bad "-device help lists npu-m100"
fi

props=$("$qemu" -device npu-m100,help 2>&1)
missing=""
for p in clusters tpbs-per-cluster defect-mask mesh-x mesh-y clock-mhz timing msix msi; do
	echo "$props" | grep -q "^  $p=" || missing="$missing $p"
done
if [ -z "$missing" ]; then ok "npu-m100 has every documented property"; else bad "missing properties:$missing"; fi

# expect_refused PROPS PATTERN: QEMU must exit non-zero saying PATTERN.
expect_refused() {
	out=$(timeout 30 "$qemu" -M pc -m 64M -display none -nic none -S \
		-device "npu-m100,$1" 2>&1 </dev/null)
	st=$?
	if [ $st -ne 0 ] && [ $st -ne 124 ] && echo "$out" | grep -q -- "$2"; then
		ok "refused: $1"
	else
		bad "refused: $1 (status $st: $out)"
	fi
}
expect_refused "defect-mask=0x3fff" "fuses every cluster"
expect_refused "defect-mask=0x10000" "beyond the 14 present"
expect_refused "clusters=0" "clusters=0"
expect_refused "clusters=17" "clusters=17"
expect_refused "tpbs-per-cluster=9" "tpbs-per-cluster=9"
expect_refused "mesh-x=2,mesh-y=2" "mesh"
expect_refused "clock-mhz=0" "clock-mhz=0"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
