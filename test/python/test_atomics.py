"""T.atomic_add's tile form, return_prev and memory_order; T.atomic_max and
T.atomic_min: compiled (PTX, ptxas where it is installed) and interpreted."""

import re

import numpy as np
import pytest

import tlc
import tlc.language as T
from bad_programs import assert_line_error
from ptxas import assemble
from test_compile import ptxas_ok

# The parameters of the error tests' programs.
PARAMS = ("C: T.Tensor((64,), 'float32'), H: T.Tensor((64,), 'float16'), "
          "g: T.Tensor((8,), 'float32')")


def _splitk_tiles(split=3, n=64):
    """Each of `split` blocks adds its own multiple of A's tile into C: C += sum_s (s + 1) * A
    through a fragment (an origin: the extent is the fragment's) and through a shared tile
    (slices)."""

    @T.prim_func
    def tiles(A: T.Tensor((n, n), "float32"), C: T.Tensor((n, n), "float32"),
              D: T.Tensor((2, n, n), "float32")):
        with T.Kernel(split, threads=128) as bz:
            acc = T.alloc_fragment((n, n), "float32")
            s = T.alloc_shared((n, n), "float32")
            T.copy(A, acc)
            for i, j in T.Parallel(n, n):
                acc[i, j] = acc[i, j] * (bz + 1)
            T.atomic_add(C[0, 0], acc)
            T.copy(acc, s)
            T.atomic_add(D[1, 0:n, :], s, memory_order="release")
            T.atomic_add(D[0, 0:4, :], 1.0)

    return tiles


