"""The kernel cache's key: a factory's kernel is never served for another
program, whatever the program depends on (closure cells, defaults, module
dicts, attributes of imported modules, helpers in other modules), in memory
and on disk; values the key cannot fingerprint fall back to the tile IR."""

import importlib
import sys
import textwrap

import pytest

import tlc.language as T
from tlc import cache_key, compiler
from tlc.jit import JITFactory

# A factory that scales by a value it gets from `get_scale`, however it reads it.
BODY = """
    @T.prim_func
    def scaled(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
            x = T.alloc_fragment((128,), "float32")
            T.copy(X[bx * 128], x)
            for i in T.Parallel(128):
                x[i] = x[i] * {scale}
            T.copy(x, Y[bx * 128])

    return scaled
"""


def _factory_source(signature: str, scale_expr: str) -> str:
    return f"def factory({signature}):\n" + textwrap.indent(
        textwrap.dedent(BODY).format(scale=scale_expr), "    ")


def make_scaled(scale):
    """One closure, many factories: the issue's case."""

    def factory(N):
        @T.prim_func
        def scaled(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
            with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
                x = T.alloc_fragment((128,), "float32")
                T.copy(X[bx * 128], x)
                for i in T.Parallel(128):
                    x[i] = x[i] * scale
                T.copy(x, Y[bx * 128])

        return scaled

    return factory


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TLC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TLC_TARGET", raising=False)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    calls = []
    real = compiler.compile_module

    def counting(module, *args, **kwargs):
        calls.append(1)
        return real(module, *args, **kwargs)

    monkeypatch.setattr(compiler, "compile_module", counting)
    return calls


def _scale_in(kernel) -> float:
    """The constant the kernel multiplies by, read from its tile IR."""
    ir = kernel.get_mlir("tile")
    consts = [float(line.split("arith.constant")[1].split(":")[0])
              for line in ir.splitlines() if "arith.constant" in line and ": f32" in line]
    assert len(consts) == 1, ir
    return consts[0]


def _module(tmp_path, monkeypatch, name: str, text: str):
    """Writes and imports (or re-imports) module `name` from tmp_path."""
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(text))
    importlib.invalidate_caches()
    if name in sys.modules:
        return importlib.reload(sys.modules[name])
    module = importlib.import_module(name)
    monkeypatch.setitem(sys.modules, name, module)
    return module


def test_closure_cells_are_in_the_key(cache):
    k3 = JITFactory(make_scaled(3.0))(256)
    k5 = JITFactory(make_scaled(5.0))(256)
    assert (_scale_in(k3), _scale_in(k5)) == (3.0, 5.0)
    assert JITFactory(make_scaled(3.0))(256).get_kernel_source() == k3.get_kernel_source()
    assert len(cache) == 2  # the second make_scaled(3.0) came from the disk cache


def test_default_taken_from_a_global(cache, tmp_path, monkeypatch):
    cfg = _module(tmp_path, monkeypatch, "tlc_t_cfg_default", "SCALE = 3.0\n")
    text = ("import tlc.language as T\nfrom tlc_t_cfg_default import SCALE\n\n"
            + _factory_source("N, s=SCALE", "s"))
    mod = _module(tmp_path, monkeypatch, "tlc_t_default", text)
    assert _scale_in(JITFactory(mod.factory)(256)) == 3.0
    cfg.SCALE = 5.0
    mod = importlib.reload(mod)  # the same source, another default
    assert _scale_in(JITFactory(mod.factory)(256)) == 5.0


def test_module_level_dict_mutated(cache, tmp_path, monkeypatch):
    text = ("import tlc.language as T\nPARAMS = {'scale': 3.0}\n\n"
            + _factory_source("N", "PARAMS['scale']"))
    mod = _module(tmp_path, monkeypatch, "tlc_t_dict", text)
    factory = JITFactory(mod.factory)
    assert _scale_in(factory(256)) == 3.0
    mod.PARAMS["scale"] = 5.0
    assert _scale_in(factory(256)) == 5.0  # the same factory: its memory cache too
    assert _scale_in(JITFactory(mod.factory)(256)) == 5.0  # a fresh one: the disk cache
    mod.PARAMS["scale"] = 3.0
    assert _scale_in(JITFactory(mod.factory)(256)) == 3.0
    assert len(cache) == 2


