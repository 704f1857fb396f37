"""No argument is accepted and ignored: every keyword of the T.* intrinsics and
of @tlc.jit / tlc.compile takes effect, or is an error at the user's line that
names it (issue 8, item 3)."""

import warnings
from pathlib import Path

import pytest

import tlc
import tlc.language as T
from tlc import pass_config
from tlc.frontend.prim_func import prim_func
import marked_lines

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()


def line_of(marker: str) -> int:
    return marked_lines.line_of(LINES, marker)


def build_error(prim) -> tlc.CompilationError:
    with pytest.raises(tlc.CompilationError) as e:
        prim.build_module()
    return e.value


def check(prim, marker: str, at: str, *message: str):
    """Building `prim` fails at the marked line, at the column of `at`, saying `message`."""
    error = build_error(prim)
    line = line_of(marker)
    col = LINES[line - 1].find(at) + 1
    assert (error.location.file, error.location.line, error.location.col) == (THIS, line, col), \
        str(error)
    for part in message:
        assert part in str(error), str(error)


# -- intrinsics -------------------------------------------------------------------------


def pipelined_with(keyword: str):
    @prim_func
    def prog(A: T.Tensor((256,), "float32")):
        with T.Kernel(1, threads=128):
            s = T.alloc_shared((128,), "float32")
            for k in T.Pipelined(2, num_stages=2, **{keyword: [0, 1]}):  # E:pipelined
                T.copy(A[k * 128], s)

    return prog


def test_pipelined_double_star_is_an_error():
    error = build_error(pipelined_with("order"))
    assert error.location.line == line_of("pipelined")
    assert "T.Pipelined does not take **keyword arguments" in str(error)


