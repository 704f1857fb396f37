"""tlc.layout.plot: draws a layout as an SVG or PNG picture, one cell per element.

A fragment's cell shows the thread (`T5`) and register (`r3`) that hold the
element, coloured by warp (or by thread); a shared buffer's cell shows the
bank (`b13`) the element lies in, coloured by bank, so that the elements one
access touches in the same bank (a bank conflict) share a colour. The format
follows the file's suffix: `.svg` (text, scalable) or `.png` (written with
zlib, no other dependency).

Large buffers are drawn through a window of at most 128 x 128 elements
(`rows=`, `cols=`); without one, the first 64 rows and columns are drawn and
the picture's title says which part it shows.
"""

from __future__ import annotations

import colorsys
import os
import tempfile
from dataclasses import dataclass

import numpy as np

from .buffers import FragmentLayout, SharedLayout
from .errors import LayoutError

FORMATS = (".svg", ".png")
DEFAULT_SPAN = 64  # rows or columns drawn when no window is given
MAX_SPAN = 128  # the most rows or columns one picture draws
COLORS = {"fragment": ("warp", "thread"), "shared": ("bank",)}


@dataclass
class Picture:
    """What the writers draw: a title, the window's row and column indices,
    each cell's lines of text and its fill colour (RGB, 0-255)."""

    title: list[str]
    rows: list[str]  # the labels of the window's rows and columns
    cols: list[str]
    text: list[list[tuple[str, ...]]]  # [row][col] -> lines
    fill: np.ndarray  # (rows, cols, 3) uint8


def plot(layout, path, *, buffer: str | None = None, rows=None, cols=None,
         color: str | None = None, stage: int | None = None) -> str:
    """Draws `layout` into `path` (`.svg` or `.png`) and returns the path.

    layout: a `FragmentLayout` or `SharedLayout` (from `kernel.layouts()`), a
        `Fragment` (T.Fragment), or a compiled kernel with `buffer=` naming
        one of its buffers.
    rows, cols: the window drawn: `n` (the first n), `(start, stop)` or
        `range(start, stop)`; at most 128 each. By default the first 64 rows
        and columns (the title says when that is not the whole buffer).
    color: "warp" (the default) or "thread" for a fragment; "bank" for a
        shared buffer.
    stage: for a shared buffer a pipelined loop multi-buffers, the stage
        drawn (default 0).

    An unsupported suffix, an unknown buffer or a bad window is a LayoutError;
    the file is written whole or not at all."""
    path = os.fspath(path)
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in FORMATS:
        raise LayoutError(f"cannot draw '{path}': plot writes {' or '.join(FORMATS)} files "
                          "(chosen by the suffix)")
    layout = _resolve(layout, buffer)
    picture = _picture(layout, rows, cols, color, stage)
    if suffix == ".svg":
        from .svg import svg_bytes

        data = svg_bytes(picture)
    else:
        from .png import png_bytes

        data = png_bytes(picture)
    _write_whole(path, data)
    return path


def plot_layout(layout, save_directory: str = "./tmp", name: str = "layout",
                colormap: str | None = None, verbose: bool = False,
                formats="png", *, buffer: str | None = None) -> list[str]:
    """TileLang's name and arguments: draws `layout` into
    `save_directory/name.<format>` for each of `formats` ("png", "svg", or a
    list of them) and returns the paths. `colormap` is one of tlc's colourings
    ("warp", "thread", "bank"; TileLang's matplotlib colour maps are not
    available); `verbose` prints each path written. See `plot`."""
    if isinstance(formats, str):
        formats = [f.strip() for f in formats.split(",")]
    formats = list(formats)
    if not formats:
        raise LayoutError("plot_layout: formats names no format ('png', 'svg' or both)")
    for f in formats:
        if f".{f}".lower() not in FORMATS:
            raise LayoutError(f"plot_layout writes the formats 'png' and 'svg', got {f!r}")
    if colormap is not None and colormap not in COLORS["fragment"] + COLORS["shared"]:
        raise LayoutError(f"colormap {colormap!r}: tlc colours cells by 'warp' or 'thread' "
                          "(fragments) or 'bank' (shared buffers); matplotlib colour maps "
                          "are not available")
    layout = _resolve(layout, buffer)
    os.makedirs(save_directory, exist_ok=True)
    written = []
    for f in formats:
        path = os.path.join(save_directory, f"{name}.{f.lower()}")
        written.append(plot(layout, path, color=colormap))
        if verbose:
            print(f"tlc.layout: wrote {path}")
    return written


