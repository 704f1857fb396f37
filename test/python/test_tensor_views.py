"""`T.Tensor(shape, dtype, X.data)`: a tensor parameter's memory seen with
another shape (TileLang's `buf.data` views), as a convolution written in
TileLang's style views its 4-d weights and output as GEMM matrices."""

import sys
from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T
import marked_lines
from ptxas import assemble

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
from build_multi_kernel import conv_view_program as conv_program  # noqa: E402

M = T.dynamic("M")


@T.prim_func
def doubled(A: T.Tensor((4, 8, 16), "float16"), B: T.Tensor((4, 8, 16), "float16")):
    with T.Kernel(2, threads=128) as bx:
        A2 = T.Tensor((64, 8), "float16", A.data)
        B2 = T.Tensor((64, 8), "float16", B.data)
        s = T.alloc_shared((32, 8), "float16")
        T.copy(A2[bx * 32, 0], s)
        for i, j in T.Parallel(32, 8):
            s[i, j] = s[i, j] * 2
        T.copy(s, B2[bx * 32, 0])


@T.prim_func
def rows_viewed(A: T.Tensor((M, 16), "float32"), B: T.Tensor((M, 16), "float32")):
    # A view whose size is a symbol: (M, 16) -> (M, 2, 8).
    V = T.Tensor((M, 2, 8), "float32", A.data)
    with T.Kernel(T.ceildiv(M, 128), threads=128) as bx:
        for i in T.Parallel(128):
            for h in T.serial(2):
                for j in T.serial(8):
                    B[bx * 128 + i, h * 8 + j] = V[bx * 128 + i, h, j] + 1.0


@T.prim_func
def half_the_rows(A: T.Tensor((M, 16), "float32"), B: T.Tensor((M, 16), "float32")):
    V = T.Tensor((M, 8), "float32", A.data)  # half of A's elements: refused at the call
    with T.Kernel(T.ceildiv(M, 128), threads=128) as bx:
        for i in T.Parallel(128):
            B[bx * 128 + i, 0] = V[bx * 128 + i, 0]


def test_interpreter_reads_and_writes_through_views():
    a = np.random.default_rng(0).standard_normal((4, 8, 16)).astype(np.float16)
    b = np.zeros_like(a)
    tlc.interpret(doubled, a, b)
    np.testing.assert_array_equal(b, a * 2)


def test_symbolic_view_in_the_interpreter():
    a = np.arange(300 * 16, dtype=np.float32).reshape(300, 16)
    b = np.zeros_like(a)
    tlc.interpret(rows_viewed, a, b)
    np.testing.assert_array_equal(b, a + 1)


def test_element_counts_checked_at_the_call():
    a = np.zeros((300, 16), np.float32)
    with pytest.raises(tlc.runtime.ArgumentError,
                       match=r"view 'V' \(300, 8\) float32 has 9600 bytes, but argument 'A' "
                             r"\(300, 16\) float32 has 19200"):
        tlc.interpret(half_the_rows, a, np.zeros_like(a))


def test_tile_ir_marks_the_view():
    text = str(doubled.build_module())
    assert 'tile.name = "A2", tile.scratch, tile.view_of = "A"' in text, text
    assert 'tile.name = "B2", tile.scratch, tile.view_of = "B"' in text, text


@pytest.fixture(scope="module")
def compiled_doubled():
    return tlc.compile(doubled, target="sm_90a")


def test_artifact_records_the_views(compiled_doubled):
    art = compiled_doubled.artifact
    assert art["version"] == 2
    assert art["scratch"] == [
        {"name": "A2", "dtype": "float16", "shape": [64, 8], "view_of": "A"},
        {"name": "B2", "dtype": "float16", "shape": [64, 8], "view_of": "B"}]
    # B is written only through its view, and says so (out_idx, torch ops).
    assert [(p["name"], p["access"]) for p in art["params"]] == [("A", "read"), ("B", "write")]
    loaded = tlc.runtime.Kernel.from_dict(art)
    assert [(s.name, s.view_of, s.base) for s in loaded.scratch] == [("A2", 0, "A"),
                                                                      ("B2", 1, "B")]


