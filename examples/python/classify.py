#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""classify: run an image classifier once and print its K best classes.

    python3 classify.py MODEL.onnx INPUT.raw LABELS.txt [K]

INPUT.raw is the model's first input as raw bytes of its type (numpy's
a.astype('float32').tofile()).  The Python twin of examples/c/classify.c:
load a model, run it, rank an output, print; prints what it prints.
"""
import math
import sys

import numpy as np

import npu


def main(argv):
    k = int(argv[4]) if len(argv) > 4 and argv[4].isdigit() else 3
    if len(argv) < 4 or not 1 <= k <= 10:
        print("usage: classify.py MODEL.onnx INPUT.raw LABELS.txt [K, 1 to 10]", file=sys.stderr)
        return 2
    model_path, input_path, labels_path = argv[1:4]
    try:
        # The default device: $NPU_DEVICE, a kernel NPU, else the emulator.
        # The with block frees the model and its device memory.
        with npu.Model(model_path) as model:
            info = model.inputs[0]          # name, dtype, shape, nbytes
            image = np.fromfile(input_path, info.dtype)
            if image.size != math.prod(info.shape):
                print(f"classify: {input_path}: {image.nbytes} bytes; the model's input takes "
                      f"{info.nbytes}", file=sys.stderr)
                return 1
            outputs = model.run({info.name: image.reshape(info.shape)})
        # Outputs are numpy arrays that own their memory: usable after close.
        scores = next(iter(outputs.values()))
        for i, best in enumerate(npu.top_k(scores, k, npu.Labels(labels_path)), 1):
            print(f"{i}. class {best.index} {best.score:.6f} {best.label or ''}")
    except npu.Error as e:          # e.status (npu.Status), e.message (libnpu's)
        print(f"classify: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"classify: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
