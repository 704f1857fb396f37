"""tlc's own pass-config key tlc.disable_stream_k: the key -> its effect -> the
target name (+no_stream_k) -> the Target -> the optimize pipeline and the
cache key. No GPU."""

import sys
import warnings
from pathlib import Path

import pytest

import tlc
import tlc.language as T
from tlc import pass_config, timing
from tlc.compiler import pipeline
from tlc.compiler.targets import get_target
from tlc.jit_options import JitOptions

OFF = {"tlc.disable_stream_k": True}


def _resolve(target: str, **configs) -> str:
    return JitOptions(effects=pass_config.apply_pass_configs(configs)).resolve_target(target)


def test_the_key_is_honoured_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        effects = pass_config.apply_pass_configs({tlc.PassConfigKey.TLC_DISABLE_STREAM_K: True})
        assert effects.disable_stream_k
        assert pass_config.apply_pass_configs(OFF) == effects
        assert not pass_config.apply_pass_configs({"tlc.disable_stream_k": False}).disable_stream_k
    with pytest.raises(tlc.CompilationError,
                       match="'tlc.disable_stream_k' must be True or False, got 'yes'"):
        pass_config.apply_pass_configs({"tlc.disable_stream_k": "yes"})


def test_target_name_has_no_stream_k_on_sm90a_only():
    assert _resolve("sm_90a", **OFF) == "sm_90a+no_stream_k"
    # After +no_tma, before +fast_math.
    assert _resolve("sm_90a", **OFF, **{"tl.enable_fast_math": True}) == \
        "sm_90a+no_stream_k+fast_math"
    assert _resolve("sm_90a", **OFF, **{"tl.disable_tma_lower": True}) == \
        "sm_90a+no_tma+no_stream_k"
    # Architectures without stream-K: accepted, nothing changes.
    assert _resolve("sm_80", **OFF) == "sm_80"
    assert _resolve("sm_90a", **OFF, **{"tl.disable_wgmma": True}) == "sm_90"


@pytest.mark.parametrize("name", ["sm_90a+no_stream_k", "sm_90a+no_tma+no_stream_k",
                                  "sm_90a+no_stream_k+fast_math",
                                  "sm_90a+no_tma+no_stream_k+fast_math"])
def test_get_target_reads_the_name_back(name):
    t = get_target(name)
    assert (t.arch, t.stream_k, t.name) == ("sm_90a", False, name)
    assert t.tma == ("+no_tma" not in name) and t.fast_math == name.endswith("+fast_math")
    assert get_target("sm_90a").stream_k and get_target("sm_80+fast_math").stream_k


def test_only_sm90a_has_stream_k_to_turn_off():
    with pytest.raises(tlc.CompilationError,
                       match="target 'sm_80\\+no_stream_k': only sm_90a has stream-K"):
        get_target("sm_80+no_stream_k")


def test_optimize_pipeline_turns_the_option_off():
    off = pipeline.optimize_pipeline(get_target("sm_90a+no_tma+no_stream_k+fast_math"))
    assert off == pipeline.OPTIMIZE_PIPELINE.replace(
        "tile-pipeline-loops,", "tile-pipeline-loops{stream-k=false},")
    assert off.count("tile-pipeline-loops{stream-k=false},") == 1
    for name in ("sm_90a", "sm_90a+no_tma", "sm_90a+fast_math", "sm_80"):
        assert pipeline.optimize_pipeline(get_target(name)) == pipeline.OPTIMIZE_PIPELINE
    # The timing table names the pass the same either way.
    assert timing.pipeline_passes(off) == timing.pipeline_passes(pipeline.OPTIMIZE_PIPELINE)


def test_the_pipeline_without_stream_k_parses():
    from tlc.passmanager import PassManager

    with pipeline.new_context():
        PassManager.parse(pipeline.optimize_pipeline(get_target("sm_90a+no_stream_k")))


def test_a_module_with_its_own_target_keeps_the_name_asked_for():
    # tile.target holds the architecture only: stream-K (and fast math) come
    # from the target name compile_module is given.
    ctx = pipeline.new_context()
    module = pipeline.parse('module attributes {tile.target = #tile.target<"sm_90a">} {}', ctx)
    assert pipeline.set_target(module, "sm_90a+no_stream_k+fast_math").name == \
        "sm_90a+no_stream_k+fast_math"
    assert pipeline.set_target(module, "sm_90a").stream_k
    assert pipeline.set_target(module, None).name == "sm_90a"


def _copy(n=256):
    @T.prim_func
    def copy(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=128):
            for i in T.Parallel(n):
                B[i] = A[i]
    return copy


def test_cache_keys_differ_with_the_suffix():
    def key(target, **configs):
        return tlc.jit(target=target, pass_configs=configs)(_copy).cache_key(256)

    assert key("sm_90a", **OFF) != key("sm_90a")
    assert key("sm_80", **OFF) == key("sm_80")  # nothing changes there, the kernel is shared


def test_a_persistent_gemm_without_stream_k_takes_no_scratch():
    # Still warp-specialized (a TMA producer), with no stream-K partials or flags.
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    import gemm

    args = (1024, 1024, 1024, 128, 256, 64, 256, 3)
    off = tlc.jit(out_idx=[-1], target="sm_90a", pass_configs=OFF)(gemm.matmul.factory)(*args)
    assert off.artifact["version"] == 1 and off.artifact["target"] == "sm_90a"
    assert "cp.async.bulk.tensor" in off.get_kernel_source()
