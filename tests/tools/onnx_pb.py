# SPDX-License-Identifier: MIT
"""The protobuf wire format the hand-made ONNX models of npu-run.sh are
written in, and read back to be rewritten: varints and fields (no onnx
package needed)."""


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


def value_info(name, elem, dims):
    """ValueInfoProto @name: a tensor of ONNX element type @elem (1 float,
    7 int64, 9 bool, ...) and fixed @dims ([] for a scalar)."""
    shape = b''.join(fld(1, fld(1, d)) for d in dims)
    return fld(1, name) + fld(2, fld(1, fld(1, elem) + fld(2, shape)))


def varint(b, i):
    """Varint at @b[@i]: (value, index after it)."""
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v, i


def parse(b):
    """Fields of message @b as [key, value] pairs, in order: an int for a
    varint, bytes for the other wire types."""
    f, i = [], 0
    while i < len(b):
        k, i = varint(b, i)
        t = k & 7
        if t == 0:
            v, i = varint(b, i)
        elif t == 2:
            n, i = varint(b, i); v = b[i:i + n]; i += n
        elif t == 1:
            v = b[i:i + 8]; i += 8
        else:
            v = b[i:i + 4]; i += 4
        f.append([k, v])
    return f


def ser(f):
    """Message of the [key, value] pairs @f (what parse returns)."""
    o = bytearray()
    for k, v in f:
        o += enc(k)
        if k & 7 == 0:
            o += enc(v)
        elif k & 7 == 2:
            o += enc(len(v)) + v
        else:
            o += v
    return bytes(o)
