"""@tlc.jit and tlc.compile: compilation, the in-process and disk caches, the
compiled kernel's PTX and IR, out_idx, launching without a GPU, and the
TileLang spellings (`import tlc as tilelang`)."""

import ctypes
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import tlc
import tlc.language as T
from tlc import compiler
from tlc.jit import JITFactory

ROOT = Path(__file__).resolve().parents[2]

BLOCK = 128  # read by the factory below: changing it must change the cache key


def _scale(M, N, block_M, dtype="float32"):
    @T.prim_func
    def scale(X: T.Tensor((M, N), dtype), alpha: T.float32, Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, BLOCK), T.ceildiv(M, block_M), threads=128) as (bx, by):
            x = T.alloc_fragment((block_M, BLOCK), dtype)
            T.copy(X[by * block_M, bx * BLOCK], x)
            for i, j in T.Parallel(block_M, BLOCK):
                x[i, j] = x[i, j] * alpha
            T.copy(x, Y[by * block_M, bx * BLOCK])

    return scale


scale = tlc.jit(out_idx=[-1])(_scale)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh disk cache, and a count of the compilations that run."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("TLC_CACHE_DIR", str(folder))
    monkeypatch.delenv("TLC_TARGET", raising=False)
    calls = []
    real = compiler.compile_module

    def counting(module, target=None, *args, **kwargs):
        calls.append(str(getattr(target, "arch", target)))
        return real(module, target, *args, **kwargs)

    monkeypatch.setattr(compiler, "compile_module", counting)
    return folder, calls


def entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json")) if folder.exists() else []


def test_jit_compiles_and_caches_in_process(cache):
    folder, calls = cache
    factory = JITFactory(_scale, out_idx=[-1])
    k1 = factory(256, 256, 32)
    assert isinstance(k1, tlc.JITKernel) and k1.name == "scale"
    assert factory(256, 256, 32) is k1  # in process: the same object, nothing compiled
    assert calls == ["sm_90a"]
    assert len(entries(folder)) == 1


def test_fresh_factory_hits_disk_cache(cache):
    folder, calls = cache
    k1 = JITFactory(_scale)(256, 256, 32)
    assert len(calls) == 1
    k2 = JITFactory(_scale)(256, 256, 32)  # a new factory: no memory cache
    assert len(calls) == 1, "the disk cache was not used"
    assert k2 is not k1
    assert k2.get_kernel_source() == k1.get_kernel_source()
    assert k2.get_mlir("gpu") == k1.get_mlir("gpu")
    (entry,) = entries(folder)
    data = json.loads(entry.read_text())
    assert data["artifact"]["name"] == "scale" and ".entry scale(" in data["artifact"]["ptx"]


def test_new_process_hits_disk_cache(cache, tmp_path):
    folder, calls = cache
    JITFactory(_scale)(64, 128, 32)
    (entry,) = entries(folder)
    code = (
        "import sys; sys.path.insert(0, %r)\n"
        "import tlc.compiler\n"
        "def boom(*a, **k): raise SystemExit('compiled again')\n"
        "tlc.compiler.compile_module = boom\n"
        "import test_jit\n"
        "k = test_jit.scale(64, 128, 32)\n"
        "print(k.name, len(k.get_kernel_source()) > 0)\n" % str(Path(__file__).parent))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, TLC_CACHE_DIR=str(folder)), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "scale True"
    assert entries(folder) == [entry]


@pytest.mark.parametrize("damage", ["{not json", "[]", '{"tlc": "0.1.0"}',
                                    '{"tlc": "0.1.0", "artifact": {"name": 3}, "stages": {}}', ""])
def test_corrupt_cache_entry_is_ignored_and_replaced(cache, damage):
    folder, calls = cache
    good = JITFactory(_scale)(256, 256, 64)
    (entry,) = entries(folder)
    entry.write_text(damage)
    kernel = JITFactory(_scale)(256, 256, 64)
    assert len(calls) == 2  # compiled again
    assert kernel.get_kernel_source() == good.get_kernel_source()
    data = json.loads(entry.read_text())  # replaced by a good entry
    assert data["artifact"]["ptx"] == good.get_kernel_source()
    JITFactory(_scale)(256, 256, 64)
    assert len(calls) == 2  # and used again