def _resolve(layout, buffer):
    from .fragment import Fragment

    if isinstance(layout, Fragment):  # TileLang's T.Fragment, on the threads it names
        layout = layout.to_layout()
    if isinstance(layout, (FragmentLayout, SharedLayout)):
        if buffer is not None:
            raise LayoutError(f"buffer={buffer!r} names a buffer of a kernel; the first "
                              "argument is already a layout")
        return layout
    if hasattr(layout, "layouts") and hasattr(layout, "stages"):  # a tlc.JITKernel
        if buffer is None:
            names = ", ".join(layout.layouts()) or "none"
            raise LayoutError(f"to draw a buffer of kernel '{layout.name}', name it: "
                              f"buffer=... (its buffers: {names})")
        from .snapshot import kernel_layout

        return kernel_layout(layout, buffer)
    raise LayoutError(f"plot draws a FragmentLayout or SharedLayout (kernel.layouts()), a "
                      f"T.Fragment, or a compiled kernel with buffer=..., got "
                      f"{type(layout).__name__}")


def _window(spec, size: int, what: str) -> range:
    """The indices a `rows=` / `cols=` argument selects, checked."""
    if spec is None:
        return range(min(size, DEFAULT_SPAN))
    if isinstance(spec, bool):
        raise LayoutError(f"{what}= takes n, (start, stop) or range(start, stop), got {spec!r}")
    if isinstance(spec, (int, np.integer)):
        spec = (0, int(spec))
    if isinstance(spec, range):
        if spec.step != 1:
            raise LayoutError(f"{what}={spec!r}: the window is contiguous (step 1)")
        spec = (spec.start, spec.stop)
    if not (isinstance(spec, (tuple, list)) and len(spec) == 2 and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in spec)):
        raise LayoutError(f"{what}= takes n, (start, stop) or range(start, stop), got {spec!r}")
    start, stop = int(spec[0]), int(spec[1])
    if not 0 <= start < stop <= size:
        raise LayoutError(f"{what}=({start}, {stop}) is not a window of the buffer's {size} "
                          f"{what} (0 <= start < stop <= {size})")
    if stop - start > MAX_SPAN:
        raise LayoutError(f"{what}=({start}, {stop}) spans {stop - start} {what}; a picture "
                          f"shows at most {MAX_SPAN}: draw several windows")
    return range(start, stop)


def _picture(layout, rows, cols, color, stage) -> Picture:
    kind = layout.kind
    if color is None:
        color = COLORS[kind][0]
    if color not in COLORS[kind]:
        raise LayoutError(f"color={color!r}: a {kind} layout is coloured by "
                          f"{' or '.join(map(repr, COLORS[kind]))}")
    if layout.rank > 2:
        raise LayoutError(f"'{layout.name}' is {layout.rank}-D {layout.shape}; plot draws 1-D "
                          "and 2-D buffers")
    shape = layout.shape if layout.rank == 2 else (layout.shape[0], 1)  # 1-D: one column
    r_win = _window(rows, shape[0], "rows")
    if layout.rank == 1 and cols is not None:
        raise LayoutError(f"cols= applies to 2-D buffers; '{layout.name}' is 1-D (its "
                          "elements are drawn one per row: choose them with rows=)")
    c_win = _window(cols, shape[1], "cols")
    if kind == "fragment":
        if stage is not None:
            raise LayoutError("stage= applies to shared buffers; this is a fragment")
        values, header = _fragment_cells(layout, color)
    else:
        values, header = _shared_cells(layout, stage or 0)
    text_grid, fill_grid = values
    text_grid = text_grid.reshape(shape)
    fill_grid = fill_grid.reshape(shape + (3,))
    text = [[text_grid[r, c] for c in c_win] for r in r_win]
    fill = fill_grid[r_win.start:r_win.stop, c_win.start:c_win.stop]
    where = _where(layout, shape, r_win, c_win)
    col_labels = [str(c) for c in c_win] if layout.rank == 2 else [""]
    return Picture(header + [where], [str(r) for r in r_win], col_labels, text, fill)


