"""Tests of tlc.runtime that need no GPU.

The runtime library is built with gcc into a temporary folder (or taken from
TLC_RUNTIME_LIB where there is no compiler, as on the GPU machine) by
conftest.py's runtime_lib. Tensor arguments are small fakes exposing
__cuda_array_interface__ or __dlpack__, and the driver-facing C code is
exercised against a fake libcuda.so.1 (built from FAKE_LIBCUDA below by
conftest.py's fake_driver) in a subprocess. Only test_gpu_* need a real GPU.
"""

import ctypes
import json
import os
import struct
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

import tlc.runtime as rt
from tlc.runtime import ArgumentError, ArtifactError, GridExpr, Kernel, LaunchError

ROOT = Path(__file__).resolve().parents[2]


def _have_libcuda() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def _have_cuda_torch() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


# ---- Fakes ----------------------------------------------------------------------

ALIGNED = 0x40000000  # a 16-byte aligned "device" address (on device 0 for the fake driver)


class CudaArray:
    """A stand-in for a CUDA array: only __cuda_array_interface__ (v3)."""

    def __init__(self, shape, typestr="<f4", ptr=ALIGNED, strides=None, readonly=False):
        self.__cuda_array_interface__ = {
            "version": 3, "shape": tuple(shape), "typestr": typestr,
            "data": (ptr, readonly), "strides": strides}


class FakeTorchDevice:
    def __init__(self, type_, index):
        self.type, self.index = type_, index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


class FakeTorchTensor:
    """Duck-types the bits of torch.Tensor the runtime reads (it recognises
    torch tensors by module name, so the fake claims to live in torch)."""

    __module__ = "torch"

    def __init__(self, shape, dtype="float32", device=("cuda", 0), ptr=ALIGNED, strides=None):
        self.shape, self.dtype = tuple(shape), f"torch.{dtype}"
        self.device, self._ptr = FakeTorchDevice(*device), ptr
        self._strides = strides

    def data_ptr(self):
        return self._ptr

    def stride(self):
        return self._strides or rt.args.row_major(self.shape)

    def get_device(self):
        return -1 if self.device.type == "cpu" else self.device.index


class DLPackArray:
    """An object exporting a hand-made DLPack capsule on a CUDA device."""

    _NAME = ctypes.c_char_p(b"dltensor")  # PyCapsule_New keeps the pointer
    _new_capsule = ctypes.PYFUNCTYPE(
        ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
        ("PyCapsule_New", ctypes.pythonapi))

    def __init__(self, shape, code=2, bits=32, device=(2, 0), ptr=ALIGNED, strides=None,
                 byte_offset=0):
        n = len(shape)
        self._shape = (ctypes.c_int64 * n)(*shape)
        self._strides = (ctypes.c_int64 * n)(*strides) if strides else None
        m = rt.dlpack.DLManagedTensor()
        t = m.dl_tensor
        t.data, t.ndim, t.byte_offset = ptr, n, byte_offset
        t.device.device_type, t.device.device_id = device
        t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
        t.shape = ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64))
        if self._strides is not None:
            t.strides = ctypes.cast(self._strides, ctypes.POINTER(ctypes.c_int64))
        self._managed, self._device = m, device
        self.capsules = []

    def __dlpack_device__(self):
        return self._device

    def __dlpack__(self, stream=None):
        capsule = self._new_capsule(ctypes.addressof(self._managed), self._NAME, None)
        self.capsules.append(capsule)
        return capsule


def vadd_dict(**overrides):
    d = {
        "format": "tlc-kernel", "version": 1, "name": "vadd", "target": "sm_90a",
        "ptx": ".version 8.0\n.target sm_90a\n// vadd\n",
        "threads": [128, 1, 1],
        "grid": ["ceildiv(N, 128)", "ceildiv(M, 32)", "1"],
        "shared_bytes": 0,
        "params": [
            {"name": "A", "kind": "tensor", "dtype": "float32", "shape": ["M", "N"],
             "access": "read"},
            {"name": "B", "kind": "tensor", "dtype": "float32", "shape": [64, "N"],
             "access": "read"},
            {"name": "C", "kind": "tensor", "dtype": "float32", "shape": ["M", "N"],
             "access": "write"},
            {"name": "alpha", "kind": "scalar", "dtype": "float32"},
        ],
        "tlc_version": "0.1.0",
    }
    d.update(overrides)
    return d


def vadd_args(m=64, n=1000, **c_kwargs):
    return (CudaArray((m, n)), CudaArray((64, n)), CudaArray((m, n), **c_kwargs), 2.0)


# ---- Artifacts ----------------------------------------------------------------


def test_artifact_round_trip(tmp_path):
    d = vadd_dict(check={"symbols": {"M": 64, "N": 1000}, "expect": {"C": "A + alpha * B"}})
    path = rt.save_artifact(d, tmp_path / "vadd.tlcart")
    assert json.loads(path.read_text(encoding="utf-8")) == d
    k = rt.load_artifact(path)
    assert k.to_dict() == d and k.metadata == d
    assert (k.name, k.ptx, k.threads, k.shared_bytes) == ("vadd", d["ptx"], (128, 1, 1), 0)
    assert k.grid_exprs == ("ceildiv(N, 128)", "ceildiv(M, 32)", "1")
    assert [p.name for p in k.params] == ["A", "B", "C", "alpha"]
    assert k.params[1].shape == (64, "N") and k.params[2].access == "write"
    # Saving a Kernel writes the same thing; nothing else is left in the folder.
    rt.save_artifact(k, tmp_path / "again.tlcart")
    assert json.loads((tmp_path / "again.tlcart").read_text()) == d
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.tlcart", "vadd.tlcart"]


def test_artifact_dims_are_padded_and_metadata_is_copied():
    d = vadd_dict(threads=[256], grid=["ceildiv(N, 256)"])
    k = Kernel.from_dict(d)
    d["name"] = "changed"
    assert k.threads == (256, 1, 1) and k.grid_exprs == ("ceildiv(N, 256)", 1, 1)
    assert k.name == "vadd" and k.to_dict()["name"] == "vadd"


def test_save_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "k.tlcart"
    rt.save_artifact(vadd_dict(), path)
    before = path.read_bytes()

    def broken_replace(src, dst):
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk on fire"):
        rt.save_artifact(vadd_dict(name="other"), path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["k.tlcart"]  # no temporary left


def test_save_refuses_an_invalid_artifact(tmp_path):
    with pytest.raises(ArtifactError):
        rt.save_artifact(vadd_dict(version=2), tmp_path / "k.tlcart")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("change, message", [
    ({"format": "other"}, "format"),
    ({"version": 3}, "version 3 is not supported"),
    ({"ptx": ""}, "ptx"),
    ({"threads": [2048, 1, 1]}, "exceed 1024"),
    ({"threads": [0]}, "threads"),
    ({"grid": []}, "grid"),
    ({"grid": ["ceildiv(K, 128)"]}, "uses K"),
    ({"grid": ["__import__('os')"]}, "not allowed"),
    ({"shared_bytes": -1}, "shared_bytes"),
    ({"params": [{"name": "A", "kind": "tensor", "dtype": "complex64", "shape": [4],
                  "access": "read"}]}, "unknown dtype 'complex64'"),
    ({"params": [{"name": "A", "kind": "tensor", "dtype": "float32", "shape": [4],
                  "access": "sometimes"}]}, "access"),
    ({"params": [{"name": "A", "kind": "tensor", "dtype": "float32", "shape": ["1x"],
                  "access": "read"}]}, "shape"),
    ({"params": [{"name": "A", "kind": "scalar", "dtype": "int32"},
                 {"name": "A", "kind": "scalar", "dtype": "int32"}], "grid": [1]}, "repeat"),
    ({"params": [{"name": "__sm_count__", "kind": "scalar", "dtype": "int32"}], "grid": [1]},
     "__sm_count__ is reserved"),
    ({"params": [{"name": "__sm_count__", "kind": "tensor", "dtype": "float32", "shape": [4],
                  "access": "read"}], "grid": [1]}, "__sm_count__ is reserved"),
    ({"grid": ["min(N, __sm_count)"]}, "uses __sm_count"),
])
def test_malformed_artifacts(change, message):
    with pytest.raises(ArtifactError, match=message):
        Kernel.from_dict(vadd_dict(**change))


def test_load_reports_the_path(tmp_path):
    bad = tmp_path / "bad.tlcart"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ArtifactError, match="bad.tlcart"):
        rt.load_artifact(bad)


# ---- Grid expressions ------------------------------------------------------------


@pytest.mark.parametrize("source, expected", [
    ("ceildiv(N, 128)", 8),
    ("ceildiv(1024, 128)", 8),
    ("ceildiv(M * N, 256) + 1", 251),
    ("min(M, 32) * max(N // 7, 3)", 32 * 142),
    ("(N + 127) // 128 - N % 3", 8 - 1),
    ("-(-N // 128)", 8),
    ("1", 1),
    (7, 7),
])
def test_grid_expressions(source, expected):
    assert GridExpr(source, {"M", "N"})({"M": 64, "N": 1000}) == expected


@pytest.mark.parametrize("source", [
    "__import__('os')", "N ** 2", "N / 2", "1.5", "'s'", "True", "N if N else 1", "[N]",
    "N.real", "abs(N)", "ceildiv(N)", "ceildiv(N, 2, 3)", "min(a=N, b=2)", "lambda: 1",
    "N < 2", "(N, 2)", "N; 1", "",
])
def test_grid_rejects_everything_else(source):
    with pytest.raises(ValueError):
        GridExpr(source)


def test_grid_rejects_unknown_symbols():
    with pytest.raises(ValueError, match="uses K"):
        GridExpr("ceildiv(K, 4)", {"M", "N"})


