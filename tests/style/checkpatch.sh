#!/bin/sh
# make check-style: the kernel driver and its uAPI header must be
# checkpatch-clean (--strict).  checkpatch.pl comes from Debian's
# linux-source-6.12 package, unpacked once into $NPU_CACHE/checkpatch.
# Prints "N passed, N failed" (one per file).
set -eu

repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${NPU_CACHE:-$HOME/.cache/npu}/checkpatch
cp=$cache/linux-source-6.12/scripts/checkpatch.pl

if [ ! -x "$cp" ]; then
	echo "style: fetching checkpatch.pl from Debian's linux-source-6.12"
	mkdir -p "$cache"
	(cd "$cache" && rm -f linux-source-6.12_*.deb &&
		apt-get download -qq linux-source-6.12 >/dev/null 2>&1) ||
		{ echo "style: apt-get download linux-source-6.12 failed" >&2; exit 1; }
	dpkg-deb --fsys-tarfile "$cache"/linux-source-6.12_*.deb |
		tar -xO ./usr/src/linux-source-6.12.tar.xz |
		tar -xJ -C "$cache" linux-source-6.12/scripts/checkpatch.pl \
			linux-source-6.12/scripts/spelling.txt \
			linux-source-6.12/scripts/const_structs.checkpatch
	rm -f "$cache"/linux-source-6.12_*.deb
fi

pass=0
fail=0
cd "$repo"
for f in kernel/*.c kernel/*.h kernel/tests/*.c uapi/drm/npu_accel.h; do
	# A uAPI header cannot use the kernel's BIT() macros.
	case $f in uapi/*) extra="--ignore BIT_MACRO" ;; *) extra="" ;; esac
	# shellcheck disable=SC2086 # extra is one option and its argument
	if out=$("$cp" --no-tree --terse --strict --show-types $extra -f "$f" 2>&1 | grep -v '^total:'); [ -z "$out" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "$out"
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
