"""Warp-level programming: T.get_lane_idx / get_warp_idx / get_warp_group_idx,
T.shfl_xor / down / up / sync, the votes T.any_sync / all_sync / ballot_sync /
ballot and T.activemask, T.sync_threads / sync_warp, and T.sigmoid;
compiled (PTX, ptxas where installed) and interpreted."""

import re

import numpy as np
import pytest

import tlc
import tlc.language as T
from bad_programs import assert_line_error
from test_compile import ptxas_ok


@T.prim_func
def warp_sums(X: T.Tensor((256,), "float32"), S: T.Tensor((8,), "float32"),
              Ids: T.Tensor((3, 256), "int32")):
    with T.Kernel(1, threads=256):
        lane = T.get_lane_idx()
        warp = T.get_warp_idx()
        Ids[0, warp * 32 + lane] = lane
        Ids[1, warp * 32 + lane] = T.get_warp_idx_sync()
        Ids[2, warp * 32 + lane] = T.get_warp_group_idx()
        v = T.alloc_var("float32")
        v = X[warp * 32 + lane]
        for k in T.unroll(5):
            v = v + T.shfl_xor(v, 16 >> k)
        if lane == 0:
            S[warp] = v


def test_butterfly_sum_and_indices(tmp_path):
    x = np.random.default_rng(0).standard_normal(256).astype(np.float32)
    s = np.zeros(8, np.float32)
    ids = np.zeros((3, 256), np.int32)
    tlc.interpret(warp_sums, x, s, ids)
    np.testing.assert_allclose(s, x.reshape(8, 32).sum(axis=1), rtol=1e-5, atol=1e-5)
    t = np.arange(256)
    assert (ids[0] == t % 32).all() and (ids[1] == t // 32).all() and (ids[2] == t // 128).all()
    ptx = tlc.compile(warp_sums, target="sm_90a").get_kernel_source()
    assert ptx.count("shfl.sync.bfly.b32") == 5
    ptxas_ok(ptx, tmp_path)


@T.prim_func
def shifts(X: T.Tensor((64,), "int32"), Out: T.Tensor((4, 64), "int32"),
           H: T.Tensor((64,), "float16")):
    with T.Kernel(1, threads=64):
        t = T.get_thread_binding()
        x = X[t]
        Out[0, t] = T.shfl_down(x, 3, width=16)
        Out[1, t] = T.shfl_up(x, 2, width=16)
        Out[2, t] = T.shfl_sync(x, 5, 8)
        Out[3, t] = T.shfl_xor(x, 1)
        H[t] = T.shfl_down(T.cast(x, "float16"), 1)


def _model(x, mode, d, w):
    out = x.copy()
    for lane in range(len(x)):
        base, own = lane - lane % w, lane % w
        src = {"down": own + d, "up": own - d, "idx": d % w, "xor": own ^ d}[mode]
        if 0 <= src < w:
            out[lane] = x[base + src]
    return out


def test_shuffles_within_groups_of_lanes(tmp_path):
    x = np.random.default_rng(1).integers(-1000, 1000, 64).astype(np.int32)
    out = np.zeros((4, 64), np.int32)
    h = np.zeros(64, np.float16)
    tlc.interpret(shifts, x, out, h)
    assert (out[0] == _model(x, "down", 3, 16)).all()
    assert (out[1] == _model(x, "up", 2, 16)).all()
    assert (out[2] == _model(x, "idx", 5, 8)).all()
    assert (out[3] == _model(x, "xor", 1, 32)).all()
    assert (h == _model(x.astype(np.float16), "down", 1, 32)).all()
    ptx = tlc.compile(shifts, target="sm_90a").get_kernel_source()
    for kind in ("down", "up", "idx", "bfly"):
        assert f"shfl.sync.{kind}.b32" in ptx
    ptxas_ok(ptx, tmp_path)


@T.prim_func
def reverse(X: T.Tensor((128,), "float32"), Y: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((128,), "float32")
        t = T.get_thread_binding()
        s[t] = X[t]
        T.sync_threads()
        Y[t] = s[127 - t]
        T.sync_threads(9, 64)
        T.sync_warp()


def test_program_barriers(tmp_path):
    x = np.arange(128, dtype=np.float32)
    y = np.zeros(128, np.float32)
    tlc.interpret(reverse, x, y)
    assert (y == x[::-1]).all()
    ptx = tlc.compile(reverse, target="sm_90a").get_kernel_source()
    assert re.search(r"bar(rier)?\.sync\s+9, 64", ptx)
    assert "bar.warp.sync" in ptx
    ptxas_ok(ptx, tmp_path)


def votes_program(bits="uint64"):
    """96 threads: three warps, each voting on its own lanes; T.activemask under
    an `if` only every third lane takes. `bits`: Bits' dtype (bench/build_atomics.py
    keeps the ballot as int64 for torch, which has no uint64 arithmetic)."""

    @T.prim_func
    def votes(X: T.Tensor((96,), "int32"), Out: T.Tensor((4, 96), "int64"),
              Bits: T.Tensor((96,), bits)):
        with T.Kernel(1, threads=96):
            t = T.get_thread_binding()
            x = X[t]
            Out[0, t] = T.any_sync(x > 150)
            Out[1, t] = T.all_sync(x >= 0)
            Out[2, t] = T.ballot(x % 2 == 1)
            Bits[t] = T.cast(T.ballot_sync(x > 10, 0xFFFFFFFF), bits)
            if t % 3 == 0:
                Out[3, t] = T.activemask()

    return votes


def votes_expected(x):
    """numpy's answer for `votes`: (Out, Bits)."""
    warps = x.reshape(3, 32)

    def bits(rows):  # one row of 32 bools per warp -> each lane's warp's mask
        return np.repeat((rows.astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(1), 32)

    out = np.zeros((4, 96), np.int64)
    out[0] = np.repeat((warps > 150).any(1), 32)
    out[1] = np.repeat((warps >= 0).all(1), 32)
    out[2] = bits(np.fmod(warps, 2) == 1)  # the remainder truncates, as in C
    out[3] = np.where(np.arange(96) % 3 == 0, bits((np.arange(96) % 3 == 0).reshape(3, 32)), 0)
    return out, bits(warps > 10)


def test_votes_and_activemask(tmp_path):
    x = (np.arange(96, dtype=np.int32) * 3 - 5)
    x[64:] = np.abs(x[64:])  # warp 2: no negative lane
    out = np.zeros((4, 96), np.int64)
    bits = np.zeros(96, np.uint64)
    tlc.interpret(votes_program(), x, out, bits)
    want_out, want_bits = votes_expected(x)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(bits, want_bits)
    assert out[0].tolist() == out[1].tolist() == [0] * 32 + [1] * 64  # both ways per warp
    ptx = tlc.compile(votes_program(), target="sm_90a").get_kernel_source()
    for kind in ("any.pred", "all.pred", "ballot.b32"):
        assert f"vote.sync.{kind}" in ptx
    assert "activemask.b32" in ptx
    ptxas_ok(ptx, tmp_path)


def test_sigmoid():
    @T.prim_func
    def silu(X: T.Tensor((64,), "float32"), Y: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64):
            for i in T.Parallel(64):
                Y[i] = X[i] * T.sigmoid(X[i]) + T.sigmoid(0.0)

    x = np.linspace(-6, 6, 64).astype(np.float32)
    y = np.zeros(64, np.float32)
    tlc.interpret(silu, x, y)
    np.testing.assert_allclose(y, x / (1 + np.exp(-x)) + 0.5, rtol=1e-6, atol=1e-6)
    assert "ex2.approx" in tlc.compile(silu, target="sm_90a").get_kernel_source()


@pytest.mark.parametrize("body, message", [
    ("for i in T.Parallel(64):\n            Y[i] = T.shfl_xor(X[i], 1)",
     "T.shfl_xor is not valid inside T.Parallel"),
    ("if t < 16:\n            Y[t] = T.shfl_xor(X[t], 1)",
     "a warp shuffle (every lane of the warp must run it), but only some threads reach it"),
    ("Y[t] = T.shfl_xor(X[t], 1, mask=0xFFFF)", "tlc shuffles across the whole warp"),
    ("Y[t] = T.shfl_down(X[t], 1, width=3)", "width must be a power of two from 1 to 32"),
    ("T.sync_threads(9)", "a named barrier needs both barrier_id and arrive_count"),
    ("T.sync_threads(9, 48)", "arrive_count must be a multiple of 32"),
    ("T.sync_threads(16, 32)", "barrier_id must be 1 to 15 (0 is the block's), got 16"),
    ("Y[t] = T.shfl_xor(D[t], 1)", "shuffles values of 32 bits or fewer"),
    ("if t < 16:\n            T.sync_threads()", "T.sync_threads (every thread of the block "
                                                 "must reach it), but only some threads"),
    ("for i in T.Parallel(64):\n            Y[i] = T.any_sync(X[i] > 0)",
     "T.any_sync is not valid inside T.Parallel"),
    ("if t < 16:\n            Y[t] = T.ballot(X[t] > 0)",
     "a warp vote (every lane of the warp must run it), but only some threads reach it"),
    ("Y[t] = T.all_sync(X[t] > 0, mask=0xFF)", "tlc votes across the whole warp"),
    ("Y[t] = T.any_sync(X[t])", "T.any_sync votes on an integer or bool scalar"),
])
def test_warp_errors_name_the_line(body, message, tmp_path):
    assert_line_error(tmp_path, "X: T.Tensor((64,), 'float32'), Y: T.Tensor((64,), 'float32'), "
                                "D: T.Tensor((64,), 'float64')", body, message,
                      prelude=["t = T.get_thread_binding()"])


def test_block_barrier_in_a_ws_body_is_an_error():
    @T.prim_func
    def f(X: T.Tensor((256,), "float32")):
        with T.Kernel(1, threads=256):
            with T.ws(1):
                T.sync_threads()
                T.sync_threads(9, 128)

    with pytest.raises(tlc.CompilationError) as e:
        tlc.compile(f, target="sm_90a")
    assert "T.sync_threads() in a T.ws body waits for every thread of the block" in str(e.value)
    assert "test_warp.py:" in str(e.value)



# Warpgroup 1 fills a shared tile and arrives; warpgroup 0 waits on the same named
# barrier (256 threads: both groups) and reads it.
@T.prim_func
def handoff(X: T.Tensor((128,), "float32"), Y: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=256):
        s = T.alloc_shared((128,), "float32")
        with T.ws(1):
            T.copy(X, s)
            T.named_barrier_arrive(9, 256)
        with T.ws(0):
            T.sync_threads(9, 256)
            T.copy(s, Y)


def test_named_barrier_arrive_pairs_with_a_named_sync(tmp_path):
    ptx = tlc.compile(handoff, target="sm_90a").get_kernel_source()
    assert re.search(r"bar(rier)?\.arrive\s+9, 256", ptx)
    assert re.search(r"bar(rier)?\.sync\s+9, 256", ptx)
    ptxas_ok(ptx, tmp_path)
    x = np.arange(128, dtype=np.float32)
    y = np.zeros(128, np.float32)
    tlc.interpret(handoff, x, y)
    assert (y == x).all()


def test_named_barrier_arrive_checks_its_id():
    @T.prim_func
    def f(X: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            T.named_barrier_arrive(16, 128)

    with pytest.raises(tlc.CompilationError, match="barrier_id must be 1 to 15"):
        tlc.compile(f, target="sm_90a")


def test_named_barriers_below_9_name_free_ones(tmp_path):
    # TileLang's programs sync on barrier 3 or 1, which tlc keeps for
    # warpgroups: they take the free barriers from 15 down, the same id the
    # same barrier throughout the kernel; 9 to 15 stay themselves.
    @T.prim_func
    def f(X: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            T.sync_threads(3, 128)
            T.sync_threads(9, 64)
            T.sync_threads(1, 128)
            T.named_barrier_arrive(3, 128)

    ptx = tlc.compile(f, target="sm_90a").get_kernel_source()
    assert re.findall(r"bar(?:rier)?\.(?:sync|arrive)\s+(\d+), (\d+)", ptx) == [
        ("15", "128"), ("9", "64"), ("14", "128"), ("15", "128")]
    ptxas_ok(ptx, tmp_path)

    @T.prim_func
    def g(X: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            T.sync_threads(3, 128)
            T.sync_threads(15, 128)

    with pytest.raises(tlc.CompilationError, match="barrier 15 already stands for barrier 3"):
        tlc.compile(g, target="sm_90a")


def warp_reduction(op: str, dtype: str):
    @T.prim_func
    def reduce_lanes(X: T.Tensor((64,), dtype), Y: T.Tensor((64,), dtype)):
        with T.Kernel(1, threads=64):
            tx = T.get_thread_binding()
            fn = {"sum": T.warp_reduce_sum, "max": T.warp_reduce_max,
                  "min": T.warp_reduce_min, "bitand": T.warp_reduce_bitand,
                  "bitor": T.warp_reduce_bitor}[op]
            Y[tx] = fn(X[tx])

    return reduce_lanes


@pytest.mark.parametrize("op, dtype", [("sum", "float32"), ("max", "float16"),
                                       ("min", "int32"), ("bitand", "uint32"),
                                       ("bitor", "int8"), ("sum", "int32")])
def test_warp_reductions(op, dtype, tmp_path):
    # TileLang's T.warp_reduce_*: each warp's 32 values combined, in every lane.
    rng = np.random.default_rng(4)
    if dtype.startswith("float"):
        x = rng.standard_normal(64).astype(dtype)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(max(info.min, -1000), min(info.max, 1000), 64).astype(dtype)
    y = np.zeros_like(x)
    prim = warp_reduction(op, dtype)
    tlc.interpret(prim, x, y)
    fold = {"sum": np.sum, "max": np.max, "min": np.min,
            "bitand": np.bitwise_and.reduce, "bitor": np.bitwise_or.reduce}[op]
    per_warp = x.reshape(2, 32)
    expect = np.repeat([fold(w.astype(np.float32) if dtype.startswith("float") else w)
                        for w in per_warp], 32).astype(dtype)
    np.testing.assert_allclose(y.astype(np.float64), expect.astype(np.float64), rtol=2e-3)
    ptx = tlc.compile(prim, target="sm_90a").get_kernel_source()
    assert ptx.count("shfl.sync.bfly.b32") == 5
    ptxas_ok(ptx, tmp_path)


def test_warp_reduce_of_floats_by_bits_is_an_error(tmp_path):
    with pytest.raises(tlc.CompilationError, match="T.warp_reduce_bitor takes integers, got "
                                                   "float32"):
        warp_reduction("bitor", "float32").build_module()


@T.prim_func
def block_votes(X: T.Tensor((256,), "int32"), Out: T.Tensor((3,), "int32")):
    with T.Kernel(1, threads=256):
        tx = T.get_thread_binding()
        n = T.syncthreads_count(X[tx] > 0)
        every = T.syncthreads_and(X[tx] > -1000)
        some = T.syncthreads_or(X[tx] == 7)
        if tx == 0:
            Out[0] = n
            Out[1] = every
            Out[2] = some


def test_block_barrier_reductions(tmp_path):
    # TileLang's T.syncthreads_count / and / or: bar.red, every thread gets the result.
    x = np.random.default_rng(2).integers(-10, 10, 256).astype(np.int32)
    x[5] = 7
    out = np.zeros(3, np.int32)
    tlc.interpret(block_votes, x, out)
    np.testing.assert_array_equal(out, [(x > 0).sum(), 1, 1])
    ptx = tlc.compile(block_votes, target="sm_90a").get_kernel_source()
    assert "bar.red.popc.u32" in ptx and "bar.red.and.pred" in ptx and "bar.red.or.pred" in ptx
    ptxas_ok(ptx, tmp_path)


@T.prim_func
def half_block_vote(X: T.Tensor((256,), "int32")):
    with T.Kernel(1, threads=256):
        tx = T.get_thread_binding()
        if tx < 64:
            X[tx] = T.syncthreads_count(X[tx] > 0)  # E:half-vote


def test_a_barrier_reduction_some_threads_skip_is_an_error():
    from marked_lines import assert_error_at
    from pathlib import Path

    path = str(Path(__file__).resolve())
    with pytest.raises(tlc.CompilationError) as info:
        half_block_vote.build_module()
    assert_error_at(info.value, path, Path(path).read_text().splitlines(), "half-vote",
                    "T.syncthreads_count", "is a barrier (every thread of the block must "
                                           "reach it), but only some threads reach it here")
