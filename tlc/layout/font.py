"""A 3x5 pixel font for the PNG pictures: digits, capitals and some punctuation.

Lower-case letters are drawn as capitals (except an `x` between digits, drawn
small, as in "128x64"); a character without a glyph is drawn as a hollow box.
"""

from __future__ import annotations

import numpy as np

WIDTH, HEIGHT = 3, 5

_GLYPHS = {
    "0": ("###", "#.#", "#.#", "#.#", "###"),
    "1": (".#.", "##.", ".#.", ".#.", "###"),
    "2": ("###", "..#", "###", "#..", "###"),
    "3": ("###", "..#", ".##", "..#", "###"),
    "4": ("#.#", "#.#", "###", "..#", "..#"),
    "5": ("###", "#..", "###", "..#", "###"),
    "6": ("###", "#..", "###", "#.#", "###"),
    "7": ("###", "..#", "..#", ".#.", ".#."),
    "8": ("###", "#.#", "###", "#.#", "###"),
    "9": ("###", "#.#", "###", "..#", "###"),
    "A": (".#.", "#.#", "###", "#.#", "#.#"),
    "B": ("##.", "#.#", "##.", "#.#", "##."),
    "C": (".##", "#..", "#..", "#..", ".##"),
    "D": ("##.", "#.#", "#.#", "#.#", "##."),
    "E": ("###", "#..", "##.", "#..", "###"),
    "F": ("###", "#..", "##.", "#..", "#.."),
    "G": (".##", "#..", "#.#", "#.#", ".##"),
    "H": ("#.#", "#.#", "###", "#.#", "#.#"),
    "I": ("###", ".#.", ".#.", ".#.", "###"),
    "J": ("..#", "..#", "..#", "#.#", ".#."),
    "K": ("#.#", "#.#", "##.", "#.#", "#.#"),
    "L": ("#..", "#..", "#..", "#..", "###"),
    "M": ("#.#", "###", "###", "#.#", "#.#"),
    "N": ("##.", "#.#", "#.#", "#.#", "#.#"),
    "O": (".#.", "#.#", "#.#", "#.#", ".#."),
    "P": ("##.", "#.#", "##.", "#..", "#.."),
    "Q": (".#.", "#.#", "#.#", "##.", ".##"),
    "R": ("##.", "#.#", "##.", "#.#", "#.#"),
    "S": (".##", "#..", ".#.", "..#", "##."),
    "T": ("###", ".#.", ".#.", ".#.", ".#."),
    "U": ("#.#", "#.#", "#.#", "#.#", "###"),
    "V": ("#.#", "#.#", "#.#", "#.#", ".#."),
    "W": ("#.#", "#.#", "###", "###", "#.#"),
    "X": ("#.#", "#.#", ".#.", "#.#", "#.#"),
    "Y": ("#.#", "#.#", ".#.", ".#.", ".#."),
    "Z": ("###", "..#", ".#.", "#..", "###"),
    "x": ("...", "#.#", ".#.", "#.#", "..."),  # the small x of "128x64"
    " ": ("...", "...", "...", "...", "..."),
    "-": ("...", "...", "###", "...", "..."),
    "_": ("...", "...", "...", "...", "###"),
    "+": ("...", ".#.", "###", ".#.", "..."),
    "=": ("...", "###", "...", "###", "..."),
    ":": ("...", ".#.", "...", ".#.", "..."),
    ";": ("...", ".#.", "...", ".#.", "#.."),
    ",": ("...", "...", "...", ".#.", "#.."),
    ".": ("...", "...", "...", "...", ".#."),
    "(": ("..#", ".#.", ".#.", ".#.", "..#"),
    ")": ("#..", ".#.", ".#.", ".#.", "#.."),
    "/": ("..#", "..#", ".#.", "#..", "#.."),
    "#": ("#.#", "###", "#.#", "###", "#.#"),
    "%": ("#.#", "..#", ".#.", "#..", "#.#"),
    "'": (".#.", ".#.", "...", "...", "..."),
    "*": ("...", "#.#", ".#.", "#.#", "..."),
}
_BOX = ("###", "#.#", "#.#", "#.#", "###")


def glyph(ch: str, small: bool = False) -> np.ndarray:
    """The 5x3 boolean bitmap of a character (`small`: the small `x`)."""
    rows = (_GLYPHS["x"] if small and ch == "x" else None) or _GLYPHS.get(ch.upper()) or _BOX
    return np.array([[c == "#" for c in row] for row in rows], dtype=bool)


_CACHE: dict[tuple[str, int], np.ndarray] = {}


def text_bitmap(text: str, scale: int) -> np.ndarray:
    """A boolean bitmap of `text`, each font pixel `scale` x `scale`, one
    blank column between characters."""
    bitmap = _CACHE.get((text, scale))
    if bitmap is None:
        cols = []
        for i, ch in enumerate(text):
            times = 0 < i < len(text) - 1 and text[i - 1].isdigit() and text[i + 1].isdigit()
            cols.append(glyph(ch, small=times))  # "128x64"
            cols.append(np.zeros((HEIGHT, 1), dtype=bool))
        bitmap = np.hstack(cols[:-1]) if cols else np.zeros((HEIGHT, 0), dtype=bool)
        bitmap = np.kron(bitmap, np.ones((scale, scale), dtype=bool)).astype(bool)
        if len(_CACHE) < 4096:
            _CACHE[(text, scale)] = bitmap
    return bitmap


def text_width(text: str, scale: int) -> int:
    return max(0, len(text) * (WIDTH + 1) - 1) * scale
