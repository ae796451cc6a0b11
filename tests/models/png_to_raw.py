#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turn an 8-bit RGB/RGBA PNG into a model input: float32 NHWC [1, S, S, 3],
raw little-endian, values in [-1, 1] (BlazeFace's range).  The image is
box-averaged down by an integer factor to S x S (it must be square and a
multiple of S).  Standard library only: make models runs it on machines with
no imaging packages.

Usage: png_to_raw.py IN.png OUT.raw [SIZE]
"""
import struct
import sys
import zlib


def fail(msg):
    sys.exit('png_to_raw: ' + msg)


def decode(path):
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        fail(path + ': not a PNG file')
    pos, idat, hdr = 8, [], None
    while pos + 8 <= len(data):
        length, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b'IHDR':
            hdr = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat.append(body)
        elif kind == b'IEND':
            break
        pos += 12 + length
    if hdr is None:
        fail(path + ': no IHDR chunk')
    width, height, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        fail('%s: only 8-bit non-interlaced RGB/RGBA is handled (depth %d, colour type %d)'
             % (path, depth, ctype))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b''.join(idat))
    stride = width * bpp
    if len(raw) != height * (stride + 1):
        fail(path + ': truncated image data')
    rows, prev = [], bytearray(stride)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ftype == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif ftype == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 255
        elif ftype == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif ftype == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        elif ftype != 0:
            fail('%s: bad filter type %d on row %d' % (path, ftype, y))
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def main():
    if len(sys.argv) not in (3, 4):
        fail('usage: png_to_raw.py IN.png OUT.raw [SIZE]')
    size = int(sys.argv[3]) if len(sys.argv) == 4 else 128
    width, height, bpp, rows = decode(sys.argv[1])
    if width != height or width % size:
        fail('%s is %dx%d; it must be square and a multiple of %d'
             % (sys.argv[1], width, height, size))
    k = width // size
    out = []
    for y in range(size):
        for x in range(size):
            for ch in range(3):
                s = 0
                for dy in range(k):
                    row = rows[y * k + dy]
                    for dx in range(k):
                        s += row[(x * k + dx) * bpp + ch]
                out.append(s / (k * k) / 127.5 - 1.0)
    with open(sys.argv[2], 'wb') as f:
        f.write(struct.pack('<%df' % len(out), *out))


if __name__ == '__main__':
    main()
