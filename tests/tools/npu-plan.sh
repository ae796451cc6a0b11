#!/bin/sh
# SPDX-License-Identifier: MIT
# CLI test of npu-plan on seed 002's chain: core counts, T_comp and T_net
# of the Pipelined preset, Scattered's extra byte-hops, and exit codes and
# one-line messages for bad input.  Run from the repository root after
# `make build/bin/npu-plan`; $1 overrides the binary.
set -u

BIN=${1:-build/bin/npu-plan}
CHAIN=tools/npu-plan/seed002.chain
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
pass=0
fail=0

ok() { pass=$((pass + 1)); }
no() { fail=$((fail + 1)); echo "FAIL: $*"; }

# check NAME PYTHON-EXPR: EXPR sees the JSON output of the last run as j.
check() {
	if python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" \
		"$TMP/out.json" 2>"$TMP/py.err"; then ok; else no "$1"; cat "$TMP/py.err"; fi
}

# expect_exit NAME CODE ARGS...: exit status CODE and exactly one line on stderr.
expect_exit() {
	name=$1 code=$2
	shift 2
	"$BIN" "$@" >/dev/null 2>"$TMP/err"
	rc=$?
	lines=$(wc -l <"$TMP/err")
	if [ "$rc" -eq "$code" ] && [ "$lines" -eq 1 ]; then ok
	else no "$name: exit $rc (want $code), $lines stderr lines: $(cat "$TMP/err")"; fi
}

if [ ! -x "$BIN" ]; then
	echo "$BIN not built (make build/bin/npu-plan)"
	echo "0 passed, 1 failed"
	exit 1
fi

# Pipelined (banded): seed 002 gives 6, 9, 9, 9, 3 cores, 33.3 us, 33.3 us.
if "$BIN" --chain "$CHAIN" --cores 36 --mesh 6x6 --flops 1e12 --buffer-kb 64 \
	--sram-kb 512 --link-gbps 16 --offchip-gbps 100 --json >"$TMP/out.json"; then ok
else no "banded run"; fi
check "counts 6,9,9,9,3" "[l['cores'] for l in j['layers']] == [6, 9, 9, 9, 3]"
check "names" "[l['name'] for l in j['layers']] == ['conv1', 'conv2', 'conv3', 'conv4', 'fc']"
check "T_comp 33.3 us" "abs(j['totals']['t_comp_us'] - 33.333) < 0.1"
check "T_net 33.3 us" "abs(j['totals']['t_net_us'] - 33.333) < 0.1"
check "T_mem 0" "j['totals']['t_mem_us'] == 0"
check "throughput 30000/s" "abs(j['totals']['throughput'] - 30000) < 1"
check "binds" "j['totals']['binds'] == ['compute', 'network']"
check "hottest link" "abs(j['totals']['hottest_link']['load_kb'] - 533.333) < 0.01"
cp "$TMP/out.json" "$TMP/banded.json"

# Scattered: same counts, more byte-hops.
if "$BIN" --chain "$CHAIN" --placement scattered --seed 477 --json >"$TMP/out.json"; then ok
else no "scattered run"; fi
check "scattered counts" "[l['cores'] for l in j['layers']] == [6, 9, 9, 9, 3]"
check "scattered byte-hops" \
	"j['totals']['byte_hops'] > json.load(open('$TMP/banded.json'))['totals']['byte_hops']"
check "scattered T_net 45.8 us" "abs(j['totals']['t_net_us'] - 45.833) < 0.1"

# The human table runs too.
if "$BIN" --chain "$CHAIN" >"$TMP/table" && grep -q '^conv1 ' "$TMP/table"; then ok
else no "table output"; fi

# Layer names are bytes: UTF-8 stays as is, other bytes become U+FFFD, so
# the JSON stays valid (tools/common/json.c).
printf 'caf\303\251 100 32 64\nx\377y 100 32 64\n' >"$TMP/names.chain"
if "$BIN" --chain "$TMP/names.chain" --cores 4 --mesh 2x2 --json >"$TMP/out.json"; then ok
else no "non-ASCII chain"; fi
check "UTF-8 layer name" "j['layers'][0]['name'] == 'caf\u00e9'"
check "invalid UTF-8 layer name" "j['layers'][1]['name'] == 'x\ufffdy'"
if grep -q "\"caf$(printf '\303\251')\"" "$TMP/out.json"; then ok
else no "UTF-8 layer name not written as is"; fi

# --version: the libnpu it runs on.
if "$BIN" --version | grep -Eqx 'npu-plan [0-9]+\.[0-9]+\.[0-9]+'; then ok; else no "--version"; fi
if "$BIN" --help | grep -q -- '--counts LIST'; then ok; else no "--help lists the options"; fi
expect_exit "abbreviated option" 2 --chain "$CHAIN" --place banded
expect_exit "switch with value" 2 --chain "$CHAIN" --json=1

# Usage errors exit 2, file errors exit 1, each with one line.
expect_exit "zero cores" 2 --chain "$CHAIN" --cores 0
expect_exit "more layers than cores" 2 --chain "$CHAIN" --cores 4 --mesh 2x2
expect_exit "mesh smaller than cores" 2 --chain "$CHAIN" --cores 36 --mesh 5x5
expect_exit "bad mesh" 2 --chain "$CHAIN" --mesh 6by6
expect_exit "bad number" 2 --chain "$CHAIN" --link-gbps fast
expect_exit "bad placement" 2 --chain "$CHAIN" --placement diagonal
expect_exit "unknown flag" 2 --chain "$CHAIN" --frobnicate 1
expect_exit "missing value" 2 --chain "$CHAIN" --seed
expect_exit "no chain" 2 --cores 36
expect_exit "missing file" 1 --chain "$TMP/none.chain"
printf 'conv1 100 32\n' >"$TMP/short.chain"
expect_exit "short line" 1 --chain "$TMP/short.chain"
printf '# nothing\n\n' >"$TMP/empty.chain"
expect_exit "no layers" 1 --chain "$TMP/empty.chain"
printf 'a 1 2 3\nb x 2 3\n' >"$TMP/nan.chain"
expect_exit "bad field" 1 --chain "$TMP/nan.chain"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
