"""tlc.layout.plot (TileLang's plot_layout): well-formed SVG and PNG files that
show the thread and register (fragments) or the bank (shared buffers) of each
element; windows of large buffers; errors that leave no file behind."""

import os
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib

import pytest

import tlc
from tlc.layout import FragmentLayout, LayoutError, SharedLayout, plot, plot_layout

MMA_M16N8 = "(d0, d1) -> (d0 floordiv 4 + (d1 floordiv 2) * 8, (d0 mod 4) * 2 + d1 mod 2)"
SVG = "{http://www.w3.org/2000/svg}"


def _accumulator():
    return FragmentLayout((16, 8), threads=32, regs=4, map=MMA_M16N8, name="acc")


def _svg_cells(path):
    """The cells' rectangles and texts (row by row) and the root of an SVG plot."""
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    rects = [r for r in root.iter(f"{SVG}rect") if r.get("x") != "0"]
    texts = [t for t in root.iter(f"{SVG}text") if t.get("class") == "v"]
    return rects, texts, root


def _png_chunks(data: bytes):
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF, kind
        chunks.append((kind, body))
        pos += 12 + length
    return chunks


def test_svg_of_a_fragment(tmp_path):
    path = plot(_accumulator(), tmp_path / "acc.svg")
    assert path == str(tmp_path / "acc.svg")
    rects, texts, root = _svg_cells(path)
    assert len(rects) == 16 * 8
    cells = [[t.text] + [s.text for s in t] for t in texts]
    assert cells[0] == ["T0", "r0"] and cells[1] == ["T0", "r1"]
    assert cells[8 * 8] == ["T0", "r2"]  # row 8, column 0
    assert cells[9 * 8 + 3] == ["T5", "r3"]
    # One warp: one colour.
    assert {r.get("fill") for r in rects} == {rects[0].get("fill")}
    title = " ".join(t.text for t in root.iter(f"{SVG}text") if t.get("class") is None)
    assert "acc: fragment 16x8 float32, 32 threads x 4 registers" in title


def test_svg_colours_by_thread(tmp_path):
    rects, _, _ = _svg_cells(plot(_accumulator(), tmp_path / "acc.svg", color="thread"))
    assert len({r.get("fill") for r in rects}) == 32


def test_png_of_a_shared_buffer_is_well_formed(tmp_path):
    s = SharedLayout((64, 64), "float16", name="tile")
    path = plot(s, tmp_path / "tile.png", rows=8, cols=(0, 16))
    chunks = _png_chunks(open(path, "rb").read())
    kinds = [k for k, _ in chunks]
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND" and b"IDAT" in kinds
    width, height, depth, colour_type = struct.unpack(">IIBB", chunks[0][1][:10])
    assert depth == 8 and colour_type == 3
    palette = dict(chunks)[b"PLTE"]
    # White, grey, black and one colour per bank of the window (columns 0-15: banks 0-7).
    assert len(palette) == 3 * (3 + 8)
    raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    assert len(raw) == height * (width + 1)
    rows = [raw[i * (width + 1):(i + 1) * (width + 1)] for i in range(height)]
    assert all(r[0] == 0 for r in rows)  # filter type 0 on every line
    assert {b for r in rows for b in r[1:]} == set(range(3 + 8))


def test_png_of_a_fragment_window(tmp_path):
    path = plot(_accumulator(), tmp_path / "acc.png", rows=(8, 16), cols=range(2, 6))
    chunks = _png_chunks(open(path, "rb").read())
    width, height = struct.unpack(">II", chunks[0][1][:8])
    small = _png_chunks(open(plot(_accumulator(), tmp_path / "one.png", rows=1, cols=1),
                             "rb").read())
    w1, h1 = struct.unpack(">II", small[0][1][:8])
    assert height > h1 and width >= w1


def test_banks_show_the_conflict_and_the_swizzle(tmp_path):
    """A column of a 128-byte-row tile: one bank unswizzled, eight swizzled."""
    def first_column(layout):
        _, texts, _ = _svg_cells(plot(layout, tmp_path / "s.svg", rows=8, cols=1))
        return [t.text for t in texts]

    assert first_column(SharedLayout((64, 64), "float16")) == ["b0"] * 8
    assert first_column(SharedLayout((64, 64), "float16", swizzle=(3, 4, 3))) == \
        ["b0", "b4", "b8", "b12", "b16", "b20", "b24", "b28"]


def test_large_tiles_default_to_a_window(tmp_path):
    big = FragmentLayout((128, 256), 128, 256,
                         "(d0, d1) -> (d1 floordiv 2, (d1 mod 2) * 128 + d0)")
    path = plot(big, tmp_path / "big.svg")
    rects, _, root = _svg_cells(path)
    assert len(rects) == 64 * 64
    title = " ".join(t.text for t in root.iter(f"{SVG}text") if t.get("class") is None)
    assert "rows 0-63 of 128, cols 0-63 of 256 (rows=/cols= choose the window)" in title
    assert os.path.getsize(path) < 1_000_000
    png = plot(big, tmp_path / "big.png", rows=(64, 128), cols=(128, 256))
    assert os.path.getsize(png) < 400_000


