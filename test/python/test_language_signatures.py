"""The T.* intrinsics are real Python functions: help() and editors show their
parameters and docstrings, and the frontend binds each call to that same
signature (names, order, defaults are written once, in tlc.language)."""

from __future__ import annotations

import inspect
import pydoc
from pathlib import Path

import pytest

import tlc
import tlc.language as T
from tlc.frontend import intrinsics, math_intrinsics
from tlc.frontend.prim_func import prim_func
from tlc.language.intrinsic import intrinsic_name

from bad_programs import assert_line_error

THIS = str(Path(__file__).resolve())

# Where TileLang itself takes any number of positional arguments.
VARIADIC = {"Kernel": "blocks", "Parallel": "extents", "max": "more", "min": "more",
            "alloc_var": "args", "ws": "warp_group_idx", "access_ptr": "extents"}
# Used only as loop iterators (`for k in T.serial(...)`), never called in an expression.
LOOP_ONLY = {"serial", "unroll", "vectorized", "Persistent"}


def exported_intrinsics() -> dict[str, object]:
    return {name: getattr(T, name) for name in T.__all__
            if intrinsic_name(getattr(T, name)) is not None and name not in T.ALIASES}


def test_aliases_are_the_intrinsics():
    for alias, name in T.ALIASES.items():
        assert getattr(T, alias) is getattr(T, name) and name in T.INTRINSICS


def test_every_intrinsic_is_exported_and_marked():
    found = exported_intrinsics()
    assert sorted(found) == sorted(T.INTRINSICS)
    for name, fn in found.items():
        assert inspect.isfunction(fn), name
        assert intrinsic_name(fn) == name == fn.__name__
    assert intrinsic_name(T.float16) is None and intrinsic_name(T.prim_func) is None


@pytest.mark.parametrize("name", sorted(T.INTRINSICS))
def test_signature_and_docstring(name):
    fn = getattr(T, name)
    params = inspect.signature(fn).parameters.values()
    kinds = {p.kind for p in params}
    assert inspect.Parameter.VAR_KEYWORD not in kinds, name
    variadic = [p.name for p in params if p.kind is inspect.Parameter.VAR_POSITIONAL]
    assert variadic == ([VARIADIC[name]] if name in VARIADIC else []), name
    doc = inspect.getdoc(fn)
    assert doc and "Example: `" in doc, name
    assert "can only be used inside" not in doc and "A `T.` function" not in doc, name
    for p in params:  # every parameter is described
        assert p.name in doc.split("Args:")[1], (name, p.name)
    assert f"{name}{inspect.signature(fn)}" in pydoc.render_doc(fn, renderer=pydoc.plaintext)


def test_help_shows_real_parameters():
    text = pydoc.render_doc(T.gemm, renderer=pydoc.plaintext)
    assert "gemm(A, B, C, transpose_A: 'bool' = False, transpose_B: 'bool' = False" in text
    assert "policy: 'GemmWarpPolicy' = <GemmWarpPolicy.Square: 'square'>" in text
    assert "wg_wait: 'int' = 0" in text and "C += A @ B" in text
    assert str(inspect.signature(T.reduce_max)) == (
        "(buffer, out, dim: 'int' = -1, clear: 'bool' = True, batch: 'int' = 1, "
        "nan_propagate: 'bool' = False, annotations=None) -> 'None'")
    assert list(inspect.signature(T.copy).parameters)[:4] == [
        "src", "dst", "coalesced_width", "disable_tma"]


@pytest.mark.parametrize("name", sorted(set(T.INTRINSICS) - {"ceildiv", "floordiv", "align_up"}))
def test_called_from_python_is_an_error(name):
    fn = getattr(T, name)
    args = [0] * sum(p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD
                     for p in inspect.signature(fn).parameters.values())
    with pytest.raises(RuntimeError, match=rf"^T\.{name} can only be used inside a @T\.prim_func"):
        fn(*args)


def test_host_integer_helpers():
    assert T.ceildiv(1000, 128) == 8 and T.floordiv(1000, 128) == 7
    assert T.align_up(1000, 128) == 1024 and T.align_up(a=1024, b=128) == 1024
    assert T.ceildiv(a=7, b=2) == 4
    with pytest.raises(TypeError, match="cdiv takes integers"):
        T.floordiv(1.5, 2)


