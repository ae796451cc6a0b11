# SPDX-License-Identifier: MIT
"""
The com.microsoft MatMulNBits test models (issue 16 part 3): one node
Y = A x dequant(B)^T (+ bias) each, with seeded float weights quantised the
way onnxruntime's MatMul4BitsQuantizer does, for block sizes 32, 64 and
128, with and without zero points and bias, and one 8-bit case.  Also
writes each model's input A (in_A.bin, float32, little endian) so that
onnxruntime (ort_nbits.js) and npu-run read the same bytes.

Usage: /usr/bin/python3 gen.py OUTDIR
Needs Debian's python3-onnx and python3-numpy (no torch).  Same bytes on
every run: numpy's seeded generator, no doc strings.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

K = 256
N = 96
ROWS = 4        # A is [1, ROWS, K]
SEED = 16

# name: (bits, block_size, zero points, bias)
CASES = {
    'nbits4_b32_zp_bias': (4, 32, True, True),
    'nbits4_b32_sym': (4, 32, False, False),
    'nbits4_b64_zp': (4, 64, True, False),
    'nbits4_b64_sym_bias': (4, 64, False, True),
    'nbits4_b128_zp_bias': (4, 128, True, True),
    'nbits4_b128_sym': (4, 128, False, False),
    'nbits8_b32_zp_bias': (8, 32, True, True),
}


def quantise(w, bits, block, zp):
    """w float32 [N][K] -> codes [N][K] (uint), scales [N][K/block], zps.

    Asymmetric (with zero points), as MatMul4BitsQuantizer: the block's
    range widened to hold 0, scale = (max - min) / (2^bits - 1), zero point
    round(-min / scale).  Symmetric: scale = max|w| / (2^(bits-1) - 1)
    around the operator's default zero point 2^(bits-1).
    """
    qmax = (1 << bits) - 1
    n, k = w.shape
    blocks = w.reshape(n, k // block, block)
    if zp:
        lo = np.minimum(blocks.min(axis=2), 0.0)
        hi = np.maximum(blocks.max(axis=2), 0.0)
        scale = (hi - lo) / qmax
        scale[scale == 0] = 1.0
        z = np.clip(np.round(-lo / scale), 0, qmax)
    else:
        scale = np.abs(blocks).max(axis=2) / ((1 << (bits - 1)) - 1)
        scale[scale == 0] = 1.0
        z = np.full(scale.shape, 1 << (bits - 1))
    q = np.clip(np.round(blocks / scale[:, :, None]) + z[:, :, None], 0, qmax)
    return q.astype(np.uint8), scale.astype(np.float32), z.astype(np.uint8)


def pack(q, bits):
    """[..., 2m] codes -> [..., m] bytes, the low nibble first (4 bits)."""
    if bits == 8:
        return q
    return (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8)


def model(name, bits, block, zp, bias, rng):
    w = rng.standard_normal((N, K)).astype(np.float32) / np.sqrt(K)
    q, scale, z = quantise(w, bits, block, zp)
    kb = K // block
    inits = [
        numpy_helper.from_array(pack(q, bits).reshape(N, kb, block * bits // 8), 'B'),
        numpy_helper.from_array(scale.reshape(N * kb), 'scales'),
    ]
    inputs = ['A', 'B', 'scales']
    if zp:
        zrow = z if bits == 8 else pack(
            np.pad(z, ((0, 0), (0, kb % 2))), 4)
        inits.append(numpy_helper.from_array(zrow.reshape(-1).astype(np.uint8), 'zero_points'))
        inputs.append('zero_points')
    if bias:
        inputs += [''] * (4 - len(inputs)) + ['', 'bias']
        inits.append(numpy_helper.from_array(
            (rng.standard_normal(N) * 0.1).astype(np.float32), 'bias'))
    node = helper.make_node('MatMulNBits', inputs, ['Y'], name='qproj', domain='com.microsoft',
                            K=K, N=N, bits=bits, block_size=block)
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info('A', TensorProto.FLOAT, [1, ROWS, K])],
        [helper.make_tensor_value_info('Y', TensorProto.FLOAT, [1, ROWS, N])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17),
                                                helper.make_opsetid('com.microsoft', 1)],
                          producer_name='libnpu tests/models/nbits/gen.py')
    m.ir_version = 8
    return m


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    rng = np.random.default_rng(SEED)
    a = rng.standard_normal((1, ROWS, K)).astype(np.float32)
    a.tofile(os.path.join(out, 'in_A.bin'))
    for name, (bits, block, zp, bias) in CASES.items():
        onnx.save(model(name, bits, block, zp, bias, rng), os.path.join(out, name + '.onnx'))


if __name__ == '__main__':
    main()
