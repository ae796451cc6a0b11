#!/bin/sh
# make check-guest, host side: boot Debian's Linux 6.12 (build/guest/, made
# by mkinitramfs.sh) under our QEMU once per device configuration and
# decide pass or fail.
#
# A boot passes only if all three hold:
#   - QEMU exited with status 1: the guest wrote 0 to isa-debug-exit
#     ((0 << 1) | 1).  QEMU's own errors also exit 1, hence the next check.
#   - the serial log has the guest's "NPU-GUEST-RESULT: PASS" line;
#   - no kernel line in the log reports a problem (oops, BUG, WARNING,
#     lockup, hung task, list/refcount corruption, sanitizer, panic).
#     Only lines carrying a printk timestamp count, so programs may print
#     what they like.
# Each boot is bounded by `timeout`; panic=-1 turns a guest panic into a
# reboot, which -no-reboot turns into exit 0 without the marker.
#
# Usage: run.sh [--kernel debug] [CONFIG...]   boot these configurations
#                                              (default: all)
#        run.sh --self-test     check that the harness detects failures
# --kernel debug boots the debug kernel (tests/guest/debug-kernel/: KASAN,
# lockdep, DEBUG_OBJECTS, kmemleak, fault injection, KUnit) from
# build/guest-debug/ instead of Debian's stock kernel from build/guest/;
# its boots are named debug-<config> and get NPU_GUEST_DEBUG_TIMEOUT.
# Environment:
#   NPU_GUEST_DIR      the stock kernel's guest (default build/guest; make
#                      bench's is build/guest-bench)
#   NPU_GUEST_QEMU     the QEMU to boot (default build/bin/qemu-system-x86_64)
#   NPU_GUEST_TIMEOUT  seconds per boot (default 120)
#   NPU_GUEST_DEBUG_TIMEOUT  seconds per boot of the debug kernel (default
#                      900: KASAN and lockdep under TCG are slow)
#   NPU_GUEST_TESTS    guest programs to run, comma separated (npu.tests=;
#                      default every /bin/npu-* in the initramfs)
#   NPU_GUEST_APPEND   more kernel command line
#   NPU_GUEST_TCG_THREAD  single (default) or multi: TCG threads
#   NPU_GUEST_SMP      guest CPUs (default 2: submission and interrupt
#                      handling can then race, as on real machines)
# Logs: build/guest/logs/<config>.log (serial), <config>.stderr (QEMU).
set -u

repo=$(cd "$(dirname "$0")/../.." && pwd)
guest=${NPU_GUEST_DIR:-$repo/build/guest}
qemu=${NPU_GUEST_QEMU:-$repo/build/bin/qemu-system-x86_64}
boot_timeout=${NPU_GUEST_TIMEOUT:-120}
prefix=""
iommu=""
if [ "${1:-}" = "--kernel" ]; then
	case ${2:-} in
	debug) guest=$repo/build/guest-debug; prefix=debug-
		boot_timeout=${NPU_GUEST_DEBUG_TIMEOUT:-900}
		# The NPU behind an IOMMU: a stray device DMA is a DMAR fault.
		# No interrupt remapping: TCG's q35 has no split irqchip.
		iommu="-device intel-iommu,intremap=off" ;;
	stock) ;;
	*) echo "run.sh: --kernel takes 'stock' or 'debug', not '${2:-}'" >&2; exit 2 ;;
	esac
	shift 2
fi
logs=$guest/logs

# name | -device npu-m100 properties.  Cluster c sits at mesh node c+1, or
# c+2 from cluster 2 on (node 0 is the CCB, node 3 the DDR port, 4x4 mesh).
all_configs="default fused-2 fused-corner timing intx"
props_of() {
	case $1 in
	default) echo "" ;;
	fused-2) echo "defect-mask=0x0081" ;;      # clusters 0 and 7: beside the CCB, mid-mesh
	fused-corner) echo "defect-mask=0x2400" ;; # clusters 10 and 13: the two far corners
	timing) echo "timing=on" ;;
	intx) echo "msix=off,msi=off" ;;             # the driver's INTx fallback
	# make bench (not in all_configs): one execution thread, as the
	# in-process emulator it is compared with.
	bench) echo "threads=1" ;;
	*) return 1 ;;
	esac
}

# Kernel messages the run must not contain.  "blocked for more than" is how
# the hung-task detector words it.  The debug kernel's debuggers: KASAN
# ("BUG: KASAN: ..."), lockdep ("WARNING: possible circular locking
# dependency", "inconsistent lock state", "suspicious RCU usage"),
# DEBUG_OBJECTS ("ODEBUG: ..."), sleeping in atomic context ("BUG: sleeping
# function called from invalid context"), DEBUG_LIST ("list_add
# corruption"), kmemleak ("kmemleak: N new suspected memory leaks"), the
# IOMMU ("DMAR: ... fault addr ...": the NPU wrote or read memory the
# driver does not map for it).
problems='DMAR:.*[Ff]ault|Oops|(^|[^A-Za-z])BUG:|WARNING:|Call Trace|soft lockup|hard LOCKUP|hung task|blocked for more than|refcount_t|list_add corruption|list_del corruption|general protection fault|KASAN|UBSAN|[Kk]ernel panic|ODEBUG|suspected memory leak|circular locking|inconsistent lock state|suspicious RCU usage|possible recursive locking'
stamp='\[ *[0-9]+\.[0-9]+\]'

