"""The colour of a point of a PNG (Chrome's screenshots: 8-bit RGB or RGBA, not interlaced), without an image
library: tests know a picture by the colour of the page it shows."""

from __future__ import annotations

import struct
import zlib


def _rows(png: bytes) -> tuple[int, int, int, bytes]:
    """Width, height, bytes per pixel and the filtered scanlines."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    at, data, header = 8, b"", b""
    while at < len(png):
        (length,) = struct.unpack(">I", png[at : at + 4])
        kind, body = png[at + 4 : at + 8], png[at + 8 : at + 8 + length]
        header = body if kind == b"IHDR" else header
        data += body if kind == b"IDAT" else b""
        at += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and not interlace, "an 8-bit RGB(A) PNG, not interlaced"
    return width, height, 3 if colour == 2 else 4, zlib.decompress(data)


def colour_at(png: bytes, x: float, y: float) -> tuple[int, int, int]:
    """The RGB colour at ``x``, ``y`` (fractions of the width and height)."""
    width, height, size, raw = _rows(png)
    stride, row_x, row_y = width * size, int(x * (width - 1)), int(y * (height - 1))
    previous = bytearray(stride)
    for number in range(row_y + 1):
        start = number * (stride + 1)
        kind, row = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = row[i - size] if i >= size else 0
            up, corner = previous[i], previous[i - size] if i >= size else 0
            if kind == 1:
                row[i] = (row[i] + left) & 255
            elif kind == 2:
                row[i] = (row[i] + up) & 255
            elif kind == 3:
                row[i] = (row[i] + (left + up) // 2) & 255
            elif kind == 4:
                guess = left + up - corner
                best = min((abs(guess - left), 0, left), (abs(guess - up), 1, up), (abs(guess - corner), 2, corner))
                row[i] = (row[i] + best[2]) & 255
        previous = row
    r, g, b = previous[row_x * size : row_x * size + 3]
    return r, g, b


def reddish(colour: tuple[int, int, int]) -> bool:
    r, g, b = colour
    return r > 150 and g < 80 and b < 80


def greenish(colour: tuple[int, int, int]) -> bool:
    r, g, b = colour
    return g > 120 and r < 80 and b < 80
