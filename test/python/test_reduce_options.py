"""T.reduce_*'s TileLang options: NaNs in max / min / absmax are skipped
(TileLang's default, PTX max / min) or kept with nan_propagate=True
(max.NaN / min.NaN), in the interpreter and in the PTX; `batch` other than
1 and `annotations` are errors at the argument."""

import numpy as np
import pytest

import tlc
import tlc.language as T
from bad_programs import assert_line_error
from ptxas import assemble
from test_compile import ptxas_ok


def _row_extremes(propagate):
    @T.prim_func
    def row_extremes(X: T.Tensor((64, 32), "float32"), Hi: T.Tensor((64,), "float32"),
                     Lo: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=128):
            x = T.alloc_fragment((64, 32), "float32")
            hi = T.alloc_fragment((64,), "float32")
            lo = T.alloc_fragment((64,), "float32")
            T.copy(X, x)
            if propagate:
                T.reduce_max(x, hi, dim=1, nan_propagate=True)
                T.reduce_min(x, lo, 1, True, 1, True)  # TileLang's positional order
            else:
                T.reduce_max(x, hi, dim=1)
                T.reduce_min(x, lo, dim=1, batch=1)
            T.copy(hi, Hi)
            T.copy(lo, Lo)

    return row_extremes


@pytest.mark.parametrize("propagate", [False, True])
def test_nans_skipped_or_kept(propagate, tmp_path):
    x = np.random.default_rng(1).standard_normal((64, 32)).astype(np.float32)
    x[3, 5] = np.nan  # one NaN in row 3
    hi, lo = np.zeros(64, np.float32), np.zeros(64, np.float32)
    tlc.interpret(_row_extremes(propagate), x, hi, lo)
    rows = np.arange(64) != 3
    np.testing.assert_array_equal(hi[rows], x[rows].max(axis=1))
    if propagate:
        assert np.isnan(hi[3]) and np.isnan(lo[3])
    else:
        assert hi[3] == np.nanmax(x[3]) and lo[3] == np.nanmin(x[3])
    ptx = tlc.compile(_row_extremes(propagate), target="sm_90a").get_kernel_source()
    assert ("max.NaN.f32" in ptx) == propagate and ("min.NaN.f32" in ptx) == propagate
    assert ("max.f32" in ptx) != propagate
    ptxas_ok(ptx, tmp_path)


@pytest.mark.parametrize("body, message", [
    ("T.reduce_sum(x, s, dim=1, batch=4)", "batch (TileLang's outputs per batched all-reduce) "
                                           "must be 1 in tlc"),
    ("T.reduce_max(x, s, dim=1, annotations={})", "annotations"),
    ("T.reduce_max(x, s, dim=1, nan_propagate=1)", "nan_propagate must be True or False"),
])
def test_option_errors(body, message, tmp_path):
    assert_line_error(tmp_path, "X: T.Tensor((64, 32), 'float32')", body, message,
                      prelude=["x = T.alloc_fragment((64, 32), 'float32')",
                               "s = T.alloc_fragment((64,), 'float32')", "T.copy(X, x)"],
                      threads=128)


@T.prim_func
def half_max_into_float(X: T.Tensor((8, 128), "float16"), M: T.Tensor((128,), "float32")):
    # TileLang's flash decoding reduces float16 log-sum-exps into a float32
    # fragment: a converted copy of the source, reduced in float32.
    with T.Kernel(1, threads=128):
        x = T.alloc_fragment((8, 128), "float16")
        m = T.alloc_fragment((128,), "float32")
        T.copy(X, x)
        T.reduce_max(x, m, dim=0, clear=True)
        T.copy(m, M)


def test_reduction_into_another_float_type(tmp_path):
    x = np.random.default_rng(3).standard_normal((8, 128)).astype(np.float16)
    m = np.zeros(128, np.float32)
    tlc.interpret(half_max_into_float, x, m)
    np.testing.assert_array_equal(m, x.max(axis=0).astype(np.float32))
    kernel = tlc.compile(half_max_into_float, target="sm_90a")
    assert "memref<8x128xf32, #tile.space<fragment>>" in kernel.get_mlir("tile")
    ptxas_ok(kernel.get_kernel_source(), tmp_path)


@T.prim_func
def wide_reductions(X: T.Tensor((16, 256), "int64"), Y: T.Tensor((16, 256), "float64"),
                    S: T.Tensor((16,), "int64"), M: T.Tensor((16,), "float64")):
    with T.Kernel(1, threads=128):
        x = T.alloc_fragment((16, 256), "int64")
        y = T.alloc_fragment((16, 256), "float64")
        s = T.alloc_fragment((16,), "int64")
        m = T.alloc_fragment((16,), "float64")
        T.copy(X, x)
        T.copy(Y, y)
        T.reduce_sum(x, s, dim=1)
        T.reduce_max(y, m, dim=1)
        T.copy(s, S)
        T.copy(m, M)


def test_64_bit_reductions(tmp_path):
    # 64-bit partials: shuffled as two 32-bit halves, 8-byte scratch slots across warps.
    rng = np.random.default_rng(9)
    x = rng.integers(-2**40, 2**40, (16, 256), dtype=np.int64)
    y = rng.standard_normal((16, 256))
    s, m = np.zeros(16, np.int64), np.zeros(16, np.float64)
    tlc.interpret(wide_reductions, x, y, s, m)
    np.testing.assert_array_equal(s, x.sum(1))
    np.testing.assert_array_equal(m, y.max(1))
    for target in ("sm_80", "sm_90a"):
        kernel = tlc.compile(wide_reductions, target=target)
        ptx = kernel.get_kernel_source()
        assert "shfl.sync.bfly" in ptx
        assemble(ptx, target, tmp_path)
