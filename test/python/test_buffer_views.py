"""T.reshape / T.view: a shared buffer's bytes or a tensor parameter's memory
seen with another shape and element type, as TileLang writes them (a shared
tile scanned as one row, accumulators kept in a bf16 buffer's bytes, a flat
tensor read as a matrix)."""

from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T
import marked_lines
from ptxas import assemble

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()


@T.prim_func
def doubled_flat(A: T.Tensor((128, 32), "float32"), B: T.Tensor((128, 32), "float32")):
    # Written through the flat view, read back through the tile: the barriers
    # order the two names' accesses of the same bytes.
    with T.Kernel(2, threads=128) as bx:
        s = T.alloc_shared((64, 32), "float32")
        T.copy(A[bx * 64, 0], s)
        flat = T.reshape(s, (2048,))
        for i in T.Parallel(2048):
            flat[i] = flat[i] * 2.0 + T.float32(i % 32)
        T.copy(s, B[bx * 64, 0])


@T.prim_func
def row_sums_of_a_view(A: T.Tensor((4, 128), "float32"), S: T.Tensor((16,), "float32")):
    # A 4 x 128 tile reduced as 16 rows of 32.
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((4, 128), "float32")
        T.copy(A, s)
        rows = T.reshape(s, (16, 32))
        sums = T.alloc_fragment((16,), "float32")
        T.reduce_sum(rows, sums, dim=1)
        T.copy(sums, S)


