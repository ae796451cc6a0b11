#!/bin/sh
# SPDX-License-Identifier: MIT
# The tools' shared JSON writer (tools/common/json.c): its Check suite,
# built with ASan/UBSan as build/tests/tools-json by `make check-tools`.
# $1 overrides the binary.
set -u

BIN=${1:-build/tests/tools-json}
out=$(ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	CK_FORK=no "$BIN" 2>&1)
rc=$?
echo "$out" | grep -v '^Running suite'
# Check's summary "100%: Checks: 12, Failures: 0, Errors: 0" as the
# other tool tests report.
checks=$(echo "$out" | sed -n 's/.*Checks: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\).*/\1 \2 \3/p')
set -- $checks
if [ $# -eq 3 ]; then
	echo "json: $(($1 - $2 - $3)) passed, $(($2 + $3)) failed"
else
	echo "json: 0 passed, 1 failed (no Check summary)"
	rc=1
fi
exit $rc