[ -x "$qemu" ] || { echo "run.sh: $qemu missing: make qemu" >&2; exit 2; }
for f in vmlinuz initramfs.cpio.gz; do
	[ -f "$guest/$f" ] || { echo "run.sh: $guest/$f missing: run tests/guest/mkinitramfs.sh" >&2; exit 2; }
done
mkdir -p "$logs"

# boot NAME PROPS APPEND TIMEOUT: one QEMU run.  Sets $rc (QEMU's status,
# 124 on timeout), $secs, and $reason (empty when the run passed).
boot() {
	log=$logs/$1.log
	err=$logs/$1.stderr
	rm -f "$log" "$err"
	append="console=ttyS0 panic=-1 loglevel=5 printk.time=1 npu.config=${1#"$prefix"}"
	[ -z "$2" ] || append="$append npu.device=$2"
	[ -z "${NPU_GUEST_TESTS:-}" ] || append="$append npu.tests=$NPU_GUEST_TESTS"
	append="$append ${NPU_GUEST_APPEND:-} $3"
	t0=$(date +%s.%N)
	# loglevel=5 puts warnings (level 4) on the console: WARN() prints
	# "WARNING:" at that level.  One TCG thread for both vCPUs: with one
	# thread per vCPU the guest kernel's own code patching (jump labels,
	# int3 breakpoints) now and then oopses at boot before our module
	# loads ("Oops: int3" in run_timer_softirq); it costs no time here.
	timeout -k 5 "$4" "$qemu" -M q35 -accel "tcg,thread=${NPU_GUEST_TCG_THREAD:-single}" -m 1G -smp "${NPU_GUEST_SMP:-2}" \
		-display none -nic none \
		-no-reboot -monitor none -serial "file:$log" \
		-kernel "$guest/vmlinuz" -initrd "$guest/initramfs.cpio.gz" \
		-append "$append" \
		$iommu -device "npu-m100${2:+,$2}" \
		-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
		</dev/null >"$err" 2>&1
	rc=$?
	[ -s "$err" ] || rm -f "$err"
	secs=$(echo "$t0 $(date +%s.%N)" | awk '{ printf "%.1f", $2 - $1 }')

	reason=""
	touch "$log"
	bad=$(grep -E "$stamp.*($problems)" "$log" | head -1 | sed 's/^.*\] //')
	[ -z "$bad" ] || reason="kernel problem: $bad"
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		reason="${reason:+$reason; }timed out after $4 s"
	elif grep -q 'NPU-GUEST-RESULT: FAIL' "$log"; then
		reason="${reason:+$reason; }guest: $(sed -n 's/.*NPU-GUEST-RESULT: FAIL //p' "$log" | head -1)"
	elif ! grep -q 'NPU-GUEST-RESULT: PASS' "$log"; then
		reason="${reason:+$reason; }no result marker, QEMU exit status $rc"
		[ -s "$err" ] && reason="$reason: $(head -1 "$err")"
		[ "$rc" -eq 0 ] && reason="$reason (guest rebooted or powered off: panic?)"
	elif [ "$rc" -ne 1 ]; then
		reason="${reason:+$reason; }PASS marker but QEMU exit status $rc"
	fi
}

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
not_ok() { fail=$((fail + 1)); echo "not ok - $*"; }
show_log() {
	# The failing checks first: a failure early in a long run is not in
	# the tail.  Check prints FILE:LINE:F:TCASE:TEST:I: MSG (E: an error).
	if grep -qE '^[^ ]+:[0-9]+:[FE]:' "$log"; then
		echo "    --- failed checks in $log"
		grep -E '^[^ ]+:[0-9]+:[FE]:|^[0-9]+%: Checks:' "$log" | head -n 20 | sed 's/^/    /'
	fi
	echo "    --- last 40 lines of $log"
	tail -n 40 "$log" | sed 's/^/    /'
	if [ -s "$err" ]; then
		echo "    --- QEMU stderr ($err)"
		sed 's/^/    /' "$err"
	fi
}

if [ "${1:-}" = "--self-test" ]; then
	# Each injected fault must fail the run, for the expected reason.  No
	# test programs: this checks the harness, not the driver.
	for kind in warn fail panic hang; do
		case $kind in
		warn) want="kernel problem: WARNING:"; to=$boot_timeout ;;
		fail) want="guest: (injected by npu.inject=fail)"; to=$boot_timeout ;;
		panic) want="no result marker, QEMU exit status 0"; to=$boot_timeout ;;
		hang) want="timed out"; to=20 ;;
		esac
		boot "selftest-$kind" "" "npu.tests=none npu.inject=$kind" "$to"
		case $reason in
		*"$want"*) ok "self-test $kind: failed as it must ($reason) ($secs s)" ;;
		"") not_ok "self-test $kind: the run passed"; show_log ;;
		*) not_ok "self-test $kind: failed, but not with '$want': $reason"; show_log ;;
		esac
	done
else
	configs=${*:-$all_configs}
	for c in $configs; do
		if ! props=$(props_of "$c"); then
			not_ok "$c: unknown configuration (known: $all_configs)"
			continue
		fi
		boot "$prefix$c" "$props" "" "$boot_timeout"
		if [ -z "$reason" ]; then
			ok "$prefix$c ($secs s)"
		else
			not_ok "$prefix$c: $reason ($secs s)"
			show_log
		fi
	done
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
