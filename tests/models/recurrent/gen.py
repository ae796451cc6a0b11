# SPDX-License-Identifier: MIT
"""
The recurrent test models (issue 17 part 4): two small speech-style
modules written here, seeded, exported with torch.onnx.export as PyTorch
users export them (batch_first layers, the state as inputs and outputs so
that an application carries it from one frame of audio to the next):

  lstm_frames.onnx  x [1, 16, 13] (16 frames of 13 features), h0, c0
                    [2, 1, 48] -> Linear 13->32, ReLU, a 2-layer LSTM of
                    hidden 48, Linear 48->10: logits [1, 16, 10], hn, cn
  gru_frames.onnx   x [1, 16, 13], h0 [2, 1, 32] -> a bidirectional GRU of
                    hidden 32 (PyTorch's GRU is ONNX's linear_before_reset
                    1), Linear 64->10: logits [1, 16, 10], hn

Usage: /usr/bin/python3 gen.py OUTDIR
       /usr/bin/python3 gen.py OUTDIR --h256   (also lstm_h256.onnx: one
       LSTM layer of hidden 256 over 16 steps, input 64, for the cycles
       of one step; not committed)
Needs Debian's python3-torch (1.13).  Same bytes on every run.
"""
import os
import sys

import torch
import torch.nn as nn

SEED = 17
STEPS = 16
FEATURES = 13


class LstmFrames(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(FEATURES, 32)
        self.lstm = nn.LSTM(32, 48, num_layers=2, batch_first=True)
        self.out = nn.Linear(48, 10)

    def forward(self, x, h0, c0):
        y, (h, c) = self.lstm(torch.relu(self.inp(x)), (h0, c0))
        return self.out(y), h, c


class GruFrames(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(FEATURES, 32, batch_first=True, bidirectional=True)
        self.out = nn.Linear(64, 10)

    def forward(self, x, h0):
        y, h = self.gru(x, h0)
        return self.out(y), h


class LstmH256(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(64, 256, batch_first=True)

    def forward(self, x, h0, c0):
        y, (h, c) = self.lstm(x, (h0, c0))
        return y, h, c


def export(model, args, inputs, outputs, path):
    model.eval()
    with torch.no_grad():
        torch.onnx.export(model, args, path, input_names=inputs, output_names=outputs,
                          opset_version=14, do_constant_folding=True)
    print('wrote', path)


def main():
    out = sys.argv[1]
    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)
    os.makedirs(out, exist_ok=True)
    x = torch.randn(1, STEPS, FEATURES)
    export(LstmFrames(), (x, torch.zeros(2, 1, 48), torch.zeros(2, 1, 48)),
           ['x', 'h0', 'c0'], ['logits', 'hn', 'cn'], os.path.join(out, 'lstm_frames.onnx'))
    export(GruFrames(), (x, torch.zeros(2, 1, 32)), ['x', 'h0'], ['logits', 'hn'],
           os.path.join(out, 'gru_frames.onnx'))
    if '--h256' in sys.argv:
        export(LstmH256(), (torch.randn(1, STEPS, 64), torch.zeros(1, 1, 256),
                            torch.zeros(1, 1, 256)),
               ['x', 'h0', 'c0'], ['y', 'hn', 'cn'], os.path.join(out, 'lstm_h256.onnx'))


if __name__ == '__main__':
    main()
