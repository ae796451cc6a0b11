#!/bin/sh
# SPDX-License-Identifier: MIT
# npu-run and npu-top in the guest, through npu.ko (run by the guest's
# /init like every /bin/npu-*; busybox sh, no python):
#  - npu-run's outputs for the sample model are bit-identical to the ones
#    the emulator backend gave on the host (build/guest/usr/share/npu/expect);
#  - so are BlazeFace's four outputs on a photo of a face, and the faces
#    npu-run --detect blazeface decodes from them;
#  - so are the BERT-style encoder's (tests/models/transformers, int64
#    token ids and mask at sequence 16: attention with run-time MatMuls,
#    embeddings by indexed gathers);
#  - so are those of a model with a host step (Conv -> Det -> Add, the Det
#    on the CPU with --cpu-fallback, between two programs, on the kernel
#    backend's mmapped BOs), and npu-run reports the step and its time;
#  - npu-run --json reports simulated time;
#  - npu-top --once --json, sampled while npu-run runs on a 2-cluster
#    partition, shows busy time on exactly the clusters npu-run holds, none
#    on the other healthy ones, and marks the fused ones (null).
set -u

dev=/dev/accel/accel0
model=/usr/share/npu/tiny-cnn.onnx
expect=/usr/share/npu/expect/probabilities.bin
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok - $*"; }
no() { fail=$((fail + 1)); echo "not ok - $*"; }

rm -rf /tmp/o
if npu-run "$model" --device "$dev" --iterations 1 --warmup 0 --output-dir /tmp/o \
	>/tmp/run.txt 2>&1 && cmp -s /tmp/o/probabilities.bin "$expect"; then
	ok "npu-run through the driver: outputs bit-identical to the host emulator's"
else
	no "npu-run through the driver: outputs differ from the host emulator's"
	cat /tmp/run.txt
fi

