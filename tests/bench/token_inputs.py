#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make bench: one BERT input of sequence S, written once as raw
little-endian int64 files that npu-run (--input NAME=FILE) and
onnxruntime-node (ort_bench.js) both read, so that both engines run on the
same tokens:
  DIR/input_ids.bin       token ids from the LCG of tests/models/model_test.c,
                          mod the test models' vocabulary of 256;
  DIR/attention_mask.bin  1 for the first S - 3 tokens, then 0 (padding);
  DIR/token_type_ids.bin  0, then 1 from the middle of the kept tokens.
Usage: token_inputs.py DIR S"""
import os
import struct
import sys

VOCAB = 256


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    out, s = argv[1], int(argv[2])
    seed, ids = 1, []
    for _ in range(s):
        seed = (seed * 1103515245 + 12345) & 0xffffffff
        ids.append(((seed >> 8) & 0xffff) % VOCAB)
    keep = max(1, s - 3)
    mask = [1 if i < keep else 0 for i in range(s)]
    types = [1 if keep // 2 <= i < keep else 0 for i in range(s)]
    os.makedirs(out, exist_ok=True)
    for name, v in (('input_ids', ids), ('attention_mask', mask), ('token_type_ids', types)):
        with open(os.path.join(out, name + '.bin'), 'wb') as f:
            f.write(struct.pack('<%dq' % s, *v))


if __name__ == '__main__':
    main(sys.argv)
