#!/bin/sh
# /init of the check-guest initramfs (built by tests/guest/mkinitramfs.sh).
#
# Loads the DRM modules and npu.ko, checks the NPU's PCI function, runs the
# test programs, unloads npu.ko, and reports to the host in two ways that
# the host requires together: a marker line on the serial console,
#     NPU-GUEST-RESULT: PASS      or      NPU-GUEST-RESULT: FAIL (reasons)
# and the status (0 pass, 1 fail) written to QEMU's isa-debug-exit port.
#
# Kernel command line keys, read from /proc/cmdline (the kernel keeps dotted
# keys away from init, and insmod does not look at them):
#   npu.tests=a,b        run /bin/a then /bin/b; default every /bin/npu-*;
#                        "none": no programs
#   npu.test_timeout=S   seconds allowed per program (default 60)
#   npu.config=NAME      configuration name   -> NPU_GUEST_CONFIG for programs
#   npu.device=PROPS     -device npu-m100 properties -> NPU_GUEST_DEVICE
#   npu.modloop=N        after the final rmmod, insmod/rmmod N more times
#                        (default 10)
#   npu.unload=0         leave npu.ko loaded (default: rmmod it at the end,
#                        which exercises the driver's remove path)
#   npu.timeout_multiplier=N  multiply the Check suites' per-test timeouts
#                        (CK_TIMEOUT_MULTIPLIER; the debug kernel is slow)
#   npu.kunit=required   the kernel has KUnit and npu.ko must bring at
#                        least one suite (the debug kernel); every KUnit
#                        case of npu.ko's suites must pass either way
#   npu.inject=KIND      harness self-test, each must make the run fail:
#                        warn  a "WARNING:" line in the kernel log
#                        fail  a failed check reported by this script
#                        panic a kernel crash (no marker, QEMU exits 0)
#                        hang  never finish (the host's timeout)
#   npu.OTHER=VALUE      any other npu.* key is a parameter for npu.ko,
#                        passed to insmod (as modprobe would),
#                        e.g. npu.job_timeout_ms=500
#
# Programs see NPU_GUEST_CONFIG, NPU_GUEST_DEVICE and NPU_GUEST_PCI (sysfs
# path of the NPU), run in /tmp (a tmpfs), and pass by exiting 0.
#
# No `set -e`: whatever fails, this script must get to the report, because
# if init exits the kernel panics and the host learns only "no marker".
set -u
PATH=/bin:/usr/bin
export PATH

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# The initramfs has no /dev/console node, so the kernel could not give init
# a console; take it now that devtmpfs is there.
exec </dev/console >/dev/console 2>&1
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmpfs /tmp

failures=""
fail() {
	echo "npu-guest: FAIL: $*"
	failures="${failures:+$failures; }$*"
}

# On a kernel with kmemleak (the debug kernel): forget what boot left, so
# that a report names only what the driver and its tests leaked.  Objects
# younger than 5 s are never reported, hence the second scan after a pause.
kmemleak=/sys/kernel/debug/kmemleak
if [ -w "$kmemleak" ]; then
	echo scan >"$kmemleak"
	echo clear >"$kmemleak"
fi
kmemleak_check() {
	[ -w "$kmemleak" ] || return 0
	echo scan >"$kmemleak"
	sleep 6
	echo scan >"$kmemleak"
	leaks=$(grep -c '^unreferenced object' "$kmemleak")
	echo "npu-guest: kmemleak after $1: $leaks suspected leaks"
	if [ "$leaks" -ne 0 ]; then
		head -n 60 "$kmemleak"
		fail "kmemleak: $leaks suspected leaks after $1"
		echo clear >"$kmemleak"
	fi
}

# Fault injection (the debug kernel): no report and stack dump for each
# injected failure, or the fault sweep would flood the console with
# "Call Trace" lines that are not problems.
for a in failslab fail_page_alloc; do
	[ -w "/sys/kernel/debug/$a/verbose" ] && echo 0 >"/sys/kernel/debug/$a/verbose"
done

# Wait until the serial port has sent everything written so far: console
# writes are buffered in the tty and the UART, and QEMU exits the moment
# the status is written.  stty with any setting calls tcsetattr(TCSADRAIN).
drain() {
	stty -F /dev/console opost 2>/dev/null || sleep 1
}