@prim_func
def pipelined_order(A: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((128,), "float32")
        for k in T.Pipelined(2, num_stages=2, order=[0, 1]):  # E:order
            T.copy(A[k * 128], s)


@prim_func
def pipelined_sync(A: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((128,), "float32")
        for k in T.Pipelined(2, num_stages=2, sync=[[0, 1]]):  # E:sync
            T.copy(A[k * 128], s)


@prim_func
def pipelined_stage(A: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((128,), "float32")
        for k in T.Pipelined(2, num_stages=2, stage=[0, 1]):  # E:stage
            T.copy(A[k * 128], s)


@prim_func
def pipelined_group(A: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((128,), "float32")
        for k in T.Pipelined(2, num_stages=2, group=[[0], [1]]):  # E:group
            T.copy(A[k * 128], s)


def test_pipelined_scheduling_hints_need_stage_and_order():
    # stage / order / group take effect together (test/python/test_pipeline_schedule.py);
    # one without the other is an error at it, and sync is not supported.
    check(pipelined_order, "order", "order=", "'stage' is needed with 'order'")
    check(pipelined_sync, "sync", "sync=", "T.Pipelined", "'sync'", "not supported yet")
    check(pipelined_stage, "stage", "stage=", "'order' is needed with 'stage'")
    check(pipelined_group, "group", "group=", "'stage' is needed with 'group'")


@prim_func
def pipelined_no_stages(A: T.Tensor((256,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128):
        s = T.alloc_fragment((128,), "float32")
        acc = T.alloc_fragment((128,), "float32")
        T.clear(acc)
        for k in T.Pipelined(2, num_stages=0):
            T.copy(A[k * 128], s)
            for i in T.Parallel(128):
                acc[i] += s[i]
        T.copy(acc, B[0])


def test_num_stages_zero_is_a_plain_loop():
    ir = pipelined_no_stages.script()
    assert "scf.for" in ir and "tile.pipelined" not in ir
    tlc.compile(pipelined_no_stages, target="sm_80")  # and it compiles to PTX


@prim_func
def parallel_width(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128):
        f = T.alloc_fragment((128,), "float32")
        for i in T.Parallel(128, coalesced_width=4):  # E:par-width
            f[i] = 0.0


@prim_func
def copy_width(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128):
        f = T.alloc_fragment((128,), "float32")
        T.copy(A[0], f, coalesced_width=4)  # E:copy-width


def test_hints_tlc_does_not_honour_are_errors():
    check(parallel_width, "par-width", "coalesced_width", "T.Parallel", "'coalesced_width'",
          "not supported yet")
    check(copy_width, "copy-width", "coalesced_width", "T.copy", "'coalesced_width'",
          "not supported yet")


def copy_tma(flag):
    @prim_func
    def prog(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            s = T.alloc_shared((128,), "float32")
            T.copy(A[0], s, disable_tma=flag)  # E:tma
            T.copy(s, B[0])

    return prog


def test_disable_tma_is_recorded_on_the_copy():
    assert "tile.disable_tma" in copy_tma(True).script()
    assert "tile.disable_tma" not in copy_tma(False).script()
    error = build_error(copy_tma("yes"))
    assert error.location.line == line_of("tma")
    assert "disable_tma must be True or False, got 'yes'" in str(error)


def alloc_scope(scope):
    @prim_func
    def prog(A: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            s = T.alloc_shared((128,), "float32", scope)  # E:scope
            T.copy(A[0], s)

    return prog


def test_alloc_scope_takes_effect_or_is_an_error():
    assert "workgroup" in alloc_scope("shared.dyn").script()
    assert "workgroup" in alloc_scope("shared").script()
    error = build_error(alloc_scope("local.fragment"))
    assert error.location.line == line_of("scope")
    assert "T.alloc_shared takes scope 'shared' or 'shared.dyn', got 'local.fragment'" \
        in str(error)


def test_dynamic_dtype_is_checked():
    assert T.dynamic("m", "int64").dtype == "int64"
    with pytest.raises(ValueError, match="a symbolic size is an int32 or int64, got 'float32'"):
        T.dynamic("m", "float32")


# -- jit and compile ------------------------------------------------------------------------


def _copy(N=128):
    @T.prim_func
    def copy(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128):
            f = T.alloc_fragment((N,), "float32")
            T.copy(A[0], f)
            T.copy(f, B[0])

    return copy


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TLC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TLC_TARGET", raising=False)


def test_jit_rejects_unknown_keywords():
    with pytest.raises(TypeError, match="unexpected keyword argument 'num_warps'"):
        tlc.jit(num_warps=4)


def jit_error(**options) -> tlc.CompilationError:
    with pytest.raises(tlc.CompilationError) as e:
        tlc.jit(**options)(_copy)  # E:jit
    assert e.value.location.file == THIS and e.value.location.line == line_of("jit")
    return e.value


def test_jit_options_tlc_cannot_honour_are_errors_at_the_users_line():
    assert "the flag '-G' is not supported" in str(jit_error(compile_flags=["-O3", "-G"]))
    assert "the ptxas option '--maxrregcount=128' is not supported" in str(
        jit_error(compile_flags=["--ptxas-options=-v,--maxrregcount=128"]))
    assert "'target_host'" in str(jit_error(target_host="llvm"))
    assert "unknown execution_backend 'bogus'" in str(jit_error(execution_backend="bogus"))
    assert "unknown target 'sm_75'" in str(jit_error(target="sm_75"))
    assert "verbose must be True or False" in str(jit_error(verbose="yes"))


def test_execution_backend_is_reported_once(monkeypatch):
    monkeypatch.setattr("tlc.jit_options._WARNED_BACKENDS", set())
    with pytest.warns(UserWarning, match="execution_backend='cython' has no effect"):
        tlc.jit(execution_backend="cython")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tlc.jit(execution_backend="cython")
        tlc.jit(execution_backend="auto")


def test_compile_flags(cache, monkeypatch):
    # TileLang's nvcc flags (its DeepSeek MLA examples pass these): C++-only ones have
    # nothing to act on and are reported once; --use_fast_math is honoured.
    from tlc import compile_flags

    monkeypatch.setattr(compile_flags, "_WARNED", set())
    flags = ["-O3", "--ptxas-options=-v,--register-usage-level=10", "-DNDEBUG",
             "-Wno-deprecated-declarations", "-U__CUDA_NO_HALF_OPERATORS__",
             "--expt-relaxed-constexpr", "--expt-extended-lambda"]
    with pytest.warns(UserWarning) as record:
        kernel = tlc.jit(compile_flags=flags)(_copy)()
    said = " ".join(str(w.message) for w in record)
    for flag in ("'-O3'", "'-DNDEBUG'", "'--ptxas-options -v'",
                 "'--ptxas-options --register-usage-level=10'", "'--expt-extended-lambda'"):
        assert f"compile flag {flag} has no effect in tlc" in said
    assert kernel.artifact["target"] == "sm_90a"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tlc.jit(compile_flags=flags)  # reported once per process
        from tlc.jit_options import jit_options

        fast = jit_options(compile_flags=["--use_fast_math"])
        assert fast.resolve_target("sm_90a") == "sm_90a+fast_math"
        via_key = jit_options(pass_configs={tlc.PassConfigKey.TL_DEVICE_COMPILE_FLAGS:
                                            "-use_fast_math -DNDEBUG"})
        assert via_key.resolve_target("sm_80") == "sm_80+fast_math"
        assert jit_options(compile_flags=flags).resolve_target("sm_90a") == "sm_90a"
    assert "must be a list of strings" in str(jit_error(compile_flags=[3]))


def test_target_spellings(cache):
    assert tlc.jit(target="cuda -arch=sm_80")(_copy)().artifact["target"] == "sm_80"
    assert tlc.jit(target="cuda")(_copy)().artifact["target"] == "sm_90a"
    assert tlc.compile(_copy(), target="sm_86").artifact["target"] == "sm_86"


def test_pass_configs(cache, monkeypatch):
    monkeypatch.setattr(pass_config, "_WARNED", set())
    K = tlc.PassConfigKey
    # honoured: no wgmma, so sm_90 code
    kernel = tlc.jit(pass_configs={K.TL_DISABLE_WGMMA: True})(_copy)()
    assert kernel.artifact["target"] == "sm_90"
    # no use: reported once per key, then silent; "tirx." spellings are TIR keys
    with pytest.warns(UserWarning, match="'tl.disable_safe_memory_legalize' has no effect"):
        tlc.jit(pass_configs={K.TL_DISABLE_SAFE_MEMORY_ACCESS: True})
    with pytest.warns(UserWarning, match="'tir.disable_cse_tir' has no effect"):
        tlc.jit(pass_configs={"tirx.disable_cse_tir": True})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tlc.jit(pass_configs={"tl.disable_safe_memory_legalize": True, K.TIR_DISABLE_CSE: True})
        # honoured, so no warning: TMA off (the artifact still says sm_90a)
        kernel = tlc.jit(pass_configs={K.TL_DISABLE_TMA_LOWER: True})(_copy)()
        assert kernel.artifact["target"] == "sm_90a"
    # cannot honour, unknown: errors
    assert "pass_configs 'tl.device_compile_flags': the flag '-lineinfo' is not supported" in \
        str(jit_error(pass_configs={K.TL_DEVICE_COMPILE_FLAGS: "-DX -lineinfo"}))
    assert "unknown pass_configs key 'tl.no_such_key'" in str(
        jit_error(pass_configs={"tl.no_such_key": 1}))
    with pytest.raises(tlc.CompilationError, match="'tl.disable_wgmma' must be True or False"):
        tlc.compile(_copy(), pass_configs={K.TL_DISABLE_WGMMA: "no"})


def test_verbose_and_debug_root_path(cache, tmp_path, capsys):
    root = tmp_path / "debug"
    factory = tlc.jit(verbose=True, debug_root_path=str(root))(_copy)
    factory(256)
    assert "tlc: compiled 'copy' for sm_90a" in capsys.readouterr().err
    assert (root / "copy.ptx").read_text().startswith("//")
    assert "tile.kernel" in (root / "copy.tile.mlir").read_text()
    assert sorted(p.name for p in root.iterdir()) == [
        "copy.gpu.mlir", "copy.nvvm.mlir", "copy.optimized.mlir", "copy.ptx", "copy.tile.mlir"]
    tlc.jit(verbose=True)(_copy)(256)  # a fresh factory: from the disk cache
    assert "tlc: loaded from the disk cache 'copy'" in capsys.readouterr().err


def test_ceildiv_and_cdiv_on_host_ints():
    assert tlc.cdiv(1000, 128) == 8 and tlc.cdiv(1024, 128) == 8
    assert T.ceildiv(1000, 128) == 8 and T.floordiv(1000, 128) == 7
    with pytest.raises(TypeError, match="cdiv takes integers"):
        T.ceildiv(1.5, 2)
    with pytest.raises(ZeroDivisionError):
        tlc.cdiv(1, 0)
    with pytest.raises(RuntimeError, match="only be used inside a @T.prim_func"):
        T.exp(1.0)


@prim_func
def swizzle_other(A: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((64, 64), "float16")
        t = T.alloc_shared((64, 64), "float16")
        T.annotate_layout({s: tlc.layout.make_swizzled_layout(t)})  # E:swz-other
        T.copy(A[0, 0], s)
        T.copy(A[0, 0], t)


@prim_func
def swizzle_fragment(A: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128):
        f = T.alloc_fragment((64, 64), "float16")
        T.annotate_layout({f: tlc.layout.make_swizzled_layout(f)})  # E:swz-frag
        T.copy(A[0, 0], f)


@prim_func
def swizzle_same(A: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((64, 64), "float16")
        T.annotate_layout({s: tlc.layout.make_swizzled_layout(s)})
        T.copy(A[0, 0], s)


def test_make_swizzled_layout_checks_its_buffer():
    assert "layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>" in \
        swizzle_same.script()
    check(swizzle_other, "swz-other", "tlc.layout",
          "the layout made for 't' annotates 's'")
    check(swizzle_fragment, "swz-frag", "tlc.layout",
          "make_swizzled_layout takes a shared buffer; 'f' is fragment")


def test_cli_define_on_mlir_is_a_usage_error(repo, capsys):
    from tlc import cli

    with pytest.raises(SystemExit) as e:
        cli.main([str(repo / "examples/vadd.mlir"), "-D", "BLOCK=64"])
    assert e.value.code == 2
    assert "tlc: error: -D sets constants of .tile files" in capsys.readouterr().err
