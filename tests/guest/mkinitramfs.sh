#!/bin/sh
# Build the guest for `make check-guest`: Debian's Linux 6.12 kernel and an
# initramfs with static busybox, the DRM modules our driver needs, npu.ko
# (when built), the static test programs from build/guest/bin/ and an /init
# (tests/guest/init.sh) that runs them and reports to the host.
#
# The kernel package is only downloaded and unpacked (dpkg-deb -x), never
# installed, into a cache outside the work tree ($NPU_CACHE, default
# ~/.cache/npu/kernel/<release>/), so only a cold machine pays for it.
#
# Which kernel: it must be the one npu.ko was built against, or insmod
# refuses the module.  In order: $NPU_KERNEL_RELEASE; the vermagic of
# build/kernel/npu.ko; the newest installed linux-headers-6.12.*-amd64;
# the newest linux-image-6.12.*+deb12-amd64-unsigned apt offers.
#
# The debug kernel (tests/guest/debug-kernel/build.sh) instead: set
# NPU_GUEST_KERNEL_BUILD to its build directory.  Everything npu.ko needs is
# built into that kernel, so the initramfs carries npu.ko alone.
#
# Output (build/guest/): vmlinuz, initramfs.cpio.gz, kernel-release.
# Usage: mkinitramfs.sh [REPO_ROOT]
# Environment: NPU_KO (default build/kernel/npu.ko), NPU_GUEST_BIN
# (default build/guest/bin) and NPU_GUEST_USR (default build/guest/usr)
# take the module, programs and /usr from elsewhere; NPU_GUEST_OUT
# (default build/guest) is where the output goes.
set -eu

repo=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
out=${NPU_GUEST_OUT:-$repo/build/guest}
kbuild=${NPU_GUEST_KERNEL_BUILD:-}
cache=${NPU_CACHE:-$HOME/.cache/npu}/kernel
npu_ko=${NPU_KO:-$repo/build/kernel/npu.ko}
bindir=${NPU_GUEST_BIN:-$repo/build/guest/bin}
usrdir=${NPU_GUEST_USR:-$repo/build/guest/usr}
# What npu.ko needs from the distribution kernel; their own dependencies
# come from modules.dep, and so do any further ones npu.ko declares.
base_modules="drm_shmem_helper gpu-sched drm"

log() { printf 'guest: %s\n' "$*"; }
die() { printf 'guest: error: %s\n' "$*" >&2; exit 1; }

# is_dynamic FILE: true for an ELF file with a program interpreter (the
# initramfs has no libc, so such a program could not start).
is_dynamic() {
	readelf -l "$1" 2>/dev/null | grep -q 'Requesting program interpreter'
}

# --- which kernel ---------------------------------------------------------
if [ -n "$kbuild" ]; then
	# The debug kernel: built in place, nothing to unpack, no modules.
	[ -f "$kbuild/.npu-built" ] || die "$kbuild is not a finished debug kernel build (tests/guest/debug-kernel/build.sh)"
	rel=$(cat "$kbuild/include/config/kernel.release")
	vmlinuz=$kbuild/arch/x86/boot/bzImage
	if [ -f "$npu_ko" ]; then
		kmagic=$(modinfo -F vermagic "$npu_ko" | cut -d' ' -f1)
		[ "$kmagic" = "$rel" ] ||
			die "$npu_ko is built for $kmagic, the guest kernel is $rel"
		[ -z "$(modinfo -F depends "$npu_ko")" ] ||
			die "$npu_ko depends on modules ($(modinfo -F depends "$npu_ko")); the debug kernel must build them in (tests/guest/debug-kernel/debug.config)"
	fi
	order=""
