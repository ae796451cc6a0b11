# SPDX-License-Identifier: MIT
"""The test pictures of npu-image.sh and the tensors npu-run must make of
them, written with the standard library only (PNG: zlib; JPEG: cjpeg from
a PPM, in the shell script).  Usage: image_gen.py DIR"""
import struct
import sys
import zlib

from onnx_pb import fld

W, H = 6, 4


def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]


def chunk(kind, body):
    return (struct.pack('>I', len(body)) + kind + body +
            struct.pack('>I', zlib.crc32(kind + body) & 0xffffffff))


def png(path, w, h, ctype, depth, rows, extra=b''):
    """A PNG of colour type @ctype and bit depth @depth; @rows are the
    packed sample bytes of each row (filter 0 is added here)."""
    head = struct.pack('>IIBBBBB', w, h, depth, ctype, 0, 0, 0)
    data = zlib.compress(b''.join(b'\0' + r for r in rows))
    with open(path, 'wb') as f:
        f.write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', head) + extra + chunk(b'IDAT', data) +
                chunk(b'IEND', b''))


def rgb(x, y):
    """The colour test picture: every pixel and channel different."""
    return ((x * 40 + y * 7) % 256, (y * 60 + x * 3 + 9) % 256, (x * y * 11 + 50) % 256)


def grey(x, y):
    return (x * 37 + y * 51 + 3) % 256


def adam7(path, w, h, pix):
    """An interlaced (Adam7) 8-bit RGB PNG of @pix(x, y): the seven passes'
    sub-images one after the other, empty passes left out."""
    passes = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4),
              (1, 0, 2, 2), (0, 1, 1, 2))
    raw = b''
    for x0, y0, dx, dy in passes:
        xs, ys = range(x0, w, dx), range(y0, h, dy)
        if xs and ys:
            raw += b''.join(b'\0' + bytes(v for x in xs for v in pix(x, y)) for y in ys)
    head = struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 1)
    with open(path, 'wb') as f:
        f.write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', head) +
                chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))


def model(path, dt, dims):
    """An Identity model: input x, output y, both @dt of @dims (an int, or
    bytes for a symbolic dim)."""
    shape = b''.join(fld(1, fld(2, d) if isinstance(d, bytes) else fld(1, d)) for d in dims)
    vi = lambda n: fld(1, n) + fld(2, fld(1, fld(1, dt) + fld(2, shape)))
    node = fld(1, b'x') + fld(2, b'y') + fld(4, b'Identity')
    graph = fld(1, node) + fld(2, b'g') + fld(11, vi(b'x')) + fld(12, vi(b'y'))
    with open(path, 'wb') as f:
        f.write(fld(1, 8) + fld(8, fld(2, 13)) + fld(7, graph))


def tensor(pix, w, h, layout, c, mean=(0, 0, 0), std=(1, 1, 1), u8=False):
    """The input npu-run must make: @pix(x, y) an RGB triple of floats 0..255."""
    vals = {}
    for y in range(h):
        for x in range(w):
            p = pix(x, y)
            for ch in range(c):
                v = p[ch] if c == 3 else p[0]
                at = ch * h * w + y * w + x if layout == 'nchw' else (y * w + x) * c + ch
                vals[at] = (min(255, max(0, round(v))) if u8 else
                            (v / 255.0 - f32(mean[ch])) / f32(std[ch]))
    data = [vals[i] for i in range(len(vals))]
    return struct.pack('<%d%s' % (len(data), 'B' if u8 else 'f'), *data)


def bilinear(src, sw, sh, w, h):
    """@src resized as npu-run does when enlarging: half-pixel centres, clamped."""
    def axis(i, n_in, n_out):
        c = max(0.0, (i + 0.5) * n_in / n_out - 0.5)
        p0 = int(c)
        if p0 >= n_in - 1:
            return n_in - 1, n_in - 1, 0.0
        return p0, p0 + 1, c - p0

    def pix(x, y):
        x0, x1, fx = axis(x, sw, w)
        y0, y1, fy = axis(y, sh, h)
        out = []
        for ch in range(3):
            top = src(x0, y0)[ch] * (1 - fx) + src(x1, y0)[ch] * fx
            bot = src(x0, y1)[ch] * (1 - fx) + src(x1, y1)[ch] * fx
            out.append(top * (1 - fy) + bot * fy)
        return out
    return pix


