"""tlc.autotune / AutoTuner on the CPU: a fake timer stands in for the GPU.
Candidates that fail to compile or check are skipped and reported, the fastest
wins, a second tuning reads the winner from the disk cache, and compiling in
worker processes gives the same kernels as compiling here."""

import sys
import types

import pytest

import tlc
import tlc.language as T
from tlc.autotuner import AutotuneError, AutoTuner, compile_pool, tuner
from tlc.runtime import LaunchError


def _scale(N, block=128, threads=128):
    @T.prim_func
    def scale(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            x = T.alloc_fragment((block,), "float32")
            T.copy(X[bx * block], x)
            for i in T.Parallel(block):
                x[i] = x[i] * 2.0
            T.copy(x, Y[bx * block])

    return scale


scale = tlc.jit(out_idx=[-1])(_scale)

CONFIGS = [{"block": 64}, {"block": 128}, {"block": 256}, {"block": 128, "threads": 4096}]
FAKE_MS = {64: 3.0, 128: 1.0, 256: 2.0}


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("TLC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TLC_TARGET", raising=False)
    monkeypatch.setattr(AutoTuner, "_memory", {})


def fake_timer(log):
    def timer(kernel, config):
        log.append(config)
        assert isinstance(kernel, tlc.JITKernel) and kernel.artifact["ptx"]
        return FAKE_MS[config["block"]]

    return timer


def test_from_kernel_tunes_a_closure(fresh):
    def kernel(block=None):
        return _scale(1024, block)

    tuner = AutoTuner.from_kernel(kernel, CONFIGS[:3]).set_compile_args(out_idx=-1)
    res = tuner.set_profile_args(timer=fake_timer([]), workers=2).run()
    assert res.config == {"block": 128} and res.kernel.out_idx == [1]


def test_picks_the_fastest_and_reports_the_skipped(fresh, capsys):
    log = []
    tuned = tlc.autotune(configs=CONFIGS, timer=fake_timer(log), workers=1)(scale)
    kernel = tuned(1024)
    assert kernel.config == {"block": 128} and kernel.latency == 1.0
    assert log == CONFIGS[:3]  # the candidate that failed to compile is not timed
    assert kernel.out_idx == [1]  # @tlc.jit's options hold for every candidate
    err = capsys.readouterr().err
    assert "skipped {'block': 128, 'threads': 4096}: failed to compile:" in err
    assert "threads must be an integer in [1, 1024], got 4096" in err
    assert "tlc.autotune _scale(1024): best {'block': 128} 1.0000 ms (3 timed, 1 skipped)" \
        in err
    assert "compiled 4/4" in err and "timed 4/4" in err


def test_failing_checks_are_skipped(fresh, capsys):
    def timer(kernel, config):
        if config["block"] == 128:
            raise AssertionError("output 0: 12 of 1024 elements differ")
        return FAKE_MS[config["block"]]

    res = AutoTuner(scale, CONFIGS[:3], args=(1024,)).set_profile_args(
        timer=timer, workers=1).run()
    assert res.config == {"block": 256} and res.latency == 2.0
    assert res.skipped == [({"block": 128}, "failed the check: output 0: 12 of 1024 "
                                            "elements differ")]
    assert res.libcode == res.kernel.get_kernel_source()


def test_all_failing_is_an_error(fresh):
    def timer(kernel, config):
        raise RuntimeError("no")

    tuned = tlc.autotune(configs=CONFIGS[:2], timer=timer, workers=1)(scale)
    with pytest.raises(AutotuneError, match="all 2 candidates failed") as e:
        tuned(1024)
    assert "failed to run: RuntimeError: no" in str(e.value)


def test_second_run_reads_the_winner_from_the_disk_cache(fresh, monkeypatch, capsys):
    log = []
    tuned = tlc.autotune(configs=CONFIGS[:3], timer=fake_timer(log), workers=1)(scale)
    first = tuned(1024)
    assert len(log) == 3
    assert tuned(1024).config == first.config and len(log) == 3  # memory
    monkeypatch.setattr(AutoTuner, "_memory", {})  # as a new process would be
    capsys.readouterr()
    again = tlc.autotune(configs=CONFIGS[:3], timer=fake_timer(log), workers=1)(scale)(1024)
    assert len(log) == 3  # nothing re-timed
    assert again.config == {"block": 128} and again.latency == 1.0
    assert again.artifact == first.artifact
    assert "best config from the disk cache: {'block': 128}" in capsys.readouterr().err
    # other arguments, or another candidate list, tune again
    tlc.autotune(configs=CONFIGS[:3], timer=fake_timer(log), workers=1)(scale)(2048)
    assert len(log) == 6
    tlc.autotune(configs=CONFIGS[:2], timer=fake_timer(log), workers=1)(scale)(1024)
    assert len(log) == 8


def test_parallel_compilation_equals_serial(fresh, monkeypatch):
    assert compile_pool._locate(_scale) == (__name__, "_scale")
    options = scale.options
    jobs = [compile_pool.Job((1024,), c, [-1], options, False) for c in CONFIGS]
    done = []
    with monkeypatch.context() as m:  # nothing compiles in this process
        m.setattr(compile_pool, "compile_job", None)
        parallel = compile_pool.compile_all(_scale, jobs, 2, 120, done.append)
    serial = compile_pool.compile_all(_scale, jobs, 1, 120, lambda n: None)
    assert done == [1, 2, 3, 4]
    for p, s in zip(parallel[:3], serial[:3]):
        assert p.error is None and s.error is None
        assert p.kernel.artifact == s.kernel.artifact  # bit-identical PTX and metadata
        assert p.kernel.stages == s.kernel.stages
    assert "threads must be an integer" in parallel[3].error
    assert parallel[3].error == serial[3].error


def test_nested_factories_compile_serially():
    def local(N, block=64):
        return _scale(N, block)

    assert compile_pool._locate(local) is None


def test_configs_are_checked(fresh):
    tuned = tlc.autotune(configs=[{"blok": 64}], timer=fake_timer([]), workers=1)(scale)
    with pytest.raises(TypeError, match="config {'blok': 64} does not fit _scale"):
        tuned(1024)
    with pytest.raises(ValueError, match="needs configs="):
        tlc.autotune(timer=fake_timer([]))
    with pytest.raises(ValueError, match="workers must be a positive integer"):
        tlc.autotune(configs=CONFIGS, workers=0)


def test_configs_from_a_function_and_pinned_parameters(fresh):
    log = []

    def configs(N):
        return [{"block": b} for b in (64, 256) if b <= N]

    tuned = tlc.autotune(configs=configs, timer=fake_timer(log), workers=1)(scale)
    assert tuned(128).config == {"block": 64} and log == [{"block": 64}]
    pinned = tlc.autotune(configs=CONFIGS[:2], timer=fake_timer(log), workers=1)(scale)
    assert pinned(1024, block=64).artifact["name"] == "scale" and len(log) == 1
    # Given by position too (TileLang's tests write every argument out): nothing is tuned.
    assert pinned(1024, 64).artifact["name"] == "scale" and len(log) == 1
    # Some of the tuned parameters given (block, not threads): as in TileLang, nothing is
    # tuned and the others keep their defaults, which a warning says.
    partly = tlc.autotune(configs=CONFIGS, timer=fake_timer(log), workers=1)(scale)
    with pytest.warns(UserWarning, match="gives the tuned parameter.*block.*threads keep"):
        kernel = partly(1024, block=256)
    assert len(log) == 1 and kernel.artifact["threads"][0] == 128  # threads' default
    assert kernel.artifact["grid"][0] in (4, "4")  # block = 256: 1024 / 256 blocks


def test_without_a_gpu_tuning_is_a_clear_error(fresh, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    tuned = tlc.autotune(configs=CONFIGS[:2], workers=1)(scale)
    with pytest.raises(LaunchError, match="autotune of _scale\\(1024\\) times on the GPU"):
        tuned(1024)


def test_workers_fill_the_parents_disk_cache(fresh, tmp_path, monkeypatch):
    log = []
    tlc.autotune(configs=CONFIGS[:3], timer=fake_timer(log), workers=2)(scale)(512)
    assert len(list((tmp_path / "cache").glob("*.json"))) == 3  # one kernel per candidate
    assert len(list((tmp_path / "cache" / "autotune").glob("*.json"))) == 1  # the winner


def test_eager_candidates_compile_in_workers(fresh, monkeypatch):
    import test_eager

    eager = test_eager.scale
    assert compile_pool._locate(eager.fn) == ("test_eager", "scale")
    jobs = [compile_pool.Job((), {"values": {"block": b}, "consts": {"N": 1024},
                                  "dtypes": {"X": "float32"}}, eager.out_idx, eager.options,
                             False, eager=True) for b in (64, 256)]
    with monkeypatch.context() as m:
        m.setattr(compile_pool, "compile_job", None)
        parallel = compile_pool.compile_all(eager.fn, jobs, 2, 120, lambda n: None)
    serial = compile_pool.compile_all(eager.fn, jobs, 1, 120, lambda n: None)
    for p, s in zip(parallel, serial):
        assert p.kernel.artifact == s.kernel.artifact and p.kernel.out_idx == [2]


def test_supply_programs_see_tilelang_style_params(fresh, monkeypatch):
    fake = types.SimpleNamespace(float32="torch.float32")
    monkeypatch.setitem(sys.modules, "torch", fake)
    kernel = scale(1024)
    (x,) = tuner.kernel_params(kernel)  # Y is an output: not supplied
    assert (x.name, x.shape, x.dtype, x.kind) == ("X", [1024], "torch.float32", "tensor")


def test_timer_excludes_the_gpu_checks():
    with pytest.raises(ValueError, match="so ref_prog, supply_type would not be used"):
        tlc.autotune(configs=CONFIGS, timer=lambda k, c: 1.0, ref_prog=abs,
                     supply_type=tlc.TensorSupplyType.Normal)


def test_disable_cache(fresh, tmp_path, monkeypatch):
    log = []
    tlc.disable_cache()
    try:
        assert not tlc.is_cache_enabled() and not scale.use_disk_cache
        tlc.autotune(configs=CONFIGS[:2], timer=fake_timer(log), workers=1)(scale)(1024)
        assert not (tmp_path / "cache").exists()  # no kernel and no winner written
    finally:
        tlc.enable_cache()
    assert scale.use_disk_cache
    monkeypatch.setattr(AutoTuner, "_memory", {})
    tlc.autotune(configs=CONFIGS[:2], timer=fake_timer(log), workers=1)(scale)(1024)
    assert len(list((tmp_path / "cache" / "autotune").glob("*.json"))) == 1
