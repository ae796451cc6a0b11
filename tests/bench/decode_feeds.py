#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One decode step's inputs for onnxruntime (make bench's
llm_decode_emu_latency figures): a decoder exported with past, a KV cache
of MAX_CONTEXT positions, the new token at the last one, so onnxruntime
reads as much cache as the NPU's decode program (which always attends
over all MAX_CONTEXT rows): input_ids [1, 1] = 5, attention_mask
[1, MAX_CONTEXT] of ones, position_ids [1, 1] = MAX_CONTEXT - 1 (where the
model has them), each past_key_values.N.key/value [1, kv_heads,
MAX_CONTEXT - 1, head_dim] of float32 zeros.  Writes the files into OUTDIR
and prints ort_bench.js's feed arguments (NAME=FILE:DTYPE:DIMS) on one line.

Usage: decode_feeds.py MODEL.onnx MAX_CONTEXT OUTDIR
Needs Debian's python3-onnx (reads the graph, not the external data).
"""
import os
import struct
import sys

import onnx


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    model = onnx.load(argv[1], load_external_data=False)
    ctx, out = int(argv[2]), argv[3]
    os.makedirs(out, exist_ok=True)
    feeds = []

    def write(name, fmt, values, dtype, dims):
        path = os.path.join(out, name + '.bin')
        with open(path, 'wb') as f:
            if values is None:
                n = 1
                for d in dims:
                    n *= d
                f.write(bytes(4 * n))
            else:
                f.write(struct.pack('<%d%s' % (len(values), fmt), *values))
        feeds.append('%s=%s:%s:%s' % (name, path, dtype, 'x'.join(str(d) for d in dims)))
    for i in model.graph.input:
        dims = [d.dim_value for d in i.type.tensor_type.shape.dim]
        if i.name == 'input_ids':
            write(i.name, 'q', [5], 'int64', [1, 1])
        elif i.name == 'attention_mask':
            write(i.name, 'q', [1] * ctx, 'int64', [1, ctx])
        elif i.name == 'position_ids':
            write(i.name, 'q', [ctx - 1], 'int64', [1, 1])
        elif i.name.startswith('past_key_values.'):
            write(i.name, None, None, 'float32', [1, dims[1], ctx - 1, dims[3]])
        else:
            sys.exit('decode_feeds: input %s is none of input_ids, attention_mask, '
                     'position_ids and past_key_values.N.*' % i.name)
    print(' '.join(feeds))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
