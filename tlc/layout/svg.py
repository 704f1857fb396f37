"""A layout picture as SVG text: one rectangle and one text per cell.

Classes: `v` the cells' values, `c` the column numbers, `r` the row numbers;
the title lines have none."""

from __future__ import annotations

from xml.sax.saxutils import escape

CHAR_W = 7  # px per character of the 11 px monospace font (an estimate for sizing)
LINE_H = 13
PAD = 4


def svg_bytes(picture) -> bytes:
    """The SVG document of a `plot.Picture`."""
    lines = max((len(cell) for row in picture.text for cell in row), default=1)
    chars = max((len(s) for row in picture.text for cell in row for s in cell), default=1)
    cell_w = chars * CHAR_W + 2 * PAD
    cell_h = lines * LINE_H + 2 * PAD
    label_w = len(max(picture.rows, key=len)) * CHAR_W + 2 * PAD
    title_h = len(picture.title) * (LINE_H + 3) + PAD
    top = title_h + LINE_H + PAD  # the column numbers above the grid
    width = max(label_w + len(picture.cols) * cell_w,
                max(len(t) for t in picture.title) * CHAR_W) + 2 * PAD
    height = top + len(picture.rows) * cell_h + PAD
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="11">',
        "<style>rect{stroke:#808080;stroke-width:0.5}"
        " .c,.v{text-anchor:middle} .r{text-anchor:end}</style>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff" '
        'style="stroke:none"/>',
    ]
    for i, line in enumerate(picture.title):
        out.append(f'<text x="{PAD}" y="{PAD + (i + 1) * (LINE_H + 3) - 3}" '
                   f'font-weight="{"bold" if i == 0 else "normal"}">{escape(line)}</text>')
    x0 = PAD + label_w
    for j, col in enumerate(picture.cols):
        out.append(f'<text class="c" x="{x0 + j * cell_w + cell_w // 2}" '
                   f'y="{top - PAD}">{col}</text>')
    for i, row in enumerate(picture.rows):
        y = top + i * cell_h
        out.append(f'<text class="r" x="{x0 - PAD}" y="{y + cell_h // 2 + 4}">{row}</text>')
        for j in range(len(picture.cols)):
            x = x0 + j * cell_w
            r, g, b = picture.fill[i, j]
            out.append(f'<rect x="{x}" y="{y}" width="{cell_w}" height="{cell_h}" '
                       f'fill="#{r:02x}{g:02x}{b:02x}"/>')
            cell = picture.text[i][j]
            cx = x + cell_w // 2
            first = y + (cell_h - len(cell) * LINE_H) // 2 + LINE_H - 3
            rest = "".join(f'<tspan x="{cx}" dy="{LINE_H}">{escape(s)}</tspan>'
                           for s in cell[1:])
            out.append(f'<text class="v" x="{cx}" y="{first}">{escape(cell[0])}{rest}</text>')
    out.append("</svg>")
    return ("\n".join(out) + "\n").encode()
