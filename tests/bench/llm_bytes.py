#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The bytes a decoder must read from DDR per generated token, the
denominator of make bench's DDR bound (issue 16): every weight once, at
the precision the device stores it, plus the whole KV cache.

  weights   a MatMul's or Gemm's constant B: 2 bytes per element in bf16,
            1 in w8 plus a float32 scale per output column; MatMulNBits'
            packed codes, scales and zero points as stored (1, 4 and 1
            bytes per element); a Gather table (the embedding, the rotary
            tables): the one row a token reads, float32; any other float
            initializer (norm weights): float32, once;
  KV cache  per past_key_values.N.key/value input: kv_heads x max_context
            x head_dim x 4 bytes (the device keeps the cache in the past
            inputs' float32: every decode step reads all of it).

Bytes of layer N (an initializer named with "layers.N.", the cache of
past_key_values.N.*) are kept apart, so that a slice of a model's layers
can be scaled to all of them.

Usage: llm_bytes.py MODEL.onnx bf16|w8 MAX_CONTEXT
Prints {"total": B, "layers": {"0": B, ...}, "other": B, "cache": B}.
Needs Debian's python3-onnx (reads the graph, not the external data).
"""
import json
import re
import sys

import onnx
from onnx import TensorProto

FLOATS = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16)


def numel(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def main(argv):
    if len(argv) != 4 or argv[2] not in ('bf16', 'w8'):
        sys.exit(__doc__)
    model = onnx.load(argv[1], load_external_data=False)
    prec, ctx = argv[2], int(argv[3])
    inits = {t.name: t for t in model.graph.initializer}
    weight = {}		# initializer -> bytes per token
    for n in model.graph.node:
        ins = list(n.input)
        if n.op_type in ('MatMul', 'Gemm') and len(ins) > 1 and ins[1] in inits:
            t = inits[ins[1]]
            cols = t.dims[-1] if n.op_type == 'MatMul' else numel(t.dims) // t.dims[-1]
            weight[ins[1]] = numel(t.dims) * 2 if prec == 'bf16' else \
                numel(t.dims) + 4 * cols
        elif n.op_type == 'MatMulNBits':
            for k, size in ((1, 1), (2, 4), (3, 1)):
                if len(ins) > k and ins[k] in inits:
                    weight[ins[k]] = numel(inits[ins[k]].dims) * size
        elif n.op_type == 'Gather' and ins[0] in inits:
            t = inits[ins[0]]
            weight.setdefault(ins[0], numel(t.dims[1:]) * 4)
    for name, t in inits.items():
        if name not in weight and t.data_type in FLOATS and numel(t.dims) > 1:
            weight[name] = numel(t.dims) * 4
    out = {'layers': {}, 'other': 0, 'cache': 0}

    def add(layer, b):
        if layer is None:
            out['other'] += b
        else:
            out['layers'][layer] = out['layers'].get(layer, 0) + b
    for name, b in weight.items():
        m = re.search(r'layers\.(\d+)\.', name)
        add(m.group(1) if m else None, b)
    for i in model.graph.input:
        m = re.match(r'past_key_values\.(\d+)\.(key|value)$', i.name)
        if m:
            d = [x.dim_value for x in i.type.tensor_type.shape.dim]
            b = d[1] * ctx * d[3] * 4
            out['cache'] += b
            add(m.group(1), b)
    out['total'] = out['other'] + sum(out['layers'].values())
    print(json.dumps(out))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