class _Cuda:
    """A stand-in device tensor (__cuda_array_interface__), never dereferenced."""

    def __init__(self, shape, typestr="<f2", ptr=0x10000):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr,
                                         "data": (ptr, False), "version": 3, "strides": None}


def test_runtime_passes_the_parameter_memory_with_the_view_shape(compiled_doubled):
    seq = tlc.runtime.Kernel.from_dict(compiled_doubled.artifact)
    view = seq.scratch[0]
    buf = view.view(_Cuda((4, 8, 16)), (64, 8), "doubled")
    assert (buf.ptr, buf.dtype, buf.shape) == (0x10000, "float16", (64, 8))
    with pytest.raises(tlc.runtime.ArgumentError,
                       match=r"view 'A2' \(64, 4\) float16 has 512 bytes, but argument 'A' "
                             r"\(4, 8, 16\) float16 has 1024"):
        view.view(_Cuda((4, 8, 16)), (64, 4), "doubled")


def test_views_of_other_parameters_are_refused(compiled_doubled):
    import json

    art = json.loads(json.dumps(compiled_doubled.artifact))
    art["scratch"][0]["view_of"] = "Q"
    with pytest.raises(tlc.runtime.ArtifactError, match="a view of 'Q', which is no tensor "):
        tlc.runtime.Kernel.from_dict(art)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_ptx_assembles(arch, tmp_path):
    for k in tlc.compile(doubled, target=arch).artifact["kernels"]:
        assemble(k["ptx"], arch, tmp_path)


# -- a convolution in TileLang's style: 4-d weights and output viewed as matrices ------------


def numpy_conv(x, w, S, P, D):
    """NHWC x (KH, KW, C, F) -> N x OH x OW x F, in float32."""
    n, h, wd, c = x.shape
    kh, kw, _, f = w.shape
    xp = np.pad(x.astype(np.float32), ((0, 0), (P, P), (P, P), (0, 0)))
    oh = (h + 2 * P - D * (kh - 1) - 1) // S + 1
    ow = (wd + 2 * P - D * (kw - 1) - 1) // S + 1
    out = np.zeros((n, oh, ow, f), np.float32)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, i * D:i * D + S * oh:S, j * D:j * D + S * ow:S, :]
            out += patch @ w[i, j].astype(np.float32)
    return out


def test_tilelang_style_convolution_in_the_interpreter():
    N, C, H, W, F, K, S, D, P = 2, 16, 9, 11, 24, 3, 1, 1, 1
    prim = conv_program(N, C, H, W, F, K, S, D, P, block_M=64, block_N=32, block_K=32,
                        threads=128)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((N, H, W, C)).astype(np.float16)
    w = rng.standard_normal((K, K, C, F)).astype(np.float16)
    out = np.zeros((N, H, W, F), np.float16)
    tlc.interpret(prim, x, w, out)
    np.testing.assert_allclose(out.astype(np.float32), numpy_conv(x, w, S, P, D),
                               rtol=1e-2, atol=5e-2)


def test_tilelang_style_convolution_on_sm90a(tmp_path):
    # The weights' view is loaded by TMA (the loop is warp-specialized) and the
    # output's view stored by TMA (the kernel is persistent): both are tensor
    # maps of the views' shapes.
    art = tlc.compile(conv_program(16, 64, 56, 56, 64, 3, 1, 1, 1), target="sm_90a").artifact
    (k,) = art["kernels"]
    assert "wgmma.mma_async" in k["ptx"] and "cp.async.bulk.tensor" in k["ptx"]
    assert sorted(m["param"] for m in k["tensor_maps"]) == ["w_mat", "y_mat"]
    assert [(p["name"], p["access"]) for p in art["params"]] == \
        [("x", "read"), ("w", "read"), ("y", "write")]
    assemble(k["ptx"], "sm_90a", tmp_path)


# -- errors at the user's line ----------------------------------------------------------------


@T.prim_func
def wrong_count(A: T.Tensor((4, 8), "float16")):
    with T.Kernel(1, threads=128):
        V = T.Tensor((4, 4), "float16", A.data)  # E:count
        V[0, 0] = 0.0