def test_attribute_of_an_imported_module(cache, tmp_path, monkeypatch):
    cfg = _module(tmp_path, monkeypatch, "tlc_t_cfg_attr", "SCALE = 3.0\n")
    text = ("import tlc.language as T\nimport tlc_t_cfg_attr as cfg\n\n"
            + _factory_source("N", "cfg.SCALE"))
    mod = _module(tmp_path, monkeypatch, "tlc_t_attr", text)
    assert _scale_in(JITFactory(mod.factory)(256)) == 3.0
    monkeypatch.setattr(cfg, "SCALE", 5.0)
    assert _scale_in(JITFactory(mod.factory)(256)) == 5.0


def test_helper_function_from_another_module(cache, tmp_path, monkeypatch):
    _module(tmp_path, monkeypatch, "tlc_t_helper", "def scale():\n    return 3.0\n")
    text = ("import tlc.language as T\nfrom tlc_t_helper import scale\n\n"
            + _factory_source("N", "s").replace("def factory(N):\n",
                                                "def factory(N):\n    s = scale()\n"))
    mod = _module(tmp_path, monkeypatch, "tlc_t_uses_helper", text)
    assert _scale_in(JITFactory(mod.factory)(256)) == 3.0
    _module(tmp_path, monkeypatch, "tlc_t_helper", "def scale():\n    return 5.25\n")
    mod = importlib.reload(mod)  # the factory's own file is unchanged
    assert _scale_in(JITFactory(mod.factory)(256)) == 5.25


class Config:
    scale = 3.0


CONFIG = Config()


def _reads_an_instance(N):
    return make_scaled(CONFIG.scale)(N)


def test_unkeyable_values_fall_back_to_the_tile_ir(cache, monkeypatch):
    assert cache_key.factory_key(_reads_an_instance, (256,), {}, "sm_90a") is None
    factory = JITFactory(_reads_an_instance)
    assert _scale_in(factory(256)) == 3.0
    monkeypatch.setattr(CONFIG, "scale", 5.0)
    assert _scale_in(factory(256)) == 5.0
    monkeypatch.setattr(CONFIG, "scale", 3.0)
    assert _scale_in(JITFactory(_reads_an_instance)(256)) == 3.0
    assert len(cache) == 2  # the IR-keyed entry of 3.0 was found again
    assert factory.cache_key(256) == factory.cache_key(256)


@pytest.mark.parametrize("body", [
    "return open('x')",  # reads a file
    "return getattr(sys, 'argv')",  # dynamic attribute access
    "return globals()['X']",
    "return os.environ['X']",  # an object with hidden state
])
def test_hidden_inputs_make_a_factory_unkeyable(body):
    env = {"sys": sys, "os": __import__("os")}
    exec(f"def factory(N):\n    {body}\n", env)
    assert cache_key.factory_key(env["factory"], (1,), {}, "sm_90a") is None


def test_fast_key_hit_runs_neither_frontend_nor_compiler(cache, monkeypatch):
    from tlc.frontend import PrimFunc

    builds = []
    real = PrimFunc.build_module
    monkeypatch.setattr(PrimFunc, "build_module",
                        lambda self, *a: builds.append(self.name) or real(self, *a))
    JITFactory(make_scaled(2.0))(256)
    assert builds == ["scaled"] and len(cache) == 1
    JITFactory(make_scaled(2.0))(256)
    assert builds == ["scaled"] and len(cache) == 1