def test_grid_for_binds_symbols_from_arguments(runtime_lib):
    k = Kernel.from_dict(vadd_dict())
    assert k.grid_for(*vadd_args(m=64, n=1000)) == (8, 2, 1)
    assert k.grid_for(*vadd_args(m=65, n=128)) == (1, 3, 1)


def test_grid_errors_are_argument_errors():
    k = Kernel.from_dict(vadd_dict(grid=["ceildiv(1024, N)", "M - 100"]))
    with pytest.raises(ArgumentError, match="divides by zero with M = 64, N = 0"):
        k.grid_for(*vadd_args(n=0))
    with pytest.raises(ArgumentError, match="grid dim y = 'M - 100' = -36"):
        k.grid_for(*vadd_args(n=4))


# ---- Argument checks ---------------------------------------------------------------


def _check_error(args, *fragments, kernel=None):
    k = kernel or Kernel.from_dict(vadd_dict())
    with pytest.raises(ArgumentError) as e:
        k.grid_for(*args)
    for fragment in fragments:
        assert fragment in str(e.value), str(e.value)
    # A call fails the same way, before touching the driver.
    with pytest.raises(ArgumentError):
        k(*args)
    return str(e.value)


def test_wrong_argument_count():
    a, b, c, alpha = vadd_args()
    _check_error((a, b, c), "vadd takes 4 arguments (A, B, C, alpha), got 3", "missing 'alpha'")
    _check_error((a, b, c, alpha, 1), "got 5", "after 'alpha'")


def test_wrong_dtype():
    a, b, _, alpha = vadd_args()
    _check_error((a, b, CudaArray((64, 1000), "<f2"), alpha),
                 "argument 'C' (param 3 of vadd): expected dtype float32, got float16")
    _check_error((CudaArray((64, 1000), "<c8"), b, a, alpha),
                 "argument 'A' (param 1 of vadd): expected dtype float32",
                 "typestr '<c8'")


def test_wrong_rank_and_static_shape():
    a, _, c, alpha = vadd_args()
    _check_error((a, CudaArray((64, 10, 100)), c, alpha),
                 "argument 'B' (param 2 of vadd)", "rank-2", "[64, N]", "rank 3")
    _check_error((a, CudaArray((32, 1000)), c, alpha),
                 "argument 'B' (param 2 of vadd): dim 0 must be 64, got 32")


def test_inconsistent_shape_symbols():
    a, b, _, alpha = vadd_args(m=64, n=1000)
    message = _check_error((a, b, CudaArray((64, 999)), alpha), "argument 'C' (param 3 of vadd)")
    assert "dim 1 is symbol N = 999" in message
    assert "argument 'A' dim 1 set N = 1000" in message


def test_non_contiguous():
    a, b, _, alpha = vadd_args()
    transposed = CudaArray((64, 1000), strides=(4, 256))
    _check_error((a, b, transposed, alpha), "argument 'C' (param 3 of vadd)", "row-major")


def test_size_one_dims_strides_are_free():
    d = vadd_dict(params=[{"name": "X", "kind": "tensor", "dtype": "float32",
                           "shape": [1, "N"], "access": "read"}], grid=["N"])
    k = Kernel.from_dict(d)
    assert k.grid_for(CudaArray((1, 8), strides=(12345 * 4, 4))) == (8, 1, 1)


def test_misaligned_pointer():
    a, _, c, alpha = vadd_args()
    _check_error((a, CudaArray((64, 1000), ptr=ALIGNED + 4), c, alpha),
                 "argument 'B' (param 2 of vadd)", "not 16-byte aligned")


def test_read_only_output():
    a, b, _, alpha = vadd_args()
    _check_error((a, b, CudaArray((64, 1000), readonly=True), alpha),
                 "argument 'C' (param 3 of vadd)", "read-only")


def test_host_arrays_are_rejected():
    np = pytest.importorskip("numpy")
    a, b, c, alpha = vadd_args()
    host = np.zeros((64, 1000), np.float32)
    _check_error((host, b, c, alpha), "argument 'A' (param 1 of vadd)", "CPU memory",
                 "a CUDA tensor is required")
    _check_error((a, b, [[1.0]], alpha), "argument 'C' (param 3 of vadd)",
                 "expected a CUDA tensor", "got list")
    _check_error((a, b, c, CudaArray(())), "argument 'alpha' (param 4 of vadd)",
                 "expected a number")


def test_torch_tensors_are_read_without_torch():
    a, b, c, alpha = vadd_args()
    k = Kernel.from_dict(vadd_dict())
    t = FakeTorchTensor((64, 1000))
    assert k.grid_for(t, b, c, alpha) == (8, 2, 1)
    _check_error((FakeTorchTensor((64, 1000), device=("cpu", None)), b, c, alpha),
                 "argument 'A' (param 1 of vadd): is a tensor on cpu",
                 "a CUDA tensor is required")
    _check_error((a, b, FakeTorchTensor((64, 1000), "bfloat16"), alpha),
                 "argument 'C' (param 3 of vadd): expected dtype float32, got bfloat16")


def test_tensors_on_two_devices():
    _, _, c, alpha = vadd_args()
    k = Kernel.from_dict(vadd_dict())
    args = (FakeTorchTensor((64, 1000)), FakeTorchTensor((64, 1000), device=("cuda", 1)), c, alpha)
    _check_error(args, "argument 'B' (param 2 of vadd): is on cuda:1", kernel=k)


def test_dlpack_arguments():
    k = Kernel.from_dict(vadd_dict())
    _, b, c, alpha = vadd_args()
    a = DLPackArray((64, 1000))
    assert k.grid_for(a, b, c, alpha) == (8, 2, 1)
    # The capsule was only read: it is still an unconsumed "dltensor".
    assert ctypes.pythonapi.PyCapsule_IsValid(ctypes.py_object(a.capsules[-1]), b"dltensor")
    _check_error((DLPackArray((64, 1000), bits=64), b, c, alpha),
                 "argument 'A' (param 1 of vadd): expected dtype float32, got float64")
    _check_error((DLPackArray((64, 1000), strides=(1, 64)), b, c, alpha),
                 "argument 'A' (param 1 of vadd)", "row-major")
    _check_error((DLPackArray((64, 1000), device=(1, 0)), b, c, alpha),
                 "argument 'A' (param 1 of vadd)", "CPU memory")
    _check_error((DLPackArray((64, 1000), byte_offset=4), b, c, alpha),
                 "argument 'A' (param 1 of vadd)", "not 16-byte aligned")


@pytest.mark.parametrize("dtype, value, fragment", [
    ("int32", 1.5, "expected an int for a int32 scalar, got float 1.5"),
    ("int32", 2**31, "does not fit in int32"),
    ("uint8", -1, "does not fit in uint8"),
    ("float32", "1", "expected a number"),
    ("float16", 1e6, "does not fit in float16"),
    ("bool", 2, "expected a bool"),
])
def test_bad_scalars(dtype, value, fragment):
    k = Kernel.from_dict(vadd_dict(
        params=[{"name": "s", "kind": "scalar", "dtype": dtype}], grid=[1]))
    _check_error((value,), "argument 's' (param 1 of vadd)", fragment, kernel=k)


def test_scalar_encodings():
    p = rt.Param(1, "s", "scalar", "float16")
    assert rt.args.scalar_value(1.0, p, "").value == 0x3C00
    p = rt.Param(1, "s", "scalar", "bfloat16")
    assert rt.args.scalar_value(1.0, p, "").value == 0x3F80
    assert rt.args.scalar_value(float("nan"), p, "").value == 0x7FC0
    p = rt.Param(1, "s", "scalar", "int64")
    assert rt.args.scalar_value(-(2**63), p, "").value == -(2**63)


def test_bad_stream():
    k = Kernel.from_dict(vadd_dict())
    with pytest.raises(ArgumentError, match="stream="):
        k(*vadd_args(), stream="fast")


# ---- Launching without a GPU ---------------------------------------------------------


@pytest.mark.skipif(_have_libcuda(), reason="this machine has a CUDA driver")
def test_launch_without_a_driver(runtime_lib):
    k = Kernel.from_dict(vadd_dict())
    with pytest.raises(LaunchError, match=r"cannot load the CUDA driver \(libcuda.so.1\)") as e:
        k(*vadd_args())
    assert "a machine with an NVIDIA GPU and driver is needed" in str(e.value)
    with pytest.raises(LaunchError, match="cannot load the CUDA driver"):
        rt.synchronize()


def test_empty_problem_launches_nothing():
    # N = 0 gives a zero-sized grid: a no-op, even without a driver.
    Kernel.from_dict(vadd_dict())(*vadd_args(n=0))


def test_missing_runtime_library(tmp_path, monkeypatch):
    monkeypatch.setenv("TLC_RUNTIME_LIB", str(tmp_path / "nope.so"))
    with pytest.raises(LaunchError, match="nope.so does not exist.*TLC_RUNTIME_LIB"):
        Kernel.from_dict(vadd_dict())(*vadd_args())


def test_the_build_puts_the_native_launch_path_beside_the_library():
    # runtime/CMakeLists.txt builds tlc.runtime._launch wherever it builds
    # libtlc_runtime.so (nanobind needs Python's development files anyway).
    import tlc

    built = [Path(f, "runtime") for f in tlc.__path__
             if Path(f, "runtime", "libtlc_runtime.so").exists()]
    if not built:
        pytest.skip("no built tlc (runtime/libtlc_runtime.so) to look into")
    assert any(list(f.glob("_launch.*")) for f in built), built


def test_import_does_not_load_anything():
    code = ("import sys, tlc.runtime; "
            "assert 'torch' not in sys.modules; "
            "assert not tlc.runtime.driver._loaded; "
            "assert 'tlc.runtime._launch' not in sys.modules")
    env = dict(os.environ, TLC_RUNTIME_LIB="/nonexistent/lib.so", PYTHONPATH=str(ROOT))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


