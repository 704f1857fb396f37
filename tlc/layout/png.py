"""A layout picture as a PNG image, written with zlib (no imaging library).

The image is drawn into an array of palette indices (white, grey grid lines,
black text, the cells' colours) and written as an 8-bit palette PNG, or as
RGB when the picture has more than 256 colours.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

from .font import HEIGHT, text_bitmap, text_width

SCALE = 2  # screen pixels per font pixel
PAD = 3 * SCALE
LINE_H = (HEIGHT + 2) * SCALE
WHITE, GREY, BLACK = (255, 255, 255), (128, 128, 128), (0, 0, 0)


def png_bytes(picture) -> bytes:
    """The PNG file of a `plot.Picture`."""
    lines = max((len(cell) for row in picture.text for cell in row), default=1)
    widest = max((text_width(s, SCALE) for row in picture.text for cell in row for s in cell),
                 default=0)
    cell_w = widest + 2 * PAD
    cell_h = lines * LINE_H + 2 * PAD - 2 * SCALE
    label_w = text_width(max(picture.rows, key=len), SCALE) + 2 * PAD
    title_h = len(picture.title) * LINE_H + PAD
    top = title_h + LINE_H + PAD
    width = max(label_w + len(picture.cols) * cell_w + 1,
                max(text_width(t, SCALE) for t in picture.title)) + 2 * PAD
    height = top + len(picture.rows) * cell_h + 1 + PAD

    fills = picture.fill.reshape(-1, 3)
    colours, cell_index = np.unique(fills, axis=0, return_inverse=True)
    palette = [WHITE, GREY, BLACK] + [tuple(int(v) for v in c) for c in colours]
    cell_index = cell_index.reshape(len(picture.rows), len(picture.cols)) + 3
    canvas = np.zeros((height, width), dtype=np.uint16)

    def draw(text, x, y, align="left"):
        bitmap = text_bitmap(text, SCALE)
        if align == "center":
            x -= bitmap.shape[1] // 2
        elif align == "right":
            x -= bitmap.shape[1]
        view = canvas[y:y + bitmap.shape[0], x:x + bitmap.shape[1]]
        view[bitmap[:view.shape[0], :view.shape[1]]] = 2

    for i, line in enumerate(picture.title):
        draw(line, PAD, PAD + i * LINE_H)
    x0 = PAD + label_w
    for j, col in enumerate(picture.cols):
        draw(col, x0 + j * cell_w + cell_w // 2, title_h + PAD, "center")
    for i, row in enumerate(picture.rows):
        y = top + i * cell_h
        draw(row, x0 - PAD, y + (cell_h - HEIGHT * SCALE) // 2, "right")
        for j in range(len(picture.cols)):
            x = x0 + j * cell_w
            canvas[y:y + cell_h, x:x + cell_w] = cell_index[i, j]
            cell = picture.text[i][j]
            first = y + (cell_h - len(cell) * LINE_H + 2 * SCALE) // 2
            for k, s in enumerate(cell):
                draw(s, x + cell_w // 2, first + k * LINE_H, "center")
    # Grid lines between the cells and around them.
    grid_x = x0 + np.arange(len(picture.cols) + 1) * cell_w
    grid_y = top + np.arange(len(picture.rows) + 1) * cell_h
    bottom, right = grid_y[-1], grid_x[-1]
    canvas[grid_y, x0:right + 1] = 1
    canvas[top:bottom + 1, grid_x] = 1
    return _encode(canvas, palette)


def _encode(canvas: np.ndarray, palette: list) -> bytes:
    height, width = canvas.shape
    if len(palette) <= 256:
        pixels, colour_type = canvas.astype(np.uint8), 3
    else:
        pixels, colour_type = np.asarray(palette, dtype=np.uint8)[canvas], 2
    rows = pixels.reshape(height, -1)
    raw = np.hstack([np.zeros((height, 1), dtype=np.uint8), rows]).tobytes()  # filter 0
    chunks = [_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0))]
    if colour_type == 3:
        chunks.append(_chunk(b"PLTE", bytes(v for c in palette for v in c)))
    chunks.append(_chunk(b"IDAT", zlib.compress(raw, 6)))
    chunks.append(_chunk(b"IEND", b""))
    return b"\x89PNG\r\n\x1a\n" + b"".join(chunks)


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)
