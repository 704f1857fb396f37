"""Host time per launch on the CPU, against a fake CUDA driver (no GPU needed).

    python bench/launch_overhead_cpu.py [--profile]

Builds libtlc_runtime.so, the native launch path (tlc.runtime._launch, from
runtime/tlc_launch.c) and a do-nothing libcuda.so.1 (test_runtime.py's fake
driver without its logging) with gcc into a temporary folder, then times the
call path of a vadd (A, B, C of shape (M, N), a float scalar) on stand-ins
for torch tensors (test_runtime.FakeTorchTensor-like objects whose
attributes cost about what torch's do) and a stand-in torch module, each
with the native launch path and with the Python one (TLC_NATIVE_LAUNCH=0),
interleaved:

- kernel(a, b, c, alpha): the cached-plan path (preallocated output);
- jit(a, b, alpha) with out_idx=[2]: allocates the output (a stand-in
  torch.empty, a Python function: torch's real one costs more);
- kernel(...) on __cuda_array_interface__ objects: the full checks.

Only relative numbers mean something here (the fake launch costs nothing,
and the stand-in tensors' attributes are Python code, where torch's are C);
bench/launch_overhead.py measures the real thing on a GPU. --profile prints
cProfile's view of the cached-plan path.
"""

import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def build(folder: Path) -> None:
    sys.path.insert(0, str(ROOT / "test/python"))
    from test_runtime import FAKE_LIBCUDA

    quiet = FAKE_LIBCUDA.replace("#define LOG(...) (fprintf(out(), __VA_ARGS__), fflush(out()))",
                                 "#define LOG(...) ((void)out)")
    (folder / "fake.c").write_text(quiet)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-w", "-o", str(folder / "libcuda.so.1"),
                    str(folder / "fake.c")], check=True)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-std=c11",
                    str(ROOT / "runtime/tlc_runtime.c"), "-ldl", "-lpthread", "-o",
                    str(folder / "libtlc_runtime.so")], check=True)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-std=c11",
                    f"-I{sysconfig.get_paths()['include']}", str(ROOT / "runtime/tlc_launch.c"),
                    str(ROOT / "runtime/tlc_launch_plan.c"), "-o", str(folder / _launch_name())],
                   check=True)


def _launch_name() -> str:
    return "_launch" + sysconfig.get_config_var("EXT_SUFFIX")


FAKE_TORCH = '''
import contextlib, itertools, sys, types

class Size(tuple):
    pass

class device:
    def __init__(self, type_, index=None):
        self.type, self.index = type_, index
    def __eq__(self, other):
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)
    def __hash__(self):
        return hash((self.type, self.index))
    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

class dtype:
    def __init__(self, name):
        self.name = name
    def __str__(self):
        return "torch." + self.name

float32 = dtype("float32")
_next = itertools.count(1)

class Tensor:
    def __init__(self, shape, dt=float32, dev=None):
        self.shape, self.dtype = Size(shape), dt
        self.device = dev or device("cuda", 0)
        self._ptr = 0x10000000 + (next(_next) % 1024) * 0x100000
        strides, step = [], 1
        for n in reversed(shape):
            strides.append(step)
            step *= n
        self._strides = tuple(reversed(strides))
    def data_ptr(self):
        return self._ptr
    def stride(self):
        return self._strides
    def get_device(self):
        return self.device.index

Tensor.__module__ = "torch"

def empty(shape, dtype=float32, device=None):
    return Tensor(tuple(shape), dtype, device)

cuda = types.SimpleNamespace(device=lambda d: contextlib.nullcontext(), is_available=lambda: False,
                             current_stream=lambda d: types.SimpleNamespace(cuda_stream=0))
_C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda d: 0)
'''


def run(profile: bool) -> None:
    import types

    torch = types.ModuleType("torch")
    exec(FAKE_TORCH, torch.__dict__)
    sys.modules["torch"] = torch
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "test/python"))
    import test_runtime as t
    from tlc.jit import JITKernel
    from tlc.runtime import Kernel

    d = t.vadd_dict()

    def made(native: bool, make):
        os.environ["TLC_NATIVE_LAUNCH"] = "1" if native else "0"
        return make()

    kernels = {path: made(path == "native", lambda: Kernel.from_dict(d))
               for path in ("native", "python")}
    jits = {path: made(path == "native", lambda: JITKernel(d, {}, out_idx=[2]))
            for path in ("native", "python")}
    assert kernels["native"]._native is not None and kernels["python"]._native is None
    a, b, c = (torch.Tensor((64, 128)) for _ in range(3))
    arrays = [t.CudaArray((64, 128)), t.CudaArray((64, 128)), t.CudaArray((64, 128))]

    def per_call_us(fn, n=20000, repeats=7):
        for _ in range(200):
            fn()
        runs = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            runs.append((time.perf_counter() - t0) / n * 1e6)
        return statistics.median(runs)

    if profile:
        import cProfile
        import pstats

        kernel = kernels["native" if "--native" in sys.argv else "python"]
        cProfile.runctx("for _ in range(100000): kernel(a, b, c, 0.5)", globals(), locals(),
                        "/tmp/launch.prof")
        pstats.Stats("/tmp/launch.prof").sort_stats("tottime").print_stats(15)
        return
    for k in kernels.values():  # the first calls check and leave plans
        k(a, b, c, 0.5)
    for j in jits.values():
        j(a, b, 0.5)
    times = {f"{what} {path}": [] for what in ("kernel", "out_idx") for path in kernels}
    for _ in range(3):  # interleaved: a drift of the machine shows in all
        for path in kernels:
            times[f"kernel {path}"].append(per_call_us(lambda: kernels[path](a, b, c, 0.5)))
            times[f"out_idx {path}"].append(per_call_us(lambda: jits[path](a, b, 0.5)))
    us = {name: statistics.median(v) for name, v in times.items()}
    assert kernels["native"]._native_launcher.launched > 0
    assert jits["native"]._native_launcher.launched > 0
    full = per_call_us(lambda: kernels["python"](*arrays, 0.5), n=2000)
    empty = per_call_us(lambda: torch.empty((64, 128), dtype=torch.float32, device=a.device))
    print("fake driver, host time per call, median of 3 x 7 runs of 20000 calls:")
    for what, call in (("kernel", "kernel(a, b, c, alpha)"),
                       ("out_idx", "jit(a, b, alpha) with out_idx")):
        print(f"  {call:30s} native {us[what + ' native']:5.2f} us, Python "
              f"{us[what + ' python']:5.2f} us")
    print(f"  (the stand-in torch.empty {empty:.2f} us; full checks "
          f"(__cuda_array_interface__) {full:.2f} us)")


def main() -> None:
    if os.environ.get("TLC_BENCH_CHILD"):
        run("--profile" in sys.argv)
        return
    with tempfile.TemporaryDirectory() as tmp:
        build(Path(tmp))
        env = dict(os.environ, TLC_BENCH_CHILD="1", LD_LIBRARY_PATH=tmp,
                   TLC_RUNTIME_LIB=str(Path(tmp, "libtlc_runtime.so")),
                   TLC_LAUNCH_MODULE=str(Path(tmp, _launch_name())),
                   FAKE_CUDA_LOG=os.devnull, FAKE_CUDA_PARAM_SIZES="0")
        subprocess.run([sys.executable, __file__, *sys.argv[1:]], env=env, check=True)


if __name__ == "__main__":
    main()