# ---- The C library against a fake driver -------------------------------------------

FAKE_LIBCUDA = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *current;
static int loads;

static FILE *out(void) {
  static FILE *f;
  if (!f) f = fopen(getenv("FAKE_CUDA_LOG"), "a");
  return f;
}
#define LOG(...) (fprintf(out(), __VA_ARGS__), fflush(out()))

int cuInit(unsigned flags) { return flags ? 1 : 0; }
int cuGetErrorName(int e, const char **s) {
  *s = e == 1 ? "CUDA_ERROR_INVALID_VALUE" : e == 218 ? "CUDA_ERROR_INVALID_PTX"
     : e == 500 ? "CUDA_ERROR_NOT_FOUND" : NULL;
  return *s ? 0 : 1;
}
int cuGetErrorString(int e, const char **s) {
  *s = e == 1 ? "invalid argument" : e == 218 ? "a PTX JIT compilation failed"
     : e == 500 ? "named symbol not found" : NULL;
  return *s ? 0 : 1;
}
int cuDeviceGet(int *d, int ordinal) { *d = ordinal; return ordinal < 4 ? 0 : 101; }
int cuDeviceGetAttribute(int *v, int attr, int d) {
  /* FAKE_CUDA_CC: the compute capability as "major.minor" (9.0 by default). */
  const char *cc = getenv("FAKE_CUDA_CC") ? getenv("FAKE_CUDA_CC") : "9.0";
  if (attr == 16) { /* FAKE_CUDA_SMS: the multiprocessor count (132 by default) */
    LOG("sm_count of device %d\n", d);
    *v = getenv("FAKE_CUDA_SMS") ? atoi(getenv("FAKE_CUDA_SMS")) : 132;
    return 0;
  }
  *v = attr == 97 ? 232448 : attr == 75 ? atoi(cc) : attr == 76 ? atoi(strchr(cc, '.') + 1) : 0;
  return 0;
}
int cuDevicePrimaryCtxRetain(void **c, int d) {
  LOG("retain %d\n", d); *c = (void *)(uintptr_t)(0x1000 + d); return 0;
}
int cuCtxGetCurrent(void **c) { *c = current; return 0; }
int cuCtxSetCurrent(void *c) { current = c; return 0; }
int cuCtxGetDevice(int *d) {
  if (!current) return 201;
  *d = (int)((uintptr_t)current - 0x1000); return 0;
}
int cuCtxSynchronize(void) { LOG("sync\n"); return 0; }
int cuPointerGetAttribute(void *data, int attr, unsigned long long p) {
  if (attr != 9 || p < 0x10000) return 1;
  *(int *)data = (int)(p >> 44); return 0;
}
int cuModuleLoadDataEx(void **m, const void *image, unsigned n, int *opt, void **val) {
  LOG("load options %u:%d,%d,%d,%d\n", n, opt[0], opt[1], opt[2], opt[3]);
  if (strstr(image, "SYNTAX_ERROR")) {
    for (unsigned i = 0; i < n; i++)
      if (opt[i] == 5)
        snprintf(val[i], (size_t)(uintptr_t)val[i + 1], "ptxas: syntax error at line 3");
    return 218;
  }
  *m = (void *)(uintptr_t)(0x2000 + ++loads); return 0;
}
int cuModuleGetFunction(void **f, void *m, const char *name) {
  if (!strcmp(name, "missing")) return 500;
  LOG("function %s in module %#lx\n", name, (unsigned long)(uintptr_t)m);
  *f = (void *)0x3000; return 0;
}
int cuFuncSetAttribute(void *f, int attr, int value) {
  (void)f; LOG("attribute %d = %d\n", attr, value); return value > 232448 ? 1 : 0;
}
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                   unsigned by, unsigned bz, unsigned smem, void *stream,
                   void **params, void **extra) {
  (void)f; (void)extra;
  if (smem == 12345) return 1;
  LOG("launch %u %u %u %u %u %u %u %#lx ctx %#lx\n", gx, gy, gz, bx, by, bz, smem,
      (unsigned long)(uintptr_t)stream, (unsigned long)(uintptr_t)current);
  /* FAKE_CUDA_PARAM_SIZES: the byte size of each parameter, e.g. "8,8,4". */
  char sizes[4096];
  snprintf(sizes, sizeof sizes, "%s", getenv("FAKE_CUDA_PARAM_SIZES"));
  int i = 0;
  for (char *s = strtok(sizes, ","); s; s = strtok(NULL, ","), i++) {
    LOG("param ");
    for (int b = 0; b < atoi(s); b++) LOG("%02x", ((unsigned char *)params[i])[b]);
    /* A 128-byte parameter is a CUtensorMap, which the driver may read as
       128-byte aligned. */
    if (atoi(s) == 128) LOG(" align128 %d", (uintptr_t)params[i] % 128 == 0);
    LOG("\n");
  }
  return 0;
}
/* Device memory from 0x50000000 up, 64 KiB granules. */
static unsigned long long next_alloc = 0x50000000;
int cuMemAlloc_v2(unsigned long long *p, size_t n) {
  LOG("alloc %zu ctx %#lx\n", n, (unsigned long)(uintptr_t)current);
  *p = next_alloc; next_alloc += (n + 0xffff) & ~0xffffull; return 0;
}
int cuMemFree_v2(unsigned long long p) { LOG("free %#llx\n", p); return 0; }
int cuMemsetD8Async(unsigned long long p, unsigned char v, size_t n, void *stream) {
  LOG("memset %#llx %u %zu %#lx ctx %#lx\n", p, v, n, (unsigned long)(uintptr_t)stream,
      (unsigned long)(uintptr_t)current);
  return 0;
}
#ifndef FAKE_NO_TMA /* a driver older than CUDA 12.0 */
/* Logs its arguments; the map is the address, then the innermost size, then
   0x5a bytes. Address 0xbad0000 fails. */
int cuTensorMapEncodeTiled(void *map, int type, unsigned rank, void *address,
                           const uint64_t *dims, const uint64_t *strides,
                           const uint32_t *box, const uint32_t *elem, int interleave,
                           int swizzle, int l2, int oob) {
  LOG("encode type %d rank %u address %#lx aligned %d dims", type, rank,
      (unsigned long)(uintptr_t)address, (uintptr_t)map % 128 == 0);
  for (unsigned i = 0; i < rank; i++) LOG(" %lu", (unsigned long)dims[i]);
  LOG(" strides");
  for (unsigned i = 0; i + 1 < rank; i++) LOG(" %lu", (unsigned long)strides[i]);
  LOG(" box");
  for (unsigned i = 0; i < rank; i++) LOG(" %u", box[i]);
  LOG(" elementstrides");
  for (unsigned i = 0; i < rank; i++) LOG(" %u", elem[i]);
  LOG(" interleave %d swizzle %d l2 %d oob %d\n", interleave, swizzle, l2, oob);
  if ((uintptr_t)address == 0xbad0000) return 1;
  memset(map, 0x5a, 128);
  memcpy(map, &address, 8);
  memcpy((char *)map + 8, &dims[0], 8);
  return 0;
}
#endif
"""

# The subprocess side: tlc.runtime, the fakes above and a vadd factory.
PRELUDE = f"""
import sys
sys.path.insert(0, {str(ROOT / "test/python")!r})
import test_runtime as t
import tlc.runtime as rt
def attempt(fn):
    try:
        fn()
    except Exception as e:
        print("ERROR", type(e).__name__, e)