report() {
	if [ -z "$failures" ]; then
		echo "NPU-GUEST-RESULT: PASS"
	else
		echo "NPU-GUEST-RESULT: FAIL ($failures)"
	fi
	drain
	# isa-debug-exit at port 0xf4: QEMU exits with (v << 1) | 1.  Busybox
	# has no outb; /dev/port is the I/O port space, offset = port number.
	if [ -z "$failures" ]; then printf '\000'; else printf '\001'; fi |
		dd of=/dev/port bs=1 seek=244 count=1 2>/dev/null
	# Still running: no debug-exit device.  Power off; QEMU then exits 0,
	# which the host reads as a failure.
	echo "npu-guest: isa-debug-exit did not stop QEMU; powering off"
	drain
	poweroff -f
	while :; do sleep 3600; done
}

# uptime in hundredths of a second, for durations.
now() { sed 's/^\([0-9]*\)\.\([0-9]*\) .*/\1\2/' /proc/uptime; }
secs() { echo "$1" | awk '{ printf "%.2f", $1 / 100 }'; }

tests="" test_timeout=60 config="" device="" unload=1 inject="" modparams="" modloop=10 kunit=
for arg in $(cat /proc/cmdline); do
	case $arg in
	npu.tests=*) tests=${arg#*=} ;;
	npu.test_timeout=*) test_timeout=${arg#*=} ;;
	npu.config=*) config=${arg#*=} ;;
	npu.device=*) device=${arg#*=} ;;
	npu.unload=*) unload=${arg#*=} ;;
	npu.modloop=*) modloop=${arg#*=} ;;
	npu.inject=*) inject=${arg#*=} ;;
	npu.kunit=*) kunit=${arg#*=} ;;
	npu.timeout_multiplier=*) CK_TIMEOUT_MULTIPLIER=${arg#*=}; export CK_TIMEOUT_MULTIPLIER ;;
	npu.*=*) modparams="$modparams ${arg#npu.}" ;;
	esac
done
echo "npu-guest: kernel $(uname -r), config '${config:-?}', device '$device'${modparams:+, npu.ko parameters:$modparams}"

# Report a task stuck in D state well before the host's timeout.
echo 30 >/proc/sys/kernel/hung_task_timeout_secs 2>/dev/null

# --- modules ----------------------------------------------------------------
for m in $(cat /etc/npu-modules); do
	insmod "/lib/modules/$m.ko" || fail "insmod $m"
done
npu_loaded=0
if [ -f /lib/modules/npu.ko ]; then
	# shellcheck disable=SC2086 # one word per parameter
	if insmod /lib/modules/npu.ko $modparams; then
		npu_loaded=1
	else
		fail "insmod npu.ko"
	fi
else
	echo "npu-guest: no npu.ko in this initramfs: PCI smoke check only"
fi

# --- KUnit: npu.ko's suites ran at insmod --------------------------------------
# Each suite's KTAP is in debugfs: the suite's line is not indented, its
# cases are indented by four spaces (parameterised cases' own lines deeper).
kunit_suites=0 kunit_pass=0 kunit_fail=0 kunit_skip=0
if [ "$npu_loaded" -eq 1 ] && [ -d /sys/kernel/debug/kunit ]; then
	for d in /sys/kernel/debug/kunit/npu*; do
		[ -f "$d/results" ] || continue
		kunit_suites=$((kunit_suites + 1))
		p=$(grep -c '^    ok [0-9]' "$d/results")
		f=$(grep -c '^    not ok [0-9]' "$d/results")
		k=$(grep -c '^    ok [0-9].*# SKIP' "$d/results")
		echo "npu-guest: kunit: ${d##*/}: $((p - k)) passed, $f failed, $k skipped"
		kunit_pass=$((kunit_pass + p - k)) kunit_fail=$((kunit_fail + f)) kunit_skip=$((kunit_skip + k))
		if [ "$f" -ne 0 ] || grep -q '^not ok' "$d/results"; then
			sed 's/^/    /' "$d/results"
			fail "kunit suite ${d##*/}: $f failed"
		fi
	done
	echo "npu-guest: kunit: $kunit_suites suites, $kunit_pass passed, $kunit_fail failed, $kunit_skip skipped"
fi
if [ "$kunit" = required ] && [ "$kunit_suites" -eq 0 ]; then
	fail "npu.kunit=required but no npu KUnit suite ran (kernel without KUnit, or npu.ko built without its suites)"
fi