else
	rel=${NPU_KERNEL_RELEASE:-}
	if [ -z "$rel" ] && [ -f "$npu_ko" ]; then
		rel=$(modinfo -F vermagic "$npu_ko" | cut -d' ' -f1)
	fi
	if [ -z "$rel" ]; then
		rel=$(ls -d /usr/src/linux-headers-6.12.*+deb12-amd64 2>/dev/null |
			sed 's|.*/linux-headers-||' | sort -V | tail -1)
	fi
	if [ -z "$rel" ]; then
		rel=$(apt-cache search --names-only '^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$' 2>/dev/null |
			sed -n 's/^linux-image-\(6\.12\.[0-9]*+deb12-amd64\)-unsigned .*/\1/p' | sort -V | tail -1)
	fi
	[ -n "$rel" ] || die "no linux-image-6.12.*+deb12-amd64-unsigned known to apt (apt-get update?)"
	pkg=linux-image-$rel-unsigned
	kdir=$cache/$rel

	if [ -f "$npu_ko" ]; then
		kmagic=$(modinfo -F vermagic "$npu_ko" | cut -d' ' -f1)
		[ "$kmagic" = "$rel" ] ||
			die "$npu_ko is built for $kmagic, the guest kernel is $rel"
	fi

	# --- kernel cache: download, unpack, depmod (once per release) ------------
	mkdir -p "$cache"
	exec 9>"$cache/lock"
	flock 9
	if [ ! -f "$kdir/.npu-unpacked" ]; then
		deb=$(ls "$cache/${pkg}"_*_amd64.deb 2>/dev/null | sort -V | tail -1 || true)
		if [ -z "$deb" ]; then
			log "downloading $pkg (cold cache: $cache)"
			(cd "$cache" && apt-get download -qq "$pkg" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
			deb=$(ls "$cache/${pkg}"_*_amd64.deb 2>/dev/null | sort -V | tail -1 || true)
			[ -n "$deb" ] || die "apt-get download $pkg failed"
		fi
		log "unpacking $(basename "$deb")"
		rm -rf "$kdir"
		mkdir -p "$kdir"
		dpkg-deb -x "$deb" "$kdir"
		# The package has no modules.dep (the install hook would make it).
		depmod -b "$kdir" -F "$kdir/boot/System.map-$rel" "$rel" ||
			die "depmod on the unpacked kernel failed"
		touch "$kdir/.npu-unpacked"
	fi
	flock -u 9
	moddir=$kdir/lib/modules/$rel
	[ -f "$moddir/modules.dep" ] || die "$moddir/modules.dep missing: remove $kdir and retry"

	# --- modules in load order ------------------------------------------------
	wanted=$base_modules
	if [ -f "$npu_ko" ]; then
		wanted="$wanted $(modinfo -F depends "$npu_ko" | tr ',' ' ')"
	fi
	# modules.dep lines are "path: dep-path ...", each dep list being the whole
	# closure.  A depth-first walk (dependencies before the module) gives a valid
	# insmod order whatever order depmod wrote them in.  Names compare with
	# '-' and '_' equal, as the kernel does (gpu-sched.ko is module gpu_sched).
	# Output: "name path" lines.
	order=$(awk -v wanted="$wanted" '
		function key(p,  n) { n = p; sub(/.*\//, "", n); sub(/\.ko(\.[a-z]+)?$/, "", n); gsub(/-/, "_", n); return n }
		function visit(k,  i, n, d) {
			if (k in done) return
			if (!(k in path)) { print "missing " k; exit 1 }
			done[k] = 1
			n = split(deps[k], d, " ")
			for (i = 1; i <= n; i++) visit(key(d[i]))
			print k, path[k]
		}
		{ sub(/:$/, "", $1); k = key($1); path[k] = $1; $1 = ""; deps[k] = $0 }
		END {
			n = split(wanted, w, " ")
			for (i = 1; i <= n; i++) { k = w[i]; gsub(/-/, "_", k); visit(k) }
		}' "$moddir/modules.dep") ||
		die "module not in $rel: $(echo "$order" | sed -n 's/^missing //p')"
	vmlinuz=$kdir/boot/vmlinuz-$rel
fi

# --- stage the root file system -------------------------------------------
busybox=$(command -v busybox || true)
[ -n "$busybox" ] || die "busybox not found: run 'make deps' (busybox-static)"
! is_dynamic "$busybox" || die "$busybox is dynamically linked: install busybox-static"

root=$out/root
mkdir -p "$out"
rm -rf "$root"
mkdir -p "$root/bin" "$root/lib/modules" "$root/etc" "$root/proc" "$root/sys" \
	"$root/dev" "$root/tmp" "$root/usr"
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list); do
	[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
cp "$repo/tests/guest/init.sh" "$root/init"
chmod 755 "$root/init"

# Modules go flat into /lib/modules/<name>.ko, decompressed (busybox insmod
# and the kernel's own decompressor settings are then irrelevant);
# /etc/npu-modules lists them in load order.
: >"$root/etc/npu-modules"
[ -z "$order" ] || echo "$order" | while read -r name path; do
	case $path in
	*.xz) xz -dc "$moddir/$path" >"$root/lib/modules/$name.ko" ;;
	*.zst) zstd -qdc "$moddir/$path" >"$root/lib/modules/$name.ko" ;;
	*) cp "$moddir/$path" "$root/lib/modules/$name.ko" ;;
	esac
	echo "$name" >>"$root/etc/npu-modules"
done
if [ -f "$npu_ko" ]; then
	cp "$npu_ko" "$root/lib/modules/npu.ko"
fi
# Modules that tests load themselves when they need them, not loaded by
# /init: vgem (a second DRM driver that exports buffers and attaches fences
# to them, for the dma-buf tests).  Only when all its dependencies are in
# the load list; a kernel without it as a module (the debug kernel has no
# modules) just lacks the file.
mkdir -p "$root/lib/modules/opt"
for m in vgem; do
	[ -n "${moddir:-}" ] || break
	line=$(grep "/$m\.ko[.a-z]*:" "$moddir/modules.dep" || true)
	[ -n "$line" ] || continue
	ok=1
	for d in ${line#*:}; do
		n=$(basename "$d" | sed 's/\.ko.*//; s/-/_/g')
		grep -qx "$n" "$root/etc/npu-modules" || ok=0
	done
	[ "$ok" -eq 1 ] || { log "optional module $m: dependencies not loaded, left out"; continue; }
	path=${line%%:*}
	case $path in
	*.xz) xz -dc "$moddir/$path" >"$root/lib/modules/opt/$m.ko" ;;
	*.zst) zstd -qdc "$moddir/$path" >"$root/lib/modules/opt/$m.ko" ;;
	*) cp "$moddir/$path" "$root/lib/modules/opt/$m.ko" ;;
	esac