"""


def run_fake(fake_driver, tmp_path, body: str, sizes=(), cc="9.0", sms=132, native=True):
    """Run `body` in a subprocess whose libcuda.so.1 is the fake (devices of
    compute capability `cc` with `sms` multiprocessors), with the native
    launch path where it is built unless `native` is False; returns (stdout,
    lines the fake driver logged)."""
    log = tmp_path / "driver.log"
    log.unlink(missing_ok=True)
    env = dict(os.environ, LD_LIBRARY_PATH=str(fake_driver), FAKE_CUDA_LOG=str(log),
               FAKE_CUDA_PARAM_SIZES=",".join(map(str, sizes)) or "0",
               PYTHONPATH=str(ROOT), FAKE_CUDA_CC=cc, FAKE_CUDA_SMS=str(sms),
               TLC_NATIVE_LAUNCH="1" if native else "0")
    done = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout, (log.read_text().splitlines() if log.exists() else [])


def _params(lines):
    return [bytes.fromhex(line.split()[1]) for line in lines if line.startswith("param ")]


def test_fake_driver_launch_abi(fake_driver, tmp_path):
    out, log = run_fake(fake_driver, tmp_path, """
        k = rt.Kernel.from_dict(t.vadd_dict())
        a, b, c = (t.CudaArray(s, ptr=p) for s, p in
                   [((64, 1000), 0x10000), ((64, 1000), 0x20000), ((64, 1000), 0x30000)])
        k(a, b, c, 0.5, stream=0x77)
        k(a, b, c, 0.5)
        rt.synchronize()
    """, sizes=[8] * 21 + [4])
    assert out == ""
    assert log[0] == "retain 0"  # no current context: device 0's primary one
    assert log.count("load options 4:5,6,3,4") == 1  # JIT-loaded once for two launches
    launches = [line for line in log if line.startswith("launch")]
    assert launches == ["launch 8 2 1 128 1 1 0 0x77 ctx 0x1000",
                        "launch 8 2 1 128 1 1 0 0 ctx 0x1000"]
    values = _params(log)[:22]
    descriptor = [struct.unpack("<Q", v)[0] for v in values[:21]]
    assert descriptor == [0x10000, 0x10000, 0, 64, 1000, 1000, 1,
                          0x20000, 0x20000, 0, 64, 1000, 1000, 1,
                          0x30000, 0x30000, 0, 64, 1000, 1000, 1]
    assert struct.unpack("<f", values[21]) == (0.5,)
    assert log[-1] == "sync"


def sequence_dict(**overrides):
    """A version-2 artifact: two vadd kernels taking the scratch S [2, M, N]."""
    program = vadd_dict()
    scratch = {"name": "S", "dtype": "float32", "shape": [2, "M", "N"]}
    kernels = [vadd_dict(name=name, params=program["params"] + [
        dict(scratch, kind="tensor", access=access)]) for name, access in
        (("vadd_k0", "write"), ("vadd_k1", "read"))]
    d = {"format": "tlc-kernel", "version": 2, "name": "vadd", "target": "sm_90a",
         "params": program["params"], "scratch": [scratch], "kernels": kernels,
         "tlc_version": "0.1.0"}
    d.update(overrides)
    return d


def test_fake_driver_sequence_launches_in_order_with_driver_scratch(fake_driver, tmp_path):
    """Without torch tensors the scratch is one driver allocation per stream,
    reused by the next call on that stream, grown when a call needs more."""
    out, log = run_fake(fake_driver, tmp_path, """
        k = rt.Kernel.from_dict(t.sequence_dict())
        print(type(k).__name__, [x.name for x in k.kernels])
        a, b, c = (t.CudaArray(s, ptr=p) for s, p in
                   [((64, 1000), 0x10000), ((64, 1000), 0x20000), ((64, 1000), 0x30000)])
        k(a, b, c, 0.5, stream=0x77)
        k(a, b, c, 0.5, stream=0x77)
        a, b, c = (t.CudaArray(s, ptr=p) for s, p in
                   [((64, 2000), 0x10000), ((64, 2000), 0x20000), ((64, 2000), 0x30000)])
        k(a, b, c, 0.5, stream=0x77)
    """, sizes=[8] * 21 + [4] + [8] * 9)
    assert out.splitlines() == ["KernelSequence ['vadd_k0', 'vadd_k1']"]
    allocs = [line for line in log if line.startswith(("alloc", "free", "sync"))]
    # 2 x 64 x 1000 floats, reused by the second call; grown for the third;
    # freed when the sequence is collected (here at exit).
    assert allocs == ["alloc 512000 ctx 0x1000", "sync", "free 0x50000000",
                      "alloc 1024000 ctx 0x1000", "free 0x50080000"]
    launches = [line for line in log if line.startswith("launch")]
    assert launches == ["launch 8 2 1 128 1 1 0 0x77 ctx 0x1000"] * 4 + \
        ["launch 16 2 1 128 1 1 0 0x77 ctx 0x1000"] * 2
    values = [struct.unpack("<Q", v)[0] if len(v) == 8 else None for v in _params(log)]
    for launch in range(4):  # both kernels get the scratch after A, B, C and alpha
        assert values[31 * launch + 22:31 * launch + 31] == \
            [0x50000000, 0x50000000, 0, 2, 64, 1000, 64000, 1000, 1]
    assert values[31 * 4 + 22] == 0x50080000


def test_sequence_artifacts_are_checked():
    assert isinstance(Kernel.from_dict(sequence_dict()), rt.KernelSequence)
    bad = sequence_dict()
    bad["kernels"][1]["params"] = bad["kernels"][1]["params"][:-1]
    with pytest.raises(ArtifactError, match="kernel 'vadd_k1' takes"):
        Kernel.from_dict(bad)
    with pytest.raises(ArtifactError, match="shape must list"):
        Kernel.from_dict(sequence_dict(scratch=[{"name": "S", "dtype": "float32",
                                                 "shape": ["K"]}]))
    with pytest.raises(ArtifactError, match="'kernels' lists no kernel"):
        Kernel.from_dict(sequence_dict(kernels=[]))


def streamk_dict(flags=None):
    """A sequence with per-multiprocessor scratch, as stream-K's: partials P
    [__sm_count__, M] and zero-filled flags F [__sm_count__] (or `flags`)."""
    partials = {"name": "P", "dtype": "float32", "shape": ["__sm_count__", "M"]}
    flags = flags or {"name": "F", "dtype": "int32", "shape": ["__sm_count__"],
                      "zero_fill": True}
    tensors = [{"name": s["name"], "kind": "tensor", "dtype": s["dtype"], "shape": s["shape"],
                "access": "readwrite"} for s in (partials, flags)]
    kernels = [vadd_dict(name=name, params=vadd_dict()["params"] + tensors)
               for name in ("vadd_k0", "vadd_k1")]
    return sequence_dict(scratch=[partials, flags], kernels=kernels)


def test_scratch_zero_fill_and_sm_count_are_checked():
    k = Kernel.from_dict(streamk_dict())
    assert [(s.shape, s.zero_fill) for s in k.scratch] == [
        (("__sm_count__", "M"), False), (("__sm_count__",), True)]
    assert k._uses_sm_count and not Kernel.from_dict(sequence_dict())._uses_sm_count
    assert all(kernel._uses_sm_count for kernel in k.kernels)  # a size names it
    for bad in ("yes", 1, None):
        with pytest.raises(ArtifactError,
                           match=rf"scratch 2 \('F'\): zero_fill must be true or false, "
                                 rf"got {bad!r}"):
            Kernel.from_dict(streamk_dict({"name": "F", "dtype": "int32",
                                           "shape": ["__sm_count__"], "zero_fill": bad}))
    # Other symbols are still only the parameters' sizes.
    with pytest.raises(ArtifactError, match=r"shape must list non-negative ints, size symbols "
                                            r"of the parameters \(M, N\) and __sm_count__, "
                                            r"got \['__sm_count', 'M'\]"):
        Kernel.from_dict(sequence_dict(scratch=[{"name": "S", "dtype": "float32",
                                                 "shape": ["__sm_count", "M"]}]))
    view = {"name": "V", "dtype": "float32", "shape": ["N", "M"], "view_of": "A"}
    with pytest.raises(ArtifactError, match=r"scratch 1 \('V'\): a view takes no zero_fill"):
        Kernel.from_dict(sequence_dict(scratch=[dict(view, zero_fill=False)]))


def test_scratch_sized_with_sm_count():
    partials, flags = Kernel.from_dict(streamk_dict()).scratch
    assert partials.sized({"M": 64, "N": 1000}, "vadd", 132) == (132, 64)
    assert flags.sized({}, "vadd", 100) == (100,)
    with pytest.raises(ArgumentError, match="scratch tensor 'F' has size '__sm_count__', "
                                            "which no argument gave"):
        flags.sized({"M": 64}, "vadd")


def test_fake_driver_sequence_sm_count_and_zero_fill(fake_driver, tmp_path):
    """Driver scratch: sized by the device's multiprocessor count (asked once,
    as grids ask it), the zero_fill entry cleared on the call's stream before
    each call's launches."""
    out, log = run_fake(fake_driver, tmp_path, """
        k = rt.Kernel.from_dict(t.streamk_dict())
        a, b, c = (t.CudaArray(s, ptr=p) for s, p in
                   [((64, 1000), 0x10000), ((64, 1000), 0x20000), ((64, 1000), 0x30000)])
        k(a, b, c, 0.5, stream=0x77)
        k(a, b, c, 0.5)
        print([tuple(x.shape) for x in k._driver_scratch(
            [s.sized({"M": 64}, k.name, 100) for s in k.scratch],
            rt.args.bind(k.name, k.params, (a, b, c, 0.5)), 0x77)])
    """, sizes=[8] * 21 + [4] + [8] * 12, sms=100)
    assert out.splitlines() == ["[(100, 64), (100,)]"]
    events = [line for line in log if line.startswith(("sm_count", "alloc", "memset", "launch"))]
    # P: 100 x 64 floats (25600 bytes, a multiple of 256), then F: 100 int32s.
    assert events == ["sm_count of device 0", "alloc 26000 ctx 0x1000",
                      "memset 0x50006400 0 400 0x77 ctx 0x1000"] + \
        ["launch 8 2 1 128 1 1 0 0x77 ctx 0x1000"] * 2 + \
        ["alloc 26000 ctx 0x1000",  # the default stream's own block
         "memset 0x50016400 0 400 0 ctx 0x1000"] + ["launch 8 2 1 128 1 1 0 0 ctx 0x1000"] * 2 + \
        ["memset 0x50006400 0 400 0x77 ctx 0x1000"]
    values = [struct.unpack("<Q", v)[0] if len(v) == 8 else None for v in _params(log)]
    assert values[22:34] == [0x50000000, 0x50000000, 0, 100, 64, 64, 1,
                             0x50006400, 0x50006400, 0, 100, 1]


def test_fake_driver_sequence_zero_fill_with_torch_tensors(fake_driver, tmp_path):
    # torch tensors: torch.zeros for the zero_fill entry, torch.empty for the
    # others, sized by the SM count of the tensors' device (cached per call
    # key, which holds the device).
    out, log = run_fake(fake_driver, tmp_path, FAKE_TORCH_EMPTY + textwrap.dedent("""
        torch.device = lambda kind, index: t.FakeTorchDevice(kind, index)
        torch.int32 = "int32"
        empty = torch.empty
        def made(kind, alloc):
            def make(shape, dtype, device):
                print(kind, tuple(shape), dtype, device)
                return alloc(shape, dtype, device)
            return make
        torch.empty, torch.zeros = made("empty", empty), made("zeros", empty)
        k = rt.Kernel.from_dict(t.streamk_dict())
        for device in (0, 0, 1):
            a, b, c = (T((64, 1000), device=("cuda", device), ptr=(device << 44) + p)
                       for p in (0x10000, 0x20000, 0x30000))
            k(a, b, c, 0.5)
    """), sizes=[8] * 21 + [4] + [8] * 12, sms=100)
    assert out.splitlines() == ["empty (100, 64) float32 cuda:0", "zeros (100,) int32 cuda:0"] * 2 \
        + ["empty (100, 64) float32 cuda:1", "zeros (100,) int32 cuda:1"]
    assert [line for line in log if line.startswith("sm_count")] == \
        ["sm_count of device 0", "sm_count of device 1"]
    assert sum(line.startswith("launch") for line in log) == 6 and "memset" not in str(log)


