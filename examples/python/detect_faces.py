#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""detect_faces: find the faces in a photo with MediaPipe's BlazeFace.

    python3 detect_faces.py [MODEL.onnx [PHOTO.raw]]

Defaults: the model and photo `make models` puts in ~/.cache/npu/models.
PHOTO.raw holds float32 [1, 128, 128, 3], RGB scaled to -1..1, as the model
takes it.  Shows a job (submit, then wait), the BlazeFace decoder and the
run's simulated NPU time.
"""
import os
import sys

import numpy as np

import npu

MODELS = os.path.expanduser("~/.cache/npu/models")


def main(argv):
    model_path = argv[1] if len(argv) > 1 else \
        os.path.join(MODELS, "face_detection_front_128x128_barracuda.onnx")
    photo_path = argv[2] if len(argv) > 2 else os.path.join(MODELS, "astronaut-128.raw")
    try:
        with npu.Model(model_path) as model:
            info = model.inputs[0]
            photo = np.fromfile(photo_path, np.float32).reshape(info.shape)
            job = model.submit({info.name: photo})   # returns at once
            outputs = job.wait()                     # {output name: numpy array}
            stats = model.last_run
    except (npu.Error, OSError, ValueError) as e:
        print(f"detect_faces: {e}", file=sys.stderr)
        return 1

    # Anchors, box and keypoint decoding, scores >= 0.5, weighted NMS:
    # npu_post.h's C code, the same as npu-run --detect blazeface.
    faces = npu.detect_blazeface(outputs, threshold=0.5)
    height, width = info.shape[1:3]
    print(f"{len(faces)} face{'' if len(faces) == 1 else 's'} in {photo_path}:")
    for i, face in enumerate(faces, 1):
        x0, y0, x1, y1 = face.pixels(width, height)
        (rx, ry), (lx, ly) = face.keypoints[:2]
        print(f"  face {i:2d}  score {face.score:.4f}  x {x0:.1f}-{x1:.1f}  y {y0:.1f}-{y1:.1f}"
              f"  eyes ({rx * width:.1f}, {ry * height:.1f}) ({lx * width:.1f}, {ly * height:.1f})")
    print(f"NPU time {stats.device_us:.1f} us simulated ({stats.device_cycles} cycles, "
          f"{len(stats.steps)} steps), wall {stats.wall_us / 1000:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