def main():
    d = sys.argv[1]
    w = lambda name, b: open(d + '/' + name, 'wb').write(b)
    # Models: float32 NCHW and NHWC, uint8 NHWC, 1 channel, ambiguous,
    # enlarged, and the refused: 4 channels, rank 2, float16, an open dim.
    model(d + '/f_nchw.onnx', 1, [1, 3, H, W])
    model(d + '/f_nhwc.onnx', 1, [1, H, W, 3])
    model(d + '/u8.onnx', 2, [1, H, W, 3])
    model(d + '/u8_16.onnx', 2, [1, 16, 16, 3])
    model(d + '/f_grey.onnx', 1, [1, 1, H, W])
    model(d + '/f_3x3.onnx', 1, [1, 3, H, 3])
    model(d + '/f_big.onnx', 1, [1, 2 * H, 2 * W, 3])
    model(d + '/f_4ch.onnx', 1, [1, 4, H, W])
    model(d + '/f_rank2.onnx', 1, [H, W])
    model(d + '/f16.onnx', 10, [1, 3, H, W])
    model(d + '/f_open.onnx', 1, [b'N', 3, H, W])

    rows = [bytes(v for x in range(W) for v in rgb(x, y)) for y in range(H)]
    png(d + '/rgb.png', W, H, 2, 8, rows)
    png(d + '/grey.png', W, H, 0, 8, [bytes(grey(x, y) for x in range(W)) for y in range(H)])
    # Palette: index (x + y) % 4 of four colours.
    pal = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (200, 100, 50)]
    png(d + '/palette.png', W, H, 3, 8, [bytes((x + y) % 4 for x in range(W)) for y in range(H)],
        chunk(b'PLTE', bytes(v for c in pal for v in c)))
    # RGBA: opaque but pixel (0, 0), which is transparent (black behind it).
    png(d + '/rgba.png', W, H, 6, 8,
        [bytes(v for x in range(W) for v in rgb(x, y) + (0 if x == y == 0 else 255,))
         for y in range(H)])
    # Grey + alpha, opaque.
    png(d + '/greya.png', W, H, 4, 8,
        [bytes(v for x in range(W) for v in (grey(x, y), 255)) for y in range(H)])
    # 16 bits a sample: v * 257 is v again in 8 bits.
    png(d + '/rgb16.png', W, H, 2, 16,
        [b''.join(struct.pack('>H', v * 257) for x in range(W) for v in rgb(x, y))
         for y in range(H)])
    adam7(d + '/interlaced.png', W, H, rgb)
    # Twice as wide: area-averaged in pairs for f_3x3 with --image-layout nchw.
    png(d + '/wide.png', 2 * 3, H, 2, 8,
        [bytes(v for x in range(6) for v in rgb(x, y)) for y in range(H)])

    mean, std = (0.1, 0.2, 0.3), (0.5, 0.25, 2.0)
    flt = lambda p: tuple(float(v) for v in p)
    w('nchw.want', tensor(lambda x, y: flt(rgb(x, y)), W, H, 'nchw', 3, mean, std))
    w('nhwc.want', tensor(lambda x, y: flt(rgb(x, y)), W, H, 'nhwc', 3))
    w('blaze.want', tensor(lambda x, y: flt(rgb(x, y)), W, H, 'nhwc', 3, (.5,) * 3, (.5,) * 3))
    w('u8.want', tensor(lambda x, y: rgb(x, y), W, H, 'nhwc', 3, u8=True))
    w('grey_u8.want', tensor(lambda x, y: (grey(x, y),) * 3, W, H, 'nhwc', 3, u8=True))
    w('palette.want', tensor(lambda x, y: pal[(x + y) % 4], W, H, 'nhwc', 3, u8=True))
    w('rgba.want', tensor(lambda x, y: (0, 0, 0) if x == y == 0 else rgb(x, y), W, H,
                          'nhwc', 3, u8=True))
    w('grey1.want', tensor(lambda x, y: (float(grey(x, y)),), W, H, 'nchw', 1))
    w('luma1.want', tensor(lambda x, y: (0.299 * rgb(x, y)[0] + 0.587 * rgb(x, y)[1] +
                                         0.114 * rgb(x, y)[2],), W, H, 'nchw', 1))
    w('wide.want', tensor(lambda x, y: [(rgb(2 * x, y)[c] + rgb(2 * x + 1, y)[c]) / 2
                                        for c in range(3)], 3, H, 'nchw', 3))
    w('big.want', tensor(bilinear(rgb, W, H, 2 * W, 2 * H), 2 * W, 2 * H, 'nhwc', 3))

    # Bad files: truncated and corrupted PNGs (a noisy 64x64, so the cut
    # falls in the compressed data), a huge header, a text file named .png.
    noise = [bytes((x * 7919 + y * 104729 + c * 13) * 2654435761 % 251 for x in range(64)
                   for c in range(3)) for y in range(64)]
    png(d + '/noise.png', 64, 64, 2, 8, noise)
    b = open(d + '/noise.png', 'rb').read()
    w('trunc.png', b[:len(b) // 2])
    bad = bytearray(b)
    bad[len(b) // 2] ^= 0x55
    w('badcrc.png', bytes(bad))
    png(d + '/huge.png', 20000, 20000, 2, 8, [b''])
    w('text.png', b'this is not a picture\n')
    # The PPM cjpeg makes the JPEGs from: a smooth 16x16 and the noise.
    w('smooth.ppm', b'P6 16 16 255\n' + bytes(v for y in range(16) for x in range(16)
                                              for v in (x * 16, y * 16, 128)))
    w('noise.ppm', b'P6 64 64 255\n' + b''.join(noise))


if __name__ == '__main__':
    main()
