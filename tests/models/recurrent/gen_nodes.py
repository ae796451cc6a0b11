# SPDX-License-Identifier: MIT
"""
Single recurrent nodes whose meaning the ONNX text leaves to the runtime,
built with onnx.helper so that onnxruntime settles it (ort_recurrent.js):

  node_lstm_clip.onnx  LSTM, clip 0.3 (onnxruntime clips the inputs of f
                       and g, not the cell state before h)
  node_gru_acts.onnx   bidirectional GRU, activations HardSigmoid,
                       ScaledTanh (forward) Elu, LeakyRelu (reverse) with
                       activation_alpha [0.3, 0.9, 0.7, 0.05] and
                       activation_beta [0.4, 1.2]: consumed in order by the
                       activations that take them
  node_rnn_acts.onnx   bidirectional RNN, Affine and ThresholdedRelu,
                       alpha [0.5, 0.1], beta [0.2]

X is [5, 2, 3], hidden 4, W, R, B initializers (seeded numpy).
Usage: /usr/bin/python3 gen_nodes.py OUTDIR   (Debian's python3-onnx,
python3-numpy; same bytes on every run)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

T, B, I, H = 5, 2, 3, 4


def model(path, op, gates, attrs, rng, dirs=1, scale=3.0):
    w = (rng.rand(dirs, gates * H, I).astype(np.float32) - 0.5) * scale
    r = (rng.rand(dirs, gates * H, H).astype(np.float32) - 0.5) * scale
    b = rng.rand(dirs, 2 * gates * H).astype(np.float32) - 0.5
    inits = [numpy_helper.from_array(w, 'W'), numpy_helper.from_array(r, 'R'),
             numpy_helper.from_array(b, 'B')]
    outs = ['Y', 'Y_h'] + (['Y_c'] if op == 'LSTM' else [])
    node = helper.make_node(op, ['X', 'W', 'R', 'B'], outs, hidden_size=H, **attrs)
    graph = helper.make_graph(
        [node], os.path.basename(path)[:-5],
        [helper.make_tensor_value_info('X', TensorProto.FLOAT, [T, B, I])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 14)],
                          producer_name='gen_nodes.py')
    m.ir_version = 8
    onnx.save(m, path)
    print('wrote', path)


def main():
    out = sys.argv[1]
    rng = np.random.RandomState(3)
    model(os.path.join(out, 'node_lstm_clip.onnx'), 'LSTM', 4, {'clip': 0.3}, rng)
    model(os.path.join(out, 'node_gru_acts.onnx'), 'GRU', 3,
          {'activations': ['HardSigmoid', 'ScaledTanh', 'Elu', 'LeakyRelu'],
           'activation_alpha': [0.3, 0.9, 0.7, 0.05], 'activation_beta': [0.4, 1.2],
           'direction': 'bidirectional'}, rng, dirs=2, scale=0.8)
    model(os.path.join(out, 'node_rnn_acts.onnx'), 'RNN', 1,
          {'activations': ['Affine', 'ThresholdedRelu'], 'activation_alpha': [0.5, 0.1],
           'activation_beta': [0.2], 'direction': 'bidirectional'}, rng, dirs=2, scale=0.8)


if __name__ == '__main__':
    main()
