"""T.Persistent: each block walks tiles index, index + wave_size, ... of a domain.

Programs compile for sm_90a and sm_80; in the interpreter every tile is
done exactly once, by the block the documented order gives it, and a
persistent GEMM matches numpy. Lines that must fail end with `# E:<name>`.
"""

from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T
from tlc.compiler import pipeline
from tlc.frontend.codegen import build_module
from marked_lines import assert_error_at
import marked_lines

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()


def persistent_gemm(M, N, K, bm=64, bn=64, bk=64, blocks=3, group=8):
    @T.prim_func
    def pgemm(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
              C: T.Tensor((M, N), "float32")):
        with T.Kernel(blocks, threads=128) as b:
            a_s = T.alloc_shared((bm, bk), "float16")
            b_s = T.alloc_shared((bk, bn), "float16")
            acc = T.alloc_fragment((bm, bn), "float32")
            for by, bx in T.Persistent([T.ceildiv(M, bm), T.ceildiv(N, bn)], blocks, b, group):
                T.clear(acc)
                for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                    T.copy(A[by * bm, k * bk], a_s)
                    T.copy(B[k * bk, bx * bn], b_s)
                    T.gemm(a_s, b_s, acc)
                T.copy(acc, C[by * bm, bx * bn])

    return pgemm


def owners(rows, cols, blocks, group):
    """Which block does each tile, and how often tiles are done."""

    @T.prim_func
    def tile_owners(Owner: T.Tensor((rows, cols), "int32"), Count: T.Tensor((rows, cols), "int32")):
        with T.Kernel(blocks, threads=32) as b:
            for i, j in T.Persistent([rows, cols], blocks, b, group_size=group):
                for _ in T.Parallel(1):
                    Owner[i, j] = b
                    T.atomic_add(Count[i, j], 1)

    return tile_owners


def expected_owners(rows, cols, blocks, group):
    """The order of T.Persistent written out (TileLang's): the last dimension
    cut into groups of the (clamped) group size, padded, the group index
    outermost, so consecutive tiles walk a band of columns down the rows."""
    group = max(1, min(group, cols))
    groups = -(-cols // group)
    padded = rows * groups * group
    out = np.full((rows, cols), -1)
    for b in range(blocks):
        for w in range(-(-padded // blocks)):
            linear = w * blocks + b
            if linear >= padded:
                continue
            # TileLang's order: the group outermost, then the rows, then the offset
            offset, rest = linear % group, linear // group
            i, g = rest % rows, rest // rows
            j = g * group + offset
            if j < cols:
                out[i, j] = b
    return out


@T.prim_func
def run_time_domain(X: T.Tensor((T.symbolic("n"),), "float32"), Y: T.Tensor((T.symbolic("n"),),
                                                                             "float32")):
    """A 1-D run-time domain, 4 blocks, 32-element tiles."""
    with T.Kernel(4, threads=32) as b:
        for t in T.Persistent(T.ceildiv(X.shape[0], 32), 4, b):
            for i in T.Parallel(32):
                Y[t * 32 + i] = X[t * 32 + i] + 1.0


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_compiles(arch):
    for prim in (persistent_gemm(192, 320, 128), owners(5, 7, 3, 2), run_time_domain):
        ptx = pipeline.compile_module(build_module(prim), arch).ptx[prim.name]
        assert f".target {arch}" in ptx
    gemm_ptx = pipeline.compile_module(build_module(persistent_gemm(192, 320, 128)), arch)
    assert ("wgmma" in gemm_ptx.ptx["pgemm"]) == (arch == "sm_90a")


@pytest.mark.parametrize("rows,cols,blocks,group", [
    (5, 7, 3, 2), (4, 8, 4, 8), (3, 5, 2, 1), (2, 3, 7, 8), (1, 10, 3, 4),
])
def test_every_tile_once_in_order(rows, cols, blocks, group):
    owner = np.full((rows, cols), -1, np.int32)
    count = np.zeros((rows, cols), np.int32)
    tlc.interpret(owners(rows, cols, blocks, group), owner, count)
    assert (count == 1).all(), count
    np.testing.assert_array_equal(owner, expected_owners(rows, cols, blocks, group))


@pytest.mark.parametrize("M,N,group,blocks", [(192, 320, 8, 3), (192, 320, 3, 4),
                                              (128, 64, 1, 5)])
def test_persistent_gemm(M, N, group, blocks):
    rng = np.random.default_rng(M + N + group)
    a = rng.standard_normal((M, 128)).astype(np.float16)
    b = rng.standard_normal((128, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float32)
    tlc.interpret(persistent_gemm(M, N, 128, group=group, blocks=blocks), a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-4,
                               atol=1e-3)


@pytest.mark.parametrize("n", [32, 100, 300])
def test_run_time_domain(n):
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, np.nan, np.float32)
    tlc.interpret(run_time_domain, x, y)
    np.testing.assert_array_equal(y, x + 1)


# -- mistakes ----------------------------------------------------------------------------


@T.prim_func
def run_time_group(A: T.Tensor((64,), "float32"), g: T.int32):
    with T.Kernel(2) as b:
        for t in T.Persistent([4], 2, b, g):  # E:group
            pass


@T.prim_func
def wrong_names(A: T.Tensor((64,), "float32")):
    with T.Kernel(2) as b:
        for t in T.Persistent([4, 4], 2, b):  # E:names
            pass


@T.prim_func
def in_parallel(A: T.Tensor((64,), "float32")):
    with T.Kernel(2) as b:
        for i in T.Parallel(4):
            for t in T.Persistent([4], 2, b):  # E:parallel
                pass


@T.prim_func
def zero_extent(A: T.Tensor((64,), "float32")):
    with T.Kernel(2) as b:
        for t in T.Persistent([0], 2, b):  # E:zero
            pass


@T.prim_func
def float_wave(A: T.Tensor((64,), "float32")):
    with T.Kernel(2) as b:
        for t in T.Persistent([4], 2.5, b):  # E:wave
            pass


def line_of(marker: str) -> int:
    return marked_lines.line_of(LINES, marker)


@pytest.mark.parametrize("prim,marker,at,message", [
    (run_time_group, "group", "g)", "group_size must be a positive compile-time integer"),
    (wrong_names, "names", "t in", "gives 2 coordinate(s), to 2 name(s)"),
    (in_parallel, "parallel", "T.Persistent", "T.Persistent cannot be inside T.Parallel"),
    (zero_extent, "zero", "[0]", "a T.Persistent domain extent must be positive, got 0"),
    (float_wave, "wave", "2.5", "T.Persistent's wave_size must be an integer"),
], ids=lambda v: v if isinstance(v, str) and len(v) < 16 and " " not in v else None)
def test_errors_point_at_the_line(prim, marker, at, message):
    with pytest.raises(tlc.CompilationError) as info:
        prim.build_module()
    assert_error_at(info.value, THIS, LINES, marker, at, message)