def test_fake_driver_refuses_code_the_device_cannot_run(fake_driver, tmp_path):
    # sm_90a code (wgmma, setmaxnreg) runs on compute capability 9.0 only; sm_80
    # code runs on 8.0 and later. Refused before any module is loaded.
    body = """
        for target in ("sm_90a", "sm_90", "sm_80"):
            k = rt.Kernel.from_dict(t.vadd_dict(target=target))
            try:
                k(t.CudaArray((64, 1000), ptr=0x10000), t.CudaArray((64, 1000), ptr=0x20000),
                  t.CudaArray((64, 1000), ptr=0x30000), 0.5)
                print(target, "launched")
            except rt.LaunchError as e:
                print(target, e)
    """
    out, log = run_fake(fake_driver, tmp_path, body, cc="8.6")
    assert out.splitlines() == [
        "sm_90a vadd: built for sm_90a, which runs on compute capability 9.0 only, but the "
        "device is sm_86 (compute capability 8.6); compile it with target='sm_86'",
        "sm_90 vadd: built for sm_90, which runs on compute capability 9.0 and later, but the "
        "device is sm_86 (compute capability 8.6); compile it with target='sm_86'",
        "sm_80 launched"]
    assert sum(line.startswith("load") for line in log) == 1
    out, _ = run_fake(fake_driver, tmp_path, body, cc="9.0")
    assert out.splitlines() == ["sm_90a launched", "sm_90 launched", "sm_80 launched"]


def test_fake_driver_module_cache_and_devices(fake_driver, tmp_path):
    # Two Kernels with the same PTX share one module (the C cache); a tensor
    # on device 1 (told by cuPointerGetAttribute) switches to its context.
    _, log = run_fake(fake_driver, tmp_path, """
        d = t.vadd_dict(grid=[1], params=[
            {"name": "X", "kind": "tensor", "dtype": "int8", "shape": [4], "access": "read"}])
        x0 = t.CudaArray((4,), "|i1", ptr=0x10000)
        x1 = t.CudaArray((4,), "|i1", ptr=(1 << 44) + 0x10000)
        rt.Kernel.from_dict(d)(x0)
        rt.Kernel.from_dict(d)(x0)
        rt.Kernel.from_dict(d)(x1)
        rt.Kernel.from_dict(d)(t.DLPackArray((4,), code=0, bits=8, device=(2, 3)))
    """)
    loads = [line for line in log if line.startswith(("load", "retain", "launch"))]
    assert loads == ["retain 0", "load options 4:5,6,3,4", "launch 1 1 1 128 1 1 0 0 ctx 0x1000",
                     "launch 1 1 1 128 1 1 0 0 ctx 0x1000",
                     "retain 1", "load options 4:5,6,3,4", "launch 1 1 1 128 1 1 0 0 ctx 0x1001",
                     "retain 3", "load options 4:5,6,3,4", "launch 1 1 1 128 1 1 0 0 ctx 0x1003"]


def test_fake_driver_errors(fake_driver, tmp_path):
    out, log = run_fake(fake_driver, tmp_path, """
        args = t.vadd_args()
        bad = t.vadd_dict(ptx=".version 8.0\\nSYNTAX_ERROR\\n")
        attempt(lambda: rt.Kernel.from_dict(bad)(*args))
        attempt(lambda: rt.Kernel.from_dict(t.vadd_dict(name="missing"))(*args))
        attempt(lambda: rt.Kernel.from_dict(t.vadd_dict(shared_bytes=300000))(*args))
        attempt(lambda: rt.Kernel.from_dict(t.vadd_dict(shared_bytes=12345))(*args))
        rt.Kernel.from_dict(t.vadd_dict(shared_bytes=100000))(*args)
        host = t.CudaArray((64, 1000), ptr=0x100)
        attempt(lambda: rt.Kernel.from_dict(t.vadd_dict())(host, *args[1:]))
    """)
    errors = out.split("ERROR ")[1:]
    assert errors[0].startswith(
        "LaunchError cuModuleLoadDataEx failed for kernel 'vadd': "
        "CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)")
    assert "JIT error log:\nptxas: syntax error at line 3" in errors[0]
    assert errors[1].startswith("LaunchError cuModuleGetFunction failed for kernel 'missing': "
                                "CUDA_ERROR_NOT_FOUND (named symbol not found)")
    assert "failed for kernel 'vadd': CUDA_ERROR_INVALID_VALUE (invalid argument)" in errors[2]
    assert "asked for 300000 bytes" in errors[2] and "at most 232448" in errors[2]
    assert errors[3].startswith(
        "LaunchError cuLaunchKernel failed for kernel 'vadd': CUDA_ERROR_INVALID_VALUE "
        "(invalid argument) [grid 8x2x1, block 128x1x1, dynamic shared memory 12345 bytes]")
    assert "attribute 8 = 100000" in log  # the attribute is set for any dynamic size
    assert "attribute 8 = 12345" in log
    assert errors[4].startswith("ArgumentError vadd: a tensor argument: cuPointerGetAttribute")
    assert len(errors) == 5


FAKE_TORCH = """
import contextlib, types
torch = types.ModuleType("torch")
torch.cuda = types.SimpleNamespace(
    device=lambda d: contextlib.nullcontext(),
    current_stream=lambda d: types.SimpleNamespace(cuda_stream=0x50 + d))
torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda d: 0x50 + d)
sys.modules["torch"] = torch
T = t.FakeTorchTensor
"""


@pytest.fixture(params=["native", "python"])
def launch_path(request, launch_module):
    """Each fast-path test runs with the native launch path and without it
    (the Python fast path, as where tlc.runtime._launch is not built)."""
    if request.param == "native" and launch_module is None:
        pytest.skip("tlc.runtime._launch is not built and cannot be here")
    return request.param


def test_fake_driver_torch_fast_path(fake_driver, tmp_path, launch_path):
    # The first call with torch tensors goes through the full checks and
    # leaves a plan; the next ones with the same shapes launch from it, with
    # the new pointers and scalars, on torch's current stream or the given
    # one. Other shapes, a misaligned pointer or a bad scalar take the full
    # checks (and their errors) again. The launches from plans carry the
    # bytes checked ones do, natively and in Python.
    native = launch_path == "native"
    out, log = run_fake(fake_driver, tmp_path, FAKE_TORCH + textwrap.dedent("""
        k = rt.Kernel.from_dict(t.vadd_dict())
        a, b, c = T((64, 1000), ptr=0x10000), T((64, 1000), ptr=0x20000), T((64, 1000), ptr=0x30000)
        k(a, b, c, 0.5)
        print("plans", len(k._plans))
        k(a, b, T((64, 1000), ptr=0x40000), 1.5)
        k(a, b, c, 0.5, stream=0x77)
        attempt(lambda: k(a, b, T((64, 1000), ptr=0x40004), 0.5))
        attempt(lambda: k(a, b, c, "x"))
        k(T((32, 1000), ptr=0x10000), b, T((32, 1000), ptr=0x30000), 0.5)
        print("plans", len(k._plans))
        one = [T((64, 1000), device=("cuda", 1), ptr=(1 << 44) + 0x10000) for _ in range(3)]
        k(*one, 0.5)
        k(*one, 0.5)
        k(a, b, c, 0.5)  # device 0's context for this launch only
        print("current", hex(rt.driver.runtime().current_context()))
        n = k._native_launcher
        print("native", n and (n.launched, n.missed, n.n_plans))
    """), sizes=[8] * 21 + [4], native=native)
    lines = out.splitlines()
    # Natively: the 2nd, 3rd, 8th and 9th calls; the other 5 missed.
    assert lines[5] == ("native (4, 5, 3)" if native else "native None")
    assert lines[0] == "plans 1"
    assert lines[1].startswith("ERROR ArgumentError argument 'C' (param 3 of vadd): data pointer")
    assert lines[2].startswith("ERROR ArgumentError argument 'alpha' (param 4 of vadd): "
                               "expected a number")
    assert lines[3] == "plans 2"
    # The full checks left device 1's context current (torch's guard would
    # restore torch's device; the fake's does nothing); the fast path ran the
    # last launch in device 0's and gave device 1's back.
    assert lines[4] == "current 0x1001"
    launches = [line for line in log if line.startswith("launch")]
    assert launches == ["launch 8 2 1 128 1 1 0 0x50 ctx 0x1000",
                        "launch 8 2 1 128 1 1 0 0x50 ctx 0x1000",
                        "launch 8 2 1 128 1 1 0 0x77 ctx 0x1000",
                        "launch 8 1 1 128 1 1 0 0x50 ctx 0x1000",
                        "launch 8 2 1 128 1 1 0 0x51 ctx 0x1001",
                        "launch 8 2 1 128 1 1 0 0x51 ctx 0x1001",
                        "launch 8 2 1 128 1 1 0 0x50 ctx 0x1000"]
    values = _params(log)
    calls = [values[i:i + 22] for i in range(0, len(values), 22)]
    assert len(calls) == 7
    descriptor = lambda call: [struct.unpack("<Q", v)[0] for v in call[:21]]  # noqa: E731
    first = descriptor(calls[0])
    assert first == [0x10000, 0x10000, 0, 64, 1000, 1000, 1,
                     0x20000, 0x20000, 0, 64, 1000, 1000, 1,
                     0x30000, 0x30000, 0, 64, 1000, 1000, 1]
    assert descriptor(calls[1]) == first[:14] + [0x40000, 0x40000] + first[16:]
    assert [struct.unpack("<f", c[21])[0] for c in calls] == [0.5, 1.5, 0.5, 0.5, 0.5, 0.5, 0.5]
    assert descriptor(calls[2]) == first
    assert descriptor(calls[3])[3:5] == [32, 1000] and descriptor(calls[3])[5] == 1000
    assert descriptor(calls[5])[0] == (1 << 44) + 0x10000
    assert descriptor(calls[6]) == first