done

# Test programs other targets put in build/guest/bin/.
ntests=0
if [ -d "$bindir" ]; then
	for f in "$bindir"/*; do
		[ -f "$f" ] && [ -x "$f" ] || continue
		! is_dynamic "$f" || die "$f is dynamically linked; guest programs must be static (gcc -static)"
		cp "$f" "$root/bin/"
		ntests=$((ntests + 1))
	done
fi

# Tools and data the tests use but that are not tests themselves
# (build/guest/usr/: npu-run, npu-top, a sample model): /usr in the guest.
if [ -d "$usrdir" ]; then
	for f in "$usrdir"/bin/*; do
		[ -f "$f" ] || continue
		! is_dynamic "$f" || die "$f is dynamically linked; guest programs must be static (gcc -static)"
	done
	cp -R "$usrdir/." "$root/usr/"
fi

# --- pack -----------------------------------------------------------------
# newc with root ownership; gzip -1: decompression in the guest is what
# costs time, and the size hardly matters.
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet --reproducible) |
	gzip -1 -n >"$out/initramfs.cpio.gz.tmp"
mv "$out/initramfs.cpio.gz.tmp" "$out/initramfs.cpio.gz"
cmp -s "$vmlinuz" "$out/vmlinuz" 2>/dev/null ||
	cp "$vmlinuz" "$out/vmlinuz"
echo "$rel" >"$out/kernel-release"

mods=$(tr '\n' ' ' <"$root/etc/npu-modules")
if [ -f "$npu_ko" ]; then npu="npu.ko"; else npu="no npu.ko (PCI smoke check only)"; fi
log "kernel $rel; modules: ${mods% }; $npu; $ntests program(s) from $bindir;" \
	"initramfs $(($(stat -c %s "$out/initramfs.cpio.gz") / 1024)) KiB"