def test_different_args_and_targets_are_different_entries(cache, monkeypatch):
    folder, calls = cache
    factory = JITFactory(_scale)
    a = factory(256, 256, 32)
    b = factory(256, 256, 64)
    c = factory(256, 256, 32, dtype="float16")
    d = JITFactory(_scale, target="sm_80")(256, 256, 32)
    monkeypatch.setenv("TLC_TARGET", "sm_80")
    e = JITFactory(_scale)(256, 256, 32)  # TLC_TARGET: the same entry as d
    assert calls == ["sm_90a", "sm_90a", "sm_90a", "sm_80"]
    assert len(entries(folder)) == 4
    assert len({id(k) for k in (a, b, c, d)}) == 4
    assert ".target sm_90a" in a.get_kernel_source()
    assert ".target sm_80" in d.get_kernel_source() and e.artifact["target"] == "sm_80"
    assert "xf16>" in c.get_mlir("tile") and "xf16>" not in a.get_mlir("tile")
    assert a.get_kernel_source() != b.get_kernel_source()


def test_cache_key_follows_globals_the_program_reads(cache, monkeypatch):
    factory = JITFactory(_scale)
    key = factory.cache_key(256, 256, 32)
    assert factory.cache_key(256, 256, 32) == key
    monkeypatch.setattr(sys.modules[__name__], "BLOCK", 64)
    assert factory.cache_key(256, 256, 32) != key
    assert "memref<32x64xf32" in factory(256, 256, 32).get_mlir("tile")


def test_unwritable_cache_only_costs_recompilation(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("TLC_CACHE_DIR", str(blocker / "sub"))
    assert ".entry scale(" in JITFactory(_scale)(64, 128, 32).get_kernel_source()


def test_no_disk_cache(cache):
    folder, calls = cache
    tlc.jit(cache=False)(_scale)(64, 128, 32)
    assert entries(folder) == [] and len(calls) == 1


# -- the compiled kernel -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def kernel():
    return tlc.compile(_scale(256, 512, 32), out_idx=[2])


def test_kernel_source_is_ptx(kernel):
    ptx = kernel.get_kernel_source()
    assert ".target sm_90a" in ptx
    assert ".visible .entry scale(" in ptx
    assert "ld.global.v4" in ptx and "st.global.v4" in ptx
    assert kernel.artifact["threads"] == [128, 1, 1]
    assert kernel.artifact["grid"] == ["4", "8", "1"]


def test_get_mlir_stages(kernel):
    tile_ir = kernel.get_mlir("tile")
    assert tile_ir == kernel.get_mlir()
    assert "tile.kernel" in tile_ir and "tile.parallel" in tile_ir and "layout" not in tile_ir
    optimized = kernel.get_mlir("optimized")
    assert "tile.alloc_fragment {layout = #tile.layout<" in optimized
    gpu = kernel.get_mlir("gpu")
    assert "gpu.func @scale" in gpu and "vector.load" in gpu
    assert not re.search(r"\btile\.(kernel|copy|parallel|alloc_\w+|fill)\b", gpu)
    nvvm = kernel.get_mlir("nvvm")
    assert "llvm.func @scale" in nvvm and "nvvm.read.ptx.sreg.tid.x" in nvvm
    with pytest.raises(ValueError, match="unknown stage 'ptx'"):
        kernel.get_mlir("ptx")


def test_out_idx(kernel):
    assert kernel.out_idx == [2]
    assert [p["name"] for p in kernel.params] == ["X", "alpha", "Y"]
    art, stages = kernel.artifact, kernel.stages
    assert tlc.JITKernel(art, stages, out_idx=-1).out_idx == [2]
    assert tlc.JITKernel(art, stages, out_idx=[0, -1]).out_idx == [0, 2]
    assert tlc.JITKernel(art, stages).out_idx == []
    with pytest.raises(tlc.CompilationError, match="out_idx 3 is out of range for scale's 3"):
        tlc.JITKernel(art, stages, out_idx=[3])
    with pytest.raises(tlc.CompilationError, match="out_idx -4 is out of range"):
        tlc.JITKernel(art, stages, out_idx=-4)
    with pytest.raises(tlc.CompilationError, match="out_idx 1 names the scalar 'alpha'"):
        tlc.JITKernel(art, stages, out_idx=[1])
    with pytest.raises(tlc.CompilationError, match="names a parameter twice"):
        tlc.JITKernel(art, stages, out_idx=[2, -1])
    with pytest.raises(tlc.CompilationError, match="out_idx must be ints"):
        tlc.JITKernel(art, stages, out_idx=["Y"])
    with pytest.raises(tlc.runtime.ArgumentError, match=r"scale takes 2 inputs \(X, alpha\)"):
        kernel(1)


def test_profiler_scalars_without_torch(kernel):
    profiler = kernel.get_profiler()
    assert profiler.supply_type == tlc.TensorSupplyType.Auto
    alpha = kernel.params[1]
    assert alpha["kind"] == "scalar" and profiler.supply(alpha) == 1.0
    assert profiler.supply({"kind": "scalar", "dtype": "int32", "name": "n"}) == 1


def test_save_artifact(kernel, tmp_path):
    path = tmp_path / "scale.tlcart"
    kernel.save(str(path))
    loaded = tlc.runtime.load_artifact(str(path))
    assert loaded.name == "scale"


def _driver_present() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


class CudaArray:
    """Just enough of __cuda_array_interface__ for the runtime's checks."""

    def __init__(self, shape, typestr="<f4", ptr=0x10000):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr,
                                         "data": (ptr, False), "version": 3, "strides": None}