def sm_dict(**overrides):
    """A persistent-style kernel: at most one block per multiprocessor."""
    return vadd_dict(grid=["min(ceildiv(N, 128), __sm_count__)"], params=[
        {"name": "X", "kind": "tensor", "dtype": "float32", "shape": ["N"], "access": "read"}],
        **overrides)


def test_sm_count_symbol_in_grids():
    k = Kernel.from_dict(sm_dict())
    assert k._uses_sm_count and not Kernel.from_dict(vadd_dict())._uses_sm_count
    assert k._signature.fixed_scalars == ()
    bound = rt.args.bind(k.name, k.params, (CudaArray((1000,)),))
    assert k._grid(bound, 132) == (8, 1, 1) and k._grid(bound, 4) == (4, 1, 1)


@pytest.mark.skipif(_have_libcuda(), reason="this machine has a CUDA driver")
def test_sm_count_grid_needs_the_driver(runtime_lib):
    # Only a kernel naming __sm_count__ asks the runtime for its grid.
    assert Kernel.from_dict(vadd_dict()).grid_for(*vadd_args()) == (8, 2, 1)
    k = Kernel.from_dict(sm_dict())
    with pytest.raises(LaunchError, match=r"cannot load the CUDA driver \(libcuda.so.1\)"):
        k.grid_for(CudaArray((1000,)))
    with pytest.raises(ArgumentError, match="expected dtype float32"):  # checks come first
        k.grid_for(CudaArray((1000,), "<f2"))


def test_tensor_sized_sm_count():
    # A tensor sized __sm_count__ (a sequence's per-multiprocessor scratch)
    # must be the device's count: the kernel asks for it even when its grid
    # does not name it.
    k = Kernel.from_dict(vadd_dict(grid=["ceildiv(N, 128)"], params=sm_dict()["params"] + [
        {"name": "P", "kind": "tensor", "dtype": "float32", "shape": ["__sm_count__", 4],
         "access": "readwrite"}]))
    assert k._uses_sm_count
    bound = rt.args.bind(k.name, k.params, (CudaArray((1000,)), CudaArray((132, 4))))
    assert k._grid(bound, 132) == (8, 1, 1)
    with pytest.raises(ArgumentError, match="vadd: the tensor size __sm_count__ is 132, but the "
                                            "device has 100 multiprocessors"):
        k._grid(bound, 100)


def test_fake_driver_sm_count_grid(fake_driver, tmp_path):
    # The grid takes the launch device's multiprocessor count, asked once per
    # device; kernels without __sm_count__ never ask.
    out, log = run_fake(fake_driver, tmp_path, """
        import os
        rt.Kernel.from_dict(t.vadd_dict())(*t.vadd_args())
        with open(os.environ["FAKE_CUDA_LOG"]) as f:
            print("plain", sum(line.startswith("sm_count") for line in f))
        k = rt.Kernel.from_dict(t.sm_dict())
        def x(n, device=0):
            return t.CudaArray((n,), ptr=(device << 44) + 0x10000)
        print("grid_for", k.grid_for(x(1000)), k.grid_for(x(128 * 1000)))
        k(x(1000))
        k(x(128 * 1000))
        k(x(1000))
        k(x(0))  # an empty grid launches nothing
        k(x(128 * 1000, device=1))
        attempt(lambda: k(x(1000, device=7)))  # no such device
    """, sizes=[8] * 5, sms=100)
    assert out.splitlines() == ["plain 0", "grid_for (8, 1, 1) (100, 1, 1)",
                                "ERROR LaunchError cuDeviceGet failed: CUDA error 101 (device 7)"]
    events = [line for line in log if line.startswith(("sm_count", "launch"))]
    assert events == ["launch 8 2 1 128 1 1 0 0 ctx 0x1000",
                      "sm_count of device 0",
                      "launch 8 1 1 128 1 1 0 0 ctx 0x1000",
                      "launch 100 1 1 128 1 1 0 0 ctx 0x1000",
                      "launch 8 1 1 128 1 1 0 0 ctx 0x1000",
                      "sm_count of device 1",
                      "launch 100 1 1 128 1 1 0 0 ctx 0x1001"]


def test_fake_driver_sm_count_fast_path(fake_driver, tmp_path, launch_path):
    # The plan keeps the grid of the first call; later calls ask nothing.
    out, log = run_fake(fake_driver, tmp_path, FAKE_TORCH + textwrap.dedent("""
        k = rt.Kernel.from_dict(t.sm_dict())
        for n in (1000, 1000, 128 * 1000, 128 * 1000):
            k(T((n,), ptr=0x10000))
        print("plans", len(k._plans), sorted(p.grid for p in k._plans.values()))
        print("native", k._native_launcher and k._native_launcher.launched)
    """), sizes=[8] * 5, native=launch_path == "native")
    assert out.splitlines() == ["plans 2 [(8, 1, 1), (132, 1, 1)]",
                                "native 2" if launch_path == "native" else "native None"]
    events = [line for line in log if line.startswith(("sm_count", "launch"))]
    assert events == ["sm_count of device 0",
                      "launch 8 1 1 128 1 1 0 0x50 ctx 0x1000",
                      "launch 8 1 1 128 1 1 0 0x50 ctx 0x1000",
                      "launch 132 1 1 128 1 1 0 0x50 ctx 0x1000",
                      "launch 132 1 1 128 1 1 0 0x50 ctx 0x1000"]


def test_broken_driver_is_reported(tmp_path, runtime_lib):
    # Works on any machine: an unloadable libcuda.so.1 shadows the real one.
    (tmp_path / "libcuda.so.1").write_bytes(b"not an ELF file")
    env = dict(os.environ, LD_LIBRARY_PATH=str(tmp_path), PYTHONPATH=str(ROOT))
    code = PRELUDE + "attempt(lambda: rt.Kernel.from_dict(t.vadd_dict())(*t.vadd_args()))"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert "ERROR LaunchError tlc runtime: cannot load the CUDA driver (libcuda.so.1)" \
        in done.stdout, done.stdout + done.stderr


# ---- On a GPU ------------------------------------------------------------------------

# out[i] = a[i] + alpha * b[i] over 1-D memref descriptors, written by hand so
# that the runtime is tested on a GPU independently of the compiler.
SAXPY_PTX = """
.version 7.0
.target sm_80
.address_size 64
.visible .entry saxpy(
  .param .u64 a0, .param .u64 a1, .param .u64 a2, .param .u64 a3, .param .u64 a4,
  .param .u64 b0, .param .u64 b1, .param .u64 b2, .param .u64 b3, .param .u64 b4,
  .param .u64 c0, .param .u64 c1, .param .u64 c2, .param .u64 c3, .param .u64 c4,
  .param .f32 alpha)
{
  .reg .pred %p;
  .reg .b32 %r<4>;
  .reg .b64 %rd<10>;
  .reg .f32 %f<5>;
  ld.param.u64 %rd1, [a1];
  ld.param.u64 %rd2, [b1];
  ld.param.u64 %rd3, [c1];
  ld.param.u64 %rd4, [a3];
  ld.param.f32 %f1, [alpha];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.wide.u32 %rd5, %r1, %r2, 0;
  cvt.u64.u32 %rd6, %r3;
  add.s64 %rd5, %rd5, %rd6;
  setp.ge.u64 %p, %rd5, %rd4;
  @%p bra DONE;
  shl.b64 %rd6, %rd5, 2;
  add.s64 %rd7, %rd1, %rd6;
  add.s64 %rd8, %rd2, %rd6;
  add.s64 %rd9, %rd3, %rd6;
  ld.global.f32 %f2, [%rd7];
  ld.global.f32 %f3, [%rd8];
  fma.rn.f32 %f4, %f1, %f3, %f2;
  st.global.f32 [%rd9], %f4;
DONE:
  ret;
}
"""


def saxpy_dict(**overrides):
    tensor = {"kind": "tensor", "dtype": "float32", "shape": ["N"]}
    d = {"format": "tlc-kernel", "version": 1, "name": "saxpy", "target": "sm_80",
         "ptx": SAXPY_PTX, "threads": [256, 1, 1], "grid": ["ceildiv(N, 256)"],
         "shared_bytes": 0,
         "params": [dict(tensor, name="A", access="read"), dict(tensor, name="B", access="read"),
                    dict(tensor, name="C", access="write"),
                    {"name": "alpha", "kind": "scalar", "dtype": "float32"}],
         "check": {"symbols": {"N": 100003}, "scalars": {"alpha": 0.5},
                   "expect": {"C": "A + alpha * B"}, "bench_symbols": {"N": 1 << 26}}}
    d.update(overrides)
    return d


@pytest.mark.gpu
@pytest.mark.skipif(not _have_cuda_torch(), reason="needs torch with a CUDA GPU")
def test_gpu_saxpy(runtime_lib):
    import torch

    k = Kernel.from_dict(saxpy_dict())
    n = 100003
    a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    c = torch.full((n,), float("nan"), device="cuda")
    k(a, b, c, 0.5)
    torch.cuda.synchronize()
    torch.testing.assert_close(c, a + 0.5 * b)
    # The same through DLPack and __cuda_array_interface__ on the default stream.
    torch.cuda.synchronize()
    c.fill_(float("nan"))
    torch.cuda.synchronize()  # the next launches use the legacy default stream
    k(_CAI(a), _DLPack(b), _CAI(c), 2.0)
    rt.synchronize()
    torch.testing.assert_close(c, a + 2.0 * b)


