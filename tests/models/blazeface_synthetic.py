# SPDX-License-Identifier: MIT
"""BlazeFace outputs with one known face, as npu-run --output-dir writes
them (DIR/<output>.bin, float32): anchor 0 (cell 0,0 of the 16x16 map,
center 0.03125) has logit 2 and box (dx 12.8, dy 0, w 25.6, h 12.8) px,
keypoint 0 at (+6.4, +6.4) px; every other anchor has logit -100.

usage: blazeface_synthetic.py DIR"""
import struct
import sys


def write(d, name, vals):
    with open(d + '/' + name + '.bin', 'wb') as f:
        f.write(struct.pack('<%df' % len(vals), *vals))


def main(d):
    s512 = [-100.0] * 512
    s512[0] = 2.0
    write(d, 'Identity_0', s512)
    write(d, 'Identity_1_0', [-100.0] * 384)
    b512 = [0.0] * (512 * 16)
    b512[0:6] = [12.8, 0.0, 25.6, 12.8, 6.4, 6.4]
    write(d, 'Identity_2_0', b512)
    write(d, 'Identity_3_0', [0.0] * (384 * 16))


if __name__ == '__main__':
    main(sys.argv[1])
