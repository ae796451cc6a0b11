# SPDX-License-Identifier: MIT
"""
The run-time output size test models (issue 17): what users write and
what exporters emit when a model's output size depends on its data.

  head_nonzero.onnx  written here, seeded, exported with torch.onnx.export
                     (torchvision is not in Debian, so no torchvision.ops.nms:
                     the forward uses boolean indexing, torch.nonzero and
                     torch.unique as users write them): x [1, 3, 8, 8] ->
                     Conv 3->8 3x3, ReLU, a score head (Conv 1x1, Sigmoid)
                     and a box head (Conv 1x1 to 4); the cells whose score is
                     above a threshold: boxes [k, 4], scores [k], their cell
                     indices idx [k] (int64) and the distinct rows they lie
                     on, rows [r] (torch.unique of idx // 8).  The exporter
                     writes NonZero, Transpose, GatherND, Squeeze, Div and
                     Unique.  The threshold is the middle of the widest gap
                     between the scores of the test input (the LCG of
                     ort_dynout.js), so the NPU's bf16 convolutions pick the
                     same cells as onnxruntime's float32 ones.
  nms_tail.onnx      onnx.helper, the tail a detector export ends with:
                     boxes [1, 20, 4], scores [1, 2, 20] -> NonMaxSuppression
                     (at most 4 per class, IoU 0.5, score 0.3) -> selected
                     [k, 3]; Gather of its class and box columns, Gather of
                     the boxes, GatherND of the scores, Cast, Unsqueeze,
                     Concat: detections [k, 6] (y1, x1, y2, x2, score,
                     class) and selected.

Usage: /usr/bin/python3 gen.py OUTDIR
Needs Debian's python3-torch (1.13) and python3-onnx.  Same bytes on every run.
"""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import TensorProto, helper

SEED = 17


def lcg_input(seed, n):
    """The LCG of ort_dynout.js: values in [-1, 1)."""
    out = []
    for _ in range(n):
        seed = (seed * 1103515245 + 12345) & 0xffffffff
        out.append(((seed >> 8) & 0xffff) / 32768 - 1)
    return np.array(out, dtype=np.float32)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.cls = nn.Conv2d(8, 1, 1)
        self.box = nn.Conv2d(8, 4, 1)
        self.thr = 0.5

    def scores(self, x):
        return torch.sigmoid(self.cls(torch.relu(self.conv(x)))).flatten(1)[0]

    def forward(self, x):
        f = torch.relu(self.conv(x))
        s = torch.sigmoid(self.cls(f)).flatten(1)[0]
        b = self.box(f).flatten(2).transpose(1, 2)[0]
        keep = s > self.thr
        idx = torch.nonzero(keep).squeeze(1)
        rows = torch.unique(torch.div(idx, 8, rounding_mode='floor'))
        return b[keep], s[keep], idx, rows


def head(out):
    torch.manual_seed(SEED)
    m = Head().eval()
    x = torch.from_numpy(lcg_input(1234, 3 * 8 * 8).reshape(1, 3, 8, 8))
    with torch.no_grad():
        s = np.sort(m.scores(x).numpy())
    # The widest gap between two scores in the middle half of them.
    lo, hi = len(s) // 4, 3 * len(s) // 4
    k = max(range(lo, hi), key=lambda i: s[i + 1] - s[i])
    m.thr = float((s[k] + s[k + 1]) / 2)
    torch.onnx.export(m, x, os.path.join(out, 'head_nonzero.onnx'), opset_version=14,
                      input_names=['x'], output_names=['boxes', 'scores', 'idx', 'rows'])


def nms_tail(out):
    def const(name, dtype, vals, dims):
        return helper.make_tensor(name, dtype, dims, vals)

    nodes = [
        helper.make_node('NonMaxSuppression', ['boxes', 'scores', 'max_out', 'iou', 'thr'],
                         ['selected'], name='nms'),
        helper.make_node('Gather', ['selected', 'two'], ['box_i'], name='box_col', axis=1),
        helper.make_node('Gather', ['selected', 'one'], ['cls_i'], name='cls_col', axis=1),
        helper.make_node('Squeeze', ['boxes', 'zero1'], ['boxes0'], name='squeeze'),
        helper.make_node('Gather', ['boxes0', 'box_i'], ['picked'], name='pick', axis=0),
        helper.make_node('GatherND', ['scores', 'selected'], ['score'], name='score'),
        helper.make_node('Unsqueeze', ['score', 'one1'], ['score2'], name='unsq_s'),
        helper.make_node('Cast', ['cls_i'], ['cls_f'], name='cast', to=TensorProto.FLOAT),
        helper.make_node('Unsqueeze', ['cls_f', 'one1'], ['cls2'], name='unsq_c'),
        helper.make_node('Concat', ['picked', 'score2', 'cls2'], ['detections'], name='concat',
                         axis=1),
    ]
    inits = [
        const('max_out', TensorProto.INT64, [4], [1]),
        const('iou', TensorProto.FLOAT, [0.5], [1]),
        const('thr', TensorProto.FLOAT, [0.3], [1]),
        const('two', TensorProto.INT64, [2], []),
        const('one', TensorProto.INT64, [1], []),
        const('zero1', TensorProto.INT64, [0], [1]),
        const('one1', TensorProto.INT64, [1], [1]),
    ]
    g = helper.make_graph(
        nodes, 'nms_tail',
        [helper.make_tensor_value_info('boxes', TensorProto.FLOAT, [1, 20, 4]),
         helper.make_tensor_value_info('scores', TensorProto.FLOAT, [1, 2, 20])],
        [helper.make_tensor_value_info('detections', TensorProto.FLOAT, ['k', 6]),
         helper.make_tensor_value_info('selected', TensorProto.INT64, ['k', 3])],
        inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)],
                          producer_name='gen.py')
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, 'nms_tail.onnx'))


if __name__ == '__main__':
    head(sys.argv[1])
    nms_tail(sys.argv[1])