@pytest.mark.gpu
@pytest.mark.skipif(not _have_cuda_torch(), reason="needs torch with a CUDA GPU")
def test_gpu_bad_ptx_reports_the_jit_log(runtime_lib):
    import torch

    k = Kernel.from_dict(saxpy_dict(ptx=SAXPY_PTX.replace("fma.rn.f32", "fma.bogus.f32")))
    a = torch.zeros(16, device="cuda")
    with pytest.raises(LaunchError, match="cuModuleLoadDataEx failed for kernel 'saxpy'") as e:
        k(a, a, a, 1.0)
    assert "JIT error log" in str(e.value)


@pytest.mark.gpu
@pytest.mark.skipif(not _have_cuda_torch(), reason="needs torch with a CUDA GPU")
def test_gpu_zero_fill_scratch_starts_at_zero(runtime_lib):
    # On memory left non-zero: torch's allocator hands the freed block out
    # again, and the driver block is the one the previous call wrote.
    import torch

    k = Kernel.from_dict(streamk_dict())
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    a, b, c = (torch.randn(64, 1000, device="cuda") for _ in range(3))
    # Freed at once, into torch's pool of small blocks, where the scratch comes from.
    torch.full((200_000,), -1, dtype=torch.int32, device="cuda")
    shapes, device, _ = k._scratch_shapes((a, b, c, 0.5))
    assert shapes == [(sms, 64), (sms,)]  # the driver's count is torch's
    flags = k._torch_scratch(shapes, device, None)[1]
    assert flags.shape == (sms,) and not flags.any()
    args = (_CAI(a), _CAI(b), _CAI(c), 0.5)
    for _ in range(2):  # the second call reuses the block, left at -1 by the first
        shapes, _, bound = k._scratch_shapes(args)
        buf = k._driver_scratch(shapes, bound, None)[1]
        flags = torch.as_tensor(_CAI.of(buf.ptr, buf.shape, "<i4"), device="cuda")
        torch.cuda.synchronize()
        assert not flags.any()
        flags.fill_(-1)
        torch.cuda.synchronize()


class _CAI:
    """Hides a torch tensor behind __cuda_array_interface__ only."""

    def __init__(self, t):
        self.__cuda_array_interface__ = t.__cuda_array_interface__

    @classmethod
    def of(cls, ptr: int, shape, typestr: str) -> "_CAI":
        """Device memory at ptr as a row-major array."""
        return cls(types.SimpleNamespace(__cuda_array_interface__={
            "version": 3, "shape": tuple(shape), "typestr": typestr, "data": (ptr, False),
            "strides": None}))


class _DLPack:
    """Hides a torch tensor behind DLPack only."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def test_grid_binds_integer_scalar_parameters():
    params = vadd_dict()["params"][:3] + [{"name": "n", "kind": "scalar", "dtype": "int32"}]
    k = rt.Kernel.from_dict(vadd_dict(grid=["ceildiv(n, 128)", "M", "1"], params=params))
    assert k.grid_for(*vadd_args()[:3], 1000) == (8, 64, 1)
    # A float scalar is no grid symbol: naming one is rejected at load.
    floats = vadd_dict()["params"]
    with pytest.raises(rt.ArtifactError, match="alpha"):
        rt.Kernel.from_dict(vadd_dict(grid=["alpha", "1", "1"], params=floats))


def test_fake_driver_fast_path_keeps_every_check(fake_driver, tmp_path, launch_path):
    # Once a plan exists, a call that differs from it in any way the checks
    # read gets the message a first call gets (a fresh kernel's), and
    # launches nothing; calls that match launch from the plan.
    out, log = run_fake(fake_driver, tmp_path, native=launch_path == "native",
                        body=FAKE_TORCH + textwrap.dedent("""
        def message(k, *args):
            try:
                k(*args)
            except Exception as e:
                return f"{type(e).__name__}: {e}"
            return "launched"
        planned = rt.Kernel.from_dict(t.vadd_dict())
        a, b, c = T((64, 1000), ptr=0x10000), T((64, 1000), ptr=0x20000), T((64, 1000), ptr=0x30000)
        planned(a, b, c, 0.5)
        bad = {
            "shape": (a, T((32, 1000)), c, 0.5),
            "symbol": (a, b, T((64, 999)), 0.5),
            "dtype": (a, b, T((64, 1000), "float16"), 0.5),
            "device": (a, b, T((64, 1000), device=("cpu", None)), 0.5),
            "other device": (a, b, T((64, 1000), device=("cuda", 1), ptr=(1 << 44) + 0x10000), 0.5),
            "stride": (a, b, T((64, 1000), strides=(1, 64)), 0.5),
            "null": (a, b, T((64, 1000), ptr=0), 0.5),
            "misaligned": (a, T((64, 1000), ptr=0x20008), c, 0.5),
            "scalar type": (a, b, c, "x"),
            "bool scalar": (a, b, c, True),
            "too few": (a, b, c),
            "too many": (a, b, c, 0.5, 1),
            "unhashable": (a, b, c, [0.5]),
        }
        for name, args in bad.items():
            first = message(rt.Kernel.from_dict(t.vadd_dict()), *args)
            again = message(planned, *args)
            print(name, "|", again, "|", "same" if again == first else "DIFFERENT: " + first)
        print("plans", len(planned._plans))
        print(message(planned, a, b, c, 1.5), message(planned, a, b, c, 2))
        n = planned._native_launcher
        print("native", n and (n.launched, n.missed))
    """), sizes=[8] * 21 + [4])
    lines = out.splitlines()
    assert all(line.endswith("| same") for line in lines[:13]), out
    assert all(" | ArgumentError: " in line for line in lines[:13]), out
    assert "all tensors must be on one device" in lines[4]
    assert "must be row-major contiguous" in lines[5] and "data pointer is null" in lines[6]
    assert "16-byte aligned" in lines[7] and "expected a number" in lines[9]
    # Natively only the call with 1.5: an int scalar is another key.
    assert lines[13:] == ["plans 1", "launched launched",
                          "native (1, 15)" if launch_path == "native" else "native None"]
    launches = [line for line in log if line.startswith("launch")]
    assert len(launches) == 3 and "sync" not in log  # nothing waits for the device
    floats = [struct.unpack("<f", v)[0] for v in _params(log)[21::22]]
    assert floats == [0.5, 1.5, 2.0]


def test_fake_driver_native_fallbacks(fake_driver, tmp_path, launch_module):
    # The native Launcher takes a call only when it matches a plan exactly;
    # for each other call it returns None (launching nothing), and the
    # Python path then gives exactly the error it gives without the native
    # path (tlc.runtime._launch not built), or launches.
    if launch_module is None:
        pytest.skip("tlc.runtime._launch is not built and cannot be here")
    body = FAKE_TORCH + textwrap.dedent("""
        class Stream:
            cuda_stream = 0x99
        k = rt.Kernel.from_dict(t.vadd_dict())
        a, b, c = T((64, 1000), ptr=0x10000), T((64, 1000), ptr=0x20000), T((64, 1000), ptr=0x30000)
        k(a, b, c, 0.5)
        calls = {
            "new shape": (a, b, T((64, 999), ptr=0x30000), 0.5),
            "wrong dtype": (a, b, T((64, 1000), "float16", ptr=0x30000), 0.5),
            "misaligned": (a, T((64, 1000), ptr=0x20008), c, 0.5),
            "null": (a, T((64, 1000), ptr=0), c, 0.5),
            "other device": (a, b, T((64, 1000), device=("cuda", 1), ptr=(1 << 44)), 0.5),
            "non-tensor": (a, b, t.CudaArray((64, 1000), ptr=0x30000), 0.5),
            "strides": (a, b, T((64, 1000), strides=(1, 64), ptr=0x30000), 0.5),
            "scalar type": (a, b, c, "x"),
            "float32 overflow": (a, b, c, 1e300),
            "argument count": (a, b, c),
        }
        def message(*args, **kwargs):
            try:
                k(*args, **kwargs)
            except Exception as e:
                return f"{type(e).__name__}: {e}"
            return "launched"
        n = k._native_launcher
        for name, args in calls.items():
            print(name, "|", n and n.launch(args, None), "|", message(*args))
        for stream in (Stream(), -1):
            print("stream", "|", n and n.launch((a, b, c, 0.5), stream), "|",
                  message(a, b, c, 0.5, stream=stream))
        print("native", n and n.launch((a, b, c, 0.25), 0x77))
    """)
    native, log = run_fake(fake_driver, tmp_path, body, sizes=[8] * 21 + [4])
    python, python_log = run_fake(fake_driver, tmp_path, body, sizes=[8] * 21 + [4],
                                  native=False)
    lines, python_lines = native.splitlines(), python.splitlines()
    assert all(" | None | " in line for line in lines[:12]), native
    assert all(" | None | " in line for line in python_lines[:12]), python
    errors = [line.split(" | ")[-1] for line in lines[:12]]
    assert errors == [line.split(" | ")[-1] for line in python_lines[:12]]
    assert errors[0] == ("ArgumentError: argument 'C' (param 3 of vadd): dim 1 is symbol "
                         "N = 999, but argument 'A' dim 1 set N = 1000")
    assert errors[1] == ("ArgumentError: argument 'C' (param 3 of vadd): expected dtype "
                         "float32, got float16")
    assert "16-byte aligned" in errors[2] and "data pointer is null" in errors[3]
    assert "all tensors must be on one device" in errors[4]
    assert errors[5] == "launched"  # __cuda_array_interface__: checked and launched
    assert "row-major contiguous" in errors[6] and "expected a number" in errors[7]
    assert errors[8] == "launched"  # struct refuses it for float32, the checks do not
    assert "takes 4 arguments" in errors[9]
    assert errors[10:] == ["launched", "launched"]  # a stream object, a negative handle
    assert lines[12] == "native True" and python_lines[12] == "native None"
    launches = [line for line in log if line.startswith("launch")]
    assert launches[-1] == "launch 8 2 1 128 1 1 0 0x77 ctx 0x1000"
    assert launches[:-1] == [line for line in python_log if line.startswith("launch")]


def test_fake_driver_native_scalar_encodings(fake_driver, tmp_path, launch_module):
    # Scalars struct cannot pack as scalar_value does (here float16, as bit
    # patterns) go through scalar_value from C: the same bytes as the Python
    # path, and its error for a value out of range.
    params = vadd_dict()["params"][:3] + [
        {"name": "alpha", "kind": "scalar", "dtype": "float16"},
        {"name": "n", "kind": "scalar", "dtype": "int8"}]
    body = FAKE_TORCH + textwrap.dedent(f"""
        k = rt.Kernel.from_dict(t.vadd_dict(params={params!r}))
        a, b, c = T((64, 1000), ptr=0x10000), T((64, 1000), ptr=0x20000), T((64, 1000), ptr=0x30000)
        for alpha, n in [(0.5, 1), (0.5, 1), (-2.0, -128), (1e6, 1), (0.5, 300), (0.25, 127)]:
            attempt(lambda: k(a, b, c, alpha, n))
        print("native", k._native_launcher and k._native_launcher.launched)
    """)
    out, log = run_fake(fake_driver, tmp_path, body, sizes=[8] * 21 + [2, 1])
    python, python_log = run_fake(fake_driver, tmp_path, body, sizes=[8] * 21 + [2, 1],
                                  native=False)
    lines = out.splitlines()
    assert lines[:-1] == python.splitlines()[:-1] and len(lines) == 3
    assert "alpha" in lines[0] and "n" in lines[1]
    assert lines[-1] == ("native 3" if launch_module else "native None")
    assert _params(log) == _params(python_log) and len(_params(log)) == 4 * 23
    assert [v.hex() for v in _params(log)[21::23]] == ["0038", "0038", "00c0", "0034"]


def test_fake_driver_without_the_native_module(fake_driver, tmp_path, monkeypatch):
    # Where tlc.runtime._launch cannot be imported, kernels launch from their
    # plans in Python.
    monkeypatch.setenv("TLC_LAUNCH_MODULE", str(tmp_path / "missing.so"))
    out, log = run_fake(fake_driver, tmp_path, FAKE_TORCH + textwrap.dedent("""
        k = rt.Kernel.from_dict(t.vadd_dict())
        a, b, c = T((64, 1000), ptr=0x10000), T((64, 1000), ptr=0x20000), T((64, 1000), ptr=0x30000)
        for _ in range(2):
            k(a, b, c, 0.5)
        print(rt.plans.native_module(), k._native, len(k._plans))
    """), sizes=[8] * 21 + [4])
    assert out.splitlines() == ["None None 1"]
    assert sum(line.startswith("launch") for line in log) == 2


def test_fake_driver_packed_launch_errors(runtime_lib, fake_driver, tmp_path):
    # tlc_rt_launch_packed reports a failure through the per-thread message;
    # a library without it launches through tlc_rt_launch_on the same way.
    out, log = run_fake(fake_driver, tmp_path, """
        from tlc.runtime.driver import launch_dims, launch_plan
        lib = rt.driver.runtime()
        launch = lib.launcher()
        dims = launch_dims((2, 1, 1), (128, 1, 1), 0)
        call = (0x77).to_bytes(8, "little") + (5).to_bytes(8, "little")
        print(launch(launch_plan(0, 0x3000, dims, 1, 0, b"k"), call))
        if launch(launch_plan(99, 0x3000, dims, 1, 0, b"k"), call):
            attempt(lib.raise_launch_error)
        lib._launch_unpacked(launch_plan(1, 0x3000, dims, 1, 0, b"k"), call)
    """, sizes=[8])
    assert out.splitlines() == ["0", "ERROR LaunchError tlc runtime: device 99 is out of range"]
    launches = [line for line in log if line.startswith(("launch", "param"))]
    assert launches == ["launch 2 1 1 128 1 1 0 0x77 ctx 0x1000", "param 0500000000000000",
                        "launch 2 1 1 128 1 1 0 0x77 ctx 0x1001", "param 0500000000000000"]


FAKE_TORCH_EMPTY = FAKE_TORCH + """
import itertools
_next_ptr = itertools.count(0x100000, 0x100000)
torch.float32 = "float32"
torch.empty = lambda shape, dtype, device: T(shape, dtype, device=(device.type, device.index),
                                             ptr=next(_next_ptr))