def test_tile_atomic_add_interpreted_and_compiled(tmp_path):
    prim = _splitk_tiles()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 64)).astype(np.float32)
    c = np.ones((64, 64), np.float32)
    d = np.zeros((2, 64, 64), np.float32)
    tlc.interpret(prim, a, c, d)
    np.testing.assert_allclose(c, 1 + 6 * a, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(d[1], 6 * a, rtol=1e-5, atol=1e-5)
    assert (d[0, :4] == 3).all() and (d[0, 4:] == 0).all()
    for target in ("sm_90a", "sm_80"):
        ptx = tlc.compile(prim, target=target).get_kernel_source()
        assert re.search(r"(atom|red)\.global\.add(\.v[24])?\.f32", ptx)
        assert "membar.gl" in ptx
        ptxas_ok(ptx, tmp_path)


@T.prim_func
def compact(X: T.Tensor((256,), "int32"), Count: T.Tensor((1,), "int32"),
            Out: T.Tensor((256,), "int32")):
    with T.Kernel(2, threads=128) as b:
        for i in T.Parallel(128):
            if X[b * 128 + i] % 3 == 0:
                pos = T.atomic_add(Count[0], 1, return_prev=True)
                Out[pos] = X[b * 128 + i]


def test_return_prev_gives_each_adder_its_own_slot(tmp_path):
    x = np.arange(256, dtype=np.int32)
    count = np.zeros(1, np.int32)
    out = np.full(256, -1, np.int32)
    tlc.interpret(compact, x, count, out)
    picked = x[x % 3 == 0]
    assert count[0] == len(picked)
    assert sorted(out[:len(picked)].tolist()) == picked.tolist()
    ptx = tlc.compile(compact, target="sm_90a").get_kernel_source()
    add = re.search(r"atom\.global\.add\.u32\s+(%r\d+),", ptx)
    assert add and ptx.count(add.group(1)) > 1  # the previous value is used
    ptxas_ok(ptx, tmp_path)


@pytest.mark.parametrize("order, before, after", [
    ("relaxed", 0, 0), ("release", 1, 0), ("acquire", 0, 1), ("acq_rel", 1, 1),
    ("seq_cst", 1, 1), ("consume", 0, 1)])
def test_memory_order_fences_around_the_atomic(order, before, after):
    @T.prim_func
    def f(C: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64):
            for i in T.Parallel(64):
                T.atomic_add(C[i], 1.0, memory_order=order)

    ptx = tlc.compile(f, target="sm_90a").get_kernel_source()
    at = ptx.index("atom.global.add.f32") if "atom.global" in ptx else \
        ptx.index("red.global.add.f32")
    assert ptx[:at].count("membar.gl") == before
    assert ptx[at:].count("membar.gl") == after


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64", "uint32", "uint64"])
def test_atomic_max_and_min(dtype, tmp_path):
    @T.prim_func
    def extremes(X: T.Tensor((4, 64), dtype), Hi: T.Tensor((64,), dtype),
                 Lo: T.Tensor((64,), dtype), Top: T.Tensor((1,), dtype)):
        with T.Kernel(4, threads=64) as b:
            for j in T.Parallel(64):
                T.atomic_max(Hi[j], X[b, j])
                T.atomic_min(Lo[j], X[b, j], memory_order="acq_rel")
                T.atomic_max(Top[0], X[b, j])

    rng = np.random.default_rng(1)
    if dtype == "float32":
        x = rng.standard_normal((4, 64)).astype(np.float32)
    else:
        x = rng.integers(0, 1000, (4, 64)).astype(dtype)
    hi = np.full(64, 500, x.dtype)
    lo = np.full(64, 500, x.dtype)
    top = np.zeros(1, x.dtype)
    tlc.interpret(extremes, x, hi, lo, top)
    np.testing.assert_array_equal(hi, np.maximum(500, x.max(axis=0)))
    np.testing.assert_array_equal(lo, np.minimum(500, x.min(axis=0)))
    assert top[0] == max(0, x.max())
    ptx = tlc.compile(extremes, target="sm_90a").get_kernel_source()
    if dtype != "float32":
        sign = "u" if dtype.startswith("uint") else "s"
        bits = 64 if dtype.endswith("64") else 32
        assert re.search(rf"(atom|red)\.global\.max\.{sign}{bits}", ptx)
        assert re.search(rf"(atom|red)\.global\.min\.{sign}{bits}", ptx)
    ptxas_ok(ptx, tmp_path)


@pytest.mark.parametrize("body, message", [
    ("T.atomic_max(H[0], 1.0)", "T.atomic_max takes float32, int32, int64, uint32, uint64 tensors; "
                                 "'H' is float16"),
    ("T.atomic_add(C[0:8], s, return_prev=True)",
     "return_prev takes an element (C[i, j]), not a tile"),
    ("T.atomic_add(C[0:8], s[0:4])", "T.atomic_add shapes differ: source 4 vs destination 8"),
    ("T.atomic_add(C[0], g)", "adds a fragment, shared or local tile; 'g' is in global memory"),
    ("T.atomic_max(f[0], 1.0)", "T.atomic_max works on global tensors and shared buffers; 'f' is "
                                "in fragment memory"),
])
def test_atomic_errors_name_the_line(body, message, tmp_path):
    assert_line_error(tmp_path, PARAMS, body, message, prelude=[
        "s = T.alloc_shared((8,), 'float32')", "f = T.alloc_fragment((8,), 'float32')",
        "T.clear(s)"])


@T.prim_func
def ordered_accumulator_adds(A: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as _:
        a = T.alloc_shared((64, 64), "float16")
        acc = T.alloc_fragment((64, 64), "float32")
        T.copy(A, a)
        T.gemm(a, a, acc, transpose_B=True, clear_accum=True)
        for i, j in T.Parallel(64, 64):
            T.atomic_add(C[i, j], acc[i, j], memory_order="acq_rel")


def test_ordered_adds_stay_one_an_element(tmp_path):
    # Each add's fences (before and after it) stay around that add: no pairs.
    ptx = tlc.compile(ordered_accumulator_adds, target="sm_90a").get_kernel_source()
    assert "red.global.add.v" not in ptx
    assert ptx.count("membar.gl") + ptx.count("fence.sc.gpu") + ptx.count("fence.acq_rel.gpu") \
        >= 2 * ptx.count("atom.global.add.f32") > 0
    ptxas_ok(ptx, tmp_path)


def _shared_tile_adds(dtype, n):
    """Each of 2 blocks adds a shared tile (A's, times bz + 1) into C's 64 x n
    region: a loop over shared and global memory, vectorized along rows."""
    @T.prim_func
    def shared_tile_adds(A: T.Tensor((64, n), dtype), C: T.Tensor((64, n), dtype)):
        with T.Kernel(2, threads=128) as bz:
            s = T.alloc_shared((64, n), dtype)
            T.copy(A, s)
            for i, j in T.Parallel(64, n):
                s[i, j] = s[i, j] * (bz + 1)
            T.atomic_add(C[0:64, :], s)

    return shared_tile_adds


@pytest.mark.parametrize("dtype, n, vector", [("float32", 64, "v4.f32"),
                                              ("bfloat16", 64, "noftz.v8.bf16"),
                                              ("float16", 64, "noftz.v8.f16")])
def test_shared_tile_adds_are_vector_reductions_on_sm90(dtype, n, vector, tmp_path):
    prim = _shared_tile_adds(dtype, n)
    if dtype == "float32":
        a = np.random.default_rng(n).standard_normal((64, n)).astype(np.float32)
        c = np.ones((64, n), np.float32)
        tlc.interpret(prim, a, c)
        np.testing.assert_allclose(c, 1 + 3 * a, rtol=1e-5, atol=1e-5)
    hopper = tlc.compile(prim, target="sm_90a").get_kernel_source()
    assert f"red.global.add.{vector}" in hopper
    ptxas_ok(hopper, tmp_path)
    ampere = tlc.compile(prim, target="sm_80").get_kernel_source()
    assert "red.global.add.v" not in ampere
    assemble(ampere, "sm_80", tmp_path)


def _tma_adds(dtype="float32", rows=128, split=3):
    """Each of `split` blocks adds (bz + 1) times a 64-row tile of A into C
    through TMA (T.atomic_add(..., use_tma=True)); rows not a multiple of 64
    leave the last tile hanging over C's end (the hardware clips it)."""
    @T.prim_func
    def tma_adds(A: T.Tensor((rows, 64), dtype), C: T.Tensor((rows, 64), dtype)):
        with T.Kernel(T.ceildiv(rows, 64), split, threads=128) as (bx, bz):
            s = T.alloc_shared((64, 64), dtype)
            T.copy(A[bx * 64, 0], s)
            for i, j in T.Parallel(64, 64):
                s[i, j] = s[i, j] * (bz + 1)
            T.atomic_add(C[bx * 64:(bx + 1) * 64, :], s, use_tma=True)

    return tma_adds


@pytest.mark.parametrize("dtype, rows", [("float32", 128), ("float32", 100), ("bfloat16", 128)])
def test_tile_added_through_tma(dtype, rows, tmp_path):
    prim = _tma_adds(dtype, rows)
    if dtype == "float32":
        a = np.random.default_rng(rows).standard_normal((rows, 64)).astype(np.float32)
        c = np.ones((rows, 64), np.float32)
        tlc.interpret(prim, a, c)
        np.testing.assert_allclose(c, 1 + 6 * a, rtol=1e-5, atol=1e-5)
    kernel = tlc.compile(prim, target="sm_90a")
    ptx = kernel.get_kernel_source()
    # one bulk reduction a 128-byte column block of the tile, issued by one thread
    blocks = 64 * (4 if dtype == "float32" else 2) // 128
    assert ptx.count("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile") == blocks
    assert re.search(r"cp.async.bulk.wait_group.read\s+0;", ptx)  # before the kernel ends
    assert {p["name"]: p["access"] for p in kernel.artifact["params"]}["C"] == "readwrite"
    ptxas_ok(ptx, tmp_path)


@pytest.mark.parametrize("body, message, target", [
    ("T.atomic_add(C[0:64, :], s, use_tma=True)",
     "cannot be a TMA reduction: the target has no TMA (sm_90a has)", "sm_80"),
    ("T.atomic_add(C[0:64, :], f, use_tma=True)",
     "adds a shared tile (TMA reads shared memory), got 'f' in fragment memory", "sm_90a"),
    ("T.atomic_add(H[0:64, :], s, use_tma=True)",
     "adds a tile of the tensor's dtype, one of float32, float16, bfloat16, int32 (TMA "
     "converts nothing); got 's' float32 into 'H' float16", "sm_90a"),
    ("T.atomic_add(C[0:64, :], s, use_tma=True, memory_order='release')",
     "is a relaxed tile add", "sm_90a"),
    ("T.atomic_add(C[0:64, 0:32], s[:, 0:32], use_tma=True)",
     "cannot be a TMA reduction: the source is a whole 2-d shared buffer", "sm_90a"),
])
def test_tma_add_errors_name_the_line(body, message, target, tmp_path):
    assert_line_error(tmp_path, "C: T.Tensor((64, 64), 'float32'), H: T.Tensor((64, 64), "
                      "'float16')", body, message, target=target, threads=128, prelude=[
                          "s = T.alloc_shared((64, 64), 'float32')",
                          "f = T.alloc_fragment((64, 64), 'float32')", "T.clear(s)", "T.clear(f)"])


@T.prim_func
def shared_histogram(X: T.Tensor((1024,), "int32"), H: T.Tensor((4, 16), "int32")):
    with T.Kernel(4, threads=128) as b:
        hist = T.alloc_shared((16,), "int32")
        T.clear(hist)
        for i in T.Parallel(256):
            T.atomic_add(hist[X[b * 256 + i] % 16], 1)
        T.copy(hist, H[b, :])


def test_atomics_into_shared_memory(tmp_path):
    # The block's threads count into a shared histogram; a barrier orders the adds before the
    # copy out (and the clear before the adds).
    x = np.random.default_rng(2).integers(0, 1000, 1024).astype(np.int32)
    h = np.zeros((4, 16), np.int32)
    tlc.interpret(shared_histogram, x, h)
    for b in range(4):
        assert h[b].tolist() == np.bincount(x[b * 256:(b + 1) * 256] % 16, minlength=16).tolist()
    ptx = tlc.compile(shared_histogram, target="sm_90a").get_kernel_source()
    assert re.search(r"(atom|red)\.shared\.add\.u32", ptx)
    assert ptx.count("bar.sync") >= 2
    ptxas_ok(ptx, tmp_path)


@T.prim_func
def flags(F: T.Tensor((1,), "int32"), G: T.Tensor((2,), "float32"),
          Out: T.Tensor((2,), "float32")):
    with T.Kernel(1, threads=32):
        if T.get_thread_binding() == 0:
            T.atomic_store(F, 7, memory_order="release")
            T.atomic_store(G[1], -2.5)
            Out[0] = T.atomic_load(F[0], memory_order="acquire")
            Out[1] = T.atomic_load(G[1], memory_order="relaxed")


def test_atomic_load_and_store(tmp_path):
    f = np.zeros(1, np.int32)
    g = np.zeros(2, np.float32)
    out = np.zeros(2, np.float32)
    tlc.interpret(flags, f, g, out)
    assert f[0] == 7 and g[1] == -2.5 and out.tolist() == [7.0, -2.5]
    ptx = tlc.compile(flags, target="sm_90a").get_kernel_source()
    assert re.search(r"atom\.global\.exch\.b32", ptx)
    store = ptx.index("atom.global.exch")
    load = re.search(r"atom\.global\.(or\.b32|add\.u32)", ptx).start()  # adds 0 (LLVM: or 0)
    assert "membar.gl" in ptx[:store]  # release: before the store
    assert "membar.gl" in ptx[load:]  # acquire: after the load
    ptxas_ok(ptx, tmp_path)


@pytest.mark.parametrize("body, message", [
    ("x = T.atomic_load(C[0], memory_order='release')",
     "T.atomic_load: memory_order must be one of relaxed, consume, acquire, seq_cst"),
    ("T.atomic_store(C[0], 1.0, memory_order='acquire')",
     "T.atomic_store: memory_order must be one of relaxed, release, seq_cst"),
    ("x = T.atomic_load(g)", "T.atomic_load takes an element (C[i]) or a one-element buffer"),
    ("T.atomic_store(H[0], 1.0)", "T.atomic_store takes float32, int32, int64, uint32, uint64 tensors"),
])
def test_atomic_load_store_errors(body, message, tmp_path):
    assert_line_error(tmp_path, PARAMS, body, message)


def _vector_adds(dtype, width, sliced):
    # Rows of X summed into Y's 8 rows, `width` columns an add: 30 columns, so the
    # last group of 4 straddles the end (its elements inside are added, the rest not).
    @T.prim_func
    def vector_adds(X: T.Tensor((64, 30), dtype), Y: T.Tensor((8, 30), dtype)):
        with T.Kernel(4, threads=128) as b:
            s = T.alloc_shared((16, 32), dtype)
            T.clear(s)
            T.copy(X[b * 16:b * 16 + 16, 0:30], s[:, 0:30])
            for i, j in T.Parallel(16, 32 // width):
                if sliced and width == 4:
                    T.atomic_addx4(Y[i % 8, j * 4:j * 4 + 4], s[i, j * 4:j * 4 + 4])
                elif sliced:
                    T.atomic_addx2(Y[i % 8, j * 2:j * 2 + 2], s[i, j * 2:j * 2 + 2])
                elif width == 4:
                    T.atomic_addx4(Y[i % 8, j * 4], s[i, j * 4])
                else:
                    T.atomic_addx2(Y[i % 8, j * 2], s[i, j * 2])

    return vector_adds


@pytest.mark.parametrize("dtype, width, sliced", [
    ("float32", 4, False), ("float32", 2, True), ("float16", 2, False), ("bfloat16", 4, True)])
def test_vector_atomic_adds(dtype, width, sliced, tmp_path):
    x = np.random.default_rng(width).standard_normal((64, 30)).astype(np.float32)
    y = np.zeros((8, 30), np.float32)
    if dtype == "float32":
        tlc.interpret(_vector_adds(dtype, width, sliced), x, y)
        np.testing.assert_allclose(y, x.reshape(8, 8, 30).sum(axis=0), rtol=1e-5, atol=1e-5)
    elif dtype == "float16":
        x16, y16 = x.astype(np.float16), y.astype(np.float16)
        tlc.interpret(_vector_adds(dtype, width, sliced), x16, y16)
        np.testing.assert_allclose(y16, x16.astype(np.float32).reshape(8, 8, 30).sum(axis=0),
                                   rtol=2e-2, atol=2e-2)
    kind = {"float32": "f32", "float16": "noftz.v{}.f16", "bfloat16": "noftz.v{}.bf16"}[dtype]
    vector = (f"red.global.add.v{width}.f32" if dtype == "float32"
              else "red.global.add." + kind.format(width))
    hopper = tlc.compile(_vector_adds(dtype, width, sliced), target="sm_90a").get_kernel_source()
    assert vector in hopper
    ptxas_ok(hopper, tmp_path)
    ampere = tlc.compile(_vector_adds(dtype, width, sliced), target="sm_80").get_kernel_source()
    assert "red.global.add.v" not in ampere  # one atomic add an element
    assemble(ampere, "sm_80", tmp_path)


def _accumulator_adds(dtype, n, split=2):
    """Split-K: each of `split` blocks adds its K slice's gemm accumulator
    (C += A[:, slice] @ B[:, slice]^T) into C, 64 x n, by T.atomic_add of the
    whole fragment; n not a multiple of 64 leaves a partial column tile, an
    odd n unaligned pairs."""
    @T.prim_func
    def accumulator_adds(A: T.Tensor((64, 64 * split), "float16"),
                         B: T.Tensor((n, 64 * split), "float16"), C: T.Tensor((64, n), dtype)):
        with T.Kernel(T.ceildiv(n, 64), split, threads=128) as (bx, bz):
            a = T.alloc_shared((64, 64), "float16")
            b = T.alloc_shared((64, 64), "float16")
            acc = T.alloc_fragment((64, 64), "float32")
            T.copy(A[0, bz * 64], a)
            T.copy(B[bx * 64, bz * 64], b)
            T.gemm(a, b, acc, transpose_B=True, clear_accum=True)
            T.atomic_add(C[0, bx * 64], acc)

    return accumulator_adds


@pytest.mark.parametrize("dtype, n", [("float32", 128), ("float32", 127), ("float16", 100),
                                      ("bfloat16", 128)])
def test_accumulator_adds_pair_registers_on_sm90(dtype, n, tmp_path):
    # An mma accumulator holds pairs of consecutive columns a thread: on sm_90
    # each pair is one vector reduction where it lies inside C and is aligned.
    rng = np.random.default_rng(n)
    a = rng.standard_normal((64, 128)).astype(np.float16)
    b = rng.standard_normal((n, 128)).astype(np.float16)
    c = np.ones((64, n), np.float32)
    if dtype == "float32":
        tlc.interpret(_accumulator_adds(dtype, n), a, b, c)
        ref = 1 + a.astype(np.float32) @ b.astype(np.float32).T
        np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-3)
    prim = _accumulator_adds(dtype, n)
    hopper = tlc.compile(prim, target="sm_90a").get_kernel_source()
    kind = {"float32": "v2.f32", "float16": "noftz.v2.f16", "bfloat16": "noftz.v2.bf16"}[dtype]
    assert f"red.global.add.{kind}" in hopper
    # an odd row length: pairs of odd rows are unaligned, added element by element
    scalar = re.findall(r"(?:atom|red)\.global\.add(?:\.noftz)?\.(?:f32|f16|bf16)\b", hopper)
    assert bool(scalar) == (n % 2 == 1)
    ptxas_ok(hopper, tmp_path)
    ampere = tlc.compile(prim, target="sm_80").get_kernel_source()
    assert "red.global.add.v" not in ampere
    assemble(ampere, "sm_80", tmp_path)


@pytest.mark.parametrize("body, message", [
    ("T.atomic_addx2(C[0], g[0], return_prev=True)",
     "T.atomic_addx2: return_prev is not supported by tlc"),
    ("T.atomic_addx4(C[0:2], g[0])", "a sliced destination is 4 elements of the last dimension"),
    ("T.atomic_addx2(I[0], I[2])", "T.atomic_addx2 takes float16, bfloat16 and float32 tensors"),
    ("s = T.alloc_shared((8,), 'float32')\n        T.atomic_addx2(s[0], g[0])",
     "T.atomic_addx2 adds into global tensors; 's' is in shared memory"),
    ("f = T.alloc_fragment((8,), 'float32')\n        T.atomic_addx2(C[0], f[0])",
     "'f' is a fragment (copy it to shared memory first)"),
    ("T.atomic_addx2(C, g[0])", "the destination is an element (B[i, j]) or a slice of 2"),
])
def test_vector_atomic_errors(body, message, tmp_path):
    assert_line_error(tmp_path, PARAMS + ", I: T.Tensor((8,), 'int32')", body, message)
