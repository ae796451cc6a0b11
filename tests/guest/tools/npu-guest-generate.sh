#!/bin/sh
# SPDX-License-Identifier: MIT
# LLM generation through npu.ko in the guest (run by the guest's /init like
# every /bin/npu-*; busybox sh, no python): npu-run --generate on the
# decoders exported with past (tests/models/transformers), greedy, 32 tokens,
# a 64-row KV cache, on /dev/accel/accel0 (libnpu's kernel backend).
#  - the ids equal onnxruntime's at every step (ort_generate.js made them on
#    the host when the initramfs was built: share/npu/generate/ref/);
#  - the simulated prefill cycles and cycles per decode token equal the
#    emulator backend's on the host for the same run on a device with the
#    same defect mask (share/npu/generate/expect/: the device core is the
#    same, so is the program, so is the cycle count).
# The runs (RUNS below): GPT-2 and LLaMA (grouped-query attention) with
# past, the LLaMA whose weights are in an external-data side file, and
# GPT-2 at --precision w8; each with another of ort_generate.js's prompts.
#
# On the host, `npu-guest-generate.sh --expect OUTDIR REFDIR MODELDIR NPU_RUN
# MASK...` writes those expectations (tests/guest/tools.mk): the same runs
# on the emulator backend with each defect mask run.sh boots.
set -u

# name | model (in the model directory, without .onnx) | prompt length
# (names ort_generate.js's reference NAME_pP.json) | more npu-run flags
RUNS="gpt2 gpt2_past_op17 11 -
llama-gqa llama_past_op17 5 -
llama-ext llama_past_ext_op17 7 -
gpt2-w8 gpt2_past_op17 9 --precision=w8"
TOKENS=32
CONTEXT=64

# json_flat FILE: the JSON with no blanks or newlines (npu-run pretty-prints
# it; the model paths have no blanks).
json_flat() { tr -d ' \n\t' <"$1"; }
# json_list FLAT KEY: the array KEY as "a,b,c".
json_list() { echo "$1" | sed -n "s/.*\"$2\":\[\([^]]*\)\].*/\1/p"; }
# json_num FLAT KEY: the number or string KEY (the last of that name:
# "tokens_per_s" is then the simulated one).
json_num() { echo "$1" | sed -n "s/^[^#]*\"$2\":\"*\([^,\"}]*\).*/\1/p"; }

# gen DEVICE MODEL PROMPT FLAGS OUT: one generation, npu-run's JSON to OUT
# and its messages to OUT.err.  FLAGS: "-" for none, "=" for blanks.
npu_run=npu-run
gen() {
	# shellcheck disable=SC2046 # one word per flag
	"$npu_run" "$2" --device "$1" --generate "$TOKENS" --max-context "$CONTEXT" \
		--prompt-ids "$3" --json $([ "$4" = - ] || echo "$4" | tr '=' ' ') >"$5" 2>"$5.err"
}

if [ "${1:-}" = "--expect" ]; then
	[ $# -ge 6 ] || { echo "usage: $0 --expect OUTDIR REFDIR MODELDIR NPU_RUN MASK..." >&2; exit 2; }
	out=$2 ref=$3 models=$4 npu_run=$5
	shift 5
	export NPU_EMU_STATS=0
	mkdir -p "$out"
	while read -r name model plen flags; do
		prompt=$(json_list "$(json_flat "$ref/${model}_p$plen.json")" prompt)
		[ -n "$prompt" ] || { echo "$0: no prompt in $ref/${model}_p$plen.json" >&2; exit 1; }
		for mask in "$@"; do
			f=$out/$name.$(printf '0x%x' "$mask").json
			gen "emu:defect-mask=$mask" "$models/$model.onnx" "$prompt" "$flags" "$f" ||
				{ echo "$0: $name on emu:defect-mask=$mask failed:" >&2; cat "$f.err" >&2; exit 1; }
			rm -f "$f.err"
		done
	done <<EOF
$RUNS
EOF
	exit 0
fi

dev=/dev/accel/accel0
dir=/usr/share/npu/generate
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
no() { fail=$((fail + 1)); echo "not ok - $*"; }

# first_diff GOT WANT: "step K: id G, onnxruntime W" for the first step
# where the comma lists differ (or the count, if one is a prefix).
first_diff() {
	echo "$1 $2" | awk '{
		n = split($1, g, ","); m = split($2, w, ",")
		for (i = 1; i <= n && i <= m; i++)
			if (g[i] != w[i]) { printf "step %d: id %s, onnxruntime %s", i - 1, g[i], w[i]; exit }
		printf "%d ids, onnxruntime %d", n, m }'
}