def test_state_in_a_closure_is_in_the_key():
    seen = []

    def factory(N):
        seen.append(N)
        return make_scaled(1.0)(N)

    before = cache_key.factory_key(factory, (256,), {}, "sm_90a")
    seen.append(1)
    assert cache_key.factory_key(factory, (256,), {}, "sm_90a") != before


def test_key_covers_target_arguments_and_compiler(cache, monkeypatch):
    f = make_scaled(3.0)
    a = cache_key.factory_key(f, (256,), {}, "sm_90a")
    assert a == cache_key.factory_key(make_scaled(3.0), (256,), {}, "sm_90a")
    assert a != cache_key.factory_key(f, (256,), {}, "sm_80")
    assert a != cache_key.factory_key(f, (512,), {}, "sm_90a")
    assert a != cache_key.factory_key(f, (256.0,), {}, "sm_90a")  # 256 and 256.0 differ
    assert cache_key.ir_key("x", "k", "sm_90a") != cache_key.ir_key("x", "k", "sm_80")
    monkeypatch.setattr(cache_key, "compiler_identity", lambda: "another build")
    assert a != cache_key.factory_key(f, (256,), {}, "sm_90a")
    assert cache_key.ir_key("x", "k", "sm_90a") != ""


def test_tlc_names_imported_one_by_one_are_keyable():
    from tlc.language import Tensor, copy, float16

    def factory(N):
        return (Tensor, copy, float16, T.dynamic, N)

    assert cache_key.factory_key(factory, (1,), {}, "sm_90a") is not None


def test_disk_hit_in_a_new_process_loads_no_compiler(tmp_path):
    import os
    import subprocess

    (tmp_path / "tlc_t_light.py").write_text(textwrap.dedent("""
        import tlc
        import tlc.language as T

        @tlc.jit
        def factory(N):
            @T.prim_func
            def k(X: T.Tensor((N,), "float32")):
                with T.Kernel(1, threads=128):
                    x = T.alloc_fragment((128,), "float32")
                    T.fill(x, 1.0)
                    T.copy(x, X[0])

            return k
        """))
    code = ("import sys, tlc_t_light\nk = tlc_t_light.factory(128)\n"
            "print(k.name, 'tlc.compiler' in sys.modules, 'tlc.ir' in sys.modules)\n")
    env = dict(os.environ, TLC_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, cwd=tmp_path) for _ in range(2)]
    assert [r.stdout for r in runs] == ["k True True\n", "k False False\n"], \
        [r.stderr for r in runs]


def test_macro_from_another_module_is_in_the_key(cache, tmp_path, monkeypatch):
    # A @T.macro the factory imports is keyed by its function: editing its body
    # changes the kernel served, the factory's own file unchanged.
    def macro_module(scale):
        return ("import tlc.language as T\n\n@T.macro\ndef scale_by(x, n):\n"
                f"    for i in T.Parallel(n):\n        x[i] = x[i] * {scale}\n")

    _module(tmp_path, monkeypatch, "tlc_t_macro", macro_module(3.0))
    text = ("import tlc.language as T\nfrom tlc_t_macro import scale_by\n\n"
            "def factory(N):\n"
            "    @T.prim_func\n"
            "    def scaled(X: T.Tensor((N,), 'float32'), Y: T.Tensor((N,), 'float32')):\n"
            "        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:\n"
            "            x = T.alloc_fragment((128,), 'float32')\n"
            "            T.copy(X[bx * 128], x)\n"
            "            scale_by(x, 128)\n"
            "            T.copy(x, Y[bx * 128])\n\n"
            "    return scaled\n")
    mod = _module(tmp_path, monkeypatch, "tlc_t_uses_macro", text)
    assert cache_key.factory_key(mod.factory, (256,), {}, "sm_90a") is not None
    assert _scale_in(JITFactory(mod.factory)(256)) == 3.0
    _module(tmp_path, monkeypatch, "tlc_t_macro", macro_module(5.25))
    mod = importlib.reload(mod)
    assert _scale_in(JITFactory(mod.factory)(256)) == 5.25