def test_every_intrinsic_has_a_frontend_handler_and_back():
    from tlc import tirx
    from tlc.language.intrinsic import intrinsic_name

    handlers = {n[len("call_"):] for module in (intrinsics, math_intrinsics)
                for n in dir(module) if n.startswith("call_")}
    # tlc.tirx's TVM spellings have handlers of their own (tirx_const, ...).
    tvm_names = {intrinsic_name(tirx.const), intrinsic_name(tirx.reinterpret)}
    assert handlers == (set(T.INTRINSICS) - LOOP_ONLY) | tvm_names


@pytest.mark.parametrize("fn,unsupported", [
    (T.Kernel, intrinsics._KERNEL_UNSUPPORTED), (T.Parallel, intrinsics._PARALLEL_UNSUPPORTED),
    (T.Pipelined, intrinsics._PIPELINED_UNSUPPORTED), (T.copy, intrinsics._COPY_UNSUPPORTED),
])
def test_rejected_arguments_are_parameters(fn, unsupported):
    """The frontend rejects only parameters the signature has (each with a default)."""
    params = inspect.signature(fn).parameters
    for name in unsupported:
        assert name in params and params[name].default is not inspect.Parameter.empty, name
        assert "not supported by tlc" in inspect.getdoc(fn), name


# -- the frontend binds calls to the signatures --------------------------------------------


def _body(prim) -> str:
    """The IR of a prim_func's kernel, without the function's own name."""
    text = str(prim.build_module())
    return text.replace(prim.name, "F")


