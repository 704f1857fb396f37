"""T.atomic_add: element adds into global tensors (split-K GEMM), compiled
and interpreted, and its errors at the user's line."""

import sys

import numpy as np
import pytest

import tlc
import tlc.language as T
from bad_programs import assert_line_error
from test_compile import ptxas_ok


def _splitk(repo):
    sys.path.insert(0, str(repo / "examples"))
    import gemm_splitk

    return gemm_splitk.matmul_splitk


@pytest.mark.parametrize("target", ["sm_90a", "sm_80"])
def test_splitk_gemm_compiles_to_guarded_atomic_adds(repo, tmp_path, target):
    factory = _splitk(repo)
    kernel = tlc.compile(factory.factory(100, 256, 512, 64, 128, 64, 2, 128, 3), target=target)
    ptx = kernel.get_kernel_source()
    # sm_90: the accumulator's pairs of columns as vector reductions
    add = "red.global.add.v2.f32" if target == "sm_90a" else "atom.global.add.f32"
    assert add in ptx
    # C is read and written (the adds): an input of the call, not poisoned.
    params = {p["name"]: p for p in kernel.artifact["params"]}
    assert params["C"]["access"] == "readwrite"
    assert kernel.artifact["grid"][2] == "2"
    ptxas_ok(ptx, tmp_path)


@pytest.mark.parametrize("k, split", [(512, 2), (1000, 3)])
def test_splitk_gemm_interpreted_matches_numpy(repo, k, split):
    # K = 1000 in 3 slices: 16 K tiles, slices of 6, 6 and 4 (past K: zeros).
    prim = _splitk(repo).factory(100, 256, k, 64, 128, 64, split, 128, 2)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((100, k)).astype(np.float16)
    b = rng.standard_normal((256, k)).astype(np.float16)
    c = np.full((100, 256), 1.0, np.float32)  # adds onto what C holds
    tlc.interpret(prim, a, b, c)
    ref = 1.0 + a.astype(np.float32) @ b.astype(np.float32).T
    assert np.abs(c - ref).max() < 1e-3


def test_atomic_adds_to_one_element_all_count():
    @T.prim_func
    def histogram(X: T.Tensor((256,), "int32"), H: T.Tensor((4,), "int32")):
        with T.Kernel(1, threads=128):
            for i in T.Parallel(256):
                T.atomic_add(H[X[i] % 4], 1)

    x = np.arange(256, dtype=np.int32)
    h = np.zeros(4, np.int32)
    tlc.interpret(histogram, x, h)
    assert h.tolist() == [64, 64, 64, 64]
    assert "atom.global.add.u32" in tlc.compile(histogram, target="sm_90a").get_kernel_source()


@pytest.mark.parametrize("place, extra, message", [
    ("f[i]", "", "T.atomic_add adds into global tensors and shared buffers; 'f' is in "
                 "fragment memory"),
    ("C", "", "T.atomic_add of a tile cannot be inside T.Parallel"),
    ("C[i]", ", return_prev=1", "return_prev must be True or False"),
    ("C[i]", ", memory_order='weak'", "memory_order must be one of relaxed, consume, acquire"),
    ("C[i]", ", use_tma=True", "with use_tma=True adds a whole shared tile, issued once for the "
                               "block: not inside T.Parallel"),
])
def test_atomic_add_errors_name_the_line(place, extra, message, tmp_path):
    assert_line_error(tmp_path, "C: T.Tensor((64,), 'float32')",
                      f"for i in T.Parallel(64):\n            T.atomic_add({place}, 1.0{extra})",
                      message, prelude=["s = T.alloc_shared((64,), 'float32')",
                                        "f = T.alloc_fragment((64,), 'float32')",
                                        "T.clear(s)", "T.clear(f)"])


def test_atomic_add_of_int8_is_an_error():
    @T.prim_func
    def bad(C: T.Tensor((64,), "int8")):
        with T.Kernel(1, threads=64):
            for i in T.Parallel(64):
                T.atomic_add(C[i], 1)

    with pytest.raises(tlc.CompilationError, match="T.atomic_add takes float32, float16"):
        tlc.compile(bad, target="sm_90a")
