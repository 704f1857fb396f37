"""T.c2d_im2col / T.im2col: a tile of the im2col matrix of an NHWC image, the
A operand of a convolution computed as an implicit GEMM.

The frontend writes it as a tile.parallel whose iterations read the image at
computed (n, h, w, c) and store into the destination; nothing new reaches
the compiler. Row m of the matrix is the output pixel (n, oh, ow), column k
the reduction index (kh, kw, c), c fastest. When C and the tile's width are
multiples of a vector of up to 16 bytes, an iteration moves one such vector
of channels: they share (n, h, w), so one bounds check covers them and the
read is one vector load (ld.global.v4 for 8 fp16), the pixel indices clamped
to the tensor so the load never leaves it and the value zeroed outside, and
the write into a shared tile one vector store (st.shared.v4); else
(and into a fragment, whose accesses must be the loop's own elements) one
element per iteration. Index arithmetic is in i32.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from .. import ir
from ..dialects import arith, memref, tile, vector
from ..language import memory
from . import dtypes
from .intrinsic_args import bind_args
from .values import BufferRef, index_value

_UNSUPPORTED = {
    "eviction_policy": "cache eviction hints",
    "annotations": "TileLang's lowering annotations",
}

VECTOR_BYTES = 16


def _buffer(gen, node, name: str, what: str) -> BufferRef:
    value = gen.eval(node)
    if not isinstance(value, BufferRef):
        raise gen.error(node, f"{name}'s {what} must be a buffer, got {gen.describe(value)}")
    return value


def _pair(gen, node, name: str, what: str, minimum: int) -> tuple[int, int]:
    """A compile-time int or (h, w) pair of them, each at least `minimum`."""
    value = gen.eval(node)
    pair = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    if len(pair) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in pair):
        raise gen.error(node, f"{name}'s {what} must be a compile-time int or an (h, w) pair of "
                              f"ints, got {gen.describe(value)}")
    for v in pair:
        if v < minimum:
            raise gen.error(node, f"{name}'s {what} must be at least {minimum}, got {v}")
    return pair


def _vector_width(dt: str, channels: int, width: int) -> int:
    """Channels one iteration moves: the largest power of two up to 16 bytes
    that divides both C and the tile's width (so no vector straddles two
    pixels or the tile's edge)."""
    v = max(1, VECTOR_BYTES // max(1, dtypes.bits(dt) // 8))
    while v > 1 and (channels % v or width % v):
        v //= 2
    return v


def call_c2d_im2col(gen, node):
    _im2col(gen, node, memory.c2d_im2col, "T.c2d_im2col")


def call_im2col(gen, node):
    _im2col(gen, node, memory.im2col, "T.im2col")


def _im2col(gen, node, fn, name: str) -> None:
    gen.require_kernel(node, name)
    if gen.parallel_depth:
        raise gen.error(node, f"{name} cannot be inside T.Parallel (it is work of the whole "
                              "block)")
    a = bind_args(gen, node, fn, _UNSUPPORTED)
    img = _buffer(gen, a["img"], name, "img")
    col = _buffer(gen, a["col"], name, "col")
    if img.place != "global" or img.rank != 4:
        raise gen.error(a["img"], f"{name} reads an N x H x W x C global tensor (NHWC); "
                                  f"'{img.name}' is a {img.rank}-d {img.place} buffer")
    N, H, W, C = img.shape
    for what, size in (("H", H), ("W", W), ("C", C)):
        if not isinstance(size, int):
            raise gen.error(a["img"], f"{name} needs the image's {what} at compile time; "
                                      f"'{img.name}' has a dynamic {what} (only N may be "
                                      "T.dynamic)")
    if col.place not in ("shared", "fragment") or col.rank != 2:
        raise gen.error(a["col"], f"{name} writes a block_M x block_K shared buffer or "
                                  f"fragment; '{col.name}' is a {col.rank}-d {col.place} buffer")
    if col.dtype != img.dtype:
        raise gen.error(a["col"], f"{name}: '{col.name}' is {col.dtype} but the image "
                                  f"'{img.name}' is {img.dtype}; they must agree (T.copy the "
                                  "tile to convert it)")
    steps = [gen.check_index(gen.eval(a[k]), a[k], f"{name}'s {k}")
             for k in ("nhw_step", "c_step")]
    KH, KW = _pair(gen, a["kernel"], name, "kernel", 1)
    SH, SW = _pair(gen, a["stride"], name, "stride", 1)
    DH, DW = _pair(gen, a["dilation"], name, "dilation", 1)
    PH, PW = _pair(gen, a["pad"], name, "pad", 0)
    OH = (H + 2 * PH - DH * (KH - 1) - 1) // SH + 1
    OW = (W + 2 * PW - DW * (KW - 1) - 1) // SW + 1
    if OH < 1 or OW < 1:
        raise gen.error(node, f"{name}: a {KH}x{KW} kernel with dilation ({DH}, {DW}) does "
                              f"not fit the {H}x{W} image padded by ({PH}, {PW}): the output "
                              f"would be {OH}x{OW}")
    BM, BK = col.shape
    limit = 2**31 - 1
    if (isinstance(N, int) and N * OH * OW + BM > limit) or KH * KW * C + BK > limit:
        raise gen.error(node, f"{name}: the im2col matrix is too large for 32-bit indices")
    V = 1 if col.place == "fragment" else _vector_width(img.dtype, C, BK)
    _build(img, col, steps, _Conv(N, H, W, C, KH, KW, SH, SW, DH, DW, PH, PW, OH, OW), V)


class _Conv(NamedTuple):
    """The image's sizes (N may be a run-time Affine) and the convolution's."""

    N: object
    H: int
    W: int
    C: int
    KH: int
    KW: int
    SH: int
    SW: int
    DH: int
    DW: int
    PH: int
    PW: int
    OH: int
    OW: int


def _build(img: BufferRef, col: BufferRef, steps, g: _Conv, V: int) -> None:
    """tile.parallel over (block_M, block_K / V): iteration (i, q) moves the V
    channels of column block q of row i."""
    index = ir.IndexType.get()
    i32 = ir.IntegerType.get_signless(32)

    def cst(v):
        return arith.constant(i32, v)

    def to_i32(x):
        return arith.index_cast(i32, index_value(x))

    BM, BK = col.shape
    m0 = arith.muli(to_i32(steps[0]), cst(BM))  # first row (output pixel) of the tile
    q0 = arith.muli(to_i32(steps[1]), cst(BK // V))  # first column block of the tile
    batch = cst(g.N) if isinstance(g.N, int) else to_i32(g.N)
    elem = dtypes.storage_type(img.dtype)
    vt = ir.VectorType.get([V], elem)
    zero = arith.constant(elem, 0.0 if dtypes.is_float(img.dtype) else 0)
    ult = arith.CmpIPredicate.ult
    loop = tile.ParallelOp([BM, BK // V])
    body = loop.body.blocks.append(index, index)
    with ir.InsertionPoint(body):
        i, q = body.arguments
        m = arith.addi(m0, arith.index_cast(i32, i))
        pixels = g.OH * g.OW
        n = arith.divui(m, cst(pixels))
        rest = arith.remui(m, cst(pixels))
        oh, ow = arith.divui(rest, cst(g.OW)), arith.remui(rest, cst(g.OW))
        kq = arith.addi(q0, arith.index_cast(i32, q))  # the column block, V channels each
        blocks = g.C // V
        c = arith.muli(arith.remui(kq, cst(blocks)), cst(V))
        tap = arith.divui(kq, cst(blocks))  # kh * KW + kw
        kh, kw = arith.divui(tap, cst(g.KW)), arith.remui(tap, cst(g.KW))
        h = arith.addi(arith.muli(oh, cst(g.SH)), arith.subi(arith.muli(kh, cst(g.DH)),
                                                             cst(g.PH)))
        w = arith.addi(arith.muli(ow, cst(g.SW)), arith.subi(arith.muli(kw, cst(g.DW)),
                                                             cst(g.PW)))
        # Unsigned compares also refuse the negative rows and columns of the
        # padding; n < N the rows past the last pixel, kh < KH the columns past
        # the last tap.
        inside = arith.andi(
            arith.andi(arith.cmpi(ult, n, batch), arith.cmpi(ult, kh, cst(g.KH))),
            arith.andi(arith.cmpi(ult, h, cst(g.H)), arith.cmpi(ult, w, cst(g.W))))
        at = [arith.index_cast(index, arith.select(inside, x, cst(0))) for x in (n, h, w)]
        loaded = vector.load(vt, img.value, at + [arith.index_cast(index, c)],
                             alignment=math.gcd(V * max(1, dtypes.bits(img.dtype) // 8), 16))
        xs = [arith.select(inside, vector.extract(loaded, [], [e]), zero) for e in range(V)]
        if V == 1:
            memref.store(xs[0], col.value, [i, q])
        else:
            # One vector store of the run: a shared tile's swizzle and column
            # blocks move 16-byte-aligned runs whole (the lowering checks it).
            j = arith.muli(q, arith.constant(index, V))
            vector.store(vector.from_elements(vt, xs), col.value, [i, j],
                         alignment=V * max(1, dtypes.bits(img.dtype) // 8))