"""


def test_fake_driver_out_idx_fast_path(fake_driver, tmp_path, launch_path):
    # A JITKernel with out_idx launches from the Kernel's plan once a call
    # with the inputs' key left one: new outputs each call (their pointers in
    # the parameters), the inputs still checked; other shapes get plans of
    # their own, and wrong inputs the checked path's messages.
    out, log = run_fake(fake_driver, tmp_path, native=launch_path == "native",
                        body=FAKE_TORCH_EMPTY + textwrap.dedent("""
        from tlc.jit import JITKernel
        jit = JITKernel(t.vadd_dict(), {}, out_idx=[2])
        a, b = T((64, 1000), ptr=0x10000), T((64, 1000), ptr=0x20000)
        outs = [jit(a, b, 0.5) for _ in range(3)]
        print("fast", len(jit._fast), [hex(o.data_ptr()) for o in outs])
        print(tuple(jit(T((32, 1000), ptr=0x10000), b, 0.25).shape), len(jit._fast))
        attempt(lambda: jit(a, T((64, 1000), "float16"), 0.5))
        attempt(lambda: jit(a, T((64, 1000), ptr=0x20004), 0.5))
        attempt(lambda: jit(a, b))
        # Outputs first: the arguments and pointers are put in the kernel's order.
        first = JITKernel(t.vadd_dict(), {}, out_idx=[0])
        for _ in range(2):
            o = first(T((64, 1000), ptr=0x20000), T((64, 1000), ptr=0x30000), 1.0)
        print("first", len(first._fast), hex(o.data_ptr()))
        print("native", [n and (n.launched, n.missed) for n in
                         (jit._native_launcher, first._native_launcher)])
    """), sizes=[8] * 21 + [4])
    lines = out.splitlines()
    assert lines[0] == "fast 1 ['0x100000', '0x200000', '0x300000']"
    assert lines[1] == "(32, 1000) 2"
    assert lines[2].startswith("ERROR ArgumentError argument 'B' (param 2 of vadd): expected "
                               "dtype float32, got float16")
    assert lines[3].startswith("ERROR ArgumentError argument 'B' (param 2 of vadd): data pointer")
    assert lines[4].startswith("ERROR ArgumentError vadd takes 3 inputs (A, B, alpha)")
    assert lines[5] == "first 1 0x800000"
    # Natively: jit's 2nd and 3rd calls and first's 2nd (each first call and
    # jit's wrong ones missed).
    assert lines[6] == ("native [(2, 5), (1, 1)]" if launch_path == "native"
                        else "native [None, None]")
    descriptor = lambda call: [struct.unpack("<Q", v)[0] for v in call[:21]]  # noqa: E731
    values = _params(log)
    calls = [descriptor(values[i:i + 22]) for i in range(0, len(values), 22)]
    # Calls 1-3 launched with their own outputs (C's pointers, slots 14, 15).
    assert [c[14:16] for c in calls[:3]] == [[0x100000] * 2, [0x200000] * 2, [0x300000] * 2]
    assert [c[0] for c in calls[:3]] == [0x10000] * 3 and calls[3][3:5] == [32, 1000]
    # The out_idx=[0] kernel: A (the output) first, then B and C.
    assert [c[0:2] + c[7:8] + c[14:15] for c in calls[-2:]] == [
        [0x700000, 0x700000, 0x20000, 0x30000], [0x800000, 0x800000, 0x20000, 0x30000]]
    assert sum(line.startswith("launch") for line in log) == 6 and "sync" not in log


def test_fake_driver_sequence_with_torch_tensors_uses_plans(fake_driver, tmp_path):
    # A KernelSequence on torch tensors: each call allocates the scratch with
    # torch.empty and launches both kernels, from their plans after the first
    # call; a new shape gets plans of its own, and a wrong argument the
    # checked path's message.
    out, log = run_fake(fake_driver, tmp_path, FAKE_TORCH_EMPTY + textwrap.dedent("""
        torch.device = lambda kind, index: t.FakeTorchDevice(kind, index)
        k = rt.Kernel.from_dict(t.sequence_dict())
        for n in (1000, 1000, 1000, 2000):
            a, b, c = (T((64, n), ptr=p) for p in (0x10000, 0x20000, 0x30000))
            k(a, b, c, 0.5)
        print([len(x._plans) for x in k.kernels])
        attempt(lambda: k(a, b, T((64, n), "float16"), 0.5))
    """), sizes=[8] * 21 + [4] + [8] * 9)
    lines = out.splitlines()
    assert lines[0] == "[2, 2]"
    assert lines[1].startswith("ERROR ArgumentError argument 'C' (param 3 of vadd")
    assert "expected dtype float32, got float16" in lines[1]
    launches = [line for line in log if line.startswith("launch")]
    assert launches == ["launch 8 2 1 128 1 1 0 0x50 ctx 0x1000"] * 6 + \
        ["launch 16 2 1 128 1 1 0 0x50 ctx 0x1000"] * 2
    values = [struct.unpack("<Q", v)[0] if len(v) == 8 else None for v in _params(log)]
    # Each call's scratch (a new torch.empty) follows A, B, C and alpha in
    # both of its kernels.
    scratch = [values[31 * i + 22] for i in range(8)]
    assert scratch == [0x100000] * 2 + [0x200000] * 2 + [0x300000] * 2 + [0x400000] * 2
    assert "sync" not in log
