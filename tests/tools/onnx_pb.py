# SPDX-License-Identifier: MIT
"""The protobuf wire format the hand-made ONNX models of npu-run.sh are
written in: varints and fields (no onnx package needed)."""


def enc(v):
    """Varint of the non-negative int @v."""
    o = bytearray()
    while True:
        c = v & 0x7f; v >>= 7
        o.append(c | (0x80 if v else 0))
        if not v:
            return bytes(o)


def fld(n, v):
    """Field @n: a varint for an int @v, else length-delimited bytes."""
    if isinstance(v, int):
        return enc(n << 3) + enc(v)
    return enc(n << 3 | 2) + enc(len(v)) + v