@prim_func
def by_position(A: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128):
        a = T.alloc_shared((64, 64), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        T.copy(A, a, disable_tma=True)
        T.gemm(a, a, c, False, True, T.GemmWarpPolicy.FullRow, True)
        for i, j in T.Parallel(64, 64):
            c[i, j] = T.if_then_else(c[i, j] > 0, c[i, j], T.cast(0, "float32"))
        r = T.alloc_local((4,), "float32")
        for k in T.serial(0, 4, 2):
            r[k] = T.max(r[k], 1.0, 2.0)
        T.copy(c, C)


@prim_func
def by_keyword(A: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1):
        a = T.alloc_shared(dtype="float16", shape=(64, 64))
        c = T.alloc_fragment((64, 64), "float32", scope="local.fragment")
        T.copy(dst=a, src=A, disable_tma=True)
        T.gemm(a, a, c, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
        for i, j in T.Parallel(64, 64):
            c[i, j] = T.if_then_else(c[i, j] > 0, f=T.cast(dtype="float32", value=0),
                                     t=c[i, j])
        r = T.alloc_local(shape=(4,))
        for k in T.serial(0, 4, step=2):
            r[k] = T.max(r[k], 1.0, 2.0)
        T.copy(c, C)


def test_positional_and_keyword_calls_build_the_same_ir():
    assert _body(by_position) == _body(by_keyword)
    body = _body(by_keyword)
    assert "transpose_b" in body and "tile.disable_tma" in body and "full_row" in body
    assert "clear_accum" in body and "scf.for" in body


@prim_func
def pipelined_default(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        s = T.alloc_shared((64,), "float32")
        for k in T.Pipelined(4):
            T.copy(A, s)


@prim_func
def pipelined_two(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        s = T.alloc_shared((64,), "float32")
        for k in T.Pipelined(0, 4, num_stages=2):
            T.copy(A, s)


def test_defaults_come_from_the_signature():
    assert inspect.signature(T.Pipelined).parameters["num_stages"].default == 2
    assert _body(pipelined_default) == _body(pipelined_two)


@prim_func
def pipelined_three_positional(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        s = T.alloc_shared((64,), "float32")
        for k in T.Pipelined(0, 4, 3):  # TileLang's order: the third is num_stages
            T.copy(A, s)


@prim_func
def pipelined_three_keyword(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        s = T.alloc_shared((64,), "float32")
        for k in T.Pipelined(0, 4, num_stages=3):
            T.copy(A, s)


@prim_func
def pipelined_step(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        s = T.alloc_shared((64,), "float32")
        for k in T.Pipelined(0, 8, step=2, num_stages=3):
            T.copy(A, s)


def test_pipelined_takes_tilelangs_positional_order():
    # TileLang's T.Pipelined(start, stop, num_stages, order, stage, sync, group, annotations):
    # a third positional argument is the depth (it was tlc's step once), the step a keyword.
    assert list(inspect.signature(T.Pipelined).parameters)[:8] == [
        "start", "stop", "num_stages", "order", "stage", "sync", "group", "annotations"]
    assert _body(pipelined_three_positional) == _body(pipelined_three_keyword)
    assert "num_stages = 3" in _body(pipelined_three_positional)
    assert _body(pipelined_step) != _body(pipelined_three_keyword)


@prim_func
def copy_positional_unsupported(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        s = T.alloc_shared((64,), "float32")
        T.copy(A, s, 4)


@prim_func
def copy_unknown(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        s = T.alloc_shared((64,), "float32")
        T.copy(A, s, mask=1)


@prim_func
def serial_unknown(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        for k in T.serial(4, stride=2):
            A[k] = 0.0


@prim_func
def kernel_unknown(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, thread=128):
        A[0] = 0.0


@prim_func
def range_keyword(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        for k in range(0, 4, step=2):
            A[k] = 0.0


@prim_func
def max_keyword(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        A[0] = T.max(a=1.0, b=2.0)


@pytest.mark.parametrize("prim,message", [
    (copy_positional_unsupported, "T.copy: the argument 'coalesced_width' is not supported yet "
                                  "by tlc (tlc picks the vector width of each access itself)"),
    (copy_unknown, "T.copy has no parameter 'mask' (parameters: src, dst, disable_tma)"),
    (serial_unknown, "T.serial has no parameter 'stride' (parameters: start, stop, step)"),
    (kernel_unknown, "T.Kernel has no parameter 'thread' (parameters: *blocks, threads, cluster_dims)"),
    (range_keyword, "range takes no keyword arguments"),
    (max_keyword, "T.max takes two or more values"),
])
def test_binding_errors(prim, message):
    with pytest.raises(tlc.CompilationError) as e:
        prim.build_module()
    assert message in str(e.value)
    assert e.value.location.file == THIS


@pytest.mark.parametrize("body, message", [
    ("for i in T.Parallel(64, annotations={}): Y[i] = X[i]",
     "T.Parallel: the argument 'annotations' is not supported yet by tlc"),
    ("T.copy(X, s, prefer_instruction='tma')",
     "T.copy: the argument 'prefer_instruction' is not supported yet by tlc (tlc picks TMA"),
    ("T.fill(s, 0, annotations={})", "T.fill: the argument 'annotations' is not supported"),
    ("T.clear(s, annotations={})", "T.clear: the argument 'annotations' is not supported"),
    ("for k in T.unroll(4, unroll_factor=2): s[k] = 0",
     "the argument 'unroll_factor' is not supported yet by tlc (partial unrolling"),
    ("for k in T.serial(4, annotations={}): s[k] = 0",
     "T.serial: the argument 'annotations' is not supported"),
    ("for k in T.unroll(n, explicit=True): s[k] = 0",
     "T.unroll(explicit=True) needs constant bounds"),
    ("T.gemm(s2, s2, c, mbar=None)", "T.gemm: the argument 'mbar' is not supported yet by tlc "
                                     "(Blackwell's tcgen05"),
])
def test_tilelang_only_arguments_are_errors(body, message, tmp_path):
    assert_line_error(tmp_path, "X: T.Tensor((64,), 'float32'), Y: T.Tensor((64,), 'float32'), "
                                "n: T.int32", body, message,
                      prelude=["s = T.alloc_shared((64,), 'float32')",
                               "s2 = T.alloc_shared((64, 64), 'float16')",
                               "c = T.alloc_fragment((64, 64), 'float32')"], threads=128)


def test_alloc_global_scope_is_global(tmp_path):
    from bad_programs import compile_error

    code = ("import tlc.language as T\n@T.prim_func\ndef bad(X: T.Tensor((64,), 'float32')):\n"
            "    g = T.alloc_global((64,), 'float32', scope='shared')\n"
            "    with T.Kernel(1, threads=64):\n        pass\n")
    error, path = compile_error(tmp_path, code)
    assert f"{path}:4:" in error and "T.alloc_global's scope is \"global\", got 'shared'" in error


@pytest.mark.parametrize("body, message", [
    ("Y[0] = T.cast(X[0], 'float16', round='rz')", "T.cast: round='rz' is not supported by tlc"),
    ("Y[0] = T.cast(X[0], 'float16', sat=False)", "T.cast: sat=False is not supported by tlc"),
    ("Y[0] = T.cast(X[0], 'float16', rbits=3)",
     "T.cast: the argument 'rbits' is not supported yet by tlc (stochastic rounding)"),
])
def test_cast_options(body, message, tmp_path):
    assert_line_error(tmp_path, "X: T.Tensor((64,), 'float32'), Y: T.Tensor((64,), 'float16')",
                      body, message, prelude=["t = T.get_thread_binding()"])