@pytest.mark.skipif(_driver_present(), reason="a CUDA driver is here: launches would run")
def test_launch_without_gpu_raises_launch_error(kernel):
    x, y = CudaArray((256, 512)), CudaArray((256, 512), ptr=0x20000)
    plain = tlc.JITKernel(kernel.artifact, kernel.stages)
    with pytest.raises(tlc.runtime.LaunchError, match="cannot load the CUDA driver"):
        plain(x, 2.0, y)
    with pytest.raises(tlc.runtime.LaunchError, match="a machine with an NVIDIA GPU and "
                                                      "driver is needed"):
        kernel(x, 2.0)  # out_idx: fails before allocating the output
    # argument errors come first, and name the parameter
    with pytest.raises(tlc.runtime.ArgumentError, match="'X'"):
        plain(CudaArray((256, 512), "<f2"), 2.0, y)


def test_import_has_no_launch_side_effects():
    code = ("import tlc as tilelang, tlc.language as T\n"
            "k = tilelang.jit\n"
            "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, LD_LIBRARY_PATH="/nonexistent"))
    assert r.returncode == 0 and r.stdout == "ok\n", r.stderr


# -- TileLang spellings -----------------------------------------------------------------------


def test_tilelang_names():
    import tlc as tilelang

    assert tilelang.jit is tlc.jit and tilelang.compile is tlc.compile
    assert tilelang.language is T
    assert tilelang.language.prim_func is T.prim_func
    kernel = tilelang.compile(_scale(64, 128, 32), out_idx=-1)
    assert kernel.out_idx == [2]
    assert isinstance(tilelang.jit(out_idx=[-1])(_scale), JITFactory)
    assert tilelang.TensorSupplyType.Normal.name == "Normal"


def test_jit_on_a_prim_func_compiles_it(cache):
    kernel = tlc.jit(_scale(64, 128, 32))
    assert isinstance(kernel, tlc.JITKernel) and ".entry scale(" in kernel.get_kernel_source()


def _bad():
    return 3


def test_factory_must_return_a_prim_func(cache):
    with pytest.raises(tlc.CompilationError, match="factory '_bad' must return a "
                                                   "@T.prim_func, got int"):
        tlc.jit(_bad)()


def test_compile_error_is_not_cached(cache):
    folder, calls = cache

    def factory(k):
        @T.prim_func
        def broken(A: T.Tensor((64, 64), "float16")):
            with T.Kernel(1):
                a = T.alloc_shared((64, 32), "float16")
                b = T.alloc_shared((k, 64), "float16")
                c = T.alloc_fragment((64, 64), "float32")
                T.gemm(a, b, c)

        return broken

    for _ in range(2):
        with pytest.raises(tlc.CompilationError, match="A has K = 32 but B has K = 16"):
            JITFactory(factory)(16)
    assert entries(folder) == [] and calls == []


def test_gemm_relu_example(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "examples/gemm_relu.py"), "--print-ir"],
                       capture_output=True, text=True, cwd=tmp_path,
                       env=dict(os.environ, TLC_CACHE_DIR=str(tmp_path / "cache")))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "Traceback" not in out + r.stderr
    assert "tile.gemm %0, %1, %2" in out and "tile.pipelined" in out and "num_stages = 3" in out
    assert 'tile.rasterization = {order = "col", panel_size = 4 : i64}' in out
    assert "arith.maximumf" in out
    assert "built tile IR of 'gemm_relu'" in out
    gemm_line = next(n for n, line in enumerate(
        (ROOT / "examples/gemm_relu.py").read_text().splitlines(), 1) if "T.gemm(" in line)
    assert gemm_line > 0
    assert "compiled to PTX: 4 wgmma, 5 TMA, 0 mma.sync, 0 cp.async" in out
    assert "no GPU here: not run" in out or "matches relu(a @ b)" in out