# --- the NPU's PCI function (1b36:0110, class 0x1200xx) ------------------------
npu_pci=""
n=0
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor")" = 0x1b36 ] && [ "$(cat "$d/device")" = 0x0110 ] || continue
	n=$((n + 1))
	npu_pci=$d
	class=$(cat "$d/class")
	echo "npu-guest: NPU at ${d##*/}, class $class"
	case $class in
	0x1200??) ;;
	*) fail "NPU ${d##*/} has class $class, expected 0x1200xx" ;;
	esac
done
[ "$n" -eq 1 ] || fail "found $n PCI functions 1b36:0110, expected 1"

if [ "$npu_loaded" -eq 1 ] && [ -n "$npu_pci" ]; then
	if [ -e "$npu_pci/driver" ]; then
		drv=$(readlink "$npu_pci/driver")
		echo "npu-guest: bound to driver ${drv##*/}"
	else
		fail "npu.ko loaded but did not bind to ${npu_pci##*/}"
	fi
	ls /dev/accel/accel* >/dev/null 2>&1 || fail "npu.ko loaded but no /dev/accel/accel*"
fi

# --- test programs --------------------------------------------------------------
case $tests in
"") list=$(cd /bin && for f in npu-*; do [ -f "$f" ] && [ -x "$f" ] && echo "$f"; done) ;;
none) list="" ;;
*) list=$(echo "$tests" | tr ',' ' ') ;;
esac
[ -n "$list" ] || echo "npu-guest: no test programs to run"

export NPU_GUEST_CONFIG="$config" NPU_GUEST_DEVICE="$device" NPU_GUEST_PCI="$npu_pci"
for t in $list; do
	if [ ! -x "/bin/$t" ]; then
		fail "$t: no such program in /bin"
		continue
	fi
	echo "npu-guest: === $t"
	t0=$(now)
	(cd /tmp && exec timeout "$test_timeout" "/bin/$t")
	rc=$?
	dt=$(($(now) - t0))
	echo "npu-guest: === $t: exit $rc ($(secs $dt) s)"
	if [ "$rc" -eq 143 ] && [ "$dt" -ge $((test_timeout * 100 - 100)) ]; then
		fail "$t timed out after $test_timeout s"
	elif [ "$rc" -ne 0 ]; then
		fail "$t exit status $rc"
	fi
done

kmemleak_check "the test programs"

# --- harness self-test -----------------------------------------------------------
case $inject in
"") ;;
warn) echo "<4>WARNING: npu-guest: injected by npu.inject=warn (harness self-test)" >/dev/kmsg ;;
fail) fail "injected by npu.inject=fail" ;;
panic) echo "npu-guest: crashing the kernel (npu.inject=panic)"; drain; echo c >/proc/sysrq-trigger ;;
hang) echo "npu-guest: hanging (npu.inject=hang)"; while :; do sleep 3600; done ;;
*) fail "unknown npu.inject=$inject" ;;
esac

# --- unload and kernel state --------------------------------------------------------
if [ "$npu_loaded" -eq 1 ] && [ "$unload" != 0 ]; then
	echo "npu-guest: rmmod npu"
	rmmod npu || fail "rmmod npu"
	# Load and unload again: probe and remove must leave nothing behind.
	i=0
	while [ "$i" -lt "$modloop" ]; do
		i=$((i + 1))
		# shellcheck disable=SC2086 # one word per parameter
		insmod /lib/modules/npu.ko $modparams || { fail "modloop $i: insmod npu.ko"; break; }
		[ -e "$npu_pci/driver" ] || fail "modloop $i: npu.ko did not bind"
		ls /dev/accel/accel* >/dev/null 2>&1 || fail "modloop $i: no /dev/accel/accel*"
		rmmod npu || { fail "modloop $i: rmmod npu"; break; }
	done
	echo "npu-guest: rmmod/insmod loop: $i rounds"
	grep -q '^npu ' /proc/modules && fail "npu still loaded after the loop"
	kmemleak_check "rmmod"
fi

# A warning, oops or lockup taints the kernel even if its message did not
# reach the console: M machine check, B bad page, D oops/BUG, W warning,
# L soft lockup.  O and E (out-of-tree, unsigned npu.ko) are expected.
tainted=$(cat /proc/sys/kernel/tainted)
bad=""
for f in 4:M 5:B 7:D 9:W 14:L; do
	[ $((tainted >> ${f%:*} & 1)) -eq 1 ] && bad="$bad${f#*:}"
done
[ -z "$bad" ] || fail "kernel tainted $bad ($tainted)"

report