@T.prim_func
def prefix_of_one_row(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((256,), "float32")
        T.copy(A, s)
        T.cumsum(T.view(s, (1, 256)), dim=1)
        T.copy(s, B)


@T.prim_func
def words_of_halves(A: T.Tensor((64, 64), "float16"), W: T.Tensor((64, 32), "int32")):
    # The bytes of a float16 tile read as int32 words (two halves each).
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((64, 64), "float16")
        T.copy(A, s)
        words = T.view(s, (64, 32), "int32")
        T.copy(words, W)


@T.prim_func
def accumulate_in_reused_bytes(A: T.Tensor((32, 64), "float16"), O: T.Tensor((32, 32), "float32")):
    # TileLang's sparse MLA backward keeps float32 accumulators in a bf16 tile
    # whose contents it no longer needs: here a float16 tile's bytes.
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((32, 64), "float16")
        T.copy(A, s)
        acc = T.view(s, (32, 32), "float32")
        for i, j in T.Parallel(32, 32):
            acc[i, j] = 0.5 * T.float32(i) + T.float32(j)
        for i, j in T.Parallel(32, 32):
            acc[i, j] = acc[i, j] * 2.0
        T.copy(acc, O)


@T.prim_func
def matrix_of_a_flat_tensor(A: T.Tensor((1024,), "float32"), B: T.Tensor((32, 32), "float32")):
    with T.Kernel(2, threads=128) as bx:
        A2 = T.reshape(A, (32, 32))
        s = T.alloc_shared((16, 32), "float32")
        T.copy(A2[bx * 16, 0], s)
        for i, j in T.Parallel(16, 32):
            B[bx * 16 + i, j] = s[i, j] + 1.0


@T.prim_func
def bits_of_floats(A: T.Tensor((8, 16), "float32"), B: T.Tensor((128,), "int32")):
    with T.Kernel(1, threads=128):
        bits = T.view(A, (128,), "int32")
        for i in T.Parallel(128):
            B[i] = bits[i] >> 23


@T.prim_func
def pipelined_into_a_viewed_buffer(A: T.Tensor((64, 512), "float32"),
                                   B: T.Tensor((64,), "float32")):
    # The copy into the viewed tile cannot be multi-buffered: it stays a
    # synchronous copy inside the pipelined loop.
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((64, 32), "float32")
        flat = T.reshape(s, (2048,))
        acc = T.alloc_fragment((64,), "float32")
        part = T.alloc_fragment((64,), "float32")
        T.clear(acc)
        for k in T.Pipelined(16, num_stages=2):
            T.copy(A[0, k * 32], s)
            flat[0] = flat[0] + 0.0
            T.reduce_sum(s, part, dim=1)
            for i in T.Parallel(64):
                acc[i] += part[i]
        T.copy(acc, B)


def test_shared_reshape_aliases_the_tile():
    a = np.random.default_rng(0).standard_normal((128, 32)).astype(np.float32)
    b = np.zeros_like(a)
    tlc.interpret(doubled_flat, a, b)
    np.testing.assert_array_equal(b, a * 2 + np.arange(32, dtype=np.float32))


def test_reduction_of_a_reshaped_tile():
    a = np.random.default_rng(1).standard_normal((4, 128)).astype(np.float32)
    s = np.zeros(16, np.float32)
    tlc.interpret(row_sums_of_a_view, a, s)
    np.testing.assert_allclose(s, a.reshape(16, 32).sum(axis=1), rtol=1e-5, atol=1e-5)


def test_scan_of_a_viewed_row():
    a = np.random.default_rng(2).standard_normal(256).astype(np.float32)
    b = np.zeros_like(a)
    tlc.interpret(prefix_of_one_row, a, b)
    np.testing.assert_allclose(b, np.cumsum(a), rtol=1e-4, atol=1e-4)


def test_dtype_view_of_shared_bytes():
    a = np.random.default_rng(3).standard_normal((64, 64)).astype(np.float16)
    w = np.zeros((64, 32), np.int32)
    tlc.interpret(words_of_halves, a, w)
    np.testing.assert_array_equal(w, a.view(np.int32))


def test_float32_accumulators_in_float16_bytes():
    a = np.ones((32, 64), np.float16)
    o = np.zeros((32, 32), np.float32)
    tlc.interpret(accumulate_in_reused_bytes, a, o)
    i, j = np.indices((32, 32))
    np.testing.assert_array_equal(o, (0.5 * i + j).astype(np.float32) * 2)


def test_reshape_of_a_tensor_parameter():
    a = np.arange(1024, dtype=np.float32)
    b = np.zeros((32, 32), np.float32)
    tlc.interpret(matrix_of_a_flat_tensor, a, b)
    np.testing.assert_array_equal(b, a.reshape(32, 32) + 1)


def test_dtype_view_of_a_tensor_parameter():
    a = np.random.default_rng(4).standard_normal((8, 16)).astype(np.float32)
    b = np.zeros(128, np.int32)
    tlc.interpret(bits_of_floats, a, b)
    np.testing.assert_array_equal(b, a.reshape(-1).view(np.int32) >> 23)


def test_pipelined_copy_into_a_viewed_tile_stays_synchronous():
    a = np.random.default_rng(5).standard_normal((64, 512)).astype(np.float32)
    b = np.zeros(64, np.float32)
    tlc.interpret(pipelined_into_a_viewed_buffer, a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-4, atol=1e-4)


def test_tile_ir_has_the_view_op():
    text = str(doubled_flat.build_module())
    assert "tile.view" in text and "to memref<2048xf32, #gpu.address_space<workgroup>>" in text
    text = str(bits_of_floats.build_module())
    assert 'tile.name = "bits", tile.scratch, tile.view_of = "A"' in text, text


def test_the_artifact_records_a_dtype_view():
    art = tlc.compile(bits_of_floats, target="sm_80").artifact
    assert art["scratch"] == [{"name": "bits", "dtype": "int32", "shape": [128],
                               "view_of": "A"}]


def _optimized(prim, arch):
    return tlc.compiler.compile_module(prim.build_module(), arch, keep_ir=True).stages[
        "optimized"]


def test_viewed_tile_keeps_the_plain_layout():
    # Neither swizzled nor staged: the allocation keeps no layout, and the
    # pipelined loop's copy into it stays synchronous.
    text = _optimized(pipelined_into_a_viewed_buffer, "sm_90a")
    alloc = next(line for line in text.splitlines()
                 if "tile.alloc_shared" in line and "64x32xf32" in line)
    assert "layout" not in alloc, alloc
    assert "async" not in text and "tile.stage" not in text


@pytest.mark.parametrize("prim,args,expect", [
    (doubled_flat, lambda r: [r.standard_normal((128, 32)).astype(np.float32),
                              np.zeros((128, 32), np.float32)],
     lambda a: a[0] * 2 + np.arange(32, dtype=np.float32)),
    (accumulate_in_reused_bytes, lambda r: [np.ones((32, 64), np.float16),
                                            np.zeros((32, 32), np.float32)],
     lambda a: (0.5 * np.indices((32, 32))[0] + np.indices((32, 32))[1]) * 2),
], ids=["reshape", "dtype"])
def test_optimized_ir_orders_the_aliased_accesses(prim, args, expect):
    """The IR after the shared-memory and barrier passes (sm_80) interpreted:
    barriers between the accesses of the two names."""
    values = args(np.random.default_rng(6))
    tlc.interpret(_optimized(prim, "sm_80"), *values)
    np.testing.assert_array_equal(values[-1], expect(values).astype(np.float32))


PROGRAMS = [doubled_flat, row_sums_of_a_view, prefix_of_one_row, words_of_halves,
            accumulate_in_reused_bytes, matrix_of_a_flat_tensor, bits_of_floats,
            pipelined_into_a_viewed_buffer]


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("prim", PROGRAMS, ids=lambda p: p.name)
def test_ptx_assembles(prim, arch, tmp_path):
    art = tlc.compile(prim, target=arch).artifact
    for k in art.get("kernels", [art]):  # one kernel: a version-1 artifact
        assemble(k["ptx"], arch, tmp_path)


def test_view_bytes_checked_at_the_call():
    from tlc.runtime.sequence import Scratch

    view = Scratch("bits", "int32", (128,), 0, "A")

    class Cuda:
        __cuda_array_interface__ = {"shape": (8, 8), "typestr": "<f4", "data": (0x10000, False),
                                    "version": 3, "strides": None}

    with pytest.raises(tlc.runtime.ArgumentError,
                       match=r"view 'bits' \(128,\) int32 has 512 bytes, but argument 'A' "
                             r"\(8, 8\) float32 has 256"):
        view.view(Cuda(), (128,), "k")
    buf = view.view(Cuda(), (64,), "k")
    assert (buf.ptr, buf.dtype, buf.shape) == (0x10000, "int32", (64,))


# -- errors --------------------------------------------------------------------------------


@T.prim_func
def fragment_dtype_view(A: T.Tensor((16, 16), "float32")):
    with T.Kernel(1, threads=128):
        f = T.alloc_fragment((16, 16), "float32")
        T.copy(A, f)
        g = T.view(f, (16, 16), "int32")  # E:fragment
        g[0, 0] = 1


@T.prim_func
def fragment_elements(A: T.Tensor((16, 16), "float32")):
    with T.Kernel(1, threads=128):
        f = T.alloc_fragment((16, 16), "float32")
        T.copy(A, f)
        g = T.reshape(f, (16, 8))  # E:fragment-elements
        g[0, 0] = 1.0


@T.prim_func
def reducer_view(A: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=128):
        r = T.alloc_reducer((16,), "float32", op="sum")
        g = T.reshape(r, (4, 4))  # E:reducer
        T.finalize_reducer(r)


@T.prim_func
def annotated_fragment_view(A: T.Tensor((16, 16), "float32")):
    with T.Kernel(1, threads=32):
        f = T.alloc_fragment((16, 16), "float32")
        g = T.reshape(f, (256,))
        T.annotate_layout({g: T.Fragment((256,), forward_fn=lambda i: (i % 32, i // 32))})  # E:annotated-view
        T.copy(A, f)


@T.prim_func
def local_view(A: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=128):
        r = T.alloc_local((4,), "float32")
        g = T.view(r, (4,), "int32")  # E:local
        g[0] = 1


@T.prim_func
def shared_size(A: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((16, 16), "float16")
        g = T.view(s, (16, 16), "float32")  # E:shared-size
        g[0, 0] = 1.0


@T.prim_func
def tensor_size(A: T.Tensor((16, 16), "float16")):
    with T.Kernel(1, threads=128):
        g = T.reshape(A, (16, 8))  # E:tensor-size
        g[0, 0] = 1.0


@T.prim_func
def annotated_then_viewed(A: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((64, 64), "float16")
        T.annotate_layout({s: tlc.layout.make_swizzled_layout(s)})
        g = T.reshape(s, (4096,))  # E:annotated
        g[0] = 1.0


@T.prim_func
def viewed_then_annotated(A: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((64, 64), "float16")
        g = T.reshape(s, (4096,))
        T.annotate_layout({s: tlc.layout.make_swizzled_layout(s)})  # E:then-annotated
        g[0] = 1.0


@T.prim_func
def scratch_view(A: T.Tensor((16,), "float32")):
    S = T.alloc_global((16,), "float32")
    with T.Kernel(1, threads=128):
        g = T.reshape(S, (4, 4))  # E:scratch
        g[0, 0] = A[0]


@T.prim_func
def stages_of_a_viewed_buffer(A: T.Tensor((2, 64), "float32")):
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((2, 64), "float32")
        g = T.reshape(s, (128,))
        T.copy(A[0, 0:64], s[0, :])  # E:stages
        g[0] = 1.0


@pytest.mark.parametrize("prim,marker,at,message", [
    (fragment_dtype_view, "fragment", "T.view",
     "T.view: a fragment's view keeps its element type (float32); 'f' cannot be viewed as "
     "int32"),
    (fragment_elements, "fragment-elements", "T.reshape",
     "T.reshape: 'f' (16, 16) has 256 elements, but (16, 8) has 128; a view keeps the "
     "fragment's elements"),
    (reducer_view, "reducer", "r,", "T.reshape of the reducer 'r' is not supported: "
     "T.finalize_reducer it into a fragment and view that"),
    (annotated_fragment_view, "annotated-view", "T.Fragment",
     "'g' is a view (T.reshape / T.view) of a fragment, whose layout is its allocation's: "
     "annotate the allocation"),
    (local_view, "local", "r,", "T.view of the local buffer 'r' is not supported"),
    (shared_size, "shared-size", "T.view",
     "T.view: 's' (16, 16) float16 is 512 bytes, but (16, 16) float32 is 1024; a view keeps "
     "the buffer's size"),
    (tensor_size, "tensor-size", "T.reshape",
     "T.reshape of 'A' (16, 16) float16 (512 bytes) as (16, 8) float16 (256 bytes): a view "
     "has as many bytes as its tensor"),
    (annotated_then_viewed, "annotated", "T.reshape",
     "T.reshape: 's' has a layout (#tile.shared<swizzle"),
    (viewed_then_annotated, "then-annotated", "tlc.layout",
     "'s' is viewed with T.reshape / T.view (or is such a view); a viewed buffer takes the "
     "compiler's layout, it cannot take a swizzled layout of the program's"),
    (scratch_view, "scratch", "T.reshape",
     "T.reshape of 'S': only a tensor parameter's memory (or a view of it) can be viewed; it "
     "is a T.alloc_global tensor"),
    (stages_of_a_viewed_buffer, "stages", "s[0, :]",
     "'s' is viewed with T.reshape / T.view, and a viewed buffer is not multi-buffered: its "
     "stages cannot also be named as buffers"),
], ids=lambda v: v if isinstance(v, str) and len(v) < 16 else None)
def test_errors_name_the_line(prim, marker, at, message):
    with pytest.raises(tlc.CompilationError) as e:
        prim.build_module()
    marked_lines.assert_error_at(e.value, THIS, LINES, marker, at, message)


@T.prim_func
def scratch_in_an_operand(A: T.Tensor((64, 128), "float16"), B: T.Tensor((64, 128), "float16"),
                          C: T.Tensor((64, 64), "float32"), D: T.Tensor((32, 64), "float32"),
                          E: T.Tensor((64, 128), "float16")):
    # A gemm operand's bytes reused as float32 scratch once the gemm has read
    # them (TileLang's sparse MLA backward stages its dKV rows this way), then
    # read back through the operand's own name.
    with T.Kernel(1, threads=128):
        a = T.alloc_shared((64, 128), "float16")
        b = T.alloc_shared((64, 128), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        words = T.view(b, (64, 64), "float32")
        T.copy(A, a)
        T.copy(B, b)
        T.gemm(a, b, c, transpose_B=True, clear_accum=True)
        T.copy(c, C)
        for i, j in T.Parallel(64, 64):
            if i < 32:
                words[i, j] = T.cast(i * 64 + j, "float32")
        for i, j in T.Parallel(64, 64):
            if i < 32:
                D[i, j] = words[i, j] + c[i, j]
        T.copy(b, E)


def _scratch_inputs(seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((64, 128)).astype(np.float16)
    b = rng.standard_normal((64, 128)).astype(np.float16)
    return a, b


def test_a_gemm_operand_viewed_as_scratch_interpreted():
    a, b = _scratch_inputs(5)
    c = np.zeros((64, 64), np.float32)
    d = np.zeros((32, 64), np.float32)
    e = np.zeros((64, 128), np.float16)
    tlc.interpret(scratch_in_an_operand, a, b, c, d, e)
    ref = a.astype(np.float32) @ b.astype(np.float32).T
    assert np.abs(c - ref).max() < 1e-2
    scratch = np.arange(2048, dtype=np.float32).reshape(32, 64)
    np.testing.assert_array_equal(d, scratch + c[:32])
    # The scratch's bytes, read back as float16 through the operand: rows 0-31 of
    # the float32 view are the first 8192 bytes, b's rows 0-31; the rest is b.
    want = b.copy()
    want[:32] = scratch.view(np.float16).reshape(32, 128)
    np.testing.assert_array_equal(e.view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_a_gemm_operand_viewed_as_scratch_compiles(arch, tmp_path):
    """The operand keeps its swizzled layout (column blocks of 64 on wgmma): the
    view's elements are addressed where that layout puts their bytes."""
    module = tlc.compile(scratch_in_an_operand, target=arch)
    ptx = module.get_kernel_source()
    assert ("wgmma.mma_async" in ptx) == (arch == "sm_90a")
    assemble(ptx, arch, tmp_path)
