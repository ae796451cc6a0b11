# SPDX-License-Identifier: MIT
"""
The guest's host-step test model (issue 17): a convolution, a determinant
and an add, exported by torch.onnx.export as a PyTorch user would.  The NPU
has no Det, so npu-run --cpu-fallback runs it on the CPU between the
Conv's program and the Add's (a host step), which is what the guest's
npu-guest-tools checks through the driver:

  conv_det_add.onnx  x [1, 3, 8, 8] -> Conv 3->4, 3x3, pad 1 -> [1, 4, 8, 8]
                     -> Det over the last two axes -> [1, 4] -> + bias [4]

Usage: /usr/bin/python3 gen.py OUTDIR
Needs Debian's python3-torch (1.13).  Same bytes on every run.
"""
import os
import sys

import torch
import torch.nn as nn


class ConvDetAdd(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        # Entries of about 1, so that the determinants are far from 0.
        nn.init.uniform_(self.conv.weight, -1.0, 1.0)
        self.bias = nn.Parameter(torch.tensor([0.5, -0.25, 1.0, 2.0]))

    def forward(self, x):
        return torch.linalg.det(self.conv(x)) + self.bias


def main():
    out = sys.argv[1]
    torch.manual_seed(29)
    m = ConvDetAdd().eval()
    torch.onnx.export(m, (torch.zeros(1, 3, 8, 8),), os.path.join(out, 'conv_det_add.onnx'),
                      input_names=['x'], output_names=['y'], opset_version=13)


if __name__ == '__main__':
    main()