while read -r name model plen flags; do
	what="$name ($model.onnx, prompt of $plen$([ "$flags" = - ] || echo ", $flags" | tr '=' ' '))"
	ref=$(json_flat "$dir/ref/${model}_p$plen.json")
	prompt=$(json_list "$ref" prompt)
	want=$(json_list "$ref" generated)
	out=/tmp/gen-$name.json
	t0=$(sed 's/ .*//' /proc/uptime)
	if ! gen "$dev" "$dir/$model.onnx" "$prompt" "$flags" "$out"; then
		no "$what through the driver: npu-run failed: $(cat "$out.err")"
		continue
	fi
	t1=$(sed 's/ .*//' /proc/uptime)
	got=$(json_flat "$out")
	ids=$(json_list "$got" generated)
	backend=$(json_num "$got" backend)
	mask=$(json_num "$got" defect_mask_hex)
	if [ "$backend" != kernel ]; then
		no "$what: npu-run used the '$backend' backend, not the driver"
		continue
	fi
	if [ -n "$want" ] && [ "$ids" = "$want" ]; then
		ok "$what through the driver: the $TOKENS ids onnxruntime gives"
	else
		exp=$dir/expect/$name.$mask.json
		host=""
		[ -f "$exp" ] && host=$(json_list "$(json_flat "$exp")" generated)
		if [ "$host" = "$want" ]; then
			host="the host emulator gives onnxruntime's"
		else
			host="the host emulator differs too: $(first_diff "$host" "$want")"
		fi
		no "$what through the driver: ids differ from onnxruntime's at $(first_diff "$ids" "$want") ($host)"
		echo "#   driver:      $ids"
		echo "#   onnxruntime: $want"
	fi

	# Simulated time against the emulator backend on the host, same mask.
	exp=$dir/expect/$name.$mask.json
	if [ ! -f "$exp" ]; then
		no "$what: no host emulator run for defect mask $mask (GUEST_GEN_MASKS in tests/guest/tools.mk)"
		continue
	fi
	host=$(json_flat "$exp")
	diff=""
	for k in prefill_cycles cycles_per_token decode_steps; do
		g=$(json_num "$got" $k)
		h=$(json_num "$host" $k)
		[ -n "$g" ] && [ "$g" = "$h" ] || diff="$diff $k $g (host $h)"
	done
	cpt=$(json_num "$got" cycles_per_token)
	if [ -z "$diff" ]; then
		ok "$what: simulated cycles per token $cpt and prefill $(json_num "$got" prefill_cycles) those of the host emulator (defect mask $mask)"
	else
		no "$what: simulated cycles differ from the host emulator's (defect mask $mask):$diff"
	fi
	# DDR bytes per token: the driver does not give user space the
	# device's DMA byte counters (DRM_IOCTL_NPU_STATS has cycles and busy
	# time only), so libnpu's kernel backend has no traffic figure and
	# npu-run reports null.  Should one appear, it must be the host's.
	g=$(json_num "$got" ddr_bytes_per_token)
	h=$(json_num "$host" ddr_bytes_per_token)
	if [ "$g" != null ] && [ "$g" != "$h" ]; then
		no "$what: DDR bytes per token $g, the host emulator's $h (defect mask $mask)"
	fi
	echo "# $name: $cpt cycles ($(json_num "$got" tokens_per_s) tokens/s simulated), DDR bytes" \
		"per token: driver ${g:-?}, host emulator $h; wall $(echo "$t0 $t1" |
		awk '{ printf "%.2f", $2 - $1 }') s"
done <<EOF
$RUNS
EOF

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