def _where(layout, shape, r_win, c_win) -> str:
    if layout.rank == 1:
        return f"elements {r_win.start}-{r_win.stop - 1} of {shape[0]} (one per row)"
    whole = len(r_win) == shape[0] and len(c_win) == shape[1]
    where = (f"rows {r_win.start}-{r_win.stop - 1} of {shape[0]}, "
             f"cols {c_win.start}-{c_win.stop - 1} of {shape[1]}")
    return where + ("" if whole else " (rows=/cols= choose the window)")


def _dims(shape) -> str:
    return "x".join(map(str, shape))


def _fragment_cells(layout: FragmentLayout, color: str):
    threads, regs = layout.owner_grids()
    threads, regs = threads.ravel(), regs.ravel()
    text = np.empty(threads.size, dtype=object)
    text[:] = [(f"T{t}", f"r{r}") for t, r in zip(threads.tolist(), regs.tolist())]
    key = threads // 32 if color == "warp" else threads
    fill = _palette(key)
    header = [f"{layout.name}: fragment {_dims(layout.shape)} {layout.dtype}, "
              f"{layout.threads} threads x {layout.regs} registers",
              f"cell: thread T and register r holding the element; colour: {color}"]
    if layout.replication > 1:
        header.append(f"each element is held by {layout.replication} (thread, register) "
                      "pairs: the lowest thread is shown")
    return (text, fill), header


def _shared_cells(layout: SharedLayout, stage: int):
    banks = layout.banks(stage).ravel()
    text = np.empty(banks.size, dtype=object)
    text[:] = [(f"b{b}",) for b in banks.tolist()]
    fill = _palette(banks)
    swizzle = "no swizzle" if not layout.swizzle else \
        "swizzle bits={} base={} shift={}".format(*layout.swizzle)
    stages = f", stage {stage} of {layout.stages}" if layout.stages > 1 else ""
    block = f", column blocks of {layout.column_block}" if layout.column_block else ""
    header = [f"{layout.name}: shared {_dims(layout.shape)} {layout.dtype}, {swizzle}{block}, "
              f"offset {layout.offset}{stages}",
              "cell: bank b = (byte address / 4) mod 32; colour: bank (one access touching "
              "one colour twice in different words is a bank conflict)"]
    return (text, fill), header


def _palette(keys: np.ndarray) -> np.ndarray:
    """Light colours for integer keys (warps, threads, banks): consecutive keys
    get distant hues (golden-ratio steps) and alternate in lightness."""
    unique, inverse = np.unique(keys, return_inverse=True)
    table = np.empty((unique.size, 3), dtype=np.uint8)
    for i, k in enumerate(unique.tolist()):
        hue = (k * 0.618033988749895) % 1.0
        r, g, b = colorsys.hls_to_rgb(hue, 0.80 if k % 2 == 0 else 0.70, 0.65)
        table[i] = (round(r * 255), round(g * 255), round(b * 255))
    return table[inverse.ravel()]


def _write_whole(path: str, data: bytes) -> None:
    """Writes `data` to `path` through a temporary file in the same folder, so
    that a failure leaves no partial file."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise LayoutError(f"cannot write '{path}': the folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=".tlc-plot-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        umask = os.umask(0o022)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as a plain open() would create it
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