@T.prim_func
def wrong_dtype(A: T.Tensor((4, 8), "float16")):
    with T.Kernel(1, threads=128):
        V = T.Tensor((32,), "float32", A.data)  # E:dtype
        V[0] = 0.0


@T.prim_func
def shared_data(A: T.Tensor((4, 8), "float16")):
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((4, 8), "float16")
        V = T.Tensor((32,), "float16", s.data)  # E:shared
        V[0] = 0.0


@T.prim_func
def with_strides(A: T.Tensor((4, 8), "float16")):
    with T.Kernel(1, threads=128):
        V = T.Tensor((32,), "float16", A.data, strides=(1,))  # E:strides
        V[0] = 0.0


@T.prim_func
def not_data(A: T.Tensor((4, 8), "float16")):
    with T.Kernel(1, threads=128):
        V = T.Tensor((32,), "float16", A)  # E:not-data
        V[0] = 0.0


@T.prim_func
def view_name_taken(A: T.Tensor((4, 8), "float16")):
    with T.Kernel(1, threads=128):
        A = T.Tensor((32,), "float16", A.data)  # E:taken
        A[0] = 0.0


@pytest.mark.parametrize("prim,marker,at,message", [
    (wrong_count, "count", "T.Tensor",
     "a view of 'A' (4, 8) float16 (64 bytes) as (4, 4) float16 (32 bytes): a view has as "
     "many bytes as its tensor"),
    (wrong_dtype, "dtype", "T.Tensor",
     "a view of 'A' (4, 8) float16 (64 bytes) as (32,) float32 (128 bytes): a view has as "
     "many bytes as its tensor"),
    (shared_data, "shared", "s.data",
     "'s.data': only a tensor parameter's memory can be viewed with T.Tensor(shape, dtype, "
     "X.data); 's' is a shared buffer"),
    (with_strides, "strides", "T.Tensor",
     "T.Tensor(shape, dtype, data) got an unexpected argument 'strides'"),
    (not_data, "not-data", "A)",
     "T.Tensor's third argument is a tensor parameter's memory, `X.data`"),
    (view_name_taken, "taken", "T.Tensor",
     "T.Tensor view: 'A' already names a parameter of 'view_name_taken'"),
], ids=lambda v: v if isinstance(v, str) and len(v) < 10 else None)
def test_errors_name_the_line(prim, marker, at, message):
    with pytest.raises(tlc.CompilationError) as e:
        prim.build_module()
    marked_lines.assert_error_at(e.value, THIS, LINES, marker, at, message)


@T.prim_func
def write_view_read_base(A: T.Tensor((4, 32), "float16")):
    with T.Kernel(1, threads=128):  # E:alias
        V = T.Tensor((128,), "float16", A.data)
        for i in T.Parallel(128):
            V[i] = A[i // 32, i % 32] + 1.0


@T.prim_func
def read_both(A: T.Tensor((4, 32), "float16"), B: T.Tensor((128,), "float16")):
    with T.Kernel(1, threads=128):
        V = T.Tensor((128,), "float16", A.data)
        for i in T.Parallel(128):
            B[i] = V[i] + A[i // 32, i % 32]


def test_a_kernel_writing_a_tensor_uses_one_name_for_it():
    # The passes would see two tensors (a TMA store or a read ahead of one
    # could race with the other): an error at the kernel.
    with pytest.raises(tlc.CompilationError) as e:
        tlc.compile(write_view_read_base, target="sm_90a")
    marked_lines.assert_error_at(
        e.value, THIS, LINES, "alias", "T.Kernel",
        "writes the memory of 'A' as 'V' and also uses it as 'A'; a kernel that writes a "
        "tensor must use one name for it (the parameter or one view)")
    # Reading through both names is fine.
    a = np.random.default_rng(2).standard_normal((4, 32)).astype(np.float16)
    b = np.zeros(128, np.float16)
    tlc.compile(read_both, target="sm_90a")
    tlc.interpret(read_both, a, b)
    np.testing.assert_array_equal(b, (a.reshape(-1).astype(np.float32) * 2).astype(np.float16))