# BlazeFace (MediaPipe's face detector) on the test photo.
bf=/usr/share/npu/blazeface
rm -rf /tmp/bf
if npu-run "$bf/model.onnx" --device "$dev" --iterations 1 --warmup 0 \
	--input "input:0=$bf/photo.raw" --output-dir /tmp/bf --detect blazeface >/tmp/bf.txt 2>&1; then
	diff=""
	for f in "$bf"/expect/*.bin; do
		cmp -s "$f" "/tmp/bf/${f##*/}" || diff="$diff ${f##*/}"
	done
	if [ -z "$diff" ]; then
		ok "BlazeFace through the driver: all four outputs bit-identical to the host emulator's"
	else
		no "BlazeFace through the driver: $diff differ from the host emulator's"
	fi
	if grep '^  face' /tmp/bf.txt | cmp -s - "$bf/expect/faces.txt"; then
		ok "BlazeFace through the driver: the same face as on the host"
		grep '^  face' /tmp/bf.txt
	else
		no "BlazeFace faces differ from the host's"
		cat /tmp/bf.txt
	fi
else
	no "BlazeFace through the driver failed"
	cat /tmp/bf.txt
fi

# A transformer encoder (the shapes are GUEST_TF_SHAPES in tests/guest/tools.mk).
tf=/usr/share/npu/bert
rm -rf /tmp/tf
if npu-run "$tf/model.onnx" --device "$dev" --iterations 1 --warmup 0 \
	--shape input_ids=1x16 --shape attention_mask=1x16 --shape token_type_ids=1x16 \
	--output-dir /tmp/tf >/tmp/tf.txt 2>&1; then
	diff=""
	for f in "$tf"/expect/*.bin; do
		cmp -s "$f" "/tmp/tf/${f##*/}" || diff="$diff ${f##*/}"
	done
	if [ -z "$diff" ]; then
		ok "BERT-style encoder through the driver: outputs bit-identical to the host emulator's"
	else
		no "BERT-style encoder through the driver: $diff differ from the host emulator's"
	fi
else
	no "BERT-style encoder through the driver failed"
	cat /tmp/tf.txt
fi

# A real model from the npm registry (openWakeWord's speech embedding,
# tf2onnx, input float32[?,76,32,1]): the batch of 4 from the raw file's
# size, outputs bit-identical to the host emulator's.
oww=/usr/share/npu/oww
rm -rf /tmp/oww
if npu-run "$oww/model.onnx" --device "$dev" --iterations 1 --warmup 0 \
	--input input_1="$oww/input_1.bin" --output-dir /tmp/oww >/tmp/oww.txt 2>&1; then
	diff=""
	for f in "$oww"/expect/*.bin; do
		cmp -s "$f" "/tmp/oww/${f##*/}" || diff="$diff ${f##*/}"
	done
	if [ -z "$diff" ] && grep -q "shape 4x76x32x1 from the file" /tmp/oww.txt; then
		ok "openWakeWord embedding through the driver: batch 4 from the input's size, outputs bit-identical to the host emulator's"
	else
		no "openWakeWord embedding through the driver:${diff:- no 'shape 4x76x32x1 from the file' line}"
		cat /tmp/oww.txt
	fi
else
	no "openWakeWord embedding through the driver failed"
	cat /tmp/oww.txt
fi

# A host step between NPU programs (tests/guest/hoststep): the Det computed
# by libnpu's C reference on the BOs' mappings, the programs around it
# through the driver; the outputs bit-identical to the host emulator's, the
# step in the summary and in --json.
hs=/usr/share/npu/hoststep
rm -rf /tmp/hs
if npu-run "$hs/model.onnx" --device "$dev" --cpu-fallback --iterations 1 --warmup 0 \
	--output-dir /tmp/hs >/tmp/hs.txt 2>&1; then
	if cmp -s "$hs/expect/y.bin" /tmp/hs/y.bin; then
		ok "host step through the driver: Conv -> Det (CPU) -> Add bit-identical to the host emulator's"
	else
		no "host step through the driver: y.bin differs from the host emulator's"
		cat /tmp/hs.txt
	fi
	if grep -q "^host .*1 step ran on the CPU (--cpu-fallback)" /tmp/hs.txt &&
		grep -q "Det /Det (host): [0-9.]* ms" /tmp/hs.txt; then
		ok "host step through the driver: npu-run names the step and its time"
		grep -A1 '^host' /tmp/hs.txt
	else
		no "host step through the driver: no host line naming Det"
		cat /tmp/hs.txt
	fi
else
	no "host step through the driver failed"
	cat /tmp/hs.txt
fi
if npu-run "$hs/model.onnx" --device "$dev" --cpu-fallback --iterations 2 --json \
	>/tmp/hs.json 2>/tmp/hs.err &&
	tr -d ' \n' </tmp/hs.json | grep -q '"host_steps":\[{[^]]*"op":"Det"'; then
	ok "host step through the driver: --json lists it in host_steps"
else
	no "host step --json: $(cat /tmp/hs.err) $(head -c 600 /tmp/hs.json)"
fi

if npu-run "$model" --device "$dev" --json --iterations 2 >/tmp/run.json 2>/tmp/run.err &&
	grep -q '"cycles_per_run": [1-9]' /tmp/run.json; then
	ok "npu-run --json reports simulated cycles"
else
	no "npu-run --json: $(cat /tmp/run.err) $(head -c 300 /tmp/run.json)"
fi

# Busy time while a run is going on: sample in the middle of it.
npu-run "$model" --device "$dev" --clusters 2 --duration 8 --warmup 0 >/tmp/bg.txt 2>&1 &
bg=$!
sleep 3
npu-top --once --json -d 1 >/tmp/top.json 2>/tmp/top.err
rc=$?
wait "$bg" || no "background npu-run failed: $(cat /tmp/bg.txt)"
if [ "$rc" -ne 0 ]; then
	no "npu-top --once --json exit $rc: $(cat /tmp/top.err)"
	ls /sys/class/accel/accel0/device/npu 2>&1
else
	line=$(cat /tmp/top.json)
	busy=$(echo "$line" | sed -n 's/.*"cluster_busy_pct": \[\([^]]*\)\].*/\1/p')
	fused=$(echo "$line" | sed -n 's/.*"fused": \[\([^]]*\)\].*/\1/p')
	held=$(echo "$line" | sed -n 's/.*"processes": \[.*"clusters": \[\([^]]*\)\].*/\1/p')
	# The defect mask as the driver's DEV_QUERY gave it to npu-run (npu-top
	# reads sysfs: two paths through the driver that must agree).
	mask=$(sed -n 's/.*"defect_mask_hex": "\(0x[0-9a-f]*\)".*/\1/p' /tmp/run.json)
	echo "npu-top: busy [$busy] fused [$fused] npu-run holds [$held] defect mask $mask"
	# Fused clusters, in the order npu-top lists them.
	want="" c=0
	while [ "$c" -lt 16 ]; do
		if [ $(((mask >> c) & 1)) -eq 1 ]; then want="${want:+$want, }$c"; fi
		c=$((c + 1))
	done
	if [ "$fused" = "$want" ]; then ok "npu-top marks the fused clusters ($want)"
	else no "npu-top fused [$fused], sysfs defect mask says [$want]"; fi
	verdict=$(echo "$busy" | awk -v fused="$fused" -v held="$held" '
		BEGIN { nf = split(fused, f, ", "); nh = split(held, h, ", ") }
		{ n = split($0, b, ", ")
		  for (i = 1; i <= n; i++) {
			c = i - 1; isf = 0; ish = 0
			for (k = 1; k <= nf; k++) if (f[k] != "" && f[k] + 0 == c) isf = 1
			for (k = 1; k <= nh; k++) if (h[k] != "" && h[k] + 0 == c) ish = 1
			if (isf && b[i] != "null") { print "fused cluster " c " has " b[i]; exit }
			if (!isf && b[i] == "null") { print "healthy cluster " c " is null"; exit }
			if (ish && b[i] + 0 <= 0) { print "held cluster " c " not busy"; exit }
			if (!isf && !ish && b[i] + 0 > 0) { print "idle cluster " c " busy " b[i]; exit }
		  }
		  if (nh != 2) { print "npu-run holds " nh " clusters, not 2"; exit }
		  print "ok" }')
	if [ "$verdict" = "ok" ]; then
		ok "npu-top: busy on npu-run's 2 clusters only, none on fused ones"
	else
		no "npu-top: $verdict"
		cat /tmp/top.json
	fi
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
