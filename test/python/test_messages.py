"""Mistakes that used to surface as tracebacks: each is a clear error, at the
user's line where there is one. The marked lines end with `# E:<name>`."""

import ctypes
from pathlib import Path

import pytest

import tlc
import tlc.language as T
from tlc import runtime
from tlc.runtime import ArgumentError, Kernel

from test_runtime import CudaArray, DLPackArray, vadd_dict
import marked_lines

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()


def line_of(marker: str) -> int:
    return marked_lines.line_of(LINES, marker)


def at_line(error, marker: str, *message: str) -> None:
    assert isinstance(error, tlc.CompilationError), error
    loc = error.location
    assert loc is not None and (loc.file, loc.line) == (THIS, line_of(marker)), str(error)
    for m in message:
        assert m in str(error), str(error)
    assert "Traceback" not in str(error)


def bad_shape(N):
    @T.prim_func
    def k(X: T.Tensor((N, "M"), "float32")):  # E:shape
        pass

    return k


def bad_dtype(N):
    @T.prim_func
    def k(X: T.Tensor((N,), "f32x")):  # E:dtype
        pass

    return k


def huge(N):
    @T.prim_func
    def k(X: T.Tensor((N, 8), "float32")):  # E:huge
        pass

    return k


@pytest.mark.parametrize("factory, args, marker, message", [
    (bad_shape, (4,), "shape", "tensor sizes must be positive ints or T.dynamic(...), got 'M'"),
    (bad_dtype, (4,), "dtype", "unknown dtype 'f32x'"),
    (huge, (2**63,), "huge", "larger than 2**63 - 1 bytes"),
    (huge, (2**58,), "huge", "larger than 2**63 - 1 bytes"),
    (huge, (True,), "huge", "got True"),
])
def test_tensor_annotation_mistakes_point_at_the_line(factory, args, marker, message):
    with pytest.raises(tlc.CompilationError) as info:
        tlc.jit(factory, cache=False)(*args)
    at_line(info.value, marker, message)
    assert isinstance(info.value, ValueError)  # as before they had a location


def test_dynamic_mistakes_point_at_the_line():
    with pytest.raises(tlc.CompilationError) as info:
        T.dynamic("1m")  # E:dyn-name
    at_line(info.value, "dyn-name", "identifier name, got '1m'")
    with pytest.raises(tlc.CompilationError) as info:
        T.dynamic("m", "float32")  # E:dyn-type
    at_line(info.value, "dyn-type", "int32 or int64, got 'float32'")
    with pytest.raises(tlc.CompilationError) as info:
        T.Tensor(3.5)  # E:not-a-shape
    at_line(info.value, "not-a-shape", "got 3.5")


@pytest.fixture(scope="module")
def scale_kernel():
    from test_jit import _scale

    return tlc.compile(_scale(64, 128, 32))


@pytest.mark.parametrize("out_idx", [1.5, "Y", True, [0, 1.0], {2}])
def test_out_idx_of_a_wrong_type(scale_kernel, out_idx):
    with pytest.raises(tlc.CompilationError, match=r"out_idx must be ints .*got"):
        tlc.JITKernel(scale_kernel.artifact, scale_kernel.stages, out_idx=out_idx)


def _driver_present() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


@pytest.mark.skipif(_driver_present(), reason="a CUDA driver is here: launches would run")
def test_out_idx_wrong_argument_before_missing_gpu(scale_kernel):
    kernel = tlc.JITKernel(scale_kernel.artifact, scale_kernel.stages, out_idx=[-1])
    with pytest.raises(ArgumentError, match="argument 'X'.*expected dtype float32, got float16"):
        kernel(CudaArray((64, 128), "<f2"), 2.0)
    with pytest.raises(ArgumentError, match="argument 'alpha'.*expected a number"):
        kernel(CudaArray((64, 128)), "two")
    with pytest.raises(ArgumentError, match="argument 'X'.*dim 0 must be 64"):
        kernel(CudaArray((32, 128)), 2.0)
    with pytest.raises(runtime.LaunchError):  # right arguments: now the GPU is missing
        kernel(CudaArray((64, 128)), 2.0)


def test_null_data_pointer_is_rejected():
    k = Kernel.from_dict(vadd_dict())
    b, c = CudaArray((64, 100)), CudaArray((64, 100))
    with pytest.raises(ArgumentError, match=r"argument 'A' \(param 1 of vadd\): data pointer "
                                            r"is null"):
        k.grid_for(CudaArray((64, 100), ptr=0), b, c, 1.0)
    with pytest.raises(ArgumentError, match="argument 'B'.*data pointer is null"):
        k.grid_for(CudaArray((64, 100)), DLPackArray((64, 100), ptr=0), c, 1.0)
    # an empty tensor may have no storage
    assert k.grid_for(CudaArray((0, 100), ptr=0), b, CudaArray((0, 100), ptr=0), 1.0)[1] == 0


def test_annotation_mistake_in_a_tile_file_is_one_diagnostic(tmp_path, capsys):
    from tlc.cli import main

    source = tmp_path / "k.tile"
    source.write_text("N = 64\n\n\n@T.prim_func\ndef k(X: T.Tensor((N,), \"float32\")):\n"
                      "    with T.Kernel(1, threads=128):\n        pass\n")
    assert main([str(source), "-D", "N=-1"]) == 1
    err = capsys.readouterr().err
    assert err.count("error:") == 1, err
    assert err.startswith(f"{source}:5:") and "got -1" in err, err


@pytest.mark.parametrize("terms, message", [
    (500, "this expression nests operators too deeply"),
    (1500, "nests expressions or blocks more deeply than Python can compile"),
    (50000, "nests expressions or blocks more deeply than Python's parser allows"),
])
def test_deeply_nested_tile_file_is_a_message(tmp_path, capsys, terms, message):
    from tlc.cli import main

    source = tmp_path / "deep.tile"
    source.write_text(
        "@T.prim_func\ndef k(A: T.Tensor((128,), 'float32')):\n"
        "    with T.Kernel(1, threads=128):\n"
        "        x = T.alloc_fragment((128,), 'float32')\n        T.copy(A[0], x)\n"
        "        for i in T.Parallel(128):\n"
        f"            x[i] = {' + '.join(['x[i]'] * terms)}\n        T.copy(x, A[0])\n")
    assert main([str(source), "-o", str(tmp_path / "out.ptx")]) == 1
    err = capsys.readouterr().err
    assert message in err and str(source) in err and "Traceback" not in err, err[:500]
    assert not (tmp_path / "out.ptx").exists()
