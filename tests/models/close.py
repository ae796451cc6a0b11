#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One output of npu-run against onnxruntime's, the bounds of make
check-models: cosine >= 0.999 and max error <= 2% of the reference's range.
Prints one line of figures ("# cosine ..."); exits 0 within the bounds,
1 otherwise (or when the sizes differ).

Usage: close.py OURS.bin REF.bin   (raw little-endian float32)
"""
import math
import struct
import sys

a, b = (open(p, 'rb').read() for p in sys.argv[1:3])
if len(a) != len(b) or not a:
    print('# %d bytes from npu-run, %d from onnxruntime' % (len(a), len(b)))
    sys.exit(1)
x = struct.unpack('<%df' % (len(a) // 4), a)
y = struct.unpack('<%df' % (len(b) // 4), b)
dot = sum(p * q for p, q in zip(x, y))
nx, ny = math.sqrt(sum(p * p for p in x)), math.sqrt(sum(q * q for q in y))
rng = max(y) - min(y)
err = max(abs(p - q) for p, q in zip(x, y))
cos = dot / (nx * ny) if nx and ny else 0.0
print('# cosine %.6f, max error %.4g = %.2f%% of range %.4g' % (cos, err, 100 * err / rng, rng))
sys.exit(0 if cos >= 0.999 and err <= 0.02 * rng else 1)
