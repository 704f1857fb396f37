"""T.cumsum / T.cummax of shared buffers and fragments: interpreted against
numpy, compiled to PTX (ptxas where installed), errors at the line."""

import numpy as np
import pytest

import tlc
import tlc.language as T
from bad_programs import assert_line_error
from test_compile import ptxas_ok


def _scans(dtype, dim, reverse):
    @T.prim_func
    def scans(X: T.Tensor((32, 64), dtype), S: T.Tensor((32, 64), dtype),
              M: T.Tensor((32, 64), dtype), V: T.Tensor((64,), dtype)):
        with T.Kernel(1, threads=128):
            s = T.alloc_shared((32, 64), dtype)
            f = T.alloc_fragment((32, 64), dtype)
            v = T.alloc_shared((64,), dtype)
            T.copy(X, s)
            T.copy(X, f)
            T.copy(X[0, :], v)
            T.cumsum(s, dim=dim, reverse=reverse)  # in place
            T.cummax(f, dim=dim, reverse=reverse)  # a fragment
            T.cumsum(v)  # 1-d
            T.copy(s, S)
            T.copy(f, M)
            T.copy(v, V)

    return scans


@pytest.mark.parametrize("dtype", ["float32", "int32", "float16"])
@pytest.mark.parametrize("dim, reverse", [(1, False), (0, False), (-1, True)])
def test_scans_match_numpy(dtype, dim, reverse, tmp_path):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((32, 64)) * 4).astype(dtype) if dtype != "int32" else \
        rng.integers(-50, 50, (32, 64)).astype(np.int32)
    s, m, v = np.zeros_like(x), np.zeros_like(x), np.zeros(64, x.dtype)
    prim = _scans(dtype, dim, reverse)
    tlc.interpret(prim, x, s, m, v)
    flip = (lambda a: np.flip(a, axis=dim)) if reverse else (lambda a: a)
    wide = x.astype(np.float32) if dtype == "float16" else x
    np.testing.assert_allclose(s.astype(np.float64),
                               flip(np.cumsum(flip(wide), axis=dim)).astype(x.dtype), rtol=1e-3)
    np.testing.assert_array_equal(m, flip(np.maximum.accumulate(flip(x), axis=dim)))
    np.testing.assert_allclose(v.astype(np.float64), np.cumsum(wide[0]).astype(x.dtype),
                               rtol=1e-3)
    ptxas_ok(tlc.compile(prim, target="sm_90a").get_kernel_source(), tmp_path)


@pytest.mark.parametrize("body, message", [
    ("T.cumsum(X)", "T.cumsum's source must be a shared buffer or a fragment; 'X' is in global"),
    ("T.cumsum(s, dim=2)", "dim 2 is out of range for the 2-d 's'"),
    ("T.cumsum(s, t)", "the destination must have the source's shape and dtype"),
    ("T.cummax(s, reverse=1)", "reverse must be True or False"),
    ("for i in T.Parallel(8):\n            T.cumsum(s)", "T.cumsum cannot be inside T.Parallel"),
])
def test_scan_errors_name_the_line(body, message, tmp_path):
    assert_line_error(tmp_path, "X: T.Tensor((8, 8), 'float32')", body, message, prelude=[
        "s = T.alloc_shared((8, 8), 'float32')", "t = T.alloc_shared((8, 4), 'float32')",
        "T.copy(X, s)"])
