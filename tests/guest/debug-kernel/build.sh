#!/bin/sh
# Build the debug guest kernel for `make check-guest`: Debian's own Linux
# 6.12 source (package linux-source-6.12, the same 6.12 as the stock guest
# kernel) configured as tinyconfig + debug.config, with KASAN, lockdep,
# DEBUG_OBJECTS, kmemleak, fault injection and KUnit.
#
# Cached outside the work tree, keyed by what the kernel is built from:
#   $NPU_CACHE/kernel-debug/src-<source version>/      the unpacked source
#   $NPU_CACHE/kernel-debug/<source version>-<key>/    the build (O=)
# where <key> is a hash of debug.config and kernel/Kconfig.  A warm cache
# returns at once; a cold build shows its progress, and an interrupted
# one resumes where it stopped (kbuild knows what is up to date).
#
# Output: prints the build directory (for `make -C <src> O=<dir> M=...`)
# as the last line.  Usage: build.sh [REPO_ROOT]
set -eu

repo=$(cd "${1:-$(dirname "$0")/../../..}" && pwd)
here=$repo/tests/guest/debug-kernel
cache=${NPU_CACHE:-$HOME/.cache/npu}/kernel-debug
tarball=/usr/src/linux-source-6.12.tar.xz

log() { printf 'debug-kernel: %s\n' "$*" >&2; }
die() { printf 'debug-kernel: error: %s\n' "$*" >&2; exit 1; }

[ -f "$tarball" ] || die "$tarball missing: run 'make deps' (package linux-source-6.12)"
ver=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null) ||
	die "linux-source-6.12 is not installed: run 'make deps'"
key=$(cat "$here/debug.config" "$repo/kernel/Kconfig" | sha256sum | cut -c1-12)
src=$cache/src-$ver
out=$cache/$ver-$key

mkdir -p "$cache"
exec 8>"$cache/lock"
flock 8

if [ -f "$out/.npu-built" ]; then
	echo "$out"
	exit 0
fi

if [ ! -f "$src/.npu-unpacked" ]; then
	log "unpacking linux-source-6.12 $ver (cold cache: $cache)"
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	tar -xJf "$tarball" -C "$src.tmp" --strip-components=1
	# The driver's Kconfig entry, so that CONFIG_DRM_ACCEL_NPU=y selects
	# what npu.ko links against.  Sourced through a fixed path; its
	# content is copied in for every build below.
	mkdir -p "$src.tmp/drivers/accel/npu"
	echo 'source "drivers/accel/npu/Kconfig"' >>"$src.tmp/drivers/accel/Kconfig"
	touch "$src.tmp/.npu-unpacked"
	mv "$src.tmp" "$src"
fi
cp "$repo/kernel/Kconfig" "$src/drivers/accel/npu/Kconfig"

jobs=$(nproc)
mkdir -p "$out"
# The configuration is made in a scratch directory and copied over only if
# it differs, so that an interrupted build keeps its objects.
log "configuring: tinyconfig + $(basename "$here")/debug.config"
cfg=$out/config.tmp
rm -rf "$cfg"
mkdir -p "$cfg"
make -s -C "$src" O="$cfg" tinyconfig >/dev/null
# merge_config.sh leaves its temporary files in the current directory.
(cd "$cfg" && "$src/scripts/kconfig/merge_config.sh" -m -O "$cfg" "$cfg/.config" "$here/debug.config" >/dev/null)
make -s -C "$src" O="$cfg" olddefconfig >/dev/null
cmp -s "$cfg/.config" "$out/.config" || cp "$cfg/.config" "$out/.config"
rm -rf "$cfg"
# Every line of the fragment must have survived olddefconfig: a symbol
# that a missing dependency silently dropped would build a kernel without
# the debugger it was meant to have.
missing=""
while IFS= read -r line; do
	case $line in
	CONFIG_*=n) sym=${line%%=*}
		grep -q "^$sym=" "$out/.config" && missing="$missing $line" ;;
	CONFIG_*=*) grep -qx "$line" "$out/.config" || missing="$missing $line" ;;
	esac
done <"$here/debug.config"
[ -z "$missing" ] || die "the configuration lost:$missing"

log "building with $jobs jobs (cold: tens of minutes; log: $out/build.log)"
t0=$(date +%s)
# Progress: a line per 500 build steps, so that CI shows it is alive.
# "modules" runs modpost over vmlinux, which writes the Module.symvers an
# out-of-tree npu.ko links against (there are no modules of its own).
if ! make -C "$src" O="$out" -j"$jobs" LOCALVERSION=-npu-debug bzImage modules 2>&1 |
	tee "$out/build.log" | awk '/^  [A-Z]/ { n++; if (n % 500 == 0) { printf "debug-kernel: %d steps\n", n; fflush() } }' >&2; then
	die "build failed: see $out/build.log"
fi
grep -q '^Kernel: arch/x86/boot/bzImage is ready' "$out/build.log" ||
	die "build failed: see $out/build.log"
# Module.symvers of the built-in symbols, for the out-of-tree npu.ko.
[ -f "$out/Module.symvers" ] || die "no Module.symvers in $out"
log "built in $(($(date +%s) - t0)) s: $(make -s -C "$src" O="$out" LOCALVERSION=-npu-debug kernelrelease)"
touch "$out/.npu-built"
echo "$out"