def test_one_dimensional_buffers_are_drawn_one_element_per_row(tmp_path):
    v = FragmentLayout((16,), 64, 1, "(d0, d1) -> (d0 floordiv 4 + d1)", name="m")
    rects, texts, root = _svg_cells(plot(v, tmp_path / "m.svg"))
    assert len(rects) == 16 and texts[3].text == "T12"
    title = " ".join(t.text for t in root.iter(f"{SVG}text") if t.get("class") is None)
    assert "held by 4 (thread, register) pairs" in title
    with pytest.raises(LayoutError, match="cols= applies to 2-D buffers"):
        plot(v, tmp_path / "m.svg", cols=1)


def test_a_kernel_and_a_buffer_name(tmp_path):
    import test_layouts

    kernel = tlc.compile(test_layouts._gemm(), target="sm_80")
    path = plot(kernel, tmp_path / "c.svg", buffer="C_local", rows=16, cols=16)
    _, texts, _ = _svg_cells(path)
    assert [texts[0].text, texts[0][0].text] == ["T0", "r0"]
    with pytest.raises(LayoutError, match="its buffers: A_shared, B_shared, C_local"):
        plot(kernel, tmp_path / "x.svg")
    with pytest.raises(LayoutError, match="no fragment or shared buffer named 'D'"):
        plot(kernel, tmp_path / "x.svg", buffer="D")
    assert not (tmp_path / "x.svg").exists()


def test_plot_layout_with_tilelangs_arguments(tmp_path, capsys):
    written = plot_layout(_accumulator(), save_directory=str(tmp_path / "out"), name="acc",
                          formats=["png", "svg"], verbose=True)
    assert written == [str(tmp_path / "out" / "acc.png"), str(tmp_path / "out" / "acc.svg")]
    assert all(os.path.getsize(p) > 0 for p in written)
    assert "wrote" in capsys.readouterr().out
    with pytest.raises(LayoutError, match="formats 'png' and 'svg', got 'pdf'"):
        plot_layout(_accumulator(), save_directory=str(tmp_path), formats="pdf")
    with pytest.raises(LayoutError, match="names no format"):
        plot_layout(_accumulator(), save_directory=str(tmp_path), formats=[])
    with pytest.raises(LayoutError, match="matplotlib colour maps"):
        plot_layout(_accumulator(), save_directory=str(tmp_path), colormap="RdPu")


@pytest.mark.parametrize("kwargs,message", [
    ({"rows": (0, 200)}, r"rows=\(0, 200\) is not a window"),
    ({"rows": (4, 4)}, "is not a window"),
    ({"rows": "all"}, "rows= takes n, \\(start, stop\\) or range"),
    ({"cols": range(0, 8, 2)}, "contiguous"),
    ({"color": "bank"}, "coloured by 'warp' or 'thread'"),
    ({"stage": 1}, "stage= applies to shared buffers"),
    ({"buffer": "C_local"}, "already a layout"),
])
def test_bad_arguments_are_errors_and_write_nothing(tmp_path, kwargs, message):
    with pytest.raises(LayoutError, match=message):
        plot(_accumulator(), tmp_path / "acc.svg", **kwargs)
    assert os.listdir(tmp_path) == []


def test_window_span_is_limited(tmp_path):
    wide = FragmentLayout((1, 256), 256, 1, "(d0, d1) -> (d1, d0)")
    with pytest.raises(LayoutError, match="spans 200 cols; a picture shows at most 128"):
        plot(wide, tmp_path / "w.png", cols=200)


def test_unsupported_suffix_and_missing_folder(tmp_path):
    with pytest.raises(LayoutError, match=r"writes \.svg or \.png files"):
        plot(_accumulator(), tmp_path / "acc.pdf")
    with pytest.raises(LayoutError, match="does not exist"):
        plot(_accumulator(), tmp_path / "no" / "acc.png")
    with pytest.raises(LayoutError, match="draws a FragmentLayout or SharedLayout"):
        plot("C_local", tmp_path / "acc.png")
    assert os.listdir(tmp_path) == []


def test_a_failed_write_leaves_no_file(tmp_path, monkeypatch):
    import tlc.layout.svg

    def broken(picture):
        raise MemoryError("out of memory")

    monkeypatch.setattr(tlc.layout.svg, "svg_bytes", broken)
    with pytest.raises(MemoryError):
        plot(_accumulator(), tmp_path / "acc.svg")
    monkeypatch.undo()

    def failing_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        plot(_accumulator(), tmp_path / "acc.png")
    assert os.listdir(tmp_path) == []


def test_example_draws_the_gemm_layouts(repo, tmp_path):
    r = subprocess.run([sys.executable, str(repo / "examples" / "plot_layout.py"),
                        "--out", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "thread 0 holds [(0, 0), (0, 1), (8, 0), (8, 1)]" in r.stdout
    assert "(unswizzled: [0, 0, 0, 0, 0, 0, 0, 0])" in r.stdout
    assert sorted(os.listdir(tmp_path)) == ["A_plain.png", "A_shared.png", "C_local.svg"]
    ET.parse(tmp_path / "C_local.svg")
    assert (tmp_path / "A_shared.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
