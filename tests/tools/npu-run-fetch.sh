#!/bin/sh
# SPDX-License-Identifier: MIT
# npu-run on an http:// model, through libnpu's cache, whose names and
# checks are OpenSSL's SHA-256 (libnpu/src/fetch/sha256.c): the cache file
# is named by coreutils' sha256sum of the URL and its sidecar records
# sha256sum of the content; a second run is served from the cache with the
# server gone; and an OpenSSL configured without SHA-256 ends in libnpu's
# message with OpenSSL's reason and what to do, not a crash.  Run from the
# repository root; $1 overrides the binary.
set -u
BIN=${1:-build/bin/npu-run}
SAMPLES=tools/npu-run/samples
TMP=$(mktemp -d)
server=""
trap '[ -z "$server" ] || kill "$server" 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM
export NPU_EMU_STATS=0 NPU_CACHE_DIR="$TMP/cache"
pass=0
fail=0
ok() { pass=$((pass + 1)); }
no() { fail=$((fail + 1)); echo "FAIL: $*"; }
run() { "$BIN" "$@" --device emu --iterations 1 --warmup 0 >"$TMP/out" 2>"$TMP/err"; }

if [ ! -x "$BIN" ]; then
	echo "$BIN not built (make build/bin/npu-run)"
	echo "0 passed, 1 failed"
	exit 1
fi

# A local server on a port the kernel picks (printed on its first line).
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$SAMPLES" >"$TMP/http.log" 2>&1 &
server=$!
port=""
for _ in $(seq 50); do
	port=$(sed -n 's/.* port \([0-9][0-9]*\).*/\1/p' "$TMP/http.log" | head -1)
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || { echo "no HTTP server: $(cat "$TMP/http.log")"; echo "0 passed, 1 failed"; exit 1; }
URL=http://127.0.0.1:$port/tiny-cnn.onnx
key=$(printf '%s' "$URL" | sha256sum | cut -d' ' -f1)
sum=$(sha256sum <"$SAMPLES/tiny-cnn.onnx" | cut -d' ' -f1)

run "$URL" && grep -q "^simulated" "$TMP/out" && ok || no "download and run: $(cat "$TMP/err")"
cmp -s "$TMP/cache/$key" "$SAMPLES/tiny-cnn.onnx" && ok ||
	no "cache file not named sha256(URL) $key: $(ls "$TMP/cache")"
grep -qx "sha256 $sum" "$TMP/cache/$key.meta" && ok ||
	no "sidecar does not record sha256 $sum: $(cat "$TMP/cache/$key.meta")"

# From the cache, the server gone: the cached copy's size and name match.
kill "$server" && wait "$server" 2>/dev/null
server=""
run "$URL" && grep -q "^simulated" "$TMP/out" && ok || no "run from the cache: $(cat "$TMP/err")"

# OpenSSL with only its null provider: no SHA-256 anywhere.
printf '%s\n' 'openssl_conf = openssl_init' '[openssl_init]' 'providers = provider_sect' \
	'[provider_sect]' 'null = null_sect' '[null_sect]' 'activate = 1' >"$TMP/null.cnf"
for u in "$URL" "http://127.0.0.1:$port/not-cached.onnx"; do
	OPENSSL_CONF=$TMP/null.cnf run "$u"
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q "OpenSSL has no usable SHA-256: OpenSSL says: error:.*; check that OpenSSL's configuration" "$TMP/err" &&
		! grep -q "run with a model" "$TMP/err"; then ok
	else no "no SHA-256 in OpenSSL ($u): exit $rc, $(cat "$TMP/err")"; fi
done

echo "npu-run-fetch: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
