# SPDX-License-Identifier: MIT
"""
The control-flow test models (issue 17 part 3): two small modules written
here, seeded, compiled with torch.jit.script and exported with
torch.onnx.export, as PyTorch users export data-dependent code:

  steps_branch.onnx  x [1, 16], n int64 [] -> h = x, then n times
                     h = tanh(Linear(h)) + h / 2 (a Loop whose trip count
                     is the input n); then y = Linear_a(h) if sum(h) > 0
                     else 2 Linear_b(h) (an If on a computed condition):
                     y [1, 16], h [1, 16]
  early_exit.onnx    x [1, 16], limit float [] -> h = x; while i < 12 and
                     mean(h^2) < limit: h = 1.25 h + b (a Loop whose
                     condition the body computes; the trip count bounds
                     it): h [1, 16], steps int64 [] (iterations run)
  nested.onnx        x [1, 16], n int64 [] -> if sum(x) > 0: n times
                     h = tanh(Linear(h)) + h (a Loop inside a branch)
                     else h = 3 x; then n times: h -= 1/4 if mean(h) > 0.1
                     else h += 1/2 (an If inside a Loop's body): h [1, 16]

Usage: /usr/bin/python3 gen.py OUTDIR
Needs Debian's python3-torch (1.13).  Same bytes on every run.
"""
import os
import sys

import torch
import torch.nn as nn

SEED = 17
WIDTH = 16


class StepsBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(WIDTH, WIDTH)
        self.a = nn.Linear(WIDTH, WIDTH)
        self.b = nn.Linear(WIDTH, WIDTH)

    def forward(self, x, n):
        h = x
        for _ in range(int(n)):
            h = torch.tanh(self.lin(h)) + 0.5 * h
        if bool(h.sum() > 0):
            y = self.a(h)
        else:
            y = 2.0 * self.b(h)
        return y, h


class EarlyExit(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(1, WIDTH) * 0.1)

    def forward(self, x, limit):
        h = x
        i = 0
        while i < 12 and bool((h * h).mean() < limit):
            h = 1.25 * h + self.bias
            i += 1
        return h, torch.tensor(i)


class Nested(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(WIDTH, WIDTH)

    def forward(self, x, n):
        h = x
        if bool(x.sum() > 0):
            for _ in range(int(n)):
                h = torch.tanh(self.lin(h)) + h
        else:
            h = h * 3.0
        for _ in range(int(n)):
            if bool(h.mean() > 0.1):
                h = h - 0.25
            else:
                h = h + 0.5
        return h


def export(module, args, names, outs, path):
    torch.onnx.export(torch.jit.script(module), args, path, input_names=names,
                      output_names=outs, opset_version=14)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(SEED)
    x = torch.randn(1, WIDTH)
    export(StepsBranch().eval(), (x, torch.tensor(3)), ['x', 'n'], ['y', 'h'],
           os.path.join(out, 'steps_branch.onnx'))
    export(EarlyExit().eval(), (x, torch.tensor(4.0)), ['x', 'limit'], ['h', 'steps'],
           os.path.join(out, 'early_exit.onnx'))
    export(Nested().eval(), (x, torch.tensor(2)), ['x', 'n'], ['h'],
           os.path.join(out, 'nested.onnx'))


if __name__ == '__main__':
    main()
